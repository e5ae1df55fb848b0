/*
 * otlp_metrics.c - OTLP/JSON metrics: ExportMetricsServiceRequest as one
 * document or as JSON Lines (one request per line).
 *
 * Metrics batches are small next to traces, so each document (the whole
 * file, or one line of a JSON Lines file) is read into a position-keeping
 * tree (jpos.h) and walked; memory is bounded by the largest document. The
 * mode is decided by the first non-blank line: if it is a complete JSON
 * value the file is JSON Lines, otherwise the file is one document.
 *
 * Encoding (OTLP specification, "JSON Protobuf Encoding"): lowerCamelCase
 * keys, unknown keys ignored, 64-bit integers as decimal strings or numbers,
 * enums as integers, traceId/spanId as hex, doubles as numbers or "NaN",
 * "Infinity", "-Infinity".
 *
 * Mapping to the store:
 *  - gauge -> "gauge"; sum -> "counter" when isMonotonic, else
 *    "updowncounter", with its temporality ("delta", "cumulative" or "" when
 *    unspecified); histogram -> "histogram" (bucketCounts become cumulative
 *    le buckets over explicitBounds, then +Inf); exponentialHistogram ->
 *    "exphistogram" (scale, zero count and threshold kept; buckets also
 *    stored as cumulative le buckets: a positive bucket i has
 *    le = base^(i+1), a negative one le = -base^i, the zero bucket
 *    le = zeroThreshold, with base = 2^(2^-scale)); summary -> "summary";
 *  - data point attributes are the series labels, values rendered as text
 *    (ints in decimal, doubles in the shortest form that reads back exactly,
 *    arrays and maps as JSON); the resource is interned (service.name,
 *    host.name or k8s.pod.name) and is part of the series identity;
 *  - exemplars keep filteredAttributes plus trace_id/span_id as labels, and
 *    the bucket their value falls in;
 *  - a point is (series, timeUnixNano); importing it again adds nothing.
 */
#include "formats.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "jpos.h"
#include "store.h"

#define OTLPM_MAX_LINE ((size_t)64 << 20)
#define OTLPM_MAX_DOC ((size_t)256 << 20)
#define OTLPM_MAX_BUCKETS 100000

enum { K_GAUGE, K_SUM, K_HIST, K_EXP, K_SUMMARY };

typedef struct M {
	ImportCtx *ctx;
	int64_t resource_id;
	Buf vals;            /* rendered attribute values */
	Buf tmp;
	StoreMetricBucket *b;
	size_t nb, cb;
	StoreMetricQuantile *q;
	size_t nq, cq;
} M;

static int jerr(M *m, const JpVal *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int jerr(M *m, const JpVal *at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = import_err_vat(m->ctx, TT_EPARSE, at->line, at->col, fmt, ap);
	va_end(ap);
	return rc;
}

static int want_type(M *m, const JpVal *v, JpType t, const char *what)
{
	if (v->type == t)
		return 0;
	return jerr(m, v, "%s must be %s, not %s", what, jp_type_name(t), jp_type_name(v->type));
}

/* ---- scalar fields ------------------------------------------------------ */

static int parse_i64(const char *s, size_t n, int64_t *out)
{
	size_t i = 0;
	int neg = n > 0 && s[0] == '-';
	i = (size_t)neg;
	if (i == n)
		return -1;
	uint64_t v = 0;
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		unsigned d = (unsigned)(s[i] - '0');
		if (v > (UINT64_C(9223372036854775808) - d) / 10)
			return -2;
		v = v * 10 + d;
	}
	if (!neg && v > (uint64_t)INT64_MAX)
		return -2;
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

/* A 64-bit integer field: a JSON integer or a decimal string. */
static int get_i64(M *m, const JpVal *v, const char *what, int nonneg, int64_t *out)
{
	int rc;
	if (v->type == JP_NUM)
		rc = strpbrk(v->s, ".eE") ? -1 : parse_i64(v->s, v->n, out);
	else if (v->type == JP_STR)
		rc = parse_i64(v->s, v->n, out);
	else
		return jerr(m, v, "%s must be an integer (a number or a decimal string)", what);
	if (rc == -2)
		return jerr(m, v, "%s is out of the 64-bit range", what);
	if (rc)
		return jerr(m, v, "%s must be an integer, not \"%.40s\"", what, v->s);
	if (nonneg && *out < 0)
		return jerr(m, v, "%s must not be negative", what);
	return 0;
}

/* A double field: a JSON number, "NaN", "Infinity", "-Infinity" or a
 * number in a string. */
static int get_f64(M *m, const JpVal *v, const char *what, double *out)
{
	if (v->type == JP_NUM) {
		if (jp_num(v, out))
			return jerr(m, v, "%s is out of range", what);
		return 0;
	}
	if (v->type == JP_STR) {
		if (strcmp(v->s, "NaN") == 0) {
			*out = NAN;
			return 0;
		}
		if (strcmp(v->s, "Infinity") == 0) {
			*out = INFINITY;
			return 0;
		}
		if (strcmp(v->s, "-Infinity") == 0) {
			*out = -INFINITY;
			return 0;
		}
		/* a number in a string: same syntax as a JSON number */
		JpDoc *d = NULL;
		JpVal *r = NULL;
		int ok = v->n > 0 && jp_parse(v->s, v->n, "", 1, &d, &r, NULL) == 0 && r->type == JP_NUM &&
		         jp_num(r, out) == 0;
		jp_free(d);
		if (ok)
			return 0;
	}
	return jerr(m, v, "%s must be a number (or \"NaN\", \"Infinity\", \"-Infinity\")", what);
}

static int get_int(M *m, const JpVal *v, const char *what, int64_t lo, int64_t hi, int64_t *out)
{
	if (v->type != JP_NUM)
		return jerr(m, v, "%s must be an integer", what);
	if (get_i64(m, v, what, 0, out))
		return TT_EPARSE;
	if (*out < lo || *out > hi)
		return jerr(m, v, "%s must be between %lld and %lld", what, (long long)lo, (long long)hi);
	return 0;
}

/* Shortest decimal text that reads back as v. */
static void fmt_double(Buf *b, double v)
{
	if (isnan(v)) {
		buf_adds(b, "NaN");
		return;
	}
	if (isinf(v)) {
		buf_adds(b, v > 0 ? "Infinity" : "-Infinity");
		return;
	}
	char s[40];
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(s, sizeof s, "%.*g", prec, v);
		if (jp_strtod(s) == v)
			break;
	}
	buf_adds(b, s);
}

