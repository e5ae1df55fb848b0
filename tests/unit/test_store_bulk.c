/*
 * test_store_bulk.c - creating a new database in one go (store_bulk.c):
 * the file appears only when finished, in WAL mode with every index; a
 * failed file inside the load is rolled back; an abandoned load leaves
 * nothing; a file that appeared meanwhile is never replaced; a leftover of
 * a killed load is cleaned up; a disk that cannot sync the file fails the
 * load, which then leaves nothing.
 *
 * fdatasync() and fsync() are wrapped (-Wl,--wrap, tests/CMakeLists.txt):
 * sync_fail makes the next calls fail as a disk with a write error does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <sqlite3.h>
#include <errno.h>
#include <sys/stat.h>

#include "buf.h"
#include "helpers.h"
#include "store_env.h"

/* 1: fdatasync() fails, 2: fsync() fails (with EIO); 0: both work. The
 * store's own calls only: SQLite's go to the C library directly. */
static int sync_fail;
int __real_fdatasync(int fd);
int __real_fsync(int fd);
int __wrap_fdatasync(int fd);
int __wrap_fsync(int fd);

int __wrap_fdatasync(int fd)
{
	if (sync_fail == 1) {
		errno = EIO;
		return -1;
	}
	return __real_fdatasync(fd);
}

int __wrap_fsync(int fd)
{
	if (sync_fail == 2) {
		errno = EIO;
		return -1;
	}
	return __real_fsync(fd);
}

typedef struct Dir {
	char dir[64];
	char db[128];
	char tmp[160];
} Dir;

static int dsetup(void **state)
{
	Dir *d = calloc(1, sizeof *d);
	snprintf(d->dir, sizeof d->dir, "/tmp/tt-bulk-XXXXXX");
	assert_non_null(mkdtemp(d->dir));
	snprintf(d->db, sizeof d->db, "%s/t.db", d->dir);
	char *t = store_bulk_temp_path(d->db);
	snprintf(d->tmp, sizeof d->tmp, "%s", t);
	free(t);
	*state = d;
	return 0;
}

static int dteardown(void **state)
{
	Dir *d = *state;
	const char *sfx[] = {"", "-wal", "-shm", "-journal"};
	char p[200];
	for (size_t i = 0; i < 4; i++) {
		snprintf(p, sizeof p, "%s%s", d->db, sfx[i]);
		unlink(p);
		snprintf(p, sizeof p, "%s%s", d->tmp, sfx[i]);
		unlink(p);
	}
	rmdir(d->dir);
	free(d);
	return 0;
}

static int exists(const char *p)
{
	struct stat sb;
	return stat(p, &sb) == 0;
}

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

