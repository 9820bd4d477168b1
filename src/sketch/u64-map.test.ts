import t from 'tap'
import { U64Map, Words, hashPart } from './u64-map.js'

/** deterministic pseudo-random uint32s (xorshift32) */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1
  return () => {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    return x >>> 0
  }
}

t.test('grows and keeps every entry', async (t) => {
  const map = new U64Map()
  const next = rng(7)
  const ref = new Map<string, number>()
  const startBytes = map.memoryBytes()
  for (let i = 0; i < 100_000; i++) {
    const hi = next()
    const lo = next()
    const v = next()
    map.setMin(hi, lo, v)
    const k = `${hi}:${lo}`
    ref.set(k, Math.min(ref.get(k) ?? Infinity, v))
  }
  t.equal(map.size, ref.size)
  t.ok(map.memoryBytes() > startBytes, 'memory grew')
  t.ok(map.memoryBytes() / map.size < 40, `bytes per entry ${(map.memoryBytes() / map.size).toFixed(1)} < 40`)
  let bad = 0
  for (const [k, v] of ref) {
    const [hi, lo] = k.split(':').map(Number)
    if (map.get(hi, lo) !== v || !map.has(hi, lo)) bad++
  }
  t.equal(bad, 0, 'every key reads back its value')
  t.equal(map.get(1, 2), undefined)
  t.notOk(map.has(1, 2))
})

t.test('sequential keys (not hashes) spread fine', async (t) => {
  const map = new U64Map()
  for (let i = 0; i < 50_000; i++) map.set(0, i, i)
  for (let i = 0; i < 50_000; i++) map.set(i, 0, i)
  t.equal(map.size, 99_999, '(0, 0) was set twice')
  t.equal(map.get(0, 49_999), 49_999)
  t.equal(map.get(49_999, 0), 49_999)
})

t.test('setMin inserts or lowers, and says whether it changed', async (t) => {
  const map = new U64Map()
  t.equal(map.setMin(5, 6, 100), true, 'insert')
  t.equal(map.setMin(5, 6, 100), false, 'same value')
  t.equal(map.setMin(5, 6, 200), false, 'higher value')
  t.equal(map.get(5, 6), 100)
  t.equal(map.setMin(5, 6, 50), true, 'lower value')
  t.equal(map.get(5, 6), 50)
  t.equal(map.setMin(5, 6, 0), true, 'zero is a value like any other')
  t.equal(map.get(5, 6), 0)
  t.equal(map.size, 1)
  t.equal(map.set(5, 6, 0xffffffff), true)
  t.equal(map.set(5, 6, 0xffffffff), false)
  t.throws(() => map.setMin(1, 1, -1), RangeError)
  t.throws(() => map.set(1, 1, 2 ** 32), RangeError)
  t.throws(() => map.set(1, 1, 1.5), RangeError)
})

t.test('the key (0, 0) is an ordinary key', async (t) => {
  const map = new U64Map()
  t.equal(map.get(0, 0), undefined)
  t.notOk(map.has(0, 0))
  t.equal(map.setMin(0, 0, 9), true)
  t.ok(map.has(0, 0))
  t.equal(map.get(0, 0), 9)
  t.equal(map.setMin(0, 0, 10), false)
  t.equal(map.setMin(0, 0, 3), true)
  t.equal(map.size, 1)
  map.setMin(0, 1, 1)
  map.setMin(1, 0, 2)
  t.equal(map.size, 3)
  const seen: string[] = []
  map.forEach((hi, lo, v) => seen.push(`${hi},${lo}=${v}`))
  t.same(seen.sort(), ['0,0=3', '0,1=1', '1,0=2'])
  t.equal(map.some((hi, lo) => hi === 0 && lo === 0), true, 'some() sees it')
  const copy = U64Map.fromEntries(map.entries())
  t.equal(copy.get(0, 0), 3)
  t.equal(copy.size, 3)
})

