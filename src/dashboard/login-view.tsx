import { useState } from 'preact/hooks'
import type { WhoAmI } from '../schema/index.js'
import { api, messageOf } from './api.js'
import { formText } from './format.js'

interface Props {
  onLogin(who: WhoAmI): void
}

/** Two ways in: a user's e-mail and password, or the admin token traded once for the same cookie. */
export function LoginView({ onLogin }: Props) {
  const [error, setError] = useState('')
  const [adminError, setAdminError] = useState('')
  const [busy, setBusy] = useState(false)

  const logIn = async (e: Event) => {
    e.preventDefault()
    const form = new FormData(e.currentTarget as HTMLFormElement)
    setBusy(true)
    setError('')
    try {
      const user = await api<NonNullable<WhoAmI['user']>>('POST', '/api/login', { email: form.get('email'), password: form.get('password') })
      onLogin({ admin: false, user })
    } catch (err) {
      setError(messageOf(err))
    } finally {
      setBusy(false)
    }
  }

  const useToken = async (e: Event) => {
    e.preventDefault()
    const formEl = e.currentTarget as HTMLFormElement
    const token = formText(new FormData(formEl).get('admin_token'))
    // the field is emptied at once: after the exchange only the HttpOnly cookie proves who this is
    formEl.reset()
    setBusy(true)
    setAdminError('')
    try {
      onLogin(await api<WhoAmI>('POST', '/api/session', { admin_token: token }))
    } catch (err) {
      setAdminError(messageOf(err))
    } finally {
      setBusy(false)
    }
  }

  return (
    <main class="login">
      <h1>Goalpost</h1>
      <form class="card" onSubmit={logIn} aria-labelledby="login-title">
        <h2 id="login-title">Sign in</h2>
        <label for="login-email">Email</label>
        <input id="login-email" name="email" type="email" autocomplete="username" required />
        <label for="login-password">Password</label>
        <input id="login-password" name="password" type="password" autocomplete="current-password" required />
        <button type="submit" disabled={busy}>Log in</button>
        <p class="error" role="alert">{error}</p>
      </form>
      <form class="card" onSubmit={useToken} aria-labelledby="admin-title">
        <h2 id="admin-title">Administrator</h2>
        <label for="admin-token">Admin token</label>
        <input id="admin-token" name="admin_token" type="password" autocomplete="off" required aria-describedby="admin-token-help" />
        <p id="admin-token-help" class="hint">Printed by the server on its first start (or GOALPOST_ADMIN_TOKEN). It is exchanged once for a session cookie and not kept by this page.</p>
        <button type="submit" disabled={busy}>Use admin token</button>
        <p class="error" role="alert">{adminError}</p>
      </form>
    </main>
  )
}
