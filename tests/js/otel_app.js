// otel_app.js - a small instrumented "checkout" endpoint that exports its
// traces and metrics with the real OpenTelemetry JS SDK to the endpoints
// given as argv[2]: a comma-separated list of [PROTOCOL=]URL, PROTOCOL one
// of json (OTLP/HTTP JSON, the default), proto (OTLP/HTTP protobuf),
// proto-gzip (the same, gzip-compressed) or grpc (OTLP/gRPC; URL is
// http://HOST:PORT), e.g. http://127.0.0.1:4318 or
// json=http://127.0.0.1:4318,proto=http://127.0.0.1:4319. With several
// endpoints every batch goes to each of them (the same SDK objects through
// each encoding) and counts as exported only when all of them took it.
//
// Three services (checkout-api calling pricing and inventory in parallel,
// then a local "assemble" step) each have their own tracer provider and
// resource, like separate processes would. pricing queries PostgreSQL
// (current semantic conventions: db.system.name) and inventory Redis (the
// older db.system attribute); databases are not traced, so those client
// spans have no server span, as in real deployments. Every span the exporter reports as
// exported (ExportResultCode.SUCCESS) is counted and its ids written to
// argv[3], so the test can check each one is in the database.
//
// Usage: node otel_app.js ENDPOINT IDS_FILE [REQUESTS] [TOKEN]
'use strict';

const fs = require('fs');
const api = require('@opentelemetry/api');
const { BasicTracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const otlpHttp = {
  trace: require('@opentelemetry/exporter-trace-otlp-http'),
  metric: require('@opentelemetry/exporter-metrics-otlp-http'),
};
const { MeterProvider, PeriodicExportingMetricReader } = require('@opentelemetry/sdk-metrics');
const { resourceFromAttributes } = require('@opentelemetry/resources');

const endpoint = process.argv[2];
const idsFile = process.argv[3];
const requests = parseInt(process.argv[4] || '60', 10);
const token = process.argv[5];
if (!endpoint || !idsFile) {
  console.error('usage: node otel_app.js ENDPOINT IDS_FILE [REQUESTS] [TOKEN]');
  process.exit(2);
}
const headers = token ? { Authorization: `Bearer ${token}` } : {};
const targets = endpoint.split(',').map((item) => {
  const m = /^(json|proto|proto-gzip|grpc)=(.*)$/.exec(item);
  return m ? { protocol: m[1], url: m[2] } : { protocol: 'json', url: item };
});

// The exporter packages are loaded only when used.
function traceExporter(t) {
  if (t.protocol === 'json')
    return new otlpHttp.trace.OTLPTraceExporter({ url: `${t.url}/v1/traces`, headers });
  if (t.protocol === 'grpc') {
    const grpc = require('@opentelemetry/exporter-trace-otlp-grpc');
    return new grpc.OTLPTraceExporter({ url: t.url, metadata: grpcMetadata(grpc) });
  }
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter({ url: `${t.url}/v1/traces`, headers,
                                 compression: t.protocol === 'proto-gzip' ? 'gzip' : 'none' });
}

function metricExporter(t) {
  if (t.protocol === 'json')
    return new otlpHttp.metric.OTLPMetricExporter({ url: `${t.url}/v1/metrics`, headers });
  if (t.protocol === 'grpc') {
    const grpc = require('@opentelemetry/exporter-metrics-otlp-grpc');
    return new grpc.OTLPMetricExporter({ url: t.url, metadata: grpcMetadata(grpc) });
  }
  const { OTLPMetricExporter } = require('@opentelemetry/exporter-metrics-otlp-proto');
  return new OTLPMetricExporter({ url: `${t.url}/v1/metrics`, headers,
                                  compression: t.protocol === 'proto-gzip' ? 'gzip' : 'none' });
}

function grpcMetadata() {
  if (!token) return undefined;
  const { Metadata } = require('@grpc/grpc-js');
  const md = new Metadata();
  md.set('authorization', `Bearer ${token}`);
  return md;
}

// Sends one batch to each exporter in turn; the result is the first
// failure, else success.
function fanOut(exporters, items, done) {
  let i = 0;
  const next = () => {
    if (i === exporters.length) return done({ code: 0 });
    exporters[i++].export(items, (result) => (result.code === 0 ? next() : done(result)));
  };
  next();
}

class FanOutExporter {
  constructor(inners) { this.inners = inners; }
  export(items, done) { fanOut(this.inners, items, done); }
  selectAggregationTemporality(k) { return this.inners[0].selectAggregationTemporality(k); }
  selectAggregation(k) { return this.inners[0].selectAggregation ? this.inners[0].selectAggregation(k) : undefined; }
  forceFlush() { return Promise.all(this.inners.map((e) => (e.forceFlush ? e.forceFlush() : undefined))); }
  shutdown() { return Promise.all(this.inners.map((e) => e.shutdown())); }
}

const exported = [];      // "traceId spanId" of every span acknowledged
const failures = [];      // messages of failed exports
let failedSpans = 0;

// Wraps an exporter to see what it reports for each batch.
class CountingSpanExporter {
  constructor(inner) { this.inner = inner; }
  export(spans, done) {
    this.inner.export(spans, (result) => {
      if (result.code === 0) {
        for (const s of spans) {
          const c = s.spanContext();
          exported.push(`${c.traceId} ${c.spanId}`);
        }
      } else {
        failedSpans += spans.length;
        failures.push(String(result.error && result.error.message));
      }
      done(result);
    });
  }
  shutdown() { return this.inner.shutdown(); }
  forceFlush() { return this.inner.forceFlush ? this.inner.forceFlush() : Promise.resolve(); }
}

const metricResults = { ok: 0, failed: 0, errors: [] };
class CountingMetricExporter {
  constructor(inner) { this.inner = inner; }
  export(metrics, done) {
    this.inner.export(metrics, (result) => {
      if (result.code === 0) metricResults.ok++;
      else {
        metricResults.failed++;
        metricResults.errors.push(String(result.error && result.error.message));
      }
      done(result);
    });
  }
  selectAggregationTemporality(k) { return this.inner.selectAggregationTemporality(k); }
  selectAggregation(k) { return this.inner.selectAggregation ? this.inner.selectAggregation(k) : undefined; }
  forceFlush() { return this.inner.forceFlush(); }
  shutdown() { return this.inner.shutdown(); }
}

function provider(service, host) {
  const exporter = new CountingSpanExporter(new FanOutExporter(targets.map(traceExporter)));
  return new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': service, 'host.name': host }),
    spanProcessors: [new BatchSpanProcessor(exporter, { maxExportBatchSize: 64, scheduledDelayMillis: 50 })],
  });
}

