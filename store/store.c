/*
 * store.c - SQLite schema, migrations and the prepared statements of the
 * spans side of the store.
 *
 * Invariants:
 *  - every statement is prepared once in store_open() and reset after use;
 *  - one ordered list of migrations for the whole schema, which only ever
 *    appends: migration N takes user_version N-1 to N;
 *  - span identity is (trace_id, span_id), enforced by a UNIQUE index on
 *    (trace_key, span_id), and an insert that hits it is counted as a
 *    duplicate, not an error. trace_key is the traces row of the span's
 *    trace id: keys are handed out in the order traces are first stored, so
 *    the spans of new traces land at the right edge of the index instead of
 *    at random places in it (see trace_key()).
 */
#include "store.h"
#include "store_priv.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "buf.h"
#include "hash.h"
#include "route.h"

/* The schema's migrations, in the order they run: entry i takes a database
 * from PRAGMA user_version i to i+1, for every area of the store (spans,
 * metrics, pull, drills). A database records only the number it reached,
 * so an entry never changes and never moves once released: a change of
 * schema is a new entry at the END of this list.
 * tests/unit/test_store_migrations.c checks every entry against the
 * SHA-256 recorded in tests/fixtures/store/migrations.sha256. */
static const char *const migrations[] = {
	/* 1 (spans): sources, resources, scopes, spans */
	"CREATE TABLE sources("
	"  id INTEGER PRIMARY KEY,"
	"  path TEXT NOT NULL,"
	"  sha256 TEXT NOT NULL,"
	"  format TEXT NOT NULL,"
	"  imported_at_ms INTEGER NOT NULL,"
	"  spans_added INTEGER NOT NULL DEFAULT 0,"
	"  spans_duplicate INTEGER NOT NULL DEFAULT 0,"
	"  metrics_added INTEGER NOT NULL DEFAULT 0,"
	"  metrics_duplicate INTEGER NOT NULL DEFAULT 0,"
	"  observations_added INTEGER NOT NULL DEFAULT 0,"
	"  outcome TEXT NOT NULL DEFAULT 'pending');"
	"CREATE INDEX sources_sha256 ON sources(sha256);"
	"CREATE TABLE resources("
	"  id INTEGER PRIMARY KEY,"
	"  service TEXT,"
	"  host TEXT,"
	"  attrs TEXT NOT NULL UNIQUE);"
	"CREATE TABLE scopes("
	"  id INTEGER PRIMARY KEY,"
	"  name TEXT NOT NULL,"
	"  version TEXT NOT NULL,"
	"  attrs TEXT NOT NULL,"
	"  UNIQUE(name, version, attrs));"
	"CREATE TABLE spans("
	"  id INTEGER PRIMARY KEY,"
	"  trace_id TEXT NOT NULL,"
	"  span_id TEXT NOT NULL,"
	"  parent_id TEXT NOT NULL DEFAULT '',"
	"  source_id INTEGER NOT NULL,"
	"  resource_id INTEGER,"
	"  scope_id INTEGER,"
	"  service TEXT NOT NULL DEFAULT '',"
	"  host TEXT NOT NULL DEFAULT '',"
	"  name TEXT NOT NULL,"
	"  kind INTEGER NOT NULL,"
	"  start_ns INTEGER NOT NULL,"
	"  end_ns INTEGER NOT NULL,"
	"  status_code INTEGER NOT NULL DEFAULT 0,"
	"  status_msg TEXT,"
	"  wclass TEXT,"
	"  queue_ns INTEGER,"
	"  trace_state TEXT,"
	"  flags INTEGER,"
	"  attrs TEXT,"
	"  events TEXT,"
	"  links TEXT,"
	"  dropped INTEGER NOT NULL DEFAULT 0);"
	"CREATE UNIQUE INDEX spans_identity ON spans(trace_id, span_id);"
	"CREATE INDEX spans_root_start ON spans(start_ns) WHERE parent_id = '';",
	/* 2 (metrics): families, series, points, buckets, quantiles, exemplars,
	 * observations (store_metrics.c) */
	"CREATE TABLE metric_families("
	"  id INTEGER PRIMARY KEY,"
	"  name TEXT NOT NULL,"
	"  type TEXT NOT NULL,"
	"  unit TEXT NOT NULL DEFAULT '',"
	"  temporality TEXT NOT NULL DEFAULT '',"
	"  help TEXT NOT NULL DEFAULT '',"
	"  UNIQUE(name, type, unit, temporality));"
	"CREATE TABLE metric_series("
	"  id INTEGER PRIMARY KEY,"
	"  family_id INTEGER NOT NULL REFERENCES metric_families(id),"
	"  labels TEXT NOT NULL,"
	"  resource_id INTEGER NOT NULL DEFAULT 0,"
	"  UNIQUE(family_id, labels, resource_id));"
	"CREATE TABLE metric_points("
	"  id INTEGER PRIMARY KEY,"
	"  series_id INTEGER NOT NULL REFERENCES metric_series(id),"
	"  source_id INTEGER NOT NULL REFERENCES sources(id),"
	"  ts_ns INTEGER NOT NULL,"
	"  ts_explicit INTEGER NOT NULL,"
	"  origin TEXT NOT NULL DEFAULT '',"
	"  start_ns INTEGER,"
	"  value REAL,"
	"  count REAL,"
	"  sum REAL,"
	"  min REAL,"
	"  max REAL,"
	"  nan INTEGER NOT NULL DEFAULT 0,"
	"  flags INTEGER NOT NULL DEFAULT 0,"
	"  scheme TEXT NOT NULL DEFAULT '',"
	"  scale INTEGER,"
	"  zero_count REAL,"
	"  zero_threshold REAL);"
	"CREATE UNIQUE INDEX metric_points_at ON metric_points(series_id, ts_ns)"
	"  WHERE ts_explicit = 1;"
	"CREATE UNIQUE INDEX metric_points_origin ON metric_points(series_id, origin)"
	"  WHERE ts_explicit = 0;"
	"CREATE INDEX metric_points_series_ts ON metric_points(series_id, ts_ns);"
	"CREATE TABLE metric_buckets("
	"  point_id INTEGER NOT NULL REFERENCES metric_points(id),"
	"  le REAL NOT NULL,"
	"  count REAL NOT NULL,"
	"  PRIMARY KEY(point_id, le)) WITHOUT ROWID;"
	"CREATE TABLE metric_quantiles("
	"  point_id INTEGER NOT NULL REFERENCES metric_points(id),"
	"  quantile REAL NOT NULL,"
	"  value REAL,"
	"  PRIMARY KEY(point_id, quantile)) WITHOUT ROWID;"
	"CREATE TABLE metric_exemplars("
	"  id INTEGER PRIMARY KEY,"
	"  point_id INTEGER NOT NULL REFERENCES metric_points(id),"
	"  le REAL,"
	"  value REAL,"
	"  ts_ns INTEGER,"
	"  trace_id TEXT NOT NULL DEFAULT '',"
	"  span_id TEXT NOT NULL DEFAULT '',"
	"  labels TEXT NOT NULL DEFAULT '{}');"
	"CREATE INDEX metric_exemplars_point ON metric_exemplars(point_id);"
	"CREATE INDEX metric_exemplars_trace ON metric_exemplars(trace_id) WHERE trace_id <> '';"
	"CREATE TABLE observations("
	"  id INTEGER PRIMARY KEY,"
	"  source_id INTEGER NOT NULL REFERENCES sources(id),"
	"  sheet TEXT NOT NULL,"
	"  endpoint TEXT NOT NULL DEFAULT '',"
	"  name TEXT NOT NULL,"
	"  role TEXT NOT NULL CHECK(role IN ('window', 'baseline')),"
	"  window TEXT NOT NULL,"
	"  from_ns INTEGER,"
	"  to_ns INTEGER,"
	"  value REAL NOT NULL,"
	"  unit TEXT NOT NULL,"
	"  norm REAL NOT NULL,"
	"  norm_unit TEXT NOT NULL,"
	"  labels TEXT NOT NULL DEFAULT '{}',"
	"  UNIQUE(sheet, name, role, labels));",
	/* 3 (pull): the PromQL query behind each pulled source
	 * (store_metrics.c) */
	"CREATE TABLE promql_queries("
	"  source_id INTEGER PRIMARY KEY REFERENCES sources(id),"
	"  url TEXT NOT NULL,"
	"  name TEXT NOT NULL,"
	"  query TEXT NOT NULL,"
	"  eval_ns INTEGER NOT NULL,"
	"  result_type TEXT NOT NULL,"
	"  samples INTEGER NOT NULL);"
	"CREATE INDEX promql_queries_eval ON promql_queries(eval_ns);",
	/* 4 (drills): training attempts (store_drills.c) */
	"CREATE TABLE IF NOT EXISTS drill_attempts("
	"  id INTEGER PRIMARY KEY,"
	"  drill TEXT NOT NULL,"
	"  drill_version INTEGER NOT NULL DEFAULT 0,"
	"  drill_digest TEXT NOT NULL DEFAULT '',"
	"  person TEXT NOT NULL,"
	"  mode TEXT NOT NULL,"
	"  started_ms INTEGER NOT NULL,"
	"  finished_ms INTEGER NOT NULL,"
	"  answers TEXT NOT NULL,"
	"  score REAL NOT NULL,"
	"  max_score REAL NOT NULL,"
	"  hints_used INTEGER NOT NULL DEFAULT 0,"
	"  deductions TEXT NOT NULL DEFAULT '[]');"
	"CREATE INDEX IF NOT EXISTS drill_attempts_person ON drill_attempts(person, finished_ms);",
	/* 5 (spans): traces, one row per trace id; spans point at it with
	 * trace_key, and span identity is enforced on (trace_key, span_id). A TEXT index on
	 * (trace_id, span_id) receives random trace ids in random places: once
	 * it outgrows the page cache (about a million spans), every insert
	 * reads a page back, which made it the largest single cost of an
	 * import. Keys grow with each new trace, so inserts stay near the end
	 * of the index. trace_id stays in spans for readers. */
	"CREATE TABLE traces("
	"  id INTEGER PRIMARY KEY,"
	"  trace_id TEXT NOT NULL UNIQUE);"
	"INSERT INTO traces(trace_id) SELECT trace_id FROM spans GROUP BY trace_id ORDER BY min(id);"
	"ALTER TABLE spans ADD COLUMN trace_key INTEGER NOT NULL DEFAULT 0;"
	"UPDATE spans SET trace_key = (SELECT t.id FROM traces t WHERE t.trace_id = spans.trace_id);"
	"DROP INDEX spans_identity;"
	"CREATE UNIQUE INDEX spans_identity ON spans(trace_key, span_id);",
	/* drill attempts: the seed of the order the choices were shown in, and
	 * that order (choice ids), so history says what the trainee saw */
	("ALTER TABLE drill_attempts ADD COLUMN seed INTEGER;"
	 "ALTER TABLE drill_attempts ADD COLUMN shown TEXT;"),
	/* 7 (aggregates, store_agg.c): per minute of request start, DAG node,
	 * split component, class and host, the count and a log-spaced
	 * histogram (analysis/sketch.h) of the spans' times. agg_nodes are the
	 * DAG's nodes, each under its parent (parent 0: a request's root).
	 * agg_meta.covered is the largest span rowid the cells account for:
	 * empty here, so the first writer with the aggregate builder fills
	 * them for the spans already stored, and readers use them only when
	 * covered has caught up with the spans. */
	("CREATE TABLE agg_nodes("
	 "  id INTEGER PRIMARY KEY,"
	 "  parent INTEGER NOT NULL,"
	 "  type INTEGER NOT NULL,"
	 "  service TEXT NOT NULL,"
	 "  operation TEXT NOT NULL,"
	 "  dependency TEXT,"
	 "  db_system TEXT,"
	 "  peer TEXT,"
	 "  UNIQUE(parent, type, service, operation));"
	 "CREATE TABLE agg_cells("
	 "  minute INTEGER NOT NULL,"
	 "  node INTEGER NOT NULL,"
	 "  comp INTEGER NOT NULL,"
	 "  wclass TEXT NOT NULL,"
	 "  host TEXT NOT NULL,"
	 "  n INTEGER NOT NULL,"
	 "  requests INTEGER NOT NULL,"
	 "  unknown INTEGER NOT NULL,"
	 "  db INTEGER NOT NULL,"
	 "  par_votes INTEGER NOT NULL,"
	 "  ser_votes INTEGER NOT NULL,"
	 "  off_ns INTEGER NOT NULL,"
	 "  errors INTEGER NOT NULL,"
	 "  sketch BLOB NOT NULL,"
	 "  PRIMARY KEY(minute, node, comp, wclass, host)) WITHOUT ROWID;"
	 "CREATE TABLE agg_meta("
	 "  id INTEGER PRIMARY KEY CHECK (id = 1),"
	 "  covered INTEGER NOT NULL,"
	 "  alpha REAL NOT NULL);"
	 "INSERT INTO agg_meta(id, covered, alpha) VALUES (1, 0, 0.01);"),
	/* 8 (spans): the index of root spans covers what is asked of roots
	 * (the endpoints of a range; for a sample, every request's trace key
	 * and latency at ingress), so those questions read the index alone,
	 * not a table row per request */
	("DROP INDEX spans_root_start;"
	 "CREATE INDEX spans_root_start ON spans(start_ns, service, name, trace_key, end_ns,"
	 " queue_ns) WHERE parent_id = '';"),
	/* 9 (spans): what a span's attributes name its peer (peer.service,
	 * else server.address) and its database system (db.system.name, else
	 * db.system), taken by the importer while it reads the attributes, so
	 * no read parses attrs for them; NULL (rows from before, importers
	 * that do not take them, values that are not strings): the readers
	 * take them from attrs as before (store_read.c) */
	("ALTER TABLE spans ADD COLUMN attr_peer TEXT;"
	 "ALTER TABLE spans ADD COLUMN attr_db_system TEXT;"),
	/* 10 (spans): trace packs, a cache of each trace's spans as the
	 * analysis reads them, one row per trace (store_pack.c): valid while
	 * upto is still the largest rowid of the trace's spans. Written by the
	 * aggregates' update for the traces it reads; a database from before
	 * has none and is read from its spans until then. */
	("CREATE TABLE trace_packs("
	 "  trace_key INTEGER PRIMARY KEY,"
	 "  upto INTEGER NOT NULL,"
	 "  pack BLOB NOT NULL);"),
	/* 11 (aggregates): a call's node is also told apart by what it is made
	 * to (its callee: the database system or peer its attributes name;
	 * analysis/trace_build.h, trace_callee()), as HTTP clients name their spans
	 * after the method alone. The nodes and cells built before merged such
	 * calls: they are dropped, and covered goes back to 0, so the next
	 * writer builds them again (readers use the spans until then). */
	("DELETE FROM agg_cells;"
	 "DROP TABLE agg_nodes;"
	 "CREATE TABLE agg_nodes("
	 "  id INTEGER PRIMARY KEY,"
	 "  parent INTEGER NOT NULL,"
	 "  type INTEGER NOT NULL,"
	 "  service TEXT NOT NULL,"
	 "  operation TEXT NOT NULL,"
	 "  callee TEXT NOT NULL,"
	 "  dependency TEXT,"
	 "  db_system TEXT,"
	 "  peer TEXT,"
	 "  UNIQUE(parent, type, service, operation, callee));"
	 "UPDATE agg_meta SET covered = 0;"),
	/* 12 (sets): the trace sets a pull chose from a back end
	 * (store_sets.c): the slowest N of a window, or a uniform sample of
	 * a range, with the range and what was asked; and their traces */
	("CREATE TABLE trace_sets("
	 "  id INTEGER PRIMARY KEY,"
	 "  kind TEXT NOT NULL CHECK (kind IN ('slowest', 'sample')),"
	 "  role TEXT NOT NULL CHECK (role IN ('window', 'baseline')),"
	 "  from_ns INTEGER NOT NULL,"
	 "  to_ns INTEGER NOT NULL,"
	 "  requested INTEGER NOT NULL,"
	 "  population INTEGER NOT NULL DEFAULT -1,"
	 "  source TEXT NOT NULL,"
	 "  service TEXT NOT NULL,"
	 "  operation TEXT NOT NULL DEFAULT '',"
	 "  created_ms INTEGER NOT NULL,"
	 "  UNIQUE(kind, role, from_ns, to_ns, source, service, operation));"
	 "CREATE TABLE trace_set_members("
	 "  set_id INTEGER NOT NULL REFERENCES trace_sets(id),"
	 "  trace_id TEXT NOT NULL,"
	 "  PRIMARY KEY(set_id, trace_id)) WITHOUT ROWID;"
	 "CREATE INDEX trace_set_members_trace ON trace_set_members(trace_id);"
	 /* the traces that are in a slowest set and in no sample: no
	  * request of a population (the readers of roots leave them out) */
	 "CREATE TABLE traces_not_population("
	 "  trace_key INTEGER PRIMARY KEY);"),
	/* 13 (spans, aggregates): endpoints (DESIGN.md, "Endpoint"). Each
	 * server span and each span without a parent gets its route
	 * (common/route.h), taken by the importer while it reads the
	 * attributes: route is NULL when it is the span's name, route_rule the
	 * rule that gave it (ROUTE_*), NULL for a span that has none or whose
	 * importer did not take it (readers then take it from attrs). The rows
	 * stored before are given theirs by the next writer (route_backfill:
	 * the rows up to upto). The root index holds what the endpoints of a
	 * range need (kind, route, status). A request is now its trace's entry
	 * server span, below any client span above it: the aggregates, keyed
	 * by the root span until now, are built again by the next writer, and
	 * trace packs, which lack the route, are dropped. */
	("ALTER TABLE spans ADD COLUMN route TEXT;"
	 "ALTER TABLE spans ADD COLUMN route_rule INTEGER;"
	 "CREATE TABLE route_backfill("
	 "  id INTEGER PRIMARY KEY CHECK (id = 1),"
	 "  upto INTEGER NOT NULL);"
	 "INSERT INTO route_backfill(id, upto) SELECT 1, max(id) FROM spans HAVING count(*) > 0;"
	 "DROP INDEX spans_root_start;"
	 "CREATE INDEX spans_root_start ON spans(start_ns, service, name, kind, route, route_rule,"
	 " status_code, trace_key, end_ns, queue_ns) WHERE parent_id = '';"
	 "DELETE FROM agg_cells;"
	 "DELETE FROM agg_nodes;"
	 "UPDATE agg_meta SET covered = 0;"
	 "DELETE FROM trace_packs;"),
};

