/*
 * view_dag.c - the request DAG as a tree: per node its model tags, calls,
 * p99, a stacked bar of queue | client wait | service with the component
 * p99s beside it, and the change of p99 against the baseline.
 *
 * The selection is app->sel_node (shared with the node pane); this view
 * only keeps its scroll position, sort mode and folded subtrees. Rows are
 * rebuilt from the analysis on every draw and key, so a recompute that adds
 * nodes needs no bookkeeping here.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "view.h"

enum { SORT_TREE, SORT_P99, SORT_DELTA, SORT_CALLS, SORT_COUNT };
static const char *const sort_names[SORT_COUNT] = {"tree", "p99", "change", "calls"};

typedef struct DagView {
	View base;
	int top;                  /* first row shown */
	int sort;                 /* SORT_* */
	char **folded;            /* node keys of folded subtrees (owned) */
	int n_folded;
} DagView;

typedef struct Rows {
	int *id;                  /* node ids in display order */
	unsigned char *context;   /* shown only as an ancestor of a filter match */
	int n;
} Rows;

static int contains_ci(const char *hay, const char *needle)
{
	if (hay == NULL)
		return 0;
	size_t n = strlen(needle);
	for (const char *p = hay; *p; p++) {
		size_t i = 0;
		while (i < n && p[i] && tolower((unsigned char)p[i]) == tolower((unsigned char)needle[i]))
			i++;
		if (i == n)
			return 1;
	}
	return n == 0;
}

static int is_folded(const DagView *v, const Analysis *a, int id)
{
	if (v->n_folded == 0)
		return 0;
	char *k = app_node_key(a, id);
	int f = 0;
	for (int i = 0; i < v->n_folded && !f; i++)
		f = strcmp(v->folded[i], k) == 0;
	free(k);
	return f;
}

static void set_folded(DagView *v, const Analysis *a, int id, int fold)
{
	char *k = app_node_key(a, id);
	for (int i = 0; i < v->n_folded; i++) {
		if (strcmp(v->folded[i], k) == 0) {
			if (!fold) {
				free(v->folded[i]);
				v->folded[i] = v->folded[--v->n_folded];
			}
			free(k);
			return;
		}
	}
	if (!fold) {
		free(k);
		return;
	}
	v->folded = xrealloc(v->folded, (size_t)(v->n_folded + 1) * sizeof *v->folded);
	v->folded[v->n_folded++] = k;
}

static const DagView *g_sort_view;
static const Analysis *g_sort_a;

static double sort_value(const DagNode *d, int sort)
{
	switch (sort) {
	case SORT_P99: return d->pop[0].total.n ? d->pop[0].total.p99 : -1;
	case SORT_DELTA:
		return (d->pop[0].total.n && d->pop[1].total.n) ? d->pop[0].total.p99 - d->pop[1].total.p99
		                                                : -1e300;
	default: return (double)d->pop[0].calls;
	}
}

static int cmp_rows(const void *x, const void *y)
{
	const DagNode *a = &g_sort_a->nodes[*(const int *)x];
	const DagNode *b = &g_sort_a->nodes[*(const int *)y];
	double va = sort_value(a, g_sort_view->sort), vb = sort_value(b, g_sort_view->sort);
	if (va != vb)
		return va < vb ? 1 : -1;
	return a->id - b->id;
}

static void rows_build(const DagView *v, const TuiApp *app, Rows *r)
{
	const Analysis *a = app->a;
	int n = a->n_nodes;
	r->id = xmalloc((size_t)(n ? n : 1) * sizeof *r->id);
	r->context = xcalloc((size_t)(n ? n : 1), 1);
	r->n = 0;
	unsigned char *match = xcalloc((size_t)(n ? n : 1), 1);
	unsigned char *sub = xcalloc((size_t)(n ? n : 1), 1);
	const char *f = app->filter;
	for (int i = 0; i < n; i++) {
		const DagNode *d = &a->nodes[i];
		match[i] = !f[0] || contains_ci(d->label, f) || contains_ci(d->service, f) ||
		           contains_ci(d->operation, f) || contains_ci(d->dependency, f);
		sub[i] = match[i];
	}
	for (int i = n - 1; i > 0; i--) /* pre-order: children after parents */
		if (sub[i] && a->nodes[i].parent >= 0)
			sub[a->nodes[i].parent] = 1;
	int hide_below = -1; /* depth under which a folded subtree is hidden */
	for (int i = 0; i < n; i++) {
		const DagNode *d = &a->nodes[i];
		if (hide_below >= 0 && d->depth > hide_below)
			continue;
		hide_below = -1;
		if (!sub[i])
			continue;
		if (v->sort == SORT_TREE && is_folded(v, a, i))
			hide_below = d->depth;
		if (v->sort != SORT_TREE && !match[i])
			continue;
		r->context[r->n] = !match[i];
		r->id[r->n++] = i;
	}
	if (v->sort != SORT_TREE) {
		g_sort_view = v;
		g_sort_a = a;
		qsort(r->id, (size_t)r->n, sizeof *r->id, cmp_rows);
	}
	free(match);
	free(sub);
}

