/*
 * par.h - independent tasks spread over the machine's cores.
 *
 * par_each() runs fn(ctx, i) for every i in [0, n), each exactly once, on
 * the calling thread and up to PAR_MAX_THREADS - 1 more (no more than the
 * online cores). Tasks are handed out one at a time, so which thread runs
 * which task varies from run to run: a task must depend only on i and on
 * what it alone writes (its own random seed, its own output slot) for the
 * result to be the same every time.
 */
#ifndef TT_PAR_H
#define TT_PAR_H

#define PAR_MAX_THREADS 4

/* Returns when every task has run. Never fails: without a second thread
 * the tasks run one after another on the caller's. */
void par_each(int n, void (*fn)(void *ctx, int i), void *ctx);

#endif
