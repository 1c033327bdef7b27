/*
 * ward fs — file operations through the in-process file fence.
 *
 *   ward fs read|write|edit|rm|mv|mkdir|ls|stat [OPTIONS] PATH…
 *
 * Every subcommand takes the policy options of `ward run` (--mode,
 * --workspace) and --json. Relative paths are relative to the workspace
 * (default: the current directory), as for the library. A denial prints
 * the detail and the model-facing marker on stderr and exits 3.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ward/fsfence.h"
#include "ward/render.h"

#include "cli.h"
#include "cmd_fs.h"
#include "session_opts.h"
#include "policy_opts.h"
#include "ward/call.h"

enum fs_long_opt {
	FS_OPT_TEXT = 300,
	FS_OPT_OLD,
	FS_OPT_NEW,
	FS_OPT_OFFSET,
	FS_OPT_LIMIT,
	FS_OPT_MAX_BYTES,
	FS_OPT_MAX_DEPTH,
	FS_OPT_MAX_ENTRIES,
	FS_OPT_BYTES,
	FS_OPT_ALL,
	FS_OPT_EXCLUSIVE,
	FS_OPT_OVERWRITE,
};

/* A denial gets the escalation hint (set for session calls that offer it). */
static bool escalation_offered;
/* The call the operation runs in: a denial is reported through it. */
static ward_call *fs_call;

static const char fs_usage[] =
    "ward fs read|write|edit|rm|mv|mkdir|ls|stat [OPTIONS] PATH...";

/* Everything the subcommands' options can set. */
struct fs_opts {
	enum ward_mode mode;
	const char *workspace;
	bool json;
	const char *text;     /* write: --text */
	const char *old_text; /* edit: --old */
	const char *new_text; /* edit: --new */
	bool bytes, all, exclusive, overwrite, parents, recursive, follow;
	uint64_t offset, limit, max_bytes;
	unsigned max_depth;
	size_t max_entries;
};

static void print_help(void)
{
	printf("Usage: %s\n"
	       "\n"
	       "File operations through ward's in-process file fence: the "
	       "same mode,\n"
	       "writable roots and access rules as `ward run`, checked by the "
	       "kernel\n"
	       "(openat2 beneath the writable root). Relative paths are "
	       "relative to the\n"
	       "workspace.\n"
	       "\n"
	       "Subcommands:\n"
	       "  read PATH          print a file (text: --offset/--limit "
	       "count lines;\n"
	       "                     --bytes: they count bytes)\n"
	       "  write PATH         replace or create a file, atomically "
	       "and durably,\n"
	       "                     with --text TEXT or standard input\n"
	       "  edit PATH          replace --old TEXT with --new TEXT "
	       "(exactly once,\n"
	       "                     or every occurrence with --all)\n"
	       "  rm PATH            remove a file or symlink (-r: a "
	       "directory tree)\n"
	       "  mv FROM TO         rename to the exact destination "
	       "(--overwrite)\n"
	       "  mkdir PATH         make a directory (-p: with parents)\n"
	       "  ls [PATH]          list a directory (-R: recursively)\n"
	       "  stat PATH          describe an entry (-L: follow a "
	       "symlink)\n"
	       "\n"
	       "Options:\n"
	       "  -m, --mode MODE        read-only, workspace-write or "
	       "danger-full-access;\n"
	       "                         default: ward.yml's mode, else "
	       "read-only\n"
	       "  -w, --workspace DIR    workspace root (default: "
	       ".)\n" CLI_CONFIG_HELP
	       "      --json             print one JSON object on stdout, "
	       "also on failure\n"
	       "      --text TEXT        write: the content (default: "
	       "standard input)\n"
	       "  -p, --parents          write, mkdir: create missing "
	       "parents\n"
	       "      --exclusive        write: fail if the file exists\n"
	       "      --old TEXT, --new TEXT, --all\n"
	       "                         edit: what to replace, by what, "
	       "everywhere\n"
	       "      --bytes            read: bytes instead of text\n"
	       "      --offset N, --limit N\n"
	       "                         read: lines (text) or bytes to skip "
	       "and return\n"
	       "      --max-bytes N      read, edit: refuse more than N bytes "
	       "(default 10M)\n"
	       "  -r, -R, --recursive    rm, ls: whole trees\n"
	       "      --max-depth N, --max-entries N\n"
	       "                         ls -R: bounds (default 16 levels, "
	       "10000 entries)\n"
	       "      --overwrite        mv: replace an existing "
	       "destination\n"
	       "  -L, --follow           stat: describe a symlink's target\n"
	       "  -q, --quiet            say warnings only when they changed "
	       "since ward last\n"
	       "                         said them (project values ignored)\n"
	       "      --session ID       take the mode and workspace from "
	       "session ID (or a\n"
	       "                         unique prefix of it) and record "
	       "the operation in\n"
	       "                         its log\n"
	       "      --escalate MODE --justification TEXT\n"
	       "                         ask the person at the terminal to "
	       "let this one\n"
	       "                         operation run under the wider MODE\n"
	       "  -h, --help             show this help and exit\n"
	       "\n"
	       "Exit status:\n"
	       "  0    success\n"
	       "  1    the operation failed (not found, not unique, not "
	       "text, ...)\n"
	       "  2    usage error\n"
	       "  3    denied by the fence (the marker follows on stderr)\n"
	       "  122  --escalate was not granted: nothing was done\n"
	       "  125  ward itself failed\n"
	       "\n"
	       "Examples:\n"
	       "  ward fs read src/main.c --offset 100 --limit 50\n"
	       "  echo hi | ward fs write -m workspace-write notes.txt\n"
	       "  ward fs edit -m workspace-write --old foo --new bar "
	       "src/a.c\n"
	       "  ward fs ls -R --json -w ~/src/app\n",
	       fs_usage);
}

