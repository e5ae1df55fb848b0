/*
 * test_report.c - the text report against a golden file, and the JSON
 * report's documented fields, on a small hand-built endpoint:
 *
 *   api GET /home
 *     - profile (serial)      client 10..40, server 15..35 (queue 3 ms)
 *     = pricing (parallel)    client 40..(70 | 130), server 45..65
 *     = reco    (parallel)    client 40..60, no server span (unknown split)
 *
 * Twenty requests: ten baseline, ten window; in the window every other
 * request waits 60 ms more on the pricing client side while pricing's
 * server time stays the same.
 *
 * Set TT_UPDATE_GOLDEN=1 to rewrite the golden file after a reviewed change.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <cjson/cJSON.h>

#include "analysis.h"
#include "helpers.h"
#include "model_json.h"
#include "report.h"

#define GOLDEN "golden/report/basic.txt"

static const char *model_text =
    "{\"endpoint\": \"GET /home\", \"root\": {\"service\": \"api\", \"operation\": \"GET /home\"},"
    " \"objective\": {\"percentile\": 99, \"threshold_ms\": 120},"
    " \"classes\": {\"attribute\": \"workload.class\", \"values\": [\"big\", \"small\"]},"
    " \"nodes\": [{\"service\": \"profile\", \"mandatory\": true, \"core\": true},"
    "            {\"service\": \"pricing\", \"mandatory\": true, \"core\": true},"
    "            {\"service\": \"api\", \"operation\": \"reco.Get\", \"label\": \"reco\","
    "             \"mandatory\": false, \"core\": false}]}";

static Store *build(char *path, size_t sz)
{
	tmp_db_path(path, sz);
	Store *st = NULL;
	Err err = {0};
	assert_int_equal(store_open(path, 0, &st, &err), 0);
	TSpanSpec sp[20 * 7];
	static char tags[20][16];
	int n = 0;
	for (int i = 0; i < 20; i++) {
		int win = i >= 10;
		snprintf(tags[i], sizeof tags[i], "q%02d", i);
		double t = (win ? 3600000.0 : 0) + (i % 10) * 1000.0;
		double pe = win && (i % 2) ? 130 : 70;
		const char *cls = i % 2 ? "big" : "small";
		sp[n++] = (TSpanSpec){tags[i], "r", "", "api", "GET /home", SPAN_KIND_SERVER, t, t + pe + 5, cls, 0};
		sp[n++] = (TSpanSpec){tags[i], "cp", "r", "api", "profile.Get", SPAN_KIND_CLIENT, t + 10, t + 40, NULL, 3};
		sp[n++] = (TSpanSpec){tags[i], "sp", "cp", "profile", "Get", SPAN_KIND_SERVER, t + 15, t + 35, NULL, 0};
		sp[n++] = (TSpanSpec){tags[i], "cq", "r", "api", "pricing.Quote", SPAN_KIND_CLIENT, t + 40, t + pe, NULL, 0};
		sp[n++] = (TSpanSpec){tags[i], "sq", "cq", "pricing", "Quote", SPAN_KIND_SERVER, t + 45 + (pe - 70), t + 65 + (pe - 70), NULL, 0};
		sp[n++] = (TSpanSpec){tags[i], "cr", "r", "api", "reco.Get", SPAN_KIND_CLIENT, t + 40, t + 60, NULL, 0};
	}
	assert_int_equal(add_spans(st, sp, n, T0), 0);
	return st;
}

static Analysis *analyse(Store *st, Model **m)
{
	Err err = {0};
	assert_int_equal(model_parse("model.json", model_text, strlen(model_text), m, &err), 0);
	AnalysisOptions o = {.period.win = {T0 + MS(3600000), T0 + MS(3700000)},
	                     .period.has_baseline = 1, .period.base = {T0, T0 + MS(100000)},
	                     .model = *m};
	Analysis *a = NULL;
	assert_int_equal(analysis_run(st, &o, &a, &err), 0);
	return a;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return NULL;
	Buf b;
	buf_init(&b);
	char chunk[4096];
	size_t k;
	while ((k = fread(chunk, 1, sizeof chunk, f)) > 0)
		buf_add(&b, chunk, k);
	fclose(f);
	return b.p ? b.p : xstrdup("");
}

static void test_text_golden(void **state)
{
	(void)state;
	char path[128];
	Store *st = build(path, sizeof path);
	Model *m = NULL;
	Analysis *a = analyse(st, &m);
	Buf out;
	buf_init(&out);
	report_text(a, &out);
	if (getenv("TT_UPDATE_GOLDEN")) {
		FILE *f = fopen(GOLDEN, "wb");
		assert_non_null(f);
		fwrite(out.p, 1, out.len, f);
		fclose(f);
	}
	char *want = slurp(GOLDEN);
	assert_non_null(want);
	if (strcmp(want, buf_str(&out)) != 0)
		fprintf(stderr, "--- got:\n%s\n--- want:\n%s\n", buf_str(&out), want);
	assert_string_equal(buf_str(&out), want);
	/* what a reader looks for, independent of layout */
	assert_non_null(strstr(want, "BREACHED"));
	assert_non_null(strstr(want, "calls without server span"));
	assert_non_null(strstr(want, "5 slowest requests (thin)"));
	free(want);
	buf_fini(&out);
	analysis_free(a);
	model_free(m);
	store_close(st);
	rm_db(path);
}

