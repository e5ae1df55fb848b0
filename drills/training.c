/*
 * training.c - one training attempt at a drill (drills/training.h): the
 * drill's data played into a data database at full speed, the diagnosis
 * engine on it, and the scoring and storing of answers. The command line
 * (cli/cmd_drill.c) and the dashboard's Drill pane only ask and show.
 */
#include "training.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "model_json.h"

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void remove_db_files(const char *path)
{
	Buf b;
	buf_init(&b);
	unlink(path);
	buf_printf(&b, "%s-wal", path);
	unlink(buf_str(&b));
	buf_reset(&b);
	buf_printf(&b, "%s-shm", path);
	unlink(buf_str(&b));
	buf_fini(&b);
}

void training_fini(TrainingSession *s)
{
	drill_order_fini(&s->order);
	diagnosis_free(s->dx);
	sheet_free(s->sheet);
	model_free(s->model);
	if (s->scratch_dir) {
		remove_db_files(s->data_db);
		rmdir(s->scratch_dir);
	}
	free(s->scratch_dir);
	free(s->data_db);
	drill_free(s->d);
}

int training_prepare(TrainingSession *s, const TrainingOptions *o, Err *err)
{
	const Drill *d = s->d;
	if (d->model_path && model_load(d->model_path, &s->model, err))
		return err->code;
	if (d->sheet_path && sheet_load(d->sheet_path, &s->sheet, err))
		return err->code;
	if (o->data_db) {
		s->data_db = xstrdup(o->data_db);
	} else if (o->tmpdir) {
		Buf b;
		buf_init(&b);
		buf_printf(&b, "%s/data.db", o->tmpdir);
		s->data_db = xstrdup(buf_str(&b));
		buf_fini(&b);
	} else {
		const char *t = getenv("TMPDIR");
		Buf b;
		buf_init(&b);
		buf_printf(&b, "%s/tailtriage-train-XXXXXX", t && *t ? t : "/tmp");
		s->scratch_dir = xstrdup(buf_str(&b));
		buf_fini(&b);
		if (mkdtemp(s->scratch_dir) == NULL) {
			free(s->scratch_dir);
			s->scratch_dir = NULL;
			return err_set(err, TT_EIO, "cannot create a scratch folder: %s", strerror(errno));
		}
		buf_init(&b);
		buf_printf(&b, "%s/data.db", s->scratch_dir);
		s->data_db = xstrdup(buf_str(&b));
		buf_fini(&b);
	}
	int has_data = d->n_runs > 0 || d->n_files > 0 || d->sheet_path;
	if (d->kind == DRILL_DISCUSSION || !has_data) {
		/* an empty database, so the dashboard can still open */
		Store *st = NULL;
		if (store_open(s->data_db, 0, &st, err))
			return err->code;
		store_close(st);
		return 0;
	}
	/* the simulated telemetry goes into the scratch folder, so one
	 * folder holds everything an interrupted attempt leaves */
	ReplayOptions ro = {.speed = -1, .max_traces = o->max_traces,
	                    .tmpdir = o->tmpdir ? o->tmpdir : s->scratch_dir};
	Replay *r = NULL;
	if (replay_prepare(d, &ro, &r, err))
		return err->code;
	replay_windows(r, &s->w);
	int rc = replay_play(r, s->data_db, err);
	replay_free(r);
	if (rc)
		return rc;
	Store *st = NULL;
	int has_spans = d->n_runs > 0 || d->n_files > 0;
	if (has_spans && store_open(s->data_db, STORE_READONLY, &st, err))
		return err->code;
	DiagnoseOptions dopt = {
		.model = s->model,
		.period = s->w.period,
		.sheet = s->sheet,
	};
	/* every decision the drill offers gets the engine's verdict, so a
	 * tempting wrong choice is explained by the engine's guards too */
	/* every decision the drill offers (but its local ones) gets the
	 * engine's verdict, so a tempting wrong choice is explained by the
	 * engine's guards too */
	const char **decide = drill_engine_decisions(d);
	dopt.decide = decide;
	rc = diagnose_run(st, &dopt, &s->dx, err);
	free(decide);
	store_close(st);
	return rc;
}


int training_score(TrainingSession *s, const Answers *a, const char *mode, Buf *out, Err *err)
{
	Score *sc = NULL;
	if (score_answers(s->d, a, s->dx, &sc, err))
		return err->code;
	score_text(sc, s->d, out);
	if (s->d->debrief) {
		buf_adds(out, "\ndebrief\n");
		buf_printf(out, "%s\n", s->d->debrief);
	}
	if (s->d->kind == DRILL_DISCUSSION && s->d->model_answer) {
		buf_adds(out, "\nmodel answer\n");
		buf_printf(out, "%s\n", s->d->model_answer);
	}
	if (s->dx && s->dx->n_hyp > 0) {
		buf_adds(out, "\nthe diagnosis engine on this data\n");
		for (int i = 0; i < s->dx->n_hyp && i < 3; i++) {
			const DxHypothesis *h = &s->dx->hyp[i];
			buf_printf(out, "  #%d %s%s%s (score %.2f)%s%s\n", h->rank, h->id,
			           h->node && h->node[0] ? ":" : "", h->node ? h->node : "", h->score,
			           h->check ? ", check " : "", h->check ? h->check : "");
		}
		if (s->d->engine_note)
			buf_printf(out, "why the engine ranks otherwise than the key\n%s\n",
			           s->d->engine_note);
	}
	Buf aj, dj, oj;
	buf_init(&aj);
	buf_init(&dj);
	buf_init(&oj);
	answers_json(a, &aj);
	score_lines_json(sc, &dj);
	if (s->has_order)
		drill_order_json(s->d, &s->order, &oj);
	Store *st = NULL;
	int rc = store_open(s->history_db, 0, &st, err);
	if (rc == 0) {
		StoreDrillAttempt at = {
			.drill = s->d->id,
			.drill_version = s->d->version,
			.drill_digest = s->d->digest,
			.person = s->person,
			.mode = mode,
			.started_ms = s->started_ms,
			.finished_ms = now_ms(),
			.answers_json = buf_str(&aj),
			.score = sc->total,
			.max_score = sc->max,
			.hints_used = a->hints_used,
			.deductions_json = buf_str(&dj),
			.has_seed = s->has_order,
			.seed = s->order.seed,
			.shown_json = s->has_order ? buf_str(&oj) : NULL,
		};
		rc = store_drill_attempt_add(st, &at, NULL, err);
		store_close(st);
	}
	if (rc == 0) {
		s->stored++;
		s->last_score = sc->total;
		s->last_max = sc->max;
		buf_printf(out, "\nattempt stored in %s (person %s)\n", s->history_db, s->person);
	}
	buf_fini(&aj);
	buf_fini(&dj);
	buf_fini(&oj);
	score_free(sc);
	return rc;
}

