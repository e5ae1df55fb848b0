/*
 * store_sets.c - the trace sets a pull chose from a back end (store.h,
 * "trace sets"): which traces are the slowest N of a window and which are
 * a uniform sample of a range.
 *
 * Invariants:
 *  - the tables come from migration 12 of store.c; statements live in
 *    st->sstmt and are prepared on first use, so a read-only connection to
 *    an older database still opens (and finds no set: see store_trace_sets);
 *  - a set is unique on (kind, role, from_ns, to_ns, source, service,
 *    operation), a member on (set, trace id): a second pull adds nothing.
 */
#include "store.h"
#include "store_priv.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { S_FIND, S_ADD, S_UPDATE, S_MEMBER, S_LIST, S_KNOWN, S_HAS_TABLE, S_EXCLUDE, S_INCLUDE,
       S_NOT_POP, S_TAIL_KEYS, S_TAIL_INFO, S_EXACT, S_TOP_ROOTS,
       S_COUNT };

_Static_assert(S_COUNT <= STORE_SETS_STMTS, "raise STORE_SETS_STMTS");

static const char *const ssql[S_COUNT] = {
	[S_FIND] = "SELECT id FROM trace_sets WHERE kind = ?1 AND role = ?2 AND from_ns = ?3"
	           " AND to_ns = ?4 AND source = ?5 AND service = ?6 AND operation = ?7",
	[S_ADD] = "INSERT INTO trace_sets(kind, role, from_ns, to_ns, source, service, operation,"
	          " requested, population, created_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
	[S_UPDATE] = "UPDATE trace_sets SET requested = ?2, population = ?3 WHERE id = ?1",
	[S_MEMBER] = "INSERT OR IGNORE INTO trace_set_members(set_id, trace_id) VALUES (?1, ?2)",
	[S_LIST] = "SELECT s.id, s.kind, s.role, s.from_ns, s.to_ns, s.requested, s.population,"
	           " s.source, s.service, s.operation, s.created_ms,"
	           " (SELECT count(*) FROM trace_set_members m WHERE m.set_id = s.id)"
	           " FROM trace_sets s ORDER BY s.id",
	[S_KNOWN] = "SELECT 1 FROM spans WHERE trace_id = ?1 LIMIT 1",
	[S_HAS_TABLE] = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'trace_sets'",
	/* a member of a slowest set is out of the population unless a sample
	 * holds it; a member of a sample is in */
	[S_EXCLUDE] = "INSERT OR IGNORE INTO traces_not_population(trace_key)"
	              " SELECT t.id FROM traces t JOIN trace_sets s ON s.id = ?1"
	              " WHERE t.trace_id = ?2 AND s.kind = 'slowest'"
	              " AND NOT EXISTS (SELECT 1 FROM trace_set_members m JOIN trace_sets k"
	              " ON k.id = m.set_id WHERE m.trace_id = ?2 AND k.kind = 'sample')",
	[S_NOT_POP] = "SELECT trace_key FROM traces_not_population ORDER BY trace_key",
	[S_INCLUDE] = "DELETE FROM traces_not_population"
	              " WHERE trace_key = (SELECT id FROM traces WHERE trace_id = ?2)"
	              " AND EXISTS (SELECT 1 FROM trace_sets s WHERE s.id = ?1 AND s.kind = 'sample')",
	/* the members of the slowest sets whose range covers [?1, ?2): each
	 * is the complete top of that range, so within [?1, ?2) too */
	[S_TAIL_KEYS] = "SELECT DISTINCT t.id FROM trace_sets s JOIN trace_set_members m ON m.set_id = s.id"
	                " JOIN traces t ON t.trace_id = m.trace_id WHERE s.kind = 'slowest'"
	                " AND s.from_ns <= ?1 AND s.to_ns >= ?2 ORDER BY t.id",
	[S_TAIL_INFO] = "SELECT count(*), coalesce(max(requested), 0), coalesce(min(population), -1),"
	                " coalesce(max(population), -1) FROM trace_sets WHERE kind = 'slowest'"
	                " AND from_ns <= ?1 AND to_ns >= ?2",
	/* the slowest set pulled for exactly this range of one entry span
	 * name of the service: the one named as the route first, then the
	 * latest */
	[S_EXACT] = "SELECT s.population, s.requested,"
	            " (SELECT count(*) FROM trace_set_members m WHERE m.set_id = s.id), s.operation"
	            " FROM trace_sets s WHERE s.kind = 'slowest' AND s.from_ns = ?1 AND s.to_ns = ?2"
	            " AND s.service = ?3 AND s.operation <> ''"
	            " ORDER BY s.operation = ?4 DESC, s.id DESC LIMIT 1",
	/* the entry spans of the endpoint among the slowest sets covering
	 * [?1, ?2), once a trace */
	[S_TOP_ROOTS] = "SELECT sp.trace_key, sp.start_ns, sp.end_ns, sp.queue_ns FROM spans sp"
	                " WHERE sp.trace_id IN (SELECT m.trace_id FROM trace_set_members m"
	                " JOIN trace_sets s ON s.id = m.set_id WHERE s.kind = 'slowest'"
	                " AND s.from_ns <= ?1 AND s.to_ns >= ?2)"
	                " AND sp.parent_id = '' AND sp.service = ?3 AND sp.kind = 2"
	                " AND coalesce(sp.route, sp.name) = ?4 AND sp.start_ns >= ?1 AND sp.start_ns < ?2"
	                " GROUP BY sp.trace_key",
};

