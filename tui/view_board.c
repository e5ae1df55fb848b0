/*
 * view_board.c - the hypothesis board: the ranked hypotheses on the left,
 * the selected one's evidence for (+), against (-) and missing (?) with its
 * discriminating check on the right, and the decisions with their verdicts
 * and reasons underneath. Enter runs the selected hypothesis's check and
 * shows its table in place of the evidence; Left closes it. Right moves
 * the marker to the decisions, whose one-line reasons end in an ellipsis
 * when cut: Enter shows the marked one in full, Left goes back.
 *
 * The pane holds a selection and the last check's text; the board itself
 * comes from the TuiBoard callbacks (tui_board.h), asked for when drawing,
 * so it follows the analysis on screen. Nothing here reads data directly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "sanitize.h"
#include "tui_board.h"
#include "view.h"

typedef struct BoardView {
	View base;
	const TuiBoard *b;
	const TuiBoardSnapshot *last; /* from the last draw (valid until the next) */
	int cursor, top;
	int scroll;                   /* detail / check text scroll */
	int on_decisions;             /* Right moved the marker to the decisions */
	int dcursor, dtop;            /* the marked decision, first one shown */
	int dopen;                    /* the marked decision is shown in full */
	char *check_text;             /* the last check's table (owned), or NULL */
	char check_for[128];          /* hypothesis id the check was run for */
	char msg[300];                /* error or note */
} BoardView;

/* Word-wraps text into w columns from row y, skipping skip wrapped lines,
 * stopping before maxy; continuation lines keep the first line's leading
 * spaces plus two. Returns the number of wrapped lines. */
static int wrap(Canvas *cv, int x, int y, int w, int maxy, int skip, Role role, const char *text)
{
	int lines = 0;
	if (w < 8)
		w = 8;
	const char *p = text ? text : "";
	while (*p) {
		size_t n = strcspn(p, "\n");
		int ind = 0;
		while ((size_t)ind < n && p[ind] == ' ')
			ind++;
		const char *q = p, *end = p + n;
		int first = 1;
		do {
			int avail = w - (first ? 0 : ind + 2);
			if (avail < 4)
				avail = 4;
			/* take words while they fit */
			const char *s = q, *cut = NULL;
			int cols = 0;
			const char *r = q;
			while (r < end) {
				const char *we = r;
				while (we < end && *we == ' ')
					we++;
				while (we < end && *we != ' ')
					we++;
				char word[512];
				size_t wl = (size_t)(we - r) < sizeof word - 1 ? (size_t)(we - r) : sizeof word - 1;
				memcpy(word, r, wl);
				word[wl] = '\0';
				int ww = san_width(word);
				if (cols + ww > avail && cut)
					break;
				cols += ww;
				r = we;
				cut = r;
				if (cols >= avail)
					break;
			}
			if (cut == NULL)
				cut = end;
			char line[1024];
			size_t ll = (size_t)(cut - s) < sizeof line - 1 ? (size_t)(cut - s) : sizeof line - 1;
			memcpy(line, s, ll);
			line[ll] = '\0';
			const char *t = line;
			if (!first)
				while (*t == ' ')
					t++;
			if (lines >= skip && y < maxy)
				canvas_text(cv, x + (first ? 0 : ind + 2), y++, avail, role, t);
			lines++;
			q = cut;
			first = 0;
		} while (q < end);
		p = end;
		if (*p == '\n')
			p++;
	}
	return lines;
}

static Role line_role(const char *s)
{
	if (strncmp(s, "remedy:", 7) == 0)
		return ROLE_KEY;
	if (s[0] == '+')
		return ROLE_OK;
	if (s[0] == '-')
		return ROLE_BREACH;
	return ROLE_DIM;
}

static Role verdict_role(const char *v)
{
	if (strcmp(v, "supported") == 0)
		return ROLE_OK;
	if (strcmp(v, "refused") == 0)
		return ROLE_BREACH;
	return ROLE_WARN;
}

/* The decisions, one line each; the marked one (when the marker is on the
 * decisions) has the pointer. Lines that do not fit end in an ellipsis. */
