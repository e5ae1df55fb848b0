/*
 * replay.c - a drill's telemetry written into a database over time.
 *
 * Materialising: simulator runs go to <tmp>/run-N/ with batch = 1, so each
 * JSON Lines record holds one whole trace; every file the run's manifest
 * lists (traces, and the pool/CPU gauges when the simulator writes them) is
 * used. Every OTLP JSON Lines file is then indexed: for each record, its
 * byte range and its time (the earliest span start of a trace request, the
 * earliest data point of a metrics request). A file where some non-empty
 * line is neither is not sliced; it goes to the prelude whole, and the
 * importer judges it there (with its located errors).
 *
 * Playing: the records are sorted by start time; the prelude and each
 * slice are copied into small files (one per source file, so traces and
 * metrics stay apart) and imported with import_file(), so
 * replayed data takes exactly the production path and every slice is one
 * transaction a reader sees appear at once. Pauses follow an absolute
 * schedule (slice k is due k * slice_s / speed seconds after the start),
 * so import time does not add up to drift.
 */
#include "replay.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "import.h"
#include "sim.h"
#include "store.h"

typedef struct Rec {
	int file;                 /* index into Replay.files */
	long off;                 /* byte offset of the line */
	long len;                 /* bytes, without the newline */
	int64_t start_ns;         /* earliest span start in it */
} Rec;

typedef struct RFile {
	char *path;
	int sliced;               /* indexed as OTLP JSON Lines */
	int ours;                 /* generated in the temp folder: remove it */
} RFile;

struct Replay {
	const Drill *d;
	ReplayOptions o;
	char *tmp;                /* our temporary folder */
	RFile *files;
	int n_files;
	Rec *recs;                /* sorted by start_ns */
	int n_recs;
	ReplayWindows w;
	int n_slices;
	int64_t stream_from;      /* first slice starts here */
	int64_t stream_to;        /* end of the streamed range */
};

/* ---- helpers ----------------------------------------------------------- */

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int stopped(const Replay *r)
{
	return r->o.stop && atomic_load(r->o.stop);
}

/* Sleeps until mono_s() >= until, waking every 50 ms to honour stop. */
static void sleep_until(const Replay *r, double until)
{
	for (;;) {
		double left = until - mono_s();
		if (left <= 0 || stopped(r))
			return;
		if (left > 0.05)
			left = 0.05;
		struct timespec ts = {0, (long)(left * 1e9)};
		nanosleep(&ts, NULL);
	}
}

static void add_file(Replay *r, const char *path, int ours)
{
	r->files = xrealloc(r->files, (size_t)(r->n_files + 1) * sizeof *r->files);
	r->files[r->n_files].path = xstrdup(path);
	r->files[r->n_files].sliced = 0;
	r->files[r->n_files].ours = ours;
	r->n_files++;
}

/* A time in ns from an OTLP JSON value (string of digits or number), or -1. */
static int64_t ns_of(const cJSON *t)
{
	if (cJSON_IsString(t) && t->valuestring[0]) {
		char *end;
		errno = 0;
		long long x = strtoll(t->valuestring, &end, 10);
		if (!errno && *end == '\0' && x >= 0)
			return x;
	} else if (cJSON_IsNumber(t) && t->valuedouble >= 0 && t->valuedouble < 9.2e18) {
		return (int64_t)t->valuedouble;
	}
	return -1;
}

/* The smallest "timeUnixNano" anywhere under j (metric data points). */
static void min_point_time(const cJSON *j, int64_t *best)
{
	const cJSON *c;
	cJSON_ArrayForEach(c, j) {
		if (c->string && strcmp(c->string, "timeUnixNano") == 0) {
			int64_t v = ns_of(c);
			if (v >= 0 && (*best < 0 || v < *best))
				*best = v;
		} else if (cJSON_IsObject(c) || cJSON_IsArray(c)) {
			min_point_time(c, best);
		}
	}
}

/* The time of one OTLP JSON request: the earliest span start of a trace
 * request, or the earliest data point of a metrics request. -1 when the
 * text is neither. */