/* A non-negative decimal, with an optional K, M or G suffix (binary). */
static uint64_t parse_count(const char *opt, const char *arg, bool suffix)
{
	unsigned long long n;

	if (!cli_parse_scaled(&n, arg, suffix ? cli_units_bytes : NULL) ||
	    n > UINT64_MAX)
		die_usage(fs_usage, "invalid %s '%s' (expected a number%s)",
			  opt, arg, suffix ? ", e.g. 4096 or 1M" : "");
	return (uint64_t)n;
}

/* Read all of standard input; dies with 125 when it cannot. */
static char *read_stdin(size_t *len)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap), *p;
	size_t got;

	if (!buf)
		die(CLI_EXIT_WARD, "out of memory");
	while ((got = fread(buf + n, 1, cap - n, stdin)) > 0) {
		n += got;
		if (n == cap) {
			cap *= 2;
			p = realloc(buf, cap);
			if (!p)
				die(CLI_EXIT_WARD, "out of memory");
			buf = p;
		}
	}
	if (ferror(stdin))
		die_errno(CLI_EXIT_WARD, "cannot read standard input");
	*len = n;
	return buf;
}

/* A stable name for a libward error code, for --json. */
static const char *error_code(int err)
{
	switch (err) {
	case WARD_EDENIED:
		return CLI_ERR("FS_SANDBOX_DENIED");
	case WARD_ENOTTEXT:
		return CLI_ERR("NOT_TEXT");
	case WARD_ENOTUNIQUE:
		return CLI_ERR("NOT_UNIQUE");
	case WARD_ENOMATCH:
		return CLI_ERR("NO_MATCH");
	case WARD_EINVAL:
		return CLI_ERR("INVALID");
	case -ENOENT:
		return CLI_ERR("NOT_FOUND");
	case -ENOTDIR:
		return CLI_ERR("NOT_A_DIRECTORY");
	case -EISDIR:
		return CLI_ERR("IS_A_DIRECTORY");
	case -EEXIST:
		return CLI_ERR("EXISTS");
	case -EFBIG:
		return CLI_ERR("TOO_LARGE");
	case -EXDEV:
		return CLI_ERR("CROSS_DEVICE");
	case -EAGAIN:
		return CLI_ERR("CHANGED");
	case -EACCES:
	case -EPERM:
		return CLI_ERR("PERMISSION_DENIED");
	default:
		return CLI_ERR("ERROR");
	}
}

