/*
 * agg.c - import-time aggregates: building them inside the writer's
 * transaction (the store's commit hook) and answering an analysis from
 * them without reading spans.
 *
 * Building: a request belongs to the minute its root span starts in. The
 * minutes in which spans stored since the last update have their root are
 * "dirty"; each dirty minute is rebuilt whole from the traces rooted in it
 * (a trace that gained spans is seen whole again, so nothing is counted
 * twice and nothing needs subtracting). Every trace goes through the same
 * tree building as the exact analysis (trace_build.c: pairing, skew,
 * clipping, orphans) and the same per-unit numbers (trace_unit_split()),
 * and is given nodes by the same rule: (parent node, type, service, span
 * name, and for a call its callee), a call's server children under the
 * call, orphan subtrees under one "(missing parent)" node. At the end of a
 * bulk load the rows come from the load's spool (store.h), not from
 * SQLite: the same rows of the same traces in the same order. What differs is only what is kept: per
 * (minute, node, component, class, host) a count and a sketch instead of
 * every observation, so an answer costs the number of cells, not spans.
 *
 * Answering: the cells of the minutes a window overlaps are merged per
 * node, component and class (sketches merge exactly: counts add), and the
 * quantiles read off the merge; percentiles are never averaged.
 */
#include "analysis.h"
#include "analysis_priv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "hash.h"
#include "sketch.h"
#include "trace_build.h"
#include "trace_feed.h"

#define AGG_CHUNK_MINUTES 4   /* minutes rebuilt per read of the spans */
#define AGG_INCREMENTAL_MAX_TRACES 20000 /* more changed traces: rebuild their minutes */
#define AGG_MAX_CLASSES 64    /* as the exact analysis */
/* Trace packs (store.h) are written for the traces an update reads. The
 * connections read through are busy while a read runs, so the packs wait
 * in memory until it ends: a rebuild reads its slices in groups sized to
 * fill about AGG_PACK_GROUP bytes of packs, writing them between groups,
 * and no more than AGG_PACK_BUFFER bytes are held (beyond it a trace gets
 * no pack, and is read from its spans later). */
#define AGG_PACK_GROUP (8 << 20)
#define AGG_PACK_BUFFER (16 << 20)
#define AGG_GROUP_SLICES 128  /* slices of the first group of a rebuild */
/* Read from a bulk load's spool, nothing holds the connection: packs are
 * written as this much fills (less memory held than AGG_PACK_GROUP). */
#define AGG_PACK_SPOOL (1 << 20)

/* ---- string -> index map ----------------------------------------------------- */

typedef struct Map {
	char **keys;
	int64_t *vals;
	int64_t n, cap;           /* cap: a power of two */
} Map;

static uint64_t hash_bytes(const char *s)
{
	return hash_fnv1a_str(HASH_FNV1A_BASIS, s);
}

static void map_free(Map *m)
{
	for (int64_t i = 0; i < m->cap; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof *m);
}

static void map_grow(Map *m)
{
	int64_t cap = m->cap ? m->cap * 2 : 1024;
	char **keys = xcalloc((size_t)cap, sizeof *keys);
	int64_t *vals = xmalloc((size_t)cap * sizeof *vals);
	for (int64_t i = 0; i < m->cap; i++) {
		if (m->keys[i] == NULL)
			continue;
		uint64_t x = hash_bytes(m->keys[i]) & (uint64_t)(cap - 1);
		while (keys[x])
			x = (x + 1) & (uint64_t)(cap - 1);
		keys[x] = m->keys[i];
		vals[x] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = cap;
}

/* The value of key, or -1 with *slot where to put it (map_put). */
static int64_t map_get(Map *m, const char *key, int64_t *slot)
{
	if (m->n * 2 >= m->cap)
		map_grow(m);
	uint64_t x = hash_bytes(key) & (uint64_t)(m->cap - 1);
	while (m->keys[x]) {
		if (strcmp(m->keys[x], key) == 0)
			return m->vals[x];
		x = (x + 1) & (uint64_t)(m->cap - 1);
	}
	*slot = (int64_t)x;
	return -1;
}

static void map_put(Map *m, int64_t slot, const char *key, int64_t val)
{
	m->keys[slot] = xstrdup(key);
	m->vals[slot] = val;
	m->n++;
}

/* ---- building ------------------------------------------------------------------ */

typedef struct Cell {
	int64_t minute, node;     /* node: index in Builder.nodes */
	int comp, cls, host;      /* cls, host: Builder.names indexes (-1: "") */
	Sketch sk;                /* observations added */
	double *rm;               /* observations taken back (incremental update) */
	int64_t n_rm, cap_rm;
	int64_t requests, unknown, db, par, ser, errors; /* deltas when incremental */
	int64_t off_ns;
} Cell;

/* A node met in this update. Its agg_nodes row is found or written by
 * nodes_store() once the traces are read (the store's connection belongs
 * to the feed's thread until then); parents come before their children. */
typedef struct BNode {
	int64_t id;               /* agg_nodes.id, 0 until stored */
	int64_t parent;           /* the parent's index in Builder.nodes, -1 for a root */
	int type;
	char *svc, *op;
	char *callee;             /* trace_callee() of a call, else "" */
	char *dep, *db, *peer;    /* the first names seen, or NULL */
	uint64_t hash;
	int stored;               /* id is set and the names seen are written */
	int64_t last_seq;         /* the trace that last counted a request here */
} BNode;

typedef struct Builder {
	Store *st;
	Err *err;
	int rc;
	int64_t m0, m1;           /* minutes being rebuilt */
	int64_t from, to;         /* the root starts the trace being added may have, ns */
	int incremental;          /* cells are changes to the stored ones */
	int sign;                 /* +1: add the trace, -1: take it back */
	Trace tr;
	Trace old;                /* incremental: the trace as last aggregated */
	int64_t seq;
	BNode *nodes;             /* every node met in this update */
	int64_t n_nodes, cap_nodes;
	int64_t *nhash;           /* open addressing: node indexes, -1 empty */
	int64_t nhash_cap;
	Map name_map;             /* class and host strings -> names index */
	char **names;
	int64_t n_names, cap_names;
	Cell *cells;              /* the cells of the minutes being rebuilt */
	int64_t n_cells, cap_cells;
	int64_t n_cells_kept;     /* cells [0, this) hold sketch memory from an
	                           * earlier chunk, reused (fewer mallocs: the
	                           * import runs with one malloc arena) */
	int64_t *chash;           /* open addressing: cell indexes, -1 empty */
	int64_t chash_cap;
	int *units, n_units, cap_units;
	signed char *vote;        /* per span: +1 parallel, -1 serial, 0 none */
	int cap_vote;
	int64_t *minutes;
	int64_t n_minutes, cap_minutes;
	Store *more[TRACE_FEED_MAX_PARTS]; /* a rebuild's extra connections, kept
	                                    * for the next run of minutes */
	Buf packs;                /* packs to write: key, upto, length (int64
	                           * each), then the bytes; per pack */
	StorePack pk;             /* incremental: the trace being read */
	TracePool pool;           /* the feeds' traces, from one group to the next */
	int64_t *not_pop;         /* trace keys of no population (a pull's slowest
	                           * traces in no sample, store.h "trace sets"),
	                           * ascending: never counted */
	size_t n_not_pop;
} Builder;

static int key_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdULL;
}

static int64_t *table_new(int64_t cap)
{
	int64_t *t = xmalloc((size_t)cap * sizeof *t);
	for (int64_t i = 0; i < cap; i++)
		t[i] = -1;
	return t;
}

static uint64_t node_hash(int64_t parent, int type, const char *svc, const char *op,
                          const char *callee)
{
	return mix(mix(mix(mix((uint64_t)parent, (uint64_t)type), hash_bytes(svc)), hash_bytes(op)),
	           hash_bytes(callee));
}

