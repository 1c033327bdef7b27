/*
 * Unit tests for the network knob: network.c (names, defaults, patterns),
 * the policy's network (set, with_mode following the mode, with_network),
 * ward.yml's network / allow_domains / deny_domains and the flag layer
 * (precedence, the project file only narrowing, contradictions), the
 * session's sandbox/network fold, network escalation's "strictly wider"
 * and its texts, and the Landlock network plan (a refused allowlist below
 * ABI 4 cannot be tested here: this kernel has ABI >= 4, checked live by
 * tests/e2e/network.bats).
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ward/ward.h"

static char ws[64];

static int setup(void **state)
{
	(void)state;
	snprintf(ws, sizeof(ws), "/var/tmp/ward-test-net.XXXXXX");
	return mkdtemp(ws) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", ws);
	return system(cmd) == 0 ? 0 : -1;
}

/* A configuration from a user file, a project file and flags. */
static ward_config *load(int *err, const char *user, const char *project,
			 const char *net_flag, const char *const *allow,
			 size_t nallow)
{
	struct ward_config_options o = WARD_CONFIG_OPTIONS_INIT;
	ward_config *cfg = NULL;

	assert_int_equal(ward_config_new(&cfg), 0);
	if (user)
		ward_config_add_string(cfg, WARD_CONFIG_LAYER_USER, "user.yml",
				       user, strlen(user));
	if (project)
		ward_config_add_string(cfg, WARD_CONFIG_LAYER_PROJECT,
				       "project.yml", project, strlen(project));
	o.workspace = ws;
	o.network = net_flag;
	o.allow_domains = allow;
	o.allow_domains_len = nallow;
	*err = ward_config_resolve(cfg, &o);
	return cfg;
}

static bool has_warning(const ward_config *cfg, const char *needle)
{
	for (size_t i = 0; i < ward_config_warning_count(cfg); i++)
		if (strstr(ward_config_warning(cfg, i), needle))
			return true;
	return false;
}

static void test_names(void **state)
{
	enum ward_network n;

	(void)state;
	assert_int_equal(ward_network_parse(&n, "off"), 0);
	assert_int_equal(n, WARD_NETWORK_OFF);
	assert_int_equal(ward_network_parse(&n, "on"), 0);
	assert_int_equal(n, WARD_NETWORK_ON);
	assert_int_equal(ward_network_parse(&n, "allowlist"), WARD_EINVAL);
	assert_int_equal(ward_network_parse(&n, "On"), WARD_EINVAL);
	assert_string_equal(ward_network_name(WARD_NETWORK_ALLOWLIST),
			    "allowlist");
	assert_int_equal(ward_network_default(WARD_MODE_READ_ONLY),
			 WARD_NETWORK_OFF);
	assert_int_equal(ward_network_default(WARD_MODE_WORKSPACE_WRITE),
			 WARD_NETWORK_OFF);
	assert_int_equal(ward_network_default(WARD_MODE_DANGER_FULL_ACCESS),
			 WARD_NETWORK_ON);
	assert_int_equal(ward_network_pattern_check("*.npmjs.org"), 0);
	assert_int_equal(ward_network_pattern_check("*"), WARD_EINVAL);
	assert_int_equal(ward_network_pattern_check("http://x.org"),
			 WARD_EINVAL);
	/* A URL, a port or a path where a host is expected: the host to
	 * write instead, not what the address parser made of it. */
	assert_int_equal(ward_network_pattern_check("http://x.org/"),
			 WARD_EINVAL);
	assert_string_equal(ward_error_last(),
			    "domain pattern \"http://x.org/\" is a URL: a "
			    "domain pattern is a host name only (any port and "
			    "path of an allowed host are allowed); write "
			    "\"x.org\"");
	assert_int_equal(
	    ward_network_pattern_check("https://me@x.org:8443/a?b"),
	    WARD_EINVAL);
	assert_non_null(strstr(ward_error_last(), "write \"x.org\""));
	assert_int_equal(ward_network_pattern_check("x.org:443"), WARD_EINVAL);
	assert_non_null(strstr(ward_error_last(), "has a port"));
	assert_non_null(strstr(ward_error_last(), "write \"x.org\""));
	assert_int_equal(ward_network_pattern_check("x.org/api"), WARD_EINVAL);
	assert_non_null(strstr(ward_error_last(), "has a path"));
	assert_null(strstr(ward_error_last(), "IPv6"));
	assert_int_equal(ward_network_pattern_check("::1"), 0);
	assert_int_equal(ward_network_pattern_check("[::1]"), 0);
}

