/*
 * evidence_req.c - the request pass: one walk over the traces of a range
 * that keeps, per request, what the aggregate DAG does not: late work,
 * omission of optional branches, calls and fan-out width, the host, and
 * per call whether it was serial, a retry, or outlived by its server.
 * From two such sets (window, baseline) come the evidence on late work,
 * omission, fan-out per class, attempts, serial calls, placement
 * concentration and the class-mix reweighting of the p99.
 *
 * Definitions (docs/evidence.md has the table):
 *  - late: some span of the endpoint's own service ends after the root
 *    span, a server span outlived the call that asked for it (the caller
 *    gave up), or a call started after the objective's deadline had
 *    already passed;
 *  - retry: a call to a dependency that starts after an earlier call to
 *    the same dependency, under the same parent, ended in error;
 *  - serial: a call that overlaps none of its siblings, an overlap
 *    within the skew tolerance (trace_siblings_parallel) not counting;
 *  - tail set: the requests above the objective when there are at least
 *    20 of them, else the slowest max(20, 5 %) requests; placement needs
 *    at least 40 requests.
 */
#include "evidence.h"
#include "evidence_priv.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "endpoints.h"
#include "trace_build.h"
#include "trace_feed.h"

#define TAIL_MIN 20
#define WAITED_MS 5.0
#define PLACEMENT_MIN_REQUESTS 40

typedef struct Pass {
	EvRequestSet *s;
	const Model *m;
	char *root_svc, *root_op; /* NULL: the traces given are the endpoint's */
	const Trace *t;           /* the trace being added */
	uint64_t *present;        /* per request: bit per dependency (first 64) */
	int64_t cap_r, cap_c, cap_p, cap_o;
	int32_t *call_of;         /* per span of tr: its call index, or -1 */
	int32_t *op_of;           /* per span of tr: its op (relative), or -1 */
	int *kids;                /* scratch: children of one span */
	int cap_span;
} Pass;

static int list_index(char ***list, int *n, const char *s, int max)
{
	for (int i = 0; i < *n; i++)
		if (strcmp((*list)[i], s) == 0)
			return i;
	if (*n >= max)
		return -1;
	*list = xrealloc(*list, (size_t)(*n + 1) * sizeof **list);
	(*list)[*n] = xstrdup(s);
	return (*n)++;
}

static double ms(int64_t ns)
{
	return (double)ns / 1e6;
}

static const char *dep_key(const Trace *t, const TSpan *sp)
{
	if (sp->server >= 0)
		return trace_str(t, t->sp[sp->server].svc);
	if (sp->db)
		return trace_str(t, sp->db); /* a database call: its system */
	if (sp->peer)
		return trace_str(t, sp->peer); /* an uninstrumented peer */
	return trace_str(t, sp->name);
}

static int usable(const TSpan *s)
{
	return !s->excluded && !s->outside && !s->orphan;
}

static void push_call(Pass *ps, const EvCall *c)
{
	EvRequestSet *s = ps->s;
	if (s->n_calls == ps->cap_c) {
		ps->cap_c = ps->cap_c ? ps->cap_c * 2 : 4096;
		s->calls = xrealloc(s->calls, (size_t)ps->cap_c * sizeof *s->calls);
	}
	s->calls[s->n_calls++] = *c;
}

static EvOp *push_op(Pass *ps)
{
	EvRequestSet *s = ps->s;
	if (s->n_ops == ps->cap_o) {
		ps->cap_o = ps->cap_o ? ps->cap_o * 2 : 8192;
		s->ops = xrealloc(s->ops, (size_t)ps->cap_o * sizeof *s->ops);
	}
	EvOp *o = &s->ops[s->n_ops++];
	memset(o, 0, sizeof *o);
	o->first_child = o->next_sibling = o->pred = o->call = -1;
	return o;
}

static _Thread_local const Trace *t_sort;

