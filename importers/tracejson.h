/*
 * tracejson.h - what the Jaeger and Zipkin importers share: a streaming
 * JSON reader that hands out one record at a time as a small tree whose
 * every value knows its line and column, and the helpers both formats use
 * to turn those trees into StoreSpan rows (ids, microsecond times, typed
 * attribute objects, the derived id of a shared server span).
 *
 * Why not cJSON on the whole file: a Jaeger query response can hold
 * hundreds of traces, and cJSON gives no position for a value that is
 * well-formed JSON but wrong for the format. The reader below drives yajl
 * (a push parser) and builds a tree only for the record being read:
 *  - the elements of a root array (Zipkin spans, or Jaeger traces), or
 *  - the elements of the array under one member of the root object
 *    (Jaeger's {"data": [trace, ...]}).
 * Everything else of the root object is kept as a tree too (that is how a
 * single Jaeger trace at top level arrives). Memory grows with the largest
 * record, never with the file: each record's tree lives in an arena that
 * is emptied once the record has been handled, and a record whose tree
 * would pass TJ_RECORD_MAX bytes, or one string longer than TJ_TOKEN_MAX,
 * is refused with a located error.
 *
 * Positions: lines and columns are 1-based; columns count bytes, as
 * everywhere (err.h). Strings are validated as UTF-8 by yajl;
 * strings holding U+0000 are refused (every consumer uses C strings).
 */
#ifndef TT_TRACEJSON_H
#define TT_TRACEJSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "buf.h"
#include "formats.h"
#include "route.h"

/* Largest tree one record may take (about 40 MB of typical span JSON). */
#define TJ_RECORD_MAX ((size_t)256 << 20)
/* Longest single string or number (yajl buffers a token whole). */
#define TJ_TOKEN_MAX ((size_t)8 << 20)
/* Deepest nesting accepted anywhere in the document. */
#define TJ_MAX_DEPTH 128

typedef enum { TJ_NULL, TJ_BOOL, TJ_NUMBER, TJ_STRING, TJ_ARRAY, TJ_OBJECT } TjType;

typedef struct TjNode TjNode;
struct TjNode {
	TjType type;
	int boolean;          /* TJ_BOOL */
	int streamed;         /* array whose elements went to on_record (no children) */
	const char *key;      /* member name when inside an object, else NULL */
	const char *text;     /* string contents or number text (NUL-terminated), else NULL */
	size_t len;           /* bytes in text */
	size_t n;             /* elements/members of an array/object */
	TjNode *child;        /* first element/member */
	TjNode *next;         /* next sibling */
	long line, col;       /* where the value starts */
	uint64_t off;         /* byte offset of the value */
};

/* Called with each record (an element of the streamed array). The tree
 * lives until the callback returns. index counts records from 0. Return 0,
 * or a negative code after setting the error (tj_fail). */
typedef int (*TjRecordFn)(void *ud, const TjNode *rec, int64_t index);

typedef struct TjReadOptions {
	const char *stream_key;  /* member of a root object to stream, or NULL */
	TjRecordFn on_record;
	void *ud;
} TjReadOptions;

typedef struct TjReader TjReader;

/* Streams f to its end. Returns 0 or a negative code with ctx->err set.
 * On success *out owns the reader; tj_root() is the root (an array with
 * streamed = 1 and n = number of records when the root was an array).
 * Free with tj_reader_free(). */
int tj_read(ImportCtx *ctx, FILE *f, const TjReadOptions *o, TjReader **out);
const TjNode *tj_root(const TjReader *r);
void tj_reader_free(TjReader *r);             /* NULL is a no-op */

/* Parses a whole JSON text held in memory (e.g. an annotation value) into
 * a tree that lives until tj_reader_free(*out). Returns 0 or -1 when s is
 * not one JSON value; never touches any Err. */
int tj_parse_text(const char *s, size_t n, TjReader **out);

/* ---- reading trees ----------------------------------------------------- */

/* Sets a located TT_EPARSE error at node at (or 1:1 when at is NULL) and
 * returns TT_EPARSE. */
