/*
 * evidence.h - named numbers about an endpoint for (model, window,
 * baseline): the vocabulary hypotheses, budgets and decisions are written
 * in. docs/evidence.md is the table of names, units and how each is
 * computed.
 *
 * Every value carries where it came from:
 *  - spans:   computed from traces (exact nearest-rank quantiles with n);
 *  - metric:  computed from stored metric points (gauges averaged over the
 *             window, or a quantile interpolated from histogram buckets,
 *             with the bucket scheme named);
 *  - sheet:   supplied by an observation sheet;
 *  - model:   declared by the endpoint model (objective, optional/core);
 *  - derived: computed from other evidence (e.g. mix.change).
 * A value that cannot be computed is marked missing, never 0. Quantiles
 * from fewer than 100 observations and ratios from fewer than 30 requests
 * are flagged as small samples.
 *
 * A baseline value is the same name with "@baseline" appended.
 *
 * Ownership: evidence_compute() returns an Evidence the caller frees with
 * evidence_free(); names, units and provenance strings live as long as it.
 */
#ifndef TT_EVIDENCE_H
#define TT_EVIDENCE_H

#include <stddef.h>
#include <stdint.h>

#include "analysis.h"
#include "err.h"
#include "model.h"
#include "period.h"
#include "store.h"

enum {
	EV_SRC_MISSING = 0,
	EV_SRC_SPANS,
	EV_SRC_METRIC,
	EV_SRC_SHEET,
	EV_SRC_MODEL,
	EV_SRC_DERIVED,
	EV_SRC_OPTION,        /* given on the command line (--sampled) */
};

/* How the traces were sampled (evidence_sampling.c). */
enum {
	EV_SAMPLED_UNKNOWN = 0, /* nothing says */
	EV_SAMPLED_ALL,         /* every request traced */
	EV_SAMPLED_HEAD,        /* a uniform share decided up front (ratio, or 0 unknown) */
	EV_SAMPLED_TAIL,        /* slow and failed requests kept: not a population */
};

typedef struct EvSampling {
	int kind;             /* EV_SAMPLED_* */
	double ratio;         /* EV_SAMPLED_HEAD: the probability a request's trace
	                       * was kept, 0 < ratio < 1; 0 when not known */
} EvSampling;

enum {
	EV_Q_NONE = 0,        /* not a quantile */
	EV_Q_EXACT,           /* nearest rank over raw observations */
	EV_Q_HISTOGRAM,       /* interpolated inside histogram buckets */
};

typedef struct EvValue {
	char *name;           /* "dep.pricing.client_wait.p99_ms@baseline" */
	double value;         /* NAN when missing */
	int missing;          /* 1: could not be computed (value is NAN) */
	char *unit;           /* "ms", "ratio", "count", "1/s", "flag" */
	int source;           /* EV_SRC_* */
	int qkind;            /* EV_Q_* */
	int64_t n;            /* observations behind it (requests, calls,
	                       * points); 0 when not applicable */
	int small_sample;     /* too few observations to trust */
	double lo, hi;        /* 95 % interval when has_ci (may be -INFINITY /
	                       * INFINITY: too few observations for that bound);
	                       * without has_ci the value is taken as exact
	                       * (model, sheet, metric gauges, counts) */
	int has_ci;
	int64_t top_k;        /* > 0: read off the top_k slowest of the n
	                       * requests of its range (a pulled slowest set
	                       * with its range's count, evidence_top.c):
	                       * what all n would give, from top_k traces */
	char *provenance;     /* one line: "spans: exact p99 of 1240 calls",
	                       * "metric db.client.connection.wait_time: p99
	                       * interpolated from explicit buckets [...]",
	                       * "sheet pricing-matched-peak" */
} EvValue;

/* A window value compared with its baseline ("x" against "x@baseline"):
 * the difference and the ratio with 95 % intervals, combined from the two
 * values' own intervals by the method of variance estimates recovery
 * (MOVER; for two proportions with Wilson intervals this is Newcombe's
 * interval). A value without an interval counts as exact. */
typedef struct EvChange {
	double w, b;          /* window and baseline values */
	double d, d_lo, d_hi; /* w - b */
	double r, r_lo, r_hi; /* w / b (NAN when b <= 0) */
	int sampled;          /* either side carries a sampling interval */
} EvChange;

