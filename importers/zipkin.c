/*
 * zipkin.c - Zipkin v2 JSON span lists (the /api/v2/trace/ID and
 * /api/v2/traces responses flattened, or what a reporter POSTs to
 * /api/v2/spans) into the spans table.
 *
 * Input: a JSON array of spans {traceId, id, parentId, name, kind,
 * timestamp, duration, localEndpoint, remoteEndpoint, tags, annotations,
 * shared, debug}. A list of lists ([[span, ...], ...], what /api/v2/traces
 * returns) is refused with a message: flatten it first. Zipkin v1 JSON
 * (binaryAnnotations, annotations with endpoints) is refused too.
 *
 * Shared spans. In Zipkin's B3 model a client span and the server span it
 * caused may carry the same id; the server half says "shared": true. Our
 * span identity is (trace_id, span_id), so the server half is stored under
 * a derived id, tj_shared_server_id(trace_id, id) (a SHA-256 prefix; the
 * same on every import), with the client span as its parent; the original
 * id is kept in its attributes as "tailtriage.shared_span_id". A SERVER
 * span that carries the id of a CLIENT span in the same file is treated
 * the same way even without the flag. The server's children name the
 * shared id as their parent; they are moved under the derived id unless
 * they run in the client's service (and not the server's). Deciding that
 * needs to know every shared id before writing any child, so the file is
 * read twice: the first pass decodes and checks every span and keeps a
 * small entry (ids, role, a hash of the service) for each CLIENT, SERVER
 * or shared span; the second pass writes the rows. Memory: one span's
 * tree at a time plus 40 bytes per client/server span.
 *
 * Mapping (shared with the OTLP and Jaeger importers):
 *  - ids: 1..32 / 1..16 hex digits of either case, left-padded to 32 / 16.
 *    Zipkin's UI treats ids as opaque strings, so any other string (up to
 *    TJ_OPAQUE_MAX bytes) is accepted and mapped with tj_opaque_id(), the
 *    same wherever it appears (parentId too); the row keeps the original
 *    in tailtriage.original_trace_id / original_span_id /
 *    original_parent_id. Two different ids that would be stored as one are
 *    refused: the first pass records every opaque id with a fingerprint of
 *    its text, and both passes look every id up, so by the end of the
 *    second every id has met every opaque one.
 *  - kind: CLIENT, SERVER, PRODUCER, CONSUMER (any case). Zipkin leaves
 *    kind out for a local span: stored as INTERNAL.
 *  - timestamp and duration in microseconds (fractions, which some
 *    OpenTelemetry exporters write, are kept to the ns); 0 is Zipkin's
 *    "absent" for both. A span without a timestamp takes its earliest
 *    annotation's (what Zipkin does for v1 data). A span without a
 *    duration is unfinished (or was flushed before it ended): its end is
 *    unknown, so it is skipped and counted (ctx->skips), never stored
 *    with a made-up length that would corrupt the splits and the
 *    percentiles; the rest of the file is imported. So is a span without
 *    a timestamp or any annotation. Skipped spans take no part in the
 *    shared-span bookkeeping: a child of one is an orphan, which the
 *    trace builder reports.
 *  - service: localEndpoint.serviceName. Resource: one per distinct
 *    {service.name, host.name, net.host.ip, net.host.port}.
 *    localEndpoint's address is not a host name: host comes from the tags
 *    host.name, else hostname.
 *  - remoteEndpoint -> attributes peer.service, network.peer.address,
 *    network.peer.port (a tag of the same name wins).
 *  - class: tag ctx->class_key. Queue: tags queue.wait_ns / queue.wait_ms,
 *    and annotations named queue.wait carrying duration_ns / duration_ms.
 *  - status: tag "error" (any value but "false") or otel.status_code=ERROR
 *    -> 2; OK -> 1. Message: otel.status_description, else the error tag.
 *  - attrs: the tags (strings; numbers and booleans keep their type).
 *  - events: annotations -> [{"name","time_ns","attrs"}]. Values written
 *    by OpenTelemetry exporters carry attributes: "name":{...} (the
 *    specification's form) and name|{...}|dropped (the Collector's); both
 *    are unpacked, anything else is the event name.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "formats.h"
#include "hash.h"
#include "tracejson.h"

enum { ZR_CLIENT = 1, ZR_SHARED = 2, ZR_SERVER = 4 };

/* Why a well-formed span is not stored (see the top). */
enum { Z_SKIP_NONE, Z_SKIP_UNFINISHED, Z_SKIP_UNTIMED };

typedef struct ZEntry {
	unsigned char trace[16], id[8];
	uint64_t svc;            /* hash of the service name, 0 when unknown */
	unsigned char role;      /* ZR_* */
} ZEntry;

