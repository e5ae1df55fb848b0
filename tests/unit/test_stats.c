/*
 * test_stats.c - the statistics under the diagnosis: order-statistic
 * intervals of quantiles, Wilson intervals, MOVER comparisons and the
 * three-valued tests built on them, and counterfactual attribution on
 * hand-built request programs whose answer is known.
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
#include "evidence.h"
#include "evidence_priv.h"
#include "quantile.h"

static uint64_t rng_state = 12345;

static double uniform(void)
{
	rng_state = rng_state * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
	return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* The interval covers the true quantile at least about as often as it
 * promises, for a p90 and a p99, on a distribution it knows nothing of. */
static void test_quantile_interval_coverage(void **state)
{
	(void)state;
	static const struct {
		int64_t n;
		double p;
	} cases[] = {{200, 90}, {3000, 99}};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		int64_t n = cases[c].n;
		double truth = -log(1 - cases[c].p / 100); /* exponential(1) quantile */
		double *v = malloc((size_t)n * sizeof *v);
		int covered = 0, runs = 400;
		for (int r = 0; r < runs; r++) {
			for (int64_t i = 0; i < n; i++)
				v[i] = -log(1 - uniform());
			quant_sort(v, n);
			double lo, hi;
			quant_ci(v, n, cases[c].p, &lo, &hi);
			covered += lo <= truth && truth <= hi;
		}
		free(v);
		/* 95 % promised; 400 runs put 91 % about four standard errors below */
		assert_true(covered >= (int)(0.91 * runs));
	}
}

/* Too few observations: no upper bound for a p99 of 50 values. */
static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* quant_sort (a radix sort) orders like a comparison sort: sizes on both
 * sides of its insertion-sort cut, negatives, zeros, infinities, ties,
 * and values of one magnitude (where it skips passes). */
static void test_quant_sort_orders(void **state)
{
	(void)state;
	static const int64_t sizes[] = {0, 1, 2, 63, 64, 65, 1000, 100000};
	srand(7);
	for (unsigned c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
		for (int kind = 0; kind < 3; kind++) {
			int64_t n = sizes[c];
			double *v = malloc((size_t)(n ? n : 1) * sizeof *v);
			double *w = malloc((size_t)(n ? n : 1) * sizeof *w);
			for (int64_t i = 0; i < n; i++) {
				double r = (double)rand() / RAND_MAX;
				if (kind == 0)
					v[i] = (r - 0.5) * 1e6; /* both signs */
				else if (kind == 1)
					v[i] = 100 + r; /* one magnitude */
				else
					v[i] = (double)(rand() % 5) - 2; /* ties, zeros */
				if (kind == 0 && i % 97 == 3)
					v[i] = i % 2 ? INFINITY : -INFINITY;
			}
			memcpy(w, v, (size_t)n * sizeof *v);
			quant_sort(v, n);
			qsort(w, (size_t)n, sizeof *w, cmp_dbl);
			for (int64_t i = 0; i < n; i++)
				if (v[i] != w[i])
					fail_msg("n=%lld kind %d: [%lld] %g against %g", (long long)n, kind,
					         (long long)i, v[i], w[i]);
			free(v);
			free(w);
		}
	}
}

static void test_quantile_interval_too_few(void **state)
{
	(void)state;
	int64_t l, u;
	quant_ci_ranks(50, 99, &l, &u);
	assert_true(u > 50);
	quant_ci_ranks(3000, 99, &l, &u);
	assert_true(l >= 2950 && l < 2970);
	assert_true(u > 2970 && u <= 2990);
}

/* A percentile read off the top of a range (a pulled slowest set with the
 * count of its range): exactly what all the observations give while its
 * ranks lie in the top; "not covered" below it; "not counted" when the
 * count is not exact; a stratified estimate with a sample of the rest. */
