/*
 * store_expr.c - predicate expressions over evidence, evaluated by SQLite.
 *
 * Safety rests on three things: the text is compiled as one `SELECT (expr)`
 * statement (a trailing second statement is an error), the authorizer
 * installed for the compile allows only SQLITE_SELECT and whitelisted
 * functions (every table read, pragma, attach, recursive CTE, ... is
 * denied), and a progress handler interrupts anything that runs long.
 * The authorizer is removed again after the compile so the connection's
 * other statements are unaffected.
 */
#include "store_expr.h"
#include "store_priv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define EXPR_MAX 4096
#define EXPR_MAX_STEPS 200 /* progress callbacks of 1000 VM ops each */

typedef struct ExprCtx {
	StoreEvLookupFn fn;
	StoreEvTestFn test;
	void *ctx;
	int steps;
} ExprCtx;

/* The interval-aware tests: name, number of numeric arguments. */
static const struct {
	const char *name;
	int nargs;
} TESTS[] = {
	{"rose", 2}, {"fell", 2}, {"flat", 2},  {"steady", 1},
	{"above", 1}, {"below", 1}, {"lo", 0}, {"hi", 0},
};
#define N_TESTS ((int)(sizeof TESTS / sizeof TESTS[0]))

static const char *const ALLOWED_FUNCS[] = {
	"ev", "has", "abs", "min", "max", "coalesce", "ifnull", "iif", "nullif", "round",
	"rose", "fell", "flat", "steady", "above", "below", "lo", "hi", NULL,
};

static int authorize(void *ud, int action, const char *a1, const char *a2, const char *a3,
                     const char *a4)
{
	(void)ud, (void)a1, (void)a3, (void)a4;
	if (action == SQLITE_SELECT)
		return SQLITE_OK;
	if (action == SQLITE_FUNCTION) {
		for (int i = 0; ALLOWED_FUNCS[i]; i++)
			if (a2 && sqlite3_stricmp(a2, ALLOWED_FUNCS[i]) == 0)
				return SQLITE_OK;
	}
	return SQLITE_DENY;
}

static int progress(void *ud)
{
	ExprCtx *c = ud;
	return ++c->steps > EXPR_MAX_STEPS;
}

static void fn_ev(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
	ExprCtx *c = sqlite3_user_data(cx);
	if (argc != 1 || sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
		sqlite3_result_error(cx, "ev() takes one evidence name in quotes", -1);
		return;
	}
	const char *name = (const char *)sqlite3_value_text(argv[0]);
	double v;
	if (name && c->fn(c->ctx, name, &v) && !isnan(v))
		sqlite3_result_double(cx, v);
	else
		sqlite3_result_null(cx);
}

static void fn_has(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
	ExprCtx *c = sqlite3_user_data(cx);
	if (argc != 1 || sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
		sqlite3_result_error(cx, "has() takes one evidence name in quotes", -1);
		return;
	}
	const char *name = (const char *)sqlite3_value_text(argv[0]);
	sqlite3_result_int(cx, name && c->fn(c->ctx, name, NULL));
}

typedef struct TestCtx {
	ExprCtx *c;
	int which;                /* index in TESTS */
} TestCtx;

static void fn_one_test(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
	TestCtx *t = sqlite3_user_data(cx);
	int need = TESTS[t->which].nargs + 1;
	if (argc != need || sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
		char msg[96];
		snprintf(msg, sizeof msg, "%s() takes an evidence name in quotes and %d number%s",
		         TESTS[t->which].name, need - 1, need - 1 == 1 ? "" : "s");
		sqlite3_result_error(cx, msg, -1);
		return;
	}
	double a = NAN, b = NAN;
	for (int i = 1; i < argc; i++) {
		int ty = sqlite3_value_type(argv[i]);
		if (ty != SQLITE_INTEGER && ty != SQLITE_FLOAT) {
			sqlite3_result_null(cx);
			return;
		}
		if (i == 1)
			a = sqlite3_value_double(argv[i]);
		else
			b = sqlite3_value_double(argv[i]);
	}
	const char *name = (const char *)sqlite3_value_text(argv[0]);
	double v;
	if (name && t->c->test && t->c->test(t->c->ctx, TESTS[t->which].name, name, a, b, &v) &&
	    !isnan(v))
		sqlite3_result_double(cx, v);
	else
		sqlite3_result_null(cx);
}

