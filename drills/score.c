/*
 * score.c - answers files and scoring (docs/drills.md, "Scoring").
 *
 * Diagnosis drills earn points in three parts, each from the drill file's
 * scoring rules:
 *   hypotheses  per key rank: full points for the key's hypothesis at that
 *               rank, wrong_rank_share of them when it is named at another
 *               rank, nothing when it is not named;
 *   checks      per key hypothesis: full points when the check chosen for
 *               it is one the key accepts or the engine's discriminating
 *               check for it;
 *   decision    full points for an accepted decision, the stated points
 *               for a partial one, nothing otherwise;
 * then penalties: revealed hints, a decision the engine refuses (it breaks
 * an invariant), deciding with fewer hypotheses than asked (premature
 * closure). Discussion drills earn each checklist point the answer covers.
 *
 * Each line carries its reason. Reasons are assembled from the drill
 * file's prose and the engine's output; this file only adds the
 * connecting words ("you ranked it #2").
 */
#include "score.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jpos.h"

#define ANSWERS_MAX_BYTES ((size_t)1 << 20)

/* ---- answers ----------------------------------------------------------- */

Answers *answers_new(void)
{
	return xcalloc(1, sizeof(Answers));
}

void answers_free(Answers *a)
{
	if (a == NULL)
		return;
	free(a->person);
	for (int i = 0; i < a->n_hyp; i++)
		free(a->hyp[i]);
	free(a->hyp);
	for (int i = 0; i < a->n_checks; i++) {
		free(a->check_hyp[i]);
		free(a->check[i]);
	}
	free(a->check_hyp);
	free(a->check);
	free(a->decision);
	free(a->text);
	for (int i = 0; i < a->n_self; i++)
		free(a->self[i]);
	free(a->self);
	free(a);
}

void answers_json(const Answers *a, Buf *out)
{
	buf_addc(out, '{');
	int first = 1;
#define SEP() (first ? (first = 0, (void)0) : buf_addc(out, ','))
	if (a->person) {
		SEP();
		buf_adds(out, "\"person\":");
		buf_add_json_str(out, a->person, strlen(a->person));
	}
	if (a->n_hyp || a->n_checks || a->decision) {
		SEP();
		buf_adds(out, "\"hypotheses\":[");
		for (int i = 0; i < a->n_hyp; i++) {
			if (i)
				buf_addc(out, ',');
			buf_add_json_str(out, a->hyp[i], strlen(a->hyp[i]));
		}
		buf_adds(out, "],\"checks\":{");
		for (int i = 0; i < a->n_checks; i++) {
			if (i)
				buf_addc(out, ',');
			buf_add_json_str(out, a->check_hyp[i], strlen(a->check_hyp[i]));
			buf_addc(out, ':');
			buf_add_json_str(out, a->check[i], strlen(a->check[i]));
		}
		buf_addc(out, '}');
		if (a->decision) {
			buf_adds(out, ",\"decision\":");
			buf_add_json_str(out, a->decision, strlen(a->decision));
		}
	}
	if (a->text) {
		SEP();
		buf_adds(out, "\"answer\":");
		buf_add_json_str(out, a->text, strlen(a->text));
	}
	if (a->has_self) {
		SEP();
		buf_adds(out, "\"self_assessed\":[");
		for (int i = 0; i < a->n_self; i++) {
			if (i)
				buf_addc(out, ',');
			buf_add_json_str(out, a->self[i], strlen(a->self[i]));
		}
		buf_addc(out, ']');
	}
	SEP();
	buf_printf(out, "\"hints_used\":%d}", a->hints_used);
#undef SEP
}

typedef struct P {
	const char *name;
	Err *err;
} P;

/* An error at the value at fault: "name:line:col: message" (jpos.h). */
#define jerr(p, at, ...) jp_err((p)->err, (p)->name, (at), __VA_ARGS__)

static int str_of(P *p, const JpVal *v, const char *what, char **out)
{
	if (v->type != JP_STR)
		return jerr(p, v, "%s must be a string, not %s", what, jp_type_name(v->type));
	if (memchr(v->s, '\0', v->n))
		return jerr(p, v, "%s must not contain NUL characters", what);
	*out = xstrdup(v->s);
	return 0;
}

