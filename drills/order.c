/*
 * order.c - seeded shuffles of a drill's choices (see order.h).
 *
 * The generator is splitmix64: a 64-bit counter passed through a fixed
 * mixing function. It is small, fast, identical on every platform, and
 * each output is equidistributed over 64 bits, which is ample for
 * shuffling lists of a few dozen items. Positions are drawn with rejection
 * sampling, so every permutation of a list is equally likely
 * (Fisher-Yates with unbiased draws).
 */
#include "order.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void drill_rng_seed(DrillRng *r, uint64_t seed)
{
	r->s = seed;
}

uint64_t drill_rng_next(DrillRng *r)
{
	uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

uint32_t drill_rng_below(DrillRng *r, uint32_t n)
{
	if (n <= 1)
		return 0;
	/* the largest multiple of n that fits: values at or above it would
	 * favour the small residues */
	uint64_t limit = UINT64_MAX - UINT64_MAX % n;
	uint64_t x;
	do
		x = drill_rng_next(r);
	while (x >= limit);
	return (uint32_t)(x % n);
}

static int *shuffled(DrillRng *r, int n)
{
	int *p = xcalloc((size_t)(n > 0 ? n : 1), sizeof *p);
	for (int i = 0; i < n; i++)
		p[i] = i;
	for (int i = n - 1; i > 0; i--) {
		int j = (int)drill_rng_below(r, (uint32_t)i + 1);
		int t = p[i];
		p[i] = p[j];
		p[j] = t;
	}
	return p;
}

void drill_order_init(DrillOrder *o, const Drill *d, uint32_t seed)
{
	memset(o, 0, sizeof *o);
	o->seed = seed;
	DrillRng r;
	drill_rng_seed(&r, seed);
	int diag = d->kind == DRILL_DIAGNOSIS;
	o->n_hyp = diag ? d->n_hyp_choices : 0;
	o->n_check = diag ? d->n_check_choices : 0;
	o->n_decision = diag ? d->n_decision_choices : 0;
	o->hyp = shuffled(&r, o->n_hyp);
	o->check = shuffled(&r, o->n_check);
	o->decision = shuffled(&r, o->n_decision);
}

void drill_order_fini(DrillOrder *o)
{
	free(o->hyp);
	free(o->check);
	free(o->decision);
	memset(o, 0, sizeof *o);
}

uint32_t drill_seed_auto(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	DrillRng r;
	drill_rng_seed(&r, ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) ^
	                       ((uint64_t)getpid() << 32));
	return (uint32_t)(drill_rng_next(&r) >> 32);
}

int drill_seed_parse(const char *s, uint32_t *out)
{
	if (s == NULL || *s < '0' || *s > '9')
		return -1;
	char *end = NULL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || v > DRILL_SEED_MAX)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static void ids_json(Buf *out, const DrillChoice *c, const int *p, int n)
{
	buf_addc(out, '[');
	for (int i = 0; i < n; i++) {
		if (i)
			buf_addc(out, ',');
		buf_add_json_str(out, c[p[i]].id, strlen(c[p[i]].id));
	}
	buf_addc(out, ']');
}

void drill_order_json(const Drill *d, const DrillOrder *o, Buf *out)
{
	buf_printf(out, "{\"seed\":%lu,\"hypotheses\":", (unsigned long)o->seed);
	ids_json(out, d->hyp_choices, o->hyp, o->n_hyp);
	buf_adds(out, ",\"checks\":");
	ids_json(out, d->check_choices, o->check, o->n_check);
	buf_adds(out, ",\"decisions\":");
	ids_json(out, d->decision_choices, o->decision, o->n_decision);
	buf_addc(out, '}');
}
