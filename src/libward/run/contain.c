/*
 * ward — containment of a call's descendants: whatever the command
 * started must end with the call.
 *
 * Bwrap caveat (bubblewrap 0.8, as root): its inner sandbox process sets
 * its own PR_SET_PDEATHSIG a few milliseconds after bwrap starts, without
 * re-checking its parent; a bwrap killed inside that window would leave
 * the sandbox running. So the sandbox's pid 1 (from --json-status-fd) is
 * killed through a pidfd whenever the call is signalled or bwrap ends,
 * and the call's cgroup or the subreaper (when in force) end it too.
 *
 * Every Landlock run goes through landlock-run, whose keeper stays the
 * command's parent: signals for the call go to the keeper, which forwards
 * them; SIGKILL becomes its kill-everything signal (SIGRTMAX), since a
 * SIGKILLed keeper could sweep nothing.
 *
 * Containment in this process (see enum ward_contain), on top: a cgroup
 * per call when one can be had, since it is per call and nothing confined
 * can leave it (Landlock forbids writing cgroup.procs, seccomp refuses
 * clone3); the child must be born in it (clone3 CLONE_INTO_CGROUP, in
 * exec.c), because moving a running process (a write to cgroup.procs)
 * waits for an RCU grace period: 5–15 ms here, against ~0.2 ms for the
 * fork-like clone3. The subreaper fallback keeps the vfork-style start and
 * its common case (nothing left behind) costs one waitid(); a child that
 * has exited is reaped as waitid() names it, and /proc is read only when
 * a live child is left.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/capability.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "contain.h"
#include "exec_internal.h"
#include "libward/runners/runners.h"
#include "util/util.h"

#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_pidfd_send_signal
#define __NR_pidfd_send_signal 424
#endif
#ifndef PR_SET_CHILD_SUBREAPER
#define PR_SET_CHILD_SUBREAPER 36
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* How long a killed call's cgroup may take to empty before its removal;
 * shorter for one a dead ward left behind (a start-up cost of the process
 * that finds it; what is not empty yet is left for the next one). */
#define CGROUP_EMPTY_MS 2000
#define STALE_EMPTY_MS	200
/* Subreaper: how long kill-and-reap rounds go on without reaping one. */
#define SWEEP_MS 2000

/* --- the call's cgroup and the subreaper ----------------------------------- */

/*
 * Process-wide state. cg_base: this process's cgroup v2 directory, found
 * once ("" when there is none). cg_prefix: "ward-<pid namespace>-", the
 * start of the name of every call cgroup of this pid namespace (then
 * "<pid>-<seq>").
 * cg_state: 0 not yet proven, 1 a call's cgroup worked (cgroup.kill
 * exists, clone3 into it works), -1 cgroups cannot be used here (not
 * writable, kernel too old, clone3 filtered): never tried again.
 * subreaper_on: PR_SET_CHILD_SUBREAPER is set.
 */
static pthread_once_t cg_once = PTHREAD_ONCE_INIT;
static char cg_base[PATH_MAX];
static char cg_prefix[32];
static atomic_int cg_state;
static atomic_uint cg_seq;
static atomic_int subreaper_on;

/* Undo mountinfo's octal escapes (\040 for a space, …) in place. */
static void unescape_octal(char *s)
{
	char *d = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
				      (s[3] - '0'));
			s += 4;
		} else {
			*d++ = *s++;
		}
	}
	*d = '\0';
}

/*
 * Find cg_base: the "0::PATH" line of /proc/self/cgroup, under the first
 * cgroup2 mount of /proc/self/mountinfo whose root contains PATH. Left
 * empty on a cgroup v1-only system, without a cgroup2 mount, or when the
 * process's cgroup lies outside every mount's view. Cached for the life of
 * the process (a process moved to another cgroup later still creates its
 * calls' cgroups under the first one).
 */
