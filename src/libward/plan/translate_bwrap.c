/*
 * ward — the per-runner rule plan for bwrap (and a custom bwrap-compatible
 * runner): pins, read-only binds and hiding mounts after the writable
 * binds, or the launcher's mounts when a Landlock layer runs inside
 * (see translate.c).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libward/internal.h"
#include "libward/policy/protect.h"
#include "translate_impl.h"
#include "translate_internal.h"
#include "util/util.h"

/* --- bwrap -------------------------------------------------------------- */

static bool bwrap_private(const struct ward_xlate *p, const char *path)
{
	if (util_path_within(path, "/proc") || util_path_within(path, "/dev"))
		return true;
	/* In read-only /tmp is a private tmpfs (the workspace bound back). */
	return p->mode == WARD_MODE_READ_ONLY &&
	       util_path_within(path, "/tmp") &&
	       !util_path_within(path, ward_policy_workspace(p->policy));
}

/* The outermost writable root @path lies strictly beneath, or NULL. */
static const char *outer_root(const struct ward_xlate *p, const char *path)
{
	const char *best = NULL;

	for (size_t i = 0; p->roots[i]; i++) {
		const char *r = p->roots[i];

		if (util_path_within(path, r) && strcmp(path, r) != 0 &&
		    (!best || strlen(r) < strlen(best)))
			best = r;
	}
	return best;
}

/*
 * Pins: every directory between a target and the outermost writable root
 * above it is bound onto itself, which makes it a mount point. A mount
 * point cannot be renamed or removed (EBUSY), so a command cannot move
 * `.git` aside and build a new one with its own hooks around the read-only
 * mounts, nor move a hidden file's directory aside and put a file of its
 * own where the hidden one was. Directories inside a kept target need no
 * pin. The pins of @kept, sorted (a parent before its children) and
 * without duplicates, into @out (the caller's).
 */
static void collect_pins(struct ward_xlate *p, struct target *const *kept,
			 size_t nk, struct ward_strv *out)
{
	struct ward_strv pins = {0};
	char buf[PATH_MAX];
	const char **sorted, *last = NULL, *last_root = NULL;
	size_t last_len = 0;

	if (!nk)
		return;
	/* The kept paths sorted, to ask "is this directory one?" by binary
	 * search (hundreds of matches: no quadratic scan). */
	sorted = malloc(nk * sizeof(*sorted));
	if (!sorted) {
		p->oom = true;
		return;
	}
	for (size_t k = 0; k < nk; k++)
		sorted[k] = kept[k]->path;
	ward_xl_sort(sorted, nk, sizeof(*sorted), ward_xl_str_cmp);
	for (size_t k = 0; k < nk; k++) {
		const char *w = outer_root(p, kept[k]->path);
		const char *slash = strrchr(kept[k]->path, '/');
		size_t wl, cut = SIZE_MAX;
		char *s;

		if (!w)
			continue;
		/* The pins depend on the parent and its root only: a run of
		 * siblings (a thousand files of one directory) asks once. */
		if (slash && last && last_root == w &&
		    (size_t)(slash - kept[k]->path) == last_len &&
		    memcmp(kept[k]->path, last, last_len) == 0)
			continue;
		last = kept[k]->path;
		last_len = slash ? (size_t)(slash - last) : 0;
		last_root = w;
		wl = strlen(w);
		/* The outermost parent that is itself kept (its length):
		 * it and what lies inside it need no pin. */
		snprintf(buf, sizeof(buf), "%s", kept[k]->path);
		while ((s = strrchr(buf, '/')) != NULL && s != buf) {
			const char *key = buf;

			*s = '\0';
			if (bsearch(&key, sorted, nk, sizeof(*sorted),
				    ward_xl_str_cmp))
				cut = (size_t)(s - buf);
		}
		/* The parents up to the outermost root, exclusive. */
		snprintf(buf, sizeof(buf), "%s", kept[k]->path);
		for (s = strrchr(buf, '/'); s && (size_t)(s - buf) > wl;
		     s = strrchr(buf, '/')) {
			*s = '\0';
			if (ward_xl_is_root(p, buf))
				break;
			if ((size_t)(s - buf) < cut)
				ward_strv_push(&pins, buf);
		}
	}
	free(sorted);
	if (pins.oom) {
		ward_strv_discard(&pins);
		p->oom = true;
		return;
	}
	if (pins.n)
		ward_xl_sort(pins.v, pins.n, sizeof(*pins.v), ward_xl_str_cmp);
	for (size_t i = 0; i < pins.n; i++) {
		if (i && strcmp(pins.v[i], pins.v[i - 1]) == 0)
			continue;
		ward_strv_push(out, pins.v[i]);
	}
	ward_strv_discard(&pins);
}

