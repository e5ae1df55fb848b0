/*
 * test_receiver.c - importers/receiver.h through real HTTP on 127.0.0.1:
 * a raw-socket client sends requests to a receiver started on port 0 with
 * a temporary database; each test checks the status, the JSON answer, the
 * counters and what the database holds afterwards.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "buf.h"
#include "receiver.h"
#include "store.h"

typedef struct Fx {
	char dir[64];
	char db[96];
	Receiver *r;
	unsigned port;
} Fx;

static int start(Fx *fx, size_t max_body, unsigned timeout_s, const char *token,
                 unsigned max_conn)
{
	snprintf(fx->dir, sizeof fx->dir, "/tmp/tt-rx-XXXXXX");
	if (mkdtemp(fx->dir) == NULL)
		return -1;
	snprintf(fx->db, sizeof fx->db, "%s/t.db", fx->dir);
	ReceiverOptions o = {
		.db_path = fx->db,
		.listen = "127.0.0.1:0",
		.max_body = max_body,
		.timeout_s = timeout_s,
		.token = token,
		.max_connections = max_conn,
	};
	Err err = {0};
	if (receiver_start(&o, &fx->r, &err)) {
		fprintf(stderr, "receiver_start: %s\n", err.msg);
		return -1;
	}
	fx->port = receiver_port(fx->r);
	return 0;
}

static int setup(void **state)
{
	Fx *fx = calloc(1, sizeof *fx);
	if (fx == NULL || start(fx, 4096, 1, NULL, 8))
		return -1;
	*state = fx;
	return 0;
}

static int setup_token(void **state)
{
	Fx *fx = calloc(1, sizeof *fx);
	if (fx == NULL || start(fx, 0, 0, "t0ken", 0))
		return -1;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	Fx *fx = *state;
	receiver_stop(fx->r);
	char p[128];
	snprintf(p, sizeof p, "%s/t.db", fx->dir);
	unlink(p);
	snprintf(p, sizeof p, "%s/t.db-wal", fx->dir);
	unlink(p);
	snprintf(p, sizeof p, "%s/t.db-shm", fx->dir);
	unlink(p);
	rmdir(fx->dir);
	free(fx);
	return 0;
}

static int dial(unsigned port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Reads until the peer closes or timeout_ms passes; returns bytes read. */
static size_t read_all(int fd, Buf *out, int timeout_ms)
{
	char tmp[4096];
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, timeout_ms) <= 0)
			break;
		ssize_t n = read(fd, tmp, sizeof tmp);
		if (n <= 0)
			break;
		buf_add(out, tmp, (size_t)n);
	}
	return out->len;
}

typedef struct Resp {
	int status;
	Buf raw;
	const char *body;
} Resp;

/* Sends one request (Connection: close) and parses the answer. */
static void request(unsigned port, const char *method, const char *path, const char *headers,
                    const void *body, size_t len, Resp *r)
{
	memset(r, 0, sizeof *r);
	buf_init(&r->raw);
	int fd = dial(port);
	assert_true(fd >= 0);
	Buf req;
	buf_init(&req);
	buf_printf(&req, "%s %s HTTP/1.1\r\nHost: t\r\nConnection: close\r\n%sContent-Length: %zu\r\n\r\n",
	           method, path, headers ? headers : "", len);
	buf_add(&req, body, len);
	size_t off = 0;
	while (off < req.len) {
		ssize_t n = write(fd, req.p + off, req.len - off);
		if (n <= 0)
			break;  /* the server may answer (413) and close before reading it all */
		off += (size_t)n;
	}
	buf_fini(&req);
	read_all(fd, &r->raw, 5000);
	close(fd);
	const char *s = buf_str(&r->raw);
	assert_int_equal(sscanf(s, "HTTP/1.%*d %d", &r->status), 1);
	const char *b = strstr(s, "\r\n\r\n");
	r->body = b ? b + 4 : "";
}

static const char *const JSONH = "Content-Type: application/json\r\n";

