/*
 * test_evidence_metrics.c - complete metrics as evidence: a histogram
 * quantile's interval from its bucket counts, series merged on shared
 * bounds (exponential histograms whose scale fell), request-duration
 * histograms matched to the endpoint and its dependencies (OpenTelemetry
 * SDK names, the spanmetrics connector's, Prometheus classic histograms
 * of both), a pool's wait as the time in front of the dependency it
 * guards, and the best source of each figure.
 *
 * Fixtures are written here: OTLP/JSON traces of an endpoint api "GET /x"
 * that calls pricing and ads (both client spans named "GET", told apart by
 * server.address), and metrics in OTLP/JSON and Prometheus text whose
 * bucket counts are chosen so every quantile's bucket is known.
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

#include "buf.h"
#include "evidence.h"
#include "evidence_hist.h"
#include "evidence_priv.h"
#include "helpers.h"
#include "import.h"
#include "model_json.h"
#include "quantile.h"

/* baseline [B0, W0), window [W0, W1): one minute each */
#define W0 ((int64_t)1784052000000000000LL)
#define B0 (W0 - (int64_t)60000000000LL)
#define W1 (W0 + (int64_t)60000000000LL)
#define SEC ((int64_t)1000000000LL)

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void import_text(Store *st, const char *dbpath, const char *suffix, const char *text)
{
	char f[200];
	snprintf(f, sizeof f, "%s.%s", dbpath, suffix);
	write_text(f, text);
	ImportResult res;
	ImportOptions io = {0};
	Err err = {0};
	if (import_file(st, f, &io, &res, &err))
		fail_msg("%s: %s", f, err.msg);
	unlink(f);
}

static double val(const Evidence *e, const char *name)
{
	double v;
	if (!evidence_value(e, name, &v))
		fail_msg("%s is missing", name);
	return v;
}

static const EvValue *got(const Evidence *e, const char *name)
{
	const EvValue *v = evidence_get(e, name);
	if (v == NULL || v->missing)
		fail_msg("%s is missing (%s)", name, v ? v->provenance : "never computed");
	return v;
}

/* ---- the interval of a histogram quantile -------------------------------- */

/* The p-quantile's interval is the order statistics' (quant_ci_ranks on n =
 * the count) mapped through the buckets: from the lower edge of the bucket
 * that holds the lower rank to the upper edge of the one that holds the
 * upper rank. */
static void test_histogram_interval(void **state)
{
	(void)state;
	/* 7000 waits: the p99's ranks (about 6915 and 6946) both fall in
	 * (75, 100] ms, so the interval is that bucket */
	double le[] = {1, 5, 10, 25, 50, 75, 100, 250, INFINITY};
	double cum[] = {2000, 4000, 5000, 6000, 6500, 6900, 6990, 7000, 7000};
	int64_t l, u;
	quant_ci_ranks(7000, 99, &l, &u);
	assert_true(l > 6900 && u <= 6990);
	double lo, hi;
	ev_histogram_ci(le, cum, 9, 0.99, &lo, &hi);
	assert_true(lo == 75 && hi == 100);
	/* the point value lies inside its interval */
	double v = ev_histogram_quantile(le, cum, 9, 0.99);
	assert_true(v > 75 && v < 100);
	/* ranks in two buckets: the interval spans both */
	double cum2[] = {2000, 4000, 5000, 6000, 6500, 6930, 6990, 7000, 7000};
	ev_histogram_ci(le, cum2, 9, 0.99, &lo, &hi);
	assert_true(lo == 50 && hi == 100);
	/* the p90 of the same: rank bounds around 6300, in (25, 50] */
	ev_histogram_ci(le, cum, 9, 0.90, &lo, &hi);
	assert_true(lo == 25 && hi == 50);
	/* the first bucket's lower edge is 0 for durations */
	double cum3[] = {7000, 7000, 7000, 7000, 7000, 7000, 7000, 7000, 7000};
	ev_histogram_ci(le, cum3, 9, 0.5, &lo, &hi);
	assert_true(lo == 0 && hi == 1);
	/* 50 observations: no upper rank for a p99, so no upper bound */
	double cum4[] = {10, 20, 30, 40, 45, 48, 49, 50, 50};
	ev_histogram_ci(le, cum4, 9, 0.99, &lo, &hi);
	assert_true(isinf(hi) && hi > 0);
	assert_false(isinf(lo));
	/* a rank in the +Inf bucket: only its lower edge is known */
	double cum5[] = {0, 0, 0, 0, 0, 0, 0, 6000, 7000};
	ev_histogram_ci(le, cum5, 9, 0.99, &lo, &hi);
	assert_true(lo == 250 && isinf(hi));
	/* empty */
	double zero[9] = {0};
	ev_histogram_ci(le, zero, 9, 0.99, &lo, &hi);
	assert_true(isnan(lo) && isnan(hi));
}

/* ---- fixtures: traces ------------------------------------------------------------ */

/* n requests of api "GET /x" starting every 50 ms from t0: each calls
 * pricing (10.0.0.7:8080, server span "Quote" of pricing_ms) and ads
 * (10.0.0.9:8080, "List" of 5 ms), both client spans named "GET". */
static const char *g_tracestate = NULL;  /* on every root span, when set */
static const char *g_root_attrs = NULL;  /* extra root span attributes (JSON body) */

