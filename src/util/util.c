/*
 * ward's util layer: see util.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util.h"

#ifndef __NR_close_range
#define __NR_close_range 436
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

int util_strp_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

bool util_path_within(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return path[0] == '/';
	return strncmp(path, dir, n) == 0 &&
	       (path[n] == '\0' || path[n] == '/');
}

char *util_path_lexical(const char *abs)
{
	char *out = malloc(strlen(abs) + 2);
	const char *p = abs;
	size_t len = 0, n;

	if (!out)
		return NULL;
	for (;;) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			while (len > 0 && out[len - 1] != '/')
				len--;
			if (len > 0)
				len--;
		} else if (!(n == 1 && p[0] == '.')) {
			out[len++] = '/';
			memcpy(out + len, p, n);
			len += n;
		}
		p += n;
	}
	if (len == 0)
		out[len++] = '/';
	out[len] = '\0';
	return out;
}

bool util_proc_private(const char *path)
{
	const char *c;
	size_t n;

	if (strncmp(path, "/proc/", 6) != 0)
		return false;
	c = path + 6;
	n = strcspn(c, "/");
	if ((n == 4 && strncmp(c, "self", 4) == 0) ||
	    (n == 11 && strncmp(c, "thread-self", 11) == 0))
		return true;
	return n > 0 && strspn(c, "0123456789") >= n;
}

char *util_path_canon(const char *path)
{
	char buf[PATH_MAX], *real, *out;
	size_t n = strlen(path), cut = n;
	const char *rest;

	if (path[0] != '/' || n >= sizeof(buf))
		return strdup(path);
	memcpy(buf, path, n + 1);
	/* Shorten from the end until a prefix resolves ("/" always does). */
	for (;;) {
		char *slash;

		real = realpath(cut ? buf : "/", NULL);
		if (real)
			break;
		if (errno == ENOMEM)
			return NULL;
		if (cut == 0)
			return strdup(path);
		slash = memrchr(buf, '/', cut);
		cut = slash ? (size_t)(slash - buf) : 0;
		buf[cut] = '\0';
	}
	rest = path + cut;
	if (!*rest)
		return real;
	if (strcmp(real, "/") == 0) {
		out = strdup(rest);
	} else if (asprintf(&out, "%s%s", real, rest) < 0) {
		out = NULL;
	}
	free(real);
	/* What does not exist is taken as written, but collapsed: a ".."
	 * after a missing name (a .git file's "gitdir: gone/../x"), a "//"
	 * or a trailing '/' would leave the result unlike every other
	 * canonical path (found by fuzz_gitrepo). */
	if (out && (strstr(rest, "/.") || strstr(rest, "//") ||
		    rest[strlen(rest) - 1] == '/')) {
		real = out;
		out = util_path_lexical(real);
		free(real);
	}
	return out;
}

int util_openat_dir(int dirfd, const char *name)
{
	int fd;

	do {
		fd = openat(dirfd, name,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	} while (fd < 0 && errno == EINTR);
	return fd;
}

long util_getdents64(int fd, void *buf, size_t len)
{
	long n;

	do
		n = syscall(SYS_getdents64, fd, buf, len);
	while (n < 0 && errno == EINTR);
	return n;
}

unsigned char util_dirent_type(int dirfd, const char *name)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return DT_UNKNOWN;
	return S_ISDIR(st.st_mode)   ? DT_DIR
	       : S_ISLNK(st.st_mode) ? DT_LNK
				     : DT_REG;
}

int util_mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof(buf) || path[0] != '/')
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, 0700) != 0 && errno != EEXIST)
			return -errno;
		buf[i] = path[i];
	}
	return 0;
}

size_t util_read_upto(int fd, void *buf, size_t len)
{
	char *p = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t r = read(fd, p + got, len - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	return got;
}

int util_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t w = write(fd, p, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				struct pollfd pfd = {.fd = fd,
						     .events = POLLOUT};

				poll(&pfd, 1, -1);
				continue;
			}
			return -errno;
		}
		if (w == 0)
			return -EIO;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* @i moved back (or, with @fwd, on) to a UTF-8 sequence's start. */
