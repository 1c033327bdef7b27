/*
 * ward — what ward has already told the person: a digest of the last
 * warnings shown before a call, per workspace, kept in ward's state
 * directory, so that a front end can say them once per change of the
 * configuration instead of before every command (`ward run --quiet`).
 *
 * The state directory ($XDG_STATE_HOME/ward, else ~/.local/state/ward) is
 * a protected path: read-only inside every confined run, so no command
 * can make ward believe a warning was already shown. The file is trusted
 * only when it and its directory belong to the caller and nobody else may
 * write them; anything else counts as "not shown", so the failure mode is
 * a warning shown once more, never a warning hidden.
 */
#ifndef WARD_NOTICE_H
#define WARD_NOTICE_H

#include <stdbool.h>

#include "common.h"

WARD_BEGIN_DECL

/**
 * ward_notice_seen - whether @warnings (NULL-terminated, possibly empty)
 * are exactly the warnings last recorded for @scope in @workspace, and
 * record them as the last ones shown when they are not.
 *
 * @scope separates front ends whose warnings differ by nature for the
 * same configuration (e.g. "command" for `ward run` and `ward confine`,
 * "operation" for `ward fs`). An empty set equals "nothing recorded", so
 * a workspace without warnings costs one read and no write.
 *
 * Sets *out_seen (false when the store cannot be read) and returns 0, or
 * returns -EINVAL (a NULL argument). Failing to record is not an error:
 * it only means the warnings are shown again next time.
 */
WARD_EXTERN int ward_notice_seen(bool *out_seen, const char *scope,
				 const char *workspace, char *const *warnings);

WARD_END_DECL

#endif
