/*
 * test_analysis.c - DAG, pairing, splits, quantiles and critical path on
 * hand-built traces whose answers are worked out by hand in comments.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "analysis.h"
#include "endpoints.h"
#include "helpers.h"
#include "trace_build.h"

enum { S = SPAN_KIND_SERVER, C = SPAN_KIND_CLIENT, I = SPAN_KIND_INTERNAL };

typedef struct Fx {
	char path[128];
	Store *st;
	Analysis *a;
} Fx;

static Fx *fx_new(const TSpanSpec *sp, int n)
{
	Fx *f = calloc(1, sizeof *f);
	tmp_db_path(f->path, sizeof f->path);
	Err err = {0};
	assert_int_equal(store_open(f->path, 0, &f->st, &err), 0);
	assert_int_equal(add_spans(f->st, sp, n, T0), 0);
	return f;
}

static void fx_run(Fx *f, const AnalysisOptions *opt)
{
	AnalysisOptions all = {.period.win = TIME_RANGE_ALL};
	Err err = {0};
	analysis_free(f->a);
	f->a = NULL;
	assert_int_equal(analysis_run(f->st, opt ? opt : &all, &f->a, &err), 0);
}

static void fx_free(Fx *f)
{
	analysis_free(f->a);
	store_close(f->st);
	rm_db(f->path);
	free(f);
}

static const DagNode *node(const Analysis *a, const char *label)
{
	for (int i = 0; i < a->n_nodes; i++)
		if (strcmp(a->nodes[i].label, label) == 0)
			return &a->nodes[i];
	return NULL;
}

/* root 0..100; call A 10..40 (server 15..35); call B 40..90 (server 45..85) */
static const TSpanSpec serial[] = {
	{"t1", "r", "", "api", "GET /x", S, 0, 100, "gold", 0},
	{"t1", "ca", "r", "api", "a.Get", C, 10, 40, NULL, 0},
	{"t1", "sa", "ca", "svc-a", "Get", S, 15, 35, NULL, 0},
	{"t1", "cb", "r", "api", "b.Get", C, 40, 90, NULL, 0},
	{"t1", "sb", "cb", "svc-b", "Get", S, 45, 85, NULL, 0},
};

static void test_serial_pairing_and_splits(void **state)
{
	(void)state;
	Fx *f = fx_new(serial, 5);
	fx_run(f, NULL);
	const Analysis *a = f->a;
	assert_int_equal(a->n_nodes, 3);
	assert_string_equal(a->nodes[0].label, "GET /x");
	assert_int_equal(a->nodes[0].edge, EDGE_ROOT);
	const DagNode *na = node(a, "svc-a"), *nb = node(a, "svc-b");
	assert_non_null(na);
	assert_non_null(nb);
	assert_int_equal(na->type, NODE_CALL);
	assert_string_equal(na->dependency, "svc-a");
	assert_int_equal(na->edge, EDGE_SERIAL);
	assert_int_equal(nb->edge, EDGE_SERIAL);
	assert_true(na->id < nb->id); /* time order */
	assert_float_equal(na->pop[0].total.p99, 30, 1e-6);
	assert_float_equal(na->pop[0].service.p99, 20, 1e-6);
	assert_float_equal(na->pop[0].client_wait.p99, 10, 1e-6);
	assert_int_equal(na->pop[0].queue.n, 0); /* no queue data: unknown */
	assert_float_equal(nb->pop[0].client_wait.p99, 10, 1e-6);
	assert_int_equal(a->pop[0].requests, 1);
	assert_float_equal(a->pop[0].ingress.p99, 100, 1e-6);
	assert_int_equal(a->dq.unpaired_calls, 0);
	fx_free(f);
}

