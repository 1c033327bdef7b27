/*
 * ward — the small files that only ward writes in its state directory
 * (see statefile.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "statefile.h"
#include "util/util.h"

bool ward_statefile_dir(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	int n;

	if (xdg && xdg[0] == '/')
		n = snprintf(buf, len, "%s/ward", xdg);
	else if (home && home[0] == '/')
		n = snprintf(buf, len, "%s/.local/state/ward", home);
	else
		return false;
	return n > 0 && (size_t)n < len;
}

/* True when @fd is ours and nobody else may write it. */
static bool trusted(int fd, bool dir)
{
	struct stat st;

	return fstat(fd, &st) == 0 && st.st_uid == geteuid() &&
	       !(st.st_mode & 022) &&
	       (dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode));
}

int ward_statefile_open(bool create)
{
	const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	char dir[PATH_MAX];
	int dfd;

	if (!ward_statefile_dir(dir, sizeof(dir)))
		return -1;
	dfd = open(dir, flags);
	if (dfd < 0 && errno == ENOENT && create && util_mkdir_p(dir) == 0)
		dfd = open(dir, flags);
	if (dfd >= 0 && !trusted(dfd, true)) {
		close(dfd);
		dfd = -1;
	}
	return dfd;
}

bool ward_statefile_read(int dfd, const char *name, const char *magic,
			 char *buf, size_t len)
{
	size_t m = strlen(magic);
	ssize_t n = -1;
	int fd;

	buf[0] = '\0';
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (trusted(fd, false)) {
		do
			n = read(fd, buf, len - 1);
		while (n < 0 && errno == EINTR);
	}
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	if (strncmp(buf, magic, m) != 0 || buf[m] != '\n') {
		buf[0] = '\0';
		return false;
	}
	return true;
}

void ward_statefile_write(int dfd, const char *name, const char *data,
			  size_t len)
{
	char tmp[NAME_MAX + 1];
	int fd, err;

	if (snprintf(tmp, sizeof(tmp), ".%s.%ld", name, (long)getpid()) >=
	    (int)sizeof(tmp))
		return;
	fd = openat(dfd, tmp,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	err = util_write_all(fd, data, len);
	if (close(fd) != 0 && !err)
		err = -errno;
	if (err || renameat(dfd, tmp, dfd, name) != 0)
		unlinkat(dfd, tmp, 0);
}