static void q_text(const char *db, const char *sql, char *out, size_t n)
{
	sqlite3 *h = NULL;
	sqlite3_stmt *s = NULL;
	out[0] = '\0';
	if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(h, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
		snprintf(out, n, "%s", (const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	sqlite3_close(h);
}

/* One file's worth of spans: n spans of trace t in one transaction. */
static int add_file(Store *st, const char *tag, int t, int n, int fail)
{
	Err err = {0};
	int64_t src = 0, added = 0, first = 0;
	if (store_begin(st, &err) || store_source_add(st, "f", tag, "test", 0, &src, &err))
		return -1;
	for (int i = 0; i < n; i++) {
		StoreSpan s;
		memset(&s, 0, sizeof s);
		snprintf(s.trace_id, sizeof s.trace_id, "%032x", t + 1);
		snprintf(s.span_id, sizeof s.span_id, "%016x", i + 1);
		if (i > 0)
			snprintf(s.parent_id, sizeof s.parent_id, "%016x", 1);
		s.name = "op";
		s.kind = SPAN_KIND_SERVER;
		s.start_ns = T0 + MS(i);
		s.end_ns = s.start_ns + MS(1);
		const StoreSpan *p = &s;
		if (store_spans_add(st, src, &p, 1, &added, &first, &err))
			return -1;
	}
	if (fail) {
		store_rollback(st);
		return 1;
	}
	StoreSourceCounts c = {.spans_added = n};
	if (store_source_finish(st, src, &c, "imported", &err) || store_commit(st, &err))
		return -1;
	return 0;
}

/* The database appears only when finished: complete, in WAL mode, with its
 * indexes; a file rolled back inside the load left nothing. */
static void test_finish_puts_complete_file_in_place(void **state)
{
	Dir *d = *state;
	Err err = {0};
	Store *st = NULL;
	assert_int_equal(store_bulk_open(d->db, &st, &err), 0);
	assert_non_null(st);
	assert_true(store_is_bulk(st));
	assert_true(exists(d->tmp));
	assert_int_equal(add_file(st, "a", 1, 300, 0), 0);
	assert_int_equal(add_file(st, "b", 2, 200, 1), 1);   /* rolled back */
	assert_int_equal(add_file(st, "c", 3, 100, 0), 0);
	assert_false(exists(d->db));                           /* not before the end */
	assert_int_equal(store_bulk_finish(st, &err), 0);
	assert_true(exists(d->db));
	assert_false(exists(d->tmp));
	char mode[16];
	q_text(d->db, "PRAGMA journal_mode", mode, sizeof mode);
	assert_string_equal(mode, "wal");
	assert_int_equal(q_int(d->db, "SELECT count(*) FROM spans"), 400);
	assert_int_equal(q_int(d->db, "SELECT count(*) FROM sources"), 2);
	assert_int_equal(q_int(d->db, "SELECT count(*) FROM traces"), 2);
	assert_int_equal(q_int(d->db, "SELECT count(*) FROM pragma_index_list('spans')"
	                              " WHERE name IN ('spans_identity','spans_root_start')"), 2);
	assert_int_equal(q_int(d->db, "SELECT count(*) FROM sqlite_master WHERE name = "
	                              "'sources_sha256'"), 1);
	/* the root-start index was built from the rows (INDEXED BY fails
	 * when the index is missing or unusable) */
	assert_int_equal(q_int(d->db, "SELECT count(*) FROM spans INDEXED BY spans_root_start"
	                              " WHERE parent_id = '' AND start_ns > 0"), 2);
	/* the finished file is an ordinary database: it opens and appends */
	assert_int_equal(store_open(d->db, 0, &st, &err), 0);
	assert_int_equal(add_file(st, "d", 4, 10, 0), 0);
	store_close(st);
	assert_int_equal(q_int(d->db, "SELECT count(*) FROM spans"), 410);
	q_text(d->db, "PRAGMA integrity_check", mode, sizeof mode);
	assert_string_equal(mode, "ok");
}

/* A write error found while syncing the file, early (the rows, while the
 * aggregates are computed) or at the end, fails the load with the error
 * named: no database appears and nothing is left beside it. An early
 * failure must not be lost: the final fsync on the same descriptor does
 * not report it again. */
static void test_sync_failure_fails_the_load(void **state)
{
	Dir *d = *state;
	for (int mode = 1; mode <= 2; mode++) {
		Err err = {0};
		Store *st = NULL;
		assert_int_equal(store_bulk_open(d->db, &st, &err), 0);
		assert_int_equal(add_file(st, "a", 1, 300, 0), 0);
		sync_fail = mode;
		int rc = store_bulk_finish(st, &err);
		sync_fail = 0;
		assert_int_equal(rc, TT_EIO);
		assert_non_null(strstr(err.msg, "syncing"));
		assert_non_null(strstr(err.msg, "Input/output error"));
		assert_false(exists(d->db));
		assert_false(exists(d->tmp));
	}
	/* and the next load of the same database works */
	Err err = {0};
	Store *st = NULL;
	assert_int_equal(store_bulk_open(d->db, &st, &err), 0);
	assert_int_equal(add_file(st, "a", 1, 30, 0), 0);
	assert_int_equal(store_bulk_finish(st, &err), 0);
	assert_int_equal(q_int(d->db, "SELECT count(*) FROM spans"), 30);
}

/* A database that exists already is not bulk-loaded: the caller appends. */
static void test_existing_database_is_not_bulk_loaded(void **state)
{
	Dir *d = *state;
	Err err = {0};
	Store *st = NULL;
	assert_int_equal(store_open(d->db, 0, &st, &err), 0);
	store_close(st);
	st = NULL;
	assert_int_equal(store_bulk_open(d->db, &st, &err), 0);
	assert_null(st);
	assert_false(exists(d->tmp));
}

/* Closing a load without finishing it removes everything it wrote. */
static void test_abandoned_load_leaves_nothing(void **state)
{
	Dir *d = *state;
	Err err = {0};
	Store *st = NULL;
	assert_int_equal(store_bulk_open(d->db, &st, &err), 0);
	assert_int_equal(add_file(st, "a", 1, 50, 0), 0);
	store_close(st);
	assert_false(exists(d->db));
	assert_false(exists(d->tmp));
}

/* A database created by another program during the load is left alone,
 * and nothing of the load stays. */
static void test_file_created_meanwhile_is_not_replaced(void **state)
{
	Dir *d = *state;
	Err err = {0};
	Store *st = NULL, *other = NULL;
	assert_int_equal(store_bulk_open(d->db, &st, &err), 0);
	assert_int_equal(add_file(st, "a", 1, 50, 0), 0);
	assert_int_equal(store_open(d->db, 0, &other, &err), 0);   /* e.g. `serve` */
	assert_int_equal(add_file(other, "b", 2, 7, 0), 0);
	store_close(other);
	assert_int_equal(store_bulk_finish(st, &err), STORE_BULK_RACED);
	assert_int_equal(q_int(d->db, "SELECT count(*) FROM spans"), 7);
	assert_false(exists(d->tmp));
}

/* The leftover of a killed load (with a stale WAL beside it) is started
 * afresh by the next load, and removed by store_bulk_cleanup() otherwise. */
static void test_leftover_of_killed_load(void **state)
{
	Dir *d = *state;
	Err err = {0};
	Store *st = NULL;
	char p[200];
	FILE *f = fopen(d->tmp, "w");
	assert_non_null(f);
	fputs("half a database", f);
	fclose(f);
	snprintf(p, sizeof p, "%s-wal", d->tmp);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs("stale", f);
	fclose(f);
	assert_int_equal(store_bulk_open(d->db, &st, &err), 0);
	assert_non_null(st);
	assert_false(exists(p));
	assert_int_equal(add_file(st, "a", 1, 20, 0), 0);
	assert_int_equal(store_bulk_finish(st, &err), 0);
	assert_int_equal(q_int(d->db, "SELECT count(*) FROM spans"), 20);

	f = fopen(d->tmp, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(store_bulk_cleanup(d->db), 1);
	assert_false(exists(d->tmp));
	assert_int_equal(store_bulk_cleanup(d->db), 0);
}

/* A load in progress holds its temporary file: cleanup does not take it,
 * and the load still finishes. */
static void test_cleanup_spares_a_running_load(void **state)
{
	Dir *d = *state;
	Err err = {0};
	Store *st = NULL;
	assert_int_equal(store_bulk_open(d->db, &st, &err), 0);
	assert_int_equal(store_bulk_cleanup(d->db), 0);
	assert_true(exists(d->tmp));
	assert_int_equal(add_file(st, "a", 1, 5, 0), 0);
	assert_int_equal(store_bulk_finish(st, &err), 0);
	assert_int_equal(q_int(d->db, "SELECT count(*) FROM spans"), 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_finish_puts_complete_file_in_place, dsetup, dteardown),
	    cmocka_unit_test_setup_teardown(test_sync_failure_fails_the_load, dsetup, dteardown),
	    cmocka_unit_test_setup_teardown(test_existing_database_is_not_bulk_loaded, dsetup, dteardown),
	    cmocka_unit_test_setup_teardown(test_abandoned_load_leaves_nothing, dsetup, dteardown),
	    cmocka_unit_test_setup_teardown(test_file_created_meanwhile_is_not_replaced, dsetup,
	                                    dteardown),
	    cmocka_unit_test_setup_teardown(test_leftover_of_killed_load, dsetup, dteardown),
	    cmocka_unit_test_setup_teardown(test_cleanup_spares_a_running_load, dsetup, dteardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
