/*
 * ward — the small files that only ward writes in its state directory
 * (the probe cache, the warnings already shown), internal to libward.
 * Each is found, trusted and replaced the same way; every failure reads as
 * "nothing recorded", so they are best effort by design.
 */
#ifndef WARD_STATEFILE_H
#define WARD_STATEFILE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * ward_statefile_dir - ward's state directory into @buf:
 * $XDG_STATE_HOME/ward when that is absolute (a relative one is ignored,
 * as the XDG spec says), else $HOME/.local/state/ward. False when there is
 * none (or it does not fit).
 */
bool ward_statefile_dir(char *buf, size_t len);

/*
 * ward_statefile_open - open the state directory (never through a
 * symlink), creating it (mode 0700) first when @create and it is missing.
 * The descriptor, or -1 when it is missing or not trusted (not the
 * caller's, or writable by others).
 */
int ward_statefile_open(bool create);

/*
 * ward_statefile_read - the file @name under @dfd into @buf (at most
 * @len - 1 bytes, NUL-terminated) when it is the caller's, writable by
 * nobody else, a regular file and starts with the line @magic. False
 * otherwise (then @buf is "").
 */
bool ward_statefile_read(int dfd, const char *name, const char *magic,
			 char *buf, size_t len);

/*
 * ward_statefile_write - replace @name under @dfd with the @len bytes of
 * @data (mode 0600): written to a temporary file, then renamed over it,
 * so a reader sees the old file or the new one. Best effort.
 */
void ward_statefile_write(int dfd, const char *name, const char *data,
			  size_t len);

#endif
