/*
 * cmd_check.c - `tailtriage check NAME`: runs one discriminating check
 * headless and prints its table (drills/checks.h).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "checks.h"
#include "cli.h"
#include "diagnose.h"
#include "sanitize.h"
#include "timefmt.h"

static void usage(FILE *out)
{
	fputs("usage: tailtriage check NAME [--db FILE] [--model FILE] [--window A..B]\n"
	      "                        [--baseline A..B|before] [--node N] [--class C]\n"
	      "                        [--format text|json]\n"
	      "       tailtriage check --list\n\n"
	      "Runs one discriminating check over the database and prints its table.\n\n"
	      "  --db FILE        database (default $TAILTRIAGE_DB or ./tailtriage.db)\n"
	      CLI_ENDPOINT_HELP
	      "  --model FILE     endpoint model (which pool guards which node, the objective);\n"
	      "                   without it, a model inferred from the data ('none': no model)\n"
	      "  --window A..B    analysed range (RFC 3339 or epoch ms; default: all data)\n"
	      "  --baseline A..B  range to compare against, or 'before'\n"
	      "  --format F       text (default) or json\n"
	      "  --node N         dependency the check is about (pool-by-class, client-vs-server)\n"
	      "  --class C        workload class to single out: pool-by-class and\n"
	      "                   fanout-by-class show its row beside 'all'; client-vs-server,\n"
	      "                   host-concentration, late-work and endpoint-queue count only\n"
	      "                   its requests; class-mix takes no class (usage error)\n"
	      "  --list           the checks and the question each answers\n",
	      out);
}

int cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{"db", required_argument, NULL, 'd'},
		{"model", required_argument, NULL, 'm'},
		{"window", required_argument, NULL, 'w'},
		{"baseline", required_argument, NULL, 'b'},
		{"node", required_argument, NULL, 'n'},
		{"class", required_argument, NULL, 'c'},
		{"format", required_argument, NULL, 'f'},
		{"list", no_argument, NULL, 'l'},
		{"endpoint", required_argument, NULL, 'E'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *db = cli_default_db(), *model_path = NULL, *format = "text", *baseline = NULL;
	const char *window = NULL;
	CheckOptions o = {.period = PERIOD_ALL};
	CliEndpoint ep = {0};
	Err err = {0};
	int c, list = 0;
	optind = 1;
	argc = cli_endpoint_argv(argc, argv);
	while ((c = cli_getopt("check", argc, argv, "d:m:w:b:n:c:f:lh", opts)) != -1) {
		switch (c) {
		case 'd': db = optarg; break;
		case 'm': model_path = optarg; break;
		case 'w': window = optarg; break;
		case 'b': baseline = optarg; break;
		case 'n': o.node = optarg; break;
		case 'c': o.wclass = optarg; break;
		case 'f': format = optarg; break;
		case 'l': list = 1; break;
		case 'E':
			if (cli_endpoint_parse(optarg, &ep))
				return 2;
			break;
		case 'h': usage(stdout); return 0;
		default: return 2;
		}
	}
	if (list) {
		for (const char *const *n = check_names(); *n; n++)
			printf("%-20s %s\n", *n, check_question(*n));
		return 0;
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "tailtriage check: give one check NAME (tailtriage check --list)\n");
		usage(stderr);
		return 2;
	}
	const char *name = argv[optind];
	if (check_question(name) == NULL) {
		const char *const *names = check_names();
		int n = 0;
		while (names[n])
			n++;
		char word[256];
		san_clean(name, word, sizeof word);
		Buf m;
		buf_init(&m);
		cli_suggest(&m, name, names, n, "");
		cli_fail("unknown check '%s'%s (tailtriage check --list)", word, buf_str(&m));
		buf_fini(&m);
		return 2;
	}
	if (o.wclass && !check_takes_class(name)) {
		char takes[256];
		check_class_names(takes, sizeof takes);
		return cli_fail("check %s compares all classes and takes no --class "
		                "(checks that take it: %s)", name, takes), 2;
	}
	if (cli_text_or_json(format))
		return 2;
	if (cli_ranges(window, baseline, &o.period))
		return 2;
	if (access(db, F_OK) != 0)
		return cli_fail("%s: no such database (import data first)", db);
	Store *st = NULL;
	if (store_open(db, STORE_READONLY, &st, &err))
		return cli_fail("%s", err.msg);
	Model *model = NULL;
	int mrc = cli_model_endpoint(model_path, st, &o.period, CLI_EP_MUST_EXIST, &ep, &model);
	if (mrc) {
		store_close(st);
		return mrc;
	}
	o.model = model;
	o.ep_service = ep.set ? ep.service : NULL;
	o.ep_route = ep.set ? ep.route : NULL;
	int crc = cli_check_class(st, model, o.wclass);
	if (crc) {
		store_close(st);
		model_free(model);
		return crc;
	}
	CheckTable *t = NULL;
	int rc = check_run(st, name, &o, &t, &err);
	store_close(st);
	if (rc) {
		model_free(model);
		return cli_fail("%s", err.msg);
	}
	Buf out;
	buf_init(&out);
	if (strcmp(format, "json") == 0)
		check_table_json(t, &out);
	else
		check_table_text(t, &out);
	fwrite(out.p, 1, out.len, stdout);
	buf_fini(&out);
	check_table_free(t);
	model_free(model);
	return 0;
}
