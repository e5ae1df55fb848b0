/*
 * store_metrics.c - metric points and observation sheets (filled in by the
 * metrics work; see issue "Metric snapshots").
 */
#include "store.h"
#include "store_priv.h"

int store_metrics_migration_count(void)
{
	return 0;
}

const char *store_metrics_migration(int i)
{
	(void)i;
	return "";
}

int store_metrics_prepare(Store *st, Err *err)
{
	(void)st;
	(void)err;
	return 0;
}

void store_metrics_finalize(Store *st)
{
	for (int i = 0; i < STORE_METRICS_STMTS; i++)
		sqlite3_finalize(st->mstmt[i]);
}
