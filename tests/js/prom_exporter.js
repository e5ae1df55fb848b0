// prom_exporter.js - a small Prometheus exporter (prom-client) on
// 127.0.0.1 for the pull test: pool gauges named like the OpenTelemetry
// database-client conventions after Prometheus name translation, a pool
// wait histogram, request-duration histograms per workload class and the
// default process metrics (process_cpu_seconds_total, ...).
//
// Usage: node prom_exporter.js PORT_FILE
// Writes the port it listens on to PORT_FILE, then serves /metrics until
// killed. Values keep moving (a tick every 200 ms) so rate() has data.
'use strict';

const fs = require('fs');
const http = require('http');
const client = require('prom-client');

const portFile = process.argv[2];
const registry = new client.Registry();
client.collectDefaultMetrics({ register: registry });

const poolLabel = 'db_client_connection_pool_name';
const used = new client.Gauge({
  name: 'db_client_connection_count', help: 'connections by state',
  labelNames: [poolLabel, 'db_client_connection_state'], registers: [registry],
});
const max = new client.Gauge({
  name: 'db_client_connection_max', help: 'pool size', labelNames: [poolLabel], registers: [registry],
});
const pending = new client.Gauge({
  name: 'db_client_connection_pending_requests', help: 'waiting for a connection',
  labelNames: [poolLabel], registers: [registry],
});
const wait = new client.Histogram({
  name: 'db_client_connection_wait_time', help: 'time to get a connection (s)',
  labelNames: [poolLabel], buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5], registers: [registry],
});
const duration = new client.Histogram({
  name: 'http_server_request_duration_seconds', help: 'request duration',
  labelNames: ['workload_class'], buckets: [0.05, 0.1, 0.3, 1], registers: [registry],
});

max.set({ [poolLabel]: 'pricing' }, 256);
used.set({ [poolLabel]: 'pricing', db_client_connection_state: 'used' }, 203);
used.set({ [poolLabel]: 'pricing', db_client_connection_state: 'idle' }, 53);
pending.set({ [poolLabel]: 'pricing' }, 7);

let tick = 0;
setInterval(() => {
  tick++;
  for (let i = 0; i < 20; i++) {
    // Mostly fast waits, one slow one in twenty: the p99 lands in (0.05, 0.1].
    wait.observe({ [poolLabel]: 'pricing' }, i === 0 ? 0.07 : 0.002);
    const cls = i < 14 ? 'standard' : i < 18 ? 'premium' : 'enterprise';
    duration.observe({ workload_class: cls }, 0.08);
  }
  pending.set({ [poolLabel]: 'pricing' }, 7 + (tick % 3));
}, 200);

const server = http.createServer(async (req, res) => {
  if (req.url !== '/metrics') {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'Content-Type': registry.contentType });
  res.end(await registry.metrics());
});
server.listen(0, '127.0.0.1', () => {
  fs.writeFileSync(portFile, String(server.address().port));
});
