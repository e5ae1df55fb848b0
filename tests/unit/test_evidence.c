/*
 * test_evidence.c - named evidence and budgets.
 *
 * Fixtures (tests/fixtures/diag, written by make_fixtures.py): five
 * hand-made requests whose late work, omission, retries, serial calls and
 * fan-out are counted by hand in the comments below; OTLP metrics of a
 * client pool (used/idle count, max, pending, wait-time histogram with an
 * exemplar), an executor and CPU on two hosts; a Prometheus file with a
 * pool under custom metric names and one under the underscore spelling of
 * the OpenTelemetry names. Also: missing values are never 0, sheet values
 * override computed ones, derived values follow, small samples are
 * flagged, histogram quantiles interpolate like Prometheus does.
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
#include <unistd.h>

#include "evidence.h"
#include "evidence_hist.h"
#include "evidence_priv.h"
#include "helpers.h"
#include "import.h"
#include "model_json.h"

#define FX "fixtures/diag/"
/* 2026-07-14T18:00:00Z .. +60 s */
#define W0 ((int64_t)1784052000000000000LL)
#define W1 (W0 + (int64_t)60000000000LL)

static Store *fixture_store(char *path, size_t sz)
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

static Model *mini_model(void)
{
	Model *m = NULL;
	Err err = {0};
	if (model_load(FX "mini.model.json", &m, &err))
		fail_msg("%s", err.msg);
	return m;
}

static double val(const Evidence *e, const char *name)
{
	double v;
	if (!evidence_value(e, name, &v))
		fail_msg("%s is missing", name);
	return v;
}

static void near(double got, double want, const char *what)
{
	if (fabs(got - want) > 1e-6)
		fail_msg("%s: %.9g, expected %.9g", what, got, want);
}

