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
 *  - astart/aend are the times used for overlap and the critical path: a
 *    server span that overruns its client by up to 1 % is clipped into it;
 *    a larger overrun is clock skew, counted, and the server subtree is
 *    shifted to sit centred in its client (Zipkin's symmetric-network
 *    correction).
 */
#include "trace_build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 512   /* deeper trees are cut off from path computations */

void trace_init(Trace *t)
{
	memset(t, 0, sizeof *t);
	buf_init(&t->arena);
	t->root = -1;
}

void trace_fini(Trace *t)
{
	buf_fini(&t->arena);
	free(t->sp);
	memset(t, 0, sizeof *t);
}

void trace_reset(Trace *t, const char *trace_id)
{
	buf_reset(&t->arena);
	buf_addc(&t->arena, '\0'); /* offset 0 is the empty string */
	t->n = 0;
	t->root = -1;
	t->n_extra_roots = t->n_orphans = t->n_unpaired = 0;
	t->n_clipped = t->n_skew = t->n_outside = t->n_late = 0;
	t->skew_max_ms = 0;
	t->cyclic = 0;
	snprintf(t->trace_id, sizeof t->trace_id, "%s", trace_id);
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
	TSpan *s = &t->sp[t->n++];
	memset(s, 0, sizeof *s);
	s->sid = put(t, r->span_id);
	s->pid = put(t, r->parent_id);
	s->svc = put(t, r->service);
	s->name = put(t, r->name);
	s->host = put(t, r->host);
	s->cls = put(t, r->wclass);
	s->attrs = put(t, r->attrs_json);
	s->events = put(t, r->events_json);
	s->kind = r->kind;
	s->start = s->astart = r->start_ns;
	s->end = s->aend = r->end_ns;
	s->status = r->status_code;
	s->has_queue = r->has_queue;
	s->queue = r->queue_ns > 0 ? r->queue_ns : 0;
	s->parent = s->server = s->client = -1;
	s->first_child = s->next_sibling = -1;
	s->node = -1;
	s->comp = COMP_SERVICE;
}

/* Span-id lookup through a sorted index (traces are small). */
typedef struct IdIndex {
	const Trace *t;
	int *ix;
} IdIndex;

static _Thread_local const Trace *g_sort_trace; /* qsort has no context argument in C11;
                                                  * per thread: the TUI and its workers */

static int cmp_sid(const void *a, const void *b)
{
	const Trace *t = g_sort_trace;
	int x = *(const int *)a, y = *(const int *)b;
	int c = strcmp(trace_str(t, t->sp[x].sid), trace_str(t, t->sp[y].sid));
	return c ? c : (x > y) - (x < y);
}

static int find_sid(const Trace *t, const int *ix, const char *sid)
{
	int lo = 0, hi = t->n - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		int c = strcmp(trace_str(t, t->sp[ix[mid]].sid), sid);
		if (c == 0) {
			/* first of equal ids: duplicates keep the first stored */
			while (mid > 0 && strcmp(trace_str(t, t->sp[ix[mid - 1]].sid), sid) == 0)
				mid--;
			return ix[mid];
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
		if (best < 0) {
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
				} else if (early == 0) {
					/* started inside the call and outlived it: the
					 * caller gave up (timeout, cancel) while the server
					 * kept working. Late work, not clock skew. */
					t->n_late++;
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

void trace_link(Trace *t)
{
	t->root = -1;
	if (t->n == 0)
		return;
	int *ix = xmalloc((size_t)t->n * sizeof *ix);
	for (int i = 0; i < t->n; i++)
		ix[i] = i;
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

	/* everything must hang from the root or an orphan root */
	char *seen = xcalloc((size_t)t->n, 1);
	for (int i = 0; i < t->n; i++) {
		if (i == t->root || t->sp[i].orphan) {
			seen[i] = 1;
			mark_subtree(t, i, 0, seen);
		}
	}
	for (int i = 0; i < t->n; i++)
		if (!seen[i])
			t->cyclic = 1;
	free(seen);
	free(ix);
	if (t->cyclic)
		return;
	if (t->root >= 0)
		pair_down(t, t->root, 0);
	for (int i = 0; i < t->n; i++)
		if (t->sp[i].orphan)
			pair_down(t, i, 0);
}

int64_t trace_ingress_ns(const Trace *t)
{
	if (t->root < 0)
		return 0;
	const TSpan *r = &t->sp[t->root];
	return (r->end - r->start) + (r->has_queue ? r->queue : 0);
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

static void cp_walk(Trace *t, int s, int64_t tend, int depth)
{
	TSpan *sp = &t->sp[s];
	sp->on_path = 1;
	int64_t cur = sp->aend < tend ? sp->aend : tend;
	int nk = 0;
	for (int c = sp->first_child; c >= 0; c = t->sp[c].next_sibling)
		if (!t->sp[c].outside && !t->sp[c].excluded)
			nk++;
	if (nk == 0 || depth > MAX_DEPTH) {
		credit(t, s, cur - sp->astart, -1);
		return;
	}
	int *kids = xmalloc((size_t)nk * sizeof *kids);
	int k = 0;
	for (int c = sp->first_child; c >= 0; c = t->sp[c].next_sibling)
		if (!t->sp[c].outside && !t->sp[c].excluded)
			kids[k++] = c;
	g_cp_trace = t;
	qsort(kids, (size_t)nk, sizeof *kids, cmp_end_desc);
	int pending = -1;
	for (int i = 0; i < nk; i++) {
		TSpan *ch = &t->sp[kids[i]];
		if (ch->aend > cur)
			continue; /* ends after the point we are explaining */
		credit(t, s, cur - ch->aend, pending);
		cp_walk(t, kids[i], ch->aend, depth + 1);
		cur = ch->astart > sp->astart ? ch->astart : sp->astart;
		pending = kids[i];
	}
	credit(t, s, cur - sp->astart, pending);
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
	cp_walk(t, t->root, INT64_MAX, 0);
	/* queue before the request span is on the path too */
	TSpan *r = &t->sp[t->root];
	if (r->has_queue)
		r->crit_queue = r->queue;
}