t.test('forEach, some, entries and clear', async (t) => {
  const map = new U64Map(1000)
  const bytes = map.memoryBytes()
  for (let i = 1; i <= 1000; i++) map.set(i * 7919, i, i)
  t.equal(map.memoryBytes(), bytes, 'sized up front: no growth')
  let sum = 0
  let n = 0
  let mismatched = 0
  map.forEach((hi, lo, v) => {
    if (hi !== lo * 7919) mismatched++
    sum += v
    n++
  })
  t.equal(mismatched, 0)
  t.equal(n, 1000)
  t.equal(sum, (1000 * 1001) / 2)
  let visited = 0
  t.equal(map.some(() => ++visited === 10), true)
  t.equal(visited, 10, 'stops at the first true')
  t.equal(map.some(() => false), false)
  const packed = map.entries()
  t.equal(packed.length, 3000)
  const back = U64Map.fromEntries(packed)
  t.equal(back.size, 1000)
  for (let i = 1; i <= 1000; i += 97) t.equal(back.get(i * 7919, i), i)
  t.throws(() => U64Map.fromEntries(new Uint32Array(4)), RangeError)
  map.clear()
  t.equal(map.size, 0)
  t.equal(map.get(7919, 1), undefined)
})

t.test('delete removes a key and keeps every other one findable', async (t) => {
  // a small table with many collisions exercises the backward shift
  const m = new U64Map()
  const keys: [number, number][] = []
  for (let i = 1; i <= 2000; i++) keys.push([(i * 7919) >>> 0, i % 3])
  for (const [hi, lo] of keys) m.setMin(hi, lo, hi % 97)
  t.notOk(m.delete(123456789, 5), 'an absent key')
  const gone = new Set<number>()
  for (let i = 0; i < keys.length; i += 3) {
    t.ok(m.delete(keys[i][0], keys[i][1]))
    gone.add(i)
  }
  t.notOk(m.delete(keys[0][0], keys[0][1]), 'twice')
  t.equal(m.size, keys.length - gone.size)
  let wrong = 0
  keys.forEach(([hi, lo], i) => {
    if (gone.has(i) ? m.has(hi, lo) : m.get(hi, lo) !== hi % 97) wrong++
  })
  t.equal(wrong, 0, 'every other key keeps its value')
  m.setMin(0, 0, 1)
  t.ok(m.delete(0, 0))
  t.notOk(m.has(0, 0))
})

t.test('a clone keeps the entries it had; entriesInto packs slot ranges that add up to entries()', async (t) => {
  const next = rng(11)
  const map = new U64Map()
  map.setMin(0, 0, 3)
  for (let i = 0; i < 5000; i++) map.setMin(next(), next(), next() % 100)
  const clone = map.clone()
  const before = map.entries()
  for (let i = 0; i < 5000; i++) map.setMin(next(), next(), 0)
  t.same(clone.entries(), before, 'the clone did not see the later entries')
  t.equal(clone.size, 5001)
  const out = new Uint32Array(clone.size * 3)
  let o = 0
  for (let from = 0; from < clone.slots; from += 777) o = clone.entriesInto(out, o, from, from + 777)
  t.equal(o, out.length)
  t.same(out, before)
})

t.test('partInto: the parts of the hash space visit every entry once, in maps of any capacity', async (t) => {
  const next = rng(11)
  const keys: [number, number][] = [[0, 0], [0, 1], [1, 0]]
  for (let i = 0; i < 5_000; i++) keys.push([next(), next()])
  // a tiny map (fewer slots than parts), a full one (long probe runs that wrap) and a roomy one
  const maps = [new U64Map(), new U64Map(), new U64Map(50_000)]
  keys.slice(0, 5).forEach(([hi, lo], i) => maps[0].setMin(hi, lo, i))
  keys.forEach(([hi, lo], i) => {
    maps[1].setMin(hi, lo, i)
    maps[2].setMin(hi, lo, i)
  })
  for (const bits of [0, 1, 3, 8, 12]) {
    for (const [m, map] of maps.entries()) {
      const seen = new Map<string, number>()
      let misplaced = 0
      for (let part = 0; part < 2 ** bits; part++) {
        const out = new Words()
        map.partInto(part, bits, out, 9)
        for (let i = 0; i < out.length; i += 4) {
          const [hi, lo, v, tag] = out.data.subarray(i, i + 4)
          const k = `${hi}:${lo}`
          seen.set(k, (seen.get(k) ?? 0) + 1)
          if (hashPart(hi, lo, bits) !== part || map.get(hi, lo) !== v || tag !== 9) misplaced++
        }
      }
      t.equal(seen.size, map.size, `bits ${bits}, map ${m}: every entry visited`)
      t.ok([...seen.values()].every((n) => n === 1), `bits ${bits}, map ${m}: each once`)
      t.equal(misplaced, 0, `bits ${bits}, map ${m}: in its own part, with its value and tag`)
    }
  }
  // the same part of two maps of different capacities holds the same keys
  const keysOf = (map: U64Map): string[] => {
    const out = new Words()
    map.partInto(5, 4, out, 0)
    const keys: string[] = []
    for (let i = 0; i < out.length; i += 4) keys.push(`${out.data[i]}:${out.data[i + 1]}`)
    return keys
  }
  const a = keysOf(maps[1])
  const b = keysOf(maps[2])
  t.ok(a.length > 0)
  t.same(a.sort(), b.sort(), 'capacities agree on a part')
})

