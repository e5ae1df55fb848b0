/*
 * evidence_metrics.c - pools, executor and CPU evidence from stored metric
 * points, joined to the model's pools by their metric names.
 *
 * A pool's metrics come from the model (pools[].metrics) or, when it does
 * not name them, from the OpenTelemetry defaults:
 *   client pool:  db.client.connection.count{db.client.connection.state=used}
 *                 db.client.connection.max
 *                 db.client.connection.pending_requests
 *                 db.client.connection.wait_time (histogram, seconds)
 *                 selected by db.client.connection.pool.name=<pool name>
 *   executor:     executor.active, executor.slots, executor.pending,
 *                 executor.queue_age (histogram)
 * A used metric named http.client.open_connections (an HTTP client's
 * connections to one server.address) counts its state=active series.
 * Each name is also tried with '.' spelled '_' (Prometheus exposition of
 * the same metric), label keys likewise.
 *
 * Gauges: each series is averaged over the points in the range; the fleet
 * figure is the sum (used, max, pending) over series, occupancy is
 * sum(used) / sum(max). Histograms: per series the increase over the range
 * (cumulative: last point in the range minus the last point before it;
 * delta: the sum of the points in it), merged over series with the same
 * bucket bounds, and the quantile interpolated linearly inside its bucket
 * (as Prometheus' histogram_quantile does), provenance naming the bounds.
 */
#include "evidence.h"
#include "evidence_priv.h"
#include "evidence_name.h"
#include "evidence_hist.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

double ev_histogram_quantile(const double *le, const double *cum, int n, double q)
{
	if (n <= 0)
		return NAN;
	double total = cum[n - 1];
	if (!(total > 0))
		return NAN;
	double rank = q * total;
	int b = 0;
	while (b < n && cum[b] < rank)
		b++;
	if (b >= n)
		b = n - 1;
	if (isinf(le[b])) {
		/* in the +Inf bucket: the highest finite bound is all we know */
		return b > 0 ? le[b - 1] : NAN;
	}
	double lo = b > 0 ? le[b - 1] : (le[b] > 0 ? 0 : le[b]);
	double below = b > 0 ? cum[b - 1] : 0;
	double in = cum[b] - below;
	if (in <= 0)
		return le[b];
	return lo + (le[b] - lo) * (rank - below) / in;
}

/* ---- label helpers (labels_json is canonical: {"k":"v",...}) ------------ */

static const char *const HOST_KEYS[] = {"host.name", "host_name", "host", "instance", NULL};

static void series_host(const StoreMetricRow *r, char *out, size_t sz)
{
	for (int i = 0; HOST_KEYS[i]; i++)
		if (ev_label(r->labels_json, HOST_KEYS[i], out, sz))
			return;
	snprintf(out, sz, "series-%lld", (long long)r->series_id);
}

static void underscore(const char *in, char *out, size_t sz)
{
	snprintf(out, sz, "%s", in);
	for (char *p = out; *p; p++)
		if (*p == '.')
			*p = '_';
}

/* A label filter JSON object of up to two key/value pairs. */
static void filter_json(char *out, size_t sz, const char *k1, const char *v1, const char *k2,
                        const char *v2)
{
	Buf b;
	buf_init(&b);
	buf_addc(&b, '{');
	if (k1 && v1) {
		buf_add_json_str(&b, k1, strlen(k1));
		buf_addc(&b, ':');
		buf_add_json_str(&b, v1, strlen(v1));
	}
	if (k2 && v2) {
		if (k1 && v1)
			buf_addc(&b, ',');
		buf_add_json_str(&b, k2, strlen(k2));
		buf_addc(&b, ':');
		buf_add_json_str(&b, v2, strlen(v2));
	}
	buf_addc(&b, '}');
	snprintf(out, sz, "%s", buf_str(&b));
	buf_fini(&b);
}

/* ---- gauges ----------------------------------------------------------- */

typedef struct GSeries {
	int64_t id;
	char host[128];
	double sum;
	int64_t n;
} GSeries;

typedef struct GScan {
	GSeries *s;
	int n, cap;
	char family[160];
	char unit[32];
	char filt[300];            /* the label filter that matched, "{k=v,...}" */
	int64_t points;
} GScan;