static void test_policy(void **state)
{
	char *allow[] = {"example.com", "*.npmjs.org", NULL};
	char *deny[] = {"bad.npmjs.org", NULL};
	char *bad[] = {"*", NULL};
	ward_policy *p, *q, *r;

	(void)state;
	assert_int_equal(ward_policy_new(&p, WARD_MODE_READ_ONLY, ws), 0);
	assert_int_equal(ward_policy_network(p), WARD_NETWORK_OFF);
	assert_true(ward_policy_network_default(p));
	/* A default network follows the mode. */
	assert_int_equal(
	    ward_policy_with_mode(&q, p, WARD_MODE_DANGER_FULL_ACCESS), 0);
	assert_int_equal(ward_policy_network(q), WARD_NETWORK_ON);
	ward_policy_free(q);
	assert_int_equal(
	    ward_policy_set_network(p, WARD_NETWORK_ALLOWLIST, NULL, NULL),
	    WARD_EINVAL);
	assert_int_equal(
	    ward_policy_set_network(p, WARD_NETWORK_ALLOWLIST, bad, NULL),
	    WARD_EINVAL);
	assert_int_equal(
	    ward_policy_set_network(p, WARD_NETWORK_ALLOWLIST, allow, deny), 0);
	assert_false(ward_policy_network_default(p));
	/* A chosen network does not follow the mode; the lists are kept. */
	assert_int_equal(
	    ward_policy_with_mode(&q, p, WARD_MODE_DANGER_FULL_ACCESS), 0);
	assert_int_equal(ward_policy_network(q), WARD_NETWORK_ALLOWLIST);
	assert_string_equal(ward_policy_allow_domains(q)[1], "*.npmjs.org");
	assert_string_equal(ward_policy_deny_domains(q)[0], "bad.npmjs.org");
	/* with_network adds a host once, keeps the denylist. */
	assert_int_equal(ward_policy_with_network(
			     &r, p, WARD_NETWORK_ALLOWLIST,
			     (char *[]){"registry.local", "example.com", NULL}),
			 0);
	assert_int_equal(ward_strv_len(ward_policy_allow_domains(r)), 3);
	assert_string_equal(ward_policy_allow_domains(r)[2], "registry.local");
	assert_string_equal(ward_policy_deny_domains(r)[0], "bad.npmjs.org");
	assert_int_equal(ward_strv_len(ward_policy_allow_domains(p)), 2);
	ward_policy_free(r);
	ward_policy_free(q);
	ward_policy_free(p);
}

static void test_config_layers(void **state)
{
	const char *flags[] = {"b.example"};
	ward_config *cfg;
	bool set;
	int err;

	(void)state;
	/* Nothing set: the mode's default. */
	cfg = load(&err, NULL, NULL, NULL, NULL, 0);
	assert_int_equal(err, 0);
	assert_int_equal(
	    ward_config_network(cfg, WARD_MODE_READ_ONLY, &set, NULL),
	    WARD_NETWORK_OFF);
	assert_false(set);
	assert_int_equal(
	    ward_config_network(cfg, WARD_MODE_DANGER_FULL_ACCESS, NULL, NULL),
	    WARD_NETWORK_ON);
	ward_config_free(cfg);
	/* allow_domains alone: an allowlist; flags add to it. */
	cfg = load(&err, "allow_domains: [a.example]\n", NULL, NULL, flags, 1);
	assert_int_equal(err, 0);
	assert_int_equal(
	    ward_config_network(cfg, WARD_MODE_READ_ONLY, &set, NULL),
	    WARD_NETWORK_ALLOWLIST);
	assert_true(set);
	assert_string_equal(ward_config_allow_domains(cfg)[0], "a.example");
	assert_string_equal(ward_config_allow_domains(cfg)[1], "b.example");
	ward_config_free(cfg);
	/* network wins over allow_domains in its layer; --network over all. */
	cfg = load(&err, "network: off\nallow_domains: [a.example]\n", NULL,
		   NULL, NULL, 0);
	assert_int_equal(
	    ward_config_network(cfg, WARD_MODE_READ_ONLY, NULL, NULL),
	    WARD_NETWORK_OFF);
	ward_config_free(cfg);
	cfg = load(&err, "network: off\n", NULL, "on", NULL, 0);
	assert_int_equal(err, 0);
	assert_int_equal(
	    ward_config_network(cfg, WARD_MODE_READ_ONLY, NULL, NULL),
	    WARD_NETWORK_ON);
	ward_config_free(cfg);
	/* --network with --allow-domain contradict. */
	cfg = load(&err, NULL, NULL, "off", flags, 1);
	assert_int_equal(err, WARD_EINVAL);
	assert_non_null(strstr(ward_config_error(cfg, 0, NULL), "contradict"));
	ward_config_free(cfg);
	/* Errors name the key and the bad value. */
	cfg = load(&err, "network: maybe\n", NULL, NULL, NULL, 0);
	assert_int_equal(err, WARD_EINVAL);
	assert_non_null(strstr(ward_config_error(cfg, 0, NULL),
			       "user.yml:1: network: invalid network"));
	ward_config_free(cfg);
	cfg = load(&err, "allow_domains: [\"*\"]\n", NULL, NULL, NULL, 0);
	assert_int_equal(err, WARD_EINVAL);
	assert_non_null(strstr(ward_config_error(cfg, 0, NULL),
			       "user.yml:1: allow_domains"));
	ward_config_free(cfg);
	cfg = load(&err, "deny_domains: x.example\n", NULL, NULL, NULL, 0);
	assert_int_equal(err, WARD_EINVAL);
	ward_config_free(cfg);
}

