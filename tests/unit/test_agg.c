/*
 * test_agg.c - import-time aggregates answer what the exact analysis
 * answers, within the sketch's stated relative error.
 *
 * Data from the simulator (two seeds, so the second import appends to
 * minutes the first one filled and they are rebuilt), imported through
 * the real importer with the commit hook the CLI installs. For the window
 * and the baseline, every class and none, the analysis from the
 * aggregates must have the exact analysis's nodes (by their path from the
 * root), the same counts (calls, requests, unknown splits, database calls,
 * requests per class, errors) and every quantile of every split within
 * SKETCH_ALPHA of the exact nearest-rank value. Also: a database written
 * by a bulk load holds the same aggregates as one appended to; a writer
 * without the hook leaves them stale, and stale aggregates are refused,
 * not used, until the next writer with the hook catches them up; a
 * read-only connection reads them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis.h"
#include <cjson/cJSON.h>
#include <sqlite3.h>

#include "buf.h"
#include "helpers.h"
#include "import.h"
#include "model_json.h"
#include "sim.h"
#include "sketch.h"
#include "trace_feed.h"

#define MODEL_PATH "../models/mercury-home.model.json"

typedef struct Data {
	char dir[64];
	char traces[2][512];
	char metrics[600];
	int64_t base_from, base_to, win_from, win_to;
} Data;

static Data D;

static void sim(int k, const char *seed)
{
	Err err = {0};
	SimParams p;
	static const char *const sets[] = {"traces=1500", "window-s=120", "warmup-s=20", "hosts=6",
	                                   NULL};
	assert_int_equal(sim_params_init(&p, "mercury", &err), 0);
	for (int i = 0; sets[i]; i++) {
		char key[64];
		const char *eq = strchr(sets[i], '=');
		snprintf(key, sizeof key, "%.*s", (int)(eq - sets[i]), sets[i]);
		if (sim_params_set(&p, key, eq + 1, &err))
			fail_msg("%s", err.msg);
	}
	if (sim_params_set(&p, "seed", seed, &err))
		fail_msg("%s", err.msg);
	char sub[128], manifest[512];
	snprintf(sub, sizeof sub, "%s/%d", D.dir, k);
	SimRun run;
	if (sim_generate(&p, sub, 0, &run, D.traces[k], manifest, sizeof manifest, &err))
		fail_msg("%s", err.msg);
	unlink(manifest);
	if (k == 0) {
		snprintf(D.metrics, sizeof D.metrics, "%s/metrics.jsonl", sub);
		for (int i = 0; i < run.n_phases; i++) {
			const SimPhaseInfo *ph = &run.phases[i];
			if (strcmp(ph->name, "incident") == 0) {
				D.win_from = ph->start_ns;
				D.win_to = ph->end_ns;
			} else {
				D.base_from = ph->start_ns;
				D.base_to = ph->end_ns;
			}
		}
	}
}

static int setup(void **state)
{
	(void)state;
	store_set_commit_hook(analysis_agg_update);
	snprintf(D.dir, sizeof D.dir, "/tmp/tt_test_agg_XXXXXX");
	if (mkdtemp(D.dir) == NULL)
		return -1;
	sim(0, "7");
	sim(1, "8");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char p[700];
	for (int k = 0; k < 2; k++) {
		unlink(D.traces[k]);
		snprintf(p, sizeof p, "%s/%d/metrics.jsonl", D.dir, k);
		unlink(p);
		snprintf(p, sizeof p, "%s/%d", D.dir, k);
		rmdir(p);
	}
	rmdir(D.dir);
	store_set_commit_hook(NULL);
	return 0;
}

static void import(Store *st, const char *path)
{
	Err err = {0};
	ImportResult res;
	ImportOptions io = {0};
	if (import_file(st, path, &io, &res, &err))
		fail_msg("%s", err.msg);
}

/* ---- comparing ------------------------------------------------------------ */

