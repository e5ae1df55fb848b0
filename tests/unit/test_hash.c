/*
 * test_hash.c - common/hash.h, FNV-1a: the standard test vectors, and for
 * every use whose result ends up persisted the value the code computed
 * before the copies were merged into hash.h (bb22945), so that a
 * re-import of an old file stores what its first import stored.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "drill.h"
#include "hash.h"
#include "tracejson.h"

/* The IETF draft's vectors (draft-eastlake-fnv, FNV-1a 64). */
static void test_standard_vectors(void **state)
{
	(void)state;
	assert_true(hash_fnv1a_str(HASH_FNV1A_BASIS, "") == UINT64_C(0xcbf29ce484222325));
	assert_true(hash_fnv1a_str(HASH_FNV1A_BASIS, "a") == UINT64_C(0xaf63dc4c8601ec8c));
	assert_true(hash_fnv1a_str(HASH_FNV1A_BASIS, "foobar") == UINT64_C(0x85944171f73967e8));
	/* a concatenation hashes as its parts in turn */
	assert_true(hash_fnv1a(hash_fnv1a_str(HASH_FNV1A_BASIS, "foo"), "bar", 3) ==
	            hash_fnv1a_str(HASH_FNV1A_BASIS, "foobar"));
}

/* importers/zipkin.c's service hash (it decides which span a shared
 * server span hangs under, stored as its parent): the old svc_hash()'s
 * values. */
static void test_zipkin_service_hash_unchanged(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		uint64_t out;
	} v[] = {
	    {"frontend", UINT64_C(0x470374d79bbf94bf)},
	    {"checkout-service", UINT64_C(0xa19b3dc1711cc8cd)},
	    {"", UINT64_C(0x14650fb0739d0383)},
	    {"\xc3\xa9t\xc3\xa9", UINT64_C(0x314805cf37f70ed9)},
	};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
		assert_true(hash_fnv1a_str(HASH_FNV1A_V0, v[i].in) == v[i].out);
}

/* importers/tracejson.c's fingerprint of an opaque id (Jaeger, Zipkin:
 * two texts stored as one id are refused as a collision): the old
 * tj_id_fingerprint()'s values, through the function itself. */
static void test_opaque_id_fingerprint_unchanged(void **state)
{
	(void)state;
	assert_true(tj_id_fingerprint("order-42", 8, 1) == UINT64_C(0xf73d31a0bdf40943));
	assert_true(tj_id_fingerprint("span:7", 6, 1) == UINT64_C(0xfb51dbfc65c81fb1));
	assert_true(tj_id_fingerprint("a", 1, 1) == UINT64_C(0x44bd8ad473cd9907));
	assert_true(tj_id_fingerprint("order-42", 8, 0) == 0);
}

/* A drill's digest, stored with every training attempt
 * (drill_attempts.drill_digest): the standard basis, as before. */
static void test_drill_digest_unchanged(void **state)
{
	(void)state;
	const char *path = "fixtures/drills/mini.drill.json";
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	static char text[1 << 16];
	size_t n = fread(text, 1, sizeof text, f);
	fclose(f);
	Drill *d = NULL;
	Err err = {0};
	assert_int_equal(drill_parse(path, "fixtures/drills", text, n, &d, &err), 0);
	assert_string_equal(d->digest, "5c02f22a5c40235e");
	drill_free(d);
	const char *t = "{\"id\": \"queue-saturation\", \"version\": 1}\n";
	assert_true(hash_fnv1a(HASH_FNV1A_BASIS, t, strlen(t)) == UINT64_C(0xe78207931cb4a44f));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_standard_vectors),
	    cmocka_unit_test(test_zipkin_service_hash_unchanged),
	    cmocka_unit_test(test_opaque_id_fingerprint_unchanged),
	    cmocka_unit_test(test_drill_digest_unchanged),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
