/*
 * board.c - glue between the diagnosis engine and the dashboard (see
 * board.h). The TUI only sees plain text (tui_board.h) and numbers by
 * evidence name; the Diagnosis itself stays here.
 *
 * The header's budget values come from the latest diagnosis of the same
 * window and baseline (while the data grows, the previous version's values
 * stay up until the new ones are ready); with another window nothing is
 * shown until its diagnosis is done.
 *
 * Each request carries the analysis on screen: the diagnosis reads it
 * instead of computing the same one again when it is of all classes
 * (with a class filter on screen it computes its own, of all classes).
 */
#ifdef TT_HAVE_TUI
#include "board.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "checks.h"
#include "dx_live.h"
#include "tui_board.h"

struct CliBoard {
	DxLive *live;
	const Model *model;
	TuiBoard tb;
	/* the snapshot handed to the TUI and what it was built from */
	TuiBoardSnapshot snap;
	int has_snap;
	unsigned snap_gen;           /* dx_live_generation() it was built at */
	char **strs;                 /* every string of the snapshot */
	int n_strs;
	TuiBoardHyp *hyps;
	TuiBoardDecision *decs;
	const char **lines;          /* all hypotheses' lines, one array */
	char note[600];
};

static int under_bound(const Analysis *a)
{
	return a->pop[POP_WINDOW].requests <= EVIDENCE_SAMPLE_DEFAULT &&
	       a->pop[POP_BASELINE].requests <= EVIDENCE_SAMPLE_DEFAULT;
}

/* The latest diagnosis of a's window and baseline, or NULL. */
static const Diagnosis *current(CliBoard *b, const Analysis *a, int *fresh)
{
	*fresh = 0;
	/* with figures from the aggregates on screen: a range over the sample
	 * bound is diagnosed at once from a sample of its own (the exact
	 * analysis would not be reused); a smaller one waits for the exact
	 * analysis, which the diagnosis then reads instead of computing it
	 * again (the counts of the aggregates are exact) */
	if (a->approx && under_bound(a))
		return NULL;
	DxLiveKey k = dx_live_key(a), shown;
	/* the dashboard's own analysis goes with the request: the diagnosis
	 * reads it when it is the one it would compute (all classes) */
	const Diagnosis *d = dx_live_get(b->live, &k, a, fresh);
	if (d == NULL || !dx_live_shown(b->live, &shown) || !dx_live_same_range(&shown, &k))
		return NULL;
	return d;
}

static int evidence_cb(void *ctx, const Analysis *a, const char *name, double *value,
                       const char **unit)
{
	CliBoard *b = ctx;
	int fresh;
	const Diagnosis *d = current(b, a, &fresh);
	const EvValue *v = d ? evidence_get(d->evidence, name) : NULL;
	if (v == NULL || v->missing)
		return 0;
	*value = v->value;
	*unit = v->unit;
	return 1;
}

/* A budget judged on the latest diagnosis's evidence, as `diagnose`
 * judges it (its interval, its best source). */
static int budget_cb(void *ctx, const Analysis *a, const ModelBudget *mb, BudgetResult *out)
{
	CliBoard *b = ctx;
	int fresh;
	const Diagnosis *d = current(b, a, &fresh);
	if (d == NULL)
		return 0;
	budget_judge(mb, d->evidence, out);
	out->ev = NULL; /* the diagnosis may be replaced after this call */
	return out->state != BUDGET_UNKNOWN;
}

/* No diagnosis of a's window and baseline is on hand yet, and one is on
 * its way (asked for, or computing): the header says "evaluating...". A
 * failed diagnosis is not pending: the values are then truly missing. */
static int pending_cb(void *ctx, const Analysis *a)
{
	CliBoard *b = ctx;
	int fresh;
	if (a->approx && under_bound(a))
		return 1; /* the exact analysis, then the diagnosis, are on their way */
	if (current(b, a, &fresh) != NULL)
		return 0;
	return dx_live_busy(b->live) || dx_live_error(b->live)[0] == '\0';
}

