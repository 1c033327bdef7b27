/*
 * ward — the caller's terminal settings, kept across a confined command.
 *
 * A confined command that inherits a terminal on its standard descriptors
 * can change the terminal's settings (`stty -echo`, raw mode, the window
 * size): they belong to the terminal, not to the process, so they would
 * outlive the command and the call. ward_call_exec() saves them before the
 * command runs and puts back what changed when it ends (a timeout
 * included); a front end that can be stopped by a signal while a command
 * runs saves its own copy and restores it from the handler
 * (ward_tty_restore() is async-signal-safe).
 */
#ifndef WARD_TTY_H
#define WARD_TTY_H

#include "common.h"

WARD_BEGIN_DECL

typedef struct ward_tty_state ward_tty_state;

/**
 * ward_tty_save - remember the settings (termios and window size) of each
 * terminal among descriptors 0, 1 and 2 (one per terminal). *out is NULL
 * when none is a terminal. The caller frees it with ward_tty_free().
 * Returns 0 or -ENOMEM.
 */
WARD_EXTERN int ward_tty_save(ward_tty_state **out);

/**
 * ward_tty_restore - put back the settings @state remembers where they
 * changed (nothing is written to a terminal whose settings are as they
 * were). Async-signal-safe; SIGTTOU is held off meanwhile, so a ward in a
 * background job is not stopped by it. @state may be NULL. Returns the
 * number of terminals whose settings were put back.
 */
WARD_EXTERN int ward_tty_restore(const ward_tty_state *state);

/** ward_tty_free - free @state. Accepts NULL. */
WARD_EXTERN void ward_tty_free(ward_tty_state *state);

WARD_END_DECL

#endif