#define N_MIGRATIONS ((int)(sizeof migrations / sizeof migrations[0]))

/* The span insert without its VALUES rows; SPAN_PARAMS values per row. */
#define SPAN_INSERT                                                                    \
	"INSERT OR IGNORE INTO spans(trace_id, span_id, parent_id, source_id, resource_id," \
	" scope_id, service, host, name, kind, start_ns, end_ns, status_code, status_msg,"  \
	" wclass, queue_ns, trace_state, flags, attrs, events, links, dropped, trace_key,"  \
	" attr_peer, attr_db_system, route, route_rule) VALUES "
#define SPAN_PARAMS 27

static const char *const sql_text[STMT_COUNT] = {
	[STMT_SOURCE_FIND] =
	    "SELECT path FROM sources WHERE sha256 = ?1 AND outcome IN ('imported','duplicate') LIMIT 1",
	[STMT_SOURCE_ADD] =
	    "INSERT INTO sources(path, sha256, format, imported_at_ms) VALUES (?1, ?2, ?3, ?4)",
	[STMT_SOURCE_FINISH] =
	    "UPDATE sources SET spans_added = ?2, spans_duplicate = ?3, metrics_added = ?4,"
	    " metrics_duplicate = ?5, observations_added = ?6, outcome = ?7 WHERE id = ?1",
	[STMT_RESOURCE_FIND] = "SELECT id FROM resources WHERE attrs = ?1",
	[STMT_RESOURCE_ADD] = "INSERT INTO resources(service, host, attrs) VALUES (?1, ?2, ?3)",
	[STMT_SCOPE_FIND] =
	    "SELECT id FROM scopes WHERE name = ?1 AND version = ?2 AND attrs = ?3",
	[STMT_SCOPE_ADD] = "INSERT INTO scopes(name, version, attrs) VALUES (?1, ?2, ?3)",
	[STMT_TRACE_FIND] = "SELECT id FROM traces WHERE trace_id = ?1",
	[STMT_TRACE_ADD] = "INSERT OR IGNORE INTO traces(trace_id) VALUES (?1)",
	[STMT_SPAN_ADD] = SPAN_INSERT
	    "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,"
	    " ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27)",
	[STMT_SPAN_SET_RESOURCE] =
	    "UPDATE spans SET resource_id = ?3, service = ?4, host = ?5"
	    " WHERE source_id = ?1 AND id >= ?2 AND resource_id IS NULL",
	[STMT_SPAN_SET_SCOPE] =
	    "UPDATE spans SET scope_id = ?3 WHERE source_id = ?1 AND id >= ?2 AND scope_id IS NULL",
	[STMT_SPAN_SET_CLASS] =
	    "UPDATE spans SET wclass = ?3 WHERE source_id = ?1 AND id >= ?2 AND wclass IS NULL",
	[STMT_BEGIN] = "BEGIN IMMEDIATE",
	[STMT_COMMIT] = "COMMIT",
	[STMT_ROLLBACK] = "ROLLBACK",
	[STMT_DATA_VERSION] = "PRAGMA data_version",
};

