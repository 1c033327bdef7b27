/*
 * ward — the helpers every subcommand shares: dying with a documented exit
 * status (as text or as a JSON error object), the policy options, the
 * sandbox-unavailable report, JSON output, the warnings before a call,
 * shell quoting and display escaping.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"
#include "ward/notice.h"
#include "ward/probe.h"
#include "ward/render.h"

#include "cli.h"
#include "util/util.h"

bool cli_json_mode;
/* A JSON object is on stdout already: a later failure adds none. */
static bool json_printed;

const char *cli_name = "ward";

/* --- dying ----------------------------------------------------------- */

static void vreport(const char *fmt, va_list ap, int errnum)
{
	fflush(stdout);
	fprintf(stderr, "%s: ", cli_name);
	vfprintf(stderr, fmt, ap);
	if (errnum)
		fprintf(stderr, ": %s", strerror(errnum));
	fputc('\n', stderr);
}

/* The code of a JSON error object for a death with @status. */
static const char *status_code(int status)
{
	switch (status) {
	case CLI_EXIT_USAGE:
		return CLI_ERR("USAGE");
	case CLI_EXIT_NOT_FOUND:
		return CLI_ERR("COMMAND_NOT_FOUND");
	case CLI_EXIT_CANNOT_EXEC:
		return CLI_ERR("COMMAND_NOT_EXECUTABLE");
	default:
		return CLI_ERR("WARD_FAILED");
	}
}

/* With --json, the JSON form of a death (see cli_json_mode). */
static void json_report(int status, const char *fmt, va_list ap, int errnum)
{
	char msg[2048];
	int n;

	if (!cli_json_mode || json_printed)
		return;
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (n >= 0 && errnum && (size_t)n < sizeof(msg))
		snprintf(msg + n, sizeof(msg) - (size_t)n, ": %s",
			 strerror(errnum));
	cli_json_error(status_code(status), msg);
}

noreturn void die(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	json_report(status, fmt, ap, 0);
	va_end(ap);
	va_start(ap, fmt);
	vreport(fmt, ap, 0);
	va_end(ap);
	exit(status);
}

noreturn void die_errno(int status, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	json_report(status, fmt, ap, saved);
	va_end(ap);
	va_start(ap, fmt);
	vreport(fmt, ap, saved);
	va_end(ap);
	exit(status);
}

noreturn void cli_fatal(const char *message)
{
	die(CLI_EXIT_WARD, "%s", message);
}

noreturn void die_usage(const char *usage, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	json_report(CLI_EXIT_USAGE, fmt, ap, 0);
	va_end(ap);
	va_start(ap, fmt);
	vreport(fmt, ap, 0);
	va_end(ap);
	fprintf(stderr, "Usage: %s\nTry '%s --help' for more information.\n",
		usage, cli_name);
	exit(CLI_EXIT_USAGE);
}

noreturn void die_getopt(const char *usage, int ret, int argc, char **argv)
{
	/* Some libcs (musl) move optind past argc after a missing value. */
	int at = optind > argc ? argc : optind;
	const char *arg = at > 0 && argv[at - 1] ? argv[at - 1] : "";
	char shortopt[3] = {'-', (char)optopt, '\0'};
	const char *culprit = arg;
	const char *eq;

	/* A long option is named by its element; a short one by optopt,
	 * because its element may hold a whole cluster ("-nx"). */
	if (strncmp(arg, "--", 2) != 0 && optopt > 0 && optopt < 256)
		culprit = shortopt;
	if (ret == ':')
		die_usage(usage, "option '%s' requires a value", culprit);
	eq = strchr(culprit, '=');
	if (culprit == arg && eq && optopt != 0)
		die_usage(usage, "option '%.*s' takes no value",
			  (int)(eq - culprit), culprit);
	die_usage(usage, "unknown option '%s'", culprit);
}

/* --- policy options -------------------------------------------------- */

/* The platform's runners as "auto, bwrap, landlock" into @buf. */
static const char *runner_choices(char *buf, size_t len)
{
	const enum ward_runner *chain = NULL;
	size_t n = ward_platform_chain(&chain, ward_platform_current());
	size_t used;

	snprintf(buf, len, "auto");
	for (size_t i = 0; i < n; i++) {
		used = strlen(buf);
		snprintf(buf + used, len - used, ", %s",
			 ward_runner_name(chain[i]));
	}
	return buf;
}

