/*
 * view_owner.c - tail ownership: which nodes own the critical path of the
 * slow requests, split into queue, client wait and service, and how the
 * share moved against the baseline's slow requests.
 *
 * The ms columns are the mean critical-path time per slow request, so they
 * add up along a request; shares add up to 100 % over all nodes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "view.h"

enum { OSORT_SHARE, OSORT_CHANGE, OSORT_COUNT };

typedef struct OwnerView {
	View base;
	int cursor;               /* selected row */
	int top;
	int sort;
} OwnerView;

static const Analysis *g_a;
static int g_sort;

static double owner_value(const DagNode *d, int sort)
{
	if (sort == OSORT_CHANGE)
		return d->crit[0].share - d->crit[1].share;
	return d->crit[0].share;
}

static int cmp_owner(const void *x, const void *y)
{
	const DagNode *a = &g_a->nodes[*(const int *)x], *b = &g_a->nodes[*(const int *)y];
	double va = owner_value(a, g_sort), vb = owner_value(b, g_sort);
	if (va != vb)
		return va < vb ? 1 : -1;
	return a->id - b->id;
}

/* Nodes owning at least 0.5 % of either population's critical path. */
static int owner_rows(const OwnerView *v, const Analysis *a, int **out)
{
	int *ids = xmalloc((size_t)(a->n_nodes ? a->n_nodes : 1) * sizeof *ids);
	int n = 0;
	for (int i = 0; i < a->n_nodes; i++)
		if (a->nodes[i].crit[0].share >= 0.005 || a->nodes[i].crit[1].share >= 0.005)
			ids[n++] = i;
	g_a = a;
	g_sort = v->sort;
	qsort(ids, (size_t)n, sizeof *ids, cmp_owner);
	*out = ids;
	return n;
}

