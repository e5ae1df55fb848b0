/*
 * view_trace.c - the waterfall of one trace: spans as bars on a time axis,
 * coloured by split (a paired client span shows its client wait with the
 * server's part as service; a database call is all service; another
 * unpaired one is unknown; queue time before a span is drawn in front of
 * it), the critical path marked in the gutter, and the selected span's
 * attributes below.
 *
 * Right zooms in around the selected span, Left zooms out. The selected
 * span's detail (its attributes, then its events with their attributes)
 * scrolls with [ and ] to its last line.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "attrs.h"
#include "fmt.h"
#include "sanitize.h"
#include "view.h"

typedef struct TraceViewState {
	View base;
	char trace_id[33];        /* trace the state belongs to */
	int cursor;
	int top;
	int zoom;                 /* 0: whole trace; each step halves the span */
	int detail;               /* first line of the span detail shown ([ and ]) */
	int detail_for;           /* the span (cursor) detail belongs to */
	int detail_max;           /* last useful value of detail, from the last draw */
} TraceViewState;

static int time_x(int64_t t, int64_t from, int64_t to, int x0, int w)
{
	if (to <= from)
		return x0;
	double f = (double)(t - from) / (double)(to - from);
	return x0 + (int)floor(f * w);
}

static void draw_span_bar(Canvas *cv, const TraceView *tv, int idx, int y, int64_t from,
                          int64_t to, int bx, int bw)
{
	const Glyphs *g = cv->g;
	const TraceSpan *s = &tv->spans[idx];
	int x1 = time_x(s->start_ns, from, to, bx, bw);
	int x2 = time_x(s->end_ns, from, to, bx, bw);
	if (x2 <= x1)
		x2 = x1 + 1;
	if (s->has_queue && s->queue_ms > 0) {
		int64_t qs = s->start_ns - (int64_t)(s->queue_ms * 1e6);
		int q1 = time_x(qs, from, to, bx, bw);
		if (q1 >= x1)
			q1 = x1 - 1;
		for (int x = q1; x < x1; x++)
			if (x >= bx && x < bx + bw)
				canvas_put(cv, x, y, g->bar_queue, ROLE_QUEUE);
	}
	uint32_t glyph = g->bar_service;
	Role role = ROLE_SERVICE;
	if (s->kind == SPAN_KIND_CLIENT && !s->db_call) {
		glyph = s->paired ? g->bar_wait : g->bar_unknown;
		role = s->paired ? ROLE_WAIT : ROLE_UNKNOWN;
	}
	for (int x = x1; x < x2; x++)
		if (x >= bx && x < bx + bw)
			canvas_put(cv, x, y, glyph, role);
	if (s->kind == SPAN_KIND_CLIENT && s->paired) {
		/* the server part of a paired client span */
		for (int k = idx + 1; k < tv->n_spans && tv->spans[k].depth > s->depth; k++) {
			const TraceSpan *c = &tv->spans[k];
			if (c->parent != idx || c->kind != SPAN_KIND_SERVER)
				continue;
			int c1 = time_x(c->start_ns, from, to, bx, bw);
			int c2 = time_x(c->end_ns, from, to, bx, bw);
			if (c1 < x1)
				c1 = x1;
			if (c2 > x2)
				c2 = x2;
			for (int x = c1; x < c2; x++)
				if (x >= bx && x < bx + bw)
					canvas_put(cv, x, y, g->bar_service, ROLE_SERVICE);
			break;
		}
	}
	char d[32], buf[40];
	fmt_ms(d, sizeof d, (double)(s->end_ns - s->start_ns) / 1e6, 1, 1);
	int lx = x2 > bx ? x2 : bx;
	int len = (int)strlen(d) + 1;
	int qx = x1;
	if (s->has_queue && s->queue_ms > 0)
		qx = time_x(s->start_ns - (int64_t)(s->queue_ms * 1e6), from, to, bx, bw);
	if (lx + len <= bx + bw) {
		snprintf(buf, sizeof buf, " %s", d);
		canvas_text(cv, lx, y, len, ROLE_DIM, buf);
	} else if (qx - len >= bx) {
		snprintf(buf, sizeof buf, "%s ", d);
		canvas_text(cv, qx - len, y, len, ROLE_DIM, buf);
	}
}

/* One line of a span's detail: an attribute (key = val), an event's name
 * (event set) or one of the event's attributes (indented). */
