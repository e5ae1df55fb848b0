/*
 * helpers.h - small shared helpers for unit tests (header-only; not a test
 * itself). Builds databases from hand-written spans through the store API.
 */
#ifndef TT_TEST_HELPERS_H
#define TT_TEST_HELPERS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store.h"

#define MS(x) ((int64_t)((x) * 1000000.0))
#define T0 ((int64_t)1784052000000000000LL) /* 2026-07-14T18:00:00Z */

typedef struct TSpanSpec {
	const char *trace;  /* short trace tag, expanded to 32 hex */
	const char *id;     /* short span tag, expanded to 16 hex */
	const char *parent; /* "" for root */
	const char *service;
	const char *name;
	int kind;
	double start_ms, end_ms;
	const char *wclass;
	double queue_ms;    /* > 0: queue time before the span */
} TSpanSpec;

static inline void hexpad(char *out, size_t width, const char *tag)
{
	/* deterministic hex from a tag: hex of bytes, right-padded with 0 */
	size_t j = 0;
	for (size_t i = 0; tag[i] && j + 2 <= width; i++) {
		snprintf(out + j, 3, "%02x", (unsigned char)tag[i]);
		j += 2;
	}
	while (j < width)
		out[j++] = '0';
	out[width] = '\0';
}

static inline char *tmp_db_path(char *buf, size_t sz)
{
	snprintf(buf, sz, "/tmp/tt-test-%d-XXXXXX", (int)getpid());
	int fd = mkstemp(buf);
	if (fd >= 0)
		close(fd);
	unlink(buf);
	return buf;
}

static inline void rm_db(const char *path)
{
	char p[600];
	unlink(path);
	snprintf(p, sizeof p, "%s-wal", path);
	unlink(p);
	snprintf(p, sizeof p, "%s-shm", path);
	unlink(p);
}

/* Adds specs as one committed source, span i with status code status[i]
 * (status NULL: every span unset). Returns 0 on success. */
static inline int add_spans_status(Store *st, const TSpanSpec *sp, int n, int64_t t0,
                                   const int *status)
{
	Err err = {0};
	int64_t src;
	static int seq;
	char digest[65];
	snprintf(digest, sizeof digest, "test-%d-%d", (int)getpid(), seq++);
	if (store_begin(st, &err) || store_source_add(st, "test", digest, "test", 0, &src, &err))
		return -1;
	for (int i = 0; i < n; i++) {
		StoreSpan s;
		memset(&s, 0, sizeof s);
		hexpad(s.trace_id, 32, sp[i].trace);
		hexpad(s.span_id, 16, sp[i].id);
		if (sp[i].parent && sp[i].parent[0])
			hexpad(s.parent_id, 16, sp[i].parent);
		s.service = sp[i].service;
		s.name = sp[i].name;
		s.kind = sp[i].kind;
		s.start_ns = t0 + MS(sp[i].start_ms);
		s.end_ns = t0 + MS(sp[i].end_ms);
		s.wclass = sp[i].wclass;
		s.status_code = status ? status[i] : 0;
		if (sp[i].queue_ms > 0) {
			s.has_queue = 1;
			s.queue_ns = MS(sp[i].queue_ms);
		}
		int added;
		if (store_span_add(st, src, &s, &added, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			store_rollback(st);
			return -1;
		}
	}
	StoreSourceCounts c = {0};
	c.spans_added = n;
	if (store_source_finish(st, src, &c, "imported", &err) || store_commit(st, &err))
		return -1;
	return 0;
}

/* Adds specs as one committed source. Returns 0 on success. */
static inline int add_spans(Store *st, const TSpanSpec *sp, int n, int64_t t0)
{
	return add_spans_status(st, sp, n, t0, NULL);
}

#endif
