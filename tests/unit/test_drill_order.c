/*
 * test_drill_order.c - the shuffled order of a drill's choices
 * (drills/order.h), and that picking choices by position is worth no more
 * than answering at random.
 *
 *  - the same seed gives the same order, every order is a permutation, and
 *    different seeds give different orders;
 *  - over many fixed seeds every choice is shown first about equally often
 *    (a chi-square bound);
 *  - for every shipped diagnosis drill, always answering the top positions
 *    (hypotheses 1..rank, the check at position k for the hypothesis ranked
 *    k, decision 1) scores on average what a uniformly random answer is
 *    expected to score, computed exactly from the drill's own key and
 *    scoring rules, and far below full marks.
 *
 * All seeds are fixed, so the results are deterministic: the bounds below
 * are chosen so that a fair shuffle passes them for any seed set with
 * overwhelming probability, while an order that puts the key first (the
 * catalog's own order) fails them by a wide margin.
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
#include "drill.h"
#include "order.h"
#include "score.h"

#define CATALOG "../drills/catalog"

static Drill *load(const char *path)
{
	Err err = {0};
	Drill *d = NULL;
	if (drill_load(path, &d, &err))
		fail_msg("%s", err.msg);
	return d;
}

static void assert_permutation(const int *p, int n)
{
	char seen[256] = {0};
	assert_true(n <= 256);
	for (int i = 0; i < n; i++) {
		assert_true(p[i] >= 0 && p[i] < n);
		assert_false(seen[p[i]]);
		seen[p[i]] = 1;
	}
}

static void test_same_seed_same_order(void **state)
{
	(void)state;
	Drill *d = load(CATALOG "/pricing-client-wait.drill.json");
	DrillOrder a, b;
	int differ = 0;
	for (uint32_t seed = 0; seed < 200; seed++) {
		drill_order_init(&a, d, seed);
		drill_order_init(&b, d, seed);
		assert_int_equal(a.seed, seed);
		assert_int_equal(a.n_hyp, d->n_hyp_choices);
		assert_int_equal(a.n_check, d->n_check_choices);
		assert_int_equal(a.n_decision, d->n_decision_choices);
		assert_memory_equal(a.hyp, b.hyp, sizeof(int) * (size_t)a.n_hyp);
		assert_memory_equal(a.check, b.check, sizeof(int) * (size_t)a.n_check);
		assert_memory_equal(a.decision, b.decision, sizeof(int) * (size_t)a.n_decision);
		assert_permutation(a.hyp, a.n_hyp);
		assert_permutation(a.check, a.n_check);
		assert_permutation(a.decision, a.n_decision);
		drill_order_fini(&b);
		drill_order_init(&b, d, seed + 1);
		differ += memcmp(a.hyp, b.hyp, sizeof(int) * (size_t)a.n_hyp) != 0;
		drill_order_fini(&a);
		drill_order_fini(&b);
	}
	/* 9! orders: two seeds agree by chance about once in 362880 */
	assert_true(differ >= 199);

	/* the JSON names the ids in the order shown */
	drill_order_init(&a, d, 7);
	Buf j;
	buf_init(&j);
	drill_order_json(d, &a, &j);
	char want[200];
	snprintf(want, sizeof want, "{\"seed\":7,\"hypotheses\":[\"%s\",\"%s\"",
	         d->hyp_choices[a.hyp[0]].id, d->hyp_choices[a.hyp[1]].id);
	assert_true(strncmp(buf_str(&j), want, strlen(want)) == 0);
	assert_non_null(strstr(buf_str(&j), "],\"checks\":[\""));
	assert_non_null(strstr(buf_str(&j), "],\"decisions\":[\""));
	buf_fini(&j);
	drill_order_fini(&a);
	drill_free(d);
}

static void test_seed_parse(void **state)
{
	(void)state;
	uint32_t s = 1;
	assert_int_equal(drill_seed_parse("0", &s), 0);
	assert_int_equal(s, 0);
	assert_int_equal(drill_seed_parse("4294967295", &s), 0);
	assert_int_equal(s, 4294967295u);
	assert_int_equal(drill_seed_parse("4294967296", &s), -1);
	assert_int_equal(drill_seed_parse("-1", &s), -1);
	assert_int_equal(drill_seed_parse(" 5", &s), -1);
	assert_int_equal(drill_seed_parse("5x", &s), -1);
	assert_int_equal(drill_seed_parse("", &s), -1);
}

/* Every choice comes first about equally often. Over N seeds each of the
 * n choices is expected N/n times at position 1; the chi-square statistic
 * of the counts has n-1 degrees of freedom. The bound is the 99.99th
 * percentile for n = 9 (8 degrees of freedom: 31.8; 33 is used). An order
 * with the key first gives a statistic in the tens of thousands. */
static void test_first_position_uniform(void **state)
{
	(void)state;
	Drill *d = load(CATALOG "/pricing-client-wait.drill.json");
	assert_int_equal(d->n_hyp_choices, 9);
	enum { N = 9000 };
	int count[9] = {0};
	for (uint32_t seed = 1; seed <= N; seed++) {
		DrillOrder o;
		drill_order_init(&o, d, seed);
		count[o.hyp[0]]++;
		drill_order_fini(&o);
	}
	double e = N / 9.0, chi = 0;
	for (int i = 0; i < 9; i++)
		chi += (count[i] - e) * (count[i] - e) / e;
	if (chi > 33)
		fail_msg("first-position counts are not uniform: chi-square %.1f", chi);
	drill_free(d);
}

