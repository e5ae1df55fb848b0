/*
 * cmd_pull.c - `tailtriage pull`: instant queries against a Prometheus
 * HTTP API, stored as metric snapshots (importers/prom_pull.h), and the
 * traces of an endpoint from Jaeger or Tempo (importers/trace_pull.h):
 * the window's slowest N and a uniform sample of the window and the
 * baseline, once (--window) or following a moving window (--every with
 * --last).
 *
 * Which queries: with --model, the ones the model implies plus the
 * defaults (docs/live.md lists the PromQL); with --query only, just
 * those; with neither, the defaults plus those of a model inferred from
 * what the database already holds (when it exists; --model none: not).
 * --once runs one round and exits 1 if any query failed; otherwise a
 * round runs every --every until SIGINT or SIGTERM, a failed query being
 * reported and retried next round. With --jaeger or --tempo, --prometheus
 * evaluates the same queries across the pulled window and baseline, one
 * instant every --range, after each pull of the traces.
 *
 * The default --sample is the fewest requests whose p99 has a 95 %
 * distribution-free upper bound (quant_ci_ranks(): 368); a smaller one is
 * said to be too small to bound, or rank by, a p99.
 */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "cli.h"
#include "period.h"
#include "prom_pull.h"
#include "quantile.h"
#include "timefmt.h"
#include "trace_pull.h"

/* The fewest observations whose p99 has an upper bound at the level of
 * every interval (the order statistic u of quant_ci_ranks() exists). */
static int p99_bounded_n(void)
{
	for (int64_t n = 1; n < 100000; n++) {
		int64_t l, u;
		quant_ci_ranks(n, 99, &l, &u);
		if (u <= n)
			return (int)n;
	}
	return 100000;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: tailtriage pull --prometheus URL [--db FILE] [--model M] [--query Q]...\n"
	      "                       [--endpoint SERVICE ROUTE] [--every 15s | --once] [options]\n"
	      "       tailtriage pull --jaeger URL | --tempo URL --service S [--operation OP]\n"
	      "                       --window A..B [--baseline A..B|before] [--slowest N]\n"
	      "                       [--sample N] [--every 30s --last 5m] [options]\n\n"
	      "Runs instant queries (GET URL/api/v1/query) against Prometheus or any server\n"
	      "speaking its HTTP API (Thanos, Mimir, VictoriaMetrics) and stores the results\n"
	      "as metric snapshots with their query and evaluation time. Each query is one\n"
	      "transaction: a query that fails (HTTP error, \"status\":\"error\") stores nothing.\n\n"
	      "With --jaeger (Jaeger v2's HTTP API v3, or Jaeger v1's /api/traces) or --tempo\n"
	      "(Grafana Tempo's /api/search and /api/v2/traces), pulls the traces of one\n"
	      "entry (--service, --operation): the window's --slowest N, and a uniform\n"
	      "--sample of N traces from the window and from the baseline, listed in time\n"
	      "slices so that every minute counts in proportion. Each trace is stored in its\n"
	      "own transaction, a trace already stored is not fetched again, and the database\n"
	      "records which traces are the slowest and which the sample: percentiles come\n"
	      "from the sample only (docs/live.md). --prometheus with them also runs the\n"
	      "metric queries (--model, else the model inferred from the pulled traces)\n"
	      "across the window and the baseline, one evaluation every --range.\n\n"
	      "options:\n"
	      "  --db FILE          database (default $TAILTRIAGE_DB or ./tailtriage.db)\n"
	      "  --prometheus URL   base URL, e.g. http://127.0.0.1:9090\n"
	      "  --jaeger URL       a Jaeger query service, e.g. http://127.0.0.1:16686\n"
	      "  --tempo URL        a Tempo query frontend, e.g. http://127.0.0.1:3200\n"
	      "  --service S        the entry's service (required with --jaeger or --tempo)\n"
	      "  --operation OP     the entry span's name, e.g. 'GET /v2/home' (default: any)\n"
	      "  --window A..B      the incident window (RFC 3339 or epoch ms)\n"
	      "  --baseline R       A..B, or 'before': as long as the window, just before it\n"
	      "  --slowest N        the N slowest traces of the window and of the baseline\n"
	      "                     (default 20; 0: none)\n"
	      "  --sample N         N traces sampled from the window and N from the baseline\n"
	      "                     (default %d, the fewest whose p99 has a 95 %% upper\n"
	      "                     bound; 0: none)\n"
	      "  --last DURATION    with --every: the window is the last DURATION (default 5m)\n"
	      "  --parallel N       traces fetched at once (default 4)\n"
	      "  --retries N        further tries of a request answered 429 or 5xx, or not at\n"
	      "                     all, waiting longer each time (default 4)\n"
	      "  --page N           most traces one search asks for (default 500)\n"
	      "  --tenant T         the tenant of a multi-tenant back end: 'x-tenant: T' to\n"
	      "                     Jaeger (its default tenancy header), 'X-Scope-OrgID: T'\n"
	      "                     to Tempo and to --prometheus (Mimir, Cortex)\n"
	      "  --header 'N: V'    send this header too, to every server asked (repeatable;\n"
	      "                     a Jaeger whose tenancy header is not x-tenant: --header\n"
	      "                     'NAME: T')\n"
	      "  --model FILE       endpoint model: query its pools' metrics (and the defaults);\n"
	      "                     a file, or a bundled model by name (mercury-home); without\n"
	      "                     it (and without --query), the pools of a model inferred\n"
	      "                     from the database too; 'none': defaults only\n"
	      "  --endpoint SERVICE ROUTE  the endpoint whose model (inferred, without --model)\n"
	      "                     names the pools to query (default: the most common one)\n"
	      "  --query Q          ad-hoc PromQL, repeatable; NAME=PROMQL names the result\n"
	      "  --every DURATION   time between rounds (default 15s; units ms, s, m)\n"
	      "  --once             one round, then exit (1 if any query failed)\n"
	      "  --range DURATION   rate() window in generated queries (default 1m)\n"
	      "  --timeout DURATION per HTTP request (default 10s)\n"
	      "  --token TOKEN      send 'Authorization: Bearer TOKEN' (or $TAILTRIAGE_PROM_TOKEN;\n"
	      "                     for traces $TAILTRIAGE_PULL_TOKEN)\n"
	      "  -q, --quiet        print only errors\n",
	      p99_bounded_n());
}

