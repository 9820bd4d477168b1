import { existsSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core'
import type { Teardown } from './server.js'

/** Debian's chromium package; `.ci/run` installs it when missing. */
export const CHROMIUM = process.env.GOALPOST_TEST_CHROMIUM ?? '/usr/bin/chromium'

/** Headless, and quiet: no update checks, syncing or other network of its own during tests. */
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
]

/** Where tests save screenshots and other artefacts for people to look at (git-ignored). */
export const OUTPUT_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'output')

/** Why browser tests cannot run here, or null when they can. */
export function browserMissing(): string | null {
  return existsSync(CHROMIUM) ? null : `${CHROMIUM} not found: install Debian's chromium package (apt-get install chromium)`
}

/** Launches chromium, closed at teardown. */
export async function launchBrowser(t: Teardown): Promise<Browser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true })
  t.teardown(() => browser.close())
  return browser
}

/**
 * A fresh browser profile (own cookies and storage) with one page. Uncaught page errors are
 * collected so a test can assert there were none.
 */
export async function openPage(browser: Browser, opts: BrowserContextOptions = {}): Promise<{ context: BrowserContext; page: Page; pageErrors: string[] }> {
  const context = await browser.newContext(opts)
  const page = await context.newPage()
  const pageErrors: string[] = []
  page.on('pageerror', (err) => pageErrors.push(err.message))
  return { context, page, pageErrors }
}

/** Saves a full-page screenshot as test/output/<name>.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(OUTPUT_DIR, { recursive: true })
  const path = join(OUTPUT_DIR, `${name}.png`)
  await page.screenshot({ path, fullPage: true })
  return path
}
