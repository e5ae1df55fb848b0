/*
 * view_drill.c - the Drill pane of `tailtriage drill train ID`: the brief,
 * then the questions one step at a time, then the score.
 *
 * Diagnosis drill: brief -> rank hypotheses (Enter picks the next rank) ->
 * a check for each ranked hypothesis -> a decision -> review (submit or
 * start over) -> result. Discussion drill: brief and question -> the
 * model answer with its checklist, ticked by the trainee -> result.
 * Left goes back one step (undoing the last pick). Every list ends with a
 * row that reveals the next hint; revealed hints are counted and cost the
 * points the drill says.
 *
 * The pane holds only indexes into the TuiDrill's lists; scoring happens
 * in the caller's submit callback, which receives the answers as JSON in
 * the answers-file format. The other panes stay usable (Tab) to look at
 * the DAG while answering, except the Board: it shows the engine's own
 * ranking and decisions, the answer, so it stays sealed
 * (TuiApp.board_sealed) until the first answers are scored.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "sanitize.h"
#include "tui_drill.h"
#include "view.h"

enum { ST_BRIEF, ST_HYP, ST_CHECK, ST_DECISION, ST_REVIEW, ST_MODEL, ST_RESULT };

#define DV_MAX_RANK 8

typedef struct DrillView {
	View base;
	const TuiDrill *d;
	int step;
	int cursor, top;          /* list selection */
	int scroll;               /* text scroll (brief, result) */
	int hyp[DV_MAX_RANK];     /* ranked picks: indexes into d->hyps */
	int n_hyp;
	int check[DV_MAX_RANK];   /* per ranked pick: index into d->checks, -1 none */
	int check_i;              /* the pick a check is being chosen for */
	int rank;                 /* hypotheses to rank (the drill's, at most DV_MAX_RANK) */
	int decision;             /* index into d->decisions, -1 none */
	int hints_shown;
	unsigned char *ticked;    /* discussion checklist, n_points */
	char *result;             /* the submit callback's text (owned) */
	int submissions;
	char msg[300];            /* error or note under the list */
} DrillView;

/* ---- text ----------------------------------------------------------------- */

/* Draws text word-wrapped to w columns from row y, skipping the first skip
 * wrapped lines and stopping before row maxy. Returns the total number of
 * wrapped lines (for scrolling). Each input line keeps its leading spaces
 * on its continuation lines, so indented score lines stay readable. */
static int wrap_draw(Canvas *cv, int x, int y, int w, int maxy, int skip, Role role,
                     const char *text)
{
	int lines = 0;
	if (w < 8)
		w = 8;
	char line[1024];
	const char *p = text ? text : "";
	while (*p) {
		size_t n = strcspn(p, "\n");
		int ind = 0;
		while ((size_t)ind < n && p[ind] == ' ')
			ind++;
		if (ind > w / 2)
			ind = w / 2;
		int width = w - ind;
		const char *q = p + ind, *end = p + n;
		do {
			size_t ll = 0;
			int cols = 0;
			while (q < end) {
				const char *ws = q;
				while (q < end && *q == ' ')
					q++;
				const char *we = q;
				while (we < end && *we != ' ')
					we++;
				if (we == q)
					break;
				char word[512];
				size_t wl = (size_t)(we - q) < sizeof word - 1 ? (size_t)(we - q) : sizeof word - 1;
				memcpy(word, q, wl);
				word[wl] = '\0';
				int ww = san_width(word);
				int sp = ll ? 1 : 0;
				if (ll && cols + sp + ww > width) {
					q = ws;
					break;
				}
				if (ll + (size_t)sp + wl + 1 >= sizeof line) {
					q = ws;
					break;
				}
				if (sp)
					line[ll++] = ' ';
				memcpy(line + ll, word, wl);
				ll += wl;
				cols += sp + ww;
				q = we;
			}
			while (q < end && *q == ' ')
				q++;
			line[ll] = '\0';
			if (lines >= skip && y < maxy)
				canvas_text(cv, x + ind, y++, width, role, line);
			lines++;
		} while (q < end);
		p = end;
		if (*p == '\n')
			p++;
	}
	return lines;
}

/* ---- answers ---------------------------------------------------------------- */