static int on_gauge(void *ctx, const StoreMetricRow *r)
{
	GScan *g = ctx;
	if (!r->has_value || isnan(r->value) || (r->flags & STORE_POINT_NO_VALUE))
		return 0;
	if (g->n == 0 || g->s[g->n - 1].id != r->series_id) {
		if (g->n == g->cap) {
			g->cap = g->cap ? g->cap * 2 : 32;
			g->s = xrealloc(g->s, (size_t)g->cap * sizeof *g->s);
		}
		GSeries *s = &g->s[g->n++];
		memset(s, 0, sizeof *s);
		s->id = r->series_id;
		series_host(r, s->host, sizeof s->host);
		snprintf(g->family, sizeof g->family, "%s", r->family);
		snprintf(g->unit, sizeof g->unit, "%s", r->unit ? r->unit : "");
	}
	GSeries *s = &g->s[g->n - 1];
	s->sum += r->value;
	s->n++;
	g->points++;
	return 0;
}

/* Scans family (or its underscore spelling) with the label filter (and
 * the underscore spelling of its keys). Returns 0 (g->n may be 0). */
static int gauge_scan(Store *st, const char *family, const char *k1, const char *v1,
                      const char *k2, const char *v2, int64_t from, int64_t to, GScan *g, Err *err)
{
	memset(g, 0, sizeof *g);
	for (int spelling = 0; spelling < 2 && g->n == 0; spelling++) {
		char fam[160], a[128], b[128], filt[512];
		if (spelling == 0) {
			snprintf(fam, sizeof fam, "%s", family);
			snprintf(a, sizeof a, "%s", k1 ? k1 : "");
			snprintf(b, sizeof b, "%s", k2 ? k2 : "");
		} else {
			underscore(family, fam, sizeof fam);
			underscore(k1 ? k1 : "", a, sizeof a);
			underscore(k2 ? k2 : "", b, sizeof b);
			if (strcmp(fam, family) == 0 && (!k1 || strcmp(a, k1) == 0) && (!k2 || strcmp(b, k2) == 0))
				break;
		}
		filter_json(filt, sizeof filt, k1 ? a : NULL, v1, k2 ? b : NULL, v2);
		StoreMetricQuery q = {.family = fam, .labels_json = filt, .from_ns = from, .to_ns = to};
		int rc = store_metric_points_scan(st, &q, on_gauge, g, err);
		if (rc)
			return rc;
		if (g->n > 0) {
			/* say which spelling matched, for the provenance */
			if (k1 && v1)
				snprintf(g->filt, sizeof g->filt, "{%s=%s%s%s%s%s}", a, v1, k2 ? "," : "",
				         k2 ? b : "", k2 ? "=" : "", k2 ? v2 : "");
			else
				g->filt[0] = '\0';
		}
	}
	return 0;
}

static double gauge_total(const GScan *g)
{
	double t = 0;
	for (int i = 0; i < g->n; i++)
		t += g->s[i].sum / (double)g->s[i].n;
	return t;
}

static double gauge_of_host(const GScan *g, const char *host)
{
	double t = 0;
	int found = 0;
	for (int i = 0; i < g->n; i++)
		if (strcmp(g->s[i].host, host) == 0) {
			t += g->s[i].sum / (double)g->s[i].n;
			found = 1;
		}
	return found ? t : NAN;
}

/* ---- histograms ----------------------------------------------------------- */

static int is_executor(const ModelPool *p)
{
	return p->kind && strcmp(p->kind, "executor") == 0;
}

/* The dependency the pool p guards, as the evidence names it: the service
 * of the model node that has it in front of all its calls, the database
 * system of the call node it is in front of (a service's own database
 * pool), else the pool's node for a client pool; NULL when none. */