/* A node by its path from the root; a call also by what it is made to
 * (two calls can share a span name: HTTP clients name theirs "GET"). */
static void path_of(const Analysis *a, int i, Buf *b)
{
	const DagNode *d = &a->nodes[i];
	if (d->parent >= 0)
		path_of(a, d->parent, b);
	buf_printf(b, "/%d:%s:%s", d->type, d->service, d->operation);
	if (d->dependency || d->peer)
		buf_printf(b, ">%s", d->dependency ? d->dependency : d->peer);
}

static int find(const Analysis *a, const char *path)
{
	Buf b;
	buf_init(&b);
	int found = -1;
	for (int i = 0; i < a->n_nodes && found < 0; i++) {
		buf_reset(&b);
		path_of(a, i, &b);
		if (strcmp(buf_str(&b), path) == 0)
			found = i;
	}
	buf_fini(&b);
	return found;
}

static int n_checked;
static double max_tol; /* 0: the maximum is exact; SKETCH_ALPHA after removals */

static void close_q(const char *what, const Quant *ex, const Quant *ap)
{
	assert_int_equal(ap->n, ex->n);
	if (ex->n == 0)
		return;
	const double e[4] = {ex->p50, ex->p90, ex->p99, ex->max};
	const double g[4] = {ap->p50, ap->p90, ap->p99, ap->max};
	static const char *const names[4] = {"p50", "p90", "p99", "max"};
	for (int k = 0; k < 4; k++) {
		/* the exact analysis keeps its observations as floats: allow
		 * their rounding on top of the stated error */
		double tol = (k == 3 ? max_tol : SKETCH_ALPHA) * fabs(e[k]) + 1e-6 * fabs(e[k]) + 1e-9;
		if (fabs(g[k] - e[k]) > tol)
			fail_msg("%s %s: aggregates %.6f, exact %.6f (n %lld)", what, names[k], g[k], e[k],
			         (long long)ex->n);
		n_checked++;
	}
}

static void close_stats(const char *what, const NodeStats *ex, const NodeStats *ap)
{
	char w[300];
	assert_int_equal(ap->calls, ex->calls);
	assert_int_equal(ap->requests, ex->requests);
	assert_int_equal(ap->unknown_split, ex->unknown_split);
	assert_int_equal(ap->db_calls, ex->db_calls);
	snprintf(w, sizeof w, "%s total", what);
	close_q(w, &ex->total, &ap->total);
	snprintf(w, sizeof w, "%s client wait", what);
	close_q(w, &ex->client_wait, &ap->client_wait);
	snprintf(w, sizeof w, "%s service", what);
	close_q(w, &ex->service, &ap->service);
	snprintf(w, sizeof w, "%s queue", what);
	close_q(w, &ex->queue, &ap->queue);
}

static void compare(const Analysis *ex, const Analysis *ap)
{
	assert_int_equal(ap->approx, 1);
	assert_int_equal(ex->approx, 0);
	assert_string_equal(ap->endpoint, ex->endpoint);
	assert_int_equal(ap->n_nodes, ex->n_nodes);
	assert_int_equal(ap->n_classes, ex->n_classes);
	for (int c = 0; c < ex->n_classes; c++)
		assert_string_equal(ap->classes[c], ex->classes[c]);
	Buf b;
	buf_init(&b);
	for (int i = 0; i < ex->n_nodes; i++) {
		buf_reset(&b);
		path_of(ex, i, &b);
		int j = find(ap, buf_str(&b));
		if (j < 0)
			fail_msg("node %s missing from the aggregates' DAG", buf_str(&b));
		const DagNode *x = &ex->nodes[i], *y = &ap->nodes[j];
		if (x->dependency || y->dependency)
			assert_string_equal(y->dependency ? y->dependency : "-",
			                    x->dependency ? x->dependency : "-");
		assert_int_equal(y->edge, x->edge);
		for (int p = 0; p < 2; p++) {
			if (!ex->pop[p].present)
				continue;
			char w[400];
			snprintf(w, sizeof w, "%s pop %d", buf_str(&b), p);
			close_stats(w, &x->pop[p], &y->pop[p]);
			for (int c = 0; c < ex->n_classes; c++) {
				snprintf(w, sizeof w, "%s pop %d class %s", buf_str(&b), p, ex->classes[c]);
				close_stats(w, &x->by_class[p][c], &y->by_class[p][c]);
			}
		}
	}
	for (int p = 0; p < 2; p++) {
		assert_int_equal(ap->pop[p].present, ex->pop[p].present);
		if (!ex->pop[p].present)
			continue;
		assert_int_equal(ap->pop[p].requests, ex->pop[p].requests);
		assert_int_equal(ap->pop[p].errors, ex->pop[p].errors);
		close_q("ingress", &ex->pop[p].ingress, &ap->pop[p].ingress);
		for (int c = 0; c < ex->n_classes; c++) {
			assert_int_equal(ap->pop[p].class_requests[c], ex->pop[p].class_requests[c]);
			close_q("class ingress", &ex->pop[p].class_ingress[c], &ap->pop[p].class_ingress[c]);
		}
	}
	buf_fini(&b);
}

