/*
 * test_prom_text.c - the Prometheus 0.0.4 and OpenMetrics 1.0 text
 * importers: what they store for valid input, and for every malformed file
 * in fixtures/prom/bad the located error and an unchanged database.
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

static void import_ok(Env *e, const char *path, const char *format, ImportResult *res)
{
	Err err = {0};
	int rc = import(e, path, format, res, &err);
	if (rc)
		fail_msg("%s: %s", path, err.msg);
}

/* Everything a rolled-back import must leave as it was. */
static void fingerprint(Env *e, char *out, size_t n)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(e->db, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	sqlite3_stmt *s;
	const char *q =
	    "SELECT (SELECT count(*) FROM sources) || '/' || (SELECT count(*) FROM metric_families)"
	    " || '/' || (SELECT count(*) FROM metric_series) || '/' ||"
	    " (SELECT count(*) FROM metric_points) || '/' || (SELECT count(*) FROM metric_buckets)"
	    " || '/' || (SELECT count(*) FROM metric_quantiles) || '/' ||"
	    " (SELECT count(*) FROM metric_exemplars) || '/' ||"
	    " (SELECT total(value) FROM metric_points) || '/' ||"
	    " (SELECT group_concat(help, '|') FROM metric_families)";
	assert_int_equal(sqlite3_prepare_v2(db, q, -1, &s, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	snprintf(out, n, "%s", (const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	sqlite3_close(db);
}

static Got *points(Env *e, const char *family, const char *labels)
{
	return points_of(e, family, labels, NULL);
}

/* ---- valid input ---------------------------------------------------------- */

static void test_om_spec_example(void **state)
{
	Env *e = *state;
	ImportResult res;
	import_ok(e, "fixtures/prom/good/spec-example.om", NULL, &res);
	assert_string_equal(res.format, "openmetrics");
	assert_int_equal(res.counts.metrics_added, 12);

	Got *g = points(e, "acme_http_router_request_seconds", NULL);
	assert_int_equal(g->n, 2);
	assert_string_equal(g->type[0], "summary");
	assert_string_equal(g->unit[0], "seconds");
	assert_string_equal(g->help[0], "Latency though all of ACME's HTTP request router.");
	assert_string_equal(g->labels[0], "{\"method\":\"GET\",\"path\":\"/api/v1\"}");
	assert_true(g->r[0].has_count && g->r[0].count == 807283);
	assert_true(g->r[0].has_sum && g->r[0].sum == 9036.32);
	assert_true(g->r[0].has_start);
	assert_true(g->r[0].start_ns == INT64_C(1605281325000000000));
	assert_int_equal(g->r[0].ts_explicit, 0);

	g = points(e, "foo", NULL);
	assert_int_equal(g->n, 1);
	assert_string_equal(g->type[0], "histogram");
	assert_string_equal(g->scheme[0], "explicit");
	assert_int_equal(g->r[0].n_buckets, 5);
	double le[5] = {0.01, 0.1, 1, 10, INFINITY}, cnt[5] = {0, 8, 11, 17, 17};
	for (int i = 0; i < 5; i++) {
		assert_true(g->b[0][i].le == le[i]);
		assert_true(g->b[0][i].count == cnt[i]);
	}
	assert_true(g->r[0].count == 17 && g->r[0].sum == 324789.3);
	assert_true(g->r[0].start_ns == INT64_C(1520430000123000000));
	assert_int_equal(g->r[0].n_exemplars, 3);
	assert_true(g->ex[0][0].has_le && g->ex[0][0].le == 0.1 && g->ex[0][0].value == 0.054);
	assert_string_equal(g->ex_labels[0][0], "{}");
	assert_string_equal(g->ex_trace[0][1], "KOO5S4vxi0o");
	assert_string_equal(g->ex_trace[0][2], "0af7651916cd43dd8448eb211c80319c");
	assert_string_equal(g->ex_span[0][2], "b7ad6b7169203331");
	assert_true(g->ex[0][2].has_ts && g->ex[0][2].ts_ns == INT64_C(1520879607789000000));

	g = points(e, "process_cpu_seconds", NULL);
	assert_int_equal(g->n, 1);
	assert_string_equal(g->type[0], "counter");
	assert_true(g->r[0].value == 4.20072246e+06);

	g = points(e, "s", NULL);
	assert_int_equal(g->n, 3);
	assert_string_equal(g->type[0], "stateset");
	assert_string_equal(g->labels[1], "{\"entity\":\"controller\",\"s\":\"bb\"}");
	assert_true(g->r[1].value == 0 && g->r[0].value == 1);

	g = points(e, "i", NULL);
	assert_int_equal(g->n, 1);
	assert_string_equal(g->type[0], "info");
	assert_string_equal(g->labels[0], "{\"name\":\"pretty name\",\"version\":\"8.2.7\"}");

	g = points(e, "g", NULL);
	assert_string_equal(g->type[0], "gaugehistogram");
	assert_true(g->r[0].count == 42 && g->r[0].sum == 3289.3 && g->r[0].n_buckets == 2);

	g = points(e, "t", NULL);
	assert_int_equal(g->n, 2);
	assert_true(g->r[0].ts_explicit && g->r[0].ts_ns == INT64_C(123000000000));
	assert_true(g->r[1].ts_ns == INT64_C(456000000000) && g->r[1].value == 18);
}

static void test_prom_spec_example(void **state)
{
	Env *e = *state;
	ImportResult res;
	import_ok(e, "fixtures/prom/good/spec-example.prom", NULL, &res);
	assert_string_equal(res.format, "prometheus");
	assert_int_equal(res.counts.metrics_added, 9);

	Got *g = points(e, "http_requests_total", NULL);
	assert_int_equal(g->n, 2);
	assert_string_equal(g->type[0], "counter");
	assert_string_equal(g->help[0], "The total number of HTTP requests.");
	assert_true(g->r[0].ts_explicit && g->r[0].ts_ns == INT64_C(1395066363000000000));
	g = points(e, "http_requests_total", "{\"code\":\"400\"}");
	assert_int_equal(g->n, 1);
	assert_true(g->r[0].value == 3);

	g = points(e, "msdos_file_access_time_seconds", NULL);
	assert_string_equal(g->type[0], "unknown");
	assert_string_equal(g->labels[0], "{\"error\":\"Cannot find file:\\n\\\"FILE.TXT\\\"\","
	                                  "\"path\":\"C:\\\\DIR\\\\FILE.TXT\"}");

	g = points(e, "something_weird", NULL);
	assert_true(isinf(g->r[0].value) && g->r[0].value > 0);
	assert_true(g->r[0].ts_ns == INT64_C(-3982045000000));

	g = points(e, "http_request_duration_seconds", NULL);
	assert_int_equal(g->r[0].n_buckets, 6);
	assert_true(g->b[0][5].count == 144320 && isinf(g->b[0][5].le));
	assert_true(g->r[0].count == 144320 && g->r[0].sum == 53423);

	g = points(e, "rpc_duration_seconds", NULL);
	assert_int_equal(g->r[0].n_quantiles, 5);
	assert_true(g->q[0][4].q == 0.99 && g->q[0][4].value == 76656);
	assert_true(g->r[0].count == 2693);

	g = points(e, "hexy", NULL);
	assert_true(g->r[0].value == 3); /* 0x1.8p1 */
	g = points(e, "weird_spacing", NULL);
	assert_string_equal(g->labels[0], "{\"a\":\"b\",\"c\":\"d\"}");
	assert_true(isnan(g->r[0].value));
}

static void test_spellings(void **state)
{
	Env *e = *state;
	ImportResult res;
	import_ok(e, "fixtures/prom/good/spellings.om", NULL, &res);
	assert_string_equal(res.format, "openmetrics");
	Got *g = points(e, "a", NULL);
	assert_int_equal(g->n, 9);
	for (int i = 0; i < 3; i++)
		assert_true(isnan(g->r[i].value)); /* nan NaN Nan */
	assert_true(isinf(g->r[3].value) && g->r[3].value > 0); /* +inf */
	assert_true(isinf(g->r[4].value) && g->r[4].value < 0); /* -Inf */
	assert_true(isinf(g->r[5].value) && g->r[5].value > 0); /* INFINITY */
	assert_true(g->r[6].value == 1500 && g->r[7].value == 0.5 && g->r[8].value == 42);

	import_ok(e, "fixtures/prom/good/spellings.prom", "prometheus", &res);
	assert_int_equal(res.counts.metrics_added, 8);
	g = points(e, "a", "{\"k\":\"7\"}");
	assert_int_equal(g->n, 2); /* .om and .prom both have k=7 */
	assert_true(g->r[0].value == 1500 || g->r[1].value == 1500);
	assert_true(g->r[0].value == 0.25 || g->r[1].value == 0.25); /* 0x1p-2 */
	g = points(e, "a", "{\"k\":\"8\"}");
	assert_true(g->r[0].value == 32 || g->r[1].value == 32); /* 0x_1_0p0_1 */
}

static void test_om_escapes(void **state)
{
	Env *e = *state;
	ImportResult res;
	import_ok(e, "fixtures/prom/good/escapes.om", "openmetrics", &res);
	Got *g = points(e, "e", NULL);
	assert_int_equal(g->n, 1);
	/* \t is not an escape in OpenMetrics: the backslash stays */
	assert_string_equal(g->labels[0], "{\"a\":\"x\\\\ty\",\"b\":\"q\\\"q\",\"c\":\"back\\\\slash\","
	                                  "\"d\":\"new\\nline\"}");
	assert_string_equal(g->help[0], "undefined \\t escape and a \"quote\" and \\ and \n");
}

static void test_om_timestamps(void **state)
{
	Env *e = *state;
	ImportResult res;
	import_ok(e, "fixtures/prom/good/timestamps.om", NULL, &res);
	Got *g = points(e, "t", "{\"a\":\"1\"}");
	assert_int_equal(g->n, 2);
	assert_true(g->r[0].ts_ns == INT64_C(1520879607789000000));
	assert_true(g->r[1].ts_ns == INT64_C(1520879608500000000));
	g = points(e, "t", "{\"a\":\"2\"}");
	assert_true(g->r[0].ts_ns == INT64_C(-1250000000));
	g = points(e, "c", NULL);
	assert_int_equal(g->r[0].n_exemplars, 1);
	assert_false(g->ex[0][0].has_le);
	assert_string_equal(g->ex_trace[0][0], "0af7651916cd43dd8448eb211c80319c");
	assert_true(g->ex[0][0].ts_ns == INT64_C(1520879607500000000));
	assert_true(g->r[0].start_ns == INT64_C(1520430000123000000));

	/* time range on the scan: [1520879608, +inf) */
	Got got;
	memset(&got, 0, sizeof got);
	StoreMetricQuery q = {.family = "t", .from_ns = INT64_C(1520879608000000000), .to_ns = INT64_MAX};
	Err err = {0};
	assert_int_equal(store_metric_points_scan(e->st, &q, collect, &got, &err), 0);
	assert_int_equal(got.n, 1);
	assert_true(got.r[0].value == 2);
}

static void test_reimport_adds_nothing(void **state)
{
	Env *e = *state;
	ImportResult res;
	char before[512], after[512];
	import_ok(e, "fixtures/prom/good/spec-example.om", NULL, &res);
	import_ok(e, "fixtures/prom/good/timestamps.om", NULL, &res);
	fingerprint(e, before, sizeof before);
	import_ok(e, "fixtures/prom/good/spec-example.om", NULL, &res);
	assert_int_equal(res.counts.metrics_added, 0);
	assert_int_equal(res.counts.metrics_duplicate, 12);
	assert_true(res.already);
	import_ok(e, "fixtures/prom/good/timestamps.om", NULL, &res);
	assert_int_equal(res.counts.metrics_added, 0);
	assert_int_equal(res.counts.metrics_duplicate, 4);
	fingerprint(e, after, sizeof after);
	/* only the two source rows are new */
	assert_string_equal(strchr(before, '/'), strchr(after, '/'));
	assert_int_equal(atoi(after), atoi(before) + 2);
}

static void test_sniff(void **state)
{
	(void)state;
	static const struct {
		const char *text, *want;
	} cases[] = {
		{"# TYPE a counter\na_total 1\n# EOF\n", "openmetrics"},
		{"# TYPE a_seconds gauge\n# UNIT a_seconds seconds\na_seconds 1\n", "openmetrics"},
		{"a_total 1 # {trace_id=\"x\"} 1\n", "openmetrics"},
		{"# TYPE a stateset\n", "openmetrics"},
		{"# HELP a x\n# TYPE a counter\na 1\n", "prometheus"},
		{"a{b=\"c\"} 1 123\n", "prometheus"},
		{"  \n# a comment\nup 1\n", "prometheus"},
		{"{\"resourceSpans\":[]}", NULL},
		{"hello world\n", NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *got = import_sniff(cases[i].text, strlen(cases[i].text));
		if (cases[i].want == NULL) {
			if (got && (strcmp(got, "prometheus") == 0 || strcmp(got, "openmetrics") == 0))
				fail_msg("case %zu: sniffed as %s", i, got);
		} else if (got == NULL || strcmp(got, cases[i].want) != 0) {
			fail_msg("case %zu: want %s, got %s", i, cases[i].want, got ? got : "(none)");
		}
	}
}

/* The grammars differ: the same file forced into the other dialect fails
 * where that dialect's rules say so. */
static void test_forced_dialect(void **state)
{
	Env *e = *state;
	ImportResult res;
	Err err;
	char before[512], after[512];
	fingerprint(e, before, sizeof before);
	/* 0.0.4 has no _created (that family coming back is fine) and no
	 * exemplars, which Prometheus's scrape parser refuses too */
	assert_int_not_equal(import(e, "fixtures/prom/good/spec-example.om", "prometheus", &res, &err), 0);
	assert_non_null(strstr(err.msg, "spec-example.om:19:24: exemplars are not part"));
	/* OpenMetrics timestamps are seconds: 1395066363000 s does not fit */
	assert_int_not_equal(
	    import(e, "fixtures/prom/good/spec-example.prom", "openmetrics", &res, &err), 0);
	assert_non_null(strstr(err.msg, "spec-example.prom:3:52: "));
	assert_non_null(strstr(err.msg, "out of range"));
	fingerprint(e, after, sizeof after);
	assert_string_equal(before, after);
}

typedef struct Fams {
	int n;
	int64_t points;
	char names[16][64];
} Fams;

static int collect_family(void *ctx, const StoreMetricFamilyRow *r)
{
	Fams *f = ctx;
	if (f->n < 16)
		snprintf(f->names[f->n], sizeof f->names[0], "%s/%s", r->name, r->type);
	f->n++;
	f->points += r->points;
	return 0;
}

static void test_families_and_filters(void **state)
{
	Env *e = *state;
	ImportResult res;
	import_ok(e, "fixtures/prom/good/spec-example.om", NULL, &res);
	Fams f = {0};
	Err err = {0};
	assert_int_equal(store_metric_families_scan(e->st, collect_family, &f, &err), 0);
	assert_int_equal(f.n, 8);
	assert_true(f.points == 12);
	assert_string_equal(f.names[0], "acme_http_router_request_seconds/summary");
	assert_string_equal(f.names[1], "foo/histogram");

	int64_t series = 0, pts = 0, obs = -1;
	assert_int_equal(store_metric_counts(e->st, &series, &pts, &obs, &err), 0);
	assert_true(series == 11 && pts == 12 && obs == 0);

	/* a label filter must be an object; type filters narrow the family */
	Got got;
	memset(&got, 0, sizeof got);
	StoreMetricQuery q = {.family = "foo", .labels_json = "[1]", .from_ns = INT64_MIN,
	                      .to_ns = INT64_MAX};
	assert_int_equal(store_metric_points_scan(e->st, &q, collect, &got, &err), TT_EINVAL);
	q.labels_json = NULL;
	q.type = "gauge";
	assert_int_equal(store_metric_points_scan(e->st, &q, collect, &got, &err), 0);
	assert_int_equal(got.n, 0);
	q.type = "histogram";
	assert_int_equal(store_metric_points_scan(e->st, &q, collect, &got, &err), 0);
	assert_int_equal(got.n, 1);
	/* an empty OpenMetrics exposition is valid and adds nothing */
	const char *empty = "# EOF\n";
	assert_int_equal(import_memory(e->st, "empty", empty, strlen(empty), NULL, &res, &err), 0);
	assert_string_equal(res.format, "openmetrics");
	assert_int_equal(res.counts.metrics_added, 0);
}

static void test_import_memory(void **state)
{
	Env *e = *state;
	const char *text = "# TYPE up gauge\nup{job=\"api\"} 1 1700000000\n# EOF\n";
	ImportResult res;
	Err err = {0};
	assert_int_equal(import_memory(e->st, "body", text, strlen(text), NULL, &res, &err), 0);
	Got *g = points(e, "up", "{\"job\":\"api\"}");
	assert_int_equal(g->n, 1);
	assert_true(g->r[0].ts_ns == INT64_C(1700000000000000000));

	/* 0.0.4: s_bucket is not a summary sample, so it is a family of its
	 * own; s_count after another family is the summary coming back */
	const char *ok = "# TYPE s summary\ns_sum 1\ns_count 1\nx 1\ns_bucket 3\n";
	assert_int_equal(import_memory(e->st, "ok", ok, strlen(ok), NULL, &res, &err), 0);
	assert_string_equal(res.format, "prometheus");
	assert_int_equal(points(e, "s_bucket", NULL)->n, 1);
	/* ...and it joins the summary's point, as in Prometheus */
	const char *back = "# TYPE s2 summary\ns2_sum 1\nx2 1\ns2_count 1\n";
	assert_int_equal(import_memory(e->st, "back", back, strlen(back), NULL, &res, &err), 0);
	g = points(e, "s2", NULL);
	assert_int_equal(g->n, 1);
	assert_true(g->r[0].has_sum && g->r[0].sum == 1 && g->r[0].has_count && g->r[0].count == 1);
}

/* ---- what the reference parsers accept ------------------------------------ */

/* Valid inputs from the Prometheus project's own test data
 * (fixtures/prom/reference/README.md): Prometheus scrapes them, so they
 * import; samples that come back later join their family. */
static void test_reference_inputs(void **state)
{
	Env *e = *state;
	ImportResult res;
	import_ok(e, "fixtures/prom/reference/promtestdata.nometa.prom", "prometheus", &res);
	assert_int_equal(res.counts.metrics_added, 410); /* one point per sample line */
	Got *g = points(e, "http_request_duration_microseconds",
	                 "{\"handler\":\"graph\",\"quantile\":\"0.5\"}");
	assert_int_equal(g->n, 1);
	assert_string_equal(g->type[0], "unknown");
	assert_true(g->r[0].value == 771.655);
	/* the family came back 20 times; its last series is in the same family */
	g = points(e, "http_request_duration_microseconds_count", "{\"handler\":\"version\"}");
	assert_int_equal(g->n, 1);
	assert_string_equal(g->type[0], "unknown");

	import_ok(e, "fixtures/prom/reference/alltypes.237mfs.nometa.prom", "prometheus", &res);
	assert_true(res.counts.metrics_added > 1000);

	import_ok(e, "fixtures/prom/reference/common-text-parse-2.prom", "prometheus", &res);
	assert_int_equal(res.counts.metrics_added, 4);
	g = points(e, "name", NULL);
	assert_int_equal(g->n, 2);
	assert_string_equal(g->type[0], "counter");
	/* HELP after the samples still describes them */
	assert_string_equal(g->help[0], "two-line\n doc  str\\ing");
	g = points(e, "name2", "{\"labelname\":\"val1\"}");
	assert_int_equal(g->n, 1);
	assert_string_equal(g->type[0], "gauge");
	assert_true(isinf(g->r[0].value) && g->r[0].value < 0);

	import_ok(e, "fixtures/prom/reference/common-text-parse-3.prom", "prometheus", &res);
	g = points(e, "my_summary", NULL);
	assert_int_equal(g->n, 4);
	int k = 0;
	while (k < g->n && strcmp(g->labels[k], "{\"n1\":\"val1\"}") != 0)
		k++;
	assert_true(k < g->n);
	assert_string_equal(g->type[k], "summary");
	assert_int_equal(g->r[k].n_quantiles, 2);
	assert_true(g->r[k].count == 42 && g->r[k].sum == 4711);
	assert_true(g->r[k].ts_explicit && g->r[k].ts_ns == INT64_C(2000000)); /* latest wins */
	assert_int_equal(points(e, "another_summary", NULL)->n, 1);
	assert_int_equal(points(e, "decoy", NULL)->n, 1);
}

/* Each leniency of the reference parsers, one file each, plus all of them
 * in one file with the values checked. */
static void test_prom_lenient(void **state)
{
	Env *e = *state;
	ImportResult res;
	static const char *const files[] = {
	    "unknown-escape", "help-bad-escape", "interleaved-families", "interleaved-histogram",
	    "no-final-newline", "quantiles-decreasing", "second-help", "type-after-samples",
	    "type-without-type", "uppercase-type", "quoted-metric-name",
	};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		char path[128];
		snprintf(path, sizeof path, "fixtures/prom/good/lenient/%s.prom", files[i]);
		import_ok(e, path, "prometheus", &res);
		assert_true(res.counts.metrics_added > 0);
	}
	import_ok(e, "fixtures/prom/good/lenient/all.prom", NULL, &res);
	assert_string_equal(res.format, "prometheus");
	Got *g = points(e, "up", NULL);
	assert_int_equal(g->n, 2);
	assert_string_equal(g->type[0], "gauge");
	assert_string_equal(g->help[0], "Gauge with \\t kept and a \\ backslash");
	assert_true(g->r[0].value == 1 && g->r[1].value == 3);
	g = points(e, "esc", NULL);
	assert_string_equal(g->labels[0], "{\"v\":\"a\\\\tb\"}");
	g = points(e, "q", NULL);
	assert_int_equal(g->n, 1);
	assert_int_equal(g->r[0].n_quantiles, 2);
	assert_true(g->q[0][0].q == 0.5 && g->q[0][0].value == 5);
	assert_true(g->q[0][1].q == 0.9 && g->q[0][1].value == 9);
	assert_true(g->r[0].sum == 20 && g->r[0].count == 4);
	assert_string_equal(points(e, "late", NULL)->type[0], "counter");
	assert_true(points(e, "last", NULL)->r[0].value == 7);

	/* UTF-8 names quoted inside the braces, as Prometheus reads them */
	import_ok(e, "fixtures/prom/good/lenient/quoted-names.prom", "prometheus", &res);
	g = points(e, "http.server.duration", NULL);
	assert_int_equal(g->n, 1);
	assert_string_equal(g->type[0], "histogram");
	assert_string_equal(g->help[0], "Request time.");
	assert_string_equal(g->labels[0], "{\"http.route\":\"/a\"}");
	assert_true(g->r[0].count == 3 && g->r[0].sum == 0.5 && g->r[0].n_buckets == 1);
	assert_true(points(e, "odd \"name\"", NULL)->r[0].value == 7);
}

/* ---- malformed input -------------------------------------------------- */

typedef struct Bad {
	const char *file;    /* under fixtures/prom/bad/ */
	const char *format;  /* NULL: detect */
	long line, col;
	const char *msg;     /* part of the message */
} Bad;

#define OM "openmetrics"
#define PR "prometheus"

static const Bad bad_cases[] = {
	/* OpenMetrics 1.0 */
	{"missing-eof.om", OM, 3, 1, "missing '# EOF'"},
	{"text-after-eof.om", OM, 3, 1, "after '# EOF'"},
	{"newline-after-eof-line.om", OM, 3, 1, "after '# EOF'"},
	{"empty-line.om", OM, 2, 1, "empty lines"},
	{"duplicate-label.om", OM, 1, 9, "duplicate label name 'x'"},
	{"nonmonotonic-buckets.om", OM, 3, 18, "cumulative"},
	{"unsorted-buckets.om", OM, 3, 10, "increasing order of le"},
	{"missing-inf-bucket.om", OM, 3, 1, "+Inf"},
	{"count-not-inf-bucket.om", OM, 4, 9, "h_count is 10 but the +Inf bucket counts 11"},
	{"sum-without-count.om", OM, 3, 1, "no h_count"},
	{"interleaved-families.om", OM, 5, 1, "interleaved"},
	{"interleaved-metrics.om", OM, 3, 1, "interleaved"},
	{"type-after-samples.om", OM, 2, 8, "after its samples"},
	{"second-type.om", OM, 2, 8, "second # TYPE"},
	{"invalid-metric-name.om", OM, 1, 1, "expected a metric name"},
	{"invalid-name-char.om", OM, 1, 2, "invalid character in metric name"},
	{"bad-timestamp.om", OM, 1, 5, "invalid timestamp"},
	{"nan-timestamp.om", OM, 1, 5, "invalid timestamp"},
	{"counter-negative.om", OM, 2, 9, "must not be negative"},
	{"counter-without-total.om", OM, 2, 1, "expected c_total or c_created"},
	{"total-suffix-clash.om", OM, 3, 1, "sample name 'c_total'"},
	{"created-suffix-clash.om", OM, 3, 1, "sample name 'c_created'"},
	{"exemplar-on-gauge.om", OM, 2, 5, "exemplars are only allowed"},
	{"exemplar-too-long.om", OM, 2, 13, "129 characters"},
	{"exemplar-outside-bucket.om", OM, 2, 20, "outside its bucket"},
	{"signed-nan.om", OM, 1, 3, "invalid value '+nan'"},
	{"hex-value.om", OM, 1, 3, "invalid value '0x10'"},
	{"truncated-exponent.om", OM, 1, 3, "invalid value '1e'"},
	{"unit-not-suffix.om", OM, 2, 12, "suffix of the family name"},
	{"unit-on-info.om", OM, 2, 1, "must not have a unit"},
	{"free-comment.om", OM, 1, 1, "'# TYPE', '# HELP', '# UNIT' or '# EOF'"},
	{"crlf.om", OM, 1, 4, "carriage return"},
	{"double-space.om", OM, 1, 3, "expected a value"},
	{"trailing-space.om", OM, 1, 4, "unexpected text"},
	{"trailing-comma.om", OM, 1, 9, "expected a label name"},
	{"reserved-label.om", OM, 1, 3, "reserved"},
	{"le-on-count.om", OM, 3, 9, "may have 'le'"},
	{"quantile-out-of-range.om", OM, 2, 3, "between 0 and 1"},
	{"bad-utf8.om", OM, 1, 6, "invalid UTF-8"},
	{"duplicate-sample.om", OM, 2, 1, "duplicate sample"},
	{"timestamps-go-back.om", OM, 2, 5, "must increase"},
	{"stateset-value.om", OM, 2, 10, "0 or 1"},
	{"info-value.om", OM, 2, 15, "must be 1"},
	{"help-raw-quote.om", OM, 1, 14, "double quote"},
	{"bucket-not-integer.om", OM, 2, 18, "integers"},
	{"untyped-type.om", OM, 1, 10, "unknown type 'untyped'"},
	{"help-without-space.om", OM, 1, 9, "expected a space"},
	{"unterminated-label.om", OM, 1, 5, "not terminated"},
	{"bom.om", OM, 1, 1, "byte order mark"},
	/* Prometheus 0.0.4 */
	{"duplicate-label.prom", PR, 1, 9, "duplicate label name 'x'"},
	{"nonmonotonic-buckets.prom", PR, 3, 18, "cumulative"},
	{"missing-inf-bucket.prom", PR, 3, 1, "+Inf"},
	{"count-not-inf-bucket.prom", PR, 4, 9, "h_count is 10"},
	{"type-after-samples.prom", PR, 2, 10, "comes after samples that were read as unknown"},
	{"histogram-plain-sample.prom", PR, 4, 1, "not a sample name of histogram family 'h'"},
	{"exemplar.prom", PR, 2, 5, "exemplars are not part"},
	{"float-timestamp.prom", PR, 1, 5, "integer milliseconds"},
	{"invalid-name-char.prom", PR, 1, 2, "invalid character in metric name"},
	{"bad-value.prom", PR, 1, 3, "invalid value 'nann'"},
	{"signed-nan.prom", PR, 1, 3, "invalid value '-NaN'"},
	{"le-on-sum.prom", PR, 3, 7, "may have 'le'"},
	{"summary-without-quantile.prom", PR, 2, 1, "needs a 'quantile' label"},
	{"unknown-type.prom", PR, 1, 10, "unknown type 'gaugehistogram'"},
	{"crlf.prom", PR, 1, 4, "carriage return"},
	{"duplicate-series.prom", PR, 2, 1, "duplicate sample"},
	{"reserved-name-label.prom", PR, 1, 3, "'__name__' is reserved"},
	{"quoted-name-twice.prom", PR, 1, 3, "metric name is already given"},
	{"two-quoted-names.prom", PR, 1, 6, "metric name is already given"},
	{"no-metric-name.prom", PR, 1, 1, "no metric name"},
	{"quoted-name-dot.prom", PR, 1, 7, "expected '=' after label name"},
	{"negative-bucket-count.prom", PR, 2, 21, "non-negative"},
	{"timestamp-overflow.prom", PR, 1, 5, "out of range"},
	{"unterminated-labels.prom", PR, 1, 9, "expected ',' or '}'"},
	{"hex-without-exponent.prom", PR, 1, 3, "invalid value '0x10'"},
	{"underscore-decimal.prom", PR, 1, 3, "invalid value '1_0'"},
	/* detected as Prometheus from its first 4 KiB, then an OpenMetrics end */
	{"auto-late-eof.prom", NULL, 1001, 3, "--format openmetrics"},
};

static void test_malformed(void **state)
{
	Env *e = *state;
	ImportResult res;
	/* start from a database that has content */
	import_ok(e, "fixtures/prom/good/spec-example.om", NULL, &res);
	import_ok(e, "fixtures/prom/good/spec-example.prom", NULL, &res);
	char before[512], after[512];
	fingerprint(e, before, sizeof before);
	size_t n = sizeof bad_cases / sizeof bad_cases[0];
	for (size_t i = 0; i < n; i++) {
		const Bad *b = &bad_cases[i];
		char path[256], want[320];
		snprintf(path, sizeof path, "fixtures/prom/bad/%s", b->file);
		snprintf(want, sizeof want, "%s:%ld:%ld: ", path, b->line, b->col);
		Err err = {0};
		int rc = import(e, path, b->format, &res, &err);
		if (rc == 0)
			fail_msg("%s: imported without error", path);
		if (strncmp(err.msg, want, strlen(want)) != 0)
			fail_msg("%s: want location %s, got \"%s\"", path, want, err.msg);
		if (strstr(err.msg, b->msg) == NULL)
			fail_msg("%s: want \"%s\" in \"%s\"", path, b->msg, err.msg);
		if (res.counts.metrics_added != 0)
			fail_msg("%s: counts not reset", path);
		fingerprint(e, after, sizeof after);
		if (strcmp(before, after) != 0)
			fail_msg("%s: database changed: %s -> %s", path, before, after);
	}
	assert_true(n >= 40);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_om_spec_example, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prom_spec_example, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spellings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_om_escapes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_om_timestamps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reimport_adds_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sniff, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forced_dialect, setup, teardown),
		cmocka_unit_test_setup_teardown(test_families_and_filters, setup, teardown),
		cmocka_unit_test_setup_teardown(test_import_memory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reference_inputs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prom_lenient, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
