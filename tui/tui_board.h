/*
 * tui_board.h - what the dashboard needs for the hypothesis board: ranked
 * hypotheses with the evidence for and against each, the check that
 * separates them, and the decisions with their verdicts, as plain text,
 * plus a callback that runs a check. The TUI links neither the drills
 * library nor SQLite; the caller (cli/board.c) fills this in from the
 * diagnosis engine (drills/diagnose.h) running in the background.
 */
#ifndef TT_TUI_BOARD_H
#define TT_TUI_BOARD_H

#include <stddef.h>

#include "analysis.h"

typedef struct TuiBoardHyp {
	const char *id;            /* "client-pool-wait" */
	const char *node;          /* what it blames: "pricing" */
	const char *title;
	const char *mechanism;
	double score;
	int rank;
	int signature;             /* its signature evidence holds */
	const char *const *lines;  /* "! ..." (warnings), what it explains and
	                            * why it ranks there, "remedy: ...", then
	                            * "+ ...", "- ...", "? ..." (for, against,
	                            * missing) */
	int n_lines;
	const char *check;         /* check name */
	const char *check_node;    /* or NULL */
	const char *check_class;   /* or NULL */
	const char *check_why;     /* or NULL */
} TuiBoardHyp;

typedef struct TuiBoardDecision {
	const char *id;            /* "degrade:pricing" */
	const char *verdict;       /* "supported", "unsupported", "refused" */
	const char *reason;
} TuiBoardDecision;

typedef struct TuiBoardSnapshot {
	const TuiBoardHyp *hyps;   /* ranked */
	int n_hyps;
	const TuiBoardDecision *decisions;
	int n_decisions;
	int stale;                 /* computed for an earlier window or data */
	const char *note;          /* e.g. "updating", an error, or NULL */
	const char *error;         /* no diagnosis of the window on screen:
	                            * why (the engine refused it), or NULL */
} TuiBoardSnapshot;

typedef struct TuiBoard {
	/* The board for the analysis on screen (UI thread). Returns NULL while
	 * none is ready. The snapshot stays valid until the next call. */
	const TuiBoardSnapshot *(*snapshot)(void *ctx, const Analysis *a);
	/* Runs a check for the analysis on screen and returns its table as
	 * text (malloc'd; the view frees it), or NULL with a message in err.
	 * Called on the UI thread; it may take a moment. */
	char *(*run_check)(void *ctx, const Analysis *a, const char *name, const char *node,
	                   const char *wclass, char *err, size_t errsz);
	/* 1 when a newer diagnosis is ready than the one on screen: the loop
	 * then redraws, so the board and the header's budgets appear without a
	 * key press. May be NULL. */
	int (*ready)(void *ctx);
	/* A descriptor that becomes readable when ready() may have changed
	 * (ready() empties it): the loop polls it with the keyboard, so a
	 * finished diagnosis is drawn at once, not at the next tick. -1 or a
	 * NULL callback: ready() is asked on every tick only. */
	int (*wait_fd)(void *ctx);
	void *ctx;
} TuiBoard;

#endif
