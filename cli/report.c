/*
 * report.c - text and JSON renderings of an Analysis.
 *
 * Text conventions: "?" is an unknown value (e.g. a call whose server span
 * is missing), "-" a value that does not apply (a local span has no client
 * wait). Nothing unknown is ever printed as 0. Strings from the data are
 * printed through the shared sanitizer (common/sanitize.h), so escape
 * sequences and control bytes never reach a terminal.
 */
#include "report.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "diagnose.h"
#include "endpoints.h"
#include "timefmt.h"
#include "route.h"
#include "sanitize.h"

void report_ms(char *out, size_t sz, double v, int64_t n, int applicable)
{
	if (!applicable)
		snprintf(out, sz, "-");
	else if (n == 0 || isnan(v))
		snprintf(out, sz, "?");
	else
		snprintf(out, sz, "%.1f", v);
}

/* Strings from data reach a terminal: the shared sanitizer. */
static void clean(char *out, size_t sz, const char *s)
{
	san_clean(s ? s : "", out, sz);
}

static const char *edge_name(int e)
{
	return e == EDGE_PARALLEL ? "parallel" : e == EDGE_SERIAL ? "serial" : "root";
}

static const char *type_name(int t)
{
	switch (t) {
	case NODE_ROOT: return "root";
	case NODE_CALL: return "call";
	case NODE_ORPHANS: return "orphans";
	default: return "local";
	}
}

static void node_name(const Analysis *a, const DagNode *d, char *out, size_t sz)
{
	char lab[128];
	clean(lab, sizeof lab, d->label);
	(void)a;
	snprintf(out, sz, "%s", lab);
}

static void tags(const DagNode *d, char *out, size_t sz)
{
	out[0] = '\0';
	if (d->mandatory == 1)
		snprintf(out, sz, "M");
	else if (d->mandatory == 0)
		snprintf(out, sz, "opt");
	if (d->core == 1)
		snprintf(out + strlen(out), sz - strlen(out), "%score", out[0] ? "," : "");
}

static void fmt_range(char *out, size_t sz, const PopSummary *p)
{
	if (p->requests == 0 && p->from_ns == 0 && p->to_ns == 0) {
		snprintf(out, sz, "(no requests)");
		return;
	}
	char a[40], b[40];
	time_format(p->from_ns, a, sizeof a);
	time_format(p->to_ns, b, sizeof b);
	snprintf(out, sz, "%s .. %s", a, b);
}

/* Node ids by window critical-path share, largest first (ties: id), in a
 * malloc'd array of a->n_nodes entries. */
static const Analysis *g_crit_a;

static int cmp_crit(const void *x, const void *y)
{
	const DagNode *p = &g_crit_a->nodes[*(const int *)x], *q = &g_crit_a->nodes[*(const int *)y];
	if (p->crit[0].share != q->crit[0].share)
		return p->crit[0].share < q->crit[0].share ? 1 : -1;
	return (p->id > q->id) - (p->id < q->id);
}

static int *crit_order(const Analysis *a)
{
	int *order = xmalloc((size_t)(a->n_nodes ? a->n_nodes : 1) * sizeof *order);
	for (int i = 0; i < a->n_nodes; i++)
		order[i] = i;
	g_crit_a = a;
	qsort(order, (size_t)a->n_nodes, sizeof *order, cmp_crit);
	return order;
}

/* "Window    <range>  1200 requests, 20.0 req/s", or with a sample
 * "... 20000 of 165000 requests read, 275.0 req/s" (the rate is the
 * range's). */
static void pop_line(Buf *o, const char *label, const char *rng, const PopSummary *p)
{
	if (p->sample_of > 0)
		buf_printf(o, "%s %s  %lld of %lld requests read, %.1f req/s\n", label, rng,
		           (long long)p->requests, (long long)p->sample_of, p->rate_rps);
	else
		buf_printf(o, "%s %s  %lld requests, %.1f req/s\n", label, rng, (long long)p->requests,
		           p->rate_rps);
}

/* "          note: ..." wrapped at 90 columns, the lines after the first
 * indented as far as the note. */
