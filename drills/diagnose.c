/*
 * diagnose.c - the engine: evidence (store and/or sheet) -> budgets ->
 * hypotheses ranked from the catalog -> decisions, and the text and JSON
 * renderings of the result.
 *
 * The engine has no knowledge of any particular data set: the sheet's
 * values are supplied by name, the catalog decides what they mean, and the
 * model says what is optional, core and budgeted.
 */
#include "diagnose.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drills_priv.h"
#include "endpoints.h"
#include "sheet.h"
#include "sanitize.h"
#include "timefmt.h"

/* ---- running ------------------------------------------------------------ */

static void supply_sheet(Evidence *e, const Sheet *s)
{
	for (size_t i = 0; i < s->n_obs; i++) {
		const SheetObs *o = &s->obs[i];
		char name[300], prov[512];
		snprintf(name, sizeof name, "%s%s", o->name, o->role == SHEET_BASELINE ? "@baseline" : "");
		snprintf(prov, sizeof prov, "sheet %s: %g %s (%s)", s->name ? s->name : "", o->value,
		         o->unit ? o->unit : "",
		         o->role == SHEET_BASELINE ? (s->baseline ? s->baseline : "baseline")
		                                   : (s->window ? s->window : "window"));
		evidence_supply(e, name, o->norm, o->norm_unit ? o->norm_unit : o->unit, EV_SRC_SHEET, prov);
		if (o->role == SHEET_BASELINE)
			e->has_baseline = 1;
	}
}

static void supply_budgets(Evidence *e, const Model *m)
{
	int n = 0;
	BudgetResult *r = budgets_evaluate(m, e, &n);
	if (r == NULL)
		return;
	int breached = 0, unknown = 0, maybe = 0;
	for (int i = 0; i < n; i++) {
		breached += r[i].state == BUDGET_BREACHED;
		unknown += r[i].state == BUDGET_UNKNOWN;
		maybe += r[i].state == BUDGET_MAYBE;
	}
	char prov[160];
	snprintf(prov, sizeof prov,
	         "derived: model budgets breached, their whole 95 %% interval past the threshold "
	         "(%d of %d; %d may be, %d unknown)", breached, n, maybe, unknown);
	evidence_supply(e, "budgets.breached", breached, "count", EV_SRC_DERIVED, prov);
	snprintf(prov, sizeof prov,
	         "derived: model budgets whose interval holds the threshold (%d of %d)", maybe, n);
	evidence_supply(e, "budgets.maybe", maybe, "count", EV_SRC_DERIVED, prov);
	snprintf(prov, sizeof prov, "derived: model budgets without evidence (%d of %d)", unknown, n);
	evidence_supply(e, "budgets.unknown", unknown, "count", EV_SRC_DERIVED, prov);
	free(r);
}

static void clean(char *out, size_t sz, const char *s);

/* A window or baseline without requests, or a baseline that is the
 * window, cannot be compared: refused with the range and the counts
 * (analysis_period_guard(), as `report` does), so nobody reads a story
 * into an empty set or a set against itself. */
static int guard_empty(Store *st, const DiagnoseOptions *opt, const Evidence *e, Err *err)
{
	double w = 0, b = 0, of = 0;
	evidence_value(e, "ingress.requests", &w);
	evidence_value(e, "ingress.requests@baseline", &b);
	evidence_value(e, "ingress.sample_of", &of);
	return analysis_period_guard(st, &opt->period, w, b, of, err);
}