static const char *keep(CliBoard *b, const char *s)
{
	b->strs = xrealloc(b->strs, (size_t)(b->n_strs + 1) * sizeof *b->strs);
	b->strs[b->n_strs] = xstrdup(s ? s : "");
	return b->strs[b->n_strs++];
}

static void snap_clear(CliBoard *b)
{
	for (int i = 0; i < b->n_strs; i++)
		free(b->strs[i]);
	free(b->strs);
	free(b->hyps);
	free(b->decs);
	free(b->lines);
	b->strs = NULL;
	b->n_strs = 0;
	b->hyps = NULL;
	b->decs = NULL;
	b->lines = NULL;
	memset(&b->snap, 0, sizeof b->snap);
	b->has_snap = 0;
}

static void snap_build(CliBoard *b, const Diagnosis *d)
{
	snap_clear(b);
	int total = 0;
	for (int i = 0; i < d->n_hyp; i++) {
		total += 2 * d->hyp[i].n_preds + 1 + 4 + d->n_warnings;
		for (int k = 0; k < d->hyp[i].n_preds; k++)
			total += d->hyp[i].preds[k].n_names;
	}
	b->lines = xcalloc((size_t)(total ? total : 1), sizeof *b->lines);
	b->hyps = xcalloc((size_t)(d->n_hyp ? d->n_hyp : 1), sizeof *b->hyps);
	int li = 0;
	for (int i = 0; i < d->n_hyp; i++) {
		const DxHypothesis *h = &d->hyp[i];
		TuiBoardHyp *t = &b->hyps[i];
		t->id = keep(b, h->id);
		t->node = keep(b, h->node);
		t->title = keep(b, h->title);
		t->mechanism = keep(b, h->mechanism);
		t->score = h->score;
		t->rank = h->rank;
		t->signature = h->signature;
		t->lines = &b->lines[li];
		char xl[512];
		if (i == 0) {
			for (int k = 0; k < d->n_warnings; k++) {
				Buf l;
				buf_init(&l);
				buf_printf(&l, "! %s", d->warnings[k]);
				b->lines[li++] = keep(b, buf_str(&l));
				buf_fini(&l);
			}
		}
		diagnosis_format_explained(d, h, xl, sizeof xl);
		if (*xl)
			b->lines[li++] = keep(b, xl);
		if (h->detail)
			b->lines[li++] = keep(b, h->detail);
		if (h->rank_note)
			b->lines[li++] = keep(b, h->rank_note);
		/* what to do about it, before the evidence: on a short screen
		 * the evidence is what scrolls away */
		char rm[1400];
		diagnosis_format_remedy(h, rm, sizeof rm);
		if (*rm)
			b->lines[li++] = keep(b, rm);
		/* under the leader, the rise and the verdict the ranking used,
		 * as diagnose prints them */
		char rise[160], verdict[400];
		if (i == 0 && diagnosis_rise(d, rise, sizeof rise, verdict, sizeof verdict)) {
			Buf l;
			buf_init(&l);
			buf_printf(&l, "rise %s, %s", rise, verdict);
			b->lines[li++] = keep(b, buf_str(&l));
			buf_fini(&l);
		}
		for (int k = 0; k < h->n_preds; k++) {
			const DxPredicate *p = &h->preds[k];
			if (p->outcome == DX_NOT)
				continue;
			Buf l;
			buf_init(&l);
			if (p->outcome == DX_HOLDS)
				buf_printf(&l, "%c %s (%+g)", p->against ? '-' : '+', p->text,
				           p->against ? -p->weight : p->weight);
			else
				buf_printf(&l, "? cannot tell: %s", p->text);
			b->lines[li++] = keep(b, buf_str(&l));
			buf_fini(&l);
			if (p->reason) {
				buf_init(&l);
				buf_printf(&l, "  why: %s", p->reason);
				b->lines[li++] = keep(b, buf_str(&l));
				buf_fini(&l);
			}
			/* the values it read, with their n and interval */
			for (int j = 0; j < p->n_names; j++) {
				const EvValue *v = evidence_get(d->evidence, p->names[j]);
				if (v == NULL)
					continue;
				char ci[96];
				diagnosis_format_interval(v, ci, sizeof ci);
				Buf vl;
				buf_init(&vl);
				if (v->missing)
					buf_printf(&vl, "    %s: missing", v->name);
				else {
					/* the one rule for units (a ratio reads as a
					 * percentage, like its interval) */
					char val[64], src[96];
					evidence_format(v->value, v->unit, val, sizeof val);
					evidence_source_text(d->evidence, v, src, sizeof src);
					buf_printf(&vl, "    %s = %s %s (%s)", v->name, val, ci, src);
				}
				b->lines[li++] = keep(b, buf_str(&vl));
				buf_fini(&vl);
			}
		}
		if (h->n_missing > 0) {
			Buf l;
			buf_init(&l);
			buf_adds(&l, "? missing:");
			for (int k = 0; k < h->n_missing && k < 8; k++)
				buf_printf(&l, " %s", h->missing[k]);
			if (h->n_missing > 8)
				buf_printf(&l, " (+%d)", h->n_missing - 8);
			b->lines[li++] = keep(b, buf_str(&l));
			buf_fini(&l);
		}
		t->n_lines = (int)(&b->lines[li] - t->lines);
		t->check = keep(b, h->check);
		t->check_node = h->check_node ? keep(b, h->check_node) : NULL;
		t->check_class = h->check_class ? keep(b, h->check_class) : NULL;
		t->check_why = h->check_why ? keep(b, h->check_why) : NULL;
	}
	/* the supported decisions first (then the engine's order): on a short
	 * screen the one to act on is never the one scrolled away */
	b->decs = xcalloc((size_t)(d->n_dec ? d->n_dec : 1), sizeof *b->decs);
	int nd = 0;
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < d->n_dec; i++) {
			if ((d->dec[i].verdict == DX_SUPPORTED) != (pass == 0))
				continue;
			b->decs[nd].id = keep(b, d->dec[i].id);
			b->decs[nd].verdict = keep(b, dx_verdict_name(d->dec[i].verdict));
			b->decs[nd].reason = keep(b, d->dec[i].reason);
			nd++;
		}
	b->snap.hyps = b->hyps;
	b->snap.n_hyps = d->n_hyp;
	b->snap.decisions = b->decs;
	b->snap.n_decisions = d->n_dec;
	b->has_snap = 1;
	b->snap_gen = dx_live_generation(b->live);
}

