/*
 * suggest.c - the edit distance behind "did you mean" (suggest.h).
 *
 * Two rows of the Damerau-Levenshtein table plus the one before them are
 * enough for the restricted (optimal string alignment) variant; the names
 * compared are short, so the rows live on the stack.
 */
#include "suggest.h"

#include <string.h>

static int lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static int min3(int a, int b, int c)
{
	int m = a < b ? a : b;
	return m < c ? m : c;
}

int suggest_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), extra = 0;
	/* past the cap the tails count as plain insertions or deletions */
	if (la > SUGGEST_MAX_LEN || lb > SUGGEST_MAX_LEN) {
		size_t ca = la > SUGGEST_MAX_LEN ? SUGGEST_MAX_LEN : la;
		size_t cb = lb > SUGGEST_MAX_LEN ? SUGGEST_MAX_LEN : lb;
		extra = (la - ca) > (lb - cb) ? (la - ca) - (lb - cb) : (lb - cb) - (la - ca);
		la = ca;
		lb = cb;
	}
	int rows[3][SUGGEST_MAX_LEN + 1];
	int *prev2 = rows[0], *prev = rows[1], *cur = rows[2];
	for (size_t j = 0; j <= lb; j++)
		prev[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int ai = lower((unsigned char)a[i - 1]), bj = lower((unsigned char)b[j - 1]);
			int cost = ai != bj;
			int d = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
			if (i > 1 && j > 1 && ai == lower((unsigned char)b[j - 2]) &&
			    lower((unsigned char)a[i - 2]) == bj && prev2[j - 2] + 1 < d)
				d = prev2[j - 2] + 1;
			cur[j] = d;
		}
		int *t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb] + (int)extra;
}

static int is_prefix(const char *word, const char *name)
{
	size_t n = strlen(word);
	if (n < 2 || n >= strlen(name))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (lower((unsigned char)word[i]) != lower((unsigned char)name[i]))
			return 0;
	return 1;
}

int suggest_pick(const char *word, const char *const *names, int n, int *idx, int max)
{
	int best = -1, found = 0;
	size_t lw = strlen(word);
	for (int i = 0; i < n; i++) {
		size_t ln = strlen(names[i]), longer = lw > ln ? lw : ln;
		int limit = (int)((longer + 2) / 3);
		if (limit < 1)
			limit = 1;
		if (limit > 3)
			limit = 3;
		int d = suggest_distance(word, names[i]);
		if (d > limit || (size_t)d >= lw)
			continue;
		if (best < 0 || d < best) {
			best = d;
			found = 0;
		}
		if (d == best && found < max)
			idx[found++] = i;
	}
	if (found)
		return found;
	for (int i = 0; i < n && found < max; i++)
		if (is_prefix(word, names[i]))
			idx[found++] = i;
	return found;
}
