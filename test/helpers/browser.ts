import { existsSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Locator, type Page } from 'playwright-core'
import type { Teardown } from './server.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** Debian's chromium (`apt-get install chromium`; .ci/run installs it when missing) */
export const CHROMIUM_PATH = process.env.GOALPOST_CHROMIUM ?? '/usr/bin/chromium'
export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run',
]
/** git-ignored; screenshots of the views the browser tests saw */
export const SCREENSHOT_DIR = join(ROOT, 'test', 'output')

/** Why browser tests cannot run here, or null when they can. */
export function browserMissing(): string | null {
  return existsSync(CHROMIUM_PATH) ? null : `${CHROMIUM_PATH} not found: install Debian's chromium package (apt-get install chromium)`
}

/**
 * The user agent pages have unless a context says otherwise: a desktop Chrome on Linux. Headless
 * chromium says "HeadlessChrome", which bot filters rightly drop.
 */
export const VISITOR_AGENT = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36'

/**
 * Launches headless chromium, closed at teardown. The user agent is set for the whole browser
 * (`--user-agent`) rather than per context: a per-context override is lost for the beacons a page
 * sends while it unloads, which would then claim to come from another browser.
 */
export async function launchBrowser(t?: Teardown, userAgent = VISITOR_AGENT): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`no chromium at ${CHROMIUM_PATH}: install Debian's (apt-get install chromium) or set GOALPOST_CHROMIUM`)
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS, `--user-agent=${userAgent}`], headless: true, timeout: 60_000,
  })
  t?.teardown(() => browser.close())
  return browser
}

export interface PageOptions extends BrowserContextOptions {
  /** a script run in every document of the page before its own scripts */
  initScript?: string
}

/**
 * A page in a context of its own (its own storage, like a separate browser profile), 1280×720 at
 * pixel ratio 1, en-US. Closed with the browser.
 */
export async function newPage(browser: Browser, opts: PageOptions = {}): Promise<Page> {
  const { initScript, ...contextOptions } = opts
  const context = await browser.newContext({
    viewport: { width: 1280, height: 720 }, deviceScaleFactor: 1, locale: 'en-US', ...contextOptions,
  })
  if (initScript) await context.addInitScript(initScript)
  return context.newPage()
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

/**
 * Saves a full-page screenshot as test/output/<name>.png, or of one element when `of` names it,
 * and returns its path.
 */
export async function screenshot(page: Page, name: string, of?: Locator): Promise<string> {
  await mkdir(SCREENSHOT_DIR, { recursive: true })
  const path = join(SCREENSHOT_DIR, `${name}.png`)
  await (of ? of.screenshot({ path }) : page.screenshot({ path, fullPage: true }))
  return path
}
