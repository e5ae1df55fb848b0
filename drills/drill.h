/*
 * drill.h - drill files: load, validate, and read the parts a trainer,
 * the scorer and the replay need. The format is documented in
 * docs/drills.md; the shipped drills are drills/catalog/ *.drill.json.
 *
 * A drill is data, never code: its brief, the data that shows the incident
 * (an observation sheet, simulator runs, recorded files), the questions,
 * the answer key with rationale, hints and scoring rules. Nothing in C
 * knows a particular drill.
 *
 * Ownership: drill_load() returns a Drill the caller frees with
 * drill_free(); every pointer inside lives as long as the Drill. Paths in
 * the file are relative to the file's folder and are stored resolved.
 */
#ifndef TT_DRILL_H
#define TT_DRILL_H

#include <stdint.h>

#include "err.h"

enum { DRILL_DIAGNOSIS = 0, DRILL_DISCUSSION = 1 };

enum { DRILL_MAX_RANK = 8 };

/* A window or baseline: absent, a time range, or a phase of a simulator
 * run (known only after the run is generated). */
enum { DRILL_RANGE_NONE, DRILL_RANGE_TIME, DRILL_RANGE_RUN };
enum { DRILL_PHASE_BASELINE = 0, DRILL_PHASE_INCIDENT = 1 };

typedef struct DrillRange {
	int kind;                 /* DRILL_RANGE_* */
	int64_t from_ns, to_ns;   /* DRILL_RANGE_TIME */
	int run;                  /* DRILL_RANGE_RUN: index into Drill.runs */
	int phase;                /* DRILL_PHASE_* */
} DrillRange;

/* One simulator run: `tailtriage sim SCENARIO --set key=value ...`. */
typedef struct DrillRun {
	char *name;
	char *scenario;           /* "mercury" */
	char **keys;              /* parameter names, in file order */
	char **values;            /* their values as text */
	int n_set;
} DrillRun;

/* A choice offered to the trainee: an id and an optional label. */
typedef struct DrillChoice {
	char *id;                 /* "client-pool-wait:pricing", "hold-rollout" */
	char *text;               /* label, NULL when the file gives none */
} DrillChoice;

/* An id with the drill's explanation (answer key entries, wrong answers). */
typedef struct DrillNote {
	char *id;
	char *why;
} DrillNote;

typedef struct DrillKeyCheck {
	char *hyp;                /* a key hypothesis */
	char **accept;            /* check names that discriminate it */
	int n_accept;
	char *why;
} DrillKeyCheck;

typedef struct DrillPartial {
	char *id;                 /* an acceptable but weaker decision */
	double points;            /* points it earns (less than the full decision) */
	char *why;
} DrillPartial;

typedef struct DrillHint {
	char *text;
	double cost;              /* points it costs when revealed */
} DrillHint;

/* One point a discussion answer must cover. It is covered when, for at
 * least one alternative, every term of that alternative occurs in the
 * answer (case-insensitive substring match, so "reserv" finds "reserved"). */
typedef struct DrillPoint {
	char *id;
	char *point;              /* what a good answer says, in words */
	double points;
	char ***any;              /* alternatives; each a NULL-terminated term list */
	int n_any;
} DrillPoint;

