/*
 * analysis.c - the aggregate DAG of an endpoint, kept up to date
 * incrementally.
 *
 * Per-trace trees (trace_build.c) are merged into nodes keyed by their path
 * from the root: (parent node, type, service, span name). For a call the
 * name is the client span's, so calls with and without a server span merge
 * into one node and the unknown split is counted, not hidden.
 *
 * Incremental design (the dashboard must follow a growing database):
 *  - an AnalysisState remembers every trace id it has seen and what each
 *    trace contributed; an update reads only spans with a rowid above the
 *    last one read (rowids only grow);
 *  - a trace that gains spans later (spans of one trace often arrive in
 *    several exports) is read again whole, its old contribution removed and
 *    the new one added;
 *  - each node keeps, per population, class and field, a sorted array of
 *    exact observations with pending additions and removals merged in one
 *    linear pass when a result is asked for, so quantiles stay exact
 *    (nearest rank over every observation) and cost O(1) to read.
 * Edge votes and start offsets are heuristics for drawing; a re-read trace
 * votes again rather than being subtracted.
 */
#include "analysis.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "analysis_priv.h"
#include "endpoints.h"
#include "hash.h"
#include "route.h"
#include "trace_build.h"
#include "trace_feed.h"

#define MAX_CLASSES 64
#define CSLOTS (MAX_CLASSES + 1) /* slot 0: every class; slot 1 + c: class c */

/* the split fields, as trace_unit_split() fills them */
enum { F_TOTAL = TRACE_F_TOTAL, F_WAIT = TRACE_F_WAIT, F_SERVICE = TRACE_F_SERVICE,
       F_QUEUE = TRACE_F_QUEUE, F_COUNT = TRACE_F_COUNT };

/* ---- sorted multiset of doubles ------------------------------------------ */

typedef struct SVec {
	double *v;                /* sorted */
	int64_t n, cap;
	double *add, *del;        /* pending, unsorted */
	int64_t na, acap, nd, dcap;
} SVec;

static void push_d(double **a, int64_t *n, int64_t *cap, double x)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		*a = xrealloc(*a, (size_t)*cap * sizeof **a);
	}
	(*a)[(*n)++] = x;
}

/* Merges pending additions and removals into v in one pass. */
static void sv_flush(SVec *s)
{
	if (s->na == 0 && s->nd == 0)
		return;
	if (s->n == 0 && s->nd == 0) {
		/* the first read: the additions, sorted, are the vector */
		quant_sort(s->add, s->na);
		free(s->v);
		s->v = s->add;
		s->n = s->na;
		s->cap = s->acap;
		s->add = NULL;
		s->na = s->acap = 0;
		return;
	}
	quant_sort(s->add, s->na);
	quant_sort(s->del, s->nd);
	int64_t cap = s->n + s->na;
	double *out = xmalloc((size_t)(cap ? cap : 1) * sizeof *out);
	int64_t i = 0, j = 0, k = 0, o = 0;
	while (i < s->n || j < s->na) {
		double x;
		if (j >= s->na || (i < s->n && s->v[i] <= s->add[j]))
			x = s->v[i++];
		else
			x = s->add[j++];
		while (k < s->nd && s->del[k] < x)
			k++; /* a removal of a value never added: ignore it */
		if (k < s->nd && s->del[k] == x) {
			k++;
			continue;
		}
		out[o++] = x;
	}
	free(s->v);
	s->v = out;
	s->n = o;
	s->cap = cap;
	s->na = s->nd = 0;
}

static void sv_free(SVec *s)
{
	free(s->v);
	free(s->add);
	free(s->del);
}

static void sv_quant(SVec *s, Quant *q)
{
	sv_flush(s);
	q->n = s->n;
	if (s->n == 0) {
		q->p50 = q->p90 = q->p99 = q->max = NAN;
		q->p90_lo = q->p90_hi = q->p99_lo = q->p99_hi = NAN;
		return;
	}
	q->p50 = quant_rank(s->v, s->n, 50);
	q->p90 = quant_rank(s->v, s->n, 90);
	q->p99 = quant_rank(s->v, s->n, 99);
	q->max = s->v[s->n - 1];
	quant_ci(s->v, s->n, 90, &q->p90_lo, &q->p90_hi);
	quant_ci(s->v, s->n, 99, &q->p99_lo, &q->p99_hi);
}

/* ---- state ------------------------------------------------------------- */

typedef struct Counts {
	int64_t calls, unknown, requests, db;
} Counts;

typedef struct PopNode {
	SVec *slot[CSLOTS];       /* [F_COUNT] each, allocated on first use */
	Counts cnt[CSLOTS];
} PopNode;

typedef struct TmpNode {
	int parent;
	int type;
	uint64_t hash;             /* node_hash() of (parent, type, service, operation, callee) */
	char *service, *operation, *dependency;
	char *callee;             /* a call's trace_callee(), else "" */
	char *db_system;          /* a database call's system (db.system.name), or NULL */
	char *peer;               /* an uninstrumented call's peer (server.address), or NULL */
	PopNode pop[2];
	double off_sum;
	int64_t off_n;
	int64_t par_votes, ser_votes;
	int group;
	int64_t last_seq;         /* request dedup for Counts.requests */
	int last_pop;
	Exemplar slowest[NODE_MAX_EXEMPLARS];
	int n_slowest;
	int *kids;
	int n_kids, cap_kids;
} TmpNode;

/* One observation, kept so a re-read trace can take it back. */
typedef struct ObsRef {
	int node;
	int16_t cls;
	uint8_t pop;
	uint8_t flags;            /* OBS_* */
	float f[F_COUNT];         /* ms; NAN when unknown */
} ObsRef;

enum { OBS_REQUEST = 1, OBS_UNKNOWN = 2, OBS_DB = 4 };

typedef struct CpCredit {
	int node;
	int comp;
	float ms;
} CpCredit;

typedef struct ReqRec {
	double ingress_ms;
	int cls;
	int dead;
	int error;
	int64_t credit_off;
	int credit_n;
} ReqRec;

typedef struct TraceRec {
	char id[33];
	int64_t obs_off;
	int obs_n;
	int64_t req[2];           /* index in AnalysisState.req[pop], or -1 */
	DataQuality dq;
	int tail;                 /* read as one of the window's pulled slowest */
	int64_t tail_off;         /* its critical-path credits in scred[POP_WINDOW] */
	int tail_n;
	double tail_ms;           /* its latency at ingress */
} TraceRec;

struct AnalysisState {
	AnalysisOptions opt;      /* wclass copied below; model borrowed */
	char *wclass;
	int root_known;
	char *root_svc, *root_op;
	char *ep_svc, *ep_route;  /* opt's endpoint, copied */
	int64_t rules[ROUTE_RULES]; /* requests by the rule of their route */
	int64_t last_rowid;
	int64_t seq;              /* traces processed, for request dedup */
	/* nodes */
	TmpNode *nodes;
	int n_nodes, cap_nodes;
	int *hash;
	int hash_cap;
	/* classes, in order of discovery */
	char *classes[MAX_CLASSES];
	int n_classes;
	/* traces */
	TraceRec *recs;
	int64_t n_recs, cap_recs;
	int64_t *thash;
	int64_t thash_cap;
	ObsRef *refs;
	int64_t n_refs, cap_refs;
	/* populations */
	ReqRec *req[2];
	int64_t n_req[2], cap_req[2];
	CpCredit *cred[2];
	int64_t n_cred[2], cap_cred[2];
	SVec *ingress[2][CSLOTS];
	int64_t min_start[2], max_end[2];
	DataQuality dq;
	Trace tr;                 /* scratch */
	/* scan bookkeeping */
	char **refetch;
	int64_t n_refetch, cap_refetch;
	int scan_err;
	AnalysisTraceTap tap;     /* analysis_state_tap(): first full read only */
	void *tap_ctx;
	int tapping;
	int once;                 /* analysis_state_once(): no per-trace records */
	int64_t sample_of[2];     /* analysis_state_sample(): requests in the range */
	int64_t *not_pop;         /* trace keys of no population (pulled as the
	                           * slowest of a window, in no sample; store.h,
	                           * "trace sets"), ascending */
	size_t n_not_pop;
	/* the window's pulled slowest traces (store_tail_keys): they, not the
	 * sample's slow requests, are the window's slow population for the
	 * critical path and offer the exemplars */
	int64_t *tail_keys;
	size_t n_tail_keys;
	StoreTailInfo tail_info;
	int64_t n_tail;           /* tail traces of the endpoint read (live) */
	/* a sampled population's slow requests, every one of the range, read
	 * for their critical path only */
	int slow_all[2];          /* 1: these replace the sample's slow requests */
	double slow_thr[2];
	int64_t n_slow[2];
	CpCredit *scred[2];
	int64_t n_scred[2], cap_scred[2];
	int crit_only;            /* assign_nodes: no edge votes, no offsets */
};

static uint64_t hash_str(const char *s)
{
	return hash_fnv1a_str(HASH_FNV1A_BASIS, s);
}

static uint64_t node_hash(int parent, int type, const char *svc, const char *op,
                          const char *callee)
{
	uint64_t h = (hash_str(svc) * 31 + hash_str(op)) * 31 + hash_str(callee);
	h ^= ((uint64_t)(uint32_t)parent << 8 | (uint64_t)(uint32_t)type) * 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 29);
}

