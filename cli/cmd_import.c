/*
 * cmd_import.c - `tailtriage import [--db F] [--format NAME] FILE...`
 *
 * Each file is its own transaction: a bad file is reported and rolled back,
 * the others still import; the exit status is 1 if any file failed.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "cli.h"
#include "import.h"

/* The file being imported and whether a progress line is on screen, for
 * the signal handler. */
static const char *volatile current_file;
static volatile sig_atomic_t progress_shown;

typedef struct Progress {
	const char *name;
	int shown;        /* printed a progress line that needs clearing */
	int tty;
	uint64_t last;
} Progress;

static void progress(void *ctx, uint64_t done, uint64_t total)
{
	Progress *p = ctx;
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
	put("tailtriage: interrupted: ");
	if (f) {
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
	      "twice adds nothing and says so.\n\n"
	      "options:\n"
	      "  --db FILE         database (default $TAILTRIAGE_DB or ./tailtriage.db)\n"
	      "  --format NAME     force a format\n"
	      "  --class-key KEY   attribute holding the workload class (default workload.class)\n"
	      "  -q, --quiet       print only errors\n\nformats:\n",
	      out);
	for (const char *const *f = import_formats(); *f; f++)
		fprintf(out, "  %s\n", *f);
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
	while ((c = getopt_long(argc, argv, "d:f:k:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'd': db = optarg; break;
		case 'f': io.format = optarg; break;
		case 'k': io.class_key = optarg; break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
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
	Err err = {0};
	Store *st = NULL;
	catch_stop_signals();
	if (store_open(db, 0, &st, &err))
		return cli_fail("%s", err.msg);
	int failed = 0;
	for (int i = optind; i < argc; i++) {
		Progress pg = {.name = argv[i], .tty = isatty(2)};
		io.progress = progress;
		io.progress_ctx = &pg;
		ImportResult res;
		err_clear(&err);
		current_file = argv[i];
		int rc = import_file(st, argv[i], &io, &res, &err);
		current_file = NULL;
		if (pg.shown)
			fputs("\r\033[K", stderr);
		progress_shown = 0;
		if (rc) {
			fprintf(stderr, "%s\n", err.msg);
			fprintf(stderr, "tailtriage: %s: nothing imported\n", argv[i]);
			failed = 1;
			continue;
		}
		if (quiet)
			continue;
		const StoreSourceCounts *k = &res.counts;
		int any = 0;
		printf("%s: %s:", argv[i], res.format);
		if (k->spans_added || k->spans_duplicate) {
			printf(" %lld spans added, %lld already stored", (long long)k->spans_added,
			       (long long)k->spans_duplicate);
			any = 1;
		}
		if (k->metrics_added || k->metrics_duplicate) {
			printf("%s %lld metric points added, %lld already stored", any ? ";" : "",
			       (long long)k->metrics_added, (long long)k->metrics_duplicate);
			any = 1;
		}
		if (k->observations_added || k->observations_duplicate) {
			printf("%s %lld observations added, %lld already stored", any ? ";" : "",
			       (long long)k->observations_added, (long long)k->observations_duplicate);
			any = 1;
		}
		if (!any && res.unrecognised > 0)
			printf(" nothing stored: the file has none of the fields this format reads "
			       "(is it another format? see --format)");
		else if (!any)
			printf(" nothing to store (the file holds no spans, points or observations)");
		putchar('\n');
		if (res.already)
			printf("%s: same content as %s, imported before: nothing new\n", argv[i],
			       res.already_path);
	}
	store_close(st);
	return failed;
}