t.test('a map for one part homes its keys by the bits after the part\'s', async (t) => {
  const next = rng(5)
  const bits = 8
  const keys: [number, number][] = []
  while (keys.length < 3_000) {
    const hi = next()
    const lo = next()
    if (hashPart(hi, lo, bits) === 77) keys.push([hi, lo])
  }
  const map = new U64Map(0, bits)
  keys.forEach(([hi, lo], i) => map.setMin(hi, lo, i))
  t.equal(map.size, keys.length)
  t.ok(keys.every(([hi, lo], i) => map.get(hi, lo) === i), 'every key found with its value')
  keys.slice(0, 1_000).forEach(([hi, lo]) => map.delete(hi, lo))
  t.ok(keys.every(([hi, lo], i) => (i < 1_000 ? !map.has(hi, lo) : map.get(hi, lo) === i)), 'deletes keep the rest findable')
  t.throws(() => map.partInto(0, 1, new Words(), 0), /one part already/)
})

t.test('a packed map reads as before, lowers in place, and unpacks for any other write', async (t) => {
  const next = rng(21)
  const ref = new Map<string, number>()
  const map = new U64Map()
  map.setMin(0, 0, 5)
  ref.set('0:0', 5)
  for (let i = 0; i < 20_000; i++) {
    const hi = next()
    const lo = next()
    map.setMin(hi, lo, i)
    if (!ref.has(`${hi}:${lo}`)) ref.set(`${hi}:${lo}`, i)
  }
  const tableBytes = map.memoryBytes()
  const before = map.entries()
  map.pack()
  t.ok(map.packed)
  t.ok(map.memoryBytes() < tableBytes * 0.75, `smaller packed: ${(map.memoryBytes() / map.size).toFixed(1)} B per entry against ${(tableBytes / map.size).toFixed(1)}`)
  t.equal(map.size, ref.size)
  const asStrings = (packed: Uint32Array) => {
    const out: string[] = []
    for (let i = 0; i < packed.length; i += 3) out.push(`${packed[i]}:${packed[i + 1]}=${packed[i + 2]}`)
    return out.sort()
  }
  t.same(asStrings(map.entries()), asStrings(before), 'the same entries')
  let wrong = 0
  for (const [k, v] of ref) {
    const [hi, lo] = k.split(':').map(Number)
    if (map.get(hi, lo) !== v || !map.has(hi, lo)) wrong++
  }
  t.equal(wrong, 0, 'every key found with its value')
  t.notOk(map.has(1, 2), 'an absent key is absent')
  const seen = new Set<string>()
  map.forEach((hi, lo) => seen.add(`${hi}:${lo}`))
  t.equal(seen.size, ref.size, 'forEach visits each entry')
  // slot ranges of a packed map are ranges of its entries
  const packed = new Uint32Array(map.size * 3)
  let o = 0
  for (let from = 0; from < map.slots; from += 777) o = map.entriesInto(packed, o, from, from + 777)
  t.equal(o, packed.length, 'entriesInto by ranges adds up')
  t.same(asStrings(packed), asStrings(before))
  for (const bits of [0, 1, 6, 12, 16]) {
    let visited = 0
    let misplaced = 0
    const out = new Words()
    for (let part = 0; part < 2 ** bits; part++) {
      out.length = 0
      map.partInto(part, bits, out, 0)
      for (let i = 0; i < out.length; i += 4) if (hashPart(out.data[i], out.data[i + 1], bits) !== part) misplaced++
      visited += out.length / 4
    }
    t.equal(visited, map.size, `bits ${bits}: partInto visits every entry`)
    t.equal(misplaced, 0, `bits ${bits}: each in its part`)
  }

  const [hi, lo] = [...ref.keys()][10].split(':').map(Number)
  const copy = map.clone()
  t.notOk(map.setMin(hi, lo, ref.get(`${hi}:${lo}`)! + 1), 'a higher value changes nothing')
  t.ok(map.setMin(hi, lo, 0), 'a lower value is written')
  t.ok(map.packed, 'in place, still packed')
  t.equal(map.get(hi, lo), 0)
  t.equal(copy.get(hi, lo), ref.get(`${hi}:${lo}`), 'a clone taken before does not see it')
  t.notOk(map.set(hi, lo, 0), 'set to the same value: unchanged')

  t.ok(map.setMin(3, 4, 9), 'a new key is written')
  t.notOk(map.packed, 'after unpacking')
  t.equal(map.size, ref.size + 1)
  t.equal(map.get(hi, lo), 0)
  t.equal(map.get(3, 4), 9)
  map.pack()
  t.ok(map.delete(3, 4), 'delete unpacks and removes')
  t.notOk(map.packed)
  t.equal(map.size, ref.size)
  t.equal(copy.size, ref.size)
  let copyWrong = 0
  for (const [k, v] of ref) {
    const [h, l] = k.split(':').map(Number)
    if (h !== hi || l !== lo) copyWrong += copy.get(h, l) === v ? 0 : 1
  }
  t.equal(copyWrong, 0, 'the clone keeps every entry')

  const empty = new U64Map()
  empty.pack()
  t.equal(empty.size, 0)
  t.notOk(empty.has(1, 1))
  t.ok(empty.setMin(1, 1, 1))
  t.equal(empty.get(1, 1), 1)
  const partMap = new U64Map(0, 4)
  partMap.pack()
  t.notOk(partMap.packed, 'a map homed for one part stays a table')
  copy.clear()
  t.equal(copy.size, 0, 'clear empties a packed map')
  t.ok(copy.setMin(5, 6, 7) && copy.get(5, 6) === 7)
})

