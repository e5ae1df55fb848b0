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
#include "select.h"
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

/* Every shipped diagnosis drill: on the drill's own data the engine's
 * leader is the key's first hypothesis (id, and node when the key names
 * one), or the drill says why the engine ranks otherwise (engine_note,
 * naming the engine's leader). A drill whose key the engine contradicts
 * without a word would teach one thing and show another. */
static void test_drills_agree_with_the_engine(void **state)
{
	(void)state;
	static const char *const drills[] = {"capacity-experiment", "mercury-peak-incident",
	                                     "pricing-client-wait", "slowdown-recovery", NULL};
	int agreed = 0;
	for (int i = 0; drills[i]; i++) {
		char path[256];
		snprintf(path, sizeof path, "../drills/catalog/%s.drill.json", drills[i]);
		Err err = {0};
		TrainingSession s = {.history_db = ":memory:", .person = "tester", .started_ms = 1};
		if (drill_load(path, &s.d, &err))
			fail_msg("%s", err.msg);
		assert_int_equal(s.d->kind, DRILL_DIAGNOSIS);
		TrainingOptions o = {0};
		if (training_prepare(&s, &o, &err))
			fail_msg("%s: %s", drills[i], err.msg);
		assert_non_null(s.dx);
		assert_true(s.d->n_key_hyp > 0 && s.dx->n_hyp > 0);
		const DxHypothesis *top = &s.dx->hyp[0];
		char got[256];
		snprintf(got, sizeof got, "%s:%s", top->id, top->node ? top->node : "");
		const char *want = s.d->key_hyp[0].id;
		int same = strchr(want, ':') ? strcmp(want, got) == 0
		                             : strncmp(got, want, strlen(want)) == 0 &&
		                                   got[strlen(want)] == ':';
		fprintf(stderr, "  %-24s key #1 %-28s engine #1 %s\n", drills[i], want, got);
		if (same) {
			agreed++;
		} else if (strcmp(drills[i], "pricing-client-wait") == 0) {
			fail_msg("the flagship drill must agree with the engine: key %s, engine %s", want, got);
		} else {
			if (s.d->engine_note == NULL)
				fail_msg("%s: the key ranks %s first, the engine %s, and the drill does not "
				         "say why (engine_note)", drills[i], want, got);
			if (strstr(s.d->engine_note, top->id) == NULL)
				fail_msg("%s: engine_note does not name the engine's leader %s", drills[i],
				         top->id);
		}
		training_fini(&s);
	}
	/* the note is the exception, not the rule: at most two of the four
	 * (the capacity experiment compares two fleets, not an incident with
	 * its baseline; the slowdown drill's backlog is read by the engine as
	 * the queue it is), and never the flagship */
	assert_true(agreed >= 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prepare_score_store),
		cmocka_unit_test(test_drills_agree_with_the_engine),
	};
	return tt_run_group_tests(tests, NULL, NULL);
}
