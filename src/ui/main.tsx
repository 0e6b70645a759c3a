// The page's entry: the route table, the redirects between signed out and signed in, and the
// mount. A view is one file in views/ that exports a component taking the route's params; to add
// one, import it here, add its route (and a nav item), and its first path segment to
// routes.ts's PAGE_SECTIONS so the server answers a reload of it with the page.
import { effect } from '@preact/signals'
import { type ComponentType, render } from 'preact'
import { startLive, stopLive } from './live.ts'
import { type ViewProps, location, match, navigate, path, query, startRouter } from './router.ts'
import { isPagePath } from './routes.ts'
import { loadSession, user } from './session.ts'
import { type NavItem, Shell, focusOnNavigate } from './shell.tsx'
import Asset from './views/asset.tsx'
import Catalogue from './views/catalogue.tsx'
import Devices from './views/devices.tsx'
import Imports from './views/imports.tsx'
import Projects from './views/projects.tsx'
import SignIn from './views/signin.tsx'
import Tasks from './views/tasks.tsx'

type Route = { pattern: string; view: ComponentType<ViewProps>; nav?: string }

/** In order: the first pattern that matches the path wins. */
const ROUTES: Route[] = [
  { pattern: '/assets', view: Catalogue, nav: 'Catalogue' },
  { pattern: '/assets/:type/:id', view: Asset },
  { pattern: '/projects', view: Projects, nav: 'Projects' },
  { pattern: '/projects/:id', view: Projects },
  { pattern: '/tasks', view: Tasks, nav: 'Tasks' },
  { pattern: '/devices', view: Devices, nav: 'Devices' },
  { pattern: '/imports', view: Imports, nav: 'Imports' },
]
const NAV: NavItem[] = ROUTES.flatMap((r) => (r.nav ? [{ href: r.pattern, label: r.nav }] : []))

function NotFound() {
  return (
    <section class="view">
      <h1>Not found</h1>
      <p>
        Nothing is at this address. <a href="/assets">Go to the catalogue</a>.
      </p>
    </section>
  )
}

function App() {
  const signedIn = user.value
  if (signedIn === undefined)
    return (
      <p class="boot" role="status">
        Loading Reelhouse…
      </p>
    )
  if (signedIn === null) return <SignIn params={{}} />
  const at = path.value
  for (const route of ROUTES) {
    const params = match(route.pattern, at)
    if (params)
      return (
        <Shell nav={NAV}>
          <route.view key={at} params={params} />
        </Shell>
      )
  }
  return (
    <Shell nav={NAV}>
      <NotFound />
    </Shell>
  )
}

/** Where to go after signing in: the `next` the sign-in view was sent with, when it is a page path. */
function nextPath(): string {
  const next = query.peek().get('next') ?? '/assets'
  return next.startsWith('/') &&
    !next.startsWith('//') &&
    isPagePath(next.split('?', 1)[0]!) &&
    !next.startsWith('/signin')
    ? next
    : '/assets'
}

// Signed out: the sign-in view, at /signin?next=<where you were>. Signed in: never at /signin, and
// `/` is the catalogue's address, /assets (its query kept).
effect(() => {
  const signedIn = user.value
  const at = path.value
  if (signedIn === null && at !== '/signin')
    navigate(at === '/' ? '/signin' : `/signin?next=${encodeURIComponent(location.peek())}`, { replace: true })
  else if (signedIn && at === '/signin') navigate(nextPath(), { replace: true })
  else if (signedIn && at === '/') navigate(`/assets${location.peek().slice(1)}`, { replace: true })
})
// The live stream is open exactly while someone is signed in.
effect(() => {
  if (user.value) startLive()
  else if (user.value === null) stopLive()
})
// Every navigation after the first render moves focus to the new view's heading.
let first = true
effect(() => {
  void location.value
  if (!first) focusOnNavigate.pending = true
  first = false
})

startRouter()
void loadSession()
render(<App />, document.getElementById('app')!)
