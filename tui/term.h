/*
 * term.h - the terminal: ncursesw set-up, canvas blit, key reading.
 *
 * The only file that includes curses. It maps roles to colour pairs and
 * attributes from the theme table (monochrome when the terminal has no
 * colours, when NO_COLOR is set to a non-empty value, or when asked), and
 * curses key codes to the TK_* codes of keymap.h.
 */
#ifndef TT_TERM_H
#define TT_TERM_H

#include "canvas.h"
#include "err.h"

typedef struct Term Term;

/* Takes over the terminal on stdin/stdout. Errors: TT_EIO (not a
 * terminal, unknown TERM). Call setlocale(LC_ALL, "") first. */
int term_open(int no_color, Term **out, Err *err);
/* Restores the terminal. NULL is a no-op. */
void term_close(Term *t);

/* 1 when the locale encodes UTF-8 (wide characters can be shown). */
int term_utf8(const Term *t);
/* 1 when colours are in use. */
int term_color(const Term *t);

void term_size(Term *t, int *w, int *h);

/* Copies the canvas to the screen and flushes. */
void term_blit(Term *t, const Canvas *cv);

/* The next key without waiting: a code point or TK_*, -1 when none, -2
 * for a key that has no TK_* code (ignore it and read on). */
int term_read_key(Term *t);

#endif