static char *doc(int trace, int n)
{
	Buf b;
	buf_init(&b);
	buf_adds(&b, "{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\","
	             "\"value\":{\"stringValue\":\"api\"}}]},\"scopeSpans\":[{\"spans\":[");
	for (int i = 0; i < n; i++)
		buf_printf(&b, "%s{\"traceId\":\"%032x\",\"spanId\":\"%016x\",\"name\":\"op\",\"kind\":2,"
		               "\"startTimeUnixNano\":\"1700000000000000000\","
		               "\"endTimeUnixNano\":\"1700000000001000000\"}",
		           i ? "," : "", trace, i + 1);
	buf_adds(&b, "]}]}]}");
	return b.p;
}

static int64_t spans_in(const Fx *fx)
{
	Store *st = NULL;
	Err err = {0};
	assert_int_equal(store_open(fx->db, STORE_READONLY, &st, &err), 0);
	StoreStats s;
	assert_int_equal(store_stats(st, &s, &err), 0);
	store_close(st);
	return s.spans;
}

static void test_stores_and_answers_after_commit(void **state)
{
	Fx *fx = *state;
	char *d = doc(1, 3);
	Resp r;
	request(fx->port, "POST", "/v1/traces", JSONH, d, strlen(d), &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "{}");
	assert_non_null(strstr(buf_str(&r.raw), "application/json"));
	/* The 200 came after the commit: another connection sees the rows. */
	assert_int_equal(spans_in(fx), 3);
	buf_fini(&r.raw);

	/* The same body again: 200, a warning, nothing added. */
	request(fx->port, "POST", "/v1/traces", JSONH, d, strlen(d), &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body, "\"partialSuccess\":{\"rejectedSpans\":0,\"errorMessage\":"
	                                "\"3 of 3 spans were already stored"));
	assert_int_equal(spans_in(fx), 3);
	buf_fini(&r.raw);
	free(d);

	ReceiverStats k;
	receiver_stats(fx->r, &k);
	assert_int_equal(k.received, 2);
	assert_int_equal(k.accepted, 2);
	assert_int_equal(k.rejected, 0);
	assert_int_equal(k.spans_stored, 3);
	assert_int_equal(k.stored, 3);
	assert_int_equal(k.duplicates, 3);
	assert_true(k.last_ms > 0);
}

static void expect(Fx *fx, const char *method, const char *path, const char *headers,
                   const void *body, size_t len, int status, const char *needle)
{
	int64_t before = spans_in(fx);
	Resp r;
	request(fx->port, method, path, headers, body, len, &r);
	if (r.status != status || strstr(r.body, needle) == NULL)
		fail_msg("%s %s: got %d %s, want %d with '%s'", method, path, r.status, r.body, status,
		         needle);
	assert_int_equal(spans_in(fx), before);
	buf_fini(&r.raw);
}

static void test_refusals(void **state)
{
	Fx *fx = *state;
	char *d = doc(2, 2);
	size_t n = strlen(d);
	expect(fx, "POST", "/v1/traces", JSONH, d, n - 5, 400, "\"code\":3,\"message\":\"/v1/traces:1:");
	/* JSON sent as protobuf: '{' is the tag of field 15 with wire type 3 */
	expect(fx, "POST", "/v1/traces", "Content-Type: application/x-protobuf\r\n", d, n, 400,
	       "/v1/traces: byte 0: field 15: groups");
	expect(fx, "POST", "/v1/traces", NULL, d, n, 415,
	       "Content-Type must be application/json or application/x-protobuf");
	expect(fx, "POST", "/v1/traces", "Content-Type: text/plain\r\n", d, n, 415,
	       "not 'text/plain'");
	/* Parameters and case in the media type are fine. */
	expect(fx, "POST", "/v1/logs", "Content-Type: Application/JSON; charset=utf-8\r\n", d, n, 404,
	       "\"code\":5");
	expect(fx, "GET", "/v1/traces", NULL, "", 0, 405, "use POST");
	expect(fx, "PUT", "/v1/metrics", JSONH, d, n, 405, "use POST");
	char *big = doc(3, 60);  /* > 4096 bytes */
	expect(fx, "POST", "/v1/traces", JSONH, big, strlen(big), 413, "above the limit of 4096");
	free(big);
	free(d);
	ReceiverStats k;
	receiver_stats(fx->r, &k);
	assert_int_equal(k.received, 8);
	assert_int_equal(k.rejected, 8);
	assert_int_equal(k.stored, 0);
}

