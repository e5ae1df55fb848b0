/*
 * trace_feed.c - see trace_feed.h.
 *
 * Each part has a ring of CAP slots between its thread and the caller's.
 * The part fills slot w % CAP with trace number w (counting from 0) and
 * publishes it by incrementing w; a slot may instead hold a chunk's end
 * mark. The caller takes slot r and gives it back by incrementing r at its
 * next call. Invariant: r <= w and w - r < CAP while the part holds a slot
 * to fill, so a part never writes into a slot the caller still reads.
 * Slots keep their buffers from one trace to the next. The caller reads
 * one part's ring until a chunk mark, then the next part's: chunk c is
 * part c % parts's, so the chunks come in order. With fewer threads
 * than parts, one thread reads everything as a single part; with none
 * (pthread_create failed every time) the ring simply grows: every trace is
 * kept until taken.
 */
#include "trace_feed.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"

/* A waiting thread is woken once WAKE traces are there to take (or slots
 * to fill), not at every trace: one wake-up per trace costs more than the
 * copying it saves. */
enum { CAP = 128, WAKE = 16 };

struct TraceSink {
	TraceFeed *feed;
	int part;
	pthread_mutex_t mu;
	pthread_cond_t filled, freed;
	Trace **slot;              /* cap traces, allocated on first use */
	int *tags;
	char *mark;                /* 1: the slot ends a chunk (no trace) */
	int64_t cap;
	int64_t w, r;              /* slots published, slots given back */
	int reader_waits, caller_waits;
	int done;                  /* this part's reading is over */
	int rc;
	Err err;
	pthread_t th;
	int started;
	Trace *cur;                /* the trace being assembled (part's) */
	int tag;                   /* for traces ended from now on */
};

struct TraceFeed {
	TraceSink sink[TRACE_FEED_MAX_PARTS];
	int parts;
	int sinks;                 /* set up; parts may drop to 1 (feed_run) */
	int threaded;
	TracePool *pool;           /* where its traces come from and go back to */
	int at;                    /* the part whose ring the caller reads */
	TraceSink *held;           /* the ring whose slot r the caller holds */
	atomic_int stop;           /* the caller finished early */
	TraceFeedRead read;
	void *ctx;
	SkewTolerance skew;
	struct {                   /* trace_feed_scan()'s reading */
		Store *st;
		TraceFeedScan fn;
		int64_t a, b;
	} scan;
};

static int64_t at(const TraceSink *s, int64_t i)
{
	return s->feed->threaded ? i % s->cap : i;
}

/* Waits for room for slot w; 0 when the caller stopped the feed. */
static int room(TraceSink *s)
{
	TraceFeed *f = s->feed;
	while (f->threaded && s->w - s->r >= s->cap && !atomic_load(&f->stop)) {
		s->reader_waits = 1;
		pthread_cond_wait(&s->freed, &s->mu);
		s->reader_waits = 0;
	}
	if (atomic_load(&f->stop))
		return 0;
	if (!f->threaded && s->w >= s->cap) {
		int64_t cap = s->cap * 2;
		s->slot = xrealloc(s->slot, (size_t)cap * sizeof *s->slot);
		s->tags = xrealloc(s->tags, (size_t)cap * sizeof *s->tags);
		s->mark = xrealloc(s->mark, (size_t)cap);
		memset(s->slot + s->cap, 0, (size_t)(cap - s->cap) * sizeof *s->slot);
		s->cap = cap;
	}
	return 1;
}

/* The slot for the next trace; NULL when the caller stopped the feed. */
static Trace *acquire(TraceSink *s)
{
	pthread_mutex_lock(&s->mu);
	Trace *t = NULL;
	if (room(s)) {
		int64_t i = at(s, s->w);
		if (s->slot[i] == NULL) {
			s->slot[i] = xmalloc(sizeof *s->slot[i]);
			trace_init(s->slot[i]);
			trace_set_skew(s->slot[i], &s->feed->skew);
		}
		t = s->slot[i];
	}
	pthread_mutex_unlock(&s->mu);
	return t;
}

