/*
 * app.c - dashboard state and key dispatch.
 *
 * A key goes, in order, to: the open prompt (text entry), the help screen,
 * the global handler table below, and finally the active view. Handlers
 * change state and return REACT_* flags; they never draw. Drawing is
 * app_draw() in screen.c, called once per loop iteration.
 */
#include "app.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "endpoints.h"
#include "model_infer.h"
#include "sanitize.h"
#include "timefmt.h"
#include "view.h"

/* ---- node identity across recomputes ----------------------------------- */

/* A node's key: type, service and operation of it and its ancestors. Node
 * ids are pre-order positions and shift when new nodes appear; the key
 * does not. */
char *app_node_key(const Analysis *a, int id)
{
	Buf b;
	buf_init(&b);
	for (int i = id; i >= 0 && i < a->n_nodes; i = a->nodes[i].parent) {
		const DagNode *d = &a->nodes[i];
		buf_printf(&b, "%d\x1f%s\x1f%s\x1e", d->type, d->service ? d->service : "",
		           d->operation ? d->operation : "");
	}
	char *k = xstrdup(buf_str(&b));
	buf_fini(&b);
	return k;
}

void app_select_node(TuiApp *app, int id)
{
	if (app->a == NULL || app->a->n_nodes == 0) {
		app->sel_node = 0;
		return;
	}
	if (id < 0)
		id = 0;
	if (id >= app->a->n_nodes)
		id = app->a->n_nodes - 1;
	app->sel_node = id;
	free(app->sel_key);
	app->sel_key = app_node_key(app->a, id);
}

/* ---- the panes ---------------------------------------------------------- */

static View *make_dag(const TuiOptions *o) { (void)o; return view_dag_new(); }
static View *make_node(const TuiOptions *o) { (void)o; return view_node_new(); }
static View *make_owner(const TuiOptions *o) { (void)o; return view_owner_new(); }
static View *make_trace(const TuiOptions *o) { (void)o; return view_trace_new(); }
static View *make_drill(const TuiOptions *o) { return view_drill_new(o->drill); }
static View *make_board(const TuiOptions *o) { return view_board_new(o->board); }
static View *make_endpoints(const TuiOptions *o) { (void)o; return view_endpoints_new(); }

static int has_trace(const TuiApp *app) { return app->trace != NULL; }
static int has_drill(const TuiApp *app) { return app->drill != NULL; }
static int has_board(const TuiApp *app) { return app->board != NULL; }

/* Every pane, in tab order: its number in the tab bar (and its digit key)
 * is its position + 1. The tab bar, the digit keys, Tab and the help
 * screen are all driven by this table and the panes' ViewOps (title and
 * keys); a new pane is one row here and one constructor. */
static const struct PaneDef {
	View *(*make)(const TuiOptions *opt);
	int (*available)(const TuiApp *app);   /* NULL: always */
	const char *why_not;                   /* said when its digit finds it closed */
} panes[PANE_COUNT] = {
	[PANE_DAG] = {make_dag, NULL, NULL},
	[PANE_NODE] = {make_node, NULL, NULL},
	[PANE_OWNER] = {make_owner, NULL, NULL},
	[PANE_TRACE] = {make_trace, has_trace,
	                "no trace open: Enter on a slowest trace in the node pane, or t and a trace id"},
	[PANE_DRILL] = {make_drill, has_drill, "the Drill pane is there in 'tailtriage drill train'"},
	[PANE_BOARD] = {make_board, has_board,
	                "the Board needs the diagnosis engine (tailtriage tui with a database)"},
	[PANE_ENDPOINTS] = {make_endpoints, NULL, NULL},
};

int app_pane_available(const TuiApp *app, int pane)
{
	if (pane < 0 || pane >= PANE_COUNT)
		return 0;
	return panes[pane].available == NULL || panes[pane].available(app);
}

