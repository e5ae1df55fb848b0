/*
 * test_route.c - the route rule (common/route.h): which attribute wins,
 * the older attribute names, the path of a URL, and which path segments
 * count as ids. Every importer and the store's readers go through this
 * one function, so these cases are the rule as users see it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "buf.h"
#include "route.h"

/* The route of a span named name with key=value pairs (NULL-ended). */
static int route_of(const char *name, const char *const *kv, Buf *out)
{
	RouteAttrs a;
	memset(&a, 0, sizeof a);
	for (int i = 0; kv && kv[i]; i += 2) {
		int k = route_attr_index(kv[i], strlen(kv[i]));
		assert_true(k >= 0);
		a.v[k] = kv[i + 1];
		a.n[k] = strlen(kv[i + 1]);
	}
	buf_reset(out);
	return route_make(&a, name, strlen(name), out);
}

static void expect(const char *name, const char *const *kv, const char *route, int rule)
{
	Buf b;
	buf_init(&b);
	int got = route_of(name, kv, &b);
	assert_string_equal(buf_str(&b), route);
	assert_int_equal(got, rule);
	buf_fini(&b);
}

static void test_http_route_first(void **state)
{
	(void)state;
	const char *kv[] = {"http.request.method", "GET", "http.route", "/users/:id",
	                    "url.path", "/users/42", NULL};
	expect("GET", kv, "GET /users/:id", ROUTE_HTTP_ROUTE);
	/* the older method name; no method at all */
	const char *old[] = {"http.method", "POST", "http.route", "/cart", NULL};
	expect("POST", old, "POST /cart", ROUTE_HTTP_ROUTE);
	const char *bare[] = {"http.route", "/cart", NULL};
	expect("cart", bare, "/cart", ROUTE_HTTP_ROUTE);
	/* no method attribute: the name's first word when it is one */
	expect("GET /cart", bare, "GET /cart", ROUTE_HTTP_ROUTE);
	expect("Get cart", bare, "/cart", ROUTE_HTTP_ROUTE);
	/* an unknown method with its original */
	const char *other[] = {"http.request.method", "_OTHER", "http.request.method_original",
	                       "PURGE", "http.route", "/cache", NULL};
	expect("HTTP", other, "PURGE /cache", ROUTE_HTTP_ROUTE);
}

/* url.template: the instrumentation's template of the path, when the
 * server gives no http.route; never a path with the ids in it */
static void test_url_template(void **state)
{
	(void)state;
	const char *tpl[] = {"http.request.method", "GET", "url.template", "/api/cart/{cartId}",
	                     "url.path", "/api/cart/3f2a9c1e", NULL};
	expect("GET", tpl, "GET /api/cart/{cartId}", ROUTE_URL_TEMPLATE);
	/* http.route says it first */
	const char *both[] = {"http.request.method", "GET", "http.route", "/api/cart/:id",
	                      "url.template", "/api/cart/{cartId}", NULL};
	expect("GET", both, "GET /api/cart/:id", ROUTE_HTTP_ROUTE);
	/* a span named after the method alone, with no method attribute */
	const char *bare[] = {"url.template", "/users/{id}", NULL};
	expect("DELETE", bare, "DELETE /users/{id}", ROUTE_URL_TEMPLATE);
	/* an empty template is none */
	const char *empty[] = {"http.method", "GET", "url.template", "", "url.path", "/u/42", NULL};
	expect("GET", empty, "GET /u/{id}", ROUTE_PATH_TEMPLATED);
	assert_int_equal(route_attr_index("url.template", 12), RA_URL_TEMPLATE);
	assert_string_equal(route_rule_name(ROUTE_URL_TEMPLATE), "url.template");
}

static void test_rpc(void **state)
{
	(void)state;
	const char *kv[] = {"rpc.system", "grpc", "rpc.service", "oteldemo.CartService",
	                    "rpc.method", "GetCart", NULL};
	expect("oteldemo.CartService/GetCart", kv, "oteldemo.CartService/GetCart", ROUTE_RPC);
	const char *full[] = {"rpc.method", "pkg.Svc/Do", "rpc.service", "ignored", NULL};
	expect("x", full, "pkg.Svc/Do", ROUTE_RPC);
	/* gRPC without a method: the span name */
	const char *grpc[] = {"rpc.system", "grpc", NULL};
	expect("pkg.Svc/Do", grpc, "pkg.Svc/Do", ROUTE_RPC);
	/* another RPC system without a method falls through to the name */
	const char *other[] = {"rpc.system", "jsonrpc", NULL};
	expect("call", other, "call", ROUTE_NAME);
}

