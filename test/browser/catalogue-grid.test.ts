// The catalogue with pictures, in a real Chromium: the grid and list views (a toggle kept in the
// URL), each asset's picture (its poster, or a neutral one with its kind's icon where it has none),
// paths shortened from the left so the file name shows (the whole path in the tooltip), the sort
// kept in the URL, selection by click, Ctrl-click, Shift-click, Space, Ctrl+A and Escape, and the
// bulk actions on it (approve, keywords, link to a project, delete after confirming), each saying
// what it did and what failed; by keyboard alone too. Posters, hover scrubbing and the sort need
// other parts of the server: their tests say so and end early while the server lacks them.
// axe on every state; no console error and no request to another host (the helper fails the test
// on either).
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { seedProduction } from '../helpers/app.ts'
import {
  BROWSER_TEST_MS,
  type BrowserHandle,
  type Tab,
  TASK_WAIT_MS,
  axe,
  eventually,
  pageServer,
  sharedBrowser,
  signedIn as openSignedIn,
} from '../helpers/browser.ts'
import { IMPORT, importBody, removeScratch, scratchDir } from '../helpers/imports.ts'
import { ff, hasFfmpeg } from '../helpers/media.ts'

setDefaultTimeout(BROWSER_TEST_MS)

// Functions handed to the page run there, with its globals: declared loosely (no DOM types here).
declare const document: any

let server: Awaited<ReturnType<typeof pageServer>>
let browser: BrowserHandle
let night: { id: number; storage_root: string; proxy_root: string }
let day: { id: number }
let nightRoot: string
let readerKey: string
let project: number
/** Ids by name. */
const ids: Record<string, number> = {}
/** The clip imported with ffmpeg (its proxy, and the pictures the server makes with it, if it does). */
let clip: number | undefined

async function asset(
  kind: 'video' | 'audio' | 'image',
  name: string,
  path: string,
  production: { id: number },
  extra: Record<string, unknown> = {},
) {
  mkdirSync(join(path, '..'), { recursive: true })
  writeFileSync(path, 'essence')
  const r = await server.post(`/api/${kind}assets/`, { name, path_file: path, production: production.id, ...extra })
  if (r.status !== 201) throw new Error(r.text)
  ids[name] = r.json.id
  return r.json.id as number
}

beforeAll(async () => {
  ;[server, browser] = await Promise.all([pageServer({ tasks: true }), sharedBrowser()])
  const a = await seedProduction(server, 'Night')
  const b = await seedProduction(server, 'Day')
  night = a.production
  day = b.production
  nightRoot = join(a.root, 'Night')
  const card = join(nightRoot, 'Shoot', 'Camera A', 'Day 2')
  await asset('video', 'A001C003', join(card, 'A001C003.mov'), night)
  await asset('video', 'A001C001', join(card, 'A001C001.mov'), night)
  await asset('video', 'A001C002', join(card, 'A001C002.mov'), night)
  await asset('audio', 'Harbour ambience', join(nightRoot, 'Sound', 'Day 2', 'harbour_ambience.wav'), night)
  await asset('image', 'Lighthouse still', join(nightRoot, 'Stills', 'lighthouse.png'), night)
  await asset('video', 'Market crowd', join(b.root, 'Day', 'market.mov'), day)
  expect(
    (
      await server.request('PATCH', `/api/videoassets/${ids.A001C003}/`, {
        body: { keywords: { Location: ['Harbour'] } },
      })
    ).status,
  ).toBe(200)
  const made = await server.post('/api/projectassets/', {
    name: 'Harbour cut',
    bundle_root: `${nightRoot}/cut/`,
    production_id: night.id,
  })
  expect(made.status).toBe(201)
  project = made.json.id
  readerKey = server.makeUser('reader', { read: [night.id] })
  // A real clip, imported with its proxy (and, where the server makes them, its poster and strip).
  if (hasFfmpeg) {
    const dir = scratchDir('reelhouse-grid-')
    const source = join(dir, 'A002C010.mov')
    await ff.run(
      'ffmpeg',
      [
        '-nostdin',
        '-v',
        'error',
        '-y',
        '-f',
        'lavfi',
        '-i',
        'testsrc=size=320x180:rate=25:duration=12',
        '-c:v',
        'mpeg4',
        '-q:v',
        '5',
        source,
      ],
      { timeoutMs: 60_000 },
    )
    const incoming = join(a.root, 'incoming')
    mkdirSync(incoming, { recursive: true })
    copyFileSync(source, join(incoming, 'A002C010.mov'))
    const r = await server.post(
      IMPORT,
      importBody(join(incoming, 'A002C010.mov'), { name: 'A002C010' }, {}, { production: 'Night' }),
    )
    expect(r.status).toBe(201)
    clip = r.json.asset_import_id
    await server.runner.idle()
  }
}, TASK_WAIT_MS * 2)
afterAll(async () => {
  await browser?.close()
  await server?.stop()
  removeScratch()
})

