import type { Send } from './event.js'

/** `copy` with the copied text's length and the element it came from — never the text. */
export function trackCopies(send: Send): void {
  document.addEventListener('copy', (e) => {
    const el = e.target
    if (!(el instanceof Element)) return
    // a selection inside a text field is not part of the document's selection
    const field = el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement ? el : null
    const length = field ? (field.selectionEnd || 0) - (field.selectionStart || 0) : String(getSelection()).length
    send('copy', { properties: { length, tag: el.tagName.toLowerCase() } })
  }, true)
}
