/*
 * landlock-run — confine this process with Landlock, then exec a command.
 *
 *   landlock-run [--ro PATH]... [--rw PATH]... [--allow-unix PATH]...
 *                [--net-off | --net-connect PORT]
 *                [--hide PATH]... [--hide-ro PATH]... [--pin DIR]...
 *                -- COMMAND [ARG...]
 *     (and --ro-if-exists / --rw-if-exists PATH: optional grants;
 *     --hide / --hide-ro / --pin: mounts in the command's mount namespace,
 *     hide.h)
 *   landlock-run --kept --pid-fd N [grants...] -- COMMAND [ARG...]
 *   landlock-run --unconfined -- COMMAND [ARG...]
 *   landlock-run --probe
 *   landlock-run --args FD   (the same command line, read from FD)
 *
 * Landlock can only restrict the calling process, so the command's side
 * restricts itself and then execs: the ruleset is inherited across execve by
 * the command and everything it spawns. Plan, then apply: every argument is
 * parsed before the kernel is touched; then start the keeper (below); its
 * child, the supervisor, builds the ruleset, drops capabilities, sets
 * no_new_privs, installs the metadata and network filter,
 * landlock_restrict_self(), and forks the command, which arms the
 * supervisor's filter (src/util/supervise.c: chmod/chown/xattr/utime/inode
 * flags and unix-socket connects, judged by its parent, which performs
 * them inside the same domain) and execs.
 *
 * The keeper: the launcher itself stays, unconfined, as the parent of the
 * supervisor, so that when the command ends every process it started ends
 * too (setsid'd daemons, double forks, a zombie held by a tracer). With
 * CAP_SYS_ADMIN (root) the supervisor is init of a new pid namespace: when
 * the command exits, init exits and the kernel kills everything left in
 * the namespace; init mounts the namespace's own /proc in a mount
 * namespace of its own (so /proc/$$ is the command's). Without it the
 * keeper is a child subreaper and, when the command has exited, kills and
 * reaps every descendant left, until none is (no time budget: a tracer is
 * killed like the rest, which frees the zombie it held). The supervisor
 * dies with the keeper and the command with the supervisor
 * (PR_SET_PDEATHSIG); a supervisor that dies first is the run's failure
 * (125). The keeper forwards SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1,
 * SIGUSR2 and SIGWINCH to the supervisor, which passes them on to the
 * command's session (the command leads a new one), ends the whole tree on
 * UTIL_KEEPER_KILL (SIGRTMAX; also its parent-death signal, so a killed
 * caller takes the tree down), and exits with the command's status (a
 * signal is raised again on itself). See docs/RUNNERS.md.
 *
 * --kept: the caller is the keeper. It contains what the command leaves
 * behind should this process die (a subreaper or a cgroup of its own),
 * and, where it can, starts this process as init of a new pid namespace
 * (clone with CLONE_NEWPID). Then there is no keeper process: this
 * process is the supervisor from the start, as a child subreaper (or
 * init) of its own, and does the keeper's part of the work itself: it
 * takes the kill signal and a caller's death (SIGIO on the report
 * descriptor, which --kept needs) as the end of the tree, sweeps what
 * the command left, and reports how the run ended. One process fewer per
 * call (docs/RUNNERS.md). Its caller execs it with those signals blocked
 * (util_keeper_sigset): as init it would lose one sent before it takes
 * them, and the command starts without them blocked.
 *
 * --unconfined: the keeper only, for a danger-full-access call (which ward
 * does not confine, but whose processes must still end with it): nothing is
 * restricted, no capability is dropped from the command, and there is no
 * pid namespace even as root (it would hide the host's processes and keep
 * the command's mounts from the host); the keeper is a subreaper and sweeps.
 *
 * Every fatal launcher error prints one line `landlock-run: <message>` to
 * stderr and exits 125 without running the command — a code the wrapped
 * command itself is unlikely to use, so the executor can tell "the sandbox
 * was not built, nothing ran" from "the command failed". The one non-fatal
 * line is the info line `landlock-run: partial enforcement …`.
 *
 * Static and dependency-free: libc plus src/util/landlock.c (shared with libward,
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
#include <poll.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/hide.h"
#include "util/landlock.h"
#include "util/supervise.h"
#include "util/util.h"

#ifndef LANDLOCK_RUN_VERSION
#define LANDLOCK_RUN_VERSION "0.1.0"
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
	const char **unix_ok; /* --allow-unix paths */
	size_t nunix;
	const char **hide; /* --hide / --hide-ro paths, in order */
	enum ward_hide_kind *hide_kind;
	size_t nhide;
	char **cmd; /* after --; NULL-terminated (argv's own) */
	bool probe;
	bool shell_status; /* --shell-status */
	bool unconfined;   /* --unconfined: keep, do not confine */
	bool kept;	   /* --kept: the caller keeps, we supervise */
	int net;	   /* enum ward_ll_net */
	unsigned net_port;
	int pid_fd; /* --pid-fd N, or -1 */
};

