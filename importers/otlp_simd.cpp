// otlp_simd.cpp - the simdjson fast path of otlp_simd.h (the project's only
// C++; everything it exports is the C interface of that header).
//
// The On-Demand parser walks the value in document order and hands raw
// number text to the callbacks (attribute JSON keeps a double's text as
// written). What could make it fail after events were reported, on input
// yajl accepts, is refused before the walk (see precheck()); what it
// finds wrong during the walk yajl refuses too, so the caller's replay
// through yajl reports it.
#include "otlp_simd.h"

#include <new>
#include <stdint.h>
#include <string_view>
#include <utility>

#include <simdjson.h>

extern "C" {
#include "otlp_common.h"
}

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace {

constexpr size_t kMaxDepth = 256;  // deeper values go to yajl (which refuses them)
constexpr size_t kFirstCapacity = 64 << 10;  // the parser's first room, grown by doubling

struct Walk {
	const char *base;
	const yajl_callbacks *cb;
	void *ctx;
	size_t *at;
	bool plain;             // the line has no backslash: strings are their raw bytes
	bool called = false;

	void mark(const char *p)
	{
		if (p >= base)
			*at = (size_t)(p - base);
	}
};

int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0'
	     : c >= 'a' && c <= 'f' ? c - 'a' + 10
	     : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

// The first '"' at or after p: the end of a string on a plain line, which
// has one, and the padding after the line keeps the 16-byte reads inside
// the buffer.
inline const char *closing_quote(const char *p)
{
#if defined(__x86_64__)
	const __m128i quote = _mm_set1_epi8('"');
	for (;; p += 16) {
		__m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
		unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, quote));
		if (m)
			return p + __builtin_ctz(m);
	}
#else
	while (*p != '"')
		p++;
	return p;
#endif
}

// Lines the fast path leaves to yajl before reporting anything, found in
// one pass over the line:
//  - brackets that do not balance to one complete value (or more) on the
//    line: a value that goes on to the next line, or a line On-Demand would
//    notice is broken only once part of it has been reported;
//  - nesting deeper than kMaxDepth;
//  - bytes below 0x20 other than the line's final '\n' (or "\r\n"): yajl
//    refuses them inside strings, On-Demand does not look; between tokens
//    (tabs) they are legal but rare;
//  - \u escapes of UTF-16 surrogates (simdjson refuses a lone one that yajl
//    accepts).
//
// The scan is resumable: Scan carries what one byte needs from the ones
// before it, so the byte loop and the block loop below can take turns.
struct Scan {
	size_t depth = 0;
	bool in_str = false;
	bool backslash = false;  // the line has one (the byte loop saw it)
};

// The reference scan of s[*pi, end) (it may stop one byte past end, after
// an escape); false as soon as the line is refused.
bool precheck_bytes(const char *s, size_t n, size_t *pi, size_t end, Scan &st)
{
	size_t i = *pi;
	while (i < end) {
		unsigned char c = (unsigned char)s[i++];
		if (st.in_str) {
			if (c == '"') {
				st.in_str = false;
			} else if (c == '\\') {
				st.backslash = true;
				if (i >= n)
					return false;
				if (s[i] == 'u' && i + 2 < n && hexval(s[i + 1]) == 0xd &&
				    hexval(s[i + 2]) >= 8)
					return false;
				i++;
			} else if (c < 0x20) {
				return false;
			}
		} else if (c == '"') {
			st.in_str = true;
		} else if (c == '\\') {
			st.backslash = true;
		} else if (c == '{' || c == '[') {
			if (++st.depth > kMaxDepth)
				return false;
		} else if (c == '}' || c == ']') {
			if (st.depth-- == 0)
				return false;
		} else if (c < 0x20 && !(c == '\n' && i == n) &&
		           !(c == '\r' && i + 1 == n && s[i] == '\n')) {
			return false;
		}
	}
	*pi = i;
	return true;
}

#if defined(__x86_64__)
// Bit i of each mask: byte i of a 64-byte block is that kind of byte.
struct BlockBits {
	uint64_t quote, special, open, close;  // special: '\\' or below 0x20
};

// Bit i: the XOR of bits 0..i of x.
inline uint64_t prefix_xor(uint64_t x)
{
	x ^= x << 1;
	x ^= x << 2;
	x ^= x << 4;
	x ^= x << 8;
	x ^= x << 16;
	x ^= x << 32;
	return x;
}

