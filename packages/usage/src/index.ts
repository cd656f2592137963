export {
  catalogue,
  createPriceCatalogue,
  providerFamily,
  type ModelPrice,
  type PriceCatalogueOptions,
} from './price-catalogue.js';
