/*
 * store_agg.c - the aggregate tables (migration 7 of store.c): nodes,
 * cells, and how far they cover the spans; and the commit hook that keeps
 * them in step.
 *
 * The store only keeps these rows: what goes in them (trace trees,
 * client/server pairing, splits, sketches) is analysis/agg.c's, run
 * through the hook inside the writer's transaction, so the cells always
 * commit with the spans they describe. Statements are prepared on first
 * use: a reader that never asks for aggregates prepares none.
 */
#include "store.h"
#include "store_priv.h"

#include <stdatomic.h>

enum {
	ASTMT_COVERED,
	ASTMT_SET_COVERED,
	ASTMT_NODE_FIND,
	ASTMT_NODE_ADD,
	ASTMT_NODE_SET,
	ASTMT_DELETE,
	ASTMT_PUT,
	ASTMT_SCAN,
	ASTMT_GET,
	ASTMT_REMOVE,
};

static const char *const asql[STORE_AGG_STMTS] = {
	[ASTMT_COVERED] = "SELECT covered FROM agg_meta WHERE id = 1",
	[ASTMT_SET_COVERED] = "UPDATE agg_meta SET covered = ?1 WHERE id = 1",
	[ASTMT_NODE_FIND] = "SELECT id, dependency IS NULL, db_system IS NULL, peer IS NULL"
	                    " FROM agg_nodes WHERE parent = ?1 AND type = ?2 AND service = ?3"
	                    " AND operation = ?4 AND callee = ?5",
	[ASTMT_NODE_ADD] = "INSERT INTO agg_nodes(parent, type, service, operation, dependency,"
	                   " db_system, peer, callee) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	[ASTMT_NODE_SET] = "UPDATE agg_nodes SET dependency = coalesce(dependency, ?2),"
	                   " db_system = coalesce(db_system, ?3), peer = coalesce(peer, ?4)"
	                   " WHERE id = ?1",
	[ASTMT_DELETE] = "DELETE FROM agg_cells WHERE minute >= ?1 AND minute < ?2",
	[ASTMT_PUT] = "INSERT OR REPLACE INTO agg_cells(minute, node, comp, wclass, host, n,"
	              " requests, unknown, db, par_votes, ser_votes, off_ns, errors, sketch)"
	              " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
	[ASTMT_SCAN] = "SELECT minute, node, comp, wclass, host, n, requests, unknown, db,"
	               " par_votes, ser_votes, off_ns, errors, sketch FROM agg_cells"
	               " WHERE minute >= ?1 AND minute < ?2",
	[ASTMT_GET] = "SELECT n, requests, unknown, db, par_votes, ser_votes, off_ns, errors, sketch"
	              " FROM agg_cells WHERE minute = ?1 AND node = ?2 AND comp = ?3 AND wclass = ?4"
	              " AND host = ?5",
	[ASTMT_REMOVE] = "DELETE FROM agg_cells WHERE minute = ?1 AND node = ?2 AND comp = ?3"
	                 " AND wclass = ?4 AND host = ?5",
};

static _Atomic(StoreCommitHook) commit_hook;

void store_set_commit_hook(StoreCommitHook fn)
{
	atomic_store(&commit_hook, fn);
}

int store_run_commit_hook(Store *st, int bulk_end, Err *err)
{
	StoreCommitHook fn = atomic_load(&commit_hook);
	if (fn == NULL || (st->bulk && !bulk_end) || sqlite3_db_readonly(st->db, "main") != 0)
		return 0;
	return fn(st, err);
}

int store_agg_batch_begin(Store *st, Err *err)
{
	return store_exec(st, "SAVEPOINT agg_batch", err);
}

int store_agg_batch_end(Store *st, int ok, Err *err)
{
	if (!ok) {
		store_exec(st, "ROLLBACK TO agg_batch", NULL);
		store_exec(st, "RELEASE agg_batch", NULL);
		return 0;
	}
	return store_exec(st, "RELEASE agg_batch", err);
}