typedef struct ZSpan {
	const TjNode *node;
	char trace_id[33], span_id[17], parent_id[17];
	const TjNode *tid, *id, *pid;  /* the ids as written */
	int tid_opaque, id_opaque, pid_opaque;
	int kind, shared, debug;
	const char *name;
	int64_t start_ns, end_ns;
	int skip;                /* Z_SKIP_*: decoded, but not stored */
	int start_from_ann;      /* start_ns is the earliest annotation's */
	const char *service;     /* NULL when unknown */
	const TjNode *local, *remote, *tags, *annotations;
} ZSpan;

typedef struct Z {
	ImportCtx *ctx;
	int pass;                /* 1 or 2 */
	ZEntry *e;
	size_t ne, cape;
	TjAttrs attrs;
	Buf attrs_json, events_json, res_json, last_res, tmp;
	Buf peer, db;            /* the attributes' names (tj_attrs_names) */
	Buf route;               /* the span's route (tj_attrs_route) */
	int route_rule;          /* its rule, -1: left to the readers */
	const char *peer_s, *db_s;
	int64_t last_res_id;
	TjIdMap ids;             /* opaque ids of the file (see the top) */
} Z;

/* ---- decoding ------------------------------------------------------------ */

static uint64_t svc_hash(const char *s)
{
	if (s == NULL)
		return 0;
	uint64_t h = hash_fnv1a_str(HASH_FNV1A_V0, s); /* decides stored ids: hash.h */
	return h ? h : 1;
}

static int opt_string(ImportCtx *ctx, const TjNode *v, const char *what, const char **out)
{
	*out = NULL;
	if (v == NULL || v->type == TJ_NULL)
		return 0;
	if (v->type != TJ_STRING)
		return tj_fail(ctx, v, "\"%s\" must be a string, not %s", what, tj_type_name(v));
	*out = v->text;
	return 0;
}

static int opt_bool(ImportCtx *ctx, const TjNode *v, const char *what, int *out)
{
	*out = 0;
	if (v == NULL || v->type == TJ_NULL)
		return 0;
	if (v->type != TJ_BOOL)
		return tj_fail(ctx, v, "\"%s\" must be true or false, not %s", what, tj_type_name(v));
	*out = v->boolean;
	return 0;
}

static int check_endpoint(ImportCtx *ctx, const TjNode *ep, const char *what)
{
	if (ep == NULL || ep->type == TJ_NULL)
		return 0;
	if (ep->type != TJ_OBJECT)
		return tj_fail(ctx, ep, "\"%s\" must be an object, not %s", what, tj_type_name(ep));
	static const char *strs[] = {"serviceName", "ipv4", "ipv6"};
	const TjNode *v;
	const char *s;
	int rc;
	for (int i = 0; i < 3; i++)
		if ((rc = tj_member(ctx, ep, strs[i], &v)) || (rc = opt_string(ctx, v, strs[i], &s)))
			return rc;
	if ((rc = tj_member(ctx, ep, "port", &v)))
		return rc;
	int64_t port;
	if (v && v->type != TJ_NULL
	    && (v->type != TJ_NUMBER || tj_decimal(v->text, v->len, 0, &port) != 0
	        || strchr(v->text, '.') || strchr(v->text, 'e') || strchr(v->text, 'E') || port < 0
	        || port > 65535))
		return tj_fail(ctx, v, "%s port must be an integer from 0 to 65535", what);
	return 0;
}

/* Reads an id (hex or opaque) and checks it against the file's opaque
 * ids; span_id NULL: a trace id. */
static int read_id(Z *z, const TjNode *v, const char *what, const char *trace_id, char *out,
                   int *opaque)
{
	int trace = trace_id == NULL;
	int rc = tj_read_id(z->ctx, v, what, trace ? 32 : 16, trace ? 32 : 16, out, opaque);
	if (rc)
		return rc;
	uint64_t fp = tj_id_fingerprint(v->text, v->len, *opaque);
	if (tj_idmap_check(&z->ids, trace ? out : trace_id, trace ? NULL : out, fp,
	                   *opaque && z->pass == 1)) {
		char q[80];
		return tj_fail(z->ctx, v, "%s %s is stored as %s, and so is a different id "
		               "in this %s: an id collision (rename one of them)", what,
		               tj_quote(v->text, v->len, q, sizeof q), out, trace ? "file" : "trace");
	}
	return 0;
}

