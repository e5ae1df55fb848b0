/*
 * otlp_common.c - see otlp_common.h.
 *
 * The attribute machine keeps one frame per open JSON container inside the
 * KeyValue list and writes JSON as events arrive. Objects are unordered, so
 * a KeyValue may carry "value" before "key": the value is rendered first and
 * the key is slid in front of it when it shows up (rare, and bounded by the
 * size of that one value).
 */
#include "otlp_common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

/* ---- small value checks ---------------------------------------------- */

/* Hex digit value + 1; 0 for anything else. */
static const unsigned char hex1[256] = {
	['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,
	['6'] = 7,  ['7'] = 8,  ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12,
	['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16, ['A'] = 11, ['B'] = 12,
	['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

#if defined(__x86_64__)
/* otlp_hex_id() for ids of 16 or 32 digits (all of OTLP's), 16 at a time:
 * the same answer and the same output as the byte loop below. */
static int hex_id_sse2(const char *s, size_t n, char *out)
{
	const __m128i lower = _mm_set1_epi8(0x20);
	__m128i low[2];
	unsigned bad = 0, zero = 0xffffffffu;
	for (size_t k = 0; k < n / 16; k++) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + 16 * k));
		__m128i l = _mm_or_si128(x, lower);  /* lowercases A-F, keeps digits */
		/* signed compares: bytes >= 0x80 are negative and fail both */
		__m128i digit = _mm_and_si128(_mm_cmpgt_epi8(x, _mm_set1_epi8('0' - 1)),
		                              _mm_cmplt_epi8(x, _mm_set1_epi8('9' + 1)));
		__m128i af = _mm_and_si128(_mm_cmpgt_epi8(l, _mm_set1_epi8('a' - 1)),
		                           _mm_cmplt_epi8(l, _mm_set1_epi8('f' + 1)));
		unsigned sh = 16 * (unsigned)k;
		bad |= ((unsigned)_mm_movemask_epi8(_mm_or_si128(digit, af)) ^ 0xffffu) << sh;
		zero &= ((unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8('0'))) << sh) |
		        ~(0xffffu << sh);
		low[k] = l;
	}
	if (bad)
		return OTLP_ID_NOT_HEX;
	if (zero == 0xffffffffu)
		return OTLP_ID_ZERO;
	for (size_t k = 0; k < n / 16; k++)
		_mm_storeu_si128((__m128i *)(void *)(out + 16 * k), low[k]);
	out[n] = '\0';
	return OTLP_ID_OK;
}
#endif

int otlp_hex_id(const char *s, size_t n, size_t want, char *out)
{
	char tmp[64];
	if (n != want || want >= sizeof tmp)
		return OTLP_ID_LENGTH;
#if defined(__x86_64__)
	if (n == 16 || n == 32)
		return hex_id_sse2(s, n, out);
#endif
	unsigned bad = 0, nonzero = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned v = hex1[(unsigned char)s[i]];
		bad |= v == 0;
		nonzero |= v > 1;
		tmp[i] = (char)(s[i] | 0x20);  /* lowercases A-F, keeps digits */
	}
	if (bad)
		return OTLP_ID_NOT_HEX;
	if (!nonzero)
		return OTLP_ID_ZERO;
	memcpy(out, tmp, n);
	out[n] = '\0';
	return OTLP_ID_OK;
}

int otlp_parse_int(const char *s, size_t n, int64_t *out)
{
	size_t i = 0;
	int neg = 0;
	if (i < n && s[i] == '-') {
		neg = 1;
		i++;
	}
	if (i == n)
		return OTLP_NUM_SYNTAX;
	uint64_t v = 0;
	const uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	/* v * 10 + d > limit, without a division per digit */
	const uint64_t lim10 = limit / 10;
	const unsigned limd = (unsigned)(limit % 10);
	int range = 0;
	for (; i < n; i++) {
		unsigned d = (unsigned char)s[i] - '0';
		if (d > 9)
			return OTLP_NUM_SYNTAX;
		if (v > lim10 || (v == lim10 && d > limd))
			range = 1;  /* keep scanning: junk after digits is a syntax error */
		else
			v = v * 10 + d;
	}
	if (range)
		return OTLP_NUM_RANGE;
	if (neg)
		*out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
	else
		*out = (int64_t)v;
	return OTLP_NUM_OK;
}