/* ---- attributes ---------------------------------------------------------- */

/* Appends the AnyValue av as typed JSON. */
static int any_json(M *m, const JpVal *av, Buf *out);

static int kvlist_json(M *m, const JpVal *list, Buf *out)
{
	if (want_type(m, list, JP_ARR, "a key-value list"))
		return TT_EPARSE;
	buf_addc(out, '{');
	for (size_t i = 0; i < list->len; i++) {
		const JpVal *kv = list->items[i];
		if (want_type(m, kv, JP_OBJ, "an attribute"))
			return TT_EPARSE;
		const JpVal *k = jp_get_nn(kv, "key");
		if (k == NULL || k->type != JP_STR)
			return jerr(m, kv, "an attribute needs a string \"key\"");
		if (i)
			buf_addc(out, ',');
		buf_add_json_str(out, k->s, k->n);
		buf_addc(out, ':');
		const JpVal *v = jp_get_nn(kv, "value");
		if (v == NULL)
			buf_adds(out, "null");
		else if (any_json(m, v, out))
			return TT_EPARSE;
	}
	buf_addc(out, '}');
	return 0;
}

static int any_json(M *m, const JpVal *av, Buf *out)
{
	if (want_type(m, av, JP_OBJ, "an attribute value (AnyValue)"))
		return TT_EPARSE;
	const JpVal *v;
	if ((v = jp_get_nn(av, "stringValue")) != NULL) {
		if (want_type(m, v, JP_STR, "stringValue"))
			return TT_EPARSE;
		buf_add_json_str(out, v->s, v->n);
	} else if ((v = jp_get_nn(av, "boolValue")) != NULL) {
		if (want_type(m, v, JP_BOOL, "boolValue"))
			return TT_EPARSE;
		buf_adds(out, v->b ? "true" : "false");
	} else if ((v = jp_get_nn(av, "intValue")) != NULL) {
		int64_t i;
		if (get_i64(m, v, "intValue", 0, &i))
			return TT_EPARSE;
		buf_printf(out, "%lld", (long long)i);
	} else if ((v = jp_get_nn(av, "doubleValue")) != NULL) {
		double d;
		if (get_f64(m, v, "doubleValue", &d))
			return TT_EPARSE;
		if (isfinite(d)) {
			fmt_double(out, d);
		} else {
			buf_addc(out, '"');
			fmt_double(out, d);
			buf_addc(out, '"');
		}
	} else if ((v = jp_get_nn(av, "bytesValue")) != NULL) {
		if (want_type(m, v, JP_STR, "bytesValue"))
			return TT_EPARSE;
		buf_add_json_str(out, v->s, v->n);
	} else if ((v = jp_get_nn(av, "arrayValue")) != NULL) {
		if (want_type(m, v, JP_OBJ, "arrayValue"))
			return TT_EPARSE;
		const JpVal *vals = jp_get_nn(v, "values");
		buf_addc(out, '[');
		if (vals) {
			if (want_type(m, vals, JP_ARR, "arrayValue.values"))
				return TT_EPARSE;
			for (size_t i = 0; i < vals->len; i++) {
				if (i)
					buf_addc(out, ',');
				if (any_json(m, vals->items[i], out))
					return TT_EPARSE;
			}
		}
		buf_addc(out, ']');
	} else if ((v = jp_get_nn(av, "kvlistValue")) != NULL) {
		if (want_type(m, v, JP_OBJ, "kvlistValue"))
			return TT_EPARSE;
		const JpVal *vals = jp_get_nn(v, "values");
		if (vals == NULL)
			buf_adds(out, "{}");
		else if (kvlist_json(m, vals, out))
			return TT_EPARSE;
	} else {
		buf_adds(out, "null");
	}
	return 0;
}

/* Appends the AnyValue as label text: strings as they are, everything else
 * as its JSON text. */
static int any_label(M *m, const JpVal *av, Buf *out)
{
	const JpVal *s = jp_get_nn(av, "stringValue");
	if (av->type == JP_OBJ && s && s->type == JP_STR) {
		buf_add(out, s->s, s->n);
		return 0;
	}
	s = jp_get_nn(av, "bytesValue");
	if (av->type == JP_OBJ && s && s->type == JP_STR) {
		buf_add(out, s->s, s->n);
		return 0;
	}
	size_t at = out->len;
	if (any_json(m, av, out))
		return TT_EPARSE;
	if (out->len - at == 4 && memcmp(out->p + at, "null", 4) == 0)
		out->len = at, out->p[at] = '\0'; /* an empty AnyValue: "" */
	return 0;
}

typedef struct Attr {
	const char *key;
	size_t key_len;
	size_t off, len;  /* the value text in M.vals */
	const JpVal *at;
} Attr;

