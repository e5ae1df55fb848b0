/*
 * sim_mercury.c - the Mercury GET /v2/home model.
 *
 * A fleet of API hosts, each an independent process with an endpoint
 * executor (slots held for the whole request), a profile client pool
 * (acquired before the profile.Get client span opens, so its wait shows as
 * queue.wait_ms) and a pricing client pool (acquired inside the
 * pricing.Quote client span, so its wait is client wait: client span minus
 * server span). Downstream services are service-time distributions; they
 * have no queues of their own here.
 *
 * One request: executor wait -> root SERVER span "GET /v2/home" ->
 * validate -> profile.Get (pool) -> entitlement.Check -> parallel fan-out
 * of inventory, pricing (pricing-calls quotes, one per product group; an
 * enterprise request instead asks for partitioned quotes, about
 * enterprise-pricing-calls at the median size and more for a bigger
 * request, through enterprise's own partition of the pricing pool),
 * recommendation and reputation (optional: timeouts, and the deadline of
 * optional-budget-ms after the request started), experiment -> assemble
 * -> response, executor slot released.
 *
 * The default parameters are the case's release at the regional peak,
 * scaled down: few processes at a high rate each, so each pool is as full
 * as the case's (the profile pool about 79 % busy) while a run stays short.
 * The placement of requests keeps every host's rate level: when enterprise
 * traffic leans on the hot hosts, the other classes go elsewhere.
 *
 * Arrivals are Poisson per phase (the whole fleet), each request gets a
 * class from the phase's mix and a host from the placement rule. Every
 * request draws from its own PRNG stream, keyed by (seed, phase, request
 * number), so which requests are sampled, or how events interleave, never
 * changes another request's draws. Exactly `traces` requests arriving in
 * each window are sampled (selection sampling, its own stream).
 *
 * Invariants of every written trace: each server span starts after and
 * ends before its client span unless the client timed out (then the server
 * finishes its work late, as the old timeouts allowed); children lie inside
 * their parent otherwise; all span ids are distinct and non-zero.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "sim.h"
#include "sim_des.h"
#include "sim_rng.h"

enum { CL_STANDARD, CL_PREMIUM, CL_ENTERPRISE, N_CLASSES };

static const char *const CLASS_NAMES[N_CLASSES] = {"standard", "premium", "enterprise"};

enum { D_PROFILE, D_ENTITLEMENT, D_INVENTORY, D_PRICING, D_RECOMMENDATION,
       D_REPUTATION, D_EXPERIMENT, N_DEPS };

typedef struct Dep {
	const char *service;       /* service.name of the callee */
	const char *client_op;     /* CLIENT span name in mercury-api */
	const char *server_op;     /* SERVER span name in the callee */
	const char *rpc_service;
	const char *address;       /* server.address seen by the client */
	const char *version;       /* service.version of the callee */
	int hosts;                 /* callee processes */
	double median_ms;          /* service time of a standard request */
	double sigma;              /* log-normal shape */
	double class_mult[N_CLASSES];
	double size_exp;           /* service time grows with request size^size_exp */
} Dep;

/* Service-time shapes. Enterprise requests carry larger entitlement sets,
 * catalogues and quotes, so they are slower almost everywhere; a profile
 * read is one user's record, whatever the tenant's size. */
static const Dep DEPS[N_DEPS] = {
	{"profile", "profile.Get", "Get", "mercury.profile.v2.ProfileService",
	 "profile.mercury.svc.cluster.local", "4.12.1", 8, 15.0, 0.42, {1.0, 1.05, 1.2}, 0.3},
	{"entitlement", "entitlement.Check", "Check", "mercury.entitlement.v1.EntitlementService",
	 "entitlement.mercury.svc.cluster.local", "2.3.0", 4, 11.0, 0.40, {1.0, 1.15, 2.2}, 1.0},
	{"inventory", "inventory.Lookup", "Lookup", "mercury.inventory.v3.InventoryService",
	 "inventory.mercury.svc.cluster.local", "3.8.2", 6, 17.0, 0.42, {1.0, 1.10, 1.7}, 1.0},
	/* A quote's cost depends on its partition, hardly on the request size. */
	{"pricing", "pricing.Quote", "Quote", "mercury.pricing.v1.PricingService",
	 "pricing.mercury.svc.cluster.local", "5.1.0", 12, 7.6, 0.30, {1.0, 1.05, 1.6}, 0.3},
	{"recommendation", "recommendation.List", "List",
	 "mercury.recommendation.v1.RecommendationService",
	 "recommendation.mercury.svc.cluster.local", "1.19.4", 6, 30.0, 0.55, {1.0, 1.15, 1.6}, 1.0},
	{"reputation", "reputation.Score", "Score", "mercury.reputation.v1.ReputationService",
	 "reputation.mercury.svc.cluster.local", "0.9.7", 4, 13.0, 0.48, {1.0, 1.10, 1.5}, 1.0},
	{"experiment", "experiment.Assign", "Assign", "mercury.experiment.v1.ExperimentService",
	 "experiment.mercury.svc.cluster.local", "2.0.3", 3, 4.5, 0.35, {1.0, 1.0, 1.10}, 1.0},
};

/* Local work in the API process (ms, log-normal). */
#define VALIDATE_MEDIAN_MS 1.3
#define VALIDATE_SIGMA 0.30
#define ASSEMBLE_MEDIAN_MS 7.0
#define ASSEMBLE_SIGMA 0.40
static const double ASSEMBLE_CLASS_MULT[N_CLASSES] = {1.0, 1.3, 3.2};
/* Request size: one factor per request scales every service time, so the
 * branches of a big request are slow together (their tails correlate). */
#define SIZE_SIGMA 0.43
/* Deadline-bounded optional calls start only with this much budget left. */
#define OPTIONAL_MIN_MS 10.0
/* Resource and scope tables. API hosts are resources 0..hosts-1, then each
 * dependency's processes in DEPS order. */
enum { SC_HTTP, SC_LOCAL, SC_GRPC_CLIENT, SC_GRPC_SERVER, N_SCOPES };

static const SimScope SCOPES[N_SCOPES] = {
	{"io.opentelemetry.netty-4.1", "2.6.0-alpha"},
	{"mercury.home", "7.3.0"},
	{"io.opentelemetry.grpc-1.6", "2.6.0-alpha"},
	{"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc", "0.53.0"},
};

/* ---- world ---------------------------------------------------------------- */

static char *own(SimWorld *w, char *s)
{
	w->owned = xrealloc(w->owned, (size_t)(w->n_owned + 1) * sizeof *w->owned);
	w->owned[w->n_owned++] = s;
	return s;
}

static SimAttr str_attr(const char *k, const char *v)
{
	return (SimAttr){.key = k, .type = SIM_ATTR_STR, .s = v};
}

static SimAttr int_attr(const char *k, int64_t v)
{
	return (SimAttr){.key = k, .type = SIM_ATTR_INT, .i = v};
}

static SimAttr dbl_attr(const char *k, double v)
{
	return (SimAttr){.key = k, .type = SIM_ATTR_DOUBLE, .d = v};
}

static SimAttr bool_attr(const char *k, int v)
{
	return (SimAttr){.key = k, .type = SIM_ATTR_BOOL, .i = v != 0};
}

static void add_resource(SimWorld *w, const char *service, const char *version,
                         const char *lang, const char *sdk, int idx, int width)
{
	char name[64];
	snprintf(name, sizeof name, "%s-%0*d", strcmp(service, "mercury-api") == 0 ? "api" : service,
	         width, idx);
	SimResource *r = &w->resources[w->n_resources++];
	r->service = service;
	r->host = own(w, xstrdup(name));
	int n = 0;
	r->attrs[n++] = str_attr("service.name", service);
	r->attrs[n++] = str_attr("service.namespace", "mercury");
	r->attrs[n++] = str_attr("service.version", version);
	r->attrs[n++] = str_attr("host.name", r->host);
	r->attrs[n++] = str_attr("deployment.environment.name", "prod");
	r->attrs[n++] = str_attr("cloud.region", "eu-west-1");
	r->attrs[n++] = str_attr("telemetry.sdk.name", "opentelemetry");
	r->attrs[n++] = str_attr("telemetry.sdk.language", lang);
	r->attrs[n++] = str_attr("telemetry.sdk.version", sdk);
	r->n_attrs = n;
}

