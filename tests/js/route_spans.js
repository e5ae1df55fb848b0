// route_spans.js - spans that carry their route in every way the route rule
// reads (common/route.h), made by the real OpenTelemetry JS SDK and
// delivered both ways a user brings them in:
//
//   - exported live to each ENDPOINT of argv[2] (a comma-separated list of
//     PROTOCOL=URL, PROTOCOL json, proto or grpc, as in otel_app.js), the
//     same SDK objects through every encoding;
//   - written as OTLP files into argv[3] with the SDK's own serializers
//     (traces.json, traces.pb), as otlp_files.js does.
//
// The spans: server spans with http.route; with only url.path (ids in it);
// with the older http.method and http.target or http.url; with
// url.template; a gRPC server
// span; a load generator's CLIENT root with url.full above a server span;
// an internal root; and a client call (which has no route).
//
// Usage: node route_spans.js ENDPOINTS OUT_DIR
'use strict';

const fs = require('fs');
const path = require('path');
const api = require('@opentelemetry/api');
const { BasicTracerProvider, SimpleSpanProcessor, InMemorySpanExporter } = require('@opentelemetry/sdk-trace-base');
const { resourceFromAttributes } = require('@opentelemetry/resources');
const t = require('@opentelemetry/otlp-transformer');

const [endpoints, out] = process.argv.slice(2);
if (!endpoints || !out) {
  console.error('usage: node route_spans.js ENDPOINTS OUT_DIR');
  process.exit(2);
}

function exporter(item) {
  const m = /^(json|proto|grpc)=(.*)$/.exec(item);
  const [protocol, url] = m ? [m[1], m[2]] : ['json', item];
  if (protocol === 'json') {
    const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter({ url: `${url}/v1/traces` });
  }
  if (protocol === 'grpc') {
    const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-grpc');
    return new OTLPTraceExporter({ url });
  }
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter({ url: `${url}/v1/traces` });
}

function send(exp, spans) {
  return new Promise((resolve, reject) => {
    exp.export(spans, (r) => (r.code === 0 ? resolve() : reject(r.error || new Error('export failed'))));
  });
}

async function main() {
  const mem = new InMemorySpanExporter();
  const providers = {};
  const tracer = (service) => {
    if (!providers[service]) {
      providers[service] = new BasicTracerProvider({
        resource: resourceFromAttributes({ 'service.name': service, 'host.name': `${service}-1` }),
        spanProcessors: [new SimpleSpanProcessor(mem)],
      });
    }
    return providers[service].getTracer('routes');
  };
  const S = api.SpanKind;
  const base = 1764547200000;
  let n = 0;
  // one span; parent is a span or undefined (a root)
  const span = (service, name, kind, attributes, parent) => {
    const ctx = parent ? api.trace.setSpan(api.context.active(), parent) : api.ROOT_CONTEXT;
    const s = tracer(service).startSpan(name, { kind, startTime: base + 10 * n, attributes }, ctx);
    n++;
    return s;
  };
  const done = [];
  const end = (s) => done.push(s);

  end(span('shop', 'GET', S.SERVER, { 'http.request.method': 'GET', 'url.path': '/api/items/48213' }));
  end(span('shop', 'GET /cart/:id', S.SERVER, { 'http.request.method': 'GET', 'http.route': '/cart/:id',
                                               'url.path': '/cart/17' }));
  end(span('shop', 'GET', S.SERVER, { 'http.method': 'GET', 'http.target': '/api/cart/3f2a9c1e?x=1' }));
  end(span('shop', 'PUT', S.SERVER, { 'http.method': 'PUT', 'http.url': 'http://shop:8080/a/99' }));
  // the path's template as the instrumentation gives it (url.template)
  end(span('shop', 'GET', S.SERVER, { 'http.request.method': 'GET', 'url.template': '/api/users/{userId}',
                                      'url.path': '/api/users/77' }));
  end(span('cart', 'oteldemo.CartService/GetCart', S.SERVER, {
    'rpc.system': 'grpc', 'rpc.service': 'oteldemo.CartService', 'rpc.method': 'GetCart' }));
  // a load generator's client root above the frontend's server span,
  // which calls a dependency
  const lg = span('loadgenerator', 'GET', S.CLIENT, {
    'http.request.method': 'GET', 'url.full': 'http://frontend:8080/api/products/OLJCESPC7Z?currency=USD' });
  const fe = span('frontend', 'GET', S.SERVER, { 'http.request.method': 'GET',
                                                'url.path': '/api/products/OLJCESPC7Z' }, lg);
  const call = span('frontend', 'GET', S.CLIENT, { 'http.request.method': 'GET',
                                                  'url.full': 'http://catalog/p/1' }, fe);
  end(call);
  end(fe);
  end(lg);
  end(span('batch', 'nightly rollup', S.INTERNAL, { 'job.id': 7 }));
  end(span('shop', 'POST', S.SERVER, { 'http.request.method': 'POST',
                                      'url.path': '/api/orders/2024-05-01/dGhpcyBpcyBh3B0ZXN0' }));
  done.forEach((s, i) => s.end(base + 10 * i + 5));
  const spans = mem.getFinishedSpans();

  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, 'traces.json'), t.JsonTraceSerializer.serializeRequest(spans));
  fs.writeFileSync(path.join(out, 'traces.pb'), t.ProtobufTraceSerializer.serializeRequest(spans));
  for (const item of endpoints.split(',')) {
    const exp = exporter(item);
    await send(exp, spans);
    await exp.shutdown();
  }
  console.log(JSON.stringify({ spans: spans.length }));
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : String(e));
  process.exit(1);
});
