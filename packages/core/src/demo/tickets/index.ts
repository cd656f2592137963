export {
  createDemoTicketBackend,
  type DemoTicketBackend,
  type DemoTicketBackendOptions,
} from './create-demo-ticket-backend.js';
