/*
 * trace_pull.c - see trace_pull.h.
 *
 * The HTTP shapes read (each test fixture cites where its shape comes
 * from):
 *  - Jaeger v2, API v3 (grpc-gateway JSON): GET /api/v3/services ->
 *    {"services":[...]}; GET /api/v3/trace-summaries -> {"summaries":
 *    [{"traceId","minStartTimeUnixNano","maxEndTimeUnixNano",...}]}, a
 *    newer route: where it is missing, GET /api/v3/traces (the same query,
 *    whole traces as {"result": OTLP}) lists the candidates instead; GET
 *    /api/v3/traces/ID -> {"result": OTLP}. A search that finds nothing
 *    answers 404 {"error":{"httpCode":404,"message":"No traces found"}}:
 *    an empty list. Query parameters in their snake_case names, which
 *    every v2 release accepts (newer ones prefer camelCase and keep these
 *    as aliases); times in RFC 3339 with nanoseconds, durations as Go
 *    durations ("1500000ns").
 *  - Jaeger v1: GET /api/services -> {"data":[...]}; GET /api/traces?
 *    service&operation&start&end (µs)&minDuration&limit -> {"data":
 *    [trace...]}; GET /api/traces/ID -> {"data":[trace]} (the Jaeger
 *    importer reads these).
 *  - Tempo: GET /api/search?q=TraceQL&start&end (s)&limit&spss ->
 *    {"traces":[{"traceID","startTimeUnixNano","durationMs","spanSets":
 *    [{"spans":[{"startTimeUnixNano","durationNanos"}]}]}]}; GET
 *    /api/v2/traces/ID -> {"trace": OTLP}, or on older servers (no v2
 *    route) GET /api/traces/ID -> {"batches":[...]}; GET
 *    /api/search/tag/service.name/values -> {"tagValues":[...]} for the
 *    "services seen" of an empty search. Trace ids may come without
 *    their leading zeros: they are padded to 32 hex digits.
 *
 * A trace's length, for the slowest set, is what the back end says of
 * the entry: the matched span's duration (Tempo's span sets, Jaeger v1's
 * spans of the service and operation), else the trace's extent (Jaeger's
 * summaries).
 */
#include "trace_pull.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "hash.h"
#include "sanitize.h"

enum { API_JAEGER_V3 = 1, API_JAEGER_V1, API_TEMPO };

typedef struct Cand {
	char id[33];
	int64_t start_ns, dur_ns;
	size_t seq;              /* cands_merge(): the order listed */
} Cand;

typedef struct Cands {
	Cand *v;
	size_t n, cap;
} Cands;

typedef struct Puller {
	Store *st;
	const TracePullOptions *o;
	TracePullResult *res;
	Err *err;
	int api;
	int summaries;           /* Jaeger v3: /api/v3/trace-summaries answers */
	int tempo_v1;            /* Tempo without /api/v2/traces */
	int page;
	char base[1024];         /* the URL without a trailing '/' */
	TracePullProgress pg;
	/* the fetch phase */
	struct Want *want;
	size_t n_want, cap_want;
	size_t *want_at;         /* want's indexes + 1 by id hash (0: free) */
	size_t cap_at;           /* a power of two, more than twice n_want */
} Puller;

/* A chosen trace and the sets it belongs to. */
typedef struct Want {
	char id[33];
	int64_t sets[4];
	int n_sets;
	int done;
} Want;

const char *trace_pull_backend_name(TracePullBackend b)
{
	return b == TRACE_PULL_TEMPO ? "tempo" : "jaeger";
}

static void progress(Puller *p, const char *phase)
{
	p->pg.phase = phase;
	p->pg.queries = p->res->queries;
	if (p->o->progress)
		p->o->progress(p->o->progress_ctx, &p->pg);
}

static int stopped(const Puller *p)
{
	return p->o->stop && *p->o->stop;
}

/* Longest length a candidate keeps (36 years): a server's lengths are
 * untrusted, and the searches' thresholds add to them. */
#define DUR_MAX ((int64_t)1 << 60)

/* Appends a candidate; cands_merge() makes the ids unique. A back end
 * lists a trace once per span (Jaeger's whole traces) or per replica, and
 * a search may list hundreds of thousands: looking each id up in the list
 * on every add cost n^2 / 2 comparisons (minutes at 300,000). */
static void cands_add(Cands *c, const char *id, int64_t start, int64_t dur)
{
	if (dur < 0)
		dur = 0;
	if (dur > DUR_MAX)
		dur = DUR_MAX;
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 64;
		c->v = xrealloc(c->v, c->cap * sizeof *c->v);
	}
	Cand *x = &c->v[c->n++];
	snprintf(x->id, sizeof x->id, "%s", id);
	x->start_ns = start;
	x->dur_ns = dur;
}

static int by_id_seq(const void *a, const void *b)
{
	const Cand *x = a, *y = b;
	int d = strcmp(x->id, y->id);
	if (d)
		return d;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int by_seq(const void *a, const void *b)
{
	const Cand *x = a, *y = b;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* One candidate per id, where it was first listed, with the earliest
 * start and the longest length listed for it (n log n: two sorts). */
static void cands_merge(Cands *c)
{
	if (c->n < 2)
		return;
	for (size_t i = 0; i < c->n; i++)
		c->v[i].seq = i;
	qsort(c->v, c->n, sizeof *c->v, by_id_seq);
	size_t k = 0;
	for (size_t i = 1; i < c->n; i++) {
		Cand *x = &c->v[k], *y = &c->v[i];
		if (strcmp(x->id, y->id) != 0) {
			c->v[++k] = *y;
			continue;
		}
		if (y->dur_ns > x->dur_ns)
			x->dur_ns = y->dur_ns;
		if (y->start_ns < x->start_ns)
			x->start_ns = y->start_ns;
	}
	c->n = k + 1;
	qsort(c->v, c->n, sizeof *c->v, by_seq);
}

/* ---- small helpers ------------------------------------------------------ */

/* A trace id as 32 lowercase hex digits (Tempo drops leading zeros);
 * 0 when it is not hex or too long. */
static int norm_id(const char *s, char out[33])
{
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n > 32)
		return 0;
	memset(out, '0', 32);
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (ch >= 'A' && ch <= 'F')
			ch = (char)(ch - 'A' + 'a');
		if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')))
			return 0;
		out[32 - n + i] = ch;
	}
	out[32] = '\0';
	return 1;
}

