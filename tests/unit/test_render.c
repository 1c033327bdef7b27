/*
 * Unit tests for src/libward/render.c: every model-facing text, exactly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ward/ward.h"

static const enum ward_mode MODES[] = {
    WARD_MODE_READ_ONLY,
    WARD_MODE_WORKSPACE_WRITE,
    WARD_MODE_DANGER_FULL_ACCESS,
};

static const enum ward_escalation_verdict REFUSALS[] = {
    WARD_ESCALATION_NOT_WIDER,	  WARD_ESCALATION_NO_SERVICE,
    WARD_ESCALATION_POLICY_NEVER, WARD_ESCALATION_REJECTED,
    WARD_ESCALATION_CANCELLED,	  WARD_ESCALATION_UNAVAILABLE,
};

#define N_REFUSALS (sizeof(REFUSALS) / sizeof(REFUSALS[0]))

static char *verdict(enum ward_escalation_verdict v, enum ward_subject s,
		     enum ward_mode m)
{
	char *text = NULL;

	assert_int_equal(ward_render_verdict(&text, v, s, m), 0);
	assert_non_null(text);
	return text;
}

static void test_marker(void **state)
{
	(void)state;
	assert_string_equal(ward_render_marker(WARD_MODE_READ_ONLY),
			    "[sandbox: file access denied under read-only "
			    "mode]");
	assert_string_equal(ward_render_marker(WARD_MODE_WORKSPACE_WRITE),
			    "[sandbox: file access denied under "
			    "workspace-write mode]");
	assert_string_equal(ward_render_marker(WARD_MODE_DANGER_FULL_ACCESS),
			    "[sandbox: file access denied under "
			    "danger-full-access mode]");
	assert_string_equal(ward_render_marker((enum ward_mode)9),
			    "[sandbox: file access denied under unknown "
			    "mode]");
	/* The marker spells the mode as ward_mode_name does. */
	for (size_t i = 0; i < 3; i++) {
		char want[128];

		snprintf(want, sizeof(want),
			 "[sandbox: file access denied under %s mode]",
			 ward_mode_name(MODES[i]));
		assert_string_equal(ward_render_marker(MODES[i]), want);
	}
}

static void test_hint_and_denial(void **state)
{
	char *text = NULL;

	(void)state;
	assert_string_equal(
	    ward_render_hint(WARD_SUBJECT_COMMAND),
	    "retry this exact command once with sandbox_permissions (the "
	    "narrowest wider mode that suffices) + justification; the "
	    "approval prompt asks the user");
	assert_string_equal(
	    ward_render_hint(WARD_SUBJECT_OPERATION),
	    "retry this exact operation once with sandbox_permissions (the "
	    "narrowest wider mode that suffices) + justification; the "
	    "approval prompt asks the user");
	assert_int_equal(ward_render_denial(&text, WARD_MODE_READ_ONLY,
					    WARD_SUBJECT_COMMAND, false),
			 0);
	assert_string_equal(text,
			    "[sandbox: file access denied under read-only "
			    "mode]");
	free(text);
	assert_int_equal(ward_render_denial(&text, WARD_MODE_READ_ONLY,
					    WARD_SUBJECT_COMMAND, true),
			 0);
	assert_string_equal(
	    text, "[sandbox: file access denied under read-only mode]\n"
		  "retry this exact command once with sandbox_permissions "
		  "(the narrowest wider mode that suffices) + "
		  "justification; the approval prompt asks the user");
	free(text);
}

/* The fence's renderer is this module's, not a copy. */
static void test_fsfence_uses_render(void **state)
{
	struct ward_fs_denial d = {0};
	char *a = NULL, *b = NULL;

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		d.mode = MODES[i];
		d.reason = WARD_FS_DENIED_OUTSIDE_ROOTS;
		for (int offered = 0; offered < 2; offered++) {
			assert_int_equal(ward_fs_render_denial(&a, &d, offered),
					 0);
			assert_int_equal(
			    ward_render_denial(&b, d.mode,
					       WARD_SUBJECT_OPERATION, offered),
			    0);
			assert_string_equal(a, b);
			free(a);
			free(b);
		}
	}
}