void app_pane_label(const TuiApp *app, int pane, char *out, unsigned sz)
{
	const char *title = app->views[pane]->ops->title;
	char extra[64] = "";
	if (pane == PANE_NODE) {
		const char *n = (app->a && app->a->n_nodes) ? app->a->nodes[app->sel_node].label : "-";
		char nm[48];
		if (san_width(n) > 18) {
			/* cut names end in an ellipsis, as everywhere on the canvas */
			int k = san_copy(n, nm, sizeof nm - 4, 17);
			(void)k;
			strcat(nm, app->ascii ? "~" : "\xe2\x80\xa6");
		} else {
			san_copy(n, nm, sizeof nm, 18);
		}
		snprintf(extra, sizeof extra, " %s", nm);
	} else if (pane == PANE_TRACE) {
		if (app->trace)
			snprintf(extra, sizeof extra, " %.8s", app->trace->trace_id);
		else
			snprintf(extra, sizeof extra, " (none)");
	}
	snprintf(out, sz, "%d %s%s", pane + 1, title, extra);
}

/* ---- lifecycle --------------------------------------------------------- */

void app_init(TuiApp *app, const TuiOptions *opt)
{
	memset(app, 0, sizeof *app);
	app->model = opt->model;
	app->model_findings = opt->model_findings;
	app->n_model_findings = opt->n_model_findings;
	app->model_out = opt->model_out ? opt->model_out : "tailtriage.model.json";
	app->ascii = opt->ascii;
	app->refresh_ms = opt->refresh_ms > 0 ? opt->refresh_ms : 1000;
	app->evidence = opt->evidence;
	app->budget = opt->budget;
	app->evidence_pending = opt->evidence_pending;
	app->evidence_ctx = opt->evidence_ctx;
	app->period = opt->period;
	app->wclass = opt->wclass ? xstrdup(opt->wclass) : NULL;
	if (opt->ep_service && opt->ep_route) {
		app->ep_service = xstrdup(opt->ep_service);
		app->ep_route = xstrdup(opt->ep_route);
	}
	app->skew = opt->skew;
	app->opt_gen = 1;
	/* the model and the data disagree: say the first thing at once (the
	 * title row keeps the count, the node pane the pool's own findings) */
	if (app->n_model_findings > 0) {
		int more = app->n_model_findings - 1;
		app_set_status(app, 1, "model vs data: %s%s", app->model_findings[0].text,
		               more ? " (more: tailtriage model check)" : "");
	}
	app->drill = opt->drill;
	app->board = opt->board;
	app->board_sealed = opt->drill && opt->board;
	for (int p = 0; p < PANE_COUNT; p++)
		app->views[p] = panes[p].make(opt);
	app->pane = opt->drill ? PANE_DRILL : PANE_DAG;
}

void app_fini(TuiApp *app)
{
	for (int i = 0; i < PANE_COUNT; i++)
		if (app->views[i])
			app->views[i]->ops->free(app->views[i]);
	analysis_free(app->a);
	trace_view_free(app->trace);
	free(app->wclass);
	free(app->ep_service);
	free(app->ep_route);
	analysis_endpoints_free(app->endpoints);
	free(app->sel_key);
	memset(app, 0, sizeof *app);
}

/* Does the model describe the endpoint asked for? A model names the one
 * endpoint it is of (its root): another is shown without it. */
static int model_applies(const TuiApp *app)
{
	const Model *m = app->model;
	return m == NULL || m->root_service == NULL || m->root_operation == NULL ||
	       app->ep_service == NULL ||
	       (strcmp(m->root_service, app->ep_service) == 0 &&
	        strcmp(m->root_operation, app->ep_route) == 0);
}

void app_options(const TuiApp *app, AnalysisOptions *out)
{
	memset(out, 0, sizeof *out);
	out->period = app->period;
	out->wclass = app->wclass;
	out->model = model_applies(app) ? app->model : NULL;
	out->skew = app->skew;
	out->ep_service = app->ep_service;
	out->ep_route = app->ep_route;
}

void app_set_endpoints(TuiApp *app, EndpointList *l)
{
	if (l == NULL)
		return;
	analysis_endpoints_free(app->endpoints);
	app->endpoints = l;
}

