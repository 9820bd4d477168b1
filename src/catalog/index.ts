export { Catalog, type CatalogEvent } from './catalog.js'
export { goalIdentity } from './goal-identity.js'
