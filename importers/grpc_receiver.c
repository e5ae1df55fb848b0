/*
 * grpc_receiver.c - OTLP/gRPC receiver on the gRPC C core API
 * (grpc/grpc.h: a server, one completion queue, grpc_server_request_call).
 *
 * Threading: one thread of ours runs a loop that asks gRPC for the next
 * call, serves it to the end (receive the message, import it, send the
 * answer and the status) and asks for the next; gRPC's own threads do the
 * network. The thread owns the Store connection, so imports are serialised
 * like the HTTP receiver's (SQLite has one writer anyway; the two
 * receivers' connections wait for each other through the busy timeout).
 * Only the counters are shared, under a mutex.
 *
 * A call's life: the method and the bearer token are checked from the call
 * details and metadata before its message is received; gRPC refuses a
 * message above max_body from its length prefix (RESOURCE_EXHAUSTED) and
 * inflates gzip itself (the inflated size is capped by the same limit).
 * The deadline is checked once the message is in: when it has passed,
 * nothing is stored. OK is sent only after the import committed.
 *
 * Shutdown: grpc_receiver_stop() asks gRPC to shut the server down and
 * cancel calls; the pending request_call then completes unsuccessfully,
 * the loop sees the shutdown tag and returns, and the queue is drained and
 * destroyed after the join.
 */
#include "grpc_receiver.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/alloc.h>
#include <grpc/support/log.h>
#include <grpc/support/time.h>

#include "buf.h"
#include "import.h"
#include "otlp_proto.h"

#define TRACE_METHOD "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
#define METRICS_METHOD "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"

/* Completion queue tags; tag_new[i] is the request_call of call slot i. */
static char tag_new[2], tag_recv, tag_send, tag_shutdown;

struct GrpcReceiver {
	grpc_server *server;
	grpc_completion_queue *cq;
	pthread_t thread;
	int started;
	int shutdown_seen;        /* the server's shutdown tag came */
	int new_done[2];          /* tag_new[i] came ... */
	int new_ok[2];            /* ... with this success flag */
	Store *st;
	unsigned port;
	size_t max_body;
	char *token;
	char *class_key;
	ReceiverLogFn log;
	void *log_ctx;
	pthread_mutex_t mu;
	ReceiverStats stats;
};

static const char *status_name(grpc_status_code c)
{
	switch (c) {
	case GRPC_STATUS_OK: return "OK";
	case GRPC_STATUS_CANCELLED: return "CANCELLED";
	case GRPC_STATUS_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
	case GRPC_STATUS_DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
	case GRPC_STATUS_RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
	case GRPC_STATUS_UNIMPLEMENTED: return "UNIMPLEMENTED";
	case GRPC_STATUS_INTERNAL: return "INTERNAL";
	case GRPC_STATUS_UNAVAILABLE: return "UNAVAILABLE";
	case GRPC_STATUS_UNAUTHENTICATED: return "UNAUTHENTICATED";
	default: return "UNKNOWN";
	}
}

/* Waits for tag want; remembers on the way the server's shutdown tag and
 * new calls (the next call is requested while one is served, so it can
 * arrive during the wait). Returns the event's success flag (0 when the
 * queue shut down). */
