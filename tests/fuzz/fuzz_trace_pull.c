/*
 * fuzz_trace_pull.c - libFuzzer harness for the reader of Jaeger's and
 * Tempo's HTTP answers (importers/trace_pull.c): the services, search and
 * trace answers are the fuzzer's bytes, served over real HTTP on
 * 127.0.0.1 by a libmicrohttpd daemon in this process, and trace_pull()
 * reads them as `tailtriage pull --jaeger` or `--tempo` would.
 *
 * An input is: one byte of switches, one byte for the trace answers'
 * status, then the body of every services and search answer, then (after
 * a NUL byte, when there is one) the body of every trace answer.
 *   switches bit 0: Tempo (else Jaeger); bit 1: no Jaeger v3 routes (404:
 *   Jaeger v1); bit 2: no /api/v3/trace-summaries (plain 404); bit 3: no
 *   Tempo /api/v2/traces (404 "page not found": /api/traces).
 * The window is 2026-01-01T00:00:00Z plus 10 s, the baseline the 10 s
 * before it (tests/fixtures/trace_pull holds seeds in that range).
 *
 * Besides the sanitizers' checks it asserts the contract of a pull: it
 * returns 0 or TT_EIO, a failure says why, and no byte of the message is
 * a control character (the server's strings reach a terminal).
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store.h"
#include "trace_pull.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define T0 INT64_C(1767225600000000000)

static Store *st;
static char path[4096];
static struct MHD_Daemon *daemon_;
static char base[64];

/* The current input, read by the daemon's thread while trace_pull() runs
 * on this one (set before, not changed during). */
static unsigned switches, trace_status;
static const char *list_body, *trace_body;
static size_t list_len, trace_len;
/* Searches answered with the input so far; past LIST_MAX they find
 * nothing, so that an answer that always fills a page (every slice split
 * again) costs a bounded number of requests. */
#define LIST_MAX 48
static atomic_int lists;

static void remove_db(void)
{
	if (daemon_)
		MHD_stop_daemon(daemon_);
	daemon_ = NULL;
	store_close(st);
	st = NULL;
	static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
	char p[sizeof path + 16];
	for (size_t i = 0; i < sizeof suffix / sizeof suffix[0]; i++) {
		snprintf(p, sizeof p, "%s%s", path, suffix[i]);
		unlink(p);
	}
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *body,
                             size_t len)
{
	struct MHD_Response *r =
	    MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	MHD_add_response_header(r, "Content-Type", "application/json");
	enum MHD_Result ok = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ok;
}

static int starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version,
                                  const char *upload, size_t *upload_size, void **state)
{
	(void)cls, (void)method, (void)version, (void)upload, (void)upload_size, (void)state;
	static const char not_found[] = "404 page not found";
	if (switches & 2 && starts(url, "/api/v3/"))
		return reply(c, 404, not_found, sizeof not_found - 1);
	if (switches & 4 && starts(url, "/api/v3/trace-summaries"))
		return reply(c, 404, not_found, sizeof not_found - 1);
	if (switches & 8 && starts(url, "/api/v2/traces/"))
		return reply(c, 404, not_found, sizeof not_found - 1);
	/* a trace's own route: /api/v3/traces/ID, /api/traces/ID, /api/v2/traces/ID */
	const char *t = strstr(url, "/traces/");
	if (t && t[8])
		return reply(c, trace_status, trace_body, trace_len);
	if (atomic_fetch_add(&lists, 1) >= LIST_MAX) {
		static const char none_jaeger[] = "{\"error\":{\"httpCode\":404,\"message\":\"No traces found\"}}";
		static const char none_tempo[] = "{\"traces\":[]}";
		if (switches & 1)
			return reply(c, 200, none_tempo, sizeof none_tempo - 1);
		if (switches & 2 && strstr(url, "/api/traces"))
			return reply(c, 200, "{\"data\":[]}", 11);
		return reply(c, 404, none_jaeger, sizeof none_jaeger - 1);
	}
	return reply(c, 200, list_body, list_len);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	const char *tmp = getenv("TMPDIR");
	snprintf(path, sizeof path, "%s/tt-fuzz-pull-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	int fd = mkstemp(path);
	if (fd >= 0)
		close(fd);
	unlink(path);
	atexit(remove_db);
	Err err = {0};
	if (store_open(path, 0, &st, &err)) {
		fprintf(stderr, "fuzz: %s\n", err.msg);
		abort();
	}
	struct sockaddr_in sa;
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	daemon_ = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO, 0, NULL, NULL,
	                           on_request, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
	                           MHD_OPTION_END);
	const union MHD_DaemonInfo *di =
	    daemon_ ? MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_BIND_PORT) : NULL;
	if (di == NULL) {
		fprintf(stderr, "fuzz: cannot listen on 127.0.0.1\n");
		abort();
	}
	snprintf(base, sizeof base, "http://127.0.0.1:%u/", (unsigned)di->port);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	static const unsigned statuses[] = {200, 200, 200, 200, 404, 500, 401, 204};
	switches = data[0];
	trace_status = statuses[data[1] % 8];
	list_body = (const char *)data + 2;
	list_len = size - 2;
	const char *nul = memchr(list_body, '\0', list_len);
	trace_body = list_body;
	trace_len = list_len;
	if (nul) {
		trace_body = nul + 1;
		trace_len = list_len - (size_t)(trace_body - list_body);
		list_len = (size_t)(nul - list_body);
	}
	TracePullOptions o = {
		.backend = switches & 1 ? TRACE_PULL_TEMPO : TRACE_PULL_JAEGER,
		.url = base,
		.service = "shop",
		.operation = switches & 16 ? "GET /cart" : NULL,
		.window = {T0, T0 + 10000000000},
		.has_baseline = 1,
		.baseline = {T0 - 10000000000, T0},
		.slowest = 2,
		.sample = 3,
		.page = 4,
		.http = {.timeout_ms = 20000, .retries = -1, .parallel = 2},
	};
	TracePullResult res;
	Err err = {0};
	atomic_store(&lists, 0);
	int rc = trace_pull(st, &o, &res, &err);
	if (rc != 0 && rc != TT_EIO) {
		fprintf(stderr, "trace_pull returned %d: %s\n", rc, err.msg);
		abort();
	}
	if (rc != 0 && err.msg[0] == '\0') {
		fprintf(stderr, "trace_pull failed without a message\n");
		abort();
	}
	for (const char *p = err.msg; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			fprintf(stderr, "a control character (0x%02x) in the message: %s\n",
			        (unsigned char)*p, err.msg);
			abort();
		}
	return 0;
}
