/*
 * store_read.c - the read side for analysis: spans grouped by trace.
 */
#include "store.h"
#include "store_priv.h"

#include <stdlib.h>
#include <string.h>

/* DB_SYSTEM: for a CLIENT span (kind 3) whose attributes name a database
 * system (OpenTelemetry's db.system.name, or db.system before semantic
 * conventions 1.26), that name; else ''. instr() keeps the JSON functions
 * off every other span. */
#define DB_SYSTEM                                                                   \
	"CASE WHEN s.kind <> 3 THEN '' WHEN s.attr_db_system IS NOT NULL THEN s.attr_db_system" \
	" WHEN instr(coalesce(s.attrs, ''), '\"db.system') > 0"                              \
	" AND json_valid(s.attrs) THEN coalesce(json_extract(s.attrs, '$.\"db.system.name\"'),"  \
	" json_extract(s.attrs, '$.\"db.system\"'), '') ELSE '' END"
/* ADDR_PORT(a, p): address attribute a followed by ":" and port attribute
 * p when p is a whole number 1..65535 and a has no port yet; an IPv6
 * address (two colons or more, unbracketed) as "[a]:p" (as the importers
 * write attr_peer, import_addr_port()). */
#define ADDR_A(a) "json_extract(s.attrs, '$.\"" a "\"')"
#define ADDR_P(p) "json_extract(s.attrs, '$.\"" p "\"')"
#define ADDR_PORT(a, p)                                                             \
	"(CASE WHEN json_type(s.attrs, '$.\"" p "\"') IS NOT 'integer' OR " ADDR_P(p)     \
	" NOT BETWEEN 1 AND 65535 THEN " ADDR_A(a)                                        \
	" WHEN instr(" ADDR_A(a) ", ':') = 0 THEN " ADDR_A(a) " || ':' || " ADDR_P(p)      \
	" WHEN substr(" ADDR_A(a) ", 1, 1) <> '[' AND instr(substr(" ADDR_A(a) ","          \
	" instr(" ADDR_A(a) ", ':') + 1), ':') > 0 THEN '[' || " ADDR_A(a) " || ']:' || "  \
	ADDR_P(p) " ELSE " ADDR_A(a) " END)"
/* PEER: for a CLIENT span, its peer.service, else server.address, else
 * net.peer.name (semantic conventions before 1.21), an address with its
 * port. All come from the column the importer filled (migration 9) when
 * it did. */
#define PEER                                                                        \
	"CASE WHEN s.kind <> 3 THEN '' WHEN s.attr_peer IS NOT NULL THEN s.attr_peer"        \
	" WHEN (instr(coalesce(s.attrs, ''), '\"peer.service\"') > 0"                        \
	" OR instr(coalesce(s.attrs, ''), '\"server.address\"') > 0"                         \
	" OR instr(coalesce(s.attrs, ''), '\"net.peer.name\"') > 0) AND json_valid(s.attrs)"  \
	" THEN coalesce(json_extract(s.attrs, '$.\"peer.service\"'), "                       \
	ADDR_PORT("server.address", "server.port") ", "                                    \
	ADDR_PORT("net.peer.name", "net.peer.port") ", '') ELSE '' END"
#define SPAN_COLS_EV(attrs, events)                                              \
	"s.trace_id, s.span_id, s.parent_id, s.service, s.host, s.name, s.kind,"     \
	" s.start_ns, s.end_ns, s.status_code, coalesce(s.wclass, ''), s.queue_ns,"  \
	" " attrs ", " events ", " DB_SYSTEM ", " PEER ", s.trace_key, s.id, "       \
	STORE_ROUTE_COL("s") ", " STORE_ROUTE_RULE_COL("s")
#define SPAN_COLS(attrs) SPAN_COLS_EV(attrs, "''")

/* A trace belongs to a window when its root span starts in it; a trace with
 * no root (only orphans) belongs where its earliest span starts. Traces are
 * grouped by trace_key (the order they were first stored), which the
 * identity index (trace_key, span_id) delivers without a sort. */
/* The traces pulled as the slowest of a window and in no sample are not
 * requests of a population (store.h, "trace sets"): every reader of root
 * spans leaves them out. */
#define NOT_POPULATION " AND trace_key NOT IN (SELECT trace_key FROM traces_not_population)"

