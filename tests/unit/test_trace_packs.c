/*
 * test_trace_packs.c - the analysis's reads give the same rows whether a
 * trace comes from its pack or from its spans (store.h, "trace packs").
 *
 *  - a simulated incident imported through the real importer and the
 *    commit hook the CLI installs: every trace with a root has a pack, and
 *    reading every trace (a key range, and key by key) gives exactly the
 *    rows the spans give once the packs are deleted;
 *  - a pack made stale by a writer without the hook (a span added to its
 *    trace) is not used: the new span is read; the next update writes it
 *    again and it is used;
 *  - damaged packs (cut short, another version, a trailer that lies, a
 *    valid header over nothing) are read from the spans instead, with the
 *    same rows and nothing of the damaged pack delivered.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis.h"
#include "buf.h"
#include "helpers.h"
#include "import.h"
#include "sim.h"

/* Every field of a row but its rowid (0 from a pack), one line per row. */
static int row_line(void *ctx, const StoreSpanRow *r)
{
	buf_printf(ctx, "%lld|%s|%s|%s|%s|%s|%s|%d|%lld|%lld|%d|%s|%d|%lld|%s|%s|%s|%s\n",
	           (long long)r->trace_key, r->trace_id, r->span_id, r->parent_id, r->service,
	           r->host, r->name, r->kind, (long long)r->start_ns, (long long)r->end_ns,
	           r->status_code, r->wclass, r->has_queue, (long long)r->queue_ns, r->attrs_json,
	           r->db_system, r->peer, r->events_json);
	return 0;
}

/* Every trace as one read of every key, then key by key (the two ways the
 * analysis reads), on a fresh read-only connection: the counts are its. */
static void read_all(const char *db, Buf *range, Buf *by_key, int64_t *used, int64_t *refused)
{
	Store *st = NULL;
	Err err = {0};
	assert_int_equal(store_open(db, STORE_READONLY, &st, &err), 0);
	int64_t max_rowid = 0, max_key = 0;
	assert_int_equal(store_spans_max_rowid(st, &max_rowid, &err), 0);
	assert_int_equal(store_trace_key_max(st, &max_key, &err), 0);
	buf_reset(range);
	assert_int_equal(store_spans_key_range(st, INT64_MIN, INT64_MAX, max_rowid, row_line, range,
	                                       &err),
	                 0);
	int64_t u = 0, r = 0;
	store_pack_counts(st, &u, &r);
	if (by_key) {
		buf_reset(by_key);
		for (int64_t k = 1; k <= max_key; k++)
			assert_int_equal(store_trace_key_scan(st, k, row_line, by_key, &err), 0);
	}
	store_close(st);
	*used = u;
	*refused = r;
}