static void node_hash_grow(AnalysisState *g)
{
	int cap = g->hash_cap ? g->hash_cap * 2 : 256;
	int *h = xmalloc((size_t)cap * sizeof *h);
	for (int i = 0; i < cap; i++)
		h[i] = -1;
	for (int id = 0; id < g->n_nodes; id++) {
		uint64_t x = g->nodes[id].hash & (uint64_t)(cap - 1);
		while (h[x] >= 0)
			x = (x + 1) & (uint64_t)(cap - 1);
		h[x] = id;
	}
	free(g->hash);
	g->hash = h;
	g->hash_cap = cap;
}

static int node_get(AnalysisState *g, int parent, int type, const char *svc, const char *op,
                    const char *callee)
{
	if (g->n_nodes * 2 >= g->hash_cap)
		node_hash_grow(g);
	uint64_t hv = node_hash(parent, type, svc, op, callee);
	uint64_t x = hv & (uint64_t)(g->hash_cap - 1);
	while (g->hash[x] >= 0) {
		int id = g->hash[x];
		const TmpNode *c = &g->nodes[id];
		if (c->hash == hv && c->parent == parent && c->type == type &&
		    strcmp(c->service, svc) == 0 && strcmp(c->operation, op) == 0 &&
		    strcmp(c->callee, callee) == 0)
			return id;
		x = (x + 1) & (uint64_t)(g->hash_cap - 1);
	}
	if (g->n_nodes == g->cap_nodes) {
		g->cap_nodes = g->cap_nodes ? g->cap_nodes * 2 : 64;
		g->nodes = xrealloc(g->nodes, (size_t)g->cap_nodes * sizeof *g->nodes);
	}
	int id = g->n_nodes++;
	TmpNode *n = &g->nodes[id];
	memset(n, 0, sizeof *n);
	n->parent = parent;
	n->type = type;
	n->hash = hv;
	n->service = xstrdup(svc);
	n->operation = xstrdup(op);
	n->callee = xstrdup(callee);
	n->group = -1;
	n->last_seq = -1;
	g->hash[x] = id;
	if (parent >= 0) {
		TmpNode *p = &g->nodes[parent];
		if (p->n_kids == p->cap_kids) {
			p->cap_kids = p->cap_kids ? p->cap_kids * 2 : 4;
			p->kids = xrealloc(p->kids, (size_t)p->cap_kids * sizeof *p->kids);
		}
		p->kids[p->n_kids++] = id;
	}
	return id;
}

static int class_get(AnalysisState *g, const char *name)
{
	if (name == NULL || *name == '\0')
		return -1;
	for (int i = 0; i < g->n_classes; i++)
		if (strcmp(g->classes[i], name) == 0)
			return i;
	if (g->n_classes >= MAX_CLASSES)
		return -1; /* bounded: beyond this a "class" attribute is an id, not a class */
	g->classes[g->n_classes] = xstrdup(name);
	return g->n_classes++;
}

static SVec *slot_vecs(SVec **slot)
{
	if (*slot == NULL)
		*slot = xcalloc(F_COUNT, sizeof **slot);
	return *slot;
}

static double ms(int64_t ns)
{
	return (double)ns / 1e6;
}

/* ---- trace records ---------------------------------------------------- */

static int64_t rec_find(AnalysisState *g, const char *id)
{
	if (g->thash_cap == 0)
		return -1;
	uint64_t x = hash_str(id) & (uint64_t)(g->thash_cap - 1);
	while (g->thash[x] >= 0) {
		if (strcmp(g->recs[g->thash[x]].id, id) == 0)
			return g->thash[x];
		x = (x + 1) & (uint64_t)(g->thash_cap - 1);
	}
	return -1;
}

static void rec_hash_insert(AnalysisState *g, int64_t r)
{
	uint64_t x = hash_str(g->recs[r].id) & (uint64_t)(g->thash_cap - 1);
	while (g->thash[x] >= 0)
		x = (x + 1) & (uint64_t)(g->thash_cap - 1);
	g->thash[x] = r;
}

static int64_t rec_new(AnalysisState *g, const char *id)
{
	if ((g->n_recs + 1) * 2 >= g->thash_cap) {
		int64_t cap = g->thash_cap ? g->thash_cap * 2 : 1024;
		free(g->thash);
		g->thash = xmalloc((size_t)cap * sizeof *g->thash);
		for (int64_t i = 0; i < cap; i++)
			g->thash[i] = -1;
		g->thash_cap = cap;
		for (int64_t i = 0; i < g->n_recs; i++)
			rec_hash_insert(g, i);
	}
	if (g->n_recs == g->cap_recs) {
		g->cap_recs = g->cap_recs ? g->cap_recs * 2 : 1024;
		g->recs = xrealloc(g->recs, (size_t)g->cap_recs * sizeof *g->recs);
	}
	int64_t r = g->n_recs++;
	TraceRec *t = &g->recs[r];
	memset(t, 0, sizeof *t);
	snprintf(t->id, sizeof t->id, "%s", id);
	t->req[0] = t->req[1] = -1;
	rec_hash_insert(g, r);
	return r;
}

static void dq_add(DataQuality *to, const DataQuality *d, int sign)
{
	to->traces += sign * d->traces;
	to->spans += sign * d->spans;
	to->other_endpoint += sign * d->other_endpoint;
	to->rootless += sign * d->rootless;
	to->no_entry += sign * d->no_entry;
	to->entered_below += sign * d->entered_below;
	to->extra_roots += sign * d->extra_roots;
	to->orphan_spans += sign * d->orphan_spans;
	to->cycles += sign * d->cycles;
	to->unpaired_calls += sign * d->unpaired_calls;
	to->db_calls += sign * d->db_calls;
	to->clipped += sign * d->clipped;
	to->skew += sign * d->skew;
	to->outside_parent += sign * d->outside_parent;
	to->late_server += sign * d->late_server;
	to->held += sign * d->held;
	to->skew_serial += sign * d->skew_serial;
	if (sign > 0 && d->skew_max_ms > to->skew_max_ms)
		to->skew_max_ms = d->skew_max_ms;
}

/* Takes back everything a trace contributed. */
static void rec_remove(AnalysisState *g, TraceRec *r)
{
	for (int i = 0; i < r->obs_n; i++) {
		ObsRef *o = &g->refs[r->obs_off + i];
		TmpNode *n = &g->nodes[o->node];
		PopNode *pn = &n->pop[o->pop];
		int slots[2] = {0, o->cls >= 0 ? 1 + o->cls : -1};
		for (int k = 0; k < 2; k++) {
			if (slots[k] < 0)
				continue;
			SVec *v = slot_vecs(&pn->slot[slots[k]]);
			for (int f = 0; f < F_COUNT; f++)
				if (!isnan(o->f[f]))
					push_d(&v[f].del, &v[f].nd, &v[f].dcap, o->f[f]);
			Counts *c = &pn->cnt[slots[k]];
			c->calls--;
			if (o->flags & OBS_UNKNOWN)
				c->unknown--;
			if (o->flags & OBS_DB)
				c->db--;
			if (o->flags & OBS_REQUEST)
				c->requests--;
		}
		/* exemplars of this trace go too */
		for (int k = 0; k < n->n_slowest; k++) {
			if (strcmp(n->slowest[k].trace_id, r->id) == 0) {
				memmove(&n->slowest[k], &n->slowest[k + 1],
				        (size_t)(n->n_slowest - k - 1) * sizeof n->slowest[0]);
				n->n_slowest--;
				k--;
			}
		}
	}
	r->obs_n = 0;
	for (int p = 0; p < 2; p++) {
		if (r->req[p] < 0)
			continue;
		ReqRec *q = &g->req[p][r->req[p]];
		q->dead = 1;
		int slots[2] = {0, q->cls >= 0 ? 1 + q->cls : -1};
		for (int k = 0; k < 2; k++) {
			if (slots[k] < 0)
				continue;
			SVec *v = slot_vecs(&g->ingress[p][slots[k]]);
			push_d(&v->del, &v->nd, &v->dcap, q->ingress_ms);
		}
		r->req[p] = -1;
	}
	if (r->tail) {
		/* a tail trace: its critical path and its exemplars */
		CpCredit *c = g->scred[POP_WINDOW] + r->tail_off;
		for (int i = 0; i < r->tail_n; i++)
			c[i].ms = 0;
		g->n_slow[POP_WINDOW]--;
		g->n_tail--;
		for (int id = 0; id < g->n_nodes; id++) {
			TmpNode *n = &g->nodes[id];
			for (int k = 0; k < n->n_slowest; k++)
				if (strcmp(n->slowest[k].trace_id, r->id) == 0) {
					memmove(&n->slowest[k], &n->slowest[k + 1],
					        (size_t)(n->n_slowest - k - 1) * sizeof n->slowest[0]);
					n->n_slowest--;
					k--;
				}
		}
		r->tail = 0;
	}
	dq_add(&g->dq, &r->dq, -1);
	memset(&r->dq, 0, sizeof r->dq);
}

/* ---- per trace ---------------------------------------------------------- */

