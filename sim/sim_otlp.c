/*
 * sim_otlp.c - writes SimTraces as OTLP/JSON, the way an OpenTelemetry
 * Collector's file exporter does.
 *
 * Whole traces are gathered into a batch of about `batch` spans (as a
 * collector with tail sampling exports them); a full batch becomes one
 * ExportTraceServiceRequest: its spans grouped into one resourceSpans per
 * resource (process) and one scopeSpans per instrumentation scope.
 * JSON Lines mode writes one request per line. Single mode writes one
 * document {"resourceSpans":[...]} holding the same resourceSpans objects,
 * one per line, so the same resource appears many times (valid OTLP).
 *
 * Encoding follows the OTLP/JSON mapping: ids as lowercase hex, times and
 * 64-bit integers as decimal strings, kind as its integer, attribute values
 * as {"stringValue":...} etc. Numbers are formatted by hand: printf would
 * dominate the run time at a million spans.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "sim.h"

typedef struct Item {
	SimSpan span;
	uint8_t trace_id[16];
	int next;                  /* next item of the same (resource, scope) group */
} Item;

struct SimOtlp {
	FILE *f;
	char *path;
	int single;
	int batch;
	int first_rs;              /* single mode: no comma before the next resourceSpans */
	const SimWorld *w;
	char **res_json;           /* {"attributes":[...]} per resource */
	char **scope_json;         /* {"name":..,"version":..} per scope */
	Item *items;
	int n_items, cap_items;
	int *head, *tail;          /* per group: first and last item, -1 none */
	Buf out;
	int failed;
};

static const char HEX[] = "0123456789abcdef";

static void add_hex(Buf *b, const uint8_t *p, int n)
{
	char tmp[64];
	for (int i = 0; i < n; i++) {
		tmp[2 * i] = HEX[p[i] >> 4];
		tmp[2 * i + 1] = HEX[p[i] & 15];
	}
	buf_add(b, tmp, (size_t)(2 * n));
}

static void add_id64(Buf *b, uint64_t v)
{
	uint8_t p[8];
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
	add_hex(b, p, 8);
}

