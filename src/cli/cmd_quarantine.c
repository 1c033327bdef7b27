/*
 * ward quarantine — what the guard took out of workspaces after confined
 * runs (ward/quarantine.h): list it, put an entry back, prune it.
 *
 *   ward quarantine list [--json]
 *   ward quarantine restore BOX [PATH...]
 *   ward quarantine prune [--older-than DURATION | --all] [BOX...]
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ward/config.h"
#include "ward/escalation.h"
#include "ward/json.h"
#include "ward/quarantine.h"

#include "cli.h"

static const char quarantine_usage[] =
    "ward quarantine list|restore|prune [OPTIONS] [ARG...]";

static void print_help(void)
{
	printf(
	    "Usage: %s\n"
	    "\n"
	    "After a confined run under workspace-write, ward's guard takes "
	    "what the command\n"
	    "left in a protected place (git hooks and config, a new git "
	    "repository, shell\n"
	    "startup files, editor and agent settings) out of the workspace, "
	    "into the\n"
	    "quarantine in ward's state directory "
	    "($XDG_STATE_HOME/ward/quarantine), one\n"
	    "box per run. What it could not move there (past the quota, no "
	    "copy possible)\n"
	    "it renamed beside itself, NAME.ward-kept-BOX, where nothing runs "
	    "it.\n"
	    "\n"
	    "Subcommands:\n"
	    "  list               every entry: box, when, where it was, where "
	    "it is, what\n"
	    "  restore BOX [PATH...]\n"
	    "                     put the entries of BOX (or only those that "
	    "were at PATH)\n"
	    "                     back where they were; never over anything, "
	    "never through\n"
	    "                     a symbolic link\n"
	    "  prune [--older-than DURATION | --all] [BOX...]\n"
	    "                     delete boxes older than DURATION (default: "
	    "the\n"
	    "                     retention, quarantine_retention_days), every "
	    "one (--all),\n"
	    "                     or the BOXes named\n"
	    "\n"
	    "Options:\n"
	    "      --json         machine-readable output (list, restore, "
	    "prune)\n"
	    "      --older-than DURATION\n"
	    "                     a number with s, m, h, d or w, e.g. 30d\n"
	    "      --all          every box, whatever its age (prune)\n"
	    "  -h, --help         show this help and exit\n"
	    "\n"
	    "What is restored was written by a confined command: read it "
	    "before you run git\n"
	    "or open the project there. The quarantine holds at most "
	    "quarantine_quota_mb\n"
	    "(default %d MiB); boxes older than quarantine_retention_days "
	    "(default %d) go\n"
	    "when a new one is made (ward-config(5)).\n"
	    "\n"
	    "Exit status: 0 success, 2 usage error or no such box or entry, "
	    "125 ward failed.\n"
	    "\n"
	    "Examples:\n"
	    "  ward quarantine list\n"
	    "  ward quarantine restore 20250101T120000Z-4242-1 "
	    "~/src/app/vendor/lib/.git\n"
	    "  ward quarantine prune --older-than 7d\n",
	    quarantine_usage, WARD_QUARANTINE_QUOTA_MB,
	    WARD_QUARANTINE_RETENTION_DAYS);
}

enum {
	OPT_OLDER_THAN = 500,
	OPT_ALL,
};

const struct cli_option cli_quarantine_options[] = {
    {"json", CLI_OPT_JSON, NULL, CLI_VALUE_NONE, "list restore prune"},
    {"older-than", OPT_OLDER_THAN, "DURATION", CLI_VALUE_TEXT, "prune"},
    {"all", OPT_ALL, NULL, CLI_VALUE_NONE, "prune"},
    CLI_OPTION_HELP,
    CLI_OPTION_END,
};

const struct cli_command cli_quarantine_commands[] = {
    {"list",
     NULL,
     "what the guard took out of workspaces",
     NULL,
     NULL,
     {CLI_VALUE_NONE}},
    {"restore",
     NULL,
     "put a box's entries back where they were",
     NULL,
     NULL,
     {CLI_VALUE_TEXT, CLI_VALUE_FILE}},
    {"prune",
     NULL,
     "delete boxes past the retention (or named)",
     NULL,
     NULL,
     {CLI_VALUE_TEXT}},
    {NULL, NULL, NULL, NULL, NULL, {CLI_VALUE_NONE}},
};

struct qopts {
	bool json;
	bool all;
	const char *older;
};

static int parse(int argc, char **argv, struct qopts *o)
{
	struct cli_getopt g;
	int opt;

	memset(o, 0, sizeof(*o));
	cli_getopt_init(&g, cli_quarantine_options, false, argv[0],
			quarantine_usage, argc, argv);
	while ((opt = cli_getopt_next(&g, argc, argv)) != -1) {
		if (opt == CLI_OPT_JSON) {
			o->json = true;
		} else if (opt == OPT_OLDER_THAN) {
			o->older = optarg;
		} else if (opt == OPT_ALL) {
			o->all = true;
		} else if (opt == 'h') {
			print_help();
			exit(CLI_EXIT_OK);
		} else {
			die_getopt(quarantine_usage, opt, argc, argv);
		}
	}
	return optind;
}

static void set_or_die(json_t *obj, const char *key, json_t *v)
{
	if (!v || json_object_set_new(obj, key, v) != 0)
		die(CLI_EXIT_WARD, "out of memory");
}

static const char *when_text(char *buf, size_t len, int64_t when)
{
	time_t t = (time_t)when;
	struct tm tm;

	if (when < 0 || !gmtime_r(&t, &tm) ||
	    !strftime(buf, len, "%Y-%m-%d %H:%M:%SZ", &tm))
		snprintf(buf, len, "?");
	return buf;
}

static int do_list(int argc, char **argv)
{
	const struct ward_quarantine_item *it;
	ward_quarantine *q = NULL;
	struct qopts o;
	char when[64];
	json_t *arr;
	int first;

	first = parse(argc, argv, &o);
	if (first < argc)
		die_usage(quarantine_usage, "list takes no argument");
	if (ward_quarantine_list(&q) != 0)
		die(CLI_EXIT_WARD, "%s", ward_error_last());
	if (o.json) {
		arr = json_array();
		for (size_t i = 0; arr && (it = ward_quarantine_item(q, i));
		     i++) {
			json_t *e = json_object();

			if (!e)
				die(CLI_EXIT_WARD, "out of memory");
			set_or_die(e, "box", ward_json_str(it->box));
			set_or_die(e, "time",
				   json_string(when_text(when, sizeof(when),
							 it->when)));
			set_or_die(e, "path", ward_json_str(it->path));
			set_or_die(e, "stored", ward_json_str(it->stored));
			set_or_die(e, "kept", json_boolean(it->kept));
			set_or_die(e, "present", json_boolean(it->present));
			set_or_die(e, "bytes",
				   json_integer((json_int_t)it->bytes));
			set_or_die(e, "what", ward_json_str(it->what));
			if (json_array_append_new(arr, e) != 0)
				die(CLI_EXIT_WARD, "out of memory");
		}
		if (!arr)
			die(CLI_EXIT_WARD, "out of memory");
		cli_json_print(arr);
		ward_quarantine_free(q);
		return CLI_EXIT_OK;
	}
	if (!ward_quarantine_count(q))
		printf("the quarantine is empty%s%s%s\n",
		       ward_quarantine_dir(q) ? " (" : "",
		       ward_quarantine_dir(q) ? ward_quarantine_dir(q) : "",
		       ward_quarantine_dir(q) ? ")" : "");
	for (size_t i = 0; (it = ward_quarantine_item(q, i)); i++) {
		/* Paths come from workspaces a command wrote: escaped. */
		printf("%s  %s  ", it->box,
		       when_text(when, sizeof(when), it->when));
		ward_escalation_put(stdout, it->path);
		printf("\n    %s: ", it->kept	   ? "kept in place as"
				     : it->present ? "in"
						   : "no longer in");
		ward_escalation_put(stdout, it->stored);
		printf("\n    %s, %llu KiB\n", it->what,
		       (unsigned long long)(it->bytes / 1024));
	}
	if (ward_quarantine_count(q) && ward_quarantine_dir(q))
		printf("(%s)\n", ward_quarantine_dir(q));
	ward_quarantine_free(q);
	return CLI_EXIT_OK;
}

