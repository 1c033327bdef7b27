/*
 * fuzz_landlock — libFuzzer target for the Landlock rule translation
 * (src/libward/plan/translate*.c: ward_xlate_new for WARD_RUNNER_LANDLOCK, the
 * targets (translate_targets.c), the read and write grants
 * (translate_landlock.c), the complement expansion that hides a `--` path by
 * granting its siblings, the carve-outs of protected paths, glob expansion)
 * judged against the fs fence (src/libward/fsfence/fsfence.c), which applies
 * every rule exactly.
 *
 * Input: byte 0 picks the mode; the rest is access rules text, one rule a
 * line, where '@' stands for a scratch tree made once (a workspace, an
 * outside directory, a home with a .ssh, a $TMPDIR; files and directories
 * at several depths; ward's configuration and state directories inside the
 * home). For every file and directory of the tree (and the tree's
 * ancestors) the Landlock access the grants give (a grant covers itself
 * and everything beneath) is compared with the fence's verdict:
 *   1. never a silent gap: where Landlock would allow a read or a write the
 *      fence refuses, the plan declares partial enforcement
 *      (ward_xlate_partial) or refuses the runner (ward_xlate_refusal);
 *   2. nothing lost: when the plan has no warning at all, every file the
 *      fence lets a command read (write) Landlock lets it read (write);
 *   3. the grants are absolute, normal paths (optional ones marked), none
 *      twice.
 * The launcher's mounts (--hide, --hide-ro: the matches inside the
 * writable roots) take away what they cover before 1 and 2 are judged.
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

#include "landlock.h"
#include "libward/plan/translate_internal.h"
#include "ward/ward.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char T[64];
static char ws[128], tmpd[128], home[128];
static char *probe[64];
static bool probe_dir[64];
static size_t nprobe;

static void mk(const char *rel, bool dir)
{
	char p[256];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", T, rel);
	if (dir) {
		if (mkdir(p, 0755) != 0 && errno != EEXIST)
			abort();
	} else {
		fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			abort();
		close(fd);
	}
	probe[nprobe] = strdup(p);
	probe_dir[nprobe] = dir;
	nprobe++;
}

static void cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", T);
	if (system(cmd) != 0) {
		/* nothing more to do */
	}
}

static void setup(void)
{
	static const struct {
		const char *rel;
		bool dir;
	} tree[] = {
	    {"ws", true},
	    {"ws/a", true},
	    {"ws/a/b", true},
	    {"ws/a/b/f1", false},
	    {"ws/a/c", true},
	    {"ws/a/g", false},
	    {"ws/d.txt", false},
	    {"ws/e", true},
	    {"ws/e[1]", false},
	    {"out", true},
	    {"out/x.txt", false},
	    {"out/y", true},
	    {"out/y/z.txt", false},
	    {"out/w", true},
	    {"home", true},
	    {"home/.ssh", true},
	    {"home/.ssh/id", false},
	    {"home/docs", true},
	    {"home/docs/n.md", false},
	    {"home/.config", true},
	    {"home/.state", true},
	    {"tmp", true},
	    {"tmp/t", false},
	};

	if (!mkdtemp(strcpy(T, access("/dev/shm", W_OK) == 0
				   ? "/dev/shm/fuzz_ll.XXXXXX"
				   : "/tmp/fuzz_ll.XXXXXX")))
		abort();
	atexit(cleanup);
	probe[nprobe] = strdup("/");
	probe_dir[nprobe++] = true;
	probe[nprobe] = strdup(T);
	probe_dir[nprobe++] = true;
	for (size_t i = 0; i < sizeof(tree) / sizeof(tree[0]); i++)
		mk(tree[i].rel, tree[i].dir);
	snprintf(ws, sizeof(ws), "%s/ws", T);
	snprintf(tmpd, sizeof(tmpd), "%s/tmp", T);
	snprintf(home, sizeof(home), "%s/home", T);
	/* ward's own directories (protected paths) inside the tree. */
	setenv("HOME", home, 1);
	setenv("XDG_CONFIG_HOME", "/nonexistent-fuzz/.config", 1);
	{
		char p[160];

		snprintf(p, sizeof(p), "%s/.config", home);
		setenv("XDG_CONFIG_HOME", p, 1);
		snprintf(p, sizeof(p), "%s/.state", home);
		setenv("XDG_STATE_HOME", p, 1);
	}
}

/* A grant's path: an optional grant ("?PATH", skipped when it is gone by
 * the spawn) is PATH. */
static const char *grant(const char *g)
{
	return g[0] == WARD_LL_OPTIONAL ? g + 1 : g;
}

/* Whether a grant in @v covers @p (the grant itself or beneath it). */
static bool covered(char *const *v, const char *p)
{
	for (size_t i = 0; v && v[i]; i++) {
		const char *g = grant(v[i]);
		size_t n = strlen(g);

		if (strcmp(g, "/") == 0 || strcmp(g, p) == 0 ||
		    (strncmp(g, p, n) == 0 && p[n] == '/'))
			return true;
	}
	return false;
}

/*
 * What the launcher's mounts leave of @p (ward_xlate_landlock_hides: pairs
 * "--hide P" / "--hide-ro P"): 2 when a --hide covers it (a file under
 * /dev/null, a directory under an empty read-only tmpfs: neither read nor
 * written), 1 when only a --hide-ro does (read-only), else 0.
 */
