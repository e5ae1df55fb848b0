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

#include "buf.h"
#include "err.h"

typedef struct Store Store;

enum {
	STORE_READONLY = 1 << 0,  /* open without creating or migrating */
};

/* Opens (creating and migrating as needed) the database at path. On success
 * *out owns the connection; free it with store_close(). */
int store_open(const char *path, int flags, Store **out, Err *err);
void store_close(Store *st);                /* NULL is a no-op */

/* The schema's migrations (store.c): how many, and the SQL of migration
 * i (0-based: it takes user_version i to i+1), NULL when out of range. */
int store_migration_count(void);
const char *store_migration_sql(int i);

/* Current schema version (PRAGMA user_version after migration). */
int store_schema_version(Store *st);

/* Transactions. store_begin takes the write lock at once (BEGIN IMMEDIATE). */
int store_begin(Store *st, Err *err);
int store_commit(Store *st, Err *err);
void store_rollback(Store *st);

/* PRAGMA data_version: changes whenever another connection commits. */
int64_t store_data_version(Store *st);

/* A function every writing Store of this process runs inside each
 * transaction it commits with store_commit() (just before COMMIT), and in
 * store_bulk_finish() once the rows and indexes are committed (outside a
 * transaction there, so that it may read through more connections; its
 * writes make their own, store_agg_batch_begin/end): it keeps derived
 * tables (the aggregates, store_agg_*) in step with the spans the
 * transaction added. A non-zero return fails the commit (the caller rolls
 * back, as for any failed commit). A bulk load's own commits skip it:
 * store_bulk_finish() runs it once over everything. NULL: none (the
 * default). Set it once, before any Store is opened; cli/ sets it. */
typedef int (*StoreCommitHook)(Store *st, Err *err);
void store_set_commit_hook(StoreCommitHook fn);

/* ---- creating a new database in one go ------------------------------- */

/* Starts a bulk load of the database at path, which must not exist yet
 * (store_bulk.c says how it works). The rows go into a temporary file next
 * to it, ".NAME.import", which is also a lock: a second bulk load of the
 * same path waits until the first one has finished or died.
 *
 * Returns 0 with *out set to a Store for the usual import protocol (each
 * file its own transaction, rollback included), or 0 with *out NULL when
 * path exists by the time the lock is held (use store_open() and append),
 * or a negative TT_E* code with err set. A Store from here must be ended
 * with store_bulk_finish(); store_close() on it abandons the load and
 * removes the temporary file. */
int store_bulk_open(const char *path, Store **out, Err *err);

/* 1 when st is a bulk load from store_bulk_open(). */
int store_is_bulk(const Store *st);

/* store_bulk_finish() found path created by someone else meanwhile. */
#define STORE_BULK_RACED 1

/* Ends a bulk load: builds the indexes that were left out while loading,
 * switches the file to WAL mode, syncs it and renames it to its final
 * path, which it never replaces. Closes st in every case. Returns 0 when
 * the database is in place; STORE_BULK_RACED when a file appeared at the
 * path meanwhile (it is left alone and nothing of this load is kept); a
 * negative TT_E* code with err set otherwise (nothing kept either). No
 * transaction may be open. */
int store_bulk_finish(Store *st, Err *err);

/* The temporary path a bulk load of path writes ("dir/.NAME.import"),
 * malloc'd. */
char *store_bulk_temp_path(const char *path);

/* Removes the temporary file a killed bulk load of path left behind, if
 * there is one and no load is using it. Returns 1 when it removed one. */
int store_bulk_cleanup(const char *path);

/* ---- aggregates (store_agg.c) ----------------------------------------
 *
 * Derived from the spans by the commit hook (analysis/agg.c builds them):
 * per minute of the request's start (floor of root start_ns / 60 s), DAG
 * node, split component, class and host, a count and an encoded sketch.
 * They are a cache: the spans stay the truth, and a reader uses them only
 * when store_agg_covered() equals store_spans_max_rowid(). */

#define STORE_AGG_MINUTE_NS INT64_C(60000000000)

/* Floor of ns / STORE_AGG_MINUTE_NS (also for times before 1970). */
int64_t store_agg_minute(int64_t ns);

/* The largest span rowid the aggregates account for (0: none, or a
 * database from before aggregates, where the first writer builds them). */
int store_agg_covered(Store *st, int64_t *out, Err *err);
int store_agg_set_covered(Store *st, int64_t rowid, Err *err);

typedef struct StoreAggNode {
	int64_t id, parent;
	int type;
	const char *service, *operation;
	const char *callee;       /* what a call is made to (trace_build.h), else "" */
	const char *dependency, *db_system, *peer; /* "" when none */
} StoreAggNode;

/* The id of the aggregate node (n's parent, type, service, operation,
 * callee; n->id is not read), added when new (parent 0: a root).
 * dependency, db_system and peer (each may be NULL or "") are recorded when
 * the node has none yet. */
int store_agg_node(Store *st, const StoreAggNode *n, int64_t *id, Err *err);

/* Every aggregate node, by id (strings borrowed for the call). */
int store_agg_nodes_scan(Store *st, int (*fn)(void *ctx, const StoreAggNode *n), void *ctx,
                         Err *err);