static const cJSON *find_node(const cJSON *nodes, const char *dep)
{
	const cJSON *n;
	cJSON_ArrayForEach(n, nodes) {
		const cJSON *d = cJSON_GetObjectItem(n, "dependency");
		if (cJSON_IsString(d) && strcmp(d->valuestring, dep) == 0)
			return n;
	}
	return NULL;
}

static void test_json_fields(void **state)
{
	(void)state;
	char path[128];
	Store *st = build(path, sizeof path);
	Model *m = NULL;
	Analysis *a = analyse(st, &m);
	Buf out;
	buf_init(&out);
	report_json(a, &out);
	cJSON *j = cJSON_Parse(buf_str(&out));
	assert_non_null(j);
	const cJSON *nodes = cJSON_GetObjectItem(j, "nodes");
	assert_true(cJSON_IsArray(nodes));
	const cJSON *pricing = find_node(nodes, "pricing");
	assert_non_null(pricing);
	assert_string_equal(cJSON_GetObjectItem(pricing, "edge")->valuestring, "parallel");
	assert_string_equal(cJSON_GetObjectItem(pricing, "service_name")->valuestring, "api");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(pricing, "service"), "name")->valuestring, "api");
	/* window: 5 of 10 at 90 ms client, 20 ms server -> p99 90 / 70 / 20 */
	const cJSON *tot = cJSON_GetObjectItem(pricing, "total");
	assert_float_equal(cJSON_GetObjectItem(tot, "p99_ms")->valuedouble, 90, 1e-6);
	assert_int_equal(cJSON_GetObjectItem(tot, "n")->valueint, 10);
	assert_float_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(pricing, "client_wait"), "p99_ms")->valuedouble, 70, 1e-6);
	assert_float_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(pricing, "service"), "p99_ms")->valuedouble, 20, 1e-6);
	const cJSON *base = cJSON_GetObjectItem(pricing, "baseline");
	assert_float_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(base, "client_wait"), "p99_ms")->valuedouble, 10, 1e-6);
	/* unknown split is null, never 0 */
	const cJSON *root = cJSON_GetArrayItem(nodes, 0);
	assert_string_equal(cJSON_GetObjectItem(root, "edge")->valuestring, "root");
	const cJSON *reco = NULL, *n;
	cJSON_ArrayForEach(n, nodes) if (strcmp(cJSON_GetObjectItem(n, "label")->valuestring, "reco") == 0) reco = n;
	assert_non_null(reco);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(reco, "client_wait"), "p99_ms")));
	assert_int_equal(cJSON_GetObjectItem(reco, "unknown_split")->valueint, 10);
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(reco, "core")));
	/* critical path: pricing owns the slow requests' tail */
	const cJSON *cp = cJSON_GetObjectItem(j, "critical_path");
	assert_true(cJSON_GetArraySize(cp) > 0);
	const cJSON *top = cJSON_GetArrayItem(cp, 0);
	assert_string_equal(cJSON_GetObjectItem(top, "dependency")->valuestring, "pricing");
	assert_true(cJSON_GetObjectItem(top, "share")->valuedouble > 0.5);
	/* 5 slow requests: their shares are thin, as the text says "(thin)" */
	const cJSON *win = cJSON_GetObjectItem(j, "window");
	assert_int_equal(cJSON_GetObjectItem(win, "slow_requests")->valueint, 5);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(win, "slow_thin")));
	cJSON_Delete(j);
	buf_fini(&out);
	analysis_free(a);
	model_free(m);
	store_close(st);
	rm_db(path);
}


/* Names from data with an OSC title sequence, a screen clear, a bell, a
 * C1 CSI and broken UTF-8 reach the printed report harmlessly. */
static void test_hostile_names(void **state)
{
	(void)state;
	char path[128];
	tmp_db_path(path, sizeof path);
	Store *st = NULL;
	Err err = {0};
	assert_int_equal(store_open(path, 0, &st, &err), 0);
	static const TSpanSpec sp[] = {
		{"h1", "r", "", "api", "GET /\x1b]0;pwned\x07x", SPAN_KIND_SERVER, 0, 50, "gold\x1b[2J", 0},
		{"h1", "c", "r", "api", "evil\xc2\x9b" "31m\xff\xfe.Get", SPAN_KIND_CLIENT, 5, 40, NULL, 0},
		{"h1", "s", "c", "svc\x07", "Get", SPAN_KIND_SERVER, 10, 30, NULL, 0},
	};
	assert_int_equal(add_spans(st, sp, 3, T0), 0);
	AnalysisOptions o = {.period.win = TIME_RANGE_ALL};
	Analysis *a = NULL;
	assert_int_equal(analysis_run(st, &o, &a, &err), 0);
	Buf out;
	buf_init(&out);
	report_text(a, &out);
	for (size_t i = 0; i < out.len; i++) {
		unsigned char c = (unsigned char)out.p[i];
		assert_false(c < 0x20 && c != '\n');
		assert_false(c == 0x7f);
	}
	/* no C1 CSI (U+009B as UTF-8) and no invalid bytes left */
	assert_null(strstr(out.p, "\xc2\x9b"));
	assert_null(strstr(out.p, "\xff"));
	/* what was there is still visible, with the bad parts marked */
	assert_non_null(strstr(out.p, "svc\xef\xbf\xbd"));
	assert_non_null(strstr(out.p, "GET /\xef\xbf\xbd"));
	buf_fini(&out);
	analysis_free(a);
	store_close(st);
	rm_db(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_golden),
		cmocka_unit_test(test_json_fields),
		cmocka_unit_test(test_hostile_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
