/*
 * test_import_otlp_paths.c - the OTLP/JSON Lines importer has two parsers:
 * a fast path (simdjson) for lines that hold complete values, and yajl for
 * everything else (values spanning lines, control bytes, lone surrogate
 * escapes) and for the single-document shape. Whatever path a byte takes,
 * the stored rows must be the same. Each case writes the same requests in
 * another shape and compares a fingerprint of every stored column.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "buf.h"
#include "helpers.h"
#include "import.h"

/* Three requests; every attribute type, events, links, escapes, a
 * surrogate pair, ints as strings and numbers, kinds as names and numbers,
 * resource after scopeSpans in the second. */
static const char *const req[3] = {
	"{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\",\"value\":"
	"{\"stringValue\":\"api\"}},{\"key\":\"host.name\",\"value\":{\"stringValue\":\"h1\"}}]},"
	"\"scopeSpans\":[{\"scope\":{\"name\":\"s\",\"version\":\"1\"},\"spans\":[{\"traceId\":"
	"\"0AF7651916CD43DD8448EB211C80319C\",\"spanId\":\"B7AD6B7169203331\",\"name\":"
	"\"GET /a \\\"q\\\" \\\\ \\u00e9 \\ud83d\\ude00\",\"kind\":\"SPAN_KIND_SERVER\","
	"\"startTimeUnixNano\":\"1784052000000000000\",\"endTimeUnixNano\":1784052000100000000,"
	"\"attributes\":[{\"key\":\"workload.class\",\"value\":{\"stringValue\":\"gold\"}},"
	"{\"key\":\"queue.wait_ms\",\"value\":{\"doubleValue\":2.5}},{\"key\":\"b\",\"value\":"
	"{\"boolValue\":true}},{\"key\":\"i\",\"value\":{\"intValue\":\"-42\"}},{\"key\":\"arr\","
	"\"value\":{\"arrayValue\":{\"values\":[{\"intValue\":1},{\"stringValue\":\"x\"}]}}},"
	"{\"key\":\"kv\",\"value\":{\"kvlistValue\":{\"values\":[{\"key\":\"k\",\"value\":"
	"{\"doubleValue\":1e-3}}]}}},{\"key\":\"bytes\",\"value\":{\"bytesValue\":\"AQID\"}}],"
	"\"events\":[{\"name\":\"queue.wait\",\"timeUnixNano\":\"1784052000001000000\","
	"\"attributes\":[{\"key\":\"duration_ms\",\"value\":{\"intValue\":1}}]}],"
	"\"status\":{\"code\":\"STATUS_CODE_ERROR\",\"message\":\"boom\\nline\"}}]}]}]}",

	"{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[{\"spanId\":\"00f067aa0ba902b7\","
	"\"traceId\":\"0af7651916cd43dd8448eb211c80319c\",\"parentSpanId\":\"b7ad6b7169203331\","
	"\"name\":\"pricing.Quote\",\"kind\":3,\"startTimeUnixNano\":1784052000010000000,"
	"\"endTimeUnixNano\":\"1784052000060000000\",\"links\":[{\"traceId\":"
	"\"11111111111111111111111111111111\",\"spanId\":\"2222222222222222\",\"attributes\":"
	"[{\"key\":\"r\",\"value\":{\"stringValue\":\"follows\"}}]}]}]}],\"resource\":"
	"{\"attributes\":[{\"key\":\"service.name\",\"value\":{\"stringValue\":\"api\"}}]}}]}",

	"{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\",\"value\":"
	"{\"stringValue\":\"pricing\"}}]},\"scopeSpans\":[{\"spans\":[{\"traceId\":"
	"\"0af7651916cd43dd8448eb211c80319c\",\"spanId\":\"1234567890abcdef\",\"parentSpanId\":"
	"\"00f067aa0ba902b7\",\"name\":\"Quote\",\"kind\":\"SPAN_KIND_SERVER\","
	"\"startTimeUnixNano\":\"1784052000020000000\",\"endTimeUnixNano\":\"1784052000040000000\","
	"\"unknownField\":{\"deep\":[1,2,{\"x\":null}]}}]}]}]}",
};

