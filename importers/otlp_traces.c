/*
 * otlp_traces.c - OTLP/JSON ("otlp-json"): ExportTraceServiceRequest as one
 * document, or as JSON Lines (one request per line, what the OpenTelemetry
 * Collector's file exporter writes). That file may mix signals, a request a
 * line, when a traces, a metrics and a logs pipeline share it, so every
 * request is read by its own key: spans are stored here; a request with
 * "resourceMetrics" is skipped by this parser and its place noted, and once
 * the spans are stored otlp_metrics_ranges() reads those places again with
 * the metrics importer (same transaction, errors located in the file);
 * "resourceLogs" is walked down to its log records, which are counted
 * (ctx->skips) and not read. ImportOptions.signals narrows what is read
 * (the receiver's /v1/traces reads spans only): a request of another
 * signal then counts as unrecognised. One yajl handle with
 * yajl_allow_multiple_values reads both shapes, 64 KiB at a time; a line
 * that holds one whole value (and fits LINE_CAP) takes the simdjson fast
 * path of otlp_simd.h instead, which reports the same events to the same
 * callbacks. yajl stays the reference: a line simdjson rejects goes to yajl
 * as it is, a line whose events fail a check is replayed through yajl for
 * the located message, and a value spanning lines (a pretty-printed or
 * single-line document too long for LINE_CAP) is streamed through yajl
 * until a line ends at the top level again. Within that stream, a line
 * that starts with an item of the array yajl is in (a document written one
 * resourceSpans item per line) takes the fast path too, yajl getting a
 * muted placeholder in its place (see stream_fast()).
 *
 * What is read from the data (README.md cites this list):
 *  - service: resource attribute "service.name" ("" when missing);
 *  - host: resource attribute "host.name", else "k8s.pod.name";
 *  - workload class: span attribute <class key> ("workload.class" unless
 *    --class-key says otherwise), else the same resource attribute; a
 *    string, integer, double or bool value is kept as text;
 *  - queue time before a span (executor or pool wait), summed over carriers:
 *      span attribute "queue.wait_ns" (integer ns) or "queue.wait_ms"
 *      (number, ms; used only when "queue.wait_ns" is absent), and
 *      every span event named "queue.wait" with attribute "duration_ns"
 *      (integer ns) or "duration_ms" (number, ms; again ns wins);
 *      negative or non-finite values are not queue time (the attribute
 *      itself is still stored);
 *  - dropped: droppedAttributesCount + droppedEventsCount +
 *    droppedLinksCount of the span plus droppedAttributesCount of its
 *    events and links.
 * Stored shapes: attributes as a compact JSON object ({"k":v}; arrayValue ->
 * array, kvlistValue -> object, bytesValue -> its base64 string, intValue ->
 * number, doubleValue -> number or "NaN"/"Infinity"/"-Infinity", empty
 * AnyValue -> null); events as [{"name":..,"time_ns":..,"attrs":{..}}];
 * links as [{"trace_id":..,"span_id":..,"attrs":{..}}] plus "trace_state"
 * and "flags" when present. Ids are stored as lowercase hex; an empty or
 * all-zero parentSpanId means a root span. A missing "name" is the proto3
 * default "". Old "instrumentationLibrarySpans"/"instrumentationLibrary"
 * keys are read as "scopeSpans"/"scope". Unknown fields are skipped whole.
 *
 * An attribute key repeated within one list is kept twice, as given.
 *
 * Invariants:
 *  - memory is bounded by the largest span, two input chunks and a few
 *    batches for the store thread: a span's fields are buffered (in reused
 *    Bufs) until its object closes, then handed over and forgotten; only
 *    the context of the enclosing resourceSpans/scopeSpans (a few strings
 *    and ids) outlives a span;
 *  - parsing and storing overlap: the calling thread parses, a store thread
 *    (see "the store thread" below) is the only user of the Store until
 *    otlp_traces_run() returns, and is always joined before it does;
 *  - JSON objects are unordered: when "resource" (or "scope") arrives after
 *    spans of its resourceSpans (scopeSpans), those spans were stored
 *    without it and are patched by rowid range (store_span_set_*);
 *  - every input error is "file:line:col: message" pointing at the
 *    offending token (or at the opening brace of an object missing a
 *    field); a store error is "file: byte N: message"; the caller rolls
 *    the transaction back.
 */
#include <stddef.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "buf.h"
#include "formats.h"
#include "otlp_common.h"
#include "otlp_simd.h"
#include "route.h"

#define CHUNK_SIZE (64 * 1024)
#define LINE_CAP (4u << 20)           /* longest line for the fast path */
#define MAX_DEPTH 128                 /* JSON nesting outside attributes */
#define PROGRESS_STEP (4u << 20)

/* Frames of the request structure (attribute lists have their own). */
enum {
	F_REQ,
	F_RS_ARR,
	F_RS,
	F_RES,
	F_SS_ARR,
	F_SS,
	F_SCOPE,
	F_SPAN_ARR,
	F_SPAN,
	F_EV_ARR,
	F_EV,
	F_LINK_ARR,
	F_LINK,
	F_STATUS,
	F_RL_ARR,       /* resourceLogs: counted, never stored */
	F_RL,
	F_SL_ARR,
	F_SL,
	F_LR_ARR,
	F_COUNT
};

/* Field names of those frames. */
enum {
	K_NONE,
	K_RESOURCE_SPANS,
	K_RESOURCE,
	K_SCOPE_SPANS,
	K_SCOPE,
	K_SPANS,
	K_ATTRIBUTES,
	K_DROPPED_ATTRS,
	K_NAME,
	K_VERSION,
	K_TRACE_ID,
	K_SPAN_ID,
	K_PARENT_SPAN_ID,
	K_TRACE_STATE,
	K_FLAGS,
	K_KIND,
	K_START,
	K_END,
	K_DROPPED_EVENTS,
	K_DROPPED_LINKS,
	K_EVENTS,
	K_LINKS,
	K_STATUS,
	K_TIME,
	K_CODE,
	K_MESSAGE,
	K_RESOURCE_METRICS,
	K_RESOURCE_LOGS,
	K_SCOPE_LOGS,
	K_LOG_RECORDS,
	K_COUNT
};

static const char *const key_name[K_COUNT] = {
	"", "resourceSpans", "resource", "scopeSpans", "scope", "spans", "attributes",
	"droppedAttributesCount", "name", "version", "traceId", "spanId", "parentSpanId",
	"traceState", "flags", "kind", "startTimeUnixNano", "endTimeUnixNano",
	"droppedEventsCount", "droppedLinksCount", "events", "links", "status",
	"timeUnixNano", "code", "message", "resourceMetrics", "resourceLogs", "scopeLogs",
	"logRecords",
};

/* The field named s (n bytes); K_NONE when unknown. */
static int key_lookup(const char *s, size_t n)
{
#define IS(lit) (memcmp(s, lit, sizeof(lit) - 1) == 0)
	switch (n) {
	case 4:
		return IS("name") ? K_NAME : IS("kind") ? K_KIND : IS("code") ? K_CODE : K_NONE;
	case 5:
		return IS("spans") ? K_SPANS : IS("scope") ? K_SCOPE
		     : IS("flags") ? K_FLAGS : IS("links") ? K_LINKS : K_NONE;
	case 6:
		return IS("spanId") ? K_SPAN_ID : IS("events") ? K_EVENTS
		     : IS("status") ? K_STATUS : K_NONE;
	case 7:
		return IS("traceId") ? K_TRACE_ID : IS("version") ? K_VERSION
		     : IS("message") ? K_MESSAGE : K_NONE;
	case 8:
		return IS("resource") ? K_RESOURCE : K_NONE;
	case 9:
		return IS("scopeLogs") ? K_SCOPE_LOGS : K_NONE;
	case 10:
		return IS("attributes") ? K_ATTRIBUTES : IS("traceState") ? K_TRACE_STATE
		     : IS("scopeSpans") ? K_SCOPE_SPANS : IS("logRecords") ? K_LOG_RECORDS : K_NONE;
	case 12:
		return IS("parentSpanId") ? K_PARENT_SPAN_ID : IS("timeUnixNano") ? K_TIME
		     : IS("resourceLogs") ? K_RESOURCE_LOGS : K_NONE;
	case 13:
		return IS("resourceSpans") ? K_RESOURCE_SPANS : K_NONE;
	case 15:
		return IS("endTimeUnixNano") ? K_END
		     : IS("resourceMetrics") ? K_RESOURCE_METRICS : K_NONE;
	case 17:
		return IS("startTimeUnixNano") ? K_START
		     : IS("droppedLinksCount") ? K_DROPPED_LINKS : K_NONE;
	case 18:
		return IS("droppedEventsCount") ? K_DROPPED_EVENTS : K_NONE;
	case 22:
		return IS("droppedAttributesCount") ? K_DROPPED_ATTRS
		     : IS("instrumentationLibrary") ? K_SCOPE : K_NONE;
	case 26:
		return IS("instrumentationLibraryLogs") ? K_SCOPE_LOGS : K_NONE;
	case 27:
		return IS("instrumentationLibrarySpans") ? K_SCOPE_SPANS : K_NONE;
	default:
		return K_NONE;
	}
#undef IS
}

#define KB(k) ((uint64_t)1 << (k))

/* Parser.want: the request keys read, IMPORT_SIGNAL_* plus this one for
 * counting log records (only when every signal is read: a file). */
#define WANT_LOGS 0x100u

static const uint64_t allowed[F_COUNT] = {
	[F_REQ] = KB(K_RESOURCE_SPANS) | KB(K_RESOURCE_METRICS) | KB(K_RESOURCE_LOGS),
	[F_RS] = KB(K_RESOURCE) | KB(K_SCOPE_SPANS),
	[F_RES] = KB(K_ATTRIBUTES) | KB(K_DROPPED_ATTRS),
	[F_SS] = KB(K_SCOPE) | KB(K_SPANS),
	[F_SCOPE] = KB(K_NAME) | KB(K_VERSION) | KB(K_ATTRIBUTES) | KB(K_DROPPED_ATTRS),
	[F_SPAN] = KB(K_TRACE_ID) | KB(K_SPAN_ID) | KB(K_PARENT_SPAN_ID) | KB(K_TRACE_STATE) |
	           KB(K_FLAGS) | KB(K_NAME) | KB(K_KIND) | KB(K_START) | KB(K_END) |
	           KB(K_ATTRIBUTES) | KB(K_DROPPED_ATTRS) | KB(K_EVENTS) |
	           KB(K_DROPPED_EVENTS) | KB(K_LINKS) | KB(K_DROPPED_LINKS) | KB(K_STATUS),
	[F_EV] = KB(K_TIME) | KB(K_NAME) | KB(K_ATTRIBUTES) | KB(K_DROPPED_ATTRS),
	[F_LINK] = KB(K_TRACE_ID) | KB(K_SPAN_ID) | KB(K_TRACE_STATE) | KB(K_FLAGS) |
	           KB(K_ATTRIBUTES) | KB(K_DROPPED_ATTRS),
	[F_STATUS] = KB(K_CODE) | KB(K_MESSAGE),
	[F_RL] = KB(K_SCOPE_LOGS),
	[F_SL] = KB(K_LOG_RECORDS),
};