int otlp_is_json_number(const char *s, size_t n)
{
	size_t i = 0;
	if (i < n && s[i] == '-')
		i++;
	if (i == n)
		return 0;
	if (s[i] == '0') {
		i++;
	} else if (s[i] >= '1' && s[i] <= '9') {
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
	} else {
		return 0;
	}
	if (i < n && s[i] == '.') {
		i++;
		size_t d = i;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
		if (i == d)
			return 0;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		size_t d = i;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
		if (i == d)
			return 0;
	}
	return i == n;
}

/* A byte that otlp_json_str() escapes: below 0x20, '"', '\\' or DEL. */
static int needs_escape(unsigned char c)
{
	return c < 0x20 || c == '"' || c == '\\' || c == 0x7f;
}

/* Nonzero when one of the bytes of x (a word of 8, or of 4 in the low
 * half) needs escaping. The usual "has a zero byte" bit tricks: exact for
 * the question "any such byte in the word", though not for which one. */
static uint64_t word_needs_escape(uint64_t x, uint64_t ones)
{
	const uint64_t highs = ones << 7;
	uint64_t ctl = (x - 0x20 * ones) & ~x & highs;
	uint64_t q = x ^ (0x22 * ones), bs = x ^ (0x5c * ones), del = x ^ (0x7f * ones);
	q = (q - ones) & ~q & highs;
	bs = (bs - ones) & ~bs & highs;
	del = (del - ones) & ~del & highs;
	return ctl | q | bs | del;
}

/* Copies the last r (< 16) bytes of a string, s, to o when none needs
 * escaping; 0 (nothing written) when one does. Two overlapping loads of 8
 * (or 4) bytes cover r without reading outside s. */
static int clean_tail(char *o, const char *s, size_t r)
{
	if (r >= 8) {
		uint64_t a, b;
		memcpy(&a, s, 8);
		memcpy(&b, s + r - 8, 8);
		const uint64_t ones = 0x0101010101010101ull;
		if (word_needs_escape(a, ones) | word_needs_escape(b, ones))
			return 0;
		memcpy(o, &a, 8);
		memcpy(o + r - 8, &b, 8);
		return 1;
	}
	if (r >= 4) {
		uint32_t a, b;
		memcpy(&a, s, 4);
		memcpy(&b, s + r - 4, 4);
		if (word_needs_escape(a, 0x01010101u) | word_needs_escape(b, 0x01010101u))
			return 0;
		memcpy(o, &a, 4);
		memcpy(o + r - 4, &b, 4);
		return 1;
	}
	return 0;
}

#if defined(__x86_64__)
/* Bit i: byte i of x needs escaping (SSE2 is part of x86-64). */
static unsigned escape_mask(__m128i x)
{
	const __m128i ctl_max = _mm_set1_epi8(0x1f);
	__m128i m = _mm_cmpeq_epi8(_mm_max_epu8(x, ctl_max), ctl_max);  /* unsigned <= 0x1f */
	m = _mm_or_si128(m, _mm_cmpeq_epi8(x, _mm_set1_epi8('"')));
	m = _mm_or_si128(m, _mm_cmpeq_epi8(x, _mm_set1_epi8('\\')));
	m = _mm_or_si128(m, _mm_cmpeq_epi8(x, _mm_set1_epi8(0x7f)));
	return (unsigned)_mm_movemask_epi8(m);
}
#endif

/* Writes straight into b's memory: one reservation for the common case of
 * nothing to escape, runs of clean bytes copied 16 at a time (each 16-byte
 * store may write past the run; the room is there and later bytes
 * overwrite it), and more room asked for only when an escape needs it.
 * Invariant at the top of the loop: from o there is room for the rest of
 * s as it is, one 16-byte store, the closing quote and the NUL. */
