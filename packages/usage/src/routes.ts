// @deskpilot/usage/routes: the Usage API as declared — light (`zod/mini`, no store, no catalogue): what
// a typed client derives its calls from (`client.routes(usageRoutes)`) and an OpenAPI document lists.
export {
  approvalUsageRowSchema,
  budgetStatusSchema,
  pricingSchema,
  projectBudgetSchema,
  toolUsageRowSchema,
  usageGroupings,
  usageReportBodySchema,
  usageReportSchema,
  usageRoutes,
  usageRowSchema,
} from './usage-api.js';