enum ward_runner cli_parse_runner(const char *arg, const char *usage)
{
	const enum ward_runner *chain = NULL;
	size_t n = ward_platform_chain(&chain, ward_platform_current());
	enum ward_runner runner;
	char choices[128];

	if (strcmp(arg, "auto") == 0)
		return WARD_RUNNER_NONE;
	if (ward_runner_parse(&runner, arg) == 0) {
		for (size_t i = 0; i < n; i++)
			if (chain[i] == runner)
				return runner;
		die_usage(usage,
			  "runner '%s' is not available on %s (valid: %s)", arg,
			  ward_platform_name(ward_platform_current()),
			  runner_choices(choices, sizeof(choices)));
	}
	die_usage(usage, "invalid runner '%s' (valid: %s)", arg,
		  runner_choices(choices, sizeof(choices)));
}

bool cli_policy_option(struct cli_policy_opts *o, int opt, const char *arg,
		       const char *usage)
{
	switch (opt) {
	case 'm':
		if (ward_mode_parse(&o->mode, arg) != 0)
			die_usage(usage,
				  "invalid mode '%s' (valid: read-only, "
				  "workspace-write, danger-full-access)",
				  arg);
		return true;
	case 'w':
		if (!*arg)
			die_usage(usage, "workspace '' is not a directory");
		o->workspace = arg;
		return true;
	case 'r':
		o->runner = cli_parse_runner(arg, usage);
		return true;
	case 'c':
		o->shell_string = arg;
		return true;
	}
	return false;
}

char **cli_command_argv(const struct cli_policy_opts *o, int argc, char **argv,
			const char *usage)
{
	size_t extra = o->shell_string ? 3 : 0;
	char **cmd;

	if (!o->shell_string && argc <= 0)
		die_usage(usage, "no command given");
	if (!o->shell_string && !*argv[0])
		die_usage(usage, "empty command name");
	cmd = calloc((size_t)argc + extra + 1, sizeof(*cmd));
	if (!cmd)
		die(CLI_EXIT_WARD, "out of memory");
	if (o->shell_string) {
		/* Like `bash -c STRING NAME ARG…`: the rest become $0, $1… */
		cmd[0] = "bash";
		cmd[1] = "-c";
		cmd[2] = (char *)o->shell_string;
	}
	for (int i = 0; i < argc; i++)
		cmd[extra + (size_t)i] = argv[i];
	return cmd;
}

/* --- sandbox unavailable --------------------------------------------- */

const char *cli_runner_hint(char *buf, size_t len, enum ward_runner r,
			    ward_provider *provider)
{
	struct ward_runner_status st;
	char *text = NULL;

	/* The provider says what is wrong as a code; render says what to
	 * do about it. Nothing here reads an error message. */
	if (ward_provider_problem(&st, provider, r) != 0)
		st.problem = WARD_PROBLEM_NONE;
	if (ward_render_runner_hint(&text, &st) != 0)
		die(CLI_EXIT_WARD, "out of memory");
	snprintf(buf, len, "%s", text);
	ward_free(text);
	return buf;
}

noreturn void cli_sandbox_unavailable(int err, const char *detail,
				      ward_provider *provider,
				      enum ward_runner forced, bool json)
{
	const struct ward_probe_entry *entries = NULL;
	enum ward_enforcement enf;
	enum ward_runner chosen = forced;
	char hints[4][768];
	size_t nhints = 0;
	size_t n = 0;
	char msg[1280], text[1024];
	char *cut;

	if (!detail || !*detail)
		detail = ward_strerror(err);
	/* The library's detail may already say both things we say below. */
	if (strncmp(detail, "sandbox unavailable: ", 21) == 0)
		detail += 21;
	snprintf(text, sizeof(text), "%s", detail);
	cut = strstr(text, "; ward is refusing");
	if (cut)
		*cut = '\0';
	detail = text;
	if (forced != WARD_RUNNER_NONE) {
		cli_runner_hint(hints[nhints++], sizeof(hints[0]), forced,
				provider);
	} else if (err == WARD_ERUNNER &&
		   ward_provider_select(provider, &chosen, &enf) == 0) {
		/* The runner was chosen (cached) and broke at run time. */
		cli_runner_hint(hints[nhints++], sizeof(hints[0]), chosen,
				provider);
	} else if (ward_provider_report(&entries, &n, provider) == 0) {
		for (size_t i = 0; i < n && nhints < 4; i++)
			if (entries[i].verdict == WARD_VERDICT_UNUSABLE)
				cli_runner_hint(hints[nhints++],
						sizeof(hints[0]),
						entries[i].runner, provider);
	}
	if (nhints == 0)
		cli_runner_hint(hints[nhints++], sizeof(hints[0]),
				WARD_RUNNER_NONE, provider);

