/*
 * ward — the stop signals of a long-running front end, to a signalfd (see
 * stopsig.h).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "stopsig.h"

/* The signals that stop a server the way end of input does. */
static const int stop_signals[] = {SIGTERM, SIGINT, SIGHUP};

int util_stop_signal_fd(void)
{
	struct sigaction sa;
	sigset_t set;
	int fd;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(stop_signals) / sizeof(*stop_signals);
	     i++) {
		int sig = stop_signals[i];

		if (sig != SIGTERM && sigaction(sig, NULL, &sa) == 0 &&
		    sa.sa_handler == SIG_IGN)
			continue;
		sigaddset(&set, sig);
	}
	fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd < 0)
		return -1;
	if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int util_stop_signal_read(int fd)
{
	struct signalfd_siginfo si;
	ssize_t n;

	do
		n = read(fd, &si, sizeof(si));
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(si) ? (int)si.ssi_signo : 0;
}

const char *util_stop_signal_name(int sig)
{
	return sig == SIGTERM ? "TERM" : sig == SIGINT ? "INT" : "HUP";
}

void util_die_of(int sig)
{
	sigset_t set;

	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	raise(sig);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}
