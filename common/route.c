/*
 * route.c - see route.h. The rule is the one README.md and docs/endpoints.md
 * describe; tests/unit/test_route.c holds its cases.
 */
#include "route.h"

#include <string.h>

#define ROUTE_MAX_PATH 512   /* bytes of a path kept; longer ones are cut */
#define OTLP_KIND_SERVER 2   /* SPAN_KIND_SERVER (store.h), as OTLP numbers it */

const char *const route_attr_keys[RA_COUNT] = {
	[RA_HTTP_ROUTE] = "http.route",
	[RA_METHOD] = "http.request.method",
	[RA_METHOD_ORIGINAL] = "http.request.method_original",
	[RA_METHOD_OLD] = "http.method",
	[RA_URL_PATH] = "url.path",
	[RA_URL_FULL] = "url.full",
	[RA_HTTP_TARGET] = "http.target",
	[RA_HTTP_PATH] = "http.path",
	[RA_HTTP_URL] = "http.url",
	[RA_RPC_SYSTEM] = "rpc.system",
	[RA_RPC_SERVICE] = "rpc.service",
	[RA_RPC_METHOD] = "rpc.method",
	[RA_URL_TEMPLATE] = "url.template",
};

int route_attr_index(const char *key, size_t klen)
{
	/* every key starts with "http.", "url." or "rpc.": one byte and the
	 * length rule out almost every other attribute */
	if (klen < 8 || klen > 28 || (key[0] != 'h' && key[0] != 'u' && key[0] != 'r'))
		return -1;
	for (int i = 0; i < RA_COUNT; i++) {
		const char *k = route_attr_keys[i];
		if (k[0] == key[0] && strlen(k) == klen && memcmp(k, key, klen) == 0)
			return i;
	}
	return -1;
}

int route_wanted(int kind, int has_parent)
{
	return kind == OTLP_KIND_SERVER || !has_parent;
}

const char *route_rule_name(int rule)
{
	switch (rule) {
	case ROUTE_NAME: return "span name";
	case ROUTE_HTTP_ROUTE: return "http.route";
	case ROUTE_RPC: return "rpc method";
	case ROUTE_PATH: return "url path";
	case ROUTE_PATH_TEMPLATED: return "url path, ids templated";
	case ROUTE_URL_TEMPLATE: return "url.template";
	default: return "unknown";
	}
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int all_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!is_digit(s[i]))
			return 0;
	return n > 0;
}

/* 8-4-4-4-12 hex digits */
static int is_uuid(const char *s, size_t n)
{
	if (n != 36)
		return 0;
	for (size_t i = 0; i < n; i++) {
		int dash = i == 8 || i == 13 || i == 18 || i == 23;
		if (dash ? s[i] != '-' : !is_hex(s[i]))
			return 0;
	}
	return 1;
}

/* YYYY-MM-DD, alone or followed by a time ('T' or ' ' and anything) */
static int is_date(const char *s, size_t n)
{
	if (n < 10)
		return 0;
	for (size_t i = 0; i < 10; i++)
		if (i == 4 || i == 7 ? s[i] != '-' : !is_digit(s[i]))
			return 0;
	return n == 10 || s[10] == 'T' || s[10] == 't' || s[10] == ' ' || s[10] == '_';
}

static int is_hex_id(const char *s, size_t n)
{
	if (n < 8)
		return 0;
	int digit = 0;
	for (size_t i = 0; i < n; i++) {
		if (!is_hex(s[i]))
			return 0;
		digit |= is_digit(s[i]);
	}
	return digit;
}

static int is_base64_id(const char *s, size_t n)
{
	if (n < 16)
		return 0;
	int digit = 0, upper = 0, lower = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (is_digit(c))
			digit = 1;
		else if (c >= 'A' && c <= 'Z')
			upper = 1;
		else if (c >= 'a' && c <= 'z')
			lower = 1;
		else if (c != '-' && c != '_' && c != '=')
			return 0;
	}
	return digit && upper && lower;
}

/* a code of 8 or more upper-case letters and digits, with both (a SKU,
 * an order number: the OpenTelemetry demo's OLJCESPC7Z) */
static int is_code_id(const char *s, size_t n)
{
	if (n < 8)
		return 0;
	int digit = 0, letter = 0;
	for (size_t i = 0; i < n; i++) {
		if (is_digit(s[i]))
			digit = 1;
		else if (s[i] >= 'A' && s[i] <= 'Z')
			letter = 1;
		else
			return 0;
	}
	return digit && letter;
}

static int is_id(const char *s, size_t n)
{
	return all_digits(s, n) || is_uuid(s, n) || is_date(s, n) || is_hex_id(s, n) ||
	       is_code_id(s, n) || is_base64_id(s, n);
}

int route_template_path(const char *path, size_t n, Buf *out)
{
	int templated = 0;
	if (n > ROUTE_MAX_PATH)
		n = ROUTE_MAX_PATH;
	if (n == 0 || path[0] != '/')
		buf_addc(out, '/');
	size_t i = 0;
	while (i < n) {
		size_t j = i;
		while (j < n && path[j] != '/')
			j++;
		if (j > i && is_id(path + i, j - i)) {
			buf_adds(out, "{id}");
			templated = 1;
		} else {
			buf_add(out, path + i, j - i);
		}
		if (j < n)
			buf_addc(out, '/');
		i = j + 1;
	}
	return templated;
}