/* RFC 3339 with nanoseconds, UTC. */
static void rfc3339(int64_t ns, char *out, size_t n)
{
	time_t s = (time_t)(ns / 1000000000);
	int64_t frac = ns % 1000000000;
	if (frac < 0) {
		frac += 1000000000;
		s--;
	}
	struct tm tm;
	gmtime_r(&s, &tm);
	char day[32];
	strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, n, "%s.%09lldZ", day, (long long)frac);
}

/* A number of v times mul as int64 (a back end's times: strings or
 * numbers); 0 when v is neither, or the product is not finite or does not
 * fit (a double out of range cast to int64 is undefined behaviour). */
static int64_t json_scaled(const cJSON *v, double mul)
{
	double d;
	if (cJSON_IsString(v)) {
		if (mul == 1)
			return strtoll(v->valuestring, NULL, 10);
		d = strtod(v->valuestring, NULL);
	} else if (cJSON_IsNumber(v)) {
		d = v->valuedouble;
	} else {
		return 0;
	}
	d *= mul;
	return d > -9.2e18 && d < 9.2e18 ? (int64_t)d : 0;
}

static int64_t json_i64(const cJSON *v)
{
	return json_scaled(v, 1);
}

/* e - s when e is after s, else 0; 0 too when the difference does not
 * fit (a server's times are untrusted: INT64_MIN and INT64_MAX overflow) */
static int64_t span_len(int64_t s, int64_t e)
{
	if (e <= s || (s < 0 && e > INT64_MAX + s))
		return 0;
	return e - s;
}

/* The first bytes of a body, printable, for messages. */
static void excerpt(char *out, size_t n, const Buf *b)
{
	size_t k = 0;
	for (size_t i = 0; i < b->len && k + 4 < n && i < 160; i++) {
		unsigned char c = (unsigned char)b->p[i];
		out[k++] = c >= 0x20 && c < 0x7f ? (char)c : ' ';
	}
	if (b->len > 160 && k + 4 < n) {
		memcpy(out + k, "...", 3);
		k += 3;
	}
	out[k] = '\0';
}

/* A reply that is not what the API gives: the located reason. */
static int http_trouble(Puller *p, const char *what, const char *url, const HttpReply *r)
{
	char ex[200];
	excerpt(ex, sizeof ex, &r->body);
	if (r->status == 0)
		return err_set(p->err, TT_EIO, "%s: cannot reach %s: %s (after %d attempt%s)",
		               trace_pull_backend_name(p->o->backend), url, r->error, r->attempts,
		               r->attempts == 1 ? "" : "s");
	if (r->status == 401 || r->status == 403)
		return err_set(p->err, TT_EIO,
		               "%s: %s: HTTP %ld (%s): %s; give credentials with --token or "
		               "--header%s", trace_pull_backend_name(p->o->backend), url, r->status,
		               r->status == 401 ? "not authenticated" : "forbidden",
		               ex[0] ? ex : "(no body)",
		               ", and the tenant of a multi-tenant install with --tenant");
	char ct[sizeof r->content_type];
	san_clean(r->content_type, ct, sizeof ct);  /* the server's bytes */
	return err_set(p->err, TT_EIO, "%s: %s: %s: HTTP %ld%s%s%s%s",
	               trace_pull_backend_name(p->o->backend), url, what, r->status,
	               ct[0] ? " " : "", ct, ex[0] ? ": " : "", ex);
}

/* One search or lookup, waited for. */
static void get(Puller *p, const char *url, HttpReply *r)
{
	http_get(&p->o->http, url, r);
	p->res->queries++;
	p->pg.retries += r->attempts > 1 ? r->attempts - 1 : 0;
	progress(p, "searching");
}

