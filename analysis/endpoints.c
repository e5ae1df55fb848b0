/*
 * endpoints.c - the endpoints of a window and baseline, ranked (see
 * endpoints.h).
 *
 * One pass per population over the index of root spans: a SERVER root is
 * its trace's entry, so its (service, route), latency and status are
 * there; the other roots' traces are read whole and linked
 * (trace_link_entry()) to find theirs. Every request's latency at ingress
 * (the entry's duration plus the queue before it, as the analysis takes
 * it) goes into its endpoint's list; the quantiles are exact, with the
 * order-statistic intervals of quantile.h.
 */
#include "endpoints.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "hash.h"
#include "route.h"
#include "trace_build.h"

typedef struct Acc {
	char *service, *route;
	double *ms[2];             /* latencies at ingress */
	int64_t n[2], cap[2];
	int64_t errors[2];
	int64_t rules[ROUTE_RULES];
} Acc;

typedef struct Lister {
	Acc *acc;
	int n, cap;
	int *hash;                 /* open addressing over acc, -1 empty */
	int hash_cap;
	int pop;
	int64_t min_start[2], max_end[2];
	int64_t *keys;             /* roots of another kind: traces to read */
	int64_t n_keys, cap_keys;
	int64_t roots;             /* roots seen in this population */
	Trace tr;
	int64_t traces_read, no_entry, entered_below;
	int64_t last_key;          /* the key of the root row before (a second
	                            * root of one trace is not a second request) */
} Lister;

static uint64_t hash2(const char *a, const char *b)
{
	return hash_fnv1a_str(hash_fnv1a(hash_fnv1a_str(HASH_FNV1A_BASIS, a), "\x1f", 1), b);
}

static void rehash(Lister *l)
{
	int cap = l->hash_cap ? l->hash_cap * 2 : 64;
	free(l->hash);
	l->hash = xmalloc((size_t)cap * sizeof *l->hash);
	for (int i = 0; i < cap; i++)
		l->hash[i] = -1;
	l->hash_cap = cap;
	for (int i = 0; i < l->n; i++) {
		uint64_t x = hash2(l->acc[i].service, l->acc[i].route) & (uint64_t)(cap - 1);
		while (l->hash[x] >= 0)
			x = (x + 1) & (uint64_t)(cap - 1);
		l->hash[x] = i;
	}
}

static Acc *acc_get(Lister *l, const char *service, const char *route)
{
	if ((l->n + 1) * 2 >= l->hash_cap)
		rehash(l);
	uint64_t x = hash2(service, route) & (uint64_t)(l->hash_cap - 1);
	for (; l->hash[x] >= 0; x = (x + 1) & (uint64_t)(l->hash_cap - 1)) {
		Acc *a = &l->acc[l->hash[x]];
		if (strcmp(a->service, service) == 0 && strcmp(a->route, route) == 0)
			return a;
	}
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 16;
		l->acc = xrealloc(l->acc, (size_t)l->cap * sizeof *l->acc);
	}
	Acc *a = &l->acc[l->n];
	memset(a, 0, sizeof *a);
	a->service = xstrdup(service);
	a->route = xstrdup(route);
	l->hash[x] = l->n++;
	return a;
}

/* One request of the current population. */
static void add(Lister *l, const char *service, const char *route, int rule, int64_t start,
                int64_t end, double ms, int error)
{
	Acc *a = acc_get(l, service, route);
	int p = l->pop;
	if (a->n[p] == a->cap[p]) {
		a->cap[p] = a->cap[p] ? a->cap[p] * 2 : 64;
		a->ms[p] = xrealloc(a->ms[p], (size_t)a->cap[p] * sizeof *a->ms[p]);
	}
	a->ms[p][a->n[p]++] = ms;
	a->errors[p] += error != 0;
	if (rule >= 0 && rule < ROUTE_RULES)
		a->rules[rule]++;
	if (start < l->min_start[p])
		l->min_start[p] = start;
	if (end > l->max_end[p])
		l->max_end[p] = end;
}