static void wrap_note(Buf *o, const char *text)
{
	char clean[2048];
	san_clean(text, clean, sizeof clean);
	const char *s = clean;
	int first = 1;
	while (*s) {
		int width = 74;
		size_t n = strlen(s);
		size_t cut = n;
		if ((int)n > width) {
			cut = (size_t)width;
			while (cut > 0 && s[cut] != ' ')
				cut--;
			if (cut == 0)
				cut = (size_t)width;
		}
		buf_printf(o, "          %s%.*s\n", first ? "note: " : "      ", (int)cut, s);
		s += cut;
		while (*s == ' ')
			s++;
		first = 0;
	}
}

void report_text(const Analysis *a, Buf *o)
{
	char ep[160], rng[100];
	clean(ep, sizeof ep, a->endpoint);
	if (a->root_service[0] == '\0' && a->root_operation[0] == '\0')
		snprintf(ep, sizeof ep, "(none: no request in the range)");
	buf_printf(o, "Endpoint  %s\n", ep);
	if (a->class_filter) {
		char cf[64];
		clean(cf, sizeof cf, a->class_filter);
		buf_printf(o, "Class     %s only\n", cf);
	}
	const PopSummary *w = &a->pop[POP_WINDOW], *b = &a->pop[POP_BASELINE];
	fmt_range(rng, sizeof rng, w);
	pop_line(o, "Window   ", rng, w);
	if (b->present) {
		fmt_range(rng, sizeof rng, b);
		pop_line(o, "Baseline ", rng, b);
	}
	if (w->sample_of > 0 || (b->present && b->sample_of > 0))
		buf_adds(o, "          (read: a uniform sample, evenly spaced in time; the figures below\n"
		            "          are the sample's, with its size, but tail ownership covers every\n"
		            "          slow request; --sample all reads all)\n");
	char v[32], bv[32];
	report_ms(v, sizeof v, w->ingress.p99, w->ingress.n, 1);
	if (a->objective_ms > 0) {
		/* the budgets' rule (analysis/budgets.c): breached only when the
		 * p99's whole interval is over the objective */
		ModelBudget ob = {.id = "objective", .op = ">", .threshold = a->objective_ms, .unit = "ms"};
		BudgetResult r;
		budget_judge_figure(&ob, w->ingress.p99, w->ingress.p99_lo, w->ingress.p99_hi, 1, "ms", &r);
		char ci[96] = "", status[160];
		budget_format_interval(&r, ci, sizeof ci);
		if (w->ingress.n == 0)
			snprintf(status, sizeof status, "NO DATA");
		else if (r.state == BUDGET_MAYBE)
			snprintf(status, sizeof status, "may be breached (95 %% interval %s holds it)", ci);
		else
			snprintf(status, sizeof status, "%s", r.state == BUDGET_BREACHED ? "BREACHED" : "met");
		buf_printf(o, "Objective p99 <= %.0f ms: window p99 %s ms (n=%lld) %s", a->objective_ms, v,
		           (long long)w->ingress.n, status);
	} else {
		const Model *m = a->asked.model;
		buf_printf(o, "Ingress   window p99 %s ms (n=%lld), no objective (%s)", v,
		           (long long)w->ingress.n,
		           m == NULL      ? "no model"
		           : m->inferred ? "the inferred model sets none"
		                         : "the model sets none");
	}
	if (b->present) {
		report_ms(bv, sizeof bv, b->ingress.p99, b->ingress.n, 1);
		buf_printf(o, "; baseline p99 %s ms (n=%lld)", bv, (long long)b->ingress.n);
	}
	buf_adds(o, "\n");
	if (quant_small_sample(w->ingress.n) && w->ingress.n > 0)
		buf_printf(o, "          note: p99 from %lld requests is close to the maximum; treat as noise\n",
		           (long long)w->ingress.n);
	Buf thin_note;
	buf_init(&thin_note);
	if (analysis_thin_hint(a, &thin_note))
		wrap_note(o, buf_str(&thin_note));
	buf_fini(&thin_note);
	if (a->n_classes > 0) {
		buf_adds(o, "Classes  ");
		for (int c = 0; c < a->n_classes; c++) {
			char cn[64];
			clean(cn, sizeof cn, a->classes[c]);
			buf_printf(o, " %s %.1f%%", cn, w->requests ? 100.0 * (double)w->class_requests[c] / (double)w->requests : 0.0);
			if (b->present)
				buf_printf(o, " (baseline %.1f%%)",
				           b->requests ? 100.0 * (double)b->class_requests[c] / (double)b->requests : 0.0);
			buf_adds(o, c + 1 < a->n_classes ? "," : "");
		}
		buf_adds(o, "\n");
	}

	if (w->requests == 0)
		buf_printf(o, "\nNo requests of this endpoint in the window (%lld traces read). Check --window,\n"
		              "--class and the model's root, or import data first.\n",
		           (long long)a->dq.traces);
	buf_adds(o, "\nRequest DAG  (p99 in ms; '-' serial, '=' parallel fan-out; "
	            "'?' unknown split, '-' not applicable)\n");
	buf_printf(o, "%-34s %-8s %7s %8s %7s %7s %7s", "node", "tags", "calls", "total", "queue",
	           "wait", "service");
	if (b->present)
		buf_printf(o, " | %8s %7s %7s %7s %8s", "base tot", "queue", "wait", "service", "d total");
	buf_adds(o, "\n");
	for (int i = 0; i < a->n_nodes; i++) {
		const DagNode *d = &a->nodes[i];
		char name[200], nm[128], tg[16];
		node_name(a, d, nm, sizeof nm);
		int indent = d->depth * 2;
		if (indent > 20)
			indent = 20;
		char mark = d->edge == EDGE_PARALLEL ? '=' : d->edge == EDGE_SERIAL ? '-' : ' ';
		snprintf(name, sizeof name, "%*s%c %s", indent, "", mark, nm);
		tags(d, tg, sizeof tg);
		const NodeStats *s = &d->pop[0];
		int call = d->type == NODE_CALL;
		/* a node of database calls only has no client wait to know: '-' */
		int wait_unknown = call && s->calls > s->db_calls;
		char t[16], q[16], wt[16], sv[16];
		report_ms(t, sizeof t, s->total.p99, s->total.n, 1);
		report_ms(q, sizeof q, s->queue.p99, s->queue.n, 1);
		report_ms(wt, sizeof wt, s->client_wait.p99, s->client_wait.n, wait_unknown);
		report_ms(sv, sizeof sv, s->service.p99, s->service.n, 1);
		buf_printf(o, "%-34.34s %-8s %7lld %8s %7s %7s %7s", name, tg, (long long)s->calls, t, q,
		           wt, sv);
		if (b->present) {
			const NodeStats *z = &d->pop[1];
			char bt[16], bq[16], bw[16], bs[16], dt[16];
			report_ms(bt, sizeof bt, z->total.p99, z->total.n, 1);
			report_ms(bq, sizeof bq, z->queue.p99, z->queue.n, 1);
			report_ms(bw, sizeof bw, z->client_wait.p99, z->client_wait.n,
			          call && z->calls > z->db_calls);
			report_ms(bs, sizeof bs, z->service.p99, z->service.n, 1);
			if (s->total.n && z->total.n)
				snprintf(dt, sizeof dt, "%+.1f", s->total.p99 - z->total.p99);
			else
				snprintf(dt, sizeof dt, "?");
			buf_printf(o, " | %8s %7s %7s %7s %8s", bt, bq, bw, bs, dt);
		}
		if (call && s->unknown_split)
			buf_printf(o, "  (%lld calls without server span)", (long long)s->unknown_split);
		if (call && s->db_calls)
			buf_printf(o, "  (%lld database calls: client time)", (long long)s->db_calls);
		buf_adds(o, "\n");
	}

	/* a handful of slow requests: each share is one or two of them */
	int thin = w->slow_requests < ANALYSIS_THIN_SLOW;
	int bthin = b->present && b->slow_requests < ANALYSIS_THIN_SLOW;
	buf_printf(o, "\nTail ownership  (critical path of the %lld slowest requests%s, ingress %s %.1f ms)\n",
	           (long long)w->slow_requests, thin ? " (thin)" : "",
	           (a->objective_ms > 0 && w->slow_threshold_ms == a->objective_ms) ? ">" : ">=",
	           w->slow_threshold_ms);
	if (w->tail_pulled) {
		/* not the sample's slow requests: say whose they are */
		char src[200];
		analysis_slow_source(a, POP_WINDOW, src, sizeof src);
		buf_printf(o, "(%s; the other figures are the sample's)\n", src);
	}
	buf_printf(o, "%-28s %7s %9s %9s %9s", "node", "share", "queue ms", "wait ms", "svc ms");
	if (b->present)
		buf_printf(o, " %10s", "base share");
	buf_adds(o, "\n");
	/* nodes by share, largest first; only those that own >= 1 % */
	int n = a->n_nodes;
	int *order = crit_order(a);
	for (int k = 0; k < n; k++) {
		const DagNode *d = &a->nodes[order[k]];
		const CritShare *c = &d->crit[0];
		if (c->share < 0.01)
			continue;
		char nm[128];
		node_name(a, d, nm, sizeof nm);
		int slow = w->slow_requests > 0 ? (int)w->slow_requests : 1;
		buf_printf(o, "%-28.28s %6.1f%% %9.1f %9.1f %9.1f", nm, 100 * c->share,
		           c->ms[COMP_QUEUE] / slow, c->ms[COMP_WAIT] / slow, c->ms[COMP_SERVICE] / slow);
		if (b->present)
			buf_printf(o, " %9.1f%%", 100 * d->crit[1].share);
		buf_adds(o, "\n");
	}
	free(order);
	buf_adds(o, "(ms columns: mean critical-path time per slow request)\n");
	if (thin || bthin)
		buf_printf(o, "(thin: fewer than %d slow requests in the %s; a share is then a handful "
		              "of requests, not a tendency)\n",
		           ANALYSIS_THIN_SLOW, thin && bthin ? "window and the baseline"
		                               : thin        ? "window"
		                                             : "baseline (base share)");

	const DataQuality *q = &a->dq;
	buf_printf(o, "\nData quality\n");
	buf_printf(o, "  traces read %lld, spans %lld%s\n", (long long)q->traces, (long long)q->spans,
	           a->pop[0].sample_of > 0 || a->pop[1].sample_of > 0
	               ? " (the sampled requests' traces only)" : "");
	if (q->db_calls)
		buf_printf(o, "  %lld database calls (db.system.name or db.system set): leaf calls, no "
		              "server span expected; their client time is the call's time\n",
		           (long long)q->db_calls);
	int any = 0;
#define DQ(field, text)                                                      \
	if (q->field) {                                                          \
		buf_printf(o, "  %lld %s\n", (long long)q->field, text);             \
		any = 1;                                                             \
	}
	DQ(other_endpoint, "traces of other endpoints (not analysed)")
	DQ(rootless, "traces without a root span or a server span (not analysed)")
	DQ(no_entry, "traces whose root is a client span with no server span below (no endpoint; "
	             "not analysed)")
	DQ(entered_below, "requests entered below their trace's root (a load generator's or a "
	                  "browser's client span, or a caller missing from the data): the DAG starts "
	                  "at the entry server span")
	DQ(cycles, "traces rejected: parent links form a cycle")
	DQ(orphan_spans, "spans whose parent is missing (kept under '(missing parent)', off the critical path)")
	DQ(extra_roots, "extra parentless spans in a trace (kept as orphans)")
	DQ(unpaired_calls, "client calls without a server span (split unknown)")
	DQ(clipped, "server spans ending just after their client (timing, not work; clipped)")
	DQ(outside_parent, "spans wholly outside their parent (off the critical path)")
	DQ(late_server, "server spans still running after their caller gave up (late work; clipped to the call)")
	DQ(skew_serial, "sibling pairs overlapping within the skew tolerance (taken as serial; "
	                "the overlap is split on the critical path)")
	DQ(held, "spans beside a local span of their service that covers them, taken as its contents "
	         "(a framework's handler recorded as a sibling: the critical path goes through them)")
	DQ(unrecognised_sources, "files or request bodies with nothing their format reads (nothing stored; e.g. a traces body sent to /v1/metrics)")
#undef DQ
	if (q->skew) {
		buf_printf(o, "  %lld clock-skew findings: server span overruns its client by more than 1 %% "
		              "(worst %.1f ms; centred in the client for the critical path)\n",
		           (long long)q->skew, q->skew_max_ms);
		any = 1;
	}
	if (!any)
		buf_adds(o, "  no findings\n");
}