/* Fields whose value is an array / an object; every other known field is a
 * scalar. */
static const uint64_t array_keys = KB(K_RESOURCE_SPANS) | KB(K_SCOPE_SPANS) | KB(K_SPANS) |
                                   KB(K_ATTRIBUTES) | KB(K_EVENTS) | KB(K_LINKS) |
                                   KB(K_RESOURCE_METRICS) | KB(K_RESOURCE_LOGS) |
                                   KB(K_SCOPE_LOGS) | KB(K_LOG_RECORDS);
static const uint64_t object_keys = KB(K_RESOURCE) | KB(K_SCOPE) | KB(K_STATUS);

static int is_array_frame(int t)
{
	return t == F_RS_ARR || t == F_SS_ARR || t == F_SPAN_ARR || t == F_EV_ARR ||
	       t == F_LINK_ARR || t == F_RL_ARR || t == F_SL_ARR || t == F_LR_ARR;
}

static const char *array_frame_name(int t)
{
	switch (t) {
	case F_RS_ARR: return "resourceSpans";
	case F_SS_ARR: return "scopeSpans";
	case F_SPAN_ARR: return "spans";
	case F_EV_ARR: return "events";
	case F_RL_ARR: return "resourceLogs";
	case F_SL_ARR: return "scopeLogs";
	case F_LR_ARR: return "logRecords";
	default: return "links";
	}
}

/* ---- the store thread ---------------------------------------------------- */

/*
 * Parsing and storing each cost seconds per million spans and the machine
 * has more than one core, so they overlap: the parser turns the input into
 * records (in input order) in a few fixed batches, and a second thread
 * replays them into the store. Only that thread touches the Store while
 * otlp_traces_run() is running; the caller gets it back after the join.
 * Memory stays bounded: N_BATCHES batches of at most BATCH_RECS records and
 * about BATCH_BYTES of strings (plus one record's strings).
 */

enum { OP_RS, OP_RESOURCE, OP_SS, OP_SCOPE, OP_SPAN };

/* String slots of a record: offsets into its batch's arena. */
enum {
	S_NAME,         /* span or scope name */
	S_VERSION,      /* scope version */
	S_SERVICE,      /* resource service.name */
	S_HOST,         /* resource host.name / k8s.pod.name */
	S_CLASS,        /* workload class of a span (its own attribute) or resource */
	S_STATUS_MSG,
	S_TRACE_STATE,
	S_ATTRS,
	S_EVENTS,
	S_LINKS,
	S_PEER,         /* what the span's attributes name its peer, "" none */
	S_DB,           /* ... and its database system */
	S_ROUTE,        /* a server or parentless span's route (route.h) */
	S_COUNT
};

#define NO_STR SIZE_MAX
#define BATCH_RECS 512
#define BATCH_BYTES (256 * 1024)
#define N_BATCHES 4

typedef struct Rec {
	unsigned char op;       /* OP_* */
	uint64_t at;            /* input offset, for store error messages */
	StoreSpan sp;           /* OP_SPAN: everything but the strings */
	size_t str[S_COUNT];    /* arena offsets, NO_STR for none */
} Rec;

typedef struct Batch {
	Rec *recs;              /* BATCH_RECS of them, allocated on first use */
	int n;
	Buf arena;
} Batch;

/* The store thread's view of the current resourceSpans/scopeSpans. */
typedef struct Sink {
	ImportCtx *ctx;
	Err err;
	int has_res;            /* the resource was interned */
	int64_t res_id;
	int64_t rs_first;       /* rowid of the first span stored for it, 0 = none */
	int has_service, has_host, has_class;
	Buf service, host, wclass;
	int has_scope;
	int64_t scope_id;
	int64_t ss_first;
} Sink;

typedef struct Pipe {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	Batch *free_b[N_BATCHES];
	int n_free;
	Batch *full[N_BATCHES]; /* FIFO */
	int full_head, n_full;
	int done;               /* the parser finished: no more batches */
	int abort;              /* the parser failed: stop */
	int failed;             /* the store thread failed: sink.err says why */
	Batch *cur;             /* the batch the parser fills */
	pthread_t thread;
	int started;
	Sink sink;
	Batch batches[N_BATCHES];
} Pipe;

static const char *rec_str(const Batch *b, const Rec *r, int slot)
{
	return r->str[slot] == NO_STR ? NULL : b->arena.p + r->str[slot];
}

static int sink_fail(Sink *k, const Rec *r)
{
	char msg[sizeof k->err.msg];
	snprintf(msg, sizeof msg, "%s", k->err.msg);
	int code = k->err.code ? k->err.code : TT_ESTORE;
	return err_set(&k->err, code, "%s: byte %llu: %s", k->ctx->name,
	               (unsigned long long)import_pb_offset(k->ctx, r->at), msg);
}

static int sink_resource(Sink *k, const Batch *b, const Rec *r)
{
	ImportCtx *c = k->ctx;
	const char *service = rec_str(b, r, S_SERVICE), *host = rec_str(b, r, S_HOST);
	const char *wclass = rec_str(b, r, S_CLASS);
	if (store_resource_intern(c->st, service, host, rec_str(b, r, S_ATTRS), &k->res_id,
	                          &k->err))
		return sink_fail(k, r);
	k->has_res = 1;
	k->has_service = service != NULL;
	k->has_host = host != NULL;
	k->has_class = wclass != NULL;
	buf_reset(&k->service);
	buf_reset(&k->host);
	buf_reset(&k->wclass);
	if (service)
		buf_adds(&k->service, service);
	if (host)
		buf_adds(&k->host, host);
	if (wclass)
		buf_adds(&k->wclass, wclass);
	if (k->rs_first) {
		/* spans of this resourceSpans came before its resource */
		if (store_span_set_resource(c->st, c->source_id, k->rs_first, k->res_id, service,
		                            host, &k->err))
			return sink_fail(k, r);
		if (wclass &&
		    store_span_set_class(c->st, c->source_id, k->rs_first, wclass, &k->err))
			return sink_fail(k, r);
	}
	return 0;
}

static int sink_scope(Sink *k, const Batch *b, const Rec *r)
{
	ImportCtx *c = k->ctx;
	if (store_scope_intern(c->st, rec_str(b, r, S_NAME), rec_str(b, r, S_VERSION),
	                       rec_str(b, r, S_ATTRS), &k->scope_id, &k->err))
		return sink_fail(k, r);
	k->has_scope = 1;
	if (k->ss_first &&
	    store_span_set_scope(c->st, c->source_id, k->ss_first, k->scope_id, &k->err))
		return sink_fail(k, r);
	return 0;
}

/* Fills in the strings and the resource and scope of a span record. */
static StoreSpan *sink_span(Sink *k, const Batch *b, Rec *r)
{
	StoreSpan *sp = &r->sp;
	sp->name = rec_str(b, r, S_NAME);
	sp->status_msg = rec_str(b, r, S_STATUS_MSG);
	sp->trace_state = rec_str(b, r, S_TRACE_STATE);
	sp->attrs_json = rec_str(b, r, S_ATTRS);
	sp->events_json = rec_str(b, r, S_EVENTS);
	sp->links_json = rec_str(b, r, S_LINKS);
	sp->wclass = rec_str(b, r, S_CLASS);
	sp->attr_peer = rec_str(b, r, S_PEER);
	sp->attr_db_system = rec_str(b, r, S_DB);
	sp->route = rec_str(b, r, S_ROUTE);
	if (k->has_res) {
		sp->resource_id = k->res_id;
		sp->service = k->has_service ? k->service.p : NULL;
		sp->host = k->has_host ? k->host.p : NULL;
		if (!sp->wclass && k->has_class)
			sp->wclass = k->wclass.p;
	}
	if (k->has_scope)
		sp->scope_id = k->scope_id;
	return sp;
}

/* Stores records [i, j) of b, all spans, in one call. A store error is
 * reported at the first of them (such errors are about the database, not
 * about one span). */
static int sink_spans(Sink *k, Batch *b, int i, int j)
{
	ImportCtx *c = k->ctx;
	const StoreSpan *sp[BATCH_RECS];
	for (int x = i; x < j; x++)
		sp[x - i] = sink_span(k, b, &b->recs[x]);
	int64_t added, first;
	if (store_spans_add(c->st, c->source_id, sp, j - i, &added, &first, &k->err))
		return sink_fail(k, &b->recs[i]);
	c->counts->spans_added += added;
	c->counts->spans_duplicate += (j - i) - added;
	if (added) {
		if (!k->rs_first)
			k->rs_first = first;
		if (!k->ss_first)
			k->ss_first = first;
	}
	return 0;
}

static int sink_batch(Sink *k, Batch *b)
{
	for (int i = 0; i < b->n;) {
		Rec *r = &b->recs[i];
		int rc = 0, next = i + 1;
		switch (r->op) {
		case OP_RS:
			k->has_res = 0;
			k->rs_first = 0;
			break;
		case OP_SS:
			k->has_scope = 0;
			k->ss_first = 0;
			break;
		case OP_RESOURCE: rc = sink_resource(k, b, r); break;
		case OP_SCOPE: rc = sink_scope(k, b, r); break;
		default:
			while (next < b->n && b->recs[next].op == OP_SPAN)
				next++;
			rc = sink_spans(k, b, i, next);
			break;
		}
		if (rc)
			return rc;
		i = next;
	}
	return 0;
}

