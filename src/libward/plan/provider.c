/*
 * ward — the provider: the runner chain, its functional probes (once per
 * runner per provider), and the choice of a runner for a policy. What a
 * confined command is (ward_provider_confine(), ward_confined_*) is the
 * plan's business: plan.c, which calls this module, never the reverse.
 *
 * Thread safety: a provider caches what it learned (resolved binaries,
 * probe verdicts) under its own lock, so one provider may be shared by
 * every thread of a process (a probe runs once; other threads asking
 * meanwhile wait for its verdict). ward_provider_force() changes the
 * chain: call it while setting up, before the provider is shared. There is
 * no global state: two providers never share a cache.
 *
 * Security: which binary confines is never chosen by an environment
 * variable. bwrap and a bare runner command are looked up in PATH once, to
 * an absolute path, and refused when they lie inside a root that a confined
 * run may write; landlock-run comes from the options, from beside the
 * running executable or from the compiled-in libexec directory.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libward/internal.h"
#include "libward/runners/runners.h"
#include "libward/statefile.h"
#include "util/landlock.h"
#include "util/util.h"
#include "ward/probe.h"

#ifndef WARD_LIBEXECDIR
#define WARD_LIBEXECDIR "/usr/local/libexec/ward"
#endif

#define PROBE_TIMEOUT_DEFAULT_MS 2000u
#define MAX_CHAIN		 8
#define WHY_LEN			 256

/* A cached probe verdict for one runner. */
struct verdict_cache {
	bool done;
	bool planted; /* refused where a confined run could write it */
	enum ward_verdict verdict;
	char why[WHY_LEN];
};

/* A binary looked up once: its path, or why it is missing. */
struct resolved {
	bool done;
	char *path;
	char why[WHY_LEN];
};

struct ward_provider {
	pthread_mutex_t lock; /* everything below once shared */
	enum ward_platform platform;
	/* The configured chain (options or platform) … */
	enum ward_runner base_chain[MAX_CHAIN];
	size_t base_len;
	/* … and the one in force (base, or one runner after force()). */
	enum ward_runner chain[MAX_CHAIN];
	size_t chain_len;
	char *runner_command;
	char **failure_signatures; /* with runner_command, or NULL */
	unsigned probe_timeout_ms;
	bool no_probe_cache; /* never the cross-process cache */
	/* The probe being judged ran out of time (probe_cached). */
	bool probe_timed_out;
	ward_probe_fn probe;
	void *probe_ctx;
	char *opt_launcher;
	char *opt_bwrap;
	struct resolved bwrap;
	struct resolved launcher;
	struct resolved custom;
	struct verdict_cache cache[WARD_RUNNER_COUNT];
	struct ward_probe_entry report[MAX_CHAIN];
};

/* --- small helpers ------------------------------------------------------ */

static int dup_opt(char **slot, const char *s)
{
	*slot = NULL;
	if (!s)
		return 0;
	*slot = strdup(s);
	if (!*slot)
		return ward_err(-ENOMEM, "out of memory");
	return 0;
}

/* True when @path names a regular file we may execute. */
static bool is_executable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	       access(path, X_OK) == 0;
}

/*
 * Look @name up in PATH (only absolute entries: a relative entry would
 * resolve against the current directory, which may be the workspace).
 * Returns a malloc'd absolute path, or NULL (errno ENOENT or ENOMEM).
 */
static char *path_lookup(const char *name)
{
	const char *path = getenv("PATH");
	struct util_path_search ps;
	char buf[PATH_MAX];
	size_t dlen;

	/* No entry is searched relative to anything, so an empty PATH
	 * names nothing: the default, as for an unset one. */
	util_path_init(&ps, path && *path ? path : NULL, name);
	while (util_path_next(&ps, buf, sizeof(buf), &dlen))
		if (dlen && buf[0] == '/' && is_executable(buf))
			return strdup(buf);
	errno = ENOENT;
	return NULL;
}

/*
 * Refuse a runner binary that a confined run could have replaced: one inside
 * the workspace or inside any writable root of @policy. Both the path as
 * given and its canonical form are checked (a symlink out of the workspace
 * is fine only if its target is outside too).
 */
static int check_runner_location(const char *what, const char *path,
				 const ward_policy *policy, char *const *roots)
{
	const char *ws = ward_policy_workspace(policy);
	char *real = realpath(path, NULL);
	int err = 0;

	if (util_path_within(path, ws) ||
	    (real && util_path_within(real, ws))) {
		err = ward_err(WARD_ERUNNER,
			       "%s at %s is inside the workspace; refusing to "
			       "use it",
			       what, path);
		goto out_free;
	}
	for (size_t i = 0; roots[i]; i++) {
		if (util_path_within(path, roots[i]) ||
		    (real && util_path_within(real, roots[i]))) {
			err = ward_err(WARD_ERUNNER,
				       "%s at %s is inside the writable root "
				       "%s; refusing to use it",
				       what, path, roots[i]);
			break;
		}
	}
out_free:
	free(real);
	return err;
}

