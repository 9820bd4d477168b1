import type { TSchema } from '@sinclair/typebox'
import * as S from '../schema/index.js'

/**
 * The OpenAPI 3.1 document, built from the same TypeBox schemas that validate requests, so the
 * document cannot drift from what the server accepts. JSON Schema 2020-12 is OpenAPI 3.1's own
 * dialect, so the schemas go in as they are.
 */
const json = (schema: TSchema) => ({ content: { 'application/json': { schema: plain(schema) } } })
const plain = (schema: TSchema): unknown => JSON.parse(JSON.stringify(schema))
const err = (description: string) => ({ description, ...json(S.ErrorBody) })

const E = {
  400: err('A field or parameter is missing or invalid; the message names it'),
  401: err('No or invalid credential'),
  403: err('No access to the site named'),
  404: err('Unknown (or inaccessible) resource'),
  409: err('Already exists'),
  413: err('Body too large'),
  429: err('Rate limited; see Retry-After'),
  503: err('Log unreachable or ingest buffer full; see Retry-After'),
}
const q = (name: string, description: string, required = false, schema: object = { type: 'string' }) =>
  ({ name, in: 'query', required, description, schema })
const siteQ = q('site_id', 'The site', true)
const daysQ = q('days', 'Window length in days (1..retention)', false, { type: 'integer', minimum: 1, default: 30 })
const idQ = (what: string) => q('id', `The ${what} id`, true)
const auth = [{ bearer: [] }, { cookie: [] }]

