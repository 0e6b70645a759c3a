// The frame around every view once signed in: a skip link, the header (name, navigation, who is
// signed in, sign out) and the main region; and View, the top of each view (its heading, the
// document's title, focus moved to the heading after a navigation so screen readers follow); and
// the small pieces every view shows alike (Status, When).
import type { ComponentChildren } from 'preact'
import { useEffect, useRef } from 'preact/hooks'
import { formatDate, parseTimestamp } from './format.ts'
import { status } from './live.ts'
import { navigate, path } from './router.ts'
import { signOut, user } from './session.ts'

export type NavItem = { href: string; label: string }

export function Shell({ nav, children }: { nav: readonly NavItem[]; children: ComponentChildren }) {
  const here = path.value
  const current = (href: string) =>
    href === '/' ? here === '/' || here.startsWith('/assets/') : here === href || here.startsWith(`${href}/`)
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="/">
          Reelhouse
        </a>
        <nav aria-label="Main">
          <ul>
            {nav.map((item) => (
              <li key={item.href}>
                <a href={item.href} aria-current={current(item.href) ? 'page' : undefined}>
                  {item.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span
            class={`live live-${status.value}`}
            title={`Live updates: ${status.value}`}
            aria-label={`Live updates: ${status.value}`}
            role="img"
          />
          <span>
            Signed in as <strong data-testid="username">{user.value?.username}</strong>
          </span>
          <button type="button" onClick={() => void signOut().then(() => navigate('/signin', { replace: true }))}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  )
}

/** Set by the router on every navigation after the first render: View then focuses its heading. */
export const focusOnNavigate = { pending: false }

/** A view's heading and body; `title` also becomes the document's title. */
export function View({
  title,
  actions,
  children,
}: {
  title: string
  actions?: ComponentChildren
  children?: ComponentChildren
}) {
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => {
    document.title = `${title} · Reelhouse`
    if (focusOnNavigate.pending) {
      focusOnNavigate.pending = false
      heading.current?.focus()
    }
  }, [title])
  return (
    <section class="view" aria-labelledby="view-title">
      <div class="view-head">
        <h1 id="view-title" ref={heading} tabIndex={-1}>
          {title}
        </h1>
        {actions}
      </div>
      {children}
    </section>
  )
}

/** What a view shows while its data loads, or when it failed. */
export function Status({ loading, error }: { loading: boolean; error?: { message: string } }) {
  if (error)
    return (
      <p class="error" role="alert">
        {error.message}
      </p>
    )
  if (loading)
    return (
      <p class="muted" role="status">
        Loading…
      </p>
    )
  return null
}

/**
 * A timestamp of the API as every view shows a date (format.ts: `2026-11-29 14:05`, local time),
 * in a <time> whose datetime and tooltip keep the exact UTC value. `empty` when there is none;
 * text that is not a timestamp shows as it is.
 */
export function When({ value, empty = '—' }: { value: string | null | undefined; empty?: string }) {
  const date = value ? parseTimestamp(value) : undefined
  if (!value || !date) return <>{value || empty}</>
  return (
    <time dateTime={date.toISOString()} title={/z$/i.test(value) ? `${value} (UTC)` : value}>
      {formatDate(value)}
    </time>
  )
}
