/*
 * trace_pull.h - the traces a diagnosis needs, pulled from where they
 * live: a Jaeger query service (HTTP API v3 of Jaeger v2, or the /api/traces
 * JSON of Jaeger v1) or Grafana Tempo (/api/search, /api/v2/traces).
 *
 * What is pulled, for one service (and span name) of the entry:
 *  - the window's `slowest` N traces (and the baseline's, when there is
 *    one): searches with a duration filter,
 *    the threshold raised until a search lists every trace above it
 *    (a search that lists fewer than it may is complete), then the N
 *    longest of those;
 *  - a uniform sample of `sample` traces from the window and from the
 *    baseline: the range is listed in time slices, a slice that lists as
 *    many as a search may is split until each one is complete, and each
 *    slice gives traces in proportion to how many it holds, evenly spread
 *    in time within it (so the sample is neither the newest N nor biased
 *    to quiet minutes);
 * and then each chosen trace is fetched whole (a few at a time) and stored
 * through the importers (OTLP/JSON for Jaeger v3 and Tempo, Jaeger JSON
 * for v1), each trace its own transaction: a pull that stops keeps what
 * it stored. A trace already stored is not fetched again. The sets and
 * their members are recorded (store.h, "trace sets").
 *
 * Library code: never prints; progress goes to a callback.
 */
#ifndef TT_TRACE_PULL_H
#define TT_TRACE_PULL_H

#include <signal.h>
#include <stdint.h>

#include "err.h"
#include "http_fetch.h"
#include "import.h"
#include "period.h"
#include "store.h"

typedef enum {
	TRACE_PULL_JAEGER = 1,
	TRACE_PULL_TEMPO = 2,
} TracePullBackend;

typedef struct TracePullProgress {
	const char *phase;           /* "searching" or "fetching" */
	int64_t queries;             /* searches made */
	int64_t chosen;              /* traces chosen (all sets) */
	int64_t to_fetch;            /* of them, not stored yet */
	int64_t fetched;             /* fetched and stored */
	int64_t failed;              /* could not be fetched or stored */
	int64_t spans_added;
	int64_t retries;
} TracePullProgress;

typedef void (*TracePullProgressFn)(void *ctx, const TracePullProgress *p);

typedef struct TracePullOptions {
	TracePullBackend backend;
	const char *url;             /* base URL, e.g. http://127.0.0.1:16686 */
	const char *service;         /* the entry's service (required) */
	const char *operation;       /* the entry span's name; NULL: any */
	TimeRange window;            /* closed */
	int has_baseline;
	TimeRange baseline;          /* closed, when has_baseline */
	int slowest;                 /* N slowest of the window and of the
	                              * baseline; 0: none */
	int sample;                  /* N sampled from the window and N from the
	                              * baseline; 0: none */
	int page;                    /* most traces one search asks for; 0: 500 */
	HttpFetchOptions http;       /* timeout, parallel, retries, headers */
	const char *class_key;       /* for the importers; NULL: the default */
	TracePullProgressFn progress;  /* may be NULL */
	void *progress_ctx;
	volatile sig_atomic_t *stop; /* nonzero: stop between requests; may be NULL */
} TracePullOptions;

typedef struct TracePullResult {
	char api[48];                /* what answered: "Jaeger API v3", ... */
	int64_t queries;             /* searches made */
	int64_t slowest;             /* traces in the window's slowest set */
	int64_t slowest_baseline;    /* in the baseline's (pulled with a baseline) */
	int64_t sample_window, sample_baseline;
	int64_t listed_window;       /* traces the window's listing found, -1
	                              * when it could not list them all */
	int64_t listed_baseline;
	int64_t already;             /* chosen traces already stored: not fetched */
	int64_t fetched;             /* fetched and stored */
	int64_t failed;              /* could not be fetched or stored */
	char first_failure[400];     /* why the first one failed */
	int64_t spans_added, spans_duplicate;
	ImportSkips skips;           /* what the importers left out */
	int stopped;                 /* *stop ended it early */
} TracePullResult;

/* Runs one pull into st (which must not be inside a transaction). Returns
 * 0 when every chosen trace is stored (or was already); TT_EIO when the
 * back end could not be reached or used (err says why: unreachable, HTTP
 * 401/403, not a Jaeger or Tempo API, nothing found: "no trace of S in
 * A..B; services seen: ..."), or when some traces could not be fetched
 * (res->failed, res->first_failure; what was stored stays). */
int trace_pull(Store *st, const TracePullOptions *o, TracePullResult *res, Err *err);

/* The name of a back end for messages ("jaeger", "tempo"). */
const char *trace_pull_backend_name(TracePullBackend b);

#endif
