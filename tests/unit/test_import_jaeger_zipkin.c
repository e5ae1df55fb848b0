/*
 * test_import_jaeger_zipkin.c - the Jaeger and Zipkin JSON importers:
 * exact rows from hand-written fixtures, Zipkin's shared client/server
 * span ids, malformed inputs (each a located error and an unchanged
 * database), re-import idempotence, format detection, positions past the
 * reader's 64 KiB chunks, and the same trace written as OTLP, Jaeger and
 * Zipkin giving the same rows, DAG and splits.
 *
 * Rows are read back with plain SQL on a second, read-only connection:
 * the store's read API does not expose every column (events, status
 * message, flags) and these tests check that nothing is lost.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "analysis.h"
#include "import.h"
#include "helpers.h"
#include "store.h"
#include "tracejson.h"

#define FX "fixtures/"
#define EQUIV FX "jaeger/equiv/"

typedef struct Db {
	char path[128];
	Store *st;
	sqlite3 *ro;
} Db;

static Db *db_new(void)
{
	Db *d = calloc(1, sizeof *d);
	tmp_db_path(d->path, sizeof d->path);
	Err err = {0};
	assert_int_equal(store_open(d->path, 0, &d->st, &err), 0);
	assert_int_equal(sqlite3_open_v2(d->path, &d->ro, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	return d;
}

static void db_free(Db *d)
{
	sqlite3_close(d->ro);
	store_close(d->st);
	rm_db(d->path);
	free(d);
}

static int imp_file(Db *d, const char *path, const char *format, ImportResult *res, Err *err)
{
	ImportOptions o = {.format = format};
	ImportResult r;
	err_clear(err);
	return import_file(d->st, path, &o, res ? res : &r, err);
}

static int imp_mem(Db *d, const char *name, const char *text, size_t len, const char *format,
                   Err *err)
{
	ImportOptions o = {.format = format};
	ImportResult r;
	err_clear(err);
	return import_memory(d->st, name, text, len, &o, &r, err);
}

/* First column of the first row of sql (with an optional text parameter)
 * as a new string; "<null>" for NULL, "<no row>" when there is none. */
static char *q1(Db *d, const char *sql, const char *arg)
{
	sqlite3_stmt *s = NULL;
	if (sqlite3_prepare_v2(d->ro, sql, -1, &s, NULL) != SQLITE_OK) {
		fail_msg("prepare: %s: %s", sql, sqlite3_errmsg(d->ro));
	}
	if (arg)
		sqlite3_bind_text(s, 1, arg, -1, SQLITE_TRANSIENT);
	char *out;
	int rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(s, 0);
		out = strdup(t ? (const char *)t : "<null>");
	} else {
		out = strdup("<no row>");
	}
	sqlite3_finalize(s);
	return out;
}

#define ASSERT_Q(d, sql, arg, expect)                     \
	do {                                                  \
		char *v_ = q1((d), (sql), (arg));                 \
		assert_string_equal(v_, (expect));                \
		free(v_);                                         \
	} while (0)

/* One line per span with the columns analysis reads. */
#define ROW_SQL                                                                          \
	"SELECT parent_id||'|'||service||'|'||host||'|'||name||'|'||kind||'|'||start_ns||'|'" \
	"||end_ns||'|'||status_code||'|'||ifnull(status_msg,'-')||'|'||ifnull(wclass,'-')"    \
	"||'|'||ifnull(queue_ns,'-') FROM spans WHERE span_id = ?"

/* Everything in the database, for "unchanged" checks. */
static char *fingerprint(Db *d)
{
	return q1(d,
	          "SELECT (SELECT count(*) FROM spans)||'/'||(SELECT count(*) FROM sources)||'/'"
	          "||(SELECT count(*) FROM resources)||'/'||(SELECT count(*) FROM scopes)||'/'"
	          "||(SELECT ifnull(group_concat(trace_id||span_id||parent_id||name||start_ns),'')"
	          "   FROM (SELECT * FROM spans ORDER BY id))",
	          NULL);
}

/* ---- Jaeger: exact rows ------------------------------------------------- */

static void test_jaeger_query_rows(void **state)
{
	(void)state;
	Db *d = db_new();
	ImportResult res;
	Err err;
	assert_int_equal(imp_file(d, FX "jaeger/query.json", NULL, &res, &err), 0);
	assert_string_equal(res.format, "jaeger-json");
	assert_int_equal(res.counts.spans_added, 6);
	assert_int_equal(res.counts.spans_duplicate, 0);

	/* 64-bit trace id in upper case: lower-cased and left-padded; short
	 * span ids padded; class from the process tag; host from "hostname". */
	ASSERT_Q(d, "SELECT trace_id FROM spans WHERE span_id = ?", "0000000000000a01",
	         "00000000000000001f2e3d4c5b6a7988");
	ASSERT_Q(d, ROW_SQL, "0000000000000a01",
	         "|checkout|co-host-1|POST /checkout|2|1700000001000000000|1700000001250000000|0|-|"
	         "enterprise|-");
	/* typed tags, warnings kept, logs as events with the "event" field as name */
	ASSERT_Q(d, "SELECT attrs FROM spans WHERE span_id = ?", "0000000000000a01",
	         "{\"http.status_code\":200,\"jaeger.warnings\":[\"clock skew adjusted\"],"
	         "\"payload\":\"AAEC\",\"ratio\":0.25,\"sampler.param\":true,\"span.kind\":\"server\"}");
	ASSERT_Q(d, "SELECT events FROM spans WHERE span_id = ?", "0000000000000a01",
	         "[{\"name\":\"cache.miss\",\"time_ns\":1700000001000100000,\"attrs\":{\"key\":\"cart:42\"}}]");
	ASSERT_Q(d, "SELECT flags FROM spans WHERE span_id = ?", "0000000000000a01", "1");

	/* fractional microseconds kept; span class beats process class; queue
	 * = tag 250000 ns + queue.wait log 0.75 ms */
	ASSERT_Q(d, ROW_SQL, "0000000000000a02",
	         "0000000000000a01|checkout|co-host-1|charge|3|1700000001010000500|1700000001110000500"
	         "|0|-|standard|1000000");

	/* uppercase span id; host.name beats hostname; otel status and scope */
	ASSERT_Q(d, ROW_SQL, "0000000000000a03",
	         "0000000000000a02|payments|pay-9|POST /charge|2|1700000001020000000|1700000001100000000"
	         "|2|card declined|-|-");
	ASSERT_Q(d, "SELECT s.name||' '||s.version FROM spans p JOIN scopes s ON s.id = p.scope_id "
	         "WHERE span_id = ?", "0000000000000a03", "io.payments 1.2.0");

	/* parentSpanID without references; no span.kind -> INTERNAL; error=true */
	ASSERT_Q(d, ROW_SQL, "0000000000000a04",
	         "0000000000000a03|payments|pay-9|ledger.write|1|1700000001030000000|1700000001070000000"
	         "|2|-|-|-");

	/* FOLLOWS_FROM as the only same-trace reference is the parent and stays
	 * a link; a reference into another trace is a link; inline process */
	ASSERT_Q(d, ROW_SQL, "0000000000000a05",
	         "0000000000000a01|mailer|mail-1|send receipt|4|1700000001300000000|1700000001305000000"
	         "|0|-|-|-");
	ASSERT_Q(d, "SELECT links FROM spans WHERE span_id = ?", "0000000000000a05",
	         "[{\"trace_id\":\"00000000000000001f2e3d4c5b6a7988\",\"span_id\":\"0000000000000a01\","
	         "\"attrs\":{\"ref_type\":\"follows_from\"}},{\"trace_id\":"
	         "\"00000000000000000000000000000099\",\"span_id\":\"00000000000000b9\",\"attrs\":"
	         "{\"ref_type\":\"child_of\"}}]");
	ASSERT_Q(d, "SELECT links FROM spans WHERE span_id = ?", "0000000000000a02", "<null>");

	/* second trace of the response: 128-bit id, zero duration, no tags */
	ASSERT_Q(d, ROW_SQL, "0000000000000b01",
	         "|search||GET /search|1|1700000005000000000|1700000005000000000|0|-|-|-");

	/* one resource per process, attributes = process tags + service.name */
	ASSERT_Q(d, "SELECT r.attrs FROM spans s JOIN resources r ON r.id = s.resource_id "
	         "WHERE span_id = ?", "0000000000000a02",
	         "{\"hostname\":\"co-host-1\",\"ip\":\"10.1.2.3\",\"service.name\":\"checkout\","
	         "\"workload.class\":\"enterprise\"}");
	ASSERT_Q(d, "SELECT count(DISTINCT resource_id) FROM spans", NULL, "4");
	db_free(d);
}

