/*
 * analysis.c - the aggregate DAG of an endpoint: merges per-trace trees
 * (trace_build.c) into nodes keyed by their path from the root, collects
 * raw observations per node, then computes exact quantiles per class and
 * population, edge kinds and critical-path ownership of the slow requests.
 *
 * A node's key is (parent node, type, service, span name). For a call the
 * name is the client span's name, so calls with and without a server span
 * merge into one node and the unknown split is counted, not hidden.
 */
#include "analysis.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "trace_build.h"

typedef struct Obs {
	float total, wait, service, queue;   /* ms; NAN when unknown */
	int16_t cls;                          /* class index or -1 */
} Obs;

typedef struct ObsVec {
	Obs *v;
	int64_t n, cap;
	int64_t requests;                     /* requests that had the node */
	int64_t unknown;                      /* calls without a server */
} ObsVec;

typedef struct TmpNode {
	int parent;
	int type;
	char *service, *operation, *dependency;
	ObsVec obs[2];
	double crit_ms[2][COMP_COUNT];
	double off_sum;
	int64_t off_n;
	int64_t par_votes, ser_votes;
	int group;                            /* tmp id of the group's first node */
	int64_t last_trace;                   /* dedup for requests count */
	Exemplar slowest[NODE_MAX_EXEMPLARS];
	int n_slowest;
} TmpNode;

/* One request's critical-path credit, kept until the slow threshold is
 * known at the end of the scan. */
typedef struct CpCredit {
	int node;
	int comp;
	float ms;
} CpCredit;

typedef struct ReqRec {
	double ingress_ms;
	int cls;
	int64_t credit_off;
	int credit_n;
} ReqRec;

typedef struct Agg {
	const AnalysisOptions *opt;
	Analysis *a;
	TmpNode *nodes;
	int n_nodes, cap_nodes;
	int *hash;                            /* open addressing: tmp node ids */
	int hash_cap;
	char **classes;
	int n_classes;
	int pop;                              /* population being scanned */
	int64_t trace_seq;
	Trace tr;
	const char *root_svc, *root_op;
	/* per population */
	ReqRec *req[2];
	int64_t n_req[2], cap_req[2];
	CpCredit *cred[2];
	int64_t n_cred[2], cap_cred[2];
	int64_t errors[2];
	int64_t min_start[2], max_end[2];
	Buf key;
} Agg;

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static char *node_key(Agg *g, int parent, int type, const char *svc, const char *op)
{
	buf_reset(&g->key);
	buf_printf(&g->key, "%d\x1f%d\x1f%s\x1f%s", parent, type, svc, op);
	return g->key.p;
}

static const char *tmp_key_of(Agg *g, int id)
{
	TmpNode *n = &g->nodes[id];
	return node_key(g, n->parent, n->type, n->service, n->operation);
}

static void hash_grow(Agg *g)
{
	int cap = g->hash_cap ? g->hash_cap * 2 : 256;
	int *h = xmalloc((size_t)cap * sizeof *h);
	for (int i = 0; i < cap; i++)
		h[i] = -1;
	for (int id = 0; id < g->n_nodes; id++) {
		uint64_t x = hash_str(tmp_key_of(g, id)) & (uint64_t)(cap - 1);
		while (h[x] >= 0)
			x = (x + 1) & (uint64_t)(cap - 1);
		h[x] = id;
	}
	free(g->hash);
	g->hash = h;
	g->hash_cap = cap;
}

