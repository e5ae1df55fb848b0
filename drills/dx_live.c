/*
 * dx_live.c - background diagnosis (see dx_live.h).
 *
 * One worker thread, one pending request: a newer request replaces an
 * older one that has not started. Results are handed over under the mutex;
 * the caller frees the result it replaces, so a Diagnosis is only ever
 * freed on the caller's thread.
 *
 * The analysis a request comes with is held (analysis_ref()) from the
 * request until the diagnosis that reads it is done: the caller may drop
 * its own hold (a new analysis on screen) at any time in between. Whoever
 * lets go last frees it, on either thread.
 */
#include "dx_live.h"

#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "evidence.h"
#include "wake.h"

struct DxLive {
	DiagnoseOptions base;        /* model, sheet, catalog, decide (borrowed) */
	SkewTolerance skew;          /* for every diagnosis (under mu) */
	Store *ui, *wk;              /* caller's and worker's connections */
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;
	int has_pending;             /* a request waits */
	DxLiveKey pending;
	Analysis *pending_a;         /* held for the pending request, or NULL */
	unsigned n_reused, n_computed; /* diagnoses started with / without one */
	int running;                 /* the worker computes `current_key` */
	DxLiveKey running_key;
	unsigned model_gen;          /* dx_live_set_model() calls */
	unsigned running_model_gen, done_model_gen, shown_model_gen; /* of each */
	Diagnosis *done;             /* finished, not yet taken (owned) */
	DxLiveKey done_key;
	char err[512];               /* worker's last error */
	DxLiveKey err_key;           /* the request it failed (when err[0]) */
	unsigned err_gen;            /* incremented per failure */
	/* caller side */
	Diagnosis *shown;            /* handed to the caller (owned) */
	unsigned gen;                /* incremented per hand-over */
	DxLiveKey shown_key;
	int has_shown;
	int asked;
	DxLiveKey asked_key;
	int64_t asked_ms;            /* when the last request was queued */
	unsigned err_seen;           /* err_gen the caller last looked at */
	char err_copy[512];
	Wake wake;                   /* a diagnosis (or an error) was handed over */
};

/* New data for the same window and baseline is diagnosed at most this
 * often: a live import commits every few seconds, and each diagnosis reads
 * the whole window again on the second core the dashboard also uses. */
#define DX_LIVE_MIN_REFRESH_MS 15000

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

DxLiveKey dx_live_key(const Analysis *a)
{
	DxLiveKey k;
	memset(&k, 0, sizeof k);
	k.period.win = (TimeRange){a->pop[POP_WINDOW].from_ns, a->pop[POP_WINDOW].to_ns};
	/* an open window is diagnosed open: metrics exported after the last
	 * span (an SDK's final export) belong to it too */
	k.open_from = a->pop[POP_WINDOW].open_from;
	k.open_to = a->pop[POP_WINDOW].open_to;
	k.period.has_baseline = a->pop[POP_BASELINE].present;
	if (k.period.has_baseline)
		k.period.base = (TimeRange){a->pop[POP_BASELINE].from_ns, a->pop[POP_BASELINE].to_ns};
	k.data_version = a->data_version;
	snprintf(k.ep_service, sizeof k.ep_service, "%s", a->root_service ? a->root_service : "");
	snprintf(k.ep_route, sizeof k.ep_route, "%s", a->root_operation ? a->root_operation : "");
	return k;
}

/* The model for k's endpoint: the DxLive's, when it describes it (its
 * root names that endpoint, or none), else none. */
static const Model *key_model(const DxLive *l, const DxLiveKey *k)
{
	const Model *m = l->base.model;
	if (m == NULL || m->root_service == NULL || m->root_operation == NULL || !k->ep_service[0])
		return m;
	return strcmp(m->root_service, k->ep_service) == 0 &&
	       strcmp(m->root_operation, k->ep_route) == 0 ? m : NULL;
}

static int same_endpoint(const DxLiveKey *a, const DxLiveKey *b)
{
	return strcmp(a->ep_service, b->ep_service) == 0 && strcmp(a->ep_route, b->ep_route) == 0;
}

Period dx_live_key_period(const DxLiveKey *k)
{
	Period p = k->period;
	if (k->open_from)
		p.win.from = INT64_MIN;
	if (k->open_to)
		p.win.to = INT64_MAX;
	return p;
}

int dx_live_same_range(const DxLiveKey *a, const DxLiveKey *b)
{
	return period_eq(&a->period, &b->period) && same_endpoint(a, b);
}

static int same(const DxLiveKey *a, const DxLiveKey *b)
{
	return dx_live_same_range(a, b) && a->data_version == b->data_version;
}

/* 1 when a is what the diagnosis of k would compute itself (called under
 * mu: the skew is read there): the options evidence_compute() would give
 * analysis_run(), the same data version. */
