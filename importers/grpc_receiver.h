/*
 * grpc_receiver.h - the OTLP/gRPC receiver behind `tailtriage serve`
 * (Debian's gRPC C core library: HTTP/2, flow control, compression and
 * deadlines are gRPC's; this module is the two OTLP methods).
 *
 *   /opentelemetry.proto.collector.trace.v1.TraceService/Export
 *   /opentelemetry.proto.collector.metrics.v1.MetricsService/Export
 *
 * grpc_receiver_start() opens its own Store connection on opt->db_path and
 * one thread that imports the calls one at a time: one request message =
 * one transaction, and OK is sent only after it committed (a message that
 * was stored already adds nothing: retries are safe). Any other status
 * means nothing of the message was stored.
 *
 * Statuses (the OTLP specification's retryable / non-retryable split):
 * OK; INVALID_ARGUMENT a malformed message ("TraceService/Export: byte N:
 * ..."); UNAUTHENTICATED missing or wrong "authorization: Bearer TOKEN"
 * metadata; UNIMPLEMENTED another method; RESOURCE_EXHAUSTED a message above
 * opt->max_body (refused by gRPC from its length prefix); DEADLINE_EXCEEDED
 * the client's deadline passed before the message could be stored (nothing
 * stored); UNAVAILABLE the database is busy (retryable); INTERNAL another
 * database error. gzip-compressed messages are accepted.
 */
#ifndef TT_GRPC_RECEIVER_H
#define TT_GRPC_RECEIVER_H

#include <stddef.h>

#include "err.h"
#include "receiver.h"

#define GRPC_RECEIVER_DEFAULT_LISTEN "127.0.0.1:4317"

typedef struct GrpcReceiverOptions {
	const char *db_path;      /* database file; required */
	const char *listen;       /* "HOST:PORT", "[V6]:PORT" or "PORT"; NULL:
	                           * "127.0.0.1:4317"; port 0 picks a free port */
	size_t max_body;          /* largest message, before and after gzip; 0: 16 MiB */
	const char *token;        /* NULL/"": no auth */
	const char *class_key;    /* NULL: "workload.class" */
	ReceiverLogFn log;        /* called on the receiver's thread; may be NULL.
	                           * ev->method is "gRPC", ev->path the method,
	                           * ev->grpc_status its status name */
	void *log_ctx;
} GrpcReceiverOptions;

typedef struct GrpcReceiver GrpcReceiver;

/* Opens the database and starts listening. Errors: TT_EINVAL (bad
 * address), TT_ESTORE (database), TT_EIO (cannot bind). */
int grpc_receiver_start(const GrpcReceiverOptions *opt, GrpcReceiver **out, Err *err);

/* The port actually bound. */
unsigned grpc_receiver_port(const GrpcReceiver *g);

/* A consistent copy of the counters (calls counted as requests); callable
 * from any thread. */
void grpc_receiver_stats(GrpcReceiver *g, ReceiverStats *out);

/* Stops listening, ends the call in progress (its transaction commits or
 * rolls back first), closes the database and frees g. NULL is a no-op. */
void grpc_receiver_stop(GrpcReceiver *g);

#endif
