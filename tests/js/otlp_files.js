// otlp_files.js - writes the same telemetry, made by the real OpenTelemetry
// JS SDK, as OTLP files in both encodings, with the SDK's own serializers
// (@opentelemetry/otlp-transformer, what its exporters send):
//
//   traces.json / traces.pb      one ExportTraceServiceRequest
//   metrics.json / metrics.pb    one ExportMetricsServiceRequest
//   traces.jsonl, metrics.jsonl  the same as JSON Lines, one request a line
//   stream.pb                    the Collector file exporter's framing
//                                (`format: proto`): each request preceded
//                                by its size as a 4-byte big-endian integer;
//                                traces, metrics, then the second traces batch
//   collector.jsonl              what the Collector's file exporter writes
//                                when a traces, a metrics and a logs pipeline
//                                share one file (`format: json`): one request
//                                a line, the signals mixed as the pipelines
//                                flush: metrics, traces, logs, traces,
//                                metrics (a second collection), logs; 16 log
//                                records in all
//   collector.pb                 the same six requests in the `format: proto`
//                                framing
//
// Usage: node otlp_files.js OUT_DIR
'use strict';

const fs = require('fs');
const path = require('path');
const api = require('@opentelemetry/api');
const { BasicTracerProvider, SimpleSpanProcessor, InMemorySpanExporter } = require('@opentelemetry/sdk-trace-base');
const { MeterProvider, MetricReader } = require('@opentelemetry/sdk-metrics');
// sdk-logs comes with the exporters (the lock file pins it)
const { LoggerProvider, SimpleLogRecordProcessor, InMemoryLogRecordExporter } = require('@opentelemetry/sdk-logs');
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

  // a second collection, later: new points of the same series
  await new Promise((r) => setTimeout(r, 20));
  for (let i = 0; i < 10; i++)
    hist.record(0.002 * (i % 5) + 0.001, { 'workload.class': ['standard', 'premium'][i % 2] });
  const second = (await reader.collect()).resourceMetrics;

  const logMem = new InMemoryLogRecordExporter();
  const lp = new LoggerProvider({
    resource: resourceFromAttributes({ 'service.name': 'search', 'host.name': 'search-2' }),
    processors: [new SimpleLogRecordProcessor(logMem)],
  });
  const logger = lp.getLogger('search-log', '0.9.1');
  for (let i = 0; i < 16; i++)
    logger.emit({ timestamp: new Date(base + 10 * i + 2), severityNumber: i % 4 === 3 ? 17 : 9,
                  severityText: i % 4 === 3 ? 'ERROR' : 'INFO', body: `query ${i} served`,
                  attributes: { 'workload.class': ['standard', 'premium'][i % 2] } });
  const logs = logMem.getFinishedLogRecords();
  const lg1 = logs.slice(0, 10), lg2 = logs.slice(10);

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
  const mj2 = Buffer.from(t.JsonMetricsSerializer.serializeRequest(second));
  const lj1 = Buffer.from(t.JsonLogsSerializer.serializeRequest(lg1));
  const lj2 = Buffer.from(t.JsonLogsSerializer.serializeRequest(lg2));
  const nl = Buffer.from('\n');
  w('collector.jsonl', Buffer.concat([mj, nl, tj1, nl, lj1, nl, tj2, nl, mj2, nl, lj2, nl]));
  w('collector.pb', Buffer.concat([frame(mpb), frame(tp1), frame(t.ProtobufLogsSerializer.serializeRequest(lg1)),
                                   frame(tp2), frame(t.ProtobufMetricsSerializer.serializeRequest(second)),
                                   frame(t.ProtobufLogsSerializer.serializeRequest(lg2))]));
  console.log(JSON.stringify({ spans: spans.length, logs: logs.length }));
}

main().catch((e) => { console.error(e); process.exit(1); });
