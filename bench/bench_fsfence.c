/*
 * bench_fsfence — the in-process file fence against the same plain
 * syscalls, on small files in a workspace under workspace-write.
 *
 *   write  ward_fs_write of 1 KiB over an existing file
 *          vs open(O_EXCL) + write + fsync + close + rename (the target's
 *          baseline), and vs the same + fsync of the directory (the same
 *          durability as the fence: the rename is on disk on return)
 *   read   ward_fs_read of a 4 KiB text file (no rules; then with one `--`
 *          rule, which makes the fence resolve and judge the path)
 *          vs open + fstat + read to end-of-file + close
 *   edit   ward_fs_edit of one unique string in a 4 KiB file
 *          vs the plain read above + memmem + the plain write above
 *
 * Every variant runs once per round, in alternating order, and the median
 * of each is reported with the ratio fenced / plain. Targets (issue 4):
 * write <= 1.5x, read <= 1.2x. A missed target is reported, not an error.
 *
 * Options: -n ROUNDS (reads: 50x that), -d DIR (default: a fresh
 * directory under /var/tmp, removed afterwards).
 *
 * Build: cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude bench/bench_fsfence.c \
 *            build/lib/libward.a -ljansson -lpthread -o build/bench_fsfence
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "ward/ward.h"

#define WRITE_SIZE 1024
#define READ_SIZE  4096

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void die(const char *what)
{
	fprintf(stderr, "bench_fsfence: %s: %s\n", what,
		errno ? strerror(errno) : ward_error_last());
	exit(1);
}

/* The plain write: what an unfenced tool does for a durable replace. */
static void plain_write(const char *tmp, const char *target, const void *data,
			size_t len)
{
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	if (fd < 0 || write(fd, data, len) != (ssize_t)len || fsync(fd) != 0 ||
	    close(fd) != 0 || rename(tmp, target) != 0)
		die("plain write");
}

/* The plain write plus an fsync of the directory: the same durability as
 * the fence gives (the rename itself is persisted before returning). */
static void plain_write_dirsync(int dirfd, const char *tmp, const char *target,
				const void *data, size_t len)
{
	plain_write(tmp, target, data, len);
	if (fsync(dirfd) != 0)
		die("fsync directory");
}

/* The plain read: open, size the buffer, read to end-of-file, close. */
static size_t plain_read(char **out, const char *path)
{
	struct stat st;
	size_t cap, len = 0;
	ssize_t n;
	char *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) != 0)
		die("plain read");
	cap = (size_t)st.st_size + 1;
	buf = malloc(cap + 1);
	if (!buf)
		die("malloc");
	while ((n = read(fd, buf + len, cap - len)) > 0)
		len += (size_t)n;
	if (n < 0)
		die("plain read");
	buf[len] = '\0';
	close(fd);
	*out = buf;
	return len;
}

static void plain_edit(const char *tmp, const char *path, const char *old,
		       const char *new)
{
	size_t olen = strlen(old), nlen = strlen(new), len, pre;
	char *in, *out, *hit;

	len = plain_read(&in, path);
	hit = memmem(in, len, old, olen);
	if (!hit)
		die("plain edit: no match");
	out = malloc(len - olen + nlen);
	if (!out)
		die("malloc");
	pre = (size_t)(hit - in);
	memcpy(out, in, pre);
	memcpy(out + pre, new, nlen);
	memcpy(out + pre + nlen, hit + olen, len - pre - olen);
	plain_write(tmp, path, out, len - olen + nlen);
	free(in);
	free(out);
}

static void put_text(const char *path, size_t size, const char *marker)
{
	FILE *f = fopen(path, "w");
	size_t n = 0;

	if (!f)
		die(path);
	if (marker)
		n += (size_t)fprintf(f, "%s\n", marker);
	while (n + 32 <= size)
		n += (size_t)fprintf(f, "line %05zu of some source text\n",
				     n / 32);
	while (n++ < size)
		fputc('.', f);
	if (fclose(f) != 0)
		die(path);
}

static const char *fs_name(const char *dir)
{
	struct statfs sf;

	if (statfs(dir, &sf) != 0)
		return "?";
	switch ((unsigned long)sf.f_type) {
	case 0xef53:
		return "ext4";
	case 0x01021994:
		return "tmpfs";
	case 0x9123683e:
		return "btrfs";
	case 0x58465342:
		return "xfs";
	case 0x794c7630:
		return "overlayfs";
	default:
		return "other";
	}
}

static void report(const char *what, double plain, double fenced, double target)
{
	double ratio = fenced / plain;

	printf("  %-26s plain %9.1f us  fenced %9.1f us  ratio %5.2f", what,
	       plain, fenced, ratio);
	if (target > 0)
		printf("  (target <= %.1f: %s)", target,
		       ratio <= target ? "met" : "MISSED");
	putchar('\n');
}

