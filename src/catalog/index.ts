export { Catalog, type Kind, type CatalogEvent, type CatalogOptions } from './catalog.js'
export { type ClaimSpace } from './claims.js'
export { goalIdentity } from './goal-identity.js'
