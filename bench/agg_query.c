/*
 * agg_query.c - how long one question (window, baseline, class, model)
 * takes answered from the import-time aggregates and from the spans
 * (bench/README.md, "Interactive at scale").
 *
 * usage: tt_agg_query DB MODEL WINDOW BASELINE [RUNS]
 *
 * Per run, on one read-only connection (as the dashboard's worker holds):
 * the plain SQL pass over the span fields the analysis reads (the
 * yardstick), then analysis_from_aggregates() and analysis_run() for the
 * window + baseline over every class, then both again for each class of
 * the model (what a class change asks). Times are monotonic wall clock.
 * Also checks that the two answers agree on the window's requests, so a
 * fast wrong answer cannot pass for a fast one.
 *
 * Prints one key=value line per run, then the medians.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis.h"
#include "bench_util.h"
#include "model_json.h"
#include "timefmt.h"

static void die(const char *what, const char *msg)
{
	fprintf(stderr, "tt_agg_query: %s: %s\n", what, msg);
	exit(1);
}

/* One question both ways; adds their times to *agg and *exact. */
static void ask(Store *st, const AnalysisOptions *o, double *agg, double *exact)
{
	Err err = {0};
	Analysis *a = NULL, *e = NULL;
	double t0 = bench_now_ms();
	if (analysis_from_aggregates(st, o, &a, &err))
		die("aggregates", err.msg);
	double t1 = bench_now_ms();
	if (analysis_run(st, o, &e, &err))
		die("analysis", err.msg);
	double t2 = bench_now_ms();
	if (a->pop[POP_WINDOW].requests != e->pop[POP_WINDOW].requests)
		die("check", "the aggregates count other requests than the spans");
	*agg += t1 - t0;
	*exact += t2 - t1;
	analysis_free(a);
	analysis_free(e);
}

int main(int argc, char **argv)
{
	const char *db;
	Model *m;
	AnalysisOptions ao;
	int runs = bench_question(argc, argv, "tt_agg_query", &db, &m, &ao);
	Err err = {0};
	double sql[50], agg[50], exact[50], cagg[50], cexact[50];
	for (int i = 0; i < runs; i++) {
		sql[i] = bench_plain_sql_ms(db, "tt_agg_query");
		Store *st = NULL;
		if (store_open(db, STORE_READONLY, &st, &err))
			die(db, err.msg);
		agg[i] = exact[i] = cagg[i] = cexact[i] = 0;
		ask(st, &ao, &agg[i], &exact[i]);
		for (int c = 0; c < m->n_classes; c++) {
			AnalysisOptions oc = ao;
			oc.wclass = m->classes[c];
			ask(st, &oc, &cagg[i], &cexact[i]);
		}
		if (m->n_classes > 0) {
			cagg[i] /= m->n_classes;
			cexact[i] /= m->n_classes;
		}
		store_close(st);
		printf("run=%d plain_sql_ms=%.0f aggregates_ms=%.1f exact_ms=%.0f "
		       "class_aggregates_ms=%.1f class_exact_ms=%.0f\n",
		       i + 1, sql[i], agg[i], exact[i], cagg[i], cexact[i]);
		fflush(stdout);
	}
	printf("median runs=%d plain_sql_ms=%.0f aggregates_ms=%.1f exact_ms=%.0f "
	       "class_aggregates_ms=%.1f class_exact_ms=%.0f\n",
	       runs, bench_median(sql, runs), bench_median(agg, runs), bench_median(exact, runs), bench_median(cagg, runs),
	       bench_median(cexact, runs));
	model_free(m);
	return 0;
}
