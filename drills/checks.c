/*
 * checks.c - the discriminating checks (see checks.h). Each reads the
 * requests of the window (and baseline) through evidence_requests_load(),
 * so the numbers agree with the evidence the hypotheses were ranked on;
 * pool, executor and CPU metrics come from evidence_compute() with spans
 * skipped. Quantiles are exact nearest rank with the count shown; figures
 * from fewer than 30 requests are marked with '~'.
 */
#include "checks.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drills_priv.h"
#include "evidence_name.h"
#include "evidence.h"
#include "timefmt.h"
#include "sanitize.h"

typedef int (*CheckFn)(Store *st, const CheckOptions *o, EvRequestSet *w, EvRequestSet *b,
                       CheckTable *t, Err *err);

/* ---- table building ----------------------------------------------------- */

static void set_cols(CheckTable *t, int n, ...)
{
	va_list ap;
	va_start(ap, n);
	t->cols = xcalloc((size_t)n, sizeof *t->cols);
	for (int i = 0; i < n; i++)
		t->cols[i] = xstrdup(va_arg(ap, const char *));
	t->n_cols = n;
	va_end(ap);
}

/* Appends a row from n_cols strings. */
static void add_row(CheckTable *t, char cells[][48])
{
	t->cells = xrealloc(t->cells, (size_t)(t->n_rows + 1) * (size_t)t->n_cols * sizeof *t->cells);
	for (int i = 0; i < t->n_cols; i++)
		t->cells[t->n_rows * t->n_cols + i] = xstrdup(cells[i]);
	t->n_rows++;
}

