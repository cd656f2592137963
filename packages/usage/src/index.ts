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
  type ToolUsageRow,
  type UsageDimension,
  type UsageQuery,
  type UsageRow,
  type UsageStore,
} from './usage-store.js';
