/*
 * endpoint.c - `--endpoint SERVICE ROUTE` and the endpoint a command takes
 * without it (docs/endpoints.md).
 *
 * The option takes the endpoint as one word ("shop GET /cart", as
 * `tailtriage endpoints` prints it and its JSON gives it) or as two
 * (SERVICE ROUTE): cli_endpoint_argv() joins the two before getopt sees
 * them, so every command parses one optarg.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cli.h"
#include "endpoints.h"
#include "model_infer.h"
#include "sanitize.h"

int cli_endpoint_argv(int argc, char **argv)
{
	static char joined[2048];
	for (int i = 1; i < argc; i++) {
		const char *v = NULL;
		int at = i;
		if (strcmp(argv[i], "--endpoint") == 0 && i + 2 < argc)
			v = argv[at = i + 1];
		else if (strncmp(argv[i], "--endpoint=", 11) == 0 && i + 1 < argc)
			v = argv[i] + 11;
		if (v == NULL || strchr(v, ' ') || *v == '\0' || argv[at + 1][0] == '-' ||
		    argv[at + 1][0] == '\0')
			continue;
		/* SERVICE ROUTE as two words: one "--endpoint=SERVICE ROUTE" */
		snprintf(joined, sizeof joined, "--endpoint=%s %s", v, argv[at + 1]);
		argv[i] = joined;
		int drop = at + 1 - i; /* the words after argv[i] that it replaces */
		memmove(&argv[i + 1], &argv[i + 1 + drop], (size_t)(argc - i - 1 - drop) * sizeof *argv);
		for (int k = argc - drop; k < argc; k++)
			argv[k] = NULL;
		return argc - drop;
	}
	return argc;
}

/* service and route into ep; -1 when one does not fit. Names come from
 * data and may be any length: a name cut to fit would be another
 * endpoint's, or none's ("the window holds no request of the endpoint"). */
static int ep_copy(CliEndpoint *ep, const char *service, const char *route)
{
	if (strlen(service) >= sizeof ep->service || strlen(route) >= sizeof ep->route)
		return -1;
	snprintf(ep->service, sizeof ep->service, "%s", service);
	snprintf(ep->route, sizeof ep->route, "%s", route);
	return 0;
}

/* The error for an endpoint whose name ep_copy() refused. */
static int too_long(const char *what, const char *service, const char *route)
{
	char s[64], r[96];
	san_copy(service, s, sizeof s, 40);
	san_copy(route, r, sizeof r, 60);
	return cli_fail("%s '%s%s %s%s' is too long: tailtriage takes services of up to %zu bytes "
	                "and routes of up to %zu (this one: %zu and %zu)", what, s,
	                strlen(service) > strlen(s) ? "..." : "", r,
	                strlen(route) > strlen(r) ? "..." : "",
	                sizeof ((CliEndpoint *)0)->service - 1, sizeof ((CliEndpoint *)0)->route - 1,
	                strlen(service), strlen(route));
}

int cli_endpoint_parse(const char *arg, CliEndpoint *ep)
{
	char *svc = NULL, *route = NULL;
	if (analysis_endpoint_split(arg, &svc, &route))
		return cli_fail("--endpoint takes SERVICE ROUTE (two words, or one quoted: "
		                "'shop GET /cart'), as 'tailtriage endpoints' lists them"), 2;
	if (ep_copy(ep, svc, route)) {
		too_long("--endpoint", svc, route);
		free(svc);
		free(route);
		return 2;
	}
	ep->set = 1;
	free(svc);
	free(route);
	return 0;
}

/* "a, b, c and 4 more": the endpoints of l but skip, sanitized. */
static void names(const EndpointList *l, int skip, Buf *out)
{
	int shown = 0;
	for (int i = 0; i < l->n; i++) {
		if (i == skip)
			continue;
		if (shown == 5) {
			buf_printf(out, " and %d more", l->n - 1 - (skip >= 0) - shown);
			break;
		}
		char c[256];
		san_clean(l->v[i].name, c, sizeof c);
		buf_printf(out, "%s'%s'", shown ? ", " : "", c);
		shown++;
	}
}

