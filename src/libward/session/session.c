/*
 * ward — sessions: the JSONL log store, its knob folds and setters, and
 * the audit records. See include/ward/session.h for the contract.
 *
 * Reading is incremental. The knob folds are all a call needs, so opening
 * or refreshing a session reads only what was appended since the last read
 * and JSON-parses only the lines that can be knob events: a line ward wrote
 * starts with its type, and one whose type is not a knob's (call events,
 * escalation events, approval asks and decisions, MCP events, a harness's
 * own) is skipped without parsing. The event list itself (`ward session log`) is
 * read, and every line validated, only when asked for. So a call in a
 * session costs the same after 50,000 events as in a new one.
 *
 * A session object may be shared by threads: its own mutex guards what it
 * has read.
 *
 * Locking: every reader holds a shared flock() on the log file while it
 * reads, every writer an exclusive one while it repairs, appends and
 * syncs. flock() locks belong to the open file description, so threads
 * and processes serialize alike (each operation opens its own). Taking a
 * lock waits at most WARD_SESSION_LOCK_WAIT_MS: flock() needs nothing but
 * a read descriptor, so whoever can open the log can hold a lock for as
 * long as it lives. Confined runs cannot (the store is hidden from them,
 * protect.h); another process of the user, or a runner that could not hide
 * it, still can.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "libward/internal.h"
#include "libward/policy/facts.h"
#include "libward/policy/protect.h"
#include "util/util.h"
#include "ward/json.h"
#include "ward/session.h"

/* A log larger than this is refused rather than read into memory. */
#define LOG_MAX_BYTES (256u * 1024u * 1024u)
/* One event line larger than this is refused. */
#define LINE_MAX_BYTES (4u * 1024u * 1024u)

#define TYPE_HEADER   "session/header"
#define TYPE_MODE     "sandbox/mode"
#define TYPE_APPROVAL "approval/policy"
#define TYPE_NETWORK  "sandbox/network"
#define TYPE_REPAIRED "log/repaired"

enum knob {
	KNOB_NONE = 0,
	KNOB_MODE,
	KNOB_APPROVAL,
	KNOB_NETWORK,
};

/* The events that set a knob: their type, the member holding the value,
 * and what a value the knob does not know makes of the line. */
static const struct knob_event {
	const char *type, *member, *unknown;
	enum knob knob;
} knob_events[] = {
    {TYPE_MODE, "mode", "a sandbox/mode event with an unknown mode", KNOB_MODE},
    {TYPE_APPROVAL, "policy", "an approval/policy event with an unknown policy",
     KNOB_APPROVAL},
    {TYPE_NETWORK, "network", "a sandbox/network event with an unknown network",
     KNOB_NETWORK},
};

#define N_KNOB_EVENTS (sizeof(knob_events) / sizeof(knob_events[0]))

/* The event that sets @knob (not KNOB_NONE). */
static const struct knob_event *knob_event_of(enum knob knob)
{
	for (size_t i = 0; i < N_KNOB_EVENTS; i++) {
		if (knob_events[i].knob == knob)
			return &knob_events[i];
	}
	return &knob_events[0];
}

struct event {
	char *line; /* the JSON text, NUL-terminated, no newline */
	char *type;
	enum knob knob;
	int value; /* the knob's value (enum ward_mode / approval) */
};

/* What one read of a log yields. */
struct snapshot {
	char *cwd; /* NULL: none recorded */
	char *created;
	char *version;
	struct event *ev;
	size_t n, cap;
	bool torn;
	size_t torn_bytes;
};

struct ward_session {
	char *id;
	char *store; /* canonical */
	char *path;
	pthread_mutex_t lock; /* everything below */
	/* Header facts (read once). */
	char *cwd;
	char *created;
	char *version;
	/* The folds: the last knob values seen (-1: none yet). */
	int mode;
	int approval;
	int network;
	/* How far the log was read: whole lines up to @seen, of the file
	 * @dev/@ino; a torn last line is not counted. */
	off_t seen;
	dev_t dev;
	ino_t ino;
	size_t lines; /* lines up to @seen (the header included) */
	bool torn;
	/* An event was written and not yet synced (see append_line). */
	bool unsynced;
	/* The full event list, read when asked for (ward_session_event*). */
	struct snapshot snap;
	bool have_events;
};

/* --- small helpers ------------------------------------------------------ */

static void snapshot_clear(struct snapshot *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->ev[i].line);
		free(s->ev[i].type);
	}
	free(s->ev);
	free(s->cwd);
	free(s->created);
	free(s->version);
	memset(s, 0, sizeof(*s));
}

/*
 * Lock @fd, the log at @path, with flock(@how), polling (LOCK_NB, naps of
 * 1 ms growing to 50 ms) for at most lock_wait_ms(). Returns 0,
 * or an error with its detail set: -EAGAIN when another process held the
 * lock all along.
 */
/* The lock bound in ms: $WARD_SESSION_LOCK_WAIT_MS when it is a whole
 * number from 1 to 600000, else WARD_SESSION_LOCK_WAIT_MS. */
static long lock_wait_ms(void)
{
	const char *v = getenv("WARD_SESSION_LOCK_WAIT_MS");
	char *end;
	long ms;

	if (!v || *v < '0' || *v > '9')
		return WARD_SESSION_LOCK_WAIT_MS;
	errno = 0;
	ms = strtol(v, &end, 10);
	if (errno || *end || ms < 1 || ms > 600000)
		return WARD_SESSION_LOCK_WAIT_MS;
	return ms;
}

static int lock_fd(int fd, int how, const char *path)
{
	struct timespec t0, now, rem, nap = {0, 1000000L};
	long waited, bound = lock_wait_ms();

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (flock(fd, how | LOCK_NB) == 0)
			return 0;
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK)
			return ward_err(-errno, "cannot lock %s: %s", path,
					strerror(errno));
		clock_gettime(CLOCK_MONOTONIC, &now);
		waited = (long)(now.tv_sec - t0.tv_sec) * 1000L +
			 (now.tv_nsec - t0.tv_nsec) / 1000000L;
		if (waited >= bound)
			return ward_err(
			    -EAGAIN,
			    "cannot lock %s: another process has held a lock "
			    "on it for %.1f s; `fuser %s` names it",
			    path, (double)bound / 1000.0, path);
		rem = nap;
		while (nanosleep(&rem, &rem) != 0 && errno == EINTR)
			;
		nap.tv_nsec =
		    nap.tv_nsec >= 25000000L ? 50000000L : 2 * nap.tv_nsec;
	}
}

/* RFC 3339 UTC with milliseconds into @buf (at least 32 bytes). */
static void now_rfc3339(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;
	char base[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%.20s.%03uZ", base,
		 (unsigned)(ts.tv_nsec / 1000000L) % 1000u);
}

/* @n random bytes as 2n lowercase hex digits into @buf (2n + 1 bytes). */
static int random_hex(char *buf, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[32];
	size_t got = 0;
	ssize_t r;

	if (n > sizeof(raw))
		return ward_err(WARD_EINVAL, "random id too long");
	while (got < n) {
		r = getrandom(raw + got, n - got, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return ward_err(-errno, "getrandom: %s",
					strerror(errno));
		}
		got += (size_t)r;
	}
	for (size_t i = 0; i < n; i++) {
		buf[2 * i] = hex[raw[i] >> 4];
		buf[2 * i + 1] = hex[raw[i] & 15];
	}
	buf[2 * n] = '\0';
	return 0;
}

/* obj[key] = value (value stolen); false on ENOMEM. */
static bool put(json_t *obj, const char *key, json_t *value)
{
	return value && json_object_set_new(obj, key, value) == 0;
}

/* A new event object {"type": @type, "time": now}; NULL on ENOMEM. */
static json_t *event_new(const char *type)
{
	char when[40];
	json_t *obj = json_object();

	if (!obj)
		return NULL;
	now_rfc3339(when, sizeof(when));
	if (!put(obj, "type", json_string(type)) ||
	    !put(obj, "time", json_string(when))) {
		json_decref(obj);
		return NULL;
	}
	return obj;
}

/* Canonical path of the store: @store, or the default one. */
static int store_path(char **out, const char *store)
{
	if (store) {
		if (!*store)
			return ward_err(WARD_EINVAL,
					"empty session store path");
		*out = strdup(store);
		if (!*out)
			return ward_err(-ENOMEM, "out of memory");
		return 0;
	}
	return ward_session_store_default(out);
}

/* mkdir -p @path with mode 0700 for every directory it creates. */
static int mkdir_p(const char *path)
{
	char *copy = strdup(path);
	int err = 0;

	if (!copy)
		return ward_err(-ENOMEM, "out of memory");
	for (char *p = copy + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char saved = *p;

		*p = '\0';
		if (mkdir(copy, 0700) != 0 && errno != EEXIST) {
			err = ward_err(-errno, "cannot create %s: %s", copy,
				       strerror(errno));
			break;
		}
		*p = saved;
		if (!saved)
			break;
	}
	free(copy);
	return err;
}

/* "<dir>/<name>" into a new string; NULL on ENOMEM. */
static char *join(const char *dir, const char *name)
{
	char *s = NULL;

	if (asprintf(&s, "%s/%s", dir, name) < 0)
		return NULL;
	return s;
}

