// app_common.js - what the multi-process test apps (http_app.js,
// express_app.js) share: a service process traced by the OpenTelemetry JS
// SDK, its children started and stopped by the load process, and the load
// itself (open-loop, Poisson arrivals), which measures the latency it sees
// so that a test can tell whether an incident showed before it judges the
// Board.
'use strict';

const http = require('http');
const { spawn } = require('child_process');

// Registers the SDK for service `name`, exporting OTLP/HTTP traces to
// endpoint, with the given auto-instrumentations. Returns the provider
// (forceFlush before the load process reads the results).
function tracing(name, endpoint, instrumentations) {
  const { NodeTracerProvider } = require('@opentelemetry/sdk-trace-node');
  const { BatchSpanProcessor } = require('@opentelemetry/sdk-trace-base');
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http');
  const { resourceFromAttributes } = require('@opentelemetry/resources');
  const { registerInstrumentations } = require('@opentelemetry/instrumentation');
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': name }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint}/v1/traces` }),
      { maxQueueSize: 100000, maxExportBatchSize: 512, scheduledDelayMillis: 200 })],
  });
  provider.register();
  registerInstrumentations({ instrumentations });
  return provider;
}

// The control requests every service answers (true when req was one):
// /_flush exports the spans it holds; /_loop answers the p99 of this
// process's event-loop delay, in ms, since the last /_loop (how late its
// timers ran: the process's own account of being starved, by its own
// work or by the machine) and starts counting again.
function monitor(provider) {
  const { monitorEventLoopDelay } = require('perf_hooks');
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  return async (req, res) => {
    if (req.url === '/_flush') { await provider.forceFlush(); res.end('ok'); return true; }
    if (req.url === '/_loop') {
      const p99 = h.count ? h.percentile(99) / 1e6 : NaN;
      h.reset();
      res.end(JSON.stringify(p99));
      return true;
    }
    return false;
  };
}

// GET http://127.0.0.1:port/path; resolves with the milliseconds it took
// (NaN on an error).
function hit(port, path, agent) {
  const t0 = process.hrtime.bigint();
  return new Promise((resolve) => {
    const r = http.get({ host: '127.0.0.1', port, path, agent }, (m) => {
      m.resume();
      m.on('end', () => resolve(Number(process.hrtime.bigint() - t0) / 1e6));
    });
    r.on('error', () => resolve(NaN));
  });
}

// GET http://127.0.0.1:port/path and its body as JSON (NaN when it fails).
function getJson(port, path, agent) {
  return new Promise((resolve) => {
    const r = http.get({ host: '127.0.0.1', port, path, agent }, (m) => {
      let body = '';
      m.on('data', (d) => { body += d; });
      m.on('end', () => { try { resolve(JSON.parse(body)); } catch (e) { resolve(NaN); } });
    });
    r.on('error', () => resolve(NaN));
  });
}

function p90(v) {
  const s = v.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  return s.length ? s[Math.ceil(0.9 * s.length) - 1] : NaN;
}

// One phase of load: requests to port/path at `rate` per second (Poisson
// arrivals: evenly spaced requests never overlap, so no pool would ever
// queue) for `seconds`. Resolves with [start ms, end ms, requests, p90 ms].
async function phase(port, path, agent, rate, seconds) {
  const t0 = Date.now();
  const all = [];
  let next = t0;
  while (Date.now() - t0 < seconds * 1000) {
    all.push(hit(port, path, agent));
    next += (-Math.log(1 - Math.random()) * 1000) / rate;
    await new Promise((r) => setTimeout(r, Math.max(0, next - Date.now())));
  }
  const ms = await Promise.all(all);
  return [t0, Date.now(), all.length, p90(ms)];
}

// The service processes of one run: start(name, env) runs
// `node file --service name 0 endpoint` and resolves with the port it
// prints; stop() ends them all.
function children(file, endpoint) {
  const kids = [];
  return {
    start: (name, env) => new Promise((resolve, reject) => {
      const k = spawn(process.execPath, [file, '--service', name, '0', endpoint],
        { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
      kids.push(k);
      k.stdout.once('data', (d) => resolve(parseInt(String(d), 10)));
      k.once('exit', (c) => reject(new Error(`${name} exited (${c})`)));
    }),
    stop: () => {
      for (const k of kids) {
        k.removeAllListeners('exit');
        k.kill();
      }
    },
  };
}

const pause = (ms) => new Promise((r) => setTimeout(r, ms));

// One run of an app: starts the services (o.backends, then o.front with
// the backends' ports as JSON in environment variable o.portsEnv), loads
// o.front's o.path for o.warmup seconds (in neither phase: the first
// requests compile and warm the code paths), then a baseline phase,
// o.trigger(ports, agent), an incident phase, flushes every service and
// prints {"baseline": "A..B", "incident": "A..B", "requests": N,
// "p90_ms": [baseline, incident], "loop_p99_ms": {service: [baseline,
// incident]}}: the load's p90 latency and each process's event-loop delay
// p99 (monitor()) in each phase. Control requests are requests of the
// services too: 50 ms apart from both phases.
async function run(o) {
  const ports = {};
  const kids = children(o.file, o.endpoint);
  try {
    for (const n of o.backends)
      ports[n] = await kids.start(n, {});
    ports[o.front] = await kids.start(o.front, { [o.portsEnv]: JSON.stringify(ports) });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1024 });
    const load = (s) => phase(ports[o.front], o.path, agent, o.rate, s);
    if (o.warmup > 0) {
      await load(o.warmup);
      await pause(50);
    }
    const loops = async () => {
      const names = Object.keys(ports);
      const v = await Promise.all(names.map((n) => getJson(ports[n], '/_loop', agent)));
      return Object.fromEntries(names.map((n, k) => [n, v[k]]));
    };
    await loops();
    const [b0, b1, nb, pb] = await load(o.seconds);
    await pause(50);
    const lb = await loops();
    await o.trigger(ports, agent);
    await pause(50);
    const [i0, i1, ni, pi] = await load(o.seconds);
    await pause(50);
    const li = await loops();
    await Promise.all(Object.values(ports).map((p) => hit(p, '/_flush', agent)));
    const loop = Object.fromEntries(Object.keys(ports).map((n) => [n, [lb[n], li[n]]]));
    console.log(JSON.stringify({ baseline: `${b0}..${b1}`, incident: `${i0}..${i1}`,
      requests: nb + ni, p90_ms: [pb, pi], loop_p99_ms: loop }));
  } finally {
    kids.stop();
  }
}

module.exports = { tracing, monitor, hit, run };
