import type { ConfigLog, ConfigRecord } from '../log/index.js'
import type { Goal, Site, StoredKey, StoredLogin, StoredUser } from '../schema/api.js'

/** Kinds of records in the compacted config topic. */
export type Kind = 'site' | 'user' | 'key' | 'login' | 'goal'

export type CatalogEvent =
  | { kind: 'site'; before: Site | undefined; after: Site | undefined }
  | { kind: 'goal'; before: Goal | undefined; after: Goal | undefined }

/**
 * The materialized view of the config topic: sites, users, API keys, login sessions and goals.
 * Every write goes through the log and comes back through `apply`, so all nodes converge on the
 * same view and a write is visible to its writer when `put` resolves.
 */
export class Catalog {
  readonly sites = new Map<string, Site>()
  readonly users = new Map<string, StoredUser>()
  readonly #userByEmail = new Map<string, string>()
  readonly keys = new Map<string, StoredKey>()
  readonly #keyByHash = new Map<string, string>()
  readonly #logins = new Map<string, StoredLogin>()
  readonly goals = new Map<string, Goal>()
  readonly #listeners: ((e: CatalogEvent) => void)[] = []
  readonly #log: ConfigLog

  constructor(log: ConfigLog) {
    this.#log = log
  }

  async load(): Promise<void> {
    const records = await this.#log.load()
    // goals after sites, so listeners see a goal's site; creation order within a kind
    const order: Record<string, number> = { site: 0, user: 1, key: 2, login: 3, goal: 4 }
    records.sort((a, b) => (order[a.kind] ?? 9) - (order[b.kind] ?? 9) || createdAt(a).localeCompare(createdAt(b)))
    for (const r of records) this.apply(r)
    this.#log.watch((r) => this.apply(r))
  }

  /** resolves once this view holds every config record written anywhere before the call */
  sync(): Promise<void> {
    return this.#log.sync()
  }

  onChange(listener: (e: CatalogEvent) => void): void {
    this.#listeners.push(listener)
  }

  put(kind: Kind, id: string, value: unknown | null): Promise<void> {
    return this.#log.put({ kind, id, value })
  }

  userByEmail(email: string): StoredUser | undefined {
    const id = this.#userByEmail.get(email.toLowerCase())
    return id === undefined ? undefined : this.users.get(id)
  }

  keyByHash(hash: string): StoredKey | undefined {
    const id = this.#keyByHash.get(hash)
    return id === undefined ? undefined : this.keys.get(id)
  }

  login(hash: string): StoredLogin | undefined {
    return this.#logins.get(hash)
  }

  /** goals of a site in creation order */
  goalsOf(siteId: string): Goal[] {
    const out: Goal[] = []
    for (const g of this.goals.values()) if (g.site_id === siteId) out.push(g)
    return out
  }

  apply(r: ConfigRecord): void {
    switch (r.kind) {
      case 'site': {
        const before = this.sites.get(r.id)
        const after = r.value as Site | null
        if (after) this.sites.set(r.id, after)
        else this.sites.delete(r.id)
        this.#emit({ kind: 'site', before, after: after ?? undefined })
        break
      }
      case 'user': {
        const old = this.users.get(r.id)
        if (old) this.#userByEmail.delete(old.email.toLowerCase())
        const u = r.value as StoredUser | null
        if (u) {
          this.users.set(r.id, u)
          this.#userByEmail.set(u.email.toLowerCase(), r.id)
        } else this.users.delete(r.id)
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
      case 'goal': {
        const before = this.goals.get(r.id)
        const after = r.value as Goal | null
        // a Map keeps first-insertion order, which is creation order: a rename must not move it
        if (after) this.goals.set(r.id, after)
        else this.goals.delete(r.id)
        this.#emit({ kind: 'goal', before, after: after ?? undefined })
        break
      }
    }
  }

  #emit(e: CatalogEvent): void {
    for (const l of this.#listeners) l(e)
  }
}

function createdAt(r: ConfigRecord): string {
  const v = r.value as { created_at?: unknown } | null
  return typeof v?.created_at === 'string' ? v.created_at : ''
}
