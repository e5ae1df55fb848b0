/*
 * test_store_spans.c - span identity in the store: the batch insert, the
 * writer's trace key memory, and the migration of databases written before
 * the traces table existed.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "buf.h"
#include "helpers.h"
#include "store_env.h"
#include "store_priv.h"

static int64_t q_int(const char *db, const char *sql)
{
	sqlite3 *h = NULL;
	sqlite3_stmt *s = NULL;
	int64_t v = -1;
	if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(h, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(h);
	return v;
}

/* Span i of trace t (both small numbers), 1 ms long. */
static void mk_span(StoreSpan *s, int t, int i)
{
	memset(s, 0, sizeof *s);
	snprintf(s->trace_id, sizeof s->trace_id, "%032x", t + 1);
	snprintf(s->span_id, sizeof s->span_id, "%016x", i + 1);
	s->service = "svc";
	s->name = "op";
	s->kind = SPAN_KIND_SERVER;
	s->start_ns = T0 + MS(i);
	s->end_ns = s->start_ns + MS(1);
}

static int64_t source(Env *e, const char *tag)
{
	Err err = {0};
	int64_t src = 0;
	assert_int_equal(store_source_add(e->st, "test", tag, "test", 0, &src, &err), 0);
	return src;
}

static int count_trace(void *ctx, const StoreSpanRow *row)
{
	(void)row;
	(*(int *)ctx)++;
	return 0;
}

static int count_trace_set(void *ctx, const StoreTraceSet *set)
{
	(void)set;
	(*(int *)ctx)++;
	return 0;
}

static int spans_of(Store *st, int t)
{
	char id[33];
	snprintf(id, sizeof id, "%032x", t + 1);
	int n = 0;
	Err err = {0};
	assert_int_equal(store_trace_scan(st, id, count_trace, &n, &err), 0);
	return n;
}

/* 40 spans take two full statements and eight single ones; repeats inside
 * the call and of stored spans are not added, and the first new rowid is
 * the one the first new span got. */
static void test_batch_counts_repeats(void **state)
{
	Env *e = *state;
	Err err = {0};
	StoreSpan s[40];
	const StoreSpan *p[40];
	assert_int_equal(store_begin(e->st, &err), 0);
	int64_t src = source(e, "a");
	for (int i = 0; i < 5; i++) {
		mk_span(&s[i], 0, i);
		p[i] = &s[i];
	}
	int64_t added, first;
	assert_int_equal(store_spans_add(e->st, src, p, 5, &added, &first, &err), 0);
	assert_int_equal(added, 5);
	assert_int_equal(first, 1);

	/* 0..4 again (stored), 5..34 new (span j in trace 1 + j % 2), 35..39
	 * repeat 30..34 of this call */
	for (int i = 0; i < 40; i++) {
		int j = i < 35 ? i : i - 5;
		mk_span(&s[i], i < 5 ? 0 : 1 + j % 2, j);
		p[i] = &s[i];
	}
	assert_int_equal(store_spans_add(e->st, src, p, 40, &added, &first, &err), 0);
	assert_int_equal(added, 30);
	assert_int_equal(first, 6);
	assert_int_equal(store_commit(e->st, &err), 0);
	assert_int_equal(q_int(e->db, "SELECT count(*) FROM spans"), 35);
	assert_int_equal(q_int(e->db, "SELECT count(*) FROM traces"), 3);
	assert_int_equal(spans_of(e->st, 0), 5);
	assert_int_equal(spans_of(e->st, 1), 15);
	assert_int_equal(spans_of(e->st, 2), 15);
}

/* A rolled-back transaction takes its new traces with it: a span of the
 * same trace stored afterwards must point at a trace that exists. */
static void test_rollback_forgets_trace_keys(void **state)
{
	Env *e = *state;
	Err err = {0};
	StoreSpan s;
	int added;
	assert_int_equal(store_begin(e->st, &err), 0);
	int64_t src = source(e, "a");
	mk_span(&s, 7, 0);
	assert_int_equal(store_span_add(e->st, src, &s, &added, &err), 0);
	store_rollback(e->st);

	assert_int_equal(store_begin(e->st, &err), 0);
	src = source(e, "b");
	mk_span(&s, 8, 0); /* takes the traces id trace 7 had */
	assert_int_equal(store_span_add(e->st, src, &s, &added, &err), 0);
	mk_span(&s, 7, 0);
	assert_int_equal(store_span_add(e->st, src, &s, &added, &err), 0);
	assert_int_equal(added, 1);
	assert_int_equal(store_commit(e->st, &err), 0);
	assert_int_equal(spans_of(e->st, 7), 1);
	assert_int_equal(spans_of(e->st, 8), 1);
	assert_int_equal(q_int(e->db, "SELECT count(*) FROM spans s JOIN traces t"
	                              " ON t.id = s.trace_key AND t.trace_id = s.trace_id"),
	                 2);
}

