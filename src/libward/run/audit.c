/*
 * ward — reading the kernel's Landlock audit records (see audit.h).
 *
 * The netlink and audit UAPI is defined here (like landlock.c does for
 * Landlock): the static musl build has no kernel headers, and these
 * numbers are kernel ABI.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "libward/internal.h"

#define NL_AUDIT	    9	 /* NETLINK_AUDIT */
#define NL_REQUEST	    1	 /* NLM_F_REQUEST */
#define NL_ERROR	    2	 /* NLMSG_ERROR */
#define AUDIT_GET_STATUS    1000 /* AUDIT_GET */
#define AUDIT_GROUP_READLOG 1	 /* AUDIT_NLGRP_READLOG */
#define AUDIT_LL_ACCESS	    1423 /* AUDIT_LANDLOCK_ACCESS */
#define AUDIT_LL_DOMAIN	    1424 /* AUDIT_LANDLOCK_DOMAIN */

struct nl_hdr {
	uint32_t len;
	uint16_t type;
	uint16_t flags;
	uint32_t seq;
	uint32_t pid;
};

struct nl_addr {
	unsigned short family;
	unsigned short pad;
	uint32_t pid;
	uint32_t groups;
};

#define NL_ALIGN(n) (((n) + 3u) & ~3u)

/* How long to wait for records after the run, in milliseconds: the
 * kernel's audit thread sends them a moment after the denial. */
#define AUDIT_GRACE_MS 60
#define AUDIT_MAX_MS   400

struct record {
	unsigned type;
	char text[1024];
};

struct ward_audit {
	int fd;
	/* Whether audit is enabled, from the reply to the AUDIT_GET sent
	 * after a run that failed (the only one that waits for records):
	 * AUDIT_UNKNOWN until it is read. Asking costs a synchronous trip
	 * through the kernel's audit code (about 70 µs here), so a run that
	 * succeeds never asks. */
	enum {
		AUDIT_UNKNOWN,
		AUDIT_OFF,
		AUDIT_ON
	} status;
	/* Records kept until collect: a small ring is enough, a command
	 * that is refused thousands of times is reported in part. */
	struct record *rec;
	size_t n, cap;
};

int ward_audit_open(struct ward_audit **out)
{
	struct nl_addr me = {AF_NETLINK, 0, 0, 1u << (AUDIT_GROUP_READLOG - 1)};
	struct ward_audit *a;
	int fd, err;

	if (geteuid() != 0)
		return ward_err(-EPERM, "the audit log is root's to read");
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NL_AUDIT);
	if (fd < 0)
		return ward_err(-errno, "no audit in this kernel: %s",
				strerror(errno));
	/* Listen first: a record of the run must not slip in between. */
	if (bind(fd, (struct sockaddr *)&me, sizeof(me)) != 0) {
		err = ward_err(-errno, "cannot read the audit log: %s",
			       strerror(errno));
		goto out_close;
	}
	a = calloc(1, sizeof(*a));
	if (!a) {
		err = ward_err(-ENOMEM, "out of memory");
		goto out_close;
	}
	a->fd = fd;
	*out = a;
	return 0;
out_close:
	close(fd);
	return err;
}

void ward_audit_close(struct ward_audit *a)
{
	if (!a)
		return;
	close(a->fd);
	free(a->rec);
	free(a);
}

/* Keep one Landlock record. */
static void keep_record(struct ward_audit *a, const struct nl_hdr *h,
			const char *body)
{
	struct record *r;
	size_t len;

	if (a->n >= 256)
		return;
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 16;

		r = realloc(a->rec, cap * sizeof(*r));
		if (!r)
			return;
		a->rec = r;
		a->cap = cap;
	}
	r = &a->rec[a->n++];
	r->type = h->type;
	len = h->len - sizeof(*h);
	if (len >= sizeof(r->text))
		len = sizeof(r->text) - 1;
	memcpy(r->text, body, len);
	r->text[len] = '\0';
}

/* Take in one datagram: the status reply and the Landlock records. */
static void keep(struct ward_audit *a, const char *buf, size_t n)
{
	for (size_t off = 0; off + sizeof(struct nl_hdr) <= n;) {
		struct nl_hdr h;
		const char *body = buf + off + sizeof(h);

		memcpy(&h, buf + off, sizeof(h));
		if (h.len < sizeof(h) || off + h.len > n)
			return;
		if (h.type == AUDIT_LL_ACCESS || h.type == AUDIT_LL_DOMAIN) {
			keep_record(a, &h, body);
		} else if (h.type == NL_ERROR && h.seq == 1) {
			int32_t e = 0;

			/* An acknowledgement is 0; an error means no answer
			 * is coming (not allowed to ask): count it as off. */
			if (h.len >= sizeof(h) + sizeof(e))
				memcpy(&e, body, sizeof(e));
			if (e)
				a->status = AUDIT_OFF;
		} else if (h.type == AUDIT_GET_STATUS &&
			   h.len >= sizeof(h) + 2 * sizeof(uint32_t)) {
			uint32_t st[2];

			/* struct audit_status: mask, enabled, … */
			memcpy(st, body, sizeof(st));
			a->status = st[1] ? AUDIT_ON : AUDIT_OFF;
		}
		off += NL_ALIGN(h.len);
	}
}

/*
 * Read what has arrived; with @timeout_ms > 0, wait that long for more
 * (0: only what is queued). Returns false when nothing more came.
 */
