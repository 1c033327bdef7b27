/*
 * Unit tests for the texts src/libward/render.c gives `ward mcp`: the per-tool
 * descriptions and field descriptions, a command's result
 * (ward_render_run), a started background task, the approval-unavailable
 * advice, file-change confirmations, the read continuation line and
 * directory listings. Exact strings: these are what the model reads.
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

#define HINT_CMD                                                               \
	"retry this exact command once with sandbox_permissions (the "         \
	"narrowest wider mode that suffices) + justification; the approval "   \
	"prompt asks the user"

static const enum ward_tool MCP_TOOLS[] = {
    WARD_TOOL_BASH,	      WARD_TOOL_TASK_OUTPUT, WARD_TOOL_TASK_KILL,
    WARD_TOOL_READ_FILE,      WARD_TOOL_WRITE_FILE,  WARD_TOOL_EDIT_FILE,
    WARD_TOOL_LIST_DIRECTORY,
};

#define N_MCP_TOOLS (sizeof(MCP_TOOLS) / sizeof(MCP_TOOLS[0]))

static char *run_text(const struct ward_render_run *r)
{
	char *text = NULL;

	assert_int_equal(ward_render_run(&text, r), 0);
	assert_non_null(text);
	return text;
}

static void test_descriptions(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_MCP_TOOLS; i++) {
		for (int esc = 0; esc < 2; esc++) {
			const char *d =
			    ward_render_tool_description(MCP_TOOLS[i], esc);

			assert_non_null(d);
			assert_true(strlen(d) > 40);
			/* Never states the mode in force. */
			assert_null(strstr(d, "read-only"));
			assert_null(strstr(d, "under workspace-write"));
			assert_int_not_equal(d[strlen(d) - 1], '\n');
		}
	}
	/* The mutating file tools offer the one sanctioned retry only when
	 * they have the fields; reads never (rules hold in every mode). */
	assert_non_null(
	    strstr(ward_render_tool_description(WARD_TOOL_WRITE_FILE, true),
		   "retry this exact operation once"));
	assert_null(
	    strstr(ward_render_tool_description(WARD_TOOL_WRITE_FILE, false),
		   "sandbox_permissions"));
	assert_non_null(
	    strstr(ward_render_tool_description(WARD_TOOL_EDIT_FILE, true),
		   "old_text must occur exactly once"));
	for (int esc = 0; esc < 2; esc++) {
		const char *r =
		    ward_render_tool_description(WARD_TOOL_READ_FILE, esc);
		const char *l =
		    ward_render_tool_description(WARD_TOOL_LIST_DIRECTORY, esc);

		assert_null(strstr(r, "sandbox_permissions"));
		assert_null(strstr(l, "sandbox_permissions"));
		assert_non_null(strstr(r, "A refused read fails"));
		assert_non_null(strstr(l, "A refused listing fails"));
		assert_non_null(strstr(r, "no wider mode would help"));
	}
	assert_non_null(
	    strstr(ward_render_tool_description(WARD_TOOL_TASK_OUTPUT, false),
		   "[sandbox: file access denied under <mode> mode]"));
	/* The original two are unchanged by the new ones. */
	assert_non_null(strstr(
	    ward_render_tool_description(WARD_TOOL_BASH, true), "bash -c"));
	assert_non_null(
	    strstr(ward_render_tool_description(WARD_TOOL_FILES, false),
		   "Read, write, edit, move, remove and list files"));
}

static void test_fields(void **state)
{
	static const char *const bash[] = {"command",
					   "workdir",
					   "timeout_ms",
					   "run_in_background",
					   "sandbox_permissions",
					   "justification"};

	(void)state;
	for (size_t i = 0; i < sizeof(bash) / sizeof(bash[0]); i++)
		assert_non_null(
		    ward_render_field_description(WARD_TOOL_BASH, bash[i]));
	assert_string_equal(
	    ward_render_field_description(WARD_TOOL_BASH,
					  "sandbox_permissions"),
	    ward_render_field_sandbox_permissions(WARD_SUBJECT_COMMAND));
	assert_string_equal(
	    ward_render_field_description(WARD_TOOL_WRITE_FILE,
					  "sandbox_permissions"),
	    ward_render_field_sandbox_permissions(WARD_SUBJECT_OPERATION));
	assert_string_equal(
	    ward_render_field_description(WARD_TOOL_EDIT_FILE, "justification"),
	    ward_render_field_justification());
	/* Fields a tool does not have. */
	assert_null(ward_render_field_description(WARD_TOOL_READ_FILE,
						  "sandbox_permissions"));
	assert_null(ward_render_field_description(WARD_TOOL_BASH, "path"));
	assert_null(ward_render_field_description(WARD_TOOL_BASH, "bogus"));
	assert_null(ward_render_field_description(WARD_TOOL_BASH, NULL));
	assert_null(
	    ward_render_field_description((enum ward_tool)99, "command"));
	/* "path" means a file or a directory, per tool. */
	assert_non_null(strstr(
	    ward_render_field_description(WARD_TOOL_LIST_DIRECTORY, "path"),
	    "directory"));
	assert_non_null(
	    strstr(ward_render_field_description(WARD_TOOL_READ_FILE, "path"),
		   "file"));
	assert_non_null(
	    ward_render_field_description(WARD_TOOL_TASK_KILL, "task_id"));
	assert_null(
	    ward_render_field_description(WARD_TOOL_TASK_KILL, "wait_ms"));
}

