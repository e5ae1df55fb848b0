/*
 * jaeger.c - Jaeger JSON traces (the query service's /api/traces and
 * /api/traces/ID responses, the UI's downloads) into the spans table.
 *
 * Accepted shapes (detected from the content):
 *   {"data": [trace, ...], "total": .., "errors": ..}   query API / UI download
 *   trace                                                one trace at top level
 *   [trace, ...]                                         a bare list of traces
 * where trace = {"traceID", "spans": [...], "processes": {"p1": {...}}}.
 * Each trace is read and written on its own (tracejson.h): memory follows
 * the largest trace, not the file.
 *
 * Mapping (the same conventions as the OTLP importer, so every format
 * yields the same rows):
 *  - ids: hex of either case, at most 32 (trace) / 16 (span) digits,
 *    left-padded with zeros to 32 / 16 lowercase digits. Jaeger itself
 *    treats ids as opaque strings, so any other string (up to
 *    TJ_OPAQUE_MAX bytes) is accepted and mapped to a hex id with
 *    tj_opaque_id(), the same in every parent reference; the span keeps
 *    the original in tailtriage.original_trace_id / original_span_id /
 *    original_parent_id. Two different ids that would be stored as one
 *    (a trace id within the file, a span id within its trace) are refused.
 *  - parent: the first CHILD_OF reference within the same trace, else the
 *    first FOLLOWS_FROM one (as Jaeger itself does), else "parentSpanID".
 *    Every other reference, and a FOLLOWS_FROM one chosen as parent, is
 *    kept as a link {"trace_id","span_id","attrs":{"ref_type":..}}, so an
 *    asynchronous child can be told apart.
 *  - kind: the "span.kind" tag (client, server, producer, consumer,
 *    internal; any case). Jaeger has no "unspecified": a span without the
 *    tag, or with another value, is a local span, stored as INTERNAL.
 *  - times: startTime/duration in microseconds (fractions kept) -> ns.
 *    Jaeger always writes both (a duration of 0 is an instant span). A
 *    span given without a startTime takes its earliest log's; one without
 *    a duration, or with neither a startTime nor a log, is skipped and
 *    counted (ctx->skips), as Zipkin's unfinished spans are: its end is
 *    unknown. The rest of the file is imported.
 *  - service: the process's serviceName; resource: one per process, its
 *    attributes the process tags plus service.name.
 *  - host: host.name, else hostname, from the process tags, else the span
 *    tags. Class: span tag ctx->class_key, else the process tag.
 *  - queue: tags queue.wait_ns (integer ns) / queue.wait_ms (ms), and logs
 *    whose "event" field is queue.wait with duration_ns / duration_ms
 *    fields; several are summed.
 *  - status: tag error=true or otel.status_code=ERROR -> 2, OK -> 1;
 *    message from otel.status_description.
 *  - scope: tags otel.scope.name/version (or otel.library.*).
 *  - attrs: all span tags as one JSON object, typed by their "type"
 *    (string, bool, int64, float64, binary -> base64 string), keys sorted,
 *    a repeated key keeps its last value; plus "jaeger.warnings".
 *  - events: logs -> [{"name","time_ns","attrs"}], name from the "event"
 *    field (removed from attrs).
 *  - A client and a server span that share one span id (Zipkin-style
 *    instrumentation seen through Jaeger) are split like Zipkin's shared
 *    spans: the server half gets tj_shared_server_id(), its parent is the
 *    client span, and the server's children follow it.
 * A "data": null response with "errors" is reported as an error; errors
 * next to data are ignored (the traces that came back are imported).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "formats.h"
#include "tracejson.h"

enum { JT_STRING, JT_BOOL, JT_INT64, JT_FLOAT64, JT_BINARY };

typedef struct JTag {
	const TjNode *node;      /* the tag object, for messages */
	const char *key;
	size_t voff, vlen;       /* JSON value text in J.vals */
	const char *str;         /* the value as text (strings: contents) */
	int type;                /* JT_* */
	int boolean;
} JTag;

typedef struct JTags {
	JTag *v;
	size_t n, cap;
} JTags;

typedef struct JProc {
	const char *id;
	const TjNode *node;
	const char *service;
	char *host;              /* from the process tags, may be NULL */
	char *wclass;
	char *attrs;             /* resource attributes JSON */
	int64_t resource_id;     /* 0 until interned */
} JProc;

typedef struct JSpan {
	const TjNode *node;
	char span_id[17];
	char orig_id[17];        /* the shared id when span_id was derived */
	char parent_id[17];
	const TjNode *sid_node;  /* the span id as written */
	const TjNode *pid_node;  /* the parent id as written, or NULL */
	int sid_opaque, pid_opaque;
	int parent_ref;          /* index of the reference chosen as parent, or -1 */
	int kind;
	size_t proc_ix;          /* index in J.procs during the first pass */
	JProc *proc;             /* set once J.procs stops growing */
	int server_half;
} JSpan;

typedef struct Shared {
	char id[17];
	const char *server_svc, *client_svc;
} Shared;

typedef struct J {
	ImportCtx *ctx;
	Buf vals;                /* tag values of the tags being decoded */
	JTags tags;
	TjAttrs attrs;
	Buf attrs_json, events_json, links_json, tmp;
	Buf peer, db;            /* the attributes' names (tj_attrs_names) */
	Buf route;               /* the span's route (tj_attrs_route) */
	int route_rule;          /* its rule, -1: left to the readers */
	const char *peer_s, *db_s;
	JProc *procs;            /* sorted named processes, then inline ones */
	size_t nprocs, capprocs, nnamed;
	JSpan *spans;
	size_t nspans, capspans;
	Shared *shared;
	size_t nshared, capshared;
	char trace_id[33];
	const TjNode *trace_node; /* the trace id as written */
	int trace_opaque;
	TjIdMap traces;          /* every trace id of the file */
	TjIdMap ids;             /* span ids of the current trace */
} J;

/* ---- tags -------------------------------------------------------------- */

static int is_integer_text(const char *s, size_t n)
{
	int64_t v;
	size_t i = s[0] == '-';
	if (i >= n)
		return 0;
	for (size_t j = i; j < n; j++)
		if (s[j] < '0' || s[j] > '9')
			return 0;
	return tj_decimal(s, n, 0, &v) == 0;
}

