/*
 * fuzz_session — libFuzzer target for the session log reader
 * (src/libward/session/session.c): the full read, the incremental refresh of
 * the knob folds, and the torn-tail repair.
 *
 * Input: bytes 0-1 pick where the log is cut for the incremental read;
 * the rest is the log after a real header (the session is created once,
 * in a scratch store). Checked, for every input, against the contract in
 * include/ward/session.h, modelled here line by line (each complete line
 * a JSON object without duplicate keys or NUL bytes, with a non-empty
 * string "type"
 * that is not a second header; a sandbox/mode event names a mode, an
 * approval/policy event a policy, a sandbox/network event a network;
 * bytes after the last newline are a torn
 * append, ignored):
 *   1. ward_session_open (which validates the lines that can be knob
 *      events) succeeds on every valid log, with the knob folds of its
 *      last knob events; ward_session_reload (every line) succeeds exactly
 *      when the model finds every complete line valid, and then has one
 *      event per line, each the line's exact text and type, torn exactly
 *      when the model says; a failure is -EBADMSG naming the model's first
 *      bad line (open: that line or a later one);
 *   2. a session opened on a prefix of the log (cut anywhere, even inside
 *      a line) and refreshed after the rest was appended folds the same
 *      knobs as the full read; ward_session_reload then sees the same
 *      events;
 *   3. a torn log is repaired by the next append: the complete lines stay
 *      byte for byte, the tail goes, and the log then reads as the old
 *      events, a log/repaired event and the appended one, not torn.
 *
 * Logs written by an older or a hostile version (byte 0's top bits):
 *   10 the body's first line is the header (@ID@ in it becomes the
 *      session's id, so a header can get past the id check): open and
 *      reload agree on it — a refused header is line 1's error, from both
 *      — and an accepted one reads the rest as the model says (1.);
 *   11 the body's first line (up to 255 bytes) is the fold checkpoint
 *      beside the log (.ID.fold, ours, mode 0600; @DEV@ and @INO@ become
 *      the log's device and inode), the rest the log after the real
 *      header: a checkpoint, forged or stale, never changes what the
 *      log folds to (its tail digest cannot be forged from here).
 * The 4 MiB line bound of every reader is met by the long lines the
 * corpus holds (the model refuses them too).
 *
 * Build and run: `make fuzz` (or `make fuzz-lane`); see tests/fuzz/run.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "ward/ward.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char store[64];
static char *id, *path, *fold;
static char *header;
static size_t header_len;

static void die(const char *what)
{
	fprintf(stderr, "fuzz_session: %s: %s\n", what, ward_error_last());
	abort();
}

static void cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", store);
	if (system(cmd) != 0) {
		/* Nothing more to do. */
	}
}

static void setup(void)
{
	ward_session *s;
	FILE *f;
	char buf[4096];
	/* On tmpfs when there is one: every append is fdatasync'ed. */
	const char *tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";

	snprintf(store, sizeof(store), "%s/fuzz_session.XXXXXX", tmp);
	if (!mkdtemp(store))
		abort();
	atexit(cleanup);
	if (ward_session_create(&s, store, NULL) != 0)
		die("create");
	id = strdup(ward_session_id(s));
	path = strdup(ward_session_path(s));
	if (asprintf(&fold, "%s/.%s.fold", store, id) < 0)
		abort();
	ward_session_free(s);
	f = fopen(path, "r");
	if (!f || !fgets(buf, sizeof(buf), f))
		abort();
	fclose(f);
	header = strdup(buf);
	header_len = strlen(header);
}

static void write_log(const uint8_t *body, size_t len, int flags)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | flags, 0600);

	if (fd < 0)
		abort();
	if (!(flags & O_APPEND) &&
	    write(fd, header, header_len) != (ssize_t)header_len)
		abort();
	if (len && write(fd, body, len) != (ssize_t)len)
		abort();
	close(fd);
}

/* The model of one log. */
struct model {
	bool ok;
	size_t bad_line; /* 1-based line number, header = 1 */
	size_t n;	 /* events */
	const uint8_t **line;
	size_t *len;
	char **type;
	bool torn;
	int mode, approval, network; /* -1: no such event */
};

static void model_free(struct model *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->type[i]);
	free(m->line);
	free(m->len);
	free(m->type);
}