/* A call whose server span never arrived: split unknown, not zero. */
static void test_unknown_split(void **state)
{
	(void)state;
	static const TSpanSpec sp[] = {
		{"t2", "r", "", "api", "GET /x", S, 0, 50, NULL, 0},
		{"t2", "c", "r", "api", "cache.Get", C, 5, 45, NULL, 0},
	};
	Fx *f = fx_new(sp, 2);
	fx_run(f, NULL);
	const DagNode *n = node(f->a, "cache.Get");
	assert_non_null(n);
	assert_int_equal(n->pop[0].unknown_split, 1);
	assert_int_equal(n->pop[0].client_wait.n, 0);
	assert_int_equal(n->pop[0].service.n, 0);
	assert_float_equal(n->pop[0].total.p99, 40, 1e-6);
	assert_int_equal(f->a->dq.unpaired_calls, 1);
	fx_free(f);
}

/* Database client spans (db.system.name, or db.system before semantic
 * conventions 1.26) are leaves: counted as database calls, their client
 * time is the call's service, and they are not calls without a server span.
 * A client span without either attribute still is. */
static void test_database_calls(void **state)
{
	(void)state;
	static const struct {
		const char *id, *parent, *svc, *name;
		int kind;
		double s, e;
		const char *attrs;
	} sp[] = {
		{"r", "", "api", "GET /x", S, 0, 100, NULL},
		{"q1", "r", "api", "SELECT prices", C, 5, 25,
		 "{\"db.system.name\":\"postgresql\",\"db.operation.name\":\"SELECT\"}"},
		{"q2", "r", "api", "GET", C, 30, 34, "{\"db.system\":\"redis\"}"},
		{"c", "r", "api", "cache.Get", C, 40, 90, "{\"peer.service\":\"db.systemless\"}"},
		{"n", "r", "api", "nulldb", C, 91, 95, "{\"db.system\":null}"},
	};
	Fx *f = calloc(1, sizeof *f);
	tmp_db_path(f->path, sizeof f->path);
	Err err = {0};
	assert_int_equal(store_open(f->path, 0, &f->st, &err), 0);
	int64_t src;
	assert_int_equal(store_begin(f->st, &err), 0);
	assert_int_equal(store_source_add(f->st, "test", "db-test", "test", 0, &src, &err), 0);
	for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++) {
		StoreSpan s;
		memset(&s, 0, sizeof s);
		hexpad(s.trace_id, 32, "tdb");
		hexpad(s.span_id, 16, sp[i].id);
		if (sp[i].parent[0])
			hexpad(s.parent_id, 16, sp[i].parent);
		s.service = sp[i].svc;
		s.name = sp[i].name;
		s.kind = sp[i].kind;
		s.start_ns = T0 + MS(sp[i].s);
		s.end_ns = T0 + MS(sp[i].e);
		s.attrs_json = sp[i].attrs;
		int added;
		assert_int_equal(store_span_add(f->st, src, &s, &added, &err), 0);
	}
	StoreSourceCounts c = {0};
	assert_int_equal(store_source_finish(f->st, src, &c, "imported", &err), 0);
	assert_int_equal(store_commit(f->st, &err), 0);
	fx_run(f, NULL);
	assert_int_equal(f->a->dq.db_calls, 2);
	assert_int_equal(f->a->dq.unpaired_calls, 2); /* cache.Get and the null db.system */
	const DagNode *pg = node(f->a, "SELECT prices"), *rd = node(f->a, "GET");
	assert_non_null(pg);
	assert_non_null(rd);
	assert_int_equal(pg->type, NODE_CALL);
	assert_int_equal(pg->pop[0].db_calls, 1);
	assert_int_equal(pg->pop[0].unknown_split, 0);
	assert_float_equal(pg->pop[0].total.p99, 20, 1e-6);
	assert_float_equal(pg->pop[0].service.p99, 20, 1e-6); /* the client's time */
	assert_int_equal(pg->pop[0].client_wait.n, 0);
	assert_int_equal(rd->pop[0].db_calls, 1);
	assert_float_equal(rd->pop[0].service.p99, 4, 1e-6);
	const DagNode *cg = node(f->a, "cache.Get db.systemless"); /* labelled with its peer */
	assert_int_equal(cg->pop[0].unknown_split, 1);
	assert_int_equal(cg->pop[0].db_calls, 0);
	/* the waterfall says so too */
	TraceView *tv = NULL;
	char tid[33];
	hexpad(tid, 32, "tdb");
	assert_int_equal(trace_view_load(f->st, tid, NULL, &tv, &err), 0);
	int dbs = 0;
	for (int i = 0; i < tv->n_spans; i++)
		dbs += tv->spans[i].db_call;
	assert_int_equal(dbs, 2);
	trace_view_free(tv);
	fx_free(f);
}

