/*
 * budgets.c - the model's budgets (revisit triggers) evaluated on evidence.
 *
 * A budget names an evidence value, an operator and a threshold in a unit.
 * Evidence keeps durations in ms and shares as ratios 0..1; a budget
 * written in "%" is compared with 100 x the ratio. A budget whose evidence
 * is absent or missing is UNKNOWN, never "within".
 */
#include "evidence.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double in_budget_unit(const ModelBudget *b, const EvValue *v)
{
	double x = v->value;
	if (b->unit && strcmp(b->unit, "%") == 0 && v->unit && strcmp(v->unit, "ratio") == 0)
		x *= 100;
	else if (b->unit && strcmp(b->unit, "ratio") == 0 && v->unit && strcmp(v->unit, "%") == 0)
		x /= 100;
	return x;
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
		x->value = in_budget_unit(b, x->ev);
		int below = b->op && strcmp(b->op, "<") == 0;
		x->state = (below ? x->value < b->threshold : x->value > b->threshold) ? BUDGET_BREACHED
		                                                                       : BUDGET_OK;
	}
	*n = m->n_budgets;
	return r;
}

void budgets_format_value(const ModelBudget *b, double v, char *out, unsigned sz)
{
	if (isnan(v))
		snprintf(out, sz, "?");
	else if (b->unit && strcmp(b->unit, "ratio") == 0)
		snprintf(out, sz, "%.1f %%", 100 * v);
	else if (b->unit && strcmp(b->unit, "%") == 0)
		snprintf(out, sz, "%.1f %%", v);
	else
		snprintf(out, sz, "%.1f %s", v, b->unit ? b->unit : "");
}
