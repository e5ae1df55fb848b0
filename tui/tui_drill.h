/*
 * tui_drill.h - what the dashboard needs to run a drill in training mode
 * (`tailtriage drill train ID` on a terminal): plain text and choice lists,
 * and a callback that scores. The TUI never reads drill files or scores by
 * itself (it links neither cJSON nor the drills library); the caller
 * (cli/cmd_drill.c) fills this in from drills/drill.h and drills/score.h.
 *
 * Everything is borrowed for the whole tui_run().
 */
#ifndef TT_TUI_DRILL_H
#define TT_TUI_DRILL_H

#include <stddef.h>

typedef struct TuiDrillChoice {
	const char *id;           /* "client-pool-wait:pricing" */
	const char *text;         /* label, or NULL */
} TuiDrillChoice;

typedef struct TuiDrill {
	const char *id;
	const char *title;
	const char *brief;        /* paragraphs separated by blank lines */
	int discussion;           /* 1: prompt + model answer + self-assessment */
	const char *prompt;       /* discussion question */
	const char *model_answer; /* shown after the trainee asks for it */

	int rank;                 /* hypotheses to rank */
	const TuiDrillChoice *hyps;
	int n_hyps;
	const TuiDrillChoice *checks;
	int n_checks;
	const TuiDrillChoice *decisions;
	int n_decisions;
	const TuiDrillChoice *points;   /* checklist (discussion): id, point text */
	int n_points;

	const char *const *hints;
	const double *hint_costs;
	int n_hints;

	/* Scores answers given as JSON text in the answers-file format
	 * (docs/drills.md) and returns the explanation to show (malloc'd, the
	 * view frees it), or NULL with a message in err (at least 256 bytes).
	 * Called on the UI thread; it may take a moment. */
	char *(*submit)(void *ctx, const char *answers_json, char *err, size_t errsz);
	void *ctx;
} TuiDrill;

#endif
