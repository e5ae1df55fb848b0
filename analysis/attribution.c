/*
 * attribution.c - where the rise of the objective's percentile went, by
 * counterfactual replay.
 *
 * Each window request carries its timing program (EvOp, built by the
 * request pass): for every span, the sibling it started after, the gap
 * before it, its own duration and the time it kept running after its last
 * child. Replaying the program with the recorded durations gives back the
 * request's latency exactly. A *locus* is one dependency (every call to
 * it) or one part of its time: the pool wait before the call (queue), the
 * client-side wait (client span minus server span), the server's own time
 * (service), or the first two together (front); plus the queue before the
 * endpoint's root span, and a caller's client-side waits (every call one
 * service makes, each wait drawn from its own callee's baseline: a starved
 * caller is late on all of its calls). For a locus, every window request is replayed with
 * that locus's times replaced by draws from the baseline's distribution of
 * the same locus for the same workload class (all classes when the class
 * has fewer than ATTR_MIN_CLASS baseline observations; 0 ms when the
 * baseline never called the dependency). Serial spans add up and parallel
 * ones end with the last, exactly as the recorded spans did.
 *
 * The locus's explained share of the rise is
 *     (Q_window - Q_counterfactual) / (Q_window - Q_baseline)
 * with Q the objective's percentile (nearest rank). The two structural
 * loci, a dependency's serial calls taken off the path and its failed
 * attempts taken out, cost time in the baseline too; for them the baseline
 * is replayed the same way and only the difference counts:
 *     ((Q_w - Q_w,cf) - (Q_b - Q_b,cf)) / (Q_w - Q_b)
 * so a hop that was already there explains none of the rise. 1 means
 * replacing the locus's times alone brings the percentile back to the
 * baseline; 0 means it changes nothing; a negative share means the locus
 * got faster. The 95 % interval comes from a bootstrap over window and
 * baseline requests (the counterfactual draws stay paired with their
 * request). When the rise itself is not significant (its bootstrap interval reaches 0),
 * nothing is attributed and the values say why.
 *
 * Everything is deterministic: each locus draws from a fixed seed of its
 * own, so the loci can be replayed on several cores in any order.
 */
#include "evidence.h"
#include "evidence_priv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "par.h"
#include "quantile.h"

#define ATTR_MIN_CLASS 20      /* baseline observations before a class's own draws are used */
#define ATTR_BOOT 120          /* bootstrap replicates */
#define ATTR_MAX_DRAWS 12000   /* draws kept per locus: n * R */
#define ATTR_FALLBACK_PCT 90   /* attributed when the objective's percentile did not rise */

enum { F_TOTAL, F_WAIT, F_SERVICE, F_QUEUE, F_N };
enum { M_ALL, M_FRONT, M_WAIT, M_SERVICE, M_QUEUE, M_EQUEUE, M_PLACE, M_SERIAL, M_RETRY, M_CALLER,
       M_N };

static const char *const MODE_NAME[M_N] = {"", ".front", ".wait", ".service", ".queue", "", "",
                                           ".serial", ".retry", ".waits"};
static const char *const MODE_WORD[M_N] = {
	"all of its time (pool wait, client-side wait and service)",
	"the time in front of it (pool wait and client-side wait)",
	"its client-side wait (client span minus server span)",
	"its server's own time",
	"its pool wait before the call",
	"the queue before the endpoint's root span",
	"the requests of the hosts that hold the tail replaced by requests of the other hosts",
	"its calls that overlap no sibling taken off the path (0 ms where they sit)",
	"its failed attempts and the pauses before their retries taken out",
	"the client-side waits of every call it makes",
};

typedef struct Draw {
	float *v;
	int64_t n, cap;
} Draw;

typedef struct Ctx {
	const EvRequestSet *w, *b;
	int *dep_map;              /* window dep -> baseline dep, -1 */
	int *cls_map;              /* window class -> baseline class, -1 */
	int nbc;                   /* baseline classes */
	Draw *draws;               /* [bdep][1 + nbc][F_N]; slot 0: all classes */
	Draw equeue[65];           /* endpoint queue: [0] all, [1 + c] class c */
	uint64_t rng;
	/* the locus being replayed */
	int dep;                   /* window dep index, -1 for the endpoint queue */
	int caller;                /* M_CALLER: window caller index */
	int mode;
	int cls;                   /* window class of the request, -1 */
	double *ends;              /* scratch: op ends of one request */
} Ctx;

static uint64_t next_u64(uint64_t *s)
{
	/* splitmix64 */
	uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static int64_t below(uint64_t *s, int64_t n)
{
	return (int64_t)(next_u64(s) % (uint64_t)n);
}

static void draw_push(Draw *d, float x)
{
	if (isnan(x))
		return;
	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 64;
		d->v = xrealloc(d->v, (size_t)d->cap * sizeof *d->v);
	}
	d->v[d->n++] = x;
}

static Draw *slot_of(Ctx *cx, int bdep, int slot, int f)
{
	return &cx->draws[((size_t)bdep * (size_t)(1 + cx->nbc) + (size_t)slot) * F_N + (size_t)f];
}

/* A baseline value of field f for the current locus and class; *none is
 * set when the baseline has no value at all (0 is returned). */
static double draw(Ctx *cx, int f, int *none)
{
	*none = 0;
	Draw *d = NULL;
	if (cx->dep < 0) {
		int c = cx->cls >= 0 ? cx->cls_map[cx->cls] : -1;
		d = c >= 0 && c < 64 && cx->equeue[1 + c].n >= ATTR_MIN_CLASS ? &cx->equeue[1 + c]
		                                                              : &cx->equeue[0];
	} else {
		int bd = cx->dep_map[cx->dep];
		if (bd < 0) {
			*none = 1;
			return 0; /* the baseline never called it */
		}
		int c = cx->cls >= 0 ? cx->cls_map[cx->cls] : -1;
		d = slot_of(cx, bd, 0, f);
		if (c >= 0) {
			Draw *dc = slot_of(cx, bd, 1 + c, f);
			if (dc->n >= ATTR_MIN_CLASS)
				d = dc;
		}
	}
	if (d->n == 0) {
		*none = 1;
		return 0;
	}
	return d->v[below(&cx->rng, d->n)];
}

