/*
 * buf.h - a growable byte buffer that is always NUL-terminated.
 *
 * Allocation failure aborts the process: a tool that cannot get a few
 * kilobytes has nothing sensible left to do, and hiding ENOMEM in every
 * append would make the parsers unreadable.
 */
#ifndef TT_BUF_H
#define TT_BUF_H

#include <stddef.h>
#include <stdint.h>

struct Err;

typedef struct Buf {
	char *p;      /* contents, NUL-terminated; NULL until first append */
	size_t len;   /* bytes used, not counting the NUL */
	size_t cap;   /* bytes allocated */
} Buf;

void buf_init(Buf *b);
void buf_fini(Buf *b);
void buf_reset(Buf *b);                 /* len = 0, keeps memory */
void buf_add(Buf *b, const void *p, size_t n);
void buf_adds(Buf *b, const char *s);
void buf_addc(Buf *b, char c);
/* Makes room for extra more bytes after len (and the NUL) without
 * changing the contents, so a writer can fill b->p directly. */
void buf_reserve(Buf *b, size_t extra);
void buf_printf(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends s as a JSON string literal (with quotes and escapes). */
void buf_add_json_str(Buf *b, const char *s, size_t n);
/* Returns b's contents ("" when empty); valid until the next change. */
const char *buf_str(const Buf *b);

/* Reads the whole file at path into b (appending; b stays NUL-terminated,
 * "" for an empty file). Returns 0, TT_EIO ("path: reason") when it cannot
 * be opened or read, or TT_EPARSE ("path:1:1: larger than ...") when it is
 * bigger than max bytes, which is how every small input (models, sheets,
 * drills, answers, catalogs) bounds its memory. */
int buf_read_file(Buf *b, const char *path, size_t max, struct Err *err);

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

#endif
