/* util.c - small helpers shared by the subcommands. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "cli.h"
#include "model_infer.h"
#include "model_json.h"
#include "sanitize.h"
#include "suggest.h"
#include "timefmt.h"
#include "paths.h"
#include "receiver.h"

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

int cli_suggest(Buf *b, const char *word, const char *const *names, int n, const char *dashes)
{
	int idx[3];
	int k = suggest_pick(word, names, n, idx, 3);
	for (int i = 0; i < k; i++) {
		char clean[128];
		san_clean(names[idx[i]], clean, sizeof clean);
		buf_printf(b, "%s'%s%s'", i == 0 ? "; did you mean " : i + 1 == k ? " or " : ", ",
		           dashes, clean);
	}
	if (k)
		buf_addc(b, '?');
	return k;
}

/* The long option's name in arg ("--name" or "--name=value"), copied
 * into out without the dashes and the value. */
static void long_name(const char *arg, char *out, size_t n)
{
	size_t len = strcspn(arg + 2, "=");
	if (len >= n)
		len = n - 1;
	memcpy(out, arg + 2, len);
	out[len] = '\0';
}

/* The message for the option getopt_long refused in arg (returned ':'
 * for a missing value, '?' otherwise; optopt the short option if any). */
static void getopt_trouble(Buf *m, int c, const char *arg, const struct option *longopts)
{
	if (strncmp(arg, "--", 2) != 0) {
		char o = (char)optopt;
		if (c == ':')
			buf_printf(m, "option '-%c' needs a value", o);
		else if (o > 0x20 && o < 0x7f)
			buf_printf(m, "unknown option '-%c'", o);
		else
			buf_adds(m, "unknown option");
		return;
	}
	char name[128], shown[256];
	long_name(arg, name, sizeof name);
	san_clean(name, shown, sizeof shown);
	if (c == ':') {
		buf_printf(m, "option '--%s' needs a value", shown);
		return;
	}
	size_t len = strlen(name);
	int n = 0, exact = -1, prefixes = 0;
	for (; longopts[n].name; n++) {
		if (strcmp(longopts[n].name, name) == 0)
			exact = n;
		else if (len > 0 && strncmp(longopts[n].name, name, len) == 0)
			prefixes++;
	}
	if (exact >= 0 || (prefixes == 1 && strchr(arg, '='))) {
		/* the only way getopt_long refuses a name it knows */
		buf_printf(m, "option '--%s' takes no value", shown);
		return;
	}
	if (prefixes > 1) {
		buf_printf(m, "option '--%s' is ambiguous: it could be ", shown);
		int k = 0;
		for (int i = 0; i < n; i++)
			if (strncmp(longopts[i].name, name, len) == 0)
				buf_printf(m, "%s'--%s'", k++ ? ", " : "", longopts[i].name);
		return;
	}
	const char **names = xmalloc((size_t)(n ? n : 1) * sizeof *names);
	for (int i = 0; i < n; i++)
		names[i] = longopts[i].name;
	buf_printf(m, "unknown option '--%s'", shown);
	cli_suggest(m, name, names, n, "--");
	free(names);
}

int cli_getopt(const char *who, int argc, char **argv, const char *shortopts,
               const struct option *longopts)
{
	char spec[128];
	snprintf(spec, sizeof spec, ":%s", shortopts);
	int before = optind;
	opterr = 0;
	int c = getopt_long(argc, argv, spec, longopts, NULL);
	if (c != '?' && c != ':')
		return c;
	/* getopt_long has stepped past a long option, or past the last of a
	 * cluster of short ones; inside a cluster it has not */
	int at = optind > before ? optind - 1 : optind;
	Buf m;
	buf_init(&m);
	getopt_trouble(&m, c, at < argc ? argv[at] : "-", longopts);
	fprintf(stderr, "tailtriage %s: %s\nRun 'tailtriage %s --help' for its options.\n", who,
	        buf_str(&m), who);
	buf_fini(&m);
	return '?';
}