/* bwrap's pins: `--bind A A` per directory (see collect_pins). */
static void bwrap_pins(struct ward_xlate *p, struct target **kept, size_t nk)
{
	struct ward_strv pins = {0};

	collect_pins(p, kept, nk, &pins);
	for (size_t i = 0; i < pins.n; i++) {
		ward_strv_push(&p->bw, "--bind");
		ward_strv_push(&p->bw, pins.v[i]);
		ward_strv_push(&p->bw, pins.v[i]);
		ward_xl_linef(
		    &p->desc,
		    "--bind %s %s  (pins a parent of a read-only or hidden "
		    "path: it cannot be renamed away)",
		    pins.v[i], pins.v[i]);
	}
	if (pins.oom)
		p->oom = true;
	ward_strv_discard(&pins);
}

/* "--hide P" or "--hide-ro P" for the launcher, with its description. */
void ward_xl_push_hide(struct ward_xlate *p, const struct target *t,
		       enum ward_access access)
{
	char why[PATH_MAX + 256];
	const char *opt = access == WARD_ACCESS_NONE ? "--hide" : "--hide-ro";

	ward_strv_push(&p->ll_hide, opt);
	ward_strv_push(&p->ll_hide, t->path);
	ward_xl_linef(&p->desc, "%s %s  (%s)", opt, t->path,
		      ward_xl_target_why(why, sizeof(why), p, t));
}

/*
 * The launcher's mounts for @v (matches of the rules inside the writable
 * roots): the pins of their parents first (`--pin D`, outermost first:
 * see collect_pins), then the read-only binds (`--hide-ro P`: a hide inside
 * one lands on the copy), then the hides (`--hide P`). The Landlock runner
 * and the Landlock layer inside bwrap use the same list.
 */
void ward_xl_launcher_mounts(struct ward_xlate *p, struct target **v, size_t n)
{
	struct ward_strv pins = {0};

	collect_pins(p, v, n, &pins);
	for (size_t i = 0; i < pins.n; i++) {
		ward_strv_push(&p->ll_hide, "--pin");
		ward_strv_push(&p->ll_hide, pins.v[i]);
		ward_xl_linef(
		    &p->desc,
		    "--pin %s  (a parent of a read-only or hidden path, "
		    "bound onto itself: it cannot be renamed away)",
		    pins.v[i]);
	}
	if (pins.oom)
		p->oom = true;
	ward_strv_discard(&pins);
	for (size_t k = 0; k < n; k++) {
		if (v[k]->access == WARD_ACCESS_RO)
			ward_xl_push_hide(p, v[k], WARD_ACCESS_RO);
	}
	for (size_t k = 0; k < n; k++) {
		if (v[k]->access == WARD_ACCESS_NONE)
			ward_xl_push_hide(p, v[k], WARD_ACCESS_NONE);
	}
}

void ward_bwrap_push_proc(struct ward_strv *sv)
{
	static const char *const cover[] = {
	    "/proc/sys",
	    "/proc/sysrq-trigger",
	    "/proc/irq",
	    "/proc/bus",
	};

	ward_strv_push(sv, "--proc");
	ward_strv_push(sv, "/proc");
	/*
	 * bwrap covers these itself only when access(W_OK) says it may write
	 * them, and on a sysctl directory that always answers EACCES: the
	 * sysctls stay writable to a command that keeps kernel uid 0 (any
	 * root caller), which the sysctl code trusts without a capability —
	 * kernel.core_pattern alone is a host-root escape. So they are bound
	 * read-only here whatever bwrap decides ("-try": a kernel without
	 * SysRq has no /proc/sysrq-trigger).
	 */
	for (size_t i = 0; i < sizeof(cover) / sizeof(cover[0]); i++) {
		ward_strv_push(sv, "--ro-bind-try");
		ward_strv_push(sv, cover[i]);
		ward_strv_push(sv, cover[i]);
	}
}

/*
 * A read-only bind of @path is recursive and takes the host's tree: when
 * @path holds /dev or /proc (only "/" does, inside a writable root of "/")
 * it would cover bwrap's private ones with the host's (the host's
 * processes visible, /dev/null not writable). Mount them again on top.
 */
static void bwrap_private_again(struct ward_xlate *p, const char *path)
{
	if (util_path_within("/dev", path)) {
		ward_strv_push(&p->bw, "--dev");
		ward_strv_push(&p->bw, "/dev");
		ward_xl_linef(&p->desc,
			      "--dev /dev  (the private /dev again, over the "
			      "read-only %s)",
			      path);
	}
	if (util_path_within("/proc", path)) {
		ward_bwrap_push_proc(&p->bw);
		ward_xl_linef(&p->desc,
			      "--proc /proc  (the private /proc again, over "
			      "the read-only %s)",
			      path);
	}
}