#define WINDOW_TRACES                                                              \
	"WITH t(k) AS ("                                                                \
	"  SELECT trace_key FROM spans WHERE parent_id = '' AND start_ns >= ?1 AND start_ns < ?2" \
	NOT_POPULATION                                                                  \
	"  UNION SELECT trace_key FROM spans GROUP BY trace_key"                       \
	"    HAVING sum(parent_id = '') = 0 AND min(start_ns) >= ?1 AND min(start_ns) < ?2" \
	NOT_POPULATION ")"

static const char *const rsql[RSTMT_COUNT] = {
	[RSTMT_SCAN_ALL] = "SELECT " SPAN_COLS("''") " FROM spans s ORDER BY s.trace_key",
	[RSTMT_SCAN_ALL_ATTRS] =
	    "SELECT " SPAN_COLS("coalesce(s.attrs, '')") " FROM spans s ORDER BY s.trace_key",
	[RSTMT_SCAN_WINDOW] = WINDOW_TRACES " SELECT " SPAN_COLS("''")
	                      " FROM t JOIN spans s ON s.trace_key = t.k ORDER BY s.trace_key",
	[RSTMT_SCAN_WINDOW_ATTRS] = WINDOW_TRACES " SELECT " SPAN_COLS("coalesce(s.attrs, '')")
	                            " FROM t JOIN spans s ON s.trace_key = t.k ORDER BY s.trace_key",
	[RSTMT_TRACE] = "SELECT " SPAN_COLS_EV("coalesce(s.attrs, '')", "coalesce(s.events, '')")
	                " FROM spans s WHERE s.trace_key = (SELECT id FROM traces WHERE trace_id = ?1)"
	                " ORDER BY s.start_ns, s.span_id",
	/* grouped by trace without a sort: the outer loop is over t, and for
	 * each of its keys the identity index yields that trace's spans */
	[RSTMT_SCAN_ROOTED] = "WITH t(k) AS MATERIALIZED (SELECT DISTINCT trace_key FROM spans"
	                      " WHERE parent_id = '' AND start_ns >= ?1 AND start_ns < ?2"
	                      NOT_POPULATION ")"
	                      " SELECT " SPAN_COLS("''")
	                      " FROM t CROSS JOIN spans s ON s.trace_key = t.k",
	/* every span of the traces that have one above rowid ?1, grouped by
	 * trace, with "is it above ?1" as column 20. NOT INDEXED: the rowid
	 * range (the new rows), not the identity index, which would give the
	 * DISTINCT for free but read every span of the store */
	[RSTMT_TOUCHED] = "WITH t(k) AS MATERIALIZED (SELECT DISTINCT trace_key FROM spans"
	                  " NOT INDEXED WHERE id > ?1) SELECT " SPAN_COLS("''") ", s.id > ?1"
	                  " FROM t CROSS JOIN spans s ON s.trace_key = t.k",
	[RSTMT_TOUCHED_COUNT] = "SELECT count(DISTINCT trace_key) FROM spans NOT INDEXED WHERE id > ?1",
	[RSTMT_SINCE] = "SELECT " SPAN_COLS("''")
	                " FROM spans s WHERE s.id > ?1 AND s.id <= ?2 ORDER BY s.trace_key",
	[RSTMT_MAX_ROWID] = "SELECT coalesce(max(id), 0) FROM spans",
	[RSTMT_UNRECOGNISED] = "SELECT count(*) FROM sources WHERE outcome = 'unrecognised'",
	[RSTMT_ROOT_OPS] =
	    "SELECT service, name, count(*) FROM spans"
	    " WHERE parent_id = '' AND start_ns >= ?1 AND start_ns < ?2" NOT_POPULATION
	    " GROUP BY service, name ORDER BY count(*) DESC, service, name",
	[RSTMT_ROOT_ATTRS] =
	    "SELECT coalesce(s.attrs, ''), coalesce(r.attrs, '') FROM spans s"
	    " LEFT JOIN resources r ON r.id = s.resource_id"
	    " WHERE s.parent_id = '' AND s.service = ?1 AND s.kind = 2"
	    " AND coalesce(s.route, s.name) = ?2 AND s.start_ns >= ?3 AND s.start_ns < ?4"
	    " AND s.trace_key NOT IN (SELECT trace_key FROM traces_not_population)",
	/* what the root spans say about their sampling: the W3C tracestate,
	 * and the Jaeger and OpenTracing tags; at most ?5 roots (a sampler
	 * is configured, not chosen per request), with their start, name and
	 * the sets that hold them (store_root_sampling() reads the pulled
	 * samples' probabilities from RSTMT_SAMPLE_SETS) */
	[RSTMT_ROOT_SAMPLING] =
	    "SELECT ts, json_extract(a, '$.\"sampler.type\"'), json_extract(a, '$.\"sampler.param\"'),"
	    " json_extract(a, '$.\"sampling.priority\"'), start_ns, name, sets FROM"
	    " (SELECT coalesce(trace_state, '') AS ts,"
	    "  CASE WHEN json_valid(attrs) THEN attrs ELSE '{}' END AS a, start_ns, name,"
	    "  (SELECT group_concat(m.set_id) FROM trace_set_members m"
	    "   WHERE m.trace_id = spans.trace_id) AS sets FROM spans"
	    "  WHERE parent_id = '' AND service = ?1 AND kind = 2 AND coalesce(route, name) = ?2"
	    "  AND start_ns >= ?3 AND start_ns < ?4" NOT_POPULATION " LIMIT ?5)",
	/* the pulled uniform samples of a known population, by start: each
	 * chose members / population of what its back end listed in its
	 * range */
	[RSTMT_SAMPLE_SETS] =
	    "SELECT k.id, k.from_ns, k.to_ns, k.service, k.operation,"
	    " min(1.0, CAST((SELECT count(*) FROM trace_set_members c WHERE c.set_id = k.id)"
	    "  AS REAL) / k.population) FROM trace_sets k"
	    " WHERE k.kind = 'sample' AND k.population > 0 ORDER BY k.from_ns, k.id",
	/* the partial index on root starts, in start order: the server roots
	 * of one endpoint (a root whose route is not stored yet is left out:
	 * store_roots_unusual() counts them) */
	[RSTMT_ROOT_KEYS] =
	    "SELECT trace_key, start_ns, end_ns, queue_ns FROM spans"
	    " WHERE parent_id = '' AND start_ns >= ?3 AND start_ns < ?4 AND service = ?1"
	    " AND kind = 2 AND route_rule IS NOT NULL AND coalesce(route, name) = ?2"
	    NOT_POPULATION " ORDER BY start_ns",
	/* every root of a range, from the index alone (migration 13) */
	[RSTMT_ROOT_SCAN] =
	    "SELECT trace_key, start_ns, end_ns, queue_ns, service, coalesce(route, name),"
	    " route_rule, kind, status_code, id FROM spans"
	    " WHERE parent_id = '' AND start_ns >= ?1 AND start_ns < ?2" NOT_POPULATION
	    " ORDER BY start_ns",
	[RSTMT_ROUTE_OF] = "SELECT " STORE_ROUTE_COL("s") ", " STORE_ROUTE_RULE_COL("s")
	                   " FROM spans s WHERE s.id = ?1",
	[RSTMT_ROOTS_UNUSUAL] = "SELECT count(*) FROM spans WHERE parent_id = '' AND start_ns >= ?1"
	                        " AND start_ns < ?2 AND (kind <> 2 OR route_rule IS NULL)"
	                        NOT_POPULATION,
	[RSTMT_TRACE_KEY] = "SELECT " SPAN_COLS("''") " FROM spans s WHERE s.trace_key = ?1",
	/* the identity index, as RSTMT_SCAN_ALL walks it (never the rowid
	 * range and a sort of every row) */
	[RSTMT_KEY_RANGE] = "SELECT " SPAN_COLS("''") " FROM spans s INDEXED BY spans_identity"
	                    " WHERE s.trace_key >= ?1 AND s.trace_key < ?2 AND s.id <= ?3"
	                    " ORDER BY s.trace_key",
	[RSTMT_MAX_TRACE_KEY] = "SELECT coalesce(max(trace_key), 0) FROM spans",
	/* the partial index on root starts, without the rows */
	[RSTMT_ROOTS_COUNT] = ("SELECT count(*) FROM spans WHERE parent_id = ''"
	                       " AND start_ns >= ?1 AND start_ns < ?2" NOT_POPULATION),
	/* a traces row exists only with its first span (same transaction) */
	[RSTMT_STATS] =
	    "SELECT (SELECT count(*) FROM spans),"
	    " (SELECT count(*) FROM traces),"
	    " (SELECT count(*) FROM sources),"
	    " (SELECT coalesce(min(start_ns), 0) FROM spans),"
	    " (SELECT coalesce(max(end_ns), 0) FROM spans)",
};

