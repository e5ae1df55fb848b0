/*
 * test_sheet.c - observation sheets: the database-free loader on the
 * shipped matched-peak sheet, the importer and its read-back, idempotent
 * re-import, conflicts, and located errors for malformed sheets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "import.h"
#include "sheet.h"
#include "store.h"
#include "store_env.h"

#define EXAMPLE "../data/sheets/pricing-matched-peak.sheet.json"

static void fingerprint(Env *e, char *out, size_t n)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(e->db, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	sqlite3_stmt *s;
	const char *q = "SELECT (SELECT count(*) FROM sources) || '/' ||"
	                " (SELECT count(*) FROM observations) || '/' ||"
	                " (SELECT total(value) FROM observations)";
	assert_int_equal(sqlite3_prepare_v2(db, q, -1, &s, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	snprintf(out, n, "%s", (const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	sqlite3_close(db);
}

static void test_load_example_without_db(void **state)
{
	(void)state;
	Sheet *s = NULL;
	Err err = {0};
	if (sheet_load(EXAMPLE, &s, &err))
		fail_msg("%s", err.msg);
	assert_string_equal(s->name, "pricing-matched-peak");
	assert_string_equal(s->endpoint, "GET /v2/home");
	assert_false(s->window_has_range);
	assert_int_equal(s->n_obs, 12); /* 9 values, 3 of them with a baseline */

	static const struct {
		const char *name;
		double value, base, norm;
		const char *unit;
	} want[] = {
		{"ingress.p99_ms", 318, NAN, 318, "ms"},
		{"cpu.fleet_mean", 46, NAN, 0.46, "%"},
		{"endpoint.queue_age.p99_ms", 9, NAN, 9, "ms"},
		{"pool.profile.occupancy", 79, NAN, 0.79, "%"},
		{"late_work.ratio", 1.4, NAN, 0.014, "%"},
		{"omission.ratio", 3.1, NAN, 0.031, "%"},
		{"dep.pricing.client_wait.p99_ms", 71, 18, 71, "ms"},
		{"dep.pricing.service.p99_ms", 22, 20, 22, "ms"},
		{"mix.enterprise", 9, 5, 0.09, "%"},
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		const SheetObs *o = sheet_find(s, want[i].name, SHEET_WINDOW);
		if (o == NULL)
			fail_msg("%s missing", want[i].name);
		assert_true(o->value == want[i].value);
		assert_string_equal(o->unit, want[i].unit);
		assert_true(fabs(o->norm - want[i].norm) < 1e-12);
		const SheetObs *b = sheet_find(s, want[i].name, SHEET_BASELINE);
		if (isnan(want[i].base)) {
			assert_null(b);
		} else {
			assert_non_null(b);
			assert_true(b->value == want[i].base);
		}
	}
	assert_string_equal(sheet_find(s, "ingress.p99_ms", SHEET_WINDOW)->note,
	                    "objective is 300 ms at p99");
	assert_string_equal(sheet_find(s, "mix.enterprise", SHEET_BASELINE)->norm_unit, "ratio");
	sheet_free(s);
}

static void test_ranges_units_labels(void **state)
{
	(void)state;
	Sheet *s = NULL;
	Err err = {0};
	if (sheet_load("fixtures/sheets/good/range.sheet.json", &s, &err))
		fail_msg("%s", err.msg);
	assert_true(s->window_has_range && s->baseline_has_range);
	assert_true(s->window_from_ns == INT64_C(1784052000000000000));
	assert_true(s->window_to_ns == INT64_C(1784052900000000000));
	assert_true(s->baseline_from_ns == INT64_C(1783447200000000000));
	const SheetObs *o = sheet_find(s, "ingress.p99_ms", SHEET_WINDOW);
	assert_null(o); /* it has the sheet's region label */
	int seen = 0;
	for (size_t i = 0; i < s->n_obs; i++) {
		const SheetObs *x = &s->obs[i];
		if (strcmp(x->name, "ingress.p99_ms") == 0 && x->role == SHEET_WINDOW) {
			assert_true(x->value == 0.318 && fabs(x->norm - 318) < 1e-9);
			assert_string_equal(x->norm_unit, "ms");
			assert_string_equal(x->labels_json, "{\"region\":\"eu-west-1\"}");
			seen |= 1;
		}
		if (strcmp(x->name, "queue.wait_ms") == 0) {
			assert_true(fabs(x->norm - 1.5) < 1e-12); /* 1500 us */
			seen |= 2;
		}
		if (strcmp(x->name, "mix.share") == 0 &&
		    strstr(x->labels_json, "standard") != NULL) {
			/* its own region overrides the sheet's */
			assert_string_equal(x->labels_json,
			                    "{\"class\":\"standard\",\"region\":\"eu-central-1\"}");
			seen |= 4;
		}
	}
	assert_int_equal(seen, 7);
	sheet_free(s);
}

typedef struct Rows {
	int n;
	int baseline;
	double norm_sum;
	char last_window[64];
} Rows;

static int count_rows(void *ctx, const StoreObservationRow *r)
{
	Rows *x = ctx;
	x->n++;
	x->baseline += strcmp(r->o.role, "baseline") == 0;
	x->norm_sum += r->o.norm;
	snprintf(x->last_window, sizeof x->last_window, "%s", r->o.window);
	return 0;
}