static void *sink_main(void *arg)
{
	Pipe *pp = arg;
	for (;;) {
		pthread_mutex_lock(&pp->mu);
		while (pp->n_full == 0 && !pp->done && !pp->abort)
			pthread_cond_wait(&pp->cv, &pp->mu);
		if (pp->abort || pp->n_full == 0) {
			pthread_mutex_unlock(&pp->mu);
			return NULL;
		}
		Batch *b = pp->full[pp->full_head];
		pp->full_head = (pp->full_head + 1) % N_BATCHES;
		pp->n_full--;
		pthread_mutex_unlock(&pp->mu);

		int rc = sink_batch(&pp->sink, b);

		pthread_mutex_lock(&pp->mu);
		if (rc)
			pp->failed = 1;
		else
			pp->free_b[pp->n_free++] = b;
		pthread_cond_broadcast(&pp->cv);
		pthread_mutex_unlock(&pp->mu);
		if (rc)
			return NULL;
	}
}

static Pipe *pipe_new(ImportCtx *ctx)
{
	/* A batch's records (175 KB) are allocated when the parser first
	 * takes it: the free list is a stack, so an input of fewer than
	 * BATCH_RECS spans (one request to the receiver, a test fixture)
	 * allocates one batch, not all four. */
	Pipe *pp = xcalloc(1, sizeof *pp);
	pthread_mutex_init(&pp->mu, NULL);
	pthread_cond_init(&pp->cv, NULL);
	for (int i = 0; i < N_BATCHES; i++) {
		buf_init(&pp->batches[i].arena);
		pp->free_b[pp->n_free++] = &pp->batches[i];
	}
	pp->sink.ctx = ctx;
	buf_init(&pp->sink.service);
	buf_init(&pp->sink.host);
	buf_init(&pp->sink.wclass);
	if (pthread_create(&pp->thread, NULL, sink_main, pp) == 0)
		pp->started = 1;
	return pp;
}

/* Hands the current batch to the store thread. */
static void pipe_push(Pipe *pp)
{
	pthread_mutex_lock(&pp->mu);
	pp->full[(pp->full_head + pp->n_full) % N_BATCHES] = pp->cur;
	pp->n_full++;
	pthread_cond_broadcast(&pp->cv);
	pthread_mutex_unlock(&pp->mu);
	pp->cur = NULL;
}

/* A new record in the current batch; NULL when the store thread failed. */
static Rec *pipe_rec(Pipe *pp, int op, uint64_t at)
{
	Batch *b = pp->cur;
	if (b && (b->n == BATCH_RECS || b->arena.len >= BATCH_BYTES)) {
		pipe_push(pp);
		b = NULL;
	}
	if (b == NULL) {
		pthread_mutex_lock(&pp->mu);
		while (pp->n_free == 0 && !pp->failed)
			pthread_cond_wait(&pp->cv, &pp->mu);
		if (pp->failed) {
			pthread_mutex_unlock(&pp->mu);
			return NULL;
		}
		b = pp->free_b[--pp->n_free];
		pthread_mutex_unlock(&pp->mu);
		if (b->recs == NULL)
			b->recs = xmalloc(BATCH_RECS * sizeof *b->recs);
		b->n = 0;
		buf_reset(&b->arena);
		pp->cur = b;
	}
	Rec *r = &b->recs[b->n++];
	r->op = (unsigned char)op;
	r->at = at;
	for (int i = 0; i < S_COUNT; i++)
		r->str[i] = NO_STR;
	return r;
}

/* Copies n bytes of s into r's batch as string slot. */
static void pipe_str(Pipe *pp, Rec *r, int slot, const char *s, size_t n)
{
	Buf *a = &pp->cur->arena;
	r->str[slot] = a->len;
	otlp_buf_add(a, s ? s : "", n);
	otlp_buf_addc(a, '\0');
}

/* Ends the pipeline: ok = 1 flushes and waits until everything is stored,
 * ok = 0 stops the store thread. Returns 0 or the store thread's error
 * code. */
static int pipe_stop(Pipe *pp, int ok)
{
	if (ok && pp->cur && pp->cur->n)
		pipe_push(pp);
	pthread_mutex_lock(&pp->mu);
	if (ok)
		pp->done = 1;
	else
		pp->abort = 1;
	pthread_cond_broadcast(&pp->cv);
	pthread_mutex_unlock(&pp->mu);
	if (pp->started)
		pthread_join(pp->thread, NULL);
	pp->started = 0;
	if (pp->failed)
		return pp->sink.err.code ? pp->sink.err.code : TT_ESTORE;
	return 0;
}

/* pipe_stop(), then copies the store thread's error to ctx->err when
 * there is one and ctx is not NULL. */
static int pipe_finish(Pipe *pp, ImportCtx *ctx, int ok)
{
	int rc = pipe_stop(pp, ok);
	if (rc && ctx)
		err_set(ctx->err, rc, "%s", pp->sink.err.msg);
	return rc;
}

static void pipe_free(Pipe *pp)
{
	if (pp == NULL)
		return;
	for (int i = 0; i < N_BATCHES; i++) {
		free(pp->batches[i].recs);
		buf_fini(&pp->batches[i].arena);
	}
	buf_fini(&pp->sink.service);
	buf_fini(&pp->sink.host);
	buf_fini(&pp->sink.wclass);
	pthread_cond_destroy(&pp->cv);
	pthread_mutex_destroy(&pp->mu);
	free(pp);
}

/* ---- the parser ---------------------------------------------------------- */

/* Who owns the attribute list being rendered. */
enum { OWN_RESOURCE, OWN_SCOPE, OWN_SPAN, OWN_EVENT, OWN_LINK };

typedef struct Frame {
	unsigned char type;
	unsigned char key;      /* field whose value comes next (map frames) */
	uint64_t seen;          /* fields seen so far (map frames) */
	OtlpMark at;            /* the opening brace or bracket */
} Frame;

/* Queue time found on one carrier (span attributes or one event). */
typedef struct Queue {
	int has_ns, has_ms;
	int64_t ns, ms_ns;
} Queue;

/* Every reusable buffer of the parser. */
#define PARSER_BUFS(X)                                                          \
	X(rs_service) X(rs_host) X(rs_pod) X(rs_class) X(rs_attrs)              \
	X(sc_name) X(sc_version) X(sc_attrs)                                    \
	X(sp_name) X(sp_state) X(sp_msg) X(sp_attrs) X(sp_events) X(sp_links)   \
	X(sp_class) X(ev_name) X(ev_attrs) X(lk_state) X(lk_attrs)               \
	X(sp_nm0) X(sp_nm1) X(sp_nm2) X(sp_nm3) X(sp_nm4) X(sp_nm5) X(sp_nm6)   \
	X(sp_ra) X(sp_route)

typedef struct Parser {
	ImportCtx *ctx;
	yajl_handle h;
	OtlpSimd *fast;         /* NULL: yajl only */
	int simd;               /* the fast path is reporting events */
	size_t simd_at;         /* its token offset in the bytes it walks */
	size_t tok_at;          /* offset in p->loc's current chunk of the bytes
	                           being parsed (yajl's or the fast path's) */
	int mute;               /* yajl is parsing a placeholder: ignore it */
	int any_token;          /* some token was seen */
	OtlpLoc loc;
	OtlpAttrs attrs;
	int in_attrs;           /* events go to attrs until its list closes */
	int owner;              /* OWN_* of that list */
	int depth;
	Frame st[MAX_DEPTH];
	int skip;               /* > 0: inside an unknown field's container */
	size_t class_key_len;

	Pipe *pipe;
	int stopped;            /* the store thread failed; its error wins */

	/* signals: which of a request's keys are read (IMPORT_SIGNAL_*); a
	 * metrics request is not parsed here but noted, with where it is, for
	 * otlp_metrics_ranges() once the spans are stored */
	unsigned want;
	uint64_t req_from;      /* offset of the current request's '{' */
	long req_line, req_col;
	ImportRange *mr;
	size_t n_mr, cap_mr;

	/* the current resource */
	int rs_has_service, rs_has_host, rs_has_pod, rs_has_class;

	/* the current span */
	StoreSpan sp;
	int sp_has_class;
	int64_t sp_port[2];     /* server.port, net.peer.port (0: none) */
	unsigned char sp_nm_st[7]; /* NAMED attributes: NM_ABSENT, NM_STRING (in
	                           * sp_nm<i>) or NM_OTHER (not a string, or
	                           * given twice: left to the readers) */
	unsigned char sp_ra_st[RA_COUNT]; /* the route's attributes (common/route.h):
	                           * NM_ABSENT, NM_STRING (sp_ra_off/len in
	                           * sp_ra) or NM_OTHER (given twice, or with a
	                           * NUL: the route is left to the readers) */
	size_t sp_ra_off[RA_COUNT], sp_ra_len[RA_COUNT];
	Queue sp_q;
	int64_t q_total;        /* queue time summed over carriers */
	int q_has;
	OtlpMark end_at;        /* where endTimeUnixNano's value is */

	/* the current event and link */
	int64_t ev_time;
	Queue ev_q;
	char lk_trace[33], lk_span[17];
	int64_t lk_flags;

#define DECL_BUF(n) Buf n;
	PARSER_BUFS(DECL_BUF)
#undef DECL_BUF
} Parser;

/* ---- errors ------------------------------------------------------------ */