int store_read_prepare(Store *st, Err *err)
{
	return store_prepare_all(st, rsql, RSTMT_COUNT, st->rstmt, err);
}

void store_read_finalize(Store *st)
{
	for (int i = 0; i < RSTMT_COUNT; i++)
		sqlite3_finalize(st->rstmt[i]);
}

/* fn_new, when given instead of fn, also gets column 20 (non-zero: a row
 * stored after the rowid the statement was given). */
static int run_scan_ex(Store *st, sqlite3_stmt *s, StoreSpanFn fn,
                       int (*fn_new)(void *ctx, const StoreSpanRow *row, int is_new), void *ctx,
                       int *stopped_out, Err *err)
{
	int rc;
	int stopped = 0;
	while (!stopped && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		StoreSpanRow r;
		r.trace_id = store_col_text(s, 0);
		r.span_id = store_col_text(s, 1);
		r.parent_id = store_col_text(s, 2);
		r.service = store_col_text(s, 3);
		r.host = store_col_text(s, 4);
		r.name = store_col_text(s, 5);
		r.kind = sqlite3_column_int(s, 6);
		r.start_ns = sqlite3_column_int64(s, 7);
		r.end_ns = sqlite3_column_int64(s, 8);
		r.status_code = sqlite3_column_int(s, 9);
		r.wclass = store_col_text(s, 10);
		r.has_queue = sqlite3_column_type(s, 11) != SQLITE_NULL;
		r.queue_ns = r.has_queue ? sqlite3_column_int64(s, 11) : 0;
		r.attrs_json = store_col_text(s, 12);
		r.events_json = store_col_text(s, 13);
		r.db_system = store_col_text(s, 14);
		r.peer = store_col_text(s, 15);
		r.trace_key = sqlite3_column_int64(s, 16);
		r.rowid = sqlite3_column_int64(s, 17);
		r.route = store_col_text(s, 18);
		r.route_rule = sqlite3_column_int(s, 19);
		stopped = fn_new ? fn_new(ctx, &r, sqlite3_column_int(s, 20)) : fn(ctx, &r);
	}
	if (stopped)
		rc = SQLITE_DONE;
	if (stopped_out)
		*stopped_out = stopped;
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (rc != SQLITE_DONE)
		return store_sqlerr(st, err, "reading spans");
	return 0;
}

