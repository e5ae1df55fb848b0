/*
 * model_infer.h - an endpoint model drafted from the data, and the places
 * where a given model and the data disagree.
 *
 * model_infer() reads the store (spans and metric series of a range) and
 * fills a Model (common/model.h) whose every field carries the reason it
 * was chosen (ModelNode.why, ModelPool.why, Model.why_*):
 *  - the ingress: the endpoint asked for, else the most common one (the
 *    service and route of the requests' entry spans, endpoints.h);
 *  - the nodes: the calls (by called service) and local spans of the
 *    aggregate DAG; mandatory when present in (nearly) every request and
 *    rarely cut short (client span in error, or the server outlived the
 *    call), optional otherwise; core is never inferred;
 *  - the class attribute: the stored workload class when spans carry one,
 *    else a low-cardinality string attribute of the root spans that varies
 *    between requests;
 *  - the pools, from OpenTelemetry semantic-convention metrics
 *    (db.client.connection.* by pool name, http.client.open_connections by
 *    server.address, executor.* and queue-age histograms by name and unit),
 *    matched to services by their labels (server.address, peer.service) or
 *    by normalised name tokens (model_infer_pool_match()).
 * Objective and budgets are left out: the data cannot say what the SLO is.
 */
#ifndef TT_MODEL_INFER_H
#define TT_MODEL_INFER_H

#include <stdint.h>

#include "analysis.h"
#include "err.h"
#include "model.h"
#include "store.h"

/* Drafts a model from the data of [from, to) (INT64_MIN/INT64_MAX: open).
 * Returns 0 and *out (free with model_free; inferred == 1) or a negative
 * code with err. A store without spans yields a model with no nodes. */
int model_infer(Store *st, int64_t from, int64_t to, Model **out, Err *err);

/* model_infer() of the endpoint (service, route) (endpoints.h); NULL: the
 * first endpoint of the range (the most common one). A dependency every
 * request of that endpoint calls is mandatory. */
int model_infer_endpoint(Store *st, int64_t from, int64_t to, const char *service,
                         const char *route, Model **out, Err *err);

/* How a pool name relates to a service name, by normalised tokens (split
 * on '-', '_', '.', space; lower case; generic words such as "pool",
 * "grpc", "http", "client" ignored):
 *   0: unrelated;
 *   1: the pool guards calls to that service ("pricing-grpc" / "pricing");
 *   2: the pool is that service's own database pool: it also carries a
 *      database word (pg, postgres, mysql, db, redis, ...) ("pricing-pg").
 * *score (may be NULL) is the number of the service's tokens matched. */
int model_infer_pool_match(const char *pool, const char *service, int *score);

/* A disagreement between a given model and the data. */
typedef struct ModelFinding {
	char *kind;    /* "pool_size", "pool_selector", "node_absent", "class_absent" */
	char *subject; /* the pool, node or class concerned */
	char *text;    /* one line a person reads */
} ModelFinding;

/* Compares model m with the data of [from, to): a pool size against the
 * metric max, a pool selector that matches no series, a model node absent
 * from the traces, a declared class absent from the spans. An inferred
 * model (m->inferred) yields nothing: it was drafted from the data, and
 * the class attribute it names may not be the one the import used (its
 * "why" says so). Returns 0 and *out / *n (free with
 * model_findings_free), or a negative code with err. */
int model_check(Store *st, const Model *m, int64_t from, int64_t to, ModelFinding **out, int *n,
                Err *err);

/* model_check() reading an analysis the caller already has instead of
 * computing one: a must be of the window [from, to) as asked, over every
 * class (no class filter); a baseline, the model, the skew tolerance do
 * not matter (only the window's nodes, requests and classes are read, all
 * counts). One from the aggregates (a->approx) serves when the window's
 * ends are whole minutes or open: its counts are then exact. An analysis
 * that does not fit, or NULL, is ignored and one is computed. a is
 * borrowed for the call. */
int model_check_with(Store *st, const Model *m, const Analysis *a, int64_t from, int64_t to,
                     ModelFinding **out, int *n, Err *err);
void model_findings_free(ModelFinding *f, int n);

#endif