static void test_jaeger_other_shapes(void **state)
{
	(void)state;
	Db *d = db_new();
	ImportResult res;
	Err err;
	/* one trace at top level */
	assert_int_equal(imp_file(d, FX "jaeger/single.json", NULL, &res, &err), 0);
	assert_string_equal(res.format, "jaeger-json");
	assert_int_equal(res.counts.spans_added, 1);
	ASSERT_Q(d, "SELECT trace_id||' '||span_id||' '||service||' '||kind FROM spans", NULL,
	         "00000000000000000000000000abcdef 0000000000000001 solo 2");
	/* a bare list of traces */
	assert_int_equal(imp_file(d, FX "jaeger/list.json", NULL, &res, &err), 0);
	assert_string_equal(res.format, "jaeger-json");
	assert_int_equal(res.counts.spans_added, 2);
	ASSERT_Q(d, "SELECT group_concat(service||':'||name, ',') FROM "
	         "(SELECT * FROM spans WHERE service LIKE 's_' ORDER BY service)", NULL,
	         "s1:one,s2:two");
	/* an empty query response imports nothing, without error */
	const char *empty = "{\"data\":[],\"total\":0,\"limit\":0,\"offset\":0,\"errors\":null}";
	assert_int_equal(imp_mem(d, "empty.json", empty, strlen(empty), NULL, &err), 0);
	db_free(d);
}

/* ---- Zipkin: rows and shared spans ------------------------------------------ */

static void test_zipkin_rows_and_shared_spans(void **state)
{
	(void)state;
	Db *d = db_new();
	ImportResult res;
	Err err;
	assert_int_equal(imp_file(d, FX "zipkin/spans.json", NULL, &res, &err), 0);
	assert_string_equal(res.format, "zipkin-json");
	assert_int_equal(res.counts.spans_added, 8);

	/* The derivation is documented: SHA-256 prefix of
	 * "tailtriage/shared-server/<trace>/<id>" (values from Python's hashlib). */
	char id[17];
	tj_shared_server_id("463ac35c9f6413ad48485a3953bb6124", "b7ad6b7169203331", id);
	assert_string_equal(id, "68948cda8278d48e");
	tj_shared_server_id("463ac35c9f6413ad48485a3953bb6124", "e3e3e3e3e3e3e3e3", id);
	assert_string_equal(id, "3a6c56623a607154");

	/* root: host from "hostname", class tag, debug kept */
	ASSERT_Q(d, ROW_SQL, "a2fb4a1d1a96d312",
	         "|frontend|fe-1|get /api|2|1700000002000000000|1700000002030000000|0|-|standard|-");
	ASSERT_Q(d, "SELECT attrs FROM spans WHERE span_id = ?", "a2fb4a1d1a96d312",
	         "{\"hostname\":\"fe-1\",\"http.method\":\"GET\",\"workload.class\":\"standard\","
	         "\"zipkin.debug\":true}");
	/* the client half keeps the id; queue = tag 0.5 ms + annotation 1.25 ms */
	ASSERT_Q(d, ROW_SQL, "b7ad6b7169203331",
	         "a2fb4a1d1a96d312|frontend||get /backend|3|1700000002005000000|1700000002025000000|0|-|"
	         "-|1750000");
	ASSERT_Q(d, "SELECT attrs FROM spans WHERE span_id = ?", "b7ad6b7169203331",
	         "{\"network.peer.address\":\"192.168.99.101\",\"network.peer.port\":9000,"
	         "\"peer.service\":\"backend\",\"queue.wait_ns\":\"500000\"}");
	ASSERT_Q(d, "SELECT events FROM spans WHERE span_id = ?", "b7ad6b7169203331",
	         "[{\"name\":\"wire send\",\"time_ns\":1700000002005100000,\"attrs\":{}},"
	         "{\"name\":\"queue.wait\",\"time_ns\":1700000002005000000,\"attrs\":{\"duration_ms\":1.25}}]");
	/* the shared server half: derived id, parent = the client span,
	 * original id kept; an empty "error" tag still means error */
	ASSERT_Q(d, ROW_SQL, "68948cda8278d48e",
	         "b7ad6b7169203331|backend||get /backend|2|1700000002007000000|1700000002022000000|2|-|"
	         "-|-");
	ASSERT_Q(d, "SELECT attrs FROM spans WHERE span_id = ?", "68948cda8278d48e",
	         "{\"error\":\"\",\"tailtriage.shared_span_id\":\"b7ad6b7169203331\"}");
	/* the server's child moves under the derived id ... */
	ASSERT_Q(d, "SELECT parent_id FROM spans WHERE span_id = ?", "c1c1c1c1c1c1c1c1",
	         "68948cda8278d48e");
	/* ... a child running in the client's service stays with the client */
	ASSERT_Q(d, "SELECT parent_id FROM spans WHERE span_id = ?", "d2d2d2d2d2d2d2d2",
	         "b7ad6b7169203331");
	/* a SERVER span carrying its client's id without "shared" is split too */
	ASSERT_Q(d, "SELECT parent_id||' '||service||' '||kind FROM spans WHERE span_id = ?",
	         "3a6c56623a607154", "e3e3e3e3e3e3e3e3 cache 2");
	ASSERT_Q(d, "SELECT service||' '||kind FROM spans WHERE span_id = ?", "e3e3e3e3e3e3e3e3",
	         "frontend 3");
	/* 1-digit ids padded; fractional microseconds; no kind -> INTERNAL;
	 * otel status OK; Collector-style annotation unpacked; library scope */
	ASSERT_Q(d, "SELECT trace_id FROM spans WHERE span_id = ?", "0000000000000001",
	         "00000000000000000000000000000007");
	ASSERT_Q(d, ROW_SQL, "0000000000000001",
	         "|batch|||1|1700000003000000250|1700000003000000750|1|-|-|-");
	ASSERT_Q(d, "SELECT events FROM spans WHERE span_id = ?", "0000000000000001",
	         "[{\"name\":\"retry\",\"time_ns\":1700000003000000000,\"attrs\":{\"attempt\":2}}]");
	ASSERT_Q(d, "SELECT s.name FROM spans p JOIN scopes s ON s.id = p.scope_id WHERE span_id = ?",
	         "0000000000000001", "lib-x");
	/* resource per local endpoint, its address is not a host */
	ASSERT_Q(d, "SELECT r.attrs||' '||ifnull(r.host,'-') FROM spans s JOIN resources r ON r.id = s.resource_id "
	         "WHERE span_id = ?", "b7ad6b7169203331",
	         "{\"net.host.ip\":\"192.168.99.1\",\"net.host.port\":8080,\"service.name\":\"frontend\"} -");

	/* deterministic: the same file again adds nothing */
	assert_int_equal(imp_file(d, FX "zipkin/spans.json", NULL, &res, &err), 0);
	assert_int_equal(res.already, 1);
	assert_int_equal(res.counts.spans_added, 0);
	assert_int_equal(res.counts.spans_duplicate, 8);
	ASSERT_Q(d, "SELECT count(*) FROM spans", NULL, "8");
	db_free(d);
}

static void test_reimport_idempotent(void **state)
{
	(void)state;
	Db *d = db_new();
	ImportResult res;
	Err err;
	assert_int_equal(imp_file(d, FX "jaeger/query.json", NULL, &res, &err), 0);
	char *before = fingerprint(d);
	assert_int_equal(imp_file(d, FX "jaeger/query.json", NULL, &res, &err), 0);
	assert_int_equal(res.already, 1);
	assert_int_equal(res.counts.spans_added, 0);
	assert_int_equal(res.counts.spans_duplicate, 6);
	/* the same spans through a differently shaped file (bytes differ) */
	assert_int_equal(imp_file(d, EQUIV "trace.jaeger.json", NULL, &res, &err), 0);
	assert_int_equal(res.counts.spans_added, 10);
	assert_int_equal(imp_file(d, EQUIV "trace.jaeger.json", NULL, &res, &err), 0);
	assert_int_equal(res.counts.spans_added, 0);
	char *after = q1(d, "SELECT count(*) FROM spans", NULL);
	assert_string_equal(after, "16");
	free(before);
	free(after);
	db_free(d);
}

/* ---- detection ---------------------------------------------------------------- */

static const char *sniff_file(const char *path)
{
	static char head[4096];
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	size_t n = fread(head, 1, sizeof head, f);
	fclose(f);
	return import_sniff(head, n);
}

static void test_sniff(void **state)
{
	(void)state;
	assert_string_equal(sniff_file(FX "jaeger/query.json"), "jaeger-json");
	assert_string_equal(sniff_file(FX "jaeger/single.json"), "jaeger-json");
	assert_string_equal(sniff_file(FX "jaeger/list.json"), "jaeger-json");
	assert_string_equal(sniff_file(EQUIV "trace.jaeger.json"), "jaeger-json");
	assert_string_equal(sniff_file(FX "zipkin/spans.json"), "zipkin-json");
	assert_string_equal(sniff_file(EQUIV "trace.zipkin.json"), "zipkin-json");
	assert_string_equal(sniff_file(EQUIV "trace.otlp.json"), "otlp-json");
	/* neither: OTLP's camelCase traceId inside an object is not Zipkin, an
	 * array of numbers is nothing */
	const char *o = "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[{\"traceId\":\"01\",\"id\":1}]}]}]}";
	const char *s = import_sniff(o, strlen(o));
	assert_true(s == NULL || strcmp(s, "zipkin-json") != 0);
	assert_true(s == NULL || strcmp(s, "jaeger-json") != 0);
	assert_null(import_sniff("[1,2,3]", 7));
	/* a head that is not NUL-terminated is read within its length */
	char head[12];
	memcpy(head, "[{\"traceId\"", 11);
	head[11] = 'x';
	assert_null(import_sniff(head, 11));
}