static void test_quant_top(void **state)
{
	(void)state;
	enum { N = 1000, K = 20 };
	double *all = malloc(N * sizeof *all), top[K];
	for (int i = 0; i < N; i++)
		all[i] = 10 + 0.5 * i + (i % 7) * 0.01; /* ascending, no ties */
	for (int i = 0; i < K; i++)
		top[i] = all[N - 1 - i];
	double v, lo, hi, ev, elo, ehi;
	/* the p99 of 1,000 is the 11th slowest, its interval the 18th to the
	 * 4th: all inside the 20 */
	assert_int_equal(quant_top(top, K, NULL, 0, N, 99, &v, &lo, &hi), QUANT_TOP_EXACT);
	ev = quant_rank(all, N, 99);
	quant_ci(all, N, 99, &elo, &ehi);
	assert_true(v == ev && lo == elo && hi == ehi);
	assert_true(v == all[N - 11] && lo == all[N - 18] && hi == all[N - 4]);
	/* 300 observations: the p99 is the 4th slowest, no upper bound (as on
	 * all 300) */
	assert_int_equal(quant_top(top, K, NULL, 0, 300, 99, &v, &lo, &hi), QUANT_TOP_EXACT);
	assert_true(v == top[3] && lo == top[7] && isinf(hi) && hi > 0);
	/* the p90 of 1,000 is the 101st slowest: not covered by 20 */
	assert_int_equal(quant_top(top, K, NULL, 0, N, 90, &v, &lo, &hi), QUANT_TOP_BELOW);
	assert_true(isnan(v) && isnan(lo) && isnan(hi));
	/* a p99 of 3,000 needs the 41st slowest for its interval */
	assert_int_equal(quant_top(top, K, NULL, 0, 3000, 99, &v, &lo, &hi), QUANT_TOP_BELOW);
	/* the count is not exact: a capped listing (-1), or fewer than the top */
	assert_int_equal(quant_top(top, K, NULL, 0, -1, 99, &v, &lo, &hi), QUANT_TOP_UNCOUNTED);
	assert_int_equal(quant_top(top, K, NULL, 0, 10, 99, &v, &lo, &hi), QUANT_TOP_UNCOUNTED);
	assert_true(isnan(v));
	/* with a uniform sample of the other 980 (every 10th), the p90 is a
	 * stratified estimate near the true one */
	double rest[98];
	for (int i = 0; i < 98; i++)
		rest[i] = all[N - K - 1 - 10 * i];
	assert_int_equal(quant_top(top, K, rest, 98, N, 90, &v, &lo, &hi), QUANT_TOP_WEIGHTED);
	ev = quant_rank(all, N, 90);
	assert_true(fabs(v - ev) <= 5 * 0.5 + 0.1 && lo < v && v < hi);
	/* the p99 stays exact with the sample beside it: every sampled value
	 * is under the top */
	assert_int_equal(quant_top(top, K, rest, 98, N, 99, &v, &lo, &hi), QUANT_TOP_EXACT);
	assert_true(v == all[N - 11]);
	/* a sampled value above the top's last (the back end ranked by another
	 * length): no longer exact */
	rest[0] = all[N - 5] + 0.001;
	assert_int_equal(quant_top(top, K, rest, 98, N, 99, &v, &lo, &hi), QUANT_TOP_WEIGHTED);
	free(all);
}

/* The rise read off both tops: the point is the full data's, the bootstrap
 * interval holds it and excludes 0 for a clear shift; a top too short for
 * the percentile, with nothing below it, cannot say. */
