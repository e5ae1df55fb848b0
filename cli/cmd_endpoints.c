/*
 * cmd_endpoints.c - `tailtriage endpoints`: every endpoint of the window
 * and baseline, ranked as the other commands take them by default
 * (analysis/endpoints.h).
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "cli.h"
#include "endpoints.h"
#include "route.h"
#include "sanitize.h"
#include "timefmt.h"

static void usage(FILE *out)
{
	fputs("usage: tailtriage endpoints [--db FILE] [--window A..B] [--baseline A..B|before]\n"
	      "                            [--model FILE] [--format text|json]\n\n"
	      "Lists every endpoint of the window: the service and route of the requests'\n"
	      "entry span (the first server span of a trace, below any client span of a load\n"
	      "generator or browser; the route: http.route, else the RPC method, else the\n"
	      "method and the URL path with ids made {id}, else the span name). Per endpoint:\n"
	      "requests and rate, p50 and p99 with their 95 % intervals, and errors in the\n"
	      "window and the baseline; the rise of the objective's percentile (p99 without a\n"
	      "model) with its interval and whether it is significant; whether the model's\n"
	      "objective is breached. Ranked by significant rise, then by traffic: the first\n"
	      "row is what report, diagnose and tui take without --endpoint.\n\n"
	      "  --db FILE        database (default $TAILTRIAGE_DB or ./tailtriage.db)\n"
	      "  --window A..B    range listed (RFC 3339 or epoch ms; default: all data)\n"
	      "  --baseline A..B  range to compare against; 'before': the same length just\n"
	      "                   before a closed window (default: none: ranked by traffic)\n"
	      "  --model FILE     a model: its objective (threshold and percentile) for its\n"
	      "                   endpoint, or every endpoint when it names none (default: none)\n"
	      "  --format F       text (default) or json: a list under \"endpoints\", each with\n"
	      "                   an \"endpoint\" string that --endpoint takes as it is\n",
	      out);
}

static const char *verdict(int rose)
{
	return rose == EP_ROSE ? "rose" : rose == EP_STEADY ? "steady" : "cannot tell";
}

/* "12.3" or "?" */
static void num(char *out, size_t sz, double v)
{
	if (isnan(v))
		snprintf(out, sz, "?");
	else if (isinf(v))
		snprintf(out, sz, "%s", v < 0 ? "-inf" : "inf");
	else
		snprintf(out, sz, "%.1f", v);
}

/* "182.3 [160.2, 250.1]" */
static void with_ci(char *out, size_t sz, double v, double lo, double hi, int64_t n)
{
	if (n == 0) {
		snprintf(out, sz, "-");
		return;
	}
	char a[24], b[24], c[24];
	num(a, sizeof a, v);
	num(b, sizeof b, lo);
	num(c, sizeof c, hi);
	snprintf(out, sz, "%s [%s, %s]", a, b, c);
}

static void pop_line(Buf *o, const char *label, const EndpointPop *p)
{
	char p50[96], p99[96], err[24];
	with_ci(p50, sizeof p50, p->q.p50, p->p50_lo, p->p50_hi, p->requests);
	with_ci(p99, sizeof p99, p->q.p99, p->q.p99_lo, p->q.p99_hi, p->requests);
	if (p->requests)
		snprintf(err, sizeof err, "%.1f %%", 100.0 * (double)p->errors / (double)p->requests);
	else
		snprintf(err, sizeof err, "-");
	buf_printf(o, "     %-10s %8lld %7.1f  %-24s %-26s %s\n", label, (long long)p->requests,
	           p->rate_rps, p50, p99, err);
}

