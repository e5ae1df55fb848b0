/*
 * test_drills.c - drill files, answers, scoring, replay and history.
 *
 *  - every shipped drill loads, uses only the engine's vocabulary, replays
 *    (quickly) into a database, and scores its own answer key at full marks
 *    with the engine's diagnosis of that data;
 *  - scoring of right, partly right and wrong answers against a fixture
 *    drill and a hand-made engine output: exact points, and every lost
 *    point carries a reason from the drill file or the engine;
 *  - located errors for malformed drills and answers;
 *  - replay writes the database slice by slice, paced by the speed;
 *  - the attempt history keeps time, person, answers and score.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "diagnose.h"
#include "drill.h"
#include "model_json.h"
#include "replay.h"
#include "score.h"
#include "select.h"
#include "sheet.h"
#include "store.h"

#define CATALOG "../drills/catalog"
#define FIX "fixtures/drills"

static char tmpdir[] = "/tmp/tt-drills-XXXXXX";

static int setup_all(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_all(void **state)
{
	(void)state;
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void tmp_path(char *out, size_t sz, const char *name)
{
	snprintf(out, sz, "%s/%s", tmpdir, name);
}

static Drill *load(const char *path)
{
	Err err = {0};
	Drill *d = NULL;
	if (drill_load(path, &d, &err))
		fail_msg("%s", err.msg);
	return d;
}

static Answers *answers(const Drill *d, const char *path)
{
	Err err = {0};
	Answers *a = NULL;
	if (answers_load(path, d, &a, &err))
		fail_msg("%s", err.msg);
	return a;
}

static double lost_total(const Score *s)
{
	double t = 0;
	for (int i = 0; i < s->n_lines; i++)
		t += score_line_lost(&s->lines[i]);
	return t;
}

/* Every line that loses points says why. */
static void assert_explained(const Score *s)
{
	for (int i = 0; i < s->n_lines; i++)
		if (score_line_lost(&s->lines[i]) > 1e-9 && strlen(s->lines[i].reason) < 20)
			fail_msg("line %s/%s lost %g points without a reason", s->lines[i].part,
			         s->lines[i].item, score_line_lost(&s->lines[i]));
}

static const ScoreLine *line(const Score *s, const char *part, const char *item)
{
	for (int i = 0; i < s->n_lines; i++)
		if (strcmp(s->lines[i].part, part) == 0 && strcmp(s->lines[i].item, item) == 0)
			return &s->lines[i];
	fail_msg("no score line %s/%s", part, item);
	return NULL;
}

/* ---- the shipped catalog ------------------------------------------------ */

static void test_catalog_loads(void **state)
{
	(void)state;
	Err err = {0};
	char **files = drill_catalog_files(CATALOG, &err);
	assert_non_null(files);
	char **hyp_ids = diagnose_catalog_ids(NULL, &err);
	assert_non_null(hyp_ids);
	int n = 0, diag = 0, disc = 0;
	for (int i = 0; files[i]; i++, n++) {
		Drill *d = load(files[i]);
		if (drill_check_vocabulary(d, hyp_ids, check_names(), decision_ids(), &err))
			fail_msg("%s", err.msg);
		assert_true(drill_max_score(d) > 0);
		assert_true(d->n_hints > 0);
		assert_non_null(d->debrief);
		assert_true(strlen(d->brief) > 200);
		if (d->kind == DRILL_DIAGNOSIS) {
			diag++;
			assert_int_equal(d->rank, 3);
			assert_true(d->n_runs > 0); /* the dashboard must show the incident */
			assert_int_not_equal(d->window.kind, DRILL_RANGE_NONE);
			assert_int_not_equal(d->baseline.kind, DRILL_RANGE_NONE);
			assert_true(d->n_wrong_decision > 0);
		} else {
			disc++;
			assert_true(d->n_checklist >= 5);
			assert_non_null(d->model_answer);
		}
		drill_free(d);
	}
	assert_int_equal(n, 5);
	assert_int_equal(diag, 4);
	assert_int_equal(disc, 1);
	dx_strv_free(hyp_ids);
	drill_strv_free(files);
}

typedef struct Prog {
	int calls;
	int done;
	int64_t last_spans;
} Prog;

static void count_progress(void *ctx, const ReplayProgress *p)
{
	Prog *g = ctx;
	g->calls++;
	g->done |= p->done;
	assert_true(p->spans_added >= g->last_spans);
	g->last_spans = p->spans_added;
}

/* Each shipped drill: replay its data fast into a fresh database, run the
 * engine on it, score the answer key. */