static void owner_draw(View *vv, const TuiApp *app, Canvas *cv, Rect r)
{
	OwnerView *v = (OwnerView *)vv;
	const Analysis *a = app->a;
	const PopSummary *w = &a->pop[POP_WINDOW], *b = &a->pop[POP_BASELINE];
	int baseline = b->present;
	char buf[256], t1[32], t2[32];
	int y = r.y;
	vv->rows = r.h;
	if (a->approx) {
		/* the aggregates hold no traces: the critical path needs the spans */
		canvas_text(cv, 1, y, r.w - 2, ROLE_TITLE, "critical path of the slow requests");
		canvas_text(cv, 2, y + 2, r.w - 4, ROLE_DIM,
		            "needs the exact analysis, which reads the spans: computing...");
		return;
	}

	fmt_count(t1, sizeof t1, w->slow_requests);
	fmt_ms(t2, sizeof t2, w->slow_threshold_ms, w->slow_requests, 1);
	int above = a->objective_ms > 0 && w->slow_threshold_ms == a->objective_ms;
	snprintf(buf, sizeof buf, "critical path of %s slow request%s%s (ingress %s %s ms)", t1,
	         w->slow_requests == 1 ? "" : "s",
	         w->slow_requests < ANALYSIS_THIN_SLOW ? " (thin)" : "", above ? ">" : ">=", t2);
	int x = canvas_text(cv, 1, y, r.w - 2, ROLE_TITLE, buf);
	if (baseline) {
		fmt_count(t1, sizeof t1, b->slow_requests);
		fmt_ms(t2, sizeof t2, b->slow_threshold_ms, b->slow_requests, 1);
		snprintf(buf, sizeof buf, "  baseline: %s slow%s (>= %s ms)", t1,
		         b->slow_requests < ANALYSIS_THIN_SLOW ? " (thin)" : "", t2);
		canvas_text(cv, 1 + x, y, r.w - x - 2, ROLE_DIM, buf);
	}
	y++;
	if (w->tail_pulled && y < r.y + r.h) {
		/* the window's slow requests are a pulled slowest set, not the
		 * sample's: say so before any share */
		char of[48] = "";
		if (w->tail_of > 0)
			snprintf(of, sizeof of, " of %lld", (long long)w->tail_of);
		snprintf(buf, sizeof buf, "the %lld slowest%s, pulled from the trace back end; the other"
		         " panes: the sample", (long long)w->slow_requests, of);
		canvas_text(cv, 2, y++, r.w - 4, ROLE_DIM, buf);
	}

	int name_w = r.w >= 96 ? 26 : 16;
	int base_cols = baseline ? 18 : 0;
	int bar_w = r.w - (2 + name_w + 1 + 7 + 1 + 1 + 3 * 9 + base_cols + 1);
	if (bar_w > 40)
		bar_w = 40;
	if (bar_w < 4)
		bar_w = 0;
	int xs = 2 + name_w + 1, xbar = xs + 8, xq = xbar + bar_w + (bar_w ? 1 : 0);
	int xw = xq + 9, xsv = xw + 9, xb = xsv + 9;
	(void)xb;
	canvas_text(cv, 2, y, name_w, ROLE_HEADING, "node");
	canvas_text_right(cv, xs + 7, y, 7, ROLE_HEADING, "share");
	if (bar_w)
		canvas_text(cv, xbar, y, bar_w, ROLE_HEADING, "split");
	canvas_text_right(cv, xq + 8, y, 8, ROLE_HEADING, "queue");
	canvas_text_right(cv, xw + 8, y, 8, ROLE_HEADING, "wait");
	canvas_text_right(cv, xsv + 8, y, 8, ROLE_HEADING, "service");
	if (baseline) {
		canvas_text_right(cv, xb + 8, y, 8, ROLE_HEADING, "base");
		canvas_text_right(cv, xb + 17, y, 8, ROLE_HEADING, "change");
	}
	y++;

	int *ids;
	int n = owner_rows(v, a, &ids);
	int list_h = r.h - 3;
	if (v->cursor >= n)
		v->cursor = n ? n - 1 : 0;
	if (v->cursor < v->top)
		v->top = v->cursor;
	if (v->cursor >= v->top + list_h)
		v->top = v->cursor - list_h + 1;
	if (v->top < 0)
		v->top = 0;
	double slow = w->slow_requests > 0 ? (double)w->slow_requests : 1;
	const Glyphs *g = cv->g;
	for (int i = v->top; i < n && i < v->top + list_h; i++, y++) {
		const DagNode *d = &a->nodes[ids[i]];
		const CritShare *c = &d->crit[POP_WINDOW];
		int sel = i == v->cursor;
		if (sel) {
			canvas_put(cv, 0, y, g->pointer, ROLE_SELECTED);
			canvas_fill(cv, 1, y, name_w + 1, 1, ' ', ROLE_SELECTED);
		}
		canvas_text(cv, 2, y, name_w, sel ? ROLE_SELECTED : ROLE_NORMAL, d->label);
		fmt_pct(t1, sizeof t1, c->share);
		canvas_text_right(cv, xs + 7, y, 7, ROLE_NORMAL, t1);
		if (bar_w) {
			int len = (int)lround(bar_w * c->share);
			if (len < 1 && c->share > 0)
				len = 1;
			draw_split_bar(cv, xbar, y, len, c->ms[COMP_QUEUE], c->ms[COMP_WAIT],
			               c->ms[COMP_SERVICE], 0);
		}
		snprintf(t1, sizeof t1, "%.1f", c->ms[COMP_QUEUE] / slow);
		canvas_text_right(cv, xq + 8, y, 8, ROLE_NORMAL, t1);
		snprintf(t1, sizeof t1, "%.1f", c->ms[COMP_WAIT] / slow);
		canvas_text_right(cv, xw + 8, y, 8, ROLE_NORMAL, t1);
		snprintf(t1, sizeof t1, "%.1f", c->ms[COMP_SERVICE] / slow);
		canvas_text_right(cv, xsv + 8, y, 8, ROLE_NORMAL, t1);
		if (baseline) {
			fmt_pct(t1, sizeof t1, d->crit[POP_BASELINE].share);
			canvas_text_right(cv, xb + 8, y, 8, ROLE_DIM, t1);
			double dp = 100 * (c->share - d->crit[POP_BASELINE].share);
			snprintf(t1, sizeof t1, "%+.1f pt", dp);
			canvas_text_right(cv, xb + 17, y, 8, dp >= 5 ? ROLE_WARN : ROLE_NORMAL, t1);
		}
	}
	if (n == 0)
		canvas_text(cv, 2, y, r.w - 4, ROLE_DIM, "no slow requests in the window");
	else if (n < a->n_nodes && y < r.y + r.h - 1 && v->top + list_h >= n) {
		/* the nodes left out, counted */
		int rest = a->n_nodes - n;
		snprintf(buf, sizeof buf, "%d more node%s under 0.5 %% of the tail, window and baseline",
		         rest,
		         rest == 1 ? "" : "s");
		canvas_text(cv, 2, y, r.w - 4, ROLE_DIM, buf);
	}
	int ly = r.y + r.h - 1;
	snprintf(buf, sizeof buf, "ms: mean per slow request  sort %s",
	         v->sort == OSORT_SHARE ? "share" : "change");
	int bl = (int)strlen(buf);
	x = draw_split_legend(cv, 0, ly, r.w - bl - 1);
	canvas_text_right(cv, r.w, ly, r.w - x, ROLE_DIM, buf);
	draw_scroll_hint(cv, r.w, r.y + 1, v->top, list_h, n);
	free(ids);
}

static int owner_key(View *vv, TuiApp *app, Action act)
{
	OwnerView *v = (OwnerView *)vv;
	const Analysis *a = app->a;
	if (a == NULL)
		return REACT_NONE;
	int *ids;
	int n = owner_rows(v, a, &ids);
	int react = REACT_REDRAW;
	int page = vv->rows > 4 ? vv->rows - 4 : 1;
	if (list_nav(act, &v->cursor, n, page)) {
		free(ids);
		return react;
	}
	switch (act) {
	case ACT_SORT: v->sort = (v->sort + 1) % OSORT_COUNT; break;
	case ACT_OPEN:
		if (v->cursor >= 0 && v->cursor < n) {
			app_select_node(app, ids[v->cursor]);
			app_open_pane(app, PANE_NODE);
		}
		break;
	default: react = REACT_NONE;
	}
	if (v->cursor >= n)
		v->cursor = n - 1;
	if (v->cursor < 0)
		v->cursor = 0;
	free(ids);
	return react;
}

static void owner_free(View *vv)
{
	free(vv);
}

static const PaneKey owner_keys[] = {
	{ACT_OPEN, "node detail of the marked node"},
	{ACT_SORT, "order: share of the tail, change against the baseline"},
	{ACT_NONE, NULL},
};

static const ViewOps owner_ops = {"Tail ownership", owner_draw, owner_key, NULL, owner_free,
                                  owner_keys};

View *view_owner_new(void)
{
	OwnerView *v = xcalloc(1, sizeof *v);
	v->base.ops = &owner_ops;
	return &v->base;
}
