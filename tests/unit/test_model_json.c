/*
 * test_model_json.c - errors in an endpoint model file are located at the
 * value at fault, "file:line:col: message", whether the text is not JSON
 * or a value means nothing (a negative pool size, an unknown budget
 * operator, a field of the wrong type). Columns count bytes (err.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model_json.h"

/* Parses text as "m.json" and checks the whole message. */
static void expect_error(const char *text, const char *want)
{
	Model *m = NULL;
	Err err = {0};
	int rc = model_parse("m.json", text, strlen(text), &m, &err);
	assert_null(m);
	assert_int_equal(rc, TT_EPARSE);
	assert_string_equal(err.msg, want);
}

static void test_semantic_errors_are_located(void **state)
{
	(void)state;
	/* a pool with a negative size: line 4, at the -4 */
	expect_error("{\n"
	             "  \"endpoint\": \"GET /x\",\n"
	             "  \"pools\": [\n"
	             "    {\"name\": \"db\", \"size\": -4}\n"
	             "  ]\n"
	             "}\n",
	             "m.json:4:28: pool \"size\" out of range");
	/* an unknown budget operator, at the operator */
	expect_error("{\"budgets\": [\n"
	             "  {\"id\": \"p99\", \"evidence\": \"ingress.p99_ms\",\n"
	             "   \"op\": \">=\", \"threshold\": 300}]}",
	             "m.json:3:10: budget \"op\" must be \">\" or \"<\", not \">=\"");
	/* a field of the wrong type, at the value */
	expect_error("{\"nodes\": [{\"service\": \"db\",\n"
	             "            \"mandatory\": \"yes\"}]}",
	             "m.json:2:26: \"mandatory\" must be true or false");
	/* an entry missing what it needs, at the entry */
	expect_error("{\"nodes\": [\n  {\"service\": \"a\"},\n  {\"label\": \"b\"}]}",
	             "m.json:3:3: a node in \"nodes\" has no \"service\"");
	/* columns count bytes: "é" is two */
	expect_error("{\"endpoint\": \"GET /caf\xc3\xa9\", \"objective\": {\"percentile\": 140}}",
	             "m.json:1:56: objective out of range");
	/* not an object at all */
	expect_error("\n  [1, 2]", "m.json:2:3: a model must be a JSON object");
}

static void test_syntax_errors_are_located(void **state)
{
	(void)state;
	expect_error("{\n  \"endpoint\": \"GET /x\",\n}", "m.json:3:1: trailing comma in object");
	expect_error("{\"pools\": [\n  {\"name\": \"db\" \"size\": 4}]}",
	             "m.json:2:17: expected ',' or '}' in object");
	/* a key given twice is refused, not silently chosen */
	expect_error("{\"endpoint\": \"a\",\n \"endpoint\": \"b\"}",
	             "m.json:2:2: duplicate key \"endpoint\"");
}

/* model_load names the file it read. */
static void test_load_names_the_file(void **state)
{
	(void)state;
	char path[] = "/tmp/tt_test_model_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char *text = "{\n  \"objective\": {\"threshold_ms\": -1}\n}\n";
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	Model *m = NULL;
	Err err = {0};
	assert_int_equal(model_load(path, &m, &err), TT_EPARSE);
	char want[128];
	snprintf(want, sizeof want, "%s:2:33: objective out of range", path);
	assert_string_equal(err.msg, want);
	unlink(path);
	/* and a good model still loads */
	assert_int_equal(model_load("../models/mercury-home.model.json", &m, &err), 0);
	assert_true(m->n_nodes > 0 && m->n_pools > 0 && m->n_budgets > 0);
	model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_semantic_errors_are_located),
		cmocka_unit_test(test_syntax_errors_are_located),
		cmocka_unit_test(test_load_names_the_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
