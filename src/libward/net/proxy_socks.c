/*
 * ward — the proxy's SOCKS5 messages (RFC 1928): the method selection and
 * the CONNECT request, without authentication. BIND and UDP ASSOCIATE are
 * answered "command not supported".
 */
#include <arpa/inet.h>
#include <string.h>

#include "proxy_internal.h"

enum {
	ATYP_IPV4 = 1,
	ATYP_DOMAIN = 3,
	ATYP_IPV6 = 4,
};

enum ward_parse ward_socks5_parse_greeting(size_t *used, bool *no_auth,
					   const unsigned char *buf, size_t len,
					   const char **why)
{
	size_t n;

	if (len < 1)
		return WARD_PARSE_MORE;
	if (buf[0] != 5) {
		*why = buf[0] == 4 ? "SOCKS4 is not supported (use SOCKS5)"
				   : "not a SOCKS5 greeting";
		return WARD_PARSE_BAD;
	}
	if (len < 2)
		return WARD_PARSE_MORE;
	n = buf[1];
	if (n == 0) {
		*why = "SOCKS5 greeting offers no method";
		return WARD_PARSE_BAD;
	}
	if (len < 2 + n)
		return WARD_PARSE_MORE;
	*no_auth = memchr(buf + 2, 0x00, n) != NULL;
	*used = 2 + n;
	return WARD_PARSE_OK;
}

enum ward_parse ward_socks5_parse_request(size_t *used,
					  struct ward_socks5_request *req,
					  const unsigned char *buf, size_t len,
					  unsigned char *reply,
					  const char **why)
{
	size_t addr_len, need;

	memset(req, 0, sizeof(*req));
	*reply = WARD_SOCKS_FAILURE;
	if (len == 0)
		return WARD_PARSE_MORE;
	if (len < 4)
		goto more_or_version;
	switch (buf[3]) {
	case ATYP_IPV4:
		addr_len = 4;
		break;
	case ATYP_IPV6:
		addr_len = 16;
		break;
	case ATYP_DOMAIN:
		if (len < 5)
			goto more_or_version;
		addr_len = 1 + (size_t)buf[4];
		break;
	default:
		if (buf[0] != 5)
			goto more_or_version;
		*reply = WARD_SOCKS_BAD_ADDRESS;
		*why = "unknown SOCKS5 address type";
		return WARD_PARSE_BAD;
	}
	need = 4 + addr_len + 2;
	if (len < need)
		goto more_or_version;
	if (buf[0] != 5) {
		*why = "not a SOCKS5 request";
		return WARD_PARSE_BAD;
	}
	if (buf[1] != 1) {
		*reply = WARD_SOCKS_BAD_COMMAND;
		*why = buf[1] == 2 || buf[1] == 3
			   ? "SOCKS5 BIND and UDP ASSOCIATE are not supported"
			   : "unknown SOCKS5 command";
		return WARD_PARSE_BAD;
	}
	req->command = buf[1];
	switch (buf[3]) {
	case ATYP_IPV4:
		inet_ntop(AF_INET, buf + 4, req->host, sizeof(req->host));
		req->host_kind = WARD_HOST_IPV4;
		break;
	case ATYP_IPV6:
		inet_ntop(AF_INET6, buf + 4, req->host, sizeof(req->host));
		req->host_kind = WARD_HOST_IPV6;
		break;
	default:
		req->host_kind = ward_host_parse(
		    req->host, (const char *)buf + 5, buf[4], why);
		if (!req->host_kind) {
			*reply = WARD_SOCKS_BAD_ADDRESS;
			return WARD_PARSE_BAD;
		}
	}
	req->port = (unsigned)buf[need - 2] << 8 | buf[need - 1];
	if (req->port == 0) {
		*why = "port 0";
		return WARD_PARSE_BAD;
	}
	*used = need;
	return WARD_PARSE_OK;

more_or_version:
	if (buf[0] != 5) {
		*why = "not a SOCKS5 request";
		return WARD_PARSE_BAD;
	}
	return WARD_PARSE_MORE;
}

void ward_socks5_reply(unsigned char out[10], unsigned char code)
{
	memset(out, 0, 10);
	out[0] = 5;
	out[1] = code;
	out[3] = ATYP_IPV4;
}
