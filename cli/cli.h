/*
 * cli.h - subcommands. Each cmd_*.c implements one `tailtriage NAME`;
 * each returns the process exit status (0 ok, 1 failure, 2 usage).
 */
#ifndef TT_CLI_H
#define TT_CLI_H

#include "err.h"
#include "model.h"
#include "store.h"

int cmd_import(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_tui(int argc, char **argv);
int cmd_sim(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_pull(int argc, char **argv);
int cmd_drill(int argc, char **argv);
int cmd_diagnose(int argc, char **argv);
int cmd_check(int argc, char **argv);

/* Default database path: $TAILTRIAGE_DB or ./tailtriage.db. */
const char *cli_default_db(void);

/* Prints "tailtriage: msg" to stderr; returns 1. */
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* True when arg is "-h" or "--help". */
int cli_is_help(const char *arg);

/* Loads a model file or returns NULL with err set. path may be NULL (no
 * model): then returns NULL with err->code == 0. */
Model *cli_load_model(const char *path, Err *err);

#endif
