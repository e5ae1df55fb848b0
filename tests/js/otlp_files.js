// otlp_files.js - writes the same telemetry, made by the real OpenTelemetry
// JS SDK, as OTLP files in both encodings, with the SDK's own serializers
// (@opentelemetry/otlp-transformer, what its exporters send):
//
//   traces.json / traces.pb      one ExportTraceServiceRequest
//   metrics.json / metrics.pb    one ExportMetricsServiceRequest
//   both.jsonl                   traces and metrics requests, one per line
//                                (two JSON Lines files: traces.jsonl and
//                                metrics.jsonl, since a JSON file holds one
//                                signal)
//   stream.pb                    the Collector file exporter's framing
//                                (`format: proto`): each request preceded
//                                by its size as a 4-byte big-endian integer;
//                                traces, metrics, then the second traces batch
//
// Usage: node otlp_files.js OUT_DIR
'use strict';

const fs = require('fs');
const path = require('path');
const api = require('@opentelemetry/api');
const { BasicTracerProvider, SimpleSpanProcessor, InMemorySpanExporter } = require('@opentelemetry/sdk-trace-base');
const { MeterProvider, MetricReader } = require('@opentelemetry/sdk-metrics');
const { resourceFromAttributes } = require('@opentelemetry/resources');
const t = require('@opentelemetry/otlp-transformer');

const out = process.argv[2];
if (!out) {
  console.error('usage: node otlp_files.js OUT_DIR');
  process.exit(2);
}

class Reader extends MetricReader {
  onForceFlush() { return Promise.resolve(); }
  onShutdown() { return Promise.resolve(); }
}

function frame(bytes) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(bytes.length, 0);
  return Buffer.concat([len, Buffer.from(bytes)]);
}

async function main() {
  const mem = new InMemorySpanExporter();
  const tp = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'search', 'host.name': 'search-2', 'deploy.ring': 3 }),
    spanProcessors: [new SimpleSpanProcessor(mem)],
  });
  const tracer = tp.getTracer('search-lib', '0.9.1');
  const base = 1764547200000;
  for (let i = 0; i < 12; i++) {
    const root = tracer.startSpan('GET /search', {
      kind: api.SpanKind.SERVER, startTime: base + 10 * i,
      attributes: { 'workload.class': ['standard', 'premium'][i % 2], 'http.status_code': 200,
                    'query.terms': ['a', 'b', String(i)], 'score': i / 3, 'cached': i % 3 === 0 },
    });
    const ctx = api.trace.setSpan(api.context.active(), root);
    const call = tracer.startSpan('index lookup', { kind: api.SpanKind.CLIENT, startTime: base + 10 * i + 1 }, ctx);
    call.addEvent('queue.wait', { duration_ms: 0.75 * i }, base + 10 * i + 1);
    if (i === 5) call.setStatus({ code: api.SpanStatusCode.ERROR, message: 'shard timeout \u2603' });
    call.end(base + 10 * i + 4 + (i % 3));
    root.end(base + 10 * i + 8);
  }
  const spans = mem.getFinishedSpans();
  const half = Math.floor(spans.length / 2);
  const tr1 = spans.slice(0, half), tr2 = spans.slice(half);

  const reader = new Reader();
  const mp = new MeterProvider({ resource: resourceFromAttributes({ 'service.name': 'search' }), readers: [reader] });
  const meter = mp.getMeter('search-metrics');
  const hist = meter.createHistogram('http.server.request.duration', { unit: 's' });
  const ctr = meter.createCounter('search.queries');
  const gauge = meter.createObservableGauge('index.shards.ready');
  gauge.addCallback((r) => { r.observe(7, { zone: 'b' }); r.observe(2.5, { zone: 'c' }); });
  for (let i = 0; i < 40; i++) {
    hist.record(0.001 * (i % 17) + 0.0005, { 'workload.class': ['standard', 'premium'][i % 2] });
    ctr.add(1 + (i % 2), { 'workload.class': ['standard', 'premium'][i % 2] });
  }
  const { resourceMetrics } = await reader.collect();

  const w = (name, data) => fs.writeFileSync(path.join(out, name), Buffer.from(data));
  const tj1 = Buffer.from(t.JsonTraceSerializer.serializeRequest(tr1));
  const tj2 = Buffer.from(t.JsonTraceSerializer.serializeRequest(tr2));
  const mj = Buffer.from(t.JsonMetricsSerializer.serializeRequest(resourceMetrics));
  const tp1 = t.ProtobufTraceSerializer.serializeRequest(tr1);
  const tp2 = t.ProtobufTraceSerializer.serializeRequest(tr2);
  const mpb = t.ProtobufMetricsSerializer.serializeRequest(resourceMetrics);
  w('traces.json', t.JsonTraceSerializer.serializeRequest(spans));
  w('traces.pb', t.ProtobufTraceSerializer.serializeRequest(spans));
  w('metrics.json', mj);
  w('metrics.pb', mpb);
  w('traces.jsonl', Buffer.concat([tj1, Buffer.from('\n'), tj2, Buffer.from('\n')]));
  w('metrics.jsonl', Buffer.concat([mj, Buffer.from('\n')]));
  w('stream.pb', Buffer.concat([frame(tp1), frame(mpb), frame(tp2)]));
  console.log(JSON.stringify({ spans: spans.length }));
}

main().catch((e) => { console.error(e); process.exit(1); });
