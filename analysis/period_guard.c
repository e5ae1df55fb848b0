/*
 * period_guard.c - the comparisons that have nothing to compare, refused
 * the same way by `report`, `diagnose` and the dashboard's Board (see
 * analysis_period_guard() in analysis.h).
 */
#include <stdio.h>

#include "analysis.h"

static int count_roots(void *ctx, const char *svc, const char *op, int64_t n)
{
	(void)svc, (void)op;
	*(int64_t *)ctx += n;
	return 0;
}

int analysis_period_guard(Store *st, const Period *p, double w, double b, double window_of,
                          Err *err)
{
	char r[96];
	if (p->has_baseline && p->base.from == p->win.from && p->base.to == p->win.to) {
		time_range_format(p->win, r, sizeof r);
		return err_set(err, TT_EINVAL,
		               "the baseline is the window (%s): every comparison would find no "
		               "change; choose another --baseline (before: the same length just "
		               "before the window)",
		               r);
	}
	if (st == NULL || (w > 0 && (!p->has_baseline || b > 0)))
		return 0;
	int64_t all = 0;
	Err ignore = {0};
	store_root_operations(st, INT64_MIN, INT64_MAX, count_roots, &all, &ignore);
	if (all == 0)
		return 0; /* no traces at all: metrics and sheets only */
	if (!(w > 0)) {
		time_range_format(p->win, r, sizeof r);
		return err_set(err, TT_EINVAL,
		               "the window %s holds no request of the endpoint (%lld root spans in the "
		               "whole database): choose --window inside the data",
		               r, (long long)all);
	}
	time_range_format(p->base, r, sizeof r);
	if (window_of > w)
		w = window_of; /* a sampled window: the count of the range, not of the sample */
	return err_set(err, TT_EINVAL,
	               "the baseline %s holds no request of the endpoint (the window holds %.0f, the "
	               "whole database %lld root spans): nothing to compare against; choose "
	               "--baseline inside the data",
	               r, w, (long long)all);
}
