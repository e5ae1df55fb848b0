/*
 * evidence_sampling.c - how the traces behind the evidence were sampled,
 * and what that changes: counts and rates scaled back to the population,
 * a sentence for the Board, and, for a tail-sampled set, no percentile
 * taken from the traces.
 *
 * Where a sampler says what it kept:
 *  - W3C tracestate, OpenTelemetry's "ot" member (TraceState probability
 *    sampling): th:<hex> is the rejection threshold, 1 to 14 hex digits
 *    standing for a 56-bit number padded with zeros on the right; a trace
 *    is kept with probability 1 - T / 2^56 (th:0 keeps all). The older
 *    p:<n> kept a trace with probability 2^-n (p:63: not by probability).
 *    r:/rv: are randomness, not a rate, and say nothing here.
 *  - Jaeger clients' root span tags sampler.type and sampler.param: a
 *    probabilistic sampler's param is its probability, const 1 keeps all;
 *    a rate-limiting sampler keeps a rate, not a share (unknown ratio).
 *  - OpenTracing's sampling.priority > 0 marks a trace kept on purpose
 *    (an error, a debug flag): such traces are over-represented.
 *  - a pull from a trace back end (importers/trace_pull.h): a trace of a
 *    uniform sample of k of the n traces listed in a range was chosen with
 *    probability k / n (store.h, "trace sets"), of overlapping samples
 *    with that of their union (store_root_sampling()), times its
 *    sampler's.
 *  - the user: --sampled 6%, --sampled tail.
 * A trace kept with probability p stands for 1/p requests (its adjusted
 * count), so the requests of a range are estimated as the sum of the
 * adjusted counts of its traces (Horvitz-Thompson), which also holds when
 * the probability changed within the range.
 *
 * A head sample keeps a uniform share of requests, so its percentiles are
 * unbiased, only wider than the population's would be. A tail sample
 * keeps the slow and failed requests: it is not a population. With the
 * endpoint's complete request-duration metric at hand, a tail sample is
 * also recognised in the data: a uniform sample has a tenth of its
 * requests above the population's p90; when significantly more than a
 * fifth of the traces are slower than the metric's p90 (its interval's
 * upper edge), the set over-represents the tail.
 */
#include "evidence.h"
#include "evidence_priv.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

#define SAMPLING_MAX_ROOTS 20000

/* ---- parsing ------------------------------------------------------------------ */

int evidence_sampling_parse(const char *text, EvSampling *out, char *why, size_t sz)
{
	memset(out, 0, sizeof *out);
	if (text == NULL || *text == '\0') {
		snprintf(why, sz, "empty");
		return -1;
	}
	if (strcmp(text, "tail") == 0) {
		out->kind = EV_SAMPLED_TAIL;
		return 0;
	}
	if (strcmp(text, "all") == 0 || strcmp(text, "none") == 0) {
		out->kind = EV_SAMPLED_ALL;
		out->ratio = 1;
		return 0;
	}
	char *end = NULL;
	double v = strtod(text, &end);
	if (end == text || !isfinite(v)) {
		snprintf(why, sz, "'%s' is not a share ('6%%', '0.06', '1/16'), 'tail' or 'all'", text);
		return -1;
	}
	if (*end == '%' && end[1] == '\0') {
		v /= 100;
	} else if (*end == '/') {
		char *e2 = NULL;
		double d = strtod(end + 1, &e2);
		if (e2 == end + 1 || *e2 != '\0' || !(d > 0)) {
			snprintf(why, sz, "'%s': a fraction needs a positive denominator", text);
			return -1;
		}
		v /= d;
	} else if (*end != '\0') {
		snprintf(why, sz, "'%s' is not a share ('6%%', '0.06', '1/16'), 'tail' or 'all'", text);
		return -1;
	}
	if (!(v > 0 && v <= 1)) {
		snprintf(why, sz, "'%s': a sampled share must be above 0 and at most 100 %%", text);
		return -1;
	}
	out->kind = v >= 1 ? EV_SAMPLED_ALL : EV_SAMPLED_HEAD;
	out->ratio = v;
	return 0;
}