static void warn(Diagnosis *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(Diagnosis *d, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	d->warnings = xrealloc(d->warnings, (size_t)(d->n_warnings + 1) * sizeof *d->warnings);
	d->warnings[d->n_warnings++] = xstrdup(msg);
}

/* Thin populations and a baseline that is not the same population. */
static void guard_warnings(Diagnosis *d, const DiagnoseOptions *opt)
{
	const Evidence *e = d->evidence;
	double pct = opt->model && opt->model->objective_pct > 0 ? opt->model->objective_pct : 99;
	int need = (int)ceil(1.0 / (1.0 - pct / 100.0));
	static const char *const pops[2] = {"", "@baseline"};
	/* the traces are a sample: of what, how, and what that changes */
	char note[1024];
	if (evidence_sampling_note(e, note, sizeof note))
		warn(d, "%s", note);
	/* a thin endpoint: what else could answer (docs/endpoints.md), said
	 * with the last of these warnings, or alone when the p99 exists but
	 * has no upper bound */
	const char *answers = opt->analysis && analysis_thin(opt->analysis)
	                          ? "; a longer window, the route's own latency metric, or all "
	                            "endpoints together (a dependency they share) could answer"
	                          : "";
	int said = 0;
	double n[2] = {0, 0};
	int few[2] = {0, 0};
	/* the endpoint's p99 read off pulled slowest sets (analysis/evidence_top.c):
	 * the sample's size no longer bounds it, but it still bounds the replay */
	const EvValue *tw = evidence_get(e, "ingress.p99_ms"),
	              *tb = evidence_get(e, "ingress.p99_ms@baseline");
	if (tw && !tw->missing && tw->top_k > 0 && tb && !tb->missing && tb->top_k > 0) {
		double sw = 0, sb = 0;
		evidence_value(e, "ingress.requests", &sw);
		evidence_value(e, "ingress.requests@baseline", &sb);
		warn(d,
		     "the endpoint's p99 and its rise are read off the slowest sets pulled from the "
		     "trace back end (the %lld slowest of %lld requests in the window, %lld of %lld in "
		     "the baseline) and the sample below them; the sample's own %.0f and %.0f requests "
		     "cannot bound a p99, so the replay of where a rise went rests on what they show",
		     (long long)tw->top_k, (long long)tw->n, (long long)tb->top_k, (long long)tb->n,
		     sw, sb);
		said = 1;
	}
	for (int p = 0; p < 2 && !said; p++) {
		char nm[64];
		snprintf(nm, sizeof nm, "ingress.requests%s", pops[p]);
		few[p] = evidence_value(e, nm, &n[p]) && n[p] > 0 && n[p] < need;
	}
	if (!said && few[0] && few[1]) {
		warn(d,
		     "the window holds %.0f requests and the baseline %.0f, fewer than the %d a p%g "
		     "needs (its nearest rank is the maximum): comparisons that need it say 'cannot "
		     "tell'%s", n[0], n[1], need, pct, answers);
		said = 1;
	}
	for (int p = 0; p < 2 && !said; p++) {
		if (!few[p])
			continue;
		warn(d,
		     "the %s holds %.0f requests, fewer than the %d a p%g needs (its nearest rank is "
		     "the maximum): comparisons that need it say 'cannot tell'%s",
		     p ? "baseline" : "window", n[p], need, pct, answers);
		said = 1;
	}
	Buf thin;
	buf_init(&thin);
	if (!said && opt->analysis && analysis_thin_hint(opt->analysis, &thin))
		warn(d, "%s", buf_str(&thin));
	buf_fini(&thin);
	/* a baseline that shares time with the window shares its requests:
	 * the two look alike, and a rise shows smaller than it is */
	const TimeRange *w = &opt->period.win, *bs = &opt->period.base;
	if (opt->period.has_baseline && w->from != INT64_MIN && w->to != INT64_MAX &&
	    bs->from != INT64_MIN && bs->to != INT64_MAX && bs->to > bs->from) {
		int64_t lo = w->from > bs->from ? w->from : bs->from;
		int64_t hi = w->to < bs->to ? w->to : bs->to;
		if (hi > lo) {
			char r[96];
			time_range_format(*bs, r, sizeof r);
			warn(d,
			     "the baseline %s overlaps the window (%.0f %% of the baseline): requests in "
			     "both make the two look alike, so a change shows smaller than it is; a "
			     "baseline before the window (--baseline before) shares none",
			     r, 100.0 * (double)(hi - lo) / (double)(bs->to - bs->from));
		}
	}
	/* population drift: the class mix or the request rate differ */
	Buf mix;
	buf_init(&mix);
	for (int c = 0; c < e->n_classes; c++) {
		char seg[96], nm[160];
		evidence_segment(e->classes[c], seg, sizeof seg);
		snprintf(nm, sizeof nm, "mix.%s", seg);
		EvChange ch;
		if (!evidence_change(e, nm, &ch) || !ch.sampled)
			continue;
		if ((evidence_rose(e, nm, 0.01, 1.25) == 1 || evidence_fell(e, nm, 0.01, 1.25) == 1)) {
			char cls[96];
			clean(cls, sizeof cls, e->classes[c]);
			buf_printf(&mix, "%s%s %.1f %% against %.1f %%", mix.len ? ", " : "", cls,
			           100 * ch.w, 100 * ch.b);
		}
	}
	if (mix.len)
		warn(d,
		     "the baseline's class mix differs from the window's (%s): the comparison mixes a "
		     "population change with a latency change; class-mix-shift weighs how much of the "
		     "rise the mix explains",
		     buf_str(&mix));
	buf_fini(&mix);
	EvChange rc;
	if (evidence_change(e, "ingress.rate_rps", &rc) && rc.b > 0 &&
	    (rc.r >= 1.3 || rc.r <= 1 / 1.3)) {
		const EvValue *rv = evidence_get(e, "ingress.rate_rps");
		char src[96];
		evidence_source_text(e, rv, src, sizeof src);
		warn(d,
		     "the window's request rate (%.1f/s, %s) differs from the baseline's (%.1f/s) by "
		     "%.0f %%: a load change, or different sampling",
		     rc.w, src, rc.b, 100 * fabs(rc.r - 1));
	}
}

int diagnose_run(Store *st, const DiagnoseOptions *opt, Diagnosis **out, Err *err)
{
	*out = NULL;
	if (st == NULL && opt->sheet == NULL)
		return err_set(err, TT_EINVAL, "diagnose needs a database or an observation sheet");
	Evidence *e = NULL;
	Store *exprs = NULL;
	Catalog *cat = NULL;
	Diagnosis *d = NULL;
	EvidenceOptions eo = {
	    .model = opt->model, .period = opt->period,
	    .analysis = opt->analysis, .skew = opt->skew,
	    .requests = {opt->requests[0], opt->requests[1]},
	    .sampled = opt->sampled,
	};
	int rc = evidence_compute(st, &eo, &e, err);
	if (rc)
		goto fail;
	if (opt->sheet) {
		supply_sheet(e, opt->sheet);
		evidence_finish(e);
	}
	supply_budgets(e, opt->model);
	evidence_finish(e);
	if ((rc = guard_empty(st, opt, e, err)))
		goto fail;
	if ((rc = store_open(":memory:", 0, &exprs, err)))
		goto fail;
	if ((rc = catalog_load(opt->catalog_path, exprs, &cat, err)))
		goto fail;
	d = xcalloc(1, sizeof *d);
	d->evidence = e;
	e = NULL;
	d->catalog = xstrdup(cat->path);
	if ((rc = hypotheses_evaluate(cat, d->evidence, opt->model, exprs, &d->hyp, &d->n_hyp, err)))
		goto fail;
	decisions_evaluate(d->evidence, opt->model, d->hyp, d->n_hyp, opt->decide, &d->dec, &d->n_dec);
	guard_warnings(d, opt);
	catalog_free(cat);
	store_close(exprs);
	*out = d;
	return 0;
fail:
	evidence_free(e);
	catalog_free(cat);
	store_close(exprs);
	diagnosis_free(d);
	return rc;
}

void diagnosis_free(Diagnosis *d)
{
	if (d == NULL)
		return;
	evidence_free(d->evidence);
	for (int i = 0; i < d->n_hyp; i++)
		dx_hypothesis_fini(&d->hyp[i]);
	free(d->hyp);
	for (int i = 0; i < d->n_dec; i++) {
		free(d->dec[i].id);
		free(d->dec[i].reason);
	}
	free(d->dec);
	free(d->catalog);
	for (int i = 0; i < d->n_warnings; i++)
		free(d->warnings[i]);
	free(d->warnings);
	free(d);
}

const DxHypothesis *diagnosis_hypothesis(const Diagnosis *d, const char *id)
{
	for (int i = 0; d && i < d->n_hyp; i++)
		if (strcmp(d->hyp[i].id, id) == 0)
			return &d->hyp[i];
	return NULL;
}

int diagnosis_rank(const Diagnosis *d, const char *id)
{
	const DxHypothesis *h = diagnosis_hypothesis(d, id);
	return h ? h->rank : -1;
}

const DxDecision *diagnosis_decision(const Diagnosis *d, const char *id)
{
	for (int i = 0; d && i < d->n_dec; i++)
		if (strcmp(d->dec[i].id, id) == 0)
			return &d->dec[i];
	return NULL;
}

/* ---- rendering helpers ------------------------------------------------------ */

/* Strings from data and sheets reach a terminal: the shared sanitizer. */
static void clean(char *out, size_t sz, const char *s)
{
	san_clean(s ? s : "", out, sz);
}

static void fmt_value(const EvValue *v, char *out, size_t sz)
{
	if (v == NULL || v->missing) {
		snprintf(out, sz, "missing");
		return;
	}
	evidence_format(v->value, v->unit, out, (unsigned)sz);
}

void diagnosis_format_interval(const EvValue *v, char *out, size_t sz)
{
	*out = '\0';
	if (v == NULL || v->missing || !v->has_ci)
		return;
	char a[32], b[32];
	int pct = strcmp(v->unit, "ratio") == 0;
	double k = pct ? 100 : 1;
	const char *u = pct ? " %" : strcmp(v->unit, "ms") == 0 ? " ms" : "";
	if (isinf(v->lo))
		snprintf(a, sizeof a, "?");
	else
		snprintf(a, sizeof a, "%.*f", pct || fabs(v->lo) >= 10 ? 1 : 2, k * v->lo);
	if (isinf(v->hi))
		snprintf(b, sizeof b, "? (too few)");
	else
		snprintf(b, sizeof b, "%.*f%s", pct || fabs(v->hi) >= 10 ? 1 : 2, k * v->hi, u);
	snprintf(out, sz, "[%s, %s] n=%lld", a, b, (long long)v->n);
}

void diagnosis_format_remedy(const DxHypothesis *h, char *out, size_t sz)
{
	*out = '\0';
	if (h->remedy[DX_REMEDY_CHANGE] == NULL)
		return;
	char c[400], k[400], w[400];
	clean(c, sizeof c, h->remedy[DX_REMEDY_CHANGE]);
	clean(k, sizeof k, h->remedy[DX_REMEDY_COST]);
	clean(w, sizeof w, h->remedy[DX_REMEDY_SHOWS]);
	snprintf(out, sz, "remedy: %s. Cost: %s. Worked when: %s", c, k, w);
}

int diagnosis_attributed_other(const Diagnosis *d)
{
	/* attributed although the objective's percentile did not rise: the
	 * p90's rise is what the shares divide (ev_attribution()) */
	const EvValue *ap = evidence_get(d->evidence, "attribution.percentile"),
	              *ar = evidence_get(d->evidence, "attribution.rise_ms");
	char say[320];
	return ap && !ap->missing && ar && !ar->missing &&
	       evidence_objective_rose(d->evidence, say, sizeof say) != 1;
}

int diagnosis_rise(const Diagnosis *d, char *rise, size_t rsz, char *verdict, size_t vsz)
{
	const Evidence *e = d->evidence;
	const EvValue *r = evidence_get(e, "ingress.rise_ms"), *p99 = evidence_get(e, "ingress.p99_ms");
	EvChange mc;
	/* the percentile the ranking reads is the metric's when it is the
	 * best source: its change first */
	int from_metric = p99 && !p99->missing && p99->source == EV_SRC_METRIC &&
	                  evidence_change(e, "ingress.p99_ms", &mc);
	if (!from_metric && (r == NULL || r->missing))
		return 0;
	char src[96];
	if (from_metric) {
		char lo[32], hi[32];
		evidence_source_text(e, p99, src, sizeof src);
		snprintf(lo, sizeof lo, isinf(mc.d_lo) ? "?" : "%.1f", mc.d_lo);
		snprintf(hi, sizeof hi, isinf(mc.d_hi) ? "?" : "%.1f", mc.d_hi);
		snprintf(rise, rsz, "%+.1f ms [%s, %s ms] (%s)", mc.d, lo, hi, src);
	} else {
		char ci[96];
		diagnosis_format_interval(r, ci, sizeof ci);
		evidence_source_text(e, r, src, sizeof src);
		snprintf(rise, rsz, "%+.1f ms %s (%s)", r->value, ci, src);
	}
	/* the verdict ingress.rose and the ranking use */
	char say[320];
	int v = evidence_objective_rose(e, say, sizeof say);
	snprintf(verdict, vsz, "%s: %s%s", v == 1 ? "rose" : v == 0 ? "did not rise" : "cannot tell",
	         say, v == 1 || from_metric ? ""
	              : diagnosis_attributed_other(d) ? "; the p90 rose: the shares are of its rise"
	                                              : "; nothing attributed");
	return 1;
}

void diagnosis_format_explained(const Diagnosis *d, const DxHypothesis *h, char *out, size_t sz)
{
	*out = '\0';
	const EvValue *v = h->explains ? evidence_get(d->evidence, h->explains) : NULL;
	if (v == NULL)
		return;
	if (v->missing) {
		snprintf(out, sz, "explains: not computed (%s)", v->provenance);
		return;
	}
	char ci[96] = "";
	if (v->has_ci)
		snprintf(ci, sizeof ci, " (95 %% interval %.0f to %.0f %%)", 100 * v->lo, 100 * v->hi);
	/* above all of it: taking the locus away leaves the window faster
	 * than the baseline (noise in both p99s, or something else got
	 * faster); said so, since "140 % of the rise" reads like an error */
	double apct = 99;
	evidence_value(d->evidence, "attribution.percentile", &apct);
	char more[128] = "";
	if (v->value > 1)
		snprintf(more, sizeof more,
		         ": more than the whole rise (without it the window's p%g would be under the "
		         "baseline's)", apct);
	snprintf(out, sz, "explains %.0f %% of the rise%s%s", 100 * v->value, ci, more);
}


/* ---- JSON ------------------------------------------------------------------- */

static cJSON *num_or_null(double v)
{
	return isnan(v) ? cJSON_CreateNull() : cJSON_CreateNumber(round(v * 1e6) / 1e6);
}

static cJSON *strv_json(char **v, int n)
{
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(v[i]));
	return a;
}

