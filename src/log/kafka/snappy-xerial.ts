/**
 * Snappy as Kafka carries it: the Java client writes xerial's framing (SnappyOutputStream), a
 * header and then blocks of at most 32 KiB, each raw Snappy with its length in front; librdkafka
 * and other clients may write one raw Snappy block instead. Both are read; what Goalpost writes is
 * xerial-framed, like the Java client's, so every Kafka client reads it.
 *
 *   Xerial => magic:"\x82SNAPPY\0" version:INT32BE(1) compatible:INT32BE(1) [length:INT32BE snappy]*
 */
import snappy from 'snappyjs'

const MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00])
const HEADER = 16
/** xerial's default block size */
const BLOCK = 32 * 1024

export function compressSnappy(src: Uint8Array): Buffer {
  const out: Buffer[] = [Buffer.concat([MAGIC, Buffer.from([0, 0, 0, 1, 0, 0, 0, 1])])]
  for (let at = 0; at < src.length; at += BLOCK) {
    const block = snappy.compress(src.subarray(at, Math.min(at + BLOCK, src.length)))
    const length = Buffer.alloc(4)
    length.writeInt32BE(block.length, 0)
    out.push(length, Buffer.from(block.buffer, block.byteOffset, block.byteLength))
  }
  return Buffer.concat(out)
}

export function decompressSnappy(src: Buffer): Buffer {
  if (src.length < HEADER || !src.subarray(0, MAGIC.length).equals(MAGIC)) return toBuffer(snappy.uncompress(src))
  const parts: Buffer[] = []
  for (let at = HEADER; at < src.length;) {
    if (at + 4 > src.length) throw new Error('not readable Snappy: a block length is cut short')
    const length = src.readInt32BE(at)
    at += 4
    if (length < 0 || at + length > src.length) throw new Error('not readable Snappy: a block runs past the end')
    parts.push(toBuffer(snappy.uncompress(src.subarray(at, at + length))))
    at += length
  }
  return Buffer.concat(parts)
}

const toBuffer = (a: Uint8Array): Buffer => Buffer.from(a.buffer, a.byteOffset, a.byteLength)
