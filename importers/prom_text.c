/*
 * prom_text.c - Prometheus text exposition format 0.0.4 and OpenMetrics 1.0
 * text, one parser with two dialects.
 *
 * The two grammars differ in ways that matter, so every rule below names its
 * dialect:
 *  - Prometheus 0.0.4 (prometheus.io, "Exposition formats"), read as
 *    leniently as Prometheus's scrape parser (model/textparse/promparse.go)
 *    and prometheus/common's expfmt text parser read it: tokens separated by
 *    any blanks/tabs (none needed between '}' and the value), empty lines
 *    and free comments allowed, HELP and TYPE only, types
 *    counter|gauge|histogram|summary|untyped in any letter case, values as
 *    Go's ParseFloat reads them without hex floats or underscores,
 *    timestamps int64 milliseconds, escapes \\ \" \n decoded and any
 *    other kept as written, no exemplars, the last line feed optional.
 *    A family's samples need not be grouped and its HELP/TYPE may come
 *    after them or repeat; UTF-8 metric and label names may be quoted,
 *    the metric name inside the braces (docs/formats/prometheus-text.md).
 *  - OpenMetrics 1.0 (its ABNF is followed literally): single spaces, no
 *    empty lines, only # TYPE/# HELP/# UNIT/# EOF comments, "# EOF" last and
 *    nothing after it, eight types with their sample suffixes (_total,
 *    _created, _bucket, _gcount, _gsum, _info, ...), timestamps in seconds
 *    (may be fractional), exemplars on counter _total and histogram _bucket
 *    samples, families and metrics never interleaved, a metric's points in
 *    increasing time. An undefined escape such as \t is allowed by the ABNF
 *    (BS normal-char) and kept as the two characters backslash and t.
 *
 * Streaming: lines are read one at a time (at most PROM_MAX_LINE bytes).
 * OpenMetrics metrics are contiguous, so each metric (label set) is
 * validated and written as soon as the next one starts; memory is bounded
 * by the largest metric plus the names and label sets seen so far, which
 * are needed to reject interleaving. Prometheus 0.0.4 lets any family come
 * back later in the file, so every family is kept until the end of the
 * file and then written: memory grows with the file (an exposition is one
 * scrape, and PROM_MAX_LINE bounds each line).
 *
 * Timestamps: a sample without a timestamp is stored with ts_explicit = 0
 * and the import time of the file (the store keys such points by the file
 * digest, so importing the file again adds nothing).
 *
 * Storage: a family is stored under its family name (OpenMetrics counter
 * "foo" for sample "foo_total"; in Prometheus 0.0.4 the family name is the
 * sample name, e.g. "foo_total"); "untyped" is stored as "unknown"; each
 * stateset state is its own series (its labels include the state label).
 */
#include "formats.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "hash.h"
#include "jpos.h"
#include "store.h"

#define PROM_MAX_LINE (1u << 20)
#define EXEMPLAR_MAX_RUNES 128

enum { D_PROM, D_OM };

enum { T_UNKNOWN, T_COUNTER, T_GAUGE, T_HISTOGRAM, T_GAUGEHISTOGRAM, T_SUMMARY, T_INFO, T_STATESET };

static const char *const type_names[] = {"unknown", "counter", "gauge", "histogram",
                                         "gaugehistogram", "summary", "info", "stateset"};

/* What a sample is within its family. */
enum { R_VALUE, R_TOTAL, R_CREATED, R_BUCKET, R_COUNT, R_SUM, R_INFO, R_QUANTILE, R_NROLES };

typedef struct Suffix {
	const char *sfx;
	int role;
} Suffix;

static const Suffix sfx_value[] = {{"", R_VALUE}, {NULL, 0}};
static const Suffix om_counter[] = {{"_total", R_TOTAL}, {"_created", R_CREATED}, {NULL, 0}};
static const Suffix om_summary[] = {
	{"", R_QUANTILE}, {"_sum", R_SUM}, {"_count", R_COUNT}, {"_created", R_CREATED}, {NULL, 0}};
static const Suffix om_histogram[] = {
	{"_bucket", R_BUCKET}, {"_sum", R_SUM}, {"_count", R_COUNT}, {"_created", R_CREATED}, {NULL, 0}};
static const Suffix om_ghist[] = {
	{"_bucket", R_BUCKET}, {"_gsum", R_SUM}, {"_gcount", R_COUNT}, {NULL, 0}};
static const Suffix om_info[] = {{"_info", R_INFO}, {NULL, 0}};
static const Suffix pr_summary[] = {{"", R_QUANTILE}, {"_sum", R_SUM}, {"_count", R_COUNT}, {NULL, 0}};
static const Suffix pr_histogram[] = {
	{"_bucket", R_BUCKET}, {"_sum", R_SUM}, {"_count", R_COUNT}, {NULL, 0}};

static const Suffix *suffixes(int dialect, int type)
{
	if (dialect == D_PROM) {
		switch (type) {
		case T_SUMMARY: return pr_summary;
		case T_HISTOGRAM: return pr_histogram;
		default: return sfx_value;
		}
	}
	switch (type) {
	case T_COUNTER: return om_counter;
	case T_SUMMARY: return om_summary;
	case T_HISTOGRAM: return om_histogram;
	case T_GAUGEHISTOGRAM: return om_ghist;
	case T_INFO: return om_info;
	default: return sfx_value;
	}
}

/* ---- small helpers ------------------------------------------------------ */

static int is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int is_hex(int c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int name_start(int c)
{
	return is_alpha(c) || c == '_' || c == ':';
}

static int name_char(int c)
{
	return name_start(c) || is_digit(c);
}

static int label_start(int c)
{
	return is_alpha(c) || c == '_';
}

static int label_char(int c)
{
	return label_start(c) || is_digit(c);
}

static int blank(int c)
{
	return c == ' ' || c == '\t';
}

static int lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

static int eq_nocase(const char *s, size_t n, const char *lit)
{
	size_t m = strlen(lit);
	if (n != m)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (lower((unsigned char)s[i]) != lit[i])
			return 0;
	return 1;
}

/* Offset of the first invalid UTF-8 byte of s, or n when valid. Rejects
 * overlong forms, surrogates and code points above U+10FFFF. */
static size_t utf8_check(const unsigned char *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		unsigned c = s[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		size_t len;
		unsigned cp, min;
		if ((c & 0xE0) == 0xC0) {
			len = 2, cp = c & 0x1F, min = 0x80;
		} else if ((c & 0xF0) == 0xE0) {
			len = 3, cp = c & 0x0F, min = 0x800;
		} else if ((c & 0xF8) == 0xF0) {
			len = 4, cp = c & 0x07, min = 0x10000;
		} else {
			return i;
		}
		if (i + len > n)
			return i;
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xC0) != 0x80)
				return i;
			cp = (cp << 6) | (s[i + k] & 0x3F);
		}
		if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			return i;
		i += len;
	}
	return n;
}

static size_t utf8_runes(const char *s, size_t n)
{
	size_t r = 0;
	for (size_t i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xC0) != 0x80)
			r++;
	return r;
}

/* ---- numbers ----------------------------------------------------------- */

enum { NUM_OK = 0, NUM_SYNTAX = -1, NUM_RANGE = -2 };

static size_t digits(const char *s, size_t n, size_t i)
{
	size_t j = i;
	while (j < n && is_digit((unsigned char)s[j]))
		j++;
	return j - i;
}

/* Decimal float syntax shared by both dialects:
 *   [sign] (1*DIGIT ["." *DIGIT] / *DIGIT "." 1*DIGIT) [("e"/"E") [sign] 1*DIGIT] */
static int decimal_ok(const char *s, size_t n, int allow_sign)
{
	size_t i = 0;
	if (i < n && (s[i] == '+' || s[i] == '-')) {
		if (!allow_sign)
			return 0;
		i++;
	}
	size_t d1 = digits(s, n, i);
	i += d1;
	size_t d2 = 0;
	if (i < n && s[i] == '.') {
		i++;
		d2 = digits(s, n, i);
		i += d2;
	}
	if (d1 + d2 == 0)
		return 0;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		size_t d3 = digits(s, n, i);
		if (d3 == 0)
			return 0;
		i += d3;
	}
	return i == n;
}

static int to_double(const char *s, size_t n, double *out)
{
	char tmp[128];
	char *p = n < sizeof tmp ? tmp : xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	double v = jp_strtod(p); /* the C locale, whatever the process has */
	if (p != tmp)
		free(p);
	if (isinf(v))
		return NUM_RANGE;
	*out = v;
	return NUM_OK;
}

/* Inf/Infinity with an optional sign, NaN without one, any case. */
static int special_float(const char *s, size_t n, double *out)
{
	size_t i = 0;
	int neg = 0;
	if (n > 0 && (s[0] == '+' || s[0] == '-')) {
		neg = s[0] == '-';
		i = 1;
	}
	if (eq_nocase(s + i, n - i, "inf") || eq_nocase(s + i, n - i, "infinity")) {
		*out = neg ? -INFINITY : INFINITY;
		return 1;
	}
	if (i == 0 && eq_nocase(s, n, "nan")) {
		*out = NAN;
		return 1;
	}
	return 0;
}

/* OpenMetrics number: realnumber, [sign] ("inf" / "infinity"), "nan"; the
 * literals are case-insensitive as everywhere in RFC 5234. */
static int om_number(const char *s, size_t n, double *out)
{
	if (special_float(s, n, out))
		return NUM_OK;
	if (!decimal_ok(s, n, 1))
		return NUM_SYNTAX;
	return to_double(s, n, out);
}

/* Go's underscoreOK for a hex literal without its sign: underscores only
 * between digits or between the 0x prefix and a digit. */
static int go_underscores_ok(const char *s, size_t n)
{
	char saw = '0'; /* the 0x prefix counts as a digit */
	for (size_t i = 2; i < n; i++) {
		int c = (unsigned char)s[i];
		if (is_hex(c)) {
			saw = '0';
		} else if (c == '_') {
			if (saw != '0')
				return 0;
			saw = '_';
		} else {
			if (saw == '_')
				return 0;
			saw = '!';
		}
	}
	return saw != '_';
}

/* A value as Go's strconv.ParseFloat(s, 64) reads it: decimal floats,
 * hexadecimal floats with a mandatory p exponent (underscores allowed after
 * the 0x prefix), and Inf/Infinity/NaN in any case. */
