/*
 * analysis.h - the aggregate request DAG of an endpoint, with queue /
 * client-wait / service splits per node, exact quantiles per workload
 * class for a window and a baseline, critical-path ownership of the slow
 * population, and data-quality findings.
 *
 * Vocabulary (DESIGN.md):
 *  - a *call* is a CLIENT span paired with the SERVER span it caused in
 *    another service. Its split: queue (wait before the client span
 *    started, when the data carries it), client_wait (client span minus
 *    server span) and service (the server span). A call without a server
 *    span has an unknown split: client_wait/service quantiles have n == 0.
 *  - siblings whose intervals overlap form a parallel (fan-out) group;
 *    siblings that do not overlap are serial. So are two siblings where
 *    one starts and ends first and they overlap by no more than the skew
 *    tolerance (SkewTolerance): that overlap is taken for clock skew or
 *    rounding, not concurrency.
 *  - the critical path of a trace is its last-finishing chain; over the
 *    slow population (requests at or above the window p99, or above the
 *    objective when a model sets one) it says who owns the tail.
 *
 * A request is a trace's entry span and what runs under it (trace_build.h,
 * trace_link_entry()): the first server span, below any client span of a
 * caller (a load generator, a browser). The endpoint is (service, route)
 * of the entry (DESIGN.md, "Endpoint"): the one asked for, else the
 * model's root, else the first of the ranked list of endpoints.h.
 *
 * Everything works without a model: then classes are whatever values the
 * data carries, and mandatory/core are unknown.
 *
 * Ownership: analysis_run() returns an Analysis the caller frees with
 * analysis_free(). Every pointer inside it lives as long as the Analysis.
 * An Analysis is never changed once built, so threads may read it at once;
 * to hand it to another thread, take a reference with analysis_ref(): each
 * holder then calls analysis_free() once, and the last one frees it (the
 * count is atomic, so the holders need no common lock).
 */
#ifndef TT_ANALYSIS_H
#define TT_ANALYSIS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "model.h"
#include "period.h"
#include "quantile.h"
#include "store.h"

enum { NODE_ROOT, NODE_CALL, NODE_LOCAL, NODE_ORPHANS };
enum { EDGE_ROOT, EDGE_SERIAL, EDGE_PARALLEL };
enum { POP_WINDOW = 0, POP_BASELINE = 1 };
enum { COMP_QUEUE, COMP_WAIT, COMP_SERVICE, COMP_COUNT };

/* Statistics of one node over one population (window or baseline) and one
 * class filter. */
typedef struct NodeStats {
	int64_t calls;           /* occurrences (a fan-out of 3 counts 3) */
	int64_t requests;        /* requests in which the node appeared */
	int64_t unknown_split;   /* calls without a server span (database calls
	                          * excepted) */
	int64_t db_calls;        /* database calls (client span with db.system.name
	                          * or db.system): leaf calls whose client time is
	                          * counted as service, no server span expected */
	Quant total;             /* client-observed (call) or span duration */
	Quant client_wait;       /* n == 0: unknown or not a call */
	Quant service;           /* server span (call) or own span (local/root) */
	Quant queue;             /* n == 0: the data carries no queue time */
} NodeStats;

/* A node's part of the critical path over the slow population. */
typedef struct CritShare {
	double ms[COMP_COUNT];   /* summed critical-path time per component */
	double total_ms;         /* sum of ms[] */
	double share;            /* total_ms / critical-path time of all slow requests */
} CritShare;

#define NODE_MAX_EXEMPLARS 5

typedef struct Exemplar {
	char trace_id[33];
	double ms;               /* this node's total in that trace: the
	                          * queue before its span, plus the span */
	double queue_ms;         /* of it, the queue (NaN: not recorded) */
	int wclass;              /* class index or -1 */
	int calls;               /* the node's calls in that trace (fan-out) */
} Exemplar;

