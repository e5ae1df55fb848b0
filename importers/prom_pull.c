/*
 * prom_pull.c - Prometheus HTTP API instant queries (libcurl + cJSON).
 *
 * For each query: GET {url}/api/v1/query?query=...&time=... ; the JSON
 * answer is checked whole before anything is written (status, resultType,
 * every value parses), then stored in one transaction: a source row
 * (format "promql", digest of the response), the points, and the query
 * record (store_promql_add). Anything wrong -> nothing of that query is
 * stored. The response is capped (MAX_RESPONSE) and the request has a
 * total timeout, so a misbehaving server costs bounded memory and time.
 *
 * The cJSON tree never leaves this file.
 */
#include "prom_pull.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <curl/curl.h>
#include <math.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"

#define MAX_RESPONSE ((size_t)64 << 20)

/* ---- query sets ----------------------------------------------------------- */

void prom_queries_init(PromQuerySet *s)
{
	memset(s, 0, sizeof *s);
}

void prom_queries_fini(PromQuerySet *s)
{
	for (int i = 0; i < s->n; i++) {
		free(s->q[i].name);
		free(s->q[i].promql);
		free(s->q[i].family);
		free(s->q[i].label_from);
		free(s->q[i].label_to);
	}
	free(s->q);
	memset(s, 0, sizeof *s);
}

static PromQuery *push(PromQuerySet *s, const char *name, char *promql)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 16;
		s->q = xrealloc(s->q, (size_t)s->cap * sizeof *s->q);
	}
	PromQuery *q = &s->q[s->n++];
	memset(q, 0, sizeof *q);
	q->name = xstrdup(name);
	q->promql = promql;
	return q;
}

char *prom_name(const char *model_name)
{
	size_t n = strlen(model_name);
	char *out = xmalloc(n + 2);
	size_t j = 0;
	if (isdigit((unsigned char)model_name[0]))
		out[j++] = '_';
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)model_name[i];
		out[j++] = (isalnum(c) && c < 0x80) || c == '_' || c == ':' ? (char)c : '_';
	}
	out[j] = '\0';
	return out;
}

/* Appends v as a PromQL double-quoted string. */
static void add_promql_str(Buf *b, const char *v)
{
	buf_addc(b, '"');
	for (; *v; v++) {
		if (*v == '"' || *v == '\\')
			buf_addc(b, '\\');
		if (*v == '\n')
			buf_adds(b, "\\n");
		else
			buf_addc(b, *v);
	}
	buf_addc(b, '"');
}

/* "{key="value"}" selecting a pool, or "" when the pool has no label. */
static void pool_selector(Buf *b, const ModelPool *p)
{
	if (p->label_key && p->label_value) {
		char *k = prom_name(p->label_key);
		buf_printf(b, "{%s=", k);
		add_promql_str(b, p->label_value);
		buf_addc(b, '}');
		free(k);
	}
}

/* A raw selector query for one pool metric, stored under the model's
 * metric name with the model's label key. */
static void add_pool_gauge(PromQuerySet *s, const ModelPool *p, const char *what,
                           const char *metric)
{
	if (metric == NULL)
		return;
	Buf b, name;
	buf_init(&b);
	buf_init(&name);
	char *pn = prom_name(metric);
	buf_adds(&b, pn);
	free(pn);
	pool_selector(&b, p);
	buf_printf(&name, "pool.%s.%s", p->name ? p->name : "?", what);
	PromQuery *q = push(s, buf_str(&name), xstrdup(buf_str(&b)));
	q->family = xstrdup(metric);
	if (p->label_key) {
		q->label_from = prom_name(p->label_key);
		q->label_to = xstrdup(p->label_key);
	}
	buf_fini(&b);
	buf_fini(&name);
}

