/*
 * training.h - one training attempt at a drill: its data, the diagnosis
 * engine's view of it, and the scoring of answers into the history.
 *
 * training_prepare() loads the drill's model and sheet, plays the drill's
 * telemetry at full speed into a data database (a scratch one in
 * $TMPDIR/tailtriage-train-* unless one is given, removed by
 * training_fini()) and runs the diagnosis engine on the drill's window and
 * baseline, judging every decision the drill offers. training_score()
 * scores one set of answers, stores the attempt in the history database and
 * writes the explanation. Used by `drill train` (answers from a file or from
 * the dashboard's Drill pane).
 */
#ifndef TT_TRAINING_H
#define TT_TRAINING_H

#include <stdint.h>

#include "buf.h"
#include "diagnose.h"
#include "drill.h"
#include "order.h"
#include "replay.h"
#include "score.h"
#include "sheet.h"

typedef struct TrainingOptions {
	const char *data_db;      /* where to put the drill's data; NULL: a scratch file */
	int64_t max_traces;       /* cap on the simulator's traces per window; 0: none */
} TrainingOptions;

typedef struct TrainingSession {
	Drill *d;                 /* set by the caller, freed by training_fini() */
	Model *model;
	Sheet *sheet;
	Diagnosis *dx;
	ReplayWindows w;
	char *data_db;            /* where the drill's data lives */
	char *scratch_dir;        /* removed with the scratch data db */
	const char *history_db;   /* set by the caller: where attempts go */
	const char *person;       /* set by the caller */
	int64_t started_ms;       /* set by the caller */
	int stored;               /* attempts stored (the Drill pane may submit several) */
	double last_score, last_max;
	DrillOrder order;         /* set by the caller: the order the choices are shown in */
	int has_order;            /* 0: answers prepared elsewhere, order unknown */
} TrainingSession;

int training_prepare(TrainingSession *s, const TrainingOptions *o, Err *err);

/* Scores a, stores the attempt as mode ("answers", "tui"), and writes the
 * explanation (score, deductions, debrief, the engine's top three) into
 * out. */
int training_score(TrainingSession *s, const Answers *a, const char *mode, Buf *out, Err *err);

void training_fini(TrainingSession *s);

#endif
