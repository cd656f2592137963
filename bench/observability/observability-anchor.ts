// The anchor of the logging + metrics benchmark: the common stack as its docs show it — Express 5,
// pino-http (its default serialisers) writing to stdout, and a prom-client counter and histogram per
// route and status — in front of a route that answers a session-sized JSON body from memory. "off"
// (LOG_LEVEL=silent, METRICS=0) is the same app without them. What the per-request line and series cost
// on a request this cheap, measured beside the reference servers in one run.
import express from 'express';
import { destination, pino } from 'pino';
import { pinoHttp } from 'pino-http';
import { Counter, Histogram, Registry } from 'prom-client';
import { sessionShapedObject } from '../shared/session-shape.ts';

const on = process.env.LOG_LEVEL !== 'silent';
const session = JSON.stringify(sessionShapedObject('xbPoQnAimJILxhfZGrnFhg'));

const app = express();
app.disable('x-powered-by');
const registry = new Registry();
if (on) {
  app.use(pinoHttp({ logger: pino(destination({ sync: false })) }));
  const labelNames = ['method', 'route', 'status'];
  const requests = new Counter({ name: 'http_requests_total', help: 'requests', labelNames, registers: [registry] });
  const seconds = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'duration',
    labelNames,
    registers: [registry],
  });
  app.use((req, res, next) => {
    const started = performance.now();
    res.once('close', () => {
      const labels = { method: req.method, route: req.route?.path ?? 'other', status: String(res.statusCode) };
      requests.inc(labels);
      seconds.observe(labels, (performance.now() - started) / 1000);
    });
    next();
  });
  app.get('/metrics', async (_req, res) => void res.type(registry.contentType).send(await registry.metrics()));
}
app.get('/readyz', (_req, res) => void res.json({ status: 'ready' }));
app.get('/sessions/current', (_req, res) => void res.set('cache-control', 'no-store').type('json').send(session));

const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
