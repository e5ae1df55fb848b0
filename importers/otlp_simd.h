/*
 * otlp_simd.h - a fast path for JSON Lines lines: simdjson's On-Demand
 * parser (importers/otlp_simd.cpp, the project's only C++ file) walks the
 * value of a line and reports it as the same SAX events yajl would (the
 * same yajl_callbacks, in document order, keys and strings decoded,
 * numbers as their text).
 *
 * The caller keeps yajl as the reference: a value the fast path rejects is
 * handed to yajl unchanged, and when a callback cancels (a semantic error
 * whose location the fast path does not know exactly) the caller replays
 * the value through yajl to get the located message. Every value either
 * path accepts produces the same events.
 *
 * Nothing here prints; an OtlpSimd is not thread-safe (one per parser).
 */
#ifndef TT_OTLP_SIMD_H
#define TT_OTLP_SIMD_H

#include <stddef.h>

#include <yajl/yajl_parse.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct OtlpSimd OtlpSimd;

/* Bytes that must be readable (any value) after the end of a value passed
 * to otlp_simd_walk(). */
size_t otlp_simd_padding(void);

/* A walker for values of at most max_len bytes (its memory is a small
 * multiple of max_len, allocated on first use). NULL when out of memory. */
OtlpSimd *otlp_simd_new(size_t max_len);
void otlp_simd_free(OtlpSimd *s);

enum {
	OTLP_SIMD_OK = 0,        /* the whole value was reported */
	OTLP_SIMD_CANCELED = 1,  /* a callback returned 0, or a syntax error */
	OTLP_SIMD_REJECTED = 2,  /* left to yajl: no callback was called */
};

/* Reports the JSON value that starts buf (len bytes, otlp_simd_padding()
 * more readable; one line: no '\n' but a last one) to cb with ctx. Before
 * each callback *at is set to the offset in buf of the token being reported
 * (approximate for '{' '[' '}' ']'), for messages that only need a byte
 * offset. On OTLP_SIMD_OK *rest is the offset of what follows the value
 * (len when only white space does). Returns OTLP_SIMD_*.
 *
 * REJECTED comes before any callback: the line has a byte below 0x20
 * other than its final '\n', a \u escape of a UTF-16 surrogate, invalid
 * UTF-8, an unclosed string, is deeper than the walker goes, or does not
 * start with a JSON value. CANCELED also covers a syntax error found during
 * the walk (yajl refuses the line too). */
int otlp_simd_walk(OtlpSimd *s, const char *buf, size_t len, const yajl_callbacks *cb,
                   void *ctx, size_t *at, size_t *rest);

#ifdef __cplusplus
}
#endif

#endif
