import type { CommerceBackend, Order } from '../../chat/backends/commerce-backend.js';
import type { DemoProjectStore } from '../backend/demo-project-store.js';
import { clampLimit, matchesTextQuery } from '../backend/matches-text-query.js';
import type { DemoCommerceData } from './seed-demo-commerce.js';

/** The read methods of a {@link CommerceBackend}. */
export type CommerceReads = Required<
  Pick<
    CommerceBackend,
    'searchProducts' | 'getOrder' | 'searchOrders' | 'getCustomer' | 'getBusinessUnit' | 'listQuotes'
  >
>;

/** The order `orderId` of a project's demo data, as stored (not a copy). */
export function findDemoOrder(data: DemoCommerceData, orderId: string): Order | undefined {
  return data.orders.find((order) => order.orderId === orderId);
}

/** The demo commerce backend's reads over its per-project data; callers get copies, so nothing they do changes stored state. */
export function createDemoCommerceReads(projects: DemoProjectStore<DemoCommerceData>): CommerceReads {
  const copy = structuredClone;
  return {
    async searchProducts(projectKey, { query, limit }) {
      const { products } = projects.get(projectKey);
      const found = products.filter((product) =>
        matchesTextQuery(query, [product.sku, product.name, product.category, product.description]),
      );
      return copy(found.slice(0, clampLimit(limit)));
    },
    async getOrder(projectKey, orderId) {
      const order = findDemoOrder(projects.get(projectKey), orderId);
      return order ? copy(order) : null;
    },
    async searchOrders(projectKey, { customerEmail, status, limit }) {
      const email = customerEmail?.trim().toLowerCase();
      const found = projects
        .get(projectKey)
        .orders.filter(
          (order) =>
            (email === undefined || order.customer.email === email) &&
            (status === undefined || order.status === status),
        )
        .sort((a, b) => b.createdAt - a.createdAt);
      return copy(found.slice(0, clampLimit(limit)));
    },
    async getCustomer(projectKey, { customerId, email }) {
      if (customerId === undefined && email === undefined) return null;
      const wanted = email?.trim().toLowerCase();
      const customer = projects
        .get(projectKey)
        .customers.find(
          (candidate) =>
            (customerId === undefined || candidate.customerId === customerId) &&
            (wanted === undefined || candidate.email === wanted),
        );
      return customer ? copy(customer) : null;
    },
    async getBusinessUnit(projectKey, businessUnitId) {
      const unit = projects
        .get(projectKey)
        .businessUnits.find((candidate) => candidate.businessUnitId === businessUnitId);
      return unit ? copy(unit) : null;
    },
    async listQuotes(projectKey, { businessUnitId, status }) {
      const found = projects
        .get(projectKey)
        .quotes.filter(
          (quote) =>
            (businessUnitId === undefined || quote.businessUnitId === businessUnitId) &&
            (status === undefined || quote.status === status),
        )
        .sort((a, b) => b.createdAt - a.createdAt);
      return copy(found);
    },
  };
}
