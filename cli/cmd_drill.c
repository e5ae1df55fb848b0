/*
 * cmd_drill.c - `tailtriage drill list | show | train | replay | history`.
 *
 * Training: the drill's data is replayed at full speed into a scratch
 * database, the diagnosis engine runs on it, and the answers (a file, or
 * the TUI's drill pane) are scored from the drill's answer key plus the
 * engine's output (drills/score.h). The attempt goes into the history
 * database (--db) with time, person, answers, score and every deduction.
 *
 * Replay: the drill's telemetry is written into --db slice by slice at
 * --speed; with --tui the dashboard runs on the same database while a
 * worker thread writes, so the DAG changes on screen.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "cli.h"
#include "diagnose.h"
#include "drill.h"
#include "model_json.h"
#include "order.h"
#include "replay.h"
#include "score.h"
#include "sheet.h"
#include "timefmt.h"
#include "stop.h"
#include "training.h"
#ifdef TT_HAVE_TUI
#include "board.h"
#include "tui.h"
#include "tui_drill.h"
#include "sanitize.h"
#endif

static void usage(FILE *out)
{
	fputs("usage: tailtriage drill list [--catalog DIR]\n"
	      "       tailtriage drill show ID [--hints N] [--seed N]\n"
	      "       tailtriage drill train ID [--answers FILE] [--person NAME] [--db FILE]\n"
	      "                              [--data-db FILE] [--max-traces N] [--seed N]\n"
	      "       tailtriage drill replay ID [--db FILE] [--speed X] [--slice SECONDS] [--tui]\n"
	      "                              [--max-traces N]\n"
	      "       tailtriage drill history [--db FILE] [--person NAME] [--drill ID] [--json]\n"
	      "                              [--shown]\n\n"
	      "Incident drills (docs/drills.md). 'train' scores your answers: with --answers FILE\n"
	      "(JSON: hypotheses, checks, decision) it prints the score and the reason for every\n"
	      "point lost; on a terminal without --answers it opens the dashboard on the drill's\n"
	      "data with a Drill pane to answer in. 'replay' writes the drill's telemetry into a\n"
	      "database over time so a dashboard on it shows the incident unfold. 'history' lists\n"
	      "the stored attempts. Each attempt shows the choices in its own shuffled order.\n\n"
	      "  --catalog DIR     drill folder (default $TAILTRIAGE_DRILLS or the shipped catalog)\n"
	      "  --db FILE         train/history: the history database; replay: the database to\n"
	      "                    write (default $TAILTRIAGE_DB or ./tailtriage.db)\n"
	      "  --answers FILE    answers to score (headless)\n"
	      "  --person NAME     who answers (default: the answers file's \"person\", $USER)\n"
	      "  --data-db FILE    train: keep the drill's data in FILE (default: a scratch file)\n"
	      "  --speed X         replay: data seconds per wall second (default: the drill's);\n"
	      "                    'max' for no pauses\n"
	      "  --slice SECONDS   replay: data seconds per import (default: the drill's)\n"
	      "  --tui             replay: open the dashboard on the database while it fills\n"
	      "  --max-traces N    cap the simulator's traces per window (quick runs)\n"
	      "  --hints N         show: also print the first N hints\n"
	      "  --seed N          show, train: shuffle the choices from seed N (0 to 4294967295)\n"
	      "                    instead of a fresh one; train stores it with the attempt\n"
	      "  --json            history: one JSON object per line\n"
	      "  --shown           history: also print the choices in the order the person saw\n",
	      out);
}

typedef struct Opts {
	const char *catalog;
	const char *db;
	const char *answers;
	const char *person;
	const char *data_db;
	const char *drill;
	double speed;             /* 0: the drill's; < 0: max */
	double slice_s;
	int64_t max_traces;
	int hints;
	int tui;
	int json;
	int shown;                /* history: print the order shown */
	int has_seed;
	uint32_t seed;
} Opts;

/* Parses the options after "drill SUB"; leaves positional arguments from
 * optind. Returns 0, or an exit status. */
