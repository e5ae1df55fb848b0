/*
 * http_fetch.c - see http_fetch.h.
 *
 * One CURLM on the caller's thread. Requests wait in a FIFO; at most
 * `parallel` are attached to the multi handle; one that failed in a way
 * worth another try (no answer, 429, 5xx) waits in the FIFO again with a
 * time before which it is not started. Invariants: a request is in
 * exactly one of the queue or the multi handle until its callback runs;
 * its easy handle is reused across its attempts.
 */
#include "http_fetch.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define MAX_BODY ((size_t)512 << 20)  /* one reply; a trace back end's answer */
#define MAX_WAIT_MS 30000L

typedef struct Req {
	char *url;
	HttpDoneFn done;
	void *ud;
	CURL *easy;
	HttpReply reply;
	int64_t not_before_ms;   /* monotonic; 0: now */
	long retry_after_ms;     /* from the last answer's Retry-After, -1 none */
	char errbuf[CURL_ERROR_SIZE];
	struct Req *next;
} Req;

struct HttpFetch {
	HttpFetchOptions o;
	struct curl_slist *headers;
	CURLM *multi;
	Req *head, *tail;        /* waiting */
	Req **live;              /* attached to multi, `running` of them */
	int running;
	int64_t done, retried;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init_once(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *ud)
{
	Req *r = ud;
	size_t n = size * nmemb;
	if (r->reply.body.len + n > MAX_BODY)
		return 0;  /* curl fails the transfer: CURLE_WRITE_ERROR */
	buf_add(&r->reply.body, ptr, n);
	return n;
}

/* Retry-After: seconds (an HTTP date is taken as "a while": 1 s). */
static size_t on_header(char *ptr, size_t size, size_t nmemb, void *ud)
{
	Req *r = ud;
	size_t n = size * nmemb;
	static const char key[] = "retry-after:";
	if (n > sizeof key - 1 && strncasecmp(ptr, key, sizeof key - 1) == 0) {
		char v[32];
		size_t m = n - (sizeof key - 1);
		if (m >= sizeof v)
			m = sizeof v - 1;
		memcpy(v, ptr + sizeof key - 1, m);
		v[m] = '\0';
		char *end;
		double s = strtod(v, &end);
		/* s >= 0 is false for a NaN; a huge or infinite value is capped
		 * before the cast (a double out of range cast to long is
		 * undefined), as the wait is anyway */
		r->retry_after_ms = end != v && s >= 0 ? (s < MAX_WAIT_MS / 1000.0 ? (long)(s * 1000)
		                                                                    : MAX_WAIT_MS)
		                                       : 1000;
	}
	return n;
}

HttpFetch *http_fetch_new(const HttpFetchOptions *o)
{
	pthread_once(&curl_once, curl_init_once);
	HttpFetch *f = xcalloc(1, sizeof *f);
	if (o)
		f->o = *o;
	if (f->o.timeout_ms <= 0)
		f->o.timeout_ms = 10000;
	if (f->o.parallel <= 0)
		f->o.parallel = 4;
	if (f->o.retries == 0)
		f->o.retries = 4;
	if (f->o.retries < 0)
		f->o.retries = 0;
	if (f->o.backoff_ms <= 0)
		f->o.backoff_ms = 250;
	f->headers = curl_slist_append(NULL, "Accept: application/json");
	for (const char *const *h = f->o.headers; h && *h; h++)
		f->headers = curl_slist_append(f->headers, *h);
	f->multi = curl_multi_init();
	f->live = xcalloc((size_t)f->o.parallel, sizeof *f->live);
	return f;
}

static void req_free(Req *r)
{
	if (r->easy)
		curl_easy_cleanup(r->easy);
	free(r->url);
	http_reply_fini(&r->reply);
	free(r);
}

void http_fetch_free(HttpFetch *f)
{
	if (f == NULL)
		return;
	/* what a stopped run left in flight or waiting */
	for (int i = 0; i < f->running; i++) {
		curl_multi_remove_handle(f->multi, f->live[i]->easy);
		req_free(f->live[i]);
	}
	for (Req *r = f->head; r;) {
		Req *next = r->next;
		req_free(r);
		r = next;
	}
	curl_multi_cleanup(f->multi);
	curl_slist_free_all(f->headers);
	free(f->live);
	free(f);
}

void http_fetch_add(HttpFetch *f, const char *url, HttpDoneFn done, void *ud)
{
	Req *r = xcalloc(1, sizeof *r);
	r->url = xstrdup(url);
	r->done = done;
	r->ud = ud;
	r->retry_after_ms = -1;
	buf_init(&r->reply.body);
	if (f->tail)
		f->tail->next = r;
	else
		f->head = r;
	f->tail = r;
}

static void start(HttpFetch *f, Req *r)
{
	if (r->easy == NULL) {
		r->easy = curl_easy_init();
		curl_easy_setopt(r->easy, CURLOPT_URL, r->url);
		curl_easy_setopt(r->easy, CURLOPT_HTTPHEADER, f->headers);
		curl_easy_setopt(r->easy, CURLOPT_WRITEFUNCTION, on_data);
		curl_easy_setopt(r->easy, CURLOPT_WRITEDATA, r);
		curl_easy_setopt(r->easy, CURLOPT_HEADERFUNCTION, on_header);
		curl_easy_setopt(r->easy, CURLOPT_HEADERDATA, r);
		curl_easy_setopt(r->easy, CURLOPT_ERRORBUFFER, r->errbuf);
		curl_easy_setopt(r->easy, CURLOPT_TIMEOUT_MS, f->o.timeout_ms);
		curl_easy_setopt(r->easy, CURLOPT_CONNECTTIMEOUT_MS, f->o.timeout_ms);
		curl_easy_setopt(r->easy, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(r->easy, CURLOPT_USERAGENT, "tailtriage-pull/0.1");
		curl_easy_setopt(r->easy, CURLOPT_ACCEPT_ENCODING, "");
		curl_easy_setopt(r->easy, CURLOPT_PROTOCOLS_STR, "http,https");
		curl_easy_setopt(r->easy, CURLOPT_PRIVATE, r);
	}
	buf_reset(&r->reply.body);
	r->reply.content_type[0] = '\0';
	r->reply.error[0] = '\0';
	r->reply.status = 0;
	r->errbuf[0] = '\0';
	r->retry_after_ms = -1;
	r->reply.attempts++;
	curl_multi_add_handle(f->multi, r->easy);
	f->live[f->running++] = r;
}

/* A finished attempt: another one later, or the callback. */
static void finish(HttpFetch *f, Req *r, CURLcode rc)
{
	curl_multi_remove_handle(f->multi, r->easy);
	for (int i = 0; i < f->running; i++)
		if (f->live[i] == r) {
			f->live[i] = f->live[--f->running];
			break;
		}
	HttpReply *rep = &r->reply;
	if (rc == CURLE_OK) {
		curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &rep->status);
		char *ct = NULL;
		curl_easy_getinfo(r->easy, CURLINFO_CONTENT_TYPE, &ct);
		snprintf(rep->content_type, sizeof rep->content_type, "%s", ct ? ct : "");
	} else {
		rep->status = 0;
		snprintf(rep->error, sizeof rep->error, "%s",
		         r->errbuf[0] ? r->errbuf : curl_easy_strerror(rc));
		size_t n = strlen(rep->error);
		while (n && (rep->error[n - 1] == '\n' || rep->error[n - 1] == '.'))
			rep->error[--n] = '\0';
	}
	int again = rep->status == 0 || rep->status == 429 || (rep->status >= 500 && rep->status <= 599);
	if (rc == CURLE_WRITE_ERROR)
		again = 0;  /* a reply larger than MAX_BODY: no better next time */
	if (again && rep->attempts <= f->o.retries) {
		long wait = f->o.backoff_ms << (rep->attempts - 1 < 10 ? rep->attempts - 1 : 10);
		if (r->retry_after_ms >= 0)
			wait = r->retry_after_ms;
		if (wait > MAX_WAIT_MS)
			wait = MAX_WAIT_MS;
		r->not_before_ms = now_ms() + wait;
		r->next = NULL;
		if (f->tail)
			f->tail->next = r;
		else
			f->head = r;
		f->tail = r;
		f->retried++;
		return;
	}
	f->done++;
	r->done(r->ud, r->url, rep);
	req_free(r);
}

/* Starts what may start; returns ms until a waiting request may (-1: none). */
static long start_ready(HttpFetch *f)
{
	int64_t now = now_ms();
	long next = -1;
	Req *prev = NULL;
	for (Req *r = f->head; r && f->running < f->o.parallel;) {
		Req *nx = r->next;
		if (r->not_before_ms <= now) {
			if (prev)
				prev->next = nx;
			else
				f->head = nx;
			if (f->tail == r)
				f->tail = prev;
			r->next = NULL;
			start(f, r);
		} else {
			long w = (long)(r->not_before_ms - now);
			if (next < 0 || w < next)
				next = w;
			prev = r;
		}
		r = nx;
	}
	return next;
}

int http_fetch_run(HttpFetch *f, volatile sig_atomic_t *stop)
{
	for (;;) {
		if (stop && *stop)
			break;
		long wait = start_ready(f);
		if (f->running == 0 && f->head == NULL)
			return 0;
		int still = 0;
		curl_multi_perform(f->multi, &still);
		CURLMsg *m;
		int left;
		while ((m = curl_multi_info_read(f->multi, &left)) != NULL) {
			if (m->msg != CURLMSG_DONE)
				continue;
			Req *r = NULL;
			curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&r);
			finish(f, r, m->data.result);
		}
		if (stop && *stop)
			break;
		if (f->running == 0 && f->head == NULL)
			return 0;
		long ms = f->running ? 100 : (wait >= 0 ? wait : 100);
		if (ms > 100)
			ms = 100;  /* look at *stop now and then */
		if (f->running)
			curl_multi_poll(f->multi, NULL, 0, (int)ms, NULL);
		else {
			struct timespec ts = {0, ms * 1000000L};
			nanosleep(&ts, NULL);
		}
	}
	/* stopped: what is in flight or waits goes with http_fetch_free() */
	return -1;
}

