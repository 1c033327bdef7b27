/*
 * fuzz_tree.h — a target's scratch tree (fuzz_fence, fuzz_supervise):
 * files, directories and links beneath the directory in fuzz_root (set
 * once the target has made it), each named relative to it. A link target
 * that starts with '@' is absolute, into the tree ("@/out/x"). Any
 * failure aborts: a target without its tree would check nothing.
 */
#ifndef WARD_FUZZ_TREE_H
#define WARD_FUZZ_TREE_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *fuzz_root;

static void at(char *buf, size_t len, const char *rel)
{
	snprintf(buf, len, "%s/%s", fuzz_root, rel);
}

static void mkd(const char *rel)
{
	char p[256];

	at(p, sizeof(p), rel);
	if (mkdir(p, 0755) != 0) {
		perror(p);
		abort();
	}
}

static void mkf(const char *rel)
{
	char p[256];
	int fd;

	at(p, sizeof(p), rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror(p);
		abort();
	}
	close(fd);
}

static void mkl(const char *target, const char *rel)
{
	char p[256], t[256];

	at(p, sizeof(p), rel);
	if (target[0] == '@')
		at(t, sizeof(t), target + 2);
	else
		snprintf(t, sizeof(t), "%s", target);
	if (symlink(t, p) != 0) {
		perror(p);
		abort();
	}
}

#endif