static int64_t record_start(const char *text, size_t len)
{
	cJSON *j = cJSON_ParseWithLength(text, len);
	if (j == NULL)
		return -1;
	int64_t best = -1;
	cJSON *rs = cJSON_GetObjectItemCaseSensitive(j, "resourceSpans");
	cJSON *rm = cJSON_GetObjectItemCaseSensitive(j, "resourceMetrics");
	if (cJSON_IsArray(rs)) {
		cJSON *r;
		cJSON_ArrayForEach(r, rs) {
			cJSON *ss = cJSON_GetObjectItemCaseSensitive(r, "scopeSpans"), *sc;
			cJSON_ArrayForEach(sc, ss) {
				cJSON *spans = cJSON_GetObjectItemCaseSensitive(sc, "spans"), *sp;
				cJSON_ArrayForEach(sp, spans) {
					int64_t v = ns_of(cJSON_GetObjectItemCaseSensitive(sp, "startTimeUnixNano"));
					if (v >= 0 && (best < 0 || v < best))
						best = v;
				}
			}
		}
		if (best < 0)
			best = 0;
	} else if (cJSON_IsArray(rm)) {
		min_point_time(rm, &best);
		if (best < 0)
			best = 0;
	}
	cJSON_Delete(j);
	return best;
}

/* Indexes file fi when every non-empty line is an OTLP trace or metrics
 * request. */
static int index_file(Replay *r, int fi, Err *err)
{
	FILE *f = fopen(r->files[fi].path, "rb");
	if (f == NULL)
		return err_set(err, TT_EIO, "%s: %s", r->files[fi].path, strerror(errno));
	Rec *recs = NULL;
	int n = 0, cap = 0, ok = 1;
	char *line = NULL;
	size_t lcap = 0;
	ssize_t got;
	long off = 0;
	while (ok && (got = getline(&line, &lcap, f)) != -1) {
		long len = (long)got;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			len--;
		int blank = 1;
		for (long i = 0; i < len && blank; i++)
			blank = line[i] == ' ' || line[i] == '\t';
		if (!blank) {
			int64_t st = record_start(line, (size_t)len);
			if (st < 0) {
				ok = 0;
				break;
			}
			if (n == cap) {
				cap = cap ? cap * 2 : 256;
				recs = xrealloc(recs, (size_t)cap * sizeof *recs);
			}
			recs[n++] = (Rec){.file = fi, .off = off, .len = len, .start_ns = st};
		}
		off += (long)got;
	}
	free(line);
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		free(recs);
		return err_set(err, TT_EIO, "%s: read error", r->files[fi].path);
	}
	if (!ok || n == 0) {
		free(recs);
		return 0; /* imported whole in the prelude */
	}
	r->recs = xrealloc(r->recs, (size_t)(r->n_recs + n) * sizeof *r->recs);
	memcpy(r->recs + r->n_recs, recs, (size_t)n * sizeof *recs);
	r->n_recs += n;
	r->files[fi].sliced = 1;
	free(recs);
	return 0;
}

static int cmp_rec(const void *a, const void *b)
{
	const Rec *x = a, *y = b;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	if (x->file != y->file)
		return x->file - y->file;
	return (x->off > y->off) - (x->off < y->off);
}