/* Overlapping siblings are a parallel group; a later one is serial. */
static void test_parallel_fanout(void **state)
{
	(void)state;
	static const TSpanSpec sp[] = {
		{"t3", "r", "", "api", "GET /x", S, 0, 100, NULL, 0},
		{"t3", "c1", "r", "api", "a.Get", C, 10, 40, NULL, 0},
		{"t3", "s1", "c1", "a", "Get", S, 12, 38, NULL, 0},
		{"t3", "c2", "r", "api", "b.Get", C, 11, 60, NULL, 0},
		{"t3", "s2", "c2", "b", "Get", S, 13, 58, NULL, 0},
		{"t3", "c3", "r", "api", "c.Get", C, 70, 90, NULL, 0},
		{"t3", "s3", "c3", "c", "Get", S, 71, 89, NULL, 0},
	};
	Fx *f = fx_new(sp, 7);
	fx_run(f, NULL);
	const DagNode *na = node(f->a, "a"), *nb = node(f->a, "b"), *nc = node(f->a, "c");
	assert_int_equal(na->edge, EDGE_PARALLEL);
	assert_int_equal(nb->edge, EDGE_PARALLEL);
	assert_int_equal(nc->edge, EDGE_SERIAL);
	assert_int_equal(na->group, nb->group);
	assert_int_equal(na->group, na->id); /* a starts first */
	fx_free(f);
}

/* Critical path: A 0..30 then B 35..100 (queue 5 before it) with C 35..60
 * in parallel. Path = B (65 + 5 queue) + A (30); C is off the path. */
static void test_critical_path(void **state)
{
	(void)state;
	static const TSpanSpec sp[] = {
		{"t4", "r", "", "api", "GET /x", S, 0, 100, NULL, 0},
		{"t4", "ca", "r", "api", "a.Get", C, 0, 30, NULL, 0},
		{"t4", "sa", "ca", "a", "Get", S, 5, 25, NULL, 0},
		{"t4", "cb", "r", "api", "b.Get", C, 35, 100, NULL, 5},
		{"t4", "sb", "cb", "b", "Get", S, 40, 95, NULL, 0},
		{"t4", "cc", "r", "api", "c.Get", C, 35, 60, NULL, 0},
		{"t4", "sc", "cc", "c", "Get", S, 36, 59, NULL, 0},
	};
	Fx *f = fx_new(sp, 7);
	fx_run(f, NULL);
	const Analysis *a = f->a;
	const DagNode *na = node(a, "a"), *nb = node(a, "b"), *nc = node(a, "c");
	assert_int_equal(a->pop[0].slow_requests, 1);
	assert_float_equal(a->pop[0].crit_total_ms, 100, 1e-3);
	assert_float_equal(nb->crit[0].ms[COMP_QUEUE], 5, 1e-3);
	assert_float_equal(nb->crit[0].ms[COMP_SERVICE], 55, 1e-3);
	assert_float_equal(nb->crit[0].ms[COMP_WAIT], 10, 1e-3);
	assert_float_equal(nb->crit[0].share, 0.70, 1e-6);
	assert_float_equal(na->crit[0].ms[COMP_SERVICE], 20, 1e-3);
	assert_float_equal(na->crit[0].ms[COMP_WAIT], 10, 1e-3);
	assert_float_equal(na->crit[0].share, 0.30, 1e-6);
	assert_float_equal(nc->crit[0].share, 0, 1e-9);
	assert_float_equal(nb->pop[0].queue.p99, 5, 1e-6);
	fx_free(f);
}

