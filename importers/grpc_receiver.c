/*
 * grpc_receiver.c - OTLP/gRPC receiver on the gRPC C core API
 * (grpc/grpc.h: a server, one completion queue, grpc_server_request_call).
 *
 * Threading: one thread of ours runs the completion queue; gRPC's own
 * threads do the network. N_SLOTS calls are in flight at once, each slot
 * stepping from "requested" to "message received" to "answer sent" as its
 * tags come back, so gRPC accepts and reads the next calls while one is
 * imported. The imports themselves run on this thread, one at a time, on
 * its Store connection, like the HTTP receiver's (SQLite has one writer
 * anyway; the two receivers' connections wait for each other through the
 * busy timeout). Only the counters are shared, under a mutex.
 *
 * A call's life: the method and the bearer token are checked from the call
 * details and metadata before its message is received; gRPC refuses a
 * message above max_body from its length prefix (RESOURCE_EXHAUSTED) and
 * inflates gzip itself (the inflated size is capped by the same limit).
 * The deadline is checked once the message is in: when it has passed,
 * nothing is stored. OK is sent only after the import committed.
 *
 * Shutdown: grpc_receiver_stop() asks gRPC to shut the server down and
 * cancel calls; pending requests and batches then complete (unsuccessfully),
 * and the loop returns once the shutdown tag has come and no operation is
 * outstanding; the queue is drained and destroyed after the join.
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

#define N_SLOTS 4   /* calls in flight; their imports still run one at a time */

/* The server's shutdown tag. */
static char tag_shutdown;

/* One call, from its details to its status. The slot's three tag fields
 * are its completion queue tags (their addresses). */
typedef struct Slot {
	grpc_call *call;
	grpc_call_details det;
	grpc_metadata_array md;
	grpc_byte_buffer *in;     /* the received message */
	grpc_byte_buffer *out;    /* the response message being sent */
	grpc_slice details;       /* the status details being sent */
	int has_details;
	int cancelled;            /* RECV_CLOSE_ON_SERVER's answer */
	grpc_status_code status;  /* the status being sent */
	OtlpSignal sig;
	const char *format, *name;
	char method[160];
	char peer[80];
	char msg[600];
	struct timespec t0;
	size_t bytes;
	int64_t spans, points, dups;
	char tag_new, tag_recv, tag_send;
} Slot;