static int run_scan(Store *st, sqlite3_stmt *s, StoreSpanFn fn, void *ctx, Err *err)
{
	return run_scan_ex(st, s, fn, NULL, ctx, NULL, err);
}

int store_run_scan(Store *st, sqlite3_stmt *s, StoreSpanFn fn, void *ctx, int *stopped, Err *err)
{
	return run_scan_ex(st, s, fn, NULL, ctx, stopped, err);
}

int store_spans_scan(Store *st, int64_t from_ns, int64_t to_ns, int flags, StoreSpanFn fn,
                     void *ctx, Err *err)
{
	int attrs = (flags & STORE_SPANS_ATTRS) != 0;
	if (from_ns == INT64_MIN && to_ns == INT64_MAX)
		return run_scan(st, st->rstmt[attrs ? RSTMT_SCAN_ALL_ATTRS : RSTMT_SCAN_ALL], fn, ctx,
		                err);
	sqlite3_stmt *s = st->rstmt[attrs ? RSTMT_SCAN_WINDOW_ATTRS : RSTMT_SCAN_WINDOW];
	sqlite3_bind_int64(s, 1, from_ns);
	sqlite3_bind_int64(s, 2, to_ns);
	return run_scan(st, s, fn, ctx, err);
}

int store_spans_scan_rooted(Store *st, int64_t from_ns, int64_t to_ns, StoreSpanFn fn,
                            void *ctx, Err *err)
{
	sqlite3_stmt *s = st->rstmt[RSTMT_SCAN_ROOTED];
	sqlite3_bind_int64(s, 1, from_ns);
	sqlite3_bind_int64(s, 2, to_ns);
	return run_scan(st, s, fn, ctx, err);
}

