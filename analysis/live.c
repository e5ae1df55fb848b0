/*
 * live.c - a polling read session with a background analysis worker.
 *
 * Two connections because a Store (SQLite opened NOMUTEX) must be used by
 * one thread at a time: the owner's connection answers data_version and
 * trace loads at once, even while the worker spends seconds in
 * analysis_run() on a large database.
 *
 * Handshake (under mu): the owner bumps req_seq and stores the request;
 * the worker copies the newest request, computes without the lock, then
 * publishes the result (freeing any result nobody took) and writes one
 * byte to the pipe so a poll() loop wakes up. A new question (not a
 * catch-up with new rows) on a database whose aggregates cover every span
 * publishes twice: the answer from the aggregates (Analysis.approx) within
 * a few milliseconds, then the exact one, which replaces it.
 */
#include "live.h"

#include "evidence.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "endpoints.h"
#include "wake.h"

struct LiveSession {
	Store *st;                /* owner's connection */
	Store *wst;               /* worker's connection */
	int64_t version;          /* last data_version seen on st */
	pthread_t th;
	int th_started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* request (under mu) */
	AnalysisOptions req;
	char *req_class;          /* owned copy of req.wclass */
	char *req_ep_svc, *req_ep_route; /* owned copies of req.ep_* */
	unsigned req_gen;
	uint64_t req_seq;         /* bumped per request */
	uint64_t done_seq;        /* last request the worker picked up */
	int running;
	int quit;
	int hold_approx_ms;       /* TAILTRIAGE_TEST_HOLD_APPROX_MS: see live_open() */
	/* result (under mu) */
	int has_result;
	LiveResult res;
	Wake wake;                /* a result was published */
};

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int same_str(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

static int same_options(const AnalysisOptions *a, const char *a_cls, const AnalysisOptions *b)
{
	return period_eq(&a->period, &b->period) && a->model == b->model && same_str(a_cls, b->wclass) &&
	       same_str(a->ep_service, b->ep_service) && same_str(a->ep_route, b->ep_route) &&
	       a->skew.set == b->skew.set &&
	       (!a->skew.set || (a->skew.abs_ns == b->skew.abs_ns && a->skew.frac == b->skew.frac));
}

/* Hands a result to the owner (replacing one it has not taken) and wakes
 * its poll(). Called with mu held. */
static void publish(LiveSession *ls, const LiveResult *r)
{
	if (ls->has_result) {
		analysis_free(ls->res.a);
		analysis_endpoints_free(ls->res.endpoints);
	}
	ls->res = *r;
	ls->has_result = 1;
	wake_signal(&ls->wake);
}

/* Keeps the approximate answer on screen hold_approx_ms before the exact
 * analysis starts, unless the session closes or a new question comes
 * (under mu). For the terminal tests: on a loaded machine the exact answer
 * could replace the approximate one before a test's look at the screen. */
static void hold_approx(LiveSession *ls)
{
	if (ls->hold_approx_ms <= 0)
		return;
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ls->hold_approx_ms / 1000;
	until.tv_nsec += (long)(ls->hold_approx_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	while (!ls->quit && ls->req_seq == ls->done_seq)
		if (pthread_cond_timedwait(&ls->cv, &ls->mu, &until) == ETIMEDOUT)
			break;
}

static void *worker(void *arg)
{
	LiveSession *ls = arg;
	AnalysisState *state = NULL;  /* kept while the options stay the same */
	AnalysisOptions state_opt;
	char *state_cls = NULL;
	char *state_ep[2] = {NULL, NULL}; /* state_opt's endpoint strings */
	memset(&state_opt, 0, sizeof state_opt);
	pthread_mutex_lock(&ls->mu);
	for (;;) {
		while (!ls->quit && ls->req_seq == ls->done_seq)
			pthread_cond_wait(&ls->cv, &ls->mu);
		if (ls->quit)
			break;
		AnalysisOptions opt = ls->req;
		char *cls = ls->req_class ? xstrdup(ls->req_class) : NULL;
		opt.wclass = cls;
		char *ep[2] = {ls->req_ep_svc ? xstrdup(ls->req_ep_svc) : NULL,
		               ls->req_ep_route ? xstrdup(ls->req_ep_route) : NULL};
		opt.ep_service = ep[0];
		opt.ep_route = ep[1];
		unsigned gen = ls->req_gen;
		ls->done_seq = ls->req_seq;
		ls->running = 1;
		pthread_mutex_unlock(&ls->mu);

		LiveResult r;
		memset(&r, 0, sizeof r);
		r.gen = gen;
		double t0 = now_ms();
		/* the same question as last time: catch up with new rows only */
		int fresh = 0;
		if (state == NULL || !same_options(&state_opt, state_cls, &opt)) {
			analysis_state_free(state);
			free(state_cls);
			state = analysis_state_new(&opt);
			state_opt = opt;
			state_cls = cls;
			cls = NULL;
			free(state_ep[0]);
			free(state_ep[1]);
			state_ep[0] = ep[0];
			state_ep[1] = ep[1];
			ep[0] = ep[1] = NULL;
			state_opt.ep_service = state_ep[0];
			state_opt.ep_route = state_ep[1];
			fresh = 1;
		}
		/* a new question on a database whose aggregates are current: their
		 * answer first (marked approximate), the exact one when it is done */
		if (fresh) {
			Analysis *ap = NULL;
			Err e = {0};
			if (analysis_from_aggregates(ls->wst, &opt, &ap, &e) == 0) {
				LiveResult q;
				memset(&q, 0, sizeof q);
				q.a = ap;
				q.gen = gen;
				q.compute_ms = now_ms() - t0;
				pthread_mutex_lock(&ls->mu);
				publish(ls, &q);
				hold_approx(ls);
				pthread_mutex_unlock(&ls->mu);
			}
		}
		/* a new question's first read also builds the evidence's request
		 * sets (all classes), so the diagnosis that reuses this analysis
		 * reads no spans of its own; past the sample bound none are kept
		 * (the diagnosis samples on its own) */
		EvTap *tap = fresh ? evidence_tap_new(state, &opt, EVIDENCE_SAMPLE_DEFAULT) : NULL;
		r.rc = analysis_state_update(state, ls->wst, &r.err);
		if (tap)
			analysis_state_tap(state, NULL, NULL); /* the tap goes now */
		if (r.rc == 0) {
			r.a = analysis_state_result(state, ls->wst);
			evidence_tap_finish(tap, r.a);
			/* the endpoints of the same window and baseline, for the
			 * Endpoints pane; a failure leaves the previous list */
			Err e = {0};
			if (analysis_endpoints(ls->wst, &opt.period, opt.model, &r.endpoints, &e) != 0)
				r.endpoints = NULL;
		} else {
			evidence_tap_free(tap);
			analysis_state_free(state); /* start over next time */
			state = NULL;
		}
		r.compute_ms = now_ms() - t0;
		free(cls);
		free(ep[0]);
		free(ep[1]);

		pthread_mutex_lock(&ls->mu);
		ls->running = 0;
		publish(ls, &r);
	}
	pthread_mutex_unlock(&ls->mu);
	analysis_state_free(state);
	free(state_cls);
	free(state_ep[0]);
	free(state_ep[1]);
	return NULL;
}

int live_open(const char *path, LiveSession **out, Err *err)
{
	*out = NULL;
	LiveSession *ls = xcalloc(1, sizeof *ls);
	ls->wake = WAKE_CLOSED;
	pthread_mutex_init(&ls->mu, NULL);
	pthread_cond_init(&ls->cv, NULL);
	if (store_open(path, STORE_READONLY, &ls->st, err) ||
	    store_open(path, STORE_READONLY, &ls->wst, err))
		goto fail;
	if (wake_open(&ls->wake) != 0) {
		err_set(err, TT_EIO, "pipe: %s", strerror(errno));
		goto fail;
	}
	ls->version = store_data_version(ls->st);
	/* A test seam, not a user setting: the terminal tests set it so that
	 * the approximate answer of a new question stays on screen long
	 * enough to be read on a busy machine (0..10000 ms; unset: 0). */
	const char *hold = getenv("TAILTRIAGE_TEST_HOLD_APPROX_MS");
	if (hold) {
		long v = strtol(hold, NULL, 10);
		ls->hold_approx_ms = v < 0 ? 0 : v > 10000 ? 10000 : (int)v;
	}
	if (pthread_create(&ls->th, NULL, worker, ls) != 0) {
		err_set(err, TT_EIO, "cannot start the analysis thread");
		goto fail;
	}
	ls->th_started = 1;
	*out = ls;
	return 0;
fail:
	live_close(ls);
	return err && err->code ? err->code : TT_EIO;
}

void live_close(LiveSession *ls)
{
	if (ls == NULL)
		return;
	if (ls->th_started) {
		pthread_mutex_lock(&ls->mu);
		ls->quit = 1;
		pthread_cond_signal(&ls->cv);
		pthread_mutex_unlock(&ls->mu);
		pthread_join(ls->th, NULL);
	}
	if (ls->has_result) {
		analysis_free(ls->res.a);
		analysis_endpoints_free(ls->res.endpoints);
	}
	free(ls->req_class);
	free(ls->req_ep_svc);
	free(ls->req_ep_route);
	store_close(ls->st);
	store_close(ls->wst);
	wake_close(&ls->wake);
	pthread_mutex_destroy(&ls->mu);
	pthread_cond_destroy(&ls->cv);
	free(ls);
}

void live_request(LiveSession *ls, const AnalysisOptions *opt, unsigned gen)
{
	pthread_mutex_lock(&ls->mu);
	ls->req = *opt;
	free(ls->req_class);
	ls->req_class = opt->wclass ? xstrdup(opt->wclass) : NULL;
	ls->req.wclass = NULL; /* the worker uses its own copy of req_class */
	free(ls->req_ep_svc);
	free(ls->req_ep_route);
	ls->req_ep_svc = opt->ep_service ? xstrdup(opt->ep_service) : NULL;
	ls->req_ep_route = opt->ep_route ? xstrdup(opt->ep_route) : NULL;
	ls->req.ep_service = ls->req.ep_route = NULL; /* likewise */
	ls->req_gen = gen;
	ls->req_seq++;
	pthread_cond_signal(&ls->cv);
	pthread_mutex_unlock(&ls->mu);
}

int live_check(LiveSession *ls)
{
	int64_t v = store_data_version(ls->st);
	if (v == ls->version)
		return 0;
	ls->version = v;
	return 1;
}

int live_take(LiveSession *ls, LiveResult *res)
{
	wake_drain(&ls->wake);
	int got = 0;
	pthread_mutex_lock(&ls->mu);
	if (ls->has_result) {
		ls->has_result = 0;
		int superseded = ls->res.gen != ls->req_gen;
		if (superseded) {
			analysis_free(ls->res.a);
			analysis_endpoints_free(ls->res.endpoints);
		} else {
			*res = ls->res;
			got = 1;
		}
		memset(&ls->res, 0, sizeof ls->res);
	}
	pthread_mutex_unlock(&ls->mu);
	return got;
}

void live_result_free(LiveResult *res)
{
	analysis_free(res->a);
	analysis_endpoints_free(res->endpoints);
	memset(res, 0, sizeof *res);
}

int live_busy(LiveSession *ls)
{
	pthread_mutex_lock(&ls->mu);
	int b = ls->running || ls->req_seq != ls->done_seq;
	pthread_mutex_unlock(&ls->mu);
	return b;
}

int live_wait_fd(LiveSession *ls)
{
	return wake_fd(&ls->wake);
}

int live_trace(LiveSession *ls, const char *trace_id, const SkewTolerance *skew, TraceView **out,
               Err *err)
{
	return trace_view_load(ls->st, trace_id, skew, out, err);
}
