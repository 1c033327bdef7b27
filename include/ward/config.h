/*
 * ward — the configuration (ward.yml), read with libyaml.
 *
 * Layers, lowest first; a higher layer overrides a lower one key by key,
 * except `access`, whose entries accumulate (user, project, --config,
 * flags) and `presets`, merged by name:
 *
 *   built-in defaults
 *   < user file      $XDG_CONFIG_HOME/ward/config.yml
 *                    (default ~/.config/ward/config.yml)
 *   < project file   <workspace>/.ward/config.yml — may only NARROW
 *   < --config FILE
 *   < flags          (--mode, --workspace, --access)
 *
 * A cloned repository must not widen its own sandbox: the project file is
 * a ceiling. Only `r-`/`--` access entries, a mode no wider than the lower
 * layers give, `approval: ask` and `protect_git: true` take effect there;
 * any value that would widen is ignored and reported once as a warning
 * (ward_config_ignored) that says where to put it instead — never a
 * lockout.
 *
 * Keys: mode, workspace, runners, runner_command,
 * runner_failure_signatures, probe_timeout_ms, access, approval, presets,
 * protect_git, unprotect, allow_unix, keep_new_repos and
 * allow_home_workspace (user file only), quarantine_quota_mb and
 * quarantine_retention_days (not in a project file), env, network,
 * allow_domains, deny_domains. Unknown keys, wrong types,
 * aliases, tags and several YAML documents in one file are errors. Every
 * error names the file, the line and the key ("FILE:LINE: KEY: message").
 * See ward-config(5).
 *
 * Loading collects every error instead of stopping at the first one, so
 * `ward config check` can list them all; the accessors below are only
 * meaningful after a successful ward_config_load() / ward_config_resolve().
 */
#ifndef WARD_CONFIG_H
#define WARD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "common.h"
#include "mode.h"
#include "network.h"
#include "presets.h"
#include "provider.h"
#include "rules.h"
#include "runner.h"
#include "session.h"

WARD_BEGIN_DECL

typedef struct ward_config ward_config;

/** The largest configuration file accepted, in bytes. */
#define WARD_CONFIG_MAX_BYTES (1024 * 1024)

/** Where a setting can come from, lowest precedence first. */
enum ward_config_layer {
	WARD_CONFIG_LAYER_DEFAULT = 0, /* built in */
	WARD_CONFIG_LAYER_USER,	       /* the user's own file */
	WARD_CONFIG_LAYER_PROJECT,     /* <workspace>/.ward/config.yml */
	WARD_CONFIG_LAYER_EXPLICIT,    /* --config FILE */
	WARD_CONFIG_LAYER_FLAGS,       /* command-line flags / API */
};

/** "default", "user", "project", "config", "flag". Static storage. */
WARD_EXTERN const char *ward_config_layer_name(enum ward_config_layer layer);

/** Where a value (or an error) came from. */
struct ward_config_origin {
	enum ward_config_layer layer;
	const char *file; /* NULL for the defaults and flags; owned by config */
	unsigned line;	  /* 1-based; 0: none */
};

#define WARD_CONFIG_OPTIONS_VERSION 5

/** What ward_config_load() reads, and the flag layer. */
struct ward_config_options {
	unsigned version;
	/**
	 * The user file. NULL: $XDG_CONFIG_HOME/ward/config.yml, or
	 * ~/.config/ward/config.yml when XDG_CONFIG_HOME is unset, empty or
	 * relative. "": no user file. A missing user file is not an error.
	 */
	const char *user_file;
	/** --config FILE (it must exist), or NULL. */
	const char *config_file;
	/** Do not read <workspace>/.ward/config.yml. */
	bool no_project_file;
	/** Flag layer: a mode name, or NULL when not given. */
	const char *mode;
	/** Flag layer: the workspace (relative: to the cwd), or NULL. */
	const char *workspace;
	/** Flag layer: access entries (--access), in order. */
	const char *const *access;
	size_t access_len;
	/**
	 * Expansion context for `~/` and `{{ env.NAME }}` (its workspace
	 * field is ignored: the resolved workspace is used). NULL: $HOME and
	 * getenv(). Borrowed for the duration of the call.
	 */
	const struct ward_rules_env *env;
	/* --- version 2 --- */
	/** Flag layer: variable names (or patterns) to keep in a command's
	 * environment although a drop pattern matches (--env-keep). */
	const char *const *env_keep;
	size_t env_keep_len;
	/* --- version 3 --- */
	/** Flag layer: unix sockets (absolute paths) a confined command may
	 * reach (--allow-unix), added to the user file's allow_unix. */
	const char *const *allow_unix;
	size_t allow_unix_len;
	/* --- version 4 --- */
	/** Flag layer: "off" or "on" (--network), or NULL. */
	const char *network;
	/** Flag layer: allowed domain patterns (--allow-domain), in order;
	 * they make the network an allowlist. */
	const char *const *allow_domains;
	size_t allow_domains_len;
	/* --- version 5 --- */
	/** Flag layer: --keep-new-repos (ward_policy_set_keep_new_repos). */
	bool keep_new_repos;
	/** Flag layer: --allow-home-workspace
	 *  (ward_policy_set_allow_home_workspace). */
	bool allow_home_workspace;
};

