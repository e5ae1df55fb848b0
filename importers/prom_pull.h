/*
 * prom_pull.h - instant queries against a Prometheus-compatible HTTP API
 * (GET /api/v1/query), results stored as metric snapshots.
 *
 * A PromQuerySet holds the queries of one pull: the ones an endpoint
 * model implies (pool used/max/pending/wait, plus defaults for executor
 * queue age, CPU, request rate and class mix; docs/live.md lists the
 * PromQL) and ad-hoc ones from --query. prom_pull_round() evaluates every
 * query at one evaluation time; each query is its own transaction (one
 * source row, its points, and a record of the query text, URL and
 * evaluation time in the store), so a query that fails stores nothing
 * and does not stop the others.
 *
 * How a result is stored:
 *  - family: the query's family when it has one (model queries store
 *    under the model's metric name, so pulled pool metrics read like
 *    imported ones); else the sample's __name__ label when the expression
 *    kept it; else the query's name (NAME=PROMQL) or the PromQL text;
 *  - type: "unknown" for samples that kept their __name__ (the API does
 *    not say what they are), "gauge" for computed values;
 *  - labels: the sample's labels without __name__ (a model query renames
 *    the Prometheus form of the pool label back to the model's key);
 *  - time: the sample's own timestamp (the evaluation time for vector and
 *    scalar results, each value's time for matrix results), so pulling
 *    the same instant twice adds nothing.
 */
#ifndef TT_PROM_PULL_H
#define TT_PROM_PULL_H

#include <stdint.h>

#include "err.h"
#include "model.h"
#include "store.h"

typedef struct PromQuery {
	char *name;          /* "pool.profile.used", or the user's NAME; never NULL */
	char *promql;
	char *family;        /* store under this family; NULL: see above */
	char *label_from;    /* rename this result label ... */
	char *label_to;      /* ... to this one (both NULL: none) */
} PromQuery;

typedef struct PromQuerySet {
	PromQuery *q;
	int n, cap;
} PromQuerySet;

void prom_queries_init(PromQuerySet *s);
void prom_queries_fini(PromQuerySet *s);

/* Adds the queries a model implies (m may be NULL: defaults only). range
 * is a PromQL duration for rate() windows, e.g. "1m". */
void prom_queries_from_model(PromQuerySet *s, const Model *m, const char *range);

/* Adds an ad-hoc query: "PROMQL" or "NAME=PROMQL" (NAME: letters, digits,
 * '_', '.', ':' and '-', not starting with a digit). Returns 0 or
 * TT_EINVAL for an empty query. */
int prom_queries_add(PromQuerySet *s, const char *spec, Err *err);

/* Prometheus name of a model metric or label name: every character
 * outside [A-Za-z0-9_:] becomes '_' (a leading digit gets a '_' before
 * it). Returns a malloc'd string. */
char *prom_name(const char *model_name);

typedef struct PromPullOptions {
	const char *url;         /* base URL: http://host:9090 or with a path prefix */
	long timeout_ms;         /* whole HTTP request; 0: 10000 */
	const char *bearer_token;/* NULL: none */
	const char *const *headers; /* more "Name: value" lines, NULL-terminated;
	                             * may be NULL (--header, the tenant) */
	int64_t eval_ms;         /* evaluation time, unix ms; 0: now */
} PromPullOptions;

/* What happened to one query. */
typedef struct PromQueryOutcome {
	const PromQuery *query;  /* borrowed from the set */
	int ok;
	char result_type[16];    /* "vector", "scalar", "matrix" */
	int64_t samples;         /* values in the result */
	int64_t added;           /* new points */
	int64_t duplicate;       /* points already stored */
	char warnings[256];      /* the API's warnings, "" when none */
	Err err;                 /* when !ok */
} PromQueryOutcome;

/* Called after each query; strings borrowed for the callback. */
typedef void (*PromOutcomeFn)(void *ctx, const PromQueryOutcome *o);

typedef struct PromRoundResult {
	int64_t eval_ms;
	int queries, ok, failed;
	int64_t added, duplicate;
} PromRoundResult;

/* Runs every query of s once at one evaluation time. Returns 0 when all
 * succeeded, else the code of the first failure (TT_EIO for HTTP and
 * transport errors, TT_EPARSE for a response that is not the API's JSON
 * or a "status":"error" answer, TT_ESTORE) with err naming the query; the
 * queries that succeeded are stored either way. */
int prom_pull_round(Store *st, const PromQuerySet *s, const PromPullOptions *opt,
                    PromOutcomeFn fn, void *ctx, PromRoundResult *res, Err *err);

#endif