static void test_catalog_replays_and_scores_key(void **state)
{
	(void)state;
	Err err = {0};
	char **files = drill_catalog_files(CATALOG, &err);
	assert_non_null(files);
	for (int i = 0; files[i]; i++) {
		Drill *d = load(files[i]);
		Diagnosis *dx = NULL;
		if (d->kind == DRILL_DIAGNOSIS) {
			char db[512];
			snprintf(db, sizeof db, "%s/%s.db", tmpdir, d->id);
			Prog g = {0};
			ReplayOptions ro = {.speed = 1e5, .max_traces = 60, .progress = count_progress,
			                    .ctx = &g};
			Replay *r = NULL;
			if (replay_prepare(d, &ro, &r, &err))
				fail_msg("%s: %s", d->id, err.msg);
			ReplayWindows w;
			replay_windows(r, &w);
			assert_true(w.has_window);
			assert_true(w.period.has_baseline);
			assert_true(w.period.win.to > w.period.win.from);
			assert_true(replay_slices(r) >= 2);
			if (replay_play(r, db, &err))
				fail_msg("%s: %s", d->id, err.msg);
			replay_free(r);
			assert_true(g.done);
			assert_true(g.calls >= 3);
			Store *st = NULL;
			assert_int_equal(store_open(db, STORE_READONLY, &st, &err), 0);
			StoreStats ss;
			assert_int_equal(store_stats(st, &ss, &err), 0);
			assert_true(ss.spans > 1000); /* window and baseline, about 17 spans a trace */
			assert_int_equal(ss.spans, g.last_spans);
			Model *m = NULL;
			Sheet *sh = NULL;
			assert_int_equal(model_load(d->model_path, &m, &err), 0);
			if (d->sheet_path)
				assert_int_equal(sheet_load(d->sheet_path, &sh, &err), 0);
			const char **decide = drill_engine_decisions(d);
			DiagnoseOptions o = {.model = m, .period.win = w.period.win, .period.has_baseline = 1,
			                     .period.base = w.period.base, .sheet = sh, .decide = decide};
			if (diagnose_run(st, &o, &dx, &err))
				fail_msg("%s: %s", d->id, err.msg);
			store_close(st);
			sheet_free(sh);
			/* every decision the drill asks about has the engine's verdict,
			 * whatever the engine ranks first; a core node is never
			 * degraded */
			for (int k = 0; decide[k]; k++) {
				const DxDecision *x = diagnosis_decision(dx, decide[k]);
				if (x == NULL)
					fail_msg("%s: the engine does not judge %s", d->id, decide[k]);
				char base[64];
				const char *node = drill_split_id(decide[k], base, sizeof base);
				const ModelNode *mn = NULL;
				for (int j = 0; node && j < m->n_nodes; j++)
					if (m->nodes[j].service && strcmp(m->nodes[j].service, node) == 0)
						mn = &m->nodes[j];
				if (strcmp(base, "degrade") == 0 && mn && mn->core == 1 &&
				    x->verdict != DX_REFUSED)
					fail_msg("%s: degrading core node %s is %s", d->id, node,
					         dx_verdict_name(x->verdict));
			}
			free(decide);
			model_free(m);
			/* the key never asks for something the engine refuses */
			for (int k = 0; k < d->n_key_decisions; k++) {
				const DxDecision *x = diagnosis_decision(dx, d->key_decisions[k]);
				if (x && x->verdict == DX_REFUSED)
					fail_msg("%s: the key's decision %s is refused: %s", d->id, x->id,
					         x->reason);
			}
		}
		Answers *a = score_key_answers(d);
		Score *s = NULL;
		if (score_answers(d, a, dx, &s, &err))
			fail_msg("%s: %s", d->id, err.msg);
		if (fabs(s->total - s->max) > 1e-9) {
			Buf b;
			buf_init(&b);
			score_text(s, d, &b);
			fail_msg("%s: the answer key scores %g of %g\n%s", d->id, s->total, s->max,
			         buf_str(&b));
		}
		assert_true(lost_total(s) < 1e-9);
		score_free(s);
		answers_free(a);
		diagnosis_free(dx);
		drill_free(d);
	}
	drill_strv_free(files);
}

/* ---- scoring against a fixture and a hand-made engine output ------------ */

static DxHypothesis fake_hyp[] = {
	{.id = "class-mix-shift", .node = "enterprise", .score = 6, .rank = 1,
	 .check = "fanout-by-class"},
	{.id = "client-pool-wait", .node = "pricing", .score = 5, .rank = 2,
	 .check = "client-vs-server", .check_why = "ENGINE-WHY spans of the call"},
	{.id = "placement-concentration", .node = "api-04", .score = 4, .rank = 3,
	 .check = "host-concentration"},
	{.id = "dependency-slowdown", .node = "recommendation", .score = 1, .rank = 4,
	 .check = "client-vs-server"},
};