static int node_get(Agg *g, int parent, int type, const char *svc, const char *op)
{
	if (g->n_nodes * 2 >= g->hash_cap)
		hash_grow(g);
	char *key = xstrdup(node_key(g, parent, type, svc, op));
	uint64_t x = hash_str(key) & (uint64_t)(g->hash_cap - 1);
	while (g->hash[x] >= 0) {
		int id = g->hash[x];
		if (strcmp(tmp_key_of(g, id), key) == 0) {
			free(key);
			return id;
		}
		x = (x + 1) & (uint64_t)(g->hash_cap - 1);
	}
	free(key);
	if (g->n_nodes == g->cap_nodes) {
		g->cap_nodes = g->cap_nodes ? g->cap_nodes * 2 : 64;
		g->nodes = xrealloc(g->nodes, (size_t)g->cap_nodes * sizeof *g->nodes);
	}
	int id = g->n_nodes++;
	TmpNode *n = &g->nodes[id];
	memset(n, 0, sizeof *n);
	n->parent = parent;
	n->type = type;
	n->service = xstrdup(svc);
	n->operation = xstrdup(op);
	n->group = -1;
	n->last_trace = -1;
	g->hash[x] = id;
	return id;
}

static int class_get(Agg *g, const char *name)
{
	if (name == NULL || *name == '\0')
		return -1;
	for (int i = 0; i < g->n_classes; i++)
		if (strcmp(g->classes[i], name) == 0)
			return i;
	if (g->n_classes >= 64)
		return -1; /* bounded: beyond this a "class" attribute is an id, not a class */
	g->classes = xrealloc(g->classes, (size_t)(g->n_classes + 1) * sizeof *g->classes);
	g->classes[g->n_classes] = xstrdup(name);
	return g->n_classes++;
}

static void obs_push(ObsVec *v, Obs o)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 16;
		v->v = xrealloc(v->v, (size_t)v->cap * sizeof *v->v);
	}
	v->v[v->n++] = o;
}

static double ms(int64_t ns)
{
	return (double)ns / 1e6;
}

static void exemplar_offer(TmpNode *n, const char *trace_id, double v, int cls)
{
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
	n->slowest[k].wclass = cls;
}

/* Gives every span of the trace its aggregate node and records the
 * observations of each unit (root, call, local span). */
static void assign_nodes(Agg *g, Trace *t, int s, int parent_node, int cls, int depth);

static void record_unit(Agg *g, Trace *t, int s, int node, int cls)
{
	TSpan *sp = &t->sp[s];
	TmpNode *n = &g->nodes[node];
	Obs o = {.total = NAN, .wait = NAN, .service = NAN, .queue = NAN, .cls = (int16_t)cls};
	int64_t dur = sp->end - sp->start;
	o.total = (float)ms(dur);
	if (n->type == NODE_CALL) {
		if (sp->server >= 0) {
			/* the server's time inside the call: after clipping (small
			 * overruns, late work) and skew centring, which keeps the
			 * server's own duration when it fits */
			const TSpan *sv = &t->sp[sp->server];
			int64_t sdur = sv->aend - sv->astart;
			if (sdur > dur)
				sdur = dur;
			if (sdur < 0)
				sdur = 0;
			o.service = (float)ms(sdur);
			o.wait = (float)ms(dur - sdur);
		} else {
			n->obs[g->pop].unknown++;
		}
	} else {
		o.service = (float)ms(dur);
	}
	if (sp->has_queue)
		o.queue = (float)ms(sp->queue);
	if (n->type == NODE_ROOT)
		o.total = (float)ms(trace_ingress_ns(t));
	obs_push(&n->obs[g->pop], o);
	if (n->last_trace != g->trace_seq) {
		n->last_trace = g->trace_seq;
		n->obs[g->pop].requests++;
	}
	const TSpan *root = &t->sp[t->root];
	n->off_sum += ms(sp->astart - root->astart);
	n->off_n++;
	if (g->pop == POP_WINDOW)
		exemplar_offer(n, t->trace_id, o.total, cls);
}

