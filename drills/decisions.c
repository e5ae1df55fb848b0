/*
 * decisions.c - actions an operator may take, each with guards over the
 * model and the evidence, a verdict and a reason that quotes the numbers.
 *
 *   raise-endpoint-concurrency  supported only when admission is the bound:
 *                               endpoint queue age (or executor occupancy)
 *                               over budget while late work and the pools
 *                               behind it are inside theirs;
 *   add-api-hosts               supported only with per-host saturation
 *                               spread over the fleet; "weak" otherwise;
 *   degrade:<node>              refused for a core or mandatory node;
 *                               supported for an optional node on the slow
 *                               path;
 *   add-capacity:<node>         (a bigger pool toward the node and more of
 *                               its servers) supported when the node's own
 *                               (server) time is what grew; a bigger pool
 *                               in front of a node whose own time is flat
 *                               only moves the queue into it;
 *   hold-rollout                supported while the objective or a budget
 *                               is breached.
 * degrade and add-capacity are evaluated for every dependency blamed by one
 * of the three leading hypotheses, and for every node a caller asks about
 * by name (a drill asks about each decision it offers): an asked decision
 * always gets a verdict, even for a node neither the model nor the data
 * knows.
 */
#include "drills_priv.h"
#include "evidence_name.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

static const char *const DECISIONS[] = {
	"raise-endpoint-concurrency", "add-api-hosts", "degrade", "add-capacity", "hold-rollout", NULL,
};

const char *const *decision_ids(void)
{
	return DECISIONS;
}

int decision_describe(const char *id, char *out, size_t sz)
{
	const char *colon = strchr(id, ':');
	size_t bl = colon ? (size_t)(colon - id) : strlen(id);
	const char *node = colon ? colon + 1 : "";
	int per_node = (bl == 7 && strncmp(id, "degrade", 7) == 0) ||
	               (bl == 12 && strncmp(id, "add-capacity", 12) == 0);
	if (per_node != (colon != NULL && *node != '\0'))
		return -1;
	/* what each decision does, never whether it is right: a drill shows
	 * these beside each other for the trainee to choose from */
	if (strcmp(id, "raise-endpoint-concurrency") == 0)
		snprintf(out, sz, "raise the endpoint's concurrency: more executor slots per process");
	else if (strcmp(id, "add-api-hosts") == 0)
		snprintf(out, sz, "add API hosts to the fleet");
	else if (bl == 7 && per_node)
		snprintf(out, sz, "answer without %s, with an omission marker, when time runs short", node);
	else if (per_node)
		snprintf(out, sz, "more capacity for %s: a bigger pool toward it and more %s servers "
		                  "behind it", node, node);
	else if (strcmp(id, "hold-rollout") == 0)
		snprintf(out, sz, "hold or restrict the rollout");
	else
		return -1;
	return 0;
}

const char *dx_verdict_name(int v)
{
	return v == DX_SUPPORTED ? "supported" : v == DX_REFUSED ? "refused" : "unsupported";
}

typedef struct Out {
	DxDecision *d;
	int n;
} Out;