/* A complete line longer than any event: refused by every reader. */
#define LINE_MAX_BYTES (4u * 1024u * 1024u)

static void model(struct model *m, const uint8_t *b, size_t len)
{
	const uint8_t *p = b, *end = b + len, *nl;
	size_t lineno = 1;

	memset(m, 0, sizeof(*m));
	m->ok = true;
	m->mode = m->approval = m->network = -1;
	m->line = calloc(len + 1, sizeof(*m->line));
	m->len = calloc(len + 1, sizeof(*m->len));
	m->type = calloc(len + 1, sizeof(*m->type));
	if (!m->line || !m->len || !m->type)
		abort();
	while (p < end) {
		json_t *o, *t, *v;
		const char *ts, *vs;

		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl) {
			m->torn = true;
			break;
		}
		lineno++;
		/* A NUL byte is never part of a JSON text. */
		o = (size_t)(nl - p) > LINE_MAX_BYTES ||
			    memchr(p, '\0', (size_t)(nl - p))
			? NULL
			: json_loadb((const char *)p, (size_t)(nl - p),
				     JSON_REJECT_DUPLICATES, NULL);
		t = json_object_get(o, "type");
		ts = json_string_value(t);
		if (!json_is_object(o) || !ts || !*ts ||
		    strcmp(ts, "session/header") == 0)
			goto bad;
		if (strcmp(ts, "sandbox/mode") == 0) {
			enum ward_mode md;

			v = json_object_get(o, "mode");
			vs = json_string_value(v);
			if (!vs || ward_mode_parse(&md, vs) != 0)
				goto bad;
			m->mode = (int)md;
		} else if (strcmp(ts, "approval/policy") == 0) {
			enum ward_approval_policy ap;

			v = json_object_get(o, "policy");
			vs = json_string_value(v);
			if (!vs || ward_approval_policy_parse(&ap, vs) != 0)
				goto bad;
			m->approval = (int)ap;
		} else if (strcmp(ts, "sandbox/network") == 0) {
			enum ward_network nw;

			v = json_object_get(o, "network");
			vs = json_string_value(v);
			if (!vs || ward_network_parse(&nw, vs) != 0)
				goto bad;
			m->network = (int)nw;
		}
		m->line[m->n] = p;
		m->len[m->n] = (size_t)(nl - p);
		m->type[m->n] = strdup(ts);
		m->n++;
		json_decref(o);
		p = nl + 1;
		continue;
	bad:
		json_decref(o);
		m->ok = false;
		m->bad_line = lineno;
		return;
	}
}

static void check_folds(const ward_session *s, const struct model *m,
			const char *what)
{
	enum ward_knob_source src;
	enum ward_mode md;
	enum ward_approval_policy ap;

	md = ward_session_mode(s, WARD_MODE_READ_ONLY, &src);
	if (m->mode >= 0 ? (int)md != m->mode || src != WARD_KNOB_SESSION
			 : md != WARD_MODE_READ_ONLY ||
			       src == WARD_KNOB_SESSION) {
		fprintf(stderr, "%s: mode %d (source %d), model %d\n", what,
			md, src, m->mode);
		abort();
	}
	{
		enum ward_network nw =
		    ward_session_network(s, WARD_NETWORK_OFF, &src);

		if (m->network >= 0 ? (int)nw != m->network ||
					  src != WARD_KNOB_SESSION
				    : nw != WARD_NETWORK_OFF ||
					  src == WARD_KNOB_SESSION) {
			fprintf(stderr, "%s: network %d (source %d), model %d\n",
				what, nw, src, m->network);
			abort();
		}
	}
	ap = ward_session_approval(s, WARD_APPROVAL_ASK, &src);
	if (m->approval >= 0 ? (int)ap != m->approval ||
				   src != WARD_KNOB_SESSION
			     : ap != WARD_APPROVAL_ASK ||
				   src == WARD_KNOB_SESSION) {
		fprintf(stderr, "%s: approval %d (source %d), model %d\n",
			what, ap, src, m->approval);
		abort();
	}
}

