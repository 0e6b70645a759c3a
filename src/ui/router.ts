// The client-side router's mechanism: the current location as a signal, navigate(), and links
// that stay in the page. The route table itself is in main.tsx. Separate from it so that views can
// import navigate() without importing main.tsx (which imports every view).
import { computed, signal } from '@preact/signals'

/** The path and query the page shows (location.pathname + location.search). */
export const location = signal(currentLocation())
export const path = computed(() => location.value.split('?', 1)[0]!)
export const query = computed(() => new URLSearchParams(location.value.slice(path.value.length)))

function currentLocation() {
  return window.location.pathname + window.location.search
}

/** Goes to `to` (a path of this page, with or without a query) without reloading. */
export function navigate(to: string, { replace = false } = {}) {
  if (to === location.value) return
  if (replace) history.replaceState(null, '', to)
  else history.pushState(null, '', to)
  location.value = currentLocation()
}

/**
 * Starts following the browser's back and forward buttons, and turns clicks on same-origin links
 * (any `<a href="/...">`) into navigate(): views write plain anchors. A click with a modifier, a
 * middle click, `target` or `download` is left to the browser (a new tab loads the path from the
 * server, which answers every page path with the page).
 */
export function startRouter() {
  window.addEventListener('popstate', () => {
    location.value = currentLocation()
  })
  document.addEventListener('click', (event) => {
    if (
      event.defaultPrevented ||
      event.button !== 0 ||
      event.metaKey ||
      event.ctrlKey ||
      event.shiftKey ||
      event.altKey
    )
      return
    const anchor = (event.target as Element | null)?.closest?.('a')
    if (!anchor || anchor.target || anchor.hasAttribute('download')) return
    const url = new URL(anchor.href, window.location.href)
    if (url.origin !== window.location.origin || url.pathname.startsWith('/api/') || url.pathname.startsWith('/ui/'))
      return
    // A link within this view (#main, the skip link) is the browser's to follow.
    if (url.hash && url.pathname === window.location.pathname) return
    event.preventDefault()
    navigate(url.pathname + url.search)
  })
}

/**
 * Matches `pattern` (`/assets/:type/:id`) against a path: its parameters, or undefined. Segments
 * are compared whole; a parameter matches one non-empty segment.
 */
export function match(pattern: string, at: string): Record<string, string> | undefined {
  const want = pattern.split('/')
  const have = at.replace(/\/$/, '').split('/')
  if (at === '/') have.splice(1)
  if (pattern === '/') return at === '/' ? {} : undefined
  if (want.length !== have.length) return undefined
  const params: Record<string, string> = {}
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!
    const h = have[i]!
    if (w.startsWith(':')) {
      if (!h) return undefined
      params[w.slice(1)] = decodeURIComponent(h)
    } else if (w !== h) return undefined
  }
  return params
}

/** What the router gives each view: the route's :names, by name. */
export type ViewProps = { params: Record<string, string> }
