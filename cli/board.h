/*
 * board.h - the dashboard's diagnosis: budget evidence for the header
 * (TuiOptions.evidence) and the hypothesis board (TuiOptions.board), fed by
 * a background diagnosis (drills/dx_live.h) of the window on screen.
 */
#ifndef TT_CLI_BOARD_H
#define TT_CLI_BOARD_H

#include "err.h"
#include "evidence.h"
#include "model.h"
#include "tui.h"

typedef struct CliBoard CliBoard;

/* Opens its own read-only connections to db_path; the model is borrowed
 * and must outlive the board. Returns NULL with err set on failure. */
CliBoard *cli_board_open(const char *db_path, const Model *m, Err *err);

/* The same for a drill's data: the diagnosis also reads the observation
 * sheet (NULL: none) and judges the decisions in decide (NULL-terminated,
 * NULL: none), as training does. Both are borrowed for the board's life. */
struct Sheet;
CliBoard *cli_board_open_drill(const char *db_path, const Model *m, const struct Sheet *sheet,
                               const char *const *decide, Err *err);
void cli_board_close(CliBoard *b);           /* NULL is a no-op */

/* Points the options' evidence callbacks (values, and whether they are
 * still being computed) and board at b; its diagnoses use the options'
 * skew tolerance (set it before). */
void cli_board_wire(CliBoard *b, TuiOptions *to);

/* The model of the diagnoses and checks from now on (borrowed until
 * cli_board_close(); the previous one too, a diagnosis may still read
 * it). */
void cli_board_set_model(CliBoard *b, const Model *m);

/* How the traces were sampled (--sampled), for the board's diagnoses. */
void cli_board_sampled(CliBoard *b, EvSampling sampled);

/* How many diagnoses read the dashboard's analysis and how many computed
 * their own (dx_live_counts()). The analysis on screen goes with every
 * request; it is read when it is of all classes (the diagnosis's). */
void cli_board_counts(CliBoard *b, unsigned *reused, unsigned *computed);

#endif