export function openApiDocument(): object {
  return {
    openapi: '3.1.0',
    info: { title: 'Goalpost', version: '0.1.0', description: 'Goals and conversions for web analytics.' },
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'API key or admin token' },
        cookie: { type: 'apiKey', in: 'cookie', name: 'goalpost_session' },
        key: { type: 'apiKey', in: 'query', name: 'key', description: 'API key or admin token (WS /api/live only)' },
      },
      schemas: { Event: plain(S.Event), Goal: plain(S.Goal), GoalList: plain(S.GoalList), Site: plain(S.Site), WhoAmI: plain(S.WhoAmI), Error: plain(S.ErrorBody) },
    },
    paths: {
      '/api/event': {
        post: {
          summary: 'Ingest one event', requestBody: json(S.Event),
          responses: { 202: { description: 'Durably appended to the event log', ...json(S.IngestOk) }, 400: E[400], 413: E[413], 429: E[429], 503: E[503] },
        },
      },
      '/api/events': {
        post: {
          summary: 'Ingest a batch of 1-1000 events, all or nothing', security: auth,
          requestBody: json({ type: 'array', items: S.Event, minItems: 1, maxItems: 1000 } as unknown as TSchema),
          responses: { 202: { description: 'All appended', ...json(S.BatchOk) }, 400: { description: 'Invalid events', ...json(S.BatchError) }, 401: E[401], 403: E[403], 413: E[413], 503: E[503] },
        },
      },
      '/api/login': { post: { summary: 'Log in', requestBody: json(S.Login), responses: { 200: { description: 'Logged in; sets goalpost_session', ...json(S.User) }, 401: E[401], 429: E[429] } } },
      '/api/logout': { post: { summary: 'Log out', responses: { 204: { description: 'Logged out' } } } },
      '/api/session': {
        post: {
          summary: 'Exchange the admin token for the session cookie (dashboard sign-in)',
          description: 'The token is sent once; the answer sets the same HttpOnly goalpost_session cookie as POST /api/login, so the page never keeps the token. A new admin token ends the admin logins made with the old one. More than 10 wrong tokens a minute from one address: 429.',
          requestBody: json(S.AdminLogin),
          responses: { 200: { description: 'Signed in as the admin; sets goalpost_session', ...json(S.WhoAmI) }, 400: E[400], 401: E[401], 429: E[429] },
        },
        get: { summary: 'Who the credential belongs to', security: auth, responses: { 200: { description: 'The admin, or a user', ...json(S.WhoAmI) }, 401: E[401] } },
      },
      '/api/live': {
        get: {
          summary: 'Live goals over a WebSocket',
          description: 'A WebSocket (Upgrade: websocket). On connect and whenever it changes, at most once a second, the server sends the GET /api/goals body as a text message. ' +
            'Authenticated by the session cookie (only from this server\'s own pages) or an API key / admin token as `key`. A refusal is a close frame with code 4000 + the status GET /api/goals would answer and its error sentence as reason: ' +
            '4401 no or invalid credential (also when it is revoked or logged out while open), 4400 a malformed parameter, 4403 no access to the site (also when access is taken away while open), 4404 unknown site (admin). Slow readers are dropped.',
          security: [{ bearer: [] }, { cookie: [] }, { key: [] }],
          parameters: [siteQ, daysQ, q('key', 'API key or admin token, for clients that cannot send headers')],
          responses: {
            101: { description: 'Switching Protocols; every message is a GoalList', ...json(S.GoalList) },
            426: { description: 'A plain HTTP request: connect with Upgrade: websocket', ...json(S.ErrorBody) },
          },
        },
      },
      '/api/keys': {
        post: { summary: 'Create an API key (shown once)', security: auth, requestBody: json(S.KeyCreate), responses: { 201: { description: 'Created', ...json(S.ApiKeyCreated) }, 400: E[400], 401: E[401] } },
        get: { summary: "List the caller's keys", security: auth, responses: { 200: { description: 'Keys', ...json(S.KeyList) }, 401: E[401] } },
        delete: { summary: 'Revoke a key', security: auth, parameters: [idQ('key')], responses: { 204: { description: 'Revoked' }, 401: E[401], 404: E[404] } },
      },
      '/api/sites': {
        post: { summary: 'Create a site (admin)', security: auth, requestBody: json(S.SiteCreate), responses: { 201: { description: 'Created', ...json(S.Site) }, 400: E[400], 401: E[401], 403: E[403], 409: E[409] } },
        get: { summary: 'Sites the caller can access', security: auth, responses: { 200: { description: 'Sites', ...json(S.SiteList) }, 401: E[401] } },
        patch: { summary: 'Change a site (admin)', security: auth, parameters: [siteQ], requestBody: json(S.SitePatch), responses: { 200: { description: 'Changed', ...json(S.Site) }, 400: E[400], 401: E[401], 403: E[403], 404: E[404] } },
      },
      '/api/users': {
        post: { summary: 'Create a user (admin)', security: auth, requestBody: json(S.UserCreate), responses: { 201: { description: 'Created', ...json(S.User) }, 400: E[400], 401: E[401], 403: E[403], 409: E[409] } },
        patch: { summary: "Change a user's sites (admin)", security: auth, parameters: [idQ('user')], requestBody: json(S.UserPatch), responses: { 200: { description: 'Changed', ...json(S.User) }, 400: E[400], 401: E[401], 403: E[403], 404: E[404] } },
      },
      '/api/goals': {
        post: {
          summary: 'Create a goal (retroactive)', security: auth,
          description: 'Event goals may add match_properties (1-8 conditions, all must hold; any value of a condition may) and a currency whose revenue they sum. ' +
            'Both are part of the goal\'s identity (409), in any order of conditions and values; page goals take neither (400).',
          requestBody: json(S.GoalCreate), responses: { 201: { description: 'Created', ...json(S.Goal) }, 400: E[400], 401: E[401], 403: E[403], 404: E[404], 409: E[409] } },
        get: { summary: 'Goals with conversions (and, for goals with a currency, exact revenue) over a window', security: auth, parameters: [siteQ, daysQ], responses: { 200: { description: 'Goals', ...json(S.GoalList) }, 400: E[400], 401: E[401], 403: E[403], 404: E[404] } },
        patch: { summary: 'Rename a goal', security: auth, parameters: [idQ('goal')], requestBody: json(S.GoalPatch), responses: { 200: { description: 'Renamed', ...json(S.Goal) }, 400: E[400], 401: E[401], 404: E[404] } },
        delete: { summary: 'Delete a goal', security: auth, parameters: [idQ('goal')], responses: { 204: { description: 'Deleted' }, 401: E[401], 404: E[404] } },
      },
      '/api/goals/sessions': {
        get: {
          summary: 'Converted sessions of a goal, newest first', security: auth,
          parameters: [idQ('goal'), daysQ, q('limit', '1..100', false, { type: 'integer', minimum: 1, maximum: 100, default: 25 }), q('cursor', 'next_cursor of the previous page')],
          responses: { 200: { description: 'Sessions', ...json(S.SessionList) }, 400: E[400], 401: E[401], 404: E[404] },
        },
      },
      '/api/goals/suggestions': {
        get: {
          summary: 'Paths or event names seen on a site, for the goal form', security: auth,
          parameters: [siteQ, q('kind', 'path or event', false, { enum: ['path', 'event'], default: 'path' }), q('q', 'prefix'), q('limit', '1..100', false, { type: 'integer', default: 20 })],
          responses: { 200: { description: 'Suggestions', ...json(S.Suggestions) }, 400: E[400], 401: E[401], 403: E[403], 404: E[404] },
        },
      },
      '/api/goals/report': {
        get: {
          summary: "One goal's conversions, sessions and rate per day (or per hour of up to 7 days) in the site's time zone", security: auth,
          parameters: [idQ('goal'), daysQ, q('interval', 'day, or hour for days up to 7', false, { enum: ['day', 'hour'], default: 'day' })],
          responses: { 200: { description: 'The report', ...json(S.GoalReport) }, 400: E[400], 401: E[401], 404: E[404], 503: E[503] },
        },
      },
      '/api/goals/breakdown': {
        get: {
          summary: "One goal's conversions, sessions and rate per value of a session attribute (fixed by the session's earliest events): the top values and the rest", security: auth,
          parameters: [
            idQ('goal'), daysQ, q('by', 'the session attribute', true, { enum: [...S.BREAKDOWN_DIMENSIONS] }),
            q('limit', '1..100: rows shown, by most conversions', false, { type: 'integer', default: 10 }),
          ],
          responses: { 200: { description: 'The breakdown', ...json(S.GoalBreakdown) }, 400: E[400], 401: E[401], 404: E[404], 503: E[503] },
        },
      },
      '/api/goals/overlap': {
        get: {
          summary: 'Sessions that completed two goals of one site: both, either, one only (exact)', security: auth,
          parameters: [q('a', 'The first goal id', true), q('b', 'The second goal id, of the same site', true), daysQ],
          responses: { 200: { description: 'The overlap', ...json(S.GoalOverlap) }, 400: E[400], 401: E[401], 404: E[404], 503: E[503] },
        },
      },
      '/api/funnels': {
        post: {
          summary: 'Create a funnel: 2-8 goals of a site in order, reached within window_minutes of entering', security: auth, requestBody: json(S.FunnelCreate),
          responses: { 201: { description: 'Created', ...json(S.Funnel) }, 400: E[400], 401: E[401], 403: E[403], 404: E[404] },
        },
        get: { summary: "A site's funnels in creation order", security: auth, parameters: [siteQ], responses: { 200: { description: 'Funnels', ...json(S.FunnelList) }, 400: E[400], 401: E[401], 403: E[403], 404: E[404] } },
        delete: { summary: 'Delete a funnel', security: auth, parameters: [idQ('funnel')], responses: { 204: { description: 'Deleted' }, 401: E[401], 404: E[404] } },
      },
      '/api/funnels/report': {
        get: {
          summary: 'Sessions reaching each step of a funnel in order (exact)', security: auth, parameters: [idQ('funnel'), daysQ],
          responses: { 200: { description: 'The report', ...json(S.FunnelReport) }, 400: E[400], 401: E[401], 404: E[404], 503: E[503] },
        },
      },
      '/': { get: { summary: 'The dashboard (HTML page; its bundles are served at /dashboard-<hash>.js|css)', responses: { 200: { description: 'The page, with an ETag', content: { 'text/html': {} } }, 304: { description: 'Not modified (If-None-Match)' } } } },
      '/healthz': { get: { summary: 'Liveness', responses: { 200: { description: 'Serving' } } } },
      '/readyz': { get: { summary: 'Readiness', responses: { 200: { description: 'State restored, log reachable' }, 503: { description: 'Not ready' } } } },
      '/metrics': { get: { summary: 'Prometheus metrics', responses: { 200: { description: 'Text exposition format', content: { 'text/plain': {} } } } } },
      '/api/openapi.json': { get: { summary: 'This document', responses: { 200: { description: 'OpenAPI 3.1' } } } },
    },
  }
}
