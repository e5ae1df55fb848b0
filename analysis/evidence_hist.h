/*
 * evidence_hist.h - histogram metrics as evidence: the increase of each
 * series over a range, series merged on the bucket bounds they share, and
 * a quantile with its 95 % interval from the bucket counts. Shared by
 * evidence_metrics.c (pools, executors) and evidence_match.c (request
 * durations matched to the DAG). Not for other modules.
 *
 * A histogram that counts every request is a sample of n = its count in
 * the range, so its quantile has the same order-statistic interval as an
 * exact quantile of n observations (quant_ci_ranks()). Only the bucket of
 * each rank is known, not the value: the interval runs from the lower
 * edge of the bucket that holds the lower rank to the upper edge of the
 * bucket that holds the upper rank, so it is never narrower than a
 * bucket. The point value is interpolated inside its bucket, as
 * Prometheus' histogram_quantile does.
 */
#ifndef TT_EVIDENCE_HIST_H
#define TT_EVIDENCE_HIST_H

#include <stdint.h>

#include "evidence.h"
#include "store.h"

/* A merged histogram: cumulative counts at ascending upper bounds, the
 * last +INFINITY. */
typedef struct EvHist {
	double *le, *cum;
	int nb;
	int series;               /* series merged */
	int unmerged;             /* series left out: no bound in common */
	int single;               /* a series had one snapshot and nothing before
	                           * it: its counts run from the process's start */
	char family[160];         /* the stored family name */
	char unit[32];            /* as stored ("" none) */
	char scheme[16];          /* "explicit" or "exponential" */
} EvHist;

void ev_hist_fini(EvHist *h);

/* Total count of h (0 when empty). */
double ev_hist_total(const EvHist *h);

/* Quantile q (0..1) of h in the histogram's unit: *v interpolated inside
 * its bucket, [*lo, *hi] the 95 % interval (the lower rank's bucket's lower
 * edge, the upper rank's bucket's upper edge; -INFINITY / INFINITY when
 * the count leaves a rank unbounded or it falls in the +Inf bucket).
 * NAN everywhere when h is empty. */
void ev_hist_quantile(const EvHist *h, double q, double *v, double *lo, double *hi);

/* The same on plain arrays (le ascending, the last +Inf; cum cumulative). */
void ev_histogram_ci(const double *le, const double *cum, int n, double q, double *lo,
                     double *hi);

/* Which of the collector's targets a series feeds: called once per series
 * with its first row (labels, service, family); returns a target index
 * (0 <= t < n_targets) or -1 to leave the series out. */
typedef int (*EvSeriesFn)(void *ctx, const StoreMetricRow *r);

/* Collects the histogram points of family (label filter labels_json, may
 * be NULL) and, for each of n_ranges ranges and each target, merges the
 * increase of its series over the range into out[t * n_ranges + range]
 * (n_targets * n_ranges EvHist, zeroed by the caller, freed with
 * ev_hist_fini()). The increase of a cumulative series is its last point
 * in the range minus its last point before it (or its first in the range;
 * a counter reset takes the last point as is; one snapshot alone is used
 * as is and flagged); a delta series' points in the range are summed. Each
 * series is kept on the bounds all its points share (an exponential
 * histogram's populated range grows and its scale falls over time), and
 * series are merged on the bounds all of them share: a count is never
 * moved across a bound it was not recorded against. Returns 0 or a
 * negative code with err. */
int ev_hist_collect(Store *st, const char *family, const char *labels_json, EvSeriesFn fn,
                    void *ctx, int n_targets, const TimeRange *ranges, int n_ranges, EvHist *out,
                    Err *err);

/* Milliseconds per unit of a histogram's values: its unit, else the unit
 * word a Prometheus name ends in (_seconds, _milliseconds), else dflt_ms
 * (a name's convention) with *assumed set to say so. */
double ev_hist_unit_ms(const char *unit, const char *family, double dflt_ms,
                       const char **assumed);

/* Writes the bucket bounds in ms ("5 10 25 ... +Inf") into out. */
void ev_hist_bounds_text(const EvHist *h, double to_ms, char *out, size_t sz);

/* Puts the p-th percentile (p 50, 90, 99) of h into name (unit ms,
 * source metric, quantile "histogram", n = the count, its interval), with
 * a provenance line "metric <what>: ..." naming the family, the series,
 * the count and the buckets. Nothing when h is empty. Returns the value
 * put, or NULL. */
EvValue *ev_put_hist_quantile(Evidence *e, const char *name, const EvHist *h, double p,
                              double to_ms, const char *what, const char *assumed, int pop);

/* Normal form of a metric name, so an OpenTelemetry name and its
 * Prometheus spelling compare equal: lower case, '_' as '.', a trailing
 * unit or counter word (.seconds, .milliseconds, .microseconds, .total)
 * dropped ("http_server_request_duration_seconds" ->
 * "http.server.request.duration"). */
void ev_metric_norm(const char *in, char *out, size_t sz);

/* The value of label key in a canonical label object ({"k":"v",...}),
 * trying key as written and then its Prometheus spelling ('.' as '_');
 * JSON escapes are decoded. 1 and out (at most sz bytes) when present. */
int ev_label(const char *labels_json, const char *key, char *out, size_t sz);

#endif
