/*
 * evidence_top.c - the endpoint's percentiles read off the pulled slowest
 * sets (importers/trace_pull.h), as the tops of their ranges.
 *
 * A slowest set of N holds every trace of its range above its shortest
 * member. When the back end listed the range whole, its count M is known,
 * and the range's observations at ranks above M - N are known exactly: a
 * nearest-rank percentile of all M whose rank, and the lower rank of its
 * order-statistic interval, lie among them (the p99 of 300 is the 4th
 * slowest, its interval's lower end the 8th) is exactly the figure the
 * whole range would give (quant_top()). So is the bootstrap of its rise:
 * a resample of M requests reads its percentile from how often it drew
 * each of the top (ev_top_rise()). A uniform sample of 100 cannot bound a
 * p99 at all; the tops of 20 can, on both sides.
 *
 * What must hold, else the range's set is not used and a fact says why
 * (evidence fact top.window / top.baseline):
 *  - a slowest set was pulled for exactly the range (its count is the
 *    range's), of the endpoint's service and an entry span name;
 *  - the back end listed the range whole (population known, not capped);
 *  - every member is stored and is a request of the endpoint (so the
 *    count is the endpoint's, and the top has no hole);
 *  - no request of the range waited in a queue before its entry span: the
 *    back end ranks by the entry span's length, the percentile counts the
 *    queue too, so a queue could reorder the top.
 * The figures are twins (X.slowest) of the sample's; each replaces the
 * sample's when its window-baseline pair pins the change tighter
 * (ev_pair_width(), the rule ev_best_source() applies between a metric and
 * the spans), the sample's kept as X.sample and named in the provenance.
 * The attribution replays the sample and keeps to what the sample can
 * see: when the rise is shown by the tops only, it says so.
 */
#include "evidence.h"
#include "evidence_priv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "quantile.h"

typedef struct Top {
	double *v;                 /* the top, largest first */
	int64_t k;                 /* its length */
	int64_t *keys;             /* its trace keys, ascending once read */
	double *rest;              /* the sample's other requests, largest first */
	int64_t kr;
	int64_t n;                 /* the range's count, -1 unknown */
	int usable;                /* every condition above holds */
	char why[600];             /* why not, when a set exists but cannot serve */
	int queued;                /* a request of the range waited before its entry */
} Top;

static int desc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? 1 : x > y ? -1 : 0;
}

static int key_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* as trace_ingress_ns(): the root's duration plus its queue wait */
static double ingress_ms(const StoreRootKey *k)
{
	return (double)(k->end_ns - k->start_ns + (k->has_queue ? k->queue_ns : 0)) / 1e6;
}

/* A request of the range's population (the samples): the rest's sample
 * unless it is one of the top. */
static int on_root(void *ctx, const StoreRootKey *k)
{
	Top *t = ctx;
	if (k->has_queue && k->queue_ns > 0)
		t->queued = 1;
	if (t->k > 0 && bsearch(&k->trace_key, t->keys, (size_t)t->k, sizeof *t->keys, key_cmp))
		return 0;
	if (t->kr % 256 == 0)
		t->rest = xrealloc(t->rest, (size_t)(t->kr + 256) * sizeof *t->rest);
	t->rest[t->kr++] = ingress_ms(k);
	return 0;
}

/* A request of the top. */
static int on_top(void *ctx, const StoreRootKey *k)
{
	Top *t = ctx;
	if (k->has_queue && k->queue_ns > 0)
		t->queued = 1;
	if (t->k % 64 == 0) {
		t->v = xrealloc(t->v, (size_t)(t->k + 64) * sizeof *t->v);
		t->keys = xrealloc(t->keys, (size_t)(t->k + 64) * sizeof *t->keys);
	}
	t->keys[t->k] = k->trace_key;
	t->v[t->k++] = ingress_ms(k);
	return 0;
}

/* Reads the top of range r; 0 (t->usable says whether it serves), or a
 * negative code. found is set when a set exists for the range. */
