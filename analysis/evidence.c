/*
 * evidence.c - the evidence container, the values that come straight from
 * an Analysis (ingress, per-dependency splits, critical-path shares, class
 * mix), model values, and derived values.
 *
 * Invariants: a name appears once; a missing value has missing == 1 and
 * value NAN (it is never 0); a later evidence_supply() of the same name
 * replaces the earlier value (a sheet overrides what was computed);
 * derived values are recomputed by evidence_finish() from whatever is
 * present, so they follow the overrides.
 */
#include "evidence.h"
#include "evidence_priv.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

/* ---- container ------------------------------------------------------------ */

Evidence *evidence_new(void)
{
	return xcalloc(1, sizeof(Evidence));
}

static void strv_free(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void evidence_free(Evidence *e)
{
	if (e == NULL)
		return;
	for (int i = 0; i < e->n; i++) {
		free(e->v[i].name);
		free(e->v[i].unit);
		free(e->v[i].provenance);
	}
	free(e->v);
	for (int i = 0; i < e->n_facts; i++) {
		free(e->facts[i].name);
		free(e->facts[i].value);
	}
	free(e->facts);
	strv_free(e->deps, e->n_deps);
	strv_free(e->classes, e->n_classes);
	strv_free(e->hosts, e->n_hosts);
	strv_free(e->callers, e->n_callers);
	free(e->root_service);
	free(e);
}

static EvValue *find(const Evidence *e, const char *name)
{
	for (int i = 0; i < e->n; i++)
		if (strcmp(e->v[i].name, name) == 0)
			return &e->v[i];
	return NULL;
}

const EvValue *evidence_get(const Evidence *e, const char *name)
{
	return e && name ? find(e, name) : NULL;
}

int evidence_value(const Evidence *e, const char *name, double *out)
{
	const EvValue *v = evidence_get(e, name);
	if (v == NULL || v->missing || isnan(v->value))
		return 0;
	*out = v->value;
	return 1;
}

const char *evidence_fact(const Evidence *e, const char *name)
{
	for (int i = 0; e && i < e->n_facts; i++)
		if (strcmp(e->facts[i].name, name) == 0)
			return e->facts[i].value;
	return NULL;
}

const char *evidence_source_name(int source)
{
	switch (source) {
	case EV_SRC_SPANS: return "spans";
	case EV_SRC_METRIC: return "metric";
	case EV_SRC_SHEET: return "sheet";
	case EV_SRC_MODEL: return "model";
	case EV_SRC_DERIVED: return "derived";
	case EV_SRC_OPTION: return "option";
	default: return "missing";
	}
}

void evidence_segment(const char *s, char *out, unsigned sz)
{
	unsigned j = 0;
	for (size_t i = 0; s && s[i] && j + 1 < sz; i++) {
		unsigned char c = (unsigned char)s[i];
		c = (unsigned char)tolower(c);
		out[j++] = (char)((isalnum(c) && c < 128) || c == '_' ? c : '_');
	}
	if (sz)
		out[j] = '\0';
}

static EvValue *slot(Evidence *e, const char *name)
{
	EvValue *v = find(e, name);
	if (v) {
		free(v->unit);
		free(v->provenance);
		v->unit = v->provenance = NULL;
		return v;
	}
	if (e->n == e->cap) {
		e->cap = e->cap ? e->cap * 2 : 64;
		e->v = xrealloc(e->v, (size_t)e->cap * sizeof *e->v);
	}
	v = &e->v[e->n++];
	memset(v, 0, sizeof *v);
	v->name = xstrdup(name);
	return v;
}

EvValue *ev_put(Evidence *e, const char *name, double val, const char *unit, int source, int qkind,
                int64_t n, int small, const char *prov, ...)
{
	EvValue *v = slot(e, name);
	char p[1024];
	va_list ap;
	va_start(ap, prov);
	vsnprintf(p, sizeof p, prov, ap);
	va_end(ap);
	v->unit = xstrdup(unit ? unit : "");
	v->provenance = xstrdup(p);
	v->qkind = qkind;
	v->n = n;
	v->small_sample = small;
	v->has_ci = 0;
	v->top_k = 0;
	v->lo = v->hi = NAN;
	if (isnan(val) || isinf(val)) {
		v->value = NAN;
		v->missing = 1;
		v->source = EV_SRC_MISSING;
	} else {
		v->value = val;
		v->missing = 0;
		v->source = source;
	}
	return v;
}

void ev_ci(EvValue *v, double lo, double hi)
{
	if (v == NULL || v->missing || isnan(lo) || isnan(hi))
		return;
	v->lo = lo;
	v->hi = hi;
	v->has_ci = 1;
}

void evidence_wilson(double k, double n, double *lo, double *hi)
{
	if (n <= 0) {
		*lo = *hi = NAN;
		return;
	}
	const double z = 1.959963984540054;
	double p = k / n, z2 = z * z;
	double den = 1 + z2 / n;
	double c = (p + z2 / (2 * n)) / den;
	double h = z * sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / den;
	*lo = c - h < 0 ? 0 : c - h;
	*hi = c + h > 1 ? 1 : c + h;
}

EvValue *ev_put_prop(Evidence *e, const char *name, double k, int64_t n, const char *what, int p)
{
	if (n <= 0) {
		char why[256];
		snprintf(why, sizeof why, "spans: no %s in the %s", what,
		         p == POP_BASELINE ? "baseline" : "window");
		ev_missing(e, name, "ratio", why);
		return NULL;
	}
	double lo, hi;
	evidence_wilson(k, (double)n, &lo, &hi);
	EvValue *v = ev_put(e, name, k / (double)n, "ratio", EV_SRC_SPANS, EV_Q_NONE, n,
	                    n < EV_MIN_RATIO_N, "spans: %.0f of %lld %s (%s)%s", k, (long long)n, what,
	                    p == POP_BASELINE ? "baseline" : "window",
	                    n < EV_MIN_RATIO_N ? "; fewer than 30: noisy" : "");
	ev_ci(v, lo, hi);
	return v;
}

/* ---- comparisons ------------------------------------------------------------ */

static void bounds(const EvValue *v, double *lo, double *hi)
{
	if (v->has_ci) {
		*lo = v->lo < v->value ? v->lo : v->value;
		*hi = v->hi > v->value ? v->hi : v->value;
	} else {
		*lo = *hi = v->value;
	}
}

int evidence_change(const Evidence *e, const char *name, EvChange *c)
{
	char bn[320];
	snprintf(bn, sizeof bn, "%s@baseline", name);
	const EvValue *w = evidence_get(e, name), *b = evidence_get(e, bn);
	if (w == NULL || b == NULL || w->missing || b->missing)
		return 0;
	double wl, wh, bl, bh;
	bounds(w, &wl, &wh);
	bounds(b, &bl, &bh);
	c->w = w->value;
	c->b = b->value;
	c->sampled = w->has_ci || b->has_ci;
	/* MOVER on the difference and the ratio (quantile.h) */
	quant_change(c->w, wl, wh, c->b, bl, bh, &c->d, &c->d_lo, &c->d_hi, &c->r, &c->r_lo,
	             &c->r_hi);
	return 1;
}

/* ---- the three-valued tests, each with the reason it could not tell ------- */

/* "the p99", "the p90" or "the value" for a name. */
static void stat_of(const char *name, char *out, size_t sz)
{
	const char *p = strstr(name, ".p");
	while (p && !(p[2] >= '0' && p[2] <= '9'))
		p = strstr(p + 2, ".p");
	if (p) {
		size_t n = strspn(p + 1, "p0123456789");
		snprintf(out, sz, "the %.*s", (int)n, p + 1);
	} else {
		snprintf(out, sz, "the value");
	}
}

static void fmtv(const EvValue *v, double x, char *out, size_t sz)
{
	evidence_format(x, v->unit, out, (unsigned)sz);
}

/* A side of v's interval that is unbounded: "the baseline's 250 calls
 * give the p99 no upper bound" (ev_count_text(): "250 sampled calls" when
 * the traces are a sample, "7,147 calls of the metric"). Returns 1 when it
 * wrote one. */
static int why_unbounded(const Evidence *e, const EvValue *v, int upper, char *why, size_t sz)
{
	if (!v->has_ci || !(upper ? isinf(v->hi) : isinf(v->lo)))
		return 0;
	char st[32], cnt[96];
	stat_of(v->name, st, sizeof st);
	ev_count_text(e, v, cnt, sizeof cnt);
	if (why)
		snprintf(why, sz, "the %s's %s give %s no %s bound",
		         strstr(v->name, "@baseline") ? "baseline" : "window", cnt, st,
		         upper ? "upper" : "lower");
	return 1;
}

/* The reason a missing value gives: "<name> is missing (<provenance>)". */
static void why_missing(const Evidence *e, const char *name, char *why, size_t sz)
{
	if (why == NULL)
		return;
	const EvValue *v = evidence_get(e, name);
	if (v == NULL)
		snprintf(why, sz, "%s is not known", name);
	else
		snprintf(why, sz, "%s is missing: %s", name, evidence_provenance_text(v));
}

const char *evidence_provenance_text(const EvValue *v)
{
	static const char *const tags[] = {"spans: ", "derived: ", "metric: ", "model: ", NULL};
	for (int i = 0; tags[i]; i++)
		if (strncmp(v->provenance, tags[i], strlen(tags[i])) == 0)
			return v->provenance + strlen(tags[i]);
	return v->provenance;
}

/* For a comparison: 0 and a reason when name or name@baseline is
 * missing. */
static int change_or_why(const Evidence *e, const char *name, EvChange *c, char *why, size_t sz)
{
	if (evidence_change(e, name, c))
		return 1;
	char bn[320];
	snprintf(bn, sizeof bn, "%s@baseline", name);
	const EvValue *w = evidence_get(e, name);
	why_missing(e, w == NULL || w->missing ? name : bn, why, sz);
	return 0;
}

/* Why a difference's interval missed the asked side: an unbounded side of
 * the window or the baseline, else the interval itself. low: the lower
 * bound of w - b is what mattered (a rise), else the upper (a fall, or a
 * rise that must be excluded). */
static void why_change(const Evidence *e, const char *name, const EvChange *c, int low,
                       const char *what, char *why, size_t sz)
{
	if (why == NULL)
		return;
	char bn[320];
	snprintf(bn, sizeof bn, "%s@baseline", name);
	const EvValue *w = evidence_get(e, name), *b = evidence_get(e, bn);
	/* a rise's lower bound needs the window's lower and the baseline's
	 * upper bound; its upper bound the other two */
	if (why_unbounded(e, b, low, why, sz) || why_unbounded(e, w, !low, why, sz))
		return;
	char d[48], lo[48], hi[48];
	fmtv(w, c->d, d, sizeof d);
	fmtv(w, c->d_lo, lo, sizeof lo);
	fmtv(w, c->d_hi, hi, sizeof hi);
	snprintf(why, sz, "%s (the change %s%s, 95 %% interval %s%s to %s%s)", what,
	         c->d >= 0 ? "+" : "", d, c->d_lo >= 0 ? "+" : "", lo, c->d_hi >= 0 ? "+" : "", hi);
}

/* The bar a rise must reach: "10 ms and x2" (a factor of 0 or less is
 * not asked). */
static void bar_text(const EvValue *v, double min_abs, double min_factor, char *out, size_t sz)
{
	char a[48];
	fmtv(v, min_abs, a, sizeof a);
	if (min_factor > 0 && min_abs > 0)
		snprintf(out, sz, "%s and x%.2g", a, min_factor);
	else if (min_factor > 0)
		snprintf(out, sz, "x%.2g", min_factor);
	else
		snprintf(out, sz, "%s", a);
}

static int t_rose(const Evidence *e, const char *name, double min_abs, double min_factor,
                  char *why, size_t sz)
{
	EvChange c;
	if (!change_or_why(e, name, &c, why, sz))
		return -1;
	if (c.d < min_abs || (min_factor > 0 && !(c.r >= min_factor)))
		return 0;
	if (c.d_lo > 0)
		return 1;
	why_change(e, name, &c, 1, "the rise's interval reaches 0", why, sz);
	return -1;
}

static int t_fell(const Evidence *e, const char *name, double min_abs, double min_factor,
                  char *why, size_t sz)
{
	EvChange c;
	if (!change_or_why(e, name, &c, why, sz))
		return -1;
	if (-c.d < min_abs || (min_factor > 0 && !(c.r <= 1 / min_factor)))
		return 0;
	if (c.d_hi < 0)
		return 1;
	why_change(e, name, &c, 0, "the fall's interval reaches 0", why, sz);
	return -1;
}

/* The equivalence test: the interval excludes a rise of the asked size
 * (its upper bound is under min_abs, or its ratio's under min_factor). */
static int t_flat(const Evidence *e, const char *name, double min_abs, double min_factor,
                  char *why, size_t sz)
{
	EvChange c;
	if (!change_or_why(e, name, &c, why, sz))
		return -1;
	if (c.d_hi < min_abs || (min_factor > 0 && c.r_hi < min_factor))
		return 1;
	if (t_rose(e, name, min_abs, min_factor, NULL, 0) == 1)
		return 0;
	if (why) {
		char bar[64], what[128];
		bar_text(evidence_get(e, name), min_abs, min_factor, bar, sizeof bar);
		snprintf(what, sizeof what, "a rise of %s is inside the interval", bar);
		why_change(e, name, &c, 0, what, why, sz);
	}
	return -1;
}

static int t_steady(const Evidence *e, const char *name, double tol, char *why, size_t sz)
{
	EvChange c;
	if (!change_or_why(e, name, &c, why, sz))
		return -1;
	if (isnan(c.r)) {
		if (why)
			snprintf(why, sz, "%s@baseline is 0: no ratio", name);
		return -1;
	}
	double up = 1 + tol, down = 1 / (1 + tol);
	if (c.r_lo >= down && c.r_hi <= up)
		return 1;
	if (c.r_lo > up || c.r_hi < down)
		return 0;
	if (why) {
		char bn[320];
		snprintf(bn, sizeof bn, "%s@baseline", name);
		const EvValue *w = evidence_get(e, name), *b = evidence_get(e, bn);
		int low = c.r_lo < down; /* which side reached past the band */
		if (why_unbounded(e, b, low, why, sz) || why_unbounded(e, w, !low, why, sz))
			return -1;
		snprintf(why, sz, "the ratio's 95 %% interval x%.2f to x%.2f reaches past x%.2f",
		         c.r_lo, c.r_hi, low ? down : up);
	}
	return -1;
}

/* Where the value's interval lies against t: 1 wholly on the asked side
 * (above: lo > t; below: hi < t), 0 wholly on the other, -1 straddling or
 * missing. */
static int t_beyond(const Evidence *e, const char *name, double t, int above, char *why, size_t sz)
{
	const EvValue *v = evidence_get(e, name);
	if (v == NULL || v->missing) {
		why_missing(e, name, why, sz);
		return -1;
	}
	double lo, hi;
	bounds(v, &lo, &hi);
	if (above ? lo > t : hi < t)
		return 1;
	if (above ? hi <= t : lo >= t)
		return 0;
	if (why && !why_unbounded(e, v, !above, why, sz)) {
		char b[48], tt[48];
		fmtv(v, above ? lo : hi, b, sizeof b);
		fmtv(v, t, tt, sizeof tt);
		snprintf(why, sz, "the 95 %% interval's %s bound %s is %s %s", above ? "lower" : "upper",
		         b, above ? "under" : "over", tt);
	}
	return -1;
}

int evidence_test(const Evidence *e, const char *op, const char *name, double a, double b,
                  char *why, size_t sz)
{
	if (why && sz)
		*why = '\0';
	if (strcmp(op, "rose") == 0)
		return t_rose(e, name, a, b, why, sz);
	if (strcmp(op, "fell") == 0)
		return t_fell(e, name, a, b, why, sz);
	if (strcmp(op, "flat") == 0)
		return t_flat(e, name, a, b, why, sz);
	if (strcmp(op, "steady") == 0)
		return t_steady(e, name, a, why, sz);
	if (strcmp(op, "above") == 0)
		return t_beyond(e, name, a, 1, why, sz);
	if (strcmp(op, "below") == 0)
		return t_beyond(e, name, a, 0, why, sz);
	if (why)
		snprintf(why, sz, "no test named %s", op);
	return -1;
}

int evidence_rose(const Evidence *e, const char *name, double min_abs, double min_factor)
{
	return t_rose(e, name, min_abs, min_factor, NULL, 0);
}

int evidence_fell(const Evidence *e, const char *name, double min_abs, double min_factor)
{
	return t_fell(e, name, min_abs, min_factor, NULL, 0);
}

int evidence_flat(const Evidence *e, const char *name, double min_abs, double min_factor)
{
	return t_flat(e, name, min_abs, min_factor, NULL, 0);
}

int evidence_steady(const Evidence *e, const char *name, double tol)
{
	return t_steady(e, name, tol, NULL, 0);
}

int evidence_above(const Evidence *e, const char *name, double t)
{
	return t_beyond(e, name, t, 1, NULL, 0);
}

int evidence_below(const Evidence *e, const char *name, double t)
{
	return t_beyond(e, name, t, 0, NULL, 0);
}

/* "+78.8 ms, 95 % interval -58.1 to +222.7 ms" */
static void rise_text(double d, double lo, double hi, char *out, size_t sz)
{
	snprintf(out, sz, "%+.1f ms, 95 %% interval %+.1f to %+.1f ms", d, lo, hi);
}

static int from_sheet(const Evidence *e, const char *name)
{
	const EvValue *v = evidence_get(e, name);
	return v && v->source == EV_SRC_SHEET;
}

int evidence_objective_rose(const Evidence *e, char *say, size_t sz)
{
	char buf[320];
	if (say == NULL) {
		say = buf;
		sz = sizeof buf;
	}
	*say = '\0';
	const EvValue *d = evidence_get(e, "ingress.rise_ms"), *r = evidence_get(e, "ingress.rise_ratio");
	/* a sheet's p99, or a complete metric's when it is the best source
	 * (ev_best_source()), is compared as it is; the bootstrap is the
	 * traces' */
	const EvValue *p = evidence_get(e, "ingress.p99_ms");
	int sheet = from_sheet(e, "ingress.p99_ms") || from_sheet(e, "ingress.p99_ms@baseline") ||
	            (p && p->source == EV_SRC_METRIC);
	double nw = 0, nb = 0;
	if (d && !d->missing && d->has_ci && !sheet &&
	    (evidence_value(e, "ingress.requests.spans", &nw) ||
	     evidence_value(e, "ingress.requests", &nw)) &&
	    (evidence_value(e, "ingress.requests.spans@baseline", &nb) ||
	     evidence_value(e, "ingress.requests@baseline", &nb)) &&
	    d->top_k == 0 && (nw < EV_RISE_MIN_N || nb < EV_RISE_MIN_N)) {
		/* a p99 of fewer than 100 requests is their maximum: resampling
		 * the maximum says nothing about the percentile */
		snprintf(say, sz, "the %s's %.0f requests are too few for a p99 (its nearest rank is the "
		         "maximum)", nw < EV_RISE_MIN_N ? "window" : "baseline",
		         nw < EV_RISE_MIN_N ? nw : nb);
		return -1;
	}
	if (d && !d->missing && d->has_ci && !sheet) {
		/* the bootstrap of the difference itself: its interval is not
		 * left open by an order statistic past the sample */
		double rv = r && !r->missing ? r->value : NAN;
		double rhi = r && !r->missing && r->has_ci ? r->hi : INFINITY;
		char iv[128];
		rise_text(d->value, d->lo, d->hi, iv, sizeof iv);
		if (d->value >= EV_RISE_MIN_MS && rv >= EV_RISE_MIN_FACTOR && d->lo > 0) {
			snprintf(say, sz, "it rose by 5 %% and 5 ms or more, beyond sampling noise (%s)", iv);
			return 1;
		}
		if (d->hi < EV_RISE_MIN_MS || rhi < EV_RISE_MIN_FACTOR) {
			snprintf(say, sz, "its interval leaves no room for a rise of 5 %% and 5 ms (%s)", iv);
			return 0;
		}
		if (d->value >= EV_RISE_MIN_MS && rv >= EV_RISE_MIN_FACTOR)
			snprintf(say, sz, "the rise's interval reaches 0 (%s)", iv);
		else
			snprintf(say, sz, "a rise of 5 %% and 5 ms is inside its interval (%s)", iv);
		return -1;
	}
	/* no request pass (a sheet, metrics only): the two values compared */
	char why[320];
	int t = t_rose(e, "ingress.p99_ms", EV_RISE_MIN_MS, EV_RISE_MIN_FACTOR, why, sizeof why);
	EvChange c;
	int have = evidence_change(e, "ingress.p99_ms", &c);
	if (t == 1) {
		snprintf(say, sz, "it rose from %.1f to %.1f ms, by 5 %% and 5 ms or more, beyond sampling "
		         "noise", c.b, c.w);
		return 1;
	}
	if (t_flat(e, "ingress.p99_ms", EV_RISE_MIN_MS, EV_RISE_MIN_FACTOR, t < 0 ? NULL : why,
	           sizeof why) == 1) {
		snprintf(say, sz, "its interval leaves no room for a rise of 5 %% and 5 ms (%.1f against "
		         "%.1f ms)", c.w, c.b);
		return 0;
	}
	(void)have;
	snprintf(say, sz, "%s", why);
	return -1;
}

int evidence_bound(const Evidence *e, const char *name, int upper, double *out, char *why,
                   size_t sz)
{
	if (why && sz)
		*why = '\0';
	const EvValue *v = evidence_get(e, name);
	if (v == NULL || v->missing) {
		why_missing(e, name, why, sz);
		return 0;
	}
	*out = !v->has_ci ? v->value : upper ? v->hi : v->lo;
	if (isinf(*out)) {
		why_unbounded(e, v, upper, why, sz);
		return 0;
	}
	return 1;
}

void ev_missing(Evidence *e, const char *name, const char *unit, const char *why)
{
	EvValue *v = find(e, name);
	if (v && !v->missing)
		return;
	ev_put(e, name, NAN, unit, EV_SRC_MISSING, EV_Q_NONE, 0, 0, "%s", why);
}

void evidence_supply(Evidence *e, const char *name, double value, const char *unit, int source,
                     const char *provenance)
{
	ev_put(e, name, value, unit, source, EV_Q_NONE, 0, 0, "%s", provenance ? provenance : "");
}

void ev_fact(Evidence *e, const char *name, const char *value)
{
	for (int i = 0; i < e->n_facts; i++)
		if (strcmp(e->facts[i].name, name) == 0) {
			free(e->facts[i].value);
			e->facts[i].value = xstrdup(value);
			return;
		}
	e->facts = xrealloc(e->facts, (size_t)(e->n_facts + 1) * sizeof *e->facts);
	e->facts[e->n_facts].name = xstrdup(name);
	e->facts[e->n_facts].value = xstrdup(value);
	e->n_facts++;
}

void ev_list_add(char ***list, int *n, const char *s)
{
	if (s == NULL || *s == '\0')
		return;
	for (int i = 0; i < *n; i++)
		if (strcmp((*list)[i], s) == 0)
			return;
	*list = xrealloc(*list, (size_t)(*n + 1) * sizeof **list);
	(*list)[(*n)++] = xstrdup(s);
}

/* ---- values from an Analysis ---------------------------------------------- */

static const char *pop_suffix(int p)
{
	return p == POP_BASELINE ? "@baseline" : "";
}

static const char *pop_word(int p)
{
	return p == POP_BASELINE ? "baseline" : "window";
}

/* A quantile value: exact from spans, or missing when n == 0. */
static void put_quant(Evidence *e, const char *name, const Quant *q, const char *what, int p);

/* The p90 next to a p99 name ("x.p99_ms@baseline" -> "x.p90_ms@baseline"):
 * far steadier than the p99 on a few hundred requests, so predicates use
 * it to tell a moved distribution from sampling noise. */
static void put_p90(Evidence *e, const char *p99name, const Quant *q, const char *what, int p)
{
	int64_t n = q->n;
	char name[256];
	const char *at = strstr(p99name, "p99_ms");
	if (at == NULL)
		return;
	snprintf(name, sizeof name, "%.*sp90_ms%s", (int)(at - p99name), p99name, at + 6);
	if (n == 0)
		return;
	EvValue *ev = ev_put(e, name, q->p90, "ms", EV_SRC_SPANS, EV_Q_EXACT, n, n < 30,
	                     "spans: exact nearest-rank p90 of %lld %s (%s)", (long long)n, what,
	                     p == POP_BASELINE ? "baseline" : "window");
	ev_ci(ev, q->p90_lo, q->p90_hi);
}

static void put_quant(Evidence *e, const char *name, const Quant *q, const char *what, int p)
{
	int64_t n = q->n;
	if (n == 0) {
		char why[256];
		snprintf(why, sizeof why, "spans: no %s in the %s", what, pop_word(p));
		ev_missing(e, name, "ms", why);
		return;
	}
	EvValue *ev = ev_put(e, name, q->p99, "ms", EV_SRC_SPANS, EV_Q_EXACT, n,
	                     quant_small_sample(n), "spans: exact nearest-rank p99 of %lld %s (%s)%s",
	                     (long long)n, what, pop_word(p),
	                     quant_small_sample(n) ? "; fewer than 100: close to the maximum" : "");
	ev_ci(ev, q->p99_lo, q->p99_hi);
}

/* The dependency a call node stands for: the called service, or for a
 * database call its database system. */
static const char *node_dep(const DagNode *d)
{
	return d->dependency ? d->dependency : d->db_system ? d->db_system : d->peer;
}

/* The node that represents dependency dep: the call node with the most
 * calls in the window (several nodes may call the same service). */
static void dep_nodes_stats(const Analysis *a, const char *dep, int p, NodeStats *best,
                            double *crit_share, double *wait_crit, int *found)
{
	int64_t most = -1;
	*crit_share = 0;
	*wait_crit = 0;
	*found = 0;
	double crit_total = 0;
	for (int i = 0; i < a->n_nodes; i++) {
		const DagNode *d = &a->nodes[i];
		if (d->type != NODE_CALL || node_dep(d) == NULL || strcmp(node_dep(d), dep) != 0)
			continue;
		*found = 1;
		if (d->pop[p].calls > most) {
			most = d->pop[p].calls;
			*best = d->pop[p];
		}
		*crit_share += d->crit[p].share;
		crit_total += d->crit[p].total_ms;
		*wait_crit += d->crit[p].ms[COMP_QUEUE] + d->crit[p].ms[COMP_WAIT];
	}
	*wait_crit = crit_total > 0 ? *wait_crit / crit_total : NAN;
}

/* dep.D.wait_rise_alone: 1 when D's client wait rose at the p90 while no
 * other dependency's did (each other one's p90 wait rose by less than
 * half or 5 ms, at its point estimate), 0 when another's did too. A pool
 * in front of one dependency makes only its calls wait; a process that
 * is short of threads or CPU makes all of its calls start late, so the
 * waits of every dependency rise together. Absent without a baseline,
 * without D's p90 wait in both windows, or without another dependency. */
static void wait_rise_alone(Evidence *e)
{
	char name[256], seg[96];
	for (int k = 0; k < e->n_deps; k++) {
		evidence_segment(e->deps[k], seg, sizeof seg);
		snprintf(name, sizeof name, "dep.%s.client_wait.p90_ms", seg);
		if (evidence_rose(e, name, 10, 2) != 1)
			continue;
		int others = 0, rose = 0;
		for (int j = 0; j < e->n_deps; j++) {
			if (j == k)
				continue;
			char oseg[96], oname[256];
			evidence_segment(e->deps[j], oseg, sizeof oseg);
			snprintf(oname, sizeof oname, "dep.%s.client_wait.p90_ms", oseg);
			int r = evidence_rose(e, oname, 5, 1.5);
			if (r < 0 && evidence_get(e, oname) == NULL)
				continue;
			others++;
			rose |= r != 0;
		}
		if (others == 0)
			continue; /* nothing to set it against */
		snprintf(name, sizeof name, "dep.%s.wait_rise_alone", seg);
		ev_put(e, name, rose ? 0 : 1, "flag", EV_SRC_SPANS, EV_Q_NONE, others, 0,
		       "spans: its client wait's p90 doubled; of the %d other dependencies with "
		       "client waits, %s", others,
		       rose ? "at least one's p90 wait rose by half or more too"
		            : "none's p90 wait rose by half or by 5 ms");
	}
}

static void from_analysis(Evidence *e, const Analysis *a, const Model *m)
{
	char name[256], seg[96];
	if (a->root_service && e->root_service == NULL)
		e->root_service = xstrdup(a->root_service);
	for (int i = 0; i < a->n_classes; i++)
		ev_list_add(&e->classes, &e->n_classes, a->classes[i]);
	for (int i = 0; i < a->n_nodes; i++)
		if (a->nodes[i].type == NODE_CALL && node_dep(&a->nodes[i]))
			ev_list_add(&e->deps, &e->n_deps, node_dep(&a->nodes[i]));
	for (int p = 0; p < 2; p++) {
		const PopSummary *ps = &a->pop[p];
		if (!ps->present)
			continue;
		const char *sfx = pop_suffix(p);
		char src[200];
		analysis_slow_source(a, p, src, sizeof src);
		if (p == POP_WINDOW && ps->tail_pulled)
			ev_fact(e, "tail.source", src);
		if (p == POP_WINDOW && ps->requests > 0)
			e->has_spans = 1;
		if (p == POP_BASELINE && ps->requests > 0)
			e->has_baseline = 1;
		snprintf(name, sizeof name, "ingress.requests%s", sfx);
		ev_put(e, name, (double)ps->requests, "count", EV_SRC_SPANS, EV_Q_NONE, ps->requests, 0,
		       "spans: endpoint requests whose root span starts in the %s%s", pop_word(p),
		       ps->sample_of > 0 ? ", read as a uniform sample (ingress.sample_of)" : "");
		if (ps->sample_of > 0) {
			snprintf(name, sizeof name, "ingress.sample_of%s", sfx);
			ev_put(e, name, (double)ps->sample_of, "count", EV_SRC_SPANS, EV_Q_NONE,
			       ps->sample_of, 0,
			       "spans: the %s's stored requests, of which %lld evenly spaced in time "
			       "were read; every span figure of it is that sample's", pop_word(p),
			       (long long)ps->requests);
		}
		snprintf(name, sizeof name, "ingress.p99_ms%s", sfx);
		put_quant(e, name, &ps->ingress, "requests at ingress", p);
		put_p90(e, name, &ps->ingress, "requests at ingress", p);
		snprintf(name, sizeof name, "ingress.p50_ms%s", sfx);
		if (ps->ingress.n)
			ev_put(e, name, ps->ingress.p50, "ms", EV_SRC_SPANS, EV_Q_EXACT, ps->ingress.n, 0,
			       "spans: exact nearest-rank p50 of %lld requests (%s)",
			       (long long)ps->ingress.n, pop_word(p));
		else
			ev_missing(e, name, "ms", "spans: no requests");
		snprintf(name, sizeof name, "ingress.rate_rps%s", sfx);
		if (ps->requests > 0 && ps->rate_rps > 0)
			ev_put(e, name, ps->rate_rps, "1/s", EV_SRC_SPANS, EV_Q_NONE, ps->requests, 0,
			       "spans: sampled requests per second over the %s (sampling not undone)",
			       pop_word(p));
		snprintf(name, sizeof name, "errors.ratio%s", sfx);
		if (ps->requests > 0)
			ev_put(e, name, (double)ps->errors / (double)ps->requests, "ratio", EV_SRC_SPANS,
			       EV_Q_NONE, ps->requests, ps->requests < EV_MIN_RATIO_N,
			       "spans: root spans with error status / requests (%s)", pop_word(p));
		/* class mix and per-class p99 (only without a class filter) */
		if (a->class_filter == NULL && ps->requests > 0) {
			for (int c = 0; c < a->n_classes; c++) {
				evidence_segment(a->classes[c], seg, sizeof seg);
				snprintf(name, sizeof name, "mix.%s%s", seg, sfx);
				EvValue *mv = ev_put(e, name, (double)ps->class_requests[c] / (double)ps->requests,
				                     "ratio", EV_SRC_SPANS, EV_Q_NONE, ps->requests,
				                     ps->requests < EV_MIN_RATIO_N,
				                     "spans: share of %lld requests of class %s (%s)",
				                     (long long)ps->requests, a->classes[c], pop_word(p));
				double mlo, mhi;
				evidence_wilson((double)ps->class_requests[c], (double)ps->requests, &mlo, &mhi);
				ev_ci(mv, mlo, mhi);
				snprintf(name, sizeof name, "class.%s.p99_ms%s", seg, sfx);
				put_quant(e, name, &ps->class_ingress[c],
				          "requests of the class", p);
			}
		}
		/* endpoint queue age: the queue before the root span */
		if (a->n_nodes > 0) {
			const NodeStats *r = &a->nodes[0].pop[p];
			snprintf(name, sizeof name, "endpoint.queue_age.p99_ms%s", sfx);
			if (r->queue.n > 0) {
				put_quant(e, name, &r->queue, "queue waits before the root span", p);
				put_p90(e, name, &r->queue, "queue waits before the root span", p);
			}
		}
		/* per dependency */
		for (int k = 0; k < e->n_deps; k++) {
			NodeStats st;
			memset(&st, 0, sizeof st);
			double share, waitc;
			int found;
			dep_nodes_stats(a, e->deps[k], p, &st, &share, &waitc, &found);
			if (!found)
				continue;
			evidence_segment(e->deps[k], seg, sizeof seg);
			if (p == POP_WINDOW) {
				/* how deep in the DAG it is called: a callee of a callee
				 * is the more specific locus when both look the same */
				int depth = 0;
				for (int i = 0; i < a->n_nodes; i++)
					if (a->nodes[i].type == NODE_CALL && node_dep(&a->nodes[i]) &&
					    strcmp(node_dep(&a->nodes[i]), e->deps[k]) == 0 &&
					    (depth == 0 || a->nodes[i].depth < depth))
						depth = a->nodes[i].depth;
				snprintf(name, sizeof name, "dep.%s.depth", seg);
				ev_put(e, name, depth, "count", EV_SRC_SPANS, EV_Q_NONE, 0, 0,
				       "spans: depth of its shallowest call in the DAG (root 0)");
				/* the dependencies it calls in turn: a call node whose
				 * parent is one of its call nodes */
				for (int i = 0; i < a->n_nodes; i++) {
					const DagNode *c = &a->nodes[i];
					if (c->type != NODE_CALL || node_dep(c) == NULL || c->parent < 0)
						continue;
					const DagNode *pn = &a->nodes[c->parent];
					if (pn->type != NODE_CALL || node_dep(pn) == NULL ||
					    strcmp(node_dep(pn), e->deps[k]) != 0 ||
					    strcmp(node_dep(c), e->deps[k]) == 0)
						continue;
					char cseg[96], rel[320];
					evidence_segment(node_dep(c), cseg, sizeof cseg);
					snprintf(rel, sizeof rel, "dep.%s.calls.%s", seg, cseg);
					ev_put(e, rel, 1, "flag", EV_SRC_SPANS, EV_Q_NONE, 0, 0,
					       "spans: %s calls %s", e->deps[k], node_dep(c));
				}
			}
			snprintf(name, sizeof name, "dep.%s.client.p99_ms%s", seg, sfx);
			put_quant(e, name, &st.total, "calls as the client saw them", p);
			put_p90(e, name, &st.total, "calls as the client saw them", p);
			snprintf(name, sizeof name, "dep.%s.client_wait.p99_ms%s", seg, sfx);
			put_quant(e, name, &st.client_wait,
			          "client waits (client span minus server span)", p);
			put_p90(e, name, &st.client_wait,
			        "client waits (client span minus server span)", p);
			snprintf(name, sizeof name, "dep.%s.service.p99_ms%s", seg, sfx);
			put_quant(e, name, &st.service, "server spans", p);
			put_p90(e, name, &st.service, "server spans", p);
			snprintf(name, sizeof name, "dep.%s.queue.p99_ms%s", seg, sfx);
			if (st.queue.n > 0) {
				put_quant(e, name, &st.queue, "pool waits before the client span", p);
				put_p90(e, name, &st.queue, "pool waits before the client span", p);
			}
			if (ps->slow_requests > 0) {
				snprintf(name, sizeof name, "dep.%s.crit_share%s", seg, sfx);
				ev_put(e, name, share, "ratio", EV_SRC_SPANS, EV_Q_NONE, ps->slow_requests,
				       ps->slow_requests < ANALYSIS_THIN_SLOW,
				       "spans: share of the critical path of %lld slow requests (%s)",
				       (long long)ps->slow_requests, ps->tail_pulled ? src : pop_word(p));
				snprintf(name, sizeof name, "dep.%s.wait_crit_share%s", seg, sfx);
				if (!isnan(waitc))
					ev_put(e, name, waitc, "ratio", EV_SRC_SPANS, EV_Q_NONE, ps->slow_requests,
					       ps->slow_requests < ANALYSIS_THIN_SLOW,
					       "spans: queue + client wait part of its critical-path time (%s)",
					       pop_word(p));
			}
		}
		if (ps->slow_requests > 0) {
			snprintf(name, sizeof name, "slow.requests%s", sfx);
			ev_put(e, name, (double)ps->slow_requests, "count", EV_SRC_SPANS, EV_Q_NONE,
			       ps->slow_requests, 0, "spans: requests at or above %.1f ms (%s)",
			       ps->slow_threshold_ms, ps->tail_pulled ? src : pop_word(p));
			if (a->n_nodes > 0) {
				snprintf(name, sizeof name, "endpoint.crit_share%s", sfx);
				ev_put(e, name, a->nodes[0].crit[p].share, "ratio", EV_SRC_SPANS, EV_Q_NONE,
				       ps->slow_requests, ps->slow_requests < ANALYSIS_THIN_SLOW,
				       "spans: the root span's own time and queue on the slow requests' "
				       "critical path (%s)", pop_word(p));
			}
		}
	}
	wait_rise_alone(e);
	(void)m;
}

/* ---- model values --------------------------------------------------------- */

static void from_model(Evidence *e, const Model *m)
{
	char name[256], seg[96];
	if (m->objective_ms > 0)
		ev_put(e, "objective.p99_ms", m->objective_ms, "ms", EV_SRC_MODEL, EV_Q_NONE, 0, 0,
		       "model %s: objective", m->endpoint ? m->endpoint : "");
	if (m->root_service && e->root_service == NULL)
		e->root_service = xstrdup(m->root_service);
	for (int c = 0; c < m->n_classes; c++)
		ev_list_add(&e->classes, &e->n_classes, m->classes[c]);
	for (int i = 0; i < m->n_nodes; i++) {
		const ModelNode *n = &m->nodes[i];
		if (n->service == NULL || (m->root_service && strcmp(n->service, m->root_service) == 0))
			continue; /* local spans of the endpoint itself */
		ev_list_add(&e->deps, &e->n_deps, n->service);
		evidence_segment(n->service, seg, sizeof seg);
		struct { const char *k; int v; } tri[] = {
			{"optional", n->mandatory == MODEL_UNKNOWN ? MODEL_UNKNOWN : !n->mandatory},
			{"mandatory", n->mandatory},
			{"core", n->core},
		};
		for (size_t t = 0; t < sizeof tri / sizeof tri[0]; t++) {
			snprintf(name, sizeof name, "dep.%s.%s", seg, tri[t].k);
			if (tri[t].v == MODEL_UNKNOWN)
				ev_missing(e, name, "flag", "model: not declared");
			else
				ev_put(e, name, tri[t].v, "flag", EV_SRC_MODEL, EV_Q_NONE, 0, 0,
				       "model: %s is %s%s", n->service, tri[t].v ? "" : "not ", tri[t].k);
		}
	}
	/* budget thresholds in evidence units, so predicates can refer to
	 * them: budget.<evidence name> */
	for (int i = 0; i < m->n_budgets; i++) {
		const ModelBudget *b = &m->budgets[i];
		if (b->evidence == NULL)
			continue;
		double t = b->threshold;
		const char *unit = b->unit ? b->unit : "";
		if (strcmp(unit, "%") == 0) {
			t /= 100;
			unit = "ratio";
		}
		snprintf(name, sizeof name, "budget.%s", b->evidence);
		ev_put(e, name, t, unit, EV_SRC_MODEL, EV_Q_NONE, 0, 0, "model: budget %s (%s %s %g %s)",
		       b->id ? b->id : "", b->evidence, b->op ? b->op : ">", b->threshold,
		       b->unit ? b->unit : "");
	}
	for (int i = 0; i < m->n_pools; i++) {
		const ModelPool *p = &m->pools[i];
		if (p->name == NULL || p->size <= 0)
			continue;
		evidence_segment(p->name, seg, sizeof seg);
		snprintf(name, sizeof name, "pool.%s.size", seg);
		ev_put(e, name, (double)p->size, "count", EV_SRC_MODEL, EV_Q_NONE, 0, 0,
		       "model: %s pool size per process", p->name);
	}
	/* the declared class mix stands in for a baseline mix nobody measured */
	if (m->class_mix) {
		for (int c = 0; c < m->n_classes; c++) {
			if (isnan(m->class_mix[c]))
				continue;
			evidence_segment(m->classes[c], seg, sizeof seg);
			snprintf(name, sizeof name, "mix.%s@declared", seg);
			ev_put(e, name, m->class_mix[c], "ratio", EV_SRC_MODEL, EV_Q_NONE, 0, 0,
			       "model: declared share of class %s", m->classes[c]);
		}
	}
}

/* ---- derived -------------------------------------------------------------- */

static int cmp_value(const void *x, const void *y)
{
	return strcmp(((const EvValue *)x)->name, ((const EvValue *)y)->name);
}

/* z statistic of the change of one class's share between two populations
 * of nw and nb requests (two-proportion test, pooled). */
static double share_z(double w, int64_t nw, double b, int64_t nb)
{
	double p = (w * (double)nw + b * (double)nb) / (double)(nw + nb);
	double se = sqrt(p * (1 - p) * (1.0 / (double)nw + 1.0 / (double)nb));
	return se > 0 ? fabs(w - b) / se : 0;
}

static void derive_mix(Evidence *e)
{
	double best = NAN;
	const char *best_class = NULL;
	int64_t n = 0;
	const char *base_src = NULL;
	for (int c = 0; c < e->n_classes; c++) {
		char seg[96], nw[160], nb[160];
		evidence_segment(e->classes[c], seg, sizeof seg);
		snprintf(nw, sizeof nw, "mix.%s", seg);
		snprintf(nb, sizeof nb, "mix.%s@baseline", seg);
		double w, b;
		const char *src = "baseline";
		if (!evidence_value(e, nw, &w))
			continue;
		if (!evidence_value(e, nb, &b)) {
			snprintf(nb, sizeof nb, "mix.%s@declared", seg);
			if (!evidence_value(e, nb, &b))
				continue;
			src = "declared mix";
		}
		if (b < 0.01)
			continue;
		/* a change within sampling noise (z < 3) is no change: two
		 * populations with counts, or a sample against a declared share */
		const EvValue *vw = evidence_get(e, nw), *vb = evidence_get(e, nb);
		double z = NAN;
		if (vw && vb && vw->source == EV_SRC_SPANS && vb->source == EV_SRC_SPANS && vw->n > 0 &&
		    vb->n > 0)
			z = share_z(w, vw->n, b, vb->n);
		else if (vw && vb && vw->source == EV_SRC_SPANS && vw->n > 0 && vb->source == EV_SRC_MODEL)
			z = fabs(w - b) / sqrt(b * (1 - b) / (double)vw->n);
		if (!isnan(z)) {
			char zn[200];
			snprintf(zn, sizeof zn, "mix.%s.z", seg);
			ev_put(e, zn, z, "count", EV_SRC_DERIVED, EV_Q_NONE, vw->n, 0,
			       "derived: z of the class share's change (%lld requests against the %s)",
			       (long long)vw->n, src);
		}
		if (!isnan(z) && z < 3) {
			if (isnan(best))
				best = 0;
			continue;
		}
		double ch = fabs(w / b - 1);
		if (isnan(best) || ch > best) {
			best = ch;
			best_class = e->classes[c];
			base_src = src;
			const EvValue *v = evidence_get(e, nw);
			n = v ? v->n : 0;
		}
	}
	if (best_class) {
		ev_put(e, "mix.change", best, "ratio", EV_SRC_DERIVED, EV_Q_NONE, n,
		       n > 0 && n < EV_MIN_RATIO_N,
		       "derived: largest relative change of a class share against the %s (class %s; "
		       "changes within sampling noise, z < 3, count as none)",
		       base_src, best_class);
		ev_fact(e, "mix.top_class", best_class);
	} else if (!isnan(best)) {
		ev_put(e, "mix.change", 0, "ratio", EV_SRC_DERIVED, EV_Q_NONE, 0, 0,
		       "derived: no class share moved beyond sampling noise (z < 3)");
	} else {
		ev_missing(e, "mix.change", "ratio", "derived: needs class shares for window and baseline");
	}
}

static void derive_ratio(Evidence *e, const char *name, const char *num, const char *den,
                         const char *what)
{
	double a, b;
	if (evidence_value(e, num, &a) && evidence_value(e, den, &b) && b > 0) {
		const EvValue *va = evidence_get(e, num), *vb = evidence_get(e, den);
		ev_put(e, name, a / b - 1, "ratio", EV_SRC_DERIVED, EV_Q_NONE, 0,
		       (va && va->small_sample) || (vb && vb->small_sample), "derived: %s", what);
	} else {
		ev_missing(e, name, "ratio", "derived: needs window and baseline values");
	}
}

/* Adds the segment of n bytes at seg to list unless an entry of the list
 * already has that evidence segment. */
static void list_add_segment(char ***list, int *n, const char *seg, size_t len)
{
	char want[96], have[96];
	if (len == 0 || len >= sizeof want)
		return;
	memcpy(want, seg, len);
	want[len] = '\0';
	for (int k = 0; k < *n; k++) {
		evidence_segment((*list)[k], have, sizeof have);
		if (strcmp(have, want) == 0)
			return;
	}
	ev_list_add(list, n, want);
}

/* Adds names that evidence mentions (from a sheet) to the lists. */
static void lists_from_names(Evidence *e)
{
	for (int i = 0; i < e->n; i++) {
		const char *nm = e->v[i].name;
		/* only what a sheet supplied names new dependencies and classes;
		 * computed values come with their lists already */
		if (e->v[i].source != EV_SRC_SHEET)
			continue;
		if (strncmp(nm, "dep.", 4) == 0) {
			const char *dot = strchr(nm + 4, '.');
			list_add_segment(&e->deps, &e->n_deps, nm + 4,
			                 dot ? (size_t)(dot - (nm + 4)) : strlen(nm + 4));
		} else if (strncmp(nm, "caller.", 7) == 0) {
			list_add_segment(&e->callers, &e->n_callers, nm + 7, strcspn(nm + 7, ".@"));
		} else if (strncmp(nm, "mix.", 4) == 0 && strcmp(nm, "mix.change") != 0 &&
		           strncmp(nm, "mix.p99", 7) != 0 && strncmp(nm, "mix.explained", 13) != 0) {
			list_add_segment(&e->classes, &e->n_classes, nm + 4, strcspn(nm + 4, ".@"));
		}
	}
}

/* The largest rise of a client-side wait (client wait or pool wait before
 * the call) on a dependency whose server time moved less than 30 %. */
static void derive_wait_rise(Evidence *e)
{
	double best = NAN;
	const char *dep = NULL;
	for (int k = 0; k < e->n_deps; k++) {
		char seg[96], n1[200], n2[200];
		evidence_segment(e->deps[k], seg, sizeof seg);
		double s, sb;
		snprintf(n1, sizeof n1, "dep.%s.service.p99_ms", seg);
		snprintf(n2, sizeof n2, "dep.%s.service.p99_ms@baseline", seg);
		if (!evidence_value(e, n1, &s) || !evidence_value(e, n2, &sb) || s > 1.3 * sb)
			continue;
		static const char *const parts[] = {"client_wait", "queue"};
		for (int j = 0; j < 2; j++) {
			double w, wb;
			snprintf(n1, sizeof n1, "dep.%s.%s.p99_ms", seg, parts[j]);
			snprintf(n2, sizeof n2, "dep.%s.%s.p99_ms@baseline", seg, parts[j]);
			if (evidence_value(e, n1, &w) && evidence_value(e, n2, &wb) &&
			    (isnan(best) || w - wb > best)) {
				best = w - wb;
				dep = e->deps[k];
			}
		}
	}
	if (dep) {
		ev_put(e, "wait.max_rise_ms", best, "ms", EV_SRC_DERIVED, EV_Q_NONE, 0, 0,
		       "derived: largest rise of a client-side or pool wait p99 on a dependency whose "
		       "server p99 moved less than 30 %% (%s)", dep);
		ev_fact(e, "wait.max_rise_dep", dep);
	} else {
		ev_missing(e, "wait.max_rise_ms", "ms",
		           "derived: needs client wait and server p99 of a dependency in both windows");
	}
}

/* How much fuller the busiest host's pool is than the fleet's: the largest
 * occupancy_host_max - occupancy over pools (the executor included). */
static void derive_pool_skew(Evidence *e)
{
	double best = NAN;
	char pool[96] = "";
	for (int i = 0; i < e->n; i++) {
		const char *nm = e->v[i].name;
		size_t l = strlen(nm);
		static const char suf[] = ".occupancy_host_max";
		size_t sl = sizeof suf - 1;
		if (strncmp(nm, "pool.", 5) != 0 || l <= 5 + sl || strcmp(nm + l - sl, suf) != 0 ||
		    e->v[i].missing)
			continue;
		char fleet[200];
		snprintf(fleet, sizeof fleet, "%.*s.occupancy", (int)(l - sl), nm);
		double f;
		if (!evidence_value(e, fleet, &f))
			continue;
		double skew = e->v[i].value - f;
		if (isnan(best) || skew > best) {
			best = skew;
			snprintf(pool, sizeof pool, "%.*s", (int)(l - sl - 5), nm + 5);
		}
	}
	if (!isnan(best))
		ev_put(e, "placement.pool_skew", best, "ratio", EV_SRC_DERIVED, EV_Q_NONE, 0, 0,
		       "derived: busiest host's occupancy minus the fleet's, largest over pools (%s)",
		       pool);
}

/* mix.<class>.top: 1 for the class whose share grew the most, relative
 * to its baseline share, among those that grew significantly; 0 for the
 * others. Class-mix-shift blames that class. */
static void derive_mix_top(Evidence *e)
{
	double best = 0;
	int top = -1;
	for (int c = 0; c < e->n_classes; c++) {
		char seg[96], nm[160];
		evidence_segment(e->classes[c], seg, sizeof seg);
		snprintf(nm, sizeof nm, "mix.%s", seg);
		EvChange ch;
		if (!evidence_change(e, nm, &ch))
			continue;
		if (evidence_rose(e, nm, 0, 1) == 1 && ch.r > best) {
			best = ch.r;
			top = c;
		}
	}
	for (int c = 0; c < e->n_classes; c++) {
		char seg[96], nm[160], tn[180];
		evidence_segment(e->classes[c], seg, sizeof seg);
		snprintf(nm, sizeof nm, "mix.%s", seg);
		EvChange ch;
		if (!evidence_change(e, nm, &ch))
			continue;
		snprintf(tn, sizeof tn, "mix.%s.top", seg);
		ev_put(e, tn, c == top, "flag", EV_SRC_DERIVED, EV_Q_NONE, 0, 0,
		       "derived: 1 for the class whose share grew the most against its baseline "
		       "(significant growth only)%s%s", top >= 0 ? ": " : "",
		       top >= 0 ? e->classes[top] : "");
	}
	if (top >= 0)
		ev_fact(e, "mix.grew_most", e->classes[top]);
}

/* ingress.rose: the objective's percentile rose (1), did not (0: its
 * interval leaves no room for a rise of 5 % and 5 ms) or cannot tell
 * (missing, with the reason), as evidence_objective_rose() decides.
 * ingress.moved: 1 when that percentile or the p90 rose, 0 when neither
 * did, missing (with both reasons) when it cannot tell. The null
 * hypothesis ranks first when nothing moved (docs/diagnosis.md). */
static void derive_moved(Evidence *e)
{
	EvChange c;
	int have99 = evidence_change(e, "ingress.p99_ms", &c) ||
	             evidence_get(e, "ingress.rise_ms") != NULL;
	int have90 = evidence_change(e, "ingress.p90_ms", &c);
	if (!have99 && !have90) {
		const char *why = "derived: needs the endpoint's p99 or p90 in both window and baseline";
		ev_missing(e, "ingress.rose", "flag", why);
		ev_missing(e, "ingress.moved", "flag", why);
		return;
	}
	char s99[320] = "", s90[320] = "";
	int a = have99 ? evidence_objective_rose(e, s99, sizeof s99) : -1;
	int b = -1;
	if (have90) {
		b = t_rose(e, "ingress.p90_ms", EV_RISE_MIN_MS, EV_RISE_MIN_FACTOR, s90, sizeof s90);
		if (b != 1) {
			char wf[320];
			b = t_flat(e, "ingress.p90_ms", EV_RISE_MIN_MS, EV_RISE_MIN_FACTOR, wf, sizeof wf) == 1
			        ? 0
			        : -1;
			if (b < 0 && s90[0] == '\0')
				snprintf(s90, sizeof s90, "%s", wf);
		}
	}
	if (have99) {
		if (a < 0)
			ev_missing(e, "ingress.rose", "flag", s99);
		else
			ev_put(e, "ingress.rose", a, "flag", EV_SRC_DERIVED, EV_Q_NONE, 0, 0,
			       "derived: the objective's percentile %s: %s", a ? "rose" : "did not rise", s99);
	}
	/* without a p90 on both sides (a sheet's p99 alone) the p99 decides */
	int moved = !have90 ? a : !have99 ? b : a == 1 || b == 1 ? 1 : a == 0 && b == 0 ? 0 : -1;
	char p99w[64], p90w[400];
	snprintf(p99w, sizeof p99w, "p99: %s%s", a == 1 ? "rose" : a == 0 ? "did not rise" : "cannot tell",
	         have99 ? "" : " (not known)");
	snprintf(p90w, sizeof p90w, "p90: %s%s%s", b == 1 ? "rose" : b == 0 ? "did not rise" : "cannot tell",
	         b < 0 && *s90 ? ", " : "", b < 0 ? s90 : "");
	if (moved < 0) {
		char why[1200];
		snprintf(why, sizeof why,
		         "derived: cannot tell whether the endpoint's p99 or p90 rose by 5 %% and 5 ms "
		         "(%s%s%s; %s)", p99w, a < 0 && have99 ? ": " : "", a < 0 && have99 ? s99 : "",
		         have90 ? p90w : "p90: not known");
		ev_missing(e, "ingress.moved", "flag", why);
		return;
	}
	ev_put(e, "ingress.moved", moved, "flag", EV_SRC_DERIVED, EV_Q_NONE, 0, 0,
	       "derived: the endpoint's p99 or p90 %s by 5 %% and 5 ms beyond sampling noise (%s; %s)",
	       moved ? "rose" : "did not rise", p99w, have90 ? p90w : "p90: not known");
}

/* Splits a window value "dep.<caller>.calls.<callee>" into its caller and
 * callee segments (160 bytes each); 0 for any other name. */
static int calls_pair(const char *nm, char *caller, char *callee)
{
	if (strncmp(nm, "dep.", 4) != 0)
		return 0;
	const char *mid = strstr(nm + 4, ".calls.");
	if (mid == NULL || strchr(mid + 7, '@'))
		return 0;
	snprintf(caller, 160, "%.*s", (int)(mid - (nm + 4)), nm + 4);
	snprintf(callee, 160, "%s", mid + 7);
	return 1;
}

/* dep.<d>.callee_service_explained: the largest share of the rise that a
 * dependency d calls in turn explains with its own server time. A caller
 * whose server time rose because its callee got slower is not where the
 * slowdown starts. */
static void derive_callee(Evidence *e)
{
	for (int i = 0; i < e->n; i++) {
		char caller[160], callee[160], n1[320], n2[320];
		if (e->v[i].missing || !calls_pair(e->v[i].name, caller, callee))
			continue;
		double x;
		snprintf(n1, sizeof n1, "dep.%s.service.explained", callee);
		if (!evidence_value(e, n1, &x)) {
			/* a callee that sends no server spans: all of its time */
			char n3[320];
			snprintf(n3, sizeof n3, "dep.%s.service.p99_ms", callee);
			snprintf(n1, sizeof n1, "dep.%s.explained", callee);
			if (evidence_value(e, n3, &x) || !evidence_value(e, n1, &x))
				continue;
		}
		snprintf(n2, sizeof n2, "dep.%s.callee_service_explained", caller);
		double have;
		if (!(evidence_value(e, n2, &have) && have >= x))
			ev_put(e, n2, x, "ratio", EV_SRC_DERIVED, EV_Q_NONE, 0, 0,
			       "derived: share of the rise explained by the server time of %s, which %s "
			       "calls", callee, caller);
	}
	/* dep.<d>.callee_rise_share: how much of the rise of d's own server p90
	 * (in ms) a callee's p90 rise covers (its server time, or its client
	 * time when it sends no server spans); p90s are steady enough for a
	 * like-for-like comparison where attributions are noisy */
	for (int i = 0; i < e->n; i++) {
		char caller[160], callee[160], n1[320], n2[320];
		if (e->v[i].missing || !calls_pair(e->v[i].name, caller, callee))
			continue;
		EvChange cr, ce;
		snprintf(n1, sizeof n1, "dep.%s.service.p90_ms", caller);
		if (!evidence_change(e, n1, &cr) || !(cr.d > 0))
			continue;
		snprintf(n2, sizeof n2, "dep.%s.service.p90_ms", callee);
		if (!evidence_change(e, n2, &ce)) {
			snprintf(n2, sizeof n2, "dep.%s.client.p90_ms", callee);
			if (!evidence_change(e, n2, &ce))
				continue;
		}
		double share = ce.d / cr.d;
		char nr[320];
		snprintf(nr, sizeof nr, "dep.%s.callee_rise_share", caller);
		double have;
		if (evidence_value(e, nr, &have) && have >= share)
			continue;
		ev_put(e, nr, share, "ratio", EV_SRC_DERIVED, EV_Q_NONE, 0, 0,
		       "derived: the p90 rise of %s (%+.1f ms) over the p90 rise of %s's server time "
		       "(%+.1f ms), which contains it", callee, ce.d, caller, cr.d);
	}
}

/* Splits a window value "caller.<s>.callee.<d>.client_wait.p90_ms" into
 * its caller and callee segments (96 bytes each); 0 for any other name. */
static int caller_pair(const char *nm, char *caller, char *callee)
{
	static const char tail[] = ".client_wait.p90_ms";
	size_t l = strlen(nm), tl = sizeof tail - 1;
	if (strncmp(nm, "caller.", 7) != 0 || l <= 7 + tl || strcmp(nm + l - tl, tail) != 0)
		return 0;
	const char *mid = strstr(nm + 7, ".callee.");
	if (mid == NULL || mid - (nm + 7) >= 96 || (size_t)(nm + l - tl - (mid + 8)) >= 96)
		return 0;
	snprintf(caller, 96, "%.*s", (int)(mid - (nm + 7)), nm + 7);
	snprintf(callee, 96, "%.*s", (int)(nm + l - tl - (mid + 8)), mid + 8);
	return *caller && *callee;
}

/* A caller starved of CPU, threads or event-loop time: per caller, how
 * many of its callees' client-side waits rose (p90 by half and 3 ms,
 * beyond noise) and how many did not (flat), and of those that rose, how
 * many grew on the caller's side: the server's p90 did not rise by half
 * of what the wait rose (flat, 3 ms at least), and how many servers did
 * rise that much (30 % too, beyond noise): caller.<s>.callees,
 * .waits_rose, .waits_flat, .starved and .servers_rose. A caller whose
 * waits rose toward two callees or more, and toward more than did not,
 * marks each of those callees dep.<d>.caller_starved = 1: their calls
 * waited because of the caller, not a pool in front of them. From the
 * per-callee values (evidence_caller.c, or a sheet). */
static void derive_callers(Evidence *e)
{
	typedef struct Cnt {
		char seg[96];
		int callees, rose, flat, starved, srv_rose;
		char rose_list[240], starved_list[240];
	} Cnt;
	Cnt *c = NULL;
	int nc = 0;
	for (int i = 0; i < e->n; i++) {
		char caller[96], callee[96], wn[360], sn[360];
		if (e->v[i].missing || !caller_pair(e->v[i].name, caller, callee))
			continue;
		snprintf(wn, sizeof wn, "caller.%s.callee.%s.client_wait.p90_ms", caller, callee);
		snprintf(sn, sizeof sn, "caller.%s.callee.%s.service.p90_ms", caller, callee);
		EvChange ch;
		if (!evidence_change(e, wn, &ch))
			continue;
		int k = 0;
		while (k < nc && strcmp(c[k].seg, caller) != 0)
			k++;
		if (k == nc) {
			c = xrealloc(c, (size_t)(nc + 1) * sizeof *c);
			memset(&c[nc], 0, sizeof *c);
			snprintf(c[nc].seg, sizeof c[nc].seg, "%s", caller);
			nc++;
		}
		Cnt *x = &c[k];
		x->callees++;
		int rose = evidence_rose(e, wn, 3, 1.5) == 1;
		/* the server's share of the call's growth: a callee beside a
		 * starved caller (on its host, in its load) may slow a little
		 * too, so what counts is where most of the time grew */
		double half = ch.d > 6 ? ch.d / 2 : 3;
		x->rose += rose;
		x->flat += evidence_flat(e, wn, 3, 1.5) == 1;
		x->srv_rose += evidence_rose(e, sn, half, 1.3) == 1;
		char item[140];
		snprintf(item, sizeof item, "%s%s %+.1f ms", *x->rose_list ? ", " : "", callee, ch.d);
		if (rose && strlen(x->rose_list) + strlen(item) < sizeof x->rose_list)
			strcat(x->rose_list, item);
		if (rose && evidence_flat(e, sn, half, 0) == 1) {
			x->starved++;
			snprintf(item, sizeof item, "%s%s", *x->starved_list ? ", " : "", callee);
			if (strlen(x->starved_list) + strlen(item) < sizeof x->starved_list)
				strcat(x->starved_list, item);
		}
	}
	for (int k = 0; k < nc; k++) {
		const Cnt *x = &c[k];
		char nm[200];
		snprintf(nm, sizeof nm, "caller.%s.callees", x->seg);
		ev_put(e, nm, x->callees, "count", EV_SRC_DERIVED, EV_Q_NONE, x->callees, 0,
		       "derived: callees of %s whose client-side wait p90 is known in window and "
		       "baseline (30 calls with a server span or more on each side)", x->seg);
		snprintf(nm, sizeof nm, "caller.%s.waits_rose", x->seg);
		ev_put(e, nm, x->rose, "count", EV_SRC_DERIVED, EV_Q_NONE, x->callees, 0,
		       "derived: of %d callees of %s, those whose client-side wait p90 rose by half and "
		       "3 ms beyond sampling noise%s%s", x->callees, x->seg, *x->rose_list ? ": " : "",
		       x->rose_list);
		snprintf(nm, sizeof nm, "caller.%s.waits_flat", x->seg);
		ev_put(e, nm, x->flat, "count", EV_SRC_DERIVED, EV_Q_NONE, x->callees, 0,
		       "derived: of %d callees of %s, those whose client-side wait p90 did not rise "
		       "(no rise of half and 3 ms fits its interval)", x->callees, x->seg);
		snprintf(nm, sizeof nm, "caller.%s.starved", x->seg);
		ev_put(e, nm, x->starved, "count", EV_SRC_DERIVED, EV_Q_NONE, x->callees, 0,
		       "derived: of the callees of %s whose wait rose, those whose own server p90 did "
		       "not rise by half as much (no such rise, 3 ms at least, fits its interval)%s%s",
		       x->seg,
		       *x->starved_list ? ": " : "", x->starved_list);
		snprintf(nm, sizeof nm, "caller.%s.servers_rose", x->seg);
		ev_put(e, nm, x->srv_rose, "count", EV_SRC_DERIVED, EV_Q_NONE, x->callees, 0,
		       "derived: of %d callees of %s, those whose own server p90 rose by 30 %% and by "
		       "half the rise of the wait (3 ms at least), beyond noise: the time went into the "
		       "callee", x->callees, x->seg);
		list_add_segment(&e->callers, &e->n_callers, x->seg, strlen(x->seg));
	}
	/* each callee of a starved caller, and the others compared */
	for (int i = 0; i < e->n; i++) {
		char caller[96], callee[96], wn[360], sn[360], dn[200];
		if (e->v[i].missing || !caller_pair(e->v[i].name, caller, callee))
			continue;
		int k = 0;
		while (k < nc && strcmp(c[k].seg, caller) != 0)
			k++;
		if (k == nc)
			continue;
		snprintf(wn, sizeof wn, "caller.%s.callee.%s.client_wait.p90_ms", caller, callee);
		snprintf(sn, sizeof sn, "caller.%s.callee.%s.service.p90_ms", caller, callee);
		EvChange ch;
		if (!evidence_change(e, wn, &ch))
			continue;
		int starved = c[k].starved >= 2 && c[k].rose > c[k].flat &&
		              evidence_rose(e, wn, 3, 1.5) == 1 &&
		              evidence_flat(e, sn, ch.d > 6 ? ch.d / 2 : 3, 0) == 1;
		snprintf(dn, sizeof dn, "dep.%s.caller_starved", callee);
		double have;
		if (evidence_value(e, dn, &have) && have >= starved)
			continue;
		if (starved)
			ev_put(e, dn, 1, "flag", EV_SRC_DERIVED, EV_Q_NONE, c[k].callees, 0,
			       "derived: its caller %s waits longer on %d callees together (%s) while "
			       "their server times did not rise: the caller is late, not a pool",
			       caller, c[k].starved, c[k].starved_list);
		else
			ev_put(e, dn, 0, "flag", EV_SRC_DERIVED, EV_Q_NONE, c[k].callees, 0,
			       "derived: its caller %s does not wait longer on several callees together "
			       "(%d of %d with a wait that rose and a steady server)",
			       caller, c[k].starved, c[k].callees);
	}
	free(c);
}

/* explained.max_service: the largest share of the rise any single
 * dependency's own server time explains (and which one, as a fact). */
static void derive_max_service(Evidence *e)
{
	double best = NAN, lo = NAN, hi = NAN;
	int has_ci = 0;
	int64_t n = 0;
	const char *who = NULL;
	for (int i = 0; i < e->n; i++) {
		const char *nm = e->v[i].name;
		size_t l = strlen(nm);
		static const char suf[] = ".service.explained";
		if (strncmp(nm, "dep.", 4) != 0 || l <= sizeof suf || e->v[i].missing ||
		    strcmp(nm + l - (sizeof suf - 1), suf) != 0)
			continue;
		if (isnan(best) || e->v[i].value > best) {
			best = e->v[i].value;
			who = nm;
			has_ci = e->v[i].has_ci;
			lo = e->v[i].lo;
			hi = e->v[i].hi;
			n = e->v[i].n;
		}
	}
	if (who == NULL)
		return;
	char dep[160];
	snprintf(dep, sizeof dep, "%.*s", (int)(strlen(who) - 4 - (sizeof ".service.explained" - 1)),
	         who + 4);
	/* the share's own interval comes with it: rules that weigh it against
	 * another share test both intervals, not two point estimates */
	EvValue *v = ev_put(e, "explained.max_service", best, "ratio", EV_SRC_DERIVED, EV_Q_NONE, n, 0,
	                    "derived: the largest share of the rise one dependency's own server time "
	                    "explains (%s)", dep);
	if (has_ci)
		ev_ci(v, lo, hi);
	ev_fact(e, "explained.top_service", dep);
}

void evidence_finish(Evidence *e)
{
	derive_callee(e);
	derive_max_service(e);
	derive_pool_skew(e);
	lists_from_names(e);
	derive_callers(e);
	derive_mix(e);
	derive_mix_top(e);
	derive_moved(e);
	derive_wait_rise(e);
	derive_ratio(e, "ingress.p99_change_ratio", "ingress.p99_ms", "ingress.p99_ms@baseline",
	             "window p99 / baseline p99 - 1");
	double w, b;
	const EvValue *mx = evidence_get(e, "mix.explained_ratio");
	if (mx && (mx->source == EV_SRC_SPANS || strncmp(mx->provenance, "spans:", 6) == 0)) {
		/* computed from the requests with its interval (ev_mix_explained) */
	} else if (evidence_value(e, "mix.p99_reweighted_ms", &w) &&
	           evidence_value(e, "ingress.p99_ms", &b)) {
		double base;
		if (evidence_value(e, "ingress.p99_ms@baseline", &base) && b - base > 0.05 * base)
			ev_put(e, "mix.explained_ratio", (w - base) / (b - base), "ratio", EV_SRC_DERIVED,
			       EV_Q_NONE, 0, 0,
			       "derived: (reweighted p99 - baseline p99) / (window p99 - baseline p99)");
		else
			ev_missing(e, "mix.explained_ratio", "ratio",
			           "derived: the p99 did not rise by 5 % or more; nothing to explain");
	}
	if (e->n > 1)
		qsort(e->v, (size_t)e->n, sizeof *e->v, cmp_value);
}

/* ---- compute ---------------------------------------------------------------- */

int evidence_compute(Store *st, const EvidenceOptions *opt, Evidence **out, Err *err)
{
	*out = NULL;
	Evidence *e = evidence_new();
	Analysis *own = NULL;
	int rc = 0;
	if (opt->model)
		from_model(e, opt->model);
	if (st && !opt->skip_spans) {
		const Analysis *a = opt->analysis;
		if (a == NULL) {
			AnalysisOptions ao = {
			    .period = opt->period,
			    .model = opt->model, .skew = opt->skew,
			};
			if ((rc = analysis_run(st, &ao, &own, err)))
				goto fail;
			a = own;
		}
		from_analysis(e, a, opt->model);
		if (!opt->skip_requests && (rc = ev_requests(st, opt, a, e, err)))
			goto fail;
		/* the pulled slowest sets' exact percentiles, after the
		 * attribution (it replays the sample) */
		if ((rc = ev_top(st, opt, a, e, err)))
			goto fail;
	}
	if (st && (rc = ev_metrics(st, opt, own ? own : opt->analysis, e, err)))
		goto fail;
	analysis_free(own);
	evidence_finish(e);
	*out = e;
	return 0;
fail:
	analysis_free(own);
	evidence_free(e);
	return rc;
}
