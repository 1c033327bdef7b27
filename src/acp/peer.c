/*
 * ward acp — the two ends' writers: a queue and a thread per peer, so a
 * peer that stops reading never blocks the proxy (the main thread keeps
 * reading both sides, and two full pipes cannot deadlock it). Lines go
 * out whole and in the order they were queued. And what every module
 * uses to say something: the log, the answer with an error.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "acp_internal.h"

/* The writer needs little stack. */
#define WRITER_STACK (256u * 1024u)
/* A pipe that polls writable has room for this much without blocking. */
#define WRITE_CHUNK 4096
/* How often a waiting writer looks whether it is to give up. */
#define WRITE_TICK_MS 250

void acp_peer_init(struct acp_peer *p, const char *name, int in_fd, int out_fd)
{
	pthread_condattr_t cattr;

	memset(p, 0, sizeof(*p));
	p->name = name;
	p->in_fd = in_fd;
	p->out_fd = out_fd;
	ward_jr_lines_init(&p->lines, ACP_MAX_LINE);
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&cattr);
	pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cond, &cattr);
	pthread_condattr_destroy(&cattr);
}

/* --- what every module uses --------------------------------------------------- */

noreturn void acp_oom(void)
{
	fputs("ward acp: out of memory\n", stderr);
	exit(125);
}

void acp_log(const char *fmt, ...)
{
	char text[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	fprintf(stderr, "ward acp: %s\n", text);
}

void acp_error(struct acp_peer *p, json_t *id, int code, const char *message,
	       json_t *data)
{
	size_t size = (message ? strlen(message) : 0) * 4 + 1;
	char *text = malloc(size);

	if (!text)
		acp_oom();
	/* A JSON string must be UTF-8 whatever a detail quotes (a byte
	 * that is none becomes the 4 characters "\xNN"). */
	ward_jr_text(text, size, message ? message : "");
	acp_peer_send(p, ward_jr_error(id, code, text, data));
	free(text);
}

const char *acp_str(json_t *params, const char *key)
{
	return json_string_value(json_object_get(params, key));
}

/* Free what is still queued (the lock held). */
static void drop_queue(struct acp_peer *p)
{
	struct acp_chunk *c, *next;

	for (c = p->head; c; c = next) {
		next = c->next;
		free(c->buf);
		free(c);
	}
	p->head = p->tail = NULL;
	p->queued = 0;
}

/*
 * Write @len bytes to the peer, a chunk at a time once it polls writable,
 * so the writer never sits in a write() it cannot leave: once @p->abort
 * is set (the end, after the drain time) it gives up. 0 or -errno.
 */
static int write_bounded(struct acp_peer *p, const char *buf, size_t len)
{
	bool abort_now;
	ssize_t n;
	int r;

	while (len > 0) {
		struct pollfd pfd = {p->out_fd, POLLOUT, 0};

		r = poll(&pfd, 1, WRITE_TICK_MS);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0) {
			pthread_mutex_lock(&p->lock);
			abort_now = p->abort;
			pthread_mutex_unlock(&p->lock);
			if (abort_now)
				return -ETIMEDOUT;
			continue;
		}
		if (pfd.revents & (POLLERR | POLLHUP | POLLNVAL))
			return -EPIPE;
		n = write(p->out_fd, buf,
			  len > WRITE_CHUNK ? WRITE_CHUNK : len);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static void *writer_main(void *arg)
{
	struct acp_peer *p = arg;
	struct acp_chunk *c;
	int err;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->head && !p->closing)
			pthread_cond_wait(&p->cond, &p->lock);
		if (!p->head)
			break; /* closing, and everything is written */
		c = p->head;
		p->head = c->next;
		if (!p->head)
			p->tail = NULL;
		p->queued -= c->len;
		p->writing = true;
		pthread_mutex_unlock(&p->lock);
		err = p->dead ? 0 : write_bounded(p, c->buf, c->len);
		free(c->buf);
		free(c);
		pthread_mutex_lock(&p->lock);
		p->writing = false;
		if (err && !p->dead) {
			p->dead = true;
			acp_log("cannot write to the %s (%s); nothing more "
				"goes to it",
				p->name, strerror(-err));
			drop_queue(p);
		}
	}
	if (p->out_fd >= 0) {
		close(p->out_fd);
		p->out_fd = -1;
	}
	p->ended = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int acp_peer_start(struct acp_peer *p)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int rc;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, WRITER_STACK);
	/* Process-directed signals stay with the main thread's signalfd. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&p->thread, &attr, writer_main, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc)
		return -rc;
	p->started = true;
	return 0;
}

/*
 * Write @c now if the peer takes it whole without blocking (the lock
 * held, nothing queued or being written: the order stays): a line of at
 * most a pipe's atomic size, once it polls writable. What a short write
 * left is kept in @c for the writer. True when all of it went.
 */