static void exemplar_offer(TmpNode *n, const char *trace_id, double v, double queue, int cls)
{
	/* one entry per trace: its slowest call, and how many calls it made */
	for (int k = 0; k < n->n_slowest; k++) {
		Exemplar *e = &n->slowest[k];
		if (strcmp(e->trace_id, trace_id) != 0)
			continue;
		e->calls++;
		if (v > e->ms) {
			e->ms = v;
			e->queue_ms = queue;
			for (; k > 0 && n->slowest[k - 1].ms < n->slowest[k].ms; k--) {
				Exemplar tmp = n->slowest[k - 1];
				n->slowest[k - 1] = n->slowest[k];
				n->slowest[k] = tmp;
			}
		}
		return;
	}
	int k = n->n_slowest;
	if (k == NODE_MAX_EXEMPLARS && v <= n->slowest[k - 1].ms)
		return;
	if (k < NODE_MAX_EXEMPLARS)
		k = n->n_slowest++;
	else
		k = NODE_MAX_EXEMPLARS - 1;
	while (k > 0 && n->slowest[k - 1].ms < v) {
		n->slowest[k] = n->slowest[k - 1];
		k--;
	}
	snprintf(n->slowest[k].trace_id, sizeof n->slowest[k].trace_id, "%s", trace_id);
	n->slowest[k].ms = v;
	n->slowest[k].queue_ms = queue;
	n->slowest[k].wclass = cls;
	n->slowest[k].calls = 1;
}

static void push_ref(AnalysisState *g, const ObsRef *o)
{
	if (g->n_refs == g->cap_refs) {
		g->cap_refs = g->cap_refs ? g->cap_refs * 2 : 4096;
		g->refs = xrealloc(g->refs, (size_t)g->cap_refs * sizeof *g->refs);
	}
	g->refs[g->n_refs++] = *o;
}

/* Records one unit (root, call or local span) for population p. */
static void record_unit(AnalysisState *g, Trace *t, int s, int p, int cls, TraceRec *rec)
{
	TSpan *sp = &t->sp[s];
	TmpNode *n = &g->nodes[sp->node];
	ObsRef o = {.node = sp->node, .cls = (int16_t)cls, .pop = (uint8_t)p, .flags = 0};
	double f4[TRACE_F_COUNT];
	int split = trace_unit_split(t, s, n->type, f4);
	for (int f = 0; f < F_COUNT; f++)
		o.f[f] = isnan(f4[f]) ? NAN : (float)f4[f];
	if (split & TRACE_SPLIT_UNKNOWN)
		o.flags |= OBS_UNKNOWN;
	if (split & TRACE_SPLIT_DB)
		o.flags |= OBS_DB;
	if (n->last_seq != g->seq || n->last_pop != p) {
		n->last_seq = g->seq;
		n->last_pop = p;
		o.flags |= OBS_REQUEST;
	}
	PopNode *pn = &n->pop[p];
	int slots[2] = {0, cls >= 0 ? 1 + cls : -1};
	for (int k = 0; k < 2; k++) {
		if (slots[k] < 0)
			continue;
		SVec *v = slot_vecs(&pn->slot[slots[k]]);
		for (int f = 0; f < F_COUNT; f++)
			if (!isnan(o.f[f]))
				push_d(&v[f].add, &v[f].na, &v[f].acap, o.f[f]);
		Counts *c = &pn->cnt[slots[k]];
		c->calls++;
		if (o.flags & OBS_UNKNOWN)
			c->unknown++;
		if (o.flags & OBS_DB)
			c->db++;
		if (o.flags & OBS_REQUEST)
			c->requests++;
	}
	if (!g->once) {
		push_ref(g, &o);
		rec->obs_n++;
	}
	if (p == POP_WINDOW)
		exemplar_offer(n, t->trace_id, o.f[F_TOTAL], o.f[F_QUEUE], cls);
}

/* Siblings overlapping in time are a parallel group; the rest serial,
 * including pairs whose overlap is within the skew tolerance (counted in
 * *skew_pairs, each pair once). */
static void vote_edges(AnalysisState *g, Trace *t, const int *units, int nu, int64_t *skew_pairs)
{
	for (int i = 0; i < nu; i++) {
		const TSpan *a = &t->sp[units[i]];
		int first = -1;
		for (int j = 0; j < nu; j++) {
			if (i == j)
				continue;
			const TSpan *b = &t->sp[units[j]];
			if (!(a->astart < b->aend && b->astart < a->aend))
				continue;
			/* a container and what it holds: one inside the other */
			if (trace_holds(t, units[i], units[j]) || trace_holds(t, units[j], units[i]))
				continue;
			if (!trace_siblings_parallel(t, units[i], units[j])) {
				if (j > i)
					(*skew_pairs)++;
				continue;
			}
			if (first < 0 || t->sp[units[j]].astart < t->sp[first].astart)
				first = units[j];
		}
		TmpNode *n = &g->nodes[a->node];
		if (first >= 0) {
			n->par_votes++;
			n->group = t->sp[first].astart < a->astart ? t->sp[first].node : a->node;
		} else {
			n->ser_votes++;
		}
	}
}

/* The units of a trace, in the order they were given nodes. */
typedef struct Units {
	int *s;
	int n, cap;
	int64_t skew_pairs;       /* sibling pairs taken as serial within the skew tolerance */
} Units;

static void units_push(Units *u, int s)
{
	if (u->n == u->cap) {
		u->cap = u->cap ? u->cap * 2 : 64;
		u->s = xrealloc(u->s, (size_t)u->cap * sizeof *u->s);
	}
	u->s[u->n++] = s;
}

static void assign_nodes(AnalysisState *g, Trace *t, int s, int parent_node, int depth, Units *u);

static void assign_children(AnalysisState *g, Trace *t, int content, int node, int depth, int skip,
                            Units *u)
{
	int units[256];
	int nu = 0;
	for (int c = t->sp[content].first_child; c >= 0; c = t->sp[c].next_sibling) {
		if (c == skip)
			continue;
		assign_nodes(g, t, c, node, depth + 1, u);
		if (nu < 256 && !t->sp[c].outside)
			units[nu++] = c;
	}
	if (!g->crit_only)
		vote_edges(g, t, units, nu, &u->skew_pairs);
}

static void assign_nodes(AnalysisState *g, Trace *t, int s, int parent_node, int depth, Units *u)
{
	TSpan *sp = &t->sp[s];
	int type = sp->kind == SPAN_KIND_CLIENT ? NODE_CALL : NODE_LOCAL;
	if (parent_node < 0)
		type = NODE_ROOT;
	/* the root is the endpoint: named by its route, so the entries of one
	 * route under different span names are one node */
	int node = node_get(g, parent_node, type, trace_str(t, sp->svc),
	                    type == NODE_ROOT ? trace_route(t, s) : trace_str(t, sp->name),
	                    type == NODE_CALL ? trace_callee(t, s) : "");
	sp->node = node;
	if (type == NODE_CALL && sp->server >= 0) {
		TSpan *sv = &t->sp[sp->server];
		sv->node = node;
		sv->comp = COMP_SERVICE;
		TmpNode *n = &g->nodes[node];
		if (n->dependency == NULL && sv->svc)
			n->dependency = xstrdup(trace_str(t, sv->svc));
	} else if (type == NODE_CALL && sp->db) {
		/* a database call: its system names it for the evidence */
		TmpNode *n = &g->nodes[node];
		if (n->db_system == NULL)
			n->db_system = xstrdup(trace_str(t, sp->db));
	} else if (type == NODE_CALL && sp->peer) {
		/* a call to something that sends no spans (a third-party API):
		 * the peer it names is what the evidence calls it */
		TmpNode *n = &g->nodes[node];
		if (n->peer == NULL)
			n->peer = xstrdup(trace_str(t, sp->peer));
	}
	units_push(u, s);
	const TSpan *root = &t->sp[t->root];
	if (!g->crit_only) {
		g->nodes[node].off_sum += ms(sp->astart - root->astart);
		g->nodes[node].off_n++;
	}
	if (depth > 256)
		return;
	if (type == NODE_CALL && sp->server >= 0) {
		/* the server's children, then any other child of the client */
		assign_children(g, t, sp->server, node, depth, -1, u);
		int others = 0;
		for (int c = sp->first_child; c >= 0; c = t->sp[c].next_sibling)
			if (c != sp->server)
				others++;
		if (others)
			assign_children(g, t, s, node, depth, sp->server, u);
	} else {
		assign_children(g, t, s, node, depth, -1, u);
	}
}

/* Appends the critical-path credits of trace t (per node and component)
 * to the list; returns how many. */
static int64_t push_credits(const Trace *t, CpCredit **list, int64_t *n, int64_t *cap)
{
	int64_t added = 0;
	for (int i = 0; i < t->n; i++) {
		const TSpan *s = &t->sp[i];
		if (s->node < 0 || (!s->crit && !s->crit_queue))
			continue;
		for (int k = 0; k < 2; k++) {
			int64_t v = k == 0 ? s->crit : s->crit_queue;
			if (v <= 0)
				continue;
			if (*n == *cap) {
				*cap = *cap ? *cap * 2 : 4096;
				*list = xrealloc(*list, (size_t)*cap * sizeof **list);
			}
			CpCredit *c = &(*list)[(*n)++];
			c->node = s->node;
			c->comp = k == 0 ? s->comp : COMP_QUEUE;
			c->ms = (float)ms(v);
			added++;
		}
	}
	return added;
}

