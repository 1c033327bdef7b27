/*
 * ward-bridge — give a command without a network a loopback port that
 * leads to ward's proxy.
 *
 *   ward-bridge --port PORT --socket PATH -- COMMAND [ARG...]
 *
 * Inside `bwrap --unshare-net` a command has only its own loopback
 * interface. ward runs it as
 *
 *   bwrap --unshare-net ... -- ward-bridge --port P --socket S -- \
 *       landlock-run ... -- COMMAND
 *
 * The bridge listens on 127.0.0.1:PORT in that network namespace, starts
 * COMMAND as its child, and forwards every connection to the unix socket
 * PATH, where ward's proxy (outside the sandbox) decides what may pass.
 * It exits when COMMAND exits, with COMMAND's status (a command killed by a
 * signal makes the bridge die of the same signal). SIGTERM, SIGINT,
 * SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to the bridge are passed on to
 * COMMAND.
 *
 * The port is bound before COMMAND starts, so the command can connect at
 * once. A connection the proxy cannot take is closed (and the first such
 * failure is reported on stderr as "ward-bridge: ...").
 *
 * Static and dependency-free (libc only), like landlock-run: it runs
 * inside the sandbox, before the command. Fatal errors print
 * "ward-bridge: <message>" and exit 125 without running the command.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/landlock.h"

#ifndef WARD_BRIDGE_VERSION
#define WARD_BRIDGE_VERSION "0.1.0"
#endif

#define PROG		    "ward-bridge"
#define EXIT_BRIDGE_FAILURE 125
/* Bytes buffered per direction of a connection. */
#define BUF_SIZE (64 * 1024)
/* Connections at once; more are closed as they come. */
#define MAX_LINKS 512

static const char usage_text[] =
    "Usage: " PROG " --port PORT --socket PATH -- COMMAND [ARG...]\n"
    "\n"
    "Listen on 127.0.0.1:PORT, run COMMAND, and forward every connection\n"
    "to the unix socket PATH until COMMAND exits; exit with its status.\n"
    "\n"
    "  --port PORT     the loopback port to listen on (1-65535)\n"
    "  --socket PATH   the unix socket to forward connections to\n"
    "  --help          show this help\n"
    "  --version       show the version\n"
    "\n"
    "Bridge failures print \"" PROG ": <message>\" and exit 125.\n";

/* One direction of a connection: bytes read from @from, written to @to. */
struct dir {
	int from, to;
	char *buf;
	size_t off, len;
	bool eof;  /* @from ended */
	bool shut; /* the end was passed on (shutdown of @to) */
};

struct link {
	int cfd, ufd;
	struct dir up, down; /* client → proxy, proxy → client */
};

static struct link *links[MAX_LINKS];
static size_t nlinks;
static bool warned;

static void die(const char *fmt, ...)
    __attribute__((noreturn, format(printf, 1, 2)));

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_BRIDGE_FAILURE);
}

static void warn_once(const char *what, int err)
{
	if (warned)
		return;
	warned = true;
	fprintf(stderr, PROG ": %s: %s\n", what, strerror(err));
}

static void link_free(size_t i)
{
	struct link *l = links[i];

	close(l->cfd);
	close(l->ufd);
	free(l->up.buf);
	free(l->down.buf);
	free(l);
	links[i] = links[--nlinks];
}

