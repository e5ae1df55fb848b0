/*
 * store_spool.c - a bulk load's spool: what the aggregates' pass reads of
 * each span, kept beside the rows as they are stored.
 *
 * The pass that builds the aggregates at the end of a bulk load
 * (store_bulk_finish()) needs every span grouped by trace. Read back from
 * SQLite that costs more CPU than any other step of that pass (a seek into
 * the identity index and one into the table per span, the column calls);
 * the writer had each span in hand a moment before. So while a bulk load
 * stores spans, it also appends a compact record of each, holding exactly
 * the fields a span read gives (StoreSpanRow, without attributes), to an
 * unlinked temporary file beside the database:
 *
 *  - records go to buckets by trace key. Keys are handed out in the order
 *    traces are first seen, so a bucket is a run of keys: a new bucket
 *    starts with the next new trace once the newest one holds
 *    SPOOL_BUCKET_BYTES. Each bucket collects its records in a small
 *    buffer written out as one block when full; the file is a sequence of
 *    blocks of any buckets;
 *  - store_spool_read() loads one bucket (its blocks), sorts its records
 *    by (trace key, span id) - the order the identity index gives, so the
 *    spans of a trace come out exactly as a read from SQLite would give
 *    them - and hands over the traces that have a root span, as the
 *    aggregates' reads do (store_spans_scan_rooted()). Buckets are
 *    independent: several threads may read different ones at once.
 *
 * The spool must say what the rows say, or nothing. It is given up (the
 * pass then reads SQLite, as it always could) when a row could differ
 * from its record: an insert that stored fewer rows than given (a
 * duplicate: which one is not known), rows changed after they were
 * stored (a resource or class that came after its spans), a rolled-back
 * file, a database system, peer or route that only the readers' SQL
 * takes from the attributes, a string longer than a record holds, a
 * bucket too big to load, or a write that failed.
 */
#define _GNU_SOURCE  /* O_TMPFILE */
#include "store.h"
#include "store_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"

#define SPOOL_BUCKET_BYTES (1 << 20)  /* a bucket's size before the next starts */
#define SPOOL_BLOCK (64 << 10)        /* a bucket's buffer, written when full */
#define SPOOL_MAX_LOAD (48 << 20)     /* a bigger bucket is not loaded: give up */
#define SPOOL_BUFFERED 16             /* buckets that keep their buffer's memory */

enum { SP_TRACE, SP_SPAN, SP_PARENT, SP_SERVICE, SP_HOST, SP_NAME, SP_CLASS, SP_DB, SP_PEER,
       SP_ROUTE, SP_STRS };

/* A record: this head, then the SP_STRS strings (len[] bytes each, no
 * NULs), in one block of one bucket. */
typedef struct SpoolHead {
	uint32_t size;            /* head and strings */
	int32_t kind, status;
	int32_t route_rule;       /* as StoreSpanRow.route_rule */
	int32_t has_queue;
	int64_t key, rowid, start, end, queue;
	uint16_t len[SP_STRS];
} SpoolHead;

typedef struct SpoolBlock {
	int64_t off;
	uint32_t len;
} SpoolBlock;

typedef struct SpoolBucket {
	int64_t key_lo;           /* its keys: [key_lo, the next bucket's key_lo) */
	Buf pending;              /* records not written yet */
	SpoolBlock *blocks;
	int64_t n_blocks, cap_blocks;
	int64_t bytes;            /* written and pending */
	int64_t root_lo, root_hi; /* the earliest and latest root start in it */
} SpoolBucket;

struct StoreSpool {
	int fd;
	int broken;               /* given up: never read */
	int sealed;               /* every record is in the file */
	int64_t end;              /* file length */
	int64_t max_key;          /* the newest trace key seen */
	SpoolBucket *b;
	int64_t n, cap;
};

StoreSpool *store_spool_new(const char *near_path)
{
	char *copy = xstrdup(near_path);
	const char *dir = dirname(copy);
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		/* no O_TMPFILE on this file system: a named file, unlinked at once */
		size_t n = strlen(dir) + 32;
		char *tmpl = xmalloc(n);
		snprintf(tmpl, n, "%s/.tailtriage-spool-XXXXXX", dir);
		fd = mkostemp(tmpl, O_CLOEXEC);
		if (fd >= 0)
			unlink(tmpl);
		free(tmpl);
	}
	free(copy);
	if (fd < 0)
		return NULL;
	StoreSpool *sp = xcalloc(1, sizeof *sp);
	sp->fd = fd;
	return sp;
}

