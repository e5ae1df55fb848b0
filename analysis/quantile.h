/*
 * quantile.h - exact quantiles over raw observations.
 *
 * Nearest rank: the p-quantile of n sorted values is the value at rank
 * ceil(p/100 * n) (1-based). It is always an observed value, and it always
 * comes with its sample count. Percentiles are never averaged: to combine
 * populations, merge the observations and take the quantile of the merge.
 */
#ifndef TT_QUANTILE_H
#define TT_QUANTILE_H

#include <stdint.h>

typedef struct Quant {
	int64_t n;        /* observations; 0 means unknown (no data) */
	double p50;       /* milliseconds */
	double p90;
	double p99;
	double max;
} Quant;

/* Sorts v in place (ascending). */
void quant_sort(double *v, int64_t n);

/* Nearest-rank p-quantile (0 < p <= 100) of sorted v; NAN when n == 0. */
double quant_rank(const double *v, int64_t n, double p);

/* Fills q from v (sorted in place first). */
void quant_fill(Quant *q, double *v, int64_t n);

/* True when a p99 from n samples is too thin to trust: fewer than 100
 * observations means the "p99" is the maximum or close to it. */
int quant_small_sample(int64_t n);

#endif