int store_spans_touched(Store *st, int64_t after_rowid,
                        int (*fn)(void *ctx, const StoreSpanRow *row, int is_new), void *ctx,
                        Err *err)
{
	sqlite3_stmt *s = st->rstmt[RSTMT_TOUCHED];
	sqlite3_bind_int64(s, 1, after_rowid);
	return run_scan_ex(st, s, NULL, fn, ctx, NULL, err);
}

int store_spans_touched_count(Store *st, int64_t after_rowid, int64_t *out, Err *err)
{
	*out = 0;
	sqlite3_stmt *s = st->rstmt[RSTMT_TOUCHED_COUNT];
	sqlite3_bind_int64(s, 1, after_rowid);
	int rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(s, 0);
	store_stmt_done(s);
	if (rc != SQLITE_ROW)
		return store_sqlerr(st, err, "counting the traces that changed");
	return 0;
}

int store_trace_scan(Store *st, const char *trace_id, StoreSpanFn fn, void *ctx, Err *err)
{
	sqlite3_stmt *s = st->rstmt[RSTMT_TRACE];
	sqlite3_bind_text(s, 1, trace_id, -1, SQLITE_STATIC);
	return run_scan(st, s, fn, ctx, err);
}

int store_stats(Store *st, StoreStats *out, Err *err)
{
	memset(out, 0, sizeof *out);
	sqlite3_stmt *s = st->rstmt[RSTMT_STATS];
	int rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		out->spans = sqlite3_column_int64(s, 0);
		out->traces = sqlite3_column_int64(s, 1);
		out->sources = sqlite3_column_int64(s, 2);
		out->min_start_ns = sqlite3_column_int64(s, 3);
		out->max_end_ns = sqlite3_column_int64(s, 4);
	}
	sqlite3_reset(s);
	if (rc != SQLITE_ROW)
		return store_sqlerr(st, err, "reading statistics");
	int64_t series = 0;
	return store_metric_counts(st, &series, &out->metric_points, &out->observations, err);
}

int store_sources_unrecognised(Store *st, int64_t *out, Err *err)
{
	*out = 0;
	sqlite3_stmt *s = st->rstmt[RSTMT_UNRECOGNISED];
	int rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	if (rc != SQLITE_ROW)
		return store_sqlerr(st, err, "counting unrecognised sources");
	return 0;
}

int store_root_operations(Store *st, int64_t from_ns, int64_t to_ns, StoreRootOpFn fn,
                          void *ctx, Err *err)
{
	sqlite3_stmt *s = st->rstmt[RSTMT_ROOT_OPS];
	sqlite3_bind_int64(s, 1, from_ns);
	sqlite3_bind_int64(s, 2, to_ns);
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (fn(ctx, store_col_text(s, 0), store_col_text(s, 1), sqlite3_column_int64(s, 2))) {
			rc = SQLITE_DONE;
			break;
		}
	}
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (rc != SQLITE_DONE)
		return store_sqlerr(st, err, "reading root operations");
	return 0;
}

int store_classes(Store *st, int (*fn)(void *ctx, const char *wclass), void *ctx, Err *err)
{
	sqlite3_stmt *s = NULL;
	if (sqlite3_prepare_v2(st->db,
	                       "SELECT DISTINCT wclass FROM spans WHERE wclass IS NOT NULL"
	                       " AND wclass <> '' ORDER BY 1",
	                       -1, &s, NULL) != SQLITE_OK)
		return store_sqlerr(st, err, "reading workload classes");
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (fn(ctx, store_col_text(s, 0))) {
			rc = SQLITE_DONE;
			break;
		}
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return store_sqlerr(st, err, "reading workload classes");
	return 0;
}

/* The one integer statement i gives (0 when it gives no row). */
static int one_int64(Store *st, int i, int64_t *out, const char *what, Err *err)
{
	sqlite3_stmt *s = st->rstmt[i];
	int rc = sqlite3_step(s);
	*out = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
	sqlite3_reset(s);
	if (rc != SQLITE_ROW)
		return store_sqlerr(st, err, what);
	return 0;
}

int store_spans_max_rowid(Store *st, int64_t *out, Err *err)
{
	return one_int64(st, RSTMT_MAX_ROWID, out, "reading span count", err);
}

