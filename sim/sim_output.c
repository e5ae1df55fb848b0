/*
 * sim_output.c - sim_generate(): model + OTLP writer + manifest.json.
 *
 * The manifest tells tools and tests what was generated without anyone
 * hard-coding it: the windows (incident "window" and "baseline", as RFC
 * 3339 ranges and as nanoseconds), the seed, every parameter by its --set
 * name, the hot hosts, and the figures the model computed itself (see
 * SimFigures) for each phase. It is small, so cJSON builds it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "sim.h"
#include "timefmt.h"

static int mkdirs(const char *dir, Err *err)
{
	char path[4096];
	if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
		return err_set(err, TT_EINVAL, "%s: path too long", dir);
	for (char *p = path + 1;; p++) {
		if (*p == '/' || *p == '\0') {
			char c = *p;
			*p = '\0';
			if (mkdir(path, 0777) != 0 && errno != EEXIST)
				return err_set(err, TT_EIO, "%s: cannot create directory: %s", path,
				               strerror(errno));
			*p = c;
			if (c == '\0')
				break;
		}
	}
	struct stat st;
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return err_set(err, TT_EIO, "%s: not a directory", dir);
	return 0;
}

static double r3(double x)
{
	return round(x * 1000.0) / 1000.0;
}

static void add_ns(cJSON *o, const char *key, int64_t ns)
{
	char t[32];
	snprintf(t, sizeof t, "%lld", (long long)ns);
	cJSON_AddStringToObject(o, key, t);
}

/* {"from": RFC 3339, "to": ..., "range": "A..B", "from_ns": "...", "to_ns": "..."} */
static cJSON *range_json(int64_t from, int64_t to)
{
	cJSON *o = cJSON_CreateObject();
	char a[40], b[40], r[96];
	time_format(from, a, sizeof a);
	time_format(to, b, sizeof b);
	snprintf(r, sizeof r, "%s..%s", a, b);
	cJSON_AddStringToObject(o, "from", a);
	cJSON_AddStringToObject(o, "to", b);
	cJSON_AddStringToObject(o, "range", r);
	add_ns(o, "from_ns", from);
	add_ns(o, "to_ns", to);
	return o;
}

static cJSON *figures_json(const SimFigures *f)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "requests", (double)f->requests);
	cJSON_AddNumberToObject(o, "ingress_p50_ms", r3(f->ingress_p50_ms));
	cJSON_AddNumberToObject(o, "ingress_p99_ms", r3(f->ingress_p99_ms));
	cJSON_AddNumberToObject(o, "edge_p99_ms", r3(f->edge_p99_ms));
	cJSON_AddNumberToObject(o, "queue_wait_p99_ms", r3(f->queue_wait_p99_ms));
	cJSON_AddNumberToObject(o, "profile_wait_p99_ms", r3(f->profile_wait_p99_ms));
	cJSON_AddNumberToObject(o, "pricing_calls", (double)f->pricing_calls);
	cJSON_AddNumberToObject(o, "pricing_client_p99_ms", r3(f->pricing_client_p99_ms));
	cJSON_AddNumberToObject(o, "pricing_client_wait_p99_ms", r3(f->pricing_client_wait_p99_ms));
	cJSON_AddNumberToObject(o, "pricing_server_p99_ms", r3(f->pricing_server_p99_ms));
	cJSON *mix = cJSON_AddObjectToObject(o, "class_share");
	static const char *const names[3] = {"standard", "premium", "enterprise"};
	for (int c = 0; c < 3; c++)
		cJSON_AddNumberToObject(mix, names[c], round(f->class_share[c] * 1e5) / 1e5);
	cJSON_AddNumberToObject(o, "omitted_share", round(f->omitted_share * 1e5) / 1e5);
	cJSON_AddNumberToObject(o, "late_share", round(f->late_share * 1e5) / 1e5);
	cJSON *slow = cJSON_AddObjectToObject(o, "slow");
	cJSON_AddNumberToObject(slow, "requests", (double)f->slow);
	cJSON_AddNumberToObject(slow, "threshold_ms", r3(f->slow_threshold_ms));
	cJSON_AddNumberToObject(slow, "pricing_critical_path_share", round(f->pricing_cp_share * 1e4) / 1e4);
	return o;
}

