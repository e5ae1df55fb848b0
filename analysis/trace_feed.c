/*
 * trace_feed.c - see trace_feed.h.
 *
 * A ring of CAP traces passes between the two threads. The reader
 * assembles trace number w (counting from 0) in slot w % CAP and publishes
 * it by incrementing w; the caller takes trace r and gives its slot back
 * by incrementing r at its next call. Invariant: r <= w and w - r < CAP
 * while the reader holds a slot to fill, so the reader never writes into a
 * slot the caller still reads. Slots keep their buffers from one trace to
 * the next. Without a thread (pthread_create failed) the ring simply
 * grows: every trace is kept until taken.
 */
#include "trace_feed.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

/* A waiting thread is woken once WAKE traces are there to take (or slots
 * to fill), not at every trace: one wake-up per trace costs more than the
 * copying it saves. */
enum { CAP = 64, WAKE = 16 };

struct TraceFeed {
	pthread_mutex_t mu;
	pthread_cond_t filled, freed;
	Trace **slot;              /* cap traces, allocated on first use */
	int *tags;
	int64_t cap;
	int64_t w, r;              /* traces published, traces given back */
	int taken;                 /* the caller holds trace r */
	int reader_waits, caller_waits;
	int done;                  /* the reading is over */
	atomic_int stop;           /* the caller finished early */
	int threaded;
	pthread_t th;
	Trace *cur;                /* the trace being assembled (reader's) */
	int tag;                   /* for traces ended from now on */
	TraceFeedRead read;
	void *ctx;
	SkewTolerance skew;
	int rc;
	Err err;
};

static int64_t at(const TraceFeed *f, int64_t i)
{
	return f->threaded ? i % f->cap : i;
}

/* The slot for trace w, waiting for the caller to give one back; NULL
 * when the caller stopped the feed. */
static Trace *acquire(TraceFeed *f)
{
	pthread_mutex_lock(&f->mu);
	while (f->threaded && f->w - f->r >= f->cap && !atomic_load(&f->stop)) {
		f->reader_waits = 1;
		pthread_cond_wait(&f->freed, &f->mu);
		f->reader_waits = 0;
	}
	if (atomic_load(&f->stop)) {
		pthread_mutex_unlock(&f->mu);
		return NULL;
	}
	if (!f->threaded && f->w >= f->cap) {
		int64_t cap = f->cap * 2;
		f->slot = xrealloc(f->slot, (size_t)cap * sizeof *f->slot);
		f->tags = xrealloc(f->tags, (size_t)cap * sizeof *f->tags);
		memset(f->slot + f->cap, 0, (size_t)(cap - f->cap) * sizeof *f->slot);
		f->cap = cap;
	}
	int64_t i = at(f, f->w);
	if (f->slot[i] == NULL) {
		f->slot[i] = xmalloc(sizeof *f->slot[i]);
		trace_init(f->slot[i]);
		trace_set_skew(f->slot[i], &f->skew);
	}
	Trace *t = f->slot[i];
	pthread_mutex_unlock(&f->mu);
	return t;
}

static void publish(TraceFeed *f)
{
	if (f->cur == NULL || f->cur->n == 0)
		return; /* an empty slot is filled by the next trace */
	pthread_mutex_lock(&f->mu);
	f->tags[at(f, f->w)] = f->tag;
	f->w++;
	if (f->caller_waits && f->w - f->r >= WAKE)
		pthread_cond_signal(&f->filled);
	pthread_mutex_unlock(&f->mu);
	f->cur = NULL;
}

int trace_feed_row(void *feed, const StoreSpanRow *row)
{
	TraceFeed *f = feed;
	if (atomic_load_explicit(&f->stop, memory_order_relaxed))
		return 1;
	if (f->cur == NULL || f->cur->n == 0 || strcmp(f->cur->trace_id, row->trace_id) != 0) {
		publish(f);
		if (f->cur == NULL && (f->cur = acquire(f)) == NULL)
			return 1;
		trace_reset(f->cur, row->trace_id);
	}
	trace_add(f->cur, row);
	return 0;
}

void trace_feed_cut(TraceFeed *f)
{
	publish(f);
}

void trace_feed_tag(TraceFeed *f, int tag)
{
	f->tag = tag;
}

static void *reader(void *p)
{
	TraceFeed *f = p;
	int rc = f->read(f, f->ctx, &f->err);
	if (rc == 0)
		publish(f);
	pthread_mutex_lock(&f->mu);
	f->rc = rc;
	f->done = 1;
	pthread_cond_signal(&f->filled);
	pthread_mutex_unlock(&f->mu);
	return NULL;
}

TraceFeed *trace_feed_start(TraceFeedRead read, void *ctx, const SkewTolerance *skew)
{
	TraceFeed *f = xcalloc(1, sizeof *f);
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->filled, NULL);
	pthread_cond_init(&f->freed, NULL);
	f->cap = CAP;
	f->slot = xcalloc((size_t)f->cap, sizeof *f->slot);
	f->tags = xcalloc((size_t)f->cap, sizeof *f->tags);
	atomic_init(&f->stop, 0);
	f->read = read;
	f->ctx = ctx;
	if (skew)
		f->skew = *skew;
	f->threaded = 1;
	if (pthread_create(&f->th, NULL, reader, f) != 0) {
		f->threaded = 0;
		reader(f);
	}
	return f;
}

Trace *trace_feed_next(TraceFeed *f, int *tag)
{
	pthread_mutex_lock(&f->mu);
	if (f->taken) {
		f->r++;
		f->taken = 0;
		if (f->reader_waits && f->w - f->r <= f->cap - WAKE)
			pthread_cond_signal(&f->freed);
	}
	while (f->r == f->w && !f->done) {
		f->caller_waits = 1;
		pthread_cond_wait(&f->filled, &f->mu);
		f->caller_waits = 0;
	}
	Trace *t = NULL;
	if (f->r < f->w) {
		int64_t i = at(f, f->r);
		t = f->slot[i];
		if (tag)
			*tag = f->tags[i];
		f->taken = 1;
	}
	pthread_mutex_unlock(&f->mu);
	return t;
}

int trace_feed_finish(TraceFeed *f, Err *err)
{
	if (f == NULL)
		return 0;
	pthread_mutex_lock(&f->mu);
	atomic_store(&f->stop, 1);
	pthread_cond_broadcast(&f->freed);
	pthread_mutex_unlock(&f->mu);
	if (f->threaded)
		pthread_join(f->th, NULL);
	int rc = f->rc;
	if (rc && err)
		*err = f->err;
	for (int64_t i = 0; i < f->cap; i++)
		if (f->slot[i]) {
			trace_fini(f->slot[i]);
			free(f->slot[i]);
		}
	free(f->slot);
	free(f->tags);
	pthread_cond_destroy(&f->filled);
	pthread_cond_destroy(&f->freed);
	pthread_mutex_destroy(&f->mu);
	free(f);
	return rc;
}
