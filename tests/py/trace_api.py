#!/usr/bin/env python3
"""trace_api.py - a loopback HTTP server that answers as a Jaeger query
service or a Grafana Tempo does, from OTLP/JSON traces (the JSON Lines that
`tailtriage sim` writes), for tests/sh/pull_traces.sh.

No Jaeger or Tempo binary can be installed here, so this answers with the
documented response shapes. Where each shape comes from:
  - Jaeger v2, HTTP API v3 (grpc-gateway JSON), from jaegertracing/jaeger:
      cmd/jaeger/internal/extension/jaegerquery/internal/apiv3/snapshots/
        GetServices.json        {"services": [...]}
        GetOperations.json      {"operations": [{"name", "spanKind"}]}
        FindTraceSummaries.json {"summaries": [{"traceId",
                                 "minStartTimeUnixNano", "maxEndTimeUnixNano",
                                 "rootServiceName", "rootOperationName",
                                 "spanCount", "errorSpanCount", "services"}]}
        FindTraces.json,
        GetTrace.json           {"result": {"resourceSpans": [...]}}
      .../apiv3/http_gateway.go: a search that finds nothing answers 404
        {"error":{"httpCode":404,"message":"No traces found"}} (text/plain,
        as http.Error writes it); a missing trace 404 with the same shape;
        the routes /api/v3/traces, /api/v3/traces/{trace_id},
        /api/v3/trace-summaries, /api/v3/services, /api/v3/operations;
      .../apiv3/query_parser.go: query.service_name, query.operation_name,
        query.start_time_min/max (RFC 3339), query.duration_min (a Go
        duration), query.num_traces (the snake_case aliases) and their
        camelCase names.
  - Jaeger v1 query service: GET /api/services {"data": [...]}, GET
    /api/traces?service&operation&start&end (microseconds)&minDuration&limit
    and GET /api/traces/ID answer {"data": [trace], "total", "limit",
    "offset", "errors"}, a trace in Jaeger's JSON model (traceID, spans with
    startTime/duration in microseconds, tags, references, processID;
    processes); a missing trace is 404 with errors [{"code":404,"msg":
    "trace not found"}].
  - Tempo, from grafana/tempo docs/sources/tempo/api_docs/_index.md: GET
    /api/search (q TraceQL, start/end in seconds, limit, spss) answers
    {"traces":[{"traceID","rootServiceName","rootTraceName",
    "startTimeUnixNano","durationMs","spanSets":[{"spans":[{"spanID",
    "startTimeUnixNano","durationNanos"}],"matched"}]}],"metrics":{...}};
    GET /api/v2/traces/ID {"trace": {"resourceSpans": [...]}}; GET
    /api/traces/ID (v1) {"batches": [...]} (pkg/tempopb/trace_utils.go);
    a missing trace is 404; the tenant is X-Scope-OrgID for Tempo, x-tenant
    for Jaeger (each one's default).

Options (see main()): --mode jaeger-v3 | jaeger-v3-old (no
trace-summaries route) | jaeger-v1 | tempo | tempo-v1 | html (a server that
is neither), --data FILE (OTLP JSON Lines, read once), --port-file F (the
bound port is written there), --tenant T (requests without the tenant
header above, with T, get 401), --token T (requests without 'Authorization:
Bearer T' get 401), --busy N (the first N requests get 429 with
Retry-After: 0), --die-after N (the process exits after answering N trace
fetches: a server killed mid-pull), --max-limit N (no search lists more
than N, whatever it asks), --log F (one line per request), --repeat N
(Jaeger v3 searches list every trace N times, as a back end that reads
several replicas of its storage may; copy k of N ends k * (1 + the
trace's rank % 7) ms early, so only the longest copy, listed last, is the
trace's extent).

Searches list the newest matching traces first, as Jaeger's UI shows them:
the tests check that a sample is not "the newest N". Every request loop
is bounded by the client; the server exits on SIGTERM or when its parent
test script kills it.
"""
import argparse
import json
import os
import re
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def attr_value(v):
    for k in ("stringValue", "intValue", "doubleValue", "boolValue"):
        if k in v:
            return k, v[k]
    return "stringValue", ""


