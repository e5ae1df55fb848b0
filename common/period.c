/* period.c - see period.h. */
#include "period.h"

#include <stdio.h>

#include "timefmt.h"

int time_range_eq(TimeRange a, TimeRange b)
{
	return a.from == b.from && a.to == b.to;
}

int time_range_has(TimeRange r, int64_t t)
{
	return t >= r.from && t < r.to;
}

int time_range_open(TimeRange r)
{
	return r.from == INT64_MIN || r.to == INT64_MAX;
}

TimeRange time_range_before(TimeRange r)
{
	return (TimeRange){r.from - (r.to - r.from), r.from};
}

void time_range_format(TimeRange r, char *out, size_t sz)
{
	char a[40] = "", b[40] = "";
	if (r.from != INT64_MIN)
		time_format(r.from, a, sizeof a);
	if (r.to != INT64_MAX)
		time_format(r.to, b, sizeof b);
	snprintf(out, sz, "%s..%s", a, b);
}

int period_eq(const Period *a, const Period *b)
{
	return time_range_eq(a->win, b->win) && a->has_baseline == b->has_baseline &&
	       (!a->has_baseline || time_range_eq(a->base, b->base));
}