/* gzip (RFC 1952) of data with zlib. */
static void gz(const void *data, size_t len, Buf *out)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	assert_int_equal(deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
	unsigned char tmp[1 << 14];
	z.next_in = (Bytef *)data;
	z.avail_in = (uInt)len;
	int rc;
	do {
		z.next_out = tmp;
		z.avail_out = sizeof tmp;
		rc = deflate(&z, Z_FINISH);
		buf_add(out, tmp, sizeof tmp - z.avail_out);
	} while (rc == Z_OK);
	assert_int_equal(rc, Z_STREAM_END);
	deflateEnd(&z);
}

static void test_gzip(void **state)
{
	Fx *fx = *state;
	const char *gzh = "Content-Type: application/json\r\nContent-Encoding: gzip\r\n";
	char *d = doc(4, 2);
	Buf g;
	buf_init(&g);
	gz(d, strlen(d), &g);
	/* Two gzip members in a row are one body (RFC 1952 allows it). */
	char *d2 = doc(5, 1);
	Buf g2;
	buf_init(&g2);
	size_t cut = strlen(d2) / 2;
	gz(d2, cut, &g2);
	gz(d2 + cut, strlen(d2) - cut, &g2);
	Resp r;
	request(fx->port, "POST", "/v1/traces", gzh, g.p, g.len, &r);
	assert_int_equal(r.status, 200);
	buf_fini(&r.raw);
	request(fx->port, "POST", "/v1/traces", gzh, g2.p, g2.len, &r);
	assert_int_equal(r.status, 200);
	buf_fini(&r.raw);
	assert_int_equal(spans_in(fx), 3);
	/* Cut stream, garbage, and a bomb: 1 MiB of spaces compresses to ~1 KB
	 * but inflates past the 4096-byte cap. */
	expect(fx, "POST", "/v1/traces", gzh, g.p, g.len - 10, 400, "gzip");
	expect(fx, "POST", "/v1/traces", gzh, "not gzip at all", 15, 400, "gzip");
	char *spaces = malloc(1 << 20);
	memset(spaces, ' ', 1 << 20);
	Buf bomb;
	buf_init(&bomb);
	gz(spaces, 1 << 20, &bomb);
	assert_true(bomb.len < 4096);
	expect(fx, "POST", "/v1/traces", gzh, bomb.p, bomb.len, 413, "inflates to more than");
	free(spaces);
	buf_fini(&bomb);
	buf_fini(&g);
	buf_fini(&g2);
	free(d);
	free(d2);
}

/* ---- protobuf bodies, encoded by hand (field numbers of the OTLP spec) -- */

static void pb_varint(Buf *b, uint64_t v)
{
	while (v >= 0x80) {
		buf_addc(b, (char)(v | 0x80));
		v >>= 7;
	}
	buf_addc(b, (char)v);
}

static void pb_bytes(Buf *b, unsigned field, const void *p, size_t n)
{
	pb_varint(b, (uint64_t)field << 3 | 2);
	pb_varint(b, n);
	buf_add(b, p, n);
}

static void pb_fixed64(Buf *b, unsigned field, uint64_t v)
{
	pb_varint(b, (uint64_t)field << 3 | 1);
	for (int i = 0; i < 8; i++)
		buf_addc(b, (char)(v >> (8 * i)));
}

static size_t pb_sid_len = 8;   /* a test may make span ids wrong */

