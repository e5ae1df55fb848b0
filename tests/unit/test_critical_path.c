/*
 * test_critical_path.c - the critical path and the edge vote when serial
 * siblings overlap a little (clock skew between hosts, rounded
 * timestamps), on hand-built traces whose answers are worked out in the
 * comments, plus a property over random trees: the path's times add up to
 * the root's duration.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "analysis.h"
#include "cli.h"
#include "helpers.h"
#include "trace_build.h"

enum { S = SPAN_KIND_SERVER, C = SPAN_KIND_CLIENT, I = SPAN_KIND_INTERNAL };

#define US(x) ((x) / 1000.0) /* microseconds in the specs' milliseconds */

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

static void fx_run(Fx *f, const SkewTolerance *skew)
{
	AnalysisOptions o = {.period.win = TIME_RANGE_ALL};
	if (skew)
		o.skew = *skew;
	Err err = {0};
	analysis_free(f->a);
	f->a = NULL;
	assert_int_equal(analysis_run(f->st, &o, &f->a, &err), 0);
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
	fail_msg("no node %s", label);
	return NULL;
}

static double crit_ms(const Analysis *a, const char *label)
{
	return node(a, label)->crit[0].total_ms;
}

/* The checkout trace of the report: root 0..800 us, cart 20..300, tax
 * 296..450, ship 447..800. tax starts 4 us before cart ends and ship 3 us
 * before tax ends: serial, within 50 us + 1 %. The overlaps are split at
 * their midpoints (298 and 448.5), so the path is checkout 20 (0..20),
 * cart 278 (20..298), tax 150.5 (298..448.5), ship 351.5 (448.5..800):
 * 800 in all. */
static const TSpanSpec checkout[] = {
	{"k1", "r", "", "shop", "checkout", S, 0, US(800), NULL, 0},
	{"k1", "a", "r", "shop", "cart", I, US(20), US(300), NULL, 0},
	{"k1", "b", "r", "shop", "tax", I, US(296), US(450), NULL, 0},
	{"k1", "c", "r", "shop", "ship", I, US(447), US(800), NULL, 0},
};

static void test_skewed_serial_siblings(void **state)
{
	(void)state;
	Fx *f = fx_new(checkout, 4);
	fx_run(f, NULL);
	const Analysis *a = f->a;
	assert_float_equal(crit_ms(a, "checkout"), US(20), 1e-5);
	assert_float_equal(crit_ms(a, "cart"), US(278), 1e-5);
	assert_float_equal(crit_ms(a, "tax"), US(150.5), 1e-5);
	assert_float_equal(crit_ms(a, "ship"), US(351.5), 1e-5);
	assert_float_equal(a->pop[0].crit_total_ms, US(800), 1e-5);
	assert_int_equal(node(a, "cart")->edge, EDGE_SERIAL);
	assert_int_equal(node(a, "tax")->edge, EDGE_SERIAL);
	assert_int_equal(node(a, "ship")->edge, EDGE_SERIAL);
	assert_int_equal(a->dq.skew_serial, 2);

	/* without a tolerance tax overlaps ship, drops off the path and its
	 * time goes to checkout; the three siblings vote parallel */
	SkewTolerance none = {.set = 1};
	fx_run(f, &none);
	a = f->a;
	assert_float_equal(crit_ms(a, "tax"), 0, 1e-9);
	assert_float_equal(crit_ms(a, "checkout"), US(167), 1e-5);
	assert_int_equal(node(a, "tax")->edge, EDGE_PARALLEL);
	assert_int_equal(a->dq.skew_serial, 0);

	/* a tolerance of 3.5 us: tax/ship (3 us) is serial, cart/tax (4 us)
	 * is not, so cart is off the path: checkout 0..296, tax 296..448.5 */
	SkewTolerance small = {.set = 1, .abs_ns = 3500};
	fx_run(f, &small);
	a = f->a;
	assert_float_equal(crit_ms(a, "cart"), 0, 1e-9);
	assert_float_equal(crit_ms(a, "tax"), US(152.5), 1e-5);
	assert_float_equal(crit_ms(a, "checkout"), US(296), 1e-5);
	assert_int_equal(a->dq.skew_serial, 1);
	fx_free(f);
}