static void test_verdict_texts_exact(void **state)
{
	char *t;

	(void)state;
	/* From the design (seed 000), exactly. */
	t = verdict(WARD_ESCALATION_REJECTED, WARD_SUBJECT_COMMAND,
		    WARD_MODE_WORKSPACE_WRITE);
	assert_string_equal(t, "the user rejected escalating this command to "
			       "\"workspace-write\"");
	free(t);
	t = verdict(WARD_ESCALATION_REJECTED, WARD_SUBJECT_OPERATION,
		    WARD_MODE_DANGER_FULL_ACCESS);
	assert_string_equal(t, "the user rejected escalating this operation to "
			       "\"danger-full-access\"");
	free(t);

	/* ward's own wording, pinned. */
	t = verdict(WARD_ESCALATION_NOT_WIDER, WARD_SUBJECT_COMMAND,
		    WARD_MODE_READ_ONLY);
	assert_string_equal(
	    t, "sandbox_permissions \"read-only\" is not wider than the mode "
	       "this command already runs under; nothing was run and nobody "
	       "was asked; retry without sandbox_permissions");
	free(t);
	t = verdict(WARD_ESCALATION_NO_SERVICE, WARD_SUBJECT_COMMAND,
		    WARD_MODE_WORKSPACE_WRITE);
	assert_string_equal(
	    t, "escalation is not available: no approval service is "
	       "configured, so nobody can approve running this command under "
	       "\"workspace-write\"; nothing was run");
	free(t);
	t = verdict(WARD_ESCALATION_POLICY_NEVER, WARD_SUBJECT_OPERATION,
		    WARD_MODE_WORKSPACE_WRITE);
	assert_string_equal(
	    t, "escalating this operation to \"workspace-write\" was refused "
	       "automatically: the approval policy is \"never\"; nothing was "
	       "run");
	free(t);
	t = verdict(WARD_ESCALATION_CANCELLED, WARD_SUBJECT_COMMAND,
		    WARD_MODE_WORKSPACE_WRITE);
	assert_string_equal(
	    t, "the approval request for escalating this command to "
	       "\"workspace-write\" was cancelled before the user decided; "
	       "nothing was run");
	free(t);
	t = verdict(WARD_ESCALATION_UNAVAILABLE, WARD_SUBJECT_COMMAND,
		    WARD_MODE_WORKSPACE_WRITE);
	assert_string_equal(
	    t, "approval for escalating this command to \"workspace-write\" "
	       "is unavailable: nobody could be asked; nothing was run");
	free(t);

	/* Granted has nothing to say. */
	t = NULL;
	assert_int_equal(ward_render_verdict(&t, WARD_ESCALATION_GRANTED,
					     WARD_SUBJECT_COMMAND,
					     WARD_MODE_WORKSPACE_WRITE),
			 WARD_EINVAL);
	assert_null(t);
	assert_int_equal(
	    ward_render_verdict(&t, (enum ward_escalation_verdict)42,
				WARD_SUBJECT_COMMAND, WARD_MODE_READ_ONLY),
	    WARD_EINVAL);
}

/* Every refusal is distinct, names the mode and the subject, and (but for
 * the design's rejected text) says nothing ran. */
static void test_verdict_texts_distinct(void **state)
{
	char *texts[N_REFUSALS * 2];
	size_t k = 0;

	(void)state;
	for (int s = 0; s < 2; s++) {
		for (size_t i = 0; i < N_REFUSALS; i++) {
			char *t = verdict(REFUSALS[i], (enum ward_subject)s,
					  WARD_MODE_WORKSPACE_WRITE);

			assert_non_null(strstr(t, "\"workspace-write\""));
			assert_non_null(
			    strstr(t, s ? "this operation" : "this command"));
			assert_null(strstr(t, s ? "command" : "operation"));
			assert_null(strchr(t, '\n'));
			if (REFUSALS[i] != WARD_ESCALATION_REJECTED)
				assert_non_null(strstr(t, "nothing was run"));
			texts[k++] = t;
		}
	}
	for (size_t i = 0; i < k; i++) {
		for (size_t j = i + 1; j < k; j++)
			assert_string_not_equal(texts[i], texts[j]);
	}
	for (size_t i = 0; i < k; i++)
		free(texts[i]);
}

