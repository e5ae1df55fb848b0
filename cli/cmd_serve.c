/*
 * cmd_serve.c - `tailtriage serve`: the OTLP/HTTP and OTLP/gRPC receivers
 * as a process.
 *
 * Runs until SIGINT or SIGTERM. One line per request on stderr (peer,
 * method, path, status, what was stored, time), a ready line once bound
 * (tests read the port from it when --listen asks for port 0) and the
 * counters on exit.
 */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "endpoints.h"
#include "grpc_receiver.h"
#include "receiver.h"
#include "sanitize.h"

static void usage(FILE *out)
{
	fputs("usage: tailtriage serve [--db FILE] [--listen HOST:PORT] [options]\n\n"
	      "Receives OpenTelemetry exports (OTLP) and stores them:\n"
	      "  OTLP/HTTP on --listen (default 127.0.0.1:4318):\n"
	      "    POST /v1/traces   (ExportTraceServiceRequest)\n"
	      "    POST /v1/metrics  (ExportMetricsServiceRequest)\n"
	      "    Content-Type application/json or application/x-protobuf,\n"
	      "    Content-Encoding gzip accepted; the answer is in the request's encoding.\n"
	      "  OTLP/gRPC on --grpc-listen (default 127.0.0.1:4317):\n"
	      "    TraceService/Export and MetricsService/Export, gzip accepted.\n"
	      "Each request is one transaction; success (200, OK) is answered only once\n"
	      "it is committed. Stop with Ctrl-C.\n\n"
	      "options:\n"
	      "  --db FILE             database (default $TAILTRIAGE_DB or ./tailtriage.db)\n"
	      "  --listen HOST:PORT    OTLP/HTTP address (default 127.0.0.1:4318; port 0 = any)\n"
	      "  --grpc-listen HOST:PORT\n"
	      "                        OTLP/gRPC address (default 127.0.0.1:4317; port 0 = any;\n"
	      "                        'none': no gRPC listener)\n"
	      "  --max-body SIZE       largest body or message, before and after gzip\n"
	      "                        (default 16M; suffixes K, M)\n"
	      "  --max-connections N   concurrent connections (default 64)\n"
	      "  --timeout SECONDS     idle time after which a connection is dropped (default 10)\n"
	      "  --token TOKEN         require 'Authorization: Bearer TOKEN'\n"
	      "                        (or set $TAILTRIAGE_TOKEN)\n"
	      "  --class-key KEY       attribute holding the workload class\n"
	      "  --endpoint SERVICE ROUTE\n"
	      "                        every minute and on stop, one line on that endpoint's\n"
	      "                        requests of the last minute: count, rate, p50 and p99\n"
	      "                        with its 95 % interval, errors ('tailtriage endpoints')\n"
	      "  -q, --quiet           no line per request; counters on exit only\n",
	      out);
}

/* Parses "123", "64K", "16M". Returns 0 on success. */
static int parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (end == s)
		return -1;
	if (*end == 'K' || *end == 'k') {
		v <<= 10;
		end++;
	} else if (*end == 'M' || *end == 'm') {
		v <<= 20;
		end++;
	}
	if (*end != '\0' || v == 0 || v > ((unsigned long long)1 << 30))
		return -1;
	*out = (size_t)v;
	return 0;
}

#define SERVE_ENDPOINT_EVERY_S 60

/* "tailtriage: endpoint shop GET /cart: 120 requests in the last 60 s
 * (2.0/s), p50 12.1 ms, p99 80.2 ms [70.1, inf], 0.0 % errors" on stderr. */
