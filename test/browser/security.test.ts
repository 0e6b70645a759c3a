// The page as a whole in a real Chromium (issue 22, points 2, 8 and 9): a page on another port of
// 127.0.0.1, opened in the signed-in browser, cannot act through it (its fetches, form posts and
// event stream carry the cookie, since ports make no other site, and are refused 403: nothing
// changes and the user stays signed in); signing out ends the session (the cookie no longer
// works); every view fits 1280×720 and a 768×1024 tablet without a horizontal scrollbar, its
// navigation and sign-out in view; the keyboard reaches the skip link (which moves focus to the
// main region) and the navigation, with a visible focus ring; light and dark follow the system,
// and axe passes in both. No console error, no request to another host (the helper's tab).
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import type { Page } from 'puppeteer-core'
import { seedProduction } from '../helpers/app.ts'
import {
  BROWSER_TEST_MS,
  type BrowserHandle,
  type Tab,
  axe,
  eventually,
  pageServer,
  sharedBrowser,
  signedIn as openSignedIn,
} from '../helpers/browser.ts'

setDefaultTimeout(BROWSER_TEST_MS)

// Functions handed to the page (waitForFunction, evaluate) run there, with its globals: declared
// loosely here, since this project is type-checked without the DOM's types.
declare const document: any, innerWidth: number, innerHeight: number, getComputedStyle: (element: unknown) => any

let server: Awaited<ReturnType<typeof pageServer>>
let browser: BrowserHandle
let device: { id: number }

/** Every view of the nav, by its path, and its heading. */
const VIEWS = [
  ['/', 'Catalogue'],
  ['/projects', 'Projects'],
  ['/tasks', 'Tasks'],
  ['/devices', 'Devices'],
  ['/imports', 'Imports'],
] as const

beforeAll(async () => {
  ;[server, browser] = await Promise.all([pageServer(), sharedBrowser()])
  ;({ device } = await seedProduction(server))
  // A long path with no space to break at: a row must wrap it, not widen the page.
  const long = `/nowhere/${'a-very-long-folder-name-without-spaces'.repeat(6)}/clip.mov`
  const r = await server.post('/api/asset/import/', {
    type: 'video',
    production: 'Show',
    asset: { asset_meta: { name: 'clip', path_file: long } },
  })
  if (r.status !== 406) throw new Error(r.text)
})
afterAll(async () => {
  await browser?.close()
  await server?.stop()
})

const signedIn = (path = '/devices') => openSignedIn(browser, server.base, path, 'admin', server.adminKey)

/** Goes to `path` (a load of the page) and waits for its heading and the end of its first loads. */
async function show(page: Page, path: string, heading: string) {
  await page.goto(`${server.base}${path}`, { waitUntil: 'load' })
  await page.waitForFunction(
    (h: string) =>
      document.querySelector('h1')?.textContent === h &&
      ![...document.querySelectorAll('main [role=status]')].some((e) => e.textContent?.startsWith('Loading')),
    {},
    heading,
  )
}

