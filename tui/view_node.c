/*
 * view_node.c - one node in detail: what it is, percentiles per workload
 * class for the window and the baseline with their sample counts, the
 * split components, the window's latency distribution, its pool (from the
 * metrics through the evidence provider; "no metrics" without them), and
 * the slowest exemplar traces, which open the waterfall.
 *
 * The node shown is app->sel_node; Left/Right step through the DAG in
 * pre-order, Up/Down pick an exemplar. node_draw() draws the header, plans
 * the rows that shrink with the pane (node_plan), then one function per
 * section, each taking the next free row and returning the one after it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evidence_name.h"
#include "fmt.h"
#include "model_infer.h"
#include "buf.h"
#include "view.h"

typedef struct NodeView {
	View base;
	int ex;                   /* selected exemplar */
} NodeView;

/* The slowest exemplars with one row per trace (analysis already keeps one
 * entry per trace with its call count; duplicates are merged here too, so
 * the view does not depend on that). idx[k] is the slowest call of the k-th
 * trace, count[k] how many calls of the node it made. Returns the rows. */
static int unique_exemplars(const DagNode *d, int *idx, int *count)
{
	int n = 0;
	for (int i = 0; i < d->n_slowest; i++) {
		int k;
		for (k = 0; k < n; k++)
			if (strcmp(d->slowest[idx[k]].trace_id, d->slowest[i].trace_id) == 0)
				break;
		if (k < n) {
			count[k] += d->slowest[i].calls > 0 ? d->slowest[i].calls : 1;
			if (d->slowest[i].ms > d->slowest[idx[k]].ms)
				idx[k] = i;
			continue;
		}
		idx[n] = i;
		count[n++] = d->slowest[i].calls > 0 ? d->slowest[i].calls : 1;
	}
	return n;
}

static void describe(const DagNode *d, char *out, size_t sz)
{
	switch (d->type) {
	case NODE_CALL:
		if (d->dependency || !analysis_call_target(d))
			snprintf(out, sz, "call %s -> %s (%s)", d->service ? d->service : "?",
			         d->dependency ? d->dependency : "no server span seen",
			         d->operation ? d->operation : "");
		else /* a peer that sends no spans: name it */
			snprintf(out, sz, "call %s -> %s, no server span seen (%s)",
			         d->service ? d->service : "?", analysis_call_target(d),
			         d->operation ? d->operation : "");
		break;
	case NODE_ROOT:
		snprintf(out, sz, "ingress %s %s", d->service ? d->service : "", d->operation ? d->operation : "");
		break;
	case NODE_ORPHANS:
		snprintf(out, sz, "spans whose parent is missing");
		break;
	default:
		snprintf(out, sz, "local span in %s (%s)", d->service ? d->service : "?",
		         d->operation ? d->operation : "");
	}
}

typedef struct Cols {
	int cls, wn, w50, w90, w99, wmax, bn, b50, b90, b99, bmax; /* x, -1 hidden */
} Cols;

static Cols table_cols(int w, int baseline)
{
	Cols c;
	int x = 1;
	c.cls = x;
	x += 13;
	c.wn = x;
	x += 8;
	c.w50 = x;
	x += 7;
	c.w90 = x;
	x += 7;
	c.w99 = x;
	x += 7;
	c.wmax = x;
	x += 7 + 3;
	c.bn = c.b50 = c.b90 = c.b99 = c.bmax = -1;
	if (baseline) {
		int wide = w >= 96;
		c.bn = x;
		x += 8;
		c.b50 = x;
		x += 7;
		if (wide) {
			c.b90 = x;
			x += 7;
		}
		c.b99 = x;
		x += 7;
		if (wide)
			c.bmax = x;
	}
	return c;
}

static void cell_ms(Canvas *cv, int x, int y, double v, int64_t n, Role role)
{
	char b[16];
	if (x < 0)
		return;
	fmt_ms(b, sizeof b, v, n, 1);
	canvas_text_right(cv, x + 7, y, 7, role, b);
}

static void cell_n(Canvas *cv, int x, int y, int64_t n)
{
	char b[24];
	if (x < 0)
		return;
	fmt_count(b, sizeof b, n);
	canvas_text_right(cv, x + 7, y, 7, n > 0 && n < 100 ? ROLE_WARN : ROLE_DIM, b);
}

