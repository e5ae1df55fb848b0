/*
 * trace_build.c - see trace_build.h.
 *
 * Invariants after trace_link():
 *  - t->root is the parentless span that starts first (ties: lowest span
 *    id), or -1; other parentless spans and spans whose parent is missing
 *    are orphan roots: their subtrees stay in the DAG but the critical
 *    path, which starts at the root, never reaches them;
 *  - a trace whose spans are not all reachable from the root or an orphan
 *    root has a parent cycle and is flagged, not analysed;
 *  - after trace_link_entry(), t->root is the entry instead: the subtree
 *    the entry hangs in, down to it (its callers' spans), and the subtree
 *    of the trace's root when the entry is elsewhere, are marked above and
 *    excluded; neither pairing nor the critical path visits them, and the
 *    top of the entry's subtree is no longer an orphan root;
 *  - astart/aend are the times used for overlap and the critical path: a
 *    server span that overruns its client by up to 1 % is clipped into it,
 *    and so is one that started inside a call which got its answer (no
 *    error) and ended after it by less than the call took to reach it; a
 *    server that outlives a call which failed (the caller gave up) is late
 *    work (sv->late); any other overrun is clock skew, counted, and the
 *    server subtree is shifted to sit centred in its client (Zipkin's
 *    symmetric-network correction);
 *  - the walks' tree (wfirst/wnext) is the tree of parent links, except
 *    that a container holds the siblings it covers (trace_holds() says
 *    what a container is); every span keeps its recorded parent, which
 *    the DAG and the waterfall show.
 *
 * The critical path (trace_critical_path) walks the walks' tree back from
 * the end of each span on the path: the last child to finish, then the
 * latest sibling that finished before that child started. Clocks of
 * different hosts disagree and timestamps are rounded, so a serial
 * predecessor that overlaps the next sibling by no more than the skew
 * tolerance still counts as its predecessor; the overlap is split at its midpoint, the earlier sibling
 * keeping the first half. A split cuts into both siblings' subtrees: a
 * descendant that reaches past the cut is clamped to it, one wholly beyond
 * it lies in the other sibling's part and is off the path. Every span on
 * the path is explained over an interval [lo, hi] inside its own, and the
 * intervals of its path children and the gaps between them (its own time)
 * tile that interval exactly: the path's times add up to the root's
 * duration.
 */
#include "trace_build.h"

#include <math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 512   /* deeper trees are cut off from path computations */

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

void trace_init(Trace *t)
{
	memset(t, 0, sizeof *t);
	buf_init(&t->arena);
	t->root = -1;
	trace_set_skew(t, NULL);
}

void trace_set_skew(Trace *t, const SkewTolerance *skew)
{
	if (skew && skew->set) {
		t->tol_abs = skew->abs_ns > 0 ? skew->abs_ns : 0;
		t->tol_frac = skew->frac > 0 ? skew->frac : 0;
	} else {
		t->tol_abs = ANALYSIS_SKEW_ABS_NS;
		t->tol_frac = ANALYSIS_SKEW_FRAC;
	}
}

/* The overlap a serial predecessor may have with a sibling when the
 * shorter of the two lasts `shorter` ns. The absolute part stands for
 * clock skew and rounding, which do not shrink with the spans; but an
 * overlap that covers much of the shorter span is concurrency whatever
 * the clocks say, so that part is capped at ANALYSIS_SKEW_ABS_CAP of it
 * (two 20 us siblings overlapping by 15 us run in parallel). */
static double skew_tol(const Trace *t, int64_t shorter)
{
	double d = (double)shorter, cap = ANALYSIS_SKEW_ABS_CAP * d;
	double abs = (double)t->tol_abs < cap ? (double)t->tol_abs : cap;
	return abs + t->tol_frac * d;
}

int trace_skew_serial(const Trace *t, int64_t as, int64_t ae, int64_t bs, int64_t be)
{
	if (!(as < bs && ae < be && ae > bs))
		return 0;
	int64_t da = ae - as, db = be - bs;
	return (double)(ae - bs) <= skew_tol(t, da < db ? da : db);
}

/* Overlapping in time, and not serial within the skew tolerance. */
static int overlap_parallel(const Trace *t, const TSpan *x, const TSpan *y)
{
	if (!(x->astart < y->aend && y->astart < x->aend))
		return 0;
	return !trace_skew_serial(t, x->astart, x->aend, y->astart, y->aend) &&
	       !trace_skew_serial(t, y->astart, y->aend, x->astart, x->aend);
}

int trace_siblings_parallel(const Trace *t, int a, int b)
{
	return overlap_parallel(t, &t->sp[a], &t->sp[b]) && !trace_holds(t, a, b) &&
	       !trace_holds(t, b, a);
}

int trace_holds(const Trace *t, int c, int s)
{
	/* a holder chain is at most as long as the trace */
	for (int x = t->sp[s].holder, k = 0; x >= 0 && k < t->n; x = t->sp[x].holder, k++)
		if (x == c)
			return 1;
	return 0;
}

