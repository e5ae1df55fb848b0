/*
 * evidence_hist.c - histogram series: their increase over a range, merged
 * on shared bounds, and quantiles with intervals (evidence_hist.h).
 *
 * A stored histogram point is a list of cumulative counts at ascending
 * upper bounds (the importers turn OTLP explicit and exponential buckets
 * and Prometheus _bucket samples into that form). Two points can be
 * subtracted or added only at bounds both were recorded against. A point
 * knows its cumulative count exactly at each of its own bounds, at +Inf
 * (its total), and, for an exponential histogram (which lists only its
 * populated range), at any bound above its highest one (nothing lies
 * there: the total). Anywhere else the count is unknown, so such a bound
 * is dropped from the grid rather than guessed: merging an explicit
 * histogram with the same bounds loses nothing; an exponential one whose
 * scale fell keeps the coarser bounds.
 */
#include "evidence_hist.h"
#include "evidence_priv.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "quantile.h"

/* ---- quantiles ------------------------------------------------------------ */

/* Index of the bucket holding the 1-based rank r (cum[b] >= r), or n. */
static int bucket_of_rank(const double *cum, int n, double r)
{
	for (int b = 0; b < n; b++)
		if (cum[b] >= r)
			return b;
	return n;
}

/* Lower edge of bucket b: the previous bound; for the first, 0 when its
 * bound is positive (durations), else unbounded. */
static double lower_edge(const double *le, int b)
{
	if (b > 0)
		return le[b - 1];
	return le[0] >= 0 ? 0 : -INFINITY;
}

void ev_histogram_ci(const double *le, const double *cum, int n, double q, double *lo,
                     double *hi)
{
	*lo = *hi = NAN;
	if (n <= 0 || !(cum[n - 1] > 0))
		return;
	int64_t total = (int64_t)llround(cum[n - 1]);
	int64_t l, u;
	quant_ci_ranks(total, 100 * q, &l, &u);
	if (l < 1) {
		*lo = -INFINITY;
	} else {
		int b = bucket_of_rank(cum, n, (double)l - 0.5);
		*lo = b < n ? lower_edge(le, b) : le[n - 1];
	}
	if (u > total) {
		*hi = INFINITY;
	} else {
		int b = bucket_of_rank(cum, n, (double)u - 0.5);
		*hi = b < n ? le[b] : INFINITY;
	}
}

void ev_hist_quantile(const EvHist *h, double q, double *v, double *lo, double *hi)
{
	*v = *lo = *hi = NAN;
	if (h->nb <= 0)
		return;
	*v = ev_histogram_quantile(h->le, h->cum, h->nb, q);
	ev_histogram_ci(h->le, h->cum, h->nb, q, lo, hi);
}

double ev_hist_total(const EvHist *h)
{
	return h->nb > 0 ? h->cum[h->nb - 1] : 0;
}

void ev_hist_fini(EvHist *h)
{
	free(h->le);
	free(h->cum);
	h->le = h->cum = NULL;
	h->nb = 0;
}

/* ---- points on a grid ------------------------------------------------------- */

typedef struct HPt {
	int nb;
	double *le, *cum;         /* as stored; cum[nb - 1] is the total */
	int open_top;             /* no +Inf bound: nothing lies above le[nb-1] */
} HPt;

static void hpt_free(HPt *p)
{
	if (p) {
		free(p->le);
		free(p->cum);
		free(p);
	}
}

static HPt *hpt_of(const StoreMetricRow *r)
{
	HPt *p = xcalloc(1, sizeof *p);
	p->nb = r->n_buckets;
	p->le = xmalloc((size_t)p->nb * sizeof *p->le);
	p->cum = xmalloc((size_t)p->nb * sizeof *p->cum);
	for (int i = 0; i < p->nb; i++) {
		p->le[i] = r->buckets[i].le;
		p->cum[i] = r->buckets[i].count;
	}
	p->open_top = !isinf(p->le[p->nb - 1]);
	return p;
}