static void traces_json(Buf *b, int n, int64_t t0, double pricing_ms, int tag)
{
	buf_adds(b, "{\"resourceSpans\":[");
	static const char *const svc[] = {"api", "pricing", "ads"};
	for (int r = 0; r < 3; r++) {
		buf_printf(b, "%s{\"resource\":{\"attributes\":[{\"key\":\"service.name\",\"value\":"
		              "{\"stringValue\":\"%s\"}}]},\"scopeSpans\":[{\"spans\":[",
		           r ? "," : "", svc[r]);
		for (int i = 0; i < n; i++) {
			int64_t s = t0 + (int64_t)i * 50000000LL;
			char tid[33];
			snprintf(tid, sizeof tid, "%08x%08x%016x", tag, i + 1, 7);
			int64_t end = s + (int64_t)((pricing_ms + 4) * 1e6);
			if (r == 0) {
				buf_printf(b, "%s{\"traceId\":\"%s\",\"spanId\":\"%016x\",\"name\":\"GET /x\","
				              "\"kind\":2,\"startTimeUnixNano\":\"%lld\",\"endTimeUnixNano\":"
				              "\"%lld\",\"traceState\":\"%s\",\"attributes\":[%s]}",
				           i ? "," : "", tid, 1, (long long)s, (long long)end,
				           g_tracestate ? g_tracestate : "", g_root_attrs ? g_root_attrs : "");
				static const struct { int id; const char *addr; } C[] = {{2, "10.0.0.7"},
				                                                       {4, "10.0.0.9"}};
				for (int c = 0; c < 2; c++) {
					double ms = c == 0 ? pricing_ms + 2 : 7;
					buf_printf(b, ",{\"traceId\":\"%s\",\"spanId\":\"%016x\",\"parentSpanId\":"
					              "\"%016x\",\"name\":\"GET\",\"kind\":3,\"startTimeUnixNano\":"
					              "\"%lld\",\"endTimeUnixNano\":\"%lld\",\"attributes\":["
					              "{\"key\":\"server.address\",\"value\":{\"stringValue\":\"%s\"}},"
					              "{\"key\":\"server.port\",\"value\":{\"intValue\":\"8080\"}}]}",
					           tid, C[c].id, 1, (long long)(s + 1000000),
					           (long long)(s + 1000000 + (int64_t)(ms * 1e6)), C[c].addr);
				}
			} else {
				double ms = r == 1 ? pricing_ms : 5;
				buf_printf(b, "%s{\"traceId\":\"%s\",\"spanId\":\"%016x\",\"parentSpanId\":"
				              "\"%016x\",\"name\":\"%s\",\"kind\":2,\"startTimeUnixNano\":"
				              "\"%lld\",\"endTimeUnixNano\":\"%lld\"}",
				           i ? "," : "", tid, r == 1 ? 3 : 5, r == 1 ? 2 : 4,
				           r == 1 ? "Quote" : "List", (long long)(s + 2000000),
				           (long long)(s + 2000000 + (int64_t)(ms * 1e6)));
			}
		}
		buf_adds(b, "]}]}");
	}
	buf_adds(b, "]}");
}

/* 40 requests in the baseline (pricing 20 ms) and 40 in the window
 * (pricing 30 ms): too few for a p99 of the spans to be bounded. */
static Store *store_with_traces(char *path, size_t sz)
{
	tmp_db_path(path, sz);
	Store *st = NULL;
	Err err = {0};
	assert_int_equal(store_open(path, 0, &st, &err), 0);
	Buf b;
	buf_init(&b);
	traces_json(&b, 40, B0 + SEC, 20, 1);
	import_text(st, path, "b.otlp.json", buf_str(&b));
	b.len = 0;
	traces_json(&b, 40, W0 + SEC, 30, 2);
	import_text(st, path, "w.otlp.json", buf_str(&b));
	buf_fini(&b);
	return st;
}

/* The evidence of the window against the baseline, with model m and the
 * sampling the user gives (both may be NULL). */
static Evidence *compute(Store *st, const Model *m, const EvSampling *sampled)
{
	EvidenceOptions o = {.model = m,
	                     .period = {.win = {W0, W1}, .has_baseline = 1, .base = {B0, W0}}};
	if (sampled)
		o.sampled = *sampled;
	Evidence *e = NULL;
	Err err = {0};
	if (evidence_compute(st, &o, &e, &err))
		fail_msg("%s", err.msg);
	return e;
}

/* ---- fixtures: OTLP histograms --------------------------------------------------- */

/* One cumulative explicit-bucket series: a point before the baseline (all
 * zero), at the baseline's end (base[]) and at the window's end (base[] +
 * win[]); bucket counts per bucket, not cumulative, over bounds[]. */
typedef struct HSpec {
	const char *resource_service;     /* or NULL */
	const char *attrs;                /* JSON attributes array body */
	const double *base, *win;         /* per-bucket counts, nb + 1 each */
} HSpec;

