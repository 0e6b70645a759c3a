// The import logs view in a real Chromium (issue 22, point 7): the recent imports newest first
// with their status (completed with the warnings of a missing ffmpeg, refused with the reason),
// failed ones first on request (a checkbox kept in the URL, so a reload keeps it), and an import
// made while the view is open appearing live. axe on every state; no console error, no other host.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
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
import { IMPORT, emptyFfmpegDir, removeScratch } from '../helpers/imports.ts'

setDefaultTimeout(BROWSER_TEST_MS)

// Functions handed to the page (waitForFunction, evaluate) run there, with its globals: declared
// loosely here, since this project is type-checked without the DOM's types.
declare const document: any, innerWidth: number, innerHeight: number, getComputedStyle: (element: unknown) => any

let server: Awaited<ReturnType<typeof pageServer>>
let browser: BrowserHandle
let root: string

/** An import of `path` through the API: a file of the production's folder imports; a path on no device is refused (406), its log says why. */
async function importPath(path: string) {
  const r = await server.post(IMPORT, {
    type: 'video',
    production: 'Show',
    asset: { asset_meta: { name: path.split('/').at(-1), path_file: path } },
  })
  if (r.status !== 201 && r.status !== 406) throw new Error(`${r.status} ${r.text}`)
  return r.status
}
const good = (name: string) => {
  const path = join(root, 'Show', name)
  writeFileSync(path, `essence of ${name}`)
  return path
}

beforeAll(async () => {
  ;[server, browser] = await Promise.all([
    pageServer({ tasks: true, core: { ffmpegDir: emptyFfmpegDir() } }),
    sharedBrowser(),
  ])
  ;({ root } = await seedProduction(server))
  // Log ids 1..6 in this order.
  for (const path of [
    good('one.mov'),
    '/nowhere/two.mov',
    good('three.mov'),
    good('four.mov'),
    '/nowhere/five.mov',
    good('six.mov'),
  ])
    await importPath(path)
  await server.runner.idle()
})
afterAll(async () => {
  await browser?.close()
  await server?.stop()
  removeScratch()
})

const signedIn = (path: string) => openSignedIn(browser, server.base, path, 'admin', server.adminKey)

/** The rows as shown: [log id, state, the path's file name]. */
const rows = (tab: Tab) =>
  tab.page.$$eval('li.import', (items) =>
    items.map((li) => [
      Number(li.getAttribute('data-import')),
      li.querySelector('[data-testid=import-state]')?.textContent?.trim(),
      li.querySelector('.import-path')?.textContent?.split('/').at(-1),
    ]),
  )
const firstRowIs = (tab: Tab, id: number) =>
  tab.page.waitForFunction(
    (n: number) => document.querySelector('li.import')?.getAttribute('data-import') === String(n),
    {},
    id,
  )

const NEWEST_FIRST = [
  [6, 'completed', 'six.mov'],
  [5, 'refused', 'five.mov'],
  [4, 'completed', 'four.mov'],
  [3, 'completed', 'three.mov'],
  [2, 'refused', 'two.mov'],
  [1, 'completed', 'one.mov'],
]
const FAILED_FIRST = [
  [5, 'refused', 'five.mov'],
  [2, 'refused', 'two.mov'],
  [6, 'completed', 'six.mov'],
  [4, 'completed', 'four.mov'],
  [3, 'completed', 'three.mov'],
  [1, 'completed', 'one.mov'],
]

test('recent imports newest first with their status and reason; failed first on request, kept over a reload; a new import appears live', async () => {
  await using tab = await signedIn('/imports')
  await tab.page.waitForSelector('li.import')
  // The title is set by the view's effect, after the paint that shows it.
  await eventually(async () => expect(await tab.page.title()).toBe('Imports · Reelhouse'))
  await eventually(async () => expect(await rows(tab)).toEqual(NEWEST_FIRST))
  await eventually(async () =>
    expect(await tab.page.$eval('.imports-count', (e) => e.textContent)).toBe('6 imports, newest first.'),
  )
  // A refused path says why; a completed import links its asset and shows its warnings.
  expect(await tab.page.$eval('li.import[data-import="5"] .import-error', (e) => e.textContent)).toBe(
    'The path does not lie on any device.',
  )
  const six = await tab.page.$eval('li.import[data-import="6"]', (li) => ({
    link: li.querySelector('a')?.getAttribute('href'),
    warnings: [...li.querySelectorAll('.import-warning strong')].map((s) => s.textContent),
  }))
  expect(six).toEqual({ link: expect.stringMatching(/^\/assets\/video\/\d+$/), warnings: ['probe:', 'proxy:'] })
  await axe(tab.page)

  // Failed first: a checkbox with a name, kept in the URL.
  expect(
    await tab.page.$eval('input[name=failed-first]', (e) =>
      (e as unknown as { labels: { textContent: string }[] }).labels[0]?.textContent.trim(),
    ),
  ).toBe('Failed first')
  await tab.page.click('input[name=failed-first]')
  await firstRowIs(tab, 5)
  await eventually(() => expect(new URL(tab.page.url()).search).toBe('?failed=first'))
  await eventually(async () => expect(await rows(tab)).toEqual(FAILED_FIRST))
  await eventually(async () =>
    expect(await tab.page.$eval('.imports-count', (e) => e.textContent)).toBe('6 imports, failed first.'),
  )
  await axe(tab.page)
  await tab.page.reload({ waitUntil: 'load' })
  await tab.page.waitForSelector('li.import')
  await eventually(async () =>
    expect(
      await tab.page.$eval('input[name=failed-first]', (e) => (e as unknown as { checked: boolean }).checked),
    ).toBe(true),
  )
  await eventually(async () => expect(await rows(tab)).toEqual(FAILED_FIRST))

  // Imports made meanwhile come in live: a refused one goes first, a completed one after the failed.
  expect(await importPath('/nowhere/seven.mov')).toBe(406)
  expect(await importPath(good('eight.mov'))).toBe(201)
  await server.runner.idle()
  await firstRowIs(tab, 7)
  await tab.page.waitForFunction(
    () => document.querySelector('li.import[data-import="8"] [data-testid=import-state]')?.textContent === 'completed',
  )
  await eventually(async () => expect((await rows(tab)).map((r) => r[0])).toEqual([7, 5, 2, 8, 6, 4, 3, 1]))
  await eventually(async () =>
    expect(await tab.page.$eval('.imports-count', (e) => e.textContent)).toBe('8 imports, failed first.'),
  )

  // Back to newest first.
  await tab.page.click('input[name=failed-first]')
  await firstRowIs(tab, 8)
  await eventually(() => expect(new URL(tab.page.url()).search).toBe(''))
  await eventually(async () => expect((await rows(tab)).map((r) => r[0])).toEqual([8, 7, 6, 5, 4, 3, 2, 1]))
  await axe(tab.page)
})

test('a user who reads no production sees no import log, and the view says so', async () => {
  const key = server.makeUser('nobody')
  const tab = await browser.open(server.base, '/signin?next=%2Fimports')
  await using _ = tab
  await tab.page.waitForSelector('input[name=username]')
  await tab.page.type('input[name=username]', 'nobody')
  await tab.page.type('input[name=password]', key)
  await tab.page.click('button[type=submit]')
  await tab.page.waitForFunction(() => document.querySelector('.imports-count')?.textContent === 'No imports yet.')
  expect(await tab.page.$$('li.import')).toHaveLength(0)
  await axe(tab.page)
})
