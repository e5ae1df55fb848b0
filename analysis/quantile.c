/* quantile.c - see quantile.h. */
#include "quantile.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void quant_sort(double *v, int64_t n)
{
	if (n > 1)
		qsort(v, (size_t)n, sizeof *v, cmp_double);
}

double quant_rank(const double *v, int64_t n, double p)
{
	if (n <= 0)
		return NAN;
	double r = ceil(p / 100.0 * (double)n);
	int64_t rank = (int64_t)r;
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return v[rank - 1];
}

/* log of the Binomial(n, p) probability of k */
static double log_pmf(int64_t n, int64_t k, double lp, double lq)
{
	return lgamma((double)n + 1) - lgamma((double)k + 1) - lgamma((double)(n - k) + 1) +
	       (double)k * lp + (double)(n - k) * lq;
}

void quant_ci_ranks(int64_t n, double p, int64_t *l, int64_t *u)
{
	double tail = (1 - QUANT_CI_LEVEL) / 2;
	double pr = p / 100.0;
	*l = 0;
	*u = n + 1;
	if (n <= 0 || pr <= 0 || pr >= 1)
		return;
	double lp = log(pr), lq = log1p(-pr);
	double mean = (double)n * pr, sd = sqrt((double)n * pr * (1 - pr));
	/* the binomial mass beyond 12 standard deviations is far below the
	 * tail probability, so the sums start and stop there */
	int64_t k0 = (int64_t)floor(mean - 12 * sd - 2), k1 = (int64_t)ceil(mean + 12 * sd + 2);
	if (k0 < 0)
		k0 = 0;
	if (k1 > n)
		k1 = n;
	/* lower: the largest l with P(B <= l - 1) <= tail */
	double cdf = 0;
	for (int64_t k = k0; k <= k1; k++) {
		cdf += exp(log_pmf(n, k, lp, lq));
		if (cdf > tail)
			break;
		*l = k + 1;
	}
	/* upper: the smallest u with P(B >= u) <= tail */
	double sf = 0;
	for (int64_t k = k1; k >= k0; k--) {
		sf += exp(log_pmf(n, k, lp, lq));
		if (sf > tail)
			break;
		*u = k;
	}
	if (*u <= *l)
		*u = *l + 1;
}

void quant_ci(const double *v, int64_t n, double p, double *lo, double *hi)
{
	if (n <= 0) {
		*lo = *hi = NAN;
		return;
	}
	int64_t l, u;
	quant_ci_ranks(n, p, &l, &u);
	*lo = l >= 1 ? v[l - 1] : -INFINITY;
	*hi = u <= n ? v[u - 1] : INFINITY;
}

void quant_fill(Quant *q, double *v, int64_t n)
{
	q->n = n;
	if (n == 0) {
		q->p50 = q->p90 = q->p99 = q->max = NAN;
		q->p90_lo = q->p90_hi = q->p99_lo = q->p99_hi = NAN;
		return;
	}
	quant_sort(v, n);
	q->p50 = quant_rank(v, n, 50);
	q->p90 = quant_rank(v, n, 90);
	q->p99 = quant_rank(v, n, 99);
	q->max = v[n - 1];
	quant_ci(v, n, 90, &q->p90_lo, &q->p90_hi);
	quant_ci(v, n, 99, &q->p99_lo, &q->p99_hi);
}

int quant_small_sample(int64_t n)
{
	return n < 100;
}
