/*
 * store_metrics.c - metric families, series and points (Prometheus text,
 * OpenMetrics, OTLP/JSON metrics) and observation sheets.
 *
 * Invariants:
 *  - a family is (name, type, unit, temporality); a series is (family,
 *    canonical labels, resource id); both are interned, never duplicated;
 *  - a point is unique per (series, ts_ns) when its time came from the data,
 *    and per (series, source sha256) when it did not (its ts_ns is then the
 *    import time of the source that first brought it), so importing the same
 *    data twice adds nothing;
 *  - SQLite turns NaN into NULL, so the "nan" column of a point keeps a bit
 *    per nullable value that was NaN (quantile and exemplar values use NULL
 *    for NaN since they are never absent);
 *  - statements are prepared on first use, so a read-only connection to a
 *    database whose schema predates these tables still opens.
 */
#include "store.h"
#include "store_priv.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"


enum {
	M_FAM_FIND,
	M_FAM_ADD,
	M_FAM_HELP,
	M_SER_FIND,
	M_SER_ADD,
	M_PT_ADD,
	M_BK_ADD,
	M_Q_ADD,
	M_EX_ADD,
	M_SCAN,
	M_BK_SCAN,
	M_Q_SCAN,
	M_EX_SCAN,
	M_FAMS,
	M_EX_ALL,
	M_COUNTS,
	M_OBS_FIND,
	M_OBS_ADD,
	M_OBS_SCAN,
	M_COUNT
};

/* Bits of metric_points.nan. */
enum { NAN_VALUE = 1, NAN_COUNT = 2, NAN_SUM = 4, NAN_MIN = 8, NAN_MAX = 16 };

#define POINT_COLS                                                                  \
	"s.id, p.id, p.source_id, f.name, f.type, f.unit, f.help, f.temporality,"     \
	" s.labels, coalesce(r.service, ''), p.ts_ns, p.ts_explicit, p.start_ns,"     \
	" p.value, p.count, p.sum, p.min, p.max, p.nan, p.flags, p.scheme, p.scale,"  \
	" p.zero_count, p.zero_threshold"