#define WARD_CONFIG_OPTIONS_INIT                                               \
	{                                                                      \
		WARD_CONFIG_OPTIONS_VERSION, NULL, NULL, false, NULL, NULL,    \
		    NULL, 0, NULL, NULL, 0, NULL, 0, NULL, NULL, 0, false,     \
		    false                                                      \
	}

/**
 * ward_config_options_init - set @opts to the defaults of @version (1 to
 * WARD_CONFIG_OPTIONS_VERSION; only the fields that version has are
 * written). Returns 0 or WARD_EINVAL.
 */
WARD_EXTERN int ward_config_options_init(struct ward_config_options *opts,
					 unsigned version);

/** ward_config_new - an empty configuration. Free with ward_config_free(). */
WARD_EXTERN int ward_config_new(ward_config **out);
/** ward_config_free - free a configuration. Accepts NULL. */
WARD_EXTERN void ward_config_free(ward_config *cfg);

/**
 * ward_config_load - read every layer and resolve them: the user file,
 * --config, the flags, then the project file of the resulting workspace,
 * then ward_config_resolve(). @opts may be NULL (defaults). May be called
 * once per configuration.
 *
 * Returns 0, or WARD_EINVAL when any layer is invalid: then every error is
 * listed by ward_config_error() and the first one is the detail of
 * ward_error_last(). -ENOMEM when out of memory.
 */
WARD_EXTERN int ward_config_load(ward_config *cfg,
				 const struct ward_config_options *opts);

/**
 * ward_config_add_string - parse one layer's document from memory (@len
 * bytes; need not be NUL-terminated). @name is the file name used in
 * messages and origins. Layers USER, PROJECT and EXPLICIT only, each at most
 * once. Errors are collected; returns 0 or WARD_EINVAL (the detail is the
 * first new error), or -ENOMEM.
 */
WARD_EXTERN int ward_config_add_string(ward_config *cfg,
				       enum ward_config_layer layer,
				       const char *name, const char *text,
				       size_t len);

/**
 * ward_config_add_file - read @path (a regular file, at most
 * WARD_CONFIG_MAX_BYTES; a FIFO or device is refused without blocking) and
 * parse it as @layer. With @optional a missing file is not an error (0,
 * nothing added). Errors as ward_config_add_string().
 */
WARD_EXTERN int ward_config_add_file(ward_config *cfg,
				     enum ward_config_layer layer,
				     const char *path, bool optional);

/**
 * ward_config_resolve - merge the layers added so far with the flag layer
 * of @opts (may be NULL): pick each effective value, check that the
 * project layer only narrows, canonicalise the workspace and load the
 * access entries into rules (relative paths against that workspace).
 * Returns 0 or WARD_EINVAL (every error listed), or -ENOMEM.
 */
WARD_EXTERN int ward_config_resolve(ward_config *cfg,
				    const struct ward_config_options *opts);

/** The number of errors collected so far. */
WARD_EXTERN size_t ward_config_error_count(const ward_config *cfg);
/**
 * ward_config_error - error @i ("FILE:LINE: KEY: message"), or NULL past
 * the end. @origin (may be NULL) receives where it was found. Owned by @cfg.
 */
WARD_EXTERN const char *ward_config_error(const ward_config *cfg, size_t i,
					  struct ward_config_origin *origin);
/** The number of warnings (valid but probably not what was meant). */
WARD_EXTERN size_t ward_config_warning_count(const ward_config *cfg);
/** ward_config_warning - warning @i or NULL. Owned by @cfg. */
WARD_EXTERN const char *ward_config_warning(const ward_config *cfg, size_t i);
/**
 * The warnings that name a project file's value which would have widened
 * the sandbox and was ignored ("FILE:LINE: KEY: ignored: …"); each is
 * also one of the warnings above. Front ends show these before a call
 * runs: the person should know the repository asked for more.
 */
WARD_EXTERN size_t ward_config_ignored_count(const ward_config *cfg);
/** ward_config_ignored - ignored value @i's warning, or NULL. Owned. */
WARD_EXTERN const char *ward_config_ignored(const ward_config *cfg, size_t i);

