/*
 * receiver.c - OTLP/HTTP (JSON and protobuf) receiver on libmicrohttpd.
 *
 * Threading: libmicrohttpd runs with one internal polling thread
 * (MHD_USE_INTERNAL_POLLING_THREAD without a thread pool), so every
 * callback below runs on that one thread. Imports run on a second thread,
 * the importer, which owns the Store connection and takes the bodies one
 * at a time from a queue, which is what SQLite's single writer wants
 * anyway. A request whose body is complete is queued and its connection
 * suspended (libmicrohttpd neither reads it nor times it out); the
 * importer resumes it when the body is stored or refused, and the polling
 * thread answers it. So the polling thread never waits for an import: it
 * keeps reading the other clients' bodies, and a client is dropped only
 * for its own silence. (Importing on the polling thread, every connection
 * waiting its turn looked idle to libmicrohttpd, whose idle clock counts
 * from a connection's last transfer: a burst of exports on a loaded
 * machine, or another process holding the database's write lock, got
 * connections closed without an answer, which an OTLP exporter reports
 * as "socket hang up" and loses its batch.) The counters are shared with
 * other threads under r->mu, the queue under r->qmu.
 *
 * Request life: the first call of on_request() sees the headers and
 * refuses what it can without reading the body (404, 405, 401, 415, and
 * 413 from Content-Length), so a client using "Expect: 100-continue" never
 * uploads a refused body. Later calls append the body to a buffer capped
 * at max_body; the last call inflates gzip (again capped: a gzip bomb is a
 * 413, not an allocation), imports the body in one transaction and
 * answers. A 200 is queued only after import_memory() returned 0, i.e.
 * after the commit. on_completed() frees the request and counts the ones
 * that ended without an answer (idle timeout, client gone).
 *
 * Empty and unrecognised bodies: as the OTLP specification asks, an empty
 * request ({}) is valid and unknown fields are ignored, on both endpoints.
 * A body whose fields are all unknown to its endpoint (a traces body on
 * /v1/metrics) is therefore answered 200 and stores nothing; the answer
 * carries a partialSuccess warning, the log event has .unrecognised set,
 * stats.unrecognised counts it, and its source row's outcome is
 * "unrecognised" (which the dashboard counts, see analysis.h DataQuality).
 *
 * Partial success: one body is one transaction, stored whole or not at
 * all, so this receiver never refuses some items of a body and keeps the
 * rest: rejected counts are always 0. It uses partialSuccess only as the
 * OTLP specification allows for warnings (rejected = 0 with a message):
 * when some items of the body were already stored (an exporter retry).
 * Duplicates are not rejections.
 */
#include "receiver.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include <microhttpd.h>
#include <zlib.h>

#include "buf.h"
#include "import.h"
#include "otlp_proto.h"
#include "store.h"

#ifndef MHD_HTTP_CONTENT_TOO_LARGE
#define MHD_HTTP_CONTENT_TOO_LARGE 413   /* older libmicrohttpd */
#endif

/* google.rpc.Code values used in error bodies. */
enum {
	RPC_INVALID_ARGUMENT = 3,
	RPC_NOT_FOUND = 5,
	RPC_RESOURCE_EXHAUSTED = 8,
	RPC_UNIMPLEMENTED = 12,
	RPC_INTERNAL = 13,
	RPC_UNAVAILABLE = 14,
	RPC_UNAUTHENTICATED = 16,
};

enum { ROUTE_TRACES = 1, ROUTE_METRICS = 2 };

struct Receiver {
	struct MHD_Daemon *d;
	Store *st;
	unsigned port;
	size_t max_body;
	char *token;
	char *class_key;
	ReceiverLogFn log;
	void *log_ctx;
	pthread_mutex_t mu;
	ReceiverStats stats;
	/* the importer thread and its queue (under qmu) */
	pthread_t importer;
	int importer_started;
	pthread_mutex_t qmu;
	pthread_cond_t qcv;
	struct Req *qhead, *qtail;
	int stopping;      /* receiver_stop(): import what is queued, then end */
	int importer_done; /* no importer: bodies are imported on the polling thread */
};

