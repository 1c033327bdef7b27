/*
 * fuzz_config — libFuzzer target for config.c, config_parse.c and
 * config_schema.c (libyaml's event parser, in-process as in every ward
 * build, the schema walk, the layers and their resolution, and rules.c
 * beneath).
 *
 * Input: USER FILE [ '\0' PROJECT FILE ]. Both are parsed from memory as
 * their layers ("user.yml", "project.yml") and resolved with the workspace
 * "/" and a fixed environment. Then:
 *   - the load fails exactly when errors were listed; every error names
 *     one of the two files (or a flag), and the first one is the detail;
 *   - a valid configuration never lets the project file widen: its rules
 *     are r-/-- only, the keys it may not set come from elsewhere, its
 *     approval is "ask", its protect_git is true, and the mode is no wider
 *     than the same user file alone gives;
 *   - the accessors and ward_config_check_confine() hold up.
 *
 * Build: make build/fuzz/fuzz_config (the whole library, and libyaml.a,
 * the archive a static ward links).
 * Run:   build/fuzz/fuzz_config -max_total_time=60 \
 *          -dict=tests/fuzz/corpus/config.dict \
 *          build/fuzz/corpus_config tests/fuzz/corpus/config
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ward/config.h"
#include "ward/ward.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *fz_getenv(void *ctx, const char *name)
{
	(void)ctx;
	if (strcmp(name, "A") == 0)
		return "/va";
	if (strcmp(name, "EMPTY") == 0)
		return "";
	return NULL;
}

static const struct ward_rules_env ENV = {
    .workspace = NULL,
    .home = "/h",
    .getenv = fz_getenv,
};

static ward_config *load(int *err, const char *user, size_t ul,
			 const char *proj, size_t pl)
{
	struct ward_config_options o = WARD_CONFIG_OPTIONS_INIT;
	ward_config *cfg = NULL;
	int e = 0, r;

	if (ward_config_new(&cfg) != 0)
		return NULL;
	e = ward_config_add_string(cfg, WARD_CONFIG_LAYER_USER, "user.yml",
				   user, ul);
	if (proj) {
		r = ward_config_add_string(cfg, WARD_CONFIG_LAYER_PROJECT,
					   "project.yml", proj, pl);
		e = e ? e : r;
	}
	o.workspace = "/";
	o.env = &ENV;
	r = ward_config_resolve(cfg, &o);
	*err = e ? e : r;
	return cfg;
}

static void check_errors(const ward_config *cfg, int err)
{
	size_t n = ward_config_error_count(cfg);

	if ((err == 0) != (n == 0)) {
		fprintf(stderr, "return %d but %zu errors\n", err, n);
		abort();
	}
	if (err != 0 && err != WARD_EINVAL && err != -ENOMEM)
		abort();
	for (size_t i = 0; i < n; i++) {
		struct ward_config_origin o;
		const char *e = ward_config_error(cfg, i, &o);

		if (!e || !*e)
			abort();
		if (strncmp(e, "user.yml", 8) != 0 &&
		    strncmp(e, "project.yml", 11) != 0 &&
		    strncmp(e, "--", 2) != 0) {
			fprintf(stderr, "error names no file: %s\n", e);
			abort();
		}
		if (o.file && strncmp(e, o.file, strlen(o.file)) != 0)
			abort();
	}
	if (ward_config_error(cfg, n, NULL) != NULL)
		abort();
}

static void check_narrowing(const ward_config *cfg, const char *user, size_t ul)
{
	const ward_rules *rules = ward_config_rules(cfg);
	struct ward_config_origin o;
	const enum ward_runner *chain;
	ward_config *alone;
	int err;

	for (size_t i = 0; i < ward_rules_count(rules); i++) {
		struct ward_rule_info in;

		if (ward_rules_get(&in, rules, i) != 0)
			abort();
		if (in.origin.file &&
		    strcmp(in.origin.file, "project.yml") == 0 &&
		    in.access == WARD_ACCESS_RW) {
			fprintf(stderr, "project rw rule: %s\n", in.source);
			abort();
		}
	}
#define NOT_PROJECT(call)                                                      \
	do {                                                                   \
		(void)(call);                                                  \
		if (o.layer == WARD_CONFIG_LAYER_PROJECT)                      \
			abort();                                               \
	} while (0)
	NOT_PROJECT(ward_config_workspace(cfg, &o));
	NOT_PROJECT(ward_config_runners(&chain, cfg, &o));
	NOT_PROJECT(ward_config_runner_command(cfg, &o));
	NOT_PROJECT(ward_config_runner_failure_signatures(cfg, &o));
	NOT_PROJECT(ward_config_probe_timeout_ms(cfg, &o));
#undef NOT_PROJECT
	if (ward_config_approval(cfg, &o) == WARD_APPROVAL_NEVER &&
	    o.layer == WARD_CONFIG_LAYER_PROJECT)
		abort();
	if (!ward_config_protect_git(cfg, &o) &&
	    o.layer != WARD_CONFIG_LAYER_USER)
		abort();
	for (size_t i = 0; i < ward_config_preset_count(cfg); i++) {
		struct ward_config_preset p;

		if (ward_config_preset(&p, cfg, i) != 0 ||
		    p.origin.layer == WARD_CONFIG_LAYER_PROJECT)
			abort();
	}
	/* The mode is no wider than the user file alone gives. */
	alone = load(&err, user, ul, NULL, 0);
	if (alone && err == 0 &&
	    ward_mode_is_wider(ward_config_mode(cfg, NULL),
			       ward_config_mode(alone, NULL))) {
		fprintf(stderr, "the project file widened the mode\n");
		abort();
	}
	ward_config_free(alone);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	const uint8_t *z = memchr(data, 0, size);
	size_t ul = z ? (size_t)(z - data) : size;
	const char *proj = z ? text + ul + 1 : NULL;
	size_t pl = z ? size - ul - 1 : 0;
	struct ward_provider_options po = WARD_PROVIDER_OPTIONS_INIT;
	ward_config *cfg;
	int err;

	cfg = load(&err, text, ul, proj, pl);
	if (!cfg)
		return 0;
	check_errors(cfg, err);
	if (err == 0) {
		if (!ward_config_rules(cfg) || !ward_config_presets(cfg) ||
		    !ward_config_workspace(cfg, NULL))
			abort();
		check_narrowing(cfg, text, ul);
		ward_config_provider_options(&po, cfg);
		if (ward_config_check_confine(cfg) != 0 &&
		    (!ward_config_runner_command(cfg, NULL) ||
		     ward_rules_count(ward_config_rules(cfg)) == 0))
			abort();
		for (size_t i = 0; i < ward_config_warning_count(cfg); i++)
			if (!*ward_config_warning(cfg, i))
				abort();
	}
	ward_config_free(cfg);
	return 0;
}