static int cmp_start(const void *a, const void *b)
{
	const TSpan *x = &t_sort->sp[*(const int *)a], *y = &t_sort->sp[*(const int *)b];
	if (x->astart != y->astart)
		return x->astart < y->astart ? -1 : 1;
	if (x->aend != y->aend)
		return x->aend < y->aend ? -1 : 1;
	return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* Adds span i and its subtree to the request's program; base is the
 * request's first op. Returns the op index (relative). */
static int32_t add_ops(Pass *ps, int i, int64_t base, int depth)
{
	const Trace *t = ps->t;
	const TSpan *sp = &t->sp[i];
	EvOp *o = push_op(ps);
	int32_t me = (int32_t)(ps->s->n_ops - 1 - base);
	ps->op_of[i] = me;
	o->dur_ms = (float)ms(sp->aend - sp->astart);
	if (i == t->root)
		o->role = EV_OP_ROOT;
	else if (sp->kind == SPAN_KIND_CLIENT)
		o->role = EV_OP_CLIENT;
	else if (sp->client >= 0 && sp->parent == sp->client)
		o->role = EV_OP_SERVER;
	else
		o->role = EV_OP_LOCAL;
	if (o->role == EV_OP_CLIENT)
		o->call = ps->call_of[i];
	else if (o->role == EV_OP_SERVER)
		o->call = ps->call_of[sp->client];
	if (depth > 256)
		return me;
	/* the children that hold it up, in the walks' tree (a container's
	 * contents are its children): usable and ending inside it, or, held
	 * by it, within the skew tolerance of its end */
	int nk = 0;
	for (int c = sp->wfirst; c >= 0; c = t->sp[c].wnext) {
		const TSpan *cs = &t->sp[c];
		if (!usable(cs) || (cs->aend > sp->aend && cs->holder != i))
			continue;
		ps->kids[nk++] = c;
	}
	if (nk == 0)
		return me;
	int *kids = xmalloc((size_t)nk * sizeof *kids);
	memcpy(kids, ps->kids, (size_t)nk * sizeof *kids);
	t_sort = t;
	qsort(kids, (size_t)nk, sizeof *kids, cmp_start);
	int64_t last_end = INT64_MIN;
	int32_t prev = -1;
	for (int k = 0; k < nk; k++) {
		const TSpan *cs = &t->sp[kids[k]];
		/* the sibling it started after: the latest-ending earlier one
		 * that had ended by its start */
		int pred = -1;
		for (int j = 0; j < k; j++) {
			const TSpan *os = &t->sp[kids[j]];
			int before = os->aend <= cs->astart ||
			             trace_skew_serial(t, os->astart, os->aend, cs->astart, cs->aend);
			if (before && (pred < 0 || os->aend > t->sp[pred].aend))
				pred = kids[j];
		}
		int32_t c = add_ops(ps, kids[k], base, depth + 1);
		EvOp *co = &ps->s->ops[base + c];
		int64_t from = pred >= 0 ? t->sp[pred].aend : sp->astart;
		co->gap_ms = cs->astart > from ? (float)ms(cs->astart - from) : 0;
		co->pred = pred >= 0 ? ps->op_of[pred] : -1;
		if (prev < 0)
			ps->s->ops[base + me].first_child = c;
		else
			ps->s->ops[base + prev].next_sibling = c;
		prev = c;
		if (cs->aend > last_end)
			last_end = cs->aend;
	}
	free(kids);
	EvOp *self = &ps->s->ops[base + me];
	self->tail_ms = sp->aend > last_end ? (float)ms(sp->aend - last_end) : 0;
	return me;
}

/* Adds the request of a linked trace of the endpoint. */
static void add_request(Pass *ps, const Trace *t)
{
	EvRequestSet *s = ps->s;
	ps->t = t;
	const TSpan *root = &t->sp[t->root];
	if (s->n == ps->cap_r) {
		ps->cap_r = ps->cap_r ? ps->cap_r * 2 : 1024;
		s->r = xrealloc(s->r, (size_t)ps->cap_r * sizeof *s->r);
		ps->present = xrealloc(ps->present, (size_t)ps->cap_r * sizeof *ps->present);
	}
	int64_t ri = s->n++;
	EvRequest *r = &s->r[ri];
	memset(r, 0, sizeof *r);
	uint64_t mask = 0;
	r->start_ns = root->start;
	r->ingress_ms = (float)ms(trace_ingress_ns(t));
	r->queue_ms = root->has_queue ? (float)ms(root->queue) : NAN;
	r->error = root->status == 2;
	const char *cls = root->cls ? trace_str(t, root->cls) : "";
	for (int i = 0; i < t->n && !*cls; i++)
		if (t->sp[i].cls && !t->sp[i].excluded)
			cls = trace_str(t, t->sp[i].cls);
	r->cls = (int16_t)(*cls ? list_index(&s->classes, &s->n_classes, cls, 64) : -1);
	const char *host = root->host ? trace_str(t, root->host) : "";
	r->host = (int16_t)(*host ? list_index(&s->hosts, &s->n_hosts, host, 4096) : -1);
	if (s->first_ns == 0 || r->start_ns < s->first_ns)
		s->first_ns = r->start_ns;
	if (r->start_ns > s->last_ns)
		s->last_ns = r->start_ns;

	double objective = ps->m && ps->m->objective_ms > 0 ? ps->m->objective_ms : 0;
	int64_t deadline = objective > 0 ? root->start - (root->has_queue ? root->queue : 0) +
	                                       (int64_t)(objective * 1e6)
	                                 : INT64_MAX;
	int late = t->n_late > 0 ? EV_LATE_ABANDONED : 0;
	const char *root_svc = trace_str(t, root->svc);
	if (t->n > ps->cap_span) {
		ps->cap_span = t->n;
		ps->call_of = xrealloc(ps->call_of, (size_t)t->n * sizeof *ps->call_of);
		ps->op_of = xrealloc(ps->op_of, (size_t)t->n * sizeof *ps->op_of);
		ps->kids = xrealloc(ps->kids, (size_t)t->n * sizeof *ps->kids);
	}
	for (int i = 0; i < t->n; i++)
		ps->call_of[i] = ps->op_of[i] = -1;
	for (int i = 0; i < t->n; i++) {
		const TSpan *sp = &t->sp[i];
		if (i == t->root || !usable(sp))
			continue;
		if (sp->end > root->end + 1000000 && strcmp(trace_str(t, sp->svc), root_svc) == 0)
			late |= EV_LATE_ABANDONED;
		if (sp->kind != SPAN_KIND_CLIENT)
			continue;
		if (sp->start > deadline)
			late |= EV_LATE_AFTER_DEADLINE;
		EvCall c = {.req = (int32_t)ri, .wait_ms = NAN, .service_ms = NAN, .queue_ms = NAN};
		int d = list_index(&s->deps, &s->n_deps, dep_key(t, sp), 4096);
		c.dep = (int16_t)d;
		c.caller = (int16_t)list_index(&s->callers, &s->n_callers, trace_str(t, sp->svc), 4096);
		if (d >= 0 && d < 64)
			mask |= UINT64_C(1) << d;
		c.error = sp->status == 2;
		int64_t dur = sp->end - sp->start;
		c.total_ms = (float)ms(dur);
		if (sp->server >= 0) {
			int64_t sdur = trace_server_in_call_ns(t, i);
			c.service_ms = (float)ms(sdur);
			c.wait_ms = (float)ms(dur - sdur);
			c.late = t->sp[sp->server].late;
		} else if (sp->db) {
			/* a database call is a leaf: its client time is the
			 * database's time, as in the aggregate analysis */
			c.service_ms = c.total_ms;
			c.wait_ms = 0;
			c.db = 1;
		}
		if (sp->has_queue)
			c.queue_ms = (float)ms(sp->queue);
		/* siblings: serial or parallel, retry of a failed sibling */
		int overlap = 0, width = 1;
		if (sp->parent >= 0) {
			for (int k = t->sp[sp->parent].first_child; k >= 0; k = t->sp[k].next_sibling) {
				const TSpan *o = &t->sp[k];
				if (k == i || !usable(o))
					continue;
				if (trace_siblings_parallel(t, k, i)) {
					overlap = 1;
					if (o->kind == SPAN_KIND_CLIENT && o->astart <= sp->astart)
						width++;
				}
				if (o->kind == SPAN_KIND_CLIENT && o->status == 2 && o->aend <= sp->astart &&
				    strcmp(dep_key(t, o), dep_key(t, sp)) == 0)
					c.retry = 1;
			}
		}
		c.serial = !overlap;
		if (width > r->width)
			r->width = (int16_t)width;
		r->calls++;
		ps->call_of[i] = (int32_t)s->n_calls;
		push_call(ps, &c);
	}
	r->late = (uint8_t)late;
	r->op_off = s->n_ops;
	add_ops(ps, t->root, r->op_off, 0);
	r->n_ops = (int32_t)(s->n_ops - r->op_off);
	ps->present[ri] = mask;
}

static int cmp_float_desc(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x < y) - (x > y);
}

