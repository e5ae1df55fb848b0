/* sheet.c - observation sheets (being written). */
#include <string.h>

#include "formats.h"

int sheet_sniff(const char *head, size_t len)
{
	(void)head;
	(void)len;
	return 0;
}

int sheet_run(ImportCtx *ctx, FILE *f)
{
	(void)f;
	return err_at(ctx->err, TT_EPARSE, ctx->name, 1, 1, "sheet importer not built yet");
}