/* The probability a tracestate's "ot" member says, or -1. */
double evidence_tracestate_probability(const char *ts)
{
	if (ts == NULL)
		return -1;
	/* list members are "key=value" separated by commas (and blanks) */
	const char *p = ts;
	while (*p) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		size_t len = strcspn(p, ",");
		if (len > 3 && strncmp(p, "ot=", 3) == 0) {
			/* sub-keys "k:v" separated by ';' */
			const char *q = p + 3, *end = p + len;
			while (q < end) {
				size_t l = 0;
				while (q + l < end && q[l] != ';')
					l++;
				if (l > 3 && strncmp(q, "th:", 3) == 0 && l - 3 <= 14) {
					double t = 0;
					size_t nd = l - 3;
					int ok = 1;
					for (size_t i = 0; i < nd && ok; i++) {
						int c = tolower((unsigned char)q[3 + i]);
						int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
						ok = d >= 0;
						t = t * 16 + d;
					}
					if (ok) {
						t = ldexp(t, 4 * (int)(14 - nd)); /* padded with zeros */
						return 1 - t / ldexp(1, 56);
					}
				} else if (l > 2 && strncmp(q, "p:", 2) == 0) {
					char num[8];
					size_t nl = l - 2 < sizeof num - 1 ? l - 2 : sizeof num - 1;
					memcpy(num, q + 2, nl);
					num[nl] = '\0';
					char *e = NULL;
					long n = strtol(num, &e, 10);
					if (e != num && *e == '\0' && n >= 0 && n <= 62)
						return ldexp(1, -(int)n);
				}
				q += l + (q + l < end);
			}
		}
		p += len;
	}
	return -1;
}

/* ---- reading the data ---------------------------------------------------------- */

typedef struct Acc {
	int64_t roots, with_p, priority, ratelimited;
	double inv;               /* sum of adjusted counts of the roots with p */
	char how[96];             /* what said it */
} Acc;

static int on_row(void *ctx, const StoreSamplingRow *r)
{
	Acc *a = ctx;
	a->roots += r->roots;
	double p = evidence_tracestate_probability(r->trace_state);
	const char *how = "tracestate ot";
	if (p < 0 && r->sampler_type) {
		how = "Jaeger sampler.type/sampler.param";
		if (strcmp(r->sampler_type, "probabilistic") == 0 && r->has_param && r->param > 0 &&
		    r->param <= 1)
			p = r->param;
		else if (strcmp(r->sampler_type, "const") == 0 && r->has_param && r->param >= 1)
			p = 1;
		else if (strcmp(r->sampler_type, "ratelimiting") == 0 ||
		         strcmp(r->sampler_type, "lowerbound") == 0)
			a->ratelimited += r->roots;
	}
	if (r->has_pulled && r->pulled > 0 && r->pulled <= 1) {
		/* pulled from a back end as a uniform sample of what it listed:
		 * chosen with that probability among the traces it holds, which
		 * a sampler before it may have thinned already */
		p = p > 0 ? p * r->pulled : r->pulled;
		how = p == r->pulled ? "a uniform sample pulled from a trace back end (pull --jaeger, "
		                       "--tempo: of the traces it held)"
		                     : "tracestate or sampler tags, times the uniform sample pulled "
		                       "from a trace back end";
	}
	if (p > 0) {
		a->with_p += r->roots;
		a->inv += (double)r->roots / p;
		if (!a->how[0])
			snprintf(a->how, sizeof a->how, "%s", how);
	}
	if (r->has_priority && r->priority > 0)
		a->priority += r->roots;
	return 0;
}

/* The share of the window's traces slower than the metric's p90: a
 * uniform sample has a tenth of its requests there. 1 when significantly
 * more than a fifth are (a tail-sampled set), with k of n. */