static bool take(struct ward_audit *a, int timeout_ms)
{
	char buf[16384];
	struct pollfd p = {a->fd, POLLIN, 0};
	bool any = false;
	ssize_t n;

	for (;;) {
		n = recv(a->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0) {
			keep(a, buf, (size_t)n);
			any = true;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ENOBUFS) /* some were lost: go on */
			continue;
		if (any || timeout_ms <= 0)
			return any;
		if (poll(&p, 1, timeout_ms) != 1)
			return false;
		timeout_ms = 0;
	}
}

/*
 * Read the run's records. Without @wait only what is already queued;
 * with it, the status reply first (at most a second), then, when audit is
 * on, what arrives within the grace period (longer while it flows).
 */
static void drain(struct ward_audit *a, bool wait)
{
	struct nl_hdr req = {sizeof(req), AUDIT_GET_STATUS, NL_REQUEST, 1, 0};
	struct nl_addr kernel = {AF_NETLINK, 0, 0, 0};
	int waited = 0;

	take(a, 0);
	if (!wait)
		return;
	/* Whether audit is enabled: one that cannot be asked is off. */
	if (a->status == AUDIT_UNKNOWN &&
	    sendto(a->fd, &req, sizeof(req), MSG_DONTWAIT,
		   (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		a->status = AUDIT_OFF;
	while (a->status == AUDIT_UNKNOWN && waited < 1000)
		waited += take(a, 100) ? 5 : 100;
	if (a->status != AUDIT_ON)
		return;
	while (waited < AUDIT_MAX_MS && take(a, AUDIT_GRACE_MS))
		waited += 5;
}

/* The value of @key= in a record (quoted, hex-encoded or bare). */
static bool field(char *out, size_t len, const char *text, const char *key)
{
	size_t k = strlen(key);
	const char *p = text, *v, *end;

	while ((p = strstr(p, key)) != NULL) {
		if ((p == text || p[-1] == ' ') && p[k] == '=')
			break;
		p += k;
	}
	if (!p)
		return false;
	v = p + k + 1;
	if (*v == '"') {
		end = strchr(++v, '"');
		if (!end || (size_t)(end - v) >= len)
			return false;
		memcpy(out, v, (size_t)(end - v));
		out[end - v] = '\0';
		return true;
	}
	end = v + strcspn(v, " ");
	if ((size_t)(end - v) >= len)
		return false;
	memcpy(out, v, (size_t)(end - v));
	out[end - v] = '\0';
	/* The audit log writes an unusual path as hex. */
	if (strcmp(key, "path") == 0 && (end - v) % 2 == 0 && end > v &&
	    strspn(out, "0123456789ABCDEF") == (size_t)(end - v)) {
		size_t m = (size_t)(end - v) / 2;

		for (size_t i = 0; i < m; i++) {
			unsigned x;

			sscanf(out + 2 * i, "%2X", &x);
			out[i] = (char)x;
		}
		out[m] = '\0';
	}
	return true;
}

/* The operation a blocker names ("fs.write_file" → "write"), or NULL. */
static const char *operation_of(const char *blockers)
{
	static const struct {
		const char *blocker, *op;
	} ops[] = {
	    {"fs.write_file", "write"}, {"fs.truncate", "write"},
	    {"fs.make_", "create"},	{"fs.remove_", "remove"},
	    {"fs.refer", "move"},	{"fs.read_file", "read"},
	    {"fs.read_dir", "list"},	{"fs.execute", "execute"},
	    {"fs.ioctl_dev", "access"},
	};

	for (size_t i = 0; i < sizeof(ops) / sizeof(*ops); i++)
		if (strstr(blockers, ops[i].blocker))
			return ops[i].op;
	return NULL;
}

size_t ward_audit_collect(struct ward_audit *a, pid_t pid, bool wait,
			  struct ward_denial_set *set,
			  const struct ward_denial_ctx *ctx)
{
	char domains[16][32], v[4096], blockers[256];
	size_t nd = 0, added = 0;

	if (!a || pid <= 0)
		return 0;
	drain(a, wait);
	/* The domains the command's pid created. */
	for (size_t i = 0; i < a->n && nd < 16; i++) {
		if (a->rec[i].type != AUDIT_LL_DOMAIN ||
		    !field(v, sizeof(v), a->rec[i].text, "pid") ||
		    strtol(v, NULL, 10) != (long)pid ||
		    !field(domains[nd], sizeof(domains[nd]), a->rec[i].text,
			   "domain"))
			continue;
		nd++;
	}
	for (size_t i = 0; i < a->n; i++) {
		const char *op;
		bool ours = false;

		if (a->rec[i].type != AUDIT_LL_ACCESS ||
		    !field(v, sizeof(v), a->rec[i].text, "domain"))
			continue;
		for (size_t d = 0; d < nd; d++)
			ours |= strcmp(v, domains[d]) == 0;
		if (!ours ||
		    !field(blockers, sizeof(blockers), a->rec[i].text,
			   "blockers") ||
		    !(op = operation_of(blockers)) ||
		    !field(v, sizeof(v), a->rec[i].text, "path"))
			continue;
		if (ward_denial_judge(set, ctx, v, op, WARD_DENIAL_EKNOWN,
				      WARD_DENIAL_EXACT))
			added++;
	}
	a->n = 0;
	return added;
}
