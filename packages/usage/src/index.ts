export {
  catalogue,
  createPriceCatalogue,
  providerFamily,
  type ModelPrice,
  type PriceCatalogueOptions,
} from './price-catalogue.js';
export {
  createMemoryUsageStore,
  dayOf,
  type ApprovalUsageRow,
  type ProjectBudget,
  type ToolUsageRow,
  type UsageDimension,
  type UsageQuery,
  type UsageRow,
  type UsageStore,
} from './usage-store.js';
export {
  createProjectBudgets,
  type ProjectBudgets,
  type ProjectBudgetsOptions,
  type ProjectBudgetStatus,
} from './project-budgets.js';
export { createUsageModule, type UsageModule, type UsageModuleOptions } from './usage-module.js';
export { usageRoutes } from './usage-api.js';
export { usageCsv } from './usage-csv.js';