static int64_t push_req(AnalysisState *g, int p, Trace *t, double ingress, int cls)
{
	if (g->n_req[p] == g->cap_req[p]) {
		g->cap_req[p] = g->cap_req[p] ? g->cap_req[p] * 2 : 1024;
		g->req[p] = xrealloc(g->req[p], (size_t)g->cap_req[p] * sizeof *g->req[p]);
	}
	int64_t idx = g->n_req[p]++;
	ReqRec *r = &g->req[p][idx];
	r->ingress_ms = ingress;
	r->cls = cls;
	r->dead = 0;
	r->error = t->sp[t->root].status == 2;
	r->credit_off = g->n_cred[p];
	r->credit_n = (int)push_credits(t, &g->cred[p], &g->n_cred[p], &g->cap_cred[p]);
	int slots[2] = {0, cls >= 0 ? 1 + cls : -1};
	for (int k = 0; k < 2; k++) {
		if (slots[k] < 0)
			continue;
		SVec *v = slot_vecs(&g->ingress[p][slots[k]]);
		push_d(&v->add, &v->na, &v->acap, ingress);
	}
	const TSpan *root = &t->sp[t->root];
	if (root->start < g->min_start[p])
		g->min_start[p] = root->start;
	if (root->end > g->max_end[p])
		g->max_end[p] = root->end;
	return idx;
}

static int trace_class(AnalysisState *g, Trace *t)
{
	if (t->root >= 0 && t->sp[t->root].cls)
		return class_get(g, trace_str(t, t->sp[t->root].cls));
	for (int i = 0; i < t->n; i++)
		if (t->sp[i].cls && !t->sp[i].orphan && !t->sp[i].above)
			return class_get(g, trace_str(t, t->sp[i].cls));
	return -1;
}

static int in_pop(const AnalysisState *g, int p, int64_t start)
{
	const AnalysisOptions *o = &g->opt;
	if (p == POP_WINDOW)
		return time_range_has(o->period.win, start);
	return o->period.has_baseline && time_range_has(o->period.base, start);
}

static int key_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* A trace pulled as one of a window's slowest, and in no uniform sample:
 * it serves the tail's traces, it is no request of a population. */
static int not_population(const AnalysisState *g, int64_t key)
{
	return g->n_not_pop > 0 && key > 0 &&
	       bsearch(&key, g->not_pop, g->n_not_pop, sizeof key, key_cmp) != NULL;
}

/* A trace of a pulled slowest set covering the window (store_tail_keys). */
static int tail_trace(const AnalysisState *g, int64_t key)
{
	return g->n_tail_keys > 0 && key > 0 &&
	       bsearch(&key, g->tail_keys, g->n_tail_keys, sizeof key, key_cmp) != NULL;
}

/* A window request that is one of the window's pulled slowest (nodes
 * assigned, critical path computed): its critical path is one of the
 * window's slow population's, and its units offer exemplars (a slowest
 * trace of no sample records nothing else: it is no request of the
 * population). */
static void tail_take(AnalysisState *g, Trace *t, TraceRec *rec, const Units *u, int cls)
{
	rec->tail = 1;
	rec->tail_ms = ms(trace_ingress_ns(t));
	rec->tail_off = g->n_scred[POP_WINDOW];
	rec->tail_n = (int)push_credits(t, &g->scred[POP_WINDOW], &g->n_scred[POP_WINDOW],
	                                &g->cap_scred[POP_WINDOW]);
	g->n_slow[POP_WINDOW]++;
	g->n_tail++;
	for (int i = 0; i < u->n; i++) {
		int s = u->s[i];
		TmpNode *n = &g->nodes[t->sp[s].node];
		double f4[TRACE_F_COUNT];
		trace_unit_split(t, s, n->type, f4);
		exemplar_offer(n, t->trace_id, f4[F_TOTAL], f4[F_QUEUE], cls);
	}
}

static int trace_class(AnalysisState *g, Trace *t);

/* A pulled slowest trace of the window that no sample holds (linked):
 * nothing of it is a population's, only its critical path and exemplars
 * (tail_take), when it is a request of the endpoint (and of the class). */
static void tail_only(AnalysisState *g, Trace *t, TraceRec *rec)
{
	if (t->cyclic || t->root < 0)
		return;
	const TSpan *root = &t->sp[t->root];
	if (strcmp(trace_str(t, root->svc), g->root_svc) != 0 ||
	    strcmp(trace_route(t, t->root), g->root_op) != 0)
		return;
	int cls = trace_class(g, t);
	if (g->wclass && (cls < 0 || strcmp(g->classes[cls], g->wclass) != 0))
		return;
	Units u = {0};
	g->crit_only = 1;
	assign_nodes(g, t, t->root, -1, 0, &u);
	g->crit_only = 0;
	trace_critical_path(t);
	tail_take(g, t, rec, &u, cls);
	free(u.s);
}

/* Adds a whole trace (g->tr) and records its contribution in rec. */
static void process_trace(AnalysisState *g, TraceRec *rec)
{
	Trace *t = &g->tr;
	if (t->n == 0)
		return;
	trace_link_entry(t);
	int64_t start = trace_request_start(t);
	int pops[2], np = 0;
	for (int p = 0; p < 2; p++)
		if (in_pop(g, p, start))
			pops[np++] = p;
	int outside = not_population(g, t->key);
	int tail = pops[0] == POP_WINDOW && tail_trace(g, t->key);
	if (np == 0 || (outside && !tail))
		return;
	if (outside) {
		tail_only(g, t, rec);
		return;
	}
	DataQuality d;
	memset(&d, 0, sizeof d);
	d.traces = 1;
	d.spans = t->n;
	if (t->cyclic) {
		d.cycles = 1;
		goto done;
	}
	d.extra_roots = t->n_extra_roots;
	d.orphan_spans = t->n_orphans;
	if (t->root < 0) {
		/* no entry: no span at all without a parent, or a client's alone */
		if (t->top < 0)
			d.rootless = 1;
		else
			d.no_entry = 1;
		goto done;
	}
	if (t->root != t->top)
		d.entered_below = 1;
	const TSpan *root = &t->sp[t->root];
	if (strcmp(trace_str(t, root->svc), g->root_svc) != 0 ||
	    strcmp(trace_route(t, t->root), g->root_op) != 0) {
		d.other_endpoint = 1;
		goto done;
	}
	if (root->route_rule >= 0 && root->route_rule < ROUTE_RULES)
		g->rules[root->route_rule]++;
	if (g->tapping)
		for (int k = 0; k < np; k++)
			g->tap(g->tap_ctx, t, pops[k]);
	int cls = trace_class(g, t);
	if (g->wclass && (cls < 0 || strcmp(g->classes[cls], g->wclass) != 0))
		goto done;
	d.unpaired_calls = t->n_unpaired;
	d.db_calls = t->n_db;
	d.clipped = t->n_clipped;
	d.skew = t->n_skew;
	d.skew_max_ms = t->skew_max_ms;
	d.outside_parent = t->n_outside;
	d.late_server = t->n_late;
	d.held = t->n_held;

	Units u = {0};
	assign_nodes(g, t, t->root, -1, 0, &u);
	if (t->n_orphans + t->n_extra_roots > 0) {
		/* orphan subtrees are kept under one marker node, off the path */
		int on = node_get(g, t->sp[t->root].node, NODE_ORPHANS, "", "(missing parent)", "");
		for (int i = 0; i < t->n; i++)
			if (t->sp[i].orphan)
				assign_nodes(g, t, i, on, 1, &u);
	}
	d.skew_serial = u.skew_pairs;
	/* the path starts at the root, so orphan subtrees never own path time */
	trace_critical_path(t);
	rec->obs_off = g->n_refs;
	rec->obs_n = 0;
	for (int k = 0; k < np; k++) {
		int p = pops[k];
		g->seq++;
		for (int i = 0; i < u.n; i++)
			record_unit(g, t, u.s[i], p, cls, rec);
		rec->req[p] = push_req(g, p, t, ms(trace_ingress_ns(t)), cls);
	}
	if (tail)
		tail_take(g, t, rec, &u, cls);
	free(u.s);
done:
	rec->dq = d;
	dq_add(&g->dq, &d, +1);
}

/* ---- reading ---------------------------------------------------------- */

static void refetch_push(AnalysisState *g, const char *id)
{
	if (g->n_refetch == g->cap_refetch) {
		g->cap_refetch = g->cap_refetch ? g->cap_refetch * 2 : 64;
		g->refetch = xrealloc(g->refetch, (size_t)g->cap_refetch * sizeof *g->refetch);
	}
	g->refetch[g->n_refetch++] = xstrdup(id);
}

/* A group of new rows of one trace is complete: add it, or, when the trace
 * had older rows, read it again whole after the scan. */
static void end_group(AnalysisState *g)
{
	Trace *t = &g->tr;
	if (t->n == 0)
		return;
	int64_t r = rec_find(g, t->trace_id);
	if (r >= 0) {
		refetch_push(g, t->trace_id);
		return;
	}
	r = rec_new(g, t->trace_id);
	process_trace(g, &g->recs[r]);
}

