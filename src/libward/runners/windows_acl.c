/*
 * ward — the windows-acl runner: reserved. Windows' chain is empty, so it
 * is never chosen; named in a chain or forced, it is unusable and says so
 * (fail closed).
 */
#include "libward/runners/runners.h"

const struct ward_runner_ops ward_runner_windows_acl_ops = {
    .id = WARD_RUNNER_WINDOWS_ACL,
    .chain = true,
    .reserved = "reserved: no Windows runner exists",
    .sandbox_env = "WARD_SANDBOX=windows-acl",
    .fail_exit = -1,
    .denial = "",
    .net_signatures = ward_runner_no_signatures,
    .containment = "the process group",
    .containment_no_pidns = "the process group",
};
