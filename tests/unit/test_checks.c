/*
 * test_checks.c - the discriminating checks: each runs headless over a
 * store and answers its question in a small table. Exact figures on the
 * hand-made fixture (tests/fixtures/diag), and on simulated data with a
 * hot host and a heavier enterprise class the tables must show what was
 * injected (the hot host first by lift, enterprise with more calls per
 * request), read back from the simulator's run info.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checks.h"
#include "diagnose.h"
#include "helpers.h"
#include "import.h"
#include "model_json.h"
#include "sim.h"
#include "sim_gen.h"

#define FX "fixtures/diag/"
#define W0 ((int64_t)1784052000000000000LL)
#define W1 (W0 + (int64_t)60000000000LL)

static const char *cell(const CheckTable *t, int row, const char *col)
{
	for (int c = 0; c < t->n_cols; c++)
		if (strcmp(t->cols[c], col) == 0)
			return t->cells[row * t->n_cols + c];
	fail_msg("no column %s in %s", col, t->name);
	return NULL;
}

static int row_of(const CheckTable *t, const char *first)
{
	for (int r = 0; r < t->n_rows; r++)
		if (strcmp(t->cells[r * t->n_cols], first) == 0)
			return r;
	fail_msg("no row %s in %s", first, t->name);
	return -1;
}

/* "~1.20" -> 1.2 */
static double num(const char *s)
{
	while (*s == '~')
		s++;
	return strtod(s, NULL);
}

static CheckTable *run(Store *st, const char *name, const CheckOptions *o)
{
	CheckTable *t = NULL;
	Err err = {0};
	if (check_run(st, name, o, &t, &err))
		fail_msg("%s: %s", name, err.msg);
	assert_string_equal(t->name, name);
	assert_non_null(t->question);
	assert_true(t->n_cols > 0);
	/* both renderings work */
	Buf b;
	buf_init(&b);
	check_table_text(t, &b);
	assert_non_null(strstr(buf_str(&b), t->question));
	buf_reset(&b);
	check_table_json(t, &b);
	cJSON *j = cJSON_Parse(buf_str(&b));
	assert_non_null(j);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "rows")), t->n_rows);
	cJSON_Delete(j);
	buf_fini(&b);
	return t;
}

static void test_registry(void **state)
{
	(void)state;
	int n = 0;
	for (const char *const *c = check_names(); *c; c++, n++)
		assert_non_null(check_question(*c));
	assert_true(n >= 6);
	assert_null(check_question("nope"));
	CheckTable *t = NULL;
	Err err = {0};
	assert_int_equal(check_run(NULL, "nope", NULL, &t, &err), TT_ENOTFOUND);
	assert_non_null(strstr(err.msg, "pool-by-class"));
	assert_int_equal(check_run(NULL, "late-work", NULL, &t, &err), TT_EINVAL);
}

static void test_fixture_exact(void **state)
{
	(void)state;
	char path[128];
	tmp_db_path(path, sizeof path);
	Store *st = NULL;
	Err err = {0};
	assert_int_equal(store_open(path, 0, &st, &err), 0);
	static const char *const files[] = {FX "requests.otlp.json", FX "pool_metrics.otlp.json", NULL};
	for (int i = 0; files[i]; i++) {
		ImportResult res;
		ImportOptions io = {0};
		if (import_file(st, files[i], &io, &res, &err))
			fail_msg("%s", err.msg);
	}
	Model *m = NULL;
	assert_int_equal(model_load(FX "mini.model.json", &m, &err), 0);
	CheckOptions o = {.model = m, .period.win = {W0, W1}};

	CheckTable *t = run(st, "client-vs-server", &o);
	int db = row_of(t, "db");
	assert_string_equal(cell(t, db, "attempts"), "~1.20");
	assert_string_equal(cell(t, db, "errors"), "~16.7%");
	assert_string_equal(cell(t, db, "calls/req"), "~1.20");
	assert_string_equal(cell(t, db, "base client"), "?"); /* no baseline: unknown, not 0 */
	check_table_free(t);

	o.node = "rec";
	t = run(st, "client-vs-server", &o);
	assert_int_equal(t->n_rows, 1);
	check_table_free(t);
	o.node = "nothing";
	assert_int_equal(check_run(st, "client-vs-server", &o, &t, &err), TT_ENOTFOUND);
	o.node = NULL;

	t = run(st, "late-work", &o);
	assert_true(t->n_rows >= 1);
	assert_string_equal(cell(t, 0, "late work"), "~40.0%");
	assert_string_equal(cell(t, 0, "omitted"), "~40.0%");
	check_table_free(t);

	o.node = "db";
	t = run(st, "pool-by-class", &o);
	int all = row_of(t, "all");
	assert_string_equal(cell(t, all, "requests"), "5");
	assert_non_null(strstr(t->note, "pool.db.occupancy"));
	check_table_free(t);
	o.node = NULL;

	t = run(st, "endpoint-queue", &o);
	assert_string_equal(t->cells[0], "all");
	assert_non_null(strstr(t->note, "executor occupancy"));
	assert_non_null(strstr(t->note, "fleet CPU"));
	check_table_free(t);

	t = run(st, "class-mix", &o);
	assert_int_equal(t->n_cols, 4); /* from, requests, two classes */
	check_table_free(t);

	/* a window without requests is an error, not an empty table */
	CheckOptions empty = {.model = m, .period.win = {W0 - 7200000000000LL, W0 - 3600000000000LL}};
	assert_int_equal(check_run(st, "late-work", &empty, &t, &err), TT_ENOTFOUND);

	store_close(st);
	rm_db(path);
	model_free(m);
}

