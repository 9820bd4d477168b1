/** The parts of the codec packages without types of their own that codecs.ts uses. */
declare module 'lz4js' {
  const lz4: {
    compressBound(n: number): number
    /** compressed bytes written to dst, 0 when the block did not compress */
    compressBlock(src: Uint8Array, dst: Uint8Array, sIndex: number, sLength: number, hashTable: Uint32Array): number
    /** decodes one block into dst from dIndex; returns the new end of dst's content */
    decompressBlock(src: Uint8Array, dst: Uint8Array, sIndex: number, sLength: number, dIndex: number): number
  }
  export default lz4
}

declare module 'lz4js/xxh32.js' {
  const xxh32: { hash(seed: number, src: Uint8Array, index: number, length: number): number }
  export default xxh32
}

declare module 'snappyjs' {
  const snappy: {
    compress<T extends Uint8Array>(uncompressed: T): T
    uncompress<T extends Uint8Array>(compressed: T): T
  }
  export default snappy
}
