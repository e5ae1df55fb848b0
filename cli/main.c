/*
 * main.c - `tailtriage COMMAND ...`: finds the subcommand and runs it.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis.h"
#include "buf.h"
#include "cli.h"
#include "sanitize.h"

typedef struct Command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *what;
	int analyses;   /* reads and analyses a window: see analysis_memory() */
} Command;

static const Command commands[] = {
	{"demo", cmd_demo, "import the bundled Mercury sample into a fresh database and open it", 1},
	{"import", cmd_import, "import telemetry files (OTLP JSON, ...) into a database", 0},
	{"report", cmd_report, "print the endpoint DAG, splits, tail ownership and data quality", 1},
	{"tui", cmd_tui, "open the interactive dashboard on a database", 1},
	{"sim", cmd_sim, "generate deterministic telemetry of a modelled endpoint", 0},
	{"serve", cmd_serve, "receive OTLP traces and metrics (HTTP JSON or protobuf, gRPC)", 0},
	{"pull", cmd_pull, "store instant queries from a Prometheus HTTP API as metric snapshots", 0},
	{"drill", cmd_drill, "incident drills: list, train (scored), replay (live), history", 1},
	{"diagnose", cmd_diagnose, "rank hypotheses on the evidence, name checks, judge decisions", 1},
	{"check", cmd_check, "run one discriminating check and print its table", 1},
	{"model", cmd_model, "infer an endpoint model from the data, or check one against it", 1},
	{"endpoints", cmd_endpoints, "list the endpoints, ranked by how much their percentile rose", 1},
};

/* A command that analyses allocates and frees its big arrays (the traces
 * read, the observations, the quantiles' keys) over and over, on several
 * threads, and touches every page of them once. By default glibc hands
 * large freed blocks back to the system (munmap, trimming the heaps), the
 * next allocation faults the pages in again, and every page is faulted in
 * 4 KiB at a time. On a virtual machine where a page fault and an
 * unmapping are dear, `report` at a million spans spent about a third of
 * its time there (31,000 faults and 1.17 to 1.55 s; with this, 5,700
 * faults and 0.90 to 1.28 s; bench/README.md). Such a command runs for seconds, or
 * holds one analysis at a time (the dashboard), so:
 *  - its freed memory is kept for reuse: blocks up to 32 MiB come from the
 *    heap, and heaps are not trimmed;
 *  - its heaps are given transparent huge pages where the system offers
 *    them on request (madvise).
 * glibc reads the last setting only from GLIBC_TUNABLES, at start-up, so
 * the command starts itself again once with them set; a user's own
 * GLIBC_TUNABLES is left alone, and when the new start fails, the first
 * two settings are made here instead. The cost is a peak RSS about a
 * sixth higher. Not for the import (its 64 MB bound, which huge pages
 * alone brought within 1 MB of at 10M spans) or the receivers, which run
 * for days. */
#define KEEP_MMAP_THRESHOLD 33554432    /* 32 MiB */
#define KEEP_TRIM_THRESHOLD 1073741824  /* 1 GiB */
#define STR_(x) #x
#define STR(x) STR_(x)
#define ANALYSIS_TUNABLES                                                     \
	"glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=" STR(KEEP_MMAP_THRESHOLD) \
	":glibc.malloc.trim_threshold=" STR(KEEP_TRIM_THRESHOLD)

static void analysis_memory(char **argv)
{
	if (getenv("GLIBC_TUNABLES") != NULL)
		return;
	/* the file itself, not /proc/self/exe: the process's name (ps, top,
	 * pkill) comes from the path started */
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n > 0 && setenv("GLIBC_TUNABLES", ANALYSIS_TUNABLES, 1) == 0) {
		self[n] = '\0';
		execv(self, argv);
		unsetenv("GLIBC_TUNABLES"); /* no new start: go on in this one */
	}
	mallopt(M_MMAP_THRESHOLD, KEEP_MMAP_THRESHOLD);
	mallopt(M_TRIM_THRESHOLD, KEEP_TRIM_THRESHOLD);
}

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
		if (strcmp(argv[1], commands[i].name) == 0) {
			if (commands[i].analyses)
				analysis_memory(argv);
			return commands[i].run(argc - 1, argv + 1);
		}
	const char *names[sizeof commands / sizeof commands[0]];
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		names[i] = commands[i].name;
	char word[256];
	san_clean(argv[1], word, sizeof word);
	Buf m;
	buf_init(&m);
	int offered = cli_suggest(&m, argv[1], names, (int)(sizeof names / sizeof names[0]), "");
	fprintf(stderr, "tailtriage: unknown command '%s'%s\n", word, buf_str(&m));
	buf_fini(&m);
	/* the list is for a user who did not come close to a command */
	if (offered)
		fputs("Run 'tailtriage --help' for the commands.\n", stderr);
	else
		usage(stderr);
	return 2;
}