const signedIn = (path: string, username = 'admin', password = server.adminKey): Promise<Tab> =>
  openSignedIn(browser, server.base, path, username, password)
const query = (tab: Tab) => Object.fromEntries(new URL(tab.page.url()).searchParams)
/** The names the view shows, in order. */
const names = (tab: Tab) => tab.page.$$eval('.catalogue-rows a.asset-name', (links) => links.map((a) => a.textContent))
async function waitForNames(tab: Tab, want: string[]) {
  await eventually(async () => expect(await names(tab)).toEqual(want))
}
/** The names of the selected items, in the view's order. */
const selectedNames = (tab: Tab) =>
  tab.page.$$eval('.catalogue-rows .is-selected a.asset-name', (links) => links.map((a) => a.textContent))
const item = (name: string) => `xpath///li[.//a[normalize-space()="${name}"]]`
/** A click on an item's picture (not its link): selects it; `modifier` Control or Shift. */
async function clickItem(tab: Tab, name: string, modifier?: 'Control' | 'Shift') {
  if (modifier) await tab.page.keyboard.down(modifier)
  await tab.page.click(`${item(name)}//*[@data-testid="asset-poster"]`)
  if (modifier) await tab.page.keyboard.up(modifier)
}
const selectedCount = (tab: Tab) =>
  tab.page.$eval('[data-testid=selected-count]', (e) => e.textContent).catch(() => 'none selected')

const NIGHT_ORDER = ['A001C003', 'A001C001', 'A001C002', 'Harbour ambience', 'Lighthouse still']

test('the grid and the list: a toggle kept in the URL; each asset a picture, the neutral one of its kind when it has none', async () => {
  await using tab = await signedIn(`/assets?production=${night.id}`)
  const shown = hasFfmpeg ? [...NIGHT_ORDER.slice(0, 3), 'A002C010', ...NIGHT_ORDER.slice(3)] : NIGHT_ORDER
  await waitForNames(tab, shown)
  expect(await tab.page.$$eval('.asset-row', (rows) => rows.length)).toBe(shown.length)
  await tab.page.click('xpath///fieldset[legend="View"]//button[normalize-space()="Grid"]')
  await eventually(() => expect(query(tab)).toEqual({ production: String(night.id), view: 'grid' }))
  await tab.page.waitForSelector('.asset-tile')
  await waitForNames(tab, shown)
  expect(
    await tab.page.$eval('xpath///fieldset[legend="View"]//button[normalize-space()="Grid"]', (b) =>
      b.getAttribute('aria-pressed'),
    ),
  ).toBe('true')
  // Every tile has the same fixed box, its picture too.
  const boxes = await tab.page.$$eval('.asset-tile', (tiles) =>
    tiles.map((t) => {
      const r = t.getBoundingClientRect()
      const p = t.querySelector('[data-testid=asset-poster]').getBoundingClientRect()
      return [Math.round(r.width), Math.round(r.height), Math.round(p.width), Math.round(p.height)]
    }),
  )
  for (const box of boxes) expect(box).toEqual(boxes[0]!)
  // An asset without a poster: the neutral picture with its kind's icon.
  for (const [name, kind] of [
    ['A001C001', 'video'],
    ['Harbour ambience', 'audio'],
    ['Lighthouse still', 'image'],
  ] as const)
    expect(
      await tab.page.$eval(`${item(name)}//*[@data-testid="asset-poster"]`, (p) => [
        p.className,
        Boolean(p.querySelector('svg')),
      ]),
    ).toEqual([`asset-poster asset-poster-none asset-poster-${kind}`, true])
  await axe(tab.page)
  // The grid is kept across a reload (it is in the URL); the list is the toggle's other side.
  await tab.page.reload({ waitUntil: 'load' })
  await tab.page.waitForSelector('.asset-tile')
  await tab.page.click('xpath///fieldset[legend="View"]//button[normalize-space()="List"]')
  await eventually(() => expect(query(tab)).toEqual({ production: String(night.id) }))
  await tab.page.waitForSelector('.asset-row')
  await axe(tab.page)
})

