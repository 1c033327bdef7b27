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
#include "internal.h"

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
	/* Records kept until collect: a small ring is enough, a command
	 * that is refused thousands of times is reported in part. */
	struct record *rec;
	size_t n, cap;
};

/* Send AUDIT_GET and read the status: whether audit is enabled. */
static int audit_enabled(int fd, bool *enabled)
{
	struct nl_hdr req = {sizeof(req), AUDIT_GET_STATUS, NL_REQUEST, 1, 0};
	struct nl_addr kernel = {AF_NETLINK, 0, 0, 0};
	char buf[8192];
	struct pollfd p = {fd, POLLIN, 0};
	ssize_t n;

	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) < 0)
		return -errno;
	for (int tries = 0; tries < 16; tries++) {
		if (poll(&p, 1, 1000) != 1)
			return -ETIMEDOUT;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < (ssize_t)sizeof(struct nl_hdr))
			return n < 0 ? -errno : -EPROTO;
		for (size_t off = 0;
		     off + sizeof(struct nl_hdr) <= (size_t)n;) {
			struct nl_hdr h;
			uint32_t st[2];

			memcpy(&h, buf + off, sizeof(h));
			if (h.len < sizeof(h) || off + h.len > (size_t)n)
				break;
			if (h.type == NL_ERROR && h.seq == 1) {
				int32_t e = 0;

				if (h.len >= sizeof(h) + sizeof(e))
					memcpy(&e, buf + off + sizeof(h),
					       sizeof(e));
				if (e)
					return e;
			} else if (h.type == AUDIT_GET_STATUS &&
				   h.len >= sizeof(h) + sizeof(st)) {
				/* struct audit_status: mask, enabled, … */
				memcpy(st, buf + off + sizeof(h), sizeof(st));
				*enabled = st[1] != 0;
				return 0;
			}
			off += NL_ALIGN(h.len);
		}
	}
	return -EPROTO;
}

int ward_audit_open(struct ward_audit **out)
{
	struct nl_addr me = {AF_NETLINK, 0, 0, 1u << (AUDIT_GROUP_READLOG - 1)};
	struct ward_audit *a;
	bool enabled = false;
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
	err = audit_enabled(fd, &enabled);
	if (err) {
		err = ward_err(err, "cannot ask whether audit is enabled: %s",
			       strerror(-err));
		goto out_close;
	}
	if (!enabled) {
		err = ward_err(-ENODATA, "audit is disabled (auditctl -e 1 "
					 "enables it), so the kernel writes no "
					 "Landlock records");
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

/* Keep the Landlock records of one datagram. */
static void keep(struct ward_audit *a, const char *buf, size_t n)
{
	for (size_t off = 0; off + sizeof(struct nl_hdr) <= n;) {
		struct nl_hdr h;
		struct record *r;
		size_t len;

		memcpy(&h, buf + off, sizeof(h));
		if (h.len < sizeof(h) || off + h.len > n)
			return;
		if ((h.type == AUDIT_LL_ACCESS || h.type == AUDIT_LL_DOMAIN) &&
		    a->n < 256) {
			if (a->n == a->cap) {
				size_t cap = a->cap ? a->cap * 2 : 16;

				r = realloc(a->rec, cap * sizeof(*r));
				if (!r)
					return;
				a->rec = r;
				a->cap = cap;
			}
			r = &a->rec[a->n++];
			r->type = h.type;
			len = h.len - sizeof(h);
			if (len >= sizeof(r->text))
				len = sizeof(r->text) - 1;
			memcpy(r->text, buf + off + sizeof(h), len);
			r->text[len] = '\0';
		}
		off += NL_ALIGN(h.len);
	}
}

/* Read what arrives within the grace period (longer while it flows). */
static void drain(struct ward_audit *a)
{
	char buf[16384];
	struct pollfd p = {a->fd, POLLIN, 0};
	int waited = 0;
	ssize_t n;

	while (waited < AUDIT_MAX_MS) {
		int rc = poll(&p, 1, AUDIT_GRACE_MS);

		if (rc < 0 && errno == EINTR)
			continue;
		if (rc != 1)
			return;
		n = recv(a->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && errno != EINTR && errno != EAGAIN &&
		    errno != ENOBUFS)
			return;
		if (n > 0)
			keep(a, buf, (size_t)n);
		waited += 5;
	}
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

size_t ward_audit_collect(struct ward_audit *a, pid_t pid,
			  struct ward_denial_set *set,
			  const struct ward_denial_ctx *ctx)
{
	char domains[16][32], v[4096], blockers[256];
	size_t nd = 0, added = 0;

	if (!a || pid <= 0)
		return 0;
	drain(a);
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