/* Reads a KeyValue list (NULL: none) into attrs (malloc'd, *n items). */
static int read_attrs(M *m, const JpVal *list, int typed, Attr **attrs, size_t *n)
{
	*attrs = NULL;
	*n = 0;
	if (list == NULL)
		return 0;
	if (want_type(m, list, JP_ARR, "attributes"))
		return TT_EPARSE;
	Attr *a = xmalloc((list->len ? list->len : 1) * sizeof *a);
	for (size_t i = 0; i < list->len; i++) {
		const JpVal *kv = list->items[i];
		if (kv->type != JP_OBJ) {
			free(a);
			return jerr(m, kv, "an attribute must be an object {\"key\":..,\"value\":..}");
		}
		const JpVal *k = jp_get_nn(kv, "key");
		if (k == NULL || k->type != JP_STR) {
			free(a);
			return jerr(m, kv, "an attribute needs a string \"key\"");
		}
		for (size_t j = 0; j < *n; j++)
			if (a[j].key_len == k->n && memcmp(a[j].key, k->s, k->n) == 0) {
				free(a);
				return jerr(m, k, "duplicate attribute key \"%.60s\"", k->s);
			}
		const JpVal *v = jp_get_nn(kv, "value");
		size_t off = m->vals.len;
		int rc = 0;
		if (v == NULL)
			buf_adds(&m->vals, typed ? "null" : "");
		else
			rc = typed ? any_json(m, v, &m->vals) : any_label(m, v, &m->vals);
		if (rc) {
			free(a);
			return rc;
		}
		a[(*n)++] = (Attr){k->s, k->n, off, m->vals.len - off, kv};
	}
	*attrs = a;
	return 0;
}

/* Canonical labels JSON (string values) of a KeyValue list, plus extra
 * labels (not overriding an attribute of the same key). */
static int labels_of(M *m, const JpVal *list, const StoreLabel *extra, size_t nextra,
                     char **out)
{
	buf_reset(&m->vals);
	Attr *a;
	size_t n;
	if (read_attrs(m, list, 0, &a, &n))
		return TT_EPARSE;
	StoreLabel *sl = xmalloc((n + nextra + 1) * sizeof *sl);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		sl[k++] = (StoreLabel){a[i].key, a[i].key_len, m->vals.p + a[i].off, a[i].len};
	for (size_t i = 0; i < nextra; i++) {
		int dup = 0;
		for (size_t j = 0; j < n; j++)
			if (a[j].key_len == extra[i].key_len && memcmp(a[j].key, extra[i].key, a[j].key_len) == 0)
				dup = 1;
		if (!dup)
			sl[k++] = extra[i];
	}
	*out = store_labels_json(sl, k);
	free(sl);
	free(a);
	return 0;
}

static int attr_cmp(const void *x, const void *y)
{
	const Attr *a = x, *b = y;
	size_t n = a->key_len < b->key_len ? a->key_len : b->key_len;
	int c = memcmp(a->key, b->key, n);
	return c ? c : (a->key_len > b->key_len) - (a->key_len < b->key_len);
}

/* Interns the resource of a ResourceMetrics (0 when it has no attributes). */
static int resource(M *m, const JpVal *res)
{
	m->resource_id = 0;
	if (res == NULL)
		return 0;
	if (want_type(m, res, JP_OBJ, "resource"))
		return TT_EPARSE;
	buf_reset(&m->vals);
	Attr *a;
	size_t n;
	if (read_attrs(m, jp_get_nn(res, "attributes"), 1, &a, &n))
		return TT_EPARSE;
	if (n == 0) {
		free(a);
		return 0;
	}
	if (n > 1)
		qsort(a, n, sizeof *a, attr_cmp);
	Buf obj;
	buf_init(&obj);
	buf_addc(&obj, '{');
	char *service = NULL, *host = NULL, *pod = NULL;
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf_addc(&obj, ',');
		buf_add_json_str(&obj, a[i].key, a[i].key_len);
		buf_addc(&obj, ':');
		const char *val = m->vals.p + a[i].off;
		buf_add(&obj, val, a[i].len);
		/* string attributes rendered as JSON strings: take the text back */
		const JpVal *kv = a[i].at, *v = jp_get_nn(kv, "value");
		const JpVal *sv = v ? jp_get_nn(v, "stringValue") : NULL;
		if (sv && sv->type == JP_STR && !memchr(sv->s, '\0', sv->n)) {
			if (strcmp(a[i].key, "service.name") == 0)
				service = xstrdup(sv->s);
			else if (strcmp(a[i].key, "host.name") == 0)
				host = xstrdup(sv->s);
			else if (strcmp(a[i].key, "k8s.pod.name") == 0)
				pod = xstrdup(sv->s);
		}
	}
	buf_addc(&obj, '}');
	int rc = store_resource_intern(m->ctx->st, service, host ? host : pod, obj.p, &m->resource_id,
	                               m->ctx->err);
	buf_fini(&obj);
	free(service);
	free(host);
	free(pod);
	free(a);
	return rc;
}

/* ---- data points ---------------------------------------------------------- */

static void add_bucket(M *m, double le, double count)
{
	if (m->nb > 0 && le <= m->b[m->nb - 1].le) { /* merge into the previous */
		m->b[m->nb - 1].count = count;
		return;
	}
	if (m->nb == m->cb) {
		m->cb = m->cb ? m->cb * 2 : 32;
		m->b = xrealloc(m->b, m->cb * sizeof *m->b);
	}
	m->b[m->nb++] = (StoreMetricBucket){le, count};
}

