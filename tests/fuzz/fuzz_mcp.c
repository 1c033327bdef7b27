/*
 * fuzz_mcp — libFuzzer target for `ward mcp`'s server loop and its tools'
 * arguments (src/mcp/server.c, src/mcp/tools.c over libward): the whole
 * server runs in-process, input after input, on a scratch workspace and
 * session store.
 *
 * Input: byte 0 says whether the client declares elicitation; the rest is
 * what the client sends, one JSON-RPC message a line, after an initialize
 * request and its notification: tool calls with any arguments (workdir,
 * timeout_ms, task ids, run_in_background, paths, escalation fields),
 * progress tokens, cancellations, replies to the server's requests
 * (elicitation), logging levels, garbage. Nothing the fuzzer writes can run
 * a command or change a file outside the scratch tree: the server is in
 * read-only mode with approval "never" (no escalation is ever granted) and
 * no runner it can use (bwrap forced, PATH empty: every bash call is
 * refused as unconfinable), and every "command" is replaced by "true".
 * Checked, for every input:
 *   1. the server ends (end of input) with exit status 0, never dies;
 *   2. every output line is one JSON-RPC 2.0 object: a response (an id the
 *      client sent, exactly one of result and error) or a request or
 *      notification of the server's (a method); every request the client
 *      sent (an object with a method, a string or integer id, not cut off
 *      by its own cancellation) is answered exactly once, and nothing else
 *      is answered; a tools/call result has content text and isError;
 *   3. the session the server made reads back valid (every line), has a
 *      call/result for every call/start, and ends with mcp/end.
 *
 * Build and run: `make fuzz` (or `make fuzz-lane`); see tests/fuzz/run.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "fuzz_cli.h"
#include "ward/ward.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char T[64], ws[128], store[160], in_path[128], out_path[128];

static void cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", T);
	if (system(cmd) != 0) {
		/* nothing more to do */
	}
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		abort();
}

static void setup(void)
{
	char p[256];

	if (!mkdtemp(strcpy(T, access("/dev/shm", W_OK) == 0
				   ? "/dev/shm/fuzz_mcp.XXXXXX"
				   : "/tmp/fuzz_mcp.XXXXXX")))
		abort();
	atexit(cleanup);
	snprintf(ws, sizeof(ws), "%s/ws", T);
	if (mkdir(ws, 0755) != 0)
		abort();
	snprintf(p, sizeof(p), "%s/config", T);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/config/ward", T);
	if (mkdir(p, 0700) != 0)
		abort();
	snprintf(p, sizeof(p), "%s/config/ward/config.yml", T);
	put(p, "approval: never\n");
	snprintf(p, sizeof(p), "%s/ws/notes.txt", T);
	put(p, "line one\nline two\n");
	snprintf(p, sizeof(p), "%s/ws/sub", T);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/state", T);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/empty", T);
	mkdir(p, 0755);
	setenv("PATH", p, 1);
	snprintf(p, sizeof(p), "%s/config", T);
	setenv("XDG_CONFIG_HOME", p, 1);
	snprintf(p, sizeof(p), "%s/state", T);
	setenv("XDG_STATE_HOME", p, 1);
	setenv("HOME", T, 1);
	snprintf(store, sizeof(store), "%s/state/ward/sessions", T);
	snprintf(in_path, sizeof(in_path), "%s/in", T);
	snprintf(out_path, sizeof(out_path), "%s/out", T);
}

/* The client's line, with any "command" made harmless; NULL: as is. */
static char *tame(const char *line, size_t len)
{
	json_t *m = json_loadb(line, len, 0, NULL);
	json_t *args = json_object_get(json_object_get(m, "params"),
				       "arguments");
	char *out = NULL;

	if (json_is_object(args) && json_object_get(args, "command")) {
		json_object_set_new(args, "command", json_string("true"));
		out = json_dumps(m, JSON_COMPACT);
	}
	json_decref(m);
	return out;
}

/* The id of a client request in @line (NULL: not a request). */
static json_t *request_id(const char *line, size_t len, char **method)
{
	json_t *m = json_loadb(line, len, 0, NULL), *id, *meth;

	*method = NULL;
	if (!json_is_object(m))
		goto none;
	id = json_object_get(m, "id");
	meth = json_object_get(m, "method");
	if (!json_is_string(meth) ||
	    !(json_is_string(id) || json_is_integer(id)) ||
	    !json_is_string(json_object_get(m, "jsonrpc")) ||
	    strcmp(json_string_value(json_object_get(m, "jsonrpc")), "2.0") ||
	    json_object_get(m, "result") || json_object_get(m, "error"))
		goto none;
	*method = strdup(json_string_value(meth));
	id = json_incref(id);
	json_decref(m);
	return id;
none:
	json_decref(m);
	return NULL;
}

