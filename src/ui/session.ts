// Who is signed in: GET /api/session/ once at start, then whatever sign-in and sign-out say. The
// session is an HttpOnly cookie the page never reads; no key or password is kept in the page.
import { effect, signal } from '@preact/signals'
import { ApiError, api, del, get, unauthorized } from './api.ts'
import { stopLive } from './live.ts'

export type User = { id: number; username: string; is_superuser: boolean; [field: string]: unknown }

/** undefined: not known yet (the first GET /api/session/ runs); null: signed out. */
export const user = signal<User | null | undefined>(undefined)

/** Asks the server who the cookie (if any) belongs to. A failure counts as signed out. */
export async function loadSession() {
  try {
    const { data } = await get<{ user: User | null }>('/api/session/')
    user.value = data.user ?? null
  } catch {
    user.value = null
  }
}

/** Signs in with a user name and a password or API key; rejects with ApiError (401 on bad credentials). */
export async function signIn(username: string, password: string) {
  const { data } = await api<{ user: User }>('/api/session/', { method: 'POST', body: { username, password } })
  user.value = data.user
}

/**
 * Ends the session on the server, then in the page (also when the server no longer knew it). The
 * live stream is closed first: the server ends it with the session, and the browser would try it
 * again without one.
 */
export async function signOut() {
  stopLive()
  try {
    await del('/api/session/')
  } catch (error) {
    if (!(error instanceof ApiError)) throw error
  } finally {
    user.value = null
  }
}

// A call refused 401 means the session ended (expired, revoked, signed out in another tab).
effect(() => {
  if (unauthorized.value > 0) user.value = null
})