static int targets(const Ctx *cx, const EvOp *o)
{
	if (o->call < 0)
		return 0;
	if (cx->mode == M_CALLER)
		return cx->w->calls[o->call].caller == cx->caller;
	return cx->dep >= 0 && cx->w->calls[o->call].dep == cx->dep;
}

/* The end of op i (relative to request r) when it starts at start. */
static double replay(Ctx *cx, const EvRequest *r, int32_t i, double start)
{
	const EvRequestSet *w = cx->w;
	const EvOp *o = &w->ops[r->op_off + i];
	int tgt = targets(cx, o);
	int none;
	if (tgt && o->role == EV_OP_CLIENT && cx->mode == M_ALL)
		return start + draw(cx, F_TOTAL, &none);
	if (tgt && o->role == EV_OP_CLIENT && cx->mode == M_SERIAL && w->calls[o->call].serial)
		return start;
	if (tgt && o->role == EV_OP_CLIENT && cx->mode == M_RETRY && w->calls[o->call].error)
		return start;
	if (tgt && o->role == EV_OP_CLIENT && cx->mode == M_SERVICE && o->first_child < 0 &&
	    w->calls[o->call].wait_ms == 0) {
		/* a leaf call whose time is all the dependency's (a database) */
		double v = draw(cx, F_SERVICE, &none);
		return start + (none ? o->dur_ms : v);
	}
	if (tgt && o->role == EV_OP_SERVER && cx->mode == M_SERVICE) {
		double v = draw(cx, F_SERVICE, &none);
		return start + (none ? o->dur_ms : v);
	}
	if (o->first_child < 0)
		return start + o->dur_ms;
	double scale = 1, add = 0;
	if (tgt && o->role == EV_OP_CLIENT &&
	    (cx->mode == M_WAIT || cx->mode == M_FRONT || cx->mode == M_CALLER)) {
		const EvCall *c = &w->calls[o->call];
		if (!isnan(c->wait_ms)) {
			/* a caller's calls go to several dependencies: each wait
			 * is drawn from its own callee's baseline waits */
			int keep = cx->dep;
			if (cx->mode == M_CALLER)
				cx->dep = c->dep;
			double v = draw(cx, F_WAIT, &none);
			cx->dep = keep;
			if (!none) {
				if (c->wait_ms > 1e-3)
					scale = v / c->wait_ms;
				else
					add = v;
			}
		}
	}
	double last = -INFINITY;
	for (int32_t k = o->first_child; k >= 0; k = w->ops[r->op_off + k].next_sibling) {
		const EvOp *co = &w->ops[r->op_off + k];
		double from = co->pred >= 0 ? cx->ends[co->pred] : start;
		double gap = co->gap_ms;
		if (o->role == EV_OP_CLIENT && co->role == EV_OP_SERVER)
			gap = gap * scale + add;
		if (cx->mode == M_RETRY && co->role == EV_OP_CLIENT && targets(cx, co) &&
		    w->calls[co->call].retry)
			gap = 0; /* no pause before an attempt that is no longer needed */
		if (co->role == EV_OP_CLIENT && targets(cx, co) &&
		    (cx->mode == M_QUEUE || cx->mode == M_FRONT || cx->mode == M_ALL)) {
			float q0 = w->calls[co->call].queue_ms;
			if (!isnan(q0)) {
				double q1 = draw(cx, F_QUEUE, &none);
				gap = (gap > q0 ? gap - q0 : 0) + q1;
			}
		}
		double e = replay(cx, r, k, from + gap);
		cx->ends[k] = e;
		if (e > last)
			last = e;
	}
	return last + o->tail_ms * scale;
}