static void otlp_hist(Buf *b, const char *name, const char *unit, const double *bounds, int nb,
                      const HSpec *s, int ns)
{
	buf_adds(b, "{\"resourceMetrics\":[");
	for (int k = 0; k < ns; k++) {
		buf_printf(b, "%s{\"resource\":{\"attributes\":[", k ? "," : "");
		if (s[k].resource_service)
			buf_printf(b, "{\"key\":\"service.name\",\"value\":{\"stringValue\":\"%s\"}}",
			           s[k].resource_service);
		buf_printf(b, "]},\"scopeMetrics\":[{\"metrics\":[{\"name\":\"%s\",\"unit\":\"%s\","
		              "\"histogram\":{\"aggregationTemporality\":2,\"dataPoints\":[",
		           name, unit);
		int64_t ts[3] = {B0 - SEC, W0 - SEC, W1 - SEC};
		for (int p = 0; p < 3; p++) {
			double total = 0;
			buf_printf(b, "%s{\"timeUnixNano\":\"%lld\",\"attributes\":[%s],\"bucketCounts\":[",
			           p ? "," : "", (long long)ts[p], s[k].attrs);
			for (int i = 0; i <= nb; i++) {
				double c = (p >= 1 ? s[k].base[i] : 0) + (p >= 2 ? s[k].win[i] : 0);
				total += c;
				buf_printf(b, "%s\"%.0f\"", i ? "," : "", c);
			}
			buf_printf(b, "],\"count\":\"%.0f\",\"explicitBounds\":[", total);
			for (int i = 0; i < nb; i++)
				buf_printf(b, "%s%g", i ? "," : "", bounds[i]);
			buf_adds(b, "]}");
		}
		buf_adds(b, "]}}]}]}");
	}
	buf_adds(b, "]}");
}

static const double SBOUNDS[] = {0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25};
#define NSB 7

/* ---- matching: the OpenTelemetry SDK's names --------------------------------- */

static void test_match_sdk_names(void **state)
{
	(void)state;
	char path[128];
	Store *st = store_with_traces(path, sizeof path);
	/* api's server requests on /x: 2000 a minute, the window's p99 moved
	 * from (25, 50] ms to (75, 100] ms; a series of route /y (200 very
	 * slow requests) and one of method POST must not count */
	static const double x_base[] = {0, 500, 1400, 95, 5, 0, 0, 0};
	static const double x_win[] = {0, 400, 1200, 300, 60, 40, 0, 0};
	static const double y_any[] = {0, 0, 0, 0, 0, 0, 0, 200};
	/* pricing's server time, all its callers */
	static const double p_base[] = {0, 0, 1900, 100, 0, 0, 0, 0};
	static const double p_win[] = {0, 0, 200, 1750, 50, 0, 0, 0};
	/* api's calls to 10.0.0.7:8080 (pricing) and to 10.0.0.9:8080 (ads) */
	static const double c_base[] = {0, 0, 1800, 200, 0, 0, 0, 0};
	static const double c_win[] = {0, 0, 100, 1700, 200, 0, 0, 0};
	static const double a_any[] = {0, 1000, 0, 0, 0, 0, 0, 0};
	HSpec server[] = {
		{"api", "{\"key\":\"http.route\",\"value\":{\"stringValue\":\"/x\"}},"
		        "{\"key\":\"http.request.method\",\"value\":{\"stringValue\":\"GET\"}}",
		 x_base, x_win},
		{"api", "{\"key\":\"http.route\",\"value\":{\"stringValue\":\"/y\"}}", y_any, y_any},
		{"api", "{\"key\":\"http.route\",\"value\":{\"stringValue\":\"/x\"}},"
		        "{\"key\":\"http.request.method\",\"value\":{\"stringValue\":\"POST\"}}",
		 y_any, y_any},
		{"pricing", "", p_base, p_win},
		{"billing", "", y_any, y_any},
	};
	HSpec client[] = {
		{"api", "{\"key\":\"server.address\",\"value\":{\"stringValue\":\"10.0.0.7\"}},"
		        "{\"key\":\"server.port\",\"value\":{\"intValue\":\"8080\"}}",
		 c_base, c_win},
		{"api", "{\"key\":\"server.address\",\"value\":{\"stringValue\":\"10.0.0.9\"}},"
		        "{\"key\":\"server.port\",\"value\":{\"intValue\":\"8080\"}}",
		 a_any, a_any},
	};
	Buf b;
	buf_init(&b);
	otlp_hist(&b, "http.server.request.duration", "s", SBOUNDS, NSB, server, 5);
	import_text(st, path, "s.otlp.json", buf_str(&b));
	b.len = 0;
	otlp_hist(&b, "http.client.request.duration", "s", SBOUNDS, NSB, client, 2);
	import_text(st, path, "c.otlp.json", buf_str(&b));
	buf_fini(&b);

	Evidence *e = compute(st, NULL, NULL);
	/* the ingress: only /x GET, 2000 requests each side */
	const EvValue *v = got(e, "ingress.p99_ms.metric");
	assert_int_equal(v->n, 2000);
	assert_int_equal(v->source, EV_SRC_METRIC);
	assert_int_equal(v->qkind, EV_Q_HISTOGRAM);
	assert_true(v->has_ci && v->lo == 75 && v->hi == 100);
	v = got(e, "ingress.p99_ms.metric@baseline");
	assert_int_equal(v->n, 2000);
	assert_true(v->lo == 25 && v->hi == 50);
	assert_non_null(strstr(v->provenance, "http.server.request.duration"));
	assert_non_null(strstr(v->provenance, "api's server requests"));
	assert_true(val(e, "ingress.requests.metric") == 2000);
	/* every request counts for the rate, not the 40 sampled traces */
	assert_true(fabs(val(e, "ingress.rate_rps") - 2000.0 / 60) < 1e-6);
	assert_int_equal(evidence_get(e, "ingress.rate_rps")->source, EV_SRC_METRIC);
	/* pricing's server time from its own series (billing's left out) */
	v = got(e, "dep.pricing.service.p90_ms.metric");
	assert_int_equal(v->n, 2000);
	assert_true(v->lo == 25 && v->hi == 50);
	v = got(e, "dep.pricing.service.p90_ms.metric@baseline");
	assert_true(v->lo == 10 && v->hi == 25);
	assert_null(evidence_get(e, "dep.billing.service.p90_ms.metric"));
	/* the client series matched by server.address:server.port to the
	 * call whose client spans name that peer, although both calls'
	 * spans are named "GET" */
	v = got(e, "dep.pricing.client.p90_ms.metric");
	assert_int_equal(v->n, 2000);
	assert_non_null(strstr(v->provenance, "10.0.0.7:8080"));
	v = got(e, "dep.ads.client.p90_ms.metric");
	assert_int_equal(v->n, 1000);
	assert_true(v->lo == 5 && v->hi == 10);
	/* best source: 40 traces leave the spans' p99 unbounded, so the
	 * metric reports it, and the spans' figure stays beside it */
	v = got(e, "ingress.p99_ms");
	assert_int_equal(v->source, EV_SRC_METRIC);
	assert_int_equal(v->n, 2000);
	assert_non_null(strstr(v->provenance, "best source"));
	v = got(e, "ingress.p99_ms.spans");
	assert_int_equal(v->source, EV_SRC_SPANS);
	assert_int_equal(v->n, 40);
	/* and the rise is shown on the metric */
	assert_int_equal(evidence_rose(e, "ingress.p99_ms", 0, 1.05), 1);
	assert_int_equal(evidence_rose(e, "dep.pricing.service.p90_ms", 3, 1.3), 1);
	/* pricing's 40 server spans all took 20 ms, then 30 ms: exact figures
	 * that pin the change tighter than buckets 15 and 25 ms wide, so
	 * the spans keep its p90 */
	v = got(e, "dep.pricing.service.p90_ms");
	assert_int_equal(v->source, EV_SRC_SPANS);
	assert_null(evidence_get(e, "dep.pricing.service.p90_ms.spans"));
	evidence_free(e);
	store_close(st);
	rm_db(path);
}

