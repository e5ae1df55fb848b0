/*
 * cmd_demo.c - `tailtriage demo`: the bundled Mercury sample, end to end.
 *
 * The sample is not a file in the repository: the simulator generates it
 * (deterministic, seed 1) into a temporary folder, and it is imported
 * through the same importer as real telemetry into a fresh database. Then
 * the dashboard opens with the incident as the window and the earlier
 * period as the baseline; without a terminal the report is printed.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis.h"
#include "board.h"
#include "buf.h"
#include "cli.h"
#include "diagnose.h"
#include "import.h"
#include "model_json.h"
#include "paths.h"
#include "report.h"
#include "sanitize.h"
#include "sim.h"
#include "timefmt.h"
#ifdef TT_HAVE_TUI
#include "tui.h"
#endif

extern const char tt_bundled_model[];
extern const unsigned long tt_bundled_model_len;

#define DEMO_DB "tailtriage-demo.db"

static void usage(FILE *out)
{
	fputs("usage: tailtriage demo [--db FILE] [--no-tui] [--seed N]\n\n"
	      "Generates the Mercury GET /v2/home sample (a baseline window and an incident\n"
	      "window where pricing calls wait on the client side), imports it into a fresh\n"
	      "database and opens the dashboard with the bundled endpoint model. Without a\n"
	      "terminal, or with --no-tui, prints the report instead.\n\n"
	      "  --db FILE   database to create (default ./" DEMO_DB "; an existing file\n"
	      "              other than the default is never overwritten)\n"
	      "  --no-tui    print the report instead of opening the dashboard\n"
	      "  --seed N    simulator seed (default 1)\n",
	      out);
}

static void remove_db(const char *path)
{
	char p[4096];
	unlink(path);
	snprintf(p, sizeof p, "%s-wal", path);
	unlink(p);
	snprintf(p, sizeof p, "%s-shm", path);
	unlink(p);
}

static void progress(void *ctx, uint64_t done, uint64_t total)
{
	(void)ctx;
	if (total && isatty(2))
		fprintf(stderr, "\rimporting sample: %3d%%", (int)(100 * done / total));
}

/* "tailtriage" (or its absolute path) and " --db DB --model MODEL", as
 * a command that works when pasted from another folder. */
static void demo_command(Buf *b, const char *db, const char *verb)
{
	char dbabs[4096], model_path[4096];
	if (db[0] == '/' || realpath(db, dbabs) == NULL)
		snprintf(dbabs, sizeof dbabs, "%s", db);
	if (tt_share_path("models/mercury-home.model.json", model_path, sizeof model_path))
		snprintf(model_path, sizeof model_path, "mercury-home");
	cli_shell_word(b, tt_self_command());
	buf_printf(b, " %s --db ", verb);
	cli_shell_word(b, dbabs);
	buf_adds(b, " --model ");
	cli_shell_word(b, model_path);
}

/* The Board's answer in a few lines, for after the dashboard closes and
 * for --no-tui: the three leading hypotheses with what they explain and
 * the decisions the engine supports (the same engine and the same
 * question as the Board). Returns 0, or -1 with err set. */
static int demo_answer(const char *db, const Model *model, Period per, Err *err)
{
	Store *st = NULL;
	if (store_open(db, STORE_READONLY, &st, err))
		return -1;
	DiagnoseOptions o = {.model = model, .period = per};
	Diagnosis *d = NULL;
	int rc = diagnose_run(st, &o, &d, err);
	store_close(st);
	if (rc)
		return -1;
	Buf out, cmd;
	buf_init(&out);
	buf_init(&cmd);
	buf_adds(&out, "\nThe Board's answer for the incident window:\n");
	char node[128], xl[256], reason[1024];
	for (int i = 0; i < d->n_hyp && i < 3; i++) {
		const DxHypothesis *h = &d->hyp[i];
		san_clean(h->node ? h->node : "", node, sizeof node);
		diagnosis_format_explained(d, h, xl, sizeof xl);
		buf_printf(&out, "  %d. %-26s %-16s %+5.1f%s%s\n", i + 1, h->id, node, h->score,
		           *xl && !strstr(xl, "not computed") ? "  " : "",
		           *xl && !strstr(xl, "not computed") ? xl : "");
	}
	int supported = 0;
	for (int i = 0; i < d->n_dec; i++) {
		if (d->dec[i].verdict != DX_SUPPORTED)
			continue;
		san_clean(d->dec[i].reason ? d->dec[i].reason : "", reason, sizeof reason);
		buf_printf(&out, "  supported decision: %s: %s\n", d->dec[i].id, reason);
		supported++;
	}
	if (!supported)
		buf_adds(&out, "  no decision is supported yet: run the leading hypothesis's check\n");
	demo_command(&cmd, db, "diagnose");
	char w[96], b[96];
	time_range_format(per.win, w, sizeof w);
	time_range_format(per.base, b, sizeof b);
	buf_printf(&out, "Every hypothesis with its evidence, checks and remedies: %s --window %s "
	                 "--baseline %s\n", buf_str(&cmd), w, b);
	fwrite(out.p, 1, out.len, stdout);
	buf_fini(&out);
	buf_fini(&cmd);
	diagnosis_free(d);
	return 0;
}

