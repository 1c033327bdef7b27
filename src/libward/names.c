/*
 * ward — the names of ward's enums that several modules print: the
 * fence's file operations and the subject of an escalation. They live
 * below every module that renders them (render.c, fsfence.c,
 * escalation.c, call.c), so that naming a value is never a call upward.
 */
#include <string.h>

#include "internal.h"
#include "ward/escalation.h"
#include "ward/fsfence.h"

static const char *const op_names[] = {
    [WARD_FS_OP_READ] = "read", [WARD_FS_OP_WRITE] = "write",
    [WARD_FS_OP_EDIT] = "edit", [WARD_FS_OP_REMOVE] = "remove",
    [WARD_FS_OP_MOVE] = "move", [WARD_FS_OP_MKDIR] = "mkdir",
    [WARD_FS_OP_LIST] = "list", [WARD_FS_OP_STAT] = "stat",
};

const char *ward_fs_op_name(enum ward_fs_op op)
{
	if ((unsigned)op >= sizeof(op_names) / sizeof(op_names[0]))
		return "unknown";
	return op_names[op];
}

int ward_fs_op_parse(enum ward_fs_op *out, const char *name)
{
	for (unsigned op = 0; name && op <= WARD_FS_OP_STAT; op++) {
		if (strcmp(name, ward_fs_op_name((enum ward_fs_op)op)) == 0) {
			*out = (enum ward_fs_op)op;
			return 0;
		}
	}
	return ward_err(WARD_EINVAL, "unknown file operation '%s'",
			name ? name : "(null)");
}

const char *ward_subject_name(enum ward_subject subject)
{
	return subject == WARD_SUBJECT_OPERATION ? "operation" : "command";
}