const apiProv = provider('checkout-api', 'api-1');
const pricingProv = provider('pricing', 'pricing-1');
const inventoryProv = provider('inventory', 'inventory-1');
const apiTracer = apiProv.getTracer('checkout');
const pricingTracer = pricingProv.getTracer('pricing');
const inventoryTracer = inventoryProv.getTracer('inventory');

const metricsOut = new CountingMetricExporter(new FanOutExporter(targets.map(metricExporter)));
const reader = new PeriodicExportingMetricReader({ exporter: metricsOut, exportIntervalMillis: 60000 });
const meterProvider = new MeterProvider({
  resource: resourceFromAttributes({ 'service.name': 'checkout-api', 'host.name': 'api-1' }),
  readers: [reader],
});
const meter = meterProvider.getMeter('checkout');
const latency = meter.createHistogram('http.server.request.duration', { unit: 's' });
const requestsTotal = meter.createCounter('checkout.requests');
const poolUsed = meter.createUpDownCounter('db.client.connection.count');

const classes = ['standard', 'premium', 'enterprise'];

// One request at a given (simulated) start time in ms since the epoch.
function request(i, t0) {
  const wclass = classes[i % 3];
  const root = apiTracer.startSpan('GET /checkout', {
    kind: api.SpanKind.SERVER, startTime: t0, attributes: { 'workload.class': wclass },
  });
  const rootCtx = api.trace.setSpan(api.context.active(), root);
  // pricing and inventory in parallel; pricing is slower for enterprise.
  const pricingMs = 8 + (i % 7) + (wclass === 'enterprise' ? 40 : 0);
  const inventoryMs = 5 + (i % 5);
  const calls = [
    [pricingTracer, 'pricing', 'POST /price', pricingMs],
    [inventoryTracer, 'inventory', 'GET /stock', inventoryMs],
  ];
  let end = t0 + 1;
  const dbCalls = {
    pricing: ['SELECT prices', { 'db.system.name': 'postgresql', 'db.operation.name': 'SELECT',
                                 'db.collection.name': 'prices', 'server.address': 'pricing-db' }],
    inventory: ['HGET stock', { 'db.system': 'redis', 'db.operation': 'HGET', 'net.peer.name': 'inventory-cache' }],
  };
  for (const [tracer, svc, op, ms] of calls) {
    const client = apiTracer.startSpan(`${svc} ${op}`, { kind: api.SpanKind.CLIENT, startTime: t0 + 1 }, rootCtx);
    const clientCtx = api.trace.setSpan(rootCtx, client);
    const server = tracer.startSpan(op, { kind: api.SpanKind.SERVER, startTime: t0 + 2 }, clientCtx);
    const [dbName, dbAttrs] = dbCalls[svc];
    const db = tracer.startSpan(dbName, { kind: api.SpanKind.CLIENT, startTime: t0 + 3, attributes: dbAttrs },
                                api.trace.setSpan(clientCtx, server));
    db.end(t0 + 3 + (ms - 3));
    if (svc === 'pricing' && wclass === 'enterprise') {
      // every kind of attribute value, an event, a link and an error
      // status, so the encodings are compared on all of them
      server.setAttributes({ 'price.items': i, 'price.ratio': 0.1 * (i % 4) + 1e-7, 'cache.hit': i % 2 === 0,
                             'price.tiers': ['a', 'b'], 'price.caps': [1.5, 2], 'note': 'é ☃ "q"\n' });
      server.addEvent('cache.miss', { 'cache.key': `k${i}`, 'lookup.ms': 2.25 }, t0 + 3);
      server.addLink({ context: client.spanContext(), attributes: { 'link.kind': 'caller' } });
      server.setStatus({ code: api.SpanStatusCode.ERROR, message: 'price table stale' });
    }
    server.end(t0 + 2 + ms);
    client.end(t0 + 3 + ms);
    end = Math.max(end, t0 + 3 + ms);
  }
  const assemble = apiTracer.startSpan('assemble', { kind: api.SpanKind.INTERNAL, startTime: end }, rootCtx);
  assemble.end(end + 2);
  root.end(end + 3);
  latency.record((end + 3 - t0) / 1000, { 'workload.class': wclass });
  requestsTotal.add(1, { 'workload.class': wclass });
}

async function main() {
  const base = Date.now() - requests * 20;
  poolUsed.add(3, { 'db.client.connection.pool.name': 'pricing', 'db.client.connection.state': 'used' });
  for (let i = 0; i < requests; i++) request(i, base + i * 20);
  // A refused export rejects these promises; the counts above say what
  // happened, so settle them all and report.
  await Promise.allSettled([apiProv.forceFlush(), pricingProv.forceFlush(), inventoryProv.forceFlush()]);
  await Promise.allSettled([reader.forceFlush()]);
  await Promise.allSettled([apiProv.shutdown(), pricingProv.shutdown(), inventoryProv.shutdown(),
                            meterProvider.shutdown()]);
  fs.writeFileSync(idsFile, exported.join('\n') + (exported.length ? '\n' : ''));
  const summary = {
    spans_started: requests * 8,
    spans_exported: exported.length,
    spans_failed: failedSpans,
    span_errors: failures.slice(0, 3),
    metric_exports_ok: metricResults.ok,
    metric_exports_failed: metricResults.failed,
    metric_errors: metricResults.errors.slice(0, 3),
  };
  console.log(JSON.stringify(summary));
}

main().catch((e) => { console.error(e); process.exit(1); });