class Traces:
    """Traces by id, each an OTLP resourceSpans list, plus per span what
    searches match on."""

    def __init__(self, path):
        self.by_id = {}      # trace id -> list of resourceSpans (spans of this trace only)
        self.spans = {}      # trace id -> [(service, name, start, end)]
        self.services = set()
        self.ops = {}
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                req = json.loads(line)
                for rs in req.get("resourceSpans", []):
                    svc = ""
                    for kv in rs.get("resource", {}).get("attributes", []):
                        if kv["key"] == "service.name":
                            svc = kv["value"].get("stringValue", "")
                    self.services.add(svc)
                    per = {}
                    for ss in rs.get("scopeSpans", []):
                        for sp in ss.get("spans", []):
                            tid = sp["traceId"]
                            per.setdefault(tid, {}).setdefault(id(ss), (ss, []))[1].append(sp)
                            s, e = int(sp["startTimeUnixNano"]), int(sp["endTimeUnixNano"])
                            self.spans.setdefault(tid, []).append((svc, sp.get("name", ""), s, e, sp))
                            self.ops.setdefault(svc, set()).add((sp.get("name", ""), sp.get("kind", 0)))
                    for tid, groups in per.items():
                        out = {"resource": rs.get("resource", {}), "scopeSpans": []}
                        for ss, spans in groups.values():
                            out["scopeSpans"].append({"scope": ss.get("scope", {}), "spans": spans})
                        self.by_id.setdefault(tid, []).append(out)

    def find(self, service, op, tmin, tmax, dmin):
        """(trace id, entry start, entry duration, trace start, trace end) of
        the traces with a span of service (and op) starting in [tmin, tmax)
        that lasted at least dmin, newest first."""
        out = []
        for tid, spans in self.spans.items():
            best = None
            for svc, name, s, e, _ in spans:
                if svc != service or (op and name != op):
                    continue
                if not (tmin <= s < tmax) or e - s < dmin:
                    continue
                if best is None or e - s > best[1]:
                    best = (s, e - s)
            if best:
                ts = min(x[2] for x in spans)
                te = max(x[3] for x in spans)
                out.append((tid, best[0], best[1], ts, te))
        out.sort(key=lambda x: (-x[1], x[0]))
        return out


