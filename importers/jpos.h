/*
 * jpos.h - a small JSON reader that remembers where every value starts, for
 * importers whose errors are about content ("unit 'msec' is not known")
 * and must still point at file:line:col.
 *
 * It is the one reader of the small JSON files people edit by hand (the
 * endpoint model, the hypothesis catalog, drill files, observation
 * sheets, score keys): every error about them, syntax or meaning, reads
 * "file:line:col: message" and points at the value at fault.
 *
 * Strict RFC 8259: one value per document, UTF-8 validated, no comments, no
 * trailing commas, raw control characters rejected inside strings, lone
 * surrogate escapes rejected; on top of that duplicate keys in one object
 * are rejected (their meaning is undefined) and nesting is limited to
 * JP_MAX_DEPTH. Meant for small documents (observation sheets, OTLP metrics
 * batches, one JSON Lines record): the whole tree lives in one arena.
 */
#ifndef TT_JPOS_H
#define TT_JPOS_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define JP_MAX_DEPTH 96

typedef enum JpType {
	JP_NULL,
	JP_BOOL,
	JP_NUM,
	JP_STR,
	JP_ARR,
	JP_OBJ,
} JpType;

typedef struct JpVal JpVal;

typedef struct JpMember {
	const char *key;      /* decoded, NUL-terminated (may contain NUL: key_len) */
	size_t key_len;
	JpVal *val;
} JpMember;

struct JpVal {
	JpType type;
	long line, col;       /* where the value starts (1-based; col in bytes) */
	const char *s;        /* JP_STR: decoded text; JP_NUM: the number as
	                       * written. NUL-terminated; a string may also
	                       * contain NUL bytes (n) */
	size_t n;
	int b;                /* JP_BOOL */
	size_t len;           /* JP_ARR: items, JP_OBJ: members */
	JpVal **items;        /* JP_ARR */
	JpMember *members;    /* JP_OBJ, in document order */
};

typedef struct JpDoc JpDoc;

/* Parses text (len bytes) as one JSON value followed only by white space.
 * line0 is the line number of text[0] (1 for a file, N for line N of a JSON
 * Lines file). On success *doc owns every value and *root is the top value;
 * free with jp_free(). On error returns TT_EPARSE with err set to
 * "name:line:col: message". */
int jp_parse(const char *text, size_t len, const char *name, long line0, JpDoc **doc,
             JpVal **root, Err *err);

void jp_free(JpDoc *doc);    /* NULL is a no-op */

/* Sets err to "name:line:col: message" at the position of at (1:1 when
 * at is NULL) and returns TT_EPARSE: the error for a value whose content
 * is wrong (a negative size, an unknown check, a predicate that does not
 * compile). */
int jp_err(Err *err, const char *name, const JpVal *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The member key of object o (NULL when o is not an object or has none). */
JpVal *jp_get(const JpVal *o, const char *key);

/* Same, but a JSON null counts as absent. */
JpVal *jp_get_nn(const JpVal *o, const char *key);

/* The type's name for messages: "null", "a boolean", "a number", ... */
const char *jp_type_name(JpType t);

/* A JP_NUM as a double (0 on success, TT_EPARSE when out of range). */
int jp_num(const JpVal *v, double *out);

/* A JP_NUM without fraction or exponent as an int64 (0, or TT_EPARSE when
 * it has a fraction or is out of range). */
int jp_int(const JpVal *v, int64_t *out);

/* strtod that ignores the process locale (the CLI may set one). s must be
 * a syntactically checked number. */
double jp_strtod(const char *s);

#endif