/* body parsed as a JSON object, or NULL. */
static cJSON *json_object(const HttpReply *r)
{
	cJSON *j = cJSON_ParseWithLength(r->body.p ? r->body.p : "", r->body.len);
	if (j && !cJSON_IsObject(j)) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

/* Jaeger's "nothing matched": 404 with a JSON error that says so (v3), or
 * an empty data list (v1). */
static int no_traces(const HttpReply *r)
{
	if (r->status != 404)
		return 0;
	cJSON *j = json_object(r);
	const cJSON *e = j ? cJSON_GetObjectItemCaseSensitive(j, "error") : NULL;
	const cJSON *m = e ? cJSON_GetObjectItemCaseSensitive(e, "message") : NULL;
	int yes = cJSON_IsString(m) && strstr(m->valuestring, "No traces found") != NULL;
	cJSON_Delete(j);
	return yes;
}

/* ---- which API ---------------------------------------------------------- */

static void append_names(Buf *out, const cJSON *arr, const char *key)
{
	const cJSON *x;
	int n = 0;
	cJSON_ArrayForEach(x, arr) {
		const cJSON *v = x;
		if (key && cJSON_IsObject(x))
			v = cJSON_GetObjectItemCaseSensitive(x, key);
		if (!cJSON_IsString(v))
			continue;
		if (n++ == 12) {
			buf_adds(out, ", ...");
			break;
		}
		char name[256];
		san_clean(v->valuestring, name, sizeof name);  /* the server's names */
		buf_printf(out, "%s%s", out->len ? ", " : "", name);
	}
}

/* The services the back end knows, as "a, b, c" ("" when it cannot say). */
static void services_seen(Puller *p, Buf *out)
{
	Buf url;
	buf_init(&url);
	const char *key = NULL, *arr = NULL;
	switch (p->api) {
	case API_JAEGER_V3: buf_printf(&url, "%s/api/v3/services", p->base); arr = "services"; break;
	case API_JAEGER_V1: buf_printf(&url, "%s/api/services", p->base); arr = "data"; break;
	default:
		buf_printf(&url, "%s/api/search/tag/service.name/values", p->base);
		arr = "tagValues";
		key = "value";
		break;
	}
	HttpReply r;
	get(p, buf_str(&url), &r);
	cJSON *j = r.status == 200 ? json_object(&r) : NULL;
	const cJSON *a = j ? cJSON_GetObjectItemCaseSensitive(j, arr) : NULL;
	if (cJSON_IsArray(a))
		append_names(out, a, key);
	cJSON_Delete(j);
	http_reply_fini(&r);
	buf_fini(&url);
}

static int detect(Puller *p)
{
	Buf url;
	buf_init(&url);
	HttpReply r;
	int rc = 0;
	if (p->o->backend == TRACE_PULL_JAEGER) {
		buf_printf(&url, "%s/api/v3/services", p->base);
		get(p, buf_str(&url), &r);
		cJSON *j = r.status == 200 ? json_object(&r) : NULL;
		if (j && cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(j, "services"))) {
			p->api = API_JAEGER_V3;
			snprintf(p->res->api, sizeof p->res->api, "Jaeger API v3");
		} else if (r.status == 404) {
			/* no v3 route: a Jaeger v1 query service? */
			cJSON_Delete(j);
			j = NULL;
			http_reply_fini(&r);
			buf_reset(&url);
			buf_printf(&url, "%s/api/services", p->base);
			get(p, buf_str(&url), &r);
			j = r.status == 200 ? json_object(&r) : NULL;
			if (j && cJSON_HasObjectItem(j, "data")) {
				p->api = API_JAEGER_V1;
				snprintf(p->res->api, sizeof p->res->api, "Jaeger API v1 (/api/traces)");
			}
		}
		if (p->api == 0)
			rc = r.status == 0 || r.status == 401 || r.status == 403
			         ? http_trouble(p, "", buf_str(&url), &r)
			         : http_trouble(p, "not Jaeger's query API (neither /api/v3/services nor "
			                        "/api/services answers as Jaeger does)", buf_str(&url), &r);
		cJSON_Delete(j);
	} else {
		/* a search of one second tells a Tempo (its answer has "traces") */
		int64_t t = p->o->window.from / 1000000000;
		buf_printf(&url, "%s/api/search?limit=1&start=%lld&end=%lld", p->base, (long long)t,
		           (long long)(t + 1));
		get(p, buf_str(&url), &r);
		cJSON *j = r.status == 200 ? json_object(&r) : NULL;
		if (j && cJSON_HasObjectItem(j, "traces")) {
			p->api = API_TEMPO;
			snprintf(p->res->api, sizeof p->res->api, "Tempo API");
		} else {
			rc = r.status == 0 || r.status == 401 || r.status == 403
			         ? http_trouble(p, "", buf_str(&url), &r)
			         : http_trouble(p, "not Tempo's API (its /api/search answers "
			                        "{\"traces\":[...]})", buf_str(&url), &r);
		}
		cJSON_Delete(j);
	}
	http_reply_fini(&r);
	buf_fini(&url);
	return rc;
}

/* ---- listing candidates -------------------------------------------------- */

/* Candidates from OTLP resourceSpans (Jaeger v3 /api/v3/traces): each
 * trace's entry spans (the service and operation), else its extent. */
static void cands_from_otlp(Puller *p, const cJSON *rss, Cands *c)
{
	const cJSON *rs;
	cJSON_ArrayForEach(rs, rss) {
		const char *svc = NULL;
		const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetObjectItemCaseSensitive(rs, "resource"), "attributes");
		const cJSON *kv;
		cJSON_ArrayForEach(kv, attrs) {
			const cJSON *k = cJSON_GetObjectItemCaseSensitive(kv, "key");
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(
			    cJSON_GetObjectItemCaseSensitive(kv, "value"), "stringValue");
			if (cJSON_IsString(k) && strcmp(k->valuestring, "service.name") == 0 &&
			    cJSON_IsString(v))
				svc = v->valuestring;
		}
		const cJSON *ss;
		cJSON_ArrayForEach(ss, cJSON_GetObjectItemCaseSensitive(rs, "scopeSpans")) {
			const cJSON *sp;
			cJSON_ArrayForEach(sp, cJSON_GetObjectItemCaseSensitive(ss, "spans")) {
				const cJSON *tid = cJSON_GetObjectItemCaseSensitive(sp, "traceId");
				const cJSON *nm = cJSON_GetObjectItemCaseSensitive(sp, "name");
				char id[33];
				if (!cJSON_IsString(tid) || !norm_id(tid->valuestring, id))
					continue;
				int64_t s = json_i64(cJSON_GetObjectItemCaseSensitive(sp, "startTimeUnixNano"));
				int64_t e = json_i64(cJSON_GetObjectItemCaseSensitive(sp, "endTimeUnixNano"));
				int entry = svc && strcmp(svc, p->o->service) == 0 &&
				            (p->o->operation == NULL ||
				             (cJSON_IsString(nm) && strcmp(nm->valuestring, p->o->operation) == 0));
				/* an entry span counts its own length; others only place it */
				cands_add(c, id, s, entry ? span_len(s, e) : 0);
			}
		}
	}
}

/* Candidates from Jaeger v1 traces. */
static void cands_from_v1(Puller *p, const cJSON *data, Cands *c)
{
	const cJSON *tr;
	cJSON_ArrayForEach(tr, data) {
		const cJSON *tid = cJSON_GetObjectItemCaseSensitive(tr, "traceID");
		const cJSON *procs = cJSON_GetObjectItemCaseSensitive(tr, "processes");
		char id[33];
		if (!cJSON_IsString(tid) || !norm_id(tid->valuestring, id))
			continue;
		const cJSON *sp;
		cJSON_ArrayForEach(sp, cJSON_GetObjectItemCaseSensitive(tr, "spans")) {
			const cJSON *pid = cJSON_GetObjectItemCaseSensitive(sp, "processID");
			const cJSON *op = cJSON_GetObjectItemCaseSensitive(sp, "operationName");
			const cJSON *proc = cJSON_IsString(pid) ? cJSON_GetObjectItemCaseSensitive(procs, pid->valuestring) : NULL;
			const cJSON *sn = cJSON_GetObjectItemCaseSensitive(proc, "serviceName");
			int64_t s = json_scaled(cJSON_GetObjectItemCaseSensitive(sp, "startTime"), 1000);
			int64_t d = json_scaled(cJSON_GetObjectItemCaseSensitive(sp, "duration"), 1000);
			int entry = cJSON_IsString(sn) && strcmp(sn->valuestring, p->o->service) == 0 &&
			            (p->o->operation == NULL ||
			             (cJSON_IsString(op) && strcmp(op->valuestring, p->o->operation) == 0));
			cands_add(c, id, s, entry ? d : 0);
		}
	}
}

