/*
 * otlp_proto.c - OTLP protobuf requests, transcoded to OTLP/JSON text for
 * the JSON importers (see otlp_proto.h for why), and the "otlp-proto"
 * import formats: one request per file, or the length-prefixed stream the
 * OpenTelemetry Collector's file exporter writes with `format: proto`
 * (each message preceded by its size as a 4-byte big-endian integer).
 *
 * The walk: a message's fields are first scanned (tag, wire type, where
 * the value is; everything bounds-checked), then written as one JSON
 * object in the order their fields first appear. All items of a repeated
 * field become one array even when the wire interleaves them with other
 * fields; a non-repeated field given twice keeps its last value, as
 * protobuf parsers do. Packed and unpacked repeated scalars are both read.
 * Unknown fields are checked for a sound wire and skipped.
 *
 * JSON mapping (OTLP specification, "JSON Protobuf Encoding"): keys in
 * lowerCamelCase, trace_id/span_id/parent_span_id bytes as lowercase hex,
 * other bytes as base64, 64-bit integers and enums as decimal numbers,
 * doubles in the shortest text that reads back exactly, written the way
 * JavaScript's JSON.stringify writes them ("NaN", "Infinity" and
 * "-Infinity" as strings), so an SDK that exports both encodings produces
 * the same text for its values.
 *
 * Invariants: nothing is read outside [data, data + len); the output is
 * valid JSON whenever 0 is returned (strings are checked to be UTF-8);
 * nesting is bounded by OTLP_PROTO_MAX_DEPTH.
 */
#include "otlp_proto.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <protobuf-c/protobuf-c.h>

#include "formats.h"
#include "otlp.pb-c.h"
#include "otlp_common.h"

/* Largest single request (file or stream message) read into memory. */
#define PROTO_MAX_MSG ((size_t)256 << 20)

/* ---- wire -------------------------------------------------------------- */

/* Reads a varint at data[*pos] (before end). Returns 0, or -1 when it is
 * truncated or longer than 10 bytes. */
static int get_varint(const uint8_t *data, size_t end, size_t *pos, uint64_t *out)
{
	uint64_t v = 0;
	size_t p = *pos;
	for (int shift = 0; shift < 70; shift += 7) {
		if (p >= end)
			return -1;
		uint8_t b = data[p++];
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*pos = p;
			*out = v;
			return 0;
		}
	}
	return -1;
}

static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

/* The wire type a field of type t is written with (unpacked). */
static int wire_type_of(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_FLOAT:
		return 5;
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return 1;
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_BYTES:
	case PROTOBUF_C_TYPE_MESSAGE:
		return 2;
	default:
		return 0;
	}
}

static const char *wire_type_name(int wt)
{
	switch (wt) {
	case 0: return "varint";
	case 1: return "64-bit";
	case 2: return "length-delimited";
	case 5: return "32-bit";
	default: return "invalid";
	}
}

/* One field occurrence in a message. */
typedef struct Ent {
	uint32_t fi;        /* index in the descriptor's fields, NO_FIELD: unknown */
	uint8_t wt;         /* wire type */
	uint64_t tag_off;   /* where the tag starts */
	uint64_t val_off;   /* where the value starts */
	uint64_t v;         /* varint or fixed value; length for wire type 2 */
} Ent;

#define NO_FIELD UINT32_MAX

typedef struct Tx {
	Buf *out;
	const uint8_t *data;
	size_t len;
	int locating;           /* otlp_proto_locate(): stop past `want` */
	size_t want;
	uint64_t found;
	char *msg;
	size_t msg_sz;
	uint64_t err_off;
	Ent *ents[OTLP_PROTO_MAX_DEPTH + 2];
	size_t cap[OTLP_PROTO_MAX_DEPTH + 2];
} Tx;

enum { TX_OK = 0, TX_ERR = -1, TX_FOUND = 1 };

