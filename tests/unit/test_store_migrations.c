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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
