/*
 * sim_params.c - the simulator's parameters: defaults, parsing by name,
 * range checks and the help table.
 *
 * One table drives everything: `--set key=value`, `tailtriage sim --help`
 * and the "parameters" object of manifest.json all read PARAMS, so a new
 * knob is one line here plus its use in the model.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "timefmt.h"

enum { P_INT, P_I64, P_U64, P_DBL, P_TIME, P_INCIDENT, P_NAME, P_FLEET };

typedef struct Param {
	const char *key;
	int type;
	size_t off;
	double min, max;
	const char *help;
} Param;

#define F(field) offsetof(SimParams, field)

static const Param PARAMS[] = {
	{"seed", P_U64, F(seed), 0, 0, "PRNG seed (any 64-bit integer); same seed, same bytes"},
	{"traces", P_I64, F(traces), 1, 5e7, "sampled traces written per window"},
	{"incident", P_INCIDENT, F(incident), 0, 0, "mechanism of the incident phase (see below)"},
	{"fleet", P_FLEET, F(fleet), 0, 0,
	 "preset of the per-host sizes, set first: case (the case's busy release) or light (a quiet fleet for one cause at a time)"},
	{"hosts", P_INT, F(hosts), 1, 256, "API hosts (api-01 ...)"},
	{"rate", P_DBL, F(rate), 1, 2000, "requests/s arriving at each API host in the model"},
	{"window-s", P_DBL, F(window_s), 10, 86400, "length of each window in seconds"},
	{"warmup-s", P_DBL, F(warmup_s), 0, 3600, "simulated before each window, not sampled"},
	{"baseline-start", P_TIME, F(baseline_start_ns), 0, 0, "start of the baseline window (RFC 3339 or epoch ms)"},
	{"incident-start", P_TIME, F(incident_start_ns), 0, 0, "start of the incident window"},
	{"premium-share", P_DBL, F(premium_share), 0, 1, "premium share of requests (baseline mix)"},
	{"enterprise-share", P_DBL, F(enterprise_share), 0, 1, "enterprise share of requests (baseline mix)"},
	{"incident-enterprise-share", P_DBL, F(incident_enterprise_share), 0, 1,
	 "enterprise share in the incident (pricing-client-wait)"},
	{"hot-hosts", P_INT, F(hot_hosts), 0, 64, "hosts enterprise traffic concentrates on in the incident"},
	{"hot-share", P_DBL, F(hot_share), 0, 1, "share of enterprise requests placed on the hot hosts"},
	{"executor-slots", P_INT, F(executor_slots), 1, 100000, "endpoint executor slots per host"},
	{"profile-pool", P_INT, F(profile_pool), 1, 100000, "profile client connections per host"},
	{"pricing-pool", P_INT, F(pricing_pool), 1, 100000, "pricing client connections per host"},
	{"enterprise-pricing-calls", P_INT, F(enterprise_pricing_calls), 1, SIM_MAX_PRICING,
	 "parallel partitioned pricing quotes per enterprise request"},
	{"rec-timeout-ms", P_DBL, F(rec_timeout_ms), 1, 60000, "recommendation client timeout"},
	{"rep-timeout-ms", P_DBL, F(rep_timeout_ms), 1, 60000, "reputation client timeout"},
	{"surge", P_DBL, F(surge), 1, 10, "executor-saturation: arrival-rate multiplier in the incident"},
	{"slowdown-factor", P_DBL, F(slowdown_factor), 1, 100,
	 "dependency-slowdown: profile and recommendation service-time multiplier"},
	{"slowdown-start-s", P_DBL, F(slowdown_start_s), 0, 86400, "dependency-slowdown: seconds into the window the ramp starts"},
	{"slowdown-ramp-s", P_DBL, F(slowdown_ramp_s), 0, 86400, "dependency-slowdown: ramp up and ramp down time"},
	{"slowdown-hold-s", P_DBL, F(slowdown_hold_s), 0, 86400, "dependency-slowdown: time at full slowdown"},
	{"sample-interval-s", P_DBL, F(sample_interval_s), 1, 3600, "period of pool gauges (for metrics output)"},
	{"batch", P_INT, F(batch), 1, 1000000, "spans per exported line (whole traces per line)"},
	{"incident-pricing-pool", P_INT, F(incident_pricing_pool), 1, 100000,
	 "pricing-pool-shrink: pricing client connections per host in the incident"},
	{"slowdown-dep", P_NAME, F(slowdown_dep), 0, 0,
	 "single-slowdown: the dependency that slows down (profile, inventory, ...)"},
	{"fanout-calls", P_INT, F(fanout_calls), 1, SIM_MAX_PRICING,
	 "wider-fanout: partitioned pricing quotes per request of every class"},
	{"straggler-p", P_DBL, F(straggler_p), 0, 1, "share of pricing calls that straggle (both windows)"},
	{"straggler-mult", P_DBL, F(straggler_mult), 1, 1000, "service-time multiplier of a straggler"},
	{"retry-p", P_DBL, F(retry_p), 0, 0.9, "retry-storm: share of inventory attempts that fail"},
	{"cores", P_INT, F(cores), 1, 1024, "cores per API host (modelled CPU gauge)"},
	{"cpu-per-call-ms", P_DBL, F(cpu_per_call_ms), 0, 1000, "CPU charged per outgoing call"},
	{"metrics", P_INT, F(metrics), 0, 1, "1: also write metrics.jsonl (pool, executor, CPU gauges)"},
	{"wave-share", P_DBL, F(wave_share), 0, 0.5, "one second in round(1/wave-share) is an arrival wave (both windows)"},
	{"wave-mult", P_DBL, F(wave_mult), 1, 10, "arrival rate of a wave second over the window's mean (enterprise's, with wave-enterprise=1)"},
	{"enterprise-pricing-slots", P_INT, F(enterprise_pricing_slots), 0, 100000,
	 "pricing connections per host (out of pricing-pool) enterprise quotes are confined to; 0: shared"},
	{"wave-enterprise", P_INT, F(wave_enterprise), 0, 1, "1: the waves carry enterprise requests only"},
	{"cancel-stop-p", P_DBL, F(cancel_stop_p), 0, 1,
	 "share of timed-out optional calls whose server stops at the deadline (others run on: late work)"},
	{"optional-budget-ms", P_DBL, F(optional_budget_ms), 0, 60000,
	 "optional calls must end this long after the request started (skipped under 10 ms left); 0: timeouts only"},
	{"incident-wave-share", P_DBL, F(incident_wave_share), 0, 0.5,
	 "pricing-client-wait: one second in round(1/share) of the incident is an enterprise wave; 0: none"},
	{"incident-wave-mult", P_DBL, F(incident_wave_mult), 1, 10,
	 "pricing-client-wait: enterprise arrival rate in a wave second over its mean"},
	{"pricing-calls", P_INT, F(pricing_calls), 1, SIM_MAX_PRICING,
	 "parallel pricing quotes per standard or premium request (one per product group)"},
	{"enterprise-size", P_DBL, F(enterprise_size), 0.1, 20,
	 "median size of an enterprise request (catalogue, entitlements) against the others' 1"},
};

#define N_PARAMS ((int)(sizeof PARAMS / sizeof PARAMS[0]))

static const SimIncidentInfo INCIDENTS[] = {
	{"pricing-client-wait",
	 "enterprise share rises and leans on a few hosts; enterprise's partition of the pricing pools fills and its quotes wait"},
	{"none", "the incident window repeats the baseline"},
	{"executor-saturation",
	 "arrivals surge; endpoint executor and profile pool saturate, queue wait before spans"},
	{"dependency-slowdown",
	 "profile and recommendation slow down, then recover; backlog drains afterwards"},
	{"pricing-pool-shrink", "pricing connections per host drop to incident-pricing-pool"},
	{"class-mix-shift", "enterprise share rises to incident-enterprise-share, spread evenly"},
	{"placement-hotspot", "enterprise traffic concentrates on hot-hosts; the mix stays"},
	{"single-slowdown", "slowdown-dep alone slows down (same ramp as dependency-slowdown)"},
	{"serial-hop", "inventory is called before the fan-out instead of inside it"},
	{"wider-fanout", "every request asks fanout-calls pricing quotes (pool scaled to match)"},
	{"retry-storm", "inventory attempts fail (retry-p) and are retried up to twice"},
};

static const char *const SCENARIOS[] = {"mercury", NULL};

const SimIncidentInfo *sim_incidents(int *n)
{
	*n = (int)(sizeof INCIDENTS / sizeof INCIDENTS[0]);
	return INCIDENTS;
}

const char *const *sim_scenarios(void)
{
	return SCENARIOS;
}

const SimParamInfo *sim_param_table(int *n)
{
	static SimParamInfo info[N_PARAMS];
	for (int i = 0; i < N_PARAMS; i++) {
		info[i].key = PARAMS[i].key;
		info[i].help = PARAMS[i].help;
	}
	*n = N_PARAMS;
	return info;
}

/* The fleet presets: the per-host sizes and loads, nothing else (seed,
 * windows, incident and mix stay as they are). "case" is the default: the
 * case's release at the regional peak, scaled down with every pool as full
 * as the case's (8 processes at 300 requests/s, the profile pool about 79 %
 * busy). "light" is a quiet fleet (pools far from full, one quote per
 * request, no enterprise partition, no optional deadline) on which the
 * single-cause mechanisms change one thing at a time. */
