/*
 * sim.h - deterministic telemetry of a modelled endpoint.
 *
 * The simulator is a small discrete-event model of an API fleet (hosts with
 * an endpoint executor and client connection pools, downstream services
 * with service-time distributions). It runs a baseline phase and an
 * incident phase, samples traces from the simulated requests and writes
 * them as OTLP/JSON files; tailtriage then imports those files like any
 * other telemetry. The simulator never touches the store.
 *
 * Three layers, kept apart so new outputs need no model changes:
 *   parameters  SimParams, set by name (sim_params_set), listed for --help;
 *   model       sim_run(): produces SimTrace values and periodic SimSample
 *               gauges through a SimSink (sim_mercury.c);
 *   writers     sim_otlp_*(): OTLP/JSON (JSON Lines or one document);
 *               sim_generate() wires model, writer and manifest together.
 *
 * The same parameters and seed always give byte-identical files on a given
 * build and platform.
 */
#ifndef TT_SIM_H
#define TT_SIM_H

#include <stdint.h>
#include <stdio.h>

#include "err.h"

/* ---- parameters --------------------------------------------------------- */

/* The endpoint's latency objective (ingress p99, ms): the slow set of the
 * figures below is defined against it, as the report defines it. */
#define SIM_OBJECTIVE_MS 300.0

enum { SIM_MAX_PRICING = 12 };   /* parallel pricing calls per request, at most */

typedef struct SimParams {
	char scenario[32];          /* "mercury" */
	char incident[32];          /* mechanism of the incident phase, see sim_incidents() */
	uint64_t seed;
	int64_t traces;             /* sampled traces per phase */
	int hosts;                  /* API hosts api-01..api-NN */
	double rate;                /* requests/s arriving at each API host (model scale) */
	double window_s;            /* length of each phase's window */
	double warmup_s;            /* simulated before each window, not sampled */
	int64_t baseline_start_ns;  /* start of the baseline window */
	int64_t incident_start_ns;  /* start of the incident window */
	double premium_share;       /* class mix of the baseline; standard = the rest */
	double enterprise_share;
	double incident_enterprise_share;  /* enterprise share in the incident */
	int hot_hosts;              /* hosts enterprise traffic concentrates on */
	double hot_share;           /* share of enterprise requests placed on them */
	int executor_slots;         /* endpoint executor slots per host */
	int profile_pool;           /* profile client connections per host */
	int pricing_pool;           /* pricing client connections per host */
	int enterprise_pricing_calls; /* parallel partitioned quotes per enterprise request */
	double rec_timeout_ms;      /* recommendation client timeout */
	double rep_timeout_ms;      /* reputation client timeout */
	double surge;               /* executor-saturation: arrival-rate multiplier */
	double slowdown_factor;     /* dependency-slowdown: service-time multiplier */
	double slowdown_start_s;    /* ... from window start to the start of the ramp */
	double slowdown_ramp_s;     /* ... ramp up (and down) time */
	double slowdown_hold_s;     /* ... time at full slowdown */
	double sample_interval_s;   /* period of SimSample gauges */
	int batch;                  /* spans per exported line (whole traces) */
	/* more incident mechanisms and the metrics output (added by "diag") */
	int incident_pricing_pool;  /* pricing-pool-shrink: pricing connections per host */
	char slowdown_dep[32];      /* single-slowdown: the dependency that slows down */
	int fanout_calls;           /* wider-fanout: pricing quotes per request, every class */
	double straggler_p;         /* share of pricing calls that straggle (both windows) */
	double straggler_mult;      /* ... and their service-time multiplier */
	double retry_p;             /* retry-storm: share of inventory attempts that fail */
	int cores;                  /* cores per API host, for the modelled CPU gauge */
	double cpu_per_call_ms;     /* CPU charged per outgoing call */
	int metrics;                /* 1: also write metrics.jsonl (OTLP/JSON metrics) */
	/* arrival waves and cancellation (issue 13) */
	double wave_share;          /* share of seconds that are notification waves */
	double wave_mult;           /* arrival rate in a wave second / the window's mean */
	double cancel_stop_p;       /* share of cancelled optional calls whose server stops */
	int enterprise_pricing_slots;  /* enterprise's partition of pricing-pool, 0: shared */
	int wave_enterprise;        /* 1: waves carry enterprise requests only */
	double optional_budget_ms;  /* optional calls end by root start + this, 0: timeouts only */
	double incident_wave_share; /* pricing-client-wait: enterprise waves in the incident, 0: none */
	double incident_wave_mult;  /* ... enterprise's rate in a wave second over its mean */
	double enterprise_size;     /* median request size of enterprise (others: 1) */
	int pricing_calls;          /* parallel quotes per standard or premium request */
	char fleet[16];             /* the last fleet preset applied: "case" or "light" */
} SimParams;

