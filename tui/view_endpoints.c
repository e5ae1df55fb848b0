/*
 * view_endpoints.c - the Endpoints pane: every endpoint of the window and
 * baseline, ranked as `tailtriage endpoints` ranks them (significant rise
 * of the objective's percentile, then traffic), one row each, like a
 * resource list of k9s. Enter opens the marked endpoint's DAG; the
 * endpoint on screen is marked.
 *
 * The list comes with each exact analysis (live.h, LiveResult.endpoints),
 * so it follows the data as the DAG does.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "endpoints.h"
#include "fmt.h"
#include "view.h"

typedef struct EndpointsView {
	View base;
	int cursor;
	int top;
	int placed;               /* the cursor was put on the endpoint on screen */
} EndpointsView;

/* "123.4" or "-" (no requests), "inf" for an unbounded end. */
static void ms_or(char *out, size_t sz, double v, int64_t n)
{
	if (n == 0 || isnan(v))
		snprintf(out, sz, "-");
	else if (isinf(v))
		snprintf(out, sz, "inf");
	else
		snprintf(out, sz, "%.1f", v);
}

static void ep_draw(View *vv, const TuiApp *app, Canvas *cv, Rect r)
{
	EndpointsView *v = (EndpointsView *)vv;
	const EndpointList *l = app->endpoints;
	vv->rows = r.h;
	int y = r.y;
	char buf[512];
	if (l == NULL) {
		canvas_text(cv, 1, y, r.w - 2, ROLE_DIM, "listing the endpoints...");
		return;
	}
	int cur = app_endpoint_index(app);
	if (!v->placed && cur >= 0) {
		v->cursor = cur;
		v->placed = 1;
	}
	snprintf(buf, sizeof buf, "%d endpoint%s, ranked by %s", l->n, l->n == 1 ? "" : "s",
	         l->has_baseline ? "significant rise of the percentile, then traffic" : "traffic");
	canvas_text(cv, 1, y++, r.w - 2, ROLE_TITLE, buf);
	/* columns: rank, name, then the figures right-aligned */
	int base = l->has_baseline;
	const int wn = 7, wp = 8, wr = 14, we = 7;
	int figures = wn + wp + wp + (base ? wn + wp + wr : 0) + we;
	int name_w = r.w - 6 - figures - (base ? 7 : 5);
	if (name_w < 12)
		name_w = 12;
	int x = 5 + name_w;
	canvas_text(cv, 1, y, 3, ROLE_HEADING, "#");
	canvas_text(cv, 5, y, name_w, ROLE_HEADING, "endpoint");
	canvas_text_right(cv, x + wn, y, wn, ROLE_HEADING, "req");
	canvas_text_right(cv, x + wn + 1 + wp, y, wp, ROLE_HEADING, "p50");
	canvas_text_right(cv, x + wn + 2 + 2 * wp, y, wp, ROLE_HEADING, "p99");
	int xb = x + wn + 3 + 2 * wp;
	if (base) {
		canvas_text_right(cv, xb + wn, y, wn, ROLE_HEADING, "base");
		canvas_text_right(cv, xb + wn + 1 + wp, y, wp, ROLE_HEADING, "base p99");
		canvas_text_right(cv, xb + wn + 2 + wp + wr, y, wr, ROLE_HEADING, "rise");
		xb += wn + 3 + wp + wr;
	}
	canvas_text_right(cv, xb + we, y, we, ROLE_HEADING, "err %");
	y++;
	int list_h = r.h - 3;
	if (v->cursor >= l->n)
		v->cursor = l->n ? l->n - 1 : 0;
	if (v->cursor < v->top)
		v->top = v->cursor;
	if (v->cursor >= v->top + list_h)
		v->top = v->cursor - list_h + 1;
	if (v->top < 0)
		v->top = 0;
	const Glyphs *g = cv->g;
	for (int i = v->top; i < l->n && i < v->top + list_h; i++, y++) {
		const Endpoint *e = &l->v[i];
		const EndpointPop *w = &e->pop[POP_WINDOW], *b = &e->pop[POP_BASELINE];
		int sel = i == v->cursor, open = i == cur;
		Role role = sel ? ROLE_SELECTED : open ? ROLE_TITLE : ROLE_NORMAL;
		if (sel) {
			canvas_put(cv, 0, y, g->pointer, ROLE_SELECTED);
			canvas_fill(cv, 1, y, name_w + 4, 1, ' ', ROLE_SELECTED);
		}
		snprintf(buf, sizeof buf, "%d%s", i + 1, open ? "*" : "");
		canvas_text(cv, 1, y, 3, role, buf);
		canvas_text(cv, 5, y, name_w, role, e->name);
		fmt_count(buf, sizeof buf, w->requests);
		canvas_text_right(cv, x + wn, y, wn, ROLE_NORMAL, buf);
		ms_or(buf, sizeof buf, w->q.p50, w->requests);
		canvas_text_right(cv, x + wn + 1 + wp, y, wp, ROLE_NORMAL, buf);
		ms_or(buf, sizeof buf, w->q.p99, w->requests);
		canvas_text_right(cv, x + wn + 2 + 2 * wp, y, wp, ROLE_NORMAL, buf);
		int xc = x + wn + 3 + 2 * wp;
		if (base) {
			fmt_count(buf, sizeof buf, b->requests);
			canvas_text_right(cv, xc + wn, y, wn, ROLE_DIM, buf);
			ms_or(buf, sizeof buf, b->q.p99, b->requests);
			canvas_text_right(cv, xc + wn + 1 + wp, y, wp, ROLE_DIM, buf);
			Role rr = ROLE_DIM;
			if (!e->has_change) {
				snprintf(buf, sizeof buf, "-");
			} else if (e->rose == EP_ROSE) {
				/* rose: the percentile judged and the rise, marked */
				snprintf(buf, sizeof buf, "p%g %+.0f ms", e->basis, e->rise_ms);
				rr = ROLE_WARN;
			} else {
				snprintf(buf, sizeof buf, "%s",
				         e->rose == EP_STEADY ? "steady" : "cannot tell");
			}
			canvas_text_right(cv, xc + wn + 2 + wp + wr, y, wr, rr, buf);
			xc += wn + 3 + wp + wr;
		}
		if (w->requests)
			snprintf(buf, sizeof buf, "%.1f", 100.0 * (double)w->errors / (double)w->requests);
		else
			snprintf(buf, sizeof buf, "-");
		canvas_text_right(cv, xc + we, y, we, w->errors ? ROLE_WARN : ROLE_NORMAL, buf);
	}
	if (l->n == 0)
		canvas_text(cv, 2, y, r.w - 4, ROLE_DIM, "no request in the window");
	int ly = r.y + r.h - 1;
	canvas_text(cv, 1, ly, r.w - 2, ROLE_DIM,
	            "Enter: open its DAG   { }: previous / next endpoint from any pane   * on screen");
	draw_scroll_hint(cv, r.w, r.y + 1, v->top, list_h, l->n);
}

static int ep_key(View *vv, TuiApp *app, Action act)
{
	EndpointsView *v = (EndpointsView *)vv;
	const EndpointList *l = app->endpoints;
	int n = l ? l->n : 0;
	int page = vv->rows > 4 ? vv->rows - 4 : 1;
	if (list_nav(act, &v->cursor, n, page))
		return REACT_REDRAW;
	if (act == ACT_OPEN && v->cursor >= 0 && v->cursor < n) {
		int react = app_switch_endpoint(app, v->cursor);
		app_open_pane(app, PANE_DAG);
		return react | REACT_REDRAW;
	}
	return REACT_NONE;
}

static void ep_free(View *vv)
{
	free(vv);
}

static const PaneKey ep_keys[] = {
	{ACT_OPEN, "open the marked endpoint's DAG"},
	{ACT_NONE, NULL},
};

static const ViewOps ep_ops = {"Endpoints", ep_draw, ep_key, NULL, ep_free, ep_keys};

View *view_endpoints_new(void)
{
	EndpointsView *v = xcalloc(1, sizeof *v);
	v->base.ops = &ep_ops;
	return &v->base;
}
