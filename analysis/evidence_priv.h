/*
 * evidence_priv.h - what evidence.c, evidence_req.c and evidence_metrics.c
 * share. Not for other modules.
 */
#ifndef TT_EVIDENCE_PRIV_H
#define TT_EVIDENCE_PRIV_H

#include "evidence.h"

/* Minimum requests behind a ratio before it is trusted. */
#define EV_MIN_RATIO_N 30

/* Adds or replaces a value. prov is a printf format for the provenance.
 * A NAN value is stored as missing. Returns the stored value. */
EvValue *ev_put(Evidence *e, const char *name, double v, const char *unit, int source, int qkind,
                int64_t n, int small, const char *prov, ...) __attribute__((format(printf, 9, 10)));

/* Gives v (may be NULL) a 95 % interval. */
void ev_ci(EvValue *v, double lo, double hi);

/* A proportion k of n from spans with its Wilson interval; missing with a
 * reason when n == 0. what: "requests with late work"; p: POP_*. */
EvValue *ev_put_prop(Evidence *e, const char *name, double k, int64_t n, const char *what,
                     int p);

/* Marks name missing (unless present and not missing) with a reason. */
void ev_missing(Evidence *e, const char *name, const char *unit, const char *why);

/* Sets a fact (copied). */
void ev_fact(Evidence *e, const char *name, const char *value);

/* Adds s to a string list when not already there (copied). */
void ev_list_add(char ***list, int *n, const char *s);

/* The request pass (evidence_req.c): late work, omission, fan-out per
 * class, attempts, serial calls, placement, mix reweighting. */
int ev_requests(Store *st, const EvidenceOptions *opt, const Analysis *a, Evidence *e, Err *err);

/* Counterfactual attribution of the rise of the pct-th percentile
 * (attribution.c): dep.<d>[.front|.wait|.service|.queue].explained and
 * endpoint.queue.explained, with bootstrap intervals. */
void ev_attribution(Evidence *e, const EvRequestSet *w, const EvRequestSet *b, double pct);

/* The rise of the pct-th percentile read from the tops of both ranges:
 * tw the kw largest of the window's nw requests (descending), as a pulled
 * slowest set with its range's count gives them, and rw a uniform sample
 * of krw of the others (descending; may be empty), each standing for
 * (nw - kw) / krw of them (quant_top()); tb, rb likewise for the
 * baseline. The point is what quant_top() reads (exact when the rank is
 * reached within the tops); the 95 % interval is the bootstrap rise_ci()
 * makes on all the requests (ATTR_BOOT resamples of nw and nb, each draw
 * one of the top with probability 1/n, else one of the sample of the
 * rest). Returns 1 with out = {rise, lo, hi, ratio, ratio lo, ratio hi}
 * (the ratio's NAN when the baseline's percentile is not above 0), or 0
 * when the percentile of the data or of a resample is not reached. */
int ev_top_rise(const double *tw, int64_t kw, const double *rw, int64_t krw, int64_t nw,
                const double *tb, int64_t kb, const double *rb, int64_t krb, int64_t nb,
                double pct, double out[6]);

/* The 95 % bootstrap interval of one range's pct-th percentile from its
 * top and the sample of its rest, resampled as ev_top_rise() does (the
 * top as all n requests would vary, the rest as its sample does): the
 * interval of a stratified estimate, whose order-statistic ranks on n
 * would claim more than the sample knows. 1 with *lo, *hi; 0 when a
 * resample's percentile is not reached. */
int ev_top_interval(const double *top, int64_t k, const double *rest, int64_t kr, int64_t n,
                    double pct, double *lo, double *hi);

/* mix.explained_ratio with a bootstrap interval (attribution.c): how much
 * of the percentile's rise the baseline's per-class latencies mixed in
 * the window's class shares reproduce. Missing when the rise is not
 * positive. */
void ev_mix_explained(Evidence *e, const EvRequestSet *w, const EvRequestSet *b, double pct);

/* Per caller and callee, the p90 of the client-side wait and of the
 * server's time in both sets (evidence_caller.c):
 * caller.<s>.callee.<d>.{client_wait,service}.p90_ms[@baseline], for
 * pairs with 30 calls with a server span on both sides; a caller with two
 * such callees or more joins e->callers. */