typedef struct DagNode {
	int id;                  /* index in Analysis.nodes (pre-order) */
	int parent;              /* -1 for the root */
	int depth;               /* root 0 */
	int type;                /* NODE_* */
	int edge;                /* EDGE_* relative to its siblings */
	int group;               /* fan-out group: id of the first node of the group, or -1 */
	int n_children;
	int *children;           /* ids, in time order */
	char *service;           /* service the span runs in (caller for a call) */
	char *operation;         /* span name (client span name for a call) */
	char *dependency;        /* called service of a call, NULL if never seen */
	char *db_system;         /* a database call's system (db.system.name or
	                          * db.system), NULL for other nodes; the evidence
	                          * names the dependency by it */
	char *peer;              /* a call without a server span and without a
	                          * database system: the peer.service or
	                          * server.address it names (a third-party API),
	                          * else NULL; the evidence names it by that */
	char *callee;            /* a call: what its client spans name as their
	                          * target (trace_callee(): database system, else
	                          * peer such as "10.0.0.7:8080"), NULL when they
	                          * name nothing or for other nodes; metrics of
	                          * the caller are matched to the call by it */
	char *label;             /* display name: model label, dependency or operation */
	int mandatory;           /* 1/0 from the model, MODEL_UNKNOWN otherwise */
	int core;
	double start_offset_ms;  /* mean start relative to the request start */
	NodeStats pop[2];        /* [POP_WINDOW], [POP_BASELINE], all classes */
	NodeStats *by_class[2];  /* [pop][class], Analysis.n_classes entries */
	CritShare crit[2];       /* per population */
	double *dist;            /* window totals (ms), sorted; n = pop[0].calls */
	Exemplar slowest[NODE_MAX_EXEMPLARS];
	int n_slowest;
} DagNode;

/* How much two serial siblings may overlap and still count as serial:
 * abs_ns, capped at ANALYSIS_SKEW_ABS_CAP of the shorter sibling's
 * duration, plus frac times that duration. A sibling that
 * starts first and ends first, overlapping the other by more than 0 and at
 * most that, is serial for the critical path (the overlap is split at its
 * midpoint) and for the edge vote. */
typedef struct SkewTolerance {
	int set;                   /* 0: the default (ANALYSIS_SKEW_ABS_NS, ANALYSIS_SKEW_FRAC) */
	int64_t abs_ns;            /* absolute part, ns (>= 0) */
	double frac;               /* part of the shorter sibling (0..1) */
} SkewTolerance;

#define ANALYSIS_SKEW_ABS_NS 50000 /* 50 µs */
#define ANALYSIS_SKEW_FRAC 0.01    /* 1 % */
/* The absolute part never exceeds this share of the shorter sibling, set
 * or default: an overlap covering most of a span is not clock skew. */
#define ANALYSIS_SKEW_ABS_CAP 0.25

typedef struct DataQuality {
	int64_t traces;            /* traces read */
	int64_t spans;             /* spans read */
	int64_t other_endpoint;    /* traces whose entry is another endpoint's */
	int64_t rootless;          /* traces with neither a root span nor a
	                            * server span: no entry */
	int64_t no_entry;          /* traces whose root is a client span with
	                            * no server span below: not an endpoint */
	int64_t entered_below;     /* requests whose entry is below another span
	                            * (a load generator's or a browser's client
	                            * span) or whose caller's span is missing:
	                            * those spans are left out of the DAG */
	int64_t extra_roots;       /* additional parentless spans (kept as orphans) */
	int64_t orphan_spans;      /* spans whose parent is missing */
	int64_t cycles;            /* traces rejected for a parent cycle */
	int64_t unpaired_calls;    /* client spans without a server span, except
	                            * database calls */
	int64_t db_calls;          /* database client spans (db.system.name or
	                            * db.system): leaf calls, not unpaired */
	int64_t clipped;           /* server spans clipped to their client (<= 1 % overrun) */
	int64_t skew;              /* server spans overrunning their client by > 1 % */
	double skew_max_ms;        /* largest overrun seen */
	int64_t late_server;       /* server spans that started inside their client
	                            * call but outlived it (the caller gave up) */
	int64_t outside_parent;    /* children wholly outside their parent (off the path) */
	int64_t skew_serial;       /* sibling pairs overlapping within the skew tolerance,
	                            * taken as serial */
	int64_t held;              /* spans held by a container sibling: a local span
	                            * of the same service covering the calls beside
	                            * it (trace_holds()), walked as its contents */
	int64_t unrecognised_sources; /* files or request bodies that held nothing
	                            * their format reads (whole database, not
	                            * windowed; e.g. a traces body on /v1/metrics) */
} DataQuality;

