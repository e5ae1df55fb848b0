/*
 * screen.c - one frame: header, pane tabs, the active pane, the status
 * line, and the help screen or the "terminal too small" notice on top.
 *
 * The header answers the on-call questions first: which endpoint, is the
 * objective breached, over which window against which baseline, did the
 * class mix move, which budgets are breached.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "endpoints.h"
#include "evidence.h"
#include "fmt.h"
#include "sanitize.h"
#include "view.h"

/* ---- header ------------------------------------------------------------ */

static int x_text(Canvas *cv, int x, int y, Role role, const char *s)
{
	return x + canvas_text(cv, x, y, cv->w - x, role, s);
}

static int x_glyph(Canvas *cv, int x, int y, uint32_t cp, Role role)
{
	return x + canvas_put(cv, x, y, cp, role);
}

static void draw_title_row(const TuiApp *app, Canvas *cv, int y)
{
	const Analysis *a = app->a;
	int x = 0;
	x = x_text(cv, x, y, ROLE_TITLE, a ? a->endpoint : "(no analysis yet)");
	/* which of the window's endpoints this is, when there are others */
	int rank = app_endpoint_index(app);
	if (app->endpoints && app->endpoints->n > 1) {
		char e[64];
		if (rank >= 0)
			snprintf(e, sizeof e, " (%d of %d endpoints: e)", rank + 1, app->endpoints->n);
		else
			snprintf(e, sizeof e, " (%d endpoints: e)", app->endpoints->n);
		x = x_text(cv, x, y, ROLE_DIM, e);
	}
	x = x_text(cv, x, y, ROLE_DIM, "  class ");
	x = x_text(cv, x, y, app->wclass ? ROLE_WARN : ROLE_NORMAL, app->wclass ? app->wclass : "all");
	if (a && app->a_gen != app->opt_gen)
		x = x_text(cv, x, y, ROLE_DIM, " (updating: screen shows the previous choice)");
	char m[160];
	if (app->model && app->model->inferred) {
		snprintf(m, sizeof m, "model: inferred (M writes it)");
	} else if (app->model) {
		const char *mp = app->model->path ? app->model->path : "loaded";
		const char *slash = strrchr(mp, '/');
		snprintf(m, sizeof m, "model %s", slash ? slash + 1 : mp);
	} else {
		snprintf(m, sizeof m, "no model");
	}
	if (app->n_model_findings > 0) {
		size_t l = strlen(m);
		snprintf(m + l, sizeof m - l, ", %d disagreement%s with the data", app->n_model_findings,
		         app->n_model_findings == 1 ? "" : "s");
	}
	if (x + 2 + san_width(m) < cv->w)
		canvas_text_right(cv, cv->w, y, -1, ROLE_DIM, m);
}