static void nodes_rehash(Builder *b)
{
	int64_t cap = b->nhash_cap ? b->nhash_cap * 2 : 256;
	free(b->nhash);
	b->nhash = table_new(cap);
	b->nhash_cap = cap;
	for (int64_t i = 0; i < b->n_nodes; i++) {
		uint64_t x = b->nodes[i].hash & (uint64_t)(cap - 1);
		while (b->nhash[x] >= 0)
			x = (x + 1) & (uint64_t)(cap - 1);
		b->nhash[x] = i;
	}
}

/* The builder's index of node (parent node index, type, service, op,
 * callee); dep, dbs, peer: the names this call gives it (NULL or ""). */
static int64_t bnode(Builder *b, int64_t parent, int type, const char *svc, const char *op,
                     const char *callee, const char *dep, const char *dbs, const char *peer)
{
	if (b->n_nodes * 2 >= b->nhash_cap)
		nodes_rehash(b);
	uint64_t h = node_hash(parent, type, svc, op, callee);
	uint64_t x = h & (uint64_t)(b->nhash_cap - 1);
	BNode *n = NULL;
	for (; b->nhash[x] >= 0; x = (x + 1) & (uint64_t)(b->nhash_cap - 1)) {
		BNode *c = &b->nodes[b->nhash[x]];
		if (c->hash == h && c->parent == parent && c->type == type && strcmp(c->svc, svc) == 0 &&
		    strcmp(c->op, op) == 0 && strcmp(c->callee, callee) == 0) {
			n = c;
			break;
		}
	}
	if (n == NULL) {
		if (b->n_nodes == b->cap_nodes) {
			b->cap_nodes = b->cap_nodes ? b->cap_nodes * 2 : 64;
			b->nodes = xrealloc(b->nodes, (size_t)b->cap_nodes * sizeof *b->nodes);
		}
		b->nhash[x] = b->n_nodes;
		n = &b->nodes[b->n_nodes++];
		*n = (BNode){.parent = parent, .type = type, .svc = xstrdup(svc), .op = xstrdup(op),
		             .callee = xstrdup(callee), .hash = h, .last_seq = -1};
	}
	/* a name met for the first time: the stored row gains it */
	char **have[3] = {&n->dep, &n->db, &n->peer};
	const char *got[3] = {dep, dbs, peer};
	for (int k = 0; k < 3; k++)
		if (*have[k] == NULL && got[k] && *got[k]) {
			*have[k] = xstrdup(got[k]);
			n->stored = 0;
		}
	return b->nhash[x];
}

/* Finds or writes the agg_nodes row of every node met, and gives a stored
 * row the names it lacks (store_agg_node). */
static int nodes_store(Builder *b)
{
	for (int64_t i = 0; i < b->n_nodes && b->rc == 0; i++) {
		BNode *n = &b->nodes[i];
		if (n->stored)
			continue;
		StoreAggNode sn = {
		    .parent = n->parent >= 0 ? b->nodes[n->parent].id : 0, .type = n->type,
		    .service = n->svc, .operation = n->op, .callee = n->callee, .dependency = n->dep,
		    .db_system = n->db, .peer = n->peer,
		};
		b->rc = store_agg_node(b->st, &sn, &n->id, b->err);
		n->stored = b->rc == 0;
	}
	return b->rc;
}

/* Index of a class or host string in b->names (-1 for ""). */
static int name_id(Builder *b, const char *s)
{
	if (*s == '\0')
		return -1;
	int64_t slot = 0;
	int64_t i = map_get(&b->name_map, s, &slot);
	if (i >= 0)
		return (int)i;
	if (b->n_names == b->cap_names) {
		b->cap_names = b->cap_names ? b->cap_names * 2 : 64;
		b->names = xrealloc(b->names, (size_t)b->cap_names * sizeof *b->names);
	}
	i = b->n_names++;
	b->names[i] = xstrdup(s);
	map_put(&b->name_map, slot, s, i);
	return (int)i;
}

static uint64_t cell_hash(int64_t minute, int64_t node, int comp, int cls, int host)
{
	return mix(mix(mix(mix((uint64_t)minute, (uint64_t)node), (uint64_t)comp), (uint64_t)cls),
	           (uint64_t)host);
}

static void cells_rehash(Builder *b)
{
	int64_t cap = b->chash_cap ? b->chash_cap * 2 : 1024;
	free(b->chash);
	b->chash = table_new(cap);
	b->chash_cap = cap;
	for (int64_t i = 0; i < b->n_cells; i++) {
		const Cell *c = &b->cells[i];
		uint64_t x = cell_hash(c->minute, c->node, c->comp, c->cls, c->host) &
		             (uint64_t)(cap - 1);
		while (b->chash[x] >= 0)
			x = (x + 1) & (uint64_t)(cap - 1);
		b->chash[x] = i;
	}
}

static Cell *cell(Builder *b, int64_t minute, int64_t node, int comp, int cls, int host)
{
	if (b->n_cells * 2 >= b->chash_cap)
		cells_rehash(b);
	uint64_t x = cell_hash(minute, node, comp, cls, host) & (uint64_t)(b->chash_cap - 1);
	for (; b->chash[x] >= 0; x = (x + 1) & (uint64_t)(b->chash_cap - 1)) {
		Cell *c = &b->cells[b->chash[x]];
		if (c->minute == minute && c->node == node && c->comp == comp && c->cls == cls &&
		    c->host == host)
			return c;
	}
	if (b->n_cells == b->cap_cells) {
		b->cap_cells = b->cap_cells ? b->cap_cells * 2 : 1024;
		b->cells = xrealloc(b->cells, (size_t)b->cap_cells * sizeof *b->cells);
	}
	int64_t i = b->n_cells++;
	Cell *c = &b->cells[i];
	Sketch sk;
	if (i < b->n_cells_kept) {
		sk = c->sk; /* an earlier chunk's: emptied, its buckets kept */
		sketch_reset(&sk);
	} else {
		sketch_init(&sk);
	}
	memset(c, 0, sizeof *c);
	c->minute = minute;
	c->node = node;
	c->comp = comp;
	c->cls = cls;
	c->host = host;
	c->sk = sk;
	b->chash[x] = i;
	return c;
}

static void unit_push(Builder *b, int s)
{
	if (b->n_units == b->cap_units) {
		b->cap_units = b->cap_units ? b->cap_units * 2 : 64;
		b->units = xrealloc(b->units, (size_t)b->cap_units * sizeof *b->units);
	}
	b->units[b->n_units++] = s;
}

static void walk(Builder *b, Trace *t, int s, int64_t parent, int depth);

/* The edge vote of analysis.c's vote_edges(): a sibling overlapping
 * another that is not its serial predecessor within the skew tolerance
 * votes parallel, the others serial. */
static void vote(Builder *b, Trace *t, const int *units, int nu)
{
	for (int i = 0; i < nu; i++) {
		const TSpan *a = &t->sp[units[i]];
		int par = 0;
		for (int j = 0; j < nu && !par; j++) {
			if (i == j)
				continue;
			const TSpan *o = &t->sp[units[j]];
			if (a->astart < o->aend && o->astart < a->aend &&
			    trace_siblings_parallel(t, units[i], units[j]))
				par = 1;
		}
		b->vote[units[i]] = par ? 1 : -1;
	}
}

static void walk_children(Builder *b, Trace *t, int content, int64_t node, int depth, int skip)
{
	int units[256];
	int nu = 0;
	for (int c = t->sp[content].first_child; c >= 0; c = t->sp[c].next_sibling) {
		if (c == skip)
			continue;
		walk(b, t, c, node, depth + 1);
		if (nu < 256 && !t->sp[c].outside)
			units[nu++] = c;
	}
	vote(b, t, units, nu);
}