static void quant_row(Canvas *cv, const Cols *c, int y, const char *label, const Quant *w,
                      const Quant *b, Role role)
{
	canvas_text(cv, c->cls, y, 12, role, label);
	cell_n(cv, c->wn, y, w->n);
	cell_ms(cv, c->w50, y, w->p50, w->n, ROLE_NORMAL);
	cell_ms(cv, c->w90, y, w->p90, w->n, ROLE_NORMAL);
	cell_ms(cv, c->w99, y, w->p99, w->n, ROLE_HEADING);
	cell_ms(cv, c->wmax, y, w->max, w->n, ROLE_NORMAL);
	if (b && c->bn >= 0) {
		cell_n(cv, c->bn, y, b->n);
		cell_ms(cv, c->b50, y, b->p50, b->n, ROLE_NORMAL);
		cell_ms(cv, c->b90, y, b->p90, b->n, ROLE_NORMAL);
		cell_ms(cv, c->b99, y, b->p99, b->n, ROLE_HEADING);
		cell_ms(cv, c->bmax, y, b->max, b->n, ROLE_NORMAL);
	}
}

/* Histogram of sorted values v[0..n) in width columns and h rows (log
 * bins when the range spans more than 20x). Draws h rows from y, then a
 * marker row with '^' under p50 and p99 when marks != 0. */
static void draw_hist(Canvas *cv, int x, int y, int width, int h, const double *v, int64_t n,
                      double p50, double p99, int marks)
{
	const Glyphs *g = cv->g;
	if (n <= 0 || width < 4 || h < 1)
		return;
	double lo = v[0], hi = v[n - 1];
	int logscale = lo > 0 && hi / lo > 20;
	int64_t counts[512];
	if (width > 512)
		width = 512;
	memset(counts, 0, sizeof counts);
	double llo = logscale ? log(lo) : lo, lhi = logscale ? log(hi) : hi;
	double span = lhi - llo;
	for (int64_t i = 0; i < n; i++) {
		double t = logscale ? log(v[i]) : v[i];
		int b = span > 0 ? (int)((t - llo) / span * width) : 0;
		if (b >= width)
			b = width - 1;
		if (b < 0)
			b = 0;
		counts[b]++;
	}
	int64_t maxc = 1;
	for (int b = 0; b < width; b++)
		if (counts[b] > maxc)
			maxc = counts[b];
	for (int b = 0; b < width; b++) {
		/* eighths of the column height; any non-empty bin shows at least 1 */
		int e = (int)ceil((double)counts[b] / (double)maxc * h * 8);
		double bin_lo = logscale ? exp(llo + span * b / width) : llo + span * b / width;
		Role role = bin_lo >= p99 ? ROLE_WARN : ROLE_SERVICE;
		for (int r = 0; r < h; r++) {
			int fill = e - (h - 1 - r) * 8;
			if (fill < 0)
				fill = 0;
			if (fill > 8)
				fill = 8;
			canvas_put(cv, x + b, y + r, g->spark[fill], role);
		}
	}
	if (!marks)
		return;
	int col[2];
	double q[2] = {p50, p99};
	for (int k = 0; k < 2; k++) {
		double t = logscale ? log(q[k]) : q[k];
		col[k] = span > 0 ? (int)((t - llo) / span * width) : 0;
		if (col[k] >= width)
			col[k] = width - 1;
		if (col[k] < 0)
			col[k] = 0;
		canvas_put(cv, x + col[k], y + h, g->marker, ROLE_HEADING);
	}
}

/* One pool line: size (the model's against the metric's max when they
 * differ), then occupancy, busiest host, pending and wait p99 from the
 * evidence provider; below it, the model/data findings about the pool.
 * Returns the last row used. */
