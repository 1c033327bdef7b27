/*
 * ward probe — which runners of the chain can confine on this machine, and
 * why; the chosen one, its enforcement, and the kernel's Landlock facts.
 *
 * With a valid ward.yml, what a call here would get is its plan's: the
 * runner, and an enforcement that is partial (with the reasons) when the
 * runner cannot enforce one of the configuration's rules — not merely
 * what the kernel offers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ward/call.h"
#include "ward/probe.h"

#include "cli.h"
#include "policy_opts.h"

static const char probe_usage[] =
    "ward probe [--json] [--runner RUNNER] [--workspace DIR] [--mode MODE] "
    "[--config FILE] [--access RULE]...";

static void print_help(void)
{
	printf("Usage: %s\n"
	       "\n"
	       "Probe every runner of this platform's chain (functionally: "
	       "each one really\n"
	       "confines a short-lived process) and show its verdict and why, "
	       "the runner\n"
	       "'ward run' would choose and its enforcement, the kernel's "
	       "Landlock ABI\n"
	       "and errata, and the bwrap and landlock-run paths.\n"
	       "\n"
	       "With a valid ward.yml, 'chosen' and 'enforcement' are those of "
	       "a call made\n"
	       "here (its plan): enforcement is partial, with every reason, "
	       "when the runner\n"
	       "cannot enforce one of the configured rules.\n"
	       "\n"
	       "Options:\n"
	       "      --json           print one JSON object\n"
	       "  -r, --runner RUNNER  auto (default: the whole chain), bwrap "
	       "or landlock\n"
	       "  -w, --workspace DIR  the workspace of that call (default: "
	       ".)\n"
	       "  -m, --mode MODE      its mode (default: "
	       "ward.yml's)\n" CLI_CONFIG_HELP CLI_NETWORK_HELP
	       "  -h, --help           show this help and exit\n"
	       "\n"
	       "Exit status:\n"
	       "  0    some runner can confine\n"
	       "  2    usage error\n"
	       "  125  no runner can confine (ward run would refuse to run "
	       "commands)\n"
	       "\n"
	       "Examples:\n"
	       "  ward probe\n"
	       "  ward probe --json | jq .chosen\n",
	       probe_usage);
}

static const char *verdict_name(enum ward_verdict v)
{
	switch (v) {
	case WARD_VERDICT_FULL:
		return "full";
	case WARD_VERDICT_PARTIAL:
		return "partial";
	case WARD_VERDICT_UNUSABLE:
		break;
	}
	return "unusable";
}

/* The kernel's Landlock facts, gathered once for both output forms. */
struct ll_facts {
	int abi; /* >= 1, or -errno */
	char abi_error[256];
	int errata_err; /* 0 when errata is valid */
	unsigned errata;
	char errata_error[256];
	bool mounts; /* the launcher can hide paths by mounts */
};

static void get_ll_facts(struct ll_facts *f)
{
	f->abi = ward_probe_landlock_abi();
	if (f->abi < 0)
		snprintf(f->abi_error, sizeof(f->abi_error), "%s",
			 ward_error_last());
	f->mounts = ward_probe_landlock_mounts() == 1;
	f->errata = 0;
	f->errata_err = ward_probe_landlock_errata(&f->errata);
	if (f->errata_err)
		snprintf(f->errata_error, sizeof(f->errata_error), "%s",
			 ward_error_last());
}

/* What a call here would get (its plan), when ward.yml is valid. */
struct call_facts {
	bool have;		 /* a call could be planned */
	char config_error[1024]; /* why not: ward.yml is invalid */
	const char *workspace;
	enum ward_mode mode;
	enum ward_network network;
	char *const *partial;
};