static int generate_run(Replay *r, int ri, SimRun *out, Err *err)
{
	const DrillRun *run = &r->d->runs[ri];
	SimParams p;
	Err e = {0};
	if (sim_params_init(&p, run->scenario, &e))
		return err_set(err, TT_EINVAL, "%s: run %s: %s", r->d->path, run->name, e.msg);
	for (int i = 0; i < run->n_set; i++)
		if (sim_params_set(&p, run->keys[i], run->values[i], &e))
			return err_set(err, TT_EINVAL, "%s: run %s: %s", r->d->path, run->name, e.msg);
	p.batch = 1; /* one trace per record: the unit of a slice */
	if (r->o.max_traces > 0 && p.traces > r->o.max_traces)
		p.traces = r->o.max_traces;
	if (sim_params_check(&p, &e))
		return err_set(err, TT_EINVAL, "%s: run %s: %s", r->d->path, run->name, e.msg);
	Buf dir;
	buf_init(&dir);
	buf_printf(&dir, "%s/run-%d", r->tmp, ri);
	char traces[4096], manifest[4096];
	int rc = sim_generate(&p, buf_str(&dir), 0, out, traces, manifest, sizeof traces, &e);
	if (rc) {
		buf_fini(&dir);
		return err_set(err, rc, "%s: run %s: %s", r->d->path, run->name, e.msg);
	}
	/* every file the manifest lists (traces, and metrics when written) */
	add_file(r, traces, 1);
	FILE *f = fopen(manifest, "rb");
	Buf m;
	buf_init(&m);
	char chunk[4096];
	size_t n;
	while (f && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
		buf_add(&m, chunk, n);
	if (f)
		fclose(f);
	cJSON *j = cJSON_ParseWithLength(buf_str(&m), m.len);
	cJSON *files = cJSON_GetObjectItemCaseSensitive(j, "files"), *x;
	cJSON_ArrayForEach(x, files) {
		size_t kl = x->string ? strlen(x->string) : 0;
		if (!cJSON_IsString(x) || kl == 0 || (kl > 6 && strcmp(x->string + kl - 6, "_shape") == 0) ||
		    strchr(x->valuestring, '/') || x->valuestring[0] == '.')
			continue;
		Buf fp;
		buf_init(&fp);
		buf_printf(&fp, "%s/%s", buf_str(&dir), x->valuestring);
		if (strcmp(buf_str(&fp), traces) != 0)
			add_file(r, buf_str(&fp), 1);
		buf_fini(&fp);
	}
	cJSON_Delete(j);
	buf_fini(&m);
	buf_fini(&dir);
	unlink(manifest);
	return 0;
}

/* The range dr names; *has = 0 and all time when it names none. */
static void resolve_range(const DrillRange *dr, const SimRun *runs, int *has, TimeRange *r)
{
	*has = 0;
	*r = TIME_RANGE_ALL;
	if (dr->kind == DRILL_RANGE_TIME) {
		*has = 1;
		*r = (TimeRange){dr->from_ns, dr->to_ns};
	} else if (dr->kind == DRILL_RANGE_RUN) {
		const SimRun *sr = &runs[dr->run];
		int ph = dr->phase < sr->n_phases ? dr->phase : sr->n_phases - 1;
		if (ph < 0)
			return;
		*has = 1;
		*r = (TimeRange){sr->phases[ph].start_ns, sr->phases[ph].end_ns};
	}
}

/* ---- prepare ------------------------------------------------------------ */

int replay_prepare(const Drill *d, const ReplayOptions *o, Replay **out, Err *err)
{
	*out = NULL;
	Replay *r = xcalloc(1, sizeof *r);
	r->d = d;
	if (o)
		r->o = *o;
	if (r->o.speed == 0)
		r->o.speed = d->replay_speed > 0 ? d->replay_speed : 10;
	if (r->o.slice_s <= 0)
		r->o.slice_s = d->replay_slice_s > 0 ? d->replay_slice_s : 5;
	const char *base = r->o.tmpdir;
	if (base == NULL || base[0] == '\0')
		base = getenv("TMPDIR");
	if (base == NULL || base[0] == '\0')
		base = "/tmp";
	Buf t;
	buf_init(&t);
	buf_printf(&t, "%s/tailtriage-drill-XXXXXX", base);
	r->tmp = xstrdup(buf_str(&t));
	buf_fini(&t);
	if (mkdtemp(r->tmp) == NULL) {
		err_set(err, TT_EIO, "cannot create a temporary folder in %s: %s", base,
		        strerror(errno));
		free(r->tmp);
		r->tmp = NULL;
		replay_free(r);
		return TT_EIO;
	}
	SimRun *runs = xcalloc(d->n_runs ? (size_t)d->n_runs : 1, sizeof *runs);
	int rc = 0;
	for (int i = 0; i < d->n_runs && rc == 0; i++)
		rc = generate_run(r, i, &runs[i], err);
	for (int i = 0; i < d->n_files && rc == 0; i++)
		add_file(r, d->files[i], 0);
	for (int i = 0; i < r->n_files && rc == 0; i++)
		rc = index_file(r, i, err);
	if (rc == 0) {
		resolve_range(&d->window, runs, &r->w.has_window, &r->w.period.win);
		resolve_range(&d->baseline, runs, &r->w.period.has_baseline, &r->w.period.base);
	}
	free(runs);
	if (rc) {
		replay_free(r);
		return rc;
	}
	if (r->n_recs > 1)
		qsort(r->recs, (size_t)r->n_recs, sizeof *r->recs, cmp_rec);
	if (r->w.has_window) {
		r->stream_from = r->w.period.win.from;
		r->stream_to = r->w.period.win.to;
	} else if (r->n_recs > 0) {
		r->stream_from = r->recs[0].start_ns;
		r->stream_to = r->recs[r->n_recs - 1].start_ns + 1;
	}
	if (r->n_recs > 0 && r->stream_to > r->stream_from) {
		double span_s = (double)(r->stream_to - r->stream_from) / 1e9;
		double n = ceil(span_s / r->o.slice_s);
		r->n_slices = n < 1 ? 1 : n > 100000 ? 100000 : (int)n;
	}
	*out = r;
	return 0;
}

void replay_windows(const Replay *r, ReplayWindows *w)
{
	*w = r->w;
}

const char *replay_sheet(const Replay *r)
{
	return r->d->sheet_path;
}

int replay_slices(const Replay *r)
{
	return r->n_slices;
}

/* ---- play ---------------------------------------------------------------- */

enum { IN_SKIP, IN_PRELUDE, IN_STREAM };

static int placement(const Replay *r, int64_t t)
{
	if (!r->w.has_window)
		return IN_STREAM;
	if (time_range_has(r->w.period.win, t))
		return IN_STREAM;
	if (r->w.period.has_baseline) {
		if (time_range_has(r->w.period.base, t))
			return IN_PRELUDE;
		return IN_SKIP;
	}
	return t < r->w.period.win.from ? IN_PRELUDE : IN_SKIP;
}

/* Copies the records of file fi that want (IN_*) selects, and for
 * IN_STREAM start in [from, to), into one JSON Lines file; *count gets how
 * many. One file per source keeps traces and metrics apart: the importer
 * detects the format from the content. */
static int write_chunk(Replay *r, const char *path, int fi, int64_t from, int64_t to, int want,
                       int64_t *count, Err *err)
{
	FILE *out = fopen(path, "wb");
	if (out == NULL)
		return err_set(err, TT_EIO, "%s: %s", path, strerror(errno));
	FILE *in = NULL;
	int in_file = -1;
	char *buf = NULL;
	size_t cap = 0;
	int rc = 0;
	*count = 0;
	for (int i = 0; i < r->n_recs && rc == 0; i++) {
		const Rec *x = &r->recs[i];
		if (x->file != fi)
			continue;
		int where = placement(r, x->start_ns);
		if (where != want)
			continue;
		if (want == IN_STREAM && (x->start_ns < from || x->start_ns >= to))
			continue;
		if (x->file != in_file) {
			if (in)
				fclose(in);
			in = fopen(r->files[x->file].path, "rb");
			in_file = x->file;
			if (in == NULL) {
				rc = err_set(err, TT_EIO, "%s: %s", r->files[x->file].path, strerror(errno));
				break;
			}
		}
		if ((size_t)x->len + 1 > cap) {
			cap = (size_t)x->len + 1;
			buf = xrealloc(buf, cap);
		}
		if (fseek(in, x->off, SEEK_SET) != 0 || fread(buf, 1, (size_t)x->len, in) != (size_t)x->len) {
			rc = err_set(err, TT_EIO, "%s: read error", r->files[x->file].path);
			break;
		}
		if (fwrite(buf, 1, (size_t)x->len, out) != (size_t)x->len || fputc('\n', out) == EOF)
			rc = err_set(err, TT_EIO, "%s: write error", path);
		(*count)++;
	}
	if (in)
		fclose(in);
	free(buf);
	if (fclose(out) != 0 && rc == 0)
		rc = err_set(err, TT_EIO, "%s: write error", path);
	return rc;
}

static int import_one(Store *st, const char *path, const char *format, int64_t *spans, Err *err)
{
	ImportOptions io = {.format = format};
	ImportResult res;
	memset(&res, 0, sizeof res);
	int rc = import_file(st, path, &io, &res, err);
	if (rc == 0)
		*spans += res.counts.spans_added;
	return rc;
}

static int import_chunk(Replay *r, Store *st, int64_t from, int64_t to, int want, int k,
                        ReplayProgress *pg, Err *err)
{
	int rc = 0;
	for (int fi = 0; fi < r->n_files && rc == 0; fi++) {
		if (!r->files[fi].sliced)
			continue;
		Buf path;
		buf_init(&path);
		buf_printf(&path, "%s/slice-%05d-%d.jsonl", r->tmp, k, fi);
		int64_t n = 0;
		rc = write_chunk(r, buf_str(&path), fi, from, to, want, &n, err);
		if (rc == 0 && n > 0) {
			rc = import_one(st, buf_str(&path), NULL, &pg->spans_added, err);
			pg->records += n;
		}
		unlink(buf_str(&path));
		buf_fini(&path);
	}
	return rc;
}

int replay_play(Replay *r, const char *db_path, Err *err)
{
	Store *st = NULL;
	if (store_open(db_path, 0, &st, err))
		return err->code ? err->code : TT_EIO;
	ReplayProgress pg = {.n_slices = r->n_slices};
	double t0 = mono_s();
	int rc = 0;

	/* prelude: the sheet, unsliced files, the baseline */
	if (r->d->sheet_path)
		rc = import_one(st, r->d->sheet_path, "sheet", &pg.spans_added, err);
	for (int i = 0; i < r->n_files && rc == 0; i++)
		if (!r->files[i].sliced)
			rc = import_one(st, r->files[i].path, NULL, &pg.spans_added, err);
	if (rc == 0)
		rc = import_chunk(r, st, 0, 0, IN_PRELUDE, 0, &pg, err);
	pg.data_to_ns = r->w.has_window ? r->w.period.win.from : r->stream_from;
	pg.elapsed_s = mono_s() - t0;
	if (rc == 0 && r->o.progress)
		r->o.progress(r->o.ctx, &pg);

	/* the window, slice by slice */
	double t_stream = mono_s();
	int64_t step = (int64_t)llround(r->o.slice_s * 1e9);
	for (int k = 0; k < r->n_slices && rc == 0 && !stopped(r); k++) {
		if (r->o.speed > 0 && k > 0)
			sleep_until(r, t_stream + (double)k * r->o.slice_s / r->o.speed);
		if (stopped(r))
			break;
		int64_t from = r->stream_from + (int64_t)k * step;
		int64_t to = k + 1 == r->n_slices ? r->stream_to : from + step;
		rc = import_chunk(r, st, from, to, IN_STREAM, k + 1, &pg, err);
		pg.slice = k + 1;
		pg.data_to_ns = to;
		pg.elapsed_s = mono_s() - t0;
		if (rc == 0 && r->o.progress && k + 1 < r->n_slices)
			r->o.progress(r->o.ctx, &pg);
	}
	store_close(st);
	if (rc == 0 && r->o.progress) {
		pg.done = 1;
		pg.elapsed_s = mono_s() - t0;
		r->o.progress(r->o.ctx, &pg);
	}
	return rc;
}

void replay_free(Replay *r)
{
	if (r == NULL)
		return;
	for (int i = 0; i < r->n_files; i++) {
		if (r->files[i].ours)
			unlink(r->files[i].path);
		free(r->files[i].path);
	}
	free(r->files);
	free(r->recs);
	if (r->tmp) {
		/* run folders, also of a run that failed half-way */
		static const char *const names[] = {"traces.jsonl", "traces.json", "metrics.jsonl",
		                                    "manifest.json"};
		for (int i = 0; i < r->d->n_runs; i++) {
			Buf b;
			buf_init(&b);
			for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
				buf_reset(&b);
				buf_printf(&b, "%s/run-%d/%s", r->tmp, i, names[k]);
				unlink(buf_str(&b));
			}
			buf_reset(&b);
			buf_printf(&b, "%s/run-%d", r->tmp, i);
			rmdir(buf_str(&b));
			buf_fini(&b);
		}
		rmdir(r->tmp);
		free(r->tmp);
	}
	free(r);
}
