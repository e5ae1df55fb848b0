/*
 * stop.h - cleaning up a command's temporary folder when a stop signal
 * (SIGINT, SIGTERM, SIGHUP: Ctrl-C, kill, a closed terminal) ends it.
 *
 * cli_stop_start() blocks the stop signals in the calling thread, so every
 * thread created after it inherits the block, and starts a watcher thread
 * that takes them with sigwait(). On a signal the watcher records it, sets
 * the flags the command gave it (a dashboard's quit flag, a worker's stop
 * flag) and then either returns, leaving the command to stop at its own
 * pace, or, while the command is in a part that cannot be interrupted
 * (cli_stop_hard(cs, 1)), removes the folder itself, says so and ends the
 * process with status 128 + the signal. A signal that was ignored when the
 * command started (nohup) stays ignored.
 *
 * Call cli_stop_start() before any thread is created and before the folder
 * is filled; call cli_stop_finish() after removing the folder.
 */
#ifndef TT_STOP_H
#define TT_STOP_H

#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>

typedef struct CliStop {
	sigset_t set;              /* the stop signals taken by the watcher */
	const char *tmp;           /* the command's temporary folder (borrowed) */
	const char *what;          /* "drill replay": names the command in the message */
	atomic_int *flag1, *flag2; /* set to 1 on a signal; NULL: none */
	atomic_int hard;           /* 1: the watcher removes tmp and exits */
	atomic_int sig;            /* the signal that stopped us, 0: none */
} CliStop;

/* Creates the folder $TMPDIR/NAME-XXXXXX (else under /tmp) and returns
 * its path (free() it), or NULL with errno set. */
char *cli_stop_mkdtemp(const char *name);

/* Starts the watcher for folder tmp (which must outlive the process's use
 * of cs). The watcher begins in hard mode. Returns 0, or -1 when no thread
 * could be started (the command then runs without the cleanup). */
int cli_stop_start(CliStop *cs, const char *tmp, const char *what, atomic_int *flag1,
                   atomic_int *flag2);

/* Switches hard mode on (the watcher cleans up and exits) or off (the
 * command notices cli_stop_signal() or its flags and returns). */
void cli_stop_hard(CliStop *cs, int on);

/* The signal that stopped the command, 0 when none. */
int cli_stop_signal(CliStop *cs);

/* After the folder is removed: when a signal came, prints "interrupted:
 * WHAT stopped, temporary files removed" and returns 128 + the signal;
 * else returns rc. */
int cli_stop_finish(CliStop *cs, int rc);

#endif