static void print_json(const struct ward_probe_entry *e, size_t n,
		       int select_err, enum ward_runner chosen,
		       enum ward_enforcement enf, const struct ll_facts *ll,
		       ward_provider *provider, const struct call_facts *cf)
{
	json_t *obj = json_object();
	json_t *chain = json_array();
	json_t *llo = json_object();
	json_t *paths = json_object();
	int bad = !obj || !chain || !llo || !paths;

	for (size_t i = 0; !bad && i < n; i++) {
		json_t *c = json_object();

		bad =
		    !c ||
		    json_object_set_new(
			c, "runner",
			json_string(ward_runner_name(e[i].runner))) ||
		    json_object_set_new(
			c, "verdict",
			json_string(verdict_name(e[i].verdict))) ||
		    json_object_set_new(
			c, "usable",
			json_boolean(e[i].verdict != WARD_VERDICT_UNUSABLE)) ||
		    json_object_set_new(c, "probed",
					json_boolean(e[i].probed)) ||
		    json_object_set_new(c, "why", ward_json_str(e[i].why)) ||
		    json_array_append_new(chain, c);
	}
	bad =
	    bad ||
	    json_object_set_new(
		obj, "platform",
		json_string(ward_platform_name(ward_platform_current()))) ||
	    json_object_set_new(obj, "chain", chain) ||
	    json_object_set_new(obj, "chosen",
				select_err
				    ? json_null()
				    : json_string(ward_runner_name(chosen))) ||
	    json_object_set_new(
		obj, "enforcement",
		select_err ? json_null()
			   : json_string(ward_enforcement_name(enf))) ||
	    json_object_set_new(obj, "containment",
				select_err
				    ? json_null()
				    : json_string(ward_runner_containment(
					  chosen, ward_probe_pidns()))) ||
	    json_object_set_new(llo, "abi",
				ll->abi > 0 ? json_integer(ll->abi)
					    : json_null()) ||
	    json_object_set_new(llo, "errata",
				ll->errata_err ? json_null()
					       : json_integer(ll->errata)) ||
	    json_object_set_new(llo, "mounts", json_boolean(ll->mounts)) ||
	    json_object_set_new(llo, "error",
				ll->abi < 0 ? ward_json_str(ll->abi_error)
					    : json_null()) ||
	    json_object_set_new(llo, "network", json_boolean(ll->abi >= 4)) ||
	    json_object_set_new(obj, "landlock", llo) ||
	    json_object_set_new(
		paths, "bwrap",
		ward_json_str(ward_provider_bwrap_path(provider))) ||
	    json_object_set_new(
		paths, "landlock_run",
		ward_json_str(ward_provider_launcher_path(provider))) ||
	    json_object_set_new(obj, "paths", paths) ||
	    json_object_set_new(obj, "partial", ward_json_strv(cf->partial)) ||
	    json_object_set_new(
		obj, "call",
		cf->have ? json_pack("{s:o, s:s, s:s}", "workspace",
				     ward_json_str(cf->workspace), "mode",
				     ward_mode_name(cf->mode), "network",
				     ward_network_name(cf->network))
			 : json_null()) ||
	    json_object_set_new(obj, "config_error",
				cf->config_error[0]
				    ? ward_json_str(cf->config_error)
				    : json_null());
	if (bad)
		die(CLI_EXIT_WARD, "out of memory");
	cli_json_print(obj);
}