static int wait_for(GrpcReceiver *g, void *want)
{
	for (int i = 0; i < 2; i++) {
		if (want == &tag_new[i] && g->new_done[i])
			return g->new_ok[i];
	}
	if (want == &tag_shutdown && g->shutdown_seen)
		return 1;
	for (;;) {
		grpc_event ev =
		    grpc_completion_queue_next(g->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
		if (ev.type == GRPC_QUEUE_SHUTDOWN)
			return 0;
		if (ev.type != GRPC_OP_COMPLETE)
			continue;
		if (ev.tag == &tag_shutdown) {
			g->shutdown_seen = 1;
			if (want == &tag_shutdown)
				return 1;
			continue;
		}
		for (int i = 0; i < 2; i++) {
			if (ev.tag == &tag_new[i]) {
				g->new_done[i] = 1;
				g->new_ok[i] = ev.success;
			}
		}
		if (ev.tag == want)
			return ev.success;
	}
}

/* Copies a slice into out (size n) as a C string, printable ASCII only. */
static void slice_str(grpc_slice s, char *out, size_t n)
{
	size_t len = GRPC_SLICE_LENGTH(s), j = 0;
	const unsigned char *p = GRPC_SLICE_START_PTR(s);
	for (size_t i = 0; i < len && j + 1 < n; i++)
		out[j++] = (p[i] >= 0x20 && p[i] < 0x7f) ? (char)p[i] : '?';
	out[j] = '\0';
}

static int slice_is(grpc_slice s, const char *lit)
{
	size_t n = strlen(lit);
	return GRPC_SLICE_LENGTH(s) == n && memcmp(GRPC_SLICE_START_PTR(s), lit, n) == 0;
}

/* The "authorization" metadata carries "Bearer TOKEN" (constant time in the
 * token, as in receiver.c). */
static int token_ok(const grpc_metadata_array *md, const char *token)
{
	for (size_t i = 0; i < md->count; i++) {
		if (!slice_is(md->metadata[i].key, "authorization"))
			continue;
		const char *v = (const char *)GRPC_SLICE_START_PTR(md->metadata[i].value);
		size_t vn = GRPC_SLICE_LENGTH(md->metadata[i].value);
		if (vn < 7 || strncasecmp(v, "Bearer ", 7) != 0)
			return 0;
		v += 7, vn -= 7;
		while (vn > 0 && *v == ' ')
			v++, vn--;
		size_t t = strlen(token);
		unsigned char diff = (unsigned char)(vn != t);
		for (size_t k = 0; k < t; k++)
			diff |= (unsigned char)(token[k] ^ (k < vn ? v[k] : 0));
		return diff == 0;
	}
	return 0;
}

static int is_busy(const char *msg)
{
	return strstr(msg, "locked") != NULL || strstr(msg, "busy") != NULL;
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* One call, from its details to its status. */
typedef struct Call {
	grpc_call *call;
	grpc_call_details det;
	grpc_metadata_array md;
	char method[160];
	char peer[80];
	struct timespec t0;
	size_t bytes;
	int64_t spans, points, dups;
} Call;

/* Sends the answer (msg when status is OK and resp != NULL) and the status,
 * waits until the call is closed, counts and logs it. */
static void answer(GrpcReceiver *g, Call *c, grpc_status_code status, const Buf *resp,
                   const char *details)
{
	char clean[600];
	size_t j = 0;
	for (const char *s = details ? details : ""; *s && j + 1 < sizeof clean; s++)
		clean[j++] = (*s >= 0x20 && *s < 0x7f) ? *s : '?';
	clean[j] = '\0';
	grpc_op ops[4];
	memset(ops, 0, sizeof ops);
	size_t n = 0;
	ops[n].op = GRPC_OP_SEND_INITIAL_METADATA;
	ops[n].data.send_initial_metadata.count = 0;
	n++;
	grpc_byte_buffer *bb = NULL;
	if (status == GRPC_STATUS_OK && resp) {
		grpc_slice s = grpc_slice_from_copied_buffer(resp->p ? resp->p : "", resp->len);
		bb = grpc_raw_byte_buffer_create(&s, 1);
		grpc_slice_unref(s);
		ops[n].op = GRPC_OP_SEND_MESSAGE;
		ops[n].data.send_message.send_message = bb;
		n++;
	}
	grpc_slice det = grpc_slice_from_copied_string(clean);
	ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
	ops[n].data.send_status_from_server.status = status;
	ops[n].data.send_status_from_server.status_details = &det;
	n++;
	int cancelled = 0;
	ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
	ops[n].data.recv_close_on_server.cancelled = &cancelled;
	n++;
	if (grpc_call_start_batch(c->call, ops, n, &tag_send, NULL) == GRPC_CALL_OK)
		wait_for(g, &tag_send);
	grpc_slice_unref(det);
	if (bb)
		grpc_byte_buffer_destroy(bb);

	int ok = status == GRPC_STATUS_OK && !cancelled;
	pthread_mutex_lock(&g->mu);
	if (ok)
		g->stats.accepted++;
	else
		g->stats.rejected++;
	g->stats.spans_stored += c->spans;
	g->stats.points_stored += c->points;
	g->stats.stored += c->spans + c->points;
	g->stats.duplicates += c->dups;
	g->stats.bytes += (int64_t)c->bytes;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	g->stats.last_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
	pthread_mutex_unlock(&g->mu);
	if (g->log) {
		ReceiverEvent ev = {
			.peer = c->peer,
			.method = "gRPC",
			.path = c->method,
			.status = ok ? 200 : 0,
			.body_bytes = c->bytes,
			.spans_added = c->spans,
			.points_added = c->points,
			.duplicates = c->dups,
			.ms = ms_since(&c->t0),
			.message = status == GRPC_STATUS_OK && cancelled
			               ? "client gone before the status was sent (stored)"
			               : clean,
			.grpc_status = status_name(status),
		};
		g->log(g->log_ctx, &ev);
	}
}

/* Receives, imports and answers one call. */
static void serve_call(GrpcReceiver *g, Call *c)
{
	char msg[600];
	slice_str(c->det.method, c->method, sizeof c->method);
	char *peer = grpc_call_get_peer(c->call);
	snprintf(c->peer, sizeof c->peer, "%s", peer ? peer : "?");
	gpr_free(peer);
	clock_gettime(CLOCK_MONOTONIC, &c->t0);
	pthread_mutex_lock(&g->mu);
	g->stats.received++;
	pthread_mutex_unlock(&g->mu);

	OtlpSignal sig;
	const char *format, *name;
	if (slice_is(c->det.method, TRACE_METHOD)) {
		sig = OTLP_SIGNAL_TRACES;
		format = "otlp-proto-traces";
		name = "TraceService/Export";
	} else if (slice_is(c->det.method, METRICS_METHOD)) {
		sig = OTLP_SIGNAL_METRICS;
		format = "otlp-proto-metrics";
		name = "MetricsService/Export";
	} else {
		answer(g, c, GRPC_STATUS_UNIMPLEMENTED, NULL,
		       "unknown method: this receiver serves the OTLP TraceService/Export and "
		       "MetricsService/Export");
		return;
	}
	if (g->token && !token_ok(&c->md, g->token)) {
		answer(g, c, GRPC_STATUS_UNAUTHENTICATED, NULL,
		       "missing or wrong bearer token (metadata authorization: Bearer ...)");
		return;
	}

	grpc_byte_buffer *in = NULL;
	grpc_op op;
	memset(&op, 0, sizeof op);
	op.op = GRPC_OP_RECV_MESSAGE;
	op.data.recv_message.recv_message = &in;
	if (grpc_call_start_batch(c->call, &op, 1, &tag_recv, NULL) != GRPC_CALL_OK ||
	    !wait_for(g, &tag_recv) || in == NULL) {
		/* cancelled, oversized (gRPC has sent RESOURCE_EXHAUSTED) or no message */
		if (in)
			grpc_byte_buffer_destroy(in);
		answer(g, c, GRPC_STATUS_RESOURCE_EXHAUSTED, NULL,
		       "no request message: above the size limit (gRPC refused it) or cancelled");
		return;
	}
	grpc_byte_buffer_reader rd;
	if (!grpc_byte_buffer_reader_init(&rd, in)) {
		grpc_byte_buffer_destroy(in);
		answer(g, c, GRPC_STATUS_INVALID_ARGUMENT, NULL, "cannot decompress the message");
		return;
	}
	grpc_slice body = grpc_byte_buffer_reader_readall(&rd);
	grpc_byte_buffer_reader_destroy(&rd);
	grpc_byte_buffer_destroy(in);
	size_t len = GRPC_SLICE_LENGTH(body);
	c->bytes = len;

	if (len > g->max_body) {
		grpc_slice_unref(body);
		snprintf(msg, sizeof msg, "message of %zu bytes is above the limit of %zu bytes", len,
		         g->max_body);
		answer(g, c, GRPC_STATUS_RESOURCE_EXHAUSTED, NULL, msg);
		return;
	}
	gpr_timespec now = gpr_now(c->det.deadline.clock_type);
	if (gpr_time_cmp(c->det.deadline, now) <= 0) {
		grpc_slice_unref(body);
		answer(g, c, GRPC_STATUS_DEADLINE_EXCEEDED, NULL,
		       "the deadline passed before the message could be stored (nothing stored)");
		return;
	}

	ImportOptions io = {.format = format, .class_key = g->class_key};
	ImportResult res;
	memset(&res, 0, sizeof res);
	Err err = {0};
	int rc = 0;
	if (len > 0)
		rc = import_memory(g->st, name, (const char *)GRPC_SLICE_START_PTR(body), len, &io,
		                   &res, &err);
	grpc_slice_unref(body);
	if (rc) {
		const char *m = err.msg[0] ? err.msg : "cannot import the message";
		grpc_status_code code = GRPC_STATUS_INVALID_ARGUMENT;
		if (rc == TT_ESTORE)
			code = is_busy(m) ? GRPC_STATUS_UNAVAILABLE : GRPC_STATUS_INTERNAL;
		else if (rc == TT_EIO || rc == TT_ENOMEM)
			code = GRPC_STATUS_INTERNAL;
		answer(g, c, code, NULL, m);
		return;
	}
	/* Committed: now, and only now, say OK. */
	const StoreSourceCounts *k = &res.counts;
	c->spans = k->spans_added;
	c->points = k->metrics_added;
	c->dups = k->spans_duplicate + k->metrics_duplicate;
	msg[0] = '\0';
	if (c->dups > 0)
		snprintf(msg, sizeof msg, "%lld of %lld %s were already stored (not stored again)",
		         (long long)c->dups, (long long)(c->dups + c->spans + c->points),
		         sig == OTLP_SIGNAL_TRACES ? "spans" : "data points");
	Buf resp;
	buf_init(&resp);
	otlp_proto_response(sig, 0, msg, &resp);
	answer(g, c, GRPC_STATUS_OK, &resp, msg);
	buf_fini(&resp);
}

static void call_init(Call *c)
{
	memset(c, 0, sizeof *c);
	grpc_call_details_init(&c->det);
	grpc_metadata_array_init(&c->md);
}

static void call_fini(Call *c)
{
	if (c->call)
		grpc_call_unref(c->call);
	grpc_call_details_destroy(&c->det);
	grpc_metadata_array_destroy(&c->md);
}

/* Asks gRPC for the next call into slot i; 0 when it cannot (shutdown). */
static int request_next(GrpcReceiver *g, Call *slots, int i)
{
	call_init(&slots[i]);
	g->new_done[i] = 0;
	return grpc_server_request_call(g->server, &slots[i].call, &slots[i].det, &slots[i].md,
	                                g->cq, g->cq, &tag_new[i]) == GRPC_CALL_OK;
}

/* Two call slots: while the call in one is served, the next one is already
 * requested in the other, so gRPC can accept it meanwhile. */
static void *loop(void *arg)
{
	GrpcReceiver *g = arg;
	Call slots[2];
	int cur = 0;
	int pending[2] = {request_next(g, slots, 0), 0};
	if (!pending[0])
		call_fini(&slots[0]);
	while (pending[cur]) {
		int ok = wait_for(g, &tag_new[cur]);
		pending[cur] = 0;
		int next = 1 - cur;
		if (ok && slots[cur].call) {
			pending[next] = request_next(g, slots, next);
			if (!pending[next])
				call_fini(&slots[next]);
			serve_call(g, &slots[cur]);
		}
		call_fini(&slots[cur]);
		if (!ok)
			break;
		cur = next;
	}
	/* shutting down: collect the other slot's request and the server's tag */
	for (int i = 0; i < 2; i++) {
		if (pending[i]) {
			wait_for(g, &tag_new[i]);
			call_fini(&slots[i]);
		}
	}
	wait_for(g, &tag_shutdown);
	return NULL;
}

/* gRPC's own log lines (e.g. a failed bind, with its internal error tree)
 * would go to stderr; library code does not print, and every failure that
 * matters reaches the caller as an Err or a call status. */
static void quiet_log(gpr_log_func_args *args)
{
	(void)args;
}

int grpc_receiver_start(const GrpcReceiverOptions *opt, GrpcReceiver **out, Err *err)
{
	*out = NULL;
	if (opt == NULL || opt->db_path == NULL)
		return err_set(err, TT_EINVAL, "gRPC receiver: no database path");
	char host[256];
	unsigned port;
	const char *listen = opt->listen ? opt->listen : GRPC_RECEIVER_DEFAULT_LISTEN;
	if (receiver_parse_listen(listen, host, sizeof host, &port, err))
		return TT_EINVAL;

	GrpcReceiver *g = xcalloc(1, sizeof *g);
	pthread_mutex_init(&g->mu, NULL);
	g->max_body = opt->max_body ? opt->max_body : RECEIVER_DEFAULT_MAX_BODY;
	g->token = opt->token && *opt->token ? xstrdup(opt->token) : NULL;
	g->class_key = opt->class_key ? xstrdup(opt->class_key) : NULL;
	g->log = opt->log;
	g->log_ctx = opt->log_ctx;
	if (store_open(opt->db_path, 0, &g->st, err)) {
		store_close(g->st);
		pthread_mutex_destroy(&g->mu);
		free(g->token);
		free(g->class_key);
		free(g);
		return TT_ESTORE;
	}

	gpr_set_log_function(quiet_log);
	grpc_init();
	/* gRPC checks a message's size (and its inflated size) against the
	 * first before it is received whole. SO_REUSEPORT, on by default in
	 * gRPC, would let a second serve bind the same port and take half the
	 * calls into its own database: off, so that one fails to start. */
	grpc_arg args[2];
	args[0].type = GRPC_ARG_INTEGER;
	args[0].key = (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
	args[0].value.integer = g->max_body > INT32_MAX ? INT32_MAX : (int)g->max_body;
	args[1].type = GRPC_ARG_INTEGER;
	args[1].key = (char *)GRPC_ARG_ALLOW_REUSEPORT;
	args[1].value.integer = 0;
	grpc_channel_args ca = {2, args};
	g->server = grpc_server_create(&ca, NULL);
	g->cq = grpc_completion_queue_create_for_next(NULL);
	grpc_server_register_completion_queue(g->server, g->cq, NULL);
	char addr[300];
	snprintf(addr, sizeof addr, strchr(host, ':') ? "[%s]:%u" : "%s:%u", host, port);
	grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
	int bound = grpc_server_add_http2_port(g->server, addr, creds);
	grpc_server_credentials_release(creds);
	if (bound <= 0) {
		grpc_receiver_stop(g);
		return err_set(err, TT_EIO, "cannot listen for gRPC on %s (address in use or not local?)",
		               addr);
	}
	g->port = (unsigned)bound;
	grpc_server_start(g->server);
	if (pthread_create(&g->thread, NULL, loop, g) != 0) {
		grpc_receiver_stop(g);
		return err_set(err, TT_ENOMEM, "cannot start the gRPC receiver thread");
	}
	g->started = 1;
	*out = g;
	return 0;
}

unsigned grpc_receiver_port(const GrpcReceiver *g)
{
	return g ? g->port : 0;
}

void grpc_receiver_stats(GrpcReceiver *g, ReceiverStats *out)
{
	pthread_mutex_lock(&g->mu);
	*out = g->stats;
	pthread_mutex_unlock(&g->mu);
}

void grpc_receiver_stop(GrpcReceiver *g)
{
	if (g == NULL)
		return;
	if (g->server) {
		grpc_server_shutdown_and_notify(g->server, g->cq, &tag_shutdown);
		grpc_server_cancel_all_calls(g->server);
		if (g->started)
			pthread_join(g->thread, NULL);
		else
			wait_for(g, &tag_shutdown);
		grpc_server_destroy(g->server);
	}
	if (g->cq) {
		grpc_completion_queue_shutdown(g->cq);
		while (grpc_completion_queue_next(g->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
		       GRPC_QUEUE_SHUTDOWN)
			;
		grpc_completion_queue_destroy(g->cq);
	}
	if (g->server || g->cq)
		grpc_shutdown();
	store_close(g->st);
	pthread_mutex_destroy(&g->mu);
	free(g->token);
	free(g->class_key);
	free(g);
}
