/* wake.c - see wake.h. */
#include "wake.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int wake_open(Wake *w)
{
	*w = WAKE_CLOSED;
	if (pipe(w->fd) != 0) {
		w->fd[0] = w->fd[1] = -1;
		return -1;
	}
	for (int i = 0; i < 2; i++) {
		int fl = fcntl(w->fd[i], F_GETFL);
		if (fl < 0 || fcntl(w->fd[i], F_SETFL, fl | O_NONBLOCK) != 0 ||
		    fcntl(w->fd[i], F_SETFD, FD_CLOEXEC) != 0) {
			int e = errno;
			wake_close(w);
			errno = e;
			return -1;
		}
	}
	return 0;
}

void wake_close(Wake *w)
{
	for (int i = 0; i < 2; i++) {
		if (w->fd[i] >= 0)
			close(w->fd[i]);
		w->fd[i] = -1;
	}
}

int wake_fd(const Wake *w)
{
	return w->fd[0];
}

void wake_signal(Wake *w)
{
	char b = 1;
	/* a full pipe (EAGAIN) has a wake-up pending already */
	ssize_t n = write(w->fd[1], &b, 1);
	(void)n;
}

int wake_drain(Wake *w)
{
	char buf[64];
	int got = 0;
	while (read(w->fd[0], buf, sizeof buf) > 0)
		got = 1;
	return got;
}