/* Reads a list of non-negative 64-bit counts; returns their sum in *sum. */
static int counts(M *m, const JpVal *arr, const char *what, int64_t **out, double *sum)
{
	*out = NULL;
	*sum = 0;
	if (arr == NULL)
		return 0;
	if (want_type(m, arr, JP_ARR, what))
		return TT_EPARSE;
	if (arr->len > OTLPM_MAX_BUCKETS)
		return jerr(m, arr, "%s has more than %d buckets", what, OTLPM_MAX_BUCKETS);
	int64_t *c = xmalloc((arr->len ? arr->len : 1) * sizeof *c);
	for (size_t i = 0; i < arr->len; i++) {
		if (get_i64(m, arr->items[i], what, 1, &c[i])) {
			free(c);
			return TT_EPARSE;
		}
		*sum += (double)c[i];
	}
	*out = c;
	return 0;
}

static double exp_bound(int scale, int64_t index)
{
	/* base^index = 2^(index * 2^-scale) */
	return exp2(ldexp((double)index, -scale));
}

/* Explicit histogram buckets into m->b (cumulative). */
static int hist_buckets(M *m, const JpVal *dp, double count, const JpVal *count_at)
{
	m->nb = 0;
	const JpVal *bc = jp_get_nn(dp, "bucketCounts"), *eb = jp_get_nn(dp, "explicitBounds");
	int64_t *c = NULL;
	double total = 0;
	if (counts(m, bc, "bucketCounts", &c, &total))
		return TT_EPARSE;
	size_t nbc = bc ? bc->len : 0, neb = 0;
	if (eb) {
		if (want_type(m, eb, JP_ARR, "explicitBounds")) {
			free(c);
			return TT_EPARSE;
		}
		neb = eb->len;
	}
	int rc = 0;
	if (nbc == 0 && neb > 0)
		rc = jerr(m, eb, "explicitBounds without bucketCounts");
	else if (nbc > 0 && nbc != neb + 1)
		rc = jerr(m, bc, "bucketCounts has %zu entries; with %zu explicitBounds it needs %zu", nbc,
		          neb, neb + 1);
	else if (nbc > 0 && total != count)
		rc = jerr(m, count_at ? count_at : dp,
		          "count is %.17g but the bucketCounts add up to %.17g", count, total);
	double cum = 0, prev = -INFINITY;
	for (size_t i = 0; rc == 0 && i < nbc; i++) {
		double le = INFINITY;
		if (i < neb) {
			if (get_f64(m, eb->items[i], "an explicit bound", &le)) {
				rc = TT_EPARSE;
				break;
			}
			if (!isfinite(le)) {
				rc = jerr(m, eb->items[i], "explicit bounds must be finite numbers");
				break;
			}
			if (le <= prev) {
				rc = jerr(m, eb->items[i], "explicitBounds must increase strictly");
				break;
			}
			prev = le;
		}
		cum += (double)c[i];
		add_bucket(m, le, cum);
	}
	free(c);
	return rc;
}

/* Exponential histogram buckets into m->b (cumulative). */
static int exp_buckets(M *m, const JpVal *dp, double count, const JpVal *count_at, int *scale_out,
                       double *zero_count, double *zero_threshold)
{
	m->nb = 0;
	int64_t scale = 0, zc = 0;
	double zt = 0;
	const JpVal *v;
	if ((v = jp_get_nn(dp, "scale")) && get_int(m, v, "scale", -10, 20, &scale))
		return TT_EPARSE;
	if ((v = jp_get_nn(dp, "zeroCount")) && get_i64(m, v, "zeroCount", 1, &zc))
		return TT_EPARSE;
	if ((v = jp_get_nn(dp, "zeroThreshold"))) {
		if (get_f64(m, v, "zeroThreshold", &zt))
			return TT_EPARSE;
		if (!isfinite(zt) || zt < 0)
			return jerr(m, v, "zeroThreshold must be a finite number >= 0");
	}
	int64_t off[2] = {0, 0};
	int64_t *c[2] = {NULL, NULL};
	size_t n[2] = {0, 0};
	double sum[2] = {0, 0};
	static const char *const side[2] = {"negative", "positive"};
	int rc = 0;
	for (int s = 0; rc == 0 && s < 2; s++) {
		const JpVal *b = jp_get_nn(dp, side[s]);
		if (b == NULL)
			continue;
		if (want_type(m, b, JP_OBJ, side[s])) {
			rc = TT_EPARSE;
			break;
		}
		if ((v = jp_get_nn(b, "offset")) &&
		    get_int(m, v, "offset", -(INT64_C(1) << 40), INT64_C(1) << 40, &off[s])) {
			rc = TT_EPARSE;
			break;
		}
		const JpVal *bc = jp_get_nn(b, "bucketCounts");
		if (counts(m, bc, "bucketCounts", &c[s], &sum[s])) {
			rc = TT_EPARSE;
			break;
		}
		n[s] = bc ? bc->len : 0;
	}
	double total = (double)zc + sum[0] + sum[1];
	if (rc == 0 && total != count)
		rc = jerr(m, count_at ? count_at : dp,
		          "count is %.17g but zeroCount and the buckets add up to %.17g", count, total);
	if (rc == 0) {
		double cum = 0;
		/* negative buckets, most negative first: index i holds [-base^(i+1), -base^i) */
		for (size_t k = n[0]; k-- > 0;) {
			cum += (double)c[0][k];
			double le = -exp_bound((int)scale, off[0] + (int64_t)k);
			if (isinf(le))
				le = -DBL_MAX; /* beyond double range: the lowest finite bound */
			add_bucket(m, le, cum);
		}
		cum += (double)zc;
		add_bucket(m, zt, cum);
		/* positive buckets: index i holds (base^i, base^(i+1)] */
		for (size_t k = 0; k < n[1]; k++) {
			cum += (double)c[1][k];
			double le = exp_bound((int)scale, off[1] + (int64_t)k + 1);
			if (isinf(le))
				break; /* the rest goes into +Inf */
			add_bucket(m, le, cum);
		}
		add_bucket(m, INFINITY, total);
	}
	free(c[0]);
	free(c[1]);
	*scale_out = (int)scale;
	*zero_count = (double)zc;
	*zero_threshold = zt;
	return rc;
}