/* --- reading ------------------------------------------------------------ */

/* Read all of @fd from offset 0 (pread) into a new NUL-terminated buffer. */
static int read_all(char **out, size_t *out_len, int fd, const char *path)
{
	struct stat st;
	size_t cap, len = 0;
	char *buf, *p;
	ssize_t r;

	if (fstat(fd, &st) != 0)
		return ward_err(-errno, "%s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return ward_err(-EBADMSG, "%s: not a regular file", path);
	if ((unsigned long long)st.st_size > LOG_MAX_BYTES)
		return ward_err(-EFBIG, "%s: session log larger than %u bytes",
				path, LOG_MAX_BYTES);
	cap = (size_t)st.st_size + 1;
	buf = malloc(cap);
	if (!buf)
		return ward_err(-ENOMEM, "out of memory");
	for (;;) {
		if (len + 1 >= cap) {
			if (cap > LOG_MAX_BYTES) {
				free(buf);
				return ward_err(
				    -EFBIG, "%s: session log too large", path);
			}
			p = realloc(buf, cap * 2);
			if (!p) {
				free(buf);
				return ward_err(-ENOMEM, "out of memory");
			}
			buf = p;
			cap *= 2;
		}
		r = pread(fd, buf + len, cap - 1 - len, (off_t)len);
		if (r < 0) {
			int e = errno;

			if (e == EINTR)
				continue;
			free(buf);
			return ward_err(-e, "%s: %s", path, strerror(e));
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	buf[len] = '\0';
	*out = buf;
	*out_len = len;
	return 0;
}

static int corrupt(const char *path, size_t lineno, const char *why)
{
	return ward_err(-EBADMSG, "session log %s: line %zu: %s", path, lineno,
			why);
}

/*
 * A complete line longer than any event ward writes (append_event refuses
 * them) is refused before it is parsed: a hostile 200 MB line cost the
 * JSON parser half a minute and three times its size in memory.
 */
static int line_bounded(const char *path, size_t lineno, size_t len)
{
	char why[96];

	if (len <= LINE_MAX_BYTES)
		return 0;
	snprintf(why, sizeof(why),
		 "%zu bytes, longer than any event (at most %u bytes)", len,
		 LINE_MAX_BYTES);
	return corrupt(path, lineno, why);
}

static char *dup_string_member(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	return json_is_string(v) ? strdup(json_string_value(v)) : NULL;
}

/* Parse the header line into @snap; check it names @id. */
static int parse_header(struct snapshot *snap, json_t *obj, const char *id,
			const char *path)
{
	json_t *type = json_object_get(obj, "type");
	json_t *jid = json_object_get(obj, "id");
	json_t *cwd = json_object_get(obj, "cwd");

	if (!json_is_string(type) ||
	    strcmp(json_string_value(type), TYPE_HEADER) != 0)
		return corrupt(path, 1, "not a session header");
	if (!json_is_string(jid) || strcmp(json_string_value(jid), id) != 0)
		return corrupt(path, 1, "the header names another session id");
	if (cwd && !json_is_null(cwd) &&
	    (!json_is_string(cwd) || json_string_value(cwd)[0] != '/'))
		return corrupt(path, 1, "the header's cwd is not absolute");
	if (!json_is_string(json_object_get(obj, "created")) ||
	    !json_is_string(json_object_get(obj, "ward_version")))
		return corrupt(path, 1,
			       "the header lacks created or ward_version");
	snap->cwd = json_is_string(cwd) ? strdup(json_string_value(cwd)) : NULL;
	snap->created = dup_string_member(obj, "created");
	snap->version = dup_string_member(obj, "ward_version");
	if ((json_is_string(cwd) && !snap->cwd) || !snap->created ||
	    !snap->version)
		return ward_err(-ENOMEM, "out of memory");
	return 0;
}

/* The value of @knob spelled @text into *@value; false when unknown. */
static bool knob_parse(int *value, enum knob knob, const char *text)
{
	enum ward_approval_policy p;
	enum ward_network n;
	enum ward_mode m;

	switch (knob) {
	case KNOB_MODE:
		if (ward_mode_parse(&m, text) != 0)
			return false;
		*value = (int)m;
		return true;
	case KNOB_APPROVAL:
		if (ward_approval_policy_parse(&p, text) != 0)
			return false;
		*value = (int)p;
		return true;
	case KNOB_NETWORK:
		if (ward_network_parse(&n, text) != 0)
			return false;
		*value = (int)n;
		return true;
	case KNOB_NONE:
		break;
	}
	return false;
}

/* Validate one event line and append it to @snap. */
static int parse_event(struct snapshot *snap, json_t *obj, const char *line,
		       size_t len, size_t lineno, const char *path)
{
	json_t *type = json_object_get(obj, "type");
	struct event ev = {0};
	const char *t, *v;
	json_t *val;
	struct event *grown;

	if (!json_is_string(type) || !*json_string_value(type))
		return corrupt(path, lineno, "an event without a type");
	t = json_string_value(type);
	if (strcmp(t, TYPE_HEADER) == 0)
		return corrupt(path, lineno, "a second session header");
	for (size_t i = 0; i < N_KNOB_EVENTS; i++) {
		const struct knob_event *k = &knob_events[i];

		if (strcmp(t, k->type) != 0)
			continue;
		val = json_object_get(obj, k->member);
		v = json_is_string(val) ? json_string_value(val) : "";
		if (!knob_parse(&ev.value, k->knob, v))
			return corrupt(path, lineno, k->unknown);
		ev.knob = k->knob;
		break;
	}
	if (snap->n == snap->cap) {
		size_t cap = snap->cap ? snap->cap * 2 : 32;

		grown = realloc(snap->ev, cap * sizeof(*grown));
		if (!grown)
			return ward_err(-ENOMEM, "out of memory");
		snap->ev = grown;
		snap->cap = cap;
	}
	ev.line = strndup(line, len);
	ev.type = strdup(t);
	if (!ev.line || !ev.type) {
		free(ev.line);
		free(ev.type);
		return ward_err(-ENOMEM, "out of memory");
	}
	snap->ev[snap->n++] = ev;
	return 0;
}

/*
 * Parse a whole log. Bytes after the last newline are a torn append: they
 * are ignored (snap->torn). Every complete line must be valid.
 */
static int parse_log(struct snapshot *out, const char *buf, size_t len,
		     const char *id, const char *path)
{
	struct snapshot snap = {0};
	const char *p = buf, *end = buf + len, *nl;
	size_t lineno = 0;
	json_error_t jerr;
	json_t *obj;
	int err = 0;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl) {
			snap.torn = true;
			snap.torn_bytes = (size_t)(end - p);
			break;
		}
		lineno++;
		err = line_bounded(path, lineno, (size_t)(nl - p));
		if (err)
			goto out_clear;
		/* Duplicate keys are refused, as the knob scan refuses them:
		 * {"type":"x","type":"sandbox/mode"} must not be a knob to
		 * one reader and no knob to the other. */
		/* jansson takes {"a":1<NUL>} for {"a":1}: an event kept as
		 * text must be all of its line. */
		if (memchr(p, '\0', (size_t)(nl - p))) {
			err = corrupt(path, lineno, "a NUL byte in the line");
			goto out_clear;
		}
		obj = json_loadb(p, (size_t)(nl - p), JSON_REJECT_DUPLICATES,
				 &jerr);
		if (!obj || !json_is_object(obj)) {
			json_decref(obj);
			err = corrupt(path, lineno,
				      obj ? "not a JSON object" : jerr.text);
			goto out_clear;
		}
		if (lineno == 1)
			err = parse_header(&snap, obj, id, path);
		else
			err = parse_event(&snap, obj, p, (size_t)(nl - p),
					  lineno, path);
		json_decref(obj);
		if (err)
			goto out_clear;
		p = nl + 1;
	}
	if (lineno == 0) {
		err = ward_err(-EBADMSG, "session log %s: no session header",
			       path);
		goto out_clear;
	}
	*out = snap;
	return 0;

out_clear:
	snapshot_clear(&snap);
	return err;
}

/* Read and parse the log open on @fd (the caller holds a lock). */
static int load_fd(struct snapshot *out, int fd, const char *id,
		   const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	int err;

	err = read_all(&buf, &len, fd, path);
	if (err)
		return err;
	err = parse_log(out, buf, len, id, path);
	free(buf);
	return err;
}

/* Open the log of @s: O_RDONLY for readers, O_RDWR|O_APPEND for writers. */
static int open_log(const ward_session *s, bool write)
{
	int fd;

	do {
		fd = open(s->path, (write ? O_RDWR | O_APPEND : O_RDONLY) |
				       O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		if (errno == ENOENT)
			return ward_err(-ENOENT, "no session %s in %s", s->id,
					s->store);
		return ward_err(-errno, "%s: %s", s->path, strerror(errno));
	}
	return fd;
}

/* --- writing ------------------------------------------------------------ */

/*
 * Append one line (@line holds the text and its newline) to the log open
 * on @fd, which the caller has locked exclusively: one write() unless it
 * comes back short, then fdatasync() when @sync. Once write() returned,
 * the line is in the page cache: every reader sees it and a kill -9 of
 * the writer loses nothing; only a power loss before writeback can. The
 * events of a call (its start and result, a harness's own) are therefore
 * not synced one by one — an fdatasync costs 0.8-24 ms under load, twice
 * per call — but when the session is closed (ward_session_sync); the rare
 * events that change state (knobs, a repair) are synced at once, which
 * also makes every line before them durable. A short write to a regular file means
 * the disk filled up (or a size limit or a signal came) during it: the
 * rest is written again (util_write_all), which either finishes the line
 * or fails with the reason (ENOSPC, EFBIG), so the caller can name it; the
 * lock keeps the pieces from interleaving with another writer's. When the
 * write fails, the file is cut back to its old size so that no torn line
 * stays behind.
 */
static int append_line(int fd, const char *line, size_t len, const char *path,
		       bool sync)
{
	struct stat st;
	int err;

	if (fstat(fd, &st) != 0)
		return ward_err(-errno, "%s: %s", path, strerror(errno));
	err = util_write_all(fd, line, len);
	if (err) {
		if (ftruncate(fd, st.st_size) != 0) {
			/* The next append's repair will cut it. */
		}
		return ward_err(err, "cannot append to %s: %s", path,
				strerror(-err));
	}
	if (sync && fdatasync(fd) != 0)
		return ward_err(-errno, "cannot sync %s: %s", path,
				strerror(errno));
	return 0;
}

/* Serialize @obj as one line with its newline; NULL on error. */
static char *event_line(json_t *obj, size_t *len)
{
	char *text = json_dumps(obj, JSON_COMPACT);
	char *line;
	size_t n;

	if (!text)
		return NULL;
	n = strlen(text);
	line = malloc(n + 2);
	if (line) {
		memcpy(line, text, n);
		line[n] = '\n';
		line[n + 1] = '\0';
		*len = n + 1;
	}
	free(text);
	return line;
}

/*
 * Repair a torn tail of the log open (and exclusively locked) on @fd:
 * truncate the bytes after the last newline, then append a log/repaired
 * event saying how many were dropped. A torn append never returned success
 * to its writer, so what it left is not an event; truncating (rather than
 * ending it with a newline) keeps a crash from turning into a corrupt line
 * in the middle of the log.
 */
static int repair_tail(int fd, const char *path)
{
	struct stat st;
	char buf[4096];
	off_t pos, keep = -1;
	size_t chunk;
	ssize_t r;
	json_t *ev;
	char *line;
	size_t len = 0;
	int err;

	if (fstat(fd, &st) != 0)
		return ward_err(-errno, "%s: %s", path, strerror(errno));
	pos = st.st_size;
	while (pos > 0 && keep < 0) {
		chunk = pos > (off_t)sizeof(buf) ? sizeof(buf) : (size_t)pos;
		pos -= (off_t)chunk;
		do {
			r = pread(fd, buf, chunk, pos);
		} while (r < 0 && errno == EINTR);
		if (r < 0)
			return ward_err(-errno, "%s: %s", path,
					strerror(errno));
		if ((size_t)r != chunk)
			return ward_err(-EIO, "%s: short read", path);
		for (size_t i = chunk; i > 0; i--) {
			if (buf[i - 1] == '\n') {
				keep = pos + (off_t)i;
				break;
			}
		}
		/* Only the last line can be torn: look no further back. */
		if (pos + (off_t)chunk == st.st_size && keep == st.st_size)
			return 0;
	}
	if (keep == st.st_size)
		return 0;
	if (keep < 0)
		return ward_err(
		    -EBADMSG, "session log %s: no complete header line", path);
	if (ftruncate(fd, keep) != 0)
		return ward_err(-errno, "cannot repair %s: %s", path,
				strerror(errno));
	ev = event_new(TYPE_REPAIRED);
	if (!ev || !put(ev, "discarded_bytes",
			json_integer((json_int_t)(st.st_size - keep)))) {
		json_decref(ev);
		return ward_err(-ENOMEM, "out of memory");
	}
	line = event_line(ev, &len);
	json_decref(ev);
	if (!line)
		return ward_err(-ENOMEM, "out of memory");
	err = append_line(fd, line, len, path, true);
	free(line);
	return err;
}

/*
 * Append @obj to @s's log: open, lock exclusively, repair a torn tail,
 * write the line, close (which releases the lock). Not synced here: see
 * append_line; ward_session_sync() (and ward_session_free()) does it.
 */
static int append_event(ward_session *s, json_t *obj)
{
	char *line;
	size_t len = 0;
	int fd, err;

	line = event_line(obj, &len);
	if (!line)
		return ward_err(-ENOMEM, "out of memory");
	if (len > LINE_MAX_BYTES) {
		free(line);
		return ward_err(WARD_EINVAL, "event of %zu bytes is too large",
				len);
	}
	fd = open_log(s, true);
	if (fd < 0) {
		free(line);
		return fd;
	}
	err = lock_fd(fd, LOCK_EX, s->path);
	if (err)
		goto out_close;
	err = repair_tail(fd, s->path);
	if (!err)
		err = append_line(fd, line, len, s->path, false);
out_close:
	close(fd); /* releases the lock */
	free(line);
	/* After the file lock is released: s->lock is taken before the
	 * file lock elsewhere (refresh_locked, set_knob), never inside it. */
	if (!err) {
		pthread_mutex_lock(&s->lock);
		s->unsynced = true;
		pthread_mutex_unlock(&s->lock);
	}
	return err;
}

/* --- the store's protection --------------------------------------------- */

/*
 * The rule behind ward_session_check_policy(): a writable root of @policy
 * that is @store or an ancestor of it makes the store writable from inside
 * the sandbox — unless the store is a protected path (protect.h: ward's
 * state directory stays read-only on every runner and in the fence, inside
 * any writable root). A store elsewhere (an explicit store directory under
 * a writable root) is not protected, and is refused.
 */
static int check_store(const char *store, const ward_policy *policy,
		       const struct ward_facts *f)
{
	char **own = NULL;
	char *const *roots;
	int err = 0;

	if (ward_policy_mode(policy) == WARD_MODE_DANGER_FULL_ACCESS)
		return 0;
	/* Without the call's facts only the roots are needed, unless the
	 * store lies in one (then ward_protect_match() scans). */
	if (!f && (err = ward_roots_writable(&own, policy)) != 0)
		return err;
	roots = f ? f->roots : own;
	for (size_t i = 0; roots[i]; i++) {
		if (!util_path_within(store, roots[i]))
			continue;
		if ((f ? ward_protect_match_in(policy, f, store)
		       : ward_protect_match(policy, store)) !=
		    WARD_ACCESS_DEFAULT)
			continue;
		err = ward_err(WARD_EINVAL,
			       "the session store %s lies inside the writable "
			       "root %s and is not protected there: a "
			       "confined command could rewrite its own "
			       "session; refusing (move the workspace, the "
			       "store, XDG_STATE_HOME or TMPDIR)",
			       store, roots[i]);
		break;
	}
	ward_strv_free(own);
	return err;
}

/* --- exported: names ------------------------------------------------------ */

int ward_approval_policy_parse(enum ward_approval_policy *out, const char *text)
{
	if (text && strcmp(text, "ask") == 0) {
		*out = WARD_APPROVAL_ASK;
		return 0;
	}
	if (text && strcmp(text, "never") == 0) {
		*out = WARD_APPROVAL_NEVER;
		return 0;
	}
	return ward_err(WARD_EINVAL,
			"invalid approval policy '%s' (valid: ask, never)",
			text ? text : "(null)");
}

const char *ward_approval_policy_name(enum ward_approval_policy p)
{
	switch (p) {
	case WARD_APPROVAL_ASK:
		return "ask";
	case WARD_APPROVAL_NEVER:
		return "never";
	}
	return "unknown";
}

const char *ward_knob_source_name(enum ward_knob_source source)
{
	switch (source) {
	case WARD_KNOB_DEFAULT:
		return "default";
	case WARD_KNOB_SESSION:
		return "session";
	case WARD_KNOB_ESCALATION:
		return "escalation";
	}
	return "unknown";
}

bool ward_session_id_valid(const char *id)
{
	size_t n = 0;

	if (!id)
		return false;
	for (const char *p = id; *p; p++, n++) {
		char c = *p;

		if (n >= WARD_SESSION_ID_MAX)
			return false;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '-'))
			return false;
	}
	return n > 0;
}

