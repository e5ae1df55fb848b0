/*
 * test_sketch.c - the log-spaced histogram keeps its stated relative error
 * against exact nearest-rank quantiles on distributions it was not tuned
 * for (heavy tails, two modes, constants, sub-microsecond values, zeros),
 * merging equals sketching the union, and its encoding round-trips and
 * refuses damaged bytes without changing the sketch.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quantile.h"
#include "sketch.h"

static uint64_t rng = 88172645463325252ULL;

static double unif(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}

static double normal(void)
{
	return sqrt(-2 * log(unif())) * cos(2 * M_PI * unif());
}

enum { N = 20000 };

static double draw(int dist, int i)
{
	switch (dist) {
	case 0: return exp(3 + 0.8 * normal());                 /* log-normal, ms */
	case 1: return -40 * log(unif());                         /* exponential */
	case 2: return unif() < 0.97 ? 5 + unif() : 300 + 50 * unif(); /* two modes */
	case 3: return 42.0;                                      /* constant */
	case 4: return 1e-6 * (1 + (i % 1000));                   /* 1 ns .. 1 us */
	case 5: return (i % 10 == 0) ? 0.0 : 0.25 * (i % 7 + 1);  /* zeros and steps */
	default: return 1 / pow(unif(), 1.5);                     /* Pareto, heavy tail */
	}
}

static void test_relative_error(void **state)
{
	(void)state;
	static const double ps[] = {0.1, 1, 10, 25, 50, 75, 90, 95, 99, 99.9, 100};
	double *v = malloc(N * sizeof *v);
	for (int dist = 0; dist < 7; dist++) {
		Sketch s;
		sketch_init(&s);
		for (int i = 0; i < N; i++) {
			v[i] = draw(dist, i);
			sketch_add(&s, v[i]);
		}
		quant_sort(v, N);
		assert_int_equal(s.n, N);
		assert_true(s.min == v[0] && s.max == v[N - 1]);
		for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++) {
			double exact = quant_rank(v, N, ps[k]);
			double est = sketch_quantile(&s, ps[k]);
			double tol = SKETCH_ALPHA * fabs(exact) + 1e-12;
			if (fabs(est - exact) > tol)
				fail_msg("distribution %d p%g: sketch %.9g, exact %.9g", dist, ps[k], est,
				         exact);
		}
		Quant q;
		sketch_quant(&s, &q);
		assert_int_equal(q.n, N);
		assert_true(q.max == v[N - 1]);
		assert_true(isnan(q.p99_lo));
		sketch_fini(&s);
	}
	free(v);
	Sketch e;
	sketch_init(&e);
	assert_true(isnan(sketch_quantile(&e, 99)));
	sketch_add(&e, NAN);
	assert_int_equal(e.n, 0);
	sketch_fini(&e);
}

/* Sketches of parts merged (in any grouping) answer like the sketch of the
 * whole, to the byte. */
static void test_merge(void **state)
{
	(void)state;
	Sketch whole, parts[4], merged;
	sketch_init(&whole);
	sketch_init(&merged);
	for (int k = 0; k < 4; k++)
		sketch_init(&parts[k]);
	for (int i = 0; i < N; i++) {
		double x = draw(i % 7, i);
		sketch_add(&whole, x);
		sketch_add(&parts[(i * 7) % 4], x);
	}
	sketch_merge(&parts[1], &parts[3]);
	sketch_merge(&merged, &parts[2]);
	sketch_merge(&merged, &parts[0]);
	sketch_merge(&merged, &parts[1]);
	Buf a, b;
	buf_init(&a);
	buf_init(&b);
	sketch_encode(&whole, &a);
	sketch_encode(&merged, &b);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.p, b.p, a.len);
	buf_fini(&a);
	buf_fini(&b);
	for (int k = 0; k < 4; k++)
		sketch_fini(&parts[k]);
	sketch_fini(&merged);
	sketch_fini(&whole);
}

