/*
 * cmd_sim.c - `tailtriage sim SCENARIO --out DIR [--traces N] [--seed S]
 *              [--single] [--set key=value ...]`
 *
 * Runs the deterministic model (sim/) and writes its telemetry files and
 * manifest.json into DIR; the files are then brought in with
 * `tailtriage import`, like real telemetry.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>
#include <string.h>

#include "cli.h"
#include "sim.h"
#include "timefmt.h"

static void usage(FILE *out)
{
	fputs("usage: tailtriage sim SCENARIO --out DIR [--traces N] [--seed S] [--single]\n"
	      "                      [--set key=value ...] [-q]\n\n"
	      "Simulates an endpoint fleet deterministically (same seed and parameters, same\n"
	      "bytes) through a baseline window and an incident window, and writes sampled\n"
	      "traces as OTLP/JSON plus DIR/manifest.json (windows, seed, parameters and the\n"
	      "figures the model computed). Import the traces with `tailtriage import`.\n"
	      "Unless -q, it then prints the incident window beside the case's matched-peak\n"
	      "observations (ingress p99, CPU, queue age, pool occupancy, late work,\n"
	      "omission, pricing wait and server time, enterprise mix).\n\n"
	      "options:\n"
	      "  --out DIR         output directory (created when missing)\n"
	      "  --traces N        sampled traces per window (same as --set traces=N)\n"
	      "  --seed S          PRNG seed (same as --set seed=S)\n"
	      "  --single          one JSON document (traces.json) instead of JSON Lines\n"
	      "                    (traces.jsonl, one ExportTraceServiceRequest per line)\n"
	      "  --set key=value   set a model parameter (repeatable; see below)\n"
	      "  -q, --quiet       print nothing on success\n\nscenarios:\n",
	      out);
	for (const char *const *s = sim_scenarios(); *s; s++)
		fprintf(out, "  %s%s\n", *s,
		        strcmp(*s, "mercury") == 0
		            ? "  GET /v2/home of mercury-api: profile, entitlement, then a fan-out to\n"
		              "           inventory, pricing, recommendation, reputation, experiment"
		            : "");
	SimParams d;
	Err err = {0};
	sim_params_init(&d, "mercury", &err);
	fputs("\nparameters (--set key=value; default in brackets):\n", out);
	int n;
	const SimParamInfo *tab = sim_param_table(&n);
	for (int i = 0; i < n; i++) {
		char v[96];
		sim_params_get(&d, tab[i].key, v, sizeof v);
		fprintf(out, "  %-26s %s [%s]\n", tab[i].key, tab[i].help, v);
	}
	fputs("\nincident mechanisms (--set incident=NAME):\n", out);
	const SimIncidentInfo *inc = sim_incidents(&n);
	for (int i = 0; i < n; i++)
		fprintf(out, "  %-26s %s\n", inc[i].name, inc[i].help);
	fputs("\nThe model is scaled: each API host receives `rate` requests/s and the pools\n"
	      "are sized for that rate; `traces` of the requests arriving in each window are\n"
	      "sampled uniformly. Default windows: baseline 2026-07-14T17:00:00Z..17:10:00Z,\n"
	      "incident 2026-07-14T18:00:00Z..18:10:00Z.\n",
	      out);
}

static int set_kv(SimParams *p, const char *kv)
{
	const char *eq = strchr(kv, '=');
	if (eq == NULL || eq == kv)
		return cli_fail("sim: --set expects key=value, got '%s'", kv);
	char key[64];
	size_t kl = (size_t)(eq - kv);
	if (kl >= sizeof key)
		return cli_fail("sim: --set: key too long");
	memcpy(key, kv, kl);
	key[kl] = '\0';
	Err err = {0};
	if (sim_params_set(p, key, eq + 1, &err))
		return cli_fail("sim: %s", err.msg);
	return 0;
}

static void print_phase(const SimPhaseInfo *ph, const SimRun *run, const char *const *hosts)
{
	char a[40], b[40];
	time_format(ph->start_ns, a, sizeof a);
	time_format(ph->end_ns, b, sizeof b);
	const SimFigures *f = &ph->sample;
	printf("%-9s %s..%s  %lld traces, %lld spans\n", ph->name, a, b, (long long)ph->traces,
	       (long long)ph->spans);
	printf("          ingress p99 %.1f ms; pricing client wait p99 %.1f ms, server p99 %.1f ms;"
	       " enterprise %.1f %%\n",
	       f->ingress_p99_ms, f->pricing_client_wait_p99_ms, f->pricing_server_p99_ms,
	       100 * f->class_share[2]);
	if (ph->n_hot) {
		printf("          enterprise concentrated on");
		for (int k = 0; k < ph->n_hot; k++)
			printf(" %s", hosts[ph->hot[k]]);
		putchar('\n');
	}
	(void)run;
}

/* The incident window beside the case's matched-peak observations (the
 * diagnostic drill): what this run produced, from the sampled requests
 * (exact nearest rank) and the window's gauges, never copied from the case. */