static void answers_to_json(const DrillView *v, Buf *b)
{
	const TuiDrill *d = v->d;
	buf_addc(b, '{');
	if (d->discussion) {
		buf_adds(b, "\"self_assessed\":[");
		int first = 1;
		for (int i = 0; i < d->n_points; i++)
			if (v->ticked[i]) {
				if (!first)
					buf_addc(b, ',');
				first = 0;
				buf_add_json_str(b, d->points[i].id, strlen(d->points[i].id));
			}
		buf_addc(b, ']');
	} else {
		buf_adds(b, "\"hypotheses\":[");
		for (int i = 0; i < v->n_hyp; i++) {
			if (i)
				buf_addc(b, ',');
			const char *id = d->hyps[v->hyp[i]].id;
			buf_add_json_str(b, id, strlen(id));
		}
		buf_adds(b, "],\"checks\":{");
		int first = 1;
		for (int i = 0; i < v->n_hyp; i++) {
			if (v->check[i] < 0)
				continue;
			if (!first)
				buf_addc(b, ',');
			first = 0;
			const char *h = d->hyps[v->hyp[i]].id, *c = d->checks[v->check[i]].id;
			buf_add_json_str(b, h, strlen(h));
			buf_addc(b, ':');
			buf_add_json_str(b, c, strlen(c));
		}
		buf_addc(b, '}');
		if (v->decision >= 0) {
			const char *id = d->decisions[v->decision].id;
			buf_adds(b, ",\"decision\":");
			buf_add_json_str(b, id, strlen(id));
		}
	}
	buf_printf(b, ",\"hints_used\":%d}", v->hints_shown);
}

static void submit(DrillView *v)
{
	Buf b;
	buf_init(&b);
	answers_to_json(v, &b);
	char err[512] = "";
	char *r = v->d->submit ? v->d->submit(v->d->ctx, buf_str(&b), err, sizeof err) : NULL;
	buf_fini(&b);
	if (r == NULL) {
		snprintf(v->msg, sizeof v->msg, "could not score: %.200s", err[0] ? err : "no scorer");
		return;
	}
	free(v->result);
	v->result = r;
	v->submissions++;
	v->step = ST_RESULT;
	v->scroll = 0;
	v->msg[0] = '\0';
}

/* ---- list rows per step ------------------------------------------------------ */

/* Row kinds in a list step. */
enum { ROW_CHOICE, ROW_HINT, ROW_SUBMIT, ROW_RESTART, ROW_SKIP };

typedef struct Row {
	int kind;
	int index;                /* choice index for ROW_CHOICE */
} Row;

static int picked(const DrillView *v, int h)
{
	for (int i = 0; i < v->n_hyp; i++)
		if (v->hyp[i] == h)
			return 1;
	return 0;
}

/* Fills rows (capacity n_max) for the current step; returns the count. */
static int step_rows(const DrillView *v, Row *rows, int n_max)
{
	const TuiDrill *d = v->d;
	int n = 0;
#define PUSH(k, i) do { if (n < n_max) rows[n++] = (Row){(k), (i)}; } while (0)
	switch (v->step) {
	case ST_HYP:
		for (int i = 0; i < d->n_hyps; i++)
			if (!picked(v, i))
				PUSH(ROW_CHOICE, i);
		if (v->n_hyp > 0)
			PUSH(ROW_SKIP, 0); /* stop ranking here */
		break;
	case ST_CHECK:
		for (int i = 0; i < d->n_checks; i++)
			PUSH(ROW_CHOICE, i);
		PUSH(ROW_SKIP, 0);
		break;
	case ST_DECISION:
		for (int i = 0; i < d->n_decisions; i++)
			PUSH(ROW_CHOICE, i);
		break;
	case ST_REVIEW:
		PUSH(ROW_SUBMIT, 0);
		PUSH(ROW_RESTART, 0);
		break;
	case ST_MODEL:
		for (int i = 0; i < d->n_points; i++)
			PUSH(ROW_CHOICE, i);
		PUSH(ROW_SUBMIT, 0);
		break;
	default:
		return 0;
	}
	if (v->step != ST_REVIEW && v->step != ST_MODEL && v->hints_shown < d->n_hints)
		PUSH(ROW_HINT, v->hints_shown);
#undef PUSH
	return n;
}