static void check_events(const ward_session *s, const struct model *m,
			 size_t extra, const char *what)
{
	if (ward_session_event_count(s) != m->n + extra) {
		fprintf(stderr, "%s: %zu events, model %zu\n", what,
			ward_session_event_count(s), m->n);
		abort();
	}
	for (size_t i = 0; i < m->n; i++) {
		const char *e = ward_session_event(s, i);

		if (strlen(e) != m->len[i] ||
		    memcmp(e, m->line[i], m->len[i]) != 0 ||
		    strcmp(ward_session_event_type(s, i), m->type[i]) != 0) {
			fprintf(stderr, "%s: event %zu differs\n", what, i);
			abort();
		}
	}
}

/* @text (@len bytes) with @key replaced by @value every time: malloc'd,
 * its length in *@out_len (it may hold NUL bytes). */
static char *subst(size_t *out_len, const char *text, size_t len,
		   const char *key, const char *value)
{
	size_t kl = strlen(key), vl = strlen(value), n = 0;
	char *out = malloc(len * (vl + 1) + 1);

	if (!out)
		abort();
	for (size_t i = 0; i < len;) {
		if (i + kl <= len && memcmp(text + i, key, kl) == 0) {
			memcpy(out + n, value, vl);
			n += vl;
			i += kl;
		} else {
			out[n++] = text[i++];
		}
	}
	out[n] = '\0';
	*out_len = n;
	return out;
}

/* The line "session log PATH: line N: …" names, or 0. */
static size_t error_line(void)
{
	const char *l = strstr(ward_error_last(), ": line ");
	size_t at = 0;

	if (!l || sscanf(l, ": line %zu:", &at) != 1)
		return 0;
	return at;
}

/*
 * 10: a header of another version (the body's first line). Both readers
 * judge line 1 alike; past it, the model of the rest holds.
 */
static void hostile_header(const uint8_t *body, size_t len)
{
	const uint8_t *nl = memchr(body, '\n', len);
	size_t hl = nl ? (size_t)(nl - body) + 1 : len;
	size_t n;
	char *h = subst(&n, (const char *)body, hl, "@ID@", id);
	ward_session *s = NULL;
	struct model m;
	int fd, err;

	model(&m, body + hl, len - hl);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0 || write(fd, h, n) != (ssize_t)n ||
	    write(fd, body + hl, len - hl) != (ssize_t)(len - hl))
		abort();
	close(fd);
	free(h);
	unlink(fold);
	err = ward_session_open(&s, store, id);
	if (err) {
		/* Refused: no complete header line at all, the header
		 * (line 1), or a bad later line. */
		if (err != -EBADMSG || (nl && error_line() != 1 &&
					(m.ok || error_line() < m.bad_line)))
			die("open of a hostile header");
		model_free(&m);
		return;
	}
	err = ward_session_reload(s);
	if (m.ok != (err == 0) || (err && error_line() != m.bad_line)) {
		fprintf(stderr,
			"reload after an accepted header: %d (%s), model "
			"%s at %zu\n",
			err, ward_error_last(), m.ok ? "ok" : "bad",
			m.bad_line);
		abort();
	}
	if (!err) {
		check_events(s, &m, 0, "hostile header");
		check_folds(s, &m, "hostile header");
	}
	ward_session_free(s);
	model_free(&m);
}

/*
 * 11: a fold checkpoint of another version, or forged (the body's first
 * line); the rest is the log. The folds are the log's, whatever it says.
 */
static void hostile_fold(const uint8_t *body, size_t len)
{
	const uint8_t *nl = memchr(body, '\n', len);
	size_t cl = nl ? (size_t)(nl - body) + 1 : len;
	ward_session *s = NULL;
	struct model m;
	struct stat st;
	char num[32], *c1, *c2;
	size_t n1, n2;
	int fd;

	if (cl > 255)
		cl = 255;
	model(&m, body + cl, len - cl);
	write_log(body + cl, len - cl, O_TRUNC);
	if (stat(path, &st) != 0)
		abort();
	snprintf(num, sizeof(num), "%llu", (unsigned long long)st.st_dev);
	c1 = subst(&n1, (const char *)body, cl, "@DEV@", num);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)st.st_ino);
	c2 = subst(&n2, c1, n1, "@INO@", num);
	fd = open(fold, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, c2, n2) != (ssize_t)n2)
		abort();
	close(fd);
	free(c1);
	free(c2);
	if (ward_session_open(&s, store, id) == 0) {
		if (!m.ok)
			/* Open judges only the knob lines it reads. */
			goto out;
		check_folds(s, &m, "open with a hostile checkpoint");
		if (ward_session_refresh(s) != 0)
			die("refresh");
		check_folds(s, &m, "refresh with a hostile checkpoint");
	} else if (m.ok) {
		die("open of a valid log with a hostile checkpoint");
	}
