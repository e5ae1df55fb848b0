/*
 * store_pack.c - trace packs: a trace's spans in one row (store.h says
 * what they are for and when one is valid).
 *
 * Encoding (version 2): byte 2, the trace id and a NUL, then per span up
 * to the last four bytes, which hold the number of spans (little-endian;
 * a pack cut short, or with anything after its spans, does not decode):
 *   span id, parent id, service, host, name, class, database system, peer,
 *     route (nine strings), each a varint tag: 0 the empty string, 1 a new
 *     string whose bytes and a NUL follow (it becomes the next entry of the
 *     pack's dictionary, while the dictionary holds fewer than PACK_DICT_MAX),
 *     k >= 2 dictionary entry k - 2;
 *   varint kind, zigzag varint status code, zigzag varint route rule;
 *   zigzag varint start minus the previous span's start (the first: minus 0);
 *   zigzag varint end minus start;
 *   byte has_queue, then (when 1) zigzag varint queue.
 * Differences are taken in unsigned 64-bit arithmetic, so every int64
 * round-trips. A pack is decoded whole (every bound checked) before its
 * first row is handed on, so a damaged one is read from the spans
 * instead, with nothing of it delivered. Version 1 (without the route)
 * is no longer read: its traces are read from their spans.
 */
#include "store.h"
#include "store_priv.h"
#include "varint.h"

#include <stdlib.h>
#include <string.h>

#define PACK_VERSION 2
#define PACK_DICT_MAX 65536        /* entries a pack's dictionary holds */
#define PACK_FIELDS 9              /* strings per span */

struct StorePackStr {
	uint64_t hash;
	uint32_t off;             /* in the pack: the string's first byte */
	int32_t idx;              /* -1: empty slot */
};

enum {
	PSTMT_RANGE,
	PSTMT_KEY,
	PSTMT_PUT,
	PSTMT_COUNT_
};
_Static_assert(PSTMT_COUNT_ == STORE_PACK_STMTS, "STORE_PACK_STMTS");

static const char *const psql[STORE_PACK_STMTS] = {
	/* the packs of keys [?1, ?2), each with "valid for the spans up to
	 * rowid ?3": its upto is the largest rowid of its trace's spans up to
	 * ?3 (an index-only look at the identity index, which holds the rowid) */
	[PSTMT_RANGE] = "SELECT p.trace_key, p.pack, p.upto = (SELECT max(s.id) FROM spans s"
	                " INDEXED BY spans_identity WHERE s.trace_key = p.trace_key AND s.id <= ?3)"
	                " FROM trace_packs p WHERE p.trace_key >= ?1 AND p.trace_key < ?2"
	                " ORDER BY p.trace_key",
	[PSTMT_KEY] = "SELECT p.pack, p.upto = (SELECT max(s.id) FROM spans s"
	              " INDEXED BY spans_identity WHERE s.trace_key = ?1)"
	              " FROM trace_packs p WHERE p.trace_key = ?1",
	[PSTMT_PUT] = "INSERT OR REPLACE INTO trace_packs(trace_key, upto, pack) VALUES (?1, ?2, ?3)",
};

static sqlite3_stmt *stmt(Store *st, int i, Err *err)
{
	return store_stmt_lazy(st, &st->pstmt[i], psql[i], "a trace pack statement", err);
}

/* ---- writing ---------------------------------------------------------------- */

/* A string's hash from its length and its first and last eight bytes (ids
 * differ there; equal hashes are compared in full anyway). */
static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t a = 0, z = 0;
	memcpy(&a, s, n < 8 ? n : 8);
	if (n > 8)
		memcpy(&z, s + n - 8, 8);
	uint64_t h = (a ^ (z * 0x9e3779b97f4a7c15ULL) ^ n) * 0xff51afd7ed558ccdULL;
	return h ^ (h >> 31);
}

/* Writers into room reserved beforehand (buf_reserve): no check per byte. */
static unsigned char *w_zigzag(unsigned char *o, uint64_t v)
{
	return var_write(o, var_zigzag(v));
}

static void dict_clear(StorePack *p)
{
	p->n_dict = 0;
	for (int i = 0; i < p->cap_dict; i++)
		p->dict[i].idx = -1;
}

static void dict_grow(StorePack *p)
{
	int cap = p->cap_dict ? p->cap_dict * 2 : 64;
	struct StorePackStr *old = p->dict;
	int old_cap = p->cap_dict;
	p->dict = xmalloc((size_t)cap * sizeof *p->dict);
	p->cap_dict = cap;
	for (int i = 0; i < cap; i++)
		p->dict[i].idx = -1;
	for (int i = 0; i < old_cap; i++) {
		if (old[i].idx < 0)
			continue;
		int j = (int)(old[i].hash & (uint64_t)(cap - 1));
		while (p->dict[j].idx >= 0)
			j = (j + 1) & (cap - 1);
		p->dict[j] = old[i];
	}
	free(old);
}

