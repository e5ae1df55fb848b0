/*
 * evidence_match.c - request-duration histograms matched to the endpoint
 * and its dependencies: the metric twins of the span quantiles.
 *
 * Metrics that count every request (an SDK's HTTP and RPC duration
 * histograms, the Collector spanmetrics connector's) measure what the
 * spans measure, on every request instead of the sampled ones:
 *
 *   server side, emitted by service S    -> S is the endpoint's service: the
 *     http.server.request.duration          ingress (when the series' route
 *     http.server.duration (ms)             or span name is the endpoint's,
 *     rpc.server.duration (ms)              or the series name none)
 *     rpc.server.call.duration           -> S is a dependency D: D's server
 *     spanmetrics, span.kind SERVER         time (all of D's requests)
 *   client side, emitted by caller C     -> the call of C whose client spans
 *     http.client.request.duration          name the series' peer
 *     http.client.duration (ms)             (server.address[:server.port],
 *     rpc.client.duration (ms)              net.peer.name[:port],
 *     rpc.client.call.duration              peer.service, rpc.service), or
 *     spanmetrics, span.kind CLIENT         for spanmetrics its span name
 *                                           when only one call of C has it:
 *                                           D's client-observed time
 *
 * Spanmetrics families are recognised by name (traces.span.metrics.
 * duration, and the older duration and latency) and by their dimensions
 * (span.name and span.kind on the series). Names are compared in a normal
 * form (lower case, '_' as '.', a trailing unit word dropped), so the
 * Prometheus spellings (http_server_request_duration_seconds,
 * traces_span_metrics_duration_milliseconds) are the same metrics. A
 * series names its service by its resource (service.name), else by a
 * service.name, service or job label.
 *
 * Each target takes the family that counted the most requests in the
 * window (families are never mixed). The values are written as
 * "<name>.metric" ("ingress.p99_ms.metric", "dep.D.service.p90_ms.metric",
 * "dep.D.client.p99_ms.metric", each with "@baseline"), next to the span
 * figures; ev_best_source() (evidence_metrics.c) then decides which of the
 * two each name reports.
 */
#include "evidence.h"
#include "evidence_hist.h"
#include "evidence_priv.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

enum { FK_SERVER, FK_CLIENT, FK_SPANMETRICS };

/* What a histogram family is, by its normal name; -1 none. *dflt_ms:
 * milliseconds per unit when the family says no unit. */
static int classify(const char *family, double *dflt_ms)
{
	char n[200];
	ev_metric_norm(family, n, sizeof n);
	static const struct {
		const char *name;
		int kind;
		double ms;
	} T[] = {
		{"http.server.request.duration", FK_SERVER, 1000},
		{"http.server.duration", FK_SERVER, 1},
		{"rpc.server.duration", FK_SERVER, 1},
		{"rpc.server.call.duration", FK_SERVER, 1000},
		{"http.client.request.duration", FK_CLIENT, 1000},
		{"http.client.duration", FK_CLIENT, 1},
		{"rpc.client.duration", FK_CLIENT, 1},
		{"rpc.client.call.duration", FK_CLIENT, 1000},
		{"traces.span.metrics.duration", FK_SPANMETRICS, 1},
		{"traces.spanmetrics.duration", FK_SPANMETRICS, 1},
		{"traces.spanmetrics.latency", FK_SPANMETRICS, 1},
		{"spanmetrics.duration", FK_SPANMETRICS, 1},
		{"spanmetrics.latency", FK_SPANMETRICS, 1},
		{"duration", FK_SPANMETRICS, 1},
		{"latency", FK_SPANMETRICS, 1},
	};
	for (size_t i = 0; i < sizeof T / sizeof T[0]; i++)
		if (strcmp(n, T[i].name) == 0) {
			*dflt_ms = T[i].ms;
			return T[i].kind;
		}
	return -1;
}

/* ---- targets ------------------------------------------------------------------ */

/* Target 0 is the ingress; then two per dependency: 1 + 2k its server
 * time, 2 + 2k its client-observed time. */