static int do_restore(int argc, char **argv)
{
	struct qopts o;
	size_t done = 0, all = 0;
	int first, err, status = CLI_EXIT_OK;

	first = parse(argc, argv, &o);
	if (first >= argc)
		die_usage(quarantine_usage,
			  "restore needs a box (see ward quarantine list)");
	/* No PATH: every entry of the box; else each PATH in turn. */
	for (int i = first + 1; i < argc || i == first + 1; i++) {
		const char *path = i < argc ? argv[i] : NULL;

		err = ward_quarantine_restore(&done, argv[first], path);
		all += done;
		if (err) {
			fprintf(stderr, "%s: %s\n", cli_name,
				ward_error_last());
			status = err == WARD_ENOMATCH || err == WARD_EINVAL
				     ? CLI_EXIT_USAGE
				     : CLI_EXIT_WARD;
		}
		if (!path)
			break;
	}
	if (o.json) {
		json_t *obj = json_object();

		if (!obj)
			die(CLI_EXIT_WARD, "out of memory");
		set_or_die(obj, "restored", json_integer((json_int_t)all));
		cli_json_print(obj);
	} else if (all) {
		printf("restored %zu entr%s of %s; a confined command wrote "
		       "%s: read %s before you run git or open the project "
		       "there\n",
		       all, all == 1 ? "y" : "ies", argv[first],
		       all == 1 ? "it" : "them", all == 1 ? "it" : "them");
	}
	return status;
}

