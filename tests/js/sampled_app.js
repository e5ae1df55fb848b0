// sampled_app.js - production-like telemetry from the real OpenTelemetry JS
// SDK: traces head-sampled at a few percent, metrics complete.
//
// Four real HTTP services on loopback, each its own Node process, traced by
// the SDK's HTTP auto-instrumentation (no span made by hand) with a
// ParentBased(TraceIdRatioBased(RATIO)) sampler: the storefront decides for
// the whole request, its callees follow the sampled flag it propagates.
// (The SDK's TraceIdRatioBasedSampler writes nothing into tracestate, so
// the sampling cannot be read from the spans: the test says --sampled.)
// Every service also has a MeterProvider: the HTTP instrumentation records
// http.server.request.duration and http.client.request.duration (stable
// semantic conventions, OTEL_SEMCONV_STABILITY_OPT_IN=http) for every
// request, sampled or not, and the storefront reports its connection pool
// to pricing the way a pool instrumentation does: db.client.connection.
// wait_time (the time a request waited for a socket of the pool's agent),
// db.client.connection.max, with db.client.connection.pool.name
// "pricing-pool". Metrics are exported (cumulative) at the start and at the
// end of every phase, so each phase's range holds one point of every
// series and the one before it lies before the range.
//
// GET /cart on storefront calls session, then pricing and catalog in
// parallel. Load is open-loop, Poisson arrivals at RATE requests/s.
// PHASES is a comma-separated list, each phase SECONDS long, of:
//   none   nothing changes
//   pool   storefront's pool to pricing shrinks from 64 sockets to POOL
//          (default 1): calls queue in the agent, inside the client span,
//          before pricing's server span starts
//   slow   catalog's own handling gets slower (150 to 300 ms more)
// The controls travel over the processes' IPC channel, never as HTTP
// requests (which would be traced and counted as requests of the endpoint).
// It prints {"phases": [{"cause", "range": "A..B" (epoch ms), "requests",
// "own"}], "ratio"} once every service has flushed; "own" is the phase as
// the app measured it (ms): /cart's p90 and p99 at the load generator,
// storefront's p99 wait for a pricing socket, catalog's p90 handling time,
// and per service the p99 of its event-loop delay (how late its timers
// ran: a process starved by the machine shows it there).
//
// Usage: node sampled_app.js ENDPOINT RATIO RATE SECONDS PHASES [POOL]
'use strict';

const http = require('http');
const { spawn } = require('child_process');

const WORK = { storefront: 2, session: 3, catalog: 8, pricing: 20 }; // ms

