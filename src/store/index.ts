export { StateStore, type BackfillRecord } from './state-store.js'