static void test_requests_and_metrics(void **state)
{
	(void)state;
	char path[128];
	Store *st = fixture_store(path, sizeof path);
	Model *m = mini_model();
	EvidenceOptions o = {.model = m, .period.win = {W0, W1}};
	Evidence *e = NULL;
	Err err = {0};
	if (evidence_compute(st, &o, &e, &err))
		fail_msg("%s", err.msg);

	/* five requests; T2 (server outlives a timed-out call) and T5 (calls
	 * started after the 100 ms deadline) have late work, only T2 abandoned */
	near(val(e, "ingress.requests"), 5, "requests");
	near(val(e, "late_work.ratio"), 0.4, "late work");
	near(val(e, "late_work.abandoned_ratio"), 0.2, "abandoned");
	/* T2's rec failed, T4 has no rec although most requests call it */
	near(val(e, "omission.ratio"), 0.4, "omission");
	/* db: six attempts (T3 retried once after an error), five logical
	 * calls, one in error, only T4's alone with no sibling */
	near(val(e, "dep.db.calls_per_request"), 1.0, "db calls/request");
	near(val(e, "dep.db.attempts_per_call"), 1.2, "db attempts");
	near(val(e, "dep.db.error_ratio"), 1.0 / 6, "db errors");
	near(val(e, "dep.db.serial_ratio"), 1.0 / 6, "db serial");
	near(val(e, "dep.rec.calls_per_request"), 0.8, "rec calls/request");
	near(val(e, "dep.rec.late_ratio"), 0.25, "rec outlived");
	near(val(e, "fanout.calls_per_request"), 2.0, "calls/request");
	near(val(e, "fanout.gold.calls_per_request"), 2.0, "gold calls/request");
	near(val(e, "mix.gold"), 0.4, "gold share");
	near(val(e, "dep.db.optional"), 0, "db optional (model)");
	near(val(e, "dep.rec.optional"), 1, "rec optional (model)");
	near(val(e, "objective.p99_ms"), 100, "objective");
	near(val(e, "budget.pool.db.occupancy"), 0.6, "budget in evidence units");

	/* exact quantiles from spans say so, and 5 requests are a small sample */
	const EvValue *v = evidence_get(e, "ingress.p99_ms");
	assert_int_equal(v->source, EV_SRC_SPANS);
	assert_int_equal(v->qkind, EV_Q_EXACT);
	assert_int_equal(v->n, 5);
	assert_true(v->small_sample);
	assert_non_null(strstr(v->provenance, "exact"));
	/* placement needs 40 requests: missing, never 0 */
	v = evidence_get(e, "placement.concentration");
	assert_non_null(v);
	assert_true(v->missing);
	assert_true(isnan(v->value));
	double dummy;
	assert_false(evidence_value(e, "placement.concentration", &dummy));
	assert_false(evidence_value(e, "no.such.name", &dummy));

	/* pool metrics joined by the model's pool "db" with default names:
	 * used means h1 (8+9)/2 + h2 (4+5)/2 = 13 (idle ignored, the point
	 * before the window ignored), max 20 */
	near(val(e, "pool.db.used"), 13, "db used");
	near(val(e, "pool.db.max"), 20, "db max");
	near(val(e, "pool.db.occupancy"), 0.65, "db occupancy");
	near(val(e, "pool.db.occupancy_host_max"), 0.85, "db busiest host");
	near(val(e, "pool.db.pending"), 3, "db pending");
	/* wait histogram: increase over the window, merged over hosts, p99
	 * interpolated in the (10 ms, 100 ms] bucket: 10 + 90 * 18.6 / 20 */
	v = evidence_get(e, "pool.db.wait.p99_ms");
	assert_non_null(v);
	near(v->value, 93.7, "db wait p99");
	assert_int_equal(v->source, EV_SRC_METRIC);
	assert_int_equal(v->qkind, EV_Q_HISTOGRAM);
	assert_non_null(strstr(v->provenance, "interpolated"));
	assert_non_null(strstr(v->provenance, "explicit"));
	assert_non_null(strstr(v->provenance, "[1 10 100 +Inf]"));
	/* the executor pool */
	near(val(e, "executor.occupancy"), 39.0 / 64, "executor occupancy");
	/* custom names with a label filter; the other pool's series excluded */
	near(val(e, "pool.cache.occupancy"), 0.4, "custom-named pool");
	/* the OpenTelemetry names in their Prometheus spelling */
	near(val(e, "pool.q.occupancy"), 0.75, "underscore spelling");
	near(val(e, "cpu.fleet_mean"), 0.45, "fleet CPU");
	near(val(e, "cpu.host_max"), 0.6, "busiest CPU");
	assert_string_equal(evidence_fact(e, "cpu.top_host"), "h1");

	/* budgets: % against a ratio, "<" budgets, unknown when missing */
	int nb = 0;
	BudgetResult *br = budgets_evaluate(m, e, &nb);
	assert_int_equal(nb, 5);
	/* the p99 of a handful of requests (200 ms) has no upper bound and its
	 * lower one is under 100 ms: it may be over its budget, not shown */
	assert_int_equal(br[0].state, BUDGET_MAYBE);
	assert_true(br[0].has_ci && br[0].lo < 100 && isinf(br[0].hi));
	assert_int_equal(br[1].state, BUDGET_BREACHED); /* 65 % > 60 % (a gauge: exact) */
	near(br[1].value, 65, "occupancy in %");
	assert_false(br[1].has_ci);
	/* late work 0.4 of a few requests: its Wilson interval holds 0.5 */
	assert_int_equal(br[2].state, BUDGET_MAYBE);
	assert_true(br[2].lo < 0.4 && br[2].hi > 0.5);
	assert_int_equal(br[3].state, BUDGET_UNKNOWN);  /* no recovery evidence */
	assert_true(isnan(br[3].value));
	assert_int_equal(br[4].state, BUDGET_BREACHED); /* CPU 0.45 < 0.5 */
	char buf[32];
	budgets_format_value(br[1].budget, br[1].value, buf, sizeof buf);
	assert_string_equal(buf, "65.0 %");
	free(br);

	/* exemplars of the window */
	EvExemplar *ex = NULL;
	int nex = 0;
	assert_int_equal(evidence_exemplars_load(st, W0, W1, 0, &ex, &nex, &err), 0);
	assert_int_equal(nex, 1);
	assert_string_equal(ex[0].metric, "db.client.connection.wait_time");
	assert_string_equal(ex[0].trace_id, "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1");
	assert_string_equal(ex[0].span_id, "0202020202020202");
	assert_true(ex[0].has_le);
	near(ex[0].le, 0.1, "exemplar bucket");
	near(ex[0].value, 0.09, "exemplar value");
	assert_string_equal(ex[0].unit, "s");
	evidence_exemplars_free(ex, nex);

	evidence_free(e);
	store_close(st);
	rm_db(path);
	model_free(m);
}