static void draw_objective_row(const TuiApp *app, Canvas *cv, int y)
{
	const Analysis *a = app->a;
	if (a == NULL)
		return;
	const PopSummary *w = &a->pop[POP_WINDOW], *b = &a->pop[POP_BASELINE];
	const Glyphs *g = cv->g;
	char v[32], n[32], buf[160];
	int x = 0;
	fmt_ms(v, sizeof v, w->ingress.p99, w->ingress.n, 1);
	fmt_count(n, sizeof n, w->ingress.n);
	snprintf(buf, sizeof buf, "p99 %s ms ", v);
	x = x_text(cv, x, y, ROLE_HEADING, buf);
	if (a->objective_ms > 0) {
		/* judged as a budget is (analysis/budgets.c): breached only when
		 * the p99's whole 95 % interval is over the objective */
		ModelBudget ob = {.id = "objective", .op = ">", .threshold = a->objective_ms, .unit = "ms"};
		BudgetResult r;
		budget_judge_figure(&ob, w->ingress.p99, w->ingress.p99_lo, w->ingress.p99_hi, 1, "ms", &r);
		if (w->ingress.n == 0) {
			x = x_text(cv, x, y, ROLE_DIM, "NO DATA");
		} else if (r.state == BUDGET_BREACHED) {
			x = x_glyph(cv, x, y, g->breach, ROLE_BREACH);
			x = x_text(cv, x, y, ROLE_BREACH, " BREACHED");
		} else if (r.state == BUDGET_MAYBE) {
			/* its interval holds the objective: as the budgets say it */
			char ci[96];
			budget_format_interval(&r, ci, sizeof ci);
			snprintf(buf, sizeof buf, " may be breached %s", ci);
			x = x_glyph(cv, x, y, '?', ROLE_WARN);
			x = x_text(cv, x, y, ROLE_WARN, buf);
		} else {
			x = x_glyph(cv, x, y, g->ok, ROLE_OK);
			x = x_text(cv, x, y, ROLE_OK, " met");
		}
		snprintf(buf, sizeof buf, " objective %.0f ms", a->objective_ms);
		x = x_text(cv, x, y, ROLE_NORMAL, buf);
	} else {
		x = x_text(cv, x, y, ROLE_DIM, app->model == NULL ? "no objective (no model)"
		                               : app->model->inferred ? "no objective (not inferable)"
		                                                      : "no objective in the model");
	}
	snprintf(buf, sizeof buf, "  n=%s", n);
	x = x_text(cv, x, y, ROLE_DIM, buf);
	if (w->ingress.n > 0 && quant_small_sample(w->ingress.n))
		x = x_text(cv, x, y, ROLE_WARN, " thin");
	if (b->present) {
		char bv[32], d[32];
		fmt_ms(bv, sizeof bv, b->ingress.p99, b->ingress.n, 1);
		fmt_delta_ms(d, sizeof d, w->ingress.p99, w->ingress.n, b->ingress.p99, b->ingress.n);
		snprintf(buf, sizeof buf, "  baseline %s ms (%s)", bv, d);
		x = x_text(cv, x, y, ROLE_NORMAL, buf);
	}
	if (a->approx)
		x_text(cv, x, y, ROLE_WARN, "  ~ approximate");
}

static void draw_pop_row(const TuiApp *app, Canvas *cv, int y, int p)
{
	const Analysis *a = app->a;
	const char *name = p == POP_WINDOW ? "window   " : "baseline ";
	int x = x_text(cv, 0, y, ROLE_HEADING, name);
	if (p == POP_BASELINE && !app->period.has_baseline) {
		x_text(cv, x, y, ROLE_DIM, "none (b sets one, e.g. 'before')");
		return;
	}
	if (a == NULL || !a->pop[p].present) {
		x_text(cv, x, y, ROLE_DIM, "(computing)");
		return;
	}
	const PopSummary *s = &a->pop[p];
	char rng[96], dur[32], req[32], buf[200];
	if (s->requests == 0 && s->from_ns == 0 && s->to_ns == 0) {
		x_text(cv, x, y, ROLE_DIM, "no requests in range");
		return;
	}
	fmt_range(rng, sizeof rng, s->from_ns, s->to_ns);
	fmt_dur(dur, sizeof dur, s->to_ns - s->from_ns);
	fmt_count(req, sizeof req, s->requests);
	int open = p == POP_WINDOW && time_range_open(app->period.win);
	snprintf(buf, sizeof buf, "%s (%s%s)  %s req  %.1f/s", rng, dur, open ? ", open" : "", req,
	         s->rate_rps);
	x = x_text(cv, x, y, ROLE_NORMAL, buf);
	if (s->errors > 0) {
		char e[32];
		fmt_count(e, sizeof e, s->errors);
		snprintf(buf, sizeof buf, "  %s errors", e);
		x_text(cv, x, y, ROLE_WARN, buf);
	}
}

static void draw_mix_row(const TuiApp *app, Canvas *cv, int y)
{
	const Analysis *a = app->a;
	int x = x_text(cv, 0, y, ROLE_HEADING,
	               a && a->pop[POP_BASELINE].present ? "mix w/b  " : "mix      ");
	if (a == NULL)
		return;
	if (a->n_classes == 0) {
		x_text(cv, x, y, ROLE_DIM, "no workload classes in the data");
		return;
	}
	const PopSummary *w = &a->pop[POP_WINDOW], *b = &a->pop[POP_BASELINE];
	if (a->class_filter) {
		char buf[160];
		snprintf(buf, sizeof buf, "(class filter on: mix of the filtered requests)");
		x = x_text(cv, x, y, ROLE_DIM, buf);
		return;
	}
	for (int c = 0; c < a->n_classes && x < cv->w; c++) {
		char pw[16], pb[16], buf[128];
		fmt_pct(pw, sizeof pw, w->requests ? (double)w->class_requests[c] / (double)w->requests : NAN);
		x = x_text(cv, x, y, ROLE_NORMAL, a->classes[c]);
		if (b->present) {
			fmt_pct(pb, sizeof pb, b->requests ? (double)b->class_requests[c] / (double)b->requests : NAN);
			snprintf(buf, sizeof buf, " %s/%s  ", pw, pb);
		} else {
			snprintf(buf, sizeof buf, " %s  ", pw);
		}
		x = x_text(cv, x, y, ROLE_NORMAL, buf);
	}
}

