/*
 * tui.c - the loop: wait for a key, a finished analysis or diagnosis, or
 * the tick; let the app react; perform the effects it asks for; draw once.
 *
 * Nothing here waits for an analysis: results arrive from the live
 * session's worker through a pipe that poll() watches with stdin, so a key
 * press is answered with a frame while a recompute runs, and a finished
 * recompute is drawn as soon as it is ready instead of at the next tick.
 *
 * With a latency log, each frame that answers a key or a data change
 * appends one tab-separated line (bench/tui_latency.sh reads them):
 *   key   <key>  <ms from key read to frame flushed>  <epoch ms of the frame>
 *   data  <ms from change seen to frame>  <analysis ms>  <epoch ms of the frame>
 *   first <ms from start to the first frame with data>  <analysis ms>  <epoch ms>
 *   answer <approx|exact>  <ms from the request to the frame that first
 *         shows its answer>  <analysis ms>  <epoch ms>
 *   board  <ms from the request to the first frame with its Board>  <epoch ms>
 * (a new question is answered twice when the aggregates are current: an
 * approximate answer, then the exact one; see live.h)
 */
#include "tui.h"
#include "tui_board.h"

#include <errno.h>
#include <locale.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app.h"
#include "canvas.h"
#include "live.h"
#include "sanitize.h"
#include "term.h"

static double mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double busy_since = -1; /* when the worker last became busy */

static double request_at = -1; /* when the latest request was made */
static int board_logged;        /* its Board was drawn (latency log) */
static int answered;            /* an answer to it was drawn (latency log) */

static void request(LiveSession *ls, TuiApp *app)
{
	request_at = mono_ms();
	board_logged = 0;
	answered = 0;
	AnalysisOptions ao;
	app_options(app, &ao);
	live_request(ls, &ao, app->opt_gen);
	if (!app->computing)
		busy_since = mono_ms();
	app->computing = 1;
}