int main(int argc, char **argv)
{
	struct ward_fs_content c = {0};
	struct ward_fs_denial d;
	ward_policy *policy = NULL;
	ward_rules *rules = NULL;
	struct ward_rules_env env = {0};
	char dir[512] = "", target[600], tmp[600], rfile[600], efile[600];
	char data[WRITE_SIZE], *buf;
	double *pw, *pwd, *fw, *pr, *pr2, *fr, *frr, *pe, *fe, t;
	static const char *const markers[] = {"MARKER_A", "MARKER_B"};
	size_t rounds = 300, reads, i;
	int cur = 0, dirfd;
	bool made = false;
	int opt;

	while ((opt = getopt(argc, argv, "n:d:")) != -1) {
		switch (opt) {
		case 'n':
			rounds = strtoul(optarg, NULL, 10);
			break;
		case 'd':
			snprintf(dir, sizeof(dir), "%s", optarg);
			break;
		default:
			fprintf(stderr, "usage: bench_fsfence [-n ROUNDS] "
					"[-d DIR]\n");
			return 2;
		}
	}
	if (rounds < 3)
		rounds = 3;
	reads = rounds * 50;
	if (!*dir) {
		snprintf(dir, sizeof(dir), "/var/tmp/bench-fsfence-XXXXXX");
		if (!mkdtemp(dir))
			die("mkdtemp");
		made = true;
	}
	snprintf(target, sizeof(target), "%s/w.txt", dir);
	snprintf(tmp, sizeof(tmp), "%s/.w.txt.tmp", dir);
	snprintf(rfile, sizeof(rfile), "%s/r.txt", dir);
	snprintf(efile, sizeof(efile), "%s/e.txt", dir);
	memset(data, 'w', sizeof(data));
	put_text(target, WRITE_SIZE, NULL);
	put_text(rfile, READ_SIZE, NULL);
	put_text(efile, READ_SIZE, "MARKER_A");
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		die(dir);
	errno = 0;
	if (ward_policy_new(&policy, WARD_MODE_WORKSPACE_WRITE, dir) != 0)
		die("policy");
	pw = calloc(rounds, sizeof(double));
	pwd = calloc(rounds, sizeof(double));
	fw = calloc(rounds, sizeof(double));
	pe = calloc(rounds, sizeof(double));
	fe = calloc(rounds, sizeof(double));
	pr = calloc(reads, sizeof(double));
	pr2 = calloc(reads, sizeof(double));
	fr = calloc(reads, sizeof(double));
	frr = calloc(reads, sizeof(double));
	if (!pw || !pwd || !fw || !pe || !fe || !pr || !pr2 || !fr || !frr)
		die("calloc");

	/* Warm up caches and the openat2 detection. */
	for (i = 0; i < 20; i++) {
		plain_read(&buf, rfile);
		free(buf);
		if (ward_fs_read(&c, &d, policy, rfile, NULL) != 0)
			die("fenced read");
		ward_fs_content_clear(&c);
	}

	for (i = 0; i < rounds; i++) {
		bool fenced_first = i % 2;

		for (int k = 0; k < 2; k++) {
			if ((k == 0) == fenced_first) {
				t = now_us();
				if (ward_fs_write(&d, policy, target, data,
						  sizeof(data), NULL) != 0)
					die("fenced write");
				fw[i] = now_us() - t;
				t = now_us();
				if (ward_fs_edit(NULL, &d, policy, efile,
						 markers[cur], markers[!cur],
						 NULL) != 0)
					die("fenced edit");
				fe[i] = now_us() - t;
				cur = !cur;
			} else {
				t = now_us();
				plain_write(tmp, target, data, sizeof(data));
				pw[i] = now_us() - t;
				t = now_us();
				plain_write_dirsync(dirfd, tmp, target, data,
						    sizeof(data));
				pwd[i] = now_us() - t;
				t = now_us();
				plain_edit(tmp, efile, markers[cur],
					   markers[!cur]);
				pe[i] = now_us() - t;
				cur = !cur;
			}
		}
	}

	for (i = 0; i < reads; i++) {
		t = now_us();
		plain_read(&buf, rfile);
		pr[i] = now_us() - t;
		free(buf);
		t = now_us();
		if (ward_fs_read(&c, &d, policy, rfile, NULL) != 0)
			die("fenced read");
		fr[i] = now_us() - t;
		ward_fs_content_clear(&c);
	}

	/* One `--` rule elsewhere: now every read is resolved and judged. */
	env.workspace = dir;
	if (ward_rules_new(&rules) != 0 ||
	    ward_rules_add(rules, "-- /nonexistent/secret", &env, NULL) != 0 ||
	    ward_policy_set_rules(policy, rules) != 0)
		die("rules");
	for (i = 0; i < reads; i++) {
		t = now_us();
		plain_read(&buf, rfile);
		pr2[i] = now_us() - t;
		free(buf);
		t = now_us();
		if (ward_fs_read(&c, &d, policy, rfile, NULL) != 0)
			die("fenced read (rules)");
		frr[i] = now_us() - t;
		ward_fs_content_clear(&c);
	}

	printf("fsfence: medians of %zu rounds (reads: %zu), workspace on "
	       "%s, workspace-write\n",
	       rounds, reads, fs_name(dir));
	report("write 1 KiB (durable)", median(pw, rounds), median(fw, rounds),
	       1.5);
	report("  vs plain + dir fsync", median(pwd, rounds),
	       median(fw, rounds), 0);
	report("read 4 KiB text", median(pr, reads), median(fr, reads), 1.2);
	report("read 4 KiB, one -- rule", median(pr2, reads),
	       median(frr, reads), 0);
	report("edit 4 KiB (durable)", median(pe, rounds), median(fe, rounds),
	       0);

	ward_policy_free(policy);
	ward_rules_free(rules);
	close(dirfd);
	if (made) {
		unlink(target);
		unlink(rfile);
		unlink(efile);
		rmdir(dir);
	}
	free(pw);
	free(pwd);
	free(fw);
	free(pe);
	free(fe);
	free(pr);
	free(pr2);
	free(fr);
	free(frr);
	return 0;
}