static const char usage_text[] =
    "Usage: " PROG " [--ro PATH]... [--rw PATH]... [--allow-unix PATH]...\n"
    "                    [--net-off | --net-connect PORT]\n"
    "                    [--hide PATH]... [--hide-ro PATH]... [--pin DIR]...\n"
    "                    -- COMMAND [ARG...]\n"
    "       " PROG " --kept --pid-fd N [OPTION]... -- COMMAND [ARG...]\n"
    "       " PROG " --unconfined [--shell-status] -- COMMAND [ARG...]\n"
    "       " PROG " --probe\n"
    "       " PROG " --args FD\n"
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
    "  --allow-unix PATH\n"
    "              let the command connect to the unix socket PATH (or\n"
    "              any socket beneath the directory PATH)\n"
    "  --shell-status\n"
    "              a COMMAND that cannot be executed is the command's\n"
    "              failure, reported like a shell: exit 127 (not found)\n"
    "              or 126, not 125\n"
    "  --net-off   no network: every inet connect and send fails with\n"
    "              ENETUNREACH, no inet bind or listen; no socket but\n"
    "              unix, route netlink, TCP and UDP (others: EAFNOSUPPORT)\n"
    "  --net-connect PORT\n"
    "              TCP connect to " WARD_LL_PROXY_ADDR ":PORT only\n"
    "              (a proxy's; others ECONNREFUSED), no bind; sockets\n"
    "              as --net-off (Landlock ABI 4)\n"
    "  --net-local the network namespace is the sandbox's own (bwrap's):\n"
    "              refuse only vsock and non-route netlink sockets\n"
    "  --pid-fd N  write the pid of the process that confines itself\n"
    "              (the one the kernel's audit records name) to the\n"
    "              open descriptor N; the supervisor then writes there\n"
    "              its record of refused network access (supervise.h)\n"
    "  --hide PATH    hide PATH, in a private mount namespace: a\n"
    "              directory behind an empty read-only tmpfs, a file\n"
    "              behind /dev/null (neither readable nor writable)\n"
    "  --hide-ro PATH bind PATH onto itself read-only (same namespace)\n"
    "  --pin DIR   bind DIR onto itself as it is (same namespace): a\n"
    "              mount point cannot be renamed or removed\n"
    "              (a PATH that no longer exists, or is a symbolic link,\n"
    "              is skipped: a mount would follow the link)\n"
    "  --args FD   read the whole command line (the options above, --,\n"
    "              COMMAND and its arguments) from descriptor FD, each\n"
    "              argument ended by a NUL byte, then close FD; alone\n"
    "  --kept      the caller is the command's keeper: it contains\n"
    "              what the command leaves behind should this process\n"
    "              die (a subreaper, or a cgroup), and may start this\n"
    "              process as init of a new pid namespace; no keeper\n"
    "              process of our own (needs --pid-fd: the caller's\n"
    "              end closing ends the command; the pid line is 0 in\n"
    "              a pid namespace, where the caller knows the pid;\n"
    "              start it there with the signals it forwards and\n"
    "              SIGCHLD, SIGIO and SIGRTMAX blocked: init loses a\n"
    "              signal sent before it takes it; the command starts\n"
    "              without them blocked)\n"
    "  --unconfined\n"
    "              confine nothing: only stay as the command's keeper, so\n"
    "              that every process it starts ends with it (no other\n"
    "              option but --shell-status and --pid-fd)\n"
    "  --probe     restrict a short-lived child and report\n"
    "              \"landlock: fully enforced\" or\n"
    "              \"landlock: partially enforced\", then whether TCP is\n"
    "              governed (\"landlock: network: tcp\" or \"... none\")\n"
    "  -h, --help  show this help\n"
    "  --version   show the version\n"
    "\n"
    "The command runs without capabilities, with no_new_privs, and without\n"
    "descriptors other than 0, 1 and 2. A supervisor performs or refuses\n"
    "(EACCES) chmod, chown, extended attributes, timestamps and inode\n"
    "flags outside the --rw paths, and every connect, bind and addressed\n"
    "send: a unix socket is reachable only when the command's own\n"
    "processes bound it or --allow-unix names it. io_uring is refused\n"
    "(ENOSYS). Launcher failures print\n"
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
static void close_inherited_fds(int keep_fd)
{
	struct rlimit rl;
	struct dirent *de;
	unsigned long fd, max;
	DIR *dir;

	if (util_close_range_except(3, keep_fd, false) == 0)
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
			if (fd > 2 && (int)fd != dirfd(dir) &&
			    (int)fd != keep_fd)
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
		if ((int)fd != keep_fd)
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

/* More than bwrap's or the kernel's argv limits can carry, with room. */
#define ARGS_MAX_BYTES (256u << 20)

/*
 * `--args FD`: the command line comes from FD (NUL-terminated arguments),
 * for a caller whose own runner limits its argv (bwrap 0.8 refuses more
 * than 9,000 arguments, the command's included). *argc and *argv are
 * replaced by argv[0] and what FD holds; FD is closed.
 */
static void load_args(int *argc, char ***argv)
{
	size_t len = 0, cap = 65536, n = 0;
	char *buf = NULL, *end, **v;
	ssize_t r;
	long fd;

	if (*argc < 2 || !is_opt((*argv)[1], "--args"))
		return;
	if (*argc != 3 || strchr((*argv)[1], '='))
		die_usage("--args FD takes no other arguments", NULL);
	errno = 0;
	fd = strtol((*argv)[2], &end, 10);
	if (errno || *end || end == (*argv)[2] || fd < 0 || fd > 65535)
		die_usage("--args needs a descriptor number", (*argv)[2]);
	for (;;) {
		if (len == cap || !buf) {
			char *grown;

			if (buf)
				cap *= 2;
			if (cap > ARGS_MAX_BYTES)
				die("--args: more than %u bytes of arguments",
				    ARGS_MAX_BYTES);
			grown = realloc(buf, cap);
			if (!grown)
				die("out of memory");
			buf = grown;
		}
		r = read((int)fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die("--args: cannot read descriptor %ld: %s", fd,
			    strerror(errno));
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close((int)fd);
	if (len == 0 || buf[len - 1] != '\0')
		die("--args: descriptor %ld does not end with a NUL byte", fd);
	for (size_t i = 0; i < len; i++)
		n += buf[i] == '\0';
	v = calloc(n + 2, sizeof(*v));
	if (!v)
		die("out of memory");
	v[0] = (*argv)[0];
	for (size_t i = 0, k = 1; i < len; k++) {
		v[k] = buf + i;
		i += strlen(buf + i) + 1;
	}
	*argc = (int)n + 1;
	*argv = v;
}

/* Parse the whole command line into @p before touching the kernel. */
static void parse(struct plan *p, int argc, char **argv)
{
	int i;

	memset(p, 0, sizeof(*p));
	p->pid_fd = -1;
	/* At most argc paths: one array each, owned until exec/exit. */
	p->ro = calloc((size_t)argc, sizeof(*p->ro));
	p->rw = calloc((size_t)argc, sizeof(*p->rw));
	p->unix_ok = calloc((size_t)argc, sizeof(*p->unix_ok));
	p->hide = calloc((size_t)argc, sizeof(*p->hide));
	p->hide_kind = calloc((size_t)argc, sizeof(*p->hide_kind));
	if (!p->ro || !p->rw || !p->unix_ok || !p->hide || !p->hide_kind)
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
		} else if (is_opt(a, "--pin")) {
			p->hide_kind[p->nhide] = WARD_HIDE_PIN;
			p->hide[p->nhide++] = opt_value(argc, argv, &i, "--pin");
		} else if (is_opt(a, "--hide")) {
			p->hide_kind[p->nhide] = WARD_HIDE_NONE;
			p->hide[p->nhide++] =
			    opt_value(argc, argv, &i, "--hide");
		} else if (is_opt(a, "--ro")) {
			p->ro[p->nro++] = opt_value(argc, argv, &i, "--ro");
		} else if (is_opt(a, "--rw")) {
			p->rw[p->nrw++] = opt_value(argc, argv, &i, "--rw");
		} else if (is_opt(a, "--allow-unix")) {
			const char *v =
			    opt_value(argc, argv, &i, "--allow-unix");

			if (v[0] != '/')
				die_usage("--allow-unix needs an absolute "
					  "path",
					  v);
			p->unix_ok[p->nunix++] = v;
		} else if (strcmp(a, "--net-off") == 0) {
			if (p->net != WARD_LL_NET_ON)
				die_usage("give one network option", a);
			p->net = WARD_LL_NET_OFF;
		} else if (strcmp(a, "--net-local") == 0) {
			if (p->net != WARD_LL_NET_ON)
				die_usage("give one network option", a);
			p->net = WARD_LL_NET_LOCAL;
		} else if (is_opt(a, "--net-connect")) {
			const char *v =
			    opt_value(argc, argv, &i, "--net-connect");
			char *end;
			unsigned long port;

			if (p->net != WARD_LL_NET_ON)
				die_usage("give one network option", a);
			errno = 0;
			port = strtoul(v, &end, 10);
			if (errno || *end || end == v || v[0] == '-' ||
			    port == 0 || port > 65535)
				die_usage("--net-connect needs a port number "
					  "from 1 to 65535",
					  v);
			p->net = WARD_LL_NET_CONNECT;
			p->net_port = (unsigned)port;
		} else if (strcmp(a, "--probe") == 0) {
			p->probe = true;
		} else if (strcmp(a, "--unconfined") == 0) {
			p->unconfined = true;
		} else if (strcmp(a, "--kept") == 0) {
			p->kept = true;
		} else if (strcmp(a, "--shell-status") == 0) {
			p->shell_status = true;
		} else if (is_opt(a, "--pid-fd")) {
			const char *v = opt_value(argc, argv, &i, "--pid-fd");
			char *end;
			long fd;

			errno = 0;
			fd = strtol(v, &end, 10);
			if (errno || *end || end == v || fd < 3 || fd > 65535 ||
			    fcntl((int)fd, F_GETFD) < 0)
				die_usage("--pid-fd needs an open descriptor "
					  "above 2",
					  v);
			p->pid_fd = (int)fd;
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
		if (p->nro || p->nrw || p->nunix || p->nhide || p->cmd ||
		    p->net || p->kept)
			die_usage("--probe takes no other arguments", NULL);
		return;
	}
	if (p->unconfined &&
	    (p->nro || p->nrw || p->nunix || p->nhide || p->net))
		die_usage("--unconfined takes no grant, hide or network "
			  "option",
			  NULL);
	if (p->kept && (p->unconfined || p->pid_fd < 0))
		die_usage(p->unconfined ? "--kept confines: not with "
					  "--unconfined"
					: "--kept needs --pid-fd",
			  NULL);
	if (!p->cmd)
		die_usage("missing -- before the command", NULL);
	if (!p->cmd[0])
		die_usage("no command after --", NULL);
}

/* init made a mount namespace of its own (the command inherits it): the
 * hides go there, without a second unshare. */
static bool own_mntns;

/*
 * --hide / --hide-ro, in the command's process (after keep()): a private
 * mount namespace (init's when it made one), then the mounts: the pins,
 * the read-only binds, the hides, each in the order given (a pin before
 * what lies inside it, a read-only bind before a hide inside it: the later
 * mount lands on the earlier copy). Done before the ruleset is built and
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
	/* One mount namespace per call: init's (root: the pid namespace's
	 * own /proc lives there), else one made here. */
	if (!own_mntns) {
		ret = ward_hide_unshare(err, sizeof(err));
		if (ret)
			die("%s", err);
	}
	for (int pass = 0; pass < 3; pass++) {
		static const enum ward_hide_kind order[] = {
		    WARD_HIDE_PIN, WARD_HIDE_RO, WARD_HIDE_NONE};
		enum ward_hide_kind k = order[pass];

		for (i = 0; i < p->nhide; i++) {
			if (p->hide_kind[i] != k)
				continue;
			ret = ward_hide_apply(p->hide[i], k, &skipped, err,
					      sizeof(err));
			if (ret)
				die("%s", err);
		}
	}
	ward_hide_end();
	if (chdir(cwd) != 0)
		die("cannot enter the working directory %s after hiding "
		    "paths: %s",
		    cwd, strerror(errno));
}

/*
 * The probe's command, armed by its supervisor (probe_child): a judged
 * call refused, the ruleset biting, and the nested layer keeping it from
 * signalling the supervisor. Returns 0, or prints why and returns 1.
 */
static int probe_command(const struct ward_ll_ruleset *rs, int sock)
{
	struct ward_sv sv = {.sock = sock, .pid = 0};
	bool scope_signal = (rs->scoped & LANDLOCK_SCOPE_SIGNAL) != 0;
	pid_t parent = getppid();
	char err[256];
	int fd;

	if (scope_signal && kill(parent, 0) != 0) {
		fprintf(stderr,
			PROG ": probe: cannot signal the supervisor before "
			     "arming: %s\n",
			strerror(errno));
		return 1;
	}
	if (ward_sv_arm(&sv, err, sizeof(err)) != 0) {
		fprintf(stderr, PROG ": probe: %s\n", err);
		return 1;
	}
	/* A judged call the supervisor must refuse: a device node. */
	fd = chmod("/dev/null", 0666);
	if (fd == 0 || errno != EACCES) {
		fprintf(stderr,
			PROG ": probe: the supervisor did not refuse chmod of "
			     "/dev/null (%s)\n",
			fd == 0 ? "it succeeded" : strerror(errno));
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

/* The probe's supervisor: the end of its command (a pidfd readable). */
static int probe_ready(void *ctx)
{
	(void)ctx;
	return 1;
}

/*
 * The probe child: really restrict, then check that the restriction bites,
 * the way a run does — this process serves the listener of a command it
 * forks. Actually restricting is the only honest signal: a kernel may
 * report an ABI and still refuse (or silently not apply) a ruleset.
 * Returns 0 when the process is restricted; otherwise prints why and
 * returns 1.
 */
static int probe_child(const struct ward_ll_ruleset *rs)
{
	static const char *const rw[] = {"/dev/null"};
	struct ward_sv_config cfg = {.report_fd = -1, .net = WARD_LL_NET_ON};
	struct ward_sv_host host = {.fd = -1, .ready = probe_ready};
	char err[256];
	pid_t cmd;
	int fd, sp[2], lfd, status, ret;

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

	/* Every run has a supervisor: one that cannot start or arm here
	 * (seccomp without user notification, a listener already installed
	 * by an outer sandbox) would fail every run. */
	if (ward_ll_enforce(rs, err, sizeof(err)) != 0) {
		fprintf(stderr, PROG ": %s\n", err);
		return 1;
	}
	cfg.rw = rw;
	cfg.nrw = 1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) != 0) {
		fprintf(stderr, PROG ": probe: socketpair: %s\n",
			strerror(errno));
		return 1;
	}
	fflush(NULL);
	cmd = fork();
	if (cmd < 0) {
		fprintf(stderr, PROG ": probe: fork: %s\n", strerror(errno));
		return 1;
	}
	if (cmd == 0) {
		close(sp[0]);
		_exit(probe_command(rs, sp[1]));
	}
	close(sp[1]);
	lfd = ward_sv_take(sp[0], cmd, err, sizeof(err));
	close(sp[0]);
	host.fd = (int)syscall(SYS_pidfd_open, cmd, 0U);
	ret = lfd < 0 || host.fd < 0 ? 1 : ward_sv_serve(lfd, &cfg, &host);
	if (ret != 0) {
		if (lfd >= 0)
			fprintf(stderr, PROG ": probe: supervisor: %s\n",
				host.fd < 0 ? "pidfd_open failed"
					    : "the listener failed");
		kill(cmd, SIGKILL);
	}
	while (waitpid(cmd, &status, 0) < 0 && errno == EINTR)
		;
	if (ret == 0 && WIFEXITED(status))
		return WEXITSTATUS(status);
	return 1;
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
	/* What --net-off / --net-connect can rely on (ABI 4: TCP rights). */
	printf("landlock: network: %s\n", rs.abi >= 4 ? "tcp" : "none");
	return fflush(stdout) == 0 ? 0 : EXIT_LAUNCHER_FAILURE;
}

/* --- the keeper ---------------------------------------------------------- */

#ifndef PR_SET_CHILD_SUBREAPER
#define PR_SET_CHILD_SUBREAPER 36
#endif

struct keeper {
	/* The supervisor: the process that confines itself, forks the
	 * command and serves its listener (init of the pid namespace as
	 * root); --unconfined: the command itself. */
	pid_t child;
	bool pidns;    /* child is init of a new pid namespace (--kept: we
			  are, the caller made it) */
	bool kept;     /* --kept: no keeper process, the supervisor is us */
	int status_fd; /* the supervisor's report (struct sv_end), or -1
			  (--unconfined): the keeper's end, or the child's */
	int alive_fd;  /* in the supervisor: EOF once the keeper is gone */
	pid_t parent;  /* who started the launcher */
	sigset_t old;  /* the signal mask to give the command */
	int report_fd; /* --pid-fd: the pid first, then how the run ended */
};

/* What the supervisor hands the keeper once the command has ended: its
 * wait status, and -1 or the supervisor's own failure (its listener
 * failed under the running command, which it then ended). A supervisor
 * that dies without a report died while the command ran. */
struct sv_end {
	int status;
	int sv_status;
};

/* Kill @self's every child listed in /proc/self/task/@self/children
 * ("1 2 "), or, without that file, every live process of /proc whose parent
 * is @self. Returns how many were signalled, or -1 when neither can be
 * read (a supervisor's domain may not grant /proc). */
static int kill_children(pid_t self)
{
	char path[64], buf[4096];
	long cur = -1;
	ssize_t n;
	int fd, found = 0;

	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)self);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		/* No CONFIG_PROC_CHILDREN: the ppid of every process. */
		struct dirent *de;
		DIR *d = opendir("/proc");

		if (!d)
			return -1;
		while ((de = readdir(d)) != NULL) {
			char stat[1024], *p;
			long pid = strtol(de->d_name, &p, 10);
			int sfd;

			if (pid <= 0 || *p)
				continue;
			snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
			sfd = open(path, O_RDONLY | O_CLOEXEC);
			if (sfd < 0)
				continue;
			n = read(sfd, stat, sizeof(stat) - 1);
			close(sfd);
			if (n <= 0)
				continue;
			stat[n] = '\0';
			/* "pid (comm) S ppid …": the fields after the
			 * last ')' (comm may hold anything). */
			p = strrchr(stat, ')');
			if (p && p[1] == ' ' && p[2] && p[2] != 'Z' &&
			    p[3] == ' ' && strtol(p + 4, NULL, 10) == self &&
			    kill((pid_t)pid, SIGKILL) == 0)
				found++;
		}
		closedir(d);
		return found;
	}
	/* A number may span two reads: it ends at a separator or at EOF. */
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] >= '0' && buf[i] <= '9') {
				cur = (cur < 0 ? 0 : cur * 10) + (buf[i] - '0');
				continue;
			}
			/* A child cannot be reaped by anyone but us: its
			 * pid is not reused while we look at it. */
			if (cur > 0 && kill((pid_t)cur, SIGKILL) == 0)
				found++;
			cur = -1;
		}
	}
	if (cur > 0 && kill((pid_t)cur, SIGKILL) == 0)
		found++;
	close(fd);
	return found;
}

