// routes_app.js - a route-less HTTP storefront with two endpoints, each
// service its own Node process traced by the OpenTelemetry JS SDK's HTTP
// auto-instrumentation (no span made by hand), exporting OTLP/HTTP to
// argv[2]. The instrumentation names every server span "GET" and gives no
// http.route (plain node:http has no router): the endpoint is only in the
// path, with ids in it.
//
//   GET /api/items/<number>   on storefront calls catalog (most requests)
//   GET /api/cart/<uuid>      on storefront calls session, then cart
//
// Load runs open-loop (Poisson arrivals at RATE requests/s), a share CART of
// them to the cart route: a baseline phase, then an incident phase of the
// same length with CAUSE:
//   none        nothing changes
//   cart-slow   cart's own handling gets slower (600 to 800 ms more):
//               only the less common endpoint gets slower
// With LOADGEN "traced" the load generator is traced too (service
// "loadgenerator", the same instrumentation): every trace then starts at
// its CLIENT span "GET" above storefront's server span, as a capture of the
// OpenTelemetry demo does; "plain" (the default): storefront's server spans
// are the roots.
//
// It prints {"baseline": "A..B", "incident": "A..B", "requests": N,
// "p90_ms": {"baseline": {"cart": MS, "items": MS}, "incident": {...}}} (epoch
// ms) once every process has flushed its spans.
//
// Usage: node routes_app.js ENDPOINT none|cart-slow [RATE] [SECONDS_PER_PHASE] [CART] [plain|traced]
//        (a service process: node routes_app.js --service NAME PORT ENDPOINT)
'use strict';

const http = require('http');
const crypto = require('crypto');
const { spawn } = require('child_process');

const PORTS = { storefront: 0, catalog: 0, session: 0, cart: 0 };
const WORK = { storefront: 2, catalog: 8, session: 3, cart: 10 }; // ms

function tracing(name, endpoint) {
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
  return provider;
}

function service(name, port, endpoint) {
  const provider = tracing(name, endpoint);
  const h = require('http'); // patched from here on
  const agent = new h.Agent({ keepAlive: true, maxSockets: 256 });
  const peers = JSON.parse(process.env.ROUTES_APP_PORTS || '{}');
  let slow = false;
  const get = (p, path) => new Promise((resolve) => {
    const r = h.get({ host: '127.0.0.1', port: p, path, agent }, (m) => { m.resume(); m.on('end', resolve); });
    r.on('error', resolve);
  });
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const server = h.createServer(async (req, res) => {
    if (req.url === '/_slow') { slow = true; res.end('ok'); return; }
    if (req.url === '/_flush') { await provider.forceFlush(); res.end('ok'); return; }
    await sleep(WORK[name] * (1 + Math.random()) + (slow ? 600 + 200 * Math.random() : 0));
    if (name === 'storefront') {
      const m = /^\/api\/(items|cart)\/([^/?]+)/.exec(req.url || '');
      if (m && m[1] === 'items') {
        await get(peers.catalog, `/items/${m[2]}`);
      } else if (m) {
        await get(peers.session, '/session');
        await get(peers.cart, `/cart/${m[2]}`);
      }
    }
    res.end('done');
  });
  server.listen(port, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
}

async function main() {
  const [endpoint, cause] = [process.argv[2], process.argv[3]];
  const rate = parseFloat(process.argv[4] || '40');
  const seconds = parseFloat(process.argv[5] || '6');
  const cartShare = parseFloat(process.argv[6] || '0.25');
  const loadgen = process.argv[7] || 'plain';
  if (!endpoint || !['none', 'cart-slow'].includes(cause) || !['plain', 'traced'].includes(loadgen)) {
    console.error('usage: node routes_app.js ENDPOINT none|cart-slow [RATE] [SECONDS] [CART] [plain|traced]');
    process.exit(2);
  }
  // the load generator's own spans, when asked: CLIENT roots above storefront
  const lg = loadgen === 'traced' ? tracing('loadgenerator', endpoint) : null;
  const h = require('http');
  const kids = [];
  const start = (name, env) => new Promise((resolve, reject) => {
    const k = spawn(process.execPath, [__filename, '--service', name, '0', endpoint],
      { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    kids.push(k);
    k.stdout.once('data', (d) => resolve(parseInt(String(d), 10)));
    k.once('exit', (c) => reject(new Error(`${name} exited (${c})`)));
  });
  const hit = (port, path, agent) => new Promise((resolve) => {
    const r = h.get({ host: '127.0.0.1', port, path, agent }, (m) => { m.resume(); m.on('end', resolve); });
    r.on('error', resolve);
  });
  try {
    for (const n of ['catalog', 'session', 'cart'])
      PORTS[n] = await start(n, {});
    PORTS.storefront = await start('storefront', { ROUTES_APP_PORTS: JSON.stringify(PORTS) });
    const agent = new h.Agent({ keepAlive: true, maxSockets: 1024 });
    // the p90 of what the load saw per route, in ms (a test checks that
    // the incident showed before it reads the spans: a busy machine can
    // hide it)
    const p90 = (v) => (v.length ? v.sort((a, b) => a - b)[Math.ceil(0.9 * v.length) - 1] : null);
    const phase = async (secs = seconds) => {
      const t0 = Date.now();
      const all = [];
      const took = { cart: [], items: [] };
      let next = t0;
      while (Date.now() - t0 < secs * 1000) {
        const cart = Math.random() < cartShare;
        const path = cart ? `/api/cart/${crypto.randomUUID()}`
          : `/api/items/${10000 + Math.floor(Math.random() * 90000)}`;
        const s = Date.now();
        all.push(hit(PORTS.storefront, path, agent).then(() => took[cart ? 'cart' : 'items'].push(Date.now() - s)));
        next += (-Math.log(1 - Math.random()) * 1000) / rate;
        await new Promise((r) => setTimeout(r, Math.max(0, next - Date.now())));
      }
      await Promise.all(all);
      return [t0, Date.now(), all.length, { cart: p90(took.cart), items: p90(took.items) }];
    };
    // the control requests are endpoints of their own (GET /_slow, GET
    // /_flush): kept clear of both phases' ranges
    const pause = () => new Promise((r) => setTimeout(r, 50));
    // a warm-up (the processes' first requests are slower: code not yet
    // compiled, sockets not open), in neither range
    await phase(Math.max(10, seconds));
    await pause();
    const [b0, b1, nb, bp] = await phase();
    await pause();
    if (cause === 'cart-slow') await hit(PORTS.cart, '/_slow', agent);
    await pause();
    const [i0, i1, ni, ip] = await phase();
    await pause();
    await Promise.all(Object.values(PORTS).map((p) => hit(p, '/_flush', agent)));
    if (lg) await lg.forceFlush();
    console.log(JSON.stringify({ baseline: `${b0}..${b1}`, incident: `${i0}..${i1}`, requests: nb + ni,
                                 p90_ms: { baseline: bp, incident: ip } }));
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
  main().catch((e) => {
    console.error(e && e.stack ? e.stack : String(e));
    process.exit(1);
  });