static DxDecision fake_dec[] = {
	{.id = "hold-rollout", .verdict = DX_SUPPORTED, .reason = "ENGINE-HOLD leads to test"},
	{.id = "degrade:pricing", .verdict = DX_REFUSED,
	 .reason = "ENGINE-CORE pricing is core, a response without it is wrong"},
	{.id = "raise-endpoint-concurrency", .verdict = DX_UNSUPPORTED,
	 .reason = "ENGINE-QUEUE queue age 9 ms and occupancy inside budget"},
};

static char *fake_contradicted[] = {"dep.pricing.service.p99_ms"};

static Diagnosis fake_dx(void)
{
	fake_hyp[3].contradicted_by = fake_contradicted;
	fake_hyp[3].n_contradicted_by = 1;
	return (Diagnosis){.hyp = fake_hyp, .n_hyp = 4, .dec = fake_dec, .n_dec = 3};
}

static void test_score_right(void **state)
{
	(void)state;
	Drill *d = load(FIX "/mini.drill.json");
	Answers *a = answers(d, FIX "/key.answers.json");
	assert_string_equal(a->person, "ana");
	Diagnosis dx = fake_dx();
	Score *s = NULL;
	Err err = {0};
	assert_int_equal(score_answers(d, a, &dx, &s, &err), 0);
	assert_true(s->max == 100);
	assert_true(s->total == 100);
	assert_true(lost_total(s) == 0);
	/* each earned line still says why it is right */
	assert_non_null(strstr(line(s, "hypotheses", "rank 1")->reason, "KEY-H1"));
	assert_non_null(strstr(line(s, "decision", "decision")->reason, "KEY-D"));
	score_free(s);
	answers_free(a);
	drill_free(d);
}

static void test_score_partly_right(void **state)
{
	(void)state;
	Drill *d = load(FIX "/mini.drill.json");
	Answers *a = answers(d, FIX "/partial.answers.json");
	Diagnosis dx = fake_dx();
	Score *s = NULL;
	Err err = {0};
	assert_int_equal(score_answers(d, a, &dx, &s, &err), 0);
	/* swapped ranks 1 and 2: half of 20 and half of 15; rank 3 right */
	const ScoreLine *l = line(s, "hypotheses", "rank 1");
	assert_true(l->earned == 10);
	assert_non_null(strstr(l->reason, "you ranked it #2"));
	assert_non_null(strstr(l->reason, "KEY-H1"));
	l = line(s, "hypotheses", "rank 2");
	assert_true(l->earned == 7.5);
	assert_non_null(strstr(l->reason, "KEY-H2"));
	assert_true(line(s, "hypotheses", "rank 3")->earned == 10);
	/* a check that does not discriminate: drill note, key, engine's check */
	l = line(s, "checks", "check for client-pool-wait:pricing");
	assert_true(l->earned == 0);
	assert_string_equal(l->answer, "endpoint-queue");
	assert_non_null(strstr(l->reason, "WRONG-C"));
	assert_non_null(strstr(l->reason, "KEY-C1"));
	assert_non_null(strstr(l->reason, "ENGINE-WHY"));
	assert_true(line(s, "checks", "check for class-mix-shift:enterprise")->earned == 10);
	/* partial decision */
	l = line(s, "decision", "decision");
	assert_true(l->earned == 15);
	assert_non_null(strstr(l->reason, "PARTIAL-D"));
	/* the first hint */
	l = line(s, "penalty", "hint 1");
	assert_true(l->earned == -5);
	assert_true(s->total == 27.5 + 20 + 15 - 5);
	assert_true(fabs(s->max - s->total - lost_total(s)) < 1e-9);
	assert_explained(s);
	score_free(s);
	answers_free(a);
	drill_free(d);
}