static void test_config_project_narrows(void **state)
{
	ward_config *cfg;
	int err;

	(void)state;
	/* network: on in a project file is ignored (a ceiling). */
	cfg = load(&err, NULL, "network: on\n", NULL, NULL, 0);
	assert_int_equal(err, 0);
	assert_int_equal(
	    ward_config_network(cfg, WARD_MODE_READ_ONLY, NULL, NULL),
	    WARD_NETWORK_OFF);
	assert_true(ward_config_ignored_count(cfg) >= 1);
	ward_config_free(cfg);
	/* Domains nobody below allows are ignored: off stays off. */
	cfg =
	    load(&err, NULL, "allow_domains: [evil.example]\n", NULL, NULL, 0);
	assert_int_equal(err, 0);
	assert_int_equal(
	    ward_config_network(cfg, WARD_MODE_READ_ONLY, NULL, NULL),
	    WARD_NETWORK_OFF);
	assert_true(has_warning(cfg, "evil.example"));
	ward_config_free(cfg);
	/* Narrowing an allowlist keeps what both allow. */
	cfg = load(&err, "allow_domains: [a.example, b.example]\n",
		   "allow_domains: [b.example, c.example]\n"
		   "deny_domains: [d.example]\n",
		   NULL, NULL, 0);
	assert_int_equal(err, 0);
	assert_int_equal(
	    ward_config_network(cfg, WARD_MODE_READ_ONLY, NULL, NULL),
	    WARD_NETWORK_ALLOWLIST);
	assert_int_equal(ward_strv_len(ward_config_allow_domains(cfg)), 1);
	assert_string_equal(ward_config_allow_domains(cfg)[0], "b.example");
	assert_string_equal(ward_config_deny_domains(cfg)[0], "d.example");
	assert_true(has_warning(cfg, "c.example"));
	ward_config_free(cfg);
	/* From on to a list narrows; off in the project always applies. */
	cfg = load(&err, "network: on\n", "allow_domains: [x.example]\n", NULL,
		   NULL, 0);
	assert_int_equal(
	    ward_config_network(cfg, WARD_MODE_READ_ONLY, NULL, NULL),
	    WARD_NETWORK_ALLOWLIST);
	ward_config_free(cfg);
	cfg = load(&err, "network: on\n", "network: off\n", NULL, NULL, 0);
	assert_int_equal(
	    ward_config_network(cfg, WARD_MODE_READ_ONLY, NULL, NULL),
	    WARD_NETWORK_OFF);
	ward_config_free(cfg);
}

static void test_escalation_wider(void **state)
{
	ward_policy *p;

	(void)state;
	assert_int_equal(ward_policy_new(&p, WARD_MODE_READ_ONLY, ws), 0);
	/* off: any host or on widens. */
	assert_true(ward_escalation_network_is_wider(p, "a.example"));
	assert_true(ward_escalation_network_is_wider(p, NULL));
	assert_int_equal(
	    ward_policy_set_network(p, WARD_NETWORK_ALLOWLIST,
				    (char *[]){"*.example", NULL},
				    (char *[]){"bad.example", NULL}),
	    0);
	/* Already allowed (by a wildcard), or denied: nothing to widen. */
	assert_false(ward_escalation_network_is_wider(p, "a.example"));
	assert_false(ward_escalation_network_is_wider(p, "bad.example"));
	assert_true(ward_escalation_network_is_wider(p, "example"));
	assert_true(ward_escalation_network_is_wider(p, "other.org"));
	assert_true(ward_escalation_network_is_wider(p, NULL));
	assert_false(ward_escalation_network_is_wider(p, "no thing"));
	assert_int_equal(
	    ward_policy_set_network(p, WARD_NETWORK_ON, NULL, NULL), 0);
	assert_false(ward_escalation_network_is_wider(p, "other.org"));
	assert_false(ward_escalation_network_is_wider(p, NULL));
	ward_policy_free(p);
}

static enum ward_approval_outcome
answer_no(void *ctx, const struct ward_approval_request *r)
{
	(void)ctx;
	assert_true(r->network);
	assert_string_equal(r->net_host, "reg.example");
	assert_int_equal(r->net_current, WARD_NETWORK_OFF);
	return WARD_APPROVAL_REJECTED;
}

