// http_app.js - a storefront of five real HTTP services on loopback, each
// its own Node process traced by the OpenTelemetry JS SDK's HTTP
// auto-instrumentation (no span made by hand), exporting OTLP/HTTP to
// argv[2]. What that instrumentation emits is what the test is about:
// every client span is named after the method alone ("GET") and names its
// peer by the semantic conventions before 1.21 (net.peer.name 127.0.0.1,
// net.peer.port), every server span ends once the response is flushed
// (often just after the client has read it), and the services differ only
// by port.
//
// GET /cart on storefront calls session, then catalog, quote and reviews
// in parallel. Load runs open-loop, Poisson arrivals at RATE requests/s
// (so calls overlap as they would; evenly spaced ones never queue): a
// baseline phase,
// then an incident phase of the same length with CAUSE:
//   none   nothing changes
//   slow   catalog's own handling gets slower (40 ms more on average)
//   pool   storefront's connection pool to quote shrinks to one socket:
//          calls queue in the Node HTTP agent, inside the client span,
//          before quote's server span starts
//   cpu    catalog does CPU-bound work (18 ms on average, its event loop
//          blocked meanwhile: about 70 % busy at 40 requests/s): its
//          spans grow, and calls wait before its server span opens, in
//          its socket, while the loop is busy with another request
// It prints {"baseline": "A..B", "incident": "A..B", "requests": N} (epoch
// ms) once every service has flushed its spans.
//
// Usage: node http_app.js ENDPOINT none|slow|pool|cpu [RATE] [SECONDS_PER_PHASE]
//        (a service process: node http_app.js --service NAME PORT ENDPOINT)
'use strict';

const http = require('http');
const { spawn } = require('child_process');

const PORTS = { storefront: 0, session: 0, catalog: 0, quote: 0, reviews: 0 };
const WORK = { storefront: 2, session: 3, catalog: 8, quote: 10, reviews: 6 }; // ms

function service(name, port, endpoint) {
  const { NodeTracerProvider } = require('@opentelemetry/sdk-trace-node');
  const { BatchSpanProcessor } = require('@opentelemetry/sdk-trace-base');
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http');
  const { resourceFromAttributes } = require('@opentelemetry/resources');
  const { registerInstrumentations } = require('@opentelemetry/instrumentation');
  const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http');
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': name }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint}/v1/traces` }),
      { maxQueueSize: 100000, maxExportBatchSize: 512, scheduledDelayMillis: 200 })],
  });
  provider.register();
  registerInstrumentations({ instrumentations: [new HttpInstrumentation()] });
  const h = require('http'); // patched from here on
  const agent = new h.Agent({ keepAlive: true, maxSockets: 256 });
  let quoteAgent = agent;
  const peers = JSON.parse(process.env.HTTP_APP_PORTS || '{}');
  let slow = false, cpu = false;
  const get = (p, path) => new Promise((resolve) => {
    const a = p === peers.quote ? quoteAgent : agent;
    const r = h.get({ host: '127.0.0.1', port: p, path, agent: a }, (m) => { m.resume(); m.on('end', resolve); });
    r.on('error', resolve);
  });
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const server = h.createServer(async (req, res) => {
    if (req.url === '/_slow') { slow = true; res.end('ok'); return; }
    if (req.url === '/_cpu') { cpu = true; res.end('ok'); return; }
    if (cpu) { // busy, not asleep: nothing else runs in this process meanwhile
      const until = Date.now() + 36 * Math.random();
      while (Date.now() < until);
    }
    if (req.url === '/_pool') {
      quoteAgent = new h.Agent({ keepAlive: true, maxSockets: 1 });
      res.end('ok');
      return;
    }
    if (req.url === '/_flush') { await provider.forceFlush(); res.end('ok'); return; }
    await sleep(WORK[name] * (1 + Math.random()) + (slow ? 80 * Math.random() : 0));
    if (name === 'storefront') {
      await get(peers.session, '/session');
      await Promise.all([get(peers.catalog, '/items'), get(peers.quote, '/quote'),
        get(peers.reviews, '/reviews')]);
    }
    res.end('done');
  });
  server.listen(port, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
}

function hit(port, path, agent) {
  return new Promise((resolve) => {
    const r = http.get({ host: '127.0.0.1', port, path, agent }, (m) => { m.resume(); m.on('end', resolve); });
    r.on('error', resolve);
  });
}

async function main() {
  const [endpoint, cause] = [process.argv[2], process.argv[3]];
  const rate = parseFloat(process.argv[4] || '40');
  const seconds = parseFloat(process.argv[5] || '6');
  if (!endpoint || !['none', 'slow', 'pool', 'cpu'].includes(cause)) {
    console.error('usage: node http_app.js ENDPOINT none|slow|pool|cpu [RATE] [SECONDS_PER_PHASE]');
    process.exit(2);
  }
  const kids = [];
  const start = (name, env) => new Promise((resolve, reject) => {
    const k = spawn(process.execPath, [__filename, '--service', name, '0', endpoint],
      { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    kids.push(k);
    k.stdout.once('data', (d) => resolve(parseInt(String(d), 10)));
    k.once('exit', (c) => reject(new Error(`${name} exited (${c})`)));
  });
  try {
    for (const n of ['session', 'catalog', 'quote', 'reviews'])
      PORTS[n] = await start(n, {});
    PORTS.storefront = await start('storefront', { HTTP_APP_PORTS: JSON.stringify(PORTS) });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1024 });
    const phase = async () => {
      const t0 = Date.now();
      const all = [];
      let next = t0;
      while (Date.now() - t0 < seconds * 1000) {
        all.push(hit(PORTS.storefront, '/cart', agent));
        next += (-Math.log(1 - Math.random()) * 1000) / rate;
        await new Promise((r) => setTimeout(r, Math.max(0, next - Date.now())));
      }
      await Promise.all(all);
      return [t0, Date.now(), all.length];
    };
    // the control requests are root spans "GET" of storefront too (the
    // instrumentation names a route-less server span after the method):
    // kept clear of both phases' ranges
    const pause = () => new Promise((r) => setTimeout(r, 50));
    const [b0, b1, nb] = await phase();
    await pause();
    if (cause === 'slow') await hit(PORTS.catalog, '/_slow', agent);
    if (cause === 'pool') await hit(PORTS.storefront, '/_pool', agent);
    if (cause === 'cpu') await hit(PORTS.catalog, '/_cpu', agent);
    await pause();
    const [i0, i1, ni] = await phase();
    await pause();
    await Promise.all(Object.values(PORTS).map((p) => hit(p, '/_flush', agent)));
    console.log(JSON.stringify({ baseline: `${b0}..${b1}`, incident: `${i0}..${i1}`, requests: nb + ni }));
  } finally {
    for (const k of kids) {
      k.removeAllListeners('exit');
      k.kill();
    }
  }
}

if (process.argv[2] === '--service')
  service(process.argv[3], parseInt(process.argv[4], 10), process.argv[5]);
else
  main().catch((e) => { console.error(String(e)); process.exit(1); });
