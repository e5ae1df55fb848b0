/*
 * trace_feed.h - whole traces read from the store on other threads.
 *
 * Reading a trace's rows is more than half of what an analysis pass costs
 * (SQLite's steps, the identity index's seeks into the table, copying the
 * strings); the rest is analysing the trace. A feed overlaps the two: its
 * threads run the caller's store scans and assemble each trace, the
 * caller's thread takes the traces in reading order and analyses them.
 * The result is the same as reading and analysing on one thread, in the
 * same order.
 *
 * The reading can be split into parts, each on its own thread and its own
 * connection to the database: part p of n reads chunks p, p + n, p + 2n,
 * ... of the work (a chunk: a run of trace keys, say) and ends each with
 * trace_sink_chunk(); the caller gets chunk 0, 1, 2, ... in that order, so
 * the order is still the one a single reader would have.
 *
 * While a feed runs, the connection a part reads through belongs to that
 * part's thread: the caller must not use it until trace_feed_finish().
 */
#ifndef TT_TRACE_FEED_H
#define TT_TRACE_FEED_H

#include "store.h"
#include "trace_build.h"

typedef struct TraceFeed TraceFeed; /* the caller's side */
typedef struct TraceSink TraceSink; /* one part's side: where its rows go */

#define TRACE_FEED_MAX_PARTS 4

/* One part of the reading, run on its own thread: store scans whose row
 * callback is trace_sink_row with the sink as its context. Consecutive
 * rows of one trace id make one trace; trace_sink_cut() ends one
 * explicitly (a scan of one trace key at a time). With parts > 1, every
 * chunk the part reads ends with trace_sink_chunk(). Returns 0 or the
 * scan's error, with err set. */
typedef int (*TraceFeedRead)(TraceSink *s, void *ctx, int part, int parts, Err *err);

/* Starts parts (1 to TRACE_FEED_MAX_PARTS) readings, each on a new thread.
 * skew: the tolerance every trace gets (trace_set_skew; NULL: the
 * default). Never fails: when fewer threads than parts can be started, one
 * thread reads it all as one part (the reading is called with parts 1);
 * when none can, the reading runs at once on the caller's thread and
 * keeps its traces until taken. */
TraceFeed *trace_feed_start(TraceFeedRead read, void *ctx, int parts, const SkewTolerance *skew);

/* Traces a caller keeps from one feed to the next (their buffers grown
 * already), for a caller that starts many feeds one after another: zeroed
 * to start, trace_pool_free() at the end. */
typedef struct TracePool {
	Trace **t;
	int n, cap;
} TracePool;
void trace_pool_free(TracePool *p);

/* trace_feed_start(), the feed's traces taken from pool and given back to
 * it by trace_feed_finish() (the pool must outlive the feed). */
TraceFeed *trace_feed_start_pooled(TraceFeedRead read, void *ctx, int parts,
                                   const SkewTolerance *skew, TracePool *pool);

/* A store scan of the rows between a and b (its own meaning of them):
 * store_spans_since, store_spans_scan_rooted, ... */
typedef int (*TraceFeedScan)(Store *st, int64_t a, int64_t b, StoreSpanFn fn, void *ctx,
                             Err *err);

/* trace_feed_start() for the simplest reading: one scan of st, one part. */
TraceFeed *trace_feed_scan(Store *st, TraceFeedScan scan, int64_t a, int64_t b,
                           const SkewTolerance *skew);

/* StoreSpanFn for a part's scans (ctx: its sink). Returns 1, which stops
 * the scan, once the caller has finished the feed early. */
int trace_sink_row(void *sink, const StoreSpanRow *row);

/* Ends the trace being assembled (nothing when it has no rows). */
void trace_sink_cut(TraceSink *s);

/* Tags the traces ended from now on (0 at the start): the caller learns
 * from it which scan a trace came from. */
void trace_sink_tag(TraceSink *s, int tag);

/* Ends the trace being assembled and the part's current chunk. */
void trace_sink_chunk(TraceSink *s);

/* A scan of the trace keys [from, to) for part `part`, into s. */
typedef int (*TraceKeyScan)(void *ctx, int part, int64_t from, int64_t to, TraceSink *s,
                            Err *err);

/* The usual reading in parts, over trace keys: part `part` of `parts`
 * scans chunks part, part + parts, ... of `chunk` keys each (chunk c holds
 * keys [c * chunk, (c + 1) * chunk); the first is open below, the one
 * reaching max_key open above), ending each with trace_sink_chunk().
 * Returns 0 or the first failed scan's result. */
int trace_sink_key_chunks(TraceSink *s, int part, int parts, int64_t chunk, int64_t max_key,
                          TraceKeyScan scan, void *ctx, Err *err);

/* ---- the connections of a read in parts ---- */

/* How many parts a read of about `work` spans (or traces, when traces) is
 * split into, with the extra read-only connections opened into more[]
 * (TRACE_FEED_MAX_PARTS slots; a connection already there, from an
 * earlier read of the same caller, is used again): one part per core up to
 * two (the caller's thread, which analyses, is then the busiest), and 1
 * (nothing opened) on one core, for a small read, a database not on disk,
 * or a connection inside a transaction (what it wrote is not visible to
 * another connection yet). */
int trace_feed_parts(Store *st, int64_t work, int traces, Store **more);
/* Closes what trace_feed_parts() opened (NULL slots are skipped). */
void trace_feed_parts_close(Store **more);

/* A read of at least min_spans spans, or of at least min_traces traces,
 * is split (README, "Reading on several cores"); the defaults are 100,000
 * and 4,000. Tests set 0 to split every read that can be split and
 * INT64_MAX to split none. Not to be called while a read runs. */
void trace_feed_split_at(int64_t min_spans, int64_t min_traces);

/* Reads split so far in this process. */
int64_t trace_feed_splits(void);

/* The next whole trace, in reading order, and its tag; NULL when the
 * reading is over (or failed: trace_feed_finish() says). The trace is the
 * caller's to read and modify (trace_link()) until the next call. */
Trace *trace_feed_next(TraceFeed *f, int *tag);

/* Stops the readings still running, waits for their threads and frees the
 * feed. Returns the first failed part's result, with err set, or 0. */
int trace_feed_finish(TraceFeed *f, Err *err);

#endif