static const char *pool_dep(const Model *m, const ModelPool *p, const Analysis *a)
{
	for (int i = 0; i < m->n_nodes; i++) {
		const ModelNode *n = &m->nodes[i];
		if (n->pool == NULL || strcmp(n->pool, p->name) != 0 || n->service == NULL)
			continue;
		if (n->operation == NULL)
			return n->service;
		for (int k = 0; a && k < a->n_nodes; k++) {
			const DagNode *d = &a->nodes[k];
			if (d->type == NODE_CALL && strcmp(d->service, n->service) == 0 &&
			    strcmp(d->operation, n->operation) == 0)
				return d->dependency ? d->dependency : d->db_system ? d->db_system : d->peer;
		}
		return NULL;
	}
	if (p->node && !(p->kind && strcmp(p->kind, "executor") == 0))
		return p->node;
	return NULL;
}

/* The pool's wait histogram: p99 and p90 with their intervals into
 * pool.P.wait.*, and the same figures as the metric twin of the time in
 * front of the dependency it guards (dep.D.queue.*.metric) or, for the
 * executor, of the endpoint's queue (endpoint.queue_age.*.metric). */
static int pool_wait(Store *st, Evidence *e, const ModelPool *p, const char *wait_m,
                     const char *lk, const char *lv, const EvidenceOptions *opt,
                     const Analysis *a, Err *err)
{
	int np = opt->period.has_baseline ? 2 : 1;
	TimeRange ranges[2] = {opt->period.win, opt->period.base};
	EvHist h[2];
	memset(h, 0, sizeof h);
	int rc = 0, done = 0;
	/* the name as the model gives it, then its Prometheus spelling */
	for (int spelling = 0; spelling < 2 && rc == 0 && !done; spelling++) {
		char fam[160], key[128], filt[512];
		if (spelling == 0) {
			snprintf(fam, sizeof fam, "%s", wait_m);
			snprintf(key, sizeof key, "%s", lk ? lk : "");
		} else {
			underscore(wait_m, fam, sizeof fam);
			underscore(lk ? lk : "", key, sizeof key);
			if (strcmp(fam, wait_m) == 0 && (!lk || strcmp(key, lk) == 0))
				break;
		}
		filter_json(filt, sizeof filt, lk ? key : NULL, lv, NULL, NULL);
		rc = ev_hist_collect(st, fam, filt, NULL, NULL, 1, ranges, np, h, err);
		for (int k = 0; k < np; k++)
			done |= h[k].nb > 0;
		if (!done)
			for (int k = 0; k < np; k++)
				ev_hist_fini(&h[k]);
	}
	int ex = is_executor(p);
	const char *dep = ex ? NULL : pool_dep(opt->model, p, a);
	char dseg[96] = "";
	if (dep)
		evidence_segment(dep, dseg, sizeof dseg);
	for (int k = 0; rc == 0 && k < np; k++) {
		if (!(ev_hist_total(&h[k]) > 0))
			continue;
		const char *assumed;
		double to_ms = ev_hist_unit_ms(h[k].unit, h[k].family, 1000, &assumed);
		char what[300], name[300];
		if (lk)
			snprintf(what, sizeof what, "{%s=%s}: waits for pool %s", lk, lv, p->name);
		else
			snprintf(what, sizeof what, "(pool %s)", p->name);
		static const double PS[] = {99, 90};
		for (int i = 0; i < 2; i++) {
			char field[32];
			snprintf(field, sizeof field, "wait.p%g_ms", PS[i]);
			evidence_name(name, sizeof name, "pool", p->name, field, k);
			ev_put_hist_quantile(e, name, &h[k], PS[i], to_ms, what, assumed, k);
			if (dep)
				snprintf(name, sizeof name, "dep.%s.queue.p%g_ms.metric%s", dseg, PS[i],
				         k ? "@baseline" : "");
			else if (ex)
				snprintf(name, sizeof name, "endpoint.queue_age.p%g_ms.metric%s", PS[i],
				         k ? "@baseline" : "");
			else
				continue;
			ev_put_hist_quantile(e, name, &h[k], PS[i], to_ms, what, assumed, k);
		}
	}
	for (int k = 0; k < np; k++)
		ev_hist_fini(&h[k]);
	return rc;
}

/* ---- pools ------------------------------------------------------------------ */

