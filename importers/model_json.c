/*
 * model_json.c - the endpoint model file. Small and edited by hand, so it
 * is read whole with the position-keeping reader (jpos.h): every error,
 * syntax or meaning, names the file, line and column of the value at
 * fault.
 */
#include "model_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "jpos.h"

#define MODEL_MAX_BYTES (4 << 20)

typedef struct Ctx {
	const char *name;
	Err *err;
} Ctx;

/* An error at the value at fault: "name:line:col: message" (jpos.h). */
#define jerr(c, at, ...) jp_err((c)->err, (c)->name, (at), __VA_ARGS__)

static int get_str(Ctx *c, const JpVal *o, const char *key, char **out)
{
	const JpVal *v = jp_get_nn(o, key);
	*out = NULL;
	if (v == NULL)
		return 0;
	if (v->type != JP_STR)
		return jerr(c, v, "\"%s\" must be a string", key);
	*out = xstrdup(v->s);
	return 0;
}

static int get_num(Ctx *c, const JpVal *o, const char *key, double *out, double dflt)
{
	const JpVal *v = jp_get_nn(o, key);
	*out = dflt;
	if (v == NULL)
		return 0;
	if (jp_num(v, out) || !isfinite(*out))
		return jerr(c, v, "\"%s\" must be a finite number", key);
	return 0;
}

static int get_tri(Ctx *c, const JpVal *o, const char *key, int *out)
{
	const JpVal *v = jp_get_nn(o, key);
	*out = MODEL_UNKNOWN;
	if (v == NULL)
		return 0;
	if (v->type != JP_BOOL)
		return jerr(c, v, "\"%s\" must be true or false", key);
	*out = v->b;
	return 0;
}

/* The array member key of o, or NULL when absent; an error when present
 * and not an array. */
static int get_arr(Ctx *c, const JpVal *o, const char *key, const JpVal **out)
{
	*out = jp_get(o, key);
	if (*out && (*out)->type != JP_ARR)
		return jerr(c, *out, "\"%s\" must be an array", key);
	return 0;
}

static int parse_nodes(Ctx *c, const JpVal *root, Model *m)
{
	const JpVal *arr;
	if (get_arr(c, root, "nodes", &arr))
		return TT_EPARSE;
	if (arr == NULL)
		return 0;
	m->nodes = xcalloc(arr->len ? arr->len : 1, sizeof *m->nodes);
	for (size_t i = 0; i < arr->len; i++) {
		const JpVal *it = arr->items[i];
		ModelNode *mn = &m->nodes[m->n_nodes++];
		mn->mandatory = mn->core = MODEL_UNKNOWN;
		if (it->type != JP_OBJ)
			return jerr(c, it, "each entry of \"nodes\" must be an object");
		if (get_str(c, it, "service", &mn->service) || get_str(c, it, "operation", &mn->operation) ||
		    get_str(c, it, "label", &mn->label) || get_str(c, it, "pool", &mn->pool) ||
		    get_tri(c, it, "mandatory", &mn->mandatory) || get_tri(c, it, "core", &mn->core) ||
		    get_str(c, it, "why", &mn->why))
			return TT_EPARSE;
		if (mn->service == NULL)
			return jerr(c, it, "a node in \"nodes\" has no \"service\"");
	}
	return 0;
}

static int parse_pools(Ctx *c, const JpVal *root, Model *m)
{
	const JpVal *arr;
	if (get_arr(c, root, "pools", &arr))
		return TT_EPARSE;
	if (arr == NULL)
		return 0;
	m->pools = xcalloc(arr->len ? arr->len : 1, sizeof *m->pools);
	for (size_t i = 0; i < arr->len; i++) {
		const JpVal *it = arr->items[i];
		ModelPool *p = &m->pools[m->n_pools++];
		if (it->type != JP_OBJ)
			return jerr(c, it, "each entry of \"pools\" must be an object");
		double size;
		const JpVal *mx = jp_get(it, "metrics");
		if (get_str(c, it, "name", &p->name) || get_str(c, it, "kind", &p->kind) ||
		    get_str(c, it, "node", &p->node) || get_num(c, it, "size", &size, 0) ||
		    get_str(c, it, "why", &p->why))
			return TT_EPARSE;
		if (p->name == NULL)
			return jerr(c, it, "a pool has no \"name\"");
		if (size < 0 || size > 1e9)
			return jerr(c, jp_get(it, "size"), "pool \"size\" out of range");
		p->size = (int64_t)size;
		if (mx && mx->type != JP_OBJ)
			return jerr(c, mx, "\"metrics\" must be an object");
		if (mx && (get_str(c, mx, "used", &p->used_metric) || get_str(c, mx, "max", &p->max_metric) ||
		           get_str(c, mx, "pending", &p->pending_metric) ||
		           get_str(c, mx, "wait", &p->wait_metric) ||
		           get_str(c, mx, "label_key", &p->label_key) ||
		           get_str(c, mx, "label_value", &p->label_value)))
			return TT_EPARSE;
	}
	return 0;
}