_Thread_local int store_bind_failed = SQLITE_OK;
_Thread_local int store_bind_reported = SQLITE_OK;

int store_sqlerr(Store *st, Err *err, const char *what)
{
	int bind_rc = store_bind_reported;
	store_bind_reported = SQLITE_OK;
	if (bind_rc != SQLITE_OK)
		return err_set(err, TT_ESTORE, "%s: a value could not be bound: %s", what,
		               sqlite3_errstr(bind_rc));
	return err_set(err, TT_ESTORE, "%s: %s", what, sqlite3_errmsg(st->db));
}

static int exec(Store *st, const char *sql, Err *err)
{
	char *msg = NULL;
	if (sqlite3_exec(st->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		int rc = err_set(err, TT_ESTORE, "%s", msg ? msg : sqlite3_errmsg(st->db));
		sqlite3_free(msg);
		return rc;
	}
	return 0;
}

int store_exec(Store *st, const char *sql, Err *err)
{
	return exec(st, sql, err);
}

void store_cache_kib(Store *st, int kib)
{
	char sql[64];
	snprintf(sql, sizeof sql, "PRAGMA cache_size = -%d", kib > 0 ? kib : 1);
	exec(st, sql, NULL);
}

int store_migration_count(void)
{
	return N_MIGRATIONS;
}

const char *store_migration_sql(int i)
{
	return i >= 0 && i < N_MIGRATIONS ? migrations[i] : NULL;
}

static const char *migration_sql(int i)
{
	return migrations[i];
}

static int migration_count(void)
{
	return N_MIGRATIONS;
}

static int migrate(Store *st, Err *err)
{
	int total = migration_count();
	for (;;) {
		/* Another process may be creating or migrating the same file at
		 * this moment: the version is read again under the write lock, so
		 * each step runs exactly once whoever gets there first. */
		if (store_schema_version(st) >= total)
			break;
		if (exec(st, "BEGIN IMMEDIATE", err))
			return TT_ESTORE;
		int i = store_schema_version(st);
		if (i < 0 || i >= total) {
			exec(st, "ROLLBACK", NULL);
			if (i < 0)
				return err_set(err, TT_ESTORE, "cannot read the schema version: %s",
				               sqlite3_errmsg(st->db));
			break;
		}
		const char *sql = migration_sql(i);
		char pragma[64];
		snprintf(pragma, sizeof pragma, "PRAGMA user_version = %d", i + 1);
		if (exec(st, sql, err) || exec(st, pragma, err)) {
			exec(st, "ROLLBACK", NULL);
			return TT_ESTORE;
		}
		if (exec(st, "COMMIT", err))
			return TT_ESTORE;
	}
	int v = store_schema_version(st);
	if (v > total)
		return err_set(err, TT_ESTORE,
		               "database schema version %d is newer than this tailtriage (%d)",
		               v, total);
	return 0;
}

int store_prepare_all(Store *st, const char *const *texts, int n, sqlite3_stmt **out, Err *err)
{
	for (int i = 0; i < n; i++) {
		if (texts[i] == NULL)
			continue;
		if (sqlite3_prepare_v3(st->db, texts[i], -1, SQLITE_PREPARE_PERSISTENT, &out[i],
		                       NULL) != SQLITE_OK)
			return err_set(err, TT_ESTORE, "preparing statement %d: %s", i,
			               sqlite3_errmsg(st->db));
	}
	return 0;
}

/* exec() that waits out SQLITE_BUSY for up to five seconds. Two processes
 * turning a new file to WAL at the same moment both hold a read lock and
 * want an exclusive one: SQLite fails one of them at once, without its busy
 * handler, to avoid a deadlock. A moment later the other has finished. */
static int exec_busy_retry(Store *st, const char *sql, Err *err)
{
	for (int tries = 0;; tries++) {
		int rc = exec(st, sql, err);
		if (rc == 0 || (sqlite3_extended_errcode(st->db) & 0xff) != SQLITE_BUSY || tries >= 100)
			return rc;
		sqlite3_sleep(50);
	}
}

/* Opens path as an SQLite URI with immutable=1: no locks, no -shm or -wal
 * files. For a read-only file in a folder nobody can write to, where a
 * WAL-mode database cannot otherwise be read. */
static int open_immutable(const char *path, sqlite3 **db)
{
	Buf u;
	buf_init(&u);
	buf_adds(&u, "file:");
	for (const char *p = path; *p; p++) {
		if (*p == '%' || *p == '?' || *p == '#')
			buf_printf(&u, "%%%02X", (unsigned char)*p);
		else
			buf_addc(&u, *p);
	}
	buf_adds(&u, "?immutable=1");
	int rc = sqlite3_open_v2(buf_str(&u), db,
	                         SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL);
	buf_fini(&u);
	return rc;
}

/* True for the result codes of "cannot write here" (a read-only file or
 * folder, or a -shm file that cannot be created). */
static int readonly_code(int code)
{
	int primary = code & 0xff;
	return primary == SQLITE_READONLY || primary == SQLITE_CANTOPEN || primary == SQLITE_PERM;
}

/* The first read of a new connection: fails on a file that is not a
 * database, and on a WAL database that cannot be read from here. */
static int first_read(Store *st, Err *err)
{
	return exec(st, "PRAGMA foreign_keys = ON", err) ||
	       exec(st, "SELECT count(*) FROM sqlite_master", err);
}

int store_open(const char *path, int flags, Store **out, Err *err)
{
	return store_open_mode(path, flags, 0, out, err);
}

/* SQLite keeps memory statistics by default, which takes a global mutex
 * on every allocation of every connection (the import's writer and
 * reading threads allocate for every row); nothing here reads them. Set
 * before SQLite's first use in the process, else SQLite refuses it and it
 * stays as it was. */
static pthread_once_t sqlite_tuned = PTHREAD_ONCE_INIT;

static void sqlite_tune(void)
{
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

int store_open_mode(const char *path, int flags, int bulk, Store **out, Err *err)
{
	*out = NULL;
	pthread_once(&sqlite_tuned, sqlite_tune);
	struct stat sb;
	int exists = path[0] != ':' && stat(path, &sb) == 0;
	if (exists && S_ISDIR(sb.st_mode))
		return err_set(err, TT_EIO, "%s: is a directory, not a database file", path);
	if ((flags & STORE_READONLY) && path[0] != ':' && !exists)
		return err_set(err, TT_EIO, "%s: no such database (create one with 'tailtriage import"
		               " --db %s FILE...')", path, path);
	Store *st = xcalloc(1, sizeof *st);
	int oflags = (flags & STORE_READONLY) ? SQLITE_OPEN_READONLY
	                                      : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
	oflags |= SQLITE_OPEN_NOMUTEX;
	if (sqlite3_open_v2(path, &st->db, oflags, NULL) != SQLITE_OK) {
		int code = st->db ? sqlite3_extended_errcode(st->db) : SQLITE_NOMEM;
		if (!(flags & STORE_READONLY) && readonly_code(code))
			err_set(err, TT_EIO, "%s: cannot write to this database: the file or its folder"
			        " is read-only", path);
		else
			err_set(err, TT_EIO, "%s: cannot open database: %s", path,
			        st->db ? sqlite3_errmsg(st->db) : "out of memory");
		store_close(st);
		return TT_EIO;
	}
	sqlite3_extended_result_codes(st->db, 1);
	sqlite3_busy_timeout(st->db, 5000);
	/* A file that is not a database fails here, on the first read. */
	int bad = first_read(st, err);
	if (bad && (flags & STORE_READONLY) && readonly_code(sqlite3_extended_errcode(st->db))) {
		/* A WAL database in a read-only folder: its -shm file cannot be
		 * created. Nobody can write it either, so read it as immutable. */
		sqlite3_close(st->db);
		st->db = NULL;
		if (open_immutable(path, &st->db) == SQLITE_OK) {
			sqlite3_extended_result_codes(st->db, 1);
			bad = first_read(st, err);
		}
	}
	if (bad) {
		char m[512];
		snprintf(m, sizeof m, "%s", err ? err->msg : "");
		int code = st->db ? sqlite3_extended_errcode(st->db) : SQLITE_NOMEM;
		if (!(flags & STORE_READONLY) && readonly_code(code))
			err_set(err, TT_EIO, "%s: cannot write to this database: the file or its folder"
			        " is read-only", path);
		else
			err_set(err, TT_EIO, "%s: not a tailtriage database: %s", path, m);
		store_close(st);
		return TT_EIO;
	}
	if (!(flags & STORE_READONLY) && sqlite3_db_readonly(st->db, "main") == 1) {
		/* SQLite falls back to reading a file it may not write */
		err_set(err, TT_EIO, "%s: cannot write to this database: the file or its folder"
		        " is read-only", path);
		store_close(st);
		return TT_EIO;
	}
	if (!(flags & STORE_READONLY)) {
		/* 16 KiB pages (SQLite's default is 4 KiB): a bulk import of a
		 * million spans runs about a fifth faster (shallower B-trees,
		 * fewer pages to spill and checkpoint). Takes effect only when the
		 * file is new (before WAL mode writes its first page); existing
		 * databases keep their page size. */
		exec(st, "PRAGMA page_size = 16384", NULL);
		/* A bulk load writes a new file nobody else opens (store_bulk.c):
		 * pages go straight into it, once, with no WAL to copy them into
		 * first and no sync until the end. The journal stays in memory so
		 * that a failed file can still be rolled back; if the process
		 * dies, the whole file is thrown away. */
		static const char *const live[] = {"PRAGMA journal_mode = WAL",
		                                   "PRAGMA synchronous = NORMAL"};
		static const char *const load[] = {"PRAGMA locking_mode = EXCLUSIVE",
		                                   "PRAGMA journal_mode = MEMORY",
		                                   "PRAGMA synchronous = OFF"};
		const char *const *prag = bulk ? load : live;
		int n_prag = bulk ? 3 : 2;
		for (int i = 0; i < n_prag; i++)
			if (exec_busy_retry(st, prag[i], err)) {
				store_close(st);
				return TT_ESTORE;
			}
		if (migrate(st, err)) {
			store_close(st);
			return TT_ESTORE;
		}
	} else if (store_schema_version(st) == 0) {
		err_set(err, TT_EIO, "%s: empty database (nothing imported yet)", path);
		store_close(st);
		return TT_EIO;
	} else if (store_schema_version(st) < migration_count()) {
		/* written by an older tailtriage: readers migrate it too, through
		 * a short-lived writing connection, rather than refuse it */
		Store *rw = NULL;
		int rc = store_open(path, 0, &rw, err);
		store_close(rw);
		if (rc) {
			char m[sizeof err->msg];
			snprintf(m, sizeof m, "%s", err ? err->msg : "");
			err_set(err, rc, "%s: schema version %d is older than this tailtriage's (%d)"
			        " and could not be migrated: %s", path, store_schema_version(st),
			        migration_count(), m);
			store_close(st);
			return rc;
		}
	}
	/* page cache: 32 MiB for a writer (B-tree inserts revisit their
	 * pages); 8 MiB for a reader, whose big reads stream through the file
	 * once: a larger cache only holds pages that are not read again, and
	 * costs memory and CPU-cache misses (a 1M-span report ran about 5 %
	 * faster, in 30 MiB less) */
	store_cache_kib(st, (flags & STORE_READONLY) ? STORE_READ_CACHE_KIB : 32768);
	exec(st, "PRAGMA temp_store = MEMORY", NULL);
	if (store_route_register(st, err) ||
	    store_prepare_all(st, sql_text, STMT_COUNT, st->stmt, err) ||
	    store_read_prepare(st, err) || store_metrics_prepare(st, err)) {
		store_close(st);
		return TT_ESTORE;
	}
	st->path = xstrdup(path);
	*out = st;
	return 0;
}

void store_close(Store *st)
{
	if (st == NULL)
		return;
	for (int i = 0; i < STMT_COUNT; i++)
		sqlite3_finalize(st->stmt[i]);
	sqlite3_finalize(st->span_rows);
	store_read_finalize(st);
	store_metrics_finalize(st);
	store_drills_finalize(st);
	store_sets_finalize(st);
	store_agg_finalize(st);
	store_pack_finalize(st);
	free(st->tkeys.e);
	sqlite3_close(st->db);
	store_bulk_free(st->bulk); /* after the close: it may remove the file */
	store_spool_free(st->spool);
	free(st->path);
	free(st);
}

int store_schema_version(Store *st)
{
	sqlite3_stmt *s = NULL;
	int v = -1;
	if (sqlite3_prepare_v2(st->db, "PRAGMA user_version", -1, &s, NULL) == SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	return v;
}

static int step_done(Store *st, sqlite3_stmt *s, Err *err, const char *what)
{
	int rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return store_sqlerr(st, err, what);
	return 0;
}

/* Forgets every cached trace key (see StoreTraceKeys). */
static void tkeys_forget(StoreTraceKeys *c)
{
	c->n = 0;
	if (++c->gen == 0 && c->e) {  /* wrapped: old generations would match */
		memset(c->e, 0, STORE_TKEY_CAP * sizeof *c->e);
		c->gen = 1;
	}
}

int store_begin(Store *st, Err *err)
{
	tkeys_forget(&st->tkeys);
	return step_done(st, st->stmt[STMT_BEGIN], err, "begin transaction");
}

int store_commit(Store *st, Err *err)
{
	if (!sqlite3_get_autocommit(st->db) &&
	    (store_route_backfill(st, err) || store_run_commit_hook(st, 0, err)))
		return TT_ESTORE;
	return step_done(st, st->stmt[STMT_COMMIT], err, "commit");
}

void store_rollback(Store *st)
{
	tkeys_forget(&st->tkeys);
	store_spool_break(st->spool); /* it holds the rows rolled back */
	if (!sqlite3_get_autocommit(st->db))
		step_done(st, st->stmt[STMT_ROLLBACK], NULL, "rollback");
}

int64_t store_data_version(Store *st)
{
	sqlite3_stmt *s = st->stmt[STMT_DATA_VERSION];
	int64_t v = -1;
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	return v;
}

/* Binds text or NULL. */
void store_bind_text(sqlite3_stmt *s, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, i);
}

int store_source_find_digest(Store *st, const char *sha256, int *found,
                             char *path_out, unsigned path_sz, Err *err)
{
	sqlite3_stmt *s = st->stmt[STMT_SOURCE_FIND];
	sqlite3_bind_text(s, 1, sha256, -1, SQLITE_STATIC);
	int rc = sqlite3_step(s);
	*found = 0;
	if (rc == SQLITE_ROW) {
		*found = 1;
		if (path_out && path_sz)
			snprintf(path_out, path_sz, "%s", (const char *)sqlite3_column_text(s, 0));
	}
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_sqlerr(st, err, "looking up source digest");
	return 0;
}

int store_source_add(Store *st, const char *path, const char *sha256,
                     const char *format, int64_t imported_at_ms,
                     int64_t *source_id, Err *err)
{
	sqlite3_stmt *s = st->stmt[STMT_SOURCE_ADD];
	sqlite3_bind_text(s, 1, path, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, sha256, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, format, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 4, imported_at_ms);
	int rc = step_done(st, s, err, "recording import source");
	sqlite3_clear_bindings(s);
	if (rc)
		return rc;
	*source_id = sqlite3_last_insert_rowid(st->db);
	return 0;
}

int store_source_set_sha256(Store *st, int64_t source_id, const char *sha256, Err *err)
{
	/* once per import: not worth a persistent statement */
	sqlite3_stmt *s = NULL;
	if (sqlite3_prepare_v2(st->db, "UPDATE sources SET sha256 = ?2 WHERE id = ?1", -1, &s,
	                       NULL) != SQLITE_OK)
		return store_sqlerr(st, err, "recording source digest");
	sqlite3_bind_int64(s, 1, source_id);
	sqlite3_bind_text(s, 2, sha256, -1, SQLITE_STATIC);
	int rc = sqlite3_step(s);
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return store_sqlerr(st, err, "recording source digest");
	return 0;
}

int store_source_finish(Store *st, int64_t source_id, const StoreSourceCounts *c,
                        const char *outcome, Err *err)
{
	sqlite3_stmt *s = st->stmt[STMT_SOURCE_FINISH];
	sqlite3_bind_int64(s, 1, source_id);
	sqlite3_bind_int64(s, 2, c->spans_added);
	sqlite3_bind_int64(s, 3, c->spans_duplicate);
	sqlite3_bind_int64(s, 4, c->metrics_added);
	sqlite3_bind_int64(s, 5, c->metrics_duplicate);
	sqlite3_bind_int64(s, 6, c->observations_added);
	sqlite3_bind_text(s, 7, outcome, -1, SQLITE_STATIC);
	int rc = step_done(st, s, err, "finishing import source");
	sqlite3_clear_bindings(s);
	return rc;
}

const char *span_kind_name(int kind)
{
	switch (kind) {
	case SPAN_KIND_INTERNAL: return "internal";
	case SPAN_KIND_SERVER: return "server";
	case SPAN_KIND_CLIENT: return "client";
	case SPAN_KIND_PRODUCER: return "producer";
	case SPAN_KIND_CONSUMER: return "consumer";
	default: return "unspecified";
	}
}

/* Steps a one-row id lookup: SQLITE_ROW with *id, SQLITE_DONE (not
 * there) or an error code; the statement is reset either way. */
static int find_id(sqlite3_stmt *find, int64_t *id)
{
	int rc = sqlite3_step(find);
	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(find, 0);
	sqlite3_reset(find);
	return rc;
}

static int intern(Store *st, sqlite3_stmt *find, sqlite3_stmt *add, int64_t *id, Err *err,
                  const char *what)
{
	int rc = find_id(find, id);
	if (rc == SQLITE_ROW)
		return 0;
	if (rc != SQLITE_DONE)
		return store_sqlerr(st, err, what);
	if (step_done(st, add, err, what))
		return TT_ESTORE;
	*id = sqlite3_last_insert_rowid(st->db);
	return 0;
}

/* The same as intern() for a table whose add is INSERT OR IGNORE: the add
 * goes first, and the find runs only when the row was already there. For
 * trace ids a miss in the cache is almost always a new trace, so this is
 * one index search instead of two. */
static int intern_add_first(Store *st, sqlite3_stmt *find, sqlite3_stmt *add, int64_t *id,
                            Err *err, const char *what)
{
	if (step_done(st, add, err, what))
		return TT_ESTORE;
	if (sqlite3_changes(st->db) > 0) {
		*id = sqlite3_last_insert_rowid(st->db);
		return 0;
	}
	int rc = find_id(find, id);
	if (rc == SQLITE_ROW)
		return 0;
	if (rc == SQLITE_DONE)  /* ignored for another constraint than the key's */
		return err_set(err, TT_ESTORE, "%s: the row was neither added nor found", what);
	return store_sqlerr(st, err, what);
}

int store_resource_intern(Store *st, const char *service, const char *host,
                          const char *attrs_json, int64_t *id, Err *err)
{
	sqlite3_stmt *f = st->stmt[STMT_RESOURCE_FIND], *a = st->stmt[STMT_RESOURCE_ADD];
	const char *attrs = attrs_json ? attrs_json : "{}";
	sqlite3_bind_text(f, 1, attrs, -1, SQLITE_STATIC);
	store_bind_text(a, 1, service);
	store_bind_text(a, 2, host);
	sqlite3_bind_text(a, 3, attrs, -1, SQLITE_STATIC);
	int rc = intern(st, f, a, id, err, "storing resource");
	sqlite3_clear_bindings(f);
	sqlite3_clear_bindings(a);
	return rc;
}

int store_scope_intern(Store *st, const char *name, const char *version,
                       const char *attrs_json, int64_t *id, Err *err)
{
	sqlite3_stmt *f = st->stmt[STMT_SCOPE_FIND], *a = st->stmt[STMT_SCOPE_ADD];
	const char *vals[3] = {name ? name : "", version ? version : "",
	                       attrs_json ? attrs_json : "{}"};
	for (int i = 0; i < 3; i++) {
		sqlite3_bind_text(f, i + 1, vals[i], -1, SQLITE_STATIC);
		sqlite3_bind_text(a, i + 1, vals[i], -1, SQLITE_STATIC);
	}
	int rc = intern(st, f, a, id, err, "storing scope");
	sqlite3_clear_bindings(f);
	sqlite3_clear_bindings(a);
	return rc;
}

/* The traces.id of a trace id, adding the row when the trace is new. */
static int trace_key(Store *st, const char *id, int64_t *key, Err *err)
{
	StoreTraceKeys *c = &st->tkeys;
	if (c->e == NULL) {
		c->e = xcalloc(STORE_TKEY_CAP, sizeof *c->e);
		c->gen = 1;
	}
	size_t len = strnlen(id, sizeof c->e[0].id - 1);
	uint64_t h = hash_fnv1a(HASH_FNV1A_BASIS, id, len);
	unsigned mask = STORE_TKEY_CAP - 1, i = (unsigned)(h ^ (h >> 32)) & mask;
	for (; c->e[i].gen == c->gen; i = (i + 1) & mask) {
		if (memcmp(c->e[i].id, id, len) == 0 && c->e[i].id[len] == '\0') {
			*key = c->e[i].key;
			return 0;
		}
	}
	sqlite3_stmt *f = st->stmt[STMT_TRACE_FIND], *a = st->stmt[STMT_TRACE_ADD];
	sqlite3_bind_text(f, 1, id, (int)len, SQLITE_STATIC);
	sqlite3_bind_text(a, 1, id, (int)len, SQLITE_STATIC);
	int rc = intern_add_first(st, f, a, key, err, "storing trace");
	sqlite3_clear_bindings(f);
	sqlite3_clear_bindings(a);
	if (rc)
		return rc;
	if (c->n >= STORE_TKEY_CAP / 4 * 3) {
		tkeys_forget(c);
		i = (unsigned)(h ^ (h >> 32)) & mask;
	}
	memcpy(c->e[i].id, id, len);
	c->e[i].id[len] = '\0';
	c->e[i].gen = c->gen;
	c->e[i].key = *key;
	c->n++;
	return 0;
}

static void bind_int_or_null(sqlite3_stmt *s, int i, int has, int64_t v)
{
	if (has)
		sqlite3_bind_int64(s, i, v);
	else
		sqlite3_bind_null(s, i);
}

int store_span_route(const StoreSpan *sp, const char **route, int *rule)
{
	*route = NULL;
	*rule = -1;
	if (!route_wanted(sp->kind, sp->parent_id[0] != '\0'))
		return 1;
	if (sp->has_route) {
		*rule = sp->route_rule;
		*route = sp->route ? sp->route : store_nz(sp->name);
		return 1;
	}
	/* not taken: without any attribute the rule reads, it is the name */
	const char *a = sp->attrs_json;
	if (a == NULL || (!strstr(a, "\"http.") && !strstr(a, "\"url.") && !strstr(a, "\"rpc."))) {
		*rule = ROUTE_NAME;
		*route = store_nz(sp->name);
		return 1;
	}
	return 0;
}

/* Binds sp as row `row` (0-based) of a span insert. */
static void bind_span(sqlite3_stmt *s, int row, int64_t source_id, const StoreSpan *sp,
                      int64_t tkey)
{
	int b = row * SPAN_PARAMS;
	sqlite3_bind_text(s, b + 1, sp->trace_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, b + 2, sp->span_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, b + 3, sp->parent_id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, b + 4, source_id);
	bind_int_or_null(s, b + 5, sp->resource_id != 0, sp->resource_id);
	bind_int_or_null(s, b + 6, sp->scope_id != 0, sp->scope_id);
	sqlite3_bind_text(s, b + 7, store_nz(sp->service), -1, SQLITE_STATIC);
	sqlite3_bind_text(s, b + 8, store_nz(sp->host), -1, SQLITE_STATIC);
	sqlite3_bind_text(s, b + 9, store_nz(sp->name), -1, SQLITE_STATIC);
	sqlite3_bind_int(s, b + 10, sp->kind);
	sqlite3_bind_int64(s, b + 11, sp->start_ns);
	sqlite3_bind_int64(s, b + 12, sp->end_ns);
	sqlite3_bind_int(s, b + 13, sp->status_code);
	store_bind_text(s, b + 14, sp->status_msg);
	store_bind_text(s, b + 15, sp->wclass);
	bind_int_or_null(s, b + 16, sp->has_queue, sp->queue_ns);
	store_bind_text(s, b + 17, sp->trace_state);
	sqlite3_bind_int64(s, b + 18, sp->flags);
	store_bind_text(s, b + 19, sp->attrs_json);
	store_bind_text(s, b + 20, sp->events_json);
	store_bind_text(s, b + 21, sp->links_json);
	sqlite3_bind_int64(s, b + 22, sp->dropped);
	sqlite3_bind_int64(s, b + 23, tkey);
	store_bind_text(s, b + 24, sp->attr_peer);
	store_bind_text(s, b + 25, sp->attr_db_system);
	/* a route equal to the name is stored as NULL (most server spans are
	 * named after it): a smaller row */
	const char *route = NULL;
	int rule = -1;
	store_span_route(sp, &route, &rule);
	store_bind_text(s, b + 26, route && strcmp(route, store_nz(sp->name)) != 0 ? route : NULL);
	bind_int_or_null(s, b + 27, rule >= 0, rule);
}

/* The insert of STORE_SPAN_ROWS spans in one statement, prepared on first
 * use. */
static sqlite3_stmt *span_add_rows(Store *st, Err *err)
{
	if (st->span_rows)
		return st->span_rows;
	Buf sql;
	buf_init(&sql);
	buf_adds(&sql, SPAN_INSERT);
	for (int r = 0; r < STORE_SPAN_ROWS; r++) {
		buf_adds(&sql, r ? ",(" : "(");
		for (int c = 0; c < SPAN_PARAMS; c++)
			buf_printf(&sql, c ? ",?%d" : "?%d", r * SPAN_PARAMS + c + 1);
		buf_addc(&sql, ')');
	}
	sqlite3_stmt *s = store_stmt_lazy(st, &st->span_rows, sql.p, "span insert", err);
	buf_fini(&sql);
	return s;
}

int store_spans_add(Store *st, int64_t source_id, const StoreSpan *const *sp, int n,
                    int64_t *n_added, int64_t *first_rowid, Err *err)
{
	*n_added = 0;
	*first_rowid = 0;
	int64_t tkey[STORE_SPAN_ROWS];
	for (int i = 0; i < n;) {
		int rows = n - i >= STORE_SPAN_ROWS ? STORE_SPAN_ROWS : 1;
		sqlite3_stmt *s = rows > 1 ? span_add_rows(st, err) : st->stmt[STMT_SPAN_ADD];
		if (s == NULL)
			return TT_ESTORE;
		for (int r = 0; r < rows; r++)
			if (trace_key(st, sp[i + r]->trace_id, &tkey[r], err))
				return TT_ESTORE;
		for (int r = 0; r < rows; r++)
			bind_span(s, r, source_id, sp[i + r], tkey[r]);
		int rc = sqlite3_step(s);
		sqlite3_reset(s);
		if (rc != SQLITE_DONE)
			return store_sqlerr(st, err, "storing span");
		/* An INSERT gives each new row the largest rowid plus one, so the
		 * rows this statement added are the last `changes` rowids. */
		int changes = sqlite3_changes(st->db);
		int64_t first = sqlite3_last_insert_rowid(st->db) - changes + 1;
		if (changes > 0 && *first_rowid == 0)
			*first_rowid = first;
		if (st->spool) {
			/* a duplicate among them: which row it was is not known */
			if (changes != rows)
				store_spool_break(st->spool);
			for (int r = 0; r < changes && changes == rows; r++)
				store_spool_add(st->spool, sp[i + r], tkey[r], first + r);
		}
		*n_added += changes;
		i += rows;
	}
	return 0;
}

int store_span_add(Store *st, int64_t source_id, const StoreSpan *sp, int *added, Err *err)
{
	int64_t n_added, first;
	int rc = store_spans_add(st, source_id, &sp, 1, &n_added, &first, err);
	*added = n_added > 0;
	return rc;
}

int64_t store_last_rowid(Store *st)
{
	return sqlite3_last_insert_rowid(st->db);
}

int store_span_set_resource(Store *st, int64_t source_id, int64_t first_rowid,
                            int64_t resource_id, const char *service, const char *host,
                            Err *err)
{
	store_spool_break(st->spool); /* its records have the old names */
	sqlite3_stmt *s = st->stmt[STMT_SPAN_SET_RESOURCE];
	sqlite3_bind_int64(s, 1, source_id);
	sqlite3_bind_int64(s, 2, first_rowid);
	sqlite3_bind_int64(s, 3, resource_id);
	sqlite3_bind_text(s, 4, service ? service : "", -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 5, host ? host : "", -1, SQLITE_STATIC);
	int rc = step_done(st, s, err, "updating span resource");
	sqlite3_clear_bindings(s);
	return rc;
}

int store_span_set_scope(Store *st, int64_t source_id, int64_t first_rowid, int64_t scope_id,
                         Err *err)
{
	sqlite3_stmt *s = st->stmt[STMT_SPAN_SET_SCOPE];
	sqlite3_bind_int64(s, 1, source_id);
	sqlite3_bind_int64(s, 2, first_rowid);
	sqlite3_bind_int64(s, 3, scope_id);
	int rc = step_done(st, s, err, "updating span scope");
	sqlite3_clear_bindings(s);
	return rc;
}

int store_span_set_class(Store *st, int64_t source_id, int64_t first_rowid, const char *wclass,
                         Err *err)
{
	store_spool_break(st->spool);
	sqlite3_stmt *s = st->stmt[STMT_SPAN_SET_CLASS];
	sqlite3_bind_int64(s, 1, source_id);
	sqlite3_bind_int64(s, 2, first_rowid);
	sqlite3_bind_text(s, 3, wclass, -1, SQLITE_STATIC);
	int rc = step_done(st, s, err, "updating span class");
	sqlite3_clear_bindings(s);
	return rc;
}
