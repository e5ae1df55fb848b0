/*
 * timefmt.h - the time arguments users type: RFC 3339 timestamps and Unix
 * epoch milliseconds, and ranges "A..B" of either.
 */
#ifndef TT_TIMEFMT_H
#define TT_TIMEFMT_H

#include <stdint.h>

#include "err.h"

/* Parses an RFC 3339 timestamp ("2026-07-14T18:00:00Z", offsets and
 * fractional seconds allowed) or an integer of epoch milliseconds into
 * nanoseconds since the epoch. Returns 0 or TT_EPARSE with a message. */
int time_parse(const char *s, int64_t *out_ns, Err *err);

/* Parses "A..B" into [from, to). Either side may be empty for "open". An
 * open side becomes INT64_MIN / INT64_MAX. */
int time_parse_range(const char *s, int64_t *from_ns, int64_t *to_ns, Err *err);

/* Formats ns as "YYYY-MM-DDTHH:MM:SS.mmmZ" into out (at least 32 bytes). */
void time_format(int64_t ns, char *out, unsigned outsz);

#endif