static void rows_free(Rows *r)
{
	free(r->id);
	free(r->context);
}

static int row_of(const Rows *r, int id)
{
	for (int i = 0; i < r->n; i++)
		if (r->id[i] == id)
			return i;
	return -1;
}

/* ---- layout ------------------------------------------------------------ */

typedef struct Layout {
	int name, tags, calls, p99, bar, nums, delta; /* column x, -1 hidden */
	int name_w, bar_w;
} Layout;

static Layout layout(int w, int baseline)
{
	Layout L;
	int tags_w = 6, calls_w = 7, p99_w = 7, nums_w = 23, delta_w = baseline ? 8 : 0;
	int show_calls = w >= 90;
	int fixed = 2 + 1 + tags_w + (show_calls ? 1 + calls_w : 0) + 1 + p99_w + 1 + 1 + nums_w +
	            (delta_w ? 1 + delta_w : 0);
	int rest = w - fixed;
	int name_w = (int)(rest * 0.6);
	if (name_w < 14)
		name_w = 14;
	if (name_w > 40)
		name_w = 40;
	int bar_w = rest - name_w;
	if (bar_w < 4) {
		name_w += bar_w > 0 ? bar_w : 0;
		bar_w = 0;
	}
	int x = 2;
	L.name = x;
	L.name_w = name_w;
	x += name_w + 1;
	L.tags = x;
	x += tags_w + 1;
	if (show_calls) {
		L.calls = x;
		x += calls_w + 1;
	} else {
		L.calls = -1;
	}
	L.p99 = x;
	x += p99_w + 1;
	L.bar = bar_w ? x : -1;
	L.bar_w = bar_w;
	x += bar_w + (bar_w ? 1 : 0);
	L.nums = x;
	x += nums_w + 1;
	L.delta = delta_w ? x : -1;
	return L;
}

/* ---- drawing ----------------------------------------------------------- */

static void draw_row(const TuiApp *app, Canvas *cv, const Layout *L, int y, const DagNode *d,
                     int selected, int context, const unsigned char *more, int tree, int folded,
                     double scale_ms)
{
	const Glyphs *g = cv->g;
	const NodeStats *s = &d->pop[POP_WINDOW];
	int call = d->type == NODE_CALL;
	Role name_role = selected ? ROLE_SELECTED : context ? ROLE_DIM : ROLE_NORMAL;
	if (selected) {
		canvas_put(cv, 0, y, g->pointer, ROLE_SELECTED);
		canvas_fill(cv, 1, y, L->name + L->name_w - 1, 1, ' ', ROLE_SELECTED);
	}
	if (d->crit[POP_WINDOW].share >= 0.10)
		canvas_put(cv, 1, y, g->crit, ROLE_CRIT);
	int x = L->name;
	int end = L->name + L->name_w;
	if (tree)
		x += draw_tree_prefix(cv, x, y, d->depth, more, d->edge, name_role);
	else if (d->edge != EDGE_ROOT)
		x += canvas_put(cv, x, y, d->edge == EDGE_PARALLEL ? g->edge_parallel : g->edge_serial,
		                ROLE_DIM);
	if (folded)
		x += canvas_put(cv, x, y, g->collapsed, name_role);
	canvas_text(cv, x, y, end - x, name_role, d->label);

	char buf[64];
	node_tags(d, buf, sizeof buf);
	canvas_text(cv, L->tags, y, 6, ROLE_DIM, buf);
	if (L->calls >= 0) {
		fmt_count(buf, sizeof buf, s->calls);
		canvas_text_right(cv, L->calls + 7, y, 7, ROLE_NORMAL, buf);
	}
	fmt_ms(buf, sizeof buf, s->total.p99, s->total.n, 1);
	canvas_text_right(cv, L->p99 + 7, y, 7, ROLE_NORMAL, buf);

	/* database calls are leaves with a known time (service), not unknown */
	int unknown = call && s->client_wait.n == 0 && s->calls > s->db_calls;
	double q = s->queue.n ? s->queue.p99 : 0;
	double w = (call && s->client_wait.n) ? s->client_wait.p99 : 0;
	double sv = s->service.n ? s->service.p99 : 0;
	if (L->bar >= 0 && s->total.n > 0) {
		int len = scale_ms > 0 ? (int)lround(L->bar_w * s->total.p99 / scale_ms) : 0;
		if (len < 1)
			len = 1;
		if (len > L->bar_w)
			len = L->bar_w;
		int partial = call && !unknown && s->unknown_split > 0;
		if (partial && len > 1)
			len--;
		int used = draw_split_bar(cv, L->bar, y, len, q, w, sv, unknown);
		if (partial)
			canvas_put(cv, L->bar + used, y, g->bar_unknown, ROLE_UNKNOWN);
	}
	char qs[16], ws[16], ss[16];
	fmt_ms(qs, sizeof qs, s->queue.p99, s->queue.n, 1);
	fmt_ms(ws, sizeof ws, s->client_wait.p99, s->client_wait.n, call && s->calls > s->db_calls);
	fmt_ms(ss, sizeof ss, s->service.p99, s->service.n, 1);
	if (unknown)
		snprintf(ss, sizeof ss, "?");
	int nx = L->nums;
	canvas_put(cv, nx, y, 'q', ROLE_QUEUE);
	canvas_text_right(cv, nx + 7, y, 6, ROLE_NORMAL, qs);
	canvas_put(cv, nx + 8, y, 'w', ROLE_WAIT);
	canvas_text_right(cv, nx + 15, y, 6, ROLE_NORMAL, ws);
	canvas_put(cv, nx + 16, y, 's', ROLE_SERVICE);
	canvas_text_right(cv, nx + 23, y, 6, ROLE_NORMAL, ss);
	if (L->delta >= 0) {
		const NodeStats *b = &d->pop[POP_BASELINE];
		fmt_delta_ms(buf, sizeof buf, s->total.p99, s->total.n, b->total.p99, b->total.n);
		Role r = ROLE_NORMAL;
		if (s->total.n && b->total.n) {
			double dv = s->total.p99 - b->total.p99;
			if (dv > 1 && dv > 0.2 * b->total.p99)
				r = ROLE_WARN;
			else if (dv < -1 && -dv > 0.2 * b->total.p99)
				r = ROLE_OK;
		} else {
			r = ROLE_DIM;
		}
		canvas_text_right(cv, L->delta + 8, y, 8, r, buf);
	}
	(void)app;
}