/* Real fan-out: A 0..60 ms and B 50..100 ms overlap by 10 ms, far more
 * than 50 us + 1 % of 50 ms: B ends last and is on the path, A did not
 * end before B started and is off it; the root owns 0..50. A short span
 * nested in a long sibling (C 70..70.01 inside B) is parallel too, however
 * small its overlap: it neither starts nor ends first. */
static void test_parallel_siblings_stay_parallel(void **state)
{
	(void)state;
	static const TSpanSpec sp[] = {
		{"p1", "r", "", "api", "GET /x", S, 0, 100, NULL, 0},
		{"p1", "a", "r", "api", "a", I, 0, 60, NULL, 0},
		{"p1", "b", "r", "api", "b", I, 50, 100, NULL, 0},
		{"p1", "c", "r", "api", "c", I, 70, 70.01, NULL, 0},
	};
	Fx *f = fx_new(sp, 4);
	fx_run(f, NULL);
	const Analysis *a = f->a;
	assert_float_equal(crit_ms(a, "b"), 50, 1e-6);
	assert_float_equal(crit_ms(a, "a"), 0, 1e-9);
	assert_float_equal(crit_ms(a, "c"), 0, 1e-9);
	assert_float_equal(crit_ms(a, "GET /x"), 50, 1e-6);
	assert_int_equal(node(a, "a")->edge, EDGE_PARALLEL);
	assert_int_equal(node(a, "b")->edge, EDGE_PARALLEL);
	assert_int_equal(node(a, "c")->edge, EDGE_PARALLEL);
	assert_int_equal(a->dq.skew_serial, 0);
	fx_free(f);
}

/* Microsecond siblings. a 2..22 us and b 7..27 us overlap by 15 us: with
 * the absolute part alone (50 us) that would be "serial", yet the overlap
 * covers three quarters of each; the absolute part is capped at a quarter
 * of the shorter sibling (5 us, plus 1 % = 5.2 us), so they run in
 * parallel: b ends last and is on the path (20 us), a is off it, the root
 * owns 0..7 and 27..30 (10 us). A set tolerance of 1 ms is capped the
 * same way. c 41..45 and d 44.5..48.5 (4 us each) overlap by 0.5 us,
 * under the cap (1 us + 0.04 us): serial, split at 44.75 (3.75 us each),
 * so the second trace's path is root 4.5 + c 3.75 + d 3.75 = 12 us. */
static void test_microsecond_siblings(void **state)
{
	(void)state;
	static const TSpanSpec par[] = {
		{"m1", "r", "", "api", "GET /m", S, 0, US(30), NULL, 0},
		{"m1", "a", "r", "api", "a", I, US(2), US(22), NULL, 0},
		{"m1", "b", "r", "api", "b", I, US(7), US(27), NULL, 0},
	};
	Fx *f = fx_new(par, 3);
	fx_run(f, NULL);
	const Analysis *a = f->a;
	assert_int_equal(node(a, "a")->edge, EDGE_PARALLEL);
	assert_int_equal(node(a, "b")->edge, EDGE_PARALLEL);
	assert_float_equal(crit_ms(a, "b"), US(20), 1e-6);
	assert_float_equal(crit_ms(a, "a"), 0, 1e-9);
	assert_float_equal(crit_ms(a, "GET /m"), US(10), 1e-6);
	assert_int_equal(a->dq.skew_serial, 0);
	SkewTolerance wide = {.set = 1, .abs_ns = 1000000};
	fx_run(f, &wide);
	a = f->a;
	assert_int_equal(node(a, "a")->edge, EDGE_PARALLEL);
	assert_float_equal(crit_ms(a, "a"), 0, 1e-9);
	fx_free(f);

	static const TSpanSpec ser[] = {
		{"m2", "r", "", "api", "GET /n", S, US(40), US(52), NULL, 0},
		{"m2", "c", "r", "api", "c", I, US(41), US(45), NULL, 0},
		{"m2", "d", "r", "api", "d", I, US(44.5), US(48.5), NULL, 0},
	};
	f = fx_new(ser, 3);
	fx_run(f, NULL);
	a = f->a;
	assert_int_equal(node(a, "c")->edge, EDGE_SERIAL);
	assert_int_equal(node(a, "d")->edge, EDGE_SERIAL);
	assert_float_equal(crit_ms(a, "c"), US(3.75), 1e-6);
	assert_float_equal(crit_ms(a, "d"), US(3.75), 1e-6);
	assert_float_equal(crit_ms(a, "GET /n"), US(4.5), 1e-6);
	assert_int_equal(a->dq.skew_serial, 1);
	/* a 2 us overlap (half of each) is past the cap: parallel */
	fx_free(f);
	static const TSpanSpec half[] = {
		{"m3", "r", "", "api", "GET /h", S, US(40), US(52), NULL, 0},
		{"m3", "c", "r", "api", "c", I, US(41), US(45), NULL, 0},
		{"m3", "d", "r", "api", "d", I, US(43), US(47), NULL, 0},
	};
	f = fx_new(half, 3);
	fx_run(f, NULL);
	a = f->a;
	assert_int_equal(node(a, "c")->edge, EDGE_PARALLEL);
	assert_float_equal(crit_ms(a, "c"), 0, 1e-9);
	assert_int_equal(a->dq.skew_serial, 0);
	fx_free(f);
}