/* --- resolution of runner binaries (once per provider) ------------------- */

static const char *resolve_bwrap(ward_provider *p)
{
	struct resolved *r = &p->bwrap;

	if (r->done)
		return r->path;
	r->done = true;
	if (p->opt_bwrap) {
		if (is_executable(p->opt_bwrap)) {
			r->path = strdup(p->opt_bwrap);
			if (!r->path)
				ward_probe_why(r->why, sizeof(r->why),
					       "out of memory");
		} else {
			ward_probe_why(
			    r->why, sizeof(r->why),
			    "bwrap not found at %s (or not executable)",
			    p->opt_bwrap);
		}
		return r->path;
	}
	r->path = path_lookup("bwrap");
	if (!r->path)
		ward_probe_why(r->why, sizeof(r->why), "%s",
			       errno == ENOMEM ? "out of memory"
					       : "bwrap not found in PATH");
	return r->path;
}

static const char *resolve_launcher(ward_provider *p)
{
	struct resolved *r = &p->launcher;
	char exe[PATH_MAX], beside[PATH_MAX];
	const char *libexec = WARD_LIBEXECDIR "/landlock-run";
	ssize_t n;
	char *slash;

	if (r->done)
		return r->path;
	r->done = true;
	if (p->opt_launcher) {
		if (is_executable(p->opt_launcher))
			r->path = strdup(p->opt_launcher);
		else
			ward_probe_why(r->why, sizeof(r->why),
				       "landlock-run not found at %s (or not "
				       "executable)",
				       p->opt_launcher);
		return r->path;
	}
	beside[0] = '\0';
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash &&
		    snprintf(beside, sizeof(beside), "%.*s/landlock-run",
			     (int)(slash - exe), exe) < (int)sizeof(beside) &&
		    is_executable(beside)) {
			r->path = strdup(beside);
			return r->path;
		}
	} else {
		snprintf(exe, sizeof(exe), "%s", "(unknown executable)");
	}
	if (is_executable(libexec)) {
		r->path = strdup(libexec);
		return r->path;
	}
	ward_probe_why(r->why, sizeof(r->why),
		       "landlock-run not found beside %s or in %s", exe,
		       WARD_LIBEXECDIR);
	return r->path;
}

/*
 * Resolve the operator's runner command: an absolute path as is, a bare
 * name through PATH (once). Anything else, or a file that is missing or not
 * executable, leaves r->path NULL and says why.
 */
static const char *resolve_custom(ward_provider *p)
{
	struct resolved *r = &p->custom;
	const char *cmd = p->runner_command;

	if (r->done)
		return r->path;
	r->done = true;
	if (cmd[0] == '/') {
		if (is_executable(cmd))
			r->path = strdup(cmd);
		else
			ward_probe_why(r->why, sizeof(r->why),
				       "runner command %s is missing or not "
				       "executable",
				       cmd);
	} else if (strchr(cmd, '/') || !*cmd) {
		ward_probe_why(
		    r->why, sizeof(r->why),
		    "runner command \"%s\" must be an absolute path or "
		    "a bare name looked up in PATH",
		    cmd);
	} else {
		r->path = path_lookup(cmd);
		if (!r->path)
			ward_probe_why(
			    r->why, sizeof(r->why),
			    "runner command \"%s\" not found in PATH (or "
			    "not executable)",
			    cmd);
	}
	return r->path;
}

/*
 * The binary @ops runs, resolved once per provider: NULL when it has none
 * or it is missing (then *why says why).
 */
static const char *runner_tool(ward_provider *p,
			       const struct ward_runner_ops *ops,
			       const char **why)
{
	struct resolved *r;
	const char *path;

	switch (ops->tool) {
	case WARD_BIN_BWRAP:
		path = resolve_bwrap(p);
		r = &p->bwrap;
		break;
	case WARD_BIN_LAUNCHER:
		path = resolve_launcher(p);
		r = &p->launcher;
		break;
	case WARD_BIN_CUSTOM:
		path = p->runner_command ? resolve_custom(p) : NULL;
		r = &p->custom;
		break;
	case WARD_BIN_FIXED:
		*why = "";
		return ops->fixed_path;
	default:
		*why = "";
		return NULL;
	}
	*why = r->why;
	return path;
}

