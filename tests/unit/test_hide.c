/*
 * Unit tests for hide.c's probe, ward_hide_possible(): its answer is the
 * kernel's (a namespace this process can make and mount in), whoever
 * reaps the caller's children, from two threads at once, and it leaves
 * the caller's memory as it was — not copied, not write-protected, so the
 * caller's writes after it fault no page in again — and no descriptor
 * open. The answer is kept per process, so each case runs in a child of
 * its own.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

#include <cmocka.h>

#include "hide.h"

/* The kernel's answer, asked without hide.c: whether a child of this
 * process can make a mount namespace (in a user namespace when it must)
 * and mount a tmpfs in it. */
static bool kernel_says(void)
{
	int st = 0;
	pid_t pid = fork();

	if (pid < 0)
		fail_msg("fork: %s", strerror(errno));
	if (pid == 0) {
		if (unshare(CLONE_NEWNS) != 0 &&
		    (errno != EPERM ||
		     unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0))
			_exit(1);
		if (mount("none", "/", NULL, MS_REC | MS_SLAVE, NULL) != 0 ||
		    mount("tmpfs", "/tmp", "tmpfs", 0, NULL) != 0)
			_exit(1);
		_exit(0);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			fail_msg("waitpid: %s", strerror(errno));
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* Run @fn in a child (a process whose probe has not run yet); it exits 0
 * when every check held, or with the number of the one that failed. */
static void in_child(int (*fn)(bool), bool expect)
{
	int st = 0;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		fail_msg("fork: %s", strerror(errno));
	if (pid == 0)
		_exit(fn(expect));
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			fail_msg("waitpid: %s", strerror(errno));
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("check %d failed",
			 WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st));
}

/* The answer is the kernel's, asked again from the cache; no descriptor
 * is left open. */
static int agrees(bool expect)
{
	int before = open_fds();

	if (ward_hide_possible() != expect)
		return 1;
	if (ward_hide_possible() != expect)
		return 2;
	if (open_fds() != before)
		return 3;
	return 0;
}

/* A caller that leaves its children to the kernel (SIGCHLD ignored:
 * waitpid fails) gets the same answer. */
static int sigchld_ignored(bool expect)
{
	signal(SIGCHLD, SIG_IGN);
	return ward_hide_possible() == expect ? 0 : 1;
}

static void *ask(void *arg)
{
	*(bool *)arg = ward_hide_possible();
	return NULL;
}

/* Two threads asking at once agree with the kernel. */
static int two_threads(bool expect)
{
	pthread_t t;
	bool a = !expect, b;

	if (pthread_create(&t, NULL, ask, &a) != 0)
		return 1;
	b = ward_hide_possible();
	pthread_join(t, NULL);
	return a == expect && b == expect ? 0 : 2;
}

/*
 * The caller's memory is shared with the probe, not copied: the pages of
 * a heap buffer it wrote before are written again after the probe without
 * a fault each (a fork would have write-protected every one of them).
 */
static int memory_shared(bool expect)
{
	const size_t len = 16u << 20;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	/* volatile: every write is made where it is written (the compiler
	 * would drop or move writes to memory that is never read). */
	volatile unsigned char *buf = malloc(len);
	struct rusage r0, r1;

	(void)expect;
	if (!buf)
		return 1;
	for (size_t i = 0; i < len; i += page)
		buf[i] = 1;
	(void)ward_hide_possible();
	getrusage(RUSAGE_SELF, &r0);
	for (size_t i = 0; i < len; i += page)
		buf[i] = 2;
	getrusage(RUSAGE_SELF, &r1);
	/* 4,096 pages: a handful of faults elsewhere is not a fault each. */
	if (r1.ru_minflt - r0.ru_minflt > 64) {
		fprintf(stderr,
			"%ld faults writing %zu pages after the probe\n",
			r1.ru_minflt - r0.ru_minflt, len / page);
		return 2;
	}
	free((void *)buf);
	return 0;
}

static void t_agrees(void **state)
{
	(void)state;
	in_child(agrees, kernel_says());
}

static void t_sigchld_ignored(void **state)
{
	(void)state;
	in_child(sigchld_ignored, kernel_says());
}

static void t_two_threads(void **state)
{
	(void)state;
	in_child(two_threads, kernel_says());
}

static void t_memory_shared(void **state)
{
	(void)state;
	in_child(memory_shared, kernel_says());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(t_agrees),
	    cmocka_unit_test(t_sigchld_ignored),
	    cmocka_unit_test(t_two_threads),
	    cmocka_unit_test(t_memory_shared),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
