/*
 * dx_live.h - the diagnosis kept up to date in the background, for the
 * dashboard: budget evidence in the header and the hypothesis board.
 *
 * A DxLive opens the database read-only twice: a worker thread runs
 * diagnose_run() on its own connection whenever the caller asks for a new
 * (window, baseline, data version), and the caller's connection runs checks
 * on demand. Nothing blocks on a diagnosis: dx_live_get() returns the
 * latest finished one (possibly for an earlier request) at once.
 *
 * A request may come with the caller's analysis of the same window and
 * baseline (the dashboard's, of all classes): the diagnosis then reads it
 * instead of computing the same analysis again on its own connection
 * (its request pass still reads the spans). The DxLive holds it with
 * analysis_ref() while it needs it, so the caller may free its own hold
 * whenever it likes.
 *
 * Threading: every function must be called from one thread (the owner);
 * the worker is internal. The model is borrowed for the DxLive's life.
 */
#ifndef TT_DX_LIVE_H
#define TT_DX_LIVE_H

#include <stdint.h>

#include "checks.h"
#include "diagnose.h"
#include "period.h"

typedef struct DxLive DxLive;

typedef struct DxLiveKey {
	Period period;               /* window (resolved bounds) and baseline */
	int64_t data_version;        /* store_data_version() the caller saw */
	int open_from, open_to;      /* 1: the window's end was asked open: the
	                              * diagnosis reads it open (metric points
	                              * past the last span count), while
	                              * period.win keeps the data bounds
	                              * that identify the result */
	char ep_service[256];        /* the endpoint diagnosed (analysis/endpoints.h), */
	char ep_route[768];          /* "" "": the default one */
} DxLiveKey;

/* The key of the window and baseline a's populations cover (the
 * dashboard's analysis on screen): their resolved bounds, which ends were
 * asked open, a's endpoint and data version. The model is used for the
 * endpoint it describes (its root; any when it names none); another
 * endpoint is diagnosed without it. */
DxLiveKey dx_live_key(const Analysis *a);

/* The window and baseline the diagnosis of k reads: k's bounds, with an
 * end that was asked open open again (metric points past the last span
 * belong to an open window). */
Period dx_live_key_period(const DxLiveKey *k);

/* 1 when a and b name the same window, baseline and endpoint (data
 * versions aside). */
int dx_live_same_range(const DxLiveKey *a, const DxLiveKey *b);

/* Opens db_path read-only (twice) and starts the worker. Errors: TT_EIO. */
int dx_live_open(const char *db_path, const Model *m, DxLive **out, Err *err);

/* The same, with the rest of every diagnosis's options taken from base:
 * model, sheet, catalog_path and decide (its window, baseline and analysis
 * are ignored: they come with each request). A drill passes its
 * observation sheet and the decisions it asks about. Everything base
 * points to is borrowed for the DxLive's life. */
int dx_live_open_with(const char *db_path, const DiagnoseOptions *base, DxLive **out, Err *err);
void dx_live_close(DxLive *l);                 /* waits for the worker; NULL no-op */

/* The model of the diagnoses asked for from now on (a model inferred
 * again as data arrives); borrowed for the DxLive's life, like the first.
 * The diagnosis on screen is of the old model: the next dx_live_get()
 * asks again, whatever its key. */
void dx_live_set_model(DxLive *l, const Model *m);

/* The sibling skew tolerance of the diagnoses asked for from now on (NULL:
 * the default). */
void dx_live_set_skew(DxLive *l, const SkewTolerance *skew);

/* How the traces were sampled (--sampled), for the diagnoses asked for
 * from now on. */
void dx_live_set_sampled(DxLive *l, EvSampling sampled);

/* Asks for the diagnosis of k (a no-op when it is the one being computed or
 * already done; when only k's data version moved, at most once per 15 s)
 * and returns the latest finished diagnosis, or NULL when
 * none has finished yet. *fresh (may be NULL) is set to 1 when it answers
 * k itself. The pointer is valid until the next dx_live_get() or
 * dx_live_close().
 *
 * a (may be NULL) is the caller's analysis: when the request is queued and
 * a answers exactly what the diagnosis would compute (k's window as asked,
 * open ends included, and baseline; all classes; the DxLive's model and
 * skew tolerance; k's data version: analysis_answers()), the diagnosis
 * reuses it, holding it with analysis_ref(); otherwise it computes its
 * own. */
const Diagnosis *dx_live_get(DxLive *l, const DxLiveKey *k, const Analysis *a, int *fresh);

/* How many diagnoses were started reusing the caller's analysis and how
 * many computed their own (for tests and measurements). */
void dx_live_counts(DxLive *l, unsigned *reused, unsigned *computed);

/* The key of the diagnosis dx_live_get() last returned: 1 and *k, or 0
 * when it returned NULL. */
int dx_live_shown(DxLive *l, DxLiveKey *k);

/* 1 when a finished diagnosis waits to be handed over by dx_live_get(),
 * or a diagnosis failed since the last dx_live_get(): the caller should
 * redraw whatever shows it. Cheap. Also takes the
 * pending wake-ups of dx_live_wait_fd(), so call it from the thread that
 * polls that descriptor. */
int dx_live_ready(DxLive *l);

/* A descriptor that becomes readable (POLLIN) when the worker finishes a
 * diagnosis or fails one, for a poll() loop: it then calls
 * dx_live_ready(), which empties it. */
int dx_live_wait_fd(DxLive *l);

/* Counts the diagnoses dx_live_get() has handed over (changes whenever the
 * returned pointer may have). */
unsigned dx_live_generation(DxLive *l);

/* The last error of the worker ("" when none). Valid until the next call. */
const char *dx_live_error(DxLive *l);

/* Why the latest diagnosis of k's window and baseline failed (the
 * engine's message, such as the refusal of a baseline without requests),
 * or NULL when it did not fail or none was asked for. A failure is kept
 * until a diagnosis of any range succeeds; dx_live_ready() reports it
 * once, so the screen can say it at once. Valid until the next call. */
const char *dx_live_failed(DxLive *l, const DxLiveKey *k);

/* 1 while a diagnosis is being computed. */
int dx_live_busy(DxLive *l);

/* Runs check name on the caller's connection (blocking). */
int dx_live_check(DxLive *l, const char *name, const CheckOptions *o, CheckTable **out, Err *err);

#endif
