/*
 * test_one_analysis.c - `report` and `diagnose` read the spans for one
 * analysis per question (issue 14): the model's findings, the budgets'
 * evidence and the diagnosis all use the analysis the command computed,
 * instead of each computing its own, and the evidence's request sets come
 * from the same pass over the spans. Counted with analysis_full_reads()
 * and evidence_request_reads() around the real subcommands on the diag
 * fixtures.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "analysis.h"
#include "evidence.h"
#include "cli.h"
#include "helpers.h"
#include "import.h"

#define FX "fixtures/diag/"

static char db[128];

static int setup(void **state)
{
	(void)state;
	tmp_db_path(db, sizeof db);
	Store *st = NULL;
	Err err = {0};
	if (store_open(db, 0, &st, &err))
		return -1;
	static const char *const files[] = {FX "requests.otlp.json", FX "pool_metrics.otlp.json",
	                                    NULL};
	for (int i = 0; files[i]; i++) {
		ImportResult res;
		ImportOptions io = {0};
		if (import_file(st, files[i], &io, &res, &err)) {
			print_error("%s\n", err.msg);
			store_close(st);
			return -1;
		}
	}
	store_close(st);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rm_db(db);
	return 0;
}

static int64_t req_reads; /* request passes of the evidence (last run) */

/* Runs a subcommand with its stdout thrown away; returns its exit code and
 * sets *reads to the full span reads it made, req_reads to the evidence's
 * own request passes. */
static int run(int (*cmd)(int, char **), char **argv, int64_t *reads)
{
	int argc = 0;
	while (argv[argc])
		argc++;
	fflush(stdout);
	int saved = dup(1), null = open("/dev/null", O_WRONLY);
	assert_true(saved >= 0 && null >= 0);
	dup2(null, 1);
	close(null);
	int64_t before = analysis_full_reads(), rbefore = evidence_request_reads();
	int rc = cmd(argc, argv);
	*reads = analysis_full_reads() - before;
	req_reads = evidence_request_reads() - rbefore;
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	return rc;
}

static void test_report_reads_once(void **state)
{
	(void)state;
	int64_t n = -1;
	char *argv[] = {"report", "--db", db, "--model", FX "mini.model.json", NULL};
	assert_int_equal(run(cmd_report, argv, &n), 0);
	assert_int_equal(n, 1); /* model check + analysis + budgets' evidence */
	assert_int_equal(req_reads, 0); /* the budgets' requests came with it */
	char *json[] = {"report", "--db", db, "--model", FX "mini.model.json", "--format", "json",
	                "--window", "2026-07-14T18:00:00Z..2026-07-14T18:10:00Z", NULL};
	assert_int_equal(run(cmd_report, json, &n), 0);
	assert_int_equal(n, 1);
	/* one class is another question: the model's findings are over every
	 * class, so they need their own analysis */
	char *cls[] = {"report", "--db", db, "--model", FX "mini.model.json", "--class", "gold",
	               NULL};
	assert_int_equal(run(cmd_report, cls, &n), 0);
	assert_int_equal(n, 2);
}

/* --sample: a population over the bound is read as a sample through the
 * trace index (no read of every span); a bad bound is a usage error */
static void test_sample_reads_no_full_pass(void **state)
{
	(void)state;
	int64_t n = -1;
	char *rep[] = {"report", "--db", db, "--model", FX "mini.model.json", "--sample", "2", NULL};
	assert_int_equal(run(cmd_report, rep, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(req_reads, 0);
	char *dx[] = {"diagnose", "--db", db, "--model", FX "mini.model.json", "--sample", "2",
	              NULL};
	assert_int_equal(run(cmd_diagnose, dx, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(req_reads, 0);
	char *all[] = {"report", "--db", db, "--model", FX "mini.model.json", "--sample", "all", NULL};
	assert_int_equal(run(cmd_report, all, &n), 0);
	assert_int_equal(n, 1);
	char *bad[] = {"report", "--db", db, "--sample", "-3", NULL};
	assert_int_equal(run(cmd_report, bad, &n), 2);
	char *word[] = {"diagnose", "--db", db, "--sample", "many", NULL};
	assert_int_equal(run(cmd_diagnose, word, &n), 2);
}

static void test_diagnose_reads_once(void **state)
{
	(void)state;
	int64_t n = -1;
	char *argv[] = {"diagnose", "--db", db, "--model", FX "mini.model.json", NULL};
	assert_int_equal(run(cmd_diagnose, argv, &n), 0);
	assert_int_equal(n, 1); /* model check + evidence + diagnosis */
	assert_int_equal(req_reads, 0); /* the request sets came with it */
	char *json[] = {"diagnose", "--db", db, "--model", FX "mini.model.json", "--format", "json",
	                NULL};
	assert_int_equal(run(cmd_diagnose, json, &n), 0);
	assert_int_equal(n, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_report_reads_once),
	    cmocka_unit_test(test_diagnose_reads_once),
	    cmocka_unit_test(test_sample_reads_no_full_pass),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
