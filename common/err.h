/*
 * err.h - located, human-readable errors.
 *
 * Library layers never print. A function that can fail returns 0 or a
 * negative TT_E* code and, when given a non-NULL Err, fills in a message
 * such as "spans.json:1:4812: traceId must be 32 hex digits".  The caller
 * (cli/ or tui/) decides how to show it.
 *
 * Positions: line and column are 1-based, and the column counts bytes
 * from the start of the line (a tab is one byte, "é" in UTF-8 two), in
 * every reader of every format, so one position means one place whatever
 * the file holds and a tool can seek to it. Binary input is located by
 * byte offset instead ("file: byte N: message").
 */
#ifndef TT_ERR_H
#define TT_ERR_H

#include <stdarg.h>
#include <stddef.h>

enum {
	TT_OK = 0,
	TT_EIO = -1,      /* file or database I/O failed */
	TT_EPARSE = -2,   /* input is malformed */
	TT_EINVAL = -3,   /* caller passed something unusable */
	TT_ENOMEM = -4,   /* allocation failed */
	TT_ESTORE = -5,   /* SQLite reported an error */
	TT_ENOTFOUND = -6,/* a named thing does not exist */
	TT_EFORMAT = -7,  /* format could not be detected or is unsupported */
};

typedef struct Err {
	int code;         /* the TT_E* code of the first error */
	char msg[512];    /* NUL-terminated message, "" when none */
} Err;

/* Sets err (if non-NULL) to code and a printf-style message; returns code. */
int err_set(Err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Sets a located message "file:line:col: msg"; returns code. */
int err_at(Err *err, int code, const char *file, long line, long col,
           const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* err_set and err_at taking a va_list, for wrappers that add their own
 * location (a JSON node, a parser position) and pass their arguments on.
 * ap is consumed as by vsnprintf; the caller still calls va_end. */
int err_vset(Err *err, int code, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
int err_vat(Err *err, int code, const char *file, long line, long col,
            const char *fmt, va_list ap) __attribute__((format(printf, 6, 0)));

/* Clears err (if non-NULL). */
void err_clear(Err *err);

#endif