typedef struct StoreAggCell {
	int64_t minute, node;
	int comp;                 /* 0 total, 1 client wait, 2 service, 3 queue */
	const char *wclass;       /* "" when unknown */
	const char *host;         /* "" when unknown */
	int64_t n;                /* observations in the sketch */
	int64_t requests;         /* comp 0: requests in which the node appeared */
	int64_t unknown, db;      /* comp 0: calls of unknown split; database calls */
	int64_t par_votes, ser_votes; /* comp 0: edge votes (as the analysis counts them) */
	int64_t off_ns;           /* comp 0: summed start offsets from the request start, ns
	                           * (integers: sums do not depend on their order) */
	int64_t errors;           /* comp 0 of a root: requests with an error status */
	const void *sketch;       /* encoded (sketch_encode) */
	size_t sketch_len;
} StoreAggCell;

/* Reads the cell with c's key (minute, node, comp, wclass, host) into c,
 * its sketch copied into *sketch (c->sketch points there); *found 0 when
 * there is none. */
int store_agg_get(Store *st, StoreAggCell *c, Buf *sketch, int *found, Err *err);
/* Removes the cell with c's key. */
int store_agg_remove(Store *st, const StoreAggCell *c, Err *err);

/* Removes every cell of minutes [from, to). */
int store_agg_delete(Store *st, int64_t minute_from, int64_t minute_to, Err *err);
/* Adds (or replaces) one cell. */
int store_agg_put(Store *st, const StoreAggCell *c, Err *err);

/* Brackets a batch of aggregate writes (a savepoint): inside a
 * transaction they stay part of it; outside one they commit together at
 * the end. store_agg_batch_end() with ok 0 takes the batch back. */
int store_agg_batch_begin(Store *st, Err *err);
int store_agg_batch_end(Store *st, int ok, Err *err);

/* Every cell of minutes [from, to) (strings and sketch borrowed for the
 * call), in key order. */
int store_agg_scan(Store *st, int64_t minute_from, int64_t minute_to,
                   int (*fn)(void *ctx, const StoreAggCell *c), void *ctx, Err *err);

/* The distinct minutes (store_agg_minute) of the root spans (parent_id '')
 * of every trace with a span whose rowid is above after_rowid; every root
 * minute when after_rowid is 0. In ascending order. */
int store_agg_dirty_minutes(Store *st, int64_t after_rowid,
                            int (*fn)(void *ctx, int64_t minute), void *ctx, Err *err);

/* ---- import sources ------------------------------------------------- */

typedef struct StoreSourceCounts {
	int64_t spans_added;      /* new rows in spans */
	int64_t spans_duplicate;  /* spans whose identity was already stored */
	int64_t metrics_added;    /* new metric points */
	int64_t metrics_duplicate;
	int64_t observations_added;
	int64_t observations_duplicate; /* already stored with the same value */
} StoreSourceCounts;

/* Looks up a successful import with this sha256 (hex). Sets *found and, when
 * found, copies its path into path_out (size path_sz). */
int store_source_find_digest(Store *st, const char *sha256, int *found,
                             char *path_out, unsigned path_sz, Err *err);

/* Records a new source inside the current transaction. */
int store_source_add(Store *st, const char *path, const char *sha256,
                     const char *format, int64_t imported_at_ms,
                     int64_t *source_id, Err *err);

/* Sets the sha256 of a source recorded with a placeholder digest (the
 * importers hash the file while reading it, so the digest is known only at
 * the end of the run). Inside the current transaction. */
int store_source_set_sha256(Store *st, int64_t source_id, const char *sha256, Err *err);

/* Stores final counts and outcome ("imported", "duplicate", or
 * "unrecognised": nothing in it was for its format). */
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
	const char *attr_peer;    /* the string its attributes name its peer by
	                           * (peer.service, else server.address; "" for
	                           * neither), as the importer read them; NULL
	                           * when not taken (then readers parse attrs) */
	const char *attr_db_system; /* likewise db.system.name, else db.system */
	int has_route;            /* 1: route and route_rule were taken by the
	                           * importer (a server span or a span without
	                           * a parent, common/route.h); 0: not taken,
	                           * readers take them from attrs */
	const char *route;        /* the span's route (NULL or its name: the name) */
	int route_rule;           /* ROUTE_* (common/route.h) */
} StoreSpan;

/* Inserts a span in the current transaction. *added is 1 when new, 0 when a
 * span with the same (trace_id, span_id) was already stored. */
int store_span_add(Store *st, int64_t source_id, const StoreSpan *sp,
                   int *added, Err *err);

/* Inserts n spans in the current transaction, STORE_SPAN_ROWS per SQL
 * statement (a bulk import spends about a third less time in SQLite than
 * with one statement per span). *n_added counts the new ones (the others
 * were already stored, or repeat an earlier span of the same call);
 * *first_rowid is the rowid of the first new one, 0 when none. The spans'
 * strings need to live only during the call. */
#define STORE_SPAN_ROWS 16
int store_spans_add(Store *st, int64_t source_id, const StoreSpan *const *sp, int n,
                    int64_t *n_added, int64_t *first_rowid, Err *err);

/* Rowid of the last row inserted on this connection (any table). */
int64_t store_last_rowid(Store *st);

/* Sets resource_id/service/host of every span of source_id with rowid >=
 * first_rowid that was stored without a resource (resource_id 0). Used when
 * a resource object arrives after its spans in a stream (JSON objects are
 * unordered, so "resource" may follow "scopeSpans"). */
int store_span_set_resource(Store *st, int64_t source_id, int64_t first_rowid,
                            int64_t resource_id, const char *service,
                            const char *host, Err *err);

