/**
 * The compression codecs Kafka has, by the names its topic setting (compression.type) and
 * GOALPOST_KAFKA_COMPRESSION use, and their ids in a record batch's attributes (bits 0-2). Names
 * only: the codecs themselves are in codecs.ts.
 */
export const COMPRESSIONS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const
export type Compression = (typeof COMPRESSIONS)[number]

export const CODEC_IDS: Record<Compression, number> = { none: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 }

/** The name of a record batch's codec, from its attributes, for messages that name it. */
export const codecName = (attributes: number): string =>
  COMPRESSIONS.find((c) => CODEC_IDS[c] === (attributes & 0x07)) ?? `unknown codec ${attributes & 0x07}`
