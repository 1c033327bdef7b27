/*
 * Unit tests for src/libward/session/session.c (the JSONL session store, knob
 * folds and setters, resolution, audit records) and
 * src/libward/session/presets.c.
 *
 * Every test gets a fresh base directory under /var/tmp (not /tmp: /tmp is
 * a writable root under workspace-write, and a store there is refused):
 *
 *   store/   the session store
 *   ws/      a session cwd (a workspace root)
 *   ws2/     another one
 *
 * Children (forked writers) report through their exit status only.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <pthread.h>

#include "ward/ward.h"

struct fx {
	char base[256];
	char store[300];
	char ws[300];
	char ws2[300];
};

static const struct ward_session_defaults DEFAULTS = WARD_SESSION_DEFAULTS_INIT;

/* --- helpers ----------------------------------------------------------- */

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	snprintf(fx->base, sizeof(fx->base),
		 "/var/tmp/ward-test-session.XXXXXX");
	if (!mkdtemp(fx->base))
		return -1;
	snprintf(fx->store, sizeof(fx->store), "%s/store", fx->base);
	snprintf(fx->ws, sizeof(fx->ws), "%s/ws", fx->base);
	snprintf(fx->ws2, sizeof(fx->ws2), "%s/ws2", fx->base);
	if (mkdir(fx->ws, 0755) || mkdir(fx->ws2, 0755))
		return -1;
	unsetenv("TMPDIR");
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	nftw(fx->base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(fx);
	return 0;
}

static ward_session *new_session(struct fx *fx, const char *cwd)
{
	ward_session *s = NULL;
	int err = ward_session_create(&s, fx->store, cwd);

	if (err)
		print_message("create: %s\n", ward_error_last());
	assert_int_equal(err, 0);
	assert_non_null(s);
	return s;
}

static ward_session *reopen(struct fx *fx, const ward_session *s)
{
	ward_session *o = NULL;
	int err = ward_session_open(&o, fx->store, ward_session_id(s));

	if (err)
		print_message("open: %s\n", ward_error_last());
	assert_int_equal(err, 0);
	return o;
}

/* The number of lines of a file. */
static size_t count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;
	int c;

	assert_non_null(f);
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

static void append_raw(const char *path, const char *bytes)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, bytes, strlen(bytes)),
			 (ssize_t)strlen(bytes));
	close(fd);
}

static json_t *event_json(const ward_session *s, size_t i)
{
	json_t *j = json_loads(ward_session_event(s, i), 0, NULL);

	assert_non_null(j);
	return j;
}