/* The ExportTraceServiceRequest of doc(trace, n). */
static void pbdoc(int trace, int n, Buf *out)
{
	Buf kv, av, res, spans, span, ss, rs;
	buf_init(&kv), buf_init(&av), buf_init(&res), buf_init(&spans), buf_init(&span);
	buf_init(&ss), buf_init(&rs);
	pb_bytes(&av, 1, "api", 3);                    /* AnyValue.string_value */
	pb_bytes(&kv, 1, "service.name", 12);          /* KeyValue.key */
	pb_bytes(&kv, 2, av.p, av.len);                /* KeyValue.value */
	pb_bytes(&res, 1, kv.p, kv.len);               /* Resource.attributes */
	for (int i = 0; i < n; i++) {
		unsigned char tid[16] = {0}, sid[8] = {0};
		for (int k = 0; k < 4; k++)
			tid[12 + k] = (unsigned char)((unsigned)trace >> (24 - 8 * k));
		for (int k = 0; k < 4; k++)
			sid[4 + k] = (unsigned char)((unsigned)(i + 1) >> (24 - 8 * k));
		buf_reset(&span);
		pb_bytes(&span, 1, tid, 16);
		pb_bytes(&span, 2, sid + 8 - pb_sid_len, pb_sid_len);
		pb_bytes(&span, 5, "op", 2);
		pb_varint(&span, 6 << 3 | 0);                /* kind */
		pb_varint(&span, 2);
		pb_fixed64(&span, 7, 1700000000000000000ull);
		pb_fixed64(&span, 8, 1700000000001000000ull);
		pb_bytes(&spans, 2, span.p, span.len);     /* ScopeSpans.spans */
	}
	buf_add(&ss, spans.p, spans.len);              /* ScopeSpans: no scope, the spans */
	pb_bytes(&rs, 1, res.p, res.len);              /* ResourceSpans.resource */
	pb_bytes(&rs, 2, ss.p, ss.len);                /* ResourceSpans.scope_spans */
	pb_bytes(out, 1, rs.p, rs.len);                /* request.resource_spans */
	buf_fini(&kv), buf_fini(&av), buf_fini(&res), buf_fini(&spans), buf_fini(&span);
	buf_fini(&ss), buf_fini(&rs);
}

static const char *const PBH = "Content-Type: application/x-protobuf\r\n";