/* WARD_EINVAL for an id ward_session_id_valid() refuses, with why. */
static int invalid_id(const char *id)
{
	return ward_err(WARD_EINVAL,
			"invalid session id '%s' (expected 1 to %d letters, "
			"digits or '-')",
			id ? id : "(null)", WARD_SESSION_ID_MAX);
}

int ward_session_store_default(char **out)
{
	const char *state = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	char *s = NULL;
	int n;

	/* The XDG spec: a relative value is invalid and must be ignored. */
	if (state && state[0] == '/')
		n = asprintf(&s, "%s/ward/sessions", state);
	else if (home && home[0] == '/')
		n = asprintf(&s, "%s/.local/state/ward/sessions", home);
	else
		return ward_err(WARD_EINVAL,
				"no session store: neither XDG_STATE_HOME nor "
				"HOME is an absolute path");
	if (n < 0)
		return ward_err(-ENOMEM, "out of memory");
	*out = s;
	return 0;
}

/* --- exported: lifecycle -------------------------------------------------- */

/* Make a session object for @id in the canonical @store (not read yet). */
static int session_alloc(ward_session **out, const char *store, const char *id)
{
	ward_session *s = calloc(1, sizeof(*s));
	char name[WARD_SESSION_ID_MAX + 8];

	if (!s)
		return ward_err(-ENOMEM, "out of memory");
	snprintf(name, sizeof(name), "%s.jsonl", id);
	s->id = strdup(id);
	s->store = strdup(store);
	s->path = join(store, name);
	pthread_mutex_init(&s->lock, NULL);
	s->mode = s->approval = s->network = -1;
	if (!s->id || !s->store || !s->path) {
		ward_session_free(s);
		return ward_err(-ENOMEM, "out of memory");
	}
	*out = s;
	return 0;
}

