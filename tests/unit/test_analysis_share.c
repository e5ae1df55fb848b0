/*
 * test_analysis_share.c - one analysis, shared: the evidence and the
 * background diagnosis read the dashboard's analysis instead of computing
 * their own, and get the same answers.
 *
 * Data: the simulator's mercury endpoint with a dependency slowing down
 * in the incident phase, through the importer into a fresh database (as
 * test_diagnose does). Checked:
 *  - evidence_compute() with a borrowed analysis gives every value,
 *    interval, count, unit and provenance line, every fact and list, that
 *    it gives when it computes the analysis itself (window + baseline, and
 *    an open window without a baseline); so does it with the analysis and
 *    request sets of evidence_analysis_run() (one read of the spans), and
 *    then it reads no spans for requests of its own;
 *  - a DxLive handed the caller's analysis diagnoses with it (counted:
 *    no second analysis), while the caller drops its own hold at once,
 *    and ranks exactly as a diagnosis computed from scratch; an analysis
 *    of one class, or of another skew tolerance, is not reused;
 *  - a uniform sample of the requests (evidence_analysis_run's bound):
 *    nothing changes when the bound holds every request; below it, the
 *    sample's size, the range's true count and rate, the critical path of
 *    every slow request (the same as from all requests), and the same
 *    leading hypothesis;
 *  - a read split over two connections (every span, and a sample) gives
 *    the report and the evidence a read in one part gives, byte for byte;
 *  - analysis_ref()/analysis_free() holds and analysis_answers().
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

#include "analysis.h"
#include "diagnose.h"
#include "dx_live.h"
#include "evidence.h"
#include "import.h"
#include "live.h"
#include "model_json.h"
#include "report.h"
#include "sim.h"
#include "sim_gen.h"
#include "trace_feed.h"

#define MODEL_PATH "../models/mercury-home.model.json"

typedef SimGen Gen;

static const char *const SETS[] = {
    "traces=400", "window-s=60", "warmup-s=20", "hosts=8", "slowdown-dep=inventory",
    "slowdown-factor=3", "slowdown-start-s=0", "slowdown-ramp-s=1", "slowdown-hold-s=100",
    "incident=single-slowdown", NULL};

static void gen(Gen *g)
{
	sim_gen(g, SETS, NULL);
}

static void gen_free(Gen *g)
{
	sim_gen_free(g);
}

static Model *load_model(void)
{
	Model *m = NULL;
	Err err = {0};
	if (model_load(MODEL_PATH, &m, &err))
		fail_msg("%s", err.msg);
	return m;
}

/* ---- comparing evidence ----------------------------------------------------- */