static void test_top_rise(void **state)
{
	(void)state;
	enum { N = 1000, K = 40 };
	double tw[K], tb[K], out[6];
	for (int i = 0; i < K; i++) {
		tb[i] = 300 - 3.0 * i;
		tw[i] = tb[i] + 60;
	}
	/* the p99 of 1,000 is the 11th slowest; a resample of 1,000 reaches it
	 * within the 40 slowest */
	assert_int_equal(ev_top_rise(tw, K, NULL, 0, N, tb, K, NULL, 0, N, 99, out), 1);
	assert_true(fabs(out[0] - 60) < 1e-9);
	assert_true(out[1] > 0 && out[1] <= 60 && out[2] >= 60);
	assert_true(out[3] > 1 && out[4] > 1 && out[4] <= out[3] && out[5] >= out[3]);
	/* the p90 of 1,000 is below 40 slowest, and no sample of the rest */
	assert_int_equal(ev_top_rise(tw, K, NULL, 0, N, tb, K, NULL, 0, N, 90, out), 0);
	assert_true(isnan(out[0]));
	/* with a sample of the rest, the p90's rise is estimated */
	double rw[96], rb[96];
	for (int i = 0; i < 96; i++) {
		rb[i] = tb[K - 1] - 1 - 2.0 * i;
		rw[i] = rb[i] + 60;
	}
	assert_int_equal(ev_top_rise(tw, K, rw, 96, N, tb, K, rb, 96, N, 90, out), 1);
	assert_true(fabs(out[0] - 60) < 1e-9 && out[1] > 0);
	/* the p90's own interval, by the stratified bootstrap: it holds the
	 * estimate and has width (the sample below the top varies) */
	double v, lo, hi, blo, bhi;
	assert_int_equal(quant_top(tb, K, rb, 96, N, 90, &v, &lo, &hi), QUANT_TOP_WEIGHTED);
	assert_int_equal(ev_top_interval(tb, K, rb, 96, N, 90, &blo, &bhi), 1);
	assert_true(blo <= v && v <= bhi && blo < bhi);
	/* no sample below a top too short for the percentile: cannot say */
	assert_int_equal(ev_top_interval(tb, K, NULL, 0, N, 90, &blo, &bhi), 0);
}

static void test_wilson(void **state)
{
	(void)state;
	double lo, hi;
	evidence_wilson(5, 10, &lo, &hi);
	assert_true(fabs(lo - 0.2366) < 1e-3 && fabs(hi - 0.7634) < 1e-3);
	evidence_wilson(0, 10, &lo, &hi);
	assert_true(lo == 0 && fabs(hi - 0.2775) < 1e-3);
}

static void put_prop(Evidence *e, const char *name, double k, int64_t n)
{
	ev_put_prop(e, name, k, n, "requests", strstr(name, "@baseline") ? POP_BASELINE : POP_WINDOW);
}

/* "Doubled" from 1 of 100 to 2 of 100 is noise; from 100 of 3000 to 250
 * of 3000 it is not; a rise below the asked size does not hold. */
static void test_rose_on_proportions(void **state)
{
	(void)state;
	Evidence *e = evidence_new();
	put_prop(e, "late", 2, 100);
	put_prop(e, "late@baseline", 1, 100);
	put_prop(e, "big", 250, 3000);
	put_prop(e, "big@baseline", 100, 3000);
	assert_int_equal(evidence_rose(e, "late", 0.01, 2), -1);
	assert_int_equal(evidence_rose(e, "big", 0.01, 2), 1);
	assert_int_equal(evidence_rose(e, "big", 0.10, 2), 0);
	assert_int_equal(evidence_fell(e, "big", 0.01, 0), 0);
	assert_int_equal(evidence_rose(e, "absent", 0, 0), -1);
	/* a value without an interval (a sheet's) counts as exact */
	evidence_supply(e, "wait", 71, "ms", EV_SRC_SHEET, "sheet");
	evidence_supply(e, "wait@baseline", 18, "ms", EV_SRC_SHEET, "sheet");
	assert_int_equal(evidence_rose(e, "wait", 10, 2), 1);
	evidence_supply(e, "svc", 22, "ms", EV_SRC_SHEET, "sheet");
	evidence_supply(e, "svc@baseline", 20, "ms", EV_SRC_SHEET, "sheet");
	assert_int_equal(evidence_steady(e, "svc", 0.3), 1);
	assert_int_equal(evidence_steady(e, "wait", 0.3), 0);
	EvChange c;
	assert_int_equal(evidence_change(e, "big", &c), 1);
	assert_true(c.d_lo > 0 && c.d_lo < c.d && c.d < c.d_hi);
	assert_true(c.r_lo > 1 && c.r_lo < c.r && c.r < c.r_hi);
	evidence_free(e);
}

/* "Did not rise" is an equivalence test: it holds only when the interval
 * leaves no room for a rise of the asked size, is 0 exactly when rose()
 * holds with the same bar, and cannot tell otherwise: never "rose() did
 * not hold". */