/* ---- JSON ----------------------------------------------------------------- */

static cJSON *num_or_null(double v, int64_t n)
{
	return (n == 0 || isnan(v)) ? cJSON_CreateNull() : cJSON_CreateNumber(round(v * 1000) / 1000);
}

static cJSON *quant_json(const Quant *q)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddItemToObject(o, "p50_ms", num_or_null(q->p50, q->n));
	cJSON_AddItemToObject(o, "p90_ms", num_or_null(q->p90, q->n));
	cJSON_AddItemToObject(o, "p99_ms", num_or_null(q->p99, q->n));
	cJSON_AddItemToObject(o, "max_ms", num_or_null(q->max, q->n));
	cJSON_AddNumberToObject(o, "n", (double)q->n);
	cJSON_AddBoolToObject(o, "small_sample", q->n > 0 && quant_small_sample(q->n));
	return o;
}

/* "service" is both the node's service name and its service-time split in
 * the documented schema; it is an object carrying the quantiles and the
 * name, and the name is also given flat as "service_name". */
static void stats_json(cJSON *o, const NodeStats *s, const char *service_name)
{
	cJSON_AddNumberToObject(o, "calls", (double)s->calls);
	cJSON_AddNumberToObject(o, "unknown_split", (double)s->unknown_split);
	cJSON_AddNumberToObject(o, "db_calls", (double)s->db_calls);
	cJSON_AddItemToObject(o, "total", quant_json(&s->total));
	cJSON_AddItemToObject(o, "client_wait", quant_json(&s->client_wait));
	cJSON *sv = quant_json(&s->service);
	cJSON_AddStringToObject(sv, "name", service_name);
	cJSON_AddItemToObject(o, "service", sv);
	cJSON_AddItemToObject(o, "queue", quant_json(&s->queue));
}