/*
 * The knob a line is, judged from its text alone: a line ward wrote
 * starts {"type":"…" — one whose type is not a knob's needs no parsing
 * (KNOB_NONE). -1: it cannot be told without parsing.
 */
static int knob_of_text(const char *line, size_t len)
{
	const char *p = line, *end = line + len;

	/* {"type":" — spaces allowed where JSON allows them. */
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p == end || *p++ != '{')
		return -1;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (end - p < 6 || memcmp(p, "\"type\"", 6) != 0)
		return -1;
	p += 6;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p == end || *p++ != ':')
		return -1;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p == end || *p++ != '"')
		return -1;
	for (size_t i = 0; i < N_KNOB_EVENTS; i++) {
		size_t tl = strlen(knob_events[i].type);

		if ((size_t)(end - p) > tl &&
		    memcmp(p, knob_events[i].type, tl) == 0 && p[tl] == '"')
			return (int)knob_events[i].knob;
	}
	/* Some other type; make sure the string ends (no escapes in a type
	 * ward writes, so a backslash means: parse). */
	for (; p < end; p++) {
		if (*p == '"')
			return KNOB_NONE;
		if (*p == '\\')
			return -1;
	}
	return -1;
}

/*
 * Fold the complete lines of @buf (@len bytes read from offset @s->seen)
 * into @s: the header when it is line 1, the knob events; everything else
 * is skipped unparsed when its text says it is no knob. Advances @s->seen
 * past the last complete line; a torn tail stays for the next read.
 */
static int scan_lines(ward_session *s, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len, *nl;
	struct snapshot one = {0};
	json_error_t jerr;
	json_t *obj;
	int err = 0, k;

	s->torn = false;
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl) {
			s->torn = true;
			break;
		}
		s->lines++;
		err = line_bounded(s->path, s->lines, (size_t)(nl - p));
		if (err)
			return err;
		k = s->lines == 1 ? -1 : knob_of_text(p, (size_t)(nl - p));
		if (k == KNOB_NONE)
			goto next;
		if (memchr(p, '\0', (size_t)(nl - p)))
			return corrupt(s->path, s->lines,
				       "a NUL byte in the line");
		obj = json_loadb(p, (size_t)(nl - p), JSON_REJECT_DUPLICATES,
				 &jerr);
		if (!obj || !json_is_object(obj)) {
			json_decref(obj);
			return corrupt(s->path, s->lines,
				       obj ? "not a JSON object" : jerr.text);
		}
		if (s->lines == 1) {
			err = parse_header(&one, obj, s->id, s->path);
			if (!err) {
				s->cwd = one.cwd;
				s->created = one.created;
				s->version = one.version;
				one.cwd = one.created = one.version = NULL;
			}
		} else {
			err = parse_event(&one, obj, p, (size_t)(nl - p),
					  s->lines, s->path);
			if (!err && one.n && one.ev[0].knob == KNOB_MODE)
				s->mode = one.ev[0].value;
			else if (!err && one.n &&
				 one.ev[0].knob == KNOB_APPROVAL)
				s->approval = one.ev[0].value;
			else if (!err && one.n &&
				 one.ev[0].knob == KNOB_NETWORK)
				s->network = one.ev[0].value;
		}
		json_decref(obj);
		snapshot_clear(&one);
		if (err)
			return err;
	next:
		s->seen += (off_t)(nl + 1 - p);
		p = nl + 1;
	}
	if (s->lines == 0)
		return ward_err(-EBADMSG, "session log %s: no session header",
				s->path);
	return 0;
}

/*
 * Read and fold line 1, the header, of the log open on @fd (s->lines is 0).
 * A header is written whole when the session is created, so its newline
 * is within the first LINE_MAX_BYTES.
 */
static int read_header(ward_session *s, int fd, const struct stat *st)
{
	size_t cap = (size_t)st->st_size < 4096 ? (size_t)st->st_size : 4096;
	char *buf = NULL;
	ssize_t r;
	int err;

	for (;;) {
		char *grown = realloc(buf, cap + 1);

		if (!grown) {
			free(buf);
			return ward_err(-ENOMEM, "out of memory");
		}
		buf = grown;
		do {
			r = pread(fd, buf, cap, 0);
		} while (r < 0 && errno == EINTR);
		if (r < 0) {
			err = ward_err(-errno, "%s: %s", s->path,
				       strerror(errno));
			goto out_free;
		}
		if (memchr(buf, '\n', (size_t)r) || (size_t)r < cap ||
		    cap >= LINE_MAX_BYTES)
			break;
		cap *= 2;
	}
	if (!memchr(buf, '\n', (size_t)r)) {
		err = ward_err(-EBADMSG, "session log %s: no session header",
			       s->path);
		goto out_free;
	}
	/* Only the first line: scan_lines stops at it. */
	r = (char *)memchr(buf, '\n', (size_t)r) - buf + 1;
	err = scan_lines(s, buf, (size_t)r);
out_free:
	free(buf);
	return err;
}

/* Forget what was read (the file was replaced or cut: read it anew). */
static void forget_read(ward_session *s)
{
	free(s->cwd);
	free(s->created);
	free(s->version);
	s->cwd = s->created = s->version = NULL;
	s->mode = s->approval = s->network = -1;
	s->seen = 0;
	s->lines = 0;
	s->torn = false;
}

/*
 * The fold checkpoint: a session that has run thousands of calls must not
 * make every new call read megabytes of call records. After a read that
 * scanned a lot, what it folded (how far it read, the knobs, the line
 * count) is kept in <store>/.<id>.fold — a cache of the log, never a store:
 * it is used only when it names the same file (device, inode), the log is
 * at least that long and the bytes just before that point hash to what it
 * says (a log rewritten or cut is read anew), and only when it belongs to
 * us and nobody else may write it. The store is a protected path, read-only
 * inside every confined run, like the log itself.
 */
#define FOLD_MAGIC    "ward-fold 2"
#define FOLD_TAIL     256
#define FOLD_MIN_SCAN (64 * 1024)

/* FNV-1a of the @n bytes of the log ending at @end (fewer at the start). */
static int tail_hash(int fd, off_t end, unsigned long long *out)
{
	char buf[FOLD_TAIL];
	off_t from = end > FOLD_TAIL ? end - FOLD_TAIL : 0;
	unsigned long long h = 0xcbf29ce484222325ULL;
	ssize_t r;

	do {
		r = pread(fd, buf, (size_t)(end - from), from);
	} while (r < 0 && errno == EINTR);
	if (r != end - from)
		return -EIO;
	for (ssize_t i = 0; i < r; i++) {
		h ^= (unsigned char)buf[i];
		h *= 0x100000001b3ULL;
	}
	*out = h;
	return 0;
}

static char *fold_path(const ward_session *s, bool tmp)
{
	char name[WARD_SESSION_ID_MAX + 40];

	snprintf(name, sizeof(name), tmp ? ".%s.fold.%ld" : ".%s.fold", s->id,
		 (long)getpid());
	return join(s->store, name);
}

/*
 * Start from the checkpoint when it is valid for the log open on @fd
 * (whose header has just been read: s->lines == 1). s->lock held.
 */
static void fold_load(ward_session *s, int fd, const struct stat *st)
{
	char buf[256], *path = fold_path(s, false);
	unsigned long long dev, ino, seen, lines, hash, now;
	int mode, approval, network, ffd, n;
	struct stat fst;
	ssize_t r;

	if (!path)
		return;
	ffd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	free(path);
	if (ffd < 0)
		return;
	r = -1;
	if (fstat(ffd, &fst) == 0 && S_ISREG(fst.st_mode) &&
	    fst.st_uid == geteuid() && !(fst.st_mode & 022))
		r = read(ffd, buf, sizeof(buf) - 1);
	close(ffd);
	if (r <= 0)
		return;
	buf[r] = '\0';
	n = sscanf(buf, FOLD_MAGIC " %llu %llu %llu %llu %d %d %d %llx", &dev,
		   &ino, &seen, &lines, &mode, &approval, &network, &hash);
	if (n != 8 || network < -1 || network > WARD_NETWORK_ON ||
	    dev != (unsigned long long)st->st_dev ||
	    ino != (unsigned long long)st->st_ino ||
	    seen > (unsigned long long)st->st_size ||
	    seen < (unsigned long long)s->seen || lines < 1 || mode < -1 ||
	    mode > WARD_MODE_DANGER_FULL_ACCESS || approval < -1 ||
	    approval > WARD_APPROVAL_NEVER)
		return;
	if (tail_hash(fd, (off_t)seen, &now) != 0 || now != hash)
		return;
	s->seen = (off_t)seen;
	s->lines = (size_t)lines;
	s->mode = mode;
	s->approval = approval;
	s->network = network;
}

