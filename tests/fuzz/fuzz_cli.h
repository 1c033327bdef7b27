/*
 * fuzz_cli.h — what the targets that drive cli/ (fuzz_argv, fuzz_mcp) need
 * to run the command line's code in one process, input after input.
 *
 * They are linked with -Wl,--wrap=exit (see the Makefile): the CLI's
 * die() family ends in exit(); inside a guarded block that exit returns
 * to the target instead (longjmp) with the status; everywhere else (the
 * fuzzer's own exit) it is the real one. getopt_long is wrapped too: each
 * parse starts from a fully reset getopt (optind = 0), as it does in a
 * fresh `ward` process; without it glibc would keep the ordering of the
 * first parse and a cluster a die() left half read.
 */
#ifndef WARD_FUZZ_CLI_H
#define WARD_FUZZ_CLI_H

#include <getopt.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

_Noreturn void __real_exit(int status);
_Noreturn void __wrap_exit(int status);
int __real_getopt_long(int argc, char *const *argv, const char *shortopts,
		       const struct option *longopts, int *longind);
int __wrap_getopt_long(int argc, char *const *argv, const char *shortopts,
		       const struct option *longopts, int *longind);

static jmp_buf fuzz_cli_jmp;
static bool fuzz_cli_armed;
static bool fuzz_cli_fresh_getopt;
static int fuzz_cli_status;

void __wrap_exit(int status)
{
	if (!fuzz_cli_armed)
		__real_exit(status);
	fuzz_cli_armed = false;
	fuzz_cli_status = status;
	longjmp(fuzz_cli_jmp, 1);
}

int __wrap_getopt_long(int argc, char *const *argv, const char *shortopts,
		       const struct option *longopts, int *longind)
{
	if (fuzz_cli_fresh_getopt) {
		fuzz_cli_fresh_getopt = false;
		optind = 0;
	}
	return __real_getopt_long(argc, argv, shortopts, longopts, longind);
}

/* The next getopt_long() call starts a new parse. */
static inline void fuzz_cli_new_parse(void)
{
	fuzz_cli_fresh_getopt = true;
}

/*
 * Use:
 *	if (setjmp(fuzz_cli_jmp) == 0) {
 *		fuzz_cli_armed = true;
 *		... code that may die() ...
 *		fuzz_cli_armed = false;
 *	} else {
 *		... it died with fuzz_cli_status ...
 *	}
 * (what the guarded code changes and the target reads after a longjmp
 * must be volatile or static).
 */

#endif