/* Every question asked of st: window alone, window + baseline, each class
 * and none, with and without the model. */
static void compare_all(Store *st, const Model *m)
{
	Err err = {0};
	const char *classes[] = {NULL, "standard", "premium", "enterprise"};
	for (int base = 0; base < 2; base++)
		for (size_t c = 0; c < sizeof classes / sizeof classes[0]; c++)
			for (int with_model = 0; with_model < 2; with_model++) {
				AnalysisOptions o = {.period.win.from = D.win_from, .period.win.to = D.win_to,
				                     .period.has_baseline = base, .period.base.from = D.base_from,
				                     .period.base.to = D.base_to, .wclass = classes[c],
				                     .model = with_model ? m : NULL};
				Analysis *ex = NULL, *ap = NULL;
				assert_int_equal(analysis_run(st, &o, &ex, &err), 0);
				if (analysis_from_aggregates(st, &o, &ap, &err))
					fail_msg("%s", err.msg);
				compare(ex, ap);
				analysis_free(ex);
				analysis_free(ap);
			}
}

static Model *model(void)
{
	Model *m = NULL;
	Err err = {0};
	if (model_load(MODEL_PATH, &m, &err))
		fail_msg("%s", err.msg);
	return m;
}

static void test_aggregates_match_exact(void **state)
{
	(void)state;
	/* the simulator's windows fall on whole minutes: the aggregates
	 * answer them exactly in population, approximately in value */
	assert_int_equal(D.win_from % STORE_AGG_MINUTE_NS, 0);
	assert_int_equal(D.win_to % STORE_AGG_MINUTE_NS, 0);
	char db[128];
	snprintf(db, sizeof db, "%s/append.db", D.dir);
	Store *st = NULL;
	Err err = {0};
	assert_int_equal(store_open(db, 0, &st, &err), 0);
	import(st, D.traces[0]);
	import(st, D.metrics);
	import(st, D.traces[1]); /* appends to minutes already aggregated */
	assert_int_equal(analysis_agg_ready(st, &err), 1);
	Model *m = model();
	n_checked = 0;
	compare_all(st, m);
	assert_true(n_checked > 1000);
	/* a read-only reader answers from them too */
	store_close(st);
	assert_int_equal(store_open(db, STORE_READONLY, &st, &err), 0);
	AnalysisOptions o = {.period.win.from = D.win_from, .period.win.to = D.win_to, .model = m};
	Analysis *ap = NULL, *ex = NULL;
	assert_int_equal(analysis_from_aggregates(st, &o, &ap, &err), 0);
	assert_int_equal(analysis_run(st, &o, &ex, &err), 0);
	compare(ex, ap);
	analysis_free(ap);
	analysis_free(ex);
	store_close(st);
	model_free(m);
	rm_db(db);
}

