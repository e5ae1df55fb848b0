// incident_app.js - a storefront endpoint the diagnosis has never seen,
// exported by the real OpenTelemetry JS SDK (OTLP/HTTP, JSON) to argv[2].
//
// GET /cart in service "storefront" (six hosts) calls "session" first, then
// "catalog", "quote" and "reviews" in parallel, then renders locally. Each
// callee is its own tracer provider and resource, as separate processes
// would be; client spans carry server.address and peer.service. Requests
// are spread over two one-minute phases an hour ago: a baseline and an
// incident, with span times set explicitly so the run takes seconds, not
// minutes. The incident's cause is argv[3]:
//   none   the incident repeats the baseline (fresh random draws)
//   pool   callers of quote wait for a client-side connection before the
//          quote server sees the call (the server's own time unchanged)
//   slow   the catalog server's own time triples
//   serial reviews is called on its own before the parallel calls
//   mix    the business tier (three quote calls per request, heavier
//          catalog work) grows from 10 % to 40 % of the requests
//   retry  a third of the catalog calls fail fast and are retried
//   host   one host (web-3) stalls before every call it makes
//   timeout reviews slows down and a fifth of its calls end at the
//          caller's 150 ms timeout with an error, the response waiting
//          for them
//   external quote calls a third-party tax API that sends no spans of
//          its own (a client span with server.address only); it slows down
//   db     catalog's PostgreSQL queries (client spans with db.system.name,
//          no server span, as the SDK's database instrumentations make
//          them) take four times as long
// It prints the two windows as JSON ({"baseline": "A..B", "incident": "A..B",
// "spans": N}) once every span is exported.
//
// NAMES (argv[6]) "http" names the calls as the SDK's HTTP instrumentation
// does: every client span "POST" with http.request.method, server.address,
// server.port and url.full (no peer.service), every server span
// "POST /<callee>"; the default gives each call a name of its own.
//
// Usage: node incident_app.js ENDPOINT CAUSE [REQUESTS_PER_PHASE] [SEED] [NAMES]
'use strict';

const api = require('@opentelemetry/api');
const { BasicTracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http');
const { resourceFromAttributes } = require('@opentelemetry/resources');

const endpoint = process.argv[2];
const cause = process.argv[3];
const perPhase = parseInt(process.argv[4] || '800', 10);
let seed = parseInt(process.argv[5] || '7', 10) >>> 0;
const httpNames = process.argv[6] === 'http';
const causes = ['none', 'pool', 'slow', 'serial', 'mix', 'retry', 'host', 'db', 'timeout', 'external'];
if (!endpoint || !causes.includes(cause)) {
  console.error(`usage: node incident_app.js ENDPOINT ${causes.join('|')} [REQUESTS_PER_PHASE] [SEED] [http]`);
  process.exit(2);
}

// a small deterministic generator (mulberry32)
function rand() {
  seed = (seed + 0x6D2B79F5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const expo = (mean) => -mean * Math.log(1 - rand());
// a lognormal-ish service time: median m, a tail of a few times m
const svc = (m) => m * Math.exp(0.45 * Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand()));

let exported = 0, failed = 0;
class Counting {
  constructor(inner) { this.inner = inner; }
  export(spans, done) {
    this.inner.export(spans, (r) => {
      if (r.code === 0) exported += spans.length; else failed += spans.length;
      done(r);
    });
  }
  shutdown() { return this.inner.shutdown(); }
  forceFlush() { return this.inner.forceFlush ? this.inner.forceFlush() : Promise.resolve(); }
}
const providers = [];
function tracer(service, host) {
  const p = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': service, 'host.name': host,
      'deployment.environment.name': 'lab' }),
    spanProcessors: [new BatchSpanProcessor(new Counting(new OTLPTraceExporter({ url: `${endpoint}/v1/traces` })),
      { maxExportBatchSize: 256, maxQueueSize: 65536, scheduledDelayMillis: 20 })],
  });
  providers.push(p);
  return p.getTracer(service);
}
const hosts = ['web-1', 'web-2', 'web-3', 'web-4', 'web-5', 'web-6'];
const front = hosts.map((h) => tracer('storefront', h));
const callee = {
  session: tracer('session', 'session-1'),
  catalog: tracer('catalog', 'catalog-1'),
  quote: tracer('quote', 'quote-1'),
  reviews: tracer('reviews', 'reviews-1'),
};
function tier(incident) {
  const business = incident && cause === 'mix' ? 0.4 : 0.1;
  const u = rand();
  if (u < business) return 'business';
  return u < business + (1 - business) / 3 ? 'pro' : 'free';
}

const ms = (t) => [Math.floor(t / 1000), Math.round((t % 1000) * 1e6)]; // HrTime from ms