static int pool_evidence(Store *st, Evidence *e, const ModelPool *p, int pop, int64_t from,
                         int64_t to, const EvidenceOptions *opt, const Analysis *a, Err *err)
{
	char name[256];
	const char *sfx = pop ? "@baseline" : "";
	const char *word = pop ? "baseline" : "window";
	int ex = is_executor(p);
	const char *used_m = p->used_metric ? p->used_metric
	                   : ex ? "executor.active" : "db.client.connection.count";
	const char *max_m = p->max_metric ? p->max_metric
	                  : ex ? "executor.slots" : "db.client.connection.max";
	const char *pend_m = p->pending_metric ? p->pending_metric
	                   : ex ? "executor.pending" : "db.client.connection.pending_requests";
	const char *wait_m = p->wait_metric ? p->wait_metric
	                   : ex ? "executor.queue_age" : "db.client.connection.wait_time";
	const char *lk = p->label_key, *lv = p->label_value;
	if (lk == NULL && !ex) {
		lk = "db.client.connection.pool.name";
		lv = p->name;
	}
	/* the OpenTelemetry count metric carries used and idle: take used */
	const char *sk = NULL, *sv = NULL;
	if (strstr(used_m, "connection.count") || strstr(used_m, "connections.usage") ||
	    strstr(used_m, "connection_count") || strstr(used_m, "connections_usage")) {
		sk = strstr(used_m, "usage") ? "state" : "db.client.connection.state";
		sv = "used";
	} else if (strstr(used_m, "open_connections") || strstr(used_m, "open.connections")) {
		/* HTTP client connections: active (in use) and idle */
		sk = "http.connection.state";
		sv = "active";
	}
	GScan used, max, pend;
	int rc;
	if ((rc = gauge_scan(st, used_m, lk, lv, sk, sv, from, to, &used, err)))
		return rc;
	if ((rc = gauge_scan(st, max_m, lk, lv, NULL, NULL, from, to, &max, err)) ||
	    (rc = gauge_scan(st, pend_m, lk, lv, NULL, NULL, from, to, &pend, err))) {
		free(used.s);
		free(max.s);
		return rc;
	}
	char filt[200] = "";
	if (lk && lv)
		snprintf(filt, sizeof filt, "{%s=%s}", lk, lv);
	if (used.n > 0) {
		double u = gauge_total(&used);
		evidence_name(name, sizeof name, "pool", p->name, "used", pop);
		ev_put(e, name, u, "count", EV_SRC_METRIC, EV_Q_NONE, used.points, 0,
		       "metric %s%s: mean over the %s, summed over %d series", used.family, used.filt,
		       word, used.n);
		double m = NAN;
		char mprov[512];
		if (max.n > 0) {
			m = gauge_total(&max);
			snprintf(mprov, sizeof mprov, "%s%s", max.family, max.filt);
		} else if (p->size > 0) {
			m = (double)p->size * used.n;
			snprintf(mprov, sizeof mprov, "model size %lld x %d series", (long long)p->size,
			         used.n);
		}
		if (!isnan(m) && m > 0) {
			evidence_name(name, sizeof name, "pool", p->name, "max", pop);
			ev_put(e, name, m, "count", EV_SRC_METRIC, EV_Q_NONE, max.points, 0,
			       "%s%s", max.n > 0 ? "metric " : "", mprov);
			evidence_name(name, sizeof name, "pool", p->name, "occupancy", pop);
			ev_put(e, name, u / m, "ratio", EV_SRC_METRIC, EV_Q_NONE, used.points, used.points < 3,
			       "metric: used / max = %.1f / %.1f (%s%s over %s) (%s)", u, m, used.family,
			       used.filt, mprov, word);
			if (ex) {
				snprintf(name, sizeof name, "executor.occupancy%s", sfx);
				ev_put(e, name, u / m, "ratio", EV_SRC_METRIC, EV_Q_NONE, used.points,
				       used.points < 3, "metric: %s / %s (pool %s) (%s)", used.family,
				       max.n ? max.family : "model size", p->name, word);
			}
			/* the busiest host */
			double hmax = NAN;
			const char *hh = NULL;
			for (int i = 0; i < used.n; i++) {
				double hu = gauge_of_host(&used, used.s[i].host);
				double hm = max.n > 0 ? gauge_of_host(&max, used.s[i].host) : (double)p->size;
				if (!isnan(hu) && hm > 0 && (isnan(hmax) || hu / hm > hmax)) {
					hmax = hu / hm;
					hh = used.s[i].host;
				}
			}
			if (!isnan(hmax)) {
				evidence_name(name, sizeof name, "pool", p->name, "occupancy_host_max", pop);
				ev_put(e, name, hmax, "ratio", EV_SRC_METRIC, EV_Q_NONE, used.points, 0,
				       "metric: highest per-series mean used / max (%s) (%s)", hh, word);
			}
		}
	} else {
		evidence_name(name, sizeof name, "pool", p->name, "occupancy", pop);
		char why[256];
		snprintf(why, sizeof why, "metric: no %s%s points in the %s", used_m, filt, word);
		ev_missing(e, name, "ratio", why);
	}
	if (pend.n > 0) {
		evidence_name(name, sizeof name, "pool", p->name, "pending", pop);
		ev_put(e, name, gauge_total(&pend), "count", EV_SRC_METRIC, EV_Q_NONE, pend.points, 0,
		       "metric %s%s: mean over the %s, summed over %d series", pend.family, pend.filt,
		       word, pend.n);
		double hmax = 0;
		for (int i = 0; i < pend.n; i++) {
			double v = pend.s[i].sum / (double)pend.s[i].n;
			if (v > hmax)
				hmax = v;
		}
		evidence_name(name, sizeof name, "pool", p->name, "pending_host_max", pop);
		ev_put(e, name, hmax, "count", EV_SRC_METRIC, EV_Q_NONE, pend.points, 0,
		       "metric %s%s: highest per-series mean (%s)", pend.family, pend.filt, word);
	}
	free(used.s);
	free(max.s);
	free(pend.s);
	return pop == 0 ? pool_wait(st, e, p, wait_m, lk, lv, opt, a, err) : 0;
}

