/*
 * ward — the runner interface (not installed).
 *
 * A runner is one set of operations in one file of this folder (bwrap.c,
 * landlock.c, seatbelt.c, custom.c, none.c, windows_acl.c) and one row of
 * the table (table.c). The rest of libward is runner-neutral: the provider
 * probes and resolves through .probe and .tool, the plan builds and
 * assembles through .network, .options, .attach_net and the argv facts,
 * the executor spawns and contains by the status and containment facts,
 * classification reads the dialect, and `ward probe` the report. Adding a
 * runner is one new file and one table row (docs/ARCHITECTURE.md).
 *
 * Layering: the modules that read the table (provider.c, plan.c, exec.c,
 * classify.c) sit above it; what the operations call (the profile
 * builders, the translation, probe_spawn.c) sits below and never reads it.
 */
#ifndef WARD_RUNNERS_H
#define WARD_RUNNERS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "libward/internal.h"

/* Every runner of enum ward_runner has a row (table.c). */
#define WARD_RUNNER_COUNT (WARD_RUNNER_CUSTOM + 1)

/* The binaries a provider resolves once and keeps (provider.c). */
enum ward_runner_bin {
	WARD_BIN_NONE = 0, /* the runner runs nothing of its own */
	WARD_BIN_BWRAP,	   /* bwrap: the option, else PATH */
	WARD_BIN_LAUNCHER, /* landlock-run: the option, beside ward, libexec */
	WARD_BIN_CUSTOM,   /* the operator's runner command */
	WARD_BIN_FIXED,	   /* a fixed path (.fixed_path) */
	WARD_BIN_COUNT,
};

/* How the executor learns what the runner did (exec.c). */
enum ward_status_kind {
	WARD_STATUS_NONE = 0, /* only the runner's text */
	WARD_STATUS_JSON,     /* bwrap's --json-status-fd: the child's pid */
	WARD_STATUS_KEEPER,   /* landlock-run's keeper: --pid-fd, its status */
};

/* What a probe gets from the provider, and tells it back. */
struct ward_probe_ctx {
	const char *binary;  /* the runner's tool, or NULL … */
	const char *missing; /* … and why it is missing */
	unsigned timeout_ms;
	bool timed_out; /* out: said of this machine now, not of the runner */
};

struct ward_plan;
struct ward_xlate;

/*
 * The plan as the runners build it (plan.c owns it; the operations fill
 * the parts of their runner). Fields as in plan.c.
 */
struct ward_facts;

struct ward_plan {
	const ward_policy *policy; /* borrowed */
	/* What the policy means here now (facts.h: the writable roots, the
	 * protected paths), computed once for the plan; a reference. */
	struct ward_facts *facts;
	const struct ward_runner_ops *ops;
	enum ward_mode mode;
	enum ward_runner runner;
	enum ward_enforcement enforcement;
	char *runner_path;
	char *workspace; /* the working directory when a call names none */
	char **failure_signatures; /* CUSTOM, or NULL */
	struct ward_xlate *x;	   /* the rules translated for the runner */
	/*
	 * The runner's binary and its options: bwrap/custom BWRAP and its
	 * profile (no --chdir, no --); landlock LAUNCHER --ro … --rw …;
	 * seatbelt sandbox-exec -p TEXT; none LAUNCHER --unconfined.
	 * ward_plan_assemble() puts the rest around them.
	 */
	char *binary;
	char **options;
	char **partial; /* why enforcement is partial */
	enum ward_network net;
	char *bridge_path; /* bwrap/custom with an allowlist */
	/* The translation's warnings, then what the runner cannot enforce
	 * of the network (said before every run, like a rule it drops). */
	char **warnings;
	/* bwrap: LAUNCHER --ro / --rw … [--allow-unix …] --, run inside
	 * bwrap before the command (the Landlock layer), or NULL. */
	char **inner;
	pthread_mutex_t lock; /* apply */
	bool applied;
};

/*
 * ward_plan_new_facts - ward_plan_new() with the call's @facts (the plan
 * keeps a reference): a call that has checked its policy against them
 * plans with the same answer, and scans the workspace once.
 */
int ward_plan_new_facts(ward_plan **out, ward_provider *provider,
			const ward_policy *policy, struct ward_facts *facts);

/*
 * One runner's operations and facts. A NULL operation or a false/NULL fact
 * means the runner has no such behaviour; each says what the neutral code
 * does then.
 */
struct ward_runner_ops {
	enum ward_runner id;