static void test_flat(void **state)
{
	(void)state;
	Evidence *e = evidence_new();
	put_prop(e, "late", 2, 100);
	put_prop(e, "late@baseline", 1, 100);
	put_prop(e, "big", 250, 3000);
	put_prop(e, "big@baseline", 100, 3000);
	put_prop(e, "same", 100, 3000);
	put_prop(e, "same@baseline", 100, 3000);
	/* a rise that holds is not flat */
	assert_int_equal(evidence_flat(e, "big", 0.01, 2), 0);
	/* 1 of 100 against 2 of 100: neither a rise nor its absence is shown */
	assert_int_equal(evidence_rose(e, "late", 0.01, 2), -1);
	assert_int_equal(evidence_flat(e, "late", 0.01, 2), -1);
	/* the same share on 3,000 requests each: a rise of 2 points is excluded */
	assert_int_equal(evidence_flat(e, "same", 0.02, 0), 1);
	/* ... but not a rise of a tenth of a point */
	assert_int_equal(evidence_flat(e, "same", 0.001, 0), -1);
	/* a rise smaller than asked is not a rise, and flat still needs its
	 * interval: 'big' rose by 5 points, so a bar of 10 points is excluded
	 * only if the upper bound is under it */
	assert_int_equal(evidence_rose(e, "big", 0.10, 2), 0);
	assert_int_equal(evidence_flat(e, "big", 0.10, 0), 1);
	assert_int_equal(evidence_flat(e, "absent", 0, 0), -1);
	/* a quantile whose baseline has no upper bound (a p99 of 250 calls):
	 * a fall cannot be excluded, so the rise's absence is never shown */
	EvValue *w = ev_put(e, "dep.q.client.p99_ms", 282, "ms", EV_SRC_SPANS, EV_Q_EXACT, 250, 0, "w");
	ev_ci(w, 120, INFINITY);
	EvValue *b = ev_put(e, "dep.q.client.p99_ms@baseline", 31.9, "ms", EV_SRC_SPANS, EV_Q_EXACT,
	                    250, 0, "b");
	ev_ci(b, 25, INFINITY);
	assert_int_equal(evidence_rose(e, "dep.q.client.p99_ms", 10, 1.3), -1);
	assert_int_equal(evidence_flat(e, "dep.q.client.p99_ms", 10, 1.3), -1);
	evidence_free(e);
}

/* Every "cannot tell" comes with its reason, in one clause: the bound
 * that missed the bar, the sample that leaves a percentile unbounded, the
 * missing value. Decided answers carry none. */
static void test_cannot_tell_says_why(void **state)
{
	(void)state;
	Evidence *e = evidence_new();
	char why[320];
	EvValue *x = ev_put(e, "dep.p.front.explained", 0.56, "ratio", EV_SRC_SPANS, EV_Q_NONE, 400,
	                    0, "spans: share");
	ev_ci(x, 0.28, 0.79);
	assert_int_equal(evidence_test(e, "above", "dep.p.front.explained", 0.33, NAN, why,
	                               sizeof why), -1);
	assert_string_equal(why, "the 95 % interval's lower bound 28.0 % is under 33.0 %");
	assert_int_equal(evidence_test(e, "below", "dep.p.front.explained", 0.1, NAN, why,
	                               sizeof why), 0);
	assert_string_equal(why, "");
	assert_int_equal(evidence_test(e, "below", "dep.p.front.explained", 0.6, NAN, why,
	                               sizeof why), -1);
	assert_string_equal(why, "the 95 % interval's upper bound 79.0 % is over 60.0 %");
	/* a p99 of 250 calls has no upper bound */
	EvValue *w = ev_put(e, "dep.q.client.p99_ms", 282, "ms", EV_SRC_SPANS, EV_Q_EXACT, 250, 0, "w");
	ev_ci(w, 120, INFINITY);
	EvValue *b = ev_put(e, "dep.q.client.p99_ms@baseline", 31.9, "ms", EV_SRC_SPANS, EV_Q_EXACT,
	                    250, 0, "b");
	ev_ci(b, 25, INFINITY);
	assert_int_equal(evidence_test(e, "rose", "dep.q.client.p99_ms", 10, 1.3, why, sizeof why),
	                 -1);
	assert_string_equal(why, "the baseline's 250 calls give the p99 no upper bound");
	/* x8.8, but the baseline's bound says nothing: not "not steady" either */
	assert_int_equal(evidence_test(e, "steady", "dep.q.client.p99_ms", 0.3, NAN, why,
	                               sizeof why), -1);
	assert_string_equal(why, "the baseline's 250 calls give the p99 no upper bound");
	double v;
	assert_int_equal(evidence_bound(e, "dep.q.client.p99_ms", 1, &v, why, sizeof why), 0);
	assert_string_equal(why, "the window's 250 calls give the p99 no upper bound");
	assert_int_equal(evidence_bound(e, "dep.q.client.p99_ms", 0, &v, why, sizeof why), 1);
	assert_true(v == 120);
	/* a change whose interval reaches 0 says so, with the interval */
	put_prop(e, "late", 2, 100);
	put_prop(e, "late@baseline", 1, 100);
	assert_int_equal(evidence_test(e, "rose", "late", 0.01, 2, why, sizeof why), -1);
	assert_non_null(strstr(why, "the rise's interval reaches 0 (the change +1.0 %, 95 % interval -"));
	assert_int_equal(evidence_test(e, "flat", "late", 0.01, 2, why, sizeof why), -1);
	assert_non_null(strstr(why, "a rise of 1.0 % and x2 is inside the interval"));
	/* a missing value: which, and why it is missing */
	ev_missing(e, "dep.p.explained", "ratio", "spans: the p99 did not rise significantly");
	assert_int_equal(evidence_test(e, "above", "dep.p.explained", 0.33, NAN, why, sizeof why),
	                 -1);
	assert_string_equal(why, "dep.p.explained is missing: the p99 did not rise significantly");
	assert_int_equal(evidence_test(e, "rose", "absent", 0, 0, why, sizeof why), -1);
	assert_string_equal(why, "absent is not known");
	evidence_free(e);
}