static void cg_find_base(void)
{
	char path[PATH_MAX] = "";
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f;

	f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return;
	while ((n = getline(&line, &cap, f)) > 0) {
		if (strncmp(line, "0::/", 4) != 0)
			continue;
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		if ((size_t)n - 3 < sizeof(path))
			memcpy(path, line + 3, (size_t)n - 2);
		break;
	}
	fclose(f);
	/* A removed cgroup reads "/path (deleted)": unusable. */
	if (!path[0] || strstr(path, " (deleted)"))
		goto out_free_line;
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		goto out_free_line;
	while (getline(&line, &cap, f) > 0) {
		/* id parent maj:min root mountpoint opts [tags] - fstype … */
		char *sep = strstr(line, " - "), *save = NULL, *tok;
		char *root = NULL, *mnt = NULL;
		const char *rest;
		size_t rlen;
		int i = 0;

		if (!sep || strncmp(sep + 3, "cgroup2 ", 8) != 0)
			continue;
		*sep = '\0';
		for (tok = strtok_r(line, " ", &save); tok && i < 5;
		     tok = strtok_r(NULL, " ", &save), i++) {
			if (i == 3)
				root = tok;
			else if (i == 4)
				mnt = tok;
		}
		if (!root || !mnt)
			continue;
		unescape_octal(root);
		unescape_octal(mnt);
		rlen = strlen(root);
		if (strcmp(root, "/") == 0)
			rest = path;
		else if (strncmp(path, root, rlen) == 0 &&
			 (path[rlen] == '/' || path[rlen] == '\0'))
			rest = path + rlen;
		else
			continue;
		if (strcmp(rest, "/") == 0)
			rest = "";
		if ((size_t)snprintf(cg_base, sizeof(cg_base), "%s%s", mnt,
				     rest) >= sizeof(cg_base))
			cg_base[0] = '\0';
		break;
	}
	fclose(f);
out_free_line:
	free(line);
}

/* Kill every process of the cgroup @dir_fd (asynchronously: they die on
 * their way back to user space). */
