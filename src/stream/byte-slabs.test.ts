import t from 'tap'
import { ByteSlabs, MAX_SLAB_BYTES } from './byte-slabs.js'

t.test('blocks fit their size, never overlap, and are reused once freed', async (t) => {
  const slabs = new ByteSlabs()
  const refs: number[] = []
  for (let i = 0; i < 3000; i++) {
    const size = 1 + ((i * 37) % 700)
    const ref = slabs.alloc(size)
    t.ok(slabs.size(ref) >= size && slabs.size(ref) < 2 * size + 16) || t.bailout(`size ${size} → ${slabs.size(ref)}`)
    t.equal(slabs.offset(ref) % 16, 0) || t.bailout('aligned')
    // fill with a pattern unique to the block
    slabs.bytes(ref).fill(i & 0xff, slabs.offset(ref), slabs.offset(ref) + slabs.size(ref))
    refs.push(ref)
  }
  t.equal(new Set(refs).size, refs.length, 'distinct references')
  let intact = true
  refs.forEach((ref, i) => {
    const b = slabs.bytes(ref)
    for (let k = slabs.offset(ref); k < slabs.offset(ref) + slabs.size(ref); k++) if (b[k] !== (i & 0xff)) intact = false
  })
  t.ok(intact, 'no block was written over by another')
  t.equal(slabs.liveBytes, refs.reduce((n, r) => n + slabs.size(r), 0))
  const chunks = slabs.memoryBytes()
  for (const ref of refs) slabs.free(ref)
  t.equal(slabs.liveBytes, 0)
  for (let i = 0; i < 3000; i++) slabs.alloc(1 + ((i * 37) % 700))
  t.equal(slabs.memoryBytes(), chunks, 'the same blocks served again: no new chunk')
})

t.test('int32 words and bytes view the same block', async (t) => {
  const slabs = new ByteSlabs()
  const a = slabs.alloc(16)
  const b = slabs.alloc(16)
  slabs.words(a)[slabs.offset(a) >> 2] = 0x01020304
  t.equal(slabs.bytes(a)[slabs.offset(a)], 0x04, 'little-endian word, first byte')
  slabs.words(b)[(slabs.offset(b) >> 2) + 3] = -1
  t.equal(slabs.words(a)[slabs.offset(a) >> 2], 0x01020304, 'a neighbour is untouched')
})

t.test('a record over the largest class is refused', async (t) => {
  const slabs = new ByteSlabs()
  t.equal(slabs.size(slabs.alloc(MAX_SLAB_BYTES)), MAX_SLAB_BYTES)
  t.throws(() => slabs.alloc(MAX_SLAB_BYTES + 1), /at most 8192 bytes/)
})