static void set_or_die(json_t *obj, const char *key, json_t *value)
{
	if (!value || json_object_set_new(obj, key, value) != 0)
		die(CLI_EXIT_WARD, "out of memory");
}

static json_t *new_object(const char *op)
{
	json_t *obj = json_object();

	if (!obj)
		die(CLI_EXIT_WARD, "out of memory");
	set_or_die(obj, "ok", json_true());
	set_or_die(obj, "operation", json_string(op));
	return obj;
}

/*
 * Report the failure @err of the operation and return the exit status:
 * 3 for a denial (detail, then the marker on stderr), 1 for the rest.
 * With --json, one object on stdout instead. @text, when not NULL,
 * replaces libward's message (ward_error_last()).
 */
static int report_failure_text(int err, const struct ward_fs_denial *d,
			       const char *op, bool json, const char *text)
{
	char *detail = strdup(text ? text : ward_error_last());
	char *marker = NULL;
	json_t *obj, *den;
	int status =
	    err == WARD_EDENIED ? CMD_FS_EXIT_DENIED : CMD_FS_EXIT_FAILED;

	if (!detail)
		die(CLI_EXIT_WARD, "out of memory");
	if (err == -ENOMEM)
		die(CLI_EXIT_WARD, "%s", detail);
	/* The call records the denial (gathering its report: the path and
	 * the rule or mode) and says it for the CLI: its hint names
	 * --escalate, never sandbox_permissions. */
	if (err == WARD_EDENIED && fs_call) {
		if (ward_call_fs_end(fs_call, err, d) != 0)
			fprintf(stderr, "%s: warning: %s\n", cli_name,
				ward_error_last());
		if (ward_call_render_denial(&marker, fs_call) != 0)
			die(CLI_EXIT_WARD, "%s", ward_error_last());
	} else if (err == WARD_EDENIED &&
		   ward_fs_render_denial(&marker, d, escalation_offered) != 0) {
		die(CLI_EXIT_WARD, "%s", ward_error_last());
	}
	if (!json) {
		fflush(stdout);
		fprintf(stderr, "%s: %s\n", cli_name, detail);
		if (marker)
			fprintf(stderr, "%s\n", marker);
		goto out;
	}
	obj = new_object(op);
	set_or_die(obj, "ok", json_false());
	set_or_die(obj, "error", json_string(error_code(err)));
	set_or_die(obj, "message", ward_json_str(detail));
	if (err == WARD_EDENIED) {
		den = json_object();
		if (!den)
			die(CLI_EXIT_WARD, "out of memory");
		set_or_die(den, "mode", json_string(ward_mode_name(d->mode)));
		set_or_die(den, "operation",
			   json_string(ward_fs_op_name(d->op)));
		set_or_die(den, "reason",
			   json_string(ward_fs_reason_name(d->reason)));
		set_or_die(den, "path",
			   ward_json_str(d->path));
		set_or_die(den, "resolved",
			   ward_json_str(d->resolved));
		set_or_die(obj, "denial", den);
		set_or_die(obj, "marker", json_string(marker));
		if (fs_call)
			set_or_die(obj, "denials", ward_json_call_denials(fs_call));
	}
	cli_json_print(obj);
out:
	free(marker);
	free(detail);
	return status;
}

static int report_failure(int err, const struct ward_fs_denial *d,
			  const char *op, bool json)
{
	return report_failure_text(err, d, op, json, NULL);
}

static const char b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static json_t *json_base64(const char *data, size_t len)
{
	const unsigned char *p = (const unsigned char *)data;
	char *out = malloc((len + 2) / 3 * 4 + 1), *o = out;
	json_t *s;
	uint32_t v;

	if (!out)
		die(CLI_EXIT_WARD, "out of memory");
	for (size_t i = 0; i < len; i += 3) {
		v = (uint32_t)p[i] << 16;
		if (i + 1 < len)
			v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < len)
			v |= p[i + 2];
		*o++ = b64[v >> 18 & 63];
		*o++ = b64[v >> 12 & 63];
		*o++ = i + 1 < len ? b64[v >> 6 & 63] : '=';
		*o++ = i + 2 < len ? b64[v & 63] : '=';
	}
	*o = '\0';
	s = json_string(out);
	free(out);
	return s;
}