/* Sorted rows of every cell, to compare two databases' aggregates. */
static int on_cell(void *ctx, const StoreAggCell *c)
{
	Buf *b = ctx;
	buf_printf(b, "%lld|%lld|%d|%s|%s|%lld|%lld|%lld|%lld|%lld|%lld|%lld|%lld|", (long long)c->minute,
	           (long long)c->node, c->comp, c->wclass, c->host, (long long)c->n,
	           (long long)c->requests, (long long)c->unknown, (long long)c->db,
	           (long long)c->par_votes, (long long)c->ser_votes, (long long)c->off_ns, (long long)c->errors);
	for (size_t i = 0; i < c->sketch_len; i++)
		buf_printf(b, "%02x", ((const unsigned char *)c->sketch)[i]);
	buf_addc(b, '\n');
	return 0;
}

static void cells_of(const char *db, Buf *out)
{
	Store *st = NULL;
	Err err = {0};
	assert_int_equal(store_open(db, STORE_READONLY, &st, &err), 0);
	assert_int_equal(store_agg_scan(st, INT64_MIN, INT64_MAX, on_cell, out, &err), 0);
	store_close(st);
}

/* A bulk load of traces, then of more (NULL: none). */
static void bulk(const char *db, const char *traces, const char *more)
{
	Err err = {0};
	Store *st = NULL;
	assert_int_equal(store_bulk_open(db, &st, &err), 0);
	assert_non_null(st);
	import(st, traces);
	if (more)
		import(st, more);
	if (store_bulk_finish(st, &err))
		fail_msg("%s", err.msg);
}

/* Every trace pack of db, in key order, as text. */
static void packs_of(const char *db, Buf *out)
{
	sqlite3 *h = NULL;
	sqlite3_stmt *s = NULL;
	assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, "SELECT trace_key, upto, hex(pack) FROM trace_packs"
	                                       " ORDER BY trace_key", -1, &s, NULL),
	                 SQLITE_OK);
	while (sqlite3_step(s) == SQLITE_ROW)
		buf_printf(out, "%lld %lld %s\n", (long long)sqlite3_column_int64(s, 0),
		           (long long)sqlite3_column_int64(s, 1), (const char *)sqlite3_column_text(s, 2));
	sqlite3_finalize(s);
	sqlite3_close(h);
}

/* What of(db) gives is the same, and not small, for databases a, b and c. */
static void same_in_all(void (*of)(const char *, Buf *), const char *a, const char *b,
                        const char *c)
{
	Buf x, y, z;
	buf_init(&x);
	buf_init(&y);
	buf_init(&z);
	of(a, &x);
	of(b, &y);
	of(c, &z);
	assert_true(x.len > 1000);
	assert_string_equal(buf_str(&x), buf_str(&y));
	assert_string_equal(buf_str(&z), buf_str(&y));
	buf_fini(&x);
	buf_fini(&y);
	buf_fini(&z);
}

/* The aggregates of a new database (built once at the end, outside a
 * transaction, from the load's spool, or when the spool was given up read
 * through two connections if that is forced) are those an append builds
 * inside its transaction, cell for cell, and so are the trace packs, byte
 * for byte. The spool is given up by a second file that repeats a span of
 * the first (stored once: the same rows). */
