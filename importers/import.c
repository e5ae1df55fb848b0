/*
 * import.c - format detection, source digest and the one-file-one-
 * transaction rule shared by every importer.
 */
#include "import.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "formats.h"

/* The order matters only for ties in sniff(). */
static const ImportFormat formats[] = {
	{"otlp-json", "OTLP/JSON traces (ExportTraceServiceRequest, one document or JSON Lines)",
	 otlp_traces_sniff, otlp_traces_run},
	{"jaeger-json", "Jaeger JSON traces (query API {\"data\":[...]}, one downloaded trace)",
	 jaeger_json_sniff, jaeger_json_run},
	{"zipkin-json", "Zipkin v2 JSON span list", zipkin_json_sniff, zipkin_json_run},
	{"prometheus", "Prometheus text exposition format 0.0.4", prom_text_sniff_prometheus,
	 prom_text_run_prometheus},
	{"openmetrics", "OpenMetrics 1.0 text (ends with # EOF)", prom_text_sniff_openmetrics,
	 prom_text_run_openmetrics},
	{"otlp-metrics", "OTLP/JSON metrics (ExportMetricsServiceRequest, one document or JSON Lines)",
	 otlp_metrics_sniff, otlp_metrics_run},
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

void import_progress(ImportCtx *ctx, uint64_t done)
{
	if (ctx->opt->progress)
		ctx->opt->progress(ctx->opt->progress_ctx, done, ctx->total_bytes);
}

/* Hashes the whole stream and rewinds it. */
static int digest_stream(FILE *f, const char *name, char out[65], Err *err)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	if (md == NULL || EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(md);
		return err_set(err, TT_ENOMEM, "%s: cannot start SHA-256", name);
	}
	char chunk[1 << 16];
	size_t n;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		EVP_DigestUpdate(md, chunk, n);
	int bad = ferror(f);
	unsigned char dig[32];
	unsigned int dlen = 0;
	EVP_DigestFinal_ex(md, dig, &dlen);
	EVP_MD_CTX_free(md);
	if (bad)
		return err_set(err, TT_EIO, "%s: read error: %s", name, strerror(errno));
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", dig[i]);
	rewind(f);
	return 0;
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

	if (digest_stream(f, name, res->sha256, err))
		return TT_EIO;
	if (store_source_find_digest(st, res->sha256, &res->already, res->already_path,
	                             sizeof res->already_path, err))
		return TT_ESTORE;

	if (store_begin(st, err))
		return TT_ESTORE;
	int64_t source_id = 0;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	int64_t now_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
	if (store_source_add(st, name, res->sha256, fmt->name, now_ms, &source_id, err))
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
	};
	if (fmt->run(&ctx, f))
		goto fail;
	const StoreSourceCounts *c = &res->counts;
	int nothing_new = c->spans_added == 0 && c->metrics_added == 0 && c->observations_added == 0;
	int had_any = c->spans_duplicate > 0 || c->metrics_duplicate > 0 ||
	              c->observations_duplicate > 0;
	if (store_source_finish(st, source_id, c, nothing_new && had_any ? "duplicate" : "imported",
	                        err))
		goto fail;
	if (store_commit(st, err))
		goto fail;
	return 0;
fail:
	store_rollback(st);
	memset(&res->counts, 0, sizeof res->counts);
	return err && err->code ? err->code : TT_EPARSE;
}

int import_file(Store *st, const char *path, const ImportOptions *opt, ImportResult *res,
                Err *err)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return err_set(err, TT_EIO, "%s: %s", path, strerror(errno));
	struct stat sb;
	uint64_t total = 0;
	if (fstat(fileno(f), &sb) == 0) {
		if (S_ISDIR(sb.st_mode)) {
			fclose(f);
			return err_set(err, TT_EIO, "%s: is a directory", path);
		}
		total = (uint64_t)sb.st_size;
	}
	int rc = import_stream(st, f, path, total, opt, res, err);
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
