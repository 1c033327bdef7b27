/*
 * ward — the thread-local last-error detail and string vectors.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "util/util.h"

static _Thread_local char last_error[1024];

/*
 * Formatted into a buffer of its own first: callers wrap the detail they
 * got (`ward_err(err, "cannot …: %s", ward_error_last())`), and printing
 * a buffer into itself leaves nothing after the colon (musl) or garbage
 * (glibc). That buffer holds the longest path several times over; a
 * message too long for last_error loses the middle of its longest words
 * (the paths), never its end (the reason after them).
 */
int ward_err(int err, const char *fmt, ...)
{
	char msg[4 * PATH_MAX] = "";
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	util_shorten_middle(msg, sizeof(last_error));
	memcpy(last_error, msg, strlen(msg) + 1);
	return err;
}

void ward_err_clear(void)
{
	last_error[0] = '\0';
}

static void (*_Atomic fatal_handler)(const char *message);

void ward_fatal_handler_set(void (*fn)(const char *message))
{
	fatal_handler = fn;
}

_Noreturn void ward_fatal(const char *fmt, ...)
{
	void (*fn)(const char *message) = fatal_handler;
	char msg[1024] = "";
	va_list ap;
	int n;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (fn)
		fn(msg);
	/* No handler, or one that returned: ward's status, not the
	 * library's (write(2): no stdio lock another thread may hold). */
	n = snprintf(last_error, sizeof(last_error), "ward: %s\n", msg);
	if (n > 0)
		(void)!write(STDERR_FILENO, last_error,
			     (size_t)n < sizeof(last_error)
				 ? (size_t)n
				 : sizeof(last_error) - 1);
	_exit(125);
}

int ward_bad_version(const char *what, unsigned got, unsigned newest)
{
	return ward_err(WARD_EINVAL,
			"%s: unknown version %u (this libward knows 1 to %u; "
			"initialise with the _INIT macro or the "
			"_options_init function)",
			what, got, newest);
}

const char *ward_version(void)
{
	return WARD_VERSION;
}

void ward_free(void *p)
{
	free(p);
}

const char *ward_error_last(void)
{
	return last_error;
}

const char *ward_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
	case WARD_EUNAVAILABLE:
		return "sandbox unavailable";
	case WARD_EINVAL:
		return "invalid argument";
	case WARD_ERUNNER:
		return "sandbox runner failed";
	case WARD_EREFUSED:
		return "escalation not granted";
	case WARD_ESTOPPED:
		return "stopped before it ended";
	case WARD_EDENIED:
		return "denied by the sandbox";
	case WARD_ENOTUNIQUE:
		return "text occurs more than once";
	case WARD_ENOTTEXT:
		return "not a text file";
	case WARD_ENOMATCH:
		return "text not found";
	default:
		if (err < 0 && err > -4096)
			return strerror(-err);
		return "unknown error";
	}
}

void ward_strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

size_t ward_strv_len(char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

void ward_strv_push(struct ward_strv *sv, const char *s)
{
	char *copy;

	if (sv->oom)
		return;
	if (sv->n + 2 > sv->cap) {
		size_t cap = sv->cap ? sv->cap * 2 : 16;
		char **v = realloc(sv->v, cap * sizeof(*v));

		if (!v) {
			sv->oom = true;
			return;
		}
		sv->v = v;
		sv->cap = cap;
	}
	copy = strdup(s);
	if (!copy) {
		sv->oom = true;
		return;
	}
	sv->v[sv->n++] = copy;
	sv->v[sv->n] = NULL;
}

void ward_strv_push_all(struct ward_strv *sv, char *const *v)
{
	for (size_t i = 0; v && v[i]; i++)
		ward_strv_push(sv, v[i]);
}

void ward_strv_discard(struct ward_strv *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = sv->cap = 0;
	sv->oom = false;
}

int ward_strv_finish(char ***out, struct ward_strv *sv)
{
	if (!sv->oom && !sv->v) {
		sv->v = calloc(1, sizeof(*sv->v));
		if (!sv->v)
			sv->oom = true;
	}
	if (sv->oom) {
		ward_strv_discard(sv);
		return ward_err(-ENOMEM, "out of memory");
	}
	*out = sv->v;
	sv->v = NULL;
	sv->n = sv->cap = 0;
	return 0;
}

char **ward_strv_dup(char *const *v)
{
	struct ward_strv sv = {0};
	char **out = NULL;

	ward_strv_push_all(&sv, v);
	if (ward_strv_finish(&out, &sv) != 0)
		return NULL;
	return out;
}