/* "15s", "500ms", "2m", "15" (seconds) -> ms; -1 when malformed. */
static long parse_ms(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || v <= 0)
		return -1;
	double mul;
	if (strcmp(end, "") == 0 || strcmp(end, "s") == 0)
		mul = 1000;
	else if (strcmp(end, "ms") == 0)
		mul = 1;
	else if (strcmp(end, "m") == 0)
		mul = 60000;
	else if (strcmp(end, "h") == 0)
		mul = 3600000;
	else
		return -1;
	double ms = v * mul;
	return ms >= 1 && ms <= 86400000.0 ? (long)ms : -1;
}

/* A PromQL duration: digits followed by ms, s, m, h, d, w or y. */
static int valid_range(const char *s)
{
	const char *p = s;
	while (*p >= '0' && *p <= '9')
		p++;
	return p != s && (strcmp(p, "ms") == 0 || strcmp(p, "s") == 0 || strcmp(p, "m") == 0 ||
	                  strcmp(p, "h") == 0 || strcmp(p, "d") == 0 || strcmp(p, "w") == 0 ||
	                  strcmp(p, "y") == 0);
}

typedef struct Printer {
	int quiet;
	char last_err[sizeof(((Err *)0)->msg)];  /* this round's last error printed */
	int repeated;                             /* errors like it not printed again */
} Printer;

/* True when a and b differ at most in their numbers ("after 0 ms" and
 * "after 1 ms" are the same error). */
static int same_but_numbers(const char *a, const char *b)
{
	for (;;) {
		int da = *a >= '0' && *a <= '9', db = *b >= '0' && *b <= '9';
		if (da && db) {
			while (*a >= '0' && *a <= '9')
				a++;
			while (*b >= '0' && *b <= '9')
				b++;
			continue;
		}
		if (*a != *b)
			return 0;
		if (*a == '\0')
			return 1;
		a++;
		b++;
	}
}

