/*
 * store_env.h - a fresh database in a temporary folder per test, shared by
 * the importer tests (header-only; not a test itself).
 */
#ifndef TT_TEST_STORE_ENV_H
#define TT_TEST_STORE_ENV_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "import.h"
#include "store.h"

typedef struct Env {
	char dir[64];
	char db[128];
	Store *st;
} Env;

static inline int setup(void **state)
{
	Env *e = calloc(1, sizeof *e);
	snprintf(e->dir, sizeof e->dir, "/tmp/tt-import-XXXXXX");
	assert_non_null(mkdtemp(e->dir));
	snprintf(e->db, sizeof e->db, "%s/t.db", e->dir);
	Err err = {0};
	assert_int_equal(store_open(e->db, 0, &e->st, &err), 0);
	*state = e;
	return 0;
}

static inline int teardown(void **state)
{
	Env *e = *state;
	store_close(e->st);
	char p[200];
	const char *sfx[] = {"", "-wal", "-shm"};
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof p, "%s%s", e->db, sfx[i]);
		unlink(p);
	}
	rmdir(e->dir);
	free(e);
	return 0;
}

static inline int import(Env *e, const char *path, const char *format, ImportResult *res, Err *err)
{
	ImportOptions o = {.format = format};
	err_clear(err);
	return import_file(e->st, path, &o, res, err);
}

#endif