/* analysis.c's assign_nodes(), keeping the nodes in the store */
static void walk(Builder *b, Trace *t, int s, int64_t parent, int depth)
{
	TSpan *sp = &t->sp[s];
	int type = sp->kind == SPAN_KIND_CLIENT ? NODE_CALL : NODE_LOCAL;
	if (parent < 0)
		type = NODE_ROOT;
	const char *dep = NULL, *dbs = NULL, *peer = NULL;
	/* the root is the endpoint, named by its route (analysis.c) */
	const char *op = type == NODE_ROOT ? trace_route(t, s) : trace_str(t, sp->name);
	if (type == NODE_CALL && sp->server >= 0)
		dep = t->sp[sp->server].svc ? trace_str(t, t->sp[sp->server].svc) : NULL;
	else if (type == NODE_CALL && sp->db)
		dbs = trace_str(t, sp->db);
	else if (type == NODE_CALL && sp->peer)
		peer = trace_str(t, sp->peer);
	int64_t node = bnode(b, parent, type, trace_str(t, sp->svc), op,
	                     type == NODE_CALL ? trace_callee(t, s) : "", dep, dbs, peer);
	sp->node = (int)node;
	unit_push(b, s);
	if (depth > 256)
		return;
	if (type == NODE_CALL && sp->server >= 0) {
		walk_children(b, t, sp->server, node, depth, -1);
		int others = 0;
		for (int c = sp->first_child; c >= 0; c = t->sp[c].next_sibling)
			if (c != sp->server)
				others++;
		if (others)
			walk_children(b, t, s, node, depth, sp->server);
	} else {
		walk_children(b, t, s, node, depth, -1);
	}
}

static const char *trace_cls(const Trace *t)
{
	if (t->sp[t->root].cls)
		return trace_str(t, t->sp[t->root].cls);
	for (int i = 0; i < t->n; i++)
		if (t->sp[i].cls && !t->sp[i].orphan && !t->sp[i].above)
			return trace_str(t, t->sp[i].cls);
	return "";
}

static void observe(Cell *c, int sign, double v)
{
	if (sign > 0) {
		sketch_add(&c->sk, v);
		return;
	}
	if (c->n_rm == c->cap_rm) {
		c->cap_rm = c->cap_rm ? c->cap_rm * 2 : 8;
		c->rm = xrealloc(c->rm, (size_t)c->cap_rm * sizeof *c->rm);
	}
	c->rm[c->n_rm++] = v;
}

/* Adds trace t (b->sign +1) or takes it back (-1). */
static void add_trace(Builder *b, Trace *t)
{
	if (t->n == 0 || b->rc)
		return;
	trace_link_entry(t);
	/* a request: its entry's subtree. It belongs to the minute its trace's
	 * root starts in, as the reads of a rebuild find it; a trace without
	 * a root (its caller's span missing) is left to the exact analysis,
	 * which reads every trace */
	if (t->cyclic || t->root < 0 || t->top < 0)
		return;
	/* a slowest trace of no sample is no request of a population: the
	 * aggregates answer percentiles, so it is not one of theirs */
	if (b->n_not_pop > 0 && t->key > 0 &&
	    bsearch(&t->key, b->not_pop, b->n_not_pop, sizeof t->key, key_cmp) != NULL)
		return;
	const TSpan *root = &t->sp[t->root];
	int64_t rstart = t->sp[t->top].start;
	int64_t minute = store_agg_minute(rstart);
	if (minute < b->m0 || minute >= b->m1 || rstart < b->from || rstart >= b->to)
		return; /* read here for an extra root; counted where its root is */
	if (b->cap_vote < t->n) {
		b->cap_vote = t->n * 2;
		b->vote = xrealloc(b->vote, (size_t)b->cap_vote);
	}
	memset(b->vote, 0, (size_t)t->n);
	b->n_units = 0;
	b->seq++;
	walk(b, t, t->root, -1, 0);
	if (t->n_orphans + t->n_extra_roots > 0) {
		int64_t on = bnode(b, t->sp[t->root].node, NODE_ORPHANS, "", "(missing parent)", "", NULL,
		                   NULL, NULL);
		for (int i = 0; i < t->n; i++)
			if (t->sp[i].orphan)
				walk(b, t, i, on, 1);
	}
	if (b->rc)
		return;
	int cls = name_id(b, trace_cls(t));
	for (int k = 0; k < b->n_units; k++) {
		int s = b->units[k];
		const TSpan *sp = &t->sp[s];
		BNode *bn = &b->nodes[sp->node];
		int type = sp->kind == SPAN_KIND_CLIENT ? NODE_CALL : NODE_LOCAL;
		if (s == t->root)
			type = NODE_ROOT;
		double f[TRACE_F_COUNT];
		int split = trace_unit_split(t, s, type, f);
		int host = sp->host ? name_id(b, trace_str(t, sp->host)) : -1;
		int sg = b->sign;
		Cell *c = cell(b, minute, sp->node, TRACE_F_TOTAL, cls, host);
		observe(c, sg, f[TRACE_F_TOTAL]);
		if (bn->last_seq != b->seq) {
			bn->last_seq = b->seq;
			c->requests += sg;
		}
		if (split & TRACE_SPLIT_UNKNOWN)
			c->unknown += sg;
		if (split & TRACE_SPLIT_DB)
			c->db += sg;
		if (b->vote[s] > 0)
			c->par += sg;
		else if (b->vote[s] < 0)
			c->ser += sg;
		c->off_ns += sg * (sp->astart - root->astart);
		if (s == t->root && root->status == 2)
			c->errors += sg;
		for (int comp = TRACE_F_WAIT; comp < TRACE_F_COUNT; comp++)
			if (!isnan(f[comp]))
				observe(cell(b, minute, sp->node, comp, cls, host), sg, f[comp]);
	}
}


static void cells_clear(Builder *b)
{
	for (int64_t i = 0; i < b->n_cells; i++) {
		free(b->cells[i].rm);
		b->cells[i].rm = NULL;
	}
	if (b->n_cells > b->n_cells_kept)
		b->n_cells_kept = b->n_cells;
	b->n_cells = 0;
	if (b->chash)
		for (int64_t i = 0; i < b->chash_cap; i++)
			b->chash[i] = -1;
}

static int64_t minute_ns(int64_t m)
{
	if (m <= INT64_MIN / STORE_AGG_MINUTE_NS)
		return INT64_MIN;
	if (m >= INT64_MAX / STORE_AGG_MINUTE_NS)
		return INT64_MAX;
	return m * STORE_AGG_MINUTE_NS;
}

/* A rebuild read in parts: the root starts [from, to) cut into n slices
 * of about AGG_SLICE_ROOTS roots each, which the parts take in turn (as the
 * analysis's runs of trace keys), so that neither waits long for the
 * other. Slice i is the chunk and the tag of its traces. */
enum { AGG_SLICE_ROOTS = 32 };

typedef struct SliceRead {
	Store *st[TRACE_FEED_MAX_PARTS]; /* part p's connection */
	int64_t from, to, width;
	int64_t n;
	int64_t lo, hi;           /* the group of slices being read */
} SliceRead;

static int64_t slice_from(const SliceRead *r, int64_t i)
{
	return i == 0 ? r->from : r->from + i * r->width;
}

static int64_t slice_to(const SliceRead *r, int64_t i)
{
	return i == r->n - 1 ? r->to : r->from + (i + 1) * r->width;
}

static int read_slices(TraceSink *s, void *ctx, int part, int parts, Err *err)
{
	SliceRead *r = ctx;
	for (int64_t i = r->lo + part; i < r->hi; i += parts) {
		trace_sink_tag(s, (int)i);
		int rc = store_spans_scan_rooted(r->st[part], slice_from(r, i), slice_to(r, i),
		                                 trace_sink_row, s, err);
		if (rc)
			return rc;
		trace_sink_chunk(s);
	}
	return 0;
}

/* How the rebuild of root starts [from, to) is read: cut into slices of
 * about AGG_SLICE_ROOTS requests (one slice, the whole range, when the
 * requests cannot be counted), read in one part, or in two through a
 * second connection (b->more) when the range holds enough requests for
 * that to pay. */
