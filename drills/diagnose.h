/*
 * diagnose.h - the diagnosis engine: evidence -> ranked hypotheses ->
 * discriminating checks -> guarded decisions.
 *
 * diagnose_run() computes the named evidence of (model, window, baseline)
 * from the store (spans through analysis/, metrics through the store's
 * metric read API) and/or an observation sheet, evaluates every hypothesis
 * of the catalog (drills/catalog/hypotheses.json: data, not code) on it,
 * ranks them, and evaluates the decisions with their guards. The engine
 * never knows which data set it is looking at: everything it says comes
 * from the evidence, the model and the catalog.
 *
 * Stable API (other modules, e.g. drill scoring, build on it):
 *  - ids of hypotheses are catalog ids ("client-pool-wait", ...); each
 *    appears at most once in Diagnosis.hyp, in rank order (rank 1 first),
 *    with the node it blames (a dependency such as "pricing", a workload
 *    class such as "enterprise", a host, or the endpoint's root service);
 *  - decision ids are "raise-endpoint-concurrency", "add-api-hosts",
 *    "degrade:<node>", "add-capacity:<node>", "hold-rollout", with verdict
 *    DX_SUPPORTED, DX_UNSUPPORTED or DX_REFUSED and a reason;
 *  - check names are listed by check_names(); drills/checks.h runs them.
 *
 * Ownership: a Diagnosis is owned by the caller and freed with
 * diagnosis_free(); every pointer inside it lives as long as it does.
 */
#ifndef TT_DIAGNOSE_H
#define TT_DIAGNOSE_H

#include <stdint.h>

#include "analysis.h"
#include "buf.h"
#include "err.h"
#include "evidence.h"
#include "model.h"
#include "period.h"
#include "store.h"

struct Sheet; /* importers/sheet.h */

typedef struct DiagnoseOptions {
	const Model *model;          /* endpoint model; NULL: none (semantics unknown) */
	Period period;               /* window (open sides: all data) and baseline */
	const struct Sheet *sheet;   /* observation sheet (sheet_load()), or NULL;
	                              * its values override computed ones */
	const char *catalog_path;    /* hypothesis catalog file; NULL: the built-in
	                              * copy of drills/catalog/hypotheses.json */
	const Analysis *analysis;    /* an analysis of the same window/baseline to
	                              * reuse (borrowed), or NULL to compute one */
	const struct EvRequestSet *requests[2]; /* its request sets of window and
	                              * baseline (evidence_analysis_run(); borrowed),
	                              * or NULL: read by the diagnosis */
	const char *const *decide;   /* NULL-terminated decision ids to judge as
	                              * well ("degrade:pricing"), besides those for
	                              * the nodes the leading hypotheses blame; NULL:
	                              * none. Borrowed for the call. */
	SkewTolerance skew;          /* sibling skew tolerance; zero: the default */
	EvSampling sampled;          /* how the traces were sampled (--sampled); kind
	                              * EV_SAMPLED_UNKNOWN: as the data says */
} DiagnoseOptions;

/* Outcome of one predicate of a hypothesis or guard. */
enum { DX_HOLDS = 1, DX_NOT = 0, DX_MISSING = -1 };

typedef struct DxPredicate {
	char *text;                  /* what it says, in words ("client wait more than doubled") */
	char *expr;                  /* the expression evaluated (names substituted) */
	double weight;
	int against;                 /* 0: supports the hypothesis when it holds; 1: contradicts */
	int signature;               /* the hypothesis's own observation (catalog) */
	int outcome;                 /* DX_HOLDS, DX_NOT or DX_MISSING */
	char **names;                /* evidence names the expression read */
	int n_names;
	char *why;                   /* why its thresholds are what they are, or NULL */
	char *reason;                /* DX_MISSING: why it cannot tell, one clause (the
	                              * interval bound that missed the bar, the sample
	                              * that leaves a percentile unbounded, the missing
	                              * value); NULL otherwise */
} DxPredicate;

/* The parts of a hypothesis's remedy (catalog "remedy"). */
enum { DX_REMEDY_CHANGE, DX_REMEDY_COST, DX_REMEDY_SHOWS, DX_REMEDY_PARTS };

typedef struct DxHypothesis {
	char *id;                    /* catalog id, e.g. "client-pool-wait" */
	char *title;                 /* one line */
	char *mechanism;             /* the catalog's paragraph */
	char *node;                  /* what it blames: dependency, class, host or root service */
	char *param;                 /* "dependency", "class", "host" or "" */
	double score;                /* sum of weights of supporting predicates that hold
	                              * minus those of contradicting predicates that hold */
	int rank;                    /* 1 = most likely */
	int signature;               /* 1 when a predicate marked as its signature holds */
	char *check;                 /* discriminating check name (check_names()) */
	char *check_node;            /* --node for the check, or NULL */
	char *check_class;           /* --class for the check, or NULL */
	char *check_why;             /* what the check separates */
	char **supported_by;         /* evidence names of holding supporting predicates */
	int n_supported_by;
	char **contradicted_by;      /* evidence names of holding contradicting predicates */
	int n_contradicted_by;
	char **missing;              /* evidence names that were missing */
	int n_missing;
	DxPredicate *preds;          /* every predicate with its outcome */
	int n_preds;
	char *explains;              /* evidence name of the share of the percentile's
	                              * rise its locus explains (attribution), or NULL */
	char *detail;                /* one line on what it blames (e.g. what the
	                              * grown class brings per request), or NULL */
	char *rank_note;             /* why it sits where it does when a ranking rule
	                              * (not the score) placed it, or NULL */
	char *remedy[DX_REMEDY_PARTS]; /* what to change, what it will cost, what
	                              * would show it worked, for what it blames
	                              * (catalog "remedy"); each NULL when the
	                              * catalog gives none or nothing is blamed */
	int not_applicable;          /* 1: nothing to evaluate it on (no workload class,
	                              * no dependency that meets its condition): ranked
	                              * last, rank_note says why, no check is suggested */
} DxHypothesis;