static void text(const EndpointList *l, const Period *per, Buf *o)
{
	char r[128];
	time_range_format(per->win, r, sizeof r);
	buf_printf(o, "Endpoints  window %s", r);
	if (per->has_baseline) {
		time_range_format(per->base, r, sizeof r);
		buf_printf(o, ", baseline %s", r);
	}
	buf_printf(o, "\n           %d endpoint%s, ranked by %s (ms; 95 %% intervals)\n", l->n,
	           l->n == 1 ? "" : "s",
	           per->has_baseline ? "significant rise of the p99, then traffic" : "traffic");
	if (l->pct != 99)
		buf_printf(o, "           the objective's percentile: p%g\n", l->pct);
	if (l->n == 0) {
		buf_adds(o, "\nNo request in the window: no entry span (a server span, or a root that "
		            "is not a client span) starts in it.\n");
		return;
	}
	buf_printf(o, "\n  # ENDPOINT   %-8s %7s  %-24s %-26s %s\n", "REQUESTS", "REQ/S", "P50 MS [95 %]",
	           "P99 MS [95 %]", "ERRORS");
	for (int i = 0; i < l->n; i++) {
		const Endpoint *e = &l->v[i];
		char name[512];
		san_clean(e->name, name, sizeof name);
		buf_printf(o, "%3d %s\n", i + 1, name);
		pop_line(o, "window", &e->pop[POP_WINDOW]);
		if (per->has_baseline)
			pop_line(o, "baseline", &e->pop[POP_BASELINE]);
		buf_adds(o, "     ");
		if (e->has_change) {
			char d[24], lo[24], hi[24];
			num(d, sizeof d, e->rise_ms);
			num(lo, sizeof lo, e->rise_lo);
			num(hi, sizeof hi, e->rise_hi);
			buf_printf(o, "p%g %s%s ms [%s%s, %s%s]", e->basis, e->rise_ms >= 0 ? "+" : "", d,
			           e->rise_lo >= 0 ? "+" : "", lo, e->rise_hi >= 0 ? "+" : "", hi);
			if (!isnan(e->ratio) && !isinf(e->ratio))
				buf_printf(o, ", x%.2f", e->ratio);
			buf_printf(o, ": %s", verdict(e->rose));
			if (e->basis != l->pct)
				buf_printf(o, " (too few requests to bound the p%g)", l->pct);
		} else if (per->has_baseline) {
			buf_printf(o, "p%g: cannot tell (%s)", l->pct,
			           e->pop[POP_BASELINE].requests ? "no request in the window"
			                                         : "no request in the baseline");
		} else {
			buf_printf(o, "p%g %s ms", l->pct, e->pop[0].requests ? "" : "-");
			if (e->pop[0].requests) {
				char v[24];
				num(v, sizeof v, e->pop[0].pq);
				buf_printf(o, "= %s", v);
			}
		}
		if (e->breached >= 0)
			buf_printf(o, "; objective %.0f ms: %s", l->objective_ms,
			           e->breached ? "BREACHED" : "met");
		buf_printf(o, "; route from %s\n", route_rule_name(e->route_rule));
	}
	if (l->entered_below || l->no_entry)
		buf_printf(o, "\n%lld requests entered below their trace's root (a client span: a load "
		           "generator, a browser); %lld traces with a client root and no server span "
		           "(no endpoint)\n", (long long)l->entered_below, (long long)l->no_entry);
	buf_adds(o, "\n'tailtriage report --endpoint SERVICE ROUTE' (or diagnose, tui) analyses one; "
	            "without --endpoint they take the first.\n");
}

static cJSON *num_json(double v)
{
	return isnan(v) || isinf(v) ? cJSON_CreateNull() : cJSON_CreateNumber(round(v * 1000) / 1000);
}

static cJSON *ci_json(double lo, double hi)
{
	cJSON *a = cJSON_CreateArray();
	cJSON_AddItemToArray(a, num_json(lo));
	cJSON_AddItemToArray(a, num_json(hi));
	return a;
}

static cJSON *pop_json(const EndpointPop *p, double pct)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "requests", (double)p->requests);
	cJSON_AddItemToObject(o, "rate_rps", num_json(p->rate_rps));
	cJSON_AddNumberToObject(o, "errors", (double)p->errors);
	cJSON_AddItemToObject(o, "error_ratio",
	                      p->requests ? num_json((double)p->errors / (double)p->requests)
	                                  : cJSON_CreateNull());
	int has = p->requests > 0;
	cJSON_AddItemToObject(o, "p50_ms", has ? num_json(p->q.p50) : cJSON_CreateNull());
	cJSON_AddItemToObject(o, "p50_ci", ci_json(has ? p->p50_lo : NAN, has ? p->p50_hi : NAN));
	cJSON_AddItemToObject(o, "p99_ms", has ? num_json(p->q.p99) : cJSON_CreateNull());
	cJSON_AddItemToObject(o, "p99_ci", ci_json(has ? p->q.p99_lo : NAN, has ? p->q.p99_hi : NAN));
	cJSON_AddItemToObject(o, "p90_ms", has ? num_json(p->q.p90) : cJSON_CreateNull());
	cJSON_AddItemToObject(o, "p90_ci", ci_json(has ? p->q.p90_lo : NAN, has ? p->q.p90_hi : NAN));
	if (pct != 99) {
		cJSON_AddItemToObject(o, "percentile_ms", has ? num_json(p->pq) : cJSON_CreateNull());
		cJSON_AddItemToObject(o, "percentile_ci", ci_json(has ? p->pq_lo : NAN, has ? p->pq_hi : NAN));
	}
	return o;
}

static cJSON *range_json(TimeRange r, int64_t from, int64_t to)
{
	cJSON *o = cJSON_CreateObject();
	char t[40];
	time_format(from, t, sizeof t);
	cJSON_AddStringToObject(o, "from", t);
	time_format(to, t, sizeof t);
	cJSON_AddStringToObject(o, "to", t);
	cJSON_AddBoolToObject(o, "open_from", r.from == INT64_MIN);
	cJSON_AddBoolToObject(o, "open_to", r.to == INT64_MAX);
	return o;
}

