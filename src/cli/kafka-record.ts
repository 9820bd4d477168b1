import { validateEvent, type SiteInfo } from '../ingest/index.js'
import { eventKey } from '../schema/index.js'

export interface KafkaRecord {
  key: string
  value: string
  /** epoch ms, as kafkajs takes it */
  timestamp: string
}

/**
 * Turns a request body into the record POST /api/event appends: the same validation, the same
 * logged event bytes, keyed by site and session — so a stream produced straight into the topic
 * is the stream the service would have written.
 */
export function loggedRecordEncoder(siteIds: readonly string[], retentionDays: number): (body: string) => KafkaRecord {
  const sites = new Map<string, SiteInfo>(siteIds.map((id) => [id, { site_id: id, domain: null, timezone: 'UTC' }]))
  const retentionMs = retentionDays * 86_400_000
  return (body) => {
    const r = validateEvent(JSON.parse(body), { now: Date.now(), retentionMs, site: (id) => sites.get(id), botFilter: false })
    if (r.kind === 'reject') throw new Error(`the bench built an event the service refuses: ${r.error}`)
    return { key: eventKey(r.event.site_id, r.event.session_id), value: JSON.stringify(r.event), timestamp: String(r.event.ts) }
  }
}
