/*
 * ward — permission presets: named (mode, approval policy) pairs over the
 * two session knobs. See include/ward/presets.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libward/internal.h"
#include "ward/presets.h"

#define PRESET_NAME_MAX 64

struct preset {
	char *name;
	enum ward_mode mode;
	enum ward_approval_policy approval;
};

struct ward_presets {
	struct preset *v;
	size_t n, cap;
};

static bool name_valid(const char *name)
{
	size_t n = 0;

	if (!name)
		return false;
	for (const char *p = name; *p; p++, n++) {
		char c = *p;

		if (n >= PRESET_NAME_MAX)
			return false;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '-' || c == '_' ||
		      c == '.'))
			return false;
	}
	return n > 0;
}

/* The index of @name, or -1. */
static long find(const ward_presets *p, const char *name)
{
	for (size_t i = 0; i < p->n; i++) {
		if (strcmp(p->v[i].name, name) == 0)
			return (long)i;
	}
	return -1;
}

int ward_presets_new(ward_presets **out)
{
	ward_presets *p = calloc(1, sizeof(*p));

	if (!p)
		return ward_err(-ENOMEM, "out of memory");
	*out = p;
	return 0;
}

int ward_presets_new_default(ward_presets **out)
{
	ward_presets *p = NULL;
	int err;

	err = ward_presets_new(&p);
	if (!err)
		err = ward_presets_set(p, "read-only", WARD_MODE_READ_ONLY,
				       WARD_APPROVAL_ASK);
	if (!err)
		err = ward_presets_set(p, "workspace-write",
				       WARD_MODE_WORKSPACE_WRITE,
				       WARD_APPROVAL_ASK);
	if (!err)
		err = ward_presets_set(p, "danger-full-access",
				       WARD_MODE_DANGER_FULL_ACCESS,
				       WARD_APPROVAL_NEVER);
	if (err) {
		ward_presets_free(p);
		return err;
	}
	*out = p;
	return 0;
}

void ward_presets_free(ward_presets *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i].name);
	free(p->v);
	free(p);
}

int ward_presets_set(ward_presets *p, const char *name, enum ward_mode mode,
		     enum ward_approval_policy approval)
{
	struct preset *grown;
	long at;
	char *copy;

	if (!name_valid(name))
		return ward_err(WARD_EINVAL,
				"invalid preset name '%s' (1 to %d letters, "
				"digits, '.', '_' or '-')",
				name ? name : "(null)", PRESET_NAME_MAX);
	if (strcmp(name, WARD_PRESET_CUSTOM) == 0)
		return ward_err(WARD_EINVAL,
				"'custom' is reserved: it names every "
				"combination that matches no preset");
	if ((unsigned)mode > WARD_MODE_DANGER_FULL_ACCESS)
		return ward_err(WARD_EINVAL, "preset '%s': unknown mode %d",
				name, (int)mode);
	if ((unsigned)approval > WARD_APPROVAL_NEVER)
		return ward_err(WARD_EINVAL,
				"preset '%s': unknown approval policy %d", name,
				(int)approval);
	at = find(p, name);
	for (size_t i = 0; i < p->n; i++) {
		if ((long)i != at && p->v[i].mode == mode &&
		    p->v[i].approval == approval)
			return ward_err(WARD_EINVAL,
					"preset '%s' has the same mode and "
					"approval policy as '%s' (%s, %s)",
					name, p->v[i].name,
					ward_mode_name(mode),
					ward_approval_policy_name(approval));
	}
	if (at >= 0) {
		p->v[at].mode = mode;
		p->v[at].approval = approval;
		return 0;
	}
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 4;

		grown = realloc(p->v, cap * sizeof(*grown));
		if (!grown)
			return ward_err(-ENOMEM, "out of memory");
		p->v = grown;
		p->cap = cap;
	}
	copy = strdup(name);
	if (!copy)
		return ward_err(-ENOMEM, "out of memory");
	p->v[p->n].name = copy;
	p->v[p->n].mode = mode;
	p->v[p->n].approval = approval;
	p->n++;
	return 0;
}

int ward_presets_remove(ward_presets *p, const char *name)
{
	long at = name ? find(p, name) : -1;

	if (at < 0)
		return ward_err(-ENOENT, "no preset '%s'",
				name ? name : "(null)");
	free(p->v[at].name);
	memmove(&p->v[at], &p->v[at + 1],
		(p->n - (size_t)at - 1) * sizeof(p->v[0]));
	p->n--;
	return 0;
}

size_t ward_presets_count(const ward_presets *p)
{
	return p->n;
}

int ward_presets_get(const char **name, enum ward_mode *mode,
		     enum ward_approval_policy *approval, const ward_presets *p,
		     size_t i)
{
	if (i >= p->n)
		return -ERANGE;
	if (name)
		*name = p->v[i].name;
	if (mode)
		*mode = p->v[i].mode;
	if (approval)
		*approval = p->v[i].approval;
	return 0;
}

/* The preset names as "a, b, c" into @buf (cut to fit). */
static const char *names_of(char *buf, size_t len, const ward_presets *p)
{
	size_t used;

	buf[0] = '\0';
	for (size_t i = 0; i < p->n; i++) {
		used = strlen(buf);
		snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
			 p->v[i].name);
	}
	return buf;
}

int ward_presets_find(enum ward_mode *mode, enum ward_approval_policy *approval,
		      const ward_presets *p, const char *name)
{
	char names[PRESET_NAME_MAX * 16];
	long at;

	if (name && strcmp(name, WARD_PRESET_CUSTOM) == 0)
		return ward_err(WARD_EINVAL,
				"'custom' cannot be set: it names any "
				"combination that matches no preset (valid: "
				"%s)",
				names_of(names, sizeof(names), p));
	at = name ? find(p, name) : -1;
	if (at < 0)
		return ward_err(-ENOENT, "unknown preset '%.64s' (valid: %s)",
				name ? name : "(null)",
				names_of(names, sizeof(names), p));
	if (mode)
		*mode = p->v[at].mode;
	if (approval)
		*approval = p->v[at].approval;
	return 0;
}

const char *ward_presets_match(const ward_presets *p, enum ward_mode mode,
			       enum ward_approval_policy approval)
{
	for (size_t i = 0; i < p->n; i++) {
		if (p->v[i].mode == mode && p->v[i].approval == approval)
			return p->v[i].name;
	}
	return WARD_PRESET_CUSTOM;
}

const char *ward_presets_current(const ward_presets *p,
				 const ward_session *session,
				 const struct ward_session_defaults *d)
{
	struct ward_session_defaults dd = WARD_SESSION_DEFAULTS_INIT;

	if (d)
		dd = *d;
	return ward_presets_match(
	    p, ward_session_mode(session, dd.mode, NULL),
	    ward_session_approval(session, dd.approval, NULL));
}

int ward_presets_apply(bool *changed, ward_session *session,
		       const ward_presets *p, const char *name,
		       const struct ward_session_defaults *d)
{
	enum ward_approval_policy approval;
	enum ward_mode mode;
	bool c1 = false, c2 = false;
	int err;

	err = ward_presets_find(&mode, &approval, p, name);
	if (err)
		return err;
	err = ward_session_set_mode(&c1, session, mode, d);
	if (!err)
		err = ward_session_set_approval(&c2, session, approval, d);
	if (changed)
		*changed = c1 || c2;
	return err;
}
