/*
 * evidence_name.h - the one place that spells an evidence name built from
 * data ("pool.<pool>.occupancy", "dep.<service>.service.p99_ms@baseline").
 *
 * Names from data (pool, service, class, host) are normalised the same
 * way everywhere (evidence_segment: lower case, [a-z0-9_], anything else
 * '_'), so a pool named "Pricing-Pool" is "pool.pricing_pool.*" in the
 * evidence, the catalog, the checks and the dashboard alike.
 */
#ifndef TT_EVIDENCE_NAME_H
#define TT_EVIDENCE_NAME_H

#include <stddef.h>

/* Writes "<family>.<segment of key>.<field>" into out (at most sz bytes,
 * always terminated), with "@baseline" appended when baseline is non-zero.
 * field may be NULL or "" (then no trailing ".field"). Returns out. */
char *evidence_name(char *out, size_t sz, const char *family, const char *key,
                    const char *field, int baseline);

#endif