enum { DX_SUPPORTED, DX_UNSUPPORTED, DX_REFUSED };

typedef struct DxDecision {
	char *id;                    /* "hold-rollout", "degrade:pricing", ... */
	int verdict;                 /* DX_SUPPORTED, DX_UNSUPPORTED, DX_REFUSED */
	char *reason;                /* one or two sentences with the numbers used */
} DxDecision;

typedef struct Diagnosis {
	Evidence *evidence;          /* owned */
	DxHypothesis *hyp;           /* ranked, hyp[0] has rank 1 */
	int n_hyp;
	DxDecision *dec;             /* in decision_ids() order, parameterised
	                              * ones expanded per node */
	int n_dec;
	char *catalog;               /* catalog path or "built-in" */
	char **warnings;             /* what makes the comparison weaker (a thin
	                              * window, a baseline whose population differs),
	                              * shown before the ranking */
	int n_warnings;
} Diagnosis;

/* Runs the diagnosis. st may be NULL when opt->sheet is given (a sheet
 * alone is enough: evidence that needs telemetry is then missing). Returns
 * 0 and *out, or a negative TT_E* code with err set (bad catalog, store
 * error, neither store nor sheet). */
int diagnose_run(Store *st, const DiagnoseOptions *opt, Diagnosis **out, Err *err);
void diagnosis_free(Diagnosis *d);

/* "[281.2, 330.5 ms] n=3000" for a value with an interval ("?" for an
 * unbounded side: too few observations); "" without one. */
void diagnosis_format_interval(const EvValue *v, char *out, size_t sz);

/* The rise of the objective's percentile, "+78.8 ms [-58.1, 222.7 ms]
 * n=300", and the one verdict on it that the ranking uses, "cannot tell:
 * the rise's interval reaches 0 (...); nothing attributed" (or "rose: ...",
 * "did not rise: ..."). Returns 0 (and writes nothing) when no rise was
 * computed (a sheet, no baseline). */
int diagnosis_rise(const Diagnosis *d, char *rise, size_t rsz, char *verdict, size_t vsz);

/* 1 when the explained shares are of the p90's rise: the objective's
 * percentile did not rise by the one verdict, the p90's did. */
int diagnosis_attributed_other(const Diagnosis *d);

/* "explains 64 % of the rise (95 % interval 41 to 88 %)" for a hypothesis
 * whose locus has an attribution; "" when it has none. */
void diagnosis_format_explained(const Diagnosis *d, const DxHypothesis *h, char *out, size_t sz);

/* "remedy: <change>. Cost: <cost>. Worked when: <shows>" (sanitized),
 * or "" when h has none. */
void diagnosis_format_remedy(const DxHypothesis *h, char *out, size_t sz);            /* NULL is a no-op */

/* Accessors (NULL / -1 when absent). */
const DxHypothesis *diagnosis_hypothesis(const Diagnosis *d, const char *id);
int diagnosis_rank(const Diagnosis *d, const char *id);
const DxDecision *diagnosis_decision(const Diagnosis *d, const char *id);

/* "supported", "unsupported", "refused". */
const char *dx_verdict_name(int verdict);

/* Renderings. JSON: one object {"evidence": [...], "budgets": [...],
 * "hypotheses": [{id, node, score, rank, ...}], "decisions": [{id, verdict,
 * reason}]}, documented in docs/diagnosis.md. Text: for a terminal. */
void diagnosis_json(const Diagnosis *d, const Model *m, Buf *out);

/* Adds a budget's verdict to the JSON object o: "value" (null when
 * unknown), "interval" ([lo, hi] in the budget's unit, null for an
 * unbounded side; null when exact), "state" (budget_state_name()),
 * "source", "evidence_used" (the figure judged: the budget's evidence or
 * its .metric / .spans twin), "source_text", "other_source" and
 * "provenance". `diagnose` and `report` write budgets with it. */
struct cJSON;
void diagnosis_budget_json(struct cJSON *o, const BudgetResult *r);
void diagnosis_text(const Diagnosis *d, const Model *m, Buf *out);

/* Hypothesis ids of the catalog at path (NULL: built-in), NULL-terminated;
 * the caller frees the array and strings with dx_strv_free(). */
char **diagnose_catalog_ids(const char *path, Err *err);
void dx_strv_free(char **v);

/* Names of the checks, NULL-terminated, static (drills/checks.c). */
const char *const *check_names(void);

/* Base decision ids, NULL-terminated, static (drills/decisions.c):
 * "raise-endpoint-concurrency", "add-api-hosts", "degrade",
 * "add-capacity", "hold-rollout". "degrade" and "add-capacity" take a
 * node: "degrade:<node>". */
const char *const *decision_ids(void);

/* What engine decision id does, in one neutral line ("add-capacity:pricing"
 * -> "more capacity for pricing: a bigger pool toward it and more pricing
 * servers behind it"), the wording every screen and drill uses for it.
 * Returns 0, or -1 when id is not an engine decision (a drill's own, or
 * "degrade" without a node). */
int decision_describe(const char *id, char *out, size_t sz);

#endif
