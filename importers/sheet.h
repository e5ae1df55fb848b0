/*
 * sheet.h - observation sheets: named numbers with units, a window and a
 * baseline, as an incident is often first described ("ingress p99 318 ms,
 * pricing client wait 71 ms, was 18"). The format is documented in
 * docs/formats/observation-sheet.md.
 *
 * sheet_load()/sheet_parse() give plain structs and need no database
 * (drills read sheets directly); the "sheet" import format stores the same
 * observations through store_observation_add().
 */
#ifndef TT_SHEET_H
#define TT_SHEET_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

enum {
	SHEET_WINDOW = 0,     /* the observed window ("incident", a peak, ...) */
	SHEET_BASELINE = 1,   /* the same name's value in the baseline */
};

typedef struct SheetObs {
	const char *name;        /* evidence name, e.g. "ingress.p99_ms" */
	int role;                /* SHEET_WINDOW or SHEET_BASELINE */
	double value;            /* as written */
	const char *unit;        /* as written, one of sheet_units() */
	double norm;             /* evidence convention: durations in ms, shares
	                          * (% or ratio) as a ratio 0..1, others as written */
	const char *norm_unit;   /* "ms", "ratio" or unit */
	const char *labels_json; /* canonical JSON object, "{}" when none */
	const char *note;        /* free text, NULL when none */
	long line, col;          /* where the observation starts in the file */
} SheetObs;

typedef struct Sheet {
	const char *name;        /* "sheet" */
	const char *endpoint;    /* NULL when not given */
	const char *description; /* NULL when not given */
	const char *window;      /* label or "A..B" text */
	int window_has_range;    /* window is an RFC 3339 (or epoch ms) range */
	int64_t window_from_ns, window_to_ns;
	const char *baseline;    /* baseline window label or range; "baseline"
	                          * when not given */
	int baseline_has_range;
	int64_t baseline_from_ns, baseline_to_ns;
	SheetObs *obs;           /* window values first, each followed by its
	                          * baseline value when the sheet gives one */
	size_t n_obs;
} Sheet;

/* Reads and validates the sheet at path. On success *out is owned by the
 * caller (sheet_free). Errors are located: "path:line:col: message". */
int sheet_load(const char *path, Sheet **out, Err *err);

/* Same for text already in memory; name is used in messages. */
int sheet_parse(const char *name, const char *text, size_t len, Sheet **out, Err *err);

void sheet_free(Sheet *s);        /* NULL is a no-op */

/* The observation name in role (SHEET_*) with no labels, or NULL. The
 * pointer lives as long as s. */
const SheetObs *sheet_find(const Sheet *s, const char *name, int role);

/* NULL-terminated list of the unit strings a sheet may use. */
const char *const *sheet_units(void);

#endif