/* Skew: a 0.2 % overrun is clipped; a server span starting 10 ms before
 * its client (20 % of the call) is clock skew; a server that starts inside
 * a call which failed and outlives it is late work (the caller gave up),
 * not skew. A call that got its answer, whose server ended after it by
 * less than the call took to reach the server (HTTP server spans end once
 * the response is flushed, which real SDKs show on about half the calls),
 * is clipped: timing, not late work, and the call is not "cut short". */
static void test_clock_skew_and_late_work(void **state)
{
	(void)state;
	static const TSpanSpec sp[] = {
		{"t5", "r", "", "api", "GET /x", S, 0, 250, NULL, 0},
		{"t5", "c1", "r", "api", "a.Get", C, 0, 100, NULL, 0},
		{"t5", "s1", "c1", "a", "Get", S, 10, 100.2, NULL, 0},
		{"t5", "c2", "r", "api", "b.Get", C, 100, 150, NULL, 0},
		{"t5", "s2", "c2", "b", "Get", S, 90, 130, NULL, 0},
		{"t5", "c3", "r", "api", "c.Get", C, 150, 190, NULL, 0},
		{"t5", "s3", "c3", "c", "Get", S, 160, 210, NULL, 0},
		{"t5", "c4", "r", "api", "d.Get", C, 210, 230, NULL, 0},
		{"t5", "s4", "c4", "d", "Get", S, 211, 230.8, NULL, 0},
	};
	static const int status[9] = {[5] = 2}; /* c3 failed */
	Fx *f = calloc(1, sizeof *f);
	tmp_db_path(f->path, sizeof f->path);
	Err err = {0};
	assert_int_equal(store_open(f->path, 0, &f->st, &err), 0);
	assert_int_equal(add_spans_status(f->st, sp, 9, T0, status), 0);
	fx_run(f, NULL);
	assert_int_equal(f->a->dq.clipped, 2);
	assert_int_equal(f->a->dq.skew, 1);
	assert_float_equal(f->a->dq.skew_max_ms, 10, 1e-6);
	assert_int_equal(f->a->dq.late_server, 1);
	/* durations are immune to skew: b's service is its own 40 ms */
	const DagNode *nb = node(f->a, "b");
	assert_float_equal(nb->pop[0].service.p99, 40, 1e-6);
	assert_float_equal(nb->pop[0].client_wait.p99, 10, 1e-6);
	/* late work: only the 30 ms inside the call count as its service */
	const DagNode *nc = node(f->a, "c");
	assert_float_equal(nc->pop[0].service.p99, 30, 1e-6);
	assert_float_equal(nc->pop[0].client_wait.p99, 10, 1e-6);
	fx_free(f);
}

/* Orphans are kept and counted; a parent cycle rejects the trace. */
static void test_orphans_and_cycles(void **state)
{
	(void)state;
	static const TSpanSpec sp[] = {
		{"t6", "r", "", "api", "GET /x", S, 0, 100, NULL, 0},
		{"t6", "o", "missing", "api", "lost.Get", C, 10, 20, NULL, 0},
		{"t7", "r", "", "api", "GET /x", S, 0, 100, NULL, 0},
		{"t7", "x", "y", "api", "x", I, 10, 20, NULL, 0},
		{"t7", "y", "x", "api", "y", I, 10, 20, NULL, 0},
	};
	Fx *f = fx_new(sp, 5);
	fx_run(f, NULL);
	assert_int_equal(f->a->dq.orphan_spans, 1);
	assert_int_equal(f->a->dq.cycles, 1);
	assert_int_equal(f->a->pop[0].requests, 1); /* t7 was not analysed */
	const DagNode *o = node(f->a, "(missing parent)");
	assert_non_null(o);
	assert_int_equal(o->type, NODE_ORPHANS);
	assert_non_null(node(f->a, "lost.Get"));
	/* the orphan owns no critical-path time */
	assert_float_equal(node(f->a, "lost.Get")->crit[0].share, 0, 1e-9);
	fx_free(f);
}

/* A request is its trace's entry server span: below a load generator's
 * client root (t1, t2) or a browser's internal root and fetch (t6), one
 * whose caller is missing (t3); the spans above are left out. A client
 * root alone is no endpoint (t4); a trace without any server span is
 * entered at its root (t5). The endpoint list reads the traces of roots
 * that are not server spans, and leaves a trace without a root to the
 * analysis. */