/* Sets ctx->err located at (line, col); returns 0 for yajl (cancel). */
static int fail_at(Parser *p, long line, long col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail_at(Parser *p, long line, long col, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	import_err_vat(p->ctx, TT_EPARSE, line, col, fmt, ap);
	va_end(ap);
	return 0;
}

/* An error about the token at m. */
static int fail_mark(Parser *p, OtlpMark m, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail_mark(Parser *p, OtlpMark m, const char *fmt, ...)
{
	long line, col;
	otlp_loc_mark_pos(&p->loc, m, &line, &col);
	va_list ap;
	va_start(ap, fmt);
	import_err_vat(p->ctx, TT_EPARSE, line, col, fmt, ap);
	va_end(ap);
	return 0;
}

/* An error about the current token. */
#define fail_here(p, ...) fail_mark((p), otlp_loc_mark(&(p)->loc), __VA_ARGS__)

/* The store thread stopped with an error: cancel the parse. */
static int stop(Parser *p)
{
	p->stopped = 1;
	return 0;
}

/* ---- value helpers ------------------------------------------------------ */

typedef enum {
	V_STRING,
	V_NUMBER,
	V_BOOL,
} VType;

static const char *vtype_name(VType t)
{
	switch (t) {
	case V_STRING: return "a string";
	case V_NUMBER: return "a number";
	default: return "a boolean";
	}
}

/* A string field that becomes a C string: NUL bytes would cut it short. */
static int plain_string(Parser *p, int key, VType t, const char *s, size_t n, Buf *out)
{
	if (t != V_STRING)
		return fail_here(p, "\"%s\" must be a string, not %s", key_name[key], vtype_name(t));
	if (memchr(s, '\0', n))
		return fail_here(p, "\"%s\" contains a NUL character (\\u0000)", key_name[key]);
	buf_reset(out);
	buf_add(out, s, n);
	return 1;
}

/* An unsigned 64-bit field (times, counts, flags) given as a number or a
 * string; stored as int64, so values above INT64_MAX are refused. */
static int uint_field(Parser *p, int key, VType t, const char *s, size_t n, int64_t max,
                      int64_t *out)
{
	if (t == V_BOOL)
		return fail_here(p, "\"%s\" must be an integer, not a boolean", key_name[key]);
	int64_t v;
	int rc = otlp_parse_int(s, n, &v);
	if (rc == OTLP_NUM_SYNTAX)
		return fail_here(p, "\"%s\" must be an integer", key_name[key]);
	if (rc == OTLP_NUM_RANGE || v > max)
		return fail_here(p, "\"%s\" is out of range", key_name[key]);
	if (v < 0)
		return fail_here(p, "\"%s\" must not be negative", key_name[key]);
	*out = v;
	return 1;
}

static int id_field(Parser *p, const char *what, int key, VType t, const char *s, size_t n,
                    size_t want, char *out)
{
	if (t != V_STRING)
		return fail_here(p, "%s\"%s\" must be a string of %zu hex digits", what,
		                 key_name[key], want);
	switch (otlp_hex_id(s, n, want, out)) {
	case OTLP_ID_OK:
		return 1;
	case OTLP_ID_LENGTH:
		return fail_here(p, "%s\"%s\" must be %zu hex digits, not %zu characters", what,
		                 key_name[key], want, n);
	case OTLP_ID_NOT_HEX:
		return fail_here(p, "%s\"%s\" must be %zu hex digits (found a non-hex character)",
		                 what, key_name[key], want);
	default:
		return fail_here(p, "%s\"%s\" must not be all zeros", what, key_name[key]);
	}
}

/* An enum given as its number or its name (e.g. 2 or "SPAN_KIND_SERVER"). */
static int enum_field(Parser *p, int key, VType t, const char *s, size_t n,
                      const char *const *names, int count, int *out)
{
	int64_t v = -1;
	if (t == V_STRING) {
		for (int i = 0; i < count; i++)
			if (strlen(names[i]) == n && memcmp(names[i], s, n) == 0) {
				*out = i;
				return 1;
			}
		if (otlp_parse_int(s, n, &v) != OTLP_NUM_OK)
			return fail_here(p, "\"%s\" is not a known %s name", key_name[key],
			                 key == K_KIND ? "span kind" : "status code");
	} else if (t == V_NUMBER) {
		if (otlp_parse_int(s, n, &v) != OTLP_NUM_OK)
			v = -1;
	} else {
		return fail_here(p, "\"%s\" must be a number or a name, not a boolean",
		                 key_name[key]);
	}
	if (v < 0 || v >= count)
		return fail_here(p, "\"%s\" must be between 0 and %d", key_name[key], count - 1);
	*out = (int)v;
	return 1;
}

static const char *const kind_names[] = {
	"SPAN_KIND_UNSPECIFIED", "SPAN_KIND_INTERNAL", "SPAN_KIND_SERVER",
	"SPAN_KIND_CLIENT",      "SPAN_KIND_PRODUCER", "SPAN_KIND_CONSUMER",
};

static const char *const status_names[] = {
	"STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR",
};

/* ns from an attribute value in unit `scale` ns; 0 when it is not usable
 * as a duration. */
static int kv_duration(const OtlpKv *kv, double scale, int64_t *out)
{
	if (kv->type == OTLP_AV_INT && scale == 1.0) {
		if (kv->i < 0)
			return 0;
		*out = kv->i;
		return 1;
	}
	if (kv->type != OTLP_AV_INT && kv->type != OTLP_AV_DOUBLE)
		return 0;
	double v = otlp_kv_number(kv) * scale;
	if (!(v >= 0.0) || v >= 9.2e18)
		return 0;
	*out = (int64_t)(v + 0.5);  /* v >= 0: round half up */
	return 1;
}

/* kv's key is the literal k. */
#define key_is(kv, k) ((kv)->key_len == sizeof(k) - 1 && memcmp((kv)->key, k, sizeof(k) - 1) == 0)

static int key_is_str(const OtlpKv *kv, const char *k, size_t n)
{
	return kv->key_len == n && memcmp(kv->key, k, n) == 0;
}

static void queue_attr(Queue *q, const OtlpKv *kv, int is_ns, int is_ms)
{
	if (is_ns)
		q->has_ns = kv_duration(kv, 1.0, &q->ns);
	else if (is_ms)
		q->has_ms = kv_duration(kv, 1e6, &q->ms_ns);
}

/* Adds a carrier's queue time to the span's total. */
static void queue_add(Parser *p, const Queue *q)
{
	if (!q->has_ns && !q->has_ms)
		return;
	int64_t v = q->has_ns ? q->ns : q->ms_ns;
	if (p->q_total > INT64_MAX - v)
		return;
	p->q_total += v;
	p->q_has = 1;
}

/* A class value: the text of a scalar attribute. */
static const char *class_value(const OtlpKv *kv, Buf *out, int *has)
{
	switch (kv->type) {
	case OTLP_AV_STRING:
	case OTLP_AV_INT:
	case OTLP_AV_DOUBLE:
	case OTLP_AV_BOOL:
		if (memchr(kv->text, '\0', kv->text_len))
			return "workload class attribute contains a NUL character";
		buf_reset(out);
		buf_add(out, kv->text, kv->text_len);
		*has = 1;
		return NULL;
	default:
		return NULL;
	}
}

/* The span attributes that name a call's other end, taken while they are
 * read so that no reader parses the attributes for them (store.h,
 * StoreSpan.attr_peer): peer.service, else server.address, else
 * net.peer.name (before semantic conventions 1.21), else the authority of
 * url.full or http.url (an HTTP client that names no peer: the older
 * Python requests instrumentation); db.system.name, else db.system (before
 * 1.26). */
typedef struct NamedKey {
	const char *k;
	size_t n;
} NamedKey;
#define NK(s) {s, sizeof s - 1}
static const NamedKey NAMED[7] = {NK("peer.service"), NK("server.address"), NK("net.peer.name"),
                                  NK("url.full"), NK("http.url"), NK("db.system.name"),
                                  NK("db.system")};
enum { NM_PEER = 0, NM_PEER_KEYS = 5, NM_URL = 3, NM_DB = 5, NM_DB_KEYS = 2 };
/* the port that goes with an address (index into Parser.sp_port, or -1):
 * services on one host (loopback, one node, a compose file) differ only
 * by it, so the peer is "address:port" when the span has both */
static const NamedKey PORT_KEYS[2] = {NK("server.port"), NK("net.peer.port")};
#undef NK
static const int NAMED_PORT[7] = {-1, 0, 1, -1, -1, -1, -1};
enum { NM_ABSENT, NM_STRING, NM_OTHER };

static Buf *named_buf(Parser *p, int i)
{
	Buf *b[7] = {&p->sp_nm0, &p->sp_nm1, &p->sp_nm2, &p->sp_nm3,
	             &p->sp_nm4, &p->sp_nm5, &p->sp_nm6};
	return b[i];
}

static void named_attr(Parser *p, const OtlpKv *kv)
{
	for (int i = 0; i < 2; i++) {
		if (!key_is_str(kv, PORT_KEYS[i].k, PORT_KEYS[i].n))
			continue;
		int64_t v = kv->type == OTLP_AV_INT      ? kv->i
		            : kv->type == OTLP_AV_STRING ? import_port(kv->text, kv->text_len)
		                                         : 0;
		p->sp_port[i] = v > 0 && v < 65536 ? v : 0;
		return;
	}
	for (int i = 0; i < 7; i++) {
		if (!key_is_str(kv, NAMED[i].k, NAMED[i].n))
			continue;
		if (p->sp_nm_st[i] != NM_ABSENT || kv->type != OTLP_AV_STRING ||
		    memchr(kv->text, '\0', kv->text_len)) {
			p->sp_nm_st[i] = NM_OTHER;
		} else {
			buf_reset(named_buf(p, i));
			buf_add(named_buf(p, i), kv->text, kv->text_len);
			p->sp_nm_st[i] = NM_STRING;
		}
		return;
	}
}

/* The value of the first of NAMED[first], ..., NAMED[first + n - 1] the
 * span has, else "", into slot; nothing (the readers decide) when the one
 * that counts is not a plain string. */
static void named_pick(Parser *p, Rec *r, int first, int n, int slot)
{
	for (int i = first; i < first + n; i++) {
		if (p->sp_nm_st[i] == NM_OTHER)
			return;
		if (p->sp_nm_st[i] == NM_STRING) {
			Buf *b = named_buf(p, i);
			if (i >= NM_URL && i < NM_URL + 2) {
				const char *a;
				size_t alen = import_url_authority(b->p, b->len, &a);
				pipe_str(p->pipe, r, slot, a, alen);
				return;
			}
			if (NAMED_PORT[i] >= 0)
				import_addr_port(b, (long)p->sp_port[NAMED_PORT[i]]);
			pipe_str(p->pipe, r, slot, b->p, b->len);
			return;
		}
	}
	pipe_str(p->pipe, r, slot, "", 0);
}

/* An attribute the route rule reads (route.h): its string value kept;
 * a value of another type counts as absent, as it does for the readers
 * (json_extract gives them no text). */
static void route_attr(Parser *p, const OtlpKv *kv)
{
	int i = route_attr_index(kv->key, kv->key_len);
	if (i < 0)
		return;
	if (p->sp_ra_st[i] != NM_ABSENT || memchr(kv->text, '\0', kv->text_len)) {
		p->sp_ra_st[i] = NM_OTHER;
	} else if (kv->type == OTLP_AV_STRING) {
		p->sp_ra_off[i] = p->sp_ra.len;
		p->sp_ra_len[i] = kv->text_len;
		buf_add(&p->sp_ra, kv->text, kv->text_len);
		p->sp_ra_st[i] = NM_STRING;
	}
}

/* The span's route (route.h) into the record, for a server span or one
 * without a parent; nothing (the readers take it) when an attribute it
 * reads was given twice. */
static void route_pick(Parser *p, Rec *r)
{
	StoreSpan *sp = &r->sp;
	if (!route_wanted(sp->kind, sp->parent_id[0] != '\0'))
		return;
	RouteAttrs a;
	memset(&a, 0, sizeof a);
	for (int i = 0; i < RA_COUNT; i++) {
		if (p->sp_ra_st[i] == NM_OTHER)
			return;
		if (p->sp_ra_st[i] == NM_STRING) {
			a.v[i] = p->sp_ra.p + p->sp_ra_off[i];
			a.n[i] = p->sp_ra_len[i];
		}
	}
	buf_reset(&p->sp_route);
	sp->route_rule = route_make(&a, p->sp_name.p ? p->sp_name.p : "", p->sp_name.len,
	                            &p->sp_route);
	sp->has_route = 1;
	pipe_str(p->pipe, r, S_ROUTE, p->sp_route.p, p->sp_route.len);
}

/* Called by the attribute machine for each top-level attribute. */
static const char *on_attr(void *ctx, const OtlpKv *kv)
{
	Parser *p = ctx;
	const char *ck = p->ctx->class_key;
	size_t ckn = p->class_key_len;
	switch (p->owner) {
	case OWN_RESOURCE:
		if (kv->type == OTLP_AV_STRING) {
			Buf *dst = NULL;
			int *has = NULL;
			if (key_is(kv, "service.name"))
				dst = &p->rs_service, has = &p->rs_has_service;
			else if (key_is(kv, "host.name"))
				dst = &p->rs_host, has = &p->rs_has_host;
			else if (key_is(kv, "k8s.pod.name"))
				dst = &p->rs_pod, has = &p->rs_has_pod;
			if (dst) {
				if (memchr(kv->text, '\0', kv->text_len))
					return "resource attribute contains a NUL character";
				buf_reset(dst);
				buf_add(dst, kv->text, kv->text_len);
				*has = 1;
			}
		}
		if (key_is_str(kv, ck, ckn))
			return class_value(kv, &p->rs_class, &p->rs_has_class);
		return NULL;
	case OWN_SPAN:
		named_attr(p, kv);
		route_attr(p, kv);
		if (key_is_str(kv, ck, ckn))
			return class_value(kv, &p->sp_class, &p->sp_has_class);
		queue_attr(&p->sp_q, kv, key_is(kv, "queue.wait_ns"), key_is(kv, "queue.wait_ms"));
		return NULL;
	case OWN_EVENT:
		queue_attr(&p->ev_q, kv, key_is(kv, "duration_ns"), key_is(kv, "duration_ms"));
		return NULL;
	default:
		return NULL;
	}
}

/* ---- frames --------------------------------------------------------------- */

static int push(Parser *p, int type)
{
	if (p->depth >= MAX_DEPTH)
		return fail_here(p, "JSON nested deeper than %d levels", MAX_DEPTH);
	Frame *f = &p->st[p->depth++];
	f->type = (unsigned char)type;
	f->key = K_NONE;
	f->seen = 0;
	f->at = otlp_loc_mark(&p->loc);
	switch (type) {
	case F_REQ:
		/* a request's '{' is its token's last byte (yajl's offsets are
		 * exact; the fast path's are not for brackets, and do_line()
		 * places a request it walked: the line) */
		if (!p->simd) {
			p->req_from = f->at.end ? f->at.end - 1 : 0;
			otlp_loc_pos(&p->loc, p->req_from, &p->req_line, &p->req_col);
		}
		break;
	case F_RS:
		if (!pipe_rec(p->pipe, OP_RS, p->loc.tok_end))
			return stop(p);
		break;
	case F_RES:
		p->rs_has_service = p->rs_has_host = p->rs_has_pod = p->rs_has_class = 0;
		buf_reset(&p->rs_attrs);
		break;
	case F_SS:
		if (!pipe_rec(p->pipe, OP_SS, p->loc.tok_end))
			return stop(p);
		break;
	case F_SCOPE:
		buf_reset(&p->sc_name);
		buf_reset(&p->sc_version);
		buf_reset(&p->sc_attrs);
		break;
	case F_SPAN:
		memset(&p->sp, 0, sizeof p->sp);
		buf_reset(&p->sp_name);
		buf_reset(&p->sp_state);
		buf_reset(&p->sp_msg);
		buf_reset(&p->sp_attrs);
		buf_reset(&p->sp_events);
		buf_reset(&p->sp_links);
		p->sp_has_class = 0;
		memset(p->sp_nm_st, 0, sizeof p->sp_nm_st);
		memset(p->sp_port, 0, sizeof p->sp_port);
		memset(p->sp_ra_st, 0, sizeof p->sp_ra_st);
		buf_reset(&p->sp_ra);
		memset(&p->sp_q, 0, sizeof p->sp_q);
		p->q_total = 0;
		p->q_has = 0;
		break;
	case F_EV:
		buf_reset(&p->ev_name);
		buf_reset(&p->ev_attrs);
		p->ev_time = 0;
		memset(&p->ev_q, 0, sizeof p->ev_q);
		break;
	case F_LINK:
		buf_reset(&p->lk_state);
		buf_reset(&p->lk_attrs);
		p->lk_flags = 0;
		break;
	default:
		break;
	}
	return 1;
}

static int end_resource(Parser *p, const Frame *f)
{
	Pipe *pp = p->pipe;
	Rec *r = pipe_rec(pp, OP_RESOURCE, p->loc.tok_end);
	if (r == NULL)
		return stop(p);
	if (p->rs_has_service)
		pipe_str(pp, r, S_SERVICE, p->rs_service.p, p->rs_service.len);
	if (p->rs_has_host)
		pipe_str(pp, r, S_HOST, p->rs_host.p, p->rs_host.len);
	else if (p->rs_has_pod)
		pipe_str(pp, r, S_HOST, p->rs_pod.p, p->rs_pod.len);
	if (p->rs_has_class)
		pipe_str(pp, r, S_CLASS, p->rs_class.p, p->rs_class.len);
	if (f->seen & KB(K_ATTRIBUTES))
		pipe_str(pp, r, S_ATTRS, p->rs_attrs.p, p->rs_attrs.len);
	else
		pipe_str(pp, r, S_ATTRS, "{}", 2);
	return 1;
}

static int end_scope(Parser *p, const Frame *f)
{
	Pipe *pp = p->pipe;
	Rec *r = pipe_rec(pp, OP_SCOPE, p->loc.tok_end);
	if (r == NULL)
		return stop(p);
	pipe_str(pp, r, S_NAME, p->sc_name.p, p->sc_name.len);
	pipe_str(pp, r, S_VERSION, p->sc_version.p, p->sc_version.len);
	if (f->seen & KB(K_ATTRIBUTES))
		pipe_str(pp, r, S_ATTRS, p->sc_attrs.p, p->sc_attrs.len);
	else
		pipe_str(pp, r, S_ATTRS, "{}", 2);
	return 1;
}

static int end_event(Parser *p, const Frame *f)
{
	Buf *o = &p->sp_events;
	buf_addc(o, o->len ? ',' : '[');
	buf_adds(o, "{\"name\":");
	otlp_json_str(o, p->ev_name.p ? p->ev_name.p : "", p->ev_name.len);
	buf_adds(o, ",\"time_ns\":");
	otlp_json_int(o, p->ev_time);
	buf_adds(o, ",\"attrs\":");
	if (f->seen & KB(K_ATTRIBUTES))
		buf_add(o, p->ev_attrs.p, p->ev_attrs.len);
	else
		buf_adds(o, "{}");
	buf_addc(o, '}');
	if (p->ev_name.len == 10 && memcmp(p->ev_name.p, "queue.wait", 10) == 0)
		queue_add(p, &p->ev_q);
	return 1;
}

static int end_link(Parser *p, const Frame *f)
{
	if (!(f->seen & KB(K_TRACE_ID)))
		return fail_mark(p, f->at, "link has no \"traceId\"");
	if (!(f->seen & KB(K_SPAN_ID)))
		return fail_mark(p, f->at, "link has no \"spanId\"");
	Buf *o = &p->sp_links;
	buf_addc(o, o->len ? ',' : '[');
	buf_adds(o, "{\"trace_id\":\"");
	buf_add(o, p->lk_trace, 32);
	buf_adds(o, "\",\"span_id\":\"");
	buf_add(o, p->lk_span, 16);
	buf_adds(o, "\",\"attrs\":");
	if (f->seen & KB(K_ATTRIBUTES))
		buf_add(o, p->lk_attrs.p, p->lk_attrs.len);
	else
		buf_adds(o, "{}");
	if (p->lk_state.len) {
		buf_adds(o, ",\"trace_state\":");
		otlp_json_str(o, p->lk_state.p, p->lk_state.len);
	}
	if (p->lk_flags) {
		buf_adds(o, ",\"flags\":");
		otlp_json_int(o, p->lk_flags);
	}
	buf_addc(o, '}');
	return 1;
}

static int end_span(Parser *p, const Frame *f)
{
	static const struct {
		int key;
	} required[] = {{K_TRACE_ID}, {K_SPAN_ID}, {K_START}, {K_END}};
	for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
		if (!(f->seen & KB(required[i].key)))
			return fail_mark(p, f->at, "span has no \"%s\"", key_name[required[i].key]);
	StoreSpan *sp = &p->sp;
	if (sp->end_ns < sp->start_ns)
		return fail_mark(p, p->end_at, "\"endTimeUnixNano\" is before \"startTimeUnixNano\"");
	queue_add(p, &p->sp_q);
	sp->has_queue = p->q_has;
	sp->queue_ns = p->q_total;
	Pipe *pp = p->pipe;
	Rec *r = pipe_rec(pp, OP_SPAN, p->loc.tok_end);
	if (r == NULL)
		return stop(p);
	r->sp = *sp;
	pipe_str(pp, r, S_NAME, p->sp_name.p, p->sp_name.len);
	if (p->sp_state.len)
		pipe_str(pp, r, S_TRACE_STATE, p->sp_state.p, p->sp_state.len);
	if (p->sp_msg.len)
		pipe_str(pp, r, S_STATUS_MSG, p->sp_msg.p, p->sp_msg.len);
	if (f->seen & KB(K_ATTRIBUTES))
		pipe_str(pp, r, S_ATTRS, p->sp_attrs.p, p->sp_attrs.len);
	else
		pipe_str(pp, r, S_ATTRS, "{}", 2);
	if (p->sp_events.len) {
		otlp_buf_addc(&p->sp_events, ']');
		pipe_str(pp, r, S_EVENTS, p->sp_events.p, p->sp_events.len);
	}
	if (p->sp_links.len) {
		otlp_buf_addc(&p->sp_links, ']');
		pipe_str(pp, r, S_LINKS, p->sp_links.p, p->sp_links.len);
	}
	if (p->sp_has_class)
		pipe_str(pp, r, S_CLASS, p->sp_class.p, p->sp_class.len);
	named_pick(p, r, NM_PEER, NM_PEER_KEYS, S_PEER);
	named_pick(p, r, NM_DB, NM_DB_KEYS, S_DB);
	route_pick(p, r);
	return 1;
}

/* A scalar (or null) value of field f->key. */
static int field_scalar(Parser *p, Frame *f, VType t, const char *s, size_t n)
{
	int k = f->key;
	if (k == K_NONE)
		return 1;
	if (array_keys & KB(k))
		return fail_here(p, "\"%s\" must be an array, not %s", key_name[k], vtype_name(t));
	if (object_keys & KB(k))
		return fail_here(p, "\"%s\" must be an object, not %s", key_name[k], vtype_name(t));
	StoreSpan *sp = &p->sp;
	int64_t v;
	switch (f->type) {
	case F_RES:   /* droppedAttributesCount: checked, not kept */
		return uint_field(p, k, t, s, n, UINT32_MAX, &v);
	case F_SCOPE:
		if (k == K_NAME)
			return plain_string(p, k, t, s, n, &p->sc_name);
		if (k == K_VERSION)
			return plain_string(p, k, t, s, n, &p->sc_version);
		return uint_field(p, k, t, s, n, UINT32_MAX, &v);
	case F_SPAN:
		switch (k) {
		case K_TRACE_ID:
			return id_field(p, "", k, t, s, n, 32, sp->trace_id);
		case K_SPAN_ID:
			return id_field(p, "", k, t, s, n, 16, sp->span_id);
		case K_PARENT_SPAN_ID:
			/* "" or all zeros: a root span */
			sp->parent_id[0] = '\0';
			if (t == V_STRING &&
			    (n == 0 || otlp_hex_id(s, n, 16, sp->parent_id) == OTLP_ID_ZERO))
				return 1;
			return id_field(p, "", k, t, s, n, 16, sp->parent_id);
		case K_TRACE_STATE:
			return plain_string(p, k, t, s, n, &p->sp_state);
		case K_NAME:
			return plain_string(p, k, t, s, n, &p->sp_name);
		case K_FLAGS:
			return uint_field(p, k, t, s, n, UINT32_MAX, &sp->flags);
		case K_KIND:
			return enum_field(p, k, t, s, n, kind_names, 6, &sp->kind);
		case K_START:
			return uint_field(p, k, t, s, n, INT64_MAX, &sp->start_ns);
		case K_END:
			p->end_at = otlp_loc_mark(&p->loc);
			return uint_field(p, k, t, s, n, INT64_MAX, &sp->end_ns);
		default:  /* the dropped counts */
			if (!uint_field(p, k, t, s, n, UINT32_MAX, &v))
				return 0;
			sp->dropped += v;
			return 1;
		}
	case F_EV:
		if (k == K_NAME)
			return plain_string(p, k, t, s, n, &p->ev_name);
		if (k == K_TIME)
			return uint_field(p, k, t, s, n, INT64_MAX, &p->ev_time);
		if (!uint_field(p, k, t, s, n, UINT32_MAX, &v))
			return 0;
		sp->dropped += v;
		return 1;
	case F_LINK:
		switch (k) {
		case K_TRACE_ID:
			return id_field(p, "link ", k, t, s, n, 32, p->lk_trace);
		case K_SPAN_ID:
			return id_field(p, "link ", k, t, s, n, 16, p->lk_span);
		case K_TRACE_STATE:
			return plain_string(p, k, t, s, n, &p->lk_state);
		case K_FLAGS:
			return uint_field(p, k, t, s, n, UINT32_MAX, &p->lk_flags);
		default:
			if (!uint_field(p, k, t, s, n, UINT32_MAX, &v))
				return 0;
			sp->dropped += v;
			return 1;
		}
	case F_STATUS:
		if (k == K_CODE)
			return enum_field(p, k, t, s, n, status_names, 3, &sp->status_code);
		return plain_string(p, k, t, s, n, &p->sp_msg);
	default:
		return 1;
	}
}

/* ---- yajl callbacks ----------------------------------------------------- */

static void tok(Parser *p)
{
	p->any_token = 1;
	otlp_loc_token(&p->loc,
	               p->tok_at + (p->simd ? p->simd_at : yajl_get_bytes_consumed(p->h)));
}

static int feed_attrs(Parser *p, OtlpEv ev, const char *s, size_t n)
{
	int rc = otlp_attrs_feed(&p->attrs, ev, s, n);
	if (rc == OTLP_ATTRS_DONE)
		p->in_attrs = 0;
	else if (rc == OTLP_ATTRS_ERROR)
		return fail_here(p, "%s", p->attrs.msg);
	return 1;
}

static int on_scalar(Parser *p, OtlpEv ev, VType t, const char *s, size_t n)
{
	if (p->in_attrs)
		return feed_attrs(p, ev, s, n);
	if (p->skip)
		return 1;
	if (p->depth == 0)
		return fail_here(p, "expected an ExportTraceServiceRequest object");
	Frame *f = &p->st[p->depth - 1];
	if (is_array_frame(f->type))
		return fail_here(p, "items of \"%s\" must be objects", array_frame_name(f->type));
	if (ev == OTLP_EV_NULL) {
		/* proto3: null means "not set" */
		f->seen &= ~KB(f->key);
		return 1;
	}
	return field_scalar(p, f, t, s, n);
}

static int cb_null(void *c)
{
	Parser *p = c;
	tok(p);
	return on_scalar(p, OTLP_EV_NULL, V_STRING, NULL, 0);
}

static int cb_boolean(void *c, int b)
{
	Parser *p = c;
	tok(p);
	return on_scalar(p, OTLP_EV_BOOL, V_BOOL, b ? "true" : "false", (size_t)(b != 0));
}

static int cb_number(void *c, const char *s, size_t n)
{
	Parser *p = c;
	tok(p);
	return on_scalar(p, OTLP_EV_NUMBER, V_NUMBER, s, n);
}

static int cb_string(void *c, const unsigned char *s, size_t n)
{
	Parser *p = c;
	if (p->mute)
		return 1;  /* the placeholder of stream_fast() */
	tok(p);
	return on_scalar(p, OTLP_EV_STRING, V_STRING, (const char *)s, n);
}

/* The WANT_* bit a request's key k stands for. */
static unsigned signal_of(int k)
{
	switch (k) {
	case K_RESOURCE_SPANS: return IMPORT_SIGNAL_TRACES;
	case K_RESOURCE_METRICS: return IMPORT_SIGNAL_METRICS;
	default: return WANT_LOGS;
	}
}

static int cb_map_key(void *c, const unsigned char *us, size_t n)
{
	Parser *p = c;
	tok(p);
	const char *s = (const char *)us;
	if (p->in_attrs)
		return feed_attrs(p, OTLP_EV_KEY, s, n);
	if (p->skip)
		return 1;
	Frame *f = &p->st[p->depth - 1];
	int k = key_lookup(s, n);
	if (!(allowed[f->type] & KB(k)) || (f->type == F_REQ && !(p->want & signal_of(k))))
		k = K_NONE;
	else if (f->seen & KB(k))
		return fail_here(p, "duplicate field \"%s\"", key_name[k]);
	f->seen |= KB(k);
	f->key = (unsigned char)k;
	return 1;
}

static int on_start(Parser *p, int is_map)
{
	if (p->in_attrs)
		return feed_attrs(p, is_map ? OTLP_EV_START_MAP : OTLP_EV_START_ARRAY, NULL, 0);
	if (p->skip) {
		if (p->depth + p->skip >= MAX_DEPTH)
			return fail_here(p, "JSON nested deeper than %d levels", MAX_DEPTH);
		p->skip++;
		return 1;
	}
	if (p->depth == 0) {
		if (!is_map)
			return fail_here(p, "expected an ExportTraceServiceRequest object, not an array");
		return push(p, F_REQ);
	}
	Frame *f = &p->st[p->depth - 1];
	if (is_array_frame(f->type)) {
		if (!is_map)
			return fail_here(p, "items of \"%s\" must be objects, not arrays",
			                 array_frame_name(f->type));
		if (f->type == F_LR_ARR) {
			/* a log record: counted, its content not read */
			p->ctx->skips->log_records++;
			p->skip = 1;
			return 1;
		}
		static const unsigned char child[F_COUNT] = {
			[F_RS_ARR] = F_RS,   [F_SS_ARR] = F_SS, [F_SPAN_ARR] = F_SPAN,
			[F_EV_ARR] = F_EV,   [F_LINK_ARR] = F_LINK, [F_RL_ARR] = F_RL,
			[F_SL_ARR] = F_SL,
		};
		return push(p, child[f->type]);
	}
	int k = f->key;
	if (k == K_NONE) {
		p->skip = 1;
		return 1;
	}
	if (is_map && !(object_keys & KB(k)))
		return fail_here(p, "\"%s\" must be %s, not an object", key_name[k],
		                 array_keys & KB(k) ? "an array" : "a scalar");
	if (!is_map && !(array_keys & KB(k)))
		return fail_here(p, "\"%s\" must be %s, not an array", key_name[k],
		                 object_keys & KB(k) ? "an object" : "a scalar");
	switch (k) {
	case K_RESOURCE: return push(p, F_RES);
	case K_SCOPE: return push(p, F_SCOPE);
	case K_STATUS: return push(p, F_STATUS);
	case K_RESOURCE_SPANS: return push(p, F_RS_ARR);
	case K_SCOPE_SPANS: return push(p, F_SS_ARR);
	case K_SPANS: return push(p, F_SPAN_ARR);
	case K_EVENTS: return push(p, F_EV_ARR);
	case K_LINKS: return push(p, F_LINK_ARR);
	case K_RESOURCE_LOGS: return push(p, F_RL_ARR);
	case K_SCOPE_LOGS: return push(p, F_SL_ARR);
	case K_LOG_RECORDS: return push(p, F_LR_ARR);
	case K_RESOURCE_METRICS:
		/* read by the metrics importer afterwards (see end of request) */
		p->skip = 1;
		return 1;
	default: break;
	}
	/* K_ATTRIBUTES */
	Buf *out;
	switch (f->type) {
	case F_RES: p->owner = OWN_RESOURCE; out = &p->rs_attrs; break;
	case F_SCOPE: p->owner = OWN_SCOPE; out = &p->sc_attrs; break;
	case F_SPAN: p->owner = OWN_SPAN; out = &p->sp_attrs; break;
	case F_EV: p->owner = OWN_EVENT; out = &p->ev_attrs; break;
	default: p->owner = OWN_LINK; out = &p->lk_attrs; break;
	}
	buf_reset(out);
	otlp_attrs_begin(&p->attrs, out, on_attr, p);
	p->in_attrs = 1;
	return 1;
}

/* The request that just closed holds metrics: where it is, for
 * otlp_metrics_ranges(). */
static void note_metrics(Parser *p)
{
	if (p->n_mr == p->cap_mr) {
		p->cap_mr = p->cap_mr ? 2 * p->cap_mr : 16;
		p->mr = xrealloc(p->mr, p->cap_mr * sizeof *p->mr);
	}
	ImportRange *r = &p->mr[p->n_mr++];
	r->from = p->req_from;
	r->to = p->loc.tok_end;
	r->line = p->req_line;
	r->col = p->simd ? 0 : p->req_col;  /* 0: do_line() sets it */
}

static int on_end(Parser *p, int is_map)
{
	if (p->in_attrs)
		return feed_attrs(p, is_map ? OTLP_EV_END_MAP : OTLP_EV_END_ARRAY, NULL, 0);
	if (p->skip) {
		p->skip--;
		return 1;
	}
	Frame *f = &p->st[p->depth - 1];
	int ok = 1;
	switch (f->type) {
	case F_REQ:
		/* OTLP: an empty request is valid and unknown fields are ignored,
		 * so a request without resourceSpans stores nothing; one that had
		 * only fields this importer does not read (another signal than
		 * the ones asked for, or no signal at all) is counted. */
		if (f->seen & KB(K_RESOURCE_METRICS))
			note_metrics(p);
		else if (!(f->seen & (KB(K_RESOURCE_SPANS) | KB(K_RESOURCE_LOGS))) &&
		         (f->seen & KB(K_NONE)))
			p->ctx->unrecognised++;
		break;
	case F_RES: ok = end_resource(p, f); break;
	case F_SCOPE: ok = end_scope(p, f); break;
	case F_SPAN: ok = end_span(p, f); break;
	case F_EV: ok = end_event(p, f); break;
	case F_LINK: ok = end_link(p, f); break;
	default: break;
	}
	p->depth--;
	return ok;
}

static int cb_start_map(void *c)
{
	Parser *p = c;
	tok(p);
	return on_start(p, 1);
}

static int cb_end_map(void *c)
{
	Parser *p = c;
	tok(p);
	return on_end(p, 1);
}

static int cb_start_array(void *c)
{
	Parser *p = c;
	tok(p);
	return on_start(p, 0);
}

static int cb_end_array(void *c)
{
	Parser *p = c;
	tok(p);
	return on_end(p, 0);
}

static const yajl_callbacks callbacks = {
	.yajl_null = cb_null,
	.yajl_boolean = cb_boolean,
	.yajl_number = cb_number,
	.yajl_string = cb_string,
	.yajl_start_map = cb_start_map,
	.yajl_map_key = cb_map_key,
	.yajl_end_map = cb_end_map,
	.yajl_start_array = cb_start_array,
	.yajl_end_array = cb_end_array,
};

/* ---- driver --------------------------------------------------------------- */

/* Turns a yajl error into a located one. */
static int syntax_error(Parser *p, yajl_status s)
{
	if (s == yajl_status_client_canceled)
		return p->ctx->err && p->ctx->err->code ? p->ctx->err->code : TT_EPARSE;
	uint64_t off = p->loc.cur_base + p->tok_at + yajl_get_bytes_consumed(p->h);
	uint64_t eof = p->loc.cur_base + p->loc.cur_len;
	if (off > eof)
		off = eof;
	unsigned char *m = yajl_get_error(p->h, 0, NULL, 0);
	const char *text = m ? (const char *)m : "syntax error";
	const char *colon = strstr(text, ": ");
	if (colon)
		text = colon + 2;
	char msg[160];
	snprintf(msg, sizeof msg, "%s", text);
	size_t n = strlen(msg);
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == '.' || msg[n - 1] == ' '))
		msg[--n] = '\0';
	if (m)
		yajl_free_error(p->h, m);
	/* For these yajl stops just past the offending byte; for the others it
	 * backs up onto it. */
	static const char *const past[] = {
		"invalid char in json text", "invalid bytes in UTF8 string", "unallowed token",
		"invalid object key", "separated by a colon", "after array element",
	};
	for (size_t i = 0; i < sizeof past / sizeof past[0]; i++)
		if (strstr(msg, past[i]) && off > p->loc.tok_end) {
			off--;
			break;
		}
	long line, col;
	otlp_loc_pos(&p->loc, off, &line, &col);
	if (strcmp(msg, "premature EOF") == 0) {
		otlp_loc_pos(&p->loc, eof, &line, &col);
		if (!p->any_token && p->depth == 0)
			fail_at(p, line, col, "no JSON value in input (empty file?)");
		else
			fail_at(p, line, col, "unexpected end of input (truncated file?)");
	} else {
		fail_at(p, line, col, "invalid JSON: %s", msg);
	}
	return TT_EPARSE;
}

