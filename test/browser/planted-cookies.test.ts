// Cookies planted by a page on another port of the same host, the way the finding was made: the
// compiled executable serves an empty data folder on 127.0.0.1; a page served on a second port of
// 127.0.0.1 (cookies are kept per host, not per port) runs `document.cookie = "reelhouse_session=
// <id>; path=/api/"` in the victim's browser, whose API requests then carry that cookie before
// their own (the longer path goes first). Bob's live session planted into a signed-in browser does
// not make the victim's page work as bob (cookies of two live sessions: refused, and removed), nor
// does it as `__Host-reelhouse_session` at / (on 127.0.0.1 a page of plain http may set that name);
// an id of no session planted before or after the sign-in does not keep the victim signed out.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../helpers/app.ts'
import {
  BROWSER_TEST_MS,
  type BrowserHandle,
  type Tab,
  eventually,
  sharedBrowser,
  signIn,
  signedIn,
} from '../helpers/browser.ts'
import { compiledExecutable, killAll, runCli, type Server, startServe } from '../helpers/process.ts'

setDefaultTimeout(BROWSER_TEST_MS)

// Functions handed to the page (waitForFunction, evaluate) run there, with its globals: declared
// loosely here, since this project is type-checked without the DOM's types.
declare const document: any

const dirs: string[] = []
let server: Server
let browser: BrowserHandle
let attacker: ReturnType<typeof Bun.serve>
let adminKey: string
let bobKey: string

beforeAll(async () => {
  const data = join(tempDir('reelhouse-planted-data-'), 'data')
  const cwd = tempDir('reelhouse-planted-cwd-')
  dirs.push(data, cwd)
  const cli = [await compiledExecutable()]
  ;[server, browser] = await Promise.all([startServe(data, { cli, cwd }), sharedBrowser()])
  adminKey = readFileSync(join(data, 'admin.token'), 'utf8').trim()
  expect((await runCli(['user', 'add', 'bob', '--data', data], { cli })).code).toBe(0)
  bobKey = (await runCli(['token', 'create', 'bob', '--data', data], { cli })).stdout.trim()
  // The other port: a page that sets the cookie its address names, for the whole host.
  attacker = Bun.serve({
    hostname: server.host,
    port: 0,
    fetch(request) {
      const cookie = new URL(request.url).searchParams.get('cookie') ?? ''
      const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>planting</title></head><body><script>
document.cookie = ${JSON.stringify(cookie)}
document.title = 'planted'
</script></body></html>`
      return new Response(html, { headers: { 'content-type': 'text/html; charset=utf-8' } })
    },
  })
}, 180_000)
afterAll(async () => {
  await attacker?.stop(true)
  await browser?.close()
  await killAll()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** Bob signs in himself (curl would do): the id of his live session. */
async function bobsSession(): Promise<string> {
  const r = await fetch(`${server.base}/api/session/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'bob', password: bobKey }),
  })
  expect(r.status).toBe(200)
  return /^reelhouse_session=([^;]+)/.exec(r.headers.getSetCookie()[0]!)![1]!
}

/** The page on the other port, opened in the victim's browser (another tab, the same cookies), sets `cookie`. */
async function plant(tab: Tab, cookie: string) {
  const other = `http://${server.host}:${attacker.port}`
  expect(other).not.toBe(server.base)
  const page = await tab.context.newPage()
  await page.goto(`${other}/?cookie=${encodeURIComponent(cookie)}`, { waitUntil: 'load' })
  await page.waitForFunction(() => document.title === 'planted')
  await page.close()
}

/** The session cookies (of either name) the browser sends with a request of the API: [value, path] (`__Host-` ones: [`__Host-` value, path]), the longer path first. */
const apiCookies = async (tab: Tab) =>
  (await tab.page.cookies(`${server.base}/api/devices/`))
    .filter((c) => c.name === 'reelhouse_session' || c.name === '__Host-reelhouse_session')
    .map((c) => [c.name === 'reelhouse_session' ? c.value : `__Host-${c.value}`, c.path])
    .sort((a, b) => b[1]!.length - a[1]!.length)

/** Who the page's own request says is signed in, and whether the page's own API call succeeds. */
const asThePage = (tab: Tab) =>
  tab.page.evaluate(async () => {
    const who = (await (
      await fetch('/api/session/', { headers: { 'x-requested-with': 'XMLHttpRequest' } })
    ).json()) as any
    const devices = await fetch('/api/devices/', { headers: { 'x-requested-with': 'XMLHttpRequest' } })
    return [who.user?.username ?? null, devices.status]
  })