static const char *qkind_name(int q)
{
	return q == EV_Q_EXACT ? "exact" : q == EV_Q_HISTOGRAM ? "histogram" : NULL;
}

static cJSON *evidence_json(const EvValue *v)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", v->name);
	cJSON_AddItemToObject(o, "value", v->missing ? cJSON_CreateNull() : num_or_null(v->value));
	cJSON_AddStringToObject(o, "unit", v->unit);
	cJSON_AddStringToObject(o, "source", evidence_source_name(v->source));
	cJSON_AddBoolToObject(o, "missing", v->missing);
	const char *q = qkind_name(v->qkind);
	if (q && !v->missing)
		cJSON_AddStringToObject(o, "quantile", q);
	else
		cJSON_AddNullToObject(o, "quantile");
	cJSON_AddNumberToObject(o, "n", (double)v->n);
	if (v->has_ci && !v->missing) {
		cJSON *ci = cJSON_AddArrayToObject(o, "interval");
		cJSON_AddItemToArray(ci, isinf(v->lo) ? cJSON_CreateNull() : num_or_null(v->lo));
		cJSON_AddItemToArray(ci, isinf(v->hi) ? cJSON_CreateNull() : num_or_null(v->hi));
	} else {
		cJSON_AddNullToObject(o, "interval");
	}
	cJSON_AddBoolToObject(o, "small_sample", v->small_sample);
	cJSON_AddStringToObject(o, "provenance", v->provenance);
	return o;
}

