/*
 * model_infer.c - draft an endpoint model from the data, and compare a
 * given model with the data (model_infer.h).
 *
 * Everything here reads: the aggregate DAG (analysis without a model) and
 * the request set of the evidence for how often a call is cut short, both
 * from one pass over the spans (evidence_analysis_run), the root spans' attributes for a class attribute,
 * and the metric series for pools. The reasons written into the model are
 * plain sentences with the counts behind them, so an engineer can judge
 * each field before trusting it.
 *
 * Metric names are compared in a normal form: lower case, '_' spelled '.'
 * (the Prometheus exposition of an OpenTelemetry name), a trailing unit
 * word (.seconds, .milliseconds, .total) dropped. The names written into
 * the model are the stored ones, so the evidence finds them as they are.
 */
#include "model_infer.h"

#include <ctype.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "buf.h"
#include "endpoints.h"
#include "evidence.h"
#include "evidence_hist.h"

#define MIN_REQUESTS 20       /* fewer: mandatory stays unknown */
#define ABSENT_MAX 0.01       /* a branch absent more often is optional */
#define CUT_MAX 0.01          /* a branch cut short more often is optional */
#define CLASS_MAX_VALUES 12   /* a class attribute has at most this many values */
#define MAX_TOKENS 16

/* ---- tokens -------------------------------------------------------------- */

static const char *const GENERIC[] = {
	"pool", "pools", "grpc", "http", "https", "rpc", "client", "clients", "conn", "conns",
	"connection", "connections", "api", "svc", "service", "server", "main", "default",
	"primary", "internal", "upstream", "backend", NULL,
};

static const char *const DBWORDS[] = {
	"pg", "postgres", "postgresql", "psql", "mysql", "mariadb", "db", "database", "sql",
	"sqlite", "redis", "mongo", "mongodb", "oracle", "mssql", "cassandra", "memcached",
	"dynamo", "dynamodb", "jdbc", "hikari", NULL,
};

static int in_list(const char *const *list, const char *w)
{
	for (int i = 0; list[i]; i++)
		if (strcmp(list[i], w) == 0)
			return 1;
	return 0;
}

/* Splits s on - _ . space (and '/', ':') into lower-case tokens. */
static int tokenize(const char *s, char tok[][48], int max)
{
	int n = 0;
	size_t j = 0;
	for (const char *p = s;; p++) {
		int sep = *p == '\0' || *p == '-' || *p == '_' || *p == '.' || *p == ' ' || *p == '/' ||
		          *p == ':';
		if (sep) {
			if (j > 0 && n < max) {
				tok[n][j] = '\0';
				n++;
			}
			j = 0;
			if (*p == '\0')
				break;
			continue;
		}
		if (n < max && j + 1 < sizeof tok[0])
			tok[n][j++] = (char)tolower((unsigned char)*p);
	}
	return n;
}

int model_infer_pool_match(const char *pool, const char *service, int *score)
{
	char pt[MAX_TOKENS][48], st[MAX_TOKENS][48];
	int np = tokenize(pool ? pool : "", pt, MAX_TOKENS);
	int ns = tokenize(service ? service : "", st, MAX_TOKENS);
	int hits = 0, dbword = 0;
	/* the same name, however spelled ("Pricing_Pool" / "pricing-pool"),
	 * is the strongest match, even when it is only a generic word */
	int same = np > 0 && np == ns;
	for (int i = 0; same && i < np; i++)
		same = strcmp(pt[i], st[i]) == 0;
	if (same) {
		if (score)
			*score = ns + 1;
		return 1;
	}
	for (int i = 0; i < np; i++)
		dbword |= in_list(DBWORDS, pt[i]);
	for (int k = 0; k < ns; k++) {
		if (in_list(GENERIC, st[k]) || in_list(DBWORDS, st[k]))
			continue;
		for (int i = 0; i < np; i++)
			if (strcmp(pt[i], st[k]) == 0) {
				hits++;
				break;
			}
	}
	if (score)
		*score = hits;
	if (hits == 0)
		return 0;
	return dbword ? 2 : 1;
}

/* ---- small helpers ---------------------------------------------------------- */

static char *dupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *dupf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return xstrdup("");
	char *s = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

static int hex4(const char *p, unsigned *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
		        : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0)
			return 0;
		*v = *v * 16 + (unsigned)d;
	}
	return 1;
}

/* Decodes the JSON string body at p (after the opening quote) into out
 * (at most sz bytes, terminated; \uXXXX as UTF-8, a lone surrogate as
 * U+FFFD). Returns the position after the closing quote, or NULL. */
