/*
 * store_bulk.c - creating a new database in one go: the fast path of
 * `tailtriage import` into a file that does not exist yet.
 *
 * A live database is in WAL mode: every page is written to the WAL first
 * and copied into the database at the checkpoint, and readers may look at
 * it at any time. A database that does not exist yet has no readers, so
 * its first import can skip both costs. It is written under a temporary
 * name next to the final one, `.NAME.import` in the same directory:
 *
 *  - journal in memory, no sync, exclusive lock: pages go straight into the
 *    file, once. Each file of the import is still its own transaction, so
 *    a file with an error is rolled back and the others stay;
 *  - the non-unique indexes are dropped after the schema is created and
 *    built again at the end, from the rows (unique indexes stay: they are
 *    what makes a span or a point that is stored twice a duplicate).
 *    Partial indexes stay too: built at the end, one costs a scan of its
 *    whole table (0.15 s at a million spans for the root spans' index),
 *    kept it costs an insert for each row it holds, a few per cent of
 *    the rows;
 *  - at the end: the indexes, the aggregates (from the spool, the copy of
 *    the spans the load kept as it stored them, store_spool.c; when that
 *    was given up, read through two connections when it pays: the
 *    exclusive lock is given up for them; meanwhile a thread makes the
 *    rows durable), WAL mode (recorded in the
 *    file header, so the finished file opens like any other database), a
 *    last fsync, and a rename to the final name that refuses to replace
 *    an existing file.
 *
 * Invariants:
 *  - the final name either does not exist or names a complete database:
 *    the rename is the only step that creates it, and it happens after the
 *    data was synced. A process killed before that leaves only the
 *    temporary file, which no reader opens;
 *  - the temporary file is also the lock: whoever holds flock() on it owns
 *    the creation of the final name. A second import that wants to create
 *    the same database waits for the lock and then finds the database
 *    there (and appends to it), or finds a leftover of a killed import
 *    (and starts it afresh). A lock taken on a file that was renamed or
 *    removed meanwhile is dropped and taken again;
 *  - only the lock holder removes or truncates the temporary file.
 */
#define _GNU_SOURCE  /* renameat2 */
#include "store.h"
#include "store_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <libgen.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"

typedef struct DeferredIndex {
	char *name;
	char *sql;                /* CREATE INDEX ... as the schema has it */
} DeferredIndex;

struct StoreBulk {
	char *final_path;
	char *tmp_path;
	int lock_fd;              /* open on tmp_path, flock()ed; -1 when closed */
	int done;                 /* the file was moved into place: keep it */
	DeferredIndex *idx;
	int n_idx;
};

/* a, b and c joined, malloc'd */
static char *cat3(const char *a, const char *b, const char *c)
{
	size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
	char *r = xcalloc(1, la + lb + lc + 1);
	memcpy(r, a, la);
	memcpy(r + la, b, lb);
	memcpy(r + la + lb, c, lc);
	return r;
}

/* The side files SQLite may leave next to a database. */
static const char *const side_suffix[] = {"-wal", "-shm", "-journal"};

static void unlink_side_files(const char *path)
{
	for (size_t i = 0; i < sizeof side_suffix / sizeof side_suffix[0]; i++) {
		char *p = cat3(path, side_suffix[i], "");
		unlink(p);
		free(p);
	}
}

void store_bulk_free(StoreBulk *b)
{
	if (b == NULL)
		return;
	if (!b->done && b->lock_fd >= 0) {
		/* still ours (we hold the lock): nothing of it may stay */
		unlink(b->tmp_path);
		unlink_side_files(b->tmp_path);
	}
	if (b->lock_fd >= 0)
		close(b->lock_fd);
	for (int i = 0; i < b->n_idx; i++) {
		free(b->idx[i].name);
		free(b->idx[i].sql);
	}
	free(b->idx);
	free(b->final_path);
	free(b->tmp_path);
	free(b);
}

