/*
 * cmd_tui.c - `tailtriage tui`: parses options and hands them to
 * tui_run() (tui/tui.h).
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "board.h"
#include "model_follow.h"
#include "model_infer.h"
#include "cli.h"
#include "receiver.h"
#include "timefmt.h"
#include "tui.h"

static void usage(FILE *out)
{
	fputs("usage: tailtriage tui [--db FILE] [--endpoint SERVICE ROUTE] [--model FILE]\n"
	      "                      [--window A..B] [--baseline A..B]\n"
	      "                      [--class C] [--skew-tolerance T] [--sampled S]\n"
	      "                      [--refresh SECONDS] [--ascii] [--no-color]\n\n"
	      "Opens the live dashboard: the endpoint's request DAG with queue / client wait /\n"
	      "service splits, node detail, trace waterfall and tail ownership. The database\n"
	      "is read-only here; imports running in another process show up within two\n"
	      "refresh ticks. Press ? inside for the keys.\n\n"
	      "  --db FILE          database (default $TAILTRIAGE_DB or ./tailtriage.db)\n"
	      "  --endpoint SERVICE ROUTE  the endpoint to open, as 'tailtriage endpoints'\n"
	      "                     lists it (default: the model's root, else the one whose\n"
	      "                     percentile rose most significantly, else the most common);\n"
	      "                     e lists them inside, { and } switch\n"
	      "  --model FILE       endpoint model (objective, mandatory/optional, core, budgets):\n"
	      "                     a file, or a bundled model by name (mercury-home); without\n"
	      "                     it, a model inferred from the data at start ('none': no\n"
	      "                     model); the M key writes the model in use to a file\n"
	      "  --model-out FILE   file the M key writes (default tailtriage.model.json; an\n"
	      "                     existing file is never overwritten)\n"
	      "  --window A..B      analysed range; RFC 3339 or epoch ms, either side may be\n"
	      "                     empty (default: all data, following new data)\n"
	      "  --baseline A..B    range to compare against, or 'before' (the same length\n"
	      "                     just before a closed window; default: none)\n"
	      "  --class C          only requests of workload class C\n"
	      "  --skew-tolerance T how far serial siblings may overlap (clock skew, rounding)\n"
	      "                     and still be serial: ABS+PCT%, e.g. 50us+1% (the default:\n"
	      "                     50 us plus 1 % of the shorter sibling), 2ms, 5%, or 0;\n"
	      "                     ABS is capped at a quarter of the shorter sibling\n"
	      "  --sampled S        how the traces were sampled, when the spans do not say: a\n"
	      "                     head-sampled share (6%, 0.06, 1/16) scales the Board's\n"
	      "                     counts back; 'tail' takes no percentile from the traces\n"
	      "  --refresh SECONDS  live tick (default 1; 0.05 to 60)\n"
	      "  --ascii            ASCII line drawing and bars\n"
	      "  --no-color         monochrome (the NO_COLOR variable does the same)\n"
	      "  --latency-log FILE append frame timings (for bench/tui_latency.sh)\n"
	      "  --listen HOST:PORT also receive OTLP/HTTP (JSON, protobuf) here, like 'tailtriage serve'\n"
	      "                     (its own thread and database connection; counters in the\n"
	      "                     status line); the database is created when missing\n"
	      "  --token TOKEN      with --listen: require 'Authorization: Bearer TOKEN'\n",
	      out);
}

/* Without --model: the model drafted again as data arrives, for the
 * dashboard and its diagnosis alike (TuiOptions.model_update). */
typedef struct Follow {
	ModelFollow *mf;
	CliBoard *board;
} Follow;

static const Model *model_update(void *ctx, const Analysis *a)
{
	Follow *f = ctx;
	const Model *m = model_follow_update(f->mf, a);
	if (m)
		cli_board_set_model(f->board, m);
	return m;
}

/* The receiver's counters for the status line (TuiOptions.status_extra). */
static void receiver_status(void *ctx, char *buf, size_t n)
{
	ReceiverStats k;
	receiver_stats(ctx, &k);
	snprintf(buf, n, "rx :%u %lld req, %lld stored, %lld rejected", receiver_port(ctx),
	         (long long)k.received, (long long)k.stored, (long long)k.rejected);
}