void store_sets_finalize(Store *st)
{
	store_stmts_finalize(st->sstmt, STORE_SETS_STMTS);
}

static sqlite3_stmt *sstmt(Store *st, int i, Err *err)
{
	return store_stmt_lazy(st, &st->sstmt[i], ssql[i], "a trace set statement", err);
}

static int done_step(Store *st, sqlite3_stmt *s, Err *err, const char *what)
{
	int rc = sqlite3_step(s);
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (rc != SQLITE_DONE)
		return store_sqlerr(st, err, what);
	return 0;
}

int store_trace_set_intern(Store *st, const StoreTraceSet *set, int64_t *id, Err *err)
{
	sqlite3_stmt *s = sstmt(st, S_FIND, err);
	if (s == NULL)
		return TT_ESTORE;
	const char *op = store_nz(set->operation);
	sqlite3_bind_text(s, 1, set->kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, set->role, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, set->from_ns);
	sqlite3_bind_int64(s, 4, set->to_ns);
	sqlite3_bind_text(s, 5, store_nz(set->source), -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 6, store_nz(set->service), -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 7, op, -1, SQLITE_STATIC);
	int rc = sqlite3_step(s);
	int64_t found = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_sqlerr(st, err, "finding a trace set");
	if (found) {
		*id = found;
		if ((s = sstmt(st, S_UPDATE, err)) == NULL)
			return TT_ESTORE;
		sqlite3_bind_int64(s, 1, found);
		sqlite3_bind_int64(s, 2, set->requested);
		sqlite3_bind_int64(s, 3, set->population);
		return done_step(st, s, err, "updating a trace set");
	}
	if ((s = sstmt(st, S_ADD, err)) == NULL)
		return TT_ESTORE;
	sqlite3_bind_text(s, 1, set->kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, set->role, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, set->from_ns);
	sqlite3_bind_int64(s, 4, set->to_ns);
	sqlite3_bind_text(s, 5, store_nz(set->source), -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 6, store_nz(set->service), -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 7, op, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 8, set->requested);
	sqlite3_bind_int64(s, 9, set->population);
	sqlite3_bind_int64(s, 10, set->created_ms);
	if (done_step(st, s, err, "adding a trace set"))
		return TT_ESTORE;
	*id = sqlite3_last_insert_rowid(st->db);
	return 0;
}

int store_trace_set_add(Store *st, int64_t set_id, const char *trace_id, int *added, Err *err)
{
	return store_trace_set_add_ex(st, set_id, trace_id, added, NULL, err);
}

