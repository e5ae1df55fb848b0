#!/usr/bin/env python3
"""bench/nezha_score.py - scores bench/nezha.sh's diagnoses and the
BARO-style baseline against the Nezha fault list; prints Markdown.

usage: nezha_score.py OUT [--timing "CONVERT IMPORT DIAGNOSE"] [--commit C] [--day D]

OUT is bench/nezha.sh's folder: faults.tsv and spans.tsv from
bench/nezha_otlp.py, dx/N-traces.json and dx/N-metrics.json from
`tailtriage diagnose --format json`, times.tsv.

Blamed node -> service: a hypothesis's node is a dependency (the called
service's service.name, or its peer.service), the endpoint's service
({root}), or a host (a pod name, for placement and CPU): a node that is a
service of the data is that service; a pod name is its service (the pod
name without its two trailing Kubernetes segments); anything else
(insufficient-evidence's "none", a workload class) names no service.

top-1: the first hypothesis names the fault's service (an abstention,
insufficient-evidence first, is a miss). top-3: one of the first three
hypotheses names it (the board's first three lines, the null included).

BARO-style baseline (RCAEval's BARO, on span times): for each service, the
series of the mean duration of its SERVER spans per 1-second bucket, a
bucket without spans repeating the previous one; its score is the largest
robust z over the window's buckets, (x - median of the baseline's
buckets) / IQR of the baseline's buckets (an IQR of 0 counts as 1, as
scikit-learn's RobustScaler does); services ranked by score.
"""
import argparse
import collections
import datetime
import json
import math
import os
import platform


def service_of(pod):
    parts = pod.rsplit("-", 2)
    return parts[0] if len(parts) == 3 else pod