static void test_run_plain(void **state)
{
	struct ward_render_run r = {0};
	char *t;

	(void)state;
	r.out = "hello\n";
	r.out_len = 6;
	r.exit_code = 0;
	t = run_text(&r);
	assert_string_equal(t, "hello\nexit code: 0");
	free(t);

	/* No output at all; a missing final newline is supplied. */
	memset(&r, 0, sizeof(r));
	r.exit_code = 3;
	t = run_text(&r);
	assert_string_equal(t, "exit code: 3");
	free(t);
	r.err = "oops";
	r.err_len = 4;
	t = run_text(&r);
	assert_string_equal(t, "oops\nexit code: 3");
	free(t);

	/* Both streams: stderr gets a heading. */
	r.out = "a\n";
	r.out_len = 2;
	t = run_text(&r);
	assert_string_equal(t, "a\n[stderr]\noops\nexit code: 3");
	free(t);
}

static void test_run_status_lines(void **state)
{
	struct ward_render_run r = {0};
	char *t;

	(void)state;
	r.exit_code = -1;
	r.signal = 9;
	t = run_text(&r);
	assert_string_equal(t, "killed by signal 9");
	free(t);
	r.timed_out = true;
	r.timeout_ms = 1500;
	t = run_text(&r);
	assert_string_equal(
	    t, "timed out after 1500 ms; its process group was killed");
	free(t);
	memset(&r, 0, sizeof(r));
	r.running = true;
	r.task_id = "t7";
	r.denied = true; /* not shown before it ended */
	r.out = "partial";
	r.out_len = 7;
	t = run_text(&r);
	assert_string_equal(t, "partial\ntask t7 is still running");
	free(t);
}

static void test_run_denied(void **state)
{
	struct ward_render_run r = {0};
	char *t;

	(void)state;
	r.err = "touch: cannot touch 'x': Read-only file system\n";
	r.err_len = strlen(r.err);
	r.exit_code = 1;
	r.denied = true;
	r.mode = WARD_MODE_READ_ONLY;
	t = run_text(&r);
	assert_string_equal(
	    t, "touch: cannot touch 'x': Read-only file system\n"
	       "exit code: 1\n"
	       "[sandbox: file access denied under read-only mode]");
	free(t);
	r.escalation_offered = true;
	r.mode = WARD_MODE_WORKSPACE_WRITE;
	t = run_text(&r);
	assert_string_equal(t,
			    "touch: cannot touch 'x': Read-only file system\n"
			    "exit code: 1\n"
			    "[sandbox: file access denied under "
			    "workspace-write mode]\n" HINT_CMD);
	free(t);
}

static void test_run_omitted_and_nul(void **state)
{
	struct ward_render_run r = {0};
	char *t;

	(void)state;
	/* Head "HEAD" (4 bytes kept), 100 dropped, tail "TAIL\n". */
	r.out = "HEADTAIL\n";
	r.out_len = 9;
	r.out_head = 4;
	r.out_dropped = 100;
	t = run_text(&r);
	assert_string_equal(
	    t, "HEAD\n[… 100 bytes omitted …]\nTAIL\nexit code: 0");
	free(t);
	/* A NUL byte cannot end the text early. */
	memset(&r, 0, sizeof(r));
	r.out = "a\0b\n";
	r.out_len = 4;
	t = run_text(&r);
	assert_string_equal(t, "a\xef\xbf\xbd"
			       "b\nexit code: 0");
	free(t);
	assert_int_equal(ward_render_run(NULL, &r), WARD_EINVAL);
	assert_int_equal(ward_render_run(&t, NULL), WARD_EINVAL);
}