static const char *const FLEET_CASE[][2] = {
    {"hosts", "8"}, {"rate", "300"}, {"executor-slots", "50"}, {"profile-pool", "7"},
    {"pricing-pool", "24"}, {"pricing-calls", "6"}, {"enterprise-pricing-slots", "3"},
    {"enterprise-size", "1.9"}, {"optional-budget-ms", "245"}, {"cancel-stop-p", "0.5"},
    {"hot-share", "0.22"}, {"cores", "10"}, {"cpu-per-call-ms", "0.3"}, {"surge", "1.6"},
    {"incident-pricing-pool", "20"}, {"fanout-calls", "10"}, {NULL, NULL},
};
static const char *const FLEET_LIGHT[][2] = {
    {"rate", "40"}, {"executor-slots", "16"}, {"profile-pool", "4"}, {"pricing-pool", "2"},
    {"pricing-calls", "1"}, {"enterprise-pricing-slots", "0"}, {"enterprise-size", "1.3"},
    {"optional-budget-ms", "0"}, {"cancel-stop-p", "0"}, {"hot-share", "0.55"}, {"cores", "2"},
    {"cpu-per-call-ms", "0.8"}, {"surge", "3.8"}, {"incident-pricing-pool", "1"},
    {"fanout-calls", "6"}, {NULL, NULL},
};

