/*
 * test_tui_fixture.h - a small, deterministic Mercury-like database for
 * the TUI tests (header-only; included by test_tui*.c).
 *
 * Shape of every request (times in ms from the request start):
 *   GET /v2/home (mercury-api, server)
 *   - validate            local, serial
 *   - profile.Get         call -> profile, serial
 *   = entitlement.Check   call -> entitlement   \
 *   = inventory.Query     call -> inventory      | parallel fan-out
 *   = pricing.Quote       call -> pricing, queue | (two calls in enterprise
 *                                               |  requests of the window)
 *   = recommendation.Get  call, no server span  /  (split unknown)
 *   - assemble            local, serial
 * plus, in every fifth request, a local span whose name is hostile: CSI
 * clear-screen, an OSC window title, BEL, a C1 CSI, malformed UTF-8 and
 * wide CJK characters. The pricing client span carries hostile attribute
 * values too.
 *
 * Baseline: 40 requests from T0, mix 70/20/10 standard/premium/enterprise.
 * Window:   40 requests from T0 + 10 min, mix 60/20/20; enterprise pricing
 * calls wait ~240 ms in the client (pool) while pricing's service time is
 * unchanged, which breaches the 300 ms objective.
 *
 * fx_more() adds a later batch (for live-update tests): 20 requests from
 * T0 + 20 min, all with a new "audit.Log" call.
 */
#ifndef TT_TEST_TUI_FIXTURE_H
#define TT_TEST_TUI_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "model_json.h"
#include "store.h"

#define FX_BASE_FROM T0
#define FX_WIN_FROM (T0 + (int64_t)600 * 1000000000)
#define FX_MORE_FROM (T0 + (int64_t)1200 * 1000000000)
#define FX_N 40

static const char FX_HOSTILE_NAME[] =
    "tmpl\x1b[2J\x1b]0;pwned\x07 \xe6\xbc\xa2\xe5\xad\x97 bell\x07 c1\xc2\x9b" "31m bad\xff\xfe end";

static const char FX_HOSTILE_ATTRS[] =
    "{\"http.method\":\"GET\",\"peer.service\":\"pricing\","
    "\"note\":\"\\u001b[2J\\u001b]0;title\\u0007 bell\\u0007 c1\\u009b31m \\u6f22\\u5b57 wide\","
    "\"raw\":\"bad\xff utf8\",\"retries\":2,\"tags\":[\"a\",\"b\"]}";

static const char FX_MODEL_JSON[] =
    "{\"endpoint\":\"GET /v2/home\","
    "\"root\":{\"service\":\"mercury-api\",\"operation\":\"GET /v2/home\"},"
    "\"objective\":{\"percentile\":99,\"threshold_ms\":300},"
    "\"classes\":{\"attribute\":\"workload.class\",\"values\":[\"standard\",\"premium\",\"enterprise\"]},"
    "\"nodes\":["
    "{\"service\":\"mercury-api\",\"operation\":\"validate\",\"label\":\"validate\",\"mandatory\":true,\"core\":true},"
    "{\"service\":\"profile\",\"mandatory\":true,\"core\":true,\"pool\":\"profile\"},"
    "{\"service\":\"entitlement\",\"mandatory\":true,\"core\":true},"
    "{\"service\":\"inventory\",\"mandatory\":true,\"core\":true},"
    "{\"service\":\"pricing\",\"mandatory\":true,\"core\":true,\"pool\":\"pricing\"},"
    "{\"service\":\"mercury-api\",\"operation\":\"recommendation.Get\",\"label\":\"recommendation\",\"mandatory\":false,\"core\":false},"
    "{\"service\":\"mercury-api\",\"operation\":\"assemble\",\"label\":\"assemble\",\"mandatory\":true,\"core\":true}],"
    "\"pools\":[{\"name\":\"pricing\",\"kind\":\"client\",\"node\":\"pricing\",\"size\":256}],"
    "\"budgets\":["
    "{\"id\":\"p99\",\"evidence\":\"ingress.p99_ms\",\"op\":\">\",\"threshold\":300,\"unit\":\"ms\",\"label\":\"ingress p99 above 300 ms\"},"
    "{\"id\":\"queue_age\",\"evidence\":\"endpoint.queue_age.p99_ms\",\"op\":\">\",\"threshold\":12,\"unit\":\"ms\",\"label\":\"queue age above 12 ms\"},"
    "{\"id\":\"pool_occupancy\",\"evidence\":\"pool.pricing.occupancy\",\"op\":\">\",\"threshold\":0.82,\"unit\":\"ratio\",\"label\":\"pricing pool occupancy above 82 %\"}]}";