static int slices_plan(Builder *b, SliceRead *r, int64_t from, int64_t to)
{
	*r = (SliceRead){.st = {b->st}, .from = from, .to = to, .width = to - from, .n = 1};
	int64_t roots = 0;
	Err e = {0}; /* not counted: read in one slice, which reports its own errors */
	if (from == INT64_MIN || to == INT64_MAX || to - from < 2 ||
	    store_roots_count(b->st, from, to, &roots, &e))
		return 1;
	/* the connection stays open for the next run (closed when the update
	 * ends): opening one prepares every statement of the store */
	int parts = trace_feed_parts(b->st, roots, 1, b->more);
	if (parts >= 2)
		r->st[1] = b->more[0];
	r->n = roots / AGG_SLICE_ROOTS;
	if (r->n > INT32_MAX)
		r->n = INT32_MAX;
	if (r->n > to - from)
		r->n = to - from;
	if (r->n < parts)
		r->n = parts;
	r->width = (to - from) / r->n;
	return parts;
}

/* Keeps a trace's pack for packs_write() (see AGG_PACK_BUFFER). */
static void pack_keep(Builder *b, const StorePack *p)
{
	if (p == NULL || !store_pack_ok(p) || b->packs.len + p->b.len + 24 > AGG_PACK_BUFFER)
		return;
	int64_t h[3] = {p->key, p->upto, (int64_t)p->b.len};
	buf_add(&b->packs, h, sizeof h);
	buf_add(&b->packs, p->b.p, p->b.len);
}

/* Packs a trace as read (before trace_link(): its spans in row order),
 * here rather than on the reading threads, which are the slower side of
 * a rebuild. Not a trace whose id was cut (Trace.trace_id). */
static void pack_trace(Builder *b, const Trace *t)
{
	if (t->n == 0 || t->id_cut || t->key <= 0)
		return;
	StorePack *p = &b->pk;
	for (int i = 0; i < t->n; i++) {
		const TSpan *sp = &t->sp[i];
		StoreSpanRow r = {
		    .trace_key = t->key, .rowid = t->upto, .trace_id = t->trace_id,
		    .span_id = trace_str(t, sp->sid), .parent_id = trace_str(t, sp->pid),
		    .service = trace_str(t, sp->svc), .host = trace_str(t, sp->host),
		    .name = trace_str(t, sp->name), .kind = sp->kind, .start_ns = sp->start,
		    .end_ns = sp->end, .status_code = sp->status, .wclass = trace_str(t, sp->cls),
		    .has_queue = sp->has_queue, .queue_ns = sp->queue_row,
		    .db_system = trace_str(t, sp->db), .peer = trace_str(t, sp->peer),
		    .route = trace_str(t, sp->route), .route_rule = sp->route_rule,
		};
		if (i == 0)
			store_pack_begin(p, &r);
		else
			store_pack_row(p, &r);
	}
	pack_keep(b, p);
}

/* Writes the packs kept (on b->st: no read may be running on it). */
static int packs_write(Builder *b)
{
	if (b->packs.len == 0)
		return 0;
	int rc = store_agg_batch_begin(b->st, b->err);
	for (size_t at = 0; rc == 0 && at < b->packs.len;) {
		int64_t h[3];
		memcpy(h, b->packs.p + at, sizeof h);
		at += sizeof h;
		rc = store_pack_put(b->st, h[0], h[1], b->packs.p + at, (size_t)h[2], b->err);
		at += (size_t)h[2];
	}
	int erc = store_agg_batch_end(b->st, rc == 0, b->err);
	buf_reset(&b->packs);
	return rc ? rc : erc;
}

static int cells_write(Builder *b, int rc);

/* rebuild() at the end of a bulk load: the load's spool (store.h) holds
 * every span, which the feed's threads read (no SQLite: the builder's
 * connection stays free, and packs are written as they fill) while this
 * one aggregates. */
typedef struct SpoolRead {
	Store *st;
	int64_t n;                /* buckets */
	int64_t from, to;         /* root starts */
} SpoolRead;

static int read_spool(TraceSink *s, void *ctx, int part, int parts, Err *err)
{
	SpoolRead *r = ctx;
	StoreSpoolCursor *c = store_spool_cursor_new();
	int rc = 0;
	for (int64_t i = part; rc == 0 && i < r->n; i += parts) {
		rc = store_spool_read(r->st, c, i, r->from, r->to, trace_sink_row, s, err);
		if (rc == 0)
			trace_sink_chunk(s);
	}
	store_spool_cursor_free(c);
	return rc;
}

static int rebuild_spool(Builder *b)
{
	SpoolRead sr = {.st = b->st, .n = store_spool_buckets(b->st), .from = minute_ns(b->m0),
	                .to = minute_ns(b->m1)};
	int parts = sr.n >= 2 && sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? 2 : 1;
	TraceFeed *f = trace_feed_start_pooled(read_spool, &sr, parts, NULL, &b->pool);
	Trace *t;
	int tag = 0, rc = 0;
	while (b->rc == 0 && rc == 0 && (t = trace_feed_next(f, &tag)) != NULL) {
		pack_trace(b, t);
		add_trace(b, t);
		if (b->packs.len >= AGG_PACK_SPOOL)
			rc = packs_write(b);
	}
	int frc = trace_feed_finish(f, b->err);
	if (rc == 0)
		rc = frc;
	if (rc == 0 && b->rc == 0)
		rc = packs_write(b);
	buf_reset(&b->packs);
	return cells_write(b, rc);
}

/* Rebuilds minutes [m0, m1): reads the traces rooted in them (the rows
 * are read on the feed's threads while this one aggregates), then writes
 * the nodes and cells, after the read: a connection belongs to its
 * reading thread until then, and connections are opened without a
 * mutex. */
static int rebuild(Builder *b, int64_t m0, int64_t m1)
{
	b->m0 = m0;
	b->m1 = m1;
	b->incremental = 0;
	b->sign = 1;
	if (store_spool_buckets(b->st) > 0)
		return rebuild_spool(b);
	SliceRead sr;
	int parts = slices_plan(b, &sr, minute_ns(m0), minute_ns(m1));
	/* the slices in groups, the packs of a group written after its read;
	 * a group's size follows the bytes of packs a slice gave so far */
	int rc = 0;
	int64_t group = AGG_GROUP_SLICES, slices_read = 0;
	size_t pack_bytes = 0;
	for (sr.lo = 0; rc == 0 && b->rc == 0 && sr.lo < sr.n; sr.lo = sr.hi) {
		sr.hi = sr.n - sr.lo > group ? sr.lo + group : sr.n;
		TraceFeed *f = trace_feed_start_pooled(read_slices, &sr, parts, NULL, &b->pool);
		Trace *t;
		int tag = 0;
		while (b->rc == 0 && (t = trace_feed_next(f, &tag)) != NULL) {
			b->from = slice_from(&sr, tag);
			b->to = slice_to(&sr, tag);
			pack_trace(b, t);
			add_trace(b, t);
		}
		rc = trace_feed_finish(f, b->err);
		slices_read += sr.hi - sr.lo;
		pack_bytes += b->packs.len;
		if (rc == 0 && b->rc == 0)
			rc = packs_write(b);
		if (pack_bytes > 0) {
			group = (int64_t)((double)AGG_PACK_GROUP * (double)slices_read / (double)pack_bytes);
			if (group < 1)
				group = 1;
		}
	}
	buf_reset(&b->packs);
	return cells_write(b, rc);
}

/* Ends a rebuild of minutes [b->m0, b->m1) whose read ended with rc:
 * replaces their stored cells with the ones built (when rc and b->rc are
 * 0) and empties the builder's cells. */