/* Fills p with the defaults of scenario ("mercury"). Returns TT_ENOTFOUND
 * for an unknown scenario. */
int sim_params_init(SimParams *p, const char *scenario, Err *err);

/* Sets one parameter by its documented name from text (e.g. "seed",
 * "42"). Times accept RFC 3339 or epoch milliseconds. Returns TT_EINVAL
 * with a message naming the key for an unknown key, a malformed value or a
 * value out of range. */
int sim_params_set(SimParams *p, const char *key, const char *value, Err *err);

/* Checks cross-parameter constraints (shares summing to at most 1, windows
 * not overlapping, enough arrivals for the traces asked for). */
int sim_params_check(const SimParams *p, Err *err);

/* Writes the current value of parameter key as text into out. Returns
 * TT_ENOTFOUND for an unknown key. */
int sim_params_get(const SimParams *p, const char *key, char *out, unsigned outsz);

typedef struct SimParamInfo {
	const char *key;            /* "traces" */
	const char *help;           /* one line */
} SimParamInfo;

/* The documented parameters, in help order; *n receives the count. The
 * table is static. */
const SimParamInfo *sim_param_table(int *n);

typedef struct SimIncidentInfo {
	const char *name;           /* "pricing-client-wait" */
	const char *help;           /* one line */
} SimIncidentInfo;

/* The incident mechanisms (static table); *n receives the count. */
const SimIncidentInfo *sim_incidents(int *n);

/* Scenario names, NULL-terminated (static). */
const char *const *sim_scenarios(void);

/* ---- what the scenario declares (one model, one simulator) ------------ */

/* The endpoint the scenario simulates, as an endpoint model
 * (models/mercury-home.model.json) must describe it: its nodes and their
 * semantics, the pools with their sizes per API process (what each host's
 * db.client.connection.max / executor.slots gauge reports), the class mix
 * of the baseline and the case's revisit triggers (the budgets the
 * comparison of `tailtriage sim` is read against). A unit test keeps the
 * bundled model equal to this. */
typedef struct SimNodeInfo {
	const char *service;        /* called service, or the API's own service */
	const char *operation;      /* local span name (validate, assemble); NULL for a call */
	int mandatory;              /* the response waits for it (no timeout) */
	int core;                   /* part of the core response */
	const char *pool;           /* client pool in front of it, or NULL */
} SimNodeInfo;

typedef struct SimPoolInfo {
	const char *name;           /* "endpoint-executor", "profile", "pricing" */
	const char *kind;           /* "executor" | "client" */
	const char *node;           /* the service it guards */
	int size;                   /* slots per API process */
} SimPoolInfo;

typedef struct SimBudgetInfo {
	const char *id, *evidence, *op;
	double threshold;
	const char *unit;
} SimBudgetInfo;

typedef struct SimScenarioInfo {
	const char *endpoint, *root_service, *root_operation;
	double objective_ms;
	const char *class_attr;
	const char *classes[3];
	double mix[3];              /* baseline mix (the parameters) */
	SimNodeInfo nodes[9];
	int n_nodes;
	SimPoolInfo pools[3];
	int n_pools;
	const SimBudgetInfo *budgets;
	int n_budgets;
} SimScenarioInfo;

/* Fills out for p's scenario (pool sizes and mix from p). */
int sim_scenario_info(const SimParams *p, SimScenarioInfo *out, Err *err);

/* The case's matched-peak observations (the diagnostic drill), for the
 * comparison `tailtriage sim` prints. */
typedef struct SimCaseFigure {
	const char *measure;        /* "ingress p99" */
	const char *unit;           /* "ms" or "%" */
	double value;               /* in unit */
	double was;                 /* the earlier peak, NAN when the case gives none */
} SimCaseFigure;
const SimCaseFigure *sim_case_figures(int *n);

