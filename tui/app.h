/*
 * app.h - the dashboard's state and its pure parts: key dispatch and frame
 * drawing, without a terminal or a database.
 *
 * The loop (tui.c) owns the effects: it feeds keys to app_key(), performs
 * what the returned reaction flags ask for (recompute the analysis with
 * app_options(), load app->want_trace), hands results back with
 * app_set_analysis()/app_set_trace(), and draws one frame per iteration with
 * app_draw(). Tests drive the same functions headless and compare the
 * canvas with golden files.
 *
 * Views (view.h) are a small vtable; handlers return REACT_* flags and never
 * draw.
 */
#ifndef TT_APP_H
#define TT_APP_H

#include <stdint.h>

#include "analysis.h"
#include "canvas.h"
#include "keymap.h"
#include "period.h"
#include "tui.h"

enum {
	REACT_NONE = 0,
	REACT_REDRAW = 1 << 0,   /* the frame changed */
	REACT_RELOAD = 1 << 1,   /* analysis options changed: recompute */
	REACT_QUIT = 1 << 2,
	REACT_TRACE = 1 << 3,    /* load app->want_trace for the waterfall */
	REACT_PAUSE = 1 << 4,    /* live updates paused or resumed */
};

enum { PANE_DAG, PANE_NODE, PANE_OWNER, PANE_TRACE, PANE_DRILL, PANE_BOARD, PANE_ENDPOINTS,
       PANE_COUNT };

enum { PROMPT_NONE, PROMPT_FILTER, PROMPT_WINDOW, PROMPT_BASELINE, PROMPT_TRACE };

/* Smallest terminal the screens are laid out for. */
#define TUI_MIN_W 60
#define TUI_MIN_H 16

typedef struct View View;

typedef struct Prompt {
	int kind;                /* PROMPT_* */
	char text[128];          /* what was typed (printable ASCII) */
	int len;
	char saved_filter[128];  /* filter before the prompt opened (Esc restores) */
} Prompt;

typedef struct TuiApp {
	/* from the options (borrowed) */
	const Model *model;
	int ascii;
	int refresh_ms;
	TuiEvidenceFn evidence;
	int (*budget)(void *ctx, const Analysis *a, const ModelBudget *b, BudgetResult *out);
	int (*evidence_pending)(void *ctx, const Analysis *a);
	void *evidence_ctx;
	const struct TuiDrill *drill; /* NULL: no Drill pane (added by "drills") */
	const struct TuiBoard *board; /* NULL: no Board pane (added by "diag") */
	int board_sealed;             /* training: the Board shows the engine's
	                               * answer, so it stays closed until the
	                               * trainee has submitted (view_drill.c) */
	const struct ModelFinding *model_findings; /* model vs data (added by "infer") */
	int n_model_findings;
	const char *model_out;        /* file the write-model key writes */

	/* analysis options the user asked for */
	char *ep_service;        /* the endpoint (owned), NULL: the default one */
	char *ep_route;
	Period period;           /* window and baseline */
	char *wclass;            /* owned; NULL: all classes */
	SkewTolerance skew;      /* sibling skew tolerance (zero: the default) */
	unsigned opt_gen;        /* bumped whenever the options change */

	/* data on screen */
	Analysis *a;             /* one hold (analysis_ref()); the Board's
	                          * diagnosis may hold it too; NULL until the
	                          * first result */
	unsigned a_gen;          /* opt_gen the analysis was computed for */
	struct EndpointList *endpoints; /* owned: every endpoint of the window,
	                          * ranked (analysis/endpoints.h), with the
	                          * latest exact analysis; NULL until then */
	TraceView *trace;        /* owned; the waterfall's trace, or NULL */
	char want_trace[33];     /* with REACT_TRACE: trace to load */
	int sel_node;            /* selected DAG node id */
	char *sel_key;           /* its identity across recomputes (owned) */
	char filter[128];        /* DAG name filter, "" none */
	int64_t data_end_ns;     /* latest data end seen (for "last 5m") */

	/* live state (the loop sets these) */
	int paused;
	int stale;               /* paused while the data changed: not shown yet */
	int computing;           /* a recompute is running */
	int64_t changed_at_s;    /* wall clock of the last data change seen, 0 never */
	int64_t now_s;           /* wall clock for the status line */
	double compute_ms;       /* duration of the last analysis */
	double busy_ms;          /* how long the running analysis has taken so far */
	char status[256];        /* transient message */
	int status_error;
	char extra[128];         /* TuiOptions.status_extra text, "" none */

	/* panes */
	View *views[PANE_COUNT];
	int pane;                /* PANE_* shown */
	int last_key;            /* the key being handled (for actions bound to several) */
	int history[32];         /* panes to go back to with Esc */
	int n_history;
	int view_w, view_h;      /* size of the pane rectangle last drawn */
	int help;                /* help screen open */
	int help_scroll;
	Prompt prompt;
} TuiApp;

