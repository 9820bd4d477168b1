export { StateStore, type ReplayRecord, type PartitionMeta, type Op } from './state-store.js'
export type { Dirty, DirtyKeys, DroppedKeys, PartitionImage, SiteImage } from './partition-image.js'
