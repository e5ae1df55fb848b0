/*
 * order.h - the order in which one attempt shows a drill's choices.
 *
 * A drill file lists its choices in whatever order its author wrote them,
 * usually with the answer key first. Shown in that order, a trainee could
 * score full marks by picking the top rows. So every attempt shows the
 * hypothesis, check and decision choices in an order shuffled from a seed:
 * the same seed gives the same order on every machine (a fixed 64-bit
 * generator, no libc rand()), so `drill show --seed N` and `drill train
 * --seed N` show the same lists, and the seed stored with an attempt says
 * what the trainee saw. Answers still name choices by id, so scoring never
 * depends on positions; a front end that lets the trainee pick by position
 * maps the position back through the order.
 *
 * Ownership: a DrillOrder is initialised with drill_order_init() and
 * released with drill_order_fini(); it does not borrow the Drill.
 */
#ifndef TT_DRILL_ORDER_H
#define TT_DRILL_ORDER_H

#include <stdint.h>

#include "buf.h"
#include "drill.h"

/* Seeds are whole numbers from 0 to DRILL_SEED_MAX, so they print and
 * store exactly anywhere (JSON, SQLite INTEGER). */
#define DRILL_SEED_MAX 4294967295u

typedef struct DrillOrder {
	uint32_t seed;
	int *hyp;                 /* hyp[i]: index into d->hyp_choices shown at position i */
	int n_hyp;
	int *check;               /* the same for d->check_choices */
	int n_check;
	int *decision;            /* the same for d->decision_choices */
	int n_decision;
} DrillOrder;

/* Shuffles d's three choice lists from seed (independently of each other:
 * one generator, hypotheses first, then checks, then decisions). A
 * discussion drill gets empty lists. */
void drill_order_init(DrillOrder *o, const Drill *d, uint32_t seed);
void drill_order_fini(DrillOrder *o);

/* A seed for an attempt when the user gives none: mixed from the clock
 * and the process id. */
uint32_t drill_seed_auto(void);

/* Parses a --seed argument: 0 and *out, or -1 when s is not a whole
 * number from 0 to DRILL_SEED_MAX. */
int drill_seed_parse(const char *s, uint32_t *out);

/* The choice ids as shown, as one JSON object:
 * {"seed": N, "hypotheses": [id, ...], "checks": [...], "decisions": [...]}
 * (stored with an attempt, so history can show it without the drill file). */
void drill_order_json(const Drill *d, const DrillOrder *o, Buf *out);

/* ---- the generator (exposed for tests) ---------------------------------- */

typedef struct DrillRng {
	uint64_t s;
} DrillRng;

void drill_rng_seed(DrillRng *r, uint64_t seed);
uint64_t drill_rng_next(DrillRng *r);            /* splitmix64 */
/* Uniform in [0, n) without modulo bias; n >= 1. */
uint32_t drill_rng_below(DrillRng *r, uint32_t n);

#endif