/* A string-valued fact that goes with the numbers (e.g. the host with the
 * highest slow lift), used to name what a hypothesis blames. */
typedef struct EvFact {
	char *name;           /* "placement.top_host" */
	char *value;          /* "api-07" */
} EvFact;

typedef struct Evidence {
	EvValue *v;           /* sorted by name after evidence_finish() */
	int n, cap;
	EvFact *facts;
	int n_facts;
	char **deps;          /* dependency names seen (model, DAG, names) */
	int n_deps;
	char **classes;       /* workload classes seen */
	int n_classes;
	char **hosts;         /* API hosts seen in spans */
	int n_hosts;
	char **callers;       /* services seen calling two dependencies or more */
	int n_callers;
	char *root_service;   /* the endpoint's service, or NULL */
	int has_spans;        /* a window with at least one request was read */
	int has_baseline;     /* a baseline population was read or supplied */
	EvSampling sampling;  /* how the window's traces were sampled */
	char sampling_how[200]; /* what says so ("tracestate ot on 400 of 400
	                       * root spans", "given with --sampled") */
} Evidence;

typedef struct EvidenceOptions {
	const Model *model;       /* may be NULL */
	Period period;            /* window (open sides: all data) and baseline */
	const Analysis *analysis; /* reuse (borrowed, same window/baseline), or NULL */
	int skip_requests;        /* no request pass (late work, omission, fan-out,
	                           * placement, ... stay absent); with analysis
	                           * given this reads no spans at all */
	int skip_spans;           /* metrics and model only */
	SkewTolerance skew;       /* sibling skew tolerance (serial calls, the
	                           * analysis when computed here); zero: default */
	EvSampling sampled;       /* how the traces were sampled, as the user says
	                           * (--sampled); kind EV_SAMPLED_UNKNOWN: read
	                           * from the data (tracestate, sampler tags) */
	const struct EvRequestSet *requests[2]; /* the window's and the baseline's
	                           * request sets read with the analysis
	                           * (evidence_analysis_run(), same question;
	                           * borrowed), or NULL: read here */
} EvidenceOptions;

/* Computes evidence from the store: spans (through analysis_run() unless
 * opt->analysis is given, plus one pass over the requests) and metrics
 * (joined to pools by the model's pool mapping and the OpenTelemetry
 * default names). st may be NULL: then only model evidence is present.
 * Returns 0 and *out (owned by the caller) or a negative code with err. */
int evidence_compute(Store *st, const EvidenceOptions *opt, Evidence **out, Err *err);

/* An empty evidence set to fill with evidence_supply(). */
Evidence *evidence_new(void);
void evidence_free(Evidence *e);              /* NULL is a no-op */

/* Adds or replaces name with a value from source (EV_SRC_*) and a
 * provenance line (copied). Used for sheet values: they override what was
 * computed. */
void evidence_supply(Evidence *e, const char *name, double value, const char *unit,
                     int source, const char *provenance);

/* Recomputes derived values (mix.change, ingress.p99_change_ratio, ...)
 * from what is present and sorts. Call after the last evidence_supply(). */
void evidence_finish(Evidence *e);

/* The value named name, or NULL when it was never computed. A value that
 * exists but is missing has missing == 1. */
const EvValue *evidence_get(const Evidence *e, const char *name);

/* 1 and *out when name is present and not missing; 0 otherwise. */
int evidence_value(const Evidence *e, const char *name, double *out);

/* Compares name with name@baseline. Returns 1 and fills *c when both are
 * present and not missing; 0 otherwise. */
int evidence_change(const Evidence *e, const char *name, EvChange *c);

/* Verdicts of a comparison, three-valued like the predicates that use
 * them: 1 holds, 0 does not hold, -1 cannot tell (the samples are too
 * small to decide, or a value is missing). See docs/diagnosis.md.
 *  rose:   w - b >= min_abs, w / b >= min_factor (0: not asked) and the
 *          difference's lower bound above 0; 0 when the point change is
 *          smaller than asked
 *  fell:   the mirror image
 *  flat:   the equivalence test: the difference's upper bound is under
 *          min_abs, or the ratio's under min_factor (no rise of the asked
 *          size fits the interval); 0 when rose() holds with the same bar
 *  steady: the ratio's interval inside 1/(1+tol) .. 1+tol; 0 wholly outside
 *  above / below: the value's interval wholly above / below threshold */
