/*
 * otlp_common.h - pieces every streaming OTLP/JSON importer needs (traces
 * today, metrics and logs later), independent of the signal:
 *
 *  - OtlpLoc: turns "byte N of the chunk yajl is parsing" into the
 *    file:line:col of the token a callback is looking at;
 *  - OtlpAttrs: a small push-down machine that renders a KeyValue list
 *    ("attributes": [{"key": .., "value": AnyValue}, ..]) fed as SAX events
 *    into one compact JSON object text, in any key order;
 *  - checks for hex ids, 64-bit integers given as numbers or strings, and a
 *    fast JSON string escaper.
 *
 * Nothing here allocates per call except buffer growth (Bufs are reused by
 * the caller), and nothing here prints.
 */
#ifndef TT_OTLP_COMMON_H
#define TT_OTLP_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "buf.h"

/* ---- buffer fast paths ------------------------------------------------- */

/* buf_addc()/buf_add() without a function call when the room is there. */
static inline void otlp_buf_addc(Buf *b, char c)
{
	if (b->len + 2 <= b->cap) {
		b->p[b->len++] = c;
		b->p[b->len] = '\0';
	} else {
		buf_addc(b, c);
	}
}

static inline void otlp_buf_add(Buf *b, const void *s, size_t n)
{
	if (b->len + n + 1 <= b->cap) {
		if (n)
			memcpy(b->p + b->len, s, n);
		b->len += n;
		b->p[b->len] = '\0';
	} else {
		buf_add(b, s, n);
	}
}

/* buf_reserve() without a function call when the room is there. */
static inline void otlp_buf_reserve(Buf *b, size_t extra)
{
	if (b->len + extra + 1 > b->cap)
		buf_reserve(b, extra);
}

/* ---- small value checks ---------------------------------------------- */

enum {
	OTLP_ID_OK = 0,
	OTLP_ID_LENGTH = 1,   /* not exactly `want` characters */
	OTLP_ID_NOT_HEX = 2,  /* a character outside [0-9a-fA-F] */
	OTLP_ID_ZERO = 3,     /* all zeros (an invalid id in OTLP) */
};

/* Checks that s (n bytes) is `want` hex digits and writes them lowercased
 * to out (want + 1 bytes, NUL-terminated). out is written only on OK.
 * Returns OTLP_ID_*. */
int otlp_hex_id(const char *s, size_t n, size_t want, char *out);

enum {
	OTLP_NUM_OK = 0,
	OTLP_NUM_SYNTAX = 1,  /* not an integer (fraction, exponent, junk) */
	OTLP_NUM_RANGE = 2,   /* outside int64 */
};

/* Parses an integer written as a JSON number token or inside a JSON string
 * (proto3 writes 64-bit integers as strings): optional '-', then digits.
 * Returns OTLP_NUM_*. */
int otlp_parse_int(const char *s, size_t n, int64_t *out);

/* 1 when s (n bytes) is a number in JSON syntax (RFC 8259), else 0. */
int otlp_is_json_number(const char *s, size_t n);

/* Appends s (n bytes, valid UTF-8) to b as a JSON string literal. Escapes
 * '"', '\\' and control characters; everything else is copied. */
void otlp_json_str(Buf *b, const char *s, size_t n);

/* Appends the decimal text of v to b. */
void otlp_json_int(Buf *b, int64_t v);

/* ---- locations ---------------------------------------------------------- */

/* The caller reads its input in chunks, hands each one to otlp_loc_feed()
 * before giving it to yajl, and keeps the previous chunk's memory intact
 * until the next feed (two alternating buffers are enough). Positions in the
 * current and the previous chunk resolve exactly; older ones (a token longer
 * than a chunk) resolve to the oldest byte still held. Lines and columns
 * are 1-based; columns count bytes. */
typedef struct OtlpLoc {
	const unsigned char *cur;    /* borrowed: the chunk being parsed */
	size_t cur_len;
	uint64_t cur_base;           /* absolute offset of cur[0] */
	long cur_line, cur_col;      /* position of cur[0] */
	const unsigned char *prev;   /* borrowed: the chunk before, or NULL */
	size_t prev_len;
	uint64_t prev_base;
	long prev_line, prev_col;
	uint64_t tok_from;           /* end of the token before the current one */
	uint64_t tok_end;            /* end of the current token */
} OtlpLoc;

/* The token a callback saw: the current token starts at the first byte
 * after `from` that is not white space, ',' or ':', and ends before `end`. */
typedef struct OtlpMark {
	uint64_t from, end;
} OtlpMark;

void otlp_loc_init(OtlpLoc *l);

/* Makes data the current chunk; len 0 (data may be NULL) marks the end of
 * the input, e.g. before yajl_complete_parse(). */
