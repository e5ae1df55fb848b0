/*
 * sketch.c - log-spaced histogram with relative error SKETCH_ALPHA
 * (sketch.h says the contract).
 *
 * Invariants: idx[] is strictly ascending, cnt[k] > 0 for every stored
 * bucket, n == zero + sum(cnt), min/max are the exact extremes of what was
 * added (NAN while empty). Adding a value is a binary search plus, for a
 * new bucket, one memmove: durations of one node cluster in a few dozen
 * buckets, so the arrays stay short.
 *
 * Encoding (version 1): byte 1, varint n, varint zero, min and max as
 * IEEE-754 doubles (8 bytes little-endian each), varint bucket count, then
 * per bucket the zigzag varint of the index delta and the varint count.
 */
#include "sketch.h"
#include "varint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ln(gamma); a constant the compiler folds (no shared state between threads) */
static double log_gamma(void)
{
	return log((1 + SKETCH_ALPHA) / (1 - SKETCH_ALPHA));
}

void sketch_init(Sketch *s)
{
	memset(s, 0, sizeof *s);
	s->min = s->max = NAN;
}

void sketch_fini(Sketch *s)
{
	free(s->idx);
	free(s->cnt);
	sketch_init(s);
}

void sketch_reset(Sketch *s)
{
	s->n = s->zero = 0;
	s->nb = 0;
	s->min = s->max = NAN;
}

/* Position of bucket i in s, or where it would go (*found 0). */
static int find(const Sketch *s, int32_t i, int *found)
{
	int lo = 0, hi = s->nb;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (s->idx[mid] < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < s->nb && s->idx[lo] == i;
	return lo;
}

static void add_bucket(Sketch *s, int32_t i, int64_t c)
{
	int found;
	int k = find(s, i, &found);
	if (found) {
		s->cnt[k] += c;
		return;
	}
	if (s->nb == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 8;
		s->idx = xrealloc(s->idx, (size_t)s->cap * sizeof *s->idx);
		s->cnt = xrealloc(s->cnt, (size_t)s->cap * sizeof *s->cnt);
	}
	memmove(s->idx + k + 1, s->idx + k, (size_t)(s->nb - k) * sizeof *s->idx);
	memmove(s->cnt + k + 1, s->cnt + k, (size_t)(s->nb - k) * sizeof *s->cnt);
	s->idx[k] = i;
	s->cnt[k] = c;
	s->nb++;
}

static void extremes(Sketch *s, double lo, double hi)
{
	if (isnan(s->min) || lo < s->min)
		s->min = lo;
	if (isnan(s->max) || hi > s->max)
		s->max = hi;
}

static int32_t bucket_of(double ms)
{
	double b = ceil(log(ms) / log_gamma());
	if (b < -100000)
		b = -100000;
	if (b > 100000)
		b = 100000;
	return (int32_t)b;
}

static double estimate(int32_t i)
{
	double gamma = (1 + SKETCH_ALPHA) / (1 - SKETCH_ALPHA);
	return 2 * exp((double)i * log_gamma()) / (1 + gamma);
}

void sketch_add(Sketch *s, double ms)
{
	if (isnan(ms))
		return;
	s->n++;
	extremes(s, ms, ms);
	if (!(ms >= SKETCH_MIN_MS)) {
		s->zero++;
		return;
	}
	add_bucket(s, bucket_of(ms), 1);
}

int sketch_remove(Sketch *s, double ms)
{
	if (isnan(ms) || s->n <= 0)
		return -1;
	if (!(ms >= SKETCH_MIN_MS)) {
		if (s->zero <= 0)
			return -1;
		s->zero--;
	} else {
		int found;
		int k = find(s, bucket_of(ms), &found);
		if (!found)
			return -1;
		if (--s->cnt[k] == 0) {
			memmove(s->idx + k, s->idx + k + 1, (size_t)(s->nb - k - 1) * sizeof *s->idx);
			memmove(s->cnt + k, s->cnt + k + 1, (size_t)(s->nb - k - 1) * sizeof *s->cnt);
			s->nb--;
		}
	}
	s->n--;
	if (s->n == 0) {
		s->min = s->max = NAN;
		return 0;
	}
	/* an extreme taken away: the next one is known by its bucket */
	if (ms <= s->min)
		s->min = s->zero > 0 ? 0 : estimate(s->idx[0]);
	if (ms >= s->max)
		s->max = s->nb > 0 ? estimate(s->idx[s->nb - 1]) : 0;
	return 0;
}

void sketch_merge(Sketch *to, const Sketch *from)
{
	if (from->n == 0)
		return;
	to->n += from->n;
	to->zero += from->zero;
	extremes(to, from->min, from->max);
	for (int k = 0; k < from->nb; k++)
		add_bucket(to, from->idx[k], from->cnt[k]);
}

double sketch_quantile(const Sketch *s, double p)
{
	if (s->n <= 0)
		return NAN;
	int64_t rank = (int64_t)ceil(p / 100.0 * (double)s->n);
	if (rank < 1)
		rank = 1;
	if (rank >= s->n)
		return s->max;
	if (rank <= s->zero)
		return s->min < 0 ? s->min : 0; /* zero bucket: zero or less */
	int64_t seen = s->zero;
	for (int k = 0; k < s->nb; k++) {
		seen += s->cnt[k];
		if (seen >= rank) {
			double v = estimate(s->idx[k]);
			if (v < s->min)
				v = s->min;
			if (v > s->max)
				v = s->max;
			return v;
		}
	}
	return s->max;
}

void sketch_quant(const Sketch *s, Quant *q)
{
	q->n = s->n;
	q->p50 = sketch_quantile(s, 50);
	q->p90 = sketch_quantile(s, 90);
	q->p99 = sketch_quantile(s, 99);
	q->max = s->n ? s->max : NAN;
	q->p90_lo = q->p90_hi = q->p99_lo = q->p99_hi = NAN;
}

/* ---- encoding --------------------------------------------------------------- */

static void put_double(Buf *b, double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof u);
	unsigned char t[8];
	for (int i = 0; i < 8; i++)
		t[i] = (unsigned char)(u >> (8 * i));
	buf_add(b, t, 8);
}