/* ---- matching: spanmetrics ------------------------------------------------------ */

static void test_match_spanmetrics(void **state)
{
	(void)state;
	char path[128];
	Store *st = store_with_traces(path, sizeof path);
	static const double MS[] = {2, 4, 6, 8, 10, 15, 20, 30, 50, 100};
	static const double root_b[] = {0, 0, 0, 0, 0, 0, 950, 50, 0, 0, 0};
	static const double root_w[] = {0, 0, 0, 0, 0, 0, 0, 100, 850, 50, 0};
	static const double q_b[] = {0, 0, 0, 0, 0, 0, 1000, 0, 0, 0, 0};
	static const double q_w[] = {0, 0, 0, 0, 0, 0, 0, 1000, 0, 0, 0};
	static const double l_b[] = {0, 0, 500, 0, 0, 0, 0, 0, 0, 0, 0};
	/* the Collector's own resource; service.name, span.name and
	 * span.kind are the connector's dimensions */
#define DIM(svc, span, kind)                                                              \
	"{\"key\":\"service.name\",\"value\":{\"stringValue\":\"" svc "\"}},"                 \
	"{\"key\":\"span.name\",\"value\":{\"stringValue\":\"" span "\"}},"                   \
	"{\"key\":\"span.kind\",\"value\":{\"stringValue\":\"SPAN_KIND_" kind "\"}}"
	HSpec s[] = {
		{"otelcol", DIM("api", "GET /x", "SERVER"), root_b, root_w},
		{"otelcol", DIM("api", "GET /y", "SERVER"), q_b, q_b},
		{"otelcol", DIM("pricing", "Quote", "SERVER"), q_b, q_w},
		{"otelcol", DIM("ads", "List", "SERVER"), l_b, l_b},
		/* api's client spans are all "GET": which call is ambiguous */
		{"otelcol", DIM("api", "GET", "CLIENT"), q_b, q_w},
		{"otelcol", DIM("ads", "List", "INTERNAL"), q_w, q_w},
	};
	Buf b;
	buf_init(&b);
	otlp_hist(&b, "traces.span.metrics.duration", "ms", MS, 10, s, 6);
	import_text(st, path, "sm.otlp.json", buf_str(&b));
	buf_fini(&b);
	Evidence *e = compute(st, NULL, NULL);
	const EvValue *v = got(e, "ingress.p90_ms.metric");
	assert_int_equal(v->n, 1000);
	assert_true(v->lo == 30 && v->hi == 50);
	assert_non_null(strstr(v->provenance, "traces.span.metrics.duration"));
	v = got(e, "ingress.p90_ms.metric@baseline");
	assert_true(v->lo == 15 && v->hi == 20);
	v = got(e, "dep.pricing.service.p99_ms.metric");
	assert_true(v->lo == 20 && v->hi == 30);
	v = got(e, "dep.ads.service.p99_ms.metric");
	assert_int_equal(v->n, 500); /* the INTERNAL series left out */
	assert_null(evidence_get(e, "dep.pricing.client.p99_ms.metric"));
	assert_null(evidence_get(e, "dep.ads.client.p99_ms.metric"));
	evidence_free(e);
	store_close(st);
	rm_db(path);
}

