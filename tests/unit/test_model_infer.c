/*
 * test_model_infer.c - the parts of model inference a unit test can pin
 * down without a telemetry source: pool names matched to services by
 * normalised tokens, the model file writer (what it writes loads back to
 * the same model, "why" strings included, unknowns left out), and the
 * inference and the model/data comparison on the diag fixtures (pool
 * metrics under OpenTelemetry and Prometheus spellings). The OpenTelemetry
 * SDK end-to-end cases are in tests/sh/model_infer_*.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "helpers.h"
#include "import.h"
#include "model_infer.h"
#include "model_json.h"

static int rel(const char *pool, const char *svc)
{
	return model_infer_pool_match(pool, svc, NULL);
}

static void test_pool_tokens(void **state)
{
	(void)state;
	/* a client pool named after the service it calls */
	assert_int_equal(rel("pricing-grpc", "pricing"), 1);
	assert_int_equal(rel("Pricing_Pool", "pricing"), 1);
	assert_int_equal(rel("profile.http.client", "profile"), 1);
	assert_int_equal(rel("pricing-grpc", "pricing-service"), 1); /* generic word ignored */
	/* a service's own database pool */
	assert_int_equal(rel("pricing-pg", "pricing"), 2);
	assert_int_equal(rel("checkout db", "checkout"), 2);
	assert_int_equal(rel("ORDERS_POSTGRES", "orders"), 2);
	/* unrelated: no shared token, or only generic words shared */
	assert_int_equal(rel("profile-grpc", "pricing"), 0);
	assert_int_equal(rel("redis", "pricing"), 0);
	assert_int_equal(rel("api-pool", "checkout-api"), 0);
	assert_int_equal(rel("pricingx", "pricing"), 0); /* tokens, not substrings */
	int score = 0;
	assert_int_equal(model_infer_pool_match("eu-pricing-grpc", "eu-pricing", &score), 1);
	assert_int_equal(score, 2);
	/* the same name in another spelling, even a generic or database word */
	assert_int_equal(rel("db", "db"), 1);
	assert_int_equal(rel("Checkout_API", "checkout-api"), 1);
	assert_int_equal(rel("", "pricing"), 0);
	assert_int_equal(rel(NULL, NULL), 0);
}

static Model *parse(const char *name, const char *text)
{
	Model *m = NULL;
	Err err = {0};
	if (model_parse(name, text, strlen(text), &m, &err))
		fail_msg("%s", err.msg);
	return m;
}

