/*
 * sanitize.c - untrusted bytes to printable code points with widths.
 *
 * Invariant: san_next() never yields a code point for which
 * san_cp_width() is not 1 or 2. Everything that draws text (canvas.c)
 * goes through san_next(), so a control byte cannot reach ncurses.
 */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700 /* wcwidth(); ncursesw's flags already define it */
#endif
#include "sanitize.h"

#include <locale.h>
#include <string.h>
#include <wchar.h>

static locale_t utf8_loc = (locale_t)0;
static int inited;

void san_init(void)
{
	if (inited)
		return;
	inited = 1;
	utf8_loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
	if (utf8_loc == (locale_t)0)
		utf8_loc = newlocale(LC_CTYPE_MASK, "C.utf8", (locale_t)0);
	if (utf8_loc == (locale_t)0)
		utf8_loc = newlocale(LC_CTYPE_MASK, "en_US.UTF-8", (locale_t)0);
}

/* Fallback when no UTF-8 locale exists: East Asian wide and fullwidth
 * blocks and the common emoji planes are 2 columns, combining marks 0. */
static int table_width(uint32_t cp)
{
	static const uint32_t zero[][2] = {
		{0x0300, 0x036F}, {0x0483, 0x0489}, {0x0591, 0x05BD}, {0x0610, 0x061A},
		{0x064B, 0x065F}, {0x0E31, 0x0E31}, {0x0E34, 0x0E3A}, {0x1AB0, 0x1AFF},
		{0x1DC0, 0x1DFF}, {0x200B, 0x200D}, {0x20D0, 0x20FF}, {0xFE00, 0xFE0F},
		{0xFE20, 0xFE2F}, {0xFEFF, 0xFEFF},
	};
	static const uint32_t wide[][2] = {
		{0x1100, 0x115F}, {0x2E80, 0x303E}, {0x3041, 0x33FF}, {0x3400, 0x4DBF},
		{0x4E00, 0x9FFF}, {0xA000, 0xA4CF}, {0xAC00, 0xD7A3}, {0xF900, 0xFAFF},
		{0xFE30, 0xFE4F}, {0xFF00, 0xFF60}, {0xFFE0, 0xFFE6}, {0x1F300, 0x1F64F},
		{0x1F900, 0x1F9FF}, {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD},
	};
	for (size_t i = 0; i < sizeof zero / sizeof zero[0]; i++)
		if (cp >= zero[i][0] && cp <= zero[i][1])
			return 0;
	for (size_t i = 0; i < sizeof wide / sizeof wide[0]; i++)
		if (cp >= wide[i][0] && cp <= wide[i][1])
			return 2;
	return 1;
}

static int is_bidi_control(uint32_t cp)
{
	return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) ||
	       cp == 0x200E || cp == 0x200F || cp == 0x061C;
}

int san_cp_width(uint32_t cp)
{
	if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0))
		return -1;
	if (cp < 0x7F)
		return 1;
	if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF || is_bidi_control(cp))
		return -1;
	if (cp == 0x2028 || cp == 0x2029) /* line/paragraph separators */
		return -1;
	if (!inited)
		san_init();
	if (utf8_loc != (locale_t)0) {
		locale_t old = uselocale(utf8_loc);
		int w = wcwidth((wchar_t)cp);
		uselocale(old);
		if (w > 2)
			w = 2;
		return w;
	}
	return table_width(cp);
}

/* Decodes one UTF-8 sequence at s[*i]. Returns the code point, or -1 for
 * invalid input (then *i has skipped the maximal invalid subpart). */
static long utf8_decode(const unsigned char *s, size_t len, size_t *i)
{
	unsigned char c = s[*i];
	if (c < 0x80) {
		(*i)++;
		return c;
	}
	int need;
	uint32_t cp;
	unsigned char lo = 0x80, hi = 0xBF;
	if (c >= 0xC2 && c <= 0xDF) {
		need = 1;
		cp = c & 0x1F;
	} else if (c >= 0xE0 && c <= 0xEF) {
		need = 2;
		cp = c & 0x0F;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F; /* no surrogates */
	} else if (c >= 0xF0 && c <= 0xF4) {
		need = 3;
		cp = c & 0x07;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
	} else {
		(*i)++;
		return -1;
	}
	size_t j = *i + 1;
	for (int k = 0; k < need; k++, j++) {
		if (j >= len) {
			*i = j;
			return -1;
		}
		unsigned char d = s[j];
		if (k == 0 ? (d < lo || d > hi) : (d < 0x80 || d > 0xBF)) {
			*i = j; /* the bad byte starts the next unit */
			return -1;
		}
		cp = (cp << 6) | (d & 0x3F);
	}
	*i = j;
	return (long)cp;
}

