/*
 * checks.h - discriminating checks: named queries over the store that each
 * answer one question and render as a small table.
 *
 *   pool-by-class       calls to a dependency by class: active and pending
 *                       (mean in flight and mean waiting, Little's law over
 *                       the sampled spans), wait and service p99; pool
 *                       metrics in the note
 *   fanout-by-class     calls per request and fan-out width by class
 *   host-concentration  share of the slow tail against share of requests
 *                       per host (lift), and the concentration index
 *   client-vs-server    per dependency: client-observed, client wait and
 *                       server p99 in window and baseline; serial share,
 *                       errors, attempts
 *   class-mix           class shares over time
 *   late-work           late work and omission over time
 *   endpoint-queue      queue before the endpoint and ingress p99 by host;
 *                       executor occupancy and CPU in the note
 *
 * With CheckOptions.wclass set, pool-by-class and fanout-by-class show
 * the "all" row and that class's row; host-concentration, late-work,
 * endpoint-queue and client-vs-server count only requests of that class.
 * class-mix compares the classes and refuses a class.
 *
 * Ownership: check_run() returns a CheckTable the caller frees with
 * check_table_free().
 */
#ifndef TT_CHECKS_H
#define TT_CHECKS_H

#include <stdint.h>

#include "buf.h"
#include "err.h"
#include "model.h"
#include "period.h"
#include "store.h"

typedef struct CheckOptions {
	const Model *model;          /* may be NULL */
	Period period;               /* window (open sides: all data) and baseline */
	const char *ep_service;      /* the endpoint (service, route), or NULL: the */
	const char *ep_route;        /* model's root, else the first (endpoints.h) */
	const char *node;            /* dependency for pool-by-class / client-vs-server, or NULL */
	const char *wclass;          /* class to single out, or NULL */
} CheckOptions;

typedef struct CheckTable {
	char *name;                  /* the check's name */
	char *question;              /* what it answers */
	char **cols;                 /* column headings */
	int n_cols;
	char **cells;                /* n_rows x n_cols, row-major, "" for empty */
	int n_rows;
	char *note;                  /* provenance and caveats, may be NULL */
} CheckTable;

/* Runs check name. Errors: TT_ENOTFOUND for an unknown name (the message
 * lists the known ones), TT_EINVAL for a class given to a check that takes
 * none, store errors. */
int check_run(Store *st, const char *name, const CheckOptions *opt, CheckTable **out, Err *err);
void check_table_free(CheckTable *t);           /* NULL is a no-op */

/* 1 when check name honours CheckOptions.wclass, else 0 (also for an
 * unknown name). */
int check_takes_class(const char *name);

/* "a, b, c": the checks that honour a class, cut to fit sz bytes. */
void check_class_names(char *out, size_t sz);

/* The question a check answers, or NULL for an unknown name. */
const char *check_question(const char *name);

/* Aligned text (strings from the data are cleaned of control bytes). */
void check_table_text(const CheckTable *t, Buf *out);

/* {"check", "question", "columns": [...], "rows": [[...]], "note"}. */
void check_table_json(const CheckTable *t, Buf *out);

#endif