int evidence_rose(const Evidence *e, const char *name, double min_abs, double min_factor);
int evidence_fell(const Evidence *e, const char *name, double min_abs, double min_factor);
int evidence_flat(const Evidence *e, const char *name, double min_abs, double min_factor);
int evidence_steady(const Evidence *e, const char *name, double tol);
int evidence_above(const Evidence *e, const char *name, double threshold);
int evidence_below(const Evidence *e, const char *name, double threshold);

/* The same tests by name (op: "rose", "fell", "flat", "steady", "above",
 * "below"; a and b their numbers, b unused by the one-number tests), and
 * when the answer is -1, why, in one clause, into why (sz bytes; may be
 * NULL): the interval bound that missed the bar ("the 95 % interval's
 * lower bound 28.0 % is under 33.0 %"), the sample that leaves a
 * percentile unbounded ("the baseline's 250 calls give the p99 no upper
 * bound") or the value that is missing, with its provenance. The reason is
 * made here, where the test is decided, so every screen says the same. */
int evidence_test(const Evidence *e, const char *op, const char *name, double a, double b,
                  char *why, size_t sz);

/* The smallest rise of the endpoint's percentile that matters: 5 ms and
 * 5 % of the baseline's value. */
#define EV_RISE_MIN_MS 5.0
#define EV_RISE_MIN_FACTOR 1.05
/* Fewer requests than this on either side: their p99 is their maximum,
 * and no rise of it can be shown. */
#define EV_RISE_MIN_N 100

/* Did the objective's percentile rise? The one verdict the diagnosis's
 * headline, ingress.rose, ingress.moved, the attribution and the null
 * hypothesis's place all use, so no screen shows a rise next to "did not
 * rise": 1 when it rose by EV_RISE_MIN_MS and EV_RISE_MIN_FACTOR or more
 * beyond sampling noise, 0 when its interval leaves no room for such a
 * rise (an equivalence test), -1 cannot tell (also when either side holds
 * fewer than EV_RISE_MIN_N requests). It reads the bootstrap
 * interval of the rise itself (ingress.rise_ms, ingress.rise_ratio) when
 * the request pass made one and no sheet overrides the p99, else compares
 * ingress.p99_ms with its baseline. say (may be NULL) gets one clause
 * saying why, with the interval. */
int evidence_objective_rose(const Evidence *e, char *say, size_t sz);

/* v's provenance without its source tag ("spans: ", "derived: ", ...),
 * for a sentence that already names the value. Borrowed from v. */
const char *evidence_provenance_text(const EvValue *v);

/* A bound of name's interval (upper: 1 the upper, 0 the lower; the value
 * itself when it carries no interval): 1 and *out, or 0 with why when the
 * value is missing or that side is unbounded. */
int evidence_bound(const Evidence *e, const char *name, int upper, double *out, char *why,
                   size_t sz);

/* Wilson score interval of k successes in n trials at QUANT_CI_LEVEL. */
void evidence_wilson(double k, double n, double *lo, double *hi);

/* A fact's value, or NULL. */
const char *evidence_fact(const Evidence *e, const char *name);

/* "spans", "metric", "sheet", "model", "derived", "option", "missing". */
const char *evidence_source_name(int source);

/* Where a figure comes from, in the words every screen uses: "spans, 437
 * sampled calls", "metric, 7,147 calls", "sheet", "model", "derived"
 * ("sampled" when the traces are known or seen to be a sample). e may be
 * NULL. */
void evidence_source_text(const Evidence *e, const EvValue *v, char *out, size_t sz);

/* Parses --sampled: a share ("6%", "0.06", "1/16"), "tail" or "all".
 * 0 and *out, or -1 with the reason in why. */
int evidence_sampling_parse(const char *text, EvSampling *out, char *why, size_t sz);

/* The sampling probability a W3C tracestate's OpenTelemetry member says
 * (ot=th:<hex>: 1 - threshold / 2^56; ot=p:<n>: 2^-n), or -1. */
double evidence_tracestate_probability(const char *tracestate);

/* One sentence for the Board and the reports about the traces' sampling
 * (a head sample and its rate, a tail sample, or traces that are a
 * sample of what the metrics counted although nothing says how). Returns
 * 1 when it wrote one, 0 when there is nothing to say. */