typedef struct Req {
	int route;
	int gzip;
	int proto;                /* Content-Type: application/x-protobuf */
	int answered;             /* a response was queued */
	int too_large;
	int unrecognised;         /* answered 200 with nothing the endpoint reads */
	size_t received;          /* body bytes seen, including discarded ones */
	Buf body;
	struct timespec t0;
	char peer[64];
	char method[16];
	char path[64];
	/* the import, done by the importer (or inline when there is none) */
	int stage;                /* 0 reading, 1 queued (connection suspended), 2 imported */
	struct MHD_Connection *conn;
	struct Req *next;         /* in the importer's queue */
	int gz_rc;                /* gunzip(): 0, >0 too large, <0 malformed (msg) */
	int import_rc;
	Err err;
	ImportResult res;
	char msg[600];
} Req;

static double ms_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

static int64_t now_unix_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Copies at most n-1 bytes of s into out, printable ASCII only. Error
 * messages may quote request bytes; replies and logs stay clean. */
static void copy_clean(char *out, size_t n, const char *s)
{
	size_t j = 0;
	for (; s && *s && j + 1 < n; s++) {
		unsigned char c = (unsigned char)*s;
		out[j++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	out[j] = '\0';
}

/* ---- statistics and logging ------------------------------------------ */

static void finish(Receiver *r, Req *q, int status, int64_t spans, int64_t points,
                   int64_t dups, const char *message)
{
	pthread_mutex_lock(&r->mu);
	if (status == MHD_HTTP_OK)
		r->stats.accepted++;
	else
		r->stats.rejected++;
	r->stats.spans_stored += spans;
	r->stats.points_stored += points;
	r->stats.stored += spans + points;
	r->stats.duplicates += dups;
	r->stats.bytes += (int64_t)q->received;
	r->stats.last_ms = now_unix_ms();
	pthread_mutex_unlock(&r->mu);
	if (r->log) {
		ReceiverEvent ev = {
			.peer = q->peer,
			.method = q->method,
			.path = q->path,
			.status = status,
			.body_bytes = q->received,
			.spans_added = spans,
			.points_added = points,
			.duplicates = dups,
			.ms = ms_since(&q->t0),
			.message = message ? message : "",
			.unrecognised = q->unrecognised,
		};
		r->log(r->log_ctx, &ev);
	}
}

/* ---- responses ------------------------------------------------------------
 * A request with Content-Type: application/x-protobuf gets the same statuses
 * and rules as JSON; only the bodies differ: an encoded
 * Export*ServiceResponse on 200, an encoded google.rpc.Status otherwise. */

static enum MHD_Result send_body(struct MHD_Connection *c, unsigned status, const Buf *b,
                                 const char *type, const char *extra_header,
                                 const char *extra_value)
{
	struct MHD_Response *resp =
	    MHD_create_response_from_buffer(b->len, (void *)buf_str(b), MHD_RESPMEM_MUST_COPY);
	if (resp == NULL)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (extra_header)
		MHD_add_response_header(resp, extra_header, extra_value);
	enum MHD_Result ret = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* The error body of a refused request in the request's encoding. */
static void error_body(const Req *q, int rpc_code, const char *clean, Buf *b)
{
	if (q->proto) {
		otlp_proto_status(rpc_code, clean, b);
		return;
	}
	buf_printf(b, "{\"code\":%d,\"message\":", rpc_code);
	buf_add_json_str(b, clean, strlen(clean));
	buf_addc(b, '}');
}

/* Refuses the request with status and a google.rpc.Status(-like) body. */
static enum MHD_Result refuse(Receiver *r, struct MHD_Connection *c, Req *q, unsigned status,
                              int rpc_code, const char *msg)
{
	char clean[600];
	copy_clean(clean, sizeof clean, msg);
	Buf b;
	buf_init(&b);
	error_body(q, rpc_code, clean, &b);
	const char *h = NULL, *v = NULL;
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED) {
		h = MHD_HTTP_HEADER_ALLOW;
		v = "POST";
	} else if (status == MHD_HTTP_UNAUTHORIZED) {
		h = MHD_HTTP_HEADER_WWW_AUTHENTICATE;
		v = "Bearer";
	} else if (status == MHD_HTTP_SERVICE_UNAVAILABLE) {
		h = MHD_HTTP_HEADER_RETRY_AFTER;
		v = "1";
	}
	enum MHD_Result ret =
	    send_body(c, status, &b, q->proto ? "application/x-protobuf" : "application/json", h, v);
	buf_fini(&b);
	q->answered = 1;
	buf_fini(&q->body);
	finish(r, q, (int)status, 0, 0, 0, clean);
	return ret;
}

/* ---- header checks ------------------------------------------------------ */

/* Compares the media type of a Content-Type value (before any ';',
 * without surrounding blanks) to want, ignoring case. */
static int media_type_is(const char *v, const char *want)
{
	while (*v == ' ' || *v == '\t')
		v++;
	size_t n = strcspn(v, ";");
	while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	return n == strlen(want) && strncasecmp(v, want, n) == 0;
}

/* Constant-time comparison of the bearer token. */
static int token_ok(const char *auth, const char *token)
{
	if (auth == NULL || strncasecmp(auth, "Bearer ", 7) != 0)
		return 0;
	auth += 7;
	while (*auth == ' ')
		auth++;
	size_t a = strlen(auth), t = strlen(token);
	unsigned char diff = (unsigned char)(a != t);
	for (size_t i = 0; i < t; i++)
		diff |= (unsigned char)(token[i] ^ (i < a ? auth[i] : 0));
	return diff == 0;
}

static void peer_of(struct MHD_Connection *c, char *out, size_t n)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	char host[INET6_ADDRSTRLEN] = "?", port[8] = "?";
	if (ci && ci->client_addr) {
		socklen_t len = ci->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
		                                                        : sizeof(struct sockaddr_in);
		getnameinfo(ci->client_addr, len, host, sizeof host, port, sizeof port,
		            NI_NUMERICHOST | NI_NUMERICSERV);
	}
	snprintf(out, n, "%s:%s", host, port);
}

/* Checks the headers; returns 0 when the body should be read, else the
 * request has been refused (q->answered) and the MHD result is in *ret. */
static int check_headers(Receiver *r, struct MHD_Connection *c, Req *q, const char *url,
                         const char *method, enum MHD_Result *ret)
{
	if (strcmp(url, "/v1/traces") == 0) {
		q->route = ROUTE_TRACES;
	} else if (strcmp(url, "/v1/metrics") == 0) {
		q->route = ROUTE_METRICS;
	} else {
		*ret = refuse(r, c, q, MHD_HTTP_NOT_FOUND, RPC_NOT_FOUND,
		              "unknown path: this receiver serves POST /v1/traces and POST /v1/metrics");
		return 1;
	}
	if (strcmp(method, MHD_HTTP_METHOD_POST) != 0) {
		*ret = refuse(r, c, q, MHD_HTTP_METHOD_NOT_ALLOWED, RPC_UNIMPLEMENTED,
		              "method not allowed: use POST");
		return 1;
	}
	if (r->token && !token_ok(MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	                                                      MHD_HTTP_HEADER_AUTHORIZATION),
	                          r->token)) {
		*ret = refuse(r, c, q, MHD_HTTP_UNAUTHORIZED, RPC_UNAUTHENTICATED,
		              "missing or wrong bearer token (Authorization: Bearer ...)");
		return 1;
	}
	const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
	q->proto = ct && media_type_is(ct, "application/x-protobuf");
	if (!q->proto && (ct == NULL || !media_type_is(ct, "application/json"))) {
		char msg[256];
		snprintf(msg, sizeof msg,
		         "Content-Type must be application/json or application/x-protobuf, not '%.80s'",
		         ct ? ct : "(none)");
		*ret = refuse(r, c, q, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, RPC_INVALID_ARGUMENT, msg);
		return 1;
	}
	const char *ce =
	    MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_ENCODING);
	if (ce && strcasecmp(ce, "gzip") == 0) {
		q->gzip = 1;
	} else if (ce && *ce && strcasecmp(ce, "identity") != 0) {
		char msg[160];
		snprintf(msg, sizeof msg, "Content-Encoding '%.40s' is not supported (use gzip or none)",
		         ce);
		*ret = refuse(r, c, q, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, RPC_INVALID_ARGUMENT, msg);
		return 1;
	}
	const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (cl) {
		char *end;
		unsigned long long n = strtoull(cl, &end, 10);
		if (end != cl && n > r->max_body) {
			char msg[160];
			snprintf(msg, sizeof msg, "body of %llu bytes is above the limit of %zu bytes", n,
			         r->max_body);
			*ret = refuse(r, c, q, MHD_HTTP_CONTENT_TOO_LARGE, RPC_RESOURCE_EXHAUSTED, msg);
			return 1;
		}
	}
	return 0;
}