static int summary_quantiles(M *m, const JpVal *dp)
{
	m->nq = 0;
	const JpVal *qv = jp_get_nn(dp, "quantileValues");
	if (qv == NULL)
		return 0;
	if (want_type(m, qv, JP_ARR, "quantileValues"))
		return TT_EPARSE;
	for (size_t i = 0; i < qv->len; i++) {
		const JpVal *o = qv->items[i], *v;
		if (want_type(m, o, JP_OBJ, "a quantile value"))
			return TT_EPARSE;
		double q = 0, val = 0;
		if ((v = jp_get_nn(o, "quantile")) && get_f64(m, v, "quantile", &q))
			return TT_EPARSE;
		if (!(q >= 0 && q <= 1))
			return jerr(m, v ? v : o, "quantile must be between 0 and 1");
		if ((v = jp_get_nn(o, "value")) && get_f64(m, v, "value", &val))
			return TT_EPARSE;
		if (val < 0)
			return jerr(m, v, "quantile values must not be negative");
		for (size_t k = 0; k < m->nq; k++)
			if (m->q[k].q == q)
				return jerr(m, o, "duplicate quantile %.17g", q);
		if (m->nq == m->cq) {
			m->cq = m->cq ? m->cq * 2 : 8;
			m->q = xrealloc(m->q, m->cq * sizeof *m->q);
		}
		m->q[m->nq++] = (StoreMetricQuantile){q, val};
	}
	return 0;
}

/* Reads a hex id field ("" or absent: none). */
static int hex_id(M *m, const JpVal *v, size_t want, const char *what, char *out)
{
	out[0] = '\0';
	if (v == NULL)
		return 0;
	if (want_type(m, v, JP_STR, what))
		return TT_EPARSE;
	if (v->n == 0)
		return 0;
	if (v->n != want)
		return jerr(m, v, "%s must be %zu hex digits (got %zu characters)", what, want, v->n);
	int nonzero = 0;
	for (size_t i = 0; i < want; i++) {
		char c = v->s[i];
		if (c >= 'A' && c <= 'F')
			c = (char)(c + 32);
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return jerr(m, v, "%s must be hex digits", what);
		nonzero |= c != '0';
		out[i] = c;
	}
	out[want] = '\0';
	if (!nonzero)
		return jerr(m, v, "%s must not be all zeros", what);
	return 0;
}

typedef struct ExBuf {
	StoreMetricExemplar *e;
	char (*trace)[33];
	char (*span)[17];
	char **labels;
	size_t n;
} ExBuf;

static void exbuf_free(ExBuf *x)
{
	for (size_t i = 0; i < x->n; i++)
		free(x->labels[i]);
	free(x->e);
	free(x->trace);
	free(x->span);
	free(x->labels);
	memset(x, 0, sizeof *x);
}

static int exemplars(M *m, const JpVal *dp, int bucketed, ExBuf *x)
{
	memset(x, 0, sizeof *x);
	const JpVal *arr = jp_get_nn(dp, "exemplars");
	if (arr == NULL)
		return 0;
	if (want_type(m, arr, JP_ARR, "exemplars"))
		return TT_EPARSE;
	size_t n = arr->len ? arr->len : 1;
	x->e = xcalloc(n, sizeof *x->e);
	x->trace = xcalloc(n, sizeof *x->trace);
	x->span = xcalloc(n, sizeof *x->span);
	x->labels = xcalloc(n, sizeof *x->labels);
	for (size_t i = 0; i < arr->len; i++) {
		const JpVal *o = arr->items[i], *v;
		if (want_type(m, o, JP_OBJ, "an exemplar"))
			return TT_EPARSE;
		StoreMetricExemplar *e = &x->e[i];
		const JpVal *ad = jp_get_nn(o, "asDouble"), *ai = jp_get_nn(o, "asInt");
		if (ad && ai)
			return jerr(m, ai, "an exemplar has both asDouble and asInt");
		if (ad && get_f64(m, ad, "asDouble", &e->value))
			return TT_EPARSE;
		if (ai) {
			int64_t iv;
			if (get_i64(m, ai, "asInt", 0, &iv))
				return TT_EPARSE;
			e->value = (double)iv;
		}
		if (!ad && !ai)
			return jerr(m, o, "an exemplar needs asDouble or asInt");
		if ((v = jp_get_nn(o, "timeUnixNano"))) {
			if (get_i64(m, v, "timeUnixNano", 1, &e->ts_ns))
				return TT_EPARSE;
			e->has_ts = e->ts_ns != 0;
		}
		if (hex_id(m, jp_get_nn(o, "traceId"), 32, "traceId", x->trace[i]) ||
		    hex_id(m, jp_get_nn(o, "spanId"), 16, "spanId", x->span[i]))
			return TT_EPARSE;
		StoreLabel extra[2];
		size_t ne = 0;
		if (x->trace[i][0])
			extra[ne++] = (StoreLabel){"trace_id", 8, x->trace[i], 32};
		if (x->span[i][0])
			extra[ne++] = (StoreLabel){"span_id", 7, x->span[i], 16};
		if (labels_of(m, jp_get_nn(o, "filteredAttributes"), extra, ne, &x->labels[i]))
			return TT_EPARSE;
		x->n = i + 1;
		e->trace_id = x->trace[i];
		e->span_id = x->span[i];
		e->labels_json = x->labels[i];
		if (bucketed && !isnan(e->value)) {
			for (size_t k = 0; k < m->nb; k++)
				if (e->value <= m->b[k].le) {
					e->has_le = 1;
					e->le = m->b[k].le;
					break;
				}
		}
	}
	return 0;
}