/* s with '"' and '\' escaped, for a TraceQL string. */
static void traceql_str(Buf *b, const char *s)
{
	buf_addc(b, '"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			buf_addc(b, '\\');
		buf_addc(b, *s);
	}
	buf_addc(b, '"');
}

static void add_param(Buf *url, const char *name, const char *value)
{
	char *e = http_escape(value);
	buf_printf(url, "&%s=%s", name, e);
	free(e);
}

/* Lists the traces of [from, to) whose entry lasted at least min_ns, at
 * most limit of them (more may exist when limit come back). */
static int list(Puller *p, int64_t from, int64_t to, int64_t min_ns, int limit, Cands *c)
{
	Buf url;
	buf_init(&url);
	char a[48], b[48];
	HttpReply r;
	int rc = 0;
	c->n = 0;
	for (;;) {
		buf_reset(&url);
		if (p->api == API_JAEGER_V3) {
			rfc3339(from, a, sizeof a);
			rfc3339(to, b, sizeof b);
			buf_printf(&url, "%s/api/v3/%s?x=1", p->base,
			           p->summaries ? "trace-summaries" : "traces");
			add_param(&url, "query.service_name", p->o->service);
			if (p->o->operation)
				add_param(&url, "query.operation_name", p->o->operation);
			add_param(&url, "query.start_time_min", a);
			add_param(&url, "query.start_time_max", b);
			buf_printf(&url, "&query.num_traces=%d", limit);
			if (min_ns > 0)
				buf_printf(&url, "&query.duration_min=%lldns", (long long)min_ns);
		} else if (p->api == API_JAEGER_V1) {
			buf_printf(&url, "%s/api/traces?limit=%d&start=%lld&end=%lld", p->base, limit,
			           (long long)(from / 1000), (long long)((to + 999) / 1000));
			add_param(&url, "service", p->o->service);
			if (p->o->operation)
				add_param(&url, "operation", p->o->operation);
			if (min_ns > 0)
				buf_printf(&url, "&minDuration=%lldus", (long long)(min_ns / 1000));
		} else {
			Buf q;
			buf_init(&q);
			buf_adds(&q, "{resource.service.name=");
			traceql_str(&q, p->o->service);
			if (p->o->operation) {
				buf_adds(&q, " && name=");
				traceql_str(&q, p->o->operation);
			}
			if (min_ns > 0)
				buf_printf(&q, " && duration>=%lldns", (long long)min_ns);
			buf_addc(&q, '}');
			buf_printf(&url, "%s/api/search?limit=%d&spss=1&start=%lld&end=%lld", p->base, limit,
			           (long long)(from / 1000000000), (long long)((to + 999999999) / 1000000000));
			add_param(&url, "q", buf_str(&q));
			buf_fini(&q);
		}
		get(p, buf_str(&url), &r);
		if (p->api == API_JAEGER_V3 && p->summaries && r.status == 404 && !no_traces(&r)) {
			/* no trace-summaries route here: whole traces list them */
			p->summaries = 0;
			snprintf(p->res->api, sizeof p->res->api, "Jaeger API v3");
			http_reply_fini(&r);
			continue;
		}
		break;
	}
	cJSON *j = NULL;
	if (no_traces(&r))
		goto out;
	if (r.status != 200 || (j = json_object(&r)) == NULL) {
		rc = http_trouble(p, r.status == 200 ? "the search's answer is not JSON" : "search",
		                  buf_str(&url), &r);
		goto out;
	}
	if (p->api == API_JAEGER_V3 && p->summaries) {
		const cJSON *s;
		cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(j, "summaries")) {
			char id[33];
			const cJSON *tid = cJSON_GetObjectItemCaseSensitive(s, "traceId");
			if (!cJSON_IsString(tid) || !norm_id(tid->valuestring, id))
				continue;
			int64_t s0 = json_i64(cJSON_GetObjectItemCaseSensitive(s, "minStartTimeUnixNano"));
			int64_t s1 = json_i64(cJSON_GetObjectItemCaseSensitive(s, "maxEndTimeUnixNano"));
			cands_add(c, id, s0, span_len(s0, s1));
		}
	} else if (p->api == API_JAEGER_V3) {
		const cJSON *res = cJSON_GetObjectItemCaseSensitive(j, "result");
		cands_from_otlp(p, cJSON_GetObjectItemCaseSensitive(res, "resourceSpans"), c);
	} else if (p->api == API_JAEGER_V1) {
		cands_from_v1(p, cJSON_GetObjectItemCaseSensitive(j, "data"), c);
	} else {
		const cJSON *t;
		cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(j, "traces")) {
			char id[33];
			const cJSON *tid = cJSON_GetObjectItemCaseSensitive(t, "traceID");
			if (!cJSON_IsString(tid) || !norm_id(tid->valuestring, id))
				continue;
			int64_t s0 = json_i64(cJSON_GetObjectItemCaseSensitive(t, "startTimeUnixNano"));
			int64_t d = json_scaled(cJSON_GetObjectItemCaseSensitive(t, "durationMs"), 1e6);
			/* the matched span (the entry), when the answer has it */
			const cJSON *sets = cJSON_GetObjectItemCaseSensitive(t, "spanSets");
			const cJSON *set, *sp;
			int64_t best = -1, bstart = s0;
			cJSON_ArrayForEach(set, sets) {
				cJSON_ArrayForEach(sp, cJSON_GetObjectItemCaseSensitive(set, "spans")) {
					int64_t dn = json_i64(cJSON_GetObjectItemCaseSensitive(sp, "durationNanos"));
					if (dn > best) {
						best = dn;
						bstart = json_i64(cJSON_GetObjectItemCaseSensitive(sp, "startTimeUnixNano"));
					}
				}
			}
			cands_add(c, id, best >= 0 ? bstart : s0, best >= 0 ? best : d);
		}
	}
	/* Tempo and Jaeger v1 search in seconds and microseconds, and a trace
	 * is listed by any of its spans: keep the ones that start in range */
	cands_merge(c);
	size_t k = 0;
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].start_ns >= from && c->v[i].start_ns < to)
			c->v[k++] = c->v[i];
	c->n = k;