static void print_outcome(void *ctx, const PromQueryOutcome *o)
{
	Printer *pr = ctx;
	if (!o->ok) {
		/* An unreachable server fails every query the same way: once a
		 * round is enough. */
		if (pr->last_err[0] && same_but_numbers(o->err.msg, pr->last_err)) {
			pr->repeated++;
			return;
		}
		snprintf(pr->last_err, sizeof pr->last_err, "%s", o->err.msg);
		fprintf(stderr, "tailtriage: pull: %s\n", o->err.msg);
		return;
	}
	if (o->warnings[0])
		fprintf(stderr, "tailtriage: pull: query %s: warning from the server: %s\n",
		        o->query->name, o->warnings);
	if (!pr->quiet)
		printf("%s: %s, %lld values: %lld stored, %lld already stored\n", o->query->name,
		       o->result_type, (long long)o->samples, (long long)o->added,
		       (long long)o->duplicate);
}

/* 1 when s holds a control character (CR, LF: a second header line) */
static int has_ctl(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 1;
	return 0;
}

/* ---- traces from Jaeger or Tempo ------------------------------------------ */

typedef struct TraceArgs {
	TracePullOptions o;
	const char *window, *baseline;
	long last_ms;
	const char *headers[40];
	int n_headers;
	char auth[600], tenant[300], prom_tenant[300];
	/* --prometheus beside the traces: the metric queries across the same
	 * ranges, one evaluation every range_ms */
	PromPullOptions *po;      /* NULL: no metrics */
	PromQuerySet *qs;         /* --query's; the model's are added once */
	const char *model_path, *range;
	const CliEndpoint *ep;
	long range_ms;
	int queries_ready;
} TraceArgs;

static volatile sig_atomic_t trace_stop;

static void on_stop(int sig)
{
	(void)sig;
	trace_stop = 1;
}

typedef struct TraceProgress {
	int tty, shown;
} TraceProgress;

static void trace_progress(void *ctx, const TracePullProgress *p)
{
	TraceProgress *tp = ctx;
	if (!tp->tty)
		return;
	fprintf(stderr, "\r\033[K%s: %lld queries; %lld traces chosen, %lld of %lld fetched",
	        p->phase, (long long)p->queries, (long long)p->chosen, (long long)p->fetched,
	        (long long)p->to_fetch);
	if (p->failed)
		fprintf(stderr, ", %lld failed", (long long)p->failed);
	fprintf(stderr, "; %lld spans stored", (long long)p->spans_added);
	if (p->retries)
		fprintf(stderr, " (%lld retries)", (long long)p->retries);
	fflush(stderr);
	tp->shown = 1;
}

static void print_listed(const char *what, int64_t n, int64_t listed)
{
	printf(", %s %lld", what, (long long)n);
	if (listed >= 0)
		printf(" of %lld", (long long)listed);
}

/* The metric queries of a pull of traces: the model's (--model, else the
 * one inferred from the database, which holds the pulled traces now) and
 * --query's, built once. 0, or 1 when the model cannot be had. */
static int metric_queries(Store *st, TraceArgs *a)
{
	if (a->queries_ready)
		return 0;
	Model *model = NULL;
	if (a->model_path) {
		if (cli_model(a->model_path, NULL, INT64_MIN, INT64_MAX, &model))
			return 1;
	} else if (a->qs->n == 0 &&
	           cli_model_infer(st, a->o.window.from, a->o.window.to,
	                           a->ep && a->ep->set ? a->ep : NULL, &model)) {
		return 1;
	}
	if (model || a->qs->n == 0) {
		PromQuerySet all;
		prom_queries_init(&all);
		prom_queries_from_model(&all, model, a->range);
		for (int i = 0; i < a->qs->n; i++) {
			prom_queries_add(&all, a->qs->q[i].promql, NULL);
			free(all.q[all.n - 1].name);
			all.q[all.n - 1].name = xstrdup(a->qs->q[i].name);
		}
		prom_queries_fini(a->qs);
		*a->qs = all;
	}
	model_free(model);
	a->queries_ready = 1;
	return 0;
}

/* The metric queries across one range: an evaluation every range_ms from
 * the first full rate() window to the end. Adds to *rr. */
