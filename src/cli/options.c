/*
 * ward — getopt_long() over the commands' option tables (struct
 * cli_option): each option is declared once, in its command's table, and
 * both the parser and the completion scripts are made from it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

bool cli_option_applies(const struct cli_option *o, const char *sub)
{
	const char *p;
	size_t len;

	if (!o->only || !sub)
		return true;
	len = strlen(sub);
	for (p = o->only; (p = strstr(p, sub)); p += len)
		if ((p == o->only || p[-1] == ' ') &&
		    (p[len] == '\0' || p[len] == ' '))
			return true;
	return false;
}

/* The row of @opts getopt returned @val for, or NULL. */
static const struct cli_option *find_val(const struct cli_option *opts, int val)
{
	for (; opts->name || opts->val; opts++)
		if (opts->val == val)
			return opts;
	return NULL;
}

/* The row of long option @name (@len bytes, no "--"), or NULL. */
static const struct cli_option *find_long(const struct cli_option *opts,
					  const char *name, size_t len)
{
	for (; opts->name || opts->val; opts++)
		if (opts->name && strlen(opts->name) == len &&
		    strncmp(opts->name, name, len) == 0)
			return opts;
	return NULL;
}

/*
 * Whether getopt will see option @val in @argv: the arguments are walked
 * as getopt walks them (values skipped, "--" ends the options, and with
 * @in_order so does the first operand). Unique prefixes of long names are
 * not expanded: a misspelt --json only loses the JSON form of an error.
 */
static bool given(const struct cli_option *opts, bool in_order, int val,
		  int argc, char **argv)
{
	const struct cli_option *o;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0)
			return false;
		if (a[0] != '-' || a[1] == '\0') {
			if (in_order)
				return false;
			continue;
		}
		if (a[1] == '-') {
			size_t len = strcspn(a + 2, "=");

			o = find_long(opts, a + 2, len);
			if (o && o->val == val)
				return true;
			if (o && o->arg && a[2 + len] != '=')
				i++;
			continue;
		}
		for (const char *c = a + 1; *c; c++) {
			o = find_val(opts, (unsigned char)*c);
			if (o && o->val == val)
				return true;
			if (o && o->arg) {
				if (c[1] == '\0')
					i++;
				break;
			}
		}
	}
	return false;
}

void cli_getopt_init(struct cli_getopt *g, const struct cli_option *opts,
		     bool in_order, const char *sub, const char *usage,
		     int argc, char **argv)
{
	size_t n = 0, s = 0;

	g->opts = opts;
	g->sub = sub;
	g->usage = usage;
	g->shortopts[s++] = in_order ? '+' : ':';
	if (in_order)
		g->shortopts[s++] = ':';
	for (const struct cli_option *o = opts; o->name || o->val; o++) {
		/* A table too long for the buffers is a bug caught by every
		 * test that runs the command. */
		if (n == CLI_MAX_OPTIONS)
			die(CLI_EXIT_WARD, "internal error: option table full");
		if (o->val > 0 && o->val < 256) {
			g->shortopts[s++] = (char)o->val;
			if (o->arg)
				g->shortopts[s++] = ':';
		}
		if (o->name)
			g->longopts[n++] = (struct option){
			    o->name, o->arg ? required_argument : no_argument,
			    NULL, o->val};
	}
	g->shortopts[s] = '\0';
	g->longopts[n] = (struct option){NULL, 0, NULL, 0};
	optind = 1;
	opterr = 0;
	if (find_val(opts, CLI_OPT_JSON) &&
	    cli_option_applies(find_val(opts, CLI_OPT_JSON), sub) &&
	    given(opts, in_order, CLI_OPT_JSON, argc, argv))
		cli_json_mode = true;
}

/*
 * Whether getopt's error @ret was about the long option in @arg (the
 * element it last passed) rather than a short option of a cluster: getopt
 * reports a long option's missing or extra value with optopt = its value,
 * an unknown one with optopt = 0, a short option with optopt = the byte
 * (negative for one >= 0x80 where char is signed). @arg is only the
 * culprit when it names the option optopt says (a cluster after a
 * complete --json is not the --json).
 */
static bool error_is_long(const struct cli_option *opts, const char *arg)
{
	const struct cli_option *o;
	size_t len;

	if (strncmp(arg, "--", 2) != 0)
		return false;
	if (optopt == 0 || optopt >= 256)
		return true;
	if (optopt < 0)
		return false;
	o = find_val(opts, optopt);
	len = strcspn(arg + 2, "=");
	return o && o->name && len <= strlen(o->name) &&
	       strncmp(o->name, arg + 2, len) == 0;
}

int cli_getopt_next(struct cli_getopt *g, int argc, char **argv)
{
	const struct cli_option *o;
	int opt = getopt_long(argc, argv, g->shortopts, g->longopts, NULL);

	if (opt == '?' || opt == ':') {
		int at = optind > argc ? argc : optind;
		const char *arg = at > 0 && argv[at - 1] ? argv[at - 1] : "";
		char shortopt[3] = {'-', (char)optopt, '\0'};

		if (!error_is_long(g->opts, arg)) {
			/* A short option, named alone (its element may be a
			 * cluster, or not even the one getopt last passed). */
			if (opt == ':')
				die_usage(g->usage,
					  "option '%s' requires a value",
					  shortopt);
			die_usage(g->usage, "unknown option '%s'", shortopt);
		}
		die_getopt(g->usage, opt, argc, argv);
	}
	if (opt == -1)
		return opt;
	o = find_val(g->opts, opt);
	if (o && !cli_option_applies(o, g->sub)) {
		/* Named as it was typed: getopt has just passed a long
		 * option's element, but may still be inside a short cluster. */
		int at = optind > argc ? argc : optind;
		bool typed_long = at > 0 && argv[at - 1] &&
				  strncmp(argv[at - 1], "--", 2) == 0 &&
				  o->name;

		if (typed_long || opt >= 256)
			die_usage(g->usage,
				  "option '--%s' does not apply to %s", o->name,
				  g->sub);
		die_usage(g->usage, "option '-%c' does not apply to %s", opt,
			  g->sub);
	}
	return opt;
}
