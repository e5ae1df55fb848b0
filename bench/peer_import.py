#!/usr/bin/env python3
"""peer_import.py FILE DB - the import benchmark's peer: a straightforward
OTLP/JSON trace importer written with the Python standard library only
(json + sqlite3), storing the same rows as `tailtriage import`.

It is what one would write in an afternoon, no tricks: JSON Lines are read
line by line with json.loads, a single document is read whole with
json.load; attributes become one JSON object text per span; resources and
scopes are interned; spans go in with executemany, one transaction for the
file, under the same unique (trace_id, span_id) index and root-start index
the tailtriage store keeps.

Exit status 0 on success; prints "N spans added, M already stored".
"""
import hashlib
import json
import sqlite3
import sys
import time

SCHEMA = """
CREATE TABLE IF NOT EXISTS sources(
  id INTEGER PRIMARY KEY, path TEXT NOT NULL, sha256 TEXT NOT NULL,
  format TEXT NOT NULL, imported_at_ms INTEGER NOT NULL,
  spans_added INTEGER NOT NULL DEFAULT 0, spans_duplicate INTEGER NOT NULL DEFAULT 0,
  outcome TEXT NOT NULL DEFAULT 'pending');
CREATE TABLE IF NOT EXISTS resources(
  id INTEGER PRIMARY KEY, service TEXT, host TEXT, attrs TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS scopes(
  id INTEGER PRIMARY KEY, name TEXT NOT NULL, version TEXT NOT NULL,
  attrs TEXT NOT NULL, UNIQUE(name, version, attrs));
CREATE TABLE IF NOT EXISTS spans(
  id INTEGER PRIMARY KEY, trace_id TEXT NOT NULL, span_id TEXT NOT NULL,
  parent_id TEXT NOT NULL DEFAULT '', source_id INTEGER NOT NULL,
  resource_id INTEGER, scope_id INTEGER, service TEXT NOT NULL DEFAULT '',
  host TEXT NOT NULL DEFAULT '', name TEXT NOT NULL, kind INTEGER NOT NULL,
  start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL,
  status_code INTEGER NOT NULL DEFAULT 0, status_msg TEXT, wclass TEXT,
  queue_ns INTEGER, trace_state TEXT, flags INTEGER, attrs TEXT, events TEXT,
  links TEXT, dropped INTEGER NOT NULL DEFAULT 0);
CREATE UNIQUE INDEX IF NOT EXISTS spans_identity ON spans(trace_id, span_id);
CREATE INDEX IF NOT EXISTS spans_root_start ON spans(start_ns) WHERE parent_id = '';
"""

KINDS = {"SPAN_KIND_UNSPECIFIED": 0, "SPAN_KIND_INTERNAL": 1, "SPAN_KIND_SERVER": 2,
         "SPAN_KIND_CLIENT": 3, "SPAN_KIND_PRODUCER": 4, "SPAN_KIND_CONSUMER": 5}

INSERT_SPAN = ("INSERT OR IGNORE INTO spans(trace_id, span_id, parent_id, source_id,"
               " resource_id, scope_id, service, host, name, kind, start_ns, end_ns,"
               " status_code, status_msg, wclass, queue_ns, trace_state, flags, attrs,"
               " events, links, dropped) VALUES"
               " (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")


def value(v):
    """An OTLP AnyValue as a plain Python value."""
    if "stringValue" in v:
        return v["stringValue"]
    if "intValue" in v:
        return int(v["intValue"])
    if "doubleValue" in v:
        return float(v["doubleValue"])
    if "boolValue" in v:
        return bool(v["boolValue"])
    if "arrayValue" in v:
        return [value(x) for x in v["arrayValue"].get("values", [])]
    if "kvlistValue" in v:
        return attributes(v["kvlistValue"].get("values", []))
    if "bytesValue" in v:
        return v["bytesValue"]
    return None


def attributes(lst):
    return {a["key"]: value(a.get("value", {})) for a in lst or []}