static int tx_fail(Tx *t, uint64_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int tx_fail(Tx *t, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (t->msg)
		vsnprintf(t->msg, t->msg_sz, fmt, ap);
	va_end(ap);
	t->err_off = off;
	return TX_ERR;
}

/* Records that the JSON written from now on comes from byte off. */
static inline int tx_mark(Tx *t, uint64_t off)
{
	if (t->locating) {
		if (t->out->len > t->want)
			return TX_FOUND;
		t->found = off;
	}
	return TX_OK;
}

/* Scans the fields of message d in data[off, off + n) into t->ents[depth];
 * *count gets how many. */
static int scan(Tx *t, const ProtobufCMessageDescriptor *d, size_t off, size_t n, int depth,
                size_t *count)
{
	const uint8_t *data = t->data;
	size_t end = off + n, pos = off, k = 0;
	while (pos < end) {
		size_t tag_off = pos;
		uint64_t tag;
		if (get_varint(data, end, &pos, &tag))
			return tx_fail(t, tag_off, "truncated or overlong field tag");
		uint64_t field = tag >> 3;
		int wt = (int)(tag & 7);
		if (field == 0 || field > 536870911u)
			return tx_fail(t, tag_off, "field number %llu is not valid",
			               (unsigned long long)field);
		Ent e = {NO_FIELD, (uint8_t)wt, tag_off, pos, 0};
		switch (wt) {
		case 0:
			if (get_varint(data, end, &pos, &e.v))
				return tx_fail(t, pos, "truncated or overlong varint (field %llu)",
				               (unsigned long long)field);
			break;
		case 1:
			if (end - pos < 8)
				return tx_fail(t, pos, "truncated 64-bit value (field %llu)",
				               (unsigned long long)field);
			e.v = get_le(data + pos, 8);
			pos += 8;
			break;
		case 5:
			if (end - pos < 4)
				return tx_fail(t, pos, "truncated 32-bit value (field %llu)",
				               (unsigned long long)field);
			e.v = get_le(data + pos, 4);
			pos += 4;
			break;
		case 2:
			if (get_varint(data, end, &pos, &e.v))
				return tx_fail(t, pos, "truncated or overlong length (field %llu)",
				               (unsigned long long)field);
			if (e.v > end - pos)
				return tx_fail(t, tag_off,
				               "field %llu: length %llu runs past the end of its message "
				               "(%zu bytes left)",
				               (unsigned long long)field, (unsigned long long)e.v, end - pos);
			e.val_off = pos;
			pos += (size_t)e.v;
			break;
		case 3:
		case 4:
			return tx_fail(t, tag_off, "field %llu: groups (wire type %d) are not supported",
			               (unsigned long long)field, wt);
		default:
			return tx_fail(t, tag_off, "field %llu: wire type %d is not valid",
			               (unsigned long long)field, wt);
		}
		const ProtobufCFieldDescriptor *fd =
		    protobuf_c_message_descriptor_get_field(d, (unsigned)field);
		if (fd != NULL) {
			int want = wire_type_of(fd->type);
			int packed = wt == 2 && want != 2 && fd->label == PROTOBUF_C_LABEL_REPEATED;
			if (wt != want && !packed)
				return tx_fail(t, tag_off, "%s.%s (field %llu) has %s wire type, expected %s",
				               d->short_name, fd->name, (unsigned long long)field,
				               wire_type_name(wt), wire_type_name(want));
			e.fi = (uint32_t)(fd - d->fields);
		}
		if (k == t->cap[depth]) {
			t->cap[depth] = t->cap[depth] ? 2 * t->cap[depth] : 32;
			t->ents[depth] = xrealloc(t->ents[depth], t->cap[depth] * sizeof(Ent));
		}
		t->ents[depth][k++] = e;
	}
	*count = k;
	return TX_OK;
}

/* ---- values -------------------------------------------------------------- */

static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static locale_t c_locale;

static void c_locale_init(void)
{
	c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

/* Appends v the way JavaScript's Number.prototype.toString() writes it:
 * the fewest significant digits that read back as v, fixed notation for
 * decimal exponents from -7 to 20, else d.ddde+N. */
static void json_double(Buf *b, double v)
{
	if (isnan(v)) {
		buf_adds(b, "\"NaN\"");
		return;
	}
	if (isinf(v)) {
		buf_adds(b, v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
		return;
	}
	if (v == 0) {
		buf_addc(b, '0');
		return;
	}
	pthread_once(&c_locale_once, c_locale_init);
	locale_t old = c_locale ? uselocale(c_locale) : (locale_t)0;
	char s[48];
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(s, sizeof s, "%.*e", prec - 1, v);
		if (strtod(s, NULL) == v)
			break;
	}
	if (c_locale)
		uselocale(old);
	char dig[24];
	int k = 0;
	const char *p = s;
	int neg = *p == '-';
	p += neg;
	for (; *p && *p != 'e' && k < 20; p++)
		if (*p >= '0' && *p <= '9')
			dig[k++] = *p;
	while (k > 1 && dig[k - 1] == '0')
		k--;
	int n = (*p == 'e' ? atoi(p + 1) : 0) + 1;  /* v = 0.DIG x 10^n */
	if (neg)
		buf_addc(b, '-');
	if (k <= n && n <= 21) {
		buf_add(b, dig, (size_t)k);
		for (int i = k; i < n; i++)
			buf_addc(b, '0');
	} else if (0 < n && n <= 21) {
		buf_add(b, dig, (size_t)n);
		buf_addc(b, '.');
		buf_add(b, dig + n, (size_t)(k - n));
	} else if (-6 < n && n <= 0) {
		buf_adds(b, "0.");
		for (int i = n; i < 0; i++)
			buf_addc(b, '0');
		buf_add(b, dig, (size_t)k);
	} else {
		buf_addc(b, dig[0]);
		if (k > 1) {
			buf_addc(b, '.');
			buf_add(b, dig + 1, (size_t)(k - 1));
		}
		buf_printf(b, "e%c%d", n - 1 >= 0 ? '+' : '-', abs(n - 1));
	}
}

static void json_uint(Buf *b, uint64_t v)
{
	char s[24];
	int i = sizeof s;
	do {
		s[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	buf_add(b, s + i, sizeof s - (size_t)i);
}

/* Offset of the first byte of s (n bytes) that is not valid UTF-8, or n. */
static size_t utf8_bad(const uint8_t *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		uint8_t c = s[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		size_t len;
		uint32_t cp, min;
		if ((c & 0xe0) == 0xc0) {
			len = 2, cp = c & 0x1f, min = 0x80;
		} else if ((c & 0xf0) == 0xe0) {
			len = 3, cp = c & 0x0f, min = 0x800;
		} else if ((c & 0xf8) == 0xf0) {
			len = 4, cp = c & 0x07, min = 0x10000;
		} else {
			return i;
		}
		if (n - i < len)
			return i;
		for (size_t j = 1; j < len; j++) {
			if ((s[i + j] & 0xc0) != 0x80)
				return i;
			cp = (cp << 6) | (s[i + j] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return i;
		i += len;
	}
	return n;
}

static void json_base64(Buf *b, const uint8_t *s, size_t n)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	buf_reserve(b, (n + 2) / 3 * 4 + 2);
	buf_addc(b, '"');
	size_t i = 0;
	for (; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
		char q[4] = {tab[v >> 18], tab[(v >> 12) & 63], tab[(v >> 6) & 63], tab[v & 63]};
		buf_add(b, q, 4);
	}
	if (n - i == 1) {
		uint32_t v = (uint32_t)s[i] << 16;
		char q[4] = {tab[v >> 18], tab[(v >> 12) & 63], '=', '='};
		buf_add(b, q, 4);
	} else if (n - i == 2) {
		uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8;
		char q[4] = {tab[v >> 18], tab[(v >> 12) & 63], tab[(v >> 6) & 63], '='};
		buf_add(b, q, 4);
	}
	buf_addc(b, '"');
}

static void json_hex(Buf *b, const uint8_t *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	buf_reserve(b, 2 * n + 2);
	buf_addc(b, '"');
	for (size_t i = 0; i < n; i++) {
		char q[2] = {hex[s[i] >> 4], hex[s[i] & 15]};
		buf_add(b, q, 2);
	}
	buf_addc(b, '"');
}

/* Bytes fields that OTLP/JSON writes as hex, with their length in bytes. */
static size_t id_length(const char *name)
{
	if (strcmp(name, "trace_id") == 0)
		return 16;
	if (strcmp(name, "span_id") == 0 || strcmp(name, "parent_span_id") == 0)
		return 8;
	return 0;
}

/* Appends "lowerCamelCase": for a snake_case field name. */
static void json_key(Buf *b, const char *name)
{
	char k[64];
	size_t j = 0;
	k[j++] = '"';
	for (const char *p = name; *p && j < sizeof k - 3; p++) {
		if (*p == '_' && p[1] >= 'a' && p[1] <= 'z') {
			k[j++] = (char)(p[1] - 'a' + 'A');
			p++;
		} else {
			k[j++] = *p;
		}
	}
	k[j++] = '"';
	k[j++] = ':';
	otlp_buf_add(b, k, j);
}

/* A scalar with raw value v (varint or fixed bits). */
static void json_scalar(Buf *b, ProtobufCType type, uint64_t v)
{
	switch (type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_ENUM:
	case PROTOBUF_C_TYPE_SFIXED32:
		otlp_json_int(b, (int32_t)(uint32_t)v);
		break;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		otlp_json_int(b, (int64_t)v);
		break;
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		json_uint(b, (uint32_t)v);
		break;
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		json_uint(b, v);
		break;
	case PROTOBUF_C_TYPE_SINT32: {
		uint32_t u = (uint32_t)v;
		otlp_json_int(b, (int32_t)((u >> 1) ^ (0u - (u & 1))));
		break;
	}
	case PROTOBUF_C_TYPE_SINT64:
		otlp_json_int(b, (int64_t)((v >> 1) ^ (0 - (v & 1))));
		break;
	case PROTOBUF_C_TYPE_BOOL:
		buf_adds(b, v ? "true" : "false");
		break;
	case PROTOBUF_C_TYPE_FLOAT: {
		uint32_t u = (uint32_t)v;
		float f;
		memcpy(&f, &u, sizeof f);
		json_double(b, (double)f);
		break;
	}
	case PROTOBUF_C_TYPE_DOUBLE: {
		double d;
		memcpy(&d, &v, sizeof d);
		json_double(b, d);
		break;
	}
	default:
		break;
	}
}

static int emit_msg(Tx *t, const ProtobufCMessageDescriptor *d, size_t off, size_t n,
                    int depth);

/* The value of one occurrence e of field fd. */
static int emit_value(Tx *t, const ProtobufCMessageDescriptor *d,
                      const ProtobufCFieldDescriptor *fd, const Ent *e, int depth)
{
	Buf *b = t->out;
	const uint8_t *s = t->data + e->val_off;
	size_t n = (size_t)e->v;
	switch (fd->type) {
	case PROTOBUF_C_TYPE_MESSAGE:
		return emit_msg(t, fd->descriptor, e->val_off, n, depth + 1);
	case PROTOBUF_C_TYPE_STRING: {
		size_t bad = utf8_bad(s, n);
		if (bad < n)
			return tx_fail(t, e->val_off + bad, "%s.%s is not valid UTF-8", d->short_name,
			               fd->name);
		otlp_buf_reserve(b, n + 2);
		otlp_json_str(b, (const char *)s, n);
		return TX_OK;
	}
	case PROTOBUF_C_TYPE_BYTES: {
		size_t want = id_length(fd->name);
		if (want == 0) {
			json_base64(b, s, n);
			return TX_OK;
		}
		if (n != want && n != 0)
			return tx_fail(t, e->tag_off, "%s.%s must be %zu bytes, not %zu", d->short_name,
			               fd->name, want, n);
		json_hex(b, s, n);
		return TX_OK;
	}
	default:
		if (e->wt == 2) {
			/* packed: the caller handles the elements */
			return TX_OK;
		}
		json_scalar(b, fd->type, e->v);
		return TX_OK;
	}
}

/* The elements of a packed repeated scalar field, each preceded by ','
 * unless *first. */
static int emit_packed(Tx *t, const ProtobufCFieldDescriptor *fd, const Ent *e, int *first)
{
	size_t pos = (size_t)e->val_off, end = pos + (size_t)e->v;
	int wt = wire_type_of(fd->type);
	while (pos < end) {
		size_t at = pos;
		uint64_t v;
		if (wt == 0) {
			if (get_varint(t->data, end, &pos, &v))
				return tx_fail(t, at, "%s: truncated or overlong packed varint", fd->name);
		} else {
			int w = wt == 1 ? 8 : 4;
			if (end - pos < (size_t)w)
				return tx_fail(t, at, "%s: packed values end in the middle of a value",
				               fd->name);
			v = get_le(t->data + pos, w);
			pos += (size_t)w;
		}
		if (tx_mark(t, at))
			return TX_FOUND;
		if (!*first)
			otlp_buf_addc(t->out, ',');
		*first = 0;
		json_scalar(t->out, fd->type, v);
	}
	return TX_OK;
}

static int emit_msg(Tx *t, const ProtobufCMessageDescriptor *d, size_t off, size_t n, int depth)
{
	if (depth > OTLP_PROTO_MAX_DEPTH)
		return tx_fail(t, off, "messages nested more than %d deep", OTLP_PROTO_MAX_DEPTH);
	size_t count = 0;
	int rc = scan(t, d, off, n, depth, &count);
	if (rc)
		return rc;
	Buf *b = t->out;
	const Ent *ents = t->ents[depth];
	uint64_t done = 0;   /* field indexes already written (descriptors have < 64) */
	int first = 1;
	otlp_buf_addc(b, '{');
	for (size_t i = 0; i < count; i++) {
		uint32_t fi = ents[i].fi;
		if (fi == NO_FIELD || fi >= 64 || (done & ((uint64_t)1 << fi)))
			continue;
		done |= (uint64_t)1 << fi;
		const ProtobufCFieldDescriptor *fd = &d->fields[fi];
		if ((rc = tx_mark(t, ents[i].tag_off)))
			return rc;
		if (!first)
			otlp_buf_addc(b, ',');
		first = 0;
		json_key(b, fd->name);
		if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
			otlp_buf_addc(b, '[');
			int ifirst = 1;
			for (size_t j = i; j < count; j++) {
				/* the ents array of this depth is stable: children use depth + 1 */
				const Ent *e = &t->ents[depth][j];
				if (e->fi != fi)
					continue;
				if (e->wt == 2 && wire_type_of(fd->type) != 2) {
					if ((rc = emit_packed(t, fd, e, &ifirst)))
						return rc;
					continue;
				}
				if ((rc = tx_mark(t, e->tag_off)))
					return rc;
				if (!ifirst)
					otlp_buf_addc(b, ',');
				ifirst = 0;
				if ((rc = emit_value(t, d, fd, e, depth)))
					return rc;
			}
			otlp_buf_addc(b, ']');
		} else {
			size_t last = i;
			for (size_t j = i + 1; j < count; j++)
				if (t->ents[depth][j].fi == fi)
					last = j;
			Ent e = t->ents[depth][last];
			if ((rc = emit_value(t, d, fd, &e, depth)))
				return rc;
		}
		ents = t->ents[depth];
	}
	otlp_buf_addc(b, '}');
	return TX_OK;
}

static const ProtobufCMessageDescriptor *request_descriptor(OtlpSignal sig)
{
	return sig == OTLP_SIGNAL_TRACES ? &ttpb__export_trace_service_request__descriptor
	                                 : &ttpb__export_metrics_service_request__descriptor;
}

static void tx_fini(Tx *t)
{
	for (int i = 0; i < OTLP_PROTO_MAX_DEPTH + 2; i++)
		free(t->ents[i]);
}

int otlp_proto_to_json(OtlpSignal sig, const uint8_t *data, size_t len, Buf *out, uint64_t *off,
                       char *msg, size_t msg_sz)
{
	Tx t;
	memset(&t, 0, sizeof t);
	t.out = out;
	t.data = data;
	t.len = len;
	t.msg = msg;
	t.msg_sz = msg_sz;
	/* JSON is about three times larger than protobuf: grow once up front
	 * for the usual request sizes, by doubling beyond */
	otlp_buf_reserve(out, (len < ((size_t)8 << 20) ? len : ((size_t)8 << 20)) * 3 + 64);
	int rc = emit_msg(&t, request_descriptor(sig), 0, len, 0);
	tx_fini(&t);
	if (rc == TX_ERR) {
		*off = t.err_off;
		return -1;
	}
	return 0;
}

uint64_t otlp_proto_locate(OtlpSignal sig, const uint8_t *data, size_t len, size_t json_off)
{
	Buf out;
	buf_init(&out);
	Tx t;
	memset(&t, 0, sizeof t);
	t.out = &out;
	t.data = data;
	t.len = len;
	t.locating = 1;
	t.want = json_off;
	emit_msg(&t, request_descriptor(sig), 0, len, 0);
	tx_fini(&t);
	buf_fini(&out);
	return t.found;
}

/* ---- which signal -------------------------------------------------------- */

/* Next field of data[*pos, end): 0, or -1 at the end or on a bad wire. */
static int next_field(const uint8_t *data, size_t end, size_t *pos, uint64_t *field, int *wt,
                      size_t *voff, uint64_t *vlen)
{
	uint64_t tag;
	if (*pos >= end || get_varint(data, end, pos, &tag))
		return -1;
	*field = tag >> 3;
	*wt = (int)(tag & 7);
	*voff = *pos;
	*vlen = 0;
	uint64_t v;
	switch (*wt) {
	case 0:
		return get_varint(data, end, pos, &v);
	case 1:
		if (end - *pos < 8)
			return -1;
		*pos += 8;
		return 0;
	case 5:
		if (end - *pos < 4)
			return -1;
		*pos += 4;
		return 0;
	case 2:
		if (get_varint(data, end, pos, &v) || v > end - *pos)
			return -1;
		*voff = *pos;
		*vlen = v;
		*pos += (size_t)v;
		return 0;
	default:
		return -1;
	}
}

/* 3: "neither a span, a metric nor a log record"; 4: a log record. */
#define SIGNAL_OTHER 3
#define SIGNAL_LOGS 4

/* What the item data[off, off + n) of ScopeSpans/ScopeMetrics/ScopeLogs
 * field 2 is. The three requests nest alike (field 1, its field 2, their
 * field 2 items), so the item's own fields tell: a Span has trace_id
 * (1, bytes) and fixed64 times (7, 8); a LogRecord has fixed64 times (1,
 * 11), a varint severity (2) or fixed32 flags (8), which no Span or
 * Metric field is; a Metric has its data (5, 7, 9, 10, 11: messages). */
static int item_signal(const uint8_t *data, size_t off, size_t n)
{
	size_t pos = off, end = off + n, voff;
	uint64_t field, vlen;
	int wt, id_bytes = 0, times = 0, metric = 0, log = 0;
	while (next_field(data, end, &pos, &field, &wt, &voff, &vlen) == 0) {
		if (field == 1 && wt == 2)
			id_bytes = 1;             /* Span.trace_id (Metric.name too) */
		else if ((field == 7 || field == 8) && wt == 1)
			times = 1;                /* Span start/end times */
		else if ((field == 5 || field == 7 || field == 9 || field == 10 || field == 11) &&
		         wt == 2)
			metric = 1;               /* Metric data */
		if (((field == 1 || field == 11) && wt == 1) || (field == 2 && wt == 0) ||
		    (field == 8 && wt == 5))
			log = 1;                  /* LogRecord times, severity, flags */
	}
	if (times && id_bytes)
		return OTLP_SIGNAL_TRACES;
	if (log)
		return SIGNAL_LOGS;
	if (metric)
		return OTLP_SIGNAL_METRICS;
	return SIGNAL_OTHER;
}

/* Calls visit on each item of a request (its field 1, their field 2,
 * their field 2: spans, metrics or log records) until it returns nonzero. */
static void walk_items(const uint8_t *data, size_t len,
                       int (*visit)(void *ud, const uint8_t *data, size_t off, size_t n),
                       void *ud)
{
	size_t p1 = 0, o1, o2, o3;
	uint64_t f, l1, l2, l3;
	int wt;
	while (next_field(data, len, &p1, &f, &wt, &o1, &l1) == 0) {
		if (f != 1 || wt != 2)
			continue;
		size_t p2 = o1, e2 = o1 + l1;
		while (next_field(data, e2, &p2, &f, &wt, &o2, &l2) == 0) {
			if (f != 2 || wt != 2)
				continue;
			size_t p3 = o2, e3 = o2 + l2;
			while (next_field(data, e3, &p3, &f, &wt, &o3, &l3) == 0)
				if (f == 2 && wt == 2 && visit(ud, data, o3, (size_t)l3))
					return;
		}
	}
}

/* walk_items() visitors: the first item that tells the signal, and a
 * count of the items. */
typedef struct SignalSeen {
	int signal;             /* what an item told, OTLP_SIGNAL_UNKNOWN while none */
	int other;              /* an item that told nothing was seen */
} SignalSeen;

static int visit_signal(void *ud, const uint8_t *data, size_t off, size_t n)
{
	SignalSeen *s = ud;
	int sig = item_signal(data, off, n);
	if (sig == SIGNAL_OTHER) {
		s->other = 1;
		return 0;
	}
	s->signal = sig;
	return 1;
}

static int visit_count(void *ud, const uint8_t *data, size_t off, size_t n)
{
	(void)data;
	(void)off;
	(void)n;
	(*(int64_t *)ud)++;
	return 0;
}

/* The signal of a request, from its first item that tells. */
static int request_signal(const uint8_t *data, size_t len)
{
	SignalSeen s = {OTLP_SIGNAL_UNKNOWN, 0};
	walk_items(data, len, visit_signal, &s);
	if (s.signal != OTLP_SIGNAL_UNKNOWN)
		return s.signal;
	return s.other ? SIGNAL_OTHER : OTLP_SIGNAL_UNKNOWN;
}

/* How many items (log records) a request holds. */
static int64_t request_items(const uint8_t *data, size_t len)
{
	int64_t n = 0;
	walk_items(data, len, visit_count, &n);
	return n;
}

OtlpSignal otlp_proto_signal(const uint8_t *data, size_t len)
{
	int s = request_signal(data, len);
	return s == SIGNAL_OTHER || s == SIGNAL_LOGS ? OTLP_SIGNAL_UNKNOWN : (OtlpSignal)s;
}

/* ---- responses ------------------------------------------------------------ */

typedef struct BufSink {
	ProtobufCBuffer base;
	Buf *b;
} BufSink;

static void sink_append(ProtobufCBuffer *pb, size_t len, const uint8_t *data)
{
	buf_add(((BufSink *)pb)->b, data, len);
}

static void pack_into(const ProtobufCMessage *m, Buf *out)
{
	BufSink s = {{sink_append}, out};
	protobuf_c_message_pack_to_buffer(m, &s.base);
}

void otlp_proto_response(OtlpSignal sig, int64_t rejected, const char *message, Buf *out)
{
	int partial = rejected != 0 || (message && *message);
	char *msg = (char *)(message ? message : "");
	if (sig == OTLP_SIGNAL_TRACES) {
		Ttpb__ExportTraceServiceResponse r = TTPB__EXPORT_TRACE_SERVICE_RESPONSE__INIT;
		Ttpb__ExportTracePartialSuccess ps = TTPB__EXPORT_TRACE_PARTIAL_SUCCESS__INIT;
		ps.rejected_spans = rejected;
		ps.error_message = msg;
		if (partial)
			r.partial_success = &ps;
		pack_into(&r.base, out);
	} else {
		Ttpb__ExportMetricsServiceResponse r = TTPB__EXPORT_METRICS_SERVICE_RESPONSE__INIT;
		Ttpb__ExportMetricsPartialSuccess ps = TTPB__EXPORT_METRICS_PARTIAL_SUCCESS__INIT;
		ps.rejected_data_points = rejected;
		ps.error_message = msg;
		if (partial)
			r.partial_success = &ps;
		pack_into(&r.base, out);
	}
}

void otlp_proto_status(int code, const char *message, Buf *out)
{
	Ttpb__RpcStatus s = TTPB__RPC_STATUS__INIT;
	s.code = code;
	s.message = (char *)(message ? message : "");
	pack_into(&s.base, out);
}

/* ---- import formats ------------------------------------------------------- */

uint64_t import_pb_offset(const ImportCtx *ctx, uint64_t json_off)
{
	const ImportPbLoc *l = ctx->pb;
	if (l == NULL)
		return json_off;
	return l->base + otlp_proto_locate(l->signal, l->data, l->len, (size_t)json_off);
}

int import_err_vat(ImportCtx *ctx, int code, long line, long col, const char *fmt, va_list ap)
{
	if (ctx->pb == NULL || line != 1 || col < 1)
		return err_vat(ctx->err, code, ctx->name, line, col, fmt, ap);
	char msg[400];
	vsnprintf(msg, sizeof msg, fmt, ap);
	return err_set(ctx->err, code, "%s: byte %llu: %s", ctx->name,
	               (unsigned long long)import_pb_offset(ctx, (uint64_t)(col - 1)), msg);
}

int import_err_at(ImportCtx *ctx, int code, long line, long col, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = import_err_vat(ctx, code, line, col, fmt, ap);
	va_end(ap);
	return rc;
}

/* Imports one request (data, len bytes at file offset base). */
static int run_message(ImportCtx *ctx, OtlpSignal forced, const uint8_t *data, size_t len,
                       uint64_t base)
{
	int s = forced ? (int)forced : request_signal(data, len);
	if (s == OTLP_SIGNAL_UNKNOWN) {
		/* no span and no metric: check the wire, store nothing */
		s = OTLP_SIGNAL_TRACES;
	} else if (s == SIGNAL_LOGS) {
		/* a Collector export with a logs pipeline: counted, not read */
		ctx->skips->log_records += request_items(data, len);
		return 0;
	} else if (s == SIGNAL_OTHER) {
		return err_set(ctx->err, TT_EPARSE,
		               "%s: byte %llu: neither a trace, a metrics nor a logs request "
		               "(its items are not spans, metrics or log records)",
		               ctx->name, (unsigned long long)base);
	}
	Buf json;
	buf_init(&json);
	char msg[300];
	uint64_t off = 0;
	if (otlp_proto_to_json((OtlpSignal)s, data, len, &json, &off, msg, sizeof msg)) {
		buf_fini(&json);
		return err_set(ctx->err, TT_EPARSE, "%s: byte %llu: %s", ctx->name,
		               (unsigned long long)(base + off), msg);
	}
	ImportOptions opt = *ctx->opt;
	opt.progress = NULL;
	ImportPbLoc loc = {(OtlpSignal)s, data, len, base};
	ImportCtx sub = *ctx;
	sub.opt = &opt;
	sub.total_bytes = json.len;
	sub.pb = &loc;
	FILE *f = fmemopen(json.p, json.len, "rb");
	int rc;
	if (f == NULL) {
		rc = err_set(ctx->err, TT_ENOMEM, "%s: cannot open memory stream", ctx->name);
	} else {
		rc = s == OTLP_SIGNAL_TRACES ? otlp_traces_run(&sub, f) : otlp_metrics_run(&sub, f);
		fclose(f);
	}
	buf_fini(&json);
	return rc;
}

/* Reads exactly n bytes (n <= PROTO_MAX_MSG) into b. 0, 1 at a clean end
 * of file before any byte, or a negative TT_E* code. */
static int read_exact(ImportCtx *ctx, FILE *f, Buf *b, size_t n, uint64_t at)
{
	buf_reset(b);
	buf_reserve(b, n);
	size_t got = fread(b->p, 1, n, f);
	b->len = got;
	if (got == n)
		return 0;
	if (ferror(f))
		return err_set(ctx->err, TT_EIO, "%s: read error: %s", ctx->name, strerror(errno));
	if (got == 0)
		return 1;
	return err_set(ctx->err, TT_EPARSE,
	               "%s: byte %llu: file ends in the middle of a message (%zu of %zu bytes)",
	               ctx->name, (unsigned long long)at, got, n);
}

/* Whether the file starts with a length-prefixed message (the Collector's
 * file exporter) rather than a bare request: a request starts with the tag
 * of field 1 (0x0a), a 4-byte big-endian length below 160 MiB with 0x00
 * to 0x09. */
static int is_stream(const uint8_t *head, size_t len)
{
	return len >= 5 && head[0] < 0x0a && head[4] == 0x0a;
}

static int run_file(ImportCtx *ctx, FILE *f, OtlpSignal forced)
{
	Buf b;
	buf_init(&b);
	uint8_t head[5];
	size_t hl = fread(head, 1, sizeof head, f);
	if (ferror(f))
		return err_set(ctx->err, TT_EIO, "%s: read error: %s", ctx->name, strerror(errno));
	rewind(f);
	int rc = 0;
	/* a receiver's body (forced signal) is always one bare request */
	if (forced == OTLP_SIGNAL_UNKNOWN && is_stream(head, hl)) {
		uint64_t at = 0, done = 0;
		for (;;) {
			uint8_t pre[4];
			size_t got = fread(pre, 1, 4, f);
			if (got == 0 && !ferror(f))
				break;
			if (got < 4) {
				rc = ferror(f) ? err_set(ctx->err, TT_EIO, "%s: read error", ctx->name)
				               : err_set(ctx->err, TT_EPARSE,
				                         "%s: byte %llu: file ends inside a message length",
				                         ctx->name, (unsigned long long)at);
				break;
			}
			uint32_t n = (uint32_t)pre[0] << 24 | (uint32_t)pre[1] << 16 |
			             (uint32_t)pre[2] << 8 | pre[3];
			if (n > PROTO_MAX_MSG) {
				rc = err_set(ctx->err, TT_EPARSE,
				             "%s: byte %llu: message of %u bytes is larger than %zu MiB",
				             ctx->name, (unsigned long long)at, n, PROTO_MAX_MSG >> 20);
				break;
			}
			rc = read_exact(ctx, f, &b, n, at + 4);
			if (rc == 1 && n > 0)
				rc = err_set(ctx->err, TT_EPARSE,
				             "%s: byte %llu: file ends before the message of %u bytes",
				             ctx->name, (unsigned long long)(at + 4), n);
			if (rc < 0 || rc == 1)
				break;
			if ((rc = run_message(ctx, forced, (const uint8_t *)b.p, b.len, at + 4)))
				break;
			at += 4 + (uint64_t)n;
			done = at;
			import_progress(ctx, done);
		}
		if (rc == 1)
			rc = 0;
	} else {
		/* one request: read it whole */
		char chunk[1 << 16];
		size_t got;
		while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
			if (b.len + got > PROTO_MAX_MSG) {
				buf_fini(&b);
				return err_set(ctx->err, TT_EPARSE,
				               "%s: a protobuf request larger than %zu MiB is not read "
				               "(write a length-prefixed stream instead)",
				               ctx->name, PROTO_MAX_MSG >> 20);
			}
			buf_add(&b, chunk, got);
		}
		if (ferror(f))
			rc = err_set(ctx->err, TT_EIO, "%s: read error: %s", ctx->name, strerror(errno));
		else
			rc = run_message(ctx, forced, (const uint8_t *)b.p, b.len, 0);
		import_progress(ctx, b.len);
	}
	buf_fini(&b);
	return rc;
}

int otlp_proto_run(ImportCtx *ctx, FILE *f)
{
	return run_file(ctx, f, OTLP_SIGNAL_UNKNOWN);
}

int otlp_proto_traces_run(ImportCtx *ctx, FILE *f)
{
	return run_file(ctx, f, OTLP_SIGNAL_TRACES);
}

int otlp_proto_metrics_run(ImportCtx *ctx, FILE *f)
{
	return run_file(ctx, f, OTLP_SIGNAL_METRICS);
}

int otlp_proto_sniff(const char *head, size_t len)
{
	const uint8_t *h = (const uint8_t *)head;
	size_t off = is_stream(h, len) ? 4 : 0;
	if (len < off + 2 || h[off] != 0x0a)
		return 0;
	/* field 1 (resource_*) with a length, then field 1 (resource) or
	 * field 2 (scope_*) inside it */
	size_t pos = off + 1;
	uint64_t n;
	if (get_varint(h, len, &pos, &n))
		return 0;
	if (pos < len && h[pos] != 0x0a && h[pos] != 0x12)
		return 0;
	return 60;
}