int cli_model_path(const char *name, char *out, size_t n)
{
	if (name == NULL || strchr(name, '/') || access(name, F_OK) == 0) {
		snprintf(out, n, "%s", name ? name : "");
		return 0;
	}
	char rel[512];
	const char *ext = strstr(name, ".model.json") ? "" : ".model.json";
	snprintf(rel, sizeof rel, "models/%s%s", name, ext);
	if (tt_share_path(rel, out, n) == 0)
		return 1;
	snprintf(out, n, "%s", name);
	return 0;
}

Model *cli_load_model(const char *path, Err *err)
{
	err_clear(err);
	if (path == NULL)
		return NULL;
	char full[4096];
	cli_model_path(path, full, sizeof full);
	Model *m = NULL;
	if (model_load(full, &m, err))
		return NULL;
	return m;
}

int cli_ranges(const char *window, const char *baseline, Period *r)
{
	Err err = {0};
	*r = PERIOD_ALL;
	if (window && time_parse_range(window, &r->win.from, &r->win.to, &err))
		return cli_fail("--window: %s", err.msg), 2;
	if (baseline == NULL)
		return 0;
	if (strcmp(baseline, "before") == 0) {
		if (time_range_open(r->win))
			return cli_fail("--baseline before needs a window with both ends"), 2;
		r->base = time_range_before(r->win);
	} else if (time_parse_range(baseline, &r->base.from, &r->base.to, &err)) {
		return cli_fail("--baseline: %s", err.msg), 2;
	}
	r->has_baseline = 1;
	return 0;
}

int cli_sample(const char *arg, int64_t *out)
{
	if (strcmp(arg, "all") == 0) {
		*out = 0;
		return 0;
	}
	char *end = NULL;
	errno = 0;
	long long v = strtoll(arg, &end, 10);
	if (errno || end == arg || *end || v < 0 || v > 1000000000LL)
		return cli_fail("--sample must be a count of requests (0 to 1000000000) or 'all', "
		                "not '%s'", arg), 2;
	*out = v;
	return 0;
}

int cli_sampled(const char *arg, EvSampling *out)
{
	char why[200];
	if (evidence_sampling_parse(arg, out, why, sizeof why))
		return cli_fail("--sampled: %s", why), 2;
	return 0;
}

int cli_text_or_json(const char *format)
{
	if (strcmp(format, "text") == 0 || strcmp(format, "json") == 0)
		return 0;
	return cli_fail("--format must be text or json, not '%s'", format), 2;
}

int cli_model(const char *path, Store *st, int64_t from, int64_t to, Model **out)
{
	Err err = {0};
	*out = NULL;
	if (path && strcmp(path, "none") == 0)
		return 0;
	if (path) {
		char full[4096];
		cli_model_path(path, full, sizeof full);
		if (model_load(full, out, &err))
			return cli_fail("%s", err.msg);
		return 0;
	}
	if (st == NULL)
		return 0;
	return cli_model_infer(st, from, to, NULL, out);
}

int cli_model_infer(Store *st, int64_t from, int64_t to, const CliEndpoint *ep, Model **out)
{
	Err err = {0};
	*out = NULL;
	if (model_infer_endpoint(st, from, to, ep ? ep->service : NULL, ep ? ep->route : NULL, out,
	                         &err))
		return cli_fail("inferring a model: %s", err.msg);
	const Model *m = *out;
	if (m->n_nodes == 0 && m->n_pools == 0) {
		/* nothing to infer from (yet): a model with nothing in it would
		 * only hide that there is no model */
		model_free(*out);
		*out = NULL;
		fprintf(stderr, "tailtriage: no --model, and no data to infer one from: running "
		                "without a model\n");
		return 0;
	}
	fprintf(stderr, "tailtriage: no --model: using a model inferred from the data (%d nodes, "
	                "%d pools; 'tailtriage model infer' shows why)\n", m->n_nodes, m->n_pools);
	return 0;
}

const char *cli_model_source(const Model *m)
{
	return m == NULL ? "none" : m->inferred ? "inferred" : "file";
}

void cli_model_findings_text(const ModelFinding *f, int n, const Model *m, Buf *out)
{
	if (m == NULL)
		return;
	/* pool names and label values come from the data: sanitized */
	char t[1024];
	san_clean(m->inferred || m->path == NULL ? "" : m->path, t, sizeof t);
	buf_printf(out, "\nModel and data (model: %s%s%s)\n", cli_model_source(m), t[0] ? " " : "",
	           t);
	if (m->inferred)
		buf_adds(out, "  drafted from this data ('tailtriage model infer' shows why for each "
		              "field; edit it and pass it with --model)\n");
	else if (n == 0)
		buf_adds(out, "  no disagreement found\n");
	for (int i = 0; i < n; i++) {
		san_clean(f[i].text, t, sizeof t);
		buf_printf(out, "  %s\n", t);
	}
}

