// The list routes answer in the turn they are asked, without a promise (issue 9: what the first
// page costs). Elysia decides per route, from its hooks and the handler's source, whether to await
// (compose.mjs isAsync): a parse hook on the route, or a handler returning a call's result, makes
// every request of it await. So the body parser sits only before routes that take a body
// (context.ts parseBody) and list handlers return `new Response(...)` of the list's answer
// (lists.ts ListAnswer). These tests fail when either slips, or when Elysia changes its rule.
import { afterAll, expect, test } from 'bun:test'
import { listNames } from '../../src/app.ts'
import { type TestApp, testApp } from '../helpers/app.ts'

const t: TestApp = testApp()
afterAll(() => t.cleanup())

type Hook = { fn?: unknown } | ((...args: unknown[]) => unknown) | string
type HistoryRoute = {
  method: string
  path: string
  hooks: { parse?: Hook[]; query?: unknown; detail?: { deprecated?: boolean } }
  composed?: unknown
  compile(): unknown
}
const history = () => (t.app as unknown as { router: { history: HistoryRoute[] } }).router.history
const parsers = (route: HistoryRoute) => (route.hooks.parse ?? []).map((h) => (typeof h === 'object' ? h.fn : h))

test('the body parser is on every route that may take a body and on no GET', () => {
  const routes = history()
  expect(routes.length).toBeGreaterThan(20)
  // Routes that read no body say so (parse 'none': a device's rescan, a proxy's remake, an asset's verification, a
  // task's cancel), and need no parser.
  const bodiless = routes
    .filter((route) => parsers(route).includes('none'))
    .map((route) => `${route.method} ${route.path}`)
  expect(bodiless).toEqual([
    'POST /api/devices/:id/scan',
    'POST /api/audioassets/:id/proxy',
    'POST /api/imageassets/:id/proxy',
    'POST /api/videoassets/:id/proxy',
    'POST /api/audioassets/:id/verify',
    'POST /api/imageassets/:id/verify',
    'POST /api/videoassets/:id/verify',
    'POST /api/projectassets/:id/verify',
    'POST /api/tasks/:id/cancel',
  ])
  for (const route of routes) {
    if (bodiless.includes(`${route.method} ${route.path}`)) continue
    const fns = parsers(route).filter((fn) => typeof fn === 'function') as { name: string }[]
    if (route.method === 'GET' || route.method === 'HEAD')
      expect({ route: `${route.method} ${route.path}`, parse: route.hooks.parse ?? [] }).toEqual({
        route: `${route.method} ${route.path}`,
        parse: [],
      })
    else
      expect({ route: `${route.method} ${route.path}`, ours: fns.some((fn) => fn.name === 'parseBody') }).toEqual({
        route: `${route.method} ${route.path}`,
        ours: true,
      })
  }
})

test('every list route compiles to a handler that is not async', async () => {
  const names = listNames(history())
  expect(names).toContain('videoassets')
  for (const name of names) {
    await t.get(`/api/${name}/?limit=1`) // composed on first use
    const route = history().find((r) => r.method === 'GET' && r.path === `/api/${name}/`)!
    const source = String(route.composed ?? route.compile())
    expect({ name, async: source.startsWith('async') }).toEqual({ name, async: false })
  }
})

test('a page is answered as a Response, not a promise of one, and is whole', async () => {
  const key = t.adminKey
  for (const path of [
    '/api/videoassets/?limit=1',
    '/api/devices/?limit=50&offset=0',
    '/api/projectassets/?limit=2',
    '/api/tasks/',
  ]) {
    const out = t.app.fetch(new Request(`http://localhost${path}`, { headers: { authorization: `Token ${key}` } }))
    expect({ path, sync: out instanceof Response }).toEqual({ path, sync: true })
    const response = out as Response
    expect(response.status).toBe(200)
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f]{16}$/)
    expect(Array.isArray(await response.json())).toBe(true)
  }
})