static const Param *find(const char *key)
{
	for (int i = 0; i < N_PARAMS; i++)
		if (strcmp(PARAMS[i].key, key) == 0)
			return &PARAMS[i];
	return NULL;
}

int sim_params_set(SimParams *p, const char *key, const char *value, Err *err)
{
	const Param *d = find(key);
	if (d == NULL)
		return err_set(err, TT_EINVAL, "unknown parameter '%s' (see tailtriage sim --help)", key);
	char *field = (char *)p + d->off;
	char *end = NULL;
	errno = 0;
	switch (d->type) {
	case P_INT:
	case P_I64: {
		long long v = strtoll(value, &end, 10);
		if (errno || end == value || *end)
			return err_set(err, TT_EINVAL, "%s: '%s' is not an integer", key, value);
		if ((double)v < d->min || (double)v > d->max)
			return err_set(err, TT_EINVAL, "%s: %lld is outside [%.0f, %.0f]", key, v, d->min, d->max);
		if (d->type == P_INT)
			*(int *)field = (int)v;
		else
			*(int64_t *)field = (int64_t)v;
		return 0;
	}
	case P_U64: {
		if (value[0] == '-')
			return err_set(err, TT_EINVAL, "%s: '%s' must not be negative", key, value);
		unsigned long long v = strtoull(value, &end, 0);
		if (errno || end == value || *end)
			return err_set(err, TT_EINVAL, "%s: '%s' is not an unsigned integer", key, value);
		*(uint64_t *)field = (uint64_t)v;
		return 0;
	}
	case P_DBL: {
		double v = strtod(value, &end);
		if (errno || end == value || *end || !isfinite(v))
			return err_set(err, TT_EINVAL, "%s: '%s' is not a number", key, value);
		if (v < d->min || v > d->max)
			return err_set(err, TT_EINVAL, "%s: %g is outside [%g, %g]", key, v, d->min, d->max);
		*(double *)field = v;
		return 0;
	}
	case P_TIME: {
		Err e = {0};
		int64_t ns;
		if (time_parse(value, &ns, &e))
			return err_set(err, TT_EINVAL, "%s: %s", key, e.msg);
		*(int64_t *)field = ns;
		return 0;
	}
	case P_INCIDENT: {
		int n;
		const SimIncidentInfo *inc = sim_incidents(&n);
		for (int i = 0; i < n; i++)
			if (strcmp(inc[i].name, value) == 0) {
				snprintf(p->incident, sizeof p->incident, "%s", value);
				return 0;
			}
		char known[512] = "";
		for (int i = 0; i < n; i++)
			snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "",
			         inc[i].name);
		return err_set(err, TT_EINVAL, "incident: unknown mechanism '%s' (%s)", value, known);
	}
	case P_FLEET: {
		const char *const (*kv)[2] = strcmp(value, "case") == 0    ? FLEET_CASE
		                           : strcmp(value, "light") == 0 ? FLEET_LIGHT
		                                                         : NULL;
		if (kv == NULL)
			return err_set(err, TT_EINVAL, "fleet: unknown preset '%s' (case, light)", value);
		for (int i = 0; kv[i][0]; i++)
			if (sim_params_set(p, kv[i][0], kv[i][1], err))
				return err->code ? err->code : TT_EINVAL;
		snprintf(p->fleet, sizeof p->fleet, "%s", value);
		return 0;
	}
	case P_NAME: {
		size_t n = strlen(value);
		if (n == 0 || n >= 32 || strspn(value, "abcdefghijklmnopqrstuvwxyz0123456789-_") != n)
			return err_set(err, TT_EINVAL, "%s: '%s' is not a name of [a-z0-9_-], 1 to 31 bytes",
			               key, value);
		snprintf(field, 32, "%s", value);
		return 0;
	}
	}
	return err_set(err, TT_EINVAL, "%s: unsupported parameter type", key);
}