static void print_comparison(const SimRun *run)
{
	const SimPhaseInfo *inc = NULL, *base = NULL;
	for (int i = 0; i < run->n_phases; i++) {
		if (strcmp(run->phases[i].name, "incident") == 0)
			inc = &run->phases[i];
		else
			base = &run->phases[i];
	}
	if (inc == NULL || base == NULL)
		return;
	const SimFigures *w = &inc->sample, *b = &base->sample;
	int n;
	const SimCaseFigure *cf = sim_case_figures(&n);
	printf("\nincident against the case's matched-peak observations\n"
	       "(sampled requests, exact nearest rank; CPU and occupancy over the window)\n");
	printf("  %-46s %-22s %s\n", "measure", "produced", "case");
	for (int i = 0; i < n; i++) {
		const char *m = cf[i].measure;
		double v = NAN, was = NAN;
		if (strcmp(m, "ingress p99") == 0)
			v = w->edge_p99_ms;
		else if (strcmp(m, "fleet mean CPU") == 0)
			v = 100 * inc->cpu_mean;
		else if (strcmp(m, "endpoint queue-age p99") == 0)
			v = w->queue_wait_p99_ms;
		else if (strcmp(m, "profile pool occupancy") == 0)
			v = 100 * inc->profile_occupancy;
		else if (strcmp(m, "late work") == 0)
			v = 100 * w->late_share;
		else if (strcmp(m, "optional omission") == 0)
			v = 100 * w->omitted_share;
		else if (strcmp(m, "pricing client wait p99") == 0)
			v = w->pricing_client_wait_p99_ms, was = b->pricing_client_wait_p99_ms;
		else if (strcmp(m, "pricing server p99") == 0)
			v = w->pricing_server_p99_ms, was = b->pricing_server_p99_ms;
		else if (strcmp(m, "enterprise mix") == 0)
			v = 100 * w->class_share[2], was = 100 * b->class_share[2];
		const char *u = cf[i].unit;
		const char *sp = " ";
		char prod[64], cas[64];
		if (isnan(v))
			snprintf(prod, sizeof prod, "?");
		else if (isnan(was))
			snprintf(prod, sizeof prod, "%.1f%s%s", v, sp, u);
		else
			snprintf(prod, sizeof prod, "%.1f%s%s (was %.1f)", v, sp, u, was);
		if (isnan(cf[i].was))
			snprintf(cas, sizeof cas, "%g%s%s", cf[i].value, sp, u);
		else
			snprintf(cas, sizeof cas, "%g%s%s (was %g)", cf[i].value, sp, u, cf[i].was);
		printf("  %-46s %-22s %s\n", m, prod, cas);
	}
	char prod[64];
	snprintf(prod, sizeof prod, "%.1f %% (was %.1f)", 100 * w->pricing_cp_share,
	         100 * b->pricing_cp_share);
	printf("  %-46s %-22s %s\n", "pricing share of the slow set's critical path", prod, "-");
}

int cmd_sim(int argc, char **argv)
{
	static const struct option opts[] = {
		{"out", required_argument, NULL, 'o'},
		{"traces", required_argument, NULL, 't'},
		{"seed", required_argument, NULL, 's'},
		{"single", no_argument, NULL, '1'},
		{"set", required_argument, NULL, 'S'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	/* The scenario comes first, then the options. */
	for (int i = 1; i < argc; i++) {
		if (cli_is_help(argv[i])) {
			usage(stdout);
			return 0;
		}
	}
	if (argc < 2 || argv[1][0] == '-') {
		usage(stderr);
		return 2;
	}
	const char *scenario = argv[1];
	SimParams p;
	Err err = {0};
	if (sim_params_init(&p, scenario, &err))
		return cli_fail("sim: %s", err.msg), 2; /* a usage error */
	const char *out = NULL;
	int single = 0, quiet = 0, c;
	optind = 2;
	while ((c = cli_getopt("sim", argc, argv, "o:t:s:S:qh", opts)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 't':
			if (sim_params_set(&p, "traces", optarg, &err)) {
				cli_fail("sim: --traces: %s", err.msg);
				return 2;
			}
			break;
		case 's':
			if (sim_params_set(&p, "seed", optarg, &err)) {
				cli_fail("sim: --seed: %s", err.msg);
				return 2;
			}
			break;
		case '1': single = 1; break;
		case 'S':
			if (set_kv(&p, optarg))
				return 2;
			break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); return 0;
		default: return 2;
		}
	}
	if (out == NULL || optind < argc) {
		usage(stderr);
		return 2;
	}
	SimRun run;
	char tpath[4096], mpath[4096];
	if (sim_generate(&p, out, single, &run, tpath, mpath, sizeof tpath, &err))
		return cli_fail("sim: %s", err.msg);
	if (quiet)
		return 0;
	SimWorld w;
	const char *hosts[256];
	if (sim_world_init(&w, &p, &err) == 0) {
		for (int h = 0; h < p.hosts && h < 256; h++)
			hosts[h] = w.resources[h].host;
	}
	printf("wrote %s (%lld traces, %lld spans) and %s\n", tpath, (long long)run.traces,
	       (long long)run.spans, mpath);
	printf("scenario %s, incident %s, seed %llu\n", p.scenario, p.incident,
	       (unsigned long long)p.seed);
	for (int i = 0; i < run.n_phases; i++)
		print_phase(&run.phases[i], &run, hosts);
	print_comparison(&run);
	/* the metrics file (when the scenario writes one) sits next to the traces */
	char metrics[4200];
	snprintf(metrics, sizeof metrics, "%s/metrics.jsonl", out);
	if (access(metrics, R_OK) == 0)
		printf("next: tailtriage import --db DB %s %s\n", tpath, metrics);
	else
		printf("next: tailtriage import --db DB %s\n", tpath);
	sim_world_fini(&w);
	return 0;
}