/* Each subcommand: returns the exit status. */

static int do_read(const ward_policy *policy, const struct fs_opts *o,
		   char **args)
{
	struct ward_fs_read_options ro = WARD_FS_READ_OPTIONS_INIT;
	struct ward_fs_content c = {0};
	struct ward_fs_denial d;
	json_t *obj;
	int err;

	ro.binary = o->bytes;
	ro.offset = o->offset;
	ro.limit = o->limit;
	ro.max_bytes = o->max_bytes;
	err = ward_fs_read(&c, &d, policy, args[0], &ro);
	if (err == WARD_ENOTTEXT) {
		/* The text names this surface's way: --bytes. */
		char *text = NULL;
		int status;

		if (ward_render_not_text(&text, WARD_SURFACE_CLI, args[0]) != 0)
			die(CLI_EXIT_WARD, "%s", ward_error_last());
		status = report_failure_text(err, &d, "read", o->json, text);
		ward_free(text);
		return status;
	}
	if (err)
		return report_failure(err, &d, "read", o->json);
	if (o->json) {
		obj = new_object("read");
		set_or_die(obj, "path", json_string(args[0]));
		set_or_die(obj, o->bytes ? "content_base64" : "content",
			   o->bytes ? json_base64(c.data, c.len)
				    : json_stringn(c.data, c.len));
		set_or_die(obj, "bytes", json_integer((json_int_t)c.len));
		set_or_die(obj, "file_size",
			   json_integer((json_int_t)c.file_size));
		set_or_die(obj, "truncated", json_boolean(c.truncated));
		cli_json_print(obj);
	} else if (c.len && fwrite(c.data, 1, c.len, stdout) != c.len) {
		die_errno(CLI_EXIT_WARD, "cannot write standard output");
	}
	ward_fs_content_clear(&c);
	return CLI_EXIT_OK;
}

static int do_write(const ward_policy *policy, const struct fs_opts *o,
		    char **args)
{
	struct ward_fs_write_options wo = WARD_FS_WRITE_OPTIONS_INIT;
	struct ward_fs_denial d;
	char *data = NULL;
	size_t len;
	json_t *obj;
	int err;

	if (o->text)
		len = strlen(o->text);
	else
		data = read_stdin(&len);
	wo.create_parents = o->parents;
	wo.exclusive = o->exclusive;
	err =
	    ward_fs_write(&d, policy, args[0], data ? data : o->text, len, &wo);
	free(data);
	if (err)
		return report_failure(err, &d, "write", o->json);
	if (o->json) {
		obj = new_object("write");
		set_or_die(obj, "path", json_string(args[0]));
		set_or_die(obj, "bytes", json_integer((json_int_t)len));
		cli_json_print(obj);
	}
	return CLI_EXIT_OK;
}

static int do_edit(const ward_policy *policy, const struct fs_opts *o,
		   char **args)
{
	struct ward_fs_edit_options eo = WARD_FS_EDIT_OPTIONS_INIT;
	struct ward_fs_denial d;
	size_t n = 0;
	json_t *obj;
	int err;

	if (!o->old_text || !o->new_text)
		die_usage(fs_usage, "edit needs --old TEXT and --new TEXT");
	eo.replace_all = o->all;
	eo.max_bytes = o->max_bytes;
	err = ward_fs_edit(&n, &d, policy, args[0], o->old_text, o->new_text,
			   &eo);
	if (err)
		return report_failure(err, &d, "edit", o->json);
	if (o->json) {
		obj = new_object("edit");
		set_or_die(obj, "path", json_string(args[0]));
		set_or_die(obj, "replacements", json_integer((json_int_t)n));
		cli_json_print(obj);
	}
	return CLI_EXIT_OK;
}

