/*
 * drills_priv.h - what hypotheses.c, decisions.c and diagnose.c share.
 */
#ifndef TT_DRILLS_PRIV_H
#define TT_DRILLS_PRIV_H

#include "diagnose.h"
#include "evidence.h"
#include "store.h"

typedef struct CatPred {
	char *text;
	char *expr;                 /* with placeholders */
	double weight;
	int against;
	int signature;
	char *why;                  /* the reason for its thresholds */
} CatPred;

typedef struct CatHyp {
	char *id, *title, *mechanism;
	char *param;                /* "dependency", "class" or "" */
	char *applies;              /* expression, or NULL */
	char *blames;               /* template, alternatives separated by '|' */
	char *check, *check_node, *check_class, *check_why;
	char *explains;             /* evidence template: its locus's explained share */
	char *detail;               /* text template shown with what it blames */
	char *remedy[DX_REMEDY_PARTS]; /* templates: what to change, what it
	                            * costs, what shows it worked; or NULL */
	CatPred *preds;
	int n_preds;
	int has_signature;          /* some predicate is a signature */
} CatHyp;

typedef struct Catalog {
	char *path;                 /* "built-in" or the file */
	CatHyp *h;
	int n;
} Catalog;

/* Loads and validates the catalog (NULL: built-in). Every expression is
 * compiled once on exprs to catch syntax errors. */
int catalog_load(const char *path, Store *exprs, Catalog **out, Err *err);
void catalog_free(Catalog *c);

/* Evaluates every hypothesis on e (best instance each) and ranks them.
 * exprs is the Store used to evaluate expressions. */
int hypotheses_evaluate(const Catalog *c, const Evidence *e, const Model *m, Store *exprs,
                        DxHypothesis **out, int *n, Err *err);
void dx_hypothesis_fini(DxHypothesis *h);

/* Evaluates the decisions on the ranked hypotheses. */
void decisions_evaluate(const Evidence *e, const Model *m, const DxHypothesis *hyp, int n_hyp,
                        const char *const *decide, DxDecision **out, int *n_out);

/* The pool guarding dependency dep in the model (name), or NULL. */
const char *dx_pool_of(const Model *m, const char *dep);

/* The model node of dependency dep (matched by service or label), or NULL. */
const ModelNode *dx_model_node(const Model *m, const char *dep);

#endif