/*
 * Subreaper sweep: kill and reap every descendant until none is left.
 * Killing a process reparents its children to us, so go round again; a
 * zombie held by a live tracer cannot be reaped until the tracer dies, and
 * the tracer is one of ours too. No time budget: what was killed dies.
 * Only a supervisor (@kept) that cannot list its children (no /proc in
 * its domain) stops early: the caller contains what is left.
 */
static void sweep(bool kept)
{
	pid_t self = getpid();
	sigset_t chld;

	/* Blocked since keep(): a child's death is waited for with
	 * sigtimedwait, which returns as soon as one dies (a fixed sleep
	 * cost every call a millisecond: the supervisor is usually still
	 * exiting when the command has). */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (;;) {
		struct timespec ms = {0, 1000000};
		pid_t pid;

		while ((pid = waitpid(-1, NULL, WNOHANG)) > 0)
			;
		if (pid < 0 && errno == ECHILD)
			return;
		/* Killed (or only zombies held by a tracer that is being
		 * killed): let them die, then reap what can be. Never a
		 * blocking wait: a zombie kill() "succeeds" on may stay
		 * unreapable until its tracer is gone. */
		if (kill_children(self) < 0 && kept)
			return;
		sigtimedwait(&chld, NULL, &ms);
	}
}

/* Exit the way the command did: its code, or the same signal. */
static void __attribute__((noreturn)) exit_like(int status)
{
	struct rlimit none = {0, 0};
	sigset_t set;
	int sig;

	if (WIFEXITED(status))
		_exit(WEXITSTATUS(status));
	sig = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
	setrlimit(RLIMIT_CORE, &none); /* the command dumped, not us */
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	_exit(128 + sig);
}

