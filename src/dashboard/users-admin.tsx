import { useEffect, useState } from 'preact/hooks'
import type { Site, User } from '../schema/index.js'
import { api, messageOf } from './api.js'
import { formText } from './format.js'

interface Props {
  sites: Site[]
}

/** Admin only: users, each with the sites they may see. */
export function UsersAdmin({ sites }: Props) {
  const [users, setUsers] = useState<User[]>([])
  const [error, setError] = useState('')
  const load = () => api<{ users: User[] }>('GET', '/api/users').then((r) => setUsers(r.users), (err) => setError(messageOf(err)))
  useEffect(() => {
    void load()
  }, [])

  const add = async (e: Event) => {
    e.preventDefault()
    const formEl = e.currentTarget as HTMLFormElement
    const form = new FormData(formEl)
    try {
      await api('POST', '/api/users', {
        email: formText(form.get('email')).trim(),
        password: formText(form.get('password')),
        sites: form.getAll('sites').map(String),
      })
      formEl.reset()
      setError('')
      await load()
    } catch (err) {
      setError(messageOf(err))
    }
  }

  return (
    <section class="card" aria-labelledby="users-title">
      <h2 id="users-title">Users</h2>
      <form class="row-form" onSubmit={add}>
        <div class="field">
          <label for="new-user-email">E-mail address</label>
          <input id="new-user-email" name="email" type="email" autocomplete="off" />
        </div>
        <div class="field">
          <label for="new-user-password">Initial password</label>
          <input id="new-user-password" name="password" type="password" autocomplete="new-password" aria-describedby="new-user-password-help" />
          <p id="new-user-password-help" class="hint">At least 8 characters.</p>
        </div>
        <div class="field">
          <label for="new-user-access">Access</label>
          {/* a list box, not checkboxes named after sites: the Site picker stays the one control of that name */}
          <select id="new-user-access" name="sites" multiple size={Math.min(4, Math.max(2, sites.length))} aria-describedby="new-user-access-help">
            {sites.map((s) => <option key={s.site_id} value={s.site_id}>{s.site_id}</option>)}
          </select>
          <p id="new-user-access-help" class="hint">Ctrl or Shift to choose several.</p>
        </div>
        <div class="field submit">
          <button type="submit">Add user</button>
        </div>
      </form>
      <p class="error" role="alert">{error}</p>
      <ul class="users">
        {users.map((u) => (
          <li key={u.id}>
            <span>{u.email}</span> <span class="hint">{u.sites.length ? u.sites.join(', ') : 'no sites'}</span>
          </li>
        ))}
      </ul>
    </section>
  )
}