static int data_point(M *m, int kind, int64_t fid, const char *mname, const JpVal *dp)
{
	ImportCtx *ctx = m->ctx;
	if (want_type(m, dp, JP_OBJ, "a data point"))
		return TT_EPARSE;
	StoreMetricPoint p;
	memset(&p, 0, sizeof p);
	p.ts_explicit = 1;
	const JpVal *v = jp_get_nn(dp, "timeUnixNano");
	if (v == NULL)
		return jerr(m, dp, "data point of '%.80s' has no timeUnixNano", mname);
	if (get_i64(m, v, "timeUnixNano", 1, &p.ts_ns))
		return TT_EPARSE;
	if (p.ts_ns == 0)
		return jerr(m, v, "timeUnixNano must not be 0");
	if ((v = jp_get_nn(dp, "startTimeUnixNano"))) {
		if (get_i64(m, v, "startTimeUnixNano", 1, &p.start_ns))
			return TT_EPARSE;
		p.has_start = p.start_ns != 0;
	}
	int64_t flags = 0;
	if ((v = jp_get_nn(dp, "flags")) && get_int(m, v, "flags", 0, UINT32_MAX, &flags))
		return TT_EPARSE;
	int novalue = (flags & 1) != 0;
	p.flags = novalue ? STORE_POINT_NO_VALUE : 0;

	const JpVal *count_at = NULL;
	if (kind == K_GAUGE || kind == K_SUM) {
		const JpVal *ad = jp_get_nn(dp, "asDouble"), *ai = jp_get_nn(dp, "asInt");
		if (ad && ai)
			return jerr(m, ai, "a data point has both asDouble and asInt");
		if (ad) {
			if (get_f64(m, ad, "asDouble", &p.value))
				return TT_EPARSE;
			p.has_value = 1;
		} else if (ai) {
			int64_t iv;
			if (get_i64(m, ai, "asInt", 0, &iv))
				return TT_EPARSE;
			p.value = (double)iv;
			p.has_value = 1;
		}
		/* Neither asDouble nor asInt: the value oneof is unset. The
		 * OpenTelemetry Collector keeps such a point (value type Empty) and
		 * opentelemetry-rust's exporter writes them; it is stored without
		 * a value, which every reader already skips. */
	} else {
		int64_t cnt = 0;
		if ((count_at = jp_get_nn(dp, "count")) && get_i64(m, count_at, "count", 1, &cnt))
			return TT_EPARSE;
		p.has_count = 1;
		p.count = (double)cnt;
		if ((v = jp_get_nn(dp, "sum"))) {
			if (get_f64(m, v, "sum", &p.sum))
				return TT_EPARSE;
			p.has_sum = 1;
		}
		if (kind != K_SUMMARY) {
			if ((v = jp_get_nn(dp, "min"))) {
				if (get_f64(m, v, "min", &p.min))
					return TT_EPARSE;
				p.has_min = 1;
			}
			if ((v = jp_get_nn(dp, "max"))) {
				if (get_f64(m, v, "max", &p.max))
					return TT_EPARSE;
				p.has_max = 1;
			}
		}
	}
	m->nb = 0;
	m->nq = 0;
	if (!novalue) {
		if (kind == K_HIST) {
			if (hist_buckets(m, dp, p.count, count_at))
				return TT_EPARSE;
			if (m->nb > 0)
				p.scheme = "explicit";
		} else if (kind == K_EXP) {
			if (exp_buckets(m, dp, p.count, count_at, &p.scale, &p.zero_count, &p.zero_threshold))
				return TT_EPARSE;
			p.scheme = "exponential";
		} else if (kind == K_SUMMARY) {
			if (summary_quantiles(m, dp))
				return TT_EPARSE;
		}
	}
	p.buckets = m->b;
	p.n_buckets = (int)m->nb;
	p.quantiles = m->q;
	p.n_quantiles = (int)m->nq;

	/* series labels last: they reuse m->vals */
	ExBuf x;
	if (exemplars(m, dp, kind == K_HIST || kind == K_EXP, &x)) {
		exbuf_free(&x);
		return TT_EPARSE;
	}
	p.exemplars = x.e;
	p.n_exemplars = (int)x.n;
	char *labels = NULL;
	int rc = labels_of(m, jp_get_nn(dp, "attributes"), NULL, 0, &labels);
	if (rc == 0)
		rc = store_metric_series_intern(ctx->st, fid, labels, m->resource_id, &p.series_id,
		                                ctx->err);
	int added = 0;
	if (rc == 0)
		rc = store_metric_point_add(ctx->st, ctx->source_id, &p, &added, ctx->err);
	if (rc == 0) {
		if (added)
			ctx->counts->metrics_added++;
		else
			ctx->counts->metrics_duplicate++;
	}
	free(labels);
	exbuf_free(&x);
	return rc;
}

