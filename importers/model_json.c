/*
 * model_json.c - the endpoint model file. Small, so it is parsed whole
 * with cJSON; the tree never leaves this file.
 */
#include "model_json.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

#define MODEL_MAX_BYTES (4 << 20)

/* Line and column of byte offset off in text. */
static void locate(const char *text, size_t off, long *line, long *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off && text[i]; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

typedef struct Ctx {
	const char *name;
	const char *text;
	Err *err;
} Ctx;

/* Semantic errors cannot be located by cJSON; point at the key's first
 * occurrence in the text, which is where a reader would look. */
static int bad(Ctx *c, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int bad(Ctx *c, const char *key, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	long line = 1, col = 1;
	if (key) {
		char needle[96];
		snprintf(needle, sizeof needle, "\"%s\"", key);
		const char *at = strstr(c->text, needle);
		if (at)
			locate(c->text, (size_t)(at - c->text), &line, &col);
	}
	return err_at(c->err, TT_EPARSE, c->name, line, col, "%s", msg);
}

static int get_str(Ctx *c, const cJSON *o, const char *key, char **out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	*out = NULL;
	if (v == NULL || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v))
		return bad(c, key, "\"%s\" must be a string", key);
	*out = xstrdup(v->valuestring);
	return 0;
}

static int get_num(Ctx *c, const cJSON *o, const char *key, double *out, double dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	*out = dflt;
	if (v == NULL || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
		return bad(c, key, "\"%s\" must be a finite number", key);
	*out = v->valuedouble;
	return 0;
}

static int get_tri(Ctx *c, const cJSON *o, const char *key, int *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	*out = MODEL_UNKNOWN;
	if (v == NULL || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsBool(v))
		return bad(c, key, "\"%s\" must be true or false", key);
	*out = cJSON_IsTrue(v);
	return 0;
}

static int parse_nodes(Ctx *c, const cJSON *arr, Model *m)
{
	if (arr == NULL)
		return 0;
	if (!cJSON_IsArray(arr))
		return bad(c, "nodes", "\"nodes\" must be an array");
	int n = cJSON_GetArraySize(arr);
	m->nodes = xcalloc((size_t)(n ? n : 1), sizeof *m->nodes);
	const cJSON *it;
	cJSON_ArrayForEach(it, arr) {
		ModelNode *mn = &m->nodes[m->n_nodes++];
		mn->mandatory = mn->core = MODEL_UNKNOWN;
		if (!cJSON_IsObject(it))
			return bad(c, "nodes", "each entry of \"nodes\" must be an object");
		if (get_str(c, it, "service", &mn->service) || get_str(c, it, "operation", &mn->operation) ||
		    get_str(c, it, "label", &mn->label) || get_str(c, it, "pool", &mn->pool) ||
		    get_tri(c, it, "mandatory", &mn->mandatory) || get_tri(c, it, "core", &mn->core) ||
		    get_str(c, it, "why", &mn->why))
			return TT_EPARSE;
		if (mn->service == NULL)
			return bad(c, "nodes", "a node in \"nodes\" has no \"service\"");
	}
	return 0;
}

static int parse_pools(Ctx *c, const cJSON *arr, Model *m)
{
	if (arr == NULL)
		return 0;
	if (!cJSON_IsArray(arr))
		return bad(c, "pools", "\"pools\" must be an array");
	int n = cJSON_GetArraySize(arr);
	m->pools = xcalloc((size_t)(n ? n : 1), sizeof *m->pools);
	const cJSON *it;
	cJSON_ArrayForEach(it, arr) {
		ModelPool *p = &m->pools[m->n_pools++];
		if (!cJSON_IsObject(it))
			return bad(c, "pools", "each entry of \"pools\" must be an object");
		double size;
		const cJSON *mx = cJSON_GetObjectItemCaseSensitive(it, "metrics");
		if (get_str(c, it, "name", &p->name) || get_str(c, it, "kind", &p->kind) ||
		    get_str(c, it, "node", &p->node) || get_num(c, it, "size", &size, 0) ||
		    get_str(c, it, "why", &p->why))
			return TT_EPARSE;
		if (p->name == NULL)
			return bad(c, "pools", "a pool has no \"name\"");
		if (size < 0 || size > 1e9)
			return bad(c, "size", "pool \"size\" out of range");
		p->size = (int64_t)size;
		if (mx && !cJSON_IsObject(mx))
			return bad(c, "metrics", "\"metrics\" must be an object");
		if (mx && (get_str(c, mx, "used", &p->used_metric) || get_str(c, mx, "max", &p->max_metric) ||
		           get_str(c, mx, "pending", &p->pending_metric) ||
		           get_str(c, mx, "wait", &p->wait_metric) ||
		           get_str(c, mx, "label_key", &p->label_key) ||
		           get_str(c, mx, "label_value", &p->label_value)))
			return TT_EPARSE;
	}
	return 0;
}

static int parse_budgets(Ctx *c, const cJSON *arr, Model *m)
{
	if (arr == NULL)
		return 0;
	if (!cJSON_IsArray(arr))
		return bad(c, "budgets", "\"budgets\" must be an array");
	int n = cJSON_GetArraySize(arr);
	m->budgets = xcalloc((size_t)(n ? n : 1), sizeof *m->budgets);
	const cJSON *it;
	cJSON_ArrayForEach(it, arr) {
		ModelBudget *b = &m->budgets[m->n_budgets++];
		if (!cJSON_IsObject(it))
			return bad(c, "budgets", "each entry of \"budgets\" must be an object");
		if (get_str(c, it, "id", &b->id) || get_str(c, it, "evidence", &b->evidence) ||
		    get_str(c, it, "op", &b->op) || get_num(c, it, "threshold", &b->threshold, NAN) ||
		    get_str(c, it, "unit", &b->unit) || get_str(c, it, "label", &b->label))
			return TT_EPARSE;
		if (b->id == NULL || b->evidence == NULL || isnan(b->threshold))
			return bad(c, "budgets", "a budget needs \"id\", \"evidence\" and \"threshold\"");
		if (b->op == NULL)
			b->op = xstrdup(">");
		if (strcmp(b->op, ">") != 0 && strcmp(b->op, "<") != 0)
			return bad(c, "op", "budget \"op\" must be \">\" or \"<\", not \"%s\"", b->op);
	}
	return 0;
}

int model_parse(const char *name, const char *text, size_t len, Model **out, Err *err)
{
	*out = NULL;
	Ctx c = {name, text, err};
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (root == NULL) {
		const char *at = cJSON_GetErrorPtr();
		long line = 1, col = 1;
		if (at && at >= text && at <= text + len)
			locate(text, (size_t)(at - text), &line, &col);
		return err_at(err, TT_EPARSE, name, line, col, "not valid JSON");
	}
	Model *m = xcalloc(1, sizeof *m);
	m->path = xstrdup(name);
	m->objective_pct = 99;
	int rc = 0;
	if (!cJSON_IsObject(root)) {
		rc = bad(&c, NULL, "a model must be a JSON object");
		goto out;
	}
	const cJSON *rootspec = cJSON_GetObjectItemCaseSensitive(root, "root");
	const cJSON *obj = cJSON_GetObjectItemCaseSensitive(root, "objective");
	const cJSON *cls = cJSON_GetObjectItemCaseSensitive(root, "classes");
	if ((rc = get_str(&c, root, "endpoint", &m->endpoint)))
		goto out;
	if (rootspec) {
		if (!cJSON_IsObject(rootspec)) {
			rc = bad(&c, "root", "\"root\" must be an object");
			goto out;
		}
		if ((rc = get_str(&c, rootspec, "service", &m->root_service)) ||
		    (rc = get_str(&c, rootspec, "operation", &m->root_operation)) ||
		    (rc = get_str(&c, rootspec, "why", &m->why_root)))
			goto out;
	}
	if (obj) {
		if (!cJSON_IsObject(obj)) {
			rc = bad(&c, "objective", "\"objective\" must be an object");
			goto out;
		}
		if ((rc = get_num(&c, obj, "threshold_ms", &m->objective_ms, 0)) ||
		    (rc = get_num(&c, obj, "percentile", &m->objective_pct, 99)) ||
		    (rc = get_str(&c, obj, "why", &m->why_objective)))
			goto out;
		if (m->objective_ms < 0 || m->objective_pct <= 0 || m->objective_pct > 100) {
			rc = bad(&c, "objective", "objective out of range");
			goto out;
		}
	}
	if (cls) {
		if (!cJSON_IsObject(cls)) {
			rc = bad(&c, "classes", "\"classes\" must be an object");
			goto out;
		}
		if ((rc = get_str(&c, cls, "attribute", &m->class_key)) ||
		    (rc = get_str(&c, cls, "why", &m->why_classes)))
			goto out;
		const cJSON *vals = cJSON_GetObjectItemCaseSensitive(cls, "values");
		const cJSON *mix = cJSON_GetObjectItemCaseSensitive(cls, "mix");
		if (vals && !cJSON_IsArray(vals)) {
			rc = bad(&c, "values", "\"values\" must be an array of strings");
			goto out;
		}
		int n = vals ? cJSON_GetArraySize(vals) : 0;
		if (n > 64) {
			rc = bad(&c, "values", "at most 64 classes");
			goto out;
		}
		m->classes = xcalloc((size_t)(n ? n : 1), sizeof *m->classes);
		m->class_mix = xcalloc((size_t)(n ? n : 1), sizeof *m->class_mix);
		const cJSON *it;
		if (vals) {
			cJSON_ArrayForEach(it, vals) {
				if (!cJSON_IsString(it)) {
					rc = bad(&c, "values", "\"values\" must be an array of strings");
					goto out;
				}
				m->class_mix[m->n_classes] = NAN;
				m->classes[m->n_classes++] = xstrdup(it->valuestring);
			}
		}
		if (mix) {
			if (!cJSON_IsObject(mix)) {
				rc = bad(&c, "mix", "\"mix\" must be an object of class -> share");
				goto out;
			}
			for (int i = 0; i < m->n_classes; i++) {
				double v;
				if ((rc = get_num(&c, mix, m->classes[i], &v, NAN)))
					goto out;
				m->class_mix[i] = v;
			}
		}
	}
	if ((rc = parse_nodes(&c, cJSON_GetObjectItemCaseSensitive(root, "nodes"), m)) ||
	    (rc = parse_pools(&c, cJSON_GetObjectItemCaseSensitive(root, "pools"), m)) ||
	    (rc = parse_budgets(&c, cJSON_GetObjectItemCaseSensitive(root, "budgets"), m)))
		goto out;
out:
	cJSON_Delete(root);
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