/* Sets scope_id of every span of source_id with rowid >= first_rowid that
 * was stored without a scope (a "scope" that follows its "spans"). */
int store_span_set_scope(Store *st, int64_t source_id, int64_t first_rowid,
                         int64_t scope_id, Err *err);

/* Sets wclass of every span of source_id with rowid >= first_rowid that has
 * none (the class taken from a resource that followed its spans). */
int store_span_set_class(Store *st, int64_t source_id, int64_t first_rowid,
                         const char *wclass, Err *err);

/* ---- reading spans ---------------------------------------------------- */

/* A span as analysis reads it. Strings are borrowed and valid only during
 * the callback; copy what you keep. */
typedef struct StoreSpanRow {
	int64_t trace_key;        /* the traces row of its trace id */
	int64_t rowid;            /* the spans row; 0 when read from a trace pack */
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
	const char *db_system;    /* CLIENT span with db.system.name (or the older
	                           * db.system) attribute: its value, else "" */
	const char *peer;         /* CLIENT span: its peer.service, else its
	                           * server.address attribute, else "" (what an
	                           * uninstrumented dependency is called) */
	const char *events_json;  /* store_trace_scan() only, else "" */
	const char *route;        /* a server span or a span without a parent:
	                           * its route (common/route.h; its name when
	                           * no rule gave another), else "" */
	int route_rule;           /* ROUTE_* of route, -1 when it has none */
} StoreSpanRow;

/* Called for each span. Return non-zero to stop. */
typedef int (*StoreSpanFn)(void *ctx, const StoreSpanRow *row);

/* A bulk load's spool (store_spool.c): beside the rows it stores, a bulk
 * load keeps a copy of what a span read gives of each span, in buckets of
 * consecutive trace keys, for the aggregates' pass that ends it. While
 * that pass runs (the commit hook of store_bulk_finish()),
 * store_spool_buckets() is the number of buckets, or 0 when the spool was
 * given up (store_spool.c says when) or st is no bulk load: then read
 * SQLite. store_spool_read() calls fn for every span of the traces of
 * bucket i that have a root span starting in [from_ns, to_ns), grouped by
 * trace, traces by ascending key, each trace's spans in span id order:
 * what store_spans_scan_rooted() gives for them, attributes and events
 * aside. Different buckets may be read on different threads at once,
 * each thread with a cursor of its own (its memory, kept from one bucket
 * to the next: loading buckets into fresh allocations on two threads
 * fragments the heap of the import's one malloc arena). */
typedef struct StoreSpoolCursor StoreSpoolCursor;
int64_t store_spool_buckets(const Store *st);
StoreSpoolCursor *store_spool_cursor_new(void);
void store_spool_cursor_free(StoreSpoolCursor *c);
int store_spool_read(Store *st, StoreSpoolCursor *c, int64_t i, int64_t from_ns, int64_t to_ns,
                     StoreSpanFn fn, void *ctx, Err *err);
/* Buckets loaded by store_spool_read() in this process (for tests). */
int64_t store_spool_loads(void);

enum {
	STORE_SPANS_ATTRS = 1 << 0,  /* also load attrs_json */
};

/* Calls fn for every span of every trace that has a root span starting in
 * [from_ns, to_ns) (INT64_MIN/INT64_MAX for open ends), grouped by trace,
 * traces in the order they were first stored. Spans of traces without a root span
 * are included when any of their spans starts in the range. */
int store_spans_scan(Store *st, int64_t from_ns, int64_t to_ns, int flags,
                     StoreSpanFn fn, void *ctx, Err *err);

/* Like store_spans_scan(), but only the traces with a root span starting
 * in [from_ns, to_ns) (no rootless traces), each once. */
int store_spans_scan_rooted(Store *st, int64_t from_ns, int64_t to_ns, StoreSpanFn fn,
                            void *ctx, Err *err);

/* Every span of every trace that has a span with a rowid above
 * after_rowid, grouped by trace; is_new says whether that span is one of
 * them (the others were stored earlier). */
int store_spans_touched(Store *st, int64_t after_rowid,
                        int (*fn)(void *ctx, const StoreSpanRow *row, int is_new), void *ctx,
                        Err *err);
/* How many traces store_spans_touched() would return. */
int store_spans_touched_count(Store *st, int64_t after_rowid, int64_t *out, Err *err);

/* Largest span rowid stored so far (0 when empty). Rowids only grow, so
 * "rows after N" is how a reader catches up with new imports. */
int store_spans_max_rowid(Store *st, int64_t *out, Err *err);

/* Calls fn for every span with after_rowid < rowid <= upto_rowid, grouped
 * by trace (order first stored). Only the spans in that range are returned: a
 * trace that also has older rows is partial here (use store_trace_scan). */
int store_spans_since(Store *st, int64_t after_rowid, int64_t upto_rowid, StoreSpanFn fn,
                      void *ctx, Err *err);

/* A root span as the root-start index holds it. */
typedef struct StoreRootKey {
	int64_t trace_key;        /* the traces row id */
	int64_t start_ns, end_ns;
	int has_queue;
	int64_t queue_ns;         /* queue wait recorded before it (has_queue) */
	/* store_root_scan() only (borrowed for the call): */
	const char *service;
	const char *route;        /* its route (common/route.h) */
	int route_rule;           /* ROUTE_* */
	int kind;                 /* SPAN_KIND_* */
	int status_code;
} StoreRootKey;
typedef int (*StoreRootKeyFn)(void *ctx, const StoreRootKey *k);