int sim_params_get(const SimParams *p, const char *key, char *out, unsigned outsz)
{
	const Param *d = find(key);
	if (d == NULL)
		return TT_ENOTFOUND;
	const char *field = (const char *)p + d->off;
	switch (d->type) {
	case P_INT: snprintf(out, outsz, "%d", *(const int *)field); break;
	case P_I64: snprintf(out, outsz, "%lld", (long long)*(const int64_t *)field); break;
	case P_U64: snprintf(out, outsz, "%llu", (unsigned long long)*(const uint64_t *)field); break;
	case P_DBL: {
		/* The shortest of %.15g..%.17g that reads back exactly. */
		double v = *(const double *)field;
		for (int prec = 15; prec <= 17; prec++) {
			snprintf(out, outsz, "%.*g", prec, v);
			if (strtod(out, NULL) == v)
				break;
		}
		break;
	}
	case P_TIME: {
		char t[40];
		int64_t ns = *(const int64_t *)field;
		time_format(ns, t, sizeof t);
		snprintf(out, outsz, "%s", t);
		break;
	}
	case P_INCIDENT: snprintf(out, outsz, "%s", p->incident); break;
	case P_NAME:
	case P_FLEET: snprintf(out, outsz, "%s", field); break;
	}
	return 0;
}