/* One line for every budget of the model, judged as analysis/budgets.c
 * judges them (on the figure's 95 % interval): the breached ones by name
 * and value, then those that may be breached with their interval and
 * source, then how many are within and how many cannot be evaluated yet.
 * When the labels do not fit, the budget ids stand in for them, then the
 * sources are left out (`diagnose` has them in full). */
static void draw_budget_row(const TuiApp *app, Canvas *cv, int y)
{
	const Glyphs *g = cv->g;
	int x0 = x_text(cv, 0, y, ROLE_HEADING, "budgets  ");
	const Model *m = app->model;
	if (m == NULL || m->n_budgets == 0) {
		x_text(cv, x0, y, ROLE_DIM, m ? "none declared in the model" : "none (no model; --model FILE)");
		return;
	}
	/* asked first: a diagnosis that lands while the row is drawn fills in
	 * values, and the next frame drops the word */
	int pending = app_evidence_pending(app);
	int ok = 0, unknown = 0;
	char tail[96] = "";
	/* four forms, longest first: labels; ids for the breached ones; a
	 * shorter source; the interval alone */
	enum { MAXI = 8, NFORM = 4 };
	char items[MAXI][NFORM][400];
	int state[MAXI];
	int n_items = 0, w[NFORM] = {0, 0, 0, 0};
	/* breached first, then the ones that may be */
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < m->n_budgets; i++) {
			const ModelBudget *b = &m->budgets[i];
			BudgetResult r;
			int st = app_budget(app, b, &r);
			if (pass == 0 && st == BUDGET_UNKNOWN)
				unknown++;
			if (pass == 0 && st == BUDGET_OK)
				ok++;
			if (st != (pass == 0 ? BUDGET_BREACHED : BUDGET_MAYBE) || n_items == MAXI)
				continue;
			char val[48], ci[96], n[32] = "", src[48];
			budgets_format_value(b, r.value, val, sizeof val);
			budget_format_interval(&r, ci, sizeof ci);
			if (r.n > 0)
				fmt_count(n, sizeof n, r.n);
			snprintf(src, sizeof src, "%s%s%s", evidence_source_name(r.src), *n ? " " : "", n);
			const char *id = b->id ? b->id : (b->evidence ? b->evidence : "?");
			const char *lab = b->label ? b->label : id;
			char(*it)[400] = items[n_items];
			if (st == BUDGET_BREACHED) {
				snprintf(it[0], sizeof it[0], " %s (%s)  ", lab, val);
				for (int k = 1; k < NFORM; k++)
					snprintf(it[k], sizeof it[k], " %s (%s)  ", id, val);
			} else {
				/* the interval holds the threshold: say which and from where */
				snprintf(it[0], sizeof it[0], " %s may be breached (%s %s, %s)  ", lab, val, ci,
				         r.source[0] ? r.source : "exact");
				snprintf(it[1], sizeof it[1], " %s may be breached (%s %s, %s)  ", id, val, ci,
				         r.source[0] ? r.source : "exact");
				snprintf(it[2], sizeof it[2], " %s may be (%s %s, %s)  ", id, val, ci, src);
				snprintf(it[3], sizeof it[3], " %s may be (%s)  ", id, ci);
			}
			state[n_items] = st;
			for (int k = 0; k < NFORM; k++)
				w[k] += 1 + san_width(it[k]);
			n_items++;
		}
	}
	int tail_w = 0;
	if (ok)
		tail_w += 1 + snprintf(tail, sizeof tail, " %d within  ", ok);
	char unk[64] = "";
	/* missing values are "no evidence" only once the evidence is in: while
	 * it is computed, say so */
	if (unknown && pending)
		tail_w += snprintf(unk, sizeof unk, "%d evaluating...", unknown);
	else if (unknown)
		tail_w += snprintf(unk, sizeof unk, "%d not evaluated (no evidence)", unknown);
	int form = 0;
	while (form < NFORM - 1 && x0 + w[form] + tail_w > cv->w)
		form++;
	int x = x0;
	for (int k = 0; k < n_items; k++) {
		int br = state[k] == BUDGET_BREACHED;
		x = x_glyph(cv, x, y, br ? g->breach : '?', br ? ROLE_BREACH : ROLE_WARN);
		x = x_text(cv, x, y, br ? ROLE_BREACH : ROLE_WARN, items[k][form]);
	}
	if (ok) {
		x = x_glyph(cv, x, y, g->ok, ROLE_OK);
		x = x_text(cv, x, y, ROLE_OK, tail);
	}
	if (unknown)
		x_text(cv, x, y, ROLE_DIM, unk);
}

