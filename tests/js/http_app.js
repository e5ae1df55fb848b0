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
// (so calls overlap as they would; evenly spaced ones never queue): two
// seconds of warm-up in neither phase, a baseline phase, then an incident
// phase of the same length with CAUSE:
//   none   nothing changes
//   slow   catalog's own handling gets slower (40 ms more on average)
//   pool   storefront's connection pool to quote shrinks to one socket:
//          calls queue in the Node HTTP agent, inside the client span,
//          before quote's server span starts
//   cpu    catalog does CPU-bound work (18 ms on average, its event loop
//          blocked meanwhile: about 70 % busy at 40 requests/s): its
//          spans grow, and calls wait before its server span opens, in
//          its socket, while the loop is busy with another request
//   busy   storefront, the caller, is starved: a task inside its process
//          keeps its event loop busy (CPU-bound bursts, about 60 % of the
//          time), so it is late to send its calls and late to read their
//          answers: every client wait it records grows, toward all four
//          callees at once, while their own server spans do not
// It prints {"baseline": "A..B", "incident": "A..B", "requests": N,
// "p90_ms": [baseline, incident], "loop_p99_ms": {service: [baseline,
// incident]}} (epoch ms; the p90 of the latency the load saw in each
// phase, and of each process's event-loop delay: the app's own account of
// the incident, and of whether the machine starved a process) once every
// service has flushed its spans.
//
// Usage: node http_app.js ENDPOINT none|slow|pool|cpu|busy [RATE] [SECONDS_PER_PHASE]
//        (a service process: node http_app.js --service NAME PORT ENDPOINT)
'use strict';

const { tracing, monitor, hit, run } = require('./app_common');

const WORK = { storefront: 2, session: 3, catalog: 8, quote: 10, reviews: 6 }; // ms

function service(name, port, endpoint) {
  const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http');
  const control = monitor(tracing(name, endpoint, [new HttpInstrumentation()]));
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
    if (await control(req, res)) return;
    if (req.url === '/_slow') { slow = true; res.end('ok'); return; }
    if (req.url === '/_cpu') { cpu = true; res.end('ok'); return; }
    if (req.url === '/_busy') { // a burner beside the requests, not in them
      const burn = () => {
        const until = Date.now() + 6 + 12 * Math.random();
        while (Date.now() < until);
        setTimeout(burn, 4 + 8 * Math.random());
      };
      setTimeout(burn, 0);
      res.end('ok');
      return;
    }
    if (cpu) { // busy, not asleep: nothing else runs in this process meanwhile
      const until = Date.now() + 36 * Math.random();
      while (Date.now() < until);
    }
    if (req.url === '/_pool') {
      quoteAgent = new h.Agent({ keepAlive: true, maxSockets: 1 });
      res.end('ok');
      return;
    }
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

async function main() {
  const [endpoint, cause] = [process.argv[2], process.argv[3]];
  const rate = parseFloat(process.argv[4] || '40');
  const seconds = parseFloat(process.argv[5] || '6');
  if (!endpoint || !['none', 'slow', 'pool', 'cpu', 'busy'].includes(cause)) {
    console.error('usage: node http_app.js ENDPOINT none|slow|pool|cpu|busy [RATE] [SECONDS_PER_PHASE]');
    process.exit(2);
  }
  // the control requests are root spans "GET" of storefront too (the
  // instrumentation names a route-less server span after the method)
  await run({ file: __filename, endpoint, backends: ['session', 'catalog', 'quote', 'reviews'],
    front: 'storefront', portsEnv: 'HTTP_APP_PORTS', path: '/cart', rate, seconds, warmup: 2,
    trigger: async (ports, agent) => {
      if (cause === 'slow') await hit(ports.catalog, '/_slow', agent);
      if (cause === 'pool') await hit(ports.storefront, '/_pool', agent);
      if (cause === 'cpu') await hit(ports.catalog, '/_cpu', agent);
      if (cause === 'busy') await hit(ports.storefront, '/_busy', agent);
    } });
}

if (process.argv[2] === '--service')
  service(process.argv[3], parseInt(process.argv[4], 10), process.argv[5]);
else
  main().catch((e) => { console.error(String(e)); process.exit(1); });