static int draw_pool(Canvas *cv, const TuiApp *app, const ModelPool *pool, int x, int y, int w,
                     int bottom)
{
	/* figures from the metrics (through the evidence provider):
	 * occupancy, the busiest host, pending and the wait p99 */
	Buf line;
	buf_init(&line);
	int known = 0;
	char name[200];
	double val, mmax;
	/* a model size the metrics contradict is said, not hidden */
	evidence_name(name, sizeof name, "pool", pool->name, "max", 0);
	int has_max = app_evidence(app, name, &mmax);
	if (has_max && pool->size > 0 && fabs(mmax - (double)pool->size) >= 0.5)
		buf_printf(&line, "%s (%s, model %lld slots, metric max %.0f):", pool->name,
		           pool->kind ? pool->kind : "?", (long long)pool->size, mmax);
	else if (pool->size > 0)
		buf_printf(&line, "%s (%s, %lld slots):", pool->name, pool->kind ? pool->kind : "?",
		           (long long)pool->size);
	else if (has_max)
		buf_printf(&line, "%s (%s, metric max %.0f):", pool->name,
		           pool->kind ? pool->kind : "?", mmax);
	else
		buf_printf(&line, "%s (%s, size unknown):", pool->name, pool->kind ? pool->kind : "?");
	evidence_name(name, sizeof name, "pool", pool->name, "occupancy", 0);
	if (app_evidence(app, name, &val) && ++known)
		buf_printf(&line, " occupancy %.1f%%", 100 * val);
	evidence_name(name, sizeof name, "pool", pool->name, "occupancy_host_max", 0);
	if (app_evidence(app, name, &val) && ++known)
		buf_printf(&line, " (busiest host %.1f%%)", 100 * val);
	evidence_name(name, sizeof name, "pool", pool->name, "pending", 0);
	if (app_evidence(app, name, &val) && ++known)
		buf_printf(&line, "  pending %.1f", val);
	evidence_name(name, sizeof name, "pool", pool->name, "wait.p99_ms", 0);
	if (app_evidence(app, name, &val) && ++known)
		buf_printf(&line, "  wait p99 %.1f ms (histogram)", val);
	if (!known)
		buf_adds(&line, " occupancy, queue age: no metrics");
	canvas_text(cv, x, y, w - x - 1, known ? ROLE_NORMAL : ROLE_DIM, buf_str(&line));
	buf_fini(&line);
	/* where the model and the data disagree about this pool */
	for (int i = 0; i < app->n_model_findings && y + 1 < bottom; i++) {
		const ModelFinding *f = &app->model_findings[i];
		if (strcmp(f->subject, pool->name) != 0)
			continue;
		y++;
		canvas_text(cv, x, y, w - x - 1, ROLE_WARN, f->text);
	}
	return y;
}

/* What node_draw's sections share: the node, its statistics and the pane. */
typedef struct NodeCtx {
	const TuiApp *app;
	const Analysis *a;
	const DagNode *d;
	const NodeStats *s, *sb;  /* window and baseline statistics */
	int baseline;             /* the baseline population is present */
	Canvas *cv;
	Rect r;
	int bottom;               /* first row below the pane */
} NodeCtx;

/* Rows given to the sections that shrink with the pane. */
typedef struct NodeRows {
	int cls;                  /* class rows under "all classes" */
	int hist_h, hist;         /* histogram bar height; rows with markers and labels */
	int ex;                   /* exemplar rows */
} NodeRows;

/* The node's name, kind, tags and edge; then its call counts and its share
 * of the slow requests' critical path. Returns the next row. */