typedef struct Match {
	const Analysis *a;        /* may be NULL: no client series matched */
	const char *root_service, *root_op;
	const Evidence *e;
	int kind;                 /* FK_* of the family being scanned */
	int n_targets;
	/* what each target's series were, for the provenance (first seen) */
	char (*note)[160];
	int *no_route;            /* ingress series without a route or span name */
	int *ambiguous;           /* client series whose span name several calls share */
} Match;

static int same_name(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return 0;
	if (strcmp(a, b) == 0)
		return 1;
	char x[128], y[128];
	evidence_segment(a, x, sizeof x);
	evidence_segment(b, y, sizeof y);
	return x[0] && strcmp(x, y) == 0;
}

static const char *node_dep(const DagNode *d)
{
	return d->dependency ? d->dependency : d->db_system ? d->db_system : d->peer;
}

static int dep_index(const Evidence *e, const char *dep)
{
	for (int k = 0; dep && k < e->n_deps; k++)
		if (strcmp(e->deps[k], dep) == 0)
			return k;
	return -1;
}

/* The service a series belongs to: a service.name label (spanmetrics
 * puts the spans' service there, under the Collector's own resource),
 * else its resource, else a service or job label (Prometheus). */
static void series_service(const StoreMetricRow *r, char *out, size_t sz)
{
	out[0] = '\0';
	if (ev_label(r->labels_json, "service.name", out, sz) && out[0])
		return;
	if (r->service && r->service[0]) {
		snprintf(out, sz, "%s", r->service);
		return;
	}
	static const char *const KEYS[] = {"service", "job", NULL};
	for (int i = 0; KEYS[i]; i++)
		if (ev_label(r->labels_json, KEYS[i], out, sz) && out[0])
			return;
	out[0] = '\0';
}