char *store_bulk_temp_path(const char *path)
{
	char *d = xstrdup(path), *f = xstrdup(path);
	char *r = cat3(dirname(d), "/.", basename(f));
	char *t = cat3(r, ".import", "");
	free(r);
	r = t;
	free(d);
	free(f);
	return r;
}

/* Takes the lock on b->tmp_path (creating the file), waiting for another
 * holder. Returns 0 with b->lock_fd set, or an error. */
static int take_lock(StoreBulk *b, Err *err)
{
	for (;;) {
		/* 0644 before the umask: what SQLite gives a database it creates */
		int fd = open(b->tmp_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0)
			return err_set(err, TT_EIO, "%s: cannot create database: %s: %s",
			               b->final_path, b->tmp_path, strerror(errno));
		int rc;
		while ((rc = flock(fd, LOCK_EX)) != 0 && errno == EINTR)
			;
		if (rc != 0) {
			int e = errno;
			close(fd);
			return err_set(err, TT_EIO, "%s: cannot lock %s: %s", b->final_path,
			               b->tmp_path, strerror(e));
		}
		/* The holder before us may have renamed it into place or removed
		 * it: then our lock is on a file nobody else will look at. */
		struct stat a, n;
		if (fstat(fd, &a) == 0 && stat(b->tmp_path, &n) == 0 && a.st_dev == n.st_dev &&
		    a.st_ino == n.st_ino) {
			b->lock_fd = fd;
			return 0;
		}
		close(fd);
	}
}

/* Drops every non-unique index the migrations created that is not
 * partial, and remembers its CREATE statement for store_bulk_finish(). */
static int defer_indexes(Store *st, StoreBulk *b, Err *err)
{
	sqlite3_stmt *s = NULL;
	if (sqlite3_prepare_v2(st->db,
	                       "SELECT m.name, m.sql FROM sqlite_master m,"
	                       " pragma_index_list(m.tbl_name) il"
	                       " WHERE m.type = 'index' AND m.sql IS NOT NULL"
	                       " AND il.name = m.name AND il.\"unique\" = 0 AND il.partial = 0"
	                       " ORDER BY m.rowid",
	                       -1, &s, NULL) != SQLITE_OK)
		return store_sqlerr(st, err, "listing indexes");
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		b->idx = xrealloc(b->idx, (size_t)(b->n_idx + 1) * sizeof *b->idx);
		b->idx[b->n_idx].name = xstrdup((const char *)sqlite3_column_text(s, 0));
		b->idx[b->n_idx].sql = xstrdup((const char *)sqlite3_column_text(s, 1));
		b->n_idx++;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return store_sqlerr(st, err, "listing indexes");
	if (store_exec(st, "BEGIN", err))
		return TT_ESTORE;
	for (int i = 0; i < b->n_idx; i++) {
		/* names come from the schema this program created */
		char *sql = cat3("DROP INDEX \"", b->idx[i].name, "\"");
		int e = store_exec(st, sql, err);
		free(sql);
		if (e) {
			store_exec(st, "ROLLBACK", NULL);
			return TT_ESTORE;
		}
	}
	return store_exec(st, "COMMIT", err);
}

