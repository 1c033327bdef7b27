/*
 * fuzz_argv — libFuzzer target for the command line's option parsing
 * (src/cli/options.c: cli_getopt_init and cli_getopt_next over every
 * command's option table in cli/, as `ward` parses them).
 *
 * Input: byte 0 picks the command (every entry of cli_commands with an
 * option table), byte 1 its subcommand (or none) and whether options stop
 * at the first operand (in order, as run, confine and mcp parse); the rest
 * is argv, elements separated by NUL bytes (at most 24). Checked against
 * an independent model of GNU getopt_long as the tables declare it (long
 * options exact or by an unambiguous prefix, --name=value or --name value,
 * short clusters with a value glued or next, "--" ending the options, a
 * value taken whatever it looks like, operands permuted after the options
 * unless in order):
 *   1. a parse dies exactly when the model finds an error, always with
 *      exit status 2 (usage), and its message names the culprit (the
 *      element, the long option before its '=', the short option "-c", or
 *      the option that does not apply to the subcommand);
 *   2. otherwise it yields the model's options with the model's values,
 *      only ones that apply to the subcommand, and leaves the model's
 *      operands, in order, from optind on;
 *   3. --json (exactly, first) sets the JSON error mode, and the JSON
 *      mode is set only when an element says --json.
 *
 * Build and run: `make fuzz` (or `make fuzz-lane`); see tests/fuzz/run.sh.
 */
#include <getopt.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fuzz_cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAXARGS 24
/* Every byte of the input may be an option of a cluster. */
#define MAXOPTS 8192

struct tab {
	const struct cli_option *opts;
	const struct cli_command *subs;
};

static struct tab tabs[32];
static size_t ntabs;

struct got {
	int val;
	char *arg;
};

/* The model's verdict. */
struct model {
	bool error;
	char culprit[2][256]; /* what the message may name */
	struct got opt[MAXOPTS];
	size_t nopt;
	const char *operand[MAXARGS];
	size_t noperand;
};

static bool applies(const struct cli_option *o, const char *sub)
{
	const char *p = o->only;
	size_t n;

	if (!p || !sub)
		return true;
	n = strlen(sub);
	while (*p) {
		size_t w = strcspn(p, " ");

		if (w == n && strncmp(p, sub, n) == 0)
			return true;
		p += w;
		while (*p == ' ')
			p++;
	}
	return false;
}

static void set_error(struct model *m, const char *a, size_t alen,
		      const char *b)
{
	m->error = true;
	snprintf(m->culprit[0], sizeof(m->culprit[0]), "%.*s", (int)alen, a);
	snprintf(m->culprit[1], sizeof(m->culprit[1]), "%s", b ? b : "");
}

static void emit(struct model *m, const struct cli_option *o, const char *arg,
		 const char *sub, bool typed_long)
{
	char name[256];

	if (!applies(o, sub)) {
		/* Named by its long name or its letter (how it was typed). */
		snprintf(name, sizeof(name), "'--%s'", o->name ? o->name : "");
		if (o->val > 0 && o->val < 256) {
			char sh[8];

			snprintf(sh, sizeof(sh), "'-%c'", o->val);
			set_error(m, typed_long ? name : sh, strlen(name),
				  typed_long ? sh : name);
		} else {
			set_error(m, name, strlen(name), NULL);
		}
		return;
	}
	m->opt[m->nopt].val = o->val;
	m->opt[m->nopt].arg = (char *)arg;
	m->nopt++;
}

static void model(struct model *m, const struct cli_option *opts,
		  bool in_order, const char *sub, int argc, char **argv)
{
	int i = 1;

	memset(m, 0, sizeof(*m));
	while (i < argc && !m->error) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0) {
			for (i++; i < argc; i++)
				m->operand[m->noperand++] = argv[i];
			break;
		}
		if (a[0] != '-' || a[1] == '\0') {
			if (in_order) {
				for (; i < argc; i++)
					m->operand[m->noperand++] = argv[i];
				break;
			}
			m->operand[m->noperand++] = a;
			i++;
			continue;
		}
		if (a[1] == '-') {
			const char *name = a + 2;
			size_t nl = strcspn(name, "=");
			const struct cli_option *o = NULL, *pre = NULL;
			bool ambiguous = false;

			for (const struct cli_option *r = opts; r->name || r->val;
			     r++) {
				if (!r->name || strncmp(r->name, name, nl) != 0)
					continue;
				if (strlen(r->name) == nl) {
					o = r;
					break;
				}
				if (pre && (pre->val != r->val ||
					    !pre->arg != !r->arg))
					ambiguous = true;
				if (!pre)
					pre = r;
			}
			if (!o && (ambiguous || !pre)) {
				set_error(m, a, strlen(a), NULL);
				break;
			}
			if (!o)
				o = pre;
			i++;
			if (o->arg) {
				if (name[nl] == '=') {
					emit(m, o, name + nl + 1, sub, true);
				} else if (i < argc) {
					emit(m, o, argv[i], sub, true);
					i++;
				} else {
					set_error(m, a, strlen(a), NULL);
				}
			} else if (name[nl] == '=') {
				set_error(m, a, (size_t)(name + nl - a), NULL);
			} else {
				emit(m, o, NULL, sub, true);
			}
			continue;
		}
		/* A cluster of short options. */
		for (int j = 1; a[j] && !m->error; j++) {
			const struct cli_option *o = NULL;
			char sh[8];

			snprintf(sh, sizeof(sh), "'-%c'", a[j]);
			for (const struct cli_option *r = opts;
			     a[j] != ':' && (r->name || r->val); r++)
				if (r->val == (unsigned char)a[j])
					o = r;
			if (!o) {
				char el[300];

				/* A byte getopt cannot name alone (>= 0x80)
				 * is named by its element. */
				snprintf(el, sizeof(el), "'%s'", a);
				set_error(m, sh, strlen(sh), el);
				break;
			}
			if (!o->arg) {
				emit(m, o, NULL, sub, false);
				if (!a[j + 1])
					i++;
				continue;
			}
			i++;
			if (a[j + 1]) {
				emit(m, o, a + j + 1, sub, false);
			} else if (i < argc) {
				/* getopt names it by the element it just
				 * passed: the value's. */
				emit(m, o, argv[i], sub,
				     strncmp(argv[i], "--", 2) == 0 &&
					 o->name);
				i++;
			} else {
				set_error(m, sh, strlen(sh), NULL);
			}
			break;
		}
	}
}