static void add_quantile(PromQuerySet *s, const char *name, const char *metric, const Buf *sel,
                         const char *range)
{
	Buf b;
	buf_init(&b);
	char *pn = prom_name(metric);
	buf_printf(&b, "histogram_quantile(0.99, sum by (le) (rate(%s_bucket%s[%s])))", pn,
	           buf_str(sel), range);
	free(pn);
	push(s, name, xstrdup(buf_str(&b)));
	buf_fini(&b);
}

void prom_queries_from_model(PromQuerySet *s, const Model *m, const char *range)
{
	int have_executor_wait = 0;
	for (int i = 0; m && i < m->n_pools; i++) {
		const ModelPool *p = &m->pools[i];
		add_pool_gauge(s, p, "used", p->used_metric);
		add_pool_gauge(s, p, "max", p->max_metric);
		add_pool_gauge(s, p, "pending", p->pending_metric);
		if (p->wait_metric) {
			/* The wait metric may be a gauge (a queue age) or a
			 * histogram: ask for both; only one of them has data. */
			add_pool_gauge(s, p, "wait", p->wait_metric);
			Buf sel, name;
			buf_init(&sel);
			buf_init(&name);
			pool_selector(&sel, p);
			buf_printf(&name, "pool.%s.wait.p99", p->name ? p->name : "?");
			add_quantile(s, buf_str(&name), p->wait_metric, &sel, range);
			buf_fini(&sel);
			buf_fini(&name);
			if (p->kind && strcmp(p->kind, "executor") == 0)
				have_executor_wait = 1;
		}
	}
	Buf b;
	buf_init(&b);
	if (!have_executor_wait) {
		Buf none;
		buf_init(&none);
		add_quantile(s, "executor.queue_age.p99", "executor.queue_age", &none, range);
		buf_fini(&none);
	}
	buf_printf(&b, "sum by (job, instance) (rate(process_cpu_seconds_total[%s]))", range);
	push(s, "cpu.process_cores", xstrdup(buf_str(&b)));
	buf_reset(&b);
	buf_printf(&b, "1 - avg by (instance) (rate(node_cpu_seconds_total{mode=\"idle\"}[%s]))",
	           range);
	push(s, "cpu.host_utilization", xstrdup(buf_str(&b)));
	buf_reset(&b);
	buf_printf(&b, "sum by (job) (rate(http_server_request_duration_seconds_count[%s]))", range);
	push(s, "request.rate", xstrdup(buf_str(&b)));
	buf_reset(&b);
	char *ck = prom_name(m && m->class_key ? m->class_key : "workload.class");
	buf_printf(&b,
	           "sum by (%s) (rate(http_server_request_duration_seconds_count[%s]))"
	           " / scalar(sum(rate(http_server_request_duration_seconds_count[%s])))",
	           ck, range, range);
	free(ck);
	push(s, "class.mix", xstrdup(buf_str(&b)));
	buf_fini(&b);
}

int prom_queries_add(PromQuerySet *s, const char *spec, Err *err)
{
	/* NAME=PROMQL when spec starts with a name followed by one '=' (PromQL
	 * itself never starts that way: "a=b" is not an expression). */
	const char *p = spec;
	if (isalpha((unsigned char)*p) || *p == '_') {
		while (isalnum((unsigned char)*p) || *p == '_' || *p == '.' || *p == ':' || *p == '-')
			p++;
	}
	const char *promql = spec;
	char *name = NULL;
	if (p != spec && p[0] == '=' && p[1] != '=' && p[1] != '~') {
		name = xstrndup(spec, (size_t)(p - spec));
		promql = p + 1;
	}
	while (isspace((unsigned char)*promql))
		promql++;
	if (*promql == '\0') {
		free(name);
		return err_set(err, TT_EINVAL, "--query '%s': empty PromQL", spec);
	}
	push(s, name ? name : promql, xstrdup(promql));
	free(name);
	return 0;
}

/* ---- HTTP ---------------------------------------------------------------- */