static int node_header(const NodeCtx *c, int y)
{
	Canvas *cv = c->cv;
	const DagNode *d = c->d;
	const NodeStats *s = c->s;
	const Glyphs *g = cv->g;
	int w = c->r.w;
	char buf[256], t1[32], t2[32];

	/* what it is */
	int x = 1 + canvas_text(cv, 1, y, w / 2, ROLE_TITLE, d->label);
	describe(d, buf, sizeof buf);
	x += canvas_text(cv, x, y, -1, ROLE_DIM, "  ");
	x += canvas_text(cv, x, y, w - x - 1, ROLE_NORMAL, buf);
	node_tags(d, t1, sizeof t1);
	snprintf(buf, sizeof buf, "  [%s]  %s edge  starts +%.1f ms", t1,
	         d->edge == EDGE_PARALLEL ? "parallel" : d->edge == EDGE_SERIAL ? "serial" : "root",
	         d->start_offset_ms);
	canvas_text(cv, x, y, w - x - 1, ROLE_DIM, buf);
	y++;

	/* counts */
	fmt_count(t1, sizeof t1, s->calls);
	fmt_count(t2, sizeof t2, s->requests);
	x = 1;
	snprintf(buf, sizeof buf, "calls %s in %s requests", t1, t2);
	x += canvas_text(cv, x, y, -1, ROLE_NORMAL, buf);
	if (d->type == NODE_CALL && s->unknown_split > 0) {
		fmt_count(t1, sizeof t1, s->unknown_split);
		snprintf(buf, sizeof buf, "  %s without server span (split unknown)", t1);
		x += canvas_text(cv, x, y, w - x, ROLE_UNKNOWN, buf);
	}
	if (d->type == NODE_CALL && s->db_calls > 0) {
		fmt_count(t1, sizeof t1, s->db_calls);
		snprintf(buf, sizeof buf, "  %s database calls (client time = service)", t1);
		x += canvas_text(cv, x, y, w - x, ROLE_SERVICE, buf);
	}
	if (d->crit[POP_WINDOW].share > 0) {
		snprintf(buf, sizeof buf, "  ");
		x += canvas_text(cv, x, y, w - x, ROLE_NORMAL, buf);
		x += canvas_put(cv, x, y, g->crit, ROLE_CRIT);
		snprintf(buf, sizeof buf, " %.1f%% of the slow requests' critical path",
		         100 * d->crit[POP_WINDOW].share);
		canvas_text(cv, x, y, w - x, ROLE_NORMAL, buf);
	}
	return y + 1;
}

/* Shares the avail rows below the header: the table head, "all", the
 * split, the pool and the exemplar heading always; then the exemplars,
 * the classes and the histogram, in that order of precedence. */
static NodeRows node_plan(const NodeCtx *c, int avail, int n_ex)
{
	NodeRows p = {0};
	int n_classes = c->a->n_classes;
	int base_rows = 2 /* table head + all */ + 1 /* split */ + 1 /* pool */ + 1 /* ex head */;
	int left = avail - base_rows;
	p.ex = n_ex;
	if (p.ex > left - n_classes - 2)
		p.ex = left - n_classes - 2;
	if (p.ex < (n_ex ? 1 : 0))
		p.ex = n_ex ? 1 : 0;
	if (p.ex == 0 && n_ex == 0)
		p.ex = 1; /* "none" line */
	left -= p.ex;
	p.cls = n_classes < left - 2 ? n_classes : left - 2;
	if (p.cls < 0)
		p.cls = 0;
	left -= p.cls;
	if (left >= 4) {
		p.hist_h = left - 2 < 4 ? left - 2 : 4;
		p.hist = p.hist_h + 2; /* bars, markers, labels */
	} else if (left >= 2) {
		p.hist_h = 1;
		p.hist = 2;
	}
	return p;
}

/* The total time's percentiles for all classes and cls_rows classes,
 * window and baseline. Returns the next row. */
static int node_percentiles(const NodeCtx *c, int y, int cls_rows)
{
	Canvas *cv = c->cv;
	const Glyphs *g = cv->g;
	const DagNode *d = c->d;
	Cols k = table_cols(c->r.w, c->baseline);
	canvas_text(cv, k.cls, y, 12, ROLE_HEADING, "total ms");
	canvas_text_right(cv, k.wn + 7, y, 7, ROLE_HEADING, "n");
	canvas_text_right(cv, k.w50 + 7, y, 7, ROLE_HEADING, "p50");
	canvas_text_right(cv, k.w90 + 7, y, 7, ROLE_HEADING, "p90");
	canvas_text_right(cv, k.w99 + 7, y, 7, ROLE_HEADING, "p99");
	canvas_text_right(cv, k.wmax + 7, y, 7, ROLE_HEADING, "max");
	if (k.bn >= 0) {
		canvas_put(cv, k.bn - 2, y, g->vline, ROLE_DIM);
		canvas_text_right(cv, k.bn + 7, y, 7, ROLE_HEADING, "base n");
		canvas_text_right(cv, k.b50 + 7, y, 7, ROLE_HEADING, "p50");
		if (k.b90 >= 0)
			canvas_text_right(cv, k.b90 + 7, y, 7, ROLE_HEADING, "p90");
		canvas_text_right(cv, k.b99 + 7, y, 7, ROLE_HEADING, "p99");
		if (k.bmax >= 0)
			canvas_text_right(cv, k.bmax + 7, y, 7, ROLE_HEADING, "max");
	}
	y++;
	quant_row(cv, &k, y++, "all classes", &c->s->total, c->baseline ? &c->sb->total : NULL,
	          ROLE_NORMAL);
	for (int i = 0; i < cls_rows; i++) {
		const NodeStats *cw = &d->by_class[POP_WINDOW][i];
		const NodeStats *cb = c->baseline ? &d->by_class[POP_BASELINE][i] : NULL;
		quant_row(cv, &k, y++, c->a->classes[i], &cw->total, cb ? &cb->total : NULL, ROLE_NORMAL);
	}
	if (cls_rows < c->a->n_classes && y < c->bottom)
		canvas_text_right(cv, c->r.w, y - 1, 12, ROLE_DIM, "(more...)");
	return y;
}