/* Siblings overlapping in time are a parallel group; the rest serial. */
static void vote_edges(Agg *g, Trace *t, const int *units, int nu)
{
	for (int i = 0; i < nu; i++) {
		const TSpan *a = &t->sp[units[i]];
		int first = -1;
		for (int j = 0; j < nu; j++) {
			if (i == j)
				continue;
			const TSpan *b = &t->sp[units[j]];
			if (a->astart < b->aend && b->astart < a->aend) {
				if (first < 0 || t->sp[units[j]].astart < t->sp[first].astart)
					first = units[j];
			}
		}
		TmpNode *n = &g->nodes[a->node];
		if (first >= 0) {
			n->par_votes++;
			int gfirst = t->sp[first].astart < a->astart ? t->sp[first].node : a->node;
			n->group = gfirst;
		} else {
			n->ser_votes++;
		}
	}
}

static void assign_children(Agg *g, Trace *t, int content, int node, int cls, int depth,
                            int skip)
{
	int units[256];
	int nu = 0;
	for (int c = t->sp[content].first_child; c >= 0; c = t->sp[c].next_sibling) {
		if (c == skip || t->sp[c].excluded)
			continue;
		assign_nodes(g, t, c, node, cls, depth + 1);
		if (nu < 256 && !t->sp[c].outside)
			units[nu++] = c;
	}
	vote_edges(g, t, units, nu);
}

static void assign_nodes(Agg *g, Trace *t, int s, int parent_node, int cls, int depth)
{
	TSpan *sp = &t->sp[s];
	int type = sp->kind == SPAN_KIND_CLIENT ? NODE_CALL : NODE_LOCAL;
	if (parent_node < 0)
		type = NODE_ROOT;
	int node = node_get(g, parent_node, type, trace_str(t, sp->svc), trace_str(t, sp->name));
	sp->node = node;
	if (type == NODE_CALL && sp->server >= 0) {
		TSpan *sv = &t->sp[sp->server];
		sv->node = node;
		sv->comp = COMP_SERVICE;
		TmpNode *n = &g->nodes[node];
		if (n->dependency == NULL && sv->svc)
			n->dependency = xstrdup(trace_str(t, sv->svc));
	}
	record_unit(g, t, s, node, cls);
	if (depth > 256)
		return;
	if (type == NODE_CALL && sp->server >= 0) {
		/* the server's children, then any other child of the client */
		assign_children(g, t, sp->server, node, cls, depth, -1);
		int others = 0;
		for (int c = sp->first_child; c >= 0; c = t->sp[c].next_sibling)
			if (c != sp->server)
				others++;
		if (others)
			assign_children(g, t, s, node, cls, depth, sp->server);
	} else {
		assign_children(g, t, s, node, cls, depth, -1);
	}
}

static void push_req(Agg *g, double ingress, int cls)
{
	int p = g->pop;
	if (g->n_req[p] == g->cap_req[p]) {
		g->cap_req[p] = g->cap_req[p] ? g->cap_req[p] * 2 : 1024;
		g->req[p] = xrealloc(g->req[p], (size_t)g->cap_req[p] * sizeof *g->req[p]);
	}
	ReqRec *r = &g->req[p][g->n_req[p]++];
	r->ingress_ms = ingress;
	r->cls = cls;
	r->credit_off = g->n_cred[p];
	r->credit_n = 0;
	Trace *t = &g->tr;
	for (int i = 0; i < t->n; i++) {
		TSpan *s = &t->sp[i];
		if (s->node < 0 || (!s->crit && !s->crit_queue))
			continue;
		for (int k = 0; k < 2; k++) {
			int64_t v = k == 0 ? s->crit : s->crit_queue;
			if (v <= 0)
				continue;
			if (g->n_cred[p] == g->cap_cred[p]) {
				g->cap_cred[p] = g->cap_cred[p] ? g->cap_cred[p] * 2 : 4096;
				g->cred[p] = xrealloc(g->cred[p], (size_t)g->cap_cred[p] * sizeof *g->cred[p]);
			}
			CpCredit *c = &g->cred[p][g->n_cred[p]++];
			c->node = s->node;
			c->comp = k == 0 ? s->comp : COMP_QUEUE;
			c->ms = (float)ms(v);
			r->credit_n++;
		}
	}
}