/* Writes string s (n bytes) at o: its tag, and when new its bytes and a
 * NUL (the room was reserved). Returns the end. */
static unsigned char *w_str(StorePack *p, unsigned char *o, const char *s, size_t n)
{
	if (n == 0) {
		*o++ = 0;
		return o;
	}
	uint64_t h = hash_bytes(s, n);
	int mask = p->cap_dict - 1, j = -1;
	if (p->cap_dict > 0) {
		for (j = (int)(h & (uint64_t)mask); p->dict[j].idx >= 0; j = (j + 1) & mask) {
			const char *d = p->b.p + p->dict[j].off;
			if (p->dict[j].hash == h && memcmp(d, s, n) == 0 && d[n] == '\0')
				return var_write(o, (uint64_t)p->dict[j].idx + 2);
		}
	}
	*o++ = 1;
	size_t off = (size_t)(o - (unsigned char *)p->b.p);
	memcpy(o, s, n);
	o[n] = 0;
	o += n + 1;
	if (p->n_dict >= PACK_DICT_MAX || off > UINT32_MAX)
		return o;
	if (2 * (p->n_dict + 1) > p->cap_dict) {
		dict_grow(p);
		mask = p->cap_dict - 1;
		j = (int)(h & (uint64_t)mask);
		while (p->dict[j].idx >= 0)
			j = (j + 1) & mask;
	}
	p->dict[j] = (struct StorePackStr){.hash = h, .off = (uint32_t)off, .idx = p->n_dict++};
	return o;
}

void store_pack_init(StorePack *p)
{
	memset(p, 0, sizeof *p);
	buf_init(&p->b);
}

void store_pack_fini(StorePack *p)
{
	buf_fini(&p->b);
	free(p->dict);
	memset(p, 0, sizeof *p);
}

void store_pack_begin(StorePack *p, const StoreSpanRow *r)
{
	buf_reset(&p->b);
	dict_clear(p);
	p->key = r->trace_key;
	p->upto = r->rowid;
	p->n = 0;
	p->bad = r->trace_key <= 0;
	p->prev_start = 0;
	buf_addc(&p->b, PACK_VERSION);
	buf_add(&p->b, store_nz(r->trace_id), strlen(store_nz(r->trace_id)) + 1);
	buf_add(&p->b, "\0\0\0\0", 4); /* the count, rewritten with each row */
	store_pack_row(p, r);
}

void store_pack_row(StorePack *p, const StoreSpanRow *r)
{
	if (r->trace_key != p->key)
		p->bad = 1;
	if (r->rowid > p->upto)
		p->upto = r->rowid;
	const char *f[PACK_FIELDS] = {r->span_id, r->parent_id, r->service,   r->host, r->name,
	                              r->wclass,  r->db_system, r->peer,      r->route};
	size_t len[PACK_FIELDS], room = 7 * 10 + 1;
	for (int i = 0; i < PACK_FIELDS; i++) {
		len[i] = f[i] ? strlen(f[i]) : 0;
		room += len[i] + 1 + 10;
	}
	p->b.len -= 4; /* the count goes after this row */
	buf_reserve(&p->b, room + 4);
	unsigned char *o = (unsigned char *)p->b.p + p->b.len;
	/* a growing dictionary never moves the buffer: the room is there */
	for (int i = 0; i < PACK_FIELDS; i++)
		o = w_str(p, o, f[i], len[i]);
	o = var_write(o, (uint64_t)(int64_t)r->kind);
	o = w_zigzag(o, (uint64_t)(int64_t)r->status_code);
	o = w_zigzag(o, (uint64_t)(int64_t)r->route_rule);
	o = w_zigzag(o, (uint64_t)r->start_ns - (uint64_t)p->prev_start);
	o = w_zigzag(o, (uint64_t)r->end_ns - (uint64_t)r->start_ns);
	*o++ = r->has_queue ? 1 : 0;
	if (r->has_queue)
		o = w_zigzag(o, (uint64_t)r->queue_ns);
	p->prev_start = r->start_ns;
	p->n++;
	uint32_t n = (uint32_t)p->n;
	for (int i = 0; i < 4; i++)
		*o++ = (unsigned char)(n >> (8 * i));
	p->b.len = (size_t)(o - (unsigned char *)p->b.p);
	*o = 0; /* Buf's terminator (buf_reserve() keeps a byte for it) */
}

