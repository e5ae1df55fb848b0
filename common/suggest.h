/*
 * suggest.h - "did you mean": the closest of a fixed list of names to a
 * word a user mistyped (a command, an option, a check).
 *
 * Closeness is the optimal string alignment distance: the fewest single
 * byte insertions, deletions, substitutions and transpositions of two
 * adjacent bytes that turn one string into the other (so "reprot" is one
 * edit from "report", as "windwo" is from "window"). Case is ignored.
 */
#ifndef TT_SUGGEST_H
#define TT_SUGGEST_H

#include <stddef.h>

/* The optimal string alignment distance between a and b, ignoring ASCII
 * case. Strings longer than SUGGEST_MAX_LEN bytes are compared on their
 * first SUGGEST_MAX_LEN bytes plus the difference of their lengths. */
#define SUGGEST_MAX_LEN 64
int suggest_distance(const char *a, const char *b);

/* The names in names[0 .. n) close enough to word to be offered: those
 * at the smallest distance (0 for a name that differs only in case),
 * when that distance is at most a third of the longer of the two words
 * (rounded up, at least 1, at most 3) and less than word's length, or the names word is a prefix of (two bytes at
 * least), when no name is that close. Writes at most max indexes into
 * idx, in the order of names; returns how many (0: nothing to offer). */
int suggest_pick(const char *word, const char *const *names, int n, int *idx, int max);

#endif