void cli_json_add_member(Buf *out, const char *name, const char *value)
{
	size_t end = out->len;
	while (end > 0 && out->p[end - 1] != '}')
		end--;
	if (end == 0)
		return;
	Buf tail;
	buf_init(&tail);
	buf_add(&tail, out->p + end, out->len - end);
	out->len = end - 1;
	while (out->len > 0 && (out->p[out->len - 1] == '\n' || out->p[out->len - 1] == ' '))
		out->len--;
	int empty = out->len > 0 && out->p[out->len - 1] == '{';
	buf_printf(out, "%s\n  \"%s\": %s\n}", empty ? "" : ",", name, value);
	buf_add(out, tail.p, tail.len);
	buf_fini(&tail);
}

void cli_model_findings_json(const ModelFinding *f, int n, const Model *m, Buf *out)
{
	Buf v;
	buf_init(&v);
	const char *src = cli_model_source(m);
	buf_printf(&v, "{\"source\": \"%s\"", src);
	if (m && !m->inferred && m->path) {
		buf_adds(&v, ", \"path\": ");
		buf_add_json_str(&v, m->path, strlen(m->path));
	}
	buf_adds(&v, ", \"findings\": [");
	for (int i = 0; i < n; i++) {
		buf_adds(&v, i ? ", {" : "{");
		buf_adds(&v, "\"kind\": ");
		buf_add_json_str(&v, f[i].kind, strlen(f[i].kind));
		buf_adds(&v, ", \"subject\": ");
		buf_add_json_str(&v, f[i].subject, strlen(f[i].subject));
		buf_adds(&v, ", \"text\": ");
		buf_add_json_str(&v, f[i].text, strlen(f[i].text));
		buf_adds(&v, "}");
	}
	buf_adds(&v, "]}");
	cli_json_add_member(out, "model", buf_str(&v));
	buf_fini(&v);
}

/* One number with a suffix: "<number><unit>". Returns 0 and the value in
 * *out scaled by the unit, or -1. */
static int skew_part(const char *s, size_t n, int pct, double *out)
{
	char buf[64];
	if (n == 0 || n >= sizeof buf)
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (!((buf[0] >= '0' && buf[0] <= '9') || buf[0] == '.'))
		return -1;
	char *end;
	double v = strtod(buf, &end);
	if (end == buf || !isfinite(v) || v < 0)
		return -1;
	if (pct) {
		if (strcmp(end, "%") != 0)
			return -1;
		*out = v / 100.0;
		return 0;
	}
	static const struct {
		const char *unit;
		double ns;
	} units[] = {{"ns", 1}, {"us", 1e3}, {"\xc2\xb5s", 1e3}, {"ms", 1e6}, {"s", 1e9}};
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		if (strcmp(end, units[i].unit) == 0) {
			*out = v * units[i].ns;
			return 0;
		}
	}
	return -1;
}

int cli_skew_tolerance(const char *arg, SkewTolerance *out)
{
	memset(out, 0, sizeof *out);
	out->set = 1;
	if (strcmp(arg, "0") == 0 || strcmp(arg, "off") == 0)
		return 0;
	const char *plus = strchr(arg, '+');
	size_t n = strlen(arg);
	double abs_ns = 0, frac = 0;
	int ok;
	if (plus)
		ok = skew_part(arg, (size_t)(plus - arg), 0, &abs_ns) == 0 &&
		     skew_part(plus + 1, strlen(plus + 1), 1, &frac) == 0;
	else if (n > 0 && arg[n - 1] == '%')
		ok = skew_part(arg, n, 1, &frac) == 0;
	else
		ok = skew_part(arg, n, 0, &abs_ns) == 0;
	if (!ok)
		return cli_fail("--skew-tolerance: '%s' is not ABS, PCT%% or ABS+PCT%% "
		                "(e.g. 50us+1%%, 2ms, 5%%, 0)", arg), 2;
	if (abs_ns > 60e9)
		return cli_fail("--skew-tolerance: the absolute part must be at most 60 s"), 2;
	if (frac > 0.5)
		return cli_fail("--skew-tolerance: the percentage must be at most 50 %%"), 2;
	out->abs_ns = (int64_t)llround(abs_ns);
	out->frac = frac;
	return 0;
}

