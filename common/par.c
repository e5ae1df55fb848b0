/*
 * par.c - see par.h. The next task is an atomic counter; the threads are
 * started per call (a call runs tens of milliseconds of work or more, so
 * a pool would save nothing measurable).
 */
#include "par.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

typedef struct Par {
	atomic_int next;
	int n;
	void (*fn)(void *ctx, int i);
	void *ctx;
} Par;

static void *work(void *p)
{
	Par *par = p;
	int i;
	while ((i = atomic_fetch_add(&par->next, 1)) < par->n)
		par->fn(par->ctx, i);
	return NULL;
}

void par_each(int n, void (*fn)(void *ctx, int i), void *ctx)
{
	Par par = {.n = n, .fn = fn, .ctx = ctx};
	atomic_init(&par.next, 0);
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	int extra = (int)(cores < PAR_MAX_THREADS ? cores : PAR_MAX_THREADS) - 1;
	if (extra > n - 1)
		extra = n - 1;
	pthread_t th[PAR_MAX_THREADS];
	int started = 0;
	for (int k = 0; k < extra; k++)
		if (pthread_create(&th[started], NULL, work, &par) == 0)
			started++;
	work(&par);
	for (int k = 0; k < started; k++)
		pthread_join(th[k], NULL);
}
