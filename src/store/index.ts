export { StateStore, type ReplayRecord, type PartitionMeta, type Op } from './state-store.js'
export type { Dirty, DirtyKeys, PartitionImage, SiteImage, SummarySlots } from './partition-image.js'