/* A window with nothing in it: every span figure missing, nothing 0. */
static void test_empty_window(void **state)
{
	(void)state;
	char path[128];
	Store *st = fixture_store(path, sizeof path);
	Model *m = mini_model();
	EvidenceOptions o = {.model = m, .period.win = {W0 - 7200000000000LL, W0 - 3600000000000LL}};
	Evidence *e = NULL;
	Err err = {0};
	assert_int_equal(evidence_compute(st, &o, &e, &err), 0);
	assert_false(e->has_spans);
	double v;
	static const char *const names[] = {"ingress.p99_ms", "late_work.ratio", "omission.ratio",
	                                    "pool.db.occupancy", "cpu.fleet_mean", NULL};
	for (int i = 0; names[i]; i++)
		if (evidence_value(e, names[i], &v))
			fail_msg("%s = %g in an empty window", names[i], v);
	evidence_free(e);
	store_close(st);
	rm_db(path);
	model_free(m);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Figures spans cannot give, read from metrics: a gauge under the
 * evidence's own name (Prometheus spelling), and the request rate from the
 * request-duration histogram's count over the window. */
static void test_named_metrics(void **state)
{
	(void)state;
	char path[128], f1[160], f2[160];
	tmp_db_path(path, sizeof path);
	snprintf(f1, sizeof f1, "%s.a.prom", path);
	snprintf(f2, sizeof f2, "%s.b.prom", path);
	write_text(f1, "# TYPE late_work_ratio gauge\n"
	               "late_work_ratio{instance=\"a\"} 0.03 1784052010000\n"
	               "late_work_ratio{instance=\"b\"} 0.05 1784052010000\n"
	               "# TYPE http_server_request_duration histogram\n"
	               "http_server_request_duration_bucket{le=\"0.1\"} 100 1784051990000\n"
	               "http_server_request_duration_bucket{le=\"+Inf\"} 100 1784051990000\n"
	               "http_server_request_duration_count 100 1784051990000\n"
	               "http_server_request_duration_sum 3 1784051990000\n");
	write_text(f2, "# TYPE http_server_request_duration histogram\n"
	               "http_server_request_duration_bucket{le=\"0.1\"} 700 1784052050000\n"
	               "http_server_request_duration_bucket{le=\"+Inf\"} 700 1784052050000\n"
	               "http_server_request_duration_count 700 1784052050000\n"
	               "http_server_request_duration_sum 21 1784052050000\n");
	Store *st = NULL;
	Err err = {0};
	assert_int_equal(store_open(path, 0, &st, &err), 0);
	const char *files[] = {f1, f2};
	for (int i = 0; i < 2; i++) {
		ImportResult res;
		ImportOptions io = {0};
		if (import_file(st, files[i], &io, &res, &err))
			fail_msg("%s", err.msg);
	}
	Model *m = mini_model();
	EvidenceOptions o = {.model = m, .period.win = {W0, W1}};
	Evidence *e = NULL;
	assert_int_equal(evidence_compute(st, &o, &e, &err), 0);
	near(val(e, "late_work.ratio"), 0.04, "late work gauge");
	assert_int_equal(evidence_get(e, "late_work.ratio")->source, EV_SRC_METRIC);
	/* 600 more requests in the 60 s window */
	near(val(e, "ingress.rate_rps"), 10, "request rate");
	assert_false(evidence_value(e, "omission.ratio", &(double){0}));
	evidence_free(e);
	store_close(st);
	rm_db(path);
	unlink(f1);
	unlink(f2);
	model_free(m);
}

static void test_supply_and_derive(void **state)
{
	(void)state;
	Evidence *e = evidence_new();
	ev_list_add(&e->classes, &e->n_classes, "enterprise");
	evidence_supply(e, "mix.enterprise", 0.09, "ratio", EV_SRC_SHEET, "sheet s");
	evidence_supply(e, "mix.enterprise@baseline", 0.05, "ratio", EV_SRC_SHEET, "sheet s");
	evidence_supply(e, "dep.pricing.client_wait.p99_ms", 71, "ms", EV_SRC_SHEET, "sheet s");
	evidence_supply(e, "dep.pricing.client_wait.p99_ms@baseline", 18, "ms", EV_SRC_SHEET, "sheet s");
	evidence_supply(e, "dep.pricing.service.p99_ms", 22, "ms", EV_SRC_SHEET, "sheet s");
	evidence_supply(e, "dep.pricing.service.p99_ms@baseline", 20, "ms", EV_SRC_SHEET, "sheet s");
	evidence_supply(e, "ingress.p99_ms", 318, "ms", EV_SRC_SHEET, "sheet s");
	evidence_finish(e);
	/* without counts the sheet's share change is taken as given */
	near(val(e, "mix.change"), 0.8, "mix change");
	assert_string_equal(evidence_fact(e, "mix.top_class"), "enterprise");
	/* the dependency named only by the sheet is known */
	int found = 0;
	for (int i = 0; i < e->n_deps; i++)
		found |= strcmp(e->deps[i], "pricing") == 0;
	assert_true(found);
	near(val(e, "wait.max_rise_ms"), 53, "wait rise");
	assert_int_equal(evidence_get(e, "wait.max_rise_ms")->source, EV_SRC_DERIVED);
	/* a later supply replaces, and derived values follow */
	evidence_supply(e, "mix.enterprise", 0.05, "ratio", EV_SRC_SHEET, "sheet t");
	evidence_finish(e);
	near(val(e, "mix.change"), 0, "mix change after override");
	/* a NAN value is stored as missing, never as a number */
	evidence_supply(e, "x.y", NAN, "ms", EV_SRC_SHEET, "sheet");
	const EvValue *v = evidence_get(e, "x.y");
	assert_true(v->missing);
	assert_int_equal(v->source, EV_SRC_MISSING);
	/* sorted by name */
	for (int i = 1; i < e->n; i++)
		assert_true(strcmp(e->v[i - 1].name, e->v[i].name) < 0);
	evidence_free(e);
}

/* Spans counts on both sides: a share change within sampling noise is no
 * change (z < 3). */
static void test_mix_noise(void **state)
{
	(void)state;
	Evidence *e = evidence_new();
	ev_list_add(&e->classes, &e->n_classes, "e");
	ev_put(e, "mix.e", 0.0625, "ratio", EV_SRC_SPANS, EV_Q_NONE, 400, 0, "spans");
	ev_put(e, "mix.e@baseline", 0.04, "ratio", EV_SRC_SPANS, EV_Q_NONE, 400, 0, "spans");
	evidence_finish(e);
	near(val(e, "mix.change"), 0, "noise is no change");
	assert_true(val(e, "mix.e.z") < 3);
	ev_put(e, "mix.e", 0.15, "ratio", EV_SRC_SPANS, EV_Q_NONE, 400, 0, "spans");
	evidence_finish(e);
	near(val(e, "mix.change"), 2.75, "a real shift");
	assert_true(val(e, "mix.e.z") >= 3);
	evidence_free(e);
}

static void test_histogram_quantile(void **state)
{
	(void)state;
	double le[] = {0.1, 0.5, 1, INFINITY};
	double cum[] = {10, 60, 100, 100};
	/* median: rank 50 in (0.1, 0.5]: 0.1 + 0.4 * 40/50 */
	near(ev_histogram_quantile(le, cum, 4, 0.5), 0.42, "p50");
	/* first bucket interpolates from 0 */
	near(ev_histogram_quantile(le, cum, 4, 0.05), 0.05, "p5");
	/* in the +Inf bucket: the highest finite bound */
	double cum2[] = {10, 60, 90, 100};
	near(ev_histogram_quantile(le, cum2, 4, 0.99), 1, "+Inf bucket");
	double zero[] = {0, 0, 0, 0};
	assert_true(isnan(ev_histogram_quantile(le, zero, 4, 0.99)));
	assert_true(isnan(ev_histogram_quantile(le, cum, 0, 0.99)));
}

static void test_segment(void **state)
{
	(void)state;
	char out[32];
	evidence_segment("Mercury-API v2", out, sizeof out);
	assert_string_equal(out, "mercury_api_v2");
	evidence_segment("a\x1b[31mb", out, sizeof out);
	assert_string_equal(out, "a__31mb");
	evidence_segment("abcdefghij", out, 5);
	assert_string_equal(out, "abcd");
}

/* The budget rule on one figure: breached only when the whole 95 %
 * interval is past the threshold, within when none of it is, otherwise
 * "may be breached"; a figure without an interval is exact. */
static void test_budget_rule(void **state)
{
	(void)state;
	ModelBudget qa = {.id = "queue_age", .evidence = "endpoint.queue_age.p99_ms", .op = ">",
	                  .threshold = 12, .unit = "ms"};
	ModelBudget cpu = {.id = "cpu", .evidence = "cpu.fleet_mean", .op = "<", .threshold = 0.5,
	                   .unit = "ratio"};
	ModelBudget pct = {.id = "occ", .evidence = "pool.p.occupancy", .op = ">", .threshold = 20,
	                   .unit = "%"};
	BudgetResult r;
	assert_int_equal(budget_judge_figure(&qa, 18.8, 13, 25, 1, "ms", &r), BUDGET_BREACHED);
	assert_int_equal(budget_judge_figure(&qa, 18.8, 10, 25, 1, "ms", &r), BUDGET_MAYBE);
	assert_int_equal(budget_judge_figure(&qa, 7.1, 0.3, 15.9, 1, "ms", &r), BUDGET_MAYBE);
	assert_int_equal(budget_judge_figure(&qa, 9, 5, 11.9, 1, "ms", &r), BUDGET_OK);
	assert_int_equal(budget_judge_figure(&qa, 11, 5, 12, 1, "ms", &r), BUDGET_OK); /* at it: within */
	assert_int_equal(budget_judge_figure(&qa, 200, 5, INFINITY, 1, "ms", &r), BUDGET_MAYBE);
	assert_int_equal(budget_judge_figure(&qa, 200, 20, INFINITY, 1, "ms", &r), BUDGET_BREACHED);
	assert_int_equal(budget_judge_figure(&qa, 2, -INFINITY, 11, 1, "ms", &r), BUDGET_OK);
	assert_int_equal(budget_judge_figure(&qa, 12.5, NAN, NAN, 0, "ms", &r), BUDGET_BREACHED);
	assert_int_equal(budget_judge_figure(&qa, 12, NAN, NAN, 0, "ms", &r), BUDGET_OK);
	assert_int_equal(budget_judge_figure(&qa, NAN, NAN, NAN, 0, "ms", &r), BUDGET_UNKNOWN);
	/* below: breached when the whole interval is under the threshold */
	assert_int_equal(budget_judge_figure(&cpu, 0.4, 0.3, 0.45, 1, "ratio", &r), BUDGET_BREACHED);
	assert_int_equal(budget_judge_figure(&cpu, 0.45, 0.4, 0.6, 1, "ratio", &r), BUDGET_MAYBE);
	assert_int_equal(budget_judge_figure(&cpu, 0.6, 0.5, 0.7, 1, "ratio", &r), BUDGET_OK);
	/* a share kept as a ratio against a budget in %: the interval too */
	assert_int_equal(budget_judge_figure(&pct, 0.249, 0.21, 0.30, 1, "ratio", &r), BUDGET_BREACHED);
	near(r.lo, 21, "lower bound in %");
	near(r.hi, 30, "upper bound in %");
	assert_int_equal(budget_judge_figure(&pct, 0.249, 0.19, 0.30, 1, "ratio", &r), BUDGET_MAYBE);
	char buf[64];
	budget_format_interval(&r, buf, sizeof buf);
	assert_string_equal(buf, "[19.0, 30.0 %]");
	assert_string_equal(budget_state_text(BUDGET_MAYBE), "may be breached");
}

/* The demo's case: the executor's queue-age histogram puts the p99 at
 * 17.5 ms, interpolated inside its 10-25 ms bucket, on a million waits;
 * the traces say 7.1 ms [0.3, 15.9] on 3,000 requests. The histogram's
 * interval is the bucket's bounds however many waits it counts (the value
 * is not known more precisely than its bucket), so a 12 ms budget may be
 * breached: neither source shows it. The narrower interval (the metric's,
 * 15 ms wide against 15.6) is the one judged, and the other is named.
 * When the traces pin the figure tighter, they are judged instead. */
static void test_budget_metric_bucket(void **state)
{
	(void)state;
	ModelBudget qa = {.id = "queue_age", .evidence = "endpoint.queue_age.p99_ms", .op = ">",
	                  .threshold = 12, .unit = "ms", .label = "endpoint queue age above 12 ms"};
	double le[] = {0.5, 1, 2.5, 5, 10, 25, 50, 100, INFINITY};
	double cum[] = {300e3, 500e3, 800e3, 950e3, 985e3, 995e3, 999e3, 1e6, 1e6};
	for (int tight = 0; tight < 2; tight++) {
		EvHist h = {.le = le, .cum = cum, .nb = 9, .series = 1};
		snprintf(h.family, sizeof h.family, "executor.queue_age");
		snprintf(h.scheme, sizeof h.scheme, "explicit");
		Evidence *e = evidence_new();
		EvValue *sp = ev_put(e, "endpoint.queue_age.p99_ms", tight ? 13.5 : 7.07, "ms",
		                     EV_SRC_SPANS, EV_Q_EXACT, 3000, 0, "spans: exact p99");
		ev_ci(sp, tight ? 12.5 : 0.3, tight ? 14.0 : 15.86);
		EvValue *mv = ev_put_hist_quantile(e, "endpoint.queue_age.p99_ms.metric", &h, 99, 1,
		                                   "(pool endpoint-executor)", NULL, 0);
		assert_non_null(mv);
		near(mv->value, 17.5, "interpolated p99");
		/* the interval is the bucket's bounds, not narrower */
		assert_true(mv->has_ci);
		near(mv->lo, 10, "bucket's lower bound");
		near(mv->hi, 25, "bucket's upper bound");
		ev_best_source(e, 0, 0);
		evidence_finish(e);
		BudgetResult r;
		char line[800];
		budget_judge(&qa, e, &r);
		budget_describe(&r, line, sizeof line);
		if (!tight) {
			assert_int_equal(r.state, BUDGET_MAYBE);
			assert_int_equal(r.src, EV_SRC_METRIC);
			near(r.value, 17.5, "the metric's figure");
			if (!strstr(line, "17.5 ms [10.0, 25.0 ms] (metric, 1,000,000 ") ||
			    !strstr(line, "histogram buckets 10.0 ms to 25.0 ms") ||
			    !strstr(line, "spans, 3,000 requests: 7.1 ms [0.3, 15.9 ms]") ||
			    !strstr(line, "the interval holds the budget (12.0 ms)"))
				fail_msg("%s", line);
			/* what the hold-rollout count reads: not breached */
			Model m = {.budgets = &qa, .n_budgets = 1};
			int nb;
			BudgetResult *all = budgets_evaluate(&m, e, &nb);
			assert_int_equal(nb, 1);
			assert_int_equal(all[0].state, BUDGET_MAYBE);
			free(all);
		} else {
			/* the traces' [12.5, 14.0] is narrower and wholly over 12 ms */
			assert_int_equal(r.state, BUDGET_BREACHED);
			assert_int_equal(r.src, EV_SRC_SPANS);
			if (!strstr(line, "13.5 ms [12.5, 14.0 ms] (spans, 3,000 requests, the narrower "
			                  "interval; metric, 1,000,000 ") ||
			    strstr(line, "holds the budget"))
				fail_msg("%s", line);
		}
		evidence_free(e);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_requests_and_metrics),
		cmocka_unit_test(test_empty_window),
		cmocka_unit_test(test_named_metrics),
		cmocka_unit_test(test_supply_and_derive),
		cmocka_unit_test(test_mix_noise),
		cmocka_unit_test(test_histogram_quantile),
		cmocka_unit_test(test_segment),
		cmocka_unit_test(test_budget_rule),
		cmocka_unit_test(test_budget_metric_bucket),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