typedef struct FxSpan {
	char trace[16], id[8], parent[8];
	const char *service, *name;
	int kind;
	double start, end;
	const char *wclass;
	double queue;
	const char *attrs;
} FxSpan;

static inline int fx_write(Store *st, const FxSpan *sp, int n, int64_t t0)
{
	Err err = {0};
	int64_t src;
	static int seq;
	char digest[65];
	snprintf(digest, sizeof digest, "tui-fixture-%d-%d", (int)getpid(), seq++);
	if (store_begin(st, &err) || store_source_add(st, "fixture", digest, "test", 0, &src, &err))
		return -1;
	for (int i = 0; i < n; i++) {
		StoreSpan s;
		memset(&s, 0, sizeof s);
		hexpad(s.trace_id, 32, sp[i].trace);
		hexpad(s.span_id, 16, sp[i].id);
		if (sp[i].parent[0])
			hexpad(s.parent_id, 16, sp[i].parent);
		s.service = sp[i].service;
		s.name = sp[i].name;
		s.kind = sp[i].kind;
		s.start_ns = t0 + MS(sp[i].start);
		s.end_ns = t0 + MS(sp[i].end);
		s.wclass = sp[i].wclass;
		s.attrs_json = sp[i].attrs;
		if (sp[i].queue > 0) {
			s.has_queue = 1;
			s.queue_ns = MS(sp[i].queue);
		}
		int added;
		if (store_span_add(st, src, &s, &added, &err)) {
			fprintf(stderr, "fixture: %s\n", err.msg);
			store_rollback(st);
			return -1;
		}
	}
	StoreSourceCounts c = {0};
	c.spans_added = n;
	if (store_source_finish(st, src, &c, "imported", &err) || store_commit(st, &err))
		return -1;
	return 0;
}

static inline void fx_add(FxSpan *v, int *n, const char *trace, const char *id, const char *parent,
                          const char *svc, const char *name, int kind, double s, double e,
                          const char *cls, double queue, const char *attrs)
{
	FxSpan *x = &v[(*n)++];
	memset(x, 0, sizeof *x);
	snprintf(x->trace, sizeof x->trace, "%s", trace);
	snprintf(x->id, sizeof x->id, "%s", id);
	snprintf(x->parent, sizeof x->parent, "%s", parent);
	x->service = svc;
	x->name = name;
	x->kind = kind;
	x->start = s;
	x->end = e;
	x->wclass = cls;
	x->queue = queue;
	x->attrs = attrs;
}

/* One request. window selects the incident behaviour; extra adds the
 * audit call of the later batch. */
