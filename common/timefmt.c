/* timefmt.c - see timefmt.h.  Calendar arithmetic is done by hand (days
 * from civil date) because timegm() is not in C11 or POSIX. */
#include "timefmt.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static int digits(const char *s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

int time_parse(const char *s, int64_t *out_ns, Err *err)
{
	if (s == NULL || *s == '\0')
		return err_set(err, TT_EPARSE, "empty time");
	size_t n = strlen(s);
	int all_digits = 1;
	for (size_t i = (s[0] == '-'); i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			all_digits = 0;
	if (all_digits) {
		errno = 0;
		char *end;
		long long ms = strtoll(s, &end, 10);
		if (errno || *end || ms > INT64_MAX / 1000000 || ms < INT64_MIN / 1000000)
			return err_set(err, TT_EPARSE, "'%s': epoch milliseconds out of range", s);
		*out_ns = (int64_t)ms * 1000000;
		return 0;
	}
	int Y, M, D, h, m, sec;
	if (n < 20 || digits(s, 4, &Y) || s[4] != '-' || digits(s + 5, 2, &M) ||
	    s[7] != '-' || digits(s + 8, 2, &D) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
	    digits(s + 11, 2, &h) || s[13] != ':' || digits(s + 14, 2, &m) ||
	    s[16] != ':' || digits(s + 17, 2, &sec))
		return err_set(err, TT_EPARSE,
		               "'%s': expected RFC 3339 (2026-07-14T18:00:00Z) or epoch milliseconds", s);
	if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 60)
		return err_set(err, TT_EPARSE, "'%s': date or time field out of range", s);
	const char *p = s + 19;
	int64_t frac = 0;
	if (*p == '.') {
		p++;
		int nd = 0;
		while (isdigit((unsigned char)*p)) {
			if (nd < 9) {
				frac = frac * 10 + (*p - '0');
				nd++;
			}
			p++;
		}
		if (nd == 0)
			return err_set(err, TT_EPARSE, "'%s': empty fraction of a second", s);
		while (nd++ < 9)
			frac *= 10;
	}
	int64_t off = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int oh, om;
		if (digits(p + 1, 2, &oh) || p[3] != ':' || digits(p + 4, 2, &om) || oh > 23 || om > 59)
			return err_set(err, TT_EPARSE, "'%s': bad UTC offset", s);
		off = (int64_t)(oh * 3600 + om * 60) * (*p == '-' ? -1 : 1);
		p += 6;
	} else {
		return err_set(err, TT_EPARSE, "'%s': missing time zone (Z or +hh:mm)", s);
	}
	if (*p)
		return err_set(err, TT_EPARSE, "'%s': trailing characters", s);
	int64_t days = days_from_civil(Y, (unsigned)M, (unsigned)D);
	int64_t secs = days * 86400 + h * 3600 + m * 60 + sec - off;
	/* nanoseconds in an int64_t reach from 1677-09-21T00:12:44Z to
	 * 2262-04-11T23:47:16.854775807Z; the four-digit years do not */
	if (secs < INT64_MIN / 1000000000 || secs > (INT64_MAX - frac) / 1000000000)
		return err_set(err, TT_EPARSE, "'%s': outside the years 1677 to 2262", s);
	*out_ns = secs * 1000000000 + frac;
	return 0;
}

int time_parse_range(const char *s, int64_t *from_ns, int64_t *to_ns, Err *err)
{
	const char *dots = s ? strstr(s, "..") : NULL;
	if (dots == NULL)
		return err_set(err, TT_EPARSE, "'%s': expected a range A..B", s ? s : "");
	char a[128], b[128];
	size_t la = (size_t)(dots - s), lb = strlen(dots + 2);
	if (la >= sizeof a || lb >= sizeof b)
		return err_set(err, TT_EPARSE, "time range too long");
	memcpy(a, s, la);
	a[la] = '\0';
	memcpy(b, dots + 2, lb + 1);
	*from_ns = INT64_MIN;
	*to_ns = INT64_MAX;
	if (la && time_parse(a, from_ns, err))
		return TT_EPARSE;
	if (lb && time_parse(b, to_ns, err))
		return TT_EPARSE;
	if (*from_ns >= *to_ns)
		return err_set(err, TT_EPARSE, "'%s': range is empty (start is not before end)", s);
	return 0;
}

void time_format(int64_t ns, char *out, unsigned outsz)
{
	int64_t secs = ns / 1000000000, rem = ns % 1000000000;
	if (rem < 0) {
		rem += 1000000000;
		secs--;
	}
	int64_t days = secs / 86400, sod = secs % 86400;
	if (sod < 0) {
		sod += 86400;
		days--;
	}
	/* civil_from_days */
	int64_t z = days + 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t y = (int64_t)yoe + era * 400;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	unsigned d = doy - (153 * mp + 2) / 5 + 1;
	unsigned m = mp < 10 ? mp + 3 : mp - 9;
	y += m <= 2;
	snprintf(out, outsz, "%04lld-%02u-%02uT%02d:%02d:%02d.%03dZ", (long long)y, m, d,
	         (int)(sod / 3600), (int)(sod / 60 % 60), (int)(sod % 60), (int)(rem / 1000000));
}