static void same_str(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

static void assert_same_model(const Model *a, const Model *b)
{
	same_str(a->endpoint, b->endpoint);
	same_str(a->root_service, b->root_service);
	same_str(a->root_operation, b->root_operation);
	same_str(a->why_root, b->why_root);
	same_str(a->why_classes, b->why_classes);
	assert_true(a->objective_ms == b->objective_ms);
	assert_true(a->objective_pct == b->objective_pct);
	same_str(a->class_key, b->class_key);
	assert_int_equal(a->n_classes, b->n_classes);
	for (int i = 0; i < a->n_classes; i++) {
		assert_string_equal(a->classes[i], b->classes[i]);
		assert_true((isnan(a->class_mix[i]) && isnan(b->class_mix[i])) ||
		            fabs(a->class_mix[i] - b->class_mix[i]) < 1e-9);
	}
	assert_int_equal(a->n_nodes, b->n_nodes);
	for (int i = 0; i < a->n_nodes; i++) {
		same_str(a->nodes[i].service, b->nodes[i].service);
		same_str(a->nodes[i].operation, b->nodes[i].operation);
		same_str(a->nodes[i].label, b->nodes[i].label);
		same_str(a->nodes[i].pool, b->nodes[i].pool);
		same_str(a->nodes[i].why, b->nodes[i].why);
		assert_int_equal(a->nodes[i].mandatory, b->nodes[i].mandatory);
		assert_int_equal(a->nodes[i].core, b->nodes[i].core);
	}
	assert_int_equal(a->n_pools, b->n_pools);
	for (int i = 0; i < a->n_pools; i++) {
		const ModelPool *p = &a->pools[i], *q = &b->pools[i];
		same_str(p->name, q->name);
		same_str(p->kind, q->kind);
		same_str(p->node, q->node);
		assert_int_equal(p->size, q->size);
		same_str(p->used_metric, q->used_metric);
		same_str(p->max_metric, q->max_metric);
		same_str(p->pending_metric, q->pending_metric);
		same_str(p->wait_metric, q->wait_metric);
		same_str(p->label_key, q->label_key);
		same_str(p->label_value, q->label_value);
		same_str(p->why, q->why);
	}
	assert_int_equal(a->n_budgets, b->n_budgets);
	for (int i = 0; i < a->n_budgets; i++) {
		same_str(a->budgets[i].id, b->budgets[i].id);
		same_str(a->budgets[i].evidence, b->budgets[i].evidence);
		same_str(a->budgets[i].op, b->budgets[i].op);
		assert_true(a->budgets[i].threshold == b->budgets[i].threshold);
		same_str(a->budgets[i].unit, b->budgets[i].unit);
		same_str(a->budgets[i].label, b->budgets[i].label);
	}
}

/* The bundled model, written and read back, is the same model. */
static void test_write_roundtrip_bundled(void **state)
{
	(void)state;
	Model *a = NULL, *b = NULL;
	Err err = {0};
	assert_int_equal(model_load("../models/mercury-home.model.json", &a, &err), 0);
	Buf out;
	buf_init(&out);
	model_write_json(a, &out);
	b = parse("written", buf_str(&out));
	assert_same_model(a, b);
	/* unknowns stay unknown: no "core": false invented */
	assert_null(strstr(buf_str(&out), "\"why\""));
	buf_fini(&out);
	model_free(a);
	model_free(b);
}

/* "why" strings (with quotes, backslashes, control characters) are kept
 * through write and read; mandatory unknown is not written as false. */
static void test_write_roundtrip_why(void **state)
{
	(void)state;
	Model *a = parse("why-model",
	                 "{\"root\":{\"service\":\"api\",\"operation\":\"GET /x\",\"why\":\"most \\\"common\\\"\"},"
	                 "\"objective\":{\"why\":\"not inferred\"},"
	                 "\"classes\":{\"attribute\":\"tier\",\"values\":[\"a\",\"b\"],"
	                 "\"mix\":{\"a\":0.25},\"why\":\"tab\\there\"},"
	                 "\"nodes\":[{\"service\":\"db\\\\1\",\"why\":\"line\\nbreak\"},"
	                 "{\"service\":\"x\",\"operation\":\"op\",\"mandatory\":false,\"core\":true}],"
	                 "\"pools\":[{\"name\":\"Pricing-Pool\",\"kind\":\"client\",\"node\":\"pricing\","
	                 "\"metrics\":{\"used\":\"u\",\"label_key\":\"k\",\"label_value\":\"v\"},\"why\":\"w\"}]}");
	assert_string_equal(a->nodes[0].why, "line\nbreak");
	assert_string_equal(a->why_root, "most \"common\"");
	Buf out;
	buf_init(&out);
	model_write_json(a, &out);
	Model *b = parse("written", buf_str(&out));
	assert_same_model(a, b);
	assert_null(strstr(buf_str(&out), "\"mandatory\": false, \"core\": false"));
	assert_int_equal(b->nodes[0].mandatory, MODEL_UNKNOWN);
	assert_int_equal(b->nodes[0].core, MODEL_UNKNOWN);
	assert_true(isnan(b->class_mix[1]));
	buf_fini(&out);
	model_free(a);
	model_free(b);
}

#define FX "fixtures/diag/"

static Store *diag_store(char *path, size_t sz)
{
	tmp_db_path(path, sz);
	Store *st = NULL;
	Err err = {0};
	assert_int_equal(store_open(path, 0, &st, &err), 0);
	static const char *const files[] = {FX "requests.otlp.json", FX "pool_metrics.otlp.json",
	                                    FX "custom_pool.prom", NULL};
	for (int i = 0; files[i]; i++) {
		ImportResult res;
		ImportOptions io = {0};
		if (import_file(st, files[i], &io, &res, &err))
			fail_msg("%s", err.msg);
	}
	return st;
}

/* On the diag fixtures: every inferred pool has a reason, the model
 * written and read back is the same, and an inferred model has no
 * disagreement with the data it came from. */
static void test_infer_fixture(void **state)
{
	(void)state;
	char path[128];
	Store *st = diag_store(path, sizeof path);
	Model *m = NULL;
	Err err = {0};
	assert_int_equal(model_infer(st, INT64_MIN, INT64_MAX, &m, &err), 0);
	assert_true(m->inferred);
	assert_non_null(m->root_service);
	assert_non_null(m->why_root);
	assert_true(m->n_nodes > 0);
	for (int i = 0; i < m->n_nodes; i++)
		assert_non_null(m->nodes[i].why);
	assert_true(m->n_pools > 0);
	for (int i = 0; i < m->n_pools; i++) {
		assert_non_null(m->pools[i].why);
		assert_non_null(m->pools[i].used_metric);
	}
	Buf out;
	buf_init(&out);
	model_write_json(m, &out);
	Model *b = parse("written", buf_str(&out));
	assert_same_model(m, b);
	ModelFinding *f = NULL;
	int n = -1;
	/* the written file (no longer "inferred") agrees with its data */
	assert_false(b->inferred);
	assert_int_equal(model_check(st, b, INT64_MIN, INT64_MAX, &f, &n, &err), 0);
	for (int i = 0; i < n; i++)
		print_error("unexpected finding: %s\n", f[i].text);
	assert_int_equal(n, 0);
	model_findings_free(f, n);
	buf_fini(&out);
	model_free(b);
	model_free(m);
	store_close(st);
	rm_db(path);
}

/* A request an hour before the fixture's, whose api calls a "legacy"
 * service the fixture's requests never call. */
static const char legacy_otlp[] =
    "{\"resourceSpans\":[{\"resource\":{\"attributes\":["
    "{\"key\":\"service.name\",\"value\":{\"stringValue\":\"api\"}}]},"
    "\"scopeSpans\":[{\"spans\":["
    "{\"traceId\":\"b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1\",\"spanId\":\"0b0b0b0b0b0b0b01\","
    "\"name\":\"GET /x\",\"kind\":2,\"startTimeUnixNano\":\"1784048400000000000\","
    "\"endTimeUnixNano\":\"1784048400040000000\",\"attributes\":[{\"key\":\"workload.class\","
    "\"value\":{\"stringValue\":\"gold\"}}]},"
    "{\"traceId\":\"b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1\",\"spanId\":\"0b0b0b0b0b0b0b02\","
    "\"parentSpanId\":\"0b0b0b0b0b0b0b01\",\"name\":\"legacy.Call\",\"kind\":3,"
    "\"startTimeUnixNano\":\"1784048400005000000\",\"endTimeUnixNano\":\"1784048400030000000\"}"
    "]}]},{\"resource\":{\"attributes\":["
    "{\"key\":\"service.name\",\"value\":{\"stringValue\":\"legacy\"}}]},"
    "\"scopeSpans\":[{\"spans\":["
    "{\"traceId\":\"b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1\",\"spanId\":\"0b0b0b0b0b0b0b03\","
    "\"parentSpanId\":\"0b0b0b0b0b0b0b02\",\"name\":\"Serve\",\"kind\":2,"
    "\"startTimeUnixNano\":\"1784048400006000000\",\"endTimeUnixNano\":\"1784048400028000000\"}"
    "]}]}]}";

static const char check_model[] =
    "{\"endpoint\":\"GET /x\",\"root\":{\"service\":\"api\",\"operation\":\"GET /x\"},"
    "\"classes\":{\"attribute\":\"workload.class\",\"values\":[\"gold\",\"basic\",\"platinum\"]},"
    "\"nodes\":[{\"service\":\"rec\"},{\"service\":\"db\"},{\"service\":\"legacy\"},"
    "{\"service\":\"ghost\"}]}";

static char *findings_text(const ModelFinding *f, int n)
{
	Buf b;
	buf_init(&b);
	for (int i = 0; i < n; i++)
		buf_printf(&b, "%s|%s|%s\n", f[i].kind, f[i].subject, f[i].text);
	char *s = xstrdup(buf_str(&b));
	buf_fini(&b);
	return s;
}

/* model_check_with() on a (freed here) gives the findings want. */
static void same_findings(Store *st, const Model *m, Analysis *a, int64_t w0, int64_t w1,
                          const char *want)
{
	ModelFinding *f = NULL;
	int n = 0;
	Err err = {0};
	assert_int_equal(model_check_with(st, m, a, w0, w1, &f, &n, &err), 0);
	char *got = findings_text(f, n);
	assert_string_equal(got, want);
	free(got);
	model_findings_free(f, n);
	analysis_free(a);
}

/* report and diagnose hand their analysis to model_check_with(): it must
 * say exactly what model_check() says on its own analysis of the window,
 * whatever else that analysis holds (a baseline with a node the window
 * lacks), and ignore an analysis of another question (a class, another
 * window). */
static void test_check_with_analysis(void **state)
{
	(void)state;
	char path[128], extra[160];
	Store *st = diag_store(path, sizeof path);
	Err err = {0};
	snprintf(extra, sizeof extra, "%s.legacy.json", path);
	FILE *fp = fopen(extra, "w");
	assert_non_null(fp);
	fputs(legacy_otlp, fp);
	fclose(fp);
	ImportResult res;
	ImportOptions io = {0};
	if (import_file(st, extra, &io, &res, &err))
		fail_msg("%s", err.msg);
	remove(extra);
	Model *m = parse("check", check_model);
	const int64_t w0 = 1784052000000000000LL, w1 = 1784052600000000000LL;
	const int64_t b0 = 1784048400000000000LL, b1 = 1784049000000000000LL;
	ModelFinding *f = NULL;
	int n = 0;
	assert_int_equal(model_check(st, m, w0, w1, &f, &n, &err), 0);
	char *want = findings_text(f, n);
	model_findings_free(f, n);
	/* legacy is only in the baseline: absent from the window */
	assert_non_null(strstr(want, "node_absent|legacy|"));
	assert_non_null(strstr(want, "node_absent|ghost|"));
	assert_non_null(strstr(want, "class_absent|platinum|"));
	assert_null(strstr(want, "|rec|"));
	assert_null(strstr(want, "|gold|"));
	const struct {
		int64_t from, to;
		int base;
		const char *wclass;
	} asks[] = {
	    {w0, w1, 1, NULL},       /* the window with a baseline: used */
	    {w0, w1, 0, NULL},       /* the window alone: used */
	    {w0, w1, 1, "basic"},    /* one class: not used */
	    {INT64_MIN, INT64_MAX, 0, NULL}, /* another window: not used */
	};
	for (size_t i = 0; i < sizeof asks / sizeof asks[0]; i++) {
		AnalysisOptions ao = {.period.win.from = asks[i].from, .period.win.to = asks[i].to,
		                      .period.has_baseline = asks[i].base, .period.base.from = b0, .period.base.to = b1,
		                      .wclass = asks[i].wclass, .model = m};
		Analysis *a = NULL;
		assert_int_equal(analysis_run(st, &ao, &a, &err), 0);
		same_findings(st, m, a, w0, w1, want);
	}
	/* from the import-time aggregates (the dashboard's start): the same
	 * findings, the window's ends being whole minutes */
	assert_int_equal(store_begin(st, &err), 0);
	assert_int_equal(analysis_agg_update(st, &err), 0);
	assert_int_equal(store_commit(st, &err), 0);
	AnalysisOptions ao = {.period.win.from = w0, .period.win.to = w1, .model = m};
	Analysis *a = NULL;
	assert_int_equal(analysis_from_aggregates(st, &ao, &a, &err), 0);
	assert_true(a->approx);
	same_findings(st, m, a, w0, w1, want);
	free(want);
	model_free(m);
	store_close(st);
	rm_db(path);
}

/* An empty database: a model with no nodes and reasons that say why. */
static void test_infer_empty(void **state)
{
	(void)state;
	char path[128];
	tmp_db_path(path, sizeof path);
	Store *st = NULL;
	Err err = {0};
	assert_int_equal(store_open(path, 0, &st, &err), 0);
	Model *m = NULL;
	assert_int_equal(model_infer(st, INT64_MIN, INT64_MAX, &m, &err), 0);
	assert_int_equal(m->n_nodes, 0);
	assert_int_equal(m->n_pools, 0);
	assert_null(m->root_service);
	assert_non_null(strstr(m->why_root, "no request in the range"));
	Buf out;
	buf_init(&out);
	model_write_json(m, &out);
	Model *b = parse("written", buf_str(&out));
	assert_same_model(m, b);
	buf_fini(&out);
	model_free(b);
	model_free(m);
	store_close(st);
	rm_db(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool_tokens),
		cmocka_unit_test(test_write_roundtrip_bundled),
		cmocka_unit_test(test_write_roundtrip_why),
		cmocka_unit_test(test_infer_fixture),
		cmocka_unit_test(test_infer_empty),
		cmocka_unit_test(test_check_with_analysis),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