static void remove_below(const char *path)
{
	DIR *d = opendir(path);
	if (d == NULL)
		return;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		size_t n = strlen(path) + strlen(e->d_name) + 2;
		char *p = malloc(n);
		if (p == NULL)
			break;
		snprintf(p, n, "%s/%s", path, e->d_name);
		struct stat sb;
		if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode)) {
			remove_below(p);
			rmdir(p);
		} else {
			unlink(p);
		}
		free(p);
	}
	closedir(d);
}

int cli_remove_tree(const char *path)
{
	/* Once the top folder is gone nothing new can appear under it. */
	for (int tries = 0; tries < 50; tries++) {
		remove_below(path);
		if (rmdir(path) == 0 || errno == ENOENT)
			return 0;
		struct timespec ts = {0, 20 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	return -1;
}

typedef struct ClassList {
	char **v;
	int n;
} ClassList;

static void class_add(ClassList *l, const char *c)
{
	for (int i = 0; i < l->n; i++)
		if (strcmp(l->v[i], c) == 0)
			return;
	l->v = xrealloc(l->v, (size_t)(l->n + 1) * sizeof *l->v);
	l->v[l->n++] = xstrdup(c);
}

static int class_seen(void *ctx, const char *c)
{
	class_add(ctx, c);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int cli_check_class(Store *st, const Model *model, const char *wclass)
{
	if (wclass == NULL)
		return 0;
	ClassList l = {0};
	for (int i = 0; model && i < model->n_classes; i++)
		class_add(&l, model->classes[i]);
	Err err = {0};
	if (store_classes(st, class_seen, &l, &err)) {
		for (int i = 0; i < l.n; i++)
			free(l.v[i]);
		free(l.v);
		return cli_fail("%s", err.msg);
	}
	int found = 0;
	for (int i = 0; i < l.n; i++)
		found |= strcmp(l.v[i], wclass) == 0;
	int rc = 0;
	if (!found) {
		Buf b;
		buf_init(&b);
		if (l.n > 1)
			qsort(l.v, (size_t)l.n, sizeof *l.v, cmp_str);
		for (int i = 0; i < l.n; i++) {
			char clean[128];
			san_clean(l.v[i], clean, sizeof clean);
			buf_printf(&b, "%s%s", i ? ", " : "", clean);
		}
		char want[128];
		san_clean(wclass, want, sizeof want);
		if (l.n)
			cli_fail("unknown class '%s' (known: %s)", want, buf_str(&b));
		else
			cli_fail("unknown class '%s' (neither the data nor the model has workload"
			         " classes)", want);
		buf_fini(&b);
		rc = 2;
	}
	for (int i = 0; i < l.n; i++)
		free(l.v[i]);
	free(l.v);
	return rc;
}

void cli_warn_open_listener(const char *listen, const char *token)
{
	char host[256];
	unsigned port = 0;
	if (listen == NULL || (token && *token) ||
	    receiver_parse_listen(listen, host, sizeof host, &port, NULL))
		return;
	int loopback = strncmp(host, "127.", 4) == 0 || strcmp(host, "::1") == 0 ||
	               strcmp(host, "localhost") == 0;
	if (!loopback)
		fprintf(stderr, "tailtriage: warning: listening on %s without --token: anyone who"
		        " can reach this address can write into the database\n", host);
}

void cli_shell_word(Buf *b, const char *s)
{
	int plain = *s != '\0';
	for (const char *p = s; *p; p++)
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:=@%+,-",
		            *p))
			plain = 0;
	if (plain) {
		buf_adds(b, s);
		return;
	}
	buf_addc(b, '\'');
	for (const char *p = s; *p; p++) {
		if (*p == '\'')
			buf_adds(b, "'\\''");
		else
			buf_addc(b, *p);
	}
	buf_addc(b, '\'');
}