/* The runner's own functional probe (its file in runners/), with its binary. */
static enum ward_verdict probe_real(ward_provider *p, enum ward_runner runner,
				    char *why, size_t why_len)
{
	const struct ward_runner_ops *ops = ward_runner_ops(runner);
	struct ward_probe_ctx ctx = {NULL, NULL, p->probe_timeout_ms, false};
	enum ward_verdict v;

	if (ops->reserved) {
		ward_probe_why(why, why_len, "%s", ops->reserved);
		return WARD_VERDICT_UNUSABLE;
	}
	if (!ops->chain || !ops->probe) {
		ward_probe_why(why, why_len, "not a chain runner");
		return WARD_VERDICT_UNUSABLE;
	}
	ctx.binary = runner_tool(p, ops, &ctx.missing);
	v = ops->probe(&ctx, why, why_len);
	/* Said of this machine now, not of the runner (cache_store keeps
	 * it for this provider only). */
	if (ctx.timed_out)
		p->probe_timed_out = true;
	return v;
}

/* --- probe verdicts kept across processes --------------------------------- */

/*
 * `ward run` is one process per command, so a verdict cached only for the
 * provider's lifetime would mean a probe (a bwrap sandbox, ~3 ms) on every
 * command. The real probes' verdicts are therefore also kept in a small
 * file in ward's state directory — a protected path, read-only inside every
 * confined run, so no command can forge a verdict — keyed by everything
 * that decides them: the boot, the kernel, the uid and the namespaces and
 * seccomp state the caller runs in, the sysctls that allow user
 * namespaces, the Landlock ABI, and the identity (device, inode, size,
 * mtime) of the runner binary. Anything different is a miss, and the file
 * is trusted only when it and its directory belong to the caller and no
 * one else may write them.
 */
#define CACHE_MAGIC "ward-probe-cache 1"
#define CACHE_FILE  "probe-cache"
#define CACHE_MAX   4096

static void fnv(uint64_t *h, const void *data, size_t n)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < n; i++) {
		*h ^= p[i];
		*h *= 0x100000001b3ULL;
	}
	*h ^= 0xff; /* a separator: "ab","c" differs from "a","bc" */
	*h *= 0x100000001b3ULL;
}

static void fnv_str(uint64_t *h, const char *s)
{
	fnv(h, s ? s : "-", strlen(s ? s : "-"));
}

/* The first bytes of a small file (a sysctl, boot_id), or "-". */
static void fnv_file(uint64_t *h, const char *path)
{
	char buf[512];
	ssize_t n = -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf));
		close(fd);
	}
	fnv(h, n > 0 ? buf : "-", n > 0 ? (size_t)n : 1);
}

/* What identifies a file's content without reading it. */
static void fnv_stat(uint64_t *h, const char *path)
{
	struct stat st;
	unsigned long long v[6] = {0};

	if (path && stat(path, &st) == 0) {
		v[0] = (unsigned long long)st.st_dev;
		v[1] = (unsigned long long)st.st_ino;
		v[2] = (unsigned long long)st.st_size;
		v[3] = (unsigned long long)st.st_mtim.tv_sec;
		v[4] = (unsigned long long)st.st_mtim.tv_nsec;
		v[5] = (unsigned long long)st.st_mode;
	}
	fnv_str(h, path);
	fnv(h, v, sizeof(v));
}

/* The lines of /proc/self/status that say what this process may do. */
static void fnv_status(uint64_t *h)
{
	static const char *const keys[] = {"CapEff:", "CapBnd:", "Seccomp:",
					   "Seccomp_filters:", "NoNewPrivs:"};
	char buf[4096];
	ssize_t n = -1;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (n <= 0) {
		fnv_str(h, NULL);
		return;
	}
	buf[n] = '\0';
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *at = strstr(buf, keys[i]);
		size_t len = at ? strcspn(at, "\n") : 0;

		fnv(h, at ? at : "-", at ? len : 1);
	}
}

/* The key of @runner's verdict here and now. */
static uint64_t cache_key(ward_provider *p, enum ward_runner runner)
{
	const struct ward_runner_ops *ops = ward_runner_ops(runner);
	uint64_t h = 0xcbf29ce484222325ULL;
	const char *why;
	struct utsname u;
	struct stat st;
	unsigned long long ns = 0;
	uid_t uid = geteuid();
	int abi;

	fnv_str(&h, CACHE_MAGIC);
	fnv_str(&h, ward_runner_name(runner));
	fnv(&h, &uid, sizeof(uid));
	fnv(&h, &p->probe_timeout_ms, sizeof(p->probe_timeout_ms));
	fnv_file(&h, "/proc/sys/kernel/random/boot_id");
	if (uname(&u) == 0) {
		fnv_str(&h, u.release);
		fnv_str(&h, u.version);
		fnv_str(&h, u.machine);
	}
	if (stat("/proc/self/ns/user", &st) == 0)
		ns = (unsigned long long)st.st_ino;
	fnv(&h, &ns, sizeof(ns));
	fnv_status(&h);
	for (const char *const *f = ops->key_files; f && *f; f++)
		fnv_file(&h, *f);
	if (ops->key_abi) {
		abi = ward_probe_landlock_abi();
		fnv(&h, &abi, sizeof(abi));
	}
	if (ops->key_binary)
		fnv_stat(&h, runner_tool(p, ops, &why));
	return h;
}