/* OTLP/JSON of any signal: the first request names one (a Collector file
 * export mixes them line by line, and every line is read by its own). */
int otlp_traces_sniff(const char *head, size_t len)
{
	static const char *const keys[] = {"\"resourceSpans\"", "\"resourceMetrics\"",
	                                   "\"resourceLogs\""};
	size_t i = 0;
	if (len >= 3 && memcmp(head, "\xEF\xBB\xBF", 3) == 0)
		i = 3;
	while (i < len && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n'))
		i++;
	if (i == len || head[i] != '{')
		return 0;
	for (; i < len; i++) {
		if (head[i] != '"')
			continue;
		for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
			size_t kl = strlen(keys[k]);
			if (i + kl <= len && memcmp(head + i, keys[k], kl) == 0)
				return 90;
		}
	}
	return 0;
}

/* Makes data (len bytes at absolute offset base, line `line`, column col)
 * the current chunk of p->loc, whatever was fed before. */
static void loc_restart(OtlpLoc *l, const unsigned char *data, size_t len, uint64_t base,
                        long line, long col)
{
	l->prev = NULL;
	l->prev_len = 0;
	l->prev_base = base;
	l->prev_line = line;
	l->prev_col = col;
	l->cur = data;
	l->cur_len = data ? len : 0;
	l->cur_base = base;
	l->cur_line = line;
	l->cur_col = col;
	l->tok_from = l->tok_end = base;
}

