/*
 * ward — the caller's terminal settings across a confined command (tty.h).
 *
 * Only descriptors 0-2 are looked at: those are what a confined command
 * inherits. Each terminal is saved once (by device), through the first
 * descriptor that refers to it, and restored through the same one.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "libward/internal.h"
#include "ward/tty.h"

struct ward_tty_one {
	int fd;
	dev_t rdev;
	struct termios tio;
	bool has_ws;
	struct winsize ws;
};

struct ward_tty_state {
	struct ward_tty_one t[3];
	int n;
};

int ward_tty_save(ward_tty_state **out)
{
	ward_tty_state *s;

	if (!out)
		return ward_err(WARD_EINVAL, "tty: no output pointer");
	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return ward_err(-ENOMEM, "out of memory");
	for (int fd = 0; fd <= 2; fd++) {
		struct ward_tty_one *o = &s->t[s->n];
		struct stat st;
		bool seen = false;

		if (!isatty(fd) || fstat(fd, &st) != 0)
			continue;
		for (int i = 0; i < s->n; i++)
			seen = seen || s->t[i].rdev == st.st_rdev;
		if (seen || tcgetattr(fd, &o->tio) != 0)
			continue;
		o->fd = fd;
		o->rdev = st.st_rdev;
		o->has_ws = ioctl(fd, TIOCGWINSZ, &o->ws) == 0;
		s->n++;
	}
	if (s->n == 0) {
		free(s);
		return 0;
	}
	*out = s;
	return 0;
}

/* Whether two termios settings differ in what a person would notice. */
static bool tio_differs(const struct termios *a, const struct termios *b)
{
	return a->c_iflag != b->c_iflag || a->c_oflag != b->c_oflag ||
	       a->c_cflag != b->c_cflag || a->c_lflag != b->c_lflag ||
	       memcmp(a->c_cc, b->c_cc, sizeof(a->c_cc)) != 0 ||
	       cfgetispeed(a) != cfgetispeed(b) ||
	       cfgetospeed(a) != cfgetospeed(b);
}

int ward_tty_restore(const ward_tty_state *s)
{
	sigset_t block, old;
	int restored = 0, saved_errno = errno;

	if (!s)
		return 0;
	/* A background job that writes terminal settings gets SIGTTOU
	 * (which stops it) unless the signal is blocked. */
	sigemptyset(&block);
	sigaddset(&block, SIGTTOU);
	sigprocmask(SIG_BLOCK, &block, &old);
	for (int i = 0; i < s->n; i++) {
		const struct ward_tty_one *o = &s->t[i];
		struct termios now;
		struct winsize ws;
		bool did = false;

		if (tcgetattr(o->fd, &now) == 0 && tio_differs(&now, &o->tio) &&
		    tcsetattr(o->fd, TCSANOW, &o->tio) == 0)
			did = true;
		if (o->has_ws && ioctl(o->fd, TIOCGWINSZ, &ws) == 0 &&
		    (ws.ws_row != o->ws.ws_row || ws.ws_col != o->ws.ws_col ||
		     ws.ws_xpixel != o->ws.ws_xpixel ||
		     ws.ws_ypixel != o->ws.ws_ypixel) &&
		    ioctl(o->fd, TIOCSWINSZ, &o->ws) == 0)
			did = true;
		restored += did;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	errno = saved_errno;
	return restored;
}

void ward_tty_free(ward_tty_state *s)
{
	free(s);
}