/* ---- matching: Prometheus classic histograms ------------------------------------- */

static void prom_hist(Buf *b, const char *family, const char *labels, const double *bounds,
                      int nb, const double *counts, int64_t ts_ns)
{
	double cum = 0;
	for (int i = 0; i <= nb; i++) {
		cum += counts[i];
		if (i < nb)
			buf_printf(b, "%s_bucket{%s,le=\"%g\"} %.0f %lld\n", family, labels, bounds[i], cum,
			           (long long)(ts_ns / 1000000));
		else
			buf_printf(b, "%s_bucket{%s,le=\"+Inf\"} %.0f %lld\n", family, labels, cum,
			           (long long)(ts_ns / 1000000));
	}
	buf_printf(b, "%s_count{%s} %.0f %lld\n", family, labels, cum, (long long)(ts_ns / 1000000));
}

static void test_match_prometheus(void **state)
{
	(void)state;
	char path[128];
	Store *st = store_with_traces(path, sizeof path);
	static const double zero[] = {0, 0, 0, 0, 0, 0, 0, 0};
	static const double x_base[] = {0, 500, 1400, 95, 5, 0, 0, 0};
	static const double x_both[] = {0, 900, 2600, 395, 65, 40, 0, 0};
	/* older spanmetrics processor: "latency" in ms, service_name etc. */
	static const double MS[] = {2, 4, 6, 8, 10, 15, 20};
	static const double l_base[] = {0, 0, 0, 0, 300, 0, 0, 0};
	static const double l_both[] = {0, 0, 0, 0, 300, 300, 0, 0};
	Buf b;
	buf_init(&b);
	const char *x = "job=\"api\",http_route=\"/x\",http_request_method=\"GET\"";
	const char *l = "service_name=\"pricing\",span_name=\"Quote\",span_kind=\"SPAN_KIND_SERVER\"";
	int64_t ts[3] = {B0 - SEC, W0 - SEC, W1 - SEC};
	const double *xs[3] = {zero, x_base, x_both}, *ls[3] = {zero, l_base, l_both};
	for (int p = 0; p < 3; p++) {
		/* one scrape per point */
		b.len = 0;
		buf_adds(&b, "# TYPE http_server_request_duration_seconds histogram\n");
		prom_hist(&b, "http_server_request_duration_seconds", x, SBOUNDS, NSB, xs[p], ts[p]);
		buf_adds(&b, "# TYPE latency histogram\n");
		prom_hist(&b, "latency", l, MS, 7, ls[p], ts[p]);
		char sfx[24];
		snprintf(sfx, sizeof sfx, "%d.prom", p);
		import_text(st, path, sfx, buf_str(&b));
	}
	buf_fini(&b);
	Evidence *e = compute(st, NULL, NULL);
	/* the unit from the name's _seconds, the labels in their Prometheus
	 * spelling, the service from job */
	const EvValue *v = got(e, "ingress.p99_ms.metric");
	assert_int_equal(v->n, 2000);
	assert_true(v->lo == 75 && v->hi == 100);
	v = got(e, "ingress.p99_ms.metric@baseline");
	assert_true(v->lo == 25 && v->hi == 50);
	/* "latency" in ms by the spanmetrics convention */
	v = got(e, "dep.pricing.service.p90_ms.metric");
	assert_int_equal(v->n, 300);
	assert_true(v->lo == 10 && v->hi == 15);
	assert_non_null(strstr(v->provenance, "milliseconds assumed"));
	v = got(e, "dep.pricing.service.p90_ms.metric@baseline");
	assert_true(v->lo == 8 && v->hi == 10);
	evidence_free(e);
	store_close(st);
	rm_db(path);
}

/* ---- a pool's wait as the time in front of its dependency ------------------------- */

/* The case: a pool's wait histogram whose p99 went from about
 * 5.6 ms to about 79 ms over 7,000 calls a minute; the model puts the
 * pool in front of pricing. Its figures carry their interval, and the
 * rise of the time in front of pricing is read from it. */