static const TuiBoardSnapshot *snapshot_cb(void *ctx, const Analysis *a)
{
	CliBoard *b = ctx;
	if (a == NULL)
		return NULL;
	int fresh = 0;
	const Diagnosis *d = current(b, a, &fresh);
	if (d == NULL) {
		snap_clear(b);
		/* the engine refused this window and baseline (no request in
		 * the baseline, say): the Board says so with the engine's words,
		 * as `diagnose` does, instead of waiting for nothing */
		DxLiveKey k = dx_live_key(a);
		const char *why = a->approx && under_bound(a) ? NULL : dx_live_failed(b->live, &k);
		if (why == NULL)
			return NULL;
		snprintf(b->note, sizeof b->note, "%s", why);
		b->snap.error = b->note;
		return &b->snap;
	}
	if (!b->has_snap || b->snap_gen != dx_live_generation(b->live))
		snap_build(b, d);
	b->snap.stale = !fresh;
	const char *e = dx_live_error(b->live);
	snprintf(b->note, sizeof b->note, "%s", e);
	/* a large range is diagnosed from a uniform sample: say of how much */
	double of = 0, n = 0;
	if (!b->note[0] && evidence_value(d->evidence, "ingress.sample_of", &of) &&
	    evidence_value(d->evidence, "ingress.requests", &n))
		snprintf(b->note, sizeof b->note, "(a uniform sample: %.0f of %.0f requests)", n, of);
	b->snap.note = b->note[0] ? b->note : NULL;
	return &b->snap;
}

