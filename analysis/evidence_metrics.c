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

/* Copies the value of key from a canonical label object; 0 when absent. */
static int label_get(const char *json, const char *key, char *out, size_t sz)
{
	if (json == NULL)
		return 0;
	char pat[160];
	snprintf(pat, sizeof pat, "\"%s\":\"", key);
	const char *p = strstr(json, pat);
	if (p == NULL)
		return 0;
	p += strlen(pat);
	size_t j = 0;
	for (; *p && *p != '"' && j + 1 < sz; p++) {
		if (*p == '\\' && p[1])
			p++;
		out[j++] = *p;
	}
	out[j] = '\0';
	return 1;
}

static const char *const HOST_KEYS[] = {"host.name", "host_name", "host", "instance", NULL};

static void series_host(const StoreMetricRow *r, char *out, size_t sz)
{
	for (int i = 0; HOST_KEYS[i]; i++)
		if (label_get(r->labels_json, HOST_KEYS[i], out, sz))
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

typedef struct HSeries {
	int64_t id;
	int nb;
	double *le;
	double *prev;              /* last point before the range, or NULL */
	double *first, *last;      /* first and last point in the range */
	double *sum;               /* delta temporality: sum in the range */
	int64_t in_range;
} HSeries;

typedef struct HScan {
	HSeries *s;
	int n, cap;
	int64_t from;
	char family[160], unit[32], scheme[32], temporality[32];
	int64_t points;
} HScan;

static double *dup_counts(const StoreMetricRow *r)
{
	double *c = xmalloc((size_t)r->n_buckets * sizeof *c);
	for (int i = 0; i < r->n_buckets; i++)
		c[i] = r->buckets[i].count;
	return c;
}

static int on_hist(void *ctx, const StoreMetricRow *r)
{
	HScan *h = ctx;
	if (r->n_buckets <= 0 || (r->flags & STORE_POINT_NO_VALUE))
		return 0;
	if (h->n == 0 || h->s[h->n - 1].id != r->series_id) {
		if (h->n == h->cap) {
			h->cap = h->cap ? h->cap * 2 : 32;
			h->s = xrealloc(h->s, (size_t)h->cap * sizeof *h->s);
		}
		HSeries *s = &h->s[h->n++];
		memset(s, 0, sizeof *s);
		s->id = r->series_id;
		s->nb = r->n_buckets;
		s->le = xmalloc((size_t)s->nb * sizeof *s->le);
		for (int i = 0; i < s->nb; i++)
			s->le[i] = r->buckets[i].le;
		snprintf(h->family, sizeof h->family, "%s", r->family);
		snprintf(h->unit, sizeof h->unit, "%s", r->unit ? r->unit : "");
		snprintf(h->scheme, sizeof h->scheme, "%s", r->scheme && *r->scheme ? r->scheme : "explicit");
		snprintf(h->temporality, sizeof h->temporality, "%s", r->temporality ? r->temporality : "");
	}
	HSeries *s = &h->s[h->n - 1];
	if (r->n_buckets != s->nb)
		return 0; /* the bucket layout changed mid-series: skip the point */
	if (r->ts_ns < h->from) {
		free(s->prev);
		s->prev = dup_counts(r);
		return 0;
	}
	h->points++;
	s->in_range++;
	if (s->first == NULL)
		s->first = dup_counts(r);
	free(s->last);
	s->last = dup_counts(r);
	if (s->sum == NULL)
		s->sum = xcalloc((size_t)s->nb, sizeof *s->sum);
	for (int i = 0; i < s->nb; i++)
		s->sum[i] += r->buckets[i].count;
	return 0;
}

static void hscan_fini(HScan *h)
{
	for (int i = 0; i < h->n; i++) {
		free(h->s[i].le);
		free(h->s[i].prev);
		free(h->s[i].first);
		free(h->s[i].last);
		free(h->s[i].sum);
	}
	free(h->s);
	memset(h, 0, sizeof *h);
}

static int hist_scan(Store *st, const char *family, const char *k1, const char *v1, int64_t from,
                     int64_t to, HScan *h, Err *err)
{
	memset(h, 0, sizeof *h);
	for (int spelling = 0; spelling < 2 && h->points == 0; spelling++) {
		char fam[160], a[128], filt[512];
		if (spelling == 0) {
			snprintf(fam, sizeof fam, "%s", family);
			snprintf(a, sizeof a, "%s", k1 ? k1 : "");
		} else {
			underscore(family, fam, sizeof fam);
			underscore(k1 ? k1 : "", a, sizeof a);
			if (strcmp(fam, family) == 0 && (!k1 || strcmp(a, k1) == 0))
				break;
			hscan_fini(h);
		}
		filter_json(filt, sizeof filt, k1 ? a : NULL, v1, NULL, NULL);
		h->from = from;
		StoreMetricQuery q = {.family = fam, .labels_json = filt, .from_ns = INT64_MIN,
		                      .to_ns = to, .flags = STORE_METRIC_BUCKETS};
		int rc = store_metric_points_scan(st, &q, on_hist, h, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* Milliseconds per unit of the histogram's values. */
static double unit_to_ms(const char *unit, const char *family, const char **assumed)
{
	*assumed = NULL;
	if (strcmp(unit, "s") == 0 || strcmp(unit, "seconds") == 0)
		return 1000;
	if (strcmp(unit, "ms") == 0 || strcmp(unit, "milliseconds") == 0)
		return 1;
	if (strcmp(unit, "us") == 0 || strcmp(unit, "microseconds") == 0)
		return 0.001;
	if (strcmp(unit, "ns") == 0)
		return 1e-6;
	size_t n = strlen(family);
	if (n > 8 && strcmp(family + n - 8, "_seconds") == 0)
		return 1000;
	if (n > 13 && strcmp(family + n - 13, "_milliseconds") == 0)
		return 1;
	*assumed = "no unit given: seconds assumed (OpenTelemetry convention)";
	return 1000;
}

/* Merged increase over the range; returns the number of series merged
 * and fills le/cum (n_out buckets), or 0. */
static int hist_merge(const HScan *h, double **le, double **cum, int *n_out, int *single_point)
{
	*le = *cum = NULL;
	*n_out = 0;
	*single_point = 0;
	int merged = 0;
	int delta = strcmp(h->temporality, "delta") == 0;
	for (int i = 0; i < h->n; i++) {
		const HSeries *s = &h->s[i];
		if (s->in_range == 0)
			continue;
		if (merged == 0) {
			*n_out = s->nb;
			*le = xmalloc((size_t)s->nb * sizeof **le);
			memcpy(*le, s->le, (size_t)s->nb * sizeof **le);
			*cum = xcalloc((size_t)s->nb, sizeof **cum);
		} else if (s->nb != *n_out || memcmp(s->le, *le, (size_t)s->nb * sizeof **le) != 0) {
			continue; /* other bucket bounds: not mergeable */
		}
		for (int b = 0; b < s->nb; b++) {
			double v;
			if (delta)
				v = s->sum[b];
			else if (s->prev)
				v = s->last[b] - s->prev[b];
			else if (s->in_range >= 2)
				v = s->last[b] - s->first[b];
			else {
				v = s->last[b]; /* one snapshot: counts since the process started */
				*single_point = 1;
			}
			if (v < 0)
				v = s->last[b]; /* counter reset */
			(*cum)[b] += v;
		}
		merged++;
	}
	return merged;
}

static void bounds_text(const double *le, int n, double to_ms, char *out, size_t sz)
{
	size_t j = 0;
	out[0] = '\0';
	for (int i = 0; i < n && j + 24 < sz; i++) {
		if (isinf(le[i]))
			j += (size_t)snprintf(out + j, sz - j, "%s+Inf", i ? " " : "");
		else
			j += (size_t)snprintf(out + j, sz - j, "%s%g", i ? " " : "", le[i] * to_ms);
		if (i == 12 && n > 15) {
			j += (size_t)snprintf(out + j, sz - j, " ...");
			i = n - 3;
		}
	}
}

/* p99 of a wait histogram into name. Returns 1 when a value was put. */
static int put_hist_p99(Store *st, Evidence *e, const char *name, const char *family,
                        const char *k, const char *v, int64_t from, int64_t to, Err *err, int *rc)
{
	HScan h;
	*rc = hist_scan(st, family, k, v, from, to, &h, err);
	if (*rc) {
		hscan_fini(&h);
		return 0;
	}
	double *le, *cum;
	int nb, single;
	int merged = hist_merge(&h, &le, &cum, &nb, &single);
	int put = 0;
	if (merged > 0) {
		const char *assumed;
		double f = unit_to_ms(h.unit, h.family, &assumed);
		double q = ev_histogram_quantile(le, cum, nb, 0.99);
		char bounds[256];
		bounds_text(le, nb, f, bounds, sizeof bounds);
		double total = cum[nb - 1];
		char filt[200] = "";
		if (k && v)
			snprintf(filt, sizeof filt, "{%s=%s}", k, v);
		ev_put(e, name, q * f, "ms", EV_SRC_METRIC, EV_Q_HISTOGRAM, (int64_t)total,
		       total < 100,
		       "metric %s%s: p99 interpolated from %s buckets [%s] ms over %d series, %.0f "
		       "observations%s%s%s", h.family, filt, h.scheme, bounds, merged, total,
		       single ? "; one snapshot: counts since process start" : "",
		       assumed ? "; " : "", assumed ? assumed : "");
		put = !isnan(q);
	}
	free(le);
	free(cum);
	hscan_fini(&h);
	return put;
}

/* ---- pools ------------------------------------------------------------------ */

static int is_executor(const ModelPool *p)
{
	return p->kind && strcmp(p->kind, "executor") == 0;
}

static int pool_evidence(Store *st, Evidence *e, const ModelPool *p, int pop, int64_t from,
                         int64_t to, Err *err)
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
	evidence_name(name, sizeof name, "pool", p->name, "wait.p99_ms", pop);
	int put = put_hist_p99(st, e, name, wait_m, lk, lv, from, to, err, &rc);
	if (rc)
		return rc;
	if (put && ex) {
		/* the endpoint queue age: keep an exact value from spans when it
		 * has enough observations, else take the histogram's */
		snprintf(name, sizeof name, "endpoint.queue_age.p99_ms%s", sfx);
		const EvValue *cur = evidence_get(e, name);
		if (cur == NULL || cur->missing || cur->small_sample) {
			char pn[256];
			evidence_name(pn, sizeof pn, "pool", p->name, "wait.p99_ms", pop);
			const EvValue *w = evidence_get(e, pn);
			if (w && !w->missing)
				ev_put(e, name, w->value, "ms", EV_SRC_METRIC, EV_Q_HISTOGRAM, w->n,
				       w->small_sample, "%s", w->provenance);
		}
	}
	return 0;
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

/* Requests per second at the server from the OpenTelemetry request-duration
 * histogram's count (every request, not only the sampled traces); replaces
 * the span figure, which counts sampled traces. Needs a closed range. */
static int request_rate(Store *st, Evidence *e, int pop, int64_t from, int64_t to, Err *err)
{
	if (from == INT64_MIN || to == INT64_MAX || to <= from)
		return 0;
	HScan h;
	int rc = hist_scan(st, "http.server.request.duration", NULL, NULL, from, to, &h, err);
	if (rc == 0) {
		double *le, *cum;
		int nb, single;
		int merged = hist_merge(&h, &le, &cum, &nb, &single);
		if (merged > 0 && !single && cum[nb - 1] > 0) {
			char name[64];
			snprintf(name, sizeof name, "ingress.rate_rps%s", pop ? "@baseline" : "");
			double secs = (double)(to - from) / 1e9;
			ev_put(e, name, cum[nb - 1] / secs, "1/s", EV_SRC_METRIC, EV_Q_NONE,
			       (int64_t)cum[nb - 1], 0,
			       "metric %s: count increase over %d series / %.0f s (%s)", h.family, merged,
			       secs, pop ? "baseline" : "window");
		}
		free(le);
		free(cum);
	}
	hscan_fini(&h);
	return rc;
}

int ev_metrics(Store *st, const EvidenceOptions *opt, Evidence *e, Err *err)
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
			if (m->pools[i].name && (rc = pool_evidence(st, e, &m->pools[i], p, from, to, err)))
				return rc;
		if ((rc = cpu_evidence(st, e, p, from, to, err)) ||
		    (rc = named_gauge(st, e, "late_work.ratio", p, from, to, err)) ||
		    (rc = named_gauge(st, e, "omission.ratio", p, from, to, err)) ||
		    (rc = request_rate(st, e, p, from, to, err)))
			return rc;
	}
	return 0;
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