int evidence_sampling_note(const Evidence *e, char *out, size_t sz);

/* Makes a name segment from data (a service or class name): lowercase
 * [a-z0-9_], other bytes become '_'. Writes at most sz bytes. */
void evidence_segment(const char *s, char *out, unsigned sz);

/* ---- the requests behind the evidence (evidence_req.c) ------------------ */

/* One endpoint request of a range, as the request pass sees it. */
typedef struct EvRequest {
	int64_t start_ns;         /* root span start */
	float ingress_ms;         /* root span + queue before it */
	float queue_ms;           /* queue before the root span, NAN when not carried */
	int16_t cls;              /* index in EvRequestSet.classes, -1 unknown */
	int16_t host;             /* index in EvRequestSet.hosts, -1 unknown */
	uint8_t late;             /* EV_LATE_* bits: work after the root ended or after
	                           * the caller gave up (abandoned), or calls started
	                           * after the deadline had passed */
	uint8_t omitted;          /* an optional dependency timed out, failed or was
	                           * skipped */
	uint8_t slow;             /* in the tail set used for placement */
	uint8_t error;            /* root span status error */
	int16_t calls;            /* client calls (attempts) in the request */
	int16_t width;            /* largest number of overlapping sibling calls */
	int32_t n_ops;            /* its timing program: EvRequestSet.ops[op_off..] */
	int64_t op_off;
} EvRequest;

/* One span of a request's timing program: how the request's end follows
 * from its spans' durations (see attribution.h). Spans wholly outside
 * their parent, orphans and children that outlive their parent are left
 * out: they do not hold the request. Indices are relative to the
 * request's first op; op 0 is the root; children come in start order. */
enum { EV_OP_ROOT, EV_OP_CLIENT, EV_OP_SERVER, EV_OP_LOCAL };

typedef struct EvOp {
	int32_t first_child;      /* -1: none */
	int32_t next_sibling;     /* -1: none */
	int32_t pred;             /* the sibling it started after, -1: the parent's start */
	int32_t call;             /* CLIENT and its SERVER: index in EvRequestSet.calls, else -1 */
	uint8_t role;             /* EV_OP_* */
	float gap_ms;             /* start minus (pred's end, or the parent's start), >= 0 */
	float dur_ms;             /* own duration */
	float tail_ms;            /* end minus the latest child's end (when it has children) */
} EvOp;

enum { EV_LATE_ABANDONED = 1, EV_LATE_AFTER_DEADLINE = 2 };

/* One client call. */
typedef struct EvCall {
	int32_t req;              /* index in EvRequestSet.r */
	int16_t dep;              /* index in EvRequestSet.deps */
	int16_t caller;           /* index in EvRequestSet.callers: the client span's service */
	uint8_t serial;           /* overlaps no sibling */
	uint8_t retry;            /* follows a failed call to the same dependency */
	uint8_t error;            /* client span status error */
	uint8_t late;             /* the server outlived the call */
	uint8_t db;               /* a database call: no server span, no wait */
	float total_ms;           /* client span */
	float wait_ms;            /* client span minus server span; NAN unknown */
	float service_ms;         /* server span inside the call; NAN unknown */
	float queue_ms;           /* pool wait before the client span; NAN none */
} EvCall;

typedef struct EvRequestSet {
	EvRequest *r;
	int64_t n;
	EvCall *calls;            /* every client call of the requests */
	int64_t n_calls;
	EvOp *ops;                /* the requests' timing programs */
	int64_t n_ops;
	char **classes;
	int n_classes;
	char **hosts;
	int n_hosts;
	char **deps;              /* called services (server span service, or the
	                           * client span name when no server span) */
	int n_deps;
	char **callers;           /* services that make the calls */
	int n_callers;
	int64_t from_ns, to_ns;   /* the range asked (open ends as given) */
	int64_t first_ns, last_ns;/* earliest and latest request start */
	double tail_threshold_ms; /* requests at or above it are .slow */
} EvRequestSet;

/* Reads the requests of [from, to) of the endpoint (root_service,
 * root_operation; NULL: the model's root, else the most common root
 * operation). The model (may be NULL) says which dependencies are
 * optional and the objective for late work; skew (NULL: the default) is
 * the sibling skew tolerance for serial calls. Returns 0 and *out (free
 * with evidence_requests_free) or a negative code with err. */
