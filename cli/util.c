/* util.c - small helpers shared by the subcommands. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "model_json.h"
#include "timefmt.h"

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

int cli_ranges(const char *window, const char *baseline, CliRanges *r)
{
	Err err = {0};
	r->win_from = INT64_MIN;
	r->win_to = INT64_MAX;
	r->has_baseline = 0;
	r->base_from = r->base_to = 0;
	if (window && time_parse_range(window, &r->win_from, &r->win_to, &err))
		return cli_fail("--window: %s", err.msg), 2;
	if (baseline == NULL)
		return 0;
	if (strcmp(baseline, "before") == 0) {
		if (r->win_from == INT64_MIN || r->win_to == INT64_MAX)
			return cli_fail("--baseline before needs a window with both ends"), 2;
		r->base_from = r->win_from - (r->win_to - r->win_from);
		r->base_to = r->win_from;
	} else if (time_parse_range(baseline, &r->base_from, &r->base_to, &err)) {
		return cli_fail("--baseline: %s", err.msg), 2;
	}
	r->has_baseline = 1;
	return 0;
}

int cli_text_or_json(const char *format)
{
	if (strcmp(format, "text") == 0 || strcmp(format, "json") == 0)
		return 0;
	return cli_fail("--format must be text or json, not '%s'", format), 2;
}