static void test_bulk_equals_append(void **state)
{
	(void)state;
	char a[128], b[128], c[128], dup[128];
	Err err = {0};
	snprintf(a, sizeof a, "%s/a.db", D.dir);
	snprintf(b, sizeof b, "%s/b.db", D.dir);
	snprintf(c, sizeof c, "%s/c.db", D.dir);
	snprintf(dup, sizeof dup, "%s/dup.jsonl", D.dir);
	FILE *in = fopen(D.traces[0], "r"), *out = fopen(dup, "w");
	assert_non_null(in);
	assert_non_null(out);
	char *line = NULL;
	size_t cap = 0;
	assert_true(getline(&line, &cap, in) > 0);
	fputs(line, out);
	free(line);
	fclose(in);
	fclose(out);
	trace_feed_split_at(INT64_MAX, INT64_MAX);
	int64_t splits = trace_feed_splits(), loads = store_spool_loads();
	bulk(a, D.traces[0], NULL);
	assert_int_equal(trace_feed_splits(), splits);
	assert_true(store_spool_loads() > loads);
	loads = store_spool_loads();
	trace_feed_split_at(0, 0);
	bulk(c, D.traces[0], dup);
	trace_feed_split_at(100000, 4000);
	assert_int_equal(store_spool_loads(), loads);
	if (sysconf(_SC_NPROCESSORS_ONLN) > 1)
		assert_true(trace_feed_splits() > splits);
	Store *st = NULL;
	assert_int_equal(store_open(b, 0, &st, &err), 0);
	import(st, D.traces[0]);
	store_close(st);
	same_in_all(cells_of, a, b, c);
	same_in_all(packs_of, a, b, c);
	rm_db(a);
	rm_db(b);
	rm_db(c);
	unlink(dup);
}

/* A trace with a second root span is read once for each root when the
 * rebuild is read in slices of time; it counts once, in the minute of
 * its first root. Roots in minutes 0 to 3 make one rebuild of four
 * minutes, which two parts read in two slices: the trace's roots are in
 * different ones (a repeated span gives up the bulk load's spool, so that
 * it reads SQLite). Read from the spool, it counts once too. */
static void test_split_counts_extra_roots_once(void **state)
{
	(void)state;
	static const TSpanSpec sp[] = {
	    {"x", "r1", "", "edge", "GET /", 2, 10000, 10040, "", 0},
	    {"x", "c1", "r1", "edge", "db", 3, 10005, 10030, "", 0},
	    {"x", "r2", "", "edge", "GET /", 2, 150000, 150020, "", 0},
	    {"y", "r1", "", "edge", "GET /", 2, 70000, 70050, "", 0},
	    {"z", "r1", "", "edge", "GET /", 2, 200000, 200060, "", 0},
	    {"x", "r1", "", "edge", "GET /", 2, 10000, 10040, "", 0},
	};
	char a[128], b[128], c[128];
	Err err = {0};
	snprintf(a, sizeof a, "%s/roots-a.db", D.dir);
	snprintf(b, sizeof b, "%s/roots-b.db", D.dir);
	snprintf(c, sizeof c, "%s/roots-c.db", D.dir);
	Store *st = NULL;
	trace_feed_split_at(0, 0);
	int64_t splits = trace_feed_splits(), loads = store_spool_loads();
	assert_int_equal(store_bulk_open(a, &st, &err), 0);
	assert_int_equal(add_spans(st, sp, 6, T0), 0);
	assert_int_equal(store_bulk_finish(st, &err), 0);
	trace_feed_split_at(100000, 4000);
	if (sysconf(_SC_NPROCESSORS_ONLN) > 1)
		assert_true(trace_feed_splits() > splits);
	assert_int_equal(store_spool_loads(), loads);
	assert_int_equal(store_bulk_open(c, &st, &err), 0);
	assert_int_equal(add_spans(st, sp, 5, T0), 0);
	assert_int_equal(store_bulk_finish(st, &err), 0);
	assert_true(store_spool_loads() > loads);
	assert_int_equal(store_open(b, 0, &st, &err), 0);
	assert_int_equal(add_spans(st, sp, 5, T0), 0);
	store_close(st);
	Buf x, y;
	buf_init(&x);
	buf_init(&y);
	cells_of(a, &x);
	cells_of(b, &y);
	assert_true(strstr(buf_str(&y), "|1|") != NULL);
	assert_string_equal(buf_str(&x), buf_str(&y));
	buf_reset(&x);
	cells_of(c, &x);
	assert_string_equal(buf_str(&x), buf_str(&y));
	buf_fini(&x);
	buf_fini(&y);
	rm_db(a);
	rm_db(b);
	rm_db(c);
}