static int parse_budgets(Ctx *c, const JpVal *root, Model *m)
{
	const JpVal *arr;
	if (get_arr(c, root, "budgets", &arr))
		return TT_EPARSE;
	if (arr == NULL)
		return 0;
	m->budgets = xcalloc(arr->len ? arr->len : 1, sizeof *m->budgets);
	for (size_t i = 0; i < arr->len; i++) {
		const JpVal *it = arr->items[i];
		ModelBudget *b = &m->budgets[m->n_budgets++];
		if (it->type != JP_OBJ)
			return jerr(c, it, "each entry of \"budgets\" must be an object");
		if (get_str(c, it, "id", &b->id) || get_str(c, it, "evidence", &b->evidence) ||
		    get_str(c, it, "op", &b->op) || get_num(c, it, "threshold", &b->threshold, NAN) ||
		    get_str(c, it, "unit", &b->unit) || get_str(c, it, "label", &b->label))
			return TT_EPARSE;
		if (b->id == NULL || b->evidence == NULL || isnan(b->threshold))
			return jerr(c, it, "a budget needs \"id\", \"evidence\" and \"threshold\"");
		if (b->op == NULL)
			b->op = xstrdup(">");
		if (strcmp(b->op, ">") != 0 && strcmp(b->op, "<") != 0)
			return jerr(c, jp_get(it, "op"), "budget \"op\" must be \">\" or \"<\", not \"%s\"",
			            b->op);
	}
	return 0;
}

static int parse_classes(Ctx *c, const JpVal *cls, Model *m)
{
	if (cls->type != JP_OBJ)
		return jerr(c, cls, "\"classes\" must be an object");
	if (get_str(c, cls, "attribute", &m->class_key) || get_str(c, cls, "why", &m->why_classes))
		return TT_EPARSE;
	const JpVal *vals = jp_get(cls, "values"), *mix = jp_get(cls, "mix");
	if (vals && vals->type != JP_ARR)
		return jerr(c, vals, "\"values\" must be an array of strings");
	size_t n = vals ? vals->len : 0;
	if (n > 64)
		return jerr(c, vals, "at most 64 classes");
	m->classes = xcalloc(n ? n : 1, sizeof *m->classes);
	m->class_mix = xcalloc(n ? n : 1, sizeof *m->class_mix);
	for (size_t i = 0; i < n; i++) {
		const JpVal *it = vals->items[i];
		if (it->type != JP_STR)
			return jerr(c, it, "\"values\" must be an array of strings");
		m->class_mix[m->n_classes] = NAN;
		m->classes[m->n_classes++] = xstrdup(it->s);
	}
	if (mix) {
		if (mix->type != JP_OBJ)
			return jerr(c, mix, "\"mix\" must be an object of class -> share");
		for (int i = 0; i < m->n_classes; i++)
			if (get_num(c, mix, m->classes[i], &m->class_mix[i], NAN))
				return TT_EPARSE;
	}
	return 0;
}

static int parse_model(Ctx *c, const JpVal *root, Model *m)
{
	if (root->type != JP_OBJ)
		return jerr(c, root, "a model must be a JSON object");
	if (get_str(c, root, "endpoint", &m->endpoint))
		return TT_EPARSE;
	const JpVal *rootspec = jp_get(root, "root");
	if (rootspec) {
		if (rootspec->type != JP_OBJ)
			return jerr(c, rootspec, "\"root\" must be an object");
		if (get_str(c, rootspec, "service", &m->root_service) ||
		    get_str(c, rootspec, "operation", &m->root_operation) ||
		    get_str(c, rootspec, "why", &m->why_root))
			return TT_EPARSE;
	}
	const JpVal *obj = jp_get(root, "objective");
	if (obj) {
		if (obj->type != JP_OBJ)
			return jerr(c, obj, "\"objective\" must be an object");
		if (get_num(c, obj, "threshold_ms", &m->objective_ms, 0) ||
		    get_num(c, obj, "percentile", &m->objective_pct, 99) ||
		    get_str(c, obj, "why", &m->why_objective))
			return TT_EPARSE;
		if (m->objective_ms < 0)
			return jerr(c, jp_get(obj, "threshold_ms"), "objective out of range");
		if (m->objective_pct <= 0 || m->objective_pct > 100)
			return jerr(c, jp_get(obj, "percentile"), "objective out of range");
	}
	const JpVal *cls = jp_get(root, "classes");
	if (cls && parse_classes(c, cls, m))
		return TT_EPARSE;
	if (parse_nodes(c, root, m) || parse_pools(c, root, m) || parse_budgets(c, root, m))
		return TT_EPARSE;
	return 0;
}

int model_parse(const char *name, const char *text, size_t len, Model **out, Err *err)
{
	*out = NULL;
	Ctx c = {name, err};
	JpDoc *doc = NULL;
	JpVal *root = NULL;
	if (jp_parse(text, len, name, 1, &doc, &root, err))
		return TT_EPARSE;
	Model *m = xcalloc(1, sizeof *m);
	m->path = xstrdup(name);
	m->objective_pct = 99;
	int rc = parse_model(&c, root, m);
	jp_free(doc);
	if (rc) {
		model_free(m);
		return rc;
	}
	*out = m;
	return 0;
}

int model_load(const char *path, Model **out, Err *err)
{
	*out = NULL;
	Buf b;
	buf_init(&b);
	int rc = buf_read_file(&b, path, MODEL_MAX_BYTES, err);
	if (rc == 0)
		rc = model_parse(path, buf_str(&b), b.len, out, err);
	buf_fini(&b);
	return rc;
}
