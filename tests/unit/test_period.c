/*
 * test_period.c - the window/baseline type every layer shares
 * (common/period.h): equality that ignores the bounds of an absent
 * baseline, half-open membership, open ends, the "before" baseline, and
 * "A..B" text that time_parse_range() reads back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "period.h"
#include "timefmt.h"

#define S ((int64_t)1000000000)
#define T0 ((int64_t)1784052000 * S) /* 2026-07-14T18:00:00Z */

static void test_equality(void **state)
{
	(void)state;
	Period a = {.win = {T0, T0 + 60 * S}}, b = a;
	assert_true(period_eq(&a, &b));
	/* an absent baseline's bounds are left over from elsewhere: ignored */
	b.base = (TimeRange){1, 2};
	assert_true(period_eq(&a, &b));
	b.has_baseline = 1;
	assert_false(period_eq(&a, &b));
	a.has_baseline = 1;
	a.base = (TimeRange){1, 2};
	assert_true(period_eq(&a, &b));
	a.base.to = 3;
	assert_false(period_eq(&a, &b));
	b = a;
	b.win.to++;
	assert_false(period_eq(&a, &b));
	Period all = PERIOD_ALL;
	assert_true(time_range_eq(all.win, TIME_RANGE_ALL));
	assert_false(all.has_baseline);
}

static void test_membership_and_open(void **state)
{
	(void)state;
	TimeRange r = {T0, T0 + S};
	assert_true(time_range_has(r, T0));
	assert_true(time_range_has(r, T0 + S - 1));
	assert_false(time_range_has(r, T0 + S)); /* half-open */
	assert_false(time_range_has(r, T0 - 1));
	assert_false(time_range_open(r));
	assert_true(time_range_open((TimeRange){INT64_MIN, T0}));
	assert_true(time_range_open((TimeRange){T0, INT64_MAX}));
	assert_true(time_range_has(TIME_RANGE_ALL, 0));
	TimeRange b = time_range_before(r);
	assert_true(time_range_eq(b, (TimeRange){T0 - S, T0}));
}

static void test_format_reads_back(void **state)
{
	(void)state;
	const TimeRange cases[] = {{T0, T0 + 90 * S + 5000000}, {INT64_MIN, T0}, {T0, INT64_MAX},
	                           TIME_RANGE_ALL};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char text[96];
		time_range_format(cases[i], text, sizeof text);
		TimeRange back;
		Err err = {0};
		assert_int_equal(time_parse_range(text, &back.from, &back.to, &err), 0);
		assert_true(time_range_eq(back, cases[i]));
	}
	char text[96];
	time_range_format((TimeRange){T0, INT64_MAX}, text, sizeof text);
	assert_string_equal(text, "2026-07-14T18:00:00.000Z..");
}

/* Nanoseconds since the epoch in an int64_t span 1677 to 2262: a timestamp
 * outside is refused, not wrapped (a far year overflowed the multiplication,
 * found by the sheet importer's fuzz harness). */
static void test_parse_range_of_years(void **state)
{
	(void)state;
	int64_t ns = 0;
	Err err = {0};
	assert_int_equal(time_parse("2262-04-11T23:47:16.854775807Z", &ns, &err), 0);
	assert_true(ns == INT64_MAX);
	assert_int_equal(time_parse("1677-09-21T00:12:44Z", &ns, &err), 0);
	assert_true(ns == -9223372036 * S);
	assert_int_equal(time_parse("2000-01-01T00:00:00+23:59", &ns, &err), 0);
	static const char *const outside[] = {
	    "2262-04-11T23:47:16.854775808Z", "2262-04-11T23:47:17Z", "1677-09-21T00:12:43Z",
	    "1013-01-01T00:00:00Z",           "9999-12-31T23:59:59-23:59", "0000-01-01T00:00:00Z",
	};
	for (size_t i = 0; i < sizeof outside / sizeof outside[0]; i++) {
		err.msg[0] = '\0';
		assert_int_equal(time_parse(outside[i], &ns, &err), TT_EPARSE);
		assert_non_null(strstr(err.msg, "outside the years 1677 to 2262"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_equality),
		cmocka_unit_test(test_membership_and_open),
		cmocka_unit_test(test_format_reads_back),
		cmocka_unit_test(test_parse_range_of_years),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
