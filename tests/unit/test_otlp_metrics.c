/*
 * test_otlp_metrics.c - OTLP/JSON metrics import: every metric kind stored
 * as a user reads it back (values, temporality, buckets, quantiles,
 * exemplars, labels, resources), JSON Lines, idempotent re-import, and
 * located errors that leave the database unchanged.
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
#include "store.h"
#include "store_env.h"

#define T0 INT64_C(1784052000000000000) /* 2026-07-14T18:00:00Z */

static void import_ok(Env *e, const char *path, ImportResult *res)
{
	Err err = {0};
	if (import(e, path, NULL, res, &err))
		fail_msg("%s: %s", path, err.msg);
}

static void fingerprint(Env *e, char *out, size_t n)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(e->db, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	sqlite3_stmt *s;
	const char *q =
	    "SELECT (SELECT count(*) FROM sources) || '/' || (SELECT count(*) FROM resources)"
	    " || '/' || (SELECT count(*) FROM metric_families) || '/' ||"
	    " (SELECT count(*) FROM metric_series) || '/' || (SELECT count(*) FROM metric_points)"
	    " || '/' || (SELECT count(*) FROM metric_buckets) || '/' ||"
	    " (SELECT count(*) FROM metric_quantiles) || '/' || (SELECT count(*) FROM metric_exemplars)"
	    " || '/' || (SELECT total(value) + total(count) FROM metric_points)";
	assert_int_equal(sqlite3_prepare_v2(db, q, -1, &s, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	snprintf(out, n, "%s", (const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	sqlite3_close(db);
}

static Got *points(Env *e, const char *family, const char *labels, const char *service)
{
	return points_of(e, family, labels, service);
}

static void test_every_kind(void **state)
{
	Env *e = *state;
	ImportResult res;
	import_ok(e, "fixtures/otlp_metrics/good/peak.json", &res);
	assert_string_equal(res.format, "otlp-json");  /* OTLP/JSON of any signal */
	assert_int_equal(res.counts.metrics_added, 9);

	/* gauge, asInt as a string; resource service and help */
	Got *g = points(e, "db.client.connection.max", NULL, "profile-api");
	assert_int_equal(g->n, 1);
	assert_string_equal(g->type[0], "gauge");
	assert_string_equal(g->unit[0], "{connection}");
	assert_string_equal(g->help[0], "Maximum connections allowed");
	assert_string_equal(g->service[0], "profile-api");
	assert_true(g->r[0].value == 420 && g->r[0].ts_explicit && g->r[0].ts_ns == T0);
	assert_int_equal(points(e, "db.client.connection.max", NULL, "pricing-api")->n, 0);

	/* non-monotonic cumulative sum: used / idle with the start time */
	g = points(e, "db.client.connection.count", "{\"db.client.connection.state\":\"used\"}", NULL);
	assert_int_equal(g->n, 1);
	assert_string_equal(g->type[0], "updowncounter");
	assert_string_equal(g->temporality[0], "cumulative");
	assert_true(g->r[0].value == 403);
	assert_true(g->r[0].has_start && g->r[0].start_ns == T0 - INT64_C(600000000000));
	g = points(e, "db.client.connection.count", "{\"db.client.connection.state\":\"idle\"}", NULL);
	assert_true(g->r[0].value == 17);

	/* monotonic delta sum; attribute values rendered as text */
	g = points(e, "http.server.request.count", NULL, NULL);
	assert_string_equal(g->type[0], "counter");
	assert_string_equal(g->temporality[0], "delta");
	assert_string_equal(g->labels[0], "{\"http.route\":\"/v2/home\",\"sampled\":\"true\","
	                                  "\"weight\":\"1.5\",\"workload.class\":\"enterprise\"}");
	assert_true(g->r[0].value == 1840);

	/* explicit histogram: cumulative buckets, min/max, exemplars in their bucket */
	g = points(e, "db.client.connection.wait_time", NULL, NULL);
	assert_string_equal(g->type[0], "histogram");
	assert_string_equal(g->scheme[0], "explicit");
	assert_int_equal(g->r[0].n_buckets, 5);
	double le[5] = {0.001, 0.005, 0.01, 0.05, INFINITY}, cum[5] = {10, 30, 35, 38, 40};
	for (int i = 0; i < 5; i++)
		assert_true(g->b[0][i].le == le[i] && g->b[0][i].count == cum[i]);
	assert_true(g->r[0].count == 40 && g->r[0].sum == 0.5);
	assert_true(g->r[0].has_min && g->r[0].min == 0.0002 && g->r[0].max == 0.09);
	assert_int_equal(g->r[0].n_exemplars, 2);
	/* ordered by bucket: 0.003 in le=0.005, 0.07 in +Inf */
	assert_true(g->ex[0][0].has_le && g->ex[0][0].le == 0.005 && g->ex[0][0].value == 0.003);
	assert_string_equal(g->ex_trace[0][0], "");
	assert_true(isinf(g->ex[0][1].le) && g->ex[0][1].value == 0.07);
	assert_string_equal(g->ex_trace[0][1], "5b8efff798038103d269b633813fc60c");
	assert_string_equal(g->ex_span[0][1], "eee19b7ec3c1b174");
	assert_true(g->ex[0][1].has_ts && g->ex[0][1].ts_ns == T0 - INT64_C(1000000000));
	assert_string_equal(g->ex_labels[0][1],
	                    "{\"span_id\":\"eee19b7ec3c1b174\",\"trace_id\":"
	                    "\"5b8efff798038103d269b633813fc60c\",\"workload.class\":\"enterprise\"}");

	/* exponential histogram, scale 0 (base 2) */
	g = points(e, "endpoint.queue_age", NULL, NULL);
	assert_string_equal(g->type[0], "exphistogram");
	assert_string_equal(g->scheme[0], "exponential");
	assert_int_equal(g->r[0].scale, 0);
	assert_true(g->r[0].zero_count == 1 && g->r[0].zero_threshold == 0);
	assert_int_equal(g->r[0].n_buckets, 5);
	double ele[5] = {-2, 0, 2, 4, INFINITY}, ecum[5] = {1, 2, 4, 7, 7};
	for (int i = 0; i < 5; i++)
		assert_true(g->b[0][i].le == ele[i] && g->b[0][i].count == ecum[i]);

	/* summary quantiles */
	g = points(e, "pricing.client.duration", NULL, NULL);
	assert_string_equal(g->type[0], "summary");
	assert_int_equal(g->r[0].n_quantiles, 3);
	assert_true(g->q[0][1].q == 0.99 && g->q[0][1].value == 71);
	assert_true(g->r[0].count == 1000 && g->r[0].sum == 25000);

	/* "NaN" as a string; an array attribute as JSON text */
	g = points(e, "cpu.utilization", "{\"cpu\":\"0\"}", NULL);
	assert_true(g->r[0].has_value && isnan(g->r[0].value));
	g = points(e, "cpu.utilization", "{\"cpu\":\"1\"}", NULL);
	assert_string_equal(g->labels[0], "{\"cpu\":\"1\",\"tags\":\"[\\\"a\\\",2]\"}");

	/* a metric without data is skipped, not an error */
	assert_int_equal(points(e, "no.data.here", NULL, NULL)->n, 0);
}

static int count_ex(void *ctx, const StoreExemplarRow *r)
{
	int *n = ctx;
	if (strcmp(r->family, "db.client.connection.wait_time") == 0)
		(*n)++;
	return 0;
}

static void test_exemplar_scan(void **state)
{
	Env *e = *state;
	ImportResult res;
	import_ok(e, "fixtures/otlp_metrics/good/peak.json", &res);
	int n = 0;
	Err err = {0};
	assert_int_equal(store_metric_exemplars_scan(e->st, NULL, INT64_MIN, INT64_MAX, count_ex, &n,
	                                             &err),
	                 0);
	assert_int_equal(n, 2);
	n = 0;
	assert_int_equal(store_metric_exemplars_scan(e->st, "db.client.connection.wait_time", T0 + 1,
	                                             INT64_MAX, count_ex, &n, &err),
	                 0);
	assert_int_equal(n, 0); /* the point is at T0, outside [T0+1, ...) */
}

/* opentelemetry-rust's exporter leaves a sum point's value unset; the
 * OpenTelemetry Collector keeps such a point, and so does the import: it is
 * stored without a value, not a reason to refuse the file. */
static void test_point_without_value(void **state)
{
	Env *e = *state;
	ImportResult res;
	import_ok(e, "fixtures/otlp_metrics/good/opentelemetry-rust.json", &res);
	assert_int_equal(res.counts.metrics_added, 2);
	Got *g = points(e, "counter_u64", NULL, "metrics-integration-test");
	assert_int_equal(g->n, 1);
	assert_int_equal(g->r[0].has_value, 0);
	assert_string_equal(g->labels[0], "{\"mykey1\":\"myvalue1\",\"mykey2\":\"myvalue2\"}");
	assert_true(g->r[0].ts_ns == INT64_C(1734094317871514000));
	g = points(e, "example_up_down_counter", NULL, NULL);
	assert_int_equal(g->n, 1);
	assert_int_equal(g->r[0].has_value, 0);
}

static void test_json_lines_and_reimport(void **state)
{
	Env *e = *state;
	ImportResult res;
	import_ok(e, "fixtures/otlp_metrics/good/pool.jsonl", &res);
	assert_string_equal(res.format, "otlp-json");
	assert_int_equal(res.counts.metrics_added, 2);
	Got *g = points(e, "db.client.connection.count", NULL, "pricing-api");
	assert_int_equal(g->n, 2);
	assert_true(g->r[0].ts_ns == T0 && g->r[0].value == 300);
	assert_true(g->r[1].ts_ns == T0 + INT64_C(10000000000) && g->r[1].value == 330);

	import_ok(e, "fixtures/otlp_metrics/good/peak.json", &res);
	char before[300], after[300];
	fingerprint(e, before, sizeof before);
	import_ok(e, "fixtures/otlp_metrics/good/peak.json", &res);
	assert_int_equal(res.counts.metrics_added, 0);
	assert_int_equal(res.counts.metrics_duplicate, 9);
	import_ok(e, "fixtures/otlp_metrics/good/pool.jsonl", &res);
	assert_int_equal(res.counts.metrics_duplicate, 2);
	fingerprint(e, after, sizeof after);
	assert_string_equal(strchr(before, '/'), strchr(after, '/'));
	assert_int_equal(atoi(after), atoi(before) + 2);
}

/* Any OTLP/JSON is "otlp-json", whose every request is read by its own
 * signal; "otlp-metrics" (metrics only) is chosen by name. */
static void test_sniff(void **state)
{
	(void)state;
	static const char *const heads[] = {"{\"resourceMetrics\":[]}", "{\"resourceSpans\":[]}",
	                                    "{\"resourceLogs\":[]}"};
	for (size_t i = 0; i < 3; i++) {
		const char *got = import_sniff(heads[i], strlen(heads[i]));
		assert_non_null(got);
		assert_string_equal(got, "otlp-json");
	}
}

typedef struct Bad {
	const char *file;
	long line, col;
	const char *msg;
	const char *json_msg;  /* what otlp-json says when it differs (its JSON
	                        * reader, not the metrics importer, finds it) */
	long json_line, json_col; /* ... and where, when that differs: the end
	                        * of a file without a final newline */
} Bad;

static const Bad bad_cases[] = {
	{"bad-double.json", 274, 33, "asDouble must be a number", NULL, 0, 0},
	{"bad-line.jsonl", 3, 124, "asInt must be an integer", NULL, 0, 0},
	{"bad-utf8.json", 1, 31, "invalid UTF-8", "invalid bytes in UTF8 string", 0, 0},
	{"bounds-not-increasing.json", 171, 23, "increase strictly", NULL, 0, 0},
	{"bucket-count-length.json", 161, 37, "needs 5", NULL, 0, 0},
	{"count-mismatch.json", 157, 30, "count is 41 but the bucketCounts add up to 40", NULL, 0, 0},
	{"datapoints-not-array.json", 38, 31, "dataPoints must be an array", NULL, 0, 0},
	{"duplicate-attribute.json", 48, 32, "duplicate attribute key", NULL, 0, 0},
	{"duplicate-key.json", 2, 2, "duplicate key", "duplicate field \"resourceMetrics\"", 0, 0},
	{"exp-count.json", 207, 30, "zeroCount and the buckets add up to 7", NULL, 0, 0},
	{"int-with-fraction.json", 78, 30, "asInt must be an integer", NULL, 0, 0},
	{"missing-time.json", 39, 19, "no timeUnixNano", NULL, 0, 0},
	{"negative-time.json", 48, 37, "must not be negative", NULL, 0, 0},
	{"quantile-range.json", 251, 37, "between 0 and 1", NULL, 0, 0},
	{"scale.json", 209, 30, "scale must be between -10 and 20", NULL, 0, 0},
	{"span-id-not-hex.json", 179, 35, "spanId must be hex", NULL, 0, 0},
	{"syntax.json", 3, 21, "unexpected character", "invalid JSON: unallowed token", 0, 0},
	{"temporality.json", 58, 43, "aggregationTemporality", NULL, 0, 0},
	{"trace-id-length.json", 178, 36, "traceId must be 32 hex digits", NULL, 0, 0},
	{"trailing-comma.json", 3, 1, "trailing comma", "invalid JSON: unallowed token", 0, 0},
	{"truncated.json", 35, 1, "end of the input", "unexpected end of input", 34, 23},
	{"two-kinds.json", 53, 22, "both gauge and sum", NULL, 0, 0},
};

static void test_malformed(void **state)
{
	Env *e = *state;
	ImportResult res;
	import_ok(e, "fixtures/otlp_metrics/good/peak.json", &res);
	char before[300], after[300];
	fingerprint(e, before, sizeof before);
	for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
		const Bad *b = &bad_cases[i];
		char path[200], want[260];
		snprintf(path, sizeof path, "fixtures/otlp_metrics/bad/%s", b->file);
		/* by name, and found by content: the same place */
		for (int how = 0; how < 2; how++) {
			if (how && b->json_line)
				snprintf(want, sizeof want, "%s:%ld:%ld: ", path, b->json_line, b->json_col);
			else
				snprintf(want, sizeof want, "%s:%ld:%ld: ", path, b->line, b->col);
			Err err = {0};
			if (import(e, path, how ? NULL : "otlp-metrics", &res, &err) == 0)
				fail_msg("%s: imported without error", path);
			if (strncmp(err.msg, want, strlen(want)) != 0)
				fail_msg("%s: want location %s, got \"%s\"", path, want, err.msg);
			const char *m = how && b->json_msg ? b->json_msg : b->msg;
			if (strstr(err.msg, m) == NULL)
				fail_msg("%s: want \"%s\" in \"%s\"", path, m, err.msg);
			fingerprint(e, after, sizeof after);
			if (strcmp(before, after) != 0)
				fail_msg("%s: database changed: %s -> %s", path, before, after);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_every_kind, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exemplar_scan, setup, teardown),
		cmocka_unit_test_setup_teardown(test_point_without_value, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_lines_and_reimport, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sniff, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
