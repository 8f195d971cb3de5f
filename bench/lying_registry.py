#!/usr/bin/env python3
"""A registry that lies, for bench/registry's peak-RSS measurement of refused pulls.

    bench/lying_registry.py PORT MODE

MODE is one of
  layer     the manifest declares a 1 GiB layer (the bundle size limit) whose digest the
            bytes will not have; the blob streams 1 GiB of zeros, Content-Length honest
  manifest  the manifest body never ends (no Content-Length)
  declared  the manifest declares a 2 GiB Content-Length
  token     every request gets a 401 naming a token realm whose answer never ends

Serves on 127.0.0.1:PORT until killed. Standard library only.
"""

import hashlib
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

GIB = 1 << 30
CHUNK = b"\0" * (1 << 20)
MEDIA = "application/vnd.oci.image.manifest.v1+json"


def manifest():
    body = {
        "schemaVersion": 2,
        "mediaType": MEDIA,
        "artifactType": "application/vnd.skillbundle.bundle.v1",
        "config": {
            "mediaType": "application/vnd.oci.empty.v1+json",
            "digest": "sha256:" + hashlib.sha256(b"{}").hexdigest(),
            "size": 2,
        },
        "layers": [
            {
                "mediaType": "application/vnd.skillbundle.bundle.v1.tar+gzip",
                # Not the digest of a GiB of zeros.
                "digest": "sha256:" + hashlib.sha256(b"not these bytes").hexdigest(),
                "size": GIB,
            }
        ],
    }
    return json.dumps(body).encode()


class Lies(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    mode = "layer"

    def log_message(self, *args):
        pass

    def endless(self, content_type):
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            while True:
                self.wfile.write(b" " * (1 << 16))
        except OSError:
            return

    def do_GET(self):
        mode = Lies.mode
        if mode == "token":
            if self.path.startswith("/token"):
                return self.endless("application/json")
            host = self.headers.get("Host", "")
            self.send_response(401)
            self.send_header(
                "WWW-Authenticate", f'Bearer realm="http://{host}/token",service="lies"'
            )
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if "/manifests/" in self.path:
            if mode == "manifest":
                return self.endless(MEDIA)
            if mode == "declared":
                self.send_response(200)
                self.send_header("Content-Type", MEDIA)
                self.send_header("Content-Length", str(2 * GIB))
                self.end_headers()
                try:
                    self.wfile.write(b"{")
                except OSError:
                    pass
                return
            body = manifest()
            self.send_response(200)
            self.send_header("Content-Type", MEDIA)
            self.send_header("Docker-Content-Digest", "sha256:" + hashlib.sha256(body).hexdigest())
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if "/blobs/" in self.path:
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(GIB))
            self.end_headers()
            try:
                for _ in range(GIB // len(CHUNK)):
                    self.wfile.write(CHUNK)
            except OSError:
                pass
            return
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()


def main():
    port, mode = int(sys.argv[1]), sys.argv[2]
    Lies.mode = mode
    ThreadingHTTPServer(("127.0.0.1", port), Lies).serve_forever()


if __name__ == "__main__":
    main()