static void print_text(const struct ward_probe_entry *e, size_t n,
		       int select_err, const char *select_detail,
		       enum ward_runner chosen, enum ward_enforcement enf,
		       const struct ll_facts *ll, ward_provider *provider,
		       const struct call_facts *cf)
{
	const char *bwrap = ward_provider_bwrap_path(provider);
	const char *launcher = ward_provider_launcher_path(provider);
	struct ward_runner_status bst;
	bool bwrap_no_userns =
	    ward_provider_problem(&bst, provider, WARD_RUNNER_BWRAP) == 0 &&
	    bst.problem == WARD_PROBLEM_NO_USERNS;
	int pidns = ward_probe_pidns();

	printf("platform:      %s\n",
	       ward_platform_name(ward_platform_current()));
	printf("chain:        ");
	for (size_t i = 0; i < n; i++)
		printf(" %s", ward_runner_name(e[i].runner));
	printf("%s\n", n ? "" : " (empty)");
	for (size_t i = 0; i < n; i++) {
		const char *verdict = e[i].verdict == WARD_VERDICT_UNUSABLE
					  ? "unusable"
				      : e[i].verdict == WARD_VERDICT_FULL
					  ? "usable, full enforcement"
					  : "usable, partial enforcement";

		printf("  %-11s %s%s%s%s\n", ward_runner_name(e[i].runner),
		       verdict, e[i].probed ? "" : " (not probed)",
		       e[i].why[0] ? ": " : "", e[i].why);
	}
	if (select_err)
		printf("chosen:        none: %s\n", select_detail);
	else
		printf("chosen:        %s (enforcement: %s)\n",
		       ward_runner_name(chosen), ward_enforcement_name(enf));
	if (!select_err)
		printf("containment:   %s\n",
		       ward_runner_containment(chosen, pidns));
	if (bwrap_no_userns)
		printf("note:          user namespaces are denied here (as in "
		       "a container): bwrap cannot run, Landlock confines "
		       "every call\n");
	if (cf->have)
		printf("for a call:    in %s under %s, network %s (ward.yml "
		       "and flags)\n",
		       cf->workspace, ward_mode_name(cf->mode),
		       ward_network_name(cf->network));
	else if (cf->config_error[0])
		printf("for a call:    unknown: ward.yml is invalid here (%s); "
		       "'ward config check' lists every error\n",
		       cf->config_error);
	for (size_t i = 0; cf->partial && cf->partial[i]; i++)
		printf("  partial: %s\n", cf->partial[i]);
	if (ll->abi > 0)
		printf("landlock ABI:  %d (network: %s)\n", ll->abi,
		       ll->abi >= 4 ? "TCP bind/connect governed"
				    : "TCP not governed: off is enforced by "
				      "refusing inet sockets; an allowlist "
				      "is refused");
	else
		printf("landlock ABI:  none: %s\n", ll->abi_error);
	if (!ll->errata_err)
		printf("landlock errata: 0x%x\n", ll->errata);
	else if (ll->abi > 0)
		printf("landlock errata: not reported (%s)\n",
		       ll->errata_error);
	printf("landlock mounts: %s\n",
	       ll->mounts ? "yes: rules inside the writable roots are hidden "
			    "by mounts in a private namespace"
			  : "no (user namespaces are denied here): rules "
			    "inside the writable roots are carved out of the "
			    "grants, and a call whose carving exceeds its "
			    "budget is refused");
	printf("bwrap:         %s\n", bwrap ? bwrap : "(not found in PATH)");
	printf("landlock-run:  %s\n", launcher ? launcher : "(not found)");
}

const struct cli_option cli_probe_options[] = {
    CLI_OPTION_JSON, CLI_OPTION_RUNNER,	 CLI_OPTION_WORKSPACE,
    CLI_OPTION_MODE, CLI_CONFIG_OPTIONS, CLI_NETWORK_OPTIONS,
    CLI_OPTION_HELP, CLI_OPTION_END,
};