static int go_float(const char *s, size_t n, double *out)
{
	if (special_float(s, n, out))
		return NUM_OK;
	size_t i = (n > 0 && (s[0] == '+' || s[0] == '-')) ? 1 : 0;
	if (n - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
		const char *h = s + i;
		size_t hn = n - i, j = 2, mant = 0;
		if (!go_underscores_ok(h, hn))
			return NUM_SYNTAX;
		while (j < hn && (is_hex((unsigned char)h[j]) || h[j] == '_'))
			mant += h[j++] != '_';
		if (j < hn && h[j] == '.') {
			j++;
			while (j < hn && (is_hex((unsigned char)h[j]) || h[j] == '_'))
				mant += h[j++] != '_';
		}
		if (mant == 0 || j >= hn || (h[j] != 'p' && h[j] != 'P'))
			return NUM_SYNTAX;
		j++;
		if (j < hn && (h[j] == '+' || h[j] == '-'))
			j++;
		size_t ed = 0;
		while (j < hn && (is_digit((unsigned char)h[j]) || h[j] == '_'))
			ed += h[j++] != '_';
		if (ed == 0 || j != hn)
			return NUM_SYNTAX;
		Buf b;
		buf_init(&b);
		for (size_t k = 0; k < n; k++)
			if (s[k] != '_')
				buf_addc(&b, s[k]);
		int rc = to_double(b.p, b.len, out);
		buf_fini(&b);
		return rc;
	}
	if (!decimal_ok(s, n, 1))
		return NUM_SYNTAX;
	return to_double(s, n, out);
}

/* Prometheus timestamp: Go's ParseInt(s, 10, 64) milliseconds -> ns. */
static int prom_timestamp(const char *s, size_t n, int64_t *ns)
{
	size_t i = 0;
	int neg = 0;
	if (n > 0 && (s[0] == '+' || s[0] == '-')) {
		neg = s[0] == '-';
		i = 1;
	}
	if (i == n)
		return NUM_SYNTAX;
	uint64_t v = 0;
	for (; i < n; i++) {
		if (!is_digit((unsigned char)s[i]))
			return NUM_SYNTAX;
		unsigned d = (unsigned)(s[i] - '0');
		if (v > (UINT64_C(9223372036854775808) - d) / 10)
			return NUM_RANGE;
		v = v * 10 + d;
	}
	if (!neg && v > (uint64_t)INT64_MAX)
		return NUM_RANGE;
	int64_t ms = neg ? (int64_t)(0 - v) : (int64_t)v;
	if (ms > INT64_MAX / 1000000 || ms < INT64_MIN / 1000000)
		return NUM_RANGE;
	*ns = ms * 1000000;
	return NUM_OK;
}

/* OpenMetrics timestamp (realnumber seconds) -> ns, exactly for decimal
 * input: the digits are scaled by a power of ten, sub-nanosecond digits are
 * dropped (toward zero). */
static int om_timestamp(const char *s, size_t n, int64_t *ns)
{
	if (!decimal_ok(s, n, 1))
		return NUM_SYNTAX;
	size_t i = 0;
	int neg = 0;
	if (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-';
		i = 1;
	}
	char dig[64];
	size_t nd = 0, frac = 0;
	int sig = 0;      /* seen a non-zero digit */
	long dropped = 0; /* significant digits beyond dig[] (they only add scale) */
	int in_frac = 0;
	for (; i < n && s[i] != 'e' && s[i] != 'E'; i++) {
		if (s[i] == '.') {
			in_frac = 1;
			continue;
		}
		if (in_frac)
			frac++;
		if (!sig && s[i] == '0')
			continue;
		sig = 1;
		if (nd < sizeof dig)
			dig[nd++] = s[i];
		else
			dropped++;
	}
	long e = 0;
	if (i < n) {
		i++;
		int eneg = 0;
		if (s[i] == '+' || s[i] == '-')
			eneg = s[i++] == '-';
		for (; i < n; i++)
			if (e < 100000)
				e = e * 10 + (s[i] - '0');
		if (eneg)
			e = -e;
	}
	if (nd == 0) {
		*ns = 0;
		return NUM_OK;
	}
	/* value = dig * 10^(e - frac + dropped); in ns add 9. */
	long k = e - (long)frac + dropped + 9;
	if (k < 0) {
		if ((size_t)(-k) >= nd) {
			*ns = 0;
			return NUM_OK;
		}
		nd -= (size_t)(-k);
		k = 0;
	}
	uint64_t v = 0;
	for (size_t j = 0; j < nd; j++) {
		unsigned d = (unsigned)(dig[j] - '0');
		if (v > (UINT64_C(9223372036854775808) - d) / 10)
			return NUM_RANGE;
		v = v * 10 + d;
	}
	for (; k > 0; k--) {
		if (v > UINT64_C(9223372036854775808) / 10)
			return NUM_RANGE;
		v *= 10;
	}
	if (!neg && v > (uint64_t)INT64_MAX)
		return NUM_RANGE;
	*ns = neg ? (int64_t)(0 - v) : (int64_t)v;
	return NUM_OK;
}

/* ---- a string -> pointer map ------------------------------------------ */

typedef struct MapEnt {
	char *key;
	void *val;
} MapEnt;

typedef struct Map {
	MapEnt *e;
	size_t cap, n;
} Map;

static MapEnt *map_slot(Map *m, const char *key)
{
	size_t i = (size_t)hash_fnv1a_str(HASH_FNV1A_BASIS, key) & (m->cap - 1);
	while (m->e[i].key && strcmp(m->e[i].key, key) != 0)
		i = (i + 1) & (m->cap - 1);
	return &m->e[i];
}

static void *map_get(Map *m, const char *key)
{
	if (m->n == 0)
		return NULL;
	MapEnt *e = map_slot(m, key);
	return e->key ? e->val : NULL;
}

static void map_put(Map *m, const char *key, void *val)
{
	if ((m->n + 1) * 2 > m->cap) {
		Map g = {xcalloc(m->cap ? m->cap * 2 : 16, sizeof(MapEnt)), m->cap ? m->cap * 2 : 16, 0};
		for (size_t i = 0; i < m->cap; i++)
			if (m->e[i].key) {
				*map_slot(&g, m->e[i].key) = m->e[i];
				g.n++;
			}
		free(m->e);
		*m = g;
	}
	MapEnt *e = map_slot(m, key);
	if (e->key == NULL) {
		e->key = xstrdup(key);
		m->n++;
	}
	e->val = val;
}

static void map_clear(Map *m, void (*free_val)(void *))
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->e[i].key) {
			free(m->e[i].key);
			if (free_val)
				free_val(m->e[i].val);
		}
	free(m->e);
	memset(m, 0, sizeof *m);
}

/* ---- line reading ------------------------------------------------------- */

typedef struct Reader {
	FILE *f;
	unsigned char chunk[1 << 16];
	size_t pos, len;
	int eof;
	Buf line;
	long lineno;
	int nl;          /* the current line ended with '\n' */
	uint64_t done;   /* bytes consumed */
} Reader;

/* ---- the parser state -------------------------------------------------- */

/* One label of the current line; offsets into Parser.dec (decoded text). */
typedef struct Lbl {
	size_t k, kn, v, vn;
	long col;
} Lbl;

typedef struct Ex {
	int has_le;
	double le;
	double value;
	int has_ts;
	int64_t ts_ns;
	char *trace_id, *span_id, *labels;
} Ex;

typedef struct Point {
	long line;
	int has_ts;
	int64_t ts_ns;
	unsigned seen;            /* 1 << role of single-valued roles seen */
	long role_line[R_NROLES], role_col[R_NROLES];
	double value, count, sum;
	int64_t created_ns;
	StoreMetricBucket *b;
	long *b_line;             /* line of each bucket */
	int nb, cb;
	int neg_le;               /* a bucket with a negative bound */
	StoreMetricQuantile *q;
	int nq, cq;
	Ex *ex;
	int nex, cex;
} Point;

typedef struct Series {
	char *key;                /* canonical labels JSON (stored) */
	Point *pt;
	int npt, cpt;
} Series;

typedef struct Family {
	char *name;
	int type;
	int has_type, has_help, has_unit;
	char *help, *unit;
	long line;
	long unit_line;
	int nsamples;
	int claimed;
	int64_t fid;              /* metric_families.id once written, else 0 */
	Series **ser;
	int nser, cser;
	Map ser_map;              /* key -> Series* */
	Map metrics_done;         /* OM: metric keys already closed */
	char *cur_metric;         /* OM: key of the metric being read */
	int cur_has_ts;           /* OM: time of the metric's current point */
	int64_t cur_ts;
	int cur_started;
	long cur_line;
} Family;

typedef struct NameInfo {
	long line;                /* where the name was first used */
	int type;
	int is_family;
} NameInfo;

typedef struct Parser {
	ImportCtx *ctx;
	int dialect;
	int auto_detected;
	Reader rd;
	Family *fam;              /* current family or NULL */
	Family **open;            /* Prom: every family of the file, in order */
	int nopen, copen;
	Map open_map;             /* Prom: family name -> Family* (borrowed from open) */
	Map families;             /* family name -> NameInfo* (both dialects) */
	Map names;                /* Prom: sample names seen; OM: claimed sample names */
	/* the current line, parsed */
	const char *name;
	size_t name_len;
	long name_col;
	int qname_ok;             /* Prom: a quoted metric name may come in the braces */
	int has_qname;            /* ...and did: decoded at dec + qname_off */
	size_t qname_off, qname_len;
	long qname_col;
	Lbl *lbl;
	int nl, cl;
	Lbl *xl;
	int nxl, cxl;
	Buf dec;
	double value;
	long value_col;
	const char *value_tok;    /* the value's text (for exact _created) */
	size_t value_len;
	int has_ts;
	int64_t ts_ns;
	long ts_col;
	int has_ex;
	long ex_col;
	double ex_value;
	int ex_has_ts;
	int64_t ex_ts_ns;
	Buf tmp;
	int seen_eof;
} Parser;

