/*
 * store_priv.h - what the store's .c files share and nobody else sees.
 */
#ifndef TT_STORE_PRIV_H
#define TT_STORE_PRIV_H

#include <sqlite3.h>
#include <stdint.h>

#include "store.h"

/* ---- every bind is checked ------------------------------------------------
 *
 * A bind can fail (a value longer than SQLite's length limit, a parameter
 * number out of range, no memory); the parameter then stays NULL and the
 * statement would run with it. In the store's .c files every
 * sqlite3_bind_*() call goes through these macros: a failure is kept (per
 * thread: a statement is used by one thread at a time) and the next
 * sqlite3_step() returns that error code instead of running, so the
 * caller's usual check of the step reports it (store_sqlerr() names the
 * bind's error: SQLite's own message is gone by then) and rolls back.
 * sqlite3_reset() forgets a failure whose statement never ran. */
extern _Thread_local int store_bind_failed;
extern _Thread_local int store_bind_reported; /* what the last step returned for it */

static inline int store_bind_rc(int rc)
{
	if (rc != SQLITE_OK && store_bind_failed == SQLITE_OK)
		store_bind_failed = rc;
	return rc;
}

static inline int store_step_checked(sqlite3_stmt *s)
{
	int rc = store_bind_failed;
	store_bind_reported = rc;
	if (rc != SQLITE_OK) {
		store_bind_failed = SQLITE_OK;
		return rc;
	}
	return (sqlite3_step)(s);
}

static inline int store_reset_checked(sqlite3_stmt *s)
{
	store_bind_failed = SQLITE_OK;
	return (sqlite3_reset)(s);
}

#define sqlite3_bind_text(...) store_bind_rc((sqlite3_bind_text)(__VA_ARGS__))
#define sqlite3_bind_int(...) store_bind_rc((sqlite3_bind_int)(__VA_ARGS__))
#define sqlite3_bind_int64(...) store_bind_rc((sqlite3_bind_int64)(__VA_ARGS__))
#define sqlite3_bind_double(...) store_bind_rc((sqlite3_bind_double)(__VA_ARGS__))
#define sqlite3_bind_null(...) store_bind_rc((sqlite3_bind_null)(__VA_ARGS__))
#define sqlite3_bind_blob(...) store_bind_rc((sqlite3_bind_blob)(__VA_ARGS__))
#define sqlite3_bind_value(...) store_bind_rc((sqlite3_bind_value)(__VA_ARGS__))
#define sqlite3_step(s) store_step_checked(s)
#define sqlite3_reset(s) store_reset_checked(s)

enum {
	STMT_SOURCE_FIND,
	STMT_SOURCE_ADD,
	STMT_SOURCE_FINISH,
	STMT_RESOURCE_FIND,
	STMT_RESOURCE_ADD,
	STMT_SCOPE_FIND,
	STMT_SCOPE_ADD,
	STMT_TRACE_FIND,
	STMT_TRACE_ADD,
	STMT_SPAN_ADD,
	STMT_SPAN_SET_RESOURCE,
	STMT_SPAN_SET_SCOPE,
	STMT_SPAN_SET_CLASS,
	STMT_BEGIN,
	STMT_COMMIT,
	STMT_ROLLBACK,
	STMT_DATA_VERSION,
	STMT_COUNT
};

enum {
	RSTMT_SCAN_ALL,
	RSTMT_SCAN_ALL_ATTRS,
	RSTMT_SCAN_WINDOW,
	RSTMT_SCAN_WINDOW_ATTRS,
	RSTMT_SCAN_ROOTED,
	RSTMT_TOUCHED,
	RSTMT_TOUCHED_COUNT,
	RSTMT_TRACE,
	RSTMT_STATS,
	RSTMT_ROOT_OPS,
	RSTMT_SINCE,
	RSTMT_MAX_ROWID,
	RSTMT_ROOT_ATTRS,
	RSTMT_ROOT_SAMPLING,
	RSTMT_SAMPLE_SETS,
	RSTMT_UNRECOGNISED,
	RSTMT_ROOT_KEYS,
	RSTMT_TRACE_KEY,
	RSTMT_KEY_RANGE,
	RSTMT_MAX_TRACE_KEY,
	RSTMT_ROOTS_COUNT,
	RSTMT_ROOT_SCAN,
	RSTMT_ROUTE_OF,
	RSTMT_ROOTS_UNUSUAL,
	RSTMT_COUNT
};

/* The writer's memory of trace id -> traces.id (trace_key), so that a span
 * of a trace seen recently needs no lookup. Bounded: when three quarters
 * full it is emptied (the traces table still knows every key). Emptied on
 * begin and rollback too, since a rolled-back transaction takes its new
 * traces rows with it; generations make that O(1). */