/* Marks the tail set (see the file comment). */
static void mark_tail(EvRequestSet *s, double objective)
{
	s->tail_threshold_ms = NAN;
	if (s->n < PLACEMENT_MIN_REQUESTS)
		return;
	int64_t above = 0;
	if (objective > 0)
		for (int64_t i = 0; i < s->n; i++)
			above += s->r[i].ingress_ms > objective;
	double thr;
	int strict;
	if (objective > 0 && above >= TAIL_MIN) {
		thr = objective;
		strict = 1;
	} else {
		int64_t k = (int64_t)ceil(0.05 * (double)s->n);
		if (k < TAIL_MIN)
			k = TAIL_MIN;
		float *v = xmalloc((size_t)s->n * sizeof *v);
		for (int64_t i = 0; i < s->n; i++)
			v[i] = s->r[i].ingress_ms;
		qsort(v, (size_t)s->n, sizeof *v, cmp_float_desc);
		thr = v[k - 1];
		free(v);
		strict = 0;
	}
	s->tail_threshold_ms = thr;
	for (int64_t i = 0; i < s->n; i++)
		s->r[i].slow = (uint8_t)(strict ? s->r[i].ingress_ms > thr : s->r[i].ingress_ms >= thr);
}

/* Omission: an optional dependency failed (timeout, error) or is absent
 * from a request although most requests of the range call it. */
static void mark_omission(Pass *ps)
{
	EvRequestSet *s = ps->s;
	const Model *m = ps->m;
	if (m == NULL || s->n == 0)
		return;
	int n = s->n_deps < 64 ? s->n_deps : 64;
	uint64_t optional = 0;
	for (int d = 0; d < n; d++) {
		const ModelNode *mn = model_find_node(m, s->deps[d], NULL);
		if (mn && mn->mandatory == 0)
			optional |= UINT64_C(1) << d;
	}
	if (optional == 0)
		return;
	for (int d = 0; d < n; d++) {
		uint64_t bit = UINT64_C(1) << d;
		if (!(optional & bit))
			continue;
		int64_t have = 0;
		for (int64_t i = 0; i < s->n; i++)
			have += (ps->present[i] & bit) != 0;
		if (2 * have < s->n)
			continue; /* not normally called: absence means nothing */
		for (int64_t i = 0; i < s->n; i++)
			if (!(ps->present[i] & bit))
				s->r[i].omitted = 1;
	}
	for (int64_t k = 0; k < s->n_calls; k++) {
		const EvCall *c = &s->calls[k];
		if (c->error && c->dep >= 0 && c->dep < 64 && (optional & (UINT64_C(1) << c->dep)))
			s->r[c->req].omitted = 1;
	}
}

static void pass_init(Pass *ps, const Model *m, int64_t from, int64_t to)
{
	memset(ps, 0, sizeof *ps);
	ps->m = m;
	ps->s = xcalloc(1, sizeof *ps->s);
	ps->s->from_ns = from;
	ps->s->to_ns = to;
}

/* The request set read so far, with its tail and omission marked. */
static EvRequestSet *pass_finish(Pass *ps)
{
	mark_tail(ps->s, ps->m ? ps->m->objective_ms : 0);
	mark_omission(ps);
	EvRequestSet *s = ps->s;
	ps->s = NULL;
	return s;
}

static void pass_fini(Pass *ps)
{
	free(ps->call_of);
	free(ps->op_of);
	free(ps->kids);
	free(ps->present);
	free(ps->root_svc);
	free(ps->root_op);
	evidence_requests_free(ps->s);
}

static atomic_llong request_reads; /* evidence_request_reads() */

int64_t evidence_request_reads(void)
{
	return (int64_t)atomic_load(&request_reads);
}

/* store_spans_scan() without attributes, as a TraceFeedScan */
static int scan_window(Store *st, int64_t from, int64_t to, StoreSpanFn fn, void *ctx, Err *err)
{
	return store_spans_scan(st, from, to, 0, fn, ctx, err);
}

int evidence_requests_load(Store *st, const Model *m, const char *root_service,
                           const char *root_operation, int64_t from, int64_t to,
                           const SkewTolerance *skew, EvRequestSet **out, Err *err)
{
	*out = NULL;
	Pass ps;
	pass_init(&ps, m, from, to);
	int rc = 0;
	if (root_service && root_operation) {
		ps.root_svc = xstrdup(root_service);
		ps.root_op = xstrdup(root_operation);
	} else if (m && m->root_service && m->root_operation) {
		ps.root_svc = xstrdup(m->root_service);
		ps.root_op = xstrdup(m->root_operation);
	} else {
		/* the endpoint the commands take by default (endpoints.h) */
		Period per = {.win = {from, to}};
		EndpointList *l = NULL;
		if ((rc = analysis_endpoints(st, &per, m, &l, err)))
			goto out;
		if (l->n > 0) {
			ps.root_svc = xstrdup(l->v[0].service);
			ps.root_op = xstrdup(l->v[0].route);
		}
		analysis_endpoints_free(l);
	}
	if (ps.root_svc == NULL) {
		*out = ps.s; /* no requests at all */
		ps.s = NULL;
		goto out;
	}
	atomic_fetch_add(&request_reads, 1);
	/* read on the feed's thread while this one builds the requests */
	TraceFeed *f = trace_feed_scan(st, scan_window, from, to, skew);
	Trace *t;
	while ((t = trace_feed_next(f, NULL)) != NULL)
		if (trace_link_request(t, ps.root_svc, ps.root_op))
			add_request(&ps, t);
	rc = trace_feed_finish(f, err);
	if (rc == 0)
		*out = pass_finish(&ps);
out:
	pass_fini(&ps);
	return rc;
}

/* Request sets built from an analysis's pass (analysis_state_tap). */
struct EvTap {
	Pass ps[2];
	int64_t max;              /* more requests than this: none kept (0: no limit) */
	int over[2];
	int has_baseline;
};

/* The analysis's tap: a trace of the endpoint in the window or baseline. */
static void on_tapped(void *ctx, const Trace *t, int pop)
{
	EvTap *x = ctx;
	if (x->over[pop])
		return;
	if (x->max > 0 && x->ps[pop].s->n >= x->max) {
		/* past the bound: a set this large is not kept (the diagnosis
		 * reads a sample of its own instead) */
		x->over[pop] = 1;
		return;
	}
	add_request(&x->ps[pop], t);
}

EvTap *evidence_tap_new(AnalysisState *g, const AnalysisOptions *ao, int64_t max_requests)
{
	EvTap *x = xcalloc(1, sizeof *x);
	pass_init(&x->ps[0], ao->model, ao->period.win.from, ao->period.win.to);
	pass_init(&x->ps[1], ao->model, ao->period.base.from, ao->period.base.to);
	x->max = max_requests;
	x->has_baseline = ao->period.has_baseline;
	analysis_state_tap(g, on_tapped, x);
	return x;
}

