/*
 * test_import_otlp.c - the OTLP/JSON trace importer (importers/otlp_traces.c)
 * through import_file(), checked against the rows it leaves in SQLite.
 *
 * Malformed inputs are written with a '@' where the error must be reported;
 * the marker is removed before the import and turned into the expected
 * "file:line:col: " prefix. Every failing import must leave the database
 * content exactly as it was (compared through a hash of every row).
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "buf.h"
#include "formats.h"
#include "import.h"
#include "otlp_common.h"
#include "store.h"

typedef struct Fx {
	char dir[64];
	char db[128];
	Store *st;
	sqlite3 *ro;
} Fx;

static int setup(void **state)
{
	Fx *fx = calloc(1, sizeof *fx);
	snprintf(fx->dir, sizeof fx->dir, "/tmp/tt-otlp-XXXXXX");
	if (fx == NULL || mkdtemp(fx->dir) == NULL)
		return -1;
	snprintf(fx->db, sizeof fx->db, "%s/t.db", fx->dir);
	Err err = {0};
	if (store_open(fx->db, 0, &fx->st, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	if (sqlite3_open_v2(fx->db, &fx->ro, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		return -1;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	Fx *fx = *state;
	sqlite3_close(fx->ro);
	store_close(fx->st);
	DIR *d = opendir(fx->dir);
	struct dirent *e;
	char path[512];
	while (d && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", fx->dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(fx->dir);
	free(fx);
	return 0;
}

/* ---- helpers ------------------------------------------------------------- */

static int import_path(Fx *fx, const char *path, const char *format, ImportResult *res,
                       Err *err)
{
	ImportOptions o = {0};
	o.format = format;
	err_clear(err);
	return import_file(fx->st, path, &o, res, err);
}

static void import_ok(Fx *fx, const char *path, ImportResult *res)
{
	Err err = {0};
	int rc = import_path(fx, path, NULL, res, &err);
	if (rc)
		fail_msg("import of %s failed: %s", path, err.msg);
	assert_string_equal(res->format, "otlp-json");
}

/* Writes n bytes to dir/name; returns the path (static storage). */
static const char *write_file(Fx *fx, const char *name, const char *data, size_t n)
{
	static char path[256];
	snprintf(path, sizeof path, "%s/%s", fx->dir, name);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, n, f), n);
	fclose(f);
	return path;
}

typedef struct NamedSeen {
	char peer[18][32], db[18][32];
	int n;
} NamedSeen;

/* Keeps what the reader gives for spans ...a1 to ...a9 (0 to 8) and ...b1
 * to ...b9 (9 to 17), by that letter and digit. */
static int on_named(void *ctx, const StoreSpanRow *r)
{
	NamedSeen *s = ctx;
	size_t l = strlen(r->span_id);
	int i = l >= 2 ? (r->span_id[l - 2] == 'b' ? 9 : 0) + r->span_id[l - 1] - '1' : -1;
	if (i >= 0 && i < 18) {
		snprintf(s->peer[i], sizeof s->peer[i], "%s", r->peer);
		snprintf(s->db[i], sizeof s->db[i], "%s", r->db_system);
		s->n++;
	}
	return 0;
}

static int64_t q_int(Fx *fx, const char *sql)
{
	sqlite3_stmt *s = NULL;
	assert_int_equal(sqlite3_prepare_v2(fx->ro, sql, -1, &s, NULL), SQLITE_OK);
	int64_t v = -1;
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

/* The first row of sql as "a|b|c" (NULL as "NULL"); caller frees. */
static char *q_row(Fx *fx, const char *sql)
{
	sqlite3_stmt *s = NULL;
	if (sqlite3_prepare_v2(fx->ro, sql, -1, &s, NULL) != SQLITE_OK)
		fail_msg("bad test query: %s", sqlite3_errmsg(fx->ro));
	size_t cap = 4096, len = 0;
	char *out = calloc(1, cap);
	if (sqlite3_step(s) == SQLITE_ROW) {
		for (int i = 0; i < sqlite3_column_count(s); i++) {
			const char *v = sqlite3_column_type(s, i) == SQLITE_NULL
			                    ? "NULL"
			                    : (const char *)sqlite3_column_text(s, i);
			size_t n = strlen(v) + 2;
			if (len + n + 1 > cap) {
				cap = (len + n + 1) * 2;
				out = realloc(out, cap);
			}
			len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? "|" : "", v);
		}
	} else {
		snprintf(out, cap, "(no row)");
	}
	sqlite3_finalize(s);
	return out;
}

#define assert_row(fx, sql, want)                  \
	do {                                       \
		char *got_ = q_row((fx), (sql));   \
		assert_string_equal(got_, (want)); \
		free(got_);                        \
	} while (0)

/* Row counts and a hash of every value of the tables an import writes. */
typedef struct Snap {
	int64_t rows[4];
	uint64_t hash;
} Snap;

static Snap snapshot(Fx *fx)
{
	static const char *const tables[4] = {"sources", "resources", "scopes", "spans"};
	Snap sn = {{0}, 1469598103934665603ull};
	for (int t = 0; t < 4; t++) {
		char sql[128];
		snprintf(sql, sizeof sql, "SELECT * FROM %s ORDER BY rowid", tables[t]);
		sqlite3_stmt *s = NULL;
		assert_int_equal(sqlite3_prepare_v2(fx->ro, sql, -1, &s, NULL), SQLITE_OK);
		while (sqlite3_step(s) == SQLITE_ROW) {
			sn.rows[t]++;
			for (int i = 0; i < sqlite3_column_count(s); i++) {
				const unsigned char *v = sqlite3_column_blob(s, i);
				int n = sqlite3_column_bytes(s, i);
				sn.hash = (sn.hash ^ (uint64_t)(sqlite3_column_type(s, i) + 7)) *
				          1099511628211ull;
				for (int k = 0; k < n; k++)
					sn.hash = (sn.hash ^ v[k]) * 1099511628211ull;
			}
		}
		sqlite3_finalize(s);
	}
	return sn;
}

static void assert_snap_equal(Snap a, Snap b)
{
	for (int t = 0; t < 4; t++)
		assert_int_equal(a.rows[t], b.rows[t]);
	assert_true(a.hash == b.hash);
}

#define SPAN_COLS                                                                              \
	"trace_id, span_id, parent_id, service, host, name, kind, start_ns, end_ns, status_code," \
	" status_msg, wclass, queue_ns, trace_state, flags, dropped"

/* ---- valid input ------------------------------------------------------------- */

