/*
 * test_tui.c - the dashboard without a terminal: every screen drawn into a
 * canvas at 100x30 and 80x24 and compared with golden files, plus the key
 * flows an engineer uses (open a node, open a trace, cycle the class, set
 * a window, filter, pause) and the safety of hostile strings on screen.
 *
 * Set TT_UPDATE_GOLDEN=1 to rewrite the goldens after a reviewed change;
 * on a mismatch the actual screen is written next to the build as
 * $TT_BUILD/tui-actual/<name> for a diff.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/stat.h>

#include "analysis.h"
#include "app.h"
#include "evidence.h"
#include "import.h"
#include "canvas.h"
#include "sanitize.h"
#include "test_tui_fixture.h"
#include "view.h"

typedef struct Env {
	char path[128];
	Store *st;
	Model *model;
	TuiApp app;
	Canvas cv;
} Env;

static Env *env_new(int with_model, int with_baseline, int w, int h, int ascii)
{
	Env *e = calloc(1, sizeof *e);
	tmp_db_path(e->path, sizeof e->path);
	assert_int_equal(fx_make_db(e->path), 0);
	Err err = {0};
	assert_int_equal(store_open(e->path, STORE_READONLY, &e->st, &err), 0);
	e->model = with_model ? fx_model() : NULL;
	if (with_model)
		assert_non_null(e->model);
	TuiOptions o;
	memset(&o, 0, sizeof o);
	o.db_path = e->path;
	o.model = e->model;
	o.period.win.from = FX_WIN_FROM;
	o.period.win.to = FX_WIN_FROM + (int64_t)600 * 1000000000;
	o.period.has_baseline = with_baseline;
	o.period.base.from = FX_BASE_FROM;
	o.period.base.to = FX_WIN_FROM;
	o.refresh_ms = 1000;
	o.ascii = ascii;
	app_init(&e->app, &o);
	canvas_init(&e->cv, w, h, ascii);
	return e;
}

/* Runs the analysis the app asks for, as the loop would. */
static void env_compute(Env *e)
{
	AnalysisOptions ao;
	app_options(&e->app, &ao);
	Analysis *a = NULL;
	Err err = {0};
	assert_int_equal(analysis_run(e->st, &ao, &a, &err), 0);
	app_set_analysis(&e->app, a, e->app.opt_gen);
}

static void env_free(Env *e)
{
	app_fini(&e->app);
	canvas_fini(&e->cv);
	store_close(e->st);
	model_free(e->model);
	rm_db(e->path);
	free(e);
}

/* Feeds a key and performs the effects the loop would perform. */
static int env_key(Env *e, int key)
{
	int f = app_key(&e->app, key);
	if (f & REACT_RELOAD)
		env_compute(e);
	if (f & REACT_TRACE) {
		TraceView *tv = NULL;
		Err err = {0};
		assert_int_equal(trace_view_load(e->st, e->app.want_trace, &e->app.skew, &tv, &err), 0);
		app_set_trace(&e->app, tv);
	}
	return f;
}

static void env_keys(Env *e, const char *s)
{
	for (; *s; s++)
		env_key(e, *s == '\n' ? TK_ENTER : (unsigned char)*s);
}

static char *screen(Env *e)
{
	app_draw(&e->app, &e->cv);
	Buf b;
	buf_init(&b);
	canvas_dump(&e->cv, &b);
	char *s = xstrdup(buf_str(&b));
	buf_fini(&b);
	return s;
}

static int select_label(Env *e, const char *label)
{
	for (int i = 0; i < e->app.a->n_nodes; i++)
		if (strcmp(e->app.a->nodes[i].label, label) == 0) {
			app_select_node(&e->app, i);
			return i;
		}
	fail_msg("no node labelled %s", label);
	return -1;
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return NULL;
	Buf b;
	buf_init(&b);
	char tmp[4096];
	size_t n;
	while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
		buf_add(&b, tmp, n);
	fclose(f);
	char *s = xstrdup(buf_str(&b));
	buf_fini(&b);
	return s;
}

static void write_all(const char *path, const char *s)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	fputs(s, f);
	fclose(f);
}

/* The whole drawn canvas must be free of control characters. */
static void assert_no_controls(const Canvas *cv)
{
	for (int y = 0; y < cv->h; y++)
		for (int x = 0; x < cv->w; x++) {
			const Cell *c = canvas_cell(cv, x, y);
			if (c->flags & CELL_TAIL) {
				assert_int_equal(c->ch, 0);
				const Cell *h = canvas_cell(cv, x - 1, y);
				assert_non_null(h);
				assert_int_equal(san_cp_width(h->ch), 2);
				continue;
			}
			if (san_cp_width(c->ch) < 1)
				fail_msg("control or unprintable U+%04X at %d,%d", (unsigned)c->ch, x, y);
		}
}

static void check_golden(Env *e, const char *name)
{
	char *got = screen(e);
	assert_no_controls(&e->cv);
	char path[256];
	snprintf(path, sizeof path, "golden/tui/%s", name);
	if (getenv("TT_UPDATE_GOLDEN")) {
		write_all(path, got);
		free(got);
		return;
	}
	char *want = read_all(path);
	if (want == NULL || strcmp(want, got) != 0) {
		const char *bd = getenv("TT_BUILD");
		char out[512];
		snprintf(out, sizeof out, "%s/tui-actual", bd ? bd : "/tmp");
		mkdir(out, 0777);
		snprintf(out + strlen(out), sizeof out - strlen(out), "/%s", name);
		write_all(out, got);
		/* the first differing line, for the log */
		int line = 1;
		const char *a = want ? want : "", *b = got;
		while (*a && *a == *b) {
			if (*a == '\n')
				line++;
			a++;
			b++;
		}
		print_error("%s differs from golden at line %d; actual screen in %s\n", path, line, out);
		free(want);
		free(got);
		fail();
	}
	free(want);
	free(got);
}

/* ---- goldens ------------------------------------------------------------- */

static const struct {
	int w, h;
} sizes[] = {{100, 30}, {80, 24}};

static void golden_all_sizes(int pane, const char *label, int keys_help, const char *stem)
{
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		Env *e = env_new(1, 1, sizes[s].w, sizes[s].h, 0);
		env_compute(e);
		if (label)
			select_label(e, label);
		if (pane == PANE_TRACE) {
			app_open_pane(&e->app, PANE_NODE);
			env_key(e, TK_ENTER); /* the slowest pricing trace */
			assert_int_equal(e->app.pane, PANE_TRACE);
			env_keys(e, "jjjjjjjj"); /* select a span below the root */
		} else {
			app_open_pane(&e->app, pane);
		}
		if (keys_help)
			env_key(e, '?');
		char name[64];
		snprintf(name, sizeof name, "%s_%dx%d.txt", stem, sizes[s].w, sizes[s].h);
		check_golden(e, name);
		env_free(e);
	}
}