/* The SERVER root spans of the endpoint (service, route) starting in
 * [from_ns, to_ns), in start order: the requests whose entry is their
 * root (analysis/trace_build.h). fn returns non-zero to stop. Reads the
 * root-start index, not the spans. Roots stored before routes were, which
 * the next writer gives theirs, are left out (store_roots_unusual()). */
int store_root_keys(Store *st, const char *service, const char *route, int64_t from_ns,
                    int64_t to_ns, StoreRootKeyFn fn, void *ctx, Err *err);

/* Every root span starting in [from_ns, to_ns), in start order, with its
 * service, route, kind and status: the index alone, except the route of a
 * root stored before routes were (read from its attributes). */
int store_root_scan(Store *st, int64_t from_ns, int64_t to_ns, StoreRootKeyFn fn, void *ctx,
                    Err *err);

/* How many root spans starting in [from_ns, to_ns) are not SERVER spans
 * (their request's entry is below them, or they have none) or have no
 * stored route: when 0, store_root_keys() lists every request of the
 * range whose trace has a root. */
int store_roots_unusual(Store *st, int64_t from_ns, int64_t to_ns, int64_t *out, Err *err);

/* Every span of the trace with key trace_key, ordered by span id (the
 * order of the full scans). */
int store_trace_key_scan(Store *st, int64_t trace_key, StoreSpanFn fn, void *ctx, Err *err);

/* Every span with from_key <= trace_key < to_key and rowid <= upto_rowid,
 * grouped by trace in the order of store_spans_since(): consecutive key
 * ranges read one after another give what one full read gives, so that
 * several connections can share a read (analysis/trace_feed.h). */
int store_spans_key_range(Store *st, int64_t from_key, int64_t to_key, int64_t upto_rowid,
                          StoreSpanFn fn, void *ctx, Err *err);

/* The largest trace key a span has (0 when there are none). */
int store_trace_key_max(Store *st, int64_t *out, Err *err);

/* ---- trace packs ---------------------------------------------------------
 * A trace's spans as the analysis reads them, in one row of trace_packs
 * (migration 10): the columns of StoreSpanRow except attrs and events
 * (those reads return "" for them), in the order of the identity index,
 * strings coded against the ones earlier in the same pack. Reading a
 * trace from its pack is one row instead of one index seek and one row
 * per span, so store_spans_key_range() and store_trace_key_scan() use a
 * pack when there is a valid one. A pack is a cache, never the truth:
 * it names the largest span rowid it holds (upto), spans are never changed
 * once committed and rowids only grow, so a pack is valid exactly when
 * the largest rowid among its trace's spans (as far as the reading sees
 * them) is still its upto. A trace without a valid pack, or with one that
 * does not decode (a damaged file), is read from its spans; the rows are
 * the same either way. The aggregates' update (analysis/agg.c) writes the
 * packs of the traces it reads. */

/* A pack being built from the rows of one trace (the rows of a read that
 * returns "" for attrs and events: store_spans_scan_rooted(),
 * store_spans_touched()). */
typedef struct StorePack {
	Buf b;
	int64_t key, upto;        /* the rows' trace key, their largest rowid */
	int n;                    /* rows */
	int bad;                  /* rows of more than one trace, or no key */
	int64_t prev_start;
	struct StorePackStr *dict; /* open addressing over the strings so far */
	int n_dict, cap_dict;
} StorePack;

void store_pack_init(StorePack *p);
void store_pack_fini(StorePack *p);
/* Starts the pack of the trace whose first row is r, and adds r. */
void store_pack_begin(StorePack *p, const StoreSpanRow *r);
void store_pack_row(StorePack *p, const StoreSpanRow *r);
/* 1 when the pack holds rows of one stored trace and can be written. */
int store_pack_ok(const StorePack *p);

/* Writes (replaces) the pack of trace key with the given bytes (from a
 * StorePack: p->b.p, p->b.len) on a writing store. */
int store_pack_put(Store *st, int64_t key, int64_t upto, const void *data, size_t len, Err *err);

/* Since the connection opened: traces read from their pack, and traces
 * whose pack was there but stale or damaged (read from their spans). */
void store_pack_counts(const Store *st, int64_t *used, int64_t *refused);

/* How many root spans (parent_id '') start in [from_ns, to_ns). */
int store_roots_count(Store *st, int64_t from_ns, int64_t to_ns, int64_t *out, Err *err);

/* Sets the connection's page cache to about kib KiB. A writing connection
 * opens with 32 MiB, a reading one with STORE_READ_CACHE_KIB; one that
 * streams through the file once, like a second reader of a read in parts,
 * needs even less. */
#define STORE_READ_CACHE_KIB 8192
void store_cache_kib(Store *st, int kib);

/* The path the store was opened with (borrowed, lives as long as st). */
const char *store_path(const Store *st);

/* 1 when the connection is inside a transaction (what it has written is
 * not visible to other connections yet), else 0. */
int store_in_transaction(const Store *st);

/* Every span of one trace (for the waterfall), with attributes. */
int store_trace_scan(Store *st, const char *trace_id, StoreSpanFn fn,
                     void *ctx, Err *err);

/* Called with each root operation (service, span name) and the number of
 * root spans of it starting in [from_ns, to_ns). Strings are borrowed. */
