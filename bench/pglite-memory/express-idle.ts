// Express 5 alone, idle: the anchor of the lean-process target (pglite-memory.ts starts it).
import express from 'express';

const app = express();
app.disable('x-powered-by');
app.get('/healthz', (_req, res) => void res.json({ status: 'ok' }));
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening on http://127.0.0.1:${typeof address === 'object' && address ? address.port : ''}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
