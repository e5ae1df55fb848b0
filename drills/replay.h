/*
 * replay.h - play a drill's telemetry into a database over time.
 *
 * replay_prepare() materialises the drill's data in a private temporary
 * folder: simulator runs are generated (one trace per JSON Lines record,
 * plus the metrics file when the simulator writes one), and every OTLP JSON
 * Lines file (traces or metrics) is indexed by the time of each record. replay_play() then writes it into a database through the
 * importers, the same path as production telemetry:
 *   prelude  the observation sheet, files that are not OTLP JSON Lines, and
 *            the records in the baseline range, in one go;
 *   slices   the records in the window, in time order, slice_s of data time
 *            per import (one transaction each), paced so that data time
 *            runs `speed` times faster than the wall clock.
 * A reader (the TUI) sees the database grow slice by slice. When the drill
 * declares both a window and a baseline, records outside both are not
 * imported; without a window everything is played in time order.
 *
 * Ownership: a Replay owns its temporary folder and removes it in
 * replay_free(). replay_play() opens its own database connection, so it
 * may run on another thread while others read the database.
 */
#ifndef TT_REPLAY_H
#define TT_REPLAY_H

#include <stdatomic.h>
#include <stdint.h>

#include "drill.h"
#include "err.h"
#include "period.h"

typedef struct ReplayWindows {
	int has_window;           /* 0: the drill names no window (period.win is
	                           * then all time) */
	Period period;
} ReplayWindows;

typedef struct ReplayProgress {
	int slice;                /* slices imported so far (0 after the prelude) */
	int n_slices;
	int64_t data_to_ns;       /* data imported up to this time */
	int64_t spans_added;      /* spans added so far (all imports) */
	int64_t records;          /* OTLP records imported so far */
	double elapsed_s;         /* wall time since replay_play() started */
	int done;                 /* the last call */
} ReplayProgress;

typedef struct ReplayOptions {
	double speed;             /* data seconds per wall second; 0: the drill's;
	                           * < 0: as fast as possible (no pauses) */
	double slice_s;           /* data seconds per import; 0: the drill's */
	int64_t max_traces;       /* cap on each run's "traces" (fast tests); 0: none */
	const char *tmpdir;       /* NULL: $TMPDIR, else /tmp */
	/* Called after the prelude and after every slice, on the thread that
	 * runs replay_play(). May be NULL. */
	void (*progress)(void *ctx, const ReplayProgress *p);
	void *ctx;
	atomic_int *stop;         /* non-zero stops replay_play() early; may be NULL */
} ReplayOptions;

typedef struct Replay Replay;

/* Generates and indexes the drill's data (this may take seconds for
 * simulator runs). o is copied. */
int replay_prepare(const Drill *d, const ReplayOptions *o, Replay **out, Err *err);

/* The window and baseline of the drill, resolved (simulator phases become
 * time ranges). */
void replay_windows(const Replay *r, ReplayWindows *w);

/* The observation sheet path, or NULL (borrowed from the drill). */
const char *replay_sheet(const Replay *r);

/* Number of slices replay_play() will import after its prelude. */
int replay_slices(const Replay *r);

/* Imports the data into the database at db_path (created when missing).
 * Returns 0 (also when stopped early), or a negative code with err set:
 * then the slices imported before the error stay in the database. */
int replay_play(Replay *r, const char *db_path, Err *err);

void replay_free(Replay *r);              /* NULL is a no-op; removes temp files */

#endif
