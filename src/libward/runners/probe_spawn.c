/*
 * ward — the probes' process runner: one short-lived process with a
 * deadline, its first output, and the verdict from it (runners.h). The
 * runners' probes (bwrap.c, landlock.c, seatbelt.c) run through it; the
 * provider keeps their verdicts.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libward/runners/runners.h"

extern char **environ;

void ward_probe_why(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Copy the first line of @buf (length @len) into @why. */
static void first_line(char *why, size_t why_len, const char *buf, size_t len)
{
	size_t n = 0;

	while (n < len && buf[n] != '\n' && n + 1 < why_len)
		n++;
	memcpy(why, buf, n);
	why[n] = '\0';
}

/* Read what is available from *fd into buf; close it at EOF or error. */
static void drain(int *fd, char *buf, size_t cap, size_t *len)
{
	char scratch[512];
	ssize_t n;

	do {
		n = read(*fd, scratch, sizeof(scratch));
	} while (n < 0 && errno == EINTR);
	if (n <= 0) {
		if (n == 0 || errno != EAGAIN) {
			close(*fd);
			*fd = -1;
		}
		return;
	}
	if (buf && *len < cap) {
		size_t keep = (size_t)n < cap - *len ? (size_t)n : cap - *len;

		memcpy(buf + *len, scratch, keep);
		*len += keep;
	}
}

#if defined(__GLIBC__) &&                                                      \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
#define HAVE_ADDCLOSEFROM 1
#else
#define HAVE_ADDCLOSEFROM 0

/* Add a close action for @fd when it is open and would survive exec. */
static int close_if_inherited(posix_spawn_file_actions_t *fa, int fd)
{
	int flags = fcntl(fd, F_GETFD);

	if (flags < 0 || (flags & FD_CLOEXEC))
		return 0;
	return -posix_spawn_file_actions_addclose(fa, fd);
}

/*
 * No closefrom action in this libc (musl, older glibc): a close action for
 * every descriptor from 3 up that exec would pass on. The open ones are
 * listed in /proc/self/fd; without /proc, each one below the limit is
 * asked. Close-on-exec ones (all that ward opens) need no action.
 */
static int spawn_close_inherited(posix_spawn_file_actions_t *fa)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *de;
	struct rlimit lim;
	int err = 0;

	if (dir) {
		while (!err && (de = readdir(dir))) {
			char *end;
			long fd = strtol(de->d_name, &end, 10);

			if (end == de->d_name || *end || fd < 3 ||
			    fd > INT_MAX || fd == dirfd(dir))
				continue;
			err = close_if_inherited(fa, (int)fd);
		}
		closedir(dir);
		return err;
	}
	if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur > 65536)
		lim.rlim_cur = 65536;
	for (int fd = 3; !err && fd < (int)lim.rlim_cur; fd++)
		err = close_if_inherited(fa, fd);
	return err;
}
#endif

/* See runners.h. */
int ward_probe_spawn(struct ward_probe_run *run, char *const argv[],
		     bool capture_out, const struct ward_probe_ctx *ctx,
		     char *why, size_t why_len)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
	long long deadline = now_ms() + ctx->timeout_ms;
	pid_t pid = -1;
	int err, wstatus;

	memset(run, 0, sizeof(*run));
	/*
	 * Some spawn implementations report a failed exec only as exit 127;
	 * ask first, so the reason says what is actually wrong.
	 */
	if (access(argv[0], X_OK) != 0) {
		err = -errno;
		ward_probe_why(why, why_len, "cannot execute %s: %s", argv[0],
			       strerror(-err));
		return err;
	}
	if (pipe2(err_pipe, O_CLOEXEC) != 0 ||
	    (capture_out && pipe2(out_pipe, O_CLOEXEC) != 0)) {
		err = -errno;
		ward_probe_why(why, why_len, "cannot create a pipe: %s",
			       strerror(-err));
		goto out_close_pipes;
	}
	err = -posix_spawn_file_actions_init(&fa);
	if (err) {
		ward_probe_why(why, why_len, "cannot set up the probe: %s",
			       strerror(-err));
		goto out_close_pipes;
	}
	err = -posix_spawnattr_init(&attr);
	if (err) {
		ward_probe_why(why, why_len, "cannot set up the probe: %s",
			       strerror(-err));
		goto out_destroy_fa;
	}
	/* A group of its own, so a timeout kills whatever it forked too. */
	posix_spawnattr_setpgroup(&attr, 0);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (capture_out)
		posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
	else
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY,
						 0);
	posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
#if HAVE_ADDCLOSEFROM
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
#else
	err = spawn_close_inherited(&fa);
	if (err) {
		ward_probe_why(why, why_len, "cannot set up the probe: %s",
			       strerror(-err));
		goto out_destroy_attr;
	}
