export { StateStore, type ReplayRecord } from './state-store.js'