static void test_golden_dag(void **state)
{
	(void)state;
	golden_all_sizes(PANE_DAG, "pricing", 0, "dag");
}

static void test_golden_node(void **state)
{
	(void)state;
	golden_all_sizes(PANE_NODE, "pricing", 0, "node");
}

static void test_golden_owner(void **state)
{
	(void)state;
	golden_all_sizes(PANE_OWNER, NULL, 0, "owner");
}

static void test_golden_trace(void **state)
{
	(void)state;
	golden_all_sizes(PANE_TRACE, "pricing", 0, "trace");
}

static void test_golden_help(void **state)
{
	(void)state;
	golden_all_sizes(PANE_DAG, NULL, 1, "help");
}

/* No model, no baseline, ASCII glyphs: unknown semantics drawn as such. */
static void test_golden_plain_ascii(void **state)
{
	(void)state;
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		Env *e = env_new(0, 0, sizes[s].w, sizes[s].h, 1);
		env_compute(e);
		char name[64];
		snprintf(name, sizeof name, "dag_ascii_nomodel_%dx%d.txt", sizes[s].w, sizes[s].h);
		check_golden(e, name);
		/* ASCII mode draws nothing outside ASCII */
		for (int i = 0; i < e->cv.w * e->cv.h; i++)
			assert_true(e->cv.cells[i].ch < 0x7f);
		env_free(e);
	}
}

static void test_too_small(void **state)
{
	(void)state;
	Env *e = env_new(1, 1, 50, 12, 0);
	env_compute(e);
	check_golden(e, "too_small_50x12.txt");
	/* growing back to a usable size redraws the dashboard */
	canvas_resize(&e->cv, 80, 24);
	assert_int_equal(app_key(&e->app, TK_RESIZE) & REACT_REDRAW, REACT_REDRAW);
	char *s = screen(e);
	assert_null(strstr(s, "too small"));
	assert_non_null(strstr(s, "GET /v2/home"));
	free(s);
	env_free(e);
}

/* ---- what an engineer looks for ----------------------------------------- */

static void test_header_breach_and_budgets(void **state)
{
	(void)state;
	Env *e = env_new(1, 1, 100, 30, 0);
	env_compute(e);
	char *s = screen(e);
	assert_non_null(strstr(s, "BREACHED"));
	assert_non_null(strstr(s, "BREACHED objective 300 ms"));
	assert_non_null(strstr(s, "ingress p99 above 300 ms"));      /* breached budget */
	assert_non_null(strstr(s, "2 not evaluated (no evidence)")); /* the others */
	assert_non_null(strstr(s, "enterprise 20.0%/10.0%"));        /* mix window/base */
	free(s);
	env_free(e);
}

/* The evidence hook: a provider from the metrics layer fills budgets. */
static int fake_evidence(void *ctx, const Analysis *a, const char *name, double *v,
                         const char **unit)
{
	(void)a;
	int *calls = ctx;
	(*calls)++;
	if (strcmp(name, "pool.pricing.occupancy") == 0) {
		*v = 0.91;
		*unit = "ratio";
		return 1;
	}
	return 0;
}

static void test_budget_evidence_hook(void **state)
{
	(void)state;
	Env *e = env_new(1, 1, 100, 30, 0);
	int calls = 0;
	e->app.evidence = fake_evidence;
	e->app.evidence_ctx = &calls;
	env_compute(e);
	char *s = screen(e);
	assert_true(calls > 0);
	/* two breaches do not fit with their labels: ids stand in */
	assert_non_null(strstr(s, "p99 (357.8 ms)"));
	assert_non_null(strstr(s, "pool_occupancy (91.0 %)"));
	assert_non_null(strstr(s, "1 not evaluated"));
	free(s);
	env_free(e);
}

/* A budget provider judges on intervals (analysis/budgets.c): the queue
 * age as the demo's metric gives it, 18.8 ms inside its 10-25 ms bucket,
 * may be over 12 ms and is drawn as such, with its interval and source,
 * never as breached; the pool's occupancy with its whole interval over
 * 82 % is breached. */
static int interval_budget(void *ctx, const Analysis *a, const ModelBudget *b, BudgetResult *out)
{
	(void)a;
	(void)ctx;
	if (strcmp(b->evidence, "endpoint.queue_age.p99_ms") == 0) {
		budget_judge_figure(b, 18.8, 10, 25, 1, "ms", out);
		out->src = EV_SRC_METRIC;
		out->n = 966985;
		snprintf(out->source, sizeof out->source,
		         "metric, 966,985 requests, histogram buckets 10.0 ms to 25.0 ms");
		return 1;
	}
	if (strcmp(b->evidence, "pool.pricing.occupancy") == 0) {
		budget_judge_figure(b, 0.91, 0.88, 0.93, 1, "ratio", out);
		return 1;
	}
	return 0;
}

static void test_budget_may_be_breached(void **state)
{
	(void)state;
	for (int wide = 0; wide < 2; wide++) {
		Env *e = env_new(1, 1, wide ? 200 : 100, 30, 0);
		e->app.budget = interval_budget;
		env_compute(e);
		char *s = screen(e);
		const char *row = strstr(s, "budgets ");
		assert_non_null(row);
		if (strstr(row, "queue_age (") || strstr(row, "queue age above 12 ms ("))
			fail_msg("the queue age is drawn as breached:\n%s", s);
		if (wide) {
			if (!strstr(row, "? queue_age may be breached (18.8 ms [10.0, 25.0 ms], metric, "
			                 "966,985 requests, histogram buckets 10.0 ms to 25.0 ms)"))
				fail_msg("no 'may be breached' with its interval and source:\n%s", s);
			assert_non_null(strstr(row, "✖ pool_occupancy (91.0 %)"));
		} else {
			/* narrow: ids, and at least the interval */
			if (!strstr(row, "queue_age may be") || !strstr(row, "[10.0, 25.0 ms]"))
				fail_msg("no 'may be' with its interval:\n%s", s);
		}
		free(s);
		env_free(e);
	}
}

/* While the provider is still computing, the header says so instead of
 * calling the values missing; once it is done, missing is missing. */
static int fake_pending(void *ctx, const Analysis *a)
{
	(void)a;
	return *(int *)ctx;
}

static void test_budgets_evaluating(void **state)
{
	(void)state;
	Env *e = env_new(1, 1, 100, 30, 0);
	int pending = 1;
	e->app.evidence_pending = fake_pending;
	e->app.evidence_ctx = &pending;
	env_compute(e);
	char *s = screen(e);
	assert_non_null(strstr(s, "2 evaluating..."));
	assert_null(strstr(s, "no evidence"));
	free(s);
	pending = 0;
	s = screen(e);
	assert_non_null(strstr(s, "2 not evaluated (no evidence)"));
	assert_null(strstr(s, "evaluating"));
	free(s);
	env_free(e);
}

