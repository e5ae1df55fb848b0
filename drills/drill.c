/*
 * drill.c - drill files (docs/drills.md): loading, validation, the catalog.
 *
 * A drill file is small and written by hand, so it is read whole into a
 * position-keeping JSON tree (importers/jpos.h) and every rule reports the
 * line and column of the value that breaks it. Unknown keys are errors so
 * that a typo ("anwser_key") cannot silently drop part of a drill. The
 * answer key is checked against the questions: every key id must be one
 * of the offered choices, so a drill cannot ask something it cannot score.
 */
#include "drill.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "diagnose.h"
#include "hash.h"
#include "jpos.h"
#include "paths.h"
#include "timefmt.h"

#define DRILL_MAX_BYTES ((size_t)1 << 20)


/* ---- freeing ------------------------------------------------------------- */

static void strv_free_n(char **v, int n)
{
	for (int i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

void drill_strv_free(char **v)
{
	for (int i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static void choices_free(DrillChoice *c, int n)
{
	for (int i = 0; i < n; i++) {
		free(c[i].id);
		free(c[i].text);
	}
	free(c);
}

static void notes_free(DrillNote *c, int n)
{
	for (int i = 0; i < n; i++) {
		free(c[i].id);
		free(c[i].why);
	}
	free(c);
}

void drill_free(Drill *d)
{
	if (d == NULL)
		return;
	free(d->path);
	free(d->dir);
	free(d->id);
	free(d->title);
	free(d->summary);
	free(d->brief);
	free(d->model_path);
	free(d->sheet_path);
	strv_free_n(d->files, d->n_files);
	for (int i = 0; i < d->n_runs; i++) {
		free(d->runs[i].name);
		free(d->runs[i].scenario);
		strv_free_n(d->runs[i].keys, d->runs[i].n_set);
		strv_free_n(d->runs[i].values, d->runs[i].n_set);
	}
	free(d->runs);
	choices_free(d->hyp_choices, d->n_hyp_choices);
	choices_free(d->check_choices, d->n_check_choices);
	choices_free(d->decision_choices, d->n_decision_choices);
	strv_free_n(d->local_decisions, d->n_local_decisions);
	free(d->prompt);
	notes_free(d->key_hyp, d->n_key_hyp);
	for (int i = 0; i < d->n_key_checks; i++) {
		free(d->key_checks[i].hyp);
		strv_free_n(d->key_checks[i].accept, d->key_checks[i].n_accept);
		free(d->key_checks[i].why);
	}
	free(d->key_checks);
	strv_free_n(d->key_decisions, d->n_key_decisions);
	free(d->decision_why);
	for (int i = 0; i < d->n_partial; i++) {
		free(d->partial[i].id);
		free(d->partial[i].why);
	}
	free(d->partial);
	notes_free(d->wrong_hyp, d->n_wrong_hyp);
	notes_free(d->wrong_check, d->n_wrong_check);
	notes_free(d->wrong_decision, d->n_wrong_decision);
	free(d->model_answer);
	for (int i = 0; i < d->n_checklist; i++) {
		DrillPoint *p = &d->checklist[i];
		free(p->id);
		free(p->point);
		for (int j = 0; j < p->n_any; j++)
			drill_strv_free(p->any[j]);
		free(p->any);
	}
	free(d->checklist);
	for (int i = 0; i < d->n_hints; i++)
		free(d->hints[i].text);
	free(d->hints);
	free(d->debrief);
	free(d->engine_note);
	free(d);
}

/* ---- parsing helpers -------------------------------------------------- */

typedef struct P {
	const char *name;
	const char *dir;
	Err *err;
	Drill *d;
} P;

/* An error at the value at fault: "name:line:col: message" (jpos.h). */
#define jerr(p, at, ...) jp_err((p)->err, (p)->name, (at), __VA_ARGS__)

/* Every key of object o must be one of the NULL-terminated known[]. */
static int only_keys(P *p, const JpVal *o, const char *what, const char *const *known)
{
	for (size_t i = 0; i < o->len; i++) {
		const JpMember *m = &o->members[i];
		int ok = 0;
		for (int k = 0; known[k] && !ok; k++)
			ok = strlen(known[k]) == m->key_len && memcmp(known[k], m->key, m->key_len) == 0;
		if (!ok) {
			Buf b;
			buf_init(&b);
			for (int k = 0; known[k]; k++)
				buf_printf(&b, "%s%s", k ? ", " : "", known[k]);
			int rc = jerr(p, m->val, "%s: unknown key \"%.60s\" (known: %s)", what, m->key,
			              buf_str(&b));
			buf_fini(&b);
			return rc;
		}
	}
	return 0;
}

static int want_obj(P *p, const JpVal *v, const char *what)
{
	if (v->type != JP_OBJ)
		return jerr(p, v, "%s must be an object, not %s", what, jp_type_name(v->type));
	return 0;
}

static int want_arr(P *p, const JpVal *v, const char *what, int nonempty)
{
	if (v->type != JP_ARR)
		return jerr(p, v, "%s must be an array, not %s", what, jp_type_name(v->type));
	if (nonempty && v->len == 0)
		return jerr(p, v, "%s must not be empty", what);
	return 0;
}

static int text(P *p, const JpVal *v, const char *what, char **out)
{
	if (v->type != JP_STR)
		return jerr(p, v, "%s must be a string, not %s", what, jp_type_name(v->type));
	if (memchr(v->s, '\0', v->n))
		return jerr(p, v, "%s must not contain NUL characters", what);
	if (v->n == 0)
		return jerr(p, v, "%s must not be empty", what);
	for (size_t i = 0; i < v->n; i++) {
		unsigned char c = (unsigned char)v->s[i];
		if (c < 0x20 && c != '\n' && c != '\t')
			return jerr(p, v, "%s must not contain control characters", what);
	}
	*out = xstrdup(v->s);
	return 0;
}

/* A string, or an array of strings (paragraphs) joined by blank lines. */
static int prose(P *p, const JpVal *v, const char *what, char **out)
{
	if (v->type == JP_STR)
		return text(p, v, what, out);
	if (want_arr(p, v, what, 1))
		return TT_EPARSE;
	Buf b;
	buf_init(&b);
	for (size_t i = 0; i < v->len; i++) {
		char *s = NULL;
		if (text(p, v->items[i], what, &s)) {
			buf_fini(&b);
			return TT_EPARSE;
		}
		if (i)
			buf_adds(&b, "\n\n");
		buf_adds(&b, s);
		free(s);
	}
	*out = xstrdup(buf_str(&b));
	buf_fini(&b);
	return 0;
}

static int number(P *p, const JpVal *v, const char *what, double lo, double hi, double *out)
{
	if (v->type != JP_NUM)
		return jerr(p, v, "%s must be a number, not %s", what, jp_type_name(v->type));
	if (jp_num(v, out) || !isfinite(*out))
		return jerr(p, v, "%s must be a finite number", what);
	if (*out < lo || *out > hi)
		return jerr(p, v, "%s must be between %g and %g", what, lo, hi);
	return 0;
}

/* Ids: [a-z0-9] words joined by '-', '_' or '.', optionally ":<node>"
 * (a service, class or host name). */
static int id_ok(const char *s)
{
	if (*s == '\0')
		return 0;
	int colon = 0;
	for (const char *c = s; *c; c++) {
		if ((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' ||
		    *c == '.')
			continue;
		if (*c == ':' && !colon && c != s && c[1] != '\0') {
			colon = 1;
			continue;
		}
		return 0;
	}
	return 1;
}

static int ident(P *p, const JpVal *v, const char *what, char **out)
{
	if (text(p, v, what, out))
		return TT_EPARSE;
	if (strlen(*out) > 96 || !id_ok(*out)) {
		free(*out);
		*out = NULL;
		return jerr(p, v, "%s \"%.60s\" must be lowercase letters, digits and - _ . with an"
		                  " optional :node",
		            what, v->s);
	}
	return 0;
}

static char *resolve(const char *dir, const char *rel)
{
	if (rel[0] == '/' || dir == NULL || dir[0] == '\0' || strcmp(dir, ".") == 0)
		return xstrdup(rel);
	Buf b;
	buf_init(&b);
	buf_printf(&b, "%s/%s", dir, rel);
	char *s = xstrdup(buf_str(&b));
	buf_fini(&b);
	return s;
}

static int path_field(P *p, const JpVal *v, const char *what, char **out)
{
	char *rel = NULL;
	if (text(p, v, what, &rel))
		return TT_EPARSE;
	*out = resolve(p->dir, rel);
	free(rel);
	return 0;
}

static int find_choice(const DrillChoice *c, int n, const char *id)
{
	for (int i = 0; i < n; i++)
		if (strcmp(c[i].id, id) == 0)
			return i;
	return -1;
}

/* ---- data ---------------------------------------------------------------- */

static int parse_run(P *p, const JpVal *v, DrillRun *r)
{
	static const char *const keys[] = {"name", "scenario", "set", NULL};
	if (want_obj(p, v, "a run") || only_keys(p, v, "run", keys))
		return TT_EPARSE;
	JpVal *name = jp_get(v, "name"), *sc = jp_get(v, "scenario"), *set = jp_get(v, "set");
	if (name == NULL)
		return jerr(p, v, "a run needs a \"name\"");
	if (ident(p, name, "run name", &r->name))
		return TT_EPARSE;
	if (sc) {
		if (ident(p, sc, "scenario", &r->scenario))
			return TT_EPARSE;
	} else {
		r->scenario = xstrdup("mercury");
	}
	if (set == NULL)
		return 0;
	if (want_obj(p, set, "\"set\""))
		return TT_EPARSE;
	r->keys = xcalloc(set->len ? set->len : 1, sizeof *r->keys);
	r->values = xcalloc(set->len ? set->len : 1, sizeof *r->values);
	for (size_t i = 0; i < set->len; i++) {
		const JpMember *m = &set->members[i];
		if (m->key_len == 0 || m->key_len > 64 || memchr(m->key, '\0', m->key_len) ||
		    !id_ok(m->key))
			return jerr(p, m->val, "parameter name \"%.60s\" is not valid", m->key);
		if (m->val->type != JP_STR && m->val->type != JP_NUM)
			return jerr(p, m->val, "parameter %s must be a string or a number, not %s",
			            m->key, jp_type_name(m->val->type));
		if (m->val->type == JP_STR && (m->val->n == 0 || memchr(m->val->s, '\0', m->val->n)))
			return jerr(p, m->val, "parameter %s must not be empty", m->key);
		r->keys[r->n_set] = xstrdup(m->key);
		r->values[r->n_set] = xstrdup(m->val->s);
		r->n_set++;
	}
	return 0;
}

static int parse_range(P *p, const JpVal *v, const char *what, DrillRange *out)
{
	Drill *d = p->d;
	if (v->type == JP_STR) {
		Err e = {0};
		if (memchr(v->s, '\0', v->n) ||
		    time_parse_range(v->s, &out->from_ns, &out->to_ns, &e))
			return jerr(p, v, "%s: %s", what, e.msg[0] ? e.msg : "not a time range");
		if (out->from_ns == INT64_MIN || out->to_ns == INT64_MAX || out->to_ns <= out->from_ns)
			return jerr(p, v, "%s must be a closed range A..B with A before B", what);
		out->kind = DRILL_RANGE_TIME;
		return 0;
	}
	static const char *const keys[] = {"run", "phase", NULL};
	if (want_obj(p, v, what) || only_keys(p, v, what, keys))
		return TT_EPARSE;
	JpVal *run = jp_get(v, "run"), *ph = jp_get(v, "phase");
	if (run == NULL || ph == NULL)
		return jerr(p, v, "%s needs \"run\" and \"phase\" (or a time range text)", what);
	char *rn = NULL, *pn = NULL;
	if (text(p, run, "run", &rn))
		return TT_EPARSE;
	out->run = -1;
	for (int i = 0; i < d->n_runs; i++)
		if (strcmp(d->runs[i].name, rn) == 0)
			out->run = i;
	free(rn);
	if (out->run < 0)
		return jerr(p, run, "%s: no run named \"%.60s\" in data.runs", what, run->s);
	if (text(p, ph, "phase", &pn))
		return TT_EPARSE;
	if (strcmp(pn, "baseline") == 0)
		out->phase = DRILL_PHASE_BASELINE;
	else if (strcmp(pn, "incident") == 0)
		out->phase = DRILL_PHASE_INCIDENT;
	else {
		free(pn);
		return jerr(p, ph, "phase must be \"baseline\" or \"incident\"");
	}
	free(pn);
	out->kind = DRILL_RANGE_RUN;
	return 0;
}

static int parse_data(P *p, const JpVal *v)
{
	static const char *const keys[] = {"sheet", "runs", "files", "window", "baseline", NULL};
	Drill *d = p->d;
	if (want_obj(p, v, "\"data\"") || only_keys(p, v, "data", keys))
		return TT_EPARSE;
	JpVal *x;
	if ((x = jp_get(v, "sheet")) && path_field(p, x, "data.sheet", &d->sheet_path))
		return TT_EPARSE;
	if ((x = jp_get(v, "runs"))) {
		if (want_arr(p, x, "data.runs", 1))
			return TT_EPARSE;
		d->runs = xcalloc(x->len, sizeof *d->runs);
		for (size_t i = 0; i < x->len; i++) {
			if (parse_run(p, x->items[i], &d->runs[d->n_runs++]))
				return TT_EPARSE;
			for (int j = 0; j + 1 < d->n_runs; j++)
				if (strcmp(d->runs[j].name, d->runs[d->n_runs - 1].name) == 0)
					return jerr(p, x->items[i], "two runs are named \"%s\"",
					            d->runs[j].name);
		}
	}
	if ((x = jp_get(v, "files"))) {
		if (want_arr(p, x, "data.files", 1))
			return TT_EPARSE;
		d->files = xcalloc(x->len, sizeof *d->files);
		for (size_t i = 0; i < x->len; i++)
			if (path_field(p, x->items[i], "data.files entry", &d->files[d->n_files++]))
				return TT_EPARSE;
	}
	if ((x = jp_get(v, "window")) && parse_range(p, x, "data.window", &d->window))
		return TT_EPARSE;
	if ((x = jp_get(v, "baseline")) && parse_range(p, x, "data.baseline", &d->baseline))
		return TT_EPARSE;
	if (d->sheet_path == NULL && d->n_runs == 0 && d->n_files == 0)
		return jerr(p, v, "data needs a \"sheet\", \"runs\" or \"files\"");
	if (d->baseline.kind != DRILL_RANGE_NONE && d->window.kind == DRILL_RANGE_NONE)
		return jerr(p, v, "data.baseline needs a data.window");
	return 0;
}

/* ---- questions ------------------------------------------------------------ */

static int parse_choices(P *p, const JpVal *v, const char *what, DrillChoice **out, int *n)
{
	if (want_arr(p, v, what, 1))
		return TT_EPARSE;
	*out = xcalloc(v->len, sizeof **out);
	for (size_t i = 0; i < v->len; i++) {
		const JpVal *c = v->items[i];
		DrillChoice *ch = &(*out)[*n];
		if (c->type == JP_OBJ) {
			static const char *const keys[] = {"id", "text", NULL};
			if (only_keys(p, c, what, keys))
				return TT_EPARSE;
			JpVal *id = jp_get(c, "id"), *t = jp_get(c, "text");
			if (id == NULL)
				return jerr(p, c, "a choice needs an \"id\"");
			if (ident(p, id, "choice id", &ch->id))
				return TT_EPARSE;
			(*n)++;
			if (t && text(p, t, "choice text", &ch->text))
				return TT_EPARSE;
		} else {
			if (ident(p, c, "choice id", &ch->id))
				return TT_EPARSE;
			(*n)++;
		}
		if (find_choice(*out, *n - 1, ch->id) >= 0)
			return jerr(p, c, "choice \"%s\" is listed twice", ch->id);
	}
	return 0;
}

static int parse_questions(P *p, const JpVal *v)
{
	Drill *d = p->d;
	if (want_obj(p, v, "\"questions\""))
		return TT_EPARSE;
	if (d->kind == DRILL_DISCUSSION) {
		static const char *const keys[] = {"prompt", NULL};
		if (only_keys(p, v, "questions", keys))
			return TT_EPARSE;
		JpVal *pr = jp_get(v, "prompt");
		if (pr == NULL)
			return jerr(p, v, "a discussion drill's questions need a \"prompt\"");
		return prose(p, pr, "questions.prompt", &d->prompt);
	}
	static const char *const keys[] = {"hypotheses", "checks", "decision", NULL};
	if (only_keys(p, v, "questions", keys))
		return TT_EPARSE;
	JpVal *h = jp_get(v, "hypotheses"), *c = jp_get(v, "checks"), *dc = jp_get(v, "decision");
	if (h == NULL || c == NULL || dc == NULL)
		return jerr(p, v, "questions need \"hypotheses\", \"checks\" and \"decision\"");
	static const char *const hkeys[] = {"rank", "choices", NULL};
	if (want_obj(p, h, "questions.hypotheses") || only_keys(p, h, "questions.hypotheses", hkeys))
		return TT_EPARSE;
	JpVal *rank = jp_get(h, "rank"), *hc = jp_get(h, "choices");
	double r = 3;
	if (rank && number(p, rank, "rank", 1, DRILL_MAX_RANK, &r))
		return TT_EPARSE;
	if (r != floor(r))
		return jerr(p, rank, "rank must be a whole number");
	d->rank = (int)r;
	if (hc == NULL)
		return jerr(p, h, "questions.hypotheses needs \"choices\"");
	if (parse_choices(p, hc, "hypothesis choices", &d->hyp_choices, &d->n_hyp_choices))
		return TT_EPARSE;
	if (d->n_hyp_choices < d->rank)
		return jerr(p, hc, "%d hypotheses to rank but only %d choices", d->rank,
		            d->n_hyp_choices);

	static const char *const ckeys[] = {"choices", NULL};
	if (want_obj(p, c, "questions.checks") || only_keys(p, c, "questions.checks", ckeys))
		return TT_EPARSE;
	JpVal *cc = jp_get(c, "choices");
	if (cc == NULL)
		return jerr(p, c, "questions.checks needs \"choices\"");
	if (parse_choices(p, cc, "check choices", &d->check_choices, &d->n_check_choices))
		return TT_EPARSE;

	static const char *const dkeys[] = {"choices", "local", NULL};
	if (want_obj(p, dc, "questions.decision") || only_keys(p, dc, "questions.decision", dkeys))
		return TT_EPARSE;
	JpVal *dcc = jp_get(dc, "choices"), *loc = jp_get(dc, "local");
	if (dcc == NULL)
		return jerr(p, dc, "questions.decision needs \"choices\"");
	if (parse_choices(p, dcc, "decision choices", &d->decision_choices,
	                  &d->n_decision_choices))
		return TT_EPARSE;
	if (loc) {
		if (want_arr(p, loc, "questions.decision.local", 1))
			return TT_EPARSE;
		d->local_decisions = xcalloc(loc->len + 1, sizeof *d->local_decisions); /* NULL-terminated */
		for (size_t i = 0; i < loc->len; i++) {
			char *id = NULL;
			if (ident(p, loc->items[i], "local decision", &id))
				return TT_EPARSE;
			d->local_decisions[d->n_local_decisions++] = id;
			if (find_choice(d->decision_choices, d->n_decision_choices, id) < 0)
				return jerr(p, loc->items[i], "local decision \"%s\" is not a decision choice",
				            id);
		}
	}
	/* the engine's decisions read as the engine words them
	 * (decision_describe()): what the trainee picks is what the Board and
	 * `diagnose` judge, and no wording hints at the answer */
	for (int i = 0; i < d->n_decision_choices; i++) {
		DrillChoice *ch = &d->decision_choices[i];
		char w[300];
		int local = 0;
		for (int k = 0; k < d->n_local_decisions; k++)
			local |= strcmp(d->local_decisions[k], ch->id) == 0;
		if (local || decision_describe(ch->id, w, sizeof w) != 0)
			continue;
		if (ch->text && strcmp(ch->text, w) != 0) {
			const JpVal *it = dcc->items[i], *t = it->type == JP_OBJ ? jp_get(it, "text") : NULL;
			return jerr(p, t ? t : it,
			            "decision \"%s\" is the engine's: its wording is the engine's ('%s'); "
			            "leave \"text\" out, or declare the decision local",
			            ch->id, w);
		}
		if (ch->text == NULL)
			ch->text = xstrdup(w);
	}
	return 0;
}

/* ---- answer key and wrong answers --------------------------------------- */

static int want_choice(P *p, const JpVal *at, const DrillChoice *c, int n, const char *id,
                       const char *what)
{
	if (find_choice(c, n, id) >= 0)
		return 0;
	return jerr(p, at, "%s \"%s\" is not one of the offered choices", what, id);
}

static int parse_key_diag(P *p, const JpVal *v)
{
	Drill *d = p->d;
	static const char *const keys[] = {"hypotheses", "checks", "decision", NULL};
	if (only_keys(p, v, "answer_key", keys))
		return TT_EPARSE;
	JpVal *h = jp_get(v, "hypotheses"), *c = jp_get(v, "checks"), *dc = jp_get(v, "decision");
	if (h == NULL || c == NULL || dc == NULL)
		return jerr(p, v, "answer_key needs \"hypotheses\", \"checks\" and \"decision\"");
	if (want_arr(p, h, "answer_key.hypotheses", 1))
		return TT_EPARSE;
	if ((int)h->len != d->rank)
		return jerr(p, h, "answer_key.hypotheses has %zu entries; the question ranks %d",
		            h->len, d->rank);
	d->key_hyp = xcalloc(h->len, sizeof *d->key_hyp);
	for (size_t i = 0; i < h->len; i++) {
		static const char *const hk[] = {"id", "why", NULL};
		const JpVal *e = h->items[i];
		if (want_obj(p, e, "a key hypothesis") || only_keys(p, e, "key hypothesis", hk))
			return TT_EPARSE;
		JpVal *id = jp_get(e, "id"), *why = jp_get(e, "why");
		if (id == NULL || why == NULL)
			return jerr(p, e, "a key hypothesis needs \"id\" and \"why\"");
		DrillNote *n = &d->key_hyp[d->n_key_hyp++];
		if (ident(p, id, "hypothesis", &n->id) || prose(p, why, "why", &n->why) ||
		    want_choice(p, id, d->hyp_choices, d->n_hyp_choices, n->id, "key hypothesis"))
			return TT_EPARSE;
		for (int j = 0; j + 1 < d->n_key_hyp; j++)
			if (strcmp(d->key_hyp[j].id, n->id) == 0)
				return jerr(p, id, "key hypothesis \"%s\" is ranked twice", n->id);
	}

	if (want_obj(p, c, "answer_key.checks"))
		return TT_EPARSE;
	d->key_checks = xcalloc(c->len ? c->len : 1, sizeof *d->key_checks);
	for (size_t i = 0; i < c->len; i++) {
		const JpMember *m = &c->members[i];
		DrillKeyCheck *k = &d->key_checks[d->n_key_checks++];
		k->hyp = xstrdup(m->key);
		int is_key = 0;
		for (int j = 0; j < d->n_key_hyp; j++)
			is_key |= strcmp(d->key_hyp[j].id, k->hyp) == 0;
		if (!is_key)
			return jerr(p, m->val, "answer_key.checks: \"%.60s\" is not a key hypothesis",
			            m->key);
		static const char *const ck[] = {"accept", "why", NULL};
		if (want_obj(p, m->val, "a key check") || only_keys(p, m->val, "key check", ck))
			return TT_EPARSE;
		JpVal *acc = jp_get(m->val, "accept"), *why = jp_get(m->val, "why");
		if (acc == NULL || why == NULL)
			return jerr(p, m->val, "a key check needs \"accept\" and \"why\"");
		if (want_arr(p, acc, "accept", 1) || prose(p, why, "why", &k->why))
			return TT_EPARSE;
		k->accept = xcalloc(acc->len, sizeof *k->accept);
		for (size_t j = 0; j < acc->len; j++) {
			if (ident(p, acc->items[j], "check", &k->accept[k->n_accept]))
				return TT_EPARSE;
			k->n_accept++;
			if (want_choice(p, acc->items[j], d->check_choices, d->n_check_choices,
			                k->accept[k->n_accept - 1], "accepted check"))
				return TT_EPARSE;
		}
	}
	for (int j = 0; j < d->n_key_hyp; j++) {
		int found = 0;
		for (int i = 0; i < d->n_key_checks; i++)
			found |= strcmp(d->key_checks[i].hyp, d->key_hyp[j].id) == 0;
		if (!found)
			return jerr(p, c, "answer_key.checks has no entry for \"%s\"", d->key_hyp[j].id);
	}

	static const char *const dk[] = {"accept", "why", "partial", NULL};
	if (want_obj(p, dc, "answer_key.decision") || only_keys(p, dc, "answer_key.decision", dk))
		return TT_EPARSE;
	JpVal *acc = jp_get(dc, "accept"), *why = jp_get(dc, "why"), *part = jp_get(dc, "partial");
	if (acc == NULL || why == NULL)
		return jerr(p, dc, "answer_key.decision needs \"accept\" and \"why\"");
	if (want_arr(p, acc, "accept", 1) || prose(p, why, "why", &d->decision_why))
		return TT_EPARSE;
	d->key_decisions = xcalloc(acc->len, sizeof *d->key_decisions);
	for (size_t j = 0; j < acc->len; j++) {
		if (ident(p, acc->items[j], "decision", &d->key_decisions[d->n_key_decisions]))
			return TT_EPARSE;
		d->n_key_decisions++;
		if (want_choice(p, acc->items[j], d->decision_choices, d->n_decision_choices,
		                d->key_decisions[d->n_key_decisions - 1], "accepted decision"))
			return TT_EPARSE;
	}
	if (part) {
		if (want_arr(p, part, "partial", 1))
			return TT_EPARSE;
		d->partial = xcalloc(part->len, sizeof *d->partial);
		for (size_t j = 0; j < part->len; j++) {
			static const char *const pk[] = {"id", "points", "why", NULL};
			const JpVal *e = part->items[j];
			if (want_obj(p, e, "a partial decision") || only_keys(p, e, "partial decision", pk))
				return TT_EPARSE;
			JpVal *id = jp_get(e, "id"), *pts = jp_get(e, "points"), *w = jp_get(e, "why");
			if (id == NULL || pts == NULL || w == NULL)
				return jerr(p, e, "a partial decision needs \"id\", \"points\" and \"why\"");
			DrillPartial *pd = &d->partial[d->n_partial++];
			if (ident(p, id, "decision", &pd->id) || prose(p, w, "why", &pd->why) ||
			    number(p, pts, "points", 0, 1000, &pd->points) ||
			    want_choice(p, id, d->decision_choices, d->n_decision_choices, pd->id,
			                "partial decision"))
				return TT_EPARSE;
			for (int k = 0; k < d->n_key_decisions; k++)
				if (strcmp(d->key_decisions[k], pd->id) == 0)
					return jerr(p, id, "\"%s\" is both accepted and partial", pd->id);
		}
	}
	return 0;
}

static int parse_terms(P *p, const JpVal *v, char ***out)
{
	if (want_arr(p, v, "a checklist alternative", 1))
		return TT_EPARSE;
	char **t = xcalloc(v->len + 1, sizeof *t);
	*out = t;
	for (size_t i = 0; i < v->len; i++) {
		if (text(p, v->items[i], "a checklist term", &t[i]))
			return TT_EPARSE;
		for (char *c = t[i]; *c; c++)
			if (*c >= 'A' && *c <= 'Z')
				*c = (char)(*c - 'A' + 'a');
	}
	return 0;
}

static int parse_key_discussion(P *p, const JpVal *v)
{
	Drill *d = p->d;
	static const char *const keys[] = {"model_answer", "checklist", NULL};
	if (only_keys(p, v, "answer_key", keys))
		return TT_EPARSE;
	JpVal *ma = jp_get(v, "model_answer"), *cl = jp_get(v, "checklist");
	if (ma == NULL || cl == NULL)
		return jerr(p, v, "a discussion answer_key needs \"model_answer\" and \"checklist\"");
	if (prose(p, ma, "model_answer", &d->model_answer) || want_arr(p, cl, "checklist", 1))
		return TT_EPARSE;
	d->checklist = xcalloc(cl->len, sizeof *d->checklist);
	for (size_t i = 0; i < cl->len; i++) {
		static const char *const pk[] = {"id", "point", "points", "any", NULL};
		const JpVal *e = cl->items[i];
		if (want_obj(p, e, "a checklist point") || only_keys(p, e, "checklist point", pk))
			return TT_EPARSE;
		JpVal *id = jp_get(e, "id"), *pt = jp_get(e, "point"), *pts = jp_get(e, "points"),
		      *any = jp_get(e, "any");
		if (id == NULL || pt == NULL || pts == NULL || any == NULL)
			return jerr(p, e, "a checklist point needs \"id\", \"point\", \"points\" and \"any\"");
		DrillPoint *dp = &d->checklist[d->n_checklist++];
		if (ident(p, id, "point id", &dp->id) || prose(p, pt, "point", &dp->point) ||
		    number(p, pts, "points", 0.5, 1000, &dp->points) ||
		    want_arr(p, any, "any", 1))
			return TT_EPARSE;
		for (int j = 0; j + 1 < d->n_checklist; j++)
			if (strcmp(d->checklist[j].id, dp->id) == 0)
				return jerr(p, id, "checklist point \"%s\" is listed twice", dp->id);
		dp->any = xcalloc(any->len, sizeof *dp->any);
		for (size_t j = 0; j < any->len; j++)
			if (parse_terms(p, any->items[j], &dp->any[dp->n_any++]))
				return TT_EPARSE;
	}
	return 0;
}

static int parse_notes(P *p, const JpVal *v, const char *what, const DrillChoice *c, int n,
                       DrillNote **out, int *nout)
{
	if (want_obj(p, v, what))
		return TT_EPARSE;
	*out = xcalloc(v->len ? v->len : 1, sizeof **out);
	for (size_t i = 0; i < v->len; i++) {
		const JpMember *m = &v->members[i];
		DrillNote *note = &(*out)[(*nout)++];
		note->id = xstrdup(m->key);
		if (prose(p, m->val, what, &note->why) ||
		    want_choice(p, m->val, c, n, note->id, what))
			return TT_EPARSE;
	}
	return 0;
}

static int parse_wrong(P *p, const JpVal *v)
{
	Drill *d = p->d;
	static const char *const keys[] = {"hypotheses", "checks", "decisions", NULL};
	if (want_obj(p, v, "\"wrong\"") || only_keys(p, v, "wrong", keys))
		return TT_EPARSE;
	JpVal *x;
	if ((x = jp_get(v, "hypotheses")) &&
	    parse_notes(p, x, "wrong.hypotheses", d->hyp_choices, d->n_hyp_choices, &d->wrong_hyp,
	                &d->n_wrong_hyp))
		return TT_EPARSE;
	if ((x = jp_get(v, "checks")) &&
	    parse_notes(p, x, "wrong.checks", d->check_choices, d->n_check_choices,
	                &d->wrong_check, &d->n_wrong_check))
		return TT_EPARSE;
	if ((x = jp_get(v, "decisions")) &&
	    parse_notes(p, x, "wrong.decisions", d->decision_choices, d->n_decision_choices,
	                &d->wrong_decision, &d->n_wrong_decision))
		return TT_EPARSE;
	return 0;
}

/* ---- scoring, hints, replay ------------------------------------------- */

static int parse_scoring(P *p, const JpVal *v)
{
	Drill *d = p->d;
	if (want_obj(p, v, "\"scoring\""))
		return TT_EPARSE;
	if (d->kind == DRILL_DISCUSSION) {
		static const char *const keys[] = {"self_assessment", NULL};
		if (only_keys(p, v, "scoring", keys))
			return TT_EPARSE;
		JpVal *sa = jp_get(v, "self_assessment");
		if (sa) {
			if (sa->type != JP_BOOL)
				return jerr(p, sa, "self_assessment must be true or false");
			d->self_assessed_ok = sa->b;
		}
		return 0;
	}
	static const char *const keys[] = {"hypotheses", "checks", "decision", "premature_closure",
	                                   NULL};
	if (only_keys(p, v, "scoring", keys))
		return TT_EPARSE;
	JpVal *h = jp_get(v, "hypotheses"), *c = jp_get(v, "checks"), *dc = jp_get(v, "decision"),
	      *pc = jp_get(v, "premature_closure");
	if (h == NULL || c == NULL || dc == NULL)
		return jerr(p, v, "scoring needs \"hypotheses\", \"checks\" and \"decision\"");
	static const char *const hk[] = {"points", "wrong_rank_share", NULL};
	if (want_obj(p, h, "scoring.hypotheses") || only_keys(p, h, "scoring.hypotheses", hk))
		return TT_EPARSE;
	JpVal *pts = jp_get(h, "points"), *wr = jp_get(h, "wrong_rank_share");
	if (pts == NULL)
		return jerr(p, h, "scoring.hypotheses needs \"points\" (one number per rank)");
	if (want_arr(p, pts, "points", 1))
		return TT_EPARSE;
	if ((int)pts->len != d->rank)
		return jerr(p, pts, "scoring.hypotheses.points has %zu numbers; the question ranks %d",
		            pts->len, d->rank);
	for (size_t i = 0; i < pts->len; i++)
		if (number(p, pts->items[i], "points", 0, 1000, &d->hyp_points[i]))
			return TT_EPARSE;
	d->wrong_rank_share = 0.5;
	if (wr && number(p, wr, "wrong_rank_share", 0, 1, &d->wrong_rank_share))
		return TT_EPARSE;
	static const char *const ck[] = {"points", NULL};
	if (want_obj(p, c, "scoring.checks") || only_keys(p, c, "scoring.checks", ck))
		return TT_EPARSE;
	JpVal *cp = jp_get(c, "points");
	if (cp == NULL)
		return jerr(p, c, "scoring.checks needs \"points\" (per key hypothesis)");
	if (number(p, cp, "points", 0, 1000, &d->check_points))
		return TT_EPARSE;
	static const char *const dk[] = {"points", "refused_penalty", NULL};
	if (want_obj(p, dc, "scoring.decision") || only_keys(p, dc, "scoring.decision", dk))
		return TT_EPARSE;
	JpVal *dp = jp_get(dc, "points"), *rp = jp_get(dc, "refused_penalty");
	if (dp == NULL)
		return jerr(p, dc, "scoring.decision needs \"points\"");
	if (number(p, dp, "points", 0, 1000, &d->decision_points) ||
	    (rp && number(p, rp, "refused_penalty", 0, 1000, &d->refused_penalty)) ||
	    (pc && number(p, pc, "premature_closure", 0, 1000, &d->closure_penalty)))
		return TT_EPARSE;
	for (int i = 0; i < d->n_partial; i++)
		if (d->partial[i].points >= d->decision_points)
			return jerr(p, dp, "partial decision \"%s\" earns %g points, not less than the"
			                   " full %g",
			            d->partial[i].id, d->partial[i].points, d->decision_points);
	return 0;
}

static int parse_hints(P *p, const JpVal *v)
{
	Drill *d = p->d;
	if (want_arr(p, v, "\"hints\"", 1))
		return TT_EPARSE;
	d->hints = xcalloc(v->len, sizeof *d->hints);
	for (size_t i = 0; i < v->len; i++) {
		static const char *const keys[] = {"text", "cost", NULL};
		const JpVal *e = v->items[i];
		if (want_obj(p, e, "a hint") || only_keys(p, e, "hint", keys))
			return TT_EPARSE;
		JpVal *t = jp_get(e, "text"), *c = jp_get(e, "cost");
		if (t == NULL)
			return jerr(p, e, "a hint needs \"text\"");
		DrillHint *h = &d->hints[d->n_hints++];
		if (prose(p, t, "hint text", &h->text) ||
		    (c && number(p, c, "cost", 0, 1000, &h->cost)))
			return TT_EPARSE;
	}
	return 0;
}

static int parse_replay(P *p, const JpVal *v)
{
	Drill *d = p->d;
	static const char *const keys[] = {"speed", "slice_s", NULL};
	if (want_obj(p, v, "\"replay\"") || only_keys(p, v, "replay", keys))
		return TT_EPARSE;
	JpVal *s = jp_get(v, "speed"), *sl = jp_get(v, "slice_s");
	if (s && number(p, s, "replay.speed", 0.01, 1e6, &d->replay_speed))
		return TT_EPARSE;
	if (sl && number(p, sl, "replay.slice_s", 0.1, 3600, &d->replay_slice_s))
		return TT_EPARSE;
	return 0;
}

/* ---- top level ---------------------------------------------------------- */

/* The file name stem before ".drill.json", or NULL when the name has
 * another suffix. Returns a malloc'd string. */
static char *file_stem(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strlen(base), sfx = strlen(".drill.json");
	if (n <= sfx || strcmp(base + n - sfx, ".drill.json") != 0)
		return NULL;
	return xstrndup(base, n - sfx);
}

static int parse_top(P *p, const JpVal *root)
{
	Drill *d = p->d;
	static const char *const keys[] = {"drill", "version", "title", "kind", "summary",
	                                   "brief", "model", "data", "questions", "answer_key",
	                                   "wrong", "hints", "scoring", "debrief", "engine_note",
	                                   "replay", NULL};
	if (want_obj(p, root, "a drill file") || only_keys(p, root, "drill file", keys))
		return TT_EPARSE;
	JpVal *x;
	static const char *const req[] = {"drill", "version", "title", "kind", "brief",
	                                  "questions", "answer_key", "scoring", NULL};
	for (int i = 0; req[i]; i++)
		if (jp_get(root, req[i]) == NULL)
			return jerr(p, root, "a drill file needs \"%s\"", req[i]);
	if (ident(p, jp_get(root, "drill"), "drill id", &d->id))
		return TT_EPARSE;
	if (strchr(d->id, ':'))
		return jerr(p, jp_get(root, "drill"), "a drill id must not contain ':'");
	x = jp_get(root, "version");
	if (x->type != JP_NUM || jp_int(x, &d->version) || d->version < 1)
		return jerr(p, x, "version must be a whole number of at least 1");
	if (text(p, jp_get(root, "title"), "title", &d->title))
		return TT_EPARSE;
	char *kind = NULL;
	if (text(p, (x = jp_get(root, "kind")), "kind", &kind))
		return TT_EPARSE;
	if (strcmp(kind, "diagnosis") == 0)
		d->kind = DRILL_DIAGNOSIS;
	else if (strcmp(kind, "discussion") == 0)
		d->kind = DRILL_DISCUSSION;
	else {
		free(kind);
		return jerr(p, x, "kind must be \"diagnosis\" or \"discussion\"");
	}
	free(kind);
	if ((x = jp_get(root, "summary")) && text(p, x, "summary", &d->summary))
		return TT_EPARSE;
	if (prose(p, jp_get(root, "brief"), "brief", &d->brief))
		return TT_EPARSE;
	if ((x = jp_get(root, "model")) && path_field(p, x, "model", &d->model_path))
		return TT_EPARSE;
	if ((x = jp_get(root, "data")) && parse_data(p, x))
		return TT_EPARSE;
	if (d->kind == DRILL_DIAGNOSIS && jp_get(root, "data") == NULL)
		return jerr(p, root, "a diagnosis drill needs \"data\" (the dashboard must show the"
		                     " incident)");
	if (parse_questions(p, jp_get(root, "questions")))
		return TT_EPARSE;
	x = jp_get(root, "answer_key");
	if (want_obj(p, x, "\"answer_key\""))
		return TT_EPARSE;
	if (d->kind == DRILL_DIAGNOSIS ? parse_key_diag(p, x) : parse_key_discussion(p, x))
		return TT_EPARSE;
	if ((x = jp_get(root, "wrong"))) {
		if (d->kind == DRILL_DISCUSSION)
			return jerr(p, x, "\"wrong\" belongs to diagnosis drills");
		if (parse_wrong(p, x))
			return TT_EPARSE;
	}
	if (parse_scoring(p, jp_get(root, "scoring")))
		return TT_EPARSE;
	if ((x = jp_get(root, "hints")) && parse_hints(p, x))
		return TT_EPARSE;
	if ((x = jp_get(root, "debrief")) && prose(p, x, "debrief", &d->debrief))
		return TT_EPARSE;
	if ((x = jp_get(root, "engine_note")) && prose(p, x, "engine_note", &d->engine_note))
		return TT_EPARSE;
	d->replay_speed = 10;
	d->replay_slice_s = 5;
	if ((x = jp_get(root, "replay")) && parse_replay(p, x))
		return TT_EPARSE;
	if (drill_max_score(d) <= 0)
		return jerr(p, jp_get(root, "scoring"), "the drill must be worth some points");
	return 0;
}

int drill_parse(const char *name, const char *dir, const char *text_, size_t len,
                Drill **out, Err *err)
{
	*out = NULL;
	if (len > DRILL_MAX_BYTES)
		return err_set(err, TT_EPARSE, "%s: a drill file is at most %zu bytes", name,
		               DRILL_MAX_BYTES);
	JpDoc *doc = NULL;
	JpVal *root = NULL;
	if (jp_parse(text_, len, name, 1, &doc, &root, err))
		return TT_EPARSE;
	Drill *d = xcalloc(1, sizeof *d);
	d->path = xstrdup(name);
	d->dir = xstrdup(dir ? dir : ".");
	snprintf(d->digest, sizeof d->digest, "%016llx", (unsigned long long)hash_fnv1a(HASH_FNV1A_BASIS, text_, len));
	P p = {.name = name, .dir = d->dir, .err = err, .d = d};
	int rc = parse_top(&p, root);
	jp_free(doc);
	if (rc) {
		drill_free(d);
		return rc;
	}
	*out = d;
	return 0;
}

int drill_load(const char *path, Drill **out, Err *err)
{
	*out = NULL;
	Buf b;
	buf_init(&b);
	int read_rc = buf_read_file(&b, path, DRILL_MAX_BYTES, err);
	if (read_rc) {
		buf_fini(&b);
		return read_rc;
	}
	const char *slash = strrchr(path, '/');
	char *dir = slash ? xstrndup(path, (size_t)(slash - path)) : xstrdup(".");
	if (dir[0] == '\0') {
		free(dir);
		dir = xstrdup("/");
	}
	int rc = drill_parse(path, dir, b.p ? b.p : "", b.len, out, err);
	free(dir);
	buf_fini(&b);
	if (rc)
		return rc;
	char *stem = file_stem(path);
	if (stem && strcmp(stem, (*out)->id) != 0) {
		rc = err_at(err, TT_EPARSE, path, 1, 1,
		            "drill id \"%s\" does not match the file name (%s.drill.json)", (*out)->id,
		            stem);
		drill_free(*out);
		*out = NULL;
	}
	free(stem);
	return rc;
}

double drill_max_score(const Drill *d)
{
	double t = 0;
	if (d->kind == DRILL_DISCUSSION) {
		for (int i = 0; i < d->n_checklist; i++)
			t += d->checklist[i].points;
		return t;
	}
	for (int i = 0; i < d->rank; i++)
		t += d->hyp_points[i];
	return t + d->check_points * d->rank + d->decision_points;
}

const char *drill_split_id(const char *id, char *base, unsigned sz)
{
	const char *c = strchr(id, ':');
	size_t n = c ? (size_t)(c - id) : strlen(id);
	if (sz) {
		if (n >= sz)
			n = sz - 1;
		memcpy(base, id, n);
		base[n] = '\0';
	}
	return c ? c + 1 : NULL;
}

static int in_list(const char *const *v, const char *s)
{
	for (int i = 0; v && v[i]; i++)
		if (strcmp(v[i], s) == 0)
			return 1;
	return 0;
}

int drill_check_vocabulary(const Drill *d, char *const *hyp_ids, const char *const *checks,
                           const char *const *decisions, Err *err)
{
	char base[128];
	for (int i = 0; hyp_ids && i < d->n_hyp_choices; i++) {
		drill_split_id(d->hyp_choices[i].id, base, sizeof base);
		if (!in_list((const char *const *)hyp_ids, base))
			return err_set(err, TT_EINVAL,
			               "%s: hypothesis \"%s\" is not in the hypothesis catalog", d->path,
			               d->hyp_choices[i].id);
	}
	for (int i = 0; checks && i < d->n_check_choices; i++)
		if (!in_list(checks, d->check_choices[i].id))
			return err_set(err, TT_EINVAL, "%s: check \"%s\" is not a known check", d->path,
			               d->check_choices[i].id);
	for (int i = 0; decisions && i < d->n_decision_choices; i++) {
		const char *id = d->decision_choices[i].id;
		if (in_list((const char *const *)d->local_decisions, id))
			continue;
		drill_split_id(id, base, sizeof base);
		if (!in_list(decisions, base))
			return err_set(err, TT_EINVAL,
			               "%s: decision \"%s\" is neither an engine decision nor declared"
			               " local",
			               d->path, id);
	}
	return 0;
}

/* ---- catalog ------------------------------------------------------------ */

const char *drill_catalog_dir(void)
{
	const char *e = getenv("TAILTRIAGE_DRILLS");
	if (e && *e)
		return e;
	static char dir[4096];
	if (dir[0] == '\0')
		tt_share_path("drills/catalog", dir, sizeof dir);
	return dir;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **drill_catalog_files(const char *dir, Err *err)
{
	DIR *dd = opendir(dir);
	if (dd == NULL) {
		err_set(err, TT_EIO, "%s: %s", dir, strerror(errno));
		return NULL;
	}
	int n = 0, cap = 8;
	char **v = xcalloc((size_t)cap + 1, sizeof *v);
	struct dirent *e;
	while ((e = readdir(dd)) != NULL) {
		char *stem = file_stem(e->d_name);
		if (stem == NULL)
			continue;
		free(stem);
		if (n == cap) {
			cap *= 2;
			v = xrealloc(v, ((size_t)cap + 1) * sizeof *v);
		}
		v[n++] = resolve(dir, e->d_name);
		v[n] = NULL;
	}
	closedir(dd);
	if (n > 1)
		qsort(v, (size_t)n, sizeof *v, cmp_str);
	return v;
}

int drill_find(const char *dir, const char *id, Drill **out, Err *err)
{
	*out = NULL;
	if (strchr(id, '/'))
		return drill_load(id, out, err);
	if (!id_ok(id) || strchr(id, ':') || strlen(id) > 96)
		return err_set(err, TT_ENOTFOUND, "'%s' is not a drill id (see tailtriage drill list)",
		               id);
	Buf b;
	buf_init(&b);
	buf_printf(&b, "%s/%s.drill.json", dir, id);
	FILE *f = fopen(buf_str(&b), "rb");
	if (f == NULL) {
		err_set(err, TT_ENOTFOUND, "no drill '%s' in %s (see tailtriage drill list)", id, dir);
		buf_fini(&b);
		return TT_ENOTFOUND;
	}
	fclose(f);
	int rc = drill_load(buf_str(&b), out, err);
	buf_fini(&b);
	return rc;
}

const char **drill_engine_decisions(const Drill *d)
{
	const char **v = xcalloc((size_t)d->n_decision_choices + 1, sizeof *v);
	int n = 0;
	for (int i = 0; i < d->n_decision_choices; i++) {
		const char *id = d->decision_choices[i].id;
		int local = 0;
		for (int k = 0; k < d->n_local_decisions && !local; k++)
			local = strcmp(d->local_decisions[k], id) == 0;
		if (!local)
			v[n++] = id;
	}
	return v;
}