static int decode_span(Z *z, const TjNode *s, ZSpan *out)
{
	ImportCtx *ctx = z->ctx;
	memset(out, 0, sizeof *out);
	out->node = s;
	if (s->type == TJ_ARRAY)
		return tj_fail(ctx, s, "found a list of span lists (as /api/v2/traces returns): "
		               "flatten it to one array of spans");
	if (s->type != TJ_OBJECT)
		return tj_fail(ctx, s, "a Zipkin span must be an object, not %s", tj_type_name(s));
	const TjNode *tid, *id, *pid, *name, *kind, *ts, *du, *shared, *debug, *bin;
	int rc;
	if ((rc = tj_member(ctx, s, "traceId", &tid)) || (rc = tj_member(ctx, s, "id", &id))
	    || (rc = tj_member(ctx, s, "parentId", &pid)) || (rc = tj_member(ctx, s, "name", &name))
	    || (rc = tj_member(ctx, s, "kind", &kind)) || (rc = tj_member(ctx, s, "timestamp", &ts))
	    || (rc = tj_member(ctx, s, "duration", &du)) || (rc = tj_member(ctx, s, "shared", &shared))
	    || (rc = tj_member(ctx, s, "debug", &debug))
	    || (rc = tj_member(ctx, s, "localEndpoint", &out->local))
	    || (rc = tj_member(ctx, s, "remoteEndpoint", &out->remote))
	    || (rc = tj_member(ctx, s, "tags", &out->tags))
	    || (rc = tj_member(ctx, s, "annotations", &out->annotations))
	    || (rc = tj_member(ctx, s, "binaryAnnotations", &bin)))
		return rc;
	if (bin)
		return tj_fail(ctx, bin, "this is Zipkin v1 JSON (binaryAnnotations); "
		               "only v2 is read (GET /api/v2/...)");
	if (tid == NULL || tid->type == TJ_NULL)
		return tj_fail(ctx, s, "span has no \"traceId\"");
	out->tid = tid;
	if ((rc = read_id(z, tid, "traceId", NULL, out->trace_id, &out->tid_opaque)))
		return rc;
	if (id == NULL || id->type == TJ_NULL)
		return tj_fail(ctx, s, "span has no \"id\"");
	out->id = id;
	if ((rc = read_id(z, id, "id", out->trace_id, out->span_id, &out->id_opaque)))
		return rc;
	if (pid && pid->type != TJ_NULL) {
		out->pid = pid;
		if ((rc = read_id(z, pid, "parentId", out->trace_id, out->parent_id, &out->pid_opaque)))
			return rc;
		if (strcmp(out->parent_id, out->span_id) == 0)
			return tj_fail(ctx, pid, "span %s names itself as its parent", out->span_id);
	}
	if ((rc = opt_string(ctx, name, "name", &out->name)))
		return rc;
	const char *k;
	if ((rc = opt_string(ctx, kind, "kind", &k)))
		return rc;
	if (k == NULL)
		out->kind = SPAN_KIND_INTERNAL;
	else if (strcasecmp(k, "CLIENT") == 0)
		out->kind = SPAN_KIND_CLIENT;
	else if (strcasecmp(k, "SERVER") == 0)
		out->kind = SPAN_KIND_SERVER;
	else if (strcasecmp(k, "PRODUCER") == 0)
		out->kind = SPAN_KIND_PRODUCER;
	else if (strcasecmp(k, "CONSUMER") == 0)
		out->kind = SPAN_KIND_CONSUMER;
	else {
		char q[64];
		return tj_fail(ctx, kind, "kind must be CLIENT, SERVER, PRODUCER or CONSUMER, not %s",
		               tj_quote(kind->text, kind->len, q, sizeof q));
	}
	/* times: 0 is Zipkin's "absent" for both (its model drops a 0) */
	int64_t dur = 0;
	if (ts && ts->type != TJ_NULL && (rc = tj_micros(ctx, ts, "timestamp", &out->start_ns)))
		return rc;
	if (du && du->type != TJ_NULL && (rc = tj_micros(ctx, du, "duration", &dur)))
		return rc;
	if ((rc = opt_bool(ctx, shared, "shared", &out->shared))
	    || (rc = opt_bool(ctx, debug, "debug", &out->debug)))
		return rc;
	if ((rc = check_endpoint(ctx, out->local, "localEndpoint"))
	    || (rc = check_endpoint(ctx, out->remote, "remoteEndpoint")))
		return rc;
	if (out->local && out->local->type == TJ_OBJECT) {
		const TjNode *sn;
		tj_member(ctx, out->local, "serviceName", &sn);
		if (sn && sn->type == TJ_STRING)
			out->service = sn->text;
	}
	const TjNode *tags = out->tags;
	if (tags && tags->type != TJ_NULL) {
		if (tags->type != TJ_OBJECT)
			return tj_fail(ctx, tags, "\"tags\" must be an object of strings, not %s",
			               tj_type_name(tags));
		for (const TjNode *t = tags->child; t; t = t->next)
			if (t->type != TJ_STRING && t->type != TJ_NUMBER && t->type != TJ_BOOL) {
				char q[80];
				return tj_fail(ctx, t, "tag %s must be a string, not %s",
				               tj_quote(t->key, strlen(t->key), q, sizeof q), tj_type_name(t));
			}
	}
	const TjNode *an = out->annotations;
	int64_t first_ann = 0;
	if (an && an->type != TJ_NULL) {
		if (an->type != TJ_ARRAY)
			return tj_fail(ctx, an, "\"annotations\" must be an array, not %s", tj_type_name(an));
		for (const TjNode *a = an->child; a; a = a->next) {
			if (a->type != TJ_OBJECT)
				return tj_fail(ctx, a, "an annotation must be an object, not %s",
				               tj_type_name(a));
			const TjNode *ats, *av, *aep;
			if ((rc = tj_member(ctx, a, "timestamp", &ats)) || (rc = tj_member(ctx, a, "value", &av))
			    || (rc = tj_member(ctx, a, "endpoint", &aep)))
				return rc;
			if (aep)
				return tj_fail(ctx, aep, "annotations with an endpoint are Zipkin v1; "
				               "only v2 is read");
			int64_t t_ns;
			if (ats == NULL || ats->type == TJ_NULL)
				return tj_fail(ctx, a, "annotation has no \"timestamp\"");
			if ((rc = tj_micros(ctx, ats, "annotation timestamp", &t_ns)))
				return rc;
			if (av == NULL || av->type != TJ_STRING)
				return tj_fail(ctx, av ? av : a, "annotation needs a string \"value\"");
			if (t_ns > 0 && (first_ann == 0 || t_ns < first_ann))
				first_ann = t_ns;
		}
	}
	if (out->start_ns == 0 && first_ann > 0) {
		out->start_ns = first_ann;
		out->start_from_ann = 1;
	}
	if (out->start_ns == 0)
		out->skip = Z_SKIP_UNTIMED;
	else if (dur == 0)
		out->skip = Z_SKIP_UNFINISHED;
	else if (out->start_ns > INT64_MAX - dur)
		return tj_fail(ctx, du, "timestamp + duration is out of range");
	else
		out->end_ns = out->start_ns + dur;
	return 0;
}

