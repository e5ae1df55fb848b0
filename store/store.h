/*
 * store.h - the SQLite file every other part reads and importers write.
 *
 * One Store is one connection. The schema is versioned in PRAGMA
 * user_version and migrated forward on open. The file is in WAL mode so one
 * writer (an importer, the receiver, a replay) and many readers (the TUI,
 * report) can work at once; a busy timeout absorbs short lock waits.
 *
 * Every SQL string of the project lives in store/. Statements are prepared
 * once and kept in the Store; values are always bound.
 *
 * Import protocol (one file = one transaction):
 *     store_begin()
 *     store_source_add()          -> source id
 *     store_resource_intern() / store_scope_intern() / store_span_add() ...
 *     store_source_finish()
 *     store_commit()              or store_rollback() on any error
 * A rolled-back import leaves the database content unchanged.
 */
#ifndef TT_STORE_H
#define TT_STORE_H

#include <stdint.h>

#include "err.h"

typedef struct Store Store;

enum {
	STORE_READONLY = 1 << 0,  /* open without creating or migrating */
};

/* Opens (creating and migrating as needed) the database at path. On success
 * *out owns the connection; free it with store_close(). */
int store_open(const char *path, int flags, Store **out, Err *err);
void store_close(Store *st);                /* NULL is a no-op */

/* Current schema version (PRAGMA user_version after migration). */
int store_schema_version(Store *st);

/* Transactions. store_begin takes the write lock at once (BEGIN IMMEDIATE). */
int store_begin(Store *st, Err *err);
int store_commit(Store *st, Err *err);
void store_rollback(Store *st);

/* PRAGMA data_version: changes whenever another connection commits. */
int64_t store_data_version(Store *st);

/* ---- import sources ------------------------------------------------- */

typedef struct StoreSourceCounts {
	int64_t spans_added;      /* new rows in spans */
	int64_t spans_duplicate;  /* spans whose identity was already stored */
	int64_t metrics_added;    /* new metric points */
	int64_t metrics_duplicate;
	int64_t observations_added;
} StoreSourceCounts;

/* Looks up a successful import with this sha256 (hex). Sets *found and, when
 * found, copies its path into path_out (size path_sz). */
int store_source_find_digest(Store *st, const char *sha256, int *found,
                             char *path_out, unsigned path_sz, Err *err);

/* Records a new source inside the current transaction. */
int store_source_add(Store *st, const char *path, const char *sha256,
                     const char *format, int64_t imported_at_ms,
                     int64_t *source_id, Err *err);

/* Stores final counts and outcome ("imported", "duplicate"). */
int store_source_finish(Store *st, int64_t source_id,
                        const StoreSourceCounts *c, const char *outcome, Err *err);

/* ---- spans ------------------------------------------------------------ */

/* Span kinds, numbered as in OTLP. */
enum {
	SPAN_KIND_UNSPECIFIED = 0,
	SPAN_KIND_INTERNAL = 1,
	SPAN_KIND_SERVER = 2,
	SPAN_KIND_CLIENT = 3,
	SPAN_KIND_PRODUCER = 4,
	SPAN_KIND_CONSUMER = 5,
};

/* Returns "server", "client", ... for a kind; "unspecified" otherwise. */
const char *span_kind_name(int kind);

/* Interns a resource (by its canonical attribute JSON) and returns its id.
 * service is resource attribute service.name (may be NULL); host is
 * host.name (may be NULL); attrs_json is a JSON object text. */
int store_resource_intern(Store *st, const char *service, const char *host,
                          const char *attrs_json, int64_t *id, Err *err);

/* Interns an instrumentation scope. */
int store_scope_intern(Store *st, const char *name, const char *version,
                       const char *attrs_json, int64_t *id, Err *err);