/* The id of any message of @line that is not a valid response (the server
 * answers even an invalid message when its id can be read). */
static char *any_id(const char *line, size_t len)
{
	json_t *m = json_loadb(line, len, 0, NULL), *id;
	char *key = NULL;

	id = json_object_get(m, "id");
	if (json_is_object(m) && (json_is_string(id) || json_is_integer(id)))
		key = json_dumps(id, JSON_ENCODE_ANY);
	json_decref(m);
	return key;
}

/* Ids the client cancelled (notifications/cancelled's requestId). */
static bool cancelled(json_t *cancels, json_t *id)
{
	size_t i;
	json_t *v;

	json_array_foreach(cancels, i, v)
	{
		if (json_equal(v, id))
			return true;
	}
	return false;
}

static void check_session(void)
{
	char **ids = NULL;
	ward_session *s = NULL;
	size_t starts = 0, results = 0, n;

	if (ward_session_list(&ids, store) != 0 || ward_strv_len(ids) != 1) {
		fprintf(stderr, "not one session: %s\n", ward_error_last());
		abort();
	}
	if (ward_session_open(&s, store, ids[0]) != 0 ||
	    ward_session_reload(s) != 0) {
		fprintf(stderr, "the session does not read back: %s\n",
			ward_error_last());
		abort();
	}
	n = ward_session_event_count(s);
	for (size_t i = 0; i < n; i++) {
		const char *t = ward_session_event_type(s, i);

		starts += strcmp(t, "call/start") == 0;
		results += strcmp(t, "call/result") == 0;
	}
	if (starts != results || !n ||
	    strcmp(ward_session_event_type(s, n - 1), "mcp/end") != 0) {
		fprintf(stderr, "%zu call/start, %zu call/result, last %s\n",
			starts, results,
			n ? ward_session_event_type(s, n - 1) : "-");
		abort();
	}
	ward_session_free(s);
	if (ward_session_remove(store, ids[0]) != 0)
		abort();
	ward_strv_free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *argv[] = {"mcp", "--mode", "read-only", "--runner",
			       "bwrap", "--drain-timeout", "2", "--workspace",
			       NULL, NULL};
	json_t *asked = json_object(), *cancels = json_array();
	json_t *answered = json_object(), *maybe = json_object();
	FILE *in;
	char *out = NULL;
	size_t outlen = 0;
	const uint8_t *p, *end;
	int saved_in, saved_out, fd;
	volatile int status = -1;
	bool died = false;

	if (!T[0])
		setup();
	if (size < 1 || size > 16384)
		goto out;
	argv[8] = ws;

	/* The client's side: initialize, then the input's lines. */
	in = fopen(in_path, "w");
	if (!in)
		abort();
	fprintf(in,
		"{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":"
		"\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
		"\"capabilities\":{%s},\"clientInfo\":{\"name\":\"fuzz\","
		"\"version\":\"1\"}}}\n"
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"
		"\n",
		data[0] & 1 ? "\"elicitation\":{}" : "");
	json_object_set_new(asked, "\"init\"", json_integer(1));
	json_object_set_new(maybe, "\"init\"", json_integer(0));
	for (p = data + 1, end = data + size; p < end;) {
		const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char *t = tame((const char *)p, len), *method;
		const char *l = t ? t : (const char *)p;
		size_t ll = t ? strlen(t) : len;
		json_t *id = request_id(l, ll, &method);
		char *anykey = any_id(l, ll);

		/* maybe: every message with a readable id, and how many of
		 * them are not valid requests (each may still be answered,
		 * with an error). */
		if (anykey) {
			json_t *n = json_object_get(maybe, anykey);
			json_int_t k = json_is_integer(n) ? json_integer_value(n)
							  : 0;

			json_object_set_new(maybe, anykey,
					    json_integer(id ? k : k + 1));
		}
		free(anykey);

		if (id) {
			char *key = json_dumps(id, JSON_ENCODE_ANY);
			json_t *n = json_object_get(asked, key);

			json_object_set_new(asked, key,
					    json_integer(n ? json_integer_value(n) + 1
							   : 1));
			free(key);
			json_decref(id);
		}
		free(method);
		{
			json_t *m = json_loadb(l, ll, 0, NULL);
			json_t *rid = json_object_get(
			    json_object_get(m, "params"), "requestId");

			if (json_is_string(json_object_get(m, "method")) &&
			    strcmp(json_string_value(json_object_get(m, "method")),
				   "notifications/cancelled") == 0 &&
			    rid)
				json_array_append(cancels, rid);
			json_decref(m);
		}
		if (fwrite(l, 1, ll, in) != ll || fputc('\n', in) == EOF)
			abort();
		free(t);
		p += len + 1;
	}
	if (fclose(in) != 0)
		abort();

	/* The server, its stdin the file, its stdout another. */
	saved_in = dup(0);
	saved_out = dup(1);
	fd = open(in_path, O_RDONLY);
	if (fd < 0 || dup2(fd, 0) < 0)
		abort();
	close(fd);
	fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || dup2(fd, 1) < 0)
		abort();
	close(fd);
	fuzz_cli_new_parse();
	if (setjmp(fuzz_cli_jmp) == 0) {
		fuzz_cli_armed = true;
		status = cmd_mcp(9, argv);
		fuzz_cli_armed = false;
	} else {
		died = true;
		status = fuzz_cli_status;
	}
	fflush(stdout);
	dup2(saved_in, 0);
	dup2(saved_out, 1);
	close(saved_in);
	close(saved_out);

	/* 1. */
	if (died || status != 0) {
		fprintf(stderr, "ward mcp %s with %d\n",
			died ? "died" : "returned", status);
		abort();
	}

	/* 2. */
	{
		FILE *f = fopen(out_path, "r");
		ssize_t r;

		if (!f)
			abort();
		while ((r = getline(&out, &outlen, f)) > 0) {
			json_t *m = json_loads(out, 0, NULL), *id;
			json_t *res, *err;
			char *key;

			if (!json_is_object(m) ||
			    !json_is_string(json_object_get(m, "jsonrpc")) ||
			    strcmp(json_string_value(json_object_get(m, "jsonrpc")),
				   "2.0") != 0) {
				fprintf(stderr, "not JSON-RPC 2.0: %s", out);
				abort();
			}
			if (json_object_get(m, "method")) {
				json_decref(m);
				continue;
			}
			id = json_object_get(m, "id");
			res = json_object_get(m, "result");
			err = json_object_get(m, "error");
			if (!res == !err) {
				fprintf(stderr, "result and error: %s", out);
				abort();
			}
			if (json_is_null(id)) { /* an unparsable request */
				json_decref(m);
				continue;
			}
			key = json_dumps(id, JSON_ENCODE_ANY);
			if (!json_object_get(asked, key) &&
			    !json_object_get(maybe, key)) {
				fprintf(stderr, "an answer to %s, never asked\n",
					key);
				abort();
			}
			json_object_set_new(
			    answered, key,
			    json_integer(json_integer_value(
					     json_object_get(answered, key)) +
					 1));
			if (res && json_object_get(res, "content") &&
			    (!json_is_string(json_object_get(
				 json_array_get(json_object_get(res, "content"), 0),
				 "text")) ||
			     !json_is_boolean(json_object_get(res, "isError")))) {
				fprintf(stderr, "a tool result without text or "
						"isError: %s",
					out);
				abort();
			}
			free(key);
			json_decref(m);
		}
		fclose(f);
	}
	{
		const char *key;
		json_t *v;

		json_object_foreach(asked, key, v)
		{
			json_int_t want = json_integer_value(v);
			json_int_t got =
			    json_integer_value(json_object_get(answered, key));
			/* Invalid messages with the same id may be answered
			 * too (an error each). */
			json_int_t extra =
			    json_integer_value(json_object_get(maybe, key));
			json_t *id = json_loads(key, JSON_DECODE_ANY, NULL);

			/* A repeated id, or a cancelled one: at most as many
			 * answers as requests. */
			if (got > want + extra ||
			    (want == 1 && got == 0 && !cancelled(cancels, id))) {
				fprintf(stderr, "request %s: %lld answers for "
						"%lld requests\n",
					key, (long long)got, (long long)want);
				abort();
			}
			json_decref(id);
		}
	}

	/* 3. */
	check_session();
out:
	free(out);
	json_decref(asked);
	json_decref(answered);
	json_decref(maybe);
	json_decref(cancels);
	return 0;
}