// One 64-byte block s[*pi, *pi + 64) (see precheck()).
inline bool precheck_block(const char *s, size_t n, size_t *pi, const BlockBits &b, Scan &st)
{
	if (b.special)
		return precheck_bytes(s, n, pi, *pi + 64, st);
	*pi += 64;
	uint64_t inside = prefix_xor(b.quote) ^ (st.in_str ? ~0ull : 0);
	st.in_str = inside >> 63;
	uint64_t open = b.open & ~inside, close = b.close & ~inside;
	if (!(open | close))
		return true;
	size_t no = (size_t)__builtin_popcountll(open);
	size_t nc = (size_t)__builtin_popcountll(close);
	if (st.depth >= nc && st.depth + no <= kMaxDepth) {
		// no prefix of the block can leave [0, kMaxDepth]
		st.depth = st.depth + no - nc;
		return true;
	}
	for (uint64_t m = open | close; m; m &= m - 1) {
		if (open & m & (0 - m)) {
			if (++st.depth > kMaxDepth)
				return false;
		} else if (st.depth-- == 0) {
			return false;
		}
	}
	return true;
}

// The block loop for any x86-64 (SSE2 is part of the base ISA); stops
// before the last partial block.
bool precheck_sse2(const char *s, size_t n, size_t *pi, Scan &st)
{
	const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
	const __m128i ctl_max = _mm_set1_epi8(0x1f), lower = _mm_set1_epi8(0x20);
	const __m128i open = _mm_set1_epi8('{'), close = _mm_set1_epi8('}');
	while (*pi + 64 <= n) {
		BlockBits b = {0, 0, 0, 0};
		for (int k = 0; k < 4; k++) {
			__m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + *pi + 16 * k));
			// '[' and ']' are '{' and '}' without the 0x20 bit
			__m128i xl = _mm_or_si128(x, lower);
			// unsigned x <= 0x1f
			__m128i ctl = _mm_cmpeq_epi8(_mm_max_epu8(x, ctl_max), ctl_max);
			__m128i sp = _mm_or_si128(ctl, _mm_cmpeq_epi8(x, bslash));
			unsigned sh = 16 * (unsigned)k;
			b.quote |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, quote)) << sh;
			b.special |= (uint64_t)(unsigned)_mm_movemask_epi8(sp) << sh;
			b.open |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(xl, open)) << sh;
			b.close |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(xl, close)) << sh;
		}
		if (!precheck_block(s, n, pi, b, st))
			return false;
	}
	return true;
}

// The same with 32-byte vectors, for CPUs that have AVX2 (checked at run
// time: the build targets plain x86-64).
__attribute__((target("avx2,popcnt"))) bool precheck_avx2(const char *s, size_t n, size_t *pi,
                                                          Scan &st)
{
	const __m256i quote = _mm256_set1_epi8('"'), bslash = _mm256_set1_epi8('\\');
	const __m256i ctl_max = _mm256_set1_epi8(0x1f), lower = _mm256_set1_epi8(0x20);
	const __m256i open = _mm256_set1_epi8('{'), close = _mm256_set1_epi8('}');
	while (*pi + 64 <= n) {
		BlockBits b = {0, 0, 0, 0};
		for (int k = 0; k < 2; k++) {
			__m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(s + *pi + 32 * k));
			__m256i xl = _mm256_or_si256(x, lower);
			__m256i ctl = _mm256_cmpeq_epi8(_mm256_max_epu8(x, ctl_max), ctl_max);
			__m256i sp = _mm256_or_si256(ctl, _mm256_cmpeq_epi8(x, bslash));
			unsigned sh = 32 * (unsigned)k;
			b.quote |= (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(x, quote)) << sh;
			b.special |= (uint64_t)(uint32_t)_mm256_movemask_epi8(sp) << sh;
			b.open |= (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(xl, open)) << sh;
			b.close |= (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(xl, close))
			           << sh;
		}
		if (!precheck_block(s, n, pi, b, st))
			return false;
	}
	return true;
}

// Asked once, on first use: a static initialiser could run before the
// compiler's own CPU detection (hence __builtin_cpu_init()).
bool have_avx2()
{
	static const bool yes = (__builtin_cpu_init(), __builtin_cpu_supports("avx2") &&
	                                                   __builtin_cpu_supports("popcnt"));
	return yes;
}
#endif

