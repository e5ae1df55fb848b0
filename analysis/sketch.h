/*
 * sketch.h - a mergeable log-spaced histogram of durations with a stated
 * relative error, for quantiles kept ahead of time (import-time
 * aggregates) and merged across minutes, hosts and classes.
 *
 * Bucket i holds the values x with gamma^(i-1) < x <= gamma^i, where
 * gamma = (1 + SKETCH_ALPHA) / (1 - SKETCH_ALPHA); a bucket is read as
 * 2 gamma^i / (1 + gamma), which is within SKETCH_ALPHA of every value in
 * it, relative to that value (the scheme of DDSketch). Quantiles are taken
 * by nearest rank over the bucket counts, the same rank the exact path
 * uses (quantile.h), so the p-quantile of a sketch is within SKETCH_ALPHA
 * of the exact nearest-rank p-quantile of the same observations, whatever
 * their distribution, and merging two sketches gives the sketch of the
 * merged observations (counts add). The smallest and largest values are
 * kept exactly, and an estimate is clamped to them. Values of zero or
 * less (and below SKETCH_MIN_MS) are counted in a zero bucket read as 0.
 *
 * Sparse: only buckets that hold a value are stored (sorted), so a sketch
 * of a narrow distribution is small. Not thread-safe; the caller owns it.
 */
#ifndef TT_SKETCH_H
#define TT_SKETCH_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "quantile.h"

#define SKETCH_ALPHA 0.01      /* relative error of every quantile (1 %) */
#define SKETCH_MIN_MS 1e-9     /* below this a value counts as zero */

typedef struct Sketch {
	int64_t n;                 /* observations */
	int64_t zero;              /* of which in the zero bucket */
	double min, max;           /* exact; NAN when n == 0 */
	int32_t *idx;              /* bucket indexes, ascending */
	int64_t *cnt;              /* counts, parallel to idx */
	int nb, cap;
} Sketch;

void sketch_init(Sketch *s);
void sketch_fini(Sketch *s);        /* frees the buckets; s may be reused after init */
void sketch_reset(Sketch *s);       /* empty, keeps memory */

/* Adds one observation in milliseconds (NAN is ignored). */
void sketch_add(Sketch *s, double ms);

/* Adds every observation of from to to (from is unchanged). */
void sketch_merge(Sketch *to, const Sketch *from);

/* Takes back one observation added earlier (ms as it was added): counts
 * and buckets are as if it had never been added. When it was the
 * smallest or the largest, min or max becomes the estimate of the new
 * extreme bucket (a sketch does not know the next value exactly), so
 * after removals they too are within SKETCH_ALPHA. Returns 0, or -1 (s
 * unchanged) when s holds no observation in that value's bucket. */
int sketch_remove(Sketch *s, double ms);

/* Nearest-rank p-quantile (0 < p <= 100), within SKETCH_ALPHA of the exact
 * one; NAN when empty. p = 100 is the exact maximum. */
double sketch_quantile(const Sketch *s, double p);

/* Fills q (n, p50, p90, p99, max) from s. The intervals are left NAN: a
 * sketch's figures are estimates, replaced by exact ones with their
 * intervals when those are computed. */
void sketch_quant(const Sketch *s, Quant *q);

/* Appends a compact, portable encoding of s (little-endian varints) to b. */
void sketch_encode(const Sketch *s, Buf *b);

/* Merges the encoded sketch p[0..len) into s. Returns 0, or -1 when the
 * bytes are not a sketch encoding (s is then unchanged). */
int sketch_decode_merge(Sketch *s, const void *p, size_t len);

#endif
