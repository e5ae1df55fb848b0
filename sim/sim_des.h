/*
 * sim_des.h - discrete-event plumbing shared by the simulator's models:
 * a time-ordered event queue and FIFO resource pools.
 *
 * Events with equal times come out in the order they were pushed (a
 * sequence number breaks ties), so a run is a pure function of its inputs.
 * Internal to sim/.
 */
#ifndef TT_SIM_DES_H
#define TT_SIM_DES_H

#include <stddef.h>
#include <stdint.h>

typedef struct SimEvent {
	int64_t t;                 /* when, ns */
	uint64_t seq;              /* push order, breaks ties */
	uint32_t who;              /* model-defined (request slot) */
	uint16_t type;             /* model-defined */
	uint16_t arg;              /* model-defined */
} SimEvent;

typedef struct SimHeap {
	SimEvent *ev;
	size_t n, cap;
	uint64_t seq;
} SimHeap;

void sim_heap_init(SimHeap *h);
void sim_heap_fini(SimHeap *h);
void sim_heap_push(SimHeap *h, int64_t t, uint32_t who, int type, int arg);
/* Pops the earliest event into *out; returns 0 when the heap is empty. */
int sim_heap_pop(SimHeap *h, SimEvent *out);

typedef struct SimWaiter {
	uint32_t who;
	uint16_t arg;
	int64_t since;             /* when it started waiting */
} SimWaiter;

/* A pool of max identical slots (executor threads, client connections)
 * served first come, first served. It also integrates occupancy and queue
 * length over time for the gauges of a window. */
typedef struct SimPool {
	int max;
	int used;
	SimWaiter *q;              /* ring buffer of waiters */
	size_t head, n, cap;
	int64_t last_t;            /* time of the last accounting */
	double area_used;          /* integral of used dt (ns) since the reset */
	double area_pending;       /* integral of waiters dt (ns) */
} SimPool;

void sim_pool_init(SimPool *p, int max);
void sim_pool_fini(SimPool *p);
/* Asks for a slot at t. Returns 1 when granted at once, 0 when queued. */
int sim_pool_acquire(SimPool *p, int64_t t, uint32_t who, uint16_t arg);
/* Gives a slot back at t. Returns 1 when the first waiter takes it (then
 * *w is that waiter, granted at t), 0 when the slot becomes free. */
int sim_pool_release(SimPool *p, int64_t t, SimWaiter *w);
/* Starts a new accounting period at t (zeroes the integrals). */
void sim_pool_reset_account(SimPool *p, int64_t t);
/* Brings the integrals up to t. */
void sim_pool_account(SimPool *p, int64_t t);

#endif
