/*
 * test_trace_feed.c - whole traces read on a second thread: the same
 * traces, rows and order as one thread reading them, more traces than the
 * feed's ring holds, the same in parts read through several connections,
 * tags and cuts for one-key scans, a caller that stops early, a
 * reading (or one part of it) that fails part way, and a system that
 * gives fewer threads than asked for, or none.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <pthread.h>

#include "buf.h"
#include "helpers.h"
#include "store_env.h"
#include "trace_feed.h"

/* pthread_create as the system gives it (linked with
 * -Wl,--wrap=pthread_create): calls number refuse_from to refuse_to - 1
 * (counting from 1) fail with EAGAIN, as under a limit on processes. */
static int creates, refuse_from, refuse_to;
int __real_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
	++creates;
	if (creates >= refuse_from && creates < refuse_to)
		return EAGAIN;
	return __real_pthread_create(t, a, fn, arg);
}

enum { TRACES = 300 }; /* several times the feed's ring */

/* Trace t has 1 + t % 7 spans; the spans of all traces are stored
 * interleaved (span i of every trace, then span i + 1), as concurrent
 * requests' spans are, so that no trace's rows are next to each other. */
static int feed_setup(void **state)
{
	setup(state);
	Env *e = *state;
	Err err = {0};
	int64_t src = 0;
	assert_int_equal(store_begin(e->st, &err), 0);
	assert_int_equal(store_source_add(e->st, "test", "feed", "test", 0, &src, &err), 0);
	for (int i = 0; i < 7; i++)
		for (int t = 0; t < TRACES; t++) {
			if (i >= 1 + t % 7)
				continue;
			StoreSpan s;
			memset(&s, 0, sizeof s);
			snprintf(s.trace_id, sizeof s.trace_id, "%032x", t + 1);
			snprintf(s.span_id, sizeof s.span_id, "%016x", i + 1);
			if (i > 0)
				snprintf(s.parent_id, sizeof s.parent_id, "%016x", 1);
			s.service = i ? "dep" : "api";
			s.name = "op";
			s.kind = i ? SPAN_KIND_CLIENT : SPAN_KIND_SERVER;
			s.start_ns = T0 + MS(t) + MS(i);
			s.end_ns = s.start_ns + MS(10 - i);
			int added = 0;
			assert_int_equal(store_span_add(e->st, src, &s, &added, &err), 0);
		}
	StoreSourceCounts c = {0};
	assert_int_equal(store_source_finish(e->st, src, &c, "imported", &err), 0);
	assert_int_equal(store_commit(e->st, &err), 0);
	return 0;
}

/* What a trace is, for comparing: its id and its span ids in row order. */
typedef struct Seen {
	int n;
	char key[TRACES + 8][200];
	int tag[TRACES + 8];
} Seen;

static void describe(const Trace *t, char *out, size_t sz)
{
	Buf b;
	buf_init(&b);
	buf_printf(&b, "%s:", t->trace_id);
	for (int i = 0; i < t->n; i++)
		buf_printf(&b, " %s", trace_str(t, t->sp[i].sid));
	snprintf(out, sz, "%s", buf_str(&b));
	buf_fini(&b);
}

/* The one-thread reading: rows grouped by trace id as they come. */
typedef struct Direct {
	Trace tr;
	Seen *seen;
} Direct;

static void direct_flush(Direct *d)
{
	if (d->tr.n == 0)
		return;
	describe(&d->tr, d->seen->key[d->seen->n], sizeof d->seen->key[0]);
	d->seen->n++;
}

static int on_direct(void *ctx, const StoreSpanRow *r)
{
	Direct *d = ctx;
	if (strcmp(d->tr.trace_id, r->trace_id) != 0) {
		direct_flush(d);
		trace_reset(&d->tr, r->trace_id);
	}
	trace_add(&d->tr, r);
	return 0;
}

/* Every trace as one thread reads it, into direct. */
static void read_direct(Env *e, Seen *direct)
{
	Err err = {0};
	memset(direct, 0, sizeof *direct);
	Direct d = {.seen = direct};
	trace_init(&d.tr);
	trace_reset(&d.tr, "");
	assert_int_equal(store_spans_since(e->st, 0, INT64_MAX, on_direct, &d, &err), 0);
	direct_flush(&d);
	trace_fini(&d.tr);
	assert_int_equal(direct->n, TRACES);
}

static int read_all(TraceSink *s, void *ctx, int part, int parts, Err *err)
{
	(void)part;
	(void)parts;
	return store_spans_since(ctx, 0, INT64_MAX, trace_sink_row, s, err);
}