typedef int (*StoreRootOpFn)(void *ctx, const char *service, const char *name, int64_t count);

int store_root_operations(Store *st, int64_t from_ns, int64_t to_ns, StoreRootOpFn fn,
                          void *ctx, Err *err);

/* Called with the attributes of each SERVER root span of the endpoint
 * (service, route) that starts in [from_ns, to_ns), and of its resource
 * (JSON object texts, "" when none). Borrowed for the call. Return
 * non-zero to stop. */
typedef int (*StoreRootAttrsFn)(void *ctx, const char *span_attrs, const char *resource_attrs);

int store_root_attrs(Store *st, const char *service, const char *route, int64_t from_ns,
                     int64_t to_ns, StoreRootAttrsFn fn, void *ctx, Err *err);
/* What the SERVER root spans of the endpoint (service, route) starting in
 * [from_ns, to_ns) say
 * about how they were sampled, one row per root (roots = 1): the W3C
 * tracestate (OpenTelemetry's "ot=th:..." or "ot=p:...") and the tags
 * sampler.type, sampler.param (Jaeger clients) and sampling.priority
 * (OpenTracing), and for a trace pulled as a member of a uniform sample
 * (store.h, "trace sets") the probability it was chosen with: members /
 * population of its set, and where samples overlap (the rounds of pull
 * --every) that of their union, 1 - prod(1 - p) over every sample that
 * holds it or whose range, service and operation could have held it,
 * the samples taken as independent draws (docs/live.md, "Overlapping
 * samples"). The
 * traces of no population are left out. At most
 * max_roots roots are read (<= 0: all). Strings are borrowed for the
 * call; return non-zero from fn to stop. */
typedef struct StoreSamplingRow {
	const char *trace_state;  /* "" when none */
	const char *sampler_type; /* NULL when absent */
	int has_param;
	double param;
	int has_priority;
	double priority;
	int has_pulled;           /* a member of a pulled uniform sample */
	double pulled;            /* the probability it was chosen with */
	int64_t roots;
} StoreSamplingRow;

typedef int (*StoreSamplingFn)(void *ctx, const StoreSamplingRow *r);

int store_root_sampling(Store *st, const char *service, const char *route, int64_t from_ns,
                        int64_t to_ns, int64_t max_roots, StoreSamplingFn fn, void *ctx,
                        Err *err);

/* Calls fn once per distinct workload class of the stored spans, in byte
 * order of the name (the class is borrowed for the call). Reads every span:
 * meant for checking a class the user typed, not for a loop. */
int store_classes(Store *st, int (*fn)(void *ctx, const char *wclass), void *ctx, Err *err);

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

/* Counts the sources whose outcome is "unrecognised": files or request
 * bodies that had fields but none their format reads, so they stored
 * nothing (e.g. a traces body posted to /v1/metrics). Returns 0 or
 * TT_ESTORE. */
int store_sources_unrecognised(Store *st, int64_t *out, Err *err);

/* ==== metrics and observation sheets (store_metrics.c) ================== */
#include <stddef.h>
/*
 * Metric families, series and points imported from Prometheus text,
 * OpenMetrics and OTLP/JSON, and named observations from sheets.
 *
 * A family is (name, type, unit, temporality); a series is a family plus a
 * canonical label set (see store_labels_json) plus the OTLP resource that
 * produced it (0 for text formats). A point is one reading of a series at
 * one time; histograms keep cumulative buckets (le -> count), summaries
 * their quantiles, and any point its exemplars.
 *
 * Point identity (what makes a re-import add nothing):
 *  - a point whose timestamp came from the data: (series, ts_ns);
 *  - a point without one (text formats allow that): (series, sha256 of the
 *    source file); its ts_ns is the import time of the first import.
 */

/* Family types. Text formats use the first eight ("untyped" is stored as
 * "unknown"); OTLP adds "updowncounter" (a non-monotonic sum) and
 * "exphistogram" (an exponential histogram, also stored as le buckets). */
#define STORE_METRIC_TYPES \
	"counter gauge histogram gaugehistogram summary info stateset unknown updowncounter exphistogram"

/* One label. Keys and values may contain any bytes except that keys must
 * not repeat; they are rendered as JSON strings (NUL as \u0000). */
typedef struct StoreLabel {
	const char *key;
	size_t key_len;
	const char *val;
	size_t val_len;
} StoreLabel;

/* Renders labels as the canonical JSON object text the store compares:
 * keys sorted bytewise, no white space, e.g. {"code":"200","method":"GET"}.
 * Returns a malloc'd string the caller frees, or NULL when a key repeats.
 * labels may be reordered. */
char *store_labels_json(StoreLabel *labels, size_t n);

typedef struct StoreMetricFamily {
	const char *name;         /* family name as the format declares it */
	const char *type;         /* one of STORE_METRIC_TYPES */
	const char *unit;         /* NULL or "" when none */
	const char *help;         /* NULL or "" when none */
	const char *temporality;  /* OTLP sums/histograms: "cumulative", "delta";
	                           * NULL or "" otherwise */
} StoreMetricFamily;

/* Returns the id of the family, adding it when new. A help text is kept
 * from the first import that had one. */
int store_metric_family_intern(Store *st, const StoreMetricFamily *f, int64_t *id, Err *err);

/* Returns the id of the series (family, labels_json, resource_id), adding
 * it when new. labels_json must be canonical (store_labels_json);
 * resource_id is from store_resource_intern() or 0. */
