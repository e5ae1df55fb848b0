/*
 * import.c - format detection, source digest and the one-file-one-
 * transaction rule shared by every importer.
 *
 * The SHA-256 of a trace source is computed while the importer reads it
 * (the importer reads a stdio stream that hashes what passes through it),
 * not in a pass of its own: a big file is read once. Its source row is
 * added with an empty digest and gets the real one, and the "imported
 * before" lookup, when the run has succeeded. Metric formats store the
 * digest with their points, so they still hash first (digest_late()).
 */
#define _GNU_SOURCE  /* fopencookie */
#include "import.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "formats.h"

/* Formats chosen by name only (the receiver knows the signal from the
 * path). */
static int no_sniff(const char *head, size_t len)
{
	(void)head;
	(void)len;
	return 0;
}

/* The order matters only for ties in sniff(). */
static const ImportFormat formats[] = {
	{"otlp-json", "OTLP/JSON of any signal, one document or JSON Lines (a Collector file "
	 "export): spans and metric points stored, log records counted and skipped",
	 otlp_traces_sniff, otlp_traces_run},
	{"jaeger-json", "Jaeger JSON traces (query API {\"data\":[...]}, one downloaded trace)",
	 jaeger_json_sniff, jaeger_json_run},
	{"zipkin-json", "Zipkin v2 JSON span list", zipkin_json_sniff, zipkin_json_run},
	{"prometheus", "Prometheus text exposition format 0.0.4", prom_text_sniff_prometheus,
	 prom_text_run_prometheus},
	{"openmetrics", "OpenMetrics 1.0 text (ends with # EOF)", prom_text_sniff_openmetrics,
	 prom_text_run_openmetrics},
	{"otlp-metrics", "OTLP/JSON metrics only (ExportMetricsServiceRequest; not sniffed: "
	 "otlp-json reads them too)", no_sniff, otlp_metrics_run},
	{"otlp-proto", "OTLP protobuf traces or metrics (one Export*ServiceRequest, or the "
	 "Collector file exporter's length-prefixed stream)", otlp_proto_sniff, otlp_proto_run},
	{"otlp-proto-traces", "OTLP protobuf ExportTraceServiceRequest (one, not sniffed)",
	 no_sniff, otlp_proto_traces_run},
	{"otlp-proto-metrics", "OTLP protobuf ExportMetricsServiceRequest (one, not sniffed)",
	 no_sniff, otlp_proto_metrics_run},
	{"sheet", "observation sheet (JSON, see docs/formats/observation-sheet.md)", sheet_sniff,
	 sheet_run},
};

#define N_FORMATS (sizeof formats / sizeof formats[0])

const char *const *import_formats(void)
{
	static const char *names[N_FORMATS + 1];
	for (size_t i = 0; i < N_FORMATS; i++)
		names[i] = formats[i].name;
	names[N_FORMATS] = NULL;
	return names;
}

static const ImportFormat *format_by_name(const char *name)
{
	for (size_t i = 0; i < N_FORMATS; i++)
		if (strcmp(formats[i].name, name) == 0)
			return &formats[i];
	return NULL;
}

static const ImportFormat *sniff(const char *head, size_t len)
{
	const ImportFormat *best = NULL;
	int best_score = 0;
	for (size_t i = 0; i < N_FORMATS; i++) {
		int s = formats[i].sniff(head, len);
		if (s > best_score) {
			best_score = s;
			best = &formats[i];
		}
	}
	return best;
}

const char *import_sniff(const char *head, size_t len)
{
	const ImportFormat *f = sniff(head, len);
	return f ? f->name : NULL;
}

long import_port(const char *s, size_t n)
{
	if (n == 0 || n > 5)
		return 0;
	long port = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		port = port * 10 + (s[i] - '0');
	}
	return port < 65536 ? port : 0;
}

void import_addr_port(Buf *b, long port)
{
	if (port <= 0 || port > 65535 || b->len == 0)
		return;
	const char *a = b->p;
	const char *colon = memchr(a, ':', b->len);
	if (a[0] == '[' || (colon && memchr(colon + 1, ':', b->len - (size_t)(colon + 1 - a)) == NULL))
		return; /* "[v6]..." or "host:port": bracketed, or a port already */
	if (colon) {
		/* an IPv6 address: two colons or more */
		Buf v6;
		buf_init(&v6);
		buf_printf(&v6, "[%.*s]", (int)b->len, a);
		buf_reset(b);
		buf_add(b, v6.p, v6.len);
		buf_fini(&v6);
	}
	buf_printf(b, ":%ld", port);
}