static const char *const msql[M_COUNT] = {
	[M_FAM_FIND] = "SELECT id, help FROM metric_families"
	               " WHERE name = ?1 AND type = ?2 AND unit = ?3 AND temporality = ?4",
	[M_FAM_ADD] = "INSERT INTO metric_families(name, type, unit, temporality, help)"
	              " VALUES (?1, ?2, ?3, ?4, ?5)",
	[M_FAM_HELP] = "UPDATE metric_families SET help = ?2 WHERE id = ?1",
	[M_SER_FIND] = "SELECT id FROM metric_series"
	               " WHERE family_id = ?1 AND labels = ?2 AND resource_id = ?3",
	[M_SER_ADD] = "INSERT INTO metric_series(family_id, labels, resource_id) VALUES (?1, ?2, ?3)",
	/* The import time and digest come from the source row, so a point
	 * without a timestamp is keyed by the file content. */
	[M_PT_ADD] =
	    "INSERT OR IGNORE INTO metric_points(series_id, source_id, ts_ns, ts_explicit, origin,"
	    " start_ns, value, count, sum, min, max, nan, flags, scheme, scale, zero_count,"
	    " zero_threshold)"
	    " SELECT ?1, ?2, CASE WHEN ?4 THEN ?3 ELSE src.imported_at_ms * 1000000 END, ?4,"
	    " CASE WHEN ?4 THEN '' ELSE src.sha256 END, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13,"
	    " ?14, ?15, ?16 FROM sources src WHERE src.id = ?2",
	[M_BK_ADD] = "INSERT INTO metric_buckets(point_id, le, count) VALUES (?1, ?2, ?3)",
	[M_Q_ADD] = "INSERT INTO metric_quantiles(point_id, quantile, value) VALUES (?1, ?2, ?3)",
	[M_EX_ADD] = "INSERT INTO metric_exemplars(point_id, le, value, ts_ns, trace_id, span_id,"
	             " labels) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	/* Label filter: every (key, value) of ?6 must be in the series labels. */
	[M_SCAN] =
	    "SELECT " POINT_COLS
	    " FROM metric_families f JOIN metric_series s ON s.family_id = f.id"
	    " JOIN metric_points p ON p.series_id = s.id"
	    " LEFT JOIN resources r ON r.id = s.resource_id"
	    " WHERE f.name = ?1 AND (?2 IS NULL OR f.type = ?2)"
	    " AND (?3 IS NULL OR coalesce(r.service, '') = ?3)"
	    " AND p.ts_ns >= ?4 AND p.ts_ns < ?5"
	    " AND (?6 IS NULL OR NOT EXISTS (SELECT 1 FROM json_each(?6) q WHERE NOT EXISTS"
	    "   (SELECT 1 FROM json_each(s.labels) l WHERE l.key = q.key AND l.value = q.value)))"
	    " ORDER BY s.id, p.ts_ns, p.id",
	[M_BK_SCAN] = "SELECT le, count FROM metric_buckets WHERE point_id = ?1 ORDER BY le",
	[M_Q_SCAN] = "SELECT quantile, value FROM metric_quantiles WHERE point_id = ?1"
	             " ORDER BY quantile",
	[M_EX_SCAN] = "SELECT le, value, ts_ns, trace_id, span_id, labels FROM metric_exemplars"
	              " WHERE point_id = ?1 ORDER BY le, id",
	[M_FAMS] =
	    "SELECT f.id, f.name, f.type, f.unit, f.help, f.temporality, count(DISTINCT s.id),"
	    " count(p.id), coalesce(min(p.ts_ns), 0), coalesce(max(p.ts_ns), 0)"
	    " FROM metric_families f LEFT JOIN metric_series s ON s.family_id = f.id"
	    " LEFT JOIN metric_points p ON p.series_id = s.id"
	    " GROUP BY f.id ORDER BY f.name, f.type, f.unit, f.temporality",
	[M_EX_ALL] =
	    "SELECT f.name, f.type, s.labels, coalesce(r.service, ''), p.ts_ns, e.le, e.value,"
	    " e.ts_ns, e.trace_id, e.span_id, e.labels"
	    " FROM metric_exemplars e JOIN metric_points p ON p.id = e.point_id"
	    " JOIN metric_series s ON s.id = p.series_id"
	    " JOIN metric_families f ON f.id = s.family_id"
	    " LEFT JOIN resources r ON r.id = s.resource_id"
	    " WHERE (?1 IS NULL OR f.name = ?1) AND p.ts_ns >= ?2 AND p.ts_ns < ?3"
	    " ORDER BY f.name, p.ts_ns, e.le, e.id",
	[M_COUNTS] = "SELECT (SELECT count(*) FROM metric_series),"
	             " (SELECT count(*) FROM metric_points), (SELECT count(*) FROM observations)",
	[M_OBS_FIND] = "SELECT value, unit, window FROM observations"
	               " WHERE sheet = ?1 AND name = ?2 AND role = ?3 AND labels = ?4",
	[M_OBS_ADD] = "INSERT INTO observations(source_id, sheet, endpoint, name, role, window,"
	              " from_ns, to_ns, value, unit, norm, norm_unit, labels)"
	              " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
	[M_OBS_SCAN] =
	    "SELECT id, source_id, sheet, endpoint, name, role, window, from_ns, to_ns, value,"
	    " unit, norm, norm_unit, labels FROM observations"
	    " WHERE (?1 IS NULL OR sheet = ?1) AND (?2 IS NULL OR name = ?2)"
	    " ORDER BY sheet, name, role = 'baseline', labels",
};

_Static_assert(M_COUNT <= STORE_METRICS_STMTS, "raise STORE_METRICS_STMTS");

int store_metrics_prepare(Store *st, Err *err)
{
	(void)st;
	(void)err;
	return 0;
}

void store_metrics_finalize(Store *st)
{
	store_stmts_finalize(st->mstmt, STORE_METRICS_STMTS);
}

/* The statement i, prepared on first use; NULL with err set on failure. */
static sqlite3_stmt *stmt(Store *st, int i, Err *err)
{
	return store_stmt_lazy(st, &st->mstmt[i], msql[i], "a metrics statement", err);
}

/* ---- labels ------------------------------------------------------------ */

static int label_cmp(const void *a, const void *b)
{
	const StoreLabel *x = a, *y = b;
	size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
	int c = memcmp(x->key, y->key, n);
	if (c)
		return c;
	return (x->key_len > y->key_len) - (x->key_len < y->key_len);
}

char *store_labels_json(StoreLabel *labels, size_t n)
{
	if (n > 1)
		qsort(labels, n, sizeof *labels, label_cmp);
	Buf b;
	buf_init(&b);
	buf_addc(&b, '{');
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && label_cmp(&labels[i - 1], &labels[i]) == 0) {
			buf_fini(&b);
			return NULL;
		}
		if (i)
			buf_addc(&b, ',');
		buf_add_json_str(&b, labels[i].key, labels[i].key_len);
		buf_addc(&b, ':');
		buf_add_json_str(&b, labels[i].val, labels[i].val_len);
	}
	buf_addc(&b, '}');
	return b.p;
}

