import type {
  BusinessUnit,
  Currency,
  Customer,
  Money,
  Order,
  OrderItem,
  OrderStatus,
  Product,
  Quote,
} from '../../chat/backends/commerce-backend.js';
import { createSeededRandom, type SeededRandom } from '../backend/seeded-random.js';

/** Everything a demo project's commerce data is made of. */
export interface DemoCommerceData {
  currency: Currency;
  products: Product[];
  customers: Customer[];
  orders: Order[];
  businessUnits: BusinessUnit[];
  quotes: Quote[];
}

/** Seeded data starts here, not at the wall clock, so every process seeds the same timestamps. */
export const demoSeedEpoch = Date.UTC(2025, 9, 1);

const hour = 60 * 60 * 1000;
const day = 24 * hour;

const catalogue = [
  ['Trail Running Shoe', 'Footwear', 12900, 'Grippy lugged outsole and a rock plate for technical trails.'],
  ['Merino Base Layer', 'Apparel', 7900, 'Long-sleeve merino wool top that stays warm when wet.'],
  ['Waterproof Shell Jacket', 'Apparel', 24900, 'Three-layer breathable shell with taped seams.'],
  ['Insulated Water Bottle', 'Accessories', 2900, 'Stainless steel, keeps drinks cold for 24 hours.'],
  ['Ultralight Daypack 22L', 'Bags', 8900, '22-litre pack weighing 480 g with a hydration sleeve.'],
  ['Trekking Poles (Pair)', 'Gear', 11900, 'Collapsible carbon poles with cork grips.'],
  ['Headlamp 400 lm', 'Gear', 4900, 'Rechargeable headlamp with red night mode.'],
  ['Hiking Socks (3-Pack)', 'Apparel', 2400, 'Cushioned wool-blend socks.'],
  ['Road Running Shoe', 'Footwear', 11900, 'Lightweight daily trainer with a responsive foam midsole.'],
  ['Packable Down Vest', 'Apparel', 14900, '650-fill down vest that packs into its own pocket.'],
  ['GPS Sport Watch', 'Electronics', 29900, 'Multisport watch with GPS, heart rate and 14-day battery.'],
  ['Camp Stove Kit', 'Gear', 6900, 'Compact gas stove with a 1-litre pot.'],
] as const;

const firstNames = [
  'Emma',
  'Liam',
  'Sofia',
  'Noah',
  'Mia',
  'Lucas',
  'Hannah',
  'Mateo',
  'Chloe',
  'Jonas',
  'Amelia',
  'Elias',
  'Nora',
  'Felix',
];
const lastNames = [
  'Schneider',
  'Martin',
  'Rossi',
  'Dubois',
  'Johnson',
  'Weber',
  'Novak',
  'Garcia',
  'Jansen',
  'Keller',
  'Moreau',
  'Fischer',
];
const companyNames = [
  'Northwind Outfitters',
  'Summit Sports GmbH',
  'Blue Ridge Retail',
  'Alpine Team Supply',
  'Harbor Fitness Clubs',
];
const laterStatuses: readonly OrderStatus[] = [
  'pending',
  'paid',
  'paid',
  'shipped',
  'shipped',
  'delivered',
  'delivered',
  'delivered',
  'cancelled',
  'refunded',
];

const customerCount = 12;
/** The last customers are b2b contacts, one per business unit. */
const businessUnitCount = 3;
const orderCount = 30;
const quoteCount = 10;

/**
 * Seeds a project's commerce data from its key alone: the same key gives the same data in every
 * process. Fixed facts: `ORD-1001` is delivered and paid (refundable), `ORD-1002` is paid
 * (cancellable), `SKU-1001` is the "Trail Running Shoe", `BU-101` is an active business unit.
 */
