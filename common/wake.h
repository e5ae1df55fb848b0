/*
 * wake.h - a worker thread's "something is ready" for a poll() loop.
 *
 * A non-blocking pipe: the worker writes a byte when it has handed over a
 * result, the loop polls the read end beside its other descriptors and
 * drains it before it looks at what is ready. Signals that arrive while
 * the pipe is full are merged (the loop wakes once for all of them), so a
 * worker never blocks on it.
 */
#ifndef TT_WAKE_H
#define TT_WAKE_H

typedef struct Wake {
	int fd[2];                /* read end, write end; -1 when closed */
} Wake;

/* A closed Wake, for a struct that may be torn down before wake_open(). */
#define WAKE_CLOSED ((Wake){{-1, -1}})

/* 0, or -1 with errno set (the Wake is then closed). */
int wake_open(Wake *w);
void wake_close(Wake *w);      /* also on a closed one */

/* The descriptor to poll for POLLIN. */
int wake_fd(const Wake *w);

/* From any thread: wakes the loop. */
void wake_signal(Wake *w);

/* From the loop: takes every pending signal; 1 when there was one. */
int wake_drain(Wake *w);

#endif