static void test_score_wrong(void **state)
{
	(void)state;
	Drill *d = load(FIX "/mini.drill.json");
	Answers *a = answers(d, FIX "/wrong.answers.json");
	Diagnosis dx = fake_dx();
	Score *s = NULL;
	Err err = {0};
	assert_int_equal(score_answers(d, a, &dx, &s, &err), 0);
	const ScoreLine *l = line(s, "hypotheses", "rank 1");
	assert_true(l->earned == 0);
	assert_non_null(strstr(l->reason, "KEY-H1"));
	assert_non_null(strstr(l->reason, "WRONG-H"));
	/* the engine's view of the wrong hypothesis: rank, node, evidence */
	assert_non_null(strstr(l->reason, "ranks dependency-slowdown #4 of 4"));
	assert_non_null(strstr(l->reason, "blames recommendation, not pricing"));
	assert_non_null(strstr(l->reason, "dep.pricing.service.p99_ms"));
	assert_non_null(strstr(line(s, "checks", "check for placement-concentration")->reason,
	                       "not among your hypotheses"));
	/* degrading a core node: the drill's note and the engine's refusal */
	l = line(s, "decision", "decision");
	assert_true(l->earned == 0);
	assert_non_null(strstr(l->reason, "WRONG-D"));
	assert_non_null(strstr(l->reason, "refused"));
	assert_non_null(strstr(l->reason, "ENGINE-CORE"));
	l = line(s, "penalty", "invariant");
	assert_true(l->earned == -5);
	assert_non_null(strstr(l->reason, "breaks an invariant"));
	l = line(s, "penalty", "premature closure");
	assert_true(l->earned == -4);
	assert_non_null(strstr(l->reason, "premature closure"));
	assert_true(line(s, "penalty", "hint 2")->earned == -3);
	assert_true(s->total == 0); /* never below zero */
	assert_explained(s);
	/* the same answers without an engine: the drill's own notes remain */
	Score *s2 = NULL;
	assert_int_equal(score_answers(d, a, NULL, &s2, &err), 0);
	l = line(s2, "decision", "decision");
	assert_non_null(strstr(l->reason, "WRONG-D"));
	assert_null(strstr(l->reason, "ENGINE"));
	assert_explained(s2);
	score_free(s2);
	score_free(s);
	answers_free(a);
	drill_free(d);
}

static void test_score_engine_check_and_local_decision(void **state)
{
	(void)state;
	Drill *d = load(FIX "/mini.drill.json");
	Err err = {0};
	Answers *a = NULL;
	/* client-vs-server is not in the key for client-pool-wait, but it is the
	 * engine's discriminating check for it on this data: accepted */
	const char *txt =
	    "{\"hypotheses\":[\"client-pool-wait:pricing\",\"class-mix-shift:enterprise\","
	    "\"placement-concentration\"],\"checks\":{\"client-pool-wait:pricing\":"
	    "\"client-vs-server\"},\"decision\":\"wait-and-see\"}";
	assert_int_equal(answers_parse("t.json", txt, strlen(txt), d, &a, &err), 0);
	Diagnosis dx = fake_dx();
	Score *s = NULL;
	assert_int_equal(score_answers(d, a, &dx, &s, &err), 0);
	assert_true(line(s, "checks", "check for client-pool-wait:pricing")->earned == 10);
	const ScoreLine *l = line(s, "checks", "check for class-mix-shift:enterprise");
	assert_true(l->earned == 0);
	assert_non_null(strstr(l->reason, "chose no check"));
	l = line(s, "decision", "decision");
	assert_true(l->earned == 0);
	assert_non_null(strstr(l->reason, "WRONG-W"));
	assert_true(s->total == 45 + 10 + 0);
	assert_explained(s);
	/* the canonical JSON of answers reads back the same */
	Buf b;
	buf_init(&b);
	answers_json(a, &b);
	Answers *a2 = NULL;
	assert_int_equal(answers_parse("re.json", buf_str(&b), b.len, d, &a2, &err), 0);
	assert_int_equal(a2->n_hyp, 3);
	assert_string_equal(a2->decision, "wait-and-see");
	assert_string_equal(a2->check[0], "client-vs-server");
	buf_fini(&b);
	answers_free(a2);
	score_free(s);
	answers_free(a);
	drill_free(d);
}