void ev_callers(Evidence *e, const EvRequestSet *w, const EvRequestSet *b);

/* Pools, executor and CPU from stored metrics, and the request-duration
 * histograms matched to the DAG of a (may be NULL) (evidence_metrics.c);
 * ends with ev_best_source(). */
int ev_metrics(Store *st, const EvidenceOptions *opt, const Analysis *a, Evidence *e, Err *err);

/* Request-duration histograms (HTTP, RPC, spanmetrics) matched to the
 * endpoint and the dependencies of a: "<name>.metric" twins of
 * ingress.p99_ms, dep.D.service.p99_ms, dep.D.client.p99_ms (p90 too, and
 * the ingress's p50), ingress.requests.metric, and ingress.rate_rps from
 * the metric's count (evidence_match.c). */
int ev_metric_durations(Store *st, const EvidenceOptions *opt, const Analysis *a, Evidence *e,
                        Err *err);

/* How tightly a window value w and its baseline b (may be NULL) pin their
 * difference: *open gets how many of their interval bounds are unbounded,
 * and the width of the MOVER interval of w - b over the bounded sides is
 * returned (a side without an interval counts as exact). ev_best_source()
 * and the slowest sets' figures (ev_top()) choose a source by it: fewer
 * unbounded sides first, then the narrower width. */
double ev_pair_width(const EvValue *w, const EvValue *b, int *open);

/* Copies the value src_name to name, with a provenance made of prefix and
 * src_name's own. */
void ev_copy_value(Evidence *e, const char *name, const char *src_name, const char *prefix);

/* The window's and the baseline's pulled slowest sets, read as the tops of
 * their ranges (evidence_top.c): when a range's slowest set was pulled for
 * exactly that range, every trace of it is stored and the back end listed
 * the range whole, the endpoint's p99 and p90 (and the rise of the
 * objective's percentile) whose ranks fall inside the tops are exact:
 * ingress.p99_ms.slowest[@baseline], ingress.p90_ms.slowest[@baseline],
 * ingress.rise_ms.slowest, ingress.rise_ratio.slowest. A figure whose pair
 * pins the change tighter than the sample's replaces it (the sample's is
 * kept as X.sample); a fact says why a range's set cannot serve. After the
 * attribution, which replays the sample. */
int ev_top(Store *st, const EvidenceOptions *opt, const Analysis *a, Evidence *e, Err *err);

/* For every name X with a metric twin X.metric: X reports the source that
 * pins the window-baseline change tighter (a complete pair first, then
 * fewer unbounded interval sides, then the narrower interval of the
 * difference, spans on a tie; with tail 1, the metric whenever it has X). When the metric
 * wins, X and X@baseline become copies of the metric's values, their
 * provenance saying so, and the spans' figures stay as X.spans. */
void ev_best_source(Evidence *e, int has_baseline, int tail);

/* How the traces of the endpoint of a were sampled (the user's word, the
 * root spans' tracestate and sampler tags, a tail recognised against the
 * endpoint's metric p90): e->sampling, sampling.ratio, sampling.tail,
 * ingress.traced_share, ingress.requests_est, and a span rate scaled back
 * (evidence_sampling.c). Before ev_best_source(). */
int ev_sampling(Store *st, const EvidenceOptions *opt, const Analysis *a, Evidence *e, Err *err);

/* A tail sample is not a population: every percentile and attribution
 * taken from the spans is moved to "<name>.spans" and the name marked
 * missing, saying why (a metric twin that took its place stays). */
void ev_tail_withhold(Evidence *e);

/* What the count behind a name is of: "calls" (a dependency), "requests"
 * (the endpoint, its classes, an attribution's replay), "waits" (a pool),
 * else "observations". */
const char *ev_noun(const char *name);

/* "250 calls", "437 sampled calls" (span figures of a sampled set),
 * "7,147 calls of the metric": the count behind v, for a reason. */
void ev_count_text(const Evidence *e, const EvValue *v, char *out, size_t sz);

/* Quantile q (0..1) interpolated inside cumulative buckets (le ascending,
 * the last +Inf), Prometheus histogram_quantile style. NAN when empty. */
double ev_histogram_quantile(const double *le, const double *cum, int n, double q);

#endif
