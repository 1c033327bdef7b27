/*
 * ward — the per-runner rule plan for Seatbelt: deny rules in SBPL after the
 * allows, and the description (see translate.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libward/internal.h"
#include "libward/policy/glob.h"
#include "libward/policy/protect.h"
#include "translate_impl.h"
#include "translate_internal.h"
#include "util/util.h"

/* --- seatbelt ----------------------------------------------------------- */

/* An SBPL string literal; a control character cannot be expressed. */
static int sbpl_string(FILE *f, const char *s)
{
	for (const unsigned char *q = (const unsigned char *)s; *q; q++) {
		if (*q < 0x20 || *q == 0x7f)
			return ward_err(WARD_EINVAL,
					"seatbelt profile: path with a control "
					"character cannot be expressed: %s",
					s);
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
	return 0;
}

/*
 * The regex of glob rule @info against canonical paths: Seatbelt sees real
 * paths (/private/tmp for /tmp on macOS), so a literal prefix that
 * resolves elsewhere is replaced by its canonical form and the glob
 * translated again. *out is malloc'd.
 */
static int seatbelt_regex(char **out, const struct ward_rule_info *info)
{
	const char *rest = ward_xl_pattern_rest(info), *why = NULL;
	char *canon = util_path_canon(info->literal_prefix), *glob = NULL;
	unsigned char *lit = NULL;
	size_t cl, rl, at;
	int err;

	if (!canon)
		return -ENOMEM;
	if (strcmp(canon, info->literal_prefix) == 0) {
		free(canon);
		*out = strdup(info->regex);
		return *out ? 0 : -ENOMEM;
	}
	cl = strcmp(canon, "/") == 0 ? 0 : strlen(canon);
	rl = strlen(rest);
	glob = malloc(cl + rl + 1);
	lit = calloc(cl + rl + 1, 1);
	if (!glob || !lit) {
		err = -ENOMEM;
		goto out_free;
	}
	memcpy(glob, canon, cl);
	memset(lit, 1, cl); /* the canonical prefix is literal text */
	memcpy(glob + cl, rest, rl + 1);
	err = ward_glob_translate(out, glob, cl + rl, lit, WARD_GLOB_SUBTREE,
				  &why, &at);
	if (err == WARD_EINVAL)
		err = ward_err(err, "seatbelt profile: glob %s: %s", glob, why);
out_free:
	free(glob);
	free(lit);
	free(canon);
	return err;
}

/*
 * Write `(deny OPS (subpath "PATH"))` to @f and, when @desc is not NULL,
 * the same line followed by "  (TAGWHY)". 0 or WARD_EINVAL (a path SBPL
 * cannot hold).
 */
static int seatbelt_deny_subpath(FILE *f, struct ward_strv *desc,
				 const char *ops, const char *path,
				 const char *tag, const char *why)
{
	int err;

	fprintf(f, "(deny %s (subpath ", ops);
	err = sbpl_string(f, path);
	if (err)
		return err;
	fputs("))\n", f);
	if (desc)
		ward_xl_linef(desc, "(deny %s (subpath \"%s\"))  (%s%s)", ops,
			      path, tag, why);
	return 0;
}

/* Write one deny rule for @info to @f (and to @desc when not NULL). */
static int seatbelt_rule(FILE *f, const struct ward_xlate *p,
			 struct ward_strv *desc, size_t i,
			 const struct ward_rule_info *info)
{
	const char *ops = info->access == WARD_ACCESS_NONE
			      ? "file-read* file-write*"
			      : "file-write*";
	char name[PATH_MAX + 256], *re = NULL, *path;
	int err;

	ward_xl_rule_name(name, sizeof(name), p, i);
	if (info->is_glob) {
		err = seatbelt_regex(&re, info);
		if (err)
			return err;
		/* #"…" is a raw string; the regex never holds '"'. */
		fprintf(f, "(deny %s (regex #\"%s\"))\n", ops, re);
		if (desc)
			ward_xl_linef(desc, "(deny %s (regex #\"%s\"))  (%s)",
				      ops, re, name);
		free(re);
		return 0;
	}
	path = util_path_canon(info->pattern);
	if (!path)
		return -ENOMEM;
	err = seatbelt_deny_subpath(f, desc, ops, path, "", name);
	free(path);
	return err;
}

/* The comment that opens the rules, before the first of them. */
static void seatbelt_rules_header(FILE *f, bool *header)
{
	if (*header)
		return;
	fputs("; Access rules and protected paths (a later rule wins).\n", f);
	*header = true;
}

static int seatbelt_write(FILE *f, const struct ward_xlate *p,
			  struct ward_strv *desc)
{
	struct ward_rule_info info;
	bool header = false;
	int err;

	/* SBPL: a later rule wins over an earlier one. So the denies follow
	 * the allows, and `--` follows `r-` and the protected paths. */
	for (int pass = 0; pass < 3; pass++) {
		for (size_t i = 0; pass != 1 && i < p->nrules; i++) {
			if (ward_rules_get(&info, p->rules, i) != 0 ||
			    info.access !=
				(pass ? WARD_ACCESS_NONE : WARD_ACCESS_RO))
				continue;
			seatbelt_rules_header(f, &header);
			err = seatbelt_rule(f, p, desc, i, &info);
			if (err)
				return err;
		}
		for (size_t j = 0; pass != 0 && j < p->nprot; j++) {
			const struct ward_protected *pr = &p->prot[j];
			bool hidden = pr->access == WARD_ACCESS_NONE;

			/*
			 * Pass 2, the hidden ones (ward's state directory):
			 * everywhere. Pass 1, the read-only ones inside a
			 * root (outside the roots they are read-only
			 * already). A missing git path is denied too:
			 * Seatbelt names paths, so it keeps `.git/commondir`
			 * from being created (the list has git paths only
			 * when the repository exists).
			 */
			if (!ward_protected_kept(pr) ||
			    (pass == 2 ? !hidden
				       : hidden || !ward_xl_overlapping_root(
						       p, pr->path)))
				continue;
			seatbelt_rules_header(f, &header);
			err = seatbelt_deny_subpath(
			    f, desc,
			    hidden ? "file-read* file-write*" : "file-write*",
			    pr->path, "protected: ", pr->what);
			if (err)
				return err;
		}
	}
	/*
	 * /dev/null stays readable and writable whatever the rules say, as
	 * on bwrap (a private /dev) and Landlock (its own grant): a rule
	 * over it (`r- /`) would break every shell redirection to it.
	 */
	if (p->rules &&
	    ward_rules_match(p->rules, "/dev/null") >= WARD_ACCESS_RO) {
		fputs(
		    "; /dev/null stays usable whatever the rules say.\n"
		    "(allow file-read* file-write* (literal \"/dev/null\"))\n",
		    f);
		if (desc)
			ward_xl_linef(desc,
				      "(allow file-read* file-write* (literal "
				      "\"/dev/null\"))  (after the rules: "
				      "/dev/null stays usable)");
	}
	return 0;
}

int ward_xlate_seatbelt(FILE *f, const struct ward_xlate *plan)
{
	return seatbelt_write(f, plan, NULL);
}

void ward_xl_plan_seatbelt_desc(struct ward_xlate *p)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f) {
		p->oom = true;
		return;
	}
	if (seatbelt_write(f, p, &p->desc) != 0)
		ward_xl_linef(&p->warn, "seatbelt: %s", ward_error_last());
	fclose(f);
	free(text);
}
