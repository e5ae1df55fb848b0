/*
 * test_otlp_proto.c - the OTLP protobuf decoder (importers/otlp_proto.h):
 * requests encoded by hand with the specification's field numbers, checked
 * against the OTLP/JSON text they must become (what the JSON importers
 * then read), plus wire errors with their byte offsets, the JSON column to
 * protobuf byte mapping, signal detection and the encoded responses.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "otlp_proto.h"

/* ---- a small encoder ------------------------------------------------------ */

static void varint(Buf *b, uint64_t v)
{
	while (v >= 0x80) {
		buf_addc(b, (char)(v | 0x80));
		v >>= 7;
	}
	buf_addc(b, (char)v);
}

static void tag(Buf *b, unsigned field, unsigned wt)
{
	varint(b, (uint64_t)field << 3 | wt);
}

static void bytes(Buf *b, unsigned field, const void *p, size_t n)
{
	tag(b, field, 2);
	varint(b, n);
	buf_add(b, p, n);
}

static void sub(Buf *b, unsigned field, const Buf *m)
{
	bytes(b, field, m->p ? m->p : "", m->len);
}

static void fixed64(Buf *b, unsigned field, uint64_t v)
{
	tag(b, field, 1);
	for (int i = 0; i < 8; i++)
		buf_addc(b, (char)(v >> (8 * i)));
}

static void dbl(Buf *b, unsigned field, double d)
{
	uint64_t v;
	memcpy(&v, &d, sizeof v);
	fixed64(b, field, v);
}

/* KeyValue {key, AnyValue {double_value}} */
static void kv_double(Buf *b, unsigned field, const char *key, double d)
{
	Buf av, kv;
	buf_init(&av), buf_init(&kv);
	dbl(&av, 4, d);
	bytes(&kv, 1, key, strlen(key));
	sub(&kv, 2, &av);
	sub(b, field, &kv);
	buf_fini(&av), buf_fini(&kv);
}

static char *json_of(OtlpSignal sig, const Buf *pb)
{
	Buf out;
	buf_init(&out);
	uint64_t off = 0;
	char msg[200] = "";
	if (otlp_proto_to_json(sig, (const uint8_t *)pb->p, pb->len, &out, &off, msg, sizeof msg))
		fail_msg("byte %llu: %s", (unsigned long long)off, msg);
	return out.p;
}

/* ---- tests ---------------------------------------------------------------- */

/* A span with every kind of field: ids as hex, times as numbers, typed
 * attribute values, doubles written as JavaScript writes them. */
