/*
 * paths.h - where the files shipped with tailtriage (endpoint models, the
 * drill catalog, observation sheets) are at run time.
 *
 * The share folder holds them in the same layout as the source tree:
 * models/, data/sheets/, drills/catalog/. It is the first of:
 *   $TAILTRIAGE_SHARE;
 *   the installed one, found from the running binary (BINDIR/../share/
 *   tailtriage after `cmake --install`), when it exists;
 *   the source tree the binary was built from (a build that is not
 *   installed).
 */
#ifndef TT_PATHS_H
#define TT_PATHS_H

#include <stddef.h>

/* The share folder (see above), absolute; never NULL. */
const char *tt_share_dir(void);

/* Writes share_dir/rel into out (size n). Returns 0 when that file or
 * folder exists, -1 when it does not (out is written either way). */
int tt_share_path(const char *rel, char *out, size_t n);

/* The absolute path of the running binary into out; -1 when unknown. */
int tt_self_path(char *out, size_t n);

/* How a user can run this binary from where they are: "tailtriage" when
 * that name on $PATH is this binary, else its absolute path. */
const char *tt_self_command(void);

#endif