static int trace_class(Agg *g, Trace *t)
{
	if (t->root >= 0 && t->sp[t->root].cls)
		return class_get(g, trace_str(t, t->sp[t->root].cls));
	for (int i = 0; i < t->n; i++)
		if (t->sp[i].cls && !t->sp[i].excluded)
			return class_get(g, trace_str(t, t->sp[i].cls));
	return -1;
}

static void finish_trace(Agg *g)
{
	Trace *t = &g->tr;
	if (t->n == 0)
		return;
	DataQuality *dq = &g->a->dq;
	dq->traces++;
	dq->spans += t->n;
	trace_link(t);
	if (t->cyclic) {
		dq->cycles++;
		return;
	}
	dq->extra_roots += t->n_extra_roots;
	dq->orphan_spans += t->n_orphans;
	if (t->root < 0) {
		dq->rootless++;
		return;
	}
	const TSpan *root = &t->sp[t->root];
	if (strcmp(trace_str(t, root->svc), g->root_svc) != 0 ||
	    strcmp(trace_str(t, root->name), g->root_op) != 0) {
		dq->other_endpoint++;
		return;
	}
	int cls = trace_class(g, t);
	if (g->opt->wclass && (cls < 0 || strcmp(g->classes[cls], g->opt->wclass) != 0))
		return;
	dq->unpaired_calls += t->n_unpaired;
	dq->clipped += t->n_clipped;
	dq->skew += t->n_skew;
	dq->late_server += t->n_late;
	if (t->skew_max_ms > dq->skew_max_ms)
		dq->skew_max_ms = t->skew_max_ms;
	dq->outside_parent += t->n_outside;
	g->trace_seq++;
	assign_nodes(g, t, t->root, -1, cls, 0);
	if (t->n_orphans + t->n_extra_roots > 0) {
		/* orphan subtrees are kept under one marker node, off the path */
		int on = node_get(g, t->sp[t->root].node, NODE_ORPHANS, "", "(missing parent)");
		for (int i = 0; i < t->n; i++) {
			if (!t->sp[i].orphan)
				continue;
			assign_nodes(g, t, i, on, cls, 1);
		}
	}
	trace_critical_path(t);
	for (int i = 0; i < t->n; i++)
		if (t->sp[i].orphan)
			t->sp[i].node = -1; /* orphans never own path time */
	int p = g->pop;
	if (root->status == 2)
		g->errors[p]++;
	if (root->start < g->min_start[p])
		g->min_start[p] = root->start;
	if (root->end > g->max_end[p])
		g->max_end[p] = root->end;
	push_req(g, ms(trace_ingress_ns(t)), cls);
}

static int on_row(void *ctx, const StoreSpanRow *r)
{
	Agg *g = ctx;
	if (strcmp(g->tr.trace_id, r->trace_id) != 0) {
		finish_trace(g);
		trace_reset(&g->tr, r->trace_id);
	}
	trace_add(&g->tr, r);
	return 0;
}

typedef struct RootPick {
	char *svc, *op;
} RootPick;

static int on_root_op(void *ctx, const char *svc, const char *op, int64_t n)
{
	RootPick *rp = ctx;
	(void)n;
	rp->svc = xstrdup(svc);
	rp->op = xstrdup(op);
	return 1; /* the first row is the most common */
}

/* ---- finishing --------------------------------------------------------- */

enum { F_TOTAL, F_WAIT, F_SERVICE, F_QUEUE };

static double obs_field(const Obs *o, int f)
{
	switch (f) {
	case F_TOTAL: return o->total;
	case F_WAIT: return o->wait;
	case F_SERVICE: return o->service;
	default: return o->queue;
	}
}