/* Nested skew. Call A 0..50.03 ms (server 0.01..50.02, whose children x
 * 1..30 and y 29.99..50.02 overlap by 10 us) and call B 50..100 (server
 * 50.01..99.99). A and B overlap by 30 us: serial, split at 50.015. The
 * cut reaches into A's subtree: its server and y are clamped to end at
 * 50.015, and B's server to start there. x and y split at 29.995.
 * Path: A wait 0.01, A server 0.99 (0.01..1), x 28.995, y 20.02,
 * B server 49.975 (50.015..99.99), B wait 0.01: 100 in all. */
static void test_nested_skew(void **state)
{
	(void)state;
	static const TSpanSpec sp[] = {
		{"n1", "r", "", "api", "GET /x", S, 0, 100, NULL, 0},
		{"n1", "ca", "r", "api", "a.Get", C, 0, 50.03, NULL, 0},
		{"n1", "sa", "ca", "svc-a", "Get", S, 0.01, 50.02, NULL, 0},
		{"n1", "x", "sa", "svc-a", "x", I, 1, 30, NULL, 0},
		{"n1", "y", "sa", "svc-a", "y", I, 29.99, 50.02, NULL, 0},
		{"n1", "cb", "r", "api", "b.Get", C, 50, 100, NULL, 0},
		{"n1", "sb", "cb", "svc-b", "Get", S, 50.01, 99.99, NULL, 0},
	};
	Fx *f = fx_new(sp, 7);
	fx_run(f, NULL);
	const Analysis *a = f->a;
	const DagNode *na = node(a, "svc-a"), *nb = node(a, "svc-b");
	assert_float_equal(na->crit[0].ms[COMP_WAIT], 0.01, 1e-5);
	assert_float_equal(na->crit[0].ms[COMP_SERVICE], 0.99, 1e-5);
	assert_float_equal(crit_ms(a, "x"), 28.995, 1e-5);
	assert_float_equal(crit_ms(a, "y"), 20.02, 1e-5);
	assert_float_equal(nb->crit[0].ms[COMP_SERVICE], 49.975, 1e-5);
	assert_float_equal(nb->crit[0].ms[COMP_WAIT], 0.01, 1e-5);
	assert_float_equal(crit_ms(a, "GET /x"), 0, 1e-9);
	assert_float_equal(a->pop[0].crit_total_ms, 100, 1e-5);
	assert_int_equal(na->edge, EDGE_SERIAL);
	assert_int_equal(node(a, "y")->edge, EDGE_SERIAL);
	assert_int_equal(a->dq.skew_serial, 2);

	/* the waterfall agrees: every span on the path, times adding to 100 */
	char tid[33];
	hexpad(tid, 32, "n1");
	TraceView *tv = NULL;
	Err err = {0};
	assert_int_equal(trace_view_load(f->st, tid, NULL, &tv, &err), 0);
	double sum = 0;
	for (int i = 0; i < tv->n_spans; i++) {
		assert_true(tv->spans[i].on_critical_path);
		sum += tv->spans[i].crit_ms;
	}
	assert_float_equal(sum, 100, 1e-6);
	trace_view_free(tv);
	SkewTolerance none = {.set = 1};
	assert_int_equal(trace_view_load(f->st, tid, &none, &tv, &err), 0);
	int on = 0;
	for (int i = 0; i < tv->n_spans; i++)
		on += tv->spans[i].on_critical_path;
	assert_int_equal(on, 3); /* root, B and its server: A overlaps B */
	trace_view_free(tv);
	fx_free(f);
}