/* The sets read, or 0 when a population went past the bound. */
static int tap_take(EvTap *x, EvRequestSet *sets[2])
{
	sets[0] = sets[1] = NULL;
	if (x->over[0] || (x->has_baseline && x->over[1]))
		return 0;
	sets[0] = pass_finish(&x->ps[0]);
	if (x->has_baseline)
		sets[1] = pass_finish(&x->ps[1]);
	return 1;
}

void evidence_tap_free(EvTap *x)
{
	if (x == NULL)
		return;
	pass_fini(&x->ps[0]);
	pass_fini(&x->ps[1]);
	free(x);
}

typedef struct Attached {
	EvRequestSet *sets[2];
} Attached;

static void attached_free(void *p)
{
	Attached *at = p;
	evidence_requests_free(at->sets[0]);
	evidence_requests_free(at->sets[1]);
	free(at);
}

void evidence_tap_finish(EvTap *x, Analysis *a)
{
	if (x == NULL)
		return;
	EvRequestSet *sets[2];
	if (a && a->attached == NULL && tap_take(x, sets)) {
		Attached *at = xcalloc(1, sizeof *at);
		at->sets[0] = sets[0];
		at->sets[1] = sets[1];
		a->attached = at;
		a->attached_free = attached_free;
	}
	evidence_tap_free(x);
}

const EvRequestSet *evidence_attached_requests(const Analysis *a, int pop)
{
	if (a == NULL || a->attached == NULL || a->attached_free != attached_free)
		return NULL;
	return ((const Attached *)a->attached)->sets[pop];
}

int evidence_analysis_run(Store *st, const AnalysisOptions *ao, int64_t max_requests,
                          Analysis **a, EvRequestSet *sets[2], Err *err)
{
	*a = NULL;
	sets[0] = sets[1] = NULL;
	AnalysisState *g = analysis_state_new(ao);
	analysis_state_once(g);
	EvTap *x = evidence_tap_new(g, ao, 0);
	int rc = analysis_state_sample(g, st, max_requests, err);
	if (rc == 0) {
		*a = analysis_state_result(g, st);
		tap_take(x, sets);
	}
	analysis_state_free(g);
	evidence_tap_free(x);
	return rc;
}

void evidence_requests_free(EvRequestSet *s)
{
	if (s == NULL)
		return;
	free(s->r);
	free(s->calls);
	free(s->ops);
	for (int i = 0; i < s->n_classes; i++)
		free(s->classes[i]);
	free(s->classes);
	for (int i = 0; i < s->n_hosts; i++)
		free(s->hosts[i]);
	free(s->hosts);
	for (int i = 0; i < s->n_deps; i++)
		free(s->deps[i]);
	free(s->deps);
	for (int i = 0; i < s->n_callers; i++)
		free(s->callers[i]);
	free(s->callers);
	free(s);
}

/* ---- evidence from two request sets ------------------------------------ */

static int cmp_double_asc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static const char *sfx(int p)
{
	return p ? "@baseline" : "";
}

static const char *word(int p)
{
	return p ? "baseline" : "window";
}

static void put_ratio(Evidence *e, const char *name, double num, int64_t den, const char *what,
                      int p)
{
	ev_put_prop(e, name, num, den, what, p);
}

static void put_per(Evidence *e, const char *name, double num, int64_t den, const char *unit,
                    const char *what, int p)
{
	if (den <= 0) {
		ev_missing(e, name, unit, "spans: nothing to divide by");
		return;
	}
	ev_put(e, name, num / (double)den, unit, EV_SRC_SPANS, EV_Q_NONE, den, den < EV_MIN_RATIO_N,
	       "spans: %s over %lld (%s)", what, (long long)den, word(p));
}

/* A mean of a per-request count (sum and sum of squares over den
 * requests) with a normal-approximation 95 % interval. */
static void put_mean(Evidence *e, const char *name, double sum, double sumsq, int64_t den,
                     const char *unit, const char *what, int p)
{
	if (den <= 0) {
		ev_missing(e, name, unit, "spans: nothing to divide by");
		return;
	}
	double mean = sum / (double)den;
	double var = den > 1 ? (sumsq - sum * mean) / (double)(den - 1) : 0;
	double h = 1.959963984540054 * sqrt(var > 0 ? var : 0) / sqrt((double)den);
	EvValue *v = ev_put(e, name, mean, unit, EV_SRC_SPANS, EV_Q_NONE, den, den < EV_MIN_RATIO_N,
	                    "spans: %s over %lld (%s)", what, (long long)den, word(p));
	if (den >= EV_MIN_RATIO_N)
		ev_ci(v, mean - h, mean + h);
	else
		ev_ci(v, -INFINITY, INFINITY);
}

/* Index of name in list, -1 when absent. */
static int idx(char **list, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(list[i], name) == 0)
			return i;
	return -1;
}

/* The 95th percentile of the concentration index when k tail requests
 * land on hosts in proportion to their request counts hr[] (total all). */
static double placement_null95(const int64_t *hr, int nh, int64_t all, int64_t k, double expect)
{
	enum { RUNS = 400 };
	double *cum = xmalloc((size_t)nh * sizeof *cum);
	int64_t *cnt = xmalloc((size_t)nh * sizeof *cnt);
	double acc = 0;
	for (int h = 0; h < nh; h++) {
		acc += (double)hr[h] / (double)all;
		cum[h] = acc;
	}
	double idx[RUNS];
	uint64_t rng = UINT64_C(0x91ace1e55) ^ (uint64_t)k ^ ((uint64_t)all << 20);
	for (int r = 0; r < RUNS; r++) {
		memset(cnt, 0, (size_t)nh * sizeof *cnt);
		for (int64_t j = 0; j < k; j++) {
			rng = rng * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
			double u = (double)(rng >> 11) / 9007199254740992.0 * acc;
			int lo = 0, hi = nh - 1;
			while (lo < hi) {
				int mid = (lo + hi) / 2;
				if (cum[mid] < u)
					lo = mid + 1;
				else
					hi = mid;
			}
			cnt[lo]++;
		}
		double hh = 0;
		for (int h = 0; h < nh; h++)
			hh += ((double)cnt[h] / (double)k) * ((double)cnt[h] / (double)k);
		idx[r] = hh / expect;
	}
	qsort(idx, RUNS, sizeof *idx, cmp_double_asc);
	free(cum);
	free(cnt);
	return idx[(int)(0.95 * (RUNS - 1))];
}

/* What each class brings per request, for class-mix-shift: per class the
 * calls to each dependency and the client time they hold, against the
 * other classes; the fact demand.<class> names the dependency where the
 * class stands out most ("holds pricing 3.1x longer per request than the
 * other classes: 2.9 calls, 61 ms"). */