/* The span kind a spanmetrics series carries: FK_SERVER, FK_CLIENT or -1. */
static int span_kind(const char *labels)
{
	char k[64];
	if (!ev_label(labels, "span.kind", k, sizeof k))
		return -1;
	for (char *p = k; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	if (strstr(k, "server"))
		return FK_SERVER;
	if (strstr(k, "client"))
		return FK_CLIENT;
	return -1;
}

/* Does the series' operation (route, RPC method or span name) name the
 * endpoint's root operation? 1 yes, 0 no, -1 the series names none. */
static int names_root(const StoreMetricRow *r, int spanmetrics, const char *root_op)
{
	char v[256], m[64];
	if (root_op == NULL)
		return -1;
	if (spanmetrics)
		return ev_label(r->labels_json, "span.name", v, sizeof v) ? strcmp(v, root_op) == 0 : -1;
	/* a method must not contradict the one the root's name starts with
	 * ("GET /cart", or "GET" alone when the server knows no route) */
	static const char *const METHODS[] = {"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD",
	                                      "OPTIONS", NULL};
	size_t lw = strcspn(root_op, " ");
	int root_method = 0;
	for (int i = 0; METHODS[i] && !root_method; i++)
		root_method = strlen(METHODS[i]) == lw && strncmp(root_op, METHODS[i], lw) == 0;
	if (root_method && (ev_label(r->labels_json, "http.request.method", m, sizeof m) ||
	                    ev_label(r->labels_json, "http.method", m, sizeof m)) &&
	    (strlen(m) != lw || strncmp(root_op, m, lw) != 0))
		return 0;
	if (ev_label(r->labels_json, "http.route", v, sizeof v) && v[0]) {
		/* "GET /cart" against the route "/cart" */
		size_t lo = strlen(root_op), lv = strlen(v);
		if (strcmp(root_op, v) == 0)
			return 1;
		return lo > lv && strcmp(root_op + lo - lv, v) == 0 && root_op[lo - lv - 1] == ' ';
	}
	if (ev_label(r->labels_json, "rpc.method", v, sizeof v) && v[0]) {
		/* "shop.Cart/Get" against rpc.service shop.Cart, rpc.method Get */
		const char *slash = strrchr(root_op, '/');
		if (strcmp(slash ? slash + 1 : root_op, v) != 0)
			return 0;
		return ev_label(r->labels_json, "rpc.service", m, sizeof m) && slash
		           ? strncmp(root_op, m, (size_t)(slash - root_op)) == 0 &&
		                 strlen(m) == (size_t)(slash - root_op)
		           : 1;
	}
	return -1;
}

/* "host:port" or "host" of a client series' peer (several spellings). */
static int series_peer(const char *labels, char *addr, size_t sz, char *hostonly, size_t hsz)
{
	static const struct {
		const char *host, *port;
	} P[] = {
		{"server.address", "server.port"},
		{"net.peer.name", "net.peer.port"},
		{"net.host.name", NULL},
	};
	char h[160], pt[32];
	for (size_t i = 0; i < sizeof P / sizeof P[0]; i++)
		if (ev_label(labels, P[i].host, h, sizeof h) && h[0]) {
			snprintf(hostonly, hsz, "%s", h);
			if (P[i].port && ev_label(labels, P[i].port, pt, sizeof pt) && pt[0])
				snprintf(addr, sz, strchr(h, ':') ? "[%s]:%s" : "%s:%s", h, pt);
			else
				snprintf(addr, sz, "%s", h);
			return 1;
		}
	return 0;
}

/* The first series of target t says what the target's series are. */
static void note(Match *mt, int t, const char *a, const char *b, const char *c)
{
	if (t >= 0 && t < mt->n_targets && !mt->note[t][0])
		snprintf(mt->note[t], sizeof mt->note[t], "%s%s%s", a, b, c);
}

/* The target of a client series emitted by caller: the dependency of the
 * one call of caller that its peer (or span name) names. */
static int client_target(Match *mt, const StoreMetricRow *r, const char *caller, int spanmetrics)
{
	const Analysis *a = mt->a;
	char addr[200] = "", host[160] = "", ps[160] = "", rs[160] = "", sn[256] = "";
	series_peer(r->labels_json, addr, sizeof addr, host, sizeof host);
	ev_label(r->labels_json, "peer.service", ps, sizeof ps);
	ev_label(r->labels_json, "rpc.service", rs, sizeof rs);
	if (spanmetrics)
		ev_label(r->labels_json, "span.name", sn, sizeof sn);
	int found = -1, count = 0;
	for (int i = 0; i < a->n_nodes; i++) {
		const DagNode *d = &a->nodes[i];
		if (d->type != NODE_CALL || strcmp(d->service, caller) != 0 || node_dep(d) == NULL)
			continue;
		const char *dep = node_dep(d);
		int hit = 0;
		if (addr[0] && d->callee && (strcmp(d->callee, addr) == 0 || strcmp(d->callee, host) == 0))
			hit = 1;
		else if (ps[0] && same_name(ps, dep))
			hit = 1;
		else if (host[0] && same_name(host, dep))
			hit = 1;
		else if (!addr[0] && !ps[0] && sn[0] && strcmp(d->operation, sn) == 0)
			hit = 1;
		else if (!addr[0] && !ps[0] && !sn[0] && rs[0] &&
		         (same_name(rs, dep) || strncmp(d->operation, rs, strlen(rs)) == 0))
			hit = 1;
		if (!hit)
			continue;
		int k = dep_index(mt->e, dep);
		if (k < 0)
			continue;
		if (found != k) {
			count++;
			found = k;
		}
	}
	if (count != 1) {
		if (count > 1 && sn[0])
			mt->ambiguous[0]++;
		return -1;
	}
	int t = 2 + 2 * found;
	note(mt, t, "of ", caller, "'s calls to ");
	size_t l = strlen(mt->note[t]);
	snprintf(mt->note[t] + l, sizeof mt->note[t] - l, "%s",
	         addr[0] ? addr : ps[0] ? ps : sn[0] ? sn : rs);
	return t;
}

static int on_series(void *ctx, const StoreMetricRow *r)
{
	Match *mt = ctx;
	const Analysis *a = mt->a;
	char svc[160];
	series_service(r, svc, sizeof svc);
	int spanm = mt->kind == FK_SPANMETRICS;
	int kind = spanm ? span_kind(r->labels_json) : mt->kind;
	if (spanm) {
		char sn[8];
		if (kind < 0 || !ev_label(r->labels_json, "span.name", sn, sizeof sn))
			return -1; /* not spanmetrics after all, or a kind it does not say */
	}
	if (kind == FK_SERVER) {
		/* a series that names no service (a bare exposition of one
		 * process) is taken for the endpoint's own, and said so */
		if (!svc[0] || (mt->root_service && strcmp(svc, mt->root_service) == 0)) {
			int nr = names_root(r, spanm, mt->root_op);
			if (nr == 0)
				return -1;
			if (nr < 0)
				mt->no_route[0]++;
			note(mt, 0, "of ", svc[0] ? svc : "the endpoint (the series names no service)",
			     nr < 0 ? "'s server requests (all of them: the series names no route)"
			            : "'s server requests");
			return 0;
		}
		int k = -1;
		for (int i = 0; i < mt->e->n_deps && k < 0; i++)
			if (same_name(mt->e->deps[i], svc))
				k = i;
		if (k < 0)
			return -1;
		note(mt, 1 + 2 * k, "of ", svc, "'s server requests (every caller's, every route)");
		return 1 + 2 * k;
	}
	if (kind == FK_CLIENT && a && svc[0])
		return client_target(mt, r, svc, spanm);
	return -1;
}

/* ---- families ------------------------------------------------------------------- */

typedef struct Fam {
	char *name;
	int kind;
	double dflt_ms;
} Fam;

typedef struct FamList {
	Fam *f;
	int n;
} FamList;

static int on_family(void *ctx, const StoreMetricFamilyRow *r)
{
	FamList *l = ctx;
	if (r->points == 0 || r->type == NULL || !strstr(r->type, "histogram"))
		return 0;
	double ms;
	int k = classify(r->name, &ms);
	if (k < 0)
		return 0;
	for (int i = 0; i < l->n; i++)
		if (strcmp(l->f[i].name, r->name) == 0)
			return 0; /* the same name under another unit or temporality */
	l->f = xrealloc(l->f, (size_t)(l->n + 1) * sizeof *l->f);
	l->f[l->n++] = (Fam){xstrdup(r->name), k, ms};
	return 0;
}

static void put_target(Evidence *e, const char *base, const EvHist *h, double to_ms,
                       const char *what, const char *assumed, int pop, int with_p50)
{
	static const double PS[] = {99, 90, 50};
	for (int i = 0; i < (with_p50 ? 3 : 2); i++) {
		char name[300];
		snprintf(name, sizeof name, "%s.p%g_ms.metric%s", base, PS[i], pop ? "@baseline" : "");
		ev_put_hist_quantile(e, name, h, PS[i], to_ms, what, assumed, pop);
	}
}

int ev_metric_durations(Store *st, const EvidenceOptions *opt, const Analysis *a, Evidence *e,
                        Err *err)
{
	if (a && a->n_nodes == 0)
		a = NULL;
	const Model *model = opt->model;
	const char *root_service = a && a->root_service ? a->root_service
	                           : model ? model->root_service : NULL;
	const char *root_op = a && a->root_operation ? a->root_operation
	                      : model ? model->root_operation : NULL;
	FamList fl = {0};
	int rc = store_metric_families_scan(st, on_family, &fl, err);
	int np = opt->period.has_baseline ? 2 : 1;
	TimeRange ranges[2] = {opt->period.win, opt->period.base};
	int nt = 1 + 2 * e->n_deps;
	/* the chosen family of each target, and its window count */
	EvHist *best = xcalloc((size_t)nt * (size_t)np, sizeof *best);
	int *best_fam = xmalloc((size_t)nt * sizeof *best_fam);
	char (*best_note)[160] = xcalloc((size_t)nt, sizeof *best_note);
	int best_noroute = 0;
	for (int t = 0; t < nt; t++)
		best_fam[t] = -1;
	for (int f = 0; rc == 0 && f < fl.n; f++) {
		EvHist *h = xcalloc((size_t)nt * (size_t)np, sizeof *h);
		int no_route = 0, ambiguous = 0;
		Match mt = {.a = a, .root_service = root_service, .root_op = root_op, .e = e, .kind = fl.f[f].kind, .n_targets = nt,
		            .note = xcalloc((size_t)nt, sizeof *mt.note), .no_route = &no_route,
		            .ambiguous = &ambiguous};
		rc = ev_hist_collect(st, fl.f[f].name, NULL, on_series, &mt, nt, ranges, np, h, err);
		for (int t = 0; rc == 0 && t < nt; t++) {
			double have = best_fam[t] >= 0 ? ev_hist_total(&best[t * np]) : -1;
			if (!(ev_hist_total(&h[t * np]) > have) || h[t * np].nb < 2)
				continue;
			for (int k = 0; k < np; k++) {
				ev_hist_fini(&best[t * np + k]);
				best[t * np + k] = h[t * np + k];
				memset(&h[t * np + k], 0, sizeof h[0]);
			}
			best_fam[t] = f;
			snprintf(best_note[t], sizeof best_note[t], "%s", mt.note[t]);
			if (t == 0)
				best_noroute = no_route;
		}
		for (int i = 0; i < nt * np; i++)
			ev_hist_fini(&h[i]);
		free(h);
		free(mt.note);
	}
	for (int t = 0; rc == 0 && t < nt; t++) {
		if (best_fam[t] < 0)
			continue;
		const Fam *f = &fl.f[best_fam[t]];
		char base[256], seg[96];
		if (t == 0) {
			snprintf(base, sizeof base, "ingress");
		} else {
			evidence_segment(e->deps[(t - 1) / 2], seg, sizeof seg);
			snprintf(base, sizeof base, "dep.%s.%s", seg, (t - 1) % 2 ? "client" : "service");
		}
		for (int k = 0; k < np; k++) {
			const EvHist *h = &best[t * np + k];
			if (!(ev_hist_total(h) > 0))
				continue;
			const char *assumed;
			double to_ms = ev_hist_unit_ms(h->unit, h->family, f->dflt_ms, &assumed);
			put_target(e, base, h, to_ms, best_note[t], assumed, k, t == 0);
			if (t == 0) {
				/* the requests the metric counted, and their rate */
				char name[96];
				TimeRange r = ranges[k];
				double n = ev_hist_total(h);
				snprintf(name, sizeof name, "ingress.requests.metric%s", k ? "@baseline" : "");
				ev_put(e, name, n, "count", EV_SRC_METRIC, EV_Q_NONE, (int64_t)llround(n), 0,
				       "metric %s %s: count over the %s%s", h->family, best_note[t],
				       k ? "baseline" : "window",
				       best_noroute ? "; its series name no route, so every request of the "
				                      "service counts"
				                    : "");
				if (!time_range_open(r) && r.to > r.from && !h->single) {
					double secs = (double)(r.to - r.from) / 1e9;
					snprintf(name, sizeof name, "ingress.rate_rps%s", k ? "@baseline" : "");
					ev_put(e, name, n / secs, "1/s", EV_SRC_METRIC, EV_Q_NONE,
					       (int64_t)llround(n), 0,
					       "metric %s %s: %.0f requests over %.0f s (%s); every request, "
					       "not only the sampled traces", h->family, best_note[t], n, secs,
					       k ? "baseline" : "window");
				}
			}
		}
	}
	for (int i = 0; i < nt * np; i++)
		ev_hist_fini(&best[i]);
	free(best);
	free(best_fam);
	free(best_note);
	for (int f = 0; f < fl.n; f++)
		free(fl.f[f].name);
	free(fl.f);
	return rc;
}
