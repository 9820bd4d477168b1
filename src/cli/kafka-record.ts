import { validateEvent, type SiteInfo } from '../ingest/index.js'
import { eventLogRecord } from '../log/index.js'
import { initHash } from '../sketch/index.js'

export interface KafkaRecord {
  key: string
  value: Buffer
  /** epoch ms, as kafkajs takes it */
  timestamp: string
}

/**
 * Turns a request body into the record POST /api/event appends: the same validation, the same
 * event record (log/event-record.ts), keyed by site and session — so a stream produced straight
 * into the topic is the stream the service would have written.
 */
export async function loggedRecordEncoder(siteIds: readonly string[], retentionDays: number): Promise<(body: string) => KafkaRecord> {
  await initHash()
  const sites = new Map<string, SiteInfo>(siteIds.map((id) => [id, { site_id: id, domain: null, timezone: 'UTC' }]))
  const retentionMs = retentionDays * 86_400_000
  return (body) => {
    const r = validateEvent(JSON.parse(body), { now: Date.now(), retentionMs, site: (id) => sites.get(id), botFilter: false })
    if (r.kind === 'reject') throw new Error(`the bench built an event the service refuses: ${r.error}`)
    const { key, value } = eventLogRecord(r.event)
    return { key, value, timestamp: String(r.event.ts) }
  }
}