static int on_root(void *ctx, const StoreRootKey *k)
{
	Lister *l = ctx;
	l->roots++;
	if (k->trace_key == l->last_key && k->trace_key > 0)
		return 0; /* an extra root of the trace before: one request */
	l->last_key = k->trace_key;
	if (k->kind != SPAN_KIND_SERVER) {
		/* the entry is below it, or there is none: read the trace */
		if (l->n_keys == l->cap_keys) {
			l->cap_keys = l->cap_keys ? l->cap_keys * 2 : 256;
			l->keys = xrealloc(l->keys, (size_t)l->cap_keys * sizeof *l->keys);
		}
		l->keys[l->n_keys++] = k->trace_key;
		return 0;
	}
	int64_t ns = k->end_ns - k->start_ns + (k->has_queue ? k->queue_ns : 0);
	add(l, k->service, k->route, k->route_rule, k->start_ns, k->end_ns, (double)ns / 1e6,
	    k->status_code == 2);
	return 0;
}

/* A whole trace (l->tr): its request, when it has an entry. */
static void take_trace(Lister *l)
{
	Trace *t = &l->tr;
	if (t->n == 0)
		return;
	l->traces_read++;
	trace_link_entry(t);
	if (t->cyclic)
		return;
	if (t->root < 0) {
		l->no_entry += t->top >= 0;
		return;
	}
	l->entered_below += t->root != t->top;
	const TSpan *e = &t->sp[t->root];
	add(l, trace_str(t, e->svc), trace_route(t, t->root), e->route_rule, e->start, e->end,
	    (double)trace_ingress_ns(t) / 1e6, e->status == 2);
}