static void row_label(const DrillView *v, const Row *r, char *out, size_t sz)
{
	const TuiDrill *d = v->d;
	const TuiDrillChoice *c = NULL;
	switch (r->kind) {
	case ROW_HINT:
		snprintf(out, sz, "[reveal hint %d: costs %g points]", r->index + 1,
		         d->hint_costs ? d->hint_costs[r->index] : 0.0);
		return;
	case ROW_SUBMIT:
		snprintf(out, sz, v->step == ST_MODEL ? "[submit self-assessment]" : "[submit answers]");
		return;
	case ROW_RESTART:
		snprintf(out, sz, "[start over]");
		return;
	case ROW_SKIP:
		snprintf(out, sz, v->step == ST_HYP ? "[stop ranking here]" : "[no check for this one]");
		return;
	}
	switch (v->step) {
	case ST_HYP: c = &d->hyps[r->index]; break;
	case ST_CHECK: c = &d->checks[r->index]; break;
	case ST_DECISION: c = &d->decisions[r->index]; break;
	case ST_MODEL:
		snprintf(out, sz, "[%c] %s", v->ticked[r->index] ? 'x' : ' ', d->points[r->index].text
		                                                                 ? d->points[r->index].text
		                                                                 : d->points[r->index].id);
		return;
	default: out[0] = '\0'; return;
	}
	if (c->text)
		snprintf(out, sz, "%-30s %s", c->id, c->text);
	else
		snprintf(out, sz, "%s", c->id);
}

/* ---- drawing --------------------------------------------------------------- */

static const char *step_title(const DrillView *v, char *buf, size_t sz)
{
	const TuiDrill *d = v->d;
	switch (v->step) {
	case ST_BRIEF: return "brief (Enter: answer the questions)";
	case ST_HYP:
		snprintf(buf, sz, "rank %d of %d: pick the hypothesis you rank #%d (Left: undo)",
		         v->n_hyp + 1, v->rank, v->n_hyp + 1);
		return buf;
	case ST_CHECK:
		snprintf(buf, sz, "discriminating check for #%d %s (Left: back)", v->check_i + 1,
		         d->hyps[v->hyp[v->check_i]].id);
		return buf;
	case ST_DECISION: return "decision: what do you do now? (Left: back)";
	case ST_REVIEW: return "review your answers";
	case ST_MODEL: return "model answer: tick what your answer covered (Enter toggles)";
	default: return "result (Left: change your answers and submit again)";
	}
}

static int draw_summary(const DrillView *v, Canvas *cv, int x, int y, int w)
{
	const TuiDrill *d = v->d;
	char buf[512];
	int y0 = y;
	for (int i = 0; i < v->n_hyp; i++) {
		const char *chk = v->check[i] >= 0 ? d->checks[v->check[i]].id : "-";
		snprintf(buf, sizeof buf, "#%d %s   check: %s", i + 1, d->hyps[v->hyp[i]].id, chk);
		canvas_text(cv, x, y++, w, ROLE_NORMAL, buf);
	}
	snprintf(buf, sizeof buf, "decision: %s",
	         v->decision >= 0 ? d->decisions[v->decision].id : "-");
	canvas_text(cv, x, y++, w, ROLE_NORMAL, buf);
	if (v->hints_shown) {
		snprintf(buf, sizeof buf, "hints revealed: %d", v->hints_shown);
		canvas_text(cv, x, y++, w, ROLE_WARN, buf);
	}
	return y - y0;
}

