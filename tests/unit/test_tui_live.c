/*
 * test_tui_live.c - the live read session (analysis/live.c): results come
 * from the worker without blocking the caller, a commit by another
 * connection is noticed, superseded requests are dropped, traces load.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <poll.h>
#include <time.h>

#include "evidence.h"
#include "live.h"
#include "test_tui_fixture.h"

/* Waits up to 20 s for a result. */
static int wait_result(LiveSession *ls, LiveResult *r)
{
	for (int i = 0; i < 200; i++) {
		if (live_take(ls, r))
			return 1;
		struct pollfd p = {.fd = live_wait_fd(ls), .events = POLLIN};
		poll(&p, 1, 100);
	}
	return 0;
}

static const DagNode *find(const Analysis *a, const char *label)
{
	for (int i = 0; i < a->n_nodes; i++)
		if (strcmp(a->nodes[i].label, label) == 0)
			return &a->nodes[i];
	return NULL;
}

static void test_open_errors(void **state)
{
	(void)state;
	LiveSession *ls = NULL;
	Err err = {0};
	assert_int_equal(live_open("/nonexistent/dir/x.db", &ls, &err), TT_EIO);
	assert_null(ls);
	assert_non_null(strstr(err.msg, "/nonexistent/dir/x.db"));
	/* a file that is not a database */
	char path[128];
	tmp_db_path(path, sizeof path);
	FILE *f = fopen(path, "w");
	fputs("not a database, just text\n", f);
	fclose(f);
	err_clear(&err);
	assert_true(live_open(path, &ls, &err) < 0);
	assert_non_null(strstr(err.msg, "not a tailtriage database"));
	rm_db(path);
}

static void test_compute_change_and_trace(void **state)
{
	(void)state;
	char path[128];
	tmp_db_path(path, sizeof path);
	assert_int_equal(fx_make_db(path), 0);
	LiveSession *ls = NULL;
	Err err = {0};
	assert_int_equal(live_open(path, &ls, &err), 0);
	AnalysisOptions ao = {.period.win = TIME_RANGE_ALL};
	live_request(ls, &ao, 7);
	LiveResult r;
	assert_true(wait_result(ls, &r));
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.gen, 7);
	assert_int_equal(r.a->pop[POP_WINDOW].requests, 2 * FX_N);
	assert_null(find(r.a, "audit"));
	/* a new question's read also built the evidence's request set */
	const EvRequestSet *rs = evidence_attached_requests(r.a, POP_WINDOW);
	assert_non_null(rs);
	assert_int_equal(rs->n, 2 * FX_N);
	assert_true(r.compute_ms >= 0);
	/* no commit since: nothing changed */
	assert_int_equal(live_check(ls), 0);
	assert_false(live_busy(ls));
	/* another connection writes, as an import in another process would */
	assert_int_equal(fx_more(path), 0);
	assert_int_equal(live_check(ls), 1);
	assert_int_equal(live_check(ls), 0); /* reported once */
	live_request(ls, &ao, 7);
	live_result_free(&r);
	assert_true(wait_result(ls, &r));
	assert_int_equal(r.a->pop[POP_WINDOW].requests, 2 * FX_N + 20);
	assert_non_null(find(r.a, "audit"));
	/* caught up with new rows only: the set would lack them, none is kept */
	assert_null(evidence_attached_requests(r.a, POP_WINDOW));
	/* the waterfall loads on the owner's connection */
	const DagNode *pricing = find(r.a, "pricing");
	assert_non_null(pricing);
	TraceView *tv = NULL;
	assert_int_equal(live_trace(ls, pricing->slowest[0].trace_id, NULL, &tv, &err), 0);
	assert_true(tv->n_spans >= 10);
	trace_view_free(tv);
	assert_int_equal(live_trace(ls, "00000000000000000000000000000000", NULL, &tv, &err), TT_ENOTFOUND);
	live_result_free(&r);
	live_close(ls);
	rm_db(path);
}

/* A request made while another is pending supersedes it; the class
 * string is copied, so the caller's buffer may change at once. */
static void test_superseded_requests(void **state)
{
	(void)state;
	char path[128];
	tmp_db_path(path, sizeof path);
	assert_int_equal(fx_make_db(path), 0);
	LiveSession *ls = NULL;
	Err err = {0};
	assert_int_equal(live_open(path, &ls, &err), 0);
	char cls[32];
	AnalysisOptions ao = {.period.win = TIME_RANGE_ALL, .wclass = cls};
	snprintf(cls, sizeof cls, "standard");
	live_request(ls, &ao, 1);
	snprintf(cls, sizeof cls, "premium");
	live_request(ls, &ao, 2);
	snprintf(cls, sizeof cls, "garbage");
	LiveResult r;
	assert_true(wait_result(ls, &r));
	assert_int_equal(r.gen, 2);
	assert_string_equal(r.a->class_filter, "premium");
	live_result_free(&r);
	/* nothing else arrives */
	for (int i = 0; i < 5 && live_busy(ls); i++)
		poll(NULL, 0, 100);
	assert_false(live_take(ls, &r));
	live_close(ls);
	rm_db(path);
}

/* Closing while an analysis runs waits for it and leaks nothing. */
static void test_close_while_busy(void **state)
{
	(void)state;
	char path[128];
	tmp_db_path(path, sizeof path);
	assert_int_equal(fx_make_db(path), 0);
	LiveSession *ls = NULL;
	Err err = {0};
	assert_int_equal(live_open(path, &ls, &err), 0);
	AnalysisOptions ao = {.period.win = TIME_RANGE_ALL};
	live_request(ls, &ao, 1);
	live_close(ls);
	live_close(NULL);
	rm_db(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_compute_change_and_trace),
		cmocka_unit_test(test_superseded_requests),
		cmocka_unit_test(test_close_while_busy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