typedef struct PopSummary {
	int present;               /* this population was asked for */
	int64_t from_ns, to_ns;    /* the range (actual data bounds when open) */
	int open_from, open_to;    /* 1: that end was asked open (INT64_MIN/MAX) */
	int64_t requests;          /* endpoint requests (read) */
	int64_t sample_of;         /* 0: every request of the range was read;
	                            * else the range holds this many, of which
	                            * `requests` were read, a uniform sample
	                            * (analysis_state_sample()); every figure but
	                            * rate_rps and the slow population's (its
	                            * count, threshold and critical path) is the
	                            * sample's */
	double rate_rps;           /* requests / range length */
	Quant ingress;             /* root span duration (+ queue before it) */
	int64_t *class_requests;   /* [n_classes] */
	Quant *class_ingress;      /* [n_classes] */
	int64_t slow_requests;     /* the slow population */
	double slow_threshold_ms;  /* its threshold */
	int tail_pulled;           /* 1 (window only): the slow population is the
	                            * window's slowest traces pulled from a trace
	                            * back end (store_tail_keys()), not the slow
	                            * requests of `requests`: slow_requests of
	                            * them were read, the threshold is the
	                            * shortest; their critical path and exemplars */
	int64_t tail_requested;    /* the N asked of the back end */
	int64_t tail_of;           /* the traces it listed in the window, -1 unknown */
	double crit_total_ms;      /* critical-path time of the slow population */
	int64_t errors;            /* requests whose root span has status error */
} PopSummary;

typedef struct AnalysisOptions {
	Period period;                /* window (open sides: all data) and baseline */
	const char *wclass;           /* only requests of this class, or NULL */
	const Model *model;           /* may be NULL */
	SkewTolerance skew;           /* zero: the default tolerance */
	const char *ep_service;       /* the endpoint (service, route) to analyse, */
	const char *ep_route;         /* or NULL: the model's root, else the first
	                               * of analysis_endpoints() (endpoints.h) */
} AnalysisOptions;

typedef struct Analysis {
	char *endpoint;           /* "service route" of the entry, or model name */
	char *root_service;       /* the endpoint: its service, */
	char *root_operation;     /* and its route (the entry spans' route,
	                           * common/route.h; "" when none was found) */
	int route_rule;           /* the ROUTE_* most of its requests' routes
	                           * came from, -1 unknown (metric series of the
	                           * endpoint are matched by it: an http.route) */
	double objective_ms;      /* 0: none */
	DagNode *nodes;           /* pre-order; nodes[0] is the root */
	int n_nodes;
	char **classes;           /* class values seen or declared, sorted */
	int n_classes;
	char *class_filter;       /* NULL or the class analysed */
	PopSummary pop[2];
	DataQuality dq;
	int64_t data_version;     /* store_data_version() when computed */
	AnalysisOptions asked;    /* the options it was computed for: asked.wclass
	                           * is class_filter, asked.model is borrowed
	                           * (see analysis_answers()) */
	atomic_int extra_refs;    /* holders besides the first (analysis_ref()) */
	void *attached;           /* what another view built in the same pass
	                           * (the evidence's request sets,
	                           * evidence_tap_finish), freed with the
	                           * analysis by attached_free; or NULL */
	void (*attached_free)(void *);
	int approx;               /* 1: from the import-time aggregates
	                           * (analysis_from_aggregates): quantiles within
	                           * SKETCH_ALPHA of the exact ones, populations
	                           * by whole minutes, no critical path,
	                           * exemplars or data-quality counts; shown
	                           * marked until the exact analysis replaces it */
} Analysis;

/* Builds the analysis. Returns 0, or a negative code with err set. */
int analysis_run(Store *st, const AnalysisOptions *opt, Analysis **out, Err *err);

/* analysis_run() reading at most max_requests requests of each population
 * (analysis_state_sample(); 0: all). */
int analysis_run_sample(Store *st, const AnalysisOptions *opt, int64_t max_requests,
                        Analysis **out, Err *err);

/* ---- incremental ----------------------------------------------------- */

/* An analysis that follows a growing database: each update reads only the
 * spans stored since the previous one (a trace that gained spans is read
 * again whole and its earlier contribution replaced), and a result costs
 * little more than the size of the DAG. analysis_run() is new + update +
 * result + free. opt is copied (the class string too); the model is
 * borrowed and must outlive the state. One thread at a time. */
typedef struct AnalysisState AnalysisState;

