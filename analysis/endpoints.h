/*
 * endpoints.h - every endpoint of a window, ranked: what `tailtriage
 * endpoints` prints and what the other commands take by default.
 *
 * An endpoint is (service, route) of a request's entry span
 * (trace_build.h, trace_link_entry(); the route: common/route.h). For
 * each endpoint and each population (window, baseline): requests, rate,
 * errors, and the exact p50, p99 and the objective's percentile with
 * their distribution-free 95 % intervals (quantile.h); the change of that
 * percentile with its interval (the difference of two quantiles, each
 * side's interval combined, as evidence.h's comparisons do), whether it
 * rose significantly, and whether the model's objective is breached.
 *
 * Rows are ranked by significant rise of the objective's percentile (the
 * surest large rise first: the lower bound of the ratio), then by window
 * traffic: the first row is the endpoint a command takes when none is
 * named. Without a baseline it is the most common endpoint. An endpoint
 * with too few requests for that percentile's interval (a p99 needs some
 * 300 in each range: below that its upper bound is the unknown beyond the
 * largest observation, and no rise can be shown) is judged on its p90,
 * and says so (Endpoint.basis): a thin endpoint that slowed is still seen.
 *
 * Reading: the index of root spans answers for the requests whose entry
 * is their root (a SERVER root: every trace of most services); a root of
 * another kind (a load generator's client span above the entry) has its
 * trace read to find the entry. A range with traces but no root span at
 * all (every caller outside the data) is read whole. A trace without a
 * root span in a range that has others is not listed (the analysis of an
 * endpoint reads every trace and counts it): the list says how many
 * traces it read.
 */
#ifndef TT_ENDPOINTS_H
#define TT_ENDPOINTS_H

#include <stdint.h>

#include "analysis.h"

typedef struct EndpointPop {
	int64_t requests;
	double rate_rps;           /* requests / length of the range */
	int64_t errors;            /* entry span with status error */
	Quant q;                   /* n, p50, p90, p99, max and their intervals */
	double p50_lo, p50_hi;     /* 95 % interval of the p50 */
	double pq, pq_lo, pq_hi;   /* the objective's percentile and its interval */
} EndpointPop;

enum { EP_ROSE = 1, EP_STEADY = 0, EP_CANNOT_TELL = -1 };

typedef struct Endpoint {
	char *service;
	char *route;
	char *name;                /* "service route": what --endpoint takes */
	int route_rule;            /* the ROUTE_* most of its entries got */
	EndpointPop pop[2];        /* [POP_WINDOW], [POP_BASELINE] */
	int has_change;            /* both populations have requests */
	double basis;              /* the percentile the change is of: the
	                            * objective's, else, when too few requests
	                            * bound it in either population, the p90 */
	double rise_ms, rise_lo, rise_hi;     /* window minus baseline, 95 % */
	double ratio, ratio_lo, ratio_hi;     /* window over baseline, 95 % */
	int rose;                  /* EP_ROSE: by 5 % or more, beyond noise;
	                            * EP_STEADY: surely by less than 5 % (or it
	                            * fell); EP_CANNOT_TELL: no baseline, too
	                            * few requests, or the interval says both */
	int breached;              /* the model's objective: 1 breached in the
	                            * window, 0 met, -1 none for this endpoint */
} Endpoint;

typedef struct EndpointList {
	Endpoint *v;               /* ranked */
	int n;
	double pct;                /* the objective's percentile (99 without one) */
	double objective_ms;       /* the model's objective, 0: none */
	int has_baseline;
	int64_t from_ns[2], to_ns[2]; /* the ranges (the data's bounds where open) */
	int64_t traces_read;       /* traces read whole (0: the index answered) */
	int64_t no_entry;          /* traces whose root is a client span alone */
	int64_t entered_below;     /* requests whose entry is below their root */
} EndpointList;

/* Lists the endpoints of p's window and baseline (model m may be NULL:
 * objective and percentile). Returns 0 and *out (free with
 * analysis_endpoints_free), or a negative code with err. */
int analysis_endpoints(Store *st, const Period *p, const Model *m, EndpointList **out,
                       Err *err);
void analysis_endpoints_free(EndpointList *l);  /* NULL is a no-op */

/* The index of (service, route) in l, or -1. */
int analysis_endpoints_find(const EndpointList *l, const char *service, const char *route);

/* Why row i is first (the reason a command gives when it takes it by
 * default), appended to out: "its p99 rose the most significantly (+72.7
 * ms, ...)", "the most common endpoint in the window (1200 requests)",
 * "the only endpoint in the window". */
struct Buf;
void analysis_endpoints_why(const EndpointList *l, int i, struct Buf *out);

/* A thin endpoint (docs/endpoints.md): when a's window or baseline has
 * requests but too few to bound the p99 (fewer than 100: the p99 is the
 * maximum; or its 95 % interval has no upper bound), appends what could
 * answer instead to out and returns 1: a longer window; the endpoint's
 * own latency metric, complete where traces are sampled, named by its
 * route (http.server.request.duration with http.route and
 * http.request.method for an HTTP route, rpc.server.duration with
 * rpc.service and rpc.method for an RPC one); all endpoints together, for
 * a dependency they share. Else 0. */
int analysis_thin_hint(const Analysis *a, struct Buf *out);

/* 1 when a is thin as analysis_thin_hint() says, else 0. */
int analysis_thin(const Analysis *a);

/* The "what could answer: ..." part of analysis_thin_hint(), appended. */
void analysis_thin_answers(const Analysis *a, struct Buf *out);

/* Splits "SERVICE ROUTE" at its first space into two malloc'd strings.
 * Returns 0, or -1 when text has no space or either part is empty. */
int analysis_endpoint_split(const char *text, char **service, char **route);

#endif
