/*
 * varint.h - LEB128 varints (7 bits a byte, low first, the high bit says
 * "more"), as protobuf writes them, and zigzag for signed values: the
 * encodings of the sketches (analysis/sketch.c) and of the trace packs
 * (store/store_pack.c). Reading is bounds-checked: past the end, or more
 * than ten bytes, sets bad and gives 0.
 */
#ifndef TT_VARINT_H
#define TT_VARINT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* Bytes being read: [p, end); bad once a read went wrong. */
typedef struct VarReader {
	const unsigned char *p, *end;
	int bad;
} VarReader;

static inline uint64_t var_get(VarReader *r)
{
	uint64_t v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (r->p >= r->end) {
			r->bad = 1;
			return 0;
		}
		unsigned char c = *r->p++;
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
	}
	r->bad = 1;
	return 0;
}

/* A zigzag varint, as the unsigned bits of the signed value. */
static inline uint64_t var_get_zigzag(VarReader *r)
{
	uint64_t z = var_get(r);
	return (z >> 1) ^ (uint64_t)-(int64_t)(z & 1);
}

/* Writes v at o, which has room for ten bytes; returns the end. */
static inline unsigned char *var_write(unsigned char *o, uint64_t v)
{
	while (v >= 0x80) {
		*o++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*o++ = (unsigned char)v;
	return o;
}

/* The unsigned bits of a signed value, zigzag-coded. */
static inline uint64_t var_zigzag(uint64_t v)
{
	return (v << 1) ^ (uint64_t)-(int64_t)(v >> 63);
}

static inline void var_put(Buf *b, uint64_t v)
{
	unsigned char t[10];
	buf_add(b, t, (size_t)(var_write(t, v) - t));
}

#endif