/* Read the cache file into @buf (NUL-terminated); false when untrusted. */
static bool cache_read(char *buf, size_t len)
{
	int dfd = ward_statefile_open(false);
	bool ok;

	buf[0] = '\0';
	if (dfd < 0)
		return false;
	ok = ward_statefile_read(dfd, CACHE_FILE, CACHE_MAGIC, buf, len);
	close(dfd);
	return ok;
}

/* Look @runner up: true and @c filled when the cache has its verdict. */
static bool cache_load(ward_provider *p, enum ward_runner runner,
		       struct verdict_cache *c)
{
	char buf[CACHE_MAX], want[64];
	const char *line;

	if (!cache_read(buf, sizeof(buf)))
		return false;
	snprintf(want, sizeof(want), "%s %016llx ", ward_runner_name(runner),
		 (unsigned long long)cache_key(p, runner));
	for (line = buf; (line = strchr(line, '\n'));) {
		int v;
		char *end;

		line++;
		if (strncmp(line, want, strlen(want)) != 0)
			continue;
		v = (int)strtol(line + strlen(want), &end, 10);
		if (end == line + strlen(want) || *end != ' ' ||
		    (v != WARD_VERDICT_FULL && v != WARD_VERDICT_PARTIAL &&
		     v != WARD_VERDICT_UNUSABLE))
			return false;
		c->verdict = (enum ward_verdict)v;
		snprintf(c->why, sizeof(c->why), "%.*s",
			 (int)strcspn(end + 1, "\n"), end + 1);
		return true;
	}
	return false;
}

/*
 * Keep @runner's fresh verdict: the file is rewritten (a temporary file
 * renamed over it) with this line and the other runners' lines that are
 * still current. Best effort: a failure only costs a probe next time.
 */
static void cache_store(ward_provider *p, enum ward_runner runner,
			const struct verdict_cache *c)
{
	char buf[CACHE_MAX], out[CACHE_MAX];
	const char *line;
	size_t o = 0;
	int dfd, n;

	dfd = ward_statefile_open(true);
	if (dfd < 0)
		return;
	n = snprintf(out, sizeof(out), "%s\n%s %016llx %d %s\n", CACHE_MAGIC,
		     ward_runner_name(runner),
		     (unsigned long long)cache_key(p, runner), (int)c->verdict,
		     c->why);
	if (n < 0 || (size_t)n >= sizeof(out))
		goto out_close_dir;
	o = (size_t)n;
	/* Keep the other runners' lines (their keys are checked on load). */
	if (ward_statefile_read(dfd, CACHE_FILE, CACHE_MAGIC, buf,
				sizeof(buf))) {
		for (line = strchr(buf, '\n'); line && line[1];) {
			size_t len;

			line++;
			len = strcspn(line, "\n");
			if (strncmp(line, ward_runner_name(runner),
				    strlen(ward_runner_name(runner))) != 0 &&
			    o + len + 1 < sizeof(out)) {
				memcpy(out + o, line, len);
				o += len;
				out[o++] = '\n';
			}
			line = strchr(line, '\n');
		}
	}
	ward_statefile_write(dfd, CACHE_FILE, out, o);
out_close_dir:
	close(dfd);
}

/*
 * The verdict for @runner: from this provider's memory, else from the
 * cross-process cache, else probed (and kept in both).
 */
static const struct verdict_cache *probe_cached(ward_provider *p,
						enum ward_runner runner)
{
	struct verdict_cache *c = &p->cache[runner];
	bool disk = !p->probe && !p->no_probe_cache;

	if (c->done)
		return c;
	c->why[0] = '\0';
	if (disk && cache_load(p, runner, c)) {
		c->done = true;
		return c;
	}
	p->probe_timed_out = false;
	if (p->probe)
		c->verdict =
		    p->probe(p->probe_ctx, runner, c->why, sizeof(c->why));
	else
		c->verdict = probe_real(p, runner, c->why, sizeof(c->why));
	c->why[sizeof(c->why) - 1] = '\0';
	if (c->verdict != WARD_VERDICT_FULL &&
	    c->verdict != WARD_VERDICT_PARTIAL)
		c->verdict = WARD_VERDICT_UNUSABLE;
	if (!c->why[0])
		ward_probe_why(c->why, sizeof(c->why), "%s",
			       c->verdict == WARD_VERDICT_UNUSABLE
				   ? "unusable"
				   : "probe ok");
	/* One line in the file: no newline inside the reason. */
	c->why[strcspn(c->why, "\n")] = '\0';
	c->done = true;
	/* A probe that ran out of time says the machine was slow at that
	 * moment (a loaded CI runner), not that the runner cannot confine:
	 * kept for this provider only, never for every later process. */
	if (!p->probe && !p->probe_timed_out)
		cache_store(p, runner, c);
	return c;
}