/* ---- CPU ---------------------------------------------------------------------- */

static const char *const CPU_FAMILIES[] = {
	"system.cpu.utilization", "process.cpu.utilization", "host.cpu.utilization",
	"cpu.utilization", "container.cpu.utilization", NULL,
};

static int cpu_evidence(Store *st, Evidence *e, int pop, int64_t from, int64_t to, Err *err)
{
	const char *sfx = pop ? "@baseline" : "";
	const char *word = pop ? "baseline" : "window";
	char name[128];
	for (int f = 0; CPU_FAMILIES[f]; f++) {
		GScan g;
		int rc = gauge_scan(st, CPU_FAMILIES[f], NULL, NULL, NULL, NULL, from, to, &g, err);
		if (rc)
			return rc;
		if (g.n == 0) {
			free(g.s);
			continue;
		}
		/* per host: mean of its series' means (several CPUs or states) */
		double sum = 0, hmax = NAN;
		int hosts = 0;
		const char *hh = NULL;
		int pct = strcmp(g.unit, "%") == 0;
		for (int i = 0; i < g.n; i++) {
			int seen = 0;
			for (int j = 0; j < i && !seen; j++)
				seen = strcmp(g.s[j].host, g.s[i].host) == 0;
			if (seen)
				continue;
			double hs = 0;
			int k = 0;
			for (int j = i; j < g.n; j++)
				if (strcmp(g.s[j].host, g.s[i].host) == 0) {
					hs += g.s[j].sum / (double)g.s[j].n;
					k++;
				}
			double v = hs / k;
			if (pct || v > 1.5)
				v /= 100;
			char seg[96], hn[200];
			evidence_segment(g.s[i].host, seg, sizeof seg);
			snprintf(hn, sizeof hn, "cpu.host.%s%s", seg, sfx);
			ev_put(e, hn, v, "ratio", EV_SRC_METRIC, EV_Q_NONE, g.s[i].n, 0,
			       "metric %s: host %s, mean over the %s", g.family, g.s[i].host, word);
			sum += v;
			hosts++;
			if (isnan(hmax) || v > hmax) {
				hmax = v;
				hh = g.s[i].host;
			}
		}
		snprintf(name, sizeof name, "cpu.fleet_mean%s", sfx);
		ev_put(e, name, sum / hosts, "ratio", EV_SRC_METRIC, EV_Q_NONE, g.points, 0,
		       "metric %s: mean over the %s of %d hosts' means", g.family, word, hosts);
		if (pop == 0 && hh)
			ev_fact(e, "cpu.top_host", hh);
		snprintf(name, sizeof name, "cpu.host_max%s", sfx);
		ev_put(e, name, hmax, "ratio", EV_SRC_METRIC, EV_Q_NONE, g.points, 0,
		       "metric %s: busiest host %s (%s)", g.family, hh ? hh : "?", word);
		free(g.s);
		return 0;
	}
	snprintf(name, sizeof name, "cpu.fleet_mean%s", sfx);
	ev_missing(e, name, "ratio", "metric: no CPU utilization metric stored");
	return 0;
}