	if (json) {
		json_t *obj = json_object();
		json_t *h = json_array();

		snprintf(msg, sizeof(msg),
			 "sandbox unavailable: %s; ward refused to run the "
			 "command unconfined",
			 detail);
		for (size_t i = 0; h && i < nhints; i++)
			json_array_append_new(h, json_string(hints[i]));
		if (!obj || !h ||
		    json_object_set_new(
			obj, "error",
			json_string(CLI_ERR("SANDBOX_UNAVAILABLE"))) ||
		    json_object_set_new(obj, "message",
					ward_json_str(msg)) ||
		    json_object_set_new(obj, "hints", h))
			die(CLI_EXIT_WARD, "out of memory");
		cli_json_print(obj);
		exit(CLI_EXIT_WARD);
	}
	fflush(stdout);
	fprintf(stderr, "ward: sandbox unavailable: %s\n", detail);
	fprintf(stderr, "ward: refusing to run the command unconfined\n");
	for (size_t i = 0; i < nhints; i++)
		fprintf(stderr, "Hint: %s\n", hints[i]);
	exit(CLI_EXIT_WARD);
}

/* --- JSON ------------------------------------------------------------ */

/*
 * The JSON output goes through one buffer of its own, written to stdout
 * when full and at the end: json_dumpf() handed stdio one call per escaped
 * chunk (288 write(2) and 76 ms for a megabyte of output), and a buffer
 * holding the whole text would be another megabyte of fresh pages — on
 * this kind of machine each page costs more than writing it. The bytes
 * are those json_dumpf() wrote; ward_json_dump_bytes() hands over a
 * string's unescaped runs whole, and a command's output from its own
 * buffer, not from a copy in a JSON string.
 */
#define JSON_OUT_BUF (64 * 1024)

struct json_out {
	char buf[JSON_OUT_BUF];
	size_t len;
	bool failed;
};

static void json_out_flush(struct json_out *o)
{
	if (o->len && !o->failed &&
	    util_write_all(STDOUT_FILENO, o->buf, o->len) != 0)
		o->failed = true;
	o->len = 0;
}

static int json_out_add(const char *chunk, size_t n, void *data)
{
	struct json_out *o = data;

	while (n && !o->failed) {
		size_t k = sizeof(o->buf) - o->len;

		if (k > n)
			k = n;
		memcpy(o->buf + o->len, chunk, k);
		o->len += k;
		chunk += k;
		n -= k;
		if (o->len == sizeof(o->buf))
			json_out_flush(o);
	}
	return o->failed ? -1 : 0;
}

void cli_json_print_bytes(json_t *value, const struct ward_json_bytes *bytes,
			  size_t nbytes)
{
	static struct json_out o;

	if (!value)
		die(CLI_EXIT_WARD, "out of memory");
	/* Whatever happens next, no second object follows this one. */
	json_printed = true;
	if (fflush(stdout) != 0)
		die_errno(CLI_EXIT_WARD, "cannot write the JSON output");
	o.len = 0;
	o.failed = false;
	if (ward_json_dump_bytes(value, bytes, nbytes, json_out_add, &o) != 0 ||
	    json_out_add("\n", 1, &o) != 0)
		die_errno(CLI_EXIT_WARD, "cannot write the JSON output");
	json_out_flush(&o);
	if (o.failed)
		die_errno(CLI_EXIT_WARD, "cannot write the JSON output");
	json_decref(value);
}

void cli_json_print(json_t *value)
{
	cli_json_print_bytes(value, NULL, 0);
}

void cli_json_error(const char *code, const char *message)
{
	json_t *obj = json_object();

	if (!obj || json_object_set_new(obj, "error", json_string(code)) ||
	    json_object_set_new(obj, "message",
				ward_json_str(message)))
		die(CLI_EXIT_WARD, "out of memory");
	cli_json_print(obj);
}

/* --- warnings before a call ------------------------------------------ */

void cli_print_warnings(char *const *warnings, const char *scope,
			const char *workspace, bool quiet)
{
	bool seen = false;

	/* Recorded in either case, so that --quiet after a run without it
	 * leaves out what that run showed. A store that cannot be read
	 * leaves seen false: shown again rather than hidden. */
	(void)ward_notice_seen(&seen, scope, workspace, warnings);
	if (quiet && seen)
		return;
	fflush(stdout);
	for (size_t i = 0; warnings[i]; i++)
		fprintf(stderr, "ward: warning: %s\n", warnings[i]);
}

