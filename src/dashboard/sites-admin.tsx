import { useState } from 'preact/hooks'
import type { Site } from '../schema/index.js'
import { api, messageOf } from './api.js'
import { snippet } from './snippet.js'
import { formText } from './format.js'

interface Props {
  sites: Site[]
  onChanged(): void
}

const TIME_ZONES: string[] = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : []

/** Copies text, falling back to a selection copy where the Clipboard API is not offered. */
async function copy(text: string, shown: HTMLElement | null): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text)
    return true
  } catch {
    if (!shown) return false
    const range = document.createRange()
    range.selectNodeContents(shown)
    getSelection()?.removeAllRanges()
    getSelection()?.addRange(range)
    return document.execCommand('copy')
  }
}

/** Admin only: new sites, and per site the tag to paste into its pages. */
export function SitesAdmin({ sites, onChanged }: Props) {
  const [error, setError] = useState('')
  const [copied, setCopied] = useState('')

  const add = async (e: Event) => {
    e.preventDefault()
    const formEl = e.currentTarget as HTMLFormElement
    const form = new FormData(formEl)
    const body: Record<string, string> = { site_id: formText(form.get('site_id')).trim() }
    const domain = formText(form.get('domain')).trim()
    const timezone = formText(form.get('timezone')).trim()
    if (domain) body.domain = domain
    if (timezone) body.timezone = timezone
    try {
      await api('POST', '/api/sites', body)
      formEl.reset()
      setError('')
      onChanged()
    } catch (err) {
      setError(messageOf(err))
    }
  }

  return (
    <section class="card" aria-labelledby="sites-title">
      <h2 id="sites-title">Sites</h2>
      <form class="row-form" onSubmit={add}>
        <div class="field">
          <label for="new-site-id">Identifier</label>
          <input id="new-site-id" name="site_id" autocomplete="off" spellcheck={false} pattern="[A-Za-z0-9._\-]{1,64}" aria-describedby="new-site-id-help" />
          <p id="new-site-id-help" class="hint">Letters, digits, dot, dash, underscore; the data-site-id of the snippet.</p>
        </div>
        <div class="field">
          <label for="new-site-domain">Domain</label>
          <input id="new-site-domain" name="domain" placeholder="example.com" autocomplete="off" aria-describedby="new-site-domain-help" />
          <p id="new-site-domain-help" class="hint">Optional: browsers on other hosts are then refused.</p>
        </div>
        <div class="field">
          <label for="new-site-tz">Time zone</label>
          <input id="new-site-tz" name="timezone" list="time-zones" placeholder="UTC" autocomplete="off" />
          <datalist id="time-zones">{TIME_ZONES.map((z) => <option key={z} value={z} />)}</datalist>
        </div>
        <div class="field submit">
          <button type="submit">Add site</button>
        </div>
      </form>
      <p class="error" role="alert">{error}</p>
      <p class="done" role="status">{copied && `Copied the snippet of ${copied}.`}</p>
      {/* names here avoid the word "site": the Site picker must stay the one control of that name */}
      <ul class="snippets">
        {sites.map((s) => {
          const tag = snippet(location.origin, s.site_id)
          const id = `snippet-${s.site_id}`
          return (
            <li key={s.site_id}>
              <h3 id={`${id}-title`}>{s.site_id}</h3>
              <p class="hint">Paste into every page, before the closing head tag:</p>
              <div class="copy-row">
                <pre id={id}><code>{tag}</code></pre>
                <button
                  type="button"
                  aria-describedby={`${id}-title`}
                  onClick={async () => setCopied((await copy(tag, document.getElementById(id))) ? s.site_id : '')}
                >
                  {copied === s.site_id ? 'Copied' : 'Copy'}
                </button>
              </div>
            </li>
          )
        })}
      </ul>
    </section>
  )
}
