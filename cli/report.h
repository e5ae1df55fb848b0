/*
 * report.h - renderings of an Analysis for `tailtriage report`: plain
 * text (ASCII, stable, golden-tested) and JSON (documented in
 * docs/report-json.md, stable field names).
 */
#ifndef TT_REPORT_H
#define TT_REPORT_H

#include "analysis.h"
#include "buf.h"
#include "evidence.h"

/* Appends the text report to out. */
void report_text(const Analysis *a, Buf *out);

/* Appends the JSON report to out (one object, pretty-printed). */
void report_json(const Analysis *a, Buf *out);

/* Budgets evaluated on evidence (analysis/evidence.h), one line each with
 * state, value and provenance, then a pointer to the exemplars when there
 * are any. Appended to the text report by `report --model`. (added by "diag") */
void report_budgets_text(const BudgetResult *b, int n, int n_exemplars, Buf *out);

/* The JSON report plus a "budgets" array ({id, label, evidence, op,
 * threshold, unit, value, state, source, provenance}) and an "exemplars"
 * array ({metric, labels, le, value, unit, trace_id, span_id, time});
 * documented in docs/report-json.md. (added by "diag") */
void report_json_ext(const Analysis *a, const BudgetResult *b, int nb, const EvExemplar *ex,
                     int nex, Buf *out);

/* "12.3" or "?" (unknown) or "-" (not applicable) for a quantile value. */
void report_ms(char *out, size_t sz, double v, int64_t n, int applicable);

#endif