/* Returns the rows used. */
static int draw_header(const TuiApp *app, Canvas *cv, int full)
{
	draw_title_row(app, cv, 0);
	draw_objective_row(app, cv, 1);
	if (!full) {
		draw_budget_row(app, cv, 2);
		return 3;
	}
	draw_pop_row(app, cv, 2, POP_WINDOW);
	draw_pop_row(app, cv, 3, POP_BASELINE);
	draw_mix_row(app, cv, 4);
	draw_budget_row(app, cv, 5);
	return 6;
}

/* ---- tabs and status --------------------------------------------------- */

/* The tabs of the panes that can be opened now, from app.c's pane table. */
static void draw_tabs(const TuiApp *app, Canvas *cv, int y)
{
	int x = 0;
	for (int p = 0; p < PANE_COUNT && x < cv->w; p++) {
		/* the Trace tab stays, dimmed, so the numbers do not move */
		if (p != PANE_TRACE && !app_pane_available(app, p))
			continue;
		char label[96];
		app_pane_label(app, p, label, sizeof label);
		int active = p == app->pane;
		char buf[128];
		snprintf(buf, sizeof buf, active ? "[%s]" : " %s ", label);
		Role r = active ? ROLE_TAB_ACTIVE : (!app_pane_available(app, p) ? ROLE_DIM : ROLE_TAB);
		x += canvas_text(cv, x, y, cv->w - x, r, buf);
		x += canvas_text(cv, x, y, cv->w - x, ROLE_NORMAL, " ");
	}
}

static const char *prompt_title(int kind)
{
	switch (kind) {
	case PROMPT_FILTER: return "filter nodes: ";
	case PROMPT_WINDOW: return "window (A..B, all, last 5m): ";
	case PROMPT_TRACE: return "trace id (32 hex digits): ";
	default: return "baseline (A..B, before, none): ";
	}
}

