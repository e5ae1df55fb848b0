#!/usr/bin/env python3
"""db_rows.py DB [--extremes-by-bucket] - every telemetry row of a tailtriage database as sorted
text lines, with row ids (and the aggregates' node ids) replaced by the
content they point at, so two databases that received the same telemetry
(through different encodings, in a different order) print the same lines. Import bookkeeping (sources,
source ids) is left out: it differs by design (digest, format, time).

An aggregate cell's sketch is printed decoded. With --extremes-by-bucket its
smallest and largest value are printed as the bucket they fall in, which is
all a live receiver promises (see sketch() below); without it, exactly.
"""
import math
import sqlite3
import struct
import sys

db = sqlite3.connect(sys.argv[1])
by_bucket = "--extremes-by-bucket" in sys.argv[2:]
skip_tables = {"sources", "sqlite_sequence", "drill_attempts", "drill_state"}
tables = [r[0] for r in db.execute(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]


def cols(t):
    return [r[1] for r in db.execute(f"PRAGMA table_info({t})")]


def canon(t, rowid, seen=()):
    """The content of row rowid of table t, ids resolved."""
    if rowid is None:
        return None
    c = cols(t)
    row = db.execute(f"SELECT * FROM {t} WHERE id = ?", (rowid,)).fetchone()
    if row is None:
        return f"<{t} {rowid} missing>"
    return render(t, dict(zip(c, row)))


refs = {
    "resource_id": "resources", "scope_id": "scopes", "family_id": "metric_families",
    "series_id": "metric_series", "point_id": "metric_points",
}
drop = {"id", "source_id", "trace_key"}

# The sketch of analysis/sketch.h: bucket i holds gamma^(i-1) < x <= gamma^i.
SKETCH_ALPHA = 0.01
SKETCH_MIN_MS = 1e-9
LOG_GAMMA = math.log((1 + SKETCH_ALPHA) / (1 - SKETCH_ALPHA))


def bucket_of(ms):
    """The bucket a value falls in ("zero" for the zero bucket)."""
    if not ms >= SKETCH_MIN_MS:
        return "zero"
    return max(-100000, min(100000, math.ceil(math.log(ms) / LOG_GAMMA)))


def sketch(blob):
    """An aggregate cell's sketch (encoding of analysis/sketch.c) as text.
    Counts and buckets are printed as they are. With --extremes-by-bucket
    the smallest and largest value are printed as the bucket they fall
    in: a receiver that commits a
    trace in parts takes the first part back (sketch_remove), and when that
    part held an extreme the sketch keeps the next one only as its bucket's
    estimate (sketch.h), so two receivers that saw the same spans in
    different batches agree on that bucket, not on the exact value."""
    p = 0

    def varint():
        nonlocal p
        v = shift = 0
        while True:
            c = blob[p]
            p += 1
            v |= (c & 0x7f) << shift
            shift += 7
            if not c & 0x80:
                return v

    def double():
        nonlocal p
        p += 8
        return struct.unpack("<d", blob[p - 8:p])[0]

    if not blob or blob[0] != 1:
        return f"<sketch {bytes(blob).hex()}>"
    p = 1
    n, zero, mn, mx, nb = varint(), varint(), double(), double(), varint()
    buckets, prev = [], 0
    for _ in range(nb):
        z = varint()
        prev += (z >> 1) ^ -(z & 1)
        buckets.append(f"{prev}:{varint()}")
    if n == 0:
        return "empty"
    ext = f"min@{bucket_of(mn)} max@{bucket_of(mx)}" if by_bucket else f"min={mn!r} max={mx!r}"
    return (f"n={n} zero={zero} {ext} "
            f"buckets={','.join(buckets)}" + ("" if p == len(blob) else " <trailing bytes>"))


def agg_node(nid):
    """An import-time aggregate node by its path from the root (its id is
    the order in which the writer first met it, which differs when the
    same traces arrive in another order)."""
    if nid == 0:
        return ""
    row = db.execute("SELECT parent, type, service, operation FROM agg_nodes WHERE id = ?",
                     (nid,)).fetchone()
    if row is None:
        return f"<agg_nodes {nid} missing>"
    parent, typ, svc, op = row
    return f"{agg_node(parent)}/{typ}:{svc}:{op}"


def render(t, row):
    out = []
    for k, v in row.items():
        if k in drop:
            continue
        if k in refs and isinstance(v, int) and v != 0:
            v = "{" + canon(refs[k], v) + "}"
        if (t, k) in (("agg_cells", "node"), ("agg_nodes", "parent")):
            v = agg_node(v)
        if (t, k) == ("agg_cells", "sketch"):
            v = sketch(v)
        if (t, k) == ("trace_packs", "upto"):
            # a rowid: what it says is whether the pack is still valid
            # (store.h, "trace packs"), which every receiver must agree on
            k = "fresh"
            v = v == db.execute("SELECT max(id) FROM spans WHERE trace_key = ?",
                                (row["trace_key"],)).fetchone()[0]
        out.append(f"{k}={v!r}")
    return " ".join(out)


lines = []
for t in tables:
    if t in skip_tables:
        continue
    c = cols(t)
    for row in db.execute(f"SELECT * FROM {t}"):
        lines.append(f"{t}: " + render(t, dict(zip(c, row))))
lines.sort()
sys.stdout.write("\n".join(lines) + "\n")
