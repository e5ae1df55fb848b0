/*
 * sanitize.h - the one gate every string from data passes before it reaches
 * a terminal: the dashboard's canvas and every text the CLI prints.
 *
 * Text from data (span names, services, attribute values, class names,
 * even the model's labels) is untrusted bytes. The sanitizer turns it into
 * a sequence of printable code points with known display widths:
 *  - escape sequences (ESC [ ... CSI, ESC ] ... OSC, ESC P ... DCS, SOS,
 *    PM, APC, two-byte ESC x, and their 8-bit C1 forms) are removed whole
 *    and replaced by one U+FFFD, so an engineer still sees that something
 *    was there;
 *  - every other C0 control, DEL and C1 control becomes U+FFFD, except
 *    TAB, LF and CR, which become a space;
 *  - invalid UTF-8 (stray continuation bytes, overlong forms, surrogates,
 *    values above U+10FFFF, truncated sequences) becomes U+FFFD per bad
 *    byte sequence;
 *  - bidirectional controls (U+202A..U+202E, U+2066..U+2069, U+200E,
 *    U+200F, U+061C) become U+FFFD: they could reorder what is drawn;
 *  - other zero-width code points (combining marks) are dropped, so one
 *    code point always fills one or two whole cells;
 *  - widths come from wcwidth() under a UTF-8 locale (C.UTF-8, whatever
 *    the process locale is), with a small built-in table as fallback, so
 *    results do not depend on the environment.
 *
 * Stateless and thread-compatible once san_init() has run.
 */
#ifndef TT_SANITIZE_H
#define TT_SANITIZE_H

#include <stddef.h>
#include <stdint.h>

#define SAN_REPLACEMENT 0xFFFDu

/* Prepares the width tables (idempotent; call once before threads). */
void san_init(void);

/* Decodes the next display unit of s[*i .. len). Returns 0 at the end of
 * the input; otherwise 1 with *cp a printable code point (never a control)
 * and *width its columns (1 or 2). *i advances past what was consumed. */
int san_next(const char *s, size_t len, size_t *i, uint32_t *cp, int *width);

/* Columns of a printable code point: 1 or 2; 0 for a zero-width one; -1
 * for a control or a code point that must not be drawn. */
int san_cp_width(uint32_t cp);

/* Display width in columns of NUL-terminated s after sanitizing. NULL: 0. */
int san_width(const char *s);

/* Writes sanitized s as UTF-8 into out (size outsz, always terminated),
 * using at most max_cols columns (< 0: no limit). Whole characters only.
 * Returns the columns written. */
int san_copy(const char *s, char *out, size_t outsz, int max_cols);

/* san_copy() without a column limit: for text written to a terminal
 * outside the dashboard (reports, diagnoses, check tables, drill output). */
int san_clean(const char *s, char *out, size_t outsz);

/* Encodes cp as UTF-8 into out (at least 4 bytes). Returns bytes. */
int san_utf8_encode(uint32_t cp, char *out);

#endif