static void endpoint_line(const char *db, const CliEndpoint *ep)
{
	Store *st = NULL;
	Err err = {0};
	char name[1100], clean[1100];
	snprintf(name, sizeof name, "%s %s", ep->service, ep->route);
	san_clean(name, clean, sizeof clean);
	if (store_open(db, STORE_READONLY, &st, &err)) {
		fprintf(stderr, "tailtriage: endpoint %s: %s\n", clean, err.msg);
		return;
	}
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	int64_t to = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
	Period per = {.win = {to - (int64_t)SERVE_ENDPOINT_EVERY_S * 1000000000, to}};
	EndpointList *l = NULL;
	if (analysis_endpoints(st, &per, NULL, &l, &err)) {
		fprintf(stderr, "tailtriage: endpoint %s: %s\n", clean, err.msg);
		store_close(st);
		return;
	}
	int i = analysis_endpoints_find(l, ep->service, ep->route);
	if (i < 0) {
		fprintf(stderr, "tailtriage: endpoint %s: no request in the last %d s\n", clean,
		        SERVE_ENDPOINT_EVERY_S);
	} else {
		const EndpointPop *p = &l->v[i].pop[POP_WINDOW];
		fprintf(stderr, "tailtriage: endpoint %s: %lld requests in the last %d s (%.1f/s), "
		        "p50 %.1f ms, p99 %.1f ms [%.1f, %.1f], %.1f %% errors\n", clean,
		        (long long)p->requests, SERVE_ENDPOINT_EVERY_S, p->rate_rps, p->q.p50, p->q.p99,
		        p->q.p99_lo, p->q.p99_hi, 100.0 * (double)p->errors / (double)p->requests);
	}
	analysis_endpoints_free(l);
	store_close(st);
}

static void log_request(void *ctx, const ReceiverEvent *ev)
{
	(void)ctx;
	if (ev->grpc_status && strcmp(ev->grpc_status, "OK") == 0)
		fprintf(stderr, "%s gRPC %s OK %zu B: %lld spans, %lld points stored, %lld already stored"
		                " (%.1f ms)\n",
		        ev->peer, ev->path, ev->body_bytes, (long long)ev->spans_added,
		        (long long)ev->points_added, (long long)ev->duplicates, ev->ms);
	else if (ev->grpc_status)
		fprintf(stderr, "%s gRPC %s %s: %s (%.1f ms)\n", ev->peer, ev->path, ev->grpc_status,
		        ev->message, ev->ms);
	else if (ev->status == 200 && ev->unrecognised)
		fprintf(stderr, "%s %s %s 200 %zu B: warning: %s (%.1f ms)\n", ev->peer, ev->method,
		        ev->path, ev->body_bytes, ev->message, ev->ms);
	else if (ev->status == 200)
		fprintf(stderr, "%s %s %s 200 %zu B: %lld spans, %lld points stored, %lld already stored"
		                " (%.1f ms)\n",
		        ev->peer, ev->method, ev->path, ev->body_bytes, (long long)ev->spans_added,
		        (long long)ev->points_added, (long long)ev->duplicates, ev->ms);
	else if (ev->status == 0)
		fprintf(stderr, "%s %s %s dropped: %s (%.1f ms)\n", ev->peer, ev->method, ev->path,
		        ev->message, ev->ms);
	else
		fprintf(stderr, "%s %s %s %d: %s (%.1f ms)\n", ev->peer, ev->method, ev->path,
		        ev->status, ev->message, ev->ms);
}

