/* buf.c - see buf.h. */
#include "buf.h"
#include "err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (p == NULL) {
		fputs("tailtriage: out of memory\n", stderr);
		abort();
	}
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (p == NULL) {
		fputs("tailtriage: out of memory\n", stderr);
		abort();
	}
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (q == NULL) {
		fputs("tailtriage: out of memory\n", stderr);
		abort();
	}
	return q;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void buf_init(Buf *b)
{
	b->p = NULL;
	b->len = 0;
	b->cap = 0;
}

void buf_fini(Buf *b)
{
	free(b->p);
	buf_init(b);
}

void buf_reset(Buf *b)
{
	b->len = 0;
	if (b->p)
		b->p[0] = '\0';
}

static void buf_grow(Buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;
	if (need <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap *= 2;
	b->p = xrealloc(b->p, cap);
	b->cap = cap;
}

void buf_reserve(Buf *b, size_t extra)
{
	buf_grow(b, extra);
}

void buf_add(Buf *b, const void *p, size_t n)
{
	buf_grow(b, n);
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void buf_adds(Buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void buf_addc(Buf *b, char c)
{
	buf_grow(b, 1);
	b->p[b->len++] = c;
	b->p[b->len] = '\0';
}

void buf_printf(Buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n <= 0)
		return;
	buf_grow(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void buf_add_json_str(Buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	buf_grow(b, n + 2);
	buf_addc(b, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		switch (c) {
		case '"': buf_add(b, "\\\"", 2); break;
		case '\\': buf_add(b, "\\\\", 2); break;
		case '\n': buf_add(b, "\\n", 2); break;
		case '\r': buf_add(b, "\\r", 2); break;
		case '\t': buf_add(b, "\\t", 2); break;
		default:
			if (c < 0x20 || c == 0x7f) {
				char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
				buf_add(b, e, 6);
			} else {
				buf_addc(b, (char)c);
			}
		}
	}
	buf_addc(b, '"');
}

const char *buf_str(const Buf *b)
{
	return b->p ? b->p : "";
}

int buf_read_file(Buf *b, const char *path, size_t max, Err *err)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return err_set(err, TT_EIO, "%s: %s", path, strerror(errno));
	struct stat sb;
	if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
		fclose(f);
		return err_set(err, TT_EIO, "%s: is a directory, not a file", path);
	}
	char chunk[1 << 14];
	size_t n;
	size_t start = b->len;
	int rc = 0;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
		if (b->len - start + n > max) {
			rc = err_at(err, TT_EPARSE, path, 1, 1, "larger than %zu bytes: not a file of this kind",
			            max);
			break;
		}
		buf_add(b, chunk, n);
	}
	if (rc == 0 && ferror(f))
		rc = err_set(err, TT_EIO, "%s: read error: %s", path, strerror(errno));
	fclose(f);
	if (b->p == NULL)
		buf_add(b, "", 0);
	return rc;
}
