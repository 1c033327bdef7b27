/*
 * ward — definitions shared inside libward (not installed).
 */
#ifndef WARD_INTERNAL_H
#define WARD_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "ward/ward.h"

/*
 * Set the thread's last-error detail (printf-style) and return @err, so a
 * failing path reads `return ward_err(-ENOENT, "…: %s", path);`.
 */
int ward_err(int err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Clear the last-error detail. */
void ward_err_clear(void);
/*
 * End the process for an error a library cannot return from (printf-style
 * message): the handler of ward_fatal_handler_set(), else "ward: MESSAGE"
 * on stderr and _exit(125). Async-signal-unsafe only in the handler.
 */
_Noreturn void ward_fatal(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/*
 * The error for an options struct of a version this libward does not know
 * (@what names the struct): WARD_EINVAL with a detail saying which
 * versions it knows and how to get one right (the _INIT macro or the
 * _options_init function).
 */
int ward_bad_version(const char *what, unsigned got, unsigned newest);

/*
 * ward_roots_compute - the computation itself (roots.c), from a policy's
 * @mode, canonical @workspace, captured @tmpdir (NULL: unset) and access
 * @rules (NULL: none), in the order ward_roots_writable() documents. The
 * caller frees *out with ward_strv_free().
 */
int ward_roots_compute(char ***out, enum ward_mode mode,
		       const char *workspace, const char *tmpdir,
		       const ward_rules *rules);

/*
 * ward_roots_tmpdir_refused - why @tmpdir (a policy's captured $TMPDIR) is
 * not a writable root under @mode workspace-write although it is set: NULL
 * when it is one (or unset, or the mode adds none), else a sentence naming
 * it, into @buf. See roots.c for the rule.
 */
const char *ward_roots_tmpdir_refused(char *buf, size_t len,
				      enum ward_mode mode, const char *tmpdir);

/*
 * A grant for a file operation is for its objects, not for a policy: the
 * canonical paths the operation resolved to when the person was asked
 * (what the prompt showed). Set on the granted policy, the fence lets a
 * mutation act only on one of them — a path that resolves elsewhere now (a
 * symlink swapped in after the question) is refused, never followed.
 * NULL (the default): no such bound. ward_policy_objects() borrows.
 */
int ward_policy_set_objects(ward_policy *policy, char *const *objects);
char *const *ward_policy_objects(const ward_policy *policy);

/*
 * ward_policy_new() for a workspace root already made canonical (@real,
 * by ward_config's resolve); @given names it in errors. Checked to be a
 * directory, not canonicalised again.
 */
int ward_policy_new_real(ward_policy **out, enum ward_mode mode,
			 const char *real, const char *given);

/*
 * The session store a policy runs for (set by ward_call): hidden from
 * confined runs like ward's state directory (protect.h). NULL: none.
 */
int ward_policy_set_store(ward_policy *policy, const char *store);
const char *ward_policy_store(const ward_policy *policy);

/*
 * The rules resolved as the runners resolve them. A runner acts on the
 * canonical path of a rule (a literal's path, a glob's literal prefix):
 * `-- ~/.ssh` where ~/.ssh is a symlink hides its target. A rule whose
 * key resolves elsewhere is an alias (key -> canonical path); the fs
 * fence matches a canonical path beneath an alias against that rule as
 * if it were the key's (rules.c).
 */
struct ward_rule_alias {
	char *key;   /* the rule's literal path or glob prefix */
	char *canon; /* where it resolves now */
};

/* The aliases of @rules (only keys that resolve elsewhere). */
int ward_rule_aliases_compute(struct ward_rule_alias **out, size_t *out_len,
			      const ward_rules *rules);
void ward_rule_aliases_free(struct ward_rule_alias *v, size_t n);
/*
 * The access the `r-`/`--` rules keyed exactly at @key give @path, a
 * canonical path beneath @canon, read as the same path beneath @key.
 */
enum ward_access ward_rules_match_key(const ward_rules *rules, const char *key,
				      const char *canon, const char *path);
/*
 * The access the policy's rules give the canonical @path the way the
 * runners apply them: lexically (ward_rules_match) and through every alias
 * of the call's facts @f (computed with WARD_FACTS_ALIASES, facts.h) whose
 * canonical path holds @path. NONE when the rules could not be resolved
 * (fail closed).
 */
struct ward_facts;
enum ward_access ward_policy_rule_access(const ward_policy *policy,
					 const struct ward_facts *f,
					 const char *path);

/* ward_session_check_policy() with the call's facts (no second scan). */
int ward_session_check_facts(const ward_session *s, const ward_policy *policy,
			     const struct ward_facts *f);

/* A growable NULL-terminated string vector (argv builder). */
struct ward_strv {
	char **v;
	size_t n;
	size_t cap;
	bool oom; /* a push failed; ward_strv_finish reports it */
};

/* Append a copy of @s. Failures are sticky (checked at finish). */
void ward_strv_push(struct ward_strv *sv, const char *s);
/* Append copies of every string of NULL-terminated @v. */
void ward_strv_push_all(struct ward_strv *sv, char *const *v);
/* Hand over the vector (never NULL on success) or -ENOMEM (freed). */
int ward_strv_finish(char ***out, struct ward_strv *sv);
/* Free a builder that will not be finished. */
void ward_strv_discard(struct ward_strv *sv);
/* Duplicate a NULL-terminated vector; NULL on ENOMEM. */
char **ward_strv_dup(char *const *v);

/*
 * Whether @text (@len bytes, need not be NUL-terminated) holds @signature,
 * case-insensitively (classify.c); false for an empty signature.
 */
bool ward_text_has_signature(const char *text, size_t len,
			     const char *signature);

/*
 * Where a call's command reaches ward's proxy when its network is an
 * allowlist: the endpoint's unix socket (bwrap: bound into the sandbox and
 * bridged by ward-bridge) and its TCP port on 127.0.0.1 (Landlock).
 */
struct ward_net_attach {
	const char *unix_path;
	unsigned port;
};

/* What one command adds to a plan (all borrowed). */
struct ward_plan_call {
	char *const *argv;		   /* the command */
	const char *cwd;		   /* NULL: the workspace root */
	const struct ward_net_attach *net; /* an allowlist's endpoint */
};

/*
 * The descriptors whoever spawns the argv holds the other end of (the
 * executor; ward confine's reader holds none: pass NULL).
 * @status: the runner's status channel (bwrap's --json-status-fd, the
 * launcher's --pid-fd with --shell-status); @report: the first descriptor
 * of the Landlock layer inside bwrap (its --pid-fd, or its --args memfd
 * and then its --pid-fd one above), or -1 when the layer does not report.
 * @kept: the spawner is the runner's keeper (it contains what the
 * command leaves and may start the runner in a pid namespace of its
 * own): the runner's .kept_opt goes after the status options.
 */
struct ward_plan_fds {
	int status;
	int report;
	bool kept;
};

/* An assembled argv: @args, when not NULL, is the Landlock layer's
 * command line for the memfd at ward_plan_fds.report (--args). */
struct ward_plan_argv {
	char **argv;
	char **args;
};

/*
 * ward_plan_assemble - the one function that makes a runner's argv from
 * the plan's typed parts (its binary, the status channel @fds names, its
 * options, the network attachment, the working directory, the Landlock
 * layer and ward-bridge inside bwrap, the command). ward confine prints it
 * with @fds NULL; the executor runs it with its descriptors. Nothing else
 * edits the vector. The caller frees out->argv and out->args.
 */
int ward_plan_assemble(struct ward_plan_argv *out, const ward_plan *plan,
		       const struct ward_plan_call *call,
		       const struct ward_plan_fds *fds);

/* ward_plan_apply() for the executor, every time it spawns (a directory
 * removed since the last call is made again). 0 or WARD_ERUNNER. */
int ward_plan_prepare(const ward_plan *plan);
/* The runner's own failure signatures (CUSTOM), or NULL. Borrowed. */
char *const *ward_plan_failure_signatures(const ward_plan *plan);
/* Landlock: the plan hides paths by mounts (landlock-run --hide,
 * --hide-ro): a write a read-only cover refuses fails with EROFS. */
bool ward_plan_mounts(const ward_plan *plan);
/* bwrap: the Landlock layer runs inside (it then reports). */
bool ward_plan_layer(const ward_plan *plan);
/* bwrap/custom: ward-bridge runs inside, before the layer. */
bool ward_plan_bridge(const ward_plan *plan);

/*
 * A plan bound to one command: what ward_provider_confine() returns and
 * the executor runs. Every fact of the confinement is the plan's; this
 * adds only the call's parts.
 */
struct ward_confined {
	const ward_plan *plan;
	ward_plan *own; /* the plan, when made for this command alone */
	char **cmd;
	char *cwd;
	struct ward_net_attach net; /* unix_path owned */
	char **argv; /* assembled without descriptors (ward_confined_argv) */
};

/* ward_plan_assemble() for a confined command. */
int ward_confined_assemble(struct ward_plan_argv *out, const ward_confined *c,
			   const struct ward_plan_fds *fds);

/*
 * ward_confined_from_plan - what ward_provider_confine() returns, from a
 * plan made beforehand: @argv confined by @plan, in @cwd (NULL: the
 * workspace root). Nothing is planned again. The caller frees *out.
 */
int ward_confined_from_plan(ward_confined **out, const ward_plan *plan,
			    char *const argv[], const char *cwd);
/* The port ward-bridge listens on inside bwrap's network namespace, and
 * where the endpoint's socket appears there. */
#define WARD_BRIDGE_PORT   3128
#define WARD_BRIDGE_SOCKET "/dev/ward-proxy.sock"
/*
 * ward_confined_from_plan_net - ward_confined_from_plan() for a plan whose
 * network is an allowlist: @net says where the call's proxy endpoint is
 * (required then; WARD_EINVAL without it; ignored otherwise).
 */
int ward_confined_from_plan_net(ward_confined **out, const ward_plan *plan,
				char *const argv[], const char *cwd,
				const struct ward_net_attach *net);
/* The proxy environment for a command whose proxy listens on
 * 127.0.0.1:@port (HTTP_PROXY … NO_PROXY, both cases), replacing any;
 * NO_PROXY lists the loopback names the allowlist (@allow less @deny)
 * does not name exactly. */
int ward_net_proxy_env(char ***envp, unsigned port, char *const *allow,
		       char *const *deny);

/* The runner a provider chose for a policy (ward_provider_choose). */
struct ward_runner_choice {
	enum ward_runner runner; /* NONE: danger-full-access */
	enum ward_enforcement enforcement;
	const char *path; /* the runner binary; borrowed from the provider */
	/*
	 * BWRAP: landlock-run, run inside bwrap with the same roots (the
	 * Landlock layer and the supervisor, defense in depth); NULL when
	 * this kernel has no usable Landlock (enforcement is then partial).
	 */
	const char *inner;
	char *const *failure_signatures; /* CUSTOM: borrowed, or NULL */
};

/*
 * ward_provider_choose - choose the runner for calls under @policy (probing
 * at most once per provider), resolve its binary and refuse one that lies
 * where a confined run of @policy could have written it (the workspace
 * and its writable @roots, the call's facts). Thread-safe.
 * Errors as ward_provider_confine().
 */
int ward_provider_choose(struct ward_runner_choice *out,
			 ward_provider *provider, const ward_policy *policy,
			 char *const *roots);

#endif
