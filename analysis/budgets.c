/*
 * budgets.c - the model's budgets (revisit triggers) evaluated on evidence.
 *
 * A budget names an evidence value, an operator and a threshold in a unit.
 * Evidence keeps durations in ms and shares as ratios 0..1; a budget
 * written in "%" is compared with 100 x the ratio. budget_judge_figure()
 * is the one place that decides, on the figure's 95 % interval as the
 * decisions are judged: breached only when the whole interval is past the
 * threshold, within when none of it is, otherwise "may be breached" (a
 * histogram's p99 interpolated to 18.8 ms inside its 10-25 ms bucket is
 * not shown to be over 12 ms). When a complete metric and the traces both
 * give a figure, the narrower interval is used and the other named. A
 * budget whose evidence is absent or missing is UNKNOWN, never "within".
 * evidence_format() is the one way a value is written for people.
 */
#include "evidence.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

/* v (in unit) in the unit of budget b. */
static double in_budget_unit(const ModelBudget *b, double v, const char *unit)
{
	if (b->unit && strcmp(b->unit, "%") == 0 && unit && strcmp(unit, "ratio") == 0)
		return v * 100;
	if (b->unit && strcmp(b->unit, "ratio") == 0 && unit && strcmp(unit, "%") == 0)
		return v / 100;
	return v;
}

/* The verdict of threshold t ("<" when below) on [lo, hi]. */
static int verdict(int below, double t, double lo, double hi)
{
	if (below)
		return hi < t ? BUDGET_BREACHED : lo >= t ? BUDGET_OK : BUDGET_MAYBE;
	return lo > t ? BUDGET_BREACHED : hi <= t ? BUDGET_OK : BUDGET_MAYBE;
}

int budget_judge_figure(const ModelBudget *b, double value, double lo, double hi, int has_ci,
                        const char *unit, BudgetResult *out)
{
	out->budget = b;
	out->value = isnan(value) ? NAN : in_budget_unit(b, value, unit);
	out->has_ci = has_ci && !isnan(value) && !isnan(lo) && !isnan(hi);
	out->lo = out->has_ci ? in_budget_unit(b, lo, unit) : out->value;
	out->hi = out->has_ci ? in_budget_unit(b, hi, unit) : out->value;
	if (isnan(out->value)) {
		out->state = BUDGET_UNKNOWN;
		return out->state;
	}
	int below = b->op && strcmp(b->op, "<") == 0;
	/* an interval that misses its own value (it should not) is widened
	 * to hold it: the rule never reads a figure as surer than itself */
	double l = fmin(out->lo, out->value), h = fmax(out->hi, out->value);
	out->state = verdict(below, b->threshold, l, h);
	return out->state;
}

/* How wide v's interval is: 0 for a figure without one (exact), INFINITY
 * when a side is unbounded. */
static double ci_width(const EvValue *v)
{
	if (!v->has_ci)
		return 0;
	if (!isfinite(v->lo) || !isfinite(v->hi))
		return INFINITY;
	return v->hi - v->lo;
}

/* "spans, 3,000 requests", and for a histogram quantile the bucket bounds
 * its ranks fall between (the interval: an interpolated value is not
 * known more precisely than its buckets). */
static void source_of(const Evidence *e, const EvValue *v, char *out, size_t sz)
{
	evidence_source_text(e, v, out, sz);
	size_t l = strlen(out);
	if (v->qkind == EV_Q_HISTOGRAM && v->has_ci && l < sz) {
		char a[32], b[32];
		evidence_format(v->lo, v->unit, a, sizeof a);
		evidence_format(v->hi, v->unit, b, sizeof b);
		snprintf(out + l, sz - l, ", histogram buckets %s to %s", isfinite(v->lo) ? a : "?",
		         isfinite(v->hi) ? b : "+Inf");
	}
}

int budget_judge(const ModelBudget *b, const Evidence *e, BudgetResult *out)
{
	memset(out, 0, sizeof *out);
	out->budget = b;
	out->state = BUDGET_UNKNOWN;
	out->value = out->lo = out->hi = NAN;
	if (b->evidence == NULL || e == NULL)
		return out->state;
	/* the figure and its twins from the other source (ev_best_source()
	 * keeps both when a complete metric and the traces give it) */
	const char *sfx[3] = {"", ".metric", ".spans"};
	const EvValue *cand[3];
	int nc = 0;
	for (int i = 0; i < 3; i++) {
		char name[320];
		snprintf(name, sizeof name, "%s%s", b->evidence, sfx[i]);
		const EvValue *v = evidence_get(e, name);
		if (v && !v->missing && !isnan(v->value))
			cand[nc++] = v;
	}
	if (nc == 0) {
		out->ev = evidence_get(e, b->evidence);
		return out->state;
	}
	int best = 0;
	for (int i = 1; i < nc; i++)
		if (ci_width(cand[i]) < ci_width(cand[best]))
			best = i;
	const EvValue *v = cand[best];
	out->ev = v;
	out->src = v->source;
	out->n = v->n;
	budget_judge_figure(b, v->value, v->lo, v->hi, v->has_ci, v->unit, out);
	source_of(e, v, out->source, sizeof out->source);
	/* the other source, when there is one, and what it says */
	for (int i = 0; i < nc; i++) {
		const EvValue *o = cand[i];
		if (o == v || o->source == v->source)
			continue;
		BudgetResult r;
		memset(&r, 0, sizeof r);
		budget_judge_figure(b, o->value, o->lo, o->hi, o->has_ci, o->unit, &r);
		char src[200], val[48], ci[96];
		source_of(e, o, src, sizeof src);
		budgets_format_value(b, r.value, val, sizeof val);
		budget_format_interval(&r, ci, sizeof ci);
		Buf ob;
		buf_init(&ob);
		buf_printf(&ob, "%s: %s%s%s", src, val, *ci ? " " : "", ci);
		snprintf(out->other, sizeof out->other, "%s", buf_str(&ob));
		buf_fini(&ob);
		break;
	}
	return out->state;
}