static void draw_status(const TuiApp *app, Canvas *cv, int y)
{
	canvas_fill(cv, 0, y, cv->w, 1, ' ', ROLE_STATUS);
	if (app->prompt.kind != PROMPT_NONE) {
		int x = canvas_text(cv, 0, y, -1, ROLE_PROMPT, prompt_title(app->prompt.kind));
		x += canvas_text(cv, x, y, -1, ROLE_PROMPT, app->prompt.text);
		canvas_put(cv, x, y, '_', ROLE_PROMPT);
		if (app->status[0])
			canvas_text_right(cv, cv->w, y, cv->w - x - 2, app->status_error ? ROLE_ERROR : ROLE_STATUS,
			                  app->status);
		return;
	}
	int x = canvas_text(cv, 0, y, -1, app->paused ? ROLE_PAUSED : ROLE_LIVE,
	                    app->paused ? " PAUSED " : " LIVE ");
	char buf[200], t[32];
	if (app->status[0]) {
		x += canvas_text(cv, x, y, 1, ROLE_STATUS, " ");
		canvas_text(cv, x, y, cv->w - x - 1, app->status_error ? ROLE_ERROR : ROLE_STATUS, app->status);
		return;
	}
	snprintf(buf, sizeof buf, " tick %.1fs", app->refresh_ms / 1000.0);
	x += canvas_text(cv, x, y, -1, ROLE_STATUS, buf);
	if (app->changed_at_s) {
		fmt_clock(t, sizeof t, app->changed_at_s);
		snprintf(buf, sizeof buf, " | data changed %s", t);
	} else {
		snprintf(buf, sizeof buf, " | data unchanged");
	}
	x += canvas_text(cv, x, y, -1, ROLE_STATUS, buf);
	if (app->paused && app->stale)
		x += canvas_text(cv, x, y, -1, ROLE_STATUS, " (not shown: p resumes)");
	if (app->a && app->a->approx)
		snprintf(buf, sizeof buf, " | ~ approximate (aggregates, within 1 %%): exact computing...");
	else if (app->computing && app->busy_ms >= 1000 && app->compute_ms >= 1000)
		snprintf(buf, sizeof buf, " | computing %.0f s (last took %.1f s)", app->busy_ms / 1000,
		         app->compute_ms / 1000);
	else if (app->computing && app->busy_ms >= 1000)
		snprintf(buf, sizeof buf, " | computing %.0f s", app->busy_ms / 1000);
	else if (app->computing)
		snprintf(buf, sizeof buf, " | computing...");
	else if (app->compute_ms >= 1000)
		snprintf(buf, sizeof buf, " | computed in %.1f s", app->compute_ms / 1000);
	else if (app->compute_ms > 0)
		snprintf(buf, sizeof buf, " | computed in %.0f ms", app->compute_ms);
	else
		buf[0] = '\0';
	x += canvas_text(cv, x, y, -1, ROLE_STATUS, buf);
	if (app->extra[0]) {
		snprintf(buf, sizeof buf, " | %s", app->extra);
		x += canvas_text(cv, x, y, -1, ROLE_STATUS, buf);
	}
	if (app->a && app->a->dq.unrecognised_sources > 0) {
		/* bodies the receiver answered 200 but could not use (docs/live.md) */
		snprintf(buf, sizeof buf, " | %lld unrecognised", (long long)app->a->dq.unrecognised_sources);
		x += canvas_text(cv, x, y, -1, ROLE_ERROR, buf);
	}
	const char *keys = "? help  q quit ";
	if (x + 2 + (int)strlen(keys) <= cv->w)
		canvas_text_right(cv, cv->w, y, -1, ROLE_STATUS, keys);
}

/* ---- help -------------------------------------------------------------- */

static void draw_box(Canvas *cv, int x, int y, int w, int h)
{
	const Glyphs *g = cv->g;
	canvas_fill(cv, x, y, w, h, ' ', ROLE_NORMAL);
	for (int i = 1; i < w - 1; i++) {
		canvas_put(cv, x + i, y, g->hline, ROLE_DIM);
		canvas_put(cv, x + i, y + h - 1, g->hline, ROLE_DIM);
	}
	for (int j = 1; j < h - 1; j++) {
		canvas_put(cv, x, y + j, g->vline, ROLE_DIM);
		canvas_put(cv, x + w - 1, y + j, g->vline, ROLE_DIM);
	}
	canvas_put(cv, x, y, g->corner[0], ROLE_DIM);
	canvas_put(cv, x + w - 1, y, g->corner[1], ROLE_DIM);
	canvas_put(cv, x, y + h - 1, g->corner[2], ROLE_DIM);
	canvas_put(cv, x + w - 1, y + h - 1, g->corner[3], ROLE_DIM);
}

/* One line of the help screen. */
typedef struct HelpLine {
	int kind;                /* HL_* */
	char keys[48];
	const char *text;
	int text_len;            /* bytes of text on this line (a long text
	                          * goes on over continuation lines) */
	char heading[96];
	int glyph;               /* HL_GLYPHS: which legend row */
} HelpLine;

enum { HL_KEY, HL_HEADING, HL_BLANK, HL_GLYPHS };

#define HELP_MAX 160

/* Bytes of text's longest prefix of whole words within tw columns (at
 * least one word, so a word wider than tw is cut rather than looped on). */
