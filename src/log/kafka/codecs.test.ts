import { randomBytes } from 'node:crypto'
import t from 'tap'
import xxh32 from 'lz4js/xxh32.js'
import snappy from 'snappyjs'
import { CODECS } from './codecs.js'
import { codecName } from './compression.js'
import { compressLz4Frame, decompressLz4Frame } from './lz4-frame.js'
import { compressSnappy, decompressSnappy } from './snappy-xerial.js'

/** event-like JSON: compressible, as a batch of events is */
const events = (n: number): Buffer =>
  Buffer.from(Array.from({ length: n }, (_, i) => JSON.stringify({ type: 'pageview', site_id: 'shop', session_id: `s${i % 97}`, path: `/p/${i % 13}`, ts: 1_790_000_000_000 + i })).join('\n'))

t.test('every codec gives back what it was given, small, large and incompressible', async (t) => {
  for (const [name, codec] of Object.entries(CODECS)) {
    for (const [what, input] of [['empty', Buffer.alloc(0)], ['events', events(3000)], ['random', randomBytes(200_000)], ['one byte', Buffer.from([7])]] as const) {
      const packed = await codec.compress(input)
      t.ok((await codec.decompress(packed)).equals(input), `${name}: ${what} (${input.length} → ${packed.length} bytes)`)
    }
    const big = events(3000)
    t.ok((await codec.compress(big)).length < big.length / 3, `${name} compresses events`)
  }
})

t.test("lz4: Kafka's frame — independent blocks, 64 KiB, a correct header checksum", async (t) => {
  const input = events(5000)
  t.ok(input.length > 3 * 65536, 'several blocks')
  const frame = compressLz4Frame(input)
  t.equal(frame.readUInt32LE(0), 0x184d2204, 'magic')
  t.equal(frame[4], 0x60, 'FLG: version 01, block independence, no checksums or content size')
  t.equal(frame[5], 0x40, 'BD: 64 KiB blocks')
  t.equal(frame[6], (xxh32.hash(0, frame, 4, 2) >>> 8) & 0xff, 'HC: xxh32 of the descriptor, second byte')
  // each block decodes alone: decoding the second block into an empty buffer needs nothing of the first
  const firstSize = frame.readUInt32LE(7) & 0x7fffffff
  const second = 7 + 4 + firstSize
  const secondSize = frame.readUInt32LE(second)
  const alone = Buffer.concat([frame.subarray(0, 7), frame.subarray(second, second + 4 + (secondSize & 0x7fffffff)), Buffer.alloc(4)])
  t.ok(decompressLz4Frame(alone).equals(input.subarray(65536, 2 * 65536)), 'the second block on its own is the second 64 KiB')
})

t.test('lz4: frames of other writers — content size, block and content checksums, stored blocks', async (t) => {
  const data = Buffer.from('hello kafka, hello lz4')
  const flg = 0x40 | 0x20 | 0x10 | 0x08 | 0x04
  const header = Buffer.alloc(4 + 2 + 8)
  header.writeUInt32LE(0x184d2204, 0)
  header[4] = flg
  header[5] = 0x70
  header.writeBigUInt64LE(BigInt(data.length), 6)
  const hc = Buffer.from([(xxh32.hash(0, header, 4, 10) >>> 8) & 0xff])
  const size = Buffer.alloc(4)
  size.writeUInt32LE((0x80000000 | data.length) >>> 0, 0)
  const frame = Buffer.concat([header, hc, size, data, Buffer.alloc(4, 1), Buffer.alloc(4), Buffer.alloc(4, 2)])
  t.ok(decompressLz4Frame(frame).equals(data))
  t.throws(() => decompressLz4Frame(Buffer.from('not a frame at all')), /not a readable LZ4 frame: no LZ4 frame magic/)
  t.throws(() => decompressLz4Frame(compressLz4Frame(events(100)).subarray(0, 20)), /not a readable LZ4 frame/)
})

t.test("snappy: xerial's framing written, and read with raw snappy too", async (t) => {
  const input = events(4000)
  const framed = compressSnappy(input)
  t.ok(framed.subarray(0, 8).equals(Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00])), 'xerial magic')
  t.equal(framed.readInt32BE(8), 1, 'version 1')
  t.equal(framed.readInt32BE(12), 1, 'compatible with 1')
  t.ok(decompressSnappy(framed).equals(input))
  const raw = snappy.compress(input)
  t.ok(decompressSnappy(raw).equals(input), 'one raw Snappy block, as librdkafka writes it')
  t.throws(() => decompressSnappy(Buffer.concat([framed.subarray(0, 16), Buffer.from([0, 0, 1, 0, 1, 2])])), /not readable Snappy/)
})

t.test('corrupt data is an error, never made-up bytes', async (t) => {
  for (const [name, codec] of Object.entries(CODECS)) {
    const packed = Buffer.from(await codec.compress(events(2000)))
    for (let i = 24; i < packed.length - 8; i += 7) packed[i] ^= 0x5a
    const out = await codec.decompress(packed).then((b) => b, (err: unknown) => err)
    t.ok(out instanceof Error || !(out as Buffer).equals(events(2000)), `${name}: ${out instanceof Error ? out.message : 'different bytes'}`)
  }
})

t.test('codec names by attributes', async (t) => {
  t.same([0, 1, 2, 3, 4, 0x13].map(codecName), ['none', 'gzip', 'snappy', 'lz4', 'zstd', 'lz4'])
  t.equal(codecName(7), 'unknown codec 7')
})