int app_endpoint_index(const TuiApp *app)
{
	const EndpointList *l = app->endpoints;
	const char *svc = app->ep_service, *route = app->ep_route;
	if (svc == NULL && app->a) {
		svc = app->a->root_service;
		route = app->a->root_operation;
	}
	return l && svc ? analysis_endpoints_find(l, svc, route) : -1;
}

int app_switch_endpoint(TuiApp *app, int i)
{
	const EndpointList *l = app->endpoints;
	if (l == NULL || i < 0 || i >= l->n || i == app_endpoint_index(app))
		return REACT_NONE;
	const Endpoint *e = &l->v[i];
	free(app->ep_service);
	free(app->ep_route);
	app->ep_service = xstrdup(e->service);
	app->ep_route = xstrdup(e->route);
	app->opt_gen++;
	char name[256];
	san_copy(e->name, name, sizeof name, 80);
	app_set_status(app, 0, "endpoint %d of %d: %s%s", i + 1, l->n, name,
	               model_applies(app) || app->model == NULL ? ""
	               : app->model->inferred ? " (a model is drafted for it)"
	                                      : " (the model describes another: none)");
	return REACT_RELOAD | REACT_REDRAW;
}

void app_set_status(TuiApp *app, int error, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(app->status, sizeof app->status, fmt, ap);
	va_end(ap);
	app->status_error = error;
}

void app_set_model(TuiApp *app, const Model *m)
{
	app->model = m;
	app->model_findings = NULL;
	app->n_model_findings = 0;
	app->opt_gen++;
}

void app_set_analysis(TuiApp *app, Analysis *a, unsigned gen)
{
	analysis_free(app->a);
	app->a = a;
	app->a_gen = gen;
	if (a == NULL)
		return;
	if (app->period.win.to == INT64_MAX && a->pop[POP_WINDOW].to_ns > app->data_end_ns)
		app->data_end_ns = a->pop[POP_WINDOW].to_ns;
	int found = -1;
	if (app->sel_key) {
		for (int i = 0; i < a->n_nodes && found < 0; i++) {
			char *k = app_node_key(a, i);
			if (strcmp(k, app->sel_key) == 0)
				found = i;
			free(k);
		}
	}
	app_select_node(app, found >= 0 ? found : 0);
}

void app_set_trace(TuiApp *app, TraceView *t)
{
	trace_view_free(app->trace);
	app->trace = t;
	if (t)
		app_open_pane(app, PANE_TRACE);
}

void app_open_pane(TuiApp *app, int pane)
{
	if (pane == app->pane)
		return;
	if (app->n_history == (int)(sizeof app->history / sizeof app->history[0])) {
		memmove(app->history, app->history + 1, sizeof app->history - sizeof app->history[0]);
		app->n_history--;
	}
	app->history[app->n_history++] = app->pane;
	app->pane = pane;
}

/* ---- evidence for budgets ---------------------------------------------- */

int app_evidence_unit(const TuiApp *app, const char *name, double *v, const char **unit)
{
	const Analysis *a = app->a;
	*unit = NULL;
	if (a == NULL || a->approx)
		return 0; /* budgets are judged on exact figures: "evaluating..." */
	if (strcmp(name, "ingress.p99_ms") == 0) {
		if (a->pop[POP_WINDOW].ingress.n == 0)
			return 0;
		*v = a->pop[POP_WINDOW].ingress.p99;
		*unit = "ms";
		return 1;
	}
	if (strcmp(name, "ingress.p99_ms@baseline") == 0) {
		if (!a->pop[POP_BASELINE].present || a->pop[POP_BASELINE].ingress.n == 0)
			return 0;
		*v = a->pop[POP_BASELINE].ingress.p99;
		*unit = "ms";
		return 1;
	}
	if (app->evidence)
		return app->evidence(app->evidence_ctx, a, name, v, unit);
	return 0;
}

