/*
 * ward — JSON strings from bytes that may not be UTF-8 (see ward/json.h):
 * below every module that writes JSON (the session log, the renderings of
 * a call in json_call.c).
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ward/json.h"

#include "internal.h"
#include "util/util.h"

json_t *ward_json_text(const char *buf, size_t len)
{
	const unsigned char *s = (const unsigned char *)buf;
	json_t *str;
	char *clean;
	size_t o = 0;

	if (!buf)
		buf = "", len = 0;
	str = json_stringn(buf, len);
	if (str)
		return str;
	/* Invalid UTF-8: each bad byte becomes U+FFFD (3 bytes). */
	clean = malloc(len * 3 + 1);
	if (!clean)
		return NULL;
	for (size_t i = 0; i < len;) {
		size_t n = util_utf8_decode(NULL, s + i, len - i);

		if (n == 0) {
			memcpy(clean + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
			continue;
		}
		memcpy(clean + o, s + i, n);
		o += n;
		i += n;
	}
	str = json_stringn(clean, o);
	free(clean);
	return str;
}

json_t *ward_json_str(const char *s)
{
	return s ? ward_json_text(s, strlen(s)) : json_null();
}

json_t *ward_json_strv(char *const *v)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && v && v[i]; i++)
		if (json_array_append_new(arr, ward_json_str(v[i])) != 0) {
			json_decref(arr);
			arr = NULL;
		}
	return arr;
}