static int cells_write(Builder *b, int rc)
{
	b->from = INT64_MIN;
	b->to = INT64_MAX;
	if (rc == 0 && b->rc)
		rc = b->rc;
	if (rc == 0)
		rc = store_agg_batch_begin(b->st, b->err);
	if (rc != 0) {
		cells_clear(b);
		return b->rc = rc;
	}
	rc = store_agg_delete(b->st, b->m0, b->m1, b->err);
	if (rc == 0)
		rc = nodes_store(b);
	Buf enc;
	buf_init(&enc);
	for (int64_t i = 0; rc == 0 && i < b->n_cells; i++) {
		const Cell *c = &b->cells[i];
		buf_reset(&enc);
		sketch_encode(&c->sk, &enc);
		StoreAggCell sc = {
		    .minute = c->minute, .node = b->nodes[c->node].id, .comp = c->comp,
		    .wclass = c->cls >= 0 ? b->names[c->cls] : "",
		    .host = c->host >= 0 ? b->names[c->host] : "", .n = c->sk.n, .requests = c->requests, .unknown = c->unknown,
		    .db = c->db, .par_votes = c->par, .ser_votes = c->ser, .off_ns = c->off_ns,
		    .errors = c->errors, .sketch = enc.p, .sketch_len = enc.len,
		};
		rc = store_agg_put(b->st, &sc, b->err);
	}
	buf_fini(&enc);
	int erc = store_agg_batch_end(b->st, rc == 0, b->err);
	if (rc == 0)
		rc = erc;
	cells_clear(b);
	b->rc = rc;
	return rc;
}

/* Incremental: each changed trace is taken back as it was last
 * aggregated (its spans stored up to the coverage) and added as it is
 * now. */
static void change_trace(Builder *b)
{
	b->sign = -1;
	if (b->old.n > 0)
		add_trace(b, &b->old);
	b->sign = 1;
	add_trace(b, &b->tr);
}

static int on_touched(void *ctx, const StoreSpanRow *r, int is_new)
{
	Builder *b = ctx;
	if (b->tr.n == 0 || !trace_same(&b->tr, r)) {
		change_trace(b);
		if (b->tr.n > 0)
			pack_keep(b, &b->pk);
		trace_reset(&b->tr, r->trace_id);
		trace_reset(&b->old, r->trace_id);
		store_pack_begin(&b->pk, r);
	} else {
		store_pack_row(&b->pk, r);
	}
	trace_add(&b->tr, r);
	if (!is_new)
		trace_add(&b->old, r);
	return b->rc != 0;
}

/* Applies the cells' changes to the stored cells. Returns 1 when a stored
 * cell did not hold what is taken back (the caller rebuilds instead). */
static int apply(Builder *b, int *mismatch)
{
	Buf got, enc;
	buf_init(&got);
	buf_init(&enc);
	int rc = 0;
	for (int64_t i = 0; rc == 0 && i < b->n_cells && !*mismatch; i++) {
		Cell *c = &b->cells[i];
		StoreAggCell sc = {.minute = c->minute, .node = b->nodes[c->node].id, .comp = c->comp,
		                   .wclass = c->cls >= 0 ? b->names[c->cls] : "",
		                   .host = c->host >= 0 ? b->names[c->host] : ""};
		int found = 0;
		if ((rc = store_agg_get(b->st, &sc, &got, &found, b->err)))
			break;
		Sketch s;
		sketch_init(&s);
		if (found && sketch_decode_merge(&s, got.p, got.len) != 0)
			*mismatch = 1;
		for (int64_t k = 0; k < c->n_rm && !*mismatch; k++)
			if (sketch_remove(&s, c->rm[k]) != 0)
				*mismatch = 1;
		sketch_merge(&s, &c->sk);
		sc.requests += c->requests;
		sc.unknown += c->unknown;
		sc.db += c->db;
		sc.par_votes += c->par;
		sc.ser_votes += c->ser;
		sc.off_ns += c->off_ns;
		sc.errors += c->errors;
		sc.n = s.n;
		if (sc.requests < 0 || sc.unknown < 0 || sc.db < 0 || sc.errors < 0)
			*mismatch = 1;
		if (!*mismatch) {
			if (s.n == 0) {
				rc = found ? store_agg_remove(b->st, &sc, b->err) : 0;
			} else {
				buf_reset(&enc);
				sketch_encode(&s, &enc);
				sc.sketch = enc.p;
				sc.sketch_len = enc.len;
				rc = store_agg_put(b->st, &sc, b->err);
			}
		}
		sketch_fini(&s);
	}
	buf_fini(&got);
	buf_fini(&enc);
	return rc;
}

/* The changes of the traces touched since covered, applied to the stored
 * cells. *mismatch 1: the stored cells were not what these traces had put
 * there (a damaged or hand-edited table); nothing is applied then. */
static int update_incremental(Builder *b, int64_t covered, int *mismatch)
{
	b->incremental = 1;
	b->m0 = INT64_MIN;
	b->m1 = INT64_MAX;
	trace_reset(&b->tr, "");
	trace_reset(&b->old, "");
	int rc = store_spans_touched(b->st, covered, on_touched, b, b->err);
	if (rc == 0) {
		change_trace(b);
		if (b->tr.n > 0)
			pack_keep(b, &b->pk);
	}
	if (rc == 0 && b->rc)
		rc = b->rc;
	if (rc == 0)
		rc = packs_write(b);
	buf_reset(&b->packs);
	if (rc == 0 && (rc = store_agg_batch_begin(b->st, b->err)) == 0) {
		rc = nodes_store(b);
		if (rc == 0)
			rc = apply(b, mismatch);
		int erc = store_agg_batch_end(b->st, rc == 0, b->err);
		if (rc == 0)
			rc = erc;
	}
	cells_clear(b);
	return rc;
}

static int on_minute(void *ctx, int64_t m)
{
	Builder *b = ctx;
	if (b->n_minutes == b->cap_minutes) {
		b->cap_minutes = b->cap_minutes ? b->cap_minutes * 2 : 64;
		b->minutes = xrealloc(b->minutes, (size_t)b->cap_minutes * sizeof *b->minutes);
	}
	b->minutes[b->n_minutes++] = m;
	return 0;
}

int analysis_agg_update(Store *st, Err *err)
{
	int64_t covered = 0, max = 0;
	if (store_agg_covered(st, &covered, err) || store_spans_max_rowid(st, &max, err))
		return TT_ESTORE;
	if (max <= covered)
		return 0;
	Builder b = {.st = st, .err = err, .sign = 1, .from = INT64_MIN, .to = INT64_MAX};
	trace_init(&b.tr);
	trace_init(&b.old);
	buf_init(&b.packs);
	store_pack_init(&b.pk);
	int rc = store_traces_not_population(st, &b.not_pop, &b.n_not_pop, err);
	int64_t touched = 0;
	int rebuild_minutes = covered == 0;
	if (rc == 0 && !rebuild_minutes) {
		rc = store_spans_touched_count(st, covered, &touched, err);
		rebuild_minutes = touched > AGG_INCREMENTAL_MAX_TRACES;
	}
	if (rc == 0 && !rebuild_minutes) {
		/* a few traces changed (a receiver's request, a small file):
		 * change the cells they are in rather than rebuild minutes */
		int mismatch = 0;
		rc = update_incremental(&b, covered, &mismatch);
		rebuild_minutes = rc == 0 && mismatch;
	}
	if (rc == 0 && rebuild_minutes)
		rc = store_agg_dirty_minutes(st, covered, on_minute, &b, err);
	/* runs of consecutive minutes, each cut into chunks of at most
	 * AGG_CHUNK_MINUTES: one read of the spans per chunk, and the cells of
	 * one chunk in memory. The chunks of a run are of even length (10
	 * minutes: 4, 3, 3, not 4, 4, 2), so that none is too small a read to
	 * be split across cores. */
	for (int64_t i = 0; rc == 0 && i < b.n_minutes;) {
		int64_t j = i + 1;
		while (j < b.n_minutes && b.minutes[j] == b.minutes[j - 1] + 1)
			j++;
		int64_t len = j - i, chunks = (len + AGG_CHUNK_MINUTES - 1) / AGG_CHUNK_MINUTES;
		for (int64_t c = 0; rc == 0 && c < chunks; c++) {
			int64_t a = i + len * c / chunks, z = i + len * (c + 1) / chunks;
			rc = rebuild(&b, b.minutes[a], b.minutes[z - 1] + 1);
		}
		i = j;
	}
	trace_feed_parts_close(b.more);
	if (rc == 0)
		rc = store_agg_set_covered(st, max, err);
	cells_clear(&b);
	for (int64_t i = 0; i < b.n_cells_kept; i++)
		sketch_fini(&b.cells[i].sk);
	free(b.cells);
	free(b.chash);
	for (int64_t i = 0; i < b.n_nodes; i++) {
		free(b.nodes[i].svc);
		free(b.nodes[i].dep);
		free(b.nodes[i].db);
		free(b.nodes[i].peer);
		free(b.nodes[i].op);
		free(b.nodes[i].callee);
	}
	free(b.nodes);
	free(b.nhash);
	free(b.not_pop);
	map_free(&b.name_map);
	for (int64_t i = 0; i < b.n_names; i++)
		free(b.names[i]);
	free(b.names);
	free(b.units);
	free(b.vote);
	free(b.minutes);
	trace_fini(&b.tr);
	trace_fini(&b.old);
	buf_fini(&b.packs);
	store_pack_fini(&b.pk);
	trace_pool_free(&b.pool);
	return rc;
}

