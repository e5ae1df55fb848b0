/*
 * store_route.c - routes in SQL (migration 13 of store.c): the SQL
 * functions that apply the route rule (common/route.h) to a row's
 * attributes, and the one pass that stores the routes of the rows written
 * before routes were stored.
 *
 * The importers take a span's route while they read its attributes, so a
 * read never parses attributes for it. Rows from before migration 13 have
 * none (route_rule NULL): readers apply the rule to their attributes
 * (STORE_ROUTE_COL), and the first transaction a writer commits stores
 * them (route_backfill names the rows, and is emptied once they have
 * theirs), as the aggregates were built by the next writer after
 * migration 7.
 */
#include "store.h"
#include "store_priv.h"

#include <string.h>

#include "route.h"

/* STORE_ROUTE_ARGS (store_priv.h) lists the keys of route_attr_keys[] in
 * their order: a key added to the rule goes there too. */
_Static_assert(RA_COUNT == 13, "STORE_ROUTE_ARGS names every key of the route rule");

/* argv: the name, then the RouteAttrs values in order (a text counts,
 * anything else is absent); *rule gets the rule. */
static void route_of(sqlite3_value **argv, Buf *out, int *rule)
{
	RouteAttrs a;
	memset(&a, 0, sizeof a);
	for (int i = 0; i < RA_COUNT; i++) {
		sqlite3_value *v = argv[1 + i];
		if (sqlite3_value_type(v) != SQLITE_TEXT)
			continue;
		a.v[i] = (const char *)sqlite3_value_text(v);
		a.n[i] = (size_t)sqlite3_value_bytes(v);
	}
	const char *name = (const char *)sqlite3_value_text(argv[0]);
	size_t nlen = name ? (size_t)sqlite3_value_bytes(argv[0]) : 0;
	*rule = route_make(&a, name ? name : "", nlen, out);
}

static void fn_route(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
	(void)argc;
	Buf b;
	buf_init(&b);
	int rule;
	route_of(argv, &b, &rule);
	sqlite3_result_text(cx, buf_str(&b), (int)b.len, SQLITE_TRANSIENT);
	buf_fini(&b);
}

static void fn_route_rule(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
	(void)argc;
	Buf b;
	buf_init(&b);
	int rule;
	route_of(argv, &b, &rule);
	sqlite3_result_int(cx, rule);
	buf_fini(&b);
}

int store_route_register(Store *st, Err *err)
{
	int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
	if (sqlite3_create_function_v2(st->db, "tt_route", 1 + RA_COUNT, flags, NULL, fn_route, NULL,
	                               NULL, NULL) != SQLITE_OK ||
	    sqlite3_create_function_v2(st->db, "tt_route_rule", 1 + RA_COUNT, flags, NULL,
	                               fn_route_rule, NULL, NULL, NULL) != SQLITE_OK)
		return store_sqlerr(st, err, "registering the route functions");
	return 0;
}

/* Rows without a route among those up to ?1 that have one (server spans,
 * spans without a parent): what the readers would take from their
 * attributes, stored (a route equal to the name as NULL). */
#define BACKFILL                                                                       \
	"UPDATE spans AS s SET route_rule = CASE WHEN json_valid(s.attrs)"                  \
	" THEN tt_route_rule(" STORE_ROUTE_ARGS("s") ") ELSE 0 END,"                         \
	" route = CASE WHEN json_valid(s.attrs)"                                            \
	" THEN nullif(tt_route(" STORE_ROUTE_ARGS("s") "), s.name) END"                     \
	" WHERE s.id <= ?1 AND s.route_rule IS NULL AND (s.kind = 2 OR s.parent_id = '')"

int store_route_backfill(Store *st, Err *err)
{
	if (st->route_done)
		return 0;
	sqlite3_stmt *q = NULL, *u = NULL;
	int rc = 0;
	if (sqlite3_prepare_v2(st->db, "SELECT upto FROM route_backfill WHERE id = 1", -1, &q,
	                       NULL) != SQLITE_OK)
		return store_sqlerr(st, err, "reading the routes to store");
	int step = sqlite3_step(q);
	int64_t upto = step == SQLITE_ROW ? sqlite3_column_int64(q, 0) : 0;
	sqlite3_finalize(q);
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		return store_sqlerr(st, err, "reading the routes to store");
	if (step == SQLITE_ROW) {
		if (sqlite3_prepare_v2(st->db, BACKFILL, -1, &u, NULL) != SQLITE_OK)
			return store_sqlerr(st, err, "storing the routes of older rows");
		sqlite3_bind_int64(u, 1, upto);
		step = sqlite3_step(u);
		sqlite3_finalize(u);
		if (step != SQLITE_DONE)
			return store_sqlerr(st, err, "storing the routes of older rows");
		rc = store_exec(st, "DELETE FROM route_backfill", err);
	}
	if (rc == 0)
		st->route_done = 1;
	return rc;
}