/* rm, mv, mkdir: nothing to print but success. */
static int print_done(const char *op, const char *path, bool json)
{
	json_t *obj;

	if (json) {
		obj = new_object(op);
		set_or_die(obj, "path", json_string(path));
		cli_json_print(obj);
	}
	return CLI_EXIT_OK;
}

static int do_rm(const ward_policy *policy, const struct fs_opts *o,
		 char **args)
{
	struct ward_fs_remove_options ro = WARD_FS_REMOVE_OPTIONS_INIT;
	struct ward_fs_denial d;
	int err;

	ro.recursive = o->recursive;
	err = ward_fs_remove(&d, policy, args[0], &ro);
	if (err)
		return report_failure(err, &d, "remove", o->json);
	return print_done("remove", args[0], o->json);
}

static int do_mv(const ward_policy *policy, const struct fs_opts *o,
		 char **args)
{
	struct ward_fs_move_options mo = WARD_FS_MOVE_OPTIONS_INIT;
	struct ward_fs_denial d;
	json_t *obj;
	int err;

	mo.overwrite = o->overwrite;
	err = ward_fs_move(&d, policy, args[0], args[1], &mo);
	if (err)
		return report_failure(err, &d, "move", o->json);
	if (o->json) {
		obj = new_object("move");
		set_or_die(obj, "from", json_string(args[0]));
		set_or_die(obj, "to", json_string(args[1]));
		cli_json_print(obj);
	}
	return CLI_EXIT_OK;
}

static int do_mkdir(const ward_policy *policy, const struct fs_opts *o,
		    char **args)
{
	struct ward_fs_mkdir_options mo = WARD_FS_MKDIR_OPTIONS_INIT;
	struct ward_fs_denial d;
	int err;

	mo.parents = o->parents;
	err = ward_fs_mkdir(&d, policy, args[0], &mo);
	if (err)
		return report_failure(err, &d, "mkdir", o->json);
	return print_done("mkdir", args[0], o->json);
}

static int do_ls(const ward_policy *policy, const struct fs_opts *o,
		 char **args)
{
	struct ward_fs_list_options lo = WARD_FS_LIST_OPTIONS_INIT;
	struct ward_fs_listing l = {0};
	struct ward_fs_denial d;
	const struct ward_fs_entry *e;
	const char *path = args[0] ? args[0] : ".";
	json_t *obj, *arr, *je;
	int err;

	lo.recursive = o->recursive;
	lo.max_depth = o->max_depth;
	lo.max_entries = o->max_entries;
	err = ward_fs_list(&l, &d, policy, path, &lo);
	if (err)
		return report_failure(err, &d, "list", o->json);
	if (!o->json) {
		for (size_t i = 0; i < l.count; i++) {
			e = &l.entries[i];
			if (e->denied)
				printf("%-7s %12s  %s  (denied)\n",
				       ward_fs_type_name(e->type), "-",
				       e->path);
			else
				printf("%-7s %12" PRIu64 "  %s\n",
				       ward_fs_type_name(e->type), e->size,
				       e->path);
		}
		if (l.truncated)
			fprintf(stderr,
				"%s: listing truncated after %zu "
				"entries\n",
				cli_name, l.count);
		ward_fs_listing_clear(&l);
		return CLI_EXIT_OK;
	}
	obj = new_object("list");
	arr = json_array();
	if (!arr)
		die(CLI_EXIT_WARD, "out of memory");
	set_or_die(obj, "path", json_string(path));
	for (size_t i = 0; i < l.count; i++) {
		e = &l.entries[i];
		je = json_object();
		if (!je)
			die(CLI_EXIT_WARD, "out of memory");
		set_or_die(je, "path", ward_json_str(e->path));
		set_or_die(je, "type", json_string(ward_fs_type_name(e->type)));
		set_or_die(je, "denied", json_boolean(e->denied));
		if (!e->denied) {
			set_or_die(je, "size",
				   json_integer((json_int_t)e->size));
			set_or_die(je, "mode", json_integer(e->mode));
			set_or_die(je, "mtime", json_integer(e->mtime_sec));
		}
		if (json_array_append_new(arr, je) != 0)
			die(CLI_EXIT_WARD, "out of memory");
	}
	set_or_die(obj, "entries", arr);
	set_or_die(obj, "truncated", json_boolean(l.truncated));
	cli_json_print(obj);
	ward_fs_listing_clear(&l);
	return CLI_EXIT_OK;
}