/* One line: the p99 of queue, client wait and service, window/baseline.
 * Returns the next row. */
static int node_split(const NodeCtx *c, int y)
{
	Canvas *cv = c->cv;
	const Glyphs *g = cv->g;
	const NodeStats *s = c->s, *sb = c->sb;
	int w = c->r.w;
	char buf[256], t1[32], t2[32];
	int call = c->d->type == NODE_CALL;
	int x = 1 + canvas_text(cv, 1, y, -1, ROLE_HEADING, "split p99 ");
	struct {
		const char *name;
		const Quant *w, *b;
		int applicable;
		Role role;
		uint32_t glyph;
	} comp[3] = {
		{" queue ", &s->queue, &sb->queue, 1, ROLE_QUEUE, g->bar_queue},
		{" client wait ", &s->client_wait, &sb->client_wait, call, ROLE_WAIT, g->bar_wait},
		{" service ", &s->service, &sb->service, 1, ROLE_SERVICE, g->bar_service},
	};
	for (int k = 0; k < 3; k++) {
		x += canvas_put(cv, x, y, comp[k].glyph, comp[k].role);
		x += canvas_text(cv, x, y, w - x, ROLE_NORMAL, comp[k].name);
		fmt_ms(t1, sizeof t1, comp[k].w->p99, comp[k].w->n, comp[k].applicable);
		if (c->baseline) {
			fmt_ms(t2, sizeof t2, comp[k].b->p99, comp[k].b->n, comp[k].applicable);
			snprintf(buf, sizeof buf, "%s/%s  ", t1, t2);
		} else {
			snprintf(buf, sizeof buf, "%s  ", t1);
		}
		x += canvas_text(cv, x, y, w - x, ROLE_NORMAL, buf);
	}
	if (c->baseline && x + 17 <= w)
		canvas_text(cv, x, y, w - x, ROLE_DIM, "(window/baseline)");
	return y + 1;
}

/* The window's latency histogram (hist_h rows of bars, markers when
 * hist_rows > 2) and its label line. Returns the next row. */
static int node_distribution(const NodeCtx *c, int y, int hist_h, int hist_rows)
{
	Canvas *cv = c->cv;
	const DagNode *d = c->d;
	const NodeStats *s = c->s;
	int w = c->r.w;
	if (s->total.n == 0) {
		canvas_text(cv, 2, y, w - 3, ROLE_DIM, "window distribution: no samples");
		return y + hist_rows;
	}
	draw_hist(cv, 2, y, w - 4, hist_h, d->dist, s->total.n, s->total.p50, s->total.p99,
	          hist_rows > 2);
	y += hist_h + (hist_rows > 2 ? 1 : 0);
	char buf[256], mn[16], p5[16], p9[16], mx[16];
	fmt_ms(mn, sizeof mn, d->dist[0], 1, 1);
	fmt_ms(p5, sizeof p5, s->total.p50, s->total.n, 1);
	fmt_ms(p9, sizeof p9, s->total.p99, s->total.n, 1);
	fmt_ms(mx, sizeof mx, s->total.max, s->total.n, 1);
	int logscale = d->dist[0] > 0 && d->dist[s->total.n - 1] / d->dist[0] > 20;
	snprintf(buf, sizeof buf, "window distribution (%s): min %s  ^p50 %s  ^p99 %s  max %s ms",
	         logscale ? "log scale" : "linear", mn, p5, p9, mx);
	canvas_text(cv, 2, y++, w - 3, ROLE_DIM, buf);
	return y;
}