static void test_score_discussion(void **state)
{
	(void)state;
	Drill *d = load(CATALOG "/recommendation-mandatory.drill.json");
	Err err = {0};
	Answers *a = NULL;
	/* covers class objectives and hedging, nothing else */
	const char *txt = "{\"answer\": [\"Premium and enterprise get their own population and"
	                  " objective per class.\", \"Hedging only with independent replicas.\"]}";
	assert_int_equal(answers_parse("a.json", txt, strlen(txt), d, &a, &err), 0);
	Score *s = NULL;
	assert_int_equal(score_answers(d, a, NULL, &s, &err), 0);
	assert_true(line(s, "checklist", "class-objectives")->earned == 15);
	assert_true(line(s, "checklist", "hedging")->earned == 10);
	const ScoreLine *l = line(s, "checklist", "overload-behaviour");
	assert_true(l->earned == 0);
	assert_non_null(strstr(l->reason, "does not cover"));
	assert_true(s->total == 25);
	assert_false(s->self_assessed);
	assert_explained(s);
	score_free(s);
	answers_free(a);
	/* self-assessed */
	txt = "{\"self_assessed\": [\"admission-partition\", \"coalescing\"]}";
	assert_int_equal(answers_parse("b.json", txt, strlen(txt), d, &a, &err), 0);
	assert_int_equal(score_answers(d, a, NULL, &s, &err), 0);
	assert_true(s->self_assessed);
	assert_true(s->total == 20);
	score_free(s);
	answers_free(a);
	/* a diagnosis answer does not fit a discussion drill */
	txt = "{\"hypotheses\": []}";
	assert_int_not_equal(answers_parse("c.json", txt, strlen(txt), d, &a, &err), 0);
	assert_non_null(strstr(err.msg, "c.json:1:"));
	assert_non_null(strstr(err.msg, "discussion"));
	drill_free(d);
}

/* ---- located errors ----------------------------------------------------- */

static void expect_drill_error(const char *text, const char *where, const char *what)
{
	Err err = {0};
	Drill *d = NULL;
	int rc = drill_parse("d.json", FIX, text, strlen(text), &d, &err);
	if (rc == 0) {
		drill_free(d);
		fail_msg("accepted: %s", text);
	}
	assert_null(d);
	if (strstr(err.msg, where) == NULL || strstr(err.msg, what) == NULL)
		fail_msg("error \"%s\" lacks \"%s\" or \"%s\"", err.msg, where, what);
}

/* A valid minimal drill with one substitution applied. */
static char *mini_with(const char *from, const char *to)
{
	FILE *f = fopen(FIX "/mini.drill.json", "rb");
	assert_non_null(f);
	Buf b;
	buf_init(&b);
	char chunk[4096];
	size_t n;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		buf_add(&b, chunk, n);
	fclose(f);
	const char *p = strstr(buf_str(&b), from);
	if (p == NULL)
		fail_msg("fixture lacks \"%s\"", from);
	Buf o;
	buf_init(&o);
	buf_add(&o, b.p, (size_t)(p - b.p));
	buf_adds(&o, to);
	buf_adds(&o, p + strlen(from));
	buf_fini(&b);
	return o.p;
}

/* Every engine decision a drill offers reads as the engine words it
 * (decision_describe()), so the trainee chooses between the actions the
 * Board judges, in neutral words; a decision of the drill's own keeps
 * its text. The engine's add-capacity covers both the pool toward the node
 * and the servers behind it, as its verdict's reason does. */
static void test_engine_decision_wording(void **state)
{
	(void)state;
	char w[300];
	assert_int_equal(decision_describe("add-capacity:pricing", w, sizeof w), 0);
	assert_non_null(strstr(w, "a bigger pool toward it"));
	assert_non_null(strstr(w, "more pricing servers behind it"));
	assert_int_equal(decision_describe("hold-rollout", w, sizeof w), 0);
	assert_int_equal(decision_describe("degrade", w, sizeof w), -1);
	assert_int_equal(decision_describe("hold-rollout:x", w, sizeof w), -1);
	assert_int_equal(decision_describe("wait-and-see", w, sizeof w), -1);
	Err err = {0};
	char **files = drill_catalog_files(CATALOG, &err);
	assert_non_null(files);
	int engine = 0;
	for (int i = 0; files[i]; i++) {
		Drill *d = load(files[i]);
		for (int k = 0; k < d->n_decision_choices; k++) {
			const DrillChoice *c = &d->decision_choices[k];
			int local = 0;
			for (int j = 0; j < d->n_local_decisions; j++)
				local |= strcmp(d->local_decisions[j], c->id) == 0;
			if (local) {
				assert_non_null(c->text);
				continue;
			}
			assert_int_equal(decision_describe(c->id, w, sizeof w), 0);
			assert_non_null(c->text);
			assert_string_equal(c->text, w);
			engine++;
		}
		drill_free(d);
	}
	drill_strv_free(files);
	assert_true(engine >= 15);
	/* the fixture names hold-rollout without a text: it gets the engine's */
	Drill *d = load(FIX "/mini.drill.json");
	int i = 0;
	while (i < d->n_decision_choices && strcmp(d->decision_choices[i].id, "hold-rollout") != 0)
		i++;
	assert_true(i < d->n_decision_choices);
	assert_string_equal(d->decision_choices[i].text, "hold or restrict the rollout");
	drill_free(d);
}