/* Accept what is waiting and connect each to the proxy's socket. */
static void accept_all(int lfd, const struct sockaddr_un *sun)
{
	for (;;) {
		struct link *l;
		int cfd, ufd, one = 1;

		cfd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return; /* EAGAIN, or out of descriptors: later */
		}
		if (nlinks == MAX_LINKS) {
			close(cfd);
			continue;
		}
		ufd = socket(AF_UNIX,
			     SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (ufd < 0) {
			warn_once("socket", errno);
			close(cfd);
			continue;
		}
		/* A unix connect completes at once or fails (EAGAIN: the
		 * proxy's backlog is full). */
		if (connect(ufd, (const struct sockaddr *)sun, sizeof(*sun)) <
		    0) {
			warn_once("cannot reach the proxy", errno);
			close(ufd);
			close(cfd);
			continue;
		}
		l = calloc(1, sizeof(*l));
		if (l) {
			l->up.buf = malloc(BUF_SIZE);
			l->down.buf = malloc(BUF_SIZE);
		}
		if (!l || !l->up.buf || !l->down.buf) {
			if (l) {
				free(l->up.buf);
				free(l->down.buf);
				free(l);
			}
			close(ufd);
			close(cfd);
			continue;
		}
		setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		l->cfd = cfd;
		l->ufd = ufd;
		l->up = (struct dir){cfd, ufd, l->up.buf, 0, 0, false, false};
		l->down =
		    (struct dir){ufd, cfd, l->down.buf, 0, 0, false, false};
		links[nlinks++] = l;
	}
}

/*
 * Move what can move in @d without blocking. Returns -1 when the
 * connection must be dropped (an error on either side).
 */
static int dir_run(struct dir *d)
{
	for (;;) {
		ssize_t n;

		while (d->off < d->len) {
			n = send(d->to, d->buf + d->off, d->len - d->off,
				 MSG_NOSIGNAL);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				if (errno == EAGAIN || errno == EWOULDBLOCK)
					return 0;
				return -1;
			}
			d->off += (size_t)n;
		}
		d->off = d->len = 0;
		if (d->eof) {
			if (!d->shut) {
				shutdown(d->to, SHUT_WR);
				d->shut = true;
			}
			return 0;
		}
		n = read(d->from, d->buf, BUF_SIZE);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -1;
		}
		if (n == 0)
			d->eof = true;
		d->len = (size_t)n;
	}
}

/* The poll events @d needs on its two descriptors. */
static void dir_want(const struct dir *d, short *from_ev, short *to_ev)
{
	if (d->off < d->len)
		*to_ev |= POLLOUT;
	else if (!d->eof)
		*from_ev |= POLLIN;
}

/* The command ended: leave the same way it did. */
static void exit_like(int status)
{
	struct rlimit none = {0, 0};
	sigset_t all;
	int sig;

	if (WIFEXITED(status))
		exit(WEXITSTATUS(status));
	sig = WTERMSIG(status);
	/* The command already dumped core if it was going to. */
	setrlimit(RLIMIT_CORE, &none);
	signal(sig, SIG_DFL);
	sigfillset(&all);
	sigprocmask(SIG_UNBLOCK, &all, NULL);
	raise(sig);
	exit(128 + sig);
}

static unsigned parse_port(const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || end == s || v < 1 || v > 65535 || s[0] == '-' ||
	    s[0] == '+')
		die("invalid port: %s (try '" PROG " --help')", s);
	return (unsigned)v;
}

