/*
 * ward — sandbox modes: the closed vocabulary of file effects.
 *
 * read-only < workspace-write < danger-full-access. A mode governs file
 * effects only: not the network, not process visibility.
 */
#ifndef WARD_MODE_H
#define WARD_MODE_H

#include <stdbool.h>

#include "common.h"

WARD_BEGIN_DECL

enum ward_mode {
	WARD_MODE_READ_ONLY = 0,
	WARD_MODE_WORKSPACE_WRITE = 1,
	WARD_MODE_DANGER_FULL_ACCESS = 2,
};

/** The compiled-in default mode (fail-safe). */
#define WARD_MODE_DEFAULT WARD_MODE_READ_ONLY

/**
 * ward_mode_parse - parse "read-only", "workspace-write" or
 * "danger-full-access" (exact spelling). Returns 0 and sets *out, or
 * WARD_EINVAL for anything else (the detail names the bad value).
 */
WARD_EXTERN int ward_mode_parse(enum ward_mode *out, const char *text);

/**
 * ward_mode_name - the canonical spelling of a mode; "unknown" for a value
 * outside the enum. Static storage.
 */
WARD_EXTERN const char *ward_mode_name(enum ward_mode mode);

/** ward_mode_is_wider - true when @a is strictly wider than @b. */
WARD_EXTERN bool ward_mode_is_wider(enum ward_mode a, enum ward_mode b);

WARD_END_DECL

#endif