static cJSON *manifest_json(const SimParams *p, const SimWorld *w, const SimRun *run,
                            const char *traces_name, int single)
{
	cJSON *m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "generator", "tailtriage sim");
	cJSON_AddStringToObject(m, "scenario", p->scenario);
	cJSON_AddStringToObject(m, "incident", p->incident);
	char seed[32];
	snprintf(seed, sizeof seed, "%llu", (unsigned long long)p->seed);
	cJSON_AddStringToObject(m, "seed", seed);
	cJSON *files = cJSON_AddObjectToObject(m, "files");
	cJSON_AddStringToObject(files, "traces", traces_name);
	cJSON_AddStringToObject(files, "traces_shape", single ? "document" : "json-lines");
	if (p->metrics)
		cJSON_AddStringToObject(files, "metrics", "metrics.jsonl");
	for (int i = 0; i < run->n_phases; i++) {
		const SimPhaseInfo *ph = &run->phases[i];
		const char *key = strcmp(ph->name, "incident") == 0 ? "window" : "baseline";
		cJSON_AddItemToObject(m, key, range_json(ph->start_ns, ph->end_ns));
	}
	cJSON_AddNumberToObject(m, "traces", (double)run->traces);
	cJSON_AddNumberToObject(m, "spans", (double)run->spans);
	cJSON *params = cJSON_AddObjectToObject(m, "parameters");
	int n;
	const SimParamInfo *tab = sim_param_table(&n);
	for (int i = 0; i < n; i++) {
		char v[96];
		if (sim_params_get(p, tab[i].key, v, sizeof v) == 0)
			cJSON_AddStringToObject(params, tab[i].key, v);
	}
	cJSON *phases = cJSON_AddArrayToObject(m, "phases");
	for (int i = 0; i < run->n_phases; i++) {
		const SimPhaseInfo *ph = &run->phases[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", ph->name);
		cJSON_AddItemToObject(o, "range", range_json(ph->start_ns, ph->end_ns));
		cJSON_AddNumberToObject(o, "traces", (double)ph->traces);
		cJSON_AddNumberToObject(o, "spans", (double)ph->spans);
		cJSON *hot = cJSON_AddArrayToObject(o, "hot_hosts");
		for (int k = 0; k < ph->n_hot; k++)
			cJSON_AddItemToArray(hot, cJSON_CreateString(w->resources[ph->hot[k]].host));
		cJSON *occ = cJSON_AddObjectToObject(o, "occupancy");
		cJSON_AddNumberToObject(occ, "executor", r3(ph->exec_occupancy));
		cJSON_AddNumberToObject(occ, "profile_pool", r3(ph->profile_occupancy));
		cJSON_AddNumberToObject(occ, "pricing_pool", r3(ph->pricing_occupancy));
		cJSON_AddNumberToObject(o, "cpu_mean", r3(ph->cpu_mean));
		cJSON_AddItemToObject(o, "sample", figures_json(&ph->sample));
		cJSON_AddItemToObject(o, "population", figures_json(&ph->population));
		cJSON_AddItemToArray(phases, o);
	}
	return m;
}

/* Traces go to the OTLP writer and, for exemplars, to the metrics writer;
 * samples to the metrics writer. */
typedef struct Tee {
	SimOtlp *otlp;
	SimMetrics *metrics;
} Tee;

static int tee_trace(void *ctx, const SimTrace *t, Err *err)
{
	Tee *tee = ctx;
	int rc = sim_otlp_trace(tee->otlp, t, err);
	return rc ? rc : sim_metrics_trace(tee->metrics, t, err);
}

static int tee_sample(void *ctx, const SimSample *s, Err *err)
{
	Tee *tee = ctx;
	return sim_metrics_sample(tee->metrics, s, err);
}

int sim_generate(const SimParams *p, const char *out_dir, int single, SimRun *run_out,
                 char *traces_path, char *manifest_path, unsigned pathsz, Err *err)
{
	SimWorld w;
	SimOtlp *o = NULL;
	SimRun run;
	char tpath[4096], mpath[4096];
	const char *tname = single ? "traces.json" : "traces.jsonl";
	int rc = sim_params_check(p, err);
	if (rc)
		return rc;
	if ((rc = mkdirs(out_dir, err)))
		return rc;
	snprintf(tpath, sizeof tpath, "%s/%s", out_dir, tname);
	snprintf(mpath, sizeof mpath, "%s/manifest.json", out_dir);
	if ((rc = sim_world_init(&w, p, err)))
		return rc;
	if ((rc = sim_otlp_open(&o, tpath, single, p->batch, &w, err)))
		goto out;
	SimSink sink = {o, sim_otlp_trace, NULL};
	SimMetrics *mx = NULL;
	Tee tee = {o, NULL};
	if (p->metrics) {
		char xpath[4096];
		snprintf(xpath, sizeof xpath, "%s/metrics.jsonl", out_dir);
		if ((rc = sim_metrics_open(&mx, xpath, p, &w, err))) {
			sim_otlp_close(o, NULL);
			goto out;
		}
		tee.metrics = mx;
		sink = (SimSink){&tee, tee_trace, tee_sample};
	}
	rc = sim_run(p, &w, &sink, &run, err);
	int crc = sim_otlp_close(o, rc ? NULL : err);
	if (!rc)
		rc = crc;
	crc = sim_metrics_close(mx, rc ? NULL : err);
	if (!rc)
		rc = crc;
	if (rc)
		goto out;

	cJSON *m = manifest_json(p, &w, &run, tname, single);
	char *text = cJSON_Print(m);
	cJSON_Delete(m);
	FILE *f = fopen(mpath, "wb");
	if (f == NULL) {
		rc = err_set(err, TT_EIO, "%s: cannot create: %s", mpath, strerror(errno));
	} else {
		int bad = fputs(text, f) == EOF || fputc('\n', f) == EOF;
		if (fclose(f) != 0 || bad)
			rc = err_set(err, TT_EIO, "%s: write failed", mpath);
	}
	free(text);
	if (rc)
		goto out;
	if (run_out)
		*run_out = run;
	if (traces_path)
		snprintf(traces_path, pathsz, "%s", tpath);
	if (manifest_path)
		snprintf(manifest_path, pathsz, "%s", mpath);
out:
	sim_world_fini(&w);
	return rc;
}