static int is_number_text(const char *s, size_t n)
{
	int64_t v;
	return n > 0 && tj_decimal(s, n, 0, &v) != -1;
}

/* Decodes a Jaeger key/type/value list (tags, process tags, log fields)
 * into j->tags; values become JSON text in j->vals. */
static int decode_tags(J *j, const TjNode *arr, const char *what)
{
	ImportCtx *ctx = j->ctx;
	j->tags.n = 0;
	buf_reset(&j->vals);
	if (arr == NULL || arr->type == TJ_NULL)
		return 0;
	if (arr->type != TJ_ARRAY)
		return tj_fail(ctx, arr, "%s must be an array, not %s", what, tj_type_name(arr));
	for (const TjNode *t = arr->child; t; t = t->next) {
		if (t->type != TJ_OBJECT)
			return tj_fail(ctx, t, "each of %s must be an object {key, type, value}, not %s",
			               what, tj_type_name(t));
		const TjNode *k, *ty, *v;
		int rc;
		if ((rc = tj_member(ctx, t, "key", &k)) || (rc = tj_member(ctx, t, "type", &ty))
		    || (rc = tj_member(ctx, t, "value", &v)))
			return rc;
		if (k == NULL || k->type != TJ_STRING)
			return tj_fail(ctx, k ? k : t, "%s entry needs a string \"key\"", what);
		char q[80];
		if (v == NULL)
			return tj_fail(ctx, t, "%s entry %s has no \"value\"", what,
			               tj_quote(k->text, k->len, q, sizeof q));
		int type;
		if (ty == NULL || ty->type == TJ_NULL) {
			if (v->type == TJ_STRING)
				type = JT_STRING;
			else if (v->type == TJ_BOOL)
				type = JT_BOOL;
			else if (v->type == TJ_NUMBER)
				type = is_integer_text(v->text, v->len) ? JT_INT64 : JT_FLOAT64;
			else
				return tj_fail(ctx, v, "%s entry %s: value must be a string, boolean or "
				               "number, not %s", what, tj_quote(k->text, k->len, q, sizeof q),
				               tj_type_name(v));
		} else if (ty->type != TJ_STRING) {
			return tj_fail(ctx, ty, "%s entry %s: \"type\" must be a string", what,
			               tj_quote(k->text, k->len, q, sizeof q));
		} else if (strcasecmp(ty->text, "string") == 0) {
			type = JT_STRING;
		} else if (strcasecmp(ty->text, "bool") == 0) {
			type = JT_BOOL;
		} else if (strcasecmp(ty->text, "int64") == 0) {
			type = JT_INT64;
		} else if (strcasecmp(ty->text, "float64") == 0) {
			type = JT_FLOAT64;
		} else if (strcasecmp(ty->text, "binary") == 0) {
			type = JT_BINARY;
		} else {
			char q2[64];
			return tj_fail(ctx, ty, "%s entry %s: unknown type %s (string, bool, int64, "
			               "float64 or binary)", what, tj_quote(k->text, k->len, q, sizeof q),
			               tj_quote(ty->text, ty->len, q2, sizeof q2));
		}
		JTag tag = {.node = t, .key = k->text, .type = type};
		size_t start = j->vals.len;
		int ok = 1;
		switch (type) {
		case JT_STRING:
		case JT_BINARY:
			ok = v->type == TJ_STRING;
			if (ok)
				buf_add_json_str(&j->vals, v->text, v->len);
			break;
		case JT_BOOL:
			if (v->type == TJ_BOOL)
				tag.boolean = v->boolean;
			else if (v->type == TJ_STRING && (strcmp(v->text, "true") == 0
			                                  || strcmp(v->text, "false") == 0))
				tag.boolean = v->text[0] == 't';
			else
				ok = 0;
			if (ok)
				buf_adds(&j->vals, tag.boolean ? "true" : "false");
			break;
		case JT_INT64:
			ok = (v->type == TJ_NUMBER || v->type == TJ_STRING)
			     && is_integer_text(v->text, v->len);
			if (ok) {
				int64_t iv;
				tj_decimal(v->text, v->len, 0, &iv);
				buf_printf(&j->vals, "%lld", (long long)iv);
			}
			break;
		case JT_FLOAT64:
			if (v->type == TJ_NUMBER)
				buf_add(&j->vals, v->text, v->len);
			else if (v->type == TJ_STRING && is_number_text(v->text, v->len))
				buf_add(&j->vals, v->text, v->len);
			else if (v->type == TJ_STRING && (strcmp(v->text, "NaN") == 0
			                                  || strcmp(v->text, "Infinity") == 0
			                                  || strcmp(v->text, "-Infinity") == 0))
				buf_add_json_str(&j->vals, v->text, v->len);  /* JSON has no NaN */
			else
				ok = 0;
			break;
		}
		if (!ok) {
			static const char *names[] = {"string", "bool", "int64", "float64", "binary"};
			return tj_fail(ctx, v, "%s entry %s: value %s does not fit type %s", what,
			               tj_quote(k->text, k->len, q, sizeof q),
			               v->type == TJ_STRING ? "(a string)" : tj_type_name(v), names[type]);
		}
		tag.voff = start;
		tag.vlen = j->vals.len - start;
		tag.str = (type == JT_STRING || type == JT_BINARY) ? v->text : NULL;
		if (j->tags.n == j->tags.cap) {
			j->tags.cap = j->tags.cap ? j->tags.cap * 2 : 16;
			j->tags.v = xrealloc(j->tags.v, j->tags.cap * sizeof *j->tags.v);
		}
		j->tags.v[j->tags.n++] = tag;
	}
	return 0;
}

/* The last tag named key, or NULL. */
static const JTag *tag_find(const J *j, const char *key)
{
	for (size_t i = j->tags.n; i-- > 0;)
		if (strcmp(j->tags.v[i].key, key) == 0)
			return &j->tags.v[i];
	return NULL;
}

/* A tag's value as text: a string's contents, else its JSON text. The
 * result lives in j->tmp until the next call. */
