/*
 * view.h - the pane vtable and the panes.
 *
 * A view's state struct embeds View first, so a View * is also a pointer
 * to the whole state (htop's Panel, tmux's window_mode). draw() only reads
 * app and paints into the rectangle it is given; key() changes state and
 * returns REACT_* flags; resize() is told the new size of its rectangle;
 * free() releases the state. None of them touches the terminal.
 */
#ifndef TT_VIEW_H
#define TT_VIEW_H

#include "app.h"
#include "canvas.h"
#include "keymap.h"

/* What a pane does with one action, for the help screen. */
typedef struct PaneKey {
	Action action;
	const char *help;
} PaneKey;

typedef struct ViewOps {
	const char *title;                                   /* tab label, help heading */
	void (*draw)(View *v, const TuiApp *app, Canvas *cv, Rect r);
	int (*key)(View *v, TuiApp *app, Action act);        /* REACT_* */
	void (*resize)(View *v, int w, int h);
	void (*free)(View *v);
	/* The actions this pane gives a meaning of its own (Enter, Left,
	 * Right, s, ...), ended by {ACT_NONE, NULL}; the help screen lists
	 * them under the pane's title. NULL: none. */
	const PaneKey *keys;
} ViewOps;

/* The pane shown as pane (PANE_*), its tab label ("2 Node pricing") and
 * whether it can be opened now (the Trace pane needs a trace, Drill and
 * Board exist only in some modes). app.c's pane table decides; the tab
 * bar, the digit keys and the help screen all ask it. */
int app_pane_available(const TuiApp *app, int pane);
void app_pane_label(const TuiApp *app, int pane, char *out, unsigned sz);

/* Moves *cursor over a list of n rows for the list actions (Up, Down,
 * PgUp, PgDn by page rows, Home, End) and clamps it to 0..n-1 (0 when
 * the list is empty). Returns 1 when act is one of them, else 0 (the
 * cursor is still clamped). Every list view moves with this. */
int list_nav(Action act, int *cursor, int n, int page);

struct View {
	const ViewOps *ops;
	int rows;                /* height of the last drawn rectangle (paging) */
};

View *view_dag_new(void);
View *view_node_new(void);
View *view_owner_new(void);
View *view_trace_new(void);
View *view_endpoints_new(void);
/* The Drill pane of `drill train` (view_drill.c); d is borrowed, NULL
 * draws a placeholder. */
struct TuiDrill;
View *view_drill_new(const struct TuiDrill *d);

/* The hypothesis board (view_board.c); b is borrowed, NULL: empty pane.
 * (added by "diag") */
struct TuiBoard;
View *view_board_new(const struct TuiBoard *b);

/* Shared drawing helpers (draw.c). */

/* A stacked bar of queue | client wait | service in width columns, the
 * segment lengths proportional to q, w, s (NaN or negative = 0). unknown
 * != 0 draws the whole bar with the unknown glyph. Returns columns used. */
int draw_split_bar(Canvas *cv, int x, int y, int width, double q, double w, double s,
                   int unknown);

/* The split legend "░ queue ▒ client wait █ service ? unknown". */
int draw_split_legend(Canvas *cv, int x, int y, int maxw);

/* Tree prefix for a node of depth d whose ancestors' "has later sibling"
 * flags are in more[0..d-1]; edge glyph by EDGE_*. Returns columns. */
int draw_tree_prefix(Canvas *cv, int x, int y, int depth, const unsigned char *more, int edge,
                     Role role);

/* Node tags from the model: "M core", "opt", "?" when unknown, "-" for
 * the root (the endpoint itself). */
void node_tags(const DagNode *d, char *out, unsigned sz);

/* Draws a scroll position hint "12-30/140" right-aligned at (x_end, y). */
void draw_scroll_hint(Canvas *cv, int x_end, int y, int first, int shown, int total);

#endif
