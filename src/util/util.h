/*
 * ward's util layer: small libc-only helpers every other layer uses
 * (libward, the MCP server, the CLI and the static launchers), each
 * written once. Nothing here keeps state; what allocates says so.
 */
#ifndef WARD_UTIL_H
#define WARD_UTIL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * util_path_within - whether the absolute @path is @dir or lies beneath
 * it, lexically (both canonical, no trailing '/'). "/" holds every
 * absolute path; a relative @path is within nothing.
 */
bool util_path_within(const char *path, const char *dir);

/* util_strp_cmp - strcmp of two `char *` elements, for qsort and bsearch
 * over a vector of strings. */
int util_strp_cmp(const void *a, const void *b);

/*
 * util_path_lexical - the absolute @abs with "//", "." and ".." collapsed
 * lexically (".." never above "/") and no trailing '/'. Only equal to the
 * physical path when no symlink is on the way, which the caller must have
 * the kernel confirm. A malloc'd string the caller frees, or NULL.
 */
char *util_path_lexical(const char *abs);

/*
 * util_proc_private - whether the canonical @path is a process's part of
 * /proc: /proc/self, /proc/thread-self, /proc/PID (a task id too) or what
 * lies beneath one. In-process file access (ward's fence) runs in the
 * harness, so these name the harness (its environment, memory map,
 * descriptors) or the processes around it, never a confined command.
 */
bool util_proc_private(const char *path);

/*
 * util_path_canon - absolute @path made canonical as far as it exists:
 * the realpath of its longest existing prefix, the rest appended, "."
 * and ".." in it collapsed lexically. A relative @path is returned as is.
 * A malloc'd string the caller frees, or NULL on ENOMEM.
 */
char *util_path_canon(const char *path);

/*
 * util_mkdir_p - mkdir -p the absolute @path, mode 0700 for what it
 * creates. Returns 0 or -errno (-ENAMETOOLONG for a path longer than
 * PATH_MAX or a relative one).
 */
int util_mkdir_p(const char *path);

/*
 * util_openat_dir - open the directory @name in @dirfd (AT_FDCWD: relative
 * to the working directory) read-only, never through a symlink at its end,
 * close-on-exec, retrying EINTR. A descriptor, or -1 with errno.
 */
int util_openat_dir(int dirfd, const char *name);

/*
 * getdents64(2)'s record, which not every C library declares; a buffer
 * the call filled holds them back to back, each d_reclen bytes long.
 */