static bool write_now(struct acp_peer *p, struct acp_chunk *c)
{
	struct pollfd pfd = {p->out_fd, POLLOUT, 0};
	ssize_t n;

	if (c->len > WRITE_CHUNK || poll(&pfd, 1, 0) != 1 ||
	    (pfd.revents & (POLLERR | POLLHUP | POLLNVAL)))
		return false;
	n = write(p->out_fd, c->buf, c->len);
	if (n <= 0)
		return false; /* the writer will say why, or wait */
	if ((size_t)n == c->len)
		return true;
	memmove(c->buf, c->buf + n, c->len - (size_t)n);
	c->len -= (size_t)n;
	return false;
}

/* Queue @len bytes (taken over: @buf is freed by the writer). */
static void enqueue(struct acp_peer *p, char *buf, size_t len)
{
	struct acp_chunk *c = malloc(sizeof(*c));

	if (!c)
		acp_oom();
	c->buf = buf;
	c->len = len;
	c->next = NULL;
	pthread_mutex_lock(&p->lock);
	if (p->dead || p->closing) {
		pthread_mutex_unlock(&p->lock);
		free(buf);
		free(c);
		return;
	}
	if (p->queued + len > ACP_MAX_QUEUED) {
		/* It stopped reading long ago: holding more would only eat
		 * memory. Everything for it is dropped from now on. */
		p->dead = true;
		drop_queue(p);
		pthread_mutex_unlock(&p->lock);
		acp_log("the %s has not read %u MiB of messages; nothing "
			"more goes to it",
			p->name, ACP_MAX_QUEUED >> 20);
		free(buf);
		free(c);
		return;
	}
	/* The common case goes out at once, without waking the writer:
	 * a message round trip through the proxy then costs no thread
	 * switch. */
	if (!p->head && !p->writing && p->out_fd >= 0 && write_now(p, c)) {
		pthread_mutex_unlock(&p->lock);
		free(buf);
		free(c);
		return;
	}
	if (p->tail)
		p->tail->next = c;
	else
		p->head = c;
	p->tail = c;
	p->queued += c->len;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

void acp_peer_send_raw(struct acp_peer *p, const char *line, size_t len)
{
	char *buf = malloc(len + 1);

	if (!buf)
		acp_oom();
	memcpy(buf, line, len);
	buf[len] = '\n';
	enqueue(p, buf, len + 1);
}

void acp_peer_send(struct acp_peer *p, json_t *msg)
{
	size_t len = 0;
	char *line = msg ? ward_jr_encode(&len, msg) : NULL;

	json_decref(msg);
	if (!line)
		acp_oom();
	enqueue(p, line, len);
}

void acp_peer_close(struct acp_peer *p)
{
	pthread_mutex_lock(&p->lock);
	p->closing = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

bool acp_peer_gone(struct acp_peer *p)
{
	bool dead;

	pthread_mutex_lock(&p->lock);
	dead = p->dead;
	pthread_mutex_unlock(&p->lock);
	return dead;
}

void acp_peer_finish(struct acp_peer *p, unsigned long drain_ms)
{
	struct timespec until;

	acp_peer_close(p);
	/* What is queued may still go out, for a while. */
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += (time_t)(drain_ms / 1000);
	until.tv_nsec += (long)(drain_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&p->lock);
	while (p->started && !p->ended &&
	       pthread_cond_timedwait(&p->cond, &p->lock, &until) == 0)
		;
	p->abort = true;
	pthread_mutex_unlock(&p->lock);
	if (p->started)
		pthread_join(p->thread, NULL);
	p->started = false;
	pthread_mutex_lock(&p->lock);
	drop_queue(p);
	if (p->out_fd >= 0) {
		close(p->out_fd);
		p->out_fd = -1;
	}
	pthread_mutex_unlock(&p->lock);
	if (p->in_fd > 2)
		close(p->in_fd);
	p->in_fd = -1;
	ward_jr_lines_free(&p->lines);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
}
