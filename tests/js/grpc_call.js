// grpc_call.js - one unary gRPC call with @grpc/grpc-js (the gRPC library
// the OpenTelemetry JS SDK's OTLP/gRPC exporters use), sending the bytes of
// a file as the request message unchanged, so a test can send well-formed,
// cut or corrupt OTLP messages to `tailtriage serve`.
//
// Usage: node grpc_call.js HOST:PORT METHOD FILE [gzip] [TOKEN]
//   METHOD: traces, metrics or a full method path (/pkg.Service/Method)
// Prints {"code": N, "status": "NAME", "details": "...", "response": "hex"}.
'use strict';

const fs = require('fs');
const grpc = require('@grpc/grpc-js');

const [addr, which, file, gz, token] = process.argv.slice(2);
if (!addr || !which || !file) {
  console.error('usage: node grpc_call.js HOST:PORT METHOD FILE [gzip] [TOKEN]');
  process.exit(2);
}
const methods = {
  traces: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
  metrics: '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export',
};
const method = methods[which] || which;
const options = gz === 'gzip' ? { 'grpc.default_compression_algorithm': 2 } : {};
const client = new grpc.Client(addr, grpc.credentials.createInsecure(), options);
const md = new grpc.Metadata();
if (token) md.set('authorization', `Bearer ${token}`);
const names = Object.fromEntries(Object.entries(grpc.status).map(([k, v]) => [v, k]));
const body = fs.readFileSync(file);
client.makeUnaryRequest(method, (b) => b, (b) => b, body, md, { deadline: Date.now() + 10000 },
  (err, resp) => {
    const code = err ? err.code : 0;
    console.log(JSON.stringify({ code, status: names[code], details: err ? err.details : '',
                                 response: resp ? Buffer.from(resp).toString('hex') : '' }));
    client.close();
  });