static int read_top(Store *st, const Analysis *a, TimeRange r, Top *t, int *found, Err *err)
{
	memset(t, 0, sizeof *t);
	t->n = -1;
	*found = 0;
	if (r.from == INT64_MIN || r.to == INT64_MAX)
		return 0;
	StoreSlowestSet ss;
	int rc = store_slowest_exact(st, a->root_service, a->root_operation, r.from, r.to, &ss, err);
	if (rc || !ss.found)
		return rc;
	*found = 1;
	if ((rc = store_slowest_roots(st, a->root_service, a->root_operation, r.from, r.to, on_top,
	                             t, err)))
		return rc;
	if (t->k > 1)
		qsort(t->keys, (size_t)t->k, sizeof *t->keys, key_cmp);
	if ((rc = store_root_keys(st, a->root_service, a->root_operation, r.from, r.to, on_root, t,
	                          err)))
		return rc;
	t->n = ss.population;
	if (t->k > 1)
		qsort(t->v, (size_t)t->k, sizeof *t->v, desc);
	if (t->kr > 1)
		qsort(t->rest, (size_t)t->kr, sizeof *t->rest, desc);
	if (ss.population < 0)
		snprintf(t->why, sizeof t->why,
		         "the back end could not list the range whole (a search was capped), so its "
		         "count is not known and the %lld slowest are no known ranks",
		         (long long)ss.members);
	else if (t->k < ss.members || t->k > ss.population ||
	         (ss.members < ss.requested && ss.members < ss.population))
		/* a member is recorded once its trace is stored: a set short of
		 * N (and of the range's count) is a pull cut short */
		snprintf(t->why, sizeof t->why,
		         "%lld of the slowest set's %lld traces (of %lld asked, %lld listed in the "
		         "range) are stored requests of the endpoint (pulled for '%s'): the top may "
		         "have a hole", (long long)t->k, (long long)ss.members, (long long)ss.requested,
		         (long long)ss.population, ss.operation);
	else
		t->usable = t->k > 0;
	return 0;
}

static const char *const SIDE[2] = {"window", "baseline"};

/* "1st", "2nd", "3rd", "4th", "11th", "22nd" */
static const char *ordinal(int64_t n, char *out, size_t sz)
{
	int64_t t = n % 100, u = n % 10;
	const char *sfx = t >= 11 && t <= 13 ? "th" : u == 1 ? "st" : u == 2 ? "nd" : u == 3 ? "rd" : "th";
	snprintf(out, sz, "%lld%s", (long long)n, sfx);
	return out;
}

/* Puts X.slowest[@baseline] for percentile pct of both tops (with the
 * sample of the rest); 1 when every side has its figure. */