int store_metric_series_intern(Store *st, int64_t family_id, const char *labels_json,
                               int64_t resource_id, int64_t *id, Err *err);

typedef struct StoreMetricBucket {
	double le;                /* upper bound, +Inf for the last bucket */
	double count;             /* cumulative: observations <= le */
} StoreMetricBucket;

typedef struct StoreMetricQuantile {
	double q;                 /* 0..1 */
	double value;             /* may be NaN (no observations) */
} StoreMetricQuantile;

typedef struct StoreMetricExemplar {
	int has_le;               /* belongs to the bucket with this bound */
	double le;
	double value;             /* may be NaN */
	int has_ts;
	int64_t ts_ns;
	const char *trace_id;     /* lowercase hex when it was hex; NULL/"" none */
	const char *span_id;      /* NULL/"" none */
	const char *labels_json;  /* canonical object of all its labels, NULL = {} */
} StoreMetricExemplar;

/* Point flags. */
enum {
	STORE_POINT_NO_VALUE = 1 << 0,  /* OTLP: no recorded value (staleness) */
};

typedef struct StoreMetricPoint {
	int64_t series_id;
	int ts_explicit;          /* 1: ts_ns came from the data */
	int64_t ts_ns;            /* ignored when !ts_explicit (import time used) */
	int has_start;            /* _created / startTimeUnixNano */
	int64_t start_ns;
	int has_value;            /* counter total, gauge, unknown, info, state */
	double value;             /* NaN allowed */
	int has_count;            /* histogram/summary count */
	double count;
	int has_sum;
	double sum;               /* NaN allowed */
	int has_min, has_max;     /* OTLP histograms */
	double min, max;
	int flags;                /* STORE_POINT_* */
	const char *scheme;       /* buckets: "explicit" or "exponential"; NULL/"" */
	int scale;                /* exponential: scale */
	double zero_count;        /* exponential: count of the zero bucket */
	double zero_threshold;
	const StoreMetricBucket *buckets;   /* ascending le, cumulative */
	int n_buckets;
	const StoreMetricQuantile *quantiles;
	int n_quantiles;
	const StoreMetricExemplar *exemplars;
	int n_exemplars;
} StoreMetricPoint;

/* Adds a point with its buckets, quantiles and exemplars in the current
 * transaction. *added is 1 when new, 0 when the same point was already
 * stored (then nothing of it is written). */
int store_metric_point_add(Store *st, int64_t source_id, const StoreMetricPoint *p,
                           int *added, Err *err);

/* ---- reading metrics -------------------------------------------------- */

/* A point as analysis reads it. Every pointer is borrowed and valid only
 * during the callback; copy what you keep. */
typedef struct StoreMetricRow {
	int64_t series_id;
	int64_t point_id;
	int64_t source_id;
	const char *family;
	const char *type;
	const char *unit;         /* "" when none */
	const char *help;         /* "" when none */
	const char *temporality;  /* "" for text formats */
	const char *labels_json;  /* canonical object text */
	const char *service;      /* resource service.name, "" when none */
	int64_t ts_ns;
	int ts_explicit;          /* 0: ts_ns is the import time */
	int has_start;
	int64_t start_ns;
	int has_value;
	double value;
	int has_count;
	double count;
	int has_sum;
	double sum;
	int has_min, has_max;
	double min, max;
	int flags;
	const char *scheme;       /* "explicit", "exponential" or "" */
	int scale;
	double zero_count, zero_threshold;
	const StoreMetricBucket *buckets;       /* only with STORE_METRIC_BUCKETS */
	int n_buckets;
	const StoreMetricQuantile *quantiles;   /* only with STORE_METRIC_QUANTILES */
	int n_quantiles;
	const StoreMetricExemplar *exemplars;   /* only with STORE_METRIC_EXEMPLARS */
	int n_exemplars;
} StoreMetricRow;

typedef int (*StoreMetricFn)(void *ctx, const StoreMetricRow *row);

enum {
	STORE_METRIC_BUCKETS = 1 << 0,
	STORE_METRIC_QUANTILES = 1 << 1,
	STORE_METRIC_EXEMPLARS = 1 << 2,
};

typedef struct StoreMetricQuery {
	const char *family;       /* exact family name; required */
	const char *type;         /* NULL: any */
	const char *labels_json;  /* NULL, or a JSON object of string values that
	                           * must all be present with these values */
	const char *service;      /* NULL: any */
	int64_t from_ns, to_ns;   /* [from, to) on ts_ns; INT64_MIN/INT64_MAX open */
	int flags;                /* STORE_METRIC_* */
} StoreMetricQuery;

/* Calls fn for each matching point, ordered by series then time. Return
 * non-zero from fn to stop. Errors: TT_ESTORE (also for a labels_json that
 * is not a JSON object). */
int store_metric_points_scan(Store *st, const StoreMetricQuery *q, StoreMetricFn fn,
                             void *ctx, Err *err);

/* One family with how much data it has. Strings are borrowed. */
typedef struct StoreMetricFamilyRow {
	int64_t id;
	const char *name, *type, *unit, *help, *temporality;
	int64_t series;
	int64_t points;
	int64_t min_ts_ns, max_ts_ns;  /* 0 when no points */
} StoreMetricFamilyRow;

typedef int (*StoreMetricFamilyFn)(void *ctx, const StoreMetricFamilyRow *row);

