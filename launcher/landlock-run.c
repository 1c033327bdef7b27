/*
 * landlock-run — confine this process with Landlock, then exec a command.
 *
 *   landlock-run [--ro PATH]... [--rw PATH]... -- COMMAND [ARG...]
 *     (and --ro-if-exists / --rw-if-exists PATH: optional grants;
 *     --hide PATH / --hide-ro PATH: mounts in a private namespace, hide.h)
 *   landlock-run --probe
 *
 * Landlock can only restrict the calling process, so the launcher restricts
 * itself and then execs: the ruleset is inherited across execve by the
 * command and everything it spawns, while whoever started the launcher stays
 * unconfined. Plan, then apply: every argument is parsed before the kernel
 * is touched; then build the ruleset, drop capabilities, set no_new_privs,
 * landlock_restrict_self(), close inherited descriptors, exec.
 *
 * Every fatal launcher error prints one line `landlock-run: <message>` to
 * stderr and exits 125 without running the command — a code the wrapped
 * command itself is unlikely to use, so the executor can tell "the sandbox
 * was not built, nothing ran" from "the command failed". The one non-fatal
 * line is the info line `landlock-run: partial enforcement …`.
 *
 * Static and dependency-free: libc plus src/landlock.c (shared with libward,
 * so the launcher and the in-process executor cannot drift).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hide.h"
#include "landlock.h"

#ifndef LANDLOCK_RUN_VERSION
#define LANDLOCK_RUN_VERSION "0.1.0"
#endif

#ifndef __NR_close_range
#define __NR_close_range 436
#endif

#define PROG "landlock-run"

/* The launcher itself failed; the command did not run. */
#define EXIT_LAUNCHER_FAILURE 125

/* The parsed command line: what to grant and what to run. */
struct plan {
	const char **ro; /* --ro paths, in order */
	size_t nro;
	const char **rw; /* --rw paths, in order */
	size_t nrw;
	const char **hide; /* --hide / --hide-ro paths, in order */
	enum ward_hide_kind *hide_kind;
	size_t nhide;
	char **cmd; /* after --; NULL-terminated (argv's own) */
	bool probe;
};

static const char usage_text[] =
    "Usage: " PROG " [--ro PATH]... [--rw PATH]... [--hide PATH]...\n"
    "                    [--hide-ro PATH]... -- COMMAND [ARG...]\n"
    "       " PROG " --probe\n"
    "\n"
    "Confine this process with Landlock, then execute COMMAND. Every\n"
    "filesystem access the kernel can govern is denied except:\n"
    "\n"
    "  --ro PATH   read and execute beneath PATH\n"
    "  --rw PATH   read, write, create, remove, rename beneath PATH\n"
    "              (never device nodes)\n"
    "  --ro-if-exists PATH, --rw-if-exists PATH\n"
    "              the same, skipped when PATH no longer exists (a\n"
    "              missing --ro or --rw PATH is an error)\n"
    "  --hide PATH    hide PATH, in a private mount namespace: a\n"
    "              directory behind an empty read-only tmpfs, a file\n"
    "              behind /dev/null (neither readable nor writable)\n"
    "  --hide-ro PATH bind PATH onto itself read-only (same namespace)\n"
    "              (a PATH that no longer exists, or is a symbolic link,\n"
    "              is skipped: a mount would follow the link)\n"
    "  --probe     restrict a short-lived child and report\n"
    "              \"landlock: fully enforced\" or\n"
    "              \"landlock: partially enforced\"\n"
    "  -h, --help  show this help\n"
    "  --version   show the version\n"
    "\n"
    "The command runs without capabilities, with no_new_privs, and without\n"
    "descriptors other than 0, 1 and 2. Launcher failures print\n"
    "\"" PROG ": <message>\" and exit 125.\n";

static void die(const char *fmt, ...)
    __attribute__((noreturn, format(printf, 1, 2)));
static void die_usage(const char *msg, const char *arg)
    __attribute__((noreturn));