static int put_pct(Evidence *e, const Top t[2], int np, double pct, const char *x)
{
	double v[2], lo[2], hi[2];
	int st[2] = {QUANT_TOP_BELOW, QUANT_TOP_BELOW};
	for (int p = 0; p < np; p++) {
		st[p] = quant_top(t[p].v, t[p].k, t[p].rest, t[p].kr, t[p].n, pct, &v[p], &lo[p], &hi[p]);
		/* a request of the range that queued before its entry span may be
		 * above the top unseen: the back end ranked by the span's length */
		if (st[p] == QUANT_TOP_EXACT && t[p].queued)
			st[p] = QUANT_TOP_WEIGHTED;
	}
	for (int p = 0; p < np; p++)
		if (st[p] != QUANT_TOP_EXACT && st[p] != QUANT_TOP_WEIGHTED)
			return 0;
	/* an estimate's interval is its stratified bootstrap's: the order
	 * statistics of all n would claim more than the sample of the rest
	 * knows */
	for (int p = 0; p < np; p++) {
		if (st[p] != QUANT_TOP_WEIGHTED)
			continue;
		/* the wider of the bootstrap's and the ranks' (a bootstrap never
		 * reaches past the largest value seen; the ranks of n may find no
		 * upper bound) */
		double blo, bhi;
		if (!ev_top_interval(t[p].v, t[p].k, t[p].rest, t[p].kr, t[p].n, pct, &blo, &bhi))
			return 0;
		lo[p] = blo < lo[p] ? blo : lo[p];
		hi[p] = bhi > hi[p] ? bhi : hi[p];
	}
	for (int p = 0; p < np; p++) {
		char name[96];
		snprintf(name, sizeof name, "%s.slowest%s", x, p ? "@baseline" : "");
		int64_t l, u, r = (int64_t)ceil(pct / 100.0 * (double)t[p].n);
		quant_ci_ranks(t[p].n, pct, &l, &u);
		char up[64], o1[32], o2[32], o3[32];
		if (u <= t[p].n)
			snprintf(up, sizeof up, "the %s slowest", ordinal(t[p].n - u + 1, o3, sizeof o3));
		else
			snprintf(up, sizeof up, "no upper bound");
		char how[300];
		if (st[p] == QUANT_TOP_EXACT)
			snprintf(how, sizeof how, "exact: read off its %lld slowest, pulled whole",
			         (long long)t[p].k);
		else
			snprintf(how, sizeof how,
			         "estimated from its %lld slowest, pulled whole, and the sample's %lld "
			         "other requests, each standing for %.3g (%s)",
			         (long long)t[p].k, (long long)t[p].kr,
			         t[p].kr ? (double)(t[p].n - t[p].k) / (double)t[p].kr : 0.0,
			         t[p].queued ? "requests queued before their entry span, and the back end "
			                       "ranks by the span's length"
			                     : "a sampled request lies above a rank it needs");
		char ci[160];
		if (st[p] == QUANT_TOP_EXACT && l >= 1)
			snprintf(ci, sizeof ci, "95 %% interval from the %s slowest to %s",
			         ordinal(t[p].n - l + 1, o2, sizeof o2), up);
		else if (st[p] == QUANT_TOP_EXACT)
			snprintf(ci, sizeof ci, "95 %% interval with no lower bound, up to %s", up);
		else
			snprintf(ci, sizeof ci, "95 %% interval the wider of a bootstrap (the slowest as "
			         "all the requests would vary, the sample below them as it does) and the "
			         "ranks of all of them");
		EvValue *ev = ev_put(e, name, v[p], "ms", EV_SRC_SPANS, EV_Q_EXACT, t[p].n, 0,
		                     "spans: p%g of the %lld requests the trace back end listed in the "
		                     "%s, %s: the %s slowest; %s",
		                     pct, (long long)t[p].n, SIDE[p], how,
		                     ordinal(t[p].n - r + 1, o1, sizeof o1), ci);
		ev_ci(ev, lo[p], hi[p]);
		if (ev && !ev->missing)
			ev->top_k = t[p].k;
	}
	return 1;
}

/* Replaces x (and x@baseline) with x.slowest when the pair pins the
 * change tighter (or x has no pair); the sample's kept as x.sample. */
static void choose_pair(Evidence *e, const char *x, int np)
{
	char xb[96], s[96], sb[96], k[96], kb[96];
	snprintf(xb, sizeof xb, "%s@baseline", x);
	snprintf(s, sizeof s, "%s.slowest", x);
	snprintf(sb, sizeof sb, "%s.slowest@baseline", x);
	snprintf(k, sizeof k, "%s.sample", x);
	snprintf(kb, sizeof kb, "%s.sample@baseline", x);
	const EvValue *vs = evidence_get(e, s), *vsb = np > 1 ? evidence_get(e, sb) : NULL;
	if (vs == NULL || vs->missing || (np > 1 && (vsb == NULL || vsb->missing)))
		return;
	const EvValue *vx = evidence_get(e, x), *vxb = np > 1 ? evidence_get(e, xb) : NULL;
	int have = vx && !vx->missing && (np == 1 || (vxb && !vxb->missing));
	int ot, ox = 0;
	double wt = ev_pair_width(vs, vsb, &ot), wx = have ? ev_pair_width(vx, vxb, &ox) : INFINITY;
	if (have && !(ot < ox || (ot == ox && wt < wx)))
		return;
	char why[2][600];
	for (int p = 0; p < np; p++) {
		const EvValue *o = p ? vxb : vx;
		if (have) {
			char ci[96] = "";
			if (o->has_ci)
				snprintf(ci, sizeof ci, ", interval [%.4g, %.4g]", o->lo, o->hi);
			snprintf(why[p], sizeof why[p],
			         "best source (the slowest sets pin the change tighter): the sample's "
			         "figure, %.4g ms on %lld%s, is kept as %s; ", o->value, (long long)o->n, ci,
			         p ? kb : k);
		} else {
			snprintf(why[p], sizeof why[p], "best source (the sample has no figure): ");
		}
	}
	if (have) {
		ev_copy_value(e, k, x, "");
		if (np > 1)
			ev_copy_value(e, kb, xb, "");
	}
	ev_copy_value(e, x, s, why[0]);
	if (np > 1)
		ev_copy_value(e, xb, sb, why[1]);
}

