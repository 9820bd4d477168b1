import { LogError, type ConfigLog, type ConfigRecord } from '../log/index.js'
import type { Funnel, Goal, Site, StoredKey, StoredLogin, StoredUser } from '../schema/index.js'
import { Claims, claimId, type ClaimSpace, type ClaimValue } from './claims.js'
import { checkStoredGoal, goalIdentity } from './goal-identity.js'

/** Kinds of records in the compacted config topic. */
export type Kind = 'site' | 'user' | 'key' | 'login' | 'goal' | 'funnel' | 'claim'

export type CatalogEvent =
  | { kind: 'site'; before: Site | undefined; after: Site | undefined }
  | { kind: 'goal'; before: Goal | undefined; after: Goal | undefined }

export interface CatalogOptions {
  /** a stored record the catalog keeps but cannot fully use (e.g. a goal pattern that does not parse) */
  onProblem?(message: string, fields: Record<string, unknown>): void
}

/** The identity each unique kind is claimed by. */
const UNIQUE = {
  goal: { space: 'goal-key', identity: (g: Goal) => goalIdentity(g) },
  site: { space: 'site', identity: (s: Site) => s.site_id },
  user: { space: 'email', identity: (u: StoredUser) => u.email.trim().toLowerCase() },
} as const satisfies Partial<Record<Kind, { space: ClaimSpace; identity(value: never): string }>>

type UniqueKind = keyof typeof UNIQUE
const isUnique = (kind: string): kind is UniqueKind => kind in UNIQUE

/**
 * The materialized view of the config topic: sites, users, API keys, login sessions and goals.
 * Every write goes through the log and comes back through `apply`, so all nodes converge on the
 * same view and a write is visible to its writer when `put` resolves. Creations that must be
 * unique go through `createUnique` (claims.ts).
 */
export class Catalog {
  readonly sites = new Map<string, Site>()
  readonly users = new Map<string, StoredUser>()
  readonly keys = new Map<string, StoredKey>()
  readonly #keyByHash = new Map<string, string>()
  readonly #logins = new Map<string, StoredLogin>()
  readonly goals = new Map<string, Goal>()
  /** goals by site, each in creation order: a Map keeps first-insertion order */
  readonly #goalsBySite = new Map<string, Map<string, Goal>>()
  readonly funnels = new Map<string, Funnel>()
  readonly #claims: Claims
  readonly #listeners: ((e: CatalogEvent) => void)[] = []
  readonly #log: ConfigLog
  readonly #onProblem: NonNullable<CatalogOptions['onProblem']>

