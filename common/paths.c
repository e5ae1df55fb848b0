/* paths.c - the share folder at run time (paths.h). */
#define _XOPEN_SOURCE 700  /* realpath */
#include "paths.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef TT_SOURCE_DIR
#define TT_SOURCE_DIR "."
#endif
#ifndef TT_BIN_TO_SHARE
#define TT_BIN_TO_SHARE "../share/tailtriage"
#endif

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

int tt_self_path(char *out, size_t n)
{
	ssize_t k = readlink("/proc/self/exe", out, n - 1);
	if (k <= 0 || (size_t)k >= n - 1)
		return -1;
	out[k] = '\0';
	return 0;
}

static int is_dir(const char *p)
{
	struct stat sb;
	return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

const char *tt_share_dir(void)
{
	static char dir[PATH_MAX];
	const char *e = getenv("TAILTRIAGE_SHARE");
	if (e && *e)
		return e;
	if (dir[0])
		return dir;
	char self[PATH_MAX];
	if (tt_self_path(self, sizeof self) == 0) {
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			char cand[PATH_MAX + 64];
			snprintf(cand, sizeof cand, "%s/%s", self, TT_BIN_TO_SHARE);
			char real[PATH_MAX];
			if (is_dir(cand) && realpath(cand, real)) {
				snprintf(dir, sizeof dir, "%s", real);
				return dir;
			}
		}
	}
	snprintf(dir, sizeof dir, "%s", TT_SOURCE_DIR);
	return dir;
}

int tt_share_path(const char *rel, char *out, size_t n)
{
	snprintf(out, n, "%s/%s", tt_share_dir(), rel);
	struct stat sb;
	return stat(out, &sb) == 0 ? 0 : -1;
}

const char *tt_self_command(void)
{
	static char cmd[PATH_MAX];
	if (cmd[0])
		return cmd;
	char self[PATH_MAX];
	if (tt_self_path(self, sizeof self)) {
		snprintf(cmd, sizeof cmd, "tailtriage");
		return cmd;
	}
	snprintf(cmd, sizeof cmd, "%s", self);
	const char *path = getenv("PATH");
	struct stat me;
	if (path == NULL || stat(self, &me) != 0)
		return cmd;
	/* the first tailtriage on $PATH, as a shell would find it */
	const char *p = path;
	while (*p) {
		const char *end = strchr(p, ':');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char cand[PATH_MAX];
		if (len > 0 && len < sizeof cand - 16) {
			snprintf(cand, sizeof cand, "%.*s/tailtriage", (int)len, p);
			struct stat sb;
			if (access(cand, X_OK) == 0 && stat(cand, &sb) == 0) {
				if (sb.st_dev == me.st_dev && sb.st_ino == me.st_ino)
					snprintf(cmd, sizeof cmd, "tailtriage");
				return cmd;
			}
		}
		if (end == NULL)
			break;
		p = end + 1;
	}
	return cmd;
}