int cmd_tui(int argc, char **argv)
{
	static const struct option opts[] = {
		{"db", required_argument, NULL, 'd'},
		{"model", required_argument, NULL, 'm'},
		{"window", required_argument, NULL, 'w'},
		{"baseline", required_argument, NULL, 'b'},
		{"class", required_argument, NULL, 'c'},
		{"refresh", required_argument, NULL, 'r'},
		{"ascii", no_argument, NULL, 'a'},
		{"no-color", no_argument, NULL, 'n'},
		{"latency-log", required_argument, NULL, 'L'},
		{"listen", required_argument, NULL, 'R'},
		{"token", required_argument, NULL, 'T'},
		{"model-out", required_argument, NULL, 'O'},
		{"skew-tolerance", required_argument, NULL, 'K'},
		{"sampled", required_argument, NULL, 'P'},
		{"endpoint", required_argument, NULL, 'E'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	TuiOptions to;
	memset(&to, 0, sizeof to);
	to.db_path = cli_default_db();
	to.period = PERIOD_ALL;
	to.refresh_ms = 1000;
	const char *model_path = NULL;
	const char *listen = NULL, *token = getenv("TAILTRIAGE_TOKEN");
	Err err = {0};
	const char *window = NULL, *baseline = NULL;
	EvSampling sampled = {0};
	CliEndpoint ep = {0};
	int c;
	optind = 1;
	argc = cli_endpoint_argv(argc, argv);
	while ((c = cli_getopt("tui", argc, argv, "d:m:w:b:c:r:anL:h", opts)) != -1) {
		switch (c) {
		case 'd': to.db_path = optarg; break;
		case 'm': model_path = optarg; break;
		case 'w': window = optarg; break;
		case 'b': baseline = optarg; break;
		case 'c': to.wclass = optarg; break;
		case 'r': {
			char *end;
			double s = strtod(optarg, &end);
			if (end == optarg || *end || !isfinite(s) || s < 0.05 || s > 60)
				return cli_fail("--refresh: '%s' is not a number of seconds from 0.05 to 60",
				                optarg), 2;
			to.refresh_ms = (int)lround(s * 1000);
			break;
		}
		case 'a': to.ascii = 1; break;
		case 'n': to.no_color = 1; break;
		case 'L': to.latency_log = optarg; break;
		case 'R': listen = optarg; break;
		case 'T': token = optarg; break;
		case 'O': to.model_out = optarg; break;
		case 'K':
			if (cli_skew_tolerance(optarg, &to.skew))
				return 2;
			break;
		case 'P':
			if (cli_sampled(optarg, &sampled))
				return 2;
			break;
		case 'E':
			if (cli_endpoint_parse(optarg, &ep))
				return 2;
			break;
		case 'h': usage(stdout); return 0;
		default: return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "tailtriage tui: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (cli_ranges(window, baseline, &to.period))
		return 2;
	/* With --listen the receiver runs in this process on its own thread
	 * and connection (it creates the database when missing). */
	Receiver *rx = NULL;
	if (listen) {
		char h[256];
		unsigned port;
		Err perr = {0};
		if (receiver_parse_listen(listen, h, sizeof h, &port, &perr))
			return cli_fail("--listen: %s", perr.msg), 2;
		cli_warn_open_listener(listen, token);
		ReceiverOptions ro = {.db_path = to.db_path, .listen = listen, .token = token};
		if (receiver_start(&ro, &rx, &err))
			return cli_fail("--listen: %s", err.msg);
		to.status_extra = receiver_status;
		to.status_ctx = rx;
	}
	if (access(to.db_path, F_OK) != 0)
		return cli_fail("%s: no such database (import data first: tailtriage import --db %s FILE)",
		                to.db_path, to.db_path);
	/* no --model: one inferred from the data there is at start */
	Model *model = NULL;
	ModelFinding *mf = NULL;
	int nmf = 0;
	Store *st = NULL;
	if (store_open(to.db_path, STORE_READONLY, &st, &err)) {
		receiver_stop(rx);
		return cli_fail("%s", err.msg);
	}
	/* the endpoint (with --listen it may not have arrived yet), and the
	 * model: given, or inferred for that endpoint */
	int erc = cli_model_endpoint(model_path, st, &to.period, listen ? 0 : CLI_EP_MUST_EXIST, &ep,
	                             &model);
	if (erc) {
		store_close(st);
		receiver_stop(rx);
		return erc;
	}
	to.ep_service = ep.set ? ep.service : NULL;
	to.ep_route = ep.set ? ep.route : NULL;
	/* the model's findings are counts: the aggregates answer them without
	 * reading every span before the first frame (model_check_with() says
	 * when they may) */
	Analysis *agg = NULL;
	if (model && !model->inferred) {
		AnalysisOptions ao = {.period.win = to.period.win, .model = model,
		                      .ep_service = to.ep_service, .ep_route = to.ep_route};
		Err aerr = {0};
		if (analysis_from_aggregates(st, &ao, &agg, &aerr) != 0)
			agg = NULL;
	}
	int mrc = model ? model_check_with(st, model, agg, to.period.win.from, to.period.win.to, &mf, &nmf, &err)
	                : 0;
	analysis_free(agg);
	if (mrc) {
		store_close(st);
		model_free(model);
		receiver_stop(rx);
		return cli_fail("%s", err.msg);
	}
	if (to.wclass && listen == NULL) {
		/* a class neither the model nor the data knows is a usage error
		 * (with --listen a new class may still arrive) */
		int crc = cli_check_class(st, model, to.wclass);
		if (crc) {
			store_close(st);
			model_findings_free(mf, nmf);
			model_free(model);
			receiver_stop(rx);
			return crc;
		}
	}
	store_close(st);
	to.model = model;
	to.model_findings = mf;
	to.n_model_findings = nmf;
	/* budgets in the header and the hypothesis board: a diagnosis of the
	 * window on screen, kept up to date in the background */
	Err berr = {0};
	CliBoard *board = cli_board_open(to.db_path, model, &berr);
	cli_board_wire(board, &to);
	/* no --model: the model is inferred again when the data changes
	 * materially (data arrives in a new database, a new dependency, twice
	 * the requests); the follower owns the models from here on */
	Follow follow = {.board = board};
	if (model_path == NULL) {
		Err ferr = {0};
		if (model_follow_open(to.db_path, model, to.period.win.from, to.period.win.to, &follow.mf,
		                      &ferr) == 0) {
			to.model_update = model_update;
			to.model_ctx = &follow;
		} else {
			/* the dashboard still works with the model of the start */
			fprintf(stderr, "tailtriage: the model will not follow the data: %s\n", ferr.msg);
		}
	}
	cli_board_sampled(board, sampled);
	int rc = tui_run(&to, &err);
	cli_board_close(board);
	model_follow_close(follow.mf);
	receiver_stop(rx);
	model_findings_free(mf, nmf);
	if (follow.mf == NULL)
		model_free(model);
	if (rc)
		return cli_fail("%s", err.msg);
	return 0;
}
