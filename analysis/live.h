/*
 * live.h - a read-side session over a database that another process may be
 * writing: the TUI's only way to the data (it never touches sqlite3).
 *
 * A session opens the store read-only twice: one connection stays on the
 * caller's thread (cheap polls of store_data_version(), trace loads for the
 * waterfall), the other belongs to a background worker that runs
 * analysis_run(). The caller asks for an analysis with live_request(),
 * notices new data with live_check(), and collects finished results with
 * live_take(); nothing blocks on an analysis, so a screen can keep showing
 * the previous result while the next one is computed.
 *
 * Requests supersede each other: while the worker computes, only the most
 * recent request is kept, and it starts as soon as the worker is free.
 *
 * Threading: every function must be called from one thread (the owner);
 * the worker is internal.
 */
#ifndef TT_LIVE_H
#define TT_LIVE_H

#include <stdint.h>

#include "analysis.h"
#include "err.h"

typedef struct LiveSession LiveSession;

/* Opens path read-only and starts the worker. The model in later requests
 * is borrowed and must outlive the session. Errors: TT_EIO (cannot open,
 * not a tailtriage database, empty). */
int live_open(const char *path, LiveSession **out, Err *err);

/* Stops the worker (waiting for a running analysis to finish) and closes
 * the connections. NULL is a no-op. */
void live_close(LiveSession *ls);

/* Asks for an analysis with opt (copied, including the class and
 * endpoint strings);
 * gen is handed back with the result so the caller can tell which request
 * it answers. */
void live_request(LiveSession *ls, const AnalysisOptions *opt, unsigned gen);

/* Polls the data version. Returns 1 when another connection committed
 * since the last check (the caller then re-requests), 0 otherwise. */
int live_check(LiveSession *ls);

/* A new question (other options than the previous request) on a database
 * whose import-time aggregates cover every span is answered twice: first
 * from the aggregates (a->approx 1, within milliseconds), then exactly
 * (a->approx 0), with the same gen. The exact one replaces the first; if
 * both are ready before live_take(), only the exact one is returned. */
typedef struct LiveResult {
	Analysis *a;              /* owned by the caller now; NULL when rc != 0 */
	unsigned gen;             /* the request's gen */
	int rc;                   /* analysis_run's return code */
	Err err;                  /* its message when rc != 0 */
	double compute_ms;        /* wall time of analysis_run */
	struct EndpointList *endpoints; /* the exact answer's: every endpoint of
	                          * its window and baseline, ranked
	                          * (endpoints.h); owned by the caller now;
	                          * NULL with an approximate answer */
} LiveResult;

/* Takes a finished result: returns 1 and fills *res, or 0 when none is
 * ready. Results that are already superseded by a newer request with a
 * different gen are dropped here, not returned. */
int live_take(LiveSession *ls, LiveResult *res);

/* Frees what a taken result owns (the analysis, the endpoints) and
 * clears it. */
void live_result_free(LiveResult *res);

/* 1 while a request is pending or being computed. */
int live_busy(LiveSession *ls);

/* A descriptor that becomes readable when a result is ready (for poll());
 * live_take() drains it. */
int live_wait_fd(LiveSession *ls);

/* Loads one trace for the waterfall on the caller's connection, its
 * critical path with skew (NULL: the default tolerance). */
int live_trace(LiveSession *ls, const char *trace_id, const SkewTolerance *skew, TraceView **out,
               Err *err);

#endif