static void test_span_to_json(void **state)
{
	(void)state;
	Buf span, ss, rs, req;
	buf_init(&span), buf_init(&ss), buf_init(&rs), buf_init(&req);
	const unsigned char tid[16] = {0xAB, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
	const unsigned char sid[8] = {0, 0, 0, 0, 0, 0, 0, 0xCD};
	bytes(&span, 1, tid, 16);
	bytes(&span, 2, sid, 8);
	bytes(&span, 5, "GET /x", 6);
	tag(&span, 6, 0), varint(&span, 2);
	fixed64(&span, 7, 1700000000000000000ull);
	fixed64(&span, 8, 1700000000001000000ull);
	kv_double(&span, 9, "a", 0.1);
	kv_double(&span, 9, "b", 1e-7);
	kv_double(&span, 9, "c", 1e21);
	kv_double(&span, 9, "d", 5.0);
	kv_double(&span, 9, "e", -123456.789);
	kv_double(&span, 9, "f", 0.0 / 0.0);
	sub(&ss, 2, &span);
	sub(&rs, 2, &ss);
	sub(&req, 1, &rs);
	char *j = json_of(OTLP_SIGNAL_TRACES, &req);
	assert_string_equal(
	    j, "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[{"
	       "\"traceId\":\"ab000000000000000000000000000001\",\"spanId\":\"00000000000000cd\","
	       "\"name\":\"GET /x\",\"kind\":2,\"startTimeUnixNano\":1700000000000000000,"
	       "\"endTimeUnixNano\":1700000000001000000,\"attributes\":["
	       "{\"key\":\"a\",\"value\":{\"doubleValue\":0.1}},"
	       "{\"key\":\"b\",\"value\":{\"doubleValue\":1e-7}},"
	       "{\"key\":\"c\",\"value\":{\"doubleValue\":1e+21}},"
	       "{\"key\":\"d\",\"value\":{\"doubleValue\":5}},"
	       "{\"key\":\"e\",\"value\":{\"doubleValue\":-123456.789}},"
	       "{\"key\":\"f\",\"value\":{\"doubleValue\":\"NaN\"}}]}]}]}]}");
	buf_fini(&span), buf_fini(&ss), buf_fini(&rs), buf_fini(&req);
	free(j);
}

/* Items of a repeated field interleaved with other fields are one array;
 * a non-repeated field given twice keeps its last value; unknown fields
 * (here 99 as varint and 98 as bytes) are skipped; packed and unpacked
 * repeated scalars read the same. */
static void test_wire_shapes(void **state)
{
	(void)state;
	Buf packed, unpacked;
	buf_init(&packed), buf_init(&unpacked);
	/* HistogramDataPoint: count 4, bucket_counts 6 (fixed64), bounds 7 (double) */
	Buf counts, bounds;
	buf_init(&counts), buf_init(&bounds);
	for (int i = 0; i < 3; i++) {
		uint64_t v = (uint64_t)i + 1;
		for (int k = 0; k < 8; k++)
			buf_addc(&counts, (char)(v >> (8 * k)));
	}
	double bs[2] = {0.5, 2.5};
	buf_add(&bounds, bs, sizeof bs);  /* little-endian doubles on this machine */
	fixed64(&packed, 4, 7);
	bytes(&packed, 6, counts.p, counts.len);
	bytes(&packed, 7, bounds.p, bounds.len);
	fixed64(&unpacked, 4, 7);
	for (int i = 0; i < 3; i++)
		fixed64(&unpacked, 6, (uint64_t)i + 1);
	tag(&unpacked, 99, 0), varint(&unpacked, 5);
	dbl(&unpacked, 7, 0.5);
	bytes(&unpacked, 98, "zz", 2);
	dbl(&unpacked, 7, 2.5);
	/* Metric {name, histogram {data_points..., temporality}} with the name
	 * given twice and the data points split around the temporality */
	Buf h1, h2, m1, m2, sm, rm, r1, r2;
	buf_init(&h1), buf_init(&h2), buf_init(&m1), buf_init(&m2);
	buf_init(&sm), buf_init(&rm), buf_init(&r1), buf_init(&r2);
	sub(&h1, 1, &packed);
	tag(&h1, 2, 0), varint(&h1, 2);
	sub(&h1, 1, &packed);
	sub(&h2, 1, &unpacked);
	tag(&h2, 2, 0), varint(&h2, 2);
	sub(&h2, 1, &unpacked);
	bytes(&m1, 1, "old", 3);
	sub(&m1, 9, &h1);
	bytes(&m1, 1, "lat", 3);
	bytes(&m2, 1, "lat", 3);
	sub(&m2, 9, &h2);
	char *j1, *j2;
	sub(&sm, 2, &m1);
	sub(&rm, 2, &sm);
	sub(&r1, 1, &rm);
	j1 = json_of(OTLP_SIGNAL_METRICS, &r1);
	buf_reset(&sm), buf_reset(&rm);
	sub(&sm, 2, &m2);
	sub(&rm, 2, &sm);
	sub(&r2, 1, &rm);
	j2 = json_of(OTLP_SIGNAL_METRICS, &r2);
	const char *want =
	    "{\"resourceMetrics\":[{\"scopeMetrics\":[{\"metrics\":[{\"name\":\"lat\","
	    "\"histogram\":{\"dataPoints\":["
	    "{\"count\":7,\"bucketCounts\":[1,2,3],\"explicitBounds\":[0.5,2.5]},"
	    "{\"count\":7,\"bucketCounts\":[1,2,3],\"explicitBounds\":[0.5,2.5]}],"
	    "\"aggregationTemporality\":2}}]}]}]}";
	assert_string_equal(j1, want);
	assert_string_equal(j2, want);
	assert_int_equal(otlp_proto_signal((const uint8_t *)r1.p, r1.len), OTLP_SIGNAL_METRICS);
	free(j1), free(j2);
	buf_fini(&packed), buf_fini(&unpacked);
	buf_fini(&counts), buf_fini(&bounds), buf_fini(&h1), buf_fini(&h2);
	buf_fini(&m1), buf_fini(&m2), buf_fini(&sm), buf_fini(&rm), buf_fini(&r1), buf_fini(&r2);
}

static void expect_error(OtlpSignal sig, const Buf *pb, uint64_t want_off, const char *needle)
{
	Buf out;
	buf_init(&out);
	uint64_t off = 0;
	char msg[200] = "";
	int rc = otlp_proto_to_json(sig, (const uint8_t *)pb->p, pb->len, &out, &off, msg,
	                            sizeof msg);
	if (rc == 0 || off != want_off || strstr(msg, needle) == NULL)
		fail_msg("rc %d, byte %llu: '%s'; want byte %llu with '%s'", rc,
		         (unsigned long long)off, msg, (unsigned long long)want_off, needle);
	buf_fini(&out);
}

static void test_wire_errors(void **state)
{
	(void)state;
	Buf b;
	buf_init(&b);
	/* a length past the end, reported at its field's tag */
	buf_adds(&b, "\x0a\x05\x12\x01");
	expect_error(OTLP_SIGNAL_TRACES, &b, 0, "length 5 runs past the end");
	/* a truncated varint inside a nested message */
	buf_reset(&b);
	buf_add(&b, "\x0a\x03\x12\x01\x80", 5);  /* rs{ ss: len 1 -> [0x80] } */
	expect_error(OTLP_SIGNAL_TRACES, &b, 4, "truncated or overlong field tag");
	/* a known field with the wrong wire type */
	buf_reset(&b);
	buf_add(&b, "\x08\x01", 2);
	expect_error(OTLP_SIGNAL_TRACES, &b, 0,
	             "ExportTraceServiceRequest.resource_spans (field 1) has varint wire type");
	/* invalid UTF-8 in a string, at the bad byte */
	Buf span, ss, rs;
	buf_init(&span), buf_init(&ss), buf_init(&rs);
	buf_reset(&b);
	bytes(&span, 5, "ok\xff", 3);
	sub(&ss, 2, &span);
	sub(&rs, 2, &ss);
	sub(&b, 1, &rs);
	expect_error(OTLP_SIGNAL_TRACES, &b, b.len - 1, "Span.name is not valid UTF-8");
	/* nesting beyond the limit: AnyValue arrays inside each other */
	Buf av, tmp;
	buf_init(&av), buf_init(&tmp);
	bytes(&av, 1, "x", 1);
	for (int i = 0; i < 40; i++) {
		buf_reset(&tmp);
		sub(&tmp, 1, &av);   /* ArrayValue.values */
		buf_reset(&av);
		sub(&av, 5, &tmp);   /* AnyValue.array_value */
	}
	buf_fini(&tmp);
	Buf kv;
	buf_init(&kv);
	bytes(&kv, 1, "k", 1);
	sub(&kv, 2, &av);
	buf_reset(&span), buf_reset(&ss), buf_reset(&rs), buf_reset(&b);
	sub(&span, 9, &kv);
	sub(&ss, 2, &span);
	sub(&rs, 2, &ss);
	sub(&b, 1, &rs);
	Buf out;
	buf_init(&out);
	uint64_t off;
	char msg[200];
	assert_int_equal(otlp_proto_to_json(OTLP_SIGNAL_TRACES, (const uint8_t *)b.p, b.len, &out,
	                                    &off, msg, sizeof msg), -1);
	assert_non_null(strstr(msg, "nested more than 24 deep"));
	buf_fini(&out), buf_fini(&kv), buf_fini(&av);
	buf_fini(&span), buf_fini(&ss), buf_fini(&rs), buf_fini(&b);
}

/* A JSON column maps back to the byte of the protobuf field it came from. */
static void test_locate(void **state)
{
	(void)state;
	Buf span, ss, rs, req;
	buf_init(&span), buf_init(&ss), buf_init(&rs), buf_init(&req);
	bytes(&span, 5, "a", 1);
	size_t end_tag = span.len;
	fixed64(&span, 8, 42);
	sub(&ss, 2, &span);
	sub(&rs, 2, &ss);
	sub(&req, 1, &rs);
	size_t span_start = req.len - span.len;
	char *j = json_of(OTLP_SIGNAL_TRACES, &req);
	const char *v = strstr(j, "42");
	assert_non_null(v);
	assert_int_equal(otlp_proto_locate(OTLP_SIGNAL_TRACES, (const uint8_t *)req.p, req.len,
	                                   (size_t)(v - j)),
	                 span_start + end_tag);
	const char *brace = strstr(j, "{\"name\"");
	assert_non_null(brace);
	/* the span's '{' maps to the tag of the span item (2 bytes before it) */
	assert_int_equal(otlp_proto_locate(OTLP_SIGNAL_TRACES, (const uint8_t *)req.p, req.len,
	                                   (size_t)(brace - j)),
	                 span_start - 2);
	free(j);
	buf_fini(&span), buf_fini(&ss), buf_fini(&rs), buf_fini(&req);
}

static void test_signal_and_responses(void **state)
{
	(void)state;
	assert_int_equal(otlp_proto_signal((const uint8_t *)"", 0), OTLP_SIGNAL_UNKNOWN);
	Buf span, ss, rs, req;
	buf_init(&span), buf_init(&ss), buf_init(&rs), buf_init(&req);
	bytes(&span, 1, "0123456789abcdef", 16);
	fixed64(&span, 7, 1);
	sub(&ss, 2, &span);
	sub(&rs, 2, &ss);
	sub(&req, 1, &rs);
	assert_int_equal(otlp_proto_signal((const uint8_t *)req.p, req.len), OTLP_SIGNAL_TRACES);

	Buf r;
	buf_init(&r);
	otlp_proto_response(OTLP_SIGNAL_TRACES, 0, NULL, &r);
	assert_int_equal(r.len, 0);
	otlp_proto_response(OTLP_SIGNAL_METRICS, 0, "dup", &r);
	/* partial_success (1) { error_message (2) "dup" } */
	assert_int_equal(r.len, 7);
	assert_memory_equal(r.p, "\x0a\x05\x12\x03" "dup", 7);
	buf_reset(&r);
	otlp_proto_status(3, "bad", &r);
	assert_memory_equal(r.p, "\x08\x03\x12\x03" "bad", 7);
	buf_fini(&r);
	buf_fini(&span), buf_fini(&ss), buf_fini(&rs), buf_fini(&req);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_span_to_json),
		cmocka_unit_test(test_wire_shapes),
		cmocka_unit_test(test_wire_errors),
		cmocka_unit_test(test_locate),
		cmocka_unit_test(test_signal_and_responses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