static int do_stat(const ward_policy *policy, const struct fs_opts *o,
		   char **args)
{
	struct ward_fs_stat_options so = WARD_FS_STAT_OPTIONS_INIT;
	struct ward_fs_stat st = {0};
	struct ward_fs_denial d;
	json_t *obj;
	int err;

	so.follow = o->follow;
	err = ward_fs_stat(&st, &d, policy, args[0], &so);
	if (err)
		return report_failure(err, &d, "stat", o->json);
	if (o->json) {
		obj = new_object("stat");
		set_or_die(obj, "path", json_string(args[0]));
		set_or_die(obj, "resolved",
			   ward_json_str(st.resolved));
		set_or_die(obj, "type",
			   json_string(ward_fs_type_name(st.type)));
		set_or_die(obj, "size", json_integer((json_int_t)st.size));
		set_or_die(obj, "mode", json_integer(st.mode));
		set_or_die(obj, "nlink", json_integer((json_int_t)st.nlink));
		set_or_die(obj, "mtime", json_integer(st.mtime_sec));
		set_or_die(
		    obj, "link_target",
		    st.link_target
			? ward_json_str(st.link_target)
			: json_null());
		cli_json_print(obj);
	} else {
		printf("path: %s\nresolved: %s\ntype: %s\nsize: %" PRIu64
		       "\nmode: %04o\nnlink: %" PRIu64 "\nmtime: %" PRId64
		       ".%09ld\n",
		       args[0], st.resolved, ward_fs_type_name(st.type),
		       st.size, (unsigned)st.mode, st.nlink, st.mtime_sec,
		       st.mtime_nsec);
		if (st.link_target)
			printf("target: %s\n", st.link_target);
	}
	ward_fs_stat_clear(&st);
	return CLI_EXIT_OK;
}

const struct cli_option cli_fs_options[] = {
    CLI_OPTION_MODE,
    CLI_OPTION_WORKSPACE,
    CLI_CONFIG_OPTIONS,
    CLI_SESSION_OPTIONS,
    CLI_OPTION_JSON,
    {"text", FS_OPT_TEXT, "TEXT", CLI_VALUE_TEXT, "write"},
    {"old", FS_OPT_OLD, "TEXT", CLI_VALUE_TEXT, "edit"},
    {"new", FS_OPT_NEW, "TEXT", CLI_VALUE_TEXT, "edit"},
    {"all", FS_OPT_ALL, NULL, CLI_VALUE_NONE, "edit"},
    {"bytes", FS_OPT_BYTES, NULL, CLI_VALUE_NONE, "read"},
    {"offset", FS_OPT_OFFSET, "N", CLI_VALUE_TEXT, "read"},
    {"limit", FS_OPT_LIMIT, "N", CLI_VALUE_TEXT, "read"},
    {"max-bytes", FS_OPT_MAX_BYTES, "N", CLI_VALUE_TEXT, "read edit"},
    {"max-depth", FS_OPT_MAX_DEPTH, "N", CLI_VALUE_TEXT, "ls"},
    {"max-entries", FS_OPT_MAX_ENTRIES, "N", CLI_VALUE_TEXT, "ls"},
    {"parents", 'p', NULL, CLI_VALUE_NONE, "write mkdir"},
    {"exclusive", FS_OPT_EXCLUSIVE, NULL, CLI_VALUE_NONE, "write"},
    {"recursive", 'r', NULL, CLI_VALUE_NONE, "rm ls"},
    {NULL, 'R', NULL, CLI_VALUE_NONE, "rm ls"},
    {"overwrite", FS_OPT_OVERWRITE, NULL, CLI_VALUE_NONE, "mv"},
    {"follow", 'L', NULL, CLI_VALUE_NONE, "stat"},
    CLI_OPTION_QUIET,
    CLI_OPTION_HELP,
    CLI_OPTION_END,
};