int store_spans_since(Store *st, int64_t after_rowid, int64_t upto_rowid, StoreSpanFn fn,
                      void *ctx, Err *err)
{
	if (after_rowid <= 0 && upto_rowid == INT64_MAX)
		return run_scan(st, st->rstmt[RSTMT_SCAN_ALL], fn, ctx, err);
	sqlite3_stmt *s = st->rstmt[RSTMT_SINCE];
	sqlite3_bind_int64(s, 1, after_rowid);
	sqlite3_bind_int64(s, 2, upto_rowid);
	return run_scan(st, s, fn, ctx, err);
}

/* The endpoint (service, route) ?1 ?2 and the start range [?3, ?4)
 * of the statements about one endpoint's root spans. */
static void bind_endpoint_range(sqlite3_stmt *s, const char *service, const char *route,
                                int64_t from_ns, int64_t to_ns)
{
	sqlite3_bind_text(s, 1, service, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, route, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, from_ns);
	sqlite3_bind_int64(s, 4, to_ns);
}

int store_root_attrs(Store *st, const char *service, const char *route, int64_t from_ns,
                     int64_t to_ns, StoreRootAttrsFn fn, void *ctx, Err *err)
{
	sqlite3_stmt *s = st->rstmt[RSTMT_ROOT_ATTRS];
	bind_endpoint_range(s, service, route, from_ns, to_ns);
	int rc;
	int stopped = 0;
	while (!stopped && (rc = sqlite3_step(s)) == SQLITE_ROW)
		stopped = fn(ctx, store_col_text(s, 0), store_col_text(s, 1));
	if (stopped)
		rc = SQLITE_DONE;
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (rc != SQLITE_DONE)
		return store_sqlerr(st, err, "reading root span attributes");
	return 0;
}

/* A pulled uniform sample: its range, what it was pulled for, and the
 * share of what was listed there that it chose. */
typedef struct SampleSet {
	int64_t id, from_ns, to_ns;
	char *service, *operation;
	double p;
} SampleSet;

typedef struct SampleSets {
	SampleSet *v;              /* by from_ns */
	size_t n;
	uint64_t longest;          /* the longest range (unsigned: a range from
	                            * INT64_MIN to INT64_MAX fits) */
	int64_t *by_id;            /* ids ascending, and their index: pairs */
} SampleSets;

static void sample_sets_fini(SampleSets *ss)
{
	for (size_t i = 0; i < ss->n; i++) {
		free(ss->v[i].service);
		free(ss->v[i].operation);
	}
	free(ss->v);
	free(ss->by_id);
}

static int cmp_pair(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;
	return x[0] < y[0] ? -1 : x[0] > y[0];
}

static int sample_sets_load(Store *st, SampleSets *ss, Err *err)
{
	memset(ss, 0, sizeof *ss);
	sqlite3_stmt *s = st->rstmt[RSTMT_SAMPLE_SETS];
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (ss->n == cap) {
			cap = cap ? 2 * cap : 16;
			ss->v = xrealloc(ss->v, cap * sizeof *ss->v);
		}
		SampleSet *k = &ss->v[ss->n++];
		k->id = sqlite3_column_int64(s, 0);
		k->from_ns = sqlite3_column_int64(s, 1);
		k->to_ns = sqlite3_column_int64(s, 2);
		k->service = xstrdup(store_col_text(s, 3));
		k->operation = xstrdup(store_col_text(s, 4));
		k->p = sqlite3_column_double(s, 5);
		if (k->to_ns > k->from_ns && (uint64_t)k->to_ns - (uint64_t)k->from_ns > ss->longest)
			ss->longest = (uint64_t)k->to_ns - (uint64_t)k->from_ns;
	}
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return store_sqlerr(st, err, "reading the pulled samples");
	ss->by_id = xmalloc((ss->n ? ss->n : 1) * 2 * sizeof *ss->by_id);
	for (size_t i = 0; i < ss->n; i++) {
		ss->by_id[2 * i] = ss->v[i].id;
		ss->by_id[2 * i + 1] = (int64_t)i;
	}
	qsort(ss->by_id, ss->n, 2 * sizeof *ss->by_id, cmp_pair);
	return 0;
}

/* The index of sample set id, -1 when it is none (a slowest set, a
 * sample of unknown population). */