/* The cumulative count of p at bound x; 0 when not known exactly. */
static int cum_at(const HPt *p, double x, double *out)
{
	if (isinf(x) && x > 0) {
		*out = p->cum[p->nb - 1];
		return 1;
	}
	/* binary search for x among the bounds */
	int a = 0, b = p->nb - 1;
	while (a <= b) {
		int m = (a + b) / 2;
		if (p->le[m] == x) {
			*out = p->cum[m];
			return 1;
		}
		if (p->le[m] < x)
			a = m + 1;
		else
			b = m - 1;
	}
	/* above its highest finite bound, with nothing in the +Inf bucket:
	 * nothing lies there, so the count is the total (an exponential
	 * histogram lists only the buckets up to its largest value) */
	int top = p->open_top ? p->nb - 1 : p->nb - 2;
	if (top >= 0 && x > p->le[top] && p->cum[top] == p->cum[p->nb - 1]) {
		*out = p->cum[p->nb - 1];
		return 1;
	}
	return 0;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

/* The bounds every point of pts knows (sorted, +Inf last). Returns the
 * count; *grid is malloc'd. */
static int common_grid(HPt *const *pts, int n, double **grid)
{
	int cap = 1;
	for (int i = 0; i < n; i++)
		cap += pts[i]->nb;
	double *g = xmalloc((size_t)cap * sizeof *g);
	int k = 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < pts[i]->nb; j++)
			g[k++] = pts[i]->le[j];
	g[k++] = INFINITY;
	qsort(g, (size_t)k, sizeof *g, cmp_double);
	int m = 0;
	for (int j = 0; j < k; j++) {
		if (m > 0 && g[m - 1] == g[j])
			continue;
		int known = 1;
		double dummy;
		for (int i = 0; i < n && known; i++)
			known = cum_at(pts[i], g[j], &dummy);
		if (known)
			g[m++] = g[j];
	}
	*grid = g;
	return m;
}

/* ---- series ------------------------------------------------------------------ */

typedef struct RangeState {
	HPt *prev;                /* last point before the range */
	HPt *first, *last;        /* first and last point in it */
	int n_in;                 /* points in it */
	HPt **delta;              /* delta temporality: every point in it */
	int n_delta;
} RangeState;

typedef struct Series {
	int64_t id;
	int target;
	int delta;
	RangeState *rs;           /* [n_ranges] */
} Series;

typedef struct Collect {
	EvSeriesFn fn;
	void *ctx;
	const TimeRange *ranges;
	int n_ranges;
	Series *s;
	int n, cap;
	char family[160], unit[32], scheme[16];
} Collect;

static int on_point(void *vctx, const StoreMetricRow *r)
{
	Collect *c = vctx;
	if (r->n_buckets <= 0 || (r->flags & STORE_POINT_NO_VALUE))
		return 0;
	if (c->n == 0 || c->s[c->n - 1].id != r->series_id) {
		if (c->n == c->cap) {
			c->cap = c->cap ? 2 * c->cap : 16;
			c->s = xrealloc(c->s, (size_t)c->cap * sizeof *c->s);
		}
		Series *s = &c->s[c->n++];
		memset(s, 0, sizeof *s);
		s->id = r->series_id;
		s->target = c->fn ? c->fn(c->ctx, r) : 0;
		s->delta = r->temporality && strcmp(r->temporality, "delta") == 0;
		s->rs = xcalloc((size_t)c->n_ranges, sizeof *s->rs);
		if (s->target >= 0 && !c->family[0]) {
			snprintf(c->family, sizeof c->family, "%s", r->family);
			snprintf(c->unit, sizeof c->unit, "%s", r->unit ? r->unit : "");
			snprintf(c->scheme, sizeof c->scheme, "%s",
			         r->scheme && *r->scheme ? r->scheme : "explicit");
		}
	}
	Series *s = &c->s[c->n - 1];
	if (s->target < 0)
		return 0;
	for (int k = 0; k < c->n_ranges; k++) {
		RangeState *st = &s->rs[k];
		TimeRange rg = c->ranges[k];
		if (r->ts_ns < rg.from) {
			hpt_free(st->prev);
			st->prev = hpt_of(r);
		} else if (r->ts_ns < rg.to) {
			st->n_in++;
			if (s->delta) {
				st->delta = xrealloc(st->delta, (size_t)(st->n_delta + 1) * sizeof *st->delta);
				st->delta[st->n_delta++] = hpt_of(r);
			} else {
				if (st->first == NULL)
					st->first = hpt_of(r);
				hpt_free(st->last);
				st->last = hpt_of(r);
			}
		}
	}
	return 0;
}

static void series_free(Series *s, int n_ranges)
{
	for (int k = 0; k < n_ranges; k++) {
		RangeState *st = &s->rs[k];
		hpt_free(st->prev);
		hpt_free(st->first);
		hpt_free(st->last);
		for (int i = 0; i < st->n_delta; i++)
			hpt_free(st->delta[i]);
		free(st->delta);
	}
	free(s->rs);
}

/* The series' increase over range state st as a point of its own (NULL
 * when it has nothing in the range); *single set for a lone snapshot. */