static void test_single_document(void **state)
{
	Fx *fx = *state;
	ImportResult res;
	import_ok(fx, "fixtures/otlp/single.json", &res);
	assert_int_equal(res.counts.spans_added, 3);
	assert_int_equal(res.counts.spans_duplicate, 0);
	assert_int_equal(q_int(fx, "SELECT count(*) FROM spans"), 3);

	/* root server span: ids lowercased, everything kept */
	assert_row(fx, "SELECT " SPAN_COLS " FROM spans WHERE span_id = 'eee19b7ec3c1b174'",
	           "5b8efff798038103d269b633813fc60c|eee19b7ec3c1b174||frontend|fe-1|GET /v2/home|2|"
	           "1544712660000000000|1544712660300000000|0|NULL|standard|NULL|vendor=1|1|10");
	assert_row(fx, "SELECT attrs FROM spans WHERE span_id = 'eee19b7ec3c1b174'",
	           "{\"http.method\":\"GET\",\"http.status_code\":200,\"retry\":false,\"ratio\":0.25,"
	           "\"blob\":\"aGVsbG8=\",\"tags\":[\"a\",7,[]],"
	           "\"ctx\":{\"tenant\":\"t-9\",\"deep\":{\"x\":\"NaN\"}},\"empty\":null,"
	           "\"quote\\\"d\":\"line\\nbreak \xc3\xa9\"}");
	assert_row(fx, "SELECT events FROM spans WHERE span_id = 'eee19b7ec3c1b174'",
	           "[{\"name\":\"cache.miss\",\"time_ns\":1544712660100000000,"
	           "\"attrs\":{\"key\":\"home\"}}]");
	assert_row(fx, "SELECT links FROM spans WHERE span_id = 'eee19b7ec3c1b174'",
	           "[{\"trace_id\":\"5b8efff798038103d269b633813fc60d\","
	           "\"span_id\":\"eee19b7ec3c1b175\",\"attrs\":{\"link.kind\":\"follows\"},"
	           "\"trace_state\":\"k=v\"}]");
	/* every stored JSON text is valid JSON */
	assert_int_equal(q_int(fx, "SELECT count(*) FROM spans WHERE json_valid(attrs)"
	                           " AND (events IS NULL OR json_valid(events))"
	                           " AND (links IS NULL OR json_valid(links))"),
	                 3);

	/* client span: kind by name, times as numbers, its own class, queue
	 * summed over the span attribute (1.5 ms) and two queue.wait events
	 * (250000 ns + 0.5 ms) */
	assert_row(fx, "SELECT " SPAN_COLS " FROM spans WHERE span_id = 'eee19b7ec3c1b175'",
	           "5b8efff798038103d269b633813fc60c|eee19b7ec3c1b175|eee19b7ec3c1b174|frontend|fe-1|"
	           "pricing.Quote|3|1544712660010000000|1544712660081000000|2|upstream timeout|"
	           "enterprise|2250000|NULL|0|0");
	assert_row(fx, "SELECT attrs, events FROM spans WHERE span_id = 'eee19b7ec3c1b175'",
	           "{\"workload.class\":\"enterprise\",\"queue.wait_ms\":1.5}|"
	           "[{\"name\":\"queue.wait\",\"time_ns\":1544712660010000000,"
	           "\"attrs\":{\"duration_ns\":250000}},"
	           "{\"name\":\"queue.wait\",\"time_ns\":1544712660010000001,"
	           "\"attrs\":{\"duration_ms\":0.5}}]");

	/* all-zero parent = root; empty name kept; queue.wait_ns wins over
	 * queue.wait_ms on the same span; zero-length span allowed */
	assert_row(fx, "SELECT " SPAN_COLS ", events, links FROM spans WHERE span_id = '0000000000000003'",
	           "5b8efff798038103d269b633813fc60c|0000000000000003||frontend|fe-1||1|"
	           "1544712660020000000|1544712660020000000|0|NULL|standard|1000|NULL|0|0|NULL|NULL");

	/* resource and scope interned once, linked from every span */
	assert_row(fx, "SELECT service, host, attrs FROM resources",
	           "frontend|fe-1|{\"service.name\":\"frontend\",\"host.name\":\"fe-1\","
	           "\"workload.class\":\"standard\",\"cloud.zone\":\"eu-1a\"}");
	assert_row(fx, "SELECT name, version, attrs FROM scopes",
	           "io.opentelemetry.http|1.2.3|{\"lib.kind\":\"http\"}");
	assert_int_equal(q_int(fx, "SELECT count(*) FROM spans s JOIN resources r ON r.id = s.resource_id"
	                           " JOIN scopes c ON c.id = s.scope_id"),
	                 3);
	assert_row(fx, "SELECT format, spans_added, spans_duplicate, outcome FROM sources",
	           "otlp-json|3|0|imported");
}

static void test_json_lines(void **state)
{
	Fx *fx = *state;
	ImportResult res;
	import_ok(fx, "fixtures/otlp/lines.jsonl", &res);
	/* line 3 repeats a span of line 1: counted as a duplicate */
	assert_int_equal(res.counts.spans_added, 4);
	assert_int_equal(res.counts.spans_duplicate, 1);
	assert_row(fx, "SELECT " SPAN_COLS " FROM spans WHERE span_id = '00000000000000a1'",
	           "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1|00000000000000a1||pricing|pricing-7d9f|Quote|2|"
	           "1700000000000000000|1700000000020000000|0|NULL|premium|NULL|NULL|0|0");
	/* host from k8s.pod.name when host.name is missing; no class anywhere */
	assert_row(fx, "SELECT " SPAN_COLS " FROM spans WHERE span_id = '00000000000000a2'",
	           "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1|00000000000000a2|00000000000000a1|pricing|"
	           "pricing-7d9f|db.query|3|1700000000001000000|1700000000019000000|0|NULL|NULL|"
	           "3000000|NULL|0|0");
	/* host.name wins over k8s.pod.name; an integer class is kept as text;
	 * the uppercase trace id of the file is stored lowercase */
	assert_row(fx, "SELECT trace_id, service, host, wclass, scope_id FROM spans"
	               " WHERE span_id = '00000000000000b1'",
	           "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2|catalog|cat-2|3|NULL");
	/* a resourceSpans without resource: no service, no host */
	assert_row(fx, "SELECT service, host, resource_id, parent_id, kind FROM spans"
	               " WHERE span_id = '00000000000000b2'",
	           "||NULL|00000000000000b9|0");
	assert_int_equal(q_int(fx, "SELECT count(*) FROM resources"), 3);
	assert_int_equal(q_int(fx, "SELECT count(*) FROM scopes"), 1);
}

static void test_resource_after_spans(void **state)
{
	Fx *fx = *state;
	ImportResult res;
	import_ok(fx, "fixtures/otlp/late_resource.json", &res);
	assert_int_equal(res.counts.spans_added, 2);
	/* the span's own class wins; the other one takes the resource's */
	assert_row(fx, "SELECT s.service, s.host, s.wclass, s.name, r.service, c.name, c.version"
	               " FROM spans s JOIN resources r ON r.id = s.resource_id"
	               " JOIN scopes c ON c.id = s.scope_id WHERE s.span_id = '00000000000000c1'",
	           "checkout|co-1|premium|first|checkout|late-lib|0.9");
	assert_row(fx, "SELECT s.service, s.host, s.wclass, s.kind, s.parent_id, c.name"
	               " FROM spans s JOIN scopes c ON c.id = s.scope_id"
	               " WHERE s.span_id = '00000000000000c2'",
	           "checkout|co-1|enterprise|3|00000000000000c1|late-lib");
}

/* Later resources must not leak onto earlier resourceSpans (and a late
 * resource patches only its own spans). */
static void test_late_resource_scoped(void **state)
{
	Fx *fx = *state;
	static const char doc[] =
	    "{\"resourceSpans\":["
	    "{\"scopeSpans\":[{\"spans\":[{\"traceId\":\"d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1\","
	    "\"spanId\":\"00000000000000d1\",\"startTimeUnixNano\":1,\"endTimeUnixNano\":2}]}]},"
	    "{\"scopeSpans\":[{\"spans\":[{\"traceId\":\"d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1\","
	    "\"spanId\":\"00000000000000d2\",\"startTimeUnixNano\":1,\"endTimeUnixNano\":2}],"
	    "\"scope\":{\"name\":\"s2\"}},"
	    "{\"spans\":[{\"traceId\":\"d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1\","
	    "\"spanId\":\"00000000000000d3\",\"startTimeUnixNano\":1,\"endTimeUnixNano\":2}]}],"
	    "\"resource\":{\"attributes\":[{\"key\":\"service.name\",\"value\":{\"stringValue\":\"b\"}}]}}"
	    "]}";
	ImportResult res;
	import_ok(fx, write_file(fx, "scoped.json", doc, sizeof doc - 1), &res);
	assert_int_equal(res.counts.spans_added, 3);
	assert_row(fx, "SELECT group_concat(span_id || ':' || service || ':' || coalesce(scope_id, '-'), ' ')"
	               " FROM (SELECT * FROM spans ORDER BY span_id)",
	           "00000000000000d1::- 00000000000000d2:b:1 00000000000000d3:b:-");
}