/* ---- what the model produces ------------------------------------------ */

enum { SIM_ATTR_STR, SIM_ATTR_INT, SIM_ATTR_DOUBLE, SIM_ATTR_BOOL };

typedef struct SimAttr {
	const char *key;            /* static or owned by the world */
	int type;                   /* SIM_ATTR_* */
	const char *s;              /* SIM_ATTR_STR */
	int64_t i;                  /* SIM_ATTR_INT, SIM_ATTR_BOOL */
	double d;                   /* SIM_ATTR_DOUBLE */
} SimAttr;

/* A resource (one process of one service) and an instrumentation scope. */
typedef struct SimResource {
	const char *service;
	const char *host;
	int n_attrs;
	SimAttr attrs[10];
} SimResource;

typedef struct SimScope {
	const char *name;
	const char *version;
} SimScope;

/* The resources and scopes of a run; owned by the model, alive for as long
 * as the SimWorld. */
typedef struct SimWorld {
	SimResource *resources;
	int n_resources;
	const SimScope *scopes;
	int n_scopes;
	char **owned;               /* strings to free with the world */
	int n_owned;
} SimWorld;

enum { SIM_SPAN_MAX_ATTRS = 12 };

typedef struct SimSpan {
	uint64_t span_id;           /* never 0 */
	int parent;                 /* index in the trace, -1 for the root */
	int resource;               /* index into SimWorld.resources */
	int scope;                  /* index into SimWorld.scopes */
	const char *name;
	int kind;                   /* OTLP numbering: 1 internal, 2 server, 3 client */
	int64_t start_ns;
	int64_t end_ns;
	int status;                 /* 0 unset, 1 ok, 2 error */
	const char *status_msg;     /* NULL when none */
	int n_attrs;
	SimAttr attrs[SIM_SPAN_MAX_ATTRS];
} SimSpan;

/* A finished sampled trace. Borrowed: valid only during the sink call. */
typedef struct SimTrace {
	uint8_t trace_id[16];       /* never all zero */
	int phase;                  /* index into SimRun.phases */
	int n_spans;
	const SimSpan *spans;       /* spans[0] is the root */
} SimTrace;

/* Wait histograms: SIM_WAIT_BUCKETS buckets, the last one +Inf; the
 * finite upper bounds (ms) are sim_wait_bounds_ms()[0..SIM_WAIT_BUCKETS-2]. */
enum { SIM_WAIT_BUCKETS = 12 };
const double *sim_wait_bounds_ms(void);

/* Gauges of one host's pools at one instant (written by sim_metrics_*). */
typedef struct SimSample {
	int64_t t_ns;
	int phase;
	int host;                   /* API host index, resource index of its process */
	int exec_used, exec_max, exec_pending;
	int profile_used, profile_max, profile_pending;
	int pricing_used, pricing_max, pricing_pending;
	/* (added by "diag") */
	int64_t start_ns;           /* when the counters below started (phase begin) */
	int has_cpu;
	double cpu;                 /* modelled CPU utilisation 0..1 since the last sample */
	const uint64_t *exec_wait;  /* per-bucket counts of executor queue waits since start */
	const uint64_t *profile_wait;  /* ... of profile pool waits */
	const uint64_t *pricing_wait;  /* ... of pricing pool waits */
	double exec_wait_sum_ms, profile_wait_sum_ms, pricing_wait_sum_ms;
} SimSample;

/* Where the model sends its output. trace is required; sample may be NULL.
 * A non-zero return stops the run and is passed back by sim_run(). */
typedef struct SimSink {
	void *ctx;
	int (*trace)(void *ctx, const SimTrace *t, Err *err);
	int (*sample)(void *ctx, const SimSample *s, Err *err);
} SimSink;

/* Figures of one phase, computed by the model from what it simulated:
 * "sample" over the sampled (written) traces, exact nearest rank, and
 * "population" over every simulated request in the window (0.01 ms
 * resolution). Durations in ms. */