/* Initializes app from opt (the model and the evidence callback are
 * borrowed). */
void app_init(TuiApp *app, const TuiOptions *opt);
void app_fini(TuiApp *app);

/* Handles one key (code point or TK_*). Returns REACT_* flags. */
int app_key(TuiApp *app, int key);

/* The analysis options for the current request (strings borrowed from
 * app, valid until the next app_key()). */
void app_options(const TuiApp *app, AnalysisOptions *out);

/* Takes over the caller's hold on a (may be NULL to clear) and drops the
 * hold on the previous one (others, such as the Board's diagnosis, may
 * still hold it: analysis_free() frees it with the last), computed for options
 * generation gen; keeps the selected node when it still exists. */
void app_set_analysis(TuiApp *app, Analysis *a, unsigned gen);

/* Uses model m from now on (borrowed for the app's life): the analysis
 * on screen is of the old one, so the next request is a new question
 * (opt_gen moves); the model's findings are dropped (m is a draft from
 * the data, which has none). The title row names the model in use. */
void app_set_model(TuiApp *app, const Model *m);

/* Takes ownership of l (may be NULL: the previous list stays), the
 * endpoints of the latest exact analysis. */
void app_set_endpoints(TuiApp *app, struct EndpointList *l);

/* The row of app->endpoints the endpoint on screen is, or -1. */
int app_endpoint_index(const TuiApp *app);

/* Shows endpoint i of app->endpoints: REACT_RELOAD | REACT_REDRAW, or
 * REACT_NONE when it is already on screen or there is no such row. */
int app_switch_endpoint(TuiApp *app, int i);

/* Takes ownership of t and shows the waterfall pane. */
void app_set_trace(TuiApp *app, TraceView *t);

/* Sets the transient status message (error != 0 shows it as an error). */
void app_set_status(TuiApp *app, int error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Draws the whole frame into cv (cleared first). */
void app_draw(TuiApp *app, Canvas *cv);

/* Switches to pane, remembering the current one for Esc. */
void app_open_pane(TuiApp *app, int pane);

/* A node's identity that survives recomputes (ids are pre-order positions
 * and shift when nodes appear): types, services and operations from it up
 * to the root. Returns a malloc'd string. */
char *app_node_key(const Analysis *a, int id);

/* Selects node id of the current analysis (clamped). */
void app_select_node(TuiApp *app, int id);

/* Evaluates an evidence name against the analysis on screen: 1 and *v
 * when known. Uses the options' evidence callback for names the TUI does
 * not compute itself. */
int app_evidence(const TuiApp *app, const char *name, double *v);

/* 1 while evidence for the header is still being computed: the analysis
 * itself, or the provider's values for it. */
int app_evidence_pending(const TuiApp *app);
/* The same, also giving the value's unit ("ms", "ratio", ...; NULL when the
 * provider did not say). */
int app_evidence_unit(const TuiApp *app, const char *name, double *v, const char **unit);

/* Judges budget b for the header (analysis/budgets.c's rule): the p99 of
 * the analysis on screen with its interval, the rest from the provider's
 * budget callback, else from its evidence values (taken as exact). Fills
 * *out (out->ev is NULL); returns out->state, BUDGET_UNKNOWN when no
 * figure is known. */
int app_budget(const TuiApp *app, const ModelBudget *b, BudgetResult *out);

#endif
