/*
 * canvas.h - a grid of cells the views draw into.
 *
 * A cell holds one printable code point and a Role. A double-width
 * character fills its cell and marks the next one as its tail, so columns
 * stay aligned. The canvas is the only thing views draw on: term.c blits it
 * to ncurses, and tests dump it as text and compare it with golden files.
 *
 * Text enters only through canvas_text()/canvas_textf(), which run it
 * through the sanitizer (sanitize.h); single glyphs through canvas_put(),
 * which refuses control code points. So nothing drawn can carry a control
 * byte to the terminal.
 *
 * Drawing outside the grid is clipped silently.
 */
#ifndef TT_CANVAS_H
#define TT_CANVAS_H

#include <stdint.h>

#include "buf.h"
#include "theme.h"

enum {
	CELL_TAIL = 1 << 0,  /* right half of the double-width char to its left */
};

typedef struct Cell {
	uint32_t ch;         /* code point; ' ' when empty; 0 in a tail cell */
	uint8_t role;        /* Role */
	uint8_t flags;       /* CELL_* */
} Cell;

typedef struct Canvas {
	int w, h;
	Cell *cells;         /* w * h, row-major; owned */
	int ascii;           /* glyph set in use (for the ellipsis) */
	const Glyphs *g;     /* theme_glyphs(ascii) */
} Canvas;

typedef struct Rect {
	int x, y, w, h;
} Rect;

void canvas_init(Canvas *cv, int w, int h, int ascii);
void canvas_fini(Canvas *cv);
/* Resizes (content is cleared). */
void canvas_resize(Canvas *cv, int w, int h);
void canvas_clear(Canvas *cv);

/* Puts one glyph at (x, y). A code point that is not printable is drawn as
 * U+FFFD ('?' in ASCII mode). Returns the columns used (0 when clipped). */
int canvas_put(Canvas *cv, int x, int y, uint32_t cp, Role role);

/* Draws sanitized text at (x, y) using at most maxw columns (< 0: up to
 * the right edge). When the text is longer than maxw, the last column is
 * an ellipsis. Returns the columns used. NULL text draws nothing. */
int canvas_text(Canvas *cv, int x, int y, int maxw, Role role, const char *s);
int canvas_textf(Canvas *cv, int x, int y, int maxw, Role role, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* Right-aligns text so that it ends at column x_end (exclusive). */
int canvas_text_right(Canvas *cv, int x_end, int y, int maxw, Role role, const char *s);

/* Fills a rectangle with cp. */
void canvas_fill(Canvas *cv, int x, int y, int w, int h, uint32_t cp, Role role);
/* Changes the role of w cells from (x, y), keeping their characters. */
void canvas_set_role(Canvas *cv, int x, int y, int w, Role role);

const Cell *canvas_cell(const Canvas *cv, int x, int y);

/* Appends the canvas as UTF-8 text to out: one line per row, trailing
 * spaces removed, each line ending in '\n'. Tail cells emit nothing. */
void canvas_dump(const Canvas *cv, Buf *out);

#endif