typedef struct StoreSpan {
	char trace_id[33];        /* 32 lowercase hex digits */
	char span_id[17];         /* 16 lowercase hex digits */
	char parent_id[17];       /* "" for a root span */
	int64_t resource_id;      /* from store_resource_intern, 0 = none */
	int64_t scope_id;         /* from store_scope_intern, 0 = none */
	const char *service;      /* service.name of the resource, may be NULL */
	const char *host;         /* host.name of the resource, may be NULL */
	const char *name;         /* operation name */
	int kind;                 /* SPAN_KIND_* */
	int64_t start_ns;         /* unix ns */
	int64_t end_ns;
	int status_code;          /* 0 unset, 1 ok, 2 error */
	const char *status_msg;   /* may be NULL */
	const char *wclass;       /* workload class, NULL when not known */
	int has_queue;            /* queue_ns is meaningful */
	int64_t queue_ns;         /* time waited in a queue/pool before the span */
	const char *trace_state;  /* may be NULL */
	int64_t flags;
	const char *attrs_json;   /* span attributes as a JSON object, may be NULL */
	const char *events_json;  /* JSON array, may be NULL */
	const char *links_json;   /* JSON array, may be NULL */
	int64_t dropped;          /* dropped attribute+event+link counts, summed */
} StoreSpan;

/* Inserts a span in the current transaction. *added is 1 when new, 0 when a
 * span with the same (trace_id, span_id) was already stored. */
int store_span_add(Store *st, int64_t source_id, const StoreSpan *sp,
                   int *added, Err *err);

/* Rowid of the last row inserted on this connection (any table). */
int64_t store_last_rowid(Store *st);

/* Sets resource_id/service/host of every span of source_id with rowid >=
 * first_rowid that was stored without a resource (resource_id 0). Used when
 * a resource object arrives after its spans in a stream (JSON objects are
 * unordered, so "resource" may follow "scopeSpans"). */
int store_span_set_resource(Store *st, int64_t source_id, int64_t first_rowid,
                            int64_t resource_id, const char *service,
                            const char *host, Err *err);

/* ---- reading spans ---------------------------------------------------- */

/* A span as analysis reads it. Strings are borrowed and valid only during
 * the callback; copy what you keep. */
typedef struct StoreSpanRow {
	const char *trace_id;
	const char *span_id;
	const char *parent_id;    /* "" for none */
	const char *service;      /* "" when unknown */
	const char *host;         /* "" when unknown */
	const char *name;
	int kind;
	int64_t start_ns;
	int64_t end_ns;
	int status_code;
	const char *wclass;       /* "" when unknown */
	int has_queue;
	int64_t queue_ns;
	const char *attrs_json;   /* only when requested (STORE_SPANS_ATTRS), else "" */
	const char *links_json;   /* always loaded ("" when none) */
} StoreSpanRow;

/* Called for each span. Return non-zero to stop. */
typedef int (*StoreSpanFn)(void *ctx, const StoreSpanRow *row);

enum {
	STORE_SPANS_ATTRS = 1 << 0,  /* also load attrs_json */
};

/* Calls fn for every span of every trace that has a root span starting in
 * [from_ns, to_ns) (INT64_MIN/INT64_MAX for open ends), grouped by trace,
 * traces in order of trace id. Spans of traces without a root span
 * are included when any of their spans starts in the range. */
int store_spans_scan(Store *st, int64_t from_ns, int64_t to_ns, int flags,
                     StoreSpanFn fn, void *ctx, Err *err);

/* Every span of one trace (for the waterfall), with attributes. */
int store_trace_scan(Store *st, const char *trace_id, StoreSpanFn fn,
                     void *ctx, Err *err);

/* Summary figures of the database. */
typedef struct StoreStats {
	int64_t spans;
	int64_t traces;
	int64_t sources;
	int64_t min_start_ns;     /* 0 when empty */
	int64_t max_end_ns;
	int64_t metric_points;
	int64_t observations;
} StoreStats;

int store_stats(Store *st, StoreStats *out, Err *err);

#endif