typedef struct Body {
	Buf b;
	int overflow;
} Body;

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *ud)
{
	Body *body = ud;
	size_t n = size * nmemb;
	if (body->b.len + n > MAX_RESPONSE) {
		body->overflow = 1;
		return 0;  /* makes curl stop with CURLE_WRITE_ERROR */
	}
	buf_add(&body->b, ptr, n);
	return n;
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init_once(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* Clean one-line excerpt of a body for messages. */
static void excerpt(char *out, size_t n, const char *s, size_t len)
{
	size_t j = 0;
	for (size_t i = 0; i < len && j + 1 < n; i++) {
		unsigned char c = (unsigned char)s[i];
		out[j++] = c >= 0x20 && c < 0x7f ? (char)c : ' ';
	}
	out[j] = '\0';
}

/* GETs the query. Returns 0 with *status and body, or TT_EIO with err. */
static int http_get(const PromPullOptions *opt, const char *promql, int64_t eval_ms,
                    long *status, Body *body, Err *err)
{
	pthread_once(&curl_once, curl_init_once);
	CURL *c = curl_easy_init();
	if (c == NULL)
		return err_set(err, TT_EIO, "cannot start libcurl");
	char *q = curl_easy_escape(c, promql, 0);
	size_t ul = strlen(opt->url);
	while (ul > 0 && opt->url[ul - 1] == '/')
		ul--;
	Buf url;
	buf_init(&url);
	buf_add(&url, opt->url, ul);
	buf_printf(&url, "/api/v1/query?query=%s&time=%lld.%03lld", q ? q : "",
	           (long long)(eval_ms / 1000), (long long)(eval_ms % 1000));
	curl_free(q);
	char errbuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *hdrs = curl_slist_append(NULL, "Accept: application/json");
	Buf auth;
	buf_init(&auth);
	if (opt->bearer_token && *opt->bearer_token) {
		buf_printf(&auth, "Authorization: Bearer %s", opt->bearer_token);
		hdrs = curl_slist_append(hdrs, buf_str(&auth));
	}
	for (const char *const *h = opt->headers; h && *h; h++)
		hdrs = curl_slist_append(hdrs, *h);
	curl_easy_setopt(c, CURLOPT_URL, buf_str(&url));
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, body);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, opt->timeout_ms > 0 ? opt->timeout_ms : 10000L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, opt->timeout_ms > 0 ? opt->timeout_ms : 10000L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "tailtriage-pull/0.1");
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#endif
	CURLcode rc = curl_easy_perform(c);
	int ret = 0;
	if (rc != CURLE_OK) {
		if (body->overflow)
			ret = err_set(err, TT_EIO, "%s: response larger than %zu MiB", opt->url,
			              MAX_RESPONSE >> 20);
		else if (rc == CURLE_OPERATION_TIMEDOUT)
			ret = err_set(err, TT_EIO, "%s: no answer within %ld ms", opt->url,
			              opt->timeout_ms > 0 ? opt->timeout_ms : 10000L);
		else
			ret = err_set(err, TT_EIO, "%s: %s", opt->url,
			              errbuf[0] ? errbuf : curl_easy_strerror(rc));
	} else {
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	}
	curl_slist_free_all(hdrs);
	buf_fini(&auth);
	buf_fini(&url);
	curl_easy_cleanup(c);
	return ret;
}

/* ---- parsing -------------------------------------------------------------- */

/* One value of the result, checked. labels point into the cJSON tree. */
typedef struct Sample {
	const cJSON *metric;      /* object or NULL (scalar) */
	int64_t ts_ns;
	double value;
} Sample;

typedef struct Parsed {
	char type[16];
	Sample *s;
	int n, cap;
	char warnings[256];
} Parsed;

static int bad(Err *err, const char *url, const char *name, const char *what)
{
	return err_set(err, TT_EPARSE, "%s: query %s: unexpected response: %s", url, name, what);
}