void otlp_json_str(Buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const size_t slack = 16 + 1;  /* a 16-byte store, the closing quote */
	otlp_buf_reserve(b, 1 + n + slack);
	char *o = b->p + b->len;
	char *end = b->p + b->cap - 1;  /* the NUL's place at the latest */
	*o++ = '"';
	size_t i = 0;
	while (i < n) {
#if defined(__x86_64__)
		if (i + 16 <= n) {
			__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
			_mm_storeu_si128((__m128i *)(void *)o, x);
			unsigned m = escape_mask(x);
			if (m == 0) {
				i += 16;
				o += 16;
				continue;
			}
			unsigned k = (unsigned)__builtin_ctz(m);
			i += k;
			o += k;
		} else
#endif
		if (n - i < 16 && clean_tail(o, s + i, n - i)) {
			o += n - i;
			break;
		} else if (!needs_escape((unsigned char)s[i])) {
			*o++ = s[i++];
			continue;
		}
		unsigned char c = (unsigned char)s[i++];
		if ((size_t)(end - o) < 6 + (n - i) + slack) {
			b->len = (size_t)(o - b->p);
			buf_reserve(b, 6 + (n - i) + slack);
			o = b->p + b->len;
			end = b->p + b->cap - 1;
		}
		*o++ = '\\';
		switch (c) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '\n': *o++ = 'n'; break;
		case '\r': *o++ = 'r'; break;
		case '\t': *o++ = 't'; break;
		default:
			o[0] = 'u';
			o[1] = '0';
			o[2] = '0';
			o[3] = hex[c >> 4];
			o[4] = hex[c & 15];
			o += 5;
		}
	}
	*o++ = '"';
	*o = '\0';
	b->len = (size_t)(o - b->p);
}

void otlp_json_int(Buf *b, int64_t v)
{
	char tmp[24];
	char *p = tmp + sizeof tmp;
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*--p = '-';
	otlp_buf_add(b, p, (size_t)(tmp + sizeof tmp - p));
}

double otlp_kv_number(const OtlpKv *kv)
{
	switch (kv->type) {
	case OTLP_AV_INT:
	case OTLP_AV_BOOL:
		return (double)kv->i;
	case OTLP_AV_DOUBLE:
		/* JSON number text, or NaN/Infinity/-Infinity, all of which
		 * strtod reads */
		return strtod(kv->text, NULL);
	default:
		return NAN;
	}
}

/* ---- locations ---------------------------------------------------------- */

void otlp_loc_init(OtlpLoc *l)
{
	memset(l, 0, sizeof *l);
	l->cur_line = l->cur_col = 1;
	l->prev_line = l->prev_col = 1;
}