/* ---- opaque ids ------------------------------------------------------------------ */

/* A Jaeger trace whose ids are not hex, as Jaeger's UI accepts in an
 * uploaded file: trace "order-7", spans "root", "G", "H", "I"; G and H
 * name their parent by reference, I by parentSpanID. */
static const char opaque_jaeger[] =
	"{\"data\":[{\"traceID\":\"order-7\",\"spans\":["
	"{\"traceID\":\"order-7\",\"spanID\":\"root\",\"operationName\":\"checkout\",\"references\":[],"
	"\"startTime\":1700000000000000,\"duration\":800,\"processID\":\"p1\"},"
	"{\"traceID\":\"order-7\",\"spanID\":\"G\",\"operationName\":\"cart\",\"references\":"
	"[{\"refType\":\"CHILD_OF\",\"traceID\":\"order-7\",\"spanID\":\"root\"}],"
	"\"startTime\":1700000000000020,\"duration\":280,\"processID\":\"p1\"},"
	"{\"traceID\":\"order-7\",\"spanID\":\"H\",\"operationName\":\"tax\",\"references\":"
	"[{\"refType\":\"CHILD_OF\",\"spanID\":\"root\"}],"
	"\"startTime\":1700000000000296,\"duration\":154,\"processID\":\"p1\"},"
	"{\"traceID\":\"order-7\",\"spanID\":\"I\",\"operationName\":\"ship\",\"parentSpanID\":\"root\","
	"\"startTime\":1700000000000447,\"duration\":353,\"processID\":\"p1\"}"
	"],\"processes\":{\"p1\":{\"serviceName\":\"shop\"}}}]}";

/* The same trace as Zipkin v2 spans. */
static const char opaque_zipkin[] =
	"[{\"traceId\":\"order-7\",\"id\":\"root\",\"name\":\"checkout\",\"timestamp\":1700000000000000,"
	"\"duration\":800,\"localEndpoint\":{\"serviceName\":\"shop\"}},"
	"{\"traceId\":\"order-7\",\"id\":\"G\",\"parentId\":\"root\",\"name\":\"cart\","
	"\"timestamp\":1700000000000020,\"duration\":280,\"localEndpoint\":{\"serviceName\":\"shop\"}},"
	"{\"traceId\":\"order-7\",\"id\":\"H\",\"parentId\":\"root\",\"name\":\"tax\","
	"\"timestamp\":1700000000000296,\"duration\":154,\"localEndpoint\":{\"serviceName\":\"shop\"}},"
	"{\"traceId\":\"order-7\",\"id\":\"I\",\"parentId\":\"root\",\"name\":\"ship\","
	"\"timestamp\":1700000000000447,\"duration\":353,\"localEndpoint\":{\"serviceName\":\"shop\"}}]";

/* Jaeger and Zipkin client spans naming their other end in several ways:
 * peer.service, server.address only, a database system (both keys), a
 * number, an escaped character, a quote, nothing. */
#define JSPAN(id, start, tags)                                                             \
	"{\"traceID\":\"c4c4\",\"spanID\":\"" id "\",\"operationName\":\"call\","           \
	"\"references\":[],\"startTime\":" start ",\"duration\":100,\"processID\":\"p1\","   \
	"\"tags\":[{\"key\":\"span.kind\",\"type\":\"string\",\"value\":\"client\"}" tags "]}"
#define JTAG(k, v) ",{\"key\":\"" k "\",\"type\":\"string\",\"value\":\"" v "\"}"
static const char named_jaeger[] =
	"{\"data\":[{\"traceID\":\"c4c4\",\"spans\":["
	JSPAN("a1", "1700000000000000", JTAG("peer.service", "pricing") JTAG("server.address", "10.0.0.1")) ","
	JSPAN("a2", "1700000000000001", JTAG("server.address", "api.example.com")) ","
	JSPAN("a3", "1700000000000002", JTAG("db.system", "mysql") JTAG("db.system.name", "postgresql")) ","
	JSPAN("a4", "1700000000000003", ",{\"key\":\"peer.service\",\"type\":\"int64\",\"value\":7}") ","
	JSPAN("a5", "1700000000000004", JTAG("peer.service", "caf\\u00e9")) ","
	JSPAN("a6", "1700000000000005", "") ","
	JSPAN("a7", "1700000000000006", JTAG("peer.service", "a\\\"b"))
	"],\"processes\":{\"p1\":{\"serviceName\":\"shop\"}}}]}";
#undef JSPAN
#undef JTAG
#define ZSPAN(id, ts, extra)                                                               \
	"{\"traceId\":\"d5d5\",\"id\":\"" id "\",\"name\":\"call\",\"kind\":\"CLIENT\","     \
	"\"timestamp\":" ts ",\"duration\":100,\"localEndpoint\":{\"serviceName\":\"shop\"}" extra "}"
static const char named_zipkin[] =
	"["
	ZSPAN("b1", "1700000000000000", ",\"remoteEndpoint\":{\"serviceName\":\"pricing\"}") ","
	ZSPAN("b2", "1700000000000001", ",\"tags\":{\"server.address\":\"api.example.com\"}") ","
	ZSPAN("b3", "1700000000000002", ",\"tags\":{\"db.system\":\"postgresql\"}") ","
	ZSPAN("b4", "1700000000000003", "") ","
	ZSPAN("b5", "1700000000000004", ",\"tags\":{\"http.url\":\"http://quote:9000/q?a=1\"}") ","
	ZSPAN("b6", "1700000000000005",
	      ",\"tags\":{\"net.peer.name\":\"inventory\",\"net.peer.port\":\"7000\"}") ","
	ZSPAN("b7", "1700000000000006",
	      ",\"tags\":{\"server.address\":\"fe80::1\",\"server.port\":\"7001\"}")
	"]";
#undef ZSPAN

/* Every taken name is the one the stored attributes give (the spans that
 * name a peer only by net.peer.name or a URL, or by an address with a
 * port, aside); what is not a plain
 * string is left to the readers (NULL). */
static void named_agree(Db *d)
{
	ASSERT_Q(d, "SELECT count(*) FROM spans WHERE attr_peer IS NOT NULL AND attr_peer <>"
	            " coalesce(json_extract(attrs, '$.\"peer.service\"'),"
	            " json_extract(attrs, '$.\"server.address\"'), '')"
	            " AND span_id NOT LIKE '%b5' AND span_id NOT LIKE '%b6'"
	            " AND span_id NOT LIKE '%b7'", NULL, "0");
	ASSERT_Q(d, "SELECT count(*) FROM spans WHERE attr_db_system IS NOT NULL AND attr_db_system <>"
	            " coalesce(json_extract(attrs, '$.\"db.system.name\"'),"
	            " json_extract(attrs, '$.\"db.system\"'), '')", NULL, "0");
}

static void test_named_attributes(void **state)
{
	(void)state;
	Db *d = db_new();
	Err err = {0};
	assert_int_equal(imp_mem(d, "named.json", named_jaeger, sizeof named_jaeger - 1, NULL, &err), 0);
	assert_int_equal(imp_mem(d, "named-z.json", named_zipkin, sizeof named_zipkin - 1, NULL, &err), 0);
#define NAMES "SELECT ifnull(attr_peer, '<null>')||'|'||ifnull(attr_db_system, '<null>') FROM spans WHERE span_id LIKE ?"
	ASSERT_Q(d, NAMES, "%a1", "pricing|");
	ASSERT_Q(d, NAMES, "%a2", "api.example.com|");
	ASSERT_Q(d, NAMES, "%a3", "|postgresql");
	ASSERT_Q(d, NAMES, "%a4", "<null>|");
	ASSERT_Q(d, NAMES, "%a5", "caf\xc3\xa9|"); /* decoded, stored as UTF-8 */
	ASSERT_Q(d, NAMES, "%a6", "|");
	ASSERT_Q(d, NAMES, "%a7", "<null>|"); /* stored escaped: the readers decode it */
	ASSERT_Q(d, NAMES, "%b1", "pricing|");
	ASSERT_Q(d, NAMES, "%b2", "api.example.com|");
	ASSERT_Q(d, NAMES, "%b3", "|postgresql");
	ASSERT_Q(d, NAMES, "%b4", "|");
	/* a peer by the older net.peer.name with its port, or by the URL */
	ASSERT_Q(d, NAMES, "%b5", "quote:9000|");
	ASSERT_Q(d, NAMES, "%b6", "inventory:7000|");
	ASSERT_Q(d, NAMES, "%b7", "[fe80::1]:7001|"); /* IPv6: bracketed */
#undef NAMES
	named_agree(d);
	/* the bundled fixtures too */
	assert_int_equal(imp_file(d, "fixtures/jaeger/query.json", NULL, NULL, &err), 0);
	assert_int_equal(imp_file(d, "fixtures/zipkin/spans.json", NULL, NULL, &err), 0);
	named_agree(d);
	ASSERT_Q(d, "SELECT count(*) FROM spans WHERE attr_peer IS NULL AND span_id NOT LIKE '%a4'"
	            " AND span_id NOT LIKE '%a7'", NULL, "0");
	db_free(d);
}

