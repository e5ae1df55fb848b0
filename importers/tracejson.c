/*
 * tracejson.c - streaming record reader over yajl and the span helpers the
 * Jaeger and Zipkin importers share (see tracejson.h).
 *
 * Positions: yajl reports, during a callback, how many bytes of the
 * current chunk it has consumed (the end of the token just lexed). The
 * reader scans the chunk up to that point, counting lines, and remembers
 * where the first byte of the token was: the first byte after the previous
 * token that is not whitespace, ',' or ':'. Every token ends in a callback
 * (values, keys, closing brackets), so the remembered start is always the
 * current token's. The tail of each chunk is scanned after yajl_parse()
 * returns, which covers tokens split across chunks.
 *
 * Trees live in arenas: one for the root object, one for the record being
 * read. The record arena is emptied after each record, so memory follows
 * the largest record.
 */
#include "tracejson.h"

#include <errno.h>
#include <limits.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "hash.h"

/* ---- arena ------------------------------------------------------------- */

typedef struct Chunk {
	struct Chunk *next;
	size_t size, used;
	/* data follows, aligned as max_align_t */
} Chunk;

typedef struct Arena {
	Chunk *head;
	size_t total;      /* bytes handed out since the last reset */
	size_t cap;        /* refuse to pass this */
} Arena;

#define CHUNK_HDR ((sizeof(Chunk) + 15) & ~(size_t)15)
#define CHUNK_MIN ((size_t)64 << 10)

static void arena_reset(Arena *a)
{
	/* Keep the first chunk (the common case is many small records). */
	Chunk *c = a->head;
	if (c) {
		Chunk *rest = c->next;
		while (rest) {
			Chunk *nx = rest->next;
			free(rest);
			rest = nx;
		}
		c->next = NULL;
		c->used = 0;
	}
	a->total = 0;
}

static void arena_fini(Arena *a)
{
	Chunk *c = a->head;
	while (c) {
		Chunk *nx = c->next;
		free(c);
		c = nx;
	}
	a->head = NULL;
	a->total = 0;
}

/* Returns NULL when the arena would pass its cap. */
static void *arena_alloc(Arena *a, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (n > a->cap || a->total > a->cap - n)
		return NULL;
	Chunk *c = a->head;
	if (c == NULL || c->size - c->used < n) {
		size_t sz = n > CHUNK_MIN ? n : CHUNK_MIN;
		Chunk *nc = xmalloc(CHUNK_HDR + sz);
		nc->size = sz;
		nc->used = 0;
		if (c && c->used == 0 && c->next == NULL && c->size < sz) {
			/* an empty head chunk too small for this: replace it */
			free(c);
			c = NULL;
			a->head = NULL;
		}
		if (c && n > CHUNK_MIN) {
			/* big block: put it behind the head so the head keeps filling */
			nc->next = c->next;
			c->next = nc;
		} else {
			nc->next = a->head;
			a->head = nc;
		}
		c = nc;
	}
	void *p = (char *)c + CHUNK_HDR + c->used;
	c->used += n;
	a->total += n;
	return p;
}

/* ---- reader ------------------------------------------------------------ */

enum { FR_DOM, FR_STREAM };

typedef struct Frame {
	TjNode *node;
	TjNode *last;      /* last child appended */
	int kind;          /* FR_* */
	int record;        /* this container is a record (emit on close) */
	Arena *arena;
} Frame;

struct TjReader {
	ImportCtx *ctx;          /* NULL for tj_parse_text */
	TjReadOptions o;
	yajl_handle h;

	const unsigned char *buf;
	size_t scanned;
	uint64_t base;           /* absolute offset of buf[0] */
	long line, col;          /* position of buf[scanned] */
	int have_tok;
	long tok_line, tok_col;
	uint64_t tok_off;
	int completing;          /* inside yajl_complete_parse */

	Frame *stack;
	size_t depth, cap;
	const char *key;         /* pending member name */
	size_t keylen;

	Arena root_arena, rec_arena;
	TjNode *root;
	int64_t nrec;
	int rc;                  /* error from a callback */
	Err scratch;             /* for tj_parse_text */
};

static Err *rd_err(TjReader *r)
{
	return r->ctx ? r->ctx->err : &r->scratch;
}

static const char *rd_name(TjReader *r)
{
	return r->ctx ? r->ctx->name : "<text>";
}