/* Quantiles of one field over the observations of class cls (-2: all). */
static void fill_quant(Quant *q, const ObsVec *v, int cls, int f, double *tmp)
{
	int64_t n = 0;
	for (int64_t i = 0; i < v->n; i++) {
		if (cls != -2 && v->v[i].cls != cls)
			continue;
		double x = obs_field(&v->v[i], f);
		if (!isnan(x))
			tmp[n++] = x;
	}
	quant_fill(q, tmp, n);
}

static void fill_stats(NodeStats *st, const ObsVec *v, int cls, double *tmp)
{
	memset(st, 0, sizeof *st);
	int64_t calls = 0, unknown = 0;
	for (int64_t i = 0; i < v->n; i++) {
		if (cls != -2 && v->v[i].cls != cls)
			continue;
		calls++;
		if (isnan(v->v[i].wait) && isnan(v->v[i].service))
			unknown++;
	}
	st->calls = calls;
	st->requests = cls == -2 ? v->requests : 0;
	fill_quant(&st->total, v, cls, F_TOTAL, tmp);
	fill_quant(&st->client_wait, v, cls, F_WAIT, tmp);
	fill_quant(&st->service, v, cls, F_SERVICE, tmp);
	fill_quant(&st->queue, v, cls, F_QUEUE, tmp);
	st->unknown_split = cls == -2 ? v->unknown : 0;
	(void)unknown;
}

static int cmp_req_ingress(const void *a, const void *b)
{
	double x = ((const ReqRec *)a)->ingress_ms, y = ((const ReqRec *)b)->ingress_ms;
	return (x > y) - (x < y);
}

/* Ingress quantiles, class mix and critical-path ownership of the slow
 * population of one population. */
static void finish_pop(Agg *g, int p, const int *remap)
{
	Analysis *a = g->a;
	PopSummary *ps = &a->pop[p];
	int64_t n = g->n_req[p];
	ps->requests = n;
	ps->errors = g->errors[p];
	ps->class_requests = xcalloc((size_t)(a->n_classes ? a->n_classes : 1), sizeof(int64_t));
	ps->class_ingress = xcalloc((size_t)(a->n_classes ? a->n_classes : 1), sizeof(Quant));
	double *tmp = xmalloc((size_t)(n ? n : 1) * sizeof *tmp);
	for (int64_t i = 0; i < n; i++)
		tmp[i] = g->req[p][i].ingress_ms;
	quant_fill(&ps->ingress, tmp, n);
	for (int c = 0; c < a->n_classes; c++) {
		int64_t k = 0;
		for (int64_t i = 0; i < n; i++)
			if (g->req[p][i].cls == c)
				tmp[k++] = g->req[p][i].ingress_ms;
		ps->class_requests[c] = k;
		quant_fill(&ps->class_ingress[c], tmp, k);
	}
	free(tmp);
	int64_t from = ps->from_ns, to = ps->to_ns;
	if (from == INT64_MIN)
		from = g->min_start[p];
	if (to == INT64_MAX)
		to = g->max_end[p];
	ps->from_ns = from;
	ps->to_ns = to;
	ps->rate_rps = (n > 0 && to > from) ? (double)n / ((double)(to - from) / 1e9) : 0;

	/* the slow population: above the objective, else at or above p99 */
	double thr = ps->ingress.p99;
	int above_objective = 0;
	if (a->objective_ms > 0) {
		for (int64_t i = 0; i < n; i++)
			if (g->req[p][i].ingress_ms > a->objective_ms)
				above_objective++;
		if (above_objective > 0)
			thr = a->objective_ms;
	}
	ps->slow_threshold_ms = n ? thr : 0;
	double total = 0;
	for (int64_t i = 0; i < n; i++) {
		const ReqRec *r = &g->req[p][i];
		int slow = above_objective ? r->ingress_ms > thr : r->ingress_ms >= thr;
		if (!slow)
			continue;
		ps->slow_requests++;
		for (int k = 0; k < r->credit_n; k++) {
			const CpCredit *c = &g->cred[p][r->credit_off + k];
			int id = remap[c->node];
			a->nodes[id].crit[p].ms[c->comp] += c->ms;
			a->nodes[id].crit[p].total_ms += c->ms;
			total += c->ms;
		}
	}
	ps->crit_total_ms = total;
	for (int i = 0; i < a->n_nodes; i++)
		a->nodes[i].crit[p].share = total > 0 ? a->nodes[i].crit[p].total_ms / total : 0;
	(void)cmp_req_ingress;
}