static void demand_facts(Evidence *e, const EvRequestSet *s, const double *calls, const double *ms_,
                         const int64_t *cls_n)
{
	int ncl = s->n_classes, nd = s->n_deps;
	for (int c = 0; c < ncl; c++) {
		if (cls_n[c] < 10)
			continue;
		double best = 0;
		int bd = -1;
		double bcalls = 0, bms = 0, ocalls = 0, oms = 0;
		for (int d = 0; d < nd; d++) {
			double mc = 0, mm = 0;
			int64_t on = 0;
			for (int o = 0; o <= ncl; o++) {
				if (o == c)
					continue;
				mc += calls[(size_t)d * (size_t)(ncl + 1) + (size_t)o];
				mm += ms_[(size_t)d * (size_t)(ncl + 1) + (size_t)o];
				on += cls_n[o];
			}
			if (on == 0)
				continue;
			double cm = ms_[(size_t)d * (size_t)(ncl + 1) + (size_t)c] / (double)cls_n[c];
			double om = mm / (double)on;
			if (om <= 0 || cm <= 0)
				continue;
			if (cm / om > best) {
				best = cm / om;
				bd = d;
				bcalls = calls[(size_t)d * (size_t)(ncl + 1) + (size_t)c] / (double)cls_n[c];
				bms = cm;
				ocalls = mc / (double)on;
				oms = om;
			}
		}
		if (bd < 0 || best < 1.2)
			continue; /* nothing stands out */
		char fact[96], val[320];
		snprintf(fact, sizeof fact, "demand.%s", s->classes[c]);
		snprintf(val, sizeof val,
		         "an average %s request holds %s %.1fx as long as one of the other classes (%.1f calls, "
		         "%.0f ms of client time per request, against %.1f calls and %.0f ms)",
		         s->classes[c], s->deps[bd], best, bcalls, bms, ocalls, oms);
		ev_fact(e, fact, val);
	}
}

