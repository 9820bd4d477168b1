import { Type, type Static } from '@sinclair/typebox'

/** The eleven event types of docs/api.md §1, in the order it lists them. */
export const EVENT_TYPES = [
  'pageview', 'pageleave', 'custom_event', 'web_vitals', 'external_link', 'error',
  'payment', 'identify', 'button_click', 'form_submit', 'copy',
] as const

export const ID_PATTERN = '^[A-Za-z0-9._:-]+$'

/** Limits of docs/api.md §1. Identifying strings over a limit are rejected; descriptive text is cut. */
export const LIMITS = {
  id: 128,
  userId: 256,
  path: 2048,
  eventName: 256,
  string: 256,
  text: 2048,
  errorStackBytes: 2048,
  propertiesKeys: 32,
  propertiesBytes: 4096,
  bodyBytes: 64 * 1024,
  batchBytes: 1024 * 1024,
  batchEvents: 1000,
  futureSkewMs: 5 * 60 * 1000,
} as const

/** Fields cut to LIMITS.text characters instead of being rejected. */
export const CUT_FIELDS = ['url', 'referrer', 'title', 'user_agent', 'error_message'] as const

const Id = Type.String({ minLength: 1, maxLength: LIMITS.id, pattern: ID_PATTERN })
const Str = Type.String({ maxLength: LIMITS.string })
const Text = Type.String() // cut to LIMITS.text before validation
const Num = Type.Number()

export const Screen = Type.Object({
  width: Type.Optional(Num),
  height: Type.Optional(Num),
  viewport_width: Type.Optional(Num),
  viewport_height: Type.Optional(Num),
  pixel_ratio: Type.Optional(Num),
}, { additionalProperties: false })

export const Utm = Type.Object({
  source: Type.Optional(Str),
  medium: Type.Optional(Str),
  campaign: Type.Optional(Str),
  term: Type.Optional(Str),
  content: Type.Optional(Str),
}, { additionalProperties: false })

export const Vitals = Type.Object({
  lcp: Type.Optional(Num),
  fid: Type.Optional(Num),
  cls: Type.Optional(Num),
  fcp: Type.Optional(Num),
  ttfb: Type.Optional(Num),
  inp: Type.Optional(Num),
}, { additionalProperties: false })

/**
 * Keys of open-ended objects. TypeBox's default key pattern `^(.*)$` does not match keys holding a
 * line break (`.` stops there), and a key no pattern matches would skip validation entirely.
 */
const AnyKey = Type.String({ pattern: '^[\\s\\S]*$' })
const KeyNames = { propertyNames: { maxLength: LIMITS.string } }

/**
 * docs/api.md §1 bounds property values only by type and the 4 KiB serialized size (checked in code),
 * so a value may be longer than the 256 characters of an ordinary string.
 */
export const Properties = Type.Record(
  AnyKey,
  Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]),
  { maxProperties: LIMITS.propertiesKeys, ...KeyNames },
)

export const AdClickIds = Type.Record(AnyKey, Str, KeyNames)

/** Largest revenue amount, exclusive (docs/api.md §1). */
export const MAX_AMOUNT = 1e12
/** A decimal amount as text: below 10^12, at most four decimal places. */
export const AMOUNT_PATTERN = '^\\d{1,12}(\\.\\d{1,4})?$'

/**
 * Revenue of a `custom_event` or `payment`. A numeric amount's decimal places are checked in code
 * (ingest/validate-event.ts): JSON Schema's multipleOf is floating point.
 */
export const Revenue = Type.Object({
  amount: Type.Union([
    Type.String({ pattern: AMOUNT_PATTERN }),
    Type.Number({ minimum: 0, exclusiveMaximum: MAX_AMOUNT }),
  ]),
  currency: Type.String({ pattern: '^[A-Z]{3}$' }),
}, { additionalProperties: false })

/** One analytics event as a client sends it (docs/api.md §1). */
export const Event = Type.Object({
  type: Type.Union(EVENT_TYPES.map((t) => Type.Literal(t))),
  site_id: Id,
  session_id: Id,
  visitor_id: Type.Optional(Id),
  user_id: Type.Optional(Type.String({ maxLength: LIMITS.userId })),
  timestamp: Type.Optional(Type.String({ description: 'ISO 8601 date and time with Z or an offset' })),
  url: Type.Optional(Text),
  path: Type.Optional(Type.String({ maxLength: LIMITS.path })),
  hostname: Type.Optional(Str),
  title: Type.Optional(Text),
  referrer: Type.Optional(Text),
  language: Type.Optional(Str),
  user_agent: Type.Optional(Text),
  screen: Type.Optional(Screen),
  utm: Type.Optional(Utm),
  ad_click_ids: Type.Optional(AdClickIds),
  duration: Type.Optional(Type.Number({ minimum: 0 })),
  event_name: Type.Optional(Type.String({ maxLength: LIMITS.eventName })),
  properties: Type.Optional(Properties),
  vitals: Type.Optional(Vitals),
  error_name: Type.Optional(Str),
  error_message: Type.Optional(Text),
  error_stack: Type.Optional(Text),
  provider: Type.Optional(Str),
  revenue: Type.Optional(Revenue),
  /** a retried event carries the same id: its revenue counts once per session */
  event_id: Type.Optional(Id),
  /**
   * ISO 3166-1 alpha-2 country of the visitor. A backend may name it; otherwise ingest looks the
   * client address up (never storing the address).
   */
  country: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$' })),
}, { additionalProperties: false, $id: 'Event' })

export type Event = Static<typeof Event>
export type EventType = (typeof EVENT_TYPES)[number]

/**
 * An event as it is stored in the log: validated, cut, `path` derived from `url`,
 * `timestamp` filled in, and stamped with the server's receive time. Both instants are
 * epoch milliseconds here so that the processor never parses dates.
 */
export const LoggedEvent = Type.Composite([
  Type.Omit(Event, ['timestamp']),
  Type.Object({
    /** event time, epoch ms */
    ts: Type.Number(),
    /** server receive time, epoch ms */
    received_at: Type.Number(),
  }),
], { $id: 'LoggedEvent' })
export type LoggedEvent = Static<typeof LoggedEvent>

/**
 * The log key of an event: site and session, so that one partition owns a session entirely
 * (docs/architecture.md, "The log is the source of truth") and the stream processor can hash it as the session's identity.
 */
export const eventKey = (siteId: string, sessionId: string): string => siteId + '\u0000' + sessionId