static void test_task_started(void **state)
{
	char *t = NULL;

	(void)state;
	assert_int_equal(ward_render_task_started(&t, "t3", 4242), 0);
	assert_string_equal(t, "started background task t3 (pid 4242); read "
			       "its output with task_output and stop it "
			       "with task_kill");
	free(t);
	assert_int_equal(ward_render_task_started(&t, NULL, 1), WARD_EINVAL);
}

static void test_widen_advice(void **state)
{
	char *t = NULL, *v = NULL;

	(void)state;
	assert_int_equal(ward_render_verdict(&v, WARD_ESCALATION_UNAVAILABLE,
					     WARD_SUBJECT_COMMAND,
					     WARD_MODE_WORKSPACE_WRITE),
			 0);
	assert_int_equal(ward_render_widen_advice(&t, WARD_SUBJECT_COMMAND,
						  WARD_MODE_WORKSPACE_WRITE,
						  "abc123"),
			 0);
	/* It starts with the unavailable verdict, exactly. */
	assert_memory_equal(t, v, strlen(v));
	assert_int_equal(t[strlen(v)], '\n');
	assert_non_null(strstr(t, "do not retry this command with "
				  "sandbox_permissions"));
	assert_non_null(strstr(t, "ward session mode abc123 workspace-write"));
	free(t);
	assert_int_equal(ward_render_widen_advice(&t, WARD_SUBJECT_OPERATION,
						  WARD_MODE_DANGER_FULL_ACCESS,
						  NULL),
			 0);
	assert_non_null(strstr(t, "do not retry this operation"));
	assert_null(strstr(t, "ward session mode"));
	free(t);
	free(v);
}

static void test_fs_texts(void **state)
{
	char *t = NULL;

	(void)state;
	assert_int_equal(ward_render_fs_done(&t, WARD_FS_OP_WRITE, "a.txt", 1),
			 0);
	assert_string_equal(t, "wrote 1 byte to a.txt");
	free(t);
	assert_int_equal(
	    ward_render_fs_done(&t, WARD_FS_OP_WRITE, "d/b.txt", 14), 0);
	assert_string_equal(t, "wrote 14 bytes to d/b.txt");
	free(t);
	assert_int_equal(ward_render_fs_done(&t, WARD_FS_OP_EDIT, "c", 2), 0);
	assert_string_equal(t, "replaced 2 occurrences in c");
	free(t);
	assert_int_equal(ward_render_fs_done(&t, WARD_FS_OP_EDIT, "c", 1), 0);
	assert_string_equal(t, "replaced 1 occurrence in c");
	free(t);
	assert_int_equal(ward_render_fs_done(&t, WARD_FS_OP_READ, "c", 1),
			 WARD_EINVAL);
	assert_int_equal(ward_render_read_more(&t, 42), 0);
	assert_string_equal(t,
			    "[… the file continues: read on with offset 42]");
	free(t);
}

static void test_listing(void **state)
{
	struct ward_fs_entry e[4] = {
	    {.path = "dir", .type = WARD_FS_TYPE_DIR},
	    {.path = "f.txt", .type = WARD_FS_TYPE_FILE, .size = 12},
	    {.path = "link", .type = WARD_FS_TYPE_SYMLINK},
	    {.path = "secret", .type = WARD_FS_TYPE_FILE, .denied = true},
	};
	struct ward_fs_listing l = {e, 4, false};
	char *t = NULL;

	(void)state;
	assert_int_equal(ward_render_listing(&t, &l), 0);
	assert_string_equal(t, "dir/\nf.txt (12 bytes)\nlink@\n"
			       "secret [access denied by a rule]");
	free(t);
	l.truncated = true;
	l.count = 1;
	assert_int_equal(ward_render_listing(&t, &l), 0);
	assert_string_equal(t, "dir/\n[… listing truncated]");
	free(t);
	l.count = 0;
	l.truncated = false;
	assert_int_equal(ward_render_listing(&t, &l), 0);
	assert_string_equal(t, "(empty directory)");
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_descriptions),
	    cmocka_unit_test(test_fields),
	    cmocka_unit_test(test_run_plain),
	    cmocka_unit_test(test_run_status_lines),
	    cmocka_unit_test(test_run_denied),
	    cmocka_unit_test(test_run_omitted_and_nul),
	    cmocka_unit_test(test_task_started),
	    cmocka_unit_test(test_widen_advice),
	    cmocka_unit_test(test_fs_texts),
	    cmocka_unit_test(test_listing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
