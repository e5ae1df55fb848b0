/*
 * fmt.h - the TUI's number and time formats.
 *
 * Conventions shared with the text report: "?" is unknown (no sample, no
 * server span), "-" does not apply; nothing unknown is shown as 0.
 */
#ifndef TT_FMT_H
#define TT_FMT_H

#include <stddef.h>
#include <stdint.h>

/* While on (the frame draws figures of an analysis from the import-time
 * aggregates), fmt_ms() and fmt_delta_ms() put "~" before every number
 * they write: approximate, within the aggregates' stated error. The
 * screen turns it on and off around what it draws from such an analysis
 * (one thread draws). */
void fmt_set_approx(int on);
int fmt_approx(void);

/* Milliseconds: "0.42", "12.3", "412", "12.4k"; "?" when n == 0 or v is
 * NaN; "-" when !applicable. */
void fmt_ms(char *out, size_t sz, double v, int64_t n, int applicable);
/* Signed change of milliseconds: "+12.3", "-4.0", "0.0"; "?" when either
 * side has no sample. */
void fmt_delta_ms(char *out, size_t sz, double now, int64_t n_now, double base, int64_t n_base);
/* Counts: "987", "12,345", "1.23M". */
void fmt_count(char *out, size_t sz, int64_t n);
/* Percent of a ratio 0..1: "71.9%". */
void fmt_pct(char *out, size_t sz, double ratio);
/* Wall-clock UTC time of day "18:03:12Z". */
void fmt_clock(char *out, size_t sz, int64_t unix_s);
/* A range of ns timestamps: "2026-07-14 18:00:00Z..18:10:00Z" (the date of
 * the end only when it differs). */
void fmt_range(char *out, size_t sz, int64_t from_ns, int64_t to_ns);
/* A duration in ns: "850ms", "42.0s", "10m00s", "3h05m", "2d04h". */
void fmt_dur(char *out, size_t sz, int64_t ns);

#endif