// One call: a client span in the caller, the server span in the callee.
// wait: time between the client span's start and the server's start
// (connection acquisition, network); back: network on the way back.
function call(tr, parentCtx, name, t, wait, service, back, fail, incident) {
  const attributes = httpNames
    ? { 'http.request.method': 'POST', 'server.address': `${name}.internal`, 'server.port': 8080,
        'url.full': `http://${name}.internal:8080/${name}` }
    : { 'server.address': `${name}.internal`, 'peer.service': name };
  const client = tr.startSpan(httpNames ? 'POST' : `${name} call`,
    { kind: api.SpanKind.CLIENT, startTime: ms(t), attributes }, parentCtx);
  const cctx = api.trace.setSpan(parentCtx, client);
  const s0 = t + wait;
  const server = callee[name].startSpan(httpNames ? `POST /${name}` : `${name}.handle`,
    { kind: api.SpanKind.SERVER, startTime: ms(s0) }, cctx);
  if (name === 'quote') {
    // quote asks a third-party tax API: only the client span exists
    const sctx = api.trace.setSpan(cctx, server);
    const q = svc(4) * (incident && cause === 'external' ? 6 : 1);
    service += q;
    const x0 = s0 + 0.5;
    const ext = callee[name].startSpan('POST', { kind: api.SpanKind.CLIENT, startTime: ms(x0),
      attributes: { 'http.request.method': 'POST', 'url.full': 'https://tax.example.net/v2/rates',
        'server.address': 'tax.example.net' } }, sctx);
    ext.end(ms(x0 + q));
  }
  if (name === 'catalog') {
    // catalog reads PostgreSQL inside its own time: a database client span
    const sctx = api.trace.setSpan(cctx, server);
    const q = svc(3) * (incident && cause === 'db' ? 4 : 1);
    service += q;
    const d0 = s0 + 0.5;
    const db = callee[name].startSpan('SELECT storefront.items', { kind: api.SpanKind.CLIENT, startTime: ms(d0),
      attributes: { 'db.system.name': 'postgresql', 'db.namespace': 'storefront',
        'db.operation.name': 'SELECT', 'server.address': 'pg.internal' } }, sctx);
    db.end(ms(d0 + q));
  }
  if (fail) {
    server.setStatus({ code: api.SpanStatusCode.ERROR, message: 'unavailable' });
    client.setStatus({ code: api.SpanStatusCode.ERROR, message: 'unavailable' });
  }
  server.end(ms(s0 + service));
  const end = s0 + service + back;
  client.end(ms(end));
  return end;
}

function request(t0, incident) {
  const h = Math.floor(rand() * hosts.length);
  const tr = front[h];
  const cls = tier(incident);
  // a stalled host: every call it makes starts late
  const stall = () => (incident && cause === 'host' && hosts[h] === 'web-3' ? expo(40) : 0);
  const root = tr.startSpan('GET /cart', { kind: api.SpanKind.SERVER, startTime: ms(t0),
    attributes: { 'http.request.method': 'GET', 'http.route': '/cart', 'workload.class': cls } });
  const ctx = api.trace.setSpan(api.context.active(), root);
  let t = t0 + 0.3;
  t = call(tr, ctx, 'session', t, 0.4 + expo(0.3) + stall(), svc(6), 0.3);
  if (incident && cause === 'serial')
    t = call(tr, ctx, 'reviews', t + 0.2, 0.4 + expo(0.3), svc(8), 0.3);
  const start = t + 0.2;
  const ends = [];
  const catalogSvc = svc(cls === 'business' ? 24 : 10) * (incident && cause === 'slow' ? 3 : 1);
  let ct = start;
  if (incident && cause === 'retry' && rand() < 0.33) {
    // a fast failure, then the retry
    ct = call(tr, ctx, 'catalog', ct, 0.4 + expo(0.3), 2 + expo(1), 0.3, true) + 25 + expo(10);
  }
  ends.push(call(tr, ctx, 'catalog', ct, 0.4 + expo(0.3) + stall(), catalogSvc, 0.3, false, incident));
  const quotes = cls === 'business' ? 3 : 1;
  for (let q = 0; q < quotes; q++) {
    let quoteWait = 0.4 + expo(0.3) + stall();
    if (incident && cause === 'pool' && rand() < 0.35) quoteWait += expo(45);
    ends.push(call(tr, ctx, 'quote', start + 0.1 + 0.05 * q, quoteWait, svc(12), 0.3, false, incident));
  }
  if (incident && cause === 'timeout' && rand() < 0.2)
    ends.push(call(tr, ctx, 'reviews', start + 0.2, 0.4, 150, 0.3, true));
  else if (!(incident && cause === 'serial'))
    ends.push(call(tr, ctx, 'reviews', start + 0.2, 0.4 + expo(0.3) + stall(),
                   svc(8) * (incident && cause === 'timeout' ? 2 : 1), 0.3));
  t = Math.max(...ends) + 0.2;
  const render = tr.startSpan('render', { kind: api.SpanKind.INTERNAL, startTime: ms(t) }, ctx);
  t += svc(4);
  render.end(ms(t));
  root.end(ms(t + 0.5));
}

const hour = 3600 * 1000;
const base0 = Math.floor((Date.now() - hour) / 60000) * 60000;
const inc0 = base0 + 5 * 60000;
const iso = (t) => new Date(t).toISOString();

async function main() {
  // in chunks, flushing between them: the OTLP exporter refuses more than
  // a few dozen exports in flight
  for (let i = 0; i < perPhase; i++) {
    request(base0 + (i * 60000) / perPhase + rand() * 20, false);
    request(inc0 + (i * 60000) / perPhase + rand() * 20, true);
    if (i % 50 === 49)
      await Promise.all(providers.map((p) => p.forceFlush()));
  }
  await Promise.all(providers.map((p) => p.forceFlush()));
  await Promise.all(providers.map((p) => p.shutdown()));
  console.log(JSON.stringify({
    baseline: `${iso(base0)}..${iso(base0 + 61000)}`,
    incident: `${iso(inc0)}..${iso(inc0 + 61000)}`,
    spans: exported, failed,
  }));
  process.exit(failed ? 1 : 0);
}
main().catch((e) => { console.error('incident_app:', e); process.exit(1); });