/* Routes (common/route.h) of Jaeger and Zipkin server spans: each way the
 * rule reads them, Zipkin's http.path, an escaped value (left to the
 * readers), a client span without a parent. */
#define JSPAN(id, start, kind, tags)                                                       \
	"{\"traceID\":\"e6e6\",\"spanID\":\"" id "\",\"operationName\":\"GET\","            \
	"\"references\":[],\"startTime\":" start ",\"duration\":100,\"processID\":\"p1\","   \
	"\"tags\":[{\"key\":\"span.kind\",\"type\":\"string\",\"value\":\"" kind "\"}" tags "]}"
#define JTAG(k, v) ",{\"key\":\"" k "\",\"type\":\"string\",\"value\":\"" v "\"}"
static const char route_jaeger[] =
	"{\"data\":[{\"traceID\":\"e6e6\",\"spans\":["
	JSPAN("c1", "1700000000000000", "server", JTAG("http.method", "GET") JTAG("http.route", "/u/:id")) ","
	JSPAN("c2", "1700000000000001", "server",
	      JTAG("http.request.method", "GET") JTAG("url.path", "/api/items/48213")) ","
	JSPAN("c3", "1700000000000002", "server", JTAG("http.method", "GET")
	      JTAG("http.target", "/api/cart/3f2a9c1e?x=1")) ","
	JSPAN("c4", "1700000000000003", "server", JTAG("rpc.system", "grpc")
	      JTAG("rpc.service", "pkg.Cart") JTAG("rpc.method", "Get")) ","
	JSPAN("c5", "1700000000000004", "server", JTAG("http.route", "/a\\\"b")) ","
	JSPAN("c6", "1700000000000005", "client", JTAG("http.method", "GET")
	      JTAG("url.full", "http://x/api/items/9")) ","
	JSPAN("c7", "1700000000000006", "server", "")
	"],\"processes\":{\"p1\":{\"serviceName\":\"shop\"}}}]}";
#undef JSPAN
#undef JTAG
#define ZSPAN(id, ts, extra)                                                               \
	"{\"traceId\":\"f7f7\",\"id\":\"" id "\",\"name\":\"get\",\"kind\":\"SERVER\","      \
	"\"timestamp\":" ts ",\"duration\":100,\"localEndpoint\":{\"serviceName\":\"shop\"}" extra "}"
static const char route_zipkin[] =
	"["
	ZSPAN("d1", "1700000000000000", ",\"tags\":{\"http.method\":\"GET\",\"http.path\":\"/api/items/17\"}") ","
	ZSPAN("d2", "1700000000000001", ",\"tags\":{\"http.method\":\"PUT\",\"http.url\":\"http://h/a/99?q\"}") ","
	ZSPAN("d3", "1700000000000002", "")
	"]";
#undef ZSPAN

typedef struct RouteRows {
	Buf b;
} RouteRows;

static int on_route_row(void *ctx, const StoreSpanRow *r)
{
	RouteRows *rr = ctx;
	buf_printf(&rr->b, "%s %s|%d\n", r->span_id, r->route, r->route_rule);
	return 0;
}

/* span id, route and rule of every span as a read gives them */
static void route_rows(const char *path, Buf *out)
{
	Store *st = NULL;
	Err err = {0};
	assert_int_equal(store_open(path, STORE_READONLY, &st, &err), 0);
	RouteRows rr;
	buf_init(&rr.b);
	assert_int_equal(store_spans_scan(st, INT64_MIN, INT64_MAX, 0, on_route_row, &rr, &err), 0);
	store_close(st);
	buf_reset(out);
	buf_adds(out, buf_str(&rr.b));
	buf_fini(&rr.b);
}

