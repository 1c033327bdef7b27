/*
 * ward — the kernel's own account of a Landlock denial (internal).
 *
 * Since Landlock ABI 7 the kernel writes an audit record for every access
 * a Landlock domain refuses (AUDIT_LANDLOCK_ACCESS: the domain, the
 * rights that blocked it, the path) and, the first time, one describing
 * the domain (AUDIT_LANDLOCK_DOMAIN: among others the pid that created
 * it). ward asks for the records of the command after its exec
 * (landlock.c: LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON).
 *
 * ward may read them only as root (CAP_AUDIT_READ for the audit netlink
 * multicast group, CAP_AUDIT_CONTROL to ask whether audit is enabled) and
 * only when audit is enabled (`auditctl -e 1`, or an audit daemon): the
 * kernel writes no record otherwise. A listener is opened before the
 * command starts and read after it ended; the records of the domain the
 * command's pid created are turned into exact denial entries.
 */
#ifndef WARD_AUDIT_H
#define WARD_AUDIT_H

#include <stdbool.h>
#include <sys/types.h>

#include "denial.h"

struct ward_audit;

/*
 * ward_audit_open - listen to the kernel's audit records. Returns 0 and
 * *out, or -errno with a detail saying why not (not root, no audit in
 * this kernel): then the denial report is derived. Whether audit is
 * enabled is asked at collect, and only after a run that failed: nothing
 * waits for the kernel before the command starts, and a run that
 * succeeded never asks.
 */
int ward_audit_open(struct ward_audit **out);

/*
 * ward_audit_collect - after the run of @pid ended: read the records that
 * arrived and add an exact entry, judged by @ctx, for every access the
 * domain @pid created refused. With @wait (the command failed: a denial
 * is likely), wait briefly for late records when audit is enabled — the
 * kernel delivers them from a thread of its own; without it, a command
 * that succeeded is not held up, and only what already arrived counts.
 * Returns the number of entries added.
 */
size_t ward_audit_collect(struct ward_audit *a, pid_t pid, bool wait,
			  struct ward_denial_set *set,
			  const struct ward_denial_ctx *ctx);

void ward_audit_close(struct ward_audit *a);

#endif