/* [ <unix seconds as number>, "<value as string>" ] */
static int parse_pair(const cJSON *pair, int64_t *ts_ns, double *v)
{
	if (!cJSON_IsArray(pair) || cJSON_GetArraySize(pair) != 2)
		return -1;
	const cJSON *t = cJSON_GetArrayItem(pair, 0), *x = cJSON_GetArrayItem(pair, 1);
	if (!cJSON_IsNumber(t) || !cJSON_IsString(x) || !isfinite(t->valuedouble))
		return -1;
	double secs = t->valuedouble;
	if (secs < 0 || secs > 9.2e9)
		return -1;
	*ts_ns = (int64_t)llround(secs * 1e3) * 1000000;
	const char *s = x->valuestring;
	char *end;
	*v = strtod(s, &end);
	if (end == s || *end != '\0')
		return -1;
	return 0;
}

static void add_sample(Parsed *p, const cJSON *metric, int64_t ts, double v)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 64;
		p->s = xrealloc(p->s, (size_t)p->cap * sizeof *p->s);
	}
	p->s[p->n++] = (Sample){.metric = metric, .ts_ns = ts, .value = v};
}

static int check_metric(const cJSON *m)
{
	if (!cJSON_IsObject(m))
		return -1;
	for (const cJSON *l = m->child; l; l = l->next)
		if (!cJSON_IsString(l) || l->string == NULL)
			return -1;
	return 0;
}

/* Parses and checks the whole response; 0 or an error. */
static int parse_response(const char *url, const PromQuery *q, long status, const Body *body,
                          cJSON **tree, Parsed *p, Err *err)
{
	char ex[160];
	cJSON *root = cJSON_ParseWithLength(buf_str(&body->b), body->b.len);
	*tree = root;
	const cJSON *st = root ? cJSON_GetObjectItemCaseSensitive(root, "status") : NULL;
	if (root == NULL || !cJSON_IsObject(root) || !cJSON_IsString(st)) {
		excerpt(ex, sizeof ex, buf_str(&body->b), body->b.len);
		if (status != 200)
			return err_set(err, TT_EIO, "%s: query %s: HTTP %ld: %s", url, q->name, status,
			               ex[0] ? ex : "(empty body)");
		return err_set(err, TT_EPARSE,
		               "%s: query %s: the answer is not Prometheus API JSON: %s", url,
		               q->name, ex[0] ? ex : "(empty body)");
	}
	if (strcmp(st->valuestring, "success") != 0) {
		const cJSON *et = cJSON_GetObjectItemCaseSensitive(root, "errorType");
		const cJSON *em = cJSON_GetObjectItemCaseSensitive(root, "error");
		excerpt(ex, sizeof ex, cJSON_IsString(em) ? em->valuestring : "no message",
		        cJSON_IsString(em) ? strlen(em->valuestring) : 10);
		return err_set(err, TT_EPARSE, "%s: query %s failed (HTTP %ld, %s): %s", url, q->name,
		               status, cJSON_IsString(et) ? et->valuestring : "error", ex);
	}
	if (status != 200)
		return err_set(err, TT_EIO, "%s: query %s: HTTP %ld", url, q->name, status);
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(root, "warnings");
	if (cJSON_IsArray(w)) {
		Buf wb;
		buf_init(&wb);
		const cJSON *x;
		cJSON_ArrayForEach(x, w) {
			if (cJSON_IsString(x)) {
				if (wb.len)
					buf_adds(&wb, "; ");
				buf_adds(&wb, x->valuestring);
			}
		}
		excerpt(p->warnings, sizeof p->warnings, buf_str(&wb), wb.len);
		buf_fini(&wb);
	}
	const cJSON *data = cJSON_GetObjectItemCaseSensitive(root, "data");
	const cJSON *rt = data ? cJSON_GetObjectItemCaseSensitive(data, "resultType") : NULL;
	const cJSON *res = data ? cJSON_GetObjectItemCaseSensitive(data, "result") : NULL;
	if (!cJSON_IsObject(data) || !cJSON_IsString(rt) || res == NULL)
		return bad(err, url, q->name, "no data.resultType/data.result");
	snprintf(p->type, sizeof p->type, "%s", rt->valuestring);
	int64_t ts;
	double v;
	if (strcmp(rt->valuestring, "scalar") == 0) {
		if (parse_pair(res, &ts, &v))
			return bad(err, url, q->name, "scalar result is not [time, \"value\"]");
		add_sample(p, NULL, ts, v);
	} else if (strcmp(rt->valuestring, "vector") == 0) {
		if (!cJSON_IsArray(res))
			return bad(err, url, q->name, "vector result is not an array");
		const cJSON *e;
		cJSON_ArrayForEach(e, res) {
			const cJSON *m = cJSON_GetObjectItemCaseSensitive(e, "metric");
			if (check_metric(m) || parse_pair(cJSON_GetObjectItemCaseSensitive(e, "value"), &ts, &v))
				return bad(err, url, q->name,
				           "vector element without a metric object of strings or a "
				           "[time, \"value\"] value");
			add_sample(p, m, ts, v);
		}
	} else if (strcmp(rt->valuestring, "matrix") == 0) {
		if (!cJSON_IsArray(res))
			return bad(err, url, q->name, "matrix result is not an array");
		const cJSON *e;
		cJSON_ArrayForEach(e, res) {
			const cJSON *m = cJSON_GetObjectItemCaseSensitive(e, "metric");
			const cJSON *vals = cJSON_GetObjectItemCaseSensitive(e, "values");
			if (check_metric(m) || !cJSON_IsArray(vals))
				return bad(err, url, q->name, "matrix element without metric and values");
			const cJSON *pair;
			cJSON_ArrayForEach(pair, vals) {
				if (parse_pair(pair, &ts, &v))
					return bad(err, url, q->name, "matrix value is not [time, \"value\"]");
				add_sample(p, m, ts, v);
			}
			/* Native histograms ("histograms") are not stored. */
		}
	} else if (strcmp(rt->valuestring, "string") == 0) {
		return err_set(err, TT_EPARSE, "%s: query %s: a string result is not a metric value",
		               url, q->name);
	} else {
		return bad(err, url, q->name, "unknown resultType");
	}
	return 0;
}

