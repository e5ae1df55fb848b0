/* err.c - see err.h. */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int err_vset(Err *err, int code, const char *fmt, va_list ap)
{
	if (err == NULL)
		return code;
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	err->code = code;
	return code;
}

int err_set(Err *err, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	err_vset(err, code, fmt, ap);
	va_end(ap);
	return code;
}

int err_vat(Err *err, int code, const char *file, long line, long col,
            const char *fmt, va_list ap)
{
	if (err == NULL)
		return code;
	int n = snprintf(err->msg, sizeof err->msg, "%s:%ld:%ld: ",
	                 file ? file : "<input>", line, col);
	if (n < 0 || (size_t)n >= sizeof err->msg)
		n = 0;
	vsnprintf(err->msg + n, sizeof err->msg - (size_t)n, fmt, ap);
	err->code = code;
	return code;
}

int err_at(Err *err, int code, const char *file, long line, long col,
           const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	err_vat(err, code, file, line, col, fmt, ap);
	va_end(ap);
	return code;
}

void err_clear(Err *err)
{
	if (err == NULL)
		return;
	err->code = 0;
	err->msg[0] = '\0';
}
