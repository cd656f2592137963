import { useEffect, useState } from 'react';
import { dataApi, explain, type Session } from './studio-api.ts';

interface Me {
  userEmail: string;
  projectKey: string;
  clientId: string;
  role: string;
}
interface Orders {
  orders: Array<{ orderId: string; customerName: string; total: string }>;
}

/** What the downstream data API sees for this session (through the identity proxy), and its orders. */
export function Sidebar({ session }: { session: Session }) {
  const [me, setMe] = useState<Me | null>(null);
  const [orders, setOrders] = useState<Orders['orders']>([]);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let current = true;
    Promise.all([dataApi<Me>('/me'), dataApi<Orders>('/orders')]).then(
      ([identity, list]) => current && (setMe(identity), setOrders(list.orders), setError(null)),
      (failure: unknown) => current && setError(explain(failure)),
    );
    return () => void (current = false);
  }, [session.id]);

  return (
    <aside className="sidebar" aria-label="Project overview">
      <section>
        <h2>Data API sees</h2>
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        {me && (
          <dl className="identity" data-testid="downstream-identity">
            <dt>User</dt>
            <dd>{me.userEmail}</dd>
            <dt>Project</dt>
            <dd>{me.projectKey}</dd>
            <dt>Client</dt>
            <dd>{me.clientId}</dd>
            <dt>Role</dt>
            <dd>{me.role}</dd>
          </dl>
        )}
      </section>
      <section>
        <h2>Recent orders</h2>
        <ul className="orders">
          {orders.map((order) => (
            <li key={order.orderId}>
              <span className="mono">{order.orderId}</span>
              <span className="muted">{order.customerName}</span>
              <span>{order.total}</span>
            </li>
          ))}
        </ul>
      </section>
    </aside>
  );
}