static const char *json_unescape(const char *p, char *out, size_t sz)
{
	size_t j = 0;
	while (*p && *p != '"') {
		char buf[4];
		size_t n = 1;
		buf[0] = *p++;
		if (buf[0] == '\\') {
			char e = *p ? *p++ : '\0';
			unsigned cp;
			switch (e) {
			case 'n': buf[0] = '\n'; break;
			case 't': buf[0] = '\t'; break;
			case 'r': buf[0] = '\r'; break;
			case 'b': buf[0] = '\b'; break;
			case 'f': buf[0] = '\f'; break;
			case 'u':
				if (!hex4(p, &cp))
					return NULL;
				p += 4;
				if (cp >= 0xD800 && cp < 0xDC00 && p[0] == '\\' && p[1] == 'u') {
					unsigned lo;
					if (hex4(p + 2, &lo) && lo >= 0xDC00 && lo < 0xE000) {
						cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
						p += 6;
					}
				}
				if (cp >= 0xD800 && cp < 0xE000)
					cp = 0xFFFD;
				if (cp < 0x80) {
					buf[0] = (char)cp;
				} else if (cp < 0x800) {
					buf[0] = (char)(0xC0 | (cp >> 6));
					buf[1] = (char)(0x80 | (cp & 0x3F));
					n = 2;
				} else if (cp < 0x10000) {
					buf[0] = (char)(0xE0 | (cp >> 12));
					buf[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
					buf[2] = (char)(0x80 | (cp & 0x3F));
					n = 3;
				} else {
					buf[0] = (char)(0xF0 | (cp >> 18));
					buf[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
					buf[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
					buf[3] = (char)(0x80 | (cp & 0x3F));
					n = 4;
				}
				break;
			case '\0': return NULL;
			default: buf[0] = e; break; /* \" \\ \/ */
			}
		}
		if (j + n < sz) {
			memcpy(out + j, buf, n);
			j += n;
		}
	}
	if (sz)
		out[j < sz ? j : sz - 1] = '\0';
	return *p == '"' ? p + 1 : NULL;
}

/* Value of key in a canonical label object ({"k":"v",...}); 0 when absent.
 * The key is matched as written (label keys here are plain names). */
static int label_get(const char *json, const char *key, char *out, size_t sz)
{
	if (json == NULL || key == NULL)
		return 0;
	char pat[200];
	snprintf(pat, sizeof pat, "\"%s\":\"", key);
	const char *p = strstr(json, pat);
	if (p == NULL)
		return 0;
	return json_unescape(p + strlen(pat), out, sz) != NULL;
}

static void underscore(const char *in, char *out, size_t sz)
{
	snprintf(out, sz, "%s", in);
	for (char *p = out; *p; p++)
		if (*p == '.')
			*p = '_';
}

/* Finds key (or its underscore spelling) in labels; copies the spelling
 * found into used_key. */
static int label_find(const char *json, const char *key, char *val, size_t vsz, char *used_key,
                      size_t ksz)
{
	if (label_get(json, key, val, vsz)) {
		snprintf(used_key, ksz, "%s", key);
		return 1;
	}
	char u[128];
	underscore(key, u, sizeof u);
	if (strcmp(u, key) != 0 && label_get(json, u, val, vsz)) {
		snprintf(used_key, ksz, "%.127s", u);
		return 1;
	}
	return 0;
}

/* ---- pools from metric series ------------------------------------------------ */

enum { PK_DB, PK_HTTP, PK_EXEC };
enum { ROLE_USED, ROLE_MAX, ROLE_PENDING, ROLE_WAIT, ROLE_N };

typedef struct IPool {
	char name[128];
	int kind;                   /* PK_* */
	char metric[ROLE_N][160];   /* stored family names */
	char label_key[128];        /* as stored; "" for none */
	char service[128];          /* emitting service, "" unknown */
	char peer[128];             /* server.address / peer.service label, "" none */
	double max_val;             /* largest per-series mean of the max metric */
	int has_max;
	int series;
	int guard;                  /* 1: guards calls to node; 0: node's own pool */
	int db;                     /* the node's own database pool */
	char node[128];
	char how[1024];             /* how the node was found */
} IPool;

typedef struct PoolSet {
	IPool *p;
	int n, cap;
	/* the family being scanned */
	int kind, role;
	const char *family;
	int64_t last_series;
	double sum;
	int64_t cnt;
	IPool *cur;
} PoolSet;

static const char *const DB_POOL_KEYS[] = {
	"db.client.connection.pool.name", "db.client.connections.pool.name", "pool.name", "pool",
	NULL,
};
static const char *const HTTP_POOL_KEYS[] = {"server.address", "net.peer.name", NULL};
static const char *const EXEC_KEYS[] = {"executor.name", "pool.name", "executor", NULL};
static const char *const SERVICE_KEYS[] = {"service.name", "service", "job", NULL};
static const char *const PEER_KEYS[] = {"peer.service", "server.address", NULL};

/* Which pool role a family plays, by its normal name; -1 none. */
static int classify(const char *family, const char *type, const char *unit, int *kind)
{
	char n[200];
	ev_metric_norm(family, n, sizeof n);
	static const struct {
		const char *name;
		int kind, role;
	} T[] = {
		{"db.client.connection.count", PK_DB, ROLE_USED},
		{"db.client.connections.usage", PK_DB, ROLE_USED},
		{"db.client.connection.max", PK_DB, ROLE_MAX},
		{"db.client.connections.max", PK_DB, ROLE_MAX},
		{"db.client.connection.pending.requests", PK_DB, ROLE_PENDING},
		{"db.client.connections.pending.requests", PK_DB, ROLE_PENDING},
		{"db.client.connection.wait.time", PK_DB, ROLE_WAIT},
		{"db.client.connections.wait.time", PK_DB, ROLE_WAIT},
		{"http.client.open.connections", PK_HTTP, ROLE_USED},
		/* HikariCP's Micrometer names, common in Prometheus */
		{"hikaricp.connections.active", PK_DB, ROLE_USED},
		{"hikaricp.connections.max", PK_DB, ROLE_MAX},
		{"hikaricp.connections.pending", PK_DB, ROLE_PENDING},
		{"executor.active", PK_EXEC, ROLE_USED},
		{"executor.slots", PK_EXEC, ROLE_MAX},
		{"executor.max", PK_EXEC, ROLE_MAX},
		{"executor.pending", PK_EXEC, ROLE_PENDING},
		{"executor.queued", PK_EXEC, ROLE_PENDING},
		{"executor.queue.age", PK_EXEC, ROLE_WAIT},
	};
	for (size_t i = 0; i < sizeof T / sizeof T[0]; i++)
		if (strcmp(n, T[i].name) == 0) {
			*kind = T[i].kind;
			return T[i].role;
		}
	/* a queue-age or queue-wait histogram in a time unit, by name and unit */
	int timed = strcmp(unit, "s") == 0 || strcmp(unit, "ms") == 0 ||
	            strcmp(unit, "seconds") == 0 || strcmp(unit, "milliseconds") == 0 ||
	            strstr(family, "seconds") || strstr(family, "milliseconds");
	if (strstr(type, "histogram") && timed && strstr(n, "queue") &&
	    (strstr(n, "age") || strstr(n, "wait"))) {
		*kind = PK_EXEC;
		return ROLE_WAIT;
	}
	return -1;
}

static IPool *pool_get(PoolSet *ps, int kind, const char *name)
{
	for (int i = 0; i < ps->n; i++)
		if (ps->p[i].kind == kind && strcmp(ps->p[i].name, name) == 0)
			return &ps->p[i];
	if (ps->n == ps->cap) {
		ps->cap = ps->cap ? 2 * ps->cap : 8;
		ps->p = xrealloc(ps->p, (size_t)ps->cap * sizeof *ps->p);
	}
	IPool *p = &ps->p[ps->n++];
	memset(p, 0, sizeof *p);
	snprintf(p->name, sizeof p->name, "%s", name);
	p->kind = kind;
	return p;
}

static void close_series(PoolSet *ps)
{
	if (ps->cur && ps->role == ROLE_MAX && ps->cnt > 0) {
		double v = ps->sum / (double)ps->cnt;
		if (!ps->cur->has_max || v > ps->cur->max_val)
			ps->cur->max_val = v;
		ps->cur->has_max = 1;
	}
	ps->cur = NULL;
	ps->sum = 0;
	ps->cnt = 0;
}

static int on_pool_point(void *ctx, const StoreMetricRow *r)
{
	PoolSet *ps = ctx;
	if (r->series_id != ps->last_series) {
		close_series(ps);
		ps->last_series = r->series_id;
		char name[128] = "", key[128] = "", val[128];
		const char *const *keys = ps->kind == PK_DB     ? DB_POOL_KEYS
		                          : ps->kind == PK_HTTP ? HTTP_POOL_KEYS
		                                                : EXEC_KEYS;
		for (int i = 0; keys[i] && !name[0]; i++)
			if (label_find(r->labels_json, keys[i], val, sizeof val, key, sizeof key) && val[0])
				snprintf(name, sizeof name, "%s", val);
		char svc[128] = "";
		if (r->service && r->service[0])
			snprintf(svc, sizeof svc, "%s", r->service);
		for (int i = 0; SERVICE_KEYS[i] && !svc[0]; i++) {
			char k2[128];
			label_find(r->labels_json, SERVICE_KEYS[i], svc, sizeof svc, k2, sizeof k2);
		}
		if (!name[0]) {
			if (ps->kind != PK_EXEC)
				return 0; /* a client pool metric without a pool name */
			snprintf(name, sizeof name, "%.100s%sexecutor", svc, svc[0] ? "-" : "");
			key[0] = '\0';
		}
		IPool *p = pool_get(ps, ps->kind, name);
		if (!p->metric[ps->role][0])
			snprintf(p->metric[ps->role], sizeof p->metric[0], "%s", ps->family);
		if (!p->label_key[0] && key[0])
			snprintf(p->label_key, sizeof p->label_key, "%s", key);
		if (!p->service[0] && svc[0])
			snprintf(p->service, sizeof p->service, "%s", svc);
		for (int i = 0; PEER_KEYS[i] && !p->peer[0]; i++) {
			char k2[128];
			if (ps->kind == PK_HTTP && strcmp(PEER_KEYS[i], "server.address") == 0)
				snprintf(p->peer, sizeof p->peer, "%s", name);
			else
				label_find(r->labels_json, PEER_KEYS[i], p->peer, sizeof p->peer, k2, sizeof k2);
		}
		if (ps->role == ROLE_USED)
			p->series++;
		ps->cur = p;
	}
	if (ps->cur && r->has_value && !isnan(r->value)) {
		ps->sum += r->value;
		ps->cnt++;
	}
	return 0;
}

typedef struct FamList {
	char **name, **type, **unit;
	int n;
} FamList;

static int on_family(void *ctx, const StoreMetricFamilyRow *r)
{
	FamList *f = ctx;
	if (r->points == 0)
		return 0;
	f->name = xrealloc(f->name, (size_t)(f->n + 1) * sizeof *f->name);
	f->type = xrealloc(f->type, (size_t)(f->n + 1) * sizeof *f->type);
	f->unit = xrealloc(f->unit, (size_t)(f->n + 1) * sizeof *f->unit);
	f->name[f->n] = xstrdup(r->name);
	f->type[f->n] = xstrdup(r->type ? r->type : "");
	f->unit[f->n] = xstrdup(r->unit ? r->unit : "");
	f->n++;
	return 0;
}

static void famlist_free(FamList *f)
{
	for (int i = 0; i < f->n; i++) {
		free(f->name[i]);
		free(f->type[i]);
		free(f->unit[i]);
	}
	free(f->name);
	free(f->type);
	free(f->unit);
}

static int scan_pools(Store *st, int64_t from, int64_t to, PoolSet *ps, Err *err)
{
	FamList fl = {0};
	int rc = store_metric_families_scan(st, on_family, &fl, err);
	for (int i = 0; rc == 0 && i < fl.n; i++) {
		int kind;
		int role = classify(fl.name[i], fl.type[i], fl.unit[i], &kind);
		if (role < 0)
			continue;
		ps->kind = kind;
		ps->role = role;
		ps->family = fl.name[i];
		ps->last_series = -1;
		ps->cur = NULL;
		StoreMetricQuery q = {.family = fl.name[i], .from_ns = from, .to_ns = to};
		rc = store_metric_points_scan(st, &q, on_pool_point, ps, err);
		close_series(ps);
	}
	famlist_free(&fl);
	return rc;
}

/* ---- root-span attributes: a class attribute -------------------------------- */

typedef struct AttrVals {
	char key[96];
	char *vals[CLASS_MAX_VALUES + 1];
	int64_t counts[CLASS_MAX_VALUES + 1];
	int n_vals;                 /* > CLASS_MAX_VALUES: too many */
	int64_t present;
} AttrVals;

typedef struct AttrList {
	AttrVals *a;
	int n;
} AttrList;

typedef struct RootAttrs {
	AttrList span, res;         /* root span attributes, its resource's */
	int64_t roots;
} RootAttrs;

/* Reads a JSON string at *p into out (decoded, at most sz bytes); advances
 * *p past it. 0 on a malformed string. */
static int json_string(const char **p, char *out, size_t sz)
{
	if (**p != '"')
		return 0;
	const char *e = json_unescape(*p + 1, out, sz);
	if (e == NULL)
		return 0;
	*p = e;
	return 1;
}

/* Skips a JSON value that is not a string. */
static void json_skip(const char **p)
{
	const char *s = *p;
	int depth = 0;
	char tmp[8];
	while (*s) {
		if (*s == '"') {
			if (!json_string(&s, tmp, sizeof tmp))
				break;
			continue;
		}
		if (*s == '[' || *s == '{')
			depth++;
		else if (*s == ']' || *s == '}') {
			if (depth == 0)
				break;
			depth--;
		} else if (*s == ',' && depth == 0)
			break;
		s++;
	}
	*p = s;
}

static void attr_add(AttrList *ra, const char *k, const char *v)
{
	AttrVals *a = NULL;
	for (int i = 0; i < ra->n; i++)
		if (strcmp(ra->a[i].key, k) == 0)
			a = &ra->a[i];
	if (a == NULL) {
		size_t klen = strlen(k);
		if (ra->n >= 64 || klen >= sizeof a->key)
			return;
		ra->a = xrealloc(ra->a, (size_t)(ra->n + 1) * sizeof *ra->a);
		a = &ra->a[ra->n++];
		memset(a, 0, sizeof *a);
		memcpy(a->key, k, klen + 1);
	}
	a->present++;
	if (a->n_vals > CLASS_MAX_VALUES)
		return;
	for (int i = 0; i < a->n_vals; i++)
		if (strcmp(a->vals[i], v) == 0) {
			a->counts[i]++;
			return;
		}
	if (a->n_vals == CLASS_MAX_VALUES) {
		a->n_vals++; /* too many values: not a class */
		return;
	}
	a->vals[a->n_vals] = xstrdup(v);
	a->counts[a->n_vals++] = 1;
}

/* Adds the string members of a flat JSON object to l. */
static void attrs_parse(AttrList *l, const char *p)
{
	if (p == NULL || *p != '{')
		return;
	p++;
	char k[128], v[128];
	while (*p) {
		while (*p == ' ' || *p == ',')
			p++;
		if (*p != '"' || !json_string(&p, k, sizeof k))
			break;
		while (*p == ' ')
			p++;
		if (*p != ':')
			break;
		p++;
		while (*p == ' ')
			p++;
		if (*p == '"') {
			if (!json_string(&p, v, sizeof v))
				break;
			attr_add(l, k, v);
		} else {
			json_skip(&p);
		}
	}
}

static int on_root_attrs(void *ctx, const char *span_attrs, const char *res_attrs)
{
	RootAttrs *ra = ctx;
	ra->roots++;
	attrs_parse(&ra->span, span_attrs);
	attrs_parse(&ra->res, res_attrs);
	return 0;
}

static void attr_list_free(AttrList *l)
{
	for (int i = 0; i < l->n; i++)
		for (int j = 0; j < l->a[i].n_vals && j < CLASS_MAX_VALUES; j++)
			free(l->a[i].vals[j]);
	free(l->a);
}

/* Resource attributes that name a process, host or the SDK: they vary
 * between requests with the serving instance, which is placement, not a
 * workload class. */
static int identity_key(const char *k)
{
	static const char *const P[] = {"service.", "host.", "process.", "os.", "telemetry.",
	                                "container.", "k8s.pod.", "k8s.node.", "cloud.resource_id",
	                                "faas.instance", NULL};
	for (int i = 0; P[i]; i++)
		if (strncmp(k, P[i], strlen(P[i])) == 0)
			return 1;
	return 0;
}

/* The best class candidate of l: low cardinality, on (nearly) every
 * request, varying; the fewest values wins. */
static const AttrVals *pick_class(const AttrList *l, int64_t roots, int resource)
{
	const AttrVals *best = NULL;
	for (int i = 0; i < l->n; i++) {
		const AttrVals *v = &l->a[i];
		if (v->n_vals < 2 || v->n_vals > CLASS_MAX_VALUES || v->present * 10 < roots * 9)
			continue;
		int64_t most = 0;
		for (int k = 0; k < v->n_vals; k++)
			if (v->counts[k] > most)
				most = v->counts[k];
		if (most * 100 > v->present * 99)
			continue;
		if (strstr(v->key, "http.") || strstr(v->key, "url") || strstr(v->key, "status"))
			continue; /* protocol details, not a workload class */
		if (resource && identity_key(v->key))
			continue;
		if (best == NULL || v->n_vals < best->n_vals)
			best = v;
	}
	return best;
}


/* ---- the model ------------------------------------------------------------ */

typedef struct RootOps {
	char *svc, *op;
	int64_t top, total;
	int kinds;
} RootOps;

/* Per dependency: requests that call it and requests in which a call to it
 * was cut short. */
typedef struct DepUse {
	int64_t present, cut;
} DepUse;

static void dep_use(const EvRequestSet *s, const char *dep, DepUse *u)
{
	memset(u, 0, sizeof *u);
	int d = -1;
	for (int i = 0; s && i < s->n_deps; i++)
		if (strcmp(s->deps[i], dep) == 0)
			d = i;
	if (d < 0)
		return;
	int64_t last = -1, last_cut = -1;
	for (int64_t k = 0; k < s->n_calls; k++) {
		const EvCall *c = &s->calls[k];
		if (c->dep != d)
			continue;
		if (c->req != last) {
			u->present++;
			last = c->req;
		}
		if ((c->error || c->late) && c->req != last_cut) {
			u->cut++;
			last_cut = c->req;
		}
	}
}

static void decide_mandatory(ModelNode *mn, const char *what, int64_t present, int64_t cut,
                             int64_t requests, int cut_known)
{
	double absent = requests ? 1.0 - (double)present / (double)requests : 0;
	double cutr = present ? (double)cut / (double)present : 0;
	char cutw[160] = "";
	if (cut_known)
		snprintf(cutw, sizeof cutw, ", cut short (error or abandoned) in %lld of them",
		         (long long)cut);
	if (requests < MIN_REQUESTS) {
		mn->mandatory = MODEL_UNKNOWN;
		mn->why = dupf("%s: in %lld of %lld requests%s; too few requests (< %d) to say whether "
		               "it is mandatory; core is never inferred", what, (long long)present,
		               (long long)requests, cutw, MIN_REQUESTS);
		return;
	}
	mn->mandatory = absent <= ABSENT_MAX && cutr <= CUT_MAX;
	mn->why = dupf("%s: in %lld of %lld requests (absent %.1f %%)%s: %s; core is never "
	               "inferred (declare it)", what, (long long)present, (long long)requests,
	               100 * absent, cutw,
	               mn->mandatory ? "always there and complete, so mandatory"
	               : absent > ABSENT_MAX ? "often absent, so optional"
	                                     : "often cut short while the request goes on, so optional");
}

static ModelNode *add_node(Model *m, int *cap)
{
	if (m->n_nodes == *cap) {
		*cap = *cap ? 2 * *cap : 8;
		m->nodes = xrealloc(m->nodes, (size_t)*cap * sizeof *m->nodes);
	}
	ModelNode *n = &m->nodes[m->n_nodes++];
	memset(n, 0, sizeof *n);
	n->mandatory = n->core = MODEL_UNKNOWN;
	return n;
}

static void infer_nodes(Model *m, const Analysis *a, const EvRequestSet *rs)
{
	int cap = 0;
	int64_t requests = a->pop[0].requests;
	for (int i = 1; i < a->n_nodes; i++) {
		const DagNode *d = &a->nodes[i];
		if (d->type != NODE_CALL && d->type != NODE_LOCAL)
			continue;
		const char *to = analysis_call_target(d);
		const char *svc = to ? to : d->service;
		const char *op = to ? NULL : d->operation;
		/* the same service called from several places is one model node */
		int64_t present = d->pop[0].requests;
		ModelNode *dup = NULL;
		for (int k = 0; k < m->n_nodes; k++)
			if (strcmp(m->nodes[k].service, svc) == 0 &&
			    ((op == NULL && m->nodes[k].operation == NULL) ||
			     (op && m->nodes[k].operation && strcmp(op, m->nodes[k].operation) == 0)))
				dup = &m->nodes[k];
		if (dup)
			continue;
		for (int k = i + 1; k < a->n_nodes; k++) {
			const DagNode *o = &a->nodes[k];
			const char *oto = analysis_call_target(o);
			int same = op == NULL ? (oto && strcmp(oto, svc) == 0)
			                      : (strcmp(o->service, svc) == 0 && o->operation &&
			                         strcmp(o->operation, op) == 0 && oto == NULL);
			if (same && o->pop[0].requests > present)
				present = o->pop[0].requests;
		}
		ModelNode *mn = add_node(m, &cap);
		mn->service = xstrdup(svc);
		mn->operation = op ? xstrdup(op) : NULL;
		if (op)
			mn->label = xstrdup(op);
		char what[400];
		if (d->type == NODE_CALL && d->dependency) {
			DepUse u;
			dep_use(rs, svc, &u);
			if (u.present > present)
				present = u.present;
			snprintf(what, sizeof what, "calls from %s to %s (client span '%s' paired with %s's "
			         "server span)", d->service, svc, d->operation, svc);
			decide_mandatory(mn, what, present, u.cut, requests, rs != NULL);
		} else if (d->type == NODE_CALL && d->pop[0].db_calls > 0) {
			snprintf(what, sizeof what, "database call '%s' of %s (a client span with "
			         "db.system.name: a leaf)", d->operation, d->service);
			decide_mandatory(mn, what, present, 0, requests, 0);
		} else if (d->type == NODE_CALL) {
			snprintf(what, sizeof what, "client span '%s' of %s%s%s with no server span (the "
			         "called service does not report traces)", d->operation, d->service,
			         to ? " to " : "", to ? to : "");
			decide_mandatory(mn, what, present, 0, requests, 0);
		} else {
			snprintf(what, sizeof what, "local span '%s' of %s", d->operation, d->service);
			decide_mandatory(mn, what, present, 0, requests, 0);
		}
	}
}

static void infer_classes(Model *m, const Analysis *a, Store *st, int64_t from, int64_t to,
                          Err *err, int *rc)
{
	*rc = 0;
	if (a->n_classes > 0) {
		m->class_key = xstrdup("workload.class");
		m->n_classes = a->n_classes;
		m->classes = xcalloc((size_t)a->n_classes, sizeof *m->classes);
		m->class_mix = xcalloc((size_t)a->n_classes, sizeof *m->class_mix);
		Buf why;
		buf_init(&why);
		int64_t total = 0;
		for (int i = 0; i < a->n_classes; i++)
			total += a->pop[0].class_requests ? a->pop[0].class_requests[i] : 0;
		buf_printf(&why, "the spans carry a workload class (attribute workload.class, or the "
		                 "--class-key given at import): %d values over %lld requests",
		           a->n_classes, (long long)total);
		for (int i = 0; i < a->n_classes; i++) {
			m->classes[i] = xstrdup(a->classes[i]);
			int64_t c = a->pop[0].class_requests ? a->pop[0].class_requests[i] : 0;
			m->class_mix[i] = total ? round(1e4 * (double)c / (double)total) / 1e4 : NAN;
			buf_printf(&why, "%s %s %lld", i ? "," : ";", a->classes[i], (long long)c);
		}
		buf_adds(&why, "; the mix is the share of requests in the analysed range");
		m->why_classes = xstrdup(buf_str(&why));
		buf_fini(&why);
		return;
	}
	if (a->root_service == NULL || a->root_operation == NULL)
		return;
	RootAttrs ra = {.roots = 0};
	*rc = store_root_attrs(st, a->root_service, a->root_operation, from, to, on_root_attrs, &ra,
	                       err);
	const AttrVals *best = *rc ? NULL : pick_class(&ra.span, ra.roots, 0);
	int resource = 0;
	if (*rc == 0 && best == NULL && (best = pick_class(&ra.res, ra.roots, 1)) != NULL)
		resource = 1;
	if (best) {
		m->class_key = xstrdup(best->key);
		m->n_classes = best->n_vals;
		m->classes = xcalloc((size_t)best->n_vals, sizeof *m->classes);
		m->class_mix = xcalloc((size_t)best->n_vals, sizeof *m->class_mix);
		for (int k = 0; k < best->n_vals; k++) {
			m->classes[k] = xstrdup(best->vals[k]);
			m->class_mix[k] = round(1e4 * (double)best->counts[k] / (double)best->present) / 1e4;
		}
		m->why_classes = dupf("no workload.class in the spans; %s attribute '%s' has %d "
		                      "values on %lld of %lld requests and varies between them "
		                      "(re-import with --class-key %s to analyse by it)",
		                      resource ? "the root spans' resource" : "root span", best->key,
		                      best->n_vals, (long long)best->present, (long long)ra.roots,
		                      best->key);
	} else if (*rc == 0) {
		m->why_classes = dupf("no workload.class in the spans and no root span or resource "
		                      "attribute with 2..%d values on most requests that varies "
		                      "between them", CLASS_MAX_VALUES);
	}
	attr_list_free(&ra.span);
	attr_list_free(&ra.res);
}

/* Is svc a service the traces show (a dependency or a span's service)? */
static int known_service(const Analysis *a, const char *svc)
{
	for (int i = 0; i < a->n_nodes; i++)
		if ((a->nodes[i].dependency && strcmp(a->nodes[i].dependency, svc) == 0) ||
		    (a->nodes[i].service && strcmp(a->nodes[i].service, svc) == 0))
			return 1;
	return 0;
}

/* Picks the service a pool belongs to (see model_infer.h). */
static void match_pool(IPool *p, const Analysis *a)
{
	if (p->kind == PK_EXEC) {
		const char *svc = p->service[0] ? p->service : a->root_service;
		snprintf(p->node, sizeof p->node, "%s", svc ? svc : "");
		p->guard = 0;
		snprintf(p->how, sizeof p->how, "executor metrics of %s", svc ? svc : "the endpoint");
		return;
	}
	/* a label that names the peer is the strongest sign */
	if (p->peer[0]) {
		for (int i = 0; i < a->n_nodes; i++) {
			const char *dep = a->nodes[i].dependency;
			if (dep && (strcmp(dep, p->peer) == 0 || model_infer_pool_match(p->peer, dep, NULL))) {
				snprintf(p->node, sizeof p->node, "%s", dep);
				p->guard = 1;
				snprintf(p->how, sizeof p->how, "its series carry the peer label '%s', which "
				         "names the dependency %s", p->peer, dep);
				return;
			}
		}
	}
	/* normalised name tokens against every service the traces show */
	const char *best = NULL;
	int best_score = 0, best_rel = 0;
	for (int i = 0; i < a->n_nodes; i++) {
		const char *cands[2] = {a->nodes[i].dependency, a->nodes[i].service};
		for (int c = 0; c < 2; c++) {
			int score;
			int rel = cands[c] ? model_infer_pool_match(p->name, cands[c], &score) : 0;
			if (rel && (score > best_score || (score == best_score && best &&
			                                   strcmp(cands[c], best) < 0))) {
				best = cands[c];
				best_score = score;
				best_rel = rel;
			}
		}
	}
	int own_service = best && p->service[0] && strcmp(best, p->service) == 0;
	if (best && best_rel == 1 && !own_service) {
		snprintf(p->node, sizeof p->node, "%s", best);
		p->guard = 1;
		snprintf(p->how, sizeof p->how, "the pool name's tokens contain the service name %s, "
		         "so it guards calls to %s%s%s", best, best, p->service[0] ? " from " : "",
		         p->service);
		return;
	}
	if (best_rel == 2 || own_service) {
		const char *owner = p->service[0] ? p->service : best;
		snprintf(p->node, sizeof p->node, "%s", owner);
		p->guard = 0;
		p->db = best_rel == 2;
		snprintf(p->how, sizeof p->how, "%s's own %s pool (the name %s; emitted by %s)", owner,
		         best_rel == 2 ? "database" : "client", best_rel == 2 ?
		         "carries a database word" : "matches the emitting service",
		         p->service[0] ? p->service : "an unnamed service");
		return;
	}
	if (p->service[0] && known_service(a, p->service)) {
		snprintf(p->node, sizeof p->node, "%s", p->service);
		p->guard = 0;
		snprintf(p->how, sizeof p->how, "no service name in the pool name; kept with the "
		         "service that emits it, %s", p->service);
		return;
	}
	p->node[0] = '\0';
	snprintf(p->how, sizeof p->how, "no service of the traces matches its name or labels");
}

/* Is (service, operation) a database call node of the DAG? */
static int is_db_call(const Analysis *a, const char *svc, const char *op)
{
	for (int i = 0; i < a->n_nodes; i++) {
		const DagNode *d = &a->nodes[i];
		if (d->type == NODE_CALL && d->pop[0].db_calls > 0 && d->operation &&
		    strcmp(d->service, svc) == 0 && strcmp(d->operation, op) == 0)
			return 1;
	}
	return 0;
}

static const char *kind_word(int kind)
{
	return kind == PK_EXEC ? "executor" : "client";
}

static void infer_pools(Model *m, const Analysis *a, PoolSet *ps)
{
	if (ps->n == 0)
		return;
	m->pools = xcalloc((size_t)ps->n, sizeof *m->pools);
	/* guards first, so a reader sees the pools in front of calls first */
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < ps->n; i++) {
			IPool *p = &ps->p[i];
			if (pass == 0)
				match_pool(p, a);
			if ((pass == 0) != (p->guard == 1))
				continue;
			ModelPool *mp = &m->pools[m->n_pools++];
			mp->name = xstrdup(p->name);
			mp->kind = xstrdup(kind_word(p->kind));
			mp->node = p->node[0] ? xstrdup(p->node) : NULL;
			if (p->has_max && p->max_val >= 1)
				mp->size = (int64_t)llround(p->max_val);
			if (p->metric[ROLE_USED][0])
				mp->used_metric = xstrdup(p->metric[ROLE_USED]);
			if (p->metric[ROLE_MAX][0])
				mp->max_metric = xstrdup(p->metric[ROLE_MAX]);
			if (p->metric[ROLE_PENDING][0])
				mp->pending_metric = xstrdup(p->metric[ROLE_PENDING]);
			if (p->metric[ROLE_WAIT][0])
				mp->wait_metric = xstrdup(p->metric[ROLE_WAIT]);
			if (p->label_key[0]) {
				mp->label_key = xstrdup(p->label_key);
				mp->label_value = xstrdup(p->name);
			}
			Buf why;
			buf_init(&why);
			buf_printf(&why, "metrics");
			int any = 0;
			for (int r = 0; r < ROLE_N; r++)
				if (p->metric[r][0])
					buf_printf(&why, "%s%s", any++ ? ", " : " ", p->metric[r]);
			if (p->label_key[0])
				buf_printf(&why, " with %s=%s", p->label_key, p->name);
			buf_printf(&why, " (%d series%s%s); %s", p->series ? p->series : 1,
			           p->service[0] ? " from " : "", p->service, p->how);
			if (mp->size > 0)
				buf_printf(&why, "; size %lld from the max metric", (long long)mp->size);
			else
				buf_adds(&why, "; size unknown (no max metric)");
			mp->why = xstrdup(buf_str(&why));
			buf_fini(&why);
			/* the node the pool guards points at it; a database pool is
			 * in front of its service's database calls */
			for (int k = 0; p->node[0] && k < m->n_nodes; k++) {
				ModelNode *mn = &m->nodes[k];
				if (mn->pool || strcmp(mn->service, p->node) != 0)
					continue;
				if ((p->guard && mn->operation == NULL) ||
				    (p->db && mn->operation && is_db_call(a, mn->service, mn->operation)))
					mn->pool = xstrdup(p->name);
			}
		}
}

/* A draft model reads how often each call is made and cut short, which a
 * uniform sample of this many requests gives within about a percentage
 * point (a proportion's standard error is at most 0.7 % here); no tail is
 * read. Bounded so that the dashboard without --model, which drafts one
 * before its first frame, starts in about a second on any store. */
#define INFER_SAMPLE 5000

int model_infer(Store *st, int64_t from, int64_t to, Model **out, Err *err)
{
	return model_infer_endpoint(st, from, to, NULL, NULL, out, err);
}

int model_infer_endpoint(Store *st, int64_t from, int64_t to, const char *service,
                         const char *route, Model **out, Err *err)
{
	*out = NULL;
	Model *m = xcalloc(1, sizeof *m);
	m->inferred = 1;
	m->objective_pct = 99;
	m->path = xstrdup("(inferred from the data)");
	Analysis *a = NULL;
	EvRequestSet *rs = NULL;
	RootOps ro = {0};
	PoolSet ps = {0};
	/* the endpoint: the one asked for, else the first of the window's
	 * endpoints (endpoints.h: the most common one, without a baseline) */
	Period per = {.win = {from, to}};
	EndpointList *l = NULL;
	int rc = analysis_endpoints(st, &per, NULL, &l, err);
	if (rc)
		goto out;
	int pick = service && route ? analysis_endpoints_find(l, service, route) : l->n > 0 ? 0 : -1;
	if (service && route) {
		ro.svc = xstrdup(service);
		ro.op = xstrdup(route);
	} else if (pick >= 0) {
		ro.svc = xstrdup(l->v[pick].service);
		ro.op = xstrdup(l->v[pick].route);
	}
	for (int i = 0; i < l->n; i++)
		ro.total += l->v[i].pop[POP_WINDOW].requests;
	ro.kinds = l->n;
	ro.top = pick >= 0 ? l->v[pick].pop[POP_WINDOW].requests : 0;
	analysis_endpoints_free(l);
	/* the DAG and the request set of the window in one pass over the
	 * spans, of that endpoint */
	AnalysisOptions ao = {.period.win = {from, to}, .ep_service = ro.svc, .ep_route = ro.op};
	EvRequestSet *sets[2] = {NULL, NULL};
	if ((rc = evidence_analysis_run(st, &ao, INFER_SAMPLE, &a, sets, err)))
		goto out;
	rs = sets[0];
	if (ro.svc) {
		m->root_service = xstrdup(ro.svc);
		m->root_operation = xstrdup(ro.op);
		m->endpoint = dupf("%s %s", ro.svc, ro.op);
		if (service && route)
			m->why_root = dupf("the endpoint asked for: %lld of the %lld requests of %d "
			                   "endpoints in the range", (long long)ro.top, (long long)ro.total,
			                   ro.kinds);
		else
			m->why_root = dupf("the most common endpoint (service and route of the requests' "
			                   "entry span): %lld of %lld requests (%d endpoints in the range)",
			                   (long long)ro.top, (long long)ro.total, ro.kinds);
		if (a->pop[POP_WINDOW].sample_of > 0) {
			char *w = dupf("%s; the rest is read from a uniform sample of %lld of its %lld "
			               "requests", m->why_root, (long long)a->pop[POP_WINDOW].requests,
			               (long long)a->pop[POP_WINDOW].sample_of);
			free(m->why_root);
			m->why_root = w;
		}
	} else {
		evidence_requests_free(rs); /* no endpoint: no requests either */
		rs = NULL;
		m->why_root = xstrdup("no request in the range (no entry span): no ingress to infer");
	}
	m->why_objective = xstrdup("not inferred: the data cannot say what the objective is; "
	                           "declare threshold_ms and percentile");
	infer_nodes(m, a, rs);
	infer_classes(m, a, st, from, to, err, &rc);
	if (rc)
		goto out;
	if ((rc = scan_pools(st, from, to, &ps, err)))
		goto out;
	infer_pools(m, a, &ps);
out:
	free(ps.p);
	free(ro.svc);
	free(ro.op);
	evidence_requests_free(rs);
	analysis_free(a);
	if (rc) {
		model_free(m);
		return rc;
	}
	*out = m;
	return 0;
}

/* ---- a given model against the data ---------------------------------------- */

typedef struct Findings {
	ModelFinding *f;
	int n;
} Findings;

static void finding(Findings *fs, const char *kind, const char *subject, char *text)
{
	fs->f = xrealloc(fs->f, (size_t)(fs->n + 1) * sizeof *fs->f);
	fs->f[fs->n].kind = xstrdup(kind);
	fs->f[fs->n].subject = xstrdup(subject ? subject : "");
	fs->f[fs->n].text = text;
	fs->n++;
}

typedef struct GaugeSum {
	int series;
	int64_t last;
	double sum, vmax;
	int64_t cnt;
	int has;
} GaugeSum;

static void gauge_close(GaugeSum *g)
{
	if (g->cnt > 0) {
		double v = g->sum / (double)g->cnt;
		if (!g->has || v > g->vmax)
			g->vmax = v;
		g->has = 1;
	}
	g->sum = 0;
	g->cnt = 0;
}

static int on_gauge_point(void *ctx, const StoreMetricRow *r)
{
	GaugeSum *g = ctx;
	if (r->series_id != g->last) {
		gauge_close(g);
		g->last = r->series_id;
		g->series++;
	}
	if (r->has_value && !isnan(r->value)) {
		g->sum += r->value;
		g->cnt++;
	}
	return 0;
}

/* Series of family (either spelling) selected by key=value (either
 * spelling of the key) in [from, to). */
static int gauge_series(Store *st, const char *family, const char *key, const char *val,
                        int64_t from, int64_t to, GaugeSum *g, Err *err)
{
	memset(g, 0, sizeof *g);
	g->last = -1;
	for (int sp = 0; sp < 2 && g->series == 0; sp++) {
		char fam[200], k[200];
		if (sp == 0) {
			snprintf(fam, sizeof fam, "%s", family);
			snprintf(k, sizeof k, "%s", key ? key : "");
		} else {
			underscore(family, fam, sizeof fam);
			underscore(key ? key : "", k, sizeof k);
		}
		Buf f;
		buf_init(&f);
		buf_addc(&f, '{');
		if (key && val) {
			buf_add_json_str(&f, k, strlen(k));
			buf_addc(&f, ':');
			buf_add_json_str(&f, val, strlen(val));
		}
		buf_addc(&f, '}');
		StoreMetricQuery q = {.family = fam, .labels_json = buf_str(&f), .from_ns = from,
		                      .to_ns = to};
		int rc = store_metric_points_scan(st, &q, on_gauge_point, g, err);
		buf_fini(&f);
		gauge_close(g);
		if (rc)
			return rc;
	}
	return 0;
}

/* Pool names present under the default selector key, for the message. */
typedef struct NameList {
	Buf b;
	int n;
	char key[128];
} NameList;

static int on_name_point(void *ctx, const StoreMetricRow *r)
{
	NameList *l = ctx;
	char v[128], k[128];
	if (!label_find(r->labels_json, l->key, v, sizeof v, k, sizeof k))
		return 0;
	char quoted[140];
	snprintf(quoted, sizeof quoted, " %s,", v);
	if (strstr(buf_str(&l->b), quoted) == NULL && l->n < 12) {
		buf_adds(&l->b, quoted);
		l->n++;
	}
	return 0;
}

static int check_pool(Store *st, const ModelPool *p, int64_t from, int64_t to, Findings *fs,
                      Err *err)
{
	int ex = p->kind && strcmp(p->kind, "executor") == 0;
	const char *used = p->used_metric ? p->used_metric
	                 : ex ? "executor.active" : "db.client.connection.count";
	const char *maxm = p->max_metric ? p->max_metric
	                 : ex ? "executor.slots" : "db.client.connection.max";
	const char *lk = p->label_key, *lv = p->label_value;
	if (lk == NULL && !ex) {
		lk = "db.client.connection.pool.name";
		lv = p->name;
	}
	GaugeSum g;
	int rc = gauge_series(st, used, lk, lv, from, to, &g, err);
	if (rc)
		return rc;
	if (g.series == 0) {
		GaugeSum any;
		if ((rc = gauge_series(st, used, NULL, NULL, from, to, &any, err)))
			return rc;
		if (any.series == 0)
			return 0; /* the metric is not there at all: evidence says "missing" */
		NameList nl = {.n = 0};
		buf_init(&nl.b);
		buf_adds(&nl.b, "");
		snprintf(nl.key, sizeof nl.key, "%s", lk ? lk : "");
		if (lk) {
			for (int sp = 0; sp < 2 && nl.n == 0; sp++) {
				char fam[200];
				if (sp)
					underscore(used, fam, sizeof fam);
				else
					snprintf(fam, sizeof fam, "%s", used);
				StoreMetricQuery q = {.family = fam, .from_ns = from, .to_ns = to};
				if ((rc = store_metric_points_scan(st, &q, on_name_point, &nl, err))) {
					buf_fini(&nl.b);
					return rc;
				}
			}
		}
		char seen[600];
		snprintf(seen, sizeof seen, "%s", buf_str(&nl.b));
		size_t l = strlen(seen);
		if (l > 0 && seen[l - 1] == ',')
			seen[l - 1] = '\0';
		buf_fini(&nl.b);
		finding(fs, "pool_selector", p->name,
		        dupf("pool %s: its selector %s=%s matches no series of %s (%d series carry "
		             "other values:%s); its occupancy and pending stay missing",
		             p->name, lk ? lk : "(none)", lv ? lv : "", used, any.series,
		             nl.n ? seen : " none named"));
		return 0;
	}
	if (p->size <= 0)
		return 0;
	GaugeSum mx;
	if ((rc = gauge_series(st, maxm, lk, lv, from, to, &mx, err)))
		return rc;
	if (mx.has && fabs(mx.vmax - (double)p->size) >= 0.5)
		finding(fs, "pool_size", p->name,
		        dupf("pool %s: the model says %lld slots, the metric %s says %.0f (largest "
		             "per-series mean over %d series); occupancy uses the metric",
		             p->name, (long long)p->size, maxm, mx.vmax, mx.series));
	return 0;
}

/* 1 when node k or a node below it was seen in the window (the analysis
 * may hold nodes only its baseline has). */
static int node_in_window(const Analysis *a, int k, int depth)
{
	const DagNode *d = &a->nodes[k];
	if (d->pop[POP_WINDOW].calls > 0)
		return 1;
	for (int i = 0; i < d->n_children && depth < 512; i++)
		if (node_in_window(a, d->children[i], depth + 1))
			return 1;
	return 0;
}

int model_check_with(Store *st, const Model *m, const Analysis *given, int64_t from, int64_t to,
                     ModelFinding **out, int *n, Err *err)
{
	*out = NULL;
	*n = 0;
	if (m == NULL || m->inferred)
		return 0; /* drafted from this data: it agrees by construction */
	Findings fs = {0};
	Analysis *own = NULL;
	const Analysis *a = given;
	if (a && (a->class_filter != NULL || a->asked.period.win.from != from || a->asked.period.win.to != to))
		a = NULL; /* another question: this one is not answered by it */
	/* from the aggregates: the counts read here are exact, but the
	 * population is the minutes the window overlaps; only its own when the
	 * window's ends are whole minutes (or open) */
	if (a && a->approx &&
	    ((from != INT64_MIN && store_agg_minute(from) * STORE_AGG_MINUTE_NS != from) ||
	     (to != INT64_MAX && store_agg_minute(to) * STORE_AGG_MINUTE_NS != to)))
		a = NULL;
	if (a == NULL) {
		AnalysisOptions ao = {.period.win = {from, to}};
		/* the model's endpoint, without its semantics */
		Model root = {.root_service = m->root_service, .root_operation = m->root_operation};
		if (m->root_service && m->root_operation)
			ao.model = &root;
		int rc = analysis_run(st, &ao, &own, err);
		if (rc)
			return rc;
		a = own;
	}
	int rc = 0;
	if (a->pop[0].requests > 0) {
		for (int i = 0; i < m->n_nodes; i++) {
			const ModelNode *mn = &m->nodes[i];
			int found = 0;
			for (int k = 1; k < a->n_nodes && !found; k++) {
				const DagNode *d = &a->nodes[k];
				if (!node_in_window(a, k, 0))
					continue;
				const char *target = analysis_call_target(d);
				if (mn->operation == NULL)
					found = (target && strcmp(target, mn->service) == 0) ||
					        strcmp(d->service, mn->service) == 0;
				else
					found = strcmp(d->service, mn->service) == 0 && d->operation &&
					        strcmp(d->operation, mn->operation) == 0;
			}
			if (!found)
				finding(&fs, "node_absent", mn->label ? mn->label : mn->service,
				        dupf("model node %s%s%s is absent from the traces of the window "
				             "(%lld requests)", mn->service, mn->operation ? " " : "",
				             mn->operation ? mn->operation : "",
				             (long long)a->pop[0].requests));
		}
		/* classes: what the spans carry (the analysis adds declared ones) */
		for (int c = 0; c < m->n_classes; c++) {
			int ci = analysis_class_index(a, m->classes[c]);
			int64_t seen = ci >= 0 && a->pop[0].class_requests ? a->pop[0].class_requests[ci] : 0;
			if (seen == 0)
				finding(&fs, "class_absent", m->classes[c],
				        dupf("declared class %s (%s) is on none of the window's %lld requests",
				             m->classes[c], m->class_key ? m->class_key : "workload.class",
				             (long long)a->pop[0].requests));
		}
	}
	for (int i = 0; rc == 0 && i < m->n_pools; i++)
		if (m->pools[i].name)
			rc = check_pool(st, &m->pools[i], from, to, &fs, err);
	analysis_free(own);
	if (rc) {
		model_findings_free(fs.f, fs.n);
		return rc;
	}
	*out = fs.f;
	*n = fs.n;
	return 0;
}

int model_check(Store *st, const Model *m, int64_t from, int64_t to, ModelFinding **out, int *n,
                Err *err)
{
	return model_check_with(st, m, NULL, from, to, out, n, err);
}

void model_findings_free(ModelFinding *f, int n)
{
	for (int i = 0; i < n; i++) {
		free(f[i].kind);
		free(f[i].subject);
		free(f[i].text);
	}
	free(f);
}
