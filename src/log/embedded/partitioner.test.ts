import t from 'tap'
import { fnv1a32, partitionOf } from './partitioner.js'

/** The plain definition over the bytes Node produces, to check the allocation-free loop. */
function reference(text: string): number {
  let hash = 0x811c9dc5
  for (const byte of Buffer.from(text, 'utf8')) hash = Math.imul(hash ^ byte, 0x01000193)
  return hash >>> 0
}

t.test('published FNV-1a 32 test vectors', async (t) => {
  t.equal(fnv1a32(''), 0x811c9dc5)
  t.equal(fnv1a32('a'), 0xe40c292c)
  t.equal(fnv1a32('foobar'), 0xbf9cf968)
})

t.test('hashes the UTF-8 bytes, surrogates included', async (t) => {
  const samples = ['é', '日本語', '😀 grin', 'a\ud800b', '\udc00x', 'end\ud83d', 'é😀日\u0080\u07ff\u0800\uffff']
  for (let i = 0; i < 500; i++) {
    let s = ''
    for (let j = 0; j < 1 + (i % 12); j++) s += String.fromCharCode(Math.floor(Math.random() * 0x10000))
    samples.push(s)
  }
  const wrong = samples.filter((s) => fnv1a32(s) !== reference(s))
  t.same(wrong, [], 'agrees with hashing Buffer.from(text)')
})

t.test('partitionOf spreads site:session keys evenly', async (t) => {
  const counts = new Array(8).fill(0)
  for (let i = 0; i < 16_000; i++) counts[partitionOf(`site${i % 13}:sess-${i}`, 8)]++
  for (const count of counts) t.ok(count > 1600 && count < 2400, `partition holds ${count} of 16000`)
})