/* The subcommands, as the command table and the completion see them. */
const struct cli_command cli_fs_commands[] = {
    {"read", NULL, "print a file", NULL, NULL, {CLI_VALUE_FILE}},
    {"write", NULL, "replace or create a file", NULL, NULL, {CLI_VALUE_FILE}},
    {"edit", NULL, "replace text in a file", NULL, NULL, {CLI_VALUE_FILE}},
    {"rm",
     NULL,
     "remove a file, symlink or tree",
     NULL,
     NULL,
     {CLI_VALUE_FILE}},
    {"mv", NULL, "rename", NULL, NULL, {CLI_VALUE_FILE, CLI_VALUE_FILE}},
    {"mkdir", NULL, "make a directory", NULL, NULL, {CLI_VALUE_DIR}},
    {"ls", NULL, "list a directory", NULL, NULL, {CLI_VALUE_DIR}},
    {"stat", NULL, "describe an entry", NULL, NULL, {CLI_VALUE_FILE}},
    {NULL, NULL, NULL, NULL, NULL, {CLI_VALUE_NONE}},
};

/* What runs each subcommand, in the order of cli_fs_commands[]. */
struct fs_sub {
	int (*fn)(const ward_policy *policy, const struct fs_opts *o,
		  char **args);
	int min_args, max_args;
};

static const struct fs_sub subs[] = {
    {do_read, 1, 1}, {do_write, 1, 1}, {do_edit, 1, 1}, {do_rm, 1, 1},
    {do_mv, 2, 2},   {do_mkdir, 1, 1}, {do_ls, 0, 1},	{do_stat, 1, 1},
};

_Static_assert(sizeof(subs) / sizeof(subs[0]) ==
		   sizeof(cli_fs_commands) / sizeof(cli_fs_commands[0]) - 1,
	       "one handler per subcommand of cli_fs_commands");

