/*
 * fuzz_fence — libFuzzer target for the fs fence's path walk
 * (src/libward/fsfence/fsfence.c: ward_fs_resolve and ward_fs_check), on a
 * scratch tree full of symlinks: out of the workspace (relative and absolute),
 * up, into a `--` directory, a loop, a dangling one, a chain.
 *
 * Input: byte 0 picks the operation (read, write, edit, remove, move,
 * mkdir, list, stat) and the mode; the rest is the path as a caller would
 * give it, relative to the workspace, where '@' stands for the scratch
 * tree (so absolute paths land in it). Rules: `-- @/ws/secret`,
 * `r- @/ws/ro`, `-- @/out/y`. Checked:
 *   1. a resolved path is absolute and normal, and it is where the kernel
 *      would act: realpath(3) of the path (for remove, move and stat
 *      without a trailing slash, of its directory, plus the last name)
 *      when that exists;
 *   2. a path is judged where it leads: the verdict on the path and on
 *      its resolved form are the same;
 *   3. never too much: nothing under a `--` rule is read, listed or
 *      changed, nothing under an `r-` rule changed, nothing changed in
 *      read-only mode or, inside the scratch tree, outside its writable
 *      roots (the workspace and $TMPDIR), however the path is spelled.
 *
 * Build and run: `make fuzz` (or `make fuzz-lane`); see tests/fuzz/run.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ward/ward.h"

#include "fuzz_tree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char T[64];
static ward_policy *pol[2];

static void cleanup(void)
{
	char cmd[128];

	for (int i = 0; i < 2; i++)
		ward_policy_free(pol[i]);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", T);
	if (system(cmd) != 0) {
		/* nothing more to do */
	}
}

static void setup(void)
{
	static const struct ward_rule_origin origin = {"fuzz.yml", 1};
	static const enum ward_mode modes[2] = {WARD_MODE_READ_ONLY,
						WARD_MODE_WORKSPACE_WRITE};
	struct ward_rules_env env = {0};
	ward_rules *rules;
	char rt[512], ws[128], tmpd[128];

	if (!mkdtemp(strcpy(T, access("/dev/shm", W_OK) == 0
				   ? "/dev/shm/fuzz_fence.XXXXXX"
				   : "/tmp/fuzz_fence.XXXXXX")))
		abort();
	atexit(cleanup);
	fuzz_root = T;
	mkd("ws");
	mkd("ws/a");
	mkd("ws/a/b");
	mkf("ws/a/f");
	mkf("ws/a/b/g");
	mkd("ws/secret");
	mkf("ws/secret/key");
	mkd("ws/ro");
	mkf("ws/ro/doc");
	mkd("out");
	mkf("out/x");
	mkd("out/y");
	mkf("out/y/z");
	mkd("tmp");
	mkl("../out", "ws/link_out");
	mkl("@/out/x", "ws/link_abs");
	mkl("@/out/y", "ws/link_hidden");
	mkl("secret/key", "ws/link_key");
	mkl("loop", "ws/loop");
	mkl("nowhere", "ws/dangling");
	mkl("..", "ws/up");
	mkl("../..", "ws/a/up2");
	mkl("a/b", "ws/rel");
	mkl("rel/g", "ws/chain");
	mkl("ro", "ws/link_ro");
	at(ws, sizeof(ws), "ws");
	at(tmpd, sizeof(tmpd), "tmp");
	snprintf(rt, sizeof(rt), "-- %s/ws/secret\nr- %s/ws/ro\n-- %s/out/y\n",
		 T, T, T);
	env.workspace = ws;
	env.home = T;
	if (ward_rules_new(&rules) != 0 ||
	    ward_rules_add_text(rules, rt, &env, &origin) != 0)
		abort();
	for (int i = 0; i < 2; i++) {
		if (ward_policy_new(&pol[i], modes[i], ws) != 0 ||
		    ward_policy_set_tmpdir(pol[i], tmpd) != 0 ||
		    ward_policy_set_rules(pol[i], rules) != 0)
			abort();
	}
	ward_rules_free(rules);
}

