/*
 * model.h - the endpoint model: what traces cannot say on their own.
 *
 * Plain data. It is parsed from JSON by importers/model_json.c and read by
 * analysis/ and drills/. Every field is optional in the file; absent
 * semantics stay unknown (MODEL_UNKNOWN), never "false".
 */
#ifndef TT_MODEL_H
#define TT_MODEL_H

#include <stdint.h>

enum { MODEL_UNKNOWN = -1 };

typedef struct ModelNode {
	char *service;        /* the called service (dependency) or local service */
	char *operation;      /* NULL: any operation of the service */
	char *label;          /* short display name, NULL: service */
	int mandatory;        /* 1, 0 or MODEL_UNKNOWN */
	int core;             /* 1, 0 or MODEL_UNKNOWN */
	char *pool;           /* name of the client pool in front of it, or NULL */
	char *why;            /* why an inferred model says so ("why" in the file), or NULL */
} ModelNode;

typedef struct ModelPool {
	char *name;           /* "profile", "endpoint-executor" */
	char *kind;           /* "executor" | "client" */
	char *node;           /* service the pool guards */
	int64_t size;         /* slots/connections, 0 unknown */
	/* Metric names (and label filters) measuring it; NULL: defaults. */
	char *used_metric;
	char *max_metric;
	char *pending_metric;
	char *wait_metric;
	char *label_key;      /* label selecting this pool, e.g. "pool.name" */
	char *label_value;
	char *why;            /* "why" in the file, or NULL */
} ModelPool;

typedef struct ModelBudget {
	char *id;             /* "p99", "queue_age", ... */
	char *evidence;       /* evidence name, e.g. "ingress.p99_ms" */
	char *op;             /* ">" or "<" : breached when value op threshold */
	double threshold;
	char *unit;           /* "ms", "%", "ratio", "min" */
	char *label;          /* "p99 > 300 ms" */
} ModelBudget;

typedef struct Model {
	char *path;           /* file it came from */
	char *endpoint;       /* "GET /v2/home" */
	char *root_service;   /* service of the ingress span, NULL: infer */
	char *root_operation; /* operation of the ingress span, NULL: infer */
	double objective_ms;  /* 0: none */
	double objective_pct; /* 99 */
	char *class_key;      /* "workload.class" */
	char **classes;       /* declared class values */
	int n_classes;
	double *class_mix;    /* declared baseline mix per class, or NULL */
	ModelNode *nodes;
	int n_nodes;
	ModelPool *pools;
	int n_pools;
	ModelBudget *budgets;
	int n_budgets;
	/* Reasons an inferred model gives ("why" of "root", "classes",
	 * "objective" in the file); NULL when not said. */
	char *why_root;
	char *why_classes;
	char *why_objective;
	int inferred;         /* 1: drafted from the data (model_infer), not read from a file */
} Model;

/* Finds the node entry for (service, operation); NULL when the model does
 * not mention it. operation may be NULL. */
const ModelNode *model_find_node(const Model *m, const char *service, const char *operation);

void model_free(Model *m);   /* NULL is a no-op */

struct Buf;

/* Appends m as a model file (docs/model.md) to out: a JSON object the
 * model parser reads back to the same Model, with a "why" string beside
 * each field an inferred model explains. Unknown values (MODEL_UNKNOWN,
 * size 0, no objective) are left out rather than written as false. */
void model_write_json(const Model *m, struct Buf *out);

#endif
