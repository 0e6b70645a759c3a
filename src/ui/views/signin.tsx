// Sign in with a user name and a password or an API key (POST /api/session/ sets the session
// cookie). The fields are named username and password, so that password managers fill them.
import { useSignal } from '@preact/signals'
import { useEffect } from 'preact/hooks'
import { ApiError } from '../api.ts'
import { signIn } from '../session.ts'
import type { ViewProps } from '../router.ts'

export default function SignIn(_: ViewProps) {
  const busy = useSignal(false)
  const error = useSignal<ApiError | undefined>(undefined)

  async function submit(event: SubmitEvent) {
    event.preventDefault()
    const element = event.currentTarget as HTMLFormElement
    const form = new FormData(element)
    busy.value = true
    error.value = undefined
    try {
      await signIn(String(form.get('username') ?? ''), String(form.get('password') ?? ''))
    } catch (failure) {
      error.value =
        failure instanceof ApiError
          ? failure
          : new ApiError(0, [
              {
                status: '0',
                code: 'network',
                title: '',
                detail: 'The server could not be reached. Is reelhouse serve running?',
              },
            ])
      // The password field is emptied and focused for the next try; the user name stays.
      const password = element.elements.namedItem('password') as HTMLInputElement | null
      if (password) {
        password.value = ''
        password.focus()
      }
    } finally {
      busy.value = false
    }
  }

  const failure = error.value
  const userError = failure?.at('/username')
  const passwordError = failure?.at('/password')
  const general = failure && (failure.general ?? (userError || passwordError ? undefined : failure.message))
  useEffect(() => {
    document.title = 'Sign in · Reelhouse'
  }, [])
  return (
    <main id="main" class="signin">
      <form
        class="card"
        method="post"
        action="/api/session/"
        onSubmit={(e) => void submit(e as unknown as SubmitEvent)}
        noValidate
      >
        <h1>Sign in to Reelhouse</h1>
        <p class="muted">
          With your user name and your password or API key. The first start of <code>reelhouse serve</code> printed the
          key of <code>admin</code> (also in <code>admin.token</code> in its data folder).
        </p>
        {general && (
          <p class="error" role="alert" id="signin-error">
            {general}
          </p>
        )}
        <div class="field">
          <label for="signin-username">User name</label>
          <input
            id="signin-username"
            name="username"
            autocomplete="username"
            autocapitalize="none"
            spellcheck={false}
            required
            autoFocus
            aria-invalid={userError ? 'true' : undefined}
            aria-describedby={userError ? 'signin-username-error' : undefined}
          />
          {userError && (
            <p class="field-error" id="signin-username-error">
              {userError}
            </p>
          )}
        </div>
        <div class="field">
          <label for="signin-password">Password or API key</label>
          <input
            id="signin-password"
            name="password"
            type="password"
            autocomplete="current-password"
            required
            aria-invalid={passwordError ? 'true' : undefined}
            aria-describedby={passwordError ? 'signin-password-error' : undefined}
          />
          {passwordError && (
            <p class="field-error" id="signin-password-error">
              {passwordError}
            </p>
          )}
        </div>
        <button type="submit" class="primary" disabled={busy.value}>
          {busy.value ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  )
}