/* ---- body --------------------------------------------------------------- */

/* Inflates a gzip body (one or more members) into out, never beyond cap.
 * Returns 0, 1 when the result would exceed cap, -1 on a corrupt stream
 * (msg set). */
static int gunzip(const char *in, size_t len, size_t cap, Buf *out, char *msg, size_t msg_sz)
{
	z_stream zs;
	memset(&zs, 0, sizeof zs);
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
		snprintf(msg, msg_sz, "gzip: cannot start inflate");
		return -1;
	}
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)len;  /* len <= max_body, far below 4 GiB */
	unsigned char chunk[64 * 1024];
	int ret = 0;
	for (;;) {
		zs.next_out = chunk;
		zs.avail_out = sizeof chunk;
		int rc = inflate(&zs, Z_NO_FLUSH);
		size_t got = sizeof chunk - zs.avail_out;
		if (out->len + got > cap) {
			ret = 1;
			break;
		}
		buf_add(out, chunk, got);
		if (rc == Z_STREAM_END) {
			if (zs.avail_in == 0)
				break;
			/* Another gzip member follows. */
			if (inflateReset(&zs) != Z_OK) {
				snprintf(msg, msg_sz, "gzip: cannot read the next member");
				ret = -1;
				break;
			}
			continue;
		}
		if (rc == Z_BUF_ERROR && zs.avail_in == 0) {
			snprintf(msg, msg_sz, "gzip: body ends in the middle of the compressed stream");
			ret = -1;
			break;
		}
		if (rc != Z_OK && rc != Z_BUF_ERROR) {
			snprintf(msg, msg_sz, "gzip: %s", zs.msg ? zs.msg : "corrupt stream");
			ret = -1;
			break;
		}
	}
	inflateEnd(&zs);
	return ret;
}

