/*
 * test_model_follow.c - the inferred model follows the data
 * (analysis/model_follow.h): a dashboard started on an empty database
 * (`tui --listen` on a new one) gets a model once requests arrive, and a
 * new one when a dependency appears or the requests double; a change
 * that is not material asks for nothing. Real SQLite files, the TUI
 * fixture's requests written as an import would.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model_follow.h"
#include "test_tui_fixture.h"

static Analysis *analyse(const char *path, const Model *m)
{
	Store *st = NULL;
	Err err = {0};
	assert_int_equal(store_open(path, STORE_READONLY, &st, &err), 0);
	AnalysisOptions ao = {.period = PERIOD_ALL, .model = m};
	Analysis *a = NULL;
	assert_int_equal(analysis_run(st, &ao, &a, &err), 0);
	store_close(st);
	return a;
}

static int has_node(const Model *m, const char *service)
{
	for (int i = 0; i < m->n_nodes; i++)
		if (m->nodes[i].service && strcmp(m->nodes[i].service, service) == 0)
			return 1;
	return 0;
}

/* Shows the follower fresh analyses until it hands over a model (it asks,
 * drafts on its thread, then hands over), for at most ~30 s. */
static const Model *await_model(ModelFollow *f, const char *path, const Model *cur)
{
	for (int i = 0; i < 600; i++) {
		Analysis *a = analyse(path, cur);
		const Model *m = model_follow_update(f, a);
		analysis_free(a);
		if (m)
			return m;
		struct timespec ts = {0, 50 * 1000000};
		nanosleep(&ts, NULL);
	}
	fail_msg("no model was handed over");
	return NULL;
}

/* What is material: requests where there was no model, twice the
 * requests, a node the model does not describe beyond the nodes seen;
 * a class-filtered analysis says nothing. */
static void test_material(void **state)
{
	(void)state;
	char path[128];
	tmp_db_path(path, sizeof path);
	assert_int_equal(fx_make_db(path), 0);
	Model *m = fx_model();
	Analysis *a = analyse(path, m);
	int64_t req = a->pop[POP_WINDOW].requests;
	assert_true(req > 0);
	assert_true(model_follow_material(NULL, a, 0, 0));
	assert_false(model_follow_material(m, a, req, a->n_nodes));
	assert_true(model_follow_material(m, a, req / 2, a->n_nodes));
	assert_false(model_follow_material(m, a, req / 2 + 1, a->n_nodes));
	/* the fixture model leaves the hostile-named local span out: a node it
	 * does not describe, material only when the DAG grew */
	assert_true(model_follow_material(m, a, req, a->n_nodes - 1));
	a->class_filter = xstrdup("standard");
	assert_false(model_follow_material(NULL, a, 0, 0));
	analysis_free(a);
	model_free(m);
	rm_db(path);
}

/* An empty database at start: no model; once requests arrive a model is
 * drafted from them; nothing more while the data does not change; a new
 * dependency (the audit call of the later batch) brings a new draft that
 * describes it. */
static void test_follows_arriving_data(void **state)
{
	(void)state;
	char path[128];
	tmp_db_path(path, sizeof path);
	Store *st = NULL;
	Err err = {0};
	assert_int_equal(store_open(path, 0, &st, &err), 0);
	store_close(st);
	ModelFollow *f = NULL;
	assert_int_equal(model_follow_open(path, NULL, INT64_MIN, INT64_MAX, &f, &err), 0);
	Analysis *a = analyse(path, NULL);
	assert_null(model_follow_update(f, a)); /* nothing there: nothing asked */
	analysis_free(a);
	assert_int_equal(model_follow_count(f), 0);

	assert_int_equal(fx_make_db(path), 0);
	const Model *m1 = await_model(f, path, NULL);
	assert_true(m1->inferred);
	assert_true(has_node(m1, "pricing"));
	assert_false(has_node(m1, "audit"));
	unsigned drafts = model_follow_count(f);

	/* the same data, shown again and again: no new draft */
	for (int i = 0; i < 5; i++) {
		a = analyse(path, m1);
		assert_null(model_follow_update(f, a));
		analysis_free(a);
	}
	assert_int_equal(model_follow_count(f), drafts);

	assert_int_equal(fx_more(path), 0);
	const Model *m2 = await_model(f, path, m1);
	assert_ptr_not_equal(m1, m2);
	assert_true(has_node(m2, "audit"));
	/* m1 stays valid until close (an analysis may still read it) */
	assert_true(has_node(m1, "pricing"));
	model_follow_close(f);
	rm_db(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_material),
		cmocka_unit_test(test_follows_arriving_data),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
