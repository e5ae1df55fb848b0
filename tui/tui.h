/*
 * tui.h - the interactive dashboard: entry point for `tailtriage tui` and
 * `tailtriage demo`.
 *
 * tui_run() opens the database read-only through a live session
 * (analysis/live.h), takes over the terminal with ncurses, and runs until
 * the user quits. Analysis runs on a background thread; the screen keeps
 * showing the previous result while a new one is computed, so keys stay
 * responsive on large databases. It never prints: errors come back in err.
 */
#ifndef TT_TUI_H
#define TT_TUI_H

#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>

#include "analysis.h"
#include "err.h"
#include "evidence.h"
#include "model.h"
#include "period.h"

/* Supplies an evidence value (DESIGN.md names such as "ingress.p99_ms",
 * "pool.profile.occupancy") for the budget line of the header. Returns 1
 * and sets *value and *unit (the evidence's unit, "ms", "ratio", ...;
 * static or owned by the provider) when known, 0 when not. Called on the
 * UI thread, with the Analysis currently shown (never NULL). The TUI itself
 * knows "ingress.p99_ms" and "ingress.p99_ms@baseline"; a provider from the
 * metrics/diagnosis layer fills in the rest. The verdict and the way the
 * value is written come from analysis/ (budget_judge(),
 * budgets_format_value()), as in `report` and `diagnose`. */
typedef int (*TuiEvidenceFn)(void *ctx, const Analysis *a, const char *name, double *value,
                             const char **unit);

typedef struct TuiOptions {
	const char *db_path;        /* required */
	const Model *model;         /* borrowed for the whole run; NULL: none */
	Period period;              /* window (open sides: all data) and baseline */
	const char *ep_service;     /* the endpoint to open (analysis/endpoints.h), */
	const char *ep_route;       /* NULL: the default one */
	const char *wclass;         /* only this workload class, NULL: all */
	SkewTolerance skew;         /* sibling skew tolerance; zero: the default */
	int refresh_ms;             /* live tick; <= 0 means 1000 */
	int ascii;                  /* ASCII line drawing and bars */
	int no_color;               /* monochrome even on a colour terminal
	                             * (the NO_COLOR variable also does this) */
	const char *latency_log;    /* append timing lines (bench), or NULL */
	TuiEvidenceFn evidence;     /* extra budget evidence, or NULL */
	/* A budget judged on the provider's evidence (budget_judge(): the
	 * figure's interval and source, so the header says "may be breached"
	 * with the same reason as `diagnose`): 1 and *out when it has a figure,
	 * 0 when not (then the header falls back on `evidence`, a value
	 * taken as exact). Called on the UI thread with the evidence context;
	 * out->ev is not read after the call. NULL: none. */
	int (*budget)(void *ctx, const Analysis *a, const ModelBudget *b, BudgetResult *out);
	/* 1 while the provider is still computing the evidence for the
	 * analysis on screen (the header then says "evaluating..." instead of
	 * counting the budgets it cannot evaluate); NULL: never. Called on
	 * the UI thread with the evidence context. */
	int (*evidence_pending)(void *ctx, const Analysis *a);
	void *evidence_ctx;
	/* Extra text for the status line, asked for on every tick (e.g. the
	 * receiver's counters with `tui --listen`): writes a NUL-terminated
	 * string of at most n bytes into buf ("" for none). Called on the UI
	 * thread; NULL: none. (added by "live") */
	void (*status_extra)(void *ctx, char *buf, size_t n);
	void *status_ctx;
	/* Training mode (`drill train`): the Drill pane's content and its
	 * scorer (tui_drill.h), borrowed; NULL: no Drill pane. (added by
	 * "drills") */
	const struct TuiDrill *drill;
	/* The hypothesis board (tui_board.h): ranked hypotheses, checks and
	 * decisions from the diagnosis engine, borrowed; NULL: no Board pane.
	 * (added by "diag") */
	const struct TuiBoard *board;
	/* Where the model (when model->inferred, drafted from the data) and
	 * the data disagree (analysis/model_infer.h), borrowed; shown in the
	 * title row and the node pane. model_out: file the 'M' key writes the
	 * model to (NULL: "tailtriage.model.json"); an existing file is never
	 * overwritten. (added by "infer") */
	const struct ModelFinding *model_findings;
	int n_model_findings;
	const char *model_out;
	/* A model to use from now on instead of the one in use (a model
	 * inferred again from the data that arrived since the start), or
	 * NULL: asked on the UI thread with the analysis on screen (never
	 * NULL) on every tick and with every new analysis. The model is
	 * borrowed for the rest of the run. NULL callback: the model never
	 * changes. */
	const Model *(*model_update)(void *ctx, const Analysis *a);
	void *model_ctx;
	/* Set to non-zero from another thread to end the dashboard as if the
	 * user had pressed q (within one tick); NULL: only the user ends it. */
	atomic_int *quit;
} TuiOptions;

/* Runs the dashboard until the user quits. Returns 0, or a negative code
 * with err set (database cannot be opened, no terminal, ...). */
int tui_run(const TuiOptions *opt, Err *err);

#endif
