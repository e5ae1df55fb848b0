/*
 * period.h - the two time ranges every analysis compares: the window (the
 * incident) and, when given, the baseline (normal times). One type for
 * the options of analysis/, drills/, tui/ and cli/, so that copying,
 * comparing and printing them is written once.
 *
 * A TimeRange is half-open, [from, to), in nanoseconds since the epoch;
 * an open side is INT64_MIN (from) or INT64_MAX (to), which is what
 * time_parse_range() gives for "A.." and "..B".
 */
#ifndef TT_PERIOD_H
#define TT_PERIOD_H

#include <stddef.h>
#include <stdint.h>

typedef struct TimeRange {
	int64_t from, to;        /* [from, to); INT64_MIN / INT64_MAX: open */
} TimeRange;

typedef struct Period {
	TimeRange win;           /* the window */
	int has_baseline;        /* 0: no baseline; base is then not read */
	TimeRange base;          /* the baseline */
} Period;

/* All time: both sides open. */
#define TIME_RANGE_ALL ((TimeRange){INT64_MIN, INT64_MAX})

/* All data as the window, no baseline. */
#define PERIOD_ALL ((Period){.win = {INT64_MIN, INT64_MAX}})

/* 1 when a and b have the same bounds. */
int time_range_eq(TimeRange a, TimeRange b);

/* 1 when from <= t < to. */
int time_range_has(TimeRange r, int64_t t);

/* 1 when either side is open. */
int time_range_open(TimeRange r);

/* The range of the same length just before r (a "before" baseline); r
 * must be closed. */
TimeRange time_range_before(TimeRange r);

/* Writes r as "A..B" (RFC 3339 times, an open side left empty, as
 * time_parse_range() reads it) into out (sz bytes, at least 2). */
void time_range_format(TimeRange r, char *out, size_t sz);

/* 1 when a and b have the same window and the same baseline (a baseline's
 * bounds count only when there is one). */
int period_eq(const Period *a, const Period *b);

#endif