test('paths are shortened from the left: the file name always shows, the whole path in the tooltip', async () => {
  await using tab = await signedIn(`/assets?production=${night.id}&view=grid`)
  await tab.page.waitForSelector(item('A001C003'))
  const full = join(nightRoot, 'Shoot', 'Camera A', 'Day 2', 'A001C003.mov')
  const path = () =>
    tab.page.$eval(`${item('A001C003')}//*[contains(@class, "asset-path")]`, (e) => [
      e.textContent,
      e.getAttribute('title'),
      // Nothing of it is cut off: its box holds its text.
      e.scrollHeight <= e.clientHeight + 1 && e.scrollWidth <= e.clientWidth + 1,
    ])
  const [text, title, whole] = await path()
  expect(title).toBe(full)
  expect(whole).toBe(true)
  expect(text).toMatch(/^…\/.*Day 2\/A001C003\.mov$/)
  expect(full.endsWith(text!.slice(1))).toBe(true)
  // In the list too.
  await tab.page.goto(`${server.base}/assets?production=${night.id}`, { waitUntil: 'load' })
  await tab.page.waitForSelector(`${item('A001C003')}[contains(@class, "asset-row")]`)
  const [rowText, rowTitle] = await path()
  expect(rowTitle).toBe(full)
  expect(rowText!.endsWith('/Day 2/A001C003.mov')).toBe(true)
  // The file name's end is in view in its column (the row cuts a long path on its left).
  const fileShown = await tab.page.$eval(`${item('A001C003')}//*[contains(@class, "asset-path")]`, (e) => {
    const box = e.getBoundingClientRect()
    const inner = e.firstElementChild.getBoundingClientRect()
    return inner.right <= box.right + 1
  })
  expect(fileShown).toBe(true)
})

test('the sort is kept in the URL and the list follows it', async () => {
  const byName = (await server.get(`/api/videoassets/?production=${night.id}&ordering=name`)).json as { name: string }[]
  const sorted =
    Array.isArray(byName) &&
    byName.map((r) => r.name).join() === 'A001C001,A001C002,A001C003' + (clip ? ',A002C010' : '')
  if (!sorted) {
    console.warn('skipped: the media lists do not sort by ?ordering=name yet')
    return
  }
  await using tab = await signedIn(`/assets?production=${night.id}&kind=video&sort=name`)
  const videos = ['A001C001', 'A001C002', 'A001C003', ...(clip ? ['A002C010'] : [])]
  await waitForNames(tab, videos)
  expect(await tab.page.$eval('#catalogue-sort', (s) => s.value)).toBe('name')
  await tab.page.select('#catalogue-sort', '-name')
  await eventually(() => expect(query(tab)).toEqual({ production: String(night.id), kind: 'video', sort: '-name' }))
  await waitForNames(tab, [...videos].reverse())
  await axe(tab.page)
  // A search ranks by relevance: the sort says so and is not offered.
  await tab.page.type('#catalogue-q', 'A001')
  await eventually(async () =>
    expect(await tab.page.$eval('#catalogue-sort', (s) => [s.disabled, s.value])).toEqual([true, '']),
  )
})

