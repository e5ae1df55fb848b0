/*
 * test_view_board.c - the hypothesis board pane and the header's budget
 * evidence, driven headless like the other TUI tests: the TUI fixture
 * database (enterprise pricing calls wait on the client side in the
 * window), the real background diagnosis (cli/board.c, drills/dx_live.c),
 * keys fed to the app and frames dumped from the canvas.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app.h"
#include "board.h"
#include "canvas.h"
#include "test_tui_fixture.h"
#include "tui_board.h"
#include "view.h"

typedef struct Env {
	char path[128];
	Store *st;
	Model *model;
	CliBoard *board;
	TuiApp app;
	Canvas cv;
} Env;

/* The fixture's window; the baseline base_from..base_to. */
static Env *env_new_base(int w, int h, int64_t base_from, int64_t base_to)
{
	Env *e = calloc(1, sizeof *e);
	tmp_db_path(e->path, sizeof e->path);
	assert_int_equal(fx_make_db(e->path), 0);
	Err err = {0};
	assert_int_equal(store_open(e->path, STORE_READONLY, &e->st, &err), 0);
	e->model = fx_model();
	assert_non_null(e->model);
	e->board = cli_board_open(e->path, e->model, &err);
	assert_non_null(e->board);
	TuiOptions o;
	memset(&o, 0, sizeof o);
	o.db_path = e->path;
	o.model = e->model;
	o.period.win.from = FX_WIN_FROM;
	o.period.win.to = FX_WIN_FROM + (int64_t)600 * 1000000000;
	o.period.has_baseline = 1;
	o.period.base.from = base_from;
	o.period.base.to = base_to;
	o.refresh_ms = 1000;
	o.ascii = 1;
	cli_board_wire(e->board, &o);
	app_init(&e->app, &o);
	canvas_init(&e->cv, w, h, 1);
	AnalysisOptions ao;
	app_options(&e->app, &ao);
	Analysis *a = NULL;
	assert_int_equal(analysis_run(e->st, &ao, &a, &err), 0);
	a->data_version = store_data_version(e->st);
	app_set_analysis(&e->app, a, e->app.opt_gen);
	return e;
}

static Env *env_new(int w, int h)
{
	return env_new_base(w, h, FX_BASE_FROM, FX_WIN_FROM);
}

