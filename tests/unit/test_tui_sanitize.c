/*
 * test_tui_sanitize.c - the terminal sanitizer and the canvas: escape
 * sequences, controls and malformed UTF-8 never reach a cell, widths keep
 * columns aligned, truncation counts columns, not bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "attrs.h"
#include "buf.h"
#include "canvas.h"
#include "sanitize.h"

#define FFFD "\xef\xbf\xbd"

static void clean(const char *in, char *out, size_t sz)
{
	san_copy(in, out, sz, -1);
}

/* What a user would otherwise see happen to their terminal. */
static void test_escape_sequences_removed(void **state)
{
	(void)state;
	char out[256];
	clean("a\x1b[2Jb", out, sizeof out); /* clear screen */
	assert_string_equal(out, "a" FFFD "b");
	clean("x\x1b]0;owned title\x07y", out, sizeof out); /* OSC title, BEL end */
	assert_string_equal(out, "x" FFFD "y");
	clean("x\x1b]0;t\x1b\\y", out, sizeof out); /* OSC, ST end */
	assert_string_equal(out, "x" FFFD "y");
	clean("x\x1bP1$r q\x1b\\y", out, sizeof out); /* DCS */
	assert_string_equal(out, "x" FFFD "y");
	clean("x\x1b_apc\x1b\\y\x1b^pm\x07z", out, sizeof out); /* APC, PM */
	assert_string_equal(out, "x" FFFD "y" FFFD "z");
	clean("x\x1b" "cy", out, sizeof out); /* RIS: full reset */
	assert_string_equal(out, "x" FFFD "y");
	clean("x\x1b(By", out, sizeof out); /* charset with intermediate */
	assert_string_equal(out, "x" FFFD "y");
	clean("x\x1b[38;5;196;1mred", out, sizeof out); /* SGR with params */
	assert_string_equal(out, "x" FFFD "red");
	clean("x\x1b]8;;http://evil\x07link\x1b]8;;\x07", out, sizeof out); /* hyperlink */
	assert_string_equal(out, "x" FFFD "link" FFFD);
	clean("x\x1b]0;never ends", out, sizeof out); /* unterminated OSC eats the rest */
	assert_string_equal(out, "x" FFFD);
	clean("end\x1b", out, sizeof out); /* lone ESC */
	assert_string_equal(out, "end" FFFD);
}

static void test_c1_controls(void **state)
{
	(void)state;
	char out[256];
	clean("a\xc2\x9b" "2Jb", out, sizeof out); /* 8-bit CSI as UTF-8 */
	assert_string_equal(out, "a" FFFD "b");
	clean("a\xc2\x9d" "0;t\xc2\x9c" "b", out, sizeof out); /* 8-bit OSC .. ST */
	assert_string_equal(out, "a" FFFD "b");
	clean("a\xc2\x85" "b", out, sizeof out); /* NEL */
	assert_string_equal(out, "a" FFFD "b");
	clean("a\x9b" "2Jb", out, sizeof out); /* raw C1 byte: invalid UTF-8 */
	assert_string_equal(out, "a" FFFD "2Jb");
}

static void test_c0_and_del(void **state)
{
	(void)state;
	char out[256];
	clean("bell\x07 bs\x08 del\x7f nul-free", out, sizeof out);
	assert_string_equal(out, "bell" FFFD " bs" FFFD " del" FFFD " nul-free");
	clean("tab\there\nnew\rcr", out, sizeof out);
	assert_string_equal(out, "tab here new cr");
	/* bidi overrides could reorder what is drawn */
	clean("a\xe2\x80\xae" "cba", out, sizeof out);
	assert_string_equal(out, "a" FFFD "cba");
}

