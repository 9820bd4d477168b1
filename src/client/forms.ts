import type { Send } from './event.js'
import { cut, MAX } from './limits.js'

/**
 * `form_submit` with the form's id, name, method and action — never a field value, and the action
 * without its query and fragment. Attributes are read rather than properties: a field named "id" or
 * "action" would shadow `form.id` or `form.action`.
 */
export function trackForms(send: Send): void {
  document.addEventListener('submit', (e) => {
    const form = e.target
    if (!(form instanceof HTMLFormElement)) return
    const action = new URL(form.getAttribute('action') || location.href, location.href)
    send('form_submit', {
      properties: {
        id: form.getAttribute('id'),
        name: form.getAttribute('name'),
        method: (form.getAttribute('method') || 'get').toLowerCase(),
        action: cut(action.origin + action.pathname, MAX.text),
      },
    })
  }, true)
}
