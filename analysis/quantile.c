/* quantile.c - see quantile.h. */
#include "quantile.h"

#include <math.h>
#include <stdlib.h>

#include <string.h>

#include "buf.h"

/* The order of doubles as unsigned keys: negative values bit-inverted,
 * others with the sign bit set (NaN sorts after +INFINITY). */
static uint64_t dkey(double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof u);
	return (u >> 63) ? ~u : u | (UINT64_C(1) << 63);
}

static double dval(uint64_t k)
{
	uint64_t u = (k >> 63) ? k & ~(UINT64_C(1) << 63) : ~k;
	double d;
	memcpy(&d, &u, sizeof d);
	return d;
}

#define RADIX_BITS 11
#define RADIX_PASSES 6 /* 6 x 11 >= 64 */
#define RADIX_SIZE (1 << RADIX_BITS)

/* Least-significant-digit radix sort: linear in n, and a pass is skipped
 * when every key has the same digit (the high digits of times of one
 * magnitude, the unused high bits of an index). Stable. Small arrays are
 * sorted by insertion. */
void quant_sort_keys(uint64_t *k, int64_t n)
{
	if (n < 2)
		return;
	if (n < 64) {
		for (int64_t i = 1; i < n; i++) {
			uint64_t x = k[i];
			int64_t j = i;
			for (; j > 0 && k[j - 1] > x; j--)
				k[j] = k[j - 1];
			k[j] = x;
		}
		return;
	}
	uint64_t *a = k, *b = xmalloc((size_t)n * sizeof *b);
	int64_t(*cnt)[RADIX_SIZE] = xcalloc(RADIX_PASSES, sizeof *cnt);
	for (int64_t i = 0; i < n; i++)
		for (int p = 0; p < RADIX_PASSES; p++)
			cnt[p][(k[i] >> (p * RADIX_BITS)) & (RADIX_SIZE - 1)]++;
	for (int p = 0; p < RADIX_PASSES; p++) {
		int64_t *c = cnt[p];
		if (c[(a[0] >> (p * RADIX_BITS)) & (RADIX_SIZE - 1)] == n)
			continue; /* one digit value: the pass changes nothing */
		int64_t sum = 0;
		for (int d = 0; d < RADIX_SIZE; d++) {
			int64_t t = c[d];
			c[d] = sum;
			sum += t;
		}
		for (int64_t i = 0; i < n; i++)
			b[c[(a[i] >> (p * RADIX_BITS)) & (RADIX_SIZE - 1)]++] = a[i];
		uint64_t *t = a;
		a = b;
		b = t;
	}
	if (a != k)
		memcpy(k, a, (size_t)n * sizeof *k);
	free(a == k ? b : a);
	free(cnt);
}

void quant_sort(double *v, int64_t n)
{
	if (n < 2)
		return;
	uint64_t *k = xmalloc((size_t)n * sizeof *k);
	for (int64_t i = 0; i < n; i++)
		k[i] = dkey(v[i]);
	quant_sort_keys(k, n);
	for (int64_t i = 0; i < n; i++)
		v[i] = dval(k[i]);
	free(k);
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

/* The value at which the weight counted from the largest reaches
 * from_top (top values weigh 1, rest values w each); *in_top is cleared
 * when a rest value was counted on the way. NAN when never reached. */
static double top_walk(const double *top, int64_t k, const double *rest, int64_t kr, double w,
                       double from_top, int *in_top)
{
	double acc = 0;
	int64_t i = 0, j = 0;
	while (i < k || j < kr) {
		int take_top = j >= kr || (i < k && top[i] >= rest[j]);
		double x = take_top ? top[i++] : rest[j++];
		acc += take_top ? 1 : w;
		if (!take_top)
			*in_top = 0;
		if (acc >= from_top - 1e-9)
			return x;
	}
	return NAN;
}

int quant_top(const double *top, int64_t k, const double *rest, int64_t kr, int64_t n, double p,
              double *v, double *lo, double *hi)
{
	*v = *lo = *hi = NAN;
	if (n < 0 || n < k)
		return QUANT_TOP_UNCOUNTED;
	if (kr < 0 || (k + kr) < 1 || !(p > 0 && p < 100) || (k == n && kr > 0))
		return QUANT_TOP_BELOW;
	double w = kr > 0 ? (double)(n - k) / (double)kr : 0;
	int64_t r = (int64_t)ceil(p / 100.0 * (double)n);
	if (r < 1)
		r = 1;
	int64_t l, u;
	quant_ci_ranks(n, p, &l, &u);
	/* ascending rank r is the (n - r + 1)-th from the largest */
	int in_top = 1;
	*v = top_walk(top, k, rest, kr, w, (double)(n - r + 1), &in_top);
	*lo = l >= 1 ? top_walk(top, k, rest, kr, w, (double)(n - l + 1), &in_top) : -INFINITY;
	*hi = u <= n ? top_walk(top, k, rest, kr, w, (double)(n - u + 1), &in_top) : INFINITY;
	if (isnan(*v) || isnan(*lo) || isnan(*hi)) {
		*v = *lo = *hi = NAN;
		return QUANT_TOP_BELOW;
	}
	return in_top ? QUANT_TOP_EXACT : QUANT_TOP_WEIGHTED;
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

void quant_change(double w, double wlo, double whi, double b, double blo, double bhi, double *d,
                  double *d_lo, double *d_hi, double *r, double *r_lo, double *r_hi)
{
	double wl = isnan(wlo) || wlo > w ? w : wlo, wh = isnan(whi) || whi < w ? w : whi;
	double bl = isnan(blo) || blo > b ? b : blo, bh = isnan(bhi) || bhi < b ? b : bhi;
	*d = w - b;
	double a1 = w - wl, a2 = bh - b, b1 = wh - w, b2 = b - bl;
	*d_lo = *d - sqrt(a1 * a1 + a2 * a2);
	*d_hi = *d + sqrt(b1 * b1 + b2 * b2);
	*r = *r_lo = *r_hi = NAN;
	if (b > 0 && w >= 0) {
		*r = w / b;
		if (w > 0) {
			double lw = log(w), lb = log(b);
			double x1 = wl > 0 ? lw - log(wl) : INFINITY, x2 = bh > 0 ? log(bh) - lb : INFINITY;
			double y1 = wh > 0 ? log(wh) - lw : INFINITY, y2 = bl > 0 ? lb - log(bl) : INFINITY;
			*r_lo = exp(lw - lb - sqrt(x1 * x1 + x2 * x2));
			*r_hi = exp(lw - lb + sqrt(y1 * y1 + y2 * y2));
		} else {
			*r_lo = 0;
			*r_hi = bl > 0 ? wh / bl : INFINITY;
		}
	} else if (b == 0 && w > 0) {
		*r = *r_hi = INFINITY;
		*r_lo = bh > 0 ? wl / bh : 0;
	}
}
