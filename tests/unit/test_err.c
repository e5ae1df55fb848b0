/*
 * test_err.c - the located error setters: err_vset and err_vat, which the
 * parsers' own wrappers (a JSON node, a parser position) pass their
 * arguments to, must give the same message as err_set and err_at.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "err.h"

/* A wrapper of the kind the importers write: a location from its own
 * state, the message from its caller. */
typedef struct {
	Err *err;
	const char *name;
	long line, col;
} Where;

static int where_fail(Where *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int where_fail(Where *w, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = err_vat(w->err, TT_EPARSE, w->name, w->line, w->col, fmt, ap);
	va_end(ap);
	return rc;
}

static int plain_fail(Err *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int plain_fail(Err *err, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = err_vset(err, code, fmt, ap);
	va_end(ap);
	return rc;
}

static void test_vat_locates_and_formats(void **state)
{
	(void)state;
	Err e = {0};
	Where w = {&e, "spans.json", 3, 17};
	assert_int_equal(where_fail(&w, "%s must be %d hex digits", "traceId", 32), TT_EPARSE);
	assert_int_equal(e.code, TT_EPARSE);
	assert_string_equal(e.msg, "spans.json:3:17: traceId must be 32 hex digits");

	Err viaat = {0};
	err_at(&viaat, TT_EPARSE, "spans.json", 3, 17, "%s must be %d hex digits", "traceId", 32);
	assert_string_equal(viaat.msg, e.msg);

	w.name = NULL;
	where_fail(&w, "x");
	assert_string_equal(e.msg, "<input>:3:17: x");
}

static void test_vset_formats(void **state)
{
	(void)state;
	Err e = {0};
	assert_int_equal(plain_fail(&e, TT_ENOTFOUND, "no check %s (%d known)", "gold", 7),
	                 TT_ENOTFOUND);
	assert_int_equal(e.code, TT_ENOTFOUND);
	assert_string_equal(e.msg, "no check gold (7 known)");
	err_clear(&e);
	assert_int_equal(e.code, 0);
	assert_string_equal(e.msg, "");
}

static void test_null_err_returns_code(void **state)
{
	(void)state;
	Where w = {NULL, "f", 1, 1};
	assert_int_equal(where_fail(&w, "%s", "ignored"), TT_EPARSE);
	assert_int_equal(plain_fail(NULL, TT_EIO, "%s", "ignored"), TT_EIO);
}

static void test_long_message_truncated_in_bounds(void **state)
{
	(void)state;
	char big[2000];
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	Err e;
	memset(&e, 'Z', sizeof e);
	Where w = {&e, "f.json", 1, 2};
	where_fail(&w, "%s", big);
	assert_int_equal(strlen(e.msg), sizeof e.msg - 1);
	assert_memory_equal(e.msg, "f.json:1:2: aaa", 15);
	plain_fail(&e, TT_EIO, "%s", big);
	assert_int_equal(strlen(e.msg), sizeof e.msg - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vat_locates_and_formats),
		cmocka_unit_test(test_vset_formats),
		cmocka_unit_test(test_null_err_returns_code),
		cmocka_unit_test(test_long_message_truncated_in_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
