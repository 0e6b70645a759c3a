// The web page in a real Chromium: served with its headers, loaded from this server only, signed in
// and out, its own paths reloaded directly, its first load's size; no console error, and axe finds
// no serious or critical violation.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import {
  BROWSER_TEST_MS,
  type BrowserHandle,
  type Tab,
  axe,
  eventually,
  pageServer,
  sharedBrowser,
} from '../helpers/browser.ts'

setDefaultTimeout(BROWSER_TEST_MS)

let server: Awaited<ReturnType<typeof pageServer>>
let browser: BrowserHandle
beforeAll(async () => {
  ;[server, browser] = await Promise.all([pageServer(), sharedBrowser()])
})
afterAll(async () => {
  await browser?.close()
  await server?.stop()
})

const text = (tab: Tab, selector: string) => tab.page.$eval(selector, (e) => e.textContent)

async function signIn(tab: Tab, username: string, password: string) {
  await tab.page.waitForSelector('input[name=username]')
  await tab.page.type('input[name=username]', username)
  await tab.page.type('input[name=password]', password)
  await tab.page.click('button[type=submit]')
}

test('/ answers the page: its HTML no-cache with the CSP, its files immutable and compressed; it loads from this server only, and axe passes on the sign-in view', async () => {
  await using tab = await browser.open(server.base)
  expect(tab.response!.headers()).toMatchObject({
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-cache',
    'content-security-policy': expect.stringMatching(/^default-src 'self'; .*frame-ancestors 'none'$/),
    'content-encoding': 'br',
    vary: 'Accept-Encoding',
  })
  const html = await (await fetch(server.base, { headers: { 'accept-encoding': 'identity' } })).text()
  const files = [...html.matchAll(/(?:src|href)="(\/ui\/[^"]+)"/g)].map((m) => m[1]!)
  expect(
    files.some((f) => /^\/ui\/index-[a-z0-9]+\.js$/.test(f)) &&
      files.some((f) => /^\/ui\/index-[a-z0-9]+\.css$/.test(f)),
  ).toBe(true)
  for (const file of files) {
    const answer = await fetch(`${server.base}${file}`, { headers: { 'accept-encoding': 'gzip' }, decompress: false })
    expect([
      file,
      answer.status,
      answer.headers.get('cache-control'),
      answer.headers.get('content-encoding'),
      answer.headers.get('vary'),
    ]).toEqual([file, 200, 'public, max-age=31536000, immutable', 'gzip', 'Accept-Encoding'])
  }
  await tab.page.waitForSelector('input[name=username]')
  await eventually(() => expect(tab.page.url()).toBe(`${server.base}/signin`))
  // The view's effect sets the title after its first paint (shell.tsx View): waited for, not raced.
  await eventually(async () => expect(await tab.page.title()).toBe('Sign in · Reelhouse'), 10_000)
  await axe(tab.page)
})

test('a bad password shows an error and keeps the user on the sign-in view', async () => {
  await using tab = await browser.open(server.base)
  tab.allowFailedResponse('/api/session/', 401)
  await signIn(tab, 'admin', 'not the key')
  await tab.page.waitForSelector('[role=alert]')
  await eventually(async () => expect(await text(tab, '[role=alert]')).toMatch(/invalid/i))
  await eventually(async () =>
    expect(await tab.page.$eval('input[name=password]', (e) => (e as unknown as { value: string }).value)).toBe(''),
  )
  expect(tab.page.url()).toBe(`${server.base}/signin`)
  await axe(tab.page)
})

test('signing in with a key shows the shell with the user; signing out returns to the sign-in view', async () => {
  await using tab = await browser.open(server.base)
  await signIn(tab, 'admin', server.adminKey)
  await tab.page.waitForSelector('[data-testid=username]')
  await eventually(async () => expect(await text(tab, '[data-testid=username]')).toBe('admin'))
  await eventually(async () => expect(await text(tab, 'h1')).toBe('Catalogue'))
  await eventually(() => expect(tab.page.url()).toBe(`${server.base}/assets`))
  // The key stays with the browser's password manager: the page keeps nothing of it (only the HttpOnly cookie signs it in).
  expect(await tab.page.evaluate('[localStorage.length, sessionStorage.length, document.cookie]')).toEqual([0, 0, ''])
  await axe(tab.page)
  await tab.page.click('xpath///button[normalize-space()="Sign out"]')
  await tab.page.waitForSelector('input[name=username]')
  await eventually(() => expect(tab.page.url()).toBe(`${server.base}/signin`))
  // The cookie went with the session: a reload stays signed out.
  await tab.page.reload({ waitUntil: 'load' })
  await tab.page.waitForSelector('input[name=username]')
})

