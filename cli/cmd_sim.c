/*
 * cmd_sim.c - `tailtriage sim SCENARIO --out DIR [--traces N] [--seed S]
 *              [--single] [--set key=value ...]`
 *
 * Runs the deterministic model (sim/) and writes its telemetry files and
 * manifest.json into DIR; the files are then brought in with
 * `tailtriage import`, like real telemetry.
 */
#include <getopt.h>
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
	      "figures the model computed). Import the traces with `tailtriage import`.\n\n"
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
	while ((c = getopt_long(argc, argv, "o:t:s:S:qh", opts, NULL)) != -1) {
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
		default: usage(stderr); return 2;
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
