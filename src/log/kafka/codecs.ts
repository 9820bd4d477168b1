/**
 * Every compression codec Kafka has, in kafkajs' registry: kafkajs ships gzip only and throws
 * KafkaJSNotImplemented for a snappy, lz4 or zstd batch — on the group consumer's fetch, a crash it
 * does not restart. Registered once when this module loads, so every reader (the group consumer,
 * the tails, record-batch-v2.ts through kafkajs' lookup) and every producer (sendBatch's
 * `compression`) has them. The registry must be the CommonJS module object kafkajs itself uses:
 * the ESM named import is a copy.
 *
 * The packages are JavaScript or WebAssembly, nothing to build or download at install:
 * snappyjs (Snappy, xerial framing in snappy-xerial.ts), lz4js (LZ4 blocks, Kafka's frame in
 * lz4-frame.ts), fzstd (zstd decompression, streaming frames without a content size, as Kafka's
 * Java client writes them) and @bokuweb/zstd-wasm (zstd compression, the reference library
 * compiled to WebAssembly).
 */
import { createRequire } from 'node:module'
import { promisify } from 'node:util'
import { gunzip, gzip } from 'node:zlib'
import { compress as zstdCompress, init as zstdInit } from '@bokuweb/zstd-wasm'
import { decompress as zstdDecompress } from 'fzstd'
import { compressLz4Frame, decompressLz4Frame } from './lz4-frame.js'
import { compressSnappy, decompressSnappy } from './snappy-xerial.js'
import { CODEC_IDS, type Compression } from './compression.js'


/** Kafka's default zstd level (compression.zstd.level) */
const ZSTD_LEVEL = 3

export interface Codec {
  compress(src: Buffer): Promise<Buffer>
  decompress(src: Buffer): Promise<Buffer>
}

let zstdReady: Promise<void> | undefined
const toBuffer = (a: Uint8Array): Buffer => Buffer.from(a.buffer, a.byteOffset, a.byteLength)

/** The codecs by name; also for the bench and the tests, which write batches as other producers do. */
export const CODECS: Record<Exclude<Compression, 'none'>, Codec> = {
  gzip: { compress: promisify(gzip), decompress: promisify(gunzip) },
  snappy: { compress: async (src) => compressSnappy(src), decompress: async (src) => decompressSnappy(src) },
  lz4: { compress: async (src) => compressLz4Frame(src), decompress: async (src) => decompressLz4Frame(src) },
  zstd: {
    compress: async (src) => {
      // the WebAssembly module is compiled on first use, once
      await (zstdReady ??= zstdInit())
      return Buffer.from(zstdCompress(src, ZSTD_LEVEL))
    },
    decompress: async (src) => toBuffer(zstdDecompress(src)),
  },
}

interface KafkajsCodec {
  compress(encoder: { buffer: Buffer }): Promise<Buffer>
  decompress(buffer: Buffer): Promise<Buffer>
}

const kafkajs = createRequire(import.meta.url)('kafkajs') as {
  CompressionCodecs: Record<number, () => KafkajsCodec>
}

for (const [name, codec] of Object.entries(CODECS) as Array<[Exclude<Compression, 'none'>, Codec]>) {
  if (name === 'gzip') continue // kafkajs' own
  const adapted: KafkajsCodec = { compress: (encoder) => codec.compress(encoder.buffer), decompress: (buffer) => codec.decompress(buffer) }
  kafkajs.CompressionCodecs[CODEC_IDS[name]] = () => adapted
}