/* A value SQLite refuses to bind (longer than the connection's length
 * limit) is an error of the insert, not a span stored with NULL there. */
static void test_failed_bind_is_an_error(void **state)
{
	Env *e = *state;
	Err err = {0};
	StoreSpan s;
	int added = -1;
	sqlite3_limit(e->st->db, SQLITE_LIMIT_LENGTH, 4096);
	assert_int_equal(store_begin(e->st, &err), 0);
	int64_t src = source(e, "big");
	mk_span(&s, 3, 0);
	Buf big;
	buf_init(&big);
	buf_adds(&big, "{\"k\":\"");
	for (int i = 0; i < 10000; i++)
		buf_addc(&big, 'x');
	buf_adds(&big, "\"}");
	s.attrs_json = buf_str(&big);
	assert_int_not_equal(store_span_add(e->st, src, &s, &added, &err), 0);
	if (strstr(err.msg, "too big") == NULL)
		fail_msg("%s", err.msg);
	store_rollback(e->st);
	buf_fini(&big);
	/* the connection is still good for the next insert */
	assert_int_equal(store_begin(e->st, &err), 0);
	src = source(e, "small");
	mk_span(&s, 4, 0);
	assert_int_equal(store_span_add(e->st, src, &s, &added, &err), 0);
	assert_int_equal(store_commit(e->st, &err), 0);
	assert_int_equal(spans_of(e->st, 3), 0);
	assert_int_equal(spans_of(e->st, 4), 1);
}

/* More traces in one import than the writer remembers: spans of traces it
 * has forgotten are still recognised as stored. */
static void test_many_traces_one_import(void **state)
{
	Env *e = *state;
	Err err = {0};
	enum { N = STORE_TKEY_CAP }; /* it forgets at three quarters */
	assert_int_equal(store_begin(e->st, &err), 0);
	int64_t src = source(e, "a");
	StoreSpan s;
	int added;
	for (int t = 0; t < N; t++) {
		mk_span(&s, t, 0);
		assert_int_equal(store_span_add(e->st, src, &s, &added, &err), 0);
		assert_int_equal(added, 1);
	}
	for (int t = 0; t < N; t += 997) {
		mk_span(&s, t, 0);
		assert_int_equal(store_span_add(e->st, src, &s, &added, &err), 0);
		assert_int_equal(added, 0);
		mk_span(&s, t, 1);
		assert_int_equal(store_span_add(e->st, src, &s, &added, &err), 0);
		assert_int_equal(added, 1);
	}
	assert_int_equal(store_commit(e->st, &err), 0);
	assert_int_equal(q_int(e->db, "SELECT count(*) FROM traces"), N);
	assert_int_equal(q_int(e->db, "SELECT count(DISTINCT trace_key) FROM spans"), N);
	assert_int_equal(spans_of(e->st, 997), 2);
}