static cJSON *tri(int v)
{
	return v == MODEL_UNKNOWN ? cJSON_CreateNull() : cJSON_CreateBool(v);
}

static cJSON *pop_json(const Analysis *a, const PopSummary *p)
{
	cJSON *o = cJSON_CreateObject();
	char t[40];
	time_format(p->from_ns, t, sizeof t);
	cJSON_AddStringToObject(o, "from", t);
	time_format(p->to_ns, t, sizeof t);
	cJSON_AddStringToObject(o, "to", t);
	cJSON_AddNumberToObject(o, "requests", (double)p->requests);
	if (p->sample_of > 0)
		cJSON_AddNumberToObject(o, "sample_of", (double)p->sample_of);
	cJSON_AddNumberToObject(o, "rate_rps", round(p->rate_rps * 1000) / 1000);
	cJSON_AddNumberToObject(o, "errors", (double)p->errors);
	cJSON_AddItemToObject(o, "ingress", quant_json(&p->ingress));
	cJSON *mix = cJSON_AddObjectToObject(o, "class_mix");
	for (int c = 0; c < a->n_classes; c++)
		cJSON_AddNumberToObject(mix, a->classes[c],
		                        p->requests ? round(1e4 * (double)p->class_requests[c] / (double)p->requests) / 1e4 : 0);
	cJSON_AddNumberToObject(o, "slow_requests", (double)p->slow_requests);
	cJSON_AddBoolToObject(o, "slow_thin", p->slow_requests < ANALYSIS_THIN_SLOW);
	cJSON_AddNumberToObject(o, "slow_threshold_ms", round(p->slow_threshold_ms * 1000) / 1000);
	if (p->tail_pulled) {
		/* the slow population is a pulled slowest set, not the sample's */
		cJSON *ts = cJSON_AddObjectToObject(o, "slow_from_slowest_set");
		cJSON_AddNumberToObject(ts, "requested", (double)p->tail_requested);
		if (p->tail_of >= 0)
			cJSON_AddNumberToObject(ts, "listed", (double)p->tail_of);
	}
	char src[200];
	analysis_slow_source(a, p == &a->pop[POP_BASELINE] ? POP_BASELINE : POP_WINDOW, src, sizeof src);
	cJSON_AddStringToObject(o, "slow_source", src);
	return o;
}