/* ---- attribution on hand-built programs ----------------------------------- */

/* Requests: root -> client A (server inside it) then client B (server
 * inside), serial. A's client-side wait is wait_a ms on the slow share of
 * requests, B always takes 20 ms. */
static double set_queue_ms = NAN; /* each request's queue before the root, or NAN */
static double set_tail_share = 0;  /* share of requests whose beta takes set_tail_ms more, */
static double set_tail_ms = 0;     /* times 1 to 2: a slow route, the same in both ranges */

static EvRequestSet *make_set(int64_t n, double wait_a, double slow_share, double svc_a)
{
	EvRequestSet *s = xcalloc(1, sizeof *s);
	s->deps = xcalloc(2, sizeof *s->deps);
	s->deps[0] = xstrdup("alpha");
	s->deps[1] = xstrdup("beta");
	s->n_deps = 2;
	s->classes = xcalloc(1, sizeof *s->classes);
	s->classes[0] = xstrdup("std");
	s->n_classes = 1;
	s->r = xcalloc((size_t)n, sizeof *s->r);
	s->calls = xcalloc((size_t)n * 2, sizeof *s->calls);
	s->ops = xcalloc((size_t)n * 5, sizeof *s->ops);
	for (int64_t i = 0; i < n; i++) {
		double jitter = 5 * uniform();
		double wa = (uniform() < slow_share ? wait_a : 2) + jitter;
		double sa = svc_a + 3 * uniform();
		double tail = uniform() < set_tail_share ? set_tail_ms * (1 + uniform()) : 0;
		double ta = wa + sa, tb = 20 + tail;
		EvRequest *r = &s->r[i];
		r->cls = 0;
		r->host = -1;
		r->queue_ms = (float)set_queue_ms;
		r->ingress_ms = (float)(1 + ta + 1 + tb + 1 + (isnan(set_queue_ms) ? 0 : set_queue_ms));
		r->op_off = i * 5;
		r->n_ops = 5;
		EvCall *ca = &s->calls[i * 2], *cb = &s->calls[i * 2 + 1];
		*ca = (EvCall){.req = (int32_t)i, .dep = 0, .total_ms = (float)ta, .wait_ms = (float)wa,
		               .service_ms = (float)sa, .queue_ms = NAN, .serial = 1};
		*cb = (EvCall){.req = (int32_t)i, .dep = 1, .total_ms = (float)tb, .wait_ms = 2,
		               .service_ms = (float)(18 + tail), .queue_ms = NAN, .serial = 1};
		EvOp *o = &s->ops[i * 5];
		/* 0 root, 1 client A, 2 server A, 3 client B, 4 server B */
		o[0] = (EvOp){.first_child = 1, .next_sibling = -1, .pred = -1, .call = -1,
		              .role = EV_OP_ROOT, .dur_ms = r->ingress_ms, .tail_ms = 1};
		o[1] = (EvOp){.first_child = 2, .next_sibling = 3, .pred = -1, .call = (int32_t)(i * 2),
		              .role = EV_OP_CLIENT, .gap_ms = 1, .dur_ms = (float)ta, .tail_ms = 0};
		o[2] = (EvOp){.first_child = -1, .next_sibling = -1, .pred = -1, .call = (int32_t)(i * 2),
		              .role = EV_OP_SERVER, .gap_ms = (float)wa, .dur_ms = (float)sa};
		o[3] = (EvOp){.first_child = 4, .next_sibling = -1, .pred = 1,
		              .call = (int32_t)(i * 2 + 1), .role = EV_OP_CLIENT, .gap_ms = 1,
		              .dur_ms = (float)tb, .tail_ms = 1};
		o[4] = (EvOp){.first_child = -1, .next_sibling = -1, .pred = -1,
		              .call = (int32_t)(i * 2 + 1), .role = EV_OP_SERVER, .gap_ms = 1,
		              .dur_ms = (float)(18 + tail)};
	}
	s->n = n;
	s->n_calls = n * 2;
	s->n_ops = n * 5;
	return s;
}

