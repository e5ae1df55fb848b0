/*
 * score.h - a trainee's answers to a drill, and their score.
 *
 * The score comes from three things only: the drill file's answer key and
 * scoring rules, the answers, and the diagnosis engine's output on the
 * drill's data (its ranking, discriminating checks and decision verdicts
 * with reasons). Nothing here knows a particular drill. Every point lost
 * is one ScoreLine with a reason taken from the drill file (its rationale,
 * its notes on tempting wrong answers) or from the engine (a decision's
 * verdict and reason, a hypothesis's rank and contradicting evidence).
 *
 * Answers files are JSON, documented in docs/drills.md:
 *   {"hypotheses": ["client-pool-wait:pricing", ...],
 *    "checks": {"client-pool-wait:pricing": "pricing-pool-by-class", ...},
 *    "decision": "hold-rollout", "hints_used": 0, "person": "ana"}
 * and for discussion drills {"answer": "text" | ["paragraph", ...]} or
 * {"self_assessed": ["point-id", ...]}.
 *
 * Ownership: answers_*() and score_answers() return objects the caller
 * frees with answers_free() / score_free(); pointers inside live as long.
 */
#ifndef TT_SCORE_H
#define TT_SCORE_H

#include <stddef.h>

#include "buf.h"
#include "diagnose.h"
#include "drill.h"
#include "err.h"

typedef struct Answers {
	char *person;             /* from the file, NULL when not given */
	char **hyp;               /* ranked hypothesis choice ids */
	int n_hyp;
	char **check_hyp;         /* checks[i] was chosen for hypothesis check_hyp[i] */
	char **check;
	int n_checks;
	char *decision;           /* NULL when none */
	int hints_used;           /* hints revealed (the first hints_used of the drill) */
	char *text;               /* discussion answer, NULL when none */
	char **self;              /* self-assessed checklist point ids */
	int n_self;
	int has_self;             /* "self_assessed" was given (maybe empty) */
} Answers;

/* Reads an answers file for drill d. Errors are located
 * ("answers.json:3:5: ...") and name the offered choices. */
int answers_load(const char *path, const Drill *d, Answers **out, Err *err);
int answers_parse(const char *name, const char *text, size_t len, const Drill *d,
                  Answers **out, Err *err);

/* An empty answer set to fill in (TUI). */
Answers *answers_new(void);
void answers_free(Answers *a);             /* NULL is a no-op */

/* The answers as canonical JSON (the format answers_parse reads). */
void answers_json(const Answers *a, Buf *out);

/* ---- scoring --------------------------------------------------------- */

typedef struct ScoreLine {
	char *part;               /* "hypotheses", "checks", "decision", "checklist",
	                           * "penalty" */
	char *item;               /* what the line is about, e.g. "rank 1" */
	double possible;          /* points at stake; 0 for a penalty */
	double earned;            /* points earned; negative for a penalty */
	char *answer;             /* what the trainee answered, "" when nothing */
	char *reason;             /* why; never empty when points were lost */
} ScoreLine;

typedef struct Score {
	double total;             /* sum of earned, never below 0 */
	double max;               /* drill_max_score() */
	ScoreLine *lines;
	int n_lines;
	int self_assessed;        /* a discussion checklist ticked by the trainee */
} Score;

/* Scores a against d. dx is the engine's diagnosis of the drill's data, or
 * NULL (then only the drill file's own explanations are used). Returns 0
 * and *out, or TT_EINVAL when a does not fit d (e.g. a discussion answer
 * for a diagnosis drill). */
int score_answers(const Drill *d, const Answers *a, const Diagnosis *dx, Score **out,
                  Err *err);
void score_free(Score *s);                 /* NULL is a no-op */

/* Points lost on line l (possible - earned, or -earned for a penalty). */
double score_line_lost(const ScoreLine *l);

/* The answers the key gives full marks (the drill's model answers). For a
 * discussion drill: every checklist point self-assessed. */
Answers *score_key_answers(const Drill *d);

/* Renderings: for a terminal (the total, then every line; lost points with
 * their reason), and the lines as a JSON array (stored with the attempt). */
void score_text(const Score *s, const Drill *d, Buf *out);
void score_lines_json(const Score *s, Buf *out);

#endif
