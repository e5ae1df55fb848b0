/*
 * fmt.c - number and time formats for the screens.
 */
#include "fmt.h"

#include <math.h>
#include <stdio.h>
#include <time.h>

static int approx;

void fmt_set_approx(int on)
{
	approx = on != 0;
}

int fmt_approx(void)
{
	return approx;
}

void fmt_ms(char *out, size_t sz, double v, int64_t n, int applicable)
{
	const char *m = approx ? "~" : "";
	if (!applicable)
		snprintf(out, sz, "-");
	else if (n == 0 || isnan(v))
		snprintf(out, sz, "?");
	else if (fabs(v) < 10)
		snprintf(out, sz, "%s%.2f", m, v);
	else if (fabs(v) < 1000)
		snprintf(out, sz, "%s%.1f", m, v);
	else if (fabs(v) < 100000)
		snprintf(out, sz, "%s%.0f", m, v);
	else
		snprintf(out, sz, "%s%.0fk", m, v / 1000);
}

void fmt_delta_ms(char *out, size_t sz, double now, int64_t n_now, double base, int64_t n_base)
{
	if (n_now == 0 || n_base == 0 || isnan(now) || isnan(base)) {
		snprintf(out, sz, "?");
		return;
	}
	double d = now - base;
	const char *m = approx ? "~" : "";
	if (fabs(d) < 0.05)
		snprintf(out, sz, "%s0.0", m);
	else if (fabs(d) < 1000)
		snprintf(out, sz, "%s%+.1f", m, d);
	else
		snprintf(out, sz, "%s%+.0f", m, d);
}

void fmt_count(char *out, size_t sz, int64_t n)
{
	if (n >= 10000000) {
		snprintf(out, sz, "%.2fM", (double)n / 1e6);
		return;
	}
	char raw[32], tmp[48];
	int digits = snprintf(raw, sizeof raw, "%lld", (long long)(n < 0 ? -n : n));
	size_t k = 0;
	if (n < 0)
		tmp[k++] = '-';
	for (int i = 0; i < digits; i++) {
		tmp[k++] = raw[i];
		int left = digits - i - 1;
		if (left > 0 && left % 3 == 0)
			tmp[k++] = ',';
	}
	tmp[k] = '\0';
	snprintf(out, sz, "%s", tmp);
}

void fmt_pct(char *out, size_t sz, double ratio)
{
	if (isnan(ratio))
		snprintf(out, sz, "?");
	else
		snprintf(out, sz, "%.1f%%", 100.0 * ratio);
}

void fmt_clock(char *out, size_t sz, int64_t unix_s)
{
	time_t t = (time_t)unix_s;
	struct tm tm;
	gmtime_r(&t, &tm);
	snprintf(out, sz, "%02d:%02d:%02dZ", tm.tm_hour, tm.tm_min, tm.tm_sec);
}

static void split_ns(int64_t ns, struct tm *tm)
{
	time_t t = (time_t)(ns / 1000000000);
	if (ns < 0 && ns % 1000000000)
		t -= 1;
	gmtime_r(&t, tm);
}

void fmt_range(char *out, size_t sz, int64_t from_ns, int64_t to_ns)
{
	struct tm a, b;
	split_ns(from_ns, &a);
	split_ns(to_ns, &b);
	if (a.tm_year == b.tm_year && a.tm_yday == b.tm_yday)
		snprintf(out, sz, "%04d-%02d-%02d %02d:%02d:%02d..%02d:%02d:%02dZ", a.tm_year + 1900,
		         a.tm_mon + 1, a.tm_mday, a.tm_hour, a.tm_min, a.tm_sec, b.tm_hour, b.tm_min,
		         b.tm_sec);
	else
		snprintf(out, sz, "%04d-%02d-%02d %02d:%02d:%02d..%04d-%02d-%02d %02d:%02d:%02dZ",
		         a.tm_year + 1900, a.tm_mon + 1, a.tm_mday, a.tm_hour, a.tm_min, a.tm_sec,
		         b.tm_year + 1900, b.tm_mon + 1, b.tm_mday, b.tm_hour, b.tm_min, b.tm_sec);
}

void fmt_dur(char *out, size_t sz, int64_t ns)
{
	if (ns < 0)
		ns = 0;
	double s = (double)ns / 1e9;
	int64_t is = ns / 1000000000;
	if (s < 1)
		snprintf(out, sz, "%.0fms", s * 1000);
	else if (s < 60)
		snprintf(out, sz, "%.1fs", s);
	else if (is < 3600)
		snprintf(out, sz, "%lldm%02llds", (long long)(is / 60), (long long)(is % 60));
	else if (is < 86400)
		snprintf(out, sz, "%lldh%02lldm", (long long)(is / 3600), (long long)(is % 3600 / 60));
	else
		snprintf(out, sz, "%lldd%02lldh", (long long)(is / 86400), (long long)(is % 86400 / 3600));
}