static void scan_to(TjReader *r, size_t upto)
{
	for (; r->scanned < upto; r->scanned++) {
		unsigned char c = r->buf[r->scanned];
		if (!r->have_tok && c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != ','
		    && c != ':') {
			r->have_tok = 1;
			r->tok_line = r->line;
			r->tok_col = r->col;
			r->tok_off = r->base + r->scanned;
		}
		if (c == '\n') {
			r->line++;
			r->col = 1;
		} else {
			r->col++; /* bytes, as everywhere (err.h) */
		}
	}
}

/* Position of the token of the current callback; consumes it. */
static void take_pos(TjReader *r, long *line, long *col, uint64_t *off)
{
	if (!r->completing)
		scan_to(r, yajl_get_bytes_consumed(r->h));
	if (r->have_tok) {
		*line = r->tok_line;
		*col = r->tok_col;
		*off = r->tok_off;
	} else {
		*line = r->line;
		*col = r->col;
		*off = r->base + r->scanned;
	}
	r->have_tok = 0;
}

static int rd_fail(TjReader *r, int code, long line, long col, const char *msg)
{
	r->rc = err_at(rd_err(r), code, rd_name(r), line, col, "%s", msg);
	return 0;  /* yajl: stop */
}

static Frame *top(TjReader *r)
{
	return r->depth ? &r->stack[r->depth - 1] : NULL;
}

static int push(TjReader *r, TjNode *node, int kind, int record, Arena *a)
{
	if (r->depth >= TJ_MAX_DEPTH)
		return rd_fail(r, TT_EPARSE, node->line, node->col,
		               "JSON nested deeper than 128 levels");
	if (r->depth == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 16;
		r->stack = xrealloc(r->stack, r->cap * sizeof *r->stack);
	}
	r->stack[r->depth++] = (Frame){node, NULL, kind, record, a};
	return 1;
}

static int too_big(TjReader *r, long line, long col)
{
	char msg[128];
	snprintf(msg, sizeof msg, "record too large: its tree would pass %zu MiB "
	         "(split the file)", TJ_RECORD_MAX >> 20);
	return rd_fail(r, TT_EPARSE, line, col, msg);
}

static int emit(TjReader *r, TjNode *rec)
{
	int rc = r->o.on_record ? r->o.on_record(r->o.ud, rec, r->nrec) : 0;
	r->nrec++;
	arena_reset(&r->rec_arena);
	if (rc) {
		r->rc = rc;
		return 0;
	}
	return 1;
}

/* Creates the node of a value that starts now and links it in place.
 * Returns 1 to continue, 0 to stop (error set). *pushed tells a container
 * was pushed. */
static int add_value(TjReader *r, TjType t, const char *text, size_t len, int boolean)
{
	long line, col;
	uint64_t off;
	take_pos(r, &line, &col, &off);
	Frame *fr = top(r);
	Arena *a;
	int record = 0, stream = 0;
	if (fr == NULL) {
		a = &r->root_arena;
		if (t == TJ_ARRAY && r->ctx)
			stream = 1;
	} else if (fr->kind == FR_STREAM) {
		a = &r->rec_arena;
		record = 1;
	} else {
		a = fr->arena;
		if (r->depth == 1 && fr->node->type == TJ_OBJECT && t == TJ_ARRAY && r->o.stream_key
		    && fr->node == r->root && r->keylen == strlen(r->o.stream_key)
		    && memcmp(r->key, r->o.stream_key, r->keylen) == 0)
			stream = 1;
	}
	TjNode *nd = arena_alloc(a, sizeof *nd);
	char *copy = NULL;
	if (nd && text) {
		copy = arena_alloc(a, len + 1);
		if (copy) {
			memcpy(copy, text, len);
			copy[len] = '\0';
		}
	}
	if (nd == NULL || (text && copy == NULL))
		return too_big(r, line, col);
	memset(nd, 0, sizeof *nd);
	nd->type = t;
	nd->boolean = boolean;
	nd->text = copy;
	nd->len = len;
	nd->line = line;
	nd->col = col;
	nd->off = off;
	nd->streamed = stream;
	if (fr == NULL) {
		r->root = nd;
	} else if (fr->kind == FR_STREAM) {
		fr->node->n++;
	} else {
		if (fr->node->type == TJ_OBJECT) {
			nd->key = r->key;
			r->key = NULL;
		}
		if (fr->last)
			fr->last->next = nd;
		else
			fr->node->child = nd;
		fr->last = nd;
		fr->node->n++;
	}
	if (t == TJ_ARRAY || t == TJ_OBJECT)
		return push(r, nd, stream ? FR_STREAM : FR_DOM, record, a);
	if (record)
		return emit(r, nd);
	return 1;
}

static int cb_null(void *ud)
{
	return add_value(ud, TJ_NULL, NULL, 0, 0);
}