static char *fingerprint(const char *db)
{
	sqlite3 *h = NULL;
	assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	sqlite3_stmt *s = NULL;
	assert_int_equal(
	    sqlite3_prepare_v2(
	        h,
	        "SELECT group_concat(r, char(10)) FROM (SELECT "
	        " quote(trace_id) || '|' ||"
	        " quote(span_id) || '|' ||"
	        " quote(parent_id) || '|' ||"
	        " quote(service) || '|' ||"
	        " quote(host) || '|' ||"
	        " quote(name) || '|' ||"
	        " quote(kind) || '|' ||"
	        " quote(start_ns) || '|' ||"
	        " quote(end_ns) || '|' ||"
	        " quote(status_code) || '|' ||"
	        " quote(status_msg) || '|' ||"
	        " quote(wclass) || '|' ||"
	        " quote(queue_ns) || '|' ||"
	        " quote(trace_state) || '|' ||"
	        " quote(flags) || '|' ||"
	        " quote(attrs) || '|' ||"
	        " quote(events) || '|' ||"
	        " quote(links) || '|' ||"
	        " quote(dropped) || '|' ||"
	        " quote((SELECT attrs FROM resources WHERE id = resource_id)) || '|' ||"
	        " quote((SELECT name || '/' || version FROM scopes WHERE id = scope_id))"
	        " AS r"
	        " FROM spans ORDER BY trace_id, span_id)",
	        -1, &s, NULL),
	    SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	const unsigned char *t = sqlite3_column_text(s, 0);
	char *out = xstrdup(t ? (const char *)t : "");
	sqlite3_finalize(s);
	sqlite3_close(h);
	return out;
}

/* Imports text (as a file) into a fresh database; returns its fingerprint
 * or NULL when the import failed (then *msg holds the error). */
static char *import_text(const char *text, char *msg, size_t msz)
{
	char db[128], file[160];
	tmp_db_path(db, sizeof db);
	snprintf(file, sizeof file, "%s.jsonl", db);
	FILE *f = fopen(file, "wb");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	Store *st = NULL;
	Err err = {0};
	assert_int_equal(store_open(db, 0, &st, &err), 0);
	ImportResult res;
	int rc = import_file(st, file, NULL, &res, &err);
	store_close(st);
	char *fp = NULL;
	if (rc == 0)
		fp = fingerprint(db);
	else if (msg)
		snprintf(msg, msz, "%s", err.msg + strlen(file));
	unlink(file);
	rm_db(db);
	return fp;
}

/* The reference: one request per line (the fast path). */
static char *reference(void)
{
	Buf b;
	buf_init(&b);
	for (int i = 0; i < 3; i++) {
		buf_adds(&b, req[i]);
		buf_addc(&b, '\n');
	}
	char *fp = import_text(b.p, NULL, 0);
	buf_fini(&b);
	assert_non_null(fp);
	return fp;
}

/* Pretty-prints a compact JSON text: a newline after every , { [ outside
 * strings, so every value spans lines (the yajl path). */
static void spread(Buf *out, const char *s)
{
	int in_str = 0;
	for (; *s; s++) {
		buf_addc(out, *s);
		if (in_str) {
			if (*s == '\\' && s[1]) {
				buf_addc(out, *++s);
			} else if (*s == '"') {
				in_str = 0;
			}
			continue;
		}
		if (*s == '"')
			in_str = 1;
		else if (*s == ',' || *s == '{' || *s == '[')
			buf_adds(out, "\n  ");
	}
}

static void test_shapes_store_the_same_rows(void **state)
{
	(void)state;
	char *want = reference();
	assert_non_null(strstr(want, "gold"));
	Buf b;
	/* values spanning lines */
	buf_init(&b);
	for (int i = 0; i < 3; i++) {
		spread(&b, req[i]);
		buf_addc(&b, '\n');
	}
	char *got = import_text(b.p, NULL, 0);
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
	buf_fini(&b);
	/* fast lines, then one spanning value, then fast again */
	buf_init(&b);
	buf_adds(&b, req[0]);
	buf_addc(&b, '\n');
	spread(&b, req[1]);
	buf_addc(&b, '\n');
	buf_adds(&b, req[2]);
	buf_addc(&b, '\n');
	got = import_text(b.p, NULL, 0);
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
	buf_fini(&b);
	/* two requests on one line, CRLF endings, blank lines, no final newline */
	buf_init(&b);
	buf_adds(&b, req[0]);
	buf_adds(&b, " ");
	buf_adds(&b, req[1]);
	buf_adds(&b, "\r\n\r\n");
	buf_adds(&b, req[2]);
	got = import_text(b.p, NULL, 0);
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
	buf_fini(&b);
	/* the same spans as one document (yajl only) */
	buf_init(&b);
	buf_adds(&b, "{\"resourceSpans\":[");
	for (int i = 0; i < 3; i++) {
		const char *inner = strchr(req[i], '[') + 1;
		size_t n = strlen(inner) - 2; /* drop the closing ]} */
		if (i)
			buf_addc(&b, ',');
		buf_add(&b, inner, n);
	}
	buf_adds(&b, "]}");
	got = import_text(b.p, NULL, 0);
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
	buf_fini(&b);
	free(want);
}

/* A broken line reports the same located error whether the line is short
 * (fast path first, then yajl for the message) or spread over lines. */
static void test_errors_are_located_the_same(void **state)
{
	(void)state;
	char m1[512], m2[512];
	Buf b;
	buf_init(&b);
	buf_adds(&b, req[0]);
	buf_adds(&b, "\n{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[{\"traceId\":\"xyz\"}]}]}]}\n");
	assert_null(import_text(b.p, m1, sizeof m1));
	assert_non_null(strstr(m1, ":2:"));
	assert_non_null(strstr(m1, "traceId"));
	buf_fini(&b);
	/* a lone surrogate escape is left to yajl on both shapes */
	buf_init(&b);
	buf_adds(&b, req[0]);
	buf_adds(&b, "\n");
	buf_adds(&b, "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[{\"traceId\":"
	             "\"0af7651916cd43dd8448eb211c80319d\",\"spanId\":\"b7ad6b7169203332\","
	             "\"name\":\"bad \\ud800 x\",\"startTimeUnixNano\":\"1\",\"endTimeUnixNano\":\"2\"}]}]}]}\n");
	char *a = import_text(b.p, m1, sizeof m1);
	buf_fini(&b);
	buf_init(&b);
	spread(&b, req[0]);
	buf_adds(&b, "\n");
	spread(&b, "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[{\"traceId\":"
	           "\"0af7651916cd43dd8448eb211c80319d\",\"spanId\":\"b7ad6b7169203332\","
	           "\"name\":\"bad \\ud800 x\",\"startTimeUnixNano\":\"1\",\"endTimeUnixNano\":\"2\"}]}]}]}");
	char *c = import_text(b.p, m2, sizeof m2);
	buf_fini(&b);
	/* both shapes agree on the outcome */
	assert_int_equal(a == NULL, c == NULL);
	if (a == NULL) {
		assert_non_null(strstr(m1, ":"));
		assert_non_null(strstr(m2, ":"));
	}
	free(a);
	free(c);
}

/* The request element i of req (one resourceSpans item, "{...}"). */
static void element(Buf *out, int i, char sep)
{
	const char *inner = strchr(req[i], '[') + 1;
	size_t n = strlen(inner) - 2; /* drop the closing ]} */
	buf_addc(out, inner[0]);
	buf_addc(out, sep);
	buf_add(out, inner + 1, n - 1);
}

/* A document from a template: "@N" is element N of req and '~' is sep,
 * put right after each array item's '{'. A tab there (legal white space
 * for yajl, a control byte the fast path leaves alone) keeps every line
 * on yajl; a space, at the same column, lets the stream-mode fast path
 * take the items. */
static void expand(Buf *out, const char *tpl, char sep)
{
	for (; *tpl; tpl++) {
		if (*tpl == '@' && tpl[1] >= '0' && tpl[1] <= '2')
			element(out, *++tpl - '0', sep);
		else if (*tpl == '~')
			buf_addc(out, sep);
		else
			buf_addc(out, *tpl);
	}
}

/* Imports tpl expanded with sep; returns the fingerprint or NULL (then msg
 * holds the error). */
static char *import_tpl(const char *tpl, char sep, char *msg, size_t msz)
{
	Buf b;
	buf_init(&b);
	expand(&b, tpl, sep);
	char *fp = import_text(b.p, msg, msz);
	buf_fini(&b);
	return fp;
}

/* One document, one resourceSpans item per line (the benchmark's shape):
 * the items take the fast path inside the yajl stream, the rows are the
 * same as from JSON Lines and from yajl alone. */
static void test_document_items_store_the_same_rows(void **state)
{
	(void)state;
	char *want = reference();
	static const char *const same[] = {
		"{\"resourceSpans\":[\n@0,\n@1,\n@2\n]}\n",
		"{\"resourceSpans\":[\n  @0 ,\n\t@1,\r\n   @2]}",
		/* two items on a line, an item ending the array, blank lines */
		"{\"resourceSpans\":[\n@0, @1,\n\n@2]}\n",
		"{\"resourceSpans\": [\n@0\n,\n@1\n,@2\n]\n}\n",
		"{\"resourceSpans\":[@0,\n@1,\n@2\n]}\n",
	};
	for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
		for (int k = 0; k < 2; k++) {
			char *got = import_tpl(same[i], k ? '\t' : ' ', NULL, 0);
			assert_non_null(got);
			assert_string_equal(got, want);
			free(got);
		}
	}
	/* deeper arrays: scopeSpans items and span items one per line */
	static const char *const nested[] = {
		"{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\","
		"\"value\":{\"stringValue\":\"api\"}}]},\"scopeSpans\":[\n"
		"{~\"scope\":{\"name\":\"s\"},\"spans\":[{\"traceId\":\"0af7651916cd43dd8448eb211c80319c\","
		"\"spanId\":\"b7ad6b7169203331\",\"name\":\"a\",\"startTimeUnixNano\":\"1\","
		"\"endTimeUnixNano\":\"5\"}]},\n"
		"{~\"spans\":[\n"
		"{~\"traceId\":\"0af7651916cd43dd8448eb211c80319c\",\"spanId\":\"00f067aa0ba902b7\","
		"\"parentSpanId\":\"b7ad6b7169203331\",\"name\":\"b\",\"startTimeUnixNano\":\"2\","
		"\"endTimeUnixNano\":\"3\",\"events\":[\n"
		"{~\"name\":\"queue.wait\",\"timeUnixNano\":\"2\",\"attributes\":[{\"key\":"
		"\"duration_ns\",\"value\":{\"intValue\":\"7\"}}]},\n"
		"{~\"name\":\"e\",\"timeUnixNano\":\"3\"}\n"
		"]},\n"
		"{~\"traceId\":\"0af7651916cd43dd8448eb211c80319c\",\"spanId\":\"1234567890abcdef\","
		"\"name\":\"c\",\"startTimeUnixNano\":\"2\",\"endTimeUnixNano\":\"4\",\"unknown\":[\n"
		"{~\"x\":1},\n"
		"{~\"y\":[1,2]}\n"
		"]}\n"
		"]}\n"
		"]}]}\n",
	};
	for (size_t i = 0; i < sizeof nested / sizeof nested[0]; i++) {
		char *a = import_tpl(nested[i], ' ', NULL, 0);
		char *c = import_tpl(nested[i], '\t', NULL, 0);
		assert_non_null(a);
		assert_non_null(c);
		assert_string_equal(a, c);
		assert_non_null(strstr(a, "queue.wait"));
		free(a);
		free(c);
	}
	free(want);
}

