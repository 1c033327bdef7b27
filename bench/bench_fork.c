/*
 * bench_fork — start a command the way a caller that keeps a call itself
 * would have to, from a process of a given size (bench/calls.sh part 10).
 *
 *   bench_fork RSS_KB fork|vfork COMMAND [ARG...]
 *
 * Touches RSS_KB of heap (a caller the size of `ward run` when it spawns:
 * calls.sh passes ward's own peak resident size), then starts COMMAND
 * with fork() (the child writes 16 pages first, as a child that confines
 * itself in-process would: copy-on-write faults) or with clone(CLONE_VM |
 * CLONE_VFORK) (what the executor does today: nothing of the caller is
 * copied), and waits for it. Timed by bench_paired side by side, the two
 * differ by what an in-process keeper would pay for its fork where the
 * executor pays for the launcher's exec. Exit status: the command's.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHILD_WRITES 16

static char **cmd_argv;
static char vfork_stack[64 * 1024] __attribute__((aligned(16)));

static int vfork_child(void *arg)
{
	(void)arg;
	execvp(cmd_argv[0], cmd_argv);
	_exit(127);
}

int main(int argc, char **argv)
{
	size_t rss;
	char *heap;
	int status;
	pid_t pid;

	if (argc < 4 ||
	    (strcmp(argv[2], "fork") != 0 && strcmp(argv[2], "vfork") != 0)) {
		fprintf(stderr,
			"usage: bench_fork RSS_KB fork|vfork COMMAND [ARG...]\n");
		return 2;
	}
	rss = strtoul(argv[1], NULL, 10) * 1024;
	heap = malloc(rss ? rss : 1);
	if (!heap) {
		perror("bench_fork: malloc");
		return 2;
	}
	memset(heap, 1, rss);
	cmd_argv = argv + 3;
	if (strcmp(argv[2], "fork") == 0) {
		pid = fork();
		if (pid == 0) {
			for (size_t i = 0; i < CHILD_WRITES && i * 4096 < rss;
			     i++)
				heap[i * 4096] = 2;
			execvp(cmd_argv[0], cmd_argv);
			_exit(127);
		}
	} else {
		pid = clone(vfork_child, vfork_stack + sizeof(vfork_stack),
			    CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
	}
	if (pid < 0) {
		perror("bench_fork: fork");
		return 2;
	}
	if (waitpid(pid, &status, 0) < 0) {
		perror("bench_fork: waitpid");
		return 2;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}