static void set_evidence(Evidence *e, const EvRequestSet *s, int p, const Model *m,
                         double *cpr_class /* [e->n_classes] out */)
{
	char name[256], seg[96];
	int64_t late = 0, abandoned = 0, omitted = 0, calls = 0, retries = 0;
	double width = 0;
	for (int64_t i = 0; i < s->n; i++) {
		late += s->r[i].late != 0;
		abandoned += (s->r[i].late & EV_LATE_ABANDONED) != 0;
		omitted += s->r[i].omitted;
		calls += s->r[i].calls;
		width += s->r[i].width;
	}
	snprintf(name, sizeof name, "late_work.ratio%s", sfx(p));
	put_ratio(e, name, (double)late, s->n, "requests with late work", p);
	snprintf(name, sizeof name, "late_work.abandoned_ratio%s", sfx(p));
	put_ratio(e, name, (double)abandoned, s->n,
	          "requests with work still running after the root or the caller ended", p);
	snprintf(name, sizeof name, "omission.ratio%s", sfx(p));
	int has_optional = 0;
	for (int i = 0; m && i < m->n_nodes; i++)
		has_optional |= m->nodes[i].mandatory == 0;
	if (has_optional)
		put_ratio(e, name, (double)omitted, s->n, "requests missing an optional branch", p);
	else
		ev_missing(e, name, "ratio", "model: no optional node declared");
	snprintf(name, sizeof name, "fanout.calls_per_request%s", sfx(p));
	put_per(e, name, (double)calls, s->n, "count", "client calls per request", p);
	snprintf(name, sizeof name, "fanout.width%s", sfx(p));
	put_per(e, name, width, s->n, "count", "mean largest group of overlapping calls", p);

	/* per class: calls per request */
	for (int c = 0; c < e->n_classes; c++) {
		int sc = idx(s->classes, s->n_classes, e->classes[c]);
		int64_t req = 0, cc = 0;
		for (int64_t i = 0; sc >= 0 && i < s->n; i++)
			if (s->r[i].cls == sc) {
				req++;
				cc += s->r[i].calls;
			}
		evidence_segment(e->classes[c], seg, sizeof seg);
		snprintf(name, sizeof name, "fanout.%s.calls_per_request%s", seg, sfx(p));
		put_per(e, name, (double)cc, req, "count", "client calls per request of the class", p);
		cpr_class[c] = req >= EV_MIN_RATIO_N ? (double)cc / (double)req : NAN;
	}

	/* per dependency */
	int nd = s->n_deps;
	int64_t *dc = xcalloc((size_t)(nd ? nd : 1) * 7, sizeof *dc);
	/* per-request logical calls per dependency, for the mean's interval,
	 * and per-class demand (calls and client time per request) */
	double *sq = xcalloc((size_t)(nd ? nd : 1), sizeof *sq);
	int64_t *cur = xcalloc((size_t)(nd ? nd : 1), sizeof *cur);
	int ncl = s->n_classes;
	double *dem_calls = xcalloc((size_t)(nd ? nd : 1) * (size_t)(ncl + 1), sizeof *dem_calls);
	double *dem_ms = xcalloc((size_t)(nd ? nd : 1) * (size_t)(ncl + 1), sizeof *dem_ms);
	int64_t *cls_n = xcalloc((size_t)(ncl + 1), sizeof *cls_n);
	for (int64_t i = 0; i < s->n; i++)
		cls_n[s->r[i].cls >= 0 ? s->r[i].cls : ncl]++;
	for (int64_t k = 0, req = -1; k <= s->n_calls; k++) {
		int64_t rq = k < s->n_calls ? s->calls[k].req : -2;
		if (rq != req) {
			for (int d = 0; d < nd; d++) {
				sq[d] += (double)cur[d] * (double)cur[d];
				cur[d] = 0;
			}
			req = rq;
		}
		if (k == s->n_calls)
			break;
		const EvCall *c = &s->calls[k];
		if (c->dep < 0)
			continue;
		if (!c->retry)
			cur[c->dep]++;
		int cl = s->r[c->req].cls >= 0 ? s->r[c->req].cls : ncl;
		dem_calls[(size_t)c->dep * (size_t)(ncl + 1) + (size_t)cl] += 1;
		dem_ms[(size_t)c->dep * (size_t)(ncl + 1) + (size_t)cl] += c->total_ms;
	}
	if (p == POP_WINDOW)
		demand_facts(e, s, dem_calls, dem_ms, cls_n);
	free(dem_calls);
	free(dem_ms);
	free(cls_n);
	free(cur);
	for (int64_t k = 0; k < s->n_calls; k++) {
		const EvCall *c = &s->calls[k];
		if (c->dep < 0)
			continue;
		int64_t *x = &dc[c->dep * 7];
		x[0]++;
		x[1] += c->error;
		x[2] += c->serial;
		x[3] += c->retry;
		x[4] += c->late;
		if (!isnan(c->wait_ms) || !isnan(c->queue_ms)) {
			double wq = (isnan(c->wait_ms) ? 0 : c->wait_ms) + (isnan(c->queue_ms) ? 0 : c->queue_ms);
			x[5]++;
			x[6] += wq > WAITED_MS;
		}
		retries += c->retry;
	}
	for (int k = 0; k < e->n_deps; k++) {
		int d = idx(s->deps, s->n_deps, e->deps[k]);
		if (d < 0)
			continue;
		const int64_t *x = &dc[d * 7];
		evidence_segment(e->deps[k], seg, sizeof seg);
		snprintf(name, sizeof name, "dep.%s.calls_per_request%s", seg, sfx(p));
		put_mean(e, name, (double)(x[0] - x[3]), sq[d], s->n, "count",
		         "logical calls per request (retries not counted)", p);
		snprintf(name, sizeof name, "dep.%s.error_ratio%s", seg, sfx(p));
		put_ratio(e, name, (double)x[1], x[0], "calls ending in error", p);
		snprintf(name, sizeof name, "dep.%s.serial_ratio%s", seg, sfx(p));
		put_ratio(e, name, (double)x[2], x[0], "calls overlapping no sibling", p);
		snprintf(name, sizeof name, "dep.%s.waited_ratio%s", seg, sfx(p));
		put_ratio(e, name, (double)x[6], x[5], "calls that waited more than 5 ms (client + pool)", p);
		snprintf(name, sizeof name, "dep.%s.late_ratio%s", seg, sfx(p));
		put_ratio(e, name, (double)x[4], x[0], "calls outlived by their server span", p);
		snprintf(name, sizeof name, "dep.%s.attempts_per_call%s", seg, sfx(p));
		if (x[0] > x[3]) {
			EvValue *v = ev_put(e, name, (double)x[0] / (double)(x[0] - x[3]), "count",
			                    EV_SRC_SPANS, EV_Q_NONE, x[0], x[0] < EV_MIN_RATIO_N,
			                    "spans: %lld attempts for %lld logical calls (%s)",
			                    (long long)x[0], (long long)(x[0] - x[3]), word(p));
			/* attempts per call = 1 / (1 - retry share): the Wilson
			 * interval of the retry share, mapped */
			double qlo, qhi;
			evidence_wilson((double)x[3], (double)x[0], &qlo, &qhi);
			ev_ci(v, 1 / (1 - qlo), qhi < 1 ? 1 / (1 - qhi) : INFINITY);
		}
	}
	free(dc);
	free(sq);
	snprintf(name, sizeof name, "attempts.per_call%s", sfx(p));
	if (calls > retries)
		ev_put(e, name, (double)calls / (double)(calls - retries), "count", EV_SRC_SPANS,
		       EV_Q_NONE, calls, calls < EV_MIN_RATIO_N,
		       "spans: %lld client calls for %lld logical calls (retries after errors "
		       "removed) (%s)", (long long)calls, (long long)(calls - retries), word(p));
	else
		ev_missing(e, name, "count", "spans: no client calls");

	/* placement: how the tail set spreads over hosts */
	snprintf(name, sizeof name, "placement.concentration%s", sfx(p));
	int64_t k = 0;
	for (int64_t i = 0; i < s->n; i++)
		k += s->r[i].slow;
	if (s->n_hosts < 2 || k == 0) {
		ev_missing(e, name, "index",
		           s->n_hosts < 2 ? "spans: requests carry fewer than two hosts"
		                          : "spans: fewer than 40 requests, no tail set");
		return;
	}
	int64_t *hr = xcalloc((size_t)s->n_hosts, sizeof *hr), *hs = xcalloc((size_t)s->n_hosts, sizeof *hs);
	int64_t with_host = 0, slow_host = 0;
	for (int64_t i = 0; i < s->n; i++) {
		if (s->r[i].host < 0)
			continue;
		hr[s->r[i].host]++;
		hs[s->r[i].host] += s->r[i].slow;
		with_host++;
		slow_host += s->r[i].slow;
	}
	double hhi_all = 0, hhi_slow = 0, top_lift = 0;
	int top = -1;
	for (int h = 0; h < s->n_hosts && with_host > 0 && slow_host > 0; h++) {
		double ph = (double)hr[h] / (double)with_host, qh = (double)hs[h] / (double)slow_host;
		hhi_all += ph * ph;
		hhi_slow += qh * qh;
		if (hs[h] >= 3 && ph > 0 && qh / ph > top_lift) {
			top_lift = qh / ph;
			top = h;
		}
	}
	if (slow_host > 0) {
		/* expected Herfindahl of slow_host requests dropped on hosts in
		 * proportion to their traffic: sum p^2 + (1 - sum p^2) / k */
		double expect = hhi_all + (1 - hhi_all) / (double)slow_host;
		EvValue *cv = ev_put(e, name, hhi_slow / expect, "index", EV_SRC_SPANS, EV_Q_NONE,
		                     slow_host, slow_host < TAIL_MIN,
		                     "spans: Herfindahl of the %lld tail requests over %d hosts / its "
		                     "value if they followed traffic (1 = no concentration) (%s)",
		                     (long long)slow_host, s->n_hosts, word(p));
		/* what chance alone gives: the same number of tail requests
		 * dropped on hosts in proportion to their traffic, many times;
		 * the 95th percentile of that index is the bar to clear */
		double null95 = placement_null95(hr, s->n_hosts, with_host, slow_host, expect);
		(void)cv;
		snprintf(name, sizeof name, "placement.concentration.chance95%s", sfx(p));
		ev_put(e, name, null95, "index", EV_SRC_SPANS, EV_Q_NONE, slow_host, 0,
		       "spans: 95th percentile of the index when %lld tail requests follow traffic "
		       "(400 random placements) (%s)", (long long)slow_host, word(p));
		snprintf(name, sizeof name, "placement.top_lift%s", sfx(p));
		if (top >= 0) {
			ev_put(e, name, top_lift, "index", EV_SRC_SPANS, EV_Q_NONE, hs[top], hs[top] < 5,
			       "spans: host %s has %.1f %% of the tail and %.1f %% of requests (%s)",
			       s->hosts[top], 100.0 * (double)hs[top] / (double)slow_host,
			       100.0 * (double)hr[top] / (double)with_host, word(p));
			if (p == 0)
				ev_fact(e, "placement.top_host", s->hosts[top]);
		} else {
			ev_missing(e, name, "index", "spans: no host has 3 tail requests");
		}
		snprintf(name, sizeof name, "placement.hosts%s", sfx(p));
		ev_put(e, name, s->n_hosts, "count", EV_SRC_SPANS, EV_Q_NONE, with_host, 0,
		       "spans: hosts serving the endpoint (%s)", word(p));
	}
	free(hr);
	free(hs);
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

/* Count of values <= x in sorted v[0..n). */
static int64_t upper(const float *v, int64_t n, double x)
{
	int64_t lo = 0, hi = n;
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;
		if (v[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* p99 of the baseline's per-class ingress distributions mixed with the
 * window's class shares: what the p99 would be if only the mix had
 * changed. */
/* Per dependency and class, the p90 of the server's time and of the
 * client-side wait in both sets (classes with 30 calls or more on both
 * sides), and whether any class's p90 rose beyond noise:
 * dep.D.service.within_class_rose and dep.D.client_wait.within_class_rose.
 * A dependency whose overall p90 moved only because the class mix moved
 * has 0 there: no class got slower, each class's interval leaving no room
 * for a rise of that size. When no class rose but some class cannot rule
 * one out, the flag is missing (cannot tell), never 0. */
/* A set's calls grouped by (dependency, class): the calls of dependency d
 * and class c (a classes index) are order[start[key] .. start[key + 1])
 * with key = d * (n_classes + 1) + c + 1, in the set's order. */
typedef struct CallGroups {
	int64_t *start, *order;
	int stride;
} CallGroups;

static void call_groups(const EvRequestSet *s, CallGroups *g)
{
	g->stride = s->n_classes + 1;
	int64_t nk = (int64_t)(s->n_deps > 0 ? s->n_deps : 0) * g->stride;
	g->start = xcalloc((size_t)nk + 2, sizeof *g->start);
	g->order = xmalloc((size_t)(s->n_calls ? s->n_calls : 1) * sizeof *g->order);
	for (int64_t i = 0; i < s->n_calls; i++) {
		const EvCall *cl = &s->calls[i];
		if (cl->dep >= 0)
			g->start[cl->dep * g->stride + s->r[cl->req].cls + 1 + 1]++;
	}
	for (int64_t k = 0; k < nk; k++)
		g->start[k + 1] += g->start[k];
	int64_t *at = xmalloc((size_t)(nk + 1) * sizeof *at);
	memcpy(at, g->start, (size_t)(nk + 1) * sizeof *at);
	for (int64_t i = 0; i < s->n_calls; i++) {
		const EvCall *cl = &s->calls[i];
		if (cl->dep >= 0)
			g->order[at[cl->dep * g->stride + s->r[cl->req].cls + 1]++] = i;
	}
	free(at);
}

static void within_class(Evidence *e, const EvRequestSet *w, const EvRequestSet *b)
{
	static const char *const field[2] = {"service", "client_wait"};
	CallGroups grp[2];
	call_groups(w, &grp[0]);
	call_groups(b, &grp[1]);
	for (int k = 0; k < e->n_deps; k++) {
		int dw = idx(w->deps, w->n_deps, e->deps[k]), db = idx(b->deps, b->n_deps, e->deps[k]);
		if (dw < 0 || db < 0)
			continue;
		char seg[96], cseg[96], name[320];
		evidence_segment(e->deps[k], seg, sizeof seg);
		for (int f = 0; f < 2; f++) {
			int compared = 0, rose = 0, flat = 0;
			for (int c = 0; c < e->n_classes; c++) {
				int cw = idx(w->classes, w->n_classes, e->classes[c]);
				int cb = idx(b->classes, b->n_classes, e->classes[c]);
				if (cw < 0 || cb < 0)
					continue;
				const EvRequestSet *sets[2] = {w, b};
				int dd[2] = {dw, db}, cc[2] = {cw, cb};
				double *v[2] = {NULL, NULL};
				int64_t nv[2] = {0, 0};
				for (int p = 0; p < 2; p++) {
					const EvRequestSet *s = sets[p];
					int64_t key = (int64_t)dd[p] * grp[p].stride + cc[p] + 1;
					int64_t lo = grp[p].start[key], hi = grp[p].start[key + 1];
					v[p] = xmalloc((size_t)(hi > lo ? hi - lo : 1) * sizeof *v[p]);
					for (int64_t j = lo; j < hi; j++) {
						const EvCall *cl = &s->calls[grp[p].order[j]];
						float x = f == 0 ? cl->service_ms : cl->wait_ms;
						if (!isnan(x))
							v[p][nv[p]++] = x;
					}
				}
				if (nv[0] >= EV_MIN_RATIO_N && nv[1] >= EV_MIN_RATIO_N) {
					evidence_segment(e->classes[c], cseg, sizeof cseg);
					for (int p = 0; p < 2; p++) {
						Quant q;
						quant_fill(&q, v[p], nv[p]);
						snprintf(name, sizeof name, "dep.%s.class.%s.%s.p90_ms%s", seg, cseg,
						         field[f], sfx(p));
						EvValue *ev = ev_put(e, name, q.p90, "ms", EV_SRC_SPANS, EV_Q_EXACT, q.n, 0,
						                     "spans: exact nearest-rank p90 of %lld %s of class %s "
						                     "(%s)", (long long)q.n,
						                     f == 0 ? "server spans" : "client waits",
						                     e->classes[c], word(p));
						ev_ci(ev, q.p90_lo, q.p90_hi);
					}
					snprintf(name, sizeof name, "dep.%s.class.%s.%s.p90_ms", seg, cseg, field[f]);
					compared++;
					double a = f == 0 ? 3 : 5, fac = f == 0 ? 1.3 : 1.5;
					rose |= evidence_rose(e, name, a, fac) == 1;
					flat += evidence_flat(e, name, a, fac) == 1;
				}
				free(v[0]);
				free(v[1]);
			}
			snprintf(name, sizeof name, "dep.%s.%s.within_class_rose", seg, field[f]);
			if (compared && !rose && flat < compared) {
				char why[320];
				snprintf(why, sizeof why,
				         "spans: cannot tell: no class's p90 of %s rose beyond noise (%s), but %d "
				         "of the %d classes with 30 calls or more on both sides cannot rule it out",
				         f == 0 ? "the server's time" : "the client-side wait",
				         f == 0 ? "by 30 % and 3 ms" : "by half and 5 ms", compared - flat,
				         compared);
				ev_missing(e, name, "flag", why);
			} else if (compared)
				ev_put(e, name, rose, "flag", EV_SRC_SPANS, EV_Q_NONE, compared, 0,
				       "spans: 1 when the p90 of %s rose beyond noise within some class (%s), "
				       "0 when every class's interval rules that out; over %d classes with 30 "
				       "calls or more on both sides",
				       f == 0 ? "the server's time" : "the client-side wait",
				       f == 0 ? "by 30 %% and 3 ms" : "by half and 5 ms", compared);
			else
				ev_missing(e, name, "flag", "spans: no class has 30 calls on both sides");
		}
	}
	for (int p = 0; p < 2; p++) {
		free(grp[p].start);
		free(grp[p].order);
	}
}

static void reweight(Evidence *e, const EvRequestSet *w, const EvRequestSet *b)
{
	int nc = b->n_classes;
	if (nc == 0 || w->n == 0 || b->n == 0) {
		ev_missing(e, "mix.p99_reweighted_ms", "ms", "spans: needs classes in window and baseline");
		return;
	}
	float **v = xcalloc((size_t)nc, sizeof *v);
	int64_t *nv = xcalloc((size_t)nc, sizeof *nv);
	double *wt = xcalloc((size_t)nc, sizeof *wt);
	float *all = xmalloc((size_t)b->n * sizeof *all);
	int64_t with_cls = 0, na = 0;
	for (int64_t i = 0; i < b->n; i++)
		if (b->r[i].cls >= 0)
			nv[b->r[i].cls]++;
	for (int c = 0; c < nc; c++)
		v[c] = xmalloc((size_t)(nv[c] ? nv[c] : 1) * sizeof **v), nv[c] = 0;
	for (int64_t i = 0; i < b->n; i++)
		if (b->r[i].cls >= 0) {
			int c = b->r[i].cls;
			v[c][nv[c]++] = b->r[i].ingress_ms;
			all[na++] = b->r[i].ingress_ms;
		}
	int ok = 1;
	for (int64_t i = 0; i < w->n; i++) {
		if (w->r[i].cls < 0)
			continue;
		int c = idx(b->classes, nc, w->classes[w->r[i].cls]);
		if (c < 0 || nv[c] == 0) {
			ok = 0; /* a class the baseline never saw: cannot reweight */
			break;
		}
		wt[c] += 1;
		with_cls++;
	}
	if (ok && with_cls > 0 && na > 0) {
		for (int c = 0; c < nc; c++) {
			wt[c] /= (double)with_cls;
			qsort(v[c], (size_t)nv[c], sizeof **v, cmp_float);
		}
		qsort(all, (size_t)na, sizeof *all, cmp_float);
		/* smallest baseline value x with mixture CDF(x) >= 0.99 */
		int64_t lo = 0, hi = na - 1;
		while (lo < hi) {
			int64_t mid = lo + (hi - lo) / 2;
			double cdf = 0;
			for (int c = 0; c < nc; c++)
				if (nv[c])
					cdf += wt[c] * (double)upper(v[c], nv[c], all[mid]) / (double)nv[c];
			if (cdf >= 0.99 - 1e-12)
				hi = mid;
			else
				lo = mid + 1;
		}
		ev_put(e, "mix.p99_reweighted_ms", all[lo], "ms", EV_SRC_SPANS, EV_Q_EXACT, na,
		       quant_small_sample(na),
		       "spans: p99 of the baseline's per-class latencies (%lld requests) mixed in the "
		       "window's class shares", (long long)na);
	} else {
		ev_missing(e, "mix.p99_reweighted_ms", "ms",
		           "spans: a window class has no baseline requests; cannot reweight");
	}
	for (int c = 0; c < nc; c++)
		free(v[c]);
	free(v);
	free(nv);
	free(wt);
	free(all);
}

int ev_requests(Store *st, const EvidenceOptions *opt, const Analysis *a, Evidence *e, Err *err)
{
	const EvRequestSet *set[2] = {NULL, NULL};
	EvRequestSet *own[2] = {NULL, NULL}; /* read here: not given in opt */
	int rc = 0;
	int np = opt->period.has_baseline ? 2 : 1;
	double *cpr[2];
	cpr[0] = xcalloc((size_t)(e->n_classes + 1), sizeof(double));
	cpr[1] = xcalloc((size_t)(e->n_classes + 1), sizeof(double));
	for (int p = 0; p < np; p++) {
		const EvRequestSet *given = opt->requests[p] ? opt->requests[p]
		                                             : evidence_attached_requests(a, p);
		if (given == NULL) {
			TimeRange r = p ? opt->period.base : opt->period.win;
			rc = evidence_requests_load(st, opt->model, a ? a->root_service : NULL,
			                            a ? a->root_operation : NULL, r.from, r.to, &opt->skew,
			                            &own[p], err);
			if (rc)
				goto out;
		}
		set[p] = given ? given : own[p];
		for (int h = 0; h < set[p]->n_hosts; h++)
			ev_list_add(&e->hosts, &e->n_hosts, set[p]->hosts[h]);
	}
	for (int p = 0; p < np; p++) {
		if (set[p]->n == 0)
			continue;
		set_evidence(e, set[p], p, opt->model, cpr[p]);
	}
	if (np == 2 && set[0]->n > 0 && set[1]->n > 0) {
		reweight(e, set[0], set[1]);
		double pct = opt->model && opt->model->objective_pct > 0 ? opt->model->objective_pct : 99;
		ev_attribution(e, set[0], set[1], pct);
		within_class(e, set[0], set[1]);
		ev_callers(e, set[0], set[1]);
		ev_mix_explained(e, set[0], set[1], pct);
		double best = NAN;
		const char *bc = NULL;
		for (int c = 0; c < e->n_classes; c++) {
			if (isnan(cpr[0][c]) || isnan(cpr[1][c]) || cpr[1][c] <= 0)
				continue;
			double ch = fabs(cpr[0][c] / cpr[1][c] - 1);
			if (isnan(best) || ch > best) {
				best = ch;
				bc = e->classes[c];
			}
		}
		if (bc) {
			ev_put(e, "fanout.within_class_change", best, "ratio", EV_SRC_SPANS, EV_Q_NONE, 0, 0,
			       "spans: largest relative change of calls per request within one class "
			       "(class %s; classes with 30+ requests in both)", bc);
			ev_fact(e, "fanout.top_class", bc);
		} else {
			ev_missing(e, "fanout.within_class_change", "ratio",
			           "spans: no class has 30 requests in both window and baseline");
		}
	}
out:
	free(cpr[0]);
	free(cpr[1]);
	evidence_requests_free(own[0]);
	evidence_requests_free(own[1]);
	return rc;
}
