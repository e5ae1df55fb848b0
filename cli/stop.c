/*
 * stop.c - the stop-signal watcher of commands with a temporary folder
 * (see stop.h). The signals are blocked rather than caught, so no handler
 * runs in the middle of SQLite or ncurses: the watcher is an ordinary
 * thread and may call anything.
 */
#include "stop.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "buf.h"
#include "cli.h"

char *cli_stop_mkdtemp(const char *name)
{
	const char *base = getenv("TMPDIR");
	Buf b;
	buf_init(&b);
	buf_printf(&b, "%s/%s-XXXXXX", base && *base ? base : "/tmp", name);
	char *path = xstrdup(buf_str(&b));
	buf_fini(&b);
	if (mkdtemp(path) != NULL)
		return path;
	int e = errno;
	free(path);
	errno = e;
	return NULL;
}

static void say(const CliStop *cs)
{
	fprintf(stderr, "tailtriage: interrupted: %s stopped, temporary files removed\n", cs->what);
}

static void *watch(void *arg)
{
	CliStop *cs = arg;
	int sig = 0;
	if (sigwait(&cs->set, &sig) != 0)
		return NULL;
	atomic_store(&cs->sig, sig);
	if (cs->flag1)
		atomic_store(cs->flag1, 1);
	if (cs->flag2)
		atomic_store(cs->flag2, 1);
	if (atomic_load(&cs->hard)) {
		cli_remove_tree(cs->tmp);
		say(cs);
		_exit(128 + sig);
	}
	return NULL;
}

int cli_stop_start(CliStop *cs, const char *tmp, const char *what, atomic_int *flag1,
                   atomic_int *flag2)
{
	cs->tmp = tmp;
	cs->what = what;
	cs->flag1 = flag1;
	cs->flag2 = flag2;
	atomic_init(&cs->hard, 1);
	atomic_init(&cs->sig, 0);
	sigemptyset(&cs->set);
	static const int stop_sigs[] = {SIGINT, SIGTERM, SIGHUP};
	for (size_t k = 0; k < sizeof stop_sigs / sizeof stop_sigs[0]; k++) {
		struct sigaction old;
		if (sigaction(stop_sigs[k], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaddset(&cs->set, stop_sigs[k]);
	}
	pthread_sigmask(SIG_BLOCK, &cs->set, NULL);
	pthread_t watcher;
	if (pthread_create(&watcher, NULL, watch, cs) != 0) {
		pthread_sigmask(SIG_UNBLOCK, &cs->set, NULL);
		return -1;
	}
	pthread_detach(watcher);
	return 0;
}

void cli_stop_hard(CliStop *cs, int on)
{
	atomic_store(&cs->hard, on);
}

int cli_stop_signal(CliStop *cs)
{
	return atomic_load(&cs->sig);
}

int cli_stop_finish(CliStop *cs, int rc)
{
	int sig = atomic_load(&cs->sig);
	if (sig == 0)
		return rc;
	say(cs);
	return 128 + sig;
}