static void drill_draw(View *vv, const TuiApp *app, Canvas *cv, Rect r)
{
	DrillView *v = (DrillView *)vv;
	const TuiDrill *d = v->d;
	vv->rows = r.h;
	int y = r.y, maxy = r.y + r.h;
	char buf[600];
	(void)app;
	if (d == NULL) {
		canvas_text(cv, 2, y, r.w - 4, ROLE_DIM, "no drill (tailtriage drill train ID)");
		return;
	}
	snprintf(buf, sizeof buf, "Drill %s: %s", d->id, d->title ? d->title : "");
	canvas_text(cv, 1, y++, r.w - 2, ROLE_TITLE, buf);
	canvas_text(cv, 1, y++, r.w - 2, ROLE_HEADING, step_title(v, buf, sizeof buf));
	if (v->step == ST_BRIEF || v->step == ST_RESULT) {
		const char *text = v->step == ST_RESULT ? v->result : d->brief;
		Buf t;
		buf_init(&t);
		buf_adds(&t, text ? text : "");
		if (v->step == ST_BRIEF && d->discussion && d->prompt)
			buf_printf(&t, "\n\nQuestion: %s", d->prompt);
		int total = wrap_draw(cv, 2, y, r.w - 4, maxy - 1, v->scroll, ROLE_NORMAL, buf_str(&t));
		buf_fini(&t);
		if (v->scroll > total - 1)
			v->scroll = total > 0 ? total - 1 : 0;
		draw_scroll_hint(cv, r.w, r.y + 1, v->scroll, maxy - 1 - y, total);
		canvas_text(cv, 1, maxy - 1, r.w - 2, ROLE_DIM,
		            v->step == ST_BRIEF ? "Up/Down scroll  Enter start  Tab other panes"
		                                : "Up/Down scroll  Left change answers  q quit");
		return;
	}
	if (v->step == ST_MODEL && d->model_answer) {
		int avail = (maxy - y) / 2;
		wrap_draw(cv, 2, y, r.w - 4, y + avail, 0, ROLE_DIM, d->model_answer);
		y += avail;
	}
	Row rows[256];
	int n = step_rows(v, rows, 256);
	int extra = v->step == ST_REVIEW ? v->n_hyp + 2 : 0;
	if (extra) {
		y += draw_summary(v, cv, 2, y, r.w - 4);
		y++;
	}
	int hint_lines = v->hints_shown > 0 ? 3 : 0;
	int list_h = maxy - y - 1 - hint_lines - (v->msg[0] ? 1 : 0);
	if (list_h < 1)
		list_h = 1;
	if (v->cursor >= n)
		v->cursor = n > 0 ? n - 1 : 0;
	if (v->cursor < v->top)
		v->top = v->cursor;
	if (v->cursor >= v->top + list_h)
		v->top = v->cursor - list_h + 1;
	int ly = y;
	for (int i = v->top; i < n && i < v->top + list_h; i++, ly++) {
		int sel = i == v->cursor;
		row_label(v, &rows[i], buf, sizeof buf);
		if (sel) {
			canvas_put(cv, 0, ly, cv->g->pointer, ROLE_SELECTED);
			canvas_fill(cv, 1, ly, r.w - 1, 1, ' ', ROLE_SELECTED);
		}
		canvas_text(cv, 2, ly, r.w - 3, sel ? ROLE_SELECTED
		                                  : rows[i].kind == ROW_CHOICE ? ROLE_NORMAL : ROLE_KEY,
		            buf);
	}
	draw_scroll_hint(cv, r.w, r.y + 1, v->top, list_h, n);
	y += list_h;
	if (v->msg[0])
		canvas_text(cv, 1, y++, r.w - 2, ROLE_ERROR, v->msg);
	if (v->hints_shown > 0) {
		snprintf(buf, sizeof buf, "hint %d: %s", v->hints_shown, d->hints[v->hints_shown - 1]);
		wrap_draw(cv, 2, y, r.w - 4, maxy - 1, 0, ROLE_WARN, buf);
	}
	canvas_text(cv, 1, maxy - 1, r.w - 2, ROLE_DIM,
	            "Up/Down choose  Enter pick  Left back  Tab DAG and other panes  q quit");
}

/* ---- keys ----------------------------------------------------------------- */

static void go(DrillView *v, int step)
{
	v->step = step;
	v->cursor = 0;
	v->top = 0;
	v->scroll = 0;
	v->msg[0] = '\0';
}

static void restart(DrillView *v)
{
	v->n_hyp = 0;
	v->check_i = 0;
	v->decision = -1;
	for (int i = 0; i < DV_MAX_RANK; i++)
		v->check[i] = -1;
	if (v->ticked)
		memset(v->ticked, 0, (size_t)v->d->n_points);
	go(v, v->d->discussion ? ST_MODEL : ST_HYP);
}

static void back(DrillView *v)
{
	switch (v->step) {
	case ST_HYP:
		if (v->n_hyp > 0)
			v->n_hyp--;
		else
			go(v, ST_BRIEF);
		v->msg[0] = '\0';
		break;
	case ST_CHECK:
		if (v->check_i > 0) {
			v->check_i--;
			v->check[v->check_i] = -1;
			v->cursor = 0;
		} else {
			v->n_hyp = v->n_hyp > 0 ? v->n_hyp - 1 : 0;
			go(v, ST_HYP);
		}
		break;
	case ST_DECISION:
		if (v->n_hyp > 0) {
			v->check_i = v->n_hyp - 1;
			v->check[v->check_i] = -1;
			go(v, ST_CHECK);
		} else {
			go(v, ST_HYP);
		}
		break;
	case ST_REVIEW:
		v->decision = -1;
		go(v, ST_DECISION);
		break;
	case ST_MODEL: go(v, ST_BRIEF); break;
	case ST_RESULT: go(v, v->d->discussion ? ST_MODEL : ST_REVIEW); break;
	default: break;
	}
}