void http_fetch_counts(const HttpFetch *f, int64_t *done, int64_t *retried)
{
	*done = f->done;
	*retried = f->retried;
}

typedef struct One {
	HttpReply *out;
} One;

static void one_done(void *ud, const char *url, HttpReply *r)
{
	(void)url;
	One *o = ud;
	o->out->status = r->status;
	o->out->attempts = r->attempts;
	snprintf(o->out->content_type, sizeof o->out->content_type, "%s", r->content_type);
	snprintf(o->out->error, sizeof o->out->error, "%s", r->error);
	buf_reset(&o->out->body);
	buf_add(&o->out->body, r->body.p ? r->body.p : "", r->body.len);
}

void http_get(const HttpFetchOptions *o, const char *url, HttpReply *r)
{
	memset(r, 0, sizeof *r);
	buf_init(&r->body);
	HttpFetch *f = http_fetch_new(o);
	One one = {r};
	http_fetch_add(f, url, one_done, &one);
	http_fetch_run(f, NULL);
	http_fetch_free(f);
}

void http_reply_fini(HttpReply *r)
{
	buf_fini(&r->body);
}

char *http_escape(const char *s)
{
	pthread_once(&curl_once, curl_init_once);
	char *e = curl_easy_escape(NULL, s, 0);
	char *out = xstrdup(e ? e : "");
	curl_free(e);
	return out;
}