int store_pack_ok(const StorePack *p)
{
	return p->n > 0 && !p->bad;
}

int store_pack_put(Store *st, int64_t key, int64_t upto, const void *data, size_t len, Err *err)
{
	sqlite3_stmt *s = stmt(st, PSTMT_PUT, err);
	if (s == NULL)
		return TT_ESTORE;
	sqlite3_bind_int64(s, 1, key);
	sqlite3_bind_int64(s, 2, upto);
	sqlite3_bind_blob64(s, 3, data, len, SQLITE_STATIC);
	int rc = sqlite3_step(s);
	store_stmt_done(s);
	if (rc != SQLITE_DONE)
		return store_sqlerr(st, err, "writing a trace pack");
	return 0;
}

/* ---- reading ---------------------------------------------------------------- */

/* A NUL-terminated string at r->p, within the blob. */
static const char *get_cstr(VarReader *r)
{
	const unsigned char *nul = r->p < r->end ? memchr(r->p, 0, (size_t)(r->end - r->p)) : NULL;
	if (nul == NULL) {
		r->bad = 1;
		return "";
	}
	const char *s = (const char *)r->p;
	r->p = nul + 1;
	return s;
}

static const char *get_str(Store *st, VarReader *r)
{
	uint64_t tag = var_get(r);
	if (r->bad || tag == 0)
		return "";
	if (tag == 1) {
		const char *s = get_cstr(r);
		if (!r->bad && st->pk_ndict < PACK_DICT_MAX) {
			if (st->pk_ndict == st->pk_cdict) {
				st->pk_cdict = st->pk_cdict ? st->pk_cdict * 2 : 64;
				st->pk_dict = xrealloc(st->pk_dict, (size_t)st->pk_cdict * sizeof *st->pk_dict);
			}
			st->pk_dict[st->pk_ndict++] = s;
		}
		return s;
	}
	if (tag - 2 >= (uint64_t)st->pk_ndict) {
		r->bad = 1;
		return "";
	}
	return st->pk_dict[tag - 2];
}

/* The rows of a pack into st->pk_rows (strings point into the blob): their
 * count, or -1 when the pack does not decode. */
static int decode(Store *st, const void *blob, int len)
{
	if (blob == NULL || len < 7)
		return -1;
	const unsigned char *b = blob;
	VarReader r = {b, b + len - 4, 0};
	uint32_t want = (uint32_t)b[len - 4] | (uint32_t)b[len - 3] << 8 |
	                (uint32_t)b[len - 2] << 16 | (uint32_t)b[len - 1] << 24;
	if (*r.p++ != PACK_VERSION || want == 0 || want > (1u << 24))
		return -1;
	st->pk_ndict = 0;
	const char *trace_id = get_cstr(&r);
	int n = 0;
	uint64_t start = 0;
	while (!r.bad && r.p < r.end) {
		if (n == st->pk_crows) {
			if (st->pk_crows >= (1 << 24))
				return -1;
			st->pk_crows = st->pk_crows ? st->pk_crows * 2 : 64;
			st->pk_rows = xrealloc(st->pk_rows, (size_t)st->pk_crows * sizeof *st->pk_rows);
		}
		StoreSpanRow *w = &st->pk_rows[n];
		memset(w, 0, sizeof *w);
		w->trace_id = trace_id;
		w->span_id = get_str(st, &r);
		w->parent_id = get_str(st, &r);
		w->service = get_str(st, &r);
		w->host = get_str(st, &r);
		w->name = get_str(st, &r);
		w->wclass = get_str(st, &r);
		w->db_system = get_str(st, &r);
		w->peer = get_str(st, &r);
		w->route = get_str(st, &r);
		uint64_t kind = var_get(&r), status = var_get_zigzag(&r);
		int64_t rule = (int64_t)var_get_zigzag(&r);
		start += var_get_zigzag(&r);
		uint64_t dur = var_get_zigzag(&r);
		if (r.p >= r.end) {
			r.bad = 1;
			break;
		}
		unsigned char q = *r.p++;
		if (kind > 1000 || (int64_t)status < -1000000 || (int64_t)status > 1000000 || q > 1 ||
		    rule < -1 || rule > 1000) {
			r.bad = 1;
			break;
		}
		w->kind = (int)kind;
		w->status_code = (int)(int64_t)status;
		w->route_rule = (int)rule;
		w->start_ns = (int64_t)start;
		w->end_ns = (int64_t)(start + dur);
		w->has_queue = q;
		w->queue_ns = q ? (int64_t)var_get_zigzag(&r) : 0;
		w->attrs_json = w->events_json = "";
		n++;
	}
	return r.bad || n == 0 || (uint32_t)n != want ? -1 : n;
}