int store_bulk_open(const char *path, Store **out, Err *err)
{
	*out = NULL;
	StoreBulk *b = xcalloc(1, sizeof *b);
	b->lock_fd = -1;
	b->final_path = xstrdup(path);
	b->tmp_path = store_bulk_temp_path(path);
	Store *st = NULL;
	int rc = take_lock(b, err);
	if (rc)
		goto fail;
	struct stat sb;
	if (stat(path, &sb) == 0 || errno != ENOENT) {
		/* created meanwhile (by the import we waited for, or another
		 * program): not ours to create; the lock file goes */
		store_bulk_free(b);
		return 0;
	}
	/* a leftover of a killed import: start afresh. Only then: on ext4, a
	 * truncation to zero makes the first close of the file after the
	 * writes flush all of them at once (auto_da_alloc), in the middle of
	 * the import; the final fsync does that write in any case. */
	if (fstat(b->lock_fd, &sb) != 0 || (sb.st_size > 0 && ftruncate(b->lock_fd, 0) != 0)) {
		rc = err_set(err, TT_EIO, "%s: cannot reset %s: %s", path, b->tmp_path,
		             strerror(errno));
		goto fail;
	}
	unlink_side_files(b->tmp_path);
	rc = store_open_mode(b->tmp_path, 0, 1, &st, err);
	if (rc)
		goto fail;
	st->bulk = b;
	st->spool = store_spool_new(st->bulk->tmp_path); /* none: SQLite is read */
	b = NULL;
	rc = defer_indexes(st, st->bulk, err);
	if (rc)
		goto fail;
	*out = st;
	return 0;
fail:
	store_close(st);        /* removes the temporary file when st owns b */
	store_bulk_free(b);
	return rc ? rc : TT_EIO;
}

int store_is_bulk(const Store *st)
{
	return st && st->bulk;
}

/* The rows made durable while the aggregates' pass computes (a thread's
 * body; arg: a WriteBack). The thread only waits for the disk. Starting
 * the writing alone is not enough: the fsync at the end then still
 * commits the file system's journal for every block the rows were given
 * and has the disk's cache flushed, which took 0.2 s of a million-span
 * import's wall time even with all the data already written; done here,
 * it leaves the final fsync the pass's own pages (0.04 s).
 *
 * The writing skips the first 4 MiB: the header page and the roots of the
 * tables the pass writes are there, and a page under writeback may have
 * to wait before it can change (the pass waited for that about 80 times
 * at a million spans when the whole file was written at once). The
 * fdatasync after it writes what is dirty by then, once.
 *
 * Its failure is kept for the caller: a write error reported here is not
 * reported again by the final fsync on the same descriptor. */
typedef struct WriteBack {
	int fd;
	int err;                  /* errno of a failed fdatasync, or 0 */
} WriteBack;

