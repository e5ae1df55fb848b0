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

/* mix.explained_ratio with a bootstrap interval (attribution.c): how much
 * of the percentile's rise the baseline's per-class latencies mixed in
 * the window's class shares reproduce. Missing when the rise is not
 * positive. */
void ev_mix_explained(Evidence *e, const EvRequestSet *w, const EvRequestSet *b, double pct);

/* Pools, executor and CPU from stored metrics (evidence_metrics.c). */
int ev_metrics(Store *st, const EvidenceOptions *opt, Evidence *e, Err *err);

/* Quantile q (0..1) interpolated inside cumulative buckets (le ascending,
 * the last +Inf), Prometheus histogram_quantile style. NAN when empty. */
double ev_histogram_quantile(const double *le, const double *cum, int n, double q);

#endif