test('selection: a click, Ctrl-click, Shift-click; Ctrl+A all, Escape none', async () => {
  await using tab = await signedIn(`/assets?production=${night.id}&view=grid&kind=video`)
  await tab.page.waitForSelector(item('A001C002'))
  await clickItem(tab, 'A001C003')
  await eventually(async () => expect(await selectedNames(tab)).toEqual(['A001C003']))
  expect(await selectedCount(tab)).toBe('1 asset selected')
  // Shift-click: the range from the last one clicked.
  await clickItem(tab, 'A001C002', 'Shift')
  await eventually(async () => expect(await selectedNames(tab)).toEqual(['A001C003', 'A001C001', 'A001C002']))
  // Ctrl-click takes one away, and again adds it back.
  await clickItem(tab, 'A001C001', 'Control')
  await eventually(async () => expect(await selectedNames(tab)).toEqual(['A001C003', 'A001C002']))
  expect(await selectedCount(tab)).toBe('2 assets selected')
  await clickItem(tab, 'A001C001', 'Control')
  await eventually(async () => expect(await selectedNames(tab)).toEqual(['A001C003', 'A001C001', 'A001C002']))
  expect(await selectedCount(tab)).toBe('3 assets selected')
  // Each selected item's box says so.
  expect(await tab.page.$$eval('.asset-tile .asset-select', (boxes) => boxes.filter((b) => b.checked).length)).toBe(3)
  await axe(tab.page)
  // A plain click: that one alone.
  await clickItem(tab, 'A001C001')
  await eventually(async () => expect(await selectedNames(tab)).toEqual(['A001C001']))
  await tab.page.focus(`${item('A001C001')}//a`)
  await tab.page.keyboard.down('Control')
  await tab.page.keyboard.press('a')
  await tab.page.keyboard.up('Control')
  const all = hasFfmpeg ? 4 : 3
  await eventually(async () => expect(await selectedCount(tab)).toBe(`${all} assets selected`))
  await tab.page.keyboard.press('Escape')
  await eventually(async () => expect(await selectedCount(tab)).toBe('none selected'))
  // The name is a link: a click on it opens the asset.
  await tab.page.click(`${item('A001C003')}//a`)
  await eventually(() => expect(new URL(tab.page.url()).pathname).toBe(`/assets/video/${ids.A001C003}`))
})

test('by keyboard alone: arrows move through the grid, Space selects, and an action runs from its button', async () => {
  await using tab = await signedIn(`/assets?production=${night.id}&view=grid`)
  await tab.page.waitForSelector(item('Lighthouse still'))
  const focused = () => tab.page.evaluate(() => document.activeElement?.textContent)
  await tab.page.focus('a[data-index="0"]')
  await tab.page.keyboard.press('ArrowRight')
  await eventually(async () => expect(await focused()).toBe('A001C001'))
  await tab.page.keyboard.press(' ')
  await tab.page.keyboard.press('ArrowRight')
  await eventually(async () => expect(await focused()).toBe('A001C002'))
  await tab.page.keyboard.down('Control')
  await tab.page.keyboard.press(' ')
  await tab.page.keyboard.up('Control')
  await eventually(async () => expect(await selectedNames(tab)).toEqual(['A001C001', 'A001C002']))
  // Down goes a line of tiles on (as many as fit), End to the last.
  const columns = await tab.page.$eval('.catalogue-window', (w) => Math.floor(w.clientWidth / 216))
  await tab.page.keyboard.press('ArrowLeft')
  await tab.page.keyboard.press('ArrowDown')
  const shown = hasFfmpeg ? [...NIGHT_ORDER.slice(0, 3), 'A002C010', ...NIGHT_ORDER.slice(3)] : NIGHT_ORDER
  await eventually(async () => expect(await focused()).toBe(shown[Math.min(shown.length - 1, 1 + columns)]))
  await tab.page.keyboard.press('End')
  await eventually(async () => expect(await focused()).toBe('Lighthouse still'))
  // Shift+Space: the range from the last chosen (A001C002) to here.
  await tab.page.keyboard.down('Shift')
  await tab.page.keyboard.press(' ')
  await tab.page.keyboard.up('Shift')
  await eventually(async () => expect(await selectedNames(tab)).toEqual(shown.slice(2)))
  // The actions are buttons above the list: Enter on one runs it.
  await tab.page.focus('xpath///button[normalize-space()="Select none"]')
  await tab.page.keyboard.press('Enter')
  await eventually(async () => expect(await selectedCount(tab)).toBe('none selected'))
  await axe(tab.page)
})