static void add(Out *o, const char *id, int verdict, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void add(Out *o, const char *id, int verdict, const char *fmt, ...)
{
	char r[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r, sizeof r, fmt, ap);
	va_end(ap);
	o->d = xrealloc(o->d, (size_t)(o->n + 1) * sizeof *o->d);
	o->d[o->n].id = xstrdup(id);
	o->d[o->n].verdict = verdict;
	o->d[o->n].reason = xstrdup(r);
	o->n++;
}

static int val(const Evidence *e, const char *name, double *v)
{
	return evidence_value(e, name, v);
}

static double budget(const Evidence *e, const char *name, double dflt)
{
	char b[200];
	double v;
	snprintf(b, sizeof b, "budget.%s", name);
	return val(e, b, &v) ? v : dflt;
}

/* name's figure against a threshold in its own unit ("budget.X"), judged
 * by the budgets' rule (budget_judge_figure(): breached only when its
 * whole 95 % interval is over the threshold, BUDGET_MAYBE when the
 * interval holds it); BUDGET_UNKNOWN when missing. */
static int over_budget(const Evidence *e, const char *name, double threshold, BudgetResult *r)
{
	const EvValue *v = evidence_get(e, name);
	memset(r, 0, sizeof *r);
	r->state = BUDGET_UNKNOWN;
	if (v == NULL || v->missing)
		return r->state;
	ModelBudget b = {.op = ">", .threshold = threshold};
	budget_judge_figure(&b, v->value, v->lo, v->hi, v->has_ci, NULL, r);
	r->budget = NULL;
	return r->state;
}

static void pct(char *out, size_t sz, double r)
{
	snprintf(out, sz, "%.1f %%", 100 * r);
}

/* Pools (not the executor) with an occupancy: inside / over their budget. */
static void pool_state(const Evidence *e, const Model *m, Buf *inside, Buf *over, int *n_over)
{
	*n_over = 0;
	for (int i = 0; i < e->n; i++) {
		const EvValue *v = &e->v[i];
		size_t l = strlen(v->name);
		const char *suf = ".occupancy";
		if (strncmp(v->name, "pool.", 5) != 0 || l < 15 || strcmp(v->name + l - 10, suf) != 0 ||
		    v->missing)
			continue;
		char pool[96];
		snprintf(pool, sizeof pool, "%.*s", (int)(l - 15), v->name + 5);
		int executor = 0;
		for (int k = 0; m && k < m->n_pools; k++) {
			char seg[96];
			evidence_segment(m->pools[k].name, seg, sizeof seg);
			if (strcmp(seg, pool) == 0 && m->pools[k].kind &&
			    strcmp(m->pools[k].kind, "executor") == 0)
				executor = 1;
		}
		if (executor)
			continue;
		double b = budget(e, v->name, 0.82);
		char p[32], bp[32];
		pct(p, sizeof p, v->value);
		pct(bp, sizeof bp, b);
		Buf *to = v->value > b ? over : inside;
		if (v->value > b)
			(*n_over)++;
		buf_printf(to, "%s%s pool occupancy %s (budget %s)", to->len ? ", " : "", pool, p, bp);
	}
}

static void raise_concurrency(Out *o, const Evidence *e, const Model *m, const DxHypothesis *top)
{
	double qa, occ, late;
	int has_qa = val(e, "endpoint.queue_age.p99_ms", &qa);
	int has_occ = val(e, "executor.occupancy", &occ);
	int has_late = val(e, "late_work.ratio", &late);
	double qb = budget(e, "endpoint.queue_age.p99_ms", 12), lb = budget(e, "late_work.ratio", 0.02);
	Buf in, over;
	buf_init(&in);
	buf_init(&over);
	int n_pool_over;
	pool_state(e, m, &in, &over, &n_pool_over);
	const char *id = "raise-endpoint-concurrency";
	if (!has_qa && !has_occ) {
		add(o, id, DX_UNSUPPORTED,
		    "nothing shows that requests wait for the endpoint: endpoint queue age and executor "
		    "occupancy are missing");
		goto out;
	}
	/* an action is supported only on what is shown: a queue age whose 95 %
	 * interval reaches down to the budget may be inside it (a histogram's
	 * p99 interpolated in a 10-25 ms bucket reads 18.8 ms for a wait
	 * that sampled traces put at 7 ms) */
	BudgetResult qr;
	int qst = over_budget(e, "endpoint.queue_age.p99_ms", qb, &qr);
	int qa_unsure = qst == BUDGET_MAYBE;
	int queue_over = qst == BUDGET_BREACHED || (has_occ && occ >= 0.9);
	int late_over = has_late && late > lb;
	char qs[160] = "", ls[128] = "", os[96] = "";
	if (qa_unsure)
		snprintf(qs, sizeof qs,
		         "endpoint queue age p99 %.1f ms, 95 %% interval %.1f to %.1f ms, may be %s "
		         "its budget (%.0f ms)", qa, qr.lo, qr.hi, qa > qb ? "inside" : "over", qb);
	else if (has_qa)
		snprintf(qs, sizeof qs, "endpoint queue age p99 %.1f ms (budget %.0f ms)", qa, qb);
	if (has_late) {
		char a[32], b[32];
		pct(a, sizeof a, late);
		pct(b, sizeof b, lb);
		snprintf(ls, sizeof ls, "late work %s (budget %s)", a, b);
	}
	if (has_occ) {
		char a[32];
		pct(a, sizeof a, occ);
		snprintf(os, sizeof os, "executor occupancy %s", a);
	}
	if (!queue_over) {
		Buf l;
		buf_init(&l);
		const char *items[4] = {qs, os, buf_str(&in), ls};
		for (int i = 0; i < 4; i++)
			if (*items[i])
				buf_printf(&l, "%s%s", l.len ? ", " : "", items[i]);
		const char *to_whom =
		    top && top->node && strcmp(top->node, "none") != 0 ? top->node : "the dependencies";
		if (qa_unsure)
			add(o, id, DX_UNSUPPORTED,
			    "not shown that requests wait for the endpoint: %s: more concurrency may "
			    "only pass more demand to %s",
			    buf_str(&l), to_whom);
		else
			add(o, id, DX_UNSUPPORTED,
			    "%s %s inside budget: requests are not waiting for the endpoint, so more "
			    "concurrency would only pass more demand to %s",
			    buf_str(&l), late_over ? "(late work aside) are" : "are", to_whom);
		buf_fini(&l);
		goto out;
	}
	if (late_over || n_pool_over > 0) {
		add(o, id, DX_UNSUPPORTED,
		    "%s%s is over budget, but %s%s%s: admitting more requests would feed them",
		    *qs ? qs : os, "", late_over ? ls : "", late_over && n_pool_over ? "; " : "",
		    buf_str(&over));
		goto out;
	}
	add(o, id, DX_SUPPORTED,
	    "%s%s%s while %s%s%s: admission is the bound and what is behind it has room",
	    qs, *qs && *os ? ", " : "", os, *ls ? ls : "late work unknown", in.len ? ", " : "",
	    buf_str(&in));
out:
	buf_fini(&in);
	buf_fini(&over);
}

static void add_hosts(Out *o, const Evidence *e)
{
	const char *id = "add-api-hosts";
	double cpu = NAN, cmax = NAN, conc = NAN, occ = NAN, qa = NAN;
	val(e, "cpu.fleet_mean", &cpu);
	val(e, "cpu.host_max", &cmax);
	val(e, "placement.concentration", &conc);
	val(e, "executor.occupancy", &occ);
	val(e, "endpoint.queue_age.p99_ms", &qa);
	double qb = budget(e, "endpoint.queue_age.p99_ms", 12);
	char c1[32] = "?", c2[32] = "?", c3[32] = "?";
	if (!isnan(cpu))
		pct(c1, sizeof c1, cpu);
	if (!isnan(cmax))
		pct(c2, sizeof c2, cmax);
	if (!isnan(occ))
		pct(c3, sizeof c3, occ);
	const char *top = evidence_fact(e, "placement.top_host");
	if (!isnan(conc) && conc >= 2.5) {
		add(o, id, DX_UNSUPPORTED,
		    "weak: the slow requests concentrate on a few hosts (concentration %.1f, most on %s); "
		    "more hosts leave the placement that overloads them as it is",
		    conc, top ? top : "?");
		return;
	}
	BudgetResult qr;
	int saturated = (!isnan(cmax) && cmax >= 0.85) || (!isnan(cpu) && cpu >= 0.75) ||
	                (!isnan(occ) && occ >= 0.9 &&
	                 over_budget(e, "endpoint.queue_age.p99_ms", qb, &qr) == BUDGET_BREACHED);
	if (saturated) {
		add(o, id, DX_SUPPORTED,
		    "the hosts themselves saturate (fleet CPU %s, busiest host %s, executor occupancy %s)"
		    "%s: more hosts spread that load",
		    c1, c2, c3, isnan(conc) ? "" : " and the tail follows traffic, not placement");
		return;
	}
	add(o, id, DX_UNSUPPORTED,
	    "weak: no per-host saturation is shown (fleet CPU %s, busiest host %s, executor "
	    "occupancy %s); more hosts do not widen a per-process pool or a dependency's bound",
	    c1, c2, c3);
}

static void degrade(Out *o, const Evidence *e, const Model *m, const char *node,
                    const DxHypothesis *hyp, int n_hyp)
{
	char id[160], name[200];
	snprintf(id, sizeof id, "degrade:%s", node);
	const ModelNode *mn = dx_model_node(m, node);
	if (mn && mn->core == 1) {
		add(o, id, DX_REFUSED,
		    "%s is core: a response without it is not correct, so degrading it trades latency for "
		    "wrong answers", node);
		return;
	}
	if (mn && mn->mandatory == 1) {
		add(o, id, DX_REFUSED,
		    "%s is mandatory: the response needs it, so it cannot be left out to save time", node);
		return;
	}
	if (mn == NULL || mn->mandatory == MODEL_UNKNOWN) {
		add(o, id, DX_UNSUPPORTED,
		    "the model does not say whether %s may be left out; declare it before degrading it",
		    node);
		return;
	}
	evidence_name(name, sizeof name, "dep", node, "crit_share", 0);
	double cs;
	int on_path = val(e, name, &cs) && cs >= 0.2;
	int blamed_first = n_hyp > 0 && hyp[0].node && strcmp(hyp[0].node, node) == 0 && hyp[0].score > 0;
	if (on_path || blamed_first) {
		add(o, id, DX_SUPPORTED,
		    "%s is optional%s%s: leave it out with an explicit marker when the remaining time is "
		    "short, and watch the omission budget",
		    node, on_path ? " and owns part of the slow requests' critical path" : "",
		    blamed_first ? " and the leading hypothesis blames it" : "");
		return;
	}
	add(o, id, DX_UNSUPPORTED,
	    "%s is optional but not on the slow requests' path; degrading it would cost its value and "
	    "save little", node);
}

static void add_capacity(Out *o, const Evidence *e, const Model *m, const char *node)
{
	char id[160], n1[200], n2[200], n3[200];
	snprintf(id, sizeof id, "add-capacity:%s", node);
	evidence_name(n1, sizeof n1, "dep", node, "service.p99_ms", 0);
	evidence_name(n2, sizeof n2, "dep", node, "service.p99_ms", 1);
	double s, sb;
	if (!val(e, n1, &s) || !val(e, n2, &sb)) {
		add(o, id, DX_UNSUPPORTED,
		    "%s's own (server) time is not known for window and baseline: nothing shows its "
		    "capacity is the bound", node);
		return;
	}
	if (s >= 1.5 * sb && s - sb >= 5) {
		add(o, id, DX_SUPPORTED,
		    "%s's server p99 rose from %.1f to %.1f ms: its own capacity is the bound; add it "
		    "where the safe boundary and failure reserve are shown", node, sb, s);
		return;
	}
	/* both halves of the decision (decision_describe()): servers behind the
	 * node, and a bigger pool toward it, which is what a pool wait tempts
	 * one to grow */
	const char *pool = dx_pool_of(m, node);
	evidence_name(n3, sizeof n3, "pool", pool ? pool : node, "occupancy", 0);
	double occ;
	if (val(e, n3, &occ) && occ >= 0.9) {
		/* the tempting half first: it is what a one-line screen shows */
		add(o, id, DX_UNSUPPORTED,
		    "a bigger pool toward %s moves the queue into %s unless %s's safe capacity is shown: "
		    "its pool is %.0f %% occupied while its server p99 moved from %.1f to %.1f ms. More %s "
		    "servers do not shorten a wait in front of it",
		    node, node, node, 100 * occ, sb, s, node);
		return;
	}
	add(o, id, DX_UNSUPPORTED,
	    "a bigger pool toward %s moves the queue into %s: its server p99 moved only from %.1f to "
	    "%.1f ms, so the time is lost in front of %s, not in it. More %s servers do not shorten "
	    "that wait either (unless %s's safe capacity for the extra concurrency is shown)",
	    node, node, sb, s, node, node, node);
}

static void hold(Out *o, const Evidence *e, const DxHypothesis *hyp, int n_hyp)
{
	const char *id = "hold-rollout";
	double p99, obj, nb, nu = 0, nm = 0;
	int breach = val(e, "ingress.p99_ms", &p99) && val(e, "objective.p99_ms", &obj) && p99 > obj;
	/* budgets as budget_judge() judges them: breached only when the whole
	 * interval is past the threshold; "may be" is said, not counted */
	int have_budgets = val(e, "budgets.breached", &nb);
	int budgets = have_budgets && nb >= 1;
	val(e, "budgets.unknown", &nu);
	val(e, "budgets.maybe", &nm);
	char maybe[120] = "";
	if (nm >= 1)
		snprintf(maybe, sizeof maybe, "%.0f may be (%s interval%s the threshold)", nm,
		         nm == 1 ? "its" : "their", nm == 1 ? " holds" : "s hold");
	if (!breach && !budgets) {
		/* what is known about the budgets, without reading "not known" as
		 * "not breached" */
		char bud[320];
		if (!have_budgets)
			snprintf(bud, sizeof bud, "no budget is declared");
		else if (nu >= 1)
			snprintf(bud, sizeof bud, "no budget is shown to be breached%s%s%s, and %.0f cannot be "
			         "judged (their evidence is missing)", *maybe ? " (" : "", maybe,
			         *maybe ? ")" : "", nu);
		else if (*maybe)
			snprintf(bud, sizeof bud, "no budget is shown to be breached (%s)", maybe);
		else
			snprintf(bud, sizeof bud, "no budget is breached");
		if (!val(e, "ingress.p99_ms", &p99))
			add(o, id, DX_UNSUPPORTED,
			    "the endpoint's p99 is not known and %s: no evidence to hold for", bud);
		else if (!val(e, "objective.p99_ms", &obj))
			add(o, id, DX_UNSUPPORTED,
			    "no objective is known (p99 %.1f ms) and %s: nothing says the p99 is too slow; a "
			    "model with an objective would judge it",
			    p99, bud);
		else {
			/* the objective as the budgets judge it: a p99 under the
			 * objective whose interval reaches over it is not "met", it is
			 * not shown to be breached */
			BudgetResult r;
			if (over_budget(e, "ingress.p99_ms", obj, &r) == BUDGET_MAYBE) {
				char hi[64] = "has no upper bound";
				if (isfinite(r.hi))
					snprintf(hi, sizeof hi, "reaches %.1f ms", r.hi);
				add(o, id, DX_UNSUPPORTED,
				    "the objective is not shown to be breached (p99 %.1f ms, but its 95 %% interval "
				    "%s, over the %.0f ms objective) and %s: nothing shown to hold for; more "
				    "requests would tell whether the p99 is within it",
				    p99, hi, obj, bud);
			} else {
				add(o, id, DX_UNSUPPORTED,
				    "the objective is met (p99 %.1f ms) and %s: nothing to hold for", p99, bud);
			}
		}
		return;
	}
	Buf b;
	buf_init(&b);
	if (breach) {
		buf_printf(&b, "p99 %.1f ms is above the %.0f ms objective", p99, obj);
		/* the objective as the budgets judge it: a p99 whose interval
		 * reaches under it is not shown to breach it (the header says
		 * "may be breached"); holding is still the careful side */
		BudgetResult r;
		if (over_budget(e, "ingress.p99_ms", obj, &r) == BUDGET_MAYBE) {
			char lo[32] = "?", hi[32] = "unbounded";
			if (isfinite(r.lo))
				snprintf(lo, sizeof lo, "%.1f ms", r.lo);
			if (isfinite(r.hi))
				snprintf(hi, sizeof hi, "%.1f ms", r.hi);
			buf_printf(&b, " (its 95 %% interval, %s to %s, holds it: may be breached)", lo, hi);
		}
	}
	if (budgets)
		buf_printf(&b, "%s%.0f budget%s breached", b.len ? "; " : "", nb, nb == 1 ? "" : "s");
	if (*maybe)
		buf_printf(&b, "%s%s%s", b.len ? "; " : "", budgets ? "" : "budgets: ", maybe);
	int k = 0;
	for (int i = 0; i < n_hyp && k < 3; i++) {
		if (hyp[i].score <= 0 || hyp[i].not_applicable ||
		    strcmp(hyp[i].id, "insufficient-evidence") == 0)
			continue;
		buf_printf(&b, "%s%s (%s, check %s)", k == 0 ? "; unconfirmed leads: " : ", ", hyp[i].id,
		           hyp[i].node, hyp[i].check);
		k++;
	}
	buf_adds(&b, ". Hold or restrict exposure while the checks run");
	add(o, id, DX_SUPPORTED, "%s", buf_str(&b));
	buf_fini(&b);
}

static int is_dep(const Evidence *e, const Model *m, const char *node)
{
	for (int i = 0; i < e->n_deps; i++)
		if (strcmp(e->deps[i], node) == 0)
			return 1;
	return dx_model_node(m, node) != NULL;
}

void decisions_evaluate(const Evidence *e, const Model *m, const DxHypothesis *hyp, int n_hyp,
                        const char *const *decide, DxDecision **out, int *n_out)
{
	Out o = {NULL, 0};
	raise_concurrency(&o, e, m, n_hyp > 0 && hyp[0].score > 0 ? &hyp[0] : NULL);
	add_hosts(&o, e);
	/* nodes blamed by the three leading hypotheses, then the nodes of the
	 * per-node decisions asked for by name (however many) */
	int n_decide = 0;
	while (decide && decide[n_decide])
		n_decide++;
	const char **nodes = xcalloc((size_t)(3 + n_decide), sizeof *nodes);
	int nn = 0;
	for (int i = 0; i < n_hyp && i < 3; i++) {
		const char *nd = hyp[i].node;
		if (hyp[i].score <= 0 || nd == NULL || !is_dep(e, m, nd))
			continue;
		int dup = 0;
		for (int k = 0; k < nn; k++)
			dup |= strcmp(nodes[k], nd) == 0;
		if (!dup)
			nodes[nn++] = hyp[i].node;
	}
	/* asked about a node that nothing knows: the question gets a verdict
	 * all the same instead of being dropped */
	const char **unknown = xcalloc((size_t)(n_decide ? n_decide : 1), sizeof *unknown);
	int nu = 0;
	for (int i = 0; i < n_decide; i++) {
		const char *colon = strchr(decide[i], ':');
		if (colon == NULL || colon[1] == '\0')
			continue;
		/* only the per-node decisions of this file: an id it does not know
		 * (a drill's own action) is not the engine's to judge */
		size_t bl = (size_t)(colon - decide[i]);
		if (!(bl == 7 && strncmp(decide[i], "degrade", 7) == 0) &&
		    !(bl == 12 && strncmp(decide[i], "add-capacity", 12) == 0))
			continue;
		const char *nd = colon + 1;
		int dup = 0;
		for (int k = 0; k < nn; k++)
			dup |= strcmp(nodes[k], nd) == 0;
		for (int k = 0; k < nu; k++)
			dup |= strcmp(unknown[k], decide[i]) == 0;
		if (dup)
			continue;
		if (is_dep(e, m, nd))
			nodes[nn++] = nd;
		else
			unknown[nu++] = decide[i];
	}
	for (int k = 0; k < nn; k++)
		degrade(&o, e, m, nodes[k], hyp, n_hyp);
	for (int k = 0; k < nn; k++)
		add_capacity(&o, e, m, nodes[k]);
	for (int k = 0; k < nu; k++)
		add(&o, unknown[k], DX_UNSUPPORTED,
		    "%s is neither a node of the model nor a dependency seen in the data: nothing "
		    "shows what acting on it would do",
		    strchr(unknown[k], ':') + 1);
	free(nodes);
	free(unknown);
	hold(&o, e, hyp, n_hyp);
	*out = o.d;
	*n_out = o.n;
}