#define STORE_TKEY_CAP (1u << 16)

typedef struct StoreTraceKey {
	char id[33];
	uint32_t gen;             /* valid only when equal to the cache's gen */
	int64_t key;
} StoreTraceKey;

typedef struct StoreTraceKeys {
	StoreTraceKey *e;         /* STORE_TKEY_CAP entries, allocated on first use */
	uint32_t gen;
	unsigned n;
} StoreTraceKeys;

typedef struct StoreBulk StoreBulk;
typedef struct StoreSpool StoreSpool;

#define STORE_METRICS_STMTS 32
#define STORE_DRILLS_STMTS 4
#define STORE_SETS_STMTS 14
#define STORE_AGG_STMTS 12
#define STORE_PACK_STMTS 3

struct Store {
	sqlite3 *db;
	char *path;
	sqlite3_stmt *stmt[STMT_COUNT];
	sqlite3_stmt *rstmt[RSTMT_COUNT];
	sqlite3_stmt *mstmt[STORE_METRICS_STMTS]; /* owned by store_metrics.c */
	sqlite3_stmt *dstmt[STORE_DRILLS_STMTS];  /* owned by store_drills.c */
	sqlite3_stmt *sstmt[STORE_SETS_STMTS];    /* owned by store_sets.c */
	sqlite3_stmt *astmt[STORE_AGG_STMTS];     /* owned by store_agg.c */
	sqlite3_stmt *pstmt[STORE_PACK_STMTS];    /* owned by store_pack.c */
	StoreSpanRow *pk_rows;    /* store_pack.c: a decoded pack's rows */
	const char **pk_dict;     /* and its strings */
	int pk_crows, pk_cdict, pk_ndict;
	int64_t pk_used, pk_spans;  /* traces read from a pack / with one refused */
	StoreTraceKeys tkeys;
	sqlite3_stmt *span_rows;  /* STORE_SPAN_ROWS spans per insert, lazily */
	StoreBulk *bulk;          /* non-NULL: a bulk load (store_bulk.c) */
	StoreSpool *spool;        /* a bulk load's copy of its spans for the
	                           * aggregates' pass (store_spool.c), or NULL */
	int route_done;           /* store_route.c: the rows from before routes
	                           * were stored have theirs */
};

int store_sqlerr(Store *st, Err *err, const char *what);

/* Steps s, a bound statement whose columns are a root's trace key, start,
 * end and queue wait (NULL: none), calling fn for each row until it
 * returns non-zero; resets s. On a failed step, store_sqlerr(what). */
int store_step_root_keys(Store *st, sqlite3_stmt *s, StoreRootKeyFn fn, void *ctx,
                         const char *what, Err *err);
int store_exec(Store *st, const char *sql, Err *err);

/* store_open() with the PRAGMAs of a bulk load when bulk is non-zero: the
 * caller (store_bulk.c) owns the file and is its only user. */
int store_open_mode(const char *path, int flags, int bulk, Store **out, Err *err);

/* store_bulk.c: frees st->bulk (closing nothing else). */
void store_bulk_free(StoreBulk *b);
void store_bind_text(sqlite3_stmt *s, int i, const char *v);
int store_prepare_all(Store *st, const char *const *texts, int n, sqlite3_stmt **out, Err *err);

/* store_spool.c: a spool in an unlinked file in the directory of
 * near_path (NULL when none can be made); its records (a span as stored,
 * with its trace key and rowid); giving it up; writing out what is
 * buffered once the last span is in (-1: given up). NULL is a spool that
 * was given up. */
StoreSpool *store_spool_new(const char *near_path);
void store_spool_free(StoreSpool *sp);
void store_spool_add(StoreSpool *sp, const StoreSpan *s, int64_t key, int64_t rowid);
void store_spool_break(StoreSpool *sp);
int store_spool_seal(StoreSpool *sp);

/* store_read.c */
int store_read_prepare(Store *st, Err *err);
void store_read_finalize(Store *st);
/* Steps s (a span read: the columns of SPAN_COLS), calling fn per row;
 * *stopped (may be NULL) says whether fn asked to stop. Resets s. */
int store_run_scan(Store *st, sqlite3_stmt *s, StoreSpanFn fn, void *ctx, int *stopped, Err *err);

/* store_pack.c (its table: migration 10 of store.c) */
void store_pack_finalize(Store *st);

/* store_metrics.c (its tables: migrations 2 and 3 of store.c) */
int store_metrics_prepare(Store *st, Err *err);
void store_metrics_finalize(Store *st);

