/*
 * bench_util.h - what the C benchmarks share: a monotonic clock, the
 * median of a few runs and the plain SQL pass every figure is set beside.
 *
 * The plain SQL pass is one read of the span fields the analysis needs,
 * summed so SQLite must read them (total(): nanosecond sums overflow 64
 * bits). Its text is bench/plain_pass.sql, which the shell benchmarks read
 * too, so every table's reference is the same query.
 */
#ifndef TT_BENCH_UTIL_H
#define TT_BENCH_UTIL_H

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "analysis.h"
#include "model_json.h"
#include "plain_pass.h"   /* TT_PLAIN_PASS_SQL, generated from plain_pass.sql */
#include "timefmt.h"

static inline double bench_now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static inline int bench_cmp_d(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

/* The median of v[0..n) (sorts v). */
static inline double bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, bench_cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Milliseconds of one plain SQL pass over db (read-only); prog names the
 * program in an error, which exits 1. */
static inline double bench_plain_sql_ms(const char *db, const char *prog)
{
	sqlite3 *h = NULL;
	sqlite3_stmt *s = NULL;
	const char *what = db;
	if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		goto fail;
	what = "plain SQL";
	double t0 = bench_now_ms();
	if (sqlite3_prepare_v2(h, TT_PLAIN_PASS_SQL, -1, &s, NULL) != SQLITE_OK)
		goto fail;
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		;
	if (rc != SQLITE_DONE)
		goto fail;
	double ms = bench_now_ms() - t0;
	sqlite3_finalize(s);
	sqlite3_close(h);
	return ms;
fail:
	fprintf(stderr, "%s: %s: %s\n", prog, what, sqlite3_errmsg(h));
	exit(1);
}

/* The question both C benchmarks ask: PROG DB MODEL WINDOW BASELINE
 * [RUNS]. Fills *db, *m (free with model_free) and *ao (window, baseline,
 * model) and returns the number of runs (default 3, at most 50); a wrong
 * command line or an unreadable model or range exits (2 or 1). */
static inline int bench_question(int argc, char **argv, const char *prog, const char **db,
                                 Model **m, AnalysisOptions *ao)
{
	if (argc < 5 || argc > 6) {
		fprintf(stderr, "usage: %s DB MODEL WINDOW BASELINE [RUNS]\n", prog);
		exit(2);
	}
	*db = argv[1];
	int runs = argc == 6 ? atoi(argv[5]) : 3;
	if (runs < 1 || runs > 50)
		runs = 3;
	Err err = {0};
	const char *what = argv[2];
	*m = NULL;
	if (model_load(argv[2], m, &err))
		goto fail;
	*ao = (AnalysisOptions){.model = *m, .period.has_baseline = 1};
	what = "window";
	if (time_parse_range(argv[3], &ao->period.win.from, &ao->period.win.to, &err))
		goto fail;
	what = "baseline";
	if (time_parse_range(argv[4], &ao->period.base.from, &ao->period.base.to, &err))
		goto fail;
	return runs;
fail:
	fprintf(stderr, "%s: %s: %s\n", prog, what, err.msg);
	exit(1);
}

#endif