/** Loads `path` again and answers the name the shell shows, or null when it shows the sign-in. */
async function reloadedAs(tab: Tab, path = '/devices') {
  await tab.page.goto(`${server.base}${path}`, { waitUntil: 'load' })
  await tab.page.waitForSelector('[data-testid=username], input[name=username]')
  return tab.page.$eval('body', () => document.querySelector('[data-testid=username]')?.textContent ?? null)
}

// As the finding has it (the plain name at /api/, sent first), and under the __Host- name at /: on
// 127.0.0.1, which browsers count as secure, a page of plain http may set that name too.
const PLANTINGS = [
  ['reelhouse_session at /api/', (id: string) => `reelhouse_session=${id}; path=/api/`, (id: string) => [id, '/api/']],
  [
    '__Host-reelhouse_session at /',
    (id: string) => `__Host-reelhouse_session=${id}; path=/; secure`,
    (id: string) => [`__Host-${id}`, '/'],
  ],
] as const

test.each(PLANTINGS)(
  "bob's live session planted as %s in a signed-in browser: the victim's page never works as bob, and signs in again as themselves",
  async (_, cookie, held) => {
    await using tab = await signedIn(browser, server.base, '/devices', 'admin', adminKey)
    const bob = await bobsSession()
    await plant(tab, cookie(bob))
    // The finding's state: bob's cookie and ours both go with every API request (at /api/: bob's first).
    expect(await apiCookies(tab)).toEqual(
      expect.arrayContaining([held(bob), [expect.stringMatching(/^[\w-]{43}$/), '/']]),
    )
    expect(await apiCookies(tab)).toHaveLength(2)

    // Cookies of two live sessions: taken as neither user; the answer removes both.
    expect(await reloadedAs(tab)).toBeNull()
    await eventually(() => expect(new URL(tab.page.url()).pathname).toBe('/signin'))
    expect(await apiCookies(tab)).toEqual([])

    // The victim signs in again, and works as themselves.
    await signIn(tab, 'admin', adminKey)
    await eventually(async () =>
      expect(await tab.page.$eval('[data-testid=username]', (e) => e.textContent)).toBe('admin'),
    )
    expect(await reloadedAs(tab)).toBe('admin')
    expect(await asThePage(tab)).toEqual(['admin', 200])
    // Bob's session is no worse for it: only the victim's browser lost the planted cookie.
    expect(
      (
        (await fetch(`${server.base}/api/session/`, { headers: { cookie: `reelhouse_session=${bob}` } }).then((r) =>
          r.json(),
        )) as any
      ).user.username,
    ).toBe('bob')
  },
)

test('an id of no session planted at /api/ before the sign-in: the victim signs in and works normally', async () => {
  await using tab = await browser.open(server.base, '/signin')
  await tab.page.waitForSelector('input[name=username]')
  await plant(tab, `reelhouse_session=${'A'.repeat(43)}; path=/api/`)
  expect(await apiCookies(tab)).toEqual([['A'.repeat(43), '/api/']])
  await signIn(tab, 'admin', adminKey)
  // The sign-in answer removed the planted cookie; the page's views load as admin, after a reload too.
  expect(await apiCookies(tab)).toEqual([[expect.stringMatching(/^[\w-]{43}$/), '/']])
  expect(await reloadedAs(tab)).toBe('admin')
  expect(await reloadedAs(tab, '/tasks')).toBe('admin')
  expect(await asThePage(tab)).toEqual(['admin', 200])
})

test('an id of no session planted at /api/ in a signed-in browser: the victim stays signed in and works on', async () => {
  await using tab = await signedIn(browser, server.base, '/devices', 'admin', adminKey)
  await plant(tab, `reelhouse_session=${'B'.repeat(43)}; path=/api/`)
  expect((await apiCookies(tab)).map(([, path]) => path)).toEqual(['/api/', '/'])
  // One live session and one of none: the live one.
  expect(await reloadedAs(tab)).toBe('admin')
  expect(await reloadedAs(tab, '/devices')).toBe('admin')
  expect(await asThePage(tab)).toEqual(['admin', 200])
})