int cmd_fs(int argc, char **argv)
{
	struct cli_policy_opts po = CLI_POLICY_OPTS_INIT;
	struct fs_opts o = {0};
	const struct fs_sub *sub = NULL;
	struct cli_setup setup;
	struct cli_session cs = {.subject = WARD_SUBJECT_OPERATION};
	struct ward_call_options co = WARD_CALL_OPTIONS_INIT;
	const ward_policy *policy = NULL;
	const char *sub_name = NULL;
	struct cli_getopt g;
	bool quiet = false;
	ward_call *call = NULL;
	int opt, nargs, status, err;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		if (argc < 2)
			die_usage(fs_usage, "no subcommand given");
		print_help();
		return CLI_EXIT_OK;
	}
	{
		size_t i = cli_subcommand(cli_fs_commands, "fs", fs_usage,
					  argv[1]);

		sub = &subs[i];
		sub_name = cli_fs_commands[i].name;
	}
	argc--;
	argv++;
	/* Options may follow the paths (GNU permutation); "--" ends them.
	 * An option of another subcommand is a usage error. */
	cli_getopt_init(&g, cli_fs_options, false, sub_name, fs_usage, argc,
			argv);
	while ((opt = cli_getopt_next(&g, argc, argv)) != -1) {
		if (cli_session_option(&cs, opt, optarg, fs_usage) ||
		    cli_config_option(&po, opt, optarg, fs_usage))
			continue;
		/* -r is --recursive here, not --runner. */
		if ((opt == 'm' || opt == 'w') &&
		    cli_policy_option(&po, opt, optarg, fs_usage))
			continue;
		switch (opt) {
		case CLI_OPT_JSON:
			o.json = true;
			break;
		case FS_OPT_TEXT:
			o.text = optarg;
			break;
		case FS_OPT_OLD:
			o.old_text = optarg;
			break;
		case FS_OPT_NEW:
			o.new_text = optarg;
			break;
		case FS_OPT_ALL:
			o.all = true;
			break;
		case FS_OPT_BYTES:
			o.bytes = true;
			break;
		case FS_OPT_OFFSET:
			o.offset = parse_count("--offset", optarg, false);
			break;
		case FS_OPT_LIMIT:
			o.limit = parse_count("--limit", optarg, false);
			break;
		case FS_OPT_MAX_BYTES:
			o.max_bytes = parse_count("--max-bytes", optarg, true);
			break;
		case FS_OPT_MAX_DEPTH:
			o.max_depth =
			    (unsigned)parse_count("--max-depth", optarg, false);
			break;
		case FS_OPT_MAX_ENTRIES:
			o.max_entries =
			    (size_t)parse_count("--max-entries", optarg, false);
			break;
		case 'p':
			o.parents = true;
			break;
		case FS_OPT_EXCLUSIVE:
			o.exclusive = true;
			break;
		case 'r':
		case 'R':
			o.recursive = true;
			break;
		case FS_OPT_OVERWRITE:
			o.overwrite = true;
			break;
		case 'L':
			o.follow = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			print_help();
			return CLI_EXIT_OK;
		default:
			die_getopt(fs_usage, opt, argc, argv);
		}
	}
	nargs = argc - optind;
	if (nargs < sub->min_args || nargs > sub->max_args)
		die_usage(fs_usage, "%s takes %s%d path%s, not %d", sub_name,
			  sub->min_args != sub->max_args ? "at most " : "",
			  sub->max_args, sub->max_args == 1 ? "" : "s", nargs);
	for (int i = optind; i < argc; i++)
		if (!*argv[i])
			die_usage(fs_usage, "empty path");
	cli_session_begin(&cs, &po, fs_usage, o.json);
	cli_setup_build(&setup, &po, fs_usage,
			(o.json ? CLI_SETUP_JSON : 0) |
			    (quiet ? CLI_SETUP_QUIET : 0));

	/* One call: --session / --escalate record and ask (exits 122 when
	 * not granted); a grant replaces the policy for this one operation. */
	co.config = setup.config;
	co.session = cs.session;
	co.subject = WARD_SUBJECT_OPERATION;
	co.surface = WARD_SURFACE_CLI;
	co.tool = "fs";
	co.operation = sub_name;
	co.paths = argv + optind;
	co.escalate = cs.escalate;
	co.escalate_to = cs.requested;
	co.justification = cs.justification;
	if (cs.session || cs.escalate)
		co.approve = cli_tty_approve;
	err = ward_call_new(&call, &co);
	if (err)
		die(CLI_EXIT_WARD, "%s", ward_error_last());
	err = ward_call_fs_begin(call, &policy);
	if (err == WARD_EREFUSED)
		cli_call_refused(call, o.json);
	if (err)
		die(CLI_EXIT_WARD, "%s", ward_error_last());
	escalation_offered =
	    ward_call_hint_offered(call, ward_policy_mode(policy));
	/* The fence enforces every rule exactly, so an operation has no
	 * runner warnings today; whatever the call has to say is said the
	 * way `ward run` says it. */
	cli_print_warnings(ward_call_warnings(call), "operation",
			   ward_policy_workspace(policy), quiet);
	o.mode = ward_policy_mode(policy);
	o.workspace = ward_policy_workspace(policy);
	fs_call = call;
	status = sub->fn(policy, &o, argv + optind);
	fs_call = NULL;
	err = ward_call_fs_end(call,
			       status == 0		      ? 0
			       : status == CMD_FS_EXIT_DENIED ? WARD_EDENIED
							      : -EIO,
			       NULL);
	if (err) {
		fflush(stdout);
		fprintf(stderr, "%s: warning: %s\n", cli_name,
			ward_error_last());
	}
	ward_call_free(call);
	cli_session_end(&cs);
	cli_setup_free(&setup, &po);
	if (fflush(stdout) != 0)
		die_errno(CLI_EXIT_WARD, "cannot write standard output");
	return status;
}
