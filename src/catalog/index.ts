export { Catalog, type Kind, type CatalogEvent } from './catalog.js'