AnalysisState *analysis_state_new(const AnalysisOptions *opt);
int analysis_state_update(AnalysisState *s, Store *st, Err *err);
/* A new Analysis (free with analysis_free) of everything read so far; st
 * may be NULL (then data_version is 0). */
Analysis *analysis_state_result(AnalysisState *s, Store *st);
void analysis_state_free(AnalysisState *s);   /* NULL is a no-op */

/* A reader of the same pass over the spans: during the first update of a
 * state (the full read), fn is called with every trace of the endpoint
 * (its root span is the analysed root operation; any class) whose request
 * starts in population pop (POP_WINDOW, POP_BASELINE; a trace in both is
 * passed once for each), linked (trace_build.h) and before the analysis's
 * own work on it. The trace is valid during the call only. Set before the
 * first update; later updates call nothing. Other views of the same
 * question (the evidence's request sets, evidence_analysis_run()) are
 * built this way without a second read of the spans. */
/* The state will be read once (analysis_run()): it keeps no record of
 * what each trace contributed, which only a later update needs (to take a
 * trace that gained spans back out); a trace that gains spans during the
 * read keeps what it had. Set before the first update; later updates
 * add nothing correct. Saves memory in proportion to the spans. */
void analysis_state_once(AnalysisState *s);

/* The first update, reading at most max_requests requests of each
 * population: when the window or the baseline holds more requests of the
 * endpoint than that, max_requests of them evenly spaced in start order
 * (a systematic sample: every stretch of the range in proportion) are
 * read, whole traces, through the trace index, instead of every span;
 * PopSummary.sample_of then says of how many. The critical path is still
 * every slow request's: the root index gives every request's latency, so
 * the range's slow requests (the rule of the whole data) are read too, for
 * their critical path alone. Otherwise, with
 * max_requests <= 0, and with a class filter (a class's requests are known
 * only from their traces), it is analysis_state_update(). Implies
 * analysis_state_once(). Returns 0, or a negative code with err. */
int analysis_state_sample(AnalysisState *s, Store *st, int64_t max_requests, Err *err);

struct Trace;
typedef void (*AnalysisTraceTap)(void *ctx, const struct Trace *t, int pop);
void analysis_state_tap(AnalysisState *s, AnalysisTraceTap fn, void *ctx);

/* How many times this process has read every span of a store for an
 * analysis (the first update of a state, so every analysis_run()): the
 * cost that "one analysis per question" avoids paying twice. Tests and
 * benchmarks read it. Thread-safe. */
int64_t analysis_full_reads(void);

/* Drops one hold on a: frees it when no analysis_ref() holder is left.
 * NULL is a no-op. */
void analysis_free(Analysis *a);

/* Another hold on a, for another thread or owner (a is returned; NULL
 * stays NULL). The holder frees it with analysis_free(). A hold does not
 * make a writable: an Analysis is read-only once built. */
Analysis *analysis_ref(const Analysis *a);

/* 1 when a was computed exactly (not from the aggregates: a->approx 0)
 * for exactly the options o asks (window and
 * baseline as asked, open ends included; class; model, by pointer; skew
 * tolerance, with the default spelt either way), so a reader of o may
 * use a instead of computing it again. The data version is the caller's
 * to compare. */
int analysis_answers(const Analysis *a, const AnalysisOptions *o);

/* ---- from the import-time aggregates (agg.c) ---------------------------- */

/* Brings the aggregates up to date with the spans (the store's commit
 * hook: cli/ installs it with store_set_commit_hook()). Inside the
 * writer's transaction, reads the traces of every minute in which a span
 * stored since the last update has its request's root (all of them the
 * first time, so a database from before aggregates gets them at its next
 * write), and replaces those minutes' cells: per node (as the analysis
 * builds the DAG), split component (total, client wait, service, queue),
 * class and host, the count and a sketch (sketch.h) of the times, with
 * the request, unknown-split, database-call and edge counts. Returns 0 or
 * a negative code with err set. */
int analysis_agg_update(Store *st, Err *err);

/* 1 when the aggregates account for every stored span (so
 * analysis_from_aggregates() answers), 0 when not, negative on error. */
int analysis_agg_ready(Store *st, Err *err);