size_t import_url_authority(const char *u, size_t n, const char **out)
{
	*out = u;
	size_t i = 0;
	while (i + 2 < n && !(u[i] == ':' && u[i + 1] == '/' && u[i + 2] == '/'))
		i++;
	if (i + 2 >= n)
		return 0;
	size_t a = i + 3, e = a;
	while (e < n && u[e] != '/' && u[e] != '?' && u[e] != '#')
		e++;
	for (size_t k = a; k < e; k++)
		if (u[k] == '@')
			a = k + 1;
	*out = u + a;
	return e - a;
}

void import_progress(ImportCtx *ctx, uint64_t done)
{
	if (ctx->opt->progress)
		ctx->opt->progress(ctx->opt->progress_ctx, done, ctx->total_bytes);
}

/* A read-only stream over `in` that hashes every byte it delivers. Seeking
 * is allowed only back to the start (an importer that reads its input
 * twice), which restarts the digest; hash_finish() reads whatever the
 * importer left unread, so the digest always covers the whole input. */
typedef struct HashReader {
	FILE *in;              /* borrowed */
	EVP_MD_CTX *md;
	char *buf;             /* the stream's buffer (HASH_BUFFER bytes) */
} HashReader;

/* The hashing stream's buffer: each refill is one read of the input and
 * one digest update. stdio's default for a cookie stream is 8 KiB, which
 * made a 740 MB import 90,000 read() calls. */
#define HASH_BUFFER (256 << 10)

static ssize_t hash_read(void *c, char *buf, size_t size)
{
	HashReader *h = c;
	size_t n = fread(buf, 1, size, h->in);
	if (n == 0 && ferror(h->in))
		return -1;
	if (n)
		EVP_DigestUpdate(h->md, buf, n);
	return (ssize_t)n;
}

static int hash_seek(void *c, off64_t *pos, int whence)
{
	HashReader *h = c;
	if (whence != SEEK_SET || *pos != 0) {
		errno = ESPIPE;
		return -1;
	}
	if (fseek(h->in, 0, SEEK_SET) != 0 || EVP_DigestInit_ex(h->md, EVP_sha256(), NULL) != 1)
		return -1;
	return 0;
}

static const cookie_io_functions_t hash_io = {.read = hash_read, .seek = hash_seek};

