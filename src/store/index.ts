export { turnDue } from './encode-slices.js'
export { StateStore, type ReplayRecord, type PartitionMeta, type Op } from './state-store.js'
export { type Dirty, type DirtyKeys, type DroppedKeys, type PartitionImage, type SiteImage, type TallyCheck } from './partition-image.js'