static void test_routes(void **state)
{
	(void)state;
	Db *d = db_new();
	Err err = {0};
	assert_int_equal(imp_mem(d, "route.json", route_jaeger, sizeof route_jaeger - 1, NULL, &err), 0);
	assert_int_equal(imp_mem(d, "route-z.json", route_zipkin, sizeof route_zipkin - 1, NULL, &err), 0);
#define ROUTE "SELECT ifnull(route, '<name>')||'|'||ifnull(route_rule, '<null>') FROM spans WHERE span_id LIKE ?"
	ASSERT_Q(d, ROUTE, "%c1", "GET /u/:id|1");
	ASSERT_Q(d, ROUTE, "%c2", "GET /api/items/{id}|4");
	ASSERT_Q(d, ROUTE, "%c3", "GET /api/cart/{id}|4");
	ASSERT_Q(d, ROUTE, "%c4", "pkg.Cart/Get|2");
	ASSERT_Q(d, ROUTE, "%c5", "<name>|<null>"); /* escaped: the readers decide */
	/* a client span without a parent (a load generator's) has one too */
	ASSERT_Q(d, ROUTE, "%c6", "GET /api/items/{id}|4");
	ASSERT_Q(d, ROUTE, "%c7", "<name>|0");
	ASSERT_Q(d, ROUTE, "%d1", "GET /api/items/{id}|4");
	ASSERT_Q(d, ROUTE, "%d2", "PUT /a/{id}|4");
	ASSERT_Q(d, ROUTE, "%d3", "<name>|0");
#undef ROUTE
	assert_int_equal(imp_file(d, "fixtures/jaeger/query.json", NULL, NULL, &err), 0);
	assert_int_equal(imp_file(d, "fixtures/zipkin/spans.json", NULL, NULL, &err), 0);
	/* the readers give every span the importer's route when its columns
	 * are empty (a row from before routes were stored) */
	Buf taken, computed;
	buf_init(&taken);
	buf_init(&computed);
	route_rows(d->path, &taken);
	char copy[160];
	snprintf(copy, sizeof copy, "%s.copy", d->path);
	Store *w = NULL;
	assert_int_equal(store_open(copy, 0, &w, &err), 0);
	store_close(w);
	rm_db(copy);
	sqlite3 *db = NULL;
	char q[256];
	snprintf(q, sizeof q, "VACUUM INTO '%s'", copy);
	assert_int_equal(sqlite3_open(d->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, q, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(sqlite3_open(copy, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "UPDATE spans SET route = NULL, route_rule = NULL", NULL,
	                              NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	route_rows(copy, &computed);
	assert_string_equal(buf_str(&computed), buf_str(&taken));
	assert_non_null(strstr(buf_str(&taken), "c5 GET /a\"b|1"));
	assert_non_null(strstr(buf_str(&taken), "c6 GET /api/items/{id}|4"));
	rm_db(copy);
	buf_fini(&taken);
	buf_fini(&computed);
	db_free(d);
}

#define TREE_SQL                                                                         \
	"SELECT group_concat(x, ' ') FROM (SELECT trace_id||'/'||span_id||'<'||parent_id||':'" \
	"||name AS x FROM spans ORDER BY start_ns)"

static void test_opaque_ids(void **state)
{
	(void)state;
	char tid[33], root[17], g[17], want[600];
	tj_opaque_id("order-7", 7, 32, tid);
	tj_opaque_id("root", 4, 16, root);
	tj_opaque_id("G", 1, 16, g);
	assert_int_equal(strlen(tid), 32);
	assert_int_equal(strlen(g), 16);
	assert_string_not_equal(g, "000000000000000g");

	Db *d = db_new();
	Err err;
	assert_int_equal(imp_mem(d, "op.json", opaque_jaeger, strlen(opaque_jaeger), NULL, &err), 0);
	/* every parent reference resolves to the root's stored id */
	snprintf(want, sizeof want, "%s", tid);
	ASSERT_Q(d, "SELECT count(DISTINCT trace_id)||' '||min(trace_id) FROM spans", NULL,
	         (snprintf(want, sizeof want, "1 %s", tid), want));
	ASSERT_Q(d, "SELECT count(*) FROM spans WHERE parent_id = ?", root, "3");
	ASSERT_Q(d, "SELECT name FROM spans WHERE span_id = ?", g, "cart");
	/* the originals are kept */
	ASSERT_Q(d, "SELECT json_extract(attrs, '$.\"tailtriage.original_span_id\"')||' '||"
	         "json_extract(attrs, '$.\"tailtriage.original_parent_id\"')||' '||"
	         "json_extract(attrs, '$.\"tailtriage.original_trace_id\"') FROM spans WHERE span_id = ?",
	         g, "G root order-7");
	ASSERT_Q(d, "SELECT json_extract(attrs, '$.\"tailtriage.original_span_id\"') FROM spans "
	         "WHERE name = 'checkout'", NULL, "root");
	/* deterministic: importing again adds nothing */
	ImportResult res;
	ImportOptions o = {0};
	assert_int_equal(import_memory(d->st, "op.json", opaque_jaeger, strlen(opaque_jaeger), &o,
	                               &res, &err), 0);
	assert_int_equal(res.counts.spans_added, 0);
	char *jtree = q1(d, TREE_SQL, NULL);

	/* Zipkin maps the same strings to the same ids */
	Db *z = db_new();
	assert_int_equal(imp_mem(z, "op.json", opaque_zipkin, strlen(opaque_zipkin), NULL, &err), 0);
	char *ztree = q1(z, TREE_SQL, NULL);
	assert_string_equal(jtree, ztree);
	ASSERT_Q(z, "SELECT json_extract(attrs, '$.\"tailtriage.original_parent_id\"') FROM spans "
	         "WHERE span_id = ?", g, "root");
	free(jtree);
	free(ztree);
	/* a shared client/server id that is opaque: the server half gets its
	 * derived id, its parent is the client, and the server's child
	 * follows it */
	static const char shared[] =
		"[{\"traceId\":\"order-8\",\"id\":\"call\",\"kind\":\"CLIENT\",\"name\":\"get\","
		"\"timestamp\":1700000000000000,\"duration\":100,\"localEndpoint\":{\"serviceName\":\"a\"}},"
		"{\"traceId\":\"order-8\",\"id\":\"call\",\"kind\":\"SERVER\",\"shared\":true,"
		"\"name\":\"serve\",\"timestamp\":1700000000000010,\"duration\":80,"
		"\"localEndpoint\":{\"serviceName\":\"b\"}},"
		"{\"traceId\":\"order-8\",\"id\":\"q\",\"parentId\":\"call\",\"name\":\"query\","
		"\"timestamp\":1700000000000020,\"duration\":50,\"localEndpoint\":{\"serviceName\":\"b\"}}]";
	assert_int_equal(imp_mem(z, "shared.json", shared, strlen(shared), NULL, &err), 0);
	char t8[33], call[17], half[17];
	tj_opaque_id("order-8", 7, 32, t8);
	tj_opaque_id("call", 4, 16, call);
	tj_shared_server_id(t8, call, half);
	ASSERT_Q(z, "SELECT parent_id||' '||json_extract(attrs, '$.\"tailtriage.original_span_id\"')"
	         "||' '||json_extract(attrs, '$.\"tailtriage.original_parent_id\"') FROM spans "
	         "WHERE name = 'serve'", NULL, (snprintf(want, sizeof want, "%s call call", call), want));
	ASSERT_Q(z, "SELECT parent_id FROM spans WHERE name = 'query'", NULL, half);
	ASSERT_Q(z, "SELECT span_id FROM spans WHERE name = 'serve'", NULL, half);
	db_free(z);

	/* the analysis sees one request with three children */
	AnalysisOptions all = {.period.win = TIME_RANGE_ALL};
	Analysis *a = NULL;
	assert_int_equal(analysis_run(d->st, &all, &a, &err), 0);
	assert_int_equal(a->pop[0].requests, 1);
	assert_int_equal(a->n_nodes, 4);
	assert_int_equal(a->dq.orphan_spans, 0);
	analysis_free(a);
	db_free(d);
}

/* Two different ids that would be stored as one are refused: an opaque
 * id and a hex id equal to its mapping, in either order, for spans in
 * Jaeger and Zipkin and for Jaeger trace ids across a file. */
static void test_opaque_id_collisions(void **state)
{
	(void)state;
	char g[17], t[33], text[2048];
	tj_opaque_id("G", 1, 16, g);
	tj_opaque_id("T", 1, 32, t);
	Db *d = db_new();
	Err err;
	assert_int_equal(imp_file(d, FX "jaeger/list.json", NULL, NULL, &err), 0);
	char *before = fingerprint(d);

#define JSPAN "{\"spanID\":\"%s\",\"startTime\":1,\"duration\":5,\"processID\":\"p1\"}"
	char s1[200], s2[200];
	for (int order = 0; order < 2; order++) {
		snprintf(s1, sizeof s1, JSPAN, order ? g : "G");
		snprintf(s2, sizeof s2, JSPAN, order ? "G" : g);
		snprintf(text, sizeof text,
		         "{\"traceID\":\"ab\",\"spans\":[%s,\n%s],\"processes\":{\"p1\":{\"serviceName\":\"s\"}}}",
		         s1, s2);
		assert_int_not_equal(imp_mem(d, "bad.json", text, strlen(text), NULL, &err), 0);
		assert_non_null(strstr(err.msg, "bad.json:2:"));
		assert_non_null(strstr(err.msg, "an id collision"));
	}
	snprintf(text, sizeof text,
	         "{\"data\":[{\"traceID\":\"T\",\"spans\":[],\"processes\":{}},\n"
	         "{\"traceID\":\"%s\",\"spans\":[],\"processes\":{}}]}", t);
	assert_int_not_equal(imp_mem(d, "bad.json", text, strlen(text), NULL, &err), 0);
	if (strstr(err.msg, "bad.json:2:12: traceID") == NULL)
		fail_msg("%s", err.msg);
	assert_non_null(strstr(err.msg, "an id collision"));

#define ZSPAN "{\"traceId\":\"ab\",\"id\":\"%s\",\"timestamp\":1,\"duration\":1}"
	for (int order = 0; order < 2; order++) {
		snprintf(s1, sizeof s1, ZSPAN, order ? g : "G");
		snprintf(s2, sizeof s2, ZSPAN, order ? "G" : g);
		snprintf(text, sizeof text, "[%s,\n%s]", s1, s2);
		assert_int_not_equal(imp_mem(d, "bad.json", text, strlen(text), NULL, &err), 0);
		/* the hex id is the one found clashing: on line 2, or on line 1
		 * in the second pass when it comes first */
		assert_non_null(strstr(err.msg, order ? "bad.json:1:" : "bad.json:2:"));
		assert_non_null(strstr(err.msg, "an id collision"));
	}
	char *after = fingerprint(d);
	assert_string_equal(before, after);
	free(before);
	free(after);
	db_free(d);
}

/* OTLP/JSON keeps to its specification: ids are hex. */
static void test_otlp_ids_stay_hex(void **state)
{
	(void)state;
	static const char doc[] =
		"{\"resourceSpans\":[{\"resource\":{},\"scopeSpans\":[{\"scope\":{},\"spans\":[{"
		"\"traceId\":\"5b8efff798038103d269b633813fc60c\",\"spanId\":\"G\",\"name\":\"x\","
		"\"kind\":1,\"startTimeUnixNano\":\"1\",\"endTimeUnixNano\":\"2\"}]}]}]}";
	Db *d = db_new();
	Err err;
	assert_int_not_equal(imp_mem(d, "o.json", doc, strlen(doc), "otlp-json", &err), 0);
	assert_non_null(strstr(err.msg, "spanId"));
	ASSERT_Q(d, "SELECT count(*) FROM spans", NULL, "0");
	db_free(d);
}

/* ---- malformed input ---------------------------------------------------------- */

typedef struct Bad {
	const char *format;    /* NULL: detect */
	const char *text;
	const char *expect;    /* the whole message */
} Bad;

#define ZS(extra)                                                                          \
	"[{\"traceId\":\"463ac35c9f6413ad\",\"id\":\"b7ad6b7169203331\",\"timestamp\":1700000000000000," \
	"\"duration\":10" extra "}]"

static const Bad jaeger_bad[] = {
	{NULL, "{\"data\":[{\"traceID\":42,\"spans\":[],\"processes\":{}}]}",
	 "bad.json:1:21: traceID must be a string, not a number"},
	{NULL, "{\"traceID\":\"ab\",\"spans\":[{\"spanID\":\"1\",\"startTime\":1,\"duration\":-5,"
	       "\"processID\":\"p1\"}],\"processes\":{\"p1\":{\"serviceName\":\"s\"}}}",
	 "bad.json:1:65: duration must not be negative (\"-5\")"},
	{NULL, "{\"traceID\":\"ab\",\"spans\":[{\"startTime\":1,\"duration\":5,\"processID\":\"p1\"}],"
	       "\"processes\":{\"p1\":{\"serviceName\":\"s\"}}}",
	 "bad.json:1:26: span has no \"spanID\""},
	/* no startTime: the earliest log's, whose own time must be right */
	{NULL, "{\"traceID\":\"ab\",\"spans\":[{\"spanID\":\"1\",\"duration\":5,\"processID\":\"p1\","
	       "\"logs\":[{\"timestamp\":\"x\"}]}],\"processes\":{\"p1\":{\"serviceName\":\"s\"}}}",
	 "bad.json:1:91: log timestamp must be a number of microseconds, not a string"},
	{NULL, "{\"traceID\":\"ab\",\"spans\":[{\"spanID\":\"1\",\"startTime\":1,\"duration\":5,"
	       "\"processID\":\"p1\",\"tags\":[{\"key\":\"n\",\"type\":\"int64\",\"value\":\"abc\"}]}],"
	       "\"processes\":{\"p1\":{\"serviceName\":\"s\"}}}",
	 "bad.json:1:126: tags entry \"n\": value (a string) does not fit type int64"},
	{NULL, "{\"traceID\":\"ab\",\"spans\":[{\"spanID\":\"1\",\"startTime\":1,\"duration\":5,"
	       "\"processID\":\"p9\"}],\"processes\":{\"p1\":{\"serviceName\":\"s\"}}}",
	 "bad.json:1:79: processID \"p9\" is not among the trace's processes"},
	{NULL, "{\"data\":[{\"traceID\":\"ab\",\"spans\":[{\"spanID\":\"1\",\"startTime\":1,",
	 "bad.json:1:63: invalid JSON: unexpected end of input (truncated JSON?)"},
	{NULL, "{\"traceID\":\"ab\",\"spans\":[{\"spanID\":\"1\",\"operationName\":\"caf\xe9\"}]}",
	 "bad.json:1:60: invalid JSON: invalid UTF-8 in a string"},
	{NULL, "{\"traceID\":\"ab\",\"spans\":[{\"spanID\":\"1\",\"startTime\":1,\"duration\":5,"
	       "\"references\":[{\"refType\":\"PARENT\",\"spanID\":\"2\"}],\"processID\":\"p1\"}],"
	       "\"processes\":{\"p1\":{\"serviceName\":\"s\"}}}",
	 "bad.json:1:92: refType must be CHILD_OF or FOLLOWS_FROM, not \"PARENT\""},
	{NULL, "{\"data\":null,\"total\":0,\"limit\":0,\"offset\":0,\"errors\":"
	       "[{\"code\":404,\"msg\":\"trace not found\"}]}",
	 "bad.json:1:73: the Jaeger response holds no traces: \"trace not found\""},
	{NULL, "{\"traceID\":\"ab\",\"spans\":[{\"spanID\":\"\"}]}",
	 "bad.json:1:36: spanID is empty"},
	{NULL, "{\"traceID\":\"ab\",\"spans\":{},\"processes\":{}}",
	 "bad.json:1:25: \"spans\" must be an array, not an object"},
	{NULL, "{\"traceID\":\"ab\",\"spans\":[{\"spanID\":\"1\",\"spanID\":\"2\"}]}",
	 "bad.json:1:49: \"spanID\" given twice in one object"},
	{NULL, "{\"traceID\":\"ab\",\"spans\":[],\"processes\":{}} x",
	 "bad.json:1:45: invalid JSON: trailing garbage"},
	{NULL, "{\"traceID\":\"ab\",\"spans\":[{\"spanID\":\"1\",\"parentSpanID\":\"01\",\"startTime\":1,"
	       "\"duration\":5,\"processID\":\"p1\"}],\"processes\":{\"p1\":{\"serviceName\":\"s\"}}}",
	 "bad.json:1:55: span 0000000000000001 names itself as its parent"},
	/* a good trace, then a bad one: nothing of the file may stay */
	{NULL, "{\"data\":[\n"
	       " {\"traceID\":\"ab\",\"spans\":[{\"spanID\":\"1\",\"startTime\":1,\"duration\":5,"
	       "\"processID\":\"p1\"}],\"processes\":{\"p1\":{\"serviceName\":\"s\"}}},\n"
	       " {\"traceID\":\"cd\",\"spans\":[{\"spanID\":\"1\",\"startTime\":\"1\",\"duration\":5,"
	       "\"processID\":\"p1\"}],\"processes\":{\"p1\":{\"serviceName\":\"s\"}}}\n]}",
	 "bad.json:3:53: startTime must be a number of microseconds, not a string"},
	{"jaeger-json", "[{\"traceId\":\"ab\",\"id\":\"1\"}]",
	 "bad.json:1:2: trace has no \"spans\""},
	{NULL, "{\"traceID\":\"ab\",\"spans\":[{\"spanID\":\"1\",\"operationName\":\"a\\u0000b\"}]}",
	 "bad.json:1:56: string holds U+0000, which is not accepted"},
};

static const Bad zipkin_bad[] = {
	{NULL, "[{\"id\":\"b7ad6b7169203331\",\"traceId\":null,\"timestamp\":1,\"duration\":1}]",
	 "bad.json:1:2: span has no \"traceId\""},
	{NULL, ZS(",\"parentId\":\"\""),
	 "bad.json:1:110: parentId is empty"},
	{NULL, "[{\"traceId\":\"463ac35c9f6413ad\",\"id\":\"b7ad6b7169203331\",\"timestamp\":1700000000000000,"
	       "\"duration\":-1}]",
	 "bad.json:1:96: duration must not be negative (\"-1\")"},
	{NULL, ZS(",\"kind\":\"SERVERS\""),
	 "bad.json:1:106: kind must be CLIENT, SERVER, PRODUCER or CONSUMER, not \"SERVERS\""},
	{NULL, ZS(",\"tags\":{\"a\":\"1\",\"b\":{\"c\":1}}"),
	 "bad.json:1:119: tag \"b\" must be a string, not an object"},
	{NULL, "[{\"traceId\":\"463ac35c9f6413ad\",\"id\":\"b7ad",
	 "bad.json:1:42: invalid JSON: unexpected end of input (truncated JSON?)"},
	{NULL, ZS(",\"name\":\"\xc3\x28\""),
	 "bad.json:1:107: invalid JSON: invalid UTF-8 in a string"},
	{NULL, ZS(",\"binaryAnnotations\":[]"),
	 "bad.json:1:119: this is Zipkin v1 JSON (binaryAnnotations); only v2 is read "
	 "(GET /api/v2/...)"},
	{"zipkin-json", "{\"traceId\":\"463ac35c9f6413ad\",\"id\":\"b7ad6b7169203331\"}",
	 "bad.json:1:1: expected a JSON array of Zipkin v2 spans, found an object"},
	{NULL, "[[{\"traceId\":\"463ac35c9f6413ad\",\"id\":\"b7ad6b7169203331\"}]]",
	 "bad.json:1:2: found a list of span lists (as /api/v2/traces returns): flatten it to one "
	 "array of spans"},
	{NULL, ZS(",\"shared\":\"yes\""),
	 "bad.json:1:108: \"shared\" must be true or false, not a string"},
	{NULL, ZS(",\"tags\":{\"queue.wait_ms\":\"soon\"}"),
	 "bad.json:1:123: queue.wait_ms must be a number (ms)"},
	{NULL, ZS(",\"localEndpoint\":{\"serviceName\":\"a\",\"port\":70000}"),
	 "bad.json:1:141: localEndpoint port must be an integer from 0 to 65535"},
	{NULL, ZS(",\"annotations\":[{\"timestamp\":1,\"value\":\"x\",\"endpoint\":{}}]"),
	 "bad.json:1:152: annotations with an endpoint are Zipkin v1; only v2 is read"},
	{NULL, "[{\"traceId\":\"0000000000000000\",\"id\":\"1\",\"timestamp\":1,\"duration\":1}]",
	 "bad.json:1:13: traceId is all zeros, which means no id"},
	/* a good span, then a bad one on line 3 (an unfinished span is
	 * skipped, but a malformed one is still refused) */
	{NULL, "[\n{\"traceId\":\"463ac35c9f6413ad\",\"id\":\"b7ad6b7169203331\",\"timestamp\":1,"
	       "\"duration\":10}\n,{\"traceId\":\"1\",\"id\":\"2\",\"timestamp\":\"0\"}]",
	 "bad.json:3:38: timestamp must be a number of microseconds, not a string"},
	{NULL, "[{\"traceId\":\"463ac35c9f6413ad\",\"id\":\"b7ad6b7169203331\","
	       "\"annotations\":[{\"timestamp\":\"x\",\"value\":\"cs\"}]}]",
	 "bad.json:1:84: annotation timestamp must be a number of microseconds, not a string"},
	{"zipkin-json", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
	       "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
	 "bad.json:1:129: JSON nested deeper than 128 levels"},
};

/* Imports each bad text into a database that already holds spans and
 * checks the message and that the content did not change. */
static void run_bad(const Bad *cases, size_t n)
{
	Db *d = db_new();
	Err err;
	assert_int_equal(imp_file(d, FX "jaeger/list.json", NULL, NULL, &err), 0);
	char *before = fingerprint(d);
	int bad = 0;
	for (size_t i = 0; i < n; i++) {
		int rc = imp_mem(d, "bad.json", cases[i].text, strlen(cases[i].text), cases[i].format,
		                 &err);
		if (rc == 0 || strcmp(err.msg, cases[i].expect) != 0) {
			print_error("case %zu: rc %d\n  got:  %s\n  want: %s\n", i, rc, err.msg,
			            cases[i].expect);
			bad++;
		}
		char *now = fingerprint(d);
		assert_string_equal(now, before);
		free(now);
	}
	free(before);
	db_free(d);
	assert_int_equal(bad, 0);
}

/* Spans Zipkin accepts and shows but that have no end, in the shapes of
 * Zipkin's own UI test data (openzipkin/zipkin: zipkin-lens/testdata/
 * smartthings-mobile-web-install.json and smartthings-oauth-
 * authorization.json, local spans with neither timestamp nor duration,
 * a client flushed unfinished ("brave.flush"), one-way messaging halves
 * without a duration; and the gateway trace of zipkin-lens's former
 * src/test/data/malformed.json, whose phase spans have no duration).
 * fixtures/zipkin/incomplete.json holds our own data in those shapes.
 * The rest of the file is stored; each skipped span is counted with the
 * place of the first; a span without a timestamp takes its earliest
 * annotation's. */
static void test_zipkin_incomplete_spans(void **state)
{
	(void)state;
	Db *d = db_new();
	ImportResult res;
	Err err;
	assert_int_equal(imp_file(d, FX "zipkin/incomplete.json", NULL, &res, &err), 0);
	assert_string_equal(res.format, "zipkin-json");
	assert_int_equal(res.counts.spans_added, 6);
	/* gateway.rewrite, .header_filter, .balancer (duration 0); the flushed
	 * client; both halves of the one-way send */
	assert_int_equal(res.skips.unfinished, 6);
	assert_string_equal(res.skips.unfinished_at, "8:3");
	assert_int_equal(res.skips.untimed, 1); /* "post configs" */
	assert_string_equal(res.skips.untimed_at, "20:3");
	assert_int_equal(res.skips.start_from_event, 1);
	ASSERT_Q(d, "SELECT group_concat(name, ',') FROM (SELECT name FROM spans ORDER BY name)", NULL,
	         "gateway.access,gateway.proxy,gateway.request,get,get /install,get devices");
	/* the earliest annotation (cs) is its start, its duration is kept */
	ASSERT_Q(d, "SELECT start_ns||' '||end_ns FROM spans WHERE span_id = ?", "b200000000000006",
	         "1700000200400000000 1700000200440000000");
	/* the child of the skipped local span keeps its parent id: an orphan */
	ASSERT_Q(d, "SELECT parent_id FROM spans WHERE span_id = ?", "b200000000000003",
	         "b200000000000002");
	Buf b;
	buf_init(&b);
	import_skips_text(&res.skips, "z.json", &b);
	assert_string_equal(buf_str(&b),
	                    "6 spans skipped: no duration (an unfinished span, whose end is unknown; "
	                    "the first at z.json:8:3)\n"
	                    "1 span skipped: no start time, and no annotation or log to take one from "
	                    "(the first at z.json:20:3)\n"
	                    "1 span without a start time took it from its earliest annotation or log\n");
	buf_fini(&b);
	/* again: nothing new, and the same spans skipped */
	assert_int_equal(imp_file(d, FX "zipkin/incomplete.json", NULL, &res, &err), 0);
	assert_int_equal(res.counts.spans_added, 0);
	assert_int_equal(res.counts.spans_duplicate, 6);
	assert_int_equal(res.skips.unfinished, 6);
	db_free(d);
}

/* The same rule for Jaeger JSON, which always writes both times: a span
 * given without a duration is skipped, one without a startTime takes its
 * earliest log's, one with neither a startTime nor a log is skipped. */
static void test_jaeger_incomplete_spans(void **state)
{
	(void)state;
	static const char doc[] =
	    "{\"data\":[{\"traceID\":\"e1e1\",\"processes\":{\"p1\":{\"serviceName\":\"api\"}},\"spans\":[\n"
	    "{\"spanID\":\"1\",\"operationName\":\"GET /a\",\"startTime\":1700000000000000,"
	    "\"duration\":900,\"processID\":\"p1\"},\n"
	    "{\"spanID\":\"2\",\"operationName\":\"open\",\"startTime\":1700000000000100,"
	    "\"processID\":\"p1\",\"references\":[{\"refType\":\"CHILD_OF\",\"traceID\":\"e1e1\","
	    "\"spanID\":\"1\"}]},\n"
	    "{\"spanID\":\"3\",\"operationName\":\"read\",\"duration\":200,\"processID\":\"p1\","
	    "\"logs\":[{\"timestamp\":1700000000000300,\"fields\":[]},"
	    "{\"timestamp\":1700000000000250,\"fields\":[]}]},\n"
	    "{\"spanID\":\"4\",\"operationName\":\"lost\",\"duration\":200,\"processID\":\"p1\"}\n"
	    "]}]}";
	Db *d = db_new();
	ImportResult res;
	ImportOptions o = {0};
	Err err = {0};
	assert_int_equal(import_memory(d->st, "j.json", doc, sizeof doc - 1, &o, &res, &err), 0);
	assert_int_equal(res.counts.spans_added, 2);
	assert_int_equal(res.skips.unfinished, 1);
	assert_string_equal(res.skips.unfinished_at, "3:1");
	assert_int_equal(res.skips.untimed, 1);
	assert_string_equal(res.skips.untimed_at, "5:1");
	assert_int_equal(res.skips.start_from_event, 1);
	ASSERT_Q(d, "SELECT start_ns||' '||end_ns FROM spans WHERE span_id = ?", "0000000000000003",
	         "1700000000000250000 1700000000000450000");
	db_free(d);
}

static void test_jaeger_malformed(void **state)
{
	(void)state;
	run_bad(jaeger_bad, sizeof jaeger_bad / sizeof jaeger_bad[0]);
}

static void test_zipkin_malformed(void **state)
{
	(void)state;
	run_bad(zipkin_bad, sizeof zipkin_bad / sizeof zipkin_bad[0]);
}

/* Positions stay right far into a file (the reader works in 64 KiB
 * chunks) and columns count bytes, as every reader does (err.h): the
 * three two-byte letters of the name count twice. */
static void test_positions_past_chunks(void **state)
{
	(void)state;
	Buf b;
	buf_init(&b);
	buf_adds(&b, "[\n");
	const int bad_at = 1500;
	for (int i = 0; i < 2000; i++) {
		buf_printf(&b, "%s{\"traceId\":\"%016x\",\"id\":\"%016x\",\"name\":\"\xc3\xbc" "n\xc3\xaf" "c\xc3\xb6"
		           "de\",\"timestamp\":1700000000000000,\"duration\":%s}\n",
		           i ? "," : "", i + 1, i + 1, i == bad_at ? "-3" : "7");
	}
	buf_adds(&b, "]\n");
	assert_true(b.len > 3 * 65536);
	/* line bad_at + 2; the column of "-3" counted in bytes */
	const char *line = ",{\"traceId\":\"00000000000005dd\",\"id\":\"00000000000005dd\",\"name\":"
	                   "\"unicode\",\"timestamp\":1700000000000000,\"duration\":";
	char want[200];
	snprintf(want, sizeof want, "big.json:%d:%zu: duration must not be negative (\"-3\")",
	         bad_at + 2, strlen(line) + 3 + 1);
	Db *d = db_new();
	Err err;
	assert_int_not_equal(imp_mem(d, "big.json", b.p, b.len, NULL, &err), 0);
	assert_string_equal(err.msg, want);
	ASSERT_Q(d, "SELECT count(*) FROM spans", NULL, "0");
	/* and a good big file imports whole */
	char *p = strstr(b.p, "\"duration\":-3");
	memcpy(p + 11, " 3", 2);
	ImportResult res;
	ImportOptions o = {0};
	assert_int_equal(import_memory(d->st, "big.json", b.p, b.len, &o, &res, &err), 0);
	assert_int_equal(res.counts.spans_added, 2000);
	buf_fini(&b);
	db_free(d);
}

/* Memory stays bounded on hostile input: one string longer than the
 * reader's token cap is refused where it starts. */
static void test_token_cap(void **state)
{
	(void)state;
	size_t big = TJ_TOKEN_MAX + 70000;
	const char *pre = "[{\"traceId\":\"1\",\"id\":\"1\",\"name\":\"";
	size_t pl = strlen(pre);
	char *text = malloc(pl + big + 8);
	memcpy(text, pre, pl);
	memset(text + pl, 'x', big);
	memcpy(text + pl + big, "\"}]", 4);
	Db *d = db_new();
	Err err;
	assert_int_not_equal(imp_mem(d, "huge.json", text, pl + big + 3, NULL, &err), 0);
	char want[128];
	snprintf(want, sizeof want, "huge.json:1:%zu: a single JSON value longer than %zu MiB", pl,
	         TJ_TOKEN_MAX >> 20);
	assert_string_equal(err.msg, want);
	ASSERT_Q(d, "SELECT count(*) FROM spans", NULL, "0");
	free(text);
	db_free(d);
}

/* ---- the same trace as OTLP, Jaeger and Zipkin ---------------------------------- */

#define EQ_TRACE "0000000000000000d269b633813fc60c"
#define EQ_MAX 16

typedef struct EqSpan {
	char id[17], parent[17];
	char service[32], host[32], name[32], wclass[32];
	int kind, status, has_queue;
	int64_t start, end, queue;
	char parent_name[32];
} EqSpan;

typedef struct EqSet {
	EqSpan s[EQ_MAX];
	int n;
} EqSet;

static int eq_collect(void *ctx, const StoreSpanRow *r)
{
	EqSet *set = ctx;
	assert_true(set->n < EQ_MAX);
	EqSpan *e = &set->s[set->n++];
	memset(e, 0, sizeof *e);
	snprintf(e->id, sizeof e->id, "%s", r->span_id);
	snprintf(e->parent, sizeof e->parent, "%s", r->parent_id);
	snprintf(e->service, sizeof e->service, "%s", r->service);
	snprintf(e->host, sizeof e->host, "%s", r->host);
	snprintf(e->name, sizeof e->name, "%s", r->name);
	snprintf(e->wclass, sizeof e->wclass, "%s", r->wclass);
	e->kind = r->kind;
	e->status = r->status_code;
	e->has_queue = r->has_queue;
	e->start = r->start_ns;
	e->end = r->end_ns;
	e->queue = r->has_queue ? r->queue_ns : 0;
	return 0;
}

static int eq_cmp(const void *a, const void *b)
{
	return strcmp(((const EqSpan *)a)->name, ((const EqSpan *)b)->name);
}

static void eq_load(Db *d, EqSet *set)
{
	Err err = {0};
	memset(set, 0, sizeof *set);
	assert_int_equal(store_trace_scan(d->st, EQ_TRACE, eq_collect, set, &err), 0);
	/* parents by name, so derived ids do not matter */
	for (int i = 0; i < set->n; i++) {
		const char *pn = set->s[i].parent[0] ? "<missing>" : "<root>";
		for (int k = 0; k < set->n; k++)
			if (k != i && set->s[i].parent[0] && strcmp(set->s[k].id, set->s[i].parent) == 0)
				pn = set->s[k].name;
		char tmp[32];
		snprintf(tmp, sizeof tmp, "%s", pn);
		memcpy(set->s[i].parent_name, tmp, sizeof tmp);
	}
	qsort(set->s, (size_t)set->n, sizeof set->s[0], eq_cmp);
}

static void eq_same_spans(const EqSet *a, const EqSet *b, const char *what)
{
	if (a->n != b->n)
		fail_msg("%s: %d spans vs %d", what, a->n, b->n);
	for (int i = 0; i < a->n; i++) {
		const EqSpan *x = &a->s[i], *y = &b->s[i];
		if (strcmp(x->name, y->name) || strcmp(x->service, y->service)
		    || strcmp(x->host, y->host) || strcmp(x->wclass, y->wclass) || x->kind != y->kind
		    || x->status != y->status || x->start != y->start || x->end != y->end
		    || x->has_queue != y->has_queue || x->queue != y->queue
		    || strcmp(x->parent_name, y->parent_name))
			fail_msg("%s: span %s differs: [%s %s %s %d st%d %lld..%lld q%d:%lld under %s] vs "
			         "[%s %s %s %d st%d %lld..%lld q%d:%lld under %s]", what, x->name,
			         x->service, x->host, x->wclass, x->kind, x->status, (long long)x->start,
			         (long long)x->end, x->has_queue, (long long)x->queue, x->parent_name,
			         y->service, y->host, y->wclass, y->kind, y->status, (long long)y->start,
			         (long long)y->end, y->has_queue, (long long)y->queue, y->parent_name);
	}
}

static void quant_same(const Quant *x, const Quant *y, const char *what, const char *node)
{
	if (x->n != y->n || (x->n && (fabs(x->p50 - y->p50) > 1e-9 || fabs(x->p99 - y->p99) > 1e-9
	                              || fabs(x->max - y->max) > 1e-9)))
		fail_msg("%s: node %s: n %lld p50 %g p99 %g vs n %lld p50 %g p99 %g", what, node,
		         (long long)x->n, x->p50, x->p99, (long long)y->n, y->p50, y->p99);
}

static int streq0(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

static void eq_same_dag(const Analysis *a, const Analysis *b, const char *what)
{
	if (a->n_nodes != b->n_nodes)
		fail_msg("%s: %d nodes vs %d", what, a->n_nodes, b->n_nodes);
	assert_string_equal(a->endpoint, b->endpoint);
	for (int i = 0; i < a->n_nodes; i++) {
		const DagNode *x = &a->nodes[i], *y = &b->nodes[i];
		if (x->type != y->type || x->edge != y->edge || x->parent != y->parent
		    || (x->group < 0) != (y->group < 0) || !streq0(x->service, y->service)
		    || !streq0(x->operation, y->operation) || !streq0(x->dependency, y->dependency)
		    || !streq0(x->label, y->label))
			fail_msg("%s: node %d differs: %s/%s/%s type %d edge %d vs %s/%s/%s type %d edge %d",
			         what, i, x->service, x->operation, x->dependency ? x->dependency : "-",
			         x->type, x->edge, y->service, y->operation,
			         y->dependency ? y->dependency : "-", y->type, y->edge);
		const NodeStats *p = &x->pop[POP_WINDOW], *q = &y->pop[POP_WINDOW];
		assert_int_equal(p->calls, q->calls);
		assert_int_equal(p->unknown_split, q->unknown_split);
		quant_same(&p->total, &q->total, what, x->label);
		quant_same(&p->client_wait, &q->client_wait, what, x->label);
		quant_same(&p->service, &q->service, what, x->label);
		quant_same(&p->queue, &q->queue, what, x->label);
		for (int c = 0; c < COMP_COUNT; c++)
			assert_true(fabs(x->crit[0].ms[c] - y->crit[0].ms[c]) < 1e-9);
	}
	assert_int_equal(a->n_classes, b->n_classes);
	for (int c = 0; c < a->n_classes; c++)
		assert_string_equal(a->classes[c], b->classes[c]);
	assert_int_equal(a->dq.orphan_spans, b->dq.orphan_spans);
	assert_int_equal(a->dq.unpaired_calls, b->dq.unpaired_calls);
	assert_int_equal(a->dq.skew, b->dq.skew);
	quant_same(&a->pop[0].ingress, &b->pop[0].ingress, what, "ingress");
}

static void test_same_trace_three_formats(void **state)
{
	(void)state;
	static const char *files[3] = {EQUIV "trace.otlp.json", EQUIV "trace.jaeger.json",
	                               EQUIV "trace.zipkin.json"};
	static const char *formats[3] = {"otlp-json", "jaeger-json", "zipkin-json"};
	Db *d[3];
	EqSet *set = calloc(3, sizeof *set);
	Analysis *an[3] = {NULL, NULL, NULL};
	for (int i = 0; i < 3; i++) {
		d[i] = db_new();
		ImportResult res;
		Err err;
		if (imp_file(d[i], files[i], NULL, &res, &err) != 0)
			fail_msg("%s: %s", files[i], err.msg);
		assert_string_equal(res.format, formats[i]);
		assert_int_equal(res.counts.spans_added, 10);
		eq_load(d[i], &set[i]);
		AnalysisOptions all = {.period.win = TIME_RANGE_ALL};
		assert_int_equal(analysis_run(d[i]->st, &all, &an[i], &err), 0);
	}
	/* the rows a user sees are the same; spot-check one against the fixture */
	eq_same_spans(&set[0], &set[1], "otlp vs jaeger");
	eq_same_spans(&set[0], &set[2], "otlp vs zipkin");
	const EqSpan *sel = NULL;
	for (int i = 0; i < set[2].n; i++)
		if (strcmp(set[2].s[i].name, "SELECT users") == 0)
			sel = &set[2].s[i];
	assert_non_null(sel);
	assert_string_equal(sel->parent_name, "GET /profile");
	assert_string_equal(sel->wclass, "premium");
	assert_int_equal(sel->queue, 2000000);

	/* the DAG, its splits and the critical path agree */
	eq_same_dag(an[0], an[1], "otlp vs jaeger");
	eq_same_dag(an[0], an[2], "otlp vs zipkin");
	/* and they are the trace's: profile is a paired call with a 5 ms wait
	 * (client 30 ms, server 25 ms); pricing and inventory run in parallel */
	const DagNode *profile = NULL, *pricing = NULL, *inventory = NULL;
	for (int i = 0; i < an[2]->n_nodes; i++) {
		const DagNode *nd = &an[2]->nodes[i];
		if (nd->dependency && strcmp(nd->dependency, "profile") == 0)
			profile = nd;
		if (nd->dependency && strcmp(nd->dependency, "pricing") == 0)
			pricing = nd;
		if (nd->dependency && strcmp(nd->dependency, "inventory") == 0)
			inventory = nd;
	}
	assert_non_null(profile);
	assert_non_null(pricing);
	assert_non_null(inventory);
	assert_int_equal(profile->type, NODE_CALL);
	assert_int_equal(profile->pop[0].client_wait.n, 1);
	assert_true(fabs(profile->pop[0].client_wait.p50 - 5.0) < 1e-9);
	assert_true(fabs(profile->pop[0].service.p50 - 25.0) < 1e-9);
	assert_true(fabs(profile->pop[0].queue.p50 - 1.5) < 1e-9);
	assert_int_equal(pricing->edge, EDGE_PARALLEL);
	assert_int_equal(inventory->edge, EDGE_PARALLEL);
	assert_true(fabs(pricing->pop[0].client_wait.p50 - 20.0) < 1e-9);

	for (int i = 0; i < 3; i++) {
		analysis_free(an[i]);
		db_free(d[i]);
	}
	free(set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jaeger_query_rows),
		cmocka_unit_test(test_jaeger_other_shapes),
		cmocka_unit_test(test_zipkin_rows_and_shared_spans),
		cmocka_unit_test(test_reimport_idempotent),
		cmocka_unit_test(test_sniff),
		cmocka_unit_test(test_jaeger_malformed),
		cmocka_unit_test(test_zipkin_malformed),
		cmocka_unit_test(test_zipkin_incomplete_spans),
		cmocka_unit_test(test_jaeger_incomplete_spans),
		cmocka_unit_test(test_positions_past_chunks),
		cmocka_unit_test(test_token_cap),
		cmocka_unit_test(test_same_trace_three_formats),
		cmocka_unit_test(test_opaque_ids),
		cmocka_unit_test(test_opaque_id_collisions),
		cmocka_unit_test(test_otlp_ids_stay_hex),
		cmocka_unit_test(test_named_attributes),
		cmocka_unit_test(test_routes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