static void sql(const char *db, const char *q)
{
	sqlite3 *h = NULL;
	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	char *msg = NULL;
	if (sqlite3_exec(h, q, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", q, msg ? msg : "?");
	sqlite3_close(h);
}

static int64_t sql_int(const char *db, const char *q)
{
	sqlite3 *h = NULL;
	sqlite3_stmt *s = NULL;
	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, q, -1, &s, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	int64_t v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(h);
	return v;
}

static int count_lines(const Buf *b)
{
	int n = 0;
	for (size_t i = 0; i < b->len; i++)
		n += b->p[i] == '\n';
	return n;
}

static void assert_same_text(const Buf *a, const Buf *b)
{
	assert_true(a->len > 0);
	if (a->len != b->len || memcmp(a->p, b->p, a->len) != 0)
		fail_msg("the rows differ (%zu and %zu bytes)", a->len, b->len);
}

static void test_simulated_incident(void **state)
{
	(void)state;
	char dir[64] = "/tmp/tt_test_packs_XXXXXX";
	assert_non_null(mkdtemp(dir));
	Err err = {0};
	SimParams p;
	assert_int_equal(sim_params_init(&p, "mercury", &err), 0);
	static const char *const sets[][2] = {{"traces", "300"}, {"window-s", "120"},
	                                      {"warmup-s", "20"}, {"seed", "11"}};
	for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
		if (sim_params_set(&p, sets[i][0], sets[i][1], &err))
			fail_msg("%s", err.msg);
	char traces[512], manifest[512], db[128];
	SimRun run;
	if (sim_generate(&p, dir, 0, &run, traces, manifest, sizeof manifest, &err))
		fail_msg("%s", err.msg);
	snprintf(db, sizeof db, "%s/s.db", dir);
	Store *st = NULL;
	store_set_commit_hook(analysis_agg_update);
	assert_int_equal(store_open(db, 0, &st, &err), 0);
	ImportOptions io = {0};
	ImportResult res;
	if (import_file(st, traces, &io, &res, &err))
		fail_msg("%s", err.msg);
	store_close(st);
	store_set_commit_hook(NULL);

	int64_t rooted = sql_int(db, "SELECT count(DISTINCT trace_key) FROM spans WHERE parent_id = ''");
	assert_true(rooted > 100);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM trace_packs"), rooted);

	Buf with, with_keys, without, without_keys;
	buf_init(&with);
	buf_init(&with_keys);
	buf_init(&without);
	buf_init(&without_keys);
	int64_t used, refused;
	read_all(db, &with, &with_keys, &used, &refused);
	assert_int_equal(used, rooted);
	assert_int_equal(refused, 0);
	sql(db, "DELETE FROM trace_packs");
	read_all(db, &without, &without_keys, &used, &refused);
	assert_int_equal(used, 0);
	assert_same_text(&with, &without);
	assert_same_text(&with_keys, &without_keys);
	assert_same_text(&with, &with_keys);

	buf_fini(&with);
	buf_fini(&with_keys);
	buf_fini(&without);
	buf_fini(&without_keys);
	rm_db(db);
	unlink(traces);
	unlink(manifest);
	char m[600];
	snprintf(m, sizeof m, "%s/metrics.jsonl", dir);
	unlink(m);
	rmdir(dir);
}

/* Two requests and a trace without a root, as one writer stores them. */
static const TSpanSpec first[] = {
    {"t1", "a", "", "api", "GET /x", 2, 0, 50, "gold", 3},
    {"t1", "b", "a", "api", "call pricing", 3, 5, 40, "", 0},
    {"t1", "c", "b", "pricing", "price", 2, 8, 38, "", 0},
    {"t2", "d", "", "api", "GET /x", 2, 100, 130, "", 0},
    {"t2", "e", "d", "api", "call db", 3, 102, 120, "", 0},
    {"t3", "f", "zz", "pricing", "price", 2, 200, 210, "", 0},
};
/* ...and a span of t1's that arrives later */
static const TSpanSpec later[] = {
    {"t1", "g", "a", "api", "call stock", 3, 41, 49, "", 0},
};

static void test_stale_and_damaged(void **state)
{
	(void)state;
	char db[128];
	tmp_db_path(db, sizeof db);
	Store *st = NULL;
	Err err = {0};
	assert_int_equal(store_open(db, 0, &st, &err), 0);
	store_set_commit_hook(analysis_agg_update);
	assert_int_equal(add_spans(st, first, 6, T0), 0);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM trace_packs"), 2); /* not t3 */

	/* another program adds t1's late span: t1's pack is stale */
	store_set_commit_hook(NULL);
	assert_int_equal(add_spans(st, later, 1, T0), 0);
	Buf got, truth;
	buf_init(&got);
	buf_init(&truth);
	int64_t used, refused;
	read_all(db, &got, NULL, &used, &refused);
	assert_int_equal(used, 1);    /* t2 */
	assert_int_equal(refused, 1); /* t1 */
	char g[17];
	hexpad(g, 16, "g");
	assert_non_null(strstr(got.p, g));
	assert_int_equal(count_lines(&got), 7);

	/* the next update writes it again */
	store_set_commit_hook(analysis_agg_update);
	assert_int_equal(analysis_agg_update(st, &err), 0);
	read_all(db, &got, NULL, &used, &refused);
	assert_int_equal(used, 2);
	assert_int_equal(refused, 0);
	store_close(st);
	store_set_commit_hook(NULL);

	/* the truth: the spans alone */
	char copy[160];
	snprintf(copy, sizeof copy, "%s.copy", db);
	char q[400];
	snprintf(q, sizeof q, "VACUUM INTO '%s'", copy);
	sql(db, q);
	sql(copy, "DELETE FROM trace_packs");
	read_all(copy, &truth, NULL, &used, &refused);
	assert_int_equal(count_lines(&truth), 7);
	assert_same_text(&got, &truth);

	/* damaged packs of t1 (key 1) */
	static const char *const damage[] = {
	    "UPDATE trace_packs SET pack = substr(pack, 1, length(pack) / 2) WHERE trace_key = 1",
	    "UPDATE trace_packs SET pack = x'03' || substr(pack, 2) WHERE trace_key = 1",
	    /* a pack of version 1 (before routes) */
	    "UPDATE trace_packs SET pack = x'01' || substr(pack, 2) WHERE trace_key = 1",
	    "UPDATE trace_packs SET pack = substr(pack, 1, length(pack) - 1) WHERE trace_key = 1",
	    ("UPDATE trace_packs SET pack = substr(pack, 1, length(pack) - 4) || x'09000000'"
	     " WHERE trace_key = 1"),
	    "UPDATE trace_packs SET pack = x'01' || zeroblob(60) WHERE trace_key = 1",
	    "UPDATE trace_packs SET pack = x'' WHERE trace_key = 1",
	};
	for (size_t i = 0; i < sizeof damage / sizeof damage[0]; i++) {
		char d[160];
		snprintf(d, sizeof d, "%s.d%zu", db, i);
		snprintf(q, sizeof q, "VACUUM INTO '%s'", d);
		sql(db, q);
		sql(d, damage[i]);
		read_all(d, &got, NULL, &used, &refused);
		if (used != 1 || refused != 1)
			fail_msg("%s: %lld used, %lld refused", damage[i], (long long)used,
			         (long long)refused);
		assert_same_text(&got, &truth);
		rm_db(d);
	}
	buf_fini(&got);
	buf_fini(&truth);
	rm_db(copy);
	rm_db(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_simulated_incident),
	    cmocka_unit_test(test_stale_and_damaged),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
