/*
 * store_floor.c - what the store alone costs per span: the floor under any
 * importer that keeps what tailtriage keeps (bench/README.md, "Import").
 *
 * usage: tt_store_floor [--bulk] SRC.db DST.db [INDEX...]
 *
 * Reads every span of SRC (a database `tailtriage import` wrote) in rowid
 * order with plain SQLite, and stores it into a fresh DST through the same
 * store API the importers use (store_spans_add, STORE_SPAN_ROWS per
 * statement, one transaction), exactly as an import would, but with no
 * file to read and no JSON to parse. Only the time spent inside the store
 * calls and the commit (which includes the WAL checkpoint) is counted;
 * reading SRC is not. Prints one line of key=value pairs.
 *
 * With --bulk, DST (which must not exist) is written the way `tailtriage
 * import` creates a new database (store_bulk_open): commit_s then also
 * counts building the deferred indexes, the switch to WAL, the sync and
 * the rename.
 *
 * INDEX names (spans_identity, spans_root_start) are dropped from DST
 * before the run: what-if figures for what each index costs. A store
 * without spans_identity no longer notices repeated spans, so those runs
 * are measurements, not a way to import.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "store.h"

#define CHUNK 512

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Column i as an offset into the arena, or -1 for NULL. */
static long keep(Buf *arena, sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);
	if (t == NULL)
		return -1;
	long at = (long)arena->len;
	buf_add(arena, t, (size_t)sqlite3_column_bytes(s, i) + 1);
	return at;
}

static const char *at(const Buf *arena, long off)
{
	return off < 0 ? NULL : arena->p + off;
}

int main(int argc, char **argv)
{
	int bulk = argc > 1 && strcmp(argv[1], "--bulk") == 0;
	if (bulk) {
		argv++;
		argc--;
	}
	if (argc < 3 || (bulk && argc > 3)) {
		fprintf(stderr, "usage: %s [--bulk] SRC.db DST.db [INDEX...]\n", argv[0]);
		return 2;
	}
	sqlite3 *src = NULL;
	sqlite3_stmt *q = NULL;
	if (sqlite3_open_v2(argv[1], &src, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(src,
	                       "SELECT trace_id, span_id, parent_id, resource_id, scope_id, service,"
	                       " host, name, kind, start_ns, end_ns, status_code, status_msg, wclass,"
	                       " queue_ns, trace_state, flags, attrs, events, links, dropped"
	                       " FROM spans ORDER BY id",
	                       -1, &q, NULL) != SQLITE_OK) {
		fprintf(stderr, "%s: %s\n", argv[1], sqlite3_errmsg(src));
		return 1;
	}
	Store *st = NULL;
	Err err = {0};
	int64_t source_id = 0;
	if (bulk ? store_bulk_open(argv[2], &st, &err) : store_open(argv[2], 0, &st, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	if (st == NULL) {
		fprintf(stderr, "%s: exists already (--bulk creates a new database)\n", argv[2]);
		return 1;
	}
	for (int i = 3; i < argc; i++) {
		sqlite3 *dst = NULL;
		char sql[200];
		snprintf(sql, sizeof sql, "DROP INDEX \"%s\"", argv[i]);
		if (strchr(argv[i], '"') || sqlite3_open(argv[2], &dst) != SQLITE_OK ||
		    sqlite3_exec(dst, sql, NULL, NULL, NULL) != SQLITE_OK) {
			fprintf(stderr, "%s: cannot drop index %s: %s\n", argv[2], argv[i],
			        dst ? sqlite3_errmsg(dst) : "out of memory");
			return 1;
		}
		sqlite3_close(dst);
	}
	double t_store = 0, t0 = now_s();
	if (store_begin(st, &err) ||
	    store_source_add(st, argv[1], "store-floor", "otlp-json", 0, &source_id, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	t_store += now_s() - t0;

	static StoreSpan sp[CHUNK];
	static long off[CHUNK][11];
	const StoreSpan *ptr[CHUNK];
	Buf arena;
	buf_init(&arena);
	int64_t total = 0, added_total = 0;
	int done = 0;
	while (!done) {
		int n = 0;
		buf_reset(&arena);
		while (n < CHUNK) {
			int rc = sqlite3_step(q);
			if (rc != SQLITE_ROW) {
				done = 1;
				break;
			}
			StoreSpan *s = &sp[n];
			memset(s, 0, sizeof *s);
			snprintf(s->trace_id, sizeof s->trace_id, "%s", sqlite3_column_text(q, 0));
			snprintf(s->span_id, sizeof s->span_id, "%s", sqlite3_column_text(q, 1));
			snprintf(s->parent_id, sizeof s->parent_id, "%s", sqlite3_column_text(q, 2));
			s->resource_id = sqlite3_column_int64(q, 3);
			s->scope_id = sqlite3_column_int64(q, 4);
			static const int text_cols[11] = {5, 6, 7, 12, 13, 15, 17, 18, 19, -1, -1};
			for (int k = 0; text_cols[k] >= 0; k++)
				off[n][k] = keep(&arena, q, text_cols[k]);
			s->kind = sqlite3_column_int(q, 8);
			s->start_ns = sqlite3_column_int64(q, 9);
			s->end_ns = sqlite3_column_int64(q, 10);
			s->status_code = sqlite3_column_int(q, 11);
			s->has_queue = sqlite3_column_type(q, 14) != SQLITE_NULL;
			s->queue_ns = sqlite3_column_int64(q, 14);
			s->flags = sqlite3_column_int64(q, 16);
			s->dropped = sqlite3_column_int64(q, 20);
			n++;
		}
		/* the arena may have moved while it grew: point into it now */
		for (int i = 0; i < n; i++) {
			StoreSpan *s = &sp[i];
			s->service = at(&arena, off[i][0]);
			s->host = at(&arena, off[i][1]);
			s->name = at(&arena, off[i][2]);
			s->status_msg = at(&arena, off[i][3]);
			s->wclass = at(&arena, off[i][4]);
			s->trace_state = at(&arena, off[i][5]);
			s->attrs_json = at(&arena, off[i][6]);
			s->events_json = at(&arena, off[i][7]);
			s->links_json = at(&arena, off[i][8]);
			ptr[i] = s;
		}
		if (n == 0)
			break;
		int64_t added, first;
		double t = now_s();
		if (store_spans_add(st, source_id, ptr, n, &added, &first, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 1;
		}
		t_store += now_s() - t;
		total += n;
		added_total += added;
	}
	double t_commit = now_s();
	StoreSourceCounts c = {.spans_added = added_total};
	if (store_source_finish(st, source_id, &c, "imported", &err) || store_commit(st, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	double t_close = now_s();
	if (bulk) {
		if (store_bulk_finish(st, &err)) {
			fprintf(stderr, "%s\n", err.msg[0] ? err.msg : "finishing the bulk load failed");
			return 1;
		}
	} else {
		store_close(st);
	}
	t_close = now_s() - t_close;
	t_commit = now_s() - t_commit;
	double all = t_store + t_commit;
	printf("spans=%lld added=%lld insert_s=%.2f commit_s=%.2f close_s=%.2f store_s=%.2f"
	       " spans_per_s=%.0f\n",
	       (long long)total, (long long)added_total, t_store, t_commit, t_close, all,
	       all > 0 ? (double)total / all : 0.0);
	buf_fini(&arena);
	sqlite3_finalize(q);
	sqlite3_close(src);
	return 0;
}
