/*
 * select.h - run a part of a unit test program's tests, chosen by name in
 * the environment, so that tests/CMakeLists.txt can register one program
 * as two CTest tests: its tests whose assertions are statistics of a
 * whole simulated incident (label "statistics": millions of simulated
 * requests, run on the normal build) and the rest (label "unit", run under
 * the sanitizers). scripts/test.sh says why.
 *
 *   TT_UNIT_ONLY=a,b   run only the tests named a and b
 *   TT_UNIT_SKIP=a,b   run all the tests but a and b
 *
 * A name that is not one of the program's tests is an error, so that a
 * renamed test cannot drop out of both runs unnoticed. Header-only.
 */
#ifndef TT_TEST_SELECT_H
#define TT_TEST_SELECT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Is name in the comma-separated list? */
static inline int tt_unit_listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && strncmp(p, name, n) == 0)
			return 1;
		p += len + (e != NULL);
	}
	return 0;
}

/* Keeps in out[] the tests of t[0..n) the environment selects; returns
 * how many, or -1 (with a message) when the selection names an unknown
 * test or leaves none. */
static inline int tt_unit_select(const struct CMUnitTest *t, size_t n, struct CMUnitTest *out)
{
	const char *only = getenv("TT_UNIT_ONLY"), *skip = getenv("TT_UNIT_SKIP");
	const char *list = only && *only ? only : skip && *skip ? skip : NULL;
	for (const char *p = list; p && *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p), i;
		for (i = 0; i < n; i++)
			if (strlen(t[i].name) == len && strncmp(t[i].name, p, len) == 0)
				break;
		if (i == n) {
			fprintf(stderr, "TT_UNIT_ONLY/TT_UNIT_SKIP: no test named %.*s\n", (int)len, p);
			return -1;
		}
		p += len + (e != NULL);
	}
	int k = 0;
	for (size_t i = 0; i < n; i++) {
		int listed = list && tt_unit_listed(list, t[i].name);
		if (list == NULL || (list == only ? listed : !listed))
			out[k++] = t[i];
	}
	if (k == 0)
		fprintf(stderr, "TT_UNIT_ONLY/TT_UNIT_SKIP: no test left to run\n");
	return k ? k : -1;
}

/* cmocka_run_group_tests() over the tests the environment selects */
static inline int tt_run_group(const char *name, const struct CMUnitTest *t, size_t n,
                               CMFixtureFunction setup, CMFixtureFunction teardown)
{
	struct CMUnitTest *sel = malloc(n * sizeof *sel);
	if (sel == NULL)
		return 1;
	int k = tt_unit_select(t, n, sel);
	int rc = k < 0 ? 1 : _cmocka_run_group_tests(name, sel, (size_t)k, setup, teardown);
	free(sel);
	return rc;
}

#define tt_run_group_tests(tests, setup, teardown) \
	tt_run_group(#tests, tests, sizeof(tests) / sizeof((tests)[0]), setup, teardown)

#endif
