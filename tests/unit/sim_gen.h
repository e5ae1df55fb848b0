/*
 * sim_gen.h - simulate an incident and import it like real telemetry, for
 * the unit tests that diagnose or analyse simulated data. Header-only:
 * include it from a test that links sim, store and importers.
 */
#ifndef TT_TEST_SIM_GEN_H
#define TT_TEST_SIM_GEN_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "import.h"
#include "period.h"
#include "sim.h"
#include "store.h"

typedef struct SimGen {
	char dir[64];
	char db[96];
	Store *st;
	SimRun run;
	SimWorld world;
	SimParams p;
	Period period;   /* the incident (window) and baseline phases */
} SimGen;

static inline void sim_gen_set(SimParams *p, const char *const *kv)
{
	Err err = {0};
	for (int i = 0; kv && kv[i]; i++) {
		char k[64];
		const char *eq = strchr(kv[i], '=');
		assert_non_null(eq);
		snprintf(k, sizeof k, "%.*s", (int)(eq - kv[i]), kv[i]);
		if (sim_params_set(p, k, eq + 1, &err))
			fail_msg("%s", err.msg);
	}
}

/* Simulates the Mercury scenario with the "key=value" settings of base,
 * then of sets (either NULL-terminated, or NULL), into a fresh folder, and
 * imports its traces and metrics into a fresh database. */
static inline void sim_gen(SimGen *g, const char *const *base, const char *const *sets)
{
	Err err = {0};
	memset(g, 0, sizeof *g);
	snprintf(g->dir, sizeof g->dir, "/tmp/tt_test_gen_XXXXXX");
	assert_non_null(mkdtemp(g->dir));
	assert_int_equal(sim_params_init(&g->p, "mercury", &err), 0);
	sim_gen_set(&g->p, base);
	sim_gen_set(&g->p, sets);
	char traces[512], manifest[512], metrics[600];
	if (sim_generate(&g->p, g->dir, 0, &g->run, traces, manifest, sizeof traces, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(sim_world_init(&g->world, &g->p, &err), 0);
	snprintf(g->db, sizeof g->db, "%s/t.db", g->dir);
	assert_int_equal(store_open(g->db, 0, &g->st, &err), 0);
	snprintf(metrics, sizeof metrics, "%s/metrics.jsonl", g->dir);
	const char *files[2] = {traces, metrics};
	for (int i = 0; i < 2; i++) {
		ImportResult res;
		ImportOptions io = {0};
		if (import_file(g->st, files[i], &io, &res, &err))
			fail_msg("%s", err.msg);
	}
	unlink(traces);
	unlink(metrics);
	unlink(manifest);
	int found = 0;
	for (int i = 0; i < g->run.n_phases; i++) {
		const SimPhaseInfo *ph = &g->run.phases[i];
		TimeRange r = {ph->start_ns, ph->end_ns};
		if (strcmp(ph->name, "incident") == 0) {
			g->period.win = r;
			found |= 1;
		} else {
			g->period.base = r;
			found |= 2;
		}
	}
	assert_int_equal(found, 3);
	g->period.has_baseline = 1;
}

static inline void sim_gen_free(SimGen *g)
{
	store_close(g->st);
	char p[200];
	unlink(g->db);
	snprintf(p, sizeof p, "%s-wal", g->db);
	unlink(p);
	snprintf(p, sizeof p, "%s-shm", g->db);
	unlink(p);
	rmdir(g->dir);
	sim_world_fini(&g->world);
}

#endif
