/**
 * LZ4 frames as Kafka reads and writes them (magic 1 and 2 record batches; KafkaLZ4BlockInputStream
 * and KafkaLZ4BlockOutputStream): the LZ4 frame format with independent blocks and a correct header
 * checksum. lz4js supplies the block codec; its own frame writer declares dependent blocks (FLG
 * 0x40), which Kafka's reader refuses ("Dependent block stream is unsupported"), so a broker answers
 * the produce with an unexpected error. This writer compresses each 64 KiB block on its own, as
 * Kafka's does, and says so (FLG 0x60).
 *
 *   Frame => magic:UINT32LE(0x184D2204) FLG:UINT8 BD:UINT8 [content_size:UINT64LE] HC:UINT8
 *            [block]* end_mark:UINT32LE(0) [content_checksum:UINT32LE]
 *     FLG: bits 7-6 version (01), bit 5 block independence, bit 4 block checksum,
 *          bit 3 content size, bit 2 content checksum
 *     BD:  bits 6-4 the largest block (4: 64 KiB, 5: 256 KiB, 6: 1 MiB, 7: 4 MiB)
 *     HC:  (xxh32(FLG..last descriptor byte, seed 0) >> 8) & 0xFF
 *   block => size:UINT32LE (high bit: stored uncompressed) data [checksum:UINT32LE]
 *
 * The reader skips the optional checksums rather than checking them (kafkajs checks no CRC
 * either; TCP guards the wire) and accepts dependent blocks too, since it decodes into one buffer.
 */
import lz4 from 'lz4js'
import xxh32 from 'lz4js/xxh32.js'

const MAGIC = 0x184d2204
const VERSION = 0x40
const VERSION_MASK = 0xc0
const INDEPENDENT = 0x20
const BLOCK_CHECKSUM = 0x10
const CONTENT_SIZE = 0x08
const CONTENT_CHECKSUM = 0x04
const UNCOMPRESSED = 0x80000000
/** Kafka's own block size (KafkaLZ4BlockOutputStream.BLOCKSIZE_64KB) */
const BLOCK = 64 * 1024
const BD_64KB = 4 << 4
const BLOCK_SIZES: Record<number, number> = { 4: 64 * 1024, 5: 256 * 1024, 6: 1024 * 1024, 7: 4 * 1024 * 1024 }

export function compressLz4Frame(src: Uint8Array): Buffer {
  const out: Buffer[] = []
  const header = Buffer.alloc(7)
  header.writeUInt32LE(MAGIC, 0)
  header[4] = VERSION | INDEPENDENT
  header[5] = BD_64KB
  header[6] = (xxh32.hash(0, header, 4, 2) >>> 8) & 0xff
  out.push(header)
  const scratch = Buffer.alloc(lz4.compressBound(BLOCK))
  const table = new Uint32Array(65536)
  for (let at = 0; at < src.length; at += BLOCK) {
    const block = src.subarray(at, Math.min(at + BLOCK, src.length))
    // a block compressed alone: its matches never reach into the one before
    table.fill(0)
    const size = lz4.compressBlock(block, scratch, 0, block.length, table)
    const prefix = Buffer.alloc(4)
    if (size === 0 || size >= block.length) {
      prefix.writeUInt32LE((UNCOMPRESSED | block.length) >>> 0, 0)
      out.push(prefix, Buffer.from(block))
    } else {
      prefix.writeUInt32LE(size, 0)
      out.push(prefix, Buffer.from(scratch.subarray(0, size)))
    }
  }
  out.push(Buffer.alloc(4)) // end mark
  return Buffer.concat(out)
}

export function decompressLz4Frame(src: Buffer): Buffer {
  const fail = (why: string): never => {
    throw new Error(`not a readable LZ4 frame: ${why}`)
  }
  if (src.length < 7 || src.readUInt32LE(0) !== MAGIC) fail('no LZ4 frame magic')
  const flg = src[4]
  if ((flg & VERSION_MASK) !== VERSION) fail(`frame version ${(flg & VERSION_MASK) >> 6}`)
  const maxBlock = BLOCK_SIZES[(src[5] >> 4) & 7] ?? fail(`block size code ${(src[5] >> 4) & 7}`)
  let at = 6 + ((flg & CONTENT_SIZE) !== 0 ? 8 : 0) + 1 // descriptor, content size, HC
  const blocks: Array<{ at: number; size: number; raw: boolean }> = []
  let bound = 0
  for (;;) {
    if (at + 4 > src.length) fail('it ends before its end mark')
    const word = src.readUInt32LE(at)
    at += 4
    if (word === 0) break
    const raw = (word & UNCOMPRESSED) !== 0
    const size = word & ~UNCOMPRESSED
    if (at + size > src.length) fail('a block runs past the end')
    blocks.push({ at, size, raw })
    bound += raw ? size : maxBlock
    at += size + ((flg & BLOCK_CHECKSUM) !== 0 ? 4 : 0)
  }
  if ((flg & CONTENT_CHECKSUM) !== 0 && at + 4 > src.length) fail('its content checksum is missing')
  const dst = Buffer.alloc(bound)
  let written = 0
  for (const b of blocks) {
    if (b.raw) written += src.copy(dst, written, b.at, b.at + b.size)
    else written = lz4.decompressBlock(src, dst, b.at, b.size, written)
  }
  return dst.subarray(0, written)
}