static char *check_cb(void *ctx, const Analysis *a, const char *name, const char *node,
                      const char *wclass, char *err, size_t errsz)
{
	CliBoard *b = ctx;
	if (a == NULL || a->approx) {
		snprintf(err, errsz, a ? "the exact analysis is still computing" : "no analysis yet");
		return NULL;
	}
	DxLiveKey k = dx_live_key(a);
	/* the check of the endpoint on screen, with the model only when it
	 * describes that endpoint */
	const Model *m = b->model;
	if (m && m->root_service && m->root_operation &&
	    (strcmp(m->root_service, k.ep_service) != 0 || strcmp(m->root_operation, k.ep_route) != 0))
		m = NULL;
	CheckOptions o = {.model = m, .period = dx_live_key_period(&k), .node = node,
	                  .wclass = wclass, .ep_service = k.ep_service[0] ? k.ep_service : NULL,
	                  .ep_route = k.ep_service[0] ? k.ep_route : NULL};
	CheckTable *t = NULL;
	Err e = {0};
	if (dx_live_check(b->live, name, &o, &t, &e)) {
		snprintf(err, errsz, "%s", e.msg);
		return NULL;
	}
	Buf out;
	buf_init(&out);
	check_table_text(t, &out);
	check_table_free(t);
	char *s = xstrdup(buf_str(&out));
	buf_fini(&out);
	return s;
}

static int ready_cb(void *ctx)
{
	CliBoard *b = ctx;
	return dx_live_ready(b->live);
}

static int wait_fd_cb(void *ctx)
{
	CliBoard *b = ctx;
	return dx_live_wait_fd(b->live);
}

CliBoard *cli_board_open(const char *db_path, const Model *m, Err *err)
{
	return cli_board_open_drill(db_path, m, NULL, NULL, err);
}

CliBoard *cli_board_open_drill(const char *db_path, const Model *m, const struct Sheet *sheet,
                               const char *const *decide, Err *err)
{
	CliBoard *b = xcalloc(1, sizeof *b);
	DiagnoseOptions base = {.model = m, .sheet = sheet, .decide = decide};
	if (dx_live_open_with(db_path, &base, &b->live, err)) {
		free(b);
		return NULL;
	}
	b->model = m;
	b->tb.snapshot = snapshot_cb;
	b->tb.run_check = check_cb;
	b->tb.ready = ready_cb;
	b->tb.wait_fd = wait_fd_cb;
	b->tb.ctx = b;
	return b;
}

void cli_board_close(CliBoard *b)
{
	if (b == NULL)
		return;
	snap_clear(b);
	dx_live_close(b->live);
	free(b);
}

void cli_board_set_model(CliBoard *b, const Model *m)
{
	if (b == NULL)
		return;
	b->model = m;
	dx_live_set_model(b->live, m);
}

void cli_board_counts(CliBoard *b, unsigned *reused, unsigned *computed)
{
	dx_live_counts(b->live, reused, computed);
}

void cli_board_sampled(CliBoard *b, EvSampling sampled)
{
	if (b)
		dx_live_set_sampled(b->live, sampled);
}

void cli_board_wire(CliBoard *b, TuiOptions *to)
{
	if (b == NULL)
		return;
	dx_live_set_skew(b->live, &to->skew);
	to->evidence = evidence_cb;
	to->budget = budget_cb;
	to->evidence_pending = pending_cb;
	to->evidence_ctx = b;
	to->board = &b->tb;
}

#endif /* TT_HAVE_TUI */