static void test_malformed_utf8(void **state)
{
	(void)state;
	char out[256];
	clean("a\xff" "b", out, sizeof out);
	assert_string_equal(out, "a" FFFD "b");
	clean("a\xc0\xaf" "b", out, sizeof out); /* overlong '/' */
	assert_string_equal(out, "a" FFFD FFFD "b");
	clean("a\xed\xa0\x80" "b", out, sizeof out); /* surrogate */
	assert_string_equal(out, "a" FFFD FFFD FFFD "b");
	clean("a\xf4\x90\x80\x80" "b", out, sizeof out); /* > U+10FFFF */
	assert_string_equal(out, "a" FFFD FFFD FFFD FFFD "b");
	clean("a\xe6\xbc", out, sizeof out); /* truncated at the end */
	assert_string_equal(out, "a" FFFD);
	clean("a\xe6" "b", out, sizeof out); /* truncated before ASCII */
	assert_string_equal(out, "a" FFFD "b");
	clean("caf\xc3\xa9", out, sizeof out); /* valid stays */
	assert_string_equal(out, "caf\xc3\xa9");
}

static void test_widths(void **state)
{
	(void)state;
	assert_int_equal(san_width("abc"), 3);
	assert_int_equal(san_width("\xe6\xbc\xa2\xe5\xad\x97"), 4); /* 漢字 */
	assert_int_equal(san_width("e\xcc\x81"), 1);                /* combining acute dropped */
	assert_int_equal(san_width("\x1b[2J"), 1);                  /* one replacement */
	assert_int_equal(san_width(NULL), 0);
	/* truncation by columns: a wide char that does not fit is left out */
	char out[64];
	assert_int_equal(san_copy("a\xe6\xbc\xa2\xe5\xad\x97", out, sizeof out, 4), 3);
	assert_string_equal(out, "a\xe6\xbc\xa2");
	assert_int_equal(san_copy("a\xe6\xbc\xa2\xe5\xad\x97", out, sizeof out, 2), 1);
	assert_string_equal(out, "a");
}

static char *dump(const Canvas *cv)
{
	Buf b;
	buf_init(&b);
	canvas_dump(cv, &b);
	char *s = xstrdup(buf_str(&b));
	buf_fini(&b);
	return s;
}

static void assert_clean_canvas(const Canvas *cv)
{
	for (int y = 0; y < cv->h; y++)
		for (int x = 0; x < cv->w; x++) {
			const Cell *c = canvas_cell(cv, x, y);
			if (c->flags & CELL_TAIL)
				continue;
			assert_true(san_cp_width(c->ch) >= 1);
		}
	char *s = dump(cv);
	for (const char *p = s; *p; p++) {
		unsigned char ch = (unsigned char)*p;
		assert_true(ch >= 0x20 || ch == '\n');
		assert_true(ch != 0x7f);
	}
	free(s);
}

/* Columns after a hostile or wide string stay where they belong. */
static void test_canvas_alignment(void **state)
{
	(void)state;
	Canvas cv;
	canvas_init(&cv, 30, 4, 0);
	const char *names[4] = {
		"plain",
		"\x1b[2J\x1b]0;t\x07" "bell\x07",
		"\xe6\xbc\xa2\xe5\xad\x97\xe6\xbc\xa2\xe5\xad\x97\xe6\xbc\xa2\xe5\xad\x97wide",
		"bad\xff\xfe\xc2\x9b" "31m",
	};
	for (int y = 0; y < 4; y++) {
		canvas_text(&cv, 0, y, 8, ROLE_NORMAL, names[y]);
		canvas_text(&cv, 9, y, -1, ROLE_NORMAL, "|col");
	}
	assert_clean_canvas(&cv);
	for (int y = 0; y < 4; y++)
		assert_int_equal(canvas_cell(&cv, 9, y)->ch, '|');
	char *s = dump(&cv);
	assert_string_equal(s, "plain    |col\n"
	                       FFFD FFFD "bell" FFFD "  |col\n"
	                       "\xe6\xbc\xa2\xe5\xad\x97\xe6\xbc\xa2 \xe2\x80\xa6 |col\n"
	                       "bad" FFFD FFFD FFFD "   |col\n");
	free(s);
	canvas_fini(&cv);
}