static int cb_bool(void *ud, int b)
{
	return add_value(ud, TJ_BOOL, NULL, 0, b != 0);
}

static int cb_number(void *ud, const char *s, size_t n)
{
	return add_value(ud, TJ_NUMBER, s, n, 0);
}

static int cb_string(void *ud, const unsigned char *s, size_t n)
{
	TjReader *r = ud;
	if (memchr(s, 0, n)) {
		long line, col;
		uint64_t off;
		take_pos(r, &line, &col, &off);
		return rd_fail(r, TT_EPARSE, line, col, "string holds U+0000, which is not accepted");
	}
	return add_value(r, TJ_STRING, (const char *)s, n, 0);
}

static int cb_start_map(void *ud)
{
	return add_value(ud, TJ_OBJECT, NULL, 0, 0);
}

static int cb_start_array(void *ud)
{
	return add_value(ud, TJ_ARRAY, NULL, 0, 0);
}

static int cb_key(void *ud, const unsigned char *s, size_t n)
{
	TjReader *r = ud;
	long line, col;
	uint64_t off;
	take_pos(r, &line, &col, &off);
	if (memchr(s, 0, n))
		return rd_fail(r, TT_EPARSE, line, col, "member name holds U+0000, which is not accepted");
	Frame *fr = top(r);
	char *k = arena_alloc(fr->arena, n + 1);
	if (k == NULL)
		return too_big(r, line, col);
	memcpy(k, s, n);
	k[n] = '\0';
	r->key = k;
	r->keylen = n;
	return 1;
}

static int cb_end(void *ud)
{
	TjReader *r = ud;
	long line, col;
	uint64_t off;
	take_pos(r, &line, &col, &off);
	Frame fr = r->stack[--r->depth];
	if (fr.record)
		return emit(r, fr.node);
	return 1;
}

static const yajl_callbacks callbacks = {
	cb_null, cb_bool, NULL, NULL, cb_number, cb_string,
	cb_start_map, cb_key, cb_end, cb_start_array, cb_end,
};

static TjReader *reader_new(ImportCtx *ctx, const TjReadOptions *o)
{
	TjReader *r = xcalloc(1, sizeof *r);
	r->ctx = ctx;
	if (o)
		r->o = *o;
	r->line = 1;
	r->col = 1;
	r->root_arena.cap = TJ_RECORD_MAX;
	r->rec_arena.cap = TJ_RECORD_MAX;
	r->h = yajl_alloc(&callbacks, NULL, r);
	if (r->h == NULL) {
		free(r);
		return NULL;
	}
	return r;
}

void tj_reader_free(TjReader *r)
{
	if (r == NULL)
		return;
	if (r->h)
		yajl_free(r->h);
	arena_fini(&r->root_arena);
	arena_fini(&r->rec_arena);
	free(r->stack);
	free(r);
}

const TjNode *tj_root(const TjReader *r)
{
	return r->root;
}

/* Turns a yajl failure into a located error. */
static int syntax_error(TjReader *r, int at_end)
{
	unsigned char *e = yajl_get_error(r->h, 0, NULL, 0);
	const char *m = e ? (const char *)e : "malformed JSON";
	if (strncmp(m, "parse error: ", 13) == 0)
		m += 13;
	else if (strncmp(m, "lexical error: ", 15) == 0)
		m += 15;
	char msg[200];
	snprintf(msg, sizeof msg, "%s", m);
	size_t l = strlen(msg);
	while (l && (msg[l - 1] == '\n' || msg[l - 1] == ' ' || msg[l - 1] == '.'))
		msg[--l] = '\0';
	if (e)
		yajl_free_error(r->h, e);
	long line = r->line, col = r->col;
	if (at_end) {
		if (strcmp(msg, "premature EOF") == 0)
			snprintf(msg, sizeof msg, "unexpected end of input (truncated JSON?)");
	} else {
		size_t c = yajl_get_bytes_consumed(r->h);
		if (strstr(msg, "UTF8") && c > r->scanned) {
			/* yajl stops after the byte that broke the sequence (an ASCII
			 * byte ends a truncated one): point at the sequence's start */
			size_t p = c - 1;
			if (r->buf[p] < 0x80 && p > r->scanned)
				p--;
			while (p > r->scanned && (r->buf[p] & 0xC0) == 0x80 && r->buf[p - 1] >= 0x80
			       && c - p < 4)
				p--;
			c = p;
		}
		r->have_tok = 1;  /* count lines only */
		scan_to(r, c);
		line = r->line;
		col = r->col;
		if (strstr(msg, "UTF8"))
			snprintf(msg, sizeof msg, "invalid UTF-8 in a string");
	}
	char full[256];
	snprintf(full, sizeof full, "invalid JSON: %s", msg);
	return err_at(rd_err(r), TT_EPARSE, rd_name(r), line, col, "%s", full);
}

