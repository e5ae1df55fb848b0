/*
 * evidence_caller.c - the evidence on the services that make calls, callee
 * by callee, for the starved-caller rule (caller-saturation).
 *
 * A process short of CPU, threads or event-loop time is late to send its
 * calls and late to read their answers: every client-side wait it records
 * grows, toward all of its callees at once, while the callees' own server
 * spans do not move. A short connection pool in front of one callee makes
 * only that callee's calls wait. So, per caller (the service of the client
 * spans) and callee, this puts the p90 of the client-side wait (client
 * span minus server span) and of the server's own time, in the window and
 * the baseline, with their order-statistics intervals. The counts that
 * compare them (caller.S.waits_rose, caller.S.starved, ...) are derived
 * from these values in evidence.c, so an observation sheet can give the
 * per-callee values too.
 *
 * Only calls with a server span count: a database call or a call to a
 * service that sends no spans has no client-side wait of its own.
 */
#include "evidence.h"
#include "evidence_priv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quantile.h"

/* A set's paired calls grouped by (caller, dependency): the group of key
 * caller * n_deps + dep is order[start[key] .. start[key + 1]). */
typedef struct Groups {
	int64_t *start, *order;
} Groups;

static int paired(const EvCall *c)
{
	return c->caller >= 0 && c->dep >= 0 && !c->db && !isnan(c->wait_ms) && !isnan(c->service_ms);
}

static void groups(const EvRequestSet *s, Groups *g)
{
	int64_t nk = (int64_t)s->n_callers * s->n_deps;
	g->start = xcalloc((size_t)nk + 2, sizeof *g->start);
	g->order = xmalloc((size_t)(s->n_calls ? s->n_calls : 1) * sizeof *g->order);
	for (int64_t i = 0; i < s->n_calls; i++)
		if (paired(&s->calls[i]))
			g->start[(int64_t)s->calls[i].caller * s->n_deps + s->calls[i].dep + 1]++;
	for (int64_t k = 0; k < nk; k++)
		g->start[k + 1] += g->start[k];
	int64_t *at = xmalloc((size_t)(nk + 1) * sizeof *at);
	memcpy(at, g->start, (size_t)(nk + 1) * sizeof *at);
	for (int64_t i = 0; i < s->n_calls; i++)
		if (paired(&s->calls[i]))
			g->order[at[(int64_t)s->calls[i].caller * s->n_deps + s->calls[i].dep]++] = i;
	free(at);
}

static int find(char **list, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (strcmp(list[i], s) == 0)
			return i;
	return -1;
}

/* The p90 of one field of group key of set s, with its interval, as name
 * (and name@baseline for the baseline). Returns the calls it read. */
static int64_t put_p90(Evidence *e, const char *name, const EvRequestSet *s, const Groups *g,
                       int64_t key, int wait, int p, const char *caller, const char *callee,
                       double *buf)
{
	int64_t lo = g->start[key], hi = g->start[key + 1], n = 0;
	for (int64_t j = lo; j < hi; j++) {
		const EvCall *c = &s->calls[g->order[j]];
		buf[n++] = wait ? c->wait_ms : c->service_ms;
	}
	Quant q;
	quant_fill(&q, buf, n);
	char full[360];
	snprintf(full, sizeof full, "%s%s", name, p ? "@baseline" : "");
	EvValue *v = ev_put(e, full, q.p90, "ms", EV_SRC_SPANS, EV_Q_EXACT, q.n, 0,
	                    "spans: exact nearest-rank p90 of %lld %s of %s's calls to %s (%s)",
	                    (long long)q.n, wait ? "client-side waits (client span minus server span)"
	                                         : "server spans",
	                    caller, callee, p ? "baseline" : "window");
	ev_ci(v, q.p90_lo, q.p90_hi);
	return n;
}

void ev_callers(Evidence *e, const EvRequestSet *w, const EvRequestSet *b)
{
	if (w->n_callers == 0 || b->n_callers == 0 || w->n_deps == 0 || b->n_deps == 0)
		return;
	Groups gw, gb;
	groups(w, &gw);
	groups(b, &gb);
	int64_t most = 1;
	for (int64_t k = 0; k < (int64_t)w->n_callers * w->n_deps; k++)
		if (gw.start[k + 1] - gw.start[k] > most)
			most = gw.start[k + 1] - gw.start[k];
	for (int64_t k = 0; k < (int64_t)b->n_callers * b->n_deps; k++)
		if (gb.start[k + 1] - gb.start[k] > most)
			most = gb.start[k + 1] - gb.start[k];
	double *buf = xmalloc((size_t)most * sizeof *buf);
	for (int cw = 0; cw < w->n_callers; cw++) {
		int cb = find(b->callers, b->n_callers, w->callers[cw]);
		if (cb < 0)
			continue;
		char cseg[96], dseg[96], name[320];
		evidence_segment(w->callers[cw], cseg, sizeof cseg);
		int callees = 0;
		for (int dw = 0; dw < w->n_deps; dw++) {
			/* calls to itself: its server spans are in the starved
			 * process too, so they say nothing about the callee */
			int db = find(b->deps, b->n_deps, w->deps[dw]);
			if (db < 0 || strcmp(w->deps[dw], w->callers[cw]) == 0)
				continue;
			int64_t kw = (int64_t)cw * w->n_deps + dw, kb = (int64_t)cb * b->n_deps + db;
			/* a p90 of fewer calls is close to the maximum: not compared */
			if (gw.start[kw + 1] - gw.start[kw] < EV_MIN_RATIO_N ||
			    gb.start[kb + 1] - gb.start[kb] < EV_MIN_RATIO_N)
				continue;
			evidence_segment(w->deps[dw], dseg, sizeof dseg);
			static const char *const field[2] = {"service", "client_wait"};
			for (int f = 0; f < 2; f++) {
				snprintf(name, sizeof name, "caller.%s.callee.%s.%s.p90_ms", cseg, dseg, field[f]);
				put_p90(e, name, w, &gw, kw, f, 0, w->callers[cw], w->deps[dw], buf);
				put_p90(e, name, b, &gb, kb, f, 1, w->callers[cw], w->deps[dw], buf);
			}
			callees++;
		}
		if (callees >= 2)
			ev_list_add(&e->callers, &e->n_callers, w->callers[cw]);
	}
	free(buf);
	free(gw.start);
	free(gw.order);
	free(gb.start);
	free(gb.order);
}
