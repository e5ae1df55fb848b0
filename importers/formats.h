/*
 * formats.h - the contract between import.c (sniffing, hashing, the
 * transaction) and the per-format importers (one .c file each).
 *
 * A format's run() reads its whole input from f and adds rows through the
 * store inside the transaction import.c has opened. It never commits or
 * rolls back. On error it returns a negative TT_E* code and sets ctx->err
 * to "name:line:col: message" (or "name: byte N: message"); import.c then
 * rolls the whole file back.
 *
 * Memory: run() must not hold the whole input in memory when the format
 * can be streamed (JSON Lines, Prometheus text): memory grows with the
 * largest record, not with the file.
 */
#ifndef TT_FORMATS_H
#define TT_FORMATS_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "import.h"

/* Where the OTLP/JSON text an importer reads came from when it was
 * transcoded from protobuf (otlp_proto.c): errors then name the byte
 * offset of the protobuf field instead of a JSON column. */
typedef struct ImportPbLoc {
	int signal;                  /* OtlpSignal */
	const uint8_t *data;         /* the protobuf request */
	size_t len;
	uint64_t base;               /* offset of data[0] in the input */
} ImportPbLoc;

typedef struct ImportCtx {
	Store *st;
	const char *name;            /* file name for messages */
	int64_t source_id;           /* sources.id of this import */
	const ImportOptions *opt;    /* never NULL */
	const char *class_key;       /* opt->class_key or "workload.class" */
	StoreSourceCounts *counts;   /* add to these */
	uint64_t total_bytes;        /* size of the input, 0 when unknown */
	Err *err;
	int64_t unrecognised;        /* request objects with fields, none of which
	                              * this format reads (e.g. a traces body given
	                              * to the metrics importer); stored nothing */
	const ImportPbLoc *pb;       /* NULL unless reading transcoded protobuf */
	ImportSkips *skips;          /* add what is left out on purpose */
} ImportCtx;

/* Counts a span skipped for reason (ctx->skips->unfinished or ->untimed),
 * keeping the location of the first in at (its "line:col" field). */
void import_skip_span(ImportCtx *ctx, int64_t *count, char *at, size_t at_sz, long line,
                      long col);

/* Sets ctx->err to "name:line:col: message", or, when ctx->pb is set
 * (the input is one line of JSON transcoded from protobuf), to "name: byte
 * N: message" with N the offset of the protobuf field that became column
 * col. Returns code. */
int import_err_at(ImportCtx *ctx, int code, long line, long col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* import_err_at taking a va_list (consumed; the caller calls va_end). */
int import_err_vat(ImportCtx *ctx, int code, long line, long col, const char *fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));

/* The offset to report for byte json_off of the input: itself, or the
 * protobuf offset it came from when ctx->pb is set. */
uint64_t import_pb_offset(const ImportCtx *ctx, uint64_t json_off);

/* Reports progress (bytes consumed so far) through opt->progress. */
void import_progress(ImportCtx *ctx, uint64_t done);

typedef struct ImportFormat {
	const char *name;          /* "otlp-json", "prometheus", ... */
	const char *what;          /* one line for --help */
	/* Returns a confidence 0..100 that head (the first bytes) is this
	 * format; the highest wins, 0 means "not this". */
	int (*sniff)(const char *head, size_t len);
	int (*run)(ImportCtx *ctx, FILE *f);
} ImportFormat;

/* Where one request is in an input: bytes [from, to) (offsets after a
 * UTF-8 byte order mark, as the JSON readers count them), starting at
 * line:col. */
typedef struct ImportRange {
	uint64_t from, to;
	long line, col;
} ImportRange;

/* Reads the OTLP/JSON metrics requests at ranges r[0..n) (in input order)
 * of f, which it rewinds first, and stores their points in the current
 * transaction: how "otlp-json" stores the metrics lines of a file that
 * mixes signals, after its spans. Errors are located in the input. */
int otlp_metrics_ranges(ImportCtx *ctx, FILE *f, const ImportRange *r, size_t n);

/* Per-format entry points (defined in their own files). */
int otlp_traces_sniff(const char *head, size_t len);
int otlp_traces_run(ImportCtx *ctx, FILE *f);
int jaeger_json_sniff(const char *head, size_t len);
int jaeger_json_run(ImportCtx *ctx, FILE *f);
int zipkin_json_sniff(const char *head, size_t len);
int zipkin_json_run(ImportCtx *ctx, FILE *f);
int prom_text_sniff_prometheus(const char *head, size_t len);
int prom_text_run_prometheus(ImportCtx *ctx, FILE *f);
int prom_text_sniff_openmetrics(const char *head, size_t len);
int prom_text_run_openmetrics(ImportCtx *ctx, FILE *f);
int otlp_metrics_run(ImportCtx *ctx, FILE *f);
int otlp_proto_sniff(const char *head, size_t len);
int otlp_proto_run(ImportCtx *ctx, FILE *f);
int otlp_proto_traces_run(ImportCtx *ctx, FILE *f);
int otlp_proto_metrics_run(ImportCtx *ctx, FILE *f);
int sheet_sniff(const char *head, size_t len);
int sheet_run(ImportCtx *ctx, FILE *f);

/* The authority of URL text u (n bytes, not NUL-terminated): what follows
 * "scheme://" up to the path, query or fragment, without a "user@" part.
 * Sets *out into u and returns its length; 0 when u has no "://" or the
 * authority is empty. What a call's url.full or http.url says it calls,
 * when no attribute names its peer. */
size_t import_url_authority(const char *u, size_t n, const char **out);

/* The port written as text s (n bytes, not NUL-terminated): a whole
 * number 1..65535 in decimal digits only; else 0. */
long import_port(const char *s, size_t n);

/* Appends ":port" to the address in b when port is 1..65535: services on
 * one host (loopback, one node, a compose file) differ only by it. An
 * IPv6 address is bracketed first ("[::1]:8080"); an address that already
 * has a port ("host:80", "[::1]:80") is left alone. */
void import_addr_port(Buf *b, long port);

#endif