int cmd_serve(int argc, char **argv)
{
	static const struct option opts[] = {
		{"db", required_argument, NULL, 'd'},
		{"listen", required_argument, NULL, 'l'},
		{"grpc-listen", required_argument, NULL, 'g'},
		{"max-body", required_argument, NULL, 'b'},
		{"max-connections", required_argument, NULL, 'c'},
		{"timeout", required_argument, NULL, 't'},
		{"token", required_argument, NULL, 'T'},
		{"class-key", required_argument, NULL, 'k'},
		{"quiet", no_argument, NULL, 'q'},
		{"endpoint", required_argument, NULL, 'E'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	ReceiverOptions ro = {0};
	ro.db_path = cli_default_db();
	ro.listen = RECEIVER_DEFAULT_LISTEN;
	ro.token = getenv("TAILTRIAGE_TOKEN");
	const char *grpc_listen = GRPC_RECEIVER_DEFAULT_LISTEN;
	int quiet = 0, c;
	CliEndpoint ep = {0};
	optind = 1;
	argc = cli_endpoint_argv(argc, argv);
	while ((c = cli_getopt("serve", argc, argv, "d:l:qh", opts)) != -1) {
		char *end;
		unsigned long v;
		switch (c) {
		case 'd': ro.db_path = optarg; break;
		case 'l': ro.listen = optarg; break;
		case 'g': grpc_listen = strcmp(optarg, "none") == 0 ? NULL : optarg; break;
		case 'b':
			if (parse_size(optarg, &ro.max_body))
				return cli_fail("serve: --max-body '%s': expected a size like 65536, 64K or 16M",
				                optarg), 2;
			break;
		case 'c':
			v = strtoul(optarg, &end, 10);
			if (*end || v == 0 || v > 10000)
				return cli_fail("serve: --max-connections '%s': expected 1..10000", optarg), 2;
			ro.max_connections = (unsigned)v;
			break;
		case 't':
			v = strtoul(optarg, &end, 10);
			if (*end || v == 0 || v > 3600)
				return cli_fail("serve: --timeout '%s': expected 1..3600 seconds", optarg), 2;
			ro.timeout_s = (unsigned)v;
			break;
		case 'T': ro.token = optarg; break;
		case 'k': ro.class_key = optarg; break;
		case 'q': quiet = 1; break;
		case 'E':
			if (cli_endpoint_parse(optarg, &ep))
				return 2;
			break;
		case 'h': usage(stdout); return 0;
		default: return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	if (!quiet)
		ro.log = log_request;
	{
		char h[256];
		unsigned port;
		Err perr = {0};
		if (receiver_parse_listen(ro.listen, h, sizeof h, &port, &perr))
			return cli_fail("serve: --listen: %s", perr.msg), 2;
	}
	cli_warn_open_listener(ro.listen, ro.token);

	/* Block the stop signals in every thread (the receiver's inherits the
	 * mask) and wait for them here. */
	sigset_t stop;
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	signal(SIGPIPE, SIG_IGN);

	Err err = {0};
	Receiver *r = NULL;
	if (receiver_start(&ro, &r, &err))
		return cli_fail("serve: %s", err.msg);
	GrpcReceiver *g = NULL;
	if (grpc_listen) {
		GrpcReceiverOptions go = {
			.db_path = ro.db_path,
			.listen = grpc_listen,
			.max_body = ro.max_body,
			.token = ro.token,
			.class_key = ro.class_key,
			.log = ro.log,
		};
		if (grpc_receiver_start(&go, &g, &err)) {
			receiver_stop(r);
			return cli_fail("serve: --grpc-listen: %s (use --grpc-listen none to serve HTTP only)",
			                err.msg);
		}
	}
	char host[256];
	unsigned port;
	receiver_parse_listen(ro.listen, host, sizeof host, &port, NULL);
	int v6 = strchr(host, ':') != NULL;
	const char *auth = ro.token && *ro.token ? " (bearer token required)" : "";
	if (g) {
		char ghost[256];
		receiver_parse_listen(grpc_listen, ghost, sizeof ghost, &port, NULL);
		int gv6 = strchr(ghost, ':') != NULL;
		fprintf(stderr, "tailtriage: serving OTLP/gRPC on %s%s%s:%u -> %s%s\n", gv6 ? "[" : "",
		        ghost, gv6 ? "]" : "", grpc_receiver_port(g), ro.db_path, auth);
	}
	fprintf(stderr, "tailtriage: serving OTLP/HTTP (JSON, protobuf) on http://%s%s%s:%u -> %s%s\n",
	        v6 ? "[" : "", host, v6 ? "]" : "", receiver_port(r), ro.db_path, auth);

	if (ep.set) {
		/* the endpoint's line every minute until a stop signal */
		struct timespec every = {SERVE_ENDPOINT_EVERY_S, 0};
		while (sigtimedwait(&stop, NULL, &every) < 0)
			endpoint_line(ro.db_path, &ep);
		endpoint_line(ro.db_path, &ep);
	} else {
		int sig = 0;
		sigwait(&stop, &sig);
		(void)sig;
	}
	ReceiverStats k;
	if (g) {
		grpc_receiver_stats(g, &k);
		grpc_receiver_stop(g);  /* finishes the call in progress first */
		fprintf(stderr,
		        "tailtriage: gRPC stopped: %lld calls received, %lld accepted, %lld rejected; "
		        "%lld spans and %lld metric points stored, %lld already stored\n",
		        (long long)k.received, (long long)k.accepted, (long long)k.rejected,
		        (long long)k.spans_stored, (long long)k.points_stored, (long long)k.duplicates);
	}
	receiver_stats(r, &k);
	receiver_stop(r);  /* finishes the request in progress first */
	fprintf(stderr,
	        "tailtriage: stopped: %lld requests received, %lld accepted (%lld with nothing this "
	        "endpoint reads), %lld rejected; %lld spans and %lld metric points stored, %lld "
	        "already stored\n",
	        (long long)k.received, (long long)k.accepted, (long long)k.unrecognised,
	        (long long)k.rejected, (long long)k.spans_stored, (long long)k.points_stored,
	        (long long)k.duplicates);
	return 0;
}