/* The retention of the user's configuration, in seconds. */
static int64_t retention(void)
{
	struct ward_config_options co = WARD_CONFIG_OPTIONS_INIT;
	ward_config *cfg = NULL;
	unsigned days;

	co.no_project_file = true;
	if (ward_config_new(&cfg) != 0 || ward_config_load(cfg, &co) != 0)
		die(CLI_EXIT_WARD, "%s", ward_error_last());
	days = ward_config_quarantine_days(cfg, NULL);
	ward_config_free(cfg);
	return (int64_t)days * 86400;
}

static int do_prune(int argc, char **argv)
{
	static const struct cli_unit units[] = {
	    {'s', 1},	  {'m', 60},	    {'h', 3600},
	    {'d', 86400}, {'w', 7 * 86400}, {0, 0},
	};
	unsigned long long secs = 0;
	size_t removed = 0, n;
	struct qopts o;
	int64_t age;
	int first, err, status = CLI_EXIT_OK;

	first = parse(argc, argv, &o);
	if (o.all && o.older)
		die_usage(quarantine_usage,
			  "option '--all' cannot be combined with "
			  "'--older-than'");
	if (o.older && (!cli_parse_scaled(&secs, o.older, units) || !secs))
		die_usage(quarantine_usage,
			  "invalid duration '%s' (expected a number with s, "
			  "m, h, d or w, e.g. 30d)",
			  o.older);
	age = o.all	     ? 0
	      : o.older	     ? (int64_t)secs
	      : first < argc ? 0
			     : retention();
	if (first == argc) {
		if (ward_quarantine_prune(&removed, NULL, age) != 0)
			die(CLI_EXIT_WARD, "%s", ward_error_last());
	}
	for (int i = first; i < argc; i++) {
		err = ward_quarantine_prune(&n, argv[i], age);
		removed += n;
		if (err) {
			fprintf(stderr, "%s: %s\n", cli_name,
				ward_error_last());
			status = err == WARD_ENOMATCH ? CLI_EXIT_USAGE
						      : CLI_EXIT_WARD;
		}
	}
	if (o.json) {
		json_t *obj = json_object();

		if (!obj)
			die(CLI_EXIT_WARD, "out of memory");
		set_or_die(obj, "removed", json_integer((json_int_t)removed));
		cli_json_print(obj);
	} else {
		printf("removed %zu box%s\n", removed,
		       removed == 1 ? "" : "es");
	}
	return status;
}

/* What runs each subcommand, in the order of cli_quarantine_commands[]. */
static int (*const handlers[])(int, char **) = {
    do_list,
    do_restore,
    do_prune,
};

_Static_assert(sizeof(handlers) / sizeof(handlers[0]) ==
		   sizeof(cli_quarantine_commands) /
			   sizeof(cli_quarantine_commands[0]) -
		       1,
	       "one handler per subcommand of cli_quarantine_commands");

int cmd_quarantine(int argc, char **argv)
{
	const char *sub;

	if (argc < 2)
		die_usage(quarantine_usage, "no subcommand given");
	sub = argv[1];
	if (!strcmp(sub, "-h") || !strcmp(sub, "--help")) {
		print_help();
		return CLI_EXIT_OK;
	}
	return handlers[cli_subcommand(cli_quarantine_commands, "quarantine",
				       quarantine_usage, sub)](argc - 1,
							       argv + 1);
}
