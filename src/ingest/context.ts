import type { LoggedEvent } from '../schema/index.js'
import type { DropReason } from './drop-reason.js'

/** What ingestion needs to know of a site. */
export interface SiteInfo {
  site_id: string
  /** when set, browser events must come from this host or a subdomain of it */
  domain?: string | null
  /** IANA zone; days are counted in it downstream */
  timezone: string
}

/** The facts of one request that validation depends on; the clock and the site lookup come in here. */
export interface IngestContext {
  /** receive time, epoch ms */
  now: number
  retentionMs: number
  site(id: string): SiteInfo | undefined
  /** the request's Origin header; undefined or empty when the caller sent none */
  origin?: string
  /** the request's User-Agent header: the event's user_agent when the body has none and an Origin came */
  userAgent?: string
  /** drop events whose user_agent is a known bot */
  botFilter: boolean
  /**
   * The country of the client that sent the request (ISO 3166-1 alpha-2, null when unknown): the
   * event's `country` when its body names none. Asked only then, and at most once a request: the
   * caller remembers the answer. Undefined when the lookup is off.
   */
  clientCountry?(): string | null
}

export type Accepted = { kind: 'accept'; event: LoggedEvent }
export type Dropped = { kind: 'drop'; reason: DropReason; event: LoggedEvent }
export type Rejected = { kind: 'reject'; error: string }

/** Expected outcomes are values: `reject` answers 400, `drop` answers 202 without counting. */
export type EventResult = Accepted | Dropped | Rejected
