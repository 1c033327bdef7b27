/*
 * ward — text made safe to show on one line (include/ward/escalation.h:
 * ward_escalation_escape, ward_escalation_put): control characters and
 * characters that show nothing a person can read, escaped. Its own module,
 * below everything that prints such text (the approval prompt in
 * escalation.c, the denial report in render.c, the fence's errors), so
 * that none of them calls another for it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "util/util.h"
#include "ward/escalation.h"

/* Inclusive ranges of code points that show nothing a person can read. */
static const struct {
	unsigned lo, hi;
} hidden_ranges[] = {
    {0x0080, 0x009f},	 /* C1 controls */
    {0x00a0, 0x00a0},	 /* no-break space */
    {0x00ad, 0x00ad},	 /* soft hyphen (Cf) */
    {0x034f, 0x034f},	 /* combining grapheme joiner */
    {0x0600, 0x0605},	 /* Arabic number signs (Cf) */
    {0x061c, 0x061c},	 /* Arabic letter mark (Cf) */
    {0x06dd, 0x06dd},	 /* Cf */
    {0x070f, 0x070f},	 /* Cf */
    {0x0890, 0x0891},	 /* Cf */
    {0x08e2, 0x08e2},	 /* Cf */
    {0x115f, 0x1160},	 /* Hangul fillers */
    {0x1680, 0x1680},	 /* Ogham space */
    {0x17b4, 0x17b5},	 /* Khmer inherent vowels (invisible) */
    {0x180b, 0x180f},	 /* Mongolian variation selectors, vowel sep. */
    {0x2000, 0x200f},	 /* spaces, zero-width space/joiners, LRM/RLM */
    {0x2028, 0x202f},	 /* line/paragraph separators, bidi embeddings
			   and overrides, narrow no-break space */
    {0x205f, 0x206f},	 /* math space, word joiner, invisible operators,
			   bidi isolates, deprecated format characters */
    {0x2800, 0x2800},	 /* braille blank */
    {0x3000, 0x3000},	 /* ideographic space */
    {0x3164, 0x3164},	 /* Hangul filler */
    {0xe000, 0xf8ff},	 /* private use */
    {0xfdd0, 0xfdef},	 /* noncharacters */
    {0xfe00, 0xfe0f},	 /* variation selectors */
    {0xfeff, 0xfeff},	 /* zero-width no-break space / BOM (Cf) */
    {0xffa0, 0xffa0},	 /* halfwidth Hangul filler */
    {0xfff0, 0xfffb},	 /* specials, interlinear annotation (Cf) */
    {0x110bd, 0x110bd},	 /* Cf */
    {0x110cd, 0x110cd},	 /* Cf */
    {0x13430, 0x1343f},	 /* Egyptian format controls (Cf) */
    {0x1bca0, 0x1bca3},	 /* shorthand format controls (Cf) */
    {0x1d173, 0x1d17a},	 /* musical format controls (Cf) */
    {0xe0000, 0xe007f},	 /* tag characters */
    {0xe0100, 0xe01ef},	 /* variation selectors supplement */
    {0xf0000, 0x10ffff}, /* supplementary private use */
};

static bool hidden_cp(unsigned cp)
{
	if ((cp & 0xfffe) == 0xfffe)
		return true; /* U+xFFFE, U+xFFFF: noncharacters */
	for (size_t i = 0; i < sizeof(hidden_ranges) / sizeof(hidden_ranges[0]);
	     i++) {
		if (cp >= hidden_ranges[i].lo && cp <= hidden_ranges[i].hi)
			return true;
	}
	return false;
}

int ward_escalation_escape(char **out, const char *text)
{
	const unsigned char *start = (const unsigned char *)(text ? text : "");
	const unsigned char *p = start;
	size_t len = strlen((const char *)start), o = 0;
	char *buf;

	if (!out)
		return ward_err(WARD_EINVAL, "escape: no output pointer");
	/* At most 10 bytes ("\U0010ffff") for every input byte. */
	buf = malloc(len * 10 + 1);
	if (!buf)
		return ward_err(-ENOMEM, "out of memory");
	while (*p) {
		unsigned cp = 0;
		size_t n;

		if (*p < 0x80) {
			if (*p < 0x20 || *p == 0x7f)
				o += (size_t)sprintf(buf + o, "\\x%02x", *p);
			else if (*p == '\\') /* a typed "\x0a" stays text */
				o += (size_t)sprintf(buf + o, "\\\\");
			else
				buf[o++] = (char)*p;
			p++;
			continue;
		}
		n = util_utf8_decode(&cp, p, len - (size_t)(p - start));
		if (n == 0) {
			o += (size_t)sprintf(buf + o, "\\x%02x", *p);
			p++;
			continue;
		}
		if (hidden_cp(cp)) {
			o += (size_t)sprintf(
			    buf + o, cp > 0xffff ? "\\U%08x" : "\\u%04x", cp);
		} else {
			memcpy(buf + o, p, n);
			o += n;
		}
		p += n;
	}
	buf[o] = '\0';
	*out = buf;
	return 0;
}

int ward_escalation_put(FILE *f, const char *text)
{
	char *e = NULL;
	int err;

	if (!text)
		return 0;
	err = ward_escalation_escape(&e, text);
	if (err)
		return err;
	fputs(e, f);
	free(e);
	return 0;
}