/* Index of the first resource of dependency dep in a world of `hosts` API
 * hosts. */
static int dep_resource(int hosts, int dep)
{
	int r = hosts;
	for (int d = 0; d < dep; d++)
		r += DEPS[d].hosts;
	return r;
}

int sim_world_init(SimWorld *w, const SimParams *p, Err *err)
{
	memset(w, 0, sizeof *w);
	if (strcmp(p->scenario, "mercury") != 0)
		return err_set(err, TT_ENOTFOUND, "unknown scenario '%s'", p->scenario);
	int total = p->hosts;
	for (int d = 0; d < N_DEPS; d++)
		total += DEPS[d].hosts;
	w->resources = xcalloc((size_t)total, sizeof *w->resources);
	int width = p->hosts > 99 ? 3 : 2;
	for (int h = 0; h < p->hosts; h++)
		add_resource(w, "mercury-api", "7.3.0", "java", "1.40.0", h + 1, width);
	for (int d = 0; d < N_DEPS; d++) {
		for (int h = 0; h < DEPS[d].hosts; h++)
			add_resource(w, DEPS[d].service, DEPS[d].version, "go", "1.28.0", h + 1, 2);
	}
	w->scopes = SCOPES;
	w->n_scopes = N_SCOPES;
	return 0;
}

void sim_world_fini(SimWorld *w)
{
	if (w == NULL)
		return;
	for (int i = 0; i < w->n_owned; i++)
		free(w->owned[i]);
	free(w->owned);
	free(w->resources);
	memset(w, 0, sizeof *w);
}

/* ---- what the scenario declares --------------------------------------- */

/* The case's revisit triggers (its decision record): what the comparison
 * of `tailtriage sim` reads "inside budget" against. */
static const SimBudgetInfo BUDGETS[] = {
	{"p99", "ingress.p99_ms", ">", 300, "ms"},
	{"queue_age", "endpoint.queue_age.p99_ms", ">", 12, "ms"},
	{"pool_occupancy", "pool.profile.occupancy", ">", 0.82, "ratio"},
	{"late_work", "late_work.ratio", ">", 0.02, "ratio"},
	{"omission", "omission.ratio", ">", 0.08, "ratio"},
	{"mix_change", "mix.change", ">", 0.15, "ratio"},
	{"recovery", "recovery.minutes", ">", 6, "min"},
};

static const SimCaseFigure CASE_FIGURES[] = {
	{"ingress p99", "ms", 318, NAN},
	{"fleet mean CPU", "%", 46, NAN},
	{"endpoint queue-age p99", "ms", 9, NAN},
	{"profile pool occupancy", "%", 79, NAN},
	{"late work", "%", 1.4, NAN},
	{"optional omission", "%", 3.1, NAN},
	{"pricing client wait p99", "ms", 71, 18},
	{"pricing server p99", "ms", 22, 20},
	{"enterprise mix", "%", 9, 5},
};

const SimCaseFigure *sim_case_figures(int *n)
{
	*n = (int)(sizeof CASE_FIGURES / sizeof CASE_FIGURES[0]);
	return CASE_FIGURES;
}

int sim_scenario_info(const SimParams *p, SimScenarioInfo *o, Err *err)
{
	memset(o, 0, sizeof *o);
	if (strcmp(p->scenario, "mercury") != 0)
		return err_set(err, TT_ENOTFOUND, "unknown scenario '%s'", p->scenario);
	o->endpoint = "GET /v2/home";
	o->root_service = "mercury-api";
	o->root_operation = "GET /v2/home";
	o->objective_ms = SIM_OBJECTIVE_MS;
	o->class_attr = "workload.class";
	for (int c = 0; c < N_CLASSES; c++)
		o->classes[c] = CLASS_NAMES[c];
	o->mix[CL_STANDARD] = 1 - p->premium_share - p->enterprise_share;
	o->mix[CL_PREMIUM] = p->premium_share;
	o->mix[CL_ENTERPRISE] = p->enterprise_share;
	/* The order of a request: validate, profile, entitlement, the fan-out,
	 * assemble. Recommendation and reputation run under a timeout and the
	 * response is marked partial without them; experiment is waited for
	 * but is not part of the core response (it records an exposure). */
	int n = 0;
	o->nodes[n++] = (SimNodeInfo){"mercury-api", "validate", 1, 1, NULL};
	for (int d = 0; d < N_DEPS; d++) {
		int optional = d == D_RECOMMENDATION || d == D_REPUTATION;
		o->nodes[n++] = (SimNodeInfo){DEPS[d].service, NULL, !optional,
		                              !optional && d != D_EXPERIMENT,
		                              d == D_PROFILE ? "profile" : d == D_PRICING ? "pricing" : NULL};
	}
	o->nodes[n++] = (SimNodeInfo){"mercury-api", "assemble", 1, 1, NULL};
	o->n_nodes = n;
	o->pools[0] = (SimPoolInfo){"endpoint-executor", "executor", "mercury-api", p->executor_slots};
	o->pools[1] = (SimPoolInfo){"profile", "client", "profile", p->profile_pool};
	o->pools[2] = (SimPoolInfo){"pricing", "client", "pricing", p->pricing_pool};
	o->n_pools = 3;
	o->budgets = BUDGETS;
	o->n_budgets = (int)(sizeof BUDGETS / sizeof BUDGETS[0]);
	return 0;
}

/* ---- phases and incident mechanisms ---------------------------------- */

typedef struct PhaseCfg {
	const char *name;
	int id;                    /* 1 baseline, 2 incident: selects the PRNG streams */
	int64_t start, end;        /* window [start, end) */
	double mix[N_CLASSES];
	double rate_mult;          /* arrival-rate multiplier */
	int hot[64];               /* hosts enterprise traffic concentrates on */
	int n_hot;
	double hot_share;          /* share of enterprise requests sent to them */
	int slowdown;              /* apply the profile+recommendation slowdown */
	int exec_slots, profile_pool, pricing_pool;
	int ent_pricing_slots;     /* enterprise's partition of pricing_pool, 0: shared */
	/* (added by "diag") */
	int slow_dep;              /* single-slowdown: D_* that slows down, -1 none */
	int fanout_calls;          /* pricing quotes per request of every class, 0: as usual */
	int serial_inventory;      /* inventory before the fan-out, not inside it */
	double retry_p;            /* share of inventory attempts that fail, 0: none */
	double wave_share, wave_mult;  /* arrival waves (both phases) */
	int wave_enterprise;       /* the waves carry enterprise requests only */
	double optional_budget_ms; /* deadline of optional calls after the root start, 0: none */
} PhaseCfg;

/* A mechanism turns a copy of the baseline configuration into the
 * incident's. Later drills add rows here; the model reads only PhaseCfg. */
typedef struct Mechanism {
	const char *name;          /* as listed by sim_incidents() */
	void (*apply)(PhaseCfg *c, const SimParams *p, uint64_t seed);
} Mechanism;

static void mech_none(PhaseCfg *c, const SimParams *p, uint64_t seed)
{
	(void)c, (void)p, (void)seed;
}

static void place_hot(PhaseCfg *c, const SimParams *p, uint64_t seed);

/* Enterprise grows from its baseline share to incident-enterprise-share
 * (standard and premium keep their ratio) and most of it lands on a few
 * hosts chosen by the seed: their pricing pools must carry several
 * partitioned quotes per enterprise request and start to queue. With
 * incident-wave-share set, enterprise also arrives in scheduled waves in
 * the incident (tenants' syncs: one second in round(1/incident-wave-share)
 * brings incident-wave-mult times enterprise's mean rate), so the pricing
 * pools of every host queue in a wave and the wait lands on the enterprise
 * requests, the heavy ones. */
static void mech_pricing_client_wait(PhaseCfg *c, const SimParams *p, uint64_t seed)
{
	place_hot(c, p, seed);
	if (p->incident_wave_share > 0) {
		c->wave_share = p->incident_wave_share;
		c->wave_mult = p->incident_wave_mult;
		c->wave_enterprise = 1;
	}
}