static void die_prepare(int ret, const char *err) __attribute__((noreturn));

/* Print "landlock-run: <message>" and exit 125. */
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_LAUNCHER_FAILURE);
}

/* A usage error: the message, then where to look. */
static void die_usage(const char *msg, const char *arg)
{
	if (arg)
		fprintf(stderr, PROG ": %s: %s (try '" PROG " --help')\n", msg,
			arg);
	else
		fprintf(stderr, PROG ": %s (try '" PROG " --help')\n", msg);
	exit(EXIT_LAUNCHER_FAILURE);
}

/*
 * ward_ll_prepare() failed: print its message, with a hint when the kernel
 * simply has no usable Landlock (the operator can fix that, we cannot).
 */
static void die_prepare(int ret, const char *err)
{
	fprintf(stderr, PROG ": %s\n", err);
	if (ret == -EOPNOTSUPP)
		fputs("Hint: Landlock is not enabled; boot with "
		      "lsm=<current list>,landlock (see "
		      "/sys/kernel/security/lsm) or build with "
		      "CONFIG_LSM containing landlock.\n",
		      stderr);
	else if (ret == -ENOSYS)
		fputs("Hint: the running kernel has no Landlock; it needs "
		      "Linux 5.13 or later built with "
		      "CONFIG_SECURITY_LANDLOCK=y (or a seccomp filter "
		      "blocks landlock_create_ruleset).\n",
		      stderr);
	exit(EXIT_LAUNCHER_FAILURE);
}

/* Print the partial-enforcement info line when @rs cannot govern all. */
static void report_partial(const struct ward_ll_ruleset *rs)
{
	char msg[512];

	if (!rs->partial)
		return;
	ward_ll_partial_message(rs, msg, sizeof(msg));
	fprintf(stderr, PROG ": %s\n", msg);
}

/*
 * Close every descriptor above stderr, so nothing the caller had open (a
 * socket, a session log, a pipe to the agent) reaches the command. Done
 * first, before the launcher opens anything of its own, while /proc is still
 * readable for the fallback.
 */
static void close_inherited_fds(void)
{
	struct rlimit rl;
	struct dirent *de;
	unsigned long fd, max;
	DIR *dir;

	if (syscall(__NR_close_range, 3U, ~0U, 0U) == 0)
		return;

	/* close_range (Linux 5.9) may be filtered by seccomp: walk /proc. */
	dir = opendir("/proc/self/fd");
	if (dir) {
		while ((de = readdir(dir)) != NULL) {
			char *end;

			errno = 0;
			fd = strtoul(de->d_name, &end, 10);
			if (errno || *end || end == de->d_name)
				continue;
			if (fd > 2 && (int)fd != dirfd(dir))
				close((int)fd);
		}
		closedir(dir);
		return;
	}

	/* No /proc either: try every descriptor the limits allow. */
	max = 1UL << 20;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    rl.rlim_max != RLIM_INFINITY && rl.rlim_max < max)
		max = rl.rlim_max;
	for (fd = 3; fd < max; fd++)
		close((int)fd);
}

/* Take the argument of an option given as "--opt VALUE" or "--opt=VALUE". */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);
	const char *a = argv[*i];

	if (a[n] == '=')
		return a + n + 1;
	if (*i + 1 >= argc || strcmp(argv[*i + 1], "--") == 0)
		die_usage("option needs a PATH", name);
	return argv[++*i];
}

static bool is_opt(const char *a, const char *name)
{
	size_t n = strlen(name);

	return strncmp(a, name, n) == 0 && (a[n] == '\0' || a[n] == '=');
}

/* @path marked as an optional grant for ward_ll_prepare() (landlock.h). */
static const char *optional(const char *path)
{
	size_t n = strlen(path);
	char *s = malloc(n + 2);

	if (!s)
		die("out of memory");
	s[0] = WARD_LL_OPTIONAL;
	memcpy(s + 1, path, n + 1);
	return s;
}