static void cg_kill(int dir_fd)
{
	int fd = openat(dir_fd, "cgroup.kill", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	while (write(fd, "1", 1) < 0 && errno == EINTR)
		;
	close(fd);
}

/* True when cgroup.events (@fd) says the cgroup is empty; re-read from
 * the start each time. */
static bool cg_empty(int fd)
{
	char buf[256];
	ssize_t n;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return true;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return true;
	buf[n] = '\0';
	return strstr(buf, "populated 0") != NULL;
}

/*
 * Wait at most @ms for the cgroup @dir_fd to have no process left.
 * cgroup.events signals a change with POLLPRI, but the kernel sends a
 * file's notifications at most once every 10 ms: a call shorter than
 * that would wait for the rest of the interval after its last process
 * is gone. So the file is also read again after a pause that starts at
 * 0.1 ms and doubles up to 50 ms.
 */
static void cg_wait_empty(int dir_fd, unsigned ms)
{
	uint64_t until = now_ms() + ms;
	int fd = openat(dir_fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
	long pause_us = 100;

	while (fd >= 0 && !cg_empty(fd)) {
		struct pollfd p = {.fd = fd, .events = POLLPRI};
		uint64_t now = now_ms();
		long left_us;
		struct timespec ts;

		if (now >= until)
			break;
		left_us = (long)(until - now) * 1000;
		ts.tv_sec = 0;
		ts.tv_nsec = (pause_us < left_us ? pause_us : left_us) * 1000;
		ppoll(&p, 1, &ts, NULL);
		if (pause_us < 50000)
			pause_us *= 2;
	}
	close_fd(&fd);
}

/* "<cg_base>/<name>" into @buf; false when it does not fit. */
static bool cg_path(char *buf, size_t len, const char *name)
{
	return (size_t)snprintf(buf, len, "%s/%s", cg_base, name) < len;
}

/*
 * Clean up after earlier ward processes of this pid namespace that died
 * during a call (SIGKILL, a crash, Ctrl-C): their call cgroups are still
 * there, and whatever the call left in them still runs, confined but with
 * the call's write access. A cgroup named for a pid that no longer exists
 * is killed and removed (or, should it not be empty yet, removed by the
 * next process that looks). Names from another pid namespace are not
 * judged: their pids mean nothing here.
 */
static void cg_reap_stale(const char *want)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d;

	d = opendir(cg_base);
	if (!d)
		return;
	while ((e = readdir(d))) {
		char *end;
		long pid;
		int fd;

		if (strncmp(e->d_name, want, strlen(want)) != 0)
			continue;
		pid = strtol(e->d_name + strlen(want), &end, 10);
		if (pid <= 0 || *end != '-' ||
		    (kill((pid_t)pid, 0) == 0 || errno != ESRCH) ||
		    !cg_path(path, sizeof(path), e->d_name))
			continue;
		if (rmdir(path) == 0 || errno != EBUSY)
			continue;
		fd = openat(dirfd(d), e->d_name,
			    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			continue;
		cg_kill(fd);
		cg_wait_empty(fd, STALE_EMPTY_MS);
		close(fd);
		rmdir(path);
	}
	closedir(d);
}

/* Once per process: cg_base and cg_prefix. */
static void cg_setup(void)
{
	struct stat st;

	cg_find_base();
	if (!cg_base[0])
		return;
	/* Pids are per pid namespace: the namespace goes into the name. */
	if (stat("/proc/self/ns/pid", &st) != 0)
		st.st_ino = 0;
	snprintf(cg_prefix, sizeof(cg_prefix), "ward-%llu-",
		 (unsigned long long)st.st_ino);
}

/* The process that last swept stale cgroups: a forked caller sweeps too. */
static _Atomic pid_t cg_swept_by;

/*
 * Create the call's cgroup, ward-<pid ns>-<pid>-<seq>, under the process's own and
 * open it into sp->cg_fd. Returns false (nothing left behind) when cgroups
 * cannot be used for this call; a failure that will not go away (no
 * permission, read-only cgroupfs, no cgroup.kill) turns them off for the
 * process.
 */
static bool cg_create(struct ward_spawn *sp)
{
	char path[PATH_MAX];
	int fd;

	pthread_once(&cg_once, cg_setup);
	if (!cg_base[0] || atomic_load(&cg_state) < 0)
		return false;
	/* Once per process (a fork is another process): what dead wards
	 * left behind is killed and removed before this call adds its own. */
	if (atomic_exchange(&cg_swept_by, getpid()) != getpid())
		cg_reap_stale(cg_prefix);
	for (int tries = 0;; tries++) {
		/* getpid() each time: a forked caller is another owner. */
		snprintf(sp->cg_name, sizeof(sp->cg_name), "%s%d-%u", cg_prefix,
			 (int)getpid(), atomic_fetch_add(&cg_seq, 1));
		if (!cg_path(path, sizeof(path), sp->cg_name)) {
			atomic_store(&cg_state, -1);
			return false;
		}
		if (mkdir(path, 0755) == 0)
			break;
		/* EEXIST: left by an earlier process of the same pid. */
		if (errno == EEXIST && tries < 8)
			continue;
		/* EAGAIN (cgroup.max.descendants), ENOMEM: this call only. */
		if (errno != EAGAIN && errno != ENOMEM && errno != EEXIST)
			atomic_store(&cg_state, -1);
		return false;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* cgroup.kill: Linux 5.14. */
	if (fd >= 0 && atomic_load(&cg_state) == 0 &&
	    faccessat(fd, "cgroup.kill", W_OK, AT_EACCESS) != 0) {
		atomic_store(&cg_state, -1);
		close_fd(&fd);
	}
	if (fd < 0) {
		rmdir(path);
		return false;
	}
	sp->cg_fd = fd;
	return true;
}

/*
 * Remove the call's cgroup: wait (at most CGROUP_EMPTY_MS) for its killed
 * processes to be gone, then rmdir. A process that cannot die (stuck in
 * the kernel) keeps the directory; it is left behind, for the stale-cgroup
 * sweep of a later process (cg_reap_stale).
 */
void ward_contain_remove(struct ward_spawn *sp)
{
	char path[PATH_MAX];

	cg_wait_empty(sp->cg_fd, CGROUP_EMPTY_MS);
	close_fd(&sp->cg_fd);
	if (cg_path(path, sizeof(path), sp->cg_name))
		rmdir(path);
}

bool ward_contain_pidns(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) != 0)
		return false;
	return (d[CAP_SYS_ADMIN / 32].effective >> (CAP_SYS_ADMIN % 32)) & 1;
}

/* Make this process a child subreaper (once; it cannot be undone). */
static bool subreaper_enable(void)
{
	if (atomic_load(&subreaper_on))
		return true;
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
		return false;
	atomic_store(&subreaper_on, 1);
	return true;
}

/* Now, in the unit of /proc/PID/stat's starttime (clock ticks since
 * boot, CLOCK_BOOTTIME), rounded down like the kernel rounds. */
static unsigned long long boot_ticks(void)
{
	long hz = sysconf(_SC_CLK_TCK);
	struct timespec ts;

	if (hz <= 0 || hz > 1000000000L)
		hz = 100;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (unsigned long long)ts.tv_sec * (unsigned long long)hz +
	       (unsigned long long)ts.tv_nsec /
		   (unsigned long long)(1000000000L / hz);
}

/* The parent pid and start time of @pid from /proc/PID/stat; false when
 * it is gone. */
static bool proc_stat(pid_t pid, pid_t *ppid, unsigned long long *start)
{
	char path[64], buf[1024];
	const char *p;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* The command name may hold anything; the fields follow its last
	 * ')'. Field 3 (state) comes first, then 4 (ppid) … 22 (starttime). */
	p = strrchr(buf, ')');
	if (!p)
		return false;
	for (field = 2; *p && field < 22; p++) {
		if (*p != ' ')
			continue;
		field++;
		if (field == 4)
			*ppid = (pid_t)strtol(p + 1, NULL, 10);
	}
	if (field != 22)
		return false;
	*start = strtoull(p, NULL, 10);
	return true;
}

/* A growable list of pids. */
struct pidlist {
	pid_t *v;
	size_t n, cap;
};

static void pidlist_add(struct pidlist *l, pid_t pid)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		pid_t *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return; /* the next round finds it again */
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = pid;
}