/**
 * ward_config_file - the file read for @layer (USER, PROJECT, EXPLICIT), or
 * NULL when none was. Owned by @cfg.
 */
WARD_EXTERN const char *ward_config_file(const ward_config *cfg,
					 enum ward_config_layer layer);
/**
 * ward_config_default_user_file - the user file path used when
 * ward_config_options.user_file is NULL, into @buf. NULL when neither
 * XDG_CONFIG_HOME nor HOME gives one.
 */
WARD_EXTERN const char *ward_config_default_user_file(char *buf, size_t len);

/*
 * The effective values. Each accessor writes where the value came from into
 * @from (may be NULL).
 */

/** The default mode (built in: read-only). */
WARD_EXTERN enum ward_mode ward_config_mode(const ward_config *cfg,
					    struct ward_config_origin *from);
/**
 * ward_config_network - the network for a call under @mode: `on` or `off`
 * as the highest layer that says anything about the network sets it (the
 * flags first: --network, then --allow-domain; a file's `network`, then
 * its `allow_domains`), an allowlist when that layer gives allowed domains
 * instead, and the mode's default (ward_network_default) when no layer
 * does. A project file may only narrow: its `network: on` and domains no
 * lower layer allows are ignored with a warning; its `network: off` and its
 * narrower `allow_domains` (the lower layers' domains it keeps) apply.
 * *@set (may be NULL) says whether a layer set it.
 */
WARD_EXTERN enum ward_network
ward_config_network(const ward_config *cfg, enum ward_mode mode, bool *set,
		    struct ward_config_origin *from);
/** The allowed domain patterns in force: NULL-terminated, owned by @cfg. */
WARD_EXTERN char *const *ward_config_allow_domains(const ward_config *cfg);
/** The denied domain patterns (every layer's, the project file's too). */
WARD_EXTERN char *const *ward_config_deny_domains(const ward_config *cfg);

/** The canonical workspace root (built in: the current directory). */
WARD_EXTERN const char *ward_config_workspace(const ward_config *cfg,
					      struct ward_config_origin *from);
/**
 * ward_config_runners - the runner chain override: its length, with *out
 * pointing into @cfg; 0 and *out NULL when the platform's chain applies.
 */
WARD_EXTERN size_t ward_config_runners(const enum ward_runner **out,
				       const ward_config *cfg,
				       struct ward_config_origin *from);
/** The operator-asserted runner command, or NULL. */
WARD_EXTERN const char *
ward_config_runner_command(const ward_config *cfg,
			   struct ward_config_origin *from);
/**
 * The custom runner's failure signatures (stderr text meaning the runner
 * itself failed): a NULL-terminated vector, possibly empty, owned by @cfg.
 */
WARD_EXTERN char *const *
ward_config_runner_failure_signatures(const ward_config *cfg,
				      struct ward_config_origin *from);
/** The probe timeout in milliseconds; 0: the provider's default. */
WARD_EXTERN unsigned
ward_config_probe_timeout_ms(const ward_config *cfg,
			     struct ward_config_origin *from);
/** The default approval policy (built in: ask). */
WARD_EXTERN enum ward_approval_policy
ward_config_approval(const ward_config *cfg, struct ward_config_origin *from);
/**
 * Whether .git/hooks, .git/config and .ward/ stay read-only inside the
 * workspace under workspace-write (built in: true; only the user file may
 * turn it off).
 */
WARD_EXTERN bool ward_config_protect_git(const ward_config *cfg,
					 struct ward_config_origin *from);

/**
 * keep_new_repos: whether a git repository a command makes under
 * workspace-write stays (built in: false, it is taken to the quarantine;
 * true only in the user file or --keep-new-repos).
 */
WARD_EXTERN bool ward_config_keep_new_repos(const ward_config *cfg,
					    struct ward_config_origin *from);
/**
 * allow_home_workspace: whether a workspace of `/`, $HOME or one holding
 * it is accepted under workspace-write (built in: false; true only in the
 * user file or --allow-home-workspace).
 */
WARD_EXTERN bool
ward_config_allow_home_workspace(const ward_config *cfg,
				 struct ward_config_origin *from);
/** The quarantine's quota (MiB) and retention (days), defaults applied. */
WARD_EXTERN unsigned
ward_config_quarantine_quota_mb(const ward_config *cfg,
				struct ward_config_origin *from);
WARD_EXTERN unsigned
ward_config_quarantine_days(const ward_config *cfg,
			    struct ward_config_origin *from);