struct util_dirent64 {
	unsigned long long d_ino;
	long long d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/*
 * util_getdents64 - the next records of the directory @fd into @buf
 * (@len bytes), retrying EINTR: the bytes filled, 0 at the end, or -1
 * with errno.
 */
long util_getdents64(int fd, void *buf, size_t len);

/*
 * util_dirent_type - what the entry @name of the directory @dirfd is, for
 * a record whose d_type is DT_UNKNOWN (a file system that does not say):
 * DT_DIR, DT_LNK or DT_REG (anything else), by fstatat without following
 * a link; DT_UNKNOWN when that fails.
 */
unsigned char util_dirent_type(int dirfd, const char *name);

/*
 * util_write_all - write all @len bytes of @buf to @fd, retrying on EINTR
 * and waiting for POLLOUT on EAGAIN. Returns 0, or -errno (-EIO when the
 * file takes nothing).
 */
int util_write_all(int fd, const void *buf, size_t len);

/*
 * util_read_upto - read into @buf until it holds @len bytes, the end of
 * the file or an error, retrying on EINTR. Returns how many bytes it read
 * (fewer than @len: the file ended or an error stopped it).
 */
size_t util_read_upto(int fd, void *buf, size_t len);

/*
 * util_utf8_decode - the length of the valid UTF-8 sequence at @p (at most
 * @len bytes, @len > 0), with its code point in *@cp when @cp is not NULL;
 * 0 when the bytes there are not one (overlong forms, surrogates and code
 * points above U+10FFFF are invalid). ASCII is a sequence of 1.
 */
size_t util_utf8_decode(unsigned *cp, const unsigned char *p, size_t len);

/*
 * util_shorten_middle - make the NUL-terminated @s shorter than @limit
 * bytes (@limit > 80) by cutting its longest words (runs without a space:
 * paths, in ward's messages) in their middle, each cut marked by "…", so
 * the start and the end of a message — the reason after a long path —
 * survive. A cut never splits a UTF-8 sequence. In place.
 */
void util_shorten_middle(char *s, size_t limit);

/*
 * util_close_range_except - close every descriptor from @first up except
 * @keep (-1: none) with close_range(2), or with @cloexec only mark them
 * close-on-exec. Returns 0, or -errno when the kernel has no close_range
 * (Linux 5.9; its CLOEXEC flag 5.11) or a seccomp filter refuses it: the
 * caller then falls back (util_close_from() does).
 */
int util_close_range_except(unsigned first, int keep, bool cloexec);

/*
 * util_close_from - util_close_range_except(), else one close() (or
 * fcntl(FD_CLOEXEC)) per descriptor below the soft RLIMIT_NOFILE, at most
 * 65536. Allocates nothing: safe in a child that shares its parent's
 * memory (a vfork-like clone) or was forked from threads.
 */
void util_close_from(unsigned first, int keep, bool cloexec);

/*
 * The search path of a command when PATH is unset, for every PATH search
 * ward makes (the CLI's check, the executor, the launcher, the runner
 * binaries): execvp's default with /usr/local/bin first, as Debian's and
 * most distributions' login PATH has it.
 */
#define UTIL_PATH_DEFAULT "/usr/local/bin:/usr/bin:/bin"

/*
 * A PATH search for a command name, execvp-style: util_path_init(), then
 * util_path_next() for each entry in order. @path NULL (PATH unset) means
 * UTIL_PATH_DEFAULT; an empty string is one empty entry.
 */
struct util_path_search {
	const char *next; /* the entries not yet returned, or NULL */
	const char *name;
	size_t nlen;
};

void util_path_init(struct util_path_search *s, const char *path,
		    const char *name);

/*
 * util_path_next - the next candidate, "DIR/NAME" into @buf (@len bytes),
 * or "NAME" alone for an empty entry (execvp's working directory); a DIR
 * that is relative stays relative, for the caller to resolve or skip.
 * *@dlen is DIR's length (0: empty entry). Returns false when the entries
 * are exhausted; an entry whose candidate does not fit in @len is
 * skipped.
 */
bool util_path_next(struct util_path_search *s, char *buf, size_t len,
		    size_t *dlen);

/*
 * The keeper's signals (landlock-run, docs/RUNNERS.md). UTIL_KEEPER_KILL
 * ends the command and every process of its call at once (a SIGKILLed
 * keeper could end nothing else); it is also the keeper's parent-death
 * signal.
 */
#define UTIL_KEEPER_KILL SIGRTMAX

/*
 * util_keeper_sigset - every signal the keeper takes from a descriptor
 * rather than by its action: those it passes on to the command's session
 * (SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH), SIGCHLD,
 * the kill signal and SIGIO (its caller gone). They are blocked from its first
 * instruction when its caller starts it so (`--kept`: ward does): as init
 * of a pid namespace the keeper would otherwise lose one sent while its
 * action was still the default, since the kernel drops such a signal
 * from outside the namespace.
 */
void util_keeper_sigset(sigset_t *set);

/*
 * AddressSanitizer builds: a child started with clone(CLONE_VM) on a stack
 * borrowed from the parent's frame poisons shadow memory there in its
 * instrumented frames; util_unpoison_stack() clears it once the child is
 * gone, or the parent's later frames there look out of scope.
 */
#if defined(__SANITIZE_ADDRESS__)
#define UTIL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UTIL_ASAN 1
#endif
#endif
#ifdef UTIL_ASAN
void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
#define util_unpoison_stack(p, n) __asan_unpoison_memory_region((p), (n))
#else
#define util_unpoison_stack(p, n) ((void)0)
#endif

#endif
