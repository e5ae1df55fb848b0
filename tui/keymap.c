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
	{'1', ACT_GOTO_PANE},
	{'2', ACT_GOTO_PANE},
	{'3', ACT_GOTO_PANE},
	{'4', ACT_GOTO_PANE},
	{'5', ACT_GOTO_PANE},
	{'6', ACT_GOTO_PANE},
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
};

static const ActionInfo actions[] = {
	{ACT_HELP, "help", "show or hide this help"},
	{ACT_QUIT, "quit", "quit"},
	{ACT_NEXT_PANE, "next-pane", "next pane: DAG, node, tail ownership, trace"},
	{ACT_PREV_PANE, "prev-pane", "previous pane"},
	{ACT_GOTO_PANE, "goto-pane", "jump to a pane by its number in the tab bar"},
	{ACT_OPEN, "open", "open: node detail from the DAG, waterfall from a trace"},
	{ACT_BACK, "back", "back to the previous pane; close help, prompt or filter"},
	{ACT_UP, "up", "move up"},
	{ACT_DOWN, "down", "move down"},
	{ACT_LEFT, "left", "DAG: fold subtree; node: previous node; trace: zoom out"},
	{ACT_RIGHT, "right", "DAG: unfold subtree; node: next node; trace: zoom in"},
	{ACT_PAGE_UP, "page-up", "page up"},
	{ACT_PAGE_DOWN, "page-down", "page down"},
	{ACT_TOP, "top", "first row"},
	{ACT_BOTTOM, "bottom", "last row"},
	{ACT_FILTER, "filter", "filter DAG nodes by name (Enter applies, Esc clears)"},
	{ACT_CLASS, "class", "cycle the workload class (all, then each class)"},
	{ACT_WINDOW, "window", "window: A..B (RFC 3339 / epoch ms), all, last 5m"},
	{ACT_BASELINE, "baseline", "baseline: A..B, before (same length), none"},
	{ACT_PAUSE, "pause", "pause or resume live updates"},
	{ACT_SORT, "sort", "sort: DAG tree/p99/change/calls, owners share/change"},
	{ACT_WRITE_MODEL, "write-model", "write the model in use (e.g. the inferred one) to a file"},
};

Action keymap_lookup(int key)
{
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