/* ---- named gauges and the request rate ------------------------------------ */

/* A gauge published under the evidence's own name (late_work.ratio, or its
 * Prometheus spelling late_work_ratio) supplies the value when the spans
 * could not: the mean over the window of the mean of each series. */
static int named_gauge(Store *st, Evidence *e, const char *evname, int pop, int64_t from,
                       int64_t to, Err *err)
{
	char name[200];
	snprintf(name, sizeof name, "%s%s", evname, pop ? "@baseline" : "");
	const EvValue *cur = evidence_get(e, name);
	if (cur && !cur->missing)
		return 0;
	GScan g;
	int rc = gauge_scan(st, evname, NULL, NULL, NULL, NULL, from, to, &g, err);
	if (rc == 0 && g.n > 0) {
		double t = gauge_total(&g) / g.n;
		if (strcmp(g.unit, "%") == 0 || t > 1.5)
			t /= 100;
		ev_put(e, name, t, "ratio", EV_SRC_METRIC, EV_Q_NONE, g.points, 0,
		       "metric %s: mean over the %s of %d series", g.family, pop ? "baseline" : "window",
		       g.n);
	}
	free(g.s);
	return rc;
}

int ev_metrics(Store *st, const EvidenceOptions *opt, const Analysis *a, Evidence *e, Err *err)
{
	int64_t series, points, obs;
	int rc = store_metric_counts(st, &series, &points, &obs, err);
	if (rc)
		return rc;
	int np = opt->period.has_baseline ? 2 : 1;
	for (int p = 0; p < np; p++) {
		TimeRange r = p ? opt->period.base : opt->period.win;
		int64_t from = r.from, to = r.to;
		if (points == 0) {
			ev_missing(e, p ? "cpu.fleet_mean@baseline" : "cpu.fleet_mean", "ratio",
			           "metric: the database holds no metric points");
			continue;
		}
		const Model *m = opt->model;
		for (int i = 0; m && i < m->n_pools; i++)
			if (m->pools[i].name &&
			    (rc = pool_evidence(st, e, &m->pools[i], p, from, to, opt, a, err)))
				return rc;
		if ((rc = cpu_evidence(st, e, p, from, to, err)) ||
		    (rc = named_gauge(st, e, "late_work.ratio", p, from, to, err)) ||
		    (rc = named_gauge(st, e, "omission.ratio", p, from, to, err)))
			return rc;
	}
	if (points > 0 && (rc = ev_metric_durations(st, opt, a, e, err)))
		return rc;
	if ((rc = ev_sampling(st, opt, a, e, err)))
		return rc;
	int tail = e->sampling.kind == EV_SAMPLED_TAIL;
	ev_best_source(e, opt->period.has_baseline, tail);
	if (tail)
		ev_tail_withhold(e);
	return 0;
}

/* ---- the best source of each figure ---------------------------------------------- */

/* How tightly a window value and its baseline pin their difference: the
 * number of their interval bounds that are unbounded (a p99 of a few
 * hundred calls has no upper one; a histogram's rank in its +Inf bucket
 * neither), then the width of the MOVER interval of w - b
 * (evidence_change()) over the bounded sides; a side without an interval
 * counts as exact. Returns the width; *open gets the unbounded count. */