test('approve: the selected assets approved, and it says so', async () => {
  await using tab = await signedIn(`/assets?production=${night.id}&kind=video`)
  await tab.page.waitForSelector(item('A001C002'))
  await clickItem(tab, 'A001C001')
  await clickItem(tab, 'A001C002', 'Shift')
  await eventually(async () => expect(await selectedCount(tab)).toBe('2 assets selected'))
  await tab.page.click('xpath///button[normalize-space()="Approve"]')
  await tab.page.waitForSelector('[data-testid=bulk-done]')
  expect(await tab.page.$eval('[data-testid=bulk-done]', (e) => e.textContent)).toBe('Approved 2 assets.')
  for (const name of ['A001C001', 'A001C002'])
    expect((await server.get(`/api/videoassets/${ids[name]}/`)).json.status_approval).toBe(1)
  expect((await server.get(`/api/videoassets/${ids.A001C003}/`)).json.status_approval).toBe(0)
  // The rows say it too.
  await eventually(async () =>
    expect(await tab.page.$eval(`${item('A001C001')}//*[@class="asset-approval"]`, (e) => e.textContent)).toBe(
      'approved',
    ),
  )
  await axe(tab.page)
})

test('a reader may approve nothing: each failure is listed with its reason', async () => {
  await using tab = await signedIn(`/assets?production=${night.id}&kind=video`, 'reader', readerKey)
  for (const name of ['A001C003', 'A001C001']) tab.allowFailedResponse(`/api/videoassets/${ids[name]}/`, 403)
  await tab.page.waitForSelector(item('A001C001'))
  await clickItem(tab, 'A001C003')
  await clickItem(tab, 'A001C001', 'Control')
  await tab.page.click('xpath///button[normalize-space()="Approve"]')
  await tab.page.waitForSelector('[data-testid=bulk-done]')
  expect(await tab.page.$eval('[data-testid=bulk-done]', (e) => e.textContent)).toBe('Approved 0 assets; 2 failures:')
  const failed = await tab.page.$$eval('[data-testid=bulk-failed] li', (items) => items.map((li) => li.textContent))
  expect(failed).toHaveLength(2)
  for (const line of failed) expect(line).toMatch(/^A001C00[13]: .+/)
  expect((await server.get(`/api/videoassets/${ids.A001C003}/`)).json.status_approval).toBe(0)
  await axe(tab.page)
})