int tui_run(const TuiOptions *opt, Err *err)
{
	if (opt == NULL || opt->db_path == NULL)
		return err_set(err, TT_EINVAL, "tui: no database given");
	setlocale(LC_ALL, "");
	san_init();
	LiveSession *ls = NULL;
	if (live_open(opt->db_path, &ls, err))
		return err->code ? err->code : TT_EIO;
	Term *term = NULL;
	if (term_open(opt->no_color, &term, err)) {
		live_close(ls);
		return err->code ? err->code : TT_EIO;
	}
	FILE *lat = NULL;
	if (opt->latency_log)
		lat = fopen(opt->latency_log, "a");

	TuiApp app;
	app_init(&app, opt);
	if (!term_utf8(term))
		app.ascii = 1;
	int w, h;
	term_size(term, &w, &h);
	Canvas cv;
	canvas_init(&cv, w, h, app.ascii);
	request(ls, &app);

	double t_start = mono_ms();
	double next_tick = t_start + app.refresh_ms;
	int dirty = 1, change_pending = 0, first_logged = 0;
	int answer = 0; /* a result drawn in the next frame: 1 approximate, 2 exact */
	double answer_ms = 0;
	double key_at = -1, change_at = -1;
	char key_name[32] = "";
	/* the keyboard, finished analyses, and finished diagnoses (fd -1,
	 * which poll() skips, when the board has none) */
	const TuiBoard *bd = opt->board;
	struct pollfd pfd[3] = {
		{.fd = STDIN_FILENO, .events = POLLIN},
		{.fd = live_wait_fd(ls), .events = POLLIN},
		{.fd = bd && bd->wait_fd ? bd->wait_fd(bd->ctx) : -1, .events = POLLIN},
	};
	for (;;) {
		if (opt->quit && atomic_load(opt->quit))
			break;
		if (dirty) {
			app.now_s = (int64_t)time(NULL);
			app_draw(&app, &cv);
			term_blit(term, &cv);
			dirty = 0;
			double t = mono_ms();
			if (lat) {
				if (key_at >= 0)
					fprintf(lat, "key\t%s\t%.3f\t%.0f\n", key_name, t - key_at, wall_ms());
				if (change_at >= 0 && app.a && !app.computing)
					fprintf(lat, "data\t%.3f\t%.3f\t%.0f\n", t - change_at, app.compute_ms, wall_ms());
				if (answer) {
					fprintf(lat, "answer\t%s\t%.3f\t%.3f\t%.0f\n",
					        answer == 1 ? "approx" : "exact", t - request_at, answer_ms,
					        wall_ms());
					answered = 1;
				}
				/* the Board of the question asked: only once the
				 * analysis on screen answers it (before, it is the
				 * previous question's) */
				if (!board_logged && answered && app.a && app.board) {
					const TuiBoardSnapshot *sn = app.board->snapshot(app.board->ctx, app.a);
					if (sn && !sn->stale && sn->n_hyps > 0) {
						fprintf(lat, "board\t%.3f\t%.0f\n", t - request_at, wall_ms());
						board_logged = 1;
					}
				}
				if (!first_logged && app.a) {
					fprintf(lat, "first\t%.3f\t%.3f\t%.0f\n", t - t_start, app.compute_ms, wall_ms());
					first_logged = 1;
				}
				fflush(lat);
			}
			key_at = -1;
			answer = 0;
			if (app.a && !app.computing)
				change_at = -1;
		}
		double now = mono_ms();
		int timeout = (int)(next_tick - now);
		if (timeout < 0)
			timeout = 0;
		int pr = poll(pfd, 3, timeout);
		if (pr < 0 && errno != EINTR)
			break;

		/* keys (a resize arrives as a key after SIGWINCH interrupts poll) */
		int k, quit = 0;
		while ((k = term_read_key(term)) != -1) {
			if (k == -2)
				continue;
			key_at = mono_ms();
			snprintf(key_name, sizeof key_name, k < 127 && k > 32 ? "%c" : "#%d", k);
			if (k == TK_RESIZE) {
				term_size(term, &w, &h);
				canvas_resize(&cv, w, h);
			}
			int f = app_key(&app, k);
			if (f & REACT_QUIT) {
				quit = 1;
				break;
			}
			if (f & REACT_RELOAD)
				request(ls, &app);
			if (f & REACT_TRACE) {
				TraceView *tv = NULL;
				Err e = {0};
				if (live_trace(ls, app.want_trace, &app.skew, &tv, &e) == 0)
					app_set_trace(&app, tv);
				else
					app_set_status(&app, 1, "trace %.32s: %s", app.want_trace, e.msg);
			}
			if ((f & REACT_PAUSE) && !app.paused && change_pending) {
				change_pending = 0;
				app.stale = 0;
				request(ls, &app);
			}
			if (f & (REACT_REDRAW | REACT_RELOAD | REACT_TRACE | REACT_PAUSE))
				dirty = 1;
		}
		if (quit)
			break;

		/* finished analyses */
		LiveResult r;
		while (live_take(ls, &r)) {
			if (r.rc) {
				app_set_status(&app, 1, "analysis failed: %s", r.err.msg);
			} else {
				app_set_endpoints(&app, r.endpoints);
				app_set_analysis(&app, r.a, r.gen);
				app.compute_ms = r.compute_ms;
				answer = r.a && r.a->approx ? 1 : 2;
				answer_ms = r.compute_ms;
			}
			dirty = 1;
		}
		/* a model drafted again from the data that arrived: the question
		 * on screen is asked again with it */
		if (opt->model_update && app.a) {
			const Model *m = opt->model_update(opt->model_ctx, app.a);
			if (m) {
				app_set_model(&app, m);
				request(ls, &app);
				dirty = 1;
			}
		}
		/* a diagnosis finished (or failed): board and budgets, drawn now;
		 * ready() takes the wake-up */
		if (pr > 0 && (pfd[2].revents & POLLIN)) {
			if (bd->ready)
				bd->ready(bd->ctx);
			dirty = 1;
		}

		int busy = live_busy(ls);
		if (busy != app.computing) {
			app.computing = busy;
			busy_since = busy ? mono_ms() : -1;
			dirty = 1;
		}

		/* the tick */
		now = mono_ms();
		if (now >= next_tick) {
			next_tick = now + app.refresh_ms;
			if (app.computing && busy_since >= 0) {
				/* the status line counts the seconds of a long recompute */
				app.busy_ms = now - busy_since;
				dirty = 1;
			}
			if (bd && bd->ready && bd->ready(bd->ctx))
				dirty = 1; /* a diagnosis finished: board and budgets */
			if (opt->status_extra) {
				char extra[sizeof app.extra] = "";
				opt->status_extra(opt->status_ctx, extra, sizeof extra);
				if (strcmp(extra, app.extra) != 0) {
					memcpy(app.extra, extra, sizeof extra);
					dirty = 1;
				}
			}
			if (live_check(ls)) {
				app.changed_at_s = (int64_t)time(NULL);
				if (app.paused) {
					change_pending = 1;
					app.stale = 1;
				} else {
					if (change_at < 0)
						change_at = now;
					request(ls, &app);
				}
				dirty = 1;
			}
		}
	}
	if (lat)
		fclose(lat);
	term_close(term);
	canvas_fini(&cv);
	live_close(ls);
	app_fini(&app);
	return 0;
}