static int perr(Parser *p, long line, long col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int perr(Parser *p, long line, long col, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = err_vat(p->ctx->err, TT_EPARSE, p->ctx->name, line, col, fmt, ap);
	va_end(ap);
	return rc;
}

static long col_of(Parser *p, const char *at)
{
	return (long)(at - p->rd.line.p) + 1;
}

/* Returns 1 and the next line, 0 at the end, or an error. */
static int rd_line(Parser *p)
{
	Reader *r = &p->rd;
	if (r->eof && r->pos == r->len)
		return 0; /* keep the last line and its nl for end-of-input errors */
	buf_reset(&r->line);
	r->nl = 0;
	int any = 0;
	for (;;) {
		if (r->pos == r->len) {
			if (r->eof)
				break;
			r->len = fread(r->chunk, 1, sizeof r->chunk, r->f);
			r->pos = 0;
			if (r->len == 0) {
				if (ferror(r->f))
					return err_at(p->ctx->err, TT_EIO, p->ctx->name, r->lineno + 1, 1,
					              "read error: %s", strerror(errno));
				r->eof = 1;
				break;
			}
			import_progress(p->ctx, r->done + r->len);
		}
		any = 1;
		unsigned char *s = r->chunk + r->pos;
		size_t n = r->len - r->pos;
		unsigned char *e = memchr(s, '\n', n);
		size_t take = e ? (size_t)(e - s) : n;
		if (r->line.len + take > PROM_MAX_LINE)
			return err_at(p->ctx->err, TT_EPARSE, p->ctx->name, r->lineno + 1, 1,
			              "line is longer than %u bytes", PROM_MAX_LINE);
		buf_add(&r->line, s, take);
		r->pos += take + (e != NULL);
		r->done += take + (e != NULL);
		if (e) {
			r->nl = 1;
			break;
		}
	}
	if (!any || (!r->nl && r->line.len == 0)) {
		r->nl = 1; /* the previous line (if any) ended with '\n' */
		return 0;
	}
	if (r->line.p == NULL)
		buf_add(&r->line, "", 0);
	r->lineno++;
	return 1;
}

/* ---- families, series and points --------------------------------------- */

static void point_fini(Point *pt)
{
	free(pt->b);
	free(pt->b_line);
	free(pt->q);
	for (int i = 0; i < pt->nex; i++) {
		free(pt->ex[i].trace_id);
		free(pt->ex[i].span_id);
		free(pt->ex[i].labels);
	}
	free(pt->ex);
}

static void series_free(void *v)
{
	Series *s = v;
	if (s == NULL)
		return;
	for (int i = 0; i < s->npt; i++)
		point_fini(&s->pt[i]);
	free(s->pt);
	free(s->key);
	free(s);
}

static void family_free(Family *f)
{
	if (f == NULL)
		return;
	free(f->ser);
	map_clear(&f->ser_map, series_free);
	map_clear(&f->metrics_done, NULL);
	free(f->cur_metric);
	free(f->name);
	free(f->help);
	free(f->unit);
	free(f);
}

static Family *family_new(const char *name, size_t n, long line)
{
	Family *f = xcalloc(1, sizeof *f);
	f->name = xstrndup(name, n);
	f->line = line;
	f->type = T_UNKNOWN;
	return f;
}

/* OpenMetrics: a family's possible sample names must not clash with any
 * earlier family's ("foo_created" gauge after a "foo" counter). Done once,
 * when the family's type is final. */
static int family_claim(Parser *p, Family *f)
{
	if (f->claimed)
		return 0;
	f->claimed = 1;
	if (p->dialect != D_OM)
		return 0;
	if ((f->type == T_INFO || f->type == T_STATESET) && f->unit && *f->unit)
		return perr(p, f->unit_line, 1, "%s family '%s' must not have a unit",
		            type_names[f->type], f->name);
	Buf *b = &p->tmp;
	for (const Suffix *s = suffixes(D_OM, f->type); s->sfx; s++) {
		buf_reset(b);
		buf_adds(b, f->name);
		buf_adds(b, s->sfx);
		NameInfo *other = map_get(&p->names, b->p);
		if (other)
			return perr(p, f->line, 1,
			            "metric family '%s' (%s) could produce the sample name '%s', which "
			            "belongs to the family declared at line %ld",
			            f->name, type_names[f->type], b->p, other->line);
	}
	for (const Suffix *s = suffixes(D_OM, f->type); s->sfx; s++) {
		buf_reset(b);
		buf_adds(b, f->name);
		buf_adds(b, s->sfx);
		NameInfo *ni = xcalloc(1, sizeof *ni);
		ni->line = f->line;
		ni->type = f->type;
		map_put(&p->names, b->p, ni);
	}
	return 0;
}

static int bucket_is_inf(const StoreMetricBucket *b)
{
	return isinf(b->le) && b->le > 0;
}

/* Checks a point at the end of its family (what needs the whole point). */
static int point_check(Parser *p, Family *f, Point *pt)
{
	int om = p->dialect == D_OM;
	switch (f->type) {
	case T_COUNTER:
		if (om && !(pt->seen & (1u << R_TOTAL)))
			return perr(p, pt->line, 1, "counter '%s' has a point without a '%s_total' sample",
			            f->name, f->name);
		break;
	case T_HISTOGRAM:
	case T_GAUGEHISTOGRAM: {
		const char *cnt = f->type == T_HISTOGRAM ? "_count" : "_gcount";
		const char *sum = f->type == T_HISTOGRAM ? "_sum" : "_gsum";
		if (pt->nb == 0)
			return perr(p, pt->line, 1, "histogram '%s' has a point without buckets", f->name);
		if (!bucket_is_inf(&pt->b[pt->nb - 1]))
			return perr(p, pt->b_line[pt->nb - 1], 1,
			            "histogram '%s' has no bucket with le=\"+Inf\" (it must be the last)",
			            f->name);
		double inf = pt->b[pt->nb - 1].count;
		if ((pt->seen & (1u << R_COUNT)) && pt->count != inf)
			return perr(p, pt->role_line[R_COUNT], pt->role_col[R_COUNT],
			            "%s%s is %.15g but the +Inf bucket counts %.15g", f->name, cnt,
			            pt->count, inf);
		if (om) {
			int has_s = (pt->seen & (1u << R_SUM)) != 0, has_c = (pt->seen & (1u << R_COUNT)) != 0;
			if (has_s && !has_c)
				return perr(p, pt->role_line[R_SUM], 1,
				            "histogram '%s' has %s%s but no %s%s in the same point", f->name,
				            f->name, sum, f->name, cnt);
			if (has_c && !has_s)
				return perr(p, pt->role_line[R_COUNT], 1,
				            "histogram '%s' has %s%s but no %s%s in the same point", f->name,
				            f->name, cnt, f->name, sum);
			if (has_s && pt->neg_le && f->type == T_HISTOGRAM)
				return perr(p, pt->role_line[R_SUM], 1,
				            "histogram '%s' has negative bucket bounds, so it must not have "
				            "a _sum",
				            f->name);
		}
		break;
	}
	default:
		break;
	}
	return 0;
}

/* Validates and writes the series buffered in the current family, then
 * forgets them (the family itself stays open). */
static int family_flush(Parser *p)
{
	Family *f = p->fam;
	int rc = family_claim(p, f);
	if (rc || f->nser == 0)
		return rc;
	ImportCtx *ctx = p->ctx;
	if (f->fid == 0) {
		StoreMetricFamily sf = {
			.name = f->name,
			.type = type_names[f->type],
			.unit = f->unit,
			.help = f->help,
		};
		rc = store_metric_family_intern(ctx->st, &sf, &f->fid, ctx->err);
	}
	StoreMetricExemplar *sx = NULL;
	int sxcap = 0;
	for (int i = 0; rc == 0 && i < f->nser; i++) {
		Series *s = f->ser[i];
		int64_t sid = 0;
		for (int j = 0; rc == 0 && j < s->npt; j++)
			rc = point_check(p, f, &s->pt[j]);
		if (rc == 0)
			rc = store_metric_series_intern(ctx->st, f->fid, s->key, 0, &sid, ctx->err);
		for (int j = 0; rc == 0 && j < s->npt; j++) {
			Point *pt = &s->pt[j];
			StoreMetricPoint mp;
			memset(&mp, 0, sizeof mp);
			mp.series_id = sid;
			mp.ts_explicit = pt->has_ts;
			mp.ts_ns = pt->ts_ns;
			mp.has_start = (pt->seen & (1u << R_CREATED)) != 0;
			mp.start_ns = pt->created_ns;
			mp.has_value = (pt->seen & ((1u << R_VALUE) | (1u << R_TOTAL) | (1u << R_INFO))) != 0;
			mp.value = pt->value;
			mp.has_sum = (pt->seen & (1u << R_SUM)) != 0;
			mp.sum = pt->sum;
			mp.has_count = (pt->seen & (1u << R_COUNT)) != 0;
			mp.count = pt->count;
			if (pt->nb > 0) {
				mp.scheme = "explicit";
				mp.buckets = pt->b;
				mp.n_buckets = pt->nb;
				if (!mp.has_count && bucket_is_inf(&pt->b[pt->nb - 1])) {
					mp.has_count = 1;
					mp.count = pt->b[pt->nb - 1].count;
				}
			}
			mp.quantiles = pt->q;
			mp.n_quantiles = pt->nq;
			if (pt->nex > sxcap) {
				sxcap = pt->nex;
				sx = xrealloc(sx, (size_t)sxcap * sizeof *sx);
			}
			for (int k = 0; k < pt->nex; k++) {
				Ex *e = &pt->ex[k];
				sx[k] = (StoreMetricExemplar){
				    .has_le = e->has_le,
				    .le = e->le,
				    .value = e->value,
				    .has_ts = e->has_ts,
				    .ts_ns = e->ts_ns,
				    .trace_id = e->trace_id,
				    .span_id = e->span_id,
				    .labels_json = e->labels,
				};
			}
			mp.exemplars = sx;
			mp.n_exemplars = pt->nex;
			int added = 0;
			rc = store_metric_point_add(ctx->st, ctx->source_id, &mp, &added, ctx->err);
			if (rc == 0) {
				if (added)
					ctx->counts->metrics_added++;
				else
					ctx->counts->metrics_duplicate++;
			}
		}
	}
	free(sx);
	map_clear(&f->ser_map, series_free);
	f->nser = 0;
	return rc;
}

/* Validates and writes the current family, then forgets it. */
static int family_close(Parser *p)
{
	if (p->fam == NULL)
		return 0;
	int rc = family_flush(p);
	family_free(p->fam);
	p->fam = NULL;
	return rc;
}

static NameInfo *remember_family(Parser *p, const char *name, long line, int type)
{
	NameInfo *ni = xcalloc(1, sizeof *ni);
	ni->line = line;
	ni->type = type;
	ni->is_family = 1;
	map_put(&p->families, name, ni);
	return ni;
}

/* Starts a new family. OpenMetrics closes (writes) the current one;
 * Prometheus keeps every family open until the end of the file, because
 * its samples and metadata may come back later. */
static int family_open(Parser *p, const char *name, size_t n, long line)
{
	if (p->dialect == D_PROM) {
		Family *f = family_new(name, n, line);
		if (p->nopen == p->copen) {
			p->copen = p->copen ? p->copen * 2 : 16;
			p->open = xrealloc(p->open, (size_t)p->copen * sizeof *p->open);
		}
		p->open[p->nopen++] = f;
		map_put(&p->open_map, f->name, f);
		p->fam = f;
		return 0;
	}
	int rc = family_close(p);
	if (rc)
		return rc;
	p->fam = family_new(name, n, line);
	remember_family(p, p->fam->name, line, T_UNKNOWN);
	return 0;
}

/* Prometheus, end of file: writes every family in the order it was first
 * seen (unless write is 0: an error came first), then frees them all. */
static int prom_close_all(Parser *p, int write)
{
	int rc = 0;
	for (int i = 0; i < p->nopen; i++) {
		p->fam = p->open[i];
		if (write && rc == 0)
			rc = family_flush(p);
		family_free(p->open[i]);
	}
	p->fam = NULL;
	p->nopen = 0;
	free(p->open);
	p->open = NULL;
	map_clear(&p->open_map, NULL);
	return rc;
}

/* ---- lexing a line -------------------------------------------------------- */

typedef struct Cur {
	const char *s;   /* position */
	const char *e;   /* end of line */
} Cur;

static void skip_blanks(Cur *c)
{
	while (c->s < c->e && blank((unsigned char)*c->s))
		c->s++;
}

/* Reads a quoted string (c->s at the opening quote) into dec. Escapes
 * \\ \" \n are decoded; any other escaped character is kept with its
 * backslash (OpenMetrics ABNF: BS normal-char; Prometheus's scrape parser
 * keeps it too). */
static int read_quoted(Parser *p, Cur *c, Buf *dec, const char *what)
{
	const char *open = c->s;
	c->s++;
	while (c->s < c->e && *c->s != '"') {
		if (*c->s == '\\') {
			if (c->s + 1 >= c->e)
				break;
			char x = c->s[1];
			if (x == '\\' || x == '"') {
				buf_addc(dec, x);
			} else if (x == 'n') {
				buf_addc(dec, '\n');
			} else {
				/* kept with its backslash: the OpenMetrics ABNF allows it, and
				 * Prometheus's scrape parser reads it that way too */
				buf_addc(dec, '\\');
				buf_addc(dec, x);
			}
			c->s += 2;
			continue;
		}
		buf_addc(dec, *c->s);
		c->s++;
	}
	if (c->s >= c->e)
		return perr(p, p->rd.lineno, col_of(p, open), "%s is not terminated by '\"'", what);
	c->s++; /* closing quote */
	return 0;
}

/* Parses "{...}" (c->s at '{') into *arr. */
static int read_labels(Parser *p, Cur *c, Lbl **arr, int *n, int *cap, int exemplar)
{
	int om = p->dialect == D_OM;
	const char *what = exemplar ? "exemplar label value" : "label value";
	c->s++; /* '{' */
	*n = 0;
	if (!om)
		skip_blanks(c);
	if (c->s < c->e && *c->s == '}') {
		c->s++;
		return 0;
	}
	for (;;) {
		if (c->s >= c->e)
			return perr(p, p->rd.lineno, col_of(p, c->s), "label set is not closed by '}'");
		const char *k = c->s;
		long kcol = col_of(p, k);
		size_t koff = p->dec.len, kn;
		if (*k == '"' && !om && !exemplar) {
			/* Prometheus (UTF-8 names): a quoted label name, or the quoted
			 * metric name when a ',' or '}' follows it */
			int rc = read_quoted(p, c, &p->dec, "quoted name");
			if (rc)
				return rc;
			kn = p->dec.len - koff;
			skip_blanks(c);
			if (c->s < c->e && (*c->s == ',' || *c->s == '}')) {
				if (!p->qname_ok || p->has_qname)
					return perr(p, p->rd.lineno, kcol,
					            p->has_qname || p->name ? "the metric name is already given"
					                                    : "expected a label name");
				if (kn == 0 || memchr(p->dec.p + koff, '\0', kn))
					return perr(p, p->rd.lineno, kcol, "invalid metric name");
				p->has_qname = 1;
				p->qname_off = koff;
				p->qname_len = kn;
				p->qname_col = kcol;
				if (*c->s == '}') {
					c->s++;
					return 0;
				}
				c->s++;
				skip_blanks(c);
				if (c->s < c->e && *c->s == '}') {
					c->s++;
					return 0;
				}
				continue;
			}
			if (kn == 0 || memchr(p->dec.p + koff, '\0', kn))
				return perr(p, p->rd.lineno, kcol, "invalid label name");
		} else {
			if (!label_start((unsigned char)*k))
				return perr(p, p->rd.lineno, kcol, "expected a label name ([a-zA-Z_][a-zA-Z0-9_]*)");
			while (c->s < c->e && label_char((unsigned char)*c->s))
				c->s++;
			kn = (size_t)(c->s - k);
			buf_add(&p->dec, k, kn);
		}
		const char *key = p->dec.p + koff;
		if (!om && kn == 8 && memcmp(key, "__name__", 8) == 0)
			return perr(p, p->rd.lineno, kcol, "label name '__name__' is reserved");
		if (om && key[0] == '_')
			return perr(p, p->rd.lineno, kcol,
			            "label names starting with '_' are reserved in OpenMetrics");
		for (int i = 0; i < *n; i++) {
			Lbl *o = &(*arr)[i];
			if (o->kn == kn && memcmp(p->dec.p + o->k, key, kn) == 0)
				return perr(p, p->rd.lineno, kcol, "duplicate label name '%.*s'",
				            (int)(kn > 60 ? 60 : kn), key);
		}
		if (!om)
			skip_blanks(c);
		if (c->s >= c->e || *c->s != '=')
			return perr(p, p->rd.lineno, col_of(p, c->s), "expected '=' after label name");
		c->s++;
		if (!om)
			skip_blanks(c);
		if (c->s >= c->e || *c->s != '"')
			return perr(p, p->rd.lineno, col_of(p, c->s), "expected '\"' to open the %s", what);
		if (*n == *cap) {
			*cap = *cap ? *cap * 2 : 8;
			*arr = xrealloc(*arr, (size_t)*cap * sizeof **arr);
		}
		Lbl *l = &(*arr)[(*n)++];
		l->col = kcol;
		l->k = koff;
		l->kn = kn;
		l->v = p->dec.len;
		int rc = read_quoted(p, c, &p->dec, what);
		if (rc)
			return rc;
		l->vn = p->dec.len - l->v;
		if (!om)
			skip_blanks(c);
		if (c->s >= c->e)
			return perr(p, p->rd.lineno, col_of(p, c->s), "label set is not closed by '}'");
		if (*c->s == '}') {
			c->s++;
			return 0;
		}
		if (*c->s != ',')
			return perr(p, p->rd.lineno, col_of(p, c->s), "expected ',' or '}' after a label");
		c->s++;
		if (!om) {
			skip_blanks(c);
			if (c->s < c->e && *c->s == '}') { /* trailing comma */
				c->s++;
				return 0;
			}
		}
	}
}

/* Token up to the next blank (Prometheus) or space (OpenMetrics). */
static void token(Cur *c, const char **t, size_t *n)
{
	*t = c->s;
	while (c->s < c->e && !blank((unsigned char)*c->s))
		c->s++;
	*n = (size_t)(c->s - *t);
}

static int num_error(Parser *p, const char *t, size_t n, int rc, const char *what)
{
	if (rc == NUM_RANGE)
		return perr(p, p->rd.lineno, col_of(p, t), "%s '%.*s' is out of range", what,
		            (int)(n > 40 ? 40 : n), t);
	if (n == 0)
		return perr(p, p->rd.lineno, col_of(p, t), "expected a %s", what);
	return perr(p, p->rd.lineno, col_of(p, t), "invalid %s '%.*s'", what, (int)(n > 40 ? 40 : n),
	            t);
}

/* Parses a sample line into p->name, p->lbl, p->value, ... */
static int parse_sample(Parser *p)
{
	int om = p->dialect == D_OM;
	Cur c = {p->rd.line.p, p->rd.line.p + p->rd.line.len};
	buf_reset(&p->dec);
	p->nl = p->nxl = 0;
	p->has_ts = p->has_ex = p->ex_has_ts = 0;
	p->name = NULL;
	p->qname_ok = p->has_qname = 0;
	if (!om)
		skip_blanks(&c);
	const char *after = NULL;
	int braces = 0;
	if (c.s < c.e && *c.s == '{') {
		if (om)
			return perr(p, p->rd.lineno, col_of(p, c.s), "a sample must start with its metric name");
		/* Prometheus (UTF-8 names, as its scrape parser and prometheus/common
		 * read them): {"metric.name", label="v"} */
		const char *open = c.s;
		p->qname_ok = 1;
		int rc = read_labels(p, &c, &p->lbl, &p->nl, &p->cl, 0);
		p->qname_ok = 0;
		if (rc)
			return rc;
		if (!p->has_qname)
			return perr(p, p->rd.lineno, col_of(p, open),
			            "no metric name: give it before the braces or quoted inside them");
		p->name = p->dec.p + p->qname_off; /* dec is complete: labels are read */
		p->name_len = p->qname_len;
		p->name_col = p->qname_col;
		braces = 1;
		goto value;
	}
	if (c.s >= c.e || !name_start((unsigned char)*c.s))
		return perr(p, p->rd.lineno, col_of(p, c.s),
		            "expected a metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)");
	p->name = c.s;
	while (c.s < c.e && name_char((unsigned char)*c.s))
		c.s++;
	p->name_len = (size_t)(c.s - p->name);
	p->name_col = col_of(p, p->name);
	after = c.s;
	if (!om)
		skip_blanks(&c);
	if (c.s < c.e && *c.s == '{') {
		int rc = read_labels(p, &c, &p->lbl, &p->nl, &p->cl, 0);
		if (rc)
			return rc;
		braces = 1;
	} else if (c.s == after && c.s < c.e && !blank((unsigned char)*c.s)) {
		return perr(p, p->rd.lineno, col_of(p, c.s), "invalid character in metric name");
	}
value:
	if (om) {
		if (c.s >= c.e || *c.s != ' ')
			return perr(p, p->rd.lineno, col_of(p, c.s), "expected a single space and the value");
		c.s++;
	} else if (braces) {
		skip_blanks(&c); /* Prometheus also reads 'x{a="b"}1' */
	} else if (c.s == after) {
		if (c.s >= c.e || !blank((unsigned char)*c.s))
			return perr(p, p->rd.lineno, col_of(p, c.s), "expected a blank and the value");
		skip_blanks(&c);
	}
	const char *t;
	size_t tn;
	token(&c, &t, &tn);
	p->value_col = col_of(p, t);
	p->value_tok = t;
	p->value_len = tn;
	int rc = om ? om_number(t, tn, &p->value) : go_float(t, tn, &p->value);
	if (rc)
		return num_error(p, t, tn, rc, "value");
	/* [timestamp] [exemplar] */
	if (!om) {
		skip_blanks(&c);
		if (c.s >= c.e)
			return 0;
		token(&c, &t, &tn);
		if (t[0] == '#')
			return perr(p, p->rd.lineno, col_of(p, t),
			            "exemplars are not part of the Prometheus 0.0.4 text format (use "
			            "--format openmetrics)");
		p->ts_col = col_of(p, t);
		rc = prom_timestamp(t, tn, &p->ts_ns);
		if (rc)
			return num_error(p, t, tn, rc, "timestamp (integer milliseconds)");
		p->has_ts = 1;
		skip_blanks(&c);
		if (c.s < c.e)
			return perr(p, p->rd.lineno, col_of(p, c.s), "unexpected text after the timestamp");
		return 0;
	}
	if (c.s == c.e)
		return 0;
	if (*c.s != ' ' || c.s + 1 == c.e)
		return perr(p, p->rd.lineno, col_of(p, c.s), "unexpected text after the value");
	c.s++;
	if (*c.s != '#') {
		token(&c, &t, &tn);
		p->ts_col = col_of(p, t);
		rc = om_timestamp(t, tn, &p->ts_ns);
		if (rc)
			return num_error(p, t, tn, rc, "timestamp (seconds)");
		p->has_ts = 1;
		if (c.s == c.e)
			return 0;
		if (*c.s != ' ' || c.s + 1 == c.e || c.s[1] != '#')
			return perr(p, p->rd.lineno, col_of(p, c.s), "unexpected text after the timestamp");
		c.s++;
	}
	/* exemplar = SP HASH SP labels SP number [SP timestamp] */
	p->ex_col = col_of(p, c.s);
	c.s++;
	if (c.s >= c.e || *c.s != ' ' || c.s + 1 >= c.e || c.s[1] != '{')
		return perr(p, p->rd.lineno, p->ex_col, "an exemplar is '# {labels} value [timestamp]'");
	c.s++;
	const char *lb = c.s;
	rc = read_labels(p, &c, &p->xl, &p->nxl, &p->cxl, 1);
	if (rc)
		return rc;
	size_t runes = 0;
	for (int i = 0; i < p->nxl; i++)
		runes += utf8_runes(p->dec.p + p->xl[i].k, p->xl[i].kn) +
		         utf8_runes(p->dec.p + p->xl[i].v, p->xl[i].vn);
	if (runes > EXEMPLAR_MAX_RUNES)
		return perr(p, p->rd.lineno, col_of(p, lb),
		            "exemplar labels are %zu characters long; the limit is %d", runes,
		            EXEMPLAR_MAX_RUNES);
	if (c.s >= c.e || *c.s != ' ')
		return perr(p, p->rd.lineno, col_of(p, c.s), "expected a space and the exemplar value");
	c.s++;
	token(&c, &t, &tn);
	rc = om_number(t, tn, &p->ex_value);
	if (rc)
		return num_error(p, t, tn, rc, "exemplar value");
	p->has_ex = 1;
	if (c.s == c.e)
		return 0;
	if (*c.s != ' ' || c.s + 1 == c.e)
		return perr(p, p->rd.lineno, col_of(p, c.s), "unexpected text after the exemplar value");
	c.s++;
	token(&c, &t, &tn);
	rc = om_timestamp(t, tn, &p->ex_ts_ns);
	if (rc)
		return num_error(p, t, tn, rc, "exemplar timestamp (seconds)");
	p->ex_has_ts = 1;
	if (c.s != c.e)
		return perr(p, p->rd.lineno, col_of(p, c.s), "unexpected text after the exemplar");
	return 0;
}

/* ---- samples into families ----------------------------------------------- */

static Lbl *find_label(Parser *p, const char *key)
{
	size_t kn = strlen(key);
	for (int i = 0; i < p->nl; i++)
		if (p->lbl[i].kn == kn && memcmp(p->dec.p + p->lbl[i].k, key, kn) == 0)
			return &p->lbl[i];
	return NULL;
}

/* Canonical JSON of the line's labels without `skip` (NULL: keep all). */
static char *labels_key(Parser *p, const Lbl *skip)
{
	StoreLabel *sl = xmalloc((size_t)(p->nl ? p->nl : 1) * sizeof *sl);
	size_t n = 0;
	for (int i = 0; i < p->nl; i++) {
		if (&p->lbl[i] == skip)
			continue;
		sl[n++] = (StoreLabel){p->dec.p + p->lbl[i].k, p->lbl[i].kn, p->dec.p + p->lbl[i].v,
		                       p->lbl[i].vn};
	}
	char *j = store_labels_json(sl, n);
	free(sl);
	return j;
}

/* The role of sample name (n bytes) in family f, or -1. */
static int role_in(Parser *p, Family *f, const char *name, size_t n)
{
	size_t fn = strlen(f->name);
	if (n < fn || memcmp(name, f->name, fn) != 0)
		return -1;
	for (const Suffix *s = suffixes(p->dialect, f->type); s->sfx; s++)
		if (n - fn == strlen(s->sfx) && memcmp(name + fn, s->sfx, n - fn) == 0)
			return s->role;
	return -1;
}

static const char *expected_names(Parser *p, Family *f)
{
	Buf *b = &p->tmp;
	buf_reset(b);
	for (const Suffix *s = suffixes(p->dialect, f->type); s->sfx; s++) {
		if (b->len)
			buf_adds(b, s[1].sfx ? ", " : " or ");
		buf_adds(b, f->name);
		buf_adds(b, s->sfx);
	}
	return buf_str(b);
}

/* Prometheus: the family seen earlier that a sample name belongs to, if
 * any: the family of that exact name, else the histogram or summary whose
 * name plus a suffix of its type it is. */
static Family *prom_owner(Parser *p, const char *name)
{
	Family *f = map_get(&p->open_map, name);
	if (f)
		return f;
	static const char *const sfx[] = {"_bucket", "_sum", "_count"};
	size_t n = strlen(name);
	for (int i = 0; i < 3; i++) {
		size_t m = strlen(sfx[i]);
		if (n > m && memcmp(name + n - m, sfx[i], m) == 0) {
			char *base = xstrndup(name, n - m);
			f = map_get(&p->open_map, base);
			free(base);
			/* _bucket belongs to histograms, _sum/_count to both */
			if (f && (f->type == T_HISTOGRAM || (f->type == T_SUMMARY && i > 0)))
				return f;
		}
	}
	return NULL;
}

static Point *point_new(Series *s, long line, int has_ts, int64_t ts)
{
	if (s->npt == s->cpt) {
		s->cpt = s->cpt ? s->cpt * 2 : 1;
		s->pt = xrealloc(s->pt, (size_t)s->cpt * sizeof *s->pt);
	}
	Point *pt = &s->pt[s->npt++];
	memset(pt, 0, sizeof *pt);
	pt->line = line;
	pt->has_ts = has_ts;
	pt->ts_ns = ts;
	return pt;
}

static Series *series_get(Family *f, char *key_owned)
{
	Series *s = map_get(&f->ser_map, key_owned);
	if (s) {
		free(key_owned);
		return s;
	}
	s = xcalloc(1, sizeof *s);
	s->key = key_owned;
	map_put(&f->ser_map, key_owned, s);
	if (f->nser == f->cser) {
		f->cser = f->cser ? f->cser * 2 : 8;
		f->ser = xrealloc(f->ser, (size_t)f->cser * sizeof *f->ser);
	}
	f->ser[f->nser++] = s;
	return s;
}

static int is_integer(double v)
{
	return isfinite(v) && floor(v) == v;
}

static char *id_label(Parser *p, const char *key, size_t hexlen)
{
	for (int i = 0; i < p->nxl; i++) {
		Lbl *l = &p->xl[i];
		if (l->kn != strlen(key) || memcmp(p->dec.p + l->k, key, l->kn) != 0)
			continue;
		const char *v = p->dec.p + l->v;
		char *out = xstrndup(v, l->vn);
		if (l->vn == hexlen) {
			size_t j = 0;
			while (j < hexlen && is_hex((unsigned char)v[j]))
				j++;
			if (j == hexlen)
				for (j = 0; j < hexlen; j++)
					out[j] = (char)lower((unsigned char)out[j]);
		}
		if (memchr(out, '\0', l->vn)) { /* NUL inside: not an id we can match */
			free(out);
			return xstrdup("");
		}
		return out;
	}
	return xstrdup("");
}

/* Handles one parsed sample line. */
static int take_sample(Parser *p)
{
	int om = p->dialect == D_OM;
	long ln = p->rd.lineno;
	char *name = xstrndup(p->name, p->name_len);
	int rc = 0;
	Family *f = p->fam;
	int role = f ? role_in(p, f, name, p->name_len) : -1;
	if (role < 0) {
		if (om) {
			if (f && strcmp(f->name, name) == 0) {
				rc = perr(p, ln, p->name_col,
				          "'%s' is not a sample name of %s family '%s' (expected %s)", name,
				          type_names[f->type], f->name, expected_names(p, f));
				goto out;
			}
			NameInfo *ni = map_get(&p->families, name);
			if (ni) {
				rc = perr(p, ln, p->name_col,
				          "metric family '%s' continues after another family began (first "
				          "at line %ld); families must not be interleaved",
				          name, ni->line);
				goto out;
			}
			if (name[0] == '_') {
				rc = perr(p, ln, p->name_col,
				          "metric names starting with '_' are reserved in OpenMetrics");
				goto out;
			}
		} else {
			/* A family seen earlier in the file takes its samples back,
			 * wherever they are (Prometheus's scrape parser and
			 * prometheus/common's text parser both accept this). */
			Family *o = prom_owner(p, name);
			if (o) {
				p->fam = f = o;
				role = role_in(p, f, name, p->name_len);
				if (role < 0) {
					rc = perr(p, ln, p->name_col,
					          "'%s' is not a sample name of %s family '%s' (expected %s)", name,
					          type_names[f->type], f->name, expected_names(p, f));
					goto out;
				}
			}
		}
		if (role < 0) {
			if ((rc = family_open(p, name, p->name_len, ln)) != 0)
				goto out;
			f = p->fam;
			role = R_VALUE;
		}
	}
	if ((rc = family_claim(p, f)) != 0)
		goto out;
	f->nsamples++;
	if (!om && !map_get(&p->names, name)) {
		NameInfo *ni = xcalloc(1, sizeof *ni);
		ni->line = ln;
		map_put(&p->names, name, ni);
	}

	/* Role-specific labels and values. */
	Lbl *le = find_label(p, "le"), *ql = find_label(p, "quantile");
	Lbl *skip = NULL;
	double le_v = 0, q_v = 0;
	int hist = f->type == T_HISTOGRAM || f->type == T_GAUGEHISTOGRAM;
	if (hist) {
		if (role == R_BUCKET) {
			if (le == NULL) {
				rc = perr(p, ln, p->name_col, "histogram bucket '%s' has no 'le' label", name);
				goto out;
			}
			const char *v = p->dec.p + le->v;
			int nrc = om ? om_number(v, le->vn, &le_v) : go_float(v, le->vn, &le_v);
			if (nrc || isnan(le_v)) {
				rc = perr(p, ln, le->col, "'le' must be a number, not \"%.*s\"",
				          (int)(le->vn > 40 ? 40 : le->vn), v);
				goto out;
			}
			skip = le;
		} else if (le) {
			rc = perr(p, ln, le->col, "only _bucket samples of histogram '%s' may have 'le'",
			          f->name);
			goto out;
		}
	}
	if (f->type == T_SUMMARY) {
		if (role == R_QUANTILE) {
			if (ql == NULL) {
				rc = perr(p, ln, p->name_col,
				          "summary sample '%s' needs a 'quantile' label (or use %s_sum / "
				          "%s_count)",
				          name, f->name, f->name);
				goto out;
			}
			const char *v = p->dec.p + ql->v;
			int nrc = om ? om_number(v, ql->vn, &q_v) : go_float(v, ql->vn, &q_v);
			if (nrc || isnan(q_v) || (om && (q_v < 0 || q_v > 1))) {
				rc = perr(p, ln, ql->col,
				          om ? "'quantile' must be a number between 0 and 1, not \"%.*s\""
				             : "'quantile' must be a number, not \"%.*s\"",
				          (int)(ql->vn > 40 ? 40 : ql->vn), v);
				goto out;
			}
			skip = ql;
		} else if (ql) {
			rc = perr(p, ln, ql->col, "only quantile samples of summary '%s' may have 'quantile'",
			          f->name);
			goto out;
		}
	}
	Lbl *state = NULL;
	if (f->type == T_STATESET) {
		state = find_label(p, f->name);
		if (state == NULL) {
			rc = perr(p, ln, p->name_col, "stateset sample needs a label named '%s' (the state)",
			          f->name);
			goto out;
		}
	}
	if (p->has_ex) {
		int ok = om && ((f->type == T_COUNTER && role == R_TOTAL) || (hist && role == R_BUCKET));
		if (!ok) {
			rc = perr(p, ln, p->ex_col,
			          "exemplars are only allowed on counter _total and histogram _bucket "
			          "samples, not on %s sample '%s'",
			          type_names[f->type], name);
			goto out;
		}
	}

	/* Value rules. */
	double v = p->value;
	const char *vproblem = NULL;
	if (om) {
		switch (role) {
		case R_TOTAL:
			if (isnan(v) || v < 0)
				vproblem = "a counter total must not be negative or NaN";
			break;
		case R_CREATED:
			if (!isfinite(v))
				vproblem = "_created must be a finite timestamp in seconds";
			break;
		case R_BUCKET:
		case R_COUNT:
			if (!is_integer(v) || v < 0)
				vproblem = "bucket and count values must be non-negative integers";
			break;
		case R_SUM:
			if (isnan(v) || (f->type != T_GAUGEHISTOGRAM && v < 0))
				vproblem = f->type == T_GAUGEHISTOGRAM ? "a gauge histogram's _gsum must not be NaN"
				                                       : "_sum must not be negative or NaN";
			break;
		case R_INFO:
			if (v != 1)
				vproblem = "an info sample's value must be 1";
			break;
		case R_QUANTILE:
			if (v < 0)
				vproblem = "quantile values must not be negative";
			break;
		case R_VALUE:
			if (f->type == T_STATESET && v != 0 && v != 1)
				vproblem = "a state's value must be 0 or 1";
			break;
		}
	} else if (role == R_BUCKET && (isnan(v) || v < 0)) {
		vproblem = "a bucket count must be a non-negative number";
	} else if (role == R_CREATED && !isfinite(v)) {
		vproblem = "_created must be a finite timestamp";
	}
	if (vproblem) {
		rc = perr(p, ln, p->value_col, "%s", vproblem);
		goto out;
	}
	int64_t created_ns = 0;
	if (role == R_CREATED && om_timestamp(p->value_tok, p->value_len, &created_ns) != NUM_OK) {
		rc = perr(p, ln, p->value_col, "_created is not a timestamp in range");
		goto out;
	}

	/* Which series and point. */
	char *key = labels_key(p, skip);
	if (key == NULL) { /* cannot happen: duplicates were rejected */
		rc = perr(p, ln, p->name_col, "duplicate label names");
		goto out;
	}
	Series *s;
	Point *pt;
	if (om) {
		/* OpenMetrics: metrics (label sets) and their points are contiguous. */
		char *mkey = state ? labels_key(p, state) : xstrdup(key);
		if (f->cur_metric == NULL || strcmp(f->cur_metric, mkey) != 0) {
			if (map_get(&f->metrics_done, mkey)) {
				rc = perr(p, ln, p->name_col,
				          "metric %s%s of family '%s' continues after another metric began; "
				          "metrics must not be interleaved",
				          f->name, mkey, f->name);
				free(mkey);
				free(key);
				goto out;
			}
			if (f->cur_metric) {
				map_put(&f->metrics_done, f->cur_metric, (void *)1);
				free(f->cur_metric);
				f->cur_metric = NULL;
				/* metrics never come back: write the finished one now */
				if ((rc = family_flush(p)) != 0) {
					free(mkey);
					free(key);
					goto out;
				}
			}
			f->cur_metric = mkey;
			f->cur_started = 0;
		} else {
			free(mkey);
		}
		if (f->cur_started) {
			int same = f->cur_has_ts == p->has_ts && (!p->has_ts || f->cur_ts == p->ts_ns);
			if (!same) {
				if (f->cur_has_ts != p->has_ts) {
					rc = perr(p, ln, p->has_ts ? p->ts_col : p->value_col,
					          "samples with and without timestamps in one metric");
					free(key);
					goto out;
				}
				if (p->ts_ns < f->cur_ts) {
					rc = perr(p, ln, p->ts_col,
					          "timestamps of a metric's points must increase (this one goes "
					          "back in time)");
					free(key);
					goto out;
				}
			}
		}
		f->cur_started = 1;
		f->cur_has_ts = p->has_ts;
		f->cur_ts = p->ts_ns;
		s = series_get(f, key);
		pt = s->npt ? &s->pt[s->npt - 1] : NULL;
		if (pt == NULL || pt->has_ts != p->has_ts || pt->ts_ns != p->ts_ns)
			pt = point_new(s, ln, p->has_ts, p->ts_ns);
	} else {
		/* Prometheus: one point per series; the latest timestamp wins. */
		s = series_get(f, key);
		pt = s->npt ? &s->pt[0] : point_new(s, ln, 0, 0);
		if (p->has_ts && (!pt->has_ts || p->ts_ns > pt->ts_ns)) {
			pt->has_ts = 1;
			pt->ts_ns = p->ts_ns;
		}
	}

	/* Into the point. */
	switch (role) {
	case R_BUCKET: {
		if (pt->nb > 0) {
			StoreMetricBucket *last = &pt->b[pt->nb - 1];
			if (le_v == last->le) {
				rc = perr(p, ln, le->col, "duplicate bucket le=\"%.*s\"", (int)le->vn,
				          p->dec.p + le->v);
				goto out;
			}
			if (le_v < last->le) {
				rc = perr(p, ln, le->col,
				          "buckets must be in increasing order of le (%.15g comes after %.15g)",
				          le_v, last->le);
				goto out;
			}
			if (v < last->count) {
				rc = perr(p, ln, p->value_col,
				          "buckets are cumulative: le=%.15g counts %.15g, less than %.15g "
				          "for le=%.15g",
				          le_v, v, last->count, last->le);
				goto out;
			}
		}
		if (pt->nb == pt->cb) {
			pt->cb = pt->cb ? pt->cb * 2 : 16;
			pt->b = xrealloc(pt->b, (size_t)pt->cb * sizeof *pt->b);
			pt->b_line = xrealloc(pt->b_line, (size_t)pt->cb * sizeof *pt->b_line);
		}
		if (le_v < 0)
			pt->neg_le = 1;
		if (p->has_ex) {
			double lo = pt->nb ? pt->b[pt->nb - 1].le : -INFINITY;
			if (!(p->ex_value <= le_v && p->ex_value > lo)) {
				rc = perr(p, ln, p->ex_col,
				          "exemplar value %.15g is outside its bucket (%.15g, %.15g]", p->ex_value,
				          lo, le_v);
				goto out;
			}
		}
		pt->b[pt->nb] = (StoreMetricBucket){le_v, v};
		pt->b_line[pt->nb] = ln;
		pt->nb++;
		break;
	}
	case R_QUANTILE:
		for (int i = 0; i < pt->nq; i++) {
			if (pt->q[i].q == q_v) {
				rc = perr(p, ln, ql->col, "duplicate quantile %.15g", q_v);
				goto out;
			}
		}
		if (pt->nq == pt->cq) {
			pt->cq = pt->cq ? pt->cq * 2 : 8;
			pt->q = xrealloc(pt->q, (size_t)pt->cq * sizeof *pt->q);
		}
		{
			/* Prometheus lets a summary's quantiles come in any order (its
			 * parsers keep each as its own series or list entry); they are
			 * stored in increasing order. */
			int at = pt->nq;
			while (!om && at > 0 && pt->q[at - 1].q > q_v) {
				pt->q[at] = pt->q[at - 1];
				at--;
			}
			pt->q[at] = (StoreMetricQuantile){q_v, v};
			pt->nq++;
		}
		break;
	default:
		if (pt->seen & (1u << role)) {
			rc = perr(p, ln, p->name_col,
			          om ? "duplicate sample: '%s' with these labels already has a value in "
			               "this point (line %ld)"
			             : "duplicate sample: '%s' with these labels was already given (line "
			               "%ld)",
			          name, pt->role_line[role]);
			goto out;
		}
		pt->seen |= 1u << role;
		pt->role_line[role] = ln;
		pt->role_col[role] = p->value_col;
		if (role == R_COUNT)
			pt->count = v;
		else if (role == R_SUM)
			pt->sum = v;
		else if (role == R_CREATED)
			pt->created_ns = created_ns;
		else
			pt->value = v;
		break;
	}
	if (pt->line > ln || pt->line == 0)
		pt->line = ln;

	if (p->has_ex) {
		StoreLabel *sl = xmalloc((size_t)(p->nxl ? p->nxl : 1) * sizeof *sl);
		for (int i = 0; i < p->nxl; i++)
			sl[i] = (StoreLabel){p->dec.p + p->xl[i].k, p->xl[i].kn, p->dec.p + p->xl[i].v,
			                     p->xl[i].vn};
		char *lj = store_labels_json(sl, (size_t)p->nxl);
		free(sl);
		if (pt->nex == pt->cex) {
			pt->cex = pt->cex ? pt->cex * 2 : 4;
			pt->ex = xrealloc(pt->ex, (size_t)pt->cex * sizeof *pt->ex);
		}
		pt->ex[pt->nex++] = (Ex){
		    .has_le = role == R_BUCKET,
		    .le = le_v,
		    .value = p->ex_value,
		    .has_ts = p->ex_has_ts,
		    .ts_ns = p->ex_ts_ns,
		    .trace_id = id_label(p, "trace_id", 32),
		    .span_id = id_label(p, "span_id", 16),
		    .labels = lj ? lj : xstrdup("{}"),
		};
	}
out:
	free(name);
	return rc;
}

/* ---- descriptor lines ---------------------------------------------------- */

static int type_from(int dialect, const char *t, size_t n)
{
	static const char *const om[] = {"unknown", "counter", "gauge", "histogram", "gaugehistogram",
	                                  "summary", "info", "stateset"};
	if (dialect == D_PROM) {
		/* any letter case, as prometheus/common's text parser allows */
		if (eq_nocase(t, n, "untyped"))
			return T_UNKNOWN;
		for (int i = 1; i <= T_SUMMARY; i++)
			if (i != T_GAUGEHISTOGRAM && eq_nocase(t, n, om[i]))
				return i;
		return -1;
	}
	for (int i = 0; i < 8; i++)
		if (strlen(om[i]) == n && memcmp(om[i], t, n) == 0)
			return i;
	return -1;
}

enum { DESC_TYPE, DESC_HELP, DESC_UNIT };
static const char *const desc_names[] = {"TYPE", "HELP", "UNIT"};

/* The family a descriptor for name applies to: the current one when it has
 * no samples yet, else a new one. */
static int desc_family(Parser *p, const char *name, size_t n, int kind, long name_col)
{
	long ln = p->rd.lineno;
	Family *f = p->fam;
	if (p->dialect == D_PROM) {
		/* Prometheus: metadata may come after the samples and may repeat;
		 * it applies to the family of that name wherever it is. */
		char *nm = xstrndup(name, n);
		f = map_get(&p->open_map, nm);
		free(nm);
		if (f) {
			p->fam = f;
			return 0;
		}
		return family_open(p, name, n, ln);
	}
	if (f && strlen(f->name) == n && memcmp(f->name, name, n) == 0) {
		if (f->nsamples > 0)
			return perr(p, ln, name_col,
			            "# %s for '%s' comes after its samples; metadata must come first",
			            desc_names[kind], f->name);
		int has = kind == DESC_TYPE ? f->has_type : kind == DESC_HELP ? f->has_help : f->has_unit;
		if (has)
			return perr(p, ln, name_col, "second # %s line for '%s'", desc_names[kind], f->name);
		return 0;
	}
	char *nm = xstrndup(name, n);
	int rc = 0;
	NameInfo *ni = map_get(&p->families, nm);
	if (p->dialect == D_OM) {
		if (ni)
			rc = perr(p, ln, name_col,
			          "metric family '%s' was already seen at line %ld; families must not be "
			          "interleaved or repeated",
			          nm, ni->line);
		else if (nm[0] == '_')
			rc = perr(p, ln, name_col,
			          "metric names starting with '_' are reserved in OpenMetrics");
	}
	if (rc == 0)
		rc = family_open(p, name, n, ln);
	free(nm);
	return rc;
}

/* Decodes OpenMetrics escaped-string text (HELP) from c to the end of the
 * line into out. */
static int om_escaped(Parser *p, Cur *c, Buf *out)
{
	while (c->s < c->e) {
		char ch = *c->s;
		if (ch == '"')
			return perr(p, p->rd.lineno, col_of(p, c->s),
			            "a double quote in HELP text must be escaped as \\\" in OpenMetrics");
		if (ch == '\\') {
			if (c->s + 1 >= c->e)
				return perr(p, p->rd.lineno, col_of(p, c->s), "HELP text ends with a lone '\\'");
			char x = c->s[1];
			if (x == 'n')
				buf_addc(out, '\n');
			else if (x == '\\' || x == '"')
				buf_addc(out, x);
			else {
				buf_addc(out, '\\');
				buf_addc(out, x);
			}
			c->s += 2;
			continue;
		}
		buf_addc(out, ch);
		c->s++;
	}
	return 0;
}

/* Stored help text: NUL bytes (legal in OpenMetrics strings) become U+FFFD
 * since the store keeps C strings. */
static char *help_text(const Buf *b)
{
	Buf o;
	buf_init(&o);
	for (size_t i = 0; i < b->len; i++) {
		if (b->p[i] == '\0')
			buf_adds(&o, "\xEF\xBF\xBD");
		else
			buf_addc(&o, b->p[i]);
	}
	return o.p ? o.p : xstrdup("");
}

static int set_type(Parser *p, int type)
{
	p->fam->type = type;
	p->fam->has_type = 1;
	NameInfo *ni = map_get(&p->families, p->fam->name);
	if (ni)
		ni->type = type;
	return 0;
}

/* "# TYPE|HELP|UNIT ..." and "# EOF" in OpenMetrics. */
static int om_descriptor(Parser *p)
{
	const char *l = p->rd.line.p;
	size_t n = p->rd.line.len;
	long ln = p->rd.lineno;
	if (n == 5 && memcmp(l, "# EOF", 5) == 0) {
		p->seen_eof = 1;
		return 0;
	}
	int kind = -1;
	if (n >= 7 && memcmp(l, "# TYPE ", 7) == 0)
		kind = DESC_TYPE;
	else if (n >= 7 && memcmp(l, "# HELP ", 7) == 0)
		kind = DESC_HELP;
	else if (n >= 7 && memcmp(l, "# UNIT ", 7) == 0)
		kind = DESC_UNIT;
	if (kind < 0)
		return perr(p, ln, 1,
		            "in OpenMetrics a line starting with '#' must be '# TYPE', '# HELP', "
		            "'# UNIT' or '# EOF'");
	Cur c = {l + 7, l + n};
	const char *name = c.s;
	if (c.s >= c.e || !name_start((unsigned char)*c.s))
		return perr(p, ln, 8, "expected a metric name after '# %s '", desc_names[kind]);
	while (c.s < c.e && name_char((unsigned char)*c.s))
		c.s++;
	size_t nn = (size_t)(c.s - name);
	if (c.s >= c.e || *c.s != ' ')
		return perr(p, ln, col_of(p, c.s),
		            c.s >= c.e ? "expected a space after the metric name"
		                       : "invalid character in metric name");
	c.s++;
	int rc = desc_family(p, name, nn, kind, 8);
	if (rc)
		return rc;
	Family *f = p->fam;
	switch (kind) {
	case DESC_TYPE: {
		int t = type_from(D_OM, c.s, (size_t)(c.e - c.s));
		if (t < 0)
			return perr(p, ln, col_of(p, c.s),
			            "unknown type '%.*s' (counter, gauge, histogram, gaugehistogram, "
			            "stateset, info, summary or unknown)",
			            (int)((c.e - c.s) > 40 ? 40 : (c.e - c.s)), c.s);
		return set_type(p, t);
	}
	case DESC_HELP: {
		buf_reset(&p->dec);
		if ((rc = om_escaped(p, &c, &p->dec)) != 0)
			return rc;
		f->has_help = 1;
		free(f->help);
		f->help = help_text(&p->dec);
		return 0;
	}
	default: {
		const char *u = c.s;
		while (c.s < c.e && name_char((unsigned char)*c.s))
			c.s++;
		if (c.s != c.e)
			return perr(p, ln, col_of(p, c.s), "invalid character in unit");
		size_t un = (size_t)(c.s - u);
		f->has_unit = 1;
		f->unit_line = ln;
		if (un > 0) {
			size_t fn = strlen(f->name);
			if (!(fn > un + 1 && f->name[fn - un - 1] == '_' &&
			      memcmp(f->name + fn - un, u, un) == 0))
				return perr(p, ln, col_of(p, u),
				            "unit '%.*s' must be the suffix of the family name ('%s' should end "
				            "with '_%.*s')",
				            (int)un, u, f->name, (int)un, u);
			free(f->unit);
			f->unit = xstrndup(u, un);
		}
		return 0;
	}
	}
}

/* Reads a whole token as a metric name; returns its length or 0. */
static size_t metric_name_token(Cur *c, const char **t)
{
	size_t n;
	token(c, t, &n);
	if (n == 0 || !name_start((unsigned char)(*t)[0]))
		return 0;
	for (size_t i = 1; i < n; i++)
		if (!name_char((unsigned char)(*t)[i]))
			return 0;
	return n;
}

/* Counter, gauge and untyped samples are read alike (one value per
 * series), so a late TYPE line may switch between them. */
static int simple_type(int type)
{
	return type == T_UNKNOWN || type == T_COUNTER || type == T_GAUGE;
}

/* A Prometheus comment line: HELP, TYPE or ignored. */
static int prom_comment(Parser *p, Cur *c)
{
	long ln = p->rd.lineno;
	c->s++; /* '#' */
	skip_blanks(c);
	const char *t;
	size_t tn;
	token(c, &t, &tn);
	int kind = -1;
	if (tn == 4 && memcmp(t, "HELP", 4) == 0)
		kind = DESC_HELP;
	else if (tn == 4 && memcmp(t, "TYPE", 4) == 0)
		kind = DESC_TYPE;
	if (kind < 0) {
		if (p->auto_detected && ((tn == 3 && memcmp(t, "EOF", 3) == 0) ||
		                         (tn == 4 && memcmp(t, "UNIT", 4) == 0)))
			return perr(p, ln, col_of(p, t),
			            "'# %.*s' is OpenMetrics, but the start of the file looked like "
			            "Prometheus 0.0.4 text; run again with --format openmetrics (or "
			            "--format prometheus, which reads it as a comment, as Prometheus does)",
			            (int)tn, t);
		return 0; /* a plain comment */
	}
	skip_blanks(c);
	if (c->s == c->e)
		return 0; /* a bare "# HELP" is a plain comment to both reference parsers */
	const char *name;
	size_t nn;
	long ncol = col_of(p, c->s);
	if (*c->s == '"') {
		/* a quoted (UTF-8) metric name, as Prometheus reads it */
		buf_reset(&p->dec);
		int rc = read_quoted(p, c, &p->dec, "quoted metric name");
		if (rc)
			return rc;
		name = p->dec.p;
		nn = p->dec.len;
		if (nn == 0 || memchr(name, '\0', nn) || (c->s < c->e && !blank((unsigned char)*c->s)))
			return perr(p, ln, ncol, "# %s needs a valid metric name", desc_names[kind]);
	} else {
		nn = metric_name_token(c, &name);
		if (nn == 0)
			return perr(p, ln, ncol, "# %s needs a valid metric name", desc_names[kind]);
	}
	int rc = desc_family(p, name, nn, kind, ncol);
	if (rc)
		return rc;
	skip_blanks(c);
	if (kind == DESC_TYPE) {
		token(c, &t, &tn);
		if (tn == 0)
			return 0; /* "# TYPE name" alone says nothing (prometheus/common ignores it) */
		int type = type_from(D_PROM, t, tn);
		if (type < 0)
			return perr(p, ln, col_of(p, t),
			            "unknown type '%.*s' (counter, gauge, histogram, summary or untyped)",
			            (int)(tn > 40 ? 40 : tn), t);
		skip_blanks(c);
		if (c->s < c->e)
			return perr(p, ln, col_of(p, c->s), "unexpected text after the type");
		Family *f = p->fam;
		if (f->nsamples > 0 && f->type != type && !(simple_type(f->type) && simple_type(type)))
			return perr(p, ln, col_of(p, t),
			            "# TYPE %s for '%s' comes after samples that were read as %s; put the "
			            "TYPE line before the family's samples",
			            type_names[type], f->name, type_names[f->type]);
		return set_type(p, type);
	}
	/* HELP: the rest of the line; \\ and \n are decoded, any other
	 * backslash is kept as it is (Prometheus's scrape parser does the same).
	 * A repeated HELP replaces the earlier text, as in Prometheus's metadata;
	 * "# HELP name" with no text leaves it alone (prometheus/common). */
	if (c->s == c->e && p->fam->has_help)
		return 0;
	buf_reset(&p->dec);
	while (c->s < c->e) {
		if (*c->s == '\\' && c->s + 1 < c->e && (c->s[1] == '\\' || c->s[1] == 'n')) {
			buf_addc(&p->dec, c->s[1] == 'n' ? '\n' : '\\');
			c->s += 2;
			continue;
		}
		buf_addc(&p->dec, *c->s++);
	}
	p->fam->has_help = 1;
	free(p->fam->help);
	p->fam->help = help_text(&p->dec);
	return 0;
}

static int line_checks(Parser *p)
{
	const char *l = p->rd.line.p;
	size_t n = p->rd.line.len;
	long ln = p->rd.lineno;
	if (ln == 1 && n >= 3 && memcmp(l, "\xEF\xBB\xBF", 3) == 0)
		return perr(p, 1, 1, "the file starts with a byte order mark, which is not allowed");
	const char *cr = memchr(l, '\r', n);
	if (cr)
		return perr(p, ln, (long)(cr - l) + 1,
		            "carriage return: lines must end with a line feed only (no CRLF)");
	size_t bad = utf8_check((const unsigned char *)l, n);
	if (bad < n)
		return perr(p, ln, (long)bad + 1, "invalid UTF-8");
	return 0;
}

static int run(ImportCtx *ctx, FILE *f, int dialect)
{
	Parser *p = xcalloc(1, sizeof *p);
	p->ctx = ctx;
	p->dialect = dialect;
	p->auto_detected = ctx->opt->format == NULL;
	p->rd.f = f;
	buf_init(&p->rd.line);
	buf_init(&p->dec);
	buf_init(&p->tmp);
	int rc = 0, got;
	while ((got = rd_line(p)) > 0) {
		long ln = p->rd.lineno;
		if ((rc = line_checks(p)) != 0)
			break;
		if (dialect == D_OM) {
			if (p->seen_eof) {
				rc = perr(p, ln, 1, "text after '# EOF' (it must be the last line)");
				break;
			}
			if (p->rd.line.len == 0) {
				rc = perr(p, ln, 1, "empty lines are not allowed in OpenMetrics");
				break;
			}
			if (p->rd.line.p[0] == '#') {
				rc = om_descriptor(p);
			} else {
				rc = parse_sample(p);
				if (rc == 0)
					rc = take_sample(p);
			}
		} else {
			Cur c = {p->rd.line.p, p->rd.line.p + p->rd.line.len};
			skip_blanks(&c);
			if (c.s == c.e)
				continue;
			if (*c.s == '#') {
				rc = prom_comment(p, &c);
			} else {
				rc = parse_sample(p);
				if (rc == 0)
					rc = take_sample(p);
			}
		}
		if (rc)
			break;
	}
	if (got < 0)
		rc = got;
	if (rc == 0 && dialect == D_OM && !p->seen_eof) {
		long line = p->rd.nl || p->rd.lineno == 0 ? p->rd.lineno + 1 : p->rd.lineno;
		long col = p->rd.nl || p->rd.lineno == 0 ? 1 : (long)p->rd.line.len + 1;
		rc = perr(p, line, col, "missing '# EOF' at the end (OpenMetrics requires it)");
	}
	if (dialect == D_PROM) {
		int crc = prom_close_all(p, rc == 0);
		if (rc == 0)
			rc = crc;
	} else {
		if (rc == 0)
			rc = family_close(p);
		family_free(p->fam);
	}
	map_clear(&p->families, free);
	map_clear(&p->names, free);
	free(p->lbl);
	free(p->xl);
	buf_fini(&p->rd.line);
	buf_fini(&p->dec);
	buf_fini(&p->tmp);
	free(p);
	return rc;
}

int prom_text_run_prometheus(ImportCtx *ctx, FILE *f)
{
	return run(ctx, f, D_PROM);
}

int prom_text_run_openmetrics(ImportCtx *ctx, FILE *f)
{
	return run(ctx, f, D_OM);
}

/* ---- sniffing ----------------------------------------------------------- */

/* Looks at the complete lines of head: *om is set when an OpenMetrics-only
 * construct appears (# EOF, # UNIT, an OpenMetrics-only type, an exemplar);
 * returns 1 when the text is shaped like Prometheus/OpenMetrics text. */
static int sniff_head(const char *head, size_t len, int *om)
{
	*om = 0;
	int shaped = 0, first = 1;
	size_t i = 0;
	while (i < len) {
		const char *l = head + i;
		const char *nlp = memchr(l, '\n', len - i);
		size_t n = nlp ? (size_t)(nlp - l) : len - i;
		i += n + 1;
		size_t k = 0;
		while (k < n && blank((unsigned char)l[k]))
			k++;
		if (k == n)
			continue;
		const char *s = l + k;
		size_t m = n - k;
		if (s[0] == '#') {
			if (m == 5 && memcmp(s, "# EOF", 5) == 0)
				*om = shaped = 1; /* an empty OpenMetrics exposition is valid */
			else if (m > 7 && memcmp(s, "# UNIT ", 7) == 0)
				*om = 1;
			if (m > 7 && (memcmp(s, "# TYPE ", 7) == 0 || memcmp(s, "# HELP ", 7) == 0)) {
				shaped = 1;
				if (memcmp(s, "# TYPE ", 7) == 0) {
					const char *sp = memchr(s + 7, ' ', m - 7);
					if (sp) {
						const char *t = sp + 1;
						size_t tn = (size_t)(s + m - t);
						if ((tn == 14 && memcmp(t, "gaugehistogram", 14) == 0) ||
						    (tn == 8 && memcmp(t, "stateset", 8) == 0) ||
						    (tn == 4 && memcmp(t, "info", 4) == 0) ||
						    (tn == 7 && memcmp(t, "unknown", 7) == 0))
							*om = 1;
					}
				}
			}
			first = 0;
			continue;
		}
		if (!name_start((unsigned char)s[0]))
			return first ? 0 : shaped;
		size_t j = 1;
		while (j < m && name_char((unsigned char)s[j]))
			j++;
		if (j < m && s[j] == '{') {
			const char *close = memchr(s + j, '}', m - j);
			if (close == NULL)
				return first ? 0 : shaped;
			j = (size_t)(close - s) + 1;
		}
		if (j >= m || !blank((unsigned char)s[j]))
			return first ? 0 : shaped;
		while (j < m && blank((unsigned char)s[j]))
			j++;
		if (j >= m || !(is_digit((unsigned char)s[j]) || s[j] == '-' || s[j] == '+' ||
		                s[j] == '.' || lower((unsigned char)s[j]) == 'n' ||
		                lower((unsigned char)s[j]) == 'i'))
			return first ? 0 : shaped;
		shaped = 1;
		for (size_t x = j; x + 3 < m; x++)
			if (s[x] == ' ' && s[x + 1] == '#' && s[x + 2] == ' ' && s[x + 3] == '{')
				*om = 1;
		first = 0;
	}
	return shaped;
}

int prom_text_sniff_prometheus(const char *head, size_t len)
{
	int om;
	if (!sniff_head(head, len, &om))
		return 0;
	return om ? 40 : 60;
}

int prom_text_sniff_openmetrics(const char *head, size_t len)
{
	int om;
	if (!sniff_head(head, len, &om))
		return 0;
	return om ? 85 : 0;
}