static int tail_heavy(const Evidence *e, const Analysis *a, int64_t *k_out, int64_t *n_out,
                      double *edge)
{
	const EvValue *m = evidence_get(e, "ingress.p90_ms.metric");
	if (a == NULL || a->n_nodes == 0 || m == NULL || m->missing || !m->has_ci ||
	    !isfinite(m->hi))
		return 0;
	const DagNode *root = &a->nodes[0];
	int64_t n = root->pop[POP_WINDOW].calls, k = 0;
	if (root->dist == NULL || n < 20)
		return 0;
	for (int64_t i = 0; i < n; i++)
		k += root->dist[i] > m->hi;
	double lo, hi;
	evidence_wilson((double)k, (double)n, &lo, &hi);
	*k_out = k;
	*n_out = n;
	*edge = m->hi;
	return lo > 0.2;
}

int ev_sampling(Store *st, const EvidenceOptions *opt, const Analysis *a, Evidence *e, Err *err)
{
	int np = opt->period.has_baseline ? 2 : 1;
	Acc acc[2];
	memset(acc, 0, sizeof acc);
	for (int p = 0; a && a->root_service && a->root_operation && p < np; p++) {
		TimeRange r = p ? opt->period.base : opt->period.win;
		int rc = store_root_sampling(st, a->root_service, a->root_operation, r.from, r.to,
		                             SAMPLING_MAX_ROOTS, on_row, &acc[p], err);
		if (rc)
			return rc;
	}
	EvSampling s = opt->sampled;
	char how[200] = "";
	if (s.kind != EV_SAMPLED_UNKNOWN) {
		snprintf(how, sizeof how, "given with --sampled");
	} else if (acc[0].with_p > 0 && acc[0].with_p * 10 >= acc[0].roots * 9) {
		s.ratio = (double)acc[0].with_p / acc[0].inv;
		s.kind = s.ratio >= 0.9999 ? EV_SAMPLED_ALL : EV_SAMPLED_HEAD;
		snprintf(how, sizeof how, "%s on %lld of %lld root spans", acc[0].how,
		         (long long)acc[0].with_p, (long long)acc[0].roots);
	} else if (acc[0].ratelimited * 10 >= acc[0].roots * 9 && acc[0].roots > 0) {
		s.kind = EV_SAMPLED_HEAD; /* a rate, not a share: ratio unknown */
		snprintf(how, sizeof how, "Jaeger rate-limiting sampler on %lld root spans",
		         (long long)acc[0].ratelimited);
	}
	int64_t k = 0, n = 0;
	double edge = 0;
	if (s.kind != EV_SAMPLED_TAIL && opt->sampled.kind == EV_SAMPLED_UNKNOWN &&
	    tail_heavy(e, a, &k, &n, &edge)) {
		s.kind = EV_SAMPLED_TAIL;
		s.ratio = 0;
		snprintf(how, sizeof how,
		         "recognised: %lld of the window's %lld traces are slower than the metric's "
		         "p90 (%.1f ms), where a uniform sample has a tenth", (long long)k, (long long)n,
		         edge);
	}
	e->sampling = s;
	snprintf(e->sampling_how, sizeof e->sampling_how, "%s", how);
	int src = opt->sampled.kind != EV_SAMPLED_UNKNOWN ? EV_SRC_OPTION : EV_SRC_SPANS;
	for (int p = 0; p < np; p++) {
		const char *sfx = p ? "@baseline" : "";
		char name[96];
		/* the share of the requests the traces hold, against the metric */
		double traced, counted;
		char rq[64], rm[64];
		snprintf(rq, sizeof rq, "ingress.requests%s", sfx);
		snprintf(rm, sizeof rm, "ingress.requests.metric%s", sfx);
		int has_t = evidence_value(e, rq, &traced), has_m = evidence_value(e, rm, &counted);
		if (has_t && has_m && counted > 0) {
			snprintf(name, sizeof name, "ingress.traced_share%s", sfx);
			ev_put(e, name, traced / counted, "ratio", EV_SRC_DERIVED, EV_Q_NONE,
			       (int64_t)counted, 0,
			       "derived: %.0f traces of the endpoint against %.0f requests the metric "
			       "counted (%s)", traced, counted, p ? "baseline" : "window");
		}
		if (s.kind == EV_SAMPLED_HEAD && s.ratio > 0) {
			double ratio = s.ratio;
			if (opt->sampled.kind == EV_SAMPLED_UNKNOWN && acc[p].with_p > 0)
				ratio = (double)acc[p].with_p / acc[p].inv;
			snprintf(name, sizeof name, "sampling.ratio%s", sfx);
			ev_put(e, name, ratio, "ratio", src, EV_Q_NONE, acc[p].roots, 0,
			       "%s: traces kept with probability %.4g (%s)",
			       src == EV_SRC_OPTION ? "option" : "spans", ratio, how);
			/* the population's requests: the metric's count, else the
			 * traces' adjusted counts */
			snprintf(name, sizeof name, "ingress.requests_est%s", sfx);
			if (has_m)
				ev_put(e, name, counted, "count", EV_SRC_METRIC, EV_Q_NONE, (int64_t)counted, 0,
				       "metric: the requests the endpoint's duration metric counted");
			else if (has_t)
				ev_put(e, name,
				       opt->sampled.kind == EV_SAMPLED_UNKNOWN && acc[p].with_p > 0
				           ? acc[p].inv * traced / (double)acc[p].roots
				           : traced / ratio,
				       "count", src, EV_Q_NONE, (int64_t)traced, 0,
				       "%s: %.0f traces, each standing for 1/p requests (p the probability it "
				       "was kept with)", src == EV_SRC_OPTION ? "option" : "spans", traced);
			/* a rate from the traces alone is scaled back */
			snprintf(name, sizeof name, "ingress.rate_rps%s", sfx);
			const EvValue *rv = evidence_get(e, name);
			if (rv && !rv->missing && rv->source == EV_SRC_SPANS) {
				double rate = rv->value / ratio;
				ev_put(e, name, rate, "1/s", src, EV_Q_NONE, rv->n, 0,
				       "%s: sampled requests per second / %.4g, the sampling probability",
				       src == EV_SRC_OPTION ? "option" : "spans", ratio);
			}
		}
	}
	if (s.kind != EV_SAMPLED_UNKNOWN)
		ev_put(e, "sampling.tail", s.kind == EV_SAMPLED_TAIL, "flag", src, EV_Q_NONE, 0, 0,
		       "%s: %s (%s)", src == EV_SRC_OPTION ? "option" : "spans",
		       s.kind == EV_SAMPLED_TAIL ? "the traces are a tail sample"
		                                 : "the traces are a uniform sample",
		       how);
	if (acc[0].priority > 0)
		ev_put(e, "sampling.priority_share", (double)acc[0].priority / (double)acc[0].roots,
		       "ratio", EV_SRC_SPANS, EV_Q_NONE, acc[0].roots, 0,
		       "spans: %lld of %lld root spans carry sampling.priority > 0 (kept on purpose)",
		       (long long)acc[0].priority, (long long)acc[0].roots);
	return 0;
}

