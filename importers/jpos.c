/*
 * jpos.c - see jpos.h. A recursive-descent reader over a byte range with
 * an arena for the tree. Positions are tracked as the current line number
 * and the address where that line starts; newlines can only appear in white
 * space (a raw newline inside a string is an error), so only the white space
 * skipper has to count them.
 */
#include "jpos.h"

#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

/* ---- arena ---------------------------------------------------------------- */

typedef struct Chunk {
	struct Chunk *next;
	size_t used, cap;
	_Alignas(16) unsigned char mem[];
} Chunk;

struct JpDoc {
	Chunk *head;
};

static void *arena(JpDoc *d, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (d->head == NULL || d->head->cap - d->head->used < n) {
		size_t cap = n > 32768 ? n : 32768;
		Chunk *c = xmalloc(sizeof *c + cap);
		c->next = d->head;
		c->used = 0;
		c->cap = cap;
		d->head = c;
	}
	void *p = d->head->mem + d->head->used;
	d->head->used += n;
	return p;
}

void jp_free(JpDoc *doc)
{
	if (doc == NULL)
		return;
	for (Chunk *c = doc->head, *n; c; c = n) {
		n = c->next;
		free(c);
	}
	free(doc);
}

/* ---- parser --------------------------------------------------------------- */

typedef struct P {
	const char *s, *e;     /* cursor, end */
	const char *lstart;    /* where the current line starts */
	long line;
	const char *name;
	JpDoc *doc;
	Err *err;
	Buf tmp;
	int depth;
} P;