static void test_import_and_read_back(void **state)
{
	Env *e = *state;
	ImportResult res;
	Err err = {0};
	if (import(e, EXAMPLE, NULL, &res, &err))
		fail_msg("%s", err.msg);
	assert_string_equal(res.format, "sheet");
	assert_int_equal(res.counts.observations_added, 12);

	Rows r = {0};
	assert_int_equal(store_observations_scan(e->st, "pricing-matched-peak", NULL, count_rows, &r,
	                                         &err),
	                 0);
	assert_int_equal(r.n, 12);
	assert_int_equal(r.baseline, 3);

	memset(&r, 0, sizeof r);
	assert_int_equal(store_observations_scan(e->st, NULL, "dep.pricing.client_wait.p99_ms",
	                                         count_rows, &r, &err),
	                 0);
	assert_int_equal(r.n, 2); /* window first, then baseline */
	assert_true(r.norm_sum == 71 + 18);
	assert_string_equal(r.last_window, "matched peak, previous release");

	/* again: nothing new */
	char before[200], after[200];
	fingerprint(e, before, sizeof before);
	if (import(e, EXAMPLE, NULL, &res, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(res.counts.observations_added, 0);
	fingerprint(e, after, sizeof after);
	assert_string_equal(strchr(before, '/'), strchr(after, '/'));
}

static void test_conflict(void **state)
{
	Env *e = *state;
	ImportResult res;
	Err err = {0};
	if (import(e, "fixtures/sheets/good/range.sheet.json", NULL, &res, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(res.counts.observations_added, 8);
	char before[200], after[200];
	fingerprint(e, before, sizeof before);
	assert_int_not_equal(import(e, "fixtures/sheets/bad/conflict-with-range.json", NULL, &res, &err),
	                     0);
	assert_non_null(strstr(err.msg, "conflict-with-range.json:21:5: "));
	assert_non_null(strstr(err.msg, "pool.profile.used"));
	fingerprint(e, after, sizeof after);
	assert_string_equal(before, after);
}

typedef struct Bad {
	const char *file;
	long line, col;
	const char *msg;
} Bad;

static const Bad bad_cases[] = {
	{"at-baseline-name.json", 11, 15, "not name@baseline"},
	{"bad-range.json", 4, 13, "not one"},
	{"duplicate-observation.json", 54, 15, "given twice"},
	{"duration-name-percent.json", 51, 15, "is a duration"},
	{"label-not-string.json", 32, 19, "must be a string"},
	{"missing-window.json", 1, 1, "needs a \"window\""},
	{"misspelled-field.json", 15, 18, "unknown observation field \"basline\""},
	{"negative-duration.json", 14, 19, "must not be negative"},
	{"no-observations.json", 9, 19, "no observations"},
	{"not-finite.json", 2, 45, "finite"},
	{"percent-above-100.json", 28, 16, "outside [0, 100]"},
	{"ratio-above-one.json", 18, 16, "outside [0, 1]"},
	{"ratio-name-ms.json", 56, 15, "is a ratio"},
	{"syntax.json", 3, 44, "expected ',' or '}'"},
	{"unknown-unit.json", 13, 15, "unknown unit \"msec\""},
	{"uppercase-name.json", 11, 15, "dot-separated"},
	{"value-as-string.json", 23, 16, "must be a number"},
	{"version-2.json", 54, 14, "version 2"},
};

static void test_malformed(void **state)
{
	Env *e = *state;
	ImportResult res;
	Err err = {0};
	if (import(e, EXAMPLE, NULL, &res, &err))
		fail_msg("%s", err.msg);
	char before[200], after[200];
	fingerprint(e, before, sizeof before);
	for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
		const Bad *b = &bad_cases[i];
		char path[200], want[260];
		snprintf(path, sizeof path, "fixtures/sheets/bad/%s", b->file);
		snprintf(want, sizeof want, "%s:%ld:%ld: ", path, b->line, b->col);
		/* the loader without a database ... */
		Sheet *s = NULL;
		err_clear(&err);
		if (sheet_load(path, &s, &err) == 0)
			fail_msg("%s: loaded without error", path);
		assert_null(s);
		if (strncmp(err.msg, want, strlen(want)) != 0 || strstr(err.msg, b->msg) == NULL)
			fail_msg("%s: want %s...%s, got \"%s\"", path, want, b->msg, err.msg);
		/* ... and the importer, which must leave the database as it was */
		if (import(e, path, "sheet", &res, &err) == 0)
			fail_msg("%s: imported without error", path);
		if (strncmp(err.msg, want, strlen(want)) != 0)
			fail_msg("%s: import: want %s, got \"%s\"", path, want, err.msg);
		fingerprint(e, after, sizeof after);
		if (strcmp(before, after) != 0)
			fail_msg("%s: database changed: %s -> %s", path, before, after);
	}
}

static void test_sniff(void **state)
{
	(void)state;
	const char *a = "{\"sheet\": \"x\", \"window\": \"w\", \"observations\": []}";
	const char *got = import_sniff(a, strlen(a));
	assert_non_null(got);
	assert_string_equal(got, "sheet");
	const char *b = "{\"resourceMetrics\": []}";
	got = import_sniff(b, strlen(b));
	assert_true(got == NULL || strcmp(got, "sheet") != 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_example_without_db),
		cmocka_unit_test(test_ranges_units_labels),
		cmocka_unit_test_setup_teardown(test_import_and_read_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_conflict, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
		cmocka_unit_test(test_sniff),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
