/*
 * model_follow.h - an inferred model that follows the data, for a
 * dashboard started without --model on a database that is still filling
 * (`tui --listen` on a new database, or a database `serve` writes).
 *
 * At start the dashboard infers a model from what is there (possibly
 * nothing: then it runs without one). A ModelFollow watches the analyses
 * the dashboard shows and drafts the model again, on a thread of its own
 * with its own read-only connection, when the data changed materially
 * since the model in use was drafted:
 *  - there is no model yet and requests have arrived;
 *  - the window holds at least twice the requests it held when the model
 *    in use was asked for (so a growing stream is inferred again at 1, 2,
 *    4, 8, ... times its first size: whether a node is mandatory, and
 *    which pools there are, settle as the data grows);
 *  - the DAG has a node the model does not describe, and more nodes than
 *    when the model in use was asked for (a new dependency appeared);
 *  - the analysis is of another endpoint than the model's root (the
 *    dashboard switched endpoints): the draft is of the endpoint shown.
 * At most one inference runs at a time, and a new one starts at most
 * every MODEL_FOLLOW_MIN_MS.
 *
 * Threading: every function must be called from one thread (the owner);
 * the worker is internal. Every model handed out stays valid until
 * model_follow_close(): analyses and diagnoses still running may read the
 * previous one.
 */
#ifndef TT_MODEL_FOLLOW_H
#define TT_MODEL_FOLLOW_H

#include <stdint.h>

#include "analysis.h"
#include "err.h"
#include "model.h"

#define MODEL_FOLLOW_MIN_MS 3000

typedef struct ModelFollow ModelFollow;

/* Follows db_path (opened read-only), drafting models over [from, to)
 * (INT64_MIN / INT64_MAX: open). first is the model in use, inferred at
 * start from the data there was, or NULL when there was nothing to infer
 * from; the follower takes it over (freed by model_follow_close()), and
 * takes the first analysis it is shown as the data first was drafted
 * from. Errors: TT_EIO (first then stays the caller's). */
int model_follow_open(const char *db_path, Model *first, int64_t from, int64_t to,
                      ModelFollow **out, Err *err);

/* Looks at a, the analysis on screen (all classes; others are ignored):
 * asks for a new draft when the data changed materially (above), and
 * returns a newer model than the one last returned (or than first) when
 * one is ready, else NULL. A draft with no node and no pool is not handed
 * out. The model is owned by the follower. */
const Model *model_follow_update(ModelFollow *f, const Analysis *a);

/* 1 when a shows a change material enough to draft m again, against the
 * requests and nodes the draft of m was asked for at (pure; for tests). */
int model_follow_material(const Model *m, const Analysis *a, int64_t mark_requests,
                          int mark_nodes);

/* How many drafts were made (for tests). */
unsigned model_follow_count(ModelFollow *f);

/* Waits for the worker and frees every model handed out. NULL: no-op. */
void model_follow_close(ModelFollow *f);

#endif