static const Agg *g_order_agg;

static int cmp_child_time(const void *x, const void *y)
{
	const TmpNode *a = &g_order_agg->nodes[*(const int *)x];
	const TmpNode *b = &g_order_agg->nodes[*(const int *)y];
	double oa = a->off_n ? a->off_sum / (double)a->off_n : 0;
	double ob = b->off_n ? b->off_sum / (double)b->off_n : 0;
	if (a->type == NODE_ORPHANS || b->type == NODE_ORPHANS)
		return (a->type == NODE_ORPHANS) - (b->type == NODE_ORPHANS);
	if (oa != ob)
		return oa < ob ? -1 : 1;
	int c = strcmp(a->service, b->service);
	return c ? c : strcmp(a->operation, b->operation);
}

/* Pre-order numbering with children in time order. */
static void order_nodes(Agg *g, int tmp, int parent, int depth, int *order, int *n,
                        int *remap)
{
	int id = (*n)++;
	order[id] = tmp;
	remap[tmp] = id;
	(void)parent;
	(void)depth;
	int nk = 0;
	for (int i = 0; i < g->n_nodes; i++)
		if (g->nodes[i].parent == tmp)
			nk++;
	if (nk == 0)
		return;
	int *kids = xmalloc((size_t)nk * sizeof *kids);
	int k = 0;
	for (int i = 0; i < g->n_nodes; i++)
		if (g->nodes[i].parent == tmp)
			kids[k++] = i;
	g_order_agg = g;
	qsort(kids, (size_t)nk, sizeof *kids, cmp_child_time);
	for (int i = 0; i < nk; i++)
		order_nodes(g, kids[i], tmp, depth + 1, order, n, remap);
	free(kids);
}