static void test_protobuf(void **state)
{
	Fx *fx = *state;
	Buf pb;
	buf_init(&pb);
	pbdoc(7, 3, &pb);
	Resp r;
	request(fx->port, "POST", "/v1/traces", PBH, pb.p, pb.len, &r);
	assert_int_equal(r.status, 200);
	/* an empty ExportTraceServiceResponse is zero bytes */
	assert_string_equal(r.body, "");
	assert_non_null(strstr(buf_str(&r.raw), "application/x-protobuf"));
	assert_int_equal(spans_in(fx), 3);
	buf_fini(&r.raw);

	/* The same spans as JSON are the same rows: all already stored. */
	char *d = doc(7, 3);
	request(fx->port, "POST", "/v1/traces", JSONH, d, strlen(d), &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body, "3 of 3 spans were already stored"));
	buf_fini(&r.raw);
	free(d);
	/* ... and a retried protobuf body gets partial_success with a warning */
	request(fx->port, "POST", "/v1/traces", PBH, pb.p, pb.len, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal((unsigned char)r.body[0], 0x0a);  /* field 1: partial_success */
	assert_non_null(strstr(r.body, "3 of 3 spans were already stored"));
	buf_fini(&r.raw);
	assert_int_equal(spans_in(fx), 3);

	/* gzip */
	Buf other, g;
	buf_init(&other);
	buf_init(&g);
	pbdoc(8, 2, &other);
	gz(other.p, other.len, &g);
	request(fx->port, "POST", "/v1/traces",
	        "Content-Type: application/x-protobuf\r\nContent-Encoding: gzip\r\n", g.p, g.len, &r);
	assert_int_equal(r.status, 200);
	buf_fini(&r.raw);
	assert_int_equal(spans_in(fx), 5);

	/* An empty message is a valid request with nothing in it. */
	request(fx->port, "POST", "/v1/traces", PBH, "", 0, &r);
	assert_int_equal(r.status, 200);
	buf_fini(&r.raw);

	/* Truncated, corrupt, wrong id length: 400 naming the byte, nothing
	 * stored, the error as a google.rpc.Status (code 3). */
	Buf bad;
	buf_init(&bad);
	pbdoc(9, 2, &bad);
	expect(fx, "POST", "/v1/traces", PBH, bad.p, bad.len - 7, 400,
	       "/v1/traces: byte 0: field 1: length");
	request(fx->port, "POST", "/v1/traces", PBH, bad.p, bad.len - 7, &r);
	assert_int_equal((unsigned char)r.body[0], 0x08);  /* field 1: code */
	assert_int_equal((unsigned char)r.body[1], 3);     /* INVALID_ARGUMENT */
	buf_fini(&r.raw);
	bad.p[bad.len - 9] = 0x0b;                         /* end time's tag -> field 1, wire type 3 */
	char needle[64];
	snprintf(needle, sizeof needle, "byte %zu: field 1: groups", bad.len - 9);
	expect(fx, "POST", "/v1/traces", PBH, bad.p, bad.len, 400, needle);
	buf_reset(&bad);
	pb_sid_len = 4;
	pbdoc(9, 1, &bad);
	pb_sid_len = 8;
	/* the span is last: its span_id tag is 30 bytes before the end */
	snprintf(needle, sizeof needle, "byte %zu: Span.span_id must be 8 bytes, not 4", bad.len - 30);
	expect(fx, "POST", "/v1/traces", PBH, bad.p, bad.len, 400, needle);
	/* a check of the JSON importer (end before start) names the field's byte */
	buf_reset(&bad);
	pbdoc(9, 1, &bad);
	bad.p[bad.len - 1] = 0x10;                         /* end time's top byte: before start */
	snprintf(needle, sizeof needle, "byte %zu: \"endTimeUnixNano\" is before", bad.len - 9);
	expect(fx, "POST", "/v1/traces", PBH, bad.p, bad.len, 400, needle);
	/* Too large: refused from Content-Length before the body is read. */
	Buf big;
	buf_init(&big);
	pbdoc(10, 80, &big);
	assert_true(big.len > 4096);
	expect(fx, "POST", "/v1/traces", PBH, big.p, big.len, 413, "above the limit of 4096");
	assert_int_equal(spans_in(fx), 5);
	buf_fini(&big);
	buf_fini(&bad);
	buf_fini(&g);
	buf_fini(&other);
	buf_fini(&pb);
}

