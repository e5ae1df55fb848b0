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

void quant_fill(Quant *q, double *v, int64_t n)
{
	q->n = n;
	if (n == 0) {
		q->p50 = q->p90 = q->p99 = q->max = NAN;
		return;
	}
	quant_sort(v, n);
	q->p50 = quant_rank(v, n, 50);
	q->p90 = quant_rank(v, n, 90);
	q->p99 = quant_rank(v, n, 99);
	q->max = v[n - 1];
}

int quant_small_sample(int64_t n)
{
	return n < 100;
}
