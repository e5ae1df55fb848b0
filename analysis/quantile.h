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
	/* 95 % distribution-free intervals (order statistics, see quant_ci);
	 * -INFINITY / INFINITY when the sample is too small for a bound */
	double p90_lo, p90_hi;
	double p99_lo, p99_hi;
} Quant;

/* Confidence level of every interval the analysis reports. */
#define QUANT_CI_LEVEL 0.95

/* Sorts v in place (ascending). */
void quant_sort(double *v, int64_t n);

/* Sorts unsigned keys in place, ascending and stably (a radix sort, the
 * one quant_sort uses): for sorting anything else, encode its order in
 * the high bits and what it is, or where it came from, in the low ones. */
void quant_sort_keys(uint64_t *k, int64_t n);

/* Nearest-rank p-quantile (0 < p <= 100) of sorted v; NAN when n == 0. */
double quant_rank(const double *v, int64_t n, double p);

/* Fills q from v (sorted in place first). */
void quant_fill(Quant *q, double *v, int64_t n);

/* The 1-based ranks l and u of the order statistics that bound the
 * p-quantile (0 < p < 100) of n observations with probability of at least
 * QUANT_CI_LEVEL, whatever the distribution: P(l <= B < u) >= level with
 * B ~ Binomial(n, p/100) the count of observations below the true
 * quantile. *l is 0 when no observation bounds it from below, *u is n + 1
 * when none bounds it from above (too few observations). */
void quant_ci_ranks(int64_t n, double p, int64_t *l, int64_t *u);

/* The interval of quant_ci_ranks() read off sorted v: *lo = v[l-1] or
 * -INFINITY, *hi = v[u-1] or INFINITY. NAN, NAN when n == 0. */
void quant_ci(const double *v, int64_t n, double p, double *lo, double *hi);

/* The p-quantile (0 < p < 100) of n observations of which the k largest
 * are known, top[0] >= top[1] >= ... >= top[k-1] (a pulled slowest set
 * with the count of its range), and the rest are represented by a uniform
 * sample of kr of them, rest[] (descending; kr may be 0), each standing
 * for (n - k) / kr observations. The nearest rank ceil(p/100 * n) and the
 * ranks of its order-statistic interval (quant_ci_ranks()) are found by
 * walking both lists from the largest, counting each value's weight.
 *  QUANT_TOP_EXACT     every rank needed was reached within the top
 *                      before any sampled value: *v, *lo, *hi are exactly
 *                      what quant_rank() and quant_ci() give on all n
 *                      (*hi INFINITY when no observation bounds it)
 *  QUANT_TOP_WEIGHTED  a sampled value lies above a rank needed (a value
 *                      of the rest above the top's last, as when the back
 *                      end ranks by another length than the percentile
 *                      reads): the figures are the stratified estimate
 *  QUANT_TOP_BELOW     a rank needed lies below the top and there is no
 *                      sample to reach it
 *  QUANT_TOP_UNCOUNTED n is not known exactly (negative, or fewer than k:
 *                      a listing that was capped)
 * The outputs are NAN unless EXACT or WEIGHTED. */
enum { QUANT_TOP_UNCOUNTED = -1, QUANT_TOP_BELOW = 0, QUANT_TOP_EXACT = 1,
       QUANT_TOP_WEIGHTED = 2 };
int quant_top(const double *top, int64_t k, const double *rest, int64_t kr, int64_t n, double p,
              double *v, double *lo, double *hi);

/* The change from a baseline value b (interval [blo, bhi]) to a window
 * value w ([wlo, whi]): the difference d = w - b and the ratio r = w / b,
 * each with a 95 % interval by MOVER (Zou & Donner 2008: each side's
 * distance to its own bounds, combined; the ratio on the log scale when
 * both are positive). An infinite bound (too few observations) stays
 * infinite; NAN bounds count as none (the value itself). r and its bounds
 * are NAN when b is not positive (r infinite when only w is). */
void quant_change(double w, double wlo, double whi, double b, double blo, double bhi, double *d,
                  double *d_lo, double *d_hi, double *r, double *r_lo, double *r_hi);

/* True when a p99 from n samples is too thin to trust: fewer than 100
 * observations means the "p99" is the maximum or close to it. */
int quant_small_sample(int64_t n);

#endif
