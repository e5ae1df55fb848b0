/*
 * draw.c - drawing helpers shared by the panes: split bars, the legend,
 * tree prefixes, model tags, scroll hints.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "view.h"

static double pos(double v)
{
	return (isnan(v) || v < 0) ? 0 : v;
}

int draw_split_bar(Canvas *cv, int x, int y, int width, double q, double w, double s,
                   int unknown)
{
	const Glyphs *g = cv->g;
	if (width <= 0)
		return 0;
	if (unknown) {
		for (int i = 0; i < width; i++)
			canvas_put(cv, x + i, y, g->bar_unknown, ROLE_UNKNOWN);
		return width;
	}
	double v[3] = {pos(q), pos(w), pos(s)};
	double sum = v[0] + v[1] + v[2];
	if (sum <= 0)
		return 0;
	int cells[3];
	double acc = 0;
	int used = 0;
	for (int i = 0; i < 3; i++) {
		acc += v[i];
		int end = (int)lround(width * acc / sum);
		cells[i] = end - used;
		used = end;
	}
	/* a component that exists gets at least one cell, taken from the
	 * largest, so small queues do not vanish from the picture */
	for (int i = 0; i < 3; i++) {
		if (v[i] > 0 && cells[i] == 0) {
			int big = 0;
			for (int k = 1; k < 3; k++)
				if (cells[k] > cells[big])
					big = k;
			if (cells[big] > 1) {
				cells[big]--;
				cells[i]++;
			}
		}
	}
	static const Role roles[3] = {ROLE_QUEUE, ROLE_WAIT, ROLE_SERVICE};
	uint32_t glyph[3] = {g->bar_queue, g->bar_wait, g->bar_service};
	int c = 0;
	for (int i = 0; i < 3; i++)
		for (int k = 0; k < cells[i]; k++)
			canvas_put(cv, x + c++, y, glyph[i], roles[i]);
	return c;
}

int draw_split_legend(Canvas *cv, int x, int y, int maxw)
{
	const Glyphs *g = cv->g;
	int x0 = x, end = x + maxw;
	struct {
		uint32_t glyph;
		Role role;
		const char *label;
	} items[] = {
		{g->bar_queue, ROLE_QUEUE, " queue  "},
		{g->bar_wait, ROLE_WAIT, " client wait  "},
		{g->bar_service, ROLE_SERVICE, " service  "},
		{g->bar_unknown, ROLE_UNKNOWN, " unknown split"},
	};
	for (size_t i = 0; i < sizeof items / sizeof items[0]; i++) {
		int need = 1 + (int)strlen(items[i].label);
		if (x + need > end)
			break;
		x += canvas_put(cv, x, y, items[i].glyph, items[i].role);
		x += canvas_text(cv, x, y, end - x, ROLE_DIM, items[i].label);
	}
	return x - x0;
}

int draw_tree_prefix(Canvas *cv, int x, int y, int depth, const unsigned char *more, int edge,
                     Role role)
{
	const Glyphs *g = cv->g;
	int x0 = x;
	for (int k = 1; k < depth; k++) {
		x += canvas_put(cv, x, y, more[k] ? g->tree_vert : ' ', ROLE_DIM);
		x += canvas_put(cv, x, y, ' ', ROLE_DIM);
	}
	if (depth >= 1) {
		x += canvas_put(cv, x, y, more[depth] ? g->tree_tee : g->tree_last, ROLE_DIM);
		x += canvas_put(cv, x, y, edge == EDGE_PARALLEL ? g->edge_parallel : g->edge_serial,
		                edge == EDGE_PARALLEL ? role : ROLE_DIM);
		x += canvas_put(cv, x, y, ' ', role);
	}
	return x - x0;
}

void node_tags(const DagNode *d, char *out, unsigned sz)
{
	if (d->type == NODE_ROOT) {
		snprintf(out, sz, "-"); /* the endpoint itself */
		return;
	}
	const char *m = d->mandatory == 1 ? "M" : d->mandatory == 0 ? "opt" : NULL;
	const char *c = d->core == 1 ? "core" : NULL;
	if (m && c)
		snprintf(out, sz, "%s %s", m, c);
	else if (m)
		snprintf(out, sz, "%s", m);
	else if (c)
		snprintf(out, sz, "%s", c);
	else if (d->mandatory == MODEL_UNKNOWN && d->core == MODEL_UNKNOWN)
		snprintf(out, sz, "?");
	else
		snprintf(out, sz, "-");
}

void draw_scroll_hint(Canvas *cv, int x_end, int y, int first, int shown, int total)
{
	if (total <= shown)
		return;
	char buf[48];
	int last = first + shown > total ? total : first + shown;
	snprintf(buf, sizeof buf, " %d-%d/%d ", first + 1, last, total);
	canvas_text_right(cv, x_end, y, -1, ROLE_DIM, buf);
}

int list_nav(Action act, int *cursor, int n, int page)
{
	int c = *cursor, handled = 1;
	if (page < 1)
		page = 1;
	switch (act) {
	case ACT_UP: c--; break;
	case ACT_DOWN: c++; break;
	case ACT_PAGE_UP: c -= page; break;
	case ACT_PAGE_DOWN: c += page; break;
	case ACT_TOP: c = 0; break;
	case ACT_BOTTOM: c = n - 1; break;
	default: handled = 0;
	}
	if (c >= n)
		c = n - 1;
	if (c < 0)
		c = 0;
	*cursor = c;
	return handled;
}