static void test_pool_wait_in_front(void **state)
{
	(void)state;
	char path[128];
	Store *st = store_with_traces(path, sizeof path);
	static const double WB[] = {0.001, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25};
	static const double w_base[] = {5000, 1900, 70, 30, 0, 0, 0, 0, 0};
	static const double w_win[] = {3000, 2000, 1000, 500, 300, 100, 90, 10, 0};
	HSpec s[] = {{"api", "{\"key\":\"db.client.connection.pool.name\",\"value\":"
	                     "{\"stringValue\":\"pricing-grpc\"}}",
	              w_base, w_win}};
	Buf b;
	buf_init(&b);
	otlp_hist(&b, "db.client.connection.wait_time", "s", WB, 8, s, 1);
	import_text(st, path, "p.otlp.json", buf_str(&b));
	buf_fini(&b);
	static const char model[] =
	    "{\"endpoint\":\"GET /x\",\"root\":{\"service\":\"api\",\"operation\":\"GET /x\"},"
	    "\"nodes\":[{\"service\":\"pricing\",\"pool\":\"pricing-grpc\"}],"
	    "\"pools\":[{\"name\":\"pricing-grpc\",\"kind\":\"client\",\"node\":\"pricing\"}]}";
	char mp[200];
	snprintf(mp, sizeof mp, "%s.model.json", path);
	write_text(mp, model);
	Model *m = NULL;
	Err err = {0};
	if (model_load(mp, &m, &err))
		fail_msg("%s", err.msg);
	unlink(mp);
	Evidence *e = compute(st, m, NULL);
	const EvValue *v = got(e, "pool.pricing_grpc.wait.p99_ms");
	assert_int_equal(v->n, 7000);
	assert_true(v->has_ci && v->lo == 75 && v->hi == 100);
	assert_true(v->value > 75 && v->value < 100);
	v = got(e, "pool.pricing_grpc.wait.p99_ms@baseline");
	assert_true(v->lo == 5 && v->hi == 10);
	/* the time in front of pricing: no span carries a pool wait, so the
	 * pool's histogram is the source, and the rise holds on it */
	v = got(e, "dep.pricing.queue.p99_ms");
	assert_int_equal(v->source, EV_SRC_METRIC);
	assert_int_equal(v->n, 7000);
	assert_non_null(strstr(v->provenance, "pricing-grpc"));
	assert_int_equal(evidence_rose(e, "dep.pricing.queue.p99_ms", 10, 2), 1);
	assert_int_equal(evidence_rose(e, "pool.pricing_grpc.wait.p99_ms", 10, 2), 1);
	/* the p90 moved from (1, 5] to (10, 25] */
	v = got(e, "dep.pricing.queue.p90_ms");
	assert_true(v->lo == 10 && v->hi == 25);
	evidence_free(e);
	model_free(m);
	store_close(st);
	rm_db(path);
}

/* ---- exponential histograms whose scale fell -------------------------------------- */

/* A cumulative exponential histogram lists only its populated buckets and
 * lowers its scale as its range grows: the baseline's end point at scale
 * 1 (base sqrt 2), the window's at scale 0 (base 2). Counts are kept on
 * the bounds both share (powers of 2), never moved across a bound. */
static void test_exponential_merge(void **state)
{
	(void)state;
	char path[128];
	tmp_db_path(path, sizeof path);
	Store *st = NULL;
	Err err = {0};
	assert_int_equal(store_open(path, 0, &st, &err), 0);
	/* scale 1: bucket i holds (2^(i/2), 2^((i+1)/2)]; offset 6 starts at
	 * 8 ms: buckets (8, 11.3], (11.3, 16], (16, 22.6], (22.6, 32]. The
	 * window's end at scale 0, offset 3: (8, 16], (16, 32], (32, 64]. */
	char doc[4096];
	snprintf(doc, sizeof doc,
	         "{\"resourceMetrics\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\","
	         "\"value\":{\"stringValue\":\"api\"}}]},\"scopeMetrics\":[{\"metrics\":[{\"name\":"
	         "\"http.server.request.duration\",\"unit\":\"ms\",\"exponentialHistogram\":{"
	         "\"aggregationTemporality\":2,\"dataPoints\":["
	         "{\"timeUnixNano\":\"%lld\",\"count\":\"100\",\"scale\":1,\"zeroCount\":\"0\","
	         "\"positive\":{\"offset\":6,\"bucketCounts\":[\"10\",\"40\",\"40\",\"10\"]}},"
	         "{\"timeUnixNano\":\"%lld\",\"count\":\"300\",\"scale\":0,\"zeroCount\":\"0\","
	         "\"positive\":{\"offset\":3,\"bucketCounts\":[\"50\",\"150\",\"100\"]}}]}}]}]}]}",
	         (long long)(W0 - SEC), (long long)(W1 - SEC));
	import_text(st, path, "x.otlp.json", doc);
	EvHist h[1];
	memset(h, 0, sizeof h);
	TimeRange r = {W0, W1};
	assert_int_equal(ev_hist_collect(st, "http.server.request.duration", NULL, NULL, NULL, 1, &r,
	                                 1, h, &err),
	                 0);
	/* the increase: (8,16] 0, (16,32] 100, (32,64] 100 */
	assert_true(ev_hist_total(h) == 200);
	int found16 = 0, found32 = 0, found11 = 0;
	for (int i = 0; i < h->nb; i++) {
		if (fabs(h->le[i] - 16) < 1e-9) {
			found16 = 1;
			assert_true(h->cum[i] == 0);
		}
		if (fabs(h->le[i] - 32) < 1e-9) {
			found32 = 1;
			assert_true(h->cum[i] == 100);
		}
		if (fabs(h->le[i] - sqrt(2) * 8) < 1e-6)
			found11 = 1;
	}
	assert_true(found16 && found32);
	assert_false(found11); /* a bound the window's point does not have */
	double v, lo, hi;
	ev_hist_quantile(h, 0.5, &v, &lo, &hi);
	assert_true(lo >= 16 - 1e-9 && hi <= 64 + 1e-9 && v >= lo && v <= hi);
	ev_hist_fini(h);
	store_close(st);
	rm_db(path);
}