static int is_busy(const char *msg)
{
	return strstr(msg, "locked") != NULL || strstr(msg, "busy") != NULL;
}

/* Imports the whole body and answers. */
/* Inflates and imports q's body in one transaction; the outcome is left in
 * q for answer(). Runs on the importer thread (or the polling thread when
 * there is no importer), the only user of r->st. */
static void import_body(Receiver *r, Req *q)
{
	const char *format;
	if (q->proto) {
		format = q->route == ROUTE_TRACES ? "otlp-proto-traces" : "otlp-proto-metrics";
	} else if (q->route == ROUTE_TRACES) {
		format = "otlp-json";
	} else {
		format = "otlp-metrics";
	}
	Buf plain;
	buf_init(&plain);
	const char *data = buf_str(&q->body);
	size_t len = q->body.len;
	memset(&q->res, 0, sizeof q->res);
	memset(&q->err, 0, sizeof q->err);
	q->import_rc = 0;
	q->gz_rc = 0;
	if (q->gzip) {
		q->gz_rc = gunzip(data, len, r->max_body, &plain, q->msg, sizeof q->msg);
		if (q->gz_rc != 0) {
			buf_fini(&plain);
			return;
		}
		data = buf_str(&plain);
		len = plain.len;
	}
	/* an endpoint reads its own signal: a body of another is unrecognised */
	ImportOptions io = {.format = format, .class_key = r->class_key,
	                    .signals = q->route == ROUTE_TRACES ? IMPORT_SIGNAL_TRACES
	                                                        : IMPORT_SIGNAL_METRICS};
	if (!(q->proto && len == 0)) /* an empty protobuf message: valid, nothing in it */
		q->import_rc = import_memory(r->st, q->path, data, len, &io, &q->res, &q->err);
	buf_fini(&plain);
}

/* The importer: takes queued bodies one at a time, imports each and
 * resumes its connection; at receiver_stop() it imports what is still
 * queued, then ends (later bodies are imported on the polling thread). */
static void *importer_main(void *arg)
{
	Receiver *r = arg;
	pthread_mutex_lock(&r->qmu);
	for (;;) {
		while (r->qhead == NULL && !r->stopping)
			pthread_cond_wait(&r->qcv, &r->qmu);
		Req *q = r->qhead;
		if (q == NULL)
			break;
		r->qhead = q->next;
		if (r->qhead == NULL)
			r->qtail = NULL;
		pthread_mutex_unlock(&r->qmu);
		import_body(r, q);
		pthread_mutex_lock(&r->qmu);
		q->stage = 2;
		/* under qmu: receiver_stop() waits for the queue to be empty and
		 * every connection resumed before it stops libmicrohttpd */
		MHD_resume_connection(q->conn);
	}
	r->importer_done = 1;
	pthread_mutex_unlock(&r->qmu);
	return NULL;
}