/** A page of another origin: the same host, another port. It tries what a hostile page would, then sets its title. */
function hostilePage(base: string, deviceId: number, malloryKey: string) {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>working</title></head><body>
<iframe name="sink" title="sink"></iframe>
<form id="scan" method="POST" action="${base}/api/devices/${deviceId}/scan/" target="sink"></form>
<form id="create" method="POST" action="${base}/api/productions/" target="sink" enctype="text/plain"><input name='{"name":"Hostile form","storage_root":"/tmp/hostile-form","x":"' value='"}'></form>
<form id="signin" method="POST" action="${base}/api/session/" target="sink"><input name="username" value="mallory"><input name="password" value="${malloryKey}"></form>
<script>
const sink = document.querySelector('iframe')
const submit = (id) => new Promise((done) => { sink.onload = done; setTimeout(done, 3000); document.getElementById(id).submit() })
const attempt = (f) => f().then((r) => r.type + ' ' + r.status, (e) => 'failed: ' + e.name)
;(async () => {
  const results = {}
  results.scan = await attempt(() => fetch('${base}/api/devices/${deviceId}/scan/', { method: 'POST', credentials: 'include', mode: 'no-cors' }))
  results.create = await attempt(() => fetch('${base}/api/productions/', { method: 'POST', credentials: 'include', mode: 'no-cors',
    headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ name: 'Hostile', storage_root: '/tmp/hostile' }) }))
  results.read = await attempt(() => fetch('${base}/api/session/', { credentials: 'include' }))
  results.signout = await attempt(() => fetch('${base}/api/session/', { method: 'DELETE', credentials: 'include' }))
  results.events = await new Promise((done) => { const es = new EventSource('${base}/api/events/', { withCredentials: true }); es.onerror = () => { es.close(); done('error') }; es.onopen = () => { es.close(); done('open') } })
  for (const id of ['scan', 'create', 'signin']) await submit(id)
  window.results = results
  document.title = 'done'
})()
</script></body></html>`
  return Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: () => new Response(html, { headers: { 'content-type': 'text/html; charset=utf-8' } }),
  })
}

test('a page on another port of 127.0.0.1 cannot act through the signed-in browser: refused 403, nothing changed, the user still signed in', async () => {
  const malloryKey = server.makeUser('mallory')
  await using tab = await signedIn('/devices')
  const hostile = hostilePage(server.base, device.id, malloryKey)
  try {
    const other = `http://127.0.0.1:${hostile.port}`
    expect(other).not.toBe(server.base)
    // Another tab of the same browser (the same cookies): the user opened a link to a local dev server.
    const page = await tab.context.newPage()
    const seen: [string, string, number][] = []
    page.on('response', (response) => {
      const url = new URL(response.url())
      if (url.origin === server.base) seen.push([response.request().method(), url.pathname, response.status()])
    })
    // A CORS read the browser refused to hand to the page shows as a failed request, not a response.
    const failed: [string, string][] = []
    page.on('requestfailed', (request) => {
      const url = new URL(request.url())
      if (url.origin === server.base) failed.push([request.method(), url.pathname])
    })
    await page.goto(`${other}/`, { waitUntil: 'load' })
    await page.waitForFunction(() => document.title === 'done', { timeout: 15_000 })
    const results = await page.evaluate('window.results')
    await page.close()
    // Every write reached the server with the cookie (403, not 401: the session was there) and
    // was refused for its origin. The reads (the session, the event stream) were not handed to
    // the page; the sign-out (a DELETE, which needs a preflight) got no CORS answer.
    const writes: [string, string, number][] = [
      ['POST', `/api/devices/${device.id}/scan/`, 403],
      ['POST', `/api/devices/${device.id}/scan/`, 403],
      ['POST', '/api/productions/', 403],
      ['POST', '/api/productions/', 403],
      ['POST', '/api/session/', 403],
    ]
    expect(seen.filter(([method]) => method !== 'OPTIONS').sort()).toEqual(writes.sort())
    expect(failed).toEqual(
      expect.arrayContaining([
        ['GET', '/api/events/'],
        ['GET', '/api/session/'],
        ['DELETE', '/api/session/'],
      ]),
    )
    expect(results).toEqual({
      scan: 'opaque 0',
      create: 'opaque 0',
      read: 'failed: TypeError',
      signout: 'failed: TypeError',
      events: 'error',
    })
  } finally {
    await hostile.stop(true)
  }
  // Nothing changed: no scan queued, no production made, and the admin is still the one signed in.
  expect((await server.get('/api/tasks/?kind=scan')).json).toEqual([])
  expect(((await server.get('/api/productions/')).json as { name: string }[]).map((p) => p.name)).toEqual(['Show'])
  await tab.page.reload({ waitUntil: 'load' })
  await tab.page.waitForSelector('[data-testid=username]')
  await eventually(async () =>
    expect(await tab.page.$eval('[data-testid=username]', (e) => e.textContent)).toBe('admin'),
  )
  expect(
    await tab.page.evaluate(() =>
      fetch('/api/session/')
        .then((r) => r.json())
        .then((b: any) => [b.user?.username, b.via]),
    ),
  ).toEqual(['admin', 'session'])
})

test('signing out ends the session: the cookie no longer works, a reload stays signed out', async () => {
  await using tab = await signedIn('/devices')
  const cookie = (await tab.page.cookies()).find((c) => c.name === 'reelhouse_session')
  expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/' })
  // As the page itself sends it (same origin).
  const asThePage = () =>
    fetch(`${server.base}/api/devices/status/`, {
      headers: { cookie: `reelhouse_session=${cookie!.value}`, 'sec-fetch-site': 'same-origin', origin: server.base },
    })
  expect((await asThePage()).status).toBe(200)
  await tab.page.click('xpath///button[normalize-space()="Sign out"]')
  await tab.page.waitForSelector('input[name=username]')
  expect((await tab.page.cookies()).find((c) => c.name === 'reelhouse_session')).toBeUndefined()
  const after = await asThePage()
  expect([after.status, ((await after.json()) as { errors: { code: string }[] }).errors[0]!.code]).toEqual([
    401,
    'authentication_failed',
  ])
  await tab.page.goto(`${server.base}/devices`, { waitUntil: 'load' })
  await tab.page.waitForSelector('input[name=username]')
  await eventually(() => expect(new URL(tab.page.url()).pathname).toBe('/signin'))
})