typedef struct DetailLine {
	char key[192];            /* an event's "name at +t ms" fits whole */
	char val[256];
	int event;
	int indent;
} DetailLine;

static DetailLine *add_line(DetailLine **v, int *n)
{
	*v = xrealloc(*v, (size_t)(*n + 1) * sizeof **v);
	DetailLine *l = &(*v)[(*n)++];
	memset(l, 0, sizeof *l);
	return l;
}

/* Every attribute of span s, then every event with its time from the trace
 * start and its attributes. Returns the count; *out is malloc'd. */
static int detail_lines(const TraceSpan *s, int64_t trace_start, DetailLine **out)
{
	DetailLine *v = NULL;
	int n = 0;
	size_t pos = 0;
	char key[128], val[256];
	while (attrs_next(s->attrs_json, &pos, key, sizeof key, val, sizeof val)) {
		DetailLine *l = add_line(&v, &n);
		snprintf(l->key, sizeof l->key, "%s", key);
		snprintf(l->val, sizeof l->val, "%s", val);
	}
	size_t epos = 0;
	static char ev[8192], big[4096];
	while (attrs_elem_next(s->events_json, &epos, ev, sizeof ev)) {
		char name[100] = "?", at[64] = "", attrs[4096] = "";
		size_t p = 0;
		while (attrs_next(ev, &p, key, sizeof key, big, sizeof big)) {
			if (strcmp(key, "name") == 0) {
				snprintf(name, sizeof name, "%.99s", big);
			} else if (strcmp(key, "time_ns") == 0) {
				char d[32];
				double ms = (strtod(big, NULL) - (double)trace_start) / 1e6;
				fmt_ms(d, sizeof d, ms, 1, 1);
				snprintf(at, sizeof at, " at +%s ms", d);
			} else if (strcmp(key, "attrs") == 0) {
				snprintf(attrs, sizeof attrs, "%s", big);
			}
		}
		DetailLine *l = add_line(&v, &n);
		l->event = 1;
		snprintf(l->key, sizeof l->key, "%s%s", name, at);
		size_t q = 0;
		while (attrs_next(attrs, &q, key, sizeof key, val, sizeof val)) {
			DetailLine *a = add_line(&v, &n);
			a->indent = 2;
			snprintf(a->key, sizeof a->key, "%s", key);
			snprintf(a->val, sizeof a->val, "%s", val);
		}
	}
	*out = v;
	return n;
}

/* 1 when s is a call to a known peer that its own name does not name
 * (an HTTP client's "GET"; "pricing.Quote" names pricing already). */
static int call_unnamed(const TraceSpan *s)
{
	if (s->kind != SPAN_KIND_CLIENT || s->peer == NULL || s->peer[0] == '\0')
		return 0;
	size_t n = strlen(s->peer);
	for (const char *p = s->name; *p; p++)
		if (strncasecmp(p, s->peer, n) == 0)
			return 0;
	return 1;
}

