/**
 * Posts one event. A beacon outlives the page (the pageleave of a closing tab still arrives) and
 * text/plain needs no CORS preflight; fetch with keepalive where beacons are missing or refused.
 */
export function post(endpoint: string, event: object): void {
  const body = JSON.stringify(event)
  try {
    if (navigator.sendBeacon(endpoint, new Blob([body], { type: 'text/plain' }))) return
  } catch {
    // storage or the network may refuse (private mode, a closed page): tracking goes on without it
  }
  fetch(endpoint, { method: 'POST', body, keepalive: true, credentials: 'omit' }).catch(() => {})
}
