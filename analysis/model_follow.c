/*
 * model_follow.c - the inferred model drafted again as data arrives (see
 * model_follow.h).
 *
 * One worker, one request at a time: the owner asks (under the mutex),
 * the worker drafts on its own connection and leaves the draft in
 * `ready`; the owner takes it on its next update. Every model the owner
 * was handed is kept in `kept` until close, because an analysis or a
 * diagnosis running on another thread may still read it.
 */
#include "model_follow.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "model_infer.h"
#include "store.h"

struct ModelFollow {
	Store *st;                   /* the worker's connection */
	int64_t from, to;            /* the range drafted from */
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;
	int asked;                   /* a draft is wanted */
	char *want_svc, *want_route; /* ... of this endpoint (NULL: the most common) */
	int running;                 /* the worker drafts */
	Model *ready;                /* drafted, not yet taken (owned) */
	unsigned drafts;
	/* owner side */
	const Model *current;        /* the model in use (in kept, or NULL) */
	Model **kept;                /* every model handed out, and first */
	int n_kept;
	int64_t mark_requests;       /* what the model in use was asked at */
	int mark_nodes;
	int primed;                  /* the marks are set (for first: from the
	                              * first analysis, of the data it was
	                              * drafted from a moment before) */
	int64_t asked_ms;            /* when the last draft was asked for */
};

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* 1 when m describes another endpoint than the one a shows (its root
 * names one, and a is of another): the dashboard switched endpoints. */
static int other_endpoint(const Model *m, const Analysis *a)
{
	return m && m->root_service && m->root_operation && a->root_service && a->root_service[0] &&
	       (strcmp(m->root_service, a->root_service) != 0 ||
	        strcmp(m->root_operation, a->root_operation) != 0);
}

int model_follow_material(const Model *m, const Analysis *a, int64_t mark_requests, int mark_nodes)
{
	if (a == NULL || a->class_filter != NULL)
		return 0;
	int64_t req = a->pop[POP_WINDOW].requests;
	if (req <= 0)
		return 0;
	if (m == NULL || other_endpoint(m, a))
		return 1;
	if (req >= 2 * mark_requests)
		return 1;
	if (a->n_nodes <= mark_nodes)
		return 0;
	for (int i = 1; i < a->n_nodes; i++)
		if (analysis_model_node(m, &a->nodes[i]) == NULL)
			return 1;
	return 0;
}

static void *worker(void *arg)
{
	ModelFollow *f = arg;
	pthread_mutex_lock(&f->mu);
	for (;;) {
		while (!f->stop && !f->asked)
			pthread_cond_wait(&f->cv, &f->mu);
		if (f->stop)
			break;
		f->asked = 0;
		f->running = 1;
		char *svc = f->want_svc, *route = f->want_route;
		f->want_svc = f->want_route = NULL;
		pthread_mutex_unlock(&f->mu);

		Model *m = NULL;
		Err err = {0};
		int rc = model_infer_endpoint(f->st, f->from, f->to, svc, route, &m, &err);
		free(svc);
		free(route);
		if (rc == 0 && m->n_nodes == 0 && m->n_pools == 0) {
			/* nothing to draft from yet: a model with nothing in it
			 * would only hide that there is none */
			model_free(m);
			m = NULL;
		}

		pthread_mutex_lock(&f->mu);
		f->running = 0;
		f->drafts++;
		if (m) {
			model_free(f->ready);
			f->ready = m;
		}
	}
	pthread_mutex_unlock(&f->mu);
	return NULL;
}

static void keep(ModelFollow *f, Model *m)
{
	f->kept = xrealloc(f->kept, (size_t)(f->n_kept + 1) * sizeof *f->kept);
	f->kept[f->n_kept++] = m;
}

int model_follow_open(const char *db_path, Model *first, int64_t from, int64_t to,
                      ModelFollow **out, Err *err)
{
	*out = NULL;
	ModelFollow *f = xcalloc(1, sizeof *f);
	f->from = from;
	f->to = to;
	if (first)
		keep(f, first);
	f->current = first;
	int rc = store_open(db_path, STORE_READONLY, &f->st, err);
	if (rc) {
		free(f->kept);
		free(f);
		return rc;
	}
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->cv, NULL);
	if (pthread_create(&f->th, NULL, worker, f) != 0) {
		store_close(f->st);
		pthread_mutex_destroy(&f->mu);
		pthread_cond_destroy(&f->cv);
		free(f->kept);
		free(f);
		return err_set(err, TT_EIO, "cannot start the model thread");
	}
	*out = f;
	return 0;
}

const Model *model_follow_update(ModelFollow *f, const Analysis *a)
{
	if (f == NULL)
		return NULL;
	const Model *fresh = NULL;
	pthread_mutex_lock(&f->mu);
	if (f->ready) {
		keep(f, f->ready);
		f->current = fresh = f->ready;
		f->ready = NULL;
	}
	if (!f->primed && f->current && a && a->class_filter == NULL) {
		f->mark_requests = a->pop[POP_WINDOW].requests;
		f->mark_nodes = a->n_nodes;
		f->primed = 1;
	}
	int64_t t = now_ms();
	if (!f->asked && !f->running && (f->asked_ms == 0 || t - f->asked_ms >= MODEL_FOLLOW_MIN_MS) &&
	    model_follow_material(f->current, a, f->mark_requests, f->mark_nodes)) {
		/* what this draft is asked at: the next one needs twice the
		 * requests, or a node beyond these */
		f->mark_requests = a->pop[POP_WINDOW].requests;
		f->mark_nodes = a->n_nodes;
		f->primed = 1;
		f->asked = 1;
		f->asked_ms = t;
		/* the endpoint on screen (a new one the dashboard switched to) */
		free(f->want_svc);
		free(f->want_route);
		int named = a->root_service && a->root_service[0];
		f->want_svc = named ? xstrdup(a->root_service) : NULL;
		f->want_route = named ? xstrdup(a->root_operation) : NULL;
		pthread_cond_signal(&f->cv);
	}
	pthread_mutex_unlock(&f->mu);
	return fresh;
}

unsigned model_follow_count(ModelFollow *f)
{
	pthread_mutex_lock(&f->mu);
	unsigned n = f->drafts;
	pthread_mutex_unlock(&f->mu);
	return n;
}

void model_follow_close(ModelFollow *f)
{
	if (f == NULL)
		return;
	pthread_mutex_lock(&f->mu);
	f->stop = 1;
	pthread_cond_signal(&f->cv);
	pthread_mutex_unlock(&f->mu);
	pthread_join(f->th, NULL);
	model_free(f->ready);
	free(f->want_svc);
	free(f->want_route);
	for (int i = 0; i < f->n_kept; i++)
		model_free(f->kept[i]);
	free(f->kept);
	store_close(f->st);
	pthread_mutex_destroy(&f->mu);
	pthread_cond_destroy(&f->cv);
	free(f);
}