// precheck_bytes() over the whole line, 64 bytes at a time where it can:
// in a block without a backslash or a control byte only quotes and
// brackets matter, and which brackets lie outside strings follows from
// the quotes alone. Blocks with either (rare outside hostile input, and
// the line's final '\n') take the byte loop, so both always agree.
//
// *plain is set when the line holds no backslash at all (only the byte
// loop can meet one): then no string on it has an escape.
bool precheck(const char *s, size_t n, bool *plain)
{
	Scan st;
	size_t i = 0;
#if defined(__x86_64__)
	if (!(have_avx2() ? precheck_avx2(s, n, &i, st) : precheck_sse2(s, n, &i, st)))
		return false;
#endif
	if (!precheck_bytes(s, n, &i, n, st))
		return false;
	*plain = !st.backslash;
	return !st.in_str && st.depth == 0;
}

// 0: a callback cancelled; 1: go on; -1: simdjson error
int number_token(Walk &w, std::string_view tok)
{
	size_t n = tok.size();
	while (n && (tok[n - 1] == ' ' || tok[n - 1] == '\t' || tok[n - 1] == '\n' ||
	             tok[n - 1] == '\r'))
		n--;
	// RFC 8259 number syntax: On-Demand hands raw tokens over unchecked
	if (!otlp_is_json_number(tok.data(), n))
		return -1;
	w.mark(tok.data());
	w.called = true;
	return w.cb->yajl_number(w.ctx, tok.data(), n) ? 1 : 0;
}

int walk_value(Walk &w, simdjson::ondemand::value v);

int walk_object(Walk &w, simdjson::ondemand::object obj)
{
	w.called = true;
	if (!w.cb->yajl_start_map(w.ctx))
		return 0;
	for (auto res : obj) {
		simdjson::ondemand::field f;
		if (std::move(res).get(f))
			return -1;
		const char *raw = f.key().raw();
		w.mark(raw - 1);
		std::string_view key;
		if (w.plain)
			key = std::string_view(raw, (size_t)(closing_quote(raw) - raw));
		else if (f.unescaped_key().get(key))
			return -1;
		if (!w.cb->yajl_map_key(w.ctx, reinterpret_cast<const unsigned char *>(key.data()),
		                        key.size()))
			return 0;
		int rc = walk_value(w, f.value());
		if (rc != 1)
			return rc;
	}
	return w.cb->yajl_end_map(w.ctx) ? 1 : 0;
}

int walk_array(Walk &w, simdjson::ondemand::array arr)
{
	w.called = true;
	if (!w.cb->yajl_start_array(w.ctx))
		return 0;
	for (auto res : arr) {
		simdjson::ondemand::value v;
		if (std::move(res).get(v))
			return -1;
		int rc = walk_value(w, v);
		if (rc != 1)
			return rc;
	}
	return w.cb->yajl_end_array(w.ctx) ? 1 : 0;
}

int walk_value(Walk &w, simdjson::ondemand::value v)
{
	simdjson::ondemand::json_type t;
	if (v.type().get(t))
		return -1;
	switch (t) {
	case simdjson::ondemand::json_type::object: {
		simdjson::ondemand::object o;
		if (v.get_object().get(o))
			return -1;
		return walk_object(w, o);
	}
	case simdjson::ondemand::json_type::array: {
		simdjson::ondemand::array a;
		if (v.get_array().get(a))
			return -1;
		return walk_array(w, a);
	}
	case simdjson::ondemand::json_type::string: {
		std::string_view tok = v.raw_json_token();
		std::string_view s;
		if (w.plain) {
			// nothing to unescape: skip the copy into simdjson's buffer
			simdjson::ondemand::raw_json_string raw;
			if (v.get_raw_json_string().get(raw))
				return -1;
			const char *b = tok.data() + 1;
			s = std::string_view(b, (size_t)(closing_quote(b) - b));
		} else if (v.get_string().get(s)) {
			return -1;
		}
		w.mark(tok.data());
		w.called = true;
		return w.cb->yajl_string(w.ctx, reinterpret_cast<const unsigned char *>(s.data()),
		                         s.size()) ? 1 : 0;
	}
	case simdjson::ondemand::json_type::number:
		return number_token(w, v.raw_json_token());
	case simdjson::ondemand::json_type::boolean: {
		std::string_view tok = v.raw_json_token();
		bool b;
		if (v.get_bool().get(b))
			return -1;
		w.mark(tok.data());
		w.called = true;
		return w.cb->yajl_boolean(w.ctx, b) ? 1 : 0;
	}
	default: {  // null
		std::string_view tok = v.raw_json_token();
		bool is_null;
		if (v.is_null().get(is_null) || !is_null)
			return -1;
		w.mark(tok.data());
		w.called = true;
		return w.cb->yajl_null(w.ctx) ? 1 : 0;
	}
	}
}