/* The line splitter in front of the two parsers. */
typedef struct Lines {
	Buf line;               /* the current line, '\n' included */
	uint64_t line_base;     /* its absolute offset */
	long line_no;           /* its line number */
	int stream;             /* yajl gets every byte until a line ends at the top */
	int yajl_fed;           /* yajl has seen something other than white space */
	int fast_values;        /* values the fast path reported */
	unsigned char yajl_last;  /* the last byte yajl got other than white space */
} Lines;

static int is_space(unsigned char c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

static int all_space(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!is_space(s[i]))
			return 0;
	return 1;
}

/* Hands n bytes to yajl, p->loc already knowing where they are. */
static int yajl_take(Parser *p, Lines *ln, const unsigned char *data, size_t n)
{
	if (!ln->yajl_fed && !all_space(data, n))
		ln->yajl_fed = 1;
	size_t e = n;
	while (e && is_space(data[e - 1]))
		e--;
	if (e)
		ln->yajl_last = data[e - 1];
	yajl_status s = yajl_parse(p->h, data, n);
	return s == yajl_status_ok ? 0 : syntax_error(p, s);
}

/* Hands n bytes to yajl; line >= 0 restarts locations at (base, line,
 * col), else they continue from the previous feed. */
static int feed_yajl_at(Parser *p, Lines *ln, const unsigned char *data, size_t n,
                        uint64_t base, long line, long col)
{
	if (line >= 0)
		loc_restart(&p->loc, NULL, 0, base, line, col);
	otlp_loc_feed(&p->loc, data, n);
	return yajl_take(p, ln, data, n);
}