static void draw_decisions(BoardView *v, const TuiBoardSnapshot *s, Canvas *cv, int x, int y,
                           int w, int h)
{
	canvas_text(cv, x, y, w, ROLE_HEADING,
	            v->on_decisions ? "decisions (Enter shows the marked one in full, Left goes back)"
	                            : "decisions (Right marks them)");
	y++;
	int rows = h - 1;
	if (rows < 1)
		return;
	if (v->dcursor >= s->n_decisions)
		v->dcursor = s->n_decisions ? s->n_decisions - 1 : 0;
	if (v->dcursor < v->dtop)
		v->dtop = v->dcursor;
	if (v->dcursor >= v->dtop + rows)
		v->dtop = v->dcursor - rows + 1;
	for (int i = v->dtop; i < s->n_decisions && i < v->dtop + rows; i++, y++) {
		const TuiBoardDecision *d = &s->decisions[i];
		int sel = v->on_decisions && i == v->dcursor;
		if (sel)
			canvas_put(cv, x - 1, y, cv->g->pointer, ROLE_SELECTED);
		char head[160];
		/* the verdict in words, so colour is not the only carrier */
		snprintf(head, sizeof head, "%-11s %s: ", d->verdict, d->id);
		int hx = canvas_text(cv, x, y, w, sel ? ROLE_SELECTED : verdict_role(d->verdict), head);
		canvas_text(cv, x + hx, y, w - hx, sel ? ROLE_SELECTED : ROLE_NORMAL, d->reason);
	}
	if (s->n_decisions > rows)
		draw_scroll_hint(cv, x + w, y - rows - 1, v->dtop, rows, s->n_decisions);
}