/* Every family, by name then type. */
int store_metric_families_scan(Store *st, StoreMetricFamilyFn fn, void *ctx, Err *err);

/* An exemplar with the point it hangs on. Borrowed as above. */
typedef struct StoreExemplarRow {
	const char *family;
	const char *type;
	const char *labels_json;  /* of the series */
	const char *service;
	int64_t point_ts_ns;
	StoreMetricExemplar ex;
} StoreExemplarRow;

typedef int (*StoreExemplarFn)(void *ctx, const StoreExemplarRow *row);

/* Exemplars of points in [from_ns, to_ns), of family (NULL: all), by
 * family, time, bucket. */
int store_metric_exemplars_scan(Store *st, const char *family, int64_t from_ns,
                                int64_t to_ns, StoreExemplarFn fn, void *ctx, Err *err);

/* Counts of metric rows (for store_stats-like summaries). */
int store_metric_counts(Store *st, int64_t *series, int64_t *points,
                        int64_t *observations, Err *err);

/* ---- observation sheets ----------------------------------------------- */

typedef struct StoreObservation {
	const char *sheet;        /* sheet name */
	const char *endpoint;     /* NULL/"" when not given */
	const char *name;         /* evidence name, e.g. "ingress.p99_ms" */
	const char *role;         /* "window" or "baseline" */
	const char *window;       /* the window's label or "A..B" text */
	int has_range;            /* the window is a time range */
	int64_t from_ns, to_ns;
	double value;             /* as written */
	const char *unit;         /* as written */
	double norm;              /* in the evidence convention (ms, ratio) */
	const char *norm_unit;
	const char *labels_json;  /* canonical, NULL = {} */
} StoreObservation;

enum {
	STORE_OBS_ADDED = 0,      /* new row */
	STORE_OBS_SAME = 1,       /* the same observation was already stored */
	STORE_OBS_CONFLICT = 2,   /* same (sheet, name, role, labels), other value,
	                           * unit or window: nothing written */
};

/* Adds an observation. *outcome is STORE_OBS_*; on CONFLICT *old_value
 * (may be NULL) gets the stored value. */
int store_observation_add(Store *st, int64_t source_id, const StoreObservation *o,
                          int *outcome, double *old_value, Err *err);

/* An observation as read back; borrowed during the callback. */
typedef struct StoreObservationRow {
	int64_t id;
	int64_t source_id;
	StoreObservation o;
} StoreObservationRow;

typedef int (*StoreObservationFn)(void *ctx, const StoreObservationRow *row);

/* Observations of sheet (NULL: all) named name (NULL: all), by sheet, name,
 * role (window first), labels. */
int store_observations_scan(Store *st, const char *sheet, const char *name,
                            StoreObservationFn fn, void *ctx, Err *err);


/* ---- pulled PromQL queries (owner: live; store_metrics.c, last section) --
 * A `tailtriage pull` query evaluation is one source (format "promql")
 * whose metric points are the query's result; this record keeps what was
 * asked, where and for which instant, keyed by that source. */

typedef struct StorePromQuery {
	const char *url;          /* the API's base URL */
	const char *name;         /* the query's name ("pool.profile.used") */
	const char *query;        /* the PromQL text */
	int64_t eval_ns;          /* evaluation time (the API's time parameter) */
	const char *result_type;  /* "vector", "scalar" or "matrix" */
	int64_t samples;          /* values in the result */
} StorePromQuery;

/* Records the query of source_id inside the current transaction. */
int store_promql_add(Store *st, int64_t source_id, const StorePromQuery *q, Err *err);

/* Called per recorded query, oldest evaluation first; strings borrowed. */
typedef int (*StorePromQueryFn)(void *ctx, int64_t source_id, const StorePromQuery *q);

int store_promql_scan(Store *st, StorePromQueryFn fn, void *ctx, Err *err);


/* ---- drill attempts (owner: drills; store_drills.c) ----------------------
 * The training history: one row per scored attempt. answers_json and
 * deductions_json are JSON text written by drills/ (the store keeps them as
 * given). */

typedef struct StoreDrillAttempt {
	const char *drill;           /* drill id, required */
	int64_t drill_version;       /* the drill file's "version" */
	const char *drill_digest;    /* digest of the drill file scored against (hex) */
	const char *person;          /* who answered, required */
	const char *mode;            /* "answers" (headless), "tui", ... */
	int64_t started_ms;          /* unix ms */
	int64_t finished_ms;
	const char *answers_json;    /* the answers as given; NULL: {} */
	double score, max_score;
	int hints_used;
	const char *deductions_json; /* [{part, lost, reason}, ...]; NULL: [] */
	int has_seed;                /* the choices were shown in an order from seed */
	int64_t seed;                /* the shuffle's seed (drills/order.h) */
	const char *shown_json;      /* the choice ids in the order shown (JSON text);
	                              * NULL: not recorded (attempts stored before
	                              * shuffling, or answers prepared elsewhere) */
} StoreDrillAttempt;

/* Records an attempt (its own statement; wrap it in store_begin/commit to
 * group it with other writes). *id (may be NULL) gets the new row id. */
int store_drill_attempt_add(Store *st, const StoreDrillAttempt *a, int64_t *id, Err *err);

/* Called per attempt, oldest first; strings borrowed during the call.
 * Return non-zero to stop. */
typedef int (*StoreDrillAttemptFn)(void *ctx, int64_t id, const StoreDrillAttempt *a);