void store_agg_finalize(Store *st)
{
	store_stmts_finalize(st->astmt, STORE_AGG_STMTS);
}

static sqlite3_stmt *stmt(Store *st, int i, Err *err)
{
	return store_stmt_lazy(st, &st->astmt[i], asql[i], "an aggregate statement", err);
}

int64_t store_agg_minute(int64_t ns)
{
	int64_t q = ns / STORE_AGG_MINUTE_NS;
	return (ns % STORE_AGG_MINUTE_NS < 0) ? q - 1 : q;
}

int store_agg_covered(Store *st, int64_t *out, Err *err)
{
	*out = 0;
	sqlite3_stmt *s = stmt(st, ASTMT_COVERED, err);
	if (s == NULL)
		return TT_ESTORE;
	int rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(s, 0);
	store_stmt_done(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_sqlerr(st, err, "reading the aggregates' coverage");
	return 0;
}

static int run_done(Store *st, sqlite3_stmt *s, Err *err, const char *what)
{
	int rc = sqlite3_step(s);
	store_stmt_done(s);
	if (rc != SQLITE_DONE)
		return store_sqlerr(st, err, what);
	return 0;
}

int store_agg_set_covered(Store *st, int64_t rowid, Err *err)
{
	sqlite3_stmt *s = stmt(st, ASTMT_SET_COVERED, err);
	if (s == NULL)
		return TT_ESTORE;
	sqlite3_bind_int64(s, 1, rowid);
	return run_done(st, s, err, "recording the aggregates' coverage");
}

/* Binds a string that may be NULL or "" as NULL. */
static void bind_opt(sqlite3_stmt *s, int i, const char *v)
{
	if (v && *v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, i);
}

int store_agg_node(Store *st, const StoreAggNode *n, int64_t *id, Err *err)
{
	*id = 0;
	const char *dependency = n->dependency, *db_system = n->db_system, *peer = n->peer;
	sqlite3_stmt *f = stmt(st, ASTMT_NODE_FIND, err);
	if (f == NULL)
		return TT_ESTORE;
	sqlite3_bind_int64(f, 1, n->parent);
	sqlite3_bind_int(f, 2, n->type);
	sqlite3_bind_text(f, 3, n->service, -1, SQLITE_STATIC);
	sqlite3_bind_text(f, 4, n->operation, -1, SQLITE_STATIC);
	sqlite3_bind_text(f, 5, store_nz(n->callee), -1, SQLITE_STATIC);
	int rc = sqlite3_step(f);
	int missing = 0;
	if (rc == SQLITE_ROW) {
		*id = sqlite3_column_int64(f, 0);
		missing = (sqlite3_column_int(f, 1) && dependency && *dependency) ||
		          (sqlite3_column_int(f, 2) && db_system && *db_system) ||
		          (sqlite3_column_int(f, 3) && peer && *peer);
	}
	store_stmt_done(f);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_sqlerr(st, err, "finding an aggregate node");
	if (rc == SQLITE_ROW) {
		if (!missing)
			return 0;
		sqlite3_stmt *u = stmt(st, ASTMT_NODE_SET, err);
		if (u == NULL)
			return TT_ESTORE;
		sqlite3_bind_int64(u, 1, *id);
		bind_opt(u, 2, dependency);
		bind_opt(u, 3, db_system);
		bind_opt(u, 4, peer);
		return run_done(st, u, err, "naming an aggregate node");
	}
	sqlite3_stmt *a = stmt(st, ASTMT_NODE_ADD, err);
	if (a == NULL)
		return TT_ESTORE;
	sqlite3_bind_int64(a, 1, n->parent);
	sqlite3_bind_int(a, 2, n->type);
	sqlite3_bind_text(a, 3, n->service, -1, SQLITE_STATIC);
	sqlite3_bind_text(a, 4, n->operation, -1, SQLITE_STATIC);
	bind_opt(a, 5, dependency);
	bind_opt(a, 6, db_system);
	bind_opt(a, 7, peer);
	sqlite3_bind_text(a, 8, store_nz(n->callee), -1, SQLITE_STATIC);
	if (run_done(st, a, err, "adding an aggregate node"))
		return TT_ESTORE;
	*id = sqlite3_last_insert_rowid(st->db);
	return 0;
}

int store_agg_nodes_scan(Store *st, int (*fn)(void *ctx, const StoreAggNode *n), void *ctx,
                         Err *err)
{
	sqlite3_stmt *s = NULL;
	if (sqlite3_prepare_v2(st->db,
	                       "SELECT id, parent, type, service, operation, dependency, db_system,"
	                       " peer, callee FROM agg_nodes ORDER BY id",
	                       -1, &s, NULL) != SQLITE_OK)
		return store_sqlerr(st, err, "reading aggregate nodes");
	int rc, stop = 0;
	while (!stop && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		StoreAggNode n = {
		    .id = sqlite3_column_int64(s, 0), .parent = sqlite3_column_int64(s, 1),
		    .type = sqlite3_column_int(s, 2), .service = store_col_text(s, 3),
		    .operation = store_col_text(s, 4), .dependency = store_col_text(s, 5),
		    .db_system = store_col_text(s, 6), .peer = store_col_text(s, 7),
		    .callee = store_col_text(s, 8),
		};
		stop = fn(ctx, &n);
	}
	if (stop)
		rc = SQLITE_DONE;
	int e = rc != SQLITE_DONE ? store_sqlerr(st, err, "reading aggregate nodes") : 0;
	sqlite3_finalize(s);
	return e;
}

int store_agg_delete(Store *st, int64_t minute_from, int64_t minute_to, Err *err)
{
	sqlite3_stmt *s = stmt(st, ASTMT_DELETE, err);
	if (s == NULL)
		return TT_ESTORE;
	sqlite3_bind_int64(s, 1, minute_from);
	sqlite3_bind_int64(s, 2, minute_to);
	return run_done(st, s, err, "removing aggregate cells");
}

int store_agg_put(Store *st, const StoreAggCell *c, Err *err)
{
	sqlite3_stmt *s = stmt(st, ASTMT_PUT, err);
	if (s == NULL)
		return TT_ESTORE;
	sqlite3_bind_int64(s, 1, c->minute);
	sqlite3_bind_int64(s, 2, c->node);
	sqlite3_bind_int(s, 3, c->comp);
	sqlite3_bind_text(s, 4, store_nz(c->wclass), -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 5, store_nz(c->host), -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 6, c->n);
	sqlite3_bind_int64(s, 7, c->requests);
	sqlite3_bind_int64(s, 8, c->unknown);
	sqlite3_bind_int64(s, 9, c->db);
	sqlite3_bind_int64(s, 10, c->par_votes);
	sqlite3_bind_int64(s, 11, c->ser_votes);
	sqlite3_bind_int64(s, 12, c->off_ns);
	sqlite3_bind_int64(s, 13, c->errors);
	sqlite3_bind_blob(s, 14, c->sketch, (int)c->sketch_len, SQLITE_STATIC);
	return run_done(st, s, err, "storing an aggregate cell");
}

static void bind_key(sqlite3_stmt *s, const StoreAggCell *c)
{
	sqlite3_bind_int64(s, 1, c->minute);
	sqlite3_bind_int64(s, 2, c->node);
	sqlite3_bind_int(s, 3, c->comp);
	sqlite3_bind_text(s, 4, store_nz(c->wclass), -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 5, store_nz(c->host), -1, SQLITE_STATIC);
}

int store_agg_get(Store *st, StoreAggCell *c, Buf *sketch, int *found, Err *err)
{
	*found = 0;
	sqlite3_stmt *s = stmt(st, ASTMT_GET, err);
	if (s == NULL)
		return TT_ESTORE;
	bind_key(s, c);
	int rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		*found = 1;
		c->n = sqlite3_column_int64(s, 0);
		c->requests = sqlite3_column_int64(s, 1);
		c->unknown = sqlite3_column_int64(s, 2);
		c->db = sqlite3_column_int64(s, 3);
		c->par_votes = sqlite3_column_int64(s, 4);
		c->ser_votes = sqlite3_column_int64(s, 5);
		c->off_ns = sqlite3_column_int64(s, 6);
		c->errors = sqlite3_column_int64(s, 7);
		buf_reset(sketch);
		const void *p = sqlite3_column_blob(s, 8);
		int len = sqlite3_column_bytes(s, 8);
		if (p && len > 0)
			buf_add(sketch, p, (size_t)len);
		c->sketch = sketch->p;
		c->sketch_len = sketch->len;
	}
	store_stmt_done(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_sqlerr(st, err, "reading an aggregate cell");
	return 0;
}

int store_agg_remove(Store *st, const StoreAggCell *c, Err *err)
{
	sqlite3_stmt *s = stmt(st, ASTMT_REMOVE, err);
	if (s == NULL)
		return TT_ESTORE;
	bind_key(s, c);
	return run_done(st, s, err, "removing an aggregate cell");
}

int store_agg_scan(Store *st, int64_t minute_from, int64_t minute_to,
                   int (*fn)(void *ctx, const StoreAggCell *c), void *ctx, Err *err)
{
	sqlite3_stmt *s = stmt(st, ASTMT_SCAN, err);
	if (s == NULL)
		return TT_ESTORE;
	sqlite3_bind_int64(s, 1, minute_from);
	sqlite3_bind_int64(s, 2, minute_to);
	int rc, stop = 0;
	while (!stop && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		StoreAggCell c = {
		    .minute = sqlite3_column_int64(s, 0), .node = sqlite3_column_int64(s, 1),
		    .comp = sqlite3_column_int(s, 2), .wclass = store_col_text(s, 3),
		    .host = store_col_text(s, 4), .n = sqlite3_column_int64(s, 5),
		    .requests = sqlite3_column_int64(s, 6), .unknown = sqlite3_column_int64(s, 7),
		    .db = sqlite3_column_int64(s, 8), .par_votes = sqlite3_column_int64(s, 9),
		    .ser_votes = sqlite3_column_int64(s, 10), .off_ns = sqlite3_column_int64(s, 11),
		    .errors = sqlite3_column_int64(s, 12),
		};
		c.sketch = sqlite3_column_blob(s, 13);
		c.sketch_len = (size_t)sqlite3_column_bytes(s, 13);
		stop = fn(ctx, &c);
	}
	if (stop)
		rc = SQLITE_DONE;
	store_stmt_done(s);
	if (rc != SQLITE_DONE)
		return store_sqlerr(st, err, "reading aggregate cells");
	return 0;
}

/* integer floor division of start_ns by a minute, in SQL */
#define MINUTE_OF(col)                                                  \
	"(" col " / 60000000000 - (" col " % 60000000000 < 0))"

int store_agg_dirty_minutes(Store *st, int64_t after_rowid,
                            int (*fn)(void *ctx, int64_t minute), void *ctx, Err *err)
{
	const char *sql =
	    after_rowid == 0
	        ? "SELECT DISTINCT " MINUTE_OF("start_ns") " AS m FROM spans WHERE parent_id = ''"
	          " ORDER BY m"
	        : "SELECT DISTINCT " MINUTE_OF("s.start_ns") " AS m FROM spans s"
	          " WHERE s.parent_id = '' AND s.trace_key IN"
	          " (SELECT trace_key FROM spans NOT INDEXED WHERE id > ?1) ORDER BY m";
	sqlite3_stmt *s = NULL;
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
		return store_sqlerr(st, err, "finding the minutes to aggregate");
	if (after_rowid != 0)
		sqlite3_bind_int64(s, 1, after_rowid);
	int rc, stop = 0;
	while (!stop && (rc = sqlite3_step(s)) == SQLITE_ROW)
		stop = fn(ctx, sqlite3_column_int64(s, 0));
	if (stop)
		rc = SQLITE_DONE;
	int e = rc != SQLITE_DONE ? store_sqlerr(st, err, "finding the minutes to aggregate") : 0;
	sqlite3_finalize(s);
	return e;
}