/* Advances (line, col) over n bytes of p. */
static void advance(const unsigned char *p, size_t n, long *line, long *col)
{
	const unsigned char *end = p + n, *nl;
	const unsigned char *last = NULL;
	while (p < end && (nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		(*line)++;
		last = nl;
		p = nl + 1;
	}
	if (last)
		*col = 1 + (long)(end - (last + 1));
	else
		*col += (long)(end - p);
}

void otlp_loc_feed(OtlpLoc *l, const unsigned char *data, size_t len)
{
	long line = l->cur_line, col = l->cur_col;
	if (l->cur)
		advance(l->cur, l->cur_len, &line, &col);
	l->prev = l->cur;
	l->prev_len = l->cur_len;
	l->prev_base = l->cur_base;
	l->prev_line = l->cur_line;
	l->prev_col = l->cur_col;
	l->cur_base += l->cur_len;
	l->cur = data;
	l->cur_len = data ? len : 0;
	l->cur_line = line;
	l->cur_col = col;
}

/* The byte at absolute offset off, or -1 when it is not held. */
static int byte_at(const OtlpLoc *l, uint64_t off)
{
	if (l->cur && off >= l->cur_base && off < l->cur_base + l->cur_len)
		return l->cur[off - l->cur_base];
	if (l->prev && off >= l->prev_base && off < l->prev_base + l->prev_len)
		return l->prev[off - l->prev_base];
	return -1;
}

void otlp_loc_pos(const OtlpLoc *l, uint64_t off, long *line, long *col)
{
	long ln, cl;
	if (off >= l->cur_base) {
		ln = l->cur_line;
		cl = l->cur_col;
		uint64_t n = off - l->cur_base;
		if (n > l->cur_len)
			n = l->cur_len;
		if (l->cur)
			advance(l->cur, (size_t)n, &ln, &cl);
	} else if (l->prev) {
		ln = l->prev_line;
		cl = l->prev_col;
		if (off > l->prev_base)
			advance(l->prev, (size_t)(off - l->prev_base), &ln, &cl);
	} else {
		ln = l->cur_line;
		cl = l->cur_col;
	}
	*line = ln;
	*col = cl;
}

void otlp_loc_mark_pos(const OtlpLoc *l, OtlpMark m, long *line, long *col)
{
	uint64_t p = m.from;
	int c;
	while (p < m.end && (c = byte_at(l, p)) >= 0 &&
	       (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ',' || c == ':'))
		p++;
	if (p < m.end && byte_at(l, p) < 0) {
		/* the gap is no longer held; the token's last byte is a fair guess */
		p = m.end ? m.end - 1 : 0;
	}
	otlp_loc_pos(l, p, line, col);
}

/* ---- attribute lists -------------------------------------------------- */

enum {
	A_LIST,    /* [KeyValue...], rendered as {..} */
	A_KV,      /* {"key":..,"value":AnyValue} */
	A_ANY,     /* AnyValue */
	A_ARRVAL,  /* {"values":[AnyValue...]} */
	A_VALUES,  /* [AnyValue...], rendered as [..] */
	A_KVLIST,  /* {"values":[KeyValue...]} */
	A_SKIP,    /* an unknown field's value */
};

enum {
	AK_NONE,
	AK_KEY,
	AK_VALUE,
	AK_STRING,
	AK_BOOL,
	AK_INT,
	AK_DOUBLE,
	AK_BYTES,
	AK_ARRAY,
	AK_KVLIST,
	AK_VALUES,
	AK_COUNT
};

static const char *const akey_name[AK_COUNT] = {
	"", "key", "value", "stringValue", "boolValue", "intValue", "doubleValue",
	"bytesValue", "arrayValue", "kvlistValue", "values",
};

static int akey(const char *s, size_t n)
{
	switch (n) {
	case 3: return memcmp(s, "key", 3) == 0 ? AK_KEY : AK_NONE;
	case 5: return memcmp(s, "value", 5) == 0 ? AK_VALUE : AK_NONE;
	case 6: return memcmp(s, "values", 6) == 0 ? AK_VALUES : AK_NONE;
	case 8: return memcmp(s, "intValue", 8) == 0 ? AK_INT : AK_NONE;
	case 9: return memcmp(s, "boolValue", 9) == 0 ? AK_BOOL : AK_NONE;
	case 10:
		if (memcmp(s, "bytesValue", 10) == 0)
			return AK_BYTES;
		return memcmp(s, "arrayValue", 10) == 0 ? AK_ARRAY : AK_NONE;
	case 11:
		if (memcmp(s, "stringValue", 11) == 0)
			return AK_STRING;
		if (memcmp(s, "doubleValue", 11) == 0)
			return AK_DOUBLE;
		return memcmp(s, "kvlistValue", 11) == 0 ? AK_KVLIST : AK_NONE;
	default: return AK_NONE;
	}
}

#define ABIT(k) (1u << (k))

/* Which keys each map frame understands; others are skipped. */
static const uint32_t akeys_allowed[] = {
	[A_KV] = ABIT(AK_KEY) | ABIT(AK_VALUE),
	[A_ANY] = ABIT(AK_STRING) | ABIT(AK_BOOL) | ABIT(AK_INT) | ABIT(AK_DOUBLE) |
	          ABIT(AK_BYTES) | ABIT(AK_ARRAY) | ABIT(AK_KVLIST),
	[A_ARRVAL] = ABIT(AK_VALUES),
	[A_KVLIST] = ABIT(AK_VALUES),
};

#define AV_FIELDS (akeys_allowed[A_ANY])

void otlp_attrs_init(OtlpAttrs *a)
{
	memset(a, 0, sizeof *a);
	buf_init(&a->key);
	buf_init(&a->text);
	buf_init(&a->tmp);
}

void otlp_attrs_fini(OtlpAttrs *a)
{
	buf_fini(&a->key);
	buf_fini(&a->text);
	buf_fini(&a->tmp);
}

static int fail(OtlpAttrs *a, const char *msg)
{
	size_t n = strlen(msg);
	if (n >= sizeof a->msg)
		n = sizeof a->msg - 1;
	memcpy(a->msg, msg, n);
	a->msg[n] = '\0';
	return OTLP_ATTRS_ERROR;
}

static int failf2(OtlpAttrs *a, const char *pre, const char *what, const char *post)
{
	a->msg[0] = '\0';
	size_t cap = sizeof a->msg;
	strncat(a->msg, pre, cap - 1);
	strncat(a->msg, what, cap - 1 - strlen(a->msg));
	strncat(a->msg, post, cap - 1 - strlen(a->msg));
	return OTLP_ATTRS_ERROR;
}

static int push(OtlpAttrs *a, int type)
{
	if (a->depth >= OTLP_ATTRS_MAX_DEPTH)
		return fail(a, "attribute value nested too deeply");
	OtlpAttrFrame *f = &a->st[a->depth++];
	memset(f, 0, sizeof *f);
	f->type = (unsigned char)type;
	f->start = a->out->len;
	return OTLP_ATTRS_MORE;
}

void otlp_attrs_begin(OtlpAttrs *a, Buf *out, OtlpKvFn fn, void *fn_ctx)
{
	a->out = out;
	a->fn = fn;
	a->fn_ctx = fn_ctx;
	a->depth = 0;
	push(a, A_LIST);
	otlp_buf_addc(out, '{');
}

/* The frame is the direct AnyValue of a top-level attribute. */
static int is_top_any(const OtlpAttrs *a)
{
	return a->depth == 3;
}

/* Writes the key of the KV frame f (text s, n). When the value came first,
 * slides the key in front of it. */
static void kv_write_key(OtlpAttrs *a, OtlpAttrFrame *f, const char *s, size_t n)
{
	Buf *o = a->out;
	if (!f->has_value) {
		otlp_json_str(o, s, n);
		otlp_buf_addc(o, ':');
	} else {
		buf_reset(&a->tmp);
		otlp_buf_add(&a->tmp, o->p + f->start, o->len - f->start);
		o->len = f->start;
		otlp_json_str(o, s, n);
		otlp_buf_addc(o, ':');
		otlp_buf_add(o, a->tmp.p, a->tmp.len);
	}
	f->has_key = 1;
}

/* Before an AnyValue's value field is written: at most one per AnyValue. */
static int any_value_field(OtlpAttrs *a, OtlpAttrFrame *f)
{
	if (f->seen & AV_FIELDS & ~ABIT(f->key))
		return failf2(a, "AnyValue has more than one value field (", akey_name[f->key], ")");
	return OTLP_ATTRS_MORE;
}

/* Before an element of A_LIST/A_VALUES: separator. */
static void element_sep(OtlpAttrs *a, OtlpAttrFrame *f)
{
	if (f->count++)
		otlp_buf_addc(a->out, ',');
}

static void capture(OtlpAttrs *a, int type, const char *s, size_t n)
{
	a->kv.type = type;
	buf_reset(&a->text);
	otlp_buf_add(&a->text, s, n);
}

static int on_start(OtlpAttrs *a, int is_map)
{
	OtlpAttrFrame *f = &a->st[a->depth - 1];
	switch (f->type) {
	case A_SKIP:
		return push(a, A_SKIP);
	case A_LIST:
		if (!is_map)
			return fail(a, "attribute list items must be KeyValue objects");
		element_sep(a, f);
		if (a->depth == 1) {
			buf_reset(&a->key);
			buf_reset(&a->text);
			memset(&a->kv, 0, sizeof a->kv);
		}
		return push(a, A_KV);
	case A_VALUES:
		if (!is_map)
			return fail(a, "arrayValue values must be AnyValue objects");
		element_sep(a, f);
		return push(a, A_ANY);
	default:
		break;
	}
	/* a map frame: the value of f->key */
	switch (f->key) {
	case AK_NONE:
		return push(a, A_SKIP);
	case AK_VALUE:
		if (!is_map)
			return fail(a, "\"value\" must be an AnyValue object");
		f->has_value = 1;
		if (f->has_key)
			f->start = a->out->len;
		return push(a, A_ANY);
	case AK_ARRAY:
	case AK_KVLIST:
		if (!is_map)
			return failf2(a, "\"", akey_name[f->key], "\" must be an object");
		if (any_value_field(a, f))
			return OTLP_ATTRS_ERROR;
		if (is_top_any(a))
			a->kv.type = f->key == AK_ARRAY ? OTLP_AV_ARRAY : OTLP_AV_KVLIST;
		return push(a, f->key == AK_ARRAY ? A_ARRVAL : A_KVLIST);
	case AK_VALUES:
		if (is_map)
			return fail(a, "\"values\" must be an array");
		if (f->type == A_ARRVAL) {
			otlp_buf_addc(a->out, '[');
			return push(a, A_VALUES);
		}
		otlp_buf_addc(a->out, '{');
		return push(a, A_LIST);
	default:
		return failf2(a, "\"", akey_name[f->key],
		              f->key == AK_KEY ? "\" must be a string"
		                               : "\" must be a scalar, not an object or array");
	}
}

static int on_end(OtlpAttrs *a, int is_map)
{
	OtlpAttrFrame *f = &a->st[a->depth - 1];
	Buf *o = a->out;
	switch (f->type) {
	case A_SKIP:
		a->depth--;
		return OTLP_ATTRS_MORE;
	case A_LIST:
		otlp_buf_addc(o, '}');
		a->depth--;
		return a->depth == 0 ? OTLP_ATTRS_DONE : OTLP_ATTRS_MORE;
	case A_VALUES:
		otlp_buf_addc(o, ']');
		a->depth--;
		return OTLP_ATTRS_MORE;
	case A_KV:
		if (!f->has_key)
			kv_write_key(a, f, "", 0);
		if (!f->has_value)
			buf_adds(o, "null");
		a->depth--;
		if (a->depth == 1 && a->fn) {
			a->kv.key = buf_str(&a->key);
			a->kv.key_len = a->key.len;
			a->kv.text = buf_str(&a->text);
			a->kv.text_len = a->text.len;
			const char *m = a->fn(a->fn_ctx, &a->kv);
			if (m)
				return fail(a, m);
		}
		return OTLP_ATTRS_MORE;
	case A_ANY:
		if (!(f->seen & AV_FIELDS))
			buf_adds(o, "null");
		a->depth--;
		return OTLP_ATTRS_MORE;
	case A_ARRVAL:
		if (!(f->seen & ABIT(AK_VALUES)))
			buf_adds(o, "[]");
		a->depth--;
		return OTLP_ATTRS_MORE;
	case A_KVLIST:
		if (!(f->seen & ABIT(AK_VALUES)))
			buf_adds(o, "{}");
		a->depth--;
		return OTLP_ATTRS_MORE;
	}
	(void)is_map;
	return fail(a, "internal error: bad attribute frame");
}

/* on_key() and on_scalar() stay out of line (as on_start() and on_end()
 * are anyway): inlined, they made otlp_attrs_feed(), which runs for every
 * event of an attribute list, save and restore every register each time;
 * out of line, it is a check and a tail call. */
__attribute__((noinline)) static int on_key(OtlpAttrs *a, const char *s, size_t n)
{
	OtlpAttrFrame *f = &a->st[a->depth - 1];
	if (f->type == A_SKIP)
		return OTLP_ATTRS_MORE;
	int k = akey(s, n);
	if (!(akeys_allowed[f->type] & ABIT(k)))
		k = AK_NONE;
	else if (f->seen & ABIT(k))
		return failf2(a, "duplicate field \"", akey_name[k], "\"");
	f->seen |= ABIT(k);
	f->key = (unsigned char)k;
	return OTLP_ATTRS_MORE;
}

__attribute__((noinline)) static int on_scalar(OtlpAttrs *a, OtlpEv ev, const char *s, size_t n)
{
	OtlpAttrFrame *f = &a->st[a->depth - 1];
	Buf *o = a->out;
	switch (f->type) {
	case A_SKIP:
		return OTLP_ATTRS_MORE;
	case A_LIST:
		return fail(a, "attribute list items must be KeyValue objects");
	case A_VALUES:
		return fail(a, "arrayValue values must be AnyValue objects");
	default:
		break;
	}
	if (f->key == AK_NONE)
		return OTLP_ATTRS_MORE;
	if (ev == OTLP_EV_NULL) {
		/* proto3: null means "not set" */
		f->seen &= ~ABIT(f->key);
		return OTLP_ATTRS_MORE;
	}
	switch (f->key) {
	case AK_KEY:
		if (ev != OTLP_EV_STRING)
			return fail(a, "\"key\" must be a string");
		if (a->depth == 2)
			otlp_buf_add(&a->key, s, n);
		kv_write_key(a, f, s, n);
		return OTLP_ATTRS_MORE;
	case AK_VALUE:
		return fail(a, "\"value\" must be an AnyValue object");
	case AK_VALUES:
		return fail(a, "\"values\" must be an array");
	default:
		break;
	}
	/* an AnyValue field */
	if (any_value_field(a, f))
		return OTLP_ATTRS_ERROR;
	int top = is_top_any(a);
	switch (f->key) {
	case AK_STRING:
	case AK_BYTES:
		if (ev != OTLP_EV_STRING)
			return failf2(a, "\"", akey_name[f->key], "\" must be a string");
		otlp_json_str(o, s, n);
		if (top)
			capture(a, f->key == AK_STRING ? OTLP_AV_STRING : OTLP_AV_BYTES, s, n);
		return OTLP_ATTRS_MORE;
	case AK_BOOL:
		if (ev != OTLP_EV_BOOL)
			return fail(a, "\"boolValue\" must be true or false");
		buf_adds(o, n ? "true" : "false");
		if (top) {
			capture(a, OTLP_AV_BOOL, n ? "true" : "false", n ? 4 : 5);
			a->kv.i = n ? 1 : 0;
		}
		return OTLP_ATTRS_MORE;
	case AK_INT: {
		if (ev != OTLP_EV_STRING && ev != OTLP_EV_NUMBER)
			return fail(a, "\"intValue\" must be an integer or a string of one");
		int64_t v;
		int rc = otlp_parse_int(s, n, &v);
		if (rc == OTLP_NUM_RANGE)
			return fail(a, "\"intValue\" is out of the 64-bit range");
		if (rc)
			return fail(a, "\"intValue\" must be an integer");
		size_t at = o->len;
		otlp_json_int(o, v);
		if (top) {
			capture(a, OTLP_AV_INT, o->p + at, o->len - at);
			a->kv.i = v;
		}
		return OTLP_ATTRS_MORE;
	}
	case AK_DOUBLE: {
		if (ev == OTLP_EV_NUMBER) {
			otlp_buf_add(o, s, n);
			if (top)
				capture(a, OTLP_AV_DOUBLE, s, n);
			return OTLP_ATTRS_MORE;
		}
		if (ev != OTLP_EV_STRING)
			return fail(a, "\"doubleValue\" must be a number");
		if (otlp_is_json_number(s, n)) {
			otlp_buf_add(o, s, n);
			if (top)
				capture(a, OTLP_AV_DOUBLE, s, n);
			return OTLP_ATTRS_MORE;
		}
		/* proto3 JSON spells the IEEE specials as strings; JSON has no
		 * literal for them, so they stay strings */
		if (!(n == 3 && memcmp(s, "NaN", 3) == 0) && !(n == 8 && memcmp(s, "Infinity", 8) == 0) &&
		    !(n == 9 && memcmp(s, "-Infinity", 9) == 0))
			return fail(a, "\"doubleValue\" must be a number");
		otlp_json_str(o, s, n);
		if (top)
			capture(a, OTLP_AV_DOUBLE, s, n);
		return OTLP_ATTRS_MORE;
	}
	default:
		return failf2(a, "\"", akey_name[f->key], "\" must be an object");
	}
}

int otlp_attrs_feed(OtlpAttrs *a, OtlpEv ev, const char *s, size_t n)
{
	if (a->depth <= 0)
		return fail(a, "internal error: attribute list already closed");
	switch (ev) {
	case OTLP_EV_START_MAP: return on_start(a, 1);
	case OTLP_EV_START_ARRAY: return on_start(a, 0);
	case OTLP_EV_END_MAP: return on_end(a, 1);
	case OTLP_EV_END_ARRAY: return on_end(a, 0);
	case OTLP_EV_KEY: return on_key(a, s, n);
	default: return on_scalar(a, ev, s, n);
	}
}