/* 1 when a's interval is tighter than b's: fewer unbounded sides, then
 * narrower. */
static int tighter(const EvValue *a, const EvValue *b)
{
	if (b == NULL || b->missing || !b->has_ci)
		return 1;
	int oa = !isfinite(a->lo) + !isfinite(a->hi), ob = !isfinite(b->lo) + !isfinite(b->hi);
	if (oa != ob)
		return oa < ob;
	return oa == 0 && a->hi - a->lo < b->hi - b->lo;
}

/* After the rise was taken from the tops: the attribution, which replayed
 * the sample, says why it attributed nothing where the sample could not
 * see the rise the tops show. */
static void attribution_words(Evidence *e, const EvValue *top, const EvValue *smp, double pct)
{
	const EvValue *ap = evidence_get(e, "attribution.percentile");
	if (ap == NULL || !ap->missing)
		return;
	char why[900];
	snprintf(why, sizeof why,
	         "spans: the rise of the p%g is shown by the slowest sets (%+.1f ms, 95 %% interval "
	         "%+.1f to %+.1f ms, the %lld slowest of %lld requests and their baseline's), but not "
	         "by the sample the replay would use (%lld requests: %+.1f ms, 95 %% interval %+.1f to "
	         "%+.1f ms), nor its p90: a replay of the sample cannot say where the rise went, so "
	         "nothing is attributed; the slowest traces' critical paths (tail ownership) and the "
	         "signatures can",
	         pct, top->value, top->lo, top->hi, (long long)top->top_k, (long long)top->n,
	         (long long)smp->n, smp->value, smp->lo, smp->hi);
	char **todo = NULL;
	int nt = 0;
	for (int i = 0; i < e->n; i++) {
		const char *nm = e->v[i].name;
		size_t l = strlen(nm);
		if (e->v[i].missing && ((l > 10 && strcmp(nm + l - 10, ".explained") == 0) ||
		                        strcmp(nm, "attribution.percentile") == 0 ||
		                        strcmp(nm, "mix.explained_ratio") == 0))
			ev_list_add(&todo, &nt, nm);
	}
	for (int i = 0; i < nt; i++) {
		const EvValue *v = evidence_get(e, todo[i]);
		char unit[32];
		snprintf(unit, sizeof unit, "%s", v->unit);
		ev_put(e, todo[i], NAN, unit, EV_SRC_MISSING, EV_Q_NONE, 0, 0, "%s", why);
		free(todo[i]);
	}
	free(todo);
}