  constructor(log: ConfigLog, opts: CatalogOptions = {}) {
    this.#log = log
    this.#onProblem = opts.onProblem ?? (() => {})
    this.#claims = new Claims((space, identity, owner) =>
      space === 'goal-key' ? this.goals.has(owner) : space === 'email' ? this.users.has(owner) : this.sites.has(identity))
  }

  /**
   * Applies every live record: entities first (sites before the goals that name them, creation
   * order within a kind), so each identity is held by its oldest live entity; then the claim
   * records, which count only for identities no live entity holds.
   */
  async load(): Promise<void> {
    const records = await this.#log.load()
    const order: Record<string, number> = { site: 0, user: 1, key: 2, login: 3, goal: 4, funnel: 5, claim: 6 }
    records.sort((a, b) => (order[a.kind] ?? 9) - (order[b.kind] ?? 9) || createdAt(a).localeCompare(createdAt(b)))
    for (const r of records) this.apply(r)
    this.#log.watch((r) => this.apply(r))
  }

  /** resolves once this view holds every config record written anywhere before the call */
  sync(): Promise<void> {
    return this.#log.sync()
  }

  #catchingUp: Promise<void> | null = null

  /**
   * For a name this view does not know yet (a site or goal created on another node a moment ago):
   * unless `known()` holds already, waits once for the config log to catch up. Concurrent callers
   * share one catch-up; a log that cannot say leaves the view as it is.
   */
  async catchUp(known: () => boolean): Promise<void> {
    if (known()) return
    this.#catchingUp ??= this.#log.sync().catch(() => undefined).finally(() => (this.#catchingUp = null))
    await this.#catchingUp
  }

  onChange(listener: (e: CatalogEvent) => void): void {
    this.#listeners.push(listener)
  }

  /**
   * Writes a record. Deleting a unique entity first clears its claim record, so that compaction
   * cannot leave a claim behind for an identity nobody holds any more.
   */
  async put(kind: Kind, id: string, value: unknown): Promise<void> {
    if (value === null && isUnique(kind)) {
      const entity = this.#entity(kind, id)
      if (entity) await this.#log.put({ kind: 'claim', id: claimId(UNIQUE[kind].space, identityOf(kind, entity)), value: null })
    }
    await this.#log.put({ kind, id, value })
  }

  /**
   * Creates an entity unique by `identity`: claims it for `owner` (an id no other request uses),
   * and only if the claim won, runs `write`. Resolves with null once created, or with the holder
   * (the id of the goal or user that has it; for sites the site id) when it exists already.
   * A `write` that fails gives the claim up again.
   */
  async createUnique(space: ClaimSpace, identity: string, owner: string, write: () => Promise<void>): Promise<string | null> {
    const held = this.#claims.holder(space, identity)
    const value: ClaimValue = { owner }
    if (held !== undefined) {
      if (!this.#claims.abandoned(space, identity)) return held
      value.over = held
    }
    const id = claimId(space, identity)
    this.#claims.await(owner)
    let holder: string | undefined
    try {
      await this.#log.put({ kind: 'claim', id, value })
    } catch (err) {
      if ((err as { code?: unknown }).code !== 'LOG_NOT_APPLIED') throw err
      // the claim is stored but this node cannot read it back, so it cannot know whether it won:
      // the claim is withdrawn (a tombstone, stored like the claim) and nothing is created, which
      // is what the answer then says
      await this.#log.put({ kind: 'claim', id, value: null }).catch(() => undefined)
      throw new LogError('LOG_UNAVAILABLE', `${space} ${identity} was not created: ${(err as Error).message}; its claim was withdrawn`, { cause: err })
    } finally {
      holder = this.#claims.outcome(owner)
    }
    if (holder !== owner) return holder ?? this.#claims.holder(space, identity) ?? identity
    try {
      await write()
    } catch (err) {
      await this.#log.put({ kind: 'claim', id, value: null }).catch(() => undefined)
      throw err
    }
    return null
  }

  /** who holds an identity in this view, if anyone */
  holder(space: ClaimSpace, identity: string): string | undefined {
    return this.#claims.holder(space, identity)
  }

  userByEmail(email: string): StoredUser | undefined {
    const id = this.#claims.holder('email', email.trim().toLowerCase())
    return id === undefined ? undefined : this.users.get(id)
  }

  keyByHash(hash: string): StoredKey | undefined {
    const id = this.#keyByHash.get(hash)
    return id === undefined ? undefined : this.keys.get(id)
  }

  login(hash: string): StoredLogin | undefined {
    return this.#logins.get(hash)
  }

  /** ids of login records whose cookie has expired */
  expiredLogins(now = Date.now()): string[] {
    const out: string[] = []
    for (const [id, login] of this.#logins) if (login.expires_at <= now) out.push(id)
    return out
  }

  /** goals of a site in creation order */
  goalsOf(siteId: string): Goal[] {
    const goals = this.#goalsBySite.get(siteId)
    return goals ? [...goals.values()] : []
  }

  /** funnels of a site in creation order */
  funnelsOf(siteId: string): Funnel[] {
    return [...this.funnels.values()].filter((f) => f.site_id === siteId)
  }

  /** funnels with the goal among their steps */
  funnelsUsing(goalId: string): Funnel[] {
    return [...this.funnels.values()].filter((f) => f.steps.includes(goalId))
  }

  apply(r: ConfigRecord): void {
    switch (r.kind) {
      case 'site': {
        const before = this.sites.get(r.id)
        const after = r.value as Site | null
        if (after) this.sites.set(r.id, after)
        else this.sites.delete(r.id)
        this.#track('site', r.id, before, after)
        this.#emit({ kind: 'site', before, after: after ?? undefined })
        break
      }
      case 'user': {
        const before = this.users.get(r.id)
        const u = r.value as StoredUser | null
        if (u) this.users.set(r.id, u)
        else this.users.delete(r.id)
        this.#track('user', r.id, before, u)
        break
      }
      case 'key': {
        const old = this.keys.get(r.id)
        if (old) this.#keyByHash.delete(old.hash)
        const k = r.value as StoredKey | null
        if (k) {
          this.keys.set(r.id, k)
          this.#keyByHash.set(k.hash, r.id)
        } else this.keys.delete(r.id)
        break
      }
      case 'login': {
        const l = r.value as StoredLogin | null
        if (l) this.#logins.set(r.id, l)
        else this.#logins.delete(r.id)
        break
      }
      case 'goal':
        this.#applyGoal(r.id, r.value as Goal | null)
        break
      case 'funnel': {
        const f = r.value as Funnel | null
        if (f) this.funnels.set(r.id, f)
        else this.funnels.delete(r.id)
        break
      }
      case 'claim':
        this.#claims.apply(r.id, r.value)
        break
    }
  }

  #applyGoal(id: string, after: Goal | null): void {
    const before = this.goals.get(id)
    if (after) {
      const problem = checkStoredGoal(after)
      if (problem) this.#onProblem(`goal ${id} is stored with ${problem}; it matches no event`, { goal: after })
      // a Map keeps first-insertion order, which is creation order: a rename must not move it
      this.goals.set(id, after)
      let ofSite = this.#goalsBySite.get(after.site_id)
      if (!ofSite) this.#goalsBySite.set(after.site_id, (ofSite = new Map<string, Goal>()))
      ofSite.set(id, after)
    } else if (before) {
      this.goals.delete(id)
      const ofSite = this.#goalsBySite.get(before.site_id)
      ofSite?.delete(id)
      if (ofSite?.size === 0) this.#goalsBySite.delete(before.site_id)
    }
    this.#track('goal', id, before, after)
    this.#emit({ kind: 'goal', before, after: after ?? undefined })
  }

  /** Keeps claims in step with the entities: a new entity holds its identity, a deleted one frees it. */
  #track<K extends UniqueKind>(kind: K, id: string, before: Entity<K> | undefined, after: Entity<K> | null): void {
    const { space } = UNIQUE[kind]
    const owner = kind === 'site' ? undefined : id
    if (after) this.#claims.entityWritten(space, identityOf(kind, after), owner ?? id)
    else if (before) this.#claims.entityDeleted(space, identityOf(kind, before), owner)
  }

  #entity(kind: UniqueKind, id: string): Entity<UniqueKind> | undefined {
    return kind === 'goal' ? this.goals.get(id) : kind === 'site' ? this.sites.get(id) : this.users.get(id)
  }

  #emit(e: CatalogEvent): void {
    for (const l of this.#listeners) l(e)
  }
}

type Entity<K extends UniqueKind> = Parameters<(typeof UNIQUE)[K]['identity']>[0]

function identityOf<K extends UniqueKind>(kind: K, entity: Entity<K>): string {
  return (UNIQUE[kind].identity as (e: Entity<K>) => string)(entity)
}

function createdAt(r: ConfigRecord): string {
  const v = r.value as { created_at?: unknown } | null
  return typeof v?.created_at === 'string' ? v.created_at : ''
}
