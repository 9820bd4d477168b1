import t from 'tap'
import { type BatchOp, type CommitJob, CommitQueue } from './commit-queue.js'

/** A job that stages `size` puts and logs what happens to it. */
function job(name: string, size: number, events: string[]): CommitJob<BatchOp[]> {
  return {
    size,
    stage: (ops: BatchOp[]) => {
      for (let i = 0; i < size; i++) ops.push({ type: 'put', key: Buffer.from(`${name}.${i}`), value: Buffer.alloc(0) })
      events.push(`stage ${name}`)
    },
    commit: () => void events.push(`commit ${name}`),
    abort: () => void events.push(`abort ${name}`),
  }
}

/** A writer whose writes complete when the test says so. */
function manualWriter() {
  const writes: Array<{ keys: string[]; done: () => void; fail: (err: Error) => void }> = []
  let inFlight = 0
  let maxInFlight = 0
  const write = (ops: BatchOp[]) =>
    new Promise<void>((resolve, reject) => {
      maxInFlight = Math.max(maxInFlight, ++inFlight)
      const settle = () => void inFlight--
      writes.push({
        keys: ops.map((op) => op.key.toString()),
        done: () => (settle(), resolve()),
        fail: (err) => (settle(), reject(err)),
      })
    })
  return { write, writes, maxInFlight: () => maxInFlight }
}

const tick = () => new Promise((resolve) => setImmediate(resolve))

t.test('jobs queued during a write go out together as the next batch', async (t) => {
  const events: string[] = []
  const w = manualWriter()
  const queue = new CommitQueue<BatchOp[]>(() => [], w.write, 1000)
  const first = queue.submit(job('a', 1, events))
  const secondAndThird = [queue.submit(job('b', 2, events))]
  await tick()
  t.equal(w.writes.length, 1, 'jobs of one tick share a batch')
  t.same(w.writes[0].keys, ['a.0', 'b.0', 'b.1'])
  secondAndThird.push(queue.submit(job('c', 1, events)), queue.submit(job('d', 3, events)))
  t.equal(queue.pending, 7, 'pending counts queued and in-flight records')
  await tick()
  t.equal(w.writes.length, 1, 'no second write while one is in flight')
  w.writes[0].done()
  await Promise.all([first, secondAndThird[0]])
  await tick()
  t.equal(w.writes.length, 2)
  t.same(w.writes[1].keys, ['c.0', 'd.0', 'd.1', 'd.2'])
  w.writes[1].done()
  await Promise.all(secondAndThird)
  await queue.drain()
  t.equal(queue.pending, 0)
  t.equal(w.maxInFlight(), 1)
  t.same(events, ['stage a', 'stage b', 'commit a', 'commit b', 'stage c', 'stage d', 'commit c', 'commit d'])
})

t.test('a batch holds at most maxRecords records, but one big job still goes', async (t) => {
  const events: string[] = []
  const sizes: number[] = []
  const queue = new CommitQueue<BatchOp[]>(() => [], async (ops) => void sizes.push(ops.length), 10)
  await Promise.all([4, 4, 4, 25, 1, 9].map((n, i) => queue.submit(job(`j${i}`, n, events))))
  t.same(sizes, [8, 4, 25, 10])
})

t.test('a failed write rejects every job in it, aborts in reverse, and the next write heals', async (t) => {
  const events: string[] = []
  const w = manualWriter()
  const queue = new CommitQueue<BatchOp[]>(() => [], w.write, 1000)
  const failing = [queue.submit(job('a', 1, events)), queue.submit(job('b', 1, events))]
  await tick()
  const later = queue.submit(job('c', 1, events))
  w.writes[0].fail(new Error('disk full'))
  const outcomes = await Promise.allSettled(failing)
  for (const outcome of outcomes) {
    t.equal(outcome.status, 'rejected')
    if (outcome.status === 'rejected') {
      t.match(outcome.reason, { code: 'LOG_WRITE_FAILED', canRetry: true })
      t.match(outcome.reason.cause, { message: 'disk full' })
    }
  }
  await tick()
  w.writes[1].done()
  await later
  t.same(events, ['stage a', 'stage b', 'abort b', 'abort a', 'stage c', 'commit c'])
})

t.test('drain waits for queued and in-flight jobs', async (t) => {
  const events: string[] = []
  const w = manualWriter()
  const queue = new CommitQueue<BatchOp[]>(() => [], w.write, 1000)
  await queue.drain()
  void queue.submit(job('a', 1, events))
  let drained = false
  const draining = queue.drain().then(() => (drained = true))
  await tick()
  t.equal(drained, false)
  w.writes[0].done()
  await draining
  t.same(events, ['stage a', 'commit a'])
})

t.test('a job whose stage throws fails its whole batch and nothing is written', async (t) => {
  const events: string[] = []
  const writes: number[] = []
  const queue = new CommitQueue<BatchOp[]>(() => [], async (ops) => void writes.push(ops.length), 1000)
  const broken: CommitJob<BatchOp[]> = { ...job('x', 1, events), stage: () => { throw new Error('bug') } }
  const results = await Promise.allSettled([queue.submit(job('a', 1, events)), queue.submit(broken)])
  t.same(results.map((r) => r.status), ['rejected', 'rejected'])
  t.same(writes, [])
  t.same(events, ['stage a', 'abort x', 'abort a'])
})

