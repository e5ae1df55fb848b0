/*
 * test_training.c - a training attempt without the command line
 * (drills/training.h): the drill's data is prepared into a scratch
 * database, the engine runs, the answer key scores full marks and the
 * attempt lands in the history; the scratch folder goes away with the
 * session.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "training.h"


static int hist_row(void *ctx, int64_t id, const StoreDrillAttempt *a)
{
	(void)id;
	int *n = ctx;
	assert_string_equal(a->drill, "mini");
	assert_string_equal(a->mode, "answers");
	assert_true(a->score == a->max_score);
	(*n)++;
	return 0;
}

static void test_prepare_score_store(void **state)
{
	(void)state;
	char hist[128];
	tmp_db_path(hist, sizeof hist);
	Err err = {0};
	TrainingSession s = {.history_db = hist, .person = "tester", .started_ms = 1};
	assert_int_equal(drill_load("fixtures/drills/mini.drill.json", &s.d, &err), 0);
	TrainingOptions o = {.max_traces = 200};
	if (training_prepare(&s, &o, &err))
		fail_msg("%s", err.msg);
	assert_non_null(s.dx);
	assert_non_null(s.scratch_dir);
	char *scratch = strdup(s.scratch_dir);
	struct stat sb;
	assert_int_equal(stat(scratch, &sb), 0);
	Answers *a = NULL;
	assert_int_equal(answers_load("fixtures/drills/key.answers.json", s.d, &a, &err), 0);
	Buf out;
	buf_init(&out);
	if (training_score(&s, a, "answers", &out, &err))
		fail_msg("%s", err.msg);
	assert_non_null(strstr(out.p, "mini: 100 / 100 points"));
	assert_int_equal(s.stored, 1);
	buf_fini(&out);
	answers_free(a);
	training_fini(&s);
	assert_int_not_equal(stat(scratch, &sb), 0);  /* the scratch data is gone */
	free(scratch);

	Store *st = NULL;
	assert_int_equal(store_open(hist, STORE_READONLY, &st, &err), 0);
	int n = 0;
	assert_int_equal(store_drill_attempts_scan(st, NULL, NULL, hist_row, &n, &err), 0);
	assert_int_equal(n, 1);
	store_close(st);
	rm_db(hist);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prepare_score_store),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