/* store_drills.c (its table: migration 4 of store.c) */
void store_drills_finalize(Store *st);
void store_sets_finalize(Store *st);

/* store_agg.c (its tables: migration 7 of store.c) */
void store_agg_finalize(Store *st);
/* Runs the commit hook, if one is set, on a writing store: not inside a
 * bulk load's own commits, but at its end (bulk_end 1). */
int store_run_commit_hook(Store *st, int bulk_end, Err *err);

/* ---- routes (migration 13 of store.c; the rule: common/route.h) ---------- */

/* The arguments of tt_route() and tt_route_rule() for the span row alias
 * a: its name, then the value of each attribute the rule reads, in
 * RouteAttrs order (json_extract gives NULL for an absent key and a
 * number for a number: both count as absent). */
#define STORE_RX(a, k) "json_extract(" a ".attrs, '$.\"" k "\"')"
#define STORE_ROUTE_ARGS(a)                                                           \
	a ".name, " STORE_RX(a, "http.route") ", " STORE_RX(a, "http.request.method") ", " \
	STORE_RX(a, "http.request.method_original") ", " STORE_RX(a, "http.method") ", "   \
	STORE_RX(a, "url.path") ", " STORE_RX(a, "url.full") ", "                          \
	STORE_RX(a, "http.target") ", " STORE_RX(a, "http.path") ", "                      \
	STORE_RX(a, "http.url") ", "                                                       \
	STORE_RX(a, "rpc.system") ", " STORE_RX(a, "rpc.service") ", "                     \
	STORE_RX(a, "rpc.method") ", " STORE_RX(a, "url.template")
/* The route of a span row (alias a): the stored one (NULL: its name), or
 * for a row whose importer took none, the rule applied to its attributes
 * (only for the spans that have a route: server spans, spans without a
 * parent; '' for the others). CASE is lazy: attrs is read only on that
 * last branch. */
#define STORE_ROUTE_COL(a)                                                            \
	"CASE WHEN " a ".route_rule IS NOT NULL THEN coalesce(" a ".route, " a ".name)"     \
	" WHEN " a ".kind <> 2 AND " a ".parent_id <> '' THEN ''"                           \
	" WHEN json_valid(" a ".attrs) THEN tt_route(" STORE_ROUTE_ARGS(a) ")"              \
	" ELSE " a ".name END"
#define STORE_ROUTE_RULE_COL(a)                                                       \
	"CASE WHEN " a ".route_rule IS NOT NULL THEN " a ".route_rule"                      \
	" WHEN " a ".kind <> 2 AND " a ".parent_id <> '' THEN -1"                           \
	" WHEN json_valid(" a ".attrs) THEN tt_route_rule(" STORE_ROUTE_ARGS(a) ")"         \
	" ELSE 0 END"

/* store_route.c: registers tt_route() and tt_route_rule() on the
 * connection (every connection: readers of rows from before migration 13
 * call them); the writer's one-time pass that gives those rows their
 * route (route_backfill), run inside its first transaction that commits. */
int store_route_register(Store *st, Err *err);
/* store.c: the route of sp as stored (a read gives it): 1 with *route
 * (NULL and *rule -1 for a span that has none, a kind of span the rule
 * does not name) or 0 when its importer took none and its attributes may
 * hold one (then only the readers' SQL says). */
int store_span_route(const StoreSpan *sp, const char **route, int *rule);
int store_route_backfill(Store *st, Err *err);

/* ---- helpers shared by the store's .c files ------------------------------ */

/* *slot prepared from sql on first use (kept for the Store's life); NULL
 * with err set ("preparing <what>: ...") when SQLite refuses it. */
static inline sqlite3_stmt *store_stmt_lazy(Store *st, sqlite3_stmt **slot, const char *sql,
                                            const char *what, Err *err)
{
	if (*slot == NULL &&
	    sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT, slot, NULL) != SQLITE_OK) {
		err_set(err, TT_ESTORE, "preparing %s: %s", what, sqlite3_errmsg(st->db));
		*slot = NULL;
		return NULL;
	}
	return *slot;
}

/* Finalizes n statements and clears their slots. */
static inline void store_stmts_finalize(sqlite3_stmt **s, int n)
{
	for (int i = 0; i < n; i++) {
		sqlite3_finalize(s[i]);
		s[i] = NULL;
	}
}

/* Ready for the next use: reset and unbind. */
static inline void store_stmt_done(sqlite3_stmt *s)
{
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
}

/* Column i as text, "" for NULL (valid until the next step). */
static inline const char *store_col_text(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);
	return t ? (const char *)t : "";
}

static inline const char *store_nz(const char *s)
{
	return s ? s : "";
}

#endif