double ev_pair_width(const EvValue *w, const EvValue *b, int *open)
{
	double s = 0;
	*open = 0;
	const EvValue *v[2] = {w, b};
	for (int i = 0; i < 2; i++) {
		if (v[i] == NULL || !v[i]->has_ci)
			continue;
		double lo = v[i]->lo, hi = v[i]->hi;
		if (!isfinite(lo)) {
			(*open)++;
			lo = v[i]->value;
		}
		if (!isfinite(hi)) {
			(*open)++;
			hi = v[i]->value;
		}
		s += (hi - lo) * (hi - lo);
	}
	return sqrt(s);
}

static const EvValue *present(const Evidence *e, const char *name)
{
	const EvValue *v = evidence_get(e, name);
	return v && !v->missing ? v : NULL;
}

/* Copies src (read before the container may move) to name, with a
 * provenance made of prefix and src's own. */
void ev_copy_value(Evidence *e, const char *name, const char *src_name, const char *prefix)
{
	const EvValue *s = evidence_get(e, src_name);
	if (s == NULL)
		return;
	EvValue c = *s;
	char unit[32], prov[512];
	snprintf(unit, sizeof unit, "%s", s->unit);
	snprintf(prov, sizeof prov, "%s%s", prefix, s->provenance);
	EvValue *d = ev_put(e, name, c.value, unit, c.source, c.qkind, c.n, c.small_sample, "%s",
	                    prov);
	if (c.has_ci)
		ev_ci(d, c.lo, c.hi);
	if (d && !d->missing)
		d->top_k = c.top_k;
}

void ev_best_source(Evidence *e, int has_baseline, int tail)
{
	static const char SFX[] = ".metric";
	const size_t sl = sizeof SFX - 1;
	/* the names to decide, collected first: copying adds values */
	char **todo = NULL;
	int nt = 0;
	for (int i = 0; i < e->n; i++) {
		const char *nm = e->v[i].name;
		size_t l = strlen(nm);
		if (l > sl && strcmp(nm + l - sl, SFX) == 0) {
			char base[300];
			snprintf(base, sizeof base, "%.*s", (int)(l - sl), nm);
			ev_list_add(&todo, &nt, base);
		}
	}
	for (int i = 0; i < nt; i++) {
		const char *x = todo[i];
		char xb[340], m[340], mb[350], sp[340], spb[350];
		snprintf(xb, sizeof xb, "%s@baseline", x);
		snprintf(m, sizeof m, "%s.metric", x);
		snprintf(mb, sizeof mb, "%s.metric@baseline", x);
		snprintf(sp, sizeof sp, "%s.spans", x);
		snprintf(spb, sizeof spb, "%s.spans@baseline", x);
		const EvValue *vm = present(e, m), *vmb = has_baseline ? present(e, mb) : NULL;
		const EvValue *vs = present(e, x), *vsb = has_baseline ? present(e, xb) : NULL;
		if (vm == NULL)
			continue;
		/* a pair beats a lone value; then the narrower change; a tie
		 * stays with the spans, whose structure the rest reads */
		int cm = 1 + (vmb != NULL), cs = vs ? 1 + (vsb != NULL) : 0, om, os = 0;
		double wm = ev_pair_width(vm, vmb, &om), ws = vs ? ev_pair_width(vs, vsb, &os) : INFINITY;
		int better = cm > cs || (cm == cs && (om < os || (om == os && wm < ws)));
		if (!tail && !better)
			continue;
		char why[800];
		if (vs && tail) {
			snprintf(why, sizeof why, "best source (the traces are a tail sample, not a "
			                          "population): ");
			ev_copy_value(e, sp, x, "");
			if (vsb)
				ev_copy_value(e, spb, xb, "");
		} else if (vs) {
			char ci[96] = "";
			if (vs->has_ci)
				snprintf(ci, sizeof ci, ", interval [%.4g, %.4g]", vs->lo, vs->hi);
			snprintf(why, sizeof why,
			         "best source (%s): the spans' figure, %.4g ms on %lld%s, is kept as "
			         "%s; ", cm > cs ? "the metric has both window and baseline"
			                         : "the metric pins the change tighter",
			         vs->value, (long long)vs->n, ci, sp);
			ev_copy_value(e, sp, x, "");
			if (vsb)
				ev_copy_value(e, spb, xb, "");
		} else {
			snprintf(why, sizeof why, "best source (the spans have no figure): ");
		}
		ev_copy_value(e, x, m, why);
		if (has_baseline && present(e, mb))
			ev_copy_value(e, xb, mb, why);
		else if (has_baseline)
			ev_missing(e, xb, "ms", "metric: no figure for the baseline");
	}
	for (int i = 0; i < nt; i++)
		free(todo[i]);
	free(todo);
	/* the endpoint's count goes with its percentiles: when they come from
	 * a metric, the requests they stand on are the metric's */
	for (int p = 0; p < (has_baseline ? 2 : 1); p++) {
		const char *sfx = p ? "@baseline" : "";
		char q[64], rq[64], rm[64], rs[64];
		snprintf(q, sizeof q, "ingress.p99_ms%s", sfx);
		snprintf(rq, sizeof rq, "ingress.requests%s", sfx);
		snprintf(rm, sizeof rm, "ingress.requests.metric%s", sfx);
		snprintf(rs, sizeof rs, "ingress.requests.spans%s", sfx);
		const EvValue *vq = present(e, q);
		if (vq == NULL || vq->source != EV_SRC_METRIC || present(e, rm) == NULL)
			continue;
		if (present(e, rq))
			ev_copy_value(e, rs, rq, "");
		ev_copy_value(e, rq, rm, "the endpoint's percentiles come from this metric, so do its "
		                      "requests (the traces' count is ingress.requests.spans): ");
	}
}