/* ---- containers ----------------------------------------------------------- */

/* The Spring Cloud Gateway shape: the gateway's server span 0..100 ms
 * holds a local span FilteringWebHandler.handle 0.2..99.9 beside (not
 * above) its call to svc-b 1..95, whose server runs 1.5..94. The handle
 * covers the call, so it is a container: the path goes through the call,
 * and the handle owns only its gaps (0.2..1 and 95..99.9: 5.7 ms); the
 * root keeps 0..0.2 and 99.9..100. Without the rule the handle, ending
 * last, took 99.7 ms and the call none. */
static const TSpanSpec gateway[] = {
	{"g1", "r", "", "gw", "GET /b/{id}", S, 0, 100, NULL, 0},
	{"g1", "h", "r", "gw", "FilteringWebHandler.handle", I, 0.2, 99.9, NULL, 0},
	{"g1", "c", "r", "gw", "GET", C, 1, 95, NULL, 0},
	{"g1", "s", "c", "svc-b", "GET /b/{id}", S, 1.5, 94, NULL, 0},
};

/* The servlet-filter shape: the wrapper is the parent of the call. */
static const TSpanSpec filter[] = {
	{"f1", "r", "", "web", "GET /b", S, 0, 100, NULL, 0},
	{"f1", "h", "r", "web", "OncePerRequestFilter", I, 0.5, 99.5, NULL, 0},
	{"f1", "c", "h", "web", "GET", C, 1, 95, NULL, 0},
	{"f1", "s", "c", "svc-b", "GET /b", S, 1.5, 94, NULL, 0},
};

static void test_container_sibling_and_parent(void **state)
{
	(void)state;
	Fx *f = fx_new(gateway, 4);
	fx_run(f, NULL);
	const Analysis *a = f->a;
	const DagNode *nb = node(a, "svc-b");
	assert_float_equal(nb->crit[0].ms[COMP_SERVICE], 92.5, 1e-5);
	assert_float_equal(nb->crit[0].ms[COMP_WAIT], 1.5, 1e-5);
	assert_float_equal(crit_ms(a, "FilteringWebHandler.handle"), 5.7, 1e-5);
	assert_float_equal(crit_ms(a, "GET /b/{id}"), 0.3, 1e-5);
	assert_float_equal(a->pop[0].crit_total_ms, 100, 1e-5);
	assert_int_equal(a->dq.held, 1);
	/* a wrapper and its contents are not a fan-out */
	assert_int_equal(nb->edge, EDGE_SERIAL);
	assert_int_equal(node(a, "FilteringWebHandler.handle")->edge, EDGE_SERIAL);
	fx_free(f);

	f = fx_new(filter, 4);
	fx_run(f, NULL);
	a = f->a;
	nb = node(a, "svc-b");
	assert_float_equal(nb->crit[0].ms[COMP_SERVICE], 92.5, 1e-5);
	assert_float_equal(nb->crit[0].ms[COMP_WAIT], 1.5, 1e-5);
	assert_float_equal(crit_ms(a, "OncePerRequestFilter"), 5, 1e-5);
	assert_float_equal(crit_ms(a, "GET /b"), 1, 1e-5);
	assert_int_equal(a->dq.held, 0); /* a parent already */
	fx_free(f);
}

/* Spans {start, end, kind, service} under one root "api" 0..100 ms and
 * the walks' tree trace_link() builds: which span holds which. */
typedef struct Kid {
	double s, e;
	int kind;
	const char *svc;
} Kid;

static void build(Trace *t, const Kid *k, int n)
{
	trace_reset(t, "c");
	StoreSpanRow r = {.trace_id = "c", .span_id = "r", .parent_id = "", .service = "api",
	                  .host = "", .name = "op", .kind = S, .start_ns = 0, .end_ns = 100000000,
	                  .wclass = "", .attrs_json = ""};
	trace_add(t, &r);
	for (int i = 0; i < n; i++) {
		char id[16];
		snprintf(id, sizeof id, "k%d", i);
		r.span_id = id;
		r.parent_id = "r";
		r.service = k[i].svc;
		r.kind = k[i].kind;
		r.start_ns = (int64_t)(k[i].s * 1e6);
		r.end_ns = (int64_t)(k[i].e * 1e6);
		trace_add(t, &r);
	}
	trace_link(t);
	trace_critical_path(t);
}