/* The mix and placement part of pricing-client-wait. */
static void place_hot(PhaseCfg *c, const SimParams *p, uint64_t seed)
{
	double e = p->incident_enterprise_share;
	double rest = c->mix[CL_STANDARD] + c->mix[CL_PREMIUM];
	double k = rest > 0 ? (1 - e) / rest : 0;
	c->mix[CL_STANDARD] *= k;
	c->mix[CL_PREMIUM] *= k;
	c->mix[CL_ENTERPRISE] = e;
	SimRng r;
	sim_rng_seed(&r, seed, 0x706c6163656d656eull);   /* "placement" */
	int order[256];
	for (int i = 0; i < p->hosts; i++)
		order[i] = i;
	for (int i = 0; i < p->hot_hosts; i++) {         /* partial Fisher-Yates */
		int j = i + (int)sim_rng_below(&r, (uint32_t)(p->hosts - i));
		int t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	c->n_hot = p->hot_hosts;
	for (int i = 0; i < c->n_hot; i++)
		c->hot[i] = order[i];
	for (int i = 1; i < c->n_hot; i++)               /* sorted, for reading */
		for (int j = i; j > 0 && c->hot[j - 1] > c->hot[j]; j--) {
			int t = c->hot[j];
			c->hot[j] = c->hot[j - 1];
			c->hot[j - 1] = t;
		}
	c->hot_share = p->hot_share;
}

/* A peak wave: more arrivals against the same executor and profile pool. */
static void mech_executor_saturation(PhaseCfg *c, const SimParams *p, uint64_t seed)
{
	(void)seed;
	c->rate_mult = p->surge;
}

static void mech_dependency_slowdown(PhaseCfg *c, const SimParams *p, uint64_t seed)
{
	(void)p, (void)seed;
	c->slowdown = 1;
}

/* ---- mechanisms that inject one cause each (added by "diag"): the
 * diagnosis tests inject them one at a time and expect the matching
 * hypothesis first. */

static void mech_pricing_pool_shrink(PhaseCfg *c, const SimParams *p, uint64_t seed)
{
	(void)seed;
	c->pricing_pool = p->incident_pricing_pool;
}

static void mech_class_mix_shift(PhaseCfg *c, const SimParams *p, uint64_t seed)
{
	(void)seed;
	double e = p->incident_enterprise_share;
	double rest = c->mix[CL_STANDARD] + c->mix[CL_PREMIUM];
	double k = rest > 0 ? (1 - e) / rest : 0;
	c->mix[CL_STANDARD] *= k;
	c->mix[CL_PREMIUM] *= k;
	c->mix[CL_ENTERPRISE] = e;
}

/* The placement half of pricing-client-wait: same hot hosts, same mix. */
static void mech_placement_hotspot(PhaseCfg *c, const SimParams *p, uint64_t seed)
{
	double mix[N_CLASSES];
	memcpy(mix, c->mix, sizeof mix);
	place_hot(c, p, seed);
	memcpy(c->mix, mix, sizeof mix);
}

static const char *const DEP_NAMES[N_DEPS] = {"profile", "entitlement", "inventory", "pricing",
                                              "recommendation", "reputation", "experiment"};

static void mech_single_slowdown(PhaseCfg *c, const SimParams *p, uint64_t seed)
{
	(void)seed;
	for (int d = 0; d < N_DEPS; d++)
		if (strcmp(p->slowdown_dep, DEP_NAMES[d]) == 0)
			c->slow_dep = d;
}

static void mech_serial_hop(PhaseCfg *c, const SimParams *p, uint64_t seed)
{
	(void)p, (void)seed;
	c->serial_inventory = 1;
}

/* Every request asks fanout-calls quotes; the pool grows with them so the
 * wait for connections stays what it was and only the fan-out changes. */
static void mech_wider_fanout(PhaseCfg *c, const SimParams *p, uint64_t seed)
{
	(void)seed;
	c->fanout_calls = p->fanout_calls;
	c->pricing_pool = (p->pricing_pool * p->fanout_calls + p->pricing_calls - 1) / p->pricing_calls;
}

static void mech_retry_storm(PhaseCfg *c, const SimParams *p, uint64_t seed)
{
	(void)seed;
	c->retry_p = p->retry_p;
}

static const Mechanism MECHANISMS[] = {
	{"pricing-client-wait", mech_pricing_client_wait},
	{"none", mech_none},
	{"executor-saturation", mech_executor_saturation},
	{"dependency-slowdown", mech_dependency_slowdown},
	{"pricing-pool-shrink", mech_pricing_pool_shrink},
	{"class-mix-shift", mech_class_mix_shift},
	{"placement-hotspot", mech_placement_hotspot},
	{"single-slowdown", mech_single_slowdown},
	{"serial-hop", mech_serial_hop},
	{"wider-fanout", mech_wider_fanout},
	{"retry-storm", mech_retry_storm},
};

/* Service-time multiplier of the dependency slowdown at t: 1, ramp up to
 * slowdown-factor, hold, ramp down, 1. */
static double slowdown_mult(const SimParams *p, const PhaseCfg *c, int64_t t)
{
	double x = (double)(t - c->start) * 1e-9 - p->slowdown_start_s;
	double f = p->slowdown_factor, ramp = p->slowdown_ramp_s;
	if (x < 0)
		return 1;
	if (x < ramp)
		return 1 + (f - 1) * x / ramp;
	x -= ramp;
	if (x < p->slowdown_hold_s)
		return f;
	x -= p->slowdown_hold_s;
	if (x < ramp)
		return f - (f - 1) * x / ramp;
	return 1;
}

/* Arrival-rate multiplier of the second holding t: notification waves.
 * Batches go out on a schedule: every round(1 / wave-share) seconds one
 * whole second of the clock is a wave, with requests arriving at wave-mult
 * times the window's mean rate (the schedule's offset comes from the phase
 * seed); the other seconds have fewer arrivals, so the mean rate stays
 * `rate`. */
static double wave_rate(const PhaseCfg *c, uint64_t phase_seed, int64_t t)
{
	if (c->wave_share <= 0 || c->wave_mult <= 1)
		return 1;
	int64_t period = llround(1 / c->wave_share);
	if (period < 2)
		period = 2;
	uint64_t x = phase_seed ^ 0xd1b54a32d192ed03ull;
	int64_t offset = (int64_t)(sim_splitmix64(&x) % (uint64_t)period);
	double share = 1.0 / (double)period;
	if ((t / 1000000000 + offset) % period == 0)
		return c->wave_mult;
	return (1 - share * c->wave_mult) / (1 - share);
}

/* Next arrival after t of the fleet's Poisson stream whose rate follows
 * wave_rate(): an exponential gap at the current second's rate; a gap that
 * crosses into the next second is redrawn from there (memoryless). */
static int64_t next_arrival_after(const PhaseCfg *c, uint64_t phase_seed, SimRng *r, int64_t t,
                                  double mean_gap_ns)
{
	if (c->wave_share <= 0 || c->wave_mult <= 1)    /* no waves: a plain Poisson stream */
		return t + (int64_t)(sim_rng_exp(r, mean_gap_ns) + 0.5);
	for (;;) {
		int64_t sec_end = (t / 1000000000 + 1) * 1000000000;
		double w = wave_rate(c, phase_seed, t), e = c->mix[CL_ENTERPRISE];
		double g = sim_rng_exp(r, mean_gap_ns / (c->wave_enterprise ? 1 - e + e * w : w));
		int64_t n = t + (int64_t)(g + 0.5);
		if (n < sec_end)
			return n;
		t = sec_end;
	}
}

/* ---- figures ---------------------------------------------------------- */

typedef struct Vec {
	float *v;
	size_t n, cap;
} Vec;

static void vec_add(Vec *v, double x)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 1024;
		v->v = xrealloc(v->v, v->cap * sizeof *v->v);
	}
	v->v[v->n++] = (float)x;
}