static unsigned distrust_planted(ward_provider *p, const ward_policy *policy,
				 char *const *roots);

/* --- exported: the provider --------------------------------------------- */

static bool chain_runner_valid(enum ward_runner r)
{
	return ward_runner_ops(r)->chain;
}

int ward_provider_new(ward_provider **out,
		      const struct ward_provider_options *opts)
{
	struct ward_provider_options defaults = WARD_PROVIDER_OPTIONS_INIT;
	const enum ward_runner *chain;
	ward_provider *p;
	size_t len;
	int err;

	if (!out)
		return ward_err(WARD_EINVAL, "no output pointer");
	if (!opts)
		opts = &defaults;
	if (opts->version < 1 || opts->version > WARD_PROVIDER_OPTIONS_VERSION)
		return ward_err(WARD_EINVAL,
				"provider options version %u (this libward "
				"knows 1 to %u)",
				opts->version, WARD_PROVIDER_OPTIONS_VERSION);
	if ((unsigned)opts->platform > WARD_PLATFORM_OTHER)
		return ward_err(WARD_EINVAL, "unknown platform %d",
				(int)opts->platform);
	if (opts->chain) {
		chain = opts->chain;
		len = opts->chain_len;
	} else {
		len = ward_platform_chain(&chain, opts->platform);
	}
	if (len > MAX_CHAIN)
		return ward_err(WARD_EINVAL,
				"runner chain too long (%zu, at most %d)", len,
				MAX_CHAIN);
	for (size_t i = 0; i < len; i++) {
		if (!chain_runner_valid(chain[i]))
			return ward_err(WARD_EINVAL,
					"\"%s\" cannot be in a runner chain",
					ward_runner_name(chain[i]));
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return ward_err(-ENOMEM, "out of memory");
	pthread_mutex_init(&p->lock, NULL);
	p->platform = opts->platform;
	for (size_t i = 0; i < len; i++)
		p->base_chain[i] = p->chain[i] = chain[i];
	p->base_len = p->chain_len = len;
	p->probe_timeout_ms = opts->probe_timeout_ms ? opts->probe_timeout_ms
						     : PROBE_TIMEOUT_DEFAULT_MS;
	p->probe = opts->probe;
	p->probe_ctx = opts->probe_ctx;
	p->no_probe_cache = opts->version >= 3 && opts->no_probe_cache;
	err = dup_opt(&p->runner_command, opts->runner_command);
	/* Version 1 callers' struct ends before the signatures. */
	if (!err && opts->version >= 2 && opts->runner_failure_signatures) {
		p->failure_signatures = ward_strv_dup(
		    (char *const *)opts->runner_failure_signatures);
		if (!p->failure_signatures)
			err = ward_err(-ENOMEM, "out of memory");
	}
	if (!err)
		err = dup_opt(&p->opt_launcher, opts->launcher_path);
	if (!err)
		err = dup_opt(&p->opt_bwrap, opts->bwrap_path);
	if (err) {
		ward_provider_free(p);
		return err;
	}
	*out = p;
	return 0;
}

void ward_provider_free(ward_provider *provider)
{
	if (!provider)
		return;
	free(provider->runner_command);
	ward_strv_free(provider->failure_signatures);
	free(provider->opt_launcher);
	free(provider->opt_bwrap);
	free(provider->bwrap.path);
	free(provider->launcher.path);
	free(provider->custom.path);
	pthread_mutex_destroy(&provider->lock);
	free(provider);
}

/*
 * The unavailable error: names every candidate's reason and says, in so
 * many words, that ward refuses to run the command unconfined.
 */
static int unavailable(ward_provider *p)
{
	char reasons[768];
	size_t off = 0;

	if (p->chain_len == 0)
		return ward_err(WARD_EUNAVAILABLE,
				"sandbox unavailable: no runner exists for "
				"platform %s (the runner chain is empty); ward "
				"is refusing to run the command unconfined",
				ward_platform_name(p->platform));
	reasons[0] = '\0';
	for (size_t i = 0; i < p->chain_len; i++) {
		enum ward_runner r = p->chain[i];
		const char *why =
		    p->cache[r].done ? p->cache[r].why : "not probed";
		int n =
		    snprintf(reasons + off, sizeof(reasons) - off, "%s%s: %s",
			     i ? "; " : "", ward_runner_name(r), why);

		if (n < 0 || (size_t)n >= sizeof(reasons) - off)
			break;
		off += (size_t)n;
	}
	return ward_err(WARD_EUNAVAILABLE,
			"sandbox unavailable: no usable runner (%s); ward is "
			"refusing to run the command unconfined",
			reasons);
}

/* ward_provider_select with the provider's lock held. */
static int select_locked(ward_provider *p, enum ward_runner *out_runner,
			 enum ward_enforcement *out_enforcement)
{
	enum ward_runner runner = WARD_RUNNER_NONE;
	enum ward_enforcement enf = WARD_ENFORCEMENT_NONE;

	if (p->runner_command) {
		runner = WARD_RUNNER_CUSTOM;
		enf = WARD_ENFORCEMENT_FULL;
	} else if (p->chain_len == 1) {
		/*
		 * A sole candidate needs no arbitration: it is chosen without
		 * a probe, and its own failure at run time is a runner
		 * failure. A reserved runner (windows-acl) can never confine.
		 */
		if (ward_runner_ops(p->chain[0])->reserved)
			return ward_err(
			    WARD_EUNAVAILABLE,
			    "sandbox unavailable: the %s "
			    "runner is reserved and cannot confine; "
			    "ward is refusing to run the command "
			    "unconfined",
			    ward_runner_name(p->chain[0]));
		runner = p->chain[0];
		enf = WARD_ENFORCEMENT_FULL;
	} else {
		for (size_t i = 0; i < p->chain_len; i++) {
			const struct verdict_cache *c =
			    probe_cached(p, p->chain[i]);

			if (c->verdict == WARD_VERDICT_UNUSABLE)
				continue;
			runner = p->chain[i];
			enf = c->verdict == WARD_VERDICT_PARTIAL
				  ? WARD_ENFORCEMENT_PARTIAL
				  : WARD_ENFORCEMENT_FULL;
			break;
		}
		if (runner == WARD_RUNNER_NONE)
			return unavailable(p);
	}
	if (out_runner)
		*out_runner = runner;
	if (out_enforcement)
		*out_enforcement = enf;
	return 0;
}

int ward_provider_select(ward_provider *provider, enum ward_runner *out_runner,
			 enum ward_enforcement *out_enforcement)
{
	int err;

	if (!provider)
		return ward_err(WARD_EINVAL, "no provider");
	pthread_mutex_lock(&provider->lock);
	err = select_locked(provider, out_runner, out_enforcement);
	pthread_mutex_unlock(&provider->lock);
	return err;
}

int ward_provider_select_for(ward_provider *provider, const ward_policy *policy,
			     enum ward_runner *out_runner,
			     enum ward_enforcement *out_enforcement)
{
	char **roots = NULL;
	int err;

	if (!provider || !policy)
		return ward_err(WARD_EINVAL, "invalid argument");
	err = ward_roots_writable(&roots, policy);
	if (err)
		return err;
	pthread_mutex_lock(&provider->lock);
	distrust_planted(provider, policy, roots);
	err = select_locked(provider, out_runner, out_enforcement);
	pthread_mutex_unlock(&provider->lock);
	ward_strv_free(roots);
	return err;
}

int ward_provider_force(ward_provider *provider, enum ward_runner runner)
{
	if (!provider)
		return ward_err(WARD_EINVAL, "no provider");
	if (provider->runner_command) {
		if (runner == WARD_RUNNER_CUSTOM)
			return 0;
		return ward_err(WARD_EINVAL,
				"a runner command (%s) is configured; cannot "
				"force the %s runner",
				provider->runner_command,
				ward_runner_name(runner));
	}
	for (size_t i = 0; i < provider->base_len; i++) {
		if (provider->base_chain[i] == runner) {
			provider->chain[0] = runner;
			provider->chain_len = 1;
			return 0;
		}
	}
	return ward_err(
	    WARD_EINVAL, "runner %s is not in the runner chain of platform %s",
	    ward_runner_name(runner), ward_platform_name(provider->platform));
}

int ward_provider_report(const struct ward_probe_entry **out, size_t *out_len,
			 ward_provider *provider)
{
	ward_provider *p = provider;
	size_t n = 0;

	if (!out || !out_len || !p)
		return ward_err(WARD_EINVAL, "invalid argument");
	pthread_mutex_lock(&p->lock);
	if (p->runner_command) {
		struct ward_probe_entry *e = &p->report[n++];

		e->runner = WARD_RUNNER_CUSTOM;
		e->verdict = WARD_VERDICT_FULL;
		e->probed = false;
		ward_probe_why(
		    e->why, sizeof(e->why),
		    "runner command %s (operator-asserted; not probed)",
		    p->runner_command);
	} else if (p->chain_len == 1) {
		struct ward_probe_entry *e = &p->report[n++];

		e->runner = p->chain[0];
		e->probed = false;
		if (ward_runner_ops(e->runner)->reserved) {
			e->verdict = WARD_VERDICT_UNUSABLE;
			ward_probe_why(e->why, sizeof(e->why), "%s",
				       ward_runner_ops(e->runner)->reserved);
		} else {
			e->verdict = WARD_VERDICT_FULL;
			ward_probe_why(
			    e->why, sizeof(e->why),
			    "chosen without a probe (sole candidate)");
		}
	} else {
		for (size_t i = 0; i < p->chain_len; i++) {
			struct ward_probe_entry *e = &p->report[n++];
			const struct verdict_cache *c =
			    probe_cached(p, p->chain[i]);

			e->runner = p->chain[i];
			e->verdict = c->verdict;
			e->probed = true;
			ward_probe_why(e->why, sizeof(e->why), "%s", c->why);
		}
	}
	*out = p->report;
	*out_len = n;
	pthread_mutex_unlock(&p->lock);
	return 0;
}

const char *ward_provider_bwrap_path(ward_provider *provider)
{
	const char *path;

	if (!provider)
		return NULL;
	pthread_mutex_lock(&provider->lock);
	path = resolve_bwrap(provider);
	pthread_mutex_unlock(&provider->lock);
	return path;
}

const char *ward_provider_launcher_path(ward_provider *provider)
{
	const char *path;

	if (!provider)
		return NULL;
	pthread_mutex_lock(&provider->lock);
	path = resolve_launcher(provider);
	pthread_mutex_unlock(&provider->lock);
	return path;
}

/* --- exported: choosing a runner for a policy ----------------------------- */

/*
 * A runner binary that lies where a confined run could have written it
 * (bwrap reached through PATH) must never be executed, not even by a
 * probe. Such a runner is marked unusable for the provider's lifetime,
 * before anything probes it: the chain then falls through to the next
 * runner, and a forced one is refused by runner_binary(). Returns the
 * runners (a bit each) whose binary it found where no confined run of
 * @policy can write.
 */
static unsigned distrust_planted(ward_provider *p, const ward_policy *policy,
				 char *const *roots)
{
	unsigned located = 0;

	if (p->runner_command)
		return 0;
	for (size_t i = 0; i < p->chain_len; i++) {
		const struct ward_runner_ops *ops =
		    ward_runner_ops(p->chain[i]);
		struct verdict_cache *c = &p->cache[p->chain[i]];
		const char *path, *why;

		/* Only a binary the chain may choose is looked up at all. */
		if (!ops->tool_what ||
		    (c->done && c->verdict == WARD_VERDICT_UNUSABLE))
			continue;
		path = runner_tool(p, ops, &why);
		if (!path)
			continue;
		if (check_runner_location(ops->tool_what, path, policy,
					  roots) == 0) {
			located |= 1u << p->chain[i];
			continue;
		}
		ward_probe_why(c->why, sizeof(c->why), "%s", ward_error_last());
		c->verdict = WARD_VERDICT_UNUSABLE;
		c->planted = true;
		c->done = true;
	}
	return located;
}

int ward_provider_problem(struct ward_runner_status *out,
			  ward_provider *provider, enum ward_runner runner)
{
	const struct ward_runner_ops *ops = ward_runner_ops(runner);
	const struct verdict_cache *c = NULL;
	const char *path = NULL, *why = "";

	if (!out || !provider || (unsigned)runner >= WARD_RUNNER_COUNT)
		return ward_err(WARD_EINVAL, "invalid argument");
	memset(out, 0, sizeof(*out));
	out->runner = runner;
	pthread_mutex_lock(&provider->lock);
	if (ops->reserved) {
		out->problem = WARD_PROBLEM_RESERVED;
		goto out_unlock;
	}
	/* Only a runner with a binary of its own to find has problems to
	 * tell (seatbelt's is a fixed path). */
	if (ops->tool == WARD_BIN_NONE || ops->tool == WARD_BIN_FIXED)
		goto out_unlock;
	if (ops->kernel_missing && ops->kernel_missing()) {
		out->problem = WARD_PROBLEM_KERNEL;
		ward_probe_why(out->why, sizeof(out->why), "%s",
			       ward_error_last());
		goto out_unlock;
	}
	path = runner_tool(provider, ops, &why);
	if (!path) {
		out->problem = WARD_PROBLEM_NOT_FOUND;
		ward_probe_why(out->why, sizeof(out->why), "%s", why);
		goto out_unlock;
	}
	ward_probe_why(out->path, sizeof(out->path), "%s", path);
	if (ops->probe)
		c = probe_cached(provider, runner);
	if (c && c->verdict == WARD_VERDICT_UNUSABLE) {
		ward_probe_why(out->why, sizeof(out->why), "%s", c->why);
		out->problem = c->planted ? WARD_PROBLEM_PLANTED
			       : ops->no_userns && ops->no_userns(c->why)
				   ? WARD_PROBLEM_NO_USERNS
				   : WARD_PROBLEM_PROBE_FAILED;
	}
out_unlock:
	pthread_mutex_unlock(&provider->lock);
	return 0;
}

/*
 * The runner's binary, resolved once per provider, and refused when it lies
 * where a confined run of @policy could have replaced it (unless
 * distrust_planted() just found it elsewhere: @located).
 */
static int runner_binary(const char **out, ward_provider *p,
			 enum ward_runner runner, const ward_policy *policy,
			 char *const *roots, unsigned located)
{
	const struct ward_runner_ops *ops = ward_runner_ops(runner);
	const char *path, *why = "";
	int err;

	if (ops->tool == WARD_BIN_NONE)
		return ward_err(WARD_ERUNNER, "the %s runner cannot confine",
				ward_runner_name(runner));
	path = runner_tool(p, ops, &why);
	if (!path)
		return ward_err(WARD_ERUNNER, "cannot start the %s runner: %s",
				ward_runner_name(runner), why);
	if (ops->tool_what && !(located & 1u << runner)) {
		err =
		    check_runner_location(ops->tool_what, path, policy, roots);
		if (err)
			return err;
	}
	*out = path;
	return 0;
}

int ward_provider_choose(struct ward_runner_choice *out,
			 ward_provider *provider, const ward_policy *policy,
			 char *const *roots)
{
	struct ward_runner_choice c = {WARD_RUNNER_NONE, WARD_ENFORCEMENT_NONE,
				       NULL, NULL, NULL};
	unsigned located;
	int err;

	if (!out || !provider || !policy)
		return ward_err(WARD_EINVAL, "invalid argument");
	if (ward_policy_mode(policy) == WARD_MODE_DANGER_FULL_ACCESS) {
		/*
		 * Nothing is confined, but the call is contained like any
		 * other: landlock-run --unconfined stays as the command's
		 * keeper and ends every process it started when it ends.
		 * Without it the call does not run (fail closed: an approval
		 * says "this call only").
		 */
		pthread_mutex_lock(&provider->lock);
		c.path = resolve_launcher(provider);
		err = 0;
		if (!c.path)
			err = ward_err(
			    WARD_ERUNNER,
			    "%s: landlock-run, the keeper that "
			    "ends every process of an unconfined "
			    "call with it, cannot be used (%s); "
			    "ward is refusing to run the command "
			    "uncontained",
			    ward_mode_name(WARD_MODE_DANGER_FULL_ACCESS),
			    provider->launcher.why);
		pthread_mutex_unlock(&provider->lock);
		if (err)
			return err;
		*out = c;
		return 0;
	}
	pthread_mutex_lock(&provider->lock);
	/*
	 * Where the runner binaries live is checked BEFORE anything is
	 * probed: a probe executes the binary, so a "bwrap" planted in the
	 * workspace (or any writable root) and reached through PATH must
	 * never run, not even to be refused afterwards.
	 */
	located = distrust_planted(provider, policy, roots);
	err = select_locked(provider, &c.runner, &c.enforcement);
	if (!err)
		err = runner_binary(&c.path, provider, c.runner, policy, roots,
				    located);
	if (!err && ward_runner_ops(c.runner)->operator_signatures)
		c.failure_signatures = provider->failure_signatures;
	/* Defense in depth: the Landlock layer inside every bwrap run. */
	if (!err && ward_runner_ops(c.runner)->inner_layer &&
	    ward_ll_abi() >= 1)
		c.inner = resolve_launcher(provider);
	pthread_mutex_unlock(&provider->lock);
	if (err)
		return err;
	*out = c;
	return 0;
}

int ward_provider_options_init(struct ward_provider_options *opts,
			       unsigned version)
{
	const struct ward_provider_options init = WARD_PROVIDER_OPTIONS_INIT;
	size_t size;

	if (!opts)
		return ward_err(WARD_EINVAL, "provider options: NULL");
	/* An older caller's struct is shorter: write only what it has. */
	switch (version) {
	case 1:
		size = offsetof(struct ward_provider_options,
				runner_failure_signatures);
		break;
	case 2:
		size = offsetof(struct ward_provider_options, no_probe_cache);
		break;
	case WARD_PROVIDER_OPTIONS_VERSION:
		size = sizeof(*opts);
		break;
	default:
		return ward_bad_version("provider options", version,
					WARD_PROVIDER_OPTIONS_VERSION);
	}
	memcpy(opts, &init, size);
	opts->version = version;
	return 0;
}