def quantile(xs, q):
    """linear interpolation between order statistics (numpy's default)"""
    xs = sorted(xs)
    if not xs:
        return None
    h = (len(xs) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (h - lo) * (xs[hi] - xs[lo])


def rng(s):
    a, b = s.split("..")
    return int(a), int(b)


def series(spans, a, b):
    """per service: mean server-span ms per 1-s bucket over [a, b), gaps
    filled with the previous bucket"""
    sums = collections.defaultdict(lambda: collections.defaultdict(lambda: [0.0, 0]))
    for ts, svc, d in spans:
        if a <= ts < b:
            c = sums[svc][(ts - a) // 1000]
            c[0] += d
            c[1] += 1
    out = {}
    nb = (b - a + 999) // 1000
    for svc, buckets in sums.items():
        xs, last = [], None
        for i in range(nb):
            if i in buckets:
                last = buckets[i][0] / buckets[i][1]
            if last is not None:
                xs.append(last)
        out[svc] = xs
    return out


def baro(spans, window, base):
    wa, wb = rng(window)
    ba, bb = rng(base)
    sw, sb = series(spans, wa, wb), series(spans, ba, bb)
    ranks = []
    for svc in sw:
        if svc not in sb or not sb[svc]:
            continue
        med = quantile(sb[svc], 0.5)
        iqr = quantile(sb[svc], 0.75) - quantile(sb[svc], 0.25)
        if iqr == 0:
            iqr = 1.0
        ranks.append((max((x - med) / iqr for x in sw[svc]), svc))
    ranks.sort(reverse=True)
    return [(svc, z) for z, svc in ranks]


def wilson(k, n):
    if n == 0:
        return (0.0, 1.0)
    z = 1.96
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def ev(d, name):
    for e in d.get("evidence", []):
        if e["name"] == name:
            return e
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--timing", default="")
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--day", default="")
    ap.add_argument("--load", default="")
    a = ap.parse_args()

    faults = []
    with open(os.path.join(a.out, "faults.tsv")) as fh:
        head = fh.readline().rstrip("\n").split("\t")
        for line in fh:
            faults.append(dict(zip(head, line.rstrip("\n").split("\t"))))
    spans = []
    with open(os.path.join(a.out, "spans.tsv")) as fh:
        for line in fh:
            ts, svc, d = line.rstrip("\n").split("\t")
            spans.append((int(ts), svc, float(d)))
    services = {s for _, s, _ in spans}

    def to_service(node):
        if node in services:
            return node
        s = service_of(node or "")
        return s if s in services else None

    times, cpu = [], []
    try:
        with open(os.path.join(a.out, "times.tsv")) as fh:
            for l in fh:
                if l.strip():
                    times.append(float(l.split("\t")[2]))
                    cpu.append(float(l.split("\t")[3]))
    except FileNotFoundError:
        pass

    rows = []
    for f in faults:
        r = {"f": f, "scored": bool(f["window_ms"] and f["baseline_ms"])}
        if r["scored"]:
            for db in ("traces", "metrics"):
                p = os.path.join(a.out, "dx", "%s-%s.json" % (f["n"], db))
                try:
                    d = json.load(open(p))
                    hs = sorted(d["hypotheses"], key=lambda h: h["rank"])
                except (OSError, ValueError, KeyError):
                    d, hs = {}, []
                svcs = [to_service(h["node"]) for h in hs]
                want = f["service"]
                r[db] = {
                    "top1": bool(svcs) and svcs[0] == want,
                    "top3": want in svcs[:3],
                    "first": ["%s:%s%s" % (h["id"], h["node"], " %+g" % h["score"]) for h in hs[:3]],
                    "rank": next((h["rank"] for h, s in zip(hs, svcs) if s == want), None),
                    "n": (ev(d, "ingress.requests") or {}).get("value"),
                    "nb": (ev(d, "ingress.requests@baseline") or {}).get("value"),
                    "rise": (ev(d, "ingress.rise_ms") or {}).get("value"),
                }
            br = baro(spans, f["window_ms"], f["baseline_ms"])
            r["baro"] = {"top1": bool(br) and br[0][0] == f["service"],
                         "top3": f["service"] in [s for s, _ in br[:3]],
                         "first": ["%s %.1f" % (s, z) for s, z in br[:3]]}
        rows.append(r)

    out = []
    w = out.append
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    w("Recorded %s at commit %s on %s (%d cores); Nezha OnlineBoutique, day %s." % (
        now, a.commit, platform.machine(), os.cpu_count(), a.day))
    if a.timing:
        c, i, dg = a.timing.split()
        med = sorted(times)[len(times) // 2] if times else 0
        cmed = sorted(cpu)[len(cpu) // 2] if cpu else 0
        w("Wall time: converting %s s, importing (twice) %s s, the %d diagnoses %s s (each: median %.2f s,"
          " max %.2f s; CPU median %.2f s, max %.2f s); load average after the runs %s." % (
              c, i, len(times), dg, med, max(times) if times else 0, cmed, max(cpu) if cpu else 0,
              a.load or "?"))
    w("")
    w("| faults | n | tailtriage top-1 | top-3 | tailtriage + CPU top-1 | top-3 | BARO top-1 | top-3 |")
    w("|---|---:|---|---|---|---|---|---|")

    def cell(k, n):
        lo, hi = wilson(k, n)
        return "%d/%d = %d %% [%d-%d]" % (k, n, round(100 * k / n), round(100 * lo), round(100 * hi)) if n else "-"
    for cls, label in (("latency", "latency (cpu_contention, cpu_consumed, network_delay)"),
                       ("code", "code (return, exception)")):
        rs = [r for r in rows if r["f"]["class"] == cls and r["scored"]]
        n = len(rs)
        cells = []
        for key in ("traces", "metrics", "baro"):
            for t in ("top1", "top3"):
                cells.append(cell(sum(1 for r in rs if r[key][t]), n))
        w("| %s | %d | %s |" % (label, n, " | ".join(cells)))
    skipped = [r for r in rows if not r["scored"]]
    if skipped:
        w("")
        w("Not scored (no trace file of the window in the checkout): %s." % ", ".join(
            "#%s %s %s %s" % (r["f"]["n"], r["f"]["inject"][11:16], r["f"]["service"], r["f"]["type"]) for r in skipped))
    w("")
    w("Per fault (95 % intervals above are Wilson's; 'first three' are the board's first three hypotheses, id:node score):")
    w("")
    w("| # | injected | service | fault | window / baseline requests | baseline | data | tailtriage first three (traces) | with CPU: #1 | BARO first three (z) |")
    w("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        f = r["f"]
        if not r["scored"]:
            continue
        t, m, b = r["traces"], r["metrics"], r["baro"]
        def firsts(x):
            return "; ".join(x["first"])
        w("| %s | %s | %s | %s | %s / %s | %s | %s | %s%s | %s%s | %s%s |" % (
            f["n"], f["inject"][11:19], f["service"], f["type"],
            "%g" % t["n"] if t["n"] is not None else "?", "%g" % t["nb"] if t["nb"] is not None else "?",
            f["baseline_how"], f["data"],
            "✓ " if t["top1"] else ("(3) " if t["top3"] else "✗ "), firsts(t),
            "✓ " if m["top1"] else ("(3) " if m["top3"] else "✗ "), m["first"][0] if m["first"] else "error",
            "✓ " if b["top1"] else ("(3) " if b["top3"] else "✗ "), firsts(b)))
    w("")
    w("✓ first; (3) among the first three; ✗ not among them.")
    print("\n".join(out))


if __name__ == "__main__":
    main()