/**
 * ward_config_unprotect - the protected paths the user's own file releases
 * (key `unprotect`; ward_policy_set_unprotected()): absolute paths,
 * NULL-terminated, possibly empty, owned by @cfg. A project file's key
 * is ignored with a warning (ward_config_ignored); --config that sets it
 * is a load error.
 */
WARD_EXTERN char *const *ward_config_unprotect(const ward_config *cfg,
					       struct ward_config_origin *from);
/**
 * ward_config_allow_unix - the unix sockets the user's own file lets
 * confined commands reach (key `allow_unix`, then the flag layer's
 * --allow-unix; ward_policy_set_allow_unix()):
 * absolute paths, NULL-terminated, possibly empty, owned by @cfg. A
 * project file's key is ignored with a warning; --config that sets it is a
 * load error.
 */
WARD_EXTERN char *const *
ward_config_allow_unix(const ward_config *cfg, struct ward_config_origin *from);
/**
 * ward_config_env_drop - the patterns of variable names dropped from a
 * command's environment (env.h): the built-in ones, then each layer's
 * `env.drop`. Owned by @cfg (the built-in ones before a load).
 */
WARD_EXTERN char *const *ward_config_env_drop(const ward_config *cfg,
					      struct ward_config_origin *from);
/**
 * ward_config_env_keep - the patterns kept although a drop pattern
 * matches: `env.keep` of the user file and --config, then --env-keep.
 * Owned by @cfg; possibly empty.
 */
WARD_EXTERN char *const *ward_config_env_keep(const ward_config *cfg);
/**
 * ward_config_env_scrub - ward_env_scrub() of @envp (NULL: the process
 * environment) with the configuration's patterns. ward_call applies it to
 * every command it runs.
 */
WARD_EXTERN int ward_config_env_scrub(char ***out, char ***dropped,
				      const ward_config *cfg,
				      char *const *envp);

/** One configured preset: a named (mode, approval) pair. */
struct ward_config_preset {
	const char *name; /* owned by the configuration */
	enum ward_mode mode;
	enum ward_approval_policy approval;
	struct ward_config_origin origin;
};

/** The number of configured presets (user file, then --config). */
WARD_EXTERN size_t ward_config_preset_count(const ward_config *cfg);
/** ward_config_preset - preset @i. 0 or -ERANGE. */
WARD_EXTERN int ward_config_preset(struct ward_config_preset *out,
				   const ward_config *cfg, size_t i);

/**
 * ward_config_presets - the preset table: the built-in presets with the
 * configured ones set on top (a built-in name is redefined in place). Owned
 * by @cfg; never NULL after a successful load.
 */
WARD_EXTERN const ward_presets *ward_config_presets(const ward_config *cfg);

/**
 * ward_config_rules - the access rules of every layer, in layer order, each
 * with its origin (file and line; NULL file: --access). Owned by @cfg, which
 * must outlive every policy they are attached to. Never NULL after a
 * successful load (possibly empty).
 */
WARD_EXTERN const ward_rules *ward_config_rules(const ward_config *cfg);

/**
 * ward_config_policy_new - the policy the configuration describes, in
 * @mode (ward_config_mode() for the configured one): its workspace, access
 * rules, git protection and its exceptions, the unix sockets it allows
 * and its network for that mode (when configured; otherwise the mode's
 * default). The policy borrows the rules: @cfg must outlive it. The
 * caller frees *out with ward_policy_free(). WARD_EINVAL when no
 * workspace is configured.
 */
WARD_EXTERN int ward_config_policy_new(ward_policy **out,
				       const ward_config *cfg,
				       enum ward_mode mode);

/**
 * ward_config_provider_options - fill the chain override, runner_command
 * and probe_timeout_ms of @opts (other fields untouched). The pointers
 * borrow from @cfg.
 */
WARD_EXTERN void
ward_config_provider_options(struct ward_provider_options *opts,
			     const ward_config *cfg);

/**
 * ward_config_check_confine - WARD_EINVAL when the configuration cannot be
 * used to confine: access rules together with runner_command (the custom
 * runner's dialect is unknown, the rules would silently do nothing). The
 * detail names where both came from. 0 otherwise.
 */
WARD_EXTERN int ward_config_check_confine(const ward_config *cfg);

/**
 * ward_config_provider_new - the provider the configuration asks for: its
 * runner chain, runner command and probe timeout, refused
 * (ward_config_check_confine) when it cannot confine as configured; with
 * @force other than WARD_RUNNER_NONE, that runner only
 * (ward_provider_force). The caller frees *out with ward_provider_free().
 */
WARD_EXTERN int ward_config_provider_new(ward_provider **out,
					 const ward_config *cfg,
					 enum ward_runner force);

WARD_END_DECL

#endif
