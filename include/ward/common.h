/*
 * ward — common definitions: error codes, the last-error message, string
 * vectors and symbol visibility.
 *
 * Every libward function that can fail returns an int: 0 on success, a
 * negative errno value or a negative WARD_E* code on failure. A failing call
 * leaves a human-readable detail for ward_error_last() in thread-local
 * storage. Out-parameters come first and are written only on success.
 */
#ifndef WARD_COMMON_H
#define WARD_COMMON_H

#include <stddef.h>

#if defined(WARD_BUILDING) && defined(__GNUC__)
#define WARD_EXTERN __attribute__((visibility("default")))
#else
#define WARD_EXTERN
#endif

/* C++ callers see C linkage. */
#ifdef __cplusplus
#define WARD_BEGIN_DECL extern "C" {
#define WARD_END_DECL	}
#else
#define WARD_BEGIN_DECL
#define WARD_END_DECL
#endif

#define WARD_VERSION "0.1.0"

/*
 * ward's own error codes. They are negative and far below -4095 so they never
 * collide with a negated errno value.
 */
enum ward_error {
	/** No runner in the chain can confine; the command was NOT run. */
	WARD_EUNAVAILABLE = -10001,
	/** A value (mode, path, option) is not valid. */
	WARD_EINVAL = -10002,
	/** The confinement itself failed at run time; the command did not run. */
	WARD_ERUNNER = -10003,
	/** An in-process file operation was refused by the fence. */
	WARD_EDENIED = -10004,
	/** An escalation was not granted: the call did not run (call.h). */
	WARD_EREFUSED = -10005,
	/** The call was stopped (cancelled, or its front end shut down)
	 *  before it could end on its own (call.h, ward_call_stop). */
	WARD_ESTOPPED = -10006,
	/* fsfence (-101xx), beside -ENOENT, -ENOTDIR, -EISDIR and -EFBIG: */
	/** An edit's old text occurs more than once (and replace_all is off). */
	WARD_ENOTUNIQUE = -10101,
	/** Content is not text (NUL bytes or invalid UTF-8). */
	WARD_ENOTTEXT = -10102,
	/** An edit's old text does not occur in the file. */
	WARD_ENOMATCH = -10103,
};

/**
 * ward_error_last - the detail of the last failing call on this thread.
 *
 * Returns a string owned by libward, valid until the next libward call on
 * the same thread; never NULL ("" when there is none).
 */
WARD_EXTERN const char *ward_error_last(void);

/**
 * ward_fatal_handler_set - who ends the process when a library libward
 * uses cannot return from an error (libevent's fatal errors and failed
 * internal assertions, in the network proxy).
 *
 * libward never exits on its own errors; these come from inside a library
 * that ends the process when its callback returns. @fn is called with a
 * sentence saying what happened ("libevent: …"), on whichever thread hit
 * it, and must not return: a front end reports the failure its own way
 * and exits with its own status. Without a handler (or when @fn returns)
 * libward writes "ward: MESSAGE" to stderr and ends the process with
 * status 125 (ward itself failed), never with the library's status, which
 * could be mistaken for the command's. Process-wide; set it once, before
 * the first call.
 */
WARD_EXTERN void ward_fatal_handler_set(void (*fn)(const char *message));

/**
 * ward_strerror - a short fixed description of an error code returned by
 * libward (a WARD_E* code or a negative errno). Never NULL; static storage.
 */
WARD_EXTERN const char *ward_strerror(int err);

/**
 * ward_version - the version of the libward actually loaded ("0.1.0"),
 * which may differ from WARD_VERSION, the headers the caller compiled
 * against. Static storage.
 */
WARD_EXTERN const char *ward_version(void);

/**
 * ward_free - free one block libward handed over as a plain allocation (a
 * rendered text, a profile, ward_task_read()'s output). Use it instead of
 * free() from bindings and from programs that may use another C runtime's
 * allocator. Accepts NULL.
 */
WARD_EXTERN void ward_free(void *p);

/**
 * ward_strv_free - free a NULL-terminated vector of strings returned by
 * libward (argv, lists of roots). Accepts NULL.
 */
WARD_EXTERN void ward_strv_free(char **v);

/** ward_strv_len - the number of strings before the terminating NULL. */
WARD_EXTERN size_t ward_strv_len(char *const *v);

#endif