int evidence_requests_load(Store *st, const Model *m, const char *root_service,
                           const char *root_operation, int64_t from, int64_t to,
                           const SkewTolerance *skew, EvRequestSet **out, Err *err);
void evidence_requests_free(EvRequestSet *s);    /* NULL is a no-op */

/* analysis_run() and, in the same pass over the spans, the request sets of
 * its window and baseline (sets[1] stays NULL without a baseline), as
 * evidence_requests_load() would read them for the analysis's endpoint;
 * give them to evidence_compute() in EvidenceOptions.requests. One read of
 * the spans instead of three. With max_requests > 0, a population with
 * more requests than that is read as a uniform sample of max_requests
 * (analysis_state_sample(); PopSummary.sample_of), and its request set is
 * the same sample. Returns 0, or a negative code with err. */
int evidence_analysis_run(Store *st, const AnalysisOptions *ao, int64_t max_requests,
                          Analysis **a, EvRequestSet *sets[2], Err *err);

/* The default max_requests of the commands: beyond this many requests in
 * a population, report and diagnose read a uniform sample of it. A bound
 * on the cost (about 27 spans a request: some 1.1M spans read for two
 * populations), not on what the data says; at this size a p99 has 200
 * requests above it and its interval is a few percent wide. */
#define EVIDENCE_SAMPLE_DEFAULT 20000

/* Request sets built in the pass of an incremental analysis (the
 * dashboard's, analysis/live.c): evidence_tap_new() before the state's
 * first update taps it; evidence_tap_finish() after that update hands the
 * window's and the baseline's sets to the result a (freed with it), unless
 * a population went past max_requests (0: no bound), and frees the tap
 * (NULL: a no-op).
 * evidence_compute() given that analysis reads them instead of its own
 * request pass. Later results of the state carry none (an update adds
 * spans the sets do not have). */
typedef struct EvTap EvTap;
EvTap *evidence_tap_new(AnalysisState *g, const AnalysisOptions *ao, int64_t max_requests);
void evidence_tap_finish(EvTap *x, Analysis *a);
void evidence_tap_free(EvTap *x);          /* without finishing; NULL is a no-op */

/* The request set of population pop attached to a (evidence_tap_finish),
 * or NULL. */
const EvRequestSet *evidence_attached_requests(const Analysis *a, int pop);

/* How many times this process has read the spans of a range for a request
 * set (evidence_requests_load()); tests check that a command sharing one
 * read makes none. Thread-safe. */
int64_t evidence_request_reads(void);

/* ---- exemplars (evidence_metrics.c) -------------------------------------- */

/* A metric exemplar: a histogram bucket (or a point) linked to a trace. */
typedef struct EvExemplar {
	char *metric;             /* family name */
	char *labels_json;        /* the series' labels */
	int has_le;               /* the bucket's upper bound is known */
	double le;                /* in the metric's unit */
	double value;             /* the exemplar's value, metric's unit (NAN unknown) */
	char *unit;               /* the metric's unit ("" none) */
	char *trace_id;           /* "" when none */
	char *span_id;            /* "" when none */
	int64_t ts_ns;            /* exemplar time, else the point's */
} EvExemplar;

/* Exemplars of points in [from, to), every family, at most max (0: no
 * limit) in store order. Returns 0 with *out (free with
 * evidence_exemplars_free) and *n. */
int evidence_exemplars_load(Store *st, int64_t from, int64_t to, int max, EvExemplar **out,
                            int *n, Err *err);
void evidence_exemplars_free(EvExemplar *x, int n);

/* ---- budgets (budgets.c) ------------------------------------------------ */

/* A budget's verdict, on its figure's 95 % interval as the decisions are
 * judged (an interpolated or sampled value is not known more precisely
 * than its interval):
 *  BUDGET_BREACHED  the whole interval is on the wrong side of the
 *                   threshold (for "> t": its lower bound above t)
 *  BUDGET_OK        within: the whole interval on the right side (for
 *                   "> t": its upper bound at or under t)
 *  BUDGET_MAYBE     may be breached: the interval holds the threshold
 *  BUDGET_UNKNOWN   no figure (absent or missing), never "within"
 * A figure without an interval (a gauge, a count, a sheet's or the
 * model's number) is taken as exact: its value alone decides. */