/* ---- a tail sample gives no percentile ------------------------------------------ */

static int is_attribution(const char *nm)
{
	size_t l = strlen(nm);
	return (l > 10 && strcmp(nm + l - 10, ".explained") == 0) ||
	       strcmp(nm, "ingress.rise_ms") == 0 || strcmp(nm, "mix.explained_ratio") == 0 ||
	       strcmp(nm, "explained.max_service") == 0;
}

void ev_tail_withhold(Evidence *e)
{
	/* names collected first: moving values adds to the container */
	char **todo = NULL;
	int nt = 0;
	for (int i = 0; i < e->n; i++) {
		const EvValue *v = &e->v[i];
		if (v->missing || v->source != EV_SRC_SPANS)
			continue;
		if (v->qkind == EV_Q_EXACT || is_attribution(v->name))
			ev_list_add(&todo, &nt, v->name);
	}
	for (int i = 0; i < nt; i++) {
		const char *nm = todo[i];
		if (strstr(nm, ".spans"))
			continue;
		/* keep the figure beside it, for reference, as X.spans */
		char keep[400];
		const char *at = strchr(nm, '@');
		snprintf(keep, sizeof keep, "%.*s.spans%s", at ? (int)(at - nm) : (int)strlen(nm), nm,
		         at ? at : "");
		const EvValue *v = evidence_get(e, nm);
		EvValue c = *v;
		char unit[32], prov[600];
		snprintf(unit, sizeof unit, "%s", v->unit);
		snprintf(prov, sizeof prov, "%s", v->provenance);
		EvValue *k = ev_put(e, keep, c.value, unit, c.source, c.qkind, c.n, c.small_sample, "%s",
		                    prov);
		if (c.has_ci)
			ev_ci(k, c.lo, c.hi);
		ev_put(e, nm, NAN, unit, EV_SRC_MISSING, EV_Q_NONE, 0, 0,
		       "spans: the traces are a tail sample (slow and failed requests kept), not a "
		       "population: no percentile is taken from them (their figure is %s)", keep);
	}
	for (int i = 0; i < nt; i++)
		free(todo[i]);
	free(todo);
}