static void env_free(Env *e)
{
	app_fini(&e->app);
	cli_board_close(e->board);
	canvas_fini(&e->cv);
	store_close(e->st);
	model_free(e->model);
	rm_db(e->path);
	free(e);
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

/* Draws until the background diagnosis has landed (at most ~20 s). */
static char *screen_when_ready(Env *e, const char *needle)
{
	for (int i = 0; i < 400; i++) {
		char *s = screen(e);
		if (strstr(s, needle))
			return s;
		free(s);
		struct timespec ts = {0, 50 * 1000000};
		nanosleep(&ts, NULL);
	}
	char *s = screen(e);
	fail_msg("'%s' never appeared:\n%s", needle, s);
	return s;
}

#define HAS(s, x) \
	do { \
		if (strstr((s), (x)) == NULL) \
			fail_msg("'%s' not on screen:\n%s", (x), (s)); \
	} while (0)

static void test_board(void **state)
{
	(void)state;
	Env *e = env_new(100, 30);
	app_open_pane(&e->app, PANE_BOARD);
	char *s = screen_when_ready(e, "most likely first");
	/* the tab is there; the fixture holds 40 requests a window, too few
	 * for a p99, so the board says so first and puts the null hypothesis
	 * on top with its reason; pricing's wait comes next */
	HAS(s, "6 Board");
	if (strstr(s, " 1 insufficient-evidence") == NULL)
		fail_msg("a 40-request window did not put insufficient-evidence first:\n%s", s);
	HAS(s, "fewer than 100");
	if (strstr(s, " 2 client-pool-wait") == NULL)
		fail_msg("client-pool-wait is not second:\n%s", s);
	app_key(&e->app, TK_DOWN);
	free(s);
	s = screen(e);
	const char *lead = strstr(s, " 2 client-pool-wait");
	const char *eol = strchr(lead, '\n');
	char line[256];
	snprintf(line, sizeof line, "%.*s", (int)(eol - lead), lead);
	assert_non_null(strstr(line, "pricing"));
	HAS(s, "check: pool-by-class");
	/* what to do about it, from the catalog, for what it blames */
	HAS(s, "remedy: bound the work that holds the pool in");
	HAS(s, "refused     degrade:pricing");
	HAS(s, "supported   hold-rollout");
	free(s);

	/* Enter runs the check, Left closes it */
	app_key(&e->app, TK_ENTER);
	s = screen(e);
	HAS(s, "check for client-pool-wait");
	HAS(s, "pool-by-class: Which class holds the pool");
	HAS(s, "enterprise");
	free(s);
	app_key(&e->app, TK_LEFT);
	s = screen(e);
	assert_null(strstr(s, "check for client-pool-wait"));
	free(s);

	/* Up moves the selection; the detail follows */
	app_key(&e->app, TK_UP);
	s = screen(e);
	HAS(s, "check: ");
	free(s);
	env_free(e);
}

/* The header's budgets while the background diagnosis runs: the first
 * frame asks for it and says "evaluating..."; when it has landed the
 * budgets are evaluated from it and the word is gone. */
static void test_header_evaluating(void **state)
{
	(void)state;
	Env *e = env_new(100, 30);
	char *s = screen(e);
	const char *row = strstr(s, "budgets");
	assert_non_null(row);
	if (strstr(row, "evaluating...") == NULL)
		fail_msg("the first frame does not say evaluating:\n%s", s);
	assert_null(strstr(s, "no evidence"));
	free(s);
	/* the board's diagnosis has landed once the Board pane shows it */
	app_open_pane(&e->app, PANE_BOARD);
	s = screen_when_ready(e, "most likely first");
	if (strstr(s, "evaluating") != NULL)
		fail_msg("the header still says evaluating with the diagnosis on screen:\n%s", s);
	free(s);
	env_free(e);
}

/* One analysis: the diagnosis behind the header and the Board reads the
 * analysis on screen instead of computing it again, even when the
 * dashboard replaces it (a class switch) while the diagnosis runs; the
 * class's analysis is not the diagnosis's (all classes) and a new
 * window's is read again. */
static void test_board_shares_the_analysis(void **state)
{
	(void)state;
	Env *e = env_new(100, 30);
	char *s = screen(e);   /* the first frame asks for the diagnosis */
	free(s);
	/* the user switches class at once: the dashboard drops its hold on
	 * the analysis the diagnosis is reading (ASan: no use after free) */
	int r = app_key(&e->app, 'c');
	assert_true(r & REACT_RELOAD);
	AnalysisOptions ao;
	app_options(&e->app, &ao);
	assert_non_null(ao.wclass);
	Analysis *a = NULL;
	Err err = {0};
	assert_int_equal(analysis_run(e->st, &ao, &a, &err), 0);
	a->data_version = store_data_version(e->st);
	app_set_analysis(&e->app, a, e->app.opt_gen);
	app_open_pane(&e->app, PANE_BOARD);
	s = screen_when_ready(e, "most likely first");
	free(s);
	unsigned reused, computed;
	cli_board_counts(e->board, &reused, &computed);
	assert_int_equal(reused, 1);   /* the first request, with the first analysis */
	assert_int_equal(computed, 0); /* the class's window is the same: no new one */
	/* back to all classes over another window: its analysis is read too */
	while (e->app.wclass)
		app_key(&e->app, 'c');
	e->app.period.win.from = FX_BASE_FROM;
	e->app.period.win.to = FX_WIN_FROM;
	e->app.period.has_baseline = 0;
	e->app.opt_gen++;
	app_options(&e->app, &ao);
	assert_int_equal(analysis_run(e->st, &ao, &a, &err), 0);
	a->data_version = store_data_version(e->st);
	app_set_analysis(&e->app, a, e->app.opt_gen);
	s = screen(e);
	free(s);
	for (int i = 0; i < 400; i++) {
		struct timespec ts = {0, 50 * 1000000};
		nanosleep(&ts, NULL);
		s = screen(e);
		int done = strstr(s, "most likely first") != NULL && strstr(s, "updating") == NULL;
		free(s);
		cli_board_counts(e->board, &reused, &computed);
		if (done && reused == 2)
			break;
	}
	assert_int_equal(reused, 2);
	assert_int_equal(computed, 0);
	env_free(e);
}

/* At 80 columns the decisions' reasons are cut with an ellipsis; Right
 * marks the decisions, Enter shows the marked one in full, Left goes
 * back. The marked hypothesis carries the pointer, not only a colour. */
static void test_board_decisions_in_full(void **state)
{
	(void)state;
	Env *e = env_new(80, 24);
	app_open_pane(&e->app, PANE_BOARD);
	char *s = screen_when_ready(e, "most likely first");
	/* (the 40-request fixture puts the null hypothesis first, see above) */
	if (strstr(s, "\n> 1 insufficient-evid") == NULL)
		fail_msg("the marked hypothesis has no pointer:\n%s", s);
	const char *dl = strstr(s, "refused     degrade:pricing");
	assert_non_null(dl);
	const char *eol = strchr(dl, '\n');
	if (eol[-1] != '~')
		fail_msg("a cut decision line does not end in an ellipsis:\n%s", s);
	free(s);
	app_key(&e->app, TK_RIGHT);
	s = screen(e);
	HAS(s, "decisions (Enter shows the marked one in full");
	/* the first decision is marked */
	if (!strstr(s, "\n>supported") && !strstr(s, "\n>unsupported") && !strstr(s, "\n>refused"))
		fail_msg("no decision is marked:\n%s", strstr(s, "decisions ("));
	free(s);
	/* down to degrade:pricing, then open it */
	for (int i = 0; i < 8; i++) {
		s = screen(e);
		const char *m = strstr(s, ">refused     degrade:pricing");
		free(s);
		if (m)
			break;
		app_key(&e->app, TK_DOWN);
	}
	app_key(&e->app, TK_ENTER);
	s = screen(e);
	HAS(s, "decision degrade:pricing: refused (Left closes it)");
	/* the whole reason, wrapped: no line of it is cut */
	const char *full = strstr(s, "(Left closes it)\n");
	assert_non_null(full);
	const char *end = strstr(full, "\n decisions");
	assert_non_null(end);
	for (const char *p = full; p < end; p++)
		if (*p == '~' && p[1] == '\n')
			fail_msg("the decision shown in full is cut:\n%s", s);
	free(s);
	app_key(&e->app, TK_LEFT);
	s = screen(e);
	assert_null(strstr(s, "decision degrade:pricing: refused"));
	free(s);
	app_key(&e->app, TK_LEFT);
	s = screen(e);
	HAS(s, "decisions (Right marks them)");
	free(s);
	env_free(e);
}

/* A baseline without a request: the engine refuses it, and the Board
 * says so at once, with the engine's words (range and counts), instead
 * of "diagnosing..." for ever. The loop is told (ready()), so the
 * message is drawn without a key press. */
static void test_board_refused_baseline(void **state)
{
	(void)state;
	Env *e = env_new_base(100, 30, FX_BASE_FROM - (int64_t)600 * 1000000000, FX_BASE_FROM);
	app_open_pane(&e->app, PANE_BOARD);
	char *s = screen(e);   /* asks for the diagnosis */
	free(s);
	const TuiBoard *tb = e->app.board;
	assert_non_null(tb);
	int told = 0;
	for (int i = 0; i < 400 && !told; i++) {
		struct timespec ts = {0, 50 * 1000000};
		nanosleep(&ts, NULL);
		told = tb->ready(tb->ctx);
	}
	if (!told)
		fail_msg("the loop was never told that the diagnosis failed");
	s = screen(e);
	HAS(s, "no diagnosis of this window and baseline");
	HAS(s, "holds no request of the endpoint");
	HAS(s, "(the window holds 40,");
	HAS(s, "b sets the baseline");
	assert_null(strstr(s, "diagnosing the window"));
	free(s);
	env_free(e);
}

/* At 80x24 every decision has its line, the supported ones first (the
 * one to act on is never scrolled away), and no hypothesis's id is cut:
 * each id shown is whole, with its rank in front. */
static void test_board_80x24_whole(void **state)
{
	(void)state;
	Env *e = env_new(80, 24);
	app_open_pane(&e->app, PANE_BOARD);
	char *s = screen_when_ready(e, "most likely first");
	const TuiBoardSnapshot *sn = e->app.board->snapshot(e->app.board->ctx, e->app.a);
	assert_non_null(sn);
	assert_true(sn->n_decisions >= 5);
	const char *dec = strstr(s, "decisions (Right marks them)");
	assert_non_null(dec);
	if (strstr(dec, "/5") != NULL || strstr(dec, "/6") != NULL)
		fail_msg("the decisions scroll at 80x24:\n%s", s);
	int seen_other = 0;
	for (int i = 0; i < sn->n_decisions; i++) {
		int sup = strcmp(sn->decisions[i].verdict, "supported") == 0;
		if (sup && seen_other)
			fail_msg("a supported decision comes after another verdict");
		seen_other |= !sup;
		char line[128];
		snprintf(line, sizeof line, "%-11s %s:", sn->decisions[i].verdict, sn->decisions[i].id);
		if (strstr(dec, line) == NULL)
			fail_msg("decision '%s' is not on screen:\n%s", line, s);
	}
	HAS(dec, "supported   hold-rollout:");
	int shown = 0;
	for (int i = 0; i < sn->n_hyps; i++) {
		char row[128];
		snprintf(row, sizeof row, "%2d %s ", sn->hyps[i].rank, sn->hyps[i].id);
		shown += strstr(s, row) != NULL;
	}
	if (shown < 6)
		fail_msg("only %d hypotheses are shown whole at 80x24:\n%s", shown, s);
	free(s);
	env_free(e);
}

/* Without a board the pane is not offered and Tab skips it. */
static void test_no_board(void **state)
{
	(void)state;
	TuiOptions o;
	memset(&o, 0, sizeof o);
	o.db_path = "unused";
	o.period.win.from = INT64_MIN;
	o.period.win.to = INT64_MAX;
	TuiApp app;
	app_init(&app, &o);
	for (int i = 0; i < 2 * PANE_COUNT; i++) {
		app_key(&app, TK_TAB);
		assert_int_not_equal(app.pane, PANE_BOARD);
	}
	app_fini(&app);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_board),
		cmocka_unit_test(test_board),
		cmocka_unit_test(test_header_evaluating),
		cmocka_unit_test(test_board_decisions_in_full),
		cmocka_unit_test(test_board_shares_the_analysis),
		cmocka_unit_test(test_board_refused_baseline),
		cmocka_unit_test(test_board_80x24_whole),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