/* Feeds one chunk; returns 0 or the error code. */
static int feed(TjReader *r, const unsigned char *p, size_t n)
{
	r->buf = p;
	r->scanned = 0;
	yajl_status s = yajl_parse(r->h, p, n);
	if (s == yajl_status_client_canceled)
		return r->rc ? r->rc : TT_EPARSE;
	if (s != yajl_status_ok)
		return syntax_error(r, 0);
	scan_to(r, n);
	r->base += n;
	/* yajl keeps an unfinished token in its own buffer: bound it */
	if (r->have_tok && r->base - r->tok_off > TJ_TOKEN_MAX)
		return err_at(rd_err(r), TT_EPARSE, rd_name(r), r->tok_line, r->tok_col,
		              "a single JSON value longer than %zu MiB", TJ_TOKEN_MAX >> 20);
	return 0;
}

static int finish(TjReader *r)
{
	r->completing = 1;
	yajl_status s = yajl_complete_parse(r->h);
	if (s == yajl_status_client_canceled)
		return r->rc ? r->rc : TT_EPARSE;
	if (s != yajl_status_ok)
		return syntax_error(r, 1);
	if (r->root == NULL)
		return err_at(rd_err(r), TT_EPARSE, rd_name(r), r->line, r->col,
		              "no JSON value in the input");
	return 0;
}

