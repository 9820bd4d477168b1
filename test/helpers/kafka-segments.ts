/**
 * A broker's own files, for tests of what Goalpost does with a batch the broker serves but nobody
 * can read: the broker checks a batch when it takes it, never again when it serves it, so bytes
 * changed on its disk reach every consumer as they are (disk corruption, a bad copy of a segment).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { join } from 'node:path'

/** The log directory of the broker listening at `hostPort` (a broker of this machine). */
export function brokerLogDir(hostPort: string): string {
  const port = hostPort.split(':').pop()
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    let cmdline: string
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
    } catch {
      continue
    }
    const dir = /-Dkafka\.logs\.dir=([^\0]+)/.exec(cmdline)?.[1]
    if (dir === undefined) continue
    try {
      const props = readFileSync(join(dir, 'server.properties'), 'utf8')
      if (props.includes(`PLAINTEXT://127.0.0.1:${port},`)) return /^log\.dirs=(.*)$/m.exec(props)![1]
    } catch {
      continue
    }
  }
  throw new Error(`no broker of this machine listens at ${hostPort}`)
}

/**
 * Changes bytes inside the records of the batch at `baseOffset` of a partition's first segment,
 * leaving its header (offsets, length, codec) intact: a batch whose data no longer decodes.
 */
export async function corruptBatch(logDir: string, topic: string, partition: number, baseOffset: number): Promise<void> {
  const file = join(logDir, `${topic}-${partition}`, '00000000000000000000.log')
  const buf = readFileSync(file)
  for (let at = 0; at + 12 <= buf.length;) {
    const base = Number(buf.readBigInt64BE(at))
    const end = at + 12 + buf.readInt32BE(at + 8)
    if (base === baseOffset) {
      const records = at + 61
      const handle = await open(file, 'r+')
      try {
        const span = buf.subarray(records + 4, end - 4)
        for (let i = 0; i < span.length; i += 3) span[i] ^= 0xa5
        await handle.write(span, 0, span.length, records + 4)
        await handle.sync()
      } finally {
        await handle.close()
      }
      return
    }
    at = end
  }
  throw new Error(`no batch at offset ${baseOffset} in ${file}`)
}

/** The first offset of the first batch of records (not a transaction marker) in a partition's first segment. */
export function firstDataBatch(logDir: string, topic: string, partition: number): number {
  const file = join(logDir, `${topic}-${partition}`, '00000000000000000000.log')
  const buf = readFileSync(file)
  for (let at = 0; at + 61 <= buf.length; at += 12 + buf.readInt32BE(at + 8)) {
    if ((buf.readInt16BE(at + 21) & 0x20) === 0) return Number(buf.readBigInt64BE(at))
  }
  throw new Error(`no batch of records in ${file}`)
}