/* Keep what was folded up to s->seen (best effort). s->lock held. */
static void fold_store(ward_session *s, int fd)
{
	char *tmp = fold_path(s, true), *path = fold_path(s, false);
	unsigned long long hash;
	char buf[256];
	int ffd, n;

	if (!tmp || !path || tail_hash(fd, s->seen, &hash) != 0)
		goto out_free;
	n = snprintf(buf, sizeof(buf),
		     FOLD_MAGIC " %llu %llu %llu %llu %d %d %d %llx\n",
		     (unsigned long long)s->dev, (unsigned long long)s->ino,
		     (unsigned long long)s->seen, (unsigned long long)s->lines,
		     s->mode, s->approval, s->network, hash);
	ffd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		   0600);
	if (ffd < 0)
		goto out_free;
	if (write(ffd, buf, (size_t)n) != n || close(ffd) != 0 ||
	    rename(tmp, path) != 0)
		unlink(tmp);
	else
		ffd = -1;
	if (ffd >= 0)
		close(ffd);
out_free:
	free(tmp);
	free(path);
}

/*
 * Bring the folds up to date from the log open (and locked) on @fd: read
 * from where the last read stopped, or from the start when the file is
 * another one or shorter than what was read. s->lock held.
 */
static int refresh_fd(ward_session *s, int fd)
{
	struct stat st;
	off_t start;
	size_t cap, len = 0;
	char *buf = NULL;
	ssize_t r;
	int err;

	if (fstat(fd, &st) != 0)
		return ward_err(-errno, "%s: %s", s->path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return ward_err(-EBADMSG, "%s: not a regular file", s->path);
	if ((unsigned long long)st.st_size > LOG_MAX_BYTES)
		return ward_err(-EFBIG, "%s: session log larger than %u bytes",
				s->path, LOG_MAX_BYTES);
	if (st.st_dev != s->dev || st.st_ino != s->ino ||
	    st.st_size < s->seen) {
		forget_read(s);
		s->dev = st.st_dev;
		s->ino = st.st_ino;
	}
	if (st.st_size == s->seen)
		return s->lines ? 0
				: ward_err(-EBADMSG,
					   "session log %s: no session "
					   "header",
					   s->path);
	if (s->lines == 0) {
		/* The header first; then, when a checkpoint holds what the
		 * rest folds to, only what was appended after it. */
		err = read_header(s, fd, &st);
		if (err)
			return err;
		fold_load(s, fd, &st);
		if (st.st_size == s->seen)
			return 0;
	}
	start = s->seen;
	cap = (size_t)(st.st_size - s->seen);
	buf = malloc(cap + 1);
	if (!buf)
		return ward_err(-ENOMEM, "out of memory");
	while (len < cap) {
		r = pread(fd, buf + len, cap - len, s->seen + (off_t)len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = ward_err(-errno, "%s: %s", s->path,
				       strerror(errno));
			goto out_free;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	err = scan_lines(s, buf, len);
	if (err)
		forget_read(s); /* read it all again next time */
	else if (s->seen - start >= FOLD_MIN_SCAN)
		fold_store(s, fd);
out_free:
	free(buf);
	return err;
}

/* The log open for reading and share-locked, or -errno. */
static int open_shared(ward_session *s)
{
	int fd, err;

	fd = open_log(s, false);
	if (fd < 0)
		return fd;
	err = lock_fd(fd, LOCK_SH, s->path);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* Open the log, share-lock it and bring the folds up to date. */
static int refresh_locked(ward_session *s)
{
	int fd, err;

	fd = open_shared(s);
	if (fd < 0)
		return fd;
	err = refresh_fd(s, fd);
	close(fd);
	return err;
}

int ward_session_refresh(ward_session *s)
{
	int err;

	if (!s)
		return ward_err(WARD_EINVAL, "no session");
	pthread_mutex_lock(&s->lock);
	err = refresh_locked(s);
	pthread_mutex_unlock(&s->lock);
	return err;
}

/* Read every event (validating every line) into s->snap. s->lock held. */
static int load_events(ward_session *s)
{
	struct snapshot snap = {0};
	int fd, err;

	fd = open_shared(s);
	if (fd < 0)
		return fd;
	err = load_fd(&snap, fd, s->id, s->path);
	if (err)
		goto out_close;
	snapshot_clear(&s->snap);
	s->snap = snap;
	s->have_events = true;
	/* The folds from the same read. */
	err = refresh_fd(s, fd);
out_close:
	close(fd);
	return err;
}

int ward_session_reload(ward_session *s)
{
	int err;

	if (!s)
		return ward_err(WARD_EINVAL, "no session");
	pthread_mutex_lock(&s->lock);
	err = load_events(s);
	pthread_mutex_unlock(&s->lock);
	return err;
}

int ward_session_open(ward_session **out, const char *store, const char *id)
{
	ward_session *s = NULL;
	char *dir = NULL, *real = NULL;
	int err;

	if (!ward_session_id_valid(id))
		return invalid_id(id);
	err = store_path(&dir, store);
	if (err)
		return err;
	real = realpath(dir, NULL);
	if (!real) {
		err = errno == ENOENT
			  ? ward_err(-ENOENT, "no session %s (no store %s)", id,
				     dir)
			  : ward_err(-errno, "session store %s: %s", dir,
				     strerror(errno));
		goto out_free;
	}
	err = session_alloc(&s, real, id);
	if (err)
		goto out_free;
	err = ward_session_refresh(s);
	if (err) {
		ward_session_free(s);
		goto out_free;
	}
	*out = s;
out_free:
	free(real);
	free(dir);
	return err;
}

/*
 * The line of a knob event @type ("mode" or "policy" = @value) appended to
 * @buf (malloc'd, grown); false on ENOMEM.
 */
static bool add_knob_line(char **buf, size_t *len, const char *type,
			  const char *key, const char *value)
{
	json_t *ev = event_new(type);
	size_t n = 0;
	char *line, *grown;

	if (!ev || !put(ev, key, json_string(value))) {
		json_decref(ev);
		return false;
	}
	line = event_line(ev, &n);
	json_decref(ev);
	if (!line)
		return false;
	grown = realloc(*buf, *len + n + 1);
	if (!grown) {
		free(line);
		return false;
	}
	memcpy(grown + *len, line, n + 1);
	*buf = grown;
	*len += n;
	free(line);
	return true;
}

/*
 * Write the header of a new session @id, and its initial knob events, to a
 * temporary file, then link it: the session never exists without them.
 */
static int create_file(const char *store, const char *id, const char *cwd,
		       const struct ward_session_create_options *o)
{
	char when[40], tmpname[WARD_SESSION_ID_MAX + 40];
	char name[WARD_SESSION_ID_MAX + 8];
	char *tmp = NULL, *final = NULL, *line = NULL;
	json_t *hdr;
	size_t len = 0;
	int fd = -1, dfd, err;

	now_rfc3339(when, sizeof(when));
	hdr = json_object();
	if (!hdr || !put(hdr, "type", json_string(TYPE_HEADER)) ||
	    !put(hdr, "id", json_string(id)) ||
	    !put(hdr, "cwd", ward_json_str(cwd)) ||
	    !put(hdr, "created", json_string(when)) ||
	    !put(hdr, "ward_version", json_string(WARD_VERSION))) {
		json_decref(hdr);
		return ward_err(-ENOMEM, "out of memory");
	}
	line = event_line(hdr, &len);
	json_decref(hdr);
	if (line && o->set_mode &&
	    !add_knob_line(&line, &len, TYPE_MODE, "mode",
			   ward_mode_name(o->mode))) {
		free(line);
		line = NULL;
	}
	if (line && o->set_approval &&
	    !add_knob_line(&line, &len, TYPE_APPROVAL, "policy",
			   ward_approval_policy_name(o->approval))) {
		free(line);
		line = NULL;
	}
	snprintf(tmpname, sizeof(tmpname), ".%s.%ld.tmp", id, (long)getpid());
	snprintf(name, sizeof(name), "%s.jsonl", id);
	tmp = join(store, tmpname);
	final = join(store, name);
	if (!line || !tmp || !final) {
		err = ward_err(-ENOMEM, "out of memory");
		goto out_free;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0) {
		err = ward_err(-errno, "cannot create %s: %s", tmp,
			       strerror(errno));
		goto out_free;
	}
	err = util_write_all(fd, line, len);
	if (!err && fdatasync(fd) != 0)
		err = -errno;
	if (close(fd) != 0 && !err)
		err = -errno;
	if (err) {
		err = ward_err(err, "cannot write %s: %s", tmp, strerror(-err));
		goto out_unlink;
	}
	/* link() never replaces: a colliding id gives EEXIST. */
	if (link(tmp, final) != 0) {
		err = errno == EEXIST ? -EEXIST
				      : ward_err(-errno, "cannot create %s: %s",
						 final, strerror(errno));
		goto out_unlink;
	}
	dfd = open(store, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
out_unlink:
	unlink(tmp);
out_free:
	free(line);
	free(tmp);
	free(final);
	return err;
}

/*
 * The default store lies under $HOME unless XDG_STATE_HOME moves it: then
 * the home directory must exist. Accounts without one point HOME at a
 * path that must never exist (Debian's /nonexistent); creating it, as root
 * could, would give every such account a shared, writable home.
 */
static int check_home_base(void)
{
	const char *state = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	struct stat st;

	if ((state && state[0] == '/') || !home || home[0] != '/')
		return 0; /* XDG decides, or store_path() refuses */
	if (stat(home, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	return ward_err(WARD_EINVAL,
			"no session store: HOME (%s) is not an existing "
			"directory, and ward does not create it; set "
			"XDG_STATE_HOME or create the home directory",
			home);
}

int ward_session_create(ward_session **out, const char *store, const char *cwd)
{
	struct ward_session_create_options o = WARD_SESSION_CREATE_OPTIONS_INIT;

	o.store = store;
	o.cwd = cwd;
	return ward_session_create_with(out, &o);
}

int ward_session_create_options_init(struct ward_session_create_options *o,
				     unsigned version)
{
	const struct ward_session_create_options init =
	    WARD_SESSION_CREATE_OPTIONS_INIT;

	if (!o)
		return ward_err(WARD_EINVAL, "session options: NULL");
	if (version != 1 && version != WARD_SESSION_CREATE_OPTIONS_VERSION)
		return ward_bad_version("session create options", version,
					WARD_SESSION_CREATE_OPTIONS_VERSION);
	if (version == 1) {
		/* A version-1 struct ends before `id`. */
		memcpy(o, &init,
		       offsetof(struct ward_session_create_options, id));
		o->version = 1;
		return 0;
	}
	*o = init;
	return 0;
}

int ward_session_create_with(ward_session **out,
			     const struct ward_session_create_options *o)
{
	char *dir = NULL, *real_store = NULL, *real_cwd = NULL;
	const char *store, *cwd, *given_id;
	ward_policy *probe = NULL;
	char id[WARD_SESSION_ID_MAX + 1];
	struct stat st;
	int err, tries = 0;

	if (!out || !o)
		return ward_err(WARD_EINVAL, "session: missing argument");
	if (o->version != 1 &&
	    o->version != WARD_SESSION_CREATE_OPTIONS_VERSION)
		return ward_bad_version("session create options", o->version,
					WARD_SESSION_CREATE_OPTIONS_VERSION);
	given_id = o->version >= 2 ? o->id : NULL;
	if (given_id && !ward_session_id_valid(given_id))
		return ward_err(WARD_EINVAL,
				"invalid session id '%.80s' (1 to %d letters, "
				"digits and '-')",
				given_id, WARD_SESSION_ID_MAX);
	if ((o->set_mode && (unsigned)o->mode > WARD_MODE_DANGER_FULL_ACCESS) ||
	    (o->set_approval && (unsigned)o->approval > WARD_APPROVAL_NEVER))
		return ward_err(WARD_EINVAL,
				"session: unknown initial mode or approval");
	store = o->store;
	cwd = o->cwd;
	err = store_path(&dir, store);
	if (err)
		return err;
	if (dir[0] != '/') {
		err = ward_err(WARD_EINVAL,
			       "session store %s is not an absolute path", dir);
		goto out_free;
	}
	if (!store && (err = check_home_base()) != 0)
		goto out_free;
	err = mkdir_p(dir);
	if (err)
		goto out_free;
	real_store = realpath(dir, NULL);
	if (!real_store || stat(real_store, &st) != 0 || !S_ISDIR(st.st_mode)) {
		err = ward_err(real_store ? -ENOTDIR : -errno,
			       "session store %s is not a directory", dir);
		goto out_free;
	}
	if (cwd) {
		real_cwd = realpath(cwd, NULL);
		if (!real_cwd) {
			err = ward_err(-errno, "session cwd %s: %s", cwd,
				       strerror(errno));
			goto out_free;
		}
		if (stat(real_cwd, &st) != 0 || !S_ISDIR(st.st_mode)) {
			err = ward_err(
			    -ENOTDIR, "session cwd %s is not a directory", cwd);
			goto out_free;
		}
		/* The widest confined mode decides: if workspace-write over
		 * this cwd could write the store, every call would be
		 * refused, so refuse the session now. */
		err = ward_policy_new(&probe, WARD_MODE_WORKSPACE_WRITE,
				      real_cwd);
		if (!err)
			err = ward_policy_set_tmpdir(probe, NULL);
		if (!err && util_path_within(real_store, real_cwd))
			err = check_store(real_store, probe, NULL);
		ward_policy_free(probe);
		if (err)
			goto out_free;
	}
	if (given_id) {
		snprintf(id, sizeof(id), "%s", given_id);
		err = create_file(real_store, id, real_cwd, o);
		if (err == -EEXIST)
			err = ward_err(-EEXIST, "session %s exists", id);
	} else {
		do {
			err = random_hex(id, 8);
			if (err)
				goto out_free;
			err = create_file(real_store, id, real_cwd, o);
		} while (err == -EEXIST && ++tries < 8);
		if (err == -EEXIST)
			err =
			    ward_err(-EEXIST, "cannot find a free session id");
	}
	if (err)
		goto out_free;
	err = ward_session_open(out, real_store, id);
out_free:
	free(real_cwd);
	free(real_store);
	free(dir);
	return err;
}

int ward_session_sync(ward_session *s)
{
	bool unsynced;
	int fd, err = 0;

	if (!s)
		return ward_err(WARD_EINVAL, "session: invalid argument");
	pthread_mutex_lock(&s->lock);
	unsynced = s->unsynced;
	s->unsynced = false;
	pthread_mutex_unlock(&s->lock);
	if (!unsynced)
		return 0;
	fd = open_log(s, false);
	if (fd < 0)
		return fd;
	if (fdatasync(fd) != 0)
		err = ward_err(-errno, "cannot sync %s: %s", s->path,
			       strerror(errno));
	close(fd);
	return err;
}

void ward_session_free(ward_session *s)
{
	if (!s)
		return;
	/* Best effort: a caller that must know calls ward_session_sync(). */
	(void)ward_session_sync(s);
	snapshot_clear(&s->snap);
	forget_read(s);
	pthread_mutex_destroy(&s->lock);
	free(s->id);
	free(s->store);
	free(s->path);
	free(s);
}

int ward_session_list(char ***out, const char *store)
{
	struct ward_strv sv = {0};
	char *dir = NULL, **v = NULL;
	struct dirent *de;
	DIR *d;
	int err;

	err = store_path(&dir, store);
	if (err)
		return err;
	d = opendir(dir);
	if (!d && errno != ENOENT) {
		err = ward_err(-errno, "session store %s: %s", dir,
			       strerror(errno));
		goto out_free;
	}
	while (d && (de = readdir(d))) {
		size_t n = strlen(de->d_name);
		char id[WARD_SESSION_ID_MAX + 1];

		if (n <= 6 || strcmp(de->d_name + n - 6, ".jsonl") != 0 ||
		    n - 6 > WARD_SESSION_ID_MAX)
			continue;
		memcpy(id, de->d_name, n - 6);
		id[n - 6] = '\0';
		if (ward_session_id_valid(id))
			ward_strv_push(&sv, id);
	}
	if (d)
		closedir(d);
	err = ward_strv_finish(&v, &sv);
	if (err) {
		err = ward_err(err, "out of memory");
		goto out_free;
	}
	qsort(v, ward_strv_len(v), sizeof(*v), util_strp_cmp);
	*out = v;
out_free:
	free(dir);
	return err;
}

int ward_session_find(char **out, const char *store, const char *id)
{
	struct ward_strv hits = {0};
	char **ids = NULL, *list;
	size_t n, k;
	int err;

	if (!out)
		return ward_err(WARD_EINVAL, "session find: missing argument");
	if (!ward_session_id_valid(id))
		return invalid_id(id);
	err = ward_session_list(&ids, store);
	if (err)
		return err;
	n = strlen(id);
	for (size_t i = 0; ids[i]; i++) {
		if (strcmp(ids[i], id) == 0) {
			/* An exact id wins over the longer ones it begins. */
			ward_strv_discard(&hits);
			memset(&hits, 0, sizeof(hits));
			ward_strv_push(&hits, ids[i]);
			break;
		}
		if (strncmp(ids[i], id, n) == 0)
			ward_strv_push(&hits, ids[i]);
	}
	ward_strv_free(ids);
	if (hits.oom) {
		err = ward_err(-ENOMEM, "out of memory");
	} else if (hits.n == 0) {
		err = ward_err(-ENOENT, "no session %s", id);
	} else if (hits.n > 1) {
		/* Name a few; enough to pick a longer prefix. */
		k = hits.n < 4 ? hits.n : 4;
		list = NULL;
		if (asprintf(&list, "%s, %s%s%s%s%s", hits.v[0], hits.v[1],
			     k > 2 ? ", " : "", k > 2 ? hits.v[2] : "",
			     k > 3 ? ", " : "", k > 3 ? hits.v[3] : "") < 0)
			list = NULL;
		err = ward_err(WARD_EINVAL,
			       "session id prefix '%s' is ambiguous: %zu "
			       "sessions begin with it (%s%s); give more of "
			       "the id",
			       id, hits.n, list ? list : "?",
			       hits.n > k ? ", …" : "");
		free(list);
	} else {
		*out = strdup(hits.v[0]);
		if (!*out)
			err = ward_err(-ENOMEM, "out of memory");
	}
	ward_strv_discard(&hits);
	return err;
}

/*
 * Remove the log @id of @store (canonical) under its exclusive lock, so no
 * append is cut in half. Returns 0, -ENOENT, -EAGAIN (the lock is held by
 * another process: see lock_fd) or another error.
 */
static int remove_locked(const char *store, const char *id)
{
	char name[WARD_SESSION_ID_MAX + 8];
	char *path;
	int fd, dfd, err = 0;

	snprintf(name, sizeof(name), "%s.jsonl", id);
	path = join(store, name);
	if (!path)
		return ward_err(-ENOMEM, "out of memory");
	do {
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		err = errno == ENOENT
			  ? ward_err(-ENOENT, "no session %s in %s", id, store)
			  : ward_err(-errno, "%s: %s", path, strerror(errno));
		goto out_free;
	}
	err = lock_fd(fd, LOCK_EX, path);
	if (!err && unlink(path) != 0)
		err = ward_err(-errno, "cannot remove %s: %s", path,
			       strerror(errno));
	close(fd);
	if (!err) {
		dfd = open(store, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0) {
			fsync(dfd);
			close(dfd);
		}
	}
out_free:
	free(path);
	return err;
}

/* The canonical store (@store, or the default one) into *out. */
static int real_store_path(char **out, const char *store)
{
	char *dir = NULL;
	int err = store_path(&dir, store);

	if (err)
		return err;
	*out = realpath(dir, NULL);
	if (!*out)
		err = errno == ENOENT
			  ? ward_err(-ENOENT, "no session store %s", dir)
			  : ward_err(-errno, "session store %s: %s", dir,
				     strerror(errno));
	free(dir);
	return err;
}

int ward_session_remove(const char *store, const char *id)
{
	char *real = NULL;
	int err;

	if (!ward_session_id_valid(id))
		return invalid_id(id);
	err = real_store_path(&real, store);
	if (err == -ENOENT)
		return ward_err(-ENOENT, "no session %s (%s)", id,
				ward_error_last());
	if (err)
		return err;
	err = remove_locked(real, id);
	free(real);
	return err;
}

int ward_session_prune(char ***removed, char ***busy, const char *store,
		       unsigned long long older_than_s)
{
	struct ward_strv rm = {0}, skipped = {0};
	char **ids = NULL, *real = NULL, **r = NULL, **b = NULL;
	struct timespec now;
	int err;

	if (!removed)
		return ward_err(WARD_EINVAL, "session prune: missing argument");
	err = ward_session_list(&ids, store);
	if (err)
		return err;
	if (!ids[0])
		goto out_finish;
	err = real_store_path(&real, store);
	if (err)
		goto out_free;
	clock_gettime(CLOCK_REALTIME, &now);
	for (size_t i = 0; ids[i]; i++) {
		char name[WARD_SESSION_ID_MAX + 8];
		struct stat st;
		char *path;
		int rc;

		snprintf(name, sizeof(name), "%s.jsonl", ids[i]);
		path = join(real, name);
		if (!path) {
			err = ward_err(-ENOMEM, "out of memory");
			goto out_free;
		}
		/* The last append is the last activity (lstat: a log is
		 * never a symlink; one is left alone). */
		rc = lstat(path, &st);
		free(path);
		if (rc != 0 || !S_ISREG(st.st_mode) ||
		    st.st_mtim.tv_sec > now.tv_sec ||
		    (unsigned long long)(now.tv_sec - st.st_mtim.tv_sec) <
			older_than_s)
			continue;
		rc = remove_locked(real, ids[i]);
		if (rc == 0)
			ward_strv_push(&rm, ids[i]);
		else if (rc == -EAGAIN)
			ward_strv_push(&skipped, ids[i]);
		else if (rc != -ENOENT) {
			err = rc;
			goto out_free;
		}
	}
out_finish:
	err = ward_strv_finish(&r, &rm);
	if (!err && busy) {
		err = ward_strv_finish(&b, &skipped);
		if (err)
			ward_strv_free(r);
	} else {
		ward_strv_discard(&skipped);
	}
	ward_strv_free(ids);
	free(real);
	if (err)
		return ward_err(err, "out of memory");
	*removed = r;
	if (busy)
		*busy = b;
	return 0;
out_free:
	ward_strv_discard(&rm);
	ward_strv_discard(&skipped);
	ward_strv_free(ids);
	free(real);
	return err;
}

/* --- exported: accessors -------------------------------------------------- */

const char *ward_session_id(const ward_session *s)
{
	return s->id;
}

/* The header never changes once read, so these need no lock. */
const char *ward_session_cwd(const ward_session *s)
{
	return s->cwd;
}

const char *ward_session_created(const ward_session *s)
{
	return s->created;
}

const char *ward_session_version(const ward_session *s)
{
	return s->version;
}

const char *ward_session_path(const ward_session *s)
{
	return s->path;
}

const char *ward_session_store(const ward_session *s)
{
	return s->store;
}

/*
 * The event list is read on first use (a session opened only to run calls
 * never parses it). A failure to read it leaves it empty; the next
 * ward_session_reload() says why.
 */
static const struct snapshot *events(const ward_session *cs)
{
	ward_session *s = (ward_session *)cs; /* what was read only */

	pthread_mutex_lock(&s->lock);
	if (!s->have_events && load_events(s) != 0)
		snapshot_clear(&s->snap);
	pthread_mutex_unlock(&s->lock);
	return &s->snap;
}

size_t ward_session_event_count(const ward_session *s)
{
	return events(s)->n;
}

const char *ward_session_event(const ward_session *s, size_t i)
{
	const struct snapshot *snap = events(s);

	return i < snap->n ? snap->ev[i].line : NULL;
}

const char *ward_session_event_type(const ward_session *s, size_t i)
{
	const struct snapshot *snap = events(s);

	return i < snap->n ? snap->ev[i].type : NULL;
}

bool ward_session_torn(const ward_session *s)
{
	ward_session *m = (ward_session *)s;
	bool torn;

	pthread_mutex_lock(&m->lock);
	torn = m->torn;
	pthread_mutex_unlock(&m->lock);
	return torn;
}

/* --- exported: knobs ------------------------------------------------------ */

/*
 * The folded value of @knob, read under the session's lock, or @dflt when
 * the log sets none; *@source (when not NULL) says which it is.
 */
static int folded(const ward_session *s, enum knob knob, int dflt,
		  enum ward_knob_source *source)
{
	ward_session *m = (ward_session *)s;
	int v;

	pthread_mutex_lock(&m->lock);
	v = knob == KNOB_MODE	   ? m->mode
	    : knob == KNOB_NETWORK ? m->network
				   : m->approval;
	pthread_mutex_unlock(&m->lock);
	if (source)
		*source = v < 0 ? WARD_KNOB_DEFAULT : WARD_KNOB_SESSION;
	return v < 0 ? dflt : v;
}

enum ward_mode ward_session_mode(const ward_session *s, enum ward_mode dflt,
				 enum ward_knob_source *source)
{
	return (enum ward_mode)folded(s, KNOB_MODE, (int)dflt, source);
}

enum ward_approval_policy ward_session_approval(const ward_session *s,
						enum ward_approval_policy dflt,
						enum ward_knob_source *source)
{
	return (enum ward_approval_policy)folded(s, KNOB_APPROVAL, (int)dflt,
						 source);
}

enum ward_network ward_session_network(const ward_session *s,
				       enum ward_network dflt,
				       enum ward_knob_source *source)
{
	return (enum ward_network)folded(s, KNOB_NETWORK, (int)dflt, source);
}

/*
 * The one write path of a knob: under the exclusive lock, read the log,
 * fold it against @dflt, append the event only when @value is not already
 * in force, and refresh the snapshot from the file.
 */
static int set_knob(bool *changed, ward_session *s, enum knob knob, int value,
		    int dflt)
{
	const char *type = knob_event_of(knob)->type;
	const char *field = knob_event_of(knob)->member;
	const char *name =
	    knob == KNOB_MODE ? ward_mode_name((enum ward_mode)value)
	    : knob == KNOB_NETWORK
		? ward_network_name((enum ward_network)value)
		: ward_approval_policy_name((enum ward_approval_policy)value);
	bool appended = false;
	json_t *ev = NULL;
	char *line = NULL;
	size_t len = 0;
	int fd, err, cur;

	pthread_mutex_lock(&s->lock);
	fd = open_log(s, true);
	if (fd < 0) {
		pthread_mutex_unlock(&s->lock);
		return fd;
	}
	err = lock_fd(fd, LOCK_EX, s->path);
	if (err)
		goto out_close;
	err = refresh_fd(s, fd);
	if (err)
		goto out_close;
	cur = knob == KNOB_MODE	     ? s->mode
	      : knob == KNOB_NETWORK ? s->network
				     : s->approval;
	if ((cur < 0 ? dflt : cur) == value)
		goto out_done;
	ev = event_new(type);
	if (!ev || !put(ev, field, json_string(name))) {
		err = ward_err(-ENOMEM, "out of memory");
		goto out_close;
	}
	line = event_line(ev, &len);
	if (!line) {
		err = ward_err(-ENOMEM, "out of memory");
		goto out_close;
	}
	err = repair_tail(fd, s->path);
	if (!err)
		err = append_line(fd, line, len, s->path, true);
	if (err)
		goto out_close;
	/* The sync covered every line before this one too. */
	s->unsynced = false;
	appended = true;
	/* Read our own line back: the folds follow the file, never a
	 * value we only meant to write. */
	err = refresh_fd(s, fd);
	s->have_events = false;
	if (err)
		goto out_close;
out_done:
	if (changed)
		*changed = appended;
out_close:
	json_decref(ev);
	free(line);
	close(fd);
	pthread_mutex_unlock(&s->lock);
	return err;
}

int ward_session_set_mode(bool *changed, ward_session *s, enum ward_mode mode,
			  const struct ward_session_defaults *d)
{
	struct ward_session_defaults dd = WARD_SESSION_DEFAULTS_INIT;

	if ((unsigned)mode > WARD_MODE_DANGER_FULL_ACCESS)
		return ward_err(WARD_EINVAL, "unknown sandbox mode %d",
				(int)mode);
	if (d)
		dd = *d;
	return set_knob(changed, s, KNOB_MODE, (int)mode, (int)dd.mode);
}

int ward_session_set_approval(bool *changed, ward_session *s,
			      enum ward_approval_policy policy,
			      const struct ward_session_defaults *d)
{
	struct ward_session_defaults dd = WARD_SESSION_DEFAULTS_INIT;

	if ((unsigned)policy > WARD_APPROVAL_NEVER)
		return ward_err(WARD_EINVAL, "unknown approval policy %d",
				(int)policy);
	if (d)
		dd = *d;
	return set_knob(changed, s, KNOB_APPROVAL, (int)policy,
			(int)dd.approval);
}

int ward_session_set_network(bool *changed, ward_session *s,
			     enum ward_network network, enum ward_network dflt)
{
	if (network != WARD_NETWORK_OFF && network != WARD_NETWORK_ON)
		return ward_err(WARD_EINVAL,
				"a session's network is off or on (an "
				"allowlist comes from the configuration)");
	return set_knob(changed, s, KNOB_NETWORK, (int)network, (int)dflt);
}

/* --- exported: resolution ------------------------------------------------- */

int ward_session_check_policy(const ward_session *s, const ward_policy *policy)
{
	return check_store(s->store, policy, NULL);
}

int ward_session_check_facts(const ward_session *s, const ward_policy *policy,
			     const struct ward_facts *f)
{
	return check_store(s->store, policy, f);
}

/* --- exported: audit ------------------------------------------------------ */

int ward_session_new_call_id(char *buf, size_t len)
{
	if (len < 13)
		return ward_err(WARD_EINVAL, "call id buffer too small");
	return random_hex(buf, 6);
}

int ward_session_record_call(ward_session *s, const struct ward_session_call *c)
{
	json_t *ev;
	bool ok;
	int err;

	if (!c || !c->call_id || !c->tool)
		return ward_err(WARD_EINVAL, "a call needs a call id and tool");
	if (c->version < 1 || c->version > WARD_SESSION_CALL_VERSION)
		return ward_bad_version("session call", c->version,
					WARD_SESSION_CALL_VERSION);
	ev = event_new("call/start");
	ok = ev && put(ev, "call", ward_json_str(c->call_id)) &&
	     put(ev, "tool", ward_json_str(c->tool));
	if (ok && c->argv)
		ok = put(ev, "argv", ward_json_strv(c->argv));
	if (ok && c->operation)
		ok = put(ev, "operation", ward_json_str(c->operation));
	if (ok && c->paths)
		ok = put(ev, "paths", ward_json_strv(c->paths));
	if (ok && c->cwd)
		ok = put(ev, "cwd", ward_json_str(c->cwd));
	ok = ok && put(ev, "mode", json_string(ward_mode_name(c->mode))) &&
	     put(ev, "mode_source",
		 json_string(ward_knob_source_name(c->mode_source))) &&
	     put(ev, "pid", json_integer((json_int_t)getpid()));
	if (!ok) {
		json_decref(ev);
		return ward_err(-ENOMEM, "out of memory");
	}
	err = append_event(s, ev);
	json_decref(ev);
	return err;
}

int ward_session_record_result(ward_session *s,
			       const struct ward_session_result *r)
{
	json_t *ev;
	bool ok;
	int err;

	if (!r || !r->call_id)
		return ward_err(WARD_EINVAL, "a result needs a call id");
	if (r->version < 1 || r->version > WARD_SESSION_RESULT_VERSION)
		return ward_bad_version("session result", r->version,
					WARD_SESSION_RESULT_VERSION);
	ev = event_new("call/result");
	ok = ev && put(ev, "call", ward_json_str(r->call_id)) &&
	     put(ev, "ran", json_boolean(r->ran));
	if (ok && r->ran)
		ok = put(ev, "mode", json_string(ward_mode_name(r->mode))) &&
		     put(ev, "exit_code",
			 r->exit_code < 0 ? json_null()
					  : json_integer(r->exit_code)) &&
		     put(ev, "signal",
			 r->signal > 0 ? json_integer(r->signal)
				       : json_null()) &&
		     put(ev, "timed_out", json_boolean(r->timed_out)) &&
		     put(ev, "denied", json_boolean(r->denied)) &&
		     put(ev, "runner",
			 json_string(r->runner_name
					 ? r->runner_name
					 : ward_runner_name(r->runner))) &&
		     put(ev, "enforcement",
			 json_string(ward_enforcement_name(r->enforcement)));
	if (ok && r->error)
		ok = put(ev, "error", ward_json_str(r->error));
	if (ok && r->text)
		ok = put(ev, "text", ward_json_str(r->text));
	if (!ok) {
		json_decref(ev);
		return ward_err(-ENOMEM, "out of memory");
	}
	err = append_event(s, ev);
	json_decref(ev);
	return err;
}

int ward_session_append_json(ward_session *s, const char *object)
{
	json_error_t jerr;
	json_t *obj, *type;
	const char *t;
	char when[40];
	int err;

	if (!object)
		return ward_err(WARD_EINVAL, "no event given");
	obj = json_loads(object, 0, &jerr);
	if (!obj || !json_is_object(obj)) {
		json_decref(obj);
		return ward_err(WARD_EINVAL, "event is not a JSON object: %s",
				obj ? "" : jerr.text);
	}
	type = json_object_get(obj, "type");
	t = json_is_string(type) ? json_string_value(type) : "";
	if (!*t || strcmp(t, TYPE_HEADER) == 0 || strcmp(t, TYPE_MODE) == 0 ||
	    strcmp(t, TYPE_APPROVAL) == 0 || strcmp(t, TYPE_NETWORK) == 0 ||
	    strcmp(t, TYPE_REPAIRED) == 0) {
		/* @t lives in @obj: the detail is formatted before the free. */
		err =
		    ward_err(WARD_EINVAL,
			     "event type '%s' cannot be appended this way%s", t,
			     *t ? " (knobs change through their setters)" : "");
		json_decref(obj);
		return err;
	}
	if (!json_object_get(obj, "time")) {
		now_rfc3339(when, sizeof(when));
		if (!put(obj, "time", json_string(when))) {
			json_decref(obj);
			return ward_err(-ENOMEM, "out of memory");
		}
	}
	err = append_event(s, obj);
	json_decref(obj);
	return err;
}

int ward_session_call_init(struct ward_session_call *c, unsigned version)
{
	const struct ward_session_call init = WARD_SESSION_CALL_INIT;

	if (!c)
		return ward_err(WARD_EINVAL, "session call: NULL");
	if (version != WARD_SESSION_CALL_VERSION)
		return ward_bad_version("session call", version,
					WARD_SESSION_CALL_VERSION);
	*c = init;
	return 0;
}

int ward_session_result_init(struct ward_session_result *r, unsigned version)
{
	const struct ward_session_result init = WARD_SESSION_RESULT_INIT;

	if (!r)
		return ward_err(WARD_EINVAL, "session result: NULL");
	if (version != WARD_SESSION_RESULT_VERSION)
		return ward_bad_version("session result", version,
					WARD_SESSION_RESULT_VERSION);
	*r = init;
	return 0;
}