static void add_u64(Buf *b, uint64_t v)
{
	char tmp[24];
	int n = 0;
	do {
		tmp[sizeof tmp - 1 - n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	buf_add(b, tmp + sizeof tmp - n, (size_t)n);
}

static void add_i64(Buf *b, int64_t v)
{
	if (v < 0) {
		buf_addc(b, '-');
		add_u64(b, (uint64_t)0 - (uint64_t)v);
	} else {
		add_u64(b, (uint64_t)v);
	}
}

/* A double as a JSON number. Values that are whole multiples of 1e-6 (the
 * model's ns-exact milliseconds) print exactly with up to six decimals;
 * anything else falls back to %.17g. */
static void add_double(Buf *b, double d)
{
	double scaled = d * 1e6;
	if (isfinite(d) && fabs(scaled) < 9e15) {
		int64_t v = (int64_t)llround(scaled);
		if ((double)v / 1e6 == d) {
			if (v < 0) {
				buf_addc(b, '-');
				v = -v;
			}
			add_u64(b, (uint64_t)(v / 1000000));
			int64_t frac = v % 1000000;
			if (frac) {
				char t[8];
				int n = 6;
				while (frac % 10 == 0) {
					frac /= 10;
					n--;
				}
				for (int i = n - 1; i >= 0; i--) {
					t[i] = (char)('0' + frac % 10);
					frac /= 10;
				}
				buf_addc(b, '.');
				buf_add(b, t, (size_t)n);
			}
			return;
		}
	}
	if (!isfinite(d)) {          /* JSON has no NaN/Inf; OTLP/JSON uses strings */
		buf_adds(b, isnan(d) ? "\"NaN\"" : d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
		return;
	}
	char t[40];
	int n = snprintf(t, sizeof t, "%.17g", d);
	buf_add(b, t, (size_t)n);
}

static void add_str(Buf *b, const char *s)
{
	buf_add_json_str(b, s, strlen(s));
}

static void add_attrs(Buf *b, const SimAttr *a, int n)
{
	buf_adds(b, "\"attributes\":[");
	for (int i = 0; i < n; i++) {
		if (i)
			buf_addc(b, ',');
		buf_adds(b, "{\"key\":");
		add_str(b, a[i].key);
		switch (a[i].type) {
		case SIM_ATTR_STR:
			buf_adds(b, ",\"value\":{\"stringValue\":");
			add_str(b, a[i].s);
			buf_adds(b, "}}");
			break;
		case SIM_ATTR_INT:
			buf_adds(b, ",\"value\":{\"intValue\":\"");
			add_i64(b, a[i].i);
			buf_adds(b, "\"}}");
			break;
		case SIM_ATTR_DOUBLE:
			buf_adds(b, ",\"value\":{\"doubleValue\":");
			add_double(b, a[i].d);
			buf_adds(b, "}}");
			break;
		default:
			buf_adds(b, a[i].i ? ",\"value\":{\"boolValue\":true}}"
			                   : ",\"value\":{\"boolValue\":false}}");
		}
	}
	buf_addc(b, ']');
}

static void add_span(Buf *b, const Item *it, const Item *items)
{
	const SimSpan *s = &it->span;
	buf_adds(b, "{\"traceId\":\"");
	add_hex(b, it->trace_id, 16);
	buf_adds(b, "\",\"spanId\":\"");
	add_id64(b, s->span_id);
	buf_addc(b, '"');
	if (s->parent >= 0) {
		/* parent was made an absolute item index by sim_otlp_trace() */
		buf_adds(b, ",\"parentSpanId\":\"");
		add_id64(b, items[s->parent].span.span_id);
		buf_addc(b, '"');
	}
	buf_adds(b, ",\"name\":");
	add_str(b, s->name);
	buf_adds(b, ",\"kind\":");
	add_u64(b, (uint64_t)s->kind);
	buf_adds(b, ",\"startTimeUnixNano\":\"");
	add_i64(b, s->start_ns);
	buf_adds(b, "\",\"endTimeUnixNano\":\"");
	add_i64(b, s->end_ns);
	buf_adds(b, "\",");
	add_attrs(b, s->attrs, s->n_attrs);
	if (s->status == 0) {
		buf_adds(b, ",\"status\":{}}");
	} else {
		buf_adds(b, ",\"status\":{");
		if (s->status_msg) {
			buf_adds(b, "\"message\":");
			add_str(b, s->status_msg);
			buf_addc(b, ',');
		}
		buf_adds(b, "\"code\":");
		add_u64(b, (uint64_t)s->status);
		buf_adds(b, "}}");
	}
}

int sim_otlp_open(SimOtlp **out, const char *path, int single, int batch, const SimWorld *w,
                  Err *err)
{
	*out = NULL;
	FILE *f = fopen(path, "wb");
	if (f == NULL)
		return err_set(err, TT_EIO, "%s: cannot create: %s", path, strerror(errno));
	SimOtlp *o = xcalloc(1, sizeof *o);
	o->f = f;
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	o->path = xstrdup(path);
	o->single = single;
	o->batch = batch > 0 ? batch : 512;
	o->first_rs = 1;
	o->w = w;
	buf_init(&o->out);
	o->res_json = xcalloc((size_t)w->n_resources, sizeof *o->res_json);
	for (int i = 0; i < w->n_resources; i++) {
		Buf b;
		buf_init(&b);
		buf_adds(&b, "{");
		add_attrs(&b, w->resources[i].attrs, w->resources[i].n_attrs);
		buf_adds(&b, "}");
		o->res_json[i] = xstrdup(buf_str(&b));
		buf_fini(&b);
	}
	o->scope_json = xcalloc((size_t)w->n_scopes, sizeof *o->scope_json);
	for (int i = 0; i < w->n_scopes; i++) {
		Buf b;
		buf_init(&b);
		buf_adds(&b, "{\"name\":");
		add_str(&b, w->scopes[i].name);
		buf_adds(&b, ",\"version\":");
		add_str(&b, w->scopes[i].version);
		buf_adds(&b, "}");
		o->scope_json[i] = xstrdup(buf_str(&b));
		buf_fini(&b);
	}
	size_t groups = (size_t)w->n_resources * (size_t)w->n_scopes;
	o->head = xmalloc(groups * sizeof *o->head);
	o->tail = xmalloc(groups * sizeof *o->tail);
	for (size_t g = 0; g < groups; g++)
		o->head[g] = o->tail[g] = -1;
	if (single && fputs("{\"resourceSpans\":[\n", f) == EOF)
		o->failed = 1;
	*out = o;
	return 0;
}

/* Writes the batch as resourceSpans objects, resources in index order. */
static int flush(SimOtlp *o, Err *err)
{
	if (o->n_items == 0)
		return 0;
	const SimWorld *w = o->w;
	int ns = w->n_scopes;
	for (int i = 0; i < o->n_items; i++) {
		int g = o->items[i].span.resource * ns + o->items[i].span.scope;
		o->items[i].next = -1;
		if (o->head[g] < 0)
			o->head[g] = i;
		else
			o->items[o->tail[g]].next = i;
		o->tail[g] = i;
	}
	Buf *b = &o->out;
	buf_reset(b);
	if (!o->single)
		buf_adds(b, "{\"resourceSpans\":[");
	int first_rs = 1;
	for (int r = 0; r < w->n_resources; r++) {
		int any = 0;
		for (int s = 0; s < ns; s++)
			any |= o->head[r * ns + s] >= 0;
		if (!any)
			continue;
		if (o->single) {
			if (!o->first_rs)
				buf_adds(b, ",\n");
			o->first_rs = 0;
		} else if (!first_rs) {
			buf_addc(b, ',');
		}
		first_rs = 0;
		buf_adds(b, "{\"resource\":");
		buf_adds(b, o->res_json[r]);
		buf_adds(b, ",\"scopeSpans\":[");
		int first_sc = 1;
		for (int s = 0; s < ns; s++) {
			int g = r * ns + s;
			if (o->head[g] < 0)
				continue;
			if (!first_sc)
				buf_addc(b, ',');
			first_sc = 0;
			buf_adds(b, "{\"scope\":");
			buf_adds(b, o->scope_json[s]);
			buf_adds(b, ",\"spans\":[");
			for (int i = o->head[g]; i >= 0; i = o->items[i].next) {
				if (i != o->head[g])
					buf_addc(b, ',');
				add_span(b, &o->items[i], o->items);
			}
			buf_adds(b, "]}");
			o->head[g] = o->tail[g] = -1;
		}
		buf_adds(b, "],\"schemaUrl\":\"https://opentelemetry.io/schemas/1.26.0\"}");
	}
	if (!o->single)
		buf_adds(b, "]}\n");
	o->n_items = 0;
	if (fwrite(b->p, 1, b->len, o->f) != b->len) {
		o->failed = 1;
		return err_set(err, TT_EIO, "%s: write failed: %s", o->path, strerror(errno));
	}
	return 0;
}

int sim_otlp_trace(void *ctx, const SimTrace *t, Err *err)
{
	SimOtlp *o = ctx;
	if (o->n_items + t->n_spans > o->cap_items) {
		o->cap_items = (o->n_items + t->n_spans) * 2;
		o->items = xrealloc(o->items, (size_t)o->cap_items * sizeof *o->items);
	}
	int base = o->n_items;
	for (int k = 0; k < t->n_spans; k++) {
		Item *it = &o->items[o->n_items++];
		it->span = t->spans[k];
		/* Make parent an absolute item index for the writer. */
		if (it->span.parent >= 0)
			it->span.parent += base;
		memcpy(it->trace_id, t->trace_id, 16);
	}
	if (o->n_items >= o->batch)
		return flush(o, err);
	return 0;
}

int sim_otlp_close(SimOtlp *o, Err *err)
{
	if (o == NULL)
		return 0;
	int rc = flush(o, err);
	if (!rc && o->single && fputs("\n]}\n", o->f) == EOF)
		o->failed = 1;
	if (fclose(o->f) != 0)
		o->failed = 1;
	if (!rc && o->failed)
		rc = err_set(err, TT_EIO, "%s: write failed: %s", o->path, strerror(errno));
	for (int i = 0; i < o->w->n_resources; i++)
		free(o->res_json[i]);
	for (int i = 0; i < o->w->n_scopes; i++)
		free(o->scope_json[i]);
	free(o->res_json);
	free(o->scope_json);
	free(o->head);
	free(o->tail);
	free(o->items);
	free(o->path);
	buf_fini(&o->out);
	free(o);
	return rc;
}