for (const [width, height] of [
  [1280, 720],
  [768, 1024],
] as const) {
  test(`at ${width}×${height} every view fits the width, its navigation and sign-out in view`, async () => {
    await using tab = await signedIn('/devices')
    await tab.page.setViewport({ width, height })
    for (const [path, heading] of VIEWS) {
      await show(tab.page, path, heading)
      const layout = await tab.page.evaluate(() => {
        const inView = (e: any) => {
          const r = e.getBoundingClientRect()
          return (
            r.width > 0 && r.height > 0 && r.left >= 0 && r.right <= innerWidth && r.top >= 0 && r.bottom <= innerHeight
          )
        }
        return {
          scroll: document.documentElement.scrollWidth <= innerWidth,
          nav: [...document.querySelectorAll('nav[aria-label=Main] a')].map((a) => [a.textContent, inView(a)]),
          signOut: inView([...document.querySelectorAll('button')].find((b: any) => b.textContent === 'Sign out')),
        }
      })
      expect({ path, ...layout }).toEqual({
        path,
        scroll: true,
        signOut: true,
        nav: VIEWS.map(([, name]) => [name, true]),
      })
    }
  })
}

test('the keyboard: Tab reaches the skip link first, which moves focus to the main region; then the navigation and sign-out, each with a visible focus ring', async () => {
  await using tab = await signedIn('/devices')
  await show(tab.page, '/devices', 'Devices')
  const focused = () =>
    tab.page.evaluate(() => {
      const e = document.activeElement
      const style = getComputedStyle(e)
      const r = e.getBoundingClientRect()
      return {
        what:
          e.id === 'main'
            ? 'main'
            : e.classList.contains('skip')
              ? 'skip'
              : e.tagName === 'BUTTON'
                ? `button ${e.textContent}`
                : `${e.tagName.toLowerCase()} ${e.getAttribute('href')}`,
        ring: style.outlineStyle !== 'none' && Number.parseFloat(style.outlineWidth) >= 1,
        visible: r.width > 0 && r.top >= 0 && r.bottom <= innerHeight,
      }
    })
  await tab.page.keyboard.press('Tab')
  expect(await focused()).toEqual({ what: 'skip', ring: true, visible: true })
  expect(await tab.page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content')
  await tab.page.keyboard.press('Enter')
  await tab.page.waitForFunction(() => document.activeElement?.id === 'main')

  // From the top again: the skip link, the name, the navigation in order, sign-out.
  await tab.page.evaluate(() => document.activeElement?.blur())
  await show(tab.page, '/devices', 'Devices')
  const order: { what: string; ring: boolean; visible: boolean }[] = []
  for (let i = 0; i < 8; i++) {
    await tab.page.keyboard.press('Tab')
    order.push(await focused())
  }
  const nav = await tab.page.$$eval('nav[aria-label=Main] a', (links) => links.map((a) => a.getAttribute('href')))
  expect(nav).toHaveLength(VIEWS.length)
  expect(order).toEqual([
    { what: 'skip', ring: true, visible: true },
    { what: `a ${await tab.page.$eval('a.brand', (a) => a.getAttribute('href'))}`, ring: true, visible: true },
    ...nav.map((href) => ({ what: `a ${href}`, ring: true, visible: true })),
    { what: 'button Sign out', ring: true, visible: true },
  ])
})

test('light and dark follow the system; axe passes on every view in both', async () => {
  await using tab = await signedIn('/devices')
  const colours = async (scheme: 'light' | 'dark') => {
    await tab.page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: scheme }])
    return tab.page.evaluate(() => ({
      background: getComputedStyle(document.body).backgroundColor,
      text: getComputedStyle(document.body).color,
      header: getComputedStyle(document.querySelector('header')!).backgroundColor,
    }))
  }
  await show(tab.page, '/devices', 'Devices')
  const light = await colours('light')
  const dark = await colours('dark')
  expect(light).toEqual({ background: 'rgb(246, 247, 249)', text: 'rgb(27, 31, 36)', header: 'rgb(255, 255, 255)' })
  expect(dark.background).not.toBe(light.background)
  expect(dark.text).not.toBe(light.text)
  expect(dark.header).not.toBe(light.header)
  for (const scheme of ['light', 'dark'] as const) {
    await tab.page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: scheme }])
    for (const [path, heading] of VIEWS) {
      await show(tab.page, path, heading)
      await axe(tab.page).catch((error: Error) => {
        throw new Error(`${path} (${scheme}): ${error.message}`)
      })
    }
  }
})
