/*
 * ward — the terminal approval prompt: the person at the controlling
 * terminal allows one escalated call, or does not (see session_opts.h,
 * cli_tty_approve).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <termios.h>
#include <unistd.h>

#include "ward/escalation.h"
#include "ward/render.h"

#include "cli.h"
#include "session_opts.h"
#include "util/util.h"

static volatile sig_atomic_t prompt_interrupted;

static void on_prompt_signal(int sig)
{
	(void)sig;
	prompt_interrupted = 1;
}

enum ward_approval_outcome
cli_tty_approve(void *ctx, const struct ward_approval_request *req)
{
	struct sigaction sa, old_int, old_term, old_quit;
	enum ward_approval_outcome outcome = WARD_APPROVAL_UNAVAILABLE;
	char *text = NULL, answer[64];
	size_t len, got = 0;
	ssize_t r;
	int fd;

	(void)ctx;
	/* Like sudo: the controlling terminal, whatever stdin/stdout are. */
	fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return WARD_APPROVAL_UNAVAILABLE;
	/* The text is libward's, the same as an MCP client's form. */
	if (ward_escalation_question(&text, req, WARD_SURFACE_CLI) != 0)
		goto out_close;
	len = strlen(text);
	/* Type-ahead typed before the question was shown is no answer. */
	tcflush(fd, TCIFLUSH);
	if (util_write_all(fd, text, len) != 0)
		goto out_free;

	/* Ctrl-C (or a termination request) cancels the question, not
	 * ward: the refusal is still recorded. No SA_RESTART, so read()
	 * returns EINTR. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_prompt_signal;
	sigemptyset(&sa.sa_mask);
	prompt_interrupted = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGQUIT, &sa, &old_quit);
	for (;;) {
		r = read(fd, answer + got, sizeof(answer) - 1 - got);
		if (r < 0 && errno == EINTR && !prompt_interrupted)
			continue;
		if (r < 0) {
			outcome = prompt_interrupted
				      ? WARD_APPROVAL_CANCELLED
				      : WARD_APPROVAL_UNAVAILABLE;
			break;
		}
		if (r == 0) {
			outcome = WARD_APPROVAL_CANCELLED; /* end of input */
			break;
		}
		got += (size_t)r;
		answer[got] = '\0';
		if (strchr(answer, '\n') || got == sizeof(answer) - 1) {
			char *nl = strchr(answer, '\n');

			if (nl)
				*nl = '\0';
			if (nl && nl > answer && nl[-1] == '\r')
				nl[-1] = '\0';
			outcome = !strcasecmp(answer, "y") ||
					  !strcasecmp(answer, "yes")
				      ? WARD_APPROVAL_ALLOWED_ONCE
				      : WARD_APPROVAL_REJECTED;
			break;
		}
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	if (outcome == WARD_APPROVAL_CANCELLED)
		util_write_all(fd, "\n", 1);
out_free:
	free(text);
out_close:
	close(fd);
	return outcome;
}