out:
	ward_session_free(s);
	unlink(fold);
	model_free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ward_session *full = NULL, *part = NULL, *again = NULL;
	struct model m;
	const uint8_t *body;
	size_t len, cut, keep;
	int err;

	if (!header)
		setup();
	if (size < 2)
		return 0;
	body = data + 2;
	len = size - 2;
	if ((data[0] >> 6) == 2) {
		hostile_header(body, len);
		return 0;
	}
	if ((data[0] >> 6) == 3) {
		hostile_fold(body, len);
		return 0;
	}
	cut = len ? ((size_t)data[0] << 8 | data[1]) % (len + 1) : 0;
	unlink(fold);
	model(&m, body, len);

	/* 1. The full read: open folds the knobs, reload reads every line. */
	write_log(body, len, O_TRUNC);
	err = ward_session_open(&full, store, id);
	if (m.ok && err) {
		fprintf(stderr, "open: %d (%s) of a valid log\n", err,
			ward_error_last());
		abort();
	}
	if (!err)
		err = ward_session_reload(full);
	if (m.ok != (err == 0)) {
		fprintf(stderr, "reload: %d, model bad at line %zu\n", err,
			m.bad_line);
		abort();
	}
	if (!m.ok) {
		size_t at = 0;
		const char *l = strstr(ward_error_last(), ": line ");

		/* open checks only what can be a knob: it may stop later. */
		if (err != -EBADMSG || !l || sscanf(l, ": line %zu:", &at) != 1 ||
		    at < m.bad_line || (full && at != m.bad_line)) {
			fprintf(stderr, "%d \"%s\", model: line %zu\n", err,
				ward_error_last(), m.bad_line);
			abort();
		}
		ward_session_free(full);
		model_free(&m);
		return 0;
	}
	check_events(full, &m, 0, "reload");
	check_folds(full, &m, "open");
	if (ward_session_torn(full) != m.torn)
		abort();

	/* 2. A read of a prefix, refreshed after the rest came. */
	unlink(fold);
	write_log(body, cut, O_TRUNC);
	if (ward_session_open(&part, store, id) == 0) {
		write_log(body + cut, len - cut, O_APPEND);
		if (ward_session_refresh(part) != 0)
			die("refresh after the rest was appended");
		check_folds(part, &m, "refresh");
		if (ward_session_reload(part) != 0)
			die("reload");
		check_events(part, &m, 0, "reload");
		check_folds(part, &m, "reload");
		ward_session_free(part);
	} else {
		write_log(body + cut, len - cut, O_APPEND);
	}

	/* 3. The torn tail is cut by the next append. */
	if (m.torn) {
		keep = (size_t)(m.n ? m.line[m.n - 1] + m.len[m.n - 1] + 1 - body
				    : 0);
		if (ward_session_append_json(full, "{\"type\":\"fuzz/event\"}") !=
		    0)
			die("append to a torn log");
		if (ward_session_open(&again, store, id) != 0)
			die("open after the repair");
		if (ward_session_torn(again) ||
		    ward_session_event_count(again) != m.n + 2 ||
		    strcmp(ward_session_event_type(again, m.n),
			   "log/repaired") != 0 ||
		    strcmp(ward_session_event_type(again, m.n + 1),
			   "fuzz/event") != 0)
			abort();
		check_events(again, &m, 2, "after the repair");
		{
			FILE *f = fopen(path, "r");
			char *got = malloc(header_len + keep + 1);

			if (!f || !got ||
			    fread(got, 1, header_len + keep, f) !=
				header_len + keep ||
			    memcmp(got, header, header_len) != 0 ||
			    memcmp(got + header_len, body, keep) != 0)
				abort();
			fclose(f);
			free(got);
		}
		ward_session_free(again);
	}
	ward_session_free(full);
	model_free(&m);
	return 0;
}