static int metric(M *m, const JpVal *mt)
{
	if (want_type(m, mt, JP_OBJ, "a metric"))
		return TT_EPARSE;
	const JpVal *name = jp_get_nn(mt, "name");
	if (name == NULL || name->type != JP_STR || name->n == 0 || memchr(name->s, '\0', name->n))
		return jerr(m, name ? name : mt, "a metric needs a non-empty string \"name\"");
	static const char *const kinds[] = {"gauge", "sum", "histogram", "exponentialHistogram",
	                                    "summary"};
	const JpVal *data = NULL;
	int kind = -1;
	for (int k = 0; k < 5; k++) {
		const JpVal *d = jp_get_nn(mt, kinds[k]);
		if (d == NULL)
			continue;
		if (data)
			return jerr(m, d, "metric '%.80s' has both %s and %s", name->s, kinds[kind], kinds[k]);
		data = d;
		kind = k;
	}
	if (data == NULL)
		return 0; /* a metric without data carries nothing to store */
	if (want_type(m, data, JP_OBJ, kinds[kind]))
		return TT_EPARSE;
	const JpVal *desc = jp_get_nn(mt, "description"), *unit = jp_get_nn(mt, "unit");
	if (desc && want_type(m, desc, JP_STR, "description"))
		return TT_EPARSE;
	if (unit && want_type(m, unit, JP_STR, "unit"))
		return TT_EPARSE;
	StoreMetricFamily f = {
		.name = name->s,
		.help = desc ? desc->s : NULL,
		.unit = unit ? unit->s : NULL,
	};
	const JpVal *v;
	int64_t temporality = 0;
	if (kind == K_SUM || kind == K_HIST || kind == K_EXP) {
		if ((v = jp_get_nn(data, "aggregationTemporality")) &&
		    get_int(m, v, "aggregationTemporality", 0, 2, &temporality))
			return TT_EPARSE;
		f.temporality = temporality == 1 ? "delta" : temporality == 2 ? "cumulative" : "";
	}
	switch (kind) {
	case K_GAUGE: f.type = "gauge"; break;
	case K_SUM: {
		int mono = 0;
		if ((v = jp_get_nn(data, "isMonotonic"))) {
			if (want_type(m, v, JP_BOOL, "isMonotonic"))
				return TT_EPARSE;
			mono = v->b;
		}
		f.type = mono ? "counter" : "updowncounter";
		break;
	}
	case K_HIST: f.type = "histogram"; break;
	case K_EXP: f.type = "exphistogram"; break;
	default: f.type = "summary"; break;
	}
	const JpVal *dps = jp_get_nn(data, "dataPoints");
	if (dps == NULL)
		return 0;
	if (want_type(m, dps, JP_ARR, "dataPoints"))
		return TT_EPARSE;
	int64_t fid;
	if (store_metric_family_intern(m->ctx->st, &f, &fid, m->ctx->err))
		return TT_ESTORE;
	for (size_t i = 0; i < dps->len; i++)
		if (data_point(m, kind, fid, name->s, dps->items[i]))
			return TT_EPARSE;
	return 0;
}

static int request(M *m, const JpVal *root)
{
	if (want_type(m, root, JP_OBJ, "an ExportMetricsServiceRequest"))
		return TT_EPARSE;
	const JpVal *rms = jp_get_nn(root, "resourceMetrics");
	if (rms == NULL) {
		/* OTLP: an empty request is valid and unknown fields are ignored;
		 * a request with fields but none of ours (a traces body) is counted */
		if (root->len > 0 && jp_get(root, "resourceMetrics") == NULL)
			m->ctx->unrecognised++;
		return 0;
	}
	if (want_type(m, rms, JP_ARR, "resourceMetrics"))
		return TT_EPARSE;
	for (size_t i = 0; i < rms->len; i++) {
		const JpVal *rm = rms->items[i];
		if (want_type(m, rm, JP_OBJ, "a resourceMetrics entry"))
			return TT_EPARSE;
		if (resource(m, jp_get_nn(rm, "resource")))
			return TT_EPARSE;
		const JpVal *sms = jp_get_nn(rm, "scopeMetrics");
		if (sms == NULL)
			continue;
		if (want_type(m, sms, JP_ARR, "scopeMetrics"))
			return TT_EPARSE;
		for (size_t j = 0; j < sms->len; j++) {
			const JpVal *sm = sms->items[j];
			if (want_type(m, sm, JP_OBJ, "a scopeMetrics entry"))
				return TT_EPARSE;
			const JpVal *mts = jp_get_nn(sm, "metrics");
			if (mts == NULL)
				continue;
			if (want_type(m, mts, JP_ARR, "metrics"))
				return TT_EPARSE;
			for (size_t k = 0; k < mts->len; k++)
				if (metric(m, mts->items[k]))
					return TT_EPARSE;
		}
	}
	return 0;
}

static int document(M *m, const char *text, size_t len, long line0)
{
	JpDoc *doc = NULL;
	JpVal *root = NULL;
	if (jp_parse(text, len, m->ctx->name, line0, &doc, &root, m->ctx->err))
		return TT_EPARSE;
	int rc = request(m, root);
	jp_free(doc);
	return rc;
}

/* ---- input ----------------------------------------------------------------- */

typedef struct Lines {
	FILE *f;
	char chunk[1 << 16];
	size_t pos, len;
	int eof;
	uint64_t done;
} Lines;