/* Broken documents of that shape: errors before, inside and after items
 * the fast path takes are located exactly where yajl alone puts them. */
static void test_document_item_errors_are_located_the_same(void **state)
{
	(void)state;
	static const struct {
		const char *tpl;
		const char *where;  /* ":line:col:" of the message, as yajl alone says */
	} cases[] = {
		/* before */
		{"{\"resourceSpans\":[ 1,\n@0\n]}\n", ":1:20:"},
		{"{\"resourceSpans\":[\n[~1],\n@0\n]}\n", ":2:1:"},
		{"{\"resourceSpans\":[\n@0,\n{~\"scopeSpans\":[{\"spans\":\n[{\"traceId\":\"xyz\"}]}]},\n@1\n]}\n",
		 ":4:13:"},
		/* inside: a check fails, a field is missing, a syntax error */
		{"{\"resourceSpans\":[\n@0,\n@1,\n{~\"scopeSpans\":[{\"spans\":[{\"traceId\":\"xyz\"}]}]},\n@2\n]}\n",
		 ":4:38:"},
		{"{\"resourceSpans\":[\n@0,\n{~\"scopeSpans\":[{\"spans\":[{\"spanId\":\"b7ad6b7169203331\","
		 "\"name\":\"x\"}]}]},\n@2\n]}\n", ":3:27:"},
		{"{\"resourceSpans\":[\n@0,\n{~\"resource\":{} \"scopeSpans\":[]},\n@2\n]}\n", ":3:19:"},
		{"{\"resourceSpans\":[\n@0,\n{~\"scopeSpans\":[tru]},\n@2\n]}\n", ":3:20:"},
		{"{\"resourceSpans\":[\n@0,\n{~\"scopeSpans\":[{\"spans\":[{\"kind\":1e999999}]}]},\n]}\n",
		 ":3:35:"},
		/* after: what follows an item */
		{"{\"resourceSpans\":[\n@0\n@1\n]}\n", ":3:1:"},
		{"{\"resourceSpans\":[\n@0,\n@1,\n]}\n", ":4:1:"},
		{"{\"resourceSpans\":[\n@0,\n@1 x\n@2]}\n", ":3:479:"},
		{"{\"resourceSpans\":[\n@0,,\n@1\n]}\n", ":2:1036:"},
		{"{\"resourceSpans\":[\n@0,\n@1", ":3:478:"},
		{"{\"resourceSpans\":[\n@0,\n@1\n]\n", ":5:1:"},
		{"{\"resourceSpans\":[\n@0,\n@1\n]}\n{\"resourceSpans\":[\n@2,\n{~\"x\":1} ]}} \n", ":7:12:"},
		{"{\"resourceSpans\":[\n@0,\n@1\n], \"resourceSpans\":[]}\n", ":4:4:"},
		/* a span spanning lines, its events taken by the fast path, then
		 * found without a traceId (located at its brace, lines back) */
		{"{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[{\"spanId\":\"b7ad6b7169203331\","
		 "\"events\":[\n{~\"name\":\"a\",\"timeUnixNano\":\"1\"},\n{~\"name\":\"b\"},\n"
		 "{~\"name\":\"c\",\"timeUnixNano\":\"2\"}\n]}]}]}]}\n", ":4:1:"},
		{"{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[\n{~\"spanId\":\"b7ad6b7169203331\"},\n"
		 "{~\"traceId\":\"0af7651916cd43dd8448eb211c80319c\"}\n]}]}]}\n", ":2:1:"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char fast[512], slow[512];
		fast[0] = slow[0] = '\0';
		char *a = import_tpl(cases[i].tpl, ' ', fast, sizeof fast);
		char *c = import_tpl(cases[i].tpl, '\t', slow, sizeof slow);
		if (a || c)
			print_error("case %zu imported\n", i);
		assert_null(a);
		assert_null(c);
		if (strcmp(fast, slow) != 0)
			print_error("case %zu: %s\n  yajl: %s\n", i, fast, slow);
		assert_string_equal(fast, slow);
		if (strncmp(fast, cases[i].where, strlen(cases[i].where)) != 0)
			print_error("case %zu: %s\n", i, fast);
		assert_int_equal(strncmp(fast, cases[i].where, strlen(cases[i].where)), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shapes_store_the_same_rows),
		cmocka_unit_test(test_errors_are_located_the_same),
		cmocka_unit_test(test_document_items_store_the_same_rows),
		cmocka_unit_test(test_document_item_errors_are_located_the_same),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