/*
 * A read-only @path outside every writable root that contains writable
 * roots (`r- /`, `r- /var` around a workspace in /var/tmp): outside the
 * roots everything is read-only already, so only the roots inside it are
 * bound read-only (the outermost ones; what lies inside them follows). A
 * bind of @path itself would also lay the host's tree over the private
 * /dev, /proc and /tmp.
 */
static void bwrap_ro_roots(struct ward_xlate *p, const char *path,
			   const char *why)
{
	for (size_t i = 0; p->roots[i]; i++) {
		const char *r = p->roots[i];
		bool covered = false;

		if (!util_path_within(r, path))
			continue;
		for (size_t j = 0; p->roots[j] && !covered; j++)
			covered = j != i && util_path_within(r, p->roots[j]) &&
				  (strcmp(r, p->roots[j]) != 0 || j < i);
		if (covered)
			continue;
		ward_strv_push(&p->bw, "--ro-bind");
		ward_strv_push(&p->bw, r);
		ward_strv_push(&p->bw, r);
		ward_xl_linef(
		    &p->desc,
		    "--ro-bind %s %s  (%s: the writable root lies inside %s, "
		    "which is read-only already outside the roots)",
		    r, r, why, path);
	}
}

/*
 * Whether @t, outside the writable roots, is a hidden path the Landlock
 * layer inside bwrap can cover instead of bwrap: not one that holds a
 * writable root or the workspace — covering those hides the command's
 * own directory, which bwrap reports as its chdir failing (a denial of
 * the rule) and which must stay so.
 */
static bool hide_outside(const struct ward_xlate *p, const struct target *t)
{
	return t->access == WARD_ACCESS_NONE &&
	       !ward_xl_overlapping_root(p, t->path) &&
	       !util_path_within(ward_policy_workspace(p->policy), t->path);
}

