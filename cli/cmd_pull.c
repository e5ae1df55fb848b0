/*
 * cmd_pull.c - `tailtriage pull`: instant queries against a Prometheus
 * HTTP API, stored as metric snapshots (importers/prom_pull.h).
 *
 * Which queries: with --model, the ones the model implies plus the
 * defaults (docs/live.md lists the PromQL); with --query only, just
 * those; with neither, the defaults plus those of a model inferred from
 * what the database already holds (when it exists; --model none: not).
 * --once runs one round and exits 1 if any query failed; otherwise a
 * round runs every --every until SIGINT or SIGTERM, a failed query being
 * reported and retried next round.
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
#include "prom_pull.h"
#include "timefmt.h"

static void usage(FILE *out)
{
	fputs("usage: tailtriage pull --prometheus URL [--db FILE] [--model M] [--query Q]...\n"
	      "                       [--every 15s | --once] [options]\n\n"
	      "Runs instant queries (GET URL/api/v1/query) against Prometheus or any server\n"
	      "speaking its HTTP API (Thanos, Mimir, VictoriaMetrics) and stores the results\n"
	      "as metric snapshots with their query and evaluation time. Each query is one\n"
	      "transaction: a query that fails (HTTP error, \"status\":\"error\") stores nothing.\n\n"
	      "options:\n"
	      "  --db FILE          database (default $TAILTRIAGE_DB or ./tailtriage.db)\n"
	      "  --prometheus URL   base URL, e.g. http://127.0.0.1:9090\n"
	      "  --model FILE       endpoint model: query its pools' metrics (and the defaults);\n"
	      "                     a file, or a bundled model by name (mercury-home); without\n"
	      "                     it (and without --query), the pools of a model inferred\n"
	      "                     from the database too; 'none': defaults only\n"
	      "  --query Q          ad-hoc PromQL, repeatable; NAME=PROMQL names the result\n"
	      "  --every DURATION   time between rounds (default 15s; units ms, s, m)\n"
	      "  --once             one round, then exit (1 if any query failed)\n"
	      "  --range DURATION   rate() window in generated queries (default 1m)\n"
	      "  --timeout DURATION per HTTP request (default 10s)\n"
	      "  --token TOKEN      send 'Authorization: Bearer TOKEN' (or $TAILTRIAGE_PROM_TOKEN)\n"
	      "  -q, --quiet        print only errors\n",
	      out);
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
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *db = cli_default_db(), *model_path = NULL, *range = "1m";
	PromPullOptions po = {0};
	po.bearer_token = getenv("TAILTRIAGE_PROM_TOKEN");
	long every_ms = 15000;
	int once = 0, c, status = 0;
	Printer pr = {0};
	PromQuerySet qs;
	prom_queries_init(&qs);
	Err err = {0};
	optind = 1;
	while ((c = cli_getopt("pull", argc, argv, "d:p:m:qh", opts)) != -1) {
		switch (c) {
		case 'd': db = optarg; break;
		case 'p': po.url = optarg; break;
		case 'm': model_path = optarg; break;
		case 'Q':
			if (prom_queries_add(&qs, optarg, &err)) {
				prom_queries_fini(&qs);
				return cli_fail("pull: %s", err.msg);
			}
			break;
		case 'e':
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
		case 'T': po.bearer_token = optarg; break;
		case 'q': pr.quiet = 1; break;
		case 'h': prom_queries_fini(&qs); usage(stdout); return 0;
		default: prom_queries_fini(&qs); return 2;
		}
	}
	if (optind < argc || po.url == NULL) {
		prom_queries_fini(&qs);
		if (po.url == NULL)
			fputs("tailtriage: pull: --prometheus URL is required\n", stderr);
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
		/* no model and no queries: the pools a model inferred from what
		 * the database already holds, besides the defaults */
		Store *ro = NULL;
		if (store_open(db, STORE_READONLY, &ro, &err)) {
			prom_queries_fini(&qs);
			return cli_fail("%s", err.msg);
		}
		int bad = cli_model(NULL, ro, INT64_MIN, INT64_MAX, &model);
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
