/*
 * Unit tests for src/util/supervise.c: the pure path checks, and the
 * supervisor itself judging real calls in a forked child (no Landlock
 * needed: the child only sets no_new_privs and arms the filter).
 *
 * Children report through their exit status (the number of the first
 * check that failed), never through cmocka.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "landlock.h"
#include "supervise.h"

static void t_beneath(void **state)
{
	(void)state;
	assert_true(ward_sv_beneath("/a/b", "/a"));
	assert_true(ward_sv_beneath("/a/b/c", "/a"));
	assert_true(ward_sv_beneath("/a/b", "/a/"));
	assert_true(ward_sv_beneath("/x", "/"));
	assert_false(ward_sv_beneath("/a", "/a"));  /* the root itself */
	assert_false(ward_sv_beneath("/a/", "/a")); /* still the root */
	assert_false(ward_sv_beneath("/ab", "/a")); /* a sibling */
	assert_false(ward_sv_beneath("/", "/"));
	assert_false(ward_sv_beneath("a/b", "/a")); /* relative */
	assert_false(ward_sv_beneath("/a/b", "a"));
	assert_false(ward_sv_beneath(NULL, "/a"));
	assert_false(ward_sv_beneath("/a/b", NULL));
	assert_false(ward_sv_beneath("/tmp2/x", "/tmp"));
}

static void t_sockaddr(void **state)
{
	struct sockaddr_un un;
	struct sockaddr_in in4;
	char out[128];
	size_t base = offsetof(struct sockaddr_un, sun_path);

	(void)state;
	memset(&in4, 0, sizeof(in4));
	in4.sin_family = AF_INET;
	assert_int_equal(
	    ward_sv_sockaddr_path(&in4, sizeof(in4), out, sizeof(out)), 0);
	memset(&un, 0, sizeof(un));
	un.sun_family = AF_UNIX;
	/* unnamed (autobind) */
	assert_int_equal(ward_sv_sockaddr_path(&un, base, out, sizeof(out)), 0);
	/* abstract */
	memcpy(un.sun_path, "\0abs", 4);
	assert_int_equal(ward_sv_sockaddr_path(&un, base + 4, out, sizeof(out)),
			 0);
	/* a pathname, NUL-terminated */
	strcpy(un.sun_path, "/run/docker.sock");
	assert_int_equal(
	    ward_sv_sockaddr_path(&un, sizeof(un), out, sizeof(out)), 1);
	assert_string_equal(out, "/run/docker.sock");
	/* a pathname cut by the length, without a NUL (the kernel's way) */
	assert_int_equal(ward_sv_sockaddr_path(&un, base + 4, out, sizeof(out)),
			 1);
	assert_string_equal(out, "/run");
	/* all 108 bytes, no NUL */
	memset(un.sun_path, 'a', sizeof(un.sun_path));
	assert_int_equal(
	    ward_sv_sockaddr_path(&un, sizeof(un), out, sizeof(out)), 1);
	assert_int_equal(strlen(out), sizeof(un.sun_path));
	/* no room */
	assert_int_equal(ward_sv_sockaddr_path(&un, sizeof(un), out, 8),
			 -EINVAL);
	/* too short for a family */
	assert_int_equal(ward_sv_sockaddr_path(&un, 1, out, sizeof(out)), 0);
	assert_int_equal(ward_sv_sockaddr_path(NULL, 10, out, sizeof(out)), 0);
}

/* errno of @ret (-1: errno), 0 when it succeeded. */
static int err_of(int ret)
{
	return ret == 0 ? 0 : errno;
}

static int bind_socket(const char *path)
{
	struct sockaddr_un un;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(&un, 0, sizeof(un));
	un.sun_family = AF_UNIX;
	snprintf(un.sun_path, sizeof(un.sun_path), "%s", path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&un, sizeof(un)) != 0 ||
	    listen(fd, 4) != 0)
		return -1;
	return fd;
}

static int connect_err(const char *path)
{
	struct sockaddr_un un;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), ret;

	memset(&un, 0, sizeof(un));
	un.sun_family = AF_UNIX;
	snprintf(un.sun_path, sizeof(un.sun_path), "%s", path);
	ret = err_of(connect(fd, (struct sockaddr *)&un, sizeof(un)));
	close(fd);
	return ret;
}