out:
	cJSON_Delete(j);
	http_reply_fini(&r);
	buf_fini(&url);
	return rc;
}

/* ---- choosing ------------------------------------------------------------- */

static int by_dur_desc(const void *a, const void *b)
{
	const Cand *x = a, *y = b;
	if (x->dur_ns != y->dur_ns)
		return x->dur_ns < y->dur_ns ? 1 : -1;
	return strcmp(x->id, y->id);
}

static int by_start(const void *a, const void *b)
{
	const Cand *x = a, *y = b;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return strcmp(x->id, y->id);
}

/* The N slowest traces of [from, to) into out. The threshold is the Nth
 * longest of what a search gave (never above the true Nth longest: what a
 * search gives is a part of what there is), raised until a search lists
 * everything above it; a window too busy for that (the threshold cannot
 * rise) is halved and each half's N slowest kept. */
static int slowest(Puller *p, int64_t from, int64_t to, int n, Cands *out, int depth)
{
	Cands c = {0};
	int64_t min = 0, lo = 0, hi = -1;  /* thresholds: lo lists >= n (or all), hi < n */
	int rc = 0, complete = 0;
	int64_t step = p->api == API_JAEGER_V1 ? 1000 : 1;
	for (int round = 0; round < 40 && !stopped(p); round++) {
		if ((rc = list(p, from, to, min, p->page, &c)))
			goto out;
		if ((int)c.n < p->page && ((int)c.n >= n || min == 0)) {
			complete = 1;
			break;
		}
		int64_t next;
		if ((int)c.n < p->page) {
			/* too few above it: a summary's extent overshot the entries'
			 * lengths; halve back towards the last threshold that listed
			 * enough */
			hi = min;
			next = lo + (hi - lo) / 2;
		} else {
			lo = min;
			qsort(c.v, c.n, sizeof *c.v, by_dur_desc);
			next = c.v[n - 1 < (int)c.n ? n - 1 : (int)c.n - 1].dur_ns;
			if (next <= min)
				next = min + step;  /* ties: step past them */
			if (hi >= 0 && next >= hi)
				next = lo + (hi - lo) / 2;
		}
		if (next <= lo && round > 0 && hi >= 0 && hi - lo <= step)
			break;  /* the window holds more ties than a search lists */
		min = next;
	}
	if (complete && p->summaries && (int)c.n > n && !stopped(p)) {
		/* A summary gives the trace's extent, not its entry's length, but
		 * the search filters on the entry: the largest threshold still
		 * listing N traces lists exactly the N slowest entries (ties
		 * aside). Found by halving, each listing complete. */
		int64_t blo = min, bhi = 0;
		for (size_t i = 0; i < c.n; i++)
			if (c.v[i].dur_ns + 1 > bhi)
				bhi = c.v[i].dur_ns + 1;
		Cands m = {0};
		while (bhi - blo > 1000 && (int)c.n > n && !stopped(p)) {
			int64_t mid = blo + (bhi - blo) / 2;
			if ((rc = list(p, from, to, mid, p->page, &m)))
				break;
			if ((int)m.n >= n) {
				blo = mid;
				Cands t = c;
				c = m;
				m = t;
			} else {
				bhi = mid;
			}
		}
		free(m.v);
		if (rc)
			goto out;
	}
	if (!complete && depth < 6 && to - from > 2000000000 && !stopped(p)) {
		int64_t mid = from + (to - from) / 2;
		free(c.v);
		c = (Cands){0};
		if ((rc = slowest(p, from, mid, n, &c, depth + 1)) ||
		    (rc = slowest(p, mid, to, n, &c, depth + 1)))
			goto out;
	}
	cands_merge(&c); /* the halves' lists: an id listed in both is one trace */
	if (c.n > 1) /* c.v is NULL when nothing was found */
		qsort(c.v, c.n, sizeof *c.v, by_dur_desc);
	for (size_t i = 0; i < c.n && (int)i < n; i++)
		cands_add(out, c.v[i].id, c.v[i].start_ns, c.v[i].dur_ns);
	if (depth == 0) {
		cands_merge(out);
		if (out->n > 1)
			qsort(out->v, out->n, sizeof *out->v, by_dur_desc);
		if ((int)out->n > n)
			out->n = (size_t)n;
	}
out:
	free(c.v);
	return rc;
}

/* A slice of a range and what its listing gave. */
typedef struct Slice {
	int64_t from, to;
	Cands c;
	int complete;
} Slice;

/* A uniform sample of n traces of [from, to) into out; *listed = how many
 * the range holds, -1 when a slice could not be listed whole. */