/* ---- storing -------------------------------------------------------------- */

static void sha256_hex(const char *data, size_t len, char out[65])
{
	unsigned char dig[32];
	unsigned int dl = 0;
	EVP_Digest(data, len, dig, &dl, EVP_sha256(), NULL);
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", dig[i]);
}

static int store_sample(Store *st, int64_t source_id, const PromQuery *q, const Sample *s,
                        PromQueryOutcome *o, Err *err)
{
	const char *name = NULL;
	StoreLabel lab[64];
	StoreLabel *labels = lab;
	size_t nl = 0, cap = sizeof lab / sizeof lab[0];
	for (const cJSON *l = s->metric ? s->metric->child : NULL; l; l = l->next) {
		if (strcmp(l->string, "__name__") == 0) {
			name = l->valuestring;
			continue;
		}
		if (nl == cap) {
			cap *= 2;
			StoreLabel *bigger = xmalloc(cap * sizeof *bigger);
			memcpy(bigger, labels, nl * sizeof *labels);
			if (labels != lab)
				free(labels);
			labels = bigger;
		}
		const char *key = l->string;
		if (q->label_from && strcmp(key, q->label_from) == 0)
			key = q->label_to;
		labels[nl++] = (StoreLabel){key, strlen(key), l->valuestring, strlen(l->valuestring)};
	}
	char *lj = store_labels_json(labels, nl);
	if (labels != lab)
		free(labels);
	if (lj == NULL)
		return err_set(err, TT_EPARSE, "query %s: a result repeats a label", q->name);
	StoreMetricFamily fam = {
		.name = q->family ? q->family : name ? name : q->name,
		.type = q->family == NULL && name ? "unknown" : "gauge",
	};
	int64_t fid, sid;
	int added = 0;
	int rc = store_metric_family_intern(st, &fam, &fid, err);
	if (rc == 0)
		rc = store_metric_series_intern(st, fid, lj, 0, &sid, err);
	free(lj);
	if (rc)
		return rc;
	StoreMetricPoint pt = {
		.series_id = sid,
		.ts_explicit = 1,
		.ts_ns = s->ts_ns,
		.has_value = 1,
		.value = s->value,
	};
	if ((rc = store_metric_point_add(st, source_id, &pt, &added, err)) != 0)
		return rc;
	if (added)
		o->added++;
	else
		o->duplicate++;
	return 0;
}

