/*
 * term.c - ncursesw behind a small interface. The canvas is the frame:
 * every blit writes every cell, and curses' own diff keeps the output
 * small. Wide characters are written once, at their head cell.
 */
#ifndef NCURSES_WIDECHAR
#define NCURSES_WIDECHAR 1
#endif
#include "term.h"

#include <curses.h>
#include <langinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "keymap.h"
#include "theme.h"

struct Term {
	SCREEN *scr;
	int color;
	int utf8;
};

static attr_t to_attr(unsigned a)
{
	attr_t r = A_NORMAL;
	if (a & THEME_A_BOLD)
		r |= A_BOLD;
	if (a & THEME_A_REVERSE)
		r |= A_REVERSE;
	if (a & THEME_A_UNDERLINE)
		r |= A_UNDERLINE;
	if (a & THEME_A_DIM)
		r |= A_DIM;
	return r;
}

int term_open(int no_color, Term **out, Err *err)
{
	*out = NULL;
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		return err_set(err, TT_EIO, "the dashboard needs a terminal (stdin and stdout are not one)");
	Term *t = calloc(1, sizeof *t);
	if (t == NULL)
		return err_set(err, TT_ENOMEM, "out of memory");
	const char *cs = nl_langinfo(CODESET);
	t->utf8 = cs && (strcmp(cs, "UTF-8") == 0 || strcmp(cs, "utf8") == 0);
	t->scr = newterm(NULL, stdout, stdin);
	if (t->scr == NULL) {
		free(t);
		return err_set(err, TT_EIO, "cannot initialise the terminal (TERM=%s)",
		               getenv("TERM") ? getenv("TERM") : "unset");
	}
	set_term(t->scr);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	const char *nc = getenv("NO_COLOR");
	int want_color = !no_color && !(nc && nc[0]);
	if (want_color && has_colors()) {
		start_color();
		use_default_colors();
		for (int r = 0; r < ROLE_COUNT; r++) {
			const RoleStyle *s = theme_style((Role)r);
			init_pair((short)(r + 1), s->fg, s->bg);
		}
		t->color = 1;
	}
	*out = t;
	return 0;
}

void term_close(Term *t)
{
	if (t == NULL)
		return;
	endwin();
	delscreen(t->scr);
	free(t);
}

int term_utf8(const Term *t)
{
	return t->utf8;
}

int term_color(const Term *t)
{
	return t->color;
}

void term_size(Term *t, int *w, int *h)
{
	(void)t;
	getmaxyx(stdscr, *h, *w);
}

void term_blit(Term *t, const Canvas *cv)
{
	int sh, sw;
	getmaxyx(stdscr, sh, sw);
	for (int y = 0; y < cv->h && y < sh; y++) {
		for (int x = 0; x < cv->w && x < sw; x++) {
			const Cell *c = canvas_cell(cv, x, y);
			if (c->flags & CELL_TAIL)
				continue;
			const RoleStyle *s = theme_style((Role)c->role);
			wchar_t wc[2] = {(wchar_t)c->ch, 0};
			if (!t->utf8 && c->ch > 0x7E)
				wc[0] = '?';
			cchar_t cc;
			attr_t a = to_attr(t->color ? s->attr : s->mono);
			short pair = t->color ? (short)(c->role + 1) : 0;
			if (setcchar(&cc, wc, a, pair, NULL) == OK)
				mvadd_wch(y, x, &cc); /* ERR in the last cell is harmless */
		}
	}
	wnoutrefresh(stdscr);
	doupdate();
}

int term_read_key(Term *t)
{
	(void)t;
	wint_t wc;
	int rc = get_wch(&wc);
	if (rc == ERR)
		return -1;
	if (rc == KEY_CODE_YES) {
		switch (wc) {
		case KEY_UP: return TK_UP;
		case KEY_DOWN: return TK_DOWN;
		case KEY_LEFT: return TK_LEFT;
		case KEY_RIGHT: return TK_RIGHT;
		case KEY_PPAGE: return TK_PGUP;
		case KEY_NPAGE: return TK_PGDN;
		case KEY_HOME: return TK_HOME;
		case KEY_END: return TK_END;
		case KEY_BTAB: return TK_BTAB;
		case KEY_RESIZE: return TK_RESIZE;
		case KEY_ENTER: return TK_ENTER;
		case KEY_BACKSPACE: return TK_BACKSPACE;
		default: return -2; /* a key we do not use */
		}
	}
	switch (wc) {
	case '\r':
	case '\n': return TK_ENTER;
	case '\t': return TK_TAB;
	case 27: return TK_ESC;
	case 8:
	case 127: return TK_BACKSPACE;
	default: return (int)wc;
	}
}