int cmd_probe(int argc, char **argv)
{
	const struct ward_probe_entry *entries = NULL;
	enum ward_runner forced = WARD_RUNNER_NONE;
	enum ward_enforcement enf = WARD_ENFORCEMENT_NONE;
	enum ward_runner chosen = WARD_RUNNER_NONE;
	struct ward_provider_options po = WARD_PROVIDER_OPTIONS_INIT;
	struct cli_policy_opts pol = CLI_POLICY_OPTS_INIT;
	struct ward_config_options co;
	struct call_facts cf;
	ward_provider *provider = NULL;
	ward_config *cfg = NULL;
	ward_policy *here = NULL;
	ward_call *call = NULL;
	char select_detail[512] = "";
	struct ll_facts ll;
	struct cli_getopt g;
	bool json = false;
	size_t n = 0;
	int opt, err, select_err;

	memset(&cf, 0, sizeof(cf));
	cli_getopt_init(&g, cli_probe_options, true, NULL, probe_usage, argc,
			argv);
	while ((opt = cli_getopt_next(&g, argc, argv)) != -1) {
		if (opt != 'r' &&
		    (cli_config_option(&pol, opt, optarg, probe_usage) ||
		     cli_policy_option(&pol, opt, optarg, probe_usage)))
			continue;
		switch (opt) {
		case CLI_OPT_JSON:
			json = true;
			break;
		case 'r':
			forced = cli_parse_runner(optarg, probe_usage);
			break;
		case 'h':
			print_help();
			return CLI_EXIT_OK;
		default:
			die_getopt(probe_usage, opt, argc, argv);
		}
	}
	if (optind < argc)
		die_usage(probe_usage, "unexpected argument '%s'",
			  argv[optind]);

	/* ward.yml as a call here sees it; invalid, it is only noted (probe
	 * is what people run to see what is wrong). */
	if (ward_config_new(&cfg) != 0)
		die(CLI_EXIT_WARD, "%s", ward_error_last());
	cli_config_options(&co, &pol);
	err = ward_config_load(cfg, &co);
	if (err == -ENOMEM)
		die(CLI_EXIT_WARD, "out of memory");
	if (err) {
		snprintf(cf.config_error, sizeof(cf.config_error), "%s",
			 ward_config_error_count(cfg)
			     ? ward_config_error(cfg, 0, NULL)
			     : ward_error_last());
		ward_config_free(cfg);
		cfg = NULL;
	} else {
		ward_config_provider_options(&po, cfg);
	}
	/* Probe afresh (the verdicts kept across processes are refreshed,
	 * not read): this is the command people run to see why. */
	po.no_probe_cache = true;
	err = ward_provider_new(&provider, &po);
	if (err)
		die(CLI_EXIT_WARD, "%s", ward_error_last());
	if (forced != WARD_RUNNER_NONE) {
		err = ward_provider_force(provider, forced);
		if (err)
			die_usage(probe_usage, "runner '%s': %s",
				  ward_runner_name(forced), ward_error_last());
	}
	/*
	 * Probing executes the runner binaries: a bwrap reached through PATH
	 * inside the current directory or a temporary directory (where a
	 * confined run may have planted it) is refused first, never run.
	 */
	if (ward_policy_new(&here, WARD_MODE_WORKSPACE_WRITE, ".") == 0) {
		(void)ward_provider_select_for(provider, here, NULL, NULL);
		ward_policy_free(here);
	}
	err = ward_provider_report(&entries, &n, provider);
	if (err)
		die(CLI_EXIT_WARD, "cannot probe the runners: %s",
		    ward_error_last());
	select_err = ward_provider_select(provider, &chosen, &enf);
	if (select_err)
		snprintf(select_detail, sizeof(select_detail), "%s",
			 *ward_error_last() ? ward_error_last()
					    : ward_strerror(select_err));
	/* A call here: its plan decides the runner and the enforcement. */
	if (cfg && !select_err) {
		struct ward_call_options wo = WARD_CALL_OPTIONS_INIT;
		char *argv0[] = {"true", NULL};
		const ward_plan *plan;

		wo.config = cfg;
		wo.provider = provider;
		wo.argv = argv0;
		wo.surface = WARD_SURFACE_CLI;
		if (ward_call_new(&call, &wo) == 0 &&
		    (plan = ward_call_plan(call)) != NULL) {
			cf.have = true;
			cf.workspace = ward_config_workspace(cfg, NULL);
			cf.mode = ward_call_mode(call);
			cf.network = ward_call_network(call);
			cf.partial = ward_plan_partial(plan);
			chosen = ward_plan_runner(plan);
			enf = ward_plan_enforcement(plan);
		}
	}
	get_ll_facts(&ll);

	if (json)
		print_json(entries, n, select_err, chosen, enf, &ll, provider,
			   &cf);
	else
		print_text(entries, n, select_err, select_detail, chosen, enf,
			   &ll, provider, &cf);

	if (select_err && !json) {
		char hint[512];

		fflush(stdout);
		fprintf(stderr, "ward probe: no runner can confine; 'ward run' "
				"would refuse to run commands\n");
		for (size_t i = 0; i < n; i++)
			if (entries[i].verdict == WARD_VERDICT_UNUSABLE)
				fprintf(stderr, "Hint: %s\n",
					cli_runner_hint(hint, sizeof(hint),
							entries[i].runner,
							provider));
	}
	ward_call_free(call);
	ward_provider_free(provider);
	ward_config_free(cfg);
	cli_setup_free(NULL, &pol);
	return select_err ? CLI_EXIT_WARD : CLI_EXIT_OK;
}