/* Data whose spans name no host (no host.name on any resource): the
 * host-concentration check has no index to give and says "n/a", not the
 * "nan" of a 0/0. */
static void test_no_hosts(void **state)
{
	(void)state;
	char path[128], json[160];
	tmp_db_path(path, sizeof path);
	snprintf(json, sizeof json, "%s.otlp.json", path);
	Buf b;
	buf_init(&b);
	Err err = {0};
	assert_int_equal(buf_read_file(&b, FX "requests.otlp.json", 1 << 20, &err), 0);
	for (char *h = strstr(b.p, "\"host.name\""); h; h = strstr(h, "\"host.name\""))
		memcpy(h, "\"host.nope\"", 11);
	FILE *f = fopen(json, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b.p, 1, b.len, f), b.len);
	fclose(f);
	buf_fini(&b);

	Store *st = NULL;
	assert_int_equal(store_open(path, 0, &st, &err), 0);
	ImportResult res;
	ImportOptions io = {0};
	if (import_file(st, json, &io, &res, &err))
		fail_msg("%s", err.msg);
	Model *m = NULL;
	assert_int_equal(model_load(FX "mini.model.json", &m, &err), 0);
	CheckOptions o = {.model = m, .period.win = {W0, W1}};
	CheckTable *t = run(st, "host-concentration", &o);
	assert_int_equal(t->n_rows, 0);
	assert_non_null(strstr(t->note, "concentration index n/a window, n/a baseline"));
	assert_non_null(strstr(t->note, "tail: none"));
	assert_null(strstr(t->note, "nan"));
	check_table_free(t);
	store_close(st);
	rm_db(path);
	unlink(json);
	model_free(m);
}

static void test_simulated(void **state)
{
	(void)state;
	Err err = {0};
	static const char *const kv[] = {
	    "fleet=light", "traces=300", "window-s=60", "warmup-s=20", "hosts=8",
	    "incident=placement-hotspot", "hot-hosts=1", "hot-share=0.9",
	    "enterprise-share=0.12", "incident-enterprise-share=0.12", NULL,
	};
	SimGen g;
	sim_gen(&g, kv, NULL);
	Store *st = g.st;
	const SimPhaseInfo *inc = &g.run.phases[1];
	assert_string_equal(inc->name, "incident");
	Model *m = NULL;
	assert_int_equal(model_load("../models/mercury-home.model.json", &m, &err), 0);
	CheckOptions o = {.model = m, .period = g.period};

	/* the hot host leads by lift */
	CheckTable *t = run(st, "host-concentration", &o);
	assert_string_equal(t->cells[0], g.world.resources[inc->hot[0]].host);
	assert_true(num(cell(t, 0, "lift")) > 2);
	assert_non_null(strstr(t->note, "concentration index"));
	check_table_free(t);

	/* enterprise asks several partitioned quotes per request */
	t = run(st, "fanout-by-class", &o);
	double ent = num(cell(t, row_of(t, "enterprise"), "calls/req"));
	double std = num(cell(t, row_of(t, "standard"), "calls/req"));
	assert_true(ent > std);
	double n_ent = num(cell(t, row_of(t, "enterprise"), "requests"));
	double n_all = num(cell(t, row_of(t, "all"), "requests"));
	check_table_free(t);

	/* --class: host-concentration counts only that class's requests */
	o.wclass = "enterprise";
	t = run(st, "host-concentration", &o);
	double sum = 0;
	for (int r = 0; r < t->n_rows; r++)
		sum += num(cell(t, r, "requests"));
	assert_true(n_ent > 0 && n_ent < n_all);
	assert_true(sum == n_ent);
	assert_non_null(strstr(t->note, "class enterprise only"));
	check_table_free(t);
	t = run(st, "fanout-by-class", &o);
	assert_int_equal(t->n_rows, 2);
	assert_string_equal(cell(t, 1, "class"), "enterprise");
	check_table_free(t);
	/* class-mix compares the classes: a class is refused */
	assert_int_equal(check_run(st, "class-mix", &o, &t, &err), TT_EINVAL);
	assert_non_null(strstr(err.msg, "late-work"));
	o.wclass = NULL;

	o.node = "pricing";
	t = run(st, "pool-by-class", &o);
	assert_true(num(cell(t, row_of(t, "enterprise"), "calls/req")) >
	            num(cell(t, row_of(t, "standard"), "calls/req")));
	assert_non_null(strstr(t->note, "pool.pricing.occupancy"));
	check_table_free(t);
	o.node = NULL;

	t = run(st, "class-mix", &o);
	assert_string_equal(t->cells[(t->n_rows - 1) * t->n_cols], "baseline");
	check_table_free(t);

	/* every check the catalog names runs on this data */
	Diagnosis *d = NULL;
	DiagnoseOptions dopt = {.model = m, .period.win = o.period.win,
	                        .period.has_baseline = 1, .period.base = o.period.base};
	assert_int_equal(diagnose_run(st, &dopt, &d, &err), 0);
	for (int i = 0; i < d->n_hyp; i++) {
		CheckOptions co = o;
		co.node = d->hyp[i].check_node;
		co.wclass = d->hyp[i].check_class;
		if (check_run(st, d->hyp[i].check, &co, &t, &err))
			fail_msg("%s's check %s: %s", d->hyp[i].id, d->hyp[i].check, err.msg);
		check_table_free(t);
	}
	diagnosis_free(d);

	model_free(m);
	sim_gen_free(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_fixture_exact),
		cmocka_unit_test(test_no_hosts),
		cmocka_unit_test(test_simulated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
