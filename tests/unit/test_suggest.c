/*
 * test_suggest.c - "did you mean": the edit distance (a transposition of
 * two neighbours is one edit) and which names are close enough to offer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "suggest.h"

static void test_distance(void **state)
{
	(void)state;
	assert_int_equal(suggest_distance("report", "report"), 0);
	assert_int_equal(suggest_distance("reprot", "report"), 1);  /* transposition */
	assert_int_equal(suggest_distance("windwo", "window"), 1);
	assert_int_equal(suggest_distance("", "tui"), 3);
	assert_int_equal(suggest_distance("tui", ""), 3);
	assert_int_equal(suggest_distance("kitten", "sitting"), 3);
	assert_int_equal(suggest_distance("REPORT", "report"), 0);  /* case ignored */
	assert_int_equal(suggest_distance("import", "imprt"), 1);   /* deletion */
	assert_int_equal(suggest_distance("serve", "servey"), 1);   /* insertion */
	/* restricted: no edit inside a transposed pair ("ca" -> "abc" is 3) */
	assert_int_equal(suggest_distance("ca", "abc"), 3);
	/* symmetric */
	assert_int_equal(suggest_distance("diagnose", "dagnoise"), suggest_distance("dagnoise", "diagnose"));
	/* past the cap the tails count as insertions */
	char a[200], b[200];
	memset(a, 'x', 150);
	a[150] = '\0';
	memset(b, 'x', 100);
	b[100] = '\0';
	assert_int_equal(suggest_distance(a, b), 50);
}

static const char *const cmds[] = {"demo", "import", "report", "tui", "sim", "serve",
                                   "pull", "drill", "diagnose", "check", "model"};
#define N_CMDS ((int)(sizeof cmds / sizeof cmds[0]))

static const char *pick1(const char *word)
{
	int idx[3];
	int k = suggest_pick(word, cmds, N_CMDS, idx, 3);
	return k == 1 ? cmds[idx[0]] : k == 0 ? "" : "(several)";
}

static void test_pick(void **state)
{
	(void)state;
	assert_string_equal(pick1("reprot"), "report");
	assert_string_equal(pick1("improt"), "import");
	assert_string_equal(pick1("tiu"), "tui");
	assert_string_equal(pick1("diag"), "diagnose");   /* a prefix */
	assert_string_equal(pick1("Drill"), "drill");
	assert_string_equal(pick1("frobnicate"), "");
	assert_string_equal(pick1("x"), "");              /* one letter is no word */
	assert_string_equal(pick1("zzz"), "");
	/* equally close names are all offered, in the list's order */
	int idx[3];
	int k = suggest_pick("sime", cmds, N_CMDS, idx, 3);
	assert_int_equal(k, 1);
	assert_string_equal(cmds[idx[0]], "sim");
	static const char *const opts[] = {"sample", "simple"};
	k = suggest_pick("sanple", opts, 2, idx, 3);
	assert_int_equal(k, 1);
	k = suggest_pick("smple", opts, 2, idx, 3);
	assert_int_equal(k, 2);
	assert_int_equal(idx[0], 0);
	assert_int_equal(idx[1], 1);
	/* at most max */
	k = suggest_pick("smple", opts, 2, idx, 1);
	assert_int_equal(k, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_distance),
		cmocka_unit_test(test_pick),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