static int sample(Puller *p, int64_t from, int64_t to, int n, Cands *out, int64_t *listed)
{
	/* Tempo searches whole seconds: a slice is never shorter */
	int64_t min_len = p->api == API_TEMPO ? 2000000000 : 1000000;
	Slice *sl = NULL;
	size_t ns = 0, cap = 0;
	int64_t stack[64][3];  /* from, to, depth */
	int top = 0, rc = 0;
	stack[top][0] = from;
	stack[top][1] = to;
	stack[top++][2] = 0;
	while (top > 0 && !stopped(p)) {
		top--;
		int64_t a = stack[top][0], b = stack[top][1], d = stack[top][2];
		Cands c = {0};
		if ((rc = list(p, a, b, 0, p->page, &c))) {
			free(c.v);
			goto out;
		}
		int full = (int)c.n >= p->page;
		if (full && d < 10 && b - a >= 2 * min_len && top + 2 <= 64) {
			free(c.v);
			int64_t mid = a + (b - a) / 2;
			/* later half first on the stack: slices come out in time order */
			stack[top][0] = mid;
			stack[top][1] = b;
			stack[top++][2] = d + 1;
			stack[top][0] = a;
			stack[top][1] = mid;
			stack[top++][2] = d + 1;
			continue;
		}
		if (ns == cap) {
			cap = cap ? 2 * cap : 16;
			sl = xrealloc(sl, cap * sizeof *sl);
		}
		sl[ns++] = (Slice){a, b, c, !full};
	}
	int64_t total = 0;
	int all = 1;
	for (size_t i = 0; i < ns; i++) {
		total += (int64_t)sl[i].c.n;
		all &= sl[i].complete;
	}
	*listed = all ? total : -1;
	if (total == 0)
		goto out;
	/* quotas in proportion (largest remainders), then evenly spaced picks
	 * in each slice's time order */
	int want = (int64_t)n < total ? n : (int)total;
	int *q = xcalloc(ns ? ns : 1, sizeof *q);
	double *rem = xcalloc(ns ? ns : 1, sizeof *rem);
	int given = 0;
	for (size_t i = 0; i < ns; i++) {
		double exact = (double)want * (double)sl[i].c.n / (double)total;
		q[i] = (int)exact;
		rem[i] = exact - q[i];
		given += q[i];
	}
	while (given < want) {
		size_t best = 0;
		for (size_t i = 1; i < ns; i++)
			if (rem[i] > rem[best])
				best = i;
		q[best]++;
		rem[best] = -1;
		given++;
	}
	for (size_t i = 0; i < ns; i++) {
		Cands *c = &sl[i].c;
		if (c->n > 1)
			qsort(c->v, c->n, sizeof *c->v, by_start);
		for (int k = 0; k < q[i] && (size_t)k < c->n; k++) {
			size_t at = (size_t)(((double)k + 0.5) * (double)c->n / (double)q[i]);
			if (at >= c->n)
				at = c->n - 1;
			cands_add(out, c->v[at].id, c->v[at].start_ns, c->v[at].dur_ns);
		}
	}
	cands_merge(out);
	free(q);
	free(rem);
out:
	for (size_t i = 0; i < ns; i++)
		free(sl[i].c.v);
	free(sl);
	return rc;
}

/* ---- recording the sets and fetching ---------------------------------------- */

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The slot of id in p->want_at: its index + 1, or the free slot (0) it
 * would take. */
static size_t *want_slot(size_t *at, size_t cap, const Want *want, const char *id)
{
	size_t x = (size_t)hash_fnv1a_str(HASH_FNV1A_BASIS, id) & (cap - 1);
	while (at[x] && strcmp(want[at[x] - 1].id, id) != 0)
		x = (x + 1) & (cap - 1);
	return &at[x];
}

/* The chosen trace of that id, added when new. */
static Want *want_get(Puller *p, const char *id)
{
	if ((p->n_want + 1) * 2 > p->cap_at) {
		size_t cap = p->cap_at ? 2 * p->cap_at : 256;
		size_t *at = xcalloc(cap, sizeof *at);
		for (size_t i = 0; i < p->n_want; i++)
			*want_slot(at, cap, p->want, p->want[i].id) = i + 1;
		free(p->want_at);
		p->want_at = at;
		p->cap_at = cap;
	}
	size_t *slot = want_slot(p->want_at, p->cap_at, p->want, id);
	if (*slot)
		return &p->want[*slot - 1];
	if (p->n_want == p->cap_want) {
		p->cap_want = p->cap_want ? 2 * p->cap_want : 64;
		p->want = xrealloc(p->want, p->cap_want * sizeof *p->want);
	}
	Want *w = &p->want[p->n_want];
	memset(w, 0, sizeof *w);
	snprintf(w->id, sizeof w->id, "%s", id);
	*slot = ++p->n_want;
	return w;
}

static int record_set(Puller *p, const char *kind, const char *role, TimeRange r, int requested,
                      int64_t listed, const Cands *c)
{
	StoreTraceSet s = {
		.kind = kind, .role = role, .from_ns = r.from, .to_ns = r.to, .requested = requested,
		.population = listed, .source = p->base, .service = p->o->service,
		.operation = p->o->operation ? p->o->operation : "", .created_ms = now_ms(),
	};
	int64_t id;
	if (store_trace_set_intern(p->st, &s, &id, p->err))
		return TT_ESTORE;
	for (size_t i = 0; i < c->n; i++) {
		Want *w = want_get(p, c->v[i].id);
		if (w->n_sets < 4)
			w->sets[w->n_sets++] = id;
	}
	return 0;
}

/* Marks w's sets; the trace is stored. *moved (may be NULL) is 1 when
 * that took the trace into or out of the population. */
static int members(Puller *p, Want *w, int *moved, Err *err)
{
	if (moved)
		*moved = 0;
	for (int i = 0; i < w->n_sets; i++) {
		int mv = 0;
		if (store_trace_set_add_ex(p->st, w->sets[i], w->id, NULL, &mv, err))
			return TT_ESTORE;
		if (moved && mv)
			*moved = 1;
	}
	w->done = 1;
	return 0;
}

/* A trace stored before this pull that its sets take into or out of the
 * population: the aggregates built when it was stored counted it as it
 * was, so they are built again by the next writer (readers use the spans
 * until then: store.h, store_agg_covered). */
static int members_known(Puller *p, Want *w)
{
	int moved = 0;
	if (members(p, w, &moved, p->err))
		return TT_ESTORE;
	return moved ? store_agg_set_covered(p->st, 0, p->err) : 0;
}