/* ---- writing -------------------------------------------------------------- */

int store_metric_family_intern(Store *st, const StoreMetricFamily *f, int64_t *id, Err *err)
{
	sqlite3_stmt *find = stmt(st, M_FAM_FIND, err);
	if (find == NULL)
		return TT_ESTORE;
	const char *help = store_nz(f->help);
	sqlite3_bind_text(find, 1, store_nz(f->name), -1, SQLITE_STATIC);
	sqlite3_bind_text(find, 2, store_nz(f->type), -1, SQLITE_STATIC);
	sqlite3_bind_text(find, 3, store_nz(f->unit), -1, SQLITE_STATIC);
	sqlite3_bind_text(find, 4, store_nz(f->temporality), -1, SQLITE_STATIC);
	int rc = sqlite3_step(find);
	if (rc == SQLITE_ROW) {
		*id = sqlite3_column_int64(find, 0);
		int needs_help = *store_col_text(find, 1) == '\0' && *help != '\0';
		store_stmt_done(find);
		if (!needs_help)
			return 0;
		sqlite3_stmt *up = stmt(st, M_FAM_HELP, err);
		if (up == NULL)
			return TT_ESTORE;
		sqlite3_bind_int64(up, 1, *id);
		sqlite3_bind_text(up, 2, help, -1, SQLITE_STATIC);
		rc = sqlite3_step(up);
		store_stmt_done(up);
		return rc == SQLITE_DONE ? 0 : store_sqlerr(st, err, "storing metric help");
	}
	store_stmt_done(find);
	if (rc != SQLITE_DONE)
		return store_sqlerr(st, err, "looking up metric family");
	sqlite3_stmt *add = stmt(st, M_FAM_ADD, err);
	if (add == NULL)
		return TT_ESTORE;
	sqlite3_bind_text(add, 1, store_nz(f->name), -1, SQLITE_STATIC);
	sqlite3_bind_text(add, 2, store_nz(f->type), -1, SQLITE_STATIC);
	sqlite3_bind_text(add, 3, store_nz(f->unit), -1, SQLITE_STATIC);
	sqlite3_bind_text(add, 4, store_nz(f->temporality), -1, SQLITE_STATIC);
	sqlite3_bind_text(add, 5, help, -1, SQLITE_STATIC);
	rc = sqlite3_step(add);
	store_stmt_done(add);
	if (rc != SQLITE_DONE)
		return store_sqlerr(st, err, "storing metric family");
	*id = sqlite3_last_insert_rowid(st->db);
	return 0;
}

int store_metric_series_intern(Store *st, int64_t family_id, const char *labels_json,
                               int64_t resource_id, int64_t *id, Err *err)
{
	sqlite3_stmt *find = stmt(st, M_SER_FIND, err);
	if (find == NULL)
		return TT_ESTORE;
	const char *labels = labels_json ? labels_json : "{}";
	sqlite3_bind_int64(find, 1, family_id);
	sqlite3_bind_text(find, 2, labels, -1, SQLITE_STATIC);
	sqlite3_bind_int64(find, 3, resource_id);
	int rc = sqlite3_step(find);
	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(find, 0);
	store_stmt_done(find);
	if (rc == SQLITE_ROW)
		return 0;
	if (rc != SQLITE_DONE)
		return store_sqlerr(st, err, "looking up metric series");
	sqlite3_stmt *add = stmt(st, M_SER_ADD, err);
	if (add == NULL)
		return TT_ESTORE;
	sqlite3_bind_int64(add, 1, family_id);
	sqlite3_bind_text(add, 2, labels, -1, SQLITE_STATIC);
	sqlite3_bind_int64(add, 3, resource_id);
	rc = sqlite3_step(add);
	store_stmt_done(add);
	if (rc != SQLITE_DONE)
		return store_sqlerr(st, err, "storing metric series");
	*id = sqlite3_last_insert_rowid(st->db);
	return 0;
}

/* Binds an optional double; a NaN sets bit in *nan and binds NULL. */
static void bind_opt(sqlite3_stmt *s, int i, int has, double v, int bit, int *nan)
{
	if (!has) {
		sqlite3_bind_null(s, i);
	} else if (isnan(v)) {
		sqlite3_bind_null(s, i);
		*nan |= bit;
	} else {
		sqlite3_bind_double(s, i, v);
	}
}

