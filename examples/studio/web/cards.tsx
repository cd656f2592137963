// Render-only cards: the output of showOrderCard, showProductCard and showCustomerCard.

interface Money {
  amount: number;
  display: string;
}
export interface OrderCardData {
  card: 'order';
  orderId: string;
  status: string;
  createdAt: string;
  customer: { name: string; email: string };
  items: Array<{ sku: string; name: string; quantity: number; lineTotal: Money }>;
  total: Money;
  refunded: Money;
  payment: { method: string; status: string };
}
export interface ProductCardData {
  card: 'product';
  sku: string;
  name: string;
  category: string;
  description: string;
  price: Money;
  stock: number;
  inStock: boolean;
}
export interface CustomerCardData {
  card: 'customer';
  customerId: string;
  name: string;
  email: string;
  tier: string;
  customerSince: string;
  recentOrders: Array<{ orderId: string; status: string; total: Money }>;
}

export function isCard(output: unknown): output is OrderCardData | ProductCardData | CustomerCardData {
  const card = (output as { card?: unknown } | null)?.card;
  return card === 'order' || card === 'product' || card === 'customer';
}

const day = (iso: string) =>
  new Date(iso).toLocaleDateString('en-GB', { day: 'numeric', month: 'short', year: 'numeric' });

export function OrderCard({ card }: { card: OrderCardData }) {
  return (
    <div className="card" data-testid="order-card">
      <div className="card-head">
        <span className="card-title mono">{card.orderId}</span>
        <span className={`status status-${card.status}`}>{card.status}</span>
      </div>
      <div className="muted">
        {card.customer.name} · {card.customer.email} · {day(card.createdAt)}
      </div>
      <table>
        <tbody>
          {card.items.map((item) => (
            <tr key={item.sku}>
              <td>{item.quantity} ×</td>
              <td>{item.name}</td>
              <td className="num">{item.lineTotal.display}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <div className="card-foot">
        <span>
          Payment: {card.payment.method}, {card.payment.status}
        </span>
        <span>
          Total <strong>{card.total.display}</strong>
          {card.refunded.amount > 0 ? ` · refunded ${card.refunded.display}` : ''}
        </span>
      </div>
    </div>
  );
}

export function ProductCard({ card }: { card: ProductCardData }) {
  return (
    <div className="card" data-testid="product-card">
      <div className="card-head">
        <span className="card-title">{card.name}</span>
        <strong>{card.price.display}</strong>
      </div>
      <div className="muted">
        {card.sku} · {card.category}
      </div>
      <p>{card.description}</p>
      <div className="card-foot">
        <span className={card.inStock ? 'ok' : 'warn'}>{card.inStock ? `${card.stock} in stock` : 'Out of stock'}</span>
      </div>
    </div>
  );
}

export function CustomerCard({ card }: { card: CustomerCardData }) {
  return (
    <div className="card" data-testid="customer-card">
      <div className="card-head">
        <span className="card-title">{card.name}</span>
        <span className="tag">{card.tier}</span>
      </div>
      <div className="muted">
        {card.customerId} · {card.email} · since {day(card.customerSince)}
      </div>
      <ul className="orders">
        {card.recentOrders.map((order) => (
          <li key={order.orderId}>
            <span className="mono">{order.orderId}</span>
            <span className="muted">{order.status}</span>
            <span>{order.total.display}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}