/* ---- shared span bookkeeping ------------------------------------------------ */

static void hex_bytes(const char *hex, unsigned char *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int hi = hex[2 * i], lo = hex[2 * i + 1];
		hi = hi <= '9' ? hi - '0' : hi - 'a' + 10;
		lo = lo <= '9' ? lo - '0' : lo - 'a' + 10;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
}

static int entry_cmp(const void *a, const void *b)
{
	const ZEntry *x = a, *y = b;
	int c = memcmp(x->trace, y->trace, 16);
	return c ? c : memcmp(x->id, y->id, 8);
}

static void entry_add(Z *z, const ZSpan *s, unsigned char role)
{
	if (z->ne == z->cape) {
		z->cape = z->cape ? z->cape * 2 : 256;
		z->e = xrealloc(z->e, z->cape * sizeof *z->e);
	}
	ZEntry *e = &z->e[z->ne++];
	hex_bytes(s->trace_id, e->trace, 16);
	hex_bytes(s->span_id, e->id, 8);
	e->svc = svc_hash(s->service);
	e->role = role;
}

typedef struct ZInfo {
	int client, shared, server;
	uint64_t client_svc, shared_svc, server_svc;
} ZInfo;

static void info_of(const Z *z, const char *trace_id, const char *span_id, ZInfo *in)
{
	memset(in, 0, sizeof *in);
	ZEntry key;
	hex_bytes(trace_id, key.trace, 16);
	hex_bytes(span_id, key.id, 8);
	size_t lo = 0, hi = z->ne;
	while (lo < hi) {  /* first entry >= key */
		size_t mid = lo + (hi - lo) / 2;
		if (entry_cmp(&z->e[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < z->ne && entry_cmp(&z->e[i], &key) == 0; i++) {
		const ZEntry *e = &z->e[i];
		if ((e->role & ZR_CLIENT) && !in->client) {
			in->client = 1;
			in->client_svc = e->svc;
		}
		if ((e->role & ZR_SHARED) && !in->shared) {
			in->shared = 1;
			in->shared_svc = e->svc;
		}
		if ((e->role & ZR_SERVER) && !in->server) {
			in->server = 1;
			in->server_svc = e->svc;
		}
	}
}

/* Is there a server half under (trace, id), and in which service? */
static int server_half_of(const ZInfo *in, uint64_t *svc)
{
	if (in->shared) {
		*svc = in->shared_svc;
		return 1;
	}
	if (in->server && in->client) {
		*svc = in->server_svc;
		return 1;
	}
	return 0;
}

/* ---- writing --------------------------------------------------------------- */

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

/* A queue figure (a number, or a string holding one): scale 0 = integer
 * ns, scale 6 = ms. */
static int queue_value(ImportCtx *ctx, const TjNode *v, const char *what, int scale, int64_t *out)
{
	int ok = (v->type == TJ_NUMBER || v->type == TJ_STRING) && v->len > 0
	         && tj_decimal(v->text, v->len, scale, out) == 0;
	if (ok && scale == 0)
		ok = strpbrk(v->text, ".eE") == NULL;
	if (!ok)
		return tj_fail(ctx, v, "%s must be %s", what,
		               scale == 0 ? "an integer (ns)" : "a number (ms)");
	return 0;
}

/* Splits an annotation value into an event name and attributes. *tree is
 * set when attributes were parsed (free it with tj_reader_free). */
static void annotation_split(const char *v, size_t n, const char **name, size_t *nlen,
                             const TjNode **attrs, TjReader **tree, Buf *scratch)
{
	*name = v;
	*nlen = n;
	*attrs = NULL;
	*tree = NULL;
	if (n > 2 && v[0] == '"') {
		/* "name":{...} -> parse {"name":{...}} */
		buf_reset(scratch);
		buf_addc(scratch, '{');
		buf_add(scratch, v, n);
		buf_addc(scratch, '}');
		TjReader *r;
		if (tj_parse_text(scratch->p, scratch->len, &r) == 0) {
			const TjNode *root = tj_root(r);
			if (root->type == TJ_OBJECT && root->n == 1 && root->child->type == TJ_OBJECT) {
				*name = root->child->key;
				*nlen = strlen(root->child->key);
				*attrs = root->child;
				*tree = r;
				return;
			}
			tj_reader_free(r);
		}
		return;
	}
	const char *bar = NULL;
	for (size_t i = 0; i + 1 < n; i++)
		if (v[i] == '|' && v[i + 1] == '{') {
			bar = v + i;
			break;
		}
	if (bar == NULL)
		return;
	/* name|{json}|dropped: the JSON ends before the last '|' when digits follow */
	size_t end = n;
	for (size_t i = n; i-- > (size_t)(bar - v) + 1;)
		if (v[i] == '|') {
			size_t k = i + 1;
			while (k < n && v[k] >= '0' && v[k] <= '9')
				k++;
			if (k == n && k > i + 1)
				end = i;
			break;
		}
	const char *js = bar + 1;
	TjReader *r;
	if (tj_parse_text(js, (size_t)(v + end - js), &r) == 0) {
		if (tj_root(r)->type == TJ_OBJECT) {
			*nlen = (size_t)(bar - v);
			*attrs = tj_root(r);
			*tree = r;
			return;
		}
		tj_reader_free(r);
	}
}

/* The text of a scalar tag value (strings: contents; else its JSON). */
static const char *scalar_text(const TjNode *v, Buf *scratch)
{
	if (v == NULL)
		return NULL;
	if (v->type == TJ_STRING || v->type == TJ_NUMBER)
		return v->text;
	buf_reset(scratch);
	tj_json(scratch, v);
	return buf_str(scratch);
}

static int span_write(Z *z, const ZSpan *s)
{
	ImportCtx *ctx = z->ctx;
	StoreSpan sp = {0};
	int rc = 0;
	memcpy(sp.trace_id, s->trace_id, sizeof sp.trace_id);
	memcpy(sp.span_id, s->span_id, sizeof sp.span_id);
	memcpy(sp.parent_id, s->parent_id, sizeof sp.parent_id);

	/* identity: the shared server half moves to its derived id */
	ZInfo in;
	info_of(z, s->trace_id, s->span_id, &in);
	int server_half = s->shared || (s->kind == SPAN_KIND_SERVER && in.client);
	if (server_half) {
		tj_shared_server_id(s->trace_id, s->span_id, sp.span_id);
		memcpy(sp.parent_id, s->span_id, sizeof sp.parent_id);
	} else if (s->parent_id[0]) {
		ZInfo pin;
		uint64_t server_svc;
		info_of(z, s->trace_id, s->parent_id, &pin);
		if (server_half_of(&pin, &server_svc)) {
			uint64_t me = svc_hash(s->service);
			int to_server = 1;
			if (me && me != server_svc && pin.client && me == pin.client_svc)
				to_server = 0;
			if (to_server)
				tj_shared_server_id(s->trace_id, s->parent_id, sp.parent_id);
		}
	}

	/* attributes: remote endpoint first so that a tag of the same name wins */
	tj_attrs_reset(&z->attrs);
	if (s->remote && s->remote->type == TJ_OBJECT) {
		const TjNode *rs, *r4, *r6, *rp;
		tj_member(ctx, s->remote, "serviceName", &rs);
		tj_member(ctx, s->remote, "ipv4", &r4);
		tj_member(ctx, s->remote, "ipv6", &r6);
		tj_member(ctx, s->remote, "port", &rp);
		if (rs && rs->type == TJ_STRING)
			tj_attrs_add_str(&z->attrs, "peer.service", rs->text, rs->len);
		if (r6 && r6->type == TJ_STRING)
			tj_attrs_add_str(&z->attrs, "network.peer.address", r6->text, r6->len);
		if (r4 && r4->type == TJ_STRING)
			tj_attrs_add_str(&z->attrs, "network.peer.address", r4->text, r4->len);
		if (rp && rp->type == TJ_NUMBER)
			tj_attrs_add_json(&z->attrs, "network.peer.port", 17, rp->text, rp->len);
	}
	const TjNode *t_class = NULL, *t_host = NULL, *t_hostname = NULL, *t_err = NULL,
	             *t_sc = NULL, *t_sd = NULL, *t_qns = NULL, *t_qms = NULL, *t_scope = NULL,
	             *t_scope_v = NULL, *t_lib = NULL, *t_lib_v = NULL;
	for (const TjNode *t = s->tags && s->tags->type == TJ_OBJECT ? s->tags->child : NULL; t;
	     t = t->next) {
		buf_reset(&z->tmp);
		tj_json(&z->tmp, t);
		tj_attrs_add_json(&z->attrs, t->key, strlen(t->key), z->tmp.p, z->tmp.len);
		const char *k = t->key;
		if (strcmp(k, ctx->class_key) == 0)
			t_class = t;
		if (strcmp(k, "host.name") == 0)
			t_host = t;
		else if (strcmp(k, "hostname") == 0)
			t_hostname = t;
		else if (strcmp(k, "error") == 0)
			t_err = t;
		else if (strcmp(k, "otel.status_code") == 0)
			t_sc = t;
		else if (strcmp(k, "otel.status_description") == 0)
			t_sd = t;
		else if (strcmp(k, "queue.wait_ns") == 0)
			t_qns = t;
		else if (strcmp(k, "queue.wait_ms") == 0)
			t_qms = t;
		else if (strcmp(k, "otel.scope.name") == 0)
			t_scope = t;
		else if (strcmp(k, "otel.scope.version") == 0)
			t_scope_v = t;
		else if (strcmp(k, "otel.library.name") == 0)
			t_lib = t;
		else if (strcmp(k, "otel.library.version") == 0)
			t_lib_v = t;
	}
	if (s->debug)
		tj_attrs_add_json(&z->attrs, "zipkin.debug", 12, "true", 4);
	if (server_half)
		tj_attrs_add_str(&z->attrs, "tailtriage.shared_span_id", s->span_id, 16);
	if (s->tid_opaque)
		tj_attrs_add_str(&z->attrs, "tailtriage.original_trace_id", s->tid->text, s->tid->len);
	if (s->id_opaque)
		tj_attrs_add_str(&z->attrs, "tailtriage.original_span_id", s->id->text, s->id->len);
	if (server_half ? s->id_opaque : s->pid_opaque) {
		/* a server half's parent is the client, named by the shared id */
		const TjNode *po = server_half ? s->id : s->pid;
		tj_attrs_add_str(&z->attrs, "tailtriage.original_parent_id", po->text, po->len);
	}
	buf_reset(&z->attrs_json);
	tj_attrs_write(&z->attrs, &z->attrs_json);
	tj_attrs_names(&z->attrs, &z->peer, &z->db, &z->peer_s, &z->db_s);
	buf_reset(&z->route);
	{
		const char *rn = s->name ? s->name : "";
		z->route_rule = tj_attrs_route(&z->attrs, rn, strlen(rn), &z->route);
	}

	Buf classbuf, hostbuf;
	buf_init(&classbuf);
	buf_init(&hostbuf);
	sp.wclass = scalar_text(t_class, &classbuf);
	sp.host = scalar_text(t_host ? t_host : t_hostname, &hostbuf);

	if (t_sc && t_sc->type == TJ_STRING && strcasecmp(t_sc->text, "ERROR") == 0)
		sp.status_code = 2;
	else if (t_sc && t_sc->type == TJ_STRING && strcasecmp(t_sc->text, "OK") == 0)
		sp.status_code = 1;
	if (t_err && !(t_err->type == TJ_BOOL && !t_err->boolean)
	    && !(t_err->type == TJ_STRING && strcasecmp(t_err->text, "false") == 0)) {
		sp.status_code = 2;
		if (t_err->type == TJ_STRING && t_err->len && strcasecmp(t_err->text, "true") != 0)
			sp.status_msg = t_err->text;
	}
	if (t_sd && t_sd->type == TJ_STRING)
		sp.status_msg = t_sd->text;

	if (t_scope == NULL) {
		t_scope = t_lib;
		t_scope_v = t_lib_v;
	}
	if (t_scope && t_scope->type == TJ_STRING
	    && (rc = store_scope_intern(ctx->st, t_scope->text,
	                                t_scope_v && t_scope_v->type == TJ_STRING ? t_scope_v->text
	                                                                          : NULL,
	                                "{}", &sp.scope_id, ctx->err)))
		goto out;

	int64_t q;
	if (t_qns && ((rc = queue_value(ctx, t_qns, "queue.wait_ns", 0, &q))
	              || (rc = add_queue(ctx, t_qns, &sp.queue_ns, &sp.has_queue, q))))
		goto out;
	if (t_qms && ((rc = queue_value(ctx, t_qms, "queue.wait_ms", 6, &q))
	              || (rc = add_queue(ctx, t_qms, &sp.queue_ns, &sp.has_queue, q))))
		goto out;

	/* annotations -> events */
	buf_reset(&z->events_json);
	int nev = 0;
	for (const TjNode *a = s->annotations && s->annotations->type == TJ_ARRAY
	                           ? s->annotations->child : NULL;
	     a; a = a->next) {
		const TjNode *ats, *av;
		tj_member(ctx, a, "timestamp", &ats);
		tj_member(ctx, a, "value", &av);
		int64_t t_ns;
		tj_micros(ctx, ats, "annotation timestamp", &t_ns);  /* checked in decode */
		const char *name;
		size_t nlen;
		const TjNode *attrs;
		TjReader *tree;
		annotation_split(av->text, av->len, &name, &nlen, &attrs, &tree, &z->tmp);
		buf_adds(&z->events_json, nev++ ? "," : "[");
		buf_adds(&z->events_json, "{\"name\":");
		buf_add_json_str(&z->events_json, name, nlen);
		buf_printf(&z->events_json, ",\"time_ns\":%lld,\"attrs\":", (long long)t_ns);
		tj_attrs_reset(&z->attrs);
		for (const TjNode *m = attrs ? attrs->child : NULL; m; m = m->next) {
			buf_reset(&z->tmp);
			tj_json(&z->tmp, m);
			tj_attrs_add_json(&z->attrs, m->key, strlen(m->key), z->tmp.p, z->tmp.len);
		}
		tj_attrs_write(&z->attrs, &z->events_json);
		buf_addc(&z->events_json, '}');
		if (nlen == 10 && memcmp(name, "queue.wait", 10) == 0 && attrs) {
			const TjNode *dns = NULL, *dms = NULL;
			for (const TjNode *m = attrs->child; m; m = m->next) {
				if (strcmp(m->key, "duration_ns") == 0)
					dns = m;
				else if (strcmp(m->key, "duration_ms") == 0)
					dms = m;
			}
			/* positions inside an annotation's text are not the file's:
			 * report at the annotation */
			const TjNode *at = av;
			rc = 0;
			if (dns && (queue_value(ctx, dns, "queue.wait duration_ns", 0, &q)
			            || add_queue(ctx, at, &sp.queue_ns, &sp.has_queue, q)))
				rc = tj_fail(ctx, at, "queue.wait annotation: duration_ns must be a "
				             "non-negative integer (ns)");
			if (!rc && dms && (queue_value(ctx, dms, "queue.wait duration_ms", 6, &q)
			                   || add_queue(ctx, at, &sp.queue_ns, &sp.has_queue, q)))
				rc = tj_fail(ctx, at, "queue.wait annotation: duration_ms must be a "
				             "non-negative number (ms)");
		}
		tj_reader_free(tree);
		if (rc)
			goto out;
	}
	if (nev)
		buf_addc(&z->events_json, ']');

	/* resource: service, host, local address */
	if (s->service || sp.host || (s->local && s->local->type == TJ_OBJECT && s->local->n)) {
		tj_attrs_reset(&z->attrs);
		if (s->service)
			tj_attrs_add_str(&z->attrs, "service.name", s->service, strlen(s->service));
		if (sp.host)
			tj_attrs_add_str(&z->attrs, "host.name", sp.host, strlen(sp.host));
		if (s->local && s->local->type == TJ_OBJECT) {
			const TjNode *l4, *l6, *lp;
			tj_member(ctx, s->local, "ipv4", &l4);
			tj_member(ctx, s->local, "ipv6", &l6);
			tj_member(ctx, s->local, "port", &lp);
			if (l6 && l6->type == TJ_STRING)
				tj_attrs_add_str(&z->attrs, "net.host.ip", l6->text, l6->len);
			if (l4 && l4->type == TJ_STRING)
				tj_attrs_add_str(&z->attrs, "net.host.ip", l4->text, l4->len);
			if (lp && lp->type == TJ_NUMBER)
				tj_attrs_add_json(&z->attrs, "net.host.port", 13, lp->text, lp->len);
		}
		buf_reset(&z->res_json);
		tj_attrs_write(&z->attrs, &z->res_json);
		if (z->last_res_id && strcmp(buf_str(&z->last_res), buf_str(&z->res_json)) == 0) {
			sp.resource_id = z->last_res_id;
		} else {
			if ((rc = store_resource_intern(ctx->st, s->service, sp.host, buf_str(&z->res_json),
			                                &sp.resource_id, ctx->err)))
				goto out;
			buf_reset(&z->last_res);
			buf_adds(&z->last_res, buf_str(&z->res_json));
			z->last_res_id = sp.resource_id;
		}
	}

	sp.service = s->service;
	sp.name = s->name ? s->name : "";
	sp.kind = s->kind;
	sp.start_ns = s->start_ns;
	sp.end_ns = s->end_ns;
	sp.attrs_json = buf_str(&z->attrs_json);
	sp.attr_peer = z->peer_s;
	sp.attr_db_system = z->db_s;
	if (route_wanted(sp.kind, sp.parent_id[0] != '\0') && z->route_rule >= 0) {
		sp.has_route = 1;
		sp.route = buf_str(&z->route);
		sp.route_rule = z->route_rule;
	}
	sp.events_json = nev ? buf_str(&z->events_json) : NULL;
	int added = 0;
	if ((rc = store_span_add(ctx->st, ctx->source_id, &sp, &added, ctx->err)))
		goto out;
	if (added)
		ctx->counts->spans_added++;
	else
		ctx->counts->spans_duplicate++;
out:
	buf_fini(&classbuf);
	buf_fini(&hostbuf);
	return rc;
}

static int on_span(void *ud, const TjNode *rec, int64_t index)
{
	(void)index;
	Z *z = ud;
	ZSpan s;
	int rc = decode_span(z, rec, &s);
	if (rc)
		return rc;
	if (s.skip) {
		/* as if absent: no role either, so no span takes it for a half */
		ImportSkips *k = z->ctx->skips;
		if (z->pass == 2 && s.skip == Z_SKIP_UNFINISHED)
			import_skip_span(z->ctx, &k->unfinished, k->unfinished_at, sizeof k->unfinished_at,
			                 rec->line, rec->col);
		else if (z->pass == 2)
			import_skip_span(z->ctx, &k->untimed, k->untimed_at, sizeof k->untimed_at, rec->line,
			                 rec->col);
		return 0;
	}
	if (z->pass == 2) {
		z->ctx->skips->start_from_event += s.start_from_ann;
		return span_write(z, &s);
	}
	unsigned char role = 0;
	if (s.shared)
		role |= ZR_SHARED;
	else if (s.kind == SPAN_KIND_CLIENT)
		role |= ZR_CLIENT;
	else if (s.kind == SPAN_KIND_SERVER)
		role |= ZR_SERVER;
	if (role)
		entry_add(z, &s, role);
	return 0;
}

static int one_pass(Z *z, FILE *f)
{
	ImportCtx *ctx = z->ctx;
	TjReadOptions o = {.stream_key = NULL, .on_record = on_span, .ud = z};
	TjReader *r = NULL;
	int rc = tj_read(ctx, f, &o, &r);
	if (rc)
		return rc;
	const TjNode *root = tj_root(r);
	if (root->type != TJ_ARRAY)
		rc = tj_fail(ctx, root, "expected a JSON array of Zipkin v2 spans, found %s",
		             tj_type_name(root));
	tj_reader_free(r);
	return rc;
}

int zipkin_json_run(ImportCtx *ctx, FILE *f)
{
	Z z;
	memset(&z, 0, sizeof z);
	z.ctx = ctx;
	tj_attrs_init(&z.attrs);
	tj_idmap_init(&z.ids);
	buf_init(&z.attrs_json);
	buf_init(&z.peer);
	buf_init(&z.route);
	buf_init(&z.db);
	buf_init(&z.events_json);
	buf_init(&z.res_json);
	buf_init(&z.last_res);
	buf_init(&z.tmp);
	z.pass = 1;
	int rc = one_pass(&z, f);
	if (rc == 0) {
		if (z.ne > 1)
			qsort(z.e, z.ne, sizeof *z.e, entry_cmp);
		if (fseek(f, 0, SEEK_SET) != 0)
			rc = err_set(ctx->err, TT_EIO, "%s: Zipkin import reads its input twice and "
			             "cannot rewind it", ctx->name);
	}
	if (rc == 0) {
		z.pass = 2;
		rc = one_pass(&z, f);
	}
	free(z.e);
	tj_idmap_fini(&z.ids);
	tj_attrs_fini(&z.attrs);
	buf_fini(&z.attrs_json);
	buf_fini(&z.peer);
	buf_fini(&z.route);
	buf_fini(&z.db);
	buf_fini(&z.events_json);
	buf_fini(&z.res_json);
	buf_fini(&z.last_res);
	buf_fini(&z.tmp);
	return rc;
}

int zipkin_json_sniff(const char *head, size_t len)
{
	size_t at = 0;
	if (tj_first_char(head, len, &at) != '[')
		return 0;
	size_t i = at + 1;
	int c2 = tj_first_char(head + i, len - i, NULL);
	if (c2 != '{' && c2 != '[')
		return 0;
	if (!tj_contains(head, len, "\"traceId\"") || !tj_contains(head, len, "\"id\""))
		return 0;
	if (tj_contains(head, len, "\"localEndpoint\"") || tj_contains(head, len, "\"timestamp\""))
		return 90;
	return 80;
}