static int add_parts(Store *st, int64_t pid, const StoreMetricPoint *p, Err *err)
{
	sqlite3_stmt *s;
	if (p->n_buckets > 0) {
		if ((s = stmt(st, M_BK_ADD, err)) == NULL)
			return TT_ESTORE;
		for (int i = 0; i < p->n_buckets; i++) {
			sqlite3_bind_int64(s, 1, pid);
			sqlite3_bind_double(s, 2, p->buckets[i].le);
			sqlite3_bind_double(s, 3, p->buckets[i].count);
			int rc = sqlite3_step(s);
			store_stmt_done(s);
			if (rc != SQLITE_DONE)
				return store_sqlerr(st, err, "storing histogram bucket");
		}
	}
	if (p->n_quantiles > 0) {
		if ((s = stmt(st, M_Q_ADD, err)) == NULL)
			return TT_ESTORE;
		for (int i = 0; i < p->n_quantiles; i++) {
			sqlite3_bind_int64(s, 1, pid);
			sqlite3_bind_double(s, 2, p->quantiles[i].q);
			if (isnan(p->quantiles[i].value))
				sqlite3_bind_null(s, 3);
			else
				sqlite3_bind_double(s, 3, p->quantiles[i].value);
			int rc = sqlite3_step(s);
			store_stmt_done(s);
			if (rc != SQLITE_DONE)
				return store_sqlerr(st, err, "storing summary quantile");
		}
	}
	if (p->n_exemplars > 0) {
		if ((s = stmt(st, M_EX_ADD, err)) == NULL)
			return TT_ESTORE;
		for (int i = 0; i < p->n_exemplars; i++) {
			const StoreMetricExemplar *e = &p->exemplars[i];
			sqlite3_bind_int64(s, 1, pid);
			if (e->has_le)
				sqlite3_bind_double(s, 2, e->le);
			else
				sqlite3_bind_null(s, 2);
			if (isnan(e->value))
				sqlite3_bind_null(s, 3);
			else
				sqlite3_bind_double(s, 3, e->value);
			if (e->has_ts)
				sqlite3_bind_int64(s, 4, e->ts_ns);
			else
				sqlite3_bind_null(s, 4);
			sqlite3_bind_text(s, 5, store_nz(e->trace_id), -1, SQLITE_STATIC);
			sqlite3_bind_text(s, 6, store_nz(e->span_id), -1, SQLITE_STATIC);
			sqlite3_bind_text(s, 7, e->labels_json ? e->labels_json : "{}", -1,
			                  SQLITE_STATIC);
			int rc = sqlite3_step(s);
			store_stmt_done(s);
			if (rc != SQLITE_DONE)
				return store_sqlerr(st, err, "storing exemplar");
		}
	}
	return 0;
}

int store_metric_point_add(Store *st, int64_t source_id, const StoreMetricPoint *p, int *added,
                           Err *err)
{
	*added = 0;
	sqlite3_stmt *s = stmt(st, M_PT_ADD, err);
	if (s == NULL)
		return TT_ESTORE;
	int nan = 0;
	sqlite3_bind_int64(s, 1, p->series_id);
	sqlite3_bind_int64(s, 2, source_id);
	sqlite3_bind_int64(s, 3, p->ts_ns);
	sqlite3_bind_int(s, 4, p->ts_explicit ? 1 : 0);
	if (p->has_start)
		sqlite3_bind_int64(s, 5, p->start_ns);
	else
		sqlite3_bind_null(s, 5);
	bind_opt(s, 6, p->has_value, p->value, NAN_VALUE, &nan);
	bind_opt(s, 7, p->has_count, p->count, NAN_COUNT, &nan);
	bind_opt(s, 8, p->has_sum, p->sum, NAN_SUM, &nan);
	bind_opt(s, 9, p->has_min, p->min, NAN_MIN, &nan);
	bind_opt(s, 10, p->has_max, p->max, NAN_MAX, &nan);
	sqlite3_bind_int(s, 11, nan);
	sqlite3_bind_int(s, 12, p->flags);
	int expo = p->scheme && strcmp(p->scheme, "exponential") == 0;
	sqlite3_bind_text(s, 13, store_nz(p->scheme), -1, SQLITE_STATIC);
	if (expo) {
		sqlite3_bind_int(s, 14, p->scale);
		sqlite3_bind_double(s, 15, p->zero_count);
		sqlite3_bind_double(s, 16, p->zero_threshold);
	} else {
		sqlite3_bind_null(s, 14);
		sqlite3_bind_null(s, 15);
		sqlite3_bind_null(s, 16);
	}
	int rc = sqlite3_step(s);
	store_stmt_done(s);
	if (rc != SQLITE_DONE)
		return store_sqlerr(st, err, "storing metric point");
	if (sqlite3_changes(st->db) == 0)
		return 0;
	*added = 1;
	return add_parts(st, sqlite3_last_insert_rowid(st->db), p, err);
}

