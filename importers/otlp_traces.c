/* otlp_traces.c - placeholder until the streaming importer lands. */
#include <string.h>

#include "formats.h"

int otlp_traces_sniff(const char *head, size_t len)
{
	(void)len;
	return strstr(head, "resourceSpans") ? 90 : 0;
}

int otlp_traces_run(ImportCtx *ctx, FILE *f)
{
	(void)f;
	return err_at(ctx->err, TT_EPARSE, ctx->name, 1, 1, "OTLP importer not built yet");
}
