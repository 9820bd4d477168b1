import t, { type Test } from 'tap'
import { tempConfigLog as embeddedConfig } from '../../test/helpers/config-log.js'
import { LogError, type ConfigLog, type ConfigRecord } from '../log/index.js'
import type { Goal } from '../schema/index.js'
import { Catalog } from './index.js'
import { goalIdentity } from './goal-identity.js'

/**
 * A compacted topic several nodes write, with Kafka's semantics: one log order; each node applies
 * every record in that order, at its own pace; a put resolves once the writer's own view applied it.
 */
class SharedTopic {
  readonly records: ConfigRecord[] = []
  readonly #views = new Set<() => void>()

  node(): ConfigLog {
    // the nodes' closures below read the one shared record list
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const topic = this
    const watchers: Array<(r: ConfigRecord) => void> = []
    const applied: Array<() => void> = []
    let position = 0
    let pumping = false
    const pump = async () => {
      if (pumping) return
      pumping = true
      while (position < topic.records.length) {
        // each node lags by its own few turns of the event loop
        for (let i = Math.floor(Math.random() * 4); i > 0; i--) await new Promise((resolve) => setImmediate(resolve))
        const record = structuredClone(topic.records[position])
        for (const w of watchers) w(record)
        applied[position]?.()
        position++
      }
      pumping = false
    }
    this.#views.add(() => void pump())
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- the type checker needs it
    return {
      async load() {
        position = topic.records.length
        const latest = new Map<string, ConfigRecord>()
        for (const r of topic.records) {
          latest.delete(`${r.kind}/${r.id}`)
          latest.set(`${r.kind}/${r.id}`, r)
        }
        return [...latest.values()].filter((r) => r.value !== null).map((r) => structuredClone(r))
      },
      put(record) {
        const at = topic.records.push(structuredClone(record)) - 1
        const done = new Promise<void>((resolve) => (applied[at] = resolve))
        for (const wake of topic.#views) wake()
        return done
      },
      watch(handler) {
        watchers.push(handler)
      },
      async sync() {},
      async close() {},
    } as ConfigLog
  }
}

const goalFor = (id: string, match_path = '/pricing'): Goal =>
  ({ id, site_id: 's', name: `Visit ${match_path}`, goal_type: 'pageview', match_path, created_at: new Date().toISOString() })

/** Eight concurrent creations of one goal spread over `catalogs`; returns each one's answer. */
function createConcurrently(catalogs: Catalog[], n = 8): Promise<Array<{ id: string; holder: string | null }>> {
  return Promise.all(Array.from({ length: n }, async (_, i) => {
    const catalog = catalogs[i % catalogs.length]
    const goal = goalFor(`g${i}`)
    const holder = await catalog.createUnique('goal-key', goalIdentity(goal), goal.id, () => catalog.put('goal', goal.id, goal))
    return { id: goal.id, holder }
  }))
}

function oneWinner(t: Test, answers: Array<{ id: string; holder: string | null }>, catalogs: Catalog[]): void {
  const winners = answers.filter((a) => a.holder === null)
  t.equal(winners.length, 1, `exactly one creation wins (${answers.map((a) => a.holder ?? 'won').join(', ')})`)
  const winner = winners[0]?.id
  t.same(answers.filter((a) => a.holder !== null).map((a) => a.holder), Array(answers.length - 1).fill(winner), 'every loser is told the winner')
  catalogs.forEach((c, i) => t.same(c.goalsOf('s').map((g) => g.id), [winner], `node ${i} lists the one goal`))
}

t.test('two catalogs on one config log: concurrent identical creations, one winner', async (t) => {
  const config = await embeddedConfig(t)
  const catalogs = [new Catalog(config), new Catalog(config)]
  for (const c of catalogs) await c.load()
  oneWinner(t, await createConcurrently(catalogs), catalogs)
})

t.test('three nodes applying a shared topic at their own pace agree on one winner', async (t) => {
  for (let round = 0; round < 20; round++) {
    const topic = new SharedTopic()
    const catalogs = [new Catalog(topic.node()), new Catalog(topic.node()), new Catalog(topic.node())]
    for (const c of catalogs) await c.load()
    const answers = await createConcurrently(catalogs)
    const winners = answers.filter((a) => a.holder === null)
    if (winners.length !== 1) return oneWinner(t, answers, catalogs)
    // the other nodes may still be applying the last records
    const holders = () => catalogs.map((c) => c.holder('goal-key', 's|pageview|/pricing'))
    const deadline = Date.now() + 2000
    while (holders().some((h) => h !== winners[0].id) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 1))
    if (holders().some((h) => h !== winners[0].id)) return void t.fail(`round ${round}: holders ${holders()}`)
  }
  t.pass('20 rounds of 8 creations over 3 nodes: one winner each, every node agrees')
})

t.test('a deleted goal frees its identity, also after a reload', async (t) => {
  const config = await embeddedConfig(t)
  const catalog = new Catalog(config)
  await catalog.load()
  const first = goalFor('a')
  t.equal(await catalog.createUnique('goal-key', goalIdentity(first), 'a', () => catalog.put('goal', 'a', first)), null)
  t.equal(await catalog.createUnique('goal-key', goalIdentity(first), 'b', async () => t.fail('a loser writes nothing')), 'a')
  await catalog.put('goal', 'a', null)
  const again = goalFor('c')
  t.equal(await catalog.createUnique('goal-key', goalIdentity(again), 'c', () => catalog.put('goal', 'c', again)), null, 'free after the delete')
  await catalog.put('goal', 'c', null)
  const reloaded = new Catalog(config)
  await reloaded.load()
  t.equal(reloaded.holder('goal-key', goalIdentity(again)), undefined, 'no claim survives the delete in the compacted log')
})