int sim_params_check(const SimParams *p, Err *err)
{
	if (p->premium_share + p->enterprise_share > 1.0 + 1e-9)
		return err_set(err, TT_EINVAL, "premium-share + enterprise-share exceed 1");
	if (p->incident_enterprise_share + p->premium_share * (1 - p->incident_enterprise_share) /
	        (1 - p->enterprise_share > 0 ? 1 - p->enterprise_share : 1) > 1.0 + 1e-9)
		return err_set(err, TT_EINVAL, "incident-enterprise-share leaves no room for the other classes");
	if (p->wave_share > 0 && p->wave_mult / (double)(llround(1 / p->wave_share) < 2 ? 2 : llround(1 / p->wave_share)) >= 1.0 - 1e-9)
		return err_set(err, TT_EINVAL, "wave-share x wave-mult must stay below 1 (the waves would "
		               "carry more than every arrival)");
	if (p->incident_wave_share > 0 &&
	    p->incident_wave_mult / (double)(llround(1 / p->incident_wave_share) < 2 ? 2 : llround(1 / p->incident_wave_share)) >= 1.0 - 1e-9)
		return err_set(err, TT_EINVAL, "incident-wave-share x incident-wave-mult must stay below 1");
	if (p->hot_hosts > p->hosts)
		return err_set(err, TT_EINVAL, "hot-hosts (%d) exceeds hosts (%d)", p->hot_hosts, p->hosts);
	int64_t win = (int64_t)(p->window_s * 1e9);
	int64_t warm = (int64_t)(p->warmup_s * 1e9);
	int64_t a = p->baseline_start_ns, b = p->incident_start_ns;
	if (a < warm || b < warm)
		return err_set(err, TT_EINVAL, "windows must start after the epoch plus the warm-up");
	if ((a < b && a + win > b - warm) || (b < a && b + win > a - warm) || a == b)
		return err_set(err, TT_EINVAL,
		               "baseline and incident windows (with warm-up) must not overlap");
	double arrivals = p->rate * p->hosts * p->window_s;
	if ((double)p->traces > 0.8 * arrivals)
		return err_set(err, TT_EINVAL,
		               "traces=%lld is more than 80%% of the %.0f requests simulated per window; "
		               "raise rate, hosts or window-s",
		               (long long)p->traces, arrivals);
	return 0;
}

int sim_params_init(SimParams *p, const char *scenario, Err *err)
{
	if (strcmp(scenario, "mercury") != 0)
		return err_set(err, TT_ENOTFOUND, "unknown scenario '%s' (known: mercury)", scenario);
	memset(p, 0, sizeof *p);
	snprintf(p->scenario, sizeof p->scenario, "%s", scenario);
	snprintf(p->incident, sizeof p->incident, "pricing-client-wait");
	p->seed = 1;
	p->traces = 3000;
	p->window_s = 600;
	p->warmup_s = 60;
	/* 2026-07-14T17:00:00Z and 18:00:00Z (the case's fixture date). */
	p->baseline_start_ns = INT64_C(1784048400) * 1000000000;
	p->incident_start_ns = INT64_C(1784052000) * 1000000000;
	p->premium_share = 0.23;
	p->enterprise_share = 0.05;
	p->incident_enterprise_share = 0.09;
	p->hot_hosts = 2;
	p->enterprise_pricing_calls = 3;
	p->rec_timeout_ms = 400;
	p->rep_timeout_ms = 400;
	p->slowdown_factor = 4.5;
	p->slowdown_start_s = 90;
	p->slowdown_ramp_s = 30;
	p->slowdown_hold_s = 180;
	p->sample_interval_s = 15;
	p->batch = 512;
	snprintf(p->slowdown_dep, sizeof p->slowdown_dep, "inventory");
	p->straggler_p = 0;
	p->straggler_mult = 20;
	p->retry_p = 0.3;
	p->metrics = 1;
	p->wave_share = 0;          /* off: the default run is a plain Poisson stream */
	p->wave_mult = 1.23;
	p->incident_wave_share = 0; /* off */
	p->incident_wave_mult = 8;
	/* the per-host sizes and loads: the case's fleet */
	return sim_params_set(p, "fleet", "case", err);
}
