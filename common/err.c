/* err.c - see err.h. */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int err_set(Err *err, int code, const char *fmt, ...)
{
	if (err == NULL)
		return code;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	err->code = code;
	return code;
}

int err_at(Err *err, int code, const char *file, long line, long col,
           const char *fmt, ...)
{
	if (err == NULL)
		return code;
	int n = snprintf(err->msg, sizeof err->msg, "%s:%ld:%ld: ",
	                 file ? file : "<input>", line, col);
	if (n < 0 || (size_t)n >= sizeof err->msg)
		n = 0;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg + n, sizeof err->msg - (size_t)n, fmt, ap);
	va_end(ap);
	err->code = code;
	return code;
}

void err_clear(Err *err)
{
	if (err == NULL)
		return;
	err->code = 0;
	err->msg[0] = '\0';
}
