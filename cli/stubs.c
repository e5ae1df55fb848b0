/* stubs.c - commands not built yet (removed as each lands). */
#include <stdio.h>

#include "cli.h"

int cmd_report(int argc, char **argv) { (void)argc; (void)argv; return cli_fail("report: not built yet"); }
int cmd_demo(int argc, char **argv) { (void)argc; (void)argv; return cli_fail("demo: not built yet"); }
int cmd_tui(int argc, char **argv) { (void)argc; (void)argv; return cli_fail("tui: not built yet"); }
int cmd_sim(int argc, char **argv) { (void)argc; (void)argv; return cli_fail("sim: not built yet"); }
Model *cli_load_model(const char *path, Err *err) { (void)path; err_clear(err); return NULL; }