static void fail_trace(Puller *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail_trace(Puller *p, const char *fmt, ...)
{
	if (p->res->failed++ == 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(p->res->first_failure, sizeof p->res->first_failure, fmt, ap);
		va_end(ap);
	}
	p->pg.failed = p->res->failed;
}

typedef struct Fetch {
	Puller *p;
	Want *w;
	HttpFetch *hf;
} Fetch;

static void trace_url(const Puller *p, const char *id, int tempo_v1, Buf *url)
{
	buf_reset(url);
	switch (p->api) {
	case API_JAEGER_V3: buf_printf(url, "%s/api/v3/traces/%s", p->base, id); break;
	case API_JAEGER_V1: buf_printf(url, "%s/api/traces/%s", p->base, id); break;
	default: buf_printf(url, "%s/api/%s/%s", p->base, tempo_v1 ? "traces" : "v2/traces", id); break;
	}
}

static void on_trace(void *ud, const char *url, HttpReply *r);

/* Sets out to the first trace id of an answer that is not want, "" when
 * every one is want (ids the importers would refuse are theirs to refuse).
 * v1: Jaeger v1's {"data": [trace]}; else OTLP {"resourceSpans": ...}. A
 * broken back end's other trace must not be stored as the one chosen: in
 * no set, it would count in the population. */
static void other_trace(const cJSON *j, int v1, const char *want, char out[33])
{
	out[0] = '\0';
	const cJSON *a, *b, *sp;
	char id[33];
	if (v1) {
		cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(j, "data")) {
			const cJSON *t = cJSON_GetObjectItemCaseSensitive(a, "traceID");
			if (cJSON_IsString(t) && norm_id(t->valuestring, id) && strcmp(id, want) != 0)
				goto other;
			cJSON_ArrayForEach(sp, cJSON_GetObjectItemCaseSensitive(a, "spans")) {
				t = cJSON_GetObjectItemCaseSensitive(sp, "traceID");
				if (cJSON_IsString(t) && norm_id(t->valuestring, id) && strcmp(id, want) != 0)
					goto other;
			}
		}
		return;
	}
	static const char *const scopes[] = {"scopeSpans", "instrumentationLibrarySpans"};
	cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(j, "resourceSpans")) {
		for (int k = 0; k < 2; k++)
			cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(a, scopes[k])) {
				cJSON_ArrayForEach(sp, cJSON_GetObjectItemCaseSensitive(b, "spans")) {
					const cJSON *t = cJSON_GetObjectItemCaseSensitive(sp, "traceId");
					if (cJSON_IsString(t) && norm_id(t->valuestring, id) &&
					    strcmp(id, want) != 0)
						goto other;
				}
			}
	}
	return;
other:
	memcpy(out, id, 33);
}

static void queue_trace(Fetch *f)
{
	Buf url;
	buf_init(&url);
	trace_url(f->p, f->w->id, f->p->tempo_v1, &url);
	http_fetch_add(f->hf, buf_str(&url), on_trace, f);
	buf_fini(&url);
}

/* Inside the import's transaction: the trace's sets, so that it is never
 * stored without them (the aggregates, built as it commits, leave a
 * slowest trace of no sample out of the population). */
static int sets_in_import(void *ctx, Store *st, const StoreSourceCounts *c, Err *err)
{
	Fetch *f = ctx;
	(void)st;
	if (c->spans_added + c->spans_duplicate == 0)
		return 0; /* nothing of the trace: on_trace says so */
	return members(f->p, f->w, NULL, err);
}

/* Stores one fetched trace: the OTLP/JSON under "result" (Jaeger v3) or
 * "trace" (Tempo), Tempo v1's "batches" as resourceSpans, Jaeger v1's
 * answer as it is. */
static void on_trace(void *ud, const char *url, HttpReply *r)
{
	Fetch *f = ud;
	Puller *p = f->p;
	if (p->api == API_TEMPO && r->status == 404 && strstr(url, "/api/v2/traces/") &&
	    strstr(buf_str(&r->body), "page not found") != NULL) {
		/* an older Tempo: no /api/v2/traces (the fetches in flight learn
		 * it one by one) */
		p->tempo_v1 = 1;
		queue_trace(f);
		return;
	}
	if (r->status != 200) {
		char ex[200];
		excerpt(ex, sizeof ex, &r->body);
		if (r->status == 0)
			fail_trace(p, "%s: %s (after %d attempts)", url, r->error, r->attempts);
		else
			fail_trace(p, "%s: HTTP %ld%s%s", url, r->status, ex[0] ? ": " : "", ex);
		progress(p, "fetching");
		return;
	}
	const char *format = "otlp-json";
	char *text = NULL;
	cJSON *j = NULL;
	char other[33];
	if (p->api == API_JAEGER_V1) {
		format = "jaeger-json";
		j = json_object(r);
		other_trace(j, 1, f->w->id, other);
	} else {
		j = json_object(r);
		cJSON *inner = NULL;
		if (j && p->api == API_JAEGER_V3)
			inner = cJSON_GetObjectItemCaseSensitive(j, "result");
		else if (j && !p->tempo_v1)
			inner = cJSON_GetObjectItemCaseSensitive(j, "trace");
		else if (j) {
			cJSON *b = cJSON_DetachItemFromObjectCaseSensitive(j, "batches");
			if (b) {
				inner = cJSON_CreateObject();
				cJSON_AddItemToObject(inner, "resourceSpans", b);
				cJSON_AddItemToObject(j, "converted", inner);
			}
		}
		if (!cJSON_IsObject(inner)) {
			char ex[200];
			excerpt(ex, sizeof ex, &r->body);
			fail_trace(p, "%s: the answer holds no trace (%s)", url, ex);
			cJSON_Delete(j);
			progress(p, "fetching");
			return;
		}
		other_trace(inner, 0, f->w->id, other);
		text = cJSON_PrintUnformatted(inner);
	}
	if (other[0]) {
		fail_trace(p, "%s: the answer holds trace %s, not the one asked for: nothing stored",
		           url, other);
		free(text);
		cJSON_Delete(j);
		progress(p, "fetching");
		return;
	}
	ImportOptions io = {.format = format, .class_key = p->o->class_key,
	                    .signals = IMPORT_SIGNAL_TRACES, .before_commit = sets_in_import,
	                    .before_commit_ctx = f};
	ImportResult ir;
	Err e = {0};
	const char *data = text ? text : buf_str(&r->body);
	size_t len = text ? strlen(text) : r->body.len;
	if (import_memory(p->st, url, data, len, &io, &ir, &e)) {
		fail_trace(p, "%s", e.msg);
	} else if (ir.counts.spans_added + ir.counts.spans_duplicate == 0) {
		fail_trace(p, "%s: the answer holds no span of the trace", url);
	} else {
		p->res->fetched++;
		p->res->spans_added += ir.counts.spans_added;
		p->res->spans_duplicate += ir.counts.spans_duplicate;
		p->res->skips.log_records += ir.skips.log_records;
		p->res->skips.unfinished += ir.skips.unfinished;
		p->res->skips.untimed += ir.skips.untimed;
		p->pg.fetched = p->res->fetched;
		p->pg.spans_added = p->res->spans_added;
	}
	free(text);
	cJSON_Delete(j);
	progress(p, "fetching");
}