BudgetResult *budgets_evaluate(const Model *m, const Evidence *e, int *n)
{
	*n = 0;
	if (m == NULL || m->n_budgets == 0)
		return NULL;
	BudgetResult *r = calloc((size_t)m->n_budgets, sizeof *r);
	if (r == NULL)
		return NULL;
	for (int i = 0; i < m->n_budgets; i++)
		budget_judge(&m->budgets[i], e, &r[i]);
	*n = m->n_budgets;
	return r;
}

void budget_format_interval(const BudgetResult *r, char *out, size_t sz)
{
	if (sz == 0)
		return;
	out[0] = '\0';
	if (!r->has_ci || isnan(r->value))
		return;
	char a[48], b[48];
	budgets_format_value(r->budget, r->lo, a, sizeof a);
	budgets_format_value(r->budget, r->hi, b, sizeof b);
	/* "[10.0, 25.0 ms]": the unit once, after the upper bound */
	const char *sp = strchr(a, ' ');
	if (sp && isfinite(r->lo) && isfinite(r->hi) && strchr(b, ' ') && strcmp(sp, strchr(b, ' ')) == 0)
		a[sp - a] = '\0';
	snprintf(out, sz, "[%s, %s]", isfinite(r->lo) ? a : "?", isfinite(r->hi) ? b : "?");
}

const char *budget_state_text(int state)
{
	switch (state) {
	case BUDGET_BREACHED: return "breached";
	case BUDGET_OK: return "within";
	case BUDGET_MAYBE: return "may be breached";
	default: return "unknown";
	}
}

const char *budget_state_name(int state)
{
	switch (state) {
	case BUDGET_BREACHED: return "breached";
	case BUDGET_OK: return "ok";
	case BUDGET_MAYBE: return "maybe";
	default: return "unknown";
	}
}

void budget_describe(const BudgetResult *r, char *out, size_t sz)
{
	if (sz == 0)
		return;
	if (r->state == BUDGET_UNKNOWN) {
		snprintf(out, sz, "?");
		return;
	}
	char val[48], ci[100], t[48], other[240] = "", why[120] = "";
	budgets_format_value(r->budget, r->value, val, sizeof val);
	budget_format_interval(r, ci, sizeof ci);
	budgets_format_value(r->budget, r->budget->threshold, t, sizeof t);
	if (r->other[0])
		snprintf(other, sizeof other, ", the narrower interval; %s", r->other);
	if (r->state == BUDGET_MAYBE)
		snprintf(why, sizeof why, ": the interval holds the budget (%s)", t);
	snprintf(out, sz, "%s%s%s (%s%s)%s", val, *ci ? " " : "", ci,
	         r->source[0] ? r->source : "exact", other, why);
}

void budgets_format_value(const ModelBudget *b, double v, char *out, unsigned sz)
{
	if (isnan(v) || (b->unit && (strcmp(b->unit, "ratio") == 0 || strcmp(b->unit, "%") == 0 ||
	                             strcmp(b->unit, "index") == 0)))
		evidence_format(v, b->unit, out, sz);
	else
		snprintf(out, sz, "%.1f %s", v, b->unit ? b->unit : "");
}

void evidence_format(double v, const char *unit, char *out, unsigned sz)
{
	if (isnan(v))
		snprintf(out, sz, "?");
	else if (unit == NULL || unit[0] == '\0')
		snprintf(out, sz, "%.3g", v);
	else if (strcmp(unit, "ratio") == 0)
		snprintf(out, sz, "%.1f %%", 100 * v);
	else if (strcmp(unit, "%") == 0)
		snprintf(out, sz, "%.1f %%", v);
	else if (strcmp(unit, "ms") == 0)
		snprintf(out, sz, "%.1f ms", v);
	else if (strcmp(unit, "index") == 0)
		snprintf(out, sz, "%.2f", v);
	else if (strcmp(unit, "flag") == 0)
		snprintf(out, sz, "%s", v != 0 ? "yes" : "no");
	else if (v == floor(v) && fabs(v) < 1e12)
		snprintf(out, sz, "%.0f %s", v, unit);
	else
		snprintf(out, sz, "%.3g %s", v, unit);
}
