/*
 * board_latency.c - "window change -> Board updated" with and without the
 * shared analysis (bench/README.md, "TUI latency").
 *
 * usage: tt_board_latency DB MODEL WINDOW BASELINE [RUNS]
 *
 * Replays, through the same library calls, what the dashboard does after
 * the window (or baseline) is changed to WINDOW/BASELINE:
 *   1. its analysis worker computes the analysis of the new question on its
 *      own read-only connection (analysis_run(): a new question reads every
 *      span; live.c does the same through analysis_state_update) and the
 *      DAG is drawn with it;
 *   2. the header and the Board then ask the background diagnosis
 *      (drills/dx_live.c, as cli/board.c does) for that window and
 *      baseline, and redraw when it is handed over.
 * "shared" passes the dashboard's analysis with the request (what
 * cli/board.c does now); "own" passes none, so the diagnosis computes the
 * same analysis again (what it did before). Each run opens a fresh DxLive
 * (nothing cached) and alternates the order of the two modes. The clock
 * (monotonic) starts before step 1 and stops when dx_live_get() hands over
 * the diagnosis of that very window; it polls every 2 ms.
 *
 * Also measured in the same run, for the ratio across machines: the plain
 * SQL pass over the span fields the analysis reads (one SELECT summing
 * them over every span, as issue 14 describes).
 *
 * Prints one key=value line per run and mode, then the medians.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis.h"
#include "bench_util.h"
#include "dx_live.h"
#include "model_json.h"
#include "timefmt.h"

static void die(const char *what, const char *msg)
{
	fprintf(stderr, "tt_board_latency: %s: %s\n", what, msg);
	exit(1);
}

typedef struct Run {
	double analysis_ms;   /* step 1 */
	double board_ms;      /* step 1 + 2 */
	unsigned reused;
} Run;

static Run one(const char *db, const Model *m, const AnalysisOptions *ao, int shared)
{
	Err err = {0};
	Store *st = NULL;
	DxLive *l = NULL;
	if (store_open(db, STORE_READONLY, &st, &err) || dx_live_open(db, m, &l, &err))
		die(db, err.msg);
	Run r = {0};
	double t0 = bench_now_ms();
	Analysis *a = NULL;
	if (analysis_run(st, ao, &a, &err))
		die("analysis", err.msg);
	r.analysis_ms = bench_now_ms() - t0;
	DxLiveKey k = dx_live_key(a);
	int fresh = 0;
	for (;;) {
		const Diagnosis *d = dx_live_get(l, &k, shared ? a : NULL, &fresh);
		if (d && fresh)
			break;
		if (!dx_live_busy(l) && dx_live_error(l)[0])
			die("diagnosis", dx_live_error(l));
		struct timespec ts = {0, 2 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	r.board_ms = bench_now_ms() - t0;
	unsigned computed;
	dx_live_counts(l, &r.reused, &computed);
	dx_live_close(l);
	analysis_free(a);
	store_close(st);
	return r;
}

int main(int argc, char **argv)
{
	const char *db;
	Model *m;
	AnalysisOptions ao;
	int runs = bench_question(argc, argv, "tt_board_latency", &db, &m, &ao);
	double sh_a[50], sh_b[50], own_a[50], own_b[50], sql[50];
	for (int i = 0; i < runs; i++) {
		sql[i] = bench_plain_sql_ms(db, "tt_board_latency");
		for (int j = 0; j < 2; j++) {
			int shared = (i + j) % 2 == 0;
			Run r = one(db, m, &ao, shared);
			printf("run=%d mode=%s analysis_ms=%.0f board_ms=%.0f diagnosis_ms=%.0f "
			       "reused=%u plain_sql_ms=%.0f\n",
			       i + 1, shared ? "shared" : "own", r.analysis_ms, r.board_ms,
			       r.board_ms - r.analysis_ms, r.reused, sql[i]);
			fflush(stdout);
			if (r.reused != (unsigned)shared)
				die("mode", "the diagnosis did not do what the mode says");
			(shared ? sh_a : own_a)[i] = r.analysis_ms;
			(shared ? sh_b : own_b)[i] = r.board_ms;
		}
	}
	double all_a[100];
	memcpy(all_a, sh_a, (size_t)runs * sizeof *all_a);
	memcpy(all_a + runs, own_a, (size_t)runs * sizeof *all_a);
	printf("median runs=%d plain_sql_ms=%.0f analysis_ms=%.0f board_shared_ms=%.0f "
	       "board_own_ms=%.0f\n",
	       runs, bench_median(sql, runs), bench_median(all_a, 2 * runs), bench_median(sh_b, runs),
	       bench_median(own_b, runs));
	model_free(m);
	return 0;
}
