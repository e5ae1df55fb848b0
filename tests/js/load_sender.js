// load_sender.js - bounded OTLP/HTTP JSON load for `tailtriage serve`:
// CONCURRENCY senders on keep-alive connections each POST ExportTrace-
// ServiceRequests of BATCH spans (one new trace per request) for SECONDS
// seconds, then stop. The trace ids of every request answered 200 go to
// ACKED_FILE so the caller can check each one is stored.
//
// Usage: node load_sender.js URL SECONDS CONCURRENCY BATCH ACKED_FILE
// Prints one JSON summary line.
'use strict';

const fs = require('fs');
const http = require('http');

const [url, secondsArg, concArg, batchArg, ackedFile] = process.argv.slice(2);
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
  return [traceId, JSON.stringify({
    resourceSpans: [{
      resource: { attributes: [{ key: 'service.name', value: { stringValue: `load-${worker}` } }] },
      scopeSpans: [{ scope: { name: 'load' }, spans }],
    }],
  })];
}

function post(data) {
  return new Promise((resolve) => {
    const req = http.request(target, {
      method: 'POST', agent,
      headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) },
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
  fs.writeFileSync(ackedFile, acked.join('\n') + (acked.length ? '\n' : ''));
  latencies.sort((a, b) => a - b);
  const q = (p) => latencies.length ? latencies[Math.min(latencies.length - 1, Math.ceil(p * latencies.length) - 1)] : null;
  console.log(JSON.stringify({
    seconds: elapsed, concurrency, batch, requests, errors, statuses,
    acked_requests: acked.length, acked_spans: acked.length * batch,
    requests_per_s: requests / elapsed, spans_per_s: acked.length * batch / elapsed,
    latency_ms: { p50: q(0.5), p99: q(0.99), max: latencies[latencies.length - 1] || null },
  }));
}

main().catch((e) => { console.error(e); process.exit(1); });
