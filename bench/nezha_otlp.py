#!/usr/bin/env python3
"""bench/nezha_otlp.py - one day of the Nezha dataset (FSE'23) as OTLP JSON.

Reads a checkout of https://github.com/IntelligentDDS/Nezha (nothing of it
is kept in this repository) and writes, for ONE day of it:

  OUT/traces.jsonl   OTLP/JSON ExportTraceServiceRequest lines, one per
                     span batch, spans grouped by pod (resource)
  OUT/metrics.json   OTLP/JSON metrics: each pod's CPU use per minute as
                     the gauge container.cpu.utilization{host.name=POD}
  OUT/faults.tsv     one line per labelled fault of the day: its window,
                     the baseline chosen for it and how, and what data of
                     it the checkout holds
  OUT/spans.tsv      every SERVER span's start, service and duration, for
                     the BARO-style baseline (see bench/nezha_baro.py)

How the CSV spans become OTLP spans (bench/README.md, "Nezha"):

  - service.name is the pod name without its two trailing Kubernetes
    segments (ReplicaSet hash and pod suffix): frontend-579b9bff58-t2dbm
    -> frontend; k8s.pod.name is the pod (tailtriage's host).
  - The CSVs carry no span kind. A span is SERVER when it is a root or its
    parent belongs to another service (it is the receiving side of a call);
    a span is CLIENT when it has a child in another service (the calling
    side), with peer.service = that child's service. When such a parent
    also has children of its own service (so it is not just the outgoing
    call), a CLIENT span is synthesised between it and the remote child,
    with the child's start and end, and the child is re-parented onto it.
    Every other span is INTERNAL. A span whose parent is in none of the
    day's files keeps its parent id (tailtriage then sees a broken trace)
    and is INTERNAL.
  - Operation names of the gRPC form [/][grpc.]package.Service/Method give
    rpc.system=grpc, rpc.service and rpc.method on CLIENT and SERVER spans.
  - No status is recorded in the CSVs: every span is unset (no error).
  - A span listed in two consecutive minute files (they overlap by a
    second) is written once.

Python standard library only.
"""
import argparse
import csv
import glob
import hashlib
import json
import os
import re
import sys

FAULT_SECONDS = 180          # each injected fault lasts 3 minutes (the paper)
MIN_BASELINE_S = 30          # a shorter pre-injection stretch is not used
LATENCY = {"cpu_contention", "cpu_consumed", "network_delay"}
CODE = {"return", "exception"}
RPC = re.compile(r"^/?(?:grpc\.)?([A-Za-z_][\w.]*\.[A-Za-z_]\w*)/([A-Za-z_]\w*)$")


def service_of(pod):
    parts = pod.rsplit("-", 2)
    return parts[0] if len(parts) == 3 else pod


def attr(k, v):
    return {"key": k, "value": {"stringValue": v}}


def minute_of(path):
    m = re.search(r"(\d\d)_(\d\d)_trace\.csv$", path)
    return int(m.group(1)) * 60 + int(m.group(2))


def runs_of(files):
    """Consecutive minute files form one run (a fault's data)."""
    files = sorted(files, key=minute_of)
    out = []
    for f in files:
        if out and minute_of(f) - minute_of(out[-1][-1]) == 1:
            out[-1].append(f)
        else:
            out.append([f])
    return out


class Writer:
    def __init__(self, path):
        self.f = open(path, "w")
        self.spans = 0

    def batch(self, spans):
        """spans: list of (pod, otlp span dict); one request per 2000."""
        for i in range(0, len(spans), 2000):
            part = spans[i:i + 2000]
            by = {}
            for pod, s in part:
                by.setdefault(pod, []).append(s)
            rs = []
            for pod, ss in by.items():
                rs.append({
                    "resource": {"attributes": [attr("service.name", service_of(pod)),
                                                attr("k8s.pod.name", pod)]},
                    "scopeSpans": [{"scope": {"name": "nezha-csv"}, "spans": ss}],
                })
            self.f.write(json.dumps({"resourceSpans": rs}, separators=(",", ":")))
            self.f.write("\n")
            self.spans += len(part)