/* Queues q for the importer and suspends its connection; 0 when there is
 * no importer (it has ended), and the caller imports it itself. */
static int enqueue(Receiver *r, struct MHD_Connection *c, Req *q)
{
	pthread_mutex_lock(&r->qmu);
	/* even when stopping: the importer imports all it was given before
	 * it ends, and the Store is never used by two threads at once */
	int queued = !r->importer_done;
	if (queued) {
		q->stage = 1;
		q->conn = c;
		q->next = NULL;
		if (r->qtail)
			r->qtail->next = q;
		else
			r->qhead = q;
		r->qtail = q;
		MHD_suspend_connection(c);
		pthread_cond_signal(&r->qcv);
	}
	pthread_mutex_unlock(&r->qmu);
	return queued;
}

/* The body is complete: queue it for the importer, or, once imported,
 * answer from what the import left in q. */
static enum MHD_Result process(Receiver *r, struct MHD_Connection *c, Req *q)
{
	char msg[600];
	if (q->too_large) {
		snprintf(msg, sizeof msg, "body of %zu bytes is above the limit of %zu bytes",
		         q->received, r->max_body);
		return refuse(r, c, q, MHD_HTTP_CONTENT_TOO_LARGE, RPC_RESOURCE_EXHAUSTED, msg);
	}
	if (q->stage == 1)
		return MHD_YES; /* not imported yet (not expected: suspended until then) */
	if (q->stage == 0) {
		if (enqueue(r, c, q))
			return MHD_YES;
		import_body(r, q);
		q->stage = 2;
	}
	if (q->gz_rc > 0) {
		snprintf(msg, sizeof msg, "gzip body inflates to more than the limit of %zu bytes",
		         r->max_body);
		return refuse(r, c, q, MHD_HTTP_CONTENT_TOO_LARGE, RPC_RESOURCE_EXHAUSTED, msg);
	}
	if (q->gz_rc < 0)
		return refuse(r, c, q, MHD_HTTP_BAD_REQUEST, RPC_INVALID_ARGUMENT, q->msg);
	int rc = q->import_rc;
	ImportResult res = q->res;
	if (rc) {
		const char *m = q->err.msg[0] ? q->err.msg : "cannot import the body";
		if (rc == TT_ESTORE)
			return is_busy(m) ? refuse(r, c, q, MHD_HTTP_SERVICE_UNAVAILABLE, RPC_UNAVAILABLE, m)
			                  : refuse(r, c, q, MHD_HTTP_INTERNAL_SERVER_ERROR, RPC_INTERNAL, m);
		if (rc == TT_EIO || rc == TT_ENOMEM)
			return refuse(r, c, q, MHD_HTTP_INTERNAL_SERVER_ERROR, RPC_INTERNAL, m);
		return refuse(r, c, q, MHD_HTTP_BAD_REQUEST, RPC_INVALID_ARGUMENT, m);
	}
	/* Committed: now, and only now, say 200. */
	const StoreSourceCounts *k = &res.counts;
	int64_t added = q->route == ROUTE_TRACES ? k->spans_added : k->metrics_added;
	int64_t dups = q->route == ROUTE_TRACES ? k->spans_duplicate : k->metrics_duplicate;
	const char *what = q->route == ROUTE_TRACES ? "spans" : "data points";
	Buf b;
	buf_init(&b);
	if (res.unrecognised > 0) {
		/* OTLP: unknown fields are ignored, so this is a valid (empty)
		 * request; say so as a warning, log it and count it. */
		snprintf(msg, sizeof msg,
		         "the body has no \"%s\", only fields this endpoint does not read (a %s "
		         "body sent to %s?): nothing stored",
		         q->route == ROUTE_TRACES ? "resourceSpans" : "resourceMetrics",
		         q->route == ROUTE_TRACES ? "metrics or logs" : "traces or logs",
		         q->route == ROUTE_TRACES ? "/v1/traces" : "/v1/metrics");
		q->unrecognised = 1;
		pthread_mutex_lock(&r->mu);
		r->stats.unrecognised++;
		pthread_mutex_unlock(&r->mu);
	} else if (dups > 0) {
		snprintf(msg, sizeof msg, "%lld of %lld %s were already stored (not stored again)",
		         (long long)dups, (long long)(dups + added), what);
	} else {
		msg[0] = '\0';
	}
	if (q->proto) {
		otlp_proto_response(q->route == ROUTE_TRACES ? OTLP_SIGNAL_TRACES : OTLP_SIGNAL_METRICS,
		                    0, msg, &b);
	} else if (msg[0]) {
		buf_printf(&b, "{\"partialSuccess\":{\"%s\":0,\"errorMessage\":",
		           q->route == ROUTE_TRACES ? "rejectedSpans" : "rejectedDataPoints");
		buf_add_json_str(&b, msg, strlen(msg));
		buf_adds(&b, "}}");
	} else {
		buf_adds(&b, "{}");
	}
	enum MHD_Result ret =
	    send_body(c, MHD_HTTP_OK, &b, q->proto ? "application/x-protobuf" : "application/json",
	              NULL, NULL);
	buf_fini(&b);
	q->answered = 1;
	buf_fini(&q->body);
	finish(r, q, MHD_HTTP_OK, k->spans_added, k->metrics_added,
	       k->spans_duplicate + k->metrics_duplicate, msg);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
	(void)version;
	Receiver *r = cls;
	Req *q = *con_cls;
	if (q == NULL) {
		q = xcalloc(1, sizeof *q);
		*con_cls = q;
		buf_init(&q->body);
		clock_gettime(CLOCK_MONOTONIC, &q->t0);
		peer_of(c, q->peer, sizeof q->peer);
		copy_clean(q->method, sizeof q->method, method);
		copy_clean(q->path, sizeof q->path, url);
		pthread_mutex_lock(&r->mu);
		r->stats.received++;
		pthread_mutex_unlock(&r->mu);
		enum MHD_Result ret = MHD_YES;
		if (check_headers(r, c, q, url, method, &ret))
			return ret;
		return MHD_YES;
	}
	if (*upload_data_size > 0) {
		size_t n = *upload_data_size;
		*upload_data_size = 0;
		q->received += n;
		if (q->answered)
			return MHD_YES;
		if (q->too_large) {
			/* Without a Content-Length the size shows only now; stop
			 * reading a body that keeps coming far beyond the limit. */
			return q->received > 4 * r->max_body ? MHD_NO : MHD_YES;
		}
		if (q->body.len + n > r->max_body) {
			q->too_large = 1;
			buf_fini(&q->body);
			return MHD_YES;
		}
		buf_add(&q->body, upload_data, n);
		return MHD_YES;
	}
	if (q->answered)
		return MHD_YES;
	return process(r, c, q);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
	(void)c;
	Receiver *r = cls;
	Req *q = *con_cls;
	if (q == NULL)
		return;
	if (!q->answered) {
		const char *why = toe == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED
		                      ? "connection idle too long: closed without a response"
		                      : "connection closed before the request was complete";
		finish(r, q, 0, 0, 0, 0, why);
	}
	buf_fini(&q->body);
	free(q);
	*con_cls = NULL;
}