test('keywords: added to each selected asset, its other keywords kept', async () => {
  await using tab = await signedIn(`/assets?production=${night.id}&kind=video`)
  await tab.page.waitForSelector(item('A001C002'))
  await clickItem(tab, 'A001C003')
  await clickItem(tab, 'A001C002', 'Control')
  await tab.page.click('xpath///button[normalize-space()="Add keywords…"]')
  await tab.page.waitForSelector('dialog[open] #catalogue-keyword-category')
  await eventually(async () =>
    expect(await tab.page.evaluate(() => document.activeElement?.id)).toBe('catalogue-keyword-category'),
  )
  await axe(tab.page)
  // Nothing typed: said in the dialog, nothing sent.
  await tab.page.click('xpath///dialog//button[normalize-space()="Add keywords"]')
  await tab.page.waitForSelector('dialog[open] [role=alert]')
  await tab.page.type('#catalogue-keyword-category', 'Location')
  await tab.page.type('#catalogue-keyword-words', 'Pier, Harbour,  Night ')
  await tab.page.click('xpath///dialog//button[normalize-space()="Add keywords"]')
  await tab.page.waitForSelector('[data-testid=bulk-done]')
  expect(await tab.page.$eval('[data-testid=bulk-done]', (e) => e.textContent)).toBe(
    'Added Location: Pier, Harbour, Night to 2 assets.',
  )
  // The server keeps each category's keywords in its own order: compared as sets.
  const keywords = async (id: number) =>
    Object.fromEntries(
      Object.entries((await server.get(`/api/videoassets/${id}/`)).json.keywords as Record<string, string[]>).map(
        ([category, words]) => [category, [...words].sort()],
      ),
    )
  expect(await keywords(ids.A001C003!)).toEqual({ Location: ['Harbour', 'Night', 'Pier'] })
  expect(await keywords(ids.A001C002!)).toEqual({ Location: ['Harbour', 'Night', 'Pier'] })
  await axe(tab.page)
})

test('link to a project: the selected assets linked; one who may not is told why, for each', async () => {
  {
    await using tab = await signedIn('/assets?kind=video')
    await tab.page.waitForSelector(item('Market crowd'))
    await clickItem(tab, 'A001C001')
    await clickItem(tab, 'Market crowd', 'Control')
    await tab.page.click('xpath///button[normalize-space()="Link to a project…"]')
    await tab.page.waitForSelector('dialog[open] #catalogue-link-project option[value]:not([value=""])')
    await axe(tab.page)
    await tab.page.select('#catalogue-link-project', String(project))
    await tab.page.click('xpath///dialog//button[normalize-space()="Link"]')
    await tab.page.waitForSelector('[data-testid=bulk-done]')
    expect(await tab.page.$eval('[data-testid=bulk-done]', (e) => e.textContent)).toBe(
      'Linked to “Harbour cut” 2 assets.',
    )
    const linked = (await server.get(`/api/projectassets/${project}/`)).json.video_assets as { id: number }[]
    expect(linked.map((v) => v.id).sort()).toEqual([ids.A001C001!, ids['Market crowd']!].sort())
    await axe(tab.page)
  }
  // A reader of the production may not change its projects: nothing linked, each asset said.
  await using tab = await signedIn('/assets?kind=video', 'reader', readerKey)
  tab.allowFailedResponse(`/api/projectassets/${project}/addasset/`, 403)
  await tab.page.waitForSelector(item('A001C003'))
  await clickItem(tab, 'A001C003')
  await tab.page.click('xpath///button[normalize-space()="Link to a project…"]')
  await tab.page.waitForSelector('dialog[open] #catalogue-link-project option[value]:not([value=""])')
  await tab.page.select('#catalogue-link-project', String(project))
  await tab.page.click('xpath///dialog//button[normalize-space()="Link"]')
  await tab.page.waitForSelector('[data-testid=bulk-done]')
  expect(await tab.page.$eval('[data-testid=bulk-done]', (e) => e.textContent)).toBe(
    'Linked to “Harbour cut” 0 assets; 1 failure:',
  )
  expect(await tab.page.$eval('[data-testid=bulk-failed]', (e) => e.textContent)).toMatch(/^A001C003: .+/)
  const linked = (await server.get(`/api/projectassets/${project}/`)).json.video_assets as { id: number }[]
  expect(linked.map((v) => v.id)).not.toContain(ids.A001C003)
  await axe(tab.page)
})