/* Appends the next line (without '\n') to out. 1: a line, 0: end. */
static int next_line(M *m, Lines *r, Buf *out, long lineno)
{
	int any = 0;
	size_t start = out->len;
	for (;;) {
		if (r->pos == r->len) {
			if (r->eof)
				break;
			r->len = fread(r->chunk, 1, sizeof r->chunk, r->f);
			r->pos = 0;
			if (r->len == 0) {
				if (ferror(r->f))
					return err_at(m->ctx->err, TT_EIO, m->ctx->name, lineno, 1, "read error: %s",
					              strerror(errno));
				r->eof = 1;
				break;
			}
			import_progress(m->ctx, r->done + r->len);
		}
		any = 1;
		char *s = r->chunk + r->pos;
		size_t n = r->len - r->pos;
		char *e = memchr(s, '\n', n);
		size_t take = e ? (size_t)(e - s) : n;
		if (out->len - start + take > OTLPM_MAX_LINE)
			return err_at(m->ctx->err, TT_EPARSE, m->ctx->name, lineno, 1,
			              "line is longer than %zu MiB", OTLPM_MAX_LINE >> 20);
		buf_add(out, s, take);
		r->pos += take + (e != NULL);
		r->done += take + (e != NULL);
		if (e)
			return 1;
	}
	if (out->p == NULL)
		buf_add(out, "", 0);
	return any ? 1 : 0;
}

static int blank_text(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return 0;
	return 1;
}

int otlp_metrics_run(ImportCtx *ctx, FILE *f)
{
	M m;
	memset(&m, 0, sizeof m);
	m.ctx = ctx;
	buf_init(&m.vals);
	buf_init(&m.tmp);
	Lines *r = xcalloc(1, sizeof *r);
	r->f = f;
	Buf all, line;
	buf_init(&all);
	buf_init(&line);
	long lineno = 0;
	int rc = 0, got, jsonl = -1;
	while ((got = next_line(&m, r, &line, lineno + 1)) > 0) {
		lineno++;
		if (jsonl < 0) {
			/* still deciding: keep everything for the one-document case */
			buf_add(&all, line.p, line.len);
			buf_addc(&all, '\n');
			if (!blank_text(line.p, line.len)) {
				JpDoc *d = NULL;
				JpVal *root = NULL;
				Err probe = {0};
				jsonl = jp_parse(line.p, line.len, ctx->name, lineno, &d, &root, &probe) == 0;
				if (jsonl)
					rc = request(&m, root);
				jp_free(d);
				if (rc)
					break;
			}
		} else if (jsonl) {
			if (!blank_text(line.p, line.len) && (rc = document(&m, line.p, line.len, lineno)))
				break;
		} else {
			if (all.len + line.len + 1 > OTLPM_MAX_DOC) {
				rc = err_at(ctx->err, TT_EPARSE, ctx->name, lineno, 1,
				            "document is larger than %zu MiB (write JSON Lines instead)",
				            OTLPM_MAX_DOC >> 20);
				break;
			}
			buf_add(&all, line.p, line.len);
			buf_addc(&all, '\n');
		}
		buf_reset(&line);
	}
	if (got < 0)
		rc = got;
	if (rc == 0 && jsonl == 0)
		rc = document(&m, all.p, all.len, 1);
	if (rc == 0 && jsonl < 0)
		rc = err_at(ctx->err, TT_EPARSE, ctx->name, 1, 1, "no JSON document in the file");
	buf_fini(&all);
	buf_fini(&line);
	buf_fini(&m.vals);
	buf_fini(&m.tmp);
	free(m.b);
	free(m.q);
	free(r);
	return rc;
}

int otlp_metrics_ranges(ImportCtx *ctx, FILE *f, const ImportRange *r, size_t n)
{
	/* offsets count after a UTF-8 byte order mark: step over one */
	char chunk[1 << 16];
	if (fseek(f, 0, SEEK_SET) != 0 || (fread(chunk, 1, 3, f) == 3 &&
	                                   memcmp(chunk, "\xEF\xBB\xBF", 3) != 0 &&
	                                   fseek(f, 0, SEEK_SET) != 0))
		return err_set(ctx->err, TT_EIO, "%s: cannot read the input again for its metrics "
		               "requests: %s", ctx->name, strerror(errno));
	if (ferror(f) || feof(f)) {
		clearerr(f);
		if (fseek(f, 0, SEEK_SET) != 0)
			return err_set(ctx->err, TT_EIO, "%s: cannot read the input again", ctx->name);
	}
	M m;
	memset(&m, 0, sizeof m);
	m.ctx = ctx;
	buf_init(&m.vals);
	buf_init(&m.tmp);
	Buf doc;
	buf_init(&doc);
	uint64_t at = 0;     /* offset of the next byte of f, as the ranges count */
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		buf_reset(&doc);
		/* the request's line up to it as blanks: columns stay the file's */
		for (long c = 1; c < r[i].col; c++)
			buf_addc(&doc, ' ');
		while (at < r[i].to) {
			uint64_t need = r[i].to - at;
			size_t want = need < sizeof chunk ? (size_t)need : sizeof chunk;
			size_t got = fread(chunk, 1, want, f);
			if (got == 0) {
				rc = err_set(ctx->err, TT_EIO, "%s: the input changed while it was read "
				             "(it ends before byte %llu)", ctx->name,
				             (unsigned long long)r[i].to);
				break;
			}
			if (at + got > r[i].from) {
				size_t lo = at >= r[i].from ? 0 : (size_t)(r[i].from - at);
				buf_add(&doc, chunk + lo, got - lo);
			}
			at += got;
		}
		if (rc == 0)
			rc = document(&m, doc.p ? doc.p : "", doc.len, r[i].line);
	}
	buf_fini(&doc);
	buf_fini(&m.vals);
	buf_fini(&m.tmp);
	free(m.b);
	free(m.q);
	return rc;
}