static void test_unavailable(void **state)
{
	char *t = NULL;

	(void)state;
	assert_int_equal(ward_render_unavailable(&t, WARD_SUBJECT_COMMAND,
						 "no runner can confine"),
			 0);
	assert_string_equal(t, "the sandbox is unavailable: no runner can "
			       "confine; ward is refusing to run this command "
			       "unconfined");
	free(t);
	assert_int_equal(
	    ward_render_unavailable(&t, WARD_SUBJECT_OPERATION, NULL), 0);
	assert_string_equal(t, "the sandbox is unavailable; ward is refusing "
			       "to run this operation unconfined");
	free(t);
}

static void assert_no_mode_stated(const char *text)
{
	/* The current mode is never stated in standing text. */
	assert_null(strstr(text, "read-only"));
	assert_null(strstr(text, "under workspace-write"));
	assert_null(strstr(text, "in workspace-write"));
	assert_null(strstr(text, "sandbox mode is"));
}

static void test_policy_text(void **state)
{
	const char *never = ward_render_policy(WARD_APPROVAL_NEVER);

	(void)state;
	/* Only `never` is declared. */
	assert_string_equal(ward_render_policy(WARD_APPROVAL_ASK), "");
	assert_non_null(strstr(never, "Approval policy: never."));
	assert_non_null(strstr(never, "refused automatically"));
	assert_non_null(strstr(never, "do not request sandbox_permissions"));
	assert_no_mode_stated(never);
	assert_null(strstr(never, "workspace-write"));
	assert_null(strstr(never, "danger-full-access"));
}

static void test_tool_descriptions(void **state)
{
	const char *bash = ward_render_tool_description(WARD_TOOL_BASH, true);
	const char *bash0 = ward_render_tool_description(WARD_TOOL_BASH, false);
	const char *files = ward_render_tool_description(WARD_TOOL_FILES, true);
	const char *files0 =
	    ward_render_tool_description(WARD_TOOL_FILES, false);
	const char *all[] = {bash, bash0, files, files0};

	(void)state;
	for (size_t i = 0; i < 4; i++) {
		/* Explains the marker, forbids working around it. */
		assert_non_null(strstr(
		    all[i], "[sandbox: file access denied under <mode> mode]"));
		assert_non_null(strstr(all[i], "Do not work around a denial"));
		assert_non_null(strstr(all[i], "Just try what you need"));
		assert_no_mode_stated(all[i]);
		assert_int_not_equal(all[i][strlen(all[i]) - 1], '\n');
	}
	/* The sanctioned retry only where the fields exist. */
	assert_non_null(strstr(bash, "retry this exact command once"));
	assert_non_null(strstr(bash, "sandbox_permissions"));
	assert_non_null(strstr(bash, "justification"));
	assert_non_null(strstr(bash, "do not ask again for this command"));
	assert_non_null(strstr(files, "retry this exact operation once"));
	assert_null(strstr(files, "command once"));
	assert_null(strstr(bash0, "sandbox_permissions"));
	assert_null(strstr(files0, "sandbox_permissions"));
	assert_non_null(strstr(bash0, "no way to widen the sandbox"));
	assert_non_null(strstr(bash, "bash -c"));
	assert_non_null(strstr(files, "Nothing was changed."));

	assert_non_null(
	    strstr(ward_render_field_sandbox_permissions(WARD_SUBJECT_COMMAND),
		   "narrowest wider mode that suffices"));
	assert_non_null(strstr(
	    ward_render_field_sandbox_permissions(WARD_SUBJECT_OPERATION),
	    "retrying an operation"));
	assert_non_null(
	    strstr(ward_render_field_justification(), "what was denied"));
}