/* An HTTP client names its spans after the method alone: api's calls to
 * pricing, to inventory and to a third-party API that sends no spans are
 * all "GET". They are three DAG nodes, told apart by the peer each names
 * (server.address; net.peer.name, from semantic conventions before 1.21,
 * for the other two), in the exact analysis and in the aggregates alike;
 * merged, one node would carry the calls of two or three. Its database
 * calls go to two replicas (server.address alternates): one node, keyed
 * by the database system. */
static void test_generic_call_names_split_by_peer(void **state)
{
	(void)state;
	char db[128];
	snprintf(db, sizeof db, "%s/generic.db", D.dir);
	Store *st = NULL;
	Err err = {0};
	assert_int_equal(store_open(db, 0, &st, &err), 0);
	import(st, "fixtures/otlp/generic_client_names.jsonl");
	assert_int_equal(analysis_agg_ready(st, &err), 1);
	AnalysisOptions o = {.period.win = TIME_RANGE_ALL};
	Analysis *ex = NULL, *ap = NULL;
	assert_int_equal(analysis_run(st, &o, &ex, &err), 0);
	assert_int_equal(analysis_from_aggregates(st, &o, &ap, &err), 0);
	const Analysis *both[2] = {ex, ap};
	for (int k = 0; k < 2; k++) {
		const Analysis *a = both[k];
		int seen = 0;
		for (int i = 0; i < a->n_nodes; i++) {
			const DagNode *d = &a->nodes[i];
			if (d->type != NODE_CALL)
				continue;
			assert_int_equal(d->pop[0].calls, 24);
			if (d->db_system) {
				assert_string_equal(d->operation, "SELECT prices");
				assert_string_equal(d->db_system, "postgresql");
				seen |= 8;
				continue;
			}
			assert_string_equal(d->operation, "GET");
			const char *to = d->dependency ? d->dependency : d->peer ? d->peer : "";
			seen |= strcmp(to, "pricing") == 0 ? 1 : strcmp(to, "inventory") == 0 ? 2
			        : strcmp(to, "rates.example.net") == 0 ? 4 : 16;
		}
		assert_int_equal(seen, 15);
	}
	compare(ex, ap);
	analysis_free(ex);
	analysis_free(ap);
	store_close(st);
	rm_db(db);
}

static void test_stale_refused_then_caught_up(void **state)
{
	(void)state;
	char db[128];
	snprintf(db, sizeof db, "%s/stale.db", D.dir);
	Store *st = NULL;
	Err err = {0};
	assert_int_equal(store_open(db, 0, &st, &err), 0);
	import(st, D.traces[0]);
	/* a writer without the hook (another program, an older tailtriage) */
	store_set_commit_hook(NULL);
	import(st, D.traces[1]);
	store_set_commit_hook(analysis_agg_update);
	assert_int_equal(analysis_agg_ready(st, &err), 0);
	AnalysisOptions o = {.period.win.from = D.win_from, .period.win.to = D.win_to};
	Analysis *ap = NULL;
	assert_int_equal(analysis_from_aggregates(st, &o, &ap, &err), TT_ENOTFOUND);
	assert_null(ap);
	/* the next writer with the hook covers what was missed */
	import(st, D.metrics);
	assert_int_equal(analysis_agg_ready(st, &err), 1);
	Model *m = model();
	compare_all(st, m);
	model_free(m);
	store_close(st);
	rm_db(db);
}

/* Splits every request of src into two files: the root service's
 * resourceSpans into a, the other services' into b, as two exporters send
 * them. Importing a then b changes traces already aggregated: calls
 * without a server span gain one. */
