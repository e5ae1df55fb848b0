/*
 * sim_rng.h - the simulator's own pseudo-random numbers.
 *
 * xoshiro256** seeded through splitmix64 (Blackman and Vigna). The C
 * library's rand() is never used: its sequence differs between libcs and
 * its state is global. Every stream here is a value the caller owns, so
 * independent parts of the model (arrivals, each request's draws, trace
 * sampling) get independent streams and changing one does not shift the
 * others.
 *
 * Floating-point draws use only log, exp and sqrt from libm. Output is
 * deterministic for a given build and platform.
 */
#ifndef TT_SIM_RNG_H
#define TT_SIM_RNG_H

#include <math.h>
#include <stdint.h>

typedef struct SimRng {
	uint64_t s[4];
	int has_spare;         /* a second normal deviate is cached */
	double spare;
} SimRng;

/* One step of splitmix64: advances *x and returns a well-mixed value. */
static inline uint64_t sim_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Seeds a stream from a seed and a stream number (any values). */
static inline void sim_rng_seed(SimRng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ (stream * 0xd1342543de82ef95ull + 0x2545f4914f6cdd1dull);
	for (int i = 0; i < 4; i++)
		r->s[i] = sim_splitmix64(&x);
	r->has_spare = 0;
	r->spare = 0;
}

static inline uint64_t sim_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t sim_rng_u64(SimRng *r)
{
	uint64_t *s = r->s;
	uint64_t out = sim_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = sim_rotl(s[3], 45);
	return out;
}

/* Uniform in [0, 1) with 53 random bits. */
static inline double sim_rng_unit(SimRng *r)
{
	return (double)(sim_rng_u64(r) >> 11) * 0x1.0p-53;
}

/* Uniform in (0, 1]: safe to take the log of. */
static inline double sim_rng_unit_pos(SimRng *r)
{
	return ((double)(sim_rng_u64(r) >> 11) + 1.0) * 0x1.0p-53;
}

/* Uniform integer in [0, n), n > 0 (Lemire's multiply-shift; the tiny bias
 * for huge n does not matter here). */
static inline uint32_t sim_rng_below(SimRng *r, uint32_t n)
{
	return (uint32_t)(((sim_rng_u64(r) >> 32) * (uint64_t)n) >> 32);
}

/* Exponential with the given mean. */
static inline double sim_rng_exp(SimRng *r, double mean)
{
	return -mean * log(sim_rng_unit_pos(r));
}

/* Standard normal (Marsaglia's polar method: no trigonometry; the second
 * deviate is kept for the next call). */
static inline double sim_rng_normal(SimRng *r)
{
	if (r->has_spare) {
		r->has_spare = 0;
		return r->spare;
	}
	double u, v, s;
	do {
		u = 2.0 * sim_rng_unit(r) - 1.0;
		v = 2.0 * sim_rng_unit(r) - 1.0;
		s = u * u + v * v;
	} while (s >= 1.0 || s == 0.0);
	double m = sqrt(-2.0 * log(s) / s);
	r->spare = v * m;
	r->has_spare = 1;
	return u * m;
}

/* Log-normal given its median and the sigma of the underlying normal. */
static inline double sim_rng_lognormal(SimRng *r, double median, double sigma)
{
	return median * exp(sigma * sim_rng_normal(r));
}

#endif