int analysis_agg_ready(Store *st, Err *err)
{
	int64_t covered = 0, max = 0;
	if (store_agg_covered(st, &covered, err) || store_spans_max_rowid(st, &max, err))
		return TT_ESTORE;
	return covered >= max;
}

/* ---- answering ------------------------------------------------------------------ */

typedef struct RNode {
	StoreAggNode n;           /* strings owned */
	int in_tree;              /* under the chosen root */
	int index;                /* in Analysis.nodes, or -1 */
	/* [pop][slot][comp]; slot 0 every class, 1 + c class c */
	Sketch *sk[2];
	int64_t *cnt[2];          /* [slot * 4 + k]: requests, unknown, db, errors */
	int64_t par, ser;
	double off_sum;
	int64_t off_n;
} RNode;

typedef struct Reader {
	RNode *nodes;
	int64_t n_nodes, cap_nodes;
	char *classes[AGG_MAX_CLASSES];
	int n_classes;
	int slots;                /* 1 + AGG_MAX_CLASSES */
	const char *filter;
	int pop;
	int64_t root_id;
	int counting;             /* on_cell_pre: 1 requests per root, 0 classes */
	/* roots by requests in the window, for the choice of endpoint */
	int64_t *root_req;
	int64_t min_minute[2], max_minute[2];
	Sketch scratch;           /* one cell's sketch, decoded */
} Reader;

static int on_node(void *ctx, const StoreAggNode *n)
{
	Reader *r = ctx;
	if (r->n_nodes == r->cap_nodes) {
		r->cap_nodes = r->cap_nodes ? r->cap_nodes * 2 : 64;
		r->nodes = xrealloc(r->nodes, (size_t)r->cap_nodes * sizeof *r->nodes);
	}
	RNode *x = &r->nodes[r->n_nodes++];
	memset(x, 0, sizeof *x);
	x->n = *n;
	x->n.service = xstrdup(n->service);
	x->n.operation = xstrdup(n->operation);
	x->n.callee = xstrdup(n->callee);
	x->n.dependency = xstrdup(n->dependency);
	x->n.db_system = xstrdup(n->db_system);
	x->n.peer = xstrdup(n->peer);
	x->index = -1;
	return 0;
}