static const char *crit_name(const DagNode *d)
{
	return d->type == NODE_CALL && d->dependency ? d->dependency : d->label;
}

static cJSON *report_json_tree(const Analysis *a)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "endpoint", a->endpoint);
	cJSON_AddStringToObject(r, "root_service", a->root_service);
	cJSON_AddStringToObject(r, "root_operation", a->root_operation);
	if (a->route_rule >= 0)
		cJSON_AddStringToObject(r, "route_rule", route_rule_name(a->route_rule));
	if (a->class_filter)
		cJSON_AddStringToObject(r, "class", a->class_filter);
	else
		cJSON_AddNullToObject(r, "class");
	cJSON *obj = cJSON_AddObjectToObject(r, "objective");
	const PopSummary *w = &a->pop[0];
	if (a->objective_ms > 0) {
		cJSON_AddNumberToObject(obj, "threshold_ms", a->objective_ms);
		cJSON_AddStringToObject(obj, "status", w->ingress.n == 0 ? "no-data"
		                                       : w->ingress.p99 > a->objective_ms ? "breached" : "met");
	} else {
		cJSON_AddNullToObject(obj, "threshold_ms");
		cJSON_AddStringToObject(obj, "status", "no-objective");
	}
	cJSON_AddItemToObject(r, "window", pop_json(a, w));
	if (a->pop[1].present)
		cJSON_AddItemToObject(r, "baseline", pop_json(a, &a->pop[1]));
	else
		cJSON_AddNullToObject(r, "baseline");
	cJSON *classes = cJSON_AddArrayToObject(r, "classes");
	for (int c = 0; c < a->n_classes; c++)
		cJSON_AddItemToArray(classes, cJSON_CreateString(a->classes[c]));

	cJSON *nodes = cJSON_AddArrayToObject(r, "nodes");
	for (int i = 0; i < a->n_nodes; i++) {
		const DagNode *d = &a->nodes[i];
		cJSON *n = cJSON_CreateObject();
		cJSON_AddNumberToObject(n, "id", d->id);
		cJSON_AddNumberToObject(n, "parent", d->parent);
		cJSON_AddNumberToObject(n, "depth", d->depth);
		cJSON_AddStringToObject(n, "type", type_name(d->type));
		cJSON_AddStringToObject(n, "service_name", d->service);
		cJSON_AddStringToObject(n, "operation", d->operation);
		if (d->type == NODE_CALL && d->dependency)
			cJSON_AddStringToObject(n, "dependency", d->dependency);
		else
			cJSON_AddNullToObject(n, "dependency");
		cJSON_AddStringToObject(n, "label", d->label);
		cJSON_AddStringToObject(n, "edge", edge_name(d->edge));
		if (d->group >= 0)
			cJSON_AddNumberToObject(n, "group", d->group);
		else
			cJSON_AddNullToObject(n, "group");
		cJSON_AddItemToObject(n, "mandatory", tri(d->mandatory));
		cJSON_AddItemToObject(n, "core", tri(d->core));
		stats_json(n, &d->pop[0], d->service);
		if (a->pop[1].present) {
			cJSON *b = cJSON_AddObjectToObject(n, "baseline");
			stats_json(b, &d->pop[1], d->service);
		} else {
			cJSON_AddNullToObject(n, "baseline");
		}
		cJSON *cls = cJSON_AddObjectToObject(n, "by_class");
		for (int c = 0; c < a->n_classes; c++) {
			cJSON *co = cJSON_AddObjectToObject(cls, a->classes[c]);
			stats_json(co, &d->by_class[0][c], d->service);
		}
		cJSON *cp = cJSON_AddObjectToObject(n, "critical_path");
		cJSON_AddNumberToObject(cp, "share", round(d->crit[0].share * 1e4) / 1e4);
		cJSON_AddNumberToObject(cp, "queue_ms", round(d->crit[0].ms[COMP_QUEUE] * 1000) / 1000);
		cJSON_AddNumberToObject(cp, "client_wait_ms", round(d->crit[0].ms[COMP_WAIT] * 1000) / 1000);
		cJSON_AddNumberToObject(cp, "service_ms", round(d->crit[0].ms[COMP_SERVICE] * 1000) / 1000);
		cJSON *ex = cJSON_AddArrayToObject(n, "slowest_traces");
		for (int k = 0; k < d->n_slowest; k++) {
			cJSON *e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "trace_id", d->slowest[k].trace_id);
			cJSON_AddNumberToObject(e, "ms", round(d->slowest[k].ms * 1000) / 1000);
			cJSON_AddItemToArray(ex, e);
		}
		cJSON_AddItemToArray(nodes, n);
	}

	cJSON *cpa = cJSON_AddArrayToObject(r, "critical_path");
	int n = a->n_nodes;
	int *order = crit_order(a);
	for (int k = 0; k < n; k++) {
		const DagNode *d = &a->nodes[order[k]];
		if (d->crit[0].share <= 0)
			continue;
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "dependency", crit_name(d));
		cJSON_AddNumberToObject(e, "node", d->id);
		cJSON_AddNumberToObject(e, "share", round(d->crit[0].share * 1e4) / 1e4);
		double slow = w->slow_requests ? (double)w->slow_requests : 1;
		cJSON_AddNumberToObject(e, "queue_ms", round(d->crit[0].ms[COMP_QUEUE] / slow * 1000) / 1000);
		cJSON_AddNumberToObject(e, "client_wait_ms", round(d->crit[0].ms[COMP_WAIT] / slow * 1000) / 1000);
		cJSON_AddNumberToObject(e, "service_ms", round(d->crit[0].ms[COMP_SERVICE] / slow * 1000) / 1000);
		if (a->pop[1].present)
			cJSON_AddNumberToObject(e, "baseline_share", round(d->crit[1].share * 1e4) / 1e4);
		cJSON_AddItemToArray(cpa, e);
	}
	free(order);

	const DataQuality *q = &a->dq;
	cJSON *dq = cJSON_AddObjectToObject(r, "data_quality");
	cJSON_AddNumberToObject(dq, "traces", (double)q->traces);
	cJSON_AddNumberToObject(dq, "spans", (double)q->spans);
	cJSON_AddNumberToObject(dq, "other_endpoint", (double)q->other_endpoint);
	cJSON_AddNumberToObject(dq, "rootless_traces", (double)q->rootless);
	cJSON_AddNumberToObject(dq, "no_entry", (double)q->no_entry);
	cJSON_AddNumberToObject(dq, "entered_below", (double)q->entered_below);
	cJSON_AddNumberToObject(dq, "cycles", (double)q->cycles);
	cJSON_AddNumberToObject(dq, "orphan_spans", (double)q->orphan_spans);
	cJSON_AddNumberToObject(dq, "extra_roots", (double)q->extra_roots);
	cJSON_AddNumberToObject(dq, "unpaired_calls", (double)q->unpaired_calls);
	cJSON_AddNumberToObject(dq, "db_calls", (double)q->db_calls);
	cJSON_AddNumberToObject(dq, "unrecognised_sources", (double)q->unrecognised_sources);
	cJSON_AddNumberToObject(dq, "clipped", (double)q->clipped);
	cJSON_AddNumberToObject(dq, "clock_skew", (double)q->skew);
	cJSON_AddNumberToObject(dq, "clock_skew_max_ms", round(q->skew_max_ms * 1000) / 1000);
	cJSON_AddNumberToObject(dq, "outside_parent", (double)q->outside_parent);
	cJSON_AddNumberToObject(dq, "late_server", (double)q->late_server);
	cJSON_AddNumberToObject(dq, "skew_serial_pairs", (double)q->skew_serial);
	cJSON_AddNumberToObject(dq, "held_by_container", (double)q->held);
	return r;
}