/* "killed by signal N" / "exit status N" for a wait status. */
static const char *status_text(char *buf, size_t len, int status)
{
	if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d", WTERMSIG(status));
	else
		snprintf(buf, len, "exit status %d", WEXITSTATUS(status));
	return buf;
}

/*
 * The run ended for a reason of the sandbox's own, the command ended
 * with it: say so on the report descriptor (for ward: one line, @event)
 * and on stderr (for a person), and exit 125 — the launcher's status,
 * not the command's.
 */
static void __attribute__((noreturn))
keeper_failed(const struct keeper *k, const char *event, const char *why)
{
	if (k->report_fd >= 0) {
		(void)!write(k->report_fd, event, strlen(event));
		close(k->report_fd);
	}
	fprintf(stderr, PROG ": %s; the command was ended\n", why);
	fflush(stderr);
	_exit(EXIT_LAUNCHER_FAILURE);
}

/*
 * Whether the report's reader — ward, which holds the only read end — is
 * gone: a pipe's writer sees POLLERR once no reader is left.
 */
static bool caller_gone(const struct keeper *k)
{
	struct pollfd p = {.fd = k->report_fd, .events = POLLOUT};

	return k->report_fd >= 0 && poll(&p, 1, 0) == 1 &&
	       (p.revents & POLLERR);
}