static const TSpanSpec entries[] = {
	{"t1", "lg", "", "loadgen", "GET", C, 0, 100, NULL, 0},
	{"t1", "fe", "lg", "frontend", "GET /p", S, 5, 95, NULL, 0},
	{"t1", "cc", "fe", "frontend", "cart.Get", C, 10, 50, NULL, 0},
	{"t1", "cs", "cc", "cart", "Get", S, 12, 48, NULL, 0},
	{"t2", "lg", "", "loadgen", "GET", C, 0, 100, NULL, 0},
	{"t2", "fe", "lg", "frontend", "GET /p", S, 5, 85, NULL, 0},
	{"t2", "cc", "fe", "frontend", "cart.Get", C, 10, 70, NULL, 0},
	{"t2", "cs", "cc", "cart", "Get", S, 12, 68, NULL, 0},
	{"t3", "fe", "gone", "frontend", "GET /p", S, 0, 80, NULL, 0},
	{"t3", "cc", "fe", "frontend", "cart.Get", C, 10, 30, NULL, 0},
	{"t4", "lg", "", "loadgen", "GET", C, 0, 10, NULL, 0},
	{"t5", "cr", "", "batch", "cron", I, 0, 40, NULL, 0},
	{"t6", "dl", "", "browser", "documentLoad", I, 0, 100, NULL, 0},
	{"t6", "fx", "dl", "browser", "fetch", C, 2, 90, NULL, 0},
	{"t6", "fe", "fx", "frontend", "GET /p", S, 4, 64, NULL, 0},
};

static void test_entry_span(void **state)
{
	(void)state;
	Fx *f = fx_new(entries, 15);
	AnalysisOptions o = {.period.win = TIME_RANGE_ALL, .ep_service = "frontend",
	                     .ep_route = "GET /p"};
	fx_run(f, &o);
	const Analysis *a = f->a;
	assert_string_equal(a->endpoint, "frontend GET /p");
	assert_int_equal(a->pop[0].requests, 4);
	assert_int_equal(a->dq.entered_below, 4);
	assert_int_equal(a->dq.no_entry, 1);
	assert_int_equal(a->dq.other_endpoint, 1);
	assert_int_equal(a->dq.rootless, 0);
	assert_int_equal(a->dq.orphan_spans, 0); /* t3's entry is no orphan */
	/* the entries' durations, not the load generator's or the browser's */
	assert_float_equal(a->pop[0].ingress.max, 90, 1e-6);
	assert_float_equal(a->pop[0].ingress.p50, 80, 1e-6);
	assert_int_equal(a->n_nodes, 2);
	assert_string_equal(a->nodes[0].label, "GET /p");
	assert_null(node(a, "GET"));
	assert_null(node(a, "fetch"));
	assert_int_equal(node(a, "cart")->pop[0].calls, 3);
	/* the critical path of the slow requests is the entries' time */
	double crit = 0;
	for (int i = 0; i < a->n_nodes; i++)
		crit += a->nodes[i].crit[0].total_ms;
	assert_float_equal(crit, a->pop[0].crit_total_ms, 1e-6);
	/* the default endpoint is the most common one; the list reads the
	 * traces whose root is not a server span */
	EndpointList *l = NULL;
	Err err = {0};
	Period per = {.win = TIME_RANGE_ALL};
	assert_int_equal(analysis_endpoints(f->st, &per, NULL, &l, &err), 0);
	assert_int_equal(l->n, 2);
	assert_string_equal(l->v[0].name, "frontend GET /p");
	assert_int_equal(l->v[0].pop[0].requests, 3);
	assert_string_equal(l->v[1].name, "batch cron");
	assert_int_equal(l->traces_read, 5);
	assert_int_equal(l->no_entry, 1);
	assert_int_equal(l->entered_below, 3);
	analysis_endpoints_free(l);
	fx_run(f, NULL);
	assert_string_equal(f->a->endpoint, "frontend GET /p");
	/* the import-time aggregates key the DAG by the entry too (a trace
	 * without a root is the exact analysis's alone) */
	assert_int_equal(analysis_agg_update(f->st, &err), 0);
	Analysis *g = NULL;
	assert_int_equal(analysis_from_aggregates(f->st, &o, &g, &err), 0);
	assert_int_equal(g->pop[0].requests, 3);
	assert_int_equal(g->n_nodes, 2);
	assert_string_equal(g->nodes[0].operation, "GET /p");
	assert_string_equal(g->nodes[1].dependency, "cart");
	analysis_free(g);
	fx_free(f);
}

