/*
 * boxhelper — escapes a hostile command tries, to test that none outlives
 * the call (tests/e2e/redteam_box.bats). Each mode leaves a process behind
 * that, after SECONDS, writes MARKER (so a test can tell that it survived)
 * and prints what it did on stdout. Not installed.
 *
 *   boxhelper ptrace-decoy SECONDS MARKER
 *	a decoy child, ptrace-seized by a sibling that then leaves the
 *	session: the decoy exits and becomes a zombie only its tracer can
 *	reap; the tracer survives unless it is killed.
 *   boxhelper clone3-cgroup CGROUP_DIR SECONDS MARKER
 *	clone3(CLONE_INTO_CGROUP) into another cgroup; prints
 *	"clone3: refused (<error>)" when the kernel (or seccomp) says no.
 *   boxhelper cgroup-procs CGROUP_DIR
 *	write our own pid into CGROUP_DIR/cgroup.procs; prints the result.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef __NR_clone3
#define __NR_clone3 435
#endif
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

struct clone3_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack,
	    stack_size, tls, set_tid, set_tid_size, cgroup;
};

/* Sleep @secs, then write MARKER: proof that this process survived. */
static void __attribute__((noreturn)) linger(const char *secs,
					     const char *marker)
{
	int fd;

	usleep((useconds_t)(atof(secs) * 1e6));
	fd = open(marker, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0) {
		if (write(fd, "survived\n", 9) < 0) {
			/* the test sees the file anyway */
		}
		close(fd);
	}
	_exit(0);
}

static int ptrace_decoy(const char *secs, const char *marker)
{
	int go[2], seized[2];
	pid_t decoy, tracer;
	char c;

	if (pipe(go) != 0 || pipe(seized) != 0)
		return 2;
	decoy = fork();
	if (decoy == 0) {
		/* Wait until seized, then exit: a zombie held by the tracer. */
		close(go[1]);
		if (read(go[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	tracer = fork();
	if (tracer == 0) {
		setsid();
		if (ptrace(PTRACE_SEIZE, decoy, 0, 0) != 0) {
			printf("ptrace: %s\n", strerror(errno));
			fflush(stdout);
			_exit(1);
		}
		if (write(seized[1], "s", 1) < 0 || write(go[1], "g", 1) < 0)
			_exit(1);
		close(0);
		close(1);
		close(2);
		/* Never waits for the decoy: it stays a zombie. */
		linger(secs, marker);
	}
	close(seized[1]);
	if (read(seized[0], &c, 1) != 1) {
		printf("ptrace-decoy: the tracer failed\n");
		return 1;
	}
	printf("ptrace-decoy: decoy %d seized by %d\n", (int)decoy,
	       (int)tracer);
	return 0;
}

static int clone3_cgroup(const char *dir, const char *secs,
			 const char *marker)
{
	struct clone3_args ca;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	long pid;

	if (fd < 0) {
		printf("clone3: cannot open %s: %s\n", dir, strerror(errno));
		return 1;
	}
	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_INTO_CGROUP;
	ca.exit_signal = SIGCHLD;
	ca.cgroup = (uint64_t)fd;
	pid = syscall(__NR_clone3, &ca, sizeof(ca));
	if (pid < 0) {
		printf("clone3: refused (%s)\n", strerror(errno));
		return 0;
	}
	if (pid == 0) {
		setsid();
		close(1);
		close(2);
		linger(secs, marker);
	}
	printf("clone3: started %ld in %s\n", pid, dir);
	return 0;
}

static int cgroup_procs(const char *dir)
{
	char path[4096], pid[32];
	int fd, n;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		printf("cgroup.procs: refused (%s)\n", strerror(errno));
		return 0;
	}
	n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (write(fd, pid, (size_t)n) != n) {
		printf("cgroup.procs: refused (%s)\n", strerror(errno));
		close(fd);
		return 0;
	}
	close(fd);
	printf("cgroup.procs: moved to %s\n", dir);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc == 4 && strcmp(argv[1], "ptrace-decoy") == 0)
		return ptrace_decoy(argv[2], argv[3]);
	if (argc == 5 && strcmp(argv[1], "clone3-cgroup") == 0)
		return clone3_cgroup(argv[2], argv[3], argv[4]);
	if (argc == 3 && strcmp(argv[1], "cgroup-procs") == 0)
		return cgroup_procs(argv[2]);
	fprintf(stderr, "usage: boxhelper ptrace-decoy SECONDS MARKER\n"
			"       boxhelper clone3-cgroup DIR SECONDS MARKER\n"
			"       boxhelper cgroup-procs DIR\n");
	return 2;
}