static int parse_opts(int argc, char **argv, Opts *o)
{
	static const struct option opts[] = {
		{"catalog", required_argument, NULL, 'C'},
		{"db", required_argument, NULL, 'd'},
		{"answers", required_argument, NULL, 'a'},
		{"person", required_argument, NULL, 'p'},
		{"data-db", required_argument, NULL, 'D'},
		{"drill", required_argument, NULL, 'i'},
		{"speed", required_argument, NULL, 's'},
		{"slice", required_argument, NULL, 'S'},
		{"max-traces", required_argument, NULL, 'm'},
		{"hints", required_argument, NULL, 'H'},
		{"tui", no_argument, NULL, 't'},
		{"json", no_argument, NULL, 'j'},
		{"seed", required_argument, NULL, 'e'},
		{"shown", no_argument, NULL, 'w'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	char who[64];
	snprintf(who, sizeof who, "drill %s", argv[0]); /* a known subcommand */
	int c;
	optind = 1;
	while ((c = cli_getopt(who, argc, argv, "h", opts)) != -1) {
		char *end = NULL;
		switch (c) {
		case 'C': o->catalog = optarg; break;
		case 'd': o->db = optarg; break;
		case 'a': o->answers = optarg; break;
		case 'p':
			if (optarg[0] == '\0' || strlen(optarg) > 128)
				return cli_fail("--person: give 1 to 128 bytes"), 2;
			for (const char *ch = optarg; *ch; ch++)
				if ((unsigned char)*ch < 0x20 || *ch == 0x7f)
					return cli_fail("--person: no control characters"), 2;
			o->person = optarg;
			break;
		case 'D': o->data_db = optarg; break;
		case 'i': o->drill = optarg; break;
		case 's':
			if (strcmp(optarg, "max") == 0) {
				o->speed = -1;
				break;
			}
			o->speed = strtod(optarg, &end);
			if (end == optarg || *end || !isfinite(o->speed) || o->speed < 0.01 ||
			    o->speed > 1e6)
				return cli_fail("--speed: '%s' is not a number from 0.01 to 1000000 (or max)",
				                optarg), 2;
			break;
		case 'S':
			o->slice_s = strtod(optarg, &end);
			if (end == optarg || *end || !isfinite(o->slice_s) || o->slice_s < 0.1 ||
			    o->slice_s > 3600)
				return cli_fail("--slice: '%s' is not a number of seconds from 0.1 to 3600",
				                optarg), 2;
			break;
		case 'm': {
			long long v = strtoll(optarg, &end, 10);
			if (end == optarg || *end || v < 1 || v > 50000000)
				return cli_fail("--max-traces: '%s' is not a whole number from 1", optarg), 2;
			o->max_traces = v;
			break;
		}
		case 'H': {
			long v = strtol(optarg, &end, 10);
			if (end == optarg || *end || v < 0 || v > 1000)
				return cli_fail("--hints: '%s' is not a whole number from 0", optarg), 2;
			o->hints = (int)v;
			break;
		}
		case 't': o->tui = 1; break;
		case 'j': o->json = 1; break;
		case 'e':
			if (drill_seed_parse(optarg, &o->seed))
				return cli_fail("--seed: '%s' is not a whole number from 0 to %lu", optarg,
				                (unsigned long)DRILL_SEED_MAX), 2;
			o->has_seed = 1;
			break;
		case 'w': o->shown = 1; break;
		case 'h': usage(stdout); return -1;
		default: return 2;
		}
	}
	return 0;
}

static const char *catalog_of(const Opts *o)
{
	return o->catalog ? o->catalog : drill_catalog_dir();
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Prints text wrapped at 78 columns. Each input line keeps its own leading
 * spaces (at least indent) on its continuation lines, so indented lists
 * stay readable; blank lines are kept. */
static void print_wrapped(FILE *out, const char *text, int indent)
{
	const char *p = text;
	while (*p) {
		size_t n = strcspn(p, "\n");
		int ind = 0;
		while ((size_t)ind < n && p[ind] == ' ')
			ind++;
		if (ind < indent)
			ind = indent;
		int col = 0;
		const char *q = p, *end = p + n;
		while (q < end) {
			while (q < end && *q == ' ')
				q++;
			if (q >= end)
				break;
			size_t w = 0;
			while (q + w < end && q[w] != ' ')
				w++;
			if (col > ind && col + 1 + (int)w > 78) {
				fputc('\n', out);
				col = 0;
			}
			if (col == 0) {
				fprintf(out, "%*s", ind, "");
				col = ind;
			} else {
				fputc(' ', out);
				col++;
			}
			fwrite(q, 1, w, out);
			col += (int)w;
			q += w;
		}
		fputc('\n', out);
		p += n;
		if (*p == '\n')
			p++;
	}
}

/* ---- list and show ------------------------------------------------------- */

static int drill_list_cmd(const Opts *o)
{
	Err err = {0};
	const char *dir = catalog_of(o);
	char **files = drill_catalog_files(dir, &err);
	if (files == NULL)
		return cli_fail("%s", err.msg);
	int bad = 0, n = 0;
	for (int i = 0; files[i]; i++) {
		Drill *d = NULL;
		if (drill_load(files[i], &d, &err)) {
			fprintf(stderr, "tailtriage: %s\n", err.msg);
			bad = 1;
			continue;
		}
		printf("%-26s %-10s %s\n", d->id, d->kind == DRILL_DISCUSSION ? "discussion" : "diagnosis",
		       d->title);
		if (d->summary)
			print_wrapped(stdout, d->summary, 4);
		drill_free(d);
		n++;
	}
	drill_strv_free(files);
	if (n == 0 && !bad)
		printf("no drills in %s\n", dir);
	return bad;
}

/* The choices in the order o shows them, numbered from 1. */
static void print_choices(const char *title, const DrillChoice *c, const int *order, int n)
{
	printf("%s\n", title);
	for (int i = 0; i < n; i++) {
		const DrillChoice *x = &c[order[i]];
		if (x->text)
			printf("  %2d. %-34s %s\n", i + 1, x->id, x->text);
		else
			printf("  %2d. %s\n", i + 1, x->id);
	}
}

static void print_brief(const Drill *d, const DrillOrder *o, int hints)
{
	printf("%s (%s, version %lld)\n\n", d->title, d->id, (long long)d->version);
	print_wrapped(stdout, d->brief, 0);
	if (d->kind == DRILL_DISCUSSION) {
		printf("\nquestion\n");
		print_wrapped(stdout, d->prompt, 2);
		printf("\nAnswer with a JSON file {\"answer\": \"...\"}%s and run\n"
		       "  tailtriage drill train %s --answers FILE\n",
		       d->self_assessed_ok ? " or tick the checklist {\"self_assessed\": [...]}" : "",
		       d->id);
		if (d->self_assessed_ok) {
			printf("\nchecklist points (ids for self-assessment)\n");
			for (int i = 0; i < d->n_checklist; i++)
				printf("  %s\n", d->checklist[i].id);
		}
	} else {
		printf("\nquestions\n  1. rank the %d most likely hypotheses\n"
		       "  2. choose a discriminating check for each\n  3. choose a decision\n\n",
		       d->rank);
		printf("(choices in a shuffled order, seed %lu)\n\n", (unsigned long)o->seed);
		print_choices("hypotheses", d->hyp_choices, o->hyp, o->n_hyp);
		print_choices("checks", d->check_choices, o->check, o->n_check);
		print_choices("decisions", d->decision_choices, o->decision, o->n_decision);
		printf("\nAnswer with a JSON file of choice ids (docs/drills.md) and run\n"
		       "  tailtriage drill train %s --answers FILE --seed %lu\n"
		       "(--seed stores the order you saw with the attempt)\n",
		       d->id, (unsigned long)o->seed);
	}
	for (int i = 0; i < hints && i < d->n_hints; i++) {
		printf("\nhint %d (costs %g points)\n", i + 1, d->hints[i].cost);
		print_wrapped(stdout, d->hints[i].text, 2);
	}
	if (hints == 0 && d->n_hints > 0)
		printf("\n%d hint%s available (--hints N; each revealed hint costs points: put\n"
		       "\"hints_used\": N in the answers file)\n",
		       d->n_hints, d->n_hints == 1 ? "" : "s");
}

static int drill_show_cmd(const Opts *o, const char *id)
{
	Err err = {0};
	Drill *d = NULL;
	if (drill_find(catalog_of(o), id, &d, &err))
		return cli_fail("%s", err.msg);
	DrillOrder ord;
	drill_order_init(&ord, d, o->has_seed ? o->seed : drill_seed_auto());
	print_brief(d, &ord, o->hints);
	drill_order_fini(&ord);
	drill_free(d);
	return 0;
}

/* ---- the drill's data and the engine (drills/training.h) ------------------ */

typedef TrainingSession Session;

static const char *default_person(const Answers *a, const Opts *o)
{
	if (o->person)
		return o->person;
	if (a && a->person)
		return a->person;
	const char *u = getenv("USER");
	return u && *u ? u : "unknown";
}

#ifdef TT_HAVE_TUI
/* TuiDrill.submit: parse the view's answers and score them. */
static char *tui_submit(void *ctx, const char *json, char *errbuf, size_t errsz)
{
	Session *s = ctx;
	Err err = {0};
	Answers *a = NULL;
	if (answers_parse("answers", json, strlen(json), s->d, &a, &err)) {
		snprintf(errbuf, errsz, "%s", err.msg);
		return NULL;
	}
	Buf out;
	buf_init(&out);
	int rc = training_score(s, a, "tui", &out, &err);
	answers_free(a);
	if (rc) {
		snprintf(errbuf, errsz, "%s", err.msg);
		buf_fini(&out);
		return NULL;
	}
	char *r = xstrdup(buf_str(&out));
	buf_fini(&out);
	return r;
}

static int train_tui(Session *s, atomic_int *quit)
{
	const Drill *d = s->d;
	TuiDrillChoice *h = xcalloc((size_t)d->n_hyp_choices + 1, sizeof *h);
	TuiDrillChoice *c = xcalloc((size_t)d->n_check_choices + 1, sizeof *c);
	TuiDrillChoice *dc = xcalloc((size_t)d->n_decision_choices + 1, sizeof *dc);
	TuiDrillChoice *pt = xcalloc((size_t)d->n_checklist + 1, sizeof *pt);
	const char **hints = xcalloc((size_t)d->n_hints + 1, sizeof *hints);
	double *costs = xcalloc((size_t)d->n_hints + 1, sizeof *costs);
	/* the pane lists the choices in the attempt's shuffled order; it
	 * answers with ids, so scoring does not depend on positions */
	const DrillOrder *ord = &s->order;
	for (int i = 0; i < ord->n_hyp; i++) {
		h[i].id = d->hyp_choices[ord->hyp[i]].id;
		h[i].text = d->hyp_choices[ord->hyp[i]].text;
		if (h[i].text == NULL && s->dx) {
			char base[128];
			drill_split_id(h[i].id, base, sizeof base);
			const DxHypothesis *x = diagnosis_hypothesis(s->dx, base);
			if (x)
				h[i].text = x->title;
		}
	}
	for (int i = 0; i < ord->n_check; i++)
		c[i] = (TuiDrillChoice){d->check_choices[ord->check[i]].id,
		                        d->check_choices[ord->check[i]].text};
	for (int i = 0; i < ord->n_decision; i++)
		dc[i] = (TuiDrillChoice){d->decision_choices[ord->decision[i]].id,
		                         d->decision_choices[ord->decision[i]].text};
	for (int i = 0; i < d->n_checklist; i++)
		pt[i] = (TuiDrillChoice){d->checklist[i].id, d->checklist[i].point};
	for (int i = 0; i < d->n_hints; i++) {
		hints[i] = d->hints[i].text;
		costs[i] = d->hints[i].cost;
	}
	TuiDrill td = {
		.id = d->id, .title = d->title, .brief = d->brief,
		.discussion = d->kind == DRILL_DISCUSSION, .prompt = d->prompt,
		.model_answer = d->model_answer, .rank = d->rank,
		.hyps = h, .n_hyps = ord->n_hyp,
		.checks = c, .n_checks = ord->n_check,
		.decisions = dc, .n_decisions = ord->n_decision,
		.points = pt, .n_points = d->n_checklist,
		.hints = hints, .hint_costs = costs, .n_hints = d->n_hints,
		.submit = tui_submit, .ctx = s,
	};
	TuiOptions to = {
		.db_path = s->data_db,
		.model = s->model,
		.period = s->w.period,
		.drill = &td,
		.quit = quit,
	};
	/* the Board and the header's budgets: the engine on the drill's data,
	 * with its sheet and the decisions the drill asks about */
	Err err = {0};
	const char **decide = drill_engine_decisions(d);
	CliBoard *board = cli_board_open_drill(s->data_db, s->model, s->sheet, decide, &err);
	if (board == NULL)
		fprintf(stderr, "tailtriage: no Board: %s\n", err.msg);
	cli_board_wire(board, &to);
	int rc = tui_run(&to, &err);
	cli_board_close(board);
	free(decide);
	free(h);
	free(c);
	free(dc);
	free(pt);
	free(hints);
	free(costs);
	if (rc)
		return cli_fail("%s", err.msg);
	if (s->stored)
		printf("%s: %g / %g points (%d attempt%s stored in %s)\n", d->id, s->last_score,
		       s->last_max, s->stored, s->stored == 1 ? "" : "s", s->history_db);
	else
		printf("%s: nothing submitted, no attempt stored\n", d->id);
	return 0;
}
#endif

static int drill_train_cmd(const Opts *o, const char *id)
{
	Err err = {0};
	Session s = {.history_db = o->db ? o->db : cli_default_db(), .started_ms = now_ms()};
	if (drill_find(catalog_of(o), id, &s.d, &err))
		return cli_fail("%s", err.msg);
	/* With an answers file the order is known only when --seed says which
	 * `drill show` the answers were prepared from. */
	drill_order_init(&s.order, s.d, o->has_seed ? o->seed : drill_seed_auto());
	s.has_order = o->has_seed || o->answers == NULL;
	Answers *a = NULL;
	if (o->answers) {
		if (answers_load(o->answers, s.d, &a, &err)) {
			training_fini(&s);
			return cli_fail("%s", err.msg), 2;
		}
	} else {
#ifdef TT_HAVE_TUI
		int tty = isatty(0) && isatty(1);
#else
		int tty = 0;
#endif
		if (!tty) {
			print_brief(s.d, &s.order, 0);
			training_fini(&s);
			fputs("\ntailtriage: no terminal: give the answers with --answers FILE\n", stderr);
			return 2;
		}
	}
	s.person = default_person(a, o);
	/* Our scratch folder (the drill's data db, its simulated telemetry),
	 * removed whatever happens: on a stop signal the watcher removes it
	 * and ends the process (stop.h), except while the dashboard runs,
	 * which is asked to quit so the terminal is restored first. */
	char *tmp = cli_stop_mkdtemp("tailtriage-train");
	if (tmp == NULL) {
		int e = errno;
		answers_free(a);
		training_fini(&s);
		return cli_fail("cannot create a scratch folder: %s", strerror(e));
	}
	CliStop cs;
	atomic_int quit_tui;
	atomic_init(&quit_tui, 0);
	cli_stop_start(&cs, tmp, "drill train", &quit_tui, NULL);
	TrainingOptions to = {.data_db = o->data_db, .max_traces = o->max_traces, .tmpdir = tmp};
	if (s.d->kind != DRILL_DISCUSSION &&
	    (s.d->n_runs > 0 || s.d->n_files > 0 || s.d->sheet_path))
		fprintf(stderr, "preparing the data of drill %s...\n", s.d->id);
	int rc = training_prepare(&s, &to, &err);
	if (rc) {
		rc = cli_fail("%s", err.msg);
	} else if (a == NULL) {
#ifdef TT_HAVE_TUI
		cli_stop_hard(&cs, 0);
		if (!cli_stop_signal(&cs))
			rc = train_tui(&s, &quit_tui);
		cli_stop_hard(&cs, 1);
#endif
	} else {
		Buf out;
		buf_init(&out);
		rc = training_score(&s, a, "answers", &out, &err);
		if (rc == 0)
			print_wrapped(stdout, buf_str(&out), 0);
		buf_fini(&out);
		if (rc)
			rc = cli_fail("%s", err.msg);
	}
	answers_free(a);
	training_fini(&s);
	cli_remove_tree(tmp);
	free(tmp);
	return cli_stop_finish(&cs, rc);
}

/* ---- replay ---------------------------------------------------------------- */

typedef struct ReplayJob {
	Replay *r;
	const char *db;
	Err err;
	int rc;
	atomic_int stop;
	atomic_int slice, n_slices, done;
	atomic_llong spans;
	int quiet;                /* the TUI owns the terminal */
} ReplayJob;

static void replay_progress(void *ctx, const ReplayProgress *p)
{
	ReplayJob *j = ctx;
	atomic_store(&j->slice, p->slice);
	atomic_store(&j->n_slices, p->n_slices);
	atomic_store(&j->spans, (long long)p->spans_added);
	if (p->done)
		atomic_store(&j->done, 1);
	if (j->quiet)
		return;
	char t[40];
	time_format(p->data_to_ns, t, sizeof t);
	if (p->done)
		fprintf(stderr, "replayed %d slice%s, %lld spans in %.1f s\n", p->slice,
		        p->slice == 1 ? "" : "s", (long long)p->spans_added, p->elapsed_s);
	else
		fprintf(stderr, "slice %d/%d: %lld spans so far, data up to %s\n", p->slice,
		        p->n_slices, (long long)p->spans_added, t);
}

static void *replay_thread(void *arg)
{
	ReplayJob *j = arg;
	j->rc = replay_play(j->r, j->db, &j->err);
	atomic_store(&j->done, 1);
	return NULL;
}

#ifdef TT_HAVE_TUI
static void replay_status(void *ctx, char *buf, size_t n)
{
	ReplayJob *j = ctx;
	if (atomic_load(&j->done))
		snprintf(buf, n, "replay done: %lld spans%s", (long long)atomic_load(&j->spans),
		         j->rc ? " (error)" : "");
	else
		snprintf(buf, n, "replay %d/%d slices, %lld spans", atomic_load(&j->slice),
		         atomic_load(&j->n_slices), (long long)atomic_load(&j->spans));
}
#endif

/* Stop signals during a replay (Ctrl-C, kill, a closed terminal; see
 * stop.h): they ask the replay and the dashboard to stop, and the main
 * thread then removes the temporary folder as usual. While the data is
 * being prepared (simulator runs, not interruptible) the watcher removes
 * the folder itself and ends the process. */
typedef struct ReplayStop {
	CliStop cs;
	const char *tmp;           /* our temporary folder */
	atomic_int quit_tui;
} ReplayStop;

static int drill_replay_run(const Opts *o, Drill *d, const char *db, ReplayJob *j,
                            ReplayStop *rs);

static int drill_replay_cmd(const Opts *o, const char *id)
{
	Err err = {0};
	Drill *d = NULL;
	if (drill_find(catalog_of(o), id, &d, &err))
		return cli_fail("%s", err.msg);
	const char *db = o->db ? o->db : cli_default_db();
	ReplayJob *j = xcalloc(1, sizeof *j);
	j->db = db;
	/* our own temporary folder, removed whatever happens */
	char *tmp = cli_stop_mkdtemp("tailtriage-drill");
	if (tmp == NULL) {
		int e = errno;
		free(j);
		drill_free(d);
		return cli_fail("cannot create a temporary folder: %s", strerror(e));
	}
	ReplayStop rs = {.tmp = tmp};
	atomic_init(&rs.quit_tui, 0);
	cli_stop_start(&rs.cs, tmp, "drill replay", &j->stop, &rs.quit_tui);
	int rc = drill_replay_run(o, d, db, j, &rs);
	cli_remove_tree(tmp);
	free(tmp);
	free(j);
	drill_free(d);
	return cli_stop_finish(&rs.cs, rc);
}

static int drill_replay_run(const Opts *o, Drill *d, const char *db, ReplayJob *j,
                            ReplayStop *rs)
{
	Err err = {0};
	ReplayOptions ro = {.speed = o->speed, .slice_s = o->slice_s, .max_traces = o->max_traces,
	                    .progress = replay_progress, .ctx = j, .stop = &j->stop,
	                    .tmpdir = rs->tmp};
	fprintf(stderr, "preparing the data of drill %s...\n", d->id);
	int prc = replay_prepare(d, &ro, &j->r, &err);
	cli_stop_hard(&rs->cs, 0);
	if (prc == 0 && cli_stop_signal(&rs->cs)) {
		/* the signal came as preparing ended */
		replay_free(j->r);
		return 1;
	}
	if (prc)
		return cli_fail("%s", err.msg);
	ReplayWindows w;
	replay_windows(j->r, &w);
	char a[96], b[96];
	if (w.has_window) {
		time_range_format(w.period.win, a, sizeof a);
		fprintf(stderr, "window %s", a);
		if (w.period.has_baseline) {
			time_range_format(w.period.base, b, sizeof b);
			fprintf(stderr, ", baseline %s", b);
		}
		fputc('\n', stderr);
	}
	int rc = 0;
	if (o->tui) {
#ifdef TT_HAVE_TUI
		if (!isatty(0) || !isatty(1)) {
			replay_free(j->r);
			return cli_fail("--tui needs a terminal");
		}
		/* The TUI opens the database read-only: create it first. */
		Store *st = NULL;
		if (store_open(db, 0, &st, &err)) {
			replay_free(j->r);
			return cli_fail("%s", err.msg);
		}
		store_close(st);
		Model *model = NULL;
		Sheet *sheet = NULL;
		if ((d->model_path && model_load(d->model_path, &model, &err)) ||
		    (d->sheet_path && sheet_load(d->sheet_path, &sheet, &err))) {
			model_free(model);
			replay_free(j->r);
			return cli_fail("%s", err.msg);
		}
		j->quiet = 1;
		pthread_t th;
		if (pthread_create(&th, NULL, replay_thread, j) != 0) {
			model_free(model);
			sheet_free(sheet);
			replay_free(j->r);
			return cli_fail("cannot start the replay thread");
		}
		TuiOptions to = {
			.db_path = db,
			.model = model,
			.period = w.period,
			.status_extra = replay_status,
			.status_ctx = j,
			.quit = &rs->quit_tui,
		};
		to.period.win.to = INT64_MAX; /* follow the data as it arrives */
		/* the Board and the header's budgets follow the data as it arrives */
		Err berr = {0};
		const char **decide = drill_engine_decisions(d);
		CliBoard *board = cli_board_open_drill(db, model, sheet, decide, &berr);
		cli_board_wire(board, &to);
		Err terr = {0};
		int trc = tui_run(&to, &terr);
		atomic_store(&j->stop, 1);
		pthread_join(th, NULL);
		cli_board_close(board);
		free(decide);
		sheet_free(sheet);
		model_free(model);
		if (trc)
			rc = cli_fail("%s", terr.msg);
		else if (j->rc)
			rc = cli_fail("%s", j->err.msg);
#else
		rc = cli_fail("this build has no TUI");
#endif
	} else {
		replay_thread(j);
		if (j->rc)
			rc = cli_fail("%s", j->err.msg);
	}
	replay_free(j->r);
	return rc;
}

/* ---- history ----------------------------------------------------------------- */

/* Copies s for a terminal through the shared sanitizer: the database may
 * have been written by anything. */
static void printable(const char *s, char *out, size_t sz)
{
	san_clean(s ? s : "", out, sz);
}

typedef struct HistCtx {
	int json;
	int shown;
	int n;
} HistCtx;

/* Prints the ids of one list of a stored order ({"hypotheses": [...]}),
 * numbered as they were shown. The text was written by drill_order_json()
 * but comes from a database: it is parsed leniently and sanitized. */
static void print_shown_list(const char *json, const char *key)
{
	char pat[40];
	snprintf(pat, sizeof pat, "\"%s\":[", key);
	const char *p = strstr(json, pat);
	if (p == NULL)
		return;
	p += strlen(pat);
	printf("     %-10s", key);
	int n = 0;
	while (*p == '"') {
		const char *e = strchr(p + 1, '"');
		if (e == NULL)
			break;
		char id[160], clean[480];
		snprintf(id, sizeof id, "%.*s", (int)(e - p - 1) < 159 ? (int)(e - p - 1) : 159, p + 1);
		printable(id, clean, sizeof clean);
		printf(" %d.%s", ++n, clean);
		p = e + 1;
		if (*p == ',')
			p++;
	}
	putchar('\n');
}

static int hist_row(void *ctx, int64_t id, const StoreDrillAttempt *a)
{
	HistCtx *h = ctx;
	h->n++;
	char when[40];
	time_format(a->finished_ms * 1000000, when, sizeof when);
	if (h->json) {
		Buf b;
		buf_init(&b);
		buf_printf(&b, "{\"id\":%lld,\"time\":\"%s\",\"person\":", (long long)id, when);
		buf_add_json_str(&b, a->person, strlen(a->person));
		buf_adds(&b, ",\"drill\":");
		buf_add_json_str(&b, a->drill, strlen(a->drill));
		buf_printf(&b, ",\"drill_version\":%lld,\"drill_digest\":\"%s\",\"mode\":",
		           (long long)a->drill_version, a->drill_digest);
		buf_add_json_str(&b, a->mode, strlen(a->mode));
		buf_printf(&b, ",\"score\":%g,\"max_score\":%g,\"hints_used\":%d,\"seconds\":%.0f,"
		               "\"answers\":%s,\"deductions\":%s",
		           a->score, a->max_score, a->hints_used,
		           (double)(a->finished_ms - a->started_ms) / 1000.0, a->answers_json,
		           a->deductions_json);
		if (a->has_seed)
			buf_printf(&b, ",\"seed\":%lld", (long long)a->seed);
		else
			buf_adds(&b, ",\"seed\":null");
		buf_printf(&b, ",\"shown\":%s}\n", a->shown_json ? a->shown_json : "null");
		fwrite(b.p, 1, b.len, stdout);
		buf_fini(&b);
		return 0;
	}
	if (h->n == 1)
		printf("%-4s %-20s %-16s %-26s %9s  %s\n", "id", "time (UTC)", "person", "drill",
		       "score", "mode");
	when[19] = '\0'; /* seconds are enough here */
	char sc[32], person[64], drill[64], mode[32];
	snprintf(sc, sizeof sc, "%g/%g", a->score, a->max_score);
	printable(a->person, person, sizeof person);
	printable(a->drill, drill, sizeof drill);
	printable(a->mode, mode, sizeof mode);
	printf("%-4lld %-20s %-16.16s %-26.26s %9s  %s%s\n", (long long)id, when, person, drill, sc,
	       mode, a->hints_used ? " +hints" : "");
	size_t n = strlen(a->answers_json) * 3 + 1; /* U+FFFD is 3 bytes */
	char *ans = xmalloc(n);
	san_clean(a->answers_json, ans, n);
	printf("     answers %s\n", ans);
	free(ans);
	if (a->has_seed)
		printf("     choices shown in the order of seed %lld%s\n", (long long)a->seed,
		       h->shown ? ":" : "");
	else
		printf("     choices shown in an unrecorded order\n");
	if (h->shown && a->shown_json) {
		print_shown_list(a->shown_json, "hypotheses");
		print_shown_list(a->shown_json, "checks");
		print_shown_list(a->shown_json, "decisions");
	}
	return 0;
}

static int drill_history_cmd(const Opts *o)
{
	const char *db = o->db ? o->db : cli_default_db();
	if (access(db, F_OK) != 0) {
		printf("no attempts recorded (%s does not exist)\n", db);
		return 0;
	}
	Err err = {0};
	Store *st = NULL;
	if (store_open(db, STORE_READONLY, &st, &err))
		return cli_fail("%s", err.msg);
	HistCtx h = {.json = o->json, .shown = o->shown};
	int rc = store_drill_attempts_scan(st, o->person, o->drill, hist_row, &h, &err);
	store_close(st);
	if (rc)
		return cli_fail("%s", err.msg);
	if (h.n == 0 && !o->json)
		printf("no attempts recorded%s%s in %s\n", o->person ? " for " : "",
		       o->person ? o->person : "", db);
	return 0;
}

/* ---- dispatch ----------------------------------------------------------------- */

int cmd_drill(int argc, char **argv)
{
	if (argc < 2 || cli_is_help(argv[1])) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	const char *sub = argv[1];
	static const char *const subs[] = {"list", "show", "train", "replay", "history"};
	int known = 0;
	for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
		known |= strcmp(sub, subs[i]) == 0;
	if (!known) {
		char word[256];
		san_clean(sub, word, sizeof word);
		Buf m;
		buf_init(&m);
		cli_suggest(&m, sub, subs, (int)(sizeof subs / sizeof subs[0]), "");
		fprintf(stderr, "tailtriage drill: unknown subcommand '%s'%s\n", word, buf_str(&m));
		buf_fini(&m);
		usage(stderr);
		return 2;
	}
	Opts o = {0};
	int rc = parse_opts(argc - 1, argv + 1, &o);
	if (rc)
		return rc < 0 ? 0 : rc;
	int npos = argc - 1 - optind;
	char **pos = argv + 1 + optind;
	int want = strcmp(sub, "list") == 0 || strcmp(sub, "history") == 0 ? 0 : 1;
	if (npos != want) {
		if (want)
			fprintf(stderr, "tailtriage drill %s: give one drill id (see tailtriage drill list)\n",
			        sub);
		else
			fprintf(stderr, "tailtriage drill %s: unexpected argument '%s'\n", sub, pos[0]);
		return 2;
	}
	if (strcmp(sub, "list") == 0)
		return drill_list_cmd(&o);
	if (strcmp(sub, "history") == 0)
		return drill_history_cmd(&o);
	if (strcmp(sub, "show") == 0)
		return drill_show_cmd(&o, pos[0]);
	if (strcmp(sub, "train") == 0)
		return drill_train_cmd(&o, pos[0]);
	return drill_replay_cmd(&o, pos[0]);
}