int main(int argc, char **argv)
{
	static const int forwarded[] = {SIGTERM, SIGINT,  SIGHUP,
					SIGQUIT, SIGUSR1, SIGUSR2};
	struct sockaddr_in in = {.sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	const char *path = NULL;
	char **cmd = NULL;
	unsigned port = 0;
	struct pollfd *pfd;
	sigset_t set, old;
	struct stat st;
	int lfd, sfd, one = 1;
	pid_t child;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0) {
			cmd = &argv[i + 1];
			break;
		} else if (strcmp(a, "--port") == 0 && i + 1 < argc) {
			port = parse_port(argv[++i]);
		} else if (strcmp(a, "--socket") == 0 && i + 1 < argc) {
			path = argv[++i];
		} else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(usage_text, stdout);
			return fflush(stdout) == 0 ? 0 : EXIT_BRIDGE_FAILURE;
		} else if (strcmp(a, "--version") == 0) {
			puts(PROG " " WARD_BRIDGE_VERSION);
			return fflush(stdout) == 0 ? 0 : EXIT_BRIDGE_FAILURE;
		} else {
			die("unknown option or missing value: %s (try '" PROG
			    " --help')",
			    a);
		}
	}
	if (!port || !path)
		die("--port and --socket are required (try '" PROG " --help')");
	if (!cmd || !cmd[0])
		die("no command after -- (try '" PROG " --help')");
	if (strlen(path) >= sizeof(sun.sun_path))
		die("socket path too long: %s", path);
	strcpy(sun.sun_path, path);
	if (stat(path, &st) < 0)
		die("cannot use the proxy socket %s: %s", path,
		    strerror(errno));
	if (!S_ISSOCK(st.st_mode))
		die("%s is not a socket", path);

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		die("socket: %s", strerror(errno));
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	in.sin_port = htons((uint16_t)port);
	if (bind(lfd, (struct sockaddr *)&in, sizeof(in)) < 0 ||
	    listen(lfd, SOMAXCONN) < 0)
		die("cannot listen on 127.0.0.1:%u: %s", port, strerror(errno));

	/* SIGCHLD and the forwarded signals arrive through a signalfd. */
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaddset(&set, forwarded[i]);
	if (sigprocmask(SIG_BLOCK, &set, &old) < 0)
		die("sigprocmask: %s", strerror(errno));
	sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sfd < 0)
		die("signalfd: %s", strerror(errno));

	fflush(NULL);
	child = fork();
	if (child < 0)
		die("fork: %s", strerror(errno));
	if (child == 0) {
		pid_t parent = getppid();
		int e;

		sigprocmask(SIG_SETMASK, &old, NULL);
		/* If the bridge dies, the command must not outlive it with
		 * a port that leads nowhere. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(EXIT_BRIDGE_FAILURE);
		execvp(cmd[0], cmd);
		e = errno;
		if (e == ENOENT && !strchr(cmd[0], '/'))
			die("%s: command not found", cmd[0]);
		die("cannot execute %s: %s", cmd[0], strerror(e));
	}
	/*
	 * The bridge relays what the command sends: it keeps no capability
	 * (bwrap keeps CAP_SYS_ADMIN for a root caller's Landlock layer,
	 * which runs after us: the child has it, we drop it here, bounding
	 * set included).
	 */
	{
		char err[256];

		if (ward_ll_drop_caps(err, sizeof(err)) != 0) {
			kill(child, SIGKILL);
			die("%s", err);
		}
	}
	signal(SIGPIPE, SIG_IGN);

	pfd = calloc(2 + 2 * MAX_LINKS, sizeof(*pfd));
	if (!pfd) {
		kill(child, SIGKILL);
		die("out of memory");
	}
	for (;;) {
		struct signalfd_siginfo si;
		size_t n = 0;

		pfd[n++] = (struct pollfd){sfd, POLLIN, 0};
		pfd[n++] =
		    (struct pollfd){lfd, nlinks < MAX_LINKS ? POLLIN : 0, 0};
		for (size_t i = 0; i < nlinks; i++) {
			struct link *l = links[i];
			short cev = 0, uev = 0;

			dir_want(&l->up, &cev, &uev);
			dir_want(&l->down, &uev, &cev);
			pfd[n++] = (struct pollfd){l->cfd, cev, 0};
			pfd[n++] = (struct pollfd){l->ufd, uev, 0};
		}
		if (poll(pfd, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			kill(child, SIGKILL);
			die("poll: %s", strerror(errno));
		}

		while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
			int status;

			if (si.ssi_signo != SIGCHLD) {
				kill(child, (int)si.ssi_signo);
				continue;
			}
			if (waitpid(child, &status, WNOHANG) == child)
				exit_like(status);
		}

		/* Links first (their slots in pfd match links[]), then new
		 * connections. */
		for (size_t i = nlinks; i-- > 0;) {
			struct link *l = links[i];
			const struct pollfd *c = &pfd[2 + 2 * i];

			if (!c[0].revents && !c[1].revents)
				continue;
			if (dir_run(&l->up) < 0 || dir_run(&l->down) < 0 ||
			    (l->up.shut && l->down.shut)) {
				link_free(i);
				continue;
			}
			/* POLLHUP/POLLERR with nothing left to do. */
			if (((c[0].revents | c[1].revents) &
			     (POLLERR | POLLNVAL)))
				link_free(i);
		}
		if (pfd[1].revents & POLLIN)
			accept_all(lfd, &sun);
	}
}