/* ---- reading ---------------------------------------------------------- */

/* Growable arrays the point scan fills per row. */
typedef struct Parts {
	StoreMetricBucket *b;
	int nb, cb;
	StoreMetricQuantile *q;
	int nq, cq;
	StoreMetricExemplar *e;
	int ne, ce;
	size_t *off;  /* 3 per exemplar: offsets of its strings in text */
	Buf text;     /* exemplar strings, NUL-separated */
} Parts;

static void parts_fini(Parts *p)
{
	free(p->b);
	free(p->q);
	free(p->e);
	free(p->off);
	buf_fini(&p->text);
}

static double col_dbl_nan(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_NULL ? NAN : sqlite3_column_double(s, i);
}

static int load_parts(Store *st, int64_t pid, int flags, Parts *pp, Err *err)
{
	sqlite3_stmt *s;
	int rc = SQLITE_DONE;
	pp->nb = pp->nq = pp->ne = 0;
	if (flags & STORE_METRIC_BUCKETS) {
		if ((s = stmt(st, M_BK_SCAN, err)) == NULL)
			return TT_ESTORE;
		sqlite3_bind_int64(s, 1, pid);
		while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
			if (pp->nb == pp->cb) {
				pp->cb = pp->cb ? 2 * pp->cb : 16;
				pp->b = xrealloc(pp->b, (size_t)pp->cb * sizeof *pp->b);
			}
			pp->b[pp->nb].le = sqlite3_column_double(s, 0);
			pp->b[pp->nb].count = sqlite3_column_double(s, 1);
			pp->nb++;
		}
		store_stmt_done(s);
		if (rc != SQLITE_DONE)
			return store_sqlerr(st, err, "reading histogram buckets");
	}
	if (flags & STORE_METRIC_QUANTILES) {
		if ((s = stmt(st, M_Q_SCAN, err)) == NULL)
			return TT_ESTORE;
		sqlite3_bind_int64(s, 1, pid);
		while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
			if (pp->nq == pp->cq) {
				pp->cq = pp->cq ? 2 * pp->cq : 8;
				pp->q = xrealloc(pp->q, (size_t)pp->cq * sizeof *pp->q);
			}
			pp->q[pp->nq].q = sqlite3_column_double(s, 0);
			pp->q[pp->nq].value = col_dbl_nan(s, 1);
			pp->nq++;
		}
		store_stmt_done(s);
		if (rc != SQLITE_DONE)
			return store_sqlerr(st, err, "reading summary quantiles");
	}
	if (flags & STORE_METRIC_EXEMPLARS) {
		if ((s = stmt(st, M_EX_SCAN, err)) == NULL)
			return TT_ESTORE;
		sqlite3_bind_int64(s, 1, pid);
		buf_reset(&pp->text);
		while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
			if (pp->ne == pp->ce) {
				pp->ce = pp->ce ? 2 * pp->ce : 8;
				pp->e = xrealloc(pp->e, (size_t)pp->ce * sizeof *pp->e);
				pp->off = xrealloc(pp->off, (size_t)pp->ce * 3 * sizeof *pp->off);
			}
			StoreMetricExemplar *e = &pp->e[pp->ne];
			memset(e, 0, sizeof *e);
			e->has_le = sqlite3_column_type(s, 0) != SQLITE_NULL;
			e->le = e->has_le ? sqlite3_column_double(s, 0) : 0;
			e->value = col_dbl_nan(s, 1);
			e->has_ts = sqlite3_column_type(s, 2) != SQLITE_NULL;
			e->ts_ns = e->has_ts ? sqlite3_column_int64(s, 2) : 0;
			/* Offsets now, pointers once the text buffer stops moving. */
			for (int k = 0; k < 3; k++) {
				pp->off[3 * pp->ne + k] = pp->text.len;
				buf_adds(&pp->text, store_col_text(s, 3 + k));
				buf_addc(&pp->text, '\0');
			}
			pp->ne++;
		}
		store_stmt_done(s);
		for (int i = 0; i < pp->ne; i++) {
			pp->e[i].trace_id = pp->text.p + pp->off[3 * i];
			pp->e[i].span_id = pp->text.p + pp->off[3 * i + 1];
			pp->e[i].labels_json = pp->text.p + pp->off[3 * i + 2];
		}
		if (rc != SQLITE_DONE)
			return store_sqlerr(st, err, "reading exemplars");
	}
	return 0;
}

