/**
 * Key → partition for the embedded log: 32-bit FNV-1a over the key's UTF-8 bytes, modulo the
 * partition count. A pure function of the key, so every process and every restart agrees.
 * (Kafka's Java client uses murmur2; nothing needs the two to agree, since data never moves
 * between the embedded log and a broker.)
 */

const OFFSET_BASIS = 0x811c9dc5
const PRIME = 0x01000193

function mix(hash: number, byte: number): number {
  return Math.imul(hash ^ byte, PRIME)
}

/** FNV-1a, 32 bit, of the UTF-8 encoding of `text`, without allocating the bytes. */
export function fnv1a32(text: string): number {
  let hash = OFFSET_BASIS
  for (let i = 0; i < text.length; i++) {
    let code = text.charCodeAt(i)
    if (code < 0x80) {
      hash = mix(hash, code)
      continue
    }
    if (code >= 0xd800 && code < 0xe000) {
      const low = code < 0xdc00 ? text.charCodeAt(i + 1) : NaN
      if (low >= 0xdc00 && low < 0xe000) {
        code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00)
        i++
      } else {
        code = 0xfffd // a lone surrogate encodes as U+FFFD, as Buffer.from does
      }
    }
    if (code < 0x800) {
      hash = mix(hash, 0xc0 | (code >> 6))
    } else if (code < 0x10000) {
      hash = mix(hash, 0xe0 | (code >> 12))
      hash = mix(hash, 0x80 | ((code >> 6) & 0x3f))
    } else {
      hash = mix(hash, 0xf0 | (code >> 18))
      hash = mix(hash, 0x80 | ((code >> 12) & 0x3f))
      hash = mix(hash, 0x80 | ((code >> 6) & 0x3f))
    }
    hash = mix(hash, 0x80 | (code & 0x3f))
  }
  return hash >>> 0
}

export function partitionOf(key: string, partitions: number): number {
  return fnv1a32(key) % partitions
}
