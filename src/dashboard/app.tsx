import { useEffect, useState } from 'preact/hooks'
import type { WhoAmI } from '../schema/index.js'
import { api } from './api.js'
import { LoginView } from './login-view.js'
import { DashboardView } from './dashboard-view.js'

/** Who is signed in decides the view; the HttpOnly cookie itself is never visible here. */
export function App() {
  // undefined while asking the server, null when nobody is signed in
  const [who, setWho] = useState<WhoAmI | null | undefined>(undefined)
  useEffect(() => {
    api<WhoAmI>('GET', '/api/session').then(setWho, () => setWho(null))
  }, [])
  if (who === undefined) return <p class="loading" role="status">Loading…</p>
  if (who === null) return <LoginView onLogin={setWho} />
  return <DashboardView who={who} onLogout={() => setWho(null)} />
}