static void test_encoding(void **state)
{
	(void)state;
	Sketch s, t;
	sketch_init(&s);
	for (int i = 0; i < 5000; i++)
		sketch_add(&s, draw(i % 7, i));
	Buf b, c;
	buf_init(&b);
	buf_init(&c);
	sketch_encode(&s, &b);
	sketch_init(&t);
	assert_int_equal(sketch_decode_merge(&t, b.p, b.len), 0);
	sketch_encode(&t, &c);
	assert_int_equal(b.len, c.len);
	assert_memory_equal(b.p, c.p, b.len);
	/* every truncation is refused and leaves the sketch as it was */
	for (size_t len = 0; len < b.len; len++) {
		assert_int_equal(sketch_decode_merge(&t, b.p, len), -1);
		assert_int_equal(t.n, s.n);
	}
	/* a flipped byte is refused, or read as some valid sketch: never a
	 * crash, never a count that disagrees with its buckets */
	unsigned char *d = malloc(b.len);
	for (size_t i = 0; i < b.len; i++) {
		memcpy(d, b.p, b.len);
		d[i] ^= 0x5a;
		Sketch u;
		sketch_init(&u);
		if (sketch_decode_merge(&u, d, b.len) == 0) {
			int64_t sum = u.zero;
			for (int k = 0; k < u.nb; k++)
				sum += u.cnt[k];
			assert_int_equal(sum, u.n);
		} else {
			assert_int_equal(u.n, 0);
		}
		sketch_fini(&u);
	}
	free(d);
	/* the empty sketch */
	Sketch e;
	sketch_init(&e);
	buf_reset(&c);
	sketch_encode(&e, &c);
	assert_int_equal(sketch_decode_merge(&t, c.p, c.len), 0);
	assert_int_equal(t.n, s.n);
	sketch_fini(&e);
	buf_fini(&b);
	buf_fini(&c);
	sketch_fini(&t);
	sketch_fini(&s);
}

/* Taking observations back leaves the sketch of what remains: the same
 * counts and buckets, quantiles within the stated error (the extremes
 * too, once one of them was taken back); a value never added is refused. */
static void test_remove(void **state)
{
	(void)state;
	enum { M = 4000 };
	double *v = malloc(M * sizeof *v);
	Sketch s, keep;
	sketch_init(&s);
	sketch_init(&keep);
	for (int i = 0; i < M; i++) {
		v[i] = draw(i % 7, i);
		sketch_add(&s, v[i]);
		if (i % 3 != 0)
			sketch_add(&keep, v[i]);
	}
	for (int i = 0; i < M; i += 3)
		assert_int_equal(sketch_remove(&s, v[i]), 0);
	assert_int_equal(s.n, keep.n);
	assert_int_equal(s.zero, keep.zero);
	assert_int_equal(s.nb, keep.nb);
	assert_memory_equal(s.idx, keep.idx, (size_t)s.nb * sizeof *s.idx);
	assert_memory_equal(s.cnt, keep.cnt, (size_t)s.nb * sizeof *s.cnt);
	static const double ps[] = {1, 50, 90, 99, 100};
	for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++) {
		double a = sketch_quantile(&s, ps[k]), b = sketch_quantile(&keep, ps[k]);
		assert_true(fabs(a - b) <= SKETCH_ALPHA * fabs(b) + 1e-12);
	}
	/* a value whose bucket is empty */
	int64_t n = s.n;
	assert_int_equal(sketch_remove(&s, 1e7), -1);
	assert_int_equal(s.n, n);
	/* everything taken back: empty */
	Sketch one;
	sketch_init(&one);
	sketch_add(&one, 3.5);
	assert_int_equal(sketch_remove(&one, 3.5), 0);
	assert_int_equal(one.n, 0);
	assert_true(isnan(sketch_quantile(&one, 50)));
	assert_int_equal(sketch_remove(&one, 3.5), -1);
	sketch_fini(&one);
	sketch_fini(&s);
	sketch_fini(&keep);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_relative_error),
	    cmocka_unit_test(test_merge),
	    cmocka_unit_test(test_encoding),
	    cmocka_unit_test(test_remove),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