/* Replaces the test's database with the schema-v4 fixture, closed. */
static void load_v4(Env *e)
{
	store_close(e->st);
	e->st = NULL;
	unlink(e->db);
	Buf sql;
	buf_init(&sql);
	Err err = {0};
	assert_int_equal(buf_read_file(&sql, "fixtures/store/schema-v4.sql", 1 << 20, &err), 0);
	sqlite3 *h = NULL;
	assert_int_equal(sqlite3_open(e->db, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, sql.p, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	buf_fini(&sql);
	assert_int_equal(q_int(e->db, "PRAGMA user_version"), 4);
}

/* A database written before the traces table is migrated on open: every
 * span gets its trace's key, identity still holds, traces read back. */
static void test_migrates_schema_v4(void **state)
{
	Env *e = *state;
	Err err = {0};
	load_v4(e);
	assert_int_equal(store_open(e->db, 0, &e->st, &err), 0);
	assert_true(store_schema_version(e->st) > 4);
	assert_int_equal(q_int(e->db, "SELECT count(*) FROM traces"), 3);
	assert_int_equal(q_int(e->db, "SELECT count(*) FROM spans s JOIN traces t"
	                              " ON t.id = s.trace_key AND t.trace_id = s.trace_id"),
	                 7);
	int n = 0;
	assert_int_equal(
	    store_trace_scan(e->st, "5b8efff798038103d269b633813fc60c", count_trace, &n, &err), 0);
	assert_int_equal(n, 3);

	/* a stored span is still a duplicate; a new one of a stored trace is not */
	StoreSpan s;
	memset(&s, 0, sizeof s);
	snprintf(s.trace_id, sizeof s.trace_id, "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1");
	snprintf(s.span_id, sizeof s.span_id, "00000000000000a2");
	s.name = "db.query";
	int added;
	assert_int_equal(store_begin(e->st, &err), 0);
	int64_t src = source(e, "c");
	assert_int_equal(store_span_add(e->st, src, &s, &added, &err), 0);
	assert_int_equal(added, 0);
	snprintf(s.span_id, sizeof s.span_id, "00000000000000a3");
	assert_int_equal(store_span_add(e->st, src, &s, &added, &err), 0);
	assert_int_equal(added, 1);
	assert_int_equal(store_commit(e->st, &err), 0);
	assert_int_equal(q_int(e->db, "SELECT count(*) FROM traces"), 3);
	n = 0;
	assert_int_equal(
	    store_trace_scan(e->st, "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1", count_trace, &n, &err), 0);
	assert_int_equal(n, 3);
}

/* Readers (report, tui) migrate an old database too instead of failing. */
static void test_reader_migrates_schema_v4(void **state)
{
	Env *e = *state;
	Err err = {0};
	load_v4(e);
	assert_int_equal(store_open(e->db, STORE_READONLY, &e->st, &err), 0);
	int n = 0;
	assert_int_equal(
	    store_trace_scan(e->st, "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2", count_trace, &n, &err), 0);
	assert_int_equal(n, 2);
	StoreStats stats;
	assert_int_equal(store_stats(e->st, &stats, &err), 0);
	assert_int_equal(stats.spans, 7);
	assert_int_equal(stats.traces, 3);
}

typedef struct SamplingSeen {
	int64_t pulled_roots, plain_roots;
	double p[4];
	int64_t n_at[4];
	int np;
} SamplingSeen;

static int on_sampling(void *ctx, const StoreSamplingRow *r)
{
	SamplingSeen *s = ctx;
	if (!r->has_pulled) {
		s->plain_roots += r->roots;
		return 0;
	}
	s->pulled_roots += r->roots;
	for (int i = 0; i < s->np; i++)
		if (s->p[i] == r->pulled) {
			s->n_at[i] += r->roots;
			return 0;
		}
	assert_true(s->np < 4);
	s->p[s->np] = r->pulled;
	s->n_at[s->np++] = r->roots;
	return 0;
}

/* What a pull recorded tells how each root was chosen: a member of a
 * uniform sample of 4 among the 12 listed (1/3) and of another sample of
 * the same range, 2 of 4 (1/2), was chosen by their union: 1 - 2/3 * 1/2
 * = 2/3, whether it is a member of one or both (both could have chosen
 * it); a root of no set says nothing; a member of the slowest set alone
 * is no root of the population. */
static void test_root_sampling_of_pulled_sets(void **state)
{
	Env *e = *state;
	Err err = {0};
	assert_int_equal(store_begin(e->st, &err), 0);
	int64_t src = source(e, "pulled");
	StoreSpan s;
	int added;
	for (int t = 0; t < 8; t++) {
		mk_span(&s, t, 0);
		assert_int_equal(store_span_add(e->st, src, &s, &added, &err), 0);
	}
	assert_int_equal(store_commit(e->st, &err), 0);
	StoreTraceSet a = {.kind = "sample", .role = "window", .from_ns = T0, .to_ns = T0 + MS(1000),
	                   .requested = 4, .population = 12, .source = "http://x", .service = "svc",
	                   .operation = "op"};
	StoreTraceSet b = a, slow = a;
	b.kind = "sample";
	b.role = "baseline"; /* another set over the same traces: 2 of 4 */
	b.requested = 2;
	b.population = 4;
	slow.kind = "slowest";
	slow.requested = 2;
	int64_t ia, ib, is;
	assert_int_equal(store_trace_set_intern(e->st, &a, &ia, &err), 0);
	assert_int_equal(store_trace_set_intern(e->st, &b, &ib, &err), 0);
	assert_int_equal(store_trace_set_intern(e->st, &slow, &is, &err), 0);
	char id[33];
	for (int t = 0; t < 4; t++) { /* traces 0-3 in a, 2-3 also in b */
		snprintf(id, sizeof id, "%032x", t + 1);
		assert_int_equal(store_trace_set_add(e->st, ia, id, NULL, &err), 0);
		if (t >= 2)
			assert_int_equal(store_trace_set_add(e->st, ib, id, NULL, &err), 0);
	}
	snprintf(id, sizeof id, "%032x", 6 + 1); /* trace 6: slowest only */
	assert_int_equal(store_trace_set_add(e->st, is, id, NULL, &err), 0);
	snprintf(id, sizeof id, "%032x", 0 + 1); /* trace 0: slowest and sampled */
	assert_int_equal(store_trace_set_add(e->st, is, id, NULL, &err), 0);
	SamplingSeen seen = {0};
	assert_int_equal(store_root_sampling(e->st, "svc", "op", T0, T0 + MS(1000), 0, on_sampling,
	                                     &seen, &err), 0);
	assert_int_equal(seen.pulled_roots, 4);
	assert_int_equal(seen.plain_roots, 3); /* 4, 5, 7; not 6 */
	double two_thirds = 0;
	for (int i = 0; i < seen.np; i++) {
		if (fabs(seen.p[i] - 2.0 / 3) < 1e-9)
			two_thirds += (double)seen.n_at[i];
		else
			fail_msg("a root chosen with probability %g", seen.p[i]);
	}
	assert_true(two_thirds == 4);
}

/* The requests a set of pulled traces stands for (the Horvitz-Thompson
 * sum of 1 / p that evidence_sampling.c makes of store_root_sampling()'s
 * rows), against the truth. Two rounds of a pull --every whose ranges
 * overlap: 3,000 requests one every 0.5 ms over 1.5 s; round A lists the
 * 2,000 of [0, 1 s) and samples 800, round B the 2,000 of [0.5, 1.5 s)
 * and samples 800, independently (simple random samples, a fixed seed);
 * only what they chose is stored. A request of the overlap was chosen
 * with probability 1 - 0.6 * 0.6 = 0.64. Weighting each trace by its
 * largest set's 1 / 0.4 made 3,600 of the 3,000 (+20 %); the union of its
 * own sets only, 3,450. */
static uint64_t rng_next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void pick(uint64_t *rng, int lo, int n, int k, char *chosen)
{
	int idx[2000];
	for (int i = 0; i < n; i++)
		idx[i] = lo + i;
	for (int i = 0; i < k; i++) { /* partial Fisher-Yates */
		int j = i + (int)(rng_next(rng) % (uint64_t)(n - i));
		int t = idx[i];
		idx[i] = idx[j];
		idx[j] = t;
		chosen[idx[i]] = 1;
	}
}

static int on_estimate(void *ctx, const StoreSamplingRow *r)
{
	double *sum = ctx;
	assert_true(r->has_pulled && r->pulled > 0 && r->pulled <= 1);
	sum[0] += (double)r->roots / r->pulled;
	sum[1] += (double)r->roots;
	return 0;
}

static void test_overlapping_rounds_estimate_requests(void **state)
{
	Env *e = *state;
	Err err = {0};
	enum { N = 3000, K = 800 };
	char in_a[N] = {0}, in_b[N] = {0};
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	pick(&rng, 0, 2000, K, in_a);
	pick(&rng, 1000, 2000, K, in_b);
	StoreTraceSet a = {.kind = "sample", .role = "window", .from_ns = T0, .to_ns = T0 + MS(1000),
	                   .requested = K, .population = 2000, .source = "http://x", .service = "svc",
	                   .operation = "op"};
	StoreTraceSet b = a;
	b.from_ns = T0 + MS(500);
	b.to_ns = T0 + MS(1500);
	int64_t ia, ib;
	assert_int_equal(store_begin(e->st, &err), 0);
	int64_t src = source(e, "pulled");
	assert_int_equal(store_trace_set_intern(e->st, &a, &ia, &err), 0);
	assert_int_equal(store_trace_set_intern(e->st, &b, &ib, &err), 0);
	int stored = 0;
	for (int t = 0; t < N; t++) {
		if (!in_a[t] && !in_b[t])
			continue;
		StoreSpan s;
		int added;
		mk_span(&s, t, 0);
		s.start_ns = T0 + (int64_t)t * 500000;
		s.end_ns = s.start_ns + MS(1);
		assert_int_equal(store_span_add(e->st, src, &s, &added, &err), 0);
		if (in_a[t])
			assert_int_equal(store_trace_set_add(e->st, ia, s.trace_id, NULL, &err), 0);
		if (in_b[t])
			assert_int_equal(store_trace_set_add(e->st, ib, s.trace_id, NULL, &err), 0);
		stored++;
	}
	assert_int_equal(store_commit(e->st, &err), 0);
	double sum[2] = {0, 0};
	assert_int_equal(store_root_sampling(e->st, "svc", "op", T0, T0 + MS(1500), 0, on_estimate,
	                                     sum, &err), 0);
	assert_int_equal((int64_t)sum[1], stored);
	/* the estimate's standard error here is about 55 requests */
	if (fabs(sum[0] - N) > 165)
		fail_msg("%d stored traces stand for %.0f requests, not about %d", stored, sum[0], N);
	/* the overlap alone: 1,000 requests */
	sum[0] = sum[1] = 0;
	assert_int_equal(store_root_sampling(e->st, "svc", "op", T0 + MS(500), T0 + MS(1000), 0,
	                                     on_estimate, sum, &err), 0);
	if (fabs(sum[0] - 1000) > 75)
		fail_msg("the overlap's %.0f traces stand for %.0f requests, not about 1000", sum[1],
		         sum[0]);
}

/* The store's query for its trace sets can fail (SQLITE_BUSY from a lock
 * another process holds, an I/O error, an interrupt); here a progress
 * handler interrupts every statement of the store's connection, the
 * public way SQLite has to make a step fail on demand. That is an error,
 * not "no trace set": read as none, the pulled slowest trace would count
 * as a request of the population. */
static int interrupt_all(void *ctx)
{
	(void)ctx;
	return 1;
}

static void test_failed_sets_query_is_an_error(void **state)
{
	Env *e = *state;
	Err err = {0};
	assert_int_equal(store_begin(e->st, &err), 0);
	int64_t src = source(e, "pulled");
	StoreSpan s;
	int added;
	mk_span(&s, 0, 0);
	assert_int_equal(store_span_add(e->st, src, &s, &added, &err), 0);
	StoreTraceSet slow = {.kind = "slowest", .role = "window", .from_ns = T0,
	                      .to_ns = T0 + MS(1000), .requested = 1, .population = 5,
	                      .source = "http://x", .service = "svc", .operation = "op"};
	int64_t is;
	assert_int_equal(store_trace_set_intern(e->st, &slow, &is, &err), 0);
	assert_int_equal(store_trace_set_add(e->st, is, s.trace_id, NULL, &err), 0);
	assert_int_equal(store_commit(e->st, &err), 0);
	int64_t *keys = NULL;
	size_t n = 0;
	assert_int_equal(store_traces_not_population(e->st, &keys, &n, &err), 0);
	assert_int_equal(n, 1);
	free(keys);

	sqlite3_progress_handler(e->st->db, 1, interrupt_all, NULL);
	err_clear(&err);
	int rc = store_traces_not_population(e->st, &keys, &n, &err);
	if (rc == 0) {
		free(keys);
		sqlite3_progress_handler(e->st->db, 0, NULL, NULL);
		fail_msg("a failed query read as %zu traces out of the population", n);
	}
	assert_non_null(strstr(err.msg, "trace sets"));
	assert_non_null(strstr(err.msg, "interrupted"));
	err_clear(&err);
	StoreTailInfo ti;
	assert_int_equal(store_tail_keys(e->st, T0, T0 + MS(1000), &keys, &n, &ti, &err), TT_ESTORE);
	int calls = 0;
	assert_int_equal(store_trace_sets(e->st, count_trace_set, &calls, &err), TT_ESTORE);
	sqlite3_progress_handler(e->st->db, 0, NULL, NULL);
	assert_int_equal(store_trace_sets(e->st, count_trace_set, &calls, &err), 0);
	assert_int_equal(calls, 1);
	assert_int_equal(store_traces_not_population(e->st, &keys, &n, &err), 0);
	assert_int_equal(n, 1);
	free(keys);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_batch_counts_repeats, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_rollback_forgets_trace_keys, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_failed_bind_is_an_error, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_many_traces_one_import, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_migrates_schema_v4, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_reader_migrates_schema_v4, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_root_sampling_of_pulled_sets, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_overlapping_rounds_estimate_requests, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_failed_sets_query_is_an_error, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