void trace_fini(Trace *t)
{
	buf_fini(&t->arena);
	free(t->sp);
	free(t->scratch);
	memset(t, 0, sizeof *t);
}

void trace_reset(Trace *t, const char *trace_id)
{
	buf_reset(&t->arena);
	buf_addc(&t->arena, '\0'); /* offset 0 is the empty string */
	t->n = 0;
	t->root = t->top = t->entry = -1;
	t->n_above = 0;
	t->n_extra_roots = t->n_orphans = t->n_unpaired = t->n_db = 0;
	t->n_clipped = t->n_skew = t->n_outside = t->n_late = t->n_held = 0;
	t->skew_max_ms = 0;
	t->cyclic = 0;
	t->key = 0;
	t->upto = 0;
	snprintf(t->trace_id, sizeof t->trace_id, "%s", trace_id);
	t->id_cut = strlen(trace_id) >= sizeof t->trace_id;
}

int trace_same(const Trace *t, const StoreSpanRow *r)
{
	/* by key: trace_id keeps only the first 32 characters of the id */
	if (r->trace_key > 0 || t->key > 0)
		return r->trace_key == t->key;
	return strcmp(t->trace_id, r->trace_id) == 0;
}

static size_t put(Trace *t, const char *s)
{
	if (s == NULL || *s == '\0')
		return 0;
	size_t off = t->arena.len;
	buf_add(&t->arena, s, strlen(s) + 1);
	return off;
}

void trace_add(Trace *t, const StoreSpanRow *r)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->sp = xrealloc(t->sp, (size_t)t->cap * sizeof *t->sp);
	}
	t->key = r->trace_key;
	if (r->rowid > t->upto)
		t->upto = r->rowid;
	TSpan *s = &t->sp[t->n++];
	memset(s, 0, sizeof *s);
	s->sid = put(t, r->span_id);
	s->pid = put(t, r->parent_id);
	s->svc = put(t, r->service);
	s->name = put(t, r->name);
	s->host = put(t, r->host);
	s->cls = put(t, r->wclass);
	s->attrs = put(t, r->attrs_json);
	s->db = put(t, r->db_system);
	s->peer = put(t, r->peer);
	s->route = put(t, r->route);
	s->route_rule = r->route_rule;
	s->events = put(t, r->events_json);
	s->kind = r->kind;
	s->start = s->astart = r->start_ns;
	s->end = s->aend = r->end_ns;
	s->status = r->status_code;
	s->has_queue = r->has_queue;
	s->queue = r->queue_ns > 0 ? r->queue_ns : 0;
	s->queue_row = r->queue_ns;
	s->parent = s->server = s->client = -1;
	s->first_child = s->next_sibling = -1;
	s->wfirst = s->wnext = s->holder = -1;
	s->node = -1;
	s->comp = COMP_SERVICE;
}

/* Span-id lookup through a sorted index (traces are small). Each entry
 * carries the id's first 8 bytes as a big-endian number, whose order is
 * strcmp's on those bytes, so most comparisons are one integer compare. */
typedef struct SidEntry {
	uint64_t key;
	int ix;
} SidEntry;

static uint64_t sid_key(const char *s)
{
	unsigned char b[8] = {0};
	memcpy(b, s, strnlen(s, sizeof b));
	return (uint64_t)b[0] << 56 | (uint64_t)b[1] << 48 | (uint64_t)b[2] << 40 |
	       (uint64_t)b[3] << 32 | (uint64_t)b[4] << 24 | (uint64_t)b[5] << 16 |
	       (uint64_t)b[6] << 8 | (uint64_t)b[7];
}

static _Thread_local const Trace *g_sort_trace; /* qsort has no context argument in C11;
                                                  * per thread: the TUI and its workers */

static int cmp_sid(const void *a, const void *b)
{
	const SidEntry *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	const Trace *t = g_sort_trace;
	int c = strcmp(trace_str(t, t->sp[x->ix].sid), trace_str(t, t->sp[y->ix].sid));
	return c ? c : (x->ix > y->ix) - (x->ix < y->ix);
}

static int sid_cmp(const Trace *t, const SidEntry *e, uint64_t key, const char *sid)
{
	if (e->key != key)
		return e->key < key ? -1 : 1;
	return strcmp(trace_str(t, t->sp[e->ix].sid), sid);
}