/* What is and is not a container. Span 0 is the root; kids from 1. */
static void test_container_rules(void **state)
{
	(void)state;
	Trace t;
	trace_init(&t);
	/* a local span partly overlapping a call does not cover it: a
	 * fan-out, the call ends last and owns 40..90 */
	static const Kid partial[] = {{0, 50, I, "api"}, {40, 90, C, "api"}};
	build(&t, partial, 2);
	assert_int_equal(t.n_held, 0);
	assert_true(trace_siblings_parallel(&t, 1, 2));
	assert_int_equal(t.sp[2].crit, 50000000);
	/* covering only local work (no call beside it): not a container */
	static const Kid local[] = {{0, 100, I, "api"}, {10, 20, I, "api"}};
	build(&t, local, 2);
	assert_int_equal(t.n_held, 0);
	/* another service's span, or a call, does not hold its siblings */
	static const Kid other[] = {{0, 100, I, "other"}, {10, 20, C, "api"}};
	build(&t, other, 2);
	assert_int_equal(t.n_held, 0);
	static const Kid call[] = {{0, 100, C, "api"}, {10, 20, C, "api"}};
	build(&t, call, 2);
	assert_int_equal(t.n_held, 0);
	/* two local spans of one length beside a call are parallel work */
	static const Kid twins[] = {{0, 100, I, "api"}, {0, 100, I, "api"}, {10, 20, C, "api"}};
	build(&t, twins, 3);
	assert_int_equal(t.n_held, 0);
	/* a container that covers a call and a short local span, and one
	 * that covers a call but not a long parallel local span: the first
	 * holds both, the second nothing */
	static const Kid mixed[] = {{0, 60, I, "api"}, {5, 50, C, "api"}, {10, 12, I, "api"},
	                            {62, 98, I, "api"}, {63, 97, C, "api"}, {70, 100, I, "api"}};
	build(&t, mixed, 6);
	assert_int_equal(t.sp[2].holder, 1);
	assert_int_equal(t.sp[3].holder, 1);
	assert_int_equal(t.sp[5].holder, -1);
	assert_int_equal(t.sp[6].holder, -1);
	assert_int_equal(t.n_held, 2);
	assert_false(trace_siblings_parallel(&t, 1, 2));
	assert_true(trace_siblings_parallel(&t, 2, 3)); /* both inside the container */
	/* nested: the longest holds the shorter wrapper and the call, the
	 * shorter holds the call. Path: A 1 + 1, B 9 + 49, the call 40 */
	static const Kid nested[] = {{0, 100, I, "api"}, {1, 99, I, "api"}, {10, 50, C, "api"}};
	build(&t, nested, 3);
	assert_int_equal(t.sp[2].holder, 1);
	assert_int_equal(t.sp[3].holder, 2);
	assert_true(trace_holds(&t, 1, 3));
	assert_false(trace_holds(&t, 3, 1));
	assert_int_equal(t.sp[1].crit, 2000000);
	assert_int_equal(t.sp[2].crit, 58000000);
	assert_int_equal(t.sp[3].crit, 40000000);
	/* a call sticking out of the wrapper by less than the tolerance
	 * (50 us + 1 %) is covered; by 2 ms it is not */
	static const Kid edge[] = {{1, 99, I, "api"}, {0.99, 99.5, C, "api"}};
	build(&t, edge, 2);
	assert_int_equal(t.n_held, 1);
	static const Kid out[] = {{1, 90, I, "api"}, {2, 92, C, "api"}};
	build(&t, out, 2);
	assert_int_equal(t.n_held, 0);
	trace_fini(&t);
}

/* Thousands of local spans under one parent, each beside a call it
 * covers (a batch loop recorded flat), and thousands of nested local
 * spans with no call beside them: each container is found with a look at
 * its neighbours, and local work without a call is turned away before any
 * scan, not compared with every sibling. */
