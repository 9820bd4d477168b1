export { StateStore, type ReplayRecord, type PartitionMeta, type Op } from './state-store.js'
