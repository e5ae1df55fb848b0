// load_sender.js - bounded OTLP load for `tailtriage serve`: CONCURRENCY
// senders each send ExportTraceServiceRequests of BATCH spans (one new
// trace per request) for SECONDS seconds, then stop. The trace ids of every
// request answered 200 (gRPC: OK) go to ACKED_FILE so the caller can check
// each one is stored.
//
// PROTOCOL: json (OTLP/HTTP JSON, the default), proto (OTLP/HTTP
// protobuf; keep-alive connections as for JSON) or grpc (OTLP/gRPC with
// @grpc/grpc-js; URL is http://HOST:PORT, the senders share one channel).
// The same spans in each encoding; the protobuf is written by the small
// encoder below (field numbers of the OTLP specification).
//
// Usage: node load_sender.js URL SECONDS CONCURRENCY BATCH ACKED_FILE [PROTOCOL]
// Prints one JSON summary line.
'use strict';

const fs = require('fs');
const http = require('http');

const [url, secondsArg, concArg, batchArg, ackedFile, protocolArg] = process.argv.slice(2);
const protocol = protocolArg || 'json';
if (!ackedFile) {
  console.error('usage: node load_sender.js URL SECONDS CONCURRENCY BATCH ACKED_FILE');
  process.exit(2);
}
const seconds = Number(secondsArg);
const concurrency = parseInt(concArg, 10);
const batch = parseInt(batchArg, 10);
const target = new URL('/v1/traces', url);
const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });

const acked = [];
const statuses = {};
const latencies = [];
let requests = 0;
let errors = 0;

function hex(n, width) {
  return n.toString(16).padStart(width, '0');
}

// ---- protobuf, by hand: enough of the wire format for these spans ----
function varint(n) {
  const out = [];
  let v = BigInt(n);
  while (v >= 0x80n) { out.push(Number(v & 0x7fn) | 0x80); v >>= 7n; }
  out.push(Number(v));
  return Buffer.from(out);
}
function len(field, payload) {
  const p = typeof payload === 'string' ? Buffer.from(payload) : payload;
  return Buffer.concat([varint(field << 3 | 2), varint(p.length), p]);
}
function fixed64(field, value) {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(value));
  return Buffer.concat([varint(field << 3 | 1), b]);
}
function kvString(key, value) {
  return Buffer.concat([len(1, key), len(2, len(1, value))]);  // KeyValue{key, AnyValue{string}}
}
function protoBody(req) {
  const rs = req.resourceSpans[0];
  const resource = Buffer.concat(rs.resource.attributes.map(
    (a) => len(1, kvString(a.key, a.value.stringValue))));
  const spans = rs.scopeSpans[0].spans.map((sp) => len(2, Buffer.concat([
    len(1, Buffer.from(sp.traceId, 'hex')),
    len(2, Buffer.from(sp.spanId, 'hex')),
    sp.parentSpanId ? len(4, Buffer.from(sp.parentSpanId, 'hex')) : Buffer.alloc(0),
    len(5, sp.name),
    varint(6 << 3), varint(sp.kind),
    fixed64(7, sp.startTimeUnixNano), fixed64(8, sp.endTimeUnixNano),
    ...sp.attributes.map((a) => len(9, kvString(a.key, a.value.stringValue))),
  ])));
  const scopeSpans = Buffer.concat([len(1, len(1, rs.scopeSpans[0].scope.name)), ...spans]);
  return len(1, Buffer.concat([len(1, resource), len(2, scopeSpans)]));
}

function body(worker, seq) {
  const traceId = hex(0x7a000000 + worker, 16) + hex(seq, 16);
  const t0 = 1700000000000 + seq;  // ms
  const spans = [];
  for (let i = 0; i < batch; i++) {
    spans.push({
      traceId,
      spanId: hex(i + 1, 16),
      parentSpanId: i === 0 ? '' : hex(1, 16),
      name: i === 0 ? 'GET /load' : `call ${i % 4}`,
      kind: i === 0 ? 2 : 3,
      startTimeUnixNano: `${t0 + i}000000`,
      endTimeUnixNano: `${t0 + i + 3}000000`,
      attributes: [{ key: 'workload.class', value: { stringValue: 'standard' } }],
    });
  }
  const req = {
    resourceSpans: [{
      resource: { attributes: [{ key: 'service.name', value: { stringValue: `load-${worker}` } }] },
      scopeSpans: [{ scope: { name: 'load' }, spans }],
    }],
  };
  return [traceId, protocol === 'json' ? JSON.stringify(req) : protoBody(req)];
}

let grpcClient = null;
function grpcCall(data) {
  if (!grpcClient) {
    const grpc = require('@grpc/grpc-js');
    grpcClient = new grpc.Client(new URL(url).host, grpc.credentials.createInsecure());
  }
  return new Promise((resolve) => {
    grpcClient.makeUnaryRequest('/opentelemetry.proto.collector.trace.v1.TraceService/Export',
      (b) => b, (b) => b, data, { deadline: Date.now() + 10000 },
      (err) => resolve(err ? `grpc-${err.code}` : 200));
  });
}

function post(data) {
  if (protocol === 'grpc') return grpcCall(data);
  return new Promise((resolve) => {
    const req = http.request(target, {
      method: 'POST', agent,
      headers: { 'Content-Type': protocol === 'proto' ? 'application/x-protobuf' : 'application/json',
                 'Content-Length': Buffer.byteLength(data) },
    }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', () => resolve(0));
    req.setTimeout(10000, () => req.destroy());
    req.end(data);
  });
}

async function worker(w, deadline) {
  let seq = 0;
  while (Date.now() < deadline) {
    const [traceId, data] = body(w, seq++);
    const t = process.hrtime.bigint();
    const status = await post(data);
    latencies.push(Number(process.hrtime.bigint() - t) / 1e6);
    requests++;
    statuses[status] = (statuses[status] || 0) + 1;
    if (status === 200) acked.push(traceId);
    else errors++;
  }
}

async function main() {
  const start = Date.now();
  const deadline = start + seconds * 1000;
  await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w, deadline)));
  const elapsed = (Date.now() - start) / 1000;
  agent.destroy();
  if (grpcClient) grpcClient.close();
  fs.writeFileSync(ackedFile, acked.join('\n') + (acked.length ? '\n' : ''));
  latencies.sort((a, b) => a - b);
  const q = (p) => latencies.length ? latencies[Math.min(latencies.length - 1, Math.ceil(p * latencies.length) - 1)] : null;
  console.log(JSON.stringify({
    protocol, seconds: elapsed, concurrency, batch, requests, errors, statuses,
    acked_requests: acked.length, acked_spans: acked.length * batch,
    requests_per_s: requests / elapsed, spans_per_s: acked.length * batch / elapsed,
    latency_ms: { p50: q(0.5), p99: q(0.99), max: latencies[latencies.length - 1] || null },
  }));
}

main().catch((e) => { console.error(e); process.exit(1); });