/* ---- lifecycle ---------------------------------------------------------- */

int receiver_parse_listen(const char *listen, char *host, size_t host_sz, unsigned *port,
                          Err *err)
{
	const char *p = listen ? listen : RECEIVER_DEFAULT_LISTEN;
	const char *portstr;
	size_t hl;
	if (*p == '[') {
		const char *close = strchr(p, ']');
		if (close == NULL || close[1] != ':')
			return err_set(err, TT_EINVAL, "listen address '%s': expected [IPV6]:PORT", p);
		p++;
		hl = (size_t)(close - p);
		portstr = close + 2;
	} else {
		const char *colon = strrchr(p, ':');
		if (colon == NULL) {
			hl = 0;
			portstr = p;
		} else {
			if (strchr(p, ':') != colon)
				return err_set(err, TT_EINVAL,
				               "listen address '%s': write IPv6 addresses as [ADDR]:PORT", p);
			hl = (size_t)(colon - p);
			portstr = colon + 1;
		}
	}
	if (hl == 0) {
		snprintf(host, host_sz, "127.0.0.1");
	} else {
		if (hl >= host_sz)
			return err_set(err, TT_EINVAL, "listen address '%s': host too long", listen);
		memcpy(host, p, hl);
		host[hl] = '\0';
	}
	char *end;
	unsigned long v = strtoul(portstr, &end, 10);
	if (*portstr == '\0' || *end != '\0' || !isdigit((unsigned char)*portstr) || v > 65535)
		return err_set(err, TT_EINVAL, "listen address '%s': bad port '%s'",
		               listen ? listen : RECEIVER_DEFAULT_LISTEN, portstr);
	*port = (unsigned)v;
	return 0;
}

