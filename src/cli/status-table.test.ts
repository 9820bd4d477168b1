import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { buildProgram } from './program.js'
import { formatStatus } from './status-table.js'
import type { StatusAnswer } from '../schema/index.js'

const ANSWER: StatusAnswer = {
  node: 'http://10.0.0.1:8080',
  log: 'kafka',
  members: [
    { url: 'http://10.0.0.1:8080', partitions: [0, 2], self: true },
    { url: 'http://10.0.0.2:8080', partitions: [1, 3], self: false },
  ],
  partitions: [
    { partition: 1, owner: 'http://10.0.0.2:8080', offset: 1000, end: 1000, lag: 0, hot_sessions: 20, goals: 3, conversions: 40, state_bytes: 2048 },
    { partition: 0, owner: 'http://10.0.0.1:8080', offset: 123, end: 130, lag: 7, hot_sessions: 10, goals: 3, conversions: 42, state_bytes: 12345 },
    { partition: 2, owner: 'http://10.0.0.1:8080', offset: 5000, end: 5100, lag: 100, hot_sessions: 1, goals: 3, conversions: 0, state_bytes: 1024 },
    { partition: 3, owner: '', offset: 0, end: 12, lag: 12, hot_sessions: 0, goals: 0, conversions: 0, state_bytes: 0 },
  ],
}

t.test('a line for the group, a row per node with its sums, a row per partition', async (t) => {
  const lines = formatStatus(ANSWER).split('\n')
  t.equal(lines[0], 'http://10.0.0.1:8080: kafka log, 2 members, 4 partitions, lag 119, state 15.1 KiB')
  t.match(lines[2], /^node\s+partitions\s+lag\s+hot sessions\s+conversions\s+state$/)
  const row = (start: string) => lines.find((l) => l.startsWith(start))!.split(/\s{2,}/)
  t.same(row('http://10.0.0.1:8080 (this node)'), ['http://10.0.0.1:8080 (this node)', '0,2', '107', '11', '42', '13.1 KiB'])
  t.same(row('http://10.0.0.2:8080'), ['http://10.0.0.2:8080', '1,3', '0', '20', '40', '2.0 KiB'])
  t.same(row('(unassigned)'), ['(unassigned)', '3', '12', '0', '0', '0 B'], 'a partition nobody owns yet')
  const partitions = lines.slice(lines.findIndex((l) => l.startsWith('partition')) + 2)
  t.same(partitions.map((l) => l.split(/\s{2,}/)[0]), ['0', '1', '2', '3'], 'partitions in order')
  t.same(partitions[0].split(/\s{2,}/), ['0', 'http://10.0.0.1:8080', '123', '130', '7', '10', '3', '42', '12.1 KiB'])
})

t.test('a stopped partition gets a line of its own: why, where, and how far behind', async (t) => {
  const stopped = { reason: 'a record batch cannot be read (offsets 5000-5019, gzip): incorrect header check', topic: 'goalpost.events', partition: 2, offset: 5000, since: '2026-11-25T08:40:00.000Z' }
  const answer = { ...ANSWER, partitions: ANSWER.partitions.map((p) => (p.partition === 2 ? { ...p, folding: 'stopped' as const, stopped } : { ...p, folding: 'running' as const, stopped: null })) }
  const lines = formatStatus(answer).split('\n')
  t.equal(lines.at(-1), 'partition 2 STOPPED since 2026-11-25T08:40:00.000Z at offset 5000 of goalpost.events, 100 behind: a record batch cannot be read (offsets 5000-5019, gzip): incorrect header check')
  t.equal(lines.filter((l) => l.includes('STOPPED')).length, 1)
  t.notMatch(formatStatus(ANSWER), /STOPPED/, 'nothing when all run')
})

/** A stand-in for GET /api/status, to check what the command prints; the real endpoint is tested with the service. */
async function fakeService(t: Test, answer: (auth: string | undefined) => { status: number; body: unknown }): Promise<string> {
  const server: Server = createServer((req, res) => {
    const a = req.url === '/api/status' ? answer(req.headers.authorization) : { status: 404, body: { error: 'not found' } }
    res.writeHead(a.status, { 'content-type': 'application/json' }).end(JSON.stringify(a.body))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** a port that was just free: nothing listens there */
async function closedPort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as AddressInfo
  await new Promise<void>((resolve) => probe.close(() => resolve()))
  return port
}

async function status(url: string, token: string) {
  let out = ''
  const program = buildProgram({ writeOut: (s) => (out += s), writeErr: () => {} })
  await program.parseAsync(['node', 'goalpost', 'status', '--url', url, '--token', token])
  return out
}

t.test('goalpost status prints the answer as tables, with the token sent', async (t) => {
  const url = await fakeService(t, (auth) => (auth === 'Bearer secret' ? { status: 200, body: ANSWER } : { status: 401, body: { error: 'authentication required' } }))
  t.equal(await status(url, 'secret'), `${formatStatus(ANSWER)}\n`)
  await t.rejects(status(url, 'wrong'), /GET \/api\/status answered 401 \(the token was refused\): authentication required/)
})

t.test('an answer of another shape is named, not printed as garbage', async (t) => {
  const url = await fakeService(t, () => ({ status: 200, body: { ...ANSWER, partitions: [{ partition: 0 }] } }))
  await t.rejects(status(url, 'x'), /GET \/api\/status answered an unexpected shape: partitions\.0\.owner is required/)
})

t.test('a server without the endpoint, and one that is not there', async (t) => {
  const url = await fakeService(t, () => ({ status: 404, body: { error: 'not found' } }))
  await t.rejects(status(url, 'x'), /has no GET \/api\/status/)
  await t.rejects(status(`http://127.0.0.1:${await closedPort()}`, 'x'), /GET http:\/\/127\.0\.0\.1:\d+\/api\/status: ECONNREFUSED/)
})