export function seedDemoCommerce(projectKey: string): DemoCommerceData {
  // One stream per kind of data, so adding data of one kind never shifts another.
  const random = (kind: string) => createSeededRandom(`${projectKey}#${kind}`);
  const currency = random('currency').pick(['EUR', 'USD'] as const);
  const money = (amount: number): Money => ({ amount, currency });

  const productRandom = random('products');
  const products: Product[] = catalogue.map(([name, category, basePrice, description], index) => ({
    sku: `SKU-${1001 + index}`,
    name,
    description,
    category,
    price: money(Math.round((basePrice * (0.9 + productRandom.next() * 0.2)) / 100) * 100 - 1),
    // About one product in seven is out of stock; the first never is.
    stock: index > 0 && productRandom.next() < 0.15 ? 0 : productRandom.integer(5, 120),
  }));

  const customers = seedCustomers(random('customers'));
  const businessUnits = seedBusinessUnits(random('business-units'), customers, money);

  const lines = (lineRandom: SeededRandom, quantity: () => number, discount: number): OrderItem[] =>
    lineRandom
      .shuffle(products)
      .slice(0, lineRandom.integer(1, 3))
      .map((product) => {
        const count = quantity();
        const unitPrice = Math.round(product.price.amount * (1 - discount));
        return {
          sku: product.sku,
          name: product.name,
          quantity: count,
          unitPrice: money(unitPrice),
          lineTotal: money(unitPrice * count),
        };
      });

  const orderRandom = random('orders');
  const orders: Order[] = [];
  let createdAt = demoSeedEpoch;
  for (let index = 0; index < orderCount; index++) {
    createdAt += orderRandom.integer(6, 40) * hour;
    const status: OrderStatus = index === 0 ? 'delivered' : index === 1 ? 'paid' : orderRandom.pick(laterStatuses);
    // One order in five comes from a b2b contact; the two fixed orders always from consumers.
    const b2b = index > 1 && orderRandom.next() < 0.2;
    const customer = b2b
      ? orderRandom.pick(customers.slice(-businessUnitCount))
      : orderRandom.pick(customers.slice(0, -businessUnitCount));
    const items = lines(orderRandom, () => (orderRandom.next() < 0.75 ? 1 : 2), 0);
    const subtotal = items.reduce((sum, item) => sum + item.lineTotal.amount, 0);
    const shipping = subtotal >= 10_000 ? 0 : 495;
    const total = subtotal + shipping;
    const paid = status !== 'pending' && status !== 'cancelled';
    const updatedAt = createdAt + orderRandom.integer(1, 72) * hour;
    orders.push({
      orderId: `ORD-${1001 + index}`,
      status,
      customer: { customerId: customer.customerId, name: customer.name, email: customer.email },
      businessUnitId: customer.businessUnitId,
      items,
      totals: {
        subtotal: money(subtotal),
        shipping: money(shipping),
        total: money(total),
        refunded: money(status === 'refunded' ? total : 0),
      },
      payment: {
        method: b2b ? 'invoice' : orderRandom.pick(['card', 'card', 'paypal'] as const),
        status: status === 'refunded' ? 'refunded' : status === 'cancelled' ? 'voided' : paid ? 'paid' : 'pending',
        paidAt: paid ? createdAt + 5 * 60 * 1000 : null,
      },
      refunds:
        status === 'refunded'
          ? [
              {
                refundId: `RF-${1001 + index}-1`,
                amount: money(total),
                reason: 'Returned within 30 days',
                requestedBy: 'support@example.com',
                createdAt: updatedAt,
              },
            ]
          : [],
      cancellation:
        status === 'cancelled'
          ? { reason: 'Customer changed their mind', requestedBy: customer.email, cancelledAt: updatedAt }
          : null,
      createdAt,
      updatedAt,
    });
  }

  const quoteRandom = random('quotes');
  const quotes: Quote[] = Array.from({ length: quoteCount }, (_, index) => {
    const items = lines(quoteRandom, () => quoteRandom.integer(2, 12) * 5, 0.15);
    const quoteCreatedAt = demoSeedEpoch + index * 3 * day;
    return {
      quoteId: `Q-${5001 + index}`,
      businessUnitId: quoteRandom.pick(businessUnits).businessUnitId,
      status: quoteRandom.pick(['draft', 'sent', 'sent', 'accepted', 'declined', 'expired'] as const),
      items,
      total: money(items.reduce((sum, item) => sum + item.lineTotal.amount, 0)),
      createdAt: quoteCreatedAt,
      validUntil: quoteCreatedAt + 30 * day,
    };
  });

  return { currency, products, customers, orders, businessUnits, quotes };
}

function seedCustomers(random: SeededRandom): Customer[] {
  // Distinct first names make distinct emails.
  const first = random.shuffle(firstNames);
  const last = random.shuffle(lastNames);
  return Array.from({ length: customerCount }, (_, index) => {
    const name = `${first[index]} ${last[index]}`;
    const businessIndex = index - (customerCount - businessUnitCount);
    return {
      customerId: `CUS-${1001 + index}`,
      name,
      email: `${name.toLowerCase().replace(' ', '.')}@example.com`,
      tier: random.next() < 0.2 ? 'vip' : 'standard',
      businessUnitId: businessIndex >= 0 ? `BU-${101 + businessIndex}` : null,
      createdAt: demoSeedEpoch - random.integer(30, 900) * day,
    };
  });
}

function seedBusinessUnits(
  random: SeededRandom,
  customers: Customer[],
  money: (amount: number) => Money,
): BusinessUnit[] {
  const names = random.shuffle(companyNames);
  return Array.from({ length: businessUnitCount }, (_, index) => {
    const businessUnitId = `BU-${101 + index}`;
    return {
      businessUnitId,
      name: names[index]!,
      status: index === 0 || random.next() < 0.8 ? 'active' : 'on_hold',
      paymentTerms: random.pick(['prepaid', 'net_30', 'net_30', 'net_60'] as const),
      creditLimit: money(random.integer(5, 50) * 100_000),
      contacts: customers
        .filter((customer) => customer.businessUnitId === businessUnitId)
        .map(({ customerId, name, email }) => ({ customerId, name, email })),
    };
  });
}
