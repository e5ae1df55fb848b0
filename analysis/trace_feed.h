/*
 * trace_feed.h - whole traces read from the store on a second thread.
 *
 * Reading a trace's rows is about half of what an analysis pass costs
 * (SQLite's steps, the identity index's seeks into the table, copying the
 * strings); the other half is analysing the trace. A feed overlaps the
 * two: its thread runs the caller's store scan and assembles each trace,
 * the caller's thread takes the traces in the order they were read and
 * analyses them. The result is the same as reading and analysing on one
 * thread, in the same order.
 *
 * While a feed runs, its thread owns the Store: the caller must not use
 * it (nor another object sharing its connection) until trace_feed_finish().
 */
#ifndef TT_TRACE_FEED_H
#define TT_TRACE_FEED_H

#include "store.h"
#include "trace_build.h"

typedef struct TraceFeed TraceFeed;

/* The reading, run on the feed's thread: store scans whose row callback is
 * trace_feed_row with the feed as its context. Consecutive rows of one
 * trace id make one trace; trace_feed_cut() ends one explicitly (a scan of
 * one trace key at a time). Returns 0 or the scan's error, with err set. */
typedef int (*TraceFeedRead)(TraceFeed *f, void *ctx, Err *err);

/* Starts reading on a new thread. skew: the tolerance every trace gets
 * (trace_set_skew; NULL: the default). Never fails: when no thread can be
 * started, the reading runs at the first trace_feed_next() on the caller's
 * thread, with the traces kept until taken. */
TraceFeed *trace_feed_start(TraceFeedRead read, void *ctx, const SkewTolerance *skew);

/* StoreSpanFn for the reading's scans (ctx: the feed). Returns 1, which
 * stops the scan, once the caller has finished the feed early. */
int trace_feed_row(void *feed, const StoreSpanRow *row);

/* Ends the trace being assembled (nothing when it has no rows). */
void trace_feed_cut(TraceFeed *f);

/* Tags the traces ended from now on (0 at the start): the caller's thread
 * learns from it which scan a trace came from. */
void trace_feed_tag(TraceFeed *f, int tag);

/* The next whole trace, in reading order, and its tag; NULL when the
 * reading is over (or failed: trace_feed_finish() says). The trace is the
 * caller's to read and modify (trace_link()) until the next call. */
Trace *trace_feed_next(TraceFeed *f, int *tag);

/* Stops the reading if it is still running, waits for its thread and
 * frees the feed. Returns the reading's result, with err set on failure. */
int trace_feed_finish(TraceFeed *f, Err *err);

#endif