/*
 * The report descriptor is also how the keeper knows its caller lives:
 * inside bwrap neither bwrap's parent-death signals nor ours reach back to
 * ward (a ward killed while bwrap started used to leave bwrap's sandbox
 * process blocked in its namespaces; ward now starts bwrap without them),
 * but ward's death closes the pipe's read end, which the kernel signals
 * to an O_ASYNC writer (SIGIO, waited for with the keeper's signals).
 * Armed, then checked: a caller already gone ends the launcher before
 * the command starts.
 */
static void watch_caller(const struct keeper *k)
{
	int fl;

	if (k->report_fd < 0)
		return;
	fl = fcntl(k->report_fd, F_GETFL);
	if (fl < 0 || fcntl(k->report_fd, F_SETOWN, getpid()) != 0 ||
	    fcntl(k->report_fd, F_SETFL, fl | O_ASYNC) != 0)
		die("cannot watch the caller: %s", strerror(errno));
	if (caller_gone(k))
		die("the caller is gone");
}

/* The keeper's end: like the command, unless the sandbox ended it. */
static void __attribute__((noreturn))
keeper_end(struct keeper *k, int status, int sv_status, bool caller_died)
{
	char why[160], how[40], event[64];

	if (sv_status != -1) {
		snprintf(event, sizeof(event), "supervisor-died %d\n",
			 sv_status);
		snprintf(why, sizeof(why),
			 "the supervisor ended (%s) while the command ran, "
			 "and judged calls failed from then on",
			 status_text(how, sizeof(how), sv_status));
		keeper_failed(k, event, why);
	}
	if (caller_died) {
		snprintf(why, sizeof(why),
			 "its caller (pid %d) died while the command ran",
			 (int)k->parent);
		keeper_failed(k, "caller-died\n", why);
	}
	if (k->report_fd >= 0) {
		/* The run's end, as the command's: ward tells a keeper
		 * that could say so from one that was killed. */
		snprintf(event, sizeof(event), "exit %d\n", status);
		(void)!write(k->report_fd, event, strlen(event));
		close(k->report_fd);
	}
	exit_like(status);
}

/*
 * The supervisor: a /proc of the new pid namespace, in a mount namespace
 * of its own, so that /proc/$$ is the command's and the host's processes
 * are not listed. Mounts made here do not propagate back (MS_SLAVE); the
 * host's still come in. Best effort: on failure /proc stays the host's.
 */
static void sv_own_proc(void)
{
	if (unshare(CLONE_NEWNS) != 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) != 0)
		return;
	own_mntns = true;
	mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
}

/*
 * The supervisor (the keeper's child), first: die with the keeper — its
 * listener then closes, and every judged call fails with ENOSYS —, and
 * as init of a pid namespace a /proc of our own. Then main() confines it
 * (it is the process whose pid the keeper reports: the Landlock domain's
 * creator) and calls supervise().
 */
static void sv_setup(const struct keeper *k)
{
	struct pollfd p = {.fd = k->alive_fd, .events = POLLIN};

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
		_exit(EXIT_LAUNCHER_FAILURE);
	/* The keeper holds the other end: EOF means it is already gone. */
	if (poll(&p, 1, 0) != 0)
		_exit(EXIT_LAUNCHER_FAILURE);
	if (k->pidns)
		sv_own_proc();
}

/* The supervisor's host loop: the command, and the signals it takes. */
struct sv_host_ctx {
	const struct keeper *k;
	int sfd;   /* signalfd: SIGCHLD and the forwarded signals (--kept:
		      the kill signal and SIGIO too) */
	pid_t cmd; /* the command (its session's leader) */
	int status;
	bool caller_died; /* --kept: the report's reader went away */
};

/* End the command's tree: as init everything in the namespace, else the
 * command's session (the sweep takes the rest once it is reaped). */
