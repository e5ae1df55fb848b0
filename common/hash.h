/*
 * hash.h - FNV-1a, 64 bits (Fowler, Noll, Vo: IETF draft-eastlake-fnv),
 * the one string hash of every layer: hash tables keyed by strings
 * (importers, store, analysis) and values that end up persisted (header
 * only, so that the hot loops stay inlined; no state).
 *
 * Two offset bases. HASH_FNV1A_BASIS is the standard one. HASH_FNV1A_V0 is
 * the standard one without its last digit, which the importers were
 * written with: values derived with it decide what is stored (zipkin.c's
 * service hashes choose which span a shared server span hangs under,
 * tracejson.c's fingerprints of opaque ids refuse a colliding file), so
 * it stays where it was, for a re-import of an old file to store exactly
 * what the first import stored. New uses take HASH_FNV1A_BASIS.
 * tests/unit/test_hash.c pins both with values the old copies computed.
 */
#ifndef TT_HASH_H
#define TT_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HASH_FNV1A_BASIS UINT64_C(14695981039346656037)
#define HASH_FNV1A_V0 UINT64_C(1469598103934665603)
#define HASH_FNV1A_PRIME UINT64_C(1099511628211)

/* The hash of the n bytes at p, continuing from h (a basis to start;
 * a previous result to hash a concatenation). */
static inline uint64_t hash_fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * HASH_FNV1A_PRIME;
	return h;
}

/* hash_fnv1a() of the bytes of a NUL-terminated string. */
static inline uint64_t hash_fnv1a_str(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * HASH_FNV1A_PRIME;
	return h;
}

#endif