/* Swaps the contents of two traces (the feed's and the state's own). */
static void trace_swap(Trace *a, Trace *b)
{
	Trace x = *a;
	*a = *b;
	*b = x;
}

/* A whole trace from the feed (its rows new to the state), as end_group()
 * takes the state's own. The feed gets its trace back unchanged in size. */
static void take_group(AnalysisState *g, Trace *t)
{
	trace_swap(&g->tr, t);
	end_group(g);
	trace_swap(&g->tr, t);
}

/* A read shared by several connections (st[part]): chunks of FEED_CHUNK
 * trace keys, chunk c read by part c % parts. */
enum { FEED_CHUNK = 32 };
typedef struct RangeRead {
	Store *st[TRACE_FEED_MAX_PARTS];
	int64_t max_key, upto;
} RangeRead;

static int scan_range(void *ctx, int part, int64_t from, int64_t to, TraceSink *s, Err *err)
{
	RangeRead *r = ctx;
	return store_spans_key_range(r->st[part], from, to, r->upto, trace_sink_row, s, err);
}

static int read_ranges(TraceSink *s, void *ctx, int part, int parts, Err *err)
{
	RangeRead *r = ctx;
	return trace_sink_key_chunks(s, part, parts, FEED_CHUNK, r->max_key, scan_range, r, err);
}

static int on_trace_row(void *ctx, const StoreSpanRow *r)
{
	AnalysisState *g = ctx;
	trace_add(&g->tr, r);
	return 0;
}

/* The endpoint to analyse: the one asked for, else the model's root,
 * else the first of the ranked endpoints of the window and baseline
 * (endpoints.h). None yet (no request anywhere): decided when one comes. */
static int pick_root(AnalysisState *g, Store *st, Err *err)
{
	const Model *m = g->opt.model;
	char *svc = NULL, *route = NULL;
	if (g->opt.ep_service && g->opt.ep_route) {
		svc = xstrdup(g->opt.ep_service);
		route = xstrdup(g->opt.ep_route);
	} else if (m && m->root_service && m->root_operation) {
		svc = xstrdup(m->root_service);
		route = xstrdup(m->root_operation);
	} else {
		EndpointList *l = NULL;
		if (analysis_endpoints(st, &g->opt.period, m, &l, err))
			return TT_ESTORE;
		if (l->n > 0) {
			svc = xstrdup(l->v[0].service);
			route = xstrdup(l->v[0].route);
		}
		analysis_endpoints_free(l);
	}
	if (svc == NULL)
		return 0; /* no request yet: decide when one arrives */
	g->root_svc = svc;
	g->root_op = route;
	g->root_known = 1;
	return 0;
}

AnalysisState *analysis_state_new(const AnalysisOptions *opt)
{
	AnalysisState *g = xcalloc(1, sizeof *g);
	g->opt = *opt;
	if (opt->wclass) {
		g->wclass = xstrdup(opt->wclass);
		g->opt.wclass = g->wclass;
	}
	if (opt->ep_service && opt->ep_route) {
		g->ep_svc = xstrdup(opt->ep_service);
		g->ep_route = xstrdup(opt->ep_route);
	}
	g->opt.ep_service = g->ep_svc;
	g->opt.ep_route = g->ep_route;
	trace_init(&g->tr);
	trace_set_skew(&g->tr, &opt->skew);
	for (int p = 0; p < 2; p++) {
		g->min_start[p] = INT64_MAX;
		g->max_end[p] = INT64_MIN;
	}
	const Model *m = opt->model;
	if (m)
		for (int i = 0; i < m->n_classes; i++)
			class_get(g, m->classes[i]);
	return g;
}

static atomic_llong full_reads; /* first reads of every span (analysis_full_reads) */

int64_t analysis_full_reads(void)
{
	return (int64_t)atomic_load(&full_reads);
}

int analysis_state_update(AnalysisState *g, Store *st, Err *err)
{
	if (!g->root_known) {
		if (pick_root(g, st, err))
			return TT_ESTORE;
		if (!g->root_known)
			return 0;
	}
	int64_t max;
	if (store_spans_max_rowid(st, &max, err))
		return TT_ESTORE;
	if (max <= g->last_rowid)
		return 0;
	free(g->not_pop);
	if (store_traces_not_population(st, &g->not_pop, &g->n_not_pop, err))
		return TT_ESTORE;
	free(g->tail_keys);
	if (store_tail_keys(st, g->opt.period.win.from, g->opt.period.win.to, &g->tail_keys,
	                    &g->n_tail_keys, &g->tail_info, err))
		return TT_ESTORE;
	if (g->last_rowid == 0)
		atomic_fetch_add(&full_reads, 1);
	g->tapping = g->tap != NULL && g->last_rowid == 0;
	/* the first read, of every span, by runs of trace keys (so that a
	 * trace comes from its pack when it has a valid one), in two parts
	 * when that pays; it reads up to max, which every connection sees, and
	 * the rows added meanwhile are the next update's. Later ones read the
	 * new rows. */
	Store *more[TRACE_FEED_MAX_PARTS] = {NULL};
	int parts = g->last_rowid == 0 ? trace_feed_parts(st, max, 0, more) : 1;
	TraceFeed *f = NULL;
	RangeRead rr = {.st = {st, more[0]}, .upto = max};
	int rc = 0;
	if (g->last_rowid == 0 && (rc = store_trace_key_max(st, &rr.max_key, err)) == 0) {
		f = trace_feed_start(read_ranges, &rr, parts, &g->opt.skew);
	} else if (rc == 0) {
		f = trace_feed_scan(st, store_spans_since, g->last_rowid, max, &g->opt.skew);
	}
	Trace *t;
	while (f && (t = trace_feed_next(f, NULL)) != NULL)
		take_group(g, t);
	if (f)
		rc = trace_feed_finish(f, err);
	trace_feed_parts_close(more);
	/* a trace read again whole below was passed to the tap as first read */
	g->tapping = 0;
	trace_reset(&g->tr, "");
	for (int64_t i = 0; i < g->n_refetch; i++) {
		/* read once: a trace that gained rows during the read keeps what
		 * it had (nothing is recorded to take its contribution back) */
		if (rc == 0 && !g->once) {
			int64_t r = rec_find(g, g->refetch[i]);
			rec_remove(g, &g->recs[r]);
			trace_reset(&g->tr, g->refetch[i]);
			rc = store_trace_scan(st, g->refetch[i], on_trace_row, g, err);
			if (rc == 0)
				process_trace(g, &g->recs[r]);
		}
		free(g->refetch[i]);
	}
	g->n_refetch = 0;
	if (rc)
		return rc;
	/* every read stops at max: rows added meanwhile are the next update's */
	g->last_rowid = max;
	return 0;
}

/* ---- a uniform sample of the requests ------------------------------------ */

typedef struct KeyList {
	int64_t *k;
	double *ms;               /* the request's latency at ingress (root lists) */
	int64_t n, cap;
} KeyList;

static void keys_push(KeyList *l, int64_t k, double ms_v)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 1024;
		l->k = xrealloc(l->k, (size_t)l->cap * sizeof *l->k);
		l->ms = xrealloc(l->ms, (size_t)l->cap * sizeof *l->ms);
	}
	l->ms[l->n] = ms_v;
	l->k[l->n++] = k;
}

static void keys_free(KeyList *l)
{
	free(l->k);
	free(l->ms);
}

static int on_root_key(void *ctx, const StoreRootKey *k)
{
	/* as trace_ingress_ns(): the root's duration plus its queue wait */
	keys_push(ctx, k->trace_key, ms(k->end_ns - k->start_ns + (k->has_queue ? k->queue_ns : 0)));
	return 0;
}

static int cmp_i64_first(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Population p's slow requests among all of all (the rule of finish_pop:
 * above the objective when any request is, else at or above the p99),
 * into slow (keys sorted); their threshold into g. */
static void slow_keys(AnalysisState *g, int p, const KeyList *all, KeyList *slow)
{
	int64_t n = all->n;
	double *v = xmalloc((size_t)n * sizeof *v);
	memcpy(v, all->ms, (size_t)n * sizeof *v);
	quant_sort(v, n);
	double obj = g->opt.model ? g->opt.model->objective_ms : 0;
	double thr = quant_rank(v, n, 99);
	int above = obj > 0 && v[n - 1] > obj;
	if (above)
		thr = obj;
	free(v);
	for (int64_t i = 0; i < n; i++)
		if (above ? all->ms[i] > thr : all->ms[i] >= thr)
			keys_push(slow, all->k[i], all->ms[i]);
	qsort(slow->k, (size_t)slow->n, sizeof *slow->k, cmp_i64_first);
	g->slow_all[p] = 1;
	g->slow_thr[p] = thr;
}

typedef struct KeysRead {
	Store *st[TRACE_FEED_MAX_PARTS];
	const KeyList *list[3];    /* the sample (tag 0, keys sorted), then each
	                            * population's slow requests (tag 1 + p) */
} KeysRead;

/* The keys of the three lists one after another, in chunks of FEED_CHUNK
 * keys, chunk c read by part c % parts. */