static double value(const Evidence *e, const char *name)
{
	double v;
	if (!evidence_value(e, name, &v))
		fail_msg("%s is missing (%s)", name,
		         evidence_get(e, name) ? evidence_get(e, name)->provenance : "absent");
	return v;
}

/* The rise is in alpha's client-side wait: replaying alpha's time in front
 * of it from the baseline takes the rise away, alpha's server time and
 * beta explain none of it. */
static void test_attribution_finds_the_wait(void **state)
{
	(void)state;
	rng_state = 7;
	EvRequestSet *w = make_set(3000, 120, 0.05, 10);
	EvRequestSet *b = make_set(3000, 120, 0.0, 10);
	Evidence *e = evidence_new();
	ev_attribution(e, w, b, 99);
	double front = value(e, "dep.alpha.front.explained");
	double svc = value(e, "dep.alpha.service.explained");
	double beta = value(e, "dep.beta.explained");
	assert_true(front > 0.8 && front < 1.2);
	assert_true(fabs(svc) < 0.1);
	assert_true(fabs(beta) < 0.1);
	const EvValue *fv = evidence_get(e, "dep.alpha.front.explained");
	assert_true(fv->has_ci && fv->lo > 0.5);
	assert_string_equal(evidence_fact(e, "explained.top"), "alpha");
	/* beta is a serial hop in both windows, 20 ms each time: taking it off
	 * the path saves as much in the baseline as in the window, so it
	 * explains none of the rise (alpha's serial time, which rose, all) */
	double beta_serial = value(e, "dep.beta.serial.explained");
	if (!(fabs(beta_serial) < 0.1))
		fail_msg("dep.beta.serial.explained %.3f: an unchanged hop explains the rise", beta_serial);
	assert_true(value(e, "dep.alpha.serial.explained") > 0.8);
	evidence_free(e);
	evidence_requests_free(w);
	evidence_requests_free(b);
}

/* The same, with a queue before the endpoint in every request: the
 * endpoint's queue is then the last locus replayed. The baseline replay of
 * a structural locus must still take that locus's calls out (it once took
 * the last locus's way of replaying, which left the baseline unchanged and
 * made the unchanged hop explain most of the rise). */
