/* util.c - small helpers shared by the subcommands. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "model_json.h"

const char *cli_default_db(void)
{
	const char *e = getenv("TAILTRIAGE_DB");
	return e && *e ? e : "tailtriage.db";
}

int cli_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("tailtriage: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return 1;
}

int cli_is_help(const char *arg)
{
	return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

Model *cli_load_model(const char *path, Err *err)
{
	err_clear(err);
	if (path == NULL)
		return NULL;
	Model *m = NULL;
	if (model_load(path, &m, err))
		return NULL;
	return m;
}
