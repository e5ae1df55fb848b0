/*
 * fuzz_otlp.c - libFuzzer harness for the OTLP/JSON trace importer.
 *
 * Each input is run through otlp_traces_run() inside a transaction that is
 * always rolled back, so the database never grows. Besides the sanitizers'
 * checks, it asserts the importer's own contract: a failure always carries
 * a located message ("fuzz:LINE:COL: ..." or "fuzz: byte N: ...").
 *
 * Build and run (clang only; see CMakeLists.txt here):
 *   cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DTT_FUZZ=ON
 *   cmake --build build-fuzz --target fuzz_otlp
 *   build-fuzz/tests/fuzz/fuzz_otlp -max_len=65536 -timeout=10 \
 *       -dict=tests/fuzz/otlp.dict CORPUS_DIR tests/fixtures/otlp
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats.h"
#include "store.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static Store *st;
static char dir[4096];

/* The folder lives only as long as the run (libFuzzer ends with exit()). */
static void remove_db(void)
{
	store_close(st);
	st = NULL;
	static const char *const names[] = {"fuzz.db", "fuzz.db-wal", "fuzz.db-shm",
	                                    "fuzz.db-journal"};
	char p[sizeof dir + 32];
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		snprintf(p, sizeof p, "%s/%s", dir, names[i]);
		unlink(p);
	}
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/tt-fuzz-otlp-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	char path[sizeof dir + 16];
	Err err = {0};
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		abort();
	}
	atexit(remove_db);
	snprintf(path, sizeof path, "%s/fuzz.db", dir);
	if (store_open(path, 0, &st, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		abort();
	}
	return 0;
}

static int located(const char *msg)
{
	long a, b;
	char c;
	if (sscanf(msg, "fuzz:%ld:%ld%c", &a, &b, &c) == 3 && c == ':' && a >= 1 && b >= 1)
		return 1;
	return sscanf(msg, "fuzz: byte %ld%c", &a, &c) == 2 && c == ':';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;  /* import.c refuses empty input before any importer */
	FILE *f = fmemopen((void *)data, size, "rb");
	if (f == NULL)
		return 0;
	Err err = {0};
	StoreSourceCounts counts = {0};
	ImportOptions opt = {0};
	int64_t source_id = 0;
	if (store_begin(st, &err) ||
	    store_source_add(st, "fuzz", "0", "otlp-json", 0, &source_id, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		abort();
	}
	ImportSkips skips = {0};
	ImportCtx ctx = {
		.st = st,
		.name = "fuzz",
		.source_id = source_id,
		.opt = &opt,
		.class_key = "workload.class",
		.counts = &counts,
		.total_bytes = size,
		.err = &err,
		.skips = &skips,
	};
	int rc = otlp_traces_run(&ctx, f);
	if (rc && !located(err.msg)) {
		fprintf(stderr, "unlocated error: %s\n", err.msg);
		abort();
	}
	if (rc == 0 && counts.spans_added + counts.spans_duplicate < 0)
		abort();
	store_rollback(st);
	fclose(f);
	return 0;
}