static const char *jstr(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

static int append_test_event(ward_session *s, int proc, int n)
{
	char buf[128];

	snprintf(buf, sizeof(buf),
		 "{\"type\":\"test/event\",\"proc\":%d,\"n\":%d}", proc, n);
	return ward_session_append_json(s, buf);
}

/* --- creation, ids, reading ---------------------------------------------- */

static void test_create_and_header(void **state)
{
	struct fx *fx = *state;
	ward_session *s = new_session(fx, fx->ws);
	char real_ws[PATH_MAX], real_store[PATH_MAX];
	const char *id = ward_session_id(s);
	struct stat st;
	FILE *f;
	char line[1024];
	json_t *hdr;

	assert_non_null(realpath(fx->ws, real_ws));
	assert_non_null(realpath(fx->store, real_store));
	assert_int_equal(strlen(id), 16);
	for (const char *p = id; *p; p++)
		assert_non_null(strchr("0123456789abcdef", *p));
	assert_true(ward_session_id_valid(id));
	assert_string_equal(ward_session_cwd(s), real_ws);
	assert_string_equal(ward_session_store(s), real_store);
	assert_string_equal(ward_session_version(s), WARD_VERSION);
	assert_int_equal(strlen(ward_session_created(s)), 24);
	assert_int_equal(ward_session_created(s)[23], 'Z');
	assert_int_equal(ward_session_event_count(s), 0);
	assert_false(ward_session_torn(s));

	/* The file: 0600 in a 0700 store, exactly the header line. */
	assert_int_equal(stat(ward_session_path(s), &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(stat(fx->store, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(count_lines(ward_session_path(s)), 1);
	f = fopen(ward_session_path(s), "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	hdr = json_loads(line, 0, NULL);
	assert_non_null(hdr);
	assert_string_equal(jstr(hdr, "type"), "session/header");
	assert_string_equal(jstr(hdr, "id"), id);
	assert_string_equal(jstr(hdr, "cwd"), real_ws);
	assert_string_equal(jstr(hdr, "ward_version"), WARD_VERSION);
	assert_non_null(jstr(hdr, "created"));
	json_decref(hdr);

	/* Two sessions never share an id; no temporary file is left. */
	ward_session *s2 = new_session(fx, NULL);
	char **ids = NULL;

	assert_string_not_equal(ward_session_id(s2), id);
	assert_null(ward_session_cwd(s2));
	assert_int_equal(ward_session_list(&ids, fx->store), 0);
	assert_int_equal(ward_strv_len(ids), 2);
	assert_true(strcmp(ids[0], ids[1]) < 0);
	ward_strv_free(ids);
	ward_session_free(s2);
	ward_session_free(s);
}

static void test_ids_validated(void **state)
{
	struct fx *fx = *state;
	ward_session *s = NULL;
	char long_id[80];
	static const char *const bad[] = {
	    "", "../x", "a/b", "a.b", "..", "x y", "id\n", "é", "a_b",
	};

	memset(long_id, 'a', 65);
	long_id[65] = '\0';
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_false(ward_session_id_valid(bad[i]));
		assert_int_equal(ward_session_open(&s, fx->store, bad[i]),
				 WARD_EINVAL);
		assert_null(s);
	}
	assert_false(ward_session_id_valid(long_id));
	assert_false(ward_session_id_valid(NULL));
	long_id[64] = '\0';
	assert_true(ward_session_id_valid(long_id));
	assert_true(ward_session_id_valid("Abc-123"));
	/* Valid but absent: -ENOENT, store missing or not. */
	assert_int_equal(ward_session_open(&s, fx->store, "nope"), -ENOENT);
	ward_session_free(new_session(fx, NULL));
	assert_int_equal(ward_session_open(&s, fx->store, "nope"), -ENOENT);
	assert_non_null(strstr(ward_error_last(), "nope"));
}

static void test_list_empty_store(void **state)
{
	struct fx *fx = *state;
	char **ids = NULL;

	assert_int_equal(ward_session_list(&ids, fx->store), 0);
	assert_int_equal(ward_strv_len(ids), 0);
	ward_strv_free(ids);
}

static void test_store_default(void **state)
{
	char *dir = NULL;
	char *saved_state = getenv("XDG_STATE_HOME");
	char *saved_home = getenv("HOME");

	(void)state;
	saved_state = saved_state ? strdup(saved_state) : NULL;
	saved_home = saved_home ? strdup(saved_home) : NULL;
	setenv("XDG_STATE_HOME", "/x/state", 1);
	setenv("HOME", "/h", 1);
	assert_int_equal(ward_session_store_default(&dir), 0);
	assert_string_equal(dir, "/x/state/ward/sessions");
	free(dir);
	/* A relative XDG_STATE_HOME is ignored, as the XDG spec says. */
	setenv("XDG_STATE_HOME", "rel", 1);
	assert_int_equal(ward_session_store_default(&dir), 0);
	assert_string_equal(dir, "/h/.local/state/ward/sessions");
	free(dir);
	unsetenv("XDG_STATE_HOME");
	unsetenv("HOME");
	assert_int_equal(ward_session_store_default(&dir), WARD_EINVAL);
	if (saved_state)
		setenv("XDG_STATE_HOME", saved_state, 1);
	if (saved_home)
		setenv("HOME", saved_home, 1);
	free(saved_state);
	free(saved_home);
}

/* --- knobs ------------------------------------------------------------- */

static void test_folds_and_setters(void **state)
{
	struct fx *fx = *state;
	ward_session *s = new_session(fx, fx->ws);
	struct ward_session_defaults d = DEFAULTS;
	enum ward_knob_source src;
	bool changed = true;
	json_t *ev;

	/* No event: the configured default, whatever it is. */
	assert_int_equal(ward_session_mode(s, WARD_MODE_READ_ONLY, &src),
			 WARD_MODE_READ_ONLY);
	assert_int_equal(src, WARD_KNOB_DEFAULT);
	assert_int_equal(ward_session_mode(s, WARD_MODE_WORKSPACE_WRITE, NULL),
			 WARD_MODE_WORKSPACE_WRITE);
	assert_int_equal(ward_session_approval(s, WARD_APPROVAL_NEVER, &src),
			 WARD_APPROVAL_NEVER);
	assert_int_equal(src, WARD_KNOB_DEFAULT);

	/* Setting the value in force (the default) appends nothing. */
	assert_int_equal(
	    ward_session_set_mode(&changed, s, WARD_MODE_READ_ONLY, &d), 0);
	assert_false(changed);
	assert_int_equal(count_lines(ward_session_path(s)), 1);

	/* A change appends exactly one event; the fold sees it. */
	assert_int_equal(
	    ward_session_set_mode(&changed, s, WARD_MODE_WORKSPACE_WRITE, &d),
	    0);
	assert_true(changed);
	assert_int_equal(ward_session_event_count(s), 1);
	assert_string_equal(ward_session_event_type(s, 0), "sandbox/mode");
	ev = event_json(s, 0);
	assert_string_equal(jstr(ev, "mode"), "workspace-write");
	assert_non_null(jstr(ev, "time"));
	json_decref(ev);
	assert_int_equal(ward_session_mode(s, WARD_MODE_READ_ONLY, &src),
			 WARD_MODE_WORKSPACE_WRITE);
	assert_int_equal(src, WARD_KNOB_SESSION);
	/* The override wins over any default. */
	assert_int_equal(
	    ward_session_mode(s, WARD_MODE_DANGER_FULL_ACCESS, NULL),
	    WARD_MODE_WORKSPACE_WRITE);

	/* Same value again: nothing. */
	assert_int_equal(
	    ward_session_set_mode(&changed, s, WARD_MODE_WORKSPACE_WRITE, &d),
	    0);
	assert_false(changed);
	assert_int_equal(count_lines(ward_session_path(s)), 2);

	/* Back to the default's value: an event (the override differs). */
	assert_int_equal(
	    ward_session_set_mode(&changed, s, WARD_MODE_READ_ONLY, &d), 0);
	assert_true(changed);
	assert_int_equal(ward_session_mode(s, WARD_MODE_WORKSPACE_WRITE, &src),
			 WARD_MODE_READ_ONLY);
	assert_int_equal(src, WARD_KNOB_SESSION);

	/* The approval knob is its own fold. */
	assert_int_equal(
	    ward_session_set_approval(&changed, s, WARD_APPROVAL_ASK, &d), 0);
	assert_false(changed);
	assert_int_equal(
	    ward_session_set_approval(&changed, s, WARD_APPROVAL_NEVER, &d), 0);
	assert_true(changed);
	assert_int_equal(ward_session_approval(s, WARD_APPROVAL_ASK, &src),
			 WARD_APPROVAL_NEVER);
	assert_int_equal(src, WARD_KNOB_SESSION);
	assert_int_equal(ward_session_mode(s, WARD_MODE_WORKSPACE_WRITE, NULL),
			 WARD_MODE_READ_ONLY);
	assert_int_equal(count_lines(ward_session_path(s)), 4);
	ev = event_json(s, 2);
	assert_string_equal(jstr(ev, "type"), "approval/policy");
	assert_string_equal(jstr(ev, "policy"), "never");
	json_decref(ev);

	/* Bad values are refused and append nothing. */
	assert_int_equal(
	    ward_session_set_mode(&changed, s, (enum ward_mode)7, &d),
	    WARD_EINVAL);
	assert_int_equal(ward_session_set_approval(
			     &changed, s, (enum ward_approval_policy)5, &d),
			 WARD_EINVAL);
	assert_int_equal(count_lines(ward_session_path(s)), 4);
	ward_session_free(s);
}

static void test_setter_sees_other_writers(void **state)
{
	struct fx *fx = *state;
	ward_session *a = new_session(fx, fx->ws);
	ward_session *b = reopen(fx, a);
	bool changed;

	/* b changes the mode; a's snapshot is stale, but a's setter folds
	 * the file under the lock, so setting the same value is a no-op. */
	assert_int_equal(
	    ward_session_set_mode(&changed, b, WARD_MODE_WORKSPACE_WRITE, NULL),
	    0);
	assert_true(changed);
	assert_int_equal(ward_session_mode(a, WARD_MODE_READ_ONLY, NULL),
			 WARD_MODE_READ_ONLY);
	assert_int_equal(
	    ward_session_set_mode(&changed, a, WARD_MODE_WORKSPACE_WRITE, NULL),
	    0);
	assert_false(changed);
	assert_int_equal(ward_session_mode(a, WARD_MODE_READ_ONLY, NULL),
			 WARD_MODE_WORKSPACE_WRITE);
	assert_int_equal(count_lines(ward_session_path(a)), 2);
	ward_session_free(a);
	ward_session_free(b);
}

static void test_restart_immunity(void **state)
{
	struct fx *fx = *state;
	ward_session *s = new_session(fx, fx->ws);
	char id[WARD_SESSION_ID_MAX + 1];
	int status;
	pid_t pid;

	snprintf(id, sizeof(id), "%s", ward_session_id(s));
	assert_int_equal(
	    ward_session_set_mode(NULL, s, WARD_MODE_WORKSPACE_WRITE, NULL), 0);
	assert_int_equal(
	    ward_session_set_approval(NULL, s, WARD_APPROVAL_NEVER, NULL), 0);
	ward_session_free(s);

	/* A new process knows nothing but the id and the store. */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		ward_session *c = NULL;
		int rc = 0;

		if (ward_session_open(&c, fx->store, id) != 0)
			_exit(10);
		if (ward_session_mode(c, WARD_MODE_READ_ONLY, NULL) !=
		    WARD_MODE_WORKSPACE_WRITE)
			rc = 11;
		if (ward_session_approval(c, WARD_APPROVAL_ASK, NULL) !=
		    WARD_APPROVAL_NEVER)
			rc = 12;
		/* …and writes what the parent will see. */
		if (!rc &&
		    ward_session_set_mode(NULL, c, WARD_MODE_DANGER_FULL_ACCESS,
					  NULL) != 0)
			rc = 13;
		ward_session_free(c);
		_exit(rc);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(ward_session_open(&s, fx->store, id), 0);
	assert_int_equal(ward_session_mode(s, WARD_MODE_READ_ONLY, NULL),
			 WARD_MODE_DANGER_FULL_ACCESS);
	assert_int_equal(ward_session_approval(s, WARD_APPROVAL_ASK, NULL),
			 WARD_APPROVAL_NEVER);
	ward_session_free(s);
}

static void test_sessions_isolated(void **state)
{
	struct fx *fx = *state;
	ward_session *a = new_session(fx, fx->ws);
	ward_session *b = new_session(fx, fx->ws2);
	char real_ws[PATH_MAX], real_ws2[PATH_MAX];

	assert_int_equal(
	    ward_session_set_mode(NULL, a, WARD_MODE_WORKSPACE_WRITE, NULL), 0);
	assert_int_equal(
	    ward_session_set_approval(NULL, b, WARD_APPROVAL_NEVER, NULL), 0);
	assert_int_equal(ward_session_reload(a), 0);
	assert_int_equal(ward_session_reload(b), 0);
	assert_int_equal(ward_session_mode(a, WARD_MODE_READ_ONLY, NULL),
			 WARD_MODE_WORKSPACE_WRITE);
	assert_int_equal(ward_session_mode(b, WARD_MODE_READ_ONLY, NULL),
			 WARD_MODE_READ_ONLY);
	assert_int_equal(ward_session_approval(a, WARD_APPROVAL_ASK, NULL),
			 WARD_APPROVAL_ASK);
	assert_int_equal(ward_session_approval(b, WARD_APPROVAL_ASK, NULL),
			 WARD_APPROVAL_NEVER);
	assert_int_equal(ward_session_event_count(a), 1);
	assert_int_equal(ward_session_event_count(b), 1);
	/* Each has its own cwd (the workspace of its calls: test_call.c). */
	assert_non_null(realpath(fx->ws, real_ws));
	assert_non_null(realpath(fx->ws2, real_ws2));
	assert_string_equal(ward_session_cwd(a), real_ws);
	assert_string_equal(ward_session_cwd(b), real_ws2);
	ward_session_free(a);
	ward_session_free(b);
}

/* --- concurrency and crashes ------------------------------------------- */

#define N_PROCS	  8
#define N_APPENDS 200

static void test_concurrent_appends(void **state)
{
	struct fx *fx = *state;
	ward_session *s = new_session(fx, fx->ws);
	char id[WARD_SESSION_ID_MAX + 1];
	pid_t pids[N_PROCS];
	int last[N_PROCS], status;
	size_t n;

	snprintf(id, sizeof(id), "%s", ward_session_id(s));
	/*
	 * What is checked is that nothing is lost or torn, not how long a
	 * writer waits: 1,600 fsynced appends by writers that poll for the
	 * lock take longer than its 5 s bound on a loaded machine (one
	 * writer starved), so the bound (test_lock_held_forever_fails_bounded)
	 * is lifted here.
	 */
	setenv("WARD_SESSION_LOCK_WAIT_MS", "600000", 1);
	for (int p = 0; p < N_PROCS; p++) {
		pids[p] = fork();
		assert_true(pids[p] >= 0);
		if (pids[p] == 0) {
			ward_session *c = NULL;

			if (ward_session_open(&c, fx->store, id) != 0)
				_exit(10);
			for (int i = 0; i < N_APPENDS; i++) {
				/* Knob setters interleave with plain
				 * appends: every fold stays consistent. */
				if (i % 50 == 0 &&
				    ward_session_set_mode(
					NULL, c,
					(enum ward_mode)((p + i / 50) % 2),
					NULL) != 0)
					_exit(11);
				if (append_test_event(c, p, i) != 0)
					_exit(12);
			}
			ward_session_free(c);
			_exit(0);
		}
	}
	unsetenv("WARD_SESSION_LOCK_WAIT_MS");
	for (int p = 0; p < N_PROCS; p++) {
		assert_int_equal(waitpid(pids[p], &status, 0), pids[p]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	unsetenv("WARD_SESSION_LOCK_WAIT_MS");
	/* Every line parses (the reload validates each), none is lost, and
	 * each writer's events are in its own order. */
	assert_int_equal(ward_session_reload(s), 0);
	assert_false(ward_session_torn(s));
	for (int p = 0; p < N_PROCS; p++)
		last[p] = -1;
	n = 0;
	for (size_t i = 0; i < ward_session_event_count(s); i++) {
		json_t *ev;
		int p, k;

		if (strcmp(ward_session_event_type(s, i), "test/event") != 0)
			continue;
		ev = event_json(s, i);
		p = (int)json_integer_value(json_object_get(ev, "proc"));
		k = (int)json_integer_value(json_object_get(ev, "n"));
		json_decref(ev);
		assert_true(p >= 0 && p < N_PROCS);
		assert_int_equal(k, last[p] + 1);
		last[p] = k;
		n++;
	}
	assert_int_equal(n, N_PROCS * N_APPENDS);
	for (int p = 0; p < N_PROCS; p++)
		assert_int_equal(last[p], N_APPENDS - 1);
	assert_int_equal(count_lines(ward_session_path(s)),
			 1 + ward_session_event_count(s));
	ward_session_free(s);
}

static void test_torn_tail_ignored_and_repaired(void **state)
{
	struct fx *fx = *state;
	ward_session *s = new_session(fx, fx->ws);
	ward_session *o;
	static const char torn[] = "{\"type\":\"test/event\",\"proc\":9,\"n";
	json_t *ev;
	struct stat st;
	char last;
	int fd;

	assert_int_equal(
	    ward_session_set_mode(NULL, s, WARD_MODE_WORKSPACE_WRITE, NULL), 0);
	/* What a crash in the middle of an append leaves behind. */
	append_raw(ward_session_path(s), torn);

	o = reopen(fx, s);
	assert_true(ward_session_torn(o));
	assert_int_equal(ward_session_event_count(o), 1);
	assert_int_equal(ward_session_mode(o, WARD_MODE_READ_ONLY, NULL),
			 WARD_MODE_WORKSPACE_WRITE);

	/* The next append cuts the fragment away and says so. */
	assert_int_equal(append_test_event(o, 1, 1), 0);
	assert_int_equal(ward_session_reload(o), 0);
	assert_false(ward_session_torn(o));
	assert_int_equal(ward_session_event_count(o), 3);
	assert_string_equal(ward_session_event_type(o, 1), "log/repaired");
	ev = event_json(o, 1);
	assert_int_equal(
	    json_integer_value(json_object_get(ev, "discarded_bytes")),
	    (json_int_t)strlen(torn));
	json_decref(ev);
	assert_string_equal(ward_session_event_type(o, 2), "test/event");
	assert_int_equal(count_lines(ward_session_path(o)), 4);
	assert_int_equal(stat(ward_session_path(o), &st), 0);
	fd = open(ward_session_path(o), O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &last, 1, st.st_size - 1), 1);
	close(fd);
	assert_int_equal(last, '\n');
	assert_null(strstr(ward_session_event(o, 2), "\"proc\":9"));

	/* A setter repairs too. */
	append_raw(ward_session_path(o), "{\"typ");
	assert_int_equal(
	    ward_session_set_mode(NULL, o, WARD_MODE_READ_ONLY, NULL), 0);
	assert_false(ward_session_torn(o));
	assert_string_equal(
	    ward_session_event_type(o, ward_session_event_count(o) - 2),
	    "log/repaired");
	assert_int_equal(ward_session_mode(o, WARD_MODE_WORKSPACE_WRITE, NULL),
			 WARD_MODE_READ_ONLY);
	ward_session_free(o);
	ward_session_free(s);
}

static void test_kill9_during_appends(void **state)
{
	struct fx *fx = *state;
	ward_session *s = new_session(fx, fx->ws);
	char id[WARD_SESSION_ID_MAX + 1];
	size_t before;
	int status;

	snprintf(id, sizeof(id), "%s", ward_session_id(s));
	for (int round = 0; round < 5; round++) {
		struct timespec ts = {0, (1 + round * 3) * 1000000L};
		pid_t pid = fork();

		assert_true(pid >= 0);
		if (pid == 0) {
			ward_session *c = NULL;

			if (ward_session_open(&c, fx->store, id) != 0)
				_exit(10);
			for (int i = 0;; i++) {
				if (append_test_event(c, round, i) != 0)
					_exit(11);
			}
		}
		nanosleep(&ts, NULL);
		assert_int_equal(kill(pid, SIGKILL), 0);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFSIGNALED(status));
		/* Readable at once; the lock died with the writer. */
		assert_int_equal(ward_session_reload(s), 0);
		before = ward_session_event_count(s);
		assert_int_equal(append_test_event(s, 99, round), 0);
		assert_int_equal(ward_session_reload(s), 0);
		assert_false(ward_session_torn(s));
		assert_true(ward_session_event_count(s) > before);
	}
	assert_int_equal(count_lines(ward_session_path(s)),
			 1 + ward_session_event_count(s));
	ward_session_free(s);
}

static void test_corrupt_middle_line_is_an_error(void **state)
{
	struct fx *fx = *state;
	ward_session *s = new_session(fx, fx->ws);
	ward_session *o = NULL;
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s", ward_session_path(s));
	assert_int_equal(append_test_event(s, 0, 0), 0);
	append_raw(path, "this is not json\n");
	assert_int_equal(append_test_event(s, 0, 1), 0);
	assert_int_equal(ward_session_open(&o, fx->store, ward_session_id(s)),
			 -EBADMSG);
	assert_null(o);
	assert_non_null(strstr(ward_error_last(), "line 3"));
	assert_non_null(strstr(ward_error_last(), path));
	/* The old snapshot survives a failed reload. */
	assert_int_equal(ward_session_reload(s), -EBADMSG);
	assert_int_equal(ward_session_event_count(s), 0);
	/* A setter refuses to fold a corrupt log. */
	assert_int_equal(
	    ward_session_set_mode(NULL, s, WARD_MODE_WORKSPACE_WRITE, NULL),
	    -EBADMSG);
	ward_session_free(s);
}

static void test_corrupt_knob_and_header(void **state)
{
	struct fx *fx = *state;
	ward_session *s = new_session(fx, fx->ws);
	ward_session *o = NULL;
	char copy[PATH_MAX], cmd[PATH_MAX * 2 + 16];

	append_raw(ward_session_path(s),
		   "{\"type\":\"sandbox/mode\",\"mode\":\"root\"}\n");
	assert_int_equal(ward_session_open(&o, fx->store, ward_session_id(s)),
			 -EBADMSG);
	assert_non_null(strstr(ward_error_last(), "line 2"));
	assert_non_null(strstr(ward_error_last(), "unknown mode"));
	/* A complete line at the end is judged, not taken as torn. */
	ward_session_free(s);

	s = new_session(fx, fx->ws);
	append_raw(ward_session_path(s), "[1,2]\n");
	assert_int_equal(ward_session_open(&o, fx->store, ward_session_id(s)),
			 -EBADMSG);
	assert_non_null(strstr(ward_error_last(), "line 2"));

	/* A log copied under another id is refused. */
	snprintf(copy, sizeof(copy), "%s/other.jsonl", fx->store);
	snprintf(cmd, sizeof(cmd), "cp %s %s", ward_session_path(s), copy);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(ward_session_open(&o, fx->store, "other"), -EBADMSG);
	assert_non_null(strstr(ward_error_last(), "line 1"));
	ward_session_free(s);
}

/*
 * Both readers (the knob scan of open/refresh and the full read of reload)
 * refuse what the other would read differently: a duplicate key (the scan
 * sees the first "type", jansson the last) and a NUL byte (jansson reads
 * {"a":1<NUL>} as {"a":1}, and the event's text would stop at the NUL).
 * Found by tests/fuzz/fuzz_session.c.
 */
static void test_readers_agree_on_odd_lines(void **state)
{
	static const char nul[] = "{\"type\":\"x\",\"n\":1\0}\n";
	struct fx *fx = *state;
	ward_session *s = new_session(fx, fx->ws), *o = NULL;
	int fd;

	append_raw(ward_session_path(s),
		   "{\"type\":\"x\",\"type\":\"sandbox/mode\","
		   "\"mode\":\"danger-full-access\"}\n");
	assert_int_equal(ward_session_reload(s), -EBADMSG);
	assert_non_null(strstr(ward_error_last(), "line 2"));
	assert_non_null(strstr(ward_error_last(), "duplicate"));
	assert_int_equal(ward_session_mode(s, WARD_MODE_READ_ONLY, NULL),
			 WARD_MODE_READ_ONLY);
	ward_session_free(s);

	s = new_session(fx, fx->ws);
	append_raw(ward_session_path(s),
		   "{\"type\":\"sandbox/mode\",\"mode\":\"read-only\","
		   "\"mode\":\"danger-full-access\"}\n");
	assert_int_equal(ward_session_open(&o, fx->store, ward_session_id(s)),
			 -EBADMSG);
	assert_null(o);
	assert_int_equal(ward_session_reload(s), -EBADMSG);
	ward_session_free(s);

	s = new_session(fx, fx->ws);
	fd = open(ward_session_path(s), O_WRONLY | O_APPEND | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, nul, sizeof(nul) - 1),
			 (ssize_t)sizeof(nul) - 1);
	close(fd);
	assert_int_equal(ward_session_reload(s), -EBADMSG);
	assert_non_null(strstr(ward_error_last(), "NUL"));
	ward_session_free(s);
}

/*
 * Every reader bounds a line as the writer does (4 MiB): one complete
 * line of 5 MiB, valid JSON of a kind no reader skips, is refused by the
 * knob scan (open, refresh) and the full read (reload) alike, by its
 * length, before any parse (a 200 MB line took `ward session show` 37 s
 * and 615 MB).
 */
static void test_long_line_refused(void **state)
{
	static const char head[] = "{\"type\":\"sandbox/mode\",\"mode\":\""
				   "read-only\",\"pad\":\"";
	const size_t pad = 5u << 20;
	struct fx *fx = *state;
	ward_session *s = new_session(fx, fx->ws), *o = NULL;
	char *line = malloc(sizeof(head) + pad + 4);
	size_t n = 0;
	int fd;

	assert_non_null(line);
	memcpy(line, head, sizeof(head) - 1);
	n = sizeof(head) - 1;
	memset(line + n, 'x', pad);
	n += pad;
	memcpy(line + n, "\"}\n", 3);
	n += 3;
	fd = open(ward_session_path(s), O_WRONLY | O_APPEND | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, line, n), (ssize_t)n);
	close(fd);
	free(line);
	assert_int_equal(ward_session_open(&o, fx->store, ward_session_id(s)),
			 -EBADMSG);
	assert_null(o);
	assert_non_null(strstr(ward_error_last(), "line 2"));
	assert_non_null(strstr(ward_error_last(), "longer than any event"));
	assert_int_equal(ward_session_reload(s), -EBADMSG);
	assert_non_null(strstr(ward_error_last(), "longer than any event"));
	ward_session_free(s);
}

static void test_append_json_rules(void **state)
{
	struct fx *fx = *state;
	ward_session *s = new_session(fx, fx->ws);
	json_t *ev;

	assert_int_equal(
	    ward_session_append_json(
		s, "{\"type\":\"sandbox/mode\",\"mode\":\"read-only\"}"),
	    WARD_EINVAL);
	assert_int_equal(
	    ward_session_append_json(
		s, "{\"type\":\"approval/policy\",\"policy\":\"ask\"}"),
	    WARD_EINVAL);
	assert_int_equal(ward_session_append_json(
			     s, "{\"type\":\"session/header\",\"id\":\"x\"}"),
			 WARD_EINVAL);
	assert_int_equal(ward_session_append_json(s, "{\"x\":1}"), WARD_EINVAL);
	assert_int_equal(ward_session_append_json(s, "[1]"), WARD_EINVAL);
	assert_int_equal(ward_session_append_json(s, "{"), WARD_EINVAL);
	assert_int_equal(count_lines(ward_session_path(s)), 1);
	/* A newline inside a value stays inside one line. */
	assert_int_equal(ward_session_append_json(
			     s, "{\"type\":\"note\",\"text\":\"a\\nb\"}"),
			 0);
	assert_int_equal(count_lines(ward_session_path(s)), 2);
	assert_int_equal(ward_session_reload(s), 0);
	ev = event_json(s, 0);
	assert_string_equal(jstr(ev, "text"), "a\nb");
	assert_non_null(jstr(ev, "time"));
	json_decref(ev);
	ward_session_free(s);
}

/*
 * The refusal names the event type: the detail was once formatted from the
 * event after it had been freed (garbage, or a crash under ASan).
 */
static void test_append_json_refusal_names_type(void **state)
{
	static const char *const types[] = {"sandbox/mode", "approval/policy",
					    "session/header", "log/repaired"};
	struct fx *fx = *state;
	ward_session *s = new_session(fx, fx->ws);
	char ev[128], want[64];

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		snprintf(ev, sizeof(ev), "{\"type\":\"%s\",\"x\":1}", types[i]);
		snprintf(want, sizeof(want), "event type '%s' cannot",
			 types[i]);
		assert_int_equal(ward_session_append_json(s, ev), WARD_EINVAL);
		if (!strstr(ward_error_last(), want))
			fail_msg("detail \"%s\" does not name %s",
				 ward_error_last(), types[i]);
	}
	ward_session_free(s);
}

static void test_records(void **state)
{
	struct fx *fx = *state;
	ward_session *s = new_session(fx, fx->ws);
	struct ward_session_call call = WARD_SESSION_CALL_INIT;
	struct ward_session_result res = WARD_SESSION_RESULT_INIT;
	char *argv[] = {"touch", "a b", "\xff", NULL};
	char cid[16];
	json_t *ev;

	assert_int_equal(ward_session_new_call_id(cid, sizeof(cid)), 0);
	assert_int_equal(strlen(cid), 12);
	assert_int_equal(ward_session_new_call_id(cid, 5), WARD_EINVAL);
	assert_int_equal(ward_session_new_call_id(cid, sizeof(cid)), 0);
	call.call_id = cid;
	call.tool = "bash";
	call.argv = argv;
	call.cwd = fx->ws;
	call.mode = WARD_MODE_READ_ONLY;
	call.mode_source = WARD_KNOB_SESSION;
	assert_int_equal(ward_session_record_call(s, &call), 0);
	res.call_id = cid;
	res.ran = true;
	res.mode = WARD_MODE_WORKSPACE_WRITE;
	res.exit_code = 1;
	res.denied = true;
	res.runner = WARD_RUNNER_BWRAP;
	res.enforcement = WARD_ENFORCEMENT_FULL;
	res.text = ward_render_marker(WARD_MODE_WORKSPACE_WRITE);
	assert_int_equal(ward_session_record_result(s, &res), 0);
	res.ran = false;
	res.error = "escalation-rejected";
	assert_int_equal(ward_session_record_result(s, &res), 0);
	assert_int_equal(ward_session_reload(s), 0);
	assert_int_equal(ward_session_event_count(s), 3);

	ev = event_json(s, 0);
	assert_string_equal(jstr(ev, "type"), "call/start");
	assert_string_equal(jstr(ev, "call"), cid);
	assert_string_equal(jstr(ev, "tool"), "bash");
	assert_string_equal(jstr(ev, "mode"), "read-only");
	assert_string_equal(jstr(ev, "mode_source"), "session");
	assert_int_equal(json_array_size(json_object_get(ev, "argv")), 3);
	assert_string_equal(
	    json_string_value(json_array_get(json_object_get(ev, "argv"), 1)),
	    "a b");
	/* Invalid UTF-8 is kept readable, not dropped. */
	assert_string_equal(
	    json_string_value(json_array_get(json_object_get(ev, "argv"), 2)),
	    "\xef\xbf\xbd");
	json_decref(ev);

	ev = event_json(s, 1);
	assert_string_equal(jstr(ev, "type"), "call/result");
	assert_true(json_is_true(json_object_get(ev, "ran")));
	assert_true(json_is_true(json_object_get(ev, "denied")));
	assert_int_equal(json_integer_value(json_object_get(ev, "exit_code")),
			 1);
	assert_string_equal(jstr(ev, "runner"), "bwrap");
	assert_string_equal(jstr(ev, "enforcement"), "full");
	assert_string_equal(jstr(ev, "mode"), "workspace-write");
	assert_string_equal(
	    jstr(ev, "text"),
	    "[sandbox: file access denied under workspace-write mode]");
	json_decref(ev);

	ev = event_json(s, 2);
	assert_true(json_is_false(json_object_get(ev, "ran")));
	assert_null(json_object_get(ev, "exit_code"));
	assert_string_equal(jstr(ev, "error"), "escalation-rejected");
	json_decref(ev);

	call.call_id = NULL;
	assert_int_equal(ward_session_record_call(s, &call), WARD_EINVAL);
	ward_session_free(s);
}

/* --- resolution and the store's protection ---------------------------- */

static void test_store_never_writable(void **state)
{
	struct fx *fx = *state;
	ward_session *s = NULL;
	ward_policy *p = NULL;
	char tmpstore[128], tmpdir[300], store2[320], cmd[256];
	enum ward_mode m;

	/* A cwd that contains the store is refused at creation. */
	assert_int_equal(ward_session_create(&s, fx->store, fx->base),
			 WARD_EINVAL);
	assert_non_null(strstr(ward_error_last(), "is not protected"));
	assert_null(s);

	/* A store under /tmp (a writable root of workspace-write): only
	 * workspace-write calls are refused; read-only and
	 * danger-full-access (not confined) are not. */
	snprintf(tmpstore, sizeof(tmpstore), "/tmp/ward-test-store.%d",
		 (int)getpid());
	assert_int_equal(ward_session_create(&s, tmpstore, fx->ws), 0);
	for (m = WARD_MODE_READ_ONLY; m <= WARD_MODE_DANGER_FULL_ACCESS; m++) {
		assert_int_equal(ward_policy_new(&p, m, fx->ws), 0);
		assert_int_equal(ward_session_check_policy(s, p),
				 m == WARD_MODE_WORKSPACE_WRITE ? WARD_EINVAL
								: 0);
		if (m == WARD_MODE_WORKSPACE_WRITE)
			assert_non_null(
			    strstr(ward_error_last(), "writable root /tmp"));
		ward_policy_free(p);
	}
	ward_session_free(s);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpstore);
	assert_int_equal(system(cmd), 0);

	/* The same through the $TMPDIR a policy captured. */
	snprintf(tmpdir, sizeof(tmpdir), "%s/t", fx->base);
	snprintf(store2, sizeof(store2), "%s/store", tmpdir);
	assert_int_equal(ward_session_create(&s, store2, fx->ws), 0);
	assert_int_equal(ward_policy_new(&p, WARD_MODE_WORKSPACE_WRITE, fx->ws),
			 0);
	assert_int_equal(ward_session_check_policy(s, p), 0);
	assert_int_equal(ward_policy_set_tmpdir(p, tmpdir), 0);
	assert_int_equal(ward_session_check_policy(s, p), WARD_EINVAL);
	assert_non_null(strstr(ward_error_last(), tmpdir));
	ward_policy_free(p);
	ward_session_free(s);
}

/*
 * The default store lies in ward's state directory, a protected path that
 * every runner and the fence keep read-only inside any writable root: then
 * a workspace containing it (a session in $HOME) is fine.
 */
static void test_protected_store_allowed(void **state)
{
	struct fx *fx = *state;
	char statedir[300], *saved = getenv("XDG_STATE_HOME");
	ward_session *s = NULL;
	ward_policy *p = NULL;
	struct ward_fs_denial d;
	enum ward_mode m = WARD_MODE_WORKSPACE_WRITE;
	char *store = NULL, target[600];

	saved = saved ? strdup(saved) : NULL;
	snprintf(statedir, sizeof(statedir), "%s/state", fx->base);
	setenv("XDG_STATE_HOME", statedir, 1);
	assert_int_equal(ward_session_create(&s, NULL, fx->base), 0);
	assert_int_equal(ward_session_store_default(&store), 0);
	assert_true(strncmp(ward_session_path(s), store, strlen(store)) == 0);
	assert_int_equal(ward_policy_new(&p, m, fx->base), 0);
	assert_int_equal(ward_session_check_policy(s, p), 0);
	/* …because the fence (like the runners) keeps it read-only. */
	snprintf(target, sizeof(target), "%s/evil.jsonl", store);
	assert_int_equal(ward_fs_write(&d, p, target, "x", 1, NULL),
			 WARD_EDENIED);
	assert_int_equal(
	    ward_fs_write(&d, p, ward_session_path(s), "x", 1, NULL),
	    WARD_EDENIED);
	ward_policy_free(p);
	ward_session_free(s);
	free(store);
	if (saved)
		setenv("XDG_STATE_HOME", saved, 1);
	else
		unsetenv("XDG_STATE_HOME");
	free(saved);
}

/* --- presets ----------------------------------------------------------- */

static void test_presets_table(void **state)
{
	ward_presets *p = NULL;
	enum ward_approval_policy a;
	enum ward_mode m;
	const char *name;

	(void)state;
	assert_int_equal(ward_presets_new_default(&p), 0);
	assert_int_equal(ward_presets_count(p), 3);
	assert_int_equal(ward_presets_get(&name, &m, &a, p, 0), 0);
	assert_string_equal(name, "read-only");
	assert_int_equal(m, WARD_MODE_READ_ONLY);
	assert_int_equal(a, WARD_APPROVAL_ASK);
	assert_int_equal(ward_presets_get(&name, &m, &a, p, 1), 0);
	assert_string_equal(name, "workspace-write");
	assert_int_equal(m, WARD_MODE_WORKSPACE_WRITE);
	assert_int_equal(a, WARD_APPROVAL_ASK);
	assert_int_equal(ward_presets_get(&name, &m, &a, p, 2), 0);
	assert_string_equal(name, "danger-full-access");
	assert_int_equal(m, WARD_MODE_DANGER_FULL_ACCESS);
	assert_int_equal(a, WARD_APPROVAL_NEVER);
	assert_int_equal(ward_presets_get(&name, NULL, NULL, p, 3), -ERANGE);

	assert_string_equal(
	    ward_presets_match(p, WARD_MODE_WORKSPACE_WRITE, WARD_APPROVAL_ASK),
	    "workspace-write");
	assert_string_equal(ward_presets_match(p, WARD_MODE_WORKSPACE_WRITE,
					       WARD_APPROVAL_NEVER),
			    "custom");
	assert_string_equal(ward_presets_match(p, WARD_MODE_DANGER_FULL_ACCESS,
					       WARD_APPROVAL_ASK),
			    "custom");

	/* custom is reserved; names are validated; pairs are unique. */
	assert_int_equal(ward_presets_set(p, "custom", WARD_MODE_READ_ONLY,
					  WARD_APPROVAL_NEVER),
			 WARD_EINVAL);
	assert_int_equal(ward_presets_set(p, "a b", WARD_MODE_READ_ONLY,
					  WARD_APPROVAL_NEVER),
			 WARD_EINVAL);
	assert_int_equal(
	    ward_presets_set(p, "", WARD_MODE_READ_ONLY, WARD_APPROVAL_NEVER),
	    WARD_EINVAL);
	assert_int_equal(
	    ward_presets_set(p, "dup", WARD_MODE_READ_ONLY, WARD_APPROVAL_ASK),
	    WARD_EINVAL);
	assert_non_null(strstr(ward_error_last(), "read-only"));
	assert_int_equal(ward_presets_count(p), 3);
	assert_int_equal(ward_presets_find(&m, &a, p, "custom"), WARD_EINVAL);
	/* The texts every front end shows, with the valid presets. */
	assert_string_equal(ward_error_last(),
			    "'custom' cannot be set: it names any combination "
			    "that matches no preset (valid: read-only, "
			    "workspace-write, danger-full-access)");
	assert_int_equal(ward_presets_find(&m, &a, p, "nope"), -ENOENT);
	assert_string_equal(ward_error_last(),
			    "unknown preset 'nope' (valid: read-only, "
			    "workspace-write, danger-full-access)");

	/* Redefinition keeps the position; a new one goes last. */
	assert_int_equal(ward_presets_set(p, "workspace-write",
					  WARD_MODE_WORKSPACE_WRITE,
					  WARD_APPROVAL_NEVER),
			 0);
	assert_int_equal(ward_presets_get(&name, NULL, &a, p, 1), 0);
	assert_string_equal(name, "workspace-write");
	assert_int_equal(a, WARD_APPROVAL_NEVER);
	assert_int_equal(ward_presets_set(p, "auto-edit",
					  WARD_MODE_WORKSPACE_WRITE,
					  WARD_APPROVAL_ASK),
			 0);
	assert_int_equal(ward_presets_count(p), 4);
	assert_string_equal(
	    ward_presets_match(p, WARD_MODE_WORKSPACE_WRITE, WARD_APPROVAL_ASK),
	    "auto-edit");
	assert_int_equal(ward_presets_remove(p, "auto-edit"), 0);
	assert_int_equal(ward_presets_remove(p, "auto-edit"), -ENOENT);
	assert_int_equal(ward_presets_count(p), 3);
	ward_presets_free(p);

	/* An empty table: everything is custom. */
	assert_int_equal(ward_presets_new(&p), 0);
	assert_string_equal(
	    ward_presets_match(p, WARD_MODE_READ_ONLY, WARD_APPROVAL_ASK),
	    "custom");
	ward_presets_free(p);
}

static void test_presets_on_session(void **state)
{
	struct fx *fx = *state;
	ward_session *s = new_session(fx, fx->ws);
	struct ward_session_defaults d = DEFAULTS;
	ward_presets *p = NULL;
	bool changed;

	assert_int_equal(ward_presets_new_default(&p), 0);
	/* (read-only, ask) by default. */
	assert_string_equal(ward_presets_current(p, s, &d), "read-only");
	/* Already in force: nothing appended. */
	assert_int_equal(ward_presets_apply(&changed, s, p, "read-only", &d),
			 0);
	assert_false(changed);
	assert_int_equal(count_lines(ward_session_path(s)), 1);
	/* Only the mode changes: one event. */
	assert_int_equal(
	    ward_presets_apply(&changed, s, p, "workspace-write", &d), 0);
	assert_true(changed);
	assert_int_equal(ward_session_event_count(s), 1);
	assert_string_equal(ward_presets_current(p, s, &d), "workspace-write");
	/* Both change: two events. */
	assert_int_equal(
	    ward_presets_apply(&changed, s, p, "danger-full-access", &d), 0);
	assert_int_equal(ward_session_event_count(s), 3);
	assert_string_equal(ward_session_event_type(s, 1), "sandbox/mode");
	assert_string_equal(ward_session_event_type(s, 2), "approval/policy");
	assert_string_equal(ward_presets_current(p, s, &d),
			    "danger-full-access");
	/* A knob set alone makes it custom… */
	assert_int_equal(
	    ward_session_set_mode(NULL, s, WARD_MODE_WORKSPACE_WRITE, &d), 0);
	assert_string_equal(ward_presets_current(p, s, &d), "custom");
	/* …which can be left, not entered. */
	assert_int_equal(ward_presets_apply(&changed, s, p, "custom", &d),
			 WARD_EINVAL);
	assert_int_equal(ward_presets_apply(&changed, s, p, "nope", &d),
			 -ENOENT);
	assert_int_equal(ward_session_event_count(s), 4);
	assert_int_equal(ward_presets_apply(&changed, s, p, "read-only", &d),
			 0);
	assert_true(changed);
	assert_string_equal(ward_presets_current(p, s, &d), "read-only");
	assert_int_equal(ward_session_event_count(s), 6);
	/* The current preset follows the configured defaults too. */
	ward_session_free(s);
	s = new_session(fx, fx->ws);
	d.mode = WARD_MODE_DANGER_FULL_ACCESS;
	d.approval = WARD_APPROVAL_NEVER;
	assert_string_equal(ward_presets_current(p, s, &d),
			    "danger-full-access");
	ward_presets_free(p);
	ward_session_free(s);
}

static void test_names(void **state)
{
	enum ward_approval_policy a;

	(void)state;
	assert_int_equal(ward_approval_policy_parse(&a, "never"), 0);
	assert_int_equal(a, WARD_APPROVAL_NEVER);
	assert_int_equal(ward_approval_policy_parse(&a, "ask"), 0);
	assert_int_equal(a, WARD_APPROVAL_ASK);
	assert_int_equal(ward_approval_policy_parse(&a, "Never"), WARD_EINVAL);
	assert_non_null(strstr(ward_error_last(), "Never"));
	assert_int_equal(ward_approval_policy_parse(&a, NULL), WARD_EINVAL);
	assert_string_equal(ward_approval_policy_name(WARD_APPROVAL_NEVER),
			    "never");
	assert_string_equal(
	    ward_approval_policy_name((enum ward_approval_policy)9), "unknown");
	assert_string_equal(ward_knob_source_name(WARD_KNOB_ESCALATION),
			    "escalation");
}

/* --- lock waits are bounded ------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Fork a process that opens @path READ-ONLY (all a confined command can
 * do with a session log), takes flock(@how) and holds it for @hold_ms
 * (0: until killed). Returns its pid once it holds the lock.
 */
static pid_t lock_holder(const char *path, int how, unsigned hold_ms)
{
	int p[2];
	pid_t pid;
	char c;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		int null = open("/dev/null", O_WRONLY);

		/* Never outlive a failed test, nor hold its output open. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(null, 1);
		dup2(null, 2);
		close(p[0]);
		if (fd < 0 || flock(fd, how) != 0)
			_exit(1);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		if (hold_ms)
			usleep(hold_ms * 1000);
		else
			for (;;)
				pause();
		_exit(0);
	}
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	return pid;
}

static void stop_holder(pid_t pid)
{
	int st;

	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &st, 0), pid);
}

/* A lock released within the bound: the operation waits, then works. */
static void test_lock_contended_then_released(void **state)
{
	struct fx *fx = *state;
	ward_session *s = new_session(fx, fx->ws);
	bool changed = false;
	double t0, waited;
	pid_t holder;
	int st;

	/* A bound no loaded machine reaches: the holder lets go first. */
	setenv("WARD_SESSION_LOCK_WAIT_MS", "600000", 1);
	holder = lock_holder(ward_session_path(s), LOCK_SH, 400);
	t0 = now_s();
	assert_int_equal(
	    ward_session_set_mode(&changed, s, WARD_MODE_WORKSPACE_WRITE, NULL),
	    0);
	waited = now_s() - t0;
	unsetenv("WARD_SESSION_LOCK_WAIT_MS");
	/* It waited for the holder (a lower bound holds on any machine), and
	 * got the lock within the bound (else it would have failed). */
	assert_true(changed);
	assert_true(waited >= 0.3);
	assert_int_equal(waitpid(holder, &st, 0), holder);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	ward_session_free(s);
}

/* One session operation run on its own thread against a held lock. */
struct lock_op {
	ward_session *s;
	int which; /* 0 set_mode, 1 append_json, 2 reload */
	int err;
	char detail[1024];
	double secs;
};

static void *lock_op_main(void *arg)
{
	struct lock_op *op = arg;
	double t0 = now_s();

	switch (op->which) {
	case 0:
		op->err = ward_session_set_mode(
		    NULL, op->s, WARD_MODE_DANGER_FULL_ACCESS, NULL);
		break;
	case 1:
		op->err =
		    ward_session_append_json(op->s, "{\"type\":\"test/x\"}");
		break;
	default:
		op->err = ward_session_reload(op->s);
		break;
	}
	op->secs = now_s() - t0;
	snprintf(op->detail, sizeof(op->detail), "%s", ward_error_last());
	return NULL;
}

/*
 * A process that holds an exclusive lock forever (flock needs only a read
 * descriptor) makes every operation fail after the bound, with an error
 * naming the log, instead of hanging: the knob setter, an append and a
 * reload (run side by side, so the test waits the bound once).
 */
static void test_lock_held_forever_fails_bounded(void **state)
{
	struct fx *fx = *state;
	ward_session *s = new_session(fx, fx->ws);
	struct lock_op ops[3];
	pthread_t th[3];
	/* The bound comes from the environment (tests shorten it). */
	const double bound = 1.2;
	pid_t holder;

	setenv("WARD_SESSION_LOCK_WAIT_MS", "1200", 1);
	for (int i = 0; i < 3; i++) {
		ops[i] = (struct lock_op){.which = i};
		ops[i].s = reopen(fx, s);
	}
	holder = lock_holder(ward_session_path(s), LOCK_EX, 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(
		    pthread_create(&th[i], NULL, lock_op_main, &ops[i]), 0);
	}
	for (int i = 0; i < 3; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		print_message("op %d: %d after %.2fs: %s\n", i, ops[i].err,
			      ops[i].secs, ops[i].detail);
		assert_int_equal(ops[i].err, -EAGAIN);
		/* Not before the bound; after it, at all (a hang would be
		 * the unit binary's timeout). */
		assert_true(ops[i].secs >= bound - 0.1);
		assert_non_null(strstr(ops[i].detail, ward_session_path(s)));
		assert_non_null(strstr(ops[i].detail, "another process"));
		assert_non_null(strstr(ops[i].detail, "for 1.2 s"));
	}
	unsetenv("WARD_SESSION_LOCK_WAIT_MS");
	/* Nothing was appended; once the holder is gone all is well. */
	assert_int_equal(count_lines(ward_session_path(s)), 1);
	stop_holder(holder);
	for (int i = 0; i < 3; i++) {
		lock_op_main(&ops[i]);
		assert_int_equal(ops[i].err, 0);
		ward_session_free(ops[i].s);
	}
	assert_int_equal(count_lines(ward_session_path(s)), 3);
	ward_session_free(s);
}

/*
 * A long log is folded once: the checkpoint lets the next open read only
 * what came after it, and a checkpoint that does not match the log (the
 * log was cut and rewritten, the file was forged with a wider mode, it is
 * writable by others) is ignored — the log is read again in full.
 */
static void test_fold_checkpoint(void **state)
{
	struct fx *fx = *state;
	ward_session *s = NULL, *t = NULL;
	char fold[600], line[200];
	FILE *f;

	assert_int_equal(ward_session_create(&s, fx->store, fx->ws), 0);
	/* 2,000 call records: more than the checkpoint's threshold (written
	 * at once: 2,000 appends would be 2,000 fdatasyncs). */
	{
		char *all = malloc(2000 * sizeof(line));
		size_t n = 0;

		assert_non_null(all);
		for (int i = 0; i < 2000; i++) {
			snprintf(line, sizeof(line),
				 "{\"type\":\"call/start\",\"n\":%d,"
				 "\"pad\":\"xxxxxxxxxxxxxxxxxxxxxxxx\"}\n",
				 i);
			memcpy(all + n, line, strlen(line) + 1);
			n += strlen(line);
		}
		append_raw(ward_session_path(s), all);
		free(all);
	}
	assert_int_equal(ward_session_set_mode(
			     NULL, s, WARD_MODE_WORKSPACE_WRITE, &DEFAULTS),
			 0);
	snprintf(fold, sizeof(fold), "%s/.%s.fold", ward_session_store(s),
		 ward_session_id(s));
	/* The first full read after the appends writes the checkpoint. */
	assert_int_equal(ward_session_open(&t, fx->store, ward_session_id(s)),
			 0);
	assert_int_equal(access(fold, F_OK), 0);
	assert_int_equal(ward_session_mode(t, WARD_MODE_READ_ONLY, NULL),
			 WARD_MODE_WORKSPACE_WRITE);
	ward_session_free(t);
	/* A knob after the checkpoint is seen. */
	assert_int_equal(
	    ward_session_set_mode(NULL, s, WARD_MODE_READ_ONLY, &DEFAULTS), 0);
	assert_int_equal(ward_session_open(&t, fx->store, ward_session_id(s)),
			 0);
	assert_int_equal(ward_session_mode(t, WARD_MODE_WORKSPACE_WRITE, NULL),
			 WARD_MODE_READ_ONLY);
	ward_session_free(t);
	/* Forged checkpoints: a wider mode with a tail hash that does not
	 * match the log is ignored; with the right hash, it is ignored when
	 * anyone else could have written the file. */
	f = fopen(fold, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	{
		unsigned long long dev, ino, seen, lines, hash;
		int mode, approval, network;

		assert_int_equal(sscanf(line,
					"ward-fold 2 %llu %llu %llu %llu %d "
					"%d %d %llx",
					&dev, &ino, &seen, &lines, &mode,
					&approval, &network, &hash),
				 8);
		for (int k = 0; k < 2; k++) {
			f = fopen(fold, "w");
			assert_non_null(f);
			fprintf(f,
				"ward-fold 2 %llu %llu %llu %llu %d %d %d "
				"%llx\n",
				dev, ino, seen, lines,
				(int)WARD_MODE_DANGER_FULL_ACCESS, approval,
				network, k == 0 ? hash ^ 1 : hash);
			fclose(f);
			assert_int_equal(chmod(fold, k == 0 ? 0600 : 0666), 0);
			assert_int_equal(ward_session_open(&t, fx->store,
							   ward_session_id(s)),
					 0);
			assert_int_equal(
			    ward_session_mode(t, WARD_MODE_READ_ONLY, NULL),
			    WARD_MODE_READ_ONLY);
			ward_session_free(t);
		}
	}
	ward_session_free(s);
}

/*
 * A session made with its initial knobs has them from its first line on:
 * the mode in force when it was made, whatever the default says later.
 */
static void test_create_with_knobs(void **state)
{
	struct fx *fx = *state;
	struct ward_session_create_options o;
	enum ward_knob_source src;
	ward_session *s = NULL, *r;

	assert_int_equal(ward_session_create_options_init(
			     &o, WARD_SESSION_CREATE_OPTIONS_VERSION),
			 0);
	o.store = fx->store;
	o.cwd = fx->ws;
	o.set_mode = true;
	o.mode = WARD_MODE_READ_ONLY;
	o.set_approval = true;
	o.approval = WARD_APPROVAL_NEVER;
	assert_int_equal(ward_session_create_with(&s, &o), 0);
	/* Header, sandbox/mode, approval/policy: one atomic file. */
	assert_int_equal(count_lines(ward_session_path(s)), 3);
	r = reopen(fx, s);
	/* A later default of workspace-write does not move it. */
	assert_int_equal(ward_session_mode(r, WARD_MODE_WORKSPACE_WRITE, &src),
			 WARD_MODE_READ_ONLY);
	assert_int_equal(src, WARD_KNOB_SESSION);
	assert_int_equal(ward_session_approval(r, WARD_APPROVAL_ASK, NULL),
			 WARD_APPROVAL_NEVER);
	ward_session_free(r);
	ward_session_free(s);

	/* Bad options are refused and create nothing. */
	o.mode = (enum ward_mode)42;
	assert_int_equal(ward_session_create_with(&s, &o), WARD_EINVAL);
	o.mode = WARD_MODE_READ_ONLY;
	o.version = 99;
	assert_int_equal(ward_session_create_with(&s, &o), WARD_EINVAL);
	{
		char **ids = NULL;

		assert_int_equal(ward_session_list(&ids, fx->store), 0);
		assert_int_equal(ward_strv_len(ids), 1);
		ward_strv_free(ids);
	}
}

/*
 * A session made with a given id (version 2 of the options, `ward acp`'s
 * sessions): that id, found again by it; a second create of the same id
 * is -EEXIST and writes nothing; a bad id is refused; a version-1 struct
 * still gets a random one.
 */
static void test_create_with_id(void **state)
{
	struct fx *fx = *state;
	struct ward_session_create_options o;
	ward_session *s = NULL, *t = NULL;
	char **ids = NULL;

	assert_int_equal(ward_session_create_options_init(
			     &o, WARD_SESSION_CREATE_OPTIONS_VERSION),
			 0);
	o.store = fx->store;
	o.cwd = fx->ws;
	o.id = "acp-0123abcd";
	assert_int_equal(ward_session_create_with(&s, &o), 0);
	assert_string_equal(ward_session_id(s), "acp-0123abcd");
	assert_int_equal(ward_session_open(&t, fx->store, "acp-0123abcd"), 0);
	assert_string_equal(ward_session_cwd(t), ward_session_cwd(s));
	ward_session_free(t);
	t = NULL;
	o.set_mode = true;
	o.mode = WARD_MODE_DANGER_FULL_ACCESS;
	assert_int_equal(ward_session_create_with(&t, &o), -EEXIST);
	assert_null(t);
	/* The existing log was not touched: just its header. */
	assert_int_equal(count_lines(ward_session_path(s)), 1);
	o.id = "../x";
	assert_int_equal(ward_session_create_with(&t, &o), WARD_EINVAL);
	assert_int_equal(ward_session_create_options_init(&o, 1), 0);
	assert_int_equal(o.version, 1);
	o.store = fx->store;
	o.cwd = fx->ws;
	assert_int_equal(ward_session_create_with(&t, &o), 0);
	assert_string_not_equal(ward_session_id(t), "acp-0123abcd");
	assert_int_equal(ward_session_list(&ids, fx->store), 0);
	assert_int_equal(ward_strv_len(ids), 2);
	ward_strv_free(ids);
	ward_session_free(t);
	ward_session_free(s);
}

/* rm: the log goes, under its lock; unknown and bad ids are errors. */
static void test_remove(void **state)
{
	struct fx *fx = *state;
	ward_session *a = new_session(fx, fx->ws);
	ward_session *b = new_session(fx, fx->ws2);
	char **ids = NULL;
	char id[WARD_SESSION_ID_MAX + 1];
	int fd;
	pid_t pid;
	int st;

	snprintf(id, sizeof(id), "%s", ward_session_id(a));
	assert_int_equal(ward_session_remove(fx->store, id), 0);
	assert_int_equal(access(ward_session_path(a), F_OK), -1);
	assert_int_equal(ward_session_list(&ids, fx->store), 0);
	assert_int_equal(ward_strv_len(ids), 1);
	assert_string_equal(ids[0], ward_session_id(b));
	ward_strv_free(ids);
	assert_int_equal(ward_session_remove(fx->store, id), -ENOENT);
	assert_int_equal(ward_session_remove(fx->store, "../x"), WARD_EINVAL);

	/* Another process holding the lock all along: -EAGAIN, bounded,
	 * and the session stays. */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		fd = open(ward_session_path(b), O_RDONLY | O_CLOEXEC);
		if (fd < 0 || flock(fd, LOCK_SH) != 0)
			_exit(1);
		pause();
		_exit(0);
	}
	/* Wait until the child holds it. */
	fd = open(ward_session_path(b), O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	while (flock(fd, LOCK_EX | LOCK_NB) == 0) {
		flock(fd, LOCK_UN);
		usleep(1000);
	}
	close(fd);
	setenv("WARD_SESSION_LOCK_WAIT_MS", "300", 1);
	assert_int_equal(ward_session_remove(fx->store, ward_session_id(b)),
			 -EAGAIN);
	unsetenv("WARD_SESSION_LOCK_WAIT_MS");
	assert_int_equal(access(ward_session_path(b), F_OK), 0);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	assert_int_equal(ward_session_remove(fx->store, ward_session_id(b)), 0);
	ward_session_free(a);
	ward_session_free(b);
}

/* prune: by the age of the last event; fresh sessions stay. */
static void test_prune(void **state)
{
	struct fx *fx = *state;
	ward_session *old = new_session(fx, fx->ws);
	ward_session *fresh = new_session(fx, fx->ws2);
	struct timespec t[2];
	char **removed = NULL, **busy = NULL, **ids = NULL;

	/* The old one was last written two days ago. */
	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= 2 * 86400;
	t[1] = t[0];
	assert_int_equal(utimensat(AT_FDCWD, ward_session_path(old), t, 0), 0);
	assert_int_equal(ward_session_prune(&removed, &busy, fx->store, 86400),
			 0);
	assert_int_equal(ward_strv_len(removed), 1);
	assert_string_equal(removed[0], ward_session_id(old));
	assert_int_equal(ward_strv_len(busy), 0);
	ward_strv_free(removed);
	ward_strv_free(busy);
	assert_int_equal(ward_session_list(&ids, fx->store), 0);
	assert_int_equal(ward_strv_len(ids), 1);
	assert_string_equal(ids[0], ward_session_id(fresh));
	ward_strv_free(ids);
	/* Appending makes a session fresh again: nothing older than 1 h. */
	assert_int_equal(ward_session_set_mode(
			     NULL, fresh, WARD_MODE_WORKSPACE_WRITE, &DEFAULTS),
			 0);
	assert_int_equal(ward_session_prune(&removed, NULL, fx->store, 3600),
			 0);
	assert_int_equal(ward_strv_len(removed), 0);
	ward_strv_free(removed);
	/* A missing store prunes nothing. */
	assert_int_equal(ward_session_prune(&removed, NULL,
					    "/var/tmp/ward-no-such-store", 0),
			 0);
	assert_int_equal(ward_strv_len(removed), 0);
	ward_strv_free(removed);
	ward_session_free(old);
	ward_session_free(fresh);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(test_create_and_header),
	    T(test_ids_validated),
	    T(test_list_empty_store),
	    T(test_create_with_knobs),
	    T(test_create_with_id),
	    T(test_remove),
	    T(test_prune),
	    cmocka_unit_test(test_store_default),
	    T(test_folds_and_setters),
	    T(test_setter_sees_other_writers),
	    T(test_restart_immunity),
	    T(test_sessions_isolated),
	    T(test_concurrent_appends),
	    T(test_lock_contended_then_released),
	    T(test_lock_held_forever_fails_bounded),
	    T(test_fold_checkpoint),
	    T(test_torn_tail_ignored_and_repaired),
	    T(test_kill9_during_appends),
	    T(test_corrupt_middle_line_is_an_error),
	    T(test_corrupt_knob_and_header),
	    T(test_readers_agree_on_odd_lines),
	    T(test_long_line_refused),
	    T(test_append_json_rules),
	    T(test_append_json_refusal_names_type),
	    T(test_records),
	    T(test_store_never_writable),
	    T(test_protected_store_allowed),
	    cmocka_unit_test(test_presets_table),
	    T(test_presets_on_session),
	    cmocka_unit_test(test_names),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