static int reusable(const DxLive *l, const DxLiveKey *k, const Analysis *a)
{
	if (a == NULL || a->data_version != k->data_version)
		return 0;
	/* a population over the sample bound: the diagnosis reads its own
	 * sample (one pass over at most that many requests) rather than the
	 * request pass over every span of an analysis read whole */
	for (int p = 0; p < 2; p++)
		if (a->pop[p].requests > EVIDENCE_SAMPLE_DEFAULT)
			return 0;
	/* k's endpoint is a's (dx_live_key()): asked by name, or not */
	AnalysisOptions ao = {
	    .period = dx_live_key_period(k), .wclass = NULL, .model = key_model(l, k), .skew = l->skew,
	    .ep_service = a->asked.ep_service ? k->ep_service : NULL,
	    .ep_route = a->asked.ep_route ? k->ep_route : NULL,
	};
	return analysis_answers(a, &ao);
}

static void *worker(void *arg)
{
	DxLive *l = arg;
	pthread_mutex_lock(&l->mu);
	for (;;) {
		while (!l->stop && !l->has_pending)
			pthread_cond_wait(&l->cv, &l->mu);
		if (l->stop)
			break;
		DxLiveKey k = l->pending;
		SkewTolerance skew = l->skew;
		Analysis *a = l->pending_a;  /* now the worker's hold */
		l->pending_a = NULL;
		if (a && !reusable(l, &k, a)) {
			/* the skew tolerance changed since the request */
			analysis_free(a);
			a = NULL;
		}
		if (a)
			l->n_reused++;
		else
			l->n_computed++;
		l->has_pending = 0;
		l->running = 1;
		l->running_key = k;
		l->running_model_gen = l->model_gen;
		DiagnoseOptions o = l->base; /* its model may change (under mu) */
		o.model = key_model(l, &k);
		pthread_mutex_unlock(&l->mu);

		o.period = dx_live_key_period(&k);
		o.skew = skew;
		Diagnosis *d = NULL;
		Err err = {0};
		int rc = 0;
		EvRequestSet *sets[2] = {NULL, NULL};
		if (a == NULL) {
			/* its own: the analysis and the request sets in one pass, a
			 * uniform sample beyond the commands' bound */
			AnalysisOptions ao = {.period = o.period, .model = o.model, .skew = skew,
			                      .ep_service = k.ep_service[0] ? k.ep_service : NULL,
			                      .ep_route = k.ep_service[0] ? k.ep_route : NULL};
			rc = evidence_analysis_run(l->wk, &ao, EVIDENCE_SAMPLE_DEFAULT, &a, sets, &err);
			o.requests[0] = sets[0];
			o.requests[1] = sets[1];
		}
		o.analysis = a;
		if (rc == 0)
			rc = diagnose_run(l->wk, &o, &d, &err);
		analysis_free(a);
		evidence_requests_free(sets[0]);
		evidence_requests_free(sets[1]);

		pthread_mutex_lock(&l->mu);
		l->running = 0;
		if (rc) {
			snprintf(l->err, sizeof l->err, "%s", err.msg[0] ? err.msg : "the diagnosis failed");
			l->err_key = k;
			l->err_gen++;
		} else {
			l->err[0] = '\0';
			/* an untaken older result is replaced (freed here: the caller
			 * never saw it) */
			diagnosis_free(l->done);
			l->done = d;
			l->done_key = k;
			l->done_model_gen = l->running_model_gen;
		}
		wake_signal(&l->wake);
	}
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

void dx_live_set_model(DxLive *l, const Model *m)
{
	pthread_mutex_lock(&l->mu);
	l->base.model = m;
	/* what is shown or computing is of the old model: it stays on screen,
	 * marked as not answering the key, until the new model's is in */
	l->model_gen++;
	l->asked = 0;
	pthread_mutex_unlock(&l->mu);
}

void dx_live_set_skew(DxLive *l, const SkewTolerance *skew)
{
	pthread_mutex_lock(&l->mu);
	if (skew)
		l->skew = *skew;
	else
		memset(&l->skew, 0, sizeof l->skew);
	pthread_mutex_unlock(&l->mu);
}

void dx_live_set_sampled(DxLive *l, EvSampling sampled)
{
	pthread_mutex_lock(&l->mu);
	l->base.sampled = sampled;
	pthread_mutex_unlock(&l->mu);
}

int dx_live_open(const char *db_path, const Model *m, DxLive **out, Err *err)
{
	DiagnoseOptions base = {.model = m};
	return dx_live_open_with(db_path, &base, out, err);
}

int dx_live_open_with(const char *db_path, const DiagnoseOptions *base, DxLive **out, Err *err)
{
	*out = NULL;
	DxLive *l = xcalloc(1, sizeof *l);
	l->base = *base;
	int rc = store_open(db_path, STORE_READONLY, &l->ui, err);
	if (rc == 0)
		rc = store_open(db_path, STORE_READONLY, &l->wk, err);
	if (rc) {
		store_close(l->ui);
		free(l);
		return rc;
	}
	pthread_mutex_init(&l->mu, NULL);
	pthread_cond_init(&l->cv, NULL);
	int woke = wake_open(&l->wake);
	if (woke != 0 || pthread_create(&l->th, NULL, worker, l) != 0) {
		wake_close(&l->wake);
		store_close(l->ui);
		store_close(l->wk);
		pthread_mutex_destroy(&l->mu);
		pthread_cond_destroy(&l->cv);
		free(l);
		return err_set(err, TT_EIO, woke ? "cannot open a pipe for the diagnosis thread"
		                                 : "cannot start the diagnosis thread");
	}
	*out = l;
	return 0;
}

void dx_live_close(DxLive *l)
{
	if (l == NULL)
		return;
	pthread_mutex_lock(&l->mu);
	l->stop = 1;
	pthread_cond_signal(&l->cv);
	pthread_mutex_unlock(&l->mu);
	pthread_join(l->th, NULL);
	analysis_free(l->pending_a);
	diagnosis_free(l->done);
	diagnosis_free(l->shown);
	store_close(l->ui);
	store_close(l->wk);
	pthread_mutex_destroy(&l->mu);
	pthread_cond_destroy(&l->cv);
	wake_close(&l->wake);
	free(l);
}

int dx_live_wait_fd(DxLive *l)
{
	return wake_fd(&l->wake);
}

int dx_live_ready(DxLive *l)
{
	wake_drain(&l->wake);
	pthread_mutex_lock(&l->mu);
	/* a failure is news too: the screen says why nothing came */
	int r = l->done != NULL || l->err_gen != l->err_seen;
	pthread_mutex_unlock(&l->mu);
	return r;
}

const Diagnosis *dx_live_get(DxLive *l, const DxLiveKey *k, const Analysis *a, int *fresh)
{
	pthread_mutex_lock(&l->mu);
	if (l->done) {
		diagnosis_free(l->shown);
		l->shown = l->done;
		l->shown_key = l->done_key;
		l->shown_model_gen = l->done_model_gen;
		l->has_shown = 1;
		l->done = NULL;
		l->gen++;
	}
	l->err_seen = l->err_gen;
	int have = l->has_shown && same(&l->shown_key, k) && l->shown_model_gen == l->model_gen;
	int coming = (l->running && same(&l->running_key, k) &&
	              l->running_model_gen == l->model_gen) ||
	             (l->has_pending && same(&l->pending, k));
	int64_t t = now_ms();
	/* only the data moved under the same window: the shown diagnosis is
	 * good enough for a while */
	int throttled = l->asked && dx_live_same_range(&l->asked_key, k) &&
	                t - l->asked_ms < DX_LIVE_MIN_REFRESH_MS && l->has_shown &&
	                l->shown_model_gen == l->model_gen;
	if (!have && !coming && !throttled && !(l->asked && same(&l->asked_key, k) && l->err[0])) {
		l->pending = *k;
		analysis_free(l->pending_a);  /* a request not started: dropped */
		l->pending_a = reusable(l, k, a) ? analysis_ref(a) : NULL;
		l->has_pending = 1;
		l->asked = 1;
		l->asked_key = *k;
		l->asked_ms = t;
		pthread_cond_signal(&l->cv);
	}
	pthread_mutex_unlock(&l->mu);
	if (fresh)
		*fresh = have;
	return l->shown;
}

unsigned dx_live_generation(DxLive *l)
{
	return l->gen;
}

int dx_live_shown(DxLive *l, DxLiveKey *k)
{
	if (!l->has_shown || l->shown == NULL)
		return 0;
	*k = l->shown_key;
	return 1;
}

const char *dx_live_failed(DxLive *l, const DxLiveKey *k)
{
	pthread_mutex_lock(&l->mu);
	int f = l->err[0] && dx_live_same_range(&l->err_key, k);
	if (f)
		snprintf(l->err_copy, sizeof l->err_copy, "%s", l->err);
	pthread_mutex_unlock(&l->mu);
	return f ? l->err_copy : NULL;
}

const char *dx_live_error(DxLive *l)
{
	pthread_mutex_lock(&l->mu);
	snprintf(l->err_copy, sizeof l->err_copy, "%s", l->err);
	pthread_mutex_unlock(&l->mu);
	return l->err_copy;
}

void dx_live_counts(DxLive *l, unsigned *reused, unsigned *computed)
{
	pthread_mutex_lock(&l->mu);
	*reused = l->n_reused;
	*computed = l->n_computed;
	pthread_mutex_unlock(&l->mu);
}

int dx_live_busy(DxLive *l)
{
	pthread_mutex_lock(&l->mu);
	int b = l->running || l->has_pending;
	pthread_mutex_unlock(&l->mu);
	return b;
}

int dx_live_check(DxLive *l, const char *name, const CheckOptions *o, CheckTable **out, Err *err)
{
	return check_run(l->ui, name, o, out, err);
}