/* Index of the node with id, or -1 (ids ascend: agg_nodes ORDER BY id). */
static int64_t rnode(const Reader *r, int64_t id)
{
	int64_t lo = 0, hi = r->n_nodes;
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;
		if (r->nodes[mid].n.id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->n_nodes && r->nodes[lo].n.id == id ? lo : -1;
}

static int class_index(Reader *r, const char *name, int add)
{
	if (*name == '\0')
		return -1;
	for (int i = 0; i < r->n_classes; i++)
		if (strcmp(r->classes[i], name) == 0)
			return i;
	if (!add || r->n_classes >= AGG_MAX_CLASSES)
		return -1;
	r->classes[r->n_classes] = xstrdup(name);
	return r->n_classes++;
}

static int on_cell_pre(void *ctx, const StoreAggCell *c)
{
	Reader *r = ctx;
	int64_t i = rnode(r, c->node);
	if (i < 0 || c->comp != TRACE_F_TOTAL || r->nodes[i].n.parent != 0)
		return 0;
	if (r->counting)
		r->root_req[i] += c->requests;
	else if (c->node == r->root_id)
		class_index(r, c->wclass, 1);
	return 0;
}

static int on_cell(void *ctx, const StoreAggCell *c)
{
	Reader *r = ctx;
	int64_t i = rnode(r, c->node);
	if (i < 0 || !r->nodes[i].in_tree || c->comp < 0 || c->comp >= TRACE_F_COUNT)
		return 0;
	if (r->filter && strcmp(r->filter, c->wclass) != 0)
		return 0;
	RNode *x = &r->nodes[i];
	int p = r->pop;
	if (x->sk[p] == NULL) {
		x->sk[p] = xmalloc((size_t)r->slots * TRACE_F_COUNT * sizeof(Sketch));
		for (int k = 0; k < r->slots * TRACE_F_COUNT; k++)
			sketch_init(&x->sk[p][k]);
		x->cnt[p] = xcalloc((size_t)r->slots * 4, sizeof(int64_t));
	}
	int ci = class_index(r, c->wclass, 0);
	int slots[2] = {0, ci >= 0 ? 1 + ci : -1};
	sketch_reset(&r->scratch);
	if (sketch_decode_merge(&r->scratch, c->sketch, c->sketch_len) != 0)
		return 0; /* a damaged cell is left out; its counts too */
	for (int k = 0; k < 2; k++) {
		if (slots[k] < 0)
			continue;
		sketch_merge(&x->sk[p][slots[k] * TRACE_F_COUNT + c->comp], &r->scratch);
		if (c->comp == TRACE_F_TOTAL) {
			int64_t *n = &x->cnt[p][slots[k] * 4];
			n[0] += c->requests;
			n[1] += c->unknown;
			n[2] += c->db;
			n[3] += c->errors;
		}
	}
	if (c->comp == TRACE_F_TOTAL) {
		x->par += c->par_votes;
		x->ser += c->ser_votes;
		x->off_sum += (double)c->off_ns / 1e6;
		x->off_n += c->n;
		if (c->minute < r->min_minute[p])
			r->min_minute[p] = c->minute;
		if (c->minute > r->max_minute[p])
			r->max_minute[p] = c->minute;
	}
	return 0;
}

static void fill(NodeStats *ns, const RNode *x, int p, int slot)
{
	memset(ns, 0, sizeof *ns);
	Quant *q[TRACE_F_COUNT] = {&ns->total, &ns->client_wait, &ns->service, &ns->queue};
	for (int f = 0; f < TRACE_F_COUNT; f++) {
		if (x->sk[p]) {
			sketch_quant(&x->sk[p][slot * TRACE_F_COUNT + f], q[f]);
		} else {
			Sketch e;
			sketch_init(&e);
			sketch_quant(&e, q[f]);
		}
	}
	ns->calls = ns->total.n;
	if (x->cnt[p]) {
		ns->requests = x->cnt[p][slot * 4];
		ns->unknown_split = x->cnt[p][slot * 4 + 1];
		ns->db_calls = x->cnt[p][slot * 4 + 2];
	}
}

static int64_t calls_of(const RNode *x)
{
	int64_t n = 0;
	for (int p = 0; p < 2; p++)
		if (x->sk[p])
			n += x->sk[p][TRACE_F_TOTAL].n;
	return n;
}

static _Thread_local const Reader *g_rd;

static int cmp_kid(const void *x, const void *y)
{
	const RNode *a = &g_rd->nodes[*(const int64_t *)x];
	const RNode *b = &g_rd->nodes[*(const int64_t *)y];
	if (a->n.type == NODE_ORPHANS || b->n.type == NODE_ORPHANS)
		return (a->n.type == NODE_ORPHANS) - (b->n.type == NODE_ORPHANS);
	double oa = a->off_n ? a->off_sum / (double)a->off_n : 0;
	double ob = b->off_n ? b->off_sum / (double)b->off_n : 0;
	if (oa != ob)
		return oa < ob ? -1 : 1;
	int c = strcmp(a->n.service, b->n.service);
	if (c == 0)
		c = strcmp(a->n.operation, b->n.operation);
	return c ? c : strcmp(a->n.callee, b->n.callee);
}

/* Pre-order of the nodes under i that a population uses (calls, or a
 * used node below), children in time order; kids/nkids/koff: the
 * children of each node (CSR), used[]: marked beforehand. */
typedef struct Tree {
	int64_t *kids, *koff;
	char *used;
} Tree;

static void order(Reader *r, const Tree *t, int64_t i, int64_t *out, int *n, int depth)
{
	if (depth > 512 || !t->used[i])
		return;
	r->nodes[i].index = *n;
	out[(*n)++] = i;
	int64_t k0 = t->koff[i], nk = t->koff[i + 1] - k0;
	int64_t *kids = xmalloc((size_t)(nk ? nk : 1) * sizeof *kids);
	memcpy(kids, t->kids + k0, (size_t)nk * sizeof *kids);
	g_rd = r;
	qsort(kids, (size_t)nk, sizeof *kids, cmp_kid);
	for (int64_t k = 0; k < nk; k++)
		order(r, t, kids[k], out, n, depth + 1);
	free(kids);
}

static void tree_build(const Reader *r, Tree *t)
{
	int64_t nn = r->n_nodes;
	int64_t *par = xmalloc((size_t)(nn ? nn : 1) * sizeof *par);
	t->koff = xcalloc((size_t)nn + 2, sizeof *t->koff);
	t->kids = xmalloc((size_t)(nn ? nn : 1) * sizeof *t->kids);
	t->used = xcalloc((size_t)(nn ? nn : 1), 1);
	for (int64_t i = 0; i < nn; i++) {
		par[i] = r->nodes[i].in_tree && r->nodes[i].n.parent ? rnode(r, r->nodes[i].n.parent) : -1;
		if (par[i] >= 0)
			t->koff[par[i] + 2]++;
	}
	for (int64_t i = 0; i < nn; i++)
		t->koff[i + 2] += t->koff[i + 1];
	for (int64_t i = 0; i < nn; i++)
		if (par[i] >= 0)
			t->kids[t->koff[par[i] + 1]++] = i;
	/* children have larger ids than their parent: one pass from the end */
	for (int64_t i = nn - 1; i >= 0; i--) {
		if (r->nodes[i].in_tree && calls_of(&r->nodes[i]) > 0)
			t->used[i] = 1;
		if (t->used[i] && par[i] >= 0)
			t->used[par[i]] = 1;
	}
	free(par);
}

static _Thread_local char *const *g_names;

static int cmp_name(const void *x, const void *y)
{
	return strcmp(g_names[*(const int *)x], g_names[*(const int *)y]);
}

static void reader_free(Reader *r)
{
	for (int64_t i = 0; i < r->n_nodes; i++) {
		RNode *x = &r->nodes[i];
		free((char *)x->n.service);
		free((char *)x->n.operation);
		free((char *)x->n.callee);
		free((char *)x->n.dependency);
		free((char *)x->n.db_system);
		free((char *)x->n.peer);
		for (int p = 0; p < 2; p++) {
			if (x->sk[p])
				for (int k = 0; k < r->slots * TRACE_F_COUNT; k++)
					sketch_fini(&x->sk[p][k]);
			free(x->sk[p]);
			free(x->cnt[p]);
		}
	}
	free(r->nodes);
	free(r->root_req);
	sketch_fini(&r->scratch);
	for (int i = 0; i < r->n_classes; i++)
		free(r->classes[i]);
}

/* The minutes [*m0, *m1) a range overlaps. */
static void minutes_of(int64_t from, int64_t to, int64_t *m0, int64_t *m1)
{
	*m0 = from == INT64_MIN ? INT64_MIN : store_agg_minute(from);
	if (to == INT64_MAX) {
		*m1 = INT64_MAX;
	} else {
		int64_t last = store_agg_minute(to);
		*m1 = (last * STORE_AGG_MINUTE_NS == to) ? last : last + 1;
	}
}

static int scan_pop(Store *st, Reader *r, const AnalysisOptions *o, int p,
                    int (*fn)(void *, const StoreAggCell *), Err *err)
{
	int64_t m0, m1;
	if (p == POP_WINDOW)
		minutes_of(o->period.win.from, o->period.win.to, &m0, &m1);
	else
		minutes_of(o->period.base.from, o->period.base.to, &m0, &m1);
	r->pop = p;
	return store_agg_scan(st, m0, m1, fn, r, err);
}

/* Expands the window's total sketch into sorted values (bucket estimates). */
static double *expand(const Sketch *s)
{
	double *v = xmalloc((size_t)(s->n ? s->n : 1) * sizeof *v);
	int64_t k = 0;
	for (int64_t i = 0; i < s->zero; i++)
		v[k++] = s->min < 0 ? s->min : 0;
	for (int b = 0; b < s->nb; b++) {
		int64_t seen = k + s->cnt[b];
		double x = sketch_quantile(s, 100.0 * (double)seen / (double)s->n);
		for (int64_t i = 0; i < s->cnt[b]; i++)
			v[k++] = x;
	}
	if (s->n > 0)
		v[s->n - 1] = s->max;
	return v;
}

int analysis_from_aggregates(Store *st, const AnalysisOptions *opt, Analysis **out, Err *err)
{
	*out = NULL;
	int ready = analysis_agg_ready(st, err);
	if (ready < 0)
		return ready;
	if (!ready)
		return err_set(err, TT_ENOTFOUND, "the aggregates do not cover every stored span yet");
	Reader r = {.slots = 1 + AGG_MAX_CLASSES, .filter = opt->wclass};
	sketch_init(&r.scratch);
	for (int p = 0; p < 2; p++) {
		r.min_minute[p] = INT64_MAX;
		r.max_minute[p] = INT64_MIN;
	}
	const Model *m = opt->model;
	int rc = store_agg_nodes_scan(st, on_node, &r, err);
	if (rc)
		goto out;
	r.root_req = xcalloc((size_t)(r.n_nodes ? r.n_nodes : 1), sizeof *r.root_req);
	/* the endpoint: the one asked for, else the model's root, else the
	 * root node (a route: the entries') with the most requests in the
	 * window (then the baseline); the commands name one (endpoints.h) */
	const char *want_svc = opt->ep_service, *want_route = opt->ep_route;
	if (!(want_svc && want_route) && m && m->root_service && m->root_operation) {
		want_svc = m->root_service;
		want_route = m->root_operation;
	}
	if (want_svc && want_route) {
		for (int64_t i = 0; i < r.n_nodes; i++)
			if (r.nodes[i].n.parent == 0 && r.nodes[i].n.type == NODE_ROOT &&
			    strcmp(r.nodes[i].n.service, want_svc) == 0 &&
			    strcmp(r.nodes[i].n.operation, want_route) == 0)
				r.root_id = r.nodes[i].n.id;
	} else {
		r.counting = 1;
		for (int p = 0; p < 2 && r.root_id == 0; p++) {
			if (p == POP_BASELINE && !opt->period.has_baseline)
				break;
			memset(r.root_req, 0, (size_t)(r.n_nodes ? r.n_nodes : 1) * sizeof *r.root_req);
			if ((rc = scan_pop(st, &r, opt, p, on_cell_pre, err)))
				goto out;
			int64_t best = -1;
			for (int64_t i = 0; i < r.n_nodes; i++) {
				if (r.root_req[i] <= 0)
					continue;
				const RNode *x = &r.nodes[i], *y = best >= 0 ? &r.nodes[best] : NULL;
				int c = y ? strcmp(x->n.service, y->n.service) : 0;
				if (c == 0 && y)
					c = strcmp(x->n.operation, y->n.operation);
				if (y == NULL || r.root_req[i] > r.root_req[best] ||
				    (r.root_req[i] == r.root_req[best] && c < 0))
					best = i;
			}
			if (best >= 0)
				r.root_id = r.nodes[best].n.id;
		}
		r.counting = 0;
	}
	/* classes: those of the endpoint's requests in either population,
	 * and the model's */
	if (m)
		for (int i = 0; i < m->n_classes; i++)
			class_index(&r, m->classes[i], 1);
	if (r.root_id) {
		for (int p = 0; p < 2; p++) {
			if (p == POP_BASELINE && !opt->period.has_baseline)
				break;
			if ((rc = scan_pop(st, &r, opt, p, on_cell_pre, err)))
				goto out;
		}
		/* the tree under the root: parents have smaller ids (a node is
		 * added after its parent), so one pass in id order marks it */
		for (int64_t i = 0; i < r.n_nodes; i++) {
			RNode *x = &r.nodes[i];
			if (x->n.id == r.root_id) {
				x->in_tree = 1;
			} else if (x->n.parent != 0) {
				int64_t pi = rnode(&r, x->n.parent);
				x->in_tree = pi >= 0 && r.nodes[pi].in_tree;
			}
		}
		for (int p = 0; p < 2; p++) {
			if (p == POP_BASELINE && !opt->period.has_baseline)
				break;
			if ((rc = scan_pop(st, &r, opt, p, on_cell, err)))
				goto out;
		}
	}

	Analysis *a = xcalloc(1, sizeof *a);
	a->approx = 1;
	a->data_version = store_data_version(st);
	a->objective_ms = m ? m->objective_ms : 0;
	int64_t ri = r.root_id ? rnode(&r, r.root_id) : -1;
	a->root_service = xstrdup(ri >= 0 ? r.nodes[ri].n.service : want_svc ? want_svc : "");
	a->root_operation = xstrdup(ri >= 0 ? r.nodes[ri].n.operation : want_route ? want_route : "");
	a->route_rule = -1;
	if (m && m->endpoint) {
		a->endpoint = xstrdup(m->endpoint);
	} else {
		Buf e;
		buf_init(&e);
		buf_printf(&e, "%s %s", a->root_service, a->root_operation);
		a->endpoint = xstrdup(buf_str(&e));
		buf_fini(&e);
	}
	if (opt->wclass)
		a->class_filter = xstrdup(opt->wclass);
	a->asked = *opt;
	a->asked.wclass = a->class_filter;
	a->asked.ep_service = opt->ep_service ? a->root_service : NULL;
	a->asked.ep_route = opt->ep_route ? a->root_operation : NULL;
	atomic_init(&a->extra_refs, 0);

	int nc = r.n_classes, idx[AGG_MAX_CLASSES], cmap[AGG_MAX_CLASSES];
	for (int i = 0; i < nc; i++)
		idx[i] = i;
	g_names = r.classes;
	qsort(idx, (size_t)nc, sizeof idx[0], cmp_name);
	a->n_classes = nc;
	a->classes = xcalloc((size_t)(nc ? nc : 1), sizeof *a->classes);
	for (int j = 0; j < nc; j++) {
		cmap[idx[j]] = j;
		a->classes[j] = xstrdup(r.classes[idx[j]]);
	}

	int64_t *ord = xmalloc((size_t)(r.n_nodes ? r.n_nodes : 1) * sizeof *ord);
	int n = 0;
	Tree tree;
	tree_build(&r, &tree);
	if (ri >= 0)
		order(&r, &tree, ri, ord, &n, 0);
	free(tree.kids);
	free(tree.koff);
	free(tree.used);
	a->n_nodes = n;
	a->nodes = xcalloc((size_t)(n ? n : 1), sizeof *a->nodes);
	for (int id = 0; id < n; id++) {
		const RNode *x = &r.nodes[ord[id]];
		DagNode *d = &a->nodes[id];
		d->id = id;
		int64_t pi = x->n.parent ? rnode(&r, x->n.parent) : -1;
		d->parent = pi >= 0 ? r.nodes[pi].index : -1;
		d->depth = d->parent >= 0 ? a->nodes[d->parent].depth + 1 : 0;
		d->type = x->n.type;
		d->service = xstrdup(x->n.service);
		d->operation = xstrdup(x->n.operation);
		d->dependency = *x->n.dependency ? xstrdup(x->n.dependency) : NULL;
		d->db_system = *x->n.db_system ? xstrdup(x->n.db_system) : NULL;
		d->peer = *x->n.peer ? xstrdup(x->n.peer) : NULL;
		d->callee = *x->n.callee ? xstrdup(x->n.callee) : NULL;
		d->edge = d->parent < 0 ? EDGE_ROOT : (x->par > x->ser ? EDGE_PARALLEL : EDGE_SERIAL);
		d->group = -1;
		d->start_offset_ms = x->off_n ? x->off_sum / (double)x->off_n : 0;
		analysis_node_semantics(m, d);
		for (int p = 0; p < 2; p++) {
			fill(&d->pop[p], x, p, 0);
			d->by_class[p] = xcalloc((size_t)(nc ? nc : 1), sizeof(NodeStats));
			for (int c = 0; c < nc; c++)
				fill(&d->by_class[p][cmap[c]], x, p, 1 + c);
		}
		if (x->sk[POP_WINDOW]) {
			d->dist = expand(&x->sk[POP_WINDOW][TRACE_F_TOTAL]);
		} else {
			d->dist = xmalloc(sizeof *d->dist);
		}
	}
	analysis_link_children(a);
	/* a fan-out group: the parallel siblings, named by the first of them */
	for (int id = 0; id < n; id++) {
		DagNode *d = &a->nodes[id];
		int first = -1;
		for (int k = 0; k < d->n_children; k++) {
			DagNode *c = &a->nodes[d->children[k]];
			if (c->edge != EDGE_PARALLEL)
				continue;
			if (first < 0)
				first = c->id;
			c->group = first;
		}
	}
	for (int p = 0; p < 2; p++) {
		if (p == POP_BASELINE && !opt->period.has_baseline)
			break;
		PopSummary *ps = &a->pop[p];
		ps->present = 1;
		int ncl = nc ? nc : 1;
		ps->class_requests = xcalloc((size_t)ncl, sizeof(int64_t));
		ps->class_ingress = xcalloc((size_t)ncl, sizeof(Quant));
		if (n > 0) {
			const DagNode *root = &a->nodes[0];
			ps->ingress = root->pop[p].total;
			for (int c = 0; c < nc; c++) {
				ps->class_ingress[c] = root->by_class[p][c].total;
				ps->class_requests[c] = ps->class_ingress[c].n;
			}
			const RNode *x = &r.nodes[ri];
			ps->errors = x->cnt[p] ? x->cnt[p][3] : 0;
		} else {
			Sketch e;
			sketch_init(&e);
			sketch_quant(&e, &ps->ingress);
		}
		ps->requests = ps->ingress.n;
		int64_t from = p ? opt->period.base.from : opt->period.win.from;
		int64_t to = p ? opt->period.base.to : opt->period.win.to;
		int have = r.min_minute[p] <= r.max_minute[p];
		ps->from_ns = from != INT64_MIN ? from : have ? minute_ns(r.min_minute[p]) : 0;
		ps->to_ns = to != INT64_MAX ? to : have ? minute_ns(r.max_minute[p] + 1) : 0;
		ps->open_from = from == INT64_MIN;
		ps->open_to = to == INT64_MAX;
		ps->rate_rps = (ps->requests > 0 && ps->to_ns > ps->from_ns)
		               ? (double)ps->requests / ((double)(ps->to_ns - ps->from_ns) / 1e9) : 0;
	}
	free(ord);
	*out = a;
out:
	reader_free(&r);
	return rc;
}