static void test_network_denied(void **state)
{
	char *text = NULL;

	(void)state;
	assert_int_equal(ward_render_network_denied(&text, "evil.example"), 0);
	assert_string_equal(text,
			    "[sandbox: network access to evil.example denied]");
	free(text);
	assert_int_equal(ward_render_network_denied(&text, "::1"), 0);
	assert_string_equal(text, "[sandbox: network access to ::1 denied]");
	free(text);
	text = NULL;
	assert_int_equal(ward_render_network_denied(&text, "a\nb"),
			 WARD_EINVAL);
	assert_int_equal(ward_render_network_denied(&text, "a b"), WARD_EINVAL);
	assert_int_equal(ward_render_network_denied(&text, "a]"), WARD_EINVAL);
	assert_int_equal(ward_render_network_denied(&text, ""), WARD_EINVAL);
	assert_int_equal(ward_render_network_denied(&text, NULL), WARD_EINVAL);
	assert_null(text);
}

/* The network-off marker (exact, from the design) and what follows it on
 * each surface. */
static void test_network_off(void **state)
{
	struct ward_render_network_off r = WARD_RENDER_NETWORK_OFF_INIT;
	char *text = NULL;

	(void)state;
	r.surface = WARD_SURFACE_CLI;
	r.mode = WARD_MODE_WORKSPACE_WRITE;
	assert_int_equal(ward_render_network_off(&text, &r), 0);
	assert_string_equal(
	    text, "[sandbox: network access denied: the network is off under "
		  "workspace-write mode]\n"
		  "allow a host with --allow-domain HOST (repeatable; or the "
		  "whole network with --network on)");
	free(text);
	r.escalation_offered = true;
	assert_int_equal(ward_render_network_off(&text, &r), 0);
	assert_non_null(strstr(text, "on)\nretry once with --escalate-network "
				     "HOST (or on) --justification TEXT"));
	free(text);
	r.surface = WARD_SURFACE_MCP;
	r.mode = WARD_MODE_READ_ONLY;
	assert_int_equal(ward_render_network_off(&text, &r), 0);
	assert_string_equal(
	    text, "[sandbox: network access denied: the network is off under "
		  "read-only mode]\n"
		  "retry this exact command once with network_permissions (the "
		  "host, or \"on\") + justification; the approval prompt asks "
		  "the user");
	free(text);
	r.escalation_offered = false;
	r.session_id = "abc";
	assert_int_equal(ward_render_network_off(&text, &r), 0);
	assert_non_null(strstr(text, "mode]\nnetwork_permissions cannot be "
				     "asked for here; a person can allow it: "
				     "ward session network abc on, or ward mcp "
				     "--allow-domain HOST"));
	free(text);
	/* A model never gets the CLI's flags, a person never the field. */
	r.surface = WARD_SURFACE_API;
	r.session_id = NULL;
	r.escalation_offered = true;
	assert_int_equal(ward_render_network_off(&text, &r), 0);
	assert_non_null(strstr(text, "network_permissions"));
	assert_null(strstr(text, "--"));
	free(text);
	r.version = 99;
	assert_int_equal(ward_render_network_off(&text, &r), WARD_EINVAL);
	/* The proxy's own lookup failing has its own line. */
	assert_int_equal(ward_render_network_unresolved(&text, "reg.example"),
			 0);
	assert_string_equal(text,
			    "[sandbox: network: reg.example is allowed, but "
			    "ward's proxy could not resolve it (the lookup "
			    "outside the sandbox failed: a DNS problem, not a "
			    "refusal)]");
	free(text);
	assert_int_equal(ward_render_network_unresolved(&text, "a\nb"),
			 WARD_EINVAL);
	assert_int_equal(ward_render_foreground_clamped(&text, 55000), 0);
	assert_non_null(strstr(text, "55 s default"));
	assert_non_null(strstr(text, "run_in_background"));
	free(text);
}

/* initialize's instructions: what ward is, both markers, the retry or
 * that there is none, the background; never the mode in force. */