/* Nearest rank over 1..100 ms: p50 = 50, p90 = 90, p99 = 99. */
/* One span of trace "t" for callee_trace(): a CLIENT span of svc named
 * name under parent, with the peer it names ("" for none). */
static void callee_span(Trace *t, const char *id, const char *parent, const char *svc,
                        const char *name, int kind, const char *peer)
{
	StoreSpanRow r = {.trace_id = "t", .span_id = id, .parent_id = parent, .service = svc,
	                  .host = "", .name = name, .kind = kind, .start_ns = 1, .end_ns = 2,
	                  .wclass = "", .attrs_json = "", .db_system = "", .peer = peer,
	                  .events_json = ""};
	trace_add(t, &r);
}

/* A call that names no peer goes to the node of its siblings of the same
 * service and name when they all name one peer, and to a node of its own
 * when they disagree or none names one; other services' calls and other
 * names do not count. A parent with thousands of unnamed calls is settled
 * too (one look per group of siblings, not one per call). */
static void test_unnamed_call_takes_siblings_peer(void **state)
{
	(void)state;
	Trace t;
	trace_init(&t);
	trace_reset(&t, "t");
	callee_span(&t, "r", "", "api", "GET /", 2, "");
	callee_span(&t, "a1", "r", "api", "GET", 3, "pricing:80");
	callee_span(&t, "a2", "r", "api", "GET", 3, "pricing:80");
	callee_span(&t, "a3", "r", "api", "GET", 3, "");          /* -> pricing:80 */
	callee_span(&t, "b1", "r", "api", "POST", 3, "quote:81");
	callee_span(&t, "b2", "r", "api", "POST", 3, "stock:82");
	callee_span(&t, "b3", "r", "api", "POST", 3, "");         /* they disagree */
	callee_span(&t, "c1", "r", "api", "PUT", 3, "");          /* nobody names one */
	callee_span(&t, "c2", "r", "api", "PUT", 3, "");
	callee_span(&t, "l1", "r", "api", "work", 1, "");         /* not a call */
	trace_link(&t);
	static const char *const want[] = {"", "pricing:80", "pricing:80", "pricing:80", "quote:81",
	                                   "stock:82", "", "", "", ""};
	for (int i = 0; i < t.n; i++)
		if (strcmp(trace_callee(&t, i), want[i]) != 0)
			fail_msg("span %d: callee '%s', want '%s'", i, trace_callee(&t, i), want[i]);
	/* 20,000 unnamed calls and one named under one parent */
	enum { FAN = 20000 };
	trace_reset(&t, "t");
	callee_span(&t, "r", "", "api", "GET /", 2, "");
	callee_span(&t, "n", "r", "api", "GET", 3, "pricing:80");
	for (int i = 0; i < FAN; i++) {
		char id[16];
		snprintf(id, sizeof id, "u%d", i);
		callee_span(&t, id, "r", "api", "GET", 3, "");
	}
	trace_link(&t);
	int to_pricing = 0;
	for (int i = 0; i < t.n; i++)
		to_pricing += strcmp(trace_callee(&t, i), "pricing:80") == 0;
	assert_int_equal(to_pricing, FAN + 1);
	trace_fini(&t);
}