static int same_double(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

static void same_list(char **a, int na, char **b, int nb, const char *what)
{
	if (na != nb)
		fail_msg("%s: %d entries against %d", what, na, nb);
	for (int i = 0; i < na; i++)
		if (strcmp(a[i], b[i]) != 0)
			fail_msg("%s[%d]: %s against %s", what, i, a[i], b[i]);
}

/* Every value, interval, count, unit, source and provenance, every fact
 * and every list: x (borrowed analysis) against y (computed). */
static void same_evidence(const Evidence *x, const Evidence *y)
{
	assert_true(x->n > 50); /* a real evidence set, not two empty ones */
	if (x->n != y->n)
		fail_msg("%d values with the borrowed analysis, %d without", x->n, y->n);
	for (int i = 0; i < x->n; i++) {
		const EvValue *a = &x->v[i], *b = &y->v[i];
		if (strcmp(a->name, b->name) != 0)
			fail_msg("value %d: %s against %s", i, a->name, b->name);
		if (!same_double(a->value, b->value) || a->missing != b->missing ||
		    strcmp(a->unit, b->unit) != 0 || a->source != b->source || a->qkind != b->qkind ||
		    a->n != b->n || a->small_sample != b->small_sample || a->has_ci != b->has_ci ||
		    !same_double(a->lo, b->lo) || !same_double(a->hi, b->hi))
			fail_msg("%s: %.17g [%g, %g] n=%lld against %.17g [%g, %g] n=%lld", a->name, a->value,
			         a->lo, a->hi, (long long)a->n, b->value, b->lo, b->hi, (long long)b->n);
		if (strcmp(a->provenance ? a->provenance : "", b->provenance ? b->provenance : "") != 0)
			fail_msg("%s: provenance '%s' against '%s'", a->name, a->provenance, b->provenance);
	}
	if (x->n_facts != y->n_facts)
		fail_msg("%d facts against %d", x->n_facts, y->n_facts);
	for (int i = 0; i < x->n_facts; i++) {
		assert_string_equal(x->facts[i].name, y->facts[i].name);
		assert_string_equal(x->facts[i].value, y->facts[i].value);
	}
	same_list(x->deps, x->n_deps, y->deps, y->n_deps, "deps");
	same_list(x->classes, x->n_classes, y->classes, y->n_classes, "classes");
	same_list(x->hosts, x->n_hosts, y->hosts, y->n_hosts, "hosts");
	assert_string_equal(x->root_service ? x->root_service : "",
	                    y->root_service ? y->root_service : "");
	assert_int_equal(x->has_spans, y->has_spans);
	assert_int_equal(x->has_baseline, y->has_baseline);
}

/* Evidence both ways for one set of options. */
static void evidence_both_ways(Gen *g, const Model *m, const EvidenceOptions *eo, int expect_base)
{
	Err err = {0};
	AnalysisOptions ao = {.period = eo->period, .model = m, .skew = eo->skew};
	Analysis *a = NULL;
	if (analysis_run(g->st, &ao, &a, &err))
		fail_msg("%s", err.msg);
	assert_true(a->pop[POP_WINDOW].requests > 100);
	EvidenceOptions with = *eo, without = *eo;
	with.analysis = a;
	without.analysis = NULL;
	Evidence *x = NULL, *y = NULL;
	if (evidence_compute(g->st, &with, &x, &err) || evidence_compute(g->st, &without, &y, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(x->has_baseline, expect_base);
	same_evidence(x, y);
	/* the analysis and its request sets read in one pass over the spans
	 * (what report and diagnose do): the same evidence, and no request
	 * pass of the evidence's own */
	Analysis *a1 = NULL;
	EvRequestSet *sets[2] = {NULL, NULL};
	if (evidence_analysis_run(g->st, &ao, 0, &a1, sets, &err))
		fail_msg("%s", err.msg);
	assert_true(sets[0] != NULL && sets[0]->n == a1->pop[POP_WINDOW].requests);
	assert_true((sets[1] != NULL) == expect_base);
	EvidenceOptions shared = *eo;
	shared.analysis = a1;
	shared.requests[0] = sets[0];
	shared.requests[1] = sets[1];
	int64_t reads = evidence_request_reads();
	Evidence *z = NULL;
	if (evidence_compute(g->st, &shared, &z, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(evidence_request_reads(), reads);
	same_evidence(z, y);
	evidence_free(z);
	evidence_requests_free(sets[0]);
	evidence_requests_free(sets[1]);
	analysis_free(a1);
	evidence_free(x);
	evidence_free(y);
	analysis_free(a);
}

static void test_evidence_borrowed_equals_computed(void **state)
{
	(void)state;
	Model *m = load_model();
	Gen g;
	gen(&g);
	EvidenceOptions eo = {.model = m, .period.win = g.period.win,
	                      .period.has_baseline = 1, .period.base = g.period.base};
	evidence_both_ways(&g, m, &eo, 1);
	/* the dashboard's default: all data, no baseline, a skew tolerance set */
	EvidenceOptions open = {.model = m, .period.win = TIME_RANGE_ALL,
	                        .skew = {.set = 1, .abs_ns = 200000, .frac = 0.02}};
	evidence_both_ways(&g, m, &open, 0);
	/* without a model */
	EvidenceOptions bare = eo;
	bare.model = NULL;
	evidence_both_ways(&g, NULL, &bare, 1);
	gen_free(&g);
	model_free(m);
}

/* The dashboard's analysis (analysis/live.c) carries the request sets its
 * read built: the evidence computed with it equals the evidence computed
 * from scratch, and it reads no spans for requests of its own. */
static void test_live_analysis_carries_requests(void **state)
{
	(void)state;
	Model *m = load_model();
	Gen g;
	gen(&g);
	Err err = {0};
	LiveSession *ls = NULL;
	if (live_open(g.db, &ls, &err))
		fail_msg("%s", err.msg);
	AnalysisOptions ao = {.period = g.period, .model = m};
	live_request(ls, &ao, 1);
	LiveResult r = {0};
	for (int i = 0; i < 6000; i++) { /* the exact answer: 60 s at most */
		LiveResult q;
		if (live_take(ls, &q)) {
			live_result_free(&r);
			r = q;
			if (r.a && !r.a->approx)
				break;
		}
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	assert_int_equal(r.rc, 0);
	assert_non_null(r.a);
	assert_false(r.a->approx);
	assert_non_null(evidence_attached_requests(r.a, POP_WINDOW));
	assert_non_null(evidence_attached_requests(r.a, POP_BASELINE));
	EvidenceOptions with = {.model = m, .period = g.period, .analysis = r.a};
	EvidenceOptions without = {.model = m, .period = g.period};
	Evidence *x = NULL, *y = NULL;
	int64_t reads = evidence_request_reads();
	if (evidence_compute(g.st, &with, &x, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(evidence_request_reads(), reads);
	if (evidence_compute(g.st, &without, &y, &err))
		fail_msg("%s", err.msg);
	same_evidence(x, y);
	evidence_free(x);
	evidence_free(y);
	live_result_free(&r);
	live_close(ls);
	gen_free(&g);
	model_free(m);
}

/* ---- a uniform sample of the requests ---------------------------------------- */

static void same_ranking(const Diagnosis *x, const Diagnosis *y)
{
	assert_int_equal(x->n_hyp, y->n_hyp);
	for (int i = 0; i < x->n_hyp; i++) {
		assert_string_equal(x->hyp[i].id, y->hyp[i].id);
		assert_string_equal(x->hyp[i].node ? x->hyp[i].node : "",
		                    y->hyp[i].node ? y->hyp[i].node : "");
		assert_true(same_double(x->hyp[i].score, y->hyp[i].score));
		assert_int_equal(x->hyp[i].rank, y->hyp[i].rank);
	}
}


static const EvValue *must_get(const Evidence *e, const char *name)
{
	const EvValue *v = evidence_get(e, name);
	if (v == NULL || v->missing)
		fail_msg("%s: missing", name);
	return v;
}

/* With a bound at or above the requests, the same evidence as reading them
 * all; below it, that many requests per population spread over the whole
 * range, the range's true count and rate, the sample's size in the
 * evidence, and the same leading hypothesis as the whole data. */
static void test_sampled_reading(void **state)
{
	(void)state;
	Model *m = load_model();
	Gen g;
	gen(&g);
	Err err = {0};
	AnalysisOptions ao = {.period = g.period, .model = m};
	Analysis *full = NULL, *same = NULL, *half = NULL;
	EvRequestSet *fs[2], *ss[2], *hs[2];
	if (evidence_analysis_run(g.st, &ao, 0, &full, fs, &err))
		fail_msg("%s", err.msg);
	int64_t nw = full->pop[POP_WINDOW].requests, nb = full->pop[POP_BASELINE].requests;
	assert_true(nw > 300 && nb > 300);
	if (evidence_analysis_run(g.st, &ao, nw > nb ? nw : nb, &same, ss, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(same->pop[POP_WINDOW].sample_of, 0);
	assert_int_equal(same->pop[POP_BASELINE].sample_of, 0);
	DiagnoseOptions o = {.model = m, .period = g.period, .analysis = full,
	                     .requests = {fs[0], fs[1]}};
	Diagnosis *d_full = NULL, *d_same = NULL, *d_half = NULL;
	if (diagnose_run(g.st, &o, &d_full, &err))
		fail_msg("%s", err.msg);
	o.analysis = same;
	o.requests[0] = ss[0];
	o.requests[1] = ss[1];
	if (diagnose_run(g.st, &o, &d_same, &err))
		fail_msg("%s", err.msg);
	same_evidence(d_same->evidence, d_full->evidence);
	same_ranking(d_same, d_full);

	int64_t k = (nw < nb ? nw : nb) * 2 / 3;
	if (evidence_analysis_run(g.st, &ao, k, &half, hs, &err))
		fail_msg("%s", err.msg);
	for (int p = 0; p < 2; p++) {
		const PopSummary *h = &half->pop[p], *f = &full->pop[p];
		assert_int_equal(h->requests, k);
		assert_int_equal(h->sample_of, f->requests);
		assert_int_equal(hs[p]->n, k);
		assert_true(h->rate_rps == f->rate_rps); /* the range's rate, not the sample's */
		/* evenly spaced: the sample reaches both ends of the range */
		TimeRange r = p ? g.period.base : g.period.win;
		double len = (double)(r.to - r.from);
		assert_true((double)(hs[p]->first_ns - r.from) < 0.05 * len);
		assert_true((double)(r.to - hs[p]->last_ns) < 0.05 * len);
	}
	/* the critical path is every slow request's, not the sample's */
	for (int p = 0; p < 2; p++) {
		const PopSummary *h = &half->pop[p], *f = &full->pop[p];
		assert_int_equal(h->slow_requests, f->slow_requests);
		assert_true(h->slow_threshold_ms == f->slow_threshold_ms);
		assert_true(fabs(h->crit_total_ms - f->crit_total_ms) < 1e-6 * f->crit_total_ms);
		int checked = 0;
		for (int i = 0; i < full->n_nodes; i++) {
			const DagNode *fn = &full->nodes[i];
			if (fn->crit[p].share < 0.05)
				continue;
			const DagNode *hn = NULL;
			for (int j = 0; j < half->n_nodes && hn == NULL; j++)
				if (strcmp(half->nodes[j].label, fn->label) == 0 &&
				    half->nodes[j].depth == fn->depth)
					hn = &half->nodes[j];
			assert_non_null(hn);
			if (fabs(hn->crit[p].share - fn->crit[p].share) > 1e-9)
				fail_msg("%s: critical-path share %g sampled, %g whole", fn->label,
				         hn->crit[p].share, fn->crit[p].share);
			checked++;
		}
		assert_true(checked >= 2);
	}
	o.analysis = half;
	o.requests[0] = hs[0];
	o.requests[1] = hs[1];
	if (diagnose_run(g.st, &o, &d_half, &err))
		fail_msg("%s", err.msg);
	assert_true(must_get(d_half->evidence, "ingress.sample_of")->value == (double)nw);
	assert_true(must_get(d_half->evidence, "ingress.requests")->value == (double)k);
	assert_null(evidence_get(d_full->evidence, "ingress.sample_of"));
	assert_string_equal(d_half->hyp[0].id, d_full->hyp[0].id);
	assert_string_equal(d_half->hyp[0].node ? d_half->hyp[0].node : "",
	                    d_full->hyp[0].node ? d_full->hyp[0].node : "");
	diagnosis_free(d_full);
	diagnosis_free(d_same);
	diagnosis_free(d_half);
	for (int p = 0; p < 2; p++) {
		evidence_requests_free(fs[p]);
		evidence_requests_free(ss[p]);
		evidence_requests_free(hs[p]);
	}
	analysis_free(full);
	analysis_free(same);
	analysis_free(half);
	gen_free(&g);
	model_free(m);
}

/* ---- the background diagnosis ---------------------------------------------- */

/* Asks l for k with a and waits for that very diagnosis. */
static const Diagnosis *wait_for(DxLive *l, const DxLiveKey *k, const Analysis *a)
{
	const Diagnosis *d = NULL;
	int fresh = 0;
	for (int i = 0; i < 6000; i++) {  /* 60 s: an ASan build on a busy machine */
		d = dx_live_get(l, k, a, &fresh);
		if (d && fresh)
			return d;
		if (!dx_live_busy(l) && dx_live_error(l)[0])
			fail_msg("diagnosis failed: %s", dx_live_error(l));
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	fail_msg("no diagnosis within 60 s");
	return NULL;
}

static void test_dx_live_reuses_the_callers_analysis(void **state)
{
	(void)state;
	Model *m = load_model();
	Gen g;
	gen(&g);
	Err err = {0};
	/* what the dashboard holds: its window and baseline, all classes */
	AnalysisOptions ao = {.period.win = g.period.win, .period.has_baseline = 1,
	                      .period.base = g.period.base, .model = m};
	Analysis *a = NULL;
	if (analysis_run(g.st, &ao, &a, &err))
		fail_msg("%s", err.msg);
	DxLiveKey k = dx_live_key(a);

	DxLive *l = NULL;
	if (dx_live_open(g.db, m, &l, &err))
		fail_msg("%s", err.msg);
	/* the dashboard replaces its analysis at once: the worker must hold
	 * its own (ASan reports a use after free otherwise) */
	const Analysis *ask = a;
	assert_null(dx_live_get(l, &k, ask, NULL));
	analysis_free(a);
	a = NULL;
	const Diagnosis *d = wait_for(l, &k, NULL);
	unsigned reused, computed;
	dx_live_counts(l, &reused, &computed);
	assert_int_equal(reused, 1);
	assert_int_equal(computed, 0);

	/* the same diagnosis computed from scratch */
	DiagnoseOptions o = {.model = m, .period.win = g.period.win,
	                     .period.has_baseline = 1, .period.base = g.period.base};
	Diagnosis *ref = NULL;
	if (diagnose_run(g.st, &o, &ref, &err))
		fail_msg("%s", err.msg);
	same_evidence(d->evidence, ref->evidence);
	same_ranking(d, ref);
	diagnosis_free(ref);

	/* one class on screen: the diagnosis (of all classes) computes its own */
	AnalysisOptions one = ao;
	one.period.has_baseline = 0;
	one.wclass = "standard";
	Analysis *c = NULL;
	if (analysis_run(g.st, &one, &c, &err))
		fail_msg("%s", err.msg);
	DxLiveKey kc = dx_live_key(c);
	assert_int_equal(kc.period.has_baseline, 0);
	wait_for(l, &kc, c);
	dx_live_counts(l, &reused, &computed);
	assert_int_equal(reused, 1);
	assert_int_equal(computed, 1);
	analysis_free(c);

	/* the DxLive diagnoses with another skew tolerance than the analysis */
	SkewTolerance wide = {.set = 1, .abs_ns = 1000000, .frac = 0.05};
	dx_live_set_skew(l, &wide);
	Analysis *b = NULL;
	AnalysisOptions nob = ao;
	nob.period.has_baseline = 0;
	nob.period.win.from = INT64_MIN;
	if (analysis_run(g.st, &nob, &b, &err))
		fail_msg("%s", err.msg);
	DxLiveKey kb = dx_live_key(b);
	wait_for(l, &kb, b);
	dx_live_counts(l, &reused, &computed);
	assert_int_equal(reused, 1);
	assert_int_equal(computed, 2);
	/* and the same tolerance both sides, the window open at the start: reused */
	Analysis *b2 = NULL;
	nob.skew = wide;
	nob.period.win.to = g.period.base.to; /* another window, so a new request */
	if (analysis_run(g.st, &nob, &b2, &err))
		fail_msg("%s", err.msg);
	DxLiveKey kb2 = dx_live_key(b2);
	assert_int_equal(kb2.open_from, 1);
	wait_for(l, &kb2, b2);
	dx_live_counts(l, &reused, &computed);
	assert_int_equal(reused, 2);
	assert_int_equal(computed, 2);
	/* closed with a request (and its analysis) possibly not started yet:
	 * the DxLive lets go of it (ASan's leak check) */
	Analysis *b3 = NULL;
	nob.period.win.from = g.period.win.from;
	nob.period.win.to = g.period.win.to;
	if (analysis_run(g.st, &nob, &b3, &err))
		fail_msg("%s", err.msg);
	DxLiveKey kb3 = dx_live_key(b3);
	dx_live_get(l, &kb3, b3, NULL);
	analysis_free(b3);
	analysis_free(b);
	analysis_free(b2);
	dx_live_close(l);
	gen_free(&g);
	model_free(m);
}

/* ---- holds and answers ------------------------------------------------------ */

static void test_ref_and_answers(void **state)
{
	(void)state;
	Model *m = load_model();
	Gen g;
	gen(&g);
	Err err = {0};
	AnalysisOptions ao = {.period.win = {INT64_MIN, g.period.win.to}, .period.has_baseline = 1,
	                      .period.base = g.period.base, .model = m,
	                      .wclass = "standard"};
	Analysis *a = NULL;
	if (analysis_run(g.st, &ao, &a, &err))
		fail_msg("%s", err.msg);
	assert_null(analysis_ref(NULL));
	Analysis *h1 = analysis_ref(a), *h2 = analysis_ref(a);
	assert_ptr_equal(h1, a);
	analysis_free(a);   /* two holds left: still readable (ASan would say) */
	analysis_free(h1);
	assert_string_equal(h2->class_filter, "standard");

	AnalysisOptions o = ao;
	char cls[16] = "standard";  /* another string, the same class */
	o.wclass = cls;
	assert_true(analysis_answers(h2, &o));
	o.skew = (SkewTolerance){.set = 1, .abs_ns = ANALYSIS_SKEW_ABS_NS, .frac = ANALYSIS_SKEW_FRAC};
	assert_true(analysis_answers(h2, &o));  /* the default, spelt out */
	o.skew.frac = 0.5;
	assert_false(analysis_answers(h2, &o));
	o = ao;
	o.wclass = NULL;
	assert_false(analysis_answers(h2, &o));
	o = ao;
	o.model = NULL;
	assert_false(analysis_answers(h2, &o));
	o = ao;
	o.period.win.from = h2->pop[POP_WINDOW].from_ns;  /* closed at the same data bound */
	assert_false(analysis_answers(h2, &o));
	o = ao;
	o.period.base.to++;
	assert_false(analysis_answers(h2, &o));
	o = ao;
	o.period.has_baseline = 0;
	assert_false(analysis_answers(h2, &o));
	assert_false(analysis_answers(NULL, &ao));
	analysis_free(h2);
	gen_free(&g);
	model_free(m);
}

/* One question read in one part and in two (two connections, chunks of
 * trace keys in turn): the same report, byte for byte, and the same
 * evidence in every value; so for a sample read by trace keys. */
static void one_read(Gen *g, const Model *m, int64_t bound, Buf *json, Evidence **ev)
{
	Err err = {0};
	AnalysisOptions ao = {.period = g->period, .model = m};
	Analysis *a = NULL;
	EvRequestSet *sets[2] = {NULL, NULL};
	if (evidence_analysis_run(g->st, &ao, bound, &a, sets, &err))
		fail_msg("%s", err.msg);
	report_json(a, json);
	EvidenceOptions eo = {.model = m, .period = g->period, .analysis = a,
	                      .requests = {sets[0], sets[1]}};
	if (evidence_compute(g->st, &eo, ev, &err))
		fail_msg("%s", err.msg);
	evidence_requests_free(sets[0]);
	evidence_requests_free(sets[1]);
	analysis_free(a);
}

static void test_split_reading_is_exact(void **state)
{
	(void)state;
	Model *m = load_model();
	Gen g;
	gen(&g);
	for (int sampled = 0; sampled < 2; sampled++) {
		int64_t bound = sampled ? 300 : 0;
		Buf one, two;
		buf_init(&one);
		buf_init(&two);
		Evidence *e1 = NULL, *e2 = NULL;
		trace_feed_split_at(INT64_MAX, INT64_MAX);
		int64_t splits = trace_feed_splits();
		one_read(&g, m, bound, &one, &e1);
		assert_int_equal(trace_feed_splits(), splits);
		trace_feed_split_at(0, 0);
		one_read(&g, m, bound, &two, &e2);
		if (sysconf(_SC_NPROCESSORS_ONLN) >= 2)
			assert_int_equal(trace_feed_splits(), splits + 1);
		assert_true(one.len > 1000);
		if (strcmp(buf_str(&one), buf_str(&two)) != 0)
			fail_msg("%s: the report read in two parts differs from the one read in one",
			         sampled ? "sample" : "every span");
		same_evidence(e2, e1);
		evidence_free(e1);
		evidence_free(e2);
		buf_fini(&one);
		buf_fini(&two);
	}
	trace_feed_split_at(100000, 4000);
	gen_free(&g);
	model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_evidence_borrowed_equals_computed),
	    cmocka_unit_test(test_sampled_reading),
	    cmocka_unit_test(test_split_reading_is_exact),
	    cmocka_unit_test(test_live_analysis_carries_requests),
	    cmocka_unit_test(test_dx_live_reuses_the_callers_analysis),
	    cmocka_unit_test(test_ref_and_answers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
