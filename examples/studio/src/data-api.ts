import { presentMoney } from '@deskpilot/core/chat';
import { createDemoCommerceBackend } from '@deskpilot/core/demo';
import express, { type Request } from 'express';
import type { Logger } from 'pino';
import { requestLogging } from '../../shared/logging.ts';

/**
 * The example's downstream data API: it stands for a team's existing service behind the studio. It
 * trusts the identity headers because only the studio's proxy can reach it (it listens on loopback),
 * and it answers with data of the stamped project only.
 */
export function createDataApi(options: { prefix: string; logger: Logger }) {
  const commerce = createDemoCommerceBackend();
  const header = (req: Request, name: string) => req.get(`x-${options.prefix}-${name}`);
  const app = express();
  app.disable('x-powered-by');
  // The studio's request id arrives with the proxied request: its line here joins the studio's.
  app.use(requestLogging(options.logger));

  app.use((req, res, next) => {
    if (!header(req, 'user-email') || !header(req, 'project-key'))
      return void res.status(401).json({ error: 'identity headers missing' });
    next();
  });

  // Who the downstream sees, and every identity header it received: the proof that the proxy stamps
  // exactly one of each and passes none of the browser's.
  app.get('/me', (req, res) => {
    const received = req.rawHeaders
      .filter((_, index) => index % 2 === 0)
      .map((name) => name.toLowerCase())
      .filter((name) => name.replaceAll('_', '-').startsWith(`x-${options.prefix}-`));
    res.json({
      userEmail: header(req, 'user-email'),
      projectKey: header(req, 'project-key'),
      clientId: header(req, 'client-id'),
      role: header(req, 'role'),
      identityHeadersReceived: received.sort(),
    });
  });

  // The project's latest orders (a seeded snapshot: refunds made in the chat change the chat service's
  // demo shop, not this one).
  app.get('/orders', async (req, res) => {
    const orders = await commerce.searchOrders(header(req, 'project-key')!, { limit: 8 });
    res.json({
      orders: orders.map((order) => ({
        orderId: order.orderId,
        customerName: order.customer.name,
        total: presentMoney(order.totals.total).display,
      })),
    });
  });

  app.use((_req, res) => void res.status(404).json({ error: 'not found' }));
  return app;
}