static void test_paths_templated(void **state)
{
	(void)state;
	const char *num[] = {"http.request.method", "GET", "url.path", "/api/items/48213", NULL};
	expect("GET", num, "GET /api/items/{id}", ROUTE_PATH_TEMPLATED);
	const char *uuid[] = {"http.request.method", "DELETE", "url.path",
	                      "/api/cart/3f2a9c1e-8b7d-4e21-9a0f-1c2d3e4f5a6b/items/7", NULL};
	expect("DELETE", uuid, "DELETE /api/cart/{id}/items/{id}", ROUTE_PATH_TEMPLATED);
	const char *hex[] = {"http.request.method", "GET", "url.path", "/api/cart/3f2a9c1e", NULL};
	expect("GET", hex, "GET /api/cart/{id}", ROUTE_PATH_TEMPLATED);
	const char *date[] = {"http.request.method", "GET", "url.path", "/reports/2024-05-01/x", NULL};
	expect("GET", date, "GET /reports/{id}/x", ROUTE_PATH_TEMPLATED);
	const char *b64[] = {"http.request.method", "GET", "url.path",
	                     "/s/dGhpcyBpcyBh3B0ZXN0", NULL};
	expect("GET", b64, "GET /s/{id}", ROUTE_PATH_TEMPLATED);
	const char *sku[] = {"http.request.method", "GET", "url.path", "/api/products/OLJCESPC7Z", NULL};
	expect("GET", sku, "GET /api/products/{id}", ROUTE_PATH_TEMPLATED);
	/* words, short hex-looking words, versions, slugs and capitals stay */
	const char *words[] = {"http.request.method", "GET", "url.path",
	                       "/v2/home/cafe/deadbeef/latest-news-of-the-day/README/V2", NULL};
	expect("GET", words, "GET /v2/home/cafe/deadbeef/latest-news-of-the-day/README/V2",
	       ROUTE_PATH);
	/* the query and fragment are not part of the route */
	const char *q[] = {"http.request.method", "GET", "url.path", "/search?q=1#top", NULL};
	expect("GET", q, "GET /search", ROUTE_PATH);
}

static void test_url_forms(void **state)
{
	(void)state;
	/* url.full: its path */
	const char *full[] = {"http.request.method", "GET", "url.full",
	                      "http://shop:8080/api/items/17?x=1", NULL};
	expect("GET", full, "GET /api/items/{id}", ROUTE_PATH_TEMPLATED);
	const char *none[] = {"http.request.method", "GET", "url.full", "https://shop", NULL};
	expect("GET", none, "GET /", ROUTE_PATH);
	/* semantic conventions before 1.21 */
	const char *target[] = {"http.method", "GET", "http.target", "/api/items/17?x=1", NULL};
	expect("GET", target, "GET /api/items/{id}", ROUTE_PATH_TEMPLATED);
	const char *zipkin[] = {"http.method", "GET", "http.path", "/api/items/17", NULL};
	expect("get", zipkin, "GET /api/items/{id}", ROUTE_PATH_TEMPLATED);
	const char *url[] = {"http.method", "PUT", "http.url", "http://h/a/99", NULL};
	expect("PUT", url, "PUT /a/{id}", ROUTE_PATH_TEMPLATED);
	/* url.path wins over url.full */
	const char *both[] = {"http.request.method", "GET", "url.path", "/p", "url.full",
	                      "http://h/q", NULL};
	expect("GET", both, "GET /p", ROUTE_PATH);
	/* nothing: the span name */
	expect("checkout", NULL, "checkout", ROUTE_NAME);
	const char *empty[] = {"http.route", "", NULL};
	expect("checkout", empty, "checkout", ROUTE_NAME);
}

static void test_keys_and_helpers(void **state)
{
	(void)state;
	assert_int_equal(route_attr_index("http.route", 10), RA_HTTP_ROUTE);
	assert_int_equal(route_attr_index("http.routes", 11), -1);
	assert_int_equal(route_attr_index("service.name", 12), -1);
	assert_int_equal(route_attr_index("rpc.method", 10), RA_RPC_METHOD);
	assert_true(route_wanted(2, 1));
	assert_true(route_wanted(3, 0));
	assert_false(route_wanted(3, 1));
	assert_false(route_wanted(1, 1));
	size_t m = 0;
	assert_string_equal(route_path("GET /api/x", &m), "/api/x");
	assert_int_equal(m, 3);
	assert_string_equal(route_path("pkg.Svc/Do", &m), "pkg.Svc/Do");
	assert_int_equal(m, 0);
	assert_string_equal(route_rule_name(ROUTE_PATH_TEMPLATED), "url path, ids templated");
	assert_string_equal(route_rule_name(99), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_http_route_first), cmocka_unit_test(test_url_template),
	    cmocka_unit_test(test_rpc),
	    cmocka_unit_test(test_paths_templated), cmocka_unit_test(test_url_forms),
	    cmocka_unit_test(test_keys_and_helpers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