/* ---- words ------------------------------------------------------------------------ */

static void thousands(double v, char *out, size_t sz)
{
	char d[32];
	snprintf(d, sizeof d, "%.0f", v);
	size_t n = strlen(d), j = 0;
	for (size_t i = 0; i < n && j + 2 < sz; i++) {
		if (i > 0 && d[i - 1] != '-' && (n - i) % 3 == 0)
			out[j++] = ',';
		out[j++] = d[i];
	}
	out[j] = '\0';
}

const char *ev_noun(const char *name)
{
	if (strstr(name, "explained") || strcmp(name, "ingress.rise_ms") == 0)
		return "requests"; /* a replay of the window's requests */
	if (strncmp(name, "dep.", 4) == 0)
		return "calls";
	if (strncmp(name, "pool.", 5) == 0)
		return "waits";
	if (strncmp(name, "ingress.", 8) == 0 || strncmp(name, "class.", 6) == 0 ||
	    strncmp(name, "mix.", 4) == 0 || strncmp(name, "endpoint.", 9) == 0)
		return "requests";
	return "observations";
}

/* Whether span figures are a sample's: known (head or tail), or seen
 * against the metric's count. */
static int spans_sampled(const Evidence *e)
{
	if (e == NULL)
		return 0;
	if (e->sampling.kind == EV_SAMPLED_HEAD || e->sampling.kind == EV_SAMPLED_TAIL)
		return 1;
	double share;
	return e->sampling.kind == EV_SAMPLED_UNKNOWN &&
	       evidence_value(e, "ingress.traced_share", &share) && share < 0.9;
}

void ev_count_text(const Evidence *e, const EvValue *v, char *out, size_t sz)
{
	char n[32];
	thousands((double)v->n, n, sizeof n);
	if (v->top_k > 0) {
		snprintf(out, sz, "the %lld slowest of %s %s", (long long)v->top_k, n, ev_noun(v->name));
		return;
	}
	snprintf(out, sz, "%s %s%s%s", n, v->source == EV_SRC_SPANS && spans_sampled(e) ? "sampled " : "",
	         ev_noun(v->name), v->source == EV_SRC_METRIC ? " of the metric" : "");
}