static void build_nodes(Agg *g)
{
	Analysis *a = g->a;
	int nn = g->n_nodes;
	int *order = xmalloc((size_t)(nn ? nn : 1) * sizeof *order);
	int *remap = xmalloc((size_t)(nn ? nn : 1) * sizeof *remap);
	for (int i = 0; i < nn; i++)
		remap[i] = -1;
	int n = 0;
	for (int i = 0; i < nn; i++)
		if (g->nodes[i].parent < 0)
			order_nodes(g, i, -1, 0, order, &n, remap);
	a->n_nodes = n;
	a->nodes = xcalloc((size_t)(n ? n : 1), sizeof *a->nodes);
	int64_t maxobs = 1;
	for (int i = 0; i < nn; i++)
		for (int p = 0; p < 2; p++)
			if (g->nodes[i].obs[p].n > maxobs)
				maxobs = g->nodes[i].obs[p].n;
	double *tmp = xmalloc((size_t)maxobs * sizeof *tmp);
	const Model *m = g->opt->model;
	for (int id = 0; id < n; id++) {
		TmpNode *t = &g->nodes[order[id]];
		DagNode *d = &a->nodes[id];
		d->id = id;
		d->parent = t->parent >= 0 ? remap[t->parent] : -1;
		d->depth = d->parent >= 0 ? a->nodes[d->parent].depth + 1 : 0;
		d->type = t->type;
		d->service = t->service;
		d->operation = t->operation;
		d->dependency = t->dependency;
		t->service = t->operation = t->dependency = NULL;
		d->edge = d->parent < 0 ? EDGE_ROOT
		          : (t->par_votes > t->ser_votes ? EDGE_PARALLEL : EDGE_SERIAL);
		d->group = (d->edge == EDGE_PARALLEL && t->group >= 0) ? remap[t->group] : -1;
		d->start_offset_ms = t->off_n ? t->off_sum / (double)t->off_n : 0;
		/* a call is named in the model by its dependency, or by the
		 * caller's service and the client span name */
		const ModelNode *mn = NULL;
		if (d->type == NODE_CALL && d->dependency)
			mn = model_find_node(m, d->dependency, NULL);
		if (mn == NULL)
			mn = model_find_node(m, d->service, d->operation);
		if (mn && d->type == NODE_CALL && mn->operation == NULL && d->dependency == NULL)
			mn = NULL; /* "any operation of the caller" is not this call */
		d->mandatory = mn ? mn->mandatory : MODEL_UNKNOWN;
		d->core = mn ? mn->core : MODEL_UNKNOWN;
		if (mn && mn->label)
			d->label = xstrdup(mn->label);
		else if (d->type == NODE_CALL)
			d->label = xstrdup(d->dependency ? d->dependency : d->operation);
		else if (d->type == NODE_ROOT)
			d->label = xstrdup(d->operation);
		else
			d->label = xstrdup(d->operation);
		for (int p = 0; p < 2; p++) {
			fill_stats(&d->pop[p], &t->obs[p], -2, tmp);
			d->by_class[p] = xcalloc((size_t)(a->n_classes ? a->n_classes : 1), sizeof(NodeStats));
			for (int c = 0; c < a->n_classes; c++)
				fill_stats(&d->by_class[p][c], &t->obs[p], c, tmp);
		}
		int64_t k = 0;
		for (int64_t i = 0; i < t->obs[0].n; i++)
			if (!isnan(t->obs[0].v[i].total))
				tmp[k++] = t->obs[0].v[i].total;
		quant_sort(tmp, k);
		d->dist = xmalloc((size_t)(k ? k : 1) * sizeof *d->dist);
		memcpy(d->dist, tmp, (size_t)k * sizeof *tmp);
		memcpy(d->slowest, t->slowest, sizeof d->slowest);
		d->n_slowest = t->n_slowest;
	}
	free(tmp);
	/* children lists */
	for (int id = 0; id < n; id++) {
		DagNode *d = &a->nodes[id];
		if (d->parent >= 0)
			a->nodes[d->parent].n_children++;
	}
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
	for (int p = 0; p < 2; p++)
		if (a->pop[p].present)
			finish_pop(g, p, remap);
	free(order);
	free(remap);
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

static void agg_free(Agg *g)
{
	for (int i = 0; i < g->n_nodes; i++) {
		TmpNode *n = &g->nodes[i];
		free(n->service);
		free(n->operation);
		free(n->dependency);
		free(n->obs[0].v);
		free(n->obs[1].v);
	}
	free(g->nodes);
	free(g->hash);
	for (int p = 0; p < 2; p++) {
		free(g->req[p]);
		free(g->cred[p]);
	}
	trace_fini(&g->tr);
	buf_fini(&g->key);
}

int analysis_run(Store *st, const AnalysisOptions *opt, Analysis **out, Err *err)
{
	*out = NULL;
	Analysis *a = xcalloc(1, sizeof *a);
	Agg g;
	memset(&g, 0, sizeof g);
	g.opt = opt;
	g.a = a;
	trace_init(&g.tr);
	buf_init(&g.key);
	a->data_version = store_data_version(st);
	const Model *m = opt->model;
	if (m) {
		a->objective_ms = m->objective_ms;
		for (int i = 0; i < m->n_classes; i++)
			class_get(&g, m->classes[i]);
	}

	RootPick rp = {0};
	if (m && m->root_service && m->root_operation) {
		rp.svc = xstrdup(m->root_service);
		rp.op = xstrdup(m->root_operation);
	} else if (store_root_operations(st, opt->win_from, opt->win_to, on_root_op, &rp, err)) {
		goto fail;
	}
	if (rp.svc == NULL && opt->has_baseline &&
	    store_root_operations(st, opt->base_from, opt->base_to, on_root_op, &rp, err))
		goto fail;
	if (rp.svc == NULL) {
		rp.svc = xstrdup("");
		rp.op = xstrdup("");
	}
	a->root_service = rp.svc;
	a->root_operation = rp.op;
	if (m && m->endpoint)
		a->endpoint = xstrdup(m->endpoint);
	else {
		Buf b;
		buf_init(&b);
		buf_printf(&b, "%s %s", rp.svc, rp.op);
		a->endpoint = xstrdup(buf_str(&b));
		buf_fini(&b);
	}
	g.root_svc = a->root_service;
	g.root_op = a->root_operation;
	if (opt->wclass)
		a->class_filter = xstrdup(opt->wclass);

	for (int p = 0; p < 2; p++) {
		if (p == POP_BASELINE && !opt->has_baseline)
			break;
		g.pop = p;
		a->pop[p].present = 1;
		a->pop[p].from_ns = p ? opt->base_from : opt->win_from;
		a->pop[p].to_ns = p ? opt->base_to : opt->win_to;
		g.min_start[p] = INT64_MAX;
		g.max_end[p] = INT64_MIN;
		trace_reset(&g.tr, "");
		if (store_spans_scan(st, a->pop[p].from_ns, a->pop[p].to_ns, 0, on_row, &g, err))
			goto fail;
		finish_trace(&g);
		trace_reset(&g.tr, "");
		if (g.min_start[p] == INT64_MAX)
			g.min_start[p] = g.max_end[p] = 0;
	}
	/* classes sorted by name, observations re-indexed */
	if (g.n_classes > 1) {
		char **sorted = xmalloc((size_t)g.n_classes * sizeof *sorted);
		memcpy(sorted, g.classes, (size_t)g.n_classes * sizeof *sorted);
		qsort(sorted, (size_t)g.n_classes, sizeof *sorted, cmp_str);
		int16_t map[64];
		for (int i = 0; i < g.n_classes; i++)
			for (int j = 0; j < g.n_classes; j++)
				if (sorted[j] == g.classes[i])
					map[i] = (int16_t)j;
		for (int i = 0; i < g.n_nodes; i++)
			for (int p = 0; p < 2; p++)
				for (int64_t k = 0; k < g.nodes[i].obs[p].n; k++) {
					Obs *o = &g.nodes[i].obs[p].v[k];
					if (o->cls >= 0)
						o->cls = map[o->cls];
				}
		for (int p = 0; p < 2; p++)
			for (int64_t k = 0; k < g.n_req[p]; k++)
				if (g.req[p][k].cls >= 0)
					g.req[p][k].cls = map[g.req[p][k].cls];
		for (int i = 0; i < g.n_nodes; i++)
			for (int k = 0; k < g.nodes[i].n_slowest; k++)
				if (g.nodes[i].slowest[k].wclass >= 0)
					g.nodes[i].slowest[k].wclass = map[g.nodes[i].slowest[k].wclass];
		free(g.classes);
		g.classes = sorted;
	}
	a->classes = g.classes;
	a->n_classes = g.n_classes;
	g.classes = NULL;
	build_nodes(&g);
	agg_free(&g);
	*out = a;
	return 0;
fail:
	if (a->root_service == NULL) {
		free(rp.svc);
		free(rp.op);
	}
	a->classes = g.classes;
	a->n_classes = g.n_classes;
	agg_free(&g);
	analysis_free(a);
	return err && err->code ? err->code : TT_ESTORE;
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

void analysis_free(Analysis *a)
{
	if (a == NULL)
		return;
	for (int i = 0; i < a->n_nodes; i++) {
		DagNode *d = &a->nodes[i];
		free(d->children);
		free(d->service);
		free(d->operation);
		free(d->dependency);
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
	free(a);
}
