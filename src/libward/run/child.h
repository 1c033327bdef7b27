/*
 * ward — the executor's child (child.c): everything between the clone and
 * the exec, for the executor (exec.c) and the runners' probes
 * (runners/probe_spawn.c) alike. One way to start a process.
 *
 * The caller builds everything the child needs beforehand (the argv, the
 * environment, the PATH candidates); the child shares the caller's memory
 * until exec and makes only async-signal-safe system calls. A close-on-exec
 * status pipe says whether exec happened: EOF without a record means it
 * did.
 */
#ifndef WARD_LIBWARD_CHILD_H
#define WARD_LIBWARD_CHILD_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

/*
 * Descriptors past bwrap's status fd, placed from WARD_CHILD_EXTRA_FD on: for the
 * Landlock layer inside, its command line when bwrap's argv cannot carry
 * it (landlock-run --args, always the first) and its report (--pid-fd:
 * how the run ended, and how it knows we live); then, for bwrap itself, a
 * read end of its own status pipe (so that its status writes never fail
 * once we are gone: bwrap dies on a failed one, which left its sandbox
 * process blocked in its namespaces).
 */
#define WARD_CHILD_EXTRA_FD  4
#define WARD_CHILD_EXTRA_MAX 3
/* Exit status of a child that failed before exec (like env/timeout). */
#define WARD_CHILD_FAILED 125
enum ward_child_stage {
	WARD_CHILD_SETUP = 1, /* the executor's own setup (fds, chdir, session) */
	WARD_CHILD_EXEC,	 /* exec of a wrapper runner */
};

/* What a child that failed before exec writes to the status pipe. It is
 * smaller than PIPE_BUF, so the write is atomic. */
struct ward_child_status {
	int stage;
	int err;
	char msg[248];
};

struct ward_child {
	int in_fd; /* -1: /dev/null */
	int out_fd;
	int err_fd;
	int fd3; /* bwrap's JSON status pipe, becomes fd 3; or -1 */
	int extra[WARD_CHILD_EXTRA_MAX]; /* placed from WARD_CHILD_EXTRA_FD on; -1: none */
	int status_fd;
	const char *cwd; /* NULL: the caller's */
	char *const *argv;
	char *const *envp;
	char *const *cands;
	/* bwrap with the Landlock layer: its report pipe binds the sandbox
	 * to us; bwrap must outlive us long enough to release its sandbox
	 * process (no parent-death signal: docs/RUNNERS.md). */
	bool caller_bound;
	/* Start it as init of a new pid namespace (CLONE_NEWPID). */
	bool newpid;
	pid_t parent;
	/* Blocked when it execs: none, or the keeper's signals for a
	 * launcher that keeps nothing itself (util_keeper_sigset). */
	sigset_t mask;
};

/* A child with nothing placed past 2: stdin /dev/null, no fd 3, no
 * extras, the caller as its parent, every signal unblocked after exec. */
void ward_child_init(struct ward_child *a);

/*
 * ward_child_spawn - start @a's child (see child.c): in the cgroup @cg_fd
 * (a directory; -1: the caller's). Returns the pid, or -1 and errno. The
 * caller reads a->status_fd's read end with ward_child_read_status().
 */
pid_t ward_child_spawn(struct ward_child *a, int cg_fd);

/* Read the status pipe @fd to EOF: 0 (exec happened) or the size of the
 * record read into @st (sizeof(*st) when whole). */
ssize_t ward_child_read_status(int fd, struct ward_child_status *st);

/*
 * ward_child_candidates - the paths execve() should try for @name,
 * execvp-style, over the PATH of @envp (see child.c). One allocation:
 * free() it; NULL when out of memory.
 */
char **ward_child_candidates(const char *name, char *const *envp);

#endif