static int read_keys(TraceSink *s, void *ctx, int part, int parts, Err *err)
{
	KeysRead *r = ctx;
	int64_t c = 0;
	for (int l = 0; l < 3; l++) {
		const KeyList *kl = r->list[l];
		trace_sink_tag(s, l);
		for (int64_t i0 = 0; i0 < kl->n; i0 += FEED_CHUNK, c++) {
			if (c % parts != part)
				continue;
			for (int64_t i = i0; i < kl->n && i < i0 + FEED_CHUNK; i++) {
				if (l == 0 && i > 0 && kl->k[i] == kl->k[i - 1])
					continue; /* in both populations */
				int rc = store_trace_key_scan(r->st[part], kl->k[i], trace_sink_row, s, err);
				if (rc)
					return rc;
				trace_sink_cut(s);
			}
			if (parts > 1)
				trace_sink_chunk(s);
		}
	}
	return 0;
}

/* A slow request of a sampled population (g->tr, read whole): its
 * critical path only, into p's slow credits; nothing else it has is
 * counted (the sample stands for the population). */
static void crit_trace(AnalysisState *g, int p)
{
	Trace *t = &g->tr;
	if (!trace_link_request(t, g->root_svc, g->root_op))
		return;
	Units u = {0};
	g->crit_only = 1;
	assign_nodes(g, t, t->root, -1, 0, &u);
	g->crit_only = 0;
	free(u.s);
	trace_critical_path(t);
	g->n_slow[p]++;
	push_credits(t, &g->scred[p], &g->n_scred[p], &g->cap_scred[p]);
}

int analysis_state_sample(AnalysisState *g, Store *st, int64_t max_requests, Err *err)
{
	/* one class's requests cannot be listed without reading their traces:
	 * a class filter reads them all */
	if (max_requests <= 0 || g->last_rowid != 0 || g->wclass)
		return analysis_state_update(g, st, err);
	/* a pulled slowest set of the window: its traces, not the range's
	 * slow requests by the root index, are the tail (a pull is small) */
	{
		int64_t *tk = NULL;
		size_t ntk = 0;
		StoreTailInfo ti;
		if (store_tail_keys(st, g->opt.period.win.from, g->opt.period.win.to, &tk, &ntk, &ti,
		                    err))
			return TT_ESTORE;
		free(tk);
		if (ntk > 0)
			return analysis_state_update(g, st, err);
	}
	if (!g->root_known) {
		if (pick_root(g, st, err))
			return TT_ESTORE;
		if (!g->root_known)
			return 0;
	}
	KeyList all[2] = {{0}}, pick = {0};
	int rc = 0, over = 0;
	for (int p = 0; p < 2 && rc == 0; p++) {
		if (p == POP_BASELINE && !g->opt.period.has_baseline)
			continue;
		TimeRange r = p ? g->opt.period.base : g->opt.period.win;
		/* the index lists the requests whose entry is their root: with
		 * roots of another kind in the range (a load generator's client
		 * spans above the entries), or roots whose route is not stored
		 * yet, it does not list them all, and every trace is read */
		int64_t unusual = 0;
		rc = store_roots_unusual(st, r.from, r.to, &unusual, err);
		if (rc == 0 && unusual > 0) {
			keys_free(&all[0]);
			keys_free(&all[1]);
			return analysis_state_update(g, st, err);
		}
		if (rc == 0)
			rc = store_root_keys(st, g->root_svc, g->root_op, r.from, r.to, on_root_key, &all[p],
			                     err);
		over |= all[p].n > max_requests;
	}
	if (rc || !over) {
		keys_free(&all[0]);
		keys_free(&all[1]);
		return rc ? TT_ESTORE : analysis_state_update(g, st, err);
	}
	/* the slow requests of a sampled population: every one of them, for the
	 * critical path (a few percent of the range) */
	KeyList slow[2] = {{0}};
	for (int p = 0; p < 2; p++)
		if (all[p].n > max_requests)
			slow_keys(g, p, &all[p], &slow[p]);
	/* systematic: max_requests evenly spaced in start order, the first and
	 * the last included, so every part of the range is represented as it
	 * is in the data */
	for (int p = 0; p < 2; p++) {
		int64_t n = all[p].n;
		if (n <= max_requests) {
			for (int64_t i = 0; i < n; i++)
				keys_push(&pick, all[p].k[i], 0);
			continue;
		}
		g->sample_of[p] = n;
		for (int64_t j = 0; j < max_requests; j++) {
			int64_t i = max_requests > 1
			            ? (int64_t)((double)j * (double)(n - 1) / (double)(max_requests - 1))
			            : 0;
			keys_push(&pick, all[p].k[i], 0);
		}
	}
	keys_free(&all[0]);
	keys_free(&all[1]);
	qsort(pick.k, (size_t)pick.n, sizeof *pick.k, cmp_i64_first);
	int64_t max;
	if (store_spans_max_rowid(st, &max, err)) {
		keys_free(&pick);
		keys_free(&slow[0]);
		keys_free(&slow[1]);
		return TT_ESTORE;
	}
	g->once = 1;
	Store *more[TRACE_FEED_MAX_PARTS] = {NULL};
	int parts = trace_feed_parts(st, pick.n + slow[0].n + slow[1].n, 1, more);
	KeysRead kr = {.st = {st, more[0]}, .list = {&pick, &slow[0], &slow[1]}};
	TraceFeed *f = trace_feed_start(read_keys, &kr, parts, &g->opt.skew);
	Trace *t;
	int tag;
	while ((t = trace_feed_next(f, &tag)) != NULL) {
		if (tag == 0) {
			g->tapping = g->tap != NULL;
			take_group(g, t);
			g->tapping = 0;
		} else {
			trace_swap(&g->tr, t);
			crit_trace(g, tag - 1);
			trace_swap(&g->tr, t);
		}
	}
	rc = trace_feed_finish(f, err);
	trace_feed_parts_close(more);
	trace_reset(&g->tr, "");
	keys_free(&pick);
	keys_free(&slow[0]);
	keys_free(&slow[1]);
	g->last_rowid = max;
	return rc;
}

/* ---- results ------------------------------------------------------------ */

static void fill_stats(NodeStats *st, PopNode *pn, int slot)
{
	memset(st, 0, sizeof *st);
	Counts *c = &pn->cnt[slot];
	st->calls = c->calls;
	st->requests = c->requests;
	st->unknown_split = c->unknown;
	st->db_calls = c->db;
	SVec *v = slot_vecs(&pn->slot[slot]);
	sv_quant(&v[F_TOTAL], &st->total);
	sv_quant(&v[F_WAIT], &st->client_wait);
	sv_quant(&v[F_SERVICE], &st->service);
	sv_quant(&v[F_QUEUE], &st->queue);
}

static _Thread_local const AnalysisState *g_order; /* per thread: analyses run on workers */

static int cmp_child_time(const void *x, const void *y)
{
	const TmpNode *a = &g_order->nodes[*(const int *)x];
	const TmpNode *b = &g_order->nodes[*(const int *)y];
	if (a->type == NODE_ORPHANS || b->type == NODE_ORPHANS)
		return (a->type == NODE_ORPHANS) - (b->type == NODE_ORPHANS);
	double oa = a->off_n ? a->off_sum / (double)a->off_n : 0;
	double ob = b->off_n ? b->off_sum / (double)b->off_n : 0;
	if (oa != ob)
		return oa < ob ? -1 : 1;
	int c = strcmp(a->service, b->service);
	if (c == 0)
		c = strcmp(a->operation, b->operation);
	return c ? c : strcmp(a->callee, b->callee);
}

/* Pre-order numbering with children in time order. Nodes that no request
 * of either population uses any more are left out. */
static int node_used(const AnalysisState *g, const TmpNode *n, int depth)
{
	if (n->pop[0].cnt[0].calls > 0 || n->pop[1].cnt[0].calls > 0)
		return 1;
	for (int i = 0; i < n->n_kids && depth < 512; i++)
		if (node_used(g, &g->nodes[n->kids[i]], depth + 1))
			return 1;
	return 0;
}

static void order_nodes(AnalysisState *g, int tmp, int *order, int *n, int *remap, int depth)
{
	if (depth > 512 || !node_used(g, &g->nodes[tmp], depth))
		return;
	int id = (*n)++;
	order[id] = tmp;
	remap[tmp] = id;
	TmpNode *t = &g->nodes[tmp];
	if (t->n_kids == 0)
		return;
	int *kids = xmalloc((size_t)t->n_kids * sizeof *kids);
	memcpy(kids, t->kids, (size_t)t->n_kids * sizeof *kids);
	g_order = g;
	qsort(kids, (size_t)t->n_kids, sizeof *kids, cmp_child_time);
	int nk = t->n_kids;
	for (int i = 0; i < nk; i++)
		order_nodes(g, kids[i], order, n, remap, depth + 1);
	free(kids);
}

/* Adds n credits to the nodes' critical path of population p; returns
 * their sum (ms). */
static double add_credits(Analysis *a, int p, const int *remap, const CpCredit *c, int64_t n)
{
	double total = 0;
	for (int64_t k = 0; k < n; k++) {
		int id = remap[c[k].node];
		if (id < 0)
			continue;
		a->nodes[id].crit[p].ms[c[k].comp] += c[k].ms;
		a->nodes[id].crit[p].total_ms += c[k].ms;
		total += c[k].ms;
	}
	return total;
}

