#!/usr/bin/python3
"""A static file server on 127.0.0.1 for the proxy's end-to-end tests.

Usage: http_server.py DIR PORT_FILE [CERT KEY]

Serves DIR over HTTP (or HTTPS with CERT and KEY) on an ephemeral port of
127.0.0.1, writes the port number to PORT_FILE once it listens, and serves
until killed. A dumb-HTTP git repository (after `git update-server-info`)
is just files, so `git clone` works against it too.
"""
import functools
import http.server
import os
import ssl
import sys


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def main():
    directory, port_file = sys.argv[1], sys.argv[2]
    handler = functools.partial(Quiet, directory=directory)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    if len(sys.argv) > 4:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(sys.argv[3], sys.argv[4])
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"{server.server_address[1]}\n")
    os.rename(tmp, port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
