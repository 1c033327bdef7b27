/*
 * ward — glob to POSIX ERE translation (internal to libward).
 *
 * Glob syntax (the access rules of seed 001):
 *   *        any run of bytes within one path component (never '/')
 *   ?        one byte other than '/'
 *   **       any run of bytes, '/' included
 *   **\/     at the start of a component: zero or more whole components
 *   [ab]     one byte of the set; ranges a-z; never '/'
 *   [!ab]    one byte outside the set (also [^ab]); never '/'
 * Everything else is literal, including '\' (there is no escape character:
 * write [*], [?] or [[] for a literal metacharacter). A leading '.' is
 * matched by * and ? like any other byte: a rule denying every
 * ".pem" file must cover `.secret.pem` too.
 *
 * The output is one anchored ERE restricted to what glibc's regcomp
 * (REG_EXTENDED) and Seatbelt's (regex #"…") both accept: ^ $ . * ? ( ) |,
 * bracket lists and backslash escapes of ^.[$()|*+?{\ only. It never
 * contains '"' (it could not be written inside #"…"), so a glob holding
 * '"' is refused.
 */
#ifndef WARD_GLOB_H
#define WARD_GLOB_H

#include <stdbool.h>
#include <stddef.h>

/* Also match everything below what the glob matches: append (/.*)? */
#define WARD_GLOB_SUBTREE 0x1u
/* Validate only: do not build the output (out may be NULL). */
#define WARD_GLOB_CHECK 0x2u

/*
 * ward_glob_is_magic - whether byte @i of @s is an active glob
 * metacharacter (* ? [) — that is, not marked literal in @lit.
 */
static inline bool ward_glob_is_magic(const char *s, const unsigned char *lit,
				      size_t i)
{
	return (s[i] == '*' || s[i] == '?' || s[i] == '[') && !(lit && lit[i]);
}

/*
 * ward_glob_translate - translate the glob @glob[0..@len) into an anchored
 * ERE (see above). @lit is NULL or @len flags: a non-zero flag makes that
 * byte literal even when it is a metacharacter (text that came from a
 * variable, the home directory or the workspace).
 *
 * On success *out (unless WARD_GLOB_CHECK) is a malloc'd string the caller
 * frees. On a malformed glob returns WARD_EINVAL, sets *why to a static
 * reason and *at to the offending byte offset; sets no error detail (the
 * caller knows the entry and formats it). -ENOMEM when out of memory.
 */
int ward_glob_translate(char **out, const char *glob, size_t len,
			const unsigned char *lit, unsigned flags,
			const char **why, size_t *at);

/*
 * ward_glob_prefix_len - the length of the literal directory prefix of the
 * absolute glob @glob: everything before the component holding the first
 * active metacharacter, without its trailing '/' ("/" itself is length 1).
 * For a glob without metacharacters, @len.
 */
size_t ward_glob_prefix_len(const char *glob, size_t len,
			    const unsigned char *lit);

/*
 * ward_glob_suffix - the trailing literal run of @glob after its last
 * active metacharacter (or bracket expression), leading '/' bytes dropped.
 * Every path the glob matches ends with it, so it is a cheap pre-filter
 * before regexec. Returns its offset; *n is its length (0: none).
 */
size_t ward_glob_suffix(const char *glob, size_t len, const unsigned char *lit,
			size_t *n);

/*
 * ward_glob_longest_run - the longest literal run of @glob from offset
 * @from on (runs are split by active metacharacters and bracket
 * expressions; leading '/' bytes dropped). Every path the glob matches
 * contains it. Returns its offset; *n is its length (0: none).
 */
size_t ward_glob_longest_run(const char *glob, size_t len,
			     const unsigned char *lit, size_t from, size_t *n);

#endif
