/*
 * sheet.c - observation sheets (docs/formats/observation-sheet.md): the
 * database-free loader and the "sheet" import format.
 *
 * A sheet is small, so it is read whole into a position-keeping JSON tree
 * (jpos.h); every rule below reports the line and column of the value that
 * breaks it. Unknown top-level or observation keys are errors, so a typo
 * ("basline") cannot silently drop a number.
 */
#include "sheet.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "formats.h"
#include "jpos.h"
#include "store.h"
#include "timefmt.h"

#define SHEET_MAX_BYTES ((size_t)16 << 20)
#define SHEET_MAX_NAME 128

typedef struct Unit {
	const char *name;
	const char *norm_unit;
	double mul, div;       /* norm = value * mul / div */
	double lo, hi;         /* allowed range */
} Unit;

static const Unit units[] = {
	{"ms", "ms", 1, 1, 0, INFINITY},
	{"s", "ms", 1e3, 1, 0, INFINITY},
	{"us", "ms", 1, 1e3, 0, INFINITY},
	{"ns", "ms", 1, 1e6, 0, INFINITY},
	{"%", "ratio", 1, 100, 0, 100},
	{"ratio", "ratio", 1, 1, 0, 1},
	{"count", "count", 1, 1, 0, INFINITY},
	{"1/s", "1/s", 1, 1, 0, INFINITY},
	{"bytes", "bytes", 1, 1, 0, INFINITY},
};

#define N_UNITS (sizeof units / sizeof units[0])

const char *const *sheet_units(void)
{
	static const char *names[N_UNITS + 1];
	for (size_t i = 0; i < N_UNITS; i++)
		names[i] = units[i].name;
	names[N_UNITS] = NULL;
	return names;
}

static const Unit *unit_find(const char *s)
{
	for (size_t i = 0; i < N_UNITS; i++)
		if (strcmp(units[i].name, s) == 0)
			return &units[i];
	return NULL;
}

void sheet_free(Sheet *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->n_obs; i++) {
		free((char *)s->obs[i].name);
		free((char *)s->obs[i].unit);
		free((char *)s->obs[i].labels_json);
		free((char *)s->obs[i].note);
	}
	free(s->obs);
	free((char *)s->name);
	free((char *)s->endpoint);
	free((char *)s->description);
	free((char *)s->window);
	free((char *)s->baseline);
	free(s);
}

const SheetObs *sheet_find(const Sheet *s, const char *name, int role)
{
	for (size_t i = 0; s && i < s->n_obs; i++)
		if (s->obs[i].role == role && strcmp(s->obs[i].name, name) == 0 &&
		    strcmp(s->obs[i].labels_json, "{}") == 0)
			return &s->obs[i];
	return NULL;
}

/* ---- parsing -------------------------------------------------------------- */

typedef struct P {
	const char *name;
	Err *err;
	Sheet *s;
	size_t cap;
} P;

/* An error at the value at fault: "name:line:col: message" (jpos.h). */
#define jerr(p, at, ...) jp_err((p)->err, (p)->name, (at), __VA_ARGS__)

/* A string field without NUL bytes, or an error. */
static int text(P *p, const JpVal *v, const char *what, int nonempty, char **out)
{
	if (v->type != JP_STR)
		return jerr(p, v, "%s must be a string, not %s", what, jp_type_name(v->type));
	if (memchr(v->s, '\0', v->n))
		return jerr(p, v, "%s must not contain NUL characters", what);
	if (nonempty && v->n == 0)
		return jerr(p, v, "%s must not be empty", what);
	*out = xstrdup(v->s);
	return 0;
}

static int finite(P *p, const JpVal *v, const char *what, double *out)
{
	if (v->type != JP_NUM)
		return jerr(p, v, "%s must be a number, not %s", what, jp_type_name(v->type));
	if (jp_num(v, out) || !isfinite(*out))
		return jerr(p, v, "%s must be a finite number", what);
	return 0;
}

/* Evidence names: dot-separated segments of [a-z0-9_], e.g.
 * "dep.pricing.client_wait.p99_ms". */
static int name_ok(const char *s, size_t n)
{
	if (n == 0 || n > SHEET_MAX_NAME || s[0] == '.' || s[n - 1] == '.')
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '.') {
			if (s[i + 1] == '.')
				return 0;
		} else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
			return 0;
		}
	}
	return 1;
}

static int ends_with(const char *s, const char *sfx)
{
	size_t n = strlen(s), m = strlen(sfx);
	return n >= m && strcmp(s + n - m, sfx) == 0;
}