static void collect(void)
{
	for (size_t i = 0; cli_commands[i].name; i++) {
		if (!cli_commands[i].options)
			continue;
		tabs[ntabs].opts = cli_commands[i].options;
		tabs[ntabs].subs = cli_commands[i].subs;
		ntabs++;
	}
	if (!ntabs)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *argv[MAXARGS + 2], *copy[MAXARGS + 2];
	static struct cli_getopt g;
	static struct model m;
	static volatile size_t nseen;
	static struct got seen[MAXOPTS];
	static volatile int opt;
	const struct tab *t;
	const char *sub = NULL;
	char *buf, *err = NULL, *out = NULL;
	size_t errlen = 0, outlen = 0, nsubs = 0;
	FILE *saved_err, *saved_out;
	int argc = 1;
	bool in_order, died;

	if (!ntabs)
		collect();
	if (size < 2 || size > MAXOPTS)
		return 0;
	t = &tabs[data[0] % ntabs];
	for (; t->subs && t->subs[nsubs].name; nsubs++)
		;
	if (nsubs && (data[1] & 0x7f) % (nsubs + 1) < nsubs)
		sub = t->subs[(data[1] & 0x7f) % (nsubs + 1)].name;
	in_order = data[1] & 0x80;

	/* argv: "ward-x", then the NUL-separated elements. */
	buf = malloc(size - 2 + 1);
	if (!buf)
		abort();
	memcpy(buf, data + 2, size - 2);
	buf[size - 2] = '\0';
	argv[0] = "ward-x";
	for (char *p = buf; argc <= MAXARGS && p <= buf + (size - 2);) {
		argv[argc++] = p;
		p += strlen(p) + 1;
	}
	argv[argc] = NULL;
	memcpy(copy, argv, sizeof(argv));
	model(&m, t->opts, in_order, sub, argc, copy);

	/* The parse, its output caught. */
	saved_err = stderr;
	saved_out = stdout;
	stderr = open_memstream(&err, &errlen);
	stdout = open_memstream(&out, &outlen);
	if (!stderr || !stdout)
		abort();
	cli_json_mode = false;
	nseen = 0;
	died = false;
	fuzz_cli_new_parse();
	if (setjmp(fuzz_cli_jmp) == 0) {
		fuzz_cli_armed = true;
		cli_getopt_init(&g, t->opts, in_order, sub, "ward-x [OPTIONS]",
				argc, argv);
		while ((opt = cli_getopt_next(&g, argc, argv)) != -1) {
			seen[nseen].val = opt;
			seen[nseen].arg = optarg;
			nseen++;
		}
		fuzz_cli_armed = false;
	} else {
		died = true;
	}
	fclose(stderr);
	fclose(stdout);
	stderr = saved_err;
	stdout = saved_out;

	/* 1. */
	if (died != m.error) {
		fprintf(stderr, "died %d (%s), model %d (%s)\n", died,
			err ? err : "", m.error, m.culprit[0]);
		abort();
	}
	if (died) {
		if (fuzz_cli_status != CLI_EXIT_USAGE)
			abort();
		if (!strstr(err, m.culprit[0]) &&
		    !(m.culprit[1][0] && strstr(err, m.culprit[1]))) {
			fprintf(stderr, "message \"%s\" does not name %s\n",
				err, m.culprit[0]);
			abort();
		}
	} else {
		/* 2. */
		if (nseen != m.nopt)
			abort();
		for (size_t i = 0; i < nseen; i++) {
			if (seen[i].val != m.opt[i].val ||
			    !seen[i].arg != !m.opt[i].arg ||
			    (seen[i].arg &&
			     strcmp(seen[i].arg, m.opt[i].arg) != 0)) {
				fprintf(stderr, "option %zu: %d \"%s\", model "
						"%d \"%s\"\n",
					i, seen[i].val,
					seen[i].arg ? seen[i].arg : "",
					m.opt[i].val,
					m.opt[i].arg ? m.opt[i].arg : "");
				abort();
			}
		}
		if ((size_t)(argc - optind) != m.noperand)
			abort();
		for (size_t i = 0; i < m.noperand; i++)
			if (strcmp(argv[optind + (int)i], m.operand[i]) != 0)
				abort();
	}
	/* 3. */
	if (argc > 1 && strcmp(argv[1], "--json") == 0) {
		for (const struct cli_option *r = t->opts; r->name || r->val;
		     r++)
			if (r->val == CLI_OPT_JSON && applies(r, sub) &&
			    !cli_json_mode)
				abort();
	}
	if (cli_json_mode) {
		bool said = false;

		for (int i = 1; i < argc; i++)
			said |= strncmp(copy[i], "--json", 6) == 0 &&
				(copy[i][6] == '\0' || copy[i][6] == '=');
		if (!said)
			abort();
	}
	free(err);
	free(out);
	free(buf);
	return 0;
}