static int fail(P *p, const char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(P *p, const char *at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = err_vat(p->err, TT_EPARSE, p->name, p->line, (long)(at - p->lstart) + 1, fmt, ap);
	va_end(ap);
	return rc;
}

static void ws(P *p)
{
	while (p->s < p->e) {
		char c = *p->s;
		if (c == '\n') {
			p->line++;
			p->lstart = ++p->s;
		} else if (c == ' ' || c == '\t' || c == '\r') {
			p->s++;
		} else {
			break;
		}
	}
}

static JpVal *node(P *p, JpType t, const char *at)
{
	JpVal *v = arena(p->doc, sizeof *v);
	memset(v, 0, sizeof *v);
	v->type = t;
	v->line = p->line;
	v->col = (long)(at - p->lstart) + 1;
	return v;
}

static char *arena_str(P *p, const char *s, size_t n)
{
	char *c = arena(p->doc, n + 1);
	memcpy(c, s, n);
	c[n] = '\0';
	return c;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static void put_utf8(Buf *b, unsigned cp)
{
	char o[4];
	int n;
	if (cp < 0x80) {
		o[0] = (char)cp, n = 1;
	} else if (cp < 0x800) {
		o[0] = (char)(0xC0 | (cp >> 6)), o[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
	} else if (cp < 0x10000) {
		o[0] = (char)(0xE0 | (cp >> 12)), o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		o[2] = (char)(0x80 | (cp & 0x3F)), n = 3;
	} else {
		o[0] = (char)(0xF0 | (cp >> 18)), o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
		o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), o[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
	}
	buf_add(b, o, (size_t)n);
}

/* Length of the valid UTF-8 sequence at s, or 0. */
static size_t utf8_len(const unsigned char *s, const unsigned char *e)
{
	unsigned c = s[0], cp, min;
	size_t len;
	if (c < 0x80)
		return 1;
	if ((c & 0xE0) == 0xC0)
		len = 2, cp = c & 0x1F, min = 0x80;
	else if ((c & 0xF0) == 0xE0)
		len = 3, cp = c & 0x0F, min = 0x800;
	else if ((c & 0xF8) == 0xF0)
		len = 4, cp = c & 0x07, min = 0x10000;
	else
		return 0;
	if ((size_t)(e - s) < len)
		return 0;
	for (size_t k = 1; k < len; k++) {
		if ((s[k] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[k] & 0x3F);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return len;
}

static int read_u4(P *p, const char *at, unsigned *out)
{
	if (p->e - at < 4)
		return fail(p, at, "\\u needs four hex digits");
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		int h = hexval((unsigned char)at[i]);
		if (h < 0)
			return fail(p, at, "\\u needs four hex digits");
		v = v * 16 + (unsigned)h;
	}
	*out = v;
	return 0;
}

/* p->s at the opening quote; decodes into p->tmp. */
static int string(P *p)
{
	const char *open = p->s++;
	buf_reset(&p->tmp);
	for (;;) {
		if (p->s >= p->e)
			return fail(p, open, "string is not terminated");
		unsigned char c = (unsigned char)*p->s;
		if (c == '"') {
			p->s++;
			return 0;
		}
		if (c < 0x20)
			return fail(p, p->s, "control character inside a string (escape it)");
		if (c == '\\') {
			const char *esc = p->s;
			if (p->s + 1 >= p->e)
				return fail(p, esc, "string is not terminated");
			char x = p->s[1];
			p->s += 2;
			switch (x) {
			case '"': buf_addc(&p->tmp, '"'); break;
			case '\\': buf_addc(&p->tmp, '\\'); break;
			case '/': buf_addc(&p->tmp, '/'); break;
			case 'b': buf_addc(&p->tmp, '\b'); break;
			case 'f': buf_addc(&p->tmp, '\f'); break;
			case 'n': buf_addc(&p->tmp, '\n'); break;
			case 'r': buf_addc(&p->tmp, '\r'); break;
			case 't': buf_addc(&p->tmp, '\t'); break;
			case 'u': {
				unsigned cp;
				if (read_u4(p, p->s, &cp))
					return TT_EPARSE;
				p->s += 4;
				if (cp >= 0xD800 && cp <= 0xDBFF) {
					unsigned lo;
					if (p->e - p->s < 6 || p->s[0] != '\\' || p->s[1] != 'u' ||
					    read_u4(p, p->s + 2, &lo) || lo < 0xDC00 || lo > 0xDFFF)
						return fail(p, esc, "unpaired surrogate in \\u escape");
					p->s += 6;
					cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
				} else if (cp >= 0xDC00 && cp <= 0xDFFF) {
					return fail(p, esc, "unpaired surrogate in \\u escape");
				}
				put_utf8(&p->tmp, cp);
				break;
			}
			default:
				return fail(p, esc, "invalid escape in string");
			}
			continue;
		}
		size_t n = utf8_len((const unsigned char *)p->s, (const unsigned char *)p->e);
		if (n == 0)
			return fail(p, p->s, "invalid UTF-8");
		buf_add(&p->tmp, p->s, n);
		p->s += n;
	}
}

static int is_d(const char *s, const char *e)
{
	return s < e && *s >= '0' && *s <= '9';
}

static int value(P *p, JpVal **out);

static int number(P *p, JpVal **out)
{
	const char *at = p->s, *s = p->s;
	if (s < p->e && *s == '-')
		s++;
	if (!is_d(s, p->e))
		return fail(p, at, "invalid number");
	if (*s == '0')
		s++;
	else
		while (is_d(s, p->e))
			s++;
	if (s < p->e && *s == '.') {
		s++;
		if (!is_d(s, p->e))
			return fail(p, at, "invalid number (digits must follow '.')");
		while (is_d(s, p->e))
			s++;
	}
	if (s < p->e && (*s == 'e' || *s == 'E')) {
		s++;
		if (s < p->e && (*s == '+' || *s == '-'))
			s++;
		if (!is_d(s, p->e))
			return fail(p, at, "invalid number (digits must follow the exponent)");
		while (is_d(s, p->e))
			s++;
	}
	JpVal *v = node(p, JP_NUM, at);
	v->n = (size_t)(s - at);
	v->s = arena_str(p, at, v->n);
	p->s = s;
	*out = v;
	return 0;
}

static int literal(P *p, const char *lit, JpVal **out, JpType t, int b)
{
	size_t n = strlen(lit);
	if ((size_t)(p->e - p->s) < n || memcmp(p->s, lit, n) != 0)
		return fail(p, p->s, "unexpected character '%c'",
		            (unsigned char)*p->s >= 0x20 && (unsigned char)*p->s < 0x7f ? *p->s : '?');
	JpVal *v = node(p, t, p->s);
	v->b = b;
	p->s += n;
	*out = v;
	return 0;
}

static int array(P *p, JpVal **out)
{
	JpVal *v = node(p, JP_ARR, p->s);
	p->s++;
	size_t cap = 0;
	JpVal **items = NULL;
	int rc = 0;
	ws(p);
	if (p->s < p->e && *p->s == ']') {
		p->s++;
		*out = v;
		return 0;
	}
	for (;;) {
		JpVal *it;
		ws(p);
		if ((rc = value(p, &it)) != 0)
			break;
		if (v->len == cap) {
			cap = cap ? cap * 2 : 8;
			items = xrealloc(items, cap * sizeof *items);
		}
		items[v->len++] = it;
		ws(p);
		if (p->s >= p->e) {
			rc = fail(p, p->s, "array is not closed (missing ']')");
			break;
		}
		if (*p->s == ',') {
			p->s++;
			ws(p);
			if (p->s < p->e && *p->s == ']') {
				rc = fail(p, p->s, "trailing comma in array");
				break;
			}
			continue;
		}
		if (*p->s == ']') {
			p->s++;
			break;
		}
		rc = fail(p, p->s, "expected ',' or ']' in array");
		break;
	}
	if (rc == 0 && v->len) {
		v->items = arena(p->doc, v->len * sizeof *items);
		memcpy(v->items, items, v->len * sizeof *items);
	}
	free(items);
	*out = v;
	return rc;
}

static int object(P *p, JpVal **out)
{
	JpVal *v = node(p, JP_OBJ, p->s);
	p->s++;
	size_t cap = 0;
	JpMember *m = NULL;
	int rc = 0;
	ws(p);
	if (p->s < p->e && *p->s == '}') {
		p->s++;
		*out = v;
		return 0;
	}
	for (;;) {
		ws(p);
		if (p->s >= p->e || *p->s != '"') {
			rc = fail(p, p->s, p->s < p->e && *p->s == '}' ? "trailing comma in object"
			                                               : "expected a string key");
			break;
		}
		const char *kat = p->s;
		if ((rc = string(p)) != 0)
			break;
		for (size_t i = 0; i < v->len; i++)
			if (m[i].key_len == p->tmp.len && memcmp(m[i].key, p->tmp.p, p->tmp.len) == 0) {
				rc = fail(p, kat, "duplicate key \"%.*s\"", (int)(p->tmp.len > 60 ? 60 : p->tmp.len),
				          p->tmp.p);
				break;
			}
		if (rc)
			break;
		if (v->len == cap) {
			cap = cap ? cap * 2 : 8;
			m = xrealloc(m, cap * sizeof *m);
		}
		JpMember *mm = &m[v->len];
		mm->key_len = p->tmp.len;
		mm->key = arena_str(p, buf_str(&p->tmp), p->tmp.len);
		ws(p);
		if (p->s >= p->e || *p->s != ':') {
			rc = fail(p, p->s, "expected ':' after the key");
			break;
		}
		p->s++;
		ws(p);
		if ((rc = value(p, &mm->val)) != 0)
			break;
		v->len++;
		ws(p);
		if (p->s >= p->e) {
			rc = fail(p, p->s, "object is not closed (missing '}')");
			break;
		}
		if (*p->s == ',') {
			p->s++;
			continue;
		}
		if (*p->s == '}') {
			p->s++;
			break;
		}
		rc = fail(p, p->s, "expected ',' or '}' in object");
		break;
	}
	if (rc == 0 && v->len) {
		v->members = arena(p->doc, v->len * sizeof *m);
		memcpy(v->members, m, v->len * sizeof *m);
	}
	free(m);
	*out = v;
	return rc;
}

static int value(P *p, JpVal **out)
{
	if (p->s >= p->e)
		return fail(p, p->s, "expected a value, found the end of the input");
	int rc;
	switch (*p->s) {
	case '{':
	case '[':
		if (++p->depth > JP_MAX_DEPTH)
			return fail(p, p->s, "nested deeper than %d levels", JP_MAX_DEPTH);
		rc = *p->s == '{' ? object(p, out) : array(p, out);
		p->depth--;
		return rc;
	case '"': {
		JpVal *v = node(p, JP_STR, p->s);
		if ((rc = string(p)) != 0)
			return rc;
		v->n = p->tmp.len;
		v->s = arena_str(p, buf_str(&p->tmp), p->tmp.len);
		*out = v;
		return 0;
	}
	case 't': return literal(p, "true", out, JP_BOOL, 1);
	case 'f': return literal(p, "false", out, JP_BOOL, 0);
	case 'n': return literal(p, "null", out, JP_NULL, 0);
	default:
		if (*p->s == '-' || (*p->s >= '0' && *p->s <= '9'))
			return number(p, out);
		return fail(p, p->s, "unexpected character '%c'",
		            (unsigned char)*p->s >= 0x20 && (unsigned char)*p->s < 0x7f ? *p->s : '?');
	}
}

int jp_parse(const char *text, size_t len, const char *name, long line0, JpDoc **doc,
             JpVal **root, Err *err)
{
	P p = {
		.s = text,
		.e = text + len,
		.lstart = text,
		.line = line0,
		.name = name,
		.err = err,
	};
	*doc = NULL;
	*root = NULL;
	p.doc = xcalloc(1, sizeof *p.doc);
	buf_init(&p.tmp);
	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
		fail(&p, text, "byte order mark at the start (not allowed in JSON)");
		goto bad;
	}
	ws(&p);
	if (value(&p, root))
		goto bad;
	ws(&p);
	if (p.s != p.e) {
		fail(&p, p.s, "unexpected text after the JSON value");
		goto bad;
	}
	buf_fini(&p.tmp);
	*doc = p.doc;
	return 0;
bad:
	buf_fini(&p.tmp);
	jp_free(p.doc);
	*root = NULL;
	return TT_EPARSE;
}

/* ---- access --------------------------------------------------------------- */

int jp_err(Err *err, const char *name, const JpVal *at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = err_vat(err, TT_EPARSE, name, at ? at->line : 1, at ? at->col : 1, fmt, ap);
	va_end(ap);
	return rc;
}

JpVal *jp_get(const JpVal *o, const char *key)
{
	if (o == NULL || o->type != JP_OBJ)
		return NULL;
	size_t n = strlen(key);
	for (size_t i = 0; i < o->len; i++)
		if (o->members[i].key_len == n && memcmp(o->members[i].key, key, n) == 0)
			return o->members[i].val;
	return NULL;
}

JpVal *jp_get_nn(const JpVal *o, const char *key)
{
	JpVal *v = jp_get(o, key);
	return v && v->type != JP_NULL ? v : NULL;
}

const char *jp_type_name(JpType t)
{
	switch (t) {
	case JP_NULL: return "null";
	case JP_BOOL: return "a boolean";
	case JP_NUM: return "a number";
	case JP_STR: return "a string";
	case JP_ARR: return "an array";
	default: return "an object";
	}
}

double jp_strtod(const char *s)
{
	static locale_t cloc;
	if (cloc == (locale_t)0)
		cloc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
	locale_t old = cloc ? uselocale(cloc) : (locale_t)0;
	double v = strtod(s, NULL);
	if (cloc)
		uselocale(old);
	return v;
}

int jp_num(const JpVal *v, double *out)
{
	if (v == NULL || v->type != JP_NUM)
		return TT_EPARSE;
	double d = jp_strtod(v->s);
	if (isinf(d))
		return TT_EPARSE;
	*out = d;
	return 0;
}

int jp_int(const JpVal *v, int64_t *out)
{
	if (v == NULL || v->type != JP_NUM || strpbrk(v->s, ".eE"))
		return TT_EPARSE;
	const char *s = v->s;
	int neg = *s == '-';
	s += neg;
	uint64_t x = 0;
	for (; *s; s++) {
		unsigned d = (unsigned)(*s - '0');
		if (x > (UINT64_C(9223372036854775808) - d) / 10)
			return TT_EPARSE;
		x = x * 10 + d;
	}
	if (!neg && x > (uint64_t)INT64_MAX)
		return TT_EPARSE;
	*out = neg ? (int64_t)(0 - x) : (int64_t)x;
	return 0;
}
