/*
 * store_env.h - a fresh database in a temporary folder per test, shared by
 * the importer tests, and a way to read metric points back (header-only;
 * include it after cmocka.h; not a test itself).
 */
#ifndef TT_TEST_STORE_ENV_H
#define TT_TEST_STORE_ENV_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* ---- reading metric points back ----------------------------------------- */

#define MAXP 16

/* Copies of the points a scan returned (a scan's pointers are borrowed). */
typedef struct Got {
	int n;
	StoreMetricRow r[MAXP];
	char labels[MAXP][256], type[MAXP][32], unit[MAXP][32], temporality[MAXP][16];
	char service[MAXP][32], scheme[MAXP][16], help[MAXP][128];
	StoreMetricBucket b[MAXP][16];
	StoreMetricQuantile q[MAXP][8];
	StoreMetricExemplar ex[MAXP][8];
	char ex_trace[MAXP][8][64], ex_span[MAXP][8][32], ex_labels[MAXP][8][256];
} Got;

static inline int collect(void *ctx, const StoreMetricRow *row)
{
	Got *g = ctx;
	if (g->n >= MAXP)
		return 1;
	int i = g->n++;
	g->r[i] = *row;
	snprintf(g->labels[i], sizeof g->labels[i], "%s", row->labels_json);
	snprintf(g->type[i], sizeof g->type[i], "%s", row->type);
	snprintf(g->unit[i], sizeof g->unit[i], "%s", row->unit);
	snprintf(g->temporality[i], sizeof g->temporality[i], "%s", row->temporality);
	snprintf(g->service[i], sizeof g->service[i], "%s", row->service);
	snprintf(g->scheme[i], sizeof g->scheme[i], "%s", row->scheme);
	snprintf(g->help[i], sizeof g->help[i], "%s", row->help);
	/* the row's pointers are borrowed: keep only the copies */
	g->r[i].family = g->r[i].type = g->r[i].unit = g->r[i].help = NULL;
	g->r[i].temporality = g->r[i].labels_json = g->r[i].service = g->r[i].scheme = NULL;
	g->r[i].buckets = NULL;
	g->r[i].quantiles = NULL;
	g->r[i].exemplars = NULL;
	for (int k = 0; k < row->n_buckets && k < 16; k++)
		g->b[i][k] = row->buckets[k];
	for (int k = 0; k < row->n_quantiles && k < 8; k++)
		g->q[i][k] = row->quantiles[k];
	for (int k = 0; k < row->n_exemplars && k < 8; k++) {
		g->ex[i][k] = row->exemplars[k];
		snprintf(g->ex_trace[i][k], 64, "%s", row->exemplars[k].trace_id);
		snprintf(g->ex_span[i][k], 32, "%s", row->exemplars[k].span_id);
		snprintf(g->ex_labels[i][k], 256, "%s", row->exemplars[k].labels_json);
	}
	return 0;
}

/* Every point of family (labels: a subset filter, service: or NULL), with
 * buckets, quantiles and exemplars; fails the test on a store error. The
 * result is static: valid until the next call. */
static inline Got *points_of(Env *e, const char *family, const char *labels, const char *service)
{
	static Got g;
	memset(&g, 0, sizeof g);
	StoreMetricQuery q = {
		.family = family,
		.labels_json = labels,
		.service = service,
		.from_ns = INT64_MIN,
		.to_ns = INT64_MAX,
		.flags = STORE_METRIC_BUCKETS | STORE_METRIC_QUANTILES | STORE_METRIC_EXEMPLARS,
	};
	Err err = {0};
	if (store_metric_points_scan(e->st, &q, collect, &g, &err))
		fail_msg("scan %s: %s", family, err.msg);
	return &g;
}

#endif
