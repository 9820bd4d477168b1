/**
 * The compacted config topic of the embedded log: one LevelDB key per (kind, id) holding the
 * latest value, written with a group commit of its own over the log's LevelDB, fsynced like the
 * events' frames.
 */
import type { ConfigLog, ConfigRecord } from '../types.js'
import type { BatchOp, CommitJob } from './commit-queue.js'
import { decodeConfigV1, encodeConfigV1 } from './config-v1.js'
import type { EmbeddedLog } from './embedded-log.js'
import { LogError } from '../errors.js'
import { checkConfigRecord } from '../validate.js'
import { CONFIG_RANGE, CONFIG_SEQ_KEY, configKey, encodeU64, parseConfigKey } from './keys.js'
import type { SharedStorage } from './shared-storage.js'

type Watcher = (record: ConfigRecord) => void

class PutJob implements CommitJob<BatchOp[]> {
  readonly size = 1
  readonly #storage: SharedStorage
  readonly #key: Buffer
  readonly #json: string | null
  readonly #publish: () => void

  constructor(storage: SharedStorage, key: Buffer, json: string | null, publish: () => void) {
    this.#storage = storage
    this.#key = key
    this.#json = json
    this.#publish = publish
  }

  stage(ops: BatchOp[]): void {
    if (this.#json === null) {
      ops.push({ type: 'del', key: this.#key })
      return
    }
    // a failed batch leaves a gap in sequence numbers; only their order matters
    const seq = ++this.#storage.configSeq
    ops.push({ type: 'put', key: this.#key, value: encodeConfigV1(seq, this.#json) })
    ops.push({ type: 'put', key: CONFIG_SEQ_KEY, value: encodeU64(seq) })
  }

  commit(): void {
    this.#publish()
  }

  abort(): void {}
}

/**
 * @example
 * const config = new EmbeddedConfigLog(log)
 * for (const record of await config.load()) apply(record)
 * config.watch(apply)
 * await config.put({ kind: 'site', id: 'example.com', value: { timezone: 'UTC' } })
 */
export class EmbeddedConfigLog implements ConfigLog {
  readonly #storage: SharedStorage
  readonly #watchers = new Set<Watcher>()
  readonly #inFlight = new Set<Promise<void>>()
  #closed = false

  constructor(log: EmbeddedLog) {
    this.#storage = log.storage
  }

  /** Every live record, in the order of its latest write. */
  async load(): Promise<ConfigRecord[]> {
    const entries = await this.#storage.db.read((db) => db.iterator(CONFIG_RANGE).all())
    const live = entries.map(([key, raw]) => {
      const { seq, value } = decodeConfigV1(raw)
      return { seq, record: { ...parseConfigKey(key), value } }
    })
    return live.sort((a, b) => a.seq - b.seq).map((entry) => entry.record)
  }

  /**
   * Writes durably, then runs every watcher with the record as a reload would return it (a JSON
   * copy), then resolves. A watcher that throws rejects this put, though the write stands.
   */
  put(record: ConfigRecord): Promise<void> {
    if (this.#closed) return Promise.reject(new LogError('LOG_CLOSED'))
    let json: string | null
    try {
      json = checkConfigRecord(record)
    } catch (err) {
      return Promise.reject(err)
    }
    const { kind, id } = record
    const publish = (): void => {
      const copy: ConfigRecord = { kind, id, value: json === null ? null : JSON.parse(json) }
      for (const watcher of this.#watchers) watcher(copy)
    }
    const done = this.#storage.submit(new PutJob(this.#storage, configKey(kind, id), json, publish))
    const tracked = done.catch(() => undefined).finally(() => this.#inFlight.delete(tracked))
    this.#inFlight.add(tracked)
    return done
  }

  watch(handler: Watcher): void {
    this.#watchers.add(handler)
  }

  /** One process writes and applies every record before its put resolves: always in sync. */
  async sync(): Promise<void> {}

  /** Refuses further puts and waits for this view's own puts; the database belongs to the log. */
  async close(): Promise<void> {
    this.#closed = true
    await Promise.all(this.#inFlight)
    this.#watchers.clear()
  }
}