int cmd_demo(int argc, char **argv)
{
	static const struct option opts[] = {
		{"db", required_argument, NULL, 'd'},
		{"no-tui", no_argument, NULL, 'n'},
		{"seed", required_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *db = DEMO_DB, *seed = NULL;
	int no_tui = 0, c;
	optind = 1;
	while ((c = cli_getopt("demo", argc, argv, "d:ns:h", opts)) != -1) {
		switch (c) {
		case 'd': db = optarg; break;
		case 'n': no_tui = 1; break;
		case 's': seed = optarg; break;
		case 'h': usage(stdout); return 0;
		default: return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	if (strcmp(db, DEMO_DB) != 0 && access(db, F_OK) == 0)
		return cli_fail("%s exists: the demo builds a fresh database; remove it or pick another --db",
		                db);
	remove_db(db);

	Err err = {0};
	SimParams p;
	if (sim_params_init(&p, "mercury", &err) || (seed && sim_params_set(&p, "seed", seed, &err)))
		return cli_fail("%s", err.msg);
	char dir[] = "/tmp/tailtriage-demo-XXXXXX";
	if (mkdtemp(dir) == NULL)
		return cli_fail("cannot create a temporary folder: %s", strerror(errno));
	char traces[4096], manifest[4096];
	SimRun run;
	fprintf(stderr, "generating the Mercury sample (simulator, seed %s)...\n", seed ? seed : "1");
	int rc = sim_generate(&p, dir, 0, &run, traces, manifest, sizeof traces, &err);
	if (rc) {
		rmdir(dir);
		return cli_fail("%s", err.msg);
	}
	Store *st = NULL;
	if (store_open(db, 0, &st, &err)) {
		char mx[4200];
		snprintf(mx, sizeof mx, "%s/metrics.jsonl", dir);
		unlink(mx);
		unlink(traces);
		unlink(manifest);
		rmdir(dir);
		return cli_fail("%s", err.msg);
	}
	ImportOptions io = {.progress = progress};
	ImportResult res;
	rc = import_file(st, traces, &io, &res, &err);
	if (isatty(2))
		fputs("\r\033[K", stderr);
	/* the pools', executor's and CPU gauges the simulator wrote next to
	 * the traces (sim/sim_metrics.c) */
	char metrics[4200];
	snprintf(metrics, sizeof metrics, "%s/metrics.jsonl", dir);
	if (rc == 0 && access(metrics, F_OK) == 0) {
		ImportResult mres;
		ImportOptions mio = {0};
		rc = import_file(st, metrics, &mio, &mres, &err);
	}
	unlink(metrics);
	store_close(st);
	unlink(traces);
	unlink(manifest);
	rmdir(dir);
	if (rc)
		return cli_fail("%s", err.msg);
	fprintf(stderr, "imported %lld spans of %lld requests into %s\n",
	        (long long)res.counts.spans_added, (long long)run.traces, db);

	Model *model = NULL;
	if (model_parse("mercury-home.model.json (bundled)", tt_bundled_model, tt_bundled_model_len,
	                &model, &err))
		return cli_fail("%s", err.msg);
	int inc = run.n_phases > 1 ? 1 : 0;
	Period per = {.win = {run.phases[inc].start_ns, run.phases[inc].end_ns},
	              .has_baseline = inc > 0,
	              .base = {run.phases[0].start_ns, run.phases[0].end_ns}};

#ifdef TT_HAVE_TUI
	if (!no_tui && isatty(0) && isatty(1)) {
		TuiOptions to = {
			.db_path = db,
			.model = model,
			.period = per,
		};
		Err berr = {0};
		CliBoard *board = cli_board_open(db, model, &berr);
		cli_board_wire(board, &to);
		rc = tui_run(&to, &err);
		cli_board_close(board);
		if (rc == 0)
			rc = demo_answer(db, model, per, &err);
		model_free(model);
		if (rc)
			return cli_fail("%s", err.msg);
		return 0;
	}
#endif
	(void)no_tui;
	AnalysisOptions ao = {.period = per, .model = model};
	if (store_open(db, STORE_READONLY, &st, &err)) {
		model_free(model);
		return cli_fail("%s", err.msg);
	}
	Analysis *a = NULL;
	rc = analysis_run(st, &ao, &a, &err);
	store_close(st);
	if (rc) {
		model_free(model);
		return cli_fail("%s", err.msg);
	}
	Buf out;
	buf_init(&out);
	report_text(a, &out);
	fwrite(out.p, 1, out.len, stdout);
	fflush(stdout);
	buf_fini(&out);
	analysis_free(a);
	rc = demo_answer(db, model, per, &err);
	model_free(model);
	if (rc)
		return cli_fail("%s", err.msg);
	char w[96], b[96];
	time_range_format(per.win, w, sizeof w);
	time_range_format(per.base, b, sizeof b);
	/* a command that works from here: the binary by name when it is the
	 * one on $PATH, else by absolute path; absolute database and model */
	Buf hint;
	buf_init(&hint);
	demo_command(&hint, db, "tui");
	printf("\nOpen the dashboard: %s --window %s --baseline %s\n", buf_str(&hint), w, b);
	buf_fini(&hint);
	return 0;
}