static int help_fit(const char *text, int tw)
{
	int end = 0, i = 0;
	char word[256];
	while (text[i]) {
		int j = i;
		while (text[j] == ' ')
			j++;
		while (text[j] && text[j] != ' ')
			j++;
		int len = j < (int)sizeof word ? j : (int)sizeof word - 1;
		memcpy(word, text, (size_t)len);
		word[len] = '\0';
		if (end > 0 && san_width(word) > tw)
			break;
		end = j;
		i = j;
	}
	return end;
}

/* One key's line, and as many continuation lines (no keys) as its text
 * needs at tw columns: a long explanation is wrapped, never cut. */
static void help_key_line(HelpLine *l, int *n, const TuiApp *app, Action act, const char *text,
                          int tw)
{
	const char *p = text;
	for (int first = 1; *p && *n < HELP_MAX; first = 0) {
		HelpLine *h = &l[(*n)++];
		memset(h, 0, sizeof *h);
		h->kind = HL_KEY;
		if (first && act == ACT_GOTO_PANE)
			snprintf(h->keys, sizeof h->keys, "1-%d", PANE_COUNT);
		else if (first)
			keymap_keys_for(act, app->ascii, h->keys, sizeof h->keys);
		int len = help_fit(p, first ? tw : tw - 2);
		h->text = p;
		h->text_len = len;
		p += len;
		while (*p == ' ')
			p++;
	}
}

/* The keys every pane shares (from keymap.c), then, for every pane of
 * app.c's pane table, what its own keys do (ViewOps.keys), then the glyph
 * legend. Panes that are not open now are listed too, marked as such. */
static int help_lines(const TuiApp *app, HelpLine *l, int tw)
{
	int n = 0, na;
	const ActionInfo *acts = keymap_actions(&na);
	for (int i = 0; i < na; i++)
		if (!acts[i].per_pane)
			help_key_line(l, &n, app, acts[i].action, acts[i].help, tw);
	for (int p = 0; p < PANE_COUNT && n < HELP_MAX - 2; p++) {
		const ViewOps *ops = app->views[p]->ops;
		l[n].kind = HL_BLANK;
		n++;
		HelpLine *h = &l[n++];
		memset(h, 0, sizeof *h);
		h->kind = HL_HEADING;
		snprintf(h->heading, sizeof h->heading, "%d %s%s", p + 1, ops->title,
		         app_pane_available(app, p) ? "" : " (not open now)");
		for (const PaneKey *k = ops->keys; k && k->action != ACT_NONE; k++)
			help_key_line(l, &n, app, k->action, k->help, tw);
	}
	for (int g = 0; g < 6 && n < HELP_MAX; g++) {
		l[n].kind = g == 0 ? HL_BLANK : HL_GLYPHS;
		l[n].glyph = g;
		n++;
	}
	return n;
}