/* The length of s before its query or fragment. */
static size_t before_query(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == '?' || s[i] == '#')
			return i;
	return n;
}

/* The path of an absolute URL (scheme://authority/path?query), "" when it
 * has none; a text without "://" is taken as a path already. */
static const char *url_path(const char *u, size_t n, size_t *len)
{
	const char *p = u;
	size_t m = n;
	for (size_t i = 0; i + 2 < n; i++) {
		if (u[i] == ':' && u[i + 1] == '/' && u[i + 2] == '/') {
			size_t j = i + 3;
			while (j < n && u[j] != '/' && u[j] != '?' && u[j] != '#')
				j++;
			p = u + j;
			m = n - j;
			break;
		}
		if (u[i] == '/' || u[i] == '?')
			break; /* a path, not a URL */
	}
	*len = before_query(p, m);
	return p;
}

/* The request method: http.request.method (its _original for "_OTHER"),
 * else http.method. */
static const char *method_of(const RouteAttrs *a, size_t *n)
{
	int i = RA_METHOD;
	if (a->v[i] && a->n[i] == 6 && memcmp(a->v[i], "_OTHER", 6) == 0 &&
	    a->v[RA_METHOD_ORIGINAL] && a->n[RA_METHOD_ORIGINAL] > 0)
		i = RA_METHOD_ORIGINAL;
	if (a->v[i] == NULL || a->n[i] == 0)
		i = RA_METHOD_OLD;
	*n = a->v[i] ? a->n[i] : 0;
	return a->v[i];
}

static int has(const RouteAttrs *a, int i)
{
	return a->v[i] != NULL && a->n[i] > 0;
}

/* The span name's first word when it reads as an HTTP method ("GET" of
 * "GET /v2/home": the name conventions give a server span), else NULL. */
static const char *method_of_name(const char *name, size_t n, size_t *len)
{
	size_t i = 0;
	while (i < n && name[i] >= 'A' && name[i] <= 'Z')
		i++;
	int ok = i >= 3 && i <= 7 && (i == n || name[i] == ' ');
	*len = ok ? i : 0;
	return ok ? name : NULL;
}

int route_make(const RouteAttrs *a, const char *name, size_t name_len, Buf *out)
{
	size_t mn = 0;
	const char *method = method_of(a, &mn);
	int http = has(a, RA_HTTP_ROUTE) || has(a, RA_URL_TEMPLATE) || has(a, RA_URL_PATH) ||
	           has(a, RA_URL_FULL) || has(a, RA_HTTP_TARGET) || has(a, RA_HTTP_PATH) ||
	           has(a, RA_HTTP_URL);
	if (mn == 0 && http)
		method = method_of_name(name, name_len, &mn); /* no method attribute */
	/* a template the instrumentation gives: the server's route, else the
	 * path's template (url.template), both after the method */
	int tpl = has(a, RA_HTTP_ROUTE) ? RA_HTTP_ROUTE : has(a, RA_URL_TEMPLATE) ? RA_URL_TEMPLATE : -1;
	if (tpl >= 0) {
		if (mn) {
			buf_add(out, method, mn);
			buf_addc(out, ' ');
		}
		buf_add(out, a->v[tpl], a->n[tpl]);
		return tpl == RA_HTTP_ROUTE ? ROUTE_HTTP_ROUTE : ROUTE_URL_TEMPLATE;
	}
	if (has(a, RA_RPC_METHOD)) {
		const char *m = a->v[RA_RPC_METHOD];
		size_t n = a->n[RA_RPC_METHOD];
		if (memchr(m, '/', n) == NULL && has(a, RA_RPC_SERVICE)) {
			buf_add(out, a->v[RA_RPC_SERVICE], a->n[RA_RPC_SERVICE]);
			buf_addc(out, '/');
		}
		buf_add(out, m, n);
		return ROUTE_RPC;
	}
	if (has(a, RA_RPC_SYSTEM) && a->n[RA_RPC_SYSTEM] == 4 &&
	    memcmp(a->v[RA_RPC_SYSTEM], "grpc", 4) == 0) {
		buf_add(out, name, name_len);
		return ROUTE_RPC;
	}
	static const int paths[] = {RA_URL_PATH, RA_URL_FULL, RA_HTTP_TARGET, RA_HTTP_PATH,
	                            RA_HTTP_URL};
	for (size_t k = 0; k < sizeof paths / sizeof paths[0]; k++) {
		int i = paths[k];
		if (!has(a, i))
			continue;
		size_t pn = 0;
		const char *p = i == RA_URL_FULL || i == RA_HTTP_URL ? url_path(a->v[i], a->n[i], &pn)
		                                                     : a->v[i];
		if (i == RA_URL_PATH || i == RA_HTTP_TARGET || i == RA_HTTP_PATH)
			pn = before_query(p, a->n[i]);
		if (mn) {
			buf_add(out, method, mn);
			buf_addc(out, ' ');
		}
		return route_template_path(p, pn, out) ? ROUTE_PATH_TEMPLATED : ROUTE_PATH;
	}
	buf_add(out, name, name_len);
	return ROUTE_NAME;
}

const char *route_path(const char *route, size_t *method_len)
{
	*method_len = 0;
	size_t i = 0;
	while (route[i] >= 'A' && route[i] <= 'Z')
		i++;
	if (i > 0 && route[i] == ' ' && route[i + 1] == '/') {
		*method_len = i;
		return route + i + 1;
	}
	return route;
}
