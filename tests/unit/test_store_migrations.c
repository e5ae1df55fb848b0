/*
 * test_store_migrations.c - released migrations never change and never
 * move.
 *
 * A database records only the number of the last migration it ran (PRAGMA
 * user_version), so editing a released migration, or inserting one before
 * it, silently gives existing databases a different schema from new ones.
 * The SHA-256 of every migration's SQL is recorded, in order, in
 * tests/fixtures/store/migrations.sha256; this test fails when a recorded
 * one differs or is gone. A new migration is appended to the list in
 * store.c and its line to the file (test_store_migrations --print prints
 * the lines).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "store.h"

#define RECORDED "fixtures/store/migrations.sha256"

static void sha256_hex(const char *s, char out[65])
{
	unsigned char md[32];
	unsigned int n = 0;
	EVP_Digest(s, strlen(s), md, &n, EVP_sha256(), NULL);
	for (unsigned i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

/* Reads "N HEX ..." lines (# comments allowed) into hex[N-1]. */
static int read_recorded(char hex[][65], int max)
{
	FILE *f = fopen(RECORDED, "r");
	if (f == NULL)
		return -1;
	char line[512];
	int n = 0;
	while (fgets(line, sizeof line, f)) {
		int v;
		char h[65];
		if (line[0] == '#' || sscanf(line, "%d %64s", &v, h) != 2)
			continue;
		assert_int_equal(v, n + 1);  /* numbered in order, none missing */
		assert_true(n < max);
		snprintf(hex[n++], 65, "%s", h);
	}
	fclose(f);
	return n;
}

static void recorded_migrations_unchanged(void **state)
{
	(void)state;
	char rec[256][65];
	int n = read_recorded(rec, 256);
	assert_true(n > 0);
	int have = store_migration_count();
	if (have < n)
		fail_msg("%d migrations recorded, store.c has only %d: a released migration was"
		         " removed", n, have);
	for (int i = 0; i < n; i++) {
		char h[65];
		sha256_hex(store_migration_sql(i), h);
		if (strcmp(h, rec[i]) != 0) {
			/* moved, or edited? */
			for (int j = 0; j < have; j++) {
				char k[65];
				sha256_hex(store_migration_sql(j), k);
				if (strcmp(k, rec[i]) == 0)
					fail_msg("migration %d is now number %d: released migrations must"
					         " keep their place (append new ones at the end)", i + 1, j + 1);
			}
			fail_msg("migration %d changed since it was recorded: a released migration"
			         " must not change (write a new one at the end)", i + 1);
		}
	}
	if (have > n)
		fail_msg("migration %d is not recorded: append its line to " RECORDED
		         " (test_store_migrations --print)", n + 1);
}

static void migrations_reach_the_schema_version(void **state)
{
	(void)state;
	char dir[] = "/tmp/tt-migr-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[64];
	snprintf(path, sizeof path, "%s/m.db", dir);
	Store *st = NULL;
	Err err = {0};
	assert_int_equal(store_open(path, 0, &st, &err), 0);
	assert_int_equal(store_schema_version(st), store_migration_count());
	store_close(st);
	char p[80];
	const char *suffix[] = {"", "-wal", "-shm"};
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof p, "%s%s", path, suffix[i]);
		remove(p);
	}
	remove(dir);
}

/* A database written before routes were stored (schema 12): a reader
 * gives its server spans their route from the attributes, and the next
 * writer stores them (migration 13's route_backfill). */
static int on_route(void *ctx, const StoreSpanRow *r)
{
	char *out = ctx;
	size_t n = strlen(out);
	snprintf(out + n, 512 - n, "%s:%s:%d;", r->span_id, r->route, r->route_rule);
	return 0;
}

static void old_rows_get_routes(void **state)
{
	(void)state;
	char dir[] = "/tmp/tt-migr-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[64];
	snprintf(path, sizeof path, "%s/old.db", dir);
	sqlite3 *db = NULL;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	for (int i = 0; i < 12; i++)
		assert_int_equal(sqlite3_exec(db, store_migration_sql(i), NULL, NULL, NULL), SQLITE_OK);
	const char *rows =
	    "PRAGMA user_version = 12;"
	    "INSERT INTO sources(id, path, sha256, format, imported_at_ms) VALUES (1, 'f', 'x', 'otlp', 0);"
	    "INSERT INTO traces(id, trace_id) VALUES (1, 'aa');"
	    "INSERT INTO spans(trace_id, span_id, parent_id, source_id, service, name, kind, start_ns,"
	    " end_ns, attrs, trace_key) VALUES"
	    " ('aa', 's1', '', 1, 'shop', 'GET', 2, 1, 9,"
	    "  '{\"http.request.method\":\"GET\",\"url.path\":\"/items/42\"}', 1),"
	    " ('aa', 's2', 's1', 1, 'shop', 'GET', 3, 2, 8, '{\"url.full\":\"http://x/y\"}', 1),"
	    " ('aa', 's3', 's2', 1, 'cart', 'GET /c', 2, 3, 7, '{\"http.route\":\"/c\",\"http.method\":\"GET\"}', 1);";
	assert_int_equal(sqlite3_exec(db, rows, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	Store *st = NULL;
	Err err = {0};
	char got[512] = "";
	assert_int_equal(store_open(path, STORE_READONLY, &st, &err), 0);
	assert_int_equal(store_spans_scan(st, INT64_MIN, INT64_MAX, 0, on_route, got, &err), 0);
	store_close(st);
	const char *want = "s1:GET /items/{id}:4;s2::-1;s3:GET /c:1;";
	assert_string_equal(got, want);
	/* migrated, not yet stored */
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	sqlite3_stmt *q = NULL;
	const char *count = "SELECT count(*) FROM spans WHERE route_rule IS NOT NULL";
	assert_int_equal(sqlite3_prepare_v2(db, count, -1, &q, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(q, 0), 0);
	sqlite3_finalize(q);
	sqlite3_close(db);
	/* the next write stores them; the reads give the same */
	assert_int_equal(store_open(path, 0, &st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	assert_int_equal(store_commit(st, &err), 0);
	got[0] = '\0';
	assert_int_equal(store_spans_scan(st, INT64_MIN, INT64_MAX, 0, on_route, got, &err), 0);
	store_close(st);
	assert_string_equal(got, want);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT group_concat(span_id || '=' ||"
	                                        " ifnull(route, '-') || '/' || ifnull(route_rule, '-'),"
	                                        " ' ') FROM (SELECT * FROM spans ORDER BY span_id)",
	                                    -1, &q, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(q, 0),
	                    "s1=GET /items/{id}/4 s2=-/- s3=-/1");
	sqlite3_finalize(q);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM route_backfill", -1, &q, NULL),
	                 SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(q, 0), 0);
	sqlite3_finalize(q);
	sqlite3_close(db);
	char p[80];
	const char *suffix[] = {"", "-wal", "-shm"};
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof p, "%s%s", path, suffix[i]);
		remove(p);
	}
	remove(dir);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--print") == 0) {
		for (int i = 0; i < store_migration_count(); i++) {
			char h[65];
			sha256_hex(store_migration_sql(i), h);
			printf("%d %s\n", i + 1, h);
		}
		return 0;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(recorded_migrations_unchanged),
		cmocka_unit_test(migrations_reach_the_schema_version),
		cmocka_unit_test(old_rows_get_routes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