struct GrpcReceiver {
	grpc_server *server;
	grpc_completion_queue *cq;
	pthread_t thread;
	int started;
	int shutdown_seen;        /* the server's shutdown tag came */
	int outstanding;          /* operations started whose tag has not come */
	Slot slots[N_SLOTS];
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

/* Asks gRPC for the next call into slot k. */
static void request_next(GrpcReceiver *g, Slot *k)
{
	memset(k, 0, sizeof *k);
	grpc_call_details_init(&k->det);
	grpc_metadata_array_init(&k->md);
	if (grpc_server_request_call(g->server, &k->call, &k->det, &k->md, g->cq, g->cq,
	                             &k->tag_new) == GRPC_CALL_OK)
		g->outstanding++;
}

/* Frees what the call of slot k holds. */
static void slot_fini(Slot *k)
{
	if (k->in)
		grpc_byte_buffer_destroy(k->in);
	if (k->out)
		grpc_byte_buffer_destroy(k->out);
	if (k->has_details)
		grpc_slice_unref(k->details);
	if (k->call)
		grpc_call_unref(k->call);
	grpc_call_details_destroy(&k->det);
	grpc_metadata_array_destroy(&k->md);
	memset(k, 0, sizeof *k);
}

/* The call of slot k is closed: count it, log it, free it. */
static void finish(GrpcReceiver *g, Slot *k)
{
	int ok = k->status == GRPC_STATUS_OK && !k->cancelled;
	pthread_mutex_lock(&g->mu);
	if (ok)
		g->stats.accepted++;
	else
		g->stats.rejected++;
	g->stats.spans_stored += k->spans;
	g->stats.points_stored += k->points;
	g->stats.stored += k->spans + k->points;
	g->stats.duplicates += k->dups;
	g->stats.bytes += (int64_t)k->bytes;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	g->stats.last_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
	pthread_mutex_unlock(&g->mu);
	if (g->log) {
		ReceiverEvent ev = {
			.peer = k->peer,
			.method = "gRPC",
			.path = k->method,
			.status = ok ? 200 : 0,
			.body_bytes = k->bytes,
			.spans_added = k->spans,
			.points_added = k->points,
			.duplicates = k->dups,
			.ms = ms_since(&k->t0),
			.message = k->status == GRPC_STATUS_OK && k->cancelled
			               ? "client gone before the status was sent (stored)"
			               : k->msg,
			.grpc_status = status_name(k->status),
		};
		g->log(g->log_ctx, &ev);
	}
	slot_fini(k);
}

/* Starts sending the answer of slot k (resp when status is OK and resp is
 * not NULL) with its status; finish() runs when the batch completes. */
static void answer(GrpcReceiver *g, Slot *k, grpc_status_code status, const Buf *resp,
                   const char *details)
{
	size_t j = 0;
	for (const char *s = details ? details : ""; *s && j + 1 < sizeof k->msg; s++)
		k->msg[j++] = (*s >= 0x20 && *s < 0x7f) ? *s : '?';
	k->msg[j] = '\0';
	k->status = status;
	grpc_op ops[4];
	memset(ops, 0, sizeof ops);
	size_t n = 0;
	ops[n].op = GRPC_OP_SEND_INITIAL_METADATA;
	ops[n].data.send_initial_metadata.count = 0;
	n++;
	if (status == GRPC_STATUS_OK && resp) {
		grpc_slice s = grpc_slice_from_copied_buffer(resp->p ? resp->p : "", resp->len);
		k->out = grpc_raw_byte_buffer_create(&s, 1);
		grpc_slice_unref(s);
		ops[n].op = GRPC_OP_SEND_MESSAGE;
		ops[n].data.send_message.send_message = k->out;
		n++;
	}
	k->details = grpc_slice_from_copied_string(k->msg);
	k->has_details = 1;
	ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
	ops[n].data.send_status_from_server.status = status;
	ops[n].data.send_status_from_server.status_details = &k->details;
	n++;
	ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
	ops[n].data.recv_close_on_server.cancelled = &k->cancelled;
	n++;
	if (grpc_call_start_batch(k->call, ops, n, &k->tag_send, NULL) == GRPC_CALL_OK) {
		g->outstanding++;
	} else {
		k->cancelled = 1;
		finish(g, k);
		if (!g->shutdown_seen)
			request_next(g, k);
	}
}

/* A new call in slot k: check the method and the token, then receive. */
static void on_new(GrpcReceiver *g, Slot *k)
{
	slice_str(k->det.method, k->method, sizeof k->method);
	char *peer = grpc_call_get_peer(k->call);
	snprintf(k->peer, sizeof k->peer, "%s", peer ? peer : "?");
	gpr_free(peer);
	clock_gettime(CLOCK_MONOTONIC, &k->t0);
	pthread_mutex_lock(&g->mu);
	g->stats.received++;
	pthread_mutex_unlock(&g->mu);

	if (slice_is(k->det.method, TRACE_METHOD)) {
		k->sig = OTLP_SIGNAL_TRACES;
		k->format = "otlp-proto-traces";
		k->name = "TraceService/Export";
	} else if (slice_is(k->det.method, METRICS_METHOD)) {
		k->sig = OTLP_SIGNAL_METRICS;
		k->format = "otlp-proto-metrics";
		k->name = "MetricsService/Export";
	} else {
		answer(g, k, GRPC_STATUS_UNIMPLEMENTED, NULL,
		       "unknown method: this receiver serves the OTLP TraceService/Export and "
		       "MetricsService/Export");
		return;
	}
	if (g->token && !token_ok(&k->md, g->token)) {
		answer(g, k, GRPC_STATUS_UNAUTHENTICATED, NULL,
		       "missing or wrong bearer token (metadata authorization: Bearer ...)");
		return;
	}
	grpc_op op;
	memset(&op, 0, sizeof op);
	op.op = GRPC_OP_RECV_MESSAGE;
	op.data.recv_message.recv_message = &k->in;
	if (grpc_call_start_batch(k->call, &op, 1, &k->tag_recv, NULL) == GRPC_CALL_OK)
		g->outstanding++;
	else
		answer(g, k, GRPC_STATUS_INTERNAL, NULL, "cannot receive the message");
}

/* The message of slot k is in (or not): import it and answer. */
static void on_recv(GrpcReceiver *g, Slot *k, int success)
{
	char msg[600];
	if (!success || k->in == NULL) {
		/* cancelled, oversized (gRPC has sent RESOURCE_EXHAUSTED) or no message */
		answer(g, k, GRPC_STATUS_RESOURCE_EXHAUSTED, NULL,
		       "no request message: above the size limit (gRPC refused it) or cancelled");
		return;
	}
	grpc_byte_buffer_reader rd;
	if (!grpc_byte_buffer_reader_init(&rd, k->in)) {
		answer(g, k, GRPC_STATUS_INVALID_ARGUMENT, NULL, "cannot decompress the message");
		return;
	}
	grpc_slice body = grpc_byte_buffer_reader_readall(&rd);
	grpc_byte_buffer_reader_destroy(&rd);
	grpc_byte_buffer_destroy(k->in);
	k->in = NULL;
	size_t len = GRPC_SLICE_LENGTH(body);
	k->bytes = len;

	if (len > g->max_body) {
		grpc_slice_unref(body);
		snprintf(msg, sizeof msg, "message of %zu bytes is above the limit of %zu bytes", len,
		         g->max_body);
		answer(g, k, GRPC_STATUS_RESOURCE_EXHAUSTED, NULL, msg);
		return;
	}
	gpr_timespec now = gpr_now(k->det.deadline.clock_type);
	if (gpr_time_cmp(k->det.deadline, now) <= 0) {
		grpc_slice_unref(body);
		answer(g, k, GRPC_STATUS_DEADLINE_EXCEEDED, NULL,
		       "the deadline passed before the message could be stored (nothing stored)");
		return;
	}

	ImportOptions io = {.format = k->format, .class_key = g->class_key};
	ImportResult res;
	memset(&res, 0, sizeof res);
	Err err = {0};
	int rc = 0;
	if (len > 0)
		rc = import_memory(g->st, k->name, (const char *)GRPC_SLICE_START_PTR(body), len, &io,
		                   &res, &err);
	grpc_slice_unref(body);
	if (rc) {
		const char *m = err.msg[0] ? err.msg : "cannot import the message";
		grpc_status_code code = GRPC_STATUS_INVALID_ARGUMENT;
		if (rc == TT_ESTORE)
			code = is_busy(m) ? GRPC_STATUS_UNAVAILABLE : GRPC_STATUS_INTERNAL;
		else if (rc == TT_EIO || rc == TT_ENOMEM)
			code = GRPC_STATUS_INTERNAL;
		answer(g, k, code, NULL, m);
		return;
	}
	/* Committed: now, and only now, say OK. */
	const StoreSourceCounts *c = &res.counts;
	k->spans = c->spans_added;
	k->points = c->metrics_added;
	k->dups = c->spans_duplicate + c->metrics_duplicate;
	msg[0] = '\0';
	if (k->dups > 0)
		snprintf(msg, sizeof msg, "%lld of %lld %s were already stored (not stored again)",
		         (long long)k->dups, (long long)(k->dups + k->spans + k->points),
		         k->sig == OTLP_SIGNAL_TRACES ? "spans" : "data points");
	Buf resp;
	buf_init(&resp);
	otlp_proto_response(k->sig, 0, msg, &resp);
	answer(g, k, GRPC_STATUS_OK, &resp, msg);
	buf_fini(&resp);
}

/* N_SLOTS calls are requested at once; each event moves one slot on (new
 * call -> receive -> import and answer -> closed -> request again). */
static void *loop(void *arg)
{
	GrpcReceiver *g = arg;
	for (int i = 0; i < N_SLOTS; i++)
		request_next(g, &g->slots[i]);
	while (!(g->shutdown_seen && g->outstanding == 0)) {
		grpc_event ev =
		    grpc_completion_queue_next(g->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
		if (ev.type == GRPC_QUEUE_SHUTDOWN)
			break;
		if (ev.type != GRPC_OP_COMPLETE)
			continue;
		if (ev.tag == &tag_shutdown) {
			g->shutdown_seen = 1;
			continue;
		}
		for (int i = 0; i < N_SLOTS; i++) {
			Slot *k = &g->slots[i];
			if (ev.tag == &k->tag_new) {
				g->outstanding--;
				if (ev.success && k->call)
					on_new(g, k);
				else
					slot_fini(k);  /* shutting down */
			} else if (ev.tag == &k->tag_recv) {
				g->outstanding--;
				on_recv(g, k, ev.success);
			} else if (ev.tag == &k->tag_send) {
				g->outstanding--;
				finish(g, k);
				if (!g->shutdown_seen)
					request_next(g, k);
			} else {
				continue;
			}
			break;
		}
	}
	for (int i = 0; i < N_SLOTS; i++)
		slot_fini(&g->slots[i]);
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
		if (g->started) {
			pthread_join(g->thread, NULL);
		} else {
			/* never started: only the shutdown tag can come */
			while (grpc_completion_queue_next(g->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL)
			           .tag != &tag_shutdown)
				;
		}
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