static void test_quantiles_nearest_rank(void **state)
{
	(void)state;
	double v[100];
	for (int i = 0; i < 100; i++)
		v[i] = 100 - i;
	Quant q;
	quant_fill(&q, v, 100);
	assert_int_equal(q.n, 100);
	assert_float_equal(q.p50, 50, 0);
	assert_float_equal(q.p90, 90, 0);
	assert_float_equal(q.p99, 99, 0);
	assert_float_equal(q.max, 100, 0);
	double one[1] = {7};
	quant_fill(&q, one, 1);
	assert_float_equal(q.p50, 7, 0);
	assert_float_equal(q.p99, 7, 0);
	quant_fill(&q, one, 0);
	assert_int_equal(q.n, 0);
	assert_true(isnan(q.p99));
	assert_true(quant_small_sample(40));
	assert_false(quant_small_sample(1000));
}

/* Per-class statistics and the window/baseline split by root start. */
static void test_classes_and_windows(void **state)
{
	(void)state;
	TSpanSpec sp[40];
	char tags[40][16];
	int n = 0;
	for (int i = 0; i < 20; i++) {
		snprintf(tags[i], sizeof tags[i], "w%02d", i);
		/* baseline at T0 + i s: 10 ms; window at T0 + 3600 s + i s */
		int win = i >= 10;
		double base = win ? 3600000.0 + i * 1000.0 : i * 1000.0;
		double dur = win ? (i % 2 ? 80 : 20) : 10;
		sp[n++] = (TSpanSpec){tags[i], "r", "", "api", "GET /x", S, base, base + dur,
		                      i % 2 ? "heavy" : "light", 0};
	}
	Fx *f = fx_new(sp, n);
	AnalysisOptions o = {.period.win = {T0 + MS(3600000), T0 + MS(3700000)},
	                     .period.has_baseline = 1, .period.base = {T0, T0 + MS(100000)}};
	fx_run(f, &o);
	const Analysis *a = f->a;
	assert_int_equal(a->pop[0].requests, 10);
	assert_int_equal(a->pop[1].requests, 10);
	assert_int_equal(a->n_classes, 2);
	int heavy = analysis_class_index(a, "heavy");
	assert_true(heavy >= 0);
	assert_float_equal(a->nodes[0].by_class[0][heavy].total.p99, 80, 1e-6);
	assert_float_equal(a->nodes[0].by_class[0][1 - heavy].total.p99, 20, 1e-6);
	assert_float_equal(a->nodes[0].pop[1].total.p99, 10, 1e-6);
	assert_int_equal(a->pop[0].class_requests[heavy], 5);
	/* class filter */
	o.wclass = "heavy";
	fx_run(f, &o);
	assert_int_equal(f->a->pop[0].requests, 5);
	assert_float_equal(f->a->pop[0].ingress.p50, 80, 1e-6);
	fx_free(f);
}

/* The waterfall view of one trace marks the critical path. */
static void test_trace_view(void **state)
{
	(void)state;
	Fx *f = fx_new(serial, 5);
	char tid[33];
	hexpad(tid, 32, "t1");
	TraceView *tv = NULL;
	Err err = {0};
	assert_int_equal(trace_view_load(f->st, tid, NULL, &tv, &err), 0);
	assert_int_equal(tv->n_spans, 5);
	assert_int_equal(tv->spans[0].depth, 0);
	assert_string_equal(tv->spans[0].name, "GET /x");
	int on = 0;
	for (int i = 0; i < tv->n_spans; i++)
		on += tv->spans[i].on_critical_path;
	assert_int_equal(on, 5);
	assert_int_equal(tv->spans[1].paired, 1);
	assert_float_equal(tv->spans[1].client_wait_ms, 10, 1e-6);
	trace_view_free(tv);
	assert_int_equal(trace_view_load(f->st, "00000000000000000000000000000000", NULL, &tv, &err),
	                 TT_ENOTFOUND);
	fx_free(f);
}


/* An incremental state fed in two imports equals one analysis of the
 * whole: the second import brings new requests and the missing server
 * span of a request already read (spans of one trace often arrive in
 * different exports). */