class Importer:
    def __init__(self, db, source_id):
        self.db = db
        self.source_id = source_id
        self.resources = {}
        self.scopes = {}
        self.added = 0
        self.total = 0

    def intern_resource(self, attrs):
        text = json.dumps(attrs, separators=(",", ":"))
        rid = self.resources.get(text)
        if rid is None:
            service, host = attrs.get("service.name"), attrs.get("host.name")
            row = self.db.execute("SELECT id FROM resources WHERE attrs = ?", (text,)).fetchone()
            if row:
                rid = row[0]
            else:
                rid = self.db.execute("INSERT INTO resources(service, host, attrs) VALUES (?,?,?)",
                                      (service, host, text)).lastrowid
            self.resources[text] = rid
        return rid

    def intern_scope(self, scope):
        key = (scope.get("name", ""), scope.get("version", ""),
               json.dumps(attributes(scope.get("attributes")), separators=(",", ":")))
        sid = self.scopes.get(key)
        if sid is None:
            row = self.db.execute("SELECT id FROM scopes WHERE name = ? AND version = ? AND attrs = ?",
                                  key).fetchone()
            sid = row[0] if row else self.db.execute(
                "INSERT INTO scopes(name, version, attrs) VALUES (?,?,?)", key).lastrowid
            self.scopes[key] = sid
        return sid

    def request(self, doc):
        rows = []
        for rs in doc.get("resourceSpans", []):
            rattrs = attributes(rs.get("resource", {}).get("attributes"))
            rid = self.intern_resource(rattrs)
            service = rattrs.get("service.name") or ""
            host = rattrs.get("host.name") or rattrs.get("k8s.pod.name") or ""
            for ss in rs.get("scopeSpans", []):
                scid = self.intern_scope(ss.get("scope", {}))
                for sp in ss.get("spans", []):
                    attrs = attributes(sp.get("attributes"))
                    wclass = attrs.get("workload.class", rattrs.get("workload.class"))
                    queue_ns = None
                    if "queue.wait_ns" in attrs:
                        queue_ns = int(attrs["queue.wait_ns"])
                    elif "queue.wait_ms" in attrs:
                        queue_ns = int(round(float(attrs["queue.wait_ms"]) * 1e6))
                    kind = sp.get("kind", 0)
                    if isinstance(kind, str):
                        kind = KINDS.get(kind, 0)
                    status = sp.get("status", {})
                    code = status.get("code", 0)
                    if isinstance(code, str):
                        code = {"STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}.get(code, 0)
                    events = sp.get("events")
                    links = sp.get("links")
                    dropped = (sp.get("droppedAttributesCount", 0) + sp.get("droppedEventsCount", 0)
                               + sp.get("droppedLinksCount", 0))
                    rows.append((
                        sp["traceId"].lower(), sp["spanId"].lower(),
                        (sp.get("parentSpanId") or "").lower(), self.source_id, rid, scid,
                        service, host, sp.get("name", ""), kind,
                        int(sp["startTimeUnixNano"]), int(sp["endTimeUnixNano"]),
                        code, status.get("message"), wclass, queue_ns, sp.get("traceState"),
                        sp.get("flags"),
                        json.dumps(attrs, separators=(",", ":")) if attrs else None,
                        json.dumps(events, separators=(",", ":")) if events else None,
                        json.dumps(links, separators=(",", ":")) if links else None,
                        dropped))
        before = self.db.total_changes
        self.db.executemany(INSERT_SPAN, rows)
        self.added += self.db.total_changes - before
        self.total += len(rows)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def main():
    if len(sys.argv) != 3:
        print("usage: peer_import.py FILE DB", file=sys.stderr)
        return 2
    path, dbpath = sys.argv[1:]
    db = sqlite3.connect(dbpath, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.executescript(SCHEMA)
    digest = sha256(path)
    db.execute("BEGIN IMMEDIATE")
    src = db.execute("INSERT INTO sources(path, sha256, format, imported_at_ms) VALUES (?,?,?,?)",
                     (path, digest, "otlp-json", int(time.time() * 1000))).lastrowid
    imp = Importer(db, src)
    try:
        with open(path, "rb") as f:
            first = f.readline()
            try:
                json.loads(first)
                lines = True           # the first line is a whole document: JSON Lines
            except ValueError:
                lines = False
            f.seek(0)
            if lines:
                for n, line in enumerate(f, 1):
                    if line.strip():
                        imp.request(json.loads(line))
            else:
                imp.request(json.load(f))
        db.execute("UPDATE sources SET spans_added = ?, spans_duplicate = ?, outcome = 'imported'"
                   " WHERE id = ?", (imp.added, imp.total - imp.added, src))
        db.execute("COMMIT")
    except Exception as e:  # noqa: BLE001 - report and roll back whatever it is
        db.execute("ROLLBACK")
        print(f"{path}: {e}", file=sys.stderr)
        return 1
    print(f"{path}: {imp.added} spans added, {imp.total - imp.added} already stored")
    return 0


if __name__ == "__main__":
    sys.exit(main())