static void test_token(void **state)
{
	Fx *fx = *state;
	char *d = doc(6, 1);
	size_t n = strlen(d);
	expect(fx, "POST", "/v1/traces", JSONH, d, n, 401, "\"code\":16");
	expect(fx, "POST", "/v1/traces", "Content-Type: application/json\r\nAuthorization: Bearer t0ke\r\n",
	       d, n, 401, "bearer token");
	expect(fx, "POST", "/v1/traces",
	       "Content-Type: application/json\r\nAuthorization: Bearer t0ken2\r\n", d, n, 401,
	       "bearer token");
	Resp r;
	request(fx->port, "POST", "/v1/traces",
	        "Content-Type: application/json\r\nAuthorization: bearer t0ken\r\n", d, n, &r);
	assert_int_equal(r.status, 200);
	buf_fini(&r.raw);
	assert_int_equal(spans_in(fx), 1);
	free(d);
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void test_slow_client_and_connection_limit(void **state)
{
	Fx *fx = *state;
	/* A client that sends headers and half a body, then stalls. */
	int slow = dial(fx->port);
	assert_true(slow >= 0);
	const char *head = "POST /v1/traces HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
	                   "Content-Length: 400\r\n\r\n{\"resourceSpans\":[";
	assert_int_equal(write(slow, head, strlen(head)), (ssize_t)strlen(head));
	double t0 = now_s();
	/* Meanwhile another client is served. */
	char *d = doc(7, 1);
	Resp r;
	request(fx->port, "POST", "/v1/traces", JSONH, d, strlen(d), &r);
	assert_int_equal(r.status, 200);
	buf_fini(&r.raw);
	free(d);
	/* The stalled one is dropped after the 1 s idle timeout, unanswered. */
	Buf got;
	buf_init(&got);
	read_all(slow, &got, 6000);
	double waited = now_s() - t0;
	close(slow);
	assert_int_equal(got.len, 0);
	assert_true(waited >= 0.5 && waited < 5.0);
	buf_fini(&got);
	assert_int_equal(spans_in(fx), 1);
	ReceiverStats k;
	receiver_stats(fx->r, &k);
	assert_int_equal(k.rejected, 1);

	/* Connection limit 8: with eight idle connections open, a ninth is
	 * not served until one of them goes away. */
	int fds[8];
	for (int i = 0; i < 8; i++) {
		fds[i] = dial(fx->port);
		assert_true(fds[i] >= 0);
	}
	usleep(200 * 1000);
	int extra = dial(fx->port);  /* the kernel completes the handshake */
	assert_true(extra >= 0);
	const char *get = "GET /v1/traces HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
	assert_int_equal(write(extra, get, strlen(get)), (ssize_t)strlen(get));
	Buf b;
	buf_init(&b);
	read_all(extra, &b, 400);
	assert_int_equal(b.len, 0);  /* waiting: no slot */
	for (int i = 0; i < 8; i++)
		close(fds[i]);
	read_all(extra, &b, 3000);
	assert_non_null(strstr(buf_str(&b), " 405 "));  /* served once slots freed */
	close(extra);
	buf_fini(&b);
}

static void test_parse_listen(void **state)
{
	(void)state;
	char host[64];
	unsigned port;
	Err err = {0};
	assert_int_equal(receiver_parse_listen(NULL, host, sizeof host, &port, &err), 0);
	assert_string_equal(host, "127.0.0.1");
	assert_int_equal(port, 4318);
	assert_int_equal(receiver_parse_listen("0.0.0.0:9", host, sizeof host, &port, &err), 0);
	assert_string_equal(host, "0.0.0.0");
	assert_int_equal(port, 9);
	assert_int_equal(receiver_parse_listen("[::1]:4318", host, sizeof host, &port, &err), 0);
	assert_string_equal(host, "::1");
	assert_int_equal(receiver_parse_listen("5000", host, sizeof host, &port, &err), 0);
	assert_string_equal(host, "127.0.0.1");
	assert_int_equal(port, 5000);
	assert_int_equal(receiver_parse_listen("host:70000", host, sizeof host, &port, &err), TT_EINVAL);
	assert_non_null(strstr(err.msg, "bad port"));
	assert_int_equal(receiver_parse_listen("::1:80", host, sizeof host, &port, &err), TT_EINVAL);
	assert_int_equal(receiver_parse_listen("h:", host, sizeof host, &port, &err), TT_EINVAL);
	assert_int_equal(receiver_parse_listen("h:-1", host, sizeof host, &port, &err), TT_EINVAL);
}

static void test_port_in_use(void **state)
{
	Fx *fx = *state;
	char listen[32];
	snprintf(listen, sizeof listen, "127.0.0.1:%u", fx->port);
	char db[128];
	snprintf(db, sizeof db, "%s/other.db", fx->dir);
	ReceiverOptions o = {.db_path = db, .listen = listen};
	Receiver *r2 = NULL;
	Err err = {0};
	assert_int_equal(receiver_start(&o, &r2, &err), TT_EIO);
	assert_null(r2);
	assert_non_null(strstr(err.msg, "cannot listen"));
	unlink(db);
	char side[160];
	snprintf(side, sizeof side, "%s-wal", db);
	unlink(side);
	snprintf(side, sizeof side, "%s-shm", db);
	unlink(side);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_stores_and_answers_after_commit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gzip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_protobuf, setup, teardown),
		cmocka_unit_test_setup_teardown(test_token, setup_token, teardown),
		cmocka_unit_test_setup_teardown(test_slow_client_and_connection_limit, setup, teardown),
		cmocka_unit_test(test_parse_listen),
		cmocka_unit_test_setup_teardown(test_port_in_use, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