static void finish_pop(AnalysisState *g, Analysis *a, int p, const int *remap, const int *cmap)
{
	PopSummary *ps = &a->pop[p];
	int nc = a->n_classes ? a->n_classes : 1;
	ps->class_requests = xcalloc((size_t)nc, sizeof(int64_t));
	ps->class_ingress = xcalloc((size_t)nc, sizeof(Quant));
	SVec *all = slot_vecs(&g->ingress[p][0]);
	sv_quant(all, &ps->ingress);
	ps->requests = ps->ingress.n;
	for (int c = 0; c < g->n_classes; c++) {
		SVec *v = slot_vecs(&g->ingress[p][1 + c]);
		Quant q;
		sv_quant(v, &q);
		ps->class_requests[cmap[c]] = q.n;
		ps->class_ingress[cmap[c]] = q;
	}
	TimeRange range = p ? g->opt.period.base : g->opt.period.win;
	int64_t from = range.from, to = range.to;
	int64_t lo = g->min_start[p] == INT64_MAX ? 0 : g->min_start[p];
	int64_t hi = g->max_end[p] == INT64_MIN ? 0 : g->max_end[p];
	ps->from_ns = from == INT64_MIN ? lo : from;
	ps->to_ns = to == INT64_MAX ? hi : to;
	ps->open_from = from == INT64_MIN;
	ps->open_to = to == INT64_MAX;
	int64_t n = ps->requests;
	ps->sample_of = g->sample_of[p];
	int64_t all_n = ps->sample_of > 0 ? ps->sample_of : n;
	ps->rate_rps = (all_n > 0 && ps->to_ns > ps->from_ns)
	               ? (double)all_n / ((double)(ps->to_ns - ps->from_ns) / 1e9) : 0;

	/* the slow population: above the objective, else at or above p99 */
	double thr = ps->ingress.p99;
	int above = 0;
	if (a->objective_ms > 0 && n > 0) {
		int64_t k = all->n;
		while (k > 0 && all->v[k - 1] > a->objective_ms)
			k--;
		if (k < all->n) {
			above = 1;
			thr = a->objective_ms;
		}
	}
	ps->slow_threshold_ms = n ? thr : 0;
	double total = 0;
	for (int64_t i = 0; i < g->n_req[p]; i++) {
		const ReqRec *r = &g->req[p][i];
		if (r->dead)
			continue;
		if (r->error)
			ps->errors++;
		int slow = above ? r->ingress_ms > thr : r->ingress_ms >= thr;
		if (!slow || n == 0 || g->slow_all[p] || (p == POP_WINDOW && g->n_tail > 0))
			continue;
		ps->slow_requests++;
		total += add_credits(a, p, remap, &g->cred[p][r->credit_off], r->credit_n);
	}
	if (p == POP_WINDOW && g->n_tail > 0) {
		/* the window's pulled slowest: their critical path is the tail's,
		 * from the shortest of them up */
		double shortest = INFINITY;
		for (int64_t i = 0; i < g->n_recs; i++)
			if (g->recs[i].tail && g->recs[i].tail_ms < shortest)
				shortest = g->recs[i].tail_ms;
		ps->tail_pulled = 1;
		ps->tail_requested = g->tail_info.requested;
		ps->tail_of = g->tail_info.population_min == g->tail_info.population_max
		              ? g->tail_info.population_max : -1;
		ps->slow_threshold_ms = shortest;
		ps->slow_requests = g->n_slow[p];
		total += add_credits(a, p, remap, g->scred[p], g->n_scred[p]);
	} else if (g->slow_all[p] && n > 0) {
		/* a sample: the critical path of every slow request of the range */
		ps->slow_threshold_ms = g->slow_thr[p];
		ps->slow_requests = g->n_slow[p];
		total += add_credits(a, p, remap, g->scred[p], g->n_scred[p]);
	}
	ps->crit_total_ms = total;
	for (int i = 0; i < a->n_nodes; i++)
		a->nodes[i].crit[p].share = total > 0 ? a->nodes[i].crit[p].total_ms / total : 0;
}

void analysis_slow_source(const Analysis *a, int p, char *out, size_t n)
{
	const PopSummary *ps = &a->pop[p];
	const char *range = p == POP_BASELINE ? "baseline" : "window";
	if (ps->tail_pulled) {
		char of[64] = "";
		if (ps->tail_of > 0)
			snprintf(of, sizeof of, " (of %lld it listed)", (long long)ps->tail_of);
		snprintf(out, n, "the %lld slowest of the %s, pulled from the trace back end%s",
		         (long long)ps->slow_requests, range, of);
	} else if (ps->sample_of > 0) {
		snprintf(out, n, "every slow request of the %s's %lld", range,
		         (long long)ps->sample_of);
	} else {
		snprintf(out, n, "the slow requests of the %s's %lld requests read", range,
		         (long long)ps->requests);
	}
}

static _Thread_local char *const *g_cls;

static int cmp_class(const void *x, const void *y)
{
	return strcmp(g_cls[*(const int *)x], g_cls[*(const int *)y]);
}

/* The model's word on node d (mandatory, core, label); d->label is set. */
void analysis_link_children(Analysis *a)
{
	int n = a->n_nodes;
	for (int id = 0; id < n; id++)
		if (a->nodes[id].parent >= 0)
			a->nodes[a->nodes[id].parent].n_children++;
	for (int id = 0; id < n; id++) {
		DagNode *d = &a->nodes[id];
		d->children = xmalloc((size_t)(d->n_children ? d->n_children : 1) * sizeof(int));
		d->n_children = 0;
	}
	for (int id = 0; id < n; id++) {
		DagNode *d = &a->nodes[id];
		if (d->parent >= 0) {
			DagNode *p = &a->nodes[d->parent];
			p->children[p->n_children++] = id;
		}
	}
}

const char *analysis_call_target(const DagNode *d)
{
	if (d->type != NODE_CALL)
		return NULL;
	if (d->dependency)
		return d->dependency;
	return d->db_system ? NULL : d->peer;
}

const ModelNode *analysis_model_node(const Model *m, const DagNode *d)
{
	/* a call is named in the model by what it is made to, or by the
	 * caller's service and the client span name */
	const char *to = analysis_call_target(d);
	const ModelNode *mn = to ? model_find_node(m, to, NULL) : NULL;
	if (mn)
		return mn;
	mn = model_find_node(m, d->service, d->operation);
	if (mn && d->type == NODE_CALL && mn->operation == NULL && d->dependency == NULL)
		mn = NULL; /* "any operation of the caller" is not this call */
	return mn;
}

void analysis_node_semantics(const Model *m, DagNode *d)
{
	const ModelNode *mn = analysis_model_node(m, d);
	d->mandatory = mn ? mn->mandatory : MODEL_UNKNOWN;
	d->core = mn ? mn->core : MODEL_UNKNOWN;
	if (mn && mn->label)
		d->label = xstrdup(mn->label);
	else if (d->type == NODE_CALL && d->dependency)
		d->label = xstrdup(d->dependency);
	else if (analysis_call_target(d) && !strstr(d->operation, d->peer)) {
		/* a call to something that sends no spans, under a span name
		 * that may be the method alone ("GET"): the peer says where */
		size_t n = strlen(d->operation) + strlen(d->peer) + 2;
		d->label = xmalloc(n);
		snprintf(d->label, n, "%s %s", d->operation, d->peer);
	} else {
		d->label = xstrdup(d->operation);
	}
}

