/*
 * cmd_report.c - `tailtriage report`: the DAG with splits for window and
 * baseline, objective status, tail ownership and data quality.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "buf.h"
#include "cli.h"
#include "model_infer.h"
#include "evidence.h"
#include "report.h"
#include "timefmt.h"

static void usage(FILE *out)
{
	fputs("usage: tailtriage report [--db FILE] [--endpoint SERVICE ROUTE] [--model FILE]\n"
	      "                         [--window A..B] [--baseline A..B] [--class C]\n"
	      "                         [--skew-tolerance T] [--sample N] [--sampled S]\n"
	      "                         [--format text|json]\n\n"
	      "Prints the endpoint's request DAG with queue / client wait / service p99 per\n"
	      "node for the window and the baseline, the objective status, who owns the\n"
	      "critical path of the slow requests, and data-quality findings.\n\n"
	      "  --db FILE        database (default $TAILTRIAGE_DB or ./tailtriage.db)\n"
	      CLI_ENDPOINT_HELP
	      "  --model FILE     endpoint model (objective, mandatory/optional, core, budgets):\n"
	      "                   a file, or a bundled model by name (mercury-home); without it,\n"
	      "                   a model inferred from the data ('none': no model)\n"
	      "  --window A..B    analysed range; A and B are RFC 3339 timestamps or epoch\n"
	      "                   milliseconds, either may be empty (default: all data)\n"
	      "  --baseline A..B  range to compare against, or 'before': the same length just\n"
	      "                   before a closed window (default: none)\n"
	      "  --class C        only requests of workload class C\n"
	      "  --skew-tolerance T  how far serial siblings may overlap (clock skew,\n"
	      "                   rounding) and still be serial on the critical path and in\n"
	      "                   the DAG: ABS+PCT%, e.g. 50us+1% (the default: 50 us plus\n"
	      "                   1 % of the shorter sibling), 2ms, 5%, or 0 for none; ABS\n"
	      "                   is capped at a quarter of the shorter sibling\n"
	      CLI_SAMPLE_HELP
	      CLI_SAMPLED_HELP
	      "  --format F       text (default) or json (schema: docs/report-json.md)\n",
	      out);
}

/* "sampling": how the traces were sampled, and the sentence about it. */
static void sampling_json(const Evidence *ev, const char *note, Buf *out)
{
	static const char *const KIND[] = {"unknown", "all", "head", "tail"};
	Buf v;
	buf_init(&v);
	buf_printf(&v, "{\"kind\": \"%s\", \"ratio\": ", KIND[ev->sampling.kind]);
	if (ev->sampling.ratio > 0)
		buf_printf(&v, "%.6g", ev->sampling.ratio);
	else
		buf_adds(&v, "null");
	buf_adds(&v, ", \"how\": ");
	buf_add_json_str(&v, ev->sampling_how, strlen(ev->sampling_how));
	buf_adds(&v, ", \"note\": ");
	if (note[0])
		buf_add_json_str(&v, note, strlen(note));
	else
		buf_adds(&v, "null");
	buf_adds(&v, "}");
	cli_json_add_member(out, "sampling", buf_str(&v));
	buf_fini(&v);
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{"db", required_argument, NULL, 'd'},
		{"model", required_argument, NULL, 'm'},
		{"window", required_argument, NULL, 'w'},
		{"baseline", required_argument, NULL, 'b'},
		{"class", required_argument, NULL, 'c'},
		{"format", required_argument, NULL, 'f'},
		{"skew-tolerance", required_argument, NULL, 'K'},
		{"sample", required_argument, NULL, 'S'},
		{"sampled", required_argument, NULL, 'P'},
		{"endpoint", required_argument, NULL, 'E'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *db = cli_default_db(), *model_path = NULL, *format = "text";
	const char *window = NULL, *baseline = NULL;
	AnalysisOptions ao = {.period = PERIOD_ALL};
	int64_t sample = EVIDENCE_SAMPLE_DEFAULT;
	EvSampling sampled = {0};
	CliEndpoint ep = {0};
	Err err = {0};
	int c;
	optind = 1;
	argc = cli_endpoint_argv(argc, argv);
	while ((c = cli_getopt("report", argc, argv, "d:m:w:b:c:f:h", opts)) != -1) {
		switch (c) {
		case 'd': db = optarg; break;
		case 'm': model_path = optarg; break;
		case 'w': window = optarg; break;
		case 'b': baseline = optarg; break;
		case 'c': ao.wclass = optarg; break;
		case 'f': format = optarg; break;
		case 'K':
			if (cli_skew_tolerance(optarg, &ao.skew))
				return 2;
			break;
		case 'S':
			if (cli_sample(optarg, &sample))
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
		fprintf(stderr, "tailtriage report: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (cli_text_or_json(format))
		return 2;
	if (cli_ranges(window, baseline, &ao.period))
		return 2;
	Store *st = NULL;
	if (store_open(db, STORE_READONLY, &st, &err))
		return cli_fail("%s", err.msg);
	Model *model = NULL;
	int mrc = cli_model_endpoint(model_path, st, &ao.period, CLI_EP_MUST_EXIST, &ep, &model);
	if (mrc) {
		store_close(st);
		return mrc;
	}
	ao.model = model;
	ao.ep_service = ep.set ? ep.service : NULL;
	ao.ep_route = ep.set ? ep.route : NULL;
	ModelFinding *mf = NULL;
	int nmf = 0;
	int crc = cli_check_class(st, model, ao.wclass);
	if (crc) {
		store_close(st);
		model_free(model);
		return crc;
	}
	Analysis *a = NULL;
	EvRequestSet *reqs[2] = {NULL, NULL};
	/* the budgets' evidence needs the request sets too: read with the
	 * analysis, in the same pass over the spans */
	int with_requests = model && model->n_budgets > 0 && ao.wclass == NULL;
	int rc = with_requests ? evidence_analysis_run(st, &ao, sample, &a, reqs, &err)
	                       : analysis_run_sample(st, &ao, sample, &a, &err);
	/* nothing to compare (an empty window or baseline, a baseline that is
	 * the window): refused as `diagnose` refuses it, exit status 1 */
	if (rc == 0 && a->class_filter == NULL)
		rc = analysis_period_guard(st, &ao.period, (double)a->pop[POP_WINDOW].requests,
		                           (double)a->pop[POP_BASELINE].requests,
		                           (double)a->pop[POP_WINDOW].sample_of, &err);
	/* the model's findings read this analysis when it covers every class */
	if (rc == 0 && model)
		rc = model_check_with(st, model, a, ao.period.win.from, ao.period.win.to, &mf, &nmf, &err);
	/* budgets on evidence (spans of this analysis, metrics, model) and the
	 * window's exemplars */
	Evidence *ev = NULL;
	BudgetResult *br = NULL;
	EvExemplar *ex = NULL;
	int nb = 0, nex = 0;
	if (rc == 0 && a->class_filter == NULL) {
		/* with budgets, all of it; else what says how the traces were
		 * sampled (metrics and the root spans' sampling, no request pass) */
		int budgets = model && model->n_budgets > 0;
		EvidenceOptions eo = {.model = model, .period = ao.period, .analysis = a, .skew = ao.skew,
		                      .requests = {reqs[0], reqs[1]}, .skip_requests = !budgets,
		                      .sampled = sampled};
		rc = evidence_compute(st, &eo, &ev, &err);
		if (rc == 0 && budgets)
			br = budgets_evaluate(model, ev, &nb);
	}
	if (rc == 0)
		rc = evidence_exemplars_load(st, ao.period.win.from, ao.period.win.to, 1000, &ex, &nex, &err);
	store_close(st);
	evidence_requests_free(reqs[0]);
	evidence_requests_free(reqs[1]);
	if (rc) {
		free(br);
		evidence_free(ev);
		analysis_free(a);
		model_findings_free(mf, nmf);
		model_free(model);
		return cli_fail("%s", err.msg);
	}
	Buf out;
	buf_init(&out);
	char note[1024] = "";
	if (ev)
		evidence_sampling_note(ev, note, sizeof note);
	if (strcmp(format, "json") == 0) {
		report_json_ext(a, br, nb, ex, nex, &out);
		if (model)
			cli_model_findings_json(mf, nmf, model, &out);
		if (ev)
			sampling_json(ev, note, &out);
	} else {
		if (note[0])
			buf_printf(&out, "Traces: %s\n\n", note);
		report_text(a, &out);
		cli_model_findings_text(mf, nmf, model, &out);
		report_budgets_text(br, nb, nex, &out);
	}
	fwrite(out.p, 1, out.len, stdout);
	buf_fini(&out);
	free(br);
	evidence_free(ev);
	evidence_exemplars_free(ex, nex);
	analysis_free(a);
	model_findings_free(mf, nmf);
	model_free(model);
	return 0;
}
