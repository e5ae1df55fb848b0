/*
 * attrs.c - top-level members of a JSON object, for the waterfall's
 * attribute panel.
 */
#include "attrs.h"

#include <stdint.h>
#include <string.h>

#include "sanitize.h"

static void skip_ws(const char *s, size_t *i)
{
	while (s[*i] == ' ' || s[*i] == '\t' || s[*i] == '\n' || s[*i] == '\r')
		(*i)++;
}

static int hex4(const char *s, uint32_t *out)
{
	uint32_t v = 0;
	for (int k = 0; k < 4; k++) {
		char c = s[k];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (uint32_t)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

static void put(char *out, size_t sz, size_t *o, const char *p, size_t n)
{
	if (*o + n + 1 > sz)
		return;
	memcpy(out + *o, p, n);
	*o += n;
	out[*o] = '\0';
}

/* Reads a JSON string starting at the opening quote. */
static int read_string(const char *s, size_t *i, char *out, size_t sz)
{
	size_t o = 0;
	if (sz)
		out[0] = '\0';
	if (s[*i] != '"')
		return -1;
	(*i)++;
	while (s[*i] && s[*i] != '"') {
		if (s[*i] != '\\') {
			put(out, sz, &o, s + *i, 1);
			(*i)++;
			continue;
		}
		char e = s[*i + 1];
		if (e == '\0')
			return -1;
		*i += 2;
		char c;
		switch (e) {
		case 'n': c = '\n'; break;
		case 't': c = '\t'; break;
		case 'r': c = '\r'; break;
		case 'b': c = '\b'; break;
		case 'f': c = '\f'; break;
		case 'u': {
			uint32_t cp;
			if (strlen(s + *i) < 4 || hex4(s + *i, &cp))
				return -1;
			*i += 4;
			if (cp >= 0xD800 && cp <= 0xDBFF && s[*i] == '\\' && s[*i + 1] == 'u') {
				uint32_t lo;
				if (strlen(s + *i + 2) >= 4 && hex4(s + *i + 2, &lo) == 0 && lo >= 0xDC00 &&
				    lo <= 0xDFFF) {
					cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
					*i += 6;
				}
			}
			if (cp >= 0xD800 && cp <= 0xDFFF)
				cp = SAN_REPLACEMENT;
			char enc[4];
			int n = cp == 0 ? 0 : san_utf8_encode(cp, enc);
			if (cp == 0) { /* NUL would end the C string: show it as a control */
				enc[0] = 0x01;
				n = 1;
			}
			put(out, sz, &o, enc, (size_t)n);
			continue;
		}
		default: c = e;
		}
		put(out, sz, &o, &c, 1);
	}
	if (s[*i] != '"')
		return -1;
	(*i)++;
	return 0;
}

/* Steps over a JSON string starting at its opening quote. */
static int skip_string(const char *s, size_t *i)
{
	(*i)++;
	while (s[*i] && s[*i] != '"') {
		if (s[*i] == '\\' && s[*i + 1])
			(*i)++;
		(*i)++;
	}
	if (s[*i] != '"')
		return -1;
	(*i)++;
	return 0;
}

/* Copies a non-string value (number, literal, array, object) as raw text. */
static int read_raw(const char *s, size_t *i, char *out, size_t sz)
{
	size_t o = 0, start = *i;
	int depth = 0;
	if (sz)
		out[0] = '\0';
	while (s[*i]) {
		char c = s[*i];
		if (c == '"') {
			if (skip_string(s, i) < 0)
				return -1;
			continue;
		}
		if (c == '[' || c == '{')
			depth++;
		else if (c == ']' || c == '}') {
			if (depth == 0)
				break;
			depth--;
		} else if (c == ',' && depth == 0)
			break;
		(*i)++;
	}
	if (depth != 0 || *i == start)
		return -1;
	size_t n = *i - start;
	while (n > 0 && (s[start + n - 1] == ' ' || s[start + n - 1] == '\n'))
		n--;
	if (n + 1 > sz)
		n = sz ? sz - 1 : 0;
	put(out, sz, &o, s + start, n);
	return 0;
}

/* Steps over the opening bracket (first call, *pos == 0) or the comma
 * before the next member or element, and the spaces after it. Returns the
 * position of the member, or 0 at the end or on malformed input. */
static size_t next_item(const char *json, size_t pos, char open, char close)
{
	size_t i = pos;
	skip_ws(json, &i);
	if (pos == 0) {
		if (json[i] != open)
			return 0;
		i++;
	} else if (json[i] == ',') {
		i++;
	} else {
		return 0;
	}
	skip_ws(json, &i);
	return json[i] == close ? 0 : i;
}

/* Reads a value (string unescaped, anything else raw) at json[*i]. */
static int read_value(const char *json, size_t *i, char *val, size_t vsz)
{
	int rc = json[*i] == '"' ? read_string(json, i, val, vsz) : read_raw(json, i, val, vsz);
	if (rc < 0)
		return 0;
	skip_ws(json, i);
	return 1;
}

int attrs_next(const char *json, size_t *pos, char *key, size_t ksz, char *val, size_t vsz)
{
	if (json == NULL)
		return 0;
	size_t i = next_item(json, *pos, '{', '}');
	if (i == 0 || read_string(json, &i, key, ksz) < 0)
		return 0;
	skip_ws(json, &i);
	if (json[i] != ':')
		return 0;
	i++;
	skip_ws(json, &i);
	if (!read_value(json, &i, val, vsz))
		return 0;
	*pos = i;
	return 1;
}

int attrs_elem_next(const char *json, size_t *pos, char *val, size_t vsz)
{
	if (json == NULL)
		return 0;
	size_t i = next_item(json, *pos, '[', ']');
	if (i == 0 || !read_value(json, &i, val, vsz))
		return 0;
	*pos = i;
	return 1;
}