int store_trace_set_add_ex(Store *st, int64_t set_id, const char *trace_id, int *added,
                           int *moved, Err *err)
{
	if (moved)
		*moved = 0;
	sqlite3_stmt *s = sstmt(st, S_MEMBER, err);
	if (s == NULL)
		return TT_ESTORE;
	sqlite3_bind_int64(s, 1, set_id);
	sqlite3_bind_text(s, 2, trace_id, -1, SQLITE_STATIC);
	if (done_step(st, s, err, "adding a trace to a set"))
		return TT_ESTORE;
	if (added)
		*added = sqlite3_changes(st->db) > 0;
	for (int i = S_EXCLUDE; i <= S_INCLUDE; i++) {
		if ((s = sstmt(st, i, err)) == NULL)
			return TT_ESTORE;
		sqlite3_bind_int64(s, 1, set_id);
		sqlite3_bind_text(s, 2, trace_id, -1, SQLITE_STATIC);
		if (done_step(st, s, err, "keeping the population of the trace sets"))
			return TT_ESTORE;
		if (moved && sqlite3_changes(st->db) > 0)
			*moved = 1;
	}
	return 0;
}

/* *has = 0 for a database from before migration 12 (read-only: it was
 * not migrated): no set. A query that fails (a lock held by another
 * process, an I/O error) is an error, never "no set": read as none, the
 * pulled slowest traces would count in the population. */
static int has_sets(Store *st, int *has, Err *err)
{
	sqlite3_stmt *h = sstmt(st, S_HAS_TABLE, err);
	if (h == NULL)
		return TT_ESTORE;
	int rc = sqlite3_step(h);
	*has = rc == SQLITE_ROW;
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		int e = store_sqlerr(st, err, "looking for the trace sets' tables");
		sqlite3_reset(h);
		return e;
	}
	sqlite3_reset(h);
	return 0;
}

static const char *col_text(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);
	return t ? (const char *)t : "";
}

int store_trace_sets(Store *st, StoreTraceSetFn fn, void *ctx, Err *err)
{
	int has;
	if (has_sets(st, &has, err))
		return TT_ESTORE;
	if (!has)
		return 0;
	sqlite3_stmt *s = sstmt(st, S_LIST, err);
	if (s == NULL)
		return TT_ESTORE;
	int rc, stop = 0;
	while (!stop && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		StoreTraceSet t = {
			.id = sqlite3_column_int64(s, 0),
			.kind = col_text(s, 1),
			.role = col_text(s, 2),
			.from_ns = sqlite3_column_int64(s, 3),
			.to_ns = sqlite3_column_int64(s, 4),
			.requested = sqlite3_column_int64(s, 5),
			.population = sqlite3_column_int64(s, 6),
			.source = col_text(s, 7),
			.service = col_text(s, 8),
			.operation = col_text(s, 9),
			.created_ms = sqlite3_column_int64(s, 10),
			.members = sqlite3_column_int64(s, 11),
		};
		stop = fn(ctx, &t);
	}
	if (stop)
		rc = SQLITE_DONE;
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return store_sqlerr(st, err, "listing trace sets");
	return 0;
}

int store_traces_not_population(Store *st, int64_t **keys, size_t *n, Err *err)
{
	*keys = NULL;
	*n = 0;
	int has;
	if (has_sets(st, &has, err))
		return TT_ESTORE;
	if (!has)
		return 0;
	sqlite3_stmt *s = sstmt(st, S_NOT_POP, err);
	if (s == NULL)
		return TT_ESTORE;
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			*keys = xrealloc(*keys, cap * sizeof **keys);
		}
		(*keys)[(*n)++] = sqlite3_column_int64(s, 0);
	}
	sqlite3_reset(s);
	if (rc != SQLITE_DONE) {
		free(*keys);
		*keys = NULL;
		*n = 0;
		return store_sqlerr(st, err, "reading the traces out of the population");
	}
	return 0;
}