/* Counterfactual latency of request r at ingress. */
static double replay_request(Ctx *cx, const EvRequest *r)
{
	if (r->n_ops == 0)
		return r->ingress_ms;
	double q = isnan(r->queue_ms) ? 0 : r->queue_ms;
	if (cx->dep < 0 && cx->mode == M_EQUEUE && !isnan(r->queue_ms)) {
		int none;
		double v = draw(cx, F_QUEUE, &none);
		if (!none)
			q = v;
	}
	cx->ends[0] = 0;
	return q + replay(cx, r, 0, 0);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int find(char **list, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (strcmp(list[i], s) == 0)
			return i;
	return -1;
}

/* A value and the request it belongs to. */
typedef struct Item {
	float v;
	int32_t owner;
} Item;

/* A key whose unsigned order is the float's order, largest first. */
static uint32_t desc_key(float v)
{
	uint32_t k;
	memcpy(&k, &v, sizeof k);
	k = (k & 0x80000000u) ? ~k : k | 0x80000000u;
	return ~k;
}

/* v[0 .. n*R) (R values per request), largest first, with their request;
 * equal values stay in request order. The key is desc_key() above the
 * value's index, sorted by quant_sort_keys(): a locus's replays are sorted
 * once each, and a comparison sort of them was a tenth of the
 * attribution's time. */
static Item *sorted_items(const float *v, int64_t n, int R)
{
	int64_t m = n * R;
	uint64_t *key = xmalloc((size_t)(m ? m : 1) * sizeof *key);
	for (int64_t i = 0; i < m; i++)
		key[i] = (uint64_t)desc_key(v[i]) << 32 | (uint64_t)(uint32_t)i;
	quant_sort_keys(key, m);
	Item *it = xmalloc((size_t)(m ? m : 1) * sizeof *it);
	for (int64_t j = 0; j < m; j++) {
		int64_t i = (int64_t)(key[j] & UINT32_MAX);
		it[j].v = v[i];
		it[j].owner = (int32_t)(i / R);
	}
	free(key);
	return it;
}

/* The nearest-rank p-quantile of the resample in which request i appears
 * w[i] times (each with its R values): the value at which the weight
 * counted from the top reaches the quantile's rank from the top. */
static double weighted_rank(const Item *it, int64_t n, int R, const int32_t *w, double p)
{
	int64_t total = n * R;
	int64_t k = (int64_t)ceil(p / 100.0 * (double)total);
	if (k < 1)
		k = 1;
	int64_t from_top = total - k + 1, acc = 0;
	for (int64_t i = 0; i < total; i++) {
		acc += w[it[i].owner];
		if (acc >= from_top)
			return it[i].v;
	}
	return it[total - 1].v;
}

typedef struct Locus {
	int dep, mode;
	int caller;                /* M_CALLER: window caller index */
	Item *sorted;              /* cf, largest first */
	float *cf;                 /* [n * R] counterfactual latencies */
	float *bcf;                /* [m] the baseline replayed the same way (structural loci) */
	Item *bsorted;             /* bcf, largest first */
	double point;
	double *boot;              /* [ATTR_BOOT] */
	int nboot;
} Locus;

typedef struct ReplayAll {
	const Ctx *cx;             /* the draws and maps (read only) */
	Locus *loci;
	int R;                     /* replays per window request */
	int32_t max_ops;
} ReplayAll;

/* Locus l's counterfactual latencies, sorted: every window request
 * replayed R times and, for a structural locus, every baseline request
 * once (no draws: the recorded durations with the same calls taken out).
 * The locus draws from a seed of its own, so that what it gets does not
 * depend on which thread replays it, nor when. */
static void replay_locus(void *ctx, int l)
{
	ReplayAll *ra = ctx;
	Locus *L = &ra->loci[l];
	const EvRequestSet *w = ra->cx->w, *b = ra->cx->b;
	int64_t n = w->n, m = b->n;
	int R = ra->R;
	Ctx cx = *ra->cx;
	cx.ends = xmalloc((size_t)ra->max_ops * sizeof *cx.ends);
	cx.rng = ra->cx->rng ^ (UINT64_C(0x9E3779B97F4A7C15) * (uint64_t)(l + 1));
	cx.dep = L->dep;
	cx.caller = L->caller;
	cx.mode = L->mode;
	L->cf = xmalloc((size_t)(n * R) * sizeof *L->cf);
	for (int64_t i = 0; i < n; i++) {
		cx.cls = w->r[i].cls;
		for (int k = 0; k < R; k++)
			L->cf[i * R + k] = (float)replay_request(&cx, &w->r[i]);
	}
	L->boot = xmalloc(ATTR_BOOT * sizeof *L->boot);
	L->sorted = sorted_items(L->cf, n, R);
	if (L->mode == M_SERIAL || L->mode == M_RETRY) {
		L->bcf = xmalloc((size_t)(m ? m : 1) * sizeof *L->bcf);
		int bd = cx.dep_map[L->dep];
		Ctx bx = cx;
		bx.w = b;
		bx.dep = bd;
		for (int64_t i = 0; i < m; i++)
			L->bcf[i] = bd < 0 || b->r[i].n_ops == 0 ? b->r[i].ingress_ms
			                                          : (float)replay_request(&bx, &b->r[i]);
		L->bsorted = sorted_items(L->bcf, m, 1);
	}
	free(cx.ends);
}

/* The rise of the pct-th percentile, window over baseline, with its
 * bootstrap interval: ATTR_BOOT resamples of both ranges drawn from seed
 * (the same sequence ev_attribution()'s shares use). cw and cb are
 * scratch. */
typedef struct RiseCi {
	double point, lo, hi;
	double base;               /* the baseline's percentile */
	double rlo, rhi;           /* interval of window over baseline */
	int nratio;                /* resamples with a baseline above 0 */
} RiseCi;

static void resample(uint64_t *rng, int32_t *cw, int64_t n, int32_t *cb, int64_t m)
{
	memset(cw, 0, (size_t)n * sizeof *cw);
	memset(cb, 0, (size_t)m * sizeof *cb);
	for (int64_t i = 0; i < n; i++)
		cw[below(rng, n)]++;
	for (int64_t i = 0; i < m; i++)
		cb[below(rng, m)]++;
}

static RiseCi rise_ci(const Item *sa, const Item *sb, int64_t n, int64_t m, double pct,
                      uint64_t seed, int32_t *cw, int32_t *cb, double tail)
{
	RiseCi r;
	for (int64_t i = 0; i < n; i++)
		cw[i] = 1;
	for (int64_t i = 0; i < m; i++)
		cb[i] = 1;
	r.base = weighted_rank(sb, m, 1, cb, pct);
	r.point = weighted_rank(sa, n, 1, cw, pct) - r.base;
	double rises[ATTR_BOOT], ratios[ATTR_BOOT];
	int nr = 0;
	uint64_t rng = seed;
	for (int bt = 0; bt < ATTR_BOOT; bt++) {
		resample(&rng, cw, n, cb, m);
		double bw = weighted_rank(sa, n, 1, cw, pct), bb = weighted_rank(sb, m, 1, cb, pct);
		rises[bt] = bw - bb;
		if (bb > 0)
			ratios[nr++] = bw / bb;
	}
	qsort(rises, ATTR_BOOT, sizeof *rises, cmp_double);
	r.lo = rises[(int)floor(tail * (ATTR_BOOT - 1))];
	r.hi = rises[(int)ceil((1 - tail) * (ATTR_BOOT - 1))];
	r.nratio = nr;
	r.rlo = r.rhi = NAN;
	if (nr > 0) {
		qsort(ratios, (size_t)nr, sizeof *ratios, cmp_double);
		r.rlo = ratios[(int)floor(tail * (nr - 1))];
		r.rhi = ratios[(int)ceil((1 - tail) * (nr - 1))];
	}
	return r;
}

/* ---- the rise from the tops of both ranges ------------------------------- */

/* One range as its top and a sample of the rest (ev_top_rise()). */
typedef struct TopSide {
	const double *top, *rest;  /* descending */
	int64_t k, kr, n;
	int32_t *ct;               /* a resample's count of each of the top */
	double *cr;                /* and weight of each of the rest's sample */
} TopSide;

/* The nearest-rank p-quantile of a resample in which the i-th value of
 * the top appears ct[i] times and the j-th of the rest weighs cr[j]: NAN
 * when the rank is not reached. */
static double top_rank(const TopSide *s, double p)
{
	int64_t r = (int64_t)ceil(p / 100.0 * (double)s->n);
	if (r < 1)
		r = 1;
	double from_top = (double)(s->n - r + 1), acc = 0;
	int64_t i = 0, j = 0;
	while (i < s->k || j < s->kr) {
		int take_top = j >= s->kr || (i < s->k && s->top[i] >= s->rest[j]);
		double x = take_top ? s->top[i] : s->rest[j];
		acc += take_top ? (double)s->ct[i++] : s->cr[j++];
		if (acc >= from_top - 1e-9)
			return x;
	}
	return NAN;
}

static double unit_uniform(uint64_t *rng)
{
	return ((double)(next_u64(rng) >> 11) + 0.5) * 0x1.0p-53;
}

/* A Poisson(1) count: Knuth's product of uniforms. */
static int32_t poisson1(uint64_t *rng)
{
	double prod = 1, lim = exp(-1.0);
	int32_t c = -1;
	do {
		prod *= unit_uniform(rng);
		c++;
	} while (prod > lim);
	return c;
}

/* A stratified resample of the n requests of s. The top: n draws (as
 * resample() makes them), each one of the top with probability 1/n (past
 * TOP_EXACT_DRAWS requests, a Poisson(1) count each, the limit of the same
 * multinomial); the draws that missed the top are the rest's, spread over
 * a resample of the rest's sample (kr draws with replacement): the top
 * varies as it would on all n requests, the rest as its sample does. */
#define TOP_EXACT_DRAWS 100000
static void top_resample(uint64_t *rng, TopSide *s)
{
	memset(s->ct, 0, (size_t)(s->k ? s->k : 1) * sizeof *s->ct);
	memset(s->cr, 0, (size_t)(s->kr ? s->kr : 1) * sizeof *s->cr);
	int64_t hit = 0;
	if (s->n <= TOP_EXACT_DRAWS) {
		for (int64_t i = 0; i < s->n; i++) {
			int64_t j = below(rng, s->n);
			if (j < s->k) {
				s->ct[j]++;
				hit++;
			}
		}
	} else {
		for (int64_t i = 0; i < s->k; i++)
			hit += s->ct[i] = poisson1(rng);
	}
	if (s->kr <= 0)
		return;
	double w = (double)(s->n - hit) / (double)s->kr;
	if (w < 0)
		w = 0;
	for (int64_t i = 0; i < s->kr; i++)
		s->cr[below(rng, s->kr)] += w;
}

/* ATTR_BOOT resampled percentiles of s into v, from rng: 0 when one is not
 * reached (a resample's rank below the top, and no sample of the rest). */
static int top_boot(TopSide *s, double pct, uint64_t *rng, double *v)
{
	for (int bt = 0; bt < ATTR_BOOT; bt++) {
		top_resample(rng, s);
		v[bt] = top_rank(s, pct);
		if (isnan(v[bt]))
			return 0;
	}
	return 1;
}

static void top_side_init(TopSide *s, const double *top, int64_t k, const double *rest,
                          int64_t kr, int64_t n)
{
	*s = (TopSide){top, rest, k, kr, n, NULL, NULL};
	s->ct = xmalloc((size_t)(k ? k : 1) * sizeof *s->ct);
	s->cr = xmalloc((size_t)(kr ? kr : 1) * sizeof *s->cr);
}

int ev_top_interval(const double *top, int64_t k, const double *rest, int64_t kr, int64_t n,
                    double pct, double *lo, double *hi)
{
	*lo = *hi = NAN;
	if (k + kr < 1 || n < k)
		return 0;
	TopSide s;
	top_side_init(&s, top, k, rest, kr, n);
	double v[ATTR_BOOT];
	uint64_t rng = UINT64_C(0x70b5e7) ^ (uint64_t)n;
	int ok = top_boot(&s, pct, &rng, v);
	free(s.ct);
	free(s.cr);
	if (!ok)
		return 0;
	double tail = (1 - QUANT_CI_LEVEL) / 2;
	qsort(v, ATTR_BOOT, sizeof *v, cmp_double);
	*lo = v[(int)floor(tail * (ATTR_BOOT - 1))];
	*hi = v[(int)ceil((1 - tail) * (ATTR_BOOT - 1))];
	return 1;
}

int ev_top_rise(const double *tw, int64_t kw, const double *rw, int64_t krw, int64_t nw,
                const double *tb, int64_t kb, const double *rb, int64_t krb, int64_t nb,
                double pct, double out[6])
{
	for (int i = 0; i < 6; i++)
		out[i] = NAN;
	if (kw + krw < 1 || kb + krb < 1 || nw < kw || nb < kb)
		return 0;
	TopSide s[2];
	top_side_init(&s[0], tw, kw, rw, krw, nw);
	top_side_init(&s[1], tb, kb, rb, krb, nb);
	/* the point: each of the top once, each of the rest's sample for its
	 * share of the rest (quant_top(), which also wants the percentile's
	 * interval reached) */
	double q[2];
	for (int x = 0; x < 2; x++) {
		double lo, hi;
		int st = quant_top(s[x].top, s[x].k, s[x].rest, s[x].kr, s[x].n, pct, &q[x], &lo, &hi);
		if (st != QUANT_TOP_EXACT && st != QUANT_TOP_WEIGHTED)
			q[x] = NAN;
	}
	int ok = !isnan(q[0]) && !isnan(q[1]);
	double rises[ATTR_BOOT], ratios[ATTR_BOOT], vw[ATTR_BOOT], vb[ATTR_BOOT];
	int nr = 0;
	uint64_t rng = UINT64_C(0xb0075742a9) ^ (uint64_t)nw;
	/* a resample's percentile not reached: the tops cannot say */
	ok = ok && top_boot(&s[0], pct, &rng, vw) && top_boot(&s[1], pct, &rng, vb);
	for (int bt = 0; bt < ATTR_BOOT && ok; bt++) {
		rises[bt] = vw[bt] - vb[bt];
		if (vb[bt] > 0)
			ratios[nr++] = vw[bt] / vb[bt];
	}
	for (int x = 0; x < 2; x++) {
		free(s[x].ct);
		free(s[x].cr);
	}
	if (!ok)
		return 0;
	double tail = (1 - QUANT_CI_LEVEL) / 2;
	qsort(rises, ATTR_BOOT, sizeof *rises, cmp_double);
	out[0] = q[0] - q[1];
	out[1] = rises[(int)floor(tail * (ATTR_BOOT - 1))];
	out[2] = rises[(int)ceil((1 - tail) * (ATTR_BOOT - 1))];
	if (q[1] > 0 && nr > 0) {
		qsort(ratios, (size_t)nr, sizeof *ratios, cmp_double);
		out[3] = q[0] / q[1];
		out[4] = ratios[(int)floor(tail * (nr - 1))];
		out[5] = ratios[(int)ceil((1 - tail) * (nr - 1))];
	}
	return 1;
}

void ev_attribution(Evidence *e, const EvRequestSet *w, const EvRequestSet *b, double pct)
{
	if (w->n == 0 || b->n == 0 || w->n_ops == 0)
		return;
	Ctx cx;
	memset(&cx, 0, sizeof cx);
	cx.w = w;
	cx.b = b;
	cx.rng = UINT64_C(0x7a11791a6e) ^ (uint64_t)w->n ^ ((uint64_t)b->n << 32);
	cx.nbc = b->n_classes;
	cx.dep_map = xmalloc((size_t)(w->n_deps ? w->n_deps : 1) * sizeof *cx.dep_map);
	for (int d = 0; d < w->n_deps; d++)
		cx.dep_map[d] = find(b->deps, b->n_deps, w->deps[d]);
	cx.cls_map = xmalloc((size_t)(w->n_classes ? w->n_classes : 1) * sizeof *cx.cls_map);
	for (int c = 0; c < w->n_classes; c++)
		cx.cls_map[c] = find(b->classes, b->n_classes, w->classes[c]);
	size_t nd = (size_t)(b->n_deps ? b->n_deps : 1) * (size_t)(1 + cx.nbc) * F_N;
	cx.draws = xcalloc(nd, sizeof *cx.draws);
	for (int64_t k = 0; k < b->n_calls; k++) {
		const EvCall *c = &b->calls[k];
		if (c->dep < 0)
			continue;
		int cls = b->r[c->req].cls;
		float f[F_N] = {c->total_ms, c->wait_ms, c->service_ms, c->queue_ms};
		for (int x = 0; x < F_N; x++) {
			draw_push(slot_of(&cx, c->dep, 0, x), f[x]);
			if (cls >= 0)
				draw_push(slot_of(&cx, c->dep, 1 + cls, x), f[x]);
		}
	}
	int w_has_equeue = 0;
	for (int64_t i = 0; i < b->n; i++) {
		draw_push(&cx.equeue[0], b->r[i].queue_ms);
		if (b->r[i].cls >= 0 && b->r[i].cls < 64)
			draw_push(&cx.equeue[1 + b->r[i].cls], b->r[i].queue_ms);
	}
	for (int64_t i = 0; i < w->n; i++)
		w_has_equeue |= !isnan(w->r[i].queue_ms);
	int32_t max_ops = 1;
	for (int64_t i = 0; i < w->n; i++)
		if (w->r[i].n_ops > max_ops)
			max_ops = w->r[i].n_ops;
	for (int64_t i = 0; i < b->n; i++)
		if (b->r[i].n_ops > max_ops)
			max_ops = b->r[i].n_ops;
	cx.ends = xmalloc((size_t)max_ops * sizeof *cx.ends);

	/* which parts each dependency has in the window */
	int nwd = w->n_deps;
	uint8_t *parts = xcalloc((size_t)(nwd ? nwd : 1), 1);
	for (int64_t k = 0; k < w->n_calls; k++) {
		const EvCall *c = &w->calls[k];
		if (c->dep < 0)
			continue;
		parts[c->dep] |= 1;
		if (!isnan(c->wait_ms))
			parts[c->dep] |= 2;
		if (!isnan(c->queue_ms))
			parts[c->dep] |= 4;
		if (c->serial)
			parts[c->dep] |= 8;
		if (c->retry)
			parts[c->dep] |= 16;
	}
	/* callers that wait on two dependencies or more: their waits are a
	 * locus of their own (a starved caller delays all its calls) */
	int nwc = w->n_callers;
	int *first_dep = xmalloc((size_t)(nwc ? nwc : 1) * sizeof *first_dep);
	uint8_t *multi = xcalloc((size_t)(nwc ? nwc : 1), 1);
	for (int c = 0; c < nwc; c++)
		first_dep[c] = -1;
	for (int64_t k = 0; k < w->n_calls; k++) {
		const EvCall *c = &w->calls[k];
		if (c->caller < 0 || c->dep < 0 || c->db || isnan(c->wait_ms))
			continue;
		if (first_dep[c->caller] < 0)
			first_dep[c->caller] = c->dep;
		else if (first_dep[c->caller] != c->dep)
			multi[c->caller] = 1;
	}
	int nl = 0;
	Locus *loci = xcalloc((size_t)nwd * M_N + (size_t)nwc + 4, sizeof *loci);
	for (int d = 0; d < nwd; d++) {
		if (!parts[d])
			continue;
		loci[nl++] = (Locus){.dep = d, .mode = M_ALL};
		if (parts[d] & 2) {
			loci[nl++] = (Locus){.dep = d, .mode = M_FRONT};
			loci[nl++] = (Locus){.dep = d, .mode = M_WAIT};
			loci[nl++] = (Locus){.dep = d, .mode = M_SERVICE};
		}
		if (parts[d] & 4)
			loci[nl++] = (Locus){.dep = d, .mode = M_QUEUE};
		if (parts[d] & 8)
			loci[nl++] = (Locus){.dep = d, .mode = M_SERIAL};
		if (parts[d] & 16)
			loci[nl++] = (Locus){.dep = d, .mode = M_RETRY};
	}
	if (w_has_equeue && cx.equeue[0].n > 0)
		loci[nl++] = (Locus){.dep = -1, .mode = M_EQUEUE};
	for (int c = 0; c < nwc; c++)
		if (multi[c])
			loci[nl++] = (Locus){.dep = -3, .caller = c, .mode = M_CALLER};
	free(first_dep);
	free(multi);

	int64_t n = w->n, m = b->n;
	int R = (int)(ATTR_MAX_DRAWS / n);
	if (R < 1)
		R = 1;
	if (R > 8)
		R = 8;
	float *actual = xmalloc((size_t)n * sizeof *actual);
	float *base = xmalloc((size_t)m * sizeof *base);
	for (int64_t i = 0; i < n; i++)
		actual[i] = w->r[i].ingress_ms;
	for (int64_t i = 0; i < m; i++)
		base[i] = b->r[i].ingress_ms;

	/* every locus replayed, on as many cores as there are */
	ReplayAll ra = {.cx = &cx, .loci = loci, .R = R, .max_ops = max_ops};
	par_each(nl, replay_locus, &ra);

	/* placement: the hosts whose share of the tail is three times their
	 * share of requests (and 3 tail requests or more); their requests are
	 * replaced by requests of the other hosts of the same class */
	char hot_names[256] = "";
	if (w->n_hosts >= 2) {
		int64_t *hr = xcalloc((size_t)w->n_hosts, sizeof *hr), *hs = xcalloc((size_t)w->n_hosts, sizeof *hs);
		int64_t all = 0, slow = 0;
		for (int64_t i = 0; i < n; i++) {
			if (w->r[i].host < 0)
				continue;
			hr[w->r[i].host]++;
			hs[w->r[i].host] += w->r[i].slow;
			all++;
			slow += w->r[i].slow;
		}
		uint8_t *hot = xcalloc((size_t)w->n_hosts, 1);
		int nhot = 0;
		for (int h = 0; h < w->n_hosts && slow > 0 && all > 0; h++)
			if (hs[h] >= 3 && (double)hs[h] / (double)slow >= 3 * (double)hr[h] / (double)all) {
				hot[h] = 1;
				nhot++;
				size_t l = strlen(hot_names);
				snprintf(hot_names + l, sizeof hot_names - l, "%s%s", l ? ", " : "", w->hosts[h]);
			}
		/* the other hosts' requests, per class */
		int64_t *pool = xmalloc((size_t)n * sizeof *pool);
		int64_t np_ = 0;
		for (int64_t i = 0; i < n; i++)
			if (w->r[i].host >= 0 && !hot[w->r[i].host])
				pool[np_++] = i;
		if (nhot > 0 && np_ > 0) {
			Locus *L = &loci[nl++];
			*L = (Locus){.dep = -2, .mode = M_PLACE};
			L->cf = xmalloc((size_t)(n * R) * sizeof *L->cf);
			L->boot = xmalloc(ATTR_BOOT * sizeof *L->boot);
			for (int64_t i = 0; i < n; i++)
				for (int k = 0; k < R; k++) {
					float v = actual[i];
					if (w->r[i].host >= 0 && hot[w->r[i].host]) {
						/* a request of the same class from another host
						 * (a few tries, then any class) */
						int64_t j = pool[below(&cx.rng, np_)];
						for (int t = 0; t < 16 && w->r[j].cls != w->r[i].cls; t++)
							j = pool[below(&cx.rng, np_)];
						v = actual[j];
					}
					L->cf[i * R + k] = v;
				}
		}
		free(pool);
		free(hot);
		free(hr);
		free(hs);
	}

	/* every population sorted once, largest first, with its request: a
	 * percentile is then a walk from the top, weighted by how often each
	 * request counts (once for the point estimate; a bootstrap resample's
	 * count for the intervals), which touches only the top few per cent */
	int32_t *cw = xmalloc((size_t)n * sizeof *cw), *cb = xmalloc((size_t)m * sizeof *cb);
	Item *sa = sorted_items(actual, n, 1), *sb = sorted_items(base, m, 1);
	for (int l = 0; l < nl; l++)
		if (loci[l].sorted == NULL)
			loci[l].sorted = sorted_items(loci[l].cf, n, R);
	uint64_t seed = UINT64_C(0xb0075742a9) ^ (uint64_t)n;
	double tail = (1 - QUANT_CI_LEVEL) / 2;

	/* Which percentile's rise is attributed: the objective's; when its
	 * rise is not significant but the p90's is (by 5 % or more, the bar of
	 * ingress.moved), the p90's. On a few hundred requests the p99 of
	 * either range has a wide interval, or is held by the slowest routes
	 * whatever happened, while a cause that slowed most requests moved the
	 * p90 beyond doubt: that rise is what there is to explain. */
	RiseCi obj = rise_ci(sa, sb, n, m, pct, seed, cw, cb, tail);
	EvValue *rv = ev_put(e, "ingress.rise_ms", obj.point, "ms", EV_SRC_SPANS, EV_Q_EXACT, n, 0,
	                     "spans: window p%g minus baseline p%g (%lld and %lld requests); "
	                     "interval by bootstrap",
	                     pct, pct, (long long)n, (long long)m);
	ev_ci(rv, obj.lo, obj.hi);
	if (obj.base > 0 && obj.nratio > 0) {
		EvValue *xv = ev_put(e, "ingress.rise_ratio", (obj.point + obj.base) / obj.base, "index",
		                     EV_SRC_SPANS, EV_Q_NONE, n, 0,
		                     "spans: window p%g over baseline p%g (%lld and %lld requests); "
		                     "interval by bootstrap",
		                     pct, pct, (long long)n, (long long)m);
		ev_ci(xv, obj.rlo, obj.rhi);
	}
	/* attributed when the percentile rose: the one verdict the headline,
	 * ingress.moved and the null hypothesis's place use too */
	char verdict[320];
	int rose = evidence_objective_rose(e, verdict, sizeof verdict) == 1;
	double apct = pct;
	RiseCi at = obj;
	char why[640], fell_back[320] = "";
	snprintf(why, sizeof why,
	         "spans: the p%g did not rise significantly by 5 %% and 5 ms, so nothing is "
	         "attributed; %s", pct, verdict);
	if (!rose && pct > ATTR_FALLBACK_PCT) {
		/* the bar of ingress.moved: 5 % and 5 ms, the interval above 0 */
		RiseCi p90 = rise_ci(sa, sb, n, m, ATTR_FALLBACK_PCT, seed, cw, cb, tail);
		if (p90.lo > 0 && p90.point >= 0.05 * p90.base && p90.point >= 5) {
			apct = ATTR_FALLBACK_PCT;
			at = p90;
			snprintf(fell_back, sizeof fell_back,
			         "; the p%g did not rise significantly (%+.1f ms, 95 %% interval %+.1f "
			         "to %+.1f ms), the p%g did",
			         pct, obj.point, obj.lo, obj.hi, apct);
		} else {
			snprintf(why, sizeof why,
			         "spans: the p%g did not rise significantly by 5 %% and 5 ms (%s), nor did "
			         "the p%g (%+.1f ms, 95 %% interval %+.1f to %+.1f ms): nothing is "
			         "attributed",
			         pct, verdict, (double)ATTR_FALLBACK_PCT, p90.point, p90.lo, p90.hi);
		}
	}
	int significant = rose || apct != pct;
	if (!significant)
		ev_missing(e, "attribution.percentile", "", why);
	else
		ev_put(e, "attribution.percentile", apct, "", EV_SRC_DERIVED, EV_Q_NONE, n, 0,
		       "derived: the percentile whose rise the *.explained shares divide: %s",
		       apct == pct ? "the objective's" : "the p90, as the objective's did not rise significantly "
		                                         "and the p90's did");
	rv = ev_put(e, "attribution.rise_ms", at.point, "ms", EV_SRC_SPANS, EV_Q_EXACT, n, 0,
	            "spans: window p%g minus baseline p%g (%lld and %lld requests), the rise the "
	            "shares divide; interval by bootstrap",
	            apct, apct, (long long)n, (long long)m);
	ev_ci(rv, at.lo, at.hi);

	for (int64_t i = 0; i < n; i++)
		cw[i] = 1;
	for (int64_t i = 0; i < m; i++)
		cb[i] = 1;
	double qw = weighted_rank(sa, n, 1, cw, apct);
	double qb = weighted_rank(sb, m, 1, cb, apct);
	for (int l = 0; l < nl; l++) {
		double qc = weighted_rank(loci[l].sorted, n, R, cw, apct);
		double saved_b = loci[l].bsorted ? qb - weighted_rank(loci[l].bsorted, m, 1, cb, apct) : 0;
		loci[l].point = qw - qb != 0 ? (qw - qc - saved_b) / (qw - qb) : NAN;
	}
	/* bootstrap: the same resamples as rise_ci()'s, for every locus */
	uint64_t brng = seed;
	for (int bt = 0; bt < ATTR_BOOT && significant; bt++) {
		resample(&brng, cw, n, cb, m);
		double bw = weighted_rank(sa, n, 1, cw, apct);
		double bb = weighted_rank(sb, m, 1, cb, apct);
		if (bw - bb <= 0)
			continue; /* no rise in this replicate: no share */
		for (int l = 0; l < nl; l++) {
			Locus *L = &loci[l];
			double bc = weighted_rank(L->sorted, n, R, cw, apct);
			double saved_b = L->bsorted ? bb - weighted_rank(L->bsorted, m, 1, cb, apct) : 0;
			L->boot[L->nboot++] = (bw - bc - saved_b) / (bw - bb);
		}
	}
	free(sa);
	free(sb);
	free(cw);
	free(cb);
	double best = -INFINITY;
	char best_name[200] = "";
	for (int l = 0; l < nl; l++) {
		Locus *L = &loci[l];
		char seg[96], name[200];
		if (L->dep >= 0) {
			evidence_segment(w->deps[L->dep], seg, sizeof seg);
			snprintf(name, sizeof name, "dep.%s%s.explained", seg, MODE_NAME[L->mode]);
		} else if (L->mode == M_CALLER) {
			evidence_segment(w->callers[L->caller], seg, sizeof seg);
			snprintf(name, sizeof name, "caller.%s%s.explained", seg, MODE_NAME[L->mode]);
		} else if (L->mode == M_PLACE) {
			snprintf(name, sizeof name, "placement.explained");
		} else {
			snprintf(name, sizeof name, "endpoint.queue.explained");
		}
		if (!significant) {
			ev_missing(e, name, "ratio", why);
			continue;
		}
		qsort(L->boot, (size_t)L->nboot, sizeof *L->boot, cmp_double);
		double lo = NAN, hi = NAN;
		if (L->nboot > 0) {
			lo = L->boot[(int)floor(tail * (L->nboot - 1))];
			hi = L->boot[(int)ceil((1 - tail) * (L->nboot - 1))];
		}
		EvValue *v;
		if (L->mode == M_PLACE)
			v = ev_put(e, name, L->point, "ratio", EV_SRC_SPANS, EV_Q_NONE, n, n < 100,
			           "spans: share of the p%g rise (%+.1f ms) removed when the requests of the "
			           "hosts holding the tail (%s) are replaced by requests of the other hosts "
			           "(same class)%s", apct, qw - qb, hot_names, fell_back);
		else if (L->bcf)
			v = ev_put(e, name, L->point, "ratio", EV_SRC_SPANS, EV_Q_NONE, n, n < 100,
			           "spans: share of the p%g rise (%+.1f ms) removed by replaying %lld "
			           "requests with %s of %s, less what the same removal saves in the "
			           "baseline's %lld requests%s",
			           apct, qw - qb, (long long)n, MODE_WORD[L->mode], w->deps[L->dep],
			           (long long)m, fell_back);
		else if (L->mode == M_CALLER)
			v = ev_put(e, name, L->point, "ratio", EV_SRC_SPANS, EV_Q_NONE, n, n < 100,
			           "spans: share of the p%g rise (%+.1f ms) removed by replaying %lld "
			           "requests with %s of %s from the baseline (each callee's own, same "
			           "class)%s",
			           apct, qw - qb, (long long)n, MODE_WORD[L->mode], w->callers[L->caller],
			           fell_back);
		else
			v = ev_put(e, name, L->point, "ratio", EV_SRC_SPANS, EV_Q_NONE, n, n < 100,
			           "spans: share of the p%g rise (%+.1f ms) removed by replaying %lld "
			           "requests with %s%s%s from the baseline (same class)%s",
			           apct, qw - qb, (long long)n, MODE_WORD[L->mode], L->dep >= 0 ? " of " : "",
			           L->dep >= 0 ? w->deps[L->dep] : "", fell_back);
		ev_ci(v, lo, hi);
		if (L->mode == M_ALL || L->mode == M_EQUEUE) {
			if (L->point > best) {
				best = L->point;
				snprintf(best_name, sizeof best_name, "%s",
				         L->dep >= 0 ? w->deps[L->dep] : "endpoint queue");
			}
		}
	}
	if (significant && *best_name)
		ev_fact(e, "explained.top", best_name);

	for (int l = 0; l < nl; l++) {
		free(loci[l].cf);
		free(loci[l].boot);
		free(loci[l].sorted);
		free(loci[l].bcf);
		free(loci[l].bsorted);
	}
	free(loci);
	free(actual);
	free(base);
	free(parts);
	free(cx.ends);
	for (size_t i = 0; i < nd; i++)
		free(cx.draws[i].v);
	free(cx.draws);
	for (int i = 0; i < 65; i++)
		free(cx.equeue[i].v);
	free(cx.dep_map);
	free(cx.cls_map);
}

/* ---- the class-mix counterfactual's interval ------------------------------- */

/* The pct-th percentile of the mixture of the baseline's per-class
 * latencies (items ascending, with class) weighted by bw[] per request,
 * mixed in the class shares share[]. */
static double mixture_rank(const Item *it, int64_t m, const int16_t *cls_of, const int32_t *bw,
                           const double *share, int nc, double pct, double *tot, double *cum)
{
	for (int c = 0; c < nc; c++)
		tot[c] = cum[c] = 0;
	for (int64_t i = 0; i < m; i++) {
		int c = cls_of[it[i].owner];
		if (c >= 0)
			tot[c] += bw[it[i].owner];
	}
	double p = pct / 100.0 - 1e-12;
	for (int64_t i = 0; i < m; i++) {
		int c = cls_of[it[i].owner];
		if (c < 0)
			continue;
		cum[c] += bw[it[i].owner];
		double cdf = 0;
		for (int k = 0; k < nc; k++)
			if (tot[k] > 0)
				cdf += share[k] * cum[k] / tot[k];
		if (cdf >= p)
			return it[i].v;
	}
	return it[m - 1].v;
}

void ev_mix_explained(Evidence *e, const EvRequestSet *w, const EvRequestSet *b, double pct)
{
	int nc = b->n_classes;
	int64_t n = w->n, m = b->n;
	if (nc == 0 || n == 0 || m == 0)
		return;
	/* the percentile whose rise the other shares divide (ev_attribution):
	 * the p90's when the objective's did not rise and the p90's did */
	const EvValue *ap = evidence_get(e, "attribution.percentile");
	int other = ap && !ap->missing && ap->value != pct;
	const EvValue *rise = evidence_get(e, other ? "attribution.rise_ms" : "ingress.rise_ms");
	if (other)
		pct = ap->value;
	char verdict[320];
	if (!other && rise && !rise->missing &&
	    evidence_objective_rose(e, verdict, sizeof verdict) != 1) {
		char why[480];
		snprintf(why, sizeof why,
		         "spans: the percentile did not rise significantly by 5 %% and 5 ms, so there is "
		         "nothing to explain; %s", verdict);
		ev_missing(e, "mix.explained_ratio", "ratio", why);
		return;
	}
	/* window classes in the baseline's numbering; a class the baseline
	 * never saw cannot be reweighted */
	int16_t *wcls = xmalloc((size_t)n * sizeof *wcls);
	int16_t *bcls = xmalloc((size_t)m * sizeof *bcls);
	for (int64_t i = 0; i < n; i++) {
		wcls[i] = -1;
		if (w->r[i].cls >= 0) {
			int c = find(b->classes, nc, w->classes[w->r[i].cls]);
			if (c < 0) {
				free(wcls);
				free(bcls);
				ev_missing(e, "mix.explained_ratio", "ratio",
				           "spans: a window class has no baseline requests; cannot reweight");
				return;
			}
			wcls[i] = (int16_t)c;
		}
	}
	float *wa = xmalloc((size_t)n * sizeof *wa), *ba = xmalloc((size_t)m * sizeof *ba);
	for (int64_t i = 0; i < n; i++)
		wa[i] = w->r[i].ingress_ms;
	for (int64_t i = 0; i < m; i++) {
		ba[i] = b->r[i].ingress_ms;
		bcls[i] = b->r[i].cls;
	}
	Item *sw = sorted_items(wa, n, 1), *sb = sorted_items(ba, m, 1);
	/* ascending copy of the baseline for the mixture walk */
	Item *asc = xmalloc((size_t)m * sizeof *asc);
	for (int64_t i = 0; i < m; i++)
		asc[i] = sb[m - 1 - i];
	int32_t *cw = xmalloc((size_t)n * sizeof *cw), *cb = xmalloc((size_t)m * sizeof *cb);
	double *share = xcalloc((size_t)nc, sizeof *share), *tot = xcalloc((size_t)nc, sizeof *tot);
	double *cum = xcalloc((size_t)nc, sizeof *cum);
	double est[ATTR_BOOT + 1];
	int nest = 0;
	double point = NAN;
	uint64_t rng = UINT64_C(0x3e1f7a11) ^ (uint64_t)n ^ ((uint64_t)m << 24);
	for (int bt = -1; bt < ATTR_BOOT; bt++) {
		for (int64_t i = 0; i < n; i++)
			cw[i] = bt < 0;
		for (int64_t i = 0; i < m; i++)
			cb[i] = bt < 0;
		if (bt >= 0) {
			for (int64_t i = 0; i < n; i++)
				cw[below(&rng, n)]++;
			for (int64_t i = 0; i < m; i++)
				cb[below(&rng, m)]++;
		}
		double with = 0;
		for (int c = 0; c < nc; c++)
			share[c] = 0;
		for (int64_t i = 0; i < n; i++)
			if (wcls[i] >= 0) {
				share[wcls[i]] += cw[i];
				with += cw[i];
			}
		if (with <= 0)
			break;
		for (int c = 0; c < nc; c++)
			share[c] /= with;
		double qw = weighted_rank(sw, n, 1, cw, pct);
		double qb = weighted_rank(sb, m, 1, cb, pct);
		double qm = mixture_rank(asc, m, bcls, cb, share, nc, pct, tot, cum);
		if (qw - qb <= 0) {
			if (bt < 0)
				point = NAN;
			continue;
		}
		if (bt < 0)
			point = (qm - qb) / (qw - qb);
		else
			est[nest++] = (qm - qb) / (qw - qb);
	}
	double base;
	if (!isnan(point) && nest > 10 && evidence_value(e, "ingress.p99_ms@baseline", &base)) {
		qsort(est, (size_t)nest, sizeof *est, cmp_double);
		double tail = (1 - QUANT_CI_LEVEL) / 2;
		EvValue *v = ev_put(e, "mix.explained_ratio", point, "ratio", EV_SRC_SPANS, EV_Q_NONE, n, 0,
		                    "spans: (p%g of the baseline's per-class latencies mixed in the "
		                    "window's class shares - baseline p%g) / (window p%g - baseline p%g); "
		                    "interval by bootstrap",
		                    pct, pct, pct, pct);
		ev_ci(v, est[(int)floor(tail * (nest - 1))], est[(int)ceil((1 - tail) * (nest - 1))]);
	}
	free(wcls);
	free(bcls);
	free(wa);
	free(ba);
	free(sw);
	free(sb);
	free(asc);
	free(cw);
	free(cb);
	free(share);
	free(tot);
	free(cum);
}