def go_duration(s):
    """A Go duration ("1500000ns", "1.5ms", "2s") in ns."""
    m = re.fullmatch(r"([0-9.]+)(ns|us|µs|ms|s|m|h)", s)
    if not m:
        raise ValueError(s)
    mult = {"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9, "h": 3600e9}[m.group(2)]
    return int(float(m.group(1)) * mult)


def rfc3339_ns(s):
    m = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?Z", s)
    if not m:
        raise ValueError(s)
    import calendar
    sec = calendar.timegm(time.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S"))
    frac = (m.group(2) or ".0")[1:]
    return sec * 10**9 + int((frac + "000000000")[:9])


def jaeger_v1_trace(tid, rss):
    """OTLP resourceSpans of one trace in Jaeger's JSON model."""
    procs, spans = {}, []
    kinds = {1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}
    for i, rs in enumerate(rss):
        pid = "p%d" % (i + 1)
        tags, svc = [], ""
        for kv in rs.get("resource", {}).get("attributes", []):
            t, v = attr_value(kv["value"])
            if kv["key"] == "service.name":
                svc = v
            else:
                tags.append({"key": kv["key"], "type": "string", "value": str(v)})
        procs[pid] = {"serviceName": svc, "tags": tags}
        for ss in rs["scopeSpans"]:
            for sp in ss["spans"]:
                s, e = int(sp["startTimeUnixNano"]), int(sp["endTimeUnixNano"])
                tags = []
                for kv in sp.get("attributes", []):
                    t, v = attr_value(kv["value"])
                    if t == "intValue":
                        tags.append({"key": kv["key"], "type": "int64", "value": int(v)})
                    elif t == "doubleValue":
                        tags.append({"key": kv["key"], "type": "float64", "value": float(v)})
                    elif t == "boolValue":
                        tags.append({"key": kv["key"], "type": "bool", "value": bool(v)})
                    else:
                        tags.append({"key": kv["key"], "type": "string", "value": str(v)})
                k = kinds.get(sp.get("kind", 0))
                if k:
                    tags.append({"key": "span.kind", "type": "string", "value": k})
                refs = []
                if sp.get("parentSpanId"):
                    refs.append({"refType": "CHILD_OF", "traceID": tid, "spanID": sp["parentSpanId"]})
                spans.append({"traceID": tid, "spanID": sp["spanId"], "operationName": sp.get("name", ""),
                              "references": refs, "startTime": s / 1000, "duration": (e - s) / 1000,
                              "tags": tags, "logs": [], "processID": pid, "warnings": None, "flags": 1})
    return {"traceID": tid, "spans": spans, "processes": procs, "warnings": None}


class State:
    def __init__(self, args):
        self.args = args
        self.data = Traces(args.data) if args.data else None
        self.lock = threading.Lock()
        self.requests = 0
        self.fetches = 0
        self.log = open(args.log, "a") if args.log else None


def make_handler(state):
    a = state.args

    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # an answer is two writes (headers, then body) on a kept-alive
        # connection: with Nagle's algorithm the body waits for the
        # client's delayed ACK of the headers, 40 ms an answer
        disable_nagle_algorithm = True

        def log_message(self, *args):
            pass

        def send(self, code, body, ctype="application/json", headers=()):
            data = body if isinstance(body, bytes) else body.encode()
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            for k, v in headers:
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def js(self, code, obj, ctype="application/json"):
            self.send(code, json.dumps(obj, separators=(",", ":")), ctype)

        def do_GET(self):
            u = urllib.parse.urlsplit(self.path)
            q = {k: v[-1] for k, v in urllib.parse.parse_qs(u.query, keep_blank_values=True).items()}
            with state.lock:
                state.requests += 1
                n = state.requests
                if state.log:
                    state.log.write("GET %s\n" % self.path)
                    state.log.flush()
            if a.busy and n <= a.busy:
                return self.send(429, "too many requests\n", "text/plain", [("Retry-After", "0")])
            if a.token and self.headers.get("Authorization") != "Bearer " + a.token:
                return self.send(401, "Unauthorized\n", "text/plain")
            if a.tenant and a.mode.startswith("jaeger"):
                # Jaeger's query service with multi_tenancy enabled (its
                # internal/tenancy/http.go): the x-tenant header, 401 without
                # it or with a tenant it does not know
                t = self.headers.get("x-tenant")
                if t != a.tenant:
                    return self.send(401, "missing tenant header" if t is None else "unknown tenant",
                                     "text/plain")
            elif a.tenant and self.headers.get("X-Scope-OrgID") != a.tenant:
                return self.send(401, "no org id\n", "text/plain")
            if a.mode == "html":
                return self.send(200, "<!doctype html><html><body>It works!</body></html>\n", "text/html")
            try:
                if a.mode.startswith("jaeger-v3"):
                    return self.jaeger_v3(u.path, q)
                if a.mode == "jaeger-v1":
                    return self.jaeger_v1(u.path, q)
                return self.tempo(u.path, q)
            except (ValueError, KeyError) as e:
                return self.send(400, "bad request: %s\n" % e, "text/plain")

        def limit(self, n):
            return min(n, a.max_limit) if a.max_limit else n

        def fetched(self):
            with state.lock:
                state.fetches += 1
                if a.die_after and state.fetches > a.die_after:
                    os._exit(0)   # killed mid-pull: no answer, the socket drops

        def not_found_v3(self, msg):
            return self.send(404, json.dumps({"error": {"httpCode": 404, "message": msg}}) + "\n",
                             "text/plain; charset=utf-8")

        def jaeger_v3(self, path, q):
            d = state.data

            def p(canon, old):
                return q.get(canon, q.get(old))
            if path == "/api/v3/services":
                return self.js(200, {"services": sorted(d.services)})
            if path == "/api/v3/operations":
                svc = p("service", "service")
                return self.js(200, {"operations": [{"name": n, "spanKind": "server" if k == 2 else ""}
                                                    for n, k in sorted(d.ops.get(svc, ()))]})
            m = re.fullmatch(r"/api/v3/traces/([0-9a-fA-F]+)", path)
            if m:
                self.fetched()
                rss = d.by_id.get(m.group(1).lower().rjust(32, "0"))
                if rss is None:
                    return self.not_found_v3("trace not found")
                return self.js(200, {"result": {"resourceSpans": rss}})
            if path in ("/api/v3/traces", "/api/v3/trace-summaries"):
                if path == "/api/v3/trace-summaries" and a.mode == "jaeger-v3-old":
                    return self.send(404, "404 page not found\n", "text/plain; charset=utf-8")
                svc = p("query.serviceName", "query.service_name")
                op = p("query.operationName", "query.operation_name")
                tmin = rfc3339_ns(p("query.startTimeMin", "query.start_time_min"))
                tmax = rfc3339_ns(p("query.startTimeMax", "query.start_time_max"))
                dmin = go_duration(p("query.durationMin", "query.duration_min") or "0ns")
                n = int(p("query.searchDepth", "query.search_depth") or q.get("query.num_traces") or 20)
                found = d.find(svc, op, tmin, tmax, dmin)[:self.limit(n)]
                if not found:
                    return self.not_found_v3("No traces found")
                if path == "/api/v3/trace-summaries":
                    return self.js(200, {"summaries": [{
                        "errorSpanCount": 0,
                        "maxEndTimeUnixNano": str(max(ts, te - k * (1 + i % 7) * 10**6)),
                        "minStartTimeUnixNano": str(ts), "rootOperationName": op or "",
                        "rootServiceName": svc, "services": [{"name": svc, "spanCount": 1}],
                        "spanCount": len(d.spans[tid]), "traceId": tid}
                        for i, (tid, _, _, ts, te) in enumerate(found)
                        for k in range(a.repeat - 1, -1, -1)]})
                rss = [rs for f in found for _ in range(a.repeat) for rs in d.by_id[f[0]]]
                return self.js(200, {"result": {"resourceSpans": rss}})
            return self.send(404, "404 page not found\n", "text/plain; charset=utf-8")

        def jaeger_v1(self, path, q):
            d = state.data
            if path == "/api/services":
                s = sorted(d.services)
                return self.js(200, {"data": s, "total": len(s), "limit": 0, "offset": 0, "errors": None})
            m = re.fullmatch(r"/api/traces/([0-9a-fA-F]+)", path)
            if m:
                self.fetched()
                tid = m.group(1).lower().rjust(32, "0")
                rss = d.by_id.get(tid)
                if rss is None:
                    return self.js(404, {"data": None, "total": 0, "limit": 0, "offset": 0,
                                         "errors": [{"code": 404, "msg": "trace not found"}]})
                return self.js(200, {"data": [jaeger_v1_trace(tid, rss)], "total": 0, "limit": 0,
                                     "offset": 0, "errors": None})
            if path == "/api/traces":
                dmin = go_duration(q["minDuration"]) if q.get("minDuration") else 0
                found = d.find(q["service"], q.get("operation"), int(q["start"]) * 1000,
                               int(q["end"]) * 1000, dmin)[:self.limit(int(q.get("limit", 20)))]
                return self.js(200, {"data": [jaeger_v1_trace(f[0], d.by_id[f[0]]) for f in found],
                                     "total": len(found), "limit": 0, "offset": 0, "errors": None})
            return self.send(404, "404 page not found\n", "text/plain")

        def tempo(self, path, q):
            d = state.data
            if path == "/api/search/tag/service.name/values":
                return self.js(200, {"tagValues": sorted(d.services), "metrics": {}})
            m = re.fullmatch(r"/api/(v2/)?traces/([0-9a-fA-F]+)", path)
            if m:
                if m.group(1) and a.mode == "tempo-v1":
                    return self.send(404, "404 page not found\n", "text/plain")
                self.fetched()
                rss = d.by_id.get(m.group(2).lower().rjust(32, "0"))
                if rss is None:
                    return self.send(404, "trace not found\n", "text/plain")
                if m.group(1):
                    return self.js(200, {"trace": {"resourceSpans": rss}, "metrics": {"inspectedBytes": "1"}})
                return self.js(200, {"batches": rss})
            if path == "/api/search":
                tq = q.get("q", "")
                svc = re.search(r'resource\.service\.name="((?:[^"\\]|\\.)*)"', tq)
                op = re.search(r'(?<![.\w])name="((?:[^"\\]|\\.)*)"', tq)
                dur = re.search(r"duration>=(\d+)ns", tq)
                start, end = int(q.get("start", 0)), int(q.get("end", 0))
                if not svc:
                    found = []
                else:
                    found = d.find(svc.group(1), op.group(1) if op else None, start * 10**9,
                                   end * 10**9 if end else 2**63, int(dur.group(1)) if dur else 0)
                found = found[:self.limit(int(q.get("limit", 20)))]
                traces = []
                for tid, es, ed, ts, te in found:
                    traces.append({"traceID": tid.lstrip("0") or "0", "rootServiceName": svc.group(1),
                                   "rootTraceName": op.group(1) if op else "",
                                   "startTimeUnixNano": str(ts), "durationMs": (te - ts) // 10**6,
                                   "spanSets": [{"spans": [{"spanID": "0", "startTimeUnixNano": str(es),
                                                            "durationNanos": str(ed)}], "matched": 1}]})
                return self.js(200, {"traces": traces, "metrics": {"inspectedTraces": len(d.spans),
                                                                  "totalBlocks": 1}})
            return self.send(404, "404 page not found\n", "text/plain")

    return H


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", required=True,
                    choices=["jaeger-v3", "jaeger-v3-old", "jaeger-v1", "tempo", "tempo-v1", "html"])
    ap.add_argument("--data")
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--tenant")
    ap.add_argument("--token")
    ap.add_argument("--busy", type=int, default=0)
    ap.add_argument("--die-after", type=int, default=0)
    ap.add_argument("--max-limit", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--log")
    ap.add_argument("--lifetime", type=float, default=600, help="exit after this many seconds")
    args = ap.parse_args()
    state = State(args)
    srv = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(state))
    srv.daemon_threads = True
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, args.port_file)
    threading.Timer(args.lifetime, lambda: os._exit(0)).start()
    srv.serve_forever()


if __name__ == "__main__":
    main()
