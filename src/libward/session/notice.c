/*
 * ward — the warnings already shown, per workspace (see ward/notice.h).
 *
 * One small file, $STATE/ward/warnings-shown: a magic line, then one line
 * per (scope, workspace), most recent first, at most NOTICE_MAX_ENTRIES:
 *
 *   <key: 16 hex digits> <digest: 16 hex digits>
 *
 * The key is an FNV-1a hash of the scope and the workspace path, the
 * digest one of the warnings' texts. FNV is not a cryptographic hash, and
 * need not be: the file is written only by ward outside any sandbox (the
 * directory is protected), and what a collision could do at worst is
 * leave out a repeated warning of `--quiet`, which `ward config check`
 * always prints. Rewritten through a temporary file and rename(), like the
 * probe cache beside it; concurrent writers lose an update, never the
 * file.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ward/notice.h"

#include "libward/internal.h"
#include "libward/statefile.h"

#define NOTICE_MAGIC	   "ward-warnings-shown 1"
#define NOTICE_FILE	   "warnings-shown"
#define NOTICE_MAX_ENTRIES 256
/* Each line is 16 + 1 + 16 + 1 bytes. */
#define NOTICE_LINE 34
#define NOTICE_MAX  (sizeof(NOTICE_MAGIC) + NOTICE_MAX_ENTRIES * NOTICE_LINE)

/* FNV-1a, 64 bits, with a separator after each piece ("ab","c" differs
 * from "a","bc"). */
static void fnv(uint64_t *h, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		*h ^= *p;
		*h *= 0x100000001b3ULL;
	}
	*h ^= 0xff;
	*h *= 0x100000001b3ULL;
}

/* The digest recorded for @key in @buf (after the magic line), or 0. */
static uint64_t lookup(const char *buf, const char *key)
{
	for (const char *line = strchr(buf, '\n'); line;
	     line = strchr(line, '\n')) {
		line++;
		if (strncmp(line, key, 16) == 0 && line[16] == ' ')
			return strtoull(line + 17, NULL, 16);
	}
	return 0;
}

/*
 * Write @key's new @digest first, then the other lines of @old (up to the
 * cap); @digest 0 drops @key. Best effort.
 */
static void write_store(int dfd, const char *old, const char *key,
			uint64_t digest)
{
	char out[NOTICE_MAX];
	size_t o = 0, kept = 0;
	int n;

	n = snprintf(out, sizeof(out), "%s\n", NOTICE_MAGIC);
	o = (size_t)n;
	if (digest) {
		n = snprintf(out + o, sizeof(out) - o, "%s %016" PRIx64 "\n",
			     key, digest);
		o += (size_t)n;
		kept++;
	}
	for (const char *line = strchr(old, '\n'); line && line[1];
	     line = strchr(line, '\n')) {
		size_t len;

		line++;
		len = strcspn(line, "\n");
		if (len != NOTICE_LINE - 1 || strncmp(line, key, 16) == 0)
			continue;
		if (kept == NOTICE_MAX_ENTRIES || o + len + 1 >= sizeof(out))
			break;
		memcpy(out + o, line, len);
		o += len;
		out[o++] = '\n';
		kept++;
	}
	ward_statefile_write(dfd, NOTICE_FILE, out, o);
}

int ward_notice_seen(bool *out_seen, const char *scope, const char *workspace,
		     char *const *warnings)
{
	uint64_t kh = 0xcbf29ce484222325ULL, digest = 0xcbf29ce484222325ULL;
	/* On the stack: ~9 KiB, and no allocation on every `ward run`. */
	char key[17], buf[NOTICE_MAX + 1];
	bool have, seen;
	int dfd;

	if (!out_seen || !scope || !workspace || !warnings)
		return ward_err(-EINVAL, "notice: a NULL argument");
	fnv(&kh, scope);
	fnv(&kh, workspace);
	snprintf(key, sizeof(key), "%016" PRIx64, kh);
	fnv(&digest, NOTICE_MAGIC);
	for (size_t i = 0; warnings[i]; i++)
		fnv(&digest, warnings[i]);
	/* 0 is "nothing recorded", which is what no warnings are. */
	if (!warnings[0])
		digest = 0;
	else if (digest == 0)
		digest = 1;

	*out_seen = false;
	/* Only something to remember creates the directory. */
	dfd = ward_statefile_open(digest != 0);
	if (dfd < 0) {
		/* Nothing recorded, and no warnings: nothing new. */
		*out_seen = digest == 0;
		return 0;
	}
	have = ward_statefile_read(dfd, NOTICE_FILE, NOTICE_MAGIC, buf,
				   sizeof(buf));
	seen = (have ? lookup(buf, key) : 0) == digest;
	if (!seen)
		write_store(dfd, have ? buf : "", key, digest);
	*out_seen = seen;
	close(dfd);
	return 0;
}