int app_budget(const TuiApp *app, const ModelBudget *b, BudgetResult *out)
{
	memset(out, 0, sizeof *out);
	out->budget = b;
	out->state = BUDGET_UNKNOWN;
	out->value = out->lo = out->hi = NAN;
	const Analysis *a = app->a;
	if (b->evidence == NULL || a == NULL || a->approx)
		return out->state; /* budgets are judged on exact figures: "evaluating..." */
	/* the p99 on screen, with its order-statistics interval */
	int base = strcmp(b->evidence, "ingress.p99_ms@baseline") == 0;
	if (base || strcmp(b->evidence, "ingress.p99_ms") == 0) {
		const PopSummary *ps = &a->pop[base ? POP_BASELINE : POP_WINDOW];
		if ((base && !ps->present) || ps->ingress.n == 0)
			return out->state;
		budget_judge_figure(b, ps->ingress.p99, ps->ingress.p99_lo, ps->ingress.p99_hi, 1, "ms",
		                    out);
		snprintf(out->source, sizeof out->source, "spans, %lld requests",
		         (long long)ps->ingress.n);
		out->src = EV_SRC_SPANS;
		out->n = ps->ingress.n;
		return out->state;
	}
	if (app->budget) {
		BudgetResult r;
		memset(&r, 0, sizeof r);
		if (app->budget(app->evidence_ctx, a, b, &r)) {
			*out = r;
			out->budget = b;
			out->ev = NULL;
			return out->state;
		}
	}
	double v;
	const char *unit = NULL;
	if (app->evidence && app->evidence(app->evidence_ctx, a, b->evidence, &v, &unit))
		budget_judge_figure(b, v, NAN, NAN, 0, unit, out);
	return out->state;
}

int app_evidence(const TuiApp *app, const char *name, double *v)
{
	const char *unit;
	return app_evidence_unit(app, name, v, &unit);
}

int app_evidence_pending(const TuiApp *app)
{
	if (app->a == NULL)
		return app->computing;
	if (app->a->approx)
		return 1; /* the exact analysis is on its way, and the budgets with it */
	return app->evidence_pending && app->evidence_pending(app->evidence_ctx, app->a);
}

/* ---- prompts ----------------------------------------------------------- */

static void prompt_open(TuiApp *app, int kind)
{
	memset(&app->prompt, 0, sizeof app->prompt);
	app->prompt.kind = kind;
	snprintf(app->prompt.saved_filter, sizeof app->prompt.saved_filter, "%s", app->filter);
	if (kind == PROMPT_FILTER) {
		snprintf(app->prompt.text, sizeof app->prompt.text, "%s", app->filter);
		app->prompt.len = (int)strlen(app->prompt.text);
	}
	app->status[0] = '\0';
}

/* "5m", "90s", "2h", "1d", "500ms" -> ns; optional "last " or "-" prefix.
 * Returns 0 or -1. */
static int parse_relative(const char *s, int64_t *ns)
{
	while (*s == ' ')
		s++;
	if (strncmp(s, "last", 4) == 0)
		s += 4;
	while (*s == ' ' || *s == '-')
		s++;
	char *end;
	double v = strtod(s, &end);
	if (end == s || v <= 0)
		return -1;
	double mul;
	if (strcmp(end, "ms") == 0)
		mul = 1e6;
	else if (strcmp(end, "s") == 0)
		mul = 1e9;
	else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
		mul = 60e9;
	else if (strcmp(end, "h") == 0)
		mul = 3600e9;
	else if (strcmp(end, "d") == 0)
		mul = 86400e9;
	else
		return -1;
	double r = v * mul;
	if (r > 9e18)
		return -1;
	*ns = (int64_t)r;
	return 0;
}

/* Current window bounds with open ends resolved from the data. */
static void window_bounds(const TuiApp *app, int64_t *from, int64_t *to)
{
	*from = app->period.win.from;
	*to = app->period.win.to;
	if (app->a) {
		if (*from == INT64_MIN)
			*from = app->a->pop[POP_WINDOW].from_ns;
		if (*to == INT64_MAX)
			*to = app->a->pop[POP_WINDOW].to_ns;
	}
}