static int feed_yajl(Parser *p, Lines *ln, const unsigned char *data, size_t n, uint64_t base,
                     long line)
{
	return feed_yajl_at(p, ln, data, n, base, line, 1);
}

/* After the fast path cancelled (a check failed): the Parser back to depth
 * with no error, for yajl to replay what it walked and say where. What the
 * walk already handed to the store does not matter: the import fails. */
static void fast_undo(Parser *p, int depth)
{
	err_clear(p->ctx->err);
	p->depth = depth;
	p->skip = 0;
	p->in_attrs = 0;
}

/* yajl accepted what the fast path cancelled on: they disagree. */
static int fast_refused(Parser *p, const Lines *ln)
{
	return err_at(p->ctx->err, TT_EPARSE, p->ctx->name, ln->line_no, 1,
	              "internal error: the JSON fast path refused a line yajl accepts");
}

/* One complete line (final: the input ends without a newline after it). */
static int do_line(Parser *p, Lines *ln, int final)
{
	size_t len = ln->line.len;
	int replay = 0;
	if (p->fast && len <= LINE_CAP && !all_space((const unsigned char *)ln->line.p, len)) {
		/* simdjson reads (and ignores) a few bytes past the end */
		size_t pad = otlp_simd_padding();
		if (ln->line.cap < len + pad + 1) {
			for (size_t i = 0; i < pad; i++)
				otlp_buf_addc(&ln->line, '\0');
			ln->line.len = len;
		}
		const unsigned char *buf = (const unsigned char *)ln->line.p;
		loc_restart(&p->loc, buf, len, ln->line_base, ln->line_no, 1);
		p->simd = 1;
		size_t rest = len;
		int r = otlp_simd_walk(p->fast, (const char *)buf, len, &callbacks, p, &p->simd_at,
		                       &rest);
		p->simd = 0;
		if (r == OTLP_SIMD_OK) {
			ln->fast_values++;
			if (p->n_mr > 0 && p->mr[p->n_mr - 1].col == 0) {
				/* a metrics request: this line's first value */
				ImportRange *mr = &p->mr[p->n_mr - 1];
				mr->from = ln->line_base;
				mr->to = ln->line_base + rest;
				mr->line = ln->line_no;
				mr->col = 1;
			}
			if (rest >= len || all_space(buf + rest, len - rest))
				return 0;
			/* more values on this line: yajl takes the rest */
			int rc = feed_yajl_at(p, ln, buf + rest, len - rest, ln->line_base + rest,
			                      ln->line_no, 1 + (long)rest);
			if (rc == 0 && p->depth > 0)
				ln->stream = 1;
			return rc;
		}
		if (p->stopped)
			return TT_ESTORE;
		if (r == OTLP_SIMD_CANCELED) {
			fast_undo(p, 0);
			replay = 1;
		}
	}
	int rc = feed_yajl(p, ln, (const unsigned char *)ln->line.p, len, ln->line_base,
	                   ln->line_no);
	if (rc)
		return rc;
	if (replay) {
		if (final) {
			otlp_loc_feed(&p->loc, NULL, 0);
			yajl_status s = yajl_complete_parse(p->h);
			if (s != yajl_status_ok)
				return syntax_error(p, s);
		}
		return fast_refused(p, ln);
	}
	if (p->depth > 0)
		ln->stream = 1;
	return 0;
}