static void sv_kill_tree(const struct keeper *k, pid_t cmd)
{
	kill(k->pidns ? -1 : -cmd, SIGKILL);
	kill(cmd, SIGKILL);
}

/*
 * Pass forwarded signals on to the command's session (the command itself
 * before its setsid()), reap what ended (in a pid namespace, or as a
 * subreaper with --kept, the orphans are ours), and end the loop when the
 * command is reaped. With --kept the keeper's signals are ours: the kill
 * signal, or the caller gone, ends the tree.
 */
static int sv_host_ready(void *ctx)
{
	struct sv_host_ctx *h = ctx;
	struct signalfd_siginfo si;
	pid_t pid;
	int st;

	while (read(h->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		int sig = (int)si.ssi_signo;

		if (sig == SIGIO || sig == UTIL_KEEPER_KILL) {
			if (sig == SIGIO && !caller_gone(h->k))
				continue;
			h->caller_died |= sig == SIGIO;
			sv_kill_tree(h->k, h->cmd);
			continue;
		}
		if (sig != SIGCHLD && kill(-h->cmd, sig) != 0)
			kill(h->cmd, sig);
	}
	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		if (pid == h->cmd) {
			h->status = st;
			return 1;
		}
	}
	return 0;
}

/*
 * The command's side of the fork: die with the supervisor (its parent);
 * nothing of the keeper's; a session of its own; the nested layer and
 * the filter, whose listener the supervisor holds before we go on.
 * Returns (signal mask restored) only armed; dies 125 otherwise.
 */
static void command_arm(const struct keeper *k, int sock, pid_t sup)
{
	struct ward_sv sv = {.sock = sock, .pid = 0};
	char err[512];

	/* The command can clear this; the keeper sees the supervisor die
	 * all the same and ends the tree (sweep, or the pid namespace). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || getppid() != sup)
		_exit(EXIT_LAUNCHER_FAILURE);
	close(k->status_fd);
	close(k->alive_fd);
	setsid();
#ifndef LANDLOCK_RUN_NO_SUPERVISOR
	if (ward_sv_arm(&sv, err, sizeof(err)) != 0)
		die("%s", err);
#else
	/* Benchmark builds only (bench/calls.sh): the cost of the
	 * filter and its hand-over is this build's difference. */
	(void)err;
	ward_sv_close(&sv);
#endif
	sigprocmask(SIG_SETMASK, &k->old, NULL);
}

/* Write the supervisor's report to the keeper and exit; with --kept,
 * sweep (a subreaper) and end as the keeper would (@caller_died: the
 * caller went away). */
static void __attribute__((noreturn))
sv_finish(struct keeper *k, int status, int sv_status, bool caller_died)
{
	struct sv_end rep = {status, sv_status};

	if (k->kept) {
		if (!k->pidns)
			sweep(true);
		keeper_end(k, status, sv_status, caller_died);
	}
	while (write(k->status_fd, &rep, sizeof(rep)) < 0 && errno == EINTR)
		;
	_exit(0);
}

/*
 * In the confined process: fork the command and be its supervisor. The
 * supervisor is in the command's Landlock domain and under its filters
 * (what it performs meets the command's checks, supervise.h), outside
 * the nested layer that keeps the command from signalling it, and not
 * dumpable: the command can neither trace nor kill it. It serves the
 * listener, passes the keeper's signals on, reaps (init of the pid
 * namespace reaps every orphan), and when the command has ended tells
 * the keeper how (struct sv_end) and exits: the keeper then sweeps, or
 * the kernel empties the namespace. Returns only in the command, armed.
 */
static void supervise(struct keeper *k, const struct plan *p)
{
	struct ward_sv_config cfg = {
	    .rw = p->rw,
	    .nrw = p->nrw,
	    .unix_ok = p->unix_ok,
	    .nunix = p->nunix,
	    .net = p->net,
	    .net_port = p->net_port,
	    .report_fd = p->pid_fd,
	};
	struct sv_host_ctx hc = {.k = k, .sfd = -1, .cmd = -1, .status = 0};
	struct ward_sv_host host = {
	    .fd = -1, .ready = sv_host_ready, .ctx = &hc};
	pid_t sup = getpid();
	sigset_t set;
	char err[512];
	int sp[2], lfd = -1, ret;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) != 0)
		die("supervisor: socketpair: %s", strerror(errno));
	fflush(NULL);
	hc.cmd = fork();
	if (hc.cmd < 0)
		die("cannot start the command: fork: %s", strerror(errno));
	if (hc.cmd == 0) {
		close(sp[0]);
		command_arm(k, sp[1], sup);
		return;
	}
	close(sp[1]);
	(void)prctl(PR_SET_NAME, (unsigned long)"ward-supervise", 0, 0, 0);
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	/* Blocked since keep(): taken from a descriptor, in the loop. */
	util_keeper_sigset(&set);
	if (!k->kept) {
		/* The keeper process takes these. */
		sigdelset(&set, UTIL_KEEPER_KILL);
		sigdelset(&set, SIGIO);
	}
	hc.sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	host.fd = hc.sfd;
	(void)err; /* unused without the supervisor (bench builds) */
#ifndef LANDLOCK_RUN_NO_SUPERVISOR
	lfd = ward_sv_take(sp[0], hc.cmd, err, sizeof(err));
	if (lfd < 0) {
		/* The command was told, says why and exits 125 (or had
		 * died already): its status is the run's. */
		close(sp[0]);
		while (waitpid(hc.cmd, &hc.status, 0) < 0 && errno == EINTR)
			;
		sv_finish(k, hc.status, -1, false);
	}
#endif
	close(sp[0]);
	if (hc.sfd < 0) {
		kill(hc.cmd, SIGKILL);
		die("supervisor: signalfd: %s", strerror(errno));
	}
	ret = ward_sv_serve(lfd, &cfg, &host);
	if (ret != 0) {
		/* Judged calls would fail from now on: end the command
		 * (its session, and as init everything in the namespace). */
		sv_kill_tree(k, hc.cmd);
		while (waitpid(hc.cmd, &hc.status, 0) < 0 && errno == EINTR)
			;
		/* Its own status: "exit status 1". */
		sv_finish(k, hc.status, 1 << 8, hc.caller_died);
	}
	sv_finish(k, hc.status, -1, hc.caller_died);
}