static int prompt_apply(TuiApp *app)
{
	Prompt *p = &app->prompt;
	char text[128];
	const char *s = p->text;
	while (*s == ' ')
		s++;
	snprintf(text, sizeof text, "%s", s);
	for (int n = (int)strlen(text); n > 0 && text[n - 1] == ' '; n--)
		text[n - 1] = '\0';
	Err err = {0};
	int64_t from, to, len;
	if (p->kind == PROMPT_FILTER) {
		snprintf(app->filter, sizeof app->filter, "%s", text);
		p->kind = PROMPT_NONE;
		return REACT_REDRAW;
	}
	if (p->kind == PROMPT_TRACE) {
		/* 32 hex digits, as every importer stores them (lowercase) */
		size_t n = strlen(text);
		int ok = n == 32;
		for (size_t i = 0; i < n && ok; i++)
			ok = isxdigit((unsigned char)text[i]);
		if (!ok) {
			app_set_status(app, 1, "trace id: 32 hex digits, not '%.40s'", text);
			return REACT_REDRAW;
		}
		for (size_t i = 0; i < n; i++)
			app->want_trace[i] = (char)tolower((unsigned char)text[i]);
		app->want_trace[n] = '\0';
		p->kind = PROMPT_NONE;
		app->status[0] = '\0';
		return REACT_TRACE | REACT_REDRAW;
	}
	if (p->kind == PROMPT_WINDOW) {
		if (text[0] == '\0' || strcmp(text, "all") == 0) {
			from = INT64_MIN;
			to = INT64_MAX;
		} else if (parse_relative(text, &len) == 0) {
			int64_t end = app->data_end_ns;
			if (end == 0) {
				int64_t f;
				window_bounds(app, &f, &end);
			}
			if (end == 0 || end == INT64_MAX) {
				app_set_status(app, 1, "window: data end not known yet; type A..B");
				return REACT_REDRAW;
			}
			from = end - len;
			to = INT64_MAX; /* follow new data */
		} else if (time_parse_range(text, &from, &to, &err)) {
			app_set_status(app, 1, "window: %s", err.msg);
			return REACT_REDRAW;
		}
		app->period.win.from = from;
		app->period.win.to = to;
	} else {
		if (strcmp(text, "none") == 0 || text[0] == '\0') {
			app->period.has_baseline = 0;
		} else if (strcmp(text, "before") == 0 || strcmp(text, "prev") == 0) {
			int64_t wf, wt;
			window_bounds(app, &wf, &wt);
			if (wf == INT64_MIN || wt == INT64_MAX || wt <= wf) {
				app_set_status(app, 1, "baseline: window bounds not known yet");
				return REACT_REDRAW;
			}
			app->period.has_baseline = 1;
			app->period.base = time_range_before((TimeRange){wf, wt});
		} else if (time_parse_range(text, &from, &to, &err)) {
			app_set_status(app, 1, "baseline: %s", err.msg);
			return REACT_REDRAW;
		} else {
			app->period.has_baseline = 1;
			app->period.base.from = from;
			app->period.base.to = to;
		}
	}
	p->kind = PROMPT_NONE;
	app->status[0] = '\0';
	app->opt_gen++;
	return REACT_RELOAD | REACT_REDRAW;
}

static int prompt_key(TuiApp *app, int key)
{
	Prompt *p = &app->prompt;
	if (key == TK_ESC) {
		if (p->kind == PROMPT_FILTER)
			snprintf(app->filter, sizeof app->filter, "%s", p->saved_filter);
		p->kind = PROMPT_NONE;
		app->status[0] = '\0';
		return REACT_REDRAW;
	}
	if (key == TK_ENTER || key == '\n')
		return prompt_apply(app);
	if (key == TK_BACKSPACE || key == 8) {
		if (p->len > 0)
			p->text[--p->len] = '\0';
	} else if (key >= 32 && key < 127 && p->len + 1 < (int)sizeof p->text) {
		p->text[p->len++] = (char)key;
		p->text[p->len] = '\0';
	} else {
		return REACT_NONE;
	}
	app->status[0] = '\0';
	if (p->kind == PROMPT_FILTER) /* the DAG filters as you type */
		snprintf(app->filter, sizeof app->filter, "%s", p->text);
	return REACT_REDRAW;
}