/* An Analysis of opt computed from the aggregates, without reading spans:
 * the DAG, per-node counts and split quantiles (sketch estimates within
 * SKETCH_ALPHA of the exact ones) per population and class, the ingress
 * quantiles and request counts, the edges. a->approx is 1. Window and
 * baseline are read by whole minutes: the minutes they overlap (exact
 * when their ends fall on minutes, as the simulator's and most incident
 * windows do). What needs the spans is left empty: critical path shares,
 * slow population, exemplars, data quality; dist holds the window's
 * totals as the sketch's bucket estimates. Returns TT_ENOTFOUND when the
 * aggregates do not cover the spans (analysis_agg_ready() is 0): use
 * analysis_run(). Works on a read-only Store. */
int analysis_from_aggregates(Store *st, const AnalysisOptions *opt, Analysis **out, Err *err);

/* Fewer slow requests than this make their critical-path shares thin: a
 * share is then a handful of requests ("(thin)" in `report`, `diagnose`
 * and the Tail ownership pane; the evidence's small_sample). */
#define ANALYSIS_THIN_SLOW 10

/* Refuses a window and baseline that have nothing to compare (0, or
 * TT_EINVAL with err naming the range and the counts): a baseline that is
 * the window itself (every comparison would find no change); a window
 * that holds no request of the endpoint (w: its requests); a baseline,
 * when p has one, that holds none (b) - unless st holds no trace at all
 * (metrics or a sheet alone; st NULL: not asked). window_of: the window's
 * requests when w counts a sample of them (0: not sampled). `report`,
 * `diagnose` and the dashboard's Board refuse with these words. */
int analysis_period_guard(Store *st, const Period *p, double w, double b, double window_of,
                          Err *err);

/* Where population p's slow population (its tail: critical path,
 * exemplars) came from, in words for a heading, into out: "the 20 slowest
 * of the window, pulled from the trace back end (of 1,000 it listed)" for
 * a pulled slowest set (PopSummary.tail_pulled), "every slow request of
 * the window's 12,000" for a sampled read, else "the slow requests of the
 * window's 100 requests read". */
void analysis_slow_source(const Analysis *a, int p, char *out, size_t n);

/* Index of class name in a->classes, or -1. */
int analysis_class_index(const Analysis *a, const char *name);

/* What call d is made to, as a model names it: its dependency (the service
 * of its server spans), else, for a call to something that sends no spans,
 * the peer its client spans name (a database call is named by the caller's
 * service and span name instead); NULL for any other node. */
const char *analysis_call_target(const DagNode *d);

/* The model node that describes d, or NULL: the one named by d's call
 * target, else by d's service and operation (never the caller's "any
 * operation" entry for a call without a dependency). */
const ModelNode *analysis_model_node(const Model *m, const DagNode *d);

/* ---- one trace, for the waterfall ------------------------------------ */

typedef struct TraceSpan {
	char span_id[17];
	char parent_id[17];
	int parent;               /* index in TraceView.spans, -1 for root/orphan */
	int depth;
	char *service;
	char *name;
	char *peer;               /* a CLIENT span: what it calls (its server
	                           * span's service, else trace_callee(): the
	                           * database system or the peer its attributes
	                           * name); "" when unknown or not a call */
	int kind;                 /* SPAN_KIND_* */
	int64_t start_ns, end_ns; /* as recorded */
	int status_code;
	int on_critical_path;     /* 1 when part of the trace's critical path */
	double crit_ms;           /* its own time on the critical path */
	int paired;               /* client span with a server child */
	int db_call;              /* client span of a database call (a leaf) */
	double client_wait_ms;    /* for a paired client span */
	int has_queue;
	double queue_ms;
	int orphan;               /* its parent is missing from the trace */
	char *attrs_json;         /* span attributes (JSON object text) */
	char *events_json;        /* span events: [{"name","time_ns","attrs"}...], "" none */
} TraceSpan;

typedef struct TraceView {
	char trace_id[33];
	int64_t start_ns, end_ns; /* earliest start, latest end */
	TraceSpan *spans;         /* depth-first, children in start order */
	int n_spans;
	char *wclass;             /* "" when unknown */
} TraceView;

/* Loads one trace; its critical path uses skew (NULL: the default
 * tolerance). Returns TT_ENOTFOUND when it has no spans. */
int trace_view_load(Store *st, const char *trace_id, const SkewTolerance *skew,
                    TraceView **out, Err *err);
void trace_view_free(TraceView *t);

#endif