/* Ask the kernel for a pid namespace for our next child: root (or
 * CAP_SYS_ADMIN over our user namespace) only. */
static bool new_pidns(void)
{
	return unshare(CLONE_NEWPID) == 0;
}

#ifndef LANDLOCK_RUN_NO_SUPERVISOR
#define SUPERVISED true
#else
#define SUPERVISED false
#endif

/*
 * The keeper's child, before it returns from keep(): a session of its own
 * (the keeper's signals go to it, a terminal's do not); the supervisor
 * sets up, keeping the signals blocked (supervise() takes them from a
 * descriptor); the command itself (--unconfined) gets the mask back.
 */
static void keeper_child(struct keeper *k, int st_p[2], int alive_p[2])
{
	setsid();
	/* pid_fd stays open here: the supervisor reports on it (the run's
	 * end is the keeper's to report). */
	k->report_fd = -1;
	if (st_p[1] < 0) {
		sigprocmask(SIG_SETMASK, &k->old, NULL);
		return;
	}
	close(st_p[0]);
	close(alive_p[1]);
	k->status_fd = st_p[1];
	k->alive_fd = alive_p[0];
	sv_setup(k);
}

/*
 * The keeper's loop until its child ended: caller gone or kill signal
 * (end the tree), signals passed on (to the supervisor, which forwards
 * them; --unconfined: to the command's session), children reaped (our
 * own orphans too, as a subreaper). Returns the child's wait status;
 * *killing and *caller_died say why we ended it, if we did.
 */
static int keeper_wait(struct keeper *k, const sigset_t *wait_set,
		       bool *killing, bool *caller_died)
{
	for (;;) {
		siginfo_t si;
		int sig = 0;

		if (*killing) {
			/* The supervisor's death ends the command
			 * (PDEATHSIG), the namespace with init; the sweep
			 * ends the rest. */
			if (k->status_fd < 0)
				kill(-k->child, SIGKILL);
			kill(k->child, SIGKILL);
		} else {
			sig = sigwaitinfo(wait_set, &si);
		}
		if (sig == SIGIO) {
			/* The report's reader closed its end: ward is gone. */
			if (caller_gone(k)) {
				*caller_died = true;
				*killing = true;
			}
			continue;
		}
		if (sig == UTIL_KEEPER_KILL) {
			/* Our parent-death signal too: ward-bridge (or ward)
			 * is gone, not asking. */
			*caller_died = getppid() != k->parent;
			*killing = true;
			continue;
		}
		if (sig > 0 && sig != SIGCHLD) {
			if (k->status_fd >= 0 || kill(-k->child, sig) != 0)
				kill(k->child, sig);
			continue;
		}
		for (;;) {
			int st;
			pid_t pid = waitpid(-1, &st, *killing ? 0 : WNOHANG);

			if (pid == k->child)
				return st;
			if (pid == 0 || (pid < 0 && errno != EINTR))
				break;
		}
	}
}

/* Block the keeper's signals (into @set; the old mask into @old). */
static void keeper_block(sigset_t *set, sigset_t *old)
{
	util_keeper_sigset(set);
	sigprocmask(SIG_BLOCK, set, old);
}

/* Our caller's death is the kill signal (the caller may be gone already:
 * then the parent changed, or the report's reader closed). */
static void keeper_arm(struct keeper *k)
{
	if (prctl(PR_SET_PDEATHSIG, UTIL_KEEPER_KILL, 0, 0, 0) != 0)
		die("cannot set the parent-death signal: %s", strerror(errno));
	if (getppid() != k->parent)
		die("the caller is gone");
	watch_caller(k);
}

/* The pid of the process that confines itself, first on the report. */
static void report_pid(int fd, pid_t pid)
{
	char buf[24];
	int n = snprintf(buf, sizeof(buf), "%d\n", (int)pid);

	if (write(fd, buf, (size_t)n) < 0) {
		/* the caller stopped listening: nothing to tell */
	}
}

/*
 * --kept: the caller keeps, so no keeper process; we are the supervisor
 * from here on (signals blocked: supervise() takes them from a
 * descriptor, the keeper's with them). A child subreaper, so that what
 * the command leaves is ours to sweep; init already when the caller
 * started us in a new pid namespace (pid 1), and then with a /proc of
 * the namespace's own. The pid line says 0 there: our pid is the
 * caller's to know, the one its clone returned.
 */
static void kept_start(struct keeper *out, int pid_fd)
{
	struct keeper k = {.status_fd = -1,
			   .alive_fd = -1,
			   .parent = getppid(),
			   .report_fd = pid_fd,
			   .kept = true};
	sigset_t set;

	/* Our caller may have started us with the keeper's signals blocked
	 * already (so that none sent to a pid namespace's init before this
	 * is lost): they are ours, not the command's, which starts without
	 * them blocked. */
	keeper_block(&set, &k.old);
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(&set, sig) == 1)
			sigdelset(&k.old, sig);
	k.pidns = getpid() == 1;
	if (!k.pidns && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
		die("cannot become a child subreaper: %s", strerror(errno));
	keeper_arm(&k);
	report_pid(pid_fd, k.pidns ? 0 : getpid());
	(void)setsid(); /* ward's child leads a session already */
	if (k.pidns)
		sv_own_proc();
	*out = k;
}

/*
 * Start the keeper. Returns in its child: the supervisor, which goes on
 * to confine itself and fork the command (signals still blocked;
 * supervise() after confining), or with @confined false the command
 * itself (the original signal mask back). The keeper itself never
 * returns: it waits, forwards, sweeps and exits like the command. With
 * @confined false the keeper is a subreaper even as root. With @pid_fd >=
 * 0 it first writes there the pid of the process that confines itself
 * (the Landlock domain's creator, whose pid the kernel's audit records
 * carry).
 */