static int find_sid(const Trace *t, const SidEntry *ix, const char *sid)
{
	uint64_t key = sid_key(sid);
	int lo = 0, hi = t->n - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		int c = sid_cmp(t, &ix[mid], key, sid);
		if (c == 0) {
			/* first of equal ids: duplicates keep the first stored */
			while (mid > 0 && sid_cmp(t, &ix[mid - 1], key, sid) == 0)
				mid--;
			return ix[mid].ix;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/* Children are kept in start order (ties: span id) for stable output. */
static void add_child(Trace *t, int p, int c)
{
	int *link = &t->sp[p].first_child;
	while (*link >= 0) {
		const TSpan *o = &t->sp[*link];
		const TSpan *n = &t->sp[c];
		if (o->start > n->start ||
		    (o->start == n->start && strcmp(trace_str(t, o->sid), trace_str(t, n->sid)) > 0))
			break;
		link = &t->sp[*link].next_sibling;
	}
	t->sp[c].next_sibling = *link;
	*link = c;
}

static void mark_subtree(Trace *t, int s, int depth, char *seen)
{
	if (depth > MAX_DEPTH * 4)
		return;
	for (int c = t->sp[s].first_child; c >= 0; c = t->sp[c].next_sibling) {
		if (seen[c])
			continue;
		seen[c] = 1;
		mark_subtree(t, c, depth + 1, seen);
	}
}

static void shift_subtree(Trace *t, int s, int64_t d, int depth)
{
	t->sp[s].astart += d;
	t->sp[s].aend += d;
	if (depth > MAX_DEPTH)
		return;
	for (int c = t->sp[s].first_child; c >= 0; c = t->sp[c].next_sibling)
		shift_subtree(t, c, d, depth + 1);
}

/* Pairs client spans with their server children and corrects skew, top
 * down so a corrected server subtree is seen shifted by its descendants. */
static void pair_down(Trace *t, int s, int depth)
{
	TSpan *sp = &t->sp[s];
	if (sp->kind == SPAN_KIND_CLIENT) {
		int best = -1;
		for (int c = sp->first_child; c >= 0; c = t->sp[c].next_sibling) {
			if (t->sp[c].kind != SPAN_KIND_SERVER)
				continue;
			/* prefer a server in another service; else the earliest */
			int other = strcmp(trace_str(t, t->sp[c].svc), trace_str(t, sp->svc)) != 0;
			if (best < 0 ||
			    (other && strcmp(trace_str(t, t->sp[best].svc), trace_str(t, sp->svc)) == 0))
				best = c;
		}
		if (best < 0 && sp->db) {
			/* a database call: no server span is expected (databases
			 * are not traced), so it is a leaf whose client time is
			 * the call's time */
			t->n_db++;
		} else if (best < 0) {
			t->n_unpaired++;
		} else {
			TSpan *sv = &t->sp[best];
			sp->server = best;
			sv->client = s;
			sp->comp = COMP_WAIT;
			int64_t cdur = sp->aend - sp->astart, sdur = sv->aend - sv->astart;
			int64_t early = sv->astart < sp->astart ? sp->astart - sv->astart : 0;
			int64_t late = sv->aend > sp->aend ? sv->aend - sp->aend : 0;
			int64_t over = early + late;
			if (over > 0) {
				if ((double)over <= 0.01 * (double)cdur) {
					t->n_clipped++;
				} else if (early == 0 && sp->status == 2) {
					/* started inside the call and outlived it, and the
					 * call failed: the caller gave up (timeout, cancel)
					 * while the server kept working. Late work, not
					 * clock skew. */
					t->n_late++;
					sv->late = 1;
				} else if (early == 0 && late <= sv->astart - sp->astart) {
					/* a call that got its answer, whose server span
					 * ended after it by less than the request took to
					 * reach the server: the answer's trip back and
					 * where each side takes its end time (an HTTP
					 * server span ends after the response is flushed),
					 * not work after the caller left */
					t->n_clipped++;
				} else {
					t->n_skew++;
					double ms = (double)over / 1e6;
					if (ms > t->skew_max_ms)
						t->skew_max_ms = ms;
					int64_t want = sp->astart + (cdur - (sdur < cdur ? sdur : cdur)) / 2;
					shift_subtree(t, best, want - sv->astart, 0);
				}
				if (sv->astart < sp->astart)
					sv->astart = sp->astart;
				if (sv->aend > sp->aend)
					sv->aend = sp->aend;
			}
		}
	}
	if (depth > MAX_DEPTH)
		return;
	for (int c = sp->first_child; c >= 0; c = t->sp[c].next_sibling) {
		TSpan *ch = &t->sp[c];
		if (ch->aend <= sp->astart || ch->astart >= sp->aend) {
			if (!(ch->aend == ch->astart && ch->astart >= sp->astart && ch->astart <= sp->aend)) {
				ch->outside = 1;
				t->n_outside++;
			}
		} else {
			if (ch->astart < sp->astart)
				ch->astart = sp->astart;
			if (ch->aend > sp->aend)
				ch->aend = sp->aend;
		}
		pair_down(t, c, depth + 1);
	}
}

/* Whether client spans a and b have the same service and span name. */
static int same_call(const Trace *t, const TSpan *a, const TSpan *b)
{
	return strcmp(trace_str(t, a->svc), trace_str(t, b->svc)) == 0 &&
	       strcmp(trace_str(t, a->name), trace_str(t, b->name)) == 0;
}

/* Sets TSpan.callee of every client span (trace_callee()). A call that
 * names neither a database system nor a peer takes what its siblings of
 * the same service and name call, when they agree: each group of such
 * siblings is settled with one look at its parent's children, so a
 * parent with thousands of unnamed calls costs thousands, not millions,
 * of comparisons. */
static void callees(Trace *t)
{
	for (int i = 0; i < t->n; i++) {
		TSpan *sp = &t->sp[i];
		/* a database call by its system, not by its server.address,
		 * which often names one replica or cluster member of many */
		sp->callee = sp->kind != SPAN_KIND_CLIENT ? 0 : sp->db ? sp->db : sp->peer;
	}
	char *done = NULL;
	for (int i = 0; i < t->n; i++) {
		TSpan *sp = &t->sp[i];
		if (sp->kind != SPAN_KIND_CLIENT || sp->callee || sp->parent < 0 || (done && done[i]))
			continue;
		if (done == NULL)
			done = xcalloc((size_t)t->n, 1);
		const TSpan *p = &t->sp[sp->parent];
		size_t got = 0;
		int agree = 1;
		for (int c = p->first_child; c >= 0 && agree; c = t->sp[c].next_sibling) {
			const TSpan *o = &t->sp[c];
			if (o->kind != SPAN_KIND_CLIENT || (!o->db && !o->peer) || !same_call(t, o, sp))
				continue;
			if (got && strcmp(trace_str(t, got), trace_str(t, o->callee)) != 0)
				agree = 0;
			got = o->callee;
		}
		for (int c = p->first_child; c >= 0; c = t->sp[c].next_sibling) {
			TSpan *o = &t->sp[c];
			if (o->kind == SPAN_KIND_CLIENT && !o->db && !o->peer && !done[c] &&
			    same_call(t, o, sp)) {
				done[c] = 1;
				o->callee = agree ? got : 0;
			}
		}
	}
	free(done);
}

/* ---- containers: the walks' tree ------------------------------------------ */

/* Does c's interval cover o's, within the skew tolerance? */
static int covers(const Trace *t, const TSpan *c, const TSpan *o)
{
	double tol = skew_tol(t, o->aend - o->astart);
	return (double)(c->astart - o->astart) <= tol && (double)(o->aend - c->aend) <= tol;
}

typedef struct Hold {
	int n;                     /* the trace's spans: the arrays' size (0: none yet) */
	int *arr;                  /* a parent's walk children, by adjusted start */
	int *pos;                  /* per span: its position in arr */
	int64_t *pmax;             /* pmax[k]: the latest end among arr[0 .. k) */
	int *cand, *over;          /* candidates; the siblings one overlaps */
	int64_t *cstart, *cmax;    /* the calls among them: starts, ascending, and
	                            * cmax[k]: the latest end among the first k */
	int nc;
} Hold;

/* Does some call among p's walk children overlap [s, e) in time? A
 * necessary condition for a container, answered in log time (cstart by
 * start, cmax the running latest end): parallel local work with no call
 * beside it is turned away before any scan. */
static int call_overlaps(const Hold *h, int64_t s, int64_t e)
{
	int lo = 0, hi = h->nc; /* the calls starting before e: [0, lo) */
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (h->cstart[mid] < e)
			lo = mid + 1;
		else
			hi = mid;
	}
	return h->cmax[lo] > s;
}

static _Thread_local const Trace *g_hold_trace;

static int cmp_astart(const void *a, const void *b)
{
	const Trace *t = g_hold_trace;
	int i = *(const int *)a, j = *(const int *)b;
	const TSpan *x = &t->sp[i], *y = &t->sp[j];
	if (x->astart != y->astart)
		return x->astart < y->astart ? -1 : 1;
	return (i > j) - (i < j);
}

/* Longest first; then earliest, then span id. */
static int cmp_longest(const void *a, const void *b)
{
	const Trace *t = g_hold_trace;
	const TSpan *x = &t->sp[*(const int *)a], *y = &t->sp[*(const int *)b];
	int64_t dx = x->aend - x->astart, dy = y->aend - y->astart;
	if (dx != dy)
		return dx > dy ? -1 : 1;
	if (x->astart != y->astart)
		return x->astart < y->astart ? -1 : 1;
	return strcmp(trace_str(t, x->sid), trace_str(t, y->sid));
}

/* A container is longer than the local spans it holds: two local spans
 * of one length are parallel work (a call may be as long as its wrapper
 * where the clock is coarse). */
static int shorter(const TSpan *c, const TSpan *o)
{
	return o->kind == SPAN_KIND_CLIENT || o->aend - o->astart < c->aend - c->astart;
}

/* Is span s still among p's walk children (held by none, or by p)? */
static int here(const TSpan *s, int p)
{
	return s->holder < 0 || s->holder == p;
}

/* The siblings (walk children of p in arr[0 .. n), held by no other)
 * that candidate c, at position i of arr, overlaps in parallel, into
 * h->over; returns how many, or -1 when one of them is not covered (or
 * is a local span as long as c), or none is a call. Siblings
 * that start after c are those from i + 1 that start before it ends;
 * those before it are scanned back only while an earlier one can still
 * reach c (pmax), so a parent with thousands of children costs about
 * thousands of comparisons. */
static int overlapped(const Trace *t, Hold *h, int p, int n, int i)
{
	const TSpan *c = &t->sp[h->arr[i]];
	int k = 0, call = 0;
	for (int j = i + 1; j < n && t->sp[h->arr[j]].astart < c->aend; j++) {
		const TSpan *o = &t->sp[h->arr[j]];
		if (!here(o, p) || !overlap_parallel(t, c, o))
			continue;
		if (!covers(t, c, o) || !shorter(c, o))
			return -1;
		h->over[k++] = h->arr[j];
		call |= o->kind == SPAN_KIND_CLIENT;
	}
	for (int j = i - 1; j >= 0 && h->pmax[j + 1] > c->astart; j--) {
		const TSpan *o = &t->sp[h->arr[j]];
		if (!here(o, p) || !overlap_parallel(t, c, o))
			continue;
		if (!covers(t, c, o) || !shorter(c, o))
			return -1;
		h->over[k++] = h->arr[j];
		call |= o->kind == SPAN_KIND_CLIENT;
	}
	return k > 0 && call ? k : -1;
}

/* Builds the walks' tree below p: its containers (longest first) take
 * the siblings they cover out of its walk children. */
static void hold_down(Trace *t, Hold *h, int p, int depth)
{
	TSpan *ps = &t->sp[p];
	int n = 0, nc = 0;
	for (int c = ps->wfirst; c >= 0; c = t->sp[c].wnext) {
		const TSpan *cs = &t->sp[c];
		if (cs->outside)
			continue;
		h->arr[n++] = c;
		if ((cs->kind == SPAN_KIND_INTERNAL || cs->kind == SPAN_KIND_UNSPECIFIED) &&
		    cs->aend > cs->astart && strcmp(trace_str(t, cs->svc), trace_str(t, ps->svc)) == 0)
			nc++;
	}
	/* a client's children are its server side: nothing to hold there */
	if (ps->kind != SPAN_KIND_CLIENT && n >= 2 && nc > 0) {
		if (h->n == 0) {
			/* most traces need none of this: allocated on first use */
			h->n = t->n;
			h->pos = xmalloc((size_t)t->n * sizeof *h->pos);
			h->cand = xmalloc((size_t)t->n * sizeof *h->cand);
			h->over = xmalloc((size_t)t->n * sizeof *h->over);
			h->pmax = xmalloc((size_t)(t->n + 1) * sizeof *h->pmax);
			h->cstart = xmalloc((size_t)t->n * sizeof *h->cstart);
			h->cmax = xmalloc((size_t)(t->n + 1) * sizeof *h->cmax);
		}
		g_hold_trace = t;
		qsort(h->arr, (size_t)n, sizeof *h->arr, cmp_astart);
		h->pmax[0] = INT64_MIN;
		nc = 0;
		for (int k = 0; k < n; k++) {
			const TSpan *cs = &t->sp[h->arr[k]];
			h->pos[h->arr[k]] = k;
			h->pmax[k + 1] = max64(h->pmax[k], cs->aend);
			if ((cs->kind == SPAN_KIND_INTERNAL || cs->kind == SPAN_KIND_UNSPECIFIED) &&
			    cs->aend > cs->astart &&
			    strcmp(trace_str(t, cs->svc), trace_str(t, ps->svc)) == 0)
				h->cand[nc++] = h->arr[k];
		}
		qsort(h->cand, (size_t)nc, sizeof *h->cand, cmp_longest);
		g_hold_trace = NULL;
		/* the calls, by start; arr is by start, so cmax follows them */
		h->nc = 0;
		h->cmax[0] = INT64_MIN;
		for (int k = 0; k < n; k++) {
			const TSpan *cs = &t->sp[h->arr[k]];
			if (cs->kind != SPAN_KIND_CLIENT)
				continue;
			h->cstart[h->nc] = cs->astart;
			h->cmax[h->nc + 1] = max64(h->cmax[h->nc], cs->aend);
			h->nc++;
		}
		int held = 0;
		for (int k = 0; k < nc; k++) {
			int c = h->cand[k];
			if (!here(&t->sp[c], p) ||
			    !call_overlaps(h, t->sp[c].astart, t->sp[c].aend))
				continue;
			int m = overlapped(t, h, p, n, h->pos[c]);
			for (int j = 0; j < m; j++)
				t->sp[h->over[j]].holder = c;
			held += m > 0 ? m : 0;
		}
		if (held) {
			/* p keeps what is not held (and its children outside it);
			 * the rest joins the walk children of its holder */
			t->n_held += held;
			int *link = &ps->wfirst;
			for (int c = ps->wfirst, next; c >= 0; c = next) {
				TSpan *cs = &t->sp[c];
				next = cs->wnext;
				if (here(cs, p)) {
					*link = c;
					link = &cs->wnext;
				} else {
					cs->wnext = t->sp[cs->holder].wfirst;
					t->sp[cs->holder].wfirst = c;
				}
			}
			*link = -1;
		}
	}
	if (depth > MAX_DEPTH)
		return;
	for (int c = ps->wfirst; c >= 0; c = t->sp[c].wnext)
		hold_down(t, h, c, depth + 1);
}

/* The walks' tree: the recorded one, with containers holding the
 * siblings they cover (trace_holds()). */
static void walk_tree(Trace *t)
{
	for (int i = 0; i < t->n; i++) {
		t->sp[i].wfirst = t->sp[i].first_child;
		t->sp[i].wnext = t->sp[i].next_sibling;
		t->sp[i].holder = -1;
	}
	Hold h = {0};
	/* trace_link()'s span-id index is done with: its memory holds arr */
	h.arr = t->scratch;
	for (int i = 0; i < t->n; i++)
		if (i == t->root || t->sp[i].orphan) {
			hold_down(t, &h, i, 0);
		}
	free(h.pos);
	free(h.cand);
	free(h.over);
	free(h.pmax);
	free(h.cstart);
	free(h.cmax);
}

/* Parents, children, the root, orphans, callees and the cycle check:
 * what both ways of linking share. */
static void link_tree(Trace *t)
{
	t->root = t->top = t->entry = -1;
	t->n_above = 0;
	if (t->n == 0)
		return;
	/* the span-id index and the reached-from-a-root flags, in memory the
	 * trace keeps for the next one (no allocation per trace) */
	size_t need = (size_t)t->n * (sizeof(SidEntry) + 1);
	if (t->scratch_cap < need) {
		free(t->scratch);
		t->scratch_cap = need * 2;
		t->scratch = xmalloc(t->scratch_cap);
	}
	SidEntry *ix = t->scratch;
	for (int i = 0; i < t->n; i++)
		ix[i] = (SidEntry){sid_key(trace_str(t, t->sp[i].sid)), i};
	g_sort_trace = t;
	qsort(ix, (size_t)t->n, sizeof *ix, cmp_sid);
	g_sort_trace = NULL;

	for (int i = 0; i < t->n; i++) {
		TSpan *s = &t->sp[i];
		if (s->pid == 0)
			continue;
		int p = find_sid(t, ix, trace_str(t, s->pid));
		if (p < 0 || p == i) {
			s->orphan = 1;
			t->n_orphans++;
		} else {
			s->parent = p;
		}
	}
	/* the root: earliest parentless span (ties: lowest span id) */
	for (int i = 0; i < t->n; i++) {
		TSpan *s = &t->sp[i];
		if (s->parent >= 0 || s->orphan)
			continue;
		if (t->root < 0 || s->start < t->sp[t->root].start ||
		    (s->start == t->sp[t->root].start &&
		     strcmp(trace_str(t, s->sid), trace_str(t, t->sp[t->root].sid)) < 0))
			t->root = i;
	}
	t->top = t->root;
	for (int i = 0; i < t->n; i++) {
		TSpan *s = &t->sp[i];
		if (s->parent < 0 && !s->orphan && i != t->root) {
			s->orphan = 1;
			t->n_extra_roots++;
		}
	}
	for (int i = 0; i < t->n; i++)
		if (t->sp[i].parent >= 0)
			add_child(t, t->sp[i].parent, i);
	callees(t);

	/* everything must hang from the root or an orphan root */
	char *seen = (char *)(ix + t->n);
	memset(seen, 0, (size_t)t->n);
	for (int i = 0; i < t->n; i++) {
		if (i == t->root || t->sp[i].orphan) {
			seen[i] = 1;
			mark_subtree(t, i, 0, seen);
		}
	}
	for (int i = 0; i < t->n; i++)
		if (!seen[i])
			t->cyclic = 1;
}

/* Is there a SERVER span above s (the trace has no cycle)? */
static int server_above(const Trace *t, int s)
{
	for (int p = t->sp[s].parent, d = 0; p >= 0 && d < MAX_DEPTH * 4; p = t->sp[p].parent, d++)
		if (t->sp[p].kind == SPAN_KIND_SERVER)
			return 1;
	return 0;
}

/* The entry span (trace_build.h, trace_link_entry()), or -1. */
static int find_entry(const Trace *t)
{
	if (t->cyclic)
		return -1;
	if (t->root >= 0 && t->sp[t->root].kind == SPAN_KIND_SERVER)
		return t->root;
	int best = -1;
	for (int i = 0; i < t->n; i++) {
		const TSpan *s = &t->sp[i];
		if (s->kind != SPAN_KIND_SERVER || server_above(t, i))
			continue;
		if (best < 0 || s->start < t->sp[best].start ||
		    (s->start == t->sp[best].start &&
		     strcmp(trace_str(t, s->sid), trace_str(t, t->sp[best].sid)) < 0))
			best = i;
	}
	if (best >= 0)
		return best;
	if (t->root >= 0 && t->sp[t->root].kind != SPAN_KIND_CLIENT)
		return t->root;
	return -1;
}

/* Marks s's subtree, except stop's, as outside the request. */
static void mark_above(Trace *t, int s, int stop, int depth)
{
	if (s == stop || depth > MAX_DEPTH * 4)
		return;
	TSpan *sp = &t->sp[s];
	sp->above = sp->excluded = 1;
	t->n_above++;
	for (int c = sp->first_child; c >= 0; c = t->sp[c].next_sibling)
		mark_above(t, c, stop, depth + 1);
}

/* The top of the subtree s hangs in: the root or an orphan root. */
static int subtree_top(const Trace *t, int s)
{
	for (int d = 0; t->sp[s].parent >= 0 && d < MAX_DEPTH * 4; d++)
		s = t->sp[s].parent;
	return s;
}

/* Pairing and skew, from the root and from each orphan root; then the
 * walks' tree. */
static void pair_all(Trace *t)
{
	if (t->root >= 0)
		pair_down(t, t->root, 0);
	for (int i = 0; i < t->n; i++)
		if (t->sp[i].orphan)
			pair_down(t, i, 0);
	walk_tree(t);
}

void trace_link(Trace *t)
{
	link_tree(t);
	if (t->n == 0 || t->cyclic)
		return;
	t->entry = find_entry(t);
	pair_all(t);
}

void trace_link_entry(Trace *t)
{
	link_tree(t);
	if (t->n == 0 || t->cyclic)
		return;
	int e = t->entry = find_entry(t);
	t->root = e;
	if (e < 0)
		return;
	if (e != t->top) {
		/* the spans above the entry: its own subtree's top down to it,
		 * and the trace's root with everything under it when the entry
		 * hangs elsewhere (an orphan whose caller's span is missing) */
		int r = subtree_top(t, e);
		mark_above(t, r, e, 0);
		if (t->top >= 0 && t->top != r)
			mark_above(t, t->top, e, 0);
		/* the subtree's top is no orphan of the request: it is the
		 * entry, or above it */
		TSpan *rs = &t->sp[r];
		if (rs->orphan) {
			rs->orphan = 0;
			if (rs->pid == 0)
				t->n_extra_roots--;
			else
				t->n_orphans--;
		}
	}
	pair_all(t);
}

int trace_link_request(Trace *t, const char *service, const char *route)
{
	if (t->n == 0)
		return 0;
	trace_link_entry(t);
	if (t->cyclic || t->root < 0)
		return 0;
	return strcmp(trace_str(t, t->sp[t->root].svc), service) == 0 &&
	       strcmp(trace_route(t, t->root), route) == 0;
}

const char *trace_route(const Trace *t, int s)
{
	const TSpan *sp = &t->sp[s];
	return trace_str(t, sp->route ? sp->route : sp->name);
}

int64_t trace_request_start(const Trace *t)
{
	if (t->top >= 0)
		return t->sp[t->top].start;
	int64_t start = INT64_MAX;
	for (int i = 0; i < t->n; i++)
		if (t->sp[i].start < start)
			start = t->sp[i].start;
	return start;
}

int64_t trace_ingress_ns(const Trace *t)
{
	if (t->root < 0)
		return 0;
	const TSpan *r = &t->sp[t->root];
	return (r->end - r->start) + (r->has_queue ? r->queue : 0);
}

int64_t trace_server_in_call_ns(const Trace *t, int s)
{
	const TSpan *sp = &t->sp[s], *sv = &t->sp[sp->server];
	int64_t dur = sp->end - sp->start, sdur = sv->aend - sv->astart;
	if (sdur > dur)
		sdur = dur;
	return sdur < 0 ? 0 : sdur;
}

int trace_unit_split(const Trace *t, int s, int type, double f[TRACE_F_COUNT])
{
	const TSpan *sp = &t->sp[s];
	int flags = 0;
	for (int i = 0; i < TRACE_F_COUNT; i++)
		f[i] = NAN;
	int64_t dur = sp->end - sp->start;
	f[TRACE_F_TOTAL] = (double)dur / 1e6;
	if (type == NODE_CALL) {
		if (sp->server >= 0) {
			int64_t sdur = trace_server_in_call_ns(t, s);
			f[TRACE_F_SERVICE] = (double)sdur / 1e6;
			f[TRACE_F_WAIT] = (double)(dur - sdur) / 1e6;
		} else if (sp->db) {
			/* a database call is a leaf: the client's time is the time
			 * spent in the dependency, so it counts as service (as on the
			 * critical path), and the split is not unknown */
			f[TRACE_F_SERVICE] = (double)dur / 1e6;
			flags |= TRACE_SPLIT_DB;
		} else {
			flags |= TRACE_SPLIT_UNKNOWN;
		}
	} else {
		f[TRACE_F_SERVICE] = (double)dur / 1e6;
	}
	if (sp->has_queue)
		f[TRACE_F_QUEUE] = (double)sp->queue / 1e6;
	if (type == NODE_ROOT)
		f[TRACE_F_TOTAL] = (double)trace_ingress_ns(t) / 1e6;
	return flags;
}

/* ---- critical path ------------------------------------------------------ */

static _Thread_local const Trace *g_cp_trace;

static int cmp_end_desc(const void *a, const void *b)
{
	const Trace *t = g_cp_trace;
	const TSpan *x = &t->sp[*(const int *)a], *y = &t->sp[*(const int *)b];
	if (x->aend != y->aend)
		return x->aend < y->aend ? 1 : -1;
	return strcmp(trace_str(t, x->sid), trace_str(t, y->sid));
}

/* Credits seg ns of s's own time to the path; the child that starts right
 * after the segment (pending) first takes what it waited in a queue. */
static void credit(Trace *t, int s, int64_t seg, int pending)
{
	if (seg <= 0)
		return;
	if (pending >= 0 && t->sp[pending].has_queue) {
		TSpan *p = &t->sp[pending];
		int64_t left = p->queue - p->crit_queue;
		int64_t q = left < seg ? left : seg;
		if (q > 0) {
			p->crit_queue += q;
			seg -= q;
		}
	}
	t->sp[s].crit += seg;
}

/* One child on a span's path and the part [lo, hi] of it that the path
 * goes through. */
typedef struct CpLink {
	int k;
	int64_t lo, hi;
} CpLink;

/* Explains span s over [max(astart, lo), min(aend, hi)]: picks the chain
 * of children that decided its end, then credits the gaps to s and
 * recurses into each child over its part. */
static void cp_walk(Trace *t, int s, int64_t lo, int64_t hi, int depth)
{
	TSpan *sp = &t->sp[s];
	sp->on_path = 1;
	int64_t L = max64(sp->astart, lo), H = min64(sp->aend, hi);
	if (H < L)
		H = L;
	int nk = 0;
	for (int c = sp->wfirst; c >= 0; c = t->sp[c].wnext)
		if (!t->sp[c].outside && !t->sp[c].excluded)
			nk++;
	if (nk == 0 || depth > MAX_DEPTH) {
		credit(t, s, H - L, -1);
		return;
	}
	int *kids = xmalloc((size_t)nk * sizeof *kids);
	int k = 0;
	for (int c = sp->wfirst; c >= 0; c = t->sp[c].wnext) {
		const TSpan *ch = &t->sp[c];
		if (ch->outside || ch->excluded)
			continue;
		/* only children inside [L, H]; zero-length ones anywhere in it */
		int64_t ks = max64(ch->astart, L), ke = min64(ch->aend, H);
		if (ks < ke || (ch->astart == ch->aend && ch->astart >= L && ch->astart <= H))
			kids[k++] = c;
	}
	nk = k;
	g_cp_trace = t;
	qsort(kids, (size_t)nk, sizeof *kids, cmp_end_desc);

	/* the chain, from the end backwards: the latest child ending by cur,
	 * or, ending after cur, one that precedes the pending child within
	 * the skew tolerance (it ends later than any child ending by cur, so
	 * it is the one the pending child waited for) */
	CpLink *chain = xmalloc((size_t)(nk ? nk : 1) * sizeof *chain);
	char *used = xcalloc((size_t)(nk ? nk : 1), 1);
	int nch = 0, first = 0;
	int64_t cur = H, ps = 0, pe = 0;
	for (;;) {
		int pick = -1;
		for (int i = first; i < nk; i++) {
			if (used[i]) {
				if (i == first)
					first++;
				continue;
			}
			const TSpan *ch = &t->sp[kids[i]];
			int64_t ks = max64(ch->astart, L), ke = min64(ch->aend, H);
			if (ke <= cur ||
			    (nch > 0 && trace_skew_serial(t, ks, ke, ps, pe))) {
				pick = i;
				break;
			}
			/* cur only moves back: a child too far past it stays out
			 * (no pair with it can allow more than its own length does) */
			if (i == first && (double)(ke - cur) > skew_tol(t, ke - ks))
				first++;
		}
		if (pick < 0)
			break;
		const TSpan *ch = &t->sp[kids[pick]];
		used[pick] = 1;
		ps = max64(ch->astart, L);
		pe = min64(ch->aend, H);
		chain[nch].k = kids[pick];
		chain[nch].lo = ps;
		chain[nch].hi = pe;
		if (nch > 0 && pe > chain[nch - 1].lo) {
			/* overlapping its successor: split at the midpoint */
			int64_t m = chain[nch - 1].lo + (pe - chain[nch - 1].lo) / 2;
			chain[nch - 1].lo = m;
			chain[nch].hi = m;
		}
		nch++;
		cur = ps;
	}
	cur = H;
	int pending = -1;
	for (int i = 0; i < nch; i++) {
		credit(t, s, cur - chain[i].hi, pending);
		cp_walk(t, chain[i].k, chain[i].lo, chain[i].hi, depth + 1);
		cur = chain[i].lo;
		pending = chain[i].k;
	}
	credit(t, s, cur - L, pending);
	free(used);
	free(chain);
	free(kids);
}

void trace_critical_path(Trace *t)
{
	for (int i = 0; i < t->n; i++) {
		t->sp[i].crit = t->sp[i].crit_queue = 0;
		t->sp[i].on_path = 0;
	}
	if (t->root < 0 || t->cyclic)
		return;
	cp_walk(t, t->root, INT64_MIN, INT64_MAX, 0);
	/* queue before the request span is on the path too */
	TSpan *r = &t->sp[t->root];
	if (r->has_queue)
		r->crit_queue = r->queue;
}

const char *trace_callee(const Trace *t, int s)
{
	const TSpan *sp = &t->sp[s];
	return sp->kind == SPAN_KIND_CLIENT ? trace_str(t, sp->callee) : "";
}