/* Parse the whole command line into @p before touching the kernel. */
static void parse(struct plan *p, int argc, char **argv)
{
	int i;

	memset(p, 0, sizeof(*p));
	/* At most argc paths: one array each, owned until exec/exit. */
	p->ro = calloc((size_t)argc, sizeof(*p->ro));
	p->rw = calloc((size_t)argc, sizeof(*p->rw));
	p->hide = calloc((size_t)argc, sizeof(*p->hide));
	p->hide_kind = calloc((size_t)argc, sizeof(*p->hide_kind));
	if (!p->ro || !p->rw || !p->hide || !p->hide_kind)
		die("out of memory");

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0) {
			p->cmd = &argv[i + 1];
			break;
		} else if (is_opt(a, "--ro-if-exists")) {
			p->ro[p->nro++] = optional(
			    opt_value(argc, argv, &i, "--ro-if-exists"));
		} else if (is_opt(a, "--rw-if-exists")) {
			p->rw[p->nrw++] = optional(
			    opt_value(argc, argv, &i, "--rw-if-exists"));
		} else if (is_opt(a, "--hide-ro")) {
			p->hide_kind[p->nhide] = WARD_HIDE_RO;
			p->hide[p->nhide++] =
			    opt_value(argc, argv, &i, "--hide-ro");
		} else if (is_opt(a, "--hide")) {
			p->hide_kind[p->nhide] = WARD_HIDE_NONE;
			p->hide[p->nhide++] =
			    opt_value(argc, argv, &i, "--hide");
		} else if (is_opt(a, "--ro")) {
			p->ro[p->nro++] = opt_value(argc, argv, &i, "--ro");
		} else if (is_opt(a, "--rw")) {
			p->rw[p->nrw++] = opt_value(argc, argv, &i, "--rw");
		} else if (strcmp(a, "--probe") == 0) {
			p->probe = true;
		} else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(usage_text, stdout);
			exit(fflush(stdout) == 0 ? 0 : EXIT_LAUNCHER_FAILURE);
		} else if (strcmp(a, "--version") == 0) {
			puts(PROG " " LANDLOCK_RUN_VERSION);
			exit(fflush(stdout) == 0 ? 0 : EXIT_LAUNCHER_FAILURE);
		} else if (a[0] == '-') {
			die_usage("unknown option", a);
		} else {
			die_usage("unexpected argument before --", a);
		}
	}

	if (p->probe) {
		if (p->nro || p->nrw || p->nhide || p->cmd)
			die_usage("--probe takes no other arguments", NULL);
		return;
	}
	if (!p->cmd)
		die_usage("missing -- before the command", NULL);
	if (!p->cmd[0])
		die_usage("no command after --", NULL);
}

/*
 * --hide / --hide-ro: a private mount namespace, then the mounts, in the
 * order given (read-only binds before hides: a hide inside a read-only
 * path lands on the read-only copy). Done before the ruleset is built and
 * before the capabilities are dropped: the command inherits the namespace
 * with no capability to unmount, and Landlock forbids it every mount
 * change anyway. The working directory is entered again by its name, so a
 * hidden one is seen as hidden (the old reference would still reach what
 * lies under the cover).
 */
static void apply_hides(const struct plan *p)
{
	char err[512], cwd[4096];
	bool skipped;
	size_t i;
	int ret;

	if (!p->nhide)
		return;
	if (!getcwd(cwd, sizeof(cwd)))
		die("cannot tell the working directory: %s", strerror(errno));
	ret = ward_hide_unshare(err, sizeof(err));
	if (ret)
		die("%s", err);
	for (int pass = 0; pass < 2; pass++) {
		enum ward_hide_kind k = pass ? WARD_HIDE_NONE : WARD_HIDE_RO;

		for (i = 0; i < p->nhide; i++) {
			if (p->hide_kind[i] != k)
				continue;
			ret = ward_hide_apply(p->hide[i], k, &skipped, err,
					      sizeof(err));
			if (ret)
				die("%s", err);
		}
	}
	if (chdir(cwd) != 0)
		die("cannot enter the working directory %s after hiding "
		    "paths: %s",
		    cwd, strerror(errno));
}