def convert_run(files, w, roots, series):
    rows = {}
    for path in files:
        with open(path, newline="") as fh:
            for r in csv.DictReader(fh):
                key = (r["TraceID"], r["SpanID"])
                if key not in rows:
                    rows[key] = r
    kids = {}
    for (t, s), r in rows.items():
        kids.setdefault((t, r["ParentID"]), []).append(r)
    out = []
    extra = []
    reparent = {}
    for (t, s), r in rows.items():
        svc = service_of(r["PodName"])
        p = rows.get((t, r["ParentID"]))
        ch = kids.get((t, s), [])
        remote = [c for c in ch if service_of(c["PodName"]) != svc]
        local = [c for c in ch if service_of(c["PodName"]) == svc]
        if r["ParentID"] == "root" or (p is not None and service_of(p["PodName"]) != svc):
            kind = 2
        elif remote and not local and len({service_of(c["PodName"]) for c in remote}) == 1:
            kind = 3
        else:
            kind = 1
        attrs = []
        m = RPC.match(r["OperationName"])
        if kind in (2, 3) and m:
            attrs += [attr("rpc.system", "grpc"), attr("rpc.service", m.group(1)),
                      attr("rpc.method", m.group(2))]
        if kind == 3:
            attrs.append(attr("peer.service", service_of(remote[0]["PodName"])))
        elif remote:
            # the outgoing calls are not separate spans: synthesise them
            for c in remote:
                cid = hashlib.sha1((t + c["SpanID"]).encode()).hexdigest()[:16]
                reparent[(t, c["SpanID"])] = cid
                cattrs = [attr("peer.service", service_of(c["PodName"]))]
                mm = RPC.match(c["OperationName"])
                if mm:
                    cattrs += [attr("rpc.system", "grpc"), attr("rpc.service", mm.group(1)),
                               attr("rpc.method", mm.group(2))]
                extra.append((r["PodName"], {
                    "traceId": t, "spanId": cid, "parentSpanId": s,
                    "name": c["OperationName"], "kind": 3,
                    "startTimeUnixNano": c["StartTimeUnixNano"],
                    "endTimeUnixNano": c["EndTimeUnixNano"], "attributes": cattrs}))
        span = {"traceId": t, "spanId": s, "name": r["OperationName"], "kind": kind,
                "startTimeUnixNano": r["StartTimeUnixNano"],
                "endTimeUnixNano": r["EndTimeUnixNano"], "attributes": attrs}
        if r["ParentID"] != "root":
            span["parentSpanId"] = r["ParentID"]
        else:
            roots.append(int(r["StartTimeUnixNano"]))
        out.append((r["PodName"], span))
        series.append((int(r["StartTimeUnixNano"]) // 1000000, svc, int(r["Duration"]) / 1000.0, kind))
    for pod, span in out:
        np = reparent.get((span["traceId"], span["spanId"]))
        if np:
            span["parentSpanId"] = np
    out.sort(key=lambda x: int(x[1]["startTimeUnixNano"]))
    w.batch(out + extra)


def load_faults(path):
    d = json.load(open(path))
    faults = []
    for hour in sorted(d):
        for f in d[hour]:
            faults.append(f)
    faults.sort(key=lambda f: int(f["inject_timestamp"]))
    return faults


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("nezha", help="a checkout of github.com/IntelligentDDS/Nezha")
    ap.add_argument("out", help="output folder")
    ap.add_argument("--day", default="2022-08-22")
    a = ap.parse_args()
    day = a.day
    rca = os.path.join(a.nezha, "rca_data", day)
    con = os.path.join(a.nezha, "construct_data", day)
    flist = os.path.join(rca, day + "-fault_list.json")
    if not os.path.exists(flist):
        sys.exit("nezha_otlp.py: %s: no fault list (is %s a Nezha checkout?)" % (flist, a.nezha))
    os.makedirs(a.out, exist_ok=True)
    faults = load_faults(flist)

    # which minute files the dataset lists (traceid/) and which the checkout holds
    def minutes(base):
        ids = {minute_of(p.replace("traceid", "trace")) for p in glob.glob(os.path.join(base, "traceid", "*_traceid.csv"))}
        have = {minute_of(p): p for p in glob.glob(os.path.join(base, "trace", "*_trace.csv"))}
        return ids, have
    rids, rhave = minutes(rca)
    cids, chave = minutes(con)

    w = Writer(os.path.join(a.out, "traces.jsonl"))
    extents = []          # (first root start, last root start, source) per run
    per_service = []      # (start ms, service, span ms, kind) for BARO
    for source, have in (("fault-free", chave), ("faults", rhave)):
        for run in runs_of(list(have.values())):
            roots = []
            convert_run(run, w, roots, per_service)
            if roots:
                extents.append((min(roots), max(roots), source))
    w.f.close()

    # metrics: CPU of each pod, per minute, as an OTLP gauge
    rms = []
    for p in sorted(glob.glob(os.path.join(rca, "metric", "*_metric.csv"))):
        pts, pod, seen = [], None, set()
        with open(p, newline="") as fh:
            for r in csv.DictReader(fh):
                try:
                    v = float(r["CpuUsageRate(%)"]) / 100.0
                    ts = int(r["TimeStamp"])
                except (ValueError, KeyError):
                    continue
                pod = r["PodName"]
                if ts in seen:
                    continue
                seen.add(ts)
                pts.append({"timeUnixNano": str(ts * 1000000000), "asDouble": v,
                            "attributes": [attr("host.name", pod)]})
        if pts:
            rms.append({"resource": {"attributes": [attr("service.name", service_of(pod)),
                                                    attr("k8s.pod.name", pod)]},
                        "scopeMetrics": [{"scope": {"name": "nezha-csv"}, "metrics": [{
                            "name": "container.cpu.utilization", "unit": "1",
                            "description": "CPU used over the pod's limit, per minute (Nezha CpuUsageRate)",
                            "gauge": {"dataPoints": pts}}]}]})
    with open(os.path.join(a.out, "metrics.json"), "w") as m:
        json.dump({"resourceMetrics": rms}, m, separators=(",", ":"))

    # windows and baselines
    ns = 1000000000
    inj = [int(f["inject_timestamp"]) * ns for f in faults]
    busy = [(t, t + FAULT_SECONDS * ns) for t in inj]

    def clean(a0, b0):
        """the parts of [a0, b0) that overlap no fault"""
        parts = [(a0, b0)]
        for t0, t1 in busy:
            nxt = []
            for x0, x1 in parts:
                if t1 <= x0 or t0 >= x1:
                    nxt.append((x0, x1))
                    continue
                if x0 < t0:
                    nxt.append((x0, t0))
                if t1 < x1:
                    nxt.append((t1, x1))
            parts = nxt
        return parts

    pre = []  # fault-free stretches with data, in time order
    for lo, hi, src in extents:
        pre += clean(lo, hi + 1)
    pre.sort()
    with open(os.path.join(a.out, "faults.tsv"), "w") as o:
        o.write("\t".join(["n", "inject", "pod", "service", "type", "class", "window_ms",
                           "baseline_ms", "baseline_how", "data"]) + "\n")
        for i, f in enumerate(faults):
            t = inj[i]
            end = t + FAULT_SECONDS * ns
            if i + 1 < len(inj):
                end = min(end, inj[i + 1])
            hi = max((e[1] for e in extents if e[0] < end and e[1] >= t), default=None)
            lo = min((e[0] for e in extents if e[0] < end and e[1] >= t), default=None)
            wmin = minute_of("%s_trace.csv" % f["inject_time"][11:16].replace(":", "_"))
            want = [m for m in range(wmin, wmin + 3) if m in rids]
            miss = [m for m in want if m not in rhave]
            data = "all %d minute files" % len(want) if not miss else "missing %s" % ",".join(
                "%02d_%02d" % divmod(m, 60) for m in miss)
            window = ""
            if hi is not None and hi > t:
                window = "%d..%d" % (max(lo, t) // 1000000, (min(hi, end - 1)) // 1000000 + 1)
            own = [p for p in pre if p[1] <= t and p[1] > t - 5 * ns]
            base, how = "", ""
            if own and (own[-1][1] - own[-1][0]) >= MIN_BASELINE_S * ns:
                b = own[-1]
                base, how = "%d..%d" % (b[0] // 1000000, b[1] // 1000000), "before the injection"
            else:
                older = [p for p in pre if p[1] <= t and p[1] - p[0] >= MIN_BASELINE_S * ns]
                if older:
                    b = older[-1]
                    base = "%d..%d" % (b[0] // 1000000, b[1] // 1000000)
                    how = "latest earlier fault-free stretch (%d s before)" % ((t - b[1]) // ns)
            cls = "latency" if f["inject_type"] in LATENCY else "code" if f["inject_type"] in CODE else "other"
            o.write("\t".join([str(i + 1), f["inject_time"], f["inject_pod"], service_of(f["inject_pod"]),
                               f["inject_type"], cls, window, base, how, data]) + "\n")

    # server-span times for BARO: start (ms since epoch), service, duration ms
    with open(os.path.join(a.out, "spans.tsv"), "w") as o:
        for ts, svc, d, kind in per_service:
            if kind == 2:
                o.write("%d\t%s\t%.3f\n" % (ts, svc, d))
    print("nezha_otlp.py: %d spans, %d faults, %d runs of minute files" % (
        w.spans, len(faults), len(extents)), file=sys.stderr)


if __name__ == "__main__":
    main()
