export {
  createDemoCommerceBackend,
  type DemoCommerceBackend,
  type DemoCommerceBackendOptions,
} from './create-demo-commerce-backend.js';