static int on_row(void *ctx, const StoreSpanRow *r)
{
	Lister *l = ctx;
	if (l->tr.n > 0 && !trace_same(&l->tr, r)) {
		take_trace(l);
		trace_reset(&l->tr, r->trace_id);
	} else if (l->tr.n == 0) {
		trace_reset(&l->tr, r->trace_id);
	}
	trace_add(&l->tr, r);
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Population l->pop over range r. */
static int read_pop(Lister *l, Store *st, TimeRange r, Err *err)
{
	l->n_keys = 0;
	l->roots = 0;
	l->last_key = -1;
	int rc = store_root_scan(st, r.from, r.to, on_root, l, err);
	if (rc)
		return rc;
	if (l->roots == 0) {
		/* no root span in the range: every trace's caller is outside the
		 * data (or there is nothing); the traces themselves say */
		trace_reset(&l->tr, "");
		rc = store_spans_scan(st, r.from, r.to, 0, on_row, l, err);
		if (rc == 0)
			take_trace(l);
		trace_reset(&l->tr, "");
		return rc;
	}
	if (l->n_keys > 1) /* keys is NULL when no root was kept */
		qsort(l->keys, (size_t)l->n_keys, sizeof *l->keys, cmp_i64);
	for (int64_t i = 0; i < l->n_keys && rc == 0; i++) {
		if (i > 0 && l->keys[i] == l->keys[i - 1])
			continue;
		trace_reset(&l->tr, "");
		rc = store_trace_key_scan(st, l->keys[i], on_row, l, err);
		if (rc == 0)
			take_trace(l);
	}
	trace_reset(&l->tr, "");
	return rc;
}

/* MOVER on the difference and, on the log scale, the ratio of two
 * quantiles with their intervals (as evidence_change() compares). */
static int bounded(double lo, double hi)
{
	return isfinite(lo) && isfinite(hi);
}

static void change(Endpoint *e, double pct)
{
	const EndpointPop *w = &e->pop[POP_WINDOW], *b = &e->pop[POP_BASELINE];
	e->basis = pct;
	if ((bounded(w->pq_lo, w->pq_hi) && bounded(b->pq_lo, b->pq_hi)) || pct <= 90) {
		quant_change(w->pq, w->pq_lo, w->pq_hi, b->pq, b->pq_lo, b->pq_hi, &e->rise_ms,
		             &e->rise_lo, &e->rise_hi, &e->ratio, &e->ratio_lo, &e->ratio_hi);
	} else {
		/* too few requests to bound the objective's percentile: the p90 */
		e->basis = 90;
		quant_change(w->q.p90, w->q.p90_lo, w->q.p90_hi, b->q.p90, b->q.p90_lo, b->q.p90_hi,
		             &e->rise_ms, &e->rise_lo, &e->rise_hi, &e->ratio, &e->ratio_lo,
		             &e->ratio_hi);
	}
	if (e->rise_lo > 0 && e->ratio >= 1.05)
		e->rose = EP_ROSE;
	else if (e->ratio_hi < 1.05)
		e->rose = EP_STEADY;
	else
		e->rose = EP_CANNOT_TELL;
}

static void fill_pop(EndpointPop *p, double *v, int64_t n, int64_t errors, double pct,
                     int64_t from, int64_t to)
{
	memset(p, 0, sizeof *p);
	p->requests = n;
	p->errors = errors;
	p->rate_rps = n > 0 && to > from ? (double)n / ((double)(to - from) / 1e9) : 0;
	quant_fill(&p->q, v, n); /* sorts v */
	p->p50_lo = p->p50_hi = p->pq = p->pq_lo = p->pq_hi = NAN;
	if (n == 0)
		return;
	quant_ci(v, n, 50, &p->p50_lo, &p->p50_hi);
	p->pq = quant_rank(v, n, pct);
	quant_ci(v, n, pct, &p->pq_lo, &p->pq_hi);
}

static int cmp_rank(const void *x, const void *y)
{
	const Endpoint *a = x, *b = y;
	int ra = a->rose == EP_ROSE, rb = b->rose == EP_ROSE;
	if (ra != rb)
		return rb - ra;
	if (ra && a->ratio_lo != b->ratio_lo)
		return a->ratio_lo > b->ratio_lo ? -1 : 1;
	for (int p = 0; p < 2; p++)
		if (a->pop[p].requests != b->pop[p].requests)
			return a->pop[p].requests > b->pop[p].requests ? -1 : 1;
	int c = strcmp(a->service, b->service);
	return c ? c : strcmp(a->route, b->route);
}

int analysis_endpoints(Store *st, const Period *per, const Model *m, EndpointList **out,
                       Err *err)
{
	*out = NULL;
	Lister l;
	memset(&l, 0, sizeof l);
	trace_init(&l.tr);
	int rc = 0;
	for (int p = 0; p < 2 && rc == 0; p++) {
		l.min_start[p] = INT64_MAX;
		l.max_end[p] = INT64_MIN;
		if (p == POP_BASELINE && !per->has_baseline)
			continue;
		l.pop = p;
		rc = read_pop(&l, st, p ? per->base : per->win, err);
	}
	if (rc == 0) {
		EndpointList *el = xcalloc(1, sizeof *el);
		el->pct = m && m->objective_pct > 0 && m->objective_pct < 100 ? m->objective_pct : 99;
		el->objective_ms = m ? m->objective_ms : 0;
		el->has_baseline = per->has_baseline;
		el->traces_read = l.traces_read;
		el->no_entry = l.no_entry;
		el->entered_below = l.entered_below;
		for (int p = 0; p < 2; p++) {
			TimeRange r = p ? per->base : per->win;
			el->from_ns[p] = r.from != INT64_MIN ? r.from
			                 : l.min_start[p] != INT64_MAX ? l.min_start[p] : 0;
			el->to_ns[p] = r.to != INT64_MAX ? r.to : l.max_end[p] != INT64_MIN ? l.max_end[p] : 0;
		}
		el->n = l.n;
		el->v = xcalloc((size_t)(l.n ? l.n : 1), sizeof *el->v);
		for (int i = 0; i < l.n; i++) {
			Acc *a = &l.acc[i];
			Endpoint *e = &el->v[i];
			e->service = a->service;
			e->route = a->route;
			a->service = a->route = NULL;
			size_t len = strlen(e->service) + strlen(e->route) + 2;
			e->name = xmalloc(len);
			snprintf(e->name, len, "%s %s", e->service, e->route);
			e->route_rule = -1;
			for (int r = 0; r < ROUTE_RULES; r++)
				if (a->rules[r] > 0 && (e->route_rule < 0 || a->rules[r] > a->rules[e->route_rule]))
					e->route_rule = r;
			for (int p = 0; p < 2; p++)
				fill_pop(&e->pop[p], a->ms[p], a->n[p], a->errors[p], el->pct, el->from_ns[p],
				         el->to_ns[p]);
			e->rose = EP_CANNOT_TELL;
			e->has_change = per->has_baseline && e->pop[0].requests > 0 && e->pop[1].requests > 0;
			e->basis = el->pct;
			if (e->has_change)
				change(e, el->pct);
			e->breached = -1;
			int mine = m == NULL || m->root_service == NULL ||
			           (strcmp(m->root_service, e->service) == 0 && m->root_operation &&
			            strcmp(m->root_operation, e->route) == 0);
			if (el->objective_ms > 0 && mine && e->pop[0].requests > 0)
				e->breached = e->pop[0].pq > el->objective_ms;
		}
		if (el->n > 1)
			qsort(el->v, (size_t)el->n, sizeof *el->v, cmp_rank);
		*out = el;
	}
	for (int i = 0; i < l.n; i++) {
		free(l.acc[i].service);
		free(l.acc[i].route);
		free(l.acc[i].ms[0]);
		free(l.acc[i].ms[1]);
	}
	free(l.acc);
	free(l.hash);
	free(l.keys);
	trace_fini(&l.tr);
	return rc;
}

void analysis_endpoints_free(EndpointList *l)
{
	if (l == NULL)
		return;
	for (int i = 0; i < l->n; i++) {
		free(l->v[i].service);
		free(l->v[i].route);
		free(l->v[i].name);
	}
	free(l->v);
	free(l);
}

int analysis_endpoints_find(const EndpointList *l, const char *service, const char *route)
{
	for (int i = 0; l && i < l->n; i++)
		if (strcmp(l->v[i].service, service) == 0 && strcmp(l->v[i].route, route) == 0)
			return i;
	return -1;
}

void analysis_endpoints_why(const EndpointList *l, int i, Buf *out)
{
	const Endpoint *e = &l->v[i];
	int others = 0;
	for (int k = 0; k < l->n; k++)
		others += k != i && l->v[k].pop[POP_WINDOW].requests > 0;
	if (e->rose == EP_ROSE && others > 0) {
		buf_printf(out, "its p%g rose the most significantly (%+.1f ms, 95 %% interval %+.1f to "
		           "%+.1f ms, x%.2f)", e->basis, e->rise_ms, e->rise_lo, e->rise_hi, e->ratio);
		if (e->basis != l->pct)
			buf_printf(out, "; its p%g cannot be told from %lld and %lld requests", l->pct,
			           (long long)e->pop[POP_WINDOW].requests,
			           (long long)e->pop[POP_BASELINE].requests);
	} else if (others == 0) {
		buf_printf(out, "the only endpoint in the window (%lld requests)",
		           (long long)e->pop[POP_WINDOW].requests);
	} else {
		buf_printf(out, "the most common endpoint in the window (%lld requests)%s",
		           (long long)e->pop[POP_WINDOW].requests,
		           l->has_baseline ? ": no endpoint's percentile rose significantly" : "");
	}
}

int analysis_endpoint_split(const char *text, char **service, char **route)
{
	*service = *route = NULL;
	const char *sp = text ? strchr(text, ' ') : NULL;
	if (sp == NULL || sp == text || sp[1] == '\0')
		return -1;
	*service = xstrndup(text, (size_t)(sp - text));
	*route = xstrdup(sp + 1);
	return 0;
}

int analysis_thin(const Analysis *a)
{
	for (int p = 0; p < 2; p++) {
		const PopSummary *ps = &a->pop[p];
		if (ps->present && ps->ingress.n > 0 &&
		    (quant_small_sample(ps->ingress.n) || isinf(ps->ingress.p99_hi)))
			return 1;
	}
	return 0;
}

int analysis_thin_hint(const Analysis *a, Buf *out)
{
	if (!analysis_thin(a))
		return 0;
	buf_printf(out, "too few requests of this endpoint (%lld in the window",
	           (long long)a->pop[POP_WINDOW].ingress.n);
	if (a->pop[POP_BASELINE].present)
		buf_printf(out, ", %lld in the baseline", (long long)a->pop[POP_BASELINE].ingress.n);
	buf_adds(out, ") to bound its p99; ");
	analysis_thin_answers(a, out);
	return 1;
}

void analysis_thin_answers(const Analysis *a, Buf *out)
{
	buf_adds(out, "what could answer: a longer window; ");
	size_t ml = 0;
	const char *route = a->root_operation ? a->root_operation : "";
	const char *path = route_path(route, &ml);
	if (a->route_rule == ROUTE_HTTP_ROUTE && ml > 0)
		buf_printf(out, "its own latency metric, which counts every request where traces are "
		                "sampled (http.server.request.duration{http.route=\"%s\", "
		                "http.request.method=\"%.*s\"} of %s)",
		           path, (int)ml, route, a->root_service);
	else if (a->route_rule == ROUTE_RPC)
		buf_printf(out, "its own latency metric, which counts every request where traces are "
		                "sampled (rpc.server.duration for %s of %s)", route, a->root_service);
	else
		buf_printf(out, "the service's own latency metric, which counts every request where "
		                "traces are sampled (http.server.request.duration of %s, by route where "
		                "it has one)", a->root_service);
	buf_adds(out, "; or all endpoints together, for a dependency they share ('tailtriage "
	              "endpoints' lists them)");
}
