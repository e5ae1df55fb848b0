#!/usr/bin/env python3
"""db_rows.py DB - every telemetry row of a tailtriage database as sorted
text lines, with row ids (and the aggregates' node ids) replaced by the
content they point at, so two databases that received the same telemetry
(through different encodings, in a different order) print the same lines. Import bookkeeping (sources,
source ids) is left out: it differs by design (digest, format, time).
"""
import sqlite3
import sys

db = sqlite3.connect(sys.argv[1])
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