static void print_tree(cJSON *r, Buf *out)
{
	char *s = cJSON_Print(r);
	buf_adds(out, s);
	buf_adds(out, "\n");
	cJSON_free(s);
	cJSON_Delete(r);
}

void report_json(const Analysis *a, Buf *out)
{
	print_tree(report_json_tree(a), out);
}

/* ---- budgets and exemplars (added by "diag") ------------------------------ */

void report_budgets_text(const BudgetResult *b, int n, int n_exemplars, Buf *o)
{
	if (n > 0) {
		buf_adds(o, "\nBudgets  (revisit triggers from the model, on evidence with its source)\n");
		for (int i = 0; i < n; i++) {
			const ModelBudget *mb = b[i].budget;
			char v[600], lab[128], prov[400];
			budget_describe(&b[i], v, sizeof v);
			clean(lab, sizeof lab, mb->label ? mb->label : mb->id);
			clean(prov, sizeof prov, b[i].ev ? b[i].ev->provenance
			                                 : "no evidence (not measured, not in the data)");
			buf_printf(o, "  %-15s %-38.38s %s\n",
			           b[i].state == BUDGET_BREACHED ? "BREACHED" : budget_state_text(b[i].state),
			           lab, v);
			buf_printf(o, "  %-15s %-38s   %s\n", "", "", prov);
		}
	}
	if (n_exemplars > 0)
		buf_printf(o, "\n%d metric exemplars link histogram buckets to traces "
		              "(report --format json lists them)\n", n_exemplars);
}