/*
 * The probe child: really restrict, then check that the restriction bites.
 * Actually restricting is the only honest signal: a kernel may report an
 * ABI and still refuse (or silently not apply) a ruleset. Returns 0 when
 * the process is restricted; otherwise prints why and returns 1.
 */
static int probe_child(const struct ward_ll_ruleset *rs)
{
	char err[256];
	bool scope_signal = (rs->scoped & LANDLOCK_SCOPE_SIGNAL) != 0;
	pid_t parent = getppid();
	int fd;

	/* /dev/null is writable by everyone: refusal after restricting can
	 * only come from Landlock. */
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr,
			PROG ": probe: cannot open /dev/null for writing even "
			     "before restricting: %s\n",
			strerror(errno));
		return 1;
	}
	close(fd);
	if (scope_signal && kill(parent, 0) != 0) {
		fprintf(stderr,
			PROG ": probe: cannot signal the parent even before "
			     "restricting: %s\n",
			strerror(errno));
		return 1;
	}

	if (ward_ll_enforce(rs, err, sizeof(err)) != 0) {
		fprintf(stderr, PROG ": %s\n", err);
		return 1;
	}

	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd >= 0 || errno != EACCES) {
		fprintf(stderr,
			PROG ": probe: the ruleset was accepted but writing "
			     "/dev/null was not denied (%s)\n",
			fd >= 0 ? "it succeeded" : strerror(errno));
		return 1;
	}
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr,
			PROG ": probe: reading / was denied although granted: "
			     "%s\n",
			strerror(errno));
		return 1;
	}
	close(fd);
	if (scope_signal && (kill(parent, 0) == 0 || errno != EPERM)) {
		fprintf(stderr,
			PROG ": probe: signal scoping was not enforced (%s)\n",
			errno == EPERM ? "kill succeeded" : strerror(errno));
		return 1;
	}
	return 0;
}

/* --probe: exit 0 only when a child really was restricted. */
static int probe(void)
{
	static const char *const ro[] = {"/"};
	struct ward_ll_ruleset rs;
	char err[512];
	pid_t pid;
	int status;
	int ret;

	ret = ward_ll_prepare(&rs, ro, 1, NULL, 0, err, sizeof(err));
	if (ret)
		die_prepare(ret, err);

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("probe: fork: %s", strerror(errno));
	if (pid == 0)
		_exit(probe_child(&rs));
	ward_ll_close(&rs);

	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			die("probe: waitpid: %s", strerror(errno));
	}
	if (WIFSIGNALED(status))
		die("probe: the restricted child was killed by signal %d",
		    WTERMSIG(status));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		exit(EXIT_LAUNCHER_FAILURE); /* the child said why */

	report_partial(&rs);
	printf("landlock: %s\n",
	       rs.partial ? "partially enforced" : "fully enforced");
	return fflush(stdout) == 0 ? 0 : EXIT_LAUNCHER_FAILURE;
}

int main(int argc, char **argv)
{
	struct ward_ll_ruleset rs;
	struct plan p;
	char err[512];
	int ret;
	int e;

	parse(&p, argc, argv);
	close_inherited_fds();
	if (p.probe) {
		free(p.ro);
		free(p.rw);
		return probe();
	}
	apply_hides(&p);

	ret = ward_ll_prepare(&rs, p.ro, p.nro, p.rw, p.nrw, err, sizeof(err));
	if (ret)
		die_prepare(ret, err);
	report_partial(&rs);

	ret = ward_ll_enforce(&rs, err, sizeof(err));
	if (ret)
		die("%s", err);
	ward_ll_close(&rs);

	execvp(p.cmd[0], p.cmd);
	e = errno;
	if (e == ENOENT && !strchr(p.cmd[0], '/'))
		die("%s: command not found", p.cmd[0]);
	die("cannot execute %s: %s", p.cmd[0], strerror(e));
}