int tj_fail(ImportCtx *ctx, const TjNode *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Finds member key of object obj: *out is the member or NULL when absent.
 * A key present twice is an error (ambiguous input). */
int tj_member(ImportCtx *ctx, const TjNode *obj, const char *key, const TjNode **out);

/* Writes s (n bytes) quoted for a message into out: control characters
 * escaped, cut at a character boundary with "..." when it does not fit.
 * Returns out. */
const char *tj_quote(const char *s, size_t n, char *out, size_t outsz);

/* Describes a node's type for messages ("a string", "an object", ...). */
const char *tj_type_name(const TjNode *v);

/* Normalises a hex id: 1..max_digits hex digits of either case, left-padded
 * with zeros to width digits, lowercase, into out (width + 1 bytes).
 * Returns 0, or a negative code with a located error naming what. All-zero
 * ids are invalid (they mean "no id" in every tracing system). */
int tj_hex_id(ImportCtx *ctx, const TjNode *v, const char *what, int max_digits,
              int width, char *out);

/* Longest id string read as an opaque id, in bytes. */
#define TJ_OPAQUE_MAX 256

/* Reads an id of a Jaeger or Zipkin file into out (width + 1 bytes).
 * 1..max_digits hex digits are read as tj_hex_id() reads them. Jaeger and
 * Zipkin treat ids as opaque strings (their UIs accept any in uploaded
 * JSON), so any other string of 1..TJ_OPAQUE_MAX bytes is an opaque id,
 * mapped with tj_opaque_id(); *opaque is then 1, else 0. Errors (located,
 * naming what): not a string, empty, too long, an all-zero hex id. */
int tj_read_id(ImportCtx *ctx, const TjNode *v, const char *what, int max_digits, int width,
               char *out, int *opaque);

/* The id an opaque string s (n bytes) stands for: the first width / 2
 * bytes of SHA-256("tailtriage/opaque-id/" width "/" s) in lowercase hex
 * (width + 1 bytes with the NUL), never all zeros. The same string gives
 * the same id in every file and both formats, so parent references to it
 * resolve and re-imports add nothing. */
void tj_opaque_id(const char *s, size_t n, int width, char *out);

/* The fingerprint of an id's original text for tj_idmap_check(): 0 for a
 * hex id (equal hex ids are the same id), a hash of the text for an
 * opaque one. */
uint64_t tj_id_fingerprint(const char *s, size_t n, int opaque);

/* A set of stored ids (a trace id, or a trace id and a span id) with the
 * fingerprint of the text each came from: two different texts that map to
 * one stored id are a collision, refused rather than merged. */
typedef struct TjIdMap {
	struct TjIdEnt *v;
	size_t n, cap;
} TjIdMap;

void tj_idmap_init(TjIdMap *m);
void tj_idmap_fini(TjIdMap *m);
void tj_idmap_reset(TjIdMap *m);
/* Looks up (trace_id, span_id; NULL for a trace id alone). Returns 1 when
 * it is known with another fingerprint (a collision), else 0; when it is
 * unknown and insert is set, records it with fp. */
int tj_idmap_check(TjIdMap *m, const char *trace_id, const char *span_id, uint64_t fp,
                   int insert);

/* Parses a JSON number text exactly and scales it by 10^scale, rounding to
 * the nearest integer (half away from zero): "1.5" with scale 3 -> 1500.
 * Returns 0, -1 when text is not a JSON number, -2 when out of range. */
int tj_decimal(const char *text, size_t len, int scale, int64_t *out);

/* A number node holding microseconds -> ns (>= 0). Fractional
 * microseconds are kept to the nanosecond. Strings are refused. */
int tj_micros(ImportCtx *ctx, const TjNode *v, const char *what, int64_t *ns);

/* Appends v as compact JSON (numbers keep their text). */
void tj_json(Buf *b, const TjNode *v);

/* The id given to the server half of a span whose id is shared with its
 * client (Zipkin's shared spans, duplicated ids in Jaeger): the first 8
 * bytes of SHA-256("tailtriage/shared-server/" trace_id "/" span_id), in
 * hex; deterministic, so re-imports give the same rows. */
void tj_shared_server_id(const char *trace_id, const char *span_id, char out[17]);

/* Is a span whose parent is a shared id one of the server's children?
 * Yes unless it runs in the client's service and not in the server's.
 * Services may be NULL (unknown). */
int tj_child_of_server(const char *child_svc, const char *server_svc, const char *client_svc);

/* ---- attribute objects ------------------------------------------------- */

/* Collects key -> JSON value pairs and writes them as one JSON object with
 * keys sorted and, for a key given more than once, the last value kept. */
enum { TJ_NAMED = 9 };       /* keys tj_attrs_names() reads */

typedef struct TjAttrs {
	Buf text;                 /* keys and values, back to back */
	struct TjAttr *v;
	size_t n, cap;
	long named[TJ_NAMED];     /* the last write's value of each of the keys
	                           * tj_attrs_names() reads: an index in v, or -1 */
	long route_at[RA_COUNT];  /* likewise for the keys of the route rule
	                           * (common/route.h), tj_attrs_route() */
} TjAttrs;

void tj_attrs_init(TjAttrs *a);
void tj_attrs_fini(TjAttrs *a);
void tj_attrs_reset(TjAttrs *a);
/* json is a complete JSON value text of len bytes. */
void tj_attrs_add_json(TjAttrs *a, const char *key, size_t klen, const char *json, size_t len);
void tj_attrs_add_str(TjAttrs *a, const char *key, const char *s, size_t len);
void tj_attrs_add_int(TjAttrs *a, const char *key, int64_t v);
/* Appends the object ("{}" when empty) to out. */
void tj_attrs_write(TjAttrs *a, Buf *out);

/* After tj_attrs_write(): what the object written names a call's other end
 * and its database system by, as StoreSpan.attr_peer and attr_db_system
 * want them (peer.service, else server.address, else net.peer.name, an
 * address followed by ":port" when server.port or net.peer.port goes with
 * it, else the authority of url.full or http.url; db.system.name, else
 * db.system; "" for none), copied into peer and db. *peer_out or
 * *db_out is NULL (not taken: readers parse the attributes) when the value
 * is not a JSON string without escapes; else it points into peer or db. */
void tj_attrs_names(const TjAttrs *a, Buf *peer, Buf *db, const char **peer_out,
                    const char **db_out);

/* After tj_attrs_write(): the route of a span named name (nlen bytes)
 * with the attributes written (common/route.h) appended to out, and its
 * rule; -1 (nothing appended: the readers take it from the attributes)
 * when one of them is a string with escapes. */
int tj_attrs_route(const TjAttrs *a, const char *name, size_t nlen, Buf *out);

/* Bounded substring search used by the sniffers (head is not
 * NUL-terminated). */
int tj_contains(const char *head, size_t len, const char *needle);
/* First byte of head that is not JSON whitespace, or -1. */
int tj_first_char(const char *head, size_t len, size_t *pos);

#endif
