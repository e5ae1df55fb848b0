/*
 * store_expr.h - evaluates small arithmetic/boolean expressions over named
 * evidence with SQLite's expression engine, so predicates can live in data
 * files (drills/catalog/hypotheses.json) without a hand-written parser.
 *
 *     ev('dep.pricing.client_wait.p99_ms') > 2 * ev('dep.pricing.client_wait.p99_ms@baseline')
 *
 * The expression is compiled as `SELECT (expr)` with an authorizer that
 * allows nothing but the SELECT itself and a short list of pure functions:
 * no table, view, pragma, attach, recursive CTE or other statement can be
 * reached, and a progress handler bounds the work. Functions available:
 *     ev(name)        the evidence value, NULL when missing
 *     has(name)       1 when the evidence is present, else 0
 *     abs, min, max, coalesce, ifnull, iif, nullif, round
 * A NULL result means "cannot be decided" (some evidence was missing, a
 * division by zero): *out is NAN.
 */
#ifndef TT_STORE_EXPR_H
#define TT_STORE_EXPR_H

#include "err.h"
#include "store.h"

/* Looks up evidence: returns 1 and sets *out when name has a value, 0 when
 * it is missing. */
typedef int (*StoreEvLookupFn)(void *ctx, const char *name, double *out);

/* Evaluates expr on st's connection (a Store on ":memory:" is enough).
 * Returns 0 with *out set (NAN for a NULL result), or TT_EPARSE with a
 * message for a syntax error, a denied construct, a non-numeric result or
 * an expression longer than 4096 bytes. Not thread-safe per Store. */
int store_expr_eval(Store *st, const char *expr, StoreEvLookupFn fn, void *ctx, double *out,
                    Err *err);

#endif