static void test_drill_errors(void **state)
{
	(void)state;
	char *t;
	expect_drill_error("{\"drill\": \"x\",}", "d.json:1:", "");
	expect_drill_error("[1]", "d.json:1:1:", "must be an object");
	t = mini_with("\"summary\"", "\"sumary\"");
	expect_drill_error(t, "d.json:6:", "unknown key \"sumary\"");
	free(t);
	t = mini_with("{\"id\": \"placement-concentration\", \"why\"",
	              "{\"id\": \"retry-amplification:pricing\", \"why\"");
	expect_drill_error(t, "d.json:33:", "not one of the offered choices");
	free(t);
	t = mini_with("\"points\": [20, 15, 10]", "\"points\": [20, 15]");
	expect_drill_error(t, "d.json:", "the question ranks 3");
	free(t);
	t = mini_with("\"points\": 15, \"why\": \"PARTIAL", "\"points\": 30, \"why\": \"PARTIAL");
	expect_drill_error(t, "d.json:", "not less than the full 25");
	free(t);
	t = mini_with("\"window\": {\"run\": \"tiny\"", "\"window\": {\"run\": \"huge\"");
	expect_drill_error(t, "d.json:16:23:", "no run named \"huge\"");
	free(t);
	t = mini_with("\"kind\": \"diagnosis\"", "\"kind\": \"quiz\"");
	expect_drill_error(t, "d.json:5:11:", "kind must be");
	free(t);
	t = mini_with("\"hold-rollout\", \"add-capacity:pricing\"", "\"hold-rollout\", \"hold-rollout\"");
	expect_drill_error(t, "d.json:", "listed twice");
	free(t);
	t = mini_with("\"Second paragraph.\"", "\"Bell\\u0007\"");
	expect_drill_error(t, "d.json:7:", "control characters");
	free(t);
	t = mini_with("\"client-pool-wait:pricing\": {\"accept\": [\"pool-by-class\"]",
	              "\"client-pool-wait:pricing\": {\"accept\": [\"pool-by-klass\"]");
	expect_drill_error(t, "d.json:", "accepted check \"pool-by-klass\" is not one of");
	free(t);
	/* an engine decision is worded by the engine: a drill's own wording
	 * of it (which could hint at the answer, or mean another action) is
	 * refused where it stands */
	t = mini_with("\"hold-rollout\", \"add-capacity:pricing\"",
	              "{\"id\": \"hold-rollout\", \"text\": \"hold while pricing is tested\"}, "
	              "\"add-capacity:pricing\"");
	expect_drill_error(t, "d.json:25:", "its wording is the engine's ('hold or restrict the rollout')");
	free(t);
	/* a drill whose id does not match its file name */
	char path[512];
	tmp_path(path, sizeof path, "other.drill.json");
	t = mini_with("\"drill\": \"mini\"", "\"drill\": \"mini\"");
	FILE *f = fopen(path, "wb");
	fputs(t, f);
	fclose(f);
	free(t);
	Err err = {0};
	Drill *d = NULL;
	assert_int_not_equal(drill_load(path, &d, &err), 0);
	assert_non_null(strstr(err.msg, "does not match the file name"));
	/* unknown vocabulary is caught against the engine's lists */
	d = load(FIX "/mini.drill.json");
	const char *checks[] = {"pool-by-class", NULL};
	assert_int_not_equal(drill_check_vocabulary(d, NULL, checks, NULL, &err), 0);
	assert_non_null(strstr(err.msg, "fanout-by-class"));
	drill_free(d);
	/* a simulator parameter the simulator does not know */
	t = mini_with("\"hosts\": 4", "\"hostz\": 4");
	assert_int_equal(drill_parse("d.json", FIX, t, strlen(t), &d, &err), 0);
	free(t);
	Replay *r = NULL;
	ReplayOptions ro = {.speed = -1};
	assert_int_not_equal(replay_prepare(d, &ro, &r, &err), 0);
	assert_non_null(strstr(err.msg, "run tiny"));
	assert_non_null(strstr(err.msg, "hostz"));
	drill_free(d);
}

