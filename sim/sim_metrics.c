/*
 * sim_metrics.c - writes the model's per-host gauges (SimSample) as OTLP/JSON
 * metrics, one ExportMetricsServiceRequest per line (JSON Lines), the way a
 * Collector's file exporter would write what each API process reports:
 *
 *   executor.active, executor.slots, executor.pending      gauges
 *   executor.queue_age                                     histogram, s
 *   db.client.connection.count{state=used|idle}            non-monotonic sum
 *   db.client.connection.max, .pending_requests            gauges
 *   db.client.connection.wait_time                         histogram, s
 *   system.cpu.utilization                                 gauge, ratio
 *
 * Pools are told apart by db.client.connection.pool.name (profile,
 * pricing). Every data point also carries host.name (as well as the
 * resource), so a reader that only sees point labels can still group by
 * host. Histograms are cumulative from the start of the phase (a process
 * that started then) and carry exemplars: the sampled request with the
 * longest wait since the previous report, by trace and span id.
 *
 * The CPU gauge is modelled, not measured: each request charges its local
 * spans (validate, assemble) plus cpu-per-call-ms per outgoing call to its
 * host, divided by the host's cores over the sampling interval.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "sim.h"

static const double WAIT_BOUNDS_MS[SIM_WAIT_BUCKETS - 1] = {
	0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000,
};

const double *sim_wait_bounds_ms(void)
{
	return WAIT_BOUNDS_MS;
}

enum { EX_EXEC, EX_PROFILE, EX_PRICING, N_EX };

typedef struct Exemplar {
	int has;
	double ms;
	uint8_t trace_id[16];
	uint64_t span_id;
	int64_t t_ns;
} Exemplar;

struct SimMetrics {
	FILE *f;
	char *path;
	const SimParams *p;
	const SimWorld *w;
	Exemplar *ex;              /* [hosts][N_EX] */
	int64_t phase_start[2];
	int cur_phase;             /* phase of the last sample: exemplars of traces
	                            * of another phase are not offered */
	Buf out;
	int failed;
};

static const char HEX[] = "0123456789abcdef";

static void add_hex(Buf *b, const uint8_t *p, int n)
{
	for (int i = 0; i < n; i++) {
		buf_addc(b, HEX[p[i] >> 4]);
		buf_addc(b, HEX[p[i] & 15]);
	}
}

static void add_id64(Buf *b, uint64_t v)
{
	uint8_t p[8];
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
	add_hex(b, p, 8);
}

static void add_dbl(Buf *b, double d)
{
	if (!isfinite(d))
		d = 0;
	char t[40];
	snprintf(t, sizeof t, "%.9g", d);
	buf_adds(b, t);
}

static void kv(Buf *b, const char *k, const char *v, int comma)
{
	buf_printf(b, "%s{\"key\":", comma ? "," : "");
	buf_add_json_str(b, k, strlen(k));
	buf_adds(b, ",\"value\":{\"stringValue\":");
	buf_add_json_str(b, v, strlen(v));
	buf_adds(b, "}}");
}

/* "attributes":[host.name, k1=v1, k2=v2] */
static void point_attrs(Buf *b, const char *host, const char *k1, const char *v1,
                        const char *k2, const char *v2)
{
	buf_adds(b, "\"attributes\":[");
	kv(b, "host.name", host, 0);
	if (k1)
		kv(b, k1, v1, 1);
	if (k2)
		kv(b, k2, v2, 1);
	buf_addc(b, ']');
}

static void int_point(Buf *b, int64_t t, int64_t v, const char *host, const char *k1,
                      const char *v1, const char *k2, const char *v2)
{
	buf_printf(b, "{\"timeUnixNano\":\"%lld\",\"asInt\":\"%lld\",", (long long)t, (long long)v);
	point_attrs(b, host, k1, v1, k2, v2);
	buf_addc(b, '}');
}

static void gauge(Buf *b, int *first, const char *name, const char *unit, int64_t t, int64_t v,
                  const char *host, const char *k1, const char *v1)
{
	buf_printf(b, "%s{\"name\":\"%s\",\"unit\":\"%s\",\"gauge\":{\"dataPoints\":[", *first ? "" : ",",
	           name, unit);
	int_point(b, t, v, host, k1, v1, NULL, NULL);
	buf_adds(b, "]}}");
	*first = 0;
}