static void json(const EndpointList *l, const Period *per, Buf *out)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddItemToObject(r, "window", range_json(per->win, l->from_ns[0], l->to_ns[0]));
	if (per->has_baseline)
		cJSON_AddItemToObject(r, "baseline", range_json(per->base, l->from_ns[1], l->to_ns[1]));
	else
		cJSON_AddNullToObject(r, "baseline");
	cJSON_AddNumberToObject(r, "percentile", l->pct);
	cJSON_AddItemToObject(r, "objective_ms",
	                      l->objective_ms > 0 ? num_json(l->objective_ms) : cJSON_CreateNull());
	cJSON_AddNumberToObject(r, "traces_read", (double)l->traces_read);
	cJSON_AddNumberToObject(r, "entered_below", (double)l->entered_below);
	cJSON_AddNumberToObject(r, "no_entry", (double)l->no_entry);
	cJSON *arr = cJSON_AddArrayToObject(r, "endpoints");
	for (int i = 0; i < l->n; i++) {
		const Endpoint *e = &l->v[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "rank", i + 1);
		cJSON_AddStringToObject(o, "endpoint", e->name);
		cJSON_AddStringToObject(o, "service", e->service);
		cJSON_AddStringToObject(o, "route", e->route);
		cJSON_AddStringToObject(o, "route_rule", route_rule_name(e->route_rule));
		cJSON_AddItemToObject(o, "window", pop_json(&e->pop[0], l->pct));
		if (per->has_baseline)
			cJSON_AddItemToObject(o, "baseline", pop_json(&e->pop[1], l->pct));
		else
			cJSON_AddNullToObject(o, "baseline");
		if (e->has_change) {
			cJSON *c = cJSON_AddObjectToObject(o, "rise");
			cJSON_AddItemToObject(c, "ms", num_json(e->rise_ms));
			cJSON_AddItemToObject(c, "ci", ci_json(e->rise_lo, e->rise_hi));
			cJSON_AddItemToObject(c, "ratio", num_json(e->ratio));
			cJSON_AddItemToObject(c, "ratio_ci", ci_json(e->ratio_lo, e->ratio_hi));
			cJSON_AddStringToObject(c, "verdict", verdict(e->rose));
			cJSON_AddNumberToObject(c, "percentile", e->basis);
		} else {
			cJSON_AddNullToObject(o, "rise");
		}
		if (e->breached >= 0)
			cJSON_AddStringToObject(o, "objective", e->breached ? "breached" : "met");
		else
			cJSON_AddNullToObject(o, "objective");
		cJSON_AddItemToArray(arr, o);
	}
	char *s = cJSON_Print(r);
	buf_adds(out, s);
	buf_addc(out, '\n');
	cJSON_free(s);
	cJSON_Delete(r);
}

int cmd_endpoints(int argc, char **argv)
{
	static const struct option opts[] = {
		{"db", required_argument, NULL, 'd'},
		{"window", required_argument, NULL, 'w'},
		{"baseline", required_argument, NULL, 'b'},
		{"model", required_argument, NULL, 'm'},
		{"format", required_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *db = cli_default_db(), *format = "text", *model_path = NULL;
	const char *window = NULL, *baseline = NULL;
	int c;
	optind = 1;
	while ((c = cli_getopt("endpoints", argc, argv, "d:w:b:m:f:h", opts)) != -1) {
		switch (c) {
		case 'd': db = optarg; break;
		case 'w': window = optarg; break;
		case 'b': baseline = optarg; break;
		case 'm': model_path = optarg; break;
		case 'f': format = optarg; break;
		case 'h': usage(stdout); return 0;
		default: return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "tailtriage endpoints: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (cli_text_or_json(format))
		return 2;
	Period per;
	if (cli_ranges(window, baseline, &per))
		return 2;
	Err err = {0};
	Model *m = NULL;
	if (model_path && strcmp(model_path, "none") != 0 && (m = cli_load_model(model_path, &err)) == NULL)
		return cli_fail("%s", err.msg);
	Store *st = NULL;
	if (store_open(db, STORE_READONLY, &st, &err)) {
		model_free(m);
		return cli_fail("%s", err.msg);
	}
	EndpointList *l = NULL;
	int rc = analysis_endpoints(st, &per, m, &l, &err);
	store_close(st);
	model_free(m);
	if (rc)
		return cli_fail("%s", err.msg);
	Buf out;
	buf_init(&out);
	if (strcmp(format, "json") == 0)
		json(l, &per, &out);
	else
		text(l, &per, &out);
	fwrite(out.p, 1, out.len, stdout);
	buf_fini(&out);
	analysis_endpoints_free(l);
	return 0;
}
