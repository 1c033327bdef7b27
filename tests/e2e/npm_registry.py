#!/usr/bin/python3
"""npm_registry.py DIR — a throwaway npm registry on 127.0.0.1 for tests.

Serves every NAME-VERSION.tgz in DIR (as `npm pack` writes them) the way
the npm registry does: GET /NAME is the package document (its versions,
each with its package.json and dist: tarball, shasum, integrity), GET
/NAME/-/FILE.tgz the tarball; anything else is 404. Binds an ephemeral
port, prints it on the first line of stdout, and serves until killed (or
for --lifetime seconds, 300 by default, so a test that dies cannot leave
it behind forever).
"""
import base64
import hashlib
import http.server
import json
import os
import sys
import tarfile
import threading


def packages(root, base):
    docs = {}
    for name in sorted(os.listdir(root)):
        if not name.endswith(".tgz"):
            continue
        path = os.path.join(root, name)
        with tarfile.open(path) as t:
            meta = json.load(t.extractfile("package/package.json"))
        data = open(path, "rb").read()
        meta["dist"] = {
            "tarball": f"{base}/{meta['name']}/-/{name}",
            "shasum": hashlib.sha1(data).hexdigest(),
            "integrity": "sha512-"
            + base64.b64encode(hashlib.sha512(data).digest()).decode(),
        }
        doc = docs.setdefault(meta["name"], {
            "name": meta["name"], "dist-tags": {}, "versions": {}})
        doc["versions"][meta["version"]] = meta
        doc["dist-tags"]["latest"] = meta["version"]
    return docs


def main():
    root = sys.argv[1]
    lifetime = 300
    if len(sys.argv) > 3 and sys.argv[2] == "--lifetime":
        lifetime = int(sys.argv[3])
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), None)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    docs = packages(root, base)

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def reply(self, code, body, ctype):
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            parts = self.path.split("?")[0].strip("/").split("/")
            name = parts[0].replace("%2f", "/").replace("%2F", "/")
            if len(parts) == 1 and name in docs:
                self.reply(200, json.dumps(docs[name]).encode(),
                           "application/json")
            elif (len(parts) == 3 and parts[1] == "-" and name in docs
                  and os.path.isfile(os.path.join(root, parts[2]))):
                self.reply(200, open(os.path.join(root, parts[2]),
                                     "rb").read(),
                           "application/octet-stream")
            else:
                self.reply(404, b'{"error":"not found"}',
                           "application/json")

    server.RequestHandlerClass = Handler
    print(server.server_address[1], flush=True)
    threading.Timer(lifetime, server.shutdown).start()
    server.serve_forever()


main()