static void test_answer_errors(void **state)
{
	(void)state;
	Drill *d = load(FIX "/mini.drill.json");
	Err err = {0};
	Answers *a = NULL;
	assert_int_not_equal(answers_load(FIX "/bad.answers.json", d, &a, &err), 0);
	assert_null(a);
	assert_non_null(strstr(err.msg, "bad.answers.json:2:17:"));
	assert_non_null(strstr(err.msg, "client-pool-wait:pricng"));
	assert_non_null(strstr(err.msg, "class-mix-shift:enterprise")); /* lists the choices */
	struct {
		const char *text, *want;
	} cases[] = {
		{"{\"hypotheses\": [\"cpu-saturation\", \"cpu-saturation\"]}", "ranked twice"},
		{"{\"hypotheses\": [\"cpu-saturation\", \"client-pool-wait:pricing\","
		 " \"placement-concentration\", \"class-mix-shift:enterprise\"]}", "at most 3"},
		{"{\"hypotheses\": [\"cpu-saturation\"], \"checks\": {\"placement-concentration\":"
		 " \"host-concentration\"}}", "not one of your ranked"},
		{"{\"decision\": \"panic\"}", "not one of this drill's choices"},
		{"{\"hints_used\": 3}", "from 0 to 2"},
		{"{\"answer\": \"text\"}", "not a discussion answer"},
		{"{\"hypothesis\": []}", "unknown key"},
		{"{\"person\": \"\"}", "1 to 128"},
		{"not json", "a.json:1:1:"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		a = NULL;
		int rc = answers_parse("a.json", cases[i].text, strlen(cases[i].text), d, &a, &err);
		if (rc == 0 || strstr(err.msg, cases[i].want) == NULL || strncmp(err.msg, "a.json:", 7))
			fail_msg("case %zu: rc %d, \"%s\" (want \"%s\")", i, rc, err.msg, cases[i].want);
		assert_null(a);
	}
	drill_free(d);
}

/* ---- replay pacing and growth ------------------------------------------- */

typedef struct Growth {
	const char *db;
	int64_t spans[256];
	double at[256];
	int n;
	int stop_after;           /* set *stop after this many slices, 0 never */
	atomic_int *stop;
} Growth;

static void growth_progress(void *ctx, const ReplayProgress *p)
{
	Growth *g = ctx;
	Store *st = NULL;
	Err err = {0};
	assert_int_equal(store_open(g->db, STORE_READONLY, &st, &err), 0);
	StoreStats ss;
	assert_int_equal(store_stats(st, &ss, &err), 0);
	store_close(st);
	if (g->n < 256) {
		g->spans[g->n] = ss.spans;
		g->at[g->n] = p->elapsed_s;
		g->n++;
	}
	if (g->stop_after && p->slice >= g->stop_after)
		atomic_store(g->stop, 1);
}

static void test_replay_grows_over_time(void **state)
{
	(void)state;
	Drill *d = load(FIX "/mini.drill.json");
	char db[512];
	tmp_path(db, sizeof db, "growth.db");
	Growth g = {.db = db};
	/* 20 s of data in 2 s slices at 40x: about 0.05 s between slices */
	ReplayOptions ro = {.progress = growth_progress, .ctx = &g};
	Replay *r = NULL;
	Err err = {0};
	assert_int_equal(replay_prepare(d, &ro, &r, &err), 0);
	assert_int_equal(replay_slices(r), 10);
	assert_int_equal(replay_play(r, db, &err), 0);
	replay_free(r);
	assert_int_equal(g.n, 11); /* after the prelude and after each slice */
	assert_true(g.spans[0] > 0); /* the baseline arrives first, in one go */
	int rises = 0;
	for (int i = 1; i < g.n; i++) {
		assert_true(g.spans[i] >= g.spans[i - 1]);
		rises += g.spans[i] > g.spans[i - 1];
	}
	assert_true(rises >= 8);
	assert_true(g.spans[g.n - 1] > g.spans[0] + g.spans[0] / 2);
	/* paced: slice k is due k * 2 s / 40 after the stream starts */
	assert_true(g.at[g.n - 1] >= 0.40);
	assert_true(g.at[g.n - 1] < 5);

	/* the same replay again adds nothing (re-imports are idempotent) */
	Growth g2 = {.db = db};
	ReplayOptions fast = {.speed = -1, .progress = growth_progress, .ctx = &g2};
	assert_int_equal(replay_prepare(d, &fast, &r, &err), 0);
	assert_int_equal(replay_play(r, db, &err), 0);
	replay_free(r);
	assert_true(g2.spans[g2.n - 1] == g.spans[g.n - 1]);

	/* a stop request ends the replay early, keeping what was imported */
	char db2[512];
	tmp_path(db2, sizeof db2, "stopped.db");
	atomic_int stop = 0;
	Growth g3 = {.db = db2, .stop_after = 3, .stop = &stop};
	ReplayOptions st = {.progress = growth_progress, .ctx = &g3, .stop = &stop};
	assert_int_equal(replay_prepare(d, &st, &r, &err), 0);
	assert_int_equal(replay_play(r, db2, &err), 0);
	replay_free(r);
	assert_true(g3.spans[g3.n - 1] < g.spans[g.n - 1]);
	assert_true(g3.n <= 5);
	drill_free(d);
}

/* ---- history -------------------------------------------------------------- */

typedef struct Hist {
	int n;
	char person[4][32];
	char answers[4][256];
	double score[4];
	int64_t at[4];
	int has_seed[4];
	int64_t seed[4];
	char shown[4][256];
} Hist;

static int hist_cb(void *ctx, int64_t id, const StoreDrillAttempt *a)
{
	Hist *h = ctx;
	(void)id;
	if (h->n < 4) {
		snprintf(h->person[h->n], 32, "%s", a->person);
		snprintf(h->answers[h->n], 256, "%s", a->answers_json);
		h->score[h->n] = a->score;
		h->at[h->n] = a->finished_ms;
		h->has_seed[h->n] = a->has_seed;
		h->seed[h->n] = a->seed;
		snprintf(h->shown[h->n], 256, "%s", a->shown_json ? a->shown_json : "(null)");
	}
	h->n++;
	return 0;
}

static void test_history(void **state)
{
	(void)state;
	char db[512];
	tmp_path(db, sizeof db, "history.db");
	Store *st = NULL;
	Err err = {0};
	assert_int_equal(store_open(db, 0, &st, &err), 0);
	StoreDrillAttempt a = {.drill = "mini", .drill_version = 2, .drill_digest = "00ff",
	                       .person = "ana", .mode = "answers", .started_ms = 1000,
	                       .finished_ms = 2000, .answers_json = "{\"decision\":\"hold-rollout\"}",
	                       .score = 57.5, .max_score = 100, .hints_used = 1,
	                       .deductions_json = "[]", .has_seed = 1, .seed = 4294967295,
	                       .shown_json = "{\"seed\":4294967295,\"hypotheses\":[\"a\"]}"};
	int64_t id1 = 0, id2 = 0;
	assert_int_equal(store_drill_attempt_add(st, &a, &id1, &err), 0);
	a.has_seed = 0; /* answers prepared elsewhere: the order is not known */
	a.shown_json = NULL;
	a.person = "bob";
	a.finished_ms = 3000;
	a.score = 100;
	a.answers_json = "{\"decision\":\"degrade:pricing\"}";
	assert_int_equal(store_drill_attempt_add(st, &a, &id2, &err), 0);
	assert_true(id2 > id1);
	a.person = NULL;
	assert_int_not_equal(store_drill_attempt_add(st, &a, NULL, &err), 0);
	store_close(st);

	/* reopened (migrations already applied): both attempts, oldest first */
	assert_int_equal(store_open(db, 0, &st, &err), 0);
	Hist h = {0};
	assert_int_equal(store_drill_attempts_scan(st, NULL, NULL, hist_cb, &h, &err), 0);
	assert_int_equal(h.n, 2);
	assert_string_equal(h.person[0], "ana");
	assert_string_equal(h.person[1], "bob");
	assert_true(h.score[0] == 57.5);
	assert_true(h.at[1] == 3000);
	assert_string_equal(h.answers[1], "{\"decision\":\"degrade:pricing\"}");
	/* the seed and the order shown come back; an unknown order stays unknown */
	assert_true(h.has_seed[0]);
	assert_true(h.seed[0] == 4294967295);
	assert_string_equal(h.shown[0], "{\"seed\":4294967295,\"hypotheses\":[\"a\"]}");
	assert_false(h.has_seed[1]);
	assert_string_equal(h.shown[1], "(null)");
	memset(&h, 0, sizeof h);
	assert_int_equal(store_drill_attempts_scan(st, "bob", NULL, hist_cb, &h, &err), 0);
	assert_int_equal(h.n, 1);
	memset(&h, 0, sizeof h);
	assert_int_equal(store_drill_attempts_scan(st, NULL, "other", hist_cb, &h, &err), 0);
	assert_int_equal(h.n, 0);
	store_close(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_catalog_loads),
		cmocka_unit_test(test_catalog_replays_and_scores_key),
		cmocka_unit_test(test_score_right),
		cmocka_unit_test(test_score_partly_right),
		cmocka_unit_test(test_score_wrong),
		cmocka_unit_test(test_score_engine_check_and_local_decision),
		cmocka_unit_test(test_score_discussion),
		cmocka_unit_test(test_drill_errors),
		cmocka_unit_test(test_engine_decision_wording),
		cmocka_unit_test(test_answer_errors),
		cmocka_unit_test(test_replay_grows_over_time),
		cmocka_unit_test(test_history),
	};
	return tt_run_group_tests(tests, setup_all, teardown_all);
}