/* A budget's verdict, figure, interval and source: the members `report`
 * writes too (docs/report-json.md). */
void diagnosis_budget_json(cJSON *b, const BudgetResult *r)
{
	int known = r->state != BUDGET_UNKNOWN;
	cJSON_AddItemToObject(b, "value", known ? num_or_null(r->value) : cJSON_CreateNull());
	if (known && r->has_ci) {
		cJSON *ci = cJSON_AddArrayToObject(b, "interval");
		cJSON_AddItemToArray(ci, isinf(r->lo) ? cJSON_CreateNull() : num_or_null(r->lo));
		cJSON_AddItemToArray(ci, isinf(r->hi) ? cJSON_CreateNull() : num_or_null(r->hi));
	} else {
		cJSON_AddNullToObject(b, "interval");
	}
	cJSON_AddStringToObject(b, "state", budget_state_name(r->state));
	cJSON_AddStringToObject(b, "source", r->ev ? evidence_source_name(r->ev->source) : "missing");
	cJSON_AddStringToObject(b, "evidence_used", r->ev ? r->ev->name : "");
	cJSON_AddStringToObject(b, "source_text", r->source);
	cJSON_AddStringToObject(b, "other_source", r->other);
	cJSON_AddStringToObject(b, "provenance", r->ev ? r->ev->provenance : "no evidence");
}