/* One histogram data point of per-bucket counts in ms, written in seconds. */
static void hist_point(Buf *b, int64_t start, int64_t t, const uint64_t *counts, double sum_ms,
                       const Exemplar *ex, const char *host, const char *k1, const char *v1)
{
	uint64_t total = 0;
	for (int i = 0; i < SIM_WAIT_BUCKETS; i++)
		total += counts[i];
	buf_printf(b, "{\"startTimeUnixNano\":\"%lld\",\"timeUnixNano\":\"%lld\",\"count\":\"%llu\","
	              "\"sum\":",
	           (long long)start, (long long)t, (unsigned long long)total);
	add_dbl(b, sum_ms / 1000);
	buf_adds(b, ",\"bucketCounts\":[");
	for (int i = 0; i < SIM_WAIT_BUCKETS; i++)
		buf_printf(b, "%s\"%llu\"", i ? "," : "", (unsigned long long)counts[i]);
	buf_adds(b, "],\"explicitBounds\":[");
	for (int i = 0; i < SIM_WAIT_BUCKETS - 1; i++) {
		if (i)
			buf_addc(b, ',');
		add_dbl(b, WAIT_BOUNDS_MS[i] / 1000);
	}
	buf_adds(b, "],");
	point_attrs(b, host, k1, v1, NULL, NULL);
	if (ex && ex->has) {
		buf_printf(b, ",\"exemplars\":[{\"timeUnixNano\":\"%lld\",\"asDouble\":",
		           (long long)ex->t_ns);
		add_dbl(b, ex->ms / 1000);
		buf_adds(b, ",\"traceId\":\"");
		add_hex(b, ex->trace_id, 16);
		buf_adds(b, "\",\"spanId\":\"");
		add_id64(b, ex->span_id);
		buf_adds(b, "\"}]");
	}
	buf_addc(b, '}');
}

int sim_metrics_open(SimMetrics **out, const char *path, const SimParams *p, const SimWorld *w,
                     Err *err)
{
	*out = NULL;
	FILE *f = fopen(path, "wb");
	if (f == NULL)
		return err_set(err, TT_EIO, "%s: cannot create: %s", path, strerror(errno));
	SimMetrics *m = xcalloc(1, sizeof *m);
	m->f = f;
	m->path = xstrdup(path);
	m->p = p;
	m->w = w;
	m->ex = xcalloc((size_t)p->hosts * N_EX, sizeof *m->ex);
	m->phase_start[0] = m->phase_start[1] = -1;
	buf_init(&m->out);
	*out = m;
	return 0;
}

static int span_named(const SimSpan *s, const char *name)
{
	return s->name && strcmp(s->name, name) == 0;
}

static double attr_double(const SimSpan *s, const char *key, int *found)
{
	for (int i = 0; i < s->n_attrs; i++)
		if (strcmp(s->attrs[i].key, key) == 0 && s->attrs[i].type == SIM_ATTR_DOUBLE) {
			*found = 1;
			return s->attrs[i].d;
		}
	*found = 0;
	return 0;
}

static void offer(SimMetrics *m, int host, int kind, double ms, const SimTrace *t, uint64_t span,
                  int64_t at)
{
	if (host < 0 || host >= m->p->hosts || t->phase != m->cur_phase)
		return;
	Exemplar *e = &m->ex[host * N_EX + kind];
	if (e->has && e->ms >= ms)
		return;
	e->has = 1;
	e->ms = ms;
	memcpy(e->trace_id, t->trace_id, 16);
	e->span_id = span;
	e->t_ns = at;
}

int sim_metrics_trace(void *ctx, const SimTrace *t, Err *err)
{
	(void)err;
	SimMetrics *m = ctx;
	if (t->n_spans == 0)
		return 0;
	const SimSpan *root = &t->spans[0];
	int host = root->resource, found;
	double q = attr_double(root, "queue.wait_ms", &found);
	if (found)
		offer(m, host, EX_EXEC, q, t, root->span_id, root->start_ns);
	for (int i = 1; i < t->n_spans; i++) {
		const SimSpan *s = &t->spans[i];
		if (s->kind != 3)
			continue;
		if (span_named(s, "profile.Get")) {
			q = attr_double(s, "queue.wait_ms", &found);
			if (found)
				offer(m, host, EX_PROFILE, q, t, s->span_id, s->start_ns);
		} else if (span_named(s, "pricing.Quote")) {
			for (int k = i + 1; k < t->n_spans; k++)
				if (t->spans[k].parent == i && t->spans[k].kind == 2) {
					double w = (double)((s->end_ns - s->start_ns) -
					                    (t->spans[k].end_ns - t->spans[k].start_ns)) / 1e6;
					offer(m, host, EX_PRICING, w, t, s->span_id, s->start_ns);
					break;
				}
		}
	}
	return 0;
}