static void feed_gives_what_one_thread_reads(void **state)
{
	Env *e = *state;
	Err err = {0};
	static Seen direct, fed;
	read_direct(e, &direct);
	memset(&fed, 0, sizeof fed);

	TraceFeed *f = trace_feed_start(read_all, e->st, 1, NULL);
	Trace *t;
	while ((t = trace_feed_next(f, NULL)) != NULL) {
		assert_true(fed.n < TRACES);
		describe(t, fed.key[fed.n++], sizeof fed.key[0]);
		if (fed.n % 50 == 0)
			usleep(2000); /* a slow caller: the reader fills the ring and waits */
	}
	assert_int_equal(trace_feed_finish(f, &err), 0);
	assert_int_equal(fed.n, direct.n);
	for (int i = 0; i < fed.n; i++)
		assert_string_equal(fed.key[i], direct.key[i]);
	/* trace 7 (key 7) has 1 + 6 % 7 = 7 spans, all there and in order */
	assert_non_null(strstr(fed.key[6], "0000000000000001 0000000000000002"));
	assert_non_null(strstr(fed.key[6], "0000000000000007"));
}

/* The same read in parts, each through its own connection: chunks of 7
 * trace keys (so chunks end inside the ring and across it), part p
 * reading chunks p, p + parts, ... */
typedef struct Parts {
	Store *st[TRACE_FEED_MAX_PARTS];
	int64_t max_key, chunk;
	int fail_part;             /* this part fails at its third chunk (-1: none) */
	int scans[TRACE_FEED_MAX_PARTS]; /* chunks each part has begun */
} Parts;

static int scan_part(void *ctx, int part, int64_t from, int64_t to, TraceSink *s, Err *err)
{
	Parts *x = ctx;
	if (part == x->fail_part && ++x->scans[part] == 3) {
		err_set(err, TT_ESTORE, "part %d failed", part);
		return TT_ESTORE;
	}
	return store_spans_key_range(x->st[part], from, to, INT64_MAX, trace_sink_row, s, err);
}

static int read_parts(TraceSink *s, void *ctx, int part, int parts, Err *err)
{
	Parts *x = ctx;
	return trace_sink_key_chunks(s, part, parts, x->chunk, x->max_key, scan_part, x, err);
}

static void feed_in_parts_gives_the_same_order(void **state)
{
	Env *e = *state;
	Err err = {0};
	static Seen direct, fed;
	read_direct(e, &direct);
	for (int parts = 1; parts <= 3; parts++) {
		Parts x = {.st = {e->st}, .chunk = 7, .fail_part = -1};
		for (int p = 1; p < parts; p++)
			assert_int_equal(store_open(e->db, STORE_READONLY, &x.st[p], &err), 0);
		assert_int_equal(store_trace_key_max(e->st, &x.max_key, &err), 0);
		assert_int_equal(x.max_key, TRACES);
		memset(&fed, 0, sizeof fed);
		TraceFeed *f = trace_feed_start(read_parts, &x, parts, NULL);
		Trace *t;
		while ((t = trace_feed_next(f, NULL)) != NULL) {
			assert_true(fed.n < TRACES);
			describe(t, fed.key[fed.n++], sizeof fed.key[0]);
		}
		assert_int_equal(trace_feed_finish(f, &err), 0);
		assert_int_equal(fed.n, direct.n);
		for (int i = 0; i < fed.n; i++)
			assert_string_equal(fed.key[i], direct.key[i]);
		/* a part that fails: the traces before its failure come, then the
		 * end, and the failure is reported */
		if (parts > 1) {
			x.fail_part = 1;
			f = trace_feed_start(read_parts, &x, parts, NULL);
			int n = 0;
			while (trace_feed_next(f, NULL) != NULL)
				n++;
			assert_true(n > 0 && n < TRACES);
			assert_int_equal(trace_feed_finish(f, &err), TT_ESTORE);
			assert_string_equal(err.msg, "part 1 failed");
		}
		for (int p = 1; p < parts; p++)
			store_close(x.st[p]);
	}
}

/* When the system refuses a thread: with fewer threads than parts, one
 * thread reads every chunk; with none at all, the caller's thread reads.
 * Either way every trace comes, in the order one reader gives. */