static inline void fx_request(FxSpan *v, int *n, const char *tr, int i, int window, int extra)
{
	enum { S_ = SPAN_KIND_SERVER, C_ = SPAN_KIND_CLIENT, I_ = SPAN_KIND_INTERNAL };
	int m = i % 10;
	const char *cls = window ? (m < 6 ? "standard" : m < 8 ? "premium" : "enterprise")
	                         : (m < 7 ? "standard" : m < 9 ? "premium" : "enterprise");
	int ent = cls[0] == 'e';
	double t = 0;
	fx_add(v, n, tr, "va", "r", "mercury-api", "validate", I_, 1, 2.5 + (i % 3) * 0.5, NULL, 0, NULL);
	double pf = 8 + (i * 7 % 10);
	fx_add(v, n, tr, "cp", "r", "mercury-api", "profile.Get", C_, 3, 3 + pf, NULL, 0, NULL);
	fx_add(v, n, tr, "sp", "cp", "profile", "GET /profile", S_, 3.6, 3 + pf - 0.6, NULL, 0, NULL);
	double f0 = 3 + pf + 0.5;
	double en = 20 + (i * 3 % 15), in = 25 + (i * 5 % 20);
	fx_add(v, n, tr, "ce", "r", "mercury-api", "entitlement.Check", C_, f0, f0 + en, NULL, 0, NULL);
	fx_add(v, n, tr, "se", "ce", "entitlement", "Check", S_, f0 + 1, f0 + en - 1, NULL, 0, NULL);
	fx_add(v, n, tr, "ci", "r", "mercury-api", "inventory.Query", C_, f0 + 0.2, f0 + 0.2 + in, NULL, 0,
	       NULL);
	fx_add(v, n, tr, "si", "ci", "inventory", "Query", S_, f0 + 1.2, f0 + in - 0.8, NULL, 0, NULL);
	double svc = 40 + (i * 11 % 30);
	double wait = 2 + (i % 4) + (window && ent ? 230 + (i % 5) * 8 : 0);
	double q = window && ent ? 6 + (i % 3) : 1;
	double ps = f0 + 0.4;
	fx_add(v, n, tr, "cq", "r", "mercury-api", "pricing.Quote", C_, ps, ps + wait + svc, NULL, q,
	       FX_HOSTILE_ATTRS);
	fx_add(v, n, tr, "sq", "cq", "pricing", "Quote", S_, ps + wait, ps + wait + svc, NULL, 0,
	       "{\"db.system\":\"postgresql\"}");
	if (window && ent) { /* enterprise quotes are partitioned: a second call */
		fx_add(v, n, tr, "cq2", "r", "mercury-api", "pricing.Quote", C_, ps + 0.1, ps + wait + svc - 6,
		       NULL, q, NULL);
		fx_add(v, n, tr, "sq2", "cq2", "pricing", "Quote", S_, ps + wait - 3, ps + wait + svc - 6, NULL, 0,
		       NULL);
	}
	fx_add(v, n, tr, "cr", "r", "mercury-api", "recommendation.Get", C_, f0 + 0.6,
	       f0 + 0.6 + 15 + (i % 7), NULL, 0, NULL);
	double fend = ps + wait + svc;
	if (f0 + en > fend)
		fend = f0 + en;
	if (f0 + 0.2 + in > fend)
		fend = f0 + 0.2 + in;
	t = fend + 0.5;
	if (i % 5 == 0) {
		fx_add(v, n, tr, "hx", "r", "mercury-api", FX_HOSTILE_NAME, I_, t, t + 1, NULL, 0, NULL);
		t += 1.2;
	}
	if (extra) {
		fx_add(v, n, tr, "ca", "r", "mercury-api", "audit.Log", C_, t, t + 4, NULL, 0, NULL);
		fx_add(v, n, tr, "sa", "ca", "audit", "Log", S_, t + 0.5, t + 3.5, NULL, 0, NULL);
		t += 4.2;
	}
	fx_add(v, n, tr, "as", "r", "mercury-api", "assemble", I_, t, t + 3 + (i % 4), NULL, 0, NULL);
	t += 3 + (i % 4) + 0.4;
	/* the root last in the array, first in time */
	fx_add(v, n, tr, "r", "", "mercury-api", "GET /v2/home", S_, 0, t, cls, 0,
	       "{\"http.route\":\"/v2/home\"}");
}

/* Writes one batch of count requests, one second apart from t0. prefix
 * is a one-letter tag making trace ids unique per batch. */
static inline int fx_batch(Store *st, int64_t t0, char prefix, int count, int window, int extra)
{
	FxSpan *v = calloc((size_t)count * 20, sizeof *v);
	int total = 0;
	for (int i = 0; i < count; i++) {
		char tr[16];
		snprintf(tr, sizeof tr, "%c%03d", prefix, i % 1000);
		int n = 0;
		FxSpan one[20];
		fx_request(one, &n, tr, i, window, extra);
		for (int k = 0; k < n; k++) {
			one[k].start += i * 1000.0;
			one[k].end += i * 1000.0;
			v[total++] = one[k];
		}
	}
	int rc = fx_write(st, v, total, t0);
	free(v);
	return rc;
}

/* Creates the database at path (baseline + window). */
static inline int fx_make_db(const char *path)
{
	Err err = {0};
	Store *st = NULL;
	if (store_open(path, 0, &st, &err)) {
		fprintf(stderr, "fixture: %s\n", err.msg);
		return -1;
	}
	int rc = fx_batch(st, FX_BASE_FROM, 'b', FX_N, 0, 0) || fx_batch(st, FX_WIN_FROM, 'w', FX_N, 1, 0);
	store_close(st);
	return rc ? -1 : 0;
}

/* Appends the later batch (another writer, as an import would). */
static inline int fx_more(const char *path)
{
	Err err = {0};
	Store *st = NULL;
	if (store_open(path, 0, &st, &err))
		return -1;
	int rc = fx_batch(st, FX_MORE_FROM, 'm', 20, 1, 1);
	store_close(st);
	return rc;
}

static inline Model *fx_model(void)
{
	Model *m = NULL;
	Err err = {0};
	if (model_parse("fixture-model", FX_MODEL_JSON, strlen(FX_MODEL_JSON), &m, &err)) {
		fprintf(stderr, "fixture model: %s\n", err.msg);
		return NULL;
	}
	return m;
}

#endif