static void pick(DrillView *v, const Row *row)
{
	const TuiDrill *d = v->d;
	if (row->kind == ROW_HINT) {
		if (v->hints_shown < d->n_hints)
			v->hints_shown++;
		return;
	}
	if (row->kind == ROW_SUBMIT) {
		submit(v);
		return;
	}
	if (row->kind == ROW_RESTART) {
		restart(v);
		return;
	}
	switch (v->step) {
	case ST_HYP:
		if (row->kind == ROW_CHOICE && v->n_hyp < DV_MAX_RANK)
			v->hyp[v->n_hyp++] = row->index;
		if (row->kind == ROW_SKIP || v->n_hyp >= v->rank) {
			v->check_i = 0;
			for (int i = 0; i < DV_MAX_RANK; i++)
				v->check[i] = -1;
			go(v, v->n_hyp > 0 ? ST_CHECK : ST_DECISION);
		}
		v->cursor = 0;
		break;
	case ST_CHECK:
		v->check[v->check_i] = row->kind == ROW_CHOICE ? row->index : -1;
		if (++v->check_i >= v->n_hyp)
			go(v, ST_DECISION);
		v->cursor = 0;
		break;
	case ST_DECISION:
		v->decision = row->index;
		go(v, ST_REVIEW);
		break;
	case ST_MODEL:
		v->ticked[row->index] = !v->ticked[row->index];
		break;
	default: break;
	}
}

static int drill_key(View *vv, TuiApp *app, Action act)
{
	DrillView *v = (DrillView *)vv;
	if (v->d == NULL)
		return REACT_NONE;
	int page = vv->rows > 6 ? vv->rows - 6 : 1;
	if (v->step == ST_BRIEF || v->step == ST_RESULT) {
		switch (act) {
		case ACT_UP: if (v->scroll > 0) v->scroll--; return REACT_REDRAW;
		case ACT_DOWN: v->scroll++; return REACT_REDRAW;
		case ACT_PAGE_UP: v->scroll = v->scroll > page ? v->scroll - page : 0; return REACT_REDRAW;
		case ACT_PAGE_DOWN: v->scroll += page; return REACT_REDRAW;
		case ACT_TOP: v->scroll = 0; return REACT_REDRAW;
		case ACT_OPEN:
			if (v->step == ST_BRIEF)
				go(v, v->d->discussion ? ST_MODEL : ST_HYP);
			return REACT_REDRAW;
		case ACT_LEFT:
			if (v->step == ST_RESULT)
				back(v);
			return REACT_REDRAW;
		default: return REACT_NONE;
		}
	}
	Row rows[256];
	int n = step_rows(v, rows, 256);
	if (list_nav(act, &v->cursor, n, page))
		return REACT_REDRAW;
	switch (act) {
	case ACT_LEFT: back(v); return REACT_REDRAW;
	case ACT_OPEN:
		if (v->cursor >= 0 && v->cursor < n)
			pick(v, &rows[v->cursor]);
		/* answers scored: the engine's may be seen now */
		if (v->submissions > 0)
			app->board_sealed = 0;
		return REACT_REDRAW;
	default: return REACT_NONE;
	}
	if (v->cursor >= n)
		v->cursor = n - 1;
	if (v->cursor < 0)
		v->cursor = 0;
	return REACT_REDRAW;
}

static void drill_free_view(View *vv)
{
	DrillView *v = (DrillView *)vv;
	free(v->ticked);
	free(v->result);
	free(v);
}

static const PaneKey drill_keys[] = {
	{ACT_OPEN, "brief: start; then pick the marked answer"},
	{ACT_LEFT, "back one step (answers are kept)"},
	{ACT_NONE, NULL},
};

static const ViewOps drill_ops = {"Drill", drill_draw, drill_key, NULL, drill_free_view,
                                  drill_keys};

View *view_drill_new(const TuiDrill *d)
{
	DrillView *v = xcalloc(1, sizeof *v);
	v->base.ops = &drill_ops;
	v->d = d;
	v->decision = -1;
	for (int i = 0; i < DV_MAX_RANK; i++)
		v->check[i] = -1;
	if (d && d->n_points > 0)
		v->ticked = xcalloc((size_t)d->n_points, 1);
	v->rank = d ? d->rank : 0;
	if (v->rank > DV_MAX_RANK)
		v->rank = DV_MAX_RANK;
	if (v->rank < 1)
		v->rank = 1;
	return &v->base;
}
