/* stubs.c - commands not built yet (removed as each lands). */
#include <stdio.h>

#include "cli.h"

int cmd_demo(int argc, char **argv) { (void)argc; (void)argv; return cli_fail("demo: not built yet"); }