static enum ward_approval_outcome
answer_yes(void *ctx, const struct ward_approval_request *r)
{
	(void)ctx;
	(void)r;
	return WARD_APPROVAL_ALLOWED_ONCE;
}

static void test_escalation_authorize(void **state)
{
	struct ward_escalation e = WARD_ESCALATION_INIT;
	enum ward_escalation_verdict v;
	ward_policy *p, *g = NULL;
	char *text = NULL;

	(void)state;
	assert_int_equal(ward_policy_new(&p, WARD_MODE_WORKSPACE_WRITE, ws), 0);
	e.network = true;
	e.net_host = "reg.example";
	e.justification = "the package registry";
	e.approve = answer_no;
	assert_int_equal(ward_escalation_authorize(&g, &v, p, &e), 0);
	assert_int_equal(v, WARD_ESCALATION_REJECTED);
	assert_null(g);
	e.approve = answer_yes;
	assert_int_equal(ward_escalation_authorize(&g, &v, p, &e), 0);
	assert_int_equal(v, WARD_ESCALATION_GRANTED);
	assert_non_null(g);
	/* The grant widens the network and nothing else; the base stays. */
	assert_int_equal(ward_policy_network(g), WARD_NETWORK_ALLOWLIST);
	assert_string_equal(ward_policy_allow_domains(g)[0], "reg.example");
	assert_int_equal(ward_policy_mode(g), WARD_MODE_WORKSPACE_WRITE);
	assert_int_equal(ward_policy_network(p), WARD_NETWORK_OFF);
	/* The granted call asks again: not wider, nobody asked. */
	e.approve = answer_no;
	{
		ward_policy *g2 = NULL;

		assert_int_equal(ward_escalation_authorize(&g2, &v, g, &e), 0);
		assert_int_equal(v, WARD_ESCALATION_NOT_WIDER);
		assert_null(g2);
	}
	ward_policy_free(g);
	/* A pattern is not a host. */
	e.net_host = "*.example";
	assert_int_equal(ward_escalation_authorize(&g, &v, p, &e), WARD_EINVAL);
	/* Texts: each verdict its own. */
	assert_int_equal(ward_render_network_verdict(
			     &text, WARD_SURFACE_MCP, WARD_ESCALATION_REJECTED,
			     WARD_SUBJECT_COMMAND, "network access to x.org"),
			 0);
	assert_string_equal(
	    text, "the user rejected network access to x.org for this command");
	free(text);
	assert_int_equal(ward_render_network_verdict(
			     &text, WARD_SURFACE_MCP, WARD_ESCALATION_GRANTED,
			     WARD_SUBJECT_COMMAND, "network access to x.org"),
			 0);
	assert_string_equal(
	    text, "network access to x.org was granted for this command only");
	free(text);
	assert_int_equal(ward_render_network_denied(&text, "x.org"), 0);
	assert_string_equal(text, "[sandbox: network access to x.org denied]");
	free(text);
	ward_policy_free(p);
}

static void test_session_knob(void **state)
{
	char store[128];
	ward_session *s;
	bool changed;
	enum ward_knob_source src;

	(void)state;
	snprintf(store, sizeof(store), "%s/store", ws);
	assert_int_equal(ward_session_create(&s, store, NULL), 0);
	assert_int_equal(ward_session_network(s, WARD_NETWORK_ALLOWLIST, &src),
			 WARD_NETWORK_ALLOWLIST);
	assert_int_equal(src, WARD_KNOB_DEFAULT);
	assert_int_equal(ward_session_set_network(&changed, s,
						  WARD_NETWORK_ALLOWLIST,
						  WARD_NETWORK_OFF),
			 WARD_EINVAL);
	assert_int_equal(ward_session_set_network(&changed, s, WARD_NETWORK_OFF,
						  WARD_NETWORK_OFF),
			 0);
	assert_false(changed);
	assert_int_equal(ward_session_set_network(&changed, s, WARD_NETWORK_ON,
						  WARD_NETWORK_OFF),
			 0);
	assert_true(changed);
	assert_int_equal(ward_session_network(s, WARD_NETWORK_OFF, &src),
			 WARD_NETWORK_ON);
	assert_int_equal(src, WARD_KNOB_SESSION);
	/* Knob events only through the setter. */
	assert_int_equal(
	    ward_session_append_json(
		s, "{\"type\":\"sandbox/network\",\"network\":\"off\"}"),
	    WARD_EINVAL);
	ward_session_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_names),
	    cmocka_unit_test(test_policy),
	    cmocka_unit_test(test_config_layers),
	    cmocka_unit_test(test_config_project_narrows),
	    cmocka_unit_test(test_escalation_wider),
	    cmocka_unit_test(test_escalation_authorize),
	    cmocka_unit_test(test_session_knob),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