t.test('a key given as int32 halves is the key given as uint32 halves, in a table and packed', async (t) => {
  const next = rng(77)
  const keys: [number, number][] = []
  // half the halves past 2^31, where the two spellings differ
  for (let i = 0; i < 3000; i++) keys.push([(next() | (i & 1 ? 0x80000000 : 0)) >>> 0, next()])
  const m = new U64Map()
  keys.forEach(([hi, lo], i) => (i % 2 ? m.set(hi | 0, lo | 0, i) : m.set(hi, lo, i)))
  t.equal(m.size, keys.length)
  let wrong = 0
  keys.forEach(([hi, lo], i) => {
    if (m.get(hi, lo) !== i || m.get(hi | 0, lo | 0) !== i || !m.has(hi | 0, lo) || !m.has(hi, lo | 0)) wrong++
  })
  t.equal(wrong, 0, 'found by either spelling')
  t.notOk(m.setMin(keys[5][0] | 0, keys[5][1] | 0, 6), 'setMin with a higher value changes nothing')
  t.ok(m.setMin(keys[5][0] | 0, keys[5][1] | 0, 1), 'and lowers it')
  t.equal(m.get(keys[5][0], keys[5][1]), 1)
  const seen: number[] = []
  m.forEach((hi, lo) => seen.push(hi, lo))
  t.ok(seen.every((v) => v >>> 0 === v), 'entries read back as uint32')
  m.pack()
  keys.forEach(([hi, lo], i) => {
    if (m.get(hi | 0, lo | 0) !== (i === 5 ? 1 : i) || m.get(hi, lo) !== (i === 5 ? 1 : i)) wrong++
  })
  t.equal(wrong, 0, 'packed, found by either spelling')
  t.ok(m.delete(keys[7][0] | 0, keys[7][1] | 0), 'deleted by its int32 spelling')
  t.equal(m.get(keys[7][0], keys[7][1]), undefined)
  t.equal(m.size, keys.length - 1)
})