/* "a, b, c" of the choice ids (shortened when long) for messages. */
static void choice_list(const DrillChoice *c, int n, char *out, size_t sz)
{
	size_t len = 0;
	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		int w = snprintf(out + len, sz - len, "%s%s", i ? ", " : "", c[i].id);
		if (w < 0 || (size_t)w >= sz - len) {
			if (sz > 4)
				memcpy(out + sz - 4, "...", 4);
			return;
		}
		len += (size_t)w;
	}
}

static int choice_of(P *p, const JpVal *v, const char *what, const DrillChoice *c, int n,
                     char **out)
{
	if (str_of(p, v, what, out))
		return TT_EPARSE;
	for (int i = 0; i < n; i++)
		if (strcmp(c[i].id, *out) == 0)
			return 0;
	char list[300];
	choice_list(c, n, list, sizeof list);
	free(*out);
	*out = NULL;
	return jerr(p, v, "%s \"%.80s\" is not one of this drill's choices (%s)", what, v->s, list);
}

static int parse_answers(P *p, const JpVal *root, const Drill *d, Answers *a)
{
	static const char *const keys[] = {"person", "hypotheses", "checks", "decision",
	                                   "hints_used", "answer", "self_assessed", NULL};
	if (root->type != JP_OBJ)
		return jerr(p, root, "an answers file must be a JSON object, not %s",
		            jp_type_name(root->type));
	for (size_t i = 0; i < root->len; i++) {
		int ok = 0;
		for (int k = 0; keys[k] && !ok; k++)
			ok = strcmp(keys[k], root->members[i].key) == 0;
		if (!ok)
			return jerr(p, root->members[i].val,
			            "unknown key \"%.60s\" (known: person, hypotheses, checks, decision,"
			            " hints_used, answer, self_assessed)",
			            root->members[i].key);
	}
	JpVal *x;
	if ((x = jp_get(root, "person"))) {
		if (str_of(p, x, "person", &a->person))
			return TT_EPARSE;
		if (a->person[0] == '\0' || strlen(a->person) > 128)
			return jerr(p, x, "person must be 1 to 128 bytes");
		for (const char *c = a->person; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				return jerr(p, x, "person must not contain control characters");
	}
	if ((x = jp_get(root, "hints_used"))) {
		int64_t h;
		if (x->type != JP_NUM || jp_int(x, &h) || h < 0 || h > d->n_hints)
			return jerr(p, x, "hints_used must be a whole number from 0 to %d", d->n_hints);
		a->hints_used = (int)h;
	}
	JpVal *hy = jp_get(root, "hypotheses"), *ch = jp_get(root, "checks"),
	      *de = jp_get(root, "decision"), *an = jp_get(root, "answer"),
	      *sa = jp_get(root, "self_assessed");
	if (d->kind == DRILL_DISCUSSION) {
		if (hy || ch || de)
			return jerr(p, hy ? hy : ch ? ch : de,
			            "drill %s is a discussion: answer with \"answer\" or"
			            " \"self_assessed\"",
			            d->id);
		if (an == NULL && sa == NULL)
			return jerr(p, root, "a discussion answer needs \"answer\" (text) or"
			                     " \"self_assessed\" (checklist point ids)");
		if (an) {
			if (an->type == JP_STR) {
				if (str_of(p, an, "answer", &a->text))
					return TT_EPARSE;
			} else if (an->type == JP_ARR) {
				Buf b;
				buf_init(&b);
				for (size_t i = 0; i < an->len; i++) {
					char *s = NULL;
					if (str_of(p, an->items[i], "an answer paragraph", &s)) {
						buf_fini(&b);
						return TT_EPARSE;
					}
					buf_printf(&b, "%s%s", i ? "\n\n" : "", s);
					free(s);
				}
				a->text = xstrdup(buf_str(&b));
				buf_fini(&b);
			} else {
				return jerr(p, an, "answer must be a string or an array of strings");
			}
		}
		if (sa) {
			if (!d->self_assessed_ok)
				return jerr(p, sa, "drill %s does not accept a self-assessed checklist", d->id);
			if (sa->type != JP_ARR)
				return jerr(p, sa, "self_assessed must be an array of point ids");
			a->has_self = 1;
			a->self = xcalloc(sa->len ? sa->len : 1, sizeof *a->self);
			for (size_t i = 0; i < sa->len; i++) {
				char *id = NULL;
				if (str_of(p, sa->items[i], "a point id", &id))
					return TT_EPARSE;
				int known = 0;
				for (int k = 0; k < d->n_checklist; k++)
					known |= strcmp(d->checklist[k].id, id) == 0;
				for (int k = 0; k < a->n_self; k++)
					if (strcmp(a->self[k], id) == 0) {
						free(id);
						return jerr(p, sa->items[i], "point \"%.60s\" is listed twice",
						            sa->items[i]->s);
					}
				if (!known) {
					free(id);
					return jerr(p, sa->items[i], "\"%.60s\" is not a checklist point of %s",
					            sa->items[i]->s, d->id);
				}
				a->self[a->n_self++] = id;
			}
		}
		return 0;
	}
	if (an || sa)
		return jerr(p, an ? an : sa,
		            "drill %s asks for hypotheses, checks and a decision, not a discussion"
		            " answer",
		            d->id);
	if (hy) {
		if (hy->type != JP_ARR)
			return jerr(p, hy, "hypotheses must be an array of hypothesis ids, best first");
		if ((int)hy->len > d->rank)
			return jerr(p, hy, "rank at most %d hypotheses (%zu given)", d->rank, hy->len);
		a->hyp = xcalloc(hy->len ? hy->len : 1, sizeof *a->hyp);
		for (size_t i = 0; i < hy->len; i++) {
			char *id = NULL;
			if (choice_of(p, hy->items[i], "hypothesis", d->hyp_choices, d->n_hyp_choices, &id))
				return TT_EPARSE;
			for (int k = 0; k < a->n_hyp; k++)
				if (strcmp(a->hyp[k], id) == 0) {
					free(id);
					return jerr(p, hy->items[i], "hypothesis \"%s\" is ranked twice",
					            a->hyp[k]);
				}
			a->hyp[a->n_hyp++] = id;
		}
	}
	if (ch) {
		if (ch->type != JP_OBJ)
			return jerr(p, ch, "checks must be an object: hypothesis id -> check name");
		a->check_hyp = xcalloc(ch->len ? ch->len : 1, sizeof *a->check_hyp);
		a->check = xcalloc(ch->len ? ch->len : 1, sizeof *a->check);
		for (size_t i = 0; i < ch->len; i++) {
			const JpMember *m = &ch->members[i];
			int named = 0;
			for (int k = 0; k < a->n_hyp; k++)
				named |= strcmp(a->hyp[k], m->key) == 0;
			if (!named)
				return jerr(p, m->val, "a check for \"%.60s\", which is not one of your"
				                       " ranked hypotheses",
				            m->key);
			char *c = NULL;
			if (choice_of(p, m->val, "check", d->check_choices, d->n_check_choices, &c))
				return TT_EPARSE;
			a->check_hyp[a->n_checks] = xstrdup(m->key);
			a->check[a->n_checks++] = c;
		}
	}
	if (de && de->type != JP_NULL &&
	    choice_of(p, de, "decision", d->decision_choices, d->n_decision_choices, &a->decision))
		return TT_EPARSE;
	return 0;
}

int answers_parse(const char *name, const char *text, size_t len, const Drill *d,
                  Answers **out, Err *err)
{
	*out = NULL;
	if (len > ANSWERS_MAX_BYTES)
		return err_set(err, TT_EPARSE, "%s: an answers file is at most %zu bytes", name,
		               ANSWERS_MAX_BYTES);
	JpDoc *doc = NULL;
	JpVal *root = NULL;
	if (jp_parse(text, len, name, 1, &doc, &root, err))
		return TT_EPARSE;
	Answers *a = answers_new();
	P p = {.name = name, .err = err};
	int rc = parse_answers(&p, root, d, a);
	jp_free(doc);
	if (rc) {
		answers_free(a);
		return rc;
	}
	*out = a;
	return 0;
}

int answers_load(const char *path, const Drill *d, Answers **out, Err *err)
{
	*out = NULL;
	Buf b;
	buf_init(&b);
	int rc = buf_read_file(&b, path, ANSWERS_MAX_BYTES, err);
	if (rc == 0)
		rc = answers_parse(path, buf_str(&b), b.len, d, out, err);
	buf_fini(&b);
	return rc;
}

/* ---- scoring helpers ----------------------------------------------------- */

static ScoreLine *add_line(Score *s, const char *part, const char *item, double possible,
                           double earned, const char *answer, const char *reason)
{
	s->lines = xrealloc(s->lines, (size_t)(s->n_lines + 1) * sizeof *s->lines);
	ScoreLine *l = &s->lines[s->n_lines++];
	l->part = xstrdup(part);
	l->item = xstrdup(item);
	l->possible = possible;
	l->earned = earned;
	l->answer = xstrdup(answer ? answer : "");
	l->reason = xstrdup(reason ? reason : "");
	return l;
}

double score_line_lost(const ScoreLine *l)
{
	return l->possible > 0 ? l->possible - l->earned : -l->earned;
}

void score_free(Score *s)
{
	if (s == NULL)
		return;
	for (int i = 0; i < s->n_lines; i++) {
		free(s->lines[i].part);
		free(s->lines[i].item);
		free(s->lines[i].answer);
		free(s->lines[i].reason);
	}
	free(s->lines);
	free(s);
}

static const char *note_for(const DrillNote *n, int count, const char *id)
{
	for (int i = 0; i < count; i++)
		if (strcmp(n[i].id, id) == 0)
			return n[i].why;
	return NULL;
}

static int index_of(char *const *v, int n, const char *s)
{
	for (int i = 0; s && i < n; i++)
		if (strcmp(v[i], s) == 0)
			return i;
	return -1;
}

static const char *check_for(const Answers *a, const char *hyp)
{
	int i = index_of(a->check_hyp, a->n_checks, hyp);
	return i >= 0 ? a->check[i] : NULL;
}

/* The engine's entry for choice id "base[:node]", or NULL. */
static const DxHypothesis *engine_hyp(const Diagnosis *dx, const char *id)
{
	if (dx == NULL)
		return NULL;
	char base[128];
	drill_split_id(id, base, sizeof base);
	return diagnosis_hypothesis(dx, base);
}

/* What the engine says about hypothesis choice id: its rank, score, the
 * node it blames, the evidence against it. */
static void engine_hyp_note(const Diagnosis *dx, const char *id, Buf *b)
{
	if (dx == NULL)
		return;
	const DxHypothesis *h = engine_hyp(dx, id);
	char base[128];
	const char *node = drill_split_id(id, base, sizeof base);
	if (h == NULL) {
		buf_printf(b, " The diagnosis engine does not rank %s on this data.", base);
		return;
	}
	buf_printf(b, " The diagnosis engine ranks %s #%d of %d (score %.2f)", base, h->rank,
	           dx->n_hyp, h->score);
	if (node && h->node && strcmp(node, h->node) != 0)
		buf_printf(b, " and blames %s, not %s", h->node, node);
	if (h->n_contradicted_by > 0) {
		buf_adds(b, "; evidence against it: ");
		for (int i = 0; i < h->n_contradicted_by; i++)
			buf_printf(b, "%s%s", i ? ", " : "", h->contradicted_by[i]);
	}
	buf_addc(b, '.');
}

/* Appends text as a sentence: a period is added when it ends without
 * one, so reasons from different sources read as separate sentences. */
static void add_sentence(Buf *b, const char *text)
{
	size_t n = strlen(text);
	if (n == 0)
		return;
	if (b->len > 0 && b->p[b->len - 1] != ' ')
		buf_addc(b, ' ');
	buf_adds(b, text);
	char last = text[n - 1];
	if (last != '.' && last != '!' && last != '?' && last != ')' && last != ':')
		buf_addc(b, '.');
}

/* ---- scoring ------------------------------------------------------------ */

static void score_hypotheses(const Drill *d, const Answers *a, const Diagnosis *dx, Score *s)
{
	for (int i = 0; i < d->rank; i++) {
		const DrillNote *k = &d->key_hyp[i];
		const char *given = i < a->n_hyp ? a->hyp[i] : NULL;
		char item[32];
		snprintf(item, sizeof item, "rank %d", i + 1);
		double pts = d->hyp_points[i];
		Buf b;
		buf_init(&b);
		double earned = 0;
		if (given && strcmp(given, k->id) == 0) {
			earned = pts;
			buf_adds(&b, k->why);
		} else {
			int j = index_of(a->hyp, a->n_hyp, k->id);
			if (j >= 0) {
				earned = pts * d->wrong_rank_share;
				buf_printf(&b, "The key ranks %s #%d; you ranked it #%d. %s", k->id, i + 1,
				           j + 1, k->why);
			} else {
				buf_printf(&b, "The key ranks %s #%d and your answer does not name it. %s",
				           k->id, i + 1, k->why);
			}
			if (given) {
				int kr = -1;
				for (int r = 0; r < d->n_key_hyp; r++)
					if (strcmp(d->key_hyp[r].id, given) == 0)
						kr = r;
				if (kr >= 0) {
					buf_printf(&b, " (%s is the key's #%d.)", given, kr + 1);
				} else {
					buf_printf(&b, " You put %s here, which the key does not rank.", given);
					const char *w = note_for(d->wrong_hyp, d->n_wrong_hyp, given);
					if (w)
						buf_printf(&b, " %s", w);
					engine_hyp_note(dx, given, &b);
				}
			}
		}
		add_line(s, "hypotheses", item, pts, earned, given, buf_str(&b));
		buf_fini(&b);
	}
}

static int accepted_check(const DrillKeyCheck *kc, const DxHypothesis *eh, const char *c)
{
	if (c == NULL)
		return 0;
	for (int i = 0; i < kc->n_accept; i++)
		if (strcmp(kc->accept[i], c) == 0)
			return 1;
	return eh && eh->check && strcmp(eh->check, c) == 0;
}

static void key_check_text(const DrillKeyCheck *kc, Buf *b)
{
	buf_adds(b, " The key accepts ");
	for (int i = 0; i < kc->n_accept; i++)
		buf_printf(b, "%s%s", i ? (i + 1 == kc->n_accept ? " or " : ", ") : "", kc->accept[i]);
	buf_printf(b, ": %s", kc->why);
}

static void score_checks(const Drill *d, const Answers *a, const Diagnosis *dx, Score *s)
{
	for (int i = 0; i < d->rank; i++) {
		const char *hyp = d->key_hyp[i].id;
		const DrillKeyCheck *kc = NULL;
		for (int k = 0; k < d->n_key_checks; k++)
			if (strcmp(d->key_checks[k].hyp, hyp) == 0)
				kc = &d->key_checks[k];
		if (kc == NULL)
			continue; /* drill_load() guarantees one per key hypothesis */
		const DxHypothesis *eh = engine_hyp(dx, hyp);
		const char *given = check_for(a, hyp);
		double earned = 0;
		Buf b;
		buf_init(&b);
		if (index_of(a->hyp, a->n_hyp, hyp) < 0) {
			buf_printf(&b, "No check for %s: it is not among your hypotheses.", hyp);
			key_check_text(kc, &b);
		} else if (given == NULL) {
			buf_printf(&b, "You named %s but chose no check that would confirm or rule it"
			               " out.",
			           hyp);
			key_check_text(kc, &b);
		} else if (accepted_check(kc, eh, given)) {
			earned = d->check_points;
			buf_adds(&b, kc->why);
		} else {
			buf_printf(&b, "%s does not separate %s from its rivals.", given, hyp);
			const char *w = note_for(d->wrong_check, d->n_wrong_check, given);
			if (w)
				buf_printf(&b, " %s", w);
			key_check_text(kc, &b);
			if (eh && eh->check && index_of(kc->accept, kc->n_accept, eh->check) < 0) {
				buf_printf(&b, " The engine's discriminating check for it is %s", eh->check);
				if (eh->check_why && eh->check_why[0])
					buf_printf(&b, " (%s)", eh->check_why);
				buf_addc(&b, '.');
			}
		}
		char item[160];
		snprintf(item, sizeof item, "check for %s", hyp);
		add_line(s, "checks", item, d->check_points, earned, given, buf_str(&b));
		buf_fini(&b);
	}
}

static void key_decision_text(const Drill *d, Buf *b)
{
	buf_adds(b, " The key decides ");
	for (int i = 0; i < d->n_key_decisions; i++)
		buf_printf(b, "%s%s", i ? " or " : "", d->key_decisions[i]);
	buf_printf(b, ": %s", d->decision_why);
}

static void score_decision(const Drill *d, const Answers *a, const Diagnosis *dx, Score *s)
{
	const char *given = a->decision;
	const DxDecision *ed = dx && given ? diagnosis_decision(dx, given) : NULL;
	double earned = 0;
	Buf b;
	buf_init(&b);
	if (given == NULL) {
		buf_adds(&b, "No decision given.");
		key_decision_text(d, &b);
	} else if (index_of(d->key_decisions, d->n_key_decisions, given) >= 0) {
		earned = d->decision_points;
		buf_adds(&b, d->decision_why);
	} else {
		int pi = -1;
		for (int i = 0; i < d->n_partial; i++)
			if (strcmp(d->partial[i].id, given) == 0)
				pi = i;
		if (pi >= 0) {
			earned = d->partial[pi].points;
			buf_printf(&b, "%s is defensible but not the key's first choice: %s", given,
			           d->partial[pi].why);
		} else {
			const char *w = note_for(d->wrong_decision, d->n_wrong_decision, given);
			if (w)
				add_sentence(&b, w);
			if (ed) {
				Buf e;
				buf_init(&e);
				buf_printf(&e, "The diagnosis engine finds %s %s: %s", given,
				           dx_verdict_name(ed->verdict), ed->reason ? ed->reason : "");
				add_sentence(&b, buf_str(&e));
				buf_fini(&e);
			}
			if (!w && !ed)
				buf_printf(&b, "%s is not a decision the key accepts.", given);
		}
		key_decision_text(d, &b);
	}
	add_line(s, "decision", "decision", d->decision_points, earned, given, buf_str(&b));
	buf_fini(&b);
	if (ed && ed->verdict == DX_REFUSED && d->refused_penalty > 0 &&
	    index_of(d->key_decisions, d->n_key_decisions, given) < 0) {
		buf_init(&b);
		buf_printf(&b, "%s is refused because it breaks an invariant:", given);
		add_sentence(&b, ed->reason ? ed->reason : "");
		add_line(s, "penalty", "invariant", 0, -d->refused_penalty, given, buf_str(&b));
		buf_fini(&b);
	}
	if (given && a->n_hyp < d->rank && d->closure_penalty > 0) {
		buf_init(&b);
		buf_printf(&b, "You decided with %d hypothes%s on the table where the drill asks for"
		               " %d: deciding before the rivals are ruled out is premature closure.",
		           a->n_hyp, a->n_hyp == 1 ? "is" : "es", d->rank);
		add_line(s, "penalty", "premature closure", 0, -d->closure_penalty, given,
		         buf_str(&b));
		buf_fini(&b);
	}
}

/* Lowercase, every run of non-alphanumeric bytes as one space, with a
 * space at both ends so terms can be matched at word starts. */
static char *normalize(const char *s)
{
	size_t n = strlen(s);
	char *o = xmalloc(n + 3), *w = o;
	*w++ = ' ';
	for (const char *c = s; *c; c++) {
		unsigned char u = (unsigned char)*c;
		if (isalnum(u) || u >= 0x80)
			*w++ = (char)tolower(u);
		else if (w[-1] != ' ')
			*w++ = ' ';
	}
	if (w[-1] != ' ')
		*w++ = ' ';
	*w = '\0';
	return o;
}

/* Does the normalized answer contain term at a word start? */
static int has_term(const char *norm_answer, const char *term)
{
	char *t = normalize(term);
	/* t is " word word " : match without the trailing space so stems work */
	size_t n = strlen(t);
	if (n > 1)
		t[n - 1] = '\0';
	int found = n > 2 && strstr(norm_answer, t) != NULL;
	free(t);
	return found;
}

static int point_covered(const DrillPoint *p, const char *norm_answer)
{
	for (int i = 0; i < p->n_any; i++) {
		int all = 1;
		for (int j = 0; p->any[i][j] && all; j++)
			all = has_term(norm_answer, p->any[i][j]);
		if (all)
			return 1;
	}
	return 0;
}

static void score_discussion(const Drill *d, const Answers *a, Score *s)
{
	char *norm = normalize(a->text ? a->text : "");
	s->self_assessed = a->has_self && a->text == NULL;
	for (int i = 0; i < d->n_checklist; i++) {
		const DrillPoint *p = &d->checklist[i];
		int covered = s->self_assessed ? index_of(a->self, a->n_self, p->id) >= 0
		                               : point_covered(p, norm);
		Buf b;
		buf_init(&b);
		if (covered)
			buf_adds(&b, p->point);
		else if (s->self_assessed)
			buf_printf(&b, "Not ticked in your self-assessment. A strong answer covers this:"
			               " %s",
			           p->point);
		else
			buf_printf(&b, "Your answer does not cover this point: %s", p->point);
		add_line(s, "checklist", p->id, p->points, covered ? p->points : 0,
		         covered ? "covered" : "", buf_str(&b));
		buf_fini(&b);
	}
	free(norm);
}

int score_answers(const Drill *d, const Answers *a, const Diagnosis *dx, Score **out, Err *err)
{
	*out = NULL;
	int discussion_answer = a->text != NULL || a->has_self;
	if (d->kind == DRILL_DISCUSSION && !discussion_answer)
		return err_set(err, TT_EINVAL, "drill %s is a discussion: it needs an answer text or a"
		                               " self-assessed checklist",
		               d->id);
	if (d->kind == DRILL_DIAGNOSIS && discussion_answer)
		return err_set(err, TT_EINVAL, "drill %s asks for hypotheses, checks and a decision",
		               d->id);
	if (a->hints_used < 0 || a->hints_used > d->n_hints)
		return err_set(err, TT_EINVAL, "drill %s has %d hints; %d were counted as used",
		               d->id, d->n_hints, a->hints_used);
	Score *s = xcalloc(1, sizeof *s);
	s->max = drill_max_score(d);
	if (d->kind == DRILL_DISCUSSION) {
		score_discussion(d, a, s);
	} else {
		score_hypotheses(d, a, dx, s);
		score_checks(d, a, dx, s);
		score_decision(d, a, dx, s);
	}
	for (int i = 0; i < a->hints_used; i++) {
		if (d->hints[i].cost <= 0)
			continue;
		char item[32], why[96];
		snprintf(item, sizeof item, "hint %d", i + 1);
		snprintf(why, sizeof why, "Hint %d was revealed; it costs %g point%s.", i + 1,
		         d->hints[i].cost, d->hints[i].cost == 1 ? "" : "s");
		add_line(s, "penalty", item, 0, -d->hints[i].cost, "", why);
	}
	double t = 0;
	for (int i = 0; i < s->n_lines; i++)
		t += s->lines[i].earned;
	s->total = t < 0 ? 0 : t;
	*out = s;
	return 0;
}

Answers *score_key_answers(const Drill *d)
{
	Answers *a = answers_new();
	if (d->kind == DRILL_DISCUSSION) {
		a->text = xstrdup(d->model_answer ? d->model_answer : "");
		return a;
	}
	a->hyp = xcalloc((size_t)d->n_key_hyp + 1, sizeof *a->hyp);
	a->check_hyp = xcalloc((size_t)d->n_key_hyp + 1, sizeof *a->check_hyp);
	a->check = xcalloc((size_t)d->n_key_hyp + 1, sizeof *a->check);
	for (int i = 0; i < d->n_key_hyp; i++) {
		a->hyp[a->n_hyp++] = xstrdup(d->key_hyp[i].id);
		for (int k = 0; k < d->n_key_checks; k++)
			if (strcmp(d->key_checks[k].hyp, d->key_hyp[i].id) == 0 &&
			    d->key_checks[k].n_accept > 0) {
				a->check_hyp[a->n_checks] = xstrdup(d->key_hyp[i].id);
				a->check[a->n_checks++] = xstrdup(d->key_checks[k].accept[0]);
			}
	}
	if (d->n_key_decisions > 0)
		a->decision = xstrdup(d->key_decisions[0]);
	return a;
}

/* ---- renderings ----------------------------------------------------------- */

static void fmt_pts(char *out, size_t sz, double v)
{
	if (fabs(v - round(v)) < 1e-9)
		snprintf(out, sz, "%.0f", v);
	else
		snprintf(out, sz, "%.1f", v);
}

void score_text(const Score *s, const Drill *d, Buf *out)
{
	char t[32], m[32];
	fmt_pts(t, sizeof t, s->total);
	fmt_pts(m, sizeof m, s->max);
	buf_printf(out, "%s: %s / %s points%s\n", d->id, t, m,
	           s->self_assessed ? " (self-assessed)" : "");
	const char *part = "";
	for (int i = 0; i < s->n_lines; i++) {
		const ScoreLine *l = &s->lines[i];
		if (strcmp(part, l->part) != 0) {
			part = l->part;
			buf_printf(out, "\n%s\n", part);
		}
		double lost = score_line_lost(l);
		char e[32], p[32], lo[32];
		fmt_pts(e, sizeof e, l->earned);
		fmt_pts(p, sizeof p, l->possible);
		fmt_pts(lo, sizeof lo, lost);
		if (l->possible > 0)
			buf_printf(out, "  %s %s/%s  %s", lost > 1e-9 ? "-" : "+", e, p, l->item);
		else
			buf_printf(out, "  - %s  %s", lo, l->item);
		if (l->answer[0])
			buf_printf(out, ": %s", l->answer);
		buf_addc(out, '\n');
		if (lost > 1e-9)
			buf_printf(out, "      lost %s: %s\n", lo, l->reason);
	}
}

/* A number for JSON whatever the process locale (the TUI sets one, and a
 * decimal comma would make the stored deductions invalid JSON). */
static void json_num(Buf *b, double v)
{
	char t[48];
	snprintf(t, sizeof t, "%.10g", v);
	for (char *c = t; *c; c++)
		if (*c == ',')
			*c = '.';
	buf_adds(b, t);
}

void score_lines_json(const Score *s, Buf *out)
{
	buf_addc(out, '[');
	for (int i = 0; i < s->n_lines; i++) {
		const ScoreLine *l = &s->lines[i];
		if (i)
			buf_addc(out, ',');
		buf_adds(out, "{\"part\":");
		buf_add_json_str(out, l->part, strlen(l->part));
		buf_adds(out, ",\"item\":");
		buf_add_json_str(out, l->item, strlen(l->item));
		buf_adds(out, ",\"possible\":");
		json_num(out, l->possible);
		buf_adds(out, ",\"earned\":");
		json_num(out, l->earned);
		buf_adds(out, ",\"lost\":");
		json_num(out, score_line_lost(l));
		buf_adds(out, ",\"answer\":");
		buf_add_json_str(out, l->answer, strlen(l->answer));
		buf_adds(out, ",\"reason\":");
		buf_add_json_str(out, l->reason, strlen(l->reason));
		buf_addc(out, '}');
	}
	buf_addc(out, ']');
}