static int64_t sample_set_at(const SampleSets *ss, int64_t id)
{
	const int64_t *f = ss->n ? bsearch(&id, ss->by_id, ss->n, 2 * sizeof *ss->by_id, cmp_pair)
	                         : NULL;
	return f ? f[1] : -1;
}

/* Whether sample k could have chosen a root of service and route (or
 * span name) starting at start: its range holds the start, it was
 * pulled for that service and for any operation or that one. */
static int sample_covers(const SampleSet *k, int64_t start, const char *service,
                         const char *route, const char *name)
{
	return k->from_ns <= start && start < k->to_ns && strcmp(k->service, service) == 0 &&
	       (k->operation[0] == '\0' || strcmp(k->operation, route) == 0 ||
	        strcmp(k->operation, name) == 0);
}

/* The probability that a root of the sets listed in sets (comma
 * separated ids) starting at start was pulled: 1 - prod(1 - p) over the
 * samples that hold it and every other that could have chosen it
 * (sample_covers(): the overlapping rounds of pull --every), taken as
 * independent draws (docs/live.md, "Overlapping samples"); -1 when no
 * sample holds it. Counting only the samples that hold it, a root of an
 * overlap chosen by one round would stand for 1 / p requests where the
 * rounds together chose more than p of them. */
static double pulled_p(const SampleSets *ss, const char *sets, int64_t start,
                       const char *service, const char *route, const char *name)
{
	double miss = 1;
	int member = 0;
	for (const char *c = sets; *c;) {
		char *end;
		long long id = strtoll(c, &end, 10);
		if (end == c)
			break;
		int64_t at = sample_set_at(ss, id);
		if (at >= 0) {
			const SampleSet *k = &ss->v[at];
			member = 1;
			if (!sample_covers(k, start, service, route, name))
				miss *= 1 - k->p; /* else counted below */
		}
		c = *end == ',' ? end + 1 : end;
	}
	if (!member)
		return -1;
	/* the samples whose ranges can hold start: from_ns in
	 * (start - longest, start], the difference taken unsigned (times
	 * read from the database may be anywhere in int64) */
	size_t lo = 0, hi = ss->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ss->v[mid].from_ns <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0 && (uint64_t)start - (uint64_t)ss->v[i].from_ns < ss->longest;)
		if (sample_covers(&ss->v[i], start, service, route, name))
			miss *= 1 - ss->v[i].p;
	return 1 - miss;
}

int store_root_sampling(Store *st, const char *service, const char *route, int64_t from_ns,
                        int64_t to_ns, int64_t max_roots, StoreSamplingFn fn, void *ctx,
                        Err *err)
{
	SampleSets ss;
	if (sample_sets_load(st, &ss, err)) {
		sample_sets_fini(&ss);
		return TT_ESTORE;
	}
	sqlite3_stmt *s = st->rstmt[RSTMT_ROOT_SAMPLING];
	bind_endpoint_range(s, service, route, from_ns, to_ns);
	sqlite3_bind_int64(s, 5, max_roots > 0 ? max_roots : -1);
	int rc;
	int stopped = 0;
	while (!stopped && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		double p = pulled_p(&ss, store_col_text(s, 6), sqlite3_column_int64(s, 4), service,
		                    route, store_col_text(s, 5));
		StoreSamplingRow r = {
		    .trace_state = store_col_text(s, 0),
		    .sampler_type = sqlite3_column_type(s, 1) == SQLITE_NULL ? NULL : store_col_text(s, 1),
		    .has_param = sqlite3_column_type(s, 2) != SQLITE_NULL,
		    .param = sqlite3_column_double(s, 2),
		    .has_priority = sqlite3_column_type(s, 3) != SQLITE_NULL,
		    .priority = sqlite3_column_double(s, 3),
		    .has_pulled = p >= 0,
		    .pulled = p >= 0 ? p : 0,
		    .roots = 1,
		};
		stopped = fn(ctx, &r);
	}
	if (stopped)
		rc = SQLITE_DONE;
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	sample_sets_fini(&ss);
	if (rc != SQLITE_DONE)
		return store_sqlerr(st, err, "reading the root spans' sampling");
	return 0;
}

