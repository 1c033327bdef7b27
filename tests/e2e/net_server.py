#!/usr/bin/python3
"""Local stand-ins for the network tests (tests/e2e/network.bats).

Usage: net_server.py DIR STATE_DIR

On 127.0.0.1, each on an ephemeral port:
  http  serves DIR (files, a dumb-HTTP git repository, a pip "simple"
        index, an npm registry document) and appends "METHOD PATH" per
        request to STATE_DIR/http.log
  tcp   accepts a connection, appends "connected" to STATE_DIR/tcp.log,
        sends "hello\\n" and closes
  udp   appends every datagram it receives to STATE_DIR/udp.log (a
        DNS-like listener: anything that leaves by UDP shows up here)
The ports go to STATE_DIR/ports ("http=N tcp=N udp=N"), written once all
three listen. Serves until killed.
"""
import functools
import http.server
import os
import socket
import sys
import threading


def append(path, line):
    with open(path, "a") as f:
        f.write(line + "\n")


def main():
    directory, state = sys.argv[1], sys.argv[2]

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            append(os.path.join(state, "http.log"),
                   f"{self.command} {self.path}")
            super().do_GET()

        def do_HEAD(self):
            append(os.path.join(state, "http.log"),
                   f"{self.command} {self.path}")
            super().do_HEAD()

        def guess_type(self, path):
            # npm's registry documents have no extension.
            if os.path.basename(path) == "wardpkg" and os.path.isfile(path):
                return "application/json"
            return super().guess_type(path)

    web = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=directory))
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(16)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))

    def serve_tcp():
        while True:
            c, _ = tcp.accept()
            append(os.path.join(state, "tcp.log"), "connected")
            try:
                c.sendall(b"hello\n")
            finally:
                c.close()

    def serve_udp():
        while True:
            data, _ = udp.recvfrom(4096)
            append(os.path.join(state, "udp.log"),
                   data.decode("ascii", "replace"))

    threading.Thread(target=serve_tcp, daemon=True).start()
    threading.Thread(target=serve_udp, daemon=True).start()
    tmp = os.path.join(state, "ports.tmp")
    with open(tmp, "w") as f:
        f.write(f"http={web.server_address[1]} tcp={tcp.getsockname()[1]} "
                f"udp={udp.getsockname()[1]}\n")
    os.rename(tmp, os.path.join(state, "ports"))
    web.serve_forever()


if __name__ == "__main__":
    main()
