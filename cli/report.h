/*
 * report.h - renderings of an Analysis for `tailtriage report`: plain
 * text (ASCII, stable, golden-tested) and JSON (documented in
 * docs/report-json.md, stable field names).
 */
#ifndef TT_REPORT_H
#define TT_REPORT_H

#include "analysis.h"
#include "buf.h"

/* Appends the text report to out. */
void report_text(const Analysis *a, Buf *out);

/* Appends the JSON report to out (one object, pretty-printed). */
void report_json(const Analysis *a, Buf *out);

/* "12.3" or "?" (unknown) or "-" (not applicable) for a quantile value. */
void report_ms(char *out, size_t sz, double v, int64_t n, int applicable);

#endif
