/*
 * cmd_diagnose.c - `tailtriage diagnose`: evidence, ranked hypotheses with
 * their checks, and decision verdicts (drills/diagnose.h does the work).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "cli.h"
#include "diagnose.h"
#include "evidence.h"
#include "model_infer.h"
#include "sheet.h"
#include "timefmt.h"

static void usage(FILE *out)
{
	fputs("usage: tailtriage diagnose [--db FILE] [--endpoint SERVICE ROUTE] [--model FILE]\n"
	      "                           [--window A..B]\n"
	      "                           [--baseline A..B|before] [--sheet FILE]\n"
	      "                           [--catalog FILE] [--skew-tolerance T]\n"
	      "                           [--sample N] [--sampled S] [--format text|json]\n\n"
	      "Computes the named evidence of the window against the baseline (spans, metrics,\n"
	      "an observation sheet), ranks the hypotheses of the catalog on it with what\n"
	      "supports, contradicts or is missing for each, names the check that separates\n"
	      "them, and evaluates the decisions (raise endpoint concurrency, add API hosts,\n"
	      "degrade or add capacity to a node, hold the rollout) with their guards. Every\n"
	      "comparison carries its sample size and a 95 % interval and holds only when it\n"
	      "is significant ('cannot tell' otherwise); each hypothesis about a locus says\n"
	      "how much of the percentile's rise that locus explains, by counterfactual\n"
	      "replay of the window's requests (docs/diagnosis.md).\n\n"
	      "  --db FILE        database (default $TAILTRIAGE_DB or ./tailtriage.db); with\n"
	      "                   --sheet and no --db, a missing default database is skipped\n"
	      CLI_ENDPOINT_HELP
	      "  --model FILE     endpoint model (objective, optional/core nodes, pools, budgets):\n"
	      "                   a file, or a bundled model by name (mercury-home); without it,\n"
	      "                   a model inferred from the data ('none': no model)\n"
	      "  --window A..B    analysed range (RFC 3339 or epoch ms; default: all data)\n"
	      "  --baseline A..B  range to compare against; 'before': the same length just\n"
	      "                   before the window (needs a closed window); a window or\n"
	      "                   baseline without requests is refused (exit 1)\n"
	      "  --sheet FILE     observation sheet; its values override computed ones\n"
	      "  --catalog FILE   hypothesis catalog (default: the built-in one)\n"
	      "  --skew-tolerance T  how far serial siblings may overlap (clock skew,\n"
	      "                   rounding) and still be serial on the critical path, in the\n"
	      "                   DAG and for serial-call evidence: ABS+PCT%, e.g. 50us+1%\n"
	      "                   (the default: 50 us plus 1 % of the shorter sibling), 2ms,\n"
	      "                   5%, or 0 for none; ABS is capped at a quarter of the\n"
	      "                   shorter sibling\n"
	      CLI_SAMPLE_HELP
	      CLI_SAMPLED_HELP
	      "  --format F       text (default) or json (docs/diagnosis.md)\n"
	      "  --decide ID      also judge this per-node decision, e.g. degrade:pricing or\n"
	      "                   add-capacity:profile (repeatable); the nodes the leading\n"
	      "                   hypotheses blame are always judged\n",
	      out);
}

int cmd_diagnose(int argc, char **argv)
{
	static const struct option opts[] = {
		{"db", required_argument, NULL, 'd'},
		{"model", required_argument, NULL, 'm'},
		{"window", required_argument, NULL, 'w'},
		{"baseline", required_argument, NULL, 'b'},
		{"sheet", required_argument, NULL, 's'},
		{"catalog", required_argument, NULL, 'C'},
		{"format", required_argument, NULL, 'f'},
		{"decide", required_argument, NULL, 'D'},
		{"skew-tolerance", required_argument, NULL, 'K'},
		{"sample", required_argument, NULL, 'S'},
		{"sampled", required_argument, NULL, 'P'},
		{"endpoint", required_argument, NULL, 'E'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *db = NULL, *model_path = NULL, *sheet_path = NULL, *format = "text";
	const char *baseline = NULL;
	const char *window = NULL;
	const char *decide[33] = {NULL};
	int n_decide = 0;
	DiagnoseOptions o = {.period = PERIOD_ALL, .decide = decide};
	int64_t sample = EVIDENCE_SAMPLE_DEFAULT;
	CliEndpoint ep = {0};
	Err err = {0};
	int c;
	optind = 1;
	argc = cli_endpoint_argv(argc, argv);
	while ((c = cli_getopt("diagnose", argc, argv, "d:m:w:b:s:C:f:D:h", opts)) != -1) {
		switch (c) {
		case 'D':
			if (n_decide == 32)
				return cli_fail("--decide: at most 32"), 2;
			decide[n_decide++] = optarg;
			break;
		case 'd': db = optarg; break;
		case 'm': model_path = optarg; break;
		case 'w': window = optarg; break;
		case 'b': baseline = optarg; break;
		case 's': sheet_path = optarg; break;
		case 'C': o.catalog_path = optarg; break;
		case 'f': format = optarg; break;
		case 'K':
			if (cli_skew_tolerance(optarg, &o.skew))
				return 2;
			break;
		case 'S':
			if (cli_sample(optarg, &sample))
				return 2;
			break;
		case 'P':
			if (cli_sampled(optarg, &o.sampled))
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
		fprintf(stderr, "tailtriage diagnose: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (cli_text_or_json(format))
		return 2;
	if (cli_ranges(window, baseline, &o.period))
		return 2;
	Sheet *sheet = NULL;
	if (sheet_path && sheet_load(sheet_path, &sheet, &err))
		return cli_fail("%s", err.msg);
	o.sheet = sheet;
	if (db == NULL) {
		db = cli_default_db();
		if (sheet && access(db, F_OK) != 0)
			db = NULL; /* a sheet alone is enough */
	}
	if (db == NULL && sheet == NULL)
		return cli_fail("nothing to diagnose: give --db or --sheet"), 2;
	Model *model = NULL;
	ModelFinding *mf = NULL;
	int nmf = 0;
	int rc = 1;
	Store *st = NULL;
	Diagnosis *d = NULL;
	Analysis *a = NULL;
	EvRequestSet *reqs[2] = {NULL, NULL};
	Buf out;
	buf_init(&out);
	if (db && access(db, F_OK) != 0) {
		cli_fail("%s: no such database (import data first, or give only --sheet)", db);
		goto done;
	}
	if (db && store_open(db, STORE_READONLY, &st, &err)) {
		cli_fail("%s", err.msg);
		goto done;
	}
	/* the endpoint, and without --model a model inferred from the window's
	 * data for it */
	int mrc = cli_model_endpoint(model_path, st, &o.period, CLI_EP_MUST_EXIST, &ep, &model);
	if (mrc) {
		rc = mrc;
		goto done;
	}
	o.model = model;
	/* one read of the spans: the analysis of the question, read by the
	 * model's findings and by the diagnosis's evidence, and the request
	 * sets of its window and baseline (evidence_compute would build the
	 * same) */
	if (st) {
		AnalysisOptions ao = {.period = o.period, .model = model, .skew = o.skew,
		                      .ep_service = ep.set ? ep.service : NULL,
		                      .ep_route = ep.set ? ep.route : NULL};
		if (evidence_analysis_run(st, &ao, sample, &a, reqs, &err)) {
			cli_fail("%s", err.msg);
			goto done;
		}
		o.analysis = a;
		o.requests[0] = reqs[0];
		o.requests[1] = reqs[1];
	}
	if (st && model && model_check_with(st, model, a, o.period.win.from, o.period.win.to, &mf, &nmf, &err)) {
		cli_fail("%s", err.msg);
		goto done;
	}
	if (diagnose_run(st, &o, &d, &err)) {
		cli_fail("%s", err.msg);
		goto done;
	}
	if (strcmp(format, "json") == 0) {
		diagnosis_json(d, model, &out);
		cli_model_findings_json(mf, nmf, model, &out);
	} else {
		if (!d->evidence->has_spans && sheet == NULL)
			buf_adds(&out, "note: no requests of the endpoint in the window; the diagnosis "
			               "rests on metrics and the model only\n\n");
		for (int p = 0; a && p < 2; p++)
			if (a->pop[p].sample_of > 0)
				buf_printf(&out, "note: the %s's requests are a uniform sample of %lld of "
				                 "%lld (--sample); every interval is the sample's\n%s",
				           p ? "baseline" : "window", (long long)a->pop[p].requests,
				           (long long)a->pop[p].sample_of,
				           p == 1 || a->pop[1].sample_of == 0 ? "\n" : "");
		diagnosis_text(d, model, &out);
		if (st)
			cli_model_findings_text(mf, nmf, model, &out);
	}
	fwrite(out.p, 1, out.len, stdout);
	rc = 0;
done:
	buf_fini(&out);
	diagnosis_free(d);
	analysis_free(a);
	evidence_requests_free(reqs[0]);
	evidence_requests_free(reqs[1]);
	store_close(st);
	model_findings_free(mf, nmf);
	model_free(model);
	sheet_free(sheet);
	return rc;
}
