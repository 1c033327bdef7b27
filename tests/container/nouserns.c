/*
 * nouserns — run a command the way a container runtime would let ward run:
 * user namespaces denied and no CAP_SYS_ADMIN. For `make check-container`
 * (the container lane), not installed.
 *
 *   nouserns COMMAND [ARG...]
 *
 * Like Docker's default seccomp profile and capability set: unshare() and
 * clone() with CLONE_NEWUSER fail with EPERM, clone3() with ENOSYS (its
 * flags are behind a pointer seccomp cannot read, so runtimes refuse it
 * whole and the C library falls back to clone), and only the runtime's
 * default capabilities are kept (CAP_SYS_ADMIN is not one). bwrap cannot
 * build a sandbox there; Landlock is the only runner. The filter is
 * installed while CAP_SYS_ADMIN is still held (no no_new_privs needed, so
 * setpriv and friends behave as in a container), then the capabilities go.
 */
#include <errno.h>
#include <linux/capability.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Docker's default capabilities (moby oci/caps/defaults.go). */
static const int kept[] = {
    CAP_CHOWN,	 CAP_DAC_OVERRIDE,	CAP_FSETID,   CAP_FOWNER,
    CAP_MKNOD,	 CAP_NET_RAW,		CAP_SETGID,   CAP_SETUID,
    CAP_SETFCAP, CAP_SETPCAP,		CAP_NET_BIND_SERVICE,
    CAP_SYS_CHROOT, CAP_KILL,		CAP_AUDIT_WRITE,
};

static int deny_userns(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int rc;

	if (!ctx)
		return -ENOMEM;
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1,
			      SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER,
				      CLONE_NEWUSER));
	if (!rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
				      SCMP_SYS(clone), 1,
				      SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER,
					      CLONE_NEWUSER));
	if (!rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS),
				      SCMP_SYS(clone3), 0);
	if (!rc)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (!rc)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	return rc;
}

static int keep_default_caps(void)
{
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2];
	unsigned long long mask = 0;

	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		mask |= 1ULL << kept[i];
	for (int cap = 0; cap <= 63; cap++) {
		if (mask & (1ULL << cap))
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 &&
		    errno != EINVAL)
			return -errno;
	}
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (syscall(SYS_capget, &hdr, data) != 0)
		return -errno;
	for (int i = 0; i < 2; i++) {
		unsigned int m = (unsigned int)(mask >> (32 * i));

		data[i].effective &= m;
		data[i].permitted &= m;
		data[i].inheritable &= m;
	}
	if (syscall(SYS_capset, &hdr, data) != 0)
		return -errno;
	return 0;
}

int main(int argc, char **argv)
{
	int rc;

	if (argc < 2) {
		fprintf(stderr, "usage: nouserns COMMAND [ARG...]\n");
		return 125;
	}
	rc = deny_userns();
	if (rc) {
		fprintf(stderr, "nouserns: cannot install the filter: %s\n",
			strerror(-rc));
		return 125;
	}
	rc = keep_default_caps();
	if (rc) {
		fprintf(stderr, "nouserns: cannot drop capabilities: %s\n",
			strerror(-rc));
		return 125;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "nouserns: cannot execute %s: %s\n", argv[1],
		strerror(errno));
	return 127;
}
