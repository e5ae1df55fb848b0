/*
 * evidence_name.c - evidence names built from data; see evidence_name.h.
 */
#include "evidence_name.h"

#include <stdio.h>

#include "evidence.h"

char *evidence_name(char *out, size_t sz, const char *family, const char *key,
                    const char *field, int baseline)
{
	char seg[128];
	evidence_segment(key ? key : "", seg, sizeof seg);
	int has_field = field && *field;
	snprintf(out, sz, "%s.%s%s%s%s", family, seg, has_field ? "." : "", has_field ? field : "",
	         baseline ? "@baseline" : "");
	return out;
}
