/**
 * One writer per identity — a goal's (site, type, match), a site id, a lower-cased e-mail — on
 * top of the compacted config log, so that uniqueness holds across processes writing one topic.
 *
 * A creation first writes a claim record keyed by the identity. Every node applies claims in log
 * order by the same rule, first writer wins, so all agree on the holder; the writer reads, once
 * its own record is applied, whether it won, and only the winner writes the entity. The holder is
 * released when its entity is deleted (every node applies that delete in log order too).
 *
 * Compaction keeps only the latest claim record of a key, which may be a loser's; so at load the
 * holders come from the live entities, and a claim record only counts for a key no live entity
 * holds (a creation still in flight). A claim whose entity never appears (its writer died between
 * the two records) is abandoned after ABANDONED_MS and may be taken over: the takeover names the
 * holder it replaces and wins only if, in log order, that holder still has no entity.
 */

export type ClaimSpace = 'goal-key' | 'site' | 'email'

/** The value of a claim record: who claims, and which abandoned holder it replaces. */
export interface ClaimValue {
  owner: string
  over?: string
}

/** A claim without its entity for this long is taken to be abandoned by a writer that died. */
export const ABANDONED_MS = 30_000

export const claimId = (space: ClaimSpace, identity: string): string => `${space}:${identity}`

function parseClaimId(id: string): { space: ClaimSpace; identity: string } | undefined {
  const colon = id.indexOf(':')
  const space = id.slice(0, colon)
  return space === 'goal-key' || space === 'site' || space === 'email' ? { space, identity: id.slice(colon + 1) } : undefined
}

function claimValue(value: unknown): ClaimValue | null | undefined {
  if (value === null) return null
  // the type checker needs the cast that the linter's wider program finds redundant
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
  const v = value as Partial<ClaimValue> | undefined
  if (typeof v?.owner !== 'string') return undefined
  return typeof v.over === 'string' ? { owner: v.owner, over: v.over } : { owner: v.owner }
}

/** Whether the entity a holder claimed for exists in this view. */
export type EntityExists = (space: ClaimSpace, identity: string, owner: string) => boolean

export class Claims {
  readonly #held = new Map<string, { owner: string; since: number }>()
  /** owners whose claim this node awaits, with the holder once their record is applied */
  readonly #awaited = new Map<string, string | undefined>()
  readonly #exists: EntityExists

  constructor(exists: EntityExists) {
    this.#exists = exists
  }

  holder(space: ClaimSpace, identity: string): string | undefined {
    return this.#held.get(claimId(space, identity))?.owner
  }

  /** true when the holder has no entity and has held long enough to be taken over */
  abandoned(space: ClaimSpace, identity: string, now = Date.now()): boolean {
    const held = this.#held.get(claimId(space, identity))
    return held !== undefined && now - held.since >= ABANDONED_MS && !this.#exists(space, identity, held.owner)
  }

  /** Starts waiting for the outcome of `owner`'s claim; `outcome` ends the wait. */
  await(owner: string): void {
    this.#awaited.set(owner, undefined)
  }

  /** the holder right after `owner`'s claim was applied (undefined if it was not applied) */
  outcome(owner: string): string | undefined {
    const holder = this.#awaited.get(owner)
    this.#awaited.delete(owner)
    return holder
  }

  /** A claim record, applied in log order; malformed records change nothing. */
  apply(id: string, value: unknown, now = Date.now()): void {
    const key = parseClaimId(id)
    const claim = claimValue(value)
    if (!key || claim === undefined) return
    const held = this.#held.get(id)
    const vacant = (owner: string) => !this.#exists(key.space, key.identity, owner)
    if (claim === null) {
      // a writer gave up its claim, or a delete cleared it: only a holder without entity goes
      if (held && vacant(held.owner)) this.#held.delete(id)
      return
    }
    if (!held || (claim.over === held.owner && vacant(held.owner))) this.#held.set(id, { owner: claim.owner, since: now })
    if (this.#awaited.has(claim.owner)) this.#awaited.set(claim.owner, this.#held.get(id)!.owner)
  }

  /** An entity was written: it holds its identity unless another holder came first. */
  entityWritten(space: ClaimSpace, identity: string, owner: string, now = Date.now()): void {
    const id = claimId(space, identity)
    if (!this.#held.has(id)) this.#held.set(id, { owner, since: now })
  }

  /**
   * An entity was deleted: its identity is free again if it held it. `owner` undefined frees it
   * whoever holds it: a site's identity is its key, so any holder of it held it for that site.
   */
  entityDeleted(space: ClaimSpace, identity: string, owner: string | undefined): void {
    const id = claimId(space, identity)
    const held = this.#held.get(id)
    if (held && (owner === undefined || held.owner === owner)) this.#held.delete(id)
  }
}