static void keep(struct keeper *out, int pid_fd, bool confined)
{
	struct keeper k = {.status_fd = -1,
			   .alive_fd = -1,
			   .parent = getppid(),
			   .report_fd = pid_fd};
	int st_p[2] = {-1, -1}, alive_p[2] = {-1, -1};
	sigset_t wait_set;
	int status, sv_status = -1;
	bool killing = false, caller_died = false;

	/* Blocked before the child exists: nothing is lost in between. */
	keeper_block(&wait_set, &k.old);

	k.pidns = confined && new_pidns();
	/* A supervisor that forks the command (a build without one, bench
	 * only, still needs init to fork it in a pid namespace). */
	if ((k.pidns || (confined && SUPERVISED)) &&
	    (pipe2(st_p, O_CLOEXEC) != 0 || pipe2(alive_p, O_CLOEXEC) != 0))
		die("cannot create a pipe: %s", strerror(errno));
	if (!k.pidns && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
		die("cannot become a child subreaper: %s", strerror(errno));

	/*
	 * A caller that dies takes the tree with it. Armed before the fork
	 * (the signal is blocked: it waits for the loop below), so there is
	 * no moment when the command runs and the caller's death would go
	 * unnoticed; the caller may already be gone (then the parent
	 * changed).
	 */
	keeper_arm(&k);

	fflush(NULL);
	k.child = fork();
	if (k.child < 0)
		die("cannot start the command: fork: %s", strerror(errno));
	if (k.child == 0) {
		keeper_child(&k, st_p, alive_p);
		*out = k;
		return;
	}
	if (pid_fd >= 0)
		report_pid(pid_fd, k.child);
	if (st_p[0] >= 0) {
		close(st_p[1]);
		close(alive_p[0]);
		k.status_fd = st_p[0];
	}
	/* The command cannot ptrace or read us (Landlock forbids a domain
	 * to reach out too; this also covers kernels that only log). */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	/*
	 * The keeper needs no capability to wait, forward and kill (the
	 * command keeps our uid): whatever the caller gave the launcher —
	 * root's, or CAP_SYS_ADMIN that bwrap keeps for the mounts of a
	 * Landlock layer inside it — is dropped here, bounding set included,
	 * while the command runs.
	 */
	{
		char err[256];

		if (ward_ll_drop_caps(err, sizeof(err)) != 0) {
			kill(k.child, SIGKILL);
			die("keeper: %s", err);
		}
	}

	status = keeper_wait(&k, &wait_set, &killing, &caller_died);
	if (k.status_fd >= 0) {
		/* The supervisor's report: the command's status. Without
		 * one the supervisor died while the command ran — unless
		 * we killed it. */
		struct sv_end rep;
		ssize_t n = read(k.status_fd, &rep, sizeof(rep));

		if (n == (ssize_t)sizeof(rep)) {
			status = rep.status;
			sv_status = rep.sv_status;
		} else if (!killing) {
			sv_status = status;
		}
	}
	if (!k.pidns)
		sweep(false);
	keeper_end(&k, status, sv_status, caller_died);
}

/*
 * execvp() without its failed execve()s: each PATH entry where the command
 * is not (ENOENT, ENOTDIR: a failed execve costs tens of microseconds, a
 * failed access a few) is skipped by access(); what execve then refuses
 * goes on to the next entry as execvp would (ENOENT, ENOTDIR, EACCES,
 * remembering EACCES). Returns the errno execvp would have left.
 */
static int exec_command(char **cmd)
{
	extern char **environ;
	struct util_path_search ps;
	char buf[4096];
	bool eacces = false;
	size_t dlen;

	if (strchr(cmd[0], '/') || !cmd[0][0]) {
		execve(cmd[0], cmd, environ);
		return errno;
	}
	util_path_init(&ps, getenv("PATH"), cmd[0]);
	while (util_path_next(&ps, buf, sizeof(buf), &dlen)) {
		if (access(buf, F_OK) == 0) {
			execve(buf, cmd, environ);
			if (errno == EACCES)
				eacces = true;
			else if (errno != ENOENT && errno != ENOTDIR)
				return errno;
		} else if (errno == EACCES) {
			eacces = true;
		}
	}
	return eacces ? EACCES : ENOENT;
}

int main(int argc, char **argv)
{
	struct ward_ll_ruleset rs;
	struct keeper k;
	/* Static: what it holds lives until exec or exit, and stays
	 * reachable from here for the whole process (the keeper and init
	 * exit from deep inside keep(); a leak checker sees no leak). */
	static struct plan p;
	char err[512];
	int ret;
	int e;

	load_args(&argc, &argv);
	parse(&p, argc, argv);
	close_inherited_fds(p.pid_fd);
	if (p.pid_fd >= 0)
		fcntl(p.pid_fd, F_SETFD, FD_CLOEXEC);
	if (p.probe) {
		free(p.ro);
		free(p.rw);
		free(p.unix_ok);
		free(p.hide);
		free(p.hide_kind);
		return probe();
	}

	/* from here on: the command's (or init's) */
	if (p.kept)
		kept_start(&k, p.pid_fd);
	else
		keep(&k, p.pid_fd, !p.unconfined);
	if (p.unconfined)
		goto exec;
	apply_hides(&p);

	/*
	 * The grants are opened here, in the command's mount namespace:
	 * a rule on the host's /proc would not cover the namespace's own
	 * /proc mounted over it (Landlock ignores hidden mount points). A
	 * failure exits 125 all the same (the keeper exits like us).
	 */
	ret = ward_ll_prepare_net(&rs, p.ro, p.nro, p.rw, p.nrw, p.net,
				  p.net_port, err, sizeof(err));
	if (ret)
		die_prepare(ret, err);
	report_partial(&rs);

	ret = ward_ll_enforce(&rs, err, sizeof(err));
	if (ret)
		die("%s", err);
	ward_ll_close(&rs);
	/* The supervisor forks the command (returns in it, armed); a build
	 * without one (bench only) execs here unless it is init. */
	if (k.status_fd >= 0 || (k.kept && (SUPERVISED || k.pidns)))
		supervise(&k, &p);
	if (p.pid_fd >= 0)
		close(p.pid_fd);

exec:
	e = exec_command(p.cmd);
	if (p.shell_status) {
		/* Confined already: the command's own failure, like sh's. */
		if (e == ENOENT && !strchr(p.cmd[0], '/'))
			fprintf(stderr, PROG ": %s: command not found\n",
				p.cmd[0]);
		else
			fprintf(stderr, PROG ": %s: %s\n", p.cmd[0],
				strerror(e));
		exit(e == ENOENT ? 127 : 126);
	}
	if (e == ENOENT && !strchr(p.cmd[0], '/'))
		die("%s: command not found", p.cmd[0]);
	die("cannot execute %s: %s", p.cmd[0], strerror(e));
}