static HPt *series_increase(const RangeState *st, int *single)
{
	HPt *two[2];
	HPt **pts = st->n_delta > 0 ? st->delta : two;
	int n = 0;
	const HPt *minus = NULL;
	if (st->n_delta > 0) {
		n = st->n_delta;
	} else if (st->last) {
		pts[n++] = st->last;
		minus = st->prev ? st->prev : st->n_in >= 2 ? st->first : NULL;
		if (minus)
			pts[n++] = (HPt *)minus;
		else
			*single = 1;
	} else {
		return NULL;
	}
	double *grid;
	int ng = common_grid(pts, n, &grid);
	HPt *out = xcalloc(1, sizeof *out);
	out->nb = ng;
	out->le = grid;
	out->cum = xcalloc((size_t)(ng ? ng : 1), sizeof *out->cum);
	int reset = 0;
	if (st->n_delta > 0) {
		for (int j = 0; j < ng; j++)
			for (int i = 0; i < n; i++) {
				double v;
				cum_at(pts[i], grid[j], &v);
				out->cum[j] += v;
			}
	} else {
		for (int j = 0; j < ng && minus; j++) {
			double a, b;
			cum_at(st->last, grid[j], &a);
			cum_at(minus, grid[j], &b);
			if (a - b < 0)
				reset = 1;
		}
		for (int j = 0; j < ng; j++) {
			double a, b = 0;
			cum_at(st->last, grid[j], &a);
			if (minus && !reset)
				cum_at(minus, grid[j], &b);
			out->cum[j] = a - b;
		}
	}
	out->open_top = 0;
	return out;
}

/* Merges the points on their common grid into h. */
static void merge_into(EvHist *h, HPt **pts, int n)
{
	double *grid;
	int ng = common_grid(pts, n, &grid);
	h->le = grid;
	h->nb = ng;
	h->cum = xcalloc((size_t)(ng ? ng : 1), sizeof *h->cum);
	for (int j = 0; j < ng; j++)
		for (int i = 0; i < n; i++) {
			double v;
			cum_at(pts[i], grid[j], &v);
			h->cum[j] += v;
		}
}

int ev_hist_collect(Store *st, const char *family, const char *labels_json, EvSeriesFn fn,
                    void *ctx, int n_targets, const TimeRange *ranges, int n_ranges, EvHist *out,
                    Err *err)
{
	int64_t to = INT64_MIN;
	for (int k = 0; k < n_ranges; k++)
		if (ranges[k].to > to)
			to = ranges[k].to;
	Collect c = {.fn = fn, .ctx = ctx, .ranges = ranges, .n_ranges = n_ranges};
	StoreMetricQuery q = {.family = family, .labels_json = labels_json, .from_ns = INT64_MIN,
	                      .to_ns = to, .flags = STORE_METRIC_BUCKETS};
	int rc = store_metric_points_scan(st, &q, on_point, &c, err);
	for (int t = 0; rc == 0 && t < n_targets; t++)
		for (int k = 0; k < n_ranges; k++) {
			EvHist *h = &out[t * n_ranges + k];
			HPt **inc = xcalloc((size_t)(c.n ? c.n : 1), sizeof *inc);
			int ni = 0;
			for (int i = 0; i < c.n; i++) {
				if (c.s[i].target != t)
					continue;
				int single = 0;
				HPt *p = series_increase(&c.s[i].rs[k], &single);
				if (p == NULL)
					continue;
				if (p->nb < 1 || !(p->cum[p->nb - 1] > 0)) {
					hpt_free(p);
					continue; /* nothing observed in the range */
				}
				h->single |= single;
				inc[ni++] = p;
			}
			if (ni > 0) {
				merge_into(h, inc, ni);
				h->series = ni;
				/* a series with no bound in common with the others is
				 * only in the +Inf bucket; say how many were like that */
				if (h->nb <= 1 && ni > 1)
					h->unmerged = ni;
				snprintf(h->family, sizeof h->family, "%s", c.family);
				snprintf(h->unit, sizeof h->unit, "%s", c.unit);
				snprintf(h->scheme, sizeof h->scheme, "%s", c.scheme);
			}
			for (int i = 0; i < ni; i++)
				hpt_free(inc[i]);
			free(inc);
		}
	for (int i = 0; i < c.n; i++)
		series_free(&c.s[i], n_ranges);
	free(c.s);
	return rc;
}

/* ---- units and text ------------------------------------------------------------ */

double ev_hist_unit_ms(const char *unit, const char *family, double dflt_ms, const char **assumed)
{
	*assumed = NULL;
	if (strcmp(unit, "s") == 0 || strcmp(unit, "seconds") == 0)
		return 1000;
	if (strcmp(unit, "ms") == 0 || strcmp(unit, "milliseconds") == 0)
		return 1;
	if (strcmp(unit, "us") == 0 || strcmp(unit, "microseconds") == 0)
		return 0.001;
	if (strcmp(unit, "ns") == 0 || strcmp(unit, "nanoseconds") == 0)
		return 1e-6;
	size_t n = strlen(family);
	if (n > 8 && strcmp(family + n - 8, "_seconds") == 0)
		return 1000;
	if (n > 13 && strcmp(family + n - 13, "_milliseconds") == 0)
		return 1;
	if (n > 13 && strcmp(family + n - 13, "_microseconds") == 0)
		return 0.001;
	*assumed = dflt_ms == 1 ? "no unit given: milliseconds assumed (the name's convention)"
	                        : "no unit given: seconds assumed (OpenTelemetry convention)";
	return dflt_ms;
}