static void test_instructions(void **state)
{
	char *t = NULL;

	(void)state;
	assert_int_equal(ward_render_instructions(&t, true, WARD_APPROVAL_ASK),
			 0);
	assert_non_null(strstr(t, "[sandbox: file access denied under <mode> "
				  "mode]"));
	assert_non_null(strstr(t, "[sandbox: network access denied: the "
				  "network is off under <mode> mode]"));
	assert_non_null(strstr(t, "sandbox_permissions"));
	assert_non_null(strstr(t, "network_permissions"));
	assert_non_null(strstr(t, "run_in_background"));
	assert_null(strstr(t, "Approval policy"));
	free(t);
	assert_int_equal(
	    ward_render_instructions(&t, false, WARD_APPROVAL_NEVER), 0);
	assert_non_null(strstr(t, "cannot be widened from here"));
	assert_non_null(strstr(t, ward_render_policy(WARD_APPROVAL_NEVER)));
	assert_null(strstr(t, "under read-only"));
	assert_null(strstr(t, "under workspace-write"));
	free(t);
}

/* The line after the output of a command the sandbox ended. */
static void test_sandbox_ended(void **state)
{
	char *t = NULL;

	(void)state;
	assert_int_equal(ward_render_sandbox_ended(&t, "the network bridge "
						       "(ward-bridge) died"),
			 0);
	assert_string_equal(t, "[sandbox failed: the network bridge "
			       "(ward-bridge) died; the output above is what "
			       "it wrote until then]");
	free(t);
	assert_int_equal(ward_render_sandbox_ended(&t, NULL), WARD_EINVAL);
}

/*
 * `ward acp`: no field or flag to retry with, so the hints say that ward
 * asks, and what follows a granted retry names how it was allowed.
 */
static void test_acp_texts(void **state)
{
	char *text = NULL;

	(void)state;
	assert_string_equal(
	    ward_render_hint_for(WARD_SURFACE_ACP, WARD_SUBJECT_COMMAND),
	    "ward asks the user whether this exact command may run once under "
	    "the narrowest wider mode that suffices; the answer follows");
	assert_null(strstr(
	    ward_render_hint_for(WARD_SURFACE_ACP, WARD_SUBJECT_OPERATION),
	    "sandbox_permissions"));
	assert_non_null(strstr(
	    ward_render_hint_for(WARD_SURFACE_ACP, WARD_SUBJECT_OPERATION),
	    "this exact operation"));
	assert_int_equal(ward_render_network_hint(&text, WARD_SURFACE_ACP), 0);
	assert_null(strstr(text, "network_permissions"));
	assert_null(strstr(text, "--escalate-network"));
	assert_non_null(strstr(text, "ward asks the user"));
	free(text);
	assert_int_equal(ward_render_retried(&text, WARD_SUBJECT_COMMAND,
					     WARD_MODE_WORKSPACE_WRITE, false,
					     NULL),
			 0);
	assert_string_equal(text, "[sandbox: the user allowed this command "
				  "once under workspace-write; it ran again, "
				  "and its output follows]");
	free(text);
	assert_int_equal(ward_render_retried(&text, WARD_SUBJECT_COMMAND,
					     WARD_MODE_READ_ONLY, true,
					     "example.com"),
			 0);
	assert_string_equal(text, "[sandbox: the user allowed this command "
				  "once with network access to example.com; "
				  "it ran again, and its output follows]");
	free(text);
	assert_int_equal(ward_render_retried(&text, WARD_SUBJECT_COMMAND,
					     WARD_MODE_READ_ONLY, true, NULL),
			 0);
	assert_non_null(strstr(text, "the whole network (on)"));
	free(text);
	text = NULL;
	assert_int_equal(ward_render_retried(&text, WARD_SUBJECT_COMMAND,
					     WARD_MODE_READ_ONLY, true, "a\nb"),
			 WARD_EINVAL);
	assert_null(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_marker),
	    cmocka_unit_test(test_hint_and_denial),
	    cmocka_unit_test(test_fsfence_uses_render),
	    cmocka_unit_test(test_verdict_texts_exact),
	    cmocka_unit_test(test_verdict_texts_distinct),
	    cmocka_unit_test(test_network_denied),
	    cmocka_unit_test(test_network_off),
	    cmocka_unit_test(test_instructions),
	    cmocka_unit_test(test_acp_texts),
	    cmocka_unit_test(test_unavailable),
	    cmocka_unit_test(test_policy_text),
	    cmocka_unit_test(test_tool_descriptions),
	    cmocka_unit_test(test_sandbox_ended),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