static void *write_back(void *arg)
{
	WriteBack *w = arg;
	sync_file_range(w->fd, (off64_t)4 << 20, 0, SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
	if (fdatasync(w->fd) != 0)
		w->err = errno;
	return NULL;
}

/* fsync of a directory, so that a rename in it is on disk. */
static int sync_dir_of(const char *path)
{
	char *d = xstrdup(path);
	int fd = open(dirname(d), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(d);
	if (fd < 0)
		return -1;
	int rc = fsync(fd);
	close(fd);
	return rc;
}

/* Moves tmp to final unless final exists. Returns 0, 1 when final exists,
 * or -1 with errno. */
static int move_no_replace(const char *tmp, const char *final)
{
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, final, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno == EEXIST)
		return 1;
	if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
		return -1;
	/* a file system without RENAME_NOREPLACE: a hard link does not
	 * replace either */
	if (link(tmp, final) != 0)
		return errno == EEXIST ? 1 : -1;
	unlink(tmp);
	return 0;
}

int store_bulk_finish(Store *st, Err *err)
{
	StoreBulk *b = st->bulk;
	int rc = 0;
	if (!sqlite3_get_autocommit(st->db)) {
		rc = err_set(err, TT_EINVAL, "%s: a transaction is still open", b->final_path);
		store_close(st);
		return rc;
	}
	/* the index sorts may spill: to temporary files, not to memory */
	if (store_exec(st, "PRAGMA temp_store = FILE", err) || store_exec(st, "BEGIN", err))
		goto fail_open;
	for (int i = 0; i < b->n_idx; i++)
		if (store_exec(st, b->idx[i].sql, err)) {
			store_exec(st, "ROLLBACK", NULL);
			goto fail_open;
		}
	if (store_exec(st, "COMMIT", err) || store_exec(st, "PRAGMA temp_store = MEMORY", err))
		goto fail_open;
	/* what is left reads more than it writes: the writer's cache goes back
	 * to a reader's size, and its pages to the heap the reading takes its
	 * memory from (so the import's peak stays the writing's) */
	store_cache_kib(st, STORE_READ_CACHE_KIB);
	store_exec(st, "PRAGMA shrink_memory", NULL);
	/* the rows and indexes are in the file and will not change much: a
	 * thread makes them durable while the aggregates' pass computes */
	pthread_t wb;
	WriteBack wbs = {.fd = b->lock_fd};
	int wb_started = pthread_create(&wb, NULL, write_back, &wbs) == 0;
	/* derived tables (the aggregates) over everything loaded, with the
	 * indexes there to read it by. The exclusive lock is given up first
	 * (at the next access after the pragma, the count), so that the hook
	 * can read the file through more connections than this one (on more
	 * cores); its writes make their own transactions. Nobody else opens
	 * the temporary file, and a failure still discards all of it. */
	if (store_spool_seal(st->spool) != 0) {
		store_spool_free(st->spool); /* given up: the hook reads SQLite */
		st->spool = NULL;
	}
	int hooked = store_exec(st, "PRAGMA locking_mode = NORMAL", err) == 0 &&
	             store_exec(st, "SELECT count(*) FROM sqlite_schema", err) == 0 &&
	             store_run_commit_hook(st, 1, err) == 0;
	store_spool_free(st->spool); /* read: its file goes */
	st->spool = NULL;
	if (wb_started)
		pthread_join(wb, NULL); /* before anything may close the descriptor */
	if (!hooked)
		goto fail_open;
	if (wbs.err) {
		rc = err_set(err, TT_EIO, "%s: syncing %s: %s", b->final_path, b->tmp_path,
		             strerror(wbs.err));
		goto fail_open_rc;
	}
	/* WAL from here on, like every database the store opens; the header
	 * says so, and closing checkpoints the one page this writes and
	 * removes the WAL */
	if (store_exec(st, "PRAGMA journal_mode = WAL", err))
		goto fail_open;
	st->bulk = NULL;
	store_close(st);
	st = NULL;
	struct stat sb;
	char *wal = cat3(b->tmp_path, "-wal", "");
	int wal_left = stat(wal, &sb) == 0;
	free(wal);
	if (wal_left) {
		rc = err_set(err, TT_EIO, "%s: %s-wal was not merged when closing", b->final_path,
		             b->tmp_path);
		goto fail;
	}
	if (fsync(b->lock_fd) != 0) {
		rc = err_set(err, TT_EIO, "%s: syncing %s: %s", b->final_path, b->tmp_path,
		             strerror(errno));
		goto fail;
	}
	int m = move_no_replace(b->tmp_path, b->final_path);
	if (m < 0) {
		rc = err_set(err, TT_EIO, "%s: cannot move %s into place: %s", b->final_path,
		             b->tmp_path, strerror(errno));
		goto fail;
	}
	if (m == 1) {
		rc = STORE_BULK_RACED;
		goto fail;
	}
	b->done = 1;
	sync_dir_of(b->final_path); /* best effort: the data itself is synced */
	store_bulk_free(b);
	return 0;
fail_open:
	rc = err && err->code ? err->code : TT_ESTORE;
fail_open_rc:
	store_close(st);        /* owns b: removes the temporary file */
	return rc;
fail:
	store_bulk_free(b);     /* not done: removes the temporary file */
	return rc;
}

int store_bulk_cleanup(const char *path)
{
	char *tmp = store_bulk_temp_path(path);
	int removed = 0;
	int fd = open(tmp, O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		struct stat a, n;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &a) == 0 &&
		    stat(tmp, &n) == 0 && a.st_dev == n.st_dev && a.st_ino == n.st_ino) {
			unlink(tmp);
			unlink_side_files(tmp);
			removed = 1;
		}
		close(fd);
	}
	free(tmp);
	return removed;
}
