/*
 * trace_view.c - one trace laid out for the waterfall: spans depth-first
 * in start order, the critical path marked, client waits and queues.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "trace_build.h"

static int on_row(void *ctx, const StoreSpanRow *r)
{
	trace_add(ctx, r);
	return 0;
}

static void emit(const Trace *t, int s, int parent_out, int depth, TraceView *tv, char *done)
{
	if (done[s])
		return;
	done[s] = 1;
	const TSpan *sp = &t->sp[s];
	int me = tv->n_spans++;
	TraceSpan *o = &tv->spans[me];
	memset(o, 0, sizeof *o);
	snprintf(o->span_id, sizeof o->span_id, "%s", trace_str(t, sp->sid));
	snprintf(o->parent_id, sizeof o->parent_id, "%s", trace_str(t, sp->pid));
	o->parent = parent_out;
	o->depth = depth;
	o->service = xstrdup(trace_str(t, sp->svc));
	o->name = xstrdup(trace_str(t, sp->name));
	o->peer = xstrdup(sp->kind != SPAN_KIND_CLIENT ? ""
	                  : sp->server >= 0 ? trace_str(t, t->sp[sp->server].svc)
	                                    : trace_callee(t, s));
	o->kind = sp->kind;
	o->start_ns = sp->start;
	o->end_ns = sp->end;
	o->status_code = sp->status;
	o->on_critical_path = sp->on_path;
	o->crit_ms = (double)(sp->crit + sp->crit_queue) / 1e6;
	o->paired = sp->server >= 0;
	o->db_call = !o->paired && sp->kind == SPAN_KIND_CLIENT && sp->db != 0;
	if (o->paired) {
		const TSpan *sv = &t->sp[sp->server];
		int64_t d = sp->end - sp->start, sd = sv->aend - sv->astart;
		if (sd < 0)
			sd = 0;
		o->client_wait_ms = (double)(d - (sd < d ? sd : d)) / 1e6;
	}
	o->has_queue = sp->has_queue;
	o->queue_ms = (double)sp->queue / 1e6;
	o->orphan = sp->orphan;
	o->attrs_json = xstrdup(trace_str(t, sp->attrs));
	o->events_json = xstrdup(trace_str(t, sp->events));
	if (depth > 200)
		return;
	for (int c = sp->first_child; c >= 0; c = t->sp[c].next_sibling)
		emit(t, c, me, depth + 1, tv, done);
}

int trace_view_load(Store *st, const char *trace_id, const SkewTolerance *skew,
                    TraceView **out, Err *err)
{
	*out = NULL;
	Trace t;
	trace_init(&t);
	trace_set_skew(&t, skew);
	trace_reset(&t, trace_id);
	if (store_trace_scan(st, trace_id, on_row, &t, err)) {
		trace_fini(&t);
		return TT_ESTORE;
	}
	if (t.n == 0) {
		trace_fini(&t);
		return err_set(err, TT_ENOTFOUND, "trace %s not found", trace_id);
	}
	trace_link(&t);
	if (!t.cyclic)
		trace_critical_path(&t);
	TraceView *tv = xcalloc(1, sizeof *tv);
	snprintf(tv->trace_id, sizeof tv->trace_id, "%s", trace_id);
	tv->spans = xcalloc((size_t)t.n, sizeof *tv->spans);
	tv->start_ns = INT64_MAX;
	tv->end_ns = INT64_MIN;
	for (int i = 0; i < t.n; i++) {
		if (t.sp[i].start < tv->start_ns)
			tv->start_ns = t.sp[i].start;
		if (t.sp[i].end > tv->end_ns)
			tv->end_ns = t.sp[i].end;
	}
	char *done = xcalloc((size_t)t.n, 1);
	if (t.root >= 0) {
		emit(&t, t.root, -1, 0, tv, done);
		tv->wclass = xstrdup(trace_str(&t, t.sp[t.root].cls));
	} else {
		tv->wclass = xstrdup("");
	}
	for (int i = 0; i < t.n; i++)
		if (t.sp[i].orphan)
			emit(&t, i, -1, 0, tv, done);
	/* spans in a cycle (or cut off by depth) are still listed, flat */
	for (int i = 0; i < t.n; i++)
		if (!done[i])
			emit(&t, i, -1, 0, tv, done);
	free(done);
	trace_fini(&t);
	*out = tv;
	return 0;
}

void trace_view_free(TraceView *tv)
{
	if (tv == NULL)
		return;
	for (int i = 0; i < tv->n_spans; i++) {
		free(tv->spans[i].service);
		free(tv->spans[i].name);
		free(tv->spans[i].peer);
		free(tv->spans[i].attrs_json);
		free(tv->spans[i].events_json);
	}
	free(tv->spans);
	free(tv->wclass);
	free(tv);
}