int store_metric_points_scan(Store *st, const StoreMetricQuery *q, StoreMetricFn fn, void *ctx,
                             Err *err)
{
	if (q == NULL || q->family == NULL)
		return err_set(err, TT_EINVAL, "metric scan: a family name is required");
	if (q->labels_json) {
		const char *p = q->labels_json;
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		if (*p != '{')
			return err_set(err, TT_EINVAL, "metric scan: label filter must be a JSON object");
	}
	sqlite3_stmt *s = stmt(st, M_SCAN, err);
	if (s == NULL)
		return TT_ESTORE;
	sqlite3_bind_text(s, 1, q->family, -1, SQLITE_STATIC);
	store_bind_text(s, 2, q->type);
	store_bind_text(s, 3, q->service);
	sqlite3_bind_int64(s, 4, q->from_ns);
	sqlite3_bind_int64(s, 5, q->to_ns);
	store_bind_text(s, 6, q->labels_json);
	Parts parts;
	memset(&parts, 0, sizeof parts);
	buf_init(&parts.text);
	int rc, ret = 0, stopped = 0;
	while (!stopped && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		StoreMetricRow r;
		memset(&r, 0, sizeof r);
		r.series_id = sqlite3_column_int64(s, 0);
		r.point_id = sqlite3_column_int64(s, 1);
		r.source_id = sqlite3_column_int64(s, 2);
		r.family = store_col_text(s, 3);
		r.type = store_col_text(s, 4);
		r.unit = store_col_text(s, 5);
		r.help = store_col_text(s, 6);
		r.temporality = store_col_text(s, 7);
		r.labels_json = store_col_text(s, 8);
		r.service = store_col_text(s, 9);
		r.ts_ns = sqlite3_column_int64(s, 10);
		r.ts_explicit = sqlite3_column_int(s, 11);
		r.has_start = sqlite3_column_type(s, 12) != SQLITE_NULL;
		r.start_ns = r.has_start ? sqlite3_column_int64(s, 12) : 0;
		int nan = sqlite3_column_int(s, 18);
		static const int bits[5] = {NAN_VALUE, NAN_COUNT, NAN_SUM, NAN_MIN, NAN_MAX};
		int *has[5] = {&r.has_value, &r.has_count, &r.has_sum, &r.has_min, &r.has_max};
		double *val[5] = {&r.value, &r.count, &r.sum, &r.min, &r.max};
		for (int k = 0; k < 5; k++) {
			if (nan & bits[k]) {
				*has[k] = 1;
				*val[k] = NAN;
			} else if (sqlite3_column_type(s, 13 + k) != SQLITE_NULL) {
				*has[k] = 1;
				*val[k] = sqlite3_column_double(s, 13 + k);
			}
		}
		r.flags = sqlite3_column_int(s, 19);
		r.scheme = store_col_text(s, 20);
		r.scale = sqlite3_column_int(s, 21);
		r.zero_count = sqlite3_column_double(s, 22);
		r.zero_threshold = sqlite3_column_double(s, 23);
		if (q->flags && (ret = load_parts(st, r.point_id, q->flags, &parts, err)) != 0)
			break;
		r.buckets = parts.b;
		r.n_buckets = parts.nb;
		r.quantiles = parts.q;
		r.n_quantiles = parts.nq;
		r.exemplars = parts.e;
		r.n_exemplars = parts.ne;
		stopped = fn(ctx, &r);
	}
	if (stopped || ret)
		rc = SQLITE_DONE;
	store_stmt_done(s);
	parts_fini(&parts);
	if (ret)
		return ret;
	if (rc != SQLITE_DONE)
		return store_sqlerr(st, err, "reading metric points");
	return 0;
}

int store_metric_families_scan(Store *st, StoreMetricFamilyFn fn, void *ctx, Err *err)
{
	sqlite3_stmt *s = stmt(st, M_FAMS, err);
	if (s == NULL)
		return TT_ESTORE;
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		StoreMetricFamilyRow r = {
			.id = sqlite3_column_int64(s, 0),
			.name = store_col_text(s, 1),
			.type = store_col_text(s, 2),
			.unit = store_col_text(s, 3),
			.help = store_col_text(s, 4),
			.temporality = store_col_text(s, 5),
			.series = sqlite3_column_int64(s, 6),
			.points = sqlite3_column_int64(s, 7),
			.min_ts_ns = sqlite3_column_int64(s, 8),
			.max_ts_ns = sqlite3_column_int64(s, 9),
		};
		if (fn(ctx, &r)) {
			rc = SQLITE_DONE;
			break;
		}
	}
	store_stmt_done(s);
	return rc == SQLITE_DONE ? 0 : store_sqlerr(st, err, "reading metric families");
}

