/*
 * keymap.c - the binding table (key -> action) and what each action does,
 * in the words the help screen shows.
 */
#include "keymap.h"

#include <stdio.h>
#include <string.h>

static const KeyBinding bindings[] = {
	{'?', ACT_HELP},
	{'q', ACT_QUIT},
	{TK_TAB, ACT_NEXT_PANE},
	{TK_BTAB, ACT_PREV_PANE},
	/* the digits 1-9 pick panes: keymap_lookup() */
	{TK_ENTER, ACT_OPEN},
	{'\n', ACT_OPEN},
	{TK_ESC, ACT_BACK},
	{TK_UP, ACT_UP},
	{'k', ACT_UP},
	{TK_DOWN, ACT_DOWN},
	{'j', ACT_DOWN},
	{TK_LEFT, ACT_LEFT},
	{'h', ACT_LEFT},
	{TK_RIGHT, ACT_RIGHT},
	{'l', ACT_RIGHT},
	{TK_PGUP, ACT_PAGE_UP},
	{TK_PGDN, ACT_PAGE_DOWN},
	{TK_HOME, ACT_TOP},
	{'g', ACT_TOP},
	{TK_END, ACT_BOTTOM},
	{'G', ACT_BOTTOM},
	{'/', ACT_FILTER},
	{'c', ACT_CLASS},
	{'w', ACT_WINDOW},
	{'b', ACT_BASELINE},
	{'p', ACT_PAUSE},
	{'s', ACT_SORT},
	{'M', ACT_WRITE_MODEL},
	{'[', ACT_DETAIL_UP},
	{']', ACT_DETAIL_DOWN},
	{'t', ACT_TRACE_ID},
	{'e', ACT_ENDPOINTS},
	{'{', ACT_PREV_ENDPOINT},
	{'}', ACT_NEXT_ENDPOINT},
};

/* Actions with per_pane set mean something different in each pane: the
 * help screen lists them under each pane (ViewOps.keys), not here. */
static const ActionInfo actions[] = {
	{ACT_HELP, "help", "show or hide this help", 0},
	{ACT_QUIT, "quit", "quit", 0},
	{ACT_NEXT_PANE, "next-pane", "next pane (the tabs, left to right)", 0},
	{ACT_PREV_PANE, "prev-pane", "previous pane", 0},
	{ACT_GOTO_PANE, "goto-pane", "jump to a pane by its number in the tab bar", 0},
	{ACT_BACK, "back", "back to the previous pane; close help, prompt or filter", 0},
	{ACT_UP, "up", "move up (the marked row)", 0},
	{ACT_DOWN, "down", "move down", 0},
	{ACT_PAGE_UP, "page-up", "page up", 0},
	{ACT_PAGE_DOWN, "page-down", "page down", 0},
	{ACT_TOP, "top", "first row", 0},
	{ACT_BOTTOM, "bottom", "last row", 0},
	{ACT_FILTER, "filter", "filter DAG nodes by name (Enter applies, Esc clears)", 0},
	{ACT_CLASS, "class", "cycle the workload class (all, then each class)", 0},
	{ACT_WINDOW, "window", "window: A..B (RFC 3339 / epoch ms), all, last 5m", 0},
	{ACT_BASELINE, "baseline", "baseline: A..B, before (same length), none", 0},
	{ACT_PAUSE, "pause", "pause or resume live updates", 0},
	{ACT_TRACE_ID, "trace", "open a trace by its id in the waterfall (32 hex digits)", 0},
	{ACT_ENDPOINTS, "endpoints", "the endpoints, ranked (Enter opens one)", 0},
	{ACT_PREV_ENDPOINT, "prev-endpoint", "the previous endpoint of the ranked list", 0},
	{ACT_NEXT_ENDPOINT, "next-endpoint", "the next endpoint of the ranked list", 0},
	{ACT_OPEN, "open", "open the selected row (see each pane)", 1},
	{ACT_LEFT, "left", "see each pane", 1},
	{ACT_RIGHT, "right", "see each pane", 1},
	{ACT_SORT, "sort", "change the order of the rows (see each pane)", 1},
	{ACT_DETAIL_UP, "detail-up", "scroll a detail panel up (see each pane)", 1},
	{ACT_DETAIL_DOWN, "detail-down", "scroll a detail panel down (see each pane)", 1},
	{ACT_WRITE_MODEL, "write-model", "write the model in use (e.g. the inferred one) to a file", 0},
};

Action keymap_lookup(int key)
{
	if (key >= '1' && key <= '9')
		return ACT_GOTO_PANE;
	for (size_t i = 0; i < sizeof bindings / sizeof bindings[0]; i++)
		if (bindings[i].key == key)
			return bindings[i].action;
	return ACT_NONE;
}

const KeyBinding *keymap_bindings(int *n)
{
	*n = (int)(sizeof bindings / sizeof bindings[0]);
	return bindings;
}

const ActionInfo *keymap_actions(int *n)
{
	*n = (int)(sizeof actions / sizeof actions[0]);
	return actions;
}

void keymap_key_name(int key, int ascii, char *out, unsigned sz)
{
	const char *s = NULL;
	switch (key) {
	case TK_TAB: s = "Tab"; break;
	case TK_BTAB: s = "Shift-Tab"; break;
	case TK_ENTER: s = "Enter"; break;
	case '\n': s = NULL; break;
	case TK_ESC: s = "Esc"; break;
	case TK_UP: s = ascii ? "Up" : "\xe2\x86\x91"; break;
	case TK_DOWN: s = ascii ? "Down" : "\xe2\x86\x93"; break;
	case TK_LEFT: s = ascii ? "Left" : "\xe2\x86\x90"; break;
	case TK_RIGHT: s = ascii ? "Right" : "\xe2\x86\x92"; break;
	case TK_PGUP: s = "PgUp"; break;
	case TK_PGDN: s = "PgDn"; break;
	case TK_HOME: s = "Home"; break;
	case TK_END: s = "End"; break;
	case TK_BACKSPACE: s = "Backspace"; break;
	default: break;
	}
	if (s) {
		snprintf(out, sz, "%s", s);
	} else if (key == '\n') {
		out[0] = '\0'; /* an alias of Enter, not listed */
	} else if (key > 32 && key < 127) {
		snprintf(out, sz, "%c", key);
	} else {
		snprintf(out, sz, "#%d", key);
	}
}

void keymap_keys_for(Action action, int ascii, char *out, unsigned sz)
{
	out[0] = '\0';
	for (size_t i = 0; i < sizeof bindings / sizeof bindings[0]; i++) {
		if (bindings[i].action != action)
			continue;
		char k[32];
		keymap_key_name(bindings[i].key, ascii, k, sizeof k);
		if (!k[0])
			continue;
		size_t l = strlen(out);
		snprintf(out + l, sz - l, "%s%s", l ? " " : "", k);
	}
}
