// otel_pools_app.js - an instrumented "shop" endpoint whose connection pools
// are reported the way OpenTelemetry instrumentations report them, exported
// with the real OpenTelemetry JS SDK (OTLP/HTTP JSON) to argv[2].
//
// shop-api serves GET /shop: it calls pricing and profile (each through its
// own gRPC client pool: pricing-grpc, profile-grpc) in parallel and, in
// about two requests of three, recommendation (optional); pricing queries
// its own database through the pool pricing-pg. Spans carry
// workload.class. Pool metrics follow the semantic conventions:
//   db.client.connection.count{db.client.connection.state=used|idle}
//   db.client.connection.max, db.client.connection.pending_requests,
//   db.client.connection.wait_time (histogram, s)
// all with db.client.connection.pool.name. shop-api reports pricing-grpc
// (max 48, nearly full, requests pending) and profile-grpc (max 64);
// pricing reports pricing-pg (max 20). shop-api also reports its HTTP
// client connections to recommendation (http.client.open_connections by
// server.address and http.connection.state) and its request executor
// (executor.active, executor.slots, and a queue-age histogram named
// http.server.queue.age in seconds).
//
// MODE "tier": the spans carry no workload.class; the root span has
// tenant.tier (free/pro/enterprise) instead, next to a constant
// http.request.method and a per-request user.id; and shop-api reports one
// more pool whose name carries terminal escape sequences. MODE "cell": no
// class attribute on the spans; shop-api runs as two processes whose
// resources differ in deployment.cell (a, b), requests alternating.
//
// Usage: node otel_pools_app.js ENDPOINT [REQUESTS] [MODE]
'use strict';

const api = require('@opentelemetry/api');
const { BasicTracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http');
const { OTLPMetricExporter } = require('@opentelemetry/exporter-metrics-otlp-http');
const { MeterProvider, PeriodicExportingMetricReader } = require('@opentelemetry/sdk-metrics');
const { resourceFromAttributes } = require('@opentelemetry/resources');

const endpoint = process.argv[2];
const requests = parseInt(process.argv[3] || '120', 10);
const mode = process.argv[4] || '';
if (!endpoint) {
  console.error('usage: node otel_pools_app.js ENDPOINT [REQUESTS]');
  process.exit(2);
}

let failed = 0;
class Counting {
  constructor(inner) { this.inner = inner; }
  export(items, done) {
    this.inner.export(items, (r) => { if (r.code !== 0) failed++; done(r); });
  }
  shutdown() { return this.inner.shutdown(); }
  forceFlush() { return this.inner.forceFlush ? this.inner.forceFlush() : Promise.resolve(); }
  selectAggregationTemporality(k) { return this.inner.selectAggregationTemporality(k); }
  selectAggregation(k) { return this.inner.selectAggregation ? this.inner.selectAggregation(k) : undefined; }
}

function tracerProvider(service, host, extra) {
  return new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': service, 'host.name': host, ...(extra || {}) }),
    spanProcessors: [new BatchSpanProcessor(
      new Counting(new OTLPTraceExporter({ url: `${endpoint}/v1/traces` })),
      { maxExportBatchSize: 128, scheduledDelayMillis: 50 })],
  });
}

function meterProvider(service, host) {
  const reader = new PeriodicExportingMetricReader({
    exporter: new Counting(new OTLPMetricExporter({ url: `${endpoint}/v1/metrics` })),
    exportIntervalMillis: 60000,
  });
  return { reader, provider: new MeterProvider({
    resource: resourceFromAttributes({ 'service.name': service, 'host.name': host }),
    readers: [reader],
  }) };
}

const services = ['shop-api', 'pricing', 'profile', 'recommendation'];
const tp = {};
for (const s of services) tp[s] = tracerProvider(s, `${s}-1`);
// cell mode: shop-api runs as two processes in two deployment cells, and
// requests alternate between them
const cells = mode === 'cell'
  ? [tp['shop-api'], tracerProvider('shop-api', 'shop-api-2', { 'deployment.cell': 'b' })]
  : [tp['shop-api']];
if (mode === 'cell') {
  cells[0] = tp['shop-api'] = tracerProvider('shop-api', 'shop-api-1', { 'deployment.cell': 'a' });
}
let apiNow = cells[0];
const tracer = (s) => (s === 'shop-api' ? apiNow : tp[s]).getTracer(s);

// Durations in seconds with the semantic conventions' bucket advice (the
// SDK's default buckets are meant for milliseconds).
const SECONDS = { explicitBucketBoundaries: [0.001, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10] };

// Pool instruments, as a pool instrumentation records them.
function poolInstruments(meter) {
  return {
    count: meter.createUpDownCounter('db.client.connection.count', { unit: '{connection}' }),
    max: meter.createUpDownCounter('db.client.connection.max', { unit: '{connection}' }),
    pending: meter.createUpDownCounter('db.client.connection.pending_requests', { unit: '{request}' }),
    wait: meter.createHistogram('db.client.connection.wait_time', { unit: 's', advice: SECONDS }),
  };
}
function reportPool(inst, name, max, used, pending, waits) {
  const pool = { 'db.client.connection.pool.name': name };
  inst.max.add(max, pool);
  inst.count.add(used, { ...pool, 'db.client.connection.state': 'used' });
  inst.count.add(max - used, { ...pool, 'db.client.connection.state': 'idle' });
  inst.pending.add(pending, pool);
  for (const w of waits) inst.wait.record(w, pool);
}