/* Stream mode: where the object that starts the whole line s (take bytes,
 * its '\n' included) begins, when stream_fast() may try it; -1 when not.
 * Only where yajl expects an item of the array the Parser is in (just
 * after its '[' or a ','), so that a placeholder value there is exactly
 * what yajl would accept in the object's place. At a line's start yajl is
 * between tokens: a string cannot hold the '\n' it just took. */
static long stream_fast_at(const Parser *p, const Lines *ln, const unsigned char *s,
                           size_t take)
{
	if (!p->fast || p->skip || p->in_attrs || p->depth == 0 ||
	    !is_array_frame(p->st[p->depth - 1].type) ||
	    (ln->yajl_last != '[' && ln->yajl_last != ','))
		return -1;
	size_t ws = 0;
	while (ws < take && s[ws] == ' ')
		ws++;
	return ws < take && s[ws] == '{' ? (long)ws : -1;
}

/* Stream mode, one whole line s (take bytes, otlp_simd_padding() more
 * readable: the chunk buffers have them) whose object at s[ws] is an array
 * item (see stream_fast_at()): the fast path reports the object into the
 * Parser at its current depth,
 * yajl gets the placeholder "" (muted) in its place and then the rest of
 * the line, so yajl still checks what follows (',' or ']').
 *
 * p->loc is fed the whole line as the plain stream path feeds it, and
 * p->tok_at shifts the offsets of the parts parsed into it, so every later
 * location is what it would be had yajl taken the line. A line the fast
 * path rejects goes to yajl unchanged; one where a check failed is
 * replayed through yajl from the state before it, for yajl's message. */
static int stream_fast(Parser *p, Lines *ln, const unsigned char *s, size_t take, size_t ws)
{
	otlp_loc_feed(&p->loc, s, take);
	OtlpLoc loc = p->loc;
	int depth = p->depth, any_token = p->any_token;
	/* simdjson refuses a value followed by a lone ',': it stays for yajl */
	size_t n = take;
	while (n > ws && is_space(s[n - 1]))
		n--;
	if (n > ws && s[n - 1] == ',')
		n--;
	size_t rest = n;
	p->simd = 1;
	p->tok_at = ws;
	int r = otlp_simd_walk(p->fast, (const char *)s + ws, n - ws, &callbacks, p,
	                       &p->simd_at, &rest);
	p->simd = 0;
	p->tok_at = 0;
	if (r != OTLP_SIMD_OK) {
		if (p->stopped)
			return TT_ESTORE;
		int replay = r == OTLP_SIMD_CANCELED;
		if (replay) {
			/* the Parser's frames below depth are untouched */
			fast_undo(p, depth);
			p->any_token = any_token;
			p->loc = loc;
		}
		int rc = yajl_take(p, ln, s, take);
		return rc == 0 && replay ? fast_refused(p, ln) : rc;
	}
	ln->fast_values++;
	/* yajl's last token would have been the object's '}' */
	size_t end = ws + rest;
	while (end > ws && is_space(s[end - 1]))
		end--;
	otlp_loc_token(&p->loc, end);
	p->mute = 1;
	yajl_status st = yajl_parse(p->h, (const unsigned char *)"\"\"", 2);
	p->mute = 0;
	if (st != yajl_status_ok)
		return err_at(p->ctx->err, TT_EPARSE, p->ctx->name, ln->line_no, 1,
		              "internal error: yajl refused an array item in place of an object");
	ln->yajl_last = '}';
	p->tok_at = end;
	int rc = yajl_take(p, ln, s + end, take - end);
	p->tok_at = 0;
	return rc;
}

/* A piece of input at absolute offset at: a whole line or a line's end
 * (nl set), or the part of a line that a chunk holds. */
static int do_piece(Parser *p, Lines *ln, const unsigned char *s, size_t take, uint64_t at,
                    int nl)
{
	int rc = 0;
	if (!ln->stream && ln->line.len + take > LINE_CAP) {
		/* too long for the fast path: yajl from the line's start */
		if (ln->line.len)
			rc = feed_yajl(p, ln, (const unsigned char *)ln->line.p, ln->line.len,
			               ln->line_base, ln->line_no);
		if (rc == 0)
			rc = feed_yajl(p, ln, s, take, at, ln->line.len ? -1 : ln->line_no);
		ln->stream = 1;
		ln->line.len = 0;  /* its bytes stay: locations may still point there */
	} else if (ln->stream) {
		long ws = nl && at == ln->line_base ? stream_fast_at(p, ln, s, take) : -1;
		if (ws >= 0)
			rc = stream_fast(p, ln, s, take, (size_t)ws);
		else
			rc = feed_yajl(p, ln, s, take, at, -1);
	} else {
		otlp_buf_add(&ln->line, s, take);
		if (!nl)
			return 0;
		rc = do_line(p, ln, 0);
		ln->line.len = 0;
		ln->line_no++;
		ln->line_base = at + take;
		return rc;
	}
	if (rc == 0 && nl) {
		ln->line_no++;
		ln->line_base = at + take;
		if (p->depth == 0)
			ln->stream = 0;
	}
	return rc;
}

int otlp_traces_run(ImportCtx *ctx, FILE *f)
{
	Parser *p = xcalloc(1, sizeof *p);
	/* zeroed padding: the fast path reads a little past a line (stream_fast) */
	unsigned char *chunks = xcalloc(1, 2 * (size_t)CHUNK_SIZE + otlp_simd_padding());
	Lines ln = {.line_no = 1};
	buf_init(&ln.line);
	int rc = 0;
	p->ctx = ctx;
	p->class_key_len = strlen(ctx->class_key);
	p->want = ctx->opt->signals
	              ? ctx->opt->signals
	              : IMPORT_SIGNAL_TRACES | IMPORT_SIGNAL_METRICS | WANT_LOGS;
	otlp_loc_init(&p->loc);
	otlp_attrs_init(&p->attrs);
#define INIT_BUF(n) buf_init(&p->n);
	PARSER_BUFS(INIT_BUF)
#undef INIT_BUF
	p->h = yajl_alloc(&callbacks, NULL, p);
	if (p->h == NULL) {
		rc = err_set(ctx->err, TT_ENOMEM, "%s: cannot allocate the JSON parser", ctx->name);
		goto out;
	}
	yajl_config(p->h, yajl_allow_multiple_values, 1);
	/* without it (out of memory) every line simply goes to yajl */
	p->fast = otlp_simd_new(LINE_CAP);
	p->pipe = pipe_new(ctx);
	if (!p->pipe->started) {
		rc = err_set(ctx->err, TT_ENOMEM, "%s: cannot start the store thread", ctx->name);
		goto out;
	}

	uint64_t done = 0, shown = 0, off = 0;
	int which = 0;
	for (;;) {
		unsigned char *chunk = chunks + (size_t)which * CHUNK_SIZE;
		which ^= 1;
		size_t n = fread(chunk, 1, CHUNK_SIZE, f);
		if (n == 0) {
			if (ferror(f)) {
				long line, col;
				otlp_loc_pos(&p->loc, p->loc.cur_base + p->loc.cur_len, &line, &col);
				rc = err_at(ctx->err, TT_EIO, ctx->name, line, col, "read error");
				goto fail;
			}
			break;
		}
		const unsigned char *data = chunk;
		if (done == 0 && n >= 3 && memcmp(chunk, "\xEF\xBB\xBF", 3) == 0) {
			data += 3;  /* a UTF-8 byte order mark; columns count after it */
			n -= 3;
		}
		uint64_t base = off;  /* offsets count after a byte order mark */
		off += n;
		done += (size_t)(data - chunk) + n;
		for (size_t pos = 0; pos < n;) {
			const unsigned char *s = data + pos;
			const unsigned char *nl = memchr(s, '\n', n - pos);
			size_t take = nl ? (size_t)(nl - s) + 1 : n - pos;
			if ((rc = do_piece(p, &ln, s, take, base + pos, nl != NULL)) != 0)
				goto fail;
			pos += take;
		}
		if (done - shown >= PROGRESS_STEP) {
			import_progress(ctx, done);
			shown = done;
		}
	}
	if (!ln.stream && ln.line.len) {
		/* the last line has no newline */
		if ((rc = do_line(p, &ln, 1)) != 0)
			goto fail;
	}
	if (ln.yajl_fed || ln.fast_values == 0 || p->depth > 0) {
		otlp_loc_feed(&p->loc, NULL, 0);
		yajl_status s = yajl_complete_parse(p->h);
		if (s != yajl_status_ok) {
			rc = syntax_error(p, s);
			goto fail;
		}
	}
	import_progress(ctx, done);
	rc = pipe_finish(p->pipe, ctx, 1);
	if (rc == 0 && p->n_mr > 0)
		rc = otlp_metrics_ranges(ctx, f, p->mr, p->n_mr);
	goto out;
fail:
	/* a parse error wins over a store error, unless the store thread's
	 * failure is what stopped the parse */
	if (pipe_finish(p->pipe, p->stopped ? ctx : NULL, 0) && p->stopped)
		rc = ctx->err && ctx->err->code ? ctx->err->code : TT_ESTORE;
out:
	pipe_free(p->pipe);
	if (p->h)
		yajl_free(p->h);
	otlp_simd_free(p->fast);
	buf_fini(&ln.line);
#define FINI_BUF(n) buf_fini(&p->n);
	PARSER_BUFS(FINI_BUF)
#undef FINI_BUF
	otlp_attrs_fini(&p->attrs);
	free(p->mr);
	free(chunks);
	free(p);
	return rc;
}