/* "no trace of S in A..B; services seen: ..." */
static int nothing_found(Puller *p)
{
	char a[48], b[48];
	rfc3339(p->o->window.from, a, sizeof a);
	rfc3339(p->o->window.to, b, sizeof b);
	Buf seen;
	buf_init(&seen);
	services_seen(p, &seen);
	err_set(p->err, TT_EIO, "%s: no trace of %s%s%s in %s..%s%s; services seen: %s",
	        trace_pull_backend_name(p->o->backend), p->o->service,
	        p->o->operation ? " " : "", p->o->operation ? p->o->operation : "", a, b,
	        p->o->has_baseline ? " (nor in the baseline)" : "",
	        seen.len ? buf_str(&seen) : "(none listed)");
	buf_fini(&seen);
	return TT_EIO;
}

int trace_pull(Store *st, const TracePullOptions *o, TracePullResult *res, Err *err)
{
	memset(res, 0, sizeof *res);
	res->listed_window = res->listed_baseline = -1;
	Puller p = {.st = st, .o = o, .res = res, .err = err, .summaries = 1};
	p.page = o->page > 0 ? o->page : 500;
	snprintf(p.base, sizeof p.base, "%s", o->url);
	size_t bl = strlen(p.base);
	while (bl > 0 && p.base[bl - 1] == '/')
		p.base[--bl] = '\0';
	int rc = detect(&p);
	Cands slow = {0}, slowb = {0}, sw = {0}, sb = {0};
	if (rc)
		goto out;
	if (o->slowest > 0 && (rc = slowest(&p, o->window.from, o->window.to, o->slowest, &slow, 0)))
		goto out;
	/* the baseline's slowest too: with the count of each range, the
	 * percentiles whose ranks fall inside both tops are exact on both sides
	 * (analysis/evidence_top.c) */
	if (o->slowest > 0 && o->has_baseline &&
	    (rc = slowest(&p, o->baseline.from, o->baseline.to, o->slowest, &slowb, 0)))
		goto out;
	if (o->sample > 0 &&
	    (rc = sample(&p, o->window.from, o->window.to, o->sample, &sw, &res->listed_window)))
		goto out;
	if (o->sample > 0 && o->has_baseline &&
	    (rc = sample(&p, o->baseline.from, o->baseline.to, o->sample, &sb, &res->listed_baseline)))
		goto out;
	if (stopped(&p)) {
		res->stopped = 1;
		goto out;
	}
	res->slowest = (int64_t)slow.n;
	res->slowest_baseline = (int64_t)slowb.n;
	res->sample_window = (int64_t)sw.n;
	res->sample_baseline = (int64_t)sb.n;
	if (slow.n + slowb.n + sw.n + sb.n == 0) {
		rc = nothing_found(&p);
		goto out;
	}
	if ((o->slowest > 0 && (rc = record_set(&p, "slowest", "window", o->window, o->slowest,
	                                        res->listed_window, &slow))) ||
	    (o->slowest > 0 && o->has_baseline &&
	     (rc = record_set(&p, "slowest", "baseline", o->baseline, o->slowest,
	                      res->listed_baseline, &slowb))) ||
	    (o->sample > 0 && (rc = record_set(&p, "sample", "window", o->window, o->sample,
	                                       res->listed_window, &sw))) ||
	    (o->sample > 0 && o->has_baseline &&
	     (rc = record_set(&p, "sample", "baseline", o->baseline, o->sample,
	                      res->listed_baseline, &sb))))
		goto out;
	p.pg.chosen = (int64_t)p.n_want;

	/* what is stored already is not fetched again */
	HttpFetch *hf = http_fetch_new(&o->http);
	Fetch *fs = xcalloc(p.n_want ? p.n_want : 1, sizeof *fs);
	for (size_t i = 0; i < p.n_want; i++) {
		int known = 0;
		if ((rc = store_trace_known(st, p.want[i].id, &known, err)))
			break;
		if (known) {
			res->already++;
			if ((rc = members_known(&p, &p.want[i])))
				break;
			continue;
		}
		fs[i] = (Fetch){&p, &p.want[i], hf};
		p.pg.to_fetch++;
		queue_trace(&fs[i]);
	}
	if (rc == 0) {
		progress(&p, "fetching");
		if (http_fetch_run(hf, o->stop))
			res->stopped = 1;
		int64_t done, retried;
		http_fetch_counts(hf, &done, &retried);
		p.pg.retries += retried;
		progress(&p, "fetching");
	}
	http_fetch_free(hf);
	free(fs);
	if (rc == 0 && res->failed > 0)
		rc = err_set(err, TT_EIO, "%s: %lld of %lld traces could not be stored (the first: %s)",
		             trace_pull_backend_name(o->backend), (long long)res->failed,
		             (long long)(res->failed + res->fetched), res->first_failure);
out:
	free(slow.v);
	free(slowb.v);
	free(sw.v);
	free(sb.v);
	free(p.want);
	free(p.want_at);
	return rc;
}