static const char *tag_text(J *j, const JTag *t)
{
	if (t == NULL)
		return NULL;
	if (t->str)
		return t->str;
	buf_reset(&j->tmp);
	buf_add(&j->tmp, j->vals.p + t->voff, t->vlen);
	return buf_str(&j->tmp);
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

/* ---- queue time ------------------------------------------------------------ */

static int add_queue(ImportCtx *ctx, const TjNode *at, int64_t *sum, int *has, int64_t v)
{
	if (v < 0)
		return tj_fail(ctx, at, "queue wait must not be negative");
	if (*sum > INT64_MAX - v)
		return tj_fail(ctx, at, "queue wait out of range");
	*sum += v;
	*has = 1;
	return 0;
}

/* A queue figure from a tag or log field: ns (integer) or ms (number). */
static int queue_value(J *j, const JTag *t, int scale, int64_t *out)
{
	const char *txt = j->vals.p + t->voff;
	size_t n = t->vlen;
	if (t->type == JT_STRING) {  /* numbers sent as strings: strip quotes */
		txt = t->str;
		n = strlen(t->str);
	}
	if (t->type == JT_BOOL || t->type == JT_BINARY
	    || (scale == 0 && !is_integer_text(txt, n)) || tj_decimal(txt, n, scale, out) != 0) {
		char q[80];
		return tj_fail(j->ctx, t->node, "%s must be %s", tj_quote(t->key, strlen(t->key), q,
		               sizeof q), scale == 0 ? "an integer (ns)" : "a number (ms)");
	}
	return 0;
}

/* ---- processes ----------------------------------------------------------- */

static void procs_clear(J *j)
{
	for (size_t i = 0; i < j->nprocs; i++) {
		free(j->procs[i].host);
		free(j->procs[i].wclass);
		free(j->procs[i].attrs);
	}
	j->nprocs = 0;
	j->nnamed = 0;
}

static int proc_cmp(const void *a, const void *b)
{
	return strcmp(((const JProc *)a)->id, ((const JProc *)b)->id);
}

static int decode_process(J *j, const TjNode *p, const char *id, JProc *out)
{
	ImportCtx *ctx = j->ctx;
	if (p->type != TJ_OBJECT)
		return tj_fail(ctx, p, "a process must be an object, not %s", tj_type_name(p));
	const TjNode *sn, *tags;
	int rc;
	if ((rc = tj_member(ctx, p, "serviceName", &sn)) || (rc = tj_member(ctx, p, "tags", &tags)))
		return rc;
	if (sn == NULL || sn->type != TJ_STRING)
		return tj_fail(ctx, sn ? sn : p, "process needs a string \"serviceName\"");
	if ((rc = decode_tags(j, tags, "process tags")))
		return rc;
	memset(out, 0, sizeof *out);
	out->id = id;
	out->node = p;
	out->service = sn->text;
	const JTag *h = tag_find(j, "host.name");
	if (h == NULL)
		h = tag_find(j, "hostname");
	out->host = dup_or_null(tag_text(j, h));
	out->wclass = dup_or_null(tag_text(j, tag_find(j, ctx->class_key)));
	tj_attrs_reset(&j->attrs);
	tj_attrs_add_str(&j->attrs, "service.name", sn->text, sn->len);
	for (size_t i = 0; i < j->tags.n; i++) {
		const JTag *t = &j->tags.v[i];
		tj_attrs_add_json(&j->attrs, t->key, strlen(t->key), j->vals.p + t->voff, t->vlen);
	}
	buf_reset(&j->tmp);
	tj_attrs_write(&j->attrs, &j->tmp);
	out->attrs = xstrdup(buf_str(&j->tmp));
	return 0;
}

static JProc *proc_find(J *j, const char *id)
{
	JProc key = {.id = id};
	if (j->nnamed == 0)
		return NULL;
	return bsearch(&key, j->procs, j->nnamed, sizeof *j->procs, proc_cmp);
}

/* ---- spans, first pass: identity, parent, kind, process -------------------- */

static int span_kind(const char *v)
{
	if (v == NULL)
		return SPAN_KIND_INTERNAL;
	if (strcasecmp(v, "client") == 0)
		return SPAN_KIND_CLIENT;
	if (strcasecmp(v, "server") == 0)
		return SPAN_KIND_SERVER;
	if (strcasecmp(v, "producer") == 0)
		return SPAN_KIND_PRODUCER;
	if (strcasecmp(v, "consumer") == 0)
		return SPAN_KIND_CONSUMER;
	return SPAN_KIND_INTERNAL;
}

/* The string value of the last tag named key, without full validation
 * (the second pass validates every tag). */
static const char *peek_tag(const TjNode *tags, const char *key)
{
	const char *found = NULL;
	if (tags == NULL || tags->type != TJ_ARRAY)
		return NULL;
	for (const TjNode *t = tags->child; t; t = t->next) {
		if (t->type != TJ_OBJECT)
			continue;
		const TjNode *k = NULL, *v = NULL;
		for (const TjNode *m = t->child; m; m = m->next) {
			if (strcmp(m->key, "key") == 0)
				k = m;
			else if (strcmp(m->key, "value") == 0)
				v = m;
		}
		if (k && v && k->type == TJ_STRING && v->type == TJ_STRING && strcmp(k->text, key) == 0)
			found = v->text;
	}
	return found;
}

static int is_zero_id(const TjNode *v)
{
	if (v->type != TJ_STRING)
		return 0;
	for (size_t i = 0; i < v->len; i++)
		if (v->text[i] != '0')
			return 0;
	return 1;  /* "" too */
}

/* Reads an id (hex or opaque, see the top) and checks that no other id
 * of its scope maps to the same stored id: trace ids over the file (span
 * NULL), span ids within the current trace. */
static int read_id(J *j, const TjNode *v, const char *what, const char *trace_id, char *out,
                   int *opaque)
{
	int trace = trace_id == NULL;
	int rc = tj_read_id(j->ctx, v, what, trace ? 32 : 16, trace ? 32 : 16, out, opaque);
	if (rc)
		return rc;
	uint64_t fp = tj_id_fingerprint(v->text, v->len, *opaque);
	if (tj_idmap_check(trace ? &j->traces : &j->ids, trace ? out : trace_id, trace ? NULL : out,
	                   fp, 1)) {
		char q[80];
		return tj_fail(j->ctx, v, "%s %s is stored as %s, and so is a different id "
		               "in this %s: an id collision (rename one of them)", what,
		               tj_quote(v->text, v->len, q, sizeof q), out, trace ? "file" : "trace");
	}
	return 0;
}

/* The trace id of the trace being read, from the trace or a span. */
static int set_trace_id(J *j, const TjNode *v, char *out)
{
	int opaque, rc = read_id(j, v, "traceID", NULL, out, &opaque);
	if (rc == 0 && j->trace_id[0] == '\0') {
		memcpy(j->trace_id, out, 33);
		j->trace_node = v;
		j->trace_opaque = opaque;
	}
	return rc;
}

static int span_first(J *j, const TjNode *s, JSpan *out)
{
	ImportCtx *ctx = j->ctx;
	memset(out, 0, sizeof *out);
	out->node = s;
	out->parent_ref = -1;
	if (s->type != TJ_OBJECT)
		return tj_fail(ctx, s, "a span must be an object, not %s", tj_type_name(s));
	const TjNode *tid, *sid, *refs, *psid, *pid, *proc, *tags;
	int rc;
	if ((rc = tj_member(ctx, s, "traceID", &tid)) || (rc = tj_member(ctx, s, "spanID", &sid))
	    || (rc = tj_member(ctx, s, "references", &refs))
	    || (rc = tj_member(ctx, s, "parentSpanID", &psid))
	    || (rc = tj_member(ctx, s, "processID", &pid)) || (rc = tj_member(ctx, s, "process", &proc))
	    || (rc = tj_member(ctx, s, "tags", &tags)))
		return rc;
	char trace_id[33];
	if (tid && tid->type != TJ_NULL) {
		if ((rc = set_trace_id(j, tid, trace_id)))
			return rc;
		if (strcmp(trace_id, j->trace_id) != 0)
			return tj_fail(ctx, tid, "span traceID %s differs from its trace's %s", trace_id,
			               j->trace_id);
	} else if (j->trace_id[0] == '\0') {
		return tj_fail(ctx, s, "span has no \"traceID\" (and neither has its trace)");
	}
	if (sid == NULL)
		return tj_fail(ctx, s, "span has no \"spanID\"");
	out->sid_node = sid;
	if ((rc = read_id(j, sid, "spanID", j->trace_id, out->span_id, &out->sid_opaque)))
		return rc;

	/* parent: first same-trace CHILD_OF, else first same-trace FOLLOWS_FROM */
	int child_of = -1, follows = -1, idx = 0;
	const TjNode *child_node = NULL, *follows_node = NULL;
	if (refs && refs->type != TJ_NULL && refs->type != TJ_ARRAY)
		return tj_fail(ctx, refs, "\"references\" must be an array, not %s", tj_type_name(refs));
	for (const TjNode *r = refs ? refs->child : NULL; r; r = r->next, idx++) {
		if (r->type != TJ_OBJECT)
			return tj_fail(ctx, r, "a reference must be an object, not %s", tj_type_name(r));
		const TjNode *rt, *rtid, *rsid;
		if ((rc = tj_member(ctx, r, "refType", &rt)) || (rc = tj_member(ctx, r, "traceID", &rtid))
		    || (rc = tj_member(ctx, r, "spanID", &rsid)))
			return rc;
		if (rt == NULL || rt->type != TJ_STRING)
			return tj_fail(ctx, rt ? rt : r, "reference needs a string \"refType\"");
		int is_child = strcasecmp(rt->text, "CHILD_OF") == 0;
		if (!is_child && strcasecmp(rt->text, "FOLLOWS_FROM") != 0) {
			char q[64];
			return tj_fail(ctx, rt, "refType must be CHILD_OF or FOLLOWS_FROM, not %s",
			               tj_quote(rt->text, rt->len, q, sizeof q));
		}
		if (rsid == NULL)
			return tj_fail(ctx, r, "reference has no \"spanID\"");
		char rs[17], rtr[33];
		int opaque;
		if (rtid && rtid->type != TJ_NULL) {
			if ((rc = read_id(j, rtid, "reference traceID", NULL, rtr, &opaque)))
				return rc;
		} else {
			memcpy(rtr, j->trace_id, sizeof rtr);
		}
		if (strcmp(rtr, j->trace_id) != 0) {
			/* another trace's span: only its form is checked */
			if ((rc = tj_read_id(ctx, rsid, "reference spanID", 16, 16, rs, &opaque)))
				return rc;
			continue;
		}
		if ((rc = read_id(j, rsid, "reference spanID", j->trace_id, rs, &opaque)))
			return rc;
		if (is_child && child_of < 0) {
			child_of = idx;
			child_node = rsid;
		} else if (!is_child && follows < 0) {
			follows = idx;
			follows_node = rsid;
		}
	}
	const TjNode *pnode = child_of >= 0 ? child_node : follows_node;
	out->parent_ref = child_of >= 0 ? child_of : follows;
	if (pnode) {
		tj_read_id(ctx, pnode, "reference spanID", 16, 16, out->parent_id, &out->pid_opaque);
	} else if (psid && psid->type != TJ_NULL && !is_zero_id(psid)) {
		if ((rc = read_id(j, psid, "parentSpanID", j->trace_id, out->parent_id,
		                  &out->pid_opaque)))
			return rc;
		pnode = psid;
	}
	out->pid_node = pnode;
	if (pnode && strcmp(out->parent_id, out->span_id) == 0)
		return tj_fail(ctx, pnode, "span %s names itself as its parent", out->span_id);

	/* process: by id from the trace's processes, or inline */
	if (pid && pid->type != TJ_NULL) {
		if (pid->type != TJ_STRING)
			return tj_fail(ctx, pid, "\"processID\" must be a string");
		const JProc *pp = proc_find(j, pid->text);
		if (pp == NULL) {
			char q[80];
			return tj_fail(ctx, pid, "processID %s is not among the trace's processes",
			               tj_quote(pid->text, pid->len, q, sizeof q));
		}
		out->proc_ix = (size_t)(pp - j->procs);
	} else if (proc && proc->type != TJ_NULL) {
		/* inline process: appended after the named ones */
		if (j->nprocs == j->capprocs) {
			j->capprocs = j->capprocs ? j->capprocs * 2 : 16;
			j->procs = xrealloc(j->procs, j->capprocs * sizeof *j->procs);
		}
		JProc p;
		if ((rc = decode_process(j, proc, "", &p)))
			return rc;
		out->proc_ix = j->nprocs;
		j->procs[j->nprocs++] = p;
	} else {
		return tj_fail(ctx, s, "span has no \"processID\" (nor an inline \"process\")");
	}
	out->kind = span_kind(peek_tag(tags, "span.kind"));
	return 0;
}

/* ---- spans, second pass: the row -------------------------------------------- */

static int shared_cmp(const void *a, const void *b)
{
	return strcmp(((const Shared *)a)->id, ((const Shared *)b)->id);
}

/* The earliest timestamp among a span's logs into *out (0: none), each
 * log checked as the events below check it. */
static int first_log_time(ImportCtx *ctx, const TjNode *logs, int64_t *out)
{
	*out = 0;
	if (logs == NULL || logs->type != TJ_ARRAY)
		return 0;  /* the events below refuse what is not an array */
	for (const TjNode *l = logs->child; l; l = l->next) {
		const TjNode *ts;
		int64_t t_ns;
		int rc;
		if (l->type != TJ_OBJECT)
			return tj_fail(ctx, l, "a log must be an object, not %s", tj_type_name(l));
		if ((rc = tj_member(ctx, l, "timestamp", &ts)))
			return rc;
		if (ts == NULL || ts->type == TJ_NULL)
			return tj_fail(ctx, l, "log has no \"timestamp\"");
		if ((rc = tj_micros(ctx, ts, "log timestamp", &t_ns)))
			return rc;
		if (t_ns > 0 && (*out == 0 || t_ns < *out))
			*out = t_ns;
	}
	return 0;
}

static int span_write(J *j, JSpan *js)
{
	ImportCtx *ctx = j->ctx;
	const TjNode *s = js->node;
	const TjNode *op, *st, *du, *tags, *logs, *refs, *flags, *warn;
	int rc;
	if ((rc = tj_member(ctx, s, "operationName", &op)) || (rc = tj_member(ctx, s, "startTime", &st))
	    || (rc = tj_member(ctx, s, "duration", &du)) || (rc = tj_member(ctx, s, "tags", &tags))
	    || (rc = tj_member(ctx, s, "logs", &logs)) || (rc = tj_member(ctx, s, "references", &refs))
	    || (rc = tj_member(ctx, s, "flags", &flags)) || (rc = tj_member(ctx, s, "warnings", &warn)))
		return rc;
	if (op && op->type != TJ_STRING && op->type != TJ_NULL)
		return tj_fail(ctx, op, "\"operationName\" must be a string, not %s", tj_type_name(op));
	StoreSpan sp = {0};
	int64_t dur = 0;
	int has_start = st && st->type != TJ_NULL, from_log = 0;
	if ((has_start && (rc = tj_micros(ctx, st, "startTime", &sp.start_ns)))
	    || (du && du->type != TJ_NULL && (rc = tj_micros(ctx, du, "duration", &dur))))
		return rc;
	if (!has_start) {
		/* the earliest log's time, as for a Zipkin span's annotations */
		if ((rc = first_log_time(ctx, logs, &sp.start_ns)))
			return rc;
		from_log = sp.start_ns > 0;
	}
	ImportSkips *k = ctx->skips;
	if (sp.start_ns == 0 && !has_start) {
		import_skip_span(ctx, &k->untimed, k->untimed_at, sizeof k->untimed_at, s->line, s->col);
		return 0;
	}
	if (du == NULL || du->type == TJ_NULL) {
		import_skip_span(ctx, &k->unfinished, k->unfinished_at, sizeof k->unfinished_at, s->line,
		                 s->col);
		return 0;
	}
	if (sp.start_ns > INT64_MAX - dur)
		return tj_fail(ctx, du, "startTime + duration is out of range");
	sp.end_ns = sp.start_ns + dur;
	k->start_from_event += from_log;
	if (flags && flags->type != TJ_NULL) {
		if (flags->type != TJ_NUMBER || tj_decimal(flags->text, flags->len, 0, &sp.flags) != 0
		    || !is_integer_text(flags->text, flags->len) || sp.flags < 0)
			return tj_fail(ctx, flags, "\"flags\" must be a non-negative integer");
	}

	/* links: every reference but the CHILD_OF chosen as parent */
	buf_reset(&j->links_json);
	int idx = 0, nlinks = 0;
	for (const TjNode *r = refs && refs->type == TJ_ARRAY ? refs->child : NULL; r;
	     r = r->next, idx++) {
		const TjNode *rt, *rtid, *rsid;
		tj_member(ctx, r, "refType", &rt);
		tj_member(ctx, r, "traceID", &rtid);
		tj_member(ctx, r, "spanID", &rsid);
		int is_child = strcasecmp(rt->text, "CHILD_OF") == 0;
		if (idx == js->parent_ref && is_child)
			continue;
		char rs[17], rtr[33];
		int opaque;
		tj_read_id(ctx, rsid, "reference spanID", 16, 16, rs, &opaque);
		if (rtid && rtid->type != TJ_NULL)
			tj_read_id(ctx, rtid, "reference traceID", 32, 32, rtr, &opaque);
		else
			memcpy(rtr, j->trace_id, sizeof rtr);
		buf_adds(&j->links_json, nlinks++ ? "," : "[");
		buf_printf(&j->links_json, "{\"trace_id\":\"%s\",\"span_id\":\"%s\",\"attrs\":"
		           "{\"ref_type\":\"%s\"}}", rtr, rs, is_child ? "child_of" : "follows_from");
	}
	if (nlinks)
		buf_addc(&j->links_json, ']');

	/* tags */
	if ((rc = decode_tags(j, tags, "tags")))
		return rc;
	const JProc *p = js->proc;
	tj_attrs_reset(&j->attrs);
	for (size_t i = 0; i < j->tags.n; i++) {
		const JTag *t = &j->tags.v[i];
		tj_attrs_add_json(&j->attrs, t->key, strlen(t->key), j->vals.p + t->voff, t->vlen);
	}
	if (js->server_half)
		tj_attrs_add_str(&j->attrs, "tailtriage.shared_span_id", js->orig_id, 16);
	if (j->trace_opaque)
		tj_attrs_add_str(&j->attrs, "tailtriage.original_trace_id", j->trace_node->text,
		                 j->trace_node->len);
	if (js->sid_opaque)
		tj_attrs_add_str(&j->attrs, "tailtriage.original_span_id", js->sid_node->text,
		                 js->sid_node->len);
	if (js->pid_opaque)
		tj_attrs_add_str(&j->attrs, "tailtriage.original_parent_id", js->pid_node->text,
		                 js->pid_node->len);
	if (warn && warn->type != TJ_NULL) {
		if (warn->type != TJ_ARRAY)
			return tj_fail(ctx, warn, "\"warnings\" must be an array, not %s", tj_type_name(warn));
		if (warn->n) {
			buf_reset(&j->tmp);
			tj_json(&j->tmp, warn);
			tj_attrs_add_json(&j->attrs, "jaeger.warnings", 15, j->tmp.p, j->tmp.len);
		}
	}
	buf_reset(&j->attrs_json);
	tj_attrs_write(&j->attrs, &j->attrs_json);
	tj_attrs_names(&j->attrs, &j->peer, &j->db, &j->peer_s, &j->db_s);
	buf_reset(&j->route);
	{
		const char *rn = op && op->type == TJ_STRING ? op->text : "";
		j->route_rule = tj_attrs_route(&j->attrs, rn, strlen(rn), &j->route);
	}

	/* what the tags say; strings copied since tag_text reuses j->tmp */
	char *wclass = dup_or_null(tag_text(j, tag_find(j, ctx->class_key)));
	char *host = NULL;
	if (p->host == NULL) {
		const JTag *h = tag_find(j, "host.name");
		host = dup_or_null(tag_text(j, h ? h : tag_find(j, "hostname")));
	}
	const JTag *err = tag_find(j, "error");
	const JTag *sc = tag_find(j, "otel.status_code");
	const JTag *sd = tag_find(j, "otel.status_description");
	if (sc && sc->str && strcasecmp(sc->str, "ERROR") == 0)
		sp.status_code = 2;
	else if (sc && sc->str && strcasecmp(sc->str, "OK") == 0)
		sp.status_code = 1;
	if (err && ((err->type == JT_BOOL && err->boolean)
	            || (err->str && strcasecmp(err->str, "true") == 0)))
		sp.status_code = 2;
	sp.status_msg = sd && sd->str ? sd->str : NULL;
	const JTag *scn = tag_find(j, "otel.scope.name");
	const JTag *scv = tag_find(j, "otel.scope.version");
	if (scn == NULL) {
		scn = tag_find(j, "otel.library.name");
		scv = tag_find(j, "otel.library.version");
	}
	if (scn && scn->str && (rc = store_scope_intern(ctx->st, scn->str, scv ? scv->str : NULL,
	                                                "{}", &sp.scope_id, ctx->err)))
		goto out;
	const JTag *qns = tag_find(j, "queue.wait_ns");
	const JTag *qms = tag_find(j, "queue.wait_ms");
	int64_t q;
	if (qns && ((rc = queue_value(j, qns, 0, &q))
	            || (rc = add_queue(ctx, qns->node, &sp.queue_ns, &sp.has_queue, q))))
		goto out;
	if (qms && ((rc = queue_value(j, qms, 6, &q))
	            || (rc = add_queue(ctx, qms->node, &sp.queue_ns, &sp.has_queue, q))))
		goto out;

	/* logs -> events (decode_tags below reuses the tag list) */
	buf_reset(&j->events_json);
	if (logs && logs->type != TJ_NULL && logs->type != TJ_ARRAY) {
		rc = tj_fail(ctx, logs, "\"logs\" must be an array, not %s", tj_type_name(logs));
		goto out;
	}
	int nev = 0;
	for (const TjNode *l = logs ? logs->child : NULL; l; l = l->next) {
		const TjNode *ts, *fields;
		if (l->type != TJ_OBJECT) {
			rc = tj_fail(ctx, l, "a log must be an object, not %s", tj_type_name(l));
			goto out;
		}
		if ((rc = tj_member(ctx, l, "timestamp", &ts)) || (rc = tj_member(ctx, l, "fields", &fields)))
			goto out;
		if (ts == NULL || ts->type == TJ_NULL) {
			rc = tj_fail(ctx, l, "log has no \"timestamp\"");
			goto out;
		}
		int64_t t_ns;
		if ((rc = tj_micros(ctx, ts, "log timestamp", &t_ns)) || (rc = decode_tags(j, fields, "log fields")))
			goto out;
		const JTag *ev = tag_find(j, "event");
		const char *name = ev && ev->str ? ev->str : "";
		buf_adds(&j->events_json, nev++ ? "," : "[");
		buf_adds(&j->events_json, "{\"name\":");
		buf_add_json_str(&j->events_json, name, strlen(name));
		buf_printf(&j->events_json, ",\"time_ns\":%lld,\"attrs\":", (long long)t_ns);
		tj_attrs_reset(&j->attrs);
		for (size_t i = 0; i < j->tags.n; i++) {
			const JTag *t = &j->tags.v[i];
			if (t == ev)
				continue;
			tj_attrs_add_json(&j->attrs, t->key, strlen(t->key), j->vals.p + t->voff, t->vlen);
		}
		tj_attrs_write(&j->attrs, &j->events_json);
		buf_addc(&j->events_json, '}');
		if (strcmp(name, "queue.wait") == 0) {
			const JTag *dns = tag_find(j, "duration_ns"), *dms = tag_find(j, "duration_ms");
			if (dns && ((rc = queue_value(j, dns, 0, &q))
			            || (rc = add_queue(ctx, dns->node, &sp.queue_ns, &sp.has_queue, q))))
				goto out;
			if (dms && ((rc = queue_value(j, dms, 6, &q))
			            || (rc = add_queue(ctx, dms->node, &sp.queue_ns, &sp.has_queue, q))))
				goto out;
		}
	}
	if (nev)
		buf_addc(&j->events_json, ']');

	/* resource: one per process */
	JProc *pw = (JProc *)p;
	if (pw->resource_id == 0
	    && (rc = store_resource_intern(ctx->st, pw->service, pw->host, pw->attrs,
	                                   &pw->resource_id, ctx->err)))
		goto out;

	memcpy(sp.trace_id, j->trace_id, sizeof sp.trace_id);
	memcpy(sp.span_id, js->span_id, sizeof sp.span_id);
	memcpy(sp.parent_id, js->parent_id, sizeof sp.parent_id);
	sp.resource_id = pw->resource_id;
	sp.service = p->service;
	sp.host = p->host ? p->host : host;
	sp.name = op && op->type == TJ_STRING ? op->text : "";
	sp.kind = js->kind;
	sp.wclass = wclass ? wclass : p->wclass;
	sp.attrs_json = buf_str(&j->attrs_json);
	sp.attr_peer = j->peer_s;
	sp.attr_db_system = j->db_s;
	if (route_wanted(sp.kind, sp.parent_id[0] != '\0') && j->route_rule >= 0) {
		sp.has_route = 1;
		sp.route = buf_str(&j->route);
		sp.route_rule = j->route_rule;
	}
	sp.events_json = nev ? buf_str(&j->events_json) : NULL;
	sp.links_json = nlinks ? buf_str(&j->links_json) : NULL;
	int added = 0;
	if ((rc = store_span_add(ctx->st, ctx->source_id, &sp, &added, ctx->err)))
		goto out;
	if (added)
		ctx->counts->spans_added++;
	else
		ctx->counts->spans_duplicate++;
out:
	free(wclass);
	free(host);
	return rc;
}

/* ---- one trace ------------------------------------------------------------ */

static int span_id_cmp(const void *a, const void *b)
{
	const JSpan *x = *(JSpan *const *)a, *y = *(JSpan *const *)b;
	int c = strcmp(x->span_id, y->span_id);
	if (c)
		return c;
	return x < y ? -1 : x > y;
}

static const char *svc_of(const JSpan *s)
{
	return s->proc ? s->proc->service : NULL;
}

/* Splits client/server pairs that share one span id (see the top). */
static void split_shared(J *j)
{
	size_t n = j->nspans;
	j->nshared = 0;
	if (n < 2)
		return;
	JSpan **ix = xmalloc(n * sizeof *ix);
	for (size_t i = 0; i < n; i++)
		ix[i] = &j->spans[i];
	qsort(ix, n, sizeof *ix, span_id_cmp);
	for (size_t a = 0; a < n;) {
		size_t b = a + 1;
		while (b < n && strcmp(ix[b]->span_id, ix[a]->span_id) == 0)
			b++;
		const JSpan *client = NULL;
		int servers = 0;
		for (size_t k = a; k < b; k++) {
			if (ix[k]->kind == SPAN_KIND_CLIENT && client == NULL)
				client = ix[k];
			servers += ix[k]->kind == SPAN_KIND_SERVER;
		}
		if (b - a > 1 && client && servers) {
			const char *server_svc = NULL;
			for (size_t k = a; k < b; k++) {
				JSpan *s = ix[k];
				if (s->kind != SPAN_KIND_SERVER)
					continue;
				server_svc = svc_of(s);
				s->server_half = 1;
				memcpy(s->orig_id, s->span_id, sizeof s->orig_id);
				tj_shared_server_id(j->trace_id, s->orig_id, s->span_id);
				memcpy(s->parent_id, s->orig_id, sizeof s->parent_id);
				s->pid_node = s->sid_node; /* its parent is the id it was written with */
				s->pid_opaque = s->sid_opaque;
				s->parent_ref = -1;
			}
			if (j->nshared == j->capshared) {
				j->capshared = j->capshared ? j->capshared * 2 : 8;
				j->shared = xrealloc(j->shared, j->capshared * sizeof *j->shared);
			}
			Shared *sh = &j->shared[j->nshared++];
			memcpy(sh->id, client->span_id, sizeof sh->id);
			sh->server_svc = server_svc;
			sh->client_svc = svc_of(client);
		}
		a = b;
	}
	free(ix);
	if (j->nshared == 0)
		return;
	qsort(j->shared, j->nshared, sizeof *j->shared, shared_cmp);
	for (size_t i = 0; i < n; i++) {
		JSpan *s = &j->spans[i];
		if (s->server_half || s->parent_id[0] == '\0')
			continue;
		Shared key;
		memcpy(key.id, s->parent_id, sizeof key.id);
		const Shared *sh = bsearch(&key, j->shared, j->nshared, sizeof *j->shared, shared_cmp);
		if (sh && tj_child_of_server(svc_of(s), sh->server_svc, sh->client_svc))
			tj_shared_server_id(j->trace_id, sh->id, s->parent_id);
	}
}

static int trace_run(J *j, const TjNode *tr)
{
	ImportCtx *ctx = j->ctx;
	if (tr->type != TJ_OBJECT)
		return tj_fail(ctx, tr, "a Jaeger trace must be an object, not %s", tj_type_name(tr));
	const TjNode *tid, *spans, *procs;
	int rc;
	if ((rc = tj_member(ctx, tr, "traceID", &tid)) || (rc = tj_member(ctx, tr, "spans", &spans))
	    || (rc = tj_member(ctx, tr, "processes", &procs)))
		return rc;
	j->trace_id[0] = '\0';
	j->trace_node = NULL;
	j->trace_opaque = 0;
	tj_idmap_reset(&j->ids);
	char trace_id[33];
	if (tid && tid->type != TJ_NULL && (rc = set_trace_id(j, tid, trace_id)))
		return rc;
	if (spans == NULL)
		return tj_fail(ctx, tr, "trace has no \"spans\"");
	if (spans->type != TJ_ARRAY)
		return tj_fail(ctx, spans, "\"spans\" must be an array, not %s", tj_type_name(spans));
	if (procs && procs->type != TJ_NULL && procs->type != TJ_OBJECT)
		return tj_fail(ctx, procs, "\"processes\" must be an object, not %s", tj_type_name(procs));

	procs_clear(j);
	for (const TjNode *p = procs && procs->type == TJ_OBJECT ? procs->child : NULL; p; p = p->next) {
		if (j->nprocs == j->capprocs) {
			j->capprocs = j->capprocs ? j->capprocs * 2 : 16;
			j->procs = xrealloc(j->procs, j->capprocs * sizeof *j->procs);
		}
		if ((rc = decode_process(j, p, p->key, &j->procs[j->nprocs])))
			return rc;
		j->nprocs++;
	}
	if (j->nprocs > 1)
		qsort(j->procs, j->nprocs, sizeof *j->procs, proc_cmp);
	for (size_t i = 1; i < j->nprocs; i++)
		if (strcmp(j->procs[i].id, j->procs[i - 1].id) == 0) {
			char q[80];
			return tj_fail(ctx, j->procs[i].node, "process %s is given twice",
			               tj_quote(j->procs[i].id, strlen(j->procs[i].id), q, sizeof q));
		}
	j->nnamed = j->nprocs;  /* inline processes are appended after these */

	j->nspans = 0;
	if (spans->n > j->capspans) {
		j->capspans = spans->n;
		j->spans = xrealloc(j->spans, j->capspans * sizeof *j->spans);
	}
	for (const TjNode *s = spans->child; s; s = s->next) {
		if ((rc = span_first(j, s, &j->spans[j->nspans])))
			return rc;
		j->nspans++;
	}
	/* j->procs no longer moves: turn indexes into pointers */
	for (size_t i = 0; i < j->nspans; i++)
		j->spans[i].proc = &j->procs[j->spans[i].proc_ix];
	if (j->trace_id[0] == '\0' && j->nspans == 0)
		return 0;  /* an empty trace adds nothing */

	split_shared(j);
	for (size_t i = 0; i < j->nspans; i++)
		if ((rc = span_write(j, &j->spans[i])))
			return rc;
	return 0;
}

static int on_trace(void *ud, const TjNode *rec, int64_t index)
{
	(void)index;
	return trace_run(ud, rec);
}

int jaeger_json_run(ImportCtx *ctx, FILE *f)
{
	J j;
	memset(&j, 0, sizeof j);
	j.ctx = ctx;
	buf_init(&j.vals);
	buf_init(&j.attrs_json);
	buf_init(&j.peer);
	buf_init(&j.route);
	buf_init(&j.db);
	buf_init(&j.events_json);
	buf_init(&j.links_json);
	buf_init(&j.tmp);
	tj_attrs_init(&j.attrs);
	tj_idmap_init(&j.traces);
	tj_idmap_init(&j.ids);

	TjReadOptions o = {.stream_key = "data", .on_record = on_trace, .ud = &j};
	TjReader *r = NULL;
	int rc = tj_read(ctx, f, &o, &r);
	if (rc)
		goto out;
	const TjNode *root = tj_root(r);
	if (root->type == TJ_ARRAY)
		goto out;  /* [trace, ...]: every trace went through on_trace */
	if (root->type != TJ_OBJECT) {
		rc = tj_fail(ctx, root, "expected a Jaeger JSON object or array, found %s",
		             tj_type_name(root));
		goto out;
	}
	const TjNode *data, *spans, *errors;
	if ((rc = tj_member(ctx, root, "data", &data)) || (rc = tj_member(ctx, root, "spans", &spans))
	    || (rc = tj_member(ctx, root, "errors", &errors)))
		goto out;
	if (data && data->streamed)
		goto out;
	if (data) {
		const TjNode *e0 = errors && errors->type == TJ_ARRAY ? errors->child : NULL;
		const TjNode *msg = NULL;
		if (e0 && e0->type == TJ_OBJECT)
			tj_member(ctx, e0, "msg", &msg);
		char q[200];
		if (msg && msg->type == TJ_STRING)
			rc = tj_fail(ctx, msg, "the Jaeger response holds no traces: %s",
			             tj_quote(msg->text, msg->len, q, sizeof q));
		else
			rc = tj_fail(ctx, data, "\"data\" must be an array of traces, not %s",
			             tj_type_name(data));
		goto out;
	}
	if (spans == NULL) {
		rc = tj_fail(ctx, root, "not a Jaeger trace: expected \"data\" or \"spans\"");
		goto out;
	}
	rc = trace_run(&j, root);
out:
	tj_reader_free(r);
	procs_clear(&j);
	free(j.procs);
	free(j.spans);
	free(j.shared);
	tj_idmap_fini(&j.traces);
	tj_idmap_fini(&j.ids);
	free(j.tags.v);
	buf_fini(&j.vals);
	buf_fini(&j.attrs_json);
	buf_fini(&j.peer);
	buf_fini(&j.route);
	buf_fini(&j.db);
	buf_fini(&j.events_json);
	buf_fini(&j.links_json);
	buf_fini(&j.tmp);
	tj_attrs_fini(&j.attrs);
	return rc;
}

int jaeger_json_sniff(const char *head, size_t len)
{
	size_t at = 0;
	int c = tj_first_char(head, len, &at);
	int has_tid = tj_contains(head, len, "\"traceID\"");
	int has_sid = tj_contains(head, len, "\"spanID\"");
	if (c == '{') {
		if (tj_contains(head, len, "\"data\"") && (has_tid || has_sid))
			return 90;
		if (has_tid && (tj_contains(head, len, "\"spans\"")
		                || tj_contains(head, len, "\"processes\"") || has_sid))
			return 85;
		/* an empty query response: {"data":[],"total":0,...,"errors":null} */
		if (tj_contains(head, len, "\"data\"") && tj_contains(head, len, "\"total\"")
		    && tj_contains(head, len, "\"limit\"") && tj_contains(head, len, "\"errors\""))
			return 40;
		return 0;
	}
	if (c == '[') {
		size_t i = at + 1;
		int c2 = tj_first_char(head + i, len - i, NULL);
		if (c2 == '{' && has_tid && (has_sid || tj_contains(head, len, "\"spans\"")))
			return 80;
	}
	return 0;
}