test("a page path reloaded directly serves the page, which shows that path's view after sign-in", async () => {
  await using tab = await browser.open(server.base, '/tasks')
  await tab.page.waitForSelector('input[name=username]')
  await eventually(() => expect(tab.page.url()).toBe(`${server.base}/signin?next=%2Ftasks`))
  await signIn(tab, 'admin', server.adminKey)
  await tab.page.waitForFunction('document.querySelector("h1")?.textContent === "Tasks"')
  await eventually(() => expect(tab.page.url()).toBe(`${server.base}/tasks`))
  // Reloaded signed in: the same view again.
  await tab.page.reload({ waitUntil: 'load' })
  await tab.page.waitForFunction('document.querySelector("h1")?.textContent === "Tasks"')
  // Navigation within the page: a nav link, no reload.
  await tab.page.click('nav a[href="/devices"]')
  await tab.page.waitForFunction(
    'location.pathname === "/devices" && document.querySelector("h1")?.textContent === "Devices"',
  )
  await eventually(async () =>
    expect(await tab.page.$eval('nav a[aria-current=page]', (e) => e.getAttribute('href'))).toBe('/devices'),
  )
  // The heading is focused by the view's effect, after the paint that shows it (shell.tsx View).
  await eventually(async () => expect(await tab.page.evaluate('document.activeElement?.tagName')).toBe('H1'), 10_000)
})

for (const [path, heading] of [
  ['/projects', 'Projects'],
  ['/tasks', 'Tasks'],
  ['/devices', 'Devices'],
  ['/imports', 'Imports'],
  ['/assets/video/1', 'Video asset 1'],
  ['/nowhere/at/all', ''],
] as const) {
  test(`${path} opened directly ${heading ? `shows ${heading}, and axe passes` : 'is no page of ours: 404'}`, async () => {
    if (!heading) {
      const answer = await fetch(`${server.base}${path}`)
      expect([answer.status, answer.headers.get('content-type')?.split(';')[0]]).toEqual([404, 'application/json'])
      return
    }
    await using tab = await browser.open(server.base, '/signin')
    await signIn(tab, 'admin', server.adminKey)
    await tab.page.waitForSelector('[data-testid=username]')
    await tab.page.goto(`${server.base}${path}`, { waitUntil: 'load' })
    if (path.startsWith('/assets/')) tab.allowFailedResponse('/api/videoassets/1/', 404)
    await tab.page.waitForFunction(`document.querySelector("h1")?.textContent === ${JSON.stringify(heading)}`)
    await axe(tab.page)
  })
}

test('the first load transfers under 300 KB compressed', async () => {
  await using tab = await browser.open(server.base, '/signin')
  const cdp = await tab.page.createCDPSession()
  await cdp.send('Network.enable')
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true })
  const sizes = new Map<string, number>()
  const urls = new Map<string, string>()
  cdp.on('Network.requestWillBeSent', (event) => void urls.set(event.requestId, event.request.url))
  cdp.on(
    'Network.loadingFinished',
    (event) => void sizes.set(urls.get(event.requestId) ?? event.requestId, event.encodedDataLength),
  )
  await tab.page.reload({ waitUntil: 'networkidle0' })
  await tab.page.waitForSelector('input[name=username]')
  const total = [...sizes.values()].reduce((a, b) => a + b, 0)
  console.log(`first load: ${sizes.size} responses, ${total} bytes on the wire`, Object.fromEntries(sizes))
  expect(sizes.size).toBeGreaterThanOrEqual(3) // the HTML, its script and its stylesheet at least
  expect(total).toBeLessThan(300 * 1024)
})