typedef struct SimFigures {
	int64_t requests;           /* root spans counted */
	double ingress_p50_ms;      /* root span duration */
	double ingress_p99_ms;
	double edge_p99_ms;         /* arrival to response: executor wait + root span */
	double queue_wait_p99_ms;   /* endpoint executor wait before the root span */
	double profile_wait_p99_ms; /* profile pool wait before profile.Get */
	int64_t pricing_calls;
	double pricing_client_p99_ms;      /* pricing client span duration */
	double pricing_client_wait_p99_ms; /* client span minus server span */
	double pricing_server_p99_ms;      /* pricing server span duration */
	double class_share[3];      /* standard, premium, enterprise */
	double omitted_share;       /* requests with a timed-out optional call */
	/* (issue 13) */
	double late_share;          /* requests whose optional server outlived the call */
	int64_t slow;               /* the slow set: above the objective (edge latency)
	                             * when >= 20 are, else the slowest max(20, 5 %) */
	double slow_threshold_ms;
	double pricing_cp_share;    /* pricing's share of the slow set's latency on the
	                             * critical path (its last quote ended the fan-out) */
} SimFigures;

typedef struct SimPhaseInfo {
	char name[16];              /* "baseline", "incident" */
	int64_t start_ns;           /* window [start, end) */
	int64_t end_ns;
	int64_t traces;             /* sampled traces written */
	int64_t spans;
	SimFigures sample;
	SimFigures population;
	double exec_occupancy;      /* time-averaged used/max over the window, all hosts */
	double profile_occupancy;
	double pricing_occupancy;
	double cpu_mean;            /* modelled CPU over the window, mean of all hosts */
	int hot[64];                /* host indexes enterprise concentrates on */
	int n_hot;
} SimPhaseInfo;

typedef struct SimRun {
	SimPhaseInfo phases[2];
	int n_phases;
	int64_t traces;             /* totals */
	int64_t spans;
} SimRun;

/* Builds the world (resources, scopes) of p's scenario. Free with
 * sim_world_fini(). */
int sim_world_init(SimWorld *w, const SimParams *p, Err *err);
void sim_world_fini(SimWorld *w);

/* Runs the model of p's scenario over world w, sending sampled traces and
 * gauges to sink, and fills run. Returns 0, the sink's error, or TT_EINVAL
 * for inconsistent parameters. */
int sim_run(const SimParams *p, const SimWorld *w, const SimSink *sink,
            SimRun *run, Err *err);

/* ---- writers ------------------------------------------------------------ */

typedef struct SimOtlp SimOtlp;

/* Opens an OTLP/JSON trace writer on path. JSON Lines (one
 * ExportTraceServiceRequest per line, spans grouped by resource and scope,
 * about batch spans per line, whole traces) or, with single, the same
 * resourceSpans in one document. w must outlive the writer. */
int sim_otlp_open(SimOtlp **out, const char *path, int single, int batch,
                  const SimWorld *w, Err *err);

/* SimSink.trace callback: ctx is the SimOtlp. */
int sim_otlp_trace(void *ctx, const SimTrace *t, Err *err);

/* Flushes, closes and frees. Returns TT_EIO when a write failed. NULL is a
 * no-op. */
int sim_otlp_close(SimOtlp *o, Err *err);

/* ---- metrics writer (sim_metrics.c) ------------------------------------ */

typedef struct SimMetrics SimMetrics;

/* Opens an OTLP/JSON metrics writer (JSON Lines, one request per host and
 * sample) on path. p and w must outlive it. */
int sim_metrics_open(SimMetrics **out, const char *path, const SimParams *p, const SimWorld *w,
                     Err *err);
/* SimSink.trace companion: remembers exemplars (ctx is the SimMetrics). */
int sim_metrics_trace(void *ctx, const SimTrace *t, Err *err);
/* SimSink.sample callback: writes one line (ctx is the SimMetrics). */
int sim_metrics_sample(void *ctx, const SimSample *s, Err *err);
/* Closes and frees; TT_EIO when a write failed. NULL is a no-op. */
int sim_metrics_close(SimMetrics *m, Err *err);

/* Generates the scenario into out_dir (created if missing): traces.jsonl
 * or, with single, traces.json, and manifest.json describing the windows,
 * seed, parameters and figures. Fills run (may be NULL). The file names
 * written are copied to traces_path and manifest_path (may be NULL). */
int sim_generate(const SimParams *p, const char *out_dir, int single, SimRun *run,
                 char *traces_path, char *manifest_path, unsigned pathsz, Err *err);

#endif