/* Budgets written in "%" on evidence kept as a ratio: the header judges and
 * writes them exactly as `diagnose` does (analysis/budgets.c). 24.9 % is
 * within "< 10 %" and over "> 20 %"; the value reads "24.9 %", never 0.2. */
static int ratio_evidence(void *ctx, const Analysis *a, const char *name, double *v,
                          const char **unit)
{
	(void)a;
	(void)ctx;
	if (strcmp(name, "pool.pricing.occupancy") == 0) {
		*v = 0.249;
		*unit = "ratio";
		return 1;
	}
	return 0;
}

static void test_golden_percent_budget(void **state)
{
	(void)state;
	const char *from = "{\"id\":\"pool_occupancy\",\"evidence\":\"pool.pricing.occupancy\","
	                   "\"op\":\">\",\"threshold\":0.82,\"unit\":\"ratio\","
	                   "\"label\":\"pricing pool occupancy above 82 %\"}";
	const char *to = "{\"id\":\"pool_low\",\"evidence\":\"pool.pricing.occupancy\","
	                 "\"op\":\"<\",\"threshold\":10,\"unit\":\"%\","
	                 "\"label\":\"pricing pool occupancy below 10 %\"},"
	                 "{\"id\":\"pool_high\",\"evidence\":\"pool.pricing.occupancy\","
	                 "\"op\":\">\",\"threshold\":20,\"unit\":\"%\","
	                 "\"label\":\"pricing pool occupancy above 20 %\"}";
	const char *at = strstr(FX_MODEL_JSON, from);
	assert_non_null(at);
	Buf j;
	buf_init(&j);
	buf_add(&j, FX_MODEL_JSON, (size_t)(at - FX_MODEL_JSON));
	buf_adds(&j, to);
	buf_adds(&j, at + strlen(from));
	Model *m = NULL;
	Err err = {0};
	assert_int_equal(model_parse("percent-model", j.p, j.len, &m, &err), 0);
	buf_fini(&j);
	Env *e = env_new(1, 1, 100, 30, 0);
	model_free(e->model);
	e->model = m;
	e->app.model = m;
	e->app.evidence = ratio_evidence;
	env_compute(e);
	char *s = screen(e);
	if (strstr(s, "pricing pool occupancy above 20 % (24.9 %)") == NULL && strstr(s, "pool_high (24.9 %)") == NULL)
		fail_msg("no breach of pool_high at 24.9 %%:\n%s", s);
	assert_null(strstr(s, "below 10 %"));
	assert_null(strstr(s, "0.2%"));
	free(s);
	check_golden(e, "header_percent_budget_100x30.txt");
	env_free(e);
}

/* `?` lists what every pane's own keys do, the Drill and the Board
 * included, from the same tables that drive the panes. */
static void test_help_lists_every_pane(void **state)
{
	(void)state;
	Env *e = env_new(1, 1, 100, 30, 0);
	env_compute(e);
	env_key(e, '?');
	Buf all;
	buf_init(&all);
	for (int page = 0; page < 12; page++) {
		char *s = screen(e);
		buf_adds(&all, s);
		free(s);
		env_key(e, TK_PGDN);
	}
	const char *want[] = {"1 DAG", "2 Node", "3 Tail ownership", "4 Trace (not open now)",
	                      "5 Drill (not open now)", "6 Board (not open now)",
	                      "run the marked hypothesis's discriminating check",
	                      "close the check's result", "brief: start; then pick the marked answer",
	                      "zoom in on the marked span", "1-7 "};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		if (strstr(all.p, want[i]) == NULL)
			fail_msg("the help does not say '%s'", want[i]);
	buf_fini(&all);
	env_key(e, TK_END);
	check_golden(e, "help_end_100x30.txt");
	env_free(e);
}

/* No line of the help is lost to the box's width: a long explanation
 * goes on over a second line instead of ending in an ellipsis, at every
 * width (the box is 78 columns at most, so 120 columns cut like 80 did). */
static void test_help_wraps_long_lines(void **state)
{
	(void)state;
	static const int dims[][2] = {{80, 24}, {100, 30}, {120, 40}};
	for (size_t z = 0; z < sizeof dims / sizeof dims[0]; z++) {
		Env *e = env_new(1, 1, dims[z][0], dims[z][1], 0);
		env_compute(e);
		env_key(e, '?');
		int saw_wrap = 0;
		for (int page = 0; page < 12; page++) {
			char *s = screen(e);
			for (const char *p = strstr(s, "\u2026 \u2502"); p; p = strstr(p + 1, "\u2026 \u2502"))
				fail_msg("a help line is cut at %dx%d:\n%s", dims[z][0], dims[z][1], s);
			if (strstr(s, "Left goes") && strstr(s, "back "))
				saw_wrap = 1;
			free(s);
			env_key(e, TK_PGDN);
		}
		if (!saw_wrap)
			fail_msg("the Board's Right key is not explained whole at %dx%d", dims[z][0],
			         dims[z][1]);
		env_free(e);
	}
}

/* A node name too long for its tab is cut with an ellipsis, like every
 * other cut name, never silently. */
static void test_long_name_in_tab_ends_in_ellipsis(void **state)
{
	(void)state;
	Env *e = env_new(1, 1, 80, 24, 0);
	env_compute(e);
	int id = -1;
	for (int i = 0; i < e->app.a->n_nodes && id < 0; i++)
		if (san_width(e->app.a->nodes[i].label) > 18)
			id = i;
	assert_true(id >= 0);
	app_select_node(&e->app, id);
	app_open_pane(&e->app, PANE_NODE);
	char *s = screen(e);
	const char *tab = strstr(s, "[2 Node ");
	assert_non_null(tab);
	const char *close = strchr(tab, ']');
	assert_non_null(close);
	if (strncmp(close - 3, "\xe2\x80\xa6", 3) != 0)
		fail_msg("the cut name in the tab has no ellipsis: %.60s", tab);
	free(s);
	env_free(e);
}

/* A span with more attributes and events than the detail panel holds:
 * ] scrolls to its last event's last attribute, [ back. */