/* ---- exemplars ------------------------------------------------------------ */

typedef struct ExList {
	EvExemplar *x;
	int n, cap, max;
	Store *st;
} ExList;

static int on_exemplar(void *ctx, const StoreExemplarRow *r)
{
	ExList *l = ctx;
	if (l->max > 0 && l->n >= l->max)
		return 1;
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 32;
		l->x = xrealloc(l->x, (size_t)l->cap * sizeof *l->x);
	}
	EvExemplar *x = &l->x[l->n++];
	memset(x, 0, sizeof *x);
	x->metric = xstrdup(r->family ? r->family : "");
	x->labels_json = xstrdup(r->labels_json ? r->labels_json : "{}");
	x->has_le = r->ex.has_le;
	x->le = r->ex.le;
	x->value = r->ex.value;
	x->unit = xstrdup("");
	x->trace_id = xstrdup(r->ex.trace_id ? r->ex.trace_id : "");
	x->span_id = xstrdup(r->ex.span_id ? r->ex.span_id : "");
	x->ts_ns = r->ex.has_ts ? r->ex.ts_ns : r->point_ts_ns;
	return 0;
}

static int on_family_unit(void *ctx, const StoreMetricFamilyRow *r)
{
	ExList *l = ctx;
	for (int i = 0; i < l->n; i++)
		if (strcmp(l->x[i].metric, r->name) == 0 && l->x[i].unit[0] == '\0' && r->unit &&
		    r->unit[0]) {
			free(l->x[i].unit);
			l->x[i].unit = xstrdup(r->unit);
		}
	return 0;
}

int evidence_exemplars_load(Store *st, int64_t from, int64_t to, int max, EvExemplar **out,
                            int *n, Err *err)
{
	*out = NULL;
	*n = 0;
	ExList l = {.max = max, .st = st};
	int rc = store_metric_exemplars_scan(st, NULL, from, to, on_exemplar, &l, err);
	if (rc == 0 && l.n > 0)
		rc = store_metric_families_scan(st, on_family_unit, &l, err);
	if (rc) {
		evidence_exemplars_free(l.x, l.n);
		return rc;
	}
	*out = l.x;
	*n = l.n;
	return 0;
}

void evidence_exemplars_free(EvExemplar *x, int n)
{
	for (int i = 0; i < n; i++) {
		free(x[i].metric);
		free(x[i].labels_json);
		free(x[i].unit);
		free(x[i].trace_id);
		free(x[i].span_id);
	}
	free(x);
}