void sketch_encode(const Sketch *s, Buf *b)
{
	buf_addc(b, 1);
	var_put(b, (uint64_t)s->n);
	var_put(b, (uint64_t)s->zero);
	put_double(b, s->min);
	put_double(b, s->max);
	var_put(b, (uint64_t)s->nb);
	int64_t prev = 0;
	for (int k = 0; k < s->nb; k++) {
		int64_t d = (int64_t)s->idx[k] - prev;
		prev = s->idx[k];
		var_put(b, var_zigzag((uint64_t)d));
		var_put(b, (uint64_t)s->cnt[k]);
	}
}

static double get_double(VarReader *r)
{
	if (r->end - r->p < 8) {
		r->bad = 1;
		return NAN;
	}
	uint64_t u = 0;
	for (int i = 0; i < 8; i++)
		u |= (uint64_t)r->p[i] << (8 * i);
	r->p += 8;
	double d;
	memcpy(&d, &u, sizeof d);
	return d;
}

int sketch_decode_merge(Sketch *s, const void *p, size_t len)
{
	VarReader r = {p, (const unsigned char *)p + len, 0};
	if (len < 1 || *r.p++ != 1)
		return -1;
	Sketch t;
	sketch_init(&t);
	uint64_t n = var_get(&r), zero = var_get(&r);
	double mn = get_double(&r), mx = get_double(&r);
	uint64_t nb = var_get(&r);
	if (r.bad || n > INT64_MAX || zero > n || nb > n || nb > 1000000)
		return -1;
	int64_t prev = 0;
	uint64_t sum = zero;
	for (uint64_t k = 0; k < nb && !r.bad; k++) {
		uint64_t z = var_get(&r), c = var_get(&r);
		int64_t d = (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
		int64_t i = prev + d;
		if ((k > 0 && d <= 0) || i < INT32_MIN || i > INT32_MAX || c == 0 || c > n - sum) {
			r.bad = 1;
			break;
		}
		prev = i;
		sum += c;
		add_bucket(&t, (int32_t)i, (int64_t)c);
	}
	if (r.bad || r.p != r.end || sum != n || (n > 0 && (isnan(mn) || isnan(mx) || mn > mx))) {
		sketch_fini(&t);
		return -1;
	}
	t.n = (int64_t)n;
	t.zero = (int64_t)zero;
	t.min = n ? mn : NAN;
	t.max = n ? mx : NAN;
	sketch_merge(s, &t);
	sketch_fini(&t);
	return 0;
}