static int metric_range(Store *st, TraceArgs *a, TimeRange r, PromRoundResult *rr, int *evals,
                        Printer *pr, Err *first)
{
	int status = 0;
	int64_t step = (int64_t)a->range_ms * 1000000;
	for (int64_t t = r.from + step; t <= r.to && !trace_stop; t += step) {
		PromPullOptions po = *a->po;
		po.eval_ms = t / 1000000;
		PromRoundResult one;
		Err err = {0};
		if (prom_pull_round(st, a->qs, &po, print_outcome, pr, &one, &err)) {
			status = 1;
			if (first->code == 0)
				*first = err;
		}
		rr->queries += one.queries;
		rr->ok += one.ok;
		rr->failed += one.failed;
		rr->added += one.added;
		rr->duplicate += one.duplicate;
		(*evals)++;
	}
	return status;
}

/* --prometheus beside the traces: the same queries as `pull --prometheus`
 * over the window and the baseline just pulled. 0, or 1 when a query
 * failed (said on stderr; what succeeded is stored). */
static int trace_metrics(Store *st, TraceArgs *a, int quiet)
{
	if (metric_queries(st, a))
		return 1;
	Printer pr = {.quiet = 1}; /* a line per query and instant is too many */
	PromRoundResult rr = {0};
	Err first = {0};
	int ew = 0, eb = 0;
	int status = metric_range(st, a, a->o.window, &rr, &ew, &pr, &first);
	if (a->o.has_baseline)
		status |= metric_range(st, a, a->o.baseline, &rr, &eb, &pr, &first);
	if (!quiet) {
		printf("prometheus %s: %d queries at %d instants of the window", a->po->url, a->qs->n, ew);
		if (a->o.has_baseline)
			printf(" and %d of the baseline", eb);
		printf(" (every %s); %d failed; %lld points stored, %lld already stored\n", a->range,
		       rr.failed, (long long)rr.added, (long long)rr.duplicate);
		fflush(stdout);
	}
	if (pr.repeated)
		fprintf(stderr, "tailtriage: pull: the same error for %d more queries\n", pr.repeated);
	if (ew + eb == 0)
		fprintf(stderr, "tailtriage: pull: --range %s is longer than the window: no metric "
		        "query was evaluated\n", a->range);
	return status;
}

/* One pull; 0, or 1 when it failed (said on stderr). */
static int trace_round(Store *st, TraceArgs *a, int quiet)
{
	TraceProgress tp = {.tty = isatty(2) && !quiet};
	a->o.progress = trace_progress;
	a->o.progress_ctx = &tp;
	TracePullResult r;
	Err err = {0};
	int rc = trace_pull(st, &a->o, &r, &err);
	if (tp.shown)
		fputs("\r\033[K", stderr);
	char w[80], b[80];
	time_range_format(a->o.window, w, sizeof w);
	if (!quiet && (rc == 0 || r.fetched || r.already)) {
		printf("%s (%s) %s %s: window %s", trace_pull_backend_name(a->o.backend), r.api,
		       a->o.service, a->o.operation ? a->o.operation : "(any operation)", w);
		if (a->o.has_baseline) {
			time_range_format(a->o.baseline, b, sizeof b);
			printf(", baseline %s", b);
		}
		printf("\n ");
		if (a->o.slowest) {
			printf(" slowest %lld of the window", (long long)r.slowest);
			if (a->o.has_baseline)
				printf(" and %lld of the baseline", (long long)r.slowest_baseline);
		}
		if (a->o.sample) {
			print_listed(a->o.slowest ? "sample" : "sample", r.sample_window, r.listed_window);
			printf(" in the window");
			if (a->o.has_baseline) {
				print_listed("and", r.sample_baseline, r.listed_baseline);
				printf(" in the baseline");
			}
		}
		printf("; %lld traces fetched, %lld already stored; %lld spans added, %lld already "
		       "stored; %lld queries\n",
		       (long long)r.fetched, (long long)r.already, (long long)r.spans_added,
		       (long long)r.spans_duplicate, (long long)r.queries);
		fflush(stdout);
	}
	Buf sk;
	buf_init(&sk);
	import_skips_text(&r.skips, a->o.url, &sk);
	for (const char *p = buf_str(&sk), *e; *p; p = e + 1) {
		e = strchr(p, '\n');
		fprintf(stderr, "tailtriage: pull: %.*s\n", (int)(e - p), p);
	}
	buf_fini(&sk);
	if (r.stopped)
		fprintf(stderr, "tailtriage: pull: stopped; what was stored stays\n");
	if (rc) {
		cli_fail("pull: %s", err.msg);
		return 1;
	}
	return r.stopped ? 1 : 0;
}