static void test_incremental_update(void **state)
{
	(void)state;
	static const TSpanSpec first[] = {
		{"i1", "r", "", "api", "GET /x", S, 0, 100, "gold", 0},
		{"i1", "ca", "r", "api", "a.Get", C, 10, 40, NULL, 0},
		{"i2", "r", "", "api", "GET /x", S, 1000, 1080, "lead", 0},
		{"i2", "ca", "r", "api", "a.Get", C, 1010, 1070, NULL, 0},
		{"i2", "sa", "ca", "a", "Get", S, 1020, 1060, NULL, 0},
	};
	static const TSpanSpec second[] = {
		{"i1", "sa", "ca", "a", "Get", S, 15, 35, NULL, 0},
		{"i3", "r", "", "api", "GET /x", S, 2000, 2050, "gold", 0},
		{"i3", "ca", "r", "api", "a.Get", C, 2010, 2030, NULL, 2},
		{"i3", "sa", "ca", "a", "Get", S, 2012, 2028, NULL, 0},
	};
	Fx *f = fx_new(first, 5);
	AnalysisOptions all = {.period.win = TIME_RANGE_ALL};
	AnalysisState *s = analysis_state_new(&all);
	Err err = {0};
	assert_int_equal(analysis_state_update(s, f->st, &err), 0);
	Analysis *a1 = analysis_state_result(s, f->st);
	const DagNode *n1 = node(a1, "a");
	assert_non_null(n1);
	assert_int_equal(n1->pop[0].unknown_split, 1); /* i1's server not here yet */
	assert_int_equal(a1->pop[0].requests, 2);
	analysis_free(a1);

	assert_int_equal(add_spans(f->st, second, 4, T0), 0);
	assert_int_equal(analysis_state_update(s, f->st, &err), 0);
	Analysis *inc = analysis_state_result(s, f->st);
	fx_run(f, NULL); /* the same data read in one go */
	const Analysis *whole = f->a;
	assert_int_equal(inc->pop[0].requests, 3);
	assert_int_equal(inc->n_nodes, whole->n_nodes);
	const DagNode *x = node(inc, "a"), *y = node(whole, "a");
	assert_int_equal(x->pop[0].calls, 3);
	assert_int_equal(x->pop[0].unknown_split, 0);
	assert_int_equal(x->pop[0].client_wait.n, y->pop[0].client_wait.n);
	assert_float_equal(x->pop[0].client_wait.p99, y->pop[0].client_wait.p99, 1e-9);
	assert_float_equal(x->pop[0].client_wait.p50, 10, 1e-6);
	assert_float_equal(x->pop[0].queue.p99, 2, 1e-6);
	assert_float_equal(inc->pop[0].ingress.p99, whole->pop[0].ingress.p99, 1e-9);
	assert_float_equal(x->crit[0].share, y->crit[0].share, 1e-9);
	assert_int_equal(inc->dq.unpaired_calls, 0);
	assert_int_equal(inc->dq.traces, 3);
	int gold = analysis_class_index(inc, "gold");
	assert_true(gold >= 0);
	assert_int_equal(inc->pop[0].class_requests[gold], 2);
	assert_int_equal(x->by_class[0][gold].calls, 2);
	analysis_free(inc);
	/* nothing new: an update reads nothing and changes nothing */
	assert_int_equal(analysis_state_update(s, f->st, &err), 0);
	Analysis *again = analysis_state_result(s, f->st);
	assert_int_equal(again->pop[0].requests, 3);
	analysis_free(again);
	analysis_state_free(s);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_serial_pairing_and_splits),
		cmocka_unit_test(test_unknown_split),
		cmocka_unit_test(test_database_calls),
		cmocka_unit_test(test_parallel_fanout),
		cmocka_unit_test(test_critical_path),
		cmocka_unit_test(test_clock_skew_and_late_work),
		cmocka_unit_test(test_orphans_and_cycles),
		cmocka_unit_test(test_entry_span),
		cmocka_unit_test(test_unnamed_call_takes_siblings_peer),
		cmocka_unit_test(test_quantiles_nearest_rank),
		cmocka_unit_test(test_classes_and_windows),
		cmocka_unit_test(test_trace_view),
		cmocka_unit_test(test_incremental_update),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