static void dag_draw(View *vv, const TuiApp *app, Canvas *cv, Rect r)
{
	DagView *v = (DagView *)vv;
	const Analysis *a = app->a;
	int baseline = a->pop[POP_BASELINE].present;
	Layout L = layout(r.w, baseline);
	int y = r.y;
	/* column headings */
	canvas_text(cv, L.name, y, L.name_w, ROLE_HEADING, "node");
	canvas_text(cv, L.tags, y, 6, ROLE_HEADING, "tags");
	if (L.calls >= 0)
		canvas_text_right(cv, L.calls + 7, y, 7, ROLE_HEADING, "calls");
	canvas_text_right(cv, L.p99 + 7, y, 7, ROLE_HEADING, "p99 ms");
	if (L.bar >= 0)
		canvas_text(cv, L.bar, y, L.bar_w, ROLE_HEADING, "split of p99");
	canvas_text_right(cv, L.nums + 7, y, 7, ROLE_HEADING, "queue");
	canvas_text_right(cv, L.nums + 15, y, 7, ROLE_HEADING, "wait");
	canvas_text_right(cv, L.nums + 23, y, 7, ROLE_HEADING, "svc");
	if (L.delta >= 0)
		canvas_text_right(cv, L.delta + 8, y, 8, ROLE_HEADING, "vs base");
	y++;
	int list_h = r.h - 2; /* headings and the legend line */
	vv->rows = list_h;
	Rows rows;
	rows_build(v, app, &rows);
	int sel = row_of(&rows, app->sel_node);
	if (sel >= 0) {
		if (sel < v->top)
			v->top = sel;
		if (sel >= v->top + list_h)
			v->top = sel - list_h + 1;
	}
	if (v->top > rows.n - list_h)
		v->top = rows.n - list_h;
	if (v->top < 0)
		v->top = 0;
	/* the widest bar belongs to the largest p99 shown */
	double scale = 0;
	for (int i = 0; i < rows.n; i++) {
		const Quant *t = &a->nodes[rows.id[i]].pop[0].total;
		if (t->n && t->p99 > scale)
			scale = t->p99;
	}
	/* tree continuation flags: more[k] = the node at depth k on the
	 * current path has a later visible sibling */
	int maxd = 1;
	for (int i = 0; i < a->n_nodes; i++)
		if (a->nodes[i].depth + 1 > maxd)
			maxd = a->nodes[i].depth + 1;
	unsigned char *more = xcalloc((size_t)maxd + 1, 1);
	int tree = v->sort == SORT_TREE;
	for (int i = 0; i < rows.n; i++) {
		const DagNode *d = &a->nodes[rows.id[i]];
		if (tree) {
			int has_more = 0;
			for (int k = i + 1; k < rows.n; k++) {
				const DagNode *e = &a->nodes[rows.id[k]];
				if (e->depth < d->depth)
					break;
				if (e->depth == d->depth && e->parent == d->parent) {
					has_more = 1;
					break;
				}
			}
			more[d->depth] = (unsigned char)has_more;
		}
		if (i < v->top || i >= v->top + list_h)
			continue;
		int folded = tree && is_folded(v, a, d->id) && d->n_children > 0;
		draw_row(app, cv, &L, y + (i - v->top), d, d->id == app->sel_node, rows.context[i], more,
		         tree, folded, scale);
	}
	free(more);
	if (rows.n == 0)
		canvas_text(cv, 2, y, r.w - 4, ROLE_DIM,
		            app->filter[0] ? "no node matches the filter (Esc clears it)" : "no nodes");
	/* legend and state line */
	int ly = r.y + r.h - 1;
	const Glyphs *g = cv->g;
	int x = 0;
	x += canvas_put(cv, x, ly, g->edge_serial, ROLE_DIM);
	x += canvas_text(cv, x, ly, -1, ROLE_DIM, " serial ");
	x += canvas_put(cv, x, ly, g->edge_parallel, ROLE_DIM);
	x += canvas_text(cv, x, ly, -1, ROLE_DIM, " parallel ");
	x += canvas_put(cv, x, ly, g->crit, ROLE_CRIT);
	x += canvas_text(cv, x, ly, -1, ROLE_DIM, " tail owner  ");
	char st[200];
	if (app->filter[0])
		snprintf(st, sizeof st, "sort %s  filter \"%s\"", sort_names[v->sort], app->filter);
	else
		snprintf(st, sizeof st, "sort %s", sort_names[v->sort]);
	int stw = (int)strlen(st);
	int room = r.w - x - stw - 2;
	if (room >= 20)
		draw_split_legend(cv, x, ly, room);
	canvas_text_right(cv, r.w, ly, r.w - x, ROLE_DIM, st);
	draw_scroll_hint(cv, r.w, r.y, v->top, list_h, rows.n);
	rows_free(&rows);
}