static int store_result(Store *st, const PromPullOptions *opt, const PromQuery *q,
                        int64_t eval_ms, const Body *body, const Parsed *p,
                        PromQueryOutcome *o, Err *err)
{
	char digest[65];
	sha256_hex(buf_str(&body->b), body->b.len, digest);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	int64_t now_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
	if (store_begin(st, err))
		return TT_ESTORE;
	int64_t source_id;
	int rc = store_source_add(st, opt->url, digest, "promql", now_ms, &source_id, err);
	for (int i = 0; rc == 0 && i < p->n; i++)
		rc = store_sample(st, source_id, q, &p->s[i], o, err);
	if (rc == 0) {
		StorePromQuery rec = {
			.url = opt->url,
			.name = q->name,
			.query = q->promql,
			.eval_ns = eval_ms * 1000000,
			.result_type = p->type,
			.samples = p->n,
		};
		rc = store_promql_add(st, source_id, &rec, err);
	}
	if (rc == 0) {
		StoreSourceCounts c = {.metrics_added = o->added, .metrics_duplicate = o->duplicate};
		rc = store_source_finish(st, source_id, &c,
		                         o->added == 0 && o->duplicate > 0 ? "duplicate" : "imported",
		                         err);
	}
	if (rc == 0)
		rc = store_commit(st, err);
	if (rc) {
		store_rollback(st);
		o->added = o->duplicate = 0;
		return rc;
	}
	return 0;
}

int prom_pull_round(Store *st, const PromQuerySet *s, const PromPullOptions *opt,
                    PromOutcomeFn fn, void *ctx, PromRoundResult *res, Err *err)
{
	memset(res, 0, sizeof *res);
	int64_t eval_ms = opt->eval_ms;
	if (eval_ms <= 0) {
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		eval_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
	}
	res->eval_ms = eval_ms;
	int first_rc = 0;
	for (int i = 0; i < s->n; i++) {
		const PromQuery *q = &s->q[i];
		PromQueryOutcome o;
		memset(&o, 0, sizeof o);
		o.query = q;
		Body body = {0};
		buf_init(&body.b);
		long status = 0;
		cJSON *tree = NULL;
		Parsed p;
		memset(&p, 0, sizeof p);
		int rc = http_get(opt, q->promql, eval_ms, &status, &body, &o.err);
		if (rc == 0)
			rc = parse_response(opt->url, q, status, &body, &tree, &p, &o.err);
		if (rc == 0) {
			snprintf(o.result_type, sizeof o.result_type, "%s", p.type);
			snprintf(o.warnings, sizeof o.warnings, "%s", p.warnings);
			o.samples = p.n;
			rc = store_result(st, opt, q, eval_ms, &body, &p, &o, &o.err);
		}
		o.ok = rc == 0;
		res->queries++;
		if (rc == 0) {
			res->ok++;
			res->added += o.added;
			res->duplicate += o.duplicate;
		} else {
			res->failed++;
			if (first_rc == 0) {
				first_rc = rc;
				err_set(err, rc, "%s", o.err.msg);
			}
		}
		if (fn)
			fn(ctx, &o);
		cJSON_Delete(tree);
		free(p.s);
		buf_fini(&body.b);
	}
	return first_rc;
}