const apiMeters = meterProvider('shop-api', 'shop-api-1');
const pricingMeters = meterProvider('pricing', 'pricing-1');

const classes = ['standard', 'standard', 'premium', 'enterprise'];

function call(parentCtx, from, to, op, t0, ms) {
  const client = tracer(from).startSpan(`${to} ${op}`, {
    kind: api.SpanKind.CLIENT, startTime: t0, attributes: { 'rpc.system': 'grpc', 'server.address': to },
  }, parentCtx);
  const ctx = api.trace.setSpan(parentCtx, client);
  const server = tracer(to).startSpan(op, { kind: api.SpanKind.SERVER, startTime: t0 + 1 }, ctx);
  return { client, server, ctx, end(t) { server.end(t - 1); client.end(t); } };
}

function request(i, t0) {
  apiNow = cells[i % cells.length];
  const wclass = classes[i % classes.length];
  const attrs = mode === 'tier'
    ? { 'tenant.tier': ['free', 'free', 'pro', 'enterprise'][i % 4], 'http.request.method': 'GET', 'user.id': `u${i}` }
    : mode === 'cell' ? { 'http.request.method': 'GET', 'user.id': `u${i}` }
    : { 'workload.class': wclass, 'http.request.method': 'GET' };
  const root = tracer('shop-api').startSpan('GET /shop', {
    kind: api.SpanKind.SERVER, startTime: t0, attributes: attrs,
  });
  const rootCtx = api.trace.setSpan(api.context.active(), root);
  const pricingMs = 20 + (i % 9) + (wclass === 'enterprise' ? 60 : 0);
  const p = call(rootCtx, 'shop-api', 'pricing', 'Quote', t0 + 1, pricingMs);
  // pricing's own database query inside its server span
  const q = tracer('pricing').startSpan('SELECT prices', {
    kind: api.SpanKind.CLIENT, startTime: t0 + 3,
    attributes: { 'db.system.name': 'postgresql', 'db.client.connection.pool.name': 'pricing-pg' },
  }, p.ctx);
  q.end(t0 + 3 + pricingMs / 2);
  p.end(t0 + 1 + pricingMs);
  const prMs = 10 + (i % 5);
  const pr = call(rootCtx, 'shop-api', 'profile', 'Get', t0 + 1, prMs);
  pr.end(t0 + 1 + prMs);
  let end = t0 + 2 + Math.max(pricingMs, prMs);
  if (i % 3 !== 0) {
    const rec = call(rootCtx, 'shop-api', 'recommendation', 'List', t0 + 1, 15);
    rec.end(t0 + 16);
    end = Math.max(end, t0 + 17);
  }
  const asm = tracer('shop-api').startSpan('assemble', { kind: api.SpanKind.INTERNAL, startTime: end }, rootCtx);
  asm.end(end + 2);
  root.end(end + 3);
}

async function main() {
  const base = Date.now() - requests * 25;
  for (let i = 0; i < requests; i++) request(i, base + i * 25);
  const apiPools = poolInstruments(apiMeters.provider.getMeter('pool-instrumentation'));
  reportPool(apiPools, 'pricing-grpc', 48, 46, 9, [0.002, 0.04, 0.09, 0.12, 0.2]);
  reportPool(apiPools, 'profile-grpc', 64, 12, 0, [0.0005, 0.001]);
  const pricingPools = poolInstruments(pricingMeters.provider.getMeter('pool-instrumentation'));
  reportPool(pricingPools, 'pricing-pg', 20, 7, 0, [0.001]);
  // tier mode: a pool name with terminal escapes (data is never trusted)
  if (mode === 'tier') reportPool(apiPools, 'cache\u001b]0;owned\u0007\u001b[2J-grpc', 8, 1, 0, []);
  const apiMeter = apiMeters.provider.getMeter('runtime');
  const httpConns = apiMeter.createUpDownCounter('http.client.open_connections', { unit: '{connection}' });
  const peer = { 'server.address': 'recommendation', 'server.port': 8080 };
  httpConns.add(5, { ...peer, 'http.connection.state': 'active' });
  httpConns.add(3, { ...peer, 'http.connection.state': 'idle' });
  apiMeter.createUpDownCounter('executor.active', { unit: '{thread}' }).add(30);
  apiMeter.createUpDownCounter('executor.slots', { unit: '{thread}' }).add(32);
  const qa = apiMeter.createHistogram('http.server.queue.age', { unit: 's', advice: SECONDS });
  for (const v of [0.001, 0.002, 0.004, 0.02, 0.03]) qa.record(v);
  const providers = [...new Set([...services.map((s) => tp[s]), ...cells])];
  await Promise.allSettled(providers.map((p) => p.forceFlush()));
  await Promise.allSettled([apiMeters.reader.forceFlush(), pricingMeters.reader.forceFlush()]);
  // waits observed after the first export: the second (cumulative) export
  // carries them as the increase over the range
  for (const w of [0.03, 0.06, 0.08, 0.11, 0.14, 0.25]) {
    apiPools.wait.record(w, { 'db.client.connection.pool.name': 'pricing-grpc' });
  }
  for (const v of [0.003, 0.006, 0.015]) qa.record(v);
  await Promise.allSettled([...providers.map((p) => p.shutdown()),
    apiMeters.provider.shutdown(), pricingMeters.provider.shutdown()]);
  console.log(JSON.stringify({ requests, failed_exports: failed }));
  if (failed) process.exit(1);
}

main().catch((e) => { console.error(e); process.exit(1); });
