/*
 * import.h - bring a telemetry file into the store.
 *
 * import_file() sniffs the format from the content (never from the name),
 * hashes the file, and runs the matching importer inside one transaction.
 * Any error rolls the whole file back: the database content is unchanged and
 * err holds "file:line:col: message" (or "file: byte N: message").
 *
 * Conventions every span importer follows (documented in README.md):
 *  - workload class: span attribute opt->class_key ("workload.class" by
 *    default), else the same resource attribute;
 *  - queue time before a span (executor or pool wait): span attribute
 *    "queue.wait_ns" (integer ns) or "queue.wait_ms" (number, ms), or span
 *    events named "queue.wait" carrying "duration_ns" or "duration_ms";
 *    several are summed;
 *  - host: resource attribute "host.name" (else "k8s.pod.name").
 */
#ifndef TT_IMPORT_H
#define TT_IMPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "buf.h"
#include "err.h"
#include "store.h"

/* Called now and then during long imports (bytes read so far, total size
 * or 0 when unknown). Library code never prints; the CLI draws progress. */
typedef void (*ImportProgressFn)(void *ctx, uint64_t done, uint64_t total);

typedef struct ImportOptions {
	const char *format;        /* NULL: detect; else a name from import_formats() */
	const char *class_key;     /* NULL: "workload.class" */
	ImportProgressFn progress; /* may be NULL */
	void *progress_ctx;
	const char *name;          /* what messages and the source row call the
	                            * input; NULL: import_name(path) */
	unsigned signals;          /* OTLP/JSON ("otlp-json"): IMPORT_SIGNAL_* bits
	                            * to read; 0: every signal the input holds (a
	                            * file). A request of another signal stores
	                            * nothing and counts as unrecognised (the
	                            * receiver's /v1/traces). */
	/* Called inside the import's transaction, once its rows are stored
	 * and before it commits (NULL: nothing), so what the caller records
	 * about them commits with them or not at all (a pull's trace sets:
	 * the aggregates built at commit then know which traces are no
	 * population). Non-zero fails the import (err set by fn). */
	int (*before_commit)(void *ctx, Store *st, const StoreSourceCounts *counts, Err *err);
	void *before_commit_ctx;
} ImportOptions;

/* What an import left out on purpose, counted by reason, so that nothing
 * is dropped without a word (README, "Formats"). The rest of the file is
 * imported; the caller says what was skipped. */
typedef struct ImportSkips {
	int64_t log_records;       /* OTLP log records: logs are not read */
	int64_t unfinished;        /* Zipkin/Jaeger spans with no duration */
	int64_t untimed;           /* ... with no start time, and no annotation or
	                            * log to take one from */
	int64_t start_from_event;  /* stored spans whose start was taken from their
	                            * earliest annotation (Zipkin) or log (Jaeger) */
	char unfinished_at[32];    /* "line:col" of the first unfinished span */
	char untimed_at[32];       /* ... and of the first untimed one */
} ImportSkips;

/* Signals an OTLP/JSON import reads (ImportOptions.signals). */
enum {
	IMPORT_SIGNAL_TRACES = 1,
	IMPORT_SIGNAL_METRICS = 2,
};

typedef struct ImportResult {
	char format[32];           /* the format used, e.g. "otlp-json" */
	char sha256[65];
	int already;               /* a source with this digest was imported before */
	char already_path[256];    /* its path when already */
	StoreSourceCounts counts;
	int64_t unrecognised;      /* request objects that had fields but none this
	                            * format reads (stored nothing; the source row's
	                            * outcome is "unrecognised") */
	ImportSkips skips;         /* what was left out on purpose */
} ImportResult;

/* One line per kind of skipped data ("16 log records skipped: logs are not
 * read"), each ending in '\n', appended to out; name prefixes the
 * locations of the first skipped span. Nothing when nothing was skipped. */
void import_skips_text(const ImportSkips *s, const char *name, Buf *out);

/* Imports one file; "-" is the standard input. An input that cannot seek
 * (a pipe, process substitution, a terminal) is first copied to an unnamed
 * temporary file in $TMPDIR (else /tmp). Returns 0 or a negative TT_E*
 * code with err set. */
int import_file(Store *st, const char *path, const ImportOptions *opt,
                ImportResult *res, Err *err);

/* The name import_file() gives path in its messages and source rows:
 * "(stdin)" for "-", else path itself. */
const char *import_name(const char *path);

/* path opened for reading ("-": the standard input, through a
 * descriptor of its own); NULL with errno set. */
FILE *import_open(const char *path);

/* 1 when path cannot be read twice ("-", a pipe, a FIFO, a terminal):
 * import_file() copies such an input first. */
int import_needs_copy(const char *path);

/* Reads what is left of in into an unnamed temporary file in $TMPDIR
 * (else /tmp) and returns it, positioned at its start; NULL with err set
 * ("NAME: ..."). The file is gone once closed. opt (may be NULL): its
 * progress function hears of every 4 MiB copied, with a total of 0. */
FILE *import_spool(FILE *in, const char *name, const ImportOptions *opt, Err *err);

/* Imports an in-memory document (e.g. an HTTP request body) named name for
 * error messages. Same transaction and error guarantees as import_file(). */
int import_memory(Store *st, const char *name, const char *data, size_t len,
                  const ImportOptions *opt, ImportResult *res, Err *err);

/* NULL-terminated list of format names accepted by ImportOptions.format. */
const char *const *import_formats(void);

/* Detects the format of the first len bytes of a file. Returns a name from
 * import_formats() or NULL. */
const char *import_sniff(const char *head, size_t len);

#endif