Analysis *analysis_state_result(AnalysisState *g, Store *st)
{
	Analysis *a = xcalloc(1, sizeof *a);
	a->data_version = st ? store_data_version(st) : 0;
	const Model *m = g->opt.model;
	a->objective_ms = m ? m->objective_ms : 0;
	a->root_service = xstrdup(g->root_svc ? g->root_svc : "");
	a->root_operation = xstrdup(g->root_op ? g->root_op : "");
	a->route_rule = -1;
	for (int r = 0; r < ROUTE_RULES; r++)
		if (g->rules[r] > 0 && (a->route_rule < 0 || g->rules[r] > g->rules[a->route_rule]))
			a->route_rule = r;
	if (m && m->endpoint) {
		a->endpoint = xstrdup(m->endpoint);
	} else {
		Buf b;
		buf_init(&b);
		buf_printf(&b, "%s %s", a->root_service, a->root_operation);
		a->endpoint = xstrdup(buf_str(&b));
		buf_fini(&b);
	}
	if (g->wclass)
		a->class_filter = xstrdup(g->wclass);
	a->asked = g->opt;
	a->asked.wclass = a->class_filter;
	/* asked by name: the endpoint analysed is that one */
	a->asked.ep_service = g->ep_svc ? a->root_service : NULL;
	a->asked.ep_route = g->ep_svc ? a->root_operation : NULL;
	atomic_init(&a->extra_refs, 0);
	a->dq = g->dq;
	if (st) {
		Err e = {0};
		if (store_sources_unrecognised(st, &a->dq.unrecognised_sources, &e) != 0)
			a->dq.unrecognised_sources = 0; /* a finding, not worth failing the analysis */
	}

	/* classes sorted by name */
	int nc = g->n_classes;
	int idx[MAX_CLASSES], cmap[MAX_CLASSES];
	for (int i = 0; i < nc; i++)
		idx[i] = i;
	g_cls = g->classes;
	qsort(idx, (size_t)nc, sizeof idx[0], cmp_class);
	a->n_classes = nc;
	a->classes = xcalloc((size_t)(nc ? nc : 1), sizeof *a->classes);
	for (int j = 0; j < nc; j++) {
		cmap[idx[j]] = j;
		a->classes[j] = xstrdup(g->classes[idx[j]]);
	}

	/* nodes in pre-order */
	int nn = g->n_nodes;
	int *order = xmalloc((size_t)(nn ? nn : 1) * sizeof *order);
	int *remap = xmalloc((size_t)(nn ? nn : 1) * sizeof *remap);
	for (int i = 0; i < nn; i++)
		remap[i] = -1;
	int n = 0;
	for (int i = 0; i < nn; i++)
		if (g->nodes[i].parent < 0)
			order_nodes(g, i, order, &n, remap, 0);
	a->n_nodes = n;
	a->nodes = xcalloc((size_t)(n ? n : 1), sizeof *a->nodes);
	for (int id = 0; id < n; id++) {
		TmpNode *t = &g->nodes[order[id]];
		DagNode *d = &a->nodes[id];
		d->id = id;
		d->parent = t->parent >= 0 ? remap[t->parent] : -1;
		d->depth = d->parent >= 0 ? a->nodes[d->parent].depth + 1 : 0;
		d->type = t->type;
		d->service = xstrdup(t->service);
		d->operation = xstrdup(t->operation);
		d->dependency = t->dependency ? xstrdup(t->dependency) : NULL;
		d->db_system = t->db_system ? xstrdup(t->db_system) : NULL;
		d->peer = t->peer ? xstrdup(t->peer) : NULL;
		d->callee = t->callee && *t->callee ? xstrdup(t->callee) : NULL;
		d->edge = d->parent < 0 ? EDGE_ROOT
		          : (t->par_votes > t->ser_votes ? EDGE_PARALLEL : EDGE_SERIAL);
		d->group = (d->edge == EDGE_PARALLEL && t->group >= 0) ? remap[t->group] : -1;
		d->start_offset_ms = t->off_n ? t->off_sum / (double)t->off_n : 0;
		analysis_node_semantics(m, d);
		for (int p = 0; p < 2; p++) {
			fill_stats(&d->pop[p], &t->pop[p], 0);
			d->by_class[p] = xcalloc((size_t)(nc ? nc : 1), sizeof(NodeStats));
			for (int c = 0; c < nc; c++)
				fill_stats(&d->by_class[p][cmap[c]], &t->pop[p], 1 + c);
		}
		SVec *tot = &slot_vecs(&t->pop[0].slot[0])[F_TOTAL];
		d->dist = xmalloc((size_t)(tot->n ? tot->n : 1) * sizeof *d->dist);
		if (tot->n > 0)
			memcpy(d->dist, tot->v, (size_t)tot->n * sizeof *d->dist);
		memcpy(d->slowest, t->slowest, sizeof d->slowest);
		d->n_slowest = t->n_slowest;
		for (int k = 0; k < d->n_slowest; k++)
			if (d->slowest[k].wclass >= 0)
				d->slowest[k].wclass = cmap[d->slowest[k].wclass];
	}
	analysis_link_children(a);
	for (int p = 0; p < 2; p++) {
		if (p == POP_BASELINE && !g->opt.period.has_baseline)
			break;
		a->pop[p].present = 1;
		finish_pop(g, a, p, remap, cmap);
	}
	free(order);
	free(remap);
	return a;
}

void analysis_state_free(AnalysisState *g)
{
	if (g == NULL)
		return;
	free(g->not_pop);
	free(g->tail_keys);
	for (int i = 0; i < g->n_nodes; i++) {
		TmpNode *n = &g->nodes[i];
		free(n->service);
		free(n->operation);
		free(n->callee);
		free(n->dependency);
		free(n->db_system);
		free(n->peer);
		free(n->kids);
		for (int p = 0; p < 2; p++)
			for (int s = 0; s < CSLOTS; s++) {
				if (n->pop[p].slot[s] == NULL)
					continue;
				for (int f = 0; f < F_COUNT; f++)
					sv_free(&n->pop[p].slot[s][f]);
				free(n->pop[p].slot[s]);
			}
	}
	free(g->nodes);
	free(g->hash);
	for (int i = 0; i < g->n_classes; i++)
		free(g->classes[i]);
	free(g->recs);
	free(g->thash);
	free(g->refs);
	for (int p = 0; p < 2; p++) {
		free(g->req[p]);
		free(g->cred[p]);
		free(g->scred[p]);
		for (int s = 0; s < CSLOTS; s++) {
			if (g->ingress[p][s]) {
				sv_free(g->ingress[p][s]);
				free(g->ingress[p][s]);
			}
		}
	}
	trace_fini(&g->tr);
	free(g->refetch);
	free(g->root_svc);
	free(g->root_op);
	free(g->ep_svc);
	free(g->ep_route);
	free(g->wclass);
	free(g);
}

void analysis_state_once(AnalysisState *g)
{
	g->once = 1;
}

void analysis_state_tap(AnalysisState *g, AnalysisTraceTap fn, void *ctx)
{
	g->tap = fn;
	g->tap_ctx = ctx;
}

int analysis_run(Store *st, const AnalysisOptions *opt, Analysis **out, Err *err)
{
	return analysis_run_sample(st, opt, 0, out, err);
}

int analysis_run_sample(Store *st, const AnalysisOptions *opt, int64_t max_requests,
                        Analysis **out, Err *err)
{
	*out = NULL;
	AnalysisState *g = analysis_state_new(opt);
	analysis_state_once(g);
	int rc = analysis_state_sample(g, st, max_requests, err);
	if (rc == 0)
		*out = analysis_state_result(g, st);
	analysis_state_free(g);
	return rc;
}

int analysis_class_index(const Analysis *a, const char *name)
{
	if (name == NULL)
		return -1;
	for (int i = 0; i < a->n_classes; i++)
		if (strcmp(a->classes[i], name) == 0)
			return i;
	return -1;
}

Analysis *analysis_ref(const Analysis *a)
{
	if (a == NULL)
		return NULL;
	/* the count is the one field a holder may change: the Analysis is
	 * always allocated writable (analysis_state_result) */
	Analysis *w = (Analysis *)a;
	atomic_fetch_add_explicit(&w->extra_refs, 1, memory_order_relaxed);
	return w;
}

static void skew_effective(const SkewTolerance *s, int64_t *abs_ns, double *frac)
{
	*abs_ns = s->set ? s->abs_ns : ANALYSIS_SKEW_ABS_NS;
	*frac = s->set ? s->frac : ANALYSIS_SKEW_FRAC;
}

int analysis_answers(const Analysis *a, const AnalysisOptions *o)
{
	if (a == NULL || o == NULL || a->approx)
		return 0; /* figures from the aggregates stand in for nobody's exact ones */
	const AnalysisOptions *h = &a->asked;
	if (!period_eq(&h->period, &o->period))
		return 0;
	if (h->model != o->model)
		return 0;
	if ((h->wclass == NULL) != (o->wclass == NULL) ||
	    (h->wclass && strcmp(h->wclass, o->wclass) != 0))
		return 0;
	/* an endpoint asked for by name: the same one (copied by the caller:
	 * compared by content) */
	const char *hs[2] = {h->ep_service, h->ep_route}, *os[2] = {o->ep_service, o->ep_route};
	for (int k = 0; k < 2; k++)
		if ((hs[k] == NULL) != (os[k] == NULL) || (hs[k] && strcmp(hs[k], os[k]) != 0))
			return 0;
	int64_t ha, oa;
	double hf, of;
	skew_effective(&h->skew, &ha, &hf);
	skew_effective(&o->skew, &oa, &of);
	return ha == oa && hf == of;
}

void analysis_free(Analysis *a)
{
	if (a == NULL)
		return;
	/* another holder remains: the last one frees. acq_rel: every read this
	 * holder made happens before the free of whoever is last */
	if (atomic_fetch_sub_explicit(&a->extra_refs, 1, memory_order_acq_rel) > 0)
		return;
	for (int i = 0; i < a->n_nodes; i++) {
		DagNode *d = &a->nodes[i];
		free(d->children);
		free(d->service);
		free(d->operation);
		free(d->dependency);
		free(d->db_system);
		free(d->peer);
		free(d->callee);
		free(d->label);
		free(d->by_class[0]);
		free(d->by_class[1]);
		free(d->dist);
	}
	free(a->nodes);
	for (int i = 0; i < a->n_classes; i++)
		free(a->classes[i]);
	free(a->classes);
	for (int p = 0; p < 2; p++) {
		free(a->pop[p].class_requests);
		free(a->pop[p].class_ingress);
	}
	free(a->endpoint);
	free(a->root_service);
	free(a->root_operation);
	free(a->class_filter);
	if (a->attached_free)
		a->attached_free(a->attached);
	free(a);
}