/* Add the pids of one /proc/self/task/TID/children file ("1 2 3 "). */
static void add_children_of(struct pidlist *l, const char *tid)
{
	char path[64], buf[4096];
	long cur = -1;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%s/children", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return; /* the thread is gone */
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] >= '0' && buf[i] <= '9') {
				cur = (cur < 0 ? 0 : cur * 10) + (buf[i] - '0');
			} else if (cur >= 0) {
				pidlist_add(l, (pid_t)cur);
				cur = -1;
			}
		}
	}
	if (cur >= 0)
		pidlist_add(l, (pid_t)cur);
	close(fd);
}

/*
 * The children of this process, every thread's (an orphan is reparented
 * to any thread of the subreaper). From the threads' children files;
 * without them (a kernel built without CONFIG_PROC_CHILDREN), by the
 * ppid of every process in /proc.
 */
static void list_children(struct pidlist *l)
{
	bool files = access("/proc/thread-self/children", F_OK) == 0;
	pid_t self = getpid();
	struct dirent *e;
	DIR *d;

	d = opendir(files ? "/proc/self/task" : "/proc");
	if (!d)
		return;
	while ((e = readdir(d))) {
		unsigned long long start;
		pid_t pid, ppid = 0;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		if (files) {
			add_children_of(l, e->d_name);
			continue;
		}
		pid = (pid_t)strtol(e->d_name, NULL, 10);
		if (proc_stat(pid, &ppid, &start) && ppid == self)
			pidlist_add(l, pid);
	}
	closedir(d);
}

/*
 * Kill @pid, a child of this process, unless it started before @since (it
 * predates the call: not ours to kill), and reap it if it can be. A pidfd
 * pins the process, so a pid reaped and reused meanwhile is never
 * signalled. Never waits: a zombie held by a live tracer (the tracer
 * reaps it first) is left for a later round, once its tracer — one of the
 * call's processes too — has been killed. Returns 1 when @pid was one of
 * the call's, 2 when it was also reaped, 0 otherwise.
 */