t.test('at load the live entity holds its identity, even when compaction kept a loser\'s claim', async (t) => {
  const topic = new SharedTopic()
  const writer = new Catalog(topic.node())
  await writer.load()
  const winner = goalFor('w')
  t.equal(await writer.createUnique('goal-key', goalIdentity(winner), 'w', () => writer.put('goal', 'w', winner)), null)
  t.equal(await writer.createUnique('goal-key', goalIdentity(winner), 'loser', async () => undefined), 'w')
  // the loser's claim was written: force it, as a second node would have
  await topic.node().put({ kind: 'claim', id: `goal-key:${goalIdentity(winner)}`, value: { owner: 'loser' } })
  const fresh = new Catalog(topic.node())
  await fresh.load()
  t.equal(fresh.holder('goal-key', goalIdentity(winner)), 'w')
  t.same(fresh.goalsOf('s').map((g) => g.id), ['w'])
})

t.test('a write that fails gives the claim up', async (t) => {
  const config = await embeddedConfig(t)
  const catalog = new Catalog(config)
  await catalog.load()
  const goal = goalFor('a')
  await t.rejects(catalog.createUnique('goal-key', goalIdentity(goal), 'a', async () => { throw new Error('disk full') }), /disk full/)
  t.equal(catalog.holder('goal-key', goalIdentity(goal)), undefined)
  t.equal(await catalog.createUnique('goal-key', goalIdentity(goal), 'b', () => catalog.put('goal', 'b', { ...goal, id: 'b' })), null)
})

t.test('sites by id and users by lower-cased e-mail are unique the same way', async (t) => {
  const config = await embeddedConfig(t)
  const catalogs = [new Catalog(config), new Catalog(config)]
  for (const c of catalogs) await c.load()
  const sites = await Promise.all(Array.from({ length: 6 }, (_, i) => {
    const c = catalogs[i % 2]
    return c.createUnique('site', 'shop', `token-${i}`, () => c.put('site', 'shop', { site_id: 'shop', domain: null, timezone: 'UTC', created_at: `${i}` }))
  }))
  t.equal(sites.filter((s) => s === null).length, 1, 'one site creation wins')
  const emails = ['Lim@Example.com', 'lim@example.com', ' LIM@example.COM ']
  const users = await Promise.all(emails.map((email, i) => {
    const c = catalogs[i % 2]
    const user = { id: `u${i}`, email: email.trim(), sites: [], password: 'x', created_at: `${i}` }
    return c.createUnique('email', email.trim().toLowerCase(), user.id, () => c.put('user', user.id, user))
  }))
  t.equal(users.filter((u) => u === null).length, 1, 'one user per e-mail, whatever its case')
  t.equal(catalogs[1].userByEmail(' lim@EXAMPLE.com')?.id, `u${users.indexOf(null)}`, 'looked up by the normalized e-mail')
})

t.test('goals by site in creation order; a stored pattern that does not parse is reported', async (t) => {
  const config = await embeddedConfig(t)
  const problems: string[] = []
  const catalog = new Catalog(config, { onProblem: (message) => void problems.push(message) })
  await catalog.load()
  await catalog.put('goal', 'a', goalFor('a', '/a'))
  await catalog.put('goal', 'b', { ...goalFor('b', '/b'), site_id: 'other' })
  await catalog.put('goal', 'c', goalFor('c', '/c'))
  await catalog.put('goal', 'a', { ...goalFor('a', '/a'), name: 'renamed' })
  t.same(catalog.goalsOf('s').map((g) => g.id), ['a', 'c'], 'a rename keeps the place')
  t.same(catalog.goalsOf('other').map((g) => g.id), ['b'])
  await catalog.put('goal', 'a', null)
  t.same(catalog.goalsOf('s').map((g) => g.id), ['c'])
  t.same(catalog.goalsOf('none'), [])
  await catalog.put('goal', 'bad', goalFor('bad', 'no-slash'))
  t.match(problems, [/goal bad .*match_path.*start with "\/"/], 'the unparsable pattern is reported, with its goal')
})

t.test('a claim stored but not read back (a Kafka view that cannot read its topic) is withdrawn, and nothing is created', async (t) => {
  const config = await embeddedConfig(t)
  let readBack = false
  const view: ConfigLog = {
    load: () => config.load(),
    watch: (handler) => config.watch(handler),
    sync: () => config.sync(),
    close: () => config.close(),
    async put(record) {
      await config.put(record)
      if (!readBack && record.kind === 'claim' && record.value !== null) throw new LogError('LOG_NOT_APPLIED', `config claim/${record.id} is stored, but reading fails`)
    },
  }
  const catalog = new Catalog(view)
  await catalog.load()
  const goal = goalFor('a')
  await t.rejects(catalog.createUnique('goal-key', goalIdentity(goal), 'a', async () => t.fail('nothing is written')), {
    code: 'LOG_UNAVAILABLE', message: /goal-key .* was not created: .*is stored, but reading fails; its claim was withdrawn/,
  })
  t.equal(catalog.holder('goal-key', goalIdentity(goal)), undefined, 'no claim holds the identity')
  readBack = true
  t.equal(await catalog.createUnique('goal-key', goalIdentity(goal), 'b', () => catalog.put('goal', 'b', goal)), null, 'a later attempt creates it')
})
