/*
 * cmd_import.c - `tailtriage import [--db F] [--format NAME] FILE...`
 *
 * Each file is its own transaction: a bad file is reported and rolled back,
 * the others still import; the exit status is 1 if any file failed.
 *
 * A database that does not exist yet is created by a bulk load
 * (store_bulk_open): it appears, complete, only when every file has been
 * read. What each file added is said then, not before, since until then
 * nothing is in the database. If another program created the database
 * meanwhile, the files are imported again into it the usual way. Stopped
 * by a signal, it removes its temporary file and says that nothing was
 * imported.
 */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "cli.h"
#include "import.h"

/* The file being imported and whether a progress line is on screen, for
 * the signal handler; during a bulk load, its temporary file (which the
 * handler removes: nothing of the load is kept) and the database name. */
static const char *volatile current_file;
static volatile sig_atomic_t progress_shown;
static const char *volatile bulk_tmp;
static const char *volatile bulk_db;

typedef struct Progress {
	const char *name;
	int shown;        /* printed a progress line that needs clearing */
	int tty;
	uint64_t last;
} Progress;

static void progress(void *ctx, uint64_t done, uint64_t total)
{
	Progress *p = ctx;
	if (p->tty && total == 0 && done >= (8u << 20) && done - p->last >= (16u << 20)) {
		/* an input being copied before its import: its size is not known */
		p->last = done;
		fprintf(stderr, "\r%s: reading, %llu MB so far", p->name, (unsigned long long)(done >> 20));
		p->shown = 1;
		progress_shown = 1;
		return;
	}
	if (!p->tty || total < (8u << 20))
		return;
	if (done - p->last < (4u << 20) && done != total)
		return;
	p->last = done;
	fprintf(stderr, "\r%s: %5.1f%% (%llu of %llu MB)", p->name, 100.0 * (double)done / (double)total,
	        (unsigned long long)(done >> 20), (unsigned long long)(total >> 20));
	p->shown = 1;
	progress_shown = 1;
}

static void put(const char *s)
{
	size_t n = strlen(s);
	while (n > 0) {
		ssize_t w = write(2, s, n);
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* Ctrl-C, kill or a closed terminal in the middle of a file: its
 * transaction is never committed, so SQLite drops it; say so and leave.
 * Only async-signal-safe calls here. */
static void on_stop(int sig)
{
	const char *f = current_file;
	if (progress_shown)
		put("\r\033[K");
	const char *tmp = bulk_tmp, *db = bulk_db;
	if (tmp)
		unlink(tmp);   /* ours: this process holds its lock */
	put("tailtriage: interrupted: ");
	if (tmp && db) {
		put("nothing imported; ");
		put(db);
		put(" was not created");
	} else if (f) {
		put("nothing imported from ");
		put(f);
	} else {
		put("nothing imported");
	}
	put("\n");
	_exit(128 + sig);
}

static void catch_stop_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		/* a signal someone chose to ignore (nohup) stays ignored */
		struct sigaction old;
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	}
}

static void usage(FILE *out)
{
	fputs("usage: tailtriage import [--db FILE] [--format NAME] [--class-key KEY] FILE...\n\n"
	      "Imports telemetry files into the database (created when missing). The format\n"
	      "is detected from the content; --format forces one. Each file is one\n"
	      "transaction: a file with any error adds nothing. Importing the same data\n"
	      "twice adds nothing and says so. FILE - is the standard input; an input\n"
	      "that cannot be read twice (a pipe, <(...)) is first copied to a temporary\n"
	      "file in $TMPDIR (else /tmp), which is gone when the import ends.\n\n"
	      "A database that does not exist yet is built under a temporary name\n"
	      "(.NAME.import beside it) and appears, complete, when every file has been\n"
	      "read; the lines saying what each file added are printed then. Killed\n"
	      "before that, or when no file could be imported, the import leaves no\n"
	      "database.\n\n"
	      "options:\n"
	      "  --db FILE         database (default $TAILTRIAGE_DB or ./tailtriage.db)\n"
	      "  --format NAME     force a format\n"
	      "  --class-key KEY   attribute holding the workload class (default workload.class)\n"
	      "  -q, --quiet       print only errors\n\nformats:\n",
	      out);
	for (const char *const *f = import_formats(); *f; f++)
		fprintf(out, "  %s\n", *f);
}

