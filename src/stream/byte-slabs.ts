/**
 * Small variable-size records (a hot session's ids, its list of values seen) in large shared
 * buffers instead of one heap object each: the garbage collector sees a few 64 KiB chunks, not a
 * million strings and arrays, so its pauses stay short whatever the number of sessions (a full GC
 * over 1M small strings took ~70 ms here, over none a few ms).
 *
 * Records are blocks of a size class (16 B to 8 KiB, steps of about ×1.5), allocated from the
 * class's chunks and reused from its free list; a reference packs the block number and the class
 * in one int32. Chunks are never copied or returned, so a reference stays valid until it is freed.
 */
const SIZES = [16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192] as const
const CLASS_BITS = 5
const CLASS_MASK = (1 << CLASS_BITS) - 1
const CHUNK_BYTES = 64 * 1024
/** block numbers stay below this so that a reference fits an int32 */
const MAX_BLOCKS = 2 ** (31 - CLASS_BITS)

/** the largest record a slab holds */
export const MAX_SLAB_BYTES = SIZES[SIZES.length - 1]

class SizeClass {
  readonly size: number
  readonly perChunk: number
  readonly chunks: Buffer[] = []
  readonly words: Int32Array[] = []
  readonly free: number[] = []
  /** blocks handed out from the chunks so far (free or not) */
  used = 0

  constructor(size: number) {
    this.size = size
    this.perChunk = Math.floor(CHUNK_BYTES / size)
  }
}

export class ByteSlabs {
  readonly #classes = SIZES.map((size) => new SizeClass(size))
  #live = 0

  /** A block of at least `bytes` bytes (its content is whatever it held before). */
  alloc(bytes: number): number {
    let cls = 0
    while (SIZES[cls] < bytes) if (++cls === SIZES.length) throw new RangeError(`a slab record holds at most ${MAX_SLAB_BYTES} bytes, not ${bytes}`)
    const c = this.#classes[cls]
    let block = c.free.pop()
    if (block === undefined) {
      block = c.used++
      if (block >= MAX_BLOCKS) throw new RangeError('slab class full')
      if (block >= c.chunks.length * c.perChunk) {
        const chunk = Buffer.allocUnsafeSlow(c.perChunk * c.size)
        c.chunks.push(chunk)
        c.words.push(new Int32Array(chunk.buffer, chunk.byteOffset, chunk.byteLength >> 2))
      }
    }
    this.#live += c.size
    return block * (CLASS_MASK + 1) + cls
  }

  free(ref: number): void {
    const c = this.#classes[ref & CLASS_MASK]
    c.free.push(ref >>> CLASS_BITS)
    this.#live -= c.size
  }

  /** bytes the block holds */
  size(ref: number): number {
    return SIZES[ref & CLASS_MASK]
  }

  /** the chunk holding the block, as bytes (the block starts at `offset(ref)`) */
  bytes(ref: number): Buffer {
    const c = this.#classes[ref & CLASS_MASK]
    return c.chunks[Math.floor((ref >>> CLASS_BITS) / c.perChunk)]
  }

  /** the chunk holding the block, as int32 words (the block starts at word `offset(ref) / 4`) */
  words(ref: number): Int32Array {
    const c = this.#classes[ref & CLASS_MASK]
    return c.words[Math.floor((ref >>> CLASS_BITS) / c.perChunk)]
  }

  /** byte offset of the block in its chunk; a multiple of 16 */
  offset(ref: number): number {
    const c = this.#classes[ref & CLASS_MASK]
    return ((ref >>> CLASS_BITS) % c.perChunk) * c.size
  }

  /** bytes of blocks in use */
  get liveBytes(): number {
    return this.#live
  }

  /** bytes of chunks allocated */
  memoryBytes(): number {
    let n = 0
    for (const c of this.#classes) n += c.chunks.length * c.perChunk * c.size
    return n
  }
}