void otlp_loc_feed(OtlpLoc *l, const unsigned char *data, size_t len);

/* Call at the start of every parser callback with yajl_get_bytes_consumed()
 * (the offset just past the token the callback reports). */
static inline void otlp_loc_token(OtlpLoc *l, size_t consumed)
{
	l->tok_from = l->tok_end;
	l->tok_end = l->cur_base + consumed;
}

/* The current token, to be resolved later (e.g. when a span object closes
 * and turns out to be invalid). */
static inline OtlpMark otlp_loc_mark(const OtlpLoc *l)
{
	OtlpMark m = {l->tok_from, l->tok_end};
	return m;
}

/* Line and column of the first byte of the token m. */
void otlp_loc_mark_pos(const OtlpLoc *l, OtlpMark m, long *line, long *col);

/* Line and column of absolute byte offset off. */
void otlp_loc_pos(const OtlpLoc *l, uint64_t off, long *line, long *col);

/* ---- attribute lists -------------------------------------------------- */

/* SAX events, as yajl reports them. */
typedef enum OtlpEv {
	OTLP_EV_START_MAP,
	OTLP_EV_END_MAP,
	OTLP_EV_START_ARRAY,
	OTLP_EV_END_ARRAY,
	OTLP_EV_KEY,       /* s, n: the key */
	OTLP_EV_STRING,    /* s, n: the decoded string */
	OTLP_EV_NUMBER,    /* s, n: the number's text */
	OTLP_EV_BOOL,      /* n: 0 or 1 */
	OTLP_EV_NULL,
} OtlpEv;

/* The type of an AnyValue. */
enum {
	OTLP_AV_EMPTY = 0,   /* no value field: rendered as null */
	OTLP_AV_STRING,
	OTLP_AV_BOOL,
	OTLP_AV_INT,
	OTLP_AV_DOUBLE,
	OTLP_AV_BYTES,
	OTLP_AV_ARRAY,
	OTLP_AV_KVLIST,
};

/* One top-level attribute, passed to the OtlpKvFn when its object closes.
 * Pointers are borrowed and valid only during the call. */
typedef struct OtlpKv {
	const char *key;       /* decoded; may contain NUL bytes (key_len) */
	size_t key_len;
	int type;              /* OTLP_AV_* */
	const char *text;      /* string, bytes: decoded text; int, double,
	                        * bool: the value as JSON text; else "" */
	size_t text_len;
	int64_t i;             /* OTLP_AV_INT, OTLP_AV_BOOL */
} OtlpKv;

/* The value of an int, double or bool attribute as a double (a double is
 * converted from its text only when asked); NaN for other types. */
double otlp_kv_number(const OtlpKv *kv);

/* Returns NULL to go on, or a static message to fail the import with (it
 * is reported at the attribute's closing brace). */
typedef const char *(*OtlpKvFn)(void *ctx, const OtlpKv *kv);

#define OTLP_ATTRS_MAX_DEPTH 64

typedef struct OtlpAttrFrame {
	unsigned char type;    /* private */
	unsigned char key;
	unsigned char has_key;
	unsigned char has_value;
	uint32_t seen;
	uint32_t count;
	size_t start;
} OtlpAttrFrame;

typedef struct OtlpAttrs {
	Buf *out;              /* borrowed: where the JSON object goes */
	OtlpKvFn fn;           /* may be NULL */
	void *fn_ctx;
	int depth;
	OtlpAttrFrame st[OTLP_ATTRS_MAX_DEPTH];
	Buf key;               /* key of the current top-level attribute */
	Buf text;              /* scalar value of the current top-level attribute */
	Buf tmp;
	OtlpKv kv;
	char msg[96];          /* the error, when otlp_attrs_feed() fails */
} OtlpAttrs;

void otlp_attrs_init(OtlpAttrs *a);
void otlp_attrs_fini(OtlpAttrs *a);

/* Starts a KeyValue list whose '[' the caller has just consumed. The JSON
 * object is appended to out ('{' now, '}' when the list closes); fn, when
 * not NULL, sees every top-level attribute. */
void otlp_attrs_begin(OtlpAttrs *a, Buf *out, OtlpKvFn fn, void *fn_ctx);

enum {
	OTLP_ATTRS_MORE = 0,   /* keep feeding */
	OTLP_ATTRS_DONE = 1,   /* the list's ']' was consumed */
	OTLP_ATTRS_ERROR = -1, /* a->msg says what is wrong with this token */
};

/* Feeds one event (s, n as documented for OtlpEv). Returns OTLP_ATTRS_*. */
int otlp_attrs_feed(OtlpAttrs *a, OtlpEv ev, const char *s, size_t n);

#endif