int store_expr_eval(Store *st, const char *expr, StoreEvLookupFn fn, void *ctx, double *out,
                    Err *err)
{
	return store_expr_eval_ex(st, expr, fn, NULL, ctx, out, err);
}

int store_expr_eval_ex(Store *st, const char *expr, StoreEvLookupFn fn, StoreEvTestFn test,
                       void *ctx, double *out, Err *err)
{
	*out = NAN;
	if (st == NULL || expr == NULL || fn == NULL)
		return err_set(err, TT_EINVAL, "store_expr_eval: missing argument");
	size_t len = strlen(expr);
	if (len == 0 || len > EXPR_MAX)
		return err_set(err, TT_EPARSE, "expression must have 1 to %d bytes", EXPR_MAX);
	ExprCtx c = {fn, test, ctx, 0};
	TestCtx tc[N_TESTS];
	sqlite3 *db = st->db;
	int rc = TT_OK;
	sqlite3_stmt *s = NULL;
	char sql[EXPR_MAX + 32];
	snprintf(sql, sizeof sql, "SELECT (%s)", expr);
	if (sqlite3_create_function_v2(db, "ev", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, &c, fn_ev,
	                               NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_create_function_v2(db, "has", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, &c, fn_has,
	                               NULL, NULL, NULL) != SQLITE_OK)
		return err_set(err, TT_ESTORE, "cannot register ev(): %s", sqlite3_errmsg(db));
	for (int i = 0; i < N_TESTS; i++) {
		tc[i].c = &c;
		tc[i].which = i;
		if (sqlite3_create_function_v2(db, TESTS[i].name, TESTS[i].nargs + 1,
		                               SQLITE_UTF8 | SQLITE_DETERMINISTIC, &tc[i], fn_one_test,
		                               NULL, NULL, NULL) != SQLITE_OK) {
			rc = err_set(err, TT_ESTORE, "cannot register %s(): %s", TESTS[i].name,
			             sqlite3_errmsg(db));
			goto out;
		}
	}
	sqlite3_set_authorizer(db, authorize, NULL);
	const char *tail = NULL;
	int prc = sqlite3_prepare_v2(db, sql, -1, &s, &tail);
	sqlite3_set_authorizer(db, NULL, NULL);
	if (prc != SQLITE_OK) {
		rc = err_set(err, TT_EPARSE, "expression '%s': %s", expr, sqlite3_errmsg(db));
		goto out;
	}
	while (tail && (*tail == ' ' || *tail == '\t' || *tail == '\n' || *tail == '\r'))
		tail++;
	if (s == NULL || (tail && *tail)) {
		rc = err_set(err, TT_EPARSE, "expression '%s': must be one expression", expr);
		goto out;
	}
	sqlite3_progress_handler(db, 1000, progress, &c);
	int step = sqlite3_step(s);
	sqlite3_progress_handler(db, 0, NULL, NULL);
	if (step == SQLITE_ROW) {
		int t = sqlite3_column_type(s, 0);
		if (t == SQLITE_INTEGER || t == SQLITE_FLOAT)
			*out = sqlite3_column_double(s, 0);
		else if (t != SQLITE_NULL)
			rc = err_set(err, TT_EPARSE, "expression '%s': result is not a number", expr);
		if (rc == 0 && sqlite3_step(s) != SQLITE_DONE)
			rc = err_set(err, TT_EPARSE, "expression '%s': more than one row", expr);
	} else {
		rc = err_set(err, TT_EPARSE, "expression '%s': %s", expr,
		             c.steps > EXPR_MAX_STEPS ? "too much work" : sqlite3_errmsg(db));
	}
out:
	sqlite3_finalize(s);
	/* The functions point at this call's ExprCtx: remove them. */
	sqlite3_create_function_v2(db, "ev", 1, SQLITE_UTF8, NULL, NULL, NULL, NULL, NULL);
	sqlite3_create_function_v2(db, "has", 1, SQLITE_UTF8, NULL, NULL, NULL, NULL, NULL);
	for (int i = 0; i < N_TESTS; i++)
		sqlite3_create_function_v2(db, TESTS[i].name, TESTS[i].nargs + 1, SQLITE_UTF8, NULL, NULL,
		                           NULL, NULL, NULL);
	return rc;
}