int tj_read(ImportCtx *ctx, FILE *f, const TjReadOptions *o, TjReader **out)
{
	*out = NULL;
	TjReader *r = reader_new(ctx, o);
	if (r == NULL)
		return err_set(ctx->err, TT_ENOMEM, "%s: cannot start the JSON parser", ctx->name);
	enum { BUFSZ = 1 << 16 };
	unsigned char *buf = xmalloc(BUFSZ);
	int rc = 0;
	size_t n;
	while ((n = fread(buf, 1, BUFSZ, f)) > 0) {
		rc = feed(r, buf, n);
		if (rc)
			break;
		import_progress(ctx, r->base);
	}
	if (rc == 0 && ferror(f))
		rc = err_set(ctx->err, TT_EIO, "%s: read error: %s", ctx->name, strerror(errno));
	if (rc == 0)
		rc = finish(r);
	free(buf);
	if (rc) {
		tj_reader_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

int tj_parse_text(const char *s, size_t n, TjReader **out)
{
	*out = NULL;
	TjReader *r = reader_new(NULL, NULL);
	if (r == NULL)
		return -1;
	if (feed(r, (const unsigned char *)s, n) || finish(r)) {
		tj_reader_free(r);
		return -1;
	}
	*out = r;
	return 0;
}

/* ---- reading trees ----------------------------------------------------- */

int tj_fail(ImportCtx *ctx, const TjNode *at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = err_vat(ctx->err, TT_EPARSE, ctx->name, at ? at->line : 1, at ? at->col : 1, fmt,
	                 ap);
	va_end(ap);
	return rc;
}

int tj_member(ImportCtx *ctx, const TjNode *obj, const char *key, const TjNode **out)
{
	*out = NULL;
	if (obj == NULL || obj->type != TJ_OBJECT)
		return 0;
	for (const TjNode *m = obj->child; m; m = m->next) {
		if (strcmp(m->key, key) != 0)
			continue;
		if (*out)
			return tj_fail(ctx, m, "\"%s\" given twice in one object", key);
		*out = m;
	}
	return 0;
}

const char *tj_type_name(const TjNode *v)
{
	switch (v->type) {
	case TJ_NULL: return "null";
	case TJ_BOOL: return "a boolean";
	case TJ_NUMBER: return "a number";
	case TJ_STRING: return "a string";
	case TJ_ARRAY: return "an array";
	case TJ_OBJECT: return "an object";
	}
	return "?";
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

int tj_hex_id(ImportCtx *ctx, const TjNode *v, const char *what, int max_digits, int width,
              char *out)
{
	if (v->type != TJ_STRING)
		return tj_fail(ctx, v, "%s must be a hex string, not %s", what, tj_type_name(v));
	size_t n = v->len;
	if (n == 0 || n > (size_t)max_digits)
		return tj_fail(ctx, v, "%s must be 1 to %d hex digits, got %zu characters", what,
		               max_digits, n);
	int nonzero = 0;
	size_t pad = (size_t)width - n;
	memset(out, '0', pad);
	for (size_t i = 0; i < n; i++) {
		int h = hexval((unsigned char)v->text[i]);
		if (h < 0) {
			char q[64];
			return tj_fail(ctx, v, "%s %s is not hex (character %zu)", what,
			               tj_quote(v->text, v->len, q, sizeof q), i + 1);
		}
		nonzero |= h;
		out[pad + i] = "0123456789abcdef"[h];
	}
	out[width] = '\0';
	if (!nonzero)
		return tj_fail(ctx, v, "%s is all zeros, which means no id", what);
	return 0;
}

int tj_read_id(ImportCtx *ctx, const TjNode *v, const char *what, int max_digits, int width,
               char *out, int *opaque)
{
	*opaque = 0;
	if (v->type != TJ_STRING)
		return tj_fail(ctx, v, "%s must be a string, not %s", what, tj_type_name(v));
	size_t n = v->len;
	if (n == 0)
		return tj_fail(ctx, v, "%s is empty", what);
	int hex = n <= (size_t)max_digits;
	for (size_t i = 0; hex && i < n; i++)
		hex = hexval((unsigned char)v->text[i]) >= 0;
	if (hex)
		return tj_hex_id(ctx, v, what, max_digits, width, out);
	if (n > TJ_OPAQUE_MAX)
		return tj_fail(ctx, v, "%s is %zu bytes long; an id that is not hex may have at most %d",
		               what, n, TJ_OPAQUE_MAX);
	tj_opaque_id(v->text, n, width, out);
	*opaque = 1;
	return 0;
}

void tj_opaque_id(const char *s, size_t n, int width, char *out)
{
	unsigned char dig[EVP_MAX_MD_SIZE];
	unsigned int dlen = 0;
	char in[TJ_OPAQUE_MAX + 40];
	if (n > TJ_OPAQUE_MAX)
		n = TJ_OPAQUE_MAX;
	int np = snprintf(in, sizeof in, "tailtriage/opaque-id/%d/", width);
	memcpy(in + np, s, n);
	EVP_Digest(in, (size_t)np + n, dig, &dlen, EVP_sha256(), NULL);
	int nonzero = 0;
	for (int i = 0; i < width / 2; i++) {
		snprintf(out + 2 * i, 3, "%02x", dig[i]);
		nonzero |= dig[i];
	}
	if (!nonzero)
		out[width - 1] = '1';
	out[width] = '\0';
}

uint64_t tj_id_fingerprint(const char *s, size_t n, int opaque)
{
	if (!opaque)
		return 0;
	return hash_fnv1a(HASH_FNV1A_V0, s, n) | 1; /* decides what is refused: hash.h */
}

struct TjIdEnt {
	char key[50];             /* "trace/span" or "trace"; "" when free */
	uint64_t fp;
};

void tj_idmap_init(TjIdMap *m)
{
	memset(m, 0, sizeof *m);
}

void tj_idmap_fini(TjIdMap *m)
{
	free(m->v);
	memset(m, 0, sizeof *m);
}

void tj_idmap_reset(TjIdMap *m)
{
	if (m->n == 0)
		return;
	for (size_t i = 0; i < m->cap; i++)
		m->v[i].key[0] = '\0';
	m->n = 0;
}

static struct TjIdEnt *idmap_slot(struct TjIdEnt *v, size_t cap, const char *key)
{
	size_t x = (size_t)hash_fnv1a_str(HASH_FNV1A_BASIS, key) & (cap - 1);
	while (v[x].key[0] && strcmp(v[x].key, key) != 0)
		x = (x + 1) & (cap - 1);
	return &v[x];
}

int tj_idmap_check(TjIdMap *m, const char *trace_id, const char *span_id, uint64_t fp,
                   int insert)
{
	char key[50];
	snprintf(key, sizeof key, "%s%s%s", trace_id, span_id ? "/" : "", span_id ? span_id : "");
	if (m->cap) {
		struct TjIdEnt *e = idmap_slot(m->v, m->cap, key);
		if (e->key[0])
			return e->fp != fp;
	}
	if (!insert)
		return 0;
	if ((m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		struct TjIdEnt *v = xcalloc(cap, sizeof *v);
		for (size_t i = 0; i < m->cap; i++)
			if (m->v[i].key[0])
				*idmap_slot(v, cap, m->v[i].key) = m->v[i];
		free(m->v);
		m->v = v;
		m->cap = cap;
	}
	struct TjIdEnt *e = idmap_slot(m->v, m->cap, key);
	memcpy(e->key, key, sizeof key);
	e->fp = fp;
	m->n++;
	return 0;
}

int tj_decimal(const char *text, size_t len, int scale, int64_t *out)
{
	size_t i = 0;
	int neg = 0;
	if (i < len && text[i] == '-') {
		neg = 1;
		i++;
	}
	/* digits of the mantissa, with the position of the decimal point */
	size_t dstart = i, ndig = 0, intdig = 0;
	int seen_point = 0;
	for (; i < len; i++) {
		char c = text[i];
		if (c >= '0' && c <= '9') {
			ndig++;
			if (!seen_point)
				intdig++;
		} else if (c == '.' && !seen_point) {
			seen_point = 1;
		} else {
			break;
		}
	}
	if (ndig == 0 || intdig == 0)
		return -1;
	long exp10 = 0;
	if (i < len && (text[i] == 'e' || text[i] == 'E')) {
		i++;
		int eneg = 0;
		if (i < len && (text[i] == '+' || text[i] == '-'))
			eneg = text[i++] == '-';
		size_t es = i;
		for (; i < len && text[i] >= '0' && text[i] <= '9'; i++)
			if (exp10 < 100000)
				exp10 = exp10 * 10 + (text[i] - '0');
		if (i == es)
			return -1;
		if (eneg)
			exp10 = -exp10;
	}
	if (i != len)
		return -1;
	/* value = digits * 10^(exp10 - fracdig + scale); keep the digits whose
	 * weight is >= 1 and round on the first dropped one */
	long shift = exp10 - (long)(ndig - intdig) + scale;
	long keep = (long)ndig + (shift < 0 ? shift : 0);
	uint64_t acc = 0;
	int round = 0;
	long k = 0;
	for (size_t j = dstart; j < i && k < (long)ndig; j++) {
		char c = text[j];
		if (c == '.')
			continue;
		if (c < '0' || c > '9')
			break;
		if (k < keep) {
			if (acc > (UINT64_MAX - 9) / 10)
				return -2;
			acc = acc * 10 + (uint64_t)(c - '0');
		} else if (k == keep) {
			round = c >= '5';
		}
		k++;
	}
	for (long s = 0; s < shift && acc != 0; s++) {
		if (acc > UINT64_MAX / 10)
			return -2;
		acc *= 10;
	}
	acc += (uint64_t)round;
	if (acc > (uint64_t)INT64_MAX)
		return -2;
	*out = neg ? -(int64_t)acc : (int64_t)acc;
	return 0;
}

int tj_micros(ImportCtx *ctx, const TjNode *v, const char *what, int64_t *ns)
{
	if (v->type != TJ_NUMBER)
		return tj_fail(ctx, v, "%s must be a number of microseconds, not %s", what,
		               tj_type_name(v));
	int rc = tj_decimal(v->text, v->len, 3, ns);
	char q[64];
	if (rc == -2)
		return tj_fail(ctx, v, "%s %s is out of range", what, tj_quote(v->text, v->len, q, sizeof q));
	if (rc)
		return tj_fail(ctx, v, "%s %s is not a number", what, tj_quote(v->text, v->len, q, sizeof q));
	if (*ns < 0)
		return tj_fail(ctx, v, "%s must not be negative (%s)", what,
		               tj_quote(v->text, v->len, q, sizeof q));
	return 0;
}

void tj_json(Buf *b, const TjNode *v)
{
	switch (v->type) {
	case TJ_NULL:
		buf_adds(b, "null");
		break;
	case TJ_BOOL:
		buf_adds(b, v->boolean ? "true" : "false");
		break;
	case TJ_NUMBER:
		buf_add(b, v->text, v->len);
		break;
	case TJ_STRING:
		buf_add_json_str(b, v->text, v->len);
		break;
	case TJ_ARRAY:
	case TJ_OBJECT:
		buf_addc(b, v->type == TJ_ARRAY ? '[' : '{');
		for (const TjNode *c = v->child; c; c = c->next) {
			if (c != v->child)
				buf_addc(b, ',');
			if (v->type == TJ_OBJECT) {
				buf_add_json_str(b, c->key, strlen(c->key));
				buf_addc(b, ':');
			}
			tj_json(b, c);  /* depth is bounded by TJ_MAX_DEPTH */
		}
		buf_addc(b, v->type == TJ_ARRAY ? ']' : '}');
		break;
	}
}

void tj_shared_server_id(const char *trace_id, const char *span_id, char out[17])
{
	unsigned char dig[EVP_MAX_MD_SIZE];
	unsigned int dlen = 0;
	char in[128];
	int n = snprintf(in, sizeof in, "tailtriage/shared-server/%s/%s", trace_id, span_id);
	EVP_Digest(in, (size_t)n, dig, &dlen, EVP_sha256(), NULL);
	int nonzero = 0;
	for (int i = 0; i < 8; i++) {
		snprintf(out + 2 * i, 3, "%02x", dig[i]);
		nonzero |= dig[i];
	}
	if (!nonzero)
		out[15] = '1';
	out[16] = '\0';
}

static int same(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

int tj_child_of_server(const char *child_svc, const char *server_svc, const char *client_svc)
{
	if (same(child_svc, server_svc))
		return 1;
	if (same(child_svc, client_svc))
		return 0;
	return 1;
}

/* ---- attribute objects ------------------------------------------------- */

struct TjAttr {
	size_t koff, klen, voff, vlen;
	size_t seq;
};

void tj_attrs_init(TjAttrs *a)
{
	memset(a, 0, sizeof *a);
	buf_init(&a->text);
}

void tj_attrs_fini(TjAttrs *a)
{
	buf_fini(&a->text);
	free(a->v);
	memset(a, 0, sizeof *a);
}

void tj_attrs_reset(TjAttrs *a)
{
	buf_reset(&a->text);
	a->n = 0;
}

void tj_attrs_add_json(TjAttrs *a, const char *key, size_t klen, const char *json, size_t len)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 16;
		a->v = xrealloc(a->v, a->cap * sizeof *a->v);
	}
	struct TjAttr *e = &a->v[a->n];
	e->seq = a->n++;
	e->koff = a->text.len;
	e->klen = klen;
	buf_add(&a->text, key, klen);
	e->voff = a->text.len;
	e->vlen = len;
	buf_add(&a->text, json, len);
}

void tj_attrs_add_str(TjAttrs *a, const char *key, const char *s, size_t len)
{
	Buf v;
	buf_init(&v);
	buf_add_json_str(&v, s, len);
	tj_attrs_add_json(a, key, strlen(key), v.p, v.len);
	buf_fini(&v);
}

void tj_attrs_add_int(TjAttrs *a, const char *key, int64_t val)
{
	char num[32];
	int n = snprintf(num, sizeof num, "%lld", (long long)val);
	tj_attrs_add_json(a, key, strlen(key), num, (size_t)n);
}

static const char *sort_text;

static int attr_cmp(const void *pa, const void *pb)
{
	const struct TjAttr *x = pa, *y = pb;
	size_t m = x->klen < y->klen ? x->klen : y->klen;
	int c = memcmp(sort_text + x->koff, sort_text + y->koff, m);
	if (c)
		return c;
	if (x->klen != y->klen)
		return x->klen < y->klen ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The keys tj_attrs_names() reads, in TjAttrs.named order. */
static const char *const NAMED_KEYS[TJ_NAMED] = {"peer.service", "server.address",
                                                 "net.peer.name", "db.system.name",
                                                 "db.system", "server.port",
                                                 "net.peer.port", "url.full", "http.url"};

void tj_attrs_write(TjAttrs *a, Buf *out)
{
	for (int k = 0; k < TJ_NAMED; k++)
		a->named[k] = -1;
	for (int k = 0; k < RA_COUNT; k++)
		a->route_at[k] = -1;
	buf_addc(out, '{');
	if (a->n) {
		sort_text = a->text.p;
		qsort(a->v, a->n, sizeof *a->v, attr_cmp);
		sort_text = NULL;
		int first = 1;
		for (size_t i = 0; i < a->n; i++) {
			const struct TjAttr *e = &a->v[i];
			if (i + 1 < a->n && e->klen == a->v[i + 1].klen
			    && memcmp(a->text.p + e->koff, a->text.p + a->v[i + 1].koff, e->klen) == 0)
				continue;  /* a later value of the same key wins */
			if (!first)
				buf_addc(out, ',');
			first = 0;
			for (int k = 0; k < TJ_NAMED; k++)
				if (e->klen == strlen(NAMED_KEYS[k]) &&
				    memcmp(a->text.p + e->koff, NAMED_KEYS[k], e->klen) == 0)
					a->named[k] = (long)i;
			int ri = route_attr_index(a->text.p + e->koff, e->klen);
			if (ri >= 0)
				a->route_at[ri] = (long)i;
			buf_add_json_str(out, a->text.p + e->koff, e->klen);
			buf_addc(out, ':');
			buf_add(out, a->text.p + e->voff, e->vlen);
		}
	}
	buf_addc(out, '}');
}

/* The first of keys named[first], ..., named[first + keys - 1] written, as a
 * plain string into out ("" for none); NULL for a value of another kind or
 * with escapes. */
static const char *named_value(const TjAttrs *a, int first, int keys, Buf *out)
{
	buf_reset(out);
	long i = -1;
	for (int k = first; k < first + keys && i < 0; k++)
		i = a->named[k];
	if (i < 0)
		return buf_str(out);
	const char *v = a->text.p + a->v[i].voff;
	size_t n = a->v[i].vlen;
	if (n < 2 || v[0] != '"' || v[n - 1] != '"' || memchr(v + 1, '\\', n - 2) != NULL)
		return NULL;
	buf_add(out, v + 1, n - 2);
	return buf_str(out);
}

/* The port written under key named[k] (a number or a string of digits,
 * 1 to 65535), or 0. */
static long named_port(const TjAttrs *a, int k)
{
	if (a->named[k] < 0)
		return 0;
	const char *v = a->text.p + a->v[a->named[k]].voff;
	size_t n = a->v[a->named[k]].vlen;
	if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
		v++;
		n -= 2;
	}
	return import_port(v, n);
}

void tj_attrs_names(const TjAttrs *a, Buf *peer, Buf *db, const char **peer_out,
                    const char **db_out)
{
	*peer_out = named_value(a, 0, 3, peer);
	*db_out = named_value(a, 3, 2, db);
	/* an address with its port (server.port, net.peer.port), as the
	 * services of one host differ only by it */
	int addr = a->named[0] >= 0 ? 0 : a->named[1] >= 0 ? 1 : a->named[2] >= 0 ? 2 : 0;
	long port = addr == 1 ? named_port(a, 5) : addr == 2 ? named_port(a, 6) : 0;
	if (*peer_out && port > 0) {
		import_addr_port(peer, port);
		*peer_out = buf_str(peer);
	}
	/* no attribute names the peer: the authority of the URL called */
	if (*peer_out && !**peer_out && (a->named[7] >= 0 || a->named[8] >= 0)) {
		Buf url;
		buf_init(&url);
		const char *u = named_value(a, 7, 2, &url);
		const char *at = "";
		size_t n = u ? import_url_authority(u, strlen(u), &at) : 0;
		buf_reset(peer);
		buf_add(peer, at, n);
		*peer_out = u ? buf_str(peer) : NULL;
		buf_fini(&url);
	}
}

int tj_attrs_route(const TjAttrs *a, const char *name, size_t nlen, Buf *out)
{
	RouteAttrs ra;
	memset(&ra, 0, sizeof ra);
	for (int k = 0; k < RA_COUNT; k++) {
		long i = a->route_at[k];
		if (i < 0)
			continue;
		const char *v = a->text.p + a->v[i].voff;
		size_t n = a->v[i].vlen;
		if (n < 2 || v[0] != '"' || v[n - 1] != '"')
			continue; /* not a string: absent, as for the readers */
		if (memchr(v + 1, '\\', n - 2) != NULL)
			return -1;
		ra.v[k] = v + 1;
		ra.n[k] = n - 2;
	}
	return route_make(&ra, name, nlen, out);
}

const char *tj_quote(const char *s, size_t n, char *out, size_t outsz)
{
	size_t o = 0;
	if (outsz < 8) {
		if (outsz)
			out[0] = '\0';
		return out;
	}
	out[o++] = '"';
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		/* room for this char (up to 4 bytes), "...\"" and the NUL */
		size_t need = c < 0x20 || c == 0x7f ? 4 : 1;
		if ((c & 0xC0) == 0xC0) {
			size_t k = 1;
			while (i + k < n && ((unsigned char)s[i + k] & 0xC0) == 0x80)
				k++;
			need = k;
		}
		if (o + need + 5 > outsz) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		if (c < 0x20 || c == 0x7f) {
			snprintf(out + o, 5, "\\x%02x", c);
			o += 4;
		} else if ((c & 0xC0) == 0xC0) {
			memcpy(out + o, s + i, need);
			o += need;
			i += need - 1;
		} else {
			out[o++] = (char)c;
		}
	}
	out[o++] = '"';
	out[o] = '\0';
	return out;
}

/* ---- sniffing ------------------------------------------------------------ */

int tj_contains(const char *head, size_t len, const char *needle)
{
	size_t n = strlen(needle);
	if (n == 0 || n > len)
		return n == 0;
	for (size_t i = 0; i + n <= len; i++)
		if (head[i] == needle[0] && memcmp(head + i, needle, n) == 0)
			return 1;
	return 0;
}

int tj_first_char(const char *head, size_t len, size_t *pos)
{
	for (size_t i = 0; i < len; i++) {
		char c = head[i];
		if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			if (pos)
				*pos = i;
			return (unsigned char)c;
		}
	}
	return -1;
}
