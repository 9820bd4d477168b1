import { readFile, readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'

/** Every file under `dir` (LevelDB folders included) whose bytes contain `needle`. */
export async function filesHolding(dir: string, needle: string): Promise<string[]> {
  const found: string[] = []
  for (const rel of await readdir(dir, { recursive: true })) {
    const file = join(dir, rel)
    const info = await stat(file).catch(() => undefined)
    if (!info?.isFile() || info.size > 16 * 1024 * 1024) continue
    const bytes = await readFile(file).catch(() => undefined)
    if (bytes?.includes(needle)) found.push(file)
  }
  return found
}