	/* --- provider.c: the chain, the binary, the probe -------------- */
	bool chain; /* may stand in a runner chain */
	/* Can never confine (windows-acl): the reason, for probe and report. */
	const char *reserved;
	enum ward_runner_bin tool;
	const char *fixed_path; /* WARD_BIN_FIXED */
	/*
	 * The binary is refused where a confined run could have written it,
	 * named so in the error ("bwrap", "runner command"); NULL: not
	 * checked. A chain runner's is checked before anything probes it.
	 */
	const char *tool_what;
	/*
	 * The functional probe (NULL: never probed): a verdict and its
	 * reason; ctx->binary is the resolved tool.
	 */
	enum ward_verdict (*probe)(struct ward_probe_ctx *ctx, char *why,
				   size_t why_len);
	/* What decides the verdict besides the kernel and the caller, for
	 * the cross-process cache: files read (sysctls), the Landlock ABI,
	 * the binary's identity. */
	const char *const *key_files;
	bool key_abi;
	bool key_binary;
	/* ward probe: the kernel cannot have this runner at all (the detail
	 * in ward_error_last()), before any binary is looked for. */
	bool (*kernel_missing)(void);
	/* ward probe: the runner's own words for "no user namespace". */
	bool (*no_userns)(const char *why);
	/* The Landlock layer (landlock-run) runs inside, when the kernel
	 * has Landlock. */
	bool inner_layer;
	/* The operator's failure signatures replace the dialect below. */
	bool operator_signatures;

	/* --- translate.c: the rules for this runner -------------------- */
	/* Confines nothing (runner none): only the fs fence applies rules. */
	bool unconfined;
	/* How the translation labels this runner's warnings (NULL: its name). */
	const char *label;
	/*
	 * The rules and protected paths as this runner applies them, after
	 * the warnings every runner shares (translate_<runner>.c does the
	 * work). NULL: a runner that cannot confine (the targets are
	 * gathered, and a warning says no rule reaches commands).
	 */
	void (*translate)(struct ward_xlate *x);
	/* The runner follows a symlinked .git itself (seatbelt names paths):
	 * no note about links. */
	bool keeps_links;
	/* The runner's profile mounts (bwrap's): a protected directory
	 * missing inside a root is created and mounted over; /dev is its
	 * private one. */
	bool profile_mounts;

	/* --- plan.c: the typed parts and the argv ---------------------- */
	/* Check (and attach) the plan's network, p->net other than on. */
	int (*network)(struct ward_plan *p);
	/* The runner's argv from its binary (*prefix[0]) on, the command
	 * excluded; @inner is the Landlock layer's launcher, or NULL. */
	int (*options)(char ***prefix, struct ward_plan *p, const char *inner);
	/* An allowlist's endpoint: into the runner's part (@pre) and what
	 * runs inside it before the command (@inside). */
	void (*attach_net)(struct ward_strv *pre, struct ward_strv *inside,
			   const struct ward_plan *p,
			   const struct ward_net_attach *net);
	/* The status channel's options, right after the binary, each run
	 * with the executor's descriptor after the last (NULL: none). */
	const char *const *status_opts;
	/* The option that makes the runner's process the supervisor only,
	 * its spawner the keeper (landlock-run --kept); NULL: the runner
	 * always keeps itself. Given with the status channel only. */
	const char *kept_opt;
	/* The working directory is the runner's --chdir (else the runner is
	 * started in it). */
	bool chdir;
	/* The most arguments the runner takes (0: no limit it states); past
	 * it the Landlock layer reads its part from a memfd. */
	size_t max_args;
	/* Said (enforcement partial) when .inner_layer is missing. */
	const char *no_layer;
	/* The launcher hides the rules' matches by mounts: a read-only cover
	 * refuses a write with .hide_denial. */
	bool hides_by_mounts;

	/* --- exec.c, contain.c: the spawn and its descendants ----------- */
	const char *sandbox_env; /* WARD_SANDBOX=<name>; NULL: none set */
	enum ward_status_kind status;
	/* Seatbelt: the call is not contained beyond its process group. */
	bool uncontained;
	/* The kernel's audit records say what this runner refused: the call
	 * listens before the command starts (call.c, audit.c). */
	bool audit_records;
	/* An allowlist's endpoint is a loopback TCP port the command reaches
	 * itself, not the proxy's unix socket relayed by a bridge inside
	 * (call.c). */
	bool net_tcp;

	/* --- classify.c: runner failure and denial ---------------------- */
	const char *fail_prefix; /* the runner's own fatal lines */
	const char *fail_info;	 /* … except this info line */
	int fail_exit;		 /* its own failure's status (-1: any) */
	const char *denial;	 /* the denial signature ("" none) */
	const char *hide_denial; /* a hide's cover refusing (mounts) */
	const char *const *net_signatures;
	/* The network filter refuses with the denial's words: a line that
	 * is a network signature is no file denial. */
	bool net_like_denial;