/* Opens the hashing stream over in (positioned at its start). */
static FILE *hash_open(HashReader *h, FILE *in)
{
	h->in = in;
	h->md = EVP_MD_CTX_new();
	if (h->md == NULL || EVP_DigestInit_ex(h->md, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(h->md);
		h->md = NULL;
		return NULL;
	}
	h->buf = malloc(HASH_BUFFER);
	FILE *f = h->buf ? fopencookie(h, "rb", hash_io) : NULL;
	if (f == NULL) {
		EVP_MD_CTX_free(h->md);
		h->md = NULL;
		free(h->buf);
		h->buf = NULL;
		return NULL;
	}
	/* a size with no buffer of ours would be ignored (glibc) */
	setvbuf(f, h->buf, _IOFBF, HASH_BUFFER);
	return f;
}

/* Reads the rest of f and writes the hex digest of everything to out. */
static int hash_finish(HashReader *h, FILE *f, const char *name, char out[65], Err *err)
{
	char chunk[1 << 16];
	while (fread(chunk, 1, sizeof chunk, f) > 0)
		;
	if (ferror(f))
		return err_set(err, TT_EIO, "%s: read error: %s", name, strerror(errno));
	unsigned char dig[32];
	unsigned int dlen = 0;
	EVP_DigestFinal_ex(h->md, dig, &dlen);
	static const char hex[] = "0123456789abcdef";
	for (int i = 0; i < 32; i++) {
		out[2 * i] = hex[dig[i] >> 4];
		out[2 * i + 1] = hex[dig[i] & 15];
	}
	out[64] = '\0';
	return 0;
}

/* Formats whose rows do not refer to the source digest, so it can be
 * computed while they read. Metric points without a timestamp are
 * identified by (series, source sha256): metric formats hash first. */
static int digest_late(const ImportFormat *fmt)
{
	/* OTLP metric points always carry their time (otlp_metrics.c) */
	return fmt->run == otlp_traces_run || fmt->run == jaeger_json_run ||
	       fmt->run == zipkin_json_run;
}

static void hash_close(HashReader *h, FILE *f)
{
	if (f)
		fclose(f);
	EVP_MD_CTX_free(h->md);
	h->md = NULL;
	free(h->buf);          /* after fclose(), which may still use it */
	h->buf = NULL;
}

static int import_stream(Store *st, FILE *f, const char *name, uint64_t total,
                         const ImportOptions *opt_in, ImportResult *res, Err *err)
{
	ImportOptions defaults = {0};
	const ImportOptions *opt = opt_in ? opt_in : &defaults;
	memset(res, 0, sizeof *res);

	char head[4096];
	size_t hl = fread(head, 1, sizeof head, f);
	if (ferror(f))
		return err_set(err, TT_EIO, "%s: read error: %s", name, strerror(errno));
	rewind(f);

	const ImportFormat *fmt;
	if (opt->format) {
		fmt = format_by_name(opt->format);
		if (fmt == NULL)
			return err_set(err, TT_EFORMAT, "%s: unknown format '%s'", name, opt->format);
	} else {
		size_t i = 0;
		while (i < hl && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t'))
			i++;
		if (i == hl)
			return err_at(err, TT_EPARSE, name, 1, 1, "file is empty");
		fmt = sniff(head, hl);
		if (fmt == NULL)
			return err_at(err, TT_EFORMAT, name, 1, 1,
			              "cannot tell the format from the content "
			              "(try --format; known: see 'tailtriage import --help')");
	}
	snprintf(res->format, sizeof res->format, "%s", fmt->name);

	HashReader hr = {0};
	FILE *hf = hash_open(&hr, f);
	if (hf == NULL)
		return err_set(err, TT_ENOMEM, "%s: cannot start SHA-256", name);
	int late = digest_late(fmt);
	if (!late) {
		/* this format's rows refer to the digest: a pass of its own */
		int rc = hash_finish(&hr, hf, name, res->sha256, err);
		hash_close(&hr, hf);
		hf = NULL;
		if (rc)
			return rc;
		rewind(f);
		if (store_source_find_digest(st, res->sha256, &res->already, res->already_path,
		                             sizeof res->already_path, err))
			return TT_ESTORE;
	}
	if (store_begin(st, err)) {
		hash_close(&hr, hf);
		return TT_ESTORE;
	}
	int64_t source_id = 0;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	int64_t now_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
	if (store_source_add(st, name, late ? "" : res->sha256, fmt->name, now_ms, &source_id,
	                     err))
		goto fail;

	ImportCtx ctx = {
		.st = st,
		.name = name,
		.source_id = source_id,
		.opt = opt,
		.class_key = opt->class_key ? opt->class_key : "workload.class",
		.counts = &res->counts,
		.total_bytes = total,
		.err = err,
		.skips = &res->skips,
	};
	if (fmt->run(&ctx, late ? hf : f))
		goto fail;
	if (late && (hash_finish(&hr, hf, name, res->sha256, err) ||
	             store_source_find_digest(st, res->sha256, &res->already, res->already_path,
	                                      sizeof res->already_path, err) ||
	             store_source_set_sha256(st, source_id, res->sha256, err)))
		goto fail;
	const StoreSourceCounts *c = &res->counts;
	int nothing_new = c->spans_added == 0 && c->metrics_added == 0 && c->observations_added == 0;
	int had_any = c->spans_duplicate > 0 || c->metrics_duplicate > 0 ||
	              c->observations_duplicate > 0;
	const char *outcome = nothing_new && had_any ? "duplicate" : "imported";
	if (nothing_new && !had_any && ctx.unrecognised > 0)
		outcome = "unrecognised";
	res->unrecognised = ctx.unrecognised;
	if (store_source_finish(st, source_id, c, outcome, err))
		goto fail;
	if (opt->before_commit && opt->before_commit(opt->before_commit_ctx, st, c, err))
		goto fail;
	if (store_commit(st, err))
		goto fail;
	hash_close(&hr, hf);
	return 0;
fail:
	hash_close(&hr, hf);
	store_rollback(st);
	memset(&res->counts, 0, sizeof res->counts);
	memset(&res->skips, 0, sizeof res->skips);
	return err && err->code ? err->code : TT_EPARSE;
}

void import_skip_span(ImportCtx *ctx, int64_t *count, char *at, size_t at_sz, long line,
                      long col)
{
	if ((*count)++ == 0)
		snprintf(at, at_sz, "%ld:%ld", line, col);
}

void import_skips_text(const ImportSkips *s, const char *name, Buf *out)
{
	if (s->log_records)
		buf_printf(out, "%lld log record%s skipped: logs are not read\n",
		           (long long)s->log_records, s->log_records == 1 ? "" : "s");
	if (s->unfinished)
		buf_printf(out,
		           "%lld span%s skipped: no duration (an unfinished span, whose end is "
		           "unknown; the first at %s:%s)\n",
		           (long long)s->unfinished, s->unfinished == 1 ? "" : "s", name,
		           s->unfinished_at);
	if (s->untimed)
		buf_printf(out,
		           "%lld span%s skipped: no start time, and no annotation or log to take "
		           "one from (the first at %s:%s)\n",
		           (long long)s->untimed, s->untimed == 1 ? "" : "s", name, s->untimed_at);
	if (s->start_from_event)
		buf_printf(out, "%lld span%s without a start time took it from %s earliest "
		           "annotation or log\n",
		           (long long)s->start_from_event, s->start_from_event == 1 ? "" : "s",
		           s->start_from_event == 1 ? "its" : "their");
}

const char *import_name(const char *path)
{
	return strcmp(path, "-") == 0 ? "(stdin)" : path;
}

FILE *import_open(const char *path)
{
	if (strcmp(path, "-") != 0)
		return fopen(path, "rb");
	int fd = dup(STDIN_FILENO); /* closing the stream leaves stdin open */
	FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
	if (f == NULL && fd >= 0) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return f;
}

int import_needs_copy(const char *path)
{
	struct stat sb;
	return strcmp(path, "-") == 0 || (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode) &&
	                                  !S_ISDIR(sb.st_mode));
}

/* An input that cannot seek (a pipe, a terminal, process substitution) is
 * read through a copy: the format is sniffed from its head and metric
 * formats are hashed before they are read, each a second pass. */
FILE *import_spool(FILE *in, const char *name, const ImportOptions *opt, Err *err)
{
	const char *dir = getenv("TMPDIR");
	if (dir == NULL || dir[0] == '\0')
		dir = "/tmp";
	char path[4096];
	snprintf(path, sizeof path, "%s/tailtriage-input-XXXXXX", dir);
	int fd = mkstemp(path);
	if (fd < 0) {
		err_set(err, TT_EIO, "%s: cannot keep a copy of the input in %s: %s", name, dir,
		        strerror(errno));
		return NULL;
	}
	unlink(path);
	FILE *out = fdopen(fd, "w+b");
	if (out == NULL) {
		close(fd);
		err_set(err, TT_ENOMEM, "%s: cannot keep a copy of the input", name);
		return NULL;
	}
	char chunk[1 << 16];
	size_t got;
	uint64_t copied = 0;
	while ((got = fread(chunk, 1, sizeof chunk, in)) > 0) {
		if (fwrite(chunk, 1, got, out) != got)
			break;
		copied += got;
		if (opt && opt->progress && copied % (4u << 20) < got)
			opt->progress(opt->progress_ctx, copied, 0);
	}
	if (ferror(in) || ferror(out) || fflush(out) != 0) {
		err_set(err, TT_EIO, "%s: %s: %s", name,
		        ferror(in) ? "read error" : "cannot keep a copy of the input", strerror(errno));
		fclose(out);
		return NULL;
	}
	rewind(out);
	return out;
}

int import_file(Store *st, const char *path, const ImportOptions *opt, ImportResult *res,
                Err *err)
{
	const char *name = opt && opt->name ? opt->name : import_name(path);
	memset(res, 0, sizeof *res);
	FILE *f = import_open(path);
	if (f == NULL)
		return err_set(err, TT_EIO, "%s: %s", name, strerror(errno));
	struct stat sb;
	if (fstat(fileno(f), &sb) != 0) {
		int e = errno;
		fclose(f);
		return err_set(err, TT_EIO, "%s: %s", name, strerror(e));
	}
	if (S_ISDIR(sb.st_mode)) {
		fclose(f);
		return err_set(err, TT_EIO, "%s: is a directory", name);
	}
	if (!S_ISREG(sb.st_mode) || lseek(fileno(f), 0, SEEK_CUR) < 0) {
		FILE *copy = import_spool(f, name, opt, err);
		fclose(f);
		if (copy == NULL)
			return TT_EIO;
		f = copy;
		if (fstat(fileno(f), &sb) != 0)
			sb.st_size = 0;
	}
	int rc = import_stream(st, f, name, (uint64_t)sb.st_size, opt, res, err);
	fclose(f);
	return rc;
}

int import_memory(Store *st, const char *name, const char *data, size_t len,
                  const ImportOptions *opt, ImportResult *res, Err *err)
{
	if (len == 0) {
		memset(res, 0, sizeof *res);
		return err_at(err, TT_EPARSE, name, 1, 1, "body is empty");
	}
	FILE *f = fmemopen((void *)data, len, "rb");
	if (f == NULL)
		return err_set(err, TT_ENOMEM, "%s: cannot open memory stream", name);
	int rc = import_stream(st, f, name, len, opt, res, err);
	fclose(f);
	return rc;
}
