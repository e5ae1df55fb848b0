/*
 * route.h - the route of a span: what, beside its service, names the
 * endpoint a server span answers (DESIGN.md, "Endpoint").
 *
 * One rule, used by every importer (OTLP JSON and protobuf, the receiver,
 * Jaeger, Zipkin) while it reads a span's attributes, and by the store's
 * readers for rows imported before routes were stored:
 *
 *  1. http.route when present: "METHOD /users/{id}" (the method from
 *     http.request.method, its _original when it is "_OTHER", else the
 *     older http.method, else the span name's first word when it is one:
 *     3 to 7 capitals, as in "GET /v2/home"; the route alone when none);
 *     else url.template, the instrumentation's own template of the path
 *     ("/users/{id}"), after the method likewise;
 *  2. else the RPC method: rpc.method when it already holds
 *     "service/method", else "rpc.service/rpc.method" (rpc.method alone
 *     without a service), or the span name of a gRPC span
 *     (rpc.system "grpc") that names no method;
 *  3. else the HTTP method and the path of the URL: url.path, else the path
 *     of url.full, else http.target, else Zipkin's http.path, else the
 *     path of http.url (the query and fragment left out), each segment
 *     that is an id becoming "{id}":
 *     digits only; a UUID; a date (YYYY-MM-DD, with or without a time);
 *     8 or more hex digits with at least one decimal digit; 8 or more
 *     upper-case letters and digits with both (OLJCESPC7Z); 16 or more
 *     characters of base64 (letters, digits, '-', '_', '=') with a digit,
 *     an upper-case and a lower-case letter;
 *  4. else the span name.
 *
 * Which of them gave the route is its rule (ROUTE_*), stored with it so a
 * reader can say why two URLs became one endpoint. Only string-valued
 * attributes count. Everything here is pure string work: no allocation
 * except the output buffer's growth, no locale.
 */
#ifndef TT_ROUTE_H
#define TT_ROUTE_H

#include <stddef.h>

#include "buf.h"

enum {
	ROUTE_NAME = 0,           /* no HTTP or RPC attribute: the span name */
	ROUTE_HTTP_ROUTE = 1,     /* http.route */
	ROUTE_RPC = 2,            /* the RPC method */
	ROUTE_PATH = 3,           /* the method and the URL path, no id in it */
	ROUTE_PATH_TEMPLATED = 4, /* the method and the URL path, ids made {id} */
	ROUTE_URL_TEMPLATE = 5,   /* url.template (stored numbers never change) */
	ROUTE_RULES
};

/* The attributes the rule reads, in RouteAttrs order. */
enum {
	RA_HTTP_ROUTE,            /* http.route */
	RA_METHOD,                /* http.request.method */
	RA_METHOD_ORIGINAL,       /* http.request.method_original */
	RA_METHOD_OLD,            /* http.method (semantic conventions before 1.21) */
	RA_URL_PATH,              /* url.path */
	RA_URL_FULL,              /* url.full */
	RA_HTTP_TARGET,           /* http.target (before 1.21) */
	RA_HTTP_PATH,             /* http.path (Zipkin's instrumentations) */
	RA_HTTP_URL,              /* http.url (before 1.21) */
	RA_RPC_SYSTEM,            /* rpc.system */
	RA_RPC_SERVICE,           /* rpc.service */
	RA_RPC_METHOD,            /* rpc.method */
	RA_URL_TEMPLATE,          /* url.template (semantic conventions 1.27) */
	RA_COUNT
};

/* The attribute key of RA_* index i ("http.route", ...). */
extern const char *const route_attr_keys[RA_COUNT];

/* A span's values of the keys the rule reads: borrowed strings (not
 * NUL-terminated: v[i] holds n[i] bytes), v[i] NULL when absent. */
typedef struct RouteAttrs {
	const char *v[RA_COUNT];
	size_t n[RA_COUNT];
} RouteAttrs;

/* Which RA_* the attribute key (klen bytes) is, or -1. Cheap enough to
 * call for every attribute of every span. */
int route_attr_index(const char *key, size_t klen);

/* Does the rule give spans of this kind (SPAN_KIND_*, store.h) a route?
 * Server spans (an endpoint's entry) and spans without a parent (a trace's
 * root, the entry of a trace without server spans). */
int route_wanted(int kind, int has_parent);

/* Appends the route of a span named name (name_len bytes) with attributes
 * a to out (after what it holds) and returns its ROUTE_* rule. */
int route_make(const RouteAttrs *a, const char *name, size_t name_len, Buf *out);

/* A short name of rule ("http.route", "url.template", "rpc method",
 * "url path", "url path, ids templated", "span name"), "unknown" when out
 * of range. */
const char *route_rule_name(int rule);

/* Appends path (n bytes) to out with every id segment made "{id}" (rule
 * 3 above); returns 1 when a segment was replaced, else 0. */
int route_template_path(const char *path, size_t n, Buf *out);

/* The path of an HTTP route "METHOD /path" (after the first space when
 * the route starts with an upper-case word and a '/' follows it), or the
 * route itself; *method_len is the method's length (0 for none). For
 * matching metrics that carry http.route and http.request.method. */
const char *route_path(const char *route, size_t *method_len);

#endif