int receiver_start(const ReceiverOptions *opt, Receiver **out, Err *err)
{
	*out = NULL;
	if (opt == NULL || opt->db_path == NULL)
		return err_set(err, TT_EINVAL, "receiver: no database path");
	char host[256];
	unsigned port;
	if (receiver_parse_listen(opt->listen, host, sizeof host, &port, err))
		return TT_EINVAL;

	struct addrinfo hints, *ai = NULL;
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	char portbuf[8];
	snprintf(portbuf, sizeof portbuf, "%u", port);
	int gai = getaddrinfo(host, portbuf, &hints, &ai);
	if (gai != 0 || ai == NULL)
		return err_set(err, TT_EINVAL, "listen address '%s': %s", host, gai_strerror(gai));
	struct sockaddr_storage sa;
	memset(&sa, 0, sizeof sa);
	memcpy(&sa, ai->ai_addr, ai->ai_addrlen);
	int v6 = ai->ai_family == AF_INET6;
	freeaddrinfo(ai);

	Receiver *r = xcalloc(1, sizeof *r);
	pthread_mutex_init(&r->mu, NULL);
	pthread_mutex_init(&r->qmu, NULL);
	pthread_cond_init(&r->qcv, NULL);
	r->importer_done = 1; /* until the importer runs */
	r->max_body = opt->max_body ? opt->max_body : RECEIVER_DEFAULT_MAX_BODY;
	r->token = opt->token && *opt->token ? xstrdup(opt->token) : NULL;
	r->class_key = opt->class_key ? xstrdup(opt->class_key) : NULL;
	r->log = opt->log;
	r->log_ctx = opt->log_ctx;

	if (store_open(opt->db_path, 0, &r->st, err)) {
		receiver_stop(r);
		return TT_ESTORE;
	}
	if (pthread_create(&r->importer, NULL, importer_main, r) == 0) {
		r->importer_started = 1;
		r->importer_done = 0;
	}
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_ALLOW_SUSPEND_RESUME;
	if (v6)
		flags |= MHD_USE_IPv6;
	r->d = MHD_start_daemon(
	    flags, (uint16_t)port, NULL, NULL, on_request, r,
	    MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)(opt->max_connections ? opt->max_connections : 64),
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)(opt->timeout_s ? opt->timeout_s : 10),
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, r,
	    MHD_OPTION_END);
	if (r->d == NULL) {
		receiver_stop(r);
		return err_set(err, TT_EIO, "cannot listen on %s:%u (address in use or not local?)",
		               host, port);
	}
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(r->d, MHD_DAEMON_INFO_BIND_PORT);
	r->port = di ? di->port : port;
	*out = r;
	return 0;
}

unsigned receiver_port(const Receiver *r)
{
	return r ? r->port : 0;
}

void receiver_stats(Receiver *r, ReceiverStats *out)
{
	pthread_mutex_lock(&r->mu);
	*out = r->stats;
	pthread_mutex_unlock(&r->mu);
}

void receiver_stop(Receiver *r)
{
	if (r == NULL)
		return;
	if (r->importer_started) {
		/* what is queued is imported and its connection resumed; later
		 * bodies are imported on the polling thread. libmicrohttpd must
		 * not be stopped with a connection suspended. */
		pthread_mutex_lock(&r->qmu);
		r->stopping = 1;
		pthread_cond_signal(&r->qcv);
		pthread_mutex_unlock(&r->qmu);
		pthread_join(r->importer, NULL);
	}
	if (r->d)
		MHD_stop_daemon(r->d);
	store_close(r->st);
	pthread_mutex_destroy(&r->mu);
	pthread_mutex_destroy(&r->qmu);
	pthread_cond_destroy(&r->qcv);
	free(r->token);
	free(r->class_key);
	free(r);
}