/* ---- sampling ---------------------------------------------------------------------- */

static void test_sampling_parse(void **state)
{
	(void)state;
	EvSampling s;
	char why[200];
	assert_int_equal(evidence_sampling_parse("6%", &s, why, sizeof why), 0);
	assert_true(s.kind == EV_SAMPLED_HEAD && fabs(s.ratio - 0.06) < 1e-12);
	assert_int_equal(evidence_sampling_parse("0.06", &s, why, sizeof why), 0);
	assert_true(s.kind == EV_SAMPLED_HEAD && fabs(s.ratio - 0.06) < 1e-12);
	assert_int_equal(evidence_sampling_parse("1/16", &s, why, sizeof why), 0);
	assert_true(s.kind == EV_SAMPLED_HEAD && s.ratio == 0.0625);
	assert_int_equal(evidence_sampling_parse("tail", &s, why, sizeof why), 0);
	assert_int_equal(s.kind, EV_SAMPLED_TAIL);
	assert_int_equal(evidence_sampling_parse("all", &s, why, sizeof why), 0);
	assert_int_equal(s.kind, EV_SAMPLED_ALL);
	assert_int_equal(evidence_sampling_parse("100%", &s, why, sizeof why), 0);
	assert_int_equal(s.kind, EV_SAMPLED_ALL);
	static const char *const bad[] = {"0", "150%", "abc", "1/0", "6%%", "-5%", "", "0.06x", NULL};
	for (int i = 0; bad[i]; i++) {
		why[0] = '\0';
		if (evidence_sampling_parse(bad[i], &s, why, sizeof why) == 0)
			fail_msg("'%s' accepted", bad[i]);
		assert_true(why[0] != '\0');
	}
}

/* The OpenTelemetry TraceState probability sampling: th is the rejection
 * threshold of 56 bits, its hex digits padded with zeros on the right. */
static void test_tracestate(void **state)
{
	(void)state;
	assert_true(evidence_tracestate_probability("ot=th:0") == 1);
	assert_true(evidence_tracestate_probability("ot=th:8") == 0.5);
	assert_true(evidence_tracestate_probability("ot=th:c") == 0.25);
	assert_true(evidence_tracestate_probability("ot=th:fd70a4") > 0.0099 &&
	            evidence_tracestate_probability("ot=th:fd70a4") < 0.0101); /* 1 % */
	/* among other members and sub-keys */
	assert_true(evidence_tracestate_probability("vendor=x:1,ot=rv:abcdef12345678;th:e") == 0.125);
	assert_true(evidence_tracestate_probability("congo=t61rcWkgMzE, ot=th:c") == 0.25);
	/* the older p-value: 2^-p */
	assert_true(evidence_tracestate_probability("ot=p:3;r:10") == 0.125);
	/* randomness alone says nothing, nor do bad or absent values */
	assert_true(evidence_tracestate_probability("ot=r:5") < 0);
	assert_true(evidence_tracestate_probability("ot=th:zz") < 0);
	assert_true(evidence_tracestate_probability("ot=th:123456789abcdef") < 0); /* 15 digits */
	assert_true(evidence_tracestate_probability("other=th:8") < 0);
	assert_true(evidence_tracestate_probability("") < 0);
	assert_true(evidence_tracestate_probability(NULL) < 0);
}

/* Root spans that carry their sampling: the ratio, the population's count
 * (each trace stands for 1/p requests), the rate scaled back, and the
 * sentence; Jaeger's sampler tags likewise. */
static void test_sampling_from_spans(void **state)
{
	(void)state;
	static const struct {
		const char *ts, *attrs;
		double ratio;
		const char *how;
	} C[] = {
		{"ot=th:c", NULL, 0.25, "tracestate ot"},
		{NULL,
		 "{\"key\":\"sampler.type\",\"value\":{\"stringValue\":\"probabilistic\"}},"
		 "{\"key\":\"sampler.param\",\"value\":{\"doubleValue\":0.1}}",
		 0.1, "Jaeger sampler"},
	};
	for (size_t c = 0; c < sizeof C / sizeof C[0]; c++) {
		g_tracestate = C[c].ts;
		g_root_attrs = C[c].attrs;
		char path[128];
		Store *st = store_with_traces(path, sizeof path);
		g_tracestate = g_root_attrs = NULL;
		Evidence *e = compute(st, NULL, NULL);
		assert_int_equal(e->sampling.kind, EV_SAMPLED_HEAD);
		assert_true(fabs(val(e, "sampling.ratio") - C[c].ratio) < 1e-9);
		assert_true(fabs(val(e, "sampling.ratio@baseline") - C[c].ratio) < 1e-9);
		assert_true(fabs(val(e, "ingress.requests_est") - 40 / C[c].ratio) < 1e-6);
		assert_true(val(e, "ingress.requests") == 40); /* the sample's size */
		/* 40 traces over the 2 s they span, scaled back */
		const EvValue *r = got(e, "ingress.rate_rps");
		assert_non_null(strstr(r->provenance, "sampling probability"));
		assert_true(val(e, "sampling.tail") == 0);
		char note[600], src[96];
		assert_true(evidence_sampling_note(e, note, sizeof note));
		if (!strstr(note, "head sample") || !strstr(note, C[c].how) ||
		    !strstr(note, "unbiased"))
			fail_msg("note: %s", note);
		evidence_source_text(e, got(e, "ingress.p99_ms"), src, sizeof src);
		assert_string_equal(src, "spans, 40 sampled requests");
		/* and a 'cannot tell' says the count is a sample's */
		char why[300];
		assert_int_equal(evidence_test(e, "rose", "ingress.p99_ms", 0, 1.05, why, sizeof why), -1);
		assert_string_equal(why, "the baseline's 40 sampled requests give the p99 no upper bound");
		evidence_free(e);
		store_close(st);
		rm_db(path);
	}
}

