/*
 * keymap.h - keys, actions and the binding table.
 *
 * A key press becomes an action through one table (keymap.c); the help
 * screen is generated from the same table, so it cannot drift from what
 * the keys do. Keys are terminal-independent codes: printable characters
 * are their code point, special keys are TK_* (term.c translates curses
 * key codes into these).
 */
#ifndef TT_KEYMAP_H
#define TT_KEYMAP_H

enum {
	TK_ESC = 27,
	TK_TAB = 9,
	TK_ENTER = 13,
	TK_BACKSPACE = 127,
	TK_SPECIAL = 0x110000,  /* above every code point */
	TK_UP,
	TK_DOWN,
	TK_LEFT,
	TK_RIGHT,
	TK_PGUP,
	TK_PGDN,
	TK_HOME,
	TK_END,
	TK_BTAB,                /* Shift-Tab */
	TK_RESIZE,
};

typedef enum Action {
	ACT_NONE = 0,
	/* global */
	ACT_HELP,
	ACT_QUIT,
	ACT_NEXT_PANE,
	ACT_PREV_PANE,
	ACT_BACK,
	ACT_CLASS,
	ACT_WINDOW,
	ACT_BASELINE,
	ACT_PAUSE,
	ACT_FILTER,
	ACT_GOTO_PANE,
	ACT_WRITE_MODEL,
	/* handed to the active view */
	ACT_UP,
	ACT_DOWN,
	ACT_LEFT,
	ACT_RIGHT,
	ACT_PAGE_UP,
	ACT_PAGE_DOWN,
	ACT_TOP,
	ACT_BOTTOM,
	ACT_OPEN,
	ACT_SORT,
	ACT_DETAIL_UP,          /* scroll a detail panel (span attributes, ...) */
	ACT_DETAIL_DOWN,
	ACT_TRACE_ID,           /* open a trace by its id (global) */
	ACT_ENDPOINTS,          /* the Endpoints pane (global) */
	ACT_PREV_ENDPOINT,      /* the previous / next endpoint of the list (global) */
	ACT_NEXT_ENDPOINT,
	ACT_COUNT
} Action;

typedef struct KeyBinding {
	int key;                /* code point or TK_* */
	Action action;
} KeyBinding;

typedef struct ActionInfo {
	Action action;
	const char *name;       /* "quit" */
	const char *help;       /* one line for the help screen */
	int per_pane;           /* its meaning depends on the pane (ViewOps.keys) */
} ActionInfo;

/* The action bound to key, or ACT_NONE. */
Action keymap_lookup(int key);

/* The binding table and the action descriptions (static storage). */
const KeyBinding *keymap_bindings(int *n);
const ActionInfo *keymap_actions(int *n);

/* Human name of a key ("q", "Tab", "Up", "Shift-Tab", "Enter"), written
 * into out (size sz). ascii selects "Up" over an arrow glyph. */
void keymap_key_name(int key, int ascii, char *out, unsigned sz);

/* All keys bound to action, joined by " " (e.g. "Up k"). */
void keymap_keys_for(Action action, int ascii, char *out, unsigned sz);

#endif