/*
 * The child: a supervisor over @root (writable) with @allowed named, then
 * each call judged. Returns 0 or the number of the failed check.
 */
static int live_child(const char *root, const char *outside,
		      const char *old_sock, const char *allowed)
{
	const char *rw[] = {"/dev/null", root};
	const char *ok[] = {allowed};
	struct ward_sv sv = WARD_SV_INIT;
	char err[256], in[512], link[512], sock[512], tmp[512], gone[PATH_MAX];
	int fd, s;

	snprintf(in, sizeof(in), "%s/in", root);
	snprintf(link, sizeof(link), "%s/link", root);
	snprintf(sock, sizeof(sock), "%s/new.sock", root);
	snprintf(tmp, sizeof(tmp), "%s/tmpfile", root);
	/* Missing, outside the roots, in the test's own directory. */
	snprintf(gone, sizeof(gone), "%s.absent/x", outside);
	if (ward_sv_spawn(&sv, rw, 2, ok, 1, err, sizeof(err)) != 0)
		return 100;
	/* As after ward_ll_enforce(): no capability the supervisor (which
	 * drops all) lacks, else it may not take the listener. */
	if (ward_ll_drop_caps(err, sizeof(err)) != 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return 101;
	if (ward_sv_arm(&sv, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		return 102;
	}
	if (err_of(chmod(in, 0600)) != 0)
		return 1;
	if (err_of(chmod(outside, 0600)) != EACCES)
		return 2;
	if (err_of(chmod(link, 0600)) != EACCES) /* follows to outside */
		return 3;
	fd = open(outside, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || err_of(fchmod(fd, 0600)) != EACCES)
		return 4;
	close(fd);
	if (err_of(fchmodat(AT_FDCWD, root, 0700, 0)) != EACCES)
		return 5; /* the root itself: not beneath it */
	if (err_of(chmod("/dev/null", 0666)) != EACCES)
		return 6; /* a device, although a grant */
	if (err_of(chmod("/proc/self/cwd", 0700)) != EACCES)
		return 7; /* a magic link: refused, never misjudged */
	if (err_of(chmod(gone, 0600)) != ENOENT)
		return 8;
	/* An unlinked file reached by its descriptor: nobody else's. */
	fd = open(tmp, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || unlink(tmp) != 0 || err_of(fchmod(fd, 0644)) != 0)
		return 9;
	close(fd);
	if (connect_err(old_sock) != EACCES)
		return 10; /* bound before the call */
	s = bind_socket(sock);
	if (s < 0 || connect_err(sock) != 0)
		return 11; /* bound during the call */
	close(s);
	if (connect_err(allowed) != 0)
		return 12; /* named by --allow-unix */
	snprintf(gone, sizeof(gone), "%s.absent.sock", outside);
	if (connect_err(gone) != ENOENT)
		return 13;
	return 0;
}

static void t_live(void **state)
{
	char root[] = "/var/tmp/ward-sv-XXXXXX";
	char out[] = "/var/tmp/ward-sv-out-XXXXXX";
	char path[600], old[600], allowed[600];
	int status, fd, s1, s2;
	pid_t pid;

	(void)state;
	assert_non_null(mkdtemp(root));
	assert_non_null(mkdtemp(out));
	snprintf(path, sizeof(path), "%s/in", root);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	close(fd);
	snprintf(path, sizeof(path), "%s/victim", out);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	close(fd);
	snprintf(old, sizeof(old), "%s/link", root);
	assert_int_equal(symlink(path, old), 0);
	snprintf(old, sizeof(old), "%s/old.sock", root);
	s1 = bind_socket(old);
	assert_true(s1 >= 0);
	snprintf(allowed, sizeof(allowed), "%s/allowed.sock", out);
	s2 = bind_socket(allowed);
	assert_true(s2 >= 0);
	/* btime has a tick's granularity: the old socket is older. */
	usleep(20000);

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(live_child(root, path, old, allowed));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	close(s1);
	close(s2);
	{
		char cmd[1400];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", root, out);
		assert_int_equal(system(cmd), 0);
	}
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(t_beneath),
	    cmocka_unit_test(t_sockaddr),
	    cmocka_unit_test(t_live),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
