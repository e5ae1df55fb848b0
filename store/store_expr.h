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
 * and, when the caller gives a test function (store_expr_eval_ex), tests
 * that know each value's sampling interval (docs/diagnosis.md):
 *     rose(name, min_abs, min_factor)  window above baseline, significantly
 *     fell(name, min_abs, min_factor)  window below baseline, significantly
 *     flat(name, min_abs, min_factor)  no rise of that size fits the interval
 *                                      (0 when rose() holds)
 *     steady(name, tol)                the ratio's interval inside 1 +- tol
 *     above(name, t), below(name, t)   the value's interval beyond t
 *     lo(name), hi(name)               the bounds of the value's interval
 * A test is 1 (holds), 0 (does not hold) or NULL (cannot tell).
 * A NULL result means "cannot be decided" (some evidence was missing, a
 * division by zero): *out is NAN.
 */
#ifndef TT_STORE_EXPR_H
#define TT_STORE_EXPR_H

#include "err.h"
#include "store.h"

/* Looks up evidence: returns 1 and sets *out when name has a value, 0 when
 * it is missing (or its value is NAN). out is NULL for has(), which only
 * asks whether the value is there. */
typedef int (*StoreEvLookupFn)(void *ctx, const char *name, double *out);

/* A test over the evidence: op is one of "rose", "fell", "flat", "steady",
 * "above", "below", "lo", "hi"; a and b are its numeric arguments (NAN
 * when not given). Returns 1 with *out (1 or 0 for a test, the bound for
 * lo/hi) or 0 for "cannot tell" / missing (the SQL value is NULL). */
typedef int (*StoreEvTestFn)(void *ctx, const char *op, const char *name, double a, double b,
                             double *out);

/* Evaluates expr on st's connection (a Store on ":memory:" is enough).
 * Returns 0 with *out set (NAN for a NULL result), or TT_EPARSE with a
 * message for a syntax error, a denied construct, a non-numeric result or
 * an expression longer than 4096 bytes. Not thread-safe per Store. */
int store_expr_eval(Store *st, const char *expr, StoreEvLookupFn fn, void *ctx, double *out,
                    Err *err);

/* The same with the interval-aware tests; test may be NULL (then every
 * test is NULL). */
int store_expr_eval_ex(Store *st, const char *expr, StoreEvLookupFn fn, StoreEvTestFn test,
                       void *ctx, double *out, Err *err);

#endif
