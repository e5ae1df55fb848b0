/*
 * attrs.h - reads the top-level members of a span's attribute JSON object
 * ({"key": value, ...}) for display, without a JSON library (the TUI does
 * not link cJSON).
 *
 * Tolerant by design: it is a viewer, not a validator. String values are
 * unescaped (\uXXXX included, so "\u001b[2J" becomes a real ESC byte that
 * the sanitizer then neutralises); other values are copied as raw text.
 * Malformed input ends the iteration.
 */
#ifndef TT_ATTRS_H
#define TT_ATTRS_H

#include <stddef.h>

/* Reads the member at json[*pos...]. Returns 1 with key and val filled
 * (truncated to their sizes, always terminated) and *pos advanced, or 0 at
 * the end or on malformed input. Start with *pos = 0. */
int attrs_next(const char *json, size_t *pos, char *key, size_t ksz, char *val, size_t vsz);

/* Reads the next element of a JSON array at json[*pos...] into val: a
 * string unescaped, anything else (an object, say) as raw text for
 * attrs_next(). Returns 1, or 0 at the end or on malformed input. Start
 * with *pos = 0. */
int attrs_elem_next(const char *json, size_t *pos, char *val, size_t vsz);

#endif