static void test_ints_strings_and_numbers(void **state)
{
	Fx *fx = *state;
	/* the same values written as JSON numbers and as strings */
	static const char doc[] =
	    "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":["
	    "{\"traceId\":\"e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1\",\"spanId\":\"00000000000000e1\","
	    "\"startTimeUnixNano\":9223372036854775806,\"endTimeUnixNano\":9223372036854775807,"
	    "\"flags\":257,\"droppedAttributesCount\":2,"
	    "\"attributes\":[{\"key\":\"n\",\"value\":{\"intValue\":-9223372036854775808}},"
	    "{\"key\":\"d\",\"value\":{\"doubleValue\":1e300}}]},"
	    "{\"traceId\":\"e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1\",\"spanId\":\"00000000000000e2\","
	    "\"startTimeUnixNano\":\"9223372036854775806\",\"endTimeUnixNano\":\"9223372036854775807\","
	    "\"flags\":\"257\",\"droppedAttributesCount\":\"2\","
	    "\"attributes\":[{\"key\":\"n\",\"value\":{\"intValue\":\"-9223372036854775808\"}},"
	    "{\"key\":\"d\",\"value\":{\"doubleValue\":\"1e300\"}}]}"
	    "]}]}]}";
	ImportResult res;
	import_ok(fx, write_file(fx, "ints.json", doc, sizeof doc - 1), &res);
	assert_int_equal(res.counts.spans_added, 2);
	const char *want = "9223372036854775806|9223372036854775807|257|2|"
	                   "{\"n\":-9223372036854775808,\"d\":1e300}";
	assert_row(fx, "SELECT start_ns, end_ns, flags, dropped, attrs FROM spans"
	               " WHERE span_id = '00000000000000e1'", want);
	assert_row(fx, "SELECT start_ns, end_ns, flags, dropped, attrs FROM spans"
	               " WHERE span_id = '00000000000000e2'", want);
}

static void test_kind_and_status_names(void **state)
{
	Fx *fx = *state;
	static const char *const kinds[] = {
		"\"SPAN_KIND_UNSPECIFIED\"", "\"SPAN_KIND_INTERNAL\"", "\"SPAN_KIND_SERVER\"",
		"\"SPAN_KIND_CLIENT\"",      "\"SPAN_KIND_PRODUCER\"", "\"SPAN_KIND_CONSUMER\"",
	};
	static const char *const codes[] = {"\"STATUS_CODE_UNSET\"", "\"STATUS_CODE_OK\"",
	                                    "\"STATUS_CODE_ERROR\"", "1", "2", "0"};
	char doc[8192];
	size_t n = (size_t)snprintf(doc, sizeof doc, "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[");
	for (int i = 0; i < 6; i++)
		n += (size_t)snprintf(doc + n, sizeof doc - n,
		                      "%s{\"traceId\":\"f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1\","
		                      "\"spanId\":\"00000000000000f%d\",\"kind\":%s,"
		                      "\"status\":{\"code\":%s},"
		                      "\"startTimeUnixNano\":1,\"endTimeUnixNano\":2}",
		                      i ? "," : "", i, kinds[i], codes[i]);
	n += (size_t)snprintf(doc + n, sizeof doc - n, "]}]}]}");
	ImportResult res;
	import_ok(fx, write_file(fx, "kinds.json", doc, n), &res);
	assert_row(fx, "SELECT group_concat(kind || '/' || status_code, ' ')"
	               " FROM (SELECT * FROM spans ORDER BY span_id)",
	           "0/0 1/1 2/2 3/1 4/2 5/0");
}

static void test_class_key_option(void **state)
{
	Fx *fx = *state;
	static const char doc[] =
	    "{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"tier\",\"value\":"
	    "{\"stringValue\":\"gold\"}}]},\"scopeSpans\":[{\"spans\":["
	    "{\"traceId\":\"a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2\",\"spanId\":\"00000000000000a1\","
	    "\"startTimeUnixNano\":1,\"endTimeUnixNano\":2,\"attributes\":[{\"key\":"
	    "\"workload.class\",\"value\":{\"stringValue\":\"ignored\"}}]}]}]}]}";
	ImportOptions o = {0};
	o.class_key = "tier";
	ImportResult res;
	Err err = {0};
	assert_int_equal(import_file(fx->st, write_file(fx, "tier.json", doc, sizeof doc - 1), &o,
	                             &res, &err),
	                 0);
	assert_row(fx, "SELECT wclass FROM spans", "gold");
}

/* The names a span's attributes give its call's other end (peer.service,
 * else server.address, else net.peer.name, an address with its port;
 * db.system.name, else db.system) are taken while the
 * attributes are read (attr_peer, attr_db_system) and are what the readers
 * took from the stored attributes before; a value that is not a plain
 * string, or a key given twice, is left NULL for the readers to take from
 * the attributes themselves. */
static void test_named_attributes(void **state)
{
	Fx *fx = *state;
#define SPAN(id, kind, attrs)                                                              \
	"{\"traceId\":\"b3b3b3b3b3b3b3b3b3b3b3b3b3b3b3b3\",\"spanId\":\"00000000000000" id "\","  \
	"\"kind\":" kind ",\"startTimeUnixNano\":1,\"endTimeUnixNano\":2,\"attributes\":[" attrs "]}"
#define STR(k, v) "{\"key\":\"" k "\",\"value\":{\"stringValue\":\"" v "\"}}"
#define INT(k, v) "{\"key\":\"" k "\",\"value\":{\"intValue\":\"" v "\"}}"
	static const char doc[] =
	    "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":["
	    SPAN("a1", "3", STR("peer.service", "pricing") "," STR("server.address", "10.0.0.1")) ","
	    SPAN("a2", "3", STR("server.address", "api.example.com")) ","
	    SPAN("a3", "3", STR("db.system", "postgresql")) ","
	    SPAN("a4", "3", STR("db.system", "mysql") "," STR("db.system.name", "postgresql")) ","
	    SPAN("a5", "3", "{\"key\":\"peer.service\",\"value\":{\"intValue\":\"7\"}}") ","
	    SPAN("a6", "3", STR("peer.service", "a") "," STR("peer.service", "b")) ","
	    SPAN("a7", "3", STR("http.method", "GET")) ","
	    SPAN("a8", "2", STR("peer.service", "caller")) ","
	    SPAN("a9", "3", STR("peer.service", "")) ","
	    SPAN("b1", "3", STR("server.address", "127.0.0.1") "," INT("server.port", "7101")) ","
	    SPAN("b2", "3", STR("net.peer.name", "127.0.0.1") "," INT("net.peer.port", "7102")) ","
	    SPAN("b3", "3", STR("peer.service", "quote") "," INT("server.port", "7103")) ","
	    SPAN("b4", "3", STR("server.address", "::1") "," INT("server.port", "7104")) ","
	    SPAN("b5", "3", STR("server.address", "pg") "," INT("net.peer.port", "5432")) ","
	    SPAN("b6", "3", INT("server.address", "7") "," INT("server.port", "80")) ","
	    SPAN("b7", "3", STR("url.full", "http://pricing:8080/price?q=1")) ","
	    SPAN("b8", "3", STR("http.url", "https://u@api.example.com/v1#x")) ","
	    SPAN("b9", "3", STR("http.url", "/relative") "," STR("server.address", "q")) "]}]}]}";
#undef SPAN
#undef STR
#undef INT
	ImportResult res;
	import_ok(fx, write_file(fx, "named.json", doc, sizeof doc - 1), &res);
	assert_row(fx, "SELECT attr_peer, attr_db_system FROM spans WHERE span_id LIKE '%a1'",
	           "pricing|");
	assert_row(fx, "SELECT attr_peer FROM spans WHERE span_id LIKE '%a2'", "api.example.com");
	assert_row(fx, "SELECT attr_peer, attr_db_system FROM spans WHERE span_id LIKE '%a3'",
	           "|postgresql");
	assert_row(fx, "SELECT attr_db_system FROM spans WHERE span_id LIKE '%a4'", "postgresql");
	assert_row(fx, "SELECT attr_peer FROM spans WHERE span_id LIKE '%a5'", "NULL");
	assert_row(fx, "SELECT attr_peer FROM spans WHERE span_id LIKE '%a6'", "NULL");
	assert_row(fx, "SELECT attr_peer, attr_db_system FROM spans WHERE span_id LIKE '%a7'", "|");
	/* services of one host differ by port: an address has it (not a
	 * logical peer.service, not another key's; an IPv6 address in
	 * brackets); with
	 * no peer attribute, the authority of the URL called (the older Python
	 * requests instrumentation names none) */
	static const char *const peers[][2] = {
	    {"a9", ""}, {"b1", "127.0.0.1:7101"}, {"b2", "127.0.0.1:7102"}, {"b3", "quote"},
	    {"b4", "[::1]:7104"}, {"b5", "pg"}, {"b7", "pricing:8080"}, {"b8", "api.example.com"},
	    {"b9", "q"},
	};
	for (size_t i = 0; i < sizeof peers / sizeof peers[0]; i++) {
		char sql[128];
		snprintf(sql, sizeof sql, "SELECT attr_peer FROM spans WHERE span_id LIKE '%%%s'",
		         peers[i][0]);
		assert_row(fx, sql, peers[i][1]);
	}
	/* every value taken is the one the stored attributes give */
	assert_int_equal(q_int(fx, "SELECT count(*) FROM spans WHERE attr_peer IS NOT NULL AND"
	                           " attr_peer <> coalesce(json_extract(attrs, '$.\"peer.service\"'),"
	                           " json_extract(attrs, '$.\"server.address\"'),"
	                           " json_extract(attrs, '$.\"net.peer.name\"'), '')"
	                           " AND span_id NOT LIKE '%b1' AND span_id NOT LIKE '%b2'"
	                           " AND span_id NOT LIKE '%b4' AND span_id NOT LIKE '%b7'"
	                           " AND span_id NOT LIKE '%b8'"),
	                 0);
	assert_int_equal(q_int(fx, "SELECT count(*) FROM spans WHERE attr_db_system IS NOT NULL AND"
	                           " attr_db_system <> coalesce(json_extract(attrs,"
	                           " '$.\"db.system.name\"'), json_extract(attrs, '$.\"db.system\"'), '')"),
	                 0);
	/* and the readers give the same names as from the attributes: the int
	 * value through the attributes, a server span none */
	Store *st = NULL;
	Err err = {0};
	assert_int_equal(store_open(fx->db, STORE_READONLY, &st, &err), 0);
	NamedSeen seen = {0};
	assert_int_equal(store_spans_scan(st, INT64_MIN, INT64_MAX, 0, on_named, &seen, &err), 0);
	store_close(st);
	assert_int_equal(seen.n, 18);
	assert_string_equal(seen.peer[0], "pricing");
	assert_string_equal(seen.peer[1], "api.example.com");
	assert_string_equal(seen.db[2], "postgresql");
	assert_string_equal(seen.db[3], "postgresql");
	assert_string_equal(seen.peer[4], "7");
	assert_string_equal(seen.peer[7], "");
	assert_string_equal(seen.peer[8], "");
	assert_string_equal(seen.peer[9], "127.0.0.1:7101");
	assert_string_equal(seen.peer[10], "127.0.0.1:7102");
	/* not a plain string: the readers take it, with the port, as the
	 * importer would */
	assert_string_equal(seen.peer[14], "7:80");
	/* rows stored before the importers filled attr_peer: the readers take
	 * the same names from the attributes (all but the URLs' authorities,
	 * b7 and b8, which only the importers parse) */
	sqlite3 *rw = NULL;
	assert_int_equal(sqlite3_open_v2(fx->db, &rw, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(rw, "UPDATE spans SET attr_peer = NULL", NULL, NULL, NULL),
	                 SQLITE_OK);
	sqlite3_close(rw);
	assert_int_equal(store_open(fx->db, STORE_READONLY, &st, &err), 0);
	NamedSeen old = {0};
	assert_int_equal(store_spans_scan(st, INT64_MIN, INT64_MAX, 0, on_named, &old, &err), 0);
	store_close(st);
	assert_int_equal(old.n, 18);
	for (int i = 0; i < 18; i++)
		if (i != 15 && i != 16 && strcmp(old.peer[i], seen.peer[i]) != 0)
			fail_msg("span %c%d: the readers give '%s' from the attributes, the importer '%s'",
			         i < 9 ? 'a' : 'b', i % 9 + 1, old.peer[i], seen.peer[i]);
	assert_string_equal(old.peer[12], "[::1]:7104");
}

static void test_reimport_is_idempotent(void **state)
{
	Fx *fx = *state;
	ImportResult res;
	import_ok(fx, "fixtures/otlp/single.json", &res);
	import_ok(fx, "fixtures/otlp/lines.jsonl", &res);
	Snap before = snapshot(fx);

	import_ok(fx, "fixtures/otlp/single.json", &res);
	assert_int_equal(res.counts.spans_added, 0);
	assert_int_equal(res.counts.spans_duplicate, 3);
	assert_true(res.already);
	import_ok(fx, "fixtures/otlp/lines.jsonl", &res);
	assert_int_equal(res.counts.spans_added, 0);
	assert_int_equal(res.counts.spans_duplicate, 5);

	/* spans, resources and scopes are untouched; only the two source rows
	 * recording the repeated imports are new */
	Snap after = snapshot(fx);
	assert_int_equal(after.rows[0], before.rows[0] + 2);
	for (int t = 1; t < 4; t++)
		assert_int_equal(after.rows[t], before.rows[t]);
	assert_row(fx, "SELECT group_concat(outcome || ':' || spans_added || ':' || spans_duplicate, ' ')"
	               " FROM sources",
	           "imported:3:0 imported:4:1 duplicate:0:3 duplicate:0:5");
	char *a = q_row(fx, "SELECT group_concat(trace_id || span_id || service || coalesce(attrs,''), ';')"
	                    " FROM (SELECT * FROM spans ORDER BY id)");
	import_ok(fx, "fixtures/otlp/single.json", &res);
	char *b = q_row(fx, "SELECT group_concat(trace_id || span_id || service || coalesce(attrs,''), ';')"
	                    " FROM (SELECT * FROM spans ORDER BY id)");
	assert_string_equal(a, b);
	free(a);
	free(b);
}

/* Many lines: crosses input chunks and the store thread's batches; an error
 * on the last line still points at the right line and undoes everything. */
static void test_large_stream(void **state)
{
	Fx *fx = *state;
	enum { LINES = 3000, PER_LINE = 5 };
	char path[256];
	snprintf(path, sizeof path, "%s/big.jsonl", fx->dir);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	int64_t sum = 0;
	for (int l = 0; l < LINES; l++) {
		fprintf(f, "{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\","
		           "\"value\":{\"stringValue\":\"svc%d\"}}]},\"scopeSpans\":[{\"spans\":[",
		        l % 7);
		for (int k = 0; k < PER_LINE; k++) {
			int64_t start = 1000000000LL * l + k;
			sum += start;
			fprintf(f, "%s{\"traceId\":\"%032x\",\"spanId\":\"%016x\",\"name\":\"op\","
			           "\"startTimeUnixNano\":\"%lld\",\"endTimeUnixNano\":\"%lld\","
			           "\"attributes\":[{\"key\":\"pad\",\"value\":{\"stringValue\":"
			           "\"%0200d\"}}]}",
			        k ? "," : "", l + 1, l * PER_LINE + k + 1, (long long)start,
			        (long long)start + 5, k);
		}
		fputs("]}]}]}\n", f);
	}
	fclose(f);

	ImportOptions o = {0};
	ImportResult res;
	Err err = {0};
	assert_int_equal(import_file(fx->st, path, &o, &res, &err), 0);
	assert_int_equal(res.counts.spans_added, LINES * PER_LINE);
	assert_int_equal(q_int(fx, "SELECT count(*) FROM spans"), LINES * PER_LINE);
	assert_true(q_int(fx, "SELECT sum(start_ns) FROM spans") == sum);
	assert_int_equal(q_int(fx, "SELECT count(DISTINCT resource_id) FROM spans"), 7);
	assert_int_equal(q_int(fx, "SELECT count(*) FROM spans s JOIN resources r ON r.id = s.resource_id"
	                           " WHERE r.service = s.service"),
	                 LINES * PER_LINE);

	/* same file plus one bad last line: nothing at all may stay */
	Snap before = snapshot(fx);
	f = fopen(path, "ab");
	fputs("{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[{\"traceId\":\"xyz\"}]}]}]}\n", f);
	fclose(f);
	assert_int_not_equal(import_file(fx->st, path, &o, &res, &err), 0);
	char want[320];
	snprintf(want, sizeof want, "%s:%d:55: ", path, LINES + 1);
	if (strncmp(err.msg, want, strlen(want)) != 0)
		fail_msg("got '%s', want prefix '%s'", err.msg, want);
	assert_snap_equal(before, snapshot(fx));
}

/* The store thread fails deep inside a large file (a trigger refuses one
 * span): the import reports the store's message, stops without hanging,
 * and leaves nothing behind. */
static void test_store_failure(void **state)
{
	Fx *fx = *state;
	ImportResult res;
	import_ok(fx, "fixtures/otlp/single.json", &res);
	sqlite3 *rw = NULL;
	assert_int_equal(sqlite3_open_v2(fx->db, &rw, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(rw, "CREATE TRIGGER refuse BEFORE INSERT ON spans"
	                                  " WHEN NEW.name = 'boom' BEGIN"
	                                  " SELECT RAISE(ABORT, 'test refuses this span'); END",
	                              NULL, NULL, NULL),
	                 SQLITE_OK);
	char path[256];
	snprintf(path, sizeof path, "%s/boom.jsonl", fx->dir);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	for (int l = 0; l < 4000; l++) {
		fputs("{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[", f);
		for (int k = 0; k < 5; k++)
			fprintf(f, "%s{\"traceId\":\"%032x\",\"spanId\":\"%016x\",\"name\":\"%s\","
			           "\"startTimeUnixNano\":1,\"endTimeUnixNano\":2}",
			        k ? "," : "", l + 1, k + 1, l == 1000 && k == 2 ? "boom" : "fine");
		fputs("]}]}]}\n", f);
	}
	fclose(f);
	Snap before = snapshot(fx);
	Err err = {0};
	ImportOptions o = {0};
	assert_int_not_equal(import_file(fx->st, path, &o, &res, &err), 0);
	if (strstr(err.msg, "test refuses this span") == NULL || strstr(err.msg, "byte ") == NULL)
		fail_msg("unexpected message: %s", err.msg);
	assert_snap_equal(before, snapshot(fx));
	assert_int_equal(sqlite3_exec(rw, "DROP TRIGGER refuse", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(rw);
	/* the store is usable afterwards */
	import_ok(fx, path, &res);
	assert_int_equal(res.counts.spans_added, 20000);
}

/* A string longer than two input chunks survives intact. */
static void test_long_token(void **state)
{
	Fx *fx = *state;
	size_t big = 300 * 1024;
	char *doc = malloc(big + 1024);
	size_t n = (size_t)sprintf(doc, "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[{"
	                                "\"traceId\":\"abababababababababababababababab\","
	                                "\"spanId\":\"abababababababab\",\"startTimeUnixNano\":1,"
	                                "\"endTimeUnixNano\":2,\"name\":\"");
	memset(doc + n, 'x', big);
	n += big;
	n += (size_t)sprintf(doc + n, "\"}]}]}]}");
	ImportResult res;
	import_ok(fx, write_file(fx, "long.json", doc, n), &res);
	assert_int_equal(q_int(fx, "SELECT length(name) FROM spans"), (int64_t)big);
	free(doc);
}

/* JSON Lines whose lines grow past the fast parser's first room (64 KiB)
 * and shrink again: every line's spans land whole, whichever size came
 * before it. */
static void test_growing_lines(void **state)
{
	Fx *fx = *state;
	static const size_t names[] = {10, 200 * 1024, 20, 90 * 1024, 700 * 1024, 5};
	enum { N = sizeof names / sizeof names[0] };
	Buf doc;
	buf_init(&doc);
	for (int i = 0; i < N; i++) {
		buf_printf(&doc, "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[{"
		                 "\"traceId\":\"%032x\",\"spanId\":\"%016x\","
		                 "\"startTimeUnixNano\":1,\"endTimeUnixNano\":2,\"name\":\"",
		           i + 1, i + 1);
		for (size_t k = 0; k < names[i]; k++)
			buf_addc(&doc, (char)('a' + i));
		buf_adds(&doc, "\"}]}]}]}\n");
	}
	ImportResult res;
	import_ok(fx, write_file(fx, "growing.jsonl", doc.p, doc.len), &res);
	assert_int_equal(res.counts.spans_added, N);
	for (int i = 0; i < N; i++) {
		char q[160];
		snprintf(q, sizeof q,
		         "SELECT length(name) FROM spans WHERE span_id = '%016x'"
		         " AND replace(name, '%c', '') = ''",
		         i + 1, 'a' + i);
		assert_int_equal(q_int(fx, q), (int64_t)names[i]);
	}
	buf_fini(&doc);
}

static void test_bom_and_crlf(void **state)
{
	Fx *fx = *state;
	static const char doc[] =
	    "\xEF\xBB\xBF{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[{\"traceId\":"
	    "\"abababababababababababababababab\",\"spanId\":\"abababababababab\","
	    "\"startTimeUnixNano\":1,\"endTimeUnixNano\":2}]}]}]}\r\n\r\n";
	ImportResult res;
	import_ok(fx, write_file(fx, "bom.json", doc, sizeof doc - 1), &res);
	assert_int_equal(res.counts.spans_added, 1);
}

/* OTLP ignores unknown fields and allows an empty request: a document
 * without resourceSpans stores nothing but is not an error. One with only
 * unknown fields (here a misspelling) is counted as unrecognised; an
 * empty one is not. A metrics request is read as one (a Collector file
 * mixes signals), unless the import reads traces only (the receiver's
 * /v1/traces): then it is unrecognised too. Both JSON Lines and one
 * document. */
static void test_unrecognised_request(void **state)
{
	Fx *fx = *state;
	ImportResult res;
	Err err = {0};
	assert_int_equal(import_path(fx, write_file(fx, "empty.json", "{}", 2), "otlp-json", &res, &err), 0);
	assert_int_equal(res.unrecognised, 0);
	static const char other[] = "{\"resource_spans\":[]}\n{\"resourceMetrics\":[]}\n";
	const char *path = write_file(fx, "other.json", other, sizeof other - 1);
	if (import_path(fx, path, "otlp-json", &res, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(res.counts.spans_added, 0);
	assert_int_equal(res.unrecognised, 1);
	ImportOptions traces_only = {.format = "otlp-json", .signals = IMPORT_SIGNAL_TRACES};
	assert_int_equal(import_file(fx->st, path, &traces_only, &res, &err), 0);
	assert_int_equal(res.unrecognised, 2);
	static const char mixed[] = "{\"resourceSpans\":[],\"extra\":{\"a\":[1]}}";
	import_ok(fx, write_file(fx, "mixed.json", mixed, sizeof mixed - 1), &res);
	assert_int_equal(res.unrecognised, 0); /* it has resourceSpans */
}

/* Requests of every signal in one file (what a Collector file export
 * holds; tests/sh/import_collector.sh has a real one): each read by its
 * own, wherever it is. A metrics request is found by the span reader
 * and read afterwards by the metrics importer, at its place in the file:
 * after a byte order mark, as the second value of a line, pretty-printed
 * over lines with its signal key not first; its errors are located in
 * the file. Log records are counted, their structure checked. */
#define MREQ(ts, v)                                                                       \
	"{\"resourceMetrics\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\","          \
	"\"value\":{\"stringValue\":\"api\"}}]},\"scopeMetrics\":[{\"metrics\":[{\"name\":"        \
	"\"q.depth\",\"gauge\":{\"dataPoints\":[{\"timeUnixNano\":\"" ts "\",\"asInt\":\"" v "\"}]}}]}]}]}"
#define SREQ(id)                                                                          \
	"{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[{\"traceId\":"                          \
	"\"5b8efff798038103d269b633813fc60c\",\"spanId\":\"" id "\",\"name\":\"GET /\",\"kind\":2,"  \
	"\"startTimeUnixNano\":\"1700000000000000000\",\"endTimeUnixNano\":\"1700000000005000000\"}]}]}]}"
#define LREQ(key)                                                                         \
	"{\"resourceLogs\":[{\"" key "\":[{\"logRecords\":[{\"body\":{\"stringValue\":\"a\"}},"     \
	"{\"timeUnixNano\":\"1\",\"attributes\":[{\"key\":\"k\",\"value\":{\"intValue\":\"1\"}}]},{}]}]}]}"

static void test_mixed_signals(void **state)
{
	Fx *fx = *state;
	ImportResult res;
	Err err = {0};
	static const char lines[] = "\xEF\xBB\xBF" MREQ("1700000000000000000", "4") "\n"
	                            SREQ("1000000000000001") " " MREQ("1700000001000000000", "5") "\n"
	                            LREQ("scopeLogs") "\n" LREQ("instrumentationLibraryLogs") "\n";
	import_ok(fx, write_file(fx, "lines.jsonl", lines, sizeof lines - 1), &res);
	assert_int_equal(res.counts.spans_added, 1);
	assert_int_equal(res.counts.metrics_added, 2);
	assert_int_equal(res.skips.log_records, 6);
	assert_int_equal(res.unrecognised, 0);
	char *v = q_row(fx, "SELECT group_concat(value) FROM (SELECT p.value FROM metric_points p"
	                    " JOIN metric_series s ON s.id = p.series_id JOIN resources r"
	                    " ON r.id = s.resource_id WHERE r.service = 'api' ORDER BY p.ts_ns)");
	assert_string_equal(v, "4.0,5.0");
	free(v);

	/* one document over lines, the signal key second, then a spans line */
	static const char pretty[] =
	    "{\n"
	    "  \"note\": 1,\n"
	    "  \"resourceMetrics\": [{\"scopeMetrics\": [{\"metrics\": [\n"
	    "    {\"name\": \"q.depth\", \"gauge\": {\"dataPoints\": [\n"
	    "      {\"timeUnixNano\": \"1700000002000000000\", \"asInt\": \"7\"}]}}]}]}]\n"
	    "}\n" SREQ("1000000000000002") "\n";
	import_ok(fx, write_file(fx, "pretty.json", pretty, sizeof pretty - 1), &res);
	assert_int_equal(res.counts.spans_added, 1);
	assert_int_equal(res.counts.metrics_added, 1);
	char bad[sizeof pretty];
	memcpy(bad, pretty, sizeof pretty);
	char *seven = strstr(bad, "\"7\"");
	seven[1] = 'x';
	assert_int_not_equal(import_path(fx, write_file(fx, "bad.json", bad, sizeof bad - 1), NULL,
	                                 &res, &err),
	                     0);
	assert_non_null(strstr(err.msg, "bad.json:5:56: asInt must be an integer"));

	/* log requests are checked as far as they are read */
	static const struct {
		const char *text, *want;
	} bad_logs[] = {
		{"{\"resourceLogs\":{}}", "l.json:1:17: \"resourceLogs\" must be an array, not an object"},
		{"{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[1]}]}]}",
		 "l.json:1:47: items of \"logRecords\" must be objects"},
	};
	for (size_t i = 0; i < sizeof bad_logs / sizeof bad_logs[0]; i++) {
		const char *t = bad_logs[i].text;
		assert_int_not_equal(import_path(fx, write_file(fx, "l.json", t, strlen(t)), NULL, &res,
		                                 &err),
		                     0);
		if (strstr(err.msg, bad_logs[i].want) == NULL)
			fail_msg("want '%s', got '%s'", bad_logs[i].want, err.msg);
	}

	/* reading traces only (the receiver's /v1/traces): a logs or metrics
	 * request is unrecognised, and nothing is counted as a log record */
	ImportOptions traces_only = {.format = "otlp-json", .signals = IMPORT_SIGNAL_TRACES};
	static const char other[] = LREQ("scopeLogs") "\n" MREQ("1700000003000000000", "1") "\n";
	assert_int_equal(import_file(fx->st, write_file(fx, "o.jsonl", other, sizeof other - 1),
	                             &traces_only, &res, &err),
	                 0);
	assert_int_equal(res.unrecognised, 2);
	assert_int_equal(res.skips.log_records, 0);
	assert_int_equal(res.counts.metrics_added, 0);
}

static int progress_calls;

static void count_progress(void *ctx, uint64_t done, uint64_t total)
{
	(void)ctx;
	assert_true(done <= total);
	progress_calls++;
}

static void test_progress_reported(void **state)
{
	Fx *fx = *state;
	/* 6 MB of one document: progress every few MB, and at the end */
	size_t pad = 6u << 20;
	char *doc = malloc(pad + 512);
	size_t n = (size_t)sprintf(doc, "{\"resourceSpans\":[],\"padding\":\"");
	memset(doc + n, ' ', pad);
	n += pad;
	n += (size_t)sprintf(doc + n, "\"}");
	const char *path = write_file(fx, "pad.json", doc, n);
	free(doc);
	ImportOptions o = {0};
	o.progress = count_progress;
	ImportResult res;
	Err err = {0};
	progress_calls = 0;
	assert_int_equal(import_file(fx->st, path, &o, &res, &err), 0);
	assert_true(progress_calls >= 2);
}

static void test_sniff(void **state)
{
	(void)state;
	static const char a[] = "  \n{\"resourceSpans\":[]}";
	static const char b[] = "{\"resourceMetric\":[]}";
	static const char c[] = "[{\"traceID\":\"x\"}]";
	static const char d[] = "{\"resourceSp"; /* cut off: no key yet */
	assert_true(otlp_traces_sniff(a, sizeof a - 1) > 50);
	assert_int_equal(otlp_traces_sniff(b, sizeof b - 1), 0);
	assert_int_equal(otlp_traces_sniff(c, sizeof c - 1), 0);
	assert_int_equal(otlp_traces_sniff(d, sizeof d - 1), 0);
	assert_int_equal(otlp_traces_sniff("", 0), 0);
	assert_string_equal(import_sniff(a, sizeof a - 1), "otlp-json");
}

/* The fast escaper agrees with the plain one on random strings full of
 * characters that need escaping, at every alignment. */
static void test_json_escaping(void **state)
{
	(void)state;
	static const char pool[] = "ab\"\\\n\r\t\x01\x1f\x7f \xc3\xa9xyz0123456789";
	unsigned seed = 12345;
	Buf fast, ref;
	buf_init(&fast);
	buf_init(&ref);
	char s[64];
	for (int round = 0; round < 20000; round++) {
		size_t n = (size_t)(round % 40);
		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			s[i] = pool[(seed >> 16) % (sizeof pool - 1)];
		}
		buf_reset(&fast);
		buf_reset(&ref);
		otlp_json_str(&fast, s, n);
		buf_add_json_str(&ref, s, n);
		assert_string_equal(buf_str(&fast), buf_str(&ref));
	}
	buf_fini(&fast);
	buf_fini(&ref);
	char id[33];
	assert_int_equal(otlp_hex_id("ABCDEF0123456789", 16, 16, id), OTLP_ID_OK);
	assert_string_equal(id, "abcdef0123456789");
	assert_int_equal(otlp_hex_id("ABCDEF012345678G", 16, 16, id), OTLP_ID_NOT_HEX);
	assert_int_equal(otlp_hex_id("0000000000000000", 16, 16, id), OTLP_ID_ZERO);
	assert_int_equal(otlp_hex_id("abc", 3, 16, id), OTLP_ID_LENGTH);
	int64_t v;
	assert_int_equal(otlp_parse_int("-9223372036854775808", 20, &v), OTLP_NUM_OK);
	assert_true(v == INT64_MIN);
	assert_int_equal(otlp_parse_int("9223372036854775808", 19, &v), OTLP_NUM_RANGE);
	assert_int_equal(otlp_parse_int("12x", 3, &v), OTLP_NUM_SYNTAX);
	assert_int_equal(otlp_parse_int("-", 1, &v), OTLP_NUM_SYNTAX);
	assert_true(otlp_is_json_number("-0.5e+3", 7));
	assert_false(otlp_is_json_number("01", 2));
	assert_false(otlp_is_json_number("1.", 2));
	assert_false(otlp_is_json_number("inf", 3));
}

/* ---- malformed input ------------------------------------------------------ */

typedef struct Bad {
	const char *what;
	const char *text;    /* '@' marks where the error must be reported */
	size_t len;          /* 0: strlen(text) */
	const char *msg;     /* a part of the message */
} Bad;

#define BIN(s) s, sizeof(s) - 1
#define TID "\"5b8efff798038103d269b633813fc60c\""
#define SID "\"eee19b7ec3c1b174\""
#define PRE "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":["
#define POST "]}]}]}"
#define TIMES "\"startTimeUnixNano\":\"1\",\"endTimeUnixNano\":\"2\""
#define SPAN(fields) "{\"traceId\":" TID ",\"spanId\":" SID "," fields "}"
#define ATTR(v) PRE SPAN(TIMES ",\"attributes\":[{\"key\":\"k\",\"value\":" v "}]") POST
#define GOOD_LINE PRE SPAN(TIMES) POST "\n"

static const Bad bad_inputs[] = {
	{"truncated after a span", PRE SPAN(TIMES) "@", 0, "unexpected end of input"},
	{"truncated inside a string", PRE "{\"traceId\":\"5b8e@", 0, "unexpected end of input"},
	{"truncated after a key", "{\"resourceSpans\"@", 0, "unexpected end of input"},
	{"bad hex in traceId", PRE "{\"traceId\":@\"5b8efff798038103d269b633813fc6zz\",\"spanId\":" SID
	                       "," TIMES "}" POST, 0, "non-hex"},
	{"traceId of 31 digits", PRE "{\"traceId\":@\"5b8efff798038103d269b633813fc60\",\"spanId\":" SID
	                         "," TIMES "}" POST, 0, "32 hex digits, not 31"},
	{"spanId of 17 digits", PRE "{\"traceId\":" TID ",\"spanId\":@\"eee19b7ec3c1b1740\"," TIMES "}" POST,
	 0, "16 hex digits, not 17"},
	{"bad parentSpanId", PRE SPAN(TIMES ",\"parentSpanId\":@\"eee19b7ec3c1b17g\"") POST, 0, "parentSpanId"},
	{"all-zero traceId", PRE "{\"traceId\":@\"00000000000000000000000000000000\",\"spanId\":" SID
	                     "," TIMES "}" POST, 0, "all zeros"},
	{"traceId as a number", PRE "{\"traceId\":@12,\"spanId\":" SID "," TIMES "}" POST, 0,
	 "must be a string"},
	{"end before start", PRE SPAN("\"startTimeUnixNano\":\"2\",\"endTimeUnixNano\":@\"1\"") POST, 0,
	 "before \"startTimeUnixNano\""},
	{"span without traceId", PRE "@{\"spanId\":" SID "," TIMES "}" POST, 0, "no \"traceId\""},
	{"span without start", PRE "@{\"traceId\":" TID ",\"spanId\":" SID ",\"endTimeUnixNano\":\"2\"}" POST,
	 0, "no \"startTimeUnixNano\""},
	{"spans is an object", "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":@{}}]}]}", 0,
	 "\"spans\" must be an array"},
	{"start time is an object", PRE SPAN("\"startTimeUnixNano\":@{},\"endTimeUnixNano\":\"2\"") POST, 0,
	 "must be a scalar"},
	{"resource is an array", "{\"resourceSpans\":[{\"resource\":@[]}]}", 0, "must be an object"},
	{"name is a number", PRE SPAN(TIMES ",\"name\":@5") POST, 0, "\"name\" must be a string"},
	{"kind out of range", PRE SPAN(TIMES ",\"kind\":@6") POST, 0, "between 0 and 5"},
	{"unknown kind name", PRE SPAN(TIMES ",\"kind\":@\"SPAN_KIND_SERVERS\"") POST, 0,
	 "not a known span kind"},
	{"status code is a boolean", PRE SPAN(TIMES ",\"status\":{\"code\":@true}") POST, 0, "not a boolean"},
	{"attributes is an object", PRE SPAN(TIMES ",\"attributes\":@{\"k\":1}") POST, 0,
	 "\"attributes\" must be an array"},
	{"attribute value is a string", ATTR("@\"x\""), 0, "AnyValue object"},
	{"intValue not an integer", ATTR("{\"intValue\":@\"12a\"}"), 0, "must be an integer"},
	{"intValue overflows", ATTR("{\"intValue\":@\"9223372036854775808\"}"), 0, "64-bit range"},
	{"two value fields", ATTR("{\"stringValue\":\"a\",\"intValue\":@1}"), 0, "more than one value"},
	{"huge number as time", PRE SPAN("\"startTimeUnixNano\":@123456789012345678901234567890,"
	                                 "\"endTimeUnixNano\":\"2\"") POST, 0, "out of range"},
	{"negative time", PRE SPAN("\"startTimeUnixNano\":@\"-5\",\"endTimeUnixNano\":\"2\"") POST, 0,
	 "must not be negative"},
	{"fractional time", PRE SPAN("\"startTimeUnixNano\":@1.5e9,\"endTimeUnixNano\":\"2\"") POST, 0,
	 "must be an integer"},
	{"bad UTF-8 byte", PRE SPAN(TIMES ",\"name\":\"ab@\xff\"") POST, 0, "UTF8"},
	{"bad UTF-8 continuation", PRE SPAN(TIMES ",\"name\":\"ab\xc3@\x28\"") POST, 0, "UTF8"},
	{"NUL byte between tokens", BIN("{\"resourceSpans\":[@\0]}"), "invalid JSON"},
	{"NUL byte in a string", BIN(PRE "{\"traceId\":\"5b8e@\0\"}" POST), "invalid character inside string"},
	{"escaped NUL in a name", PRE SPAN(TIMES ",\"name\":@\"a\\u0000b\"") POST, 0, "NUL"},
	{"empty file", "@", 0, "no JSON value"},
	{"only white space", "  \n \n@", 0, "no JSON value"},
	{"plain text", "@hello, world\n", 0, "invalid JSON"},
	{"top-level array", "@[{\"resourceSpans\":[]}]", 0, "ExportTraceServiceRequest"},
	{"top-level string", "@\"resourceSpans\"", 0, "ExportTraceServiceRequest"},
	{"good line, then a bad line", GOOD_LINE "{\"resourceSpans\":[@42]}\n", 0,
	 "items of \"resourceSpans\" must be objects"},
	{"good line, then a truncated line", GOOD_LINE "{\"resourceSpans\":[{\"scopeSpans\":[@", 0,
	 "unexpected end of input"},
	{"good line, then a JSON syntax error", GOOD_LINE "{\"resourceSpans\":[]@]\n", 0, "invalid JSON"},
	{"duplicate field", PRE "{\"traceId\":" TID ",\"spanId\":" SID ",@\"spanId\":" SID "," TIMES "}" POST,
	 0, "duplicate field \"spanId\""},
	{"trailing comma", "{\"resourceSpans\":[{},@]}", 0, "invalid JSON"},
	{"link without spanId", PRE SPAN(TIMES ",\"links\":[@{\"traceId\":" TID "}]") POST, 0,
	 "link has no \"spanId\""},
	{"event time negative", PRE SPAN(TIMES ",\"events\":[{\"timeUnixNano\":@-1}]") POST, 0,
	 "must not be negative"},
	{"kvlist item not an object", ATTR("{\"kvlistValue\":{\"values\":[@1]}}"), 0, "KeyValue objects"},
	{"events is a string", PRE SPAN(TIMES ",\"events\":@\"none\"") POST, 0, "\"events\" must be an array"},
	{"status message is a number", PRE SPAN(TIMES ",\"status\":{\"message\":@404}") POST, 0,
	 "\"message\" must be a string"},
	{"dropped count too large", PRE SPAN(TIMES ",\"droppedEventsCount\":@4294967296") POST, 0,
	 "out of range"},
	{"bad escape in a string", PRE SPAN(TIMES ",\"name\":\"a\\@q\"") POST, 0, "invalid JSON"},
	{"doubleValue is junk", ATTR("{\"doubleValue\":@\"fast\"}"), 0, "must be a number"},
	{"boolValue is a string", ATTR("{\"boolValue\":@\"true\"}"), 0, "true or false"},
};

/* Expected "path:line:col: " for the marker at off in text. */
static void expect_prefix(const char *path, const char *text, size_t off, char *out, size_t n)
{
	long line = 1, col = 1;
	for (size_t i = 0; i < off; i++) {
		if (text[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	snprintf(out, n, "%s:%ld:%ld: ", path, line, col);
}

static void check_bad(Fx *fx, const Bad *b, const char *text, size_t len, const char *format)
{
	const char *at = memchr(text, '@', len);
	if (at == NULL)
		fail_msg("case '%s' has no marker", b->what);
	size_t off = (size_t)(at - text);
	char *data = malloc(len);
	memcpy(data, text, off);
	memcpy(data + off, at + 1, len - off - 1);
	const char *path = write_file(fx, "bad.json", data, len - 1);
	char want[512];
	expect_prefix(path, data, off, want, sizeof want);
	free(data);

	Snap before = snapshot(fx);
	ImportResult res;
	Err err = {0};
	int rc = import_path(fx, path, format, &res, &err);
	if (rc == 0)
		fail_msg("case '%s' was accepted", b->what);
	if (strncmp(err.msg, want, strlen(want)) != 0 || strstr(err.msg, b->msg) == NULL)
		fail_msg("case '%s': got '%s', want '%s...%s...'", b->what, err.msg, want, b->msg);
	assert_int_equal(res.counts.spans_added, 0);
	assert_snap_equal(before, snapshot(fx));
}

static void test_malformed(void **state)
{
	Fx *fx = *state;
	ImportResult res;
	import_ok(fx, "fixtures/otlp/single.json", &res);
	size_t n = sizeof bad_inputs / sizeof bad_inputs[0];
	assert_true(n >= 30);
	for (size_t i = 0; i < n; i++) {
		const Bad *b = &bad_inputs[i];
		check_bad(fx, b, b->text, b->len ? b->len : strlen(b->text), "otlp-json");
	}
}

/* Deep nesting, in an unknown field and inside an attribute value. */
static void test_deep_nesting(void **state)
{
	Fx *fx = *state;
	ImportResult res;
	import_ok(fx, "fixtures/otlp/single.json", &res);
	enum { DEPTH = 100000 };
	char *doc = malloc(3 * DEPTH + 4096);
	/* the request object is level 1, the b-th bracket of "junk" level b + 1:
	 * level 129 is refused */
	size_t n = (size_t)sprintf(doc, "{\"resourceSpans\":[],\"junk\":");
	for (int b = 1; b <= DEPTH; b++) {
		if (b == 128)
			doc[n++] = '@';
		doc[n++] = '[';
	}
	for (int b = 1; b <= DEPTH; b++)
		doc[n++] = ']';
	doc[n++] = '}';
	Bad b = {"deep junk", NULL, 0, "nested deeper than"};
	check_bad(fx, &b, doc, n, "otlp-json");

	/* arrayValue inside arrayValue ...: level i opens 3 frames of the
	 * attribute machine (AnyValue, arrayValue, values) on top of the list
	 * and the KeyValue; the values array of level 20 would be frame 65 */
	n = (size_t)sprintf(doc, PRE "{\"traceId\":" TID ",\"spanId\":" SID "," TIMES
	                             ",\"attributes\":[{\"key\":\"k\",\"value\":");
	for (int i = 0; i < 40; i++) {
		n += (size_t)sprintf(doc + n, "{\"arrayValue\":{\"values\":");
		if (i == 20)
			doc[n++] = '@';
		doc[n++] = '[';
	}
	for (int i = 0; i < 40; i++)
		n += (size_t)sprintf(doc + n, "]}}");
	n += (size_t)sprintf(doc + n, "}]}" POST);
	doc[n] = '\0';
	Bad c = {"deep attribute", NULL, 0, "nested too deeply"};
	check_bad(fx, &c, doc, n, "otlp-json");
	free(doc);
}

/* Without --format, junk is refused by detection, still located. */
static void test_malformed_detected(void **state)
{
	Fx *fx = *state;
	static const Bad cases[] = {
		{"plain text", "@hello", 0, "format"},
		{"empty file", "@", 0, "empty"},
		{"truncated request", "{\"resourceSpans\":[{@", 0, "unexpected end of input"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		check_bad(fx, &cases[i], cases[i].text, strlen(cases[i].text), NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_single_document, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resource_after_spans, setup, teardown),
		cmocka_unit_test_setup_teardown(test_late_resource_scoped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ints_strings_and_numbers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kind_and_status_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_named_attributes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_class_key_option, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reimport_is_idempotent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_large_stream, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_failure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_token, setup, teardown),
		cmocka_unit_test_setup_teardown(test_growing_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bom_and_crlf, setup, teardown),
		cmocka_unit_test_setup_teardown(test_progress_reported, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unrecognised_request, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mixed_signals, setup, teardown),
		cmocka_unit_test(test_sniff),
		cmocka_unit_test(test_json_escaping),
		cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deep_nesting, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed_detected, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
