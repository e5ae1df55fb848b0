/*
 * budgets.c - the model's budgets (revisit triggers) evaluated on evidence.
 *
 * A budget names an evidence value, an operator and a threshold in a unit.
 * Evidence keeps durations in ms and shares as ratios 0..1; a budget
 * written in "%" is compared with 100 x the ratio (budget_judge(), the one
 * place that decides). A budget whose evidence is absent or missing is
 * UNKNOWN, never "within". evidence_format() is the one way a value is
 * written for people.
 */
#include "evidence.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* v (in unit) in the unit of budget b. */
static double in_budget_unit(const ModelBudget *b, double v, const char *unit)
{
	if (b->unit && strcmp(b->unit, "%") == 0 && unit && strcmp(unit, "ratio") == 0)
		return v * 100;
	if (b->unit && strcmp(b->unit, "ratio") == 0 && unit && strcmp(unit, "%") == 0)
		return v / 100;
	return v;
}

int budget_judge(const ModelBudget *b, double value, const char *unit, double *in_unit)
{
	double x = isnan(value) ? NAN : in_budget_unit(b, value, unit);
	if (in_unit)
		*in_unit = x;
	if (isnan(x))
		return BUDGET_UNKNOWN;
	int below = b->op && strcmp(b->op, "<") == 0;
	return (below ? x < b->threshold : x > b->threshold) ? BUDGET_BREACHED : BUDGET_OK;
}

BudgetResult *budgets_evaluate(const Model *m, const Evidence *e, int *n)
{
	*n = 0;
	if (m == NULL || m->n_budgets == 0)
		return NULL;
	BudgetResult *r = calloc((size_t)m->n_budgets, sizeof *r);
	if (r == NULL)
		return NULL;
	for (int i = 0; i < m->n_budgets; i++) {
		const ModelBudget *b = &m->budgets[i];
		BudgetResult *x = &r[i];
		x->budget = b;
		x->state = BUDGET_UNKNOWN;
		x->value = NAN;
		x->ev = b->evidence ? evidence_get(e, b->evidence) : NULL;
		if (x->ev == NULL || x->ev->missing)
			continue;
		x->state = budget_judge(b, x->ev->value, x->ev->unit, &x->value);
	}
	*n = m->n_budgets;
	return r;
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