static int dag_key(View *vv, TuiApp *app, Action act)
{
	DagView *v = (DagView *)vv;
	const Analysis *a = app->a;
	if (a == NULL || a->n_nodes == 0)
		return REACT_NONE;
	if (act == ACT_SORT) {
		v->sort = (v->sort + 1) % SORT_COUNT;
		return REACT_REDRAW;
	}
	Rows rows;
	rows_build(v, app, &rows);
	int react = REACT_NONE;
	int sel = row_of(&rows, app->sel_node);
	int page = vv->rows > 1 ? vv->rows - 1 : 1;
	int target = sel < 0 ? 0 : sel;
	const DagNode *d = &a->nodes[app->sel_node];
	if (list_nav(act, &target, rows.n, page)) {
		if (rows.n > 0) {
			app_select_node(app, rows.id[target]);
			react = REACT_REDRAW;
		}
		rows_free(&rows);
		return react;
	}
	switch (act) {
	case ACT_OPEN:
		if (sel >= 0) {
			app_open_pane(app, PANE_NODE);
			react = REACT_REDRAW;
		}
		break;
	case ACT_LEFT:
		/* fold an open subtree, else go to the parent */
		if (v->sort == SORT_TREE && d->n_children > 0 && !is_folded(v, a, d->id)) {
			set_folded(v, a, d->id, 1);
			react = REACT_REDRAW;
		} else if (d->parent >= 0) {
			app_select_node(app, d->parent);
			react = REACT_REDRAW;
		}
		break;
	case ACT_RIGHT:
		if (v->sort == SORT_TREE && is_folded(v, a, d->id)) {
			set_folded(v, a, d->id, 0);
			react = REACT_REDRAW;
		} else if (d->n_children > 0) {
			app_select_node(app, d->children[0]);
			react = REACT_REDRAW;
		}
		break;
	default: break;
	}
	rows_free(&rows);
	return react;
}

static void dag_resize(View *vv, int w, int h)
{
	(void)w;
	vv->rows = h - 2;
}

static void dag_free(View *vv)
{
	DagView *v = (DagView *)vv;
	for (int i = 0; i < v->n_folded; i++)
		free(v->folded[i]);
	free(v->folded);
	free(v);
}

static const PaneKey dag_keys[] = {
	{ACT_OPEN, "node detail of the marked node"},
	{ACT_LEFT, "fold the marked node's subtree"},
	{ACT_RIGHT, "unfold it"},
	{ACT_SORT, "order: tree, p99, change against the baseline, calls"},
	{ACT_NONE, NULL},
};

static const ViewOps dag_ops = {"DAG", dag_draw, dag_key, dag_resize, dag_free, dag_keys};

View *view_dag_new(void)
{
	DagView *v = xcalloc(1, sizeof *v);
	v->base.ops = &dag_ops;
	return &v->base;
}