/* The pool in front of the node (from the model, figures from the
 * metrics), then the called service's own pools. Returns the next row. */
static int node_pools(const NodeCtx *c, int y)
{
	Canvas *cv = c->cv;
	const TuiApp *app = c->app;
	const DagNode *d = c->d;
	int w = c->r.w, bottom = c->bottom;
	char buf[256];
	const ModelNode *mn = app->model ? analysis_model_node(app->model, d) : NULL;
	const ModelPool *pool = NULL;
	for (int i = 0; mn && mn->pool && app->model && i < app->model->n_pools; i++)
		if (app->model->pools[i].name && strcmp(app->model->pools[i].name, mn->pool) == 0)
			pool = &app->model->pools[i];
	int x = 1 + canvas_text(cv, 1, y, -1, ROLE_HEADING, "pool ");
	if (pool) {
		y = draw_pool(cv, app, pool, x, y, w, bottom);
	} else if (mn && mn->pool) {
		snprintf(buf, sizeof buf, "%s: not described in the model; no metrics", mn->pool);
		canvas_text(cv, x, y, w - x - 1, ROLE_DIM, buf);
	} else {
		canvas_text(cv, x, y, w - x - 1, ROLE_DIM,
		            app->model ? "none declared for this node" : "unknown (no model)");
	}
	y++;
	/* the called service's own pools (its database pool, say): they
	 * bound its service time, not the wait in front of it */
	const char *svc = d->type == NODE_CALL ? d->dependency : NULL;
	for (int i = 0; svc && app->model && i < app->model->n_pools && y < bottom; i++) {
		const ModelPool *op = &app->model->pools[i];
		if (op == pool || op->name == NULL || op->node == NULL || strcmp(op->node, svc) != 0 ||
		    (op->kind && strcmp(op->kind, "executor") == 0) ||
		    (mn && mn->pool && strcmp(mn->pool, op->name) == 0))
			continue;
		x = 1 + canvas_text(cv, 1, y, -1, ROLE_HEADING, "own pool ");
		y = draw_pool(cv, app, op, x, y, w, bottom) + 1;
	}
	return y;
}

/* The slowest traces (ex_idx/ex_count from unique_exemplars), scrolled so
 * the selected one (v->ex, clamped here) is among the ex_rows shown. */
static void node_exemplars(NodeView *v, const NodeCtx *c, int y, const int *ex_idx,
                           const int *ex_count, int n_ex, int ex_rows)
{
	Canvas *cv = c->cv;
	const Glyphs *g = cv->g;
	const Analysis *a = c->a;
	int w = c->r.w, bottom = c->bottom;
	char buf[256], t1[32];
	if (y < bottom) {
		if (a->pop[POP_WINDOW].tail_pulled)
			snprintf(buf, sizeof buf, "the %d slowest traces, of the %lld pulled slowest and the"
			         " sample, by queue + span (Enter opens one)", n_ex,
			         (long long)a->pop[POP_WINDOW].slow_requests);
		else
			snprintf(buf, sizeof buf, "the %d slowest traces, by the node's total = queue + span"
			         " (Enter opens one)", n_ex);
		canvas_text(cv, 1, y++, w - 2, ROLE_HEADING, buf);
	}
	if (v->ex >= n_ex)
		v->ex = n_ex ? n_ex - 1 : 0;
	if (n_ex == 0 && y < bottom)
		canvas_text(cv, 3, y++, w - 4, ROLE_DIM, "none in the window");
	int first = 0;
	if (ex_rows > 0 && v->ex >= ex_rows)
		first = v->ex - ex_rows + 1;
	for (int k = first; k < n_ex && y < bottom; k++) {
		const Exemplar *e = &c->d->slowest[ex_idx[k]];
		int sel = k == v->ex;
		if (sel) {
			canvas_put(cv, 1, y, g->pointer, ROLE_SELECTED);
			canvas_fill(cv, 2, y, 34, 1, ' ', ROLE_SELECTED);
		}
		canvas_text(cv, 3, y, 32, sel ? ROLE_SELECTED : ROLE_NORMAL, e->trace_id);
		fmt_ms(t1, sizeof t1, e->ms, 1, 1);
		snprintf(buf, sizeof buf, "%s ms", t1);
		canvas_text_right(cv, 48, y, 12, ROLE_NORMAL, buf);
		int cx = 50;
		if (e->wclass >= 0 && e->wclass < a->n_classes)
			cx += canvas_text(cv, cx, y, 16, ROLE_DIM, a->classes[e->wclass]);
		if (e->queue_ms > 0) {
			/* which part waited: the waterfall's axis starts at the span */
			char q[32], sp[32];
			fmt_ms(q, sizeof q, e->queue_ms, 1, 1);
			fmt_ms(sp, sizeof sp, e->ms - e->queue_ms, 1, 1);
			snprintf(buf, sizeof buf, "  = %s + %s", q, sp);
			cx += canvas_text(cv, cx, y, w - cx - 1, ROLE_DIM, buf);
		}
		if (ex_count[k] > 1) {
			snprintf(buf, sizeof buf, "  (%d calls)", ex_count[k]);
			canvas_text(cv, cx, y, w - cx - 1, ROLE_DIM, buf);
		}
		y++;
	}
}