static int pull_traces(const char *db, TraceArgs *a, long every_ms, int once, int quiet)
{
	if (a->o.service == NULL || a->o.service[0] == '\0')
		return cli_fail("pull: --%s needs --service (the entry's service)",
		                trace_pull_backend_name(a->o.backend)), 2;
	const char *url = a->o.url;
	if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
		return cli_fail("pull: --%s '%s': expected an http:// or https:// URL",
		                trace_pull_backend_name(a->o.backend), url), 2;
	int live = every_ms > 0 && !once;
	if (!live && a->window == NULL)
		return cli_fail("pull: --window A..B is required (or --every with --last)"), 2;
	if (a->window) {
		Period per;
		int bad = cli_ranges(a->window, a->baseline, &per);
		if (bad)
			return bad;
		if (time_range_open(per.win))
			return cli_fail("pull: --window needs both ends"), 2;
		if (per.has_baseline && time_range_open(per.base))
			return cli_fail("pull: --baseline needs both ends"), 2;
		a->o.window = per.win;
		a->o.has_baseline = per.has_baseline;
		a->o.baseline = per.base;
	}
	if (a->baseline && strcmp(a->baseline, "before") != 0 && a->window == NULL)
		return cli_fail("pull: with --every, --baseline can only be 'before'"), 2;
	a->headers[a->n_headers] = NULL;
	a->o.http.headers = a->headers;
	a->o.stop = &trace_stop;
	Store *st = NULL;
	Err err = {0};
	if (store_open(db, 0, &st, &err))
		return cli_fail("%s", err.msg);
	struct sigaction sa = {0};
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	int status = 0;
	for (;;) {
		if (live && a->window == NULL) {
			struct timespec now;
			clock_gettime(CLOCK_REALTIME, &now);
			int64_t t = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
			a->o.window = (TimeRange){t - (int64_t)a->last_ms * 1000000, t};
			a->o.has_baseline = a->baseline != NULL;
			if (a->o.has_baseline)
				a->o.baseline = time_range_before(a->o.window);
		}
		int rs = trace_round(st, a, quiet);
		if (a->po && !trace_stop)
			rs |= trace_metrics(st, a, quiet);
		/* SIGINT or SIGTERM is how a live pull ends: the round it cut
		 * short (what it stored stays) is no failure */
		if (!(live && trace_stop))
			status = rs;
		if (!live || trace_stop)
			break;
		for (long waited = 0; waited < every_ms && !trace_stop; waited += 100) {
			struct timespec ts = {0, 100 * 1000000L};
			nanosleep(&ts, NULL);
		}
		if (trace_stop)
			break;
	}
	store_close(st);
	return status;
}