/* ---- global handlers --------------------------------------------------- */

static int act_help(TuiApp *app)
{
	app->help = !app->help;
	app->help_scroll = 0;
	return REACT_REDRAW;
}

static int act_quit(TuiApp *app)
{
	(void)app;
	return REACT_QUIT;
}

static int cycle_pane(TuiApp *app, int dir)
{
	int p = app->pane;
	for (int i = 0; i < PANE_COUNT; i++) {
		p = (p + dir + PANE_COUNT) % PANE_COUNT;
		if (app_pane_available(app, p))
			break;
	}
	app->pane = p;
	app->n_history = 0; /* Tab is not navigation history */
	return REACT_REDRAW;
}

static int act_next_pane(TuiApp *app)
{
	return cycle_pane(app, 1);
}

static int act_prev_pane(TuiApp *app)
{
	return cycle_pane(app, -1);
}

/* A digit: the pane with that number in the tab bar, when it is open. */
static int act_goto_pane(TuiApp *app)
{
	int p = app->last_key - '1';
	if (p < 0 || p >= PANE_COUNT)
		return REACT_NONE;
	if (!app_pane_available(app, p)) {
		app_set_status(app, 0, "%s", panes[p].why_not ? panes[p].why_not : "that pane is not open");
		return REACT_REDRAW;
	}
	app->pane = p;
	app->n_history = 0;
	return REACT_REDRAW;
}

static int act_back(TuiApp *app)
{
	if (app->n_history > 0) {
		app->pane = app->history[--app->n_history];
		return REACT_REDRAW;
	}
	if (app->filter[0]) {
		app->filter[0] = '\0';
		return REACT_REDRAW;
	}
	if (app->pane != PANE_DAG) {
		app->pane = PANE_DAG;
		return REACT_REDRAW;
	}
	return REACT_NONE;
}

static int act_class(TuiApp *app)
{
	char **classes = NULL;
	int n = 0;
	if (app->a && app->a->n_classes) {
		classes = app->a->classes;
		n = app->a->n_classes;
	} else if (app->model) {
		classes = app->model->classes;
		n = app->model->n_classes;
	}
	if (n == 0) {
		app_set_status(app, 0, "no workload classes in the data");
		return REACT_REDRAW;
	}
	int cur = -1;
	for (int i = 0; app->wclass && i < n; i++)
		if (strcmp(classes[i], app->wclass) == 0)
			cur = i;
	int next = cur + 1; /* -1 -> 0 ... n-1 -> n (= all) */
	free(app->wclass);
	app->wclass = next < n ? xstrdup(classes[next]) : NULL;
	app->opt_gen++;
	app->status[0] = '\0';
	return REACT_RELOAD | REACT_REDRAW;
}

static int act_window(TuiApp *app)
{
	prompt_open(app, PROMPT_WINDOW);
	return REACT_REDRAW;
}

static int act_baseline(TuiApp *app)
{
	prompt_open(app, PROMPT_BASELINE);
	return REACT_REDRAW;
}

static int act_pause(TuiApp *app)
{
	app->paused = !app->paused;
	return REACT_PAUSE | REACT_REDRAW;
}

static int act_trace_id(TuiApp *app)
{
	prompt_open(app, PROMPT_TRACE);
	return REACT_REDRAW;
}

static int act_endpoints(TuiApp *app)
{
	app_open_pane(app, PANE_ENDPOINTS);
	return REACT_REDRAW;
}

/* One keystroke to the neighbouring endpoint of the ranked list. */
static int step_endpoint(TuiApp *app, int dir)
{
	const EndpointList *l = app->endpoints;
	if (l == NULL || l->n == 0) {
		app_set_status(app, 0, "no endpoint list yet");
		return REACT_REDRAW;
	}
	if (l->n == 1) {
		app_set_status(app, 0, "the only endpoint of the window is on screen");
		return REACT_REDRAW;
	}
	int i = app_endpoint_index(app);
	i = i < 0 ? 0 : (i + dir + l->n) % l->n;
	return app_switch_endpoint(app, i);
}