int store_metric_exemplars_scan(Store *st, const char *family, int64_t from_ns, int64_t to_ns,
                                StoreExemplarFn fn, void *ctx, Err *err)
{
	sqlite3_stmt *s = stmt(st, M_EX_ALL, err);
	if (s == NULL)
		return TT_ESTORE;
	store_bind_text(s, 1, family);
	sqlite3_bind_int64(s, 2, from_ns);
	sqlite3_bind_int64(s, 3, to_ns);
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		StoreExemplarRow r;
		memset(&r, 0, sizeof r);
		r.family = store_col_text(s, 0);
		r.type = store_col_text(s, 1);
		r.labels_json = store_col_text(s, 2);
		r.service = store_col_text(s, 3);
		r.point_ts_ns = sqlite3_column_int64(s, 4);
		r.ex.has_le = sqlite3_column_type(s, 5) != SQLITE_NULL;
		r.ex.le = r.ex.has_le ? sqlite3_column_double(s, 5) : 0;
		r.ex.value = col_dbl_nan(s, 6);
		r.ex.has_ts = sqlite3_column_type(s, 7) != SQLITE_NULL;
		r.ex.ts_ns = r.ex.has_ts ? sqlite3_column_int64(s, 7) : 0;
		r.ex.trace_id = store_col_text(s, 8);
		r.ex.span_id = store_col_text(s, 9);
		r.ex.labels_json = store_col_text(s, 10);
		if (fn(ctx, &r)) {
			rc = SQLITE_DONE;
			break;
		}
	}
	store_stmt_done(s);
	return rc == SQLITE_DONE ? 0 : store_sqlerr(st, err, "reading exemplars");
}

int store_metric_counts(Store *st, int64_t *series, int64_t *points, int64_t *observations,
                        Err *err)
{
	sqlite3_stmt *s = stmt(st, M_COUNTS, err);
	if (s == NULL)
		return TT_ESTORE;
	int rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		if (series)
			*series = sqlite3_column_int64(s, 0);
		if (points)
			*points = sqlite3_column_int64(s, 1);
		if (observations)
			*observations = sqlite3_column_int64(s, 2);
	}
	store_stmt_done(s);
	return rc == SQLITE_ROW ? 0 : store_sqlerr(st, err, "counting metrics");
}

/* ---- observations ------------------------------------------------------ */

int store_observation_add(Store *st, int64_t source_id, const StoreObservation *o,
                          int *outcome, double *old_value, Err *err)
{
	const char *labels = o->labels_json ? o->labels_json : "{}";
	sqlite3_stmt *f = stmt(st, M_OBS_FIND, err);
	if (f == NULL)
		return TT_ESTORE;
	sqlite3_bind_text(f, 1, store_nz(o->sheet), -1, SQLITE_STATIC);
	sqlite3_bind_text(f, 2, store_nz(o->name), -1, SQLITE_STATIC);
	sqlite3_bind_text(f, 3, store_nz(o->role), -1, SQLITE_STATIC);
	sqlite3_bind_text(f, 4, labels, -1, SQLITE_STATIC);
	int rc = sqlite3_step(f);
	if (rc == SQLITE_ROW) {
		double v = sqlite3_column_double(f, 0);
		int same = v == o->value && strcmp(store_col_text(f, 1), store_nz(o->unit)) == 0 &&
		           strcmp(store_col_text(f, 2), store_nz(o->window)) == 0;
		store_stmt_done(f);
		*outcome = same ? STORE_OBS_SAME : STORE_OBS_CONFLICT;
		if (old_value)
			*old_value = v;
		return 0;
	}
	store_stmt_done(f);
	if (rc != SQLITE_DONE)
		return store_sqlerr(st, err, "looking up observation");
	sqlite3_stmt *s = stmt(st, M_OBS_ADD, err);
	if (s == NULL)
		return TT_ESTORE;
	sqlite3_bind_int64(s, 1, source_id);
	sqlite3_bind_text(s, 2, store_nz(o->sheet), -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, store_nz(o->endpoint), -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, store_nz(o->name), -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 5, store_nz(o->role), -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 6, store_nz(o->window), -1, SQLITE_STATIC);
	if (o->has_range) {
		sqlite3_bind_int64(s, 7, o->from_ns);
		sqlite3_bind_int64(s, 8, o->to_ns);
	} else {
		sqlite3_bind_null(s, 7);
		sqlite3_bind_null(s, 8);
	}
	sqlite3_bind_double(s, 9, o->value);
	sqlite3_bind_text(s, 10, store_nz(o->unit), -1, SQLITE_STATIC);
	sqlite3_bind_double(s, 11, o->norm);
	sqlite3_bind_text(s, 12, store_nz(o->norm_unit), -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 13, labels, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	store_stmt_done(s);
	if (rc != SQLITE_DONE)
		return store_sqlerr(st, err, "storing observation");
	*outcome = STORE_OBS_ADDED;
	return 0;
}

int store_observations_scan(Store *st, const char *sheet, const char *name,
                            StoreObservationFn fn, void *ctx, Err *err)
{
	sqlite3_stmt *s = stmt(st, M_OBS_SCAN, err);
	if (s == NULL)
		return TT_ESTORE;
	store_bind_text(s, 1, sheet);
	store_bind_text(s, 2, name);
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		StoreObservationRow r;
		memset(&r, 0, sizeof r);
		r.id = sqlite3_column_int64(s, 0);
		r.source_id = sqlite3_column_int64(s, 1);
		r.o.sheet = store_col_text(s, 2);
		r.o.endpoint = store_col_text(s, 3);
		r.o.name = store_col_text(s, 4);
		r.o.role = store_col_text(s, 5);
		r.o.window = store_col_text(s, 6);
		r.o.has_range = sqlite3_column_type(s, 7) != SQLITE_NULL;
		r.o.from_ns = r.o.has_range ? sqlite3_column_int64(s, 7) : 0;
		r.o.to_ns = r.o.has_range ? sqlite3_column_int64(s, 8) : 0;
		r.o.value = sqlite3_column_double(s, 9);
		r.o.unit = store_col_text(s, 10);
		r.o.norm = sqlite3_column_double(s, 11);
		r.o.norm_unit = store_col_text(s, 12);
		r.o.labels_json = store_col_text(s, 13);
		if (fn(ctx, &r)) {
			rc = SQLITE_DONE;
			break;
		}
	}
	store_stmt_done(s);
	return rc == SQLITE_DONE ? 0 : store_sqlerr(st, err, "reading observations");
}

