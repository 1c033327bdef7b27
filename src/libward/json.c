/*
 * ward — JSON renderings of ward's values (see ward/json.h).
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ward/json.h"
#include "ward/render.h"

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

json_t *ward_json_call_denials(const ward_call *call)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < ward_call_denial_count(call); i++) {
		const struct ward_denial *d = ward_call_denial(call, i);
		json_t *o = json_pack(
		    "{s:o, s:s, s:s, s:o, s:s, s:o, s:s}", "path",
		    ward_json_str(d->path), "operation",
		    d->operation ? d->operation : "access", "cause",
		    ward_denial_cause_name(d->cause), "rule",
		    ward_json_str(d->cause == WARD_DENIAL_MODE ? NULL : d->rule),
		    "mode", ward_mode_name(d->mode), "source",
		    ward_json_str(d->source), "how",
		    ward_denial_how_name(d->how));

		if (!o || json_array_append_new(arr, o) != 0) {
			json_decref(o);
			json_decref(arr);
			arr = NULL;
		}
	}
	return arr;
}

json_t *ward_json_call_network(const ward_call *call)
{
	json_t *conns = json_array(), *denied;
	struct ward_net_event e;
	char *text = NULL;

	for (size_t i = 0; conns && i < ward_call_net_event_count(call); i++) {
		json_t *o;

		if (ward_call_net_event(call, i, &e) != 0)
			break;
		o = json_pack("{s:o, s:i, s:s, s:s, s:I, s:I, s:o}", "host",
			      ward_json_str(e.host), "port", (int)e.port,
			      "protocol", e.protocol, "verdict", e.verdict,
			      "bytes_sent", (json_int_t)e.bytes_sent,
			      "bytes_received", (json_int_t)e.bytes_received,
			      "reason", ward_json_str(e.reason));
		if (!o || json_array_append_new(conns, o) != 0) {
			json_decref(conns);
			conns = NULL;
		}
	}
	if (!conns || ward_call_render_network(&text, call) != 0) {
		json_decref(conns);
		return NULL;
	}
	denied = ward_json_str(*text ? text : NULL);
	free(text);
	/* "o" takes both references, also when packing fails. */
	return json_pack("{s:s, s:o, s:o}", "mode",
			 ward_network_name(ward_call_network(call)),
			 "connections", conns, "denied", denied);
}