static void test_attribution_structural_not_last(void **state)
{
	(void)state;
	rng_state = 7;
	set_queue_ms = 0.5;
	EvRequestSet *w = make_set(3000, 120, 0.05, 10);
	EvRequestSet *b = make_set(3000, 120, 0.0, 10);
	set_queue_ms = NAN;
	Evidence *e = evidence_new();
	ev_attribution(e, w, b, 99);
	assert_true(fabs(value(e, "endpoint.queue.explained")) < 0.1);
	double beta_serial = value(e, "dep.beta.serial.explained");
	if (!(fabs(beta_serial) < 0.1))
		fail_msg("dep.beta.serial.explained %.3f: an unchanged hop explains the rise", beta_serial);
	assert_true(value(e, "dep.alpha.serial.explained") > 0.8);
	assert_true(value(e, "dep.alpha.front.explained") > 0.8);
	evidence_free(e);
	evidence_requests_free(w);
	evidence_requests_free(b);
}

/* Two samples of the same world: the rise is not significant and nothing
 * is attributed. */
static void test_attribution_quiet(void **state)
{
	(void)state;
	rng_state = 11;
	EvRequestSet *w = make_set(3000, 120, 0.01, 10);
	EvRequestSet *b = make_set(3000, 120, 0.01, 10);
	Evidence *e = evidence_new();
	ev_attribution(e, w, b, 99);
	const EvValue *v = evidence_get(e, "dep.alpha.front.explained");
	assert_non_null(v);
	assert_true(v->missing);
	assert_non_null(strstr(v->provenance, "did not rise significantly"));
	/* nor did the p90: it is named, and no percentile is attributed */
	assert_non_null(strstr(v->provenance, "nor did the p90"));
	const EvValue *ap = evidence_get(e, "attribution.percentile");
	assert_non_null(ap);
	assert_true(ap->missing);
	assert_non_null(strstr(ap->provenance, "nothing is attributed"));
	evidence_free(e);
	evidence_requests_free(w);
	evidence_requests_free(b);
}

/* A few hundred requests, a slow route (3 % of the requests, 400 to 800 ms
 * more at beta, in both ranges) that holds the p99, and alpha's wait up by
 * about 58 ms on every request: the p99's rise cannot be told from noise,
 * the p90's can. The shares are then of the p90's rise, and say so: alpha's
 * time in front of it explains it, beta none of it. */
static void test_attribution_p90_when_p99_cannot_tell(void **state)
{
	(void)state;
	rng_state = 5;
	set_tail_share = 0.03;
	set_tail_ms = 400;
	EvRequestSet *w = make_set(600, 60, 1.0, 10);
	EvRequestSet *b = make_set(300, 60, 0.0, 10);
	set_tail_share = 0;
	Evidence *e = evidence_new();
	ev_attribution(e, w, b, 99);
	const EvValue *r99 = evidence_get(e, "ingress.rise_ms");
	assert_non_null(r99);
	if (!(r99->has_ci && r99->lo <= 0))
		fail_msg("the p99's rise %.1f [%.1f, %.1f] was meant to be within noise", r99->value,
		         r99->lo, r99->hi);
	assert_true(value(e, "attribution.percentile") == 90);
	const EvValue *ar = evidence_get(e, "attribution.rise_ms");
	assert_true(ar->has_ci && ar->lo > 0);
	double front = value(e, "dep.alpha.front.explained");
	if (!(front > 0.8 && front < 1.2))
		fail_msg("dep.alpha.front.explained %.3f, not about 1", front);
	assert_true(fabs(value(e, "dep.beta.explained")) < 0.1);
	const EvValue *fv = evidence_get(e, "dep.alpha.front.explained");
	assert_non_null(strstr(fv->provenance, "share of the p90 rise"));
	assert_non_null(strstr(fv->provenance, "the p99 did not rise significantly"));
	evidence_free(e);
	evidence_requests_free(w);
	evidence_requests_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quantile_interval_coverage),
		cmocka_unit_test(test_quantile_interval_too_few),
		cmocka_unit_test(test_quant_sort_orders),
		cmocka_unit_test(test_quant_top),
		cmocka_unit_test(test_top_rise),
		cmocka_unit_test(test_wilson),
		cmocka_unit_test(test_rose_on_proportions),
		cmocka_unit_test(test_flat),
		cmocka_unit_test(test_cannot_tell_says_why),
		cmocka_unit_test(test_attribution_finds_the_wait),
		cmocka_unit_test(test_attribution_structural_not_last),
		cmocka_unit_test(test_attribution_quiet),
		cmocka_unit_test(test_attribution_p90_when_p99_cannot_tell),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
