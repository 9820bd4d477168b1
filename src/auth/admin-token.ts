import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { newToken } from './secrets.js'

const FILE = 'admin-token'

/**
 * The admin token: GOALPOST_ADMIN_TOKEN when set; else the one stored in the data directory;
 * else a new one, stored with mode 0600 and announced once (`announce` is called only then).
 */
export function resolveAdminToken(dataDir: string, fromEnv: string | undefined, announce: (token: string, file: string) => void): string {
  if (fromEnv) return fromEnv
  const file = join(dataDir, FILE)
  if (existsSync(file)) return readFileSync(file, 'utf8').trim()
  mkdirSync(dataDir, { recursive: true })
  const token = newToken('gpa_')
  writeFileSync(file, token + '\n', { mode: 0o600, flag: 'wx' })
  announce(token, file)
  return token
}