int cmd_pull(int argc, char **argv)
{
	static const struct option opts[] = {
		{"db", required_argument, NULL, 'd'},
		{"prometheus", required_argument, NULL, 'p'},
		{"model", required_argument, NULL, 'm'},
		{"query", required_argument, NULL, 'Q'},
		{"every", required_argument, NULL, 'e'},
		{"once", no_argument, NULL, 'o'},
		{"range", required_argument, NULL, 'r'},
		{"timeout", required_argument, NULL, 't'},
		{"token", required_argument, NULL, 'T'},
		{"jaeger", required_argument, NULL, 'J'},
		{"tempo", required_argument, NULL, 'P'},
		{"service", required_argument, NULL, 'S'},
		{"operation", required_argument, NULL, 'O'},
		{"window", required_argument, NULL, 'W'},
		{"baseline", required_argument, NULL, 'B'},
		{"slowest", required_argument, NULL, 'N'},
		{"sample", required_argument, NULL, 'M'},
		{"last", required_argument, NULL, 'L'},
		{"parallel", required_argument, NULL, 'j'},
		{"retries", required_argument, NULL, 'R'},
		{"page", required_argument, NULL, 'G'},
		{"tenant", required_argument, NULL, 'E'},
		{"header", required_argument, NULL, 'H'},
		{"quiet", no_argument, NULL, 'q'},
		{"endpoint", required_argument, NULL, 'X'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *db = cli_default_db(), *model_path = NULL, *range = "1m";
	PromPullOptions po = {0};
	po.bearer_token = getenv("TAILTRIAGE_PROM_TOKEN");
	long every_ms = 15000;
	int once = 0, c, status = 0, every_set = 0;
	TraceArgs ta;
	memset(&ta, 0, sizeof ta);
	ta.o.slowest = 20;
	ta.o.sample = p99_bounded_n();
	int sample_set = 0;
	ta.last_ms = 300000;
	const char *trace_token = getenv("TAILTRIAGE_PULL_TOKEN");
	const char *tenant = NULL;
	const char *prom_headers[40];
	Printer pr = {0};
	PromQuerySet qs;
	prom_queries_init(&qs);
	Err err = {0};
	CliEndpoint ep = {0};
	optind = 1;
	argc = cli_endpoint_argv(argc, argv);
	while ((c = cli_getopt("pull", argc, argv, "d:p:m:qh", opts)) != -1) {
		switch (c) {
		case 'X':
			if (cli_endpoint_parse(optarg, &ep)) {
				prom_queries_fini(&qs);
				return 2;
			}
			break;
		case 'd': db = optarg; break;
		case 'p': po.url = optarg; break;
		case 'm': model_path = optarg; break;
		case 'Q':
			if (prom_queries_add(&qs, optarg, &err)) {
				prom_queries_fini(&qs);
				return cli_fail("pull: %s", err.msg);
			}
			break;
		case 'J':
		case 'P':
			if (ta.o.url) {
				prom_queries_fini(&qs);
				return cli_fail("pull: give one of --jaeger and --tempo"), 2;
			}
			ta.o.url = optarg;
			ta.o.backend = c == 'J' ? TRACE_PULL_JAEGER : TRACE_PULL_TEMPO;
			break;
		case 'S': ta.o.service = optarg; break;
		case 'O': ta.o.operation = optarg; break;
		case 'W': ta.window = optarg; break;
		case 'B': ta.baseline = optarg; break;
		case 'N':
		case 'M':
		case 'j':
		case 'R':
		case 'G': {
			char *end;
			long v = strtol(optarg, &end, 10);
			long lo = c == 'j' || c == 'G' ? 1 : 0;
			long hi = c == 'j' ? 64 : c == 'R' ? 20 : 100000;
			if (end == optarg || *end || v < lo || v > hi) {
				prom_queries_fini(&qs);
				return cli_fail("pull: --%s '%s': expected a whole number from %ld to %ld",
				                c == 'N' ? "slowest" : c == 'M' ? "sample" : c == 'j' ? "parallel"
				                : c == 'R' ? "retries" : "page", optarg, lo, hi), 2;
			}
			if (c == 'N')
				ta.o.slowest = (int)v;
			else if (c == 'M')
				ta.o.sample = (int)v, sample_set = 1;
			else if (c == 'j')
				ta.o.http.parallel = (int)v;
			else if (c == 'R')
				ta.o.http.retries = v == 0 ? -1 : (int)v;
			else
				ta.o.page = (int)v;
			break;
		}
		case 'L':
			if ((ta.last_ms = parse_ms(optarg)) < 0) {
				prom_queries_fini(&qs);
				return cli_fail("pull: --last '%s': expected a duration like 5m", optarg), 2;
			}
			break;
		case 'E':
			if (*optarg == '\0' || strlen(optarg) > 200 || has_ctl(optarg)) {
				prom_queries_fini(&qs);
				return cli_fail("pull: --tenant '%s': expected a tenant id (1 to 200 "
				                "characters, no control characters)", optarg), 2;
			}
			tenant = optarg;
			break;
		case 'H':
			if (strchr(optarg, ':') == NULL || has_ctl(optarg) || ta.n_headers >= 30) {
				prom_queries_fini(&qs);
				return cli_fail("pull: --header '%s': expected 'Name: value' (at most 30, "
				                "no control characters)",
				                optarg), 2;
			}
			ta.headers[ta.n_headers++] = optarg;
			break;
		case 'e':
			every_set = 1;
			if ((every_ms = parse_ms(optarg)) < 0) {
				prom_queries_fini(&qs);
				return cli_fail("pull: --every '%s': expected a duration like 15s or 1m", optarg), 2;
			}
			break;
		case 'o': once = 1; break;
		case 'r':
			if (!valid_range(optarg)) {
				prom_queries_fini(&qs);
				return cli_fail("pull: --range '%s': expected a PromQL duration like 1m", optarg), 2;
			}
			range = optarg;
			break;
		case 't':
			if ((po.timeout_ms = parse_ms(optarg)) < 0) {
				prom_queries_fini(&qs);
				return cli_fail("pull: --timeout '%s': expected a duration like 10s", optarg), 2;
			}
			break;
		case 'T': po.bearer_token = optarg; trace_token = optarg; break;
		case 'q': pr.quiet = 1; break;
		case 'h': prom_queries_fini(&qs); usage(stdout); return 0;
		default: prom_queries_fini(&qs); return 2;
		}
	}
	if (optind < argc) {
		prom_queries_fini(&qs);
		usage(stderr);
		return 2;
	}
	/* --header lines go to every server; the tenant in each back end's
	 * own header: Jaeger's query service reads x-tenant unless configured
	 * otherwise, Tempo, Mimir and Cortex read X-Scope-OrgID */
	int np = 0;
	for (int i = 0; i < ta.n_headers; i++)
		prom_headers[np++] = ta.headers[i];
	if (tenant) {
		snprintf(ta.prom_tenant, sizeof ta.prom_tenant, "X-Scope-OrgID: %s", tenant);
		prom_headers[np++] = ta.prom_tenant;
		snprintf(ta.tenant, sizeof ta.tenant, "%s: %s",
		         ta.o.backend == TRACE_PULL_TEMPO ? "X-Scope-OrgID" : "x-tenant", tenant);
	}
	prom_headers[np] = NULL;
	po.headers = prom_headers;
	if (ta.o.url) {
		if (ta.o.slowest == 0 && ta.o.sample == 0) {
			prom_queries_fini(&qs);
			return cli_fail("pull: --slowest 0 and --sample 0: nothing to pull"), 2;
		}
		if (po.url && strncmp(po.url, "http://", 7) != 0 && strncmp(po.url, "https://", 8) != 0) {
			prom_queries_fini(&qs);
			return cli_fail("pull: --prometheus '%s': expected an http:// or https:// URL",
			                po.url), 2;
		}
		long rms = parse_ms(range);
		if (po.url && rms < 1000) {
			prom_queries_fini(&qs);
			return cli_fail("pull: --range '%s': with traces, a duration of a second or more "
			                "in ms, s or m (the step between evaluations)", range), 2;
		}
		int need = p99_bounded_n();
		if (sample_set && ta.o.sample > 0 && ta.o.sample < need && !pr.quiet && ta.o.slowest > 0 &&
		    ta.baseline != NULL)
			fprintf(stderr,
			        "tailtriage: pull: a sample of %d traces cannot bound a p99 (%d is the "
			        "fewest whose p99 has a 95 %% upper bound): diagnose reads the p99 and its "
			        "rise off the %d slowest of each range and the sample below them, exact "
			        "while the p99's ranks fall inside them; the replay that says where the "
			        "rise went needs --sample %d or more\n",
			        ta.o.sample, need, ta.o.slowest, need);
		else if (sample_set && ta.o.sample > 0 && ta.o.sample < need && !pr.quiet)
			fprintf(stderr,
			        "tailtriage: pull: a sample of %d traces cannot bound a p99 (%d is the "
			        "fewest whose p99 has a 95 %% upper bound): a rise of the p99 will read "
			        "'cannot tell', and diagnose may put insufficient-evidence first where more "
			        "traces would show it; --sample %d or more for a diagnosis\n",
			        ta.o.sample, need, need);
		ta.po = po.url ? &po : NULL;
		ta.qs = &qs;
		ta.model_path = model_path;
		ta.range = range;
		ta.range_ms = rms;
		ta.ep = &ep;
		if (po.timeout_ms > 0)
			ta.o.http.timeout_ms = po.timeout_ms;
		if (trace_token && *trace_token) {
			snprintf(ta.auth, sizeof ta.auth, "Authorization: Bearer %s", trace_token);
			ta.headers[ta.n_headers++] = ta.auth;
		}
		if (ta.tenant[0])
			ta.headers[ta.n_headers++] = ta.tenant;
		int rc = pull_traces(db, &ta, every_set ? every_ms : 0, once, pr.quiet);
		prom_queries_fini(&qs);
		return rc;
	}
	if (po.url == NULL) {
		prom_queries_fini(&qs);
		fputs("tailtriage: pull: --prometheus, --jaeger or --tempo URL is required\n", stderr);
		usage(stderr);
		return 2;
	}
	if (strncmp(po.url, "http://", 7) != 0 && strncmp(po.url, "https://", 8) != 0) {
		prom_queries_fini(&qs);
		return cli_fail("pull: --prometheus '%s': expected an http:// or https:// URL", po.url), 2;
	}
	Model *model = NULL;
	if (model_path) {
		if (cli_model(model_path, NULL, INT64_MIN, INT64_MAX, &model)) {
			prom_queries_fini(&qs);
			return 1;
		}
	} else if (qs.n == 0 && access(db, F_OK) == 0) {
		/* (--endpoint: that endpoint's model, below) */
		/* no model and no queries: the pools a model inferred from what
		 * the database already holds, besides the defaults */
		Store *ro = NULL;
		if (store_open(db, STORE_READONLY, &ro, &err)) {
			prom_queries_fini(&qs);
			return cli_fail("%s", err.msg);
		}
		int bad = cli_model_infer(ro, INT64_MIN, INT64_MAX, ep.set ? &ep : NULL, &model);
		store_close(ro);
		if (bad) {
			prom_queries_fini(&qs);
			return 1;
		}
	}
	if (model || qs.n == 0) {
		/* The model's queries come first, the ad-hoc ones after. */
		PromQuerySet all;
		prom_queries_init(&all);
		prom_queries_from_model(&all, model, range);
		for (int i = 0; i < qs.n; i++) {
			PromQuery *src = &qs.q[i];
			prom_queries_add(&all, src->promql, NULL);
			free(all.q[all.n - 1].name);
			all.q[all.n - 1].name = xstrdup(src->name);
		}
		prom_queries_fini(&qs);
		qs = all;
	}
	model_free(model);

	Store *st = NULL;
	if (store_open(db, 0, &st, &err)) {
		prom_queries_fini(&qs);
		return cli_fail("%s", err.msg);
	}
	sigset_t stop;
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	if (!once)
		pthread_sigmask(SIG_BLOCK, &stop, NULL);
	for (;;) {
		PromRoundResult rr;
		err_clear(&err);
		pr.last_err[0] = '\0';
		pr.repeated = 0;
		int rc = prom_pull_round(st, &qs, &po, print_outcome, &pr, &rr, &err);
		char when[40];
		time_format(rr.eval_ms * 1000000, when, sizeof when);
		if (pr.repeated)
			fprintf(stderr, "tailtriage: pull: round at %s: the same error for %d more"
			        " quer%s\n", when, pr.repeated, pr.repeated == 1 ? "y" : "ies");
		if (!pr.quiet)
			printf("round at %s: %d queries, %d failed; %lld points stored, "
			       "%lld already stored\n",
			       when, rr.queries, rr.failed, (long long)rr.added, (long long)rr.duplicate);
		fflush(stdout);
		if (once) {
			status = rc ? 1 : 0;
			break;
		}
		struct timespec ts = {every_ms / 1000, (every_ms % 1000) * 1000000L};
		if (sigtimedwait(&stop, NULL, &ts) > 0)
			break;
	}
	store_close(st);
	prom_queries_fini(&qs);
	return status;
}