	/* --- ward probe's report ---------------------------------------- */
	const char *containment;	  /* how a call's processes end */
	const char *containment_no_pidns; /* … without a pid namespace */
};

/* The rows (one file each). */
extern const struct ward_runner_ops ward_runner_none_ops;
extern const struct ward_runner_ops ward_runner_bwrap_ops;
extern const struct ward_runner_ops ward_runner_landlock_ops;
extern const struct ward_runner_ops ward_runner_seatbelt_ops;
extern const struct ward_runner_ops ward_runner_windows_acl_ops;
extern const struct ward_runner_ops ward_runner_custom_ops;

/*
 * ward_runner_ops - the operations of @runner (table.c); a value outside
 * the enum gets a row with no behaviour of its own (no dialect, no
 * binary, never chosen).
 */
const struct ward_runner_ops *ward_runner_ops(enum ward_runner runner);

/* What bwrap and the custom runner (asserted bwrap-compatible) share. */
int ward_runner_bwrap_network(struct ward_plan *p);
void ward_runner_bwrap_translate(struct ward_xlate *x);
void ward_runner_bwrap_attach_net(struct ward_strv *pre,
				  struct ward_strv *inside,
				  const struct ward_plan *p,
				  const struct ward_net_attach *net);
extern const char *const ward_runner_bwrap_status[];
/* The launcher keeper's report (landlock.c; none's keeper too). */
extern const char *const ward_runner_keeper_status[];
/* No network signature (none.c). */
extern const char *const ward_runner_no_signatures[];
extern const char *const ward_runner_bwrap_net[];
#define WARD_BWRAP_PREFIX "bwrap: "
#define WARD_BWRAP_DENIAL "Read-only file system"
/* bwrap 0.8 refuses more arguments than this (MAX_ARGS in bubblewrap.c:
 * its argv[0] excluded, what --args reads included, the command's own
 * arguments too). */
#define WARD_BWRAP_MAX_ARGS 9000

/* landlock-run's dialect (classify.c reads it for the layer in bwrap). */
#define WARD_LAUNCHER_PREFIX "landlock-run: "
#define WARD_LAUNCHER_INFO   "landlock-run: partial enforcement"
#define WARD_LAUNCHER_FAILED 125

/* What clients print when a lookup finds no network (every runner that
 * can take the network away). */
#define WARD_NET_LOOKUP                                                        \
	"Could not resolve host",		    /* curl, git (libcurl) */  \
	    "Temporary failure in name resolution", /* glibc: python, wget */  \
	    "unable to resolve host address",	    /* wget */                 \
	    "EAI_AGAIN",			    /* node, npm */            \
	    "Couldn't connect to server",	    /* curl, git */            \
	    "Failed to establish a new connection"  /* pip (urllib3) */

/*
 * The probes' process runner (probe_spawn.c): what one probe process did,
 * and the verdict from it.
 */
struct ward_probe_run {
	bool spawned;
	bool timed_out;
	int status;	/* waitpid status when spawned && !timed_out */
	char out[1024]; /* the first bytes of stdout (when captured) */
	size_t out_len;
	char err[256]; /* the first bytes of stderr */
	size_t err_len;
};

/*
 * ward_probe_spawn - run @argv (argv[0] an absolute path) as a probe:
 * stdin from /dev/null, stdout captured when @capture_out (else
 * /dev/null), stderr captured, its own process group, no descriptors
 * beyond 0–2 where the libc can say so. After ctx->timeout_ms the whole
 * group is killed (SIGKILL) and reaped. Returns 0 (the run is described
 * in @run) or -errno when the probe could not be set up at all (then
 * @why says so).
 */
int ward_probe_spawn(struct ward_probe_run *run, char *const argv[],
		     bool capture_out, const struct ward_probe_ctx *ctx,
		     char *why, size_t why_len);
/*
 * ward_probe_judge - a finished probe run as a verdict: exit 0 is usable
 * (full), the rest is unusable with the reason (timeout, status and the
 * first stderr line) in @why; a timeout sets ctx->timed_out.
 */
enum ward_verdict ward_probe_judge(struct ward_probe_ctx *ctx,
				   const struct ward_probe_run *run, char *why,
				   size_t why_len);
/* ward_probe_spawn() then ward_probe_judge() (unusable when not spawned). */
enum ward_verdict ward_probe_argv(struct ward_probe_ctx *ctx,
				  char *const argv[], bool capture_out,
				  struct ward_probe_run *run, char *why,
				  size_t why_len);
/* Write a reason into @buf (truncated: it is for people). */
void ward_probe_why(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