void diagnosis_json(const Diagnosis *d, const Model *m, Buf *out)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "catalog", d->catalog);
	cJSON_AddItemToObject(r, "warnings", strv_json(d->warnings, d->n_warnings));
	cJSON *ev = cJSON_AddArrayToObject(r, "evidence");
	for (int i = 0; i < d->evidence->n; i++)
		cJSON_AddItemToArray(ev, evidence_json(&d->evidence->v[i]));
	cJSON *facts = cJSON_AddObjectToObject(r, "facts");
	for (int i = 0; i < d->evidence->n_facts; i++)
		cJSON_AddStringToObject(facts, d->evidence->facts[i].name, d->evidence->facts[i].value);
	cJSON *bud = cJSON_AddArrayToObject(r, "budgets");
	int nb = 0;
	BudgetResult *br = budgets_evaluate(m, d->evidence, &nb);
	for (int i = 0; i < nb; i++) {
		cJSON *b = cJSON_CreateObject();
		const ModelBudget *mb = br[i].budget;
		cJSON_AddStringToObject(b, "id", mb->id ? mb->id : "");
		cJSON_AddStringToObject(b, "label", mb->label ? mb->label : "");
		cJSON_AddStringToObject(b, "evidence", mb->evidence ? mb->evidence : "");
		cJSON_AddStringToObject(b, "op", mb->op ? mb->op : ">");
		cJSON_AddNumberToObject(b, "threshold", mb->threshold);
		cJSON_AddStringToObject(b, "unit", mb->unit ? mb->unit : "");
		diagnosis_budget_json(b, &br[i]);
		cJSON_AddItemToArray(bud, b);
	}
	free(br);
	cJSON *hs = cJSON_AddArrayToObject(r, "hypotheses");
	for (int i = 0; i < d->n_hyp; i++) {
		const DxHypothesis *h = &d->hyp[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "id", h->id);
		cJSON_AddStringToObject(o, "node", h->node ? h->node : "none");
		cJSON_AddNumberToObject(o, "score", h->score);
		cJSON_AddNumberToObject(o, "rank", h->rank);
		cJSON_AddStringToObject(o, "param", h->param ? h->param : "");
		cJSON_AddStringToObject(o, "title", h->title ? h->title : "");
		cJSON_AddBoolToObject(o, "signature", h->signature);
		cJSON_AddBoolToObject(o, "applicable", !h->not_applicable);
		const EvValue *xv = h->explains ? evidence_get(d->evidence, h->explains) : NULL;
		if (xv) {
			cJSON *x = cJSON_AddObjectToObject(o, "explained");
			cJSON_AddStringToObject(x, "evidence", xv->name);
			cJSON_AddItemToObject(x, "share", xv->missing ? cJSON_CreateNull() : num_or_null(xv->value));
			cJSON *ci = cJSON_AddArrayToObject(x, "interval");
			if (xv->has_ci && !xv->missing) {
				cJSON_AddItemToArray(ci, num_or_null(xv->lo));
				cJSON_AddItemToArray(ci, num_or_null(xv->hi));
			}
			cJSON_AddStringToObject(x, "provenance", xv->provenance);
		} else {
			cJSON_AddNullToObject(o, "explained");
		}
		if (h->detail)
			cJSON_AddStringToObject(o, "detail", h->detail);
		else
			cJSON_AddNullToObject(o, "detail");
		if (h->rank_note)
			cJSON_AddStringToObject(o, "rank_note", h->rank_note);
		else
			cJSON_AddNullToObject(o, "rank_note");
		cJSON_AddItemToObject(o, "supported_by", strv_json(h->supported_by, h->n_supported_by));
		cJSON_AddItemToObject(o, "contradicted_by",
		                      strv_json(h->contradicted_by, h->n_contradicted_by));
		cJSON_AddItemToObject(o, "missing", strv_json(h->missing, h->n_missing));
		cJSON *ck = cJSON_AddObjectToObject(o, "check");
		cJSON_AddStringToObject(ck, "name", h->check ? h->check : "");
		if (h->check_node)
			cJSON_AddStringToObject(ck, "node", h->check_node);
		else
			cJSON_AddNullToObject(ck, "node");
		if (h->check_class)
			cJSON_AddStringToObject(ck, "class", h->check_class);
		else
			cJSON_AddNullToObject(ck, "class");
		cJSON_AddStringToObject(ck, "why", h->check_why ? h->check_why : "");
		cJSON *ps = cJSON_AddArrayToObject(o, "predicates");
		for (int k = 0; k < h->n_preds; k++) {
			const DxPredicate *p = &h->preds[k];
			cJSON *po = cJSON_CreateObject();
			cJSON_AddStringToObject(po, "text", p->text);
			cJSON_AddStringToObject(po, "kind", p->against ? "against" : "for");
			cJSON_AddNumberToObject(po, "weight", p->weight);
			cJSON_AddBoolToObject(po, "signature", p->signature);
			cJSON_AddStringToObject(po, "outcome", p->outcome == DX_HOLDS ? "holds"
			                                       : p->outcome == DX_NOT ? "does-not-hold"
			                                                              : "missing");
			cJSON_AddStringToObject(po, "expr", p->expr);
			if (p->why)
				cJSON_AddStringToObject(po, "why", p->why);
			if (p->reason)
				cJSON_AddStringToObject(po, "reason", p->reason);
			else
				cJSON_AddNullToObject(po, "reason");
			cJSON_AddItemToObject(po, "evidence", strv_json(p->names, p->n_names));
			cJSON_AddItemToArray(ps, po);
		}
		cJSON_AddStringToObject(o, "mechanism", h->mechanism ? h->mechanism : "");
		if (h->remedy[DX_REMEDY_CHANGE]) {
			cJSON *rm = cJSON_AddObjectToObject(o, "remedy");
			cJSON_AddStringToObject(rm, "change", h->remedy[DX_REMEDY_CHANGE]);
			cJSON_AddStringToObject(rm, "cost", h->remedy[DX_REMEDY_COST]);
			cJSON_AddStringToObject(rm, "shows", h->remedy[DX_REMEDY_SHOWS]);
		} else {
			cJSON_AddNullToObject(o, "remedy");
		}
		cJSON_AddItemToArray(hs, o);
	}
	cJSON *ds = cJSON_AddArrayToObject(r, "decisions");
	for (int i = 0; i < d->n_dec; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "id", d->dec[i].id);
		cJSON_AddStringToObject(o, "verdict", dx_verdict_name(d->dec[i].verdict));
		cJSON_AddStringToObject(o, "reason", d->dec[i].reason);
		cJSON_AddItemToArray(ds, o);
	}
	char *s = cJSON_Print(r);
	buf_adds(out, s);
	buf_adds(out, "\n");
	cJSON_free(s);
	cJSON_Delete(r);
}