// The top level: On-Demand treats a scalar document apart from a value.
int walk_document(Walk &w, simdjson::ondemand::document &doc)
{
	simdjson::ondemand::json_type t;
	if (doc.type().get(t))
		return -1;
	int rc;
	switch (t) {
	case simdjson::ondemand::json_type::object: {
		simdjson::ondemand::object o;
		if (doc.get_object().get(o))
			return -1;
		rc = walk_object(w, o);
		break;
	}
	case simdjson::ondemand::json_type::array: {
		simdjson::ondemand::array a;
		if (doc.get_array().get(a))
			return -1;
		rc = walk_array(w, a);
		break;
	}
	case simdjson::ondemand::json_type::string: {
		std::string_view tok, s;
		if (doc.raw_json_token().get(tok) || doc.get_string().get(s))
			return -1;
		w.mark(tok.data());
		w.called = true;
		rc = w.cb->yajl_string(w.ctx, reinterpret_cast<const unsigned char *>(s.data()),
		                       s.size()) ? 1 : 0;
		break;
	}
	case simdjson::ondemand::json_type::number: {
		std::string_view tok;
		if (doc.raw_json_token().get(tok))
			return -1;
		rc = number_token(w, tok);
		break;
	}
	case simdjson::ondemand::json_type::boolean: {
		std::string_view tok;
		bool b;
		if (doc.raw_json_token().get(tok) || doc.get_bool().get(b))
			return -1;
		w.mark(tok.data());
		w.called = true;
		rc = w.cb->yajl_boolean(w.ctx, b) ? 1 : 0;
		break;
	}
	default: {
		std::string_view tok;
		bool is_null;
		if (doc.raw_json_token().get(tok) || doc.is_null().get(is_null) || !is_null)
			return -1;
		w.mark(tok.data());
		w.called = true;
		rc = w.cb->yajl_null(w.ctx) ? 1 : 0;
		break;
	}
	}
	return rc;
}

}  // namespace

struct OtlpSimd {
	size_t max_len;
	bool allocated = false;
	simdjson::ondemand::parser od;

	explicit OtlpSimd(size_t n) : max_len(n), od(n) {}
};

extern "C" size_t otlp_simd_padding(void)
{
	return simdjson::SIMDJSON_PADDING;
}

extern "C" OtlpSimd *otlp_simd_new(size_t max_len)
{
	return new (std::nothrow) OtlpSimd(max_len);
}

extern "C" void otlp_simd_free(OtlpSimd *s)
{
	delete s;
}

extern "C" int otlp_simd_walk(OtlpSimd *s, const char *buf, size_t len,
                              const yajl_callbacks *cb, void *ctx, size_t *at, size_t *rest)
{
	bool plain = false;
	if (len > s->max_len || !precheck(buf, len, &plain))
		return OTLP_SIMD_REJECTED;
	try {
		// Room for this line, doubled from 64 KiB as longer lines come:
		// one request to a receiver or a small file does not pay for
		// max_len (about 5 bytes of index and string room per byte).
		if (!s->allocated || s->od.capacity() < len) {
			size_t cap = kFirstCapacity;
			while (cap < len)
				cap *= 2;
			if (cap > s->max_len)
				cap = s->max_len;
			if (s->od.allocate(cap, kMaxDepth))
				return OTLP_SIMD_REJECTED;
			s->allocated = true;
		}
		// stage 1 (structure, strings, UTF-8) runs here, before any event
		simdjson::ondemand::document doc;
		if (s->od.iterate(buf, len, len + simdjson::SIMDJSON_PADDING).get(doc))
			return OTLP_SIMD_REJECTED;
		Walk w{buf, cb, ctx, at, plain};
		int rc = walk_document(w, doc);
		if (rc == 1) {
			// another value may follow on the same line: the caller
			// hands the rest to yajl
			const char *p;
			*rest = doc.current_location().get(p) ? len : (size_t)(p - buf);
			return OTLP_SIMD_OK;
		}
		if (rc == -1 && !w.called)
			return OTLP_SIMD_REJECTED;
		return OTLP_SIMD_CANCELED;
	} catch (...) {
		// simdjson reports errors by value; only allocation can throw
		return OTLP_SIMD_REJECTED;
	}
}
