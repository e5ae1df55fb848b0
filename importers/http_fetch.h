/*
 * http_fetch.h - HTTP GETs for the pulls from trace back ends: a few
 * requests in flight at once (libcurl's multi interface, on the caller's
 * thread), each with its own time limit, and retries with a growing wait
 * when the server is busy or broken (429, 5xx, no answer), a 429's
 * Retry-After honoured. Replies are handed to a callback on the calling
 * thread, in the order they complete, so the caller may store them
 * without locks; the callback may queue more requests.
 *
 * Library code: never prints. A reply that is not 2xx is given to the
 * callback as it is (status and body): what it means is the caller's to
 * say.
 */
#ifndef TT_HTTP_FETCH_H
#define TT_HTTP_FETCH_H

#include <signal.h>
#include <stdint.h>

#include "buf.h"

typedef struct HttpFetchOptions {
	long timeout_ms;             /* each attempt, connecting included; 0: 10 s */
	int parallel;                /* requests in flight; 0: 4 */
	int retries;                 /* further attempts on 429, 5xx or no
	                              * answer; < 0: none; 0: the default, 4 */
	long backoff_ms;             /* the first wait, doubled each time (a 429's
	                              * Retry-After wins, up to 30 s); 0: 250 ms */
	const char *const *headers;  /* "Name: value" lines, NULL-terminated; may be NULL */
} HttpFetchOptions;

typedef struct HttpReply {
	long status;                 /* HTTP status; 0: no answer (see error) */
	Buf body;
	char content_type[96];       /* "" when none */
	char error[256];             /* transport error ("Connection refused", a
	                              * timeout), "" when there was an answer */
	int attempts;                /* how many were made */
} HttpReply;

/* Called once a request is done (after its last attempt). The reply and
 * url live until the callback returns. */
typedef void (*HttpDoneFn)(void *ud, const char *url, HttpReply *reply);

typedef struct HttpFetch HttpFetch;

/* A fetcher; o is copied (its strings are borrowed and must outlive it). */
HttpFetch *http_fetch_new(const HttpFetchOptions *o);
void http_fetch_free(HttpFetch *f);  /* NULL is a no-op */

/* Queues GET url; done(ud, ...) hears of it from http_fetch_run(). */
void http_fetch_add(HttpFetch *f, const char *url, HttpDoneFn done, void *ud);

/* Runs until every queued request (and every one the callbacks queue) is
 * done, or *stop becomes nonzero (stop may be NULL): then the requests
 * still queued or in flight are dropped without a callback. Returns 0, or
 * -1 when stopped. */
int http_fetch_run(HttpFetch *f, volatile sig_atomic_t *stop);

/* Requests done so far and retries made (for progress lines). */
void http_fetch_counts(const HttpFetch *f, int64_t *done, int64_t *retried);

/* One GET, waited for (with the same retries). r is initialised here;
 * free it with http_reply_fini(). */
void http_get(const HttpFetchOptions *o, const char *url, HttpReply *r);

void http_reply_fini(HttpReply *r);

/* s escaped for a URL's query (curl_easy_escape); malloc'd, caller frees. */
char *http_escape(const char *s);

#endif