/* --- shell quoting --------------------------------------------------- */

void cli_shell_quote(FILE *out, const char *s)
{
	static const char safe[] = "abcdefghijklmnopqrstuvwxyz"
				   "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				   "0123456789_@%+=:,./-";

	if (*s && strspn(s, safe) == strlen(s)) {
		fputs(s, out);
		return;
	}
	fputc('\'', out);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", out);
		else
			fputc(*s, out);
	}
	fputc('\'', out);
}

size_t cli_subcommand(const struct cli_command *subs, const char *cmd,
		      const char *usage, const char *arg)
{
	static char name[64];
	char valid[256];
	size_t used;

	for (size_t i = 0; subs[i].name; i++)
		if (strcmp(arg, subs[i].name) == 0) {
			snprintf(name, sizeof(name), "ward %s %s", cmd,
				 subs[i].name);
			cli_name = name;
			return i;
		}
	valid[0] = '\0';
	for (size_t i = 0; subs[i].name; i++) {
		used = strlen(valid);
		snprintf(valid + used, sizeof(valid) - used, "%s%s",
			 i ? ", " : "", subs[i].name);
	}
	die_usage(usage, "unknown subcommand '%s' (valid: %s)", arg, valid);
}

const struct cli_unit cli_units_bytes[] = {
    {'k', 1ULL << 10}, {'K', 1ULL << 10}, {'m', 1ULL << 20},
    {'M', 1ULL << 20}, {'g', 1ULL << 30}, {'G', 1ULL << 30},
    {0, 0},
};

bool cli_parse_scaled(unsigned long long *out, const char *arg,
		      const struct cli_unit *units)
{
	unsigned long long n, mult = 1;
	char *end = NULL;

	errno = 0;
	if (*arg < '0' || *arg > '9')
		return false;
	n = strtoull(arg, &end, 10);
	if (errno == ERANGE)
		return false;
	if (*end) {
		const struct cli_unit *u = units;

		while (u && u->suffix && u->suffix != *end)
			u++;
		if (!u || !u->suffix || end[1])
			return false;
		mult = u->mult;
	}
	if (n > ULLONG_MAX / mult)
		return false;
	*out = n * mult;
	return true;
}

/*
 * 0 when @path can be exec'd; else CLI_EXIT_CANNOT_EXEC or
 * CLI_EXIT_NOT_FOUND with errno describing why.
 */
static int check_file(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return errno == ENOENT || errno == ENOTDIR
			   ? CLI_EXIT_NOT_FOUND
			   : CLI_EXIT_CANNOT_EXEC;
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		return CLI_EXIT_CANNOT_EXEC;
	}
	if (access(path, X_OK) != 0)
		return CLI_EXIT_CANNOT_EXEC;
	return 0;
}

int cli_find_command(const char *name, const char *ws, char *why,
		     size_t why_len)
{
	const char *path = getenv("PATH");
	struct util_path_search ps;
	char cand[PATH_MAX], buf[2 * PATH_MAX + 2];
	int first_err = 0, err_errno = 0, rc;
	size_t dlen;

	if (strchr(name, '/')) {
		if (name[0] == '/')
			snprintf(buf, sizeof(buf), "%s", name);
		else
			snprintf(buf, sizeof(buf), "%s/%s", ws, name);
		rc = check_file(buf);
		if (rc)
			snprintf(why, why_len, "%s: %s", name, strerror(errno));
		return rc;
	}
	util_path_init(&ps, path, name);
	while (util_path_next(&ps, cand, sizeof(cand), &dlen)) {
		/* The executor's candidates, seen from the workspace it
		 * starts the command in. */
		if (cand[0] == '/')
			snprintf(buf, sizeof(buf), "%s", cand);
		else
			snprintf(buf, sizeof(buf), "%s/%s", ws, cand);
		rc = check_file(buf);
		if (rc == 0)
			return 0;
		if (rc == CLI_EXIT_CANNOT_EXEC && !first_err) {
			first_err = rc;
			err_errno = errno;
		}
	}
	if (first_err) {
		snprintf(why, why_len, "%s: %s", name, strerror(err_errno));
		return first_err;
	}
	snprintf(why, why_len, "%s: command not found", name);
	return CLI_EXIT_NOT_FOUND;
}