int store_root_scan(Store *st, int64_t from_ns, int64_t to_ns, StoreRootKeyFn fn, void *ctx,
                    Err *err)
{
	sqlite3_stmt *s = st->rstmt[RSTMT_ROOT_SCAN];
	sqlite3_bind_int64(s, 1, from_ns);
	sqlite3_bind_int64(s, 2, to_ns);
	int rc, stop = 0;
	Buf route;
	buf_init(&route);
	while (!stop && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		StoreRootKey k = {
		    .trace_key = sqlite3_column_int64(s, 0), .start_ns = sqlite3_column_int64(s, 1),
		    .end_ns = sqlite3_column_int64(s, 2),
		    .has_queue = sqlite3_column_type(s, 3) != SQLITE_NULL,
		    .service = store_col_text(s, 4), .route = store_col_text(s, 5),
		    .route_rule = sqlite3_column_int(s, 6), .kind = sqlite3_column_int(s, 7),
		    .status_code = sqlite3_column_int(s, 8),
		};
		k.queue_ns = k.has_queue ? sqlite3_column_int64(s, 3) : 0;
		if (sqlite3_column_type(s, 6) == SQLITE_NULL) {
			/* stored before routes were (migration 13): from its attributes */
			sqlite3_stmt *r = st->rstmt[RSTMT_ROUTE_OF];
			sqlite3_bind_int64(r, 1, sqlite3_column_int64(s, 9));
			int rr = sqlite3_step(r);
			if (rr == SQLITE_ROW) {
				buf_reset(&route);
				buf_adds(&route, store_col_text(r, 0));
				k.route = buf_str(&route);
				k.route_rule = sqlite3_column_int(r, 1);
			}
			store_stmt_done(r);
			if (rr != SQLITE_ROW) {
				rc = rr;
				break;
			}
		}
		stop = fn(ctx, &k);
	}
	buf_fini(&route);
	if (stop)
		rc = SQLITE_DONE;
	store_stmt_done(s);
	if (rc != SQLITE_DONE)
		return store_sqlerr(st, err, "reading root spans");
	return 0;
}

int store_roots_unusual(Store *st, int64_t from_ns, int64_t to_ns, int64_t *out, Err *err)
{
	sqlite3_bind_int64(st->rstmt[RSTMT_ROOTS_UNUSUAL], 1, from_ns);
	sqlite3_bind_int64(st->rstmt[RSTMT_ROOTS_UNUSUAL], 2, to_ns);
	return one_int64(st, RSTMT_ROOTS_UNUSUAL, out, "counting root spans", err);
}

int store_root_keys(Store *st, const char *service, const char *route, int64_t from_ns,
                    int64_t to_ns, StoreRootKeyFn fn, void *ctx, Err *err)
{
	sqlite3_stmt *s = st->rstmt[RSTMT_ROOT_KEYS];
	bind_endpoint_range(s, service, route, from_ns, to_ns);
	return store_step_root_keys(st, s, fn, ctx, "reading root spans", err);
}

int store_step_root_keys(Store *st, sqlite3_stmt *s, StoreRootKeyFn fn, void *ctx,
                         const char *what, Err *err)
{
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		StoreRootKey k = {
		    .trace_key = sqlite3_column_int64(s, 0), .start_ns = sqlite3_column_int64(s, 1),
		    .end_ns = sqlite3_column_int64(s, 2),
		    .has_queue = sqlite3_column_type(s, 3) != SQLITE_NULL,
		};
		k.queue_ns = k.has_queue ? sqlite3_column_int64(s, 3) : 0;
		if (fn(ctx, &k)) {
			rc = SQLITE_DONE;
			break;
		}
	}
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (rc != SQLITE_DONE)
		return store_sqlerr(st, err, what);
	return 0;
}

int store_trace_key_max(Store *st, int64_t *out, Err *err)
{
	return one_int64(st, RSTMT_MAX_TRACE_KEY, out, "reading the largest trace key", err);
}

int store_roots_count(Store *st, int64_t from_ns, int64_t to_ns, int64_t *out, Err *err)
{
	sqlite3_bind_int64(st->rstmt[RSTMT_ROOTS_COUNT], 1, from_ns);
	sqlite3_bind_int64(st->rstmt[RSTMT_ROOTS_COUNT], 2, to_ns);
	return one_int64(st, RSTMT_ROOTS_COUNT, out, "counting root spans", err);
}

const char *store_path(const Store *st)
{
	return st->path ? st->path : "";
}

int store_in_transaction(const Store *st)
{
	return !sqlite3_get_autocommit(st->db);
}