/* ---- text -------------------------------------------------------------------- */

static void list_add(char ***list, int *n, const char *s)
{
	for (int i = 0; i < *n; i++)
		if (strcmp((*list)[i], s) == 0)
			return;
	*list = xrealloc(*list, (size_t)(*n + 1) * sizeof **list);
	(*list)[(*n)++] = xstrdup(s);
}

static void ev_line(Buf *out, const Evidence *e, const char *name)
{
	const EvValue *v = evidence_get(e, name);
	char val[64], nm[200], prov[600];
	fmt_value(v, val, sizeof val);
	clean(nm, sizeof nm, name);
	clean(prov, sizeof prov, v ? v->provenance : "not computed");
	char ci[96] = "", src[100] = "";
	diagnosis_format_interval(v, ci, sizeof ci);
	/* the source with its count; a value without one has its source
	 * at the head of its provenance already */
	if (v && !v->missing && (v->qkind != EV_Q_NONE || v->has_ci)) {
		src[0] = '(';
		evidence_source_text(e, v, src + 1, sizeof src - 3);
		strcat(src, ")  ");
	}
	buf_printf(out, "  %-44s %14s%s%s%s  %s%s\n", nm, val, *ci ? "  " : "", ci,
	           v && v->small_sample && !v->missing ? " (thin)" : "", src, prov);
}