/* A window: a label, or a time range "A..B" when the text contains "..". */
static int window(P *p, const JpVal *v, const char *what, char **label, int *has_range,
                  int64_t *from, int64_t *to)
{
	if (text(p, v, what, 1, label))
		return TT_EPARSE;
	*has_range = 0;
	if (strstr(*label, "..") == NULL)
		return 0;
	Err e = {0};
	if (time_parse_range(*label, from, to, &e))
		return jerr(p, v, "%s \"%s\" looks like a time range but is not one: %s", what, *label,
		            e.msg);
	if (*from == INT64_MIN || *to == INT64_MAX)
		return jerr(p, v, "%s must have both ends (A..B)", what);
	*has_range = 1;
	return 0;
}

/* Canonical labels of the object o merged over base (o wins). */
static int labels(P *p, const JpVal *base, const JpVal *o, char **out)
{
	const JpVal *src[2] = {base, o};
	size_t n = (base ? base->len : 0) + (o ? o->len : 0);
	StoreLabel *sl = xmalloc((n ? n : 1) * sizeof *sl);
	size_t k = 0;
	for (int s = 1; s >= 0; s--) {
		const JpVal *obj = src[s];
		if (obj == NULL)
			continue;
		if (obj->type != JP_OBJ) {
			free(sl);
			return jerr(p, obj, "labels must be an object of strings");
		}
		for (size_t i = 0; i < obj->len; i++) {
			const JpMember *m = &obj->members[i];
			if (m->val->type != JP_STR) {
				free(sl);
				return jerr(p, m->val, "label \"%.60s\" must be a string", m->key);
			}
			int dup = 0;
			for (size_t j = 0; j < k; j++)
				if (sl[j].key_len == m->key_len && memcmp(sl[j].key, m->key, m->key_len) == 0)
					dup = 1;
			if (!dup)
				sl[k++] = (StoreLabel){m->key, m->key_len, m->val->s, m->val->n};
		}
	}
	*out = store_labels_json(sl, k);
	free(sl);
	return *out ? 0 : TT_EPARSE;
}

static SheetObs *obs_new(P *p)
{
	if (p->s->n_obs == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 16;
		p->s->obs = xrealloc(p->s->obs, p->cap * sizeof *p->s->obs);
	}
	SheetObs *o = &p->s->obs[p->s->n_obs++];
	memset(o, 0, sizeof *o);
	return o;
}

static int observation(P *p, const JpVal *ob, const JpVal *base_labels)
{
	if (ob->type != JP_OBJ)
		return jerr(p, ob, "an observation must be an object");
	static const char *const known[] = {"name", "value", "unit", "baseline", "labels", "note"};
	for (size_t i = 0; i < ob->len; i++) {
		int ok = 0;
		for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
			ok |= strcmp(ob->members[i].key, known[k]) == 0;
		if (!ok)
			return jerr(p, ob->members[i].val,
			            "unknown observation field \"%.40s\" (name, value, unit, baseline, "
			            "labels, note)",
			            ob->members[i].key);
	}
	const JpVal *nv = jp_get(ob, "name"), *vv = jp_get(ob, "value"), *uv = jp_get(ob, "unit");
	if (nv == NULL)
		return jerr(p, ob, "an observation needs a \"name\"");
	if (vv == NULL)
		return jerr(p, ob, "observation needs a \"value\"");
	if (uv == NULL)
		return jerr(p, ob, "observation needs a \"unit\" (%s)", "ms, s, us, ns, %, ratio, count, 1/s, bytes");
	if (nv->type != JP_STR || !name_ok(nv->s, nv->n))
		return jerr(p, nv,
		            "observation name must be dot-separated [a-z0-9_] segments such as "
		            "\"ingress.p99_ms\"%s",
		            nv->type == JP_STR && memchr(nv->s, '@', nv->n)
		                ? " (give a baseline with the \"baseline\" field, not name@baseline)"
		                : "");
	if (uv->type != JP_STR)
		return jerr(p, uv, "unit must be a string");
	const Unit *u = unit_find(uv->s);
	if (u == NULL)
		return jerr(p, uv, "unknown unit \"%.20s\" (ms, s, us, ns, %%, ratio, count, 1/s, bytes)",
		            uv->s);
	int duration = strcmp(u->norm_unit, "ms") == 0;
	if (ends_with(nv->s, "_ms") && !duration)
		return jerr(p, uv, "'%s' is a duration (its name ends in _ms); unit \"%s\" is not one",
		            nv->s, u->name);
	if (ends_with(nv->s, ".ratio") && strcmp(u->norm_unit, "ratio") != 0)
		return jerr(p, uv, "'%s' is a ratio; give it in \"ratio\" or \"%%\", not \"%s\"", nv->s,
		            u->name);
	char *lj = NULL, *note = NULL;
	if (labels(p, base_labels, jp_get(ob, "labels"), &lj))
		return TT_EPARSE;
	const JpVal *notev = jp_get(ob, "note");
	if (notev && text(p, notev, "note", 0, &note)) {
		free(lj);
		return TT_EPARSE;
	}
	const JpVal *vals[2] = {vv, jp_get(ob, "baseline")};
	int rc = 0;
	for (int role = 0; rc == 0 && role < 2; role++) {
		const JpVal *v = vals[role];
		if (v == NULL)
			continue;
		double x;
		const char *what = role ? "baseline" : "value";
		if ((rc = finite(p, v, what, &x)) != 0)
			break;
		if (x < u->lo || x > u->hi) {
			if (isinf(u->hi))
				rc = jerr(p, v, "%s %.15g must not be negative for unit \"%s\"", what, x,
				          u->name);
			else
				rc = jerr(p, v, "%s %.15g is outside [%g, %g] for unit \"%s\"", what, x, u->lo,
				          u->hi, u->name);
			break;
		}
		for (size_t i = 0; i < p->s->n_obs; i++) {
			SheetObs *o = &p->s->obs[i];
			if (o->role == role && strcmp(o->name, nv->s) == 0 && strcmp(o->labels_json, lj) == 0) {
				rc = jerr(p, nv, "observation '%s'%s is given twice (first at line %ld)", nv->s,
				          strcmp(lj, "{}") ? " with these labels" : "", o->line);
				break;
			}
		}
		if (rc)
			break;
		SheetObs *o = obs_new(p);
		o->name = xstrdup(nv->s);
		o->role = role;
		o->value = x;
		o->unit = xstrdup(u->name);
		o->norm = x * u->mul / u->div;
		o->norm_unit = u->norm_unit;
		o->labels_json = xstrdup(lj);
		o->note = note ? xstrdup(note) : NULL;
		o->line = ob->line;
		o->col = ob->col;
	}
	free(lj);
	free(note);
	return rc;
}