static int sweep_one(pid_t pid, unsigned long long since)
{
	int fd = (int)syscall(__NR_pidfd_open, pid, 0);
	unsigned long long start;
	pid_t ppid = 0;
	siginfo_t si;
	int ours = 0;

	if (!proc_stat(pid, &ppid, &start) || start < since)
		goto out_close;
	if (fd < 0) {
		/* Before Linux 5.3: the pid it is. */
		if (errno != ENOSYS || kill(pid, SIGKILL) != 0)
			goto out_close;
		ours = waitpid(pid, NULL, WNOHANG) == pid ? 2 : 1;
		goto out_close;
	}
	/* Still our child (else ECHILD): then signal it, reap if dead. */
	memset(&si, 0, sizeof(si));
	if (waitid((idtype_t)P_PIDFD, (id_t)fd, &si,
		   WEXITED | WNOHANG | WNOWAIT) != 0)
		goto out_close;
	ours = 1;
	syscall(__NR_pidfd_send_signal, fd, SIGKILL, NULL, 0);
	memset(&si, 0, sizeof(si));
	if (waitid((idtype_t)P_PIDFD, (id_t)fd, &si, WEXITED | WNOHANG) == 0 &&
	    si.si_pid != 0)
		ours = 2;
out_close:
	if (fd >= 0)
		close(fd);
	return ours;
}

/*
 * Subreaper: kill and reap every child of this process started since
 * @since. Killing one reparents its own children to us, so repeat until
 * no round finds one. No budget shared by the children: each round kills
 * every live one before waiting for any, so a zombie held by a tracer
 * cannot hold up the rest (its tracer is killed too, which frees it).
 * Only when SWEEP_MS pass without a single child reaped does it give up
 * (a process stuck in the kernel). The common case, nothing left behind,
 * is one waitid() that finds no child at all: /proc is not read.
 */
/*
 * Wait up to a millisecond for one of @l's processes to exit: a poll on
 * their pidfds returns as soon as one does (a fixed sleep made every call
 * whose sandbox init was still dying wait a millisecond). Without pidfds
 * (before Linux 5.3), the millisecond.
 */
static void wait_one_exit(const struct pidlist *l)
{
	struct timespec ms = {0, 1000000};
	struct pollfd p[16];
	nfds_t n = 0;

	for (size_t i = 0; i < l->n && n < sizeof(p) / sizeof(p[0]); i++) {
		int fd = (int)syscall(__NR_pidfd_open, l->v[i], 0);

		if (fd >= 0)
			p[n++] = (struct pollfd){.fd = fd, .events = POLLIN};
	}
	if (n == 0) {
		nanosleep(&ms, NULL);
		return;
	}
	poll(p, n, 1);
	for (nfds_t i = 0; i < n; i++)
		close(p[i].fd);
}

static void sweep_children(unsigned long long since)
{
	uint64_t until = now_ms() + SWEEP_MS;
	struct pidlist l = {0};
	siginfo_t si;

	/*
	 * Children that have exited already (bwrap's pid 1 after bwrap, on
	 * every bwrap run) are reaped as waitid() names them, without the
	 * listing of every thread's children: only a live one, or one
	 * that is not the call's, sends the sweep to /proc.
	 */
	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) != 0) {
			if (errno == ECHILD)
				return;
			break;
		}
		if (si.si_pid == 0 || sweep_one(si.si_pid, since) != 2)
			break;
	}
	bool polled = false;

	while (now_ms() < until) {
		struct timespec ms = {0, 1000000};
		bool found = false, reaped = false;

		l.n = 0;
		list_children(&l);
		for (size_t i = 0; i < l.n; i++) {
			int r = sweep_one(l.v[i], since);

			found |= r > 0;
			reaped |= r == 2;
		}
		if (!found)
			break;
		if (reaped) {
			until = now_ms() + SWEEP_MS;
			polled = false;
		} else if (!polled) {
			wait_one_exit(&l); /* killed: let them die */
			polled = true;
		} else {
			/* A zombie a tracer still holds makes the poll
			 * return at once: no spinning, every other round
			 * sleeps. */
			nanosleep(&ms, NULL);
			polled = false;
		}
	}
	free(l.v);
}

