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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drills_priv.h"
#include "sheet.h"
#include "sanitize.h"

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
	int breached = 0, unknown = 0;
	for (int i = 0; i < n; i++) {
		breached += r[i].state == BUDGET_BREACHED;
		unknown += r[i].state == BUDGET_UNKNOWN;
	}
	char prov[128];
	snprintf(prov, sizeof prov, "derived: model budgets breached (%d of %d; %d unknown)", breached,
	         n, unknown);
	evidence_supply(e, "budgets.breached", breached, "count", EV_SRC_DERIVED, prov);
	snprintf(prov, sizeof prov, "derived: model budgets without evidence (%d of %d)", unknown, n);
	evidence_supply(e, "budgets.unknown", unknown, "count", EV_SRC_DERIVED, prov);
	free(r);
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
	    .model = opt->model, .win_from = opt->win_from, .win_to = opt->win_to,
	    .has_baseline = opt->has_baseline, .base_from = opt->base_from, .base_to = opt->base_to,
	    .analysis = opt->analysis, .skew = opt->skew,
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

static const char *state_name(int s)
{
	return s == BUDGET_BREACHED ? "breached" : s == BUDGET_OK ? "ok" : "unknown";
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
	cJSON_AddBoolToObject(o, "small_sample", v->small_sample);
	cJSON_AddStringToObject(o, "provenance", v->provenance);
	return o;
}

void diagnosis_json(const Diagnosis *d, const Model *m, Buf *out)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "catalog", d->catalog);
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
		cJSON_AddItemToObject(b, "value", num_or_null(br[i].value));
		cJSON_AddStringToObject(b, "state", state_name(br[i].state));
		cJSON_AddStringToObject(b, "source",
		                        br[i].ev ? evidence_source_name(br[i].ev->source) : "missing");
		cJSON_AddStringToObject(b, "provenance", br[i].ev ? br[i].ev->provenance : "no evidence");
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
			cJSON_AddStringToObject(po, "outcome", p->outcome == DX_HOLDS ? "holds"
			                                       : p->outcome == DX_NOT ? "does-not-hold"
			                                                              : "missing");
			cJSON_AddStringToObject(po, "expr", p->expr);
			cJSON_AddItemToObject(po, "evidence", strv_json(p->names, p->n_names));
			cJSON_AddItemToArray(ps, po);
		}
		cJSON_AddStringToObject(o, "mechanism", h->mechanism ? h->mechanism : "");
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
	buf_printf(out, "  %-44s %14s%s  %s\n", nm, val,
	           v && v->small_sample && !v->missing ? " (thin)" : "", prov);
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
			char v[48];
			budgets_format_value(mb, br[i].value, v, sizeof v);
			clean(s1, sizeof s1, mb->label ? mb->label : mb->id);
			clean(s2, sizeof s2, br[i].ev ? br[i].ev->provenance : "no evidence");
			buf_printf(out, "  %-9s %-40s %10s  %s\n",
			           br[i].state == BUDGET_BREACHED ? "BREACHED" : state_name(br[i].state), s1,
			           br[i].state == BUDGET_UNKNOWN ? "?" : v, s2);
		}
		buf_adds(out, "\n");
	}
	free(br);

	buf_adds(out, "Hypotheses (ranked; score = weights of holding supporting minus contradicting "
	              "predicates)\n");
	for (int i = 0; i < d->n_hyp; i++) {
		const DxHypothesis *h = &d->hyp[i];
		clean(s1, sizeof s1, h->node);
		buf_printf(out, "%2d. %-27s %-16s score %+.1f%s\n", h->rank, h->id, s1, h->score,
		           h->signature ? "" : (h->score > 0 ? "  (signature not seen)" : ""));
		buf_printf(out, "    %s\n", h->title);
		for (int k = 0; k < h->n_preds; k++) {
			const DxPredicate *p = &h->preds[k];
			if (p->outcome == DX_NOT)
				continue;
			char mark = p->outcome == DX_MISSING ? '?' : p->against ? '-' : '+';
			buf_printf(out, "    %c %s%s\n", mark, p->outcome == DX_MISSING ? "cannot tell: " : "",
			           p->text);
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
