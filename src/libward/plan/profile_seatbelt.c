/*
 * ward — the Seatbelt (macOS sandbox-exec) profile: a pure function from a
 * policy to SBPL text, and the sandbox-exec argv around it.
 *
 * Seatbelt is generated and tested as text on every platform; only macOS
 * runs it. See docs/RUNNERS.md for the reasoning behind each rule.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libward/internal.h"
#include "translate_internal.h"

/*
 * Everything a process needs to run at all, before any file rule. Kept
 * modest: each allow is there because ordinary command-line tools fail
 * without it, and none of them writes files on the caller's behalf.
 */
static const char profile_head[] =
    "(version 1)\n"
    "(deny default)\n"
    "\n"
    "; Run programs and fork; children inherit this profile.\n"
    "(allow process-exec)\n"
    "(allow process-fork)\n"
    "; Signal and inspect only processes in this same sandbox.\n"
    "(allow signal (target same-sandbox))\n"
    "(allow process-info* (target same-sandbox))\n"
    "; Kernel parameters: CPU count, page size, OS version.\n"
    "(allow sysctl-read)\n"
    "; POSIX shared memory and semaphores (e.g. Python "
    "multiprocessing).\n"
    "(allow ipc-posix-shm)\n"
    "(allow ipc-posix-sem)\n"
    "; Reading preferences; user-preference-write stays denied, so\n"
    "; cfprefsd cannot write plists on the sandbox's behalf.\n"
    "(allow user-preference-read)\n"
    "; A short list of services: user and group lookups, logging,\n"
    "; notifications, certificate trust, preferences (read), the\n"
    "; per-user temporary directory. Not launchservicesd: it opens\n"
    "; applications outside the sandbox.\n"
    "(allow mach-lookup\n"
    "  (global-name \"com.apple.system.opendirectoryd.libinfo\")\n"
    "  (global-name \"com.apple.system.opendirectoryd.membership\")\n"
    "  (global-name \"com.apple.system.logger\")\n"
    "  (global-name \"com.apple.logd\")\n"
    "  (global-name \"com.apple.system.notification_center\")\n"
    "  (global-name \"com.apple.trustd.agent\")\n"
    "  (global-name \"com.apple.cfprefsd.daemon\")\n"
    "  (global-name \"com.apple.cfprefsd.agent\")\n"
    "  (global-name \"com.apple.bsd.dirhelper\"))\n"
    "(allow system-socket)\n"
    "\n"
    "; Everything is readable.\n"
    "(allow file-read*)\n"
    "; The one file writable in every confined mode.\n"
    "(allow file-write* (literal \"/dev/null\"))\n";

/*
 * Write @path as an SBPL string literal: `"` and `\` are escaped with a
 * backslash. Control characters have no escape we can rely on across
 * macOS releases, so a path holding one is refused (fail closed).
 */
static int put_sbpl_string(FILE *f, const char *path)
{
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			return ward_err(WARD_EINVAL,
					"seatbelt profile: path with a control "
					"character cannot be expressed: %s",
					path);
	}
	fputc('"', f);
	for (const char *p = path; *p; p++) {
		if (*p == '"' || *p == '\\')
			fputc('\\', f);
		fputc(*p, f);
	}
	fputc('"', f);
	return 0;
}

int ward_seatbelt_profile_x(char **out, const ward_policy *policy,
			    const struct ward_xlate *x)
{
	char *const *roots = NULL;
	char *text = NULL;
	size_t text_len = 0;
	enum ward_mode mode;
	FILE *f;
	int err;

	if (!out || !policy || !x)
		return ward_err(WARD_EINVAL,
				"seatbelt profile: missing argument");
	mode = ward_policy_mode(policy);
	if (mode != WARD_MODE_READ_ONLY && mode != WARD_MODE_WORKSPACE_WRITE)
		return ward_err(WARD_EINVAL,
				"seatbelt profile: %s is not confined, there "
				"is no profile for it",
				ward_mode_name(mode));
	roots = ward_xlate_roots(x);
	f = open_memstream(&text, &text_len);
	if (!f)
		return ward_err(-errno, "seatbelt profile: %s",
				strerror(errno));
	fputs(profile_head, f);
	/* The network is its own knob (network.h): on allows it all; off
	 * leaves only unix sockets (deny default refuses the rest). */
	if (ward_policy_network(policy) == WARD_NETWORK_ON)
		fputs("; The network: on.\n(allow network*)\n", f);
	else
		fputs("; The network: off (unix sockets only).\n"
		      "(allow network* (remote unix-socket))\n"
		      "(allow network-bind (local unix-socket))\n",
		      f);
	if (roots[0])
		fputs("; Writable roots.\n", f);
	for (size_t i = 0; roots[i]; i++) {
		fputs("(allow file-write* (subpath ", f);
		err = put_sbpl_string(f, roots[i]);
		if (err)
			goto out_close_stream;
		fputs("))\n", f);
	}
	/*
	 * SBPL lets a later rule override an earlier one: the `r-` and
	 * protected-path denies, then the `--` denies, come after the allows.
	 */
	err = ward_xlate_seatbelt(f, x);
	if (err)
		goto out_close_stream;
	if (ferror(f))
		err = ward_err(-ENOMEM, "seatbelt profile: out of memory");
out_close_stream:
	if (fclose(f) != 0 && !err)
		err = ward_err(-ENOMEM, "seatbelt profile: out of memory");
	if (err)
		free(text);
	else
		*out = text;
	return err;
}

int ward_seatbelt_argv(char ***out, const char *profile, char *const argv[])
{
	struct ward_strv sv = {0};

	/*
	 * sandbox-exec cannot set the environment: the executor sets
	 * WARD_SANDBOX=seatbelt for the child it spawns.
	 */
	ward_strv_push(&sv, SANDBOX_EXEC);
	ward_strv_push(&sv, "-p");
	ward_strv_push(&sv, profile);
	if (argv) {
		ward_strv_push(&sv, "--");
		ward_strv_push_all(&sv, argv);
	}
	return ward_strv_finish(out, &sv);
}