static void test_container_many_siblings(void **state)
{
	(void)state;
	enum { N = 20000 };
	Trace t;
	trace_init(&t);
	trace_reset(&t, "m");
	StoreSpanRow r = {.trace_id = "m", .span_id = "r", .parent_id = "", .service = "api",
	                  .host = "", .name = "op", .kind = S, .start_ns = 0,
	                  .end_ns = (int64_t)N * 3000000, .wclass = "", .attrs_json = ""};
	trace_add(&t, &r);
	static char id[2 * N][16];
	r.parent_id = "r";
	r.kind = I;
	for (int i = 0; i < N; i++) { /* each inside the one before */
		snprintf(id[i], sizeof id[0], "p%d", i);
		r.span_id = id[i];
		r.start_ns = (int64_t)i * 1000;
		r.end_ns = (int64_t)N * 3000000 - (int64_t)i * 1000;
		trace_add(&t, &r);
	}
	trace_link(&t);
	assert_int_equal(t.n_held, 0);
	r.parent_id = "";
	r.span_id = "r";
	r.kind = S;
	r.start_ns = 0;
	r.end_ns = (int64_t)N * 3000000;
	trace_reset(&t, "m");
	trace_add(&t, &r);
	r.parent_id = "r";
	for (int i = 0; i < 2 * N; i++) {
		/* item i / 2: a wrapper 3i..3i+2.9 ms and its call 3i+0.5..3i+2.5 */
		snprintf(id[i], sizeof id[0], "%c%d", i % 2 ? 'c' : 'w', i / 2);
		r.span_id = id[i];
		r.kind = i % 2 ? C : I;
		r.start_ns = (int64_t)(i / 2) * 3000000 + (i % 2 ? 500000 : 0);
		r.end_ns = r.start_ns + (i % 2 ? 2000000 : 2900000);
		trace_add(&t, &r);
	}
	trace_link(&t);
	assert_int_equal(t.n_held, N);
	trace_critical_path(&t);
	int64_t calls = 0;
	for (int i = 0; i < t.n; i++)
		if (t.sp[i].kind == C)
			calls += t.sp[i].crit;
	assert_int_equal(calls, (int64_t)N * 2000000);
	trace_fini(&t);
}

