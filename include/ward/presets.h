/*
 * ward — permission presets: named (sandbox mode, approval policy) pairs.
 *
 * A preset table is a plain object the configuration fills (ward.yml's
 * presets); ward_presets_new_default() gives the built-in table:
 *
 *   read-only           (read-only,          ask)
 *   workspace-write     (workspace-write,    ask)
 *   danger-full-access  (danger-full-access, never)
 *
 * A session's current preset is the first one (in table order) matching
 * its effective (mode, approval) pair, else "custom". Setting a preset
 * appends only the knob events that change. "custom" is not a preset: it
 * can be switched away from, never to, and no entry may be named so.
 */
#ifndef WARD_PRESETS_H
#define WARD_PRESETS_H

#include <stdbool.h>
#include <stddef.h>

#include "common.h"
#include "mode.h"
#include "session.h"

WARD_BEGIN_DECL

typedef struct ward_presets ward_presets;

/** The name reported when no preset matches. */
#define WARD_PRESET_CUSTOM "custom"

/** ward_presets_new - an empty table. Free with ward_presets_free(). */
WARD_EXTERN int ward_presets_new(ward_presets **out);
/** ward_presets_new_default - the built-in table (see above). */
WARD_EXTERN int ward_presets_new_default(ward_presets **out);
WARD_EXTERN void ward_presets_free(ward_presets *presets);

/**
 * ward_presets_set - add the preset @name, or redefine it in place (its
 * position is kept). @name: 1 to 64 characters of [A-Za-z0-9._-], not
 * "custom". Another preset with the same pair is refused (the current
 * preset would be ambiguous). Returns 0 or WARD_EINVAL (the detail names
 * the preset); on error the table is unchanged.
 */
WARD_EXTERN int ward_presets_set(ward_presets *presets, const char *name,
				 enum ward_mode mode,
				 enum ward_approval_policy approval);

/** ward_presets_remove - remove @name. 0 or -ENOENT. */
WARD_EXTERN int ward_presets_remove(ward_presets *presets, const char *name);

/** The number of presets. */
WARD_EXTERN size_t ward_presets_count(const ward_presets *presets);

/**
 * ward_presets_get - preset @i (table order). *name is owned by the table.
 * Any out-parameter may be NULL. 0 or -ERANGE.
 */
WARD_EXTERN int ward_presets_get(const char **name, enum ward_mode *mode,
				 enum ward_approval_policy *approval,
				 const ward_presets *presets, size_t i);

/**
 * ward_presets_find - the pair of the preset @name. 0, -ENOENT (no such
 * preset) or WARD_EINVAL ("custom": it is not a preset). The detail of
 * either error is the text every front end shows a person (`ward session
 * preset`, `ward acp`'s Permissions selector), naming the valid presets:
 *
 *   unknown preset 'NAME' (valid: read-only, workspace-write, …)
 *   'custom' cannot be set: it names any combination that matches no
 *   preset (valid: …)
 */
WARD_EXTERN int ward_presets_find(enum ward_mode *mode,
				  enum ward_approval_policy *approval,
				  const ward_presets *presets,
				  const char *name);

/**
 * ward_presets_match - the name of the first preset with the pair
 * (@mode, @approval), else "custom". Owned by the table (or static).
 */
WARD_EXTERN const char *ward_presets_match(const ward_presets *presets,
					   enum ward_mode mode,
					   enum ward_approval_policy approval);

/**
 * ward_presets_current - the session's current preset: ward_presets_match
 * of its effective pair (the folds of its snapshot against @d; NULL: the
 * compiled-in defaults).
 */
WARD_EXTERN const char *
ward_presets_current(const ward_presets *presets, const ward_session *session,
		     const struct ward_session_defaults *d);

/**
 * ward_presets_apply - switch @session to the preset @name: set its mode
 * and approval knobs (each setter appends only when its value changes).
 * *changed (may be NULL) is true when any event was appended. Returns 0,
 * -ENOENT (unknown preset), WARD_EINVAL ("custom" cannot be set) or a
 * setter's error. The two knobs are two appends; a failure of the second
 * leaves the first in place.
 */
WARD_EXTERN int ward_presets_apply(bool *changed, ward_session *session,
				   const ward_presets *presets,
				   const char *name,
				   const struct ward_session_defaults *d);

WARD_END_DECL

#endif