static size_t utf8_start(const char *s, size_t i, bool fwd)
{
	while (((unsigned char)s[i] & 0xc0) == 0x80 && (fwd || i > 0))
		i += fwd ? 1 : (size_t)-1;
	return i;
}

void util_shorten_middle(char *s, size_t limit)
{
	static const char mark[] = "\xe2\x80\xa6"; /* … */
	const size_t keep = 24, m = sizeof(mark) - 1;
	size_t len = strlen(s);

	while (len >= limit) {
		size_t best = 0, best_len = 0, i = 0, cut_from, cut_to, over;

		/* The longest word. */
		while (i < len) {
			size_t j = i;

			while (j < len && s[j] != ' ')
				j++;
			if (j - i > best_len) {
				best = i;
				best_len = j - i;
			}
			i = j + 1;
		}
		/* No word worth cutting: cut the middle of the whole. */
		if (best_len < 2 * keep + m + 1) {
			best = 0;
			best_len = len;
		}
		over = len - limit + 1 + m;
		if (over > best_len - 2 * keep)
			over = best_len - 2 * keep;
		cut_from = utf8_start(s, best + (best_len - over) / 2, false);
		cut_to = utf8_start(s, cut_from + over, true);
		memcpy(s + cut_from, mark, m);
		memmove(s + cut_from + m, s + cut_to, len - cut_to + 1);
		len -= cut_to - cut_from - m;
	}
}

size_t util_utf8_decode(unsigned *cp, const unsigned char *p, size_t len)
{
	unsigned c;
	size_t n;

	if (p[0] < 0x80) {
		if (cp)
			*cp = p[0];
		return 1;
	}
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, c = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, c = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, c = p[0] & 0x07;
	else
		return 0;
	if (n > len)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && c < 0x800) || (n == 4 && c < 0x10000) ||
	    (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		return 0;
	if (cp)
		*cp = c;
	return n;
}

int util_close_range_except(unsigned first, int keep, bool cloexec)
{
	unsigned flags = cloexec ? CLOSE_RANGE_CLOEXEC : 0;

	if (keep >= 0 && (unsigned)keep >= first) {
		if ((unsigned)keep > first &&
		    syscall(__NR_close_range, first, (unsigned)keep - 1,
			    flags) != 0)
			return -errno;
		first = (unsigned)keep + 1;
	}
	if (syscall(__NR_close_range, first, ~0U, flags) != 0)
		return -errno;
	return 0;
}

void util_close_from(unsigned first, int keep, bool cloexec)
{
	struct rlimit lim;

	if (util_close_range_except(first, keep, cloexec) == 0)
		return;
	if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur > 65536)
		lim.rlim_cur = 65536;
	for (unsigned fd = first; fd < lim.rlim_cur; fd++) {
		if ((int)fd == keep)
			continue;
		if (cloexec)
			fcntl((int)fd, F_SETFD, FD_CLOEXEC);
		else
			close((int)fd);
	}
}

void util_path_init(struct util_path_search *s, const char *path,
		    const char *name)
{
	s->next = path ? path : UTIL_PATH_DEFAULT;
	s->name = name;
	s->nlen = strlen(name);
}

bool util_path_next(struct util_path_search *s, char *buf, size_t len,
		    size_t *dlen)
{
	while (s->next) {
		const char *dir = s->next, *end = strchrnul(dir, ':');
		size_t n = (size_t)(end - dir);

		s->next = *end ? end + 1 : NULL;
		if (n + 1 + s->nlen + 1 > len)
			continue;
		if (n) {
			memcpy(buf, dir, n);
			buf[n] = '/';
			memcpy(buf + n + 1, s->name, s->nlen + 1);
		} else {
			memcpy(buf, s->name, s->nlen + 1);
		}
		*dlen = n;
		return true;
	}
	return false;
}

void util_keeper_sigset(sigset_t *set)
{
	static const int sigs[] = {SIGHUP,  SIGINT,   SIGQUIT, SIGTERM, SIGUSR1,
				   SIGUSR2, SIGWINCH, SIGCHLD, SIGIO,	0};

	sigemptyset(set);
	sigaddset(set, UTIL_KEEPER_KILL);
	for (size_t i = 0; sigs[i]; i++)
		sigaddset(set, sigs[i]);
}