static void draw_attrs(Canvas *cv, const TraceView *tv, int idx, int y, int h, int w, int *detail,
                       int *detail_max)
{
	const Glyphs *g = cv->g;
	const TraceSpan *s = &tv->spans[idx];
	char buf[320], d[32], st[32];
	int x = 1, y_head = y;
	for (int i = 0; i < w; i++)
		canvas_put(cv, i, y, g->hline, ROLE_DIM);
	x += canvas_text(cv, x, y, -1, ROLE_HEADING, " selected ");
	x += canvas_text(cv, x, y, w / 2, ROLE_TITLE, s->name);
	fmt_ms(d, sizeof d, (double)(s->end_ns - s->start_ns) / 1e6, 1, 1);
	fmt_ms(st, sizeof st, (double)(s->start_ns - tv->start_ns) / 1e6, 1, 1);
	char to[96] = "";
	if (call_unnamed(s))
		snprintf(to, sizeof to, " calling %.80s", s->peer);
	snprintf(buf, sizeof buf, " %s in %s%s, +%s ms, %s ms ", span_kind_name(s->kind),
	         s->service && s->service[0] ? s->service : "?", to, st, d);
	canvas_text(cv, x, y, w - x - 1, ROLE_NORMAL, buf);
	y++;
	h--;
	if (h <= 0)
		return;
	x = 2;
	if (s->kind == SPAN_KIND_CLIENT) {
		Role sr = s->paired ? ROLE_WAIT : ROLE_UNKNOWN;
		if (s->paired) {
			fmt_ms(d, sizeof d, s->client_wait_ms, 1, 1);
			snprintf(buf, sizeof buf, "client wait %s ms  ", d);
		} else if (s->db_call) {
			snprintf(buf, sizeof buf, "database call: its client time is the service  ");
			sr = ROLE_SERVICE;
		} else {
			snprintf(buf, sizeof buf, "no server span: split unknown  ");
		}
		x += canvas_text(cv, x, y, w - x, sr, buf);
	}
	if (s->has_queue) {
		fmt_ms(d, sizeof d, s->queue_ms, 1, 1);
		snprintf(buf, sizeof buf, "queue %s ms  ", d);
		x += canvas_text(cv, x, y, w - x, ROLE_QUEUE, buf);
	}
	if (s->on_critical_path) {
		x += canvas_put(cv, x, y, g->crit, ROLE_CRIT);
		fmt_ms(d, sizeof d, s->crit_ms, 1, 1);
		snprintf(buf, sizeof buf, " %s ms on the critical path  ", d);
		x += canvas_text(cv, x, y, w - x, ROLE_CRIT, buf);
	}
	if (s->status_code == 2)
		x += canvas_text(cv, x, y, w - x, ROLE_BREACH, "status error  ");
	if (s->orphan)
		x += canvas_text(cv, x, y, w - x, ROLE_WARN, "parent missing  ");
	snprintf(buf, sizeof buf, "span %s", s->span_id);
	canvas_text(cv, x, y, w - x, ROLE_DIM, buf);
	y++;
	h--;
	/* attributes, then events with theirs: one list of lines, scrolled */
	DetailLine *lines = NULL;
	int n = detail_lines(s, tv->start_ns, &lines);
	if (n == 0) {
		if (h > 0)
			canvas_text(cv, 2, y, w - 3, ROLE_DIM, "no attributes or events");
		*detail_max = 0;
		free(lines);
		return;
	}
	*detail_max = n > h ? n - h : 0;
	if (*detail > *detail_max)
		*detail = *detail_max;
	for (int i = *detail; i < n && i < *detail + h; i++, y++) {
		const DetailLine *l = &lines[i];
		int kx = 2 + l->indent;
		if (l->event) {
			kx += canvas_text(cv, kx, y, 6, ROLE_HEADING, "event ");
			canvas_text(cv, kx, y, w - kx - 1, ROLE_TITLE, l->key);
			continue;
		}
		kx += canvas_text(cv, kx, y, 30, ROLE_KEY, l->key);
		kx += canvas_text(cv, kx, y, 3, ROLE_DIM, " = ");
		canvas_text(cv, kx, y, w - kx - 1, ROLE_NORMAL, l->val);
	}
	if (n > h) {
		/* where we are, and how to see the rest */
		snprintf(buf, sizeof buf, " %d-%d/%d [ ] ", *detail + 1,
		         *detail + h < n ? *detail + h : n, n);
		canvas_text_right(cv, w - 1, y_head, 24, ROLE_DIM, buf);
	}
	free(lines);
}

/* A new trace resets the selection, zoom and scroll. Called from draw and
 * key, whichever sees the new trace first. */
static void sync_trace(TraceViewState *v, const TraceView *tv)
{
	if (strcmp(v->trace_id, tv->trace_id) != 0) {
		snprintf(v->trace_id, sizeof v->trace_id, "%s", tv->trace_id);
		v->cursor = v->top = v->zoom = 0;
	}
}