int sim_metrics_sample(void *ctx, const SimSample *s, Err *err)
{
	SimMetrics *m = ctx;
	if (s->host < 0 || s->host >= m->w->n_resources)
		return 0;
	int ph = s->phase & 1;
	if (m->phase_start[ph] < 0) {
		/* a new phase (another process lifetime): exemplars left over
		 * from the previous one do not belong to its histograms */
		m->phase_start[ph] = s->t_ns;
		memset(m->ex, 0, (size_t)m->p->hosts * N_EX * sizeof *m->ex);
	}
	m->cur_phase = s->phase;
	int64_t start = s->start_ns ? s->start_ns : m->phase_start[ph];
	const char *host = m->w->resources[s->host].host;
	Buf *b = &m->out;
	buf_reset(b);
	buf_adds(b, "{\"resourceMetrics\":[{\"resource\":{\"attributes\":[");
	kv(b, "service.name", m->w->resources[s->host].service, 0);
	kv(b, "service.namespace", "mercury", 1);
	kv(b, "host.name", host, 1);
	buf_adds(b, "]},\"scopeMetrics\":[{\"scope\":{\"name\":\"tailtriage.sim.metrics\",\"version\":\"1\"},"
	            "\"metrics\":[");
	int first = 1;
	int64_t t = s->t_ns;
	gauge(b, &first, "executor.active", "{slot}", t, s->exec_used, host, NULL, NULL);
	gauge(b, &first, "executor.slots", "{slot}", t, s->exec_max, host, NULL, NULL);
	gauge(b, &first, "executor.pending", "{request}", t, s->exec_pending, host, NULL, NULL);
	Exemplar *ex = &m->ex[s->host * N_EX];
	if (s->exec_wait) {
		buf_adds(b, ",{\"name\":\"executor.queue_age\",\"unit\":\"s\",\"histogram\":"
		            "{\"aggregationTemporality\":2,\"dataPoints\":[");
		hist_point(b, start, t, s->exec_wait, s->exec_wait_sum_ms, &ex[EX_EXEC], host, NULL, NULL);
		buf_adds(b, "]}}");
	}
	static const char *const POOL = "db.client.connection.pool.name";
	static const char *const STATE = "db.client.connection.state";
	buf_adds(b, ",{\"name\":\"db.client.connection.count\",\"unit\":\"{connection}\",\"sum\":"
	            "{\"aggregationTemporality\":2,\"isMonotonic\":false,\"dataPoints\":[");
	int_point(b, t, s->profile_used, host, POOL, "profile", STATE, "used");
	buf_addc(b, ',');
	int_point(b, t, s->profile_max - s->profile_used, host, POOL, "profile", STATE, "idle");
	buf_addc(b, ',');
	int_point(b, t, s->pricing_used, host, POOL, "pricing", STATE, "used");
	buf_addc(b, ',');
	int_point(b, t, s->pricing_max - s->pricing_used, host, POOL, "pricing", STATE, "idle");
	buf_adds(b, "]}}");
	buf_adds(b, ",{\"name\":\"db.client.connection.max\",\"unit\":\"{connection}\",\"sum\":"
	            "{\"aggregationTemporality\":2,\"isMonotonic\":false,\"dataPoints\":[");
	int_point(b, t, s->profile_max, host, POOL, "profile", NULL, NULL);
	buf_addc(b, ',');
	int_point(b, t, s->pricing_max, host, POOL, "pricing", NULL, NULL);
	buf_adds(b, "]}}");
	buf_adds(b, ",{\"name\":\"db.client.connection.pending_requests\",\"unit\":\"{request}\",\"sum\":"
	            "{\"aggregationTemporality\":2,\"isMonotonic\":false,\"dataPoints\":[");
	int_point(b, t, s->profile_pending, host, POOL, "profile", NULL, NULL);
	buf_addc(b, ',');
	int_point(b, t, s->pricing_pending, host, POOL, "pricing", NULL, NULL);
	buf_adds(b, "]}}");
	if (s->profile_wait && s->pricing_wait) {
		buf_adds(b, ",{\"name\":\"db.client.connection.wait_time\",\"unit\":\"s\",\"histogram\":"
		            "{\"aggregationTemporality\":2,\"dataPoints\":[");
		hist_point(b, start, t, s->profile_wait, s->profile_wait_sum_ms, &ex[EX_PROFILE], host,
		           POOL, "profile");
		buf_addc(b, ',');
		hist_point(b, start, t, s->pricing_wait, s->pricing_wait_sum_ms, &ex[EX_PRICING], host,
		           POOL, "pricing");
		buf_adds(b, "]}}");
	}
	if (s->has_cpu) {
		buf_printf(b, ",{\"name\":\"system.cpu.utilization\",\"unit\":\"1\",\"gauge\":"
		              "{\"dataPoints\":[{\"timeUnixNano\":\"%lld\",\"asDouble\":",
		           (long long)t);
		add_dbl(b, s->cpu);
		buf_adds(b, ",");
		point_attrs(b, host, NULL, NULL, NULL, NULL);
		buf_adds(b, "}]}}");
	}
	buf_adds(b, "]}]}]}\n");
	for (int k = 0; k < N_EX; k++)
		ex[k].has = 0;
	if (fwrite(b->p, 1, b->len, m->f) != b->len) {
		m->failed = 1;
		return err_set(err, TT_EIO, "%s: write failed", m->path);
	}
	return 0;
}

int sim_metrics_close(SimMetrics *m, Err *err)
{
	if (m == NULL)
		return 0;
	int bad = m->failed;
	if (fclose(m->f) != 0)
		bad = 1;
	int rc = bad ? err_set(err, TT_EIO, "%s: write failed", m->path) : 0;
	buf_fini(&m->out);
	free(m->ex);
	free(m->path);
	free(m);
	return rc;
}