/*
 * Decide the containment of a call about to start under its runner
 * (@sp->ops), from @want (WARD_CONTAIN_* flags): the cgroup when asked for and it can be
 * had, else the subreaper when asked for. Runner none (unconfined, kept by
 * landlock-run --unconfined) gets it too: a command that is not confined
 * can kill its keeper, and its orphans then still end with the call.
 * bwrap gets it too: its pid namespace ends with the sandbox's
 * pid 1, but a bwrap killed in its first milliseconds leaves that pid 1
 * running (see "Bwrap caveat" above) — the cgroup or the subreaper ends
 * it with the call.
 */
void ward_contain_begin(struct ward_spawn *sp, unsigned want)
{
	if (sp->ops->uncontained)
		return;
	if ((want & WARD_CONTAIN_CGROUP) && cg_create(sp)) {
		sp->contain = WARD_CONTAIN_CGROUP;
		return;
	}
	if ((want & WARD_CONTAIN_SUBREAPER) && subreaper_enable()) {
		sp->contain = WARD_CONTAIN_SUBREAPER;
		sp->since = boot_ticks();
	}
}

/*
 * clone3 into the call's cgroup failed with @e: drop the cgroup and fall
 * back to what @want allows. Errors other than a transient shortage mean
 * it will never work in this process (clone3 filtered by seccomp, no
 * CLONE_INTO_CGROUP, no permission on the cgroup): cgroups are off.
 */
void ward_contain_fallback(struct ward_spawn *sp, unsigned want, int e)
{
	if (e != EAGAIN && e != ENOMEM && e != EINTR)
		atomic_store(&cg_state, -1);
	sp->contain = WARD_CONTAIN_NONE;
	ward_contain_remove(sp);
	if ((want & WARD_CONTAIN_SUBREAPER) && subreaper_enable()) {
		sp->contain = WARD_CONTAIN_SUBREAPER;
		sp->since = boot_ticks();
	}
}

void ward_contain_proven(void)
{
	atomic_store(&cg_state, 1);
}

/*
 * The call's leader has exited (reaped or not): kill whatever it left.
 * Idempotent. Subreaper: the leader must be reaped first (under @lock),
 * so that one waitid() can tell whether any child at all is left.
 */
void ward_contain_kill(struct ward_spawn *sp, pthread_mutex_t *lock)
{
	if (sp->contained || !sp->contain)
		return;
	sp->contained = true;
	if (sp->contain == WARD_CONTAIN_CGROUP) {
		cg_kill(sp->cg_fd);
		return;
	}
	if (!sp->reaped) {
		if (lock)
			pthread_mutex_lock(lock);
		reap(sp->pid, &sp->status);
		sp->reaped = true;
		if (lock)
			pthread_mutex_unlock(lock);
	}
	sweep_children(sp->since);
}

/* --- bwrap's pid 1 and the signals for a call ------------------------------ */

/*
 * bwrap's --json-status-fd: one JSON object per line; {"child-pid": N}
 * means the sandboxed child was created. N when seen, else 0.
 */
pid_t ward_bwrap_child_pid(const char *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		json_error_t jerr;
		json_t *v;
		int found;

		while (off < len && (buf[off] == '\n' || buf[off] == ' ' ||
				     buf[off] == '\t' || buf[off] == '\r'))
			off++;
		if (off >= len)
			break;
		v = json_loadb(buf + off, len - off, JSON_DISABLE_EOF_CHECK,
			       &jerr);
		if (!v)
			break;
		found = json_is_object(v) ? (int)json_integer_value(
						json_object_get(v, "child-pid"))
					  : 0;
		json_decref(v);
		if (found > 0)
			return (pid_t)found;
		if (jerr.position <= 0)
			break;
		off += (size_t)jerr.position;
	}
	return 0;
}

