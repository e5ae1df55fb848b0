/*
 * canvas.c - the cell grid. Invariants: every cell's ch is printable per
 * san_cp_width() (or 0 in a tail cell); a cell with CELL_TAIL always has a
 * double-width head immediately to its left on the same row.
 */
#include "canvas.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sanitize.h"

void canvas_init(Canvas *cv, int w, int h, int ascii)
{
	memset(cv, 0, sizeof *cv);
	cv->ascii = ascii;
	cv->g = theme_glyphs(ascii);
	san_init();
	canvas_resize(cv, w, h);
}

void canvas_fini(Canvas *cv)
{
	free(cv->cells);
	cv->cells = NULL;
	cv->w = cv->h = 0;
}

void canvas_resize(Canvas *cv, int w, int h)
{
	if (w < 0)
		w = 0;
	if (h < 0)
		h = 0;
	free(cv->cells);
	cv->w = w;
	cv->h = h;
	cv->cells = xcalloc((size_t)(w ? w : 1) * (size_t)(h ? h : 1), sizeof(Cell));
	canvas_clear(cv);
}

void canvas_clear(Canvas *cv)
{
	for (int i = 0; i < cv->w * cv->h; i++) {
		cv->cells[i].ch = ' ';
		cv->cells[i].role = ROLE_NORMAL;
		cv->cells[i].flags = 0;
	}
}

static Cell *at(Canvas *cv, int x, int y)
{
	return &cv->cells[(size_t)y * (size_t)cv->w + (size_t)x];
}

const Cell *canvas_cell(const Canvas *cv, int x, int y)
{
	if (x < 0 || y < 0 || x >= cv->w || y >= cv->h)
		return NULL;
	return &cv->cells[(size_t)y * (size_t)cv->w + (size_t)x];
}

/* Makes (x, y) a clean single cell: breaks a wide char it is part of. */
static void detach(Canvas *cv, int x, int y)
{
	Cell *c = at(cv, x, y);
	if (c->flags & CELL_TAIL) {
		if (x > 0) {
			Cell *h = at(cv, x - 1, y);
			h->ch = ' ';
		}
		c->flags = 0;
		c->ch = ' ';
	} else if (x + 1 < cv->w && (at(cv, x + 1, y)->flags & CELL_TAIL)) {
		Cell *t = at(cv, x + 1, y);
		t->flags = 0;
		t->ch = ' ';
	}
}

static int put_w(Canvas *cv, int x, int y, uint32_t cp, int w, Role role)
{
	if (y < 0 || y >= cv->h || x < 0 || x >= cv->w)
		return 0;
	if (w == 2 && x + 1 >= cv->w) {
		/* a wide char that does not fit: a blank keeps the grid sane */
		cp = ' ';
		w = 1;
	}
	detach(cv, x, y);
	Cell *c = at(cv, x, y);
	c->ch = cp;
	c->role = (uint8_t)role;
	c->flags = 0;
	if (w == 2) {
		detach(cv, x + 1, y);
		Cell *t = at(cv, x + 1, y);
		t->ch = 0;
		t->role = (uint8_t)role;
		t->flags = CELL_TAIL;
	}
	return w;
}

int canvas_put(Canvas *cv, int x, int y, uint32_t cp, Role role)
{
	int w = san_cp_width(cp);
	if (w <= 0 || (cv->ascii && cp > 0x7E)) {
		cp = cv->ascii ? '?' : SAN_REPLACEMENT;
		w = 1;
	}
	return put_w(cv, x, y, cp, w, role);
}

int canvas_text(Canvas *cv, int x, int y, int maxw, Role role, const char *s)
{
	if (s == NULL || y < 0 || y >= cv->h)
		return 0;
	if (maxw < 0 || x + maxw > cv->w)
		maxw = cv->w - x;
	if (maxw <= 0)
		return 0;
	int total = san_width(s);
	int limit = total > maxw ? maxw - 1 : maxw; /* room for the ellipsis */
	size_t len = strlen(s), i = 0;
	uint32_t cp;
	int w, col = 0;
	while (san_next(s, len, &i, &cp, &w)) {
		if (col + w > limit)
			break;
		if (cv->ascii && cp > 0x7E) {
			/* ASCII terminal: keep the width, lose the glyph */
			for (int k = 0; k < w; k++)
				put_w(cv, x + col + k, y, '?', 1, role);
		} else if (x + col >= 0) {
			put_w(cv, x + col, y, cp, w, role);
		}
		col += w;
	}
	if (total > maxw) {
		while (col < maxw - 1) /* a wide char did not fit: pad */
			put_w(cv, x + col++, y, ' ', 1, role);
		put_w(cv, x + col++, y, cv->g->ellipsis, 1, role);
	}
	return col;
}

int canvas_textf(Canvas *cv, int x, int y, int maxw, Role role, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return canvas_text(cv, x, y, maxw, role, buf);
}

int canvas_text_right(Canvas *cv, int x_end, int y, int maxw, Role role, const char *s)
{
	int w = san_width(s);
	if (maxw >= 0 && w > maxw)
		w = maxw;
	return canvas_text(cv, x_end - w, y, w, role, s);
}

void canvas_fill(Canvas *cv, int x, int y, int w, int h, uint32_t cp, Role role)
{
	for (int r = y; r < y + h; r++)
		for (int c = x; c < x + w; c++)
			canvas_put(cv, c, r, cp, role);
}

void canvas_set_role(Canvas *cv, int x, int y, int w, Role role)
{
	if (y < 0 || y >= cv->h)
		return;
	for (int c = x; c < x + w; c++)
		if (c >= 0 && c < cv->w)
			at(cv, c, y)->role = (uint8_t)role;
}

void canvas_dump(const Canvas *cv, Buf *out)
{
	for (int y = 0; y < cv->h; y++) {
		size_t line_start = out->len, keep = out->len;
		for (int x = 0; x < cv->w; x++) {
			const Cell *c = &cv->cells[(size_t)y * (size_t)cv->w + (size_t)x];
			if (c->flags & CELL_TAIL)
				continue;
			char enc[4];
			int n = san_utf8_encode(c->ch, enc);
			buf_add(out, enc, (size_t)n);
			if (c->ch != ' ')
				keep = out->len;
		}
		(void)line_start;
		out->len = keep;
		buf_addc(out, '\n');
	}
}