static void bucket_drop_memory(SpoolBucket *k)
{
	buf_fini(&k->pending);
	buf_init(&k->pending);
}

void store_spool_free(StoreSpool *sp)
{
	if (sp == NULL)
		return;
	for (int64_t i = 0; i < sp->n; i++) {
		buf_fini(&sp->b[i].pending);
		free(sp->b[i].blocks);
	}
	free(sp->b);
	if (sp->fd >= 0)
		close(sp->fd);
	free(sp);
}

void store_spool_break(StoreSpool *sp)
{
	if (sp == NULL || sp->broken)
		return;
	sp->broken = 1;
	/* nothing of it will be read: its memory and file go now */
	for (int64_t i = 0; i < sp->n; i++) {
		buf_fini(&sp->b[i].pending);
		free(sp->b[i].blocks);
	}
	free(sp->b);
	sp->b = NULL;
	sp->n = sp->cap = 0;
	if (sp->fd >= 0 && ftruncate(sp->fd, 0) != 0) {
		/* the file is unlinked: it goes with the descriptor */
	}
}

/* Writes bucket i's pending records as one block. */
static void bucket_flush(StoreSpool *sp, int64_t i)
{
	SpoolBucket *k = &sp->b[i];
	if (k->pending.len == 0)
		return;
	size_t done = 0;
	while (done < k->pending.len) {
		ssize_t w = pwrite(sp->fd, k->pending.p + done, k->pending.len - done,
		                   sp->end + (int64_t)done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			store_spool_break(sp);
			return;
		}
		done += (size_t)w;
	}
	if (k->n_blocks == k->cap_blocks) {
		k->cap_blocks = k->cap_blocks ? k->cap_blocks * 2 : 8;
		k->blocks = xrealloc(k->blocks, (size_t)k->cap_blocks * sizeof *k->blocks);
	}
	k->blocks[k->n_blocks++] = (SpoolBlock){.off = sp->end, .len = (uint32_t)k->pending.len};
	sp->end += (int64_t)k->pending.len;
	/* an old bucket gets a span now and then: its buffer's memory goes */
	if (i < sp->n - SPOOL_BUFFERED)
		bucket_drop_memory(k);
	else
		buf_reset(&k->pending);
}

