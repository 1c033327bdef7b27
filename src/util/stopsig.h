/*
 * ward — the stop signals of a long-running front end (`ward mcp`, `ward
 * acp`): SIGTERM, SIGINT and SIGHUP routed to a signalfd, so the main
 * loop sees them among its descriptors and can stop everything in order
 * before the process dies of the signal.
 */
#ifndef WARD_UTIL_STOPSIG_H
#define WARD_UTIL_STOPSIG_H

/*
 * util_stop_signal_fd - block the stop signals and return a signalfd
 * (close-on-exec, non-blocking) that reads them; call it before any
 * thread exists (threads inherit the mask; ward's executor clears it in
 * every child). SIGINT and SIGHUP ignored by whoever started us stay
 * ignored (nohup, a background job of a shell). Returns the descriptor,
 * or -1: then the signals keep their default action.
 */
int util_stop_signal_fd(void);

/* util_stop_signal_read - the stop signal waiting on @fd, or 0. */
int util_stop_signal_read(int fd);

/* util_stop_signal_name - "TERM", "INT" or "HUP" for @sig. Static. */
const char *util_stop_signal_name(int sig);

/* util_die_of - die of @sig now that everything is stopped and recorded
 * (returns only if the signal does not end the process). */
void util_die_of(int sig);

#endif
