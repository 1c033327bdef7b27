/*
 * ward — the probes' process runner: one short-lived process with a
 * deadline, its first output, and the verdict from it (runners.h). The
 * process is started by the executor's child (child.h), like every command
 * ward runs; the runners' probes (bwrap.c, landlock.c, seatbelt.c) run
 * through it; the provider keeps their verdicts.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libward/run/child.h"
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

/* Why the child failed before exec, from its status record. */
static int child_failed(const struct ward_child_status *st, ssize_t got,
			const char *binary, char *why, size_t why_len)
{
	int e = got == (ssize_t)sizeof(*st) && st->err > 0 ? st->err : EIO;

	if (got == (ssize_t)sizeof(*st) && st->stage == WARD_CHILD_EXEC)
		ward_probe_why(why, why_len, "cannot execute %s: %s", binary,
			       strerror(e));
	else
		ward_probe_why(why, why_len, "cannot set up the probe: %s",
			       strerror(e));
	return -e;
}

/* See runners.h. */
int ward_probe_spawn(struct ward_probe_run *run, char *const argv[],
		     bool capture_out, const struct ward_probe_ctx *ctx,
		     char *why, size_t why_len)
{
	int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
	int st_pipe[2] = {-1, -1}, null_fd = -1;
	long long deadline = now_ms() + ctx->timeout_ms;
	struct ward_child_status st;
	struct ward_child a;
	char **cands = NULL;
	pid_t pid = -1;
	ssize_t got;
	int err, wstatus;

	memset(run, 0, sizeof(*run));
	if (pipe2(st_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0 ||
	    (capture_out && pipe2(out_pipe, O_CLOEXEC) != 0) ||
	    (!capture_out &&
	     (null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC)) < 0)) {
		err = -errno;
		ward_probe_why(why, why_len, "cannot create a pipe: %s",
			       strerror(-err));
		goto out_close;
	}
	cands = ward_child_candidates(argv[0], environ);
	if (!cands) {
		err = -ENOMEM;
		ward_probe_why(why, why_len, "cannot set up the probe: %s",
			       strerror(-err));
		goto out_close;
	}
	/* The executor's child: stdin /dev/null, a session (so a process
	 * group) of its own, so a timeout kills whatever it forked too, and
	 * it dies with us. */
	ward_child_init(&a);
	a.out_fd = capture_out ? out_pipe[1] : null_fd;
	a.err_fd = err_pipe[1];
	a.status_fd = st_pipe[1];
	a.argv = argv;
	a.envp = environ;
	a.cands = cands;
	pid = ward_child_spawn(&a, -1);
	if (pid < 0) {
		err = -errno;
		ward_probe_why(why, why_len, "cannot execute %s: %s", argv[0],
			       strerror(-err));
		goto out_close;
	}
	close(st_pipe[1]);
	st_pipe[1] = -1;
	got = ward_child_read_status(st_pipe[0], &st);
	if (got != 0) {
		while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
			;
		err = child_failed(&st, got, argv[0], why, why_len);
		goto out_close;
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

out_close:
	for (int i = 0; i < 2; i++) {
		if (out_pipe[i] >= 0)
			close(out_pipe[i]);
		if (err_pipe[i] >= 0)
			close(err_pipe[i]);
		if (st_pipe[i] >= 0)
			close(st_pipe[i]);
	}
	if (null_fd >= 0)
		close(null_fd);
	free(cands);
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