/* Hands the n decoded rows of trace key to fn; 1 when fn stopped. */
static int deliver(Store *st, int n, int64_t key, StoreSpanFn fn, void *ctx)
{
	for (int i = 0; i < n; i++) {
		st->pk_rows[i].trace_key = key;
		if (fn(ctx, &st->pk_rows[i]))
			return 1;
	}
	return 0;
}

/* The spans of keys [from, to) up to rowid upto, from the spans table.
 * *stopped: fn asked to stop. */
static int spans_range(Store *st, int64_t from, int64_t to, int64_t upto, StoreSpanFn fn,
                       void *ctx, int *stopped, Err *err)
{
	if (from >= to)
		return 0;
	sqlite3_stmt *s = st->rstmt[RSTMT_KEY_RANGE];
	sqlite3_bind_int64(s, 1, from);
	sqlite3_bind_int64(s, 2, to);
	sqlite3_bind_int64(s, 3, upto);
	return store_run_scan(st, s, fn, ctx, stopped, err);
}

int store_spans_key_range(Store *st, int64_t from_key, int64_t to_key, int64_t upto_rowid,
                          StoreSpanFn fn, void *ctx, Err *err)
{
	sqlite3_stmt *s = stmt(st, PSTMT_RANGE, err);
	if (s == NULL)
		return TT_ESTORE;
	sqlite3_bind_int64(s, 1, from_key);
	sqlite3_bind_int64(s, 2, to_key);
	sqlite3_bind_int64(s, 3, upto_rowid);
	/* keys in order: the ones between two packs (no pack: a trace without
	 * a root, or one stored before packs) and those whose pack is stale or
	 * damaged come from the spans, in their place */
	int64_t next = from_key;
	int rc = 0, stopped = 0, step;
	while (!stopped && (step = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t k = sqlite3_column_int64(s, 0);
		if ((rc = spans_range(st, next, k, upto_rowid, fn, ctx, &stopped, err)) || stopped)
			break;
		int n = sqlite3_column_int(s, 2) == 1
		            ? decode(st, sqlite3_column_blob(s, 1), sqlite3_column_bytes(s, 1))
		            : -1;
		if (n > 0) {
			st->pk_used++;
			stopped = deliver(st, n, k, fn, ctx);
		} else {
			st->pk_spans++;
			if ((rc = spans_range(st, k, k + 1, upto_rowid, fn, ctx, &stopped, err)))
				break;
		}
		next = k + 1;
	}
	if (rc == 0 && !stopped && step != SQLITE_DONE)
		rc = store_sqlerr(st, err, "reading trace packs");
	store_stmt_done(s);
	if (rc == 0 && !stopped)
		rc = spans_range(st, next, to_key, upto_rowid, fn, ctx, &stopped, err);
	return rc;
}

int store_trace_key_scan(Store *st, int64_t trace_key, StoreSpanFn fn, void *ctx, Err *err)
{
	sqlite3_stmt *s = stmt(st, PSTMT_KEY, err);
	if (s == NULL)
		return TT_ESTORE;
	sqlite3_bind_int64(s, 1, trace_key);
	int step = sqlite3_step(s), n = -1;
	if (step == SQLITE_ROW && sqlite3_column_int(s, 1) == 1)
		n = decode(st, sqlite3_column_blob(s, 0), sqlite3_column_bytes(s, 0));
	if (n > 0) {
		st->pk_used++;
		deliver(st, n, trace_key, fn, ctx);
		store_stmt_done(s);
		return 0;
	}
	if (step == SQLITE_ROW)
		st->pk_spans++;
	store_stmt_done(s);
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		return store_sqlerr(st, err, "reading a trace pack");
	int stopped = 0;
	sqlite3_stmt *t = st->rstmt[RSTMT_TRACE_KEY];
	sqlite3_bind_int64(t, 1, trace_key);
	return store_run_scan(st, t, fn, ctx, &stopped, err);
}

void store_pack_finalize(Store *st)
{
	store_stmts_finalize(st->pstmt, STORE_PACK_STMTS);
	free(st->pk_rows);
	free(st->pk_dict);
	st->pk_rows = NULL;
	st->pk_dict = NULL;
	st->pk_crows = st->pk_cdict = st->pk_ndict = 0;
}

void store_pack_counts(const Store *st, int64_t *used, int64_t *refused)
{
	*used = st->pk_used;
	*refused = st->pk_spans;
}