test('delete: asked first (Cancel has focus); confirmed, the records go and the list follows', async () => {
  const gone = await asset('video', 'Outtake 1', join(nightRoot, 'Outtakes', 'o1.mov'), night)
  const gone2 = await asset('video', 'Outtake 2', join(nightRoot, 'Outtakes', 'o2.mov'), night)
  await using tab = await signedIn(`/assets?production=${night.id}&kind=video&view=grid`)
  await tab.page.waitForSelector(item('Outtake 2'))
  await clickItem(tab, 'Outtake 1')
  await clickItem(tab, 'Outtake 2', 'Shift')
  await tab.page.click('xpath///button[normalize-space()="Delete…"]')
  await tab.page.waitForSelector('dialog[open]')
  await eventually(async () =>
    expect(await tab.page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel'),
  )
  expect(await tab.page.$$eval('dialog[open] li', (items) => items.map((li) => li.textContent))).toEqual([
    'Outtake 1',
    'Outtake 2',
  ])
  await axe(tab.page)
  await tab.page.keyboard.press('Escape')
  await tab.page.waitForSelector('dialog', { hidden: true })
  expect((await server.get(`/api/videoassets/${gone}/`)).status).toBe(200)
  await tab.page.click('xpath///button[normalize-space()="Delete…"]')
  await tab.page.click('xpath///dialog//button[normalize-space()="Delete 2 records"]')
  await tab.page.waitForSelector('[data-testid=bulk-done]')
  expect(await tab.page.$eval('[data-testid=bulk-done]', (e) => e.textContent)).toBe('Deleted 2 assets.')
  expect((await server.get(`/api/videoassets/${gone}/`)).status).toBe(404)
  expect((await server.get(`/api/videoassets/${gone2}/`)).status).toBe(404)
  await eventually(async () => expect(await names(tab)).not.toContain('Outtake 1'))
  await axe(tab.page)
})

test.skipIf(!hasFfmpeg)(
  "a video's poster in the grid (decoded off the main thread), and scrubbing its strip under the mouse",
  async () => {
    // The grid reads its rows from the list with ?pictures=true, whose rows carry the pictures (made of the catalogue's columns).
    const listed = (await server.get(`/api/videoassets/?production=${night.id}&pictures=true&limit=100`)).json as {
      id: number
      poster_url: string
      strip_url: string
    }[]
    const record = listed.find((r) => r.id === clip)!
    expect(record.poster_url).toMatch(/\/poster\/\?v=/)
    expect(record.strip_url).toMatch(/\/strip\/index\/\?v=/)
    await using tab = await signedIn(`/assets?production=${night.id}&kind=video&view=grid`)
    const poster = `${item('A002C010')}//*[@data-testid="asset-poster"]`
    await tab.page.waitForSelector(`${poster}//img`)
    // A picture's URL names the host it was asked on (the page's, the server's address; this
    // record's, the in-process one): the same path and version.
    const local = (url: string) => url.slice(new URL(url).origin.length)
    expect(
      await tab.page.$eval(`${poster}//img`, (img) => [
        img.getAttribute('decoding'),
        img.src.slice(img.src.indexOf('/api/')),
      ]),
    ).toEqual(['async', local(record.poster_url)])
    // The XPath without puppeteer's `xpath/` prefix, which document.evaluate does not take.
    await tab.page.waitForFunction(
      (x: string) =>
        document.evaluate(x, document, null, 9, null).singleNodeValue?.querySelector('img')?.naturalWidth > 0,
      {},
      poster.slice('xpath/'.length),
    )
    await axe(tab.page)
    const box = (await (await tab.page.$(poster))!.boundingBox())!
    await tab.page.mouse.move(box.x + 2, box.y + box.height / 2)
    await tab.page.waitForSelector('[data-testid=asset-scrub]')
    const first = await tab.page.$eval('[data-testid=asset-scrub]', (e) => Number(e.getAttribute('data-tile')))
    await tab.page.mouse.move(box.x + box.width - 2, box.y + box.height / 2)
    await eventually(async () =>
      expect(
        await tab.page.$eval('[data-testid=asset-scrub]', (e) => Number(e.getAttribute('data-tile'))),
      ).toBeGreaterThan(first),
    )
    expect(await tab.page.$eval('[data-testid=asset-scrub]', (e) => e.style.backgroundImage)).toMatch(
      /^url\(".*\/strip\//,
    )
    await tab.page.mouse.move(0, 0)
    await tab.page.waitForSelector('[data-testid=asset-scrub]', { hidden: true })
  },
)