/* The exact expected score of a uniformly random answer of the same shape
 * as the positional one (rank distinct hypotheses in random order, a random
 * check for each, a random decision), without engine output:
 *   hypotheses  key rank i earns pts_i when the key's hypothesis lands at
 *               rank i (probability 1/n) and share * pts_i when it lands
 *               at one of the other rank-1 places ((rank-1)/n);
 *   checks      the key's hypothesis i is named with probability rank/n,
 *               and then its check is accepted with probability
 *               |accepted|/m;
 *   decision    |accepted|/k of the full points plus partial points / k.
 * No penalty applies: no hint is read, rank hypotheses are always named,
 * and without engine output no decision is refused. */
static double expected_random(const Drill *d)
{
	double n = d->n_hyp_choices, m = d->n_check_choices, k = d->n_decision_choices;
	double r = d->rank, e = 0;
	for (int i = 0; i < d->rank; i++)
		e += d->hyp_points[i] * (1.0 / n + d->wrong_rank_share * (r - 1) / n);
	for (int i = 0; i < d->n_key_checks; i++) {
		int acc = 0;
		for (int a = 0; a < d->key_checks[i].n_accept; a++)
			for (int c = 0; c < d->n_check_choices; c++)
				acc += strcmp(d->key_checks[i].accept[a], d->check_choices[c].id) == 0;
		e += d->check_points * (r / n) * acc / m;
	}
	e += d->decision_points * d->n_key_decisions / k;
	for (int i = 0; i < d->n_partial; i++)
		e += d->partial[i].points / k;
	return e;
}

/* The answers of someone who takes the top rows as shown. */
static Answers *positional(const Drill *d, const DrillOrder *o)
{
	Answers *a = answers_new();
	a->hyp = xcalloc((size_t)d->rank, sizeof *a->hyp);
	a->check_hyp = xcalloc((size_t)d->rank, sizeof *a->check_hyp);
	a->check = xcalloc((size_t)d->rank, sizeof *a->check);
	for (int i = 0; i < d->rank; i++) {
		a->hyp[a->n_hyp++] = xstrdup(d->hyp_choices[o->hyp[i]].id);
		a->check_hyp[a->n_checks] = xstrdup(d->hyp_choices[o->hyp[i]].id);
		a->check[a->n_checks++] = xstrdup(d->check_choices[o->check[i % o->n_check]].id);
	}
	a->decision = xstrdup(d->decision_choices[o->decision[0]].id);
	return a;
}

static double score_of(const Drill *d, const Answers *a)
{
	Err err = {0};
	Score *s = NULL;
	if (score_answers(d, a, NULL, &s, &err))
		fail_msg("%s: %s", d->id, err.msg);
	double t = s->total;
	score_free(s);
	return t;
}

/* Positions are worth chance. Over N fixed seeds the mean of the
 * positional strategy estimates the expectation of a random answer; a
 * score lies in [0, max], so its standard deviation is at most max/2 and
 * the mean's at most max / (2 sqrt N): for N = 4000 that is 0.8 % of the
 * maximum, and the test allows four of them (3.2 points of 100). It also
 * checks that chance itself is far from full marks (under a third). For
 * comparison it reports how many drills the same strategy would beat
 * chance in with the choices in file order (the order is the drill
 * author's business, so that number is printed, not asserted). */
static void test_positions_score_chance(void **state)
{
	(void)state;
	Err err = {0};
	char **files = drill_catalog_files(CATALOG, &err);
	assert_non_null(files);
	enum { N = 4000 };
	int n_diag = 0, n_key_first = 0;
	for (int f = 0; files[f]; f++) {
		Drill *d = load(files[f]);
		if (d->kind != DRILL_DIAGNOSIS) {
			drill_free(d);
			continue;
		}
		n_diag++;
		double max = drill_max_score(d), sum = 0;
		for (uint32_t seed = 1; seed <= N; seed++) {
			DrillOrder o;
			drill_order_init(&o, d, seed * 2654435761u);
			Answers *a = positional(d, &o);
			sum += score_of(d, a);
			answers_free(a);
			drill_order_fini(&o);
		}
		double mean = sum / N, e = expected_random(d);
		double allow = 4 * max / (2 * sqrt((double)N));
		print_message("%-26s positional mean %.2f, random expectation %.2f (+-%.2f), max %g\n",
		              d->id, mean, e, allow, max);
		if (fabs(mean - e) > allow)
			fail_msg("%s: picking by position scores %.2f on average, chance is %.2f", d->id,
			         mean, e);
		assert_true(e < max / 3);
		/* the file order, unshuffled */
		DrillOrder id;
		drill_order_init(&id, d, 0);
		for (int i = 0; i < id.n_hyp; i++)
			id.hyp[i] = i;
		for (int i = 0; i < id.n_check; i++)
			id.check[i] = i;
		for (int i = 0; i < id.n_decision; i++)
			id.decision[i] = i;
		Answers *a = positional(d, &id);
		n_key_first += score_of(d, a) > e + allow;
		answers_free(a);
		drill_order_fini(&id);
		drill_free(d);
	}
	assert_int_equal(n_diag, 4);
	print_message("file order beats chance in %d of %d diagnosis drills\n", n_key_first, n_diag);
	drill_strv_free(files);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_seed_same_order),
		cmocka_unit_test(test_seed_parse),
		cmocka_unit_test(test_first_position_uniform),
		cmocka_unit_test(test_positions_score_chance),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