static bool under(const char *p, const char *rel)
{
	char d[256];
	size_t n;

	at(d, sizeof(d), rel);
	n = strlen(d);
	return strncmp(p, d, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

static bool normal(const char *p)
{
	size_t n = strlen(p);

	if (p[0] != '/')
		return false;
	if (n == 1)
		return true;
	return p[n - 1] != '/' && !strstr(p, "//") && !strstr(p, "/./") &&
	       !strstr(p, "/../") &&
	       !(n >= 2 && strcmp(p + n - 2, "/.") == 0) &&
	       !(n >= 3 && strcmp(p + n - 3, "/..") == 0);
}

/* Where the kernel would act: -1 when the model does not say. */
static int model(char *out, const char *path, bool follow)
{
	char full[PATH_MAX * 2], dir[PATH_MAX * 2], real[PATH_MAX];
	const char *base;
	char *slash;

	if (path[0] == '/')
		snprintf(full, sizeof(full), "%s", path);
	else
		snprintf(full, sizeof(full), "%s/ws/%s", T, path);
	/* A trailing slash follows the last link, as in the kernel. */
	if (follow || full[strlen(full) - 1] == '/') {
		if (!realpath(full, real))
			return -1;
		strcpy(out, real);
		return 0;
	}
	/* The directory resolved, the last name kept. */
	while (strlen(full) > 1 && full[strlen(full) - 1] == '/')
		full[strlen(full) - 1] = '\0';
	slash = strrchr(full, '/');
	if (!slash)
		return -1;
	base = slash + 1;
	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		return -1;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - full), full);
	if (!realpath(dir[0] ? dir : "/", real))
		return -1;
	snprintf(out, PATH_MAX, "%s%s%s", real, strcmp(real, "/") ? "/" : "",
		 base);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum ward_fs_op ops[] = {
	    WARD_FS_OP_READ,   WARD_FS_OP_WRITE, WARD_FS_OP_EDIT,
	    WARD_FS_OP_REMOVE, WARD_FS_OP_MOVE,	 WARD_FS_OP_MKDIR,
	    WARD_FS_OP_LIST,   WARD_FS_OP_STAT,
	};
	struct ward_fs_denial d1, d2;
	enum ward_fs_op op;
	const ward_policy *p;
	char path[1024], want[PATH_MAX];
	char *res = NULL;
	size_t n = 0;
	bool follow, mutates;
	int r1, r2, e;

	if (!pol[0])
		setup();
	if (size < 1 || size > 400)
		return 0;
	op = ops[data[0] % 8];
	p = pol[(data[0] >> 3) & 1];
	for (size_t i = 1; i < size && n + strlen(T) + 1 < sizeof(path); i++) {
		if (data[i] == '\0')
			break;
		if (data[i] == '@') {
			memcpy(path + n, T, strlen(T));
			n += strlen(T);
		} else {
			path[n++] = (char)data[i];
		}
	}
	path[n] = '\0';
	follow = op != WARD_FS_OP_REMOVE && op != WARD_FS_OP_MOVE &&
		 op != WARD_FS_OP_STAT;
	mutates = op == WARD_FS_OP_WRITE || op == WARD_FS_OP_EDIT ||
		  op == WARD_FS_OP_REMOVE || op == WARD_FS_OP_MOVE ||
		  op == WARD_FS_OP_MKDIR;

	e = ward_fs_resolve(&res, p, op, path);
	r1 = ward_fs_check(&d1, p, op, path);
	if (e == 0) {
		/* 1. */
		if (!normal(res)) {
			fprintf(stderr, "\"%s\" resolved to \"%s\"\n", path, res);
			abort();
		}
		if (model(want, path, follow) == 0 && strcmp(want, res) != 0) {
			fprintf(stderr, "\"%s\" (%s): resolved \"%s\", kernel "
					"\"%s\"\n",
				path, ward_fs_op_name(op), res, want);
			abort();
		}
		/* 2. */
		r2 = ward_fs_check(&d2, p, op, res);
		if (r1 != r2) {
			fprintf(stderr, "\"%s\" (%s): %d, its resolved \"%s\": "
					"%d\n",
				path, ward_fs_op_name(op), r1, res, r2);
			abort();
		}
		/* 3. */
		if (r1 == 0) {
			bool bad = under(res, "ws/secret") ||
				   under(res, "out/y");

			if (mutates)
				bad |= ward_policy_mode(p) ==
					   WARD_MODE_READ_ONLY ||
				       under(res, "ws/ro") ||
				       (under(res, "") && !under(res, "ws") &&
					!under(res, "tmp"));
			if (bad) {
				fprintf(stderr, "\"%s\" (%s, %s): allowed on "
						"\"%s\"\n",
					path, ward_fs_op_name(op),
					ward_mode_name(ward_policy_mode(p)),
					res);
				abort();
			}
		}
		ward_free(res);
	} else if (r1 == 0) {
		fprintf(stderr, "\"%s\" (%s): allowed, but it does not resolve "
				"(%d)\n",
			path, ward_fs_op_name(op), e);
		abort();
	}
	return 0;
}