/* Publishes slot w (held by the caller of room()/acquire()). */
static void publish_locked(TraceSink *s, int mark)
{
	int64_t i = at(s, s->w);
	s->tags[i] = s->tag;
	s->mark[i] = (char)mark;
	s->w++;
	if (s->caller_waits && (s->w - s->r >= WAKE || mark))
		pthread_cond_signal(&s->filled);
}

static void publish(TraceSink *s)
{
	if (s->cur == NULL || s->cur->n == 0)
		return; /* an empty slot is filled by the next trace */
	pthread_mutex_lock(&s->mu);
	publish_locked(s, 0);
	pthread_mutex_unlock(&s->mu);
	s->cur = NULL;
}

int trace_sink_row(void *sink, const StoreSpanRow *row)
{
	TraceSink *s = sink;
	if (atomic_load_explicit(&s->feed->stop, memory_order_relaxed))
		return 1;
	if (s->cur == NULL || s->cur->n == 0 || !trace_same(s->cur, row)) {
		publish(s);
		if (s->cur == NULL && (s->cur = acquire(s)) == NULL)
			return 1;
		trace_reset(s->cur, row->trace_id);
	}
	trace_add(s->cur, row);
	return 0;
}

void trace_sink_cut(TraceSink *s)
{
	publish(s);
}

void trace_sink_tag(TraceSink *s, int tag)
{
	s->tag = tag;
}

void trace_sink_chunk(TraceSink *s)
{
	publish(s);
	if (s->cur) {
		/* an empty slot acquired for a trace that never came: the mark
		 * takes it */
		s->cur = NULL;
	}
	pthread_mutex_lock(&s->mu);
	if (room(s))
		publish_locked(s, 1);
	pthread_mutex_unlock(&s->mu);
}

int trace_sink_key_chunks(TraceSink *s, int part, int parts, int64_t chunk, int64_t max_key,
                          TraceKeyScan scan, void *ctx, Err *err)
{
	for (int64_t c = part;; c += parts) {
		int64_t lo = c * chunk, hi = lo + chunk;
		if (c > 0 && lo > max_key)
			return 0;
		int last = hi > max_key;
		int rc = scan(ctx, part, c == 0 ? INT64_MIN : lo, last ? INT64_MAX : hi, s, err);
		if (rc)
			return rc;
		trace_sink_chunk(s);
		if (last)
			return 0;
	}
}

