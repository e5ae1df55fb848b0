/*
 * store_drills.c - training history: one row per scored drill attempt.
 *
 * A trainer follows a new engineer's progress through these rows, so an
 * attempt keeps everything needed to read it back later without the drill
 * file at hand: who, when, which drill (id, version and the digest of the
 * file that was scored against), the answers exactly as given, the score
 * and the explained deductions. Answers and deductions are JSON text made
 * by drills/; the store never parses them.
 *
 * Invariants:
 *  - the table is created by migration 4 in the one list of store.c,
 *    written with IF NOT EXISTS so a database that already has it
 *    migrates cleanly; the seed and shown columns came later, with a
 *    migration further down that list;
 *  - statements live in st->dstmt and are prepared on first use, so a
 *    read-only connection to an older database still opens.
 */
#include "store.h"
#include "store_priv.h"

#include <sqlite3.h>
#include <string.h>


enum { D_ADD, D_SCAN, D_COUNT };

_Static_assert(D_COUNT <= STORE_DRILLS_STMTS, "raise STORE_DRILLS_STMTS");

static const char *const dsql[D_COUNT] = {
	[D_ADD] =
	    "INSERT INTO drill_attempts(drill, drill_version, drill_digest, person, mode,"
	    " started_ms, finished_ms, answers, score, max_score, hints_used, deductions,"
	    " seed, shown)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
	[D_SCAN] =
	    "SELECT id, drill, drill_version, drill_digest, person, mode, started_ms,"
	    " finished_ms, answers, score, max_score, hints_used, deductions, seed, shown"
	    " FROM drill_attempts"
	    " WHERE (?1 IS NULL OR person = ?1) AND (?2 IS NULL OR drill = ?2)"
	    " ORDER BY finished_ms, id",
};

void store_drills_finalize(Store *st)
{
	store_stmts_finalize(st->dstmt, STORE_DRILLS_STMTS);
}

static sqlite3_stmt *dstmt(Store *st, int i, Err *err)
{
	return store_stmt_lazy(st, &st->dstmt[i], dsql[i], "a drill statement", err);
}

int store_drill_attempt_add(Store *st, const StoreDrillAttempt *a, int64_t *id, Err *err)
{
	if (a->drill == NULL || a->drill[0] == '\0' || a->person == NULL || a->person[0] == '\0')
		return err_set(err, TT_EINVAL, "a drill attempt needs a drill id and a person");
	sqlite3_stmt *s = dstmt(st, D_ADD, err);
	if (s == NULL)
		return TT_ESTORE;
	sqlite3_bind_text(s, 1, a->drill, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, a->drill_version);
	sqlite3_bind_text(s, 3, store_nz(a->drill_digest), -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, a->person, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 5, store_nz(a->mode), -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 6, a->started_ms);
	sqlite3_bind_int64(s, 7, a->finished_ms);
	sqlite3_bind_text(s, 8, a->answers_json ? a->answers_json : "{}", -1, SQLITE_STATIC);
	sqlite3_bind_double(s, 9, a->score);
	sqlite3_bind_double(s, 10, a->max_score);
	sqlite3_bind_int(s, 11, a->hints_used);
	sqlite3_bind_text(s, 12, a->deductions_json ? a->deductions_json : "[]", -1,
	                  SQLITE_STATIC);
	if (a->has_seed)
		sqlite3_bind_int64(s, 13, a->seed);
	else
		sqlite3_bind_null(s, 13);
	if (a->shown_json)
		sqlite3_bind_text(s, 14, a->shown_json, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 14);
	int rc = sqlite3_step(s);
	store_stmt_done(s);
	if (rc != SQLITE_DONE)
		return store_sqlerr(st, err, "storing a drill attempt");
	if (id)
		*id = sqlite3_last_insert_rowid(st->db);
	return 0;
}

int store_drill_attempts_scan(Store *st, const char *person, const char *drill,
                              StoreDrillAttemptFn fn, void *ctx, Err *err)
{
	sqlite3_stmt *s = dstmt(st, D_SCAN, err);
	if (s == NULL)
		return TT_ESTORE;
	if (person)
		sqlite3_bind_text(s, 1, person, -1, SQLITE_STATIC);
	if (drill)
		sqlite3_bind_text(s, 2, drill, -1, SQLITE_STATIC);
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		StoreDrillAttempt a = {
			.drill = store_col_text(s, 1),
			.drill_version = sqlite3_column_int64(s, 2),
			.drill_digest = store_col_text(s, 3),
			.person = store_col_text(s, 4),
			.mode = store_col_text(s, 5),
			.started_ms = sqlite3_column_int64(s, 6),
			.finished_ms = sqlite3_column_int64(s, 7),
			.answers_json = store_col_text(s, 8),
			.score = sqlite3_column_double(s, 9),
			.max_score = sqlite3_column_double(s, 10),
			.hints_used = sqlite3_column_int(s, 11),
			.deductions_json = store_col_text(s, 12),
			.has_seed = sqlite3_column_type(s, 13) != SQLITE_NULL,
			.seed = sqlite3_column_int64(s, 13),
			.shown_json = sqlite3_column_type(s, 14) == SQLITE_NULL ? NULL
			                                                        : store_col_text(s, 14),
		};
		if (fn(ctx, sqlite3_column_int64(s, 0), &a)) {
			rc = SQLITE_DONE;
			break;
		}
	}
	store_stmt_done(s);
	return rc == SQLITE_DONE ? 0 : store_sqlerr(st, err, "reading drill attempts");
}
