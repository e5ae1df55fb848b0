#!/usr/bin/env python3
"""canned_http.py - a loopback HTTP server that gives fixed answers, for
tests that play a broken or hostile server (tests/sh/pull_hostile.sh).

usage: canned_http.py --routes FILE --port-file FILE [--lifetime S]

FILE is a JSON list of answers, the first whose "path" matches a GET's
path (the query left out) answers it: "path" is the whole path, or a
prefix when it ends with '*'. Each answer has "status" (default 200),
"headers" (a list of [name, value]; values are sent byte for byte, as
latin-1, so a test can put control characters in them) and "body" (a
string sent as UTF-8, or "body_latin1" for raw bytes); "need", a list
of [name, value], makes an answer match only a GET that sent each of
those headers with that value (a tenant, a credential). A GET nothing
matches gets 404. The server binds 127.0.0.1 on a free port, writes the
port to --port-file and exits after --lifetime seconds.
"""
import argparse
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--routes", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--lifetime", type=float, default=120)
    a = ap.parse_args()
    routes = json.load(open(a.routes))

    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # the answer is several writes on a kept-alive connection: without
        # TCP_NODELAY each waits for the client's delayed ACK (40 ms)
        disable_nagle_algorithm = True

        def log_message(self, *args):
            pass

        def do_GET(self):
            path = self.path.split("?", 1)[0]
            for r in routes:
                p = r["path"]
                if not (path == p or (p.endswith("*") and path.startswith(p[:-1]))):
                    continue
                if all(self.headers.get(n) == v for n, v in r.get("need", [])):
                    break
            else:
                r = {"status": 404, "body": "no such route"}
            if "body_latin1" in r:
                body = r["body_latin1"].encode("latin-1")
            else:
                body = r.get("body", "").encode("utf-8")
            # raw status line and headers: send_header would not mind, but
            # be explicit that nothing is escaped
            self.wfile.write(("HTTP/1.1 %d X\r\n" % r.get("status", 200)).encode("latin-1"))
            for name, value in r.get("headers", [["Content-Type", "application/json"]]):
                self.wfile.write(("%s: %s\r\n" % (name, value)).encode("latin-1"))
            self.wfile.write(("Content-Length: %d\r\n\r\n" % len(body)).encode("latin-1"))
            self.wfile.write(body)
            self.wfile.flush()

    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    srv.daemon_threads = True
    threading.Timer(a.lifetime, srv.shutdown).start()
    with open(a.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    import os
    os.replace(a.port_file + ".tmp", a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