static void board_draw(View *vv, const TuiApp *app, Canvas *cv, Rect r)
{
	BoardView *v = (BoardView *)vv;
	vv->rows = r.h;
	int y = r.y;
	if (app->board_sealed) {
		/* training: the engine's ranking is the drill's answer key */
		v->last = NULL;
		canvas_text(cv, 1, y, r.w - 2, ROLE_TITLE, "the Board opens once you have submitted");
		wrap(cv, 1, y + 2, r.w - 2, r.y + r.h, 0, ROLE_DIM,
		     "It shows the engine's own ranking, checks and decisions for this window: "
		     "the drill's answer. Rank, check and decide in the Drill pane (5) first; "
		     "after your answers are scored, compare them with the engine's here. The "
		     "DAG, node, ownership and trace panes are open while you answer.");
		return;
	}
	const TuiBoardSnapshot *s = v->b ? v->b->snapshot(v->b->ctx, app->a) : NULL;
	v->last = s;
	if (s == NULL) {
		canvas_text(cv, 1, y + 1, r.w - 2, ROLE_DIM,
		            "diagnosing the window (evidence, hypotheses, decisions)...");
		return;
	}
	if (s->error) {
		/* refused: the engine's reason, whole, and what to do about it */
		canvas_text(cv, 1, y, r.w - 2, ROLE_TITLE, "no diagnosis of this window and baseline");
		int n = wrap(cv, 1, y + 2, r.w - 2, r.y + r.h, 0, ROLE_ERROR, s->error);
		if (y + 3 + n < r.y + r.h)
			wrap(cv, 1, y + 3 + n, r.w - 2, r.y + r.h, 0, ROLE_DIM,
			     "b sets the baseline (A..B, before, none), w the window");
		return;
	}
	char buf[256];
	snprintf(buf, sizeof buf, "hypotheses, most likely first%s%s%s", s->stale ? "  (updating)" : "",
	         s->note ? "  " : "", s->note ? s->note : "");
	canvas_text(cv, 1, y, r.w - 2, ROLE_TITLE, buf);
	y++;

	/* every decision has its line while the hypotheses keep six rows
	 * (at 80x24 that is all five); on a shorter pane a third of it, the
	 * supported ones first (cli/board.c orders them) */
	int dec_h = s->n_decisions + 1;
	if (dec_h > r.h - 1 - 1 - 6)
		dec_h = r.h / 3 > r.h - 1 - 1 - 6 ? r.h / 3 : r.h - 1 - 1 - 6;
	if (dec_h < 2)
		dec_h = 2;
	int body_h = r.h - 1 - dec_h - 1;
	if (body_h < 3)
		body_h = 3;
	/* rank, id, node, score: 2+1+idw+1+nodew+1+5 columns. A hypothesis's
	 * id is never cut: the id column is as wide as the longest id on the
	 * board, and the list takes up to 55 % of the width for it; what it
	 * blames (a node or class from the data) gives way first */
	int idw = 8, nodew = 6;
	for (int i = 0; i < s->n_hyps; i++) {
		int wi = san_width(s->hyps[i].id), wn = san_width(s->hyps[i].node);
		if (wi > idw)
			idw = wi;
		if (wn > nodew)
			nodew = wn;
	}
	if (nodew > 14)
		nodew = 14;
	const int fixed = 2 + 1 + 1 + 1 + 5 + 2;
	int list_w = fixed + idw + nodew, most = r.w >= 100 ? r.w / 2 : r.w * 11 / 20;
	if (list_w > most) {
		list_w = most;
		nodew = list_w - fixed - idw;
		if (nodew < 6) {
			nodew = 6;
			idw = list_w - fixed - nodew;
		}
	}

	/* a check's table takes the whole width until Left closes it */
	if (s->n_hyps > 0 && v->check_text && v->cursor < s->n_hyps &&
	    strcmp(v->check_for, s->hyps[v->cursor].id) == 0) {
		snprintf(buf, sizeof buf, "check for %s (Left closes it, PgUp/PgDn scroll)", v->check_for);
		canvas_text(cv, 1, y, r.w - 2, ROLE_DIM, buf);
		int n = wrap(cv, 1, y + 1, r.w - 2, y + body_h, v->scroll, ROLE_NORMAL, v->check_text);
		if (v->scroll >= n)
			v->scroll = n > 0 ? n - 1 : 0;
		draw_decisions(v, s, cv, 1, y + body_h + 1, r.w - 2, dec_h);
		return;
	}
	/* the marked decision in full, also across the whole width */
	if (v->on_decisions && v->dopen && v->dcursor < s->n_decisions) {
		const TuiBoardDecision *d = &s->decisions[v->dcursor];
		snprintf(buf, sizeof buf, "decision %s: %s (Left closes it)", d->id, d->verdict);
		canvas_text(cv, 1, y, r.w - 2, verdict_role(d->verdict), buf);
		int n = wrap(cv, 1, y + 1, r.w - 2, y + body_h, v->scroll, ROLE_NORMAL, d->reason);
		if (v->scroll >= n)
			v->scroll = n > 0 ? n - 1 : 0;
		draw_decisions(v, s, cv, 1, y + body_h + 1, r.w - 2, dec_h);
		return;
	}

	/* the ranked list */
	if (v->cursor >= s->n_hyps)
		v->cursor = s->n_hyps ? s->n_hyps - 1 : 0;
	if (v->cursor < v->top)
		v->top = v->cursor;
	if (v->cursor >= v->top + body_h)
		v->top = v->cursor - body_h + 1;
	if (v->top < 0)
		v->top = 0;
	for (int i = v->top; i < s->n_hyps && i < v->top + body_h; i++) {
		const TuiBoardHyp *h = &s->hyps[i];
		int yy = y + i - v->top, sel = i == v->cursor && !v->on_decisions;
		Role role = sel ? ROLE_SELECTED : h->score > 0 ? ROLE_NORMAL : ROLE_DIM;
		if (sel) {
			canvas_put(cv, 0, yy, cv->g->pointer, ROLE_SELECTED);
			canvas_fill(cv, 1, yy, list_w - 1, 1, ' ', ROLE_SELECTED);
		}
		/* column by column: a name that does not fit ends in an ellipsis */
		char num[32];
		snprintf(num, sizeof num, "%2d", h->rank);
		canvas_text(cv, 1, yy, 2, role, num);
		canvas_text(cv, 4, yy, idw, role, h->id);
		canvas_text(cv, 5 + idw, yy, nodew, role, h->node);
		snprintf(num, sizeof num, "%+5.1f", h->score);
		canvas_text_right(cv, 6 + idw + nodew + 5, yy, 5, role, num);
	}

	int dx = list_w + 1, dw = r.w - dx - 1;
	int maxy = y + body_h;
	if (s->n_hyps > 0) {
		const TuiBoardHyp *h = &s->hyps[v->cursor];
		{
			/* the selected hypothesis; its check's table replaces the
			 * whole board above (see the top of this function) */
			int yy = y;
			int skip = v->scroll;
			/* title and the check first: they matter most when space is short */
			yy += wrap(cv, dx, yy, dw, maxy, 0, ROLE_HEADING, h->title);
			char ck[300];
			snprintf(ck, sizeof ck, "check: %s%s%s%s%s  (Enter runs it)", h->check,
			         h->check_node ? " --node " : "", h->check_node ? h->check_node : "",
			         h->check_class ? " --class " : "", h->check_class ? h->check_class : "");
			yy += wrap(cv, dx, yy, dw, maxy, 0, ROLE_KEY, ck);
			for (int k = 0; k < h->n_lines && yy < maxy; k++) {
				if (skip > 0) {
					skip--;
					continue;
				}
				yy += wrap(cv, dx, yy, dw, maxy, 0, line_role(h->lines[k]), h->lines[k]);
			}
			if (yy < maxy && h->check_why && v->scroll == 0)
				wrap(cv, dx + 2, yy, dw - 2, maxy, 0, ROLE_DIM, h->check_why);
		}
	}
	if (v->msg[0])
		canvas_text(cv, dx, maxy - 1, dw, ROLE_ERROR, v->msg);
	draw_decisions(v, s, cv, 1, maxy + 1, r.w - 2, dec_h);
}

