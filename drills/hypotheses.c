/*
 * hypotheses.c - the hypothesis catalog (drills/catalog/hypotheses.json):
 * loading, validation, and evaluation on evidence.
 *
 * A hypothesis with a parameter ("dependency", "class", "caller") is instantiated
 * for every value the evidence knows; its placeholders are replaced by the
 * value's evidence segment in expressions and by the value itself in what
 * it blames. Each instance's score is the sum of the weights of its
 * supporting predicates that hold minus the weights of its contradicting
 * predicates that hold; missing evidence counts for nothing either way but
 * is reported. The best instance represents the hypothesis. Ranking: score,
 * then, on a tie, a hypothesis without signature predicates (the null
 * hypothesis, insufficient-evidence) first, then one whose signature
 * holds, then catalog order.
 */
#include "drills_priv.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "jpos.h"
#include "store_expr.h"

extern const char tt_hypotheses_catalog[];
extern const unsigned long tt_hypotheses_catalog_len;

/* ---- loading ------------------------------------------------------------ */

/* What the loader is reading: the file's name for messages, and the
 * hypothesis and predicate at hand ("hypotheses[3] (serial-hop).for[1]")
 * so that a message names the entry as well as its line and column. */
typedef struct Ld {
	const char *name;
	Err *err;
	Store *exprs;
	char where[320];
} Ld;