enum { BUDGET_OK = 0, BUDGET_BREACHED = 1, BUDGET_MAYBE = 2, BUDGET_UNKNOWN = -1 };

typedef struct BudgetResult {
	const ModelBudget *budget; /* borrowed from the model */
	int state;                 /* BUDGET_* */
	double value;              /* the figure in the budget's unit, NAN when unknown */
	double lo, hi;             /* its 95 % interval in the budget's unit when has_ci
	                            * (-INFINITY / INFINITY: unbounded on that side) */
	int has_ci;
	const EvValue *ev;         /* the figure judged, borrowed from the Evidence;
	                            * NULL when absent */
	int src;                   /* its EV_SRC_* (EV_SRC_MISSING when unknown) */
	int64_t n;                 /* the observations behind it, 0 when not counted */
	char source[200];          /* where it comes from, in the Board's words: "spans,
	                            * 3,000 requests", "metric, 966,985 requests,
	                            * histogram buckets 10.0 ms to 25.0 ms"; "" when
	                            * unknown */
	char other[200];           /* when a second source has the figure too: the one
	                            * not used and its wider interval ("spans, 3,000
	                            * requests: 7.1 ms [0.3, 15.9]"), else "" */
} BudgetResult;

/* Evaluates every budget of m on e with budget_judge(). Returns an array of
 * m->n_budgets results the caller frees with free(), or NULL when there
 * are none. The pointers inside borrow from m and e. */
BudgetResult *budgets_evaluate(const Model *m, const Evidence *e, int *n);

/* Judges budget b on e: its evidence name and, when a complete metric or
 * the traces give the same figure too (X.metric, X.spans), the source
 * whose 95 % interval is the narrower (an unbounded side counts as the
 * widest; a tie keeps X itself), named in out->source with the other in
 * out->other. Fills *out (out->ev borrows from e). Returns out->state. */
int budget_judge(const ModelBudget *b, const Evidence *e, BudgetResult *out);

/* The rule on one figure: value with its 95 % interval [lo, hi] (has_ci
 * 0: exact) given in unit (the evidence's unit: "ms", "ratio", "%", ...;
 * NULL when it is already in the budget's unit). A ratio is compared with
 * a budget written in "%" as 100 x the ratio, and the other way round.
 * Fills out's state, value, lo, hi and has_ci (in the budget's unit,
 * ready for budgets_format_value()) and sets out->budget; leaves the
 * source texts empty. Returns out->state (BUDGET_UNKNOWN for NaN). The
 * dashboard judges its own p99 with this. */
int budget_judge_figure(const ModelBudget *b, double value, double lo, double hi, int has_ci,
                        const char *unit, BudgetResult *out);

/* Writes "18.2 ms", "79.0 %", "6.5 min" for a budget value into out. */
void budgets_format_value(const ModelBudget *b, double v, char *out, unsigned sz);

/* The interval of r in the budget's unit: "[10.0, 25.0 ms]" ("?" for an
 * unbounded side), "" when r has none. */
void budget_format_interval(const BudgetResult *r, char *out, size_t sz);

/* "breached", "within", "may be breached", "unknown": the words every
 * screen uses. */
const char *budget_state_text(int state);

/* The JSON spelling: "breached", "ok", "maybe", "unknown". */
const char *budget_state_name(int state);

/* One line for people: the value, its interval and its source, and for a
 * budget that may be breached why ("18.8 ms [10.0, 25.0 ms] (metric,
 * 966,985 requests, histogram buckets 10.0 ms to 25.0 ms, the narrower
 * interval; spans, 3,000 requests: 7.1 ms [0.3, 15.9 ms]): the interval
 * holds the budget (12.0 ms)"). "?" when unknown. */
void budget_describe(const BudgetResult *r, char *out, size_t sz);

/* Writes an evidence value for people, by its unit: "ratio" as a percentage
 * ("24.9 %"), "ms" as "18.2 ms", "index" (a multiplier such as a
 * concentration, where 1 is neutral) as "3.65", "flag" as yes/no, other
 * units after the number ("3 count"); "?" for NaN. The one rule the
 * report, the diagnosis and the dashboard share. */
void evidence_format(double v, const char *unit, char *out, unsigned sz);

#endif