/* A tail sample is not a population: with --sampled tail no percentile and
 * no attribution is taken from the traces (a metric gives the endpoint's);
 * without it, traces that are all slower than the metric's p90 are
 * recognised as one. */
static void test_tail_sample(void **state)
{
	(void)state;
	char path[128];
	Store *st = store_with_traces(path, sizeof path);
	/* the endpoint's server requests, 2000 a minute, nearly all at 5-10 ms:
	 * the 40 traces (24 and 34 ms) are all from its slowest tenth */
	static const double fast[] = {0, 1900, 60, 40, 0, 0, 0, 0};
	HSpec server[] = {{"api", "{\"key\":\"http.route\",\"value\":{\"stringValue\":\"/x\"}}",
	                   fast, fast}};
	Buf b;
	buf_init(&b);
	otlp_hist(&b, "http.server.request.duration", "s", SBOUNDS, NSB, server, 1);
	import_text(st, path, "t.otlp.json", buf_str(&b));
	buf_fini(&b);
	for (int given = 0; given < 2; given++) {
		EvSampling tail = {.kind = EV_SAMPLED_TAIL};
		Evidence *e = compute(st, NULL, given ? &tail : NULL);
		assert_int_equal(e->sampling.kind, EV_SAMPLED_TAIL);
		assert_true(val(e, "sampling.tail") == 1);
		if (!given)
			assert_non_null(strstr(e->sampling_how, "slower than the metric's p90"));
		/* the endpoint's percentiles from the metric only */
		const EvValue *v = got(e, "ingress.p90_ms");
		assert_int_equal(v->source, EV_SRC_METRIC);
		assert_int_equal(v->n, 2000);
		/* a dependency's percentile from the traces: withheld, kept aside */
		v = evidence_get(e, "dep.pricing.service.p90_ms");
		assert_non_null(v);
		assert_true(v->missing);
		assert_non_null(strstr(v->provenance, "tail sample"));
		v = got(e, "dep.pricing.service.p90_ms.spans");
		assert_int_equal(v->n, 40);
		/* an attribution replays the window's percentile: withheld too */
		v = evidence_get(e, "dep.pricing.explained");
		assert_true(v == NULL || v->missing);
		char note[600];
		assert_true(evidence_sampling_note(e, note, sizeof note));
		assert_non_null(strstr(note, "over-represented"));
		evidence_free(e);
	}
	store_close(st);
	rm_db(path);
}

/* A figure names where it comes from, with its count. */
static void test_source_text(void **state)
{
	(void)state;
	Evidence *e = evidence_new();
	EvValue *v = ev_put(e, "dep.pricing.queue.p99_ms", 78.8, "ms", EV_SRC_METRIC, EV_Q_HISTOGRAM,
	                    7147, 0, "metric x");
	ev_ci(v, 75, 100);
	char src[96];
	evidence_source_text(e, evidence_get(e, "dep.pricing.queue.p99_ms"), src, sizeof src);
	assert_string_equal(src, "metric, 7,147 calls");
	v = ev_put(e, "ingress.p99_ms", 300, "ms", EV_SRC_SPANS, EV_Q_EXACT, 437, 0, "spans x");
	evidence_source_text(e, v, src, sizeof src);
	assert_string_equal(src, "spans, 437 requests");
	e->sampling.kind = EV_SAMPLED_HEAD;
	evidence_source_text(e, v, src, sizeof src);
	assert_string_equal(src, "spans, 437 sampled requests");
	v = ev_put(e, "dep.a.wait_rise_alone", 1, "flag", EV_SRC_SPANS, EV_Q_NONE, 3, 0, "spans y");
	evidence_source_text(e, v, src, sizeof src);
	assert_string_equal(src, "spans");
	evidence_supply(e, "dep.a.client_wait.p99_ms", 71, "ms", EV_SRC_SHEET, "sheet s");
	evidence_source_text(e, evidence_get(e, "dep.a.client_wait.p99_ms"), src, sizeof src);
	assert_string_equal(src, "sheet");
	evidence_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_histogram_interval),
		cmocka_unit_test(test_match_sdk_names),
		cmocka_unit_test(test_match_spanmetrics),
		cmocka_unit_test(test_match_prometheus),
		cmocka_unit_test(test_pool_wait_in_front),
		cmocka_unit_test(test_exponential_merge),
		cmocka_unit_test(test_sampling_parse),
		cmocka_unit_test(test_tracestate),
		cmocka_unit_test(test_sampling_from_spans),
		cmocka_unit_test(test_tail_sample),
		cmocka_unit_test(test_source_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