static void *reader(void *p)
{
	TraceSink *s = p;
	TraceFeed *f = s->feed;
	int rc = f->read(s, f->ctx, s->part, f->parts, &s->err);
	if (rc == 0)
		publish(s);
	pthread_mutex_lock(&s->mu);
	s->rc = rc;
	s->done = 1;
	pthread_cond_signal(&s->filled);
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

static TraceFeed *feed_new(TraceFeedRead read, void *ctx, int parts, const SkewTolerance *skew)
{
	TraceFeed *f = xcalloc(1, sizeof *f);
	if (parts < 1)
		parts = 1;
	if (parts > TRACE_FEED_MAX_PARTS)
		parts = TRACE_FEED_MAX_PARTS;
	f->parts = f->sinks = parts;
	f->read = read;
	f->ctx = ctx;
	if (skew)
		f->skew = *skew;
	atomic_init(&f->stop, 0);
	f->threaded = 1;
	for (int p = 0; p < parts; p++) {
		TraceSink *s = &f->sink[p];
		s->feed = f;
		s->part = p;
		pthread_mutex_init(&s->mu, NULL);
		pthread_cond_init(&s->filled, NULL);
		pthread_cond_init(&s->freed, NULL);
		s->cap = CAP;
		s->slot = xcalloc((size_t)s->cap, sizeof *s->slot);
		s->tags = xcalloc((size_t)s->cap, sizeof *s->tags);
		s->mark = xcalloc((size_t)s->cap, 1);
	}
	return f;
}

/* Starts a thread for each part; 1 when all started, else 0 with the
 * ones that did stopped (they wrote nothing the caller took) and every
 * ring as new. */
static int start_threads(TraceFeed *f)
{
	int started = 0;
	for (int p = 0; p < f->parts; p++) {
		if (pthread_create(&f->sink[p].th, NULL, reader, &f->sink[p]) != 0)
			break;
		f->sink[p].started = 1;
		started++;
	}
	if (started == f->parts)
		return 1;
	atomic_store(&f->stop, 1);
	for (int p = 0; p < started; p++) {
		TraceSink *s = &f->sink[p];
		pthread_mutex_lock(&s->mu);
		pthread_cond_broadcast(&s->freed);
		pthread_mutex_unlock(&s->mu);
		pthread_join(s->th, NULL);
		s->started = 0;
		s->w = s->r = 0;
		s->done = 0;
		s->rc = 0;
		s->cur = NULL;
		s->tag = 0;
	}
	atomic_store(&f->stop, 0);
	return 0;
}

/* Starts the parts' threads. When the system gives fewer threads than
 * parts (a limit on processes, say), one thread reads it all: a reading
 * told it has one part reads every chunk, in order, through the first
 * part's connection. Only when not even that one starts are the parts
 * read here, at once, their rings growing to hold every trace until it is
 * taken. */
static void feed_run(TraceFeed *f)
{
	if (start_threads(f))
		return;
	if (f->parts > 1) {
		f->parts = 1;
		if (start_threads(f))
			return;
	}
	f->threaded = 0;
	reader(&f->sink[0]);
}

TraceFeed *trace_feed_start(TraceFeedRead read, void *ctx, int parts, const SkewTolerance *skew)
{
	TraceFeed *f = feed_new(read, ctx, parts, skew);
	feed_run(f);
	return f;
}

TraceFeed *trace_feed_start_pooled(TraceFeedRead read, void *ctx, int parts,
                                   const SkewTolerance *skew, TracePool *pool)
{
	TraceFeed *f = feed_new(read, ctx, parts, skew);
	f->pool = pool;
	/* the slots filled before the threads start: they see them as their
	 * own (the pool is the caller's) */
	for (int p = 0; p < f->parts && pool->n > 0; p++) {
		TraceSink *s = &f->sink[p];
		for (int64_t i = 0; i < s->cap && pool->n > 0; i++) {
			Trace *t = pool->t[--pool->n];
			trace_reset(t, "");
			trace_set_skew(t, &f->skew);
			s->slot[i] = t;
		}
	}
	feed_run(f);
	return f;
}

void trace_pool_free(TracePool *p)
{
	for (int i = 0; i < p->n; i++) {
		trace_fini(p->t[i]);
		free(p->t[i]);
	}
	free(p->t);
	memset(p, 0, sizeof *p);
}

static int read_scan(TraceSink *s, void *ctx, int part, int parts, Err *err)
{
	TraceFeed *f = ctx;
	(void)part;
	(void)parts;
	return f->scan.fn(f->scan.st, f->scan.a, f->scan.b, trace_sink_row, s, err);
}

TraceFeed *trace_feed_scan(Store *st, TraceFeedScan scan, int64_t a, int64_t b,
                           const SkewTolerance *skew)
{
	/* the feed is its own reading's context: the scan is set before the
	 * thread starts (trace_feed_start() with a context filled in after
	 * it returns would race) */
	TraceFeed *f = feed_new(read_scan, NULL, 1, skew);
	f->ctx = f;
	f->scan.st = st;
	f->scan.fn = scan;
	f->scan.a = a;
	f->scan.b = b;
	feed_run(f);
	return f;
}

Trace *trace_feed_next(TraceFeed *f, int *tag)
{
	if (f->held) {
		TraceSink *h = f->held;
		pthread_mutex_lock(&h->mu);
		h->r++;
		if (h->reader_waits && h->w - h->r <= h->cap - WAKE)
			pthread_cond_signal(&h->freed);
		pthread_mutex_unlock(&h->mu);
		f->held = NULL;
	}
	for (;;) {
		TraceSink *s = &f->sink[f->at];
		pthread_mutex_lock(&s->mu);
		while (s->r == s->w && !s->done) {
			s->caller_waits = 1;
			pthread_cond_wait(&s->filled, &s->mu);
			s->caller_waits = 0;
		}
		if (s->r == s->w) {
			/* this part is over, and with it the chunks in order */
			pthread_mutex_unlock(&s->mu);
			return NULL;
		}
		int64_t i = at(s, s->r);
		if (s->mark[i]) {
			s->r++;
			if (s->reader_waits && s->w - s->r <= s->cap - WAKE)
				pthread_cond_signal(&s->freed);
			pthread_mutex_unlock(&s->mu);
			f->at = (f->at + 1) % f->parts;
			continue;
		}
		Trace *t = s->slot[i];
		if (tag)
			*tag = s->tags[i];
		f->held = s;
		pthread_mutex_unlock(&s->mu);
		return t;
	}
}

int trace_feed_finish(TraceFeed *f, Err *err)
{
	if (f == NULL)
		return 0;
	atomic_store(&f->stop, 1);
	for (int p = 0; p < f->parts; p++) {
		TraceSink *s = &f->sink[p];
		pthread_mutex_lock(&s->mu);
		pthread_cond_broadcast(&s->freed);
		pthread_mutex_unlock(&s->mu);
		if (s->started)
			pthread_join(s->th, NULL);
	}
	int rc = 0;
	for (int p = 0; p < f->parts && rc == 0; p++)
		if ((rc = f->sink[p].rc) != 0 && err)
			*err = f->sink[p].err;
	for (int p = 0; p < f->sinks; p++) {
		TraceSink *s = &f->sink[p];
		for (int64_t i = 0; i < s->cap; i++) {
			if (s->slot[i] == NULL)
				continue;
			TracePool *pool = f->pool;
			if (pool) {
				if (pool->n == pool->cap) {
					pool->cap = pool->cap ? pool->cap * 2 : 256;
					pool->t = xrealloc(pool->t, (size_t)pool->cap * sizeof *pool->t);
				}
				pool->t[pool->n++] = s->slot[i];
			} else {
				trace_fini(s->slot[i]);
				free(s->slot[i]);
			}
		}
		free(s->slot);
		free(s->tags);
		free(s->mark);
		pthread_cond_destroy(&s->filled);
		pthread_cond_destroy(&s->freed);
		pthread_mutex_destroy(&s->mu);
	}
	free(f);
	return rc;
}

/* Reading in parts pays from about this many spans (or traces) on: it
 * costs a connection and a thread, about a millisecond. */
static int64_t split_spans = 100000, split_traces = 4000;
enum { TRACE_FEED_PART_CACHE_KIB = 1024 };
static atomic_llong splits;

void trace_feed_split_at(int64_t min_spans, int64_t min_traces)
{
	split_spans = min_spans;
	split_traces = min_traces;
}

int64_t trace_feed_splits(void)
{
	return (int64_t)atomic_load(&splits);
}

int trace_feed_parts(Store *st, int64_t work, int traces, Store **more)
{
	const char *path = store_path(st);
	if (work < (traces ? split_traces : split_spans) ||
	    sysconf(_SC_NPROCESSORS_ONLN) < 2 || store_in_transaction(st) || path[0] == '\0' ||
	    strcmp(path, ":memory:") == 0 || strncmp(path, "file:", 5) == 0)
		return 1;
	if (more[0])
		return 2; /* opened for an earlier read, still usable */
	Err e = {0};
	if (store_open(path, STORE_READONLY, &more[0], &e))
		return 1;
	/* it reads each page about once: a small cache keeps the second
	 * connection from doubling the memory a read takes */
	store_cache_kib(more[0], TRACE_FEED_PART_CACHE_KIB);
	atomic_fetch_add(&splits, 1);
	return 2;
}

void trace_feed_parts_close(Store **more)
{
	for (int i = 0; i < TRACE_FEED_MAX_PARTS; i++) {
		store_close(more[i]);
		more[i] = NULL;
	}
}