static void trace_draw(View *vv, const TuiApp *app, Canvas *cv, Rect r)
{
	TraceViewState *v = (TraceViewState *)vv;
	const TraceView *tv = app->trace;
	const Glyphs *g = cv->g;
	vv->rows = r.h;
	if (tv == NULL || tv->n_spans == 0) {
		canvas_text(cv, 1, r.y, r.w - 2, ROLE_DIM,
		            "no trace loaded: pick a slowest trace in the node pane and press Enter");
		return;
	}
	sync_trace(v, tv);
	if (v->cursor >= tv->n_spans)
		v->cursor = tv->n_spans - 1;
	char buf[256], d[32];
	int y = r.y;
	fmt_ms(d, sizeof d, (double)(tv->end_ns - tv->start_ns) / 1e6, 1, 1);
	int crit = 0;
	for (int i = 0; i < tv->n_spans; i++)
		crit += tv->spans[i].on_critical_path;
	/* a request that queued before its root span opened: its total (as
	 * the node pane's slowest traces give it) is the queue plus the spans
	 * the axis shows, and the header says both */
	char tot[160] = "";
	const TraceSpan *root = &tv->spans[0];
	if (root->parent < 0 && root->has_queue && root->queue_ms > 0) {
		char q[32], all[32];
		fmt_ms(q, sizeof q, root->queue_ms, 1, 1);
		fmt_ms(all, sizeof all, (double)(tv->end_ns - tv->start_ns) / 1e6 + root->queue_ms, 1, 1);
		snprintf(tot, sizeof tot, "%s ms = %s queue + %s spans", all, q, d);
	} else {
		snprintf(tot, sizeof tot, "%s ms", d);
	}
	const char *cls = tv->wclass && tv->wclass[0] ? tv->wclass : "?";
	char tail[64];
	snprintf(tail, sizeof tail, " %d on critical path", crit);
	snprintf(buf, sizeof buf, "trace %s  %s  class %s  %d spans ", tv->trace_id, tot, cls,
	         tv->n_spans);
	if (san_width(buf) + 1 + san_width(tail) > r.w - 2) {
		/* the id gives way first (the tab has its start too), then words */
		snprintf(buf, sizeof buf, "trace %.12s%s  %s  %s  %d spans ", tv->trace_id,
		         app->ascii ? "~" : "\u2026", tot, cls, tv->n_spans);
		snprintf(tail, sizeof tail, " %d critical", crit);
	}
	int x = 1 + canvas_text(cv, 1, y, r.w - 2, ROLE_TITLE, buf);
	x += canvas_put(cv, x, y, g->crit, ROLE_CRIT);
	canvas_text(cv, x, y, r.w - x - 1, ROLE_NORMAL, tail);
	y++;

	/* time range shown */
	int64_t from = tv->start_ns, to = tv->end_ns;
	if (to <= from)
		to = from + 1;
	if (v->zoom > 0) {
		int64_t span = (to - from) >> v->zoom;
		if (span < 1000)
			span = 1000;
		const TraceSpan *s = &tv->spans[v->cursor];
		int64_t c = s->start_ns + (s->end_ns - s->start_ns) / 2;
		int64_t f = c - span / 2;
		if (f < from)
			f = from;
		if (f + span > to)
			f = to - span;
		from = f;
		to = f + span;
	}

	int name_w = r.w * 35 / 100;
	if (name_w > 44)
		name_w = 44;
	int bx = 2 + name_w + 1, bw = r.w - bx - 1;
	/* axis: 0 at the trace start */
	canvas_text(cv, 2, y, name_w, ROLE_HEADING, "span");
	int ticks = bw >= 60 ? 5 : 3;
	for (int k = 0; k <= ticks; k++) {
		int64_t t = from + (to - from) * k / ticks;
		int tx = bx + (bw - 1) * k / ticks;
		fmt_ms(d, sizeof d, (double)(t - tv->start_ns) / 1e6, 1, 1);
		snprintf(buf, sizeof buf, "%s%s", d, k == ticks ? " ms" : "");
		canvas_put(cv, tx, y + 1, g->tick, ROLE_DIM);
		int lw = (int)strlen(buf);
		int lx = k == ticks ? tx - lw + 1 : k == 0 ? tx : tx - lw / 2;
		canvas_text(cv, lx, y, lw, ROLE_DIM, buf);
	}
	for (int i = bx; i < bx + bw; i++)
		if (canvas_cell(cv, i, y + 1)->ch == ' ')
			canvas_put(cv, i, y + 1, g->hline, ROLE_DIM);
	y += 2;

	int attr_h = r.h / 3;
	if (attr_h < 3)
		attr_h = 3;
	if (attr_h > 8)
		attr_h = 8;
	int list_h = r.h - 3 - attr_h;
	if (list_h < 1)
		list_h = 1;
	if (v->cursor < v->top)
		v->top = v->cursor;
	if (v->cursor >= v->top + list_h)
		v->top = v->cursor - list_h + 1;
	for (int i = v->top; i < tv->n_spans && i < v->top + list_h; i++, y++) {
		const TraceSpan *s = &tv->spans[i];
		int sel = i == v->cursor;
		if (sel) {
			canvas_put(cv, 0, y, g->pointer, ROLE_SELECTED);
			canvas_fill(cv, 2, y, name_w, 1, ' ', ROLE_SELECTED);
		}
		if (s->on_critical_path)
			canvas_put(cv, 1, y, g->crit, ROLE_CRIT);
		int indent = s->depth > 12 ? 12 : s->depth;
		int nx = 3 + indent;
		Role nr = sel ? ROLE_SELECTED : s->status_code == 2 ? ROLE_BREACH : ROLE_NORMAL;
		if (s->status_code == 2)
			nx += canvas_put(cv, nx, y, g->breach, ROLE_BREACH);
		nx += canvas_text(cv, nx, y, 2 + name_w - nx, nr, s->name);
		if (s->service && s->service[0] && 2 + name_w - nx > 4) {
			nx += canvas_text(cv, nx, y, 1, nr, " ");
			nx += canvas_text(cv, nx, y, 2 + name_w - nx, sel ? ROLE_SELECTED : ROLE_DIM, s->service);
		}
		/* a call its name does not name ("GET", an HTTP client's span):
		 * the caller -> what it calls, so its siblings can be told apart */
		if (call_unnamed(s) && 2 + name_w - nx > 4) {
			nx += canvas_put(cv, nx, y, ' ', nr);
			nx += canvas_put(cv, nx, y, g->arrow, sel ? ROLE_SELECTED : ROLE_DIM);
			nx += canvas_put(cv, nx, y, ' ', nr);
			canvas_text(cv, nx, y, 2 + name_w - nx, nr, s->peer);
		}
		draw_span_bar(cv, tv, i, y, from, to, bx, bw);
	}
	/* zoom and scroll position under the "span" heading */
	buf[0] = '\0';
	if (v->zoom > 0)
		snprintf(buf, sizeof buf, "zoom x%d  ", 1 << v->zoom);
	if (tv->n_spans > list_h) {
		size_t l = strlen(buf);
		int last = v->top + list_h < tv->n_spans ? v->top + list_h : tv->n_spans;
		snprintf(buf + l, sizeof buf - l, "%d-%d/%d", v->top + 1, last, tv->n_spans);
	}
	canvas_text(cv, 2, r.y + 2, name_w, v->zoom ? ROLE_WARN : ROLE_DIM, buf);
	if (v->detail_for != v->cursor) {
		v->detail_for = v->cursor;
		v->detail = 0;
	}
	draw_attrs(cv, tv, v->cursor, r.y + r.h - attr_h, attr_h, r.w, &v->detail, &v->detail_max);
}