/* The marker on the decisions: Up/Down move it, Enter shows the marked
 * decision in full, Left closes that or goes back to the hypotheses. */
static int decisions_key(BoardView *v, const TuiBoardSnapshot *s, Action act, int page)
{
	int n = s ? s->n_decisions : 0;
	if (act == ACT_LEFT) {
		if (v->dopen)
			v->dopen = 0;
		else
			v->on_decisions = 0;
		v->scroll = 0;
		return REACT_REDRAW;
	}
	if (act == ACT_OPEN) {
		v->dopen = n > 0;
		v->scroll = 0;
		return REACT_REDRAW;
	}
	if (v->dopen && (act == ACT_PAGE_DOWN || act == ACT_PAGE_UP)) {
		v->scroll = act == ACT_PAGE_DOWN ? v->scroll + page : v->scroll > page ? v->scroll - page : 0;
		return REACT_REDRAW;
	}
	if (list_nav(act, &v->dcursor, n, page)) {
		v->scroll = 0;
		return REACT_REDRAW;
	}
	return REACT_NONE;
}

static int board_key(View *vv, TuiApp *app, Action act)
{
	BoardView *v = (BoardView *)vv;
	const TuiBoardSnapshot *s = v->last;
	if (app->board_sealed)
		return REACT_NONE;
	int n = s ? s->n_hyps : 0;
	int page = vv->rows > 6 ? vv->rows / 2 : 1;
	if (v->on_decisions)
		return decisions_key(v, s, act, page);
	if (act == ACT_UP || act == ACT_DOWN || act == ACT_TOP || act == ACT_BOTTOM) {
		list_nav(act, &v->cursor, n, 1);
		v->scroll = 0;
		v->msg[0] = '\0';
		return REACT_REDRAW;
	}
	switch (act) {
	case ACT_RIGHT:
		if (s == NULL || s->n_decisions == 0)
			return REACT_NONE;
		free(v->check_text);
		v->check_text = NULL;
		v->on_decisions = 1;
		v->dopen = 0;
		v->scroll = 0;
		break;
	case ACT_PAGE_DOWN: v->scroll += page; break;
	case ACT_PAGE_UP: v->scroll = v->scroll > page ? v->scroll - page : 0; break;
	case ACT_LEFT:
		free(v->check_text);
		v->check_text = NULL;
		v->scroll = 0;
		v->msg[0] = '\0';
		break;
	case ACT_OPEN: {
		if (s == NULL || n == 0 || v->b == NULL || v->b->run_check == NULL)
			return REACT_NONE;
		if (v->cursor < 0 || v->cursor >= n)
			return REACT_NONE;
		const TuiBoardHyp *h = &s->hyps[v->cursor];
		char err[300] = "";
		char *text = v->b->run_check(v->b->ctx, app->a, h->check, h->check_node, h->check_class,
		                             err, sizeof err);
		free(v->check_text);
		v->check_text = text;
		v->scroll = 0;
		snprintf(v->check_for, sizeof v->check_for, "%s", h->id);
		if (text == NULL)
			snprintf(v->msg, sizeof v->msg, "check %.60s: %.220s", h->check, err);
		else
			v->msg[0] = '\0';
		break;
	}
	default: return REACT_NONE;
	}
	list_nav(ACT_NONE, &v->cursor, n, 1);
	return REACT_REDRAW;
}

static void board_free(View *vv)
{
	BoardView *v = (BoardView *)vv;
	free(v->check_text);
	free(v);
}

static const PaneKey board_keys[] = {
	{ACT_OPEN, "run the marked hypothesis's discriminating check"},
	{ACT_LEFT, "close the check's result"},
	{ACT_RIGHT, "mark the decisions; then Enter shows one in full, Left goes back"},
	{ACT_PAGE_DOWN, "scroll the hypothesis's lines, a check's result or a decision"},
	{ACT_NONE, NULL},
};

static const ViewOps board_ops = {"Board", board_draw, board_key, NULL, board_free, board_keys};

View *view_board_new(const TuiBoard *b)
{
	BoardView *v = xcalloc(1, sizeof *v);
	v->base.ops = &board_ops;
	v->b = b;
	return &v->base;
}