int store_trace_known(Store *st, const char *trace_id, int *known, Err *err)
{
	sqlite3_stmt *s = sstmt(st, S_KNOWN, err);
	if (s == NULL)
		return TT_ESTORE;
	sqlite3_bind_text(s, 1, trace_id, -1, SQLITE_STATIC);
	int rc = sqlite3_step(s);
	*known = rc == SQLITE_ROW;
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_sqlerr(st, err, "looking up a trace");
	return 0;
}

int store_tail_keys(Store *st, int64_t from_ns, int64_t to_ns, int64_t **keys, size_t *n,
                    StoreTailInfo *info, Err *err)
{
	*keys = NULL;
	*n = 0;
	memset(info, 0, sizeof *info);
	info->population_min = info->population_max = -1;
	int has;
	if (has_sets(st, &has, err))
		return TT_ESTORE;
	if (!has || from_ns == INT64_MIN || to_ns == INT64_MAX)
		return 0; /* no set, or an open range no set can cover */
	sqlite3_stmt *s = sstmt(st, S_TAIL_INFO, err);
	if (s == NULL)
		return TT_ESTORE;
	sqlite3_bind_int64(s, 1, from_ns);
	sqlite3_bind_int64(s, 2, to_ns);
	int rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		info->sets = sqlite3_column_int64(s, 0);
		info->requested = sqlite3_column_int64(s, 1);
		info->population_min = sqlite3_column_int64(s, 2);
		info->population_max = sqlite3_column_int64(s, 3);
	}
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (rc != SQLITE_ROW)
		return store_sqlerr(st, err, "reading the slowest sets");
	if (info->sets == 0)
		return 0;
	if ((s = sstmt(st, S_TAIL_KEYS, err)) == NULL)
		return TT_ESTORE;
	sqlite3_bind_int64(s, 1, from_ns);
	sqlite3_bind_int64(s, 2, to_ns);
	size_t cap = 0;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			*keys = xrealloc(*keys, cap * sizeof **keys);
		}
		(*keys)[(*n)++] = sqlite3_column_int64(s, 0);
	}
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (rc != SQLITE_DONE) {
		free(*keys);
		*keys = NULL;
		*n = 0;
		return store_sqlerr(st, err, "reading the slowest sets' traces");
	}
	return 0;
}

int store_slowest_exact(Store *st, const char *service, const char *operation, int64_t from_ns,
                        int64_t to_ns, StoreSlowestSet *out, Err *err)
{
	memset(out, 0, sizeof *out);
	out->population = -1;
	int has;
	if (has_sets(st, &has, err))
		return TT_ESTORE;
	if (!has || service == NULL || operation == NULL)
		return 0;
	sqlite3_stmt *s = sstmt(st, S_EXACT, err);
	if (s == NULL)
		return TT_ESTORE;
	sqlite3_bind_int64(s, 1, from_ns);
	sqlite3_bind_int64(s, 2, to_ns);
	sqlite3_bind_text(s, 3, service, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, operation, -1, SQLITE_STATIC);
	int rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		out->found = 1;
		out->population = sqlite3_column_int64(s, 0);
		out->requested = sqlite3_column_int64(s, 1);
		out->members = sqlite3_column_int64(s, 2);
		snprintf(out->operation, sizeof out->operation, "%s", col_text(s, 3));
	}
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_sqlerr(st, err, "reading a slowest set");
	return 0;
}

int store_slowest_roots(Store *st, const char *service, const char *route, int64_t from_ns,
                        int64_t to_ns, StoreRootKeyFn fn, void *ctx, Err *err)
{
	int has;
	if (has_sets(st, &has, err))
		return TT_ESTORE;
	if (!has)
		return 0;
	sqlite3_stmt *s = sstmt(st, S_TOP_ROOTS, err);
	if (s == NULL)
		return TT_ESTORE;
	sqlite3_bind_int64(s, 1, from_ns);
	sqlite3_bind_int64(s, 2, to_ns);
	sqlite3_bind_text(s, 3, service, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, route, -1, SQLITE_STATIC);
	return store_step_root_keys(st, s, fn, ctx, "reading the slowest sets' entry spans", err);
}
