/*
 * main.c - `tailtriage COMMAND ...`: finds the subcommand and runs it.
 */
#include <stdio.h>
#include <string.h>

#include "analysis.h"
#include "cli.h"

typedef struct Command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *what;
} Command;

static const Command commands[] = {
	{"demo", cmd_demo, "import the bundled Mercury sample into a fresh database and open it"},
	{"import", cmd_import, "import telemetry files (OTLP JSON, ...) into a database"},
	{"report", cmd_report, "print the endpoint DAG, splits, tail ownership and data quality"},
	{"tui", cmd_tui, "open the interactive dashboard on a database"},
	{"sim", cmd_sim, "generate deterministic telemetry of a modelled endpoint"},
	{"serve", cmd_serve, "receive OTLP traces and metrics (HTTP JSON or protobuf, gRPC)"},
	{"pull", cmd_pull, "store instant queries from a Prometheus HTTP API as metric snapshots"},
	{"drill", cmd_drill, "incident drills: list, train (scored), replay (live), history"},
	{"diagnose", cmd_diagnose, "rank hypotheses on the evidence, name checks, judge decisions"},
	{"check", cmd_check, "run one discriminating check and print its table"},
	{"model", cmd_model, "infer an endpoint model from the data, or check one against it"},
};

static void usage(FILE *out)
{
	fputs("usage: tailtriage COMMAND [OPTIONS]\n\n"
	      "Diagnose tail-latency incidents from traces and metrics.\n\ncommands:\n",
	      out);
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].what);
	fputs("\nRun 'tailtriage COMMAND --help' for the options of a command.\n", out);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (cli_is_help(argv[1]) || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		puts("tailtriage 0.1.0");
		return 0;
	}
	/* every writer of this process keeps the import-time aggregates in
	 * step with the spans it commits (analysis/agg.c) */
	store_set_commit_hook(analysis_agg_update);
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "tailtriage: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