int cli_model_endpoint(const char *model_path, Store *st, const Period *per, int flags,
                       CliEndpoint *ep, Model **out)
{
	*out = NULL;
	Err err = {0};
	Model *m = NULL;
	int rc = 0;
	if (model_path && strcmp(model_path, "none") != 0) {
		m = cli_load_model(model_path, &err);
		if (m == NULL)
			return cli_fail("%s", err.msg);
	}
	char want[1100], have[1100];
	if (ep->set && m && m->root_service && m->root_operation &&
	    (strcmp(m->root_service, ep->service) != 0 || strcmp(m->root_operation, ep->route) != 0)) {
		snprintf(want, sizeof want, "%s %s", ep->service, ep->route);
		snprintf(have, sizeof have, "%s %s", m->root_service, m->root_operation);
		char a[512], b[512];
		san_clean(want, a, sizeof a);
		san_clean(have, b, sizeof b);
		model_free(m);
		return cli_fail("--endpoint asks for '%s', but the model describes '%s' (its root): "
		                "give a model of that endpoint, or --model none", a, b), 2;
	}
	if (!ep->set && m && m->root_service && m->root_operation) {
		/* the model's root names its endpoint */
		if (ep_copy(ep, m->root_service, m->root_operation)) {
			too_long("the model's endpoint", m->root_service, m->root_operation);
			model_free(m);
			return 2;
		}
		ep->set = 1;
		ep->from_model = 1;
	}
	EndpointList *l = NULL;
	if (st && (!ep->set || (flags & CLI_EP_MUST_EXIST))) {
		if (analysis_endpoints(st, per, m, &l, &err)) {
			model_free(m);
			return cli_fail("%s", err.msg);
		}
	}
	Buf msg;
	buf_init(&msg);
	if (ep->set && l && l->n > 0 && analysis_endpoints_find(l, ep->service, ep->route) < 0 &&
	    !ep->from_model) {
		/* a name that is not in the data: most likely a typo */
		snprintf(want, sizeof want, "%s %s", ep->service, ep->route);
		char a[512];
		san_clean(want, a, sizeof a);
		names(l, -1, &msg);
		rc = cli_fail("no request of endpoint '%s' in the %s (its endpoints: %s; "
		              "'tailtriage endpoints' lists them)", a,
		              per->has_baseline ? "window or the baseline" : "window", buf_str(&msg));
	} else if (!ep->set && l && l->n > 0 && ep_copy(ep, l->v[0].service, l->v[0].route)) {
		rc = too_long("the first endpoint of 'tailtriage endpoints',",
		              l->v[0].service, l->v[0].route);
		if (l->n > 1)
			fprintf(stderr, "tailtriage: choose another with --endpoint ('tailtriage "
			        "endpoints' lists them)\n");
	} else if (!ep->set && l && l->n > 0) {
		ep->set = 1;
		ep->others = l->n - 1;
		/* said when there was a choice (the output names the endpoint) */
		if (!(flags & CLI_EP_QUIET) && l->n > 1) {
			char a[512];
			san_clean(l->v[0].name, a, sizeof a);
			buf_printf(&msg, "tailtriage: endpoint %s: ", a);
			analysis_endpoints_why(l, 0, &msg);
			if (l->n > 1)
				buf_printf(&msg, "; %d other endpoint%s; 'tailtriage endpoints' lists them "
				           "(--endpoint chooses)", l->n - 1, l->n == 2 ? "" : "s");
			fprintf(stderr, "%s\n", buf_str(&msg));
		}
	}
	buf_fini(&msg);
	analysis_endpoints_free(l);
	if (rc == 0 && model_path == NULL && st) {
		/* no model given: drafted for this endpoint */
		rc = cli_model_infer(st, per->win.from, per->win.to, ep->set ? ep : NULL, out);
		model_free(m);
		return rc;
	}
	if (rc)
		model_free(m);
	else
		*out = m;
	return rc;
}