/* Skips the parameter, intermediate and final bytes of a CSI whose
 * introducer has been consumed. Stops before any other byte. */
static void skip_csi(const unsigned char *s, size_t len, size_t *i)
{
	while (*i < len && s[*i] >= 0x20 && s[*i] <= 0x3F)
		(*i)++;
	if (*i < len && s[*i] >= 0x40 && s[*i] <= 0x7E)
		(*i)++;
}

/* Skips the body of an OSC/DCS/SOS/PM/APC string up to and including its
 * terminator: BEL, ESC \, the C1 ST (raw 0x9C or U+009C), CAN or SUB. An
 * ESC followed by anything else ends the string without being consumed. */
static void skip_string(const unsigned char *s, size_t len, size_t *i)
{
	while (*i < len) {
		unsigned char c = s[*i];
		if (c == 0x07 || c == 0x18 || c == 0x1A || c == 0x9C) {
			(*i)++;
			return;
		}
		if (c == 0x1B) {
			if (*i + 1 < len && s[*i + 1] == '\\')
				*i += 2;
			return;
		}
		if (c == 0xC2 && *i + 1 < len && s[*i + 1] == 0x9C) {
			*i += 2;
			return;
		}
		(*i)++;
	}
}

/* Consumes an escape sequence whose ESC is at s[*i]. */
static void skip_escape(const unsigned char *s, size_t len, size_t *i)
{
	(*i)++; /* ESC */
	if (*i >= len)
		return;
	unsigned char c = s[*i];
	if (c == '[') {
		(*i)++;
		skip_csi(s, len, i);
	} else if (c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_') {
		(*i)++;
		skip_string(s, len, i);
	} else if (c >= 0x20 && c <= 0x2F) {
		while (*i < len && s[*i] >= 0x20 && s[*i] <= 0x2F)
			(*i)++;
		if (*i < len && s[*i] >= 0x30 && s[*i] <= 0x7E)
			(*i)++;
	} else if (c >= 0x30 && c <= 0x7E) {
		(*i)++;
	}
}

int san_next(const char *str, size_t len, size_t *i, uint32_t *cp, int *width)
{
	const unsigned char *s = (const unsigned char *)str;
	while (*i < len) {
		unsigned char c = s[*i];
		if (c == '\0')
			return 0;
		if (c == 0x1B) {
			skip_escape(s, len, i);
			*cp = SAN_REPLACEMENT;
			*width = 1;
			return 1;
		}
		if (c == '\t' || c == '\n' || c == '\r') {
			(*i)++;
			*cp = ' ';
			*width = 1;
			return 1;
		}
		long d = utf8_decode(s, len, i);
		if (d < 0) {
			*cp = SAN_REPLACEMENT;
			*width = 1;
			return 1;
		}
		uint32_t u = (uint32_t)d;
		if (u == 0x9B) {
			skip_csi(s, len, i);
		} else if (u == 0x90 || u == 0x98 || u == 0x9D || u == 0x9E || u == 0x9F) {
			skip_string(s, len, i);
		}
		int w = san_cp_width(u);
		if (w == 0)
			continue; /* combining mark or zero-width: dropped */
		if (w < 0) {
			*cp = SAN_REPLACEMENT;
			*width = 1;
			return 1;
		}
		*cp = u;
		*width = w;
		return 1;
	}
	return 0;
}

int san_width(const char *s)
{
	if (s == NULL)
		return 0;
	size_t len = strlen(s), i = 0;
	uint32_t cp;
	int w, cols = 0;
	while (san_next(s, len, &i, &cp, &w))
		cols += w;
	return cols;
}

int san_utf8_encode(uint32_t cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xC0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xE0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	out[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

int san_copy(const char *s, char *out, size_t outsz, int max_cols)
{
	size_t o = 0;
	int cols = 0;
	if (outsz == 0)
		return 0;
	if (s) {
		size_t len = strlen(s), i = 0;
		uint32_t cp;
		int w;
		while (san_next(s, len, &i, &cp, &w)) {
			char enc[4];
			int n = san_utf8_encode(cp, enc);
			if ((max_cols >= 0 && cols + w > max_cols) || o + (size_t)n + 1 > outsz)
				break;
			memcpy(out + o, enc, (size_t)n);
			o += (size_t)n;
			cols += w;
		}
	}
	out[o] = '\0';
	return cols;
}

int san_clean(const char *s, char *out, size_t outsz)
{
	return san_copy(s, out, outsz, -1);
}