static void feed_without_threads(void **state)
{
	Env *e = *state;
	Err err = {0};
	static Seen direct, fed;
	read_direct(e, &direct);
	static const struct {
		int parts, refuse_from, refuse_to, created;
	} cases[] = {
	    {2, 2, 3, 3},   /* the second part's thread is refused, one thread reads */
	    {3, 3, 4, 4},   /* the third part's */
	    {2, 1, 100, 2}, /* no thread at all: the caller reads */
	    {1, 1, 100, 1},
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		Parts x = {.st = {e->st}, .chunk = 7, .fail_part = -1};
		for (int p = 1; p < cases[k].parts; p++)
			assert_int_equal(store_open(e->db, STORE_READONLY, &x.st[p], &err), 0);
		assert_int_equal(store_trace_key_max(e->st, &x.max_key, &err), 0);
		creates = 0;
		refuse_from = cases[k].refuse_from;
		refuse_to = cases[k].refuse_to;
		memset(&fed, 0, sizeof fed);
		TraceFeed *f = trace_feed_start(read_parts, &x, cases[k].parts, NULL);
		Trace *t;
		while ((t = trace_feed_next(f, NULL)) != NULL) {
			assert_true(fed.n < TRACES);
			describe(t, fed.key[fed.n++], sizeof fed.key[0]);
		}
		assert_int_equal(trace_feed_finish(f, &err), 0);
		refuse_from = refuse_to = 0;
		assert_int_equal(creates, cases[k].created);
		assert_int_equal(fed.n, direct.n);
		for (int i = 0; i < fed.n; i++)
			assert_string_equal(fed.key[i], direct.key[i]);
		for (int p = 1; p < cases[k].parts; p++)
			store_close(x.st[p]);
	}
}

/* One trace key at a time, tagged by key % 3, with a key that has no rows
 * (nothing comes of it) and every trace read twice under two tags. */
static int read_keys(TraceSink *f, void *ctx, int part, int parts, Err *err)
{
	Store *st = ctx;
	(void)part;
	(void)parts;
	int rc = 0;
	for (int pass = 0; pass < 2 && rc == 0; pass++)
		for (int64_t k = 1; k <= TRACES + 1 && rc == 0; k++) {
			trace_sink_tag(f, pass * 10 + (int)(k % 3));
			rc = store_trace_key_scan(st, k, trace_sink_row, f, err);
			trace_sink_cut(f);
		}
	return rc;
}

static void feed_keeps_tags_and_cuts(void **state)
{
	Env *e = *state;
	Err err = {0};
	TraceFeed *f = trace_feed_start(read_keys, e->st, 1, NULL);
	Trace *t;
	int tag = -1, n = 0;
	while ((t = trace_feed_next(f, &tag)) != NULL) {
		int k = n % TRACES + 1; /* keys are given in first-stored order */
		char want[33];
		snprintf(want, sizeof want, "%032x", k);
		assert_string_equal(t->trace_id, want);
		assert_int_equal(t->n, 1 + (k - 1) % 7);
		assert_int_equal(tag, (n >= TRACES ? 10 : 0) + k % 3);
		n++;
	}
	assert_int_equal(trace_feed_finish(f, &err), 0);
	assert_int_equal(n, 2 * TRACES);
}

static void caller_stops_early(void **state)
{
	Env *e = *state;
	Err err = {0};
	TraceFeed *f = trace_feed_start(read_all, e->st, 1, NULL);
	for (int i = 0; i < 5; i++)
		assert_non_null(trace_feed_next(f, NULL));
	usleep(20000); /* the reader is now waiting for a slot */
	assert_int_equal(trace_feed_finish(f, &err), 0);
	/* the connection is the caller's again */
	int64_t max = 0;
	assert_int_equal(store_spans_max_rowid(e->st, &max, &err), 0);
	assert_true(max > 0);
}

/* Reads 100 traces, then fails. */
static int read_then_fail(TraceSink *f, void *ctx, int part, int parts, Err *err)
{
	Store *st = ctx;
	(void)part;
	(void)parts;
	for (int64_t k = 1; k <= 100; k++) {
		if (store_trace_key_scan(st, k, trace_sink_row, f, err))
			return TT_ESTORE;
		trace_sink_cut(f);
	}
	err_set(err, TT_ESTORE, "the disk went away");
	return TT_ESTORE;
}

static void reading_error_reaches_caller(void **state)
{
	Env *e = *state;
	Err err = {0};
	TraceFeed *f = trace_feed_start(read_then_fail, e->st, 1, NULL);
	int n = 0;
	while (trace_feed_next(f, NULL) != NULL)
		n++;
	assert_int_equal(n, 100);
	assert_int_equal(trace_feed_finish(f, &err), TT_ESTORE);
	assert_string_equal(err.msg, "the disk went away");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(feed_gives_what_one_thread_reads, feed_setup, teardown),
		cmocka_unit_test_setup_teardown(feed_keeps_tags_and_cuts, feed_setup, teardown),
		cmocka_unit_test_setup_teardown(feed_in_parts_gives_the_same_order, feed_setup, teardown),
		cmocka_unit_test_setup_teardown(caller_stops_early, feed_setup, teardown),
		cmocka_unit_test_setup_teardown(reading_error_reaches_caller, feed_setup, teardown),
		cmocka_unit_test_setup_teardown(feed_without_threads, feed_setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