void ev_hist_bounds_text(const EvHist *h, double to_ms, char *out, size_t sz)
{
	size_t j = 0;
	out[0] = '\0';
	for (int i = 0; i < h->nb && j + 24 < sz; i++) {
		if (isinf(h->le[i]))
			j += (size_t)snprintf(out + j, sz - j, "%s+Inf", i ? " " : "");
		else
			j += (size_t)snprintf(out + j, sz - j, "%s%g", i ? " " : "", h->le[i] * to_ms);
		if (i == 12 && h->nb > 15) {
			j += (size_t)snprintf(out + j, sz - j, " ...");
			i = h->nb - 3;
		}
	}
}

static void fmt_ms(double v, char *out, size_t sz)
{
	if (isinf(v))
		snprintf(out, sz, "%s", v > 0 ? "+Inf" : "-Inf");
	else
		snprintf(out, sz, "%.4g", v);
}

EvValue *ev_put_hist_quantile(Evidence *e, const char *name, const EvHist *h, double p,
                              double to_ms, const char *what, const char *assumed, int pop)
{
	double total = ev_hist_total(h);
	if (!(total > 0))
		return NULL;
	double v, lo, hi;
	ev_hist_quantile(h, p / 100, &v, &lo, &hi);
	if (isnan(v))
		return NULL;
	int64_t n = (int64_t)llround(total);
	char bounds[256], a[32], b[32];
	ev_hist_bounds_text(h, to_ms, bounds, sizeof bounds);
	fmt_ms(lo * to_ms, a, sizeof a);
	fmt_ms(hi * to_ms, b, sizeof b);
	int small = p >= 99 ? quant_small_sample(n) : n < 30;
	EvValue *ev = ev_put(e, name, v * to_ms, "ms", EV_SRC_METRIC, EV_Q_HISTOGRAM, n, small,
	                     "metric %s %s: p%g of %lld, interpolated in %s buckets [%s] ms; the "
	                     "ranks' buckets bound it to [%s, %s] ms; %d series (%s)%s%s%s%s",
	                     h->family, what, p, (long long)n, h->scheme, bounds, a, b, h->series,
	                     pop ? "baseline" : "window",
	                     h->single ? "; one snapshot: counts since the process started" : "",
	                     h->unmerged ? "; series with no bound in common" : "",
	                     assumed ? "; " : "", assumed ? assumed : "");
	ev_ci(ev, lo * to_ms, hi * to_ms);
	return ev;
}

/* ---- names ------------------------------------------------------------------- */

void ev_metric_norm(const char *in, char *out, size_t sz)
{
	size_t j = 0;
	for (const char *p = in; *p && j + 1 < sz; p++)
		out[j++] = *p == '_' ? '.' : (char)tolower((unsigned char)*p);
	out[j] = '\0';
	static const char *const UNITS[] = {".seconds", ".milliseconds", ".microseconds", ".total",
	                                    NULL};
	for (int i = 0; UNITS[i]; i++) {
		size_t l = strlen(UNITS[i]);
		if (j > l && strcmp(out + j - l, UNITS[i]) == 0) {
			out[j - l] = '\0';
			break;
		}
	}
}

/* ---- labels ------------------------------------------------------------------- */

static int label_exact(const char *json, const char *key, char *out, size_t sz)
{
	if (json == NULL || sz == 0)
		return 0;
	char pat[200];
	snprintf(pat, sizeof pat, "\"%s\":\"", key);
	/* a key starts the object or follows a comma (a value's own quotes
	 * are escaped, so "k":" inside a value is never preceded by either) */
	const char *p = json;
	while ((p = strstr(p, pat)) != NULL && p != json && p[-1] != '{' && p[-1] != ',')
		p++;
	if (p == NULL)
		return 0;
	p += strlen(pat);
	size_t j = 0;
	for (; *p && *p != '"'; p++) {
		char c = *p;
		if (c == '\\' && p[1]) {
			p++;
			c = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p == 'u' ? '?' : *p;
			if (*p == 'u')
				for (int k = 0; k < 4 && p[1]; k++)
					p++;
		}
		if (j + 1 < sz)
			out[j++] = c;
	}
	out[j] = '\0';
	return 1;
}

int ev_label(const char *labels_json, const char *key, char *out, size_t sz)
{
	if (label_exact(labels_json, key, out, sz))
		return 1;
	char u[160];
	snprintf(u, sizeof u, "%s", key);
	int changed = 0;
	for (char *p = u; *p; p++)
		if (*p == '.') {
			*p = '_';
			changed = 1;
		}
	return changed && label_exact(labels_json, u, out, sz);
}