int ev_top(Store *st, const EvidenceOptions *opt, const Analysis *a, Evidence *e, Err *err)
{
	if (st == NULL || a == NULL || a->root_service == NULL || a->root_operation == NULL)
		return 0;
	int np = opt->period.has_baseline ? 2 : 1;
	Top t[2];
	memset(t, 0, sizeof t);
	int found[2] = {0, 0}, rc = 0;
	for (int p = 0; p < np && rc == 0; p++)
		rc = read_top(st, a, p ? opt->period.base : opt->period.win, &t[p], &found[p], err);
	if (rc)
		goto out;
	for (int p = 0; p < np; p++) {
		char name[32];
		snprintf(name, sizeof name, "top.%s", SIDE[p]);
		if (found[p] && !t[p].usable)
			ev_fact(e, name, t[p].why);
		else if (found[p])
			ev_fact(e, name, "usable");
	}
	if (!t[0].usable || (np > 1 && !t[1].usable))
		goto out;
	/* a sample that holds every request of both ranges is the full data:
	 * nothing to read off the tops */
	int whole = 1;
	for (int p = 0; p < np; p++) {
		double nreq;
		whole &= evidence_value(e, p ? "ingress.requests@baseline" : "ingress.requests", &nreq) &&
		         nreq >= (double)t[p].n;
	}
	if (whole) {
		ev_fact(e, "top.window", "the sample holds every request of both ranges");
		goto out;
	}
	put_pct(e, t, np, 99, "ingress.p99_ms");
	put_pct(e, t, np, 90, "ingress.p90_ms");
	if (np > 1) {
		double pct = opt->model && opt->model->objective_pct > 0 ? opt->model->objective_pct : 99;
		double r[6];
		if (ev_top_rise(t[0].v, t[0].k, t[0].rest, t[0].kr, t[0].n, t[1].v, t[1].k, t[1].rest,
		                t[1].kr, t[1].n, pct, r)) {
			EvValue *v = ev_put(e, "ingress.rise_ms.slowest", r[0], "ms", EV_SRC_SPANS,
			                    EV_Q_EXACT, t[0].n, 0,
			                    "spans: window p%g minus baseline p%g of the %lld and %lld "
			                    "requests the trace back end listed, read off their %lld and "
			                    "%lld slowest (pulled whole) and the sample's %lld and %lld "
			                    "others; interval by bootstrap of all of them",
			                    pct, pct, (long long)t[0].n, (long long)t[1].n,
			                    (long long)t[0].k, (long long)t[1].k, (long long)t[0].kr,
			                    (long long)t[1].kr);
			ev_ci(v, r[1], r[2]);
			if (v && !v->missing)
				v->top_k = t[0].k;
			if (!isnan(r[3])) {
				v = ev_put(e, "ingress.rise_ratio.slowest", r[3], "index", EV_SRC_SPANS,
				           EV_Q_NONE, t[0].n, 0,
				           "spans: window p%g over baseline p%g of the %lld and %lld requests "
				           "the trace back end listed, read off their slowest; interval by "
				           "bootstrap", pct, pct, (long long)t[0].n, (long long)t[1].n);
				ev_ci(v, r[4], r[5]);
				if (v && !v->missing)
					v->top_k = t[0].k;
			}
			const EvValue *top = evidence_get(e, "ingress.rise_ms.slowest");
			const EvValue *smp = evidence_get(e, "ingress.rise_ms");
			if (top && !top->missing && tighter(top, smp)) {
				EvValue sc = smp ? *smp : (EvValue){0};
				int had = smp && !smp->missing;
				char why[400] = "best source (the slowest sets pin the rise tighter): ";
				if (had) {
					size_t l = strlen(why);
					snprintf(why + l, sizeof why - l,
					         "the sample's rise, %+.1f ms [%+.1f, %+.1f] on %lld requests, is "
					         "kept as ingress.rise_ms.sample; ", sc.value, sc.lo, sc.hi,
					         (long long)sc.n);
					ev_copy_value(e, "ingress.rise_ms.sample", "ingress.rise_ms", "");
					if (evidence_get(e, "ingress.rise_ratio"))
						ev_copy_value(e, "ingress.rise_ratio.sample", "ingress.rise_ratio", "");
				}
				ev_copy_value(e, "ingress.rise_ms", "ingress.rise_ms.slowest", why);
				if (evidence_get(e, "ingress.rise_ratio.slowest"))
					ev_copy_value(e, "ingress.rise_ratio", "ingress.rise_ratio.slowest", why);
				if (had && evidence_objective_rose(e, NULL, 0) == 1)
					attribution_words(e, evidence_get(e, "ingress.rise_ms"),
					                  evidence_get(e, "ingress.rise_ms.sample"), pct);
			}
		}
	}
	choose_pair(e, "ingress.p99_ms", np);
	choose_pair(e, "ingress.p90_ms", np);
out:
	for (int p = 0; p < 2; p++) {
		free(t[p].v);
		free(t[p].keys);
		free(t[p].rest);
	}
	return rc;
}