void evidence_source_text(const Evidence *e, const EvValue *v, char *out, size_t sz)
{
	if (sz == 0)
		return;
	out[0] = '\0';
	if (v == NULL || v->missing) {
		snprintf(out, sz, "missing");
		return;
	}
	const char *src = evidence_source_name(v->source);
	/* a count goes with a sample's statistic: a percentile, a share with
	 * its interval, an attribution */
	int counted = v->qkind != EV_Q_NONE || v->has_ci;
	if (v->source == EV_SRC_SPANS && v->top_k > 0 && v->n > 0) {
		char n[32];
		thousands((double)v->n, n, sizeof n);
		snprintf(out, sz, "%s, the %lld slowest of %s %s, pulled whole", src,
		         (long long)v->top_k, n, ev_noun(v->name));
	} else if ((v->source == EV_SRC_SPANS || v->source == EV_SRC_METRIC) && v->n > 0 && counted) {
		char n[32];
		thousands((double)v->n, n, sizeof n);
		snprintf(out, sz, "%s, %s %s%s", src, n,
		         v->source == EV_SRC_SPANS && spans_sampled(e) ? "sampled " : "",
		         ev_noun(v->name));
	} else {
		snprintf(out, sz, "%s", src);
	}
}

static int sampling_note(const Evidence *e, char *out, size_t sz);

int evidence_sampling_note(const Evidence *e, char *out, size_t sz)
{
	if (sz == 0)
		return 0;
	int said = sampling_note(e, out, sz);
	/* a pulled slowest set serves the tail, not the percentiles: say whose
	 * traces the tail's figures are */
	const char *tail = evidence_fact(e, "tail.source");
	if (tail && *tail) {
		size_t l = strlen(out);
		snprintf(out + l, sz - l, "%sthe tail's traces (critical path, exemplars, waterfall) "
		         "are %s, no population: every rate and counterfactual is the sample's, and "
		         "every percentile but the endpoint's own where they are read off the slowest "
		         "sets", said ? "; " : "", tail);
		said = 1;
	}
	return said;
}

static int sampling_note(const Evidence *e, char *out, size_t sz)
{
	out[0] = '\0';
	double traced = 0, est = 0, share = 0, ratio = 0;
	int has_t = evidence_value(e, "ingress.requests.spans", &traced) ||
	            evidence_value(e, "ingress.requests", &traced);
	int has_est = evidence_value(e, "ingress.requests_est", &est) ||
	              evidence_value(e, "ingress.requests.metric", &est);
	int has_share = evidence_value(e, "ingress.traced_share", &share);
	evidence_value(e, "sampling.ratio", &ratio);
	char t[32], n[32];
	thousands(traced, t, sizeof t);
	thousands(est, n, sizeof n);
	switch (e->sampling.kind) {
	case EV_SAMPLED_TAIL:
		snprintf(out, sz,
		         "the traces are a tail sample (%s): slow and failed requests are "
		         "over-represented, so no percentile is taken from them%s",
		         e->sampling_how,
		         has_est ? "; the percentiles come from the complete metrics"
		                 : "; no complete metric gives them either");
		return 1;
	case EV_SAMPLED_HEAD: {
		char count[120] = "";
		if (has_t && has_est)
			snprintf(count, sizeof count, ": %s traces of about %s requests", t, n);
		else if (has_t)
			snprintf(count, sizeof count, ": %s traces", t);
		if (ratio > 0)
			snprintf(out, sz,
			         "the traces are a %.3g %% head sample (%s)%s; percentiles from a head "
			         "sample are unbiased, only wider; counts and rates are scaled back, and a "
			         "figure from a complete metric is used where it pins the change tighter",
			         100 * ratio, e->sampling_how, count);
		else
			snprintf(out, sz,
			         "the traces are a head sample at an unknown rate (%s)%s; percentiles from "
			         "it are unbiased, only wider; counts and rates are not scaled",
			         e->sampling_how, count);
		return 1;
	}
	default:
		break;
	}
	if (has_share && share < 0.9 && has_t) {
		snprintf(out, sz,
		         "the traces hold %s of the %s requests the endpoint's duration metric counted "
		         "(%.3g %%): a sample, though the spans do not say how it was taken (the "
		         "OpenTelemetry SDKs' TraceIdRatioBasedSampler writes no tracestate); give "
		         "--sampled (a share, or 'tail') to have counts scaled and a tail sample "
		         "recognised; a figure from the complete metric is used where it pins the "
		         "change tighter",
		         t, n, 100 * share);
		return 1;
	}
	return 0;
}