static void node_draw(View *vv, const TuiApp *app, Canvas *cv, Rect r)
{
	NodeView *v = (NodeView *)vv;
	const Analysis *a = app->a;
	if (a->n_nodes == 0) {
		canvas_text(cv, 1, r.y, r.w - 2, ROLE_DIM, "no nodes: no requests of the endpoint in range");
		return;
	}
	const DagNode *d = &a->nodes[app->sel_node];
	NodeCtx c = {.app = app, .a = a, .d = d, .s = &d->pop[POP_WINDOW],
	             .sb = &d->pop[POP_BASELINE], .baseline = a->pop[POP_BASELINE].present,
	             .cv = cv, .r = r, .bottom = r.y + r.h};
	vv->rows = r.h;

	int y = node_header(&c, r.y);
	int ex_idx[NODE_MAX_EXEMPLARS], ex_count[NODE_MAX_EXEMPLARS];
	int n_ex = unique_exemplars(d, ex_idx, ex_count);
	NodeRows p = node_plan(&c, c.bottom - y, n_ex);
	y = node_percentiles(&c, y, p.cls);
	if (y < c.bottom)
		y = node_split(&c, y);
	if (p.hist > 0 && y + p.hist <= c.bottom)
		y = node_distribution(&c, y, p.hist_h, p.hist);
	if (y < c.bottom)
		y = node_pools(&c, y);
	node_exemplars(v, &c, y, ex_idx, ex_count, n_ex, p.ex);
}

static int node_key(View *vv, TuiApp *app, Action act)
{
	NodeView *v = (NodeView *)vv;
	const Analysis *a = app->a;
	if (a == NULL || a->n_nodes == 0)
		return REACT_NONE;
	const DagNode *d = &a->nodes[app->sel_node];
	int ex_idx[NODE_MAX_EXEMPLARS], ex_count[NODE_MAX_EXEMPLARS];
	int n_ex = unique_exemplars(d, ex_idx, ex_count);
	if (act != ACT_PAGE_UP && act != ACT_PAGE_DOWN && list_nav(act, &v->ex, n_ex, 1))
		return REACT_REDRAW;
	switch (act) {
	case ACT_LEFT:
		app_select_node(app, app->sel_node - 1);
		v->ex = 0;
		return REACT_REDRAW;
	case ACT_RIGHT:
		app_select_node(app, app->sel_node + 1);
		v->ex = 0;
		return REACT_REDRAW;
	case ACT_OPEN:
		if (v->ex < n_ex) {
			snprintf(app->want_trace, sizeof app->want_trace, "%s", d->slowest[ex_idx[v->ex]].trace_id);
			return REACT_TRACE | REACT_REDRAW;
		}
		return REACT_NONE;
	default:
		return REACT_NONE;
	}
}

static void node_free(View *vv)
{
	free(vv);
}

static const PaneKey node_keys[] = {
	{ACT_OPEN, "waterfall of the marked slowest trace"},
	{ACT_LEFT, "previous node (DAG order)"},
	{ACT_RIGHT, "next node"},
	{ACT_NONE, NULL},
};

static const ViewOps node_ops = {"Node", node_draw, node_key, NULL, node_free, node_keys};

View *view_node_new(void)
{
	NodeView *v = xcalloc(1, sizeof *v);
	v->base.ops = &node_ops;
	return &v->base;
}