typedef struct Drill {
	char *path;               /* file it came from */
	char *dir;                /* its folder (relative paths resolve here) */
	char digest[17];          /* 64-bit FNV-1a of the file, hex */
	char *id;                 /* must equal the file name before ".drill.json" */
	int64_t version;
	char *title;
	int kind;                 /* DRILL_DIAGNOSIS or DRILL_DISCUSSION */
	char *summary;            /* one line for `drill list` */
	char *brief;              /* paragraphs separated by a blank line */
	char *model_path;         /* resolved, NULL when none */

	/* data */
	char *sheet_path;         /* resolved observation sheet, NULL when none */
	char **files;             /* resolved telemetry files */
	int n_files;
	DrillRun *runs;
	int n_runs;
	DrillRange window, baseline;

	/* questions (diagnosis) */
	int rank;                 /* hypotheses to rank, 1..DRILL_MAX_RANK */
	DrillChoice *hyp_choices;
	int n_hyp_choices;
	DrillChoice *check_choices;
	int n_check_choices;
	DrillChoice *decision_choices;
	int n_decision_choices;
	char **local_decisions;   /* decision choices the engine does not know (also
	                           * NULL-terminated) */
	int n_local_decisions;
	/* questions (discussion) */
	char *prompt;

	/* answer key (diagnosis) */
	DrillNote *key_hyp;       /* ranked; n_key_hyp == rank */
	int n_key_hyp;
	DrillKeyCheck *key_checks;/* one per key hypothesis */
	int n_key_checks;
	char **key_decisions;     /* decisions earning full points */
	int n_key_decisions;
	char *decision_why;
	DrillPartial *partial;    /* decisions earning part of the points */
	int n_partial;
	DrillNote *wrong_hyp;     /* why a tempting hypothesis is wrong */
	int n_wrong_hyp;
	DrillNote *wrong_check;   /* why a tempting check does not discriminate */
	int n_wrong_check;
	DrillNote *wrong_decision;/* why a tempting decision is wrong */
	int n_wrong_decision;
	/* answer key (discussion) */
	char *model_answer;
	DrillPoint *checklist;
	int n_checklist;
	int self_assessed_ok;     /* scoring allows a self-assessed checklist */

	/* scoring */
	double hyp_points[DRILL_MAX_RANK]; /* per key rank */
	double wrong_rank_share;  /* share of a rank's points for a key hypothesis
	                           * named at another rank */
	double check_points;      /* per key hypothesis */
	double decision_points;
	double refused_penalty;   /* extra loss for a decision the engine refuses */
	double closure_penalty;   /* loss for deciding with fewer than `rank`
	                           * hypotheses named (premature closure) */

	DrillHint *hints;
	int n_hints;
	char *debrief;

	/* replay */
	double replay_speed;      /* data seconds per wall second */
	double replay_slice_s;    /* data seconds per imported slice */
} Drill;

/* Loads and validates a drill file. Errors are located
 * ("path:line:col: message"). On success *out is owned by the caller. */
int drill_load(const char *path, Drill **out, Err *err);

/* Same for text in memory; dir resolves relative paths (NULL: "."). */
int drill_parse(const char *name, const char *dir, const char *text, size_t len,
                Drill **out, Err *err);

void drill_free(Drill *d);                 /* NULL is a no-op */

/* The most points an attempt can earn. */
double drill_max_score(const Drill *d);

/* Splits a choice id "base:node" into base (written into out, size sz) and
 * returns a pointer to node inside id, or NULL when there is none. */
const char *drill_split_id(const char *id, char *base, unsigned sz);

/* Checks the drill's vocabulary against the engine's: every hypothesis id
 * (before ':') in hyp_ids, every check in checks, every decision (before
 * ':') in decisions or declared local. Any list may be NULL (not checked).
 * Returns 0 or TT_EINVAL with "path: ..." naming the first unknown id. */
int drill_check_vocabulary(const Drill *d, char *const *hyp_ids,
                           const char *const *checks, const char *const *decisions,
                           Err *err);

/* The decision choices the engine judges (every choice but the drill's
 * local ones), as a NULL-terminated array for DiagnoseOptions.decide. The
 * array is the caller's to free(); the ids are borrowed from d. */
const char **drill_engine_decisions(const Drill *d);

/* ---- the catalog --------------------------------------------------------- */

/* Folder of the shipped drills: $TAILTRIAGE_DRILLS, else drills/catalog in
 * the share folder (common/paths.h: installed, else the source tree this
 * binary was built from). Static or environment storage. */
const char *drill_catalog_dir(void);

/* The *.drill.json files of dir, sorted, as a NULL-terminated array the
 * caller frees with drill_strv_free(). Returns NULL with err set when dir
 * cannot be read. */
char **drill_catalog_files(const char *dir, Err *err);

/* Finds drill id in dir (the file "<id>.drill.json") or, when id contains
 * a '/', treats it as a path. Loads it as drill_load(). */
int drill_find(const char *dir, const char *id, Drill **out, Err *err);

void drill_strv_free(char **v);            /* NULL is a no-op */

#endif