int sheet_parse(const char *name, const char *txt, size_t len, Sheet **out, Err *err)
{
	*out = NULL;
	JpDoc *doc = NULL;
	JpVal *root = NULL;
	if (jp_parse(txt, len, name, 1, &doc, &root, err))
		return TT_EPARSE;
	P p = {.name = name, .err = err, .s = xcalloc(1, sizeof(Sheet))};
	Sheet *s = p.s;
	int rc = 0;
	if (root->type != JP_OBJ) {
		rc = jerr(&p, root, "a sheet is a JSON object");
		goto out;
	}
	static const char *const known[] = {"sheet",  "version",         "description", "endpoint",
	                                    "window", "baseline_window", "labels",      "observations"};
	for (size_t i = 0; i < root->len; i++) {
		int ok = 0;
		for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
			ok |= strcmp(root->members[i].key, known[k]) == 0;
		if (!ok) {
			rc = jerr(&p, root->members[i].val,
			          "unknown sheet field \"%.40s\" (sheet, version, description, endpoint, "
			          "window, baseline_window, labels, observations)",
			          root->members[i].key);
			goto out;
		}
	}
	const JpVal *v;
	if ((v = jp_get(root, "version")) != NULL) {
		double ver;
		if ((rc = finite(&p, v, "version", &ver)) != 0)
			goto out;
		if (ver != 1) {
			rc = jerr(&p, v, "sheet version %.15g is not supported (this tailtriage reads 1)", ver);
			goto out;
		}
	}
	if ((v = jp_get(root, "sheet")) == NULL) {
		rc = jerr(&p, root, "a sheet needs a \"sheet\" name");
		goto out;
	}
	if ((rc = text(&p, v, "sheet", 1, (char **)&s->name)) != 0)
		goto out;
	if ((v = jp_get(root, "endpoint")) && (rc = text(&p, v, "endpoint", 1, (char **)&s->endpoint)))
		goto out;
	if ((v = jp_get(root, "description")) &&
	    (rc = text(&p, v, "description", 0, (char **)&s->description)))
		goto out;
	if ((v = jp_get(root, "window")) == NULL) {
		rc = jerr(&p, root, "a sheet needs a \"window\" (a label such as \"incident\" or a range "
		                    "A..B)");
		goto out;
	}
	if ((rc = window(&p, v, "window", (char **)&s->window, &s->window_has_range,
	                 &s->window_from_ns, &s->window_to_ns)) != 0)
		goto out;
	if ((v = jp_get(root, "baseline_window")) != NULL) {
		if ((rc = window(&p, v, "baseline_window", (char **)&s->baseline, &s->baseline_has_range,
		                 &s->baseline_from_ns, &s->baseline_to_ns)) != 0)
			goto out;
	} else {
		s->baseline = xstrdup("baseline");
	}
	const JpVal *base_labels = jp_get(root, "labels");
	if (base_labels && base_labels->type != JP_OBJ) {
		rc = jerr(&p, base_labels, "labels must be an object of strings");
		goto out;
	}
	const JpVal *obs = jp_get(root, "observations");
	if (obs == NULL || obs->type != JP_ARR) {
		rc = jerr(&p, obs ? obs : root, "a sheet needs an \"observations\" array");
		goto out;
	}
	if (obs->len == 0) {
		rc = jerr(&p, obs, "the sheet has no observations");
		goto out;
	}
	for (size_t i = 0; i < obs->len; i++)
		if ((rc = observation(&p, obs->items[i], base_labels)) != 0)
			goto out;
out:
	jp_free(doc);
	if (rc) {
		sheet_free(s);
		return TT_EPARSE;
	}
	*out = s;
	return 0;
}

