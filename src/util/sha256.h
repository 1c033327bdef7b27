/*
 * ward — SHA-256 (FIPS 180-4), internal to libward.
 *
 * The guard (guard.c) compares what a confined run left in a protected
 * path with what was there before by content, not by size and time stamps
 * (a command can restore both), and must do so for files it does not keep
 * a copy of. A digest is the bounded way to remember content. Written
 * here, from the standard, because libward's static build carries no
 * crypto library and needs nothing else from one.
 */
#ifndef WARD_SHA256_H
#define WARD_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define WARD_SHA256_LEN 32

struct ward_sha256 {
	uint32_t h[8];
	uint64_t bytes; /* message length so far */
	unsigned char buf[64];
	size_t used; /* bytes waiting in @buf */
};

void ward_sha256_init(struct ward_sha256 *s);
void ward_sha256_update(struct ward_sha256 *s, const void *data, size_t len);
void ward_sha256_final(unsigned char out[WARD_SHA256_LEN],
		       struct ward_sha256 *s);

#endif