static void draw_help(TuiApp *app, Canvas *cv)
{
	const Glyphs *g = cv->g;
	static HelpLine hl[HELP_MAX];
	int w = cv->w - 4 < 78 ? cv->w - 4 : 78;
	int lines = help_lines(app, hl, w - 16);
	int h = cv->h - 2 < lines + 2 ? cv->h - 2 : lines + 2;
	int x0 = (cv->w - w) / 2, y0 = (cv->h - h) / 2;
	draw_box(cv, x0, y0, w, h);
	canvas_text(cv, x0 + 2, y0, w - 4, ROLE_TITLE, " keys (? or Esc closes, arrows scroll) ");
	int inner = h - 2;
	int max_scroll = lines - inner > 0 ? lines - inner : 0;
	if (app->help_scroll > max_scroll)
		app->help_scroll = max_scroll;
	for (int row = 0; row < inner && app->help_scroll + row < lines; row++) {
		const HelpLine *l = &hl[app->help_scroll + row];
		int y = y0 + 1 + row;
		int x = x0 + 2;
		switch (l->kind) {
		case HL_KEY:
			canvas_text(cv, x, y, 11, ROLE_KEY, l->keys);
			{
				char t[512];
				snprintf(t, sizeof t, "%.*s", l->text_len, l->text);
				/* a continuation is indented by two */
				int ind = l->keys[0] ? 0 : 2;
				canvas_text(cv, x + 12 + ind, y, w - 16 - ind, ROLE_NORMAL, t);
			}
			break;
		case HL_HEADING:
			canvas_text(cv, x, y, w - 4, ROLE_HEADING, l->heading);
			break;
		case HL_GLYPHS:
			if (l->glyph == 1) {
				canvas_text(cv, x, y, w - 4, ROLE_HEADING, "glyphs");
			} else if (l->glyph == 2) {
				x += canvas_put(cv, x, y, g->edge_serial, ROLE_NORMAL);
				x += canvas_text(cv, x, y, -1, ROLE_NORMAL, " serial call  ");
				x += canvas_put(cv, x, y, g->edge_parallel, ROLE_NORMAL);
				x += canvas_text(cv, x, y, -1, ROLE_NORMAL, " parallel (fan-out)  ");
				x += canvas_put(cv, x, y, g->crit, ROLE_CRIT);
				canvas_text(cv, x, y, -1, ROLE_NORMAL, " on the critical path");
			} else if (l->glyph == 3) {
				draw_split_legend(cv, x, y, w - 4);
			} else if (l->glyph == 4) {
				x += canvas_put(cv, x, y, g->breach, ROLE_BREACH);
				x += canvas_text(cv, x, y, -1, ROLE_NORMAL, " breached  ");
				x += canvas_put(cv, x, y, g->ok, ROLE_OK);
				x += canvas_text(cv, x, y, -1, ROLE_NORMAL, " within  ");
				canvas_text(cv, x, y, x0 + w - 2 - x, ROLE_NORMAL, "? unknown  - not applicable");
			} else if (l->glyph == 5) {
				canvas_text(cv, x, y, w - 4, ROLE_DIM,
				            "tags: M mandatory, opt optional, core = core node (from the model)");
			}
			break;
		default:
			break;
		}
	}
	if (max_scroll > 0)
		draw_scroll_hint(cv, x0 + w - 2, y0 + h - 1, app->help_scroll, inner, lines);
}

/* ---- frame ------------------------------------------------------------- */

static void draw_too_small(Canvas *cv)
{
	char a[64], b[64];
	snprintf(a, sizeof a, "terminal too small: %dx%d", cv->w, cv->h);
	snprintf(b, sizeof b, "need at least %dx%d (q quits)", TUI_MIN_W, TUI_MIN_H);
	int y = cv->h / 2 - 1;
	if (y < 0)
		y = 0;
	int wa = (int)strlen(a), wb = (int)strlen(b);
	canvas_text(cv, wa < cv->w ? (cv->w - wa) / 2 : 0, y, -1, ROLE_WARN, a);
	canvas_text(cv, wb < cv->w ? (cv->w - wb) / 2 : 0, y + 1, -1, ROLE_NORMAL, b);
}

void app_draw(TuiApp *app, Canvas *cv)
{
	/* figures from the import-time aggregates carry "~" until the exact
	 * analysis replaces them (not the waterfall: one trace, read whole) */
	int approx = app->a && app->a->approx;
	fmt_set_approx(approx);
	canvas_clear(cv);
	if (cv->w < TUI_MIN_W || cv->h < TUI_MIN_H) {
		draw_too_small(cv);
		return;
	}
	int full = cv->h >= 22;
	int hy = draw_header(app, cv, full);
	draw_tabs(app, cv, hy);
	Rect r = {0, hy + 1, cv->w, cv->h - hy - 2};
	if (r.w != app->view_w || r.h != app->view_h) {
		for (int i = 0; i < PANE_COUNT; i++)
			if (app->views[i]->ops->resize)
				app->views[i]->ops->resize(app->views[i], r.w, r.h);
		app->view_w = r.w;
		app->view_h = r.h;
	}
	if (app->a == NULL && app->pane != PANE_DRILL) {
		canvas_text(cv, 2, r.y + 1, r.w - 4, ROLE_DIM,
		            app->computing ? "computing the first analysis (large stores take a while;"
		                             " q quits)"
		                           : "no analysis yet");
	} else {
		View *v = app->views[app->pane];
		fmt_set_approx(approx && app->pane != PANE_TRACE);
		v->ops->draw(v, app, cv, r);
		fmt_set_approx(approx);
	}
	draw_status(app, cv, cv->h - 1);
	if (app->help)
		draw_help(app, cv);
	fmt_set_approx(0);
}