static void test_span_detail_scrolls_to_every_event(void **state)
{
	(void)state;
	char path[128];
	tmp_db_path(path, sizeof path);
	Store *st = NULL;
	Err err = {0};
	assert_int_equal(store_open(path, 0, &st, &err), 0);
	Buf j;
	buf_init(&j);
	buf_adds(&j, "{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\","
	             "\"value\":{\"stringValue\":\"svc\"}}]},\"scopeSpans\":[{\"spans\":[{"
	             "\"traceId\":\"0102030405060708090a0b0c0d0e0f10\",\"spanId\":\"0102030405060708\","
	             "\"name\":\"op\",\"kind\":2,\"startTimeUnixNano\":\"1000000000\","
	             "\"endTimeUnixNano\":\"1050000000\",\"attributes\":[");
	for (int i = 0; i < 12; i++)
		buf_printf(&j, "%s{\"key\":\"attr.%02d\",\"value\":{\"intValue\":\"%d\"}}", i ? "," : "",
		           i, i);
	buf_adds(&j, "],\"events\":[");
	for (int i = 0; i < 3; i++)
		buf_printf(&j, "%s{\"timeUnixNano\":\"%d\",\"name\":\"step-%d\",\"attributes\":["
		               "{\"key\":\"detail\",\"value\":{\"stringValue\":\"last of step %d\"}}]}",
		           i ? "," : "", 1010000000 + i * 10000000, i, i);
	buf_adds(&j, "]}]}]}]}");
	ImportResult res;
	assert_int_equal(import_memory(st, "detail.json", j.p, j.len, NULL, &res, &err), 0);
	buf_fini(&j);
	TraceView *tv = NULL;
	assert_int_equal(trace_view_load(st, "0102030405060708090a0b0c0d0e0f10", NULL, &tv, &err), 0);
	store_close(st);

	Env *e = env_new(1, 1, 100, 30, 0);
	env_compute(e);
	app_set_trace(&e->app, tv);
	char *s = screen(e);
	assert_non_null(strstr(s, "attr.00 = 0"));
	assert_null(strstr(s, "last of step 2"));
	if (strstr(s, "/18 [ ]") == NULL) /* 12 attributes, 3 events with one each */
		fail_msg("no position in the detail:\n%s", s);
	free(s);
	for (int i = 0; i < 30; i++)
		env_key(e, ']');
	s = screen(e);
	if (strstr(s, "detail = last of step 2") == NULL || strstr(s, "event step-2 at +30.0 ms") == NULL)
		fail_msg("] does not reach the last event:\n%s", strstr(s, "selected"));
	assert_null(strstr(s, "attr.00 = 0"));
	free(s);
	for (int i = 0; i < 30; i++)
		env_key(e, '[');
	s = screen(e);
	assert_non_null(strstr(s, "attr.00 = 0"));
	free(s);
	env_free(e);
	rm_db(path);
}

/* t opens a trace by its id; a malformed or unknown id says so. */
static void test_trace_id_prompt(void **state)
{
	(void)state;
	Env *e = env_new(1, 1, 100, 30, 0);
	env_compute(e);
	env_keys(e, "tnot-an-id\n");
	char *s = screen(e);
	assert_non_null(strstr(s, "trace id: 32 hex digits, not 'not-an-id'"));
	free(s);
	env_key(e, TK_ESC);
	env_keys(e, "t77303139000000000000000000000000\n");
	assert_int_equal(e->app.pane, PANE_TRACE);
	s = screen(e);
	assert_non_null(strstr(s, "trace 77303139000000000000000000000000"));
	free(s);
	env_free(e);
}

