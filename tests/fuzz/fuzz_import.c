/*
 * fuzz_import.c - one libFuzzer harness per import format, built from this
 * file with -DFUZZ_FORMAT="name" (see CMakeLists.txt here).
 *
 * Each input goes through import_memory() with the format forced, so the
 * format's own parser sees every byte (no sniffing shortcut). Besides the
 * sanitizers' checks it asserts the importers' contract: a failure always
 * carries a located message ("fuzz:LINE:COL: ..." or "fuzz: byte N: ...")
 * and leaves no rows behind.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "import.h"
#include "store.h"

#ifndef FUZZ_FORMAT
#error "build with -DFUZZ_FORMAT=\"name\""
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static Store *st;
static StoreStats before;
static char path[4096];

/* The database lives only as long as the run: libFuzzer ends a run with
 * exit(), so the file and its -wal and -shm go with it. */
static void remove_db(void)
{
	store_close(st);
	st = NULL;
	static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
	char p[sizeof path + 16];
	for (size_t i = 0; i < sizeof suffix / sizeof suffix[0]; i++) {
		snprintf(p, sizeof p, "%s%s", path, suffix[i]);
		unlink(p);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	const char *tmp = getenv("TMPDIR");
	snprintf(path, sizeof path, "%s/tt-fuzz-import-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	int fd = mkstemp(path);
	if (fd >= 0)
		close(fd);
	unlink(path);
	atexit(remove_db);
	Err err = {0};
	if (store_open(path, 0, &st, &err)) {
		fprintf(stderr, "fuzz: %s\n", err.msg);
		abort();
	}
	store_stats(st, &before, &err);
	return 0;
}

static int located(const char *msg)
{
	/* "fuzz:L:C: ..." or "fuzz: byte N: ..." */
	if (strncmp(msg, "fuzz:", 5) != 0)
		return 0;
	const char *p = msg + 5;
	if (strncmp(p, " byte ", 6) == 0)
		return p[6] >= '0' && p[6] <= '9';
	return *p >= '0' && *p <= '9';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ImportOptions opt = {.format = FUZZ_FORMAT};
	ImportResult res;
	Err err = {0};
	int rc = import_memory(st, "fuzz", (const char *)data, size, &opt, &res, &err);
	StoreStats now;
	Err e2 = {0};
	store_stats(st, &now, &e2);
	if (rc != 0) {
		if (!located(err.msg)) {
			fprintf(stderr, "unlocated error: %s\n", err.msg);
			abort();
		}
		if (now.spans != before.spans || now.metric_points != before.metric_points ||
		    now.observations != before.observations) {
			fprintf(stderr, "failed import left rows behind: %s\n", err.msg);
			abort();
		}
	}
	before = now;
	return 0;
}