/* Where the per-file messages go: straight to stdout/stderr, or kept in
 * order until a bulk load has put the database in place. */
typedef struct Say {
	int keep;
	struct SayLine {
		int to_err;
		char *text;
	} *lines;
	int n;
} Say;

static void say(Say *s, int to_err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void say(Say *s, int to_err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (!s->keep) {
		vfprintf(to_err ? stderr : stdout, fmt, ap);
		va_end(ap);
		return;
	}
	va_list ap2;
	va_copy(ap2, ap);
	int len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *text = xcalloc(1, (size_t)(len > 0 ? len : 0) + 1);
	vsnprintf(text, (size_t)(len > 0 ? len : 0) + 1, fmt, ap2);
	va_end(ap2);
	s->lines = xrealloc(s->lines, (size_t)(s->n + 1) * sizeof *s->lines);
	s->lines[s->n].to_err = to_err;
	s->lines[s->n].text = text;
	s->n++;
}

/* Prints (when show) and forgets the kept lines. */
static void say_flush(Say *s, int show)
{
	for (int i = 0; i < s->n; i++) {
		if (show)
			fputs(s->lines[i].text, s->lines[i].to_err ? stderr : stdout);
		free(s->lines[i].text);
	}
	free(s->lines);
	s->lines = NULL;
	s->n = 0;
	fflush(stdout);
}

/* The inputs: what to open and what to call each. */
typedef struct Inputs {
	int n;
	char **path;               /* NULL: the input could not be copied */
	const char **name;
	FILE **copy;               /* open copies, which the paths name */
	char **copy_err;
} Inputs;

/* Imports each input into st; returns how many failed. */
static int import_all(Store *st, const Inputs *in, ImportOptions *io, int quiet, Say *out)
{
	int failed = 0;
	for (int i = 0; i < in->n; i++) {
		const char *name = in->name[i];
		if (in->path[i] == NULL) {
			say(out, 1, "%s\n", in->copy_err[i]);
			say(out, 1, "tailtriage: %s: nothing imported\n", name);
			failed++;
			continue;
		}
		io->name = name;
		Progress pg = {.name = name, .tty = isatty(2)};
		io->progress = progress;
		io->progress_ctx = &pg;
		ImportResult res;
		Err err = {0};
		current_file = name;
		int rc = import_file(st, in->path[i], io, &res, &err);
		current_file = NULL;
		if (pg.shown)
			fputs("\r\033[K", stderr);
		progress_shown = 0;
		if (rc) {
			say(out, 1, "%s\n", err.msg);
			say(out, 1, "tailtriage: %s: nothing imported\n", name);
			failed++;
			continue;
		}
		/* what was left out on purpose, a line each, on stderr (-q too) */
		Buf sk;
		buf_init(&sk);
		import_skips_text(&res.skips, name, &sk);
		for (const char *p = buf_str(&sk), *e; *p; p = e + 1) {
			e = strchr(p, '\n');
			say(out, 1, "%s: %.*s\n", name, (int)(e - p), p);
		}
		buf_fini(&sk);
		const StoreSourceCounts *k = &res.counts;
		if (res.unrecognised > 0 && (k->spans_added || k->spans_duplicate || k->metrics_added ||
		                             k->metrics_duplicate))
			say(out, 1, "%s: %lld request%s skipped: %s reads none of their fields "
			    "(another signal? see --format)\n", name, (long long)res.unrecognised,
			    res.unrecognised == 1 ? "" : "s", res.format);
		if (quiet)
			continue;
		Buf line;
		buf_init(&line);
		buf_printf(&line, "%s: %s:", name, res.format);
		int any = 0;
		if (k->spans_added || k->spans_duplicate) {
			buf_printf(&line, " %lld spans added, %lld already stored",
			           (long long)k->spans_added, (long long)k->spans_duplicate);
			any = 1;
		}
		if (k->metrics_added || k->metrics_duplicate) {
			buf_printf(&line, "%s %lld metric points added, %lld already stored",
			           any ? ";" : "", (long long)k->metrics_added,
			           (long long)k->metrics_duplicate);
			any = 1;
		}
		if (k->observations_added || k->observations_duplicate) {
			buf_printf(&line, "%s %lld observations added, %lld already stored",
			           any ? ";" : "", (long long)k->observations_added,
			           (long long)k->observations_duplicate);
			any = 1;
		}
		if (!any && res.unrecognised > 0)
			buf_adds(&line, " nothing stored: the file has none of the fields this format "
			                "reads (is it another format? see --format)");
		else if (!any)
			buf_adds(&line, " nothing to store (the file holds no spans, points or observations)");
		say(out, 0, "%s\n", buf_str(&line));
		buf_fini(&line);
		if (res.already)
			say(out, 0, "%s: same content as %s, imported before: nothing new\n", name,
			    res.already_path);
	}
	io->name = NULL;
	return failed;
}

/* The inputs of the command line. One that cannot be read twice (the
 * standard input, a pipe, <(...)) is copied first into an unnamed
 * temporary file and opened again through /proc/self/fd: then every
 * input can be read a second time, as the bulk load wants (should another
 * program create the database meanwhile), and what is read is what the
 * pipe gave, under its own name. Where /proc is missing the input is left
 * to import_file(), which copies it itself. */
static void inputs_open(Inputs *in, char **files, int n, int quiet)
{
	in->n = n;
	in->path = xcalloc((size_t)n, sizeof *in->path);
	in->name = xcalloc((size_t)n, sizeof *in->name);
	in->copy = xcalloc((size_t)n, sizeof *in->copy);
	in->copy_err = xcalloc((size_t)n, sizeof *in->copy_err);
	for (int i = 0; i < n; i++) {
		in->name[i] = import_name(files[i]);
		in->path[i] = xstrdup(files[i]);
		if (!import_needs_copy(files[i]) || access("/proc/self/fd", R_OK) != 0)
			continue;
		int is_stdin = strcmp(files[i], "-") == 0;
		if (is_stdin && isatty(STDIN_FILENO) && !quiet)
			fputs("tailtriage: reading the standard input (end it with Ctrl-D)\n", stderr);
		FILE *f = import_open(files[i]);
		if (f == NULL)
			continue; /* import_file() says why */
		Err err = {0};
		Progress pg = {.name = in->name[i], .tty = isatty(2) && !quiet};
		ImportOptions po = {.progress = progress, .progress_ctx = &pg};
		in->copy[i] = import_spool(f, in->name[i], &po, &err);
		fclose(f);
		if (pg.shown)
			fputs("\r\033[K", stderr);
		progress_shown = 0;
		free(in->path[i]);
		in->path[i] = NULL;
		if (in->copy[i] == NULL) {
			in->copy_err[i] = xstrdup(err.msg);
			continue;
		}
		char p[64];
		snprintf(p, sizeof p, "/proc/self/fd/%d", fileno(in->copy[i]));
		in->path[i] = xstrdup(p);
	}
}

static void inputs_close(Inputs *in)
{
	for (int i = 0; i < in->n; i++) {
		free(in->path[i]);
		free(in->copy_err[i]);
		if (in->copy[i])
			fclose(in->copy[i]);
	}
	free(in->path);
	free(in->name);
	free(in->copy);
	free(in->copy_err);
}

/* A new database can be bulk-loaded when it is a plain path that does not
 * exist yet and every input could be read a second time, should another
 * program create the database meanwhile: a regular file (or one that
 * fails the same way twice: missing, a directory). */
static int want_bulk(const char *db, const Inputs *in)
{
	struct stat sb;
	if (strcmp(db, ":memory:") == 0 || strncmp(db, "file:", 5) == 0 || db[0] == '\0')
		return 0;
	if (stat(db, &sb) == 0 || errno != ENOENT)
		return 0;
	for (int i = 0; i < in->n; i++)
		if (in->path[i] && import_needs_copy(in->path[i]))
			return 0;
	return 1;
}

/* The import proper, once the inputs can be opened by path. */
static int cmd_import_inputs(const char *db, const Inputs *in, ImportOptions *io, int quiet)
{
	Err err = {0};
	Store *st = NULL;
	if (want_bulk(db, in) && store_bulk_open(db, &st, &err))
		return cli_fail("%s", err.msg);
	if (st) {
		Say kept = {.keep = 1};
		char *tmp = store_bulk_temp_path(db);
		bulk_db = db;
		bulk_tmp = tmp;
		int failed = import_all(st, in, io, quiet, &kept);
		if (failed == in->n) {
			/* nothing could be imported: the database is not created
			 * (closing the bulk load removes its temporary file) */
			store_close(st);
			bulk_tmp = NULL;
			bulk_db = NULL;
			free(tmp);
			say_flush(&kept, 1);
			return cli_fail("%s: not created: no file could be imported", db);
		}
		bulk_tmp = NULL;  /* from here on, store_bulk_finish() owns the file */
		bulk_db = NULL;
		free(tmp);
		int rc = store_bulk_finish(st, &err);
		st = NULL;
		if (rc == 0) {
			say_flush(&kept, 1);
			return failed > 0;
		}
		say_flush(&kept, 0);
		if (rc != STORE_BULK_RACED) {
			cli_fail("%s", err.msg);
			return cli_fail("%s: nothing imported", db);
		}
		/* another program created the database meanwhile: append */
	}
	store_bulk_cleanup(db);
	if (store_open(db, 0, &st, &err))
		return cli_fail("%s", err.msg);
	Say direct = {0};
	int failed = import_all(st, in, io, quiet, &direct);
	store_close(st);
	return failed > 0;
}

int cmd_import(int argc, char **argv)
{
	static const struct option opts[] = {
		{"db", required_argument, NULL, 'd'},
		{"format", required_argument, NULL, 'f'},
		{"class-key", required_argument, NULL, 'k'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *db = cli_default_db();
	ImportOptions io = {0};
	int quiet = 0, c;
	optind = 1;
	while ((c = cli_getopt("import", argc, argv, "d:f:k:qh", opts)) != -1) {
		switch (c) {
		case 'd': db = optarg; break;
		case 'f': io.format = optarg; break;
		case 'k': io.class_key = optarg; break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); return 0;
		default: return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	if (io.format) {
		int known = 0;
		for (const char *const *f = import_formats(); *f; f++)
			known |= strcmp(*f, io.format) == 0;
		if (!known) {
			Buf b;
			buf_init(&b);
			for (const char *const *f = import_formats(); *f; f++)
				buf_printf(&b, "%s%s", b.len ? ", " : "", *f);
			cli_fail("unknown format '%s' (known: %s)", io.format, buf_str(&b));
			buf_fini(&b);
			return 2;
		}
	}
	/* One malloc arena for the whole import: its phases run on different
	 * threads (the parser, the writer, the readers of the aggregates'
	 * pass), and with an arena each, what one phase frees cannot be reused
	 * by the next, so the peak grows with the threads (1M spans: 63 MB
	 * against 58, in the same time). */
	mallopt(M_ARENA_MAX, 1);
	char **files = argv + optind;
	int n = argc - optind;
	catch_stop_signals();
	Inputs in = {0};
	inputs_open(&in, files, n, quiet);
	int rc = cmd_import_inputs(db, &in, &io, quiet);
	inputs_close(&in);
	return rc;
}