static int mounted(char *const *h, const char *p)
{
	int r = 0;

	for (size_t i = 0; h && h[i] && h[i + 1]; i += 2) {
		const char *g = h[i + 1];
		size_t n = strlen(g);

		if (strcmp(g, p) != 0 && !(strncmp(g, p, n) == 0 && p[n] == '/'))
			continue;
		if (strcmp(h[i], "--hide") == 0)
			return 2;
		r = 1;
	}
	return r;
}

static bool normal(const char *p)
{
	if (p[0] != '/')
		return false;
	if (strcmp(p, "/") == 0)
		return true;
	if (p[strlen(p) - 1] == '/' || strstr(p, "//") || strstr(p, "/./") ||
	    strstr(p, "/../"))
		return false;
	return true;
}

static bool fence(const ward_policy *pol, const char *p, bool dir, bool write)
{
	char child[320];
	int r;

	if (!write) {
		r = ward_fs_check(NULL, pol,
				  dir ? WARD_FS_OP_LIST : WARD_FS_OP_READ, p);
	} else if (dir) {
		snprintf(child, sizeof(child), "%s/fz-new",
			 strcmp(p, "/") ? p : "");
		r = ward_fs_check(NULL, pol, WARD_FS_OP_WRITE, child);
	} else {
		r = ward_fs_check(NULL, pol, WARD_FS_OP_WRITE, p);
	}
	return r == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum ward_mode modes[] = {WARD_MODE_READ_ONLY,
					       WARD_MODE_WORKSPACE_WRITE};
	static const struct ward_rule_origin origin = {"fuzz.yml", 1};
	struct ward_rules_env env = {0};
	ward_rules *rules = NULL;
	ward_policy *pol = NULL;
	struct ward_xlate *x = NULL;
	char **ro = NULL, **rw = NULL, *text;
	size_t n = 0;
	bool declared, quiet, globs;

	if (!nprobe)
		setup();
	if (size < 1 || size > 2048)
		return 0;
	/* The rules, '@' standing for the scratch tree. */
	text = malloc((size - 1) * strlen(T) + 1);
	if (!text)
		abort();
	for (size_t i = 1; i < size; i++) {
		if (data[i] == '\0')
			break;
		if (data[i] == '@') {
			memcpy(text + n, T, strlen(T));
			n += strlen(T);
		} else {
			text[n++] = (char)data[i];
		}
	}
	text[n] = '\0';
	env.workspace = ws;
	env.home = home;
	if (ward_rules_new(&rules) != 0)
		abort();
	if (ward_rules_add_text(rules, text, &env, &origin) != 0)
		goto out;
	if (ward_policy_new(&pol, modes[data[0] % 2], ws) != 0 ||
	    ward_policy_set_tmpdir(pol, tmpd) != 0 ||
	    ward_policy_set_rules(pol, rules) != 0)
		abort();
	if (ward_xlate_new(&x, pol, WARD_RUNNER_LANDLOCK) != 0)
		goto out; /* a bound reached: said, never planned */
	if (ward_xlate_landlock(&ro, &rw, x) != 0)
		abort();

	/* 3. */
	for (char **v = ro; v && *v; v++) {
		if (!normal(grant(*v)))
			abort();
		for (char **u = v + 1; *u; u++) {
			if (strcmp(*u, *v) == 0) {
				fprintf(stderr, "read grant %s twice\n", *v);
				abort();
			}
		}
	}
	for (char **v = rw; v && *v; v++) {
		if (!normal(grant(*v)))
			abort();
		for (char **u = v + 1; *u; u++) {
			if (strcmp(*u, *v) == 0) {
				fprintf(stderr, "write grant %s twice\n", *v);
				abort();
			}
		}
	}
	globs = strpbrk(text, "*?[") != NULL;
	declared = ward_xlate_partial(x)[0] || ward_xlate_refusal(x);
	quiet = !ward_xlate_warnings(x)[0];
	for (size_t i = 0; i < nprobe; i++) {
		const char *p = probe[i];
		bool d = probe_dir[i];
		bool f_r = fence(pol, p, d, false), f_w = fence(pol, p, d, true);
		int m = mounted(ward_xlate_landlock_hides(x), p);
		bool l_r = (covered(ro, p) || covered(rw, p)) && m < 2;
		bool l_w = covered(rw, p) && m == 0;

		/* 1. A directory's write is judged by creating a new entry
		 * in it; with a glob among the rules that name can be a
		 * match, and what a glob matches is found when the call is
		 * planned, on every runner (RUNNERS.md): not a gap of this
		 * translation. */
		if (d && !f_w && globs)
			l_w = false;
		if (((l_r && !f_r) || (l_w && !f_w)) && !declared) {
			fprintf(stderr,
				"%s: landlock %s%s, fence %s%s, nothing "
				"declared\nrules:\n%s\n",
				p, l_r ? "r" : "-", l_w ? "w" : "-",
				f_r ? "r" : "-", f_w ? "w" : "-", text);
			abort();
		}
		/* 2. */
		if (quiet && !d && ((f_r && !l_r) || (f_w && !l_w))) {
			fprintf(stderr,
				"%s: fence %s%s, landlock %s%s, no warning\n"
				"rules:\n%s\n",
				p, f_r ? "r" : "-", f_w ? "w" : "-",
				l_r ? "r" : "-", l_w ? "w" : "-", text);
			abort();
		}
	}
out:
	ward_strv_free(ro);
	ward_strv_free(rw);
	ward_xlate_free(x);
	ward_policy_free(pol);
	ward_rules_free(rules);
	free(text);
	return 0;
}