static int act_prev_endpoint(TuiApp *app)
{
	return step_endpoint(app, -1);
}

static int act_next_endpoint(TuiApp *app)
{
	return step_endpoint(app, 1);
}

static int act_filter(TuiApp *app)
{
	if (app->pane != PANE_DAG)
		app_open_pane(app, PANE_DAG);
	prompt_open(app, PROMPT_FILTER);
	return REACT_REDRAW;
}

/* Writes the model in use to app->model_out, never over an existing file. */
static int act_write_model(TuiApp *app)
{
	if (app->model == NULL) {
		app_set_status(app, 1, "no model to write");
		return REACT_REDRAW;
	}
	FILE *f = fopen(app->model_out, "wx");
	if (f == NULL) {
		app_set_status(app, 1, "cannot write %s: %s", app->model_out, strerror(errno));
		return REACT_REDRAW;
	}
	Buf b;
	buf_init(&b);
	model_write_json(app->model, &b);
	int bad = fwrite(b.p, 1, b.len, f) != b.len;
	bad |= fclose(f) != 0;
	buf_fini(&b);
	if (bad)
		app_set_status(app, 1, "writing %s failed", app->model_out);
	else
		app_set_status(app, 0, "wrote the %s to %s",
		               app->model->inferred ? "inferred model" : "model", app->model_out);
	return REACT_REDRAW;
}

typedef struct Handler {
	Action action;
	int (*fn)(TuiApp *app);
} Handler;

static const Handler handlers[] = {
	{ACT_HELP, act_help},
	{ACT_QUIT, act_quit},
	{ACT_NEXT_PANE, act_next_pane},
	{ACT_PREV_PANE, act_prev_pane},
	{ACT_GOTO_PANE, act_goto_pane},
	{ACT_BACK, act_back},
	{ACT_CLASS, act_class},
	{ACT_WINDOW, act_window},
	{ACT_BASELINE, act_baseline},
	{ACT_PAUSE, act_pause},
	{ACT_FILTER, act_filter},
	{ACT_WRITE_MODEL, act_write_model},
	{ACT_TRACE_ID, act_trace_id},
	{ACT_ENDPOINTS, act_endpoints},
	{ACT_PREV_ENDPOINT, act_prev_endpoint},
	{ACT_NEXT_ENDPOINT, act_next_endpoint},
};

static int help_key(TuiApp *app, Action act)
{
	switch (act) {
	case ACT_HELP:
	case ACT_BACK:
		app->help = 0;
		return REACT_REDRAW;
	case ACT_QUIT:
		return REACT_QUIT;
	case ACT_DOWN:
		app->help_scroll++;
		return REACT_REDRAW;
	case ACT_UP:
		if (app->help_scroll > 0)
			app->help_scroll--;
		return REACT_REDRAW;
	case ACT_PAGE_DOWN:
		app->help_scroll += 10;  /* app_draw() clamps it to the last page */
		return REACT_REDRAW;
	case ACT_PAGE_UP:
		app->help_scroll = app->help_scroll > 10 ? app->help_scroll - 10 : 0;
		return REACT_REDRAW;
	case ACT_TOP:
		app->help_scroll = 0;
		return REACT_REDRAW;
	case ACT_BOTTOM:
		app->help_scroll = 1 << 20;
		return REACT_REDRAW;
	default:
		return REACT_NONE;
	}
}

int app_key(TuiApp *app, int key)
{
	if (key == TK_RESIZE)
		return REACT_REDRAW; /* app_draw() tells the views their new size */
	if (app->prompt.kind != PROMPT_NONE)
		return prompt_key(app, key);
	Action act = keymap_lookup(key);
	if (act == ACT_NONE)
		return REACT_NONE;
	app->last_key = key;
	if (app->help)
		return help_key(app, act);
	if (app->status[0] && !app->status_error)
		app->status[0] = '\0';
	for (size_t i = 0; i < sizeof handlers / sizeof handlers[0]; i++)
		if (handlers[i].action == act)
			return handlers[i].fn(app);
	View *v = app->views[app->pane];
	return v->ops->key(v, app, act);
}