static void note(CheckTable *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(CheckTable *t, const char *fmt, ...)
{
	char s[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s, sizeof s, fmt, ap);
	va_end(ap);
	if (t->note == NULL) {
		t->note = xstrdup(s);
		return;
	}
	size_t n = strlen(t->note) + strlen(s) + 2;
	char *x = xmalloc(n);
	snprintf(x, n, "%s\n%s", t->note, s);
	free(t->note);
	t->note = x;
}

void check_table_free(CheckTable *t)
{
	if (t == NULL)
		return;
	free(t->name);
	free(t->question);
	for (int i = 0; i < t->n_cols; i++)
		free(t->cols[i]);
	free(t->cols);
	for (int i = 0; i < t->n_rows * t->n_cols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t->note);
	free(t);
}

/* ---- number formatting ------------------------------------------------------ */

static void f_ms(char *o, double v)
{
	if (isnan(v))
		snprintf(o, 48, "?");
	else
		snprintf(o, 48, "%.1f", v);
}

static void f_pct(char *o, double v, int64_t n)
{
	if (isnan(v) || n == 0)
		snprintf(o, 48, "?");
	else
		snprintf(o, 48, "%s%.1f%%", n < 30 ? "~" : "", 100 * v);
}

static void f_num(char *o, double v, int64_t n)
{
	if (isnan(v) || n == 0)
		snprintf(o, 48, "?");
	else
		snprintf(o, 48, "%s%.2f", n < 30 ? "~" : "", v);
}

static void f_int(char *o, int64_t v)
{
	snprintf(o, 48, "%lld", (long long)v);
}

static void f_str(char *o, const char *s)
{
	san_clean(s ? s : "", o, 48);
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

/* Nearest-rank p-quantile of v (sorted in place); NAN when n == 0. */
static double qrank(float *v, int64_t n, double p)
{
	if (n <= 0)
		return NAN;
	qsort(v, (size_t)n, sizeof *v, cmp_float);
	int64_t r = (int64_t)ceil(p / 100.0 * (double)n);
	if (r < 1)
		r = 1;
	if (r > n)
		r = n;
	return v[r - 1];
}

/* ---- helpers over request sets ------------------------------------------- */

static int set_index(char **list, int n, const char *name)
{
	if (name == NULL)
		return -1;
	char a[96], b[96];
	evidence_segment(name, a, sizeof a);
	for (int i = 0; i < n; i++) {
		if (strcmp(list[i], name) == 0)
			return i;
		evidence_segment(list[i], b, sizeof b);
		if (strcmp(a, b) == 0)
			return i;
	}
	return -1;
}

/* The class filter of set s: -2 all requests (cls NULL), -3 none (the set
 * has no request of class cls), else the class index. */
static int class_filter(const EvRequestSet *s, const char *cls)
{
	if (cls == NULL)
		return -2;
	int c = set_index(s->classes, s->n_classes, cls);
	return c < 0 ? -3 : c;
}

/* Request i of s passes filter cf (from class_filter). */
static int in_class(const EvRequestSet *s, int64_t i, int cf)
{
	return cf == -2 || (cf >= 0 && s->r[i].cls == cf);
}

typedef struct CallStats {
	int64_t calls, requests;
	double in_flight_ms, waiting_ms;
	double wait_p99, svc_p99, client_p99;
	int64_t n_wait, serial, errors, retries;
} CallStats;

/* Calls to dependency name (NULL set: none) of requests of class cls (-2:
 * all). */
static void call_stats(const EvRequestSet *s, const char *dep, const char *cls, CallStats *cs)
{
	memset(cs, 0, sizeof *cs);
	cs->wait_p99 = cs->svc_p99 = cs->client_p99 = NAN;
	if (s == NULL)
		return;
	int d = set_index(s->deps, s->n_deps, dep);
	int c = cls ? set_index(s->classes, s->n_classes, cls) : -2;
	if (cls && c < 0)
		return;
	for (int64_t i = 0; i < s->n; i++)
		if (c == -2 || s->r[i].cls == c)
			cs->requests++;
	if (d < 0)
		return;
	float *w = xmalloc((size_t)(s->n_calls + 1) * sizeof *w);
	float *sv = xmalloc((size_t)(s->n_calls + 1) * sizeof *sv);
	float *cl = xmalloc((size_t)(s->n_calls + 1) * sizeof *cl);
	int64_t nw = 0, ns = 0;
	for (int64_t k = 0; k < s->n_calls; k++) {
		const EvCall *x = &s->calls[k];
		if (x->dep != d || (c != -2 && s->r[x->req].cls != c))
			continue;
		cl[cs->calls++] = x->total_ms;
		cs->in_flight_ms += x->total_ms;
		double waiting = (isnan(x->wait_ms) ? 0 : x->wait_ms) + (isnan(x->queue_ms) ? 0 : x->queue_ms);
		cs->waiting_ms += waiting;
		if (!isnan(x->wait_ms) || !isnan(x->queue_ms))
			w[nw++] = (float)waiting;
		if (!isnan(x->service_ms))
			sv[ns++] = x->service_ms;
		cs->serial += x->serial;
		cs->errors += x->error;
		cs->retries += x->retry;
	}
	cs->n_wait = nw;
	cs->wait_p99 = qrank(w, nw, 99);
	cs->svc_p99 = qrank(sv, ns, 99);
	cs->client_p99 = qrank(cl, cs->calls, 99);
	free(w);
	free(sv);
	free(cl);
}

static double span_s(const EvRequestSet *s)
{
	int64_t a = s->from_ns != INT64_MIN ? s->from_ns : s->first_ns;
	int64_t b = s->to_ns != INT64_MAX ? s->to_ns : s->last_ns;
	double d = (double)(b - a) / 1e9;
	return d > 0.001 ? d : 1;
}

/* The dependency with the highest client wait p99 (10 calls or more). */
static const char *busiest_dep(const EvRequestSet *s)
{
	const char *best = NULL;
	double bv = -1;
	for (int d = 0; d < s->n_deps; d++) {
		CallStats cs;
		call_stats(s, s->deps[d], NULL, &cs);
		if (cs.calls >= 10 && !isnan(cs.wait_p99) && cs.wait_p99 > bv) {
			bv = cs.wait_p99;
			best = s->deps[d];
		}
	}
	return best;
}

/* Metric evidence (model + metrics only) for notes. */
static Evidence *metric_evidence(Store *st, const CheckOptions *o)
{
	EvidenceOptions eo = {.model = o->model, .period = o->period, .skip_spans = 1};
	Evidence *e = NULL;
	Err err = {0};
	if (evidence_compute(st, &eo, &e, &err))
		return NULL;
	return e;
}

static void note_value(CheckTable *t, const Evidence *e, const char *name, const char *label)
{
	const EvValue *v = evidence_get(e, name);
	if (v == NULL || v->missing)
		return;
	if (strcmp(v->unit, "ratio") == 0)
		note(t, "%s: %.1f %% (%s)", label, 100 * v->value, v->provenance);
	else
		note(t, "%s: %.2f %s (%s)", label, v->value, v->unit, v->provenance);
}

/* ---- the checks ---------------------------------------------------------------- */

static int ck_pool_by_class(Store *st, const CheckOptions *o, EvRequestSet *w, EvRequestSet *b,
                            CheckTable *t, Err *err)
{
	const char *dep = o->node;
	if (dep == NULL && (dep = busiest_dep(w)) == NULL)
		return err_set(err, TT_EINVAL, "pool-by-class: no dependency with 10 calls; give --node");
	if (set_index(w->deps, w->n_deps, dep) < 0)
		return err_set(err, TT_ENOTFOUND, "pool-by-class: no calls to '%s' in the window", dep);
	set_cols(t, 10, "class", "requests", "calls/req", "active", "pending", "waiting", "wait p99",
	         "svc p99", "base wait p99", "base calls/req");
	double secs = span_s(w);
	for (int c = -1; c < w->n_classes; c++) {
		const char *cls = c < 0 ? NULL : w->classes[c];
		if (cls && o->wclass && c != class_filter(w, o->wclass))
			continue;
		CallStats cs, bs;
		call_stats(w, dep, cls, &cs);
		call_stats(b, dep, cls, &bs);
		char cell[10][48];
		f_str(cell[0], cls ? cls : "all");
		f_int(cell[1], cs.requests);
		f_num(cell[2], cs.requests ? (double)cs.calls / (double)cs.requests : NAN, cs.requests);
		f_num(cell[3], cs.in_flight_ms / 1000 / secs, cs.calls);
		f_num(cell[4], cs.waiting_ms / 1000 / secs, cs.calls);
		f_pct(cell[5], cs.in_flight_ms > 0 ? cs.waiting_ms / cs.in_flight_ms : NAN, cs.calls);
		f_ms(cell[6], cs.wait_p99);
		f_ms(cell[7], cs.svc_p99);
		f_ms(cell[8], b ? bs.wait_p99 : NAN);
		f_num(cell[9], b && bs.requests ? (double)bs.calls / (double)bs.requests : NAN, bs.requests);
		add_row(t, cell);
	}
	note(t, "dependency %s; active = mean calls in flight, pending = mean calls waiting (client "
	        "wait + pool wait), from sampled spans by Little's law over %.0f s: compare classes, "
	        "not absolute values", dep, secs);
	if (o->wclass)
		note(t, "rows: all classes, then class %s", o->wclass);
	Evidence *e = metric_evidence(st, o);
	if (e) {
		const char *pool = dx_pool_of(o->model, dep);
		char n1[200];
		static const char *const parts[] = {"occupancy", "occupancy_host_max", "pending",
		                                    "pending_host_max", "wait.p99_ms"};
		for (int i = 0; i < 5; i++) {
			evidence_name(n1, sizeof n1, "pool", pool ? pool : dep, parts[i], 0);
			note_value(t, e, n1, n1);
			evidence_name(n1, sizeof n1, "pool", pool ? pool : dep, parts[i], 1);
			note_value(t, e, n1, n1);
		}
		evidence_free(e);
	}
	return 0;
}

static int ck_fanout_by_class(Store *st, const CheckOptions *o, EvRequestSet *w, EvRequestSet *b,
                              CheckTable *t, Err *err)
{
	(void)st, (void)err;
	set_cols(t, 8, "class", "requests", "share", "base share", "calls/req", "base calls/req",
	         "width", "base width");
	for (int c = -1; c < w->n_classes; c++) {
		const char *cls = c < 0 ? NULL : w->classes[c];
		if (cls && o->wclass && c != class_filter(w, o->wclass))
			continue;
		int64_t n[2] = {0, 0}, calls[2] = {0, 0}, width[2] = {0, 0}, tot[2] = {0, 0};
		EvRequestSet *s2[2] = {w, b};
		for (int p = 0; p < 2; p++) {
			const EvRequestSet *s = s2[p];
			if (s == NULL)
				continue;
			int ci = cls ? set_index(s->classes, s->n_classes, cls) : -2;
			tot[p] = s->n;
			for (int64_t i = 0; i < s->n; i++) {
				if (ci != -2 && s->r[i].cls != ci)
					continue;
				n[p]++;
				calls[p] += s->r[i].calls;
				width[p] += s->r[i].width;
			}
		}
		char cell[8][48];
		f_str(cell[0], cls ? cls : "all");
		f_int(cell[1], n[0]);
		f_pct(cell[2], tot[0] ? (double)n[0] / (double)tot[0] : NAN, tot[0]);
		f_pct(cell[3], tot[1] ? (double)n[1] / (double)tot[1] : NAN, tot[1]);
		f_num(cell[4], n[0] ? (double)calls[0] / (double)n[0] : NAN, n[0]);
		f_num(cell[5], n[1] ? (double)calls[1] / (double)n[1] : NAN, n[1]);
		f_num(cell[6], n[0] ? (double)width[0] / (double)n[0] : NAN, n[0]);
		f_num(cell[7], n[1] ? (double)width[1] / (double)n[1] : NAN, n[1]);
		add_row(t, cell);
	}
	note(t, "calls/req: client calls per request (retries included); width: mean largest group "
	        "of overlapping calls; '~': fewer than 30 requests");
	if (o->wclass)
		note(t, "rows: all classes, then class %s", o->wclass);
	return 0;
}

/* Herfindahl of the tail over hosts / its value if the tail followed
 * traffic. */
static double concentration(const EvRequestSet *s, const char *cls)
{
	if (s == NULL || s->n_hosts < 2)
		return NAN;
	int cf = class_filter(s, cls);
	int64_t *hr = xcalloc((size_t)s->n_hosts, sizeof *hr), *hs = xcalloc((size_t)s->n_hosts, sizeof *hs);
	int64_t n = 0, k = 0;
	for (int64_t i = 0; i < s->n; i++)
		if (s->r[i].host >= 0 && in_class(s, i, cf)) {
			hr[s->r[i].host]++;
			hs[s->r[i].host] += s->r[i].slow;
			n++;
			k += s->r[i].slow;
		}
	double all = 0, slow = 0;
	for (int h = 0; h < s->n_hosts && n && k; h++) {
		all += ((double)hr[h] / (double)n) * ((double)hr[h] / (double)n);
		slow += ((double)hs[h] / (double)k) * ((double)hs[h] / (double)k);
	}
	free(hr);
	free(hs);
	if (!n || !k)
		return NAN;
	return slow / (all + (1 - all) / (double)k);
}

typedef struct HostRow {
	int h;
	int64_t req, tail;
	double lift;
} HostRow;

/* The hosts of the check, for cmp_host's last tie-break. */
static char **g_host_names;

/* Highest lift first, then most requests, then by name: a stated order
 * that does not change between runs. */
static int cmp_host(const void *x, const void *y)
{
	const HostRow *a = x, *b = y;
	if (a->lift != b->lift)
		return a->lift < b->lift ? 1 : -1;
	if (a->req != b->req)
		return (a->req < b->req) - (a->req > b->req);
	return strcmp(g_host_names[a->h], g_host_names[b->h]);
}

#define HOST_ROWS 15  /* hosts listed; the rest are counted */

static int ck_host_concentration(Store *st, const CheckOptions *o, EvRequestSet *w,
                                 EvRequestSet *b, CheckTable *t, Err *err)
{
	(void)st, (void)err;
	set_cols(t, 7, "host", "requests", "req share", "tail", "tail share", "lift", "base lift");
	int wf = class_filter(w, o->wclass), bf = b ? class_filter(b, o->wclass) : -3;
	int64_t n = 0, k = 0;
	for (int64_t i = 0; i < w->n; i++)
		if (w->r[i].host >= 0 && in_class(w, i, wf)) {
			n++;
			k += w->r[i].slow;
		}
	HostRow *rows = xcalloc((size_t)(w->n_hosts + 1), sizeof *rows);
	for (int h = 0; h < w->n_hosts; h++)
		rows[h].h = h;
	for (int64_t i = 0; i < w->n; i++)
		if (w->r[i].host >= 0 && in_class(w, i, wf)) {
			rows[w->r[i].host].req++;
			rows[w->r[i].host].tail += w->r[i].slow;
		}
	for (int h = 0; h < w->n_hosts; h++)
		rows[h].lift = rows[h].req && k ? ((double)rows[h].tail / (double)k) /
		                                      ((double)rows[h].req / (double)n)
		                                : 0;
	g_host_names = w->hosts;
	qsort(rows, (size_t)w->n_hosts, sizeof *rows, cmp_host);
	for (int i = 0; i < w->n_hosts && i < HOST_ROWS; i++) {
		const HostRow *r = &rows[i];
		double blift = NAN;
		int64_t bn = 0;
		if (b) {
			int bh = set_index(b->hosts, b->n_hosts, w->hosts[r->h]);
			int64_t bk = 0, breq = 0, btail = 0;
			for (int64_t j = 0; j < b->n; j++)
				if (b->r[j].host >= 0 && in_class(b, j, bf)) {
					bn++;
					bk += b->r[j].slow;
					if (b->r[j].host == bh) {
						breq++;
						btail += b->r[j].slow;
					}
				}
			if (bh >= 0 && breq && bk)
				blift = ((double)btail / (double)bk) / ((double)breq / (double)bn);
		}
		char cell[7][48];
		f_str(cell[0], w->hosts[r->h]);
		f_int(cell[1], r->req);
		f_pct(cell[2], n ? (double)r->req / (double)n : NAN, n);
		f_int(cell[3], r->tail);
		f_pct(cell[4], k ? (double)r->tail / (double)k : NAN, k);
		f_num(cell[5], r->lift, r->req);
		f_num(cell[6], blift, bn);
		add_row(t, cell);
	}
	free(rows);
	/* no index without two hosts and a tail: said as "n/a", never "nan" */
	double ci[2] = {concentration(w, o->wclass), concentration(b, o->wclass)};
	char cs[2][32];
	for (int i = 0; i < 2; i++)
		if (isnan(ci[i]))
			snprintf(cs[i], sizeof cs[i], "n/a");
		else
			snprintf(cs[i], sizeof cs[i], "%.2f", ci[i]);
	note(t, "%s", "rows: highest lift first, then most requests");
	if (w->n_hosts > HOST_ROWS)
		note(t, "%d more host%s, lower lift, not listed", w->n_hosts - HOST_ROWS,
		     w->n_hosts - HOST_ROWS == 1 ? "" : "s");
	char tail[96];
	if (isnan(w->tail_threshold_ms))
		snprintf(tail, sizeof tail, "none (too few requests to mark one)");
	else
		snprintf(tail, sizeof tail, "requests at or above %.1f ms (%lld)", w->tail_threshold_ms,
		         (long long)k);
	note(t, "tail: %s; lift = tail share / request share; "
	        "concentration index %s window, %s baseline (1 = the tail follows traffic)",
	     tail, cs[0], cs[1]);
	if (o->wclass)
		note(t, "requests of class %s only (the tail threshold is that of all requests)",
		     o->wclass);
	return 0;
}

static int ck_client_vs_server(Store *st, const CheckOptions *o, EvRequestSet *w, EvRequestSet *b,
                               CheckTable *t, Err *err)
{
	(void)st, (void)err;
	set_cols(t, 11, "dependency", "calls/req", "client p99", "wait p99", "svc p99", "base client",
	         "base wait", "base svc", "serial", "errors", "attempts");
	int rows = 0;
	for (int d = 0; d < w->n_deps; d++) {
		if (o->node && set_index(w->deps + d, 1, o->node) != 0)
			continue;
		CallStats cs, bs;
		call_stats(w, w->deps[d], o->wclass, &cs);
		call_stats(b, w->deps[d], o->wclass, &bs);
		char cell[11][48];
		f_str(cell[0], w->deps[d]);
		f_num(cell[1], cs.requests ? (double)cs.calls / (double)cs.requests : NAN, cs.requests);
		f_ms(cell[2], cs.client_p99);
		f_ms(cell[3], cs.wait_p99);
		f_ms(cell[4], cs.svc_p99);
		f_ms(cell[5], bs.client_p99);
		f_ms(cell[6], bs.wait_p99);
		f_ms(cell[7], bs.svc_p99);
		f_pct(cell[8], cs.calls ? (double)cs.serial / (double)cs.calls : NAN, cs.calls);
		f_pct(cell[9], cs.calls ? (double)cs.errors / (double)cs.calls : NAN, cs.calls);
		f_num(cell[10], cs.calls > cs.retries ? (double)cs.calls / (double)(cs.calls - cs.retries)
		                                      : NAN, cs.calls);
		add_row(t, cell);
		rows++;
	}
	if (o->node && rows == 0)
		return err_set(err, TT_ENOTFOUND, "client-vs-server: no calls to '%s' in the window",
		               o->node);
	note(t, "p99 in ms, exact nearest rank; wait = client span minus server span plus pool wait "
	        "before the call; a large wait with a flat svc p99 points in front of the dependency%s%s",
	     o->wclass ? "; class " : "", o->wclass ? o->wclass : "");
	return 0;
}

/* Splits a set into nb time buckets; fills idx (bucket per request). */
static int buckets(const EvRequestSet *s, int *nb, int64_t *t0, int64_t *step)
{
	int n = (int)(s->n / 20);
	if (n > 10)
		n = 10;
	if (n < 1)
		n = 1;
	*nb = n;
	*t0 = s->first_ns;
	int64_t span = s->last_ns - s->first_ns + 1;
	*step = span / n + 1;
	return 0;
}

/* Row label of bucket k of buckets(): its start time, or "baseline" for
 * the row after the last (k == nb). */
static void bucket_label(char *o, int k, int nb, int64_t t0, int64_t step)
{
	char ts[40];
	if (k < nb)
		time_format(t0 + k * step, ts, sizeof ts);
	f_str(o, k < nb ? ts : "baseline");
}

static int ck_class_mix(Store *st, const CheckOptions *o, EvRequestSet *w, EvRequestSet *b,
                        CheckTable *t, Err *err)
{
	(void)st, (void)o, (void)err;
	int nc = w->n_classes < 8 ? w->n_classes : 8;
	t->n_cols = 2 + nc;
	t->cols = xcalloc((size_t)t->n_cols, sizeof *t->cols);
	t->cols[0] = xstrdup("from");
	t->cols[1] = xstrdup("requests");
	for (int c = 0; c < nc; c++)
		t->cols[2 + c] = xstrdup(w->classes[c]);
	int nb;
	int64_t t0, step;
	buckets(w, &nb, &t0, &step);
	for (int k = 0; k <= nb; k++) {
		const EvRequestSet *s = k < nb ? w : b;
		if (s == NULL)
			break;
		int64_t n = 0, *per = xcalloc((size_t)(nc ? nc : 1), sizeof *per);
		for (int64_t i = 0; i < s->n; i++) {
			if (k < nb && (s->r[i].start_ns - t0) / step != k)
				continue;
			n++;
			if (s->r[i].cls < 0)
				continue;
			int c = set_index(w->classes, nc, s->classes[s->r[i].cls]);
			if (c >= 0)
				per[c]++;
		}
		char cell[10][48];
		bucket_label(cell[0], k, nb, t0, step);
		f_int(cell[1], n);
		for (int c = 0; c < nc; c++)
			f_pct(cell[2 + c], n ? (double)per[c] / (double)n : NAN, n);
		add_row(t, cell);
		free(per);
	}
	note(t, "share of requests per class in %d time buckets of the window%s", nb,
	     b ? ", then the whole baseline" : "");
	return 0;
}

static int ck_late_work(Store *st, const CheckOptions *o, EvRequestSet *w, EvRequestSet *b,
                        CheckTable *t, Err *err)
{
	(void)st, (void)err;
	set_cols(t, 5, "from", "requests", "late work", "omitted", "ingress p99");
	int nb;
	int64_t t0, step;
	buckets(w, &nb, &t0, &step);
	for (int k = 0; k <= nb; k++) {
		const EvRequestSet *s = k < nb ? w : b;
		if (s == NULL)
			break;
		int64_t n = 0, late = 0, om = 0;
		int cf = class_filter(s, o->wclass);
		float *v = xmalloc((size_t)(s->n + 1) * sizeof *v);
		for (int64_t i = 0; i < s->n; i++) {
			if (k < nb && (s->r[i].start_ns - t0) / step != k)
				continue;
			if (!in_class(s, i, cf))
				continue;
			v[n++] = s->r[i].ingress_ms;
			late += s->r[i].late != 0;
			om += s->r[i].omitted;
		}
		char cell[5][48];
		bucket_label(cell[0], k, nb, t0, step);
		f_int(cell[1], n);
		f_pct(cell[2], n ? (double)late / (double)n : NAN, n);
		f_pct(cell[3], n ? (double)om / (double)n : NAN, n);
		f_ms(cell[4], qrank(v, n, 99));
		free(v);
		add_row(t, cell);
	}
	note(t, "late work: a request whose calls outlived it, whose server outlived the call, or "
	        "that started a call after its deadline; omitted: an optional branch failed or was "
	        "skipped");
	if (o->wclass)
		note(t, "requests of class %s only", o->wclass);
	return 0;
}

static int ck_endpoint_queue(Store *st, const CheckOptions *o, EvRequestSet *w, EvRequestSet *b,
                             CheckTable *t, Err *err)
{
	(void)b, (void)err;
	set_cols(t, 6, "host", "requests", "queue p99", "ingress p99", "late work", "cpu");
	Evidence *e = metric_evidence(st, o);
	int nh = w->n_hosts, cf = class_filter(w, o->wclass);
	for (int h = -1; h < nh && h < 40; h++) {
		float *q = xmalloc((size_t)(w->n + 1) * sizeof *q), *in = xmalloc((size_t)(w->n + 1) * sizeof *in);
		int64_t n = 0, nq = 0, late = 0;
		for (int64_t i = 0; i < w->n; i++) {
			if ((h >= 0 && w->r[i].host != h) || !in_class(w, i, cf))
				continue;
			in[n++] = w->r[i].ingress_ms;
			late += w->r[i].late != 0;
			if (!isnan(w->r[i].queue_ms))
				q[nq++] = w->r[i].queue_ms;
		}
		char cell[6][48];
		f_str(cell[0], h < 0 ? "all" : w->hosts[h]);
		f_int(cell[1], n);
		f_ms(cell[2], qrank(q, nq, 99));
		f_ms(cell[3], qrank(in, n, 99));
		f_pct(cell[4], n ? (double)late / (double)n : NAN, n);
		double cpu = NAN;
		char cn[200];
		if (h < 0) {
			snprintf(cn, sizeof cn, "cpu.fleet_mean");
		} else {
			evidence_name(cn, sizeof cn, "cpu.host", w->hosts[h], NULL, 0);
		}
		if (e == NULL || !evidence_value(e, cn, &cpu))
			cpu = NAN;
		if (isnan(cpu))
			snprintf(cell[5], 48, "?");
		else
			snprintf(cell[5], 48, "%.0f%%", 100 * cpu);
		free(q);
		free(in);
		add_row(t, cell);
	}
	note(t, "queue: wait before the root span, when the spans carry it ('?' when they do not); "
	        "cpu: mean utilization over the window from metrics ('?' without them)");
	if (o->wclass)
		note(t, "queue, ingress and late work: requests of class %s only; cpu and the "
		        "metrics below: all requests", o->wclass);
	if (e) {
		note_value(t, e, "executor.occupancy", "executor occupancy");
		note_value(t, e, "executor.occupancy@baseline", "executor occupancy (baseline)");
		note_value(t, e, "endpoint.queue_age.p99_ms", "queue age p99 (metric)");
		note_value(t, e, "cpu.fleet_mean", "fleet CPU");
		note_value(t, e, "cpu.host_max", "busiest host CPU");
		note_value(t, e, "cpu.fleet_mean@baseline", "fleet CPU (baseline)");
		evidence_free(e);
	}
	return 0;
}

/* ---- registry ------------------------------------------------------------------- */

typedef struct CheckDef {
	const char *name;
	const char *question;
	CheckFn fn;
	int takes_class;             /* honours CheckOptions.wclass */
} CheckDef;

static const CheckDef CHECKS[] = {
	{"pool-by-class", "Which class holds the pool in front of a dependency, and how much is waiting?",
	 ck_pool_by_class, 1},
	{"fanout-by-class", "How many calls does a request of each class make, now and before?",
	 ck_fanout_by_class, 1},
	{"host-concentration", "Do the slow requests concentrate on a few hosts?",
	 ck_host_concentration, 1},
	{"client-vs-server", "Is the time spent inside each dependency or in front of it?",
	 ck_client_vs_server, 1},
	{"class-mix", "Did the class mix change, and when?", ck_class_mix, 0},
	{"late-work", "Is work outliving its requests, and is it growing?", ck_late_work, 1},
	{"endpoint-queue", "Do requests queue for the endpoint itself, on which hosts?",
	 ck_endpoint_queue, 1},
};

#define N_CHECKS ((int)(sizeof CHECKS / sizeof CHECKS[0]))

const char *const *check_names(void)
{
	static const char *names[N_CHECKS + 1];
	if (names[0] == NULL)
		for (int i = 0; i < N_CHECKS; i++)
			names[i] = CHECKS[i].name;
	return names;
}

int check_takes_class(const char *name)
{
	for (int i = 0; i < N_CHECKS; i++)
		if (strcmp(CHECKS[i].name, name) == 0)
			return CHECKS[i].takes_class;
	return 0;
}

void check_class_names(char *out, size_t sz)
{
	size_t len = 0;
	out[0] = '\0';
	for (int i = 0; i < N_CHECKS; i++) {
		if (!CHECKS[i].takes_class)
			continue;
		int n = snprintf(out + len, sz - len, "%s%s", len ? ", " : "", CHECKS[i].name);
		if (n < 0 || (size_t)n >= sz - len)
			return;
		len += (size_t)n;
	}
}

const char *check_question(const char *name)
{
	for (int i = 0; i < N_CHECKS; i++)
		if (strcmp(CHECKS[i].name, name) == 0)
			return CHECKS[i].question;
	return NULL;
}

int check_run(Store *st, const char *name, const CheckOptions *o, CheckTable **out, Err *err)
{
	*out = NULL;
	const CheckDef *def = NULL;
	for (int i = 0; i < N_CHECKS; i++)
		if (strcmp(CHECKS[i].name, name) == 0)
			def = &CHECKS[i];
	if (def == NULL) {
		char list[512] = "";
		for (int i = 0; i < N_CHECKS; i++)
			snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
			         CHECKS[i].name);
		return err_set(err, TT_ENOTFOUND, "unknown check '%s' (known: %s)", name, list);
	}
	if (o && o->wclass && !def->takes_class) {
		char list[256];
		check_class_names(list, sizeof list);
		return err_set(err, TT_EINVAL, "check %s compares all classes and takes no class "
		               "(checks that take one: %s)", name, list);
	}
	if (st == NULL)
		return err_set(err, TT_EINVAL, "check %s needs a database with telemetry", name);
	EvRequestSet *w = NULL, *b = NULL;
	const Period *pd = &o->period;
	int rc = evidence_requests_load(st, o->model, o->ep_service, o->ep_route, pd->win.from,
	                                pd->win.to, NULL, &w, err);
	if (rc == 0 && pd->has_baseline)
		rc = evidence_requests_load(st, o->model, o->ep_service, o->ep_route, pd->base.from,
		                            pd->base.to, NULL, &b, err);
	if (rc == 0 && w->n == 0)
		rc = err_set(err, TT_ENOTFOUND, "check %s: no requests of the endpoint in the window", name);
	CheckTable *t = NULL;
	if (rc == 0) {
		t = xcalloc(1, sizeof *t);
		t->name = xstrdup(def->name);
		t->question = xstrdup(def->question);
		rc = def->fn(st, o, w, b, t, err);
	}
	evidence_requests_free(w);
	evidence_requests_free(b);
	if (rc) {
		check_table_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

/* ---- rendering ---------------------------------------------------------------- */

void check_table_text(const CheckTable *t, Buf *out)
{
	buf_printf(out, "%s: %s\n\n", t->name, t->question);
	int *w = xcalloc((size_t)t->n_cols, sizeof *w);
	for (int c = 0; c < t->n_cols; c++) {
		w[c] = (int)strlen(t->cols[c]);
		for (int r = 0; r < t->n_rows; r++) {
			int l = (int)strlen(t->cells[r * t->n_cols + c]);
			if (l > w[c])
				w[c] = l;
		}
	}
	for (int c = 0; c < t->n_cols; c++)
		buf_printf(out, c == 0 ? "%-*s" : "  %*s", w[c], t->cols[c]);
	buf_adds(out, "\n");
	for (int r = 0; r < t->n_rows; r++) {
		for (int c = 0; c < t->n_cols; c++)
			buf_printf(out, c == 0 ? "%-*s" : "  %*s", w[c], t->cells[r * t->n_cols + c]);
		buf_adds(out, "\n");
	}
	if (t->note)
		buf_printf(out, "\n%s\n", t->note);
	free(w);
}

void check_table_json(const CheckTable *t, Buf *out)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "check", t->name);
	cJSON_AddStringToObject(o, "question", t->question);
	cJSON *cols = cJSON_AddArrayToObject(o, "columns");
	for (int c = 0; c < t->n_cols; c++)
		cJSON_AddItemToArray(cols, cJSON_CreateString(t->cols[c]));
	cJSON *rows = cJSON_AddArrayToObject(o, "rows");
	for (int r = 0; r < t->n_rows; r++) {
		cJSON *row = cJSON_CreateArray();
		for (int c = 0; c < t->n_cols; c++)
			cJSON_AddItemToArray(row, cJSON_CreateString(t->cells[r * t->n_cols + c]));
		cJSON_AddItemToArray(rows, row);
	}
	if (t->note)
		cJSON_AddStringToObject(o, "note", t->note);
	else
		cJSON_AddNullToObject(o, "note");
	char *s = cJSON_Print(o);
	buf_adds(out, s);
	buf_adds(out, "\n");
	cJSON_free(s);
	cJSON_Delete(o);
}
