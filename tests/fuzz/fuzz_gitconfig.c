/*
 * fuzz_gitconfig — libFuzzer target for gitconfig.c, the bounded scan of
 * git configuration text that decides which hooks directory and included
 * files ward protects. The text is the repository's (a command cannot
 * write it while it is protected, but a repository's own files and the
 * user's are read every call).
 *
 * Under test: src/libward/policy/gitconfig.c
 *
 * Invariants: no crash, no leak; every reported value is a NUL-terminated
 * string no longer than the input (unescaping never grows text); a scan
 * that succeeds reports the same values when run twice; an error names a
 * line that exists.
 *
 * Build: make build/fuzz/fuzz_gitconfig
 * Run:   build/fuzz/fuzz_gitconfig -max_total_time=60 \
 *          -dict=tests/fuzz/corpus/gitconfig.dict \
 *          build/fuzz/corpus_gitconfig tests/fuzz/corpus/gitconfig
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libward/policy/gitconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
	size_t input;
	size_t n;
	unsigned long sum; /* of lengths and keys, to compare two scans */
};

static void on_key(void *ctx, enum ward_gitcfg_key key, const char *value,
		   unsigned line)
{
	struct seen *s = ctx;
	size_t len = value ? strlen(value) : 0;

	if (len > s->input || line == 0)
		abort();
	s->n++;
	s->sum += len * 31 + (unsigned long)key * 7 + line;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct seen a = {size, 0, 0}, b = {size, 0, 0};
	unsigned bad = 0, lines = 1;
	int ea, eb;

	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	ea = ward_gitconfig_scan((const char *)data, size, on_key, &a, &bad);
	if (ea != 0 && ea != -EINVAL)
		abort();
	if (ea == -EINVAL && (bad == 0 || bad > lines + 1))
		abort();
	eb = ward_gitconfig_scan((const char *)data, size, on_key, &b, NULL);
	if (ea != eb || a.n != b.n || a.sum != b.sum)
		abort();
	return 0;
}