/* ---- property: on any tree the path adds up to the root ------------------ */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static int64_t rnd_in(int64_t lo, int64_t hi) /* [lo, hi] */
{
	return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

/* Random trees: children mostly inside their parent, some sticking out
 * or wholly outside, siblings serial with small random overlaps or
 * gaps, or in parallel; client/server pairs with and without skew;
 * queue times; zero-length spans; random tolerances; local spans that
 * cover the calls beside them (containers). */
static void test_path_adds_up_on_random_trees(void **state)
{
	(void)state;
	rng_state = 0x9e3779b97f4a7c15ULL;
	Trace t;
	trace_init(&t);
	static const int kinds[] = {SPAN_KIND_INTERNAL, SPAN_KIND_CLIENT, SPAN_KIND_SERVER};
	int64_t st[64], en[64];
	int skewed = 0; /* trees with a pair of siblings serial within the tolerance */
	int held = 0;   /* trees with a container holding a sibling */
	for (int iter = 0; iter < 3000; iter++) {
		SkewTolerance tol = {.set = 1, .abs_ns = rnd_in(0, 3) * 20000,
		                     .frac = (double)rnd_in(0, 4) / 100.0};
		trace_set_skew(&t, iter % 5 == 0 ? NULL : &tol);
		trace_reset(&t, "prop");
		int n = (int)rnd_in(1, 40);
		for (int i = 0; i < n; i++) {
			char sid[17], pid[17];
			snprintf(sid, sizeof sid, "%016x", i + 1);
			int p = i == 0 ? -1 : (int)rnd_in(0, i - 1);
			if (p >= 0)
				snprintf(pid, sizeof pid, "%016x", p + 1);
			if (p < 0) {
				st[i] = 1000000;
				en[i] = st[i] + rnd_in(0, 10000000);
			} else {
				int64_t ps = st[p], pe = en[p], d = pe - ps;
				int64_t mode = rnd_in(0, 9);
				if (mode == 0) { /* anywhere near the parent, maybe outside */
					st[i] = ps + rnd_in(-d / 2 - 1000, d + 1000);
					en[i] = st[i] + rnd_in(0, d + 1000);
				} else if (mode == 1) { /* zero length */
					st[i] = en[i] = ps + rnd_in(0, d);
				} else if (mode <= 5 && i > 1 && st[i - 1] >= ps && en[i - 1] <= pe) {
					/* right after the previous span, overlapping by a
					 * little or leaving a gap */
					st[i] = en[i - 1] + rnd_in(-80000, 20000);
					en[i] = st[i] + rnd_in(0, d / 2 + 1);
				} else { /* inside the parent */
					st[i] = ps + rnd_in(0, d);
					en[i] = st[i] + rnd_in(0, pe - st[i]);
				}
			}
			StoreSpanRow r = {.trace_id = "prop", .span_id = sid, .parent_id = p >= 0 ? pid : "",
			                  .service = (rnd() & 1) ? "a" : "b", .host = "", .name = "op",
			                  .kind = kinds[rnd_in(0, 2)], .start_ns = st[i], .end_ns = en[i],
			                  .wclass = "", .attrs_json = ""};
			if (rnd_in(0, 5) == 0) {
				r.has_queue = 1;
				r.queue_ns = rnd_in(0, 500000);
			}
			trace_add(&t, &r);
		}
		trace_link(&t);
		assert_false(t.cyclic);
		assert_int_equal(t.root, 0);
		trace_critical_path(&t);
		int64_t sum = 0;
		for (int i = 0; i < t.n; i++) {
			assert_true(t.sp[i].crit >= 0);
			assert_true(t.sp[i].crit_queue >= 0);
			if (t.sp[i].crit || t.sp[i].crit_queue)
				assert_true(t.sp[i].on_path);
			sum += t.sp[i].crit + (i == t.root ? 0 : t.sp[i].crit_queue);
		}
		if (sum != en[0] - st[0])
			fail_msg("iteration %d: path %lld ns, root %lld ns", iter, (long long)sum,
			         (long long)(en[0] - st[0]));
		int any = 0;
		for (int i = 0; i < t.n && !any; i++)
			for (int k = 0; k < t.n && !any; k++)
				any = i != k && t.sp[i].parent >= 0 && t.sp[i].parent == t.sp[k].parent &&
				      trace_skew_serial(&t, t.sp[i].astart, t.sp[i].aend, t.sp[k].astart,
				                        t.sp[k].aend);
		skewed += any;
		held += t.n_held > 0;
	}
	trace_fini(&t);

	/* the trees did exercise the tolerance, and containers */
	if (skewed < 300)
		fail_msg("only %d of 3000 trees had siblings within the tolerance", skewed);
	if (held < 100)
		fail_msg("only %d of 3000 trees had a container", held);
}

/* --skew-tolerance: ABS, PCT% or ABS+PCT%, or 0 / off. */
static void test_tolerance_option(void **state)
{
	(void)state;
	SkewTolerance k;
	assert_int_equal(cli_skew_tolerance("50us+1%", &k), 0);
	assert_int_equal(k.set, 1);
	assert_int_equal(k.abs_ns, 50000);
	assert_float_equal(k.frac, 0.01, 1e-12);
	assert_int_equal(cli_skew_tolerance("1.5ms", &k), 0);
	assert_int_equal(k.abs_ns, 1500000);
	assert_float_equal(k.frac, 0, 0);
	assert_int_equal(cli_skew_tolerance("2.5%", &k), 0);
	assert_int_equal(k.abs_ns, 0);
	assert_float_equal(k.frac, 0.025, 1e-12);
	assert_int_equal(cli_skew_tolerance("300ns+0%", &k), 0);
	assert_int_equal(k.abs_ns, 300);
	assert_int_equal(cli_skew_tolerance("off", &k), 0);
	assert_int_equal(k.set, 1);
	assert_int_equal(k.abs_ns, 0);
	assert_float_equal(k.frac, 0, 0);
	/* usage errors (each prints a message to stderr) */
	static const char *bad[] = {"", "50", "50 us", "-1us", "1%+50us", "60%", "61s", "us",
	                            "1e999us", "5us+", "+1%", "nan%"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (cli_skew_tolerance(bad[i], &k) != 2)
			fail_msg("'%s' was accepted", bad[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_skewed_serial_siblings),
		cmocka_unit_test(test_parallel_siblings_stay_parallel),
		cmocka_unit_test(test_nested_skew),
		cmocka_unit_test(test_microsecond_siblings),
		cmocka_unit_test(test_container_sibling_and_parent),
		cmocka_unit_test(test_container_rules),
		cmocka_unit_test(test_container_many_siblings),
		cmocka_unit_test(test_path_adds_up_on_random_trees),
		cmocka_unit_test(test_tolerance_option),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