static void test_dag_shows_splits_and_unknown(void **state)
{
	(void)state;
	Env *e = env_new(1, 1, 100, 30, 0);
	env_compute(e);
	char *s = screen(e);
	/* every node of the fixture, by name */
	const char *names[] = {"GET /v2/home", "validate", "profile", "entitlement", "inventory",
	                       "pricing", "recommendation", "assemble"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		assert_non_null(strstr(s, names[i]));
	/* recommendation has no server span: its split is unknown, not zero */
	const char *rec = strstr(s, "recommendation");
	const char *eol = strchr(rec, '\n');
	char line[512];
	snprintf(line, sizeof line, "%.*s", (int)(eol - rec), rec);
	assert_non_null(strstr(line, "opt"));
	assert_non_null(strstr(line, " ? ")); /* the bar: unknown glyph */
	assert_non_null(strstr(line, "q     ? w     ? s     ?"));
	/* parallel fan-out and serial edges use distinct glyphs */
	assert_non_null(strstr(s, "\xe2\x94\x9c\xe2\x95\x90 pricing"));   /* ├═ */
	assert_non_null(strstr(s, "\xe2\x94\x9c\xe2\x94\x80 profile"));   /* ├─ */
	free(s);
	env_free(e);
}

static void test_open_node_then_trace_and_back(void **state)
{
	(void)state;
	Env *e = env_new(1, 1, 100, 30, 0);
	env_compute(e);
	int pricing = select_label(e, "pricing");
	assert_int_equal(env_key(e, TK_ENTER) & REACT_REDRAW, REACT_REDRAW);
	assert_int_equal(e->app.pane, PANE_NODE);
	char *s = screen(e);
	assert_non_null(strstr(s, "call mercury-api -> pricing (pricing.Quote)"));
	assert_non_null(strstr(s, "pool pricing (client, 256 slots)"));
	/* one row per trace even when the fan-out put two calls in the list */
	assert_non_null(strstr(s, "+ 329.0  (2 calls)"));
	assert_non_null(strstr(s, "no metrics"));
	assert_non_null(strstr(s, "enterprise"));
	free(s);
	/* the slowest pricing trace is an enterprise request of the window */
	const DagNode *d = &e->app.a->nodes[pricing];
	assert_true(d->n_slowest > 0);
	char want[33];
	snprintf(want, sizeof want, "%s", d->slowest[0].trace_id);
	assert_int_equal(env_key(e, TK_ENTER) & REACT_TRACE, REACT_TRACE);
	assert_int_equal(e->app.pane, PANE_TRACE);
	assert_string_equal(e->app.trace->trace_id, want);
	s = screen(e);
	assert_non_null(strstr(s, want));
	assert_non_null(strstr(s, "class enterprise"));
	free(s);
	/* Esc goes back the way we came */
	env_key(e, TK_ESC);
	assert_int_equal(e->app.pane, PANE_NODE);
	env_key(e, TK_ESC);
	assert_int_equal(e->app.pane, PANE_DAG);
	env_free(e);
}

#define HAS(s, x) \
	do { \
		if (strstr((s), (x)) == NULL) \
			fail_msg("'%s' not on screen:\n%s", (x), (s)); \
	} while (0)

/* One OTLP span of the edge/queue test below. */
static void otlp_span(Buf *j, int first, const char *id, const char *parent, const char *name,
                      int kind, int s_ms, int e_ms, const char *attrs)
{
	buf_printf(j, "%s{\"traceId\":\"aa02030405060708090a0b0c0d0e0f10\",\"spanId\":\"%s\","
	              "%s%s%s\"name\":\"%s\",\"kind\":%d,\"startTimeUnixNano\":\"%d000000\","
	              "\"endTimeUnixNano\":\"%d000000\",\"attributes\":[%s]}",
	           first ? "" : ",", id, parent ? "\"parentSpanId\":\"" : "", parent ? parent : "",
	           parent ? "\"," : "", name, kind, 1000 + s_ms, 1000 + e_ms, attrs ? attrs : "");
}

/* A request that queued 40 ms before its root span opened, whose calls an
 * HTTP client names after the method alone ("GET"): the waterfall's
 * header gives the total the node pane's slowest traces give (queue plus
 * spans) and says which part is which; each "GET" row names what it
 * calls (the server span's service, else the peer its attributes name),
 * so the three calls can be told apart. */
static void test_waterfall_queue_and_unnamed_calls(void **state)
{
	(void)state;
	char path[128];
	tmp_db_path(path, sizeof path);
	Store *st = NULL;
	Err err = {0};
	assert_int_equal(store_open(path, 0, &st, &err), 0);
	static const char res[] = "{\"resource\":{\"attributes\":[{\"key\":\"service.name\","
	                          "\"value\":{\"stringValue\":\"%s\"}}]},\"scopeSpans\":[{\"spans\":[";
	Buf j;
	buf_init(&j);
	buf_adds(&j, "{\"resourceSpans\":[");
	buf_printf(&j, res, "edge-gateway");
	otlp_span(&j, 1, "0000000000000001", NULL, "GET /checkout", 2, 0, 100,
	          "{\"key\":\"queue.wait_ms\",\"value\":{\"doubleValue\":40}}");
	otlp_span(&j, 0, "0000000000000002", "0000000000000001", "GET", 3, 5, 30, NULL);
	otlp_span(&j, 0, "0000000000000003", "0000000000000001", "GET", 3, 35, 60, NULL);
	otlp_span(&j, 0, "0000000000000004", "0000000000000001", "GET", 3, 65, 95,
	          "{\"key\":\"peer.service\",\"value\":{\"stringValue\":\"payments\"}}");
	buf_adds(&j, "]}]},");
	buf_printf(&j, res, "catalog");
	otlp_span(&j, 1, "0000000000000012", "0000000000000002", "GET /items", 2, 7, 28, NULL);
	buf_adds(&j, "]}]},");
	buf_printf(&j, res, "cart");
	otlp_span(&j, 1, "0000000000000013", "0000000000000003", "GET /cart", 2, 37, 58, NULL);
	buf_adds(&j, "]}]}]}");
	ImportResult ir;
	assert_int_equal(import_memory(st, "edge.json", j.p, j.len, NULL, &ir, &err), 0);
	buf_fini(&j);
	store_close(st);

	Env *e = calloc(1, sizeof *e);
	snprintf(e->path, sizeof e->path, "%s", path);
	assert_int_equal(store_open(path, STORE_READONLY, &e->st, &err), 0);
	TuiOptions o;
	memset(&o, 0, sizeof o);
	o.db_path = path;
	o.period = PERIOD_ALL;
	o.refresh_ms = 1000;
	app_init(&e->app, &o);
	canvas_init(&e->cv, 100, 30, 0);
	env_compute(e);
	/* the root's slowest trace: 140 ms = 40 queue + 100 span */
	env_key(e, TK_ENTER);
	assert_int_equal(e->app.pane, PANE_NODE);
	char *s = screen(e);
	if (strstr(s, "140.0 ms") == NULL || strstr(s, "= 40.0 + 100.0") == NULL)
		fail_msg("the node pane does not split the total:\n%s", s);
	HAS(s, "by the node's total = queue + span");
	free(s);
	env_key(e, TK_ENTER);
	assert_int_equal(e->app.pane, PANE_TRACE);
	s = screen(e);
	HAS(s, "140.0 ms = 40.0 queue + 100.0 spans");
	HAS(s, "GET edge-gateway \u2192 catalog");
	HAS(s, "GET edge-gateway \u2192 cart");
	HAS(s, "GET edge-gateway \u2192 payments");
	/* a server span, or a call its name already names, gets no arrow */
	assert_null(strstr(s, "/checkout edge-gateway \u2192"));
	assert_null(strstr(s, "/items catalog \u2192"));
	free(s);
	/* the marked call's detail names what it calls too */
	env_key(e, TK_DOWN);
	s = screen(e);
	HAS(s, "client in edge-gateway calling catalog");
	free(s);
	env_free(e);
}

static void test_tab_cycles_panes(void **state)
{
	(void)state;
	Env *e = env_new(1, 1, 100, 30, 0);
	env_compute(e);
	env_key(e, TK_TAB);
	assert_int_equal(e->app.pane, PANE_NODE);
	env_key(e, TK_TAB);
	assert_int_equal(e->app.pane, PANE_OWNER);
	env_key(e, TK_TAB); /* no trace loaded, no drill, no board: skipped */
	assert_int_equal(e->app.pane, PANE_ENDPOINTS);
	env_key(e, TK_TAB);
	assert_int_equal(e->app.pane, PANE_DAG);
	env_key(e, TK_BTAB);
	assert_int_equal(e->app.pane, PANE_ENDPOINTS);
	env_key(e, TK_BTAB);
	assert_int_equal(e->app.pane, PANE_OWNER);
	char *s = screen(e);
	assert_non_null(strstr(s, "critical path of 8 slow requests (thin) (ingress > 300.0 ms)"));
	free(s);
	env_free(e);
}


/* A window covered by a slowest set pulled from a trace back end: the
 * Tail ownership pane takes its traces as the slow requests and says so,
 * and so does the node pane's list of slowest traces (the waterfall's way
 * in); a slowest trace that no sample holds is among them. */
static void test_pulled_tail(void **state)
{
	(void)state;
	Env *e = env_new(1, 1, 100, 30, 0);
	env_compute(e);
	/* the window's three slowest requests, by the root's exemplars */
	const Analysis *a0 = e->app.a;
	assert_true(a0->nodes[0].n_slowest >= 3);
	char ids[3][33];
	int64_t requests = a0->pop[POP_WINDOW].requests; /* a0 goes with the next compute */
	for (int i = 0; i < 3; i++)
		snprintf(ids[i], sizeof ids[i], "%s", a0->nodes[0].slowest[i].trace_id);
	Store *w = NULL;
	Err err = {0};
	assert_int_equal(store_open(e->path, 0, &w, &err), 0);
	StoreTraceSet set = {.kind = "slowest", .role = "window", .from_ns = FX_WIN_FROM,
	                     .to_ns = FX_WIN_FROM + (int64_t)600 * 1000000000, .requested = 3,
	                     .population = 400, .source = "http://127.0.0.1:16686",
	                     .service = "mercury-api", .operation = "", .created_ms = 1};
	int64_t id = 0;
	assert_int_equal(store_trace_set_intern(w, &set, &id, &err), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(store_trace_set_add(w, id, ids[i], NULL, &err), 0);
	store_close(w);
	env_compute(e);
	const PopSummary *pw = &e->app.a->pop[POP_WINDOW];
	assert_int_equal(pw->tail_pulled, 1);
	assert_int_equal(pw->slow_requests, 3);
	app_open_pane(&e->app, PANE_OWNER);
	char *s = screen(e);
	assert_non_null(strstr(s, "critical path of 3 slow requests (thin)"));
	assert_non_null(strstr(s, "the 3 slowest of 400, pulled from the trace back end; the other "
	                          "panes: the sample"));
	free(s);
	/* the slowest traces of the root: the pulled ones, though no sample
	 * holds them (they are no request of the population) */
	app_open_pane(&e->app, PANE_NODE);
	s = screen(e);
	assert_non_null(strstr(s, "of the 3 pulled slowest and the sample"));
	assert_non_null(strstr(s, ids[0]));
	free(s);
	assert_true(e->app.a->pop[POP_WINDOW].requests < requests);
	env_free(e);
}

/* The numbers of the tab bar jump to their pane; a pane that is not open
 * (no trace loaded yet) says so and leaves the screen where it was. */
static void test_number_keys_pick_panes(void **state)
{
	(void)state;
	Env *e = env_new(1, 1, 100, 30, 0);
	env_compute(e);
	env_key(e, '3');
	assert_int_equal(e->app.pane, PANE_OWNER);
	env_key(e, '2');
	assert_int_equal(e->app.pane, PANE_NODE);
	env_key(e, '4');
	assert_int_equal(e->app.pane, PANE_NODE);
	char *s = screen(e);
	assert_non_null(strstr(s, "no trace open"));
	free(s);
	env_key(e, '1');
	assert_int_equal(e->app.pane, PANE_DAG);
	env_free(e);
}

static void test_class_cycle_reruns(void **state)
{
	(void)state;
	Env *e = env_new(1, 1, 100, 30, 0);
	env_compute(e);
	unsigned gen = e->app.opt_gen;
	int f = env_key(e, 'c');
	assert_true(f & REACT_RELOAD);
	assert_true(e->app.opt_gen != gen);
	assert_string_equal(e->app.wclass, "enterprise"); /* classes sorted by name */
	assert_string_equal(e->app.a->class_filter, "enterprise");
	char *s = screen(e);
	assert_non_null(strstr(s, "class enterprise"));
	assert_non_null(strstr(s, "n=8"));
	free(s);
	env_keys(e, "ccc"); /* premium, standard, back to all */
	assert_null(e->app.wclass);
	assert_null(e->app.a->class_filter);
	env_free(e);
}

static void test_window_and_baseline_prompts(void **state)
{
	(void)state;
	Env *e = env_new(1, 1, 100, 30, 0);
	env_compute(e);
	/* a typo keeps the prompt open with a located message */
	env_keys(e, "wnot a range\n");
	assert_int_equal(e->app.prompt.kind, PROMPT_WINDOW);
	char *s = screen(e);
	assert_non_null(strstr(s, "window (A..B, all, last 5m): not a range_"));
	assert_non_null(strstr(s, "expected a range A..B"));
	free(s);
	env_key(e, TK_ESC);
	assert_int_equal(e->app.prompt.kind, PROMPT_NONE);
	/* epoch milliseconds like the CLI: the first half of the window */
	char keys[128];
	snprintf(keys, sizeof keys, "w%lld..%lld\n", (long long)(FX_WIN_FROM / 1000000),
	         (long long)(FX_WIN_FROM / 1000000 + 20000));
	env_keys(e, keys);
	assert_int_equal(e->app.prompt.kind, PROMPT_NONE);
	assert_int_equal(e->app.a->pop[POP_WINDOW].requests, 20);
	/* baseline 'before': same length, just before the window */
	env_keys(e, "bbefore\n");
	assert_int_equal(e->app.period.base.to, FX_WIN_FROM);
	assert_int_equal(e->app.period.base.from, FX_WIN_FROM - (int64_t)20 * 1000000000);
	/* 'none' removes the baseline; 'all' opens the window */
	env_keys(e, "bnone\n");
	assert_false(e->app.a->pop[POP_BASELINE].present);
	env_keys(e, "wall\n");
	assert_int_equal(e->app.a->pop[POP_WINDOW].requests, 2 * FX_N);
	/* 'last 15s' follows the end of the data */
	env_keys(e, "wlast 15s\n");
	assert_int_equal(e->app.period.win.to, INT64_MAX);
	assert_true(e->app.a->pop[POP_WINDOW].requests > 0);
	assert_true(e->app.a->pop[POP_WINDOW].requests <= 16);
	env_free(e);
}

static void test_filter(void **state)
{
	(void)state;
	Env *e = env_new(1, 1, 100, 30, 0);
	env_compute(e);
	env_keys(e, "/pri");
	char *s = screen(e);
	assert_non_null(strstr(s, "filter nodes: pri_"));
	assert_non_null(strstr(s, "pricing"));
	assert_non_null(strstr(s, "GET /v2/home")); /* kept as context */
	assert_null(strstr(s, "inventory"));
	free(s);
	env_key(e, TK_ENTER);
	assert_string_equal(e->app.filter, "pri");
	env_key(e, TK_ESC); /* clears the filter */
	assert_string_equal(e->app.filter, "");
	s = screen(e);
	assert_non_null(strstr(s, "inventory"));
	free(s);
	env_free(e);
}

static void test_sort_and_fold(void **state)
{
	(void)state;
	Env *e = env_new(1, 1, 100, 30, 0);
	env_compute(e);
	env_key(e, 's'); /* by p99: pricing before validate */
	char *s = screen(e);
	assert_non_null(strstr(s, "sort p99"));
	const char *p = strstr(s, "pricing"), *v = strstr(s, "validate");
	assert_true(p && v && p < v);
	free(s);
	env_keys(e, "sss"); /* back to the tree */
	select_label(e, "GET /v2/home");
	env_key(e, 'h'); /* fold the root */
	s = screen(e);
	assert_null(strstr(s, "validate"));
	free(s);
	env_key(e, 'l');
	s = screen(e);
	assert_non_null(strstr(s, "validate"));
	free(s);
	env_free(e);
}

static void test_pause_flag(void **state)
{
	(void)state;
	Env *e = env_new(1, 1, 100, 30, 0);
	env_compute(e);
	char *s = screen(e);
	assert_non_null(strstr(s, " LIVE "));
	free(s);
	assert_true(env_key(e, 'p') & REACT_PAUSE);
	s = screen(e);
	assert_non_null(strstr(s, " PAUSED "));
	free(s);
	e->app.changed_at_s = 1784052123; /* 18:02:03Z */
	env_key(e, 'p');
	s = screen(e);
	assert_non_null(strstr(s, "data changed 18:02:03Z"));
	free(s);
	env_free(e);
}

/* A request body the receiver could not use (its source row's outcome is
 * "unrecognised", written by another process) shows in the status line. */
static void test_unrecognised_in_status(void **state)
{
	(void)state;
	Env *e = env_new(1, 1, 100, 30, 0);
	env_compute(e);
	char *s = screen(e);
	assert_null(strstr(s, "unrecognised"));
	free(s);
	Store *w = NULL;
	Err err = {0};
	assert_int_equal(store_open(e->path, 0, &w, &err), 0);
	int64_t src = 0;
	StoreSourceCounts c = {0};
	assert_int_equal(store_begin(w, &err), 0);
	assert_int_equal(store_source_add(w, "/v1/metrics", "", "otlp-metrics", 1, &src, &err), 0);
	assert_int_equal(store_source_finish(w, src, &c, "unrecognised", &err), 0);
	assert_int_equal(store_commit(w, &err), 0);
	store_close(w);
	env_compute(e);
	s = screen(e);
	assert_non_null(strstr(s, "| 1 unrecognised"));
	free(s);
	env_free(e);
}

/* New nodes appear in a recompute: the selection follows its node, not
 * its position. */
static void test_selection_survives_recompute(void **state)
{
	(void)state;
	Env *e = env_new(1, 0, 100, 30, 0);
	e->app.period.win.to = INT64_MAX;
	env_compute(e);
	select_label(e, "assemble");
	int before = e->app.sel_node;
	store_close(e->st);
	assert_int_equal(fx_more(e->path), 0);
	Err err = {0};
	assert_int_equal(store_open(e->path, STORE_READONLY, &e->st, &err), 0);
	env_compute(e);
	assert_string_equal(e->app.a->nodes[e->app.sel_node].label, "assemble");
	assert_true(e->app.sel_node != before); /* audit was inserted before it */
	char *s = screen(e);
	assert_non_null(strstr(s, "audit"));
	free(s);
	env_free(e);
}

/* Hostile span names and attribute values reach the screen harmless and
 * the columns stay aligned. */
static void test_hostile_strings_on_screen(void **state)
{
	(void)state;
	Env *e = env_new(1, 1, 100, 30, 0);
	env_compute(e);
	char *s = screen(e);
	assert_no_controls(&e->cv);
	for (const char *p = s; *p; p++) {
		unsigned char c = (unsigned char)*p;
		assert_true(c >= 0x20 || c == '\n');
		assert_true(c != 0x7f);
	}
	/* the hostile node's row: escape sequences replaced, CJK kept */
	assert_non_null(strstr(s, "tmpl\xef\xbf\xbd\xef\xbf\xbd \xe6\xbc\xa2\xe5\xad\x97"));
	/* alignment: the 'q' of the split numbers sits in the same column on
	 * every node row, including the one with wide characters */
	int qcol = -1;
	for (int y = 0; y < e->cv.h; y++) {
		const Cell *c0 = canvas_cell(&e->cv, 0, y);
		(void)c0;
		int found = -1;
		for (int x = 0; x < e->cv.w; x++) {
			const Cell *c = canvas_cell(&e->cv, x, y);
			if (c->ch == 'q' && c->role == ROLE_QUEUE) {
				found = x;
				break;
			}
		}
		if (found < 0)
			continue;
		if (qcol < 0)
			qcol = found;
		assert_int_equal(found, qcol);
	}
	assert_true(qcol > 0);
	/* every dumped line fits the width in display columns */
	for (const char *line = s; *line;) {
		const char *eol = strchr(line, '\n');
		char buf[1024];
		snprintf(buf, sizeof buf, "%.*s", (int)(eol - line), line);
		assert_true(san_width(buf) <= e->cv.w);
		line = eol + 1;
	}
	free(s);
	/* the waterfall shows hostile attribute values harmlessly */
	select_label(e, "pricing");
	app_open_pane(&e->app, PANE_NODE);
	env_key(e, TK_ENTER);
	env_key(e, 'g');
	int found = 0;
	for (int k = 0; k < e->app.trace->n_spans && !found; k++) {
		char *t = screen(e);
		if (strstr(t, "selected pricing.Quote")) {
			found = 1;
			assert_no_controls(&e->cv);
			assert_non_null(strstr(t, "note = \xef\xbf\xbd\xef\xbf\xbd bell\xef\xbf\xbd c1"));
			assert_non_null(strstr(t, "\xe6\xbc\xa2\xe5\xad\x97 wide"));
			assert_non_null(strstr(t, "raw = bad\xef\xbf\xbd utf8"));
		}
		free(t);
		env_key(e, 'j');
	}
	assert_true(found);
	env_free(e);
}


/* ---- the node pane's pool line (issue 15) --------------------------------- */

/* The real evidence engine as the provider, on the fixture database plus
 * pool gauges imported from Prometheus text. */
typedef struct PoolEv {
	Evidence *ev;
} PoolEv;

static int pool_evidence_fn(void *ctx, const Analysis *a, const char *name, double *v,
                            const char **unit)
{
	(void)a;
	PoolEv *p = ctx;
	const EvValue *ev = evidence_get(p->ev, name);
	if (ev == NULL || ev->missing)
		return 0;
	*v = ev->value;
	*unit = ev->unit;
	return 1;
}

/* A pool whose name has capitals and a hyphen ("Pricing-Pool"): the node
 * pane must ask for the same normalised names the evidence carries
 * (pool.pricing_pool.*), not "pool.Pricing-Pool.occupancy". */
static void test_node_pool_hyphenated_name(void **state)
{
	(void)state;
	Env *e = env_new(1, 1, 120, 30, 0);
	/* the same model with the pool renamed */
	Buf mj;
	buf_init(&mj);
	const char *src = FX_MODEL_JSON;
	for (const char *p = src; *p;) {
		const char *hit1 = strstr(p, "\"pool\":\"pricing\"");
		const char *hit2 = strstr(p, "\"name\":\"pricing\"");
		const char *hit = hit1 && (!hit2 || hit1 < hit2) ? hit1 : hit2;
		if (hit == NULL) {
			buf_adds(&mj, p);
			break;
		}
		buf_add(&mj, p, (size_t)(hit - p));
		buf_adds(&mj, hit == hit1 ? "\"pool\":\"Pricing-Pool\"" : "\"name\":\"Pricing-Pool\"");
		p = hit + strlen(hit == hit1 ? "\"pool\":\"pricing\"" : "\"name\":\"pricing\"");
	}
	Model *m = NULL;
	Err err = {0};
	assert_int_equal(model_parse("hyphen-model", buf_str(&mj), mj.len, &m, &err), 0);
	buf_fini(&mj);
	model_free(e->model);
	e->model = m;
	e->app.model = m;

	/* pool gauges for the window, as an OpenTelemetry SDK would name them */
	char prom[1024];
	long long ms = (long long)((FX_WIN_FROM + (int64_t)60 * 1000000000) / 1000000);
	snprintf(prom, sizeof prom,
	         "# TYPE db_client_connection_count gauge\n"
	         "db_client_connection_count{db_client_connection_pool_name=\"Pricing-Pool\","
	         "db_client_connection_state=\"used\",host=\"api-1\"} 44 %lld\n"
	         "# TYPE db_client_connection_max gauge\n"
	         "db_client_connection_max{db_client_connection_pool_name=\"Pricing-Pool\","
	         "host=\"api-1\"} 48 %lld\n"
	         "# TYPE db_client_connection_pending_requests gauge\n"
	         "db_client_connection_pending_requests{db_client_connection_pool_name=\"Pricing-Pool\","
	         "host=\"api-1\"} 7 %lld\n", ms, ms, ms);
	Store *w = NULL;
	assert_int_equal(store_open(e->path, 0, &w, &err), 0);
	ImportResult res;
	ImportOptions io = {.format = NULL};
	if (import_memory(w, "pool.prom", prom, strlen(prom), &io, &res, &err))
		fail_msg("%s", err.msg);
	store_close(w);

	EvidenceOptions eo = {.model = m, .period.win = e->app.period.win};
	PoolEv pe = {0};
	assert_int_equal(evidence_compute(e->st, &eo, &pe.ev, &err), 0);
	double occ;
	assert_true(evidence_value(pe.ev, "pool.pricing_pool.occupancy", &occ));
	e->app.evidence = pool_evidence_fn;
	e->app.evidence_ctx = &pe;
	env_compute(e);
	select_label(e, "pricing");
	app_open_pane(&e->app, PANE_NODE);
	char *s = screen(e);
	assert_null(strstr(s, "no metrics"));
	/* and the model's 256 slots against the metric's 48 is said */
	assert_non_null(strstr(s, "Pricing-Pool (client, model 256 slots, metric max 48): occupancy 91.7%"));
	assert_non_null(strstr(s, "pending 7.0"));
	free(s);
	check_golden(e, "node_pool_hyphen_120x30.txt");
	evidence_free(pe.ev);
	env_free(e);
}

/* Builds the import-time aggregates of e's database, as a tailtriage
 * writer would have at its last commit (the fixture writes through the
 * store alone). */
static void env_aggregates(Env *e)
{
	Store *w = NULL;
	Err err = {0};
	assert_int_equal(store_open(e->path, 0, &w, &err), 0);
	assert_int_equal(store_begin(w, &err), 0);
	assert_int_equal(analysis_agg_update(w, &err), 0);
	assert_int_equal(store_commit(w, &err), 0);
	store_close(w);
}

/* The first frame of a new question comes from the aggregates: every
 * figure marked "~", the header and status say so, the budgets wait, the
 * tail-ownership pane says it needs the spans. When the exact analysis
 * arrives the frame is the exact one, byte for byte (the golden). */
static void test_approx_then_exact(void **state)
{
	(void)state;
	Env *e = env_new(1, 1, 100, 30, 0);
	env_aggregates(e);
	AnalysisOptions ao;
	app_options(&e->app, &ao);
	Analysis *a = NULL;
	Err err = {0};
	assert_int_equal(analysis_from_aggregates(e->st, &ao, &a, &err), 0);
	app_set_analysis(&e->app, a, e->app.opt_gen);
	e->app.computing = 1;
	select_label(e, "pricing");
	check_golden(e, "dag_approx_100x30.txt");
	char *s = screen(e);
	assert_non_null(strstr(s, "~ approximate"));
	assert_non_null(strstr(s, "p99 ~"));
	assert_non_null(strstr(s, "evaluating..."));
	free(s);
	app_open_pane(&e->app, PANE_OWNER);
	s = screen(e);
	assert_non_null(strstr(s, "needs the exact analysis"));
	free(s);
	app_open_pane(&e->app, PANE_NODE);
	s = screen(e);
	assert_non_null(strstr(s, "~"));
	free(s);
	app_open_pane(&e->app, PANE_DAG);
	/* the exact analysis replaces it: the usual frame, no mark left */
	e->app.computing = 0;
	env_compute(e);
	select_label(e, "pricing");
	check_golden(e, "dag_100x30.txt");
	s = screen(e);
	assert_null(strstr(s, "~"));
	free(s);
	env_free(e);
}

int main(int argc, char **argv)
{
	/* `test_tui --make-db PATH` and `test_tui --more PATH` build and extend
	 * the fixture database for the tmux tests (tests/sh/tui_*.sh). */
	if (argc == 3 && strcmp(argv[1], "--make-db") == 0)
		return fx_make_db(argv[2]) ? 1 : 0;
	if (argc == 3 && strcmp(argv[1], "--more") == 0)
		return fx_more(argv[2]) ? 1 : 0;
	if (argc == 3 && strcmp(argv[1], "--model") == 0) {
		FILE *f = fopen(argv[2], "w");
		if (f == NULL)
			return 1;
		fputs(FX_MODEL_JSON, f);
		return fclose(f) ? 1 : 0;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_dag),
		cmocka_unit_test(test_golden_node),
		cmocka_unit_test(test_golden_owner),
		cmocka_unit_test(test_pulled_tail),
		cmocka_unit_test(test_golden_trace),
		cmocka_unit_test(test_golden_help),
		cmocka_unit_test(test_golden_plain_ascii),
		cmocka_unit_test(test_too_small),
		cmocka_unit_test(test_header_breach_and_budgets),
		cmocka_unit_test(test_budget_evidence_hook),
		cmocka_unit_test(test_budgets_evaluating),
		cmocka_unit_test(test_budget_may_be_breached),
		cmocka_unit_test(test_golden_percent_budget),
		cmocka_unit_test(test_help_lists_every_pane),
		cmocka_unit_test(test_help_wraps_long_lines),
		cmocka_unit_test(test_long_name_in_tab_ends_in_ellipsis),
		cmocka_unit_test(test_span_detail_scrolls_to_every_event),
		cmocka_unit_test(test_trace_id_prompt),
		cmocka_unit_test(test_dag_shows_splits_and_unknown),
		cmocka_unit_test(test_open_node_then_trace_and_back),
		cmocka_unit_test(test_tab_cycles_panes),
		cmocka_unit_test(test_waterfall_queue_and_unnamed_calls),
		cmocka_unit_test(test_number_keys_pick_panes),
		cmocka_unit_test(test_class_cycle_reruns),
		cmocka_unit_test(test_window_and_baseline_prompts),
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_sort_and_fold),
		cmocka_unit_test(test_pause_flag),
		cmocka_unit_test(test_unrecognised_in_status),
		cmocka_unit_test(test_selection_survives_recompute),
		cmocka_unit_test(test_hostile_strings_on_screen),
		cmocka_unit_test(test_node_pool_hyphenated_name),
		cmocka_unit_test(test_approx_then_exact),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