#endif
	err = -posix_spawn(&pid, argv[0], &fa, &attr, argv, environ);
	if (err) {
		ward_probe_why(why, why_len, "cannot execute %s: %s", argv[0],
			       strerror(-err));
		goto out_destroy_attr;
	}
	run->spawned = true;
	close(err_pipe[1]);
	err_pipe[1] = -1;
	if (capture_out) {
		close(out_pipe[1]);
		out_pipe[1] = -1;
	}
	fcntl(err_pipe[0], F_SETFL, O_NONBLOCK);
	if (out_pipe[0] >= 0)
		fcntl(out_pipe[0], F_SETFL, O_NONBLOCK);

	/* Read until both pipes close, then wait; all before the deadline. */
	for (;;) {
		struct pollfd pfd[2];
		long long left = deadline - now_ms();
		nfds_t n = 0;
		int r;

		if (left <= 0) {
			run->timed_out = true;
			break;
		}
		if (err_pipe[0] >= 0)
			pfd[n++] = (struct pollfd){err_pipe[0], POLLIN, 0};
		if (out_pipe[0] >= 0)
			pfd[n++] = (struct pollfd){out_pipe[0], POLLIN, 0};
		if (n == 0) {
			pid_t w;

			do {
				w = waitpid(pid, &wstatus, WNOHANG);
			} while (w < 0 && errno == EINTR);
			if (w == pid) {
				run->status = wstatus;
				pid = -1;
				break;
			}
			if (w < 0) {
				/* Someone else reaped it (SIGCHLD ignored). */
				run->status = -1;
				pid = -1;
				break;
			}
			/* Pipes closed but still running: poll gently. */
			nanosleep(&(struct timespec){0, 2 * 1000 * 1000}, NULL);
			continue;
		}
		r = poll(pfd, n, (int)(left > INT_MAX ? INT_MAX : left));
		if (r < 0 && errno != EINTR)
			break;
		if (r <= 0)
			continue;
		if (err_pipe[0] >= 0)
			drain(&err_pipe[0], run->err, sizeof(run->err) - 1,
			      &run->err_len);
		if (out_pipe[0] >= 0)
			drain(&out_pipe[0], run->out, sizeof(run->out) - 1,
			      &run->out_len);
	}
	if (pid > 0) {
		/* Timed out (or poll failed): kill the group, then reap. */
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
			;
		run->timed_out = true;
	}
	run->out[run->out_len] = '\0';
	run->err[run->err_len] = '\0';
	err = 0;

out_destroy_attr:
	posix_spawnattr_destroy(&attr);
out_destroy_fa:
	posix_spawn_file_actions_destroy(&fa);
out_close_pipes:
	for (int i = 0; i < 2; i++) {
		if (out_pipe[i] >= 0)
			close(out_pipe[i]);
		if (err_pipe[i] >= 0)
			close(err_pipe[i]);
	}
	return err;
}

/* See runners.h. */
enum ward_verdict ward_probe_judge(struct ward_probe_ctx *ctx,
				   const struct ward_probe_run *run, char *why,
				   size_t why_len)
{
	char line[sizeof(run->err)];

	if (run->timed_out) {
		/* Said of this machine now, not of the runner (cache_store
		 * keeps it for this provider only). */
		ctx->timed_out = true;
		ward_probe_why(why, why_len, "timed out after %u ms",
			       ctx->timeout_ms);
		return WARD_VERDICT_UNUSABLE;
	}
	first_line(line, sizeof(line), run->err, run->err_len);
	if (run->status == -1) {
		ward_probe_why(why, why_len,
			       "probe process could not be reaped");
		return WARD_VERDICT_UNUSABLE;
	}
	if (WIFSIGNALED(run->status)) {
		ward_probe_why(why, why_len, "killed by signal %d%s%s",
			       WTERMSIG(run->status), line[0] ? ": " : "",
			       line);
		return WARD_VERDICT_UNUSABLE;
	}
	if (WEXITSTATUS(run->status) != 0) {
		ward_probe_why(why, why_len, "exited with status %d%s%s",
			       WEXITSTATUS(run->status), line[0] ? ": " : "",
			       line);
		return WARD_VERDICT_UNUSABLE;
	}
	ward_probe_why(why, why_len, "probe ok");
	return WARD_VERDICT_FULL;
}

enum ward_verdict ward_probe_argv(struct ward_probe_ctx *ctx,
				  char *const argv[], bool capture_out,
				  struct ward_probe_run *run, char *why,
				  size_t why_len)
{
	if (ward_probe_spawn(run, argv, capture_out, ctx, why, why_len))
		return WARD_VERDICT_UNUSABLE;
	return ward_probe_judge(ctx, run, why, why_len);
}