void report_json_ext(const Analysis *a, const BudgetResult *b, int nb, const EvExemplar *ex,
                     int nex, Buf *out)
{
	cJSON *r = report_json_tree(a);
	cJSON *ba = cJSON_AddArrayToObject(r, "budgets");
	for (int i = 0; i < nb; i++) {
		const ModelBudget *mb = b[i].budget;
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "id", mb->id ? mb->id : "");
		cJSON_AddStringToObject(o, "label", mb->label ? mb->label : "");
		cJSON_AddStringToObject(o, "evidence", mb->evidence ? mb->evidence : "");
		cJSON_AddStringToObject(o, "op", mb->op ? mb->op : ">");
		cJSON_AddNumberToObject(o, "threshold", mb->threshold);
		cJSON_AddStringToObject(o, "unit", mb->unit ? mb->unit : "");
		diagnosis_budget_json(o, &b[i]);
		cJSON_AddItemToArray(ba, o);
	}
	cJSON *ea = cJSON_AddArrayToObject(r, "exemplars");
	for (int i = 0; i < nex; i++) {
		const EvExemplar *x = &ex[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "metric", x->metric);
		cJSON *lab = cJSON_Parse(x->labels_json);
		cJSON_AddItemToObject(o, "labels", lab ? lab : cJSON_CreateObject());
		if (x->has_le && isinf(x->le))
			cJSON_AddStringToObject(o, "le", "+Inf");
		else if (x->has_le)
			cJSON_AddNumberToObject(o, "le", x->le);
		else
			cJSON_AddNullToObject(o, "le");
		if (isnan(x->value))
			cJSON_AddNullToObject(o, "value");
		else
			cJSON_AddNumberToObject(o, "value", x->value);
		cJSON_AddStringToObject(o, "unit", x->unit);
		if (x->trace_id[0])
			cJSON_AddStringToObject(o, "trace_id", x->trace_id);
		else
			cJSON_AddNullToObject(o, "trace_id");
		if (x->span_id[0])
			cJSON_AddStringToObject(o, "span_id", x->span_id);
		else
			cJSON_AddNullToObject(o, "span_id");
		char t[40];
		time_format(x->ts_ns, t, sizeof t);
		cJSON_AddStringToObject(o, "time", t);
		cJSON_AddItemToArray(ea, o);
	}
	print_tree(r, out);
}
