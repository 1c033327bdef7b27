/*
 * ward — JSON renderings of a call's report (see ward/json.h): its
 * denials and its network, one rendering for every front end.
 */
#include <stdlib.h>

#include <jansson.h>

#include "ward/json.h"
#include "ward/render.h"

#include "internal.h"

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
		    ward_json_str(d->cause == WARD_DENIAL_MODE ? NULL
							       : d->rule),
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
	return json_pack("{s:s, s:o, s:o, s:b}", "mode",
			 ward_network_name(ward_call_network(call)),
			 "connections", conns, "denied", denied, "off_denied",
			 ward_call_network_off_denied(call));
}