static int bad(Ld *l, const JpVal *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int bad(Ld *l, const JpVal *at, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (l->where[0] == '\0')
		return jp_err(l->err, l->name, at, "%s", msg);
	return jp_err(l->err, l->name, at, "%s: %s", l->where, msg);
}

/* The string member k of o, copied, or NULL when absent or not a string. */
static char *str_field(const JpVal *o, const char *k)
{
	const JpVal *v = jp_get(o, k);
	return v && v->type == JP_STR ? xstrdup(v->s) : NULL;
}

static int nothing(void *ctx, const char *name, double *out)
{
	(void)ctx, (void)name, (void)out;
	return 0;
}

/* Placeholders allowed for a parameter kind. */
static int check_placeholders(const char *s, const char *param, const char **bad_at)
{
	for (const char *p = strchr(s, '{'); p; p = strchr(p + 1, '{')) {
		const char *q = strchr(p, '}');
		if (q == NULL) {
			*bad_at = p;
			return -1;
		}
		size_t n = (size_t)(q - p - 1);
		const char *k = p + 1;
		int ok = (n == 4 && strncmp(k, "root", 4) == 0) ||
		         (n > 5 && strncmp(k, "fact:", 5) == 0) ||
		         (strcmp(param, "dependency") == 0 &&
		          ((n == 3 && strncmp(k, "dep", 3) == 0) || (n == 4 && strncmp(k, "pool", 4) == 0))) ||
		         (strcmp(param, "class") == 0 && n == 5 && strncmp(k, "class", 5) == 0) ||
		         (strcmp(param, "caller") == 0 && n == 6 && strncmp(k, "caller", 6) == 0);
		if (!ok) {
			*bad_at = p;
			return -1;
		}
	}
	return 0;
}

/* Compiles the expression string v with placeholders replaced by a dummy
 * segment; an error points at v. */
static int check_expr(Ld *l, const JpVal *v, const char *param)
{
	const char *expr = v->s, *bad_at;
	if (check_placeholders(expr, param, &bad_at))
		return bad(l, v, "placeholder '%.20s' is not allowed here", bad_at);
	Buf b;
	buf_init(&b);
	for (const char *p = expr; *p; p++) {
		if (*p == '{') {
			const char *q = strchr(p, '}');
			buf_adds(&b, "x");
			p = q;
		} else {
			buf_addc(&b, *p);
		}
	}
	double x;
	Err e = {0};
	int rc = store_expr_eval(l->exprs, buf_str(&b), nothing, NULL, &x, &e);
	buf_fini(&b);
	if (rc)
		return bad(l, v, "%s", e.msg);
	return 0;
}

static int load_preds(Ld *l, const JpVal *arr, int against, CatHyp *h)
{
	if (arr == NULL)
		return 0;
	size_t wl = strlen(l->where);
	const char *side = against ? "against" : "for";
	if (arr->type != JP_ARR) {
		snprintf(l->where + wl, sizeof l->where - wl, ".%s", side);
		return bad(l, arr, "must be an array");
	}
	for (size_t i = 0; i < arr->len; i++) {
		const JpVal *p = arr->items[i];
		snprintf(l->where + wl, sizeof l->where - wl, ".%s[%zu]", side, i);
		const JpVal *t = jp_get(p, "text"), *x = jp_get(p, "expr"), *wt = jp_get(p, "weight");
		const JpVal *sg = jp_get(p, "signature"), *wy = jp_get(p, "why");
		double weight = 0;
		if (p->type != JP_OBJ)
			return bad(l, p, "must be an object");
		if (wy && wy->type != JP_STR)
			return bad(l, wy, "\"why\" must be a string");
		if (t == NULL || t->type != JP_STR || x == NULL || x->type != JP_STR)
			return bad(l, t && t->type != JP_STR ? t : x && x->type != JP_STR ? x : p,
			           "needs \"text\" and \"expr\" strings");
		if (jp_num(wt, &weight) || !(weight > 0) || weight > 100)
			return bad(l, wt ? wt : p, "\"weight\" must be a number in (0, 100]");
		if (sg && sg->type != JP_BOOL)
			return bad(l, sg, "\"signature\" must be true or false");
		if (sg && sg->b && against)
			return bad(l, sg, "only supporting predicates can be signatures");
		int rc = check_expr(l, x, h->param);
		if (rc)
			return rc;
		h->preds = xrealloc(h->preds, (size_t)(h->n_preds + 1) * sizeof *h->preds);
		CatPred *cp = &h->preds[h->n_preds++];
		cp->text = xstrdup(t->s);
		cp->expr = xstrdup(x->s);
		cp->why = wy ? xstrdup(wy->s) : NULL;
		cp->weight = weight;
		cp->against = against;
		cp->signature = sg && sg->b;
		h->has_signature |= cp->signature;
	}
	l->where[wl] = '\0';
	return 0;
}

static int load_hyp(Ld *l, const JpVal *o, size_t i, Catalog *c)
{
	snprintf(l->where, sizeof l->where, "hypotheses[%zu]", i);
	if (o->type != JP_OBJ)
		return bad(l, o, "must be an object");
	c->h = xrealloc(c->h, (size_t)(c->n + 1) * sizeof *c->h);
	CatHyp *h = &c->h[c->n++];
	memset(h, 0, sizeof *h);
	h->id = str_field(o, "id");
	h->title = str_field(o, "title");
	h->mechanism = str_field(o, "mechanism");
	h->param = str_field(o, "param");
	h->blames = str_field(o, "blames");
	h->applies = str_field(o, "applies");
	h->explains = str_field(o, "explains");
	h->detail = str_field(o, "detail");
	if (h->id == NULL || h->title == NULL || h->mechanism == NULL || h->blames == NULL)
		return bad(l, o, "needs \"id\", \"title\", \"mechanism\" and \"blames\"");
	snprintf(l->where, sizeof l->where, "hypotheses[%zu] (%.200s)", i, h->id);
	for (int k = 0; k < c->n - 1; k++)
		if (strcmp(c->h[k].id, h->id) == 0)
			return bad(l, jp_get(o, "id"), "duplicate id");
	if (h->param == NULL)
		h->param = xstrdup("");
	if (*h->param && strcmp(h->param, "dependency") != 0 && strcmp(h->param, "class") != 0 &&
	    strcmp(h->param, "caller") != 0)
		return bad(l, jp_get(o, "param"),
		           "\"param\" must be \"dependency\", \"class\", \"caller\" or \"\"");
	const char *bad_at;
	if (check_placeholders(h->blames, h->param, &bad_at))
		return bad(l, jp_get(o, "blames"), "blames: placeholder '%.20s' is not allowed here",
		           bad_at);
	const JpVal *rm = jp_get(o, "remedy");
	if (rm) {
		/* what to do about it: three short texts, for what it blames */
		static const char *const parts[DX_REMEDY_PARTS] = {"change", "cost", "shows"};
		if (rm->type != JP_OBJ)
			return bad(l, rm, "\"remedy\" must be an object {\"change\", \"cost\", \"shows\"}");
		for (int k = 0; k < DX_REMEDY_PARTS; k++) {
			h->remedy[k] = str_field(rm, parts[k]);
			if (h->remedy[k] == NULL || h->remedy[k][0] == '\0')
				return bad(l, rm, "remedy: needs a non-empty \"%s\"", parts[k]);
			if (check_placeholders(h->remedy[k], h->param, &bad_at))
				return bad(l, jp_get(rm, parts[k]),
				           "remedy.%s: placeholder '%.20s' is not allowed here", parts[k], bad_at);
		}
	}
	const JpVal *ck = jp_get(o, "check");
	if (ck == NULL || ck->type != JP_OBJ)
		return bad(l, ck ? ck : o, "needs a \"check\" object");
	h->check = str_field(ck, "name");
	h->check_node = str_field(ck, "node");
	h->check_class = str_field(ck, "class");
	h->check_why = str_field(ck, "why");
	if (h->check == NULL)
		return bad(l, ck, "check: needs a \"name\"");
	int known = 0;
	for (const char *const *n = check_names(); *n && !known; n++)
		known = strcmp(*n, h->check) == 0;
	if (!known)
		return bad(l, jp_get(ck, "name"), "check: unknown check '%s' (tailtriage check --list)",
		           h->check);
	int rc;
	if (h->applies && (rc = check_expr(l, jp_get(o, "applies"), h->param)))
		return rc;
	if ((rc = load_preds(l, jp_get(o, "for"), 0, h)) ||
	    (rc = load_preds(l, jp_get(o, "against"), 1, h)))
		return rc;
	if (h->n_preds == 0)
		return bad(l, o, "needs at least one predicate");
	return 0;
}

int catalog_load(const char *path, Store *exprs, Catalog **out, Err *err)
{
	*out = NULL;
	Buf b;
	buf_init(&b);
	if (path) {
		int read_rc = buf_read_file(&b, path, 8u << 20, err);
		if (read_rc) {
			buf_fini(&b);
			return read_rc;
		}
	} else {
		buf_add(&b, tt_hypotheses_catalog, tt_hypotheses_catalog_len);
	}
	Catalog *c = xcalloc(1, sizeof *c);
	c->path = xstrdup(path ? path : "built-in catalog");
	Ld l = {.name = c->path, .err = err, .exprs = exprs};
	JpDoc *doc = NULL;
	JpVal *root = NULL;
	int rc = jp_parse(b.p ? b.p : "", b.len, c->path, 1, &doc, &root, err);
	if (rc)
		goto out;
	const JpVal *ver = jp_get(root, "version"), *hs = jp_get(root, "hypotheses");
	double v = 0;
	if (root->type != JP_OBJ) {
		rc = bad(&l, root, "a catalog must be a JSON object");
		goto out;
	}
	if (jp_num(ver, &v) || v != 1) {
		rc = bad(&l, ver ? ver : root, "\"version\" must be 1");
		goto out;
	}
	if (hs == NULL || hs->type != JP_ARR || hs->len == 0) {
		rc = bad(&l, hs ? hs : root, "\"hypotheses\" must be a non-empty array");
		goto out;
	}
	for (size_t i = 0; i < hs->len && rc == 0; i++)
		rc = load_hyp(&l, hs->items[i], i, c);
out:
	jp_free(doc);
	buf_fini(&b);
	if (rc) {
		catalog_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

void catalog_free(Catalog *c)
{
	if (c == NULL)
		return;
	for (int i = 0; i < c->n; i++) {
		CatHyp *h = &c->h[i];
		free(h->id);
		free(h->title);
		free(h->mechanism);
		free(h->param);
		free(h->applies);
		free(h->blames);
		free(h->check);
		free(h->check_node);
		free(h->check_class);
		free(h->check_why);
		free(h->explains);
		free(h->detail);
		for (int k = 0; k < DX_REMEDY_PARTS; k++)
			free(h->remedy[k]);
		for (int k = 0; k < h->n_preds; k++) {
			free(h->preds[k].text);
			free(h->preds[k].expr);
			free(h->preds[k].why);
		}
		free(h->preds);
	}
	free(c->h);
	free(c->path);
	free(c);
}

char **diagnose_catalog_ids(const char *path, Err *err)
{
	Store *st = NULL;
	if (store_open(":memory:", 0, &st, err))
		return NULL;
	Catalog *c = NULL;
	int rc = catalog_load(path, st, &c, err);
	store_close(st);
	if (rc)
		return NULL;
	char **v = xcalloc((size_t)c->n + 1, sizeof *v);
	for (int i = 0; i < c->n; i++)
		v[i] = xstrdup(c->h[i].id);
	catalog_free(c);
	return v;
}

void dx_strv_free(char **v)
{
	for (int i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* ---- model helpers ---------------------------------------------------------- */

const ModelNode *dx_model_node(const Model *m, const char *dep)
{
	if (m == NULL || dep == NULL)
		return NULL;
	char seg[96], s2[96];
	evidence_segment(dep, seg, sizeof seg);
	for (int i = 0; i < m->n_nodes; i++) {
		const ModelNode *n = &m->nodes[i];
		if (n->service == NULL || (m->root_service && strcmp(n->service, m->root_service) == 0))
			continue;
		evidence_segment(n->service, s2, sizeof s2);
		if (strcmp(n->service, dep) == 0 || strcmp(s2, seg) == 0)
			return n;
		if (n->label) {
			evidence_segment(n->label, s2, sizeof s2);
			if (strcmp(n->label, dep) == 0 || strcmp(s2, seg) == 0)
				return n;
		}
	}
	return NULL;
}

const char *dx_pool_of(const Model *m, const char *dep)
{
	const ModelNode *n = dx_model_node(m, dep);
	if (n && n->pool)
		return n->pool;
	for (int i = 0; m && i < m->n_pools; i++)
		if (m->pools[i].node && strcmp(m->pools[i].node, dep) == 0 &&
		    !(m->pools[i].kind && strcmp(m->pools[i].kind, "executor") == 0))
			return m->pools[i].name;
	return NULL;
}

/* ---- evaluation --------------------------------------------------------------- */

typedef struct Inst {
	const char *value;          /* dependency or class, NULL for no parameter */
	char seg[96];               /* its evidence segment */
	char pool[96];              /* {pool} */
} Inst;

/* Replaces placeholders. seg_mode: 1 in expressions (segments), 0 in text
 * (names as the data spells them). Returns NULL when a fact is unknown. */
static char *subst(const char *tmpl, const Inst *in, const Evidence *e, int seg_mode)
{
	Buf b;
	buf_init(&b);
	for (const char *p = tmpl; *p; p++) {
		const char *q;
		if (*p != '{' || (q = strchr(p, '}')) == NULL) {
			buf_addc(&b, *p);
			continue;
		}
		size_t n = (size_t)(q - p - 1);
		const char *k = p + 1;
		char seg[160];
		const char *val = NULL;
		if ((n == 3 && strncmp(k, "dep", 3) == 0) || (n == 5 && strncmp(k, "class", 5) == 0) ||
		    (n == 6 && strncmp(k, "caller", 6) == 0))
			val = in->value ? (seg_mode ? in->seg : in->value) : NULL;
		else if (n == 4 && strncmp(k, "pool", 4) == 0)
			val = in->value ? in->pool : NULL;
		else if (n == 4 && strncmp(k, "root", 4) == 0)
			val = e->root_service;
		else if (n > 5 && strncmp(k, "fact:", 5) == 0) {
			char fn[128];
			snprintf(fn, sizeof fn, "%.*s", (int)(n - 5), k + 5);
			val = evidence_fact(e, fn);
		}
		if (val == NULL) {
			buf_fini(&b);
			return NULL;
		}
		if (seg_mode && val != in->seg && val != in->pool) {
			evidence_segment(val, seg, sizeof seg);
			val = seg;
		}
		buf_adds(&b, val);
		p = q;
	}
	char *s = xstrdup(buf_str(&b));
	buf_fini(&b);
	return s;
}

/* Replaces {dep}, {class}, {caller} and {pool} (names as the data spells them) and
 * leaves every other placeholder for subst(). */
static char *subst_params(const char *tmpl, const Inst *in)
{
	Buf b;
	buf_init(&b);
	for (const char *p = tmpl; *p; p++) {
		if (in->value && strncmp(p, "{dep}", 5) == 0) {
			buf_adds(&b, in->value);
			p += 4;
		} else if (in->value && strncmp(p, "{class}", 7) == 0) {
			buf_adds(&b, in->value);
			p += 6;
		} else if (in->value && strncmp(p, "{caller}", 8) == 0) {
			buf_adds(&b, in->value);
			p += 7;
		} else if (in->value && strncmp(p, "{pool}", 6) == 0) {
			buf_adds(&b, in->pool);
			p += 5;
		} else {
			buf_addc(&b, *p);
		}
	}
	char *s = xstrdup(buf_str(&b));
	buf_fini(&b);
	return s;
}

/* What one expression read: the names with a value and those missing,
 * and every call that left it undecided (a test that cannot tell, an ev()
 * of a missing value) with its reason, in the order SQLite made them. A
 * reason comes from where the test was decided (evidence_test()), or, for
 * ev(), from the missing value's provenance. */
#define READS_CAND 8

typedef struct Cand {
	int call;                   /* its number among the calls that can be NULL */
	int test;                   /* 1: a test, 0: an ev() */
	char why[320];
} Cand;

typedef struct Reads {
	const Evidence *e;
	char **names;
	int n;
	char **missing;
	int n_missing;
	int calls;                  /* ev() and test calls so far */
	int force_at;               /* that call answers force_val (a probe), or 0 */
	double force_val;
	Cand cand[READS_CAND];
	int n_cand;
} Reads;

/* Counts a call that can be NULL; 1 when it is the probed one. */
static int forced(Reads *r, double *out)
{
	if (++r->calls != r->force_at)
		return 0;
	*out = r->force_val;
	return 1;
}

static void add_cand(Reads *r, int test, const char *why)
{
	if (r->n_cand == READS_CAND || why == NULL || *why == '\0')
		return;
	Cand *c = &r->cand[r->n_cand++];
	c->call = r->calls;
	c->test = test;
	snprintf(c->why, sizeof c->why, "%s", why);
}

static void note_name(Reads *r, const char *name, int have)
{
	char ***list = have ? &r->names : &r->missing;
	int *n = have ? &r->n : &r->n_missing;
	for (int i = 0; i < *n; i++)
		if (strcmp((*list)[i], name) == 0)
			return;
	*list = xrealloc(*list, (size_t)(*n + 1) * sizeof **list);
	(*list)[(*n)++] = xstrdup(name);
}

static int lookup(void *ctx, const char *name, double *out)
{
	Reads *r = ctx;
	double v;
	int have = evidence_value(r->e, name, out ? out : &v);
	note_name(r, name, have);
	if (out == NULL) /* has(): never NULL */
		return have;
	if (forced(r, out))
		return 1;
	if (!have) {
		/* ev() of a missing value: the predicate may be NULL because of it */
		const EvValue *ev = evidence_get(r->e, name);
		char why[320];
		if (ev)
			snprintf(why, sizeof why, "%s is missing: %s", name, evidence_provenance_text(ev));
		else
			snprintf(why, sizeof why, "%s is not known", name);
		add_cand(r, 0, why);
	}
	return have;
}

/* The interval-aware tests of the predicates (store_expr.h): each reads
 * name (and name@baseline for comparisons), is recorded like ev(), and
 * when it cannot tell leaves its reason. */
static int test(void *ctx, const char *op, const char *name, double a, double b, double *out)
{
	Reads *r = ctx;
	int cmp = strcmp(op, "rose") == 0 || strcmp(op, "fell") == 0 || strcmp(op, "flat") == 0 ||
	          strcmp(op, "steady") == 0;
	lookup(r, name, NULL);
	if (cmp) {
		char bn[320];
		snprintf(bn, sizeof bn, "%s@baseline", name);
		lookup(r, bn, NULL);
	}
	if (forced(r, out))
		return 1;
	char why[320];
	if (strcmp(op, "lo") == 0 || strcmp(op, "hi") == 0) {
		if (evidence_bound(r->e, name, op[0] == 'h', out, why, sizeof why))
			return 1;
		add_cand(r, 1, why);
		return 0;
	}
	int t = evidence_test(r->e, op, name, a, b, why, sizeof why);
	if (t < 0) {
		add_cand(r, 1, why);
		return 0;
	}
	*out = t;
	return 1;
}

static void strv_free_n(char **v, int n);

/* Why expr (NULL on r) cannot tell: the first undecided call whose answer
 * would have decided it (probed with 0 and 1, and a large value for an
 * ev()); a call inside an OR whose other side holds, or the first of
 * coalesce()'s arguments, did not. Without one, the first test's reason,
 * else the first reason. */
static char *why_undecided(Store *exprs, const char *expr, const Reads *r)
{
	if (r->n_cand == 0)
		return xstrdup("a division by zero, or a value out of range");
	if (r->n_cand > 1) {
		static const double probe[] = {0, 1, 1e9};
		for (int i = 0; i < r->n_cand; i++)
			for (int k = 0; k < (r->cand[i].test ? 2 : 3); k++) {
				Reads q = {.e = r->e, .force_at = r->cand[i].call, .force_val = probe[k]};
				double v = NAN;
				Err err = {0};
				int rc = store_expr_eval_ex(exprs, expr, lookup, test, &q, &v, &err);
				strv_free_n(q.names, q.n);
				strv_free_n(q.missing, q.n_missing);
				if (rc == 0 && !isnan(v))
					return xstrdup(r->cand[i].why);
			}
	}
	for (int i = 0; i < r->n_cand; i++)
		if (r->cand[i].test)
			return xstrdup(r->cand[i].why);
	return xstrdup(r->cand[0].why);
}

static void strv_add(char ***v, int *n, const char *s)
{
	for (int i = 0; i < *n; i++)
		if (strcmp((*v)[i], s) == 0)
			return;
	*v = xrealloc(*v, (size_t)(*n + 1) * sizeof **v);
	(*v)[(*n)++] = xstrdup(s);
}

static void strv_free_n(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void dx_hypothesis_fini(DxHypothesis *h)
{
	free(h->id);
	free(h->title);
	free(h->mechanism);
	free(h->node);
	free(h->param);
	free(h->check);
	free(h->check_node);
	free(h->check_class);
	free(h->check_why);
	strv_free_n(h->supported_by, h->n_supported_by);
	strv_free_n(h->contradicted_by, h->n_contradicted_by);
	strv_free_n(h->missing, h->n_missing);
	for (int i = 0; i < h->n_preds; i++) {
		free(h->preds[i].text);
		free(h->preds[i].expr);
		free(h->preds[i].why);
		free(h->preds[i].reason);
		strv_free_n(h->preds[i].names, h->preds[i].n_names);
	}
	free(h->preds);
	free(h->explains);
	free(h->detail);
	free(h->rank_note);
	for (int k = 0; k < DX_REMEDY_PARTS; k++)
		free(h->remedy[k]);
	memset(h, 0, sizeof *h);
}

/* Evaluates one instance into h. Returns 1 when it applies, 0 when its
 * "applies" expression is false, negative on error. */
static int eval_instance(const CatHyp *ch, const Inst *in, const Evidence *e, Store *exprs,
                         DxHypothesis *h, Err *err)
{
	memset(h, 0, sizeof *h);
	if (ch->applies) {
		char *x = subst(ch->applies, in, e, 1);
		Reads r = {.e = e};
		double v = NAN;
		int rc = x ? store_expr_eval_ex(exprs, x, lookup, test, &r, &v, err) : 0;
		free(x);
		strv_free_n(r.names, r.n);
		strv_free_n(r.missing, r.n_missing);
		if (rc)
			return rc;
		if (!isnan(v) && v == 0)
			return 0;
	}
	h->id = xstrdup(ch->id);
	h->title = xstrdup(ch->title);
	h->mechanism = xstrdup(ch->mechanism);
	h->param = xstrdup(ch->param);
	/* what it blames: the first alternative that resolves */
	char *alts = xstrdup(ch->blames);
	for (char *save = NULL, *a = strtok_r(alts, "|", &save); a && !h->node;
	     a = strtok_r(NULL, "|", &save))
		h->node = subst(a, in, e, 0);
	free(alts);
	if (h->node == NULL)
		h->node = xstrdup("unknown");
	h->check = xstrdup(ch->check);
	h->check_node = ch->check_node ? subst(ch->check_node, in, e, 0) : NULL;
	h->check_class = ch->check_class ? subst(ch->check_class, in, e, 0) : NULL;
	h->check_why = ch->check_why ? xstrdup(ch->check_why) : NULL;
	/* all three parts or none (a placeholder that does not resolve) */
	for (int k = 0; k < DX_REMEDY_PARTS && ch->remedy[0]; k++)
		h->remedy[k] = subst(ch->remedy[k], in, e, 0);
	for (int k = 0; k < DX_REMEDY_PARTS; k++)
		if (h->remedy[k] == NULL) {
			for (int j = 0; j < DX_REMEDY_PARTS; j++) {
				free(h->remedy[j]);
				h->remedy[j] = NULL;
			}
			break;
		}
	if (ch->explains) {
		/* alternatives separated by '|': the first with a value, else the
		 * first (missing, with its reason) */
		char *xalts = xstrdup(ch->explains);
		for (char *save = NULL, *a = strtok_r(xalts, "|", &save); a;
		     a = strtok_r(NULL, "|", &save)) {
			char *nm = subst(a, in, e, 1);
			if (nm == NULL)
				continue;
			const EvValue *v = evidence_get(e, nm);
			if (h->explains == NULL || (v && !v->missing)) {
				free(h->explains);
				h->explains = nm;
				if (v && !v->missing)
					break;
			} else {
				free(nm);
			}
		}
		free(xalts);
	}
	if (ch->detail) {
		/* parameters first (a fact's name may hold one), then facts */
		char *once = subst_params(ch->detail, in);
		h->detail = subst(once, in, e, 0);
		free(once);
	}
	h->preds = xcalloc((size_t)ch->n_preds, sizeof *h->preds);
	h->n_preds = ch->n_preds;
	for (int k = 0; k < ch->n_preds; k++) {
		const CatPred *cp = &ch->preds[k];
		DxPredicate *p = &h->preds[k];
		p->text = xstrdup(cp->text);
		p->why = cp->why ? xstrdup(cp->why) : NULL;
		p->weight = cp->weight;
		p->against = cp->against;
		p->signature = cp->signature;
		p->expr = subst(cp->expr, in, e, 1);
		if (p->expr == NULL)
			p->expr = xstrdup(cp->expr); /* an unknown fact: the names stay unresolved */
		Reads r = {.e = e};
		double v = NAN;
		int rc = store_expr_eval_ex(exprs, p->expr, lookup, test, &r, &v, err);
		if (rc) {
			strv_free_n(r.names, r.n);
			strv_free_n(r.missing, r.n_missing);
			return rc;
		}
		p->outcome = isnan(v) ? DX_MISSING : v != 0 ? DX_HOLDS : DX_NOT;
		if (p->outcome == DX_MISSING)
			p->reason = why_undecided(exprs, p->expr, &r);
		for (int i = 0; i < r.n; i++)
			strv_add(&p->names, &p->n_names, r.names[i]);
		for (int i = 0; i < r.n_missing; i++)
			strv_add(&p->names, &p->n_names, r.missing[i]);
		if (p->outcome == DX_HOLDS) {
			if (p->against) {
				h->score -= p->weight;
				for (int i = 0; i < r.n; i++)
					strv_add(&h->contradicted_by, &h->n_contradicted_by, r.names[i]);
			} else {
				h->score += p->weight;
				h->signature |= cp->signature;
				for (int i = 0; i < r.n; i++)
					strv_add(&h->supported_by, &h->n_supported_by, r.names[i]);
			}
		} else if (p->outcome == DX_MISSING) {
			for (int i = 0; i < r.n_missing; i++)
				strv_add(&h->missing, &h->n_missing, r.missing[i]);
		}
		strv_free_n(r.names, r.n);
		strv_free_n(r.missing, r.n_missing);
	}
	return 1;
}

static double node_depth(const Evidence *e, const DxHypothesis *h)
{
	char seg[160], name[200];
	double d;
	evidence_segment(h->node ? h->node : "", seg, sizeof seg);
	snprintf(name, sizeof name, "dep.%s.depth", seg);
	return evidence_value(e, name, &d) ? d : 0;
}

/* a better than b? On a tie, the deeper locus: when a service and the
 * dependency it calls both show the same signature, the callee is where
 * it starts. */
static int better_instance(const DxHypothesis *a, const DxHypothesis *b, const Evidence *e)
{
	if (a->score != b->score)
		return a->score > b->score;
	if (a->signature != b->signature)
		return a->signature > b->signature;
	double da = node_depth(e, a), db = node_depth(e, b);
	if (da != db)
		return da > db;
	return a->n_missing < b->n_missing;
}

typedef struct Ranked {
	DxHypothesis h;
	int order;                  /* catalog order */
	int null_hyp;               /* no signature predicates */
	int specific;               /* defined for a subset of loci ("applies") */
} Ranked;

static int cmp_ranked(const void *x, const void *y)
{
	const Ranked *a = x, *b = y;
	if (a->h.not_applicable != b->h.not_applicable)
		return a->h.not_applicable ? 1 : -1;
	if (a->h.score != b->h.score)
		return a->h.score > b->h.score ? -1 : 1;
	if (a->null_hyp != b->null_hyp)
		return a->null_hyp ? -1 : 1;
	if (a->h.signature != b->h.signature)
		return a->h.signature ? -1 : 1;
	/* the more specific mechanism first when both blame the same node */
	if (a->specific != b->specific && a->h.node && b->h.node && strcmp(a->h.node, b->h.node) == 0)
		return a->specific ? -1 : 1;
	return a->order - b->order;
}

/* A locus found by attribution: replaying it from the baseline removes a
 * third of the rise or more, at the 95 % interval's lower bound (the bar
 * the catalog calls a main carrier). */
#define DX_FOUND_SHARE 0.33

static int found_by_attribution(const DxHypothesis *h, const Evidence *e)
{
	if (h->explains == NULL || evidence_above(e, h->explains, DX_FOUND_SHARE) != 1)
		return 0;
	/* the locus is found; the mechanism stays in the running unless its
	 * own signature was checked and does not hold */
	int sig = 0, ruled_out = 0;
	for (int k = 0; k < h->n_preds; k++)
		if (h->preds[k].signature) {
			sig++;
			ruled_out += h->preds[k].outcome == DX_NOT;
		}
	return sig == 0 || ruled_out < sig;
}

/* "found by attribution (explains 97 % of the rise, 95 % interval 84 to
 * 113 %); its signature could not be checked: 12 calls give ..." */
static char *found_note(const DxHypothesis *h, const Evidence *e)
{
	const EvValue *v = evidence_get(e, h->explains);
	const char *why = NULL;
	for (int k = 0; k < h->n_preds && why == NULL; k++)
		if (h->preds[k].signature && h->preds[k].outcome == DX_MISSING)
			why = h->preds[k].reason;
	Buf b;
	buf_init(&b);
	buf_printf(&b, "above insufficient-evidence: found by attribution (explains %.0f %% of the rise",
	           100 * v->value);
	if (v->has_ci)
		buf_printf(&b, ", 95 %% interval %.0f to %.0f %%", 100 * v->lo, 100 * v->hi);
	buf_adds(&b, ")");
	if (why)
		buf_printf(&b, "; its signature could not be checked: %s", why);
	char *s = xstrdup(buf_str(&b));
	buf_fini(&b);
	return s;
}

/* The null hypothesis (the one without a signature) is not ranked by its
 * score but by rule:
 *  - first when the window holds fewer than 100 requests, or when the
 *    objective is not breached and the rise is not shown (ingress.moved
 *    is 0, or cannot tell), or when the objective is met and there is no
 *    baseline;
 *  - otherwise right below the hypotheses that found something: whose
 *    signature holds (their tests are significance tests, so a signature
 *    that holds is not noise), or whose locus explains a third of the
 *    rise at the interval's lower bound (found by attribution, even when
 *    its own per-call test cannot tell on few calls); among the others by
 *    score. When nothing was found, it leads: abstaining is right only
 *    when nothing explains the rise. */
static void place_null(Ranked *rk, int n, const Evidence *e)
{
	int ni = -1;
	for (int i = 0; i < n; i++)
		if (rk[i].null_hyp && ni < 0)
			ni = i;
	if (ni < 0)
		return;
	double moved = NAN, p99, obj, nreq;
	const EvValue *mv = evidence_get(e, "ingress.moved");
	evidence_value(e, "ingress.moved", &moved);
	/* cannot tell, as opposed to nothing to compare with */
	int unknown = mv && mv->missing && strncmp(mv->provenance, "derived: cannot tell", 20) == 0;
	int judged = evidence_value(e, "ingress.p99_ms", &p99) &&
	             evidence_value(e, "objective.p99_ms", &obj);
	int breached = judged && p99 > obj;
	int thin = evidence_value(e, "ingress.requests", &nreq) && nreq < 100;
	Ranked null = rk[ni];
	memmove(&rk[ni], &rk[ni + 1], (size_t)(n - 1 - ni) * sizeof *rk);
	int to = 0;
	char why[600];
	if (thin) {
		snprintf(why, sizeof why, "placed first: fewer than 100 requests in the window, too few "
		                          "for a p99 to say anything");
	} else if (!breached && moved == 0) {
		snprintf(why, sizeof why,
		         "placed first: nothing moved (the endpoint's p99 and p90 did not rise by 5 %% and "
		         "5 ms) and the objective is not breached");
	} else if (!breached && unknown) {
		const char *p = strchr(mv->provenance, '(');
		snprintf(why, sizeof why,
		         "placed first: the rise is not shown and the objective is not breached (%s",
		         p ? p + 1 : ")");
	} else if (!breached && isnan(moved) && judged) {
		/* "met" only when the p99's interval is under the objective too */
		const EvValue *pv = evidence_get(e, "ingress.p99_ms");
		int met = !(pv && pv->has_ci && !(pv->hi <= obj));
		snprintf(why, sizeof why, "placed first: the objective is %s and there is no baseline to "
		                          "show a rise",
		         met ? "met" : "not shown to be breached (the p99's interval reaches over it)");
	} else {
		/* stable: every hypothesis that found something first (in score
		 * order), then the others with the null among them by score;
		 * when nothing was found, the null leads */
		Ranked *tmp = xcalloc((size_t)n, sizeof *tmp);
		int k = 0;
		char *found = xcalloc((size_t)n, 1);
		for (int i = 0; i < n - 1; i++) {
			found[i] = rk[i].h.signature || found_by_attribution(&rk[i].h, e);
			if (!found[i])
				continue;
			if (!rk[i].h.signature && rk[i].h.rank_note == NULL)
				rk[i].h.rank_note = found_note(&rk[i].h, e);
			tmp[k++] = rk[i];
		}
		int placed = 0;
		if (k == 0) {
			tmp[k++] = null;
			placed = 1;
			to = 0;
		}
		for (int i = 0; i < n - 1; i++) {
			if (found[i])
				continue;
			if (!placed && cmp_ranked(&null, &rk[i]) < 0) {
				to = k;
				tmp[k++] = null;
				placed = 1;
			}
			tmp[k++] = rk[i];
		}
		if (!placed) {
			to = k;
			tmp[k++] = null;
		}
		memcpy(rk, tmp, (size_t)n * sizeof *rk);
		free(tmp);
		free(found);
		if (to != ni)
			rk[to].h.rank_note = xstrdup(
			    to == 0 ? "placed first: nothing explains the rise (no hypothesis's own signature "
			              "holds beyond sampling noise, and no locus that explains a third of it "
			              "has a mechanism whose signature is still open)"
			            : "placed below the hypotheses whose signature holds beyond sampling noise "
			              "or whose locus explains a third of the rise");
		return;
	}
	memmove(&rk[to + 1], &rk[to], (size_t)(n - 1 - to) * sizeof *rk);
	rk[to] = null;
	rk[to].h.rank_note = xstrdup(why); /* first by rule, whatever its score */
}

int hypotheses_evaluate(const Catalog *c, const Evidence *e, const Model *m, Store *exprs,
                        DxHypothesis **out, int *n_out, Err *err)
{
	*out = NULL;
	*n_out = 0;
	Ranked *rk = xcalloc((size_t)c->n, sizeof *rk);
	int rc = 0;
	for (int i = 0; i < c->n; i++) {
		const CatHyp *ch = &c->h[i];
		char **vals = NULL;
		int nv = 0;
		if (strcmp(ch->param, "dependency") == 0) {
			vals = e->deps;
			nv = e->n_deps;
		} else if (strcmp(ch->param, "class") == 0) {
			vals = e->classes;
			nv = e->n_classes;
		} else if (strcmp(ch->param, "caller") == 0) {
			vals = e->callers;
			nv = e->n_callers;
		}
		int have = 0;
		/* a parameter with no values (no workload class in the data or
		 * the model): nothing to evaluate, and nothing to suggest */
		const char *na = NULL;
		if (*ch->param && nv == 0)
			na = strcmp(ch->param, "class") == 0
			         ? "not applicable: no workload class (neither the data nor the model names "
			           "one), so no class can have grown"
			         : "not applicable: no dependency (neither the data nor the model names one)";
		for (int k = 0; k < (na ? 0 : nv ? nv : 1); k++) {
			Inst in;
			memset(&in, 0, sizeof in);
			if (nv) {
				in.value = vals[k];
				evidence_segment(vals[k], in.seg, sizeof in.seg);
				const char *pool = dx_pool_of(m, vals[k]);
				evidence_segment(pool ? pool : vals[k], in.pool, sizeof in.pool);
			}
			DxHypothesis h;
			int r = eval_instance(ch, &in, e, exprs, &h, err);
			if (r < 0) {
				rc = r;
				dx_hypothesis_fini(&h);
				goto fail;
			}
			if (r == 0)
				continue;
			if (!have || better_instance(&h, &rk[i].h, e)) {
				if (have)
					dx_hypothesis_fini(&rk[i].h);
				rk[i].h = h;
				have = 1;
			} else {
				dx_hypothesis_fini(&h);
			}
		}
		if (!have) {
			/* no instance applies (e.g. no optional dependency): listed
			 * last with nothing for or against, and the reason */
			rk[i].h.id = xstrdup(ch->id);
			rk[i].h.title = xstrdup(ch->title);
			rk[i].h.mechanism = xstrdup(ch->mechanism);
			rk[i].h.param = xstrdup(ch->param);
			rk[i].h.node = xstrdup("none");
			rk[i].h.check = xstrdup(ch->check);
			rk[i].h.check_why = ch->check_why ? xstrdup(ch->check_why) : NULL;
			rk[i].h.not_applicable = 1;
			if (na == NULL) {
				char why[600];
				snprintf(why, sizeof why, "not applicable: its condition (%s) holds for no %s",
				         ch->applies ? ch->applies : "applies", *ch->param ? ch->param : "instance");
				rk[i].h.rank_note = xstrdup(why);
			} else {
				rk[i].h.rank_note = xstrdup(na);
			}
		}
		rk[i].order = i;
		rk[i].null_hyp = !ch->has_signature;
		rk[i].specific = ch->applies != NULL;
	}
	qsort(rk, (size_t)c->n, sizeof *rk, cmp_ranked);
	int n_app = c->n;
	while (n_app > 0 && rk[n_app - 1].h.not_applicable)
		n_app--;
	place_null(rk, n_app, e);
	DxHypothesis *hs = xcalloc((size_t)c->n, sizeof *hs);
	for (int i = 0; i < c->n; i++) {
		hs[i] = rk[i].h;
		hs[i].rank = i + 1;
	}
	free(rk);
	*out = hs;
	*n_out = c->n;
	return 0;
fail:
	for (int i = 0; i < c->n; i++)
		dx_hypothesis_fini(&rk[i].h);
	free(rk);
	return rc;
}