/* The bucket of key (a new key may start one). */
static int64_t bucket_of(StoreSpool *sp, int64_t key)
{
	if (key > sp->max_key) {
		sp->max_key = key;
		if (sp->n == 0 || sp->b[sp->n - 1].bytes >= SPOOL_BUCKET_BYTES) {
			if (sp->n == sp->cap) {
				sp->cap = sp->cap ? sp->cap * 2 : 16;
				sp->b = xrealloc(sp->b, (size_t)sp->cap * sizeof *sp->b);
			}
			SpoolBucket *k = &sp->b[sp->n++];
			memset(k, 0, sizeof *k);
			buf_init(&k->pending);
			k->key_lo = key;
			k->root_lo = INT64_MAX;
			k->root_hi = INT64_MIN;
			/* the bucket that just lost its place among the buffered */
			if (sp->n - 1 - SPOOL_BUFFERED >= 0)
				bucket_flush(sp, sp->n - 1 - SPOOL_BUFFERED);
		}
		return sp->n - 1;
	}
	int64_t lo = 0, hi = sp->n - 1; /* the last bucket with key_lo <= key */
	while (lo < hi) {
		int64_t mid = (lo + hi + 1) / 2;
		if (sp->b[mid].key_lo <= key)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* The name a CLIENT span's attributes give when the importer left the
 * column NULL: "" when none of keys is in them; NULL when one is (only the
 * readers' SQL decides then). */
static const char *named_or_give_up(const char *col, int kind, const char *attrs,
                                    const char *const *keys)
{
	if (kind != 3)
		return "";
	if (col)
		return col;
	for (; attrs && *keys; keys++)
		if (strstr(attrs, *keys))
			return NULL;
	return "";
}

/* The route a read gives (STORE_ROUTE_COL): "" for a span that has none;
 * NULL when only the readers' SQL can say (store_span_route()). */
static const char *route_or_give_up(const StoreSpan *s, int *rule)
{
	const char *r = NULL;
	if (!store_span_route(s, &r, rule))
		return NULL;
	return r ? r : "";
}

void store_spool_add(StoreSpool *sp, const StoreSpan *s, int64_t key, int64_t rowid)
{
	if (sp == NULL || sp->broken)
		return;
	int rule = -1;
	static const char *const db_keys[] = {"\"db.system", NULL};
	static const char *const peer_keys[] = {"\"peer.service\"", "\"server.address\"",
	                                        "\"net.peer.name\"", NULL};
	const char *str[SP_STRS] = {
	    [SP_TRACE] = s->trace_id, [SP_SPAN] = s->span_id, [SP_PARENT] = store_nz(s->parent_id),
	    [SP_SERVICE] = store_nz(s->service), [SP_HOST] = store_nz(s->host),
	    [SP_NAME] = store_nz(s->name), [SP_CLASS] = store_nz(s->wclass),
	    [SP_DB] = named_or_give_up(s->attr_db_system, s->kind, s->attrs_json, db_keys),
	    [SP_PEER] = named_or_give_up(s->attr_peer, s->kind, s->attrs_json, peer_keys),
	    [SP_ROUTE] = route_or_give_up(s, &rule),
	};
	SpoolHead h = {.kind = s->kind, .status = s->status_code, .route_rule = rule,
	               .has_queue = s->has_queue != 0,
	               .key = key, .rowid = rowid, .start = s->start_ns, .end = s->end_ns,
	               .queue = s->has_queue ? s->queue_ns : 0};
	size_t size = sizeof h;
	for (int i = 0; i < SP_STRS; i++) {
		size_t n = str[i] ? strlen(str[i]) : SIZE_MAX;
		if (n > UINT16_MAX) { /* NULL (a name left to the readers) or too long */
			store_spool_break(sp);
			return;
		}
		h.len[i] = (uint16_t)n;
		size += n;
	}
	h.size = (uint32_t)size;
	int64_t i = bucket_of(sp, key);
	if (sp->broken)
		return;
	SpoolBucket *k = &sp->b[i];
	if (k->pending.len + size > SPOOL_BLOCK) {
		bucket_flush(sp, i);
		if (sp->broken)
			return;
	}
	if (h.len[SP_PARENT] == 0) {
		if (h.start < k->root_lo)
			k->root_lo = h.start;
		if (h.start > k->root_hi)
			k->root_hi = h.start;
	}
	buf_add(&k->pending, &h, sizeof h);
	for (int j = 0; j < SP_STRS; j++)
		buf_add(&k->pending, str[j], h.len[j]);
	k->bytes += (int64_t)size;
	if (k->bytes > SPOOL_MAX_LOAD)
		store_spool_break(sp);
}

int store_spool_seal(StoreSpool *sp)
{
	if (sp == NULL || sp->broken)
		return -1;
	for (int64_t i = 0; i < sp->n && !sp->broken; i++) {
		bucket_flush(sp, i);
		if (!sp->broken)
			bucket_drop_memory(&sp->b[i]);
	}
	if (sp->broken)
		return -1;
	sp->sealed = 1;
	return 0;
}

int64_t store_spool_buckets(const Store *st)
{
	const StoreSpool *sp = st->spool;
	return sp && sp->sealed && !sp->broken ? sp->n : 0;
}

static atomic_llong loads;

int64_t store_spool_loads(void)
{
	return (int64_t)atomic_load(&loads);
}

/* A record of a loaded bucket, for the sort. */
typedef struct SpoolRec {
	int64_t key;
	const char *sid;          /* its span id (not NUL-terminated) */
	uint32_t sid_len;
	uint32_t off;             /* its head in the bucket's bytes */
} SpoolRec;

/* (trace key, span id) as the identity index orders them: memcmp of the
 * common length, then the shorter first (SQLite's BINARY) */
static int cmp_rec(const void *x, const void *y)
{
	const SpoolRec *a = x, *b = y;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	uint32_t n = a->sid_len < b->sid_len ? a->sid_len : b->sid_len;
	int c = memcmp(a->sid, b->sid, n);
	if (c)
		return c;
	return a->sid_len < b->sid_len ? -1 : a->sid_len > b->sid_len;
}

/* The strings of the record at p, copied into t with their NULs (a
 * record's strings are not terminated). */
static void rec_strings(const char *p, const SpoolHead *h, Buf *t, const char *out[SP_STRS])
{
	buf_reset(t);
	size_t at[SP_STRS];
	const char *q = p + sizeof *h;
	for (int i = 0; i < SP_STRS; i++) {
		at[i] = t->len;
		buf_add(t, q, h->len[i]);
		buf_addc(t, '\0');
		q += h->len[i];
	}
	for (int i = 0; i < SP_STRS; i++)
		out[i] = t->p + at[i];
}

struct StoreSpoolCursor {
	char *bytes;              /* the bucket loaded */
	size_t cap;
	SpoolRec *rec;            /* its records, sorted */
	int64_t cap_rec;
	Buf t;                    /* one record's strings */
};

StoreSpoolCursor *store_spool_cursor_new(void)
{
	StoreSpoolCursor *c = xcalloc(1, sizeof *c);
	buf_init(&c->t);
	return c;
}

void store_spool_cursor_free(StoreSpoolCursor *c)
{
	if (c == NULL)
		return;
	free(c->bytes);
	free(c->rec);
	buf_fini(&c->t);
	free(c);
}

/* Reads bucket k into c->bytes. */
static int load(const StoreSpool *sp, const SpoolBucket *k, StoreSpoolCursor *c, Err *err)
{
	if ((size_t)k->bytes > c->cap) {
		c->cap = (size_t)k->bytes + (size_t)k->bytes / 4;
		free(c->bytes);
		c->bytes = xmalloc(c->cap);
	}
	size_t len = 0;
	for (int64_t i = 0; i < k->n_blocks; i++) {
		size_t done = 0;
		while (done < k->blocks[i].len) {
			ssize_t r = pread(sp->fd, c->bytes + len + done, k->blocks[i].len - done,
			                  k->blocks[i].off + (int64_t)done);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				return err_set(err, TT_EIO, "reading the import's spool: %s",
				               r < 0 ? strerror(errno) : "short read");
			done += (size_t)r;
		}
		len += done;
	}
	return 0;
}

int store_spool_read(Store *st, StoreSpoolCursor *c, int64_t bucket, int64_t from_ns,
                     int64_t to_ns, StoreSpanFn fn, void *ctx, Err *err)
{
	const StoreSpool *sp = st->spool;
	if (bucket < 0 || bucket >= store_spool_buckets(st))
		return err_set(err, TT_EINVAL, "spool: no bucket %lld", (long long)bucket);
	const SpoolBucket *k = &sp->b[bucket];
	if (k->root_hi < from_ns || k->root_lo >= to_ns || k->bytes == 0)
		return 0; /* no root of it starts in the range */
	atomic_fetch_add(&loads, 1);
	int rc = load(sp, k, c, err);
	if (rc)
		return rc;
	/* index the records, then sort them into traces */
	const char *bytes = c->bytes;
	size_t len = (size_t)k->bytes;
	int64_t n = 0;
	for (size_t at = 0; at + sizeof(SpoolHead) <= len;) {
		SpoolHead h;
		memcpy(&h, bytes + at, sizeof h);
		if (n == c->cap_rec) {
			c->cap_rec = c->cap_rec ? c->cap_rec * 2 : 4096;
			c->rec = xrealloc(c->rec, (size_t)c->cap_rec * sizeof *c->rec);
		}
		c->rec[n++] = (SpoolRec){.key = h.key,
		                         .sid = bytes + at + sizeof h + h.len[SP_TRACE],
		                         .sid_len = h.len[SP_SPAN],
		                         .off = (uint32_t)at};
		at += h.size;
	}
	SpoolRec *rec = c->rec;
	qsort(rec, (size_t)n, sizeof *rec, cmp_rec);
	int stop = 0;
	for (int64_t i = 0; i < n && !stop;) {
		int64_t j = i;
		int rooted = 0;
		for (; j < n && rec[j].key == rec[i].key; j++) {
			SpoolHead h;
			memcpy(&h, bytes + rec[j].off, sizeof h);
			rooted |= h.len[SP_PARENT] == 0 && h.start >= from_ns && h.start < to_ns;
		}
		for (int64_t x = i; rooted && x < j && !stop; x++) {
			SpoolHead h;
			memcpy(&h, bytes + rec[x].off, sizeof h);
			const char *s[SP_STRS];
			rec_strings(bytes + rec[x].off, &h, &c->t, s);
			StoreSpanRow r = {
			    .trace_key = h.key, .rowid = h.rowid, .trace_id = s[SP_TRACE],
			    .span_id = s[SP_SPAN], .parent_id = s[SP_PARENT], .service = s[SP_SERVICE],
			    .host = s[SP_HOST], .name = s[SP_NAME], .kind = h.kind, .start_ns = h.start,
			    .end_ns = h.end, .status_code = h.status, .wclass = s[SP_CLASS],
			    .has_queue = h.has_queue, .queue_ns = h.queue, .attrs_json = "",
			    .db_system = s[SP_DB], .peer = s[SP_PEER], .events_json = "",
			    .route = s[SP_ROUTE], .route_rule = h.route_rule,
			};
			stop = fn(ctx, &r);
		}
		i = j;
	}
	return 0;
}