/* Reads all of f (at most SHEET_MAX_BYTES) into b. */
static int slurp(FILE *f, const char *name, Buf *b, Err *err)
{
	char chunk[1 << 15];
	size_t n;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
		if (b->len + n > SHEET_MAX_BYTES)
			return err_at(err, TT_EPARSE, name, 1, 1, "a sheet must be smaller than %zu MiB",
			              SHEET_MAX_BYTES >> 20);
		buf_add(b, chunk, n);
	}
	if (ferror(f))
		return err_set(err, TT_EIO, "%s: read error: %s", name, strerror(errno));
	if (b->p == NULL)
		buf_add(b, "", 0);
	return 0;
}

int sheet_load(const char *path, Sheet **out, Err *err)
{
	*out = NULL;
	Buf b;
	buf_init(&b);
	int rc = buf_read_file(&b, path, SHEET_MAX_BYTES, err);
	if (rc == 0)
		rc = sheet_parse(path, b.p, b.len, out, err);
	buf_fini(&b);
	return rc;
}

/* ---- the import format ---------------------------------------------------- */

int sheet_run(ImportCtx *ctx, FILE *f)
{
	Buf b;
	buf_init(&b);
	Sheet *s = NULL;
	int rc = slurp(f, ctx->name, &b, ctx->err);
	if (rc == 0) {
		import_progress(ctx, b.len);
		rc = sheet_parse(ctx->name, b.p, b.len, &s, ctx->err);
	}
	for (size_t i = 0; rc == 0 && i < s->n_obs; i++) {
		const SheetObs *o = &s->obs[i];
		int baseline = o->role == SHEET_BASELINE;
		StoreObservation so = {
			.sheet = s->name,
			.endpoint = s->endpoint,
			.name = o->name,
			.role = baseline ? "baseline" : "window",
			.window = baseline ? s->baseline : s->window,
			.has_range = baseline ? s->baseline_has_range : s->window_has_range,
			.from_ns = baseline ? s->baseline_from_ns : s->window_from_ns,
			.to_ns = baseline ? s->baseline_to_ns : s->window_to_ns,
			.value = o->value,
			.unit = o->unit,
			.norm = o->norm,
			.norm_unit = o->norm_unit,
			.labels_json = o->labels_json,
		};
		int outcome = 0;
		double old = 0;
		rc = store_observation_add(ctx->st, ctx->source_id, &so, &outcome, &old, ctx->err);
		if (rc)
			break;
		if (outcome == STORE_OBS_ADDED)
			ctx->counts->observations_added++;
		else if (outcome != STORE_OBS_CONFLICT)
			ctx->counts->observations_duplicate++;
		if (outcome == STORE_OBS_CONFLICT)
			rc = err_at(ctx->err, TT_EPARSE, ctx->name, o->line, o->col,
			            "sheet '%s' already has %s (%s) = %.15g from an earlier import, and this "
			            "file says %.15g %s (or a different window); give the sheet a new name to "
			            "keep both",
			            s->name, o->name, so.role, old, o->value, o->unit);
	}
	sheet_free(s);
	buf_fini(&b);
	return rc;
}

int sheet_sniff(const char *head, size_t len)
{
	size_t i = 0;
	while (i < len && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t'))
		i++;
	if (i == len || head[i] != '{')
		return 0;
	int obs = 0, sheet = 0;
	for (; i < len; i++) {
		if (len - i >= 14 && memcmp(head + i, "\"observations\"", 14) == 0)
			obs = 1;
		if (len - i >= 7 && memcmp(head + i, "\"sheet\"", 7) == 0)
			sheet = 1;
	}
	return obs ? (sheet ? 85 : 75) : 0;
}