function service(name, endpoint, ratio, peers) {
  process.env.OTEL_SEMCONV_STABILITY_OPT_IN = 'http';
  const api = require('@opentelemetry/api');
  const { NodeTracerProvider } = require('@opentelemetry/sdk-trace-node');
  const { BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler } =
    require('@opentelemetry/sdk-trace-base');
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http');
  const { OTLPMetricExporter } = require('@opentelemetry/exporter-metrics-otlp-http');
  const { MeterProvider, PeriodicExportingMetricReader } = require('@opentelemetry/sdk-metrics');
  const { resourceFromAttributes } = require('@opentelemetry/resources');
  const { registerInstrumentations } = require('@opentelemetry/instrumentation');
  const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http');
  const resource = resourceFromAttributes({ 'service.name': name });
  const provider = new NodeTracerProvider({
    resource,
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint}/v1/traces` }),
      { maxQueueSize: 100000, maxExportBatchSize: 512, scheduledDelayMillis: 200 })],
  });
  provider.register();
  const reader = new PeriodicExportingMetricReader({
    exporter: new OTLPMetricExporter({ url: `${endpoint}/v1/metrics` }),
    exportIntervalMillis: 3600000, // exported at the phase boundaries only
  });
  const meters = new MeterProvider({ resource, readers: [reader] });
  api.metrics.setGlobalMeterProvider(meters);
  registerInstrumentations({ instrumentations: [new HttpInstrumentation()], meterProvider: meters });
  const h = require('http'); // patched from here on
  const agent = new h.Agent({ keepAlive: true, maxSockets: 256 });
  let pricingAgent = new h.Agent({ keepAlive: true, maxSockets: 64 });
  let slow = false;
  // the pool to pricing, reported as a pool instrumentation does
  const meter = meters.getMeter('pool-instrumentation');
  const pool = { 'db.client.connection.pool.name': 'pricing-pool' };
  const waitTime = meter.createHistogram('db.client.connection.wait_time', {
    unit: 's',
    advice: { explicitBucketBoundaries: [0.001, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10] },
  });
  const poolMax = meter.createUpDownCounter('db.client.connection.max', { unit: '{connection}' });
  let maxNow = 64;
  if (name === 'storefront') poolMax.add(maxNow, pool);
  const get = (port, path) => new Promise((resolve) => {
    const toPricing = port === peers.pricing;
    const t0 = process.hrtime.bigint();
    const r = h.get({ host: '127.0.0.1', port, path, agent: toPricing ? pricingAgent : agent },
      (m) => { m.resume(); m.on('end', resolve); });
    if (toPricing) {
      r.once('socket', () => {
        const s = Number(process.hrtime.bigint() - t0) / 1e9;
        waitTime.record(s, pool);
        own.wait.push(s * 1000);
      });
    }
    r.on('error', resolve);
  });
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  // the app's own numbers since the last flush: what the fault did, as the
  // service itself measured it (ms), and how late its event loop ran its
  // timers (p99, ms): its own account of being starved by the machine
  let own = { wait: [], handle: [] };
  const { monitorEventLoopDelay } = require('perf_hooks');
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  process.on('message', async (m) => {
    if (m.cmd === 'pool') {
      pricingAgent = new h.Agent({ keepAlive: true, maxSockets: m.size });
      poolMax.add(m.size - maxNow, pool);
      maxNow = m.size;
    } else if (m.cmd === 'slow') {
      slow = m.on;
    } else if (m.cmd === 'flush') {
      await provider.forceFlush();
      await reader.forceFlush();
      const mine = own;
      own = { wait: [], handle: [] };
      const loopP99 = loop.count ? loop.percentile(99) / 1e6 : null;
      loop.reset();
      process.send({ done: m.cmd, own: { wait_p99: pct(mine.wait, 99), handle_p90: pct(mine.handle, 90),
        loop_p99: loopP99 } });
      return;
    }
    process.send({ done: m.cmd });
  });
  const server = h.createServer(async (req, res) => {
    const t0 = process.hrtime.bigint();
    await sleep(WORK[name] * (1 + Math.random()) + (slow && name === 'catalog' ? 150 + 150 * Math.random() : 0));
    if (name === 'storefront') {
      await get(peers.session, '/session');
      await Promise.all([get(peers.pricing, '/quote'), get(peers.catalog, '/items')]);
    }
    own.handle.push(Number(process.hrtime.bigint() - t0) / 1e6);
    res.end('done');
  });
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
}

// Nearest-rank percentile of xs (ms), null when empty.
function pct(xs, p) {
  if (xs.length === 0) return null;
  const v = xs.slice().sort((a, b) => a - b);
  return v[Math.min(v.length, Math.max(1, Math.ceil((p / 100) * v.length))) - 1];
}

// One request to /cart; resolves with its latency as the client saw it (ms).
function hit(port, agent) {
  const t0 = process.hrtime.bigint();
  const done = () => Number(process.hrtime.bigint() - t0) / 1e6;
  return new Promise((resolve) => {
    const r = http.get({ host: '127.0.0.1', port, path: '/cart', agent }, (m) => { m.resume(); m.on('end', () => resolve(done())); });
    r.on('error', () => resolve(done()));
  });
}

async function main() {
  const [endpoint, ratioArg, rateArg, secondsArg, phasesArg, poolArg] = process.argv.slice(2);
  const ratio = parseFloat(ratioArg);
  const rate = parseFloat(rateArg);
  const seconds = parseFloat(secondsArg);
  const phases = (phasesArg || '').split(',');
  const poolSize = parseInt(poolArg || '1', 10);
  if (!endpoint || !(ratio > 0 && ratio <= 1) || !(rate > 0) || !(seconds > 0) ||
      !phases.every((p) => ['none', 'pool', 'slow'].includes(p))) {
    console.error('usage: node sampled_app.js ENDPOINT RATIO RATE SECONDS none|pool|slow[,...] [POOL]');
    process.exit(2);
  }
  const kids = {};
  const waiting = new Map();
  const start = (name, peers) => new Promise((resolve, reject) => {
    const k = spawn(process.execPath, [__filename, '--service', name, endpoint, String(ratio), JSON.stringify(peers)],
      { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    kids[name] = k;
    k.on('message', (m) => {
      if (m.port) resolve(m.port);
      if (m.done && waiting.has(`${name}:${m.done}`)) {
        const w = waiting.get(`${name}:${m.done}`);
        waiting.delete(`${name}:${m.done}`);
        w(m.own);
      }
    });
    k.once('exit', (c) => reject(new Error(`${name} exited (${c})`)));
  });
  const tell = (name, m) => new Promise((resolve) => {
    waiting.set(`${name}:${m.cmd}`, resolve);
    kids[name].send(m);
  });
  // flushes every service; returns their own numbers since the last flush
  const flushAll = async () => {
    const names = Object.keys(kids);
    const got = await Promise.all(names.map((n) => tell(n, { cmd: 'flush' })));
    return Object.fromEntries(names.map((n, i) => [n, got[i]]));
  };
  // open-loop Poisson arrivals for `secs`; resolves with the latencies
  const load = async (secs) => {
    const t0 = Date.now();
    const all = [];
    let next = t0;
    while (Date.now() - t0 < secs * 1000) {
      all.push(hit(ports.storefront, agent));
      next += (-Math.log(1 - Math.random()) * 1000) / rate;
      await new Promise((r) => setTimeout(r, Math.max(0, next - Date.now())));
    }
    return Promise.all(all);
  };
  const ports = {};
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4096 });
  try {
    for (const n of ['session', 'pricing', 'catalog']) ports[n] = await start(n, {});
    ports.storefront = await start('storefront', ports);
    const out = [];
    // a warm-up (compiled code, open sockets, every histogram series
    // present), then the point before the first phase
    await load(Math.min(5, seconds / 4));
    await flushAll();
    const pause = () => new Promise((r) => setTimeout(r, 20));
    for (const cause of phases) {
      await tell('storefront', { cmd: 'pool', size: cause === 'pool' ? poolSize : 64 });
      await tell('catalog', { cmd: 'slow', on: cause === 'slow' });
      await pause();
      const t0 = Date.now();
      const lat = await load(seconds);
      const own = await flushAll();
      const t1 = Date.now() + 1;
      out.push({
        cause, range: `${t0}..${t1}`, requests: lat.length,
        // the app's own view: /cart as the load generator saw it, the
        // pool's waits as storefront measured them, catalog's handling
        own: { cart_p90: pct(lat, 90), cart_p99: pct(lat, 99), pool_wait_p99: own.storefront.wait_p99,
          catalog_p90: own.catalog.handle_p90,
          loop_p99: Object.fromEntries(Object.entries(own).map(([n, o]) => [n, o.loop_p99])) },
      });
      await pause();
    }
    console.log(JSON.stringify({ phases: out, ratio }));
  } finally {
    for (const k of Object.values(kids)) {
      k.removeAllListeners('exit');
      k.kill();
    }
  }
}

if (process.argv[2] === '--service')
  service(process.argv[3], process.argv[4], parseFloat(process.argv[5]), JSON.parse(process.argv[6]));
else
  main().catch((e) => { console.error(String(e)); process.exit(1); });