/* Overwriting half of a wide character never leaves half a glyph. */
static void test_canvas_wide_overwrite(void **state)
{
	(void)state;
	Canvas cv;
	canvas_init(&cv, 6, 1, 0);
	canvas_text(&cv, 0, 0, -1, ROLE_NORMAL, "\xe6\xbc\xa2\xe5\xad\x97\xe6\xbc\xa2");
	canvas_put(&cv, 1, 0, 'x', ROLE_NORMAL); /* the tail of the first */
	canvas_put(&cv, 2, 0, 'y', ROLE_NORMAL); /* the head of the second */
	char *s = dump(&cv);
	assert_string_equal(s, " xy \xe6\xbc\xa2\n");
	free(s);
	/* a wide char at the right edge does not fit */
	canvas_clear(&cv);
	canvas_text(&cv, 5, 0, -1, ROLE_NORMAL, "\xe6\xbc\xa2");
	assert_clean_canvas(&cv);
	canvas_put(&cv, 0, 0, 0x1b, ROLE_NORMAL); /* a control glyph */
	assert_int_equal(canvas_cell(&cv, 0, 0)->ch, SAN_REPLACEMENT);
	canvas_fini(&cv);
}

static void test_canvas_ascii(void **state)
{
	(void)state;
	Canvas cv;
	canvas_init(&cv, 12, 1, 1);
	canvas_text(&cv, 0, 0, -1, ROLE_NORMAL, "\xe6\xbc\xa2" "a\x1b[2J");
	char *s = dump(&cv);
	assert_string_equal(s, "??a?\n"); /* width kept, glyphs ASCII */
	free(s);
	canvas_fini(&cv);
}

static void test_attrs_reader(void **state)
{
	(void)state;
	const char *j = "{\"a\":\"x\\u001b[2J\",\"n\":12.5,\"arr\":[1,\"]\",{\"k\":2}],\"b\":true,"
	                "\"s\":\"\\ud83d\\ude00\"}";
	size_t pos = 0;
	char k[64], v[64];
	assert_true(attrs_next(j, &pos, k, sizeof k, v, sizeof v));
	assert_string_equal(k, "a");
	assert_string_equal(v, "x\x1b[2J"); /* decoded; the canvas neutralises it */
	assert_true(attrs_next(j, &pos, k, sizeof k, v, sizeof v));
	assert_string_equal(v, "12.5");
	assert_true(attrs_next(j, &pos, k, sizeof k, v, sizeof v));
	assert_string_equal(v, "[1,\"]\",{\"k\":2}]");
	assert_true(attrs_next(j, &pos, k, sizeof k, v, sizeof v));
	assert_string_equal(v, "true");
	assert_true(attrs_next(j, &pos, k, sizeof k, v, sizeof v));
	assert_string_equal(v, "\xf0\x9f\x98\x80");
	assert_false(attrs_next(j, &pos, k, sizeof k, v, sizeof v));
	/* malformed input ends quietly */
	const char *bad[] = {"", "[]", "{\"a\"", "{\"a\":", "{\"a\":\"x", "{\"a\":[1,2", "{\"a\":\"\\u12\"}",
	                     "{,}", "{\"a\":1 \"b\":2}"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		pos = 0;
		int n = 0;
		while (attrs_next(bad[i], &pos, k, sizeof k, v, sizeof v) && n < 10)
			n++;
		assert_true(n <= 1);
	}
	/* truncation keeps the strings terminated */
	pos = 0;
	char ks[3], vs[4];
	assert_true(attrs_next("{\"long key\":\"long value\"}", &pos, ks, sizeof ks, vs, sizeof vs));
	assert_string_equal(ks, "lo");
	assert_string_equal(vs, "lon");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape_sequences_removed),
		cmocka_unit_test(test_c1_controls),
		cmocka_unit_test(test_c0_and_del),
		cmocka_unit_test(test_malformed_utf8),
		cmocka_unit_test(test_widths),
		cmocka_unit_test(test_canvas_alignment),
		cmocka_unit_test(test_canvas_wide_overwrite),
		cmocka_unit_test(test_canvas_ascii),
		cmocka_unit_test(test_attrs_reader),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