static void split_file(const char *src, const char *a, const char *b)
{
	Buf in;
	buf_init(&in);
	Err err = {0};
	if (buf_read_file(&in, src, (size_t)1 << 30, &err))
		fail_msg("%s", err.msg);
	FILE *fa = fopen(a, "w"), *fb = fopen(b, "w");
	assert_true(fa && fb);
	char *line = in.p, *end = in.p + in.len;
	while (line < end) {
		char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t len = nl ? (size_t)(nl - line) : (size_t)(end - line);
		cJSON *doc = cJSON_ParseWithLength(line, len);
		line += len + 1;
		if (doc == NULL)
			continue;
		cJSON *rs = cJSON_GetObjectItem(doc, "resourceSpans");
		cJSON *da = cJSON_CreateObject(), *db = cJSON_CreateObject();
		cJSON *ra = cJSON_AddArrayToObject(da, "resourceSpans");
		cJSON *rb = cJSON_AddArrayToObject(db, "resourceSpans");
		cJSON *r;
		cJSON_ArrayForEach(r, rs) {
			const char *svc = "";
			cJSON *at;
			cJSON_ArrayForEach(at, cJSON_GetObjectItem(cJSON_GetObjectItem(r, "resource"),
			                                           "attributes")) {
				cJSON *k = cJSON_GetObjectItem(at, "key");
				if (cJSON_IsString(k) && strcmp(k->valuestring, "service.name") == 0)
					svc = cJSON_GetObjectItem(cJSON_GetObjectItem(at, "value"), "stringValue")
					          ->valuestring;
			}
			cJSON_AddItemToArray(strcmp(svc, "mercury-api") == 0 ? ra : rb,
			                     cJSON_Duplicate(r, 1));
		}
		char *x = cJSON_PrintUnformatted(da), *y = cJSON_PrintUnformatted(db);
		fprintf(fa, "%s\n", x);
		fprintf(fb, "%s\n", y);
		cJSON_free(x);
		cJSON_free(y);
		cJSON_Delete(da);
		cJSON_Delete(db);
		cJSON_Delete(doc);
	}
	fclose(fa);
	fclose(fb);
	buf_fini(&in);
}

/* Traces that change after they were aggregated: their earlier part is
 * taken back and the whole added, so the aggregates still answer like
 * the exact analysis (counts exact; the maximum, once a largest value is
 * taken back, within the stated error too). */
static void test_traces_completed_later(void **state)
{
	(void)state;
	char a[128], b[128], db[128];
	snprintf(a, sizeof a, "%s/a.jsonl", D.dir);
	snprintf(b, sizeof b, "%s/b.jsonl", D.dir);
	snprintf(db, sizeof db, "%s/split.db", D.dir);
	split_file(D.traces[0], a, b);
	Store *st = NULL;
	Err err = {0};
	assert_int_equal(store_open(db, 0, &st, &err), 0);
	import(st, a);
	Model *m = model();
	compare_all(st, m); /* calls without their servers: unknown splits */
	import(st, b);
	assert_int_equal(analysis_agg_ready(st, &err), 1);
	max_tol = SKETCH_ALPHA;
	compare_all(st, m);
	max_tol = 0;
	AnalysisOptions o = {.period.win.from = D.win_from, .period.win.to = D.win_to, .model = m};
	Analysis *ap = NULL;
	assert_int_equal(analysis_from_aggregates(st, &o, &ap, &err), 0);
	int64_t unknown = 0;
	for (int i = 0; i < ap->n_nodes; i++)
		unknown += ap->nodes[i].pop[0].unknown_split;
	assert_true(unknown < ap->pop[0].requests); /* the servers arrived */
	analysis_free(ap);
	model_free(m);
	store_close(st);
	rm_db(db);
	unlink(a);
	unlink(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_aggregates_match_exact),
	    cmocka_unit_test(test_bulk_equals_append),
	    cmocka_unit_test(test_split_counts_extra_roots_once),
	    cmocka_unit_test(test_generic_call_names_split_by_peer),
	    cmocka_unit_test(test_stale_refused_then_caught_up),
	    cmocka_unit_test(test_traces_completed_later),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