void ward_xl_plan_bwrap(struct ward_xlate *p)
{
	struct target **kept = NULL, **inner = NULL;
	size_t nk = 0, ni = 0, budget = ward_xl_limits.max_targets, dropped = 0;
	char why[PATH_MAX + 256];
	const char *r = ward_xl_runner_label(p);
	/*
	 * The rules' matches inside the writable roots, and the hidden ones
	 * outside them, go to the Landlock layer inside bwrap when there is
	 * one and it can mount: one mount namespace and one mount call per
	 * match there, where bwrap re-reads its whole mount table for every
	 * one of its own mounts (1.8 s for 1,000 hidden files, and more than
	 * 4,096 were refused). The covers are the same (hide.h: /dev/null or
	 * an empty tmpfs, read-only, nodev, nosuid, noexec), and outside the
	 * roots no pin is needed (nothing there can be renamed). Protected
	 * paths, the read-only rules outside the roots (few: the roots they
	 * hold, bwrap_ro_roots) and the hidden paths that hold a root or the
	 * workspace (hide_outside) stay in bwrap's profile, and only those
	 * count against its budget. (Asked only when there is such a match:
	 * ward_xl_can_mount() starts a child once per process.)
	 */
	int to_inner = p->inner_hides ? -1 : 0;

	for (size_t i = 0; i < p->nt; i++) {
		struct target *t = &p->t[i];

		if (t->src != SRC_RULE || t->exists || p->warned[t->idx] ||
		    !ward_xl_within_any_root(p, t->path))
			continue;
		p->warned[t->idx] = true;
		ward_xl_linef(
		    &p->warn,
		    "%s: %s: %s does not exist at confine time, so %s cannot "
		    "keep a command from creating it inside the writable "
		    "root; ward's file operations (the fs fence) still apply "
		    "the rule",
		    r, ward_xl_rule_name(why, sizeof(why), p, t->idx), t->path,
		    r);
	}
	ward_xl_warn_globs(p, false, false);
	ward_xl_reduce_targets(p);
	if (p->oom)
		return;
	kept = calloc(p->nt ? p->nt : 1, sizeof(*kept));
	inner = calloc(p->nt ? p->nt : 1, sizeof(*inner));
	if (!kept || !inner) {
		free(kept);
		free(inner);
		p->oom = true;
		return;
	}
	for (size_t i = 0; i < p->nt; i++) {
		struct target *t = &p->t[i];

		ward_xl_target_why(why, sizeof(why), p, t);
		if (t->access == WARD_ACCESS_RO &&
		    !ward_xl_overlapping_root(p, t->path)) {
			/* Protected paths outside the roots: nothing to say. */
			if (t->src != SRC_PROTECT)
				ward_xl_linef(
				    &p->desc,
				    "%s: outside every writable root, already "
				    "read-only  (%s)",
				    t->path, why);
			continue;
		}
		if (t->src == SRC_PROTECT &&
		    (p->prot[t->idx].flags & WARD_PROTECT_LINK)) {
			ward_xl_linef(
			    &p->desc,
			    "%s: a symbolic link: a mount would follow it, "
			    "so bwrap keeps its target only; ward run checks "
			    "the link after the run  (%s)",
			    t->path, why);
			continue;
		}
		if (!t->exists) {
			if (t->src == SRC_PROTECT &&
			    p->prot[t->idx].kind == WARD_PROTECT_HOME &&
			    ward_xl_within_any_root(p, t->path))
				ward_xl_linef(
				    &p->desc,
				    "%s: created (mode 0700) at confine time, "
				    "then bound read-only  (%s)",
				    t->path, why);
			else if (t->src == SRC_PROTECT &&
				 p->prot[t->idx].kind != WARD_PROTECT_HOME &&
				 ward_xl_within_any_root(p, t->path))
				ward_xl_linef(
				    &p->desc,
				    "%s: does not exist; bwrap cannot bind a "
				    "missing path without creating it, so ward "
				    "run's guard moves it away if a command "
				    "creates it  (%s)",
				    t->path, why);
			else
				ward_xl_linef(
				    &p->desc,
				    "%s: does not exist, nothing to mount  "
				    "(%s)",
				    t->path, why);
			continue;
		}
		if (bwrap_private(p, t->path)) {
			ward_xl_linef(
			    &p->desc,
			    "%s: private inside the sandbox already  (%s)",
			    t->path, why);
			continue;
		}
		if (to_inner && t->src != SRC_PROTECT &&
		    (ward_xl_within_any_root(p, t->path) ||
		     hide_outside(p, t)) &&
		    (to_inner > 0 ||
		     (to_inner = ward_xl_can_mount() ? 1 : 0) > 0)) {
			inner[ni++] = t;
			continue;
		}
		if (t->src != SRC_PROTECT && budget == 0) {
			dropped++;
			continue;
		}
		if (t->src != SRC_PROTECT)
			budget--;
		kept[nk++] = t;
	}
	if (dropped)
		ward_xl_refuse(
		    p,
		    "%s: the rules name more than %zu paths to mount (%zu "
		    "more): ward refuses to run rather than leave them "
		    "uncovered; narrow the rules (a directory instead of "
		    "its files)",
		    r, ward_xl_limits.max_targets, dropped);
	bwrap_pins(p, kept, nk);
	for (size_t k = 0; k < nk; k++) {
		struct target *t = kept[k];

		if (t->access != WARD_ACCESS_RO)
			continue;
		ward_xl_target_why(why, sizeof(why), p, t);
		if (!ward_xl_within_any_root(p, t->path)) {
			bwrap_ro_roots(p, t->path, why);
			continue;
		}
		ward_strv_push(&p->bw, "--ro-bind");
		ward_strv_push(&p->bw, t->path);
		ward_strv_push(&p->bw, t->path);
		ward_xl_linef(&p->desc, "--ro-bind %s %s  (%s)", t->path,
			      t->path, why);
		bwrap_private_again(p, t->path);
	}
	for (size_t k = 0; k < nk; k++) {
		struct target *t = kept[k];

		if (t->access != WARD_ACCESS_NONE)
			continue;
		ward_xl_target_why(why, sizeof(why), p, t);
		if (t->is_dir) {
			/* Hidden, not just read-only: an empty, read-only
			 * tmpfs takes the directory's place. */
			ward_strv_push(&p->bw, "--tmpfs");
			ward_strv_push(&p->bw, t->path);
			ward_strv_push(&p->bw, "--remount-ro");
			ward_strv_push(&p->bw, t->path);
			ward_xl_linef(&p->desc,
				      "--tmpfs %s --remount-ro %s  (%s)",
				      t->path, t->path, why);
		} else {
			/* /dev/null on a nodev mount: neither readable nor
			 * writable (EACCES). */
			ward_strv_push(&p->bw, "--ro-bind");
			ward_strv_push(&p->bw, "/dev/null");
			ward_strv_push(&p->bw, t->path);
			ward_xl_linef(&p->desc, "--ro-bind /dev/null %s  (%s)",
				      t->path, why);
		}
	}
	/* The Landlock layer's (landlock-run --pin/--hide-ro/--hide). */
	ward_xl_launcher_mounts(p, inner, ni);
	free(kept);
	free(inner);
}
