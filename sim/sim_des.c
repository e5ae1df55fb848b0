/*
 * sim_des.c - event queue (binary min-heap on (t, seq)) and FIFO pools.
 * See sim_des.h.
 */
#include "sim_des.h"

#include <stdlib.h>

#include "buf.h"

void sim_heap_init(SimHeap *h)
{
	h->ev = NULL;
	h->n = h->cap = 0;
	h->seq = 0;
}

void sim_heap_fini(SimHeap *h)
{
	free(h->ev);
	sim_heap_init(h);
}

static int before(const SimEvent *a, const SimEvent *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

void sim_heap_push(SimHeap *h, int64_t t, uint32_t who, int type, int arg)
{
	if (h->n == h->cap) {
		h->cap = h->cap ? h->cap * 2 : 1024;
		h->ev = xrealloc(h->ev, h->cap * sizeof *h->ev);
	}
	SimEvent e = {t, h->seq++, who, (uint16_t)type, (uint16_t)arg};
	size_t i = h->n++;
	while (i > 0) {
		size_t up = (i - 1) / 2;
		if (!before(&e, &h->ev[up]))
			break;
		h->ev[i] = h->ev[up];
		i = up;
	}
	h->ev[i] = e;
}

int sim_heap_pop(SimHeap *h, SimEvent *out)
{
	if (h->n == 0)
		return 0;
	*out = h->ev[0];
	SimEvent last = h->ev[--h->n];
	size_t i = 0, n = h->n;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && before(&h->ev[c + 1], &h->ev[c]))
			c++;
		if (!before(&h->ev[c], &last))
			break;
		h->ev[i] = h->ev[c];
		i = c;
	}
	if (n)
		h->ev[i] = last;
	return 1;
}

void sim_pool_init(SimPool *p, int max)
{
	p->max = max;
	p->used = 0;
	p->q = NULL;
	p->head = p->n = p->cap = 0;
	p->last_t = 0;
	p->area_used = p->area_pending = 0;
}

void sim_pool_fini(SimPool *p)
{
	free(p->q);
	p->q = NULL;
	p->head = p->n = p->cap = 0;
}

void sim_pool_account(SimPool *p, int64_t t)
{
	if (t > p->last_t) {
		double dt = (double)(t - p->last_t);
		p->area_used += dt * p->used;
		p->area_pending += dt * (double)p->n;
		p->last_t = t;
	}
}

void sim_pool_reset_account(SimPool *p, int64_t t)
{
	p->last_t = t;
	p->area_used = p->area_pending = 0;
}

int sim_pool_acquire(SimPool *p, int64_t t, uint32_t who, uint16_t arg)
{
	sim_pool_account(p, t);
	if (p->used < p->max) {
		p->used++;
		return 1;
	}
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		SimWaiter *q = xmalloc(cap * sizeof *q);
		for (size_t i = 0; i < p->n; i++)
			q[i] = p->q[(p->head + i) % p->cap];
		free(p->q);
		p->q = q;
		p->cap = cap;
		p->head = 0;
	}
	p->q[(p->head + p->n) % p->cap] = (SimWaiter){who, arg, t};
	p->n++;
	return 0;
}

int sim_pool_release(SimPool *p, int64_t t, SimWaiter *w)
{
	sim_pool_account(p, t);
	if (p->n > 0) {
		*w = p->q[p->head];
		p->head = (p->head + 1) % p->cap;
		p->n--;
		return 1;   /* the slot passes straight to the waiter */
	}
	p->used--;
	return 0;
}