/* ==== pulled PromQL queries (owner: live) ================================
 * Kept apart from the metrics code above: two statements in the two last
 * slots of st->mstmt, prepared on first use like the others. */

enum { PQ_ADD = STORE_METRICS_STMTS - 2, PQ_SCAN = STORE_METRICS_STMTS - 1 };
_Static_assert((int)M_COUNT <= (int)PQ_ADD, "metrics statements reach the promql slots");

static sqlite3_stmt *pq_stmt(Store *st, int i, Err *err)
{
	static const char *const text[2] = {
		"INSERT INTO promql_queries(source_id, url, name, query, eval_ns, result_type,"
		" samples) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
		"SELECT source_id, url, name, query, eval_ns, result_type, samples"
		" FROM promql_queries ORDER BY eval_ns, source_id",
	};
	return store_stmt_lazy(st, &st->mstmt[i], text[i - PQ_ADD], "a promql statement", err);
}

int store_promql_add(Store *st, int64_t source_id, const StorePromQuery *q, Err *err)
{
	sqlite3_stmt *s = pq_stmt(st, PQ_ADD, err);
	if (s == NULL)
		return TT_ESTORE;
	sqlite3_bind_int64(s, 1, source_id);
	sqlite3_bind_text(s, 2, store_nz(q->url), -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, store_nz(q->name), -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, store_nz(q->query), -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 5, q->eval_ns);
	sqlite3_bind_text(s, 6, store_nz(q->result_type), -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 7, q->samples);
	int rc = sqlite3_step(s);
	store_stmt_done(s);
	return rc == SQLITE_DONE ? 0 : store_sqlerr(st, err, "storing a promql query");
}

int store_promql_scan(Store *st, StorePromQueryFn fn, void *ctx, Err *err)
{
	sqlite3_stmt *s = pq_stmt(st, PQ_SCAN, err);
	if (s == NULL)
		return TT_ESTORE;
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		StorePromQuery q = {
			.url = store_col_text(s, 1),
			.name = store_col_text(s, 2),
			.query = store_col_text(s, 3),
			.eval_ns = sqlite3_column_int64(s, 4),
			.result_type = store_col_text(s, 5),
			.samples = sqlite3_column_int64(s, 6),
		};
		if (fn(ctx, sqlite3_column_int64(s, 0), &q)) {
			rc = SQLITE_DONE;
			break;
		}
	}
	store_stmt_done(s);
	return rc == SQLITE_DONE ? 0 : store_sqlerr(st, err, "reading promql queries");
}