/*
 * bwrap: once its JSON status names the sandbox's pid 1 (bwrap's child),
 * hold a pidfd on it. bwrap is not reaped yet when this runs (the loop
 * reaps it last), so the pid is still its child's or its zombie's.
 */
void ward_bwrap_note_child(struct ward_spawn *sp)
{
	pid_t pid;

	if (sp->bwrap_child)
		return;
	pid = ward_bwrap_child_pid(sp->json, sp->json_len);
	if (pid <= 0)
		return;
	sp->bwrap_child = pid;
	sp->bwrap_pidfd = (int)syscall(__NR_pidfd_open, pid, 0);
}

/* Signals whose default action does not end a process: bwrap survives
 * them, and so does its sandbox. */
static bool sig_ends(int sig)
{
	switch (sig) {
	case 0:
	case SIGCHLD:
	case SIGCONT:
	case SIGSTOP:
	case SIGTSTP:
	case SIGTTIN:
	case SIGTTOU:
	case SIGURG:
	case SIGWINCH:
		return false;
	default:
		return true;
	}
}

/* bwrap: end the sandbox's pid 1, and so its whole pid namespace, when
 * its pid is known (ward_bwrap_note_child, under the loop's lock). */
static void bwrap_kill_child(struct ward_spawn *sp)
{
	if (sp->bwrap_pidfd >= 0)
		syscall(__NR_pidfd_send_signal, sp->bwrap_pidfd, SIGKILL, NULL,
			0);
}

/*
 * bwrap has exited: so must its sandbox (it has, unless bwrap was killed
 * before its child armed its parent-death signal). The pidfd names that
 * very process, so a reused pid is never signalled. Killed earlier still,
 * before it said its child's pid, bwrap leaves that child in its process
 * group, waiting for bwrap for ever (pid 1 of its namespace: it takes
 * SIGKILL only): the group is killed as well. It is bwrap's own (setsid),
 * and the sandbox's command runs in a session of its own, so whatever is
 * left in it is the call's; bwrap is not reaped yet, so its pid, the
 * group's id, cannot name another group.
 */
void ward_bwrap_ended(struct ward_spawn *sp, pthread_mutex_t *lock)
{
	if (sp->ops->status != WARD_STATUS_JSON)
		return;
	if (lock)
		pthread_mutex_lock(lock);
	ward_bwrap_note_child(sp);
	bwrap_kill_child(sp);
	if (sp->pid > 0 && !sp->reaped && !sp->bwrap_child)
		kill(-sp->pid, SIGKILL);
	if (lock)
		pthread_mutex_unlock(lock);
}

int ward_spawn_signal(struct ward_spawn *sp, int sig)
{
	int ret;

	if (sp->pid <= 0 || sp->reaped)
		return -ESRCH;
	if (sig_ends(sig))
		sp->ended_by_caller = true;
	if (sp->keeper) {
		/* The keeper passes catchable signals on to the command's
		 * group and turns its own kill signal into the end of every
		 * process of the call (SIGKILL would end only the keeper). */
		ret = kill(sp->pid, sig == SIGKILL ? UTIL_KEEPER_KILL : sig);
		return ret == 0 ? 0 : -errno;
	}
	/* The session: setsid made pgid == pid. Should the group be gone
	 * while the unreaped leader is not, the leader still gets it. */
	ret = kill(-sp->pid, sig);
	if (ret != 0 && errno == ESRCH)
		ret = kill(sp->pid, sig);
	ret = ret == 0 ? 0 : -errno;
	/*
	 * bwrap's child arms its parent-death signal a few milliseconds
	 * after it starts: killed before that, bwrap would leave it
	 * running, so its pid 1 is ended too (it ignores every other
	 * signal). After bwrap's own signal, never before: bwrap would
	 * otherwise see its child die of SIGKILL and exit 137 first,
	 * and the call's end would not be the signal the caller sent.
	 */
	if (sp->ops->status == WARD_STATUS_JSON && sig_ends(sig))
		bwrap_kill_child(sp);
	return ret;
}