void diagnosis_text(const Diagnosis *d, const Model *m, Buf *out)
{
	const Evidence *e = d->evidence;
	char s1[256], s2[256];
	int nb = 0;
	BudgetResult *br = budgets_evaluate(m, e, &nb);
	if (nb > 0) {
		buf_adds(out, "Budgets\n");
		for (int i = 0; i < nb; i++) {
			const ModelBudget *mb = br[i].budget;
			char v[600];
			budget_describe(&br[i], v, sizeof v);
			clean(s1, sizeof s1, mb->label ? mb->label : mb->id);
			clean(s2, sizeof s2, br[i].ev ? br[i].ev->provenance : "no evidence");
			buf_printf(out, "  %-15s %-40s %s\n",
			           br[i].state == BUDGET_BREACHED ? "BREACHED" : budget_state_text(br[i].state),
			           s1, v);
			buf_printf(out, "  %-15s %-40s   %s\n", "", "", s2);
		}
		buf_adds(out, "\n");
	}
	free(br);

	if (d->n_warnings > 0) {
		buf_adds(out, "Before the ranking\n");
		for (int i = 0; i < d->n_warnings; i++)
			buf_printf(out, "  ! %s\n", d->warnings[i]);
		buf_adds(out, "\n");
	}
	char rise[160], verdict[400];
	if (diagnosis_rise(d, rise, sizeof rise, verdict, sizeof verdict)) {
		buf_printf(out, "Rise of the objective's percentile: %s\n  %s\n", rise, verdict);
		const EvValue *tr = evidence_get(e, "ingress.rise_ms"), *p99 = evidence_get(e, "ingress.p99_ms");
		if (p99 && p99->source == EV_SRC_METRIC && tr && !tr->missing) {
			/* what the attribution replays: the traces */
			char ci[96], src[96];
			diagnosis_format_interval(tr, ci, sizeof ci);
			evidence_source_text(e, tr, src, sizeof src);
			buf_printf(out, "  on the traces the attribution replays: %+.1f ms %s (%s)\n", tr->value,
			           ci, src);
		}
		const EvValue *ap = evidence_get(e, "attribution.percentile"),
		              *ar = evidence_get(e, "attribution.rise_ms");
		if (diagnosis_attributed_other(d)) {
			/* the objective's percentile did not rise, the p90 did: the
			 * shares below are of the p90's rise (docs/diagnosis.md) */
			char ci[96];
			diagnosis_format_interval(ar, ci, sizeof ci);
			buf_printf(out, "Rise of the p%g: %+.1f ms %s: the shares below are of this rise\n",
			           ap->value, ar->value, ci);
		}
		buf_adds(out, "\n");
	}
	buf_adds(out, "Hypotheses (ranked; score = weights of holding supporting minus contradicting "
	              "predicates)\n");
	for (int i = 0; i < d->n_hyp; i++) {
		const DxHypothesis *h = &d->hyp[i];
		clean(s1, sizeof s1, h->node);
		if (h->not_applicable) {
			buf_printf(out, "%2d. %-27s %s\n    = %s\n", h->rank, h->id, "(not applicable)",
			           h->rank_note ? h->rank_note : "not applicable");
			continue;
		}
		buf_printf(out, "%2d. %-27s %-16s score %+.1f%s\n", h->rank, h->id, s1, h->score,
		           h->signature ? "" : (h->score > 0 ? "  (signature not seen)" : ""));
		buf_printf(out, "    %s\n", h->title);
		char xl[512];
		diagnosis_format_explained(d, h, xl, sizeof xl);
		if (*xl && !strstr(xl, "not computed"))
			buf_printf(out, "    = %s\n", xl);
		if (h->detail) {
			clean(s1, sizeof s1, h->detail);
			buf_printf(out, "    = %s\n", s1);
		}
		if (h->rank_note)
			buf_printf(out, "    = %s\n", h->rank_note);
		for (int k = 0; k < h->n_preds; k++) {
			const DxPredicate *p = &h->preds[k];
			if (p->outcome == DX_NOT)
				continue;
			char mark = p->outcome == DX_MISSING ? '?' : p->against ? '-' : '+';
			buf_printf(out, "    %c %s%s\n", mark, p->outcome == DX_MISSING ? "cannot tell: " : "",
			           p->text);
			if (p->reason) {
				char why[700];
				clean(why, sizeof why, p->reason);
				buf_printf(out, "      why: %s\n", why);
			}
		}
		if (h->n_missing > 0) {
			buf_adds(out, "      missing:");
			for (int k = 0; k < h->n_missing && k < 6; k++)
				buf_printf(out, " %s", h->missing[k]);
			if (h->n_missing > 6)
				buf_printf(out, " (+%d)", h->n_missing - 6);
			buf_adds(out, "\n");
		}
		buf_printf(out, "    check: tailtriage check %s", h->check);
		if (h->check_node) {
			clean(s1, sizeof s1, h->check_node);
			buf_printf(out, " --node %s", s1);
		}
		if (h->check_class) {
			clean(s1, sizeof s1, h->check_class);
			buf_printf(out, " --class %s", s1);
		}
		buf_printf(out, "%s%s\n", h->check_why ? "  - " : "", h->check_why ? h->check_why : "");
		/* what to do about a leading one (the first three with support,
		 * or whatever ranks first) */
		if (i == 0 || (i < 3 && h->score > 0)) {
			char rm[1400];
			diagnosis_format_remedy(h, rm, sizeof rm);
			if (*rm)
				buf_printf(out, "    %s\n", rm);
		}
	}

	buf_adds(out, "\nDecisions\n");
	for (int i = 0; i < d->n_dec; i++) {
		clean(s1, sizeof s1, d->dec[i].id);
		buf_printf(out, "  %-12s %s\n               %s\n", dx_verdict_name(d->dec[i].verdict), s1,
		           d->dec[i].reason);
	}

	/* the evidence the ranking read */
	buf_adds(out, "\nEvidence read by the leading hypotheses and the budgets\n");
	char **seen = NULL;
	int n_seen = 0;
	for (int i = 0; i < d->n_hyp && i < 5; i++)
		for (int k = 0; k < d->hyp[i].n_preds; k++)
			for (int j = 0; j < d->hyp[i].preds[k].n_names; j++)
				list_add(&seen, &n_seen, d->hyp[i].preds[k].names[j]);
	for (int i = 0; m && i < m->n_budgets; i++)
		if (m->budgets[i].evidence)
			list_add(&seen, &n_seen, m->budgets[i].evidence);
	for (int i = 0; i < n_seen; i++) {
		ev_line(out, e, seen[i]);
		free(seen[i]);
	}
	free(seen);
	buf_printf(out, "\n(%d evidence values in all; --format json lists them with provenance)\n",
	           e->n);
}
