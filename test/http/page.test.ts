// The web page's routes through app.handle: which paths answer the page and which stay the API's,
// the headers of each answer, codings, revalidation; and serve's build from source, made again
// after a file of the page changes.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { cpSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PAGE_CSP } from '../../src/http/page.ts'
import { UI_DIR, pageLoader } from '../../src/http/pagebuild.ts'
import { silentLog } from '../../src/util/log.ts'
import { type RequestOptions, tempDir, testApp } from '../helpers/app.ts'
import { testPage } from '../helpers/browser.ts'
import { waitFor } from '../helpers/wait.ts'

let t: ReturnType<typeof testApp>
beforeAll(async () => {
  const page = await testPage()
  t = testApp(undefined, { app: { pageFiles: async () => page } })
})
afterAll(() => t.cleanup())

const raw = (path: string, headers: Record<string, string> = {}) =>
  t.app.handle(new Request(`http://localhost${path}`, { headers }))

test('/ and every path of the page answer its HTML: no-cache, the CSP, compressed as accepted, with Vary', async () => {
  for (const path of [
    '/',
    '/signin',
    '/assets/video/12',
    '/projects',
    '/projects/3',
    '/tasks',
    '/devices',
    '/imports/',
    '/signin?next=%2Ftasks',
  ]) {
    const answer = await raw(path, { 'accept-encoding': 'gzip, deflate, br' })
    expect([
      path,
      answer.status,
      Object.fromEntries(
        [
          'content-type',
          'cache-control',
          'content-security-policy',
          'content-encoding',
          'vary',
          'x-content-type-options',
        ].map((h) => [h, answer.headers.get(h)]),
      ),
    ]).toEqual([
      path,
      200,
      {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-cache',
        'content-security-policy': PAGE_CSP,
        'content-encoding': 'br',
        vary: 'Accept-Encoding',
        'x-content-type-options': 'nosniff',
      },
    ])
  }
  expect(PAGE_CSP).toStartWith("default-src 'self'; ")
  expect(PAGE_CSP).toEndWith("frame-ancestors 'none'")
  const plain = await raw('/')
  expect([plain.headers.get('content-encoding'), (await plain.text()).slice(0, 15)]).toEqual([null, '<!doctype html>'])
  const gzip = await raw('/', { 'accept-encoding': 'gzip' })
  expect(gzip.headers.get('content-encoding')).toBe('gzip')
})

test('the HTML is revalidated with its ETag (304), its files are immutable under /ui/', async () => {
  const first = await raw('/')
  const etag = first.headers.get('etag')!
  expect(etag).toMatch(/^"[0-9a-z]+"$/)
  expect((await raw('/tasks', { 'if-none-match': etag })).status).toBe(304)
  const html = await first.text()
  const files = [...html.matchAll(/(?:src|href)="\/ui\/([^"]+)"/g)].map((m) => m[1]!)
  expect(files.length).toBe(3) // script, stylesheet, icon
  for (const name of files) {
    const answer = await raw(`/ui/${name}`, { 'accept-encoding': 'br' })
    expect([
      name,
      answer.status,
      answer.headers.get('cache-control'),
      answer.headers.get('content-encoding'),
      answer.headers.get('vary'),
    ]).toEqual([name, 200, 'public, max-age=31536000, immutable', 'br', 'Accept-Encoding'])
    expect(answer.headers.get('content-type')).toMatch(
      name.endsWith('.js') ? /^text\/javascript/ : name.endsWith('.css') ? /^text\/css/ : /^image\/svg\+xml/,
    )
  }
})

test("the page shadows none of the server's other paths", async () => {
  const status = async (path: string, options: RequestOptions = {}) => (await t.request('GET', path, options)).status
  expect(await status('/api/health')).toBe(200)
  expect(await status('/api/', { key: null })).toBe(401)
  expect(await status('/api/devices/')).toBe(200)
  expect((await raw('/api/docs')).headers.get('content-type')).toStartWith('text/html')
  expect((await raw('/api/docs')).headers.get('content-security-policy')).toBeNull()
  for (const path of ['/ui/nothing.js', '/ui/index.html', '/favicon.ico', '/signinx', '/apix', '/uix/1']) {
    const answer = await raw(path)
    expect([path, answer.status, answer.headers.get('content-type')?.split(';')[0]]).toEqual([
      path,
      404,
      'application/json',
    ])
  }
})

test('without page files (most tests) the app has no page routes', async () => {
  const bare = testApp()
  try {
    expect((await bare.app.handle(new Request('http://localhost/'))).status).toBe(404)
  } finally {
    bare.cleanup()
  }
})

test('serve from source builds the page at the first request, and again after a file of it changed', async () => {
  // A copy of src/ui with node_modules beside it (the page's imports resolve from there).
  const root = tempDir('reelhouse-ui-')
  const dir = join(root, 'ui')
  cpSync(UI_DIR, dir, { recursive: true })
  symlinkSync(join(UI_DIR, '..', '..', 'node_modules'), join(root, 'node_modules'))
  const loader = pageLoader(silentLog, { dir })
  try {
    const scriptOf = async () => [...(await loader.page()).keys()].find((name) => name.endsWith('.js'))!
    const before = await scriptOf()
    expect(before).toMatch(/^index-[a-z0-9]+\.js$/)
    expect(await scriptOf()).toBe(before) // nothing changed: the same build
    const shell = join(dir, 'shell.tsx')
    writeFileSync(shell, readFileSync(shell, 'utf8').replace('Skip to content', 'Skip to the content'))
    await waitFor(async () => (await scriptOf()) !== before, 'a new build after the change')
    const html = await (await loader.page()).get('index.html')!.identity.text()
    expect(html).toContain(`/ui/${await scriptOf()}`)
  } finally {
    loader.close()
  }
}, 30_000)
