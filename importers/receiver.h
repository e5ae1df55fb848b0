/*
 * receiver.h - the OTLP/HTTP receiver (JSON and protobuf encodings) behind
 * `tailtriage serve` and `tailtriage tui --listen`.
 *
 * receiver_start() opens its own Store connection on opt->db_path and an
 * HTTP server (libmicrohttpd) with one internal thread. That thread answers
 * every connection and runs every import, one request body = one
 * transaction, so request transactions are serialised and the Store is
 * only ever used from it. A 200 is sent only after the body's transaction
 * committed; any other status means nothing of the body was stored.
 *
 *   POST /v1/traces   ExportTraceServiceRequest   -> ExportTraceServiceResponse
 *   POST /v1/metrics  ExportMetricsServiceRequest -> ExportMetricsServiceResponse
 *
 * Content-Type application/json or application/x-protobuf; the answer is
 * in the request's encoding (a protobuf request's errors are an encoded
 * google.rpc.Status). Both encodings store the same rows.
 *
 * Statuses: 200 stored (or already stored: a retried body adds nothing;
 * or an empty request; or a body with only fields the path does not read,
 * which stores nothing and is reported as a partialSuccess warning, the
 * event's .unrecognised and stats.unrecognised);
 * 400 malformed body ({"code":3,"message":"body:1:40: ..."}, or "body:
 * byte N: ..." for protobuf); 401 missing or wrong bearer token (when
 * opt->token is set); 404 other paths; 405 other methods; 413 body (or its
 * gzip-inflated form) above opt->max_body; 415 any other content type or
 * encoding; 503 the database could not take the write (retryable); 501
 * /v1/metrics as JSON when this build has no OTLP metrics importer. A
 * client that stalls longer than opt->timeout_s is disconnected without a
 * response.
 */
#ifndef TT_RECEIVER_H
#define TT_RECEIVER_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* One finished request, for a log line. Strings are borrowed for the
 * duration of the callback. */
typedef struct ReceiverEvent {
	const char *peer;         /* "127.0.0.1:53122" */
	const char *method;
	const char *path;
	int status;               /* HTTP status sent; 0: connection dropped */
	size_t body_bytes;        /* as received (compressed when gzip) */
	int64_t spans_added;
	int64_t points_added;
	int64_t duplicates;       /* spans + points already stored */
	double ms;                /* from the first byte of the body to the reply */
	const char *message;      /* why it was refused, "" when stored; with
	                           * status 200, a warning (items already stored,
	                           * or unrecognised) */
	int unrecognised;         /* 200, but the body had only fields this
	                           * endpoint does not read: nothing stored */
	const char *grpc_status;  /* gRPC receiver: the status sent ("OK",
	                           * "INVALID_ARGUMENT", ...); NULL for HTTP */
} ReceiverEvent;

/* Called on the receiver thread after each request; must be quick and
 * must not call back into the receiver. */
typedef void (*ReceiverLogFn)(void *ctx, const ReceiverEvent *ev);

typedef struct ReceiverOptions {
	const char *db_path;      /* database file; required */
	const char *listen;       /* "HOST:PORT", "[V6]:PORT" or "PORT"; NULL:
	                           * "127.0.0.1:4318". Port 0 picks a free port
	                           * (see receiver_port). */
	size_t max_body;          /* bytes, before and after gzip; 0: 16 MiB */
	unsigned max_connections; /* 0: 64 */
	unsigned timeout_s;       /* idle timeout per connection; 0: 10 s */
	const char *token;        /* NULL/"": no auth; else "Authorization:
	                           * Bearer TOKEN" is required */
	const char *class_key;    /* NULL: "workload.class" */
	ReceiverLogFn log;        /* may be NULL */
	void *log_ctx;
} ReceiverOptions;

#define RECEIVER_DEFAULT_LISTEN "127.0.0.1:4318"
#define RECEIVER_DEFAULT_MAX_BODY ((size_t)16 << 20)

typedef struct Receiver Receiver;

/* Counters since receiver_start. "received" counts requests on any path;
 * "stored" counts items (spans and metric points) newly committed;
 * "rejected" counts requests answered with a status other than 200 or
 * dropped (timeouts). */
typedef struct ReceiverStats {
	int64_t received;         /* requests */
	int64_t accepted;         /* requests answered 200 */
	int64_t rejected;         /* requests refused or dropped */
	int64_t stored;           /* spans_stored + points_stored */
	int64_t spans_stored;
	int64_t points_stored;
	int64_t duplicates;       /* items already stored (not rejections) */
	int64_t unrecognised;     /* requests answered 200 whose body had only
	                           * fields the endpoint does not read (a traces
	                           * body on /v1/metrics): nothing stored */
	int64_t bytes;            /* body bytes received */
	int64_t last_ms;          /* unix ms of the last request, 0 none yet */
} ReceiverStats;

/* Parses "HOST:PORT", "[V6]:PORT" or "PORT" (host then 127.0.0.1) into
 * host (size host_sz) and *port. Returns 0 or TT_EINVAL with err set. */
int receiver_parse_listen(const char *listen, char *host, size_t host_sz,
                          unsigned *port, Err *err);

/* Opens the database and starts listening. On success *out owns both;
 * stop with receiver_stop(). Errors: TT_EINVAL (bad listen address),
 * TT_ESTORE (database), TT_EIO (cannot bind, e.g. port in use). */
int receiver_start(const ReceiverOptions *opt, Receiver **out, Err *err);

/* The port actually bound (useful with port 0). */
unsigned receiver_port(const Receiver *r);

/* A consistent copy of the counters; callable from any thread. */
void receiver_stats(Receiver *r, ReceiverStats *out);

/* Stops listening, waits for the request in progress (its transaction
 * either commits and is answered or rolls back), closes the database and
 * frees r. NULL is a no-op. */
void receiver_stop(Receiver *r);

#endif