/* Attempts of person (NULL: everyone) on drill (NULL: every drill). */
int store_drill_attempts_scan(Store *st, const char *person, const char *drill,
                              StoreDrillAttemptFn fn, void *ctx, Err *err);


/* ==== trace sets (store_sets.c) ========================================= */
/*
 * What a pull from a trace back end chose (importers/trace_pull.h): the
 * slowest N traces of a window, which serve the tail's traces and are no
 * population, or a uniform sample of a range (window or baseline), which
 * is one. A set is identified by (kind, role, range, source, service,
 * operation): pulling the same again adds to it, never a second set.
 * Members are trace ids (32 hex digits); a member's spans are stored by
 * the importer, in their own transaction.
 */
typedef struct StoreTraceSet {
	int64_t id;
	const char *kind;          /* "slowest" or "sample" */
	const char *role;          /* "window" or "baseline" */
	int64_t from_ns, to_ns;    /* the range it was chosen from, [from, to) */
	int64_t requested;         /* the N asked for */
	int64_t population;        /* traces the back end listed in the range,
	                            * -1 when not known */
	int64_t members;           /* (read) traces recorded in it */
	const char *source;        /* the back end's URL */
	const char *service;
	const char *operation;     /* "" for any */
	int64_t created_ms;
} StoreTraceSet;

/* Finds or adds the set s describes (its id into *id); the requested and
 * population figures of an existing one are updated. In the caller's
 * transaction, or its own when none is open. */
int store_trace_set_intern(Store *st, const StoreTraceSet *s, int64_t *id, Err *err);

/* Records trace_id (32 hex digits) in set set_id; *added (may be NULL) is
 * 1 when it was not there yet. Call it once the trace is stored: a stored
 * member of a slowest set that no sample holds is then left out of every
 * population (the readers of root spans skip it: it serves the tail's
 * traces, not percentiles). */
int store_trace_set_add(Store *st, int64_t set_id, const char *trace_id, int *added,
                        Err *err);
/* store_trace_set_add(), and *moved (may be NULL) 1 when the trace went
 * into or out of the population by it (it was a population's request and
 * is now a slowest trace of no sample, or the reverse): what was computed
 * from it at import time (the aggregates) no longer holds. */
int store_trace_set_add_ex(Store *st, int64_t set_id, const char *trace_id, int *added,
                           int *moved, Err *err);

/* Calls fn for every set, oldest first; its strings live until fn
 * returns. fn returns nonzero to stop. */
typedef int (*StoreTraceSetFn)(void *ctx, const StoreTraceSet *s);
int store_trace_sets(Store *st, StoreTraceSetFn fn, void *ctx, Err *err);

/* The trace keys left out of populations (members of a slowest set that
 * no sample holds), ascending, into a malloc'd *keys (NULL when none; the
 * caller frees) of *n. A database without trace sets has none. These
 * three readers fail (TT_ESTORE, *keys NULL) when the query for the sets'
 * tables fails (a lock, an I/O error): a failure is never "no set". */
int store_traces_not_population(Store *st, int64_t **keys, size_t *n, Err *err);

/* The tail of a range: the traces of the slowest sets (kind "slowest")
 * whose range covers [from_ns, to_ns). A slowest set holds every trace of
 * its range above its shortest member, so its members inside a range it
 * covers are that range's slowest, a complete top (whether a sample holds
 * them too or not). Their trace keys, ascending, into a malloc'd *keys
 * (NULL when none; the caller frees) of *n; an open range (INT64_MIN or
 * INT64_MAX at an end) has none. */
typedef struct StoreTailInfo {
	int64_t sets;              /* slowest sets covering the range */
	int64_t requested;         /* the largest N asked of them */
	int64_t population_min;    /* the fewest traces their back end listed in
	                            * their ranges; -1 when one is not known */
	int64_t population_max;    /* the most; -1 when none is known */
} StoreTailInfo;

int store_tail_keys(Store *st, int64_t from_ns, int64_t to_ns, int64_t **keys, size_t *n,
                    StoreTailInfo *info, Err *err);

/* The slowest set pulled for exactly [from_ns, to_ns) of one entry span
 * name (--operation) of service: the one whose name is route first, then
 * the latest; found 0 when there is none. Its members are the range's
 * complete top; with the population the back end listed, the ranks of the
 * whole range that fall inside it are known (analysis/evidence_top.c,
 * which also checks that its members are the endpoint's requests). */
typedef struct StoreSlowestSet {
	int found;
	int64_t population;        /* traces the back end listed in the range; -1
	                            * when its listing was not complete */
	int64_t requested;         /* the N asked */
	int64_t members;           /* traces recorded in the set */
	char operation[256];       /* the entry span name it was pulled for */
} StoreSlowestSet;

int store_slowest_exact(Store *st, const char *service, const char *route, int64_t from_ns,
                        int64_t to_ns, StoreSlowestSet *out, Err *err);

/* The entry spans of the endpoint (service, route) starting in
 * [from_ns, to_ns) whose traces are members of the slowest sets covering
 * that range, once a trace, in no particular order (store_root_keys()
 * leaves them out when no sample holds them). */
int store_slowest_roots(Store *st, const char *service, const char *route, int64_t from_ns,
                        int64_t to_ns, StoreRootKeyFn fn, void *ctx, Err *err);

/* *known = 1 when spans of trace_id (32 hex digits) are stored. */
int store_trace_known(Store *st, const char *trace_id, int *known, Err *err);

#endif