/* Nearest rank: the ceil(q*n)-th smallest, by quickselect (reorders v). */
static double vec_rank(Vec *v, double q)
{
	if (v->n == 0)
		return 0;
	size_t k = (size_t)ceil(q * (double)v->n);
	if (k < 1)
		k = 1;
	k--;
	float *a = v->v;
	size_t lo = 0, hi = v->n - 1;
	while (lo < hi) {
		float pivot = a[lo + (hi - lo) / 2];
		size_t i = lo, j = hi;
		while (i <= j) {
			while (a[i] < pivot)
				i++;
			while (a[j] > pivot)
				j--;
			if (i <= j) {
				float t = a[i];
				a[i] = a[j];
				a[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			break;
	}
	return a[k];
}

typedef struct Tally {
	Vec root, edge, qwait, pwait, pc, pcw, ps;
	Vec req_edge, req_price_cp;  /* per request, in order: for the slow set */
	int64_t cls[N_CLASSES];
	int64_t omitted, late;
	int64_t requests;
} Tally;

static void tally_fini(Tally *t)
{
	Vec *v[] = {&t->root, &t->edge, &t->qwait, &t->pwait, &t->pc, &t->pcw, &t->ps,
	            &t->req_edge, &t->req_price_cp};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
		free(v[i]->v);
	memset(t, 0, sizeof *t);
}

static void tally_figures(Tally *t, SimFigures *f)
{
	memset(f, 0, sizeof *f);
	f->requests = t->requests;
	f->ingress_p99_ms = vec_rank(&t->root, 0.99);
	f->ingress_p50_ms = vec_rank(&t->root, 0.50);
	f->edge_p99_ms = vec_rank(&t->edge, 0.99);
	f->queue_wait_p99_ms = vec_rank(&t->qwait, 0.99);
	f->profile_wait_p99_ms = vec_rank(&t->pwait, 0.99);
	f->pricing_calls = (int64_t)t->pc.n;
	f->pricing_client_p99_ms = vec_rank(&t->pc, 0.99);
	f->pricing_client_wait_p99_ms = vec_rank(&t->pcw, 0.99);
	f->pricing_server_p99_ms = vec_rank(&t->ps, 0.99);
	for (int c = 0; c < N_CLASSES; c++)
		f->class_share[c] = t->requests ? (double)t->cls[c] / (double)t->requests : 0;
	f->omitted_share = t->requests ? (double)t->omitted / (double)t->requests : 0;
	f->late_share = t->requests ? (double)t->late / (double)t->requests : 0;
	/* The slow set, as the report defines it: above the objective when at
	 * least 20 requests are, else the slowest max(20, 5 %). */
	size_t n = t->req_edge.n, above = 0;
	for (size_t i = 0; i < n; i++)
		above += t->req_edge.v[i] > (float)SIM_OBJECTIVE_MS;
	double thr = SIM_OBJECTIVE_MS;
	int strict = 1;
	if (above < 20 && n >= 20) {
		size_t k = (size_t)ceil(0.05 * (double)n);
		if (k < 20)
			k = 20;
		Vec tmp = {xmalloc(n * sizeof(float)), n, n};
		memcpy(tmp.v, t->req_edge.v, n * sizeof(float));
		thr = vec_rank(&tmp, 1.0 - (double)k / (double)n);
		free(tmp.v);
		strict = 0;
	}
	double tot = 0, price = 0;
	for (size_t i = 0; i < n; i++) {
		float e = t->req_edge.v[i];
		if (strict ? e > (float)thr : e >= (float)thr) {
			f->slow++;
			tot += e;
			price += t->req_price_cp.v[i];
		}
	}
	f->slow_threshold_ms = thr;
	f->pricing_cp_share = tot > 0 ? price / tot : 0;
}

/* ---- requests --------------------------------------------------------- */

typedef struct Call {
	int64_t c0, c1;            /* client span */
	int64_t s0, s1;            /* server span */
	int64_t wait;              /* pool wait: before c0 (profile) or inside (pricing) */
	int64_t req_t;             /* when the pool was asked (profile) */
	int host;                  /* callee process, index within the dependency */
	int timed_out;
	int failed;                /* the server answered with an error (retry-storm) */
	int skipped;               /* optional call not started: too little budget left */
} Call;

enum { BR_INVENTORY, BR_RECOMMENDATION, BR_REPUTATION, BR_EXPERIMENT, N_BRANCHES };
static const int BRANCH_DEP[N_BRANCHES] = {D_INVENTORY, D_RECOMMENDATION, D_REPUTATION,
                                           D_EXPERIMENT};

typedef struct Req {
	SimRng rng;
	uint64_t index;            /* arrival number in the phase */
	int cls, host, traced;
	double size;               /* request size factor */
	int64_t t_arr, t0, t1;     /* arrival, root span */
	int64_t v0, v1, a0, a1;    /* validate, assemble */
	Call prof, ent;
	Call br[N_BRANCHES];
	Call price[SIM_MAX_PRICING];
	int n_price, price_left;
	int64_t other_end;         /* latest client end of the non-pricing branches */
	uint32_t next_free;
	Call inv_try[2];           /* failed inventory attempts before br[BR_INVENTORY] */
	int n_inv_try;
} Req;

enum { EV_ARRIVE, EV_PROFILE_ASK, EV_PROFILE_DONE, EV_PRICE_ASK, EV_PRICE_DONE,
       EV_FINISH, EV_WINDOW_START, EV_TICK, EV_WINDOW_END };

#define NONE UINT32_MAX

typedef struct Model {
	const SimParams *p;
	const SimWorld *w;
	const SimSink *sink;
	const PhaseCfg *c;
	int phase;
	uint64_t phase_seed;
	int dep_res[N_DEPS];       /* first resource of each dependency */
	SimHeap heap;
	SimPool *exec, *prof, *price;
	SimPool *price_ent;        /* enterprise's partition of the pricing pool (may be size 0) */
	Req *reqs;
	uint32_t n_reqs, cap_reqs, free_list;
	Tally pop, sample;
	double occ[3];             /* time-averaged occupancy of exec/profile/pricing */
	double cpu_window_ms;      /* CPU charged by requests that finished in the window */
	SimSpan spans[6 + 2 * (N_BRANCHES + SIM_MAX_PRICING + 2) + 1];
	int64_t traces, n_spans;
	int stop;                  /* sink failed */
	Err *err;
	/* metrics (added by "diag"): per host CPU and wait histograms */
	double *cpu_ms;            /* CPU charged since cpu_since */
	int64_t cpu_since, begin;
	uint64_t (*hist)[3][SIM_WAIT_BUCKETS];
	double (*hist_sum)[3];
	double *place_cdf;         /* placement of the other classes, see place_cdf_new() */
} Model;

enum { H_EXEC, H_PROFILE, H_PRICING };

static void hist_add(Model *m, int host, int which, int64_t wait_ns)
{
	double ms = (double)wait_ns / 1e6;
	const double *b = sim_wait_bounds_ms();
	int k = 0;
	while (k < SIM_WAIT_BUCKETS - 1 && ms > b[k])
		k++;
	m->hist[host][which][k]++;
	m->hist_sum[host][which] += ms;
}

static uint32_t req_new(Model *m)
{
	if (m->free_list != NONE) {
		uint32_t i = m->free_list;
		m->free_list = m->reqs[i].next_free;
		return i;
	}
	if (m->n_reqs == m->cap_reqs) {
		m->cap_reqs = m->cap_reqs ? m->cap_reqs * 2 : 1024;
		m->reqs = xrealloc(m->reqs, m->cap_reqs * sizeof *m->reqs);
	}
	return m->n_reqs++;
}

static void req_free(Model *m, uint32_t i)
{
	m->reqs[i].next_free = m->free_list;
	m->free_list = i;
}

/* Milliseconds (>= 0) to whole nanoseconds. */
static int64_t ms_ns(double ms)
{
	return (int64_t)(ms * 1e6 + 0.5);
}

/* In-process hand-off between steps: 20-120 us. */
static int64_t gap(SimRng *r)
{
	return 20000 + (int64_t)sim_rng_below(r, 100000);
}

/* Network and serialization around one call: a round trip drawn once and
 * split between the request and the response leg. */
static void net_legs(SimRng *r, int64_t *out, int64_t *back)
{
	int64_t rtt = 300000 + ms_ns(sim_rng_lognormal(r, 0.60, 0.55));
	int64_t a = rtt * (int64_t)(35 + sim_rng_below(r, 31)) / 100;
	*out = a;
	*back = rtt - a;
}

static double service_ms(const Model *m, Req *q, int dep, int64_t t)
{
	const Dep *d = &DEPS[dep];
	double s = sim_rng_lognormal(&q->rng, d->median_ms, d->sigma);
	s *= d->class_mult[q->cls] * (d->size_exp == 1.0 ? q->size : pow(q->size, d->size_exp));
	if (m->c->slowdown && (dep == D_PROFILE || dep == D_RECOMMENDATION))
		s *= slowdown_mult(m->p, m->c, t);
	if (m->c->slow_dep == dep)
		s *= slowdown_mult(m->p, m->c, t);
	if (dep == D_PRICING && m->p->straggler_p > 0 && sim_rng_unit(&q->rng) < m->p->straggler_p)
		s *= m->p->straggler_mult;
	return s;
}

/* A call without a pool: client span opens at c0, the request crosses the
 * network, the server works, the response comes back. */
static void plain_call(Model *m, Req *q, Call *k, int dep, int64_t c0, double timeout_ms)
{
	k->c0 = c0;
	k->wait = 0;
	k->host = (int)sim_rng_below(&q->rng, (uint32_t)DEPS[dep].hosts);
	int64_t out, back;
	net_legs(&q->rng, &out, &back);
	k->s0 = c0 + out;
	k->s1 = k->s0 + ms_ns(service_ms(m, q, dep, c0));
	k->c1 = k->s1 + back;
	k->timed_out = 0;
	if (timeout_ms > 0 && k->c1 - c0 > ms_ns(timeout_ms)) {
		k->c1 = c0 + ms_ns(timeout_ms);
		k->timed_out = 1;
		/* The deadline travels with the call: a handler that checks it
		 * stops there; one that does not finishes its work for nobody. */
		if (m->p->cancel_stop_p > 0 && sim_rng_unit(&q->rng) < m->p->cancel_stop_p &&
		    k->s1 > k->c1)
			k->s1 = k->c1 > k->s0 ? k->c1 : k->s0;
	}
}

static void schedule(Model *m, int64_t t, uint32_t who, int type, int arg)
{
	sim_heap_push(&m->heap, t, who, type, arg);
}

static void on_exec_granted(Model *m, uint32_t i, int64_t t)
{
	Req *q = &m->reqs[i];
	q->t0 = t;
	hist_add(m, q->host, H_EXEC, t - q->t_arr);
	q->v0 = t + gap(&q->rng);
	q->v1 = q->v0 + ms_ns(sim_rng_lognormal(&q->rng, VALIDATE_MEDIAN_MS, VALIDATE_SIGMA));
	q->prof.req_t = q->v1 + gap(&q->rng);
	schedule(m, q->prof.req_t, i, EV_PROFILE_ASK, 0);
}

static void on_profile_granted(Model *m, uint32_t i, int64_t t)
{
	Req *q = &m->reqs[i];
	int64_t asked = q->prof.req_t;
	plain_call(m, q, &q->prof, D_PROFILE, t, 0);
	q->prof.req_t = asked;
	q->prof.wait = t - asked;
	hist_add(m, q->host, H_PROFILE, q->prof.wait);
	schedule(m, q->prof.c1, i, EV_PROFILE_DONE, 0);
}

static void on_price_granted(Model *m, uint32_t i, int k, int64_t t)
{
	Req *q = &m->reqs[i];
	Call *c = &q->price[k];
	int64_t out, back;
	net_legs(&q->rng, &out, &back);
	c->wait = t - c->c0;
	hist_add(m, q->host, H_PRICING, c->wait);
	c->s0 = t + out;
	c->s1 = c->s0 + ms_ns(service_ms(m, q, D_PRICING, t));
	c->c1 = c->s1 + back;
	schedule(m, c->c1, i, EV_PRICE_DONE, k);
}

/* Profile answered: entitlement (serial), then the parallel fan-out. */
static void after_profile(Model *m, uint32_t i, int64_t t)
{
	Req *q = &m->reqs[i];
	plain_call(m, q, &q->ent, D_ENTITLEMENT, t + gap(&q->rng), 0);
	int64_t f = q->ent.c1 + gap(&q->rng);
	/* The fan-out is launched by one loop: each call a few tens of us after
	 * the previous one. Order: inventory, pricing..., recommendation,
	 * reputation, experiment. */
	int64_t at = f;
	/* retry-storm: failed inventory attempts (the server does its work and
	 * then fails, as an overloaded backend or a timeout would), each
	 * followed by a 2-5 ms backoff */
	int64_t inv_at = f;
	while (m->c->retry_p > 0 && q->n_inv_try < 2 && sim_rng_unit(&q->rng) < m->c->retry_p) {
		Call *k = &q->inv_try[q->n_inv_try++];
		plain_call(m, q, k, D_INVENTORY, inv_at, 0);
		k->failed = 1;
		inv_at = k->c1 + 2000000 + (int64_t)sim_rng_below(&q->rng, 3000000);
	}
	plain_call(m, q, &q->br[BR_INVENTORY], D_INVENTORY, inv_at, 0);
	q->other_end = q->br[BR_INVENTORY].c1;
	if (m->c->serial_inventory) /* serial-hop: the fan-out waits for inventory */
		at = q->br[BR_INVENTORY].c1 + gap(&q->rng);
	q->n_price = m->p->pricing_calls;
	if (q->cls == CL_ENTERPRISE) {
		/* one quote per catalogue partition: a bigger tenant request spans
		 * more of them (enterprise-pricing-calls at the median size) */
		double k = m->p->enterprise_pricing_calls * q->size / m->p->enterprise_size;
		q->n_price = (int)lround(k);
		if (q->n_price < 1)
			q->n_price = 1;
		if (q->n_price > SIM_MAX_PRICING)
			q->n_price = SIM_MAX_PRICING;
	}
	if (m->c->fanout_calls > q->n_price)
		q->n_price = m->c->fanout_calls;
	q->price_left = q->n_price;
	for (int k = 0; k < q->n_price; k++) {
		at += 30000 + (int64_t)sim_rng_below(&q->rng, 50000);
		Call *c = &q->price[k];
		c->c0 = at;
		c->host = (int)sim_rng_below(&q->rng, (uint32_t)DEPS[D_PRICING].hosts);
		c->timed_out = 0;
		schedule(m, at, i, EV_PRICE_ASK, k);
	}
	static const int rest[] = {BR_RECOMMENDATION, BR_REPUTATION, BR_EXPERIMENT};
	for (int j = 0; j < 3; j++) {
		int b = rest[j];
		double to = b == BR_RECOMMENDATION ? m->p->rec_timeout_ms
		          : b == BR_REPUTATION ? m->p->rep_timeout_ms : 0;
		at += 30000 + (int64_t)sim_rng_below(&q->rng, 50000);
		if (to > 0 && m->c->optional_budget_ms > 0) {
			/* deadline-bounded optional work: the call gets what is left
			 * of the request's optional budget, and is not started at all
			 * when that is too little to be useful */
			double left = m->c->optional_budget_ms - (double)(at - q->t0) * 1e-6;
			if (left < OPTIONAL_MIN_MS) {
				q->br[b].skipped = 1;
				continue;
			}
			if (left < to)
				to = left;
		}
		plain_call(m, q, &q->br[b], BRANCH_DEP[b], at, to);
		if (q->br[b].c1 > q->other_end)
			q->other_end = q->br[b].c1;
	}
}

/* Every branch answered: assemble, respond, release the executor slot. */
static void after_fanout(Model *m, uint32_t i)
{
	Req *q = &m->reqs[i];
	int64_t join = q->other_end;
	for (int k = 0; k < q->n_price; k++)
		if (q->price[k].c1 > join)
			join = q->price[k].c1;
	q->a0 = join + gap(&q->rng);
	q->a1 = q->a0 + ms_ns(sim_rng_lognormal(&q->rng, ASSEMBLE_MEDIAN_MS, ASSEMBLE_SIGMA) *
	                      ASSEMBLE_CLASS_MULT[q->cls] * sqrt(q->size));
	q->t1 = q->a1 + gap(&q->rng);
	schedule(m, q->t1, i, EV_FINISH, 0);
}

/* ---- sampled traces -------------------------------------------------- */

static SimSpan *span_at(Model *m, int *n, int parent, int resource, int scope,
                        const char *name, int kind, int64_t s, int64_t e)
{
	SimSpan *sp = &m->spans[(*n)++];
	sp->parent = parent;
	sp->resource = resource;
	sp->scope = scope;
	sp->name = name;
	sp->kind = kind;
	sp->start_ns = s;
	sp->end_ns = e;
	sp->status = 0;
	sp->status_msg = NULL;
	sp->n_attrs = 0;
	return sp;
}

static void attr(SimSpan *sp, SimAttr a)
{
	if (sp->n_attrs < SIM_SPAN_MAX_ATTRS)
		sp->attrs[sp->n_attrs++] = a;
}

static void rpc_attrs(SimSpan *sp, const Dep *d)
{
	attr(sp, str_attr("rpc.system", "grpc"));
	attr(sp, str_attr("rpc.service", d->rpc_service));
	attr(sp, str_attr("rpc.method", d->server_op));
}

/* Adds the CLIENT span of call k and its SERVER child; returns the client
 * span's index. */
static int call_spans(Model *m, int *n, const Req *q, const Call *k, int dep, int parent)
{
	const Dep *d = &DEPS[dep];
	int ci = *n;
	SimSpan *c = span_at(m, n, parent, q->host, SC_GRPC_CLIENT, d->client_op, 3, k->c0, k->c1);
	rpc_attrs(c, d);
	attr(c, str_attr("server.address", d->address));
	attr(c, int_attr("server.port", 8443));
	attr(c, str_attr("peer.service", d->service));
	attr(c, int_attr("rpc.grpc.status_code", k->timed_out ? 4 : k->failed ? 14 : 0));
	if (k->timed_out) {
		c->status = 2;
		c->status_msg = "DEADLINE_EXCEEDED: client timeout";
	} else if (k->failed) {
		c->status = 2;
		c->status_msg = "UNAVAILABLE: upstream error";
	}
	int res = m->dep_res[dep] + k->host;
	SimSpan *s = span_at(m, n, ci, res, SC_GRPC_SERVER, d->server_op, 2, k->s0, k->s1);
	rpc_attrs(s, d);
	attr(s, int_attr("rpc.grpc.status_code", k->failed ? 14 : 0));
	if (k->failed) {
		s->status = 2;
		s->status_msg = "UNAVAILABLE";
	}
	attr(s, str_attr("client.address", m->w->resources[q->host].host));
	attr(s, str_attr("server.address", m->w->resources[res].host));
	return ci;
}

static int emit_trace(Model *m, uint32_t i)
{
	Req *q = &m->reqs[i];
	SimRng ids;
	sim_rng_seed(&ids, m->phase_seed ^ 0x1d5u, q->index);
	SimTrace t;
	for (;;) {
		uint64_t a = sim_rng_u64(&ids), b = sim_rng_u64(&ids);
		for (int k = 0; k < 8; k++) {
			t.trace_id[k] = (uint8_t)(a >> (56 - 8 * k));
			t.trace_id[8 + k] = (uint8_t)(b >> (56 - 8 * k));
		}
		if (a | b)
			break;
	}
	int n = 0;
	SimSpan *root = span_at(m, &n, -1, q->host, SC_HTTP, "GET /v2/home", 2, q->t0, q->t1);
	attr(root, str_attr("http.request.method", "GET"));
	attr(root, str_attr("http.route", "/v2/home"));
	attr(root, str_attr("url.path", "/v2/home"));
	attr(root, str_attr("url.scheme", "https"));
	attr(root, str_attr("server.address", "api.mercury.example.com"));
	attr(root, str_attr("network.protocol.version", "1.1"));
	attr(root, int_attr("http.response.status_code", 200));
	attr(root, int_attr("http.response.body.size",
	                    (int64_t)(9000.0 * q->size * ASSEMBLE_CLASS_MULT[q->cls] * ASSEMBLE_CLASS_MULT[q->cls])));
	attr(root, str_attr("workload.class", CLASS_NAMES[q->cls]));
	attr(root, dbl_attr("queue.wait_ms", (double)(q->t0 - q->t_arr) * 1e-6));

	SimSpan *v = span_at(m, &n, 0, q->host, SC_LOCAL, "validate", 1, q->v0, q->v1);
	attr(v, str_attr("code.function", "HomeHandler.validate"));
	attr(v, str_attr("mercury.auth.scheme", "bearer"));

	int pi = call_spans(m, &n, q, &q->prof, D_PROFILE, 0);
	attr(&m->spans[pi], dbl_attr("queue.wait_ms", (double)q->prof.wait * 1e-6));
	call_spans(m, &n, q, &q->ent, D_ENTITLEMENT, 0);
	for (int k = 0; k < q->n_inv_try; k++)
		call_spans(m, &n, q, &q->inv_try[k], D_INVENTORY, 0);
	call_spans(m, &n, q, &q->br[BR_INVENTORY], D_INVENTORY, 0);
	for (int k = 0; k < q->n_price; k++) {
		int ci = call_spans(m, &n, q, &q->price[k], D_PRICING, 0);
		if (q->n_price > 1) {
			attr(&m->spans[ci], int_attr("pricing.partition", k));
			attr(&m->spans[ci], int_attr("pricing.partitions", q->n_price));
		}
	}
	int omitted = 0;
	for (int b = BR_RECOMMENDATION; b < N_BRANCHES; b++) {
		if (q->br[b].skipped) {
			omitted = 1;
			continue;
		}
		call_spans(m, &n, q, &q->br[b], BRANCH_DEP[b], 0);
		omitted |= q->br[b].timed_out;
	}
	SimSpan *a = span_at(m, &n, 0, q->host, SC_LOCAL, "assemble", 1, q->a0, q->a1);
	attr(a, str_attr("code.function", "HomeHandler.assemble"));
	attr(a, bool_attr("mercury.response.partial", omitted));

	/* Distinct non-zero span ids. */
	for (int k = 0; k < n; k++) {
		uint64_t id;
		int dup;
		do {
			id = sim_rng_u64(&ids);
			dup = id == 0;
			for (int j = 0; j < k && !dup; j++)
				dup = m->spans[j].span_id == id;
		} while (dup);
		m->spans[k].span_id = id;
	}
	t.phase = m->phase;
	t.n_spans = n;
	t.spans = m->spans;
	m->traces++;
	m->n_spans += n;
	return m->sink->trace(m->sink->ctx, &t, m->err);
}

static void tally_request(Tally *t, const Req *q)
{
	t->requests++;
	t->cls[q->cls]++;
	vec_add(&t->root, (double)(q->t1 - q->t0) * 1e-6);
	vec_add(&t->edge, (double)(q->t1 - q->t_arr) * 1e-6);
	vec_add(&t->qwait, (double)(q->t0 - q->t_arr) * 1e-6);
	vec_add(&t->pwait, (double)q->prof.wait * 1e-6);
	for (int k = 0; k < q->n_price; k++) {
		const Call *c = &q->price[k];
		vec_add(&t->pc, (double)(c->c1 - c->c0) * 1e-6);
		vec_add(&t->pcw, (double)((c->c1 - c->c0) - (c->s1 - c->s0)) * 1e-6);
		vec_add(&t->ps, (double)(c->s1 - c->s0) * 1e-6);
	}
	if (q->br[BR_RECOMMENDATION].timed_out || q->br[BR_REPUTATION].timed_out ||
	    q->br[BR_RECOMMENDATION].skipped || q->br[BR_REPUTATION].skipped)
		t->omitted++;
	int late = 0;
	for (int b = BR_RECOMMENDATION; b < N_BRANCHES; b++)
		late |= !q->br[b].skipped && q->br[b].timed_out && q->br[b].s1 > q->br[b].c1;
	t->late += late;
	/* pricing on the critical path: its last quote is what the fan-out
	 * waited for (it ended after every other branch) */
	const Call *last = NULL;
	for (int k = 0; k < q->n_price; k++)
		if (last == NULL || q->price[k].c1 > last->c1)
			last = &q->price[k];
	vec_add(&t->req_edge, (double)(q->t1 - q->t_arr) * 1e-6);
	vec_add(&t->req_price_cp,
	        last && last->c1 > q->other_end ? (double)(last->c1 - last->c0) * 1e-6 : 0);
}

/* ---- the run ------------------------------------------------------------ */

static void grant(Model *m, const SimWaiter *w, int64_t t, int type)
{
	if (type == EV_ARRIVE)
		on_exec_granted(m, w->who, t);
	else if (type == EV_PROFILE_ASK)
		on_profile_granted(m, w->who, t);
	else
		on_price_granted(m, w->who, w->arg, t);
}

/* The pricing pool (partition) request i takes its connections from. */
static SimPool *price_pool(Model *m, uint32_t i)
{
	const Req *q = &m->reqs[i];
	if (q->cls == CL_ENTERPRISE && m->price_ent[q->host].max > 0)
		return &m->price_ent[q->host];
	return &m->price[q->host];
}

/* The balancer keeps every host's request rate level: when enterprise
 * (tenant-affine) traffic concentrates on the hot hosts, the other classes
 * are sent elsewhere in proportion. place_cdf[h] is the cumulative share
 * of non-enterprise requests placed on hosts 0..h; NULL without hot
 * hosts. */
static double *place_cdf_new(const SimParams *p, const PhaseCfg *c)
{
	if (c->n_hot <= 0 || c->hot_share <= 0)
		return NULL;
	int H = p->hosts;
	double e = c->mix[CL_ENTERPRISE];
	if (e >= 1)
		return NULL;
	double *cdf = xcalloc((size_t)H, sizeof *cdf), sum = 0;
	for (int h = 0; h < H; h++) {
		int hot = 0;
		for (int i = 0; i < c->n_hot; i++)
			hot |= c->hot[i] == h;
		double eh = (1 - c->hot_share) / H + (hot ? c->hot_share / c->n_hot : 0);
		double w = 1.0 / H - e * eh;
		sum += w > 0 ? w : 0;
		cdf[h] = sum;
	}
	if (sum <= 0) {
		free(cdf);
		return NULL;
	}
	for (int h = 0; h < H; h++)
		cdf[h] /= sum;
	return cdf;
}

/* The first host whose cumulative share exceeds u (binary search). */
static int place_other(const Model *m, double u)
{
	int lo = 0, hi = m->p->hosts - 1;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (u >= m->place_cdf[mid])
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void new_request(Model *m, uint64_t index, int64_t t, int traced)
{
	uint32_t i = req_new(m);
	Req *q = &m->reqs[i];
	memset(q, 0, sizeof *q);
	sim_rng_seed(&q->rng, m->phase_seed, index);
	q->index = index;
	q->t_arr = t;
	q->traced = traced;
	double u = sim_rng_unit(&q->rng);
	double pe = m->c->mix[CL_ENTERPRISE], pp = m->c->mix[CL_PREMIUM];
	if (m->c->wave_enterprise) {   /* this second's mix: waves carry enterprise */
		double w = wave_rate(m->c, m->phase_seed, t), e = pe;
		if (w != 1) {
			pe = e * w / (1 - e + e * w);
			pp *= (1 - pe) / (1 - e > 0 ? 1 - e : 1);
		}
	}
	q->cls = u < pe ? CL_ENTERPRISE : u < pe + pp ? CL_PREMIUM : CL_STANDARD;
	if (q->cls == CL_ENTERPRISE && m->c->n_hot > 0 && sim_rng_unit(&q->rng) < m->c->hot_share)
		q->host = m->c->hot[sim_rng_below(&q->rng, (uint32_t)m->c->n_hot)];
	else if (q->cls != CL_ENTERPRISE && m->place_cdf != NULL)
		q->host = place_other(m, sim_rng_unit(&q->rng));
	else
		q->host = (int)sim_rng_below(&q->rng, (uint32_t)m->p->hosts);
	q->size = sim_rng_lognormal(&q->rng, q->cls == CL_ENTERPRISE ? m->p->enterprise_size : 1.0,
	                            SIZE_SIGMA);
	if (sim_pool_acquire(&m->exec[q->host], t, i, 0))
		on_exec_granted(m, i, t);
}

static void emit_samples(Model *m, int64_t t)
{
	if (m->sink->sample == NULL)
		return;
	for (int h = 0; h < m->p->hosts && !m->stop; h++) {
		SimSample s = {
		    .t_ns = t, .phase = m->phase, .host = h,
		    .exec_used = m->exec[h].used, .exec_max = m->exec[h].max,
		    .exec_pending = (int)m->exec[h].n,
		    .profile_used = m->prof[h].used, .profile_max = m->prof[h].max,
		    .profile_pending = (int)m->prof[h].n,
		    .pricing_used = m->price[h].used + m->price_ent[h].used,
		    .pricing_max = m->price[h].max + m->price_ent[h].max,
		    .pricing_pending = (int)(m->price[h].n + m->price_ent[h].n),
		};
		double span_ms = (double)(t - m->cpu_since) / 1e6;
		s.start_ns = m->begin;
		s.has_cpu = span_ms > 0;
		s.cpu = span_ms > 0 ? m->cpu_ms[h] / (span_ms * m->p->cores) : 0;
		if (s.cpu > 1)
			s.cpu = 1;
		s.exec_wait = m->hist[h][H_EXEC];
		s.profile_wait = m->hist[h][H_PROFILE];
		s.pricing_wait = m->hist[h][H_PRICING];
		s.exec_wait_sum_ms = m->hist_sum[h][H_EXEC];
		s.profile_wait_sum_ms = m->hist_sum[h][H_PROFILE];
		s.pricing_wait_sum_ms = m->hist_sum[h][H_PRICING];
		if (m->sink->sample(m->sink->ctx, &s, m->err))
			m->stop = 1;
	}
	for (int h = 0; h < m->p->hosts; h++)
		m->cpu_ms[h] = 0;
	m->cpu_since = t;
}

static void window_edge(Model *m, int64_t t, int start)
{
	SimPool *pools[4] = {m->exec, m->prof, m->price, m->price_ent};
	double used[3] = {0}, cap[3] = {0};
	for (int k = 0; k < 4; k++) {
		int o = k < 3 ? k : 2;     /* both pricing partitions count as pricing */
		for (int h = 0; h < m->p->hosts; h++) {
			if (start) {
				sim_pool_reset_account(&pools[k][h], t);
			} else {
				sim_pool_account(&pools[k][h], t);
				used[o] += pools[k][h].area_used;
				cap[o] += (double)pools[k][h].max * (double)(t - m->c->start);
			}
		}
	}
	for (int k = 0; k < 3 && !start; k++)
		m->occ[k] = cap[k] > 0 ? used[k] / cap[k] : 0;
}

static int run_phase(const SimParams *p, const SimWorld *w, const SimSink *sink,
                     const PhaseCfg *c, int phase, SimPhaseInfo *info, Err *err)
{
	Model m;
	memset(&m, 0, sizeof m);
	m.p = p;
	m.w = w;
	m.sink = sink;
	m.c = c;
	m.phase = phase;
	m.err = err;
	uint64_t x = p->seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)c->id);
	m.phase_seed = sim_splitmix64(&x);
	m.free_list = NONE;
	for (int d = 0; d < N_DEPS; d++)
		m.dep_res[d] = dep_resource(p->hosts, d);
	sim_heap_init(&m.heap);
	m.exec = xcalloc((size_t)p->hosts, sizeof *m.exec);
	m.prof = xcalloc((size_t)p->hosts, sizeof *m.prof);
	m.price = xcalloc((size_t)p->hosts, sizeof *m.price);
	m.price_ent = xcalloc((size_t)p->hosts, sizeof *m.price_ent);
	for (int h = 0; h < p->hosts; h++) {
		sim_pool_init(&m.exec[h], c->exec_slots);
		sim_pool_init(&m.prof[h], c->profile_pool);
		int ent = c->ent_pricing_slots < c->pricing_pool ? c->ent_pricing_slots : c->pricing_pool - 1;
		if (ent < 0)
			ent = 0;
		sim_pool_init(&m.price[h], c->pricing_pool - ent);
		sim_pool_init(&m.price_ent[h], ent);
	}

	/* Arrivals: one Poisson stream for the fleet. A first pass counts the
	 * arrivals inside the window so exactly `traces` of them are sampled. */
	int64_t begin = c->start - (int64_t)llround(p->warmup_s * 1e9);
	m.cpu_ms = xcalloc((size_t)p->hosts, sizeof *m.cpu_ms);
	m.hist = xcalloc((size_t)p->hosts, sizeof *m.hist);
	m.hist_sum = xcalloc((size_t)p->hosts, sizeof *m.hist_sum);
	m.place_cdf = place_cdf_new(p, c);
	m.begin = m.cpu_since = begin;
	double mean_gap_ns = 1e9 / (p->rate * c->rate_mult * p->hosts);
	SimRng arr, pick;
	sim_rng_seed(&arr, m.phase_seed, 0xa441u << 20);
	sim_rng_seed(&pick, m.phase_seed, 0x5a3u << 20);
	SimRng count_rng = arr;
	uint64_t in_window = 0;
	for (int64_t t = next_arrival_after(c, m.phase_seed, &count_rng, begin, mean_gap_ns);
	     t < c->end; t = next_arrival_after(c, m.phase_seed, &count_rng, t, mean_gap_ns))
		if (t >= c->start)
			in_window++;
	uint64_t want = (uint64_t)p->traces, seen = 0, chosen = 0;

	int64_t next_arrival = next_arrival_after(c, m.phase_seed, &arr, begin, mean_gap_ns);
	uint64_t index = 0;
	if (next_arrival < c->end)
		schedule(&m, next_arrival, 0, EV_ARRIVE, 0);
	schedule(&m, c->start, 0, EV_WINDOW_START, 0);
	schedule(&m, c->end, 0, EV_WINDOW_END, 0);

	SimEvent e;
	while (!m.stop && sim_heap_pop(&m.heap, &e)) {
		SimWaiter wt;
		switch (e.type) {
		case EV_ARRIVE: {
			int traced = 0;
			if (e.t >= c->start) {
				/* Selection sampling (Knuth's algorithm S). */
				if (seen < in_window &&
				    sim_rng_unit(&pick) * (double)(in_window - seen) < (double)(want - chosen)) {
					traced = 1;
					chosen++;
				}
				seen++;
			}
			new_request(&m, index++, e.t, traced);
			next_arrival = next_arrival_after(c, m.phase_seed, &arr, next_arrival, mean_gap_ns);
			if (next_arrival < c->end)
				schedule(&m, (int64_t)next_arrival, 0, EV_ARRIVE, 0);
			break;
		}
		case EV_PROFILE_ASK:
			if (sim_pool_acquire(&m.prof[m.reqs[e.who].host], e.t, e.who, 0))
				on_profile_granted(&m, e.who, e.t);
			break;
		case EV_PROFILE_DONE:
			if (sim_pool_release(&m.prof[m.reqs[e.who].host], e.t, &wt))
				grant(&m, &wt, e.t, EV_PROFILE_ASK);
			after_profile(&m, e.who, e.t);
			break;
		case EV_PRICE_ASK:
			if (sim_pool_acquire(price_pool(&m, e.who), e.t, e.who, e.arg))
				on_price_granted(&m, e.who, e.arg, e.t);
			break;
		case EV_PRICE_DONE: {
			if (sim_pool_release(price_pool(&m, e.who), e.t, &wt))
				grant(&m, &wt, e.t, EV_PRICE_ASK);
			if (--m.reqs[e.who].price_left == 0)
				after_fanout(&m, e.who);
			break;
		}
		case EV_FINISH: {
			Req *q = &m.reqs[e.who];
			double cpu = (double)((q->v1 - q->v0) + (q->a1 - q->a0)) / 1e6 +
			             p->cpu_per_call_ms * (6 + q->n_price + q->n_inv_try);
			m.cpu_ms[q->host] += cpu;
			if (e.t >= c->start && e.t < c->end)
				m.cpu_window_ms += cpu;
			if (sim_pool_release(&m.exec[q->host], e.t, &wt))
				grant(&m, &wt, e.t, EV_ARRIVE);
			q = &m.reqs[e.who];
			if (q->t_arr >= c->start && q->t_arr < c->end) {
				tally_request(&m.pop, q);
				if (q->traced) {
					tally_request(&m.sample, q);
					if (emit_trace(&m, e.who))
						m.stop = 1;
				}
			}
			req_free(&m, e.who);
			break;
		}
		case EV_WINDOW_START:
			window_edge(&m, e.t, 1);
			emit_samples(&m, e.t);
			if (c->start + (int64_t)(p->sample_interval_s * 1e9) < c->end)
				schedule(&m, c->start + (int64_t)(p->sample_interval_s * 1e9), 0, EV_TICK, 0);
			break;
		case EV_TICK: {
			emit_samples(&m, e.t);
			int64_t nt = e.t + (int64_t)(p->sample_interval_s * 1e9);
			if (nt < c->end)
				schedule(&m, nt, 0, EV_TICK, 0);
			break;
		}
		case EV_WINDOW_END:
			window_edge(&m, e.t, 0);
			break;
		}
	}
	int rc = m.stop ? (err && err->code ? err->code : TT_EIO) : 0;

	memset(info, 0, sizeof *info);
	snprintf(info->name, sizeof info->name, "%s", c->name);
	info->start_ns = c->start;
	info->end_ns = c->end;
	info->traces = m.traces;
	info->spans = m.n_spans;
	tally_figures(&m.sample, &info->sample);
	tally_figures(&m.pop, &info->population);
	info->exec_occupancy = m.occ[0];
	info->profile_occupancy = m.occ[1];
	info->pricing_occupancy = m.occ[2];
	info->cpu_mean = m.cpu_window_ms / ((double)(c->end - c->start) / 1e6 * p->cores * p->hosts);
	info->n_hot = c->n_hot;
	memcpy(info->hot, c->hot, sizeof info->hot);

	tally_fini(&m.pop);
	tally_fini(&m.sample);
	for (int h = 0; h < p->hosts; h++) {
		sim_pool_fini(&m.exec[h]);
		sim_pool_fini(&m.prof[h]);
		sim_pool_fini(&m.price[h]);
		sim_pool_fini(&m.price_ent[h]);
	}
	free(m.exec);
	free(m.prof);
	free(m.price);
	free(m.price_ent);
	free(m.cpu_ms);
	free(m.hist);
	free(m.hist_sum);
	free(m.place_cdf);
	free(m.reqs);
	sim_heap_fini(&m.heap);
	return rc;
}

int sim_run(const SimParams *p, const SimWorld *w, const SimSink *sink, SimRun *run, Err *err)
{
	int rc = sim_params_check(p, err);
	if (rc)
		return rc;
	const Mechanism *mech = NULL;
	for (size_t i = 0; i < sizeof MECHANISMS / sizeof MECHANISMS[0]; i++)
		if (strcmp(MECHANISMS[i].name, p->incident) == 0)
			mech = &MECHANISMS[i];
	if (mech == NULL)
		return err_set(err, TT_EINVAL, "unknown incident mechanism '%s'", p->incident);

	int64_t win = (int64_t)llround(p->window_s * 1e9);
	PhaseCfg base = {
	    .name = "baseline",
	    .id = 1,
	    .start = p->baseline_start_ns,
	    .end = p->baseline_start_ns + win,
	    .mix = {1 - p->premium_share - p->enterprise_share, p->premium_share, p->enterprise_share},
	    .rate_mult = 1,
	    .exec_slots = p->executor_slots,
	    .profile_pool = p->profile_pool,
	    .pricing_pool = p->pricing_pool,
	    .ent_pricing_slots = p->enterprise_pricing_slots,
	    .slow_dep = -1,
	    .wave_share = p->wave_share,
	    .wave_mult = p->wave_mult,
	    .wave_enterprise = p->wave_enterprise,
	    .optional_budget_ms = p->optional_budget_ms,
	};
	PhaseCfg inc = base;
	inc.name = "incident";
	inc.id = 2;
	inc.start = p->incident_start_ns;
	inc.end = p->incident_start_ns + win;
	mech->apply(&inc, p, p->seed);

	memset(run, 0, sizeof *run);
	const PhaseCfg *phases[2] = {&base, &inc};
	/* Write in time order, so a file reads like a day of telemetry. */
	if (inc.start < base.start) {
		phases[0] = &inc;
		phases[1] = &base;
	}
	for (int ph = 0; ph < 2; ph++) {
		rc = run_phase(p, w, sink, phases[ph], ph, &run->phases[ph], err);
		run->n_phases = ph + 1;
		run->traces += run->phases[ph].traces;
		run->spans += run->phases[ph].spans;
		if (rc)
			return rc;
	}
	return 0;
}