static int trace_key(View *vv, TuiApp *app, Action act)
{
	TraceViewState *v = (TraceViewState *)vv;
	const TraceView *tv = app->trace;
	if (tv == NULL || tv->n_spans == 0)
		return REACT_NONE;
	sync_trace(v, tv);
	int page = vv->rows > 8 ? vv->rows / 2 : 1;
	if (list_nav(act, &v->cursor, tv->n_spans, page))
		return REACT_REDRAW;
	switch (act) {
	case ACT_DETAIL_DOWN:
		if (v->detail < v->detail_max)
			v->detail++;
		break;
	case ACT_DETAIL_UP:
		if (v->detail > 0)
			v->detail--;
		break;
	case ACT_RIGHT:
		if (v->zoom < 16)
			v->zoom++;
		break;
	case ACT_LEFT:
		if (v->zoom > 0)
			v->zoom--;
		break;
	default: return REACT_NONE;
	}
	if (v->cursor >= tv->n_spans)
		v->cursor = tv->n_spans - 1;
	if (v->cursor < 0)
		v->cursor = 0;
	return REACT_REDRAW;
}

static void trace_free(View *vv)
{
	free(vv);
}

static const PaneKey trace_keys[] = {
	{ACT_LEFT, "zoom out"},
	{ACT_RIGHT, "zoom in on the marked span"},
	{ACT_DETAIL_DOWN, "scroll the span's attributes and events down"},
	{ACT_DETAIL_UP, "scroll them up"},
	{ACT_NONE, NULL},
};

static const ViewOps trace_ops = {"Trace", trace_draw, trace_key, NULL, trace_free, trace_keys};

View *view_trace_new(void)
{
	TraceViewState *v = xcalloc(1, sizeof *v);
	v->base.ops = &trace_ops;
	return &v->base;
}
