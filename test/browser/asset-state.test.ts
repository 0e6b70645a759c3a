// What the catalogue and the asset page say of an asset that is not as it should be, and how they
// write what they show, in a real Chromium: a failed import is "import failed" in the list and on
// its page (never "online" alone), with the import's error; an asset whose device's folder is gone
// says so, and why, in place of the player (no dead <video>); one whose file is missing says that.
// Every date (asset, history, tasks, project) is written one way, `YYYY-MM-DD HH:MM` in the
// browser's time zone, with the exact value in <time datetime>; a video's duration is timecode at
// its frame rate; the technical details carry labels and units, never raw keys. axe on every
// state; no console error and no request to another host (the helper fails the test on either).
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdirSync, renameSync, writeFileSync } from 'node:fs'
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
  signIn,
} from '../helpers/browser.ts'
import { IMPORT, emptyFfmpegDir, importBody, removeScratch } from '../helpers/imports.ts'

setDefaultTimeout(BROWSER_TEST_MS)

// Functions handed to the page (waitForFunction, $eval) run there, with its globals: declared
// loosely here, since this project is type-checked without the DOM's types.
declare const document: any

/** A zone away from UTC by a half hour, so that a date shown in UTC, or cut to the hour, cannot pass. */
const ZONE = 'Asia/Kolkata'
/** One way for every date the page writes. */
const DATE = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/

let server: Awaited<ReturnType<typeof pageServer>>
let browser: BrowserHandle
/** The asset whose import failed (its move refused), and its import's task. */
let failed: { id: number; task: number }
/** A video imported with its rate, duration and drop-frame timecode given (no ffmpeg to probe). */
let timed: number
/** An asset on a device whose folder is then taken away; its device. */
let stranded: number
let strandedDevice: { id: number; name: string; path: string }
/** An asset whose file is missing (is_production false) on a device that is there. */
let lost: number
let project: number

beforeAll(async () => {
  // No ffmpeg: the imports below finish without probing, keeping what their requests gave.
  ;[server, browser] = await Promise.all([
    pageServer({ tasks: true, core: { ffmpegDir: emptyFfmpegDir() } }),
    sharedBrowser(),
  ])
  const show = await seedProduction(server, 'Show')
  // A move refused: another asset is catalogued at the name the move would take (as
  // test/assetimport/compat.test.ts does), so the import fails with status_asset -1.
  const incoming = join(show.root, 'incoming')
  mkdirSync(incoming, { recursive: true })
  writeFileSync(join(incoming, 'refused.mov'), 'essence')
  const squatter = await server.post('/api/videoassets/', {
    name: 'Squatter',
    path_file: join(show.production.storage_root, 'video', 'refused.mov'),
    production: show.production.id,
  })
  expect(squatter.status).toBe(201)
  const refused = await server.post(
    IMPORT,
    importBody(join(incoming, 'refused.mov'), { name: 'Refused reel' }, {}, { move_asset: true }),
  )
  expect(refused.status).toBe(201)
  failed = { id: refused.json.asset_import_id, task: refused.json.task.id }
  writeFileSync(join(incoming, 'timed.mov'), 'essence')
  const imported = await server.post(
    IMPORT,
    importBody(join(incoming, 'timed.mov'), {
      name: 'Timed reel',
      fps: '30000/1001',
      duration: 17982,
      offset_string: '00:59:59;28',
      width: 1920,
      height: 1080,
    }),
  )
  expect(imported.status).toBe(201)
  timed = imported.json.asset_import_id
  await server.runner.idle()
  expect((await server.get(`/api/videoassets/${failed.id}/`)).json).toMatchObject({
    status_asset: -1,
    is_production: true,
  })
  expect((await server.get(`/api/videoassets/${timed}/`)).json).toMatchObject({
    status_asset: 6,
    technical: { fps: '30000/1001', duration: 17982 },
  })
  const lostAsset = await server.post('/api/videoassets/', {
    name: 'Lost reel',
    path_file: join(show.root, 'Show', 'lost.mov'),
    production: show.production.id,
    is_production: false,
  })
  expect(lostAsset.status).toBe(201)
  lost = lostAsset.json.id
  // A date the asset page must show in the browser's zone: 13:05 UTC is 18:35 in Kolkata.
  expect(
    (await server.request('PATCH', `/api/videoassets/${lost}/`, { body: { date_crt: '2026-11-29 13:05' } })).status,
  ).toBe(200)
  const made = await server.post('/api/projectassets/', {
    name: 'Cut',
    bundle_root: `${show.root}/Show/cut/`,
    production_id: show.production.id,
  })
  expect(made.status).toBe(201)
  project = made.json.id

  // A second disk whose folder goes away after its asset (with a proxy on it) is catalogued.
  const island = await seedProduction(server, 'Island')
  strandedDevice = island.device
  const proxy = join(island.production.proxy_root, 'stranded.webm')
  mkdirSync(island.production.proxy_root, { recursive: true })
  writeFileSync(proxy, 'not played: the folder is gone by then')
  writeFileSync(join(island.root, 'Island', 'stranded.mov'), 'essence')
  const s = await server.post('/api/videoassets/', {
    name: 'Stranded reel',
    path_file: join(island.root, 'Island', 'stranded.mov'),
    production: island.production.id,
  })
  expect(s.status).toBe(201)
  stranded = s.json.id
  server.db.$client.run('UPDATE media_assets SET path_proxy = ? WHERE id = ?', [proxy, stranded])
  // The disk unmounted: its folder is not there (put back in afterAll, so the app's cleanup removes it).
  renameSync(island.root, `${island.root}.away`)
})
afterAll(async () => {
  await browser?.close()
  if (strandedDevice) renameSync(`${strandedDevice.path.replace(/\/$/, '')}.away`, strandedDevice.path)
  await server?.stop()
  removeScratch()
})

/** A tab in the test's zone from its first page on (set after the sign-in, the page could draw its dates in the machine's zone first). */
async function signedIn(path: string): Promise<Tab> {
  const tab = await browser.open(server.base, `/signin?next=${encodeURIComponent(path)}`)
  await tab.page.emulateTimezone(ZONE)
  await signIn(tab, 'admin', server.adminKey)
  return tab
}
const heading = (tab: Tab, text: string) =>
  tab.page.waitForFunction((t: string) => document.querySelector('h1')?.textContent === t, {}, text)
const text = (tab: Tab, selector: string) =>
  tab.page.$eval(selector, (e) => (e.textContent ?? '').replace(/\s+/g, ' ').trim())
/** Every <time> of the page: its text and datetime. */
const times = (tab: Tab, within = 'main') =>
  tab.page.$$eval(`${within} time`, (els) =>
    els.map((e) => ({ text: e.textContent ?? '', datetime: e.getAttribute('datetime') ?? '' })),
  )
/** `iso` in the test's zone as the page writes it. */
const inZone = (iso: string) => {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone: ZONE,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
    })
      .formatToParts(new Date(iso))
      .map((p) => [p.type, p.value]),
  )
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}`
}
/** Each <time> shows its datetime in the test's zone, in the one format. */
function expectOneFormat(found: { text: string; datetime: string }[]) {
  expect(found.length).toBeGreaterThan(0)
  for (const t of found) {
    expect(t.text).toMatch(DATE)
    expect(t.text).toBe(inZone(t.datetime))
  }
}

test('a failed import is "import failed" in the list, not "online"; the others say where their file is', async () => {
  await using tab = await signedIn('/assets?kind=video')
  await heading(tab, 'Catalogue')
  const stateOf = (name: string) =>
    tab.page.$eval(`xpath///li[a[normalize-space()="${name}"]]//*[@data-testid="asset-state"]`, (e) =>
      (e.textContent ?? '').trim(),
    )
  await tab.page.waitForSelector('xpath///a[normalize-space()="Refused reel"]')
  await eventually(async () =>
    expect({
      refused: await stateOf('Refused reel'),
      squatter: await stateOf('Squatter'),
      lost: await stateOf('Lost reel'),
    }).toEqual({ refused: 'import failed', squatter: 'online', lost: 'offline' }),
  )
  await axe(tab.page)
})

test('in the search results too, a failed import is "import failed"', async () => {
  await using tab = await signedIn('/assets?q=refused')
  const state = () =>
    tab.page.$eval(`xpath///li[a[normalize-space()="Refused reel"]]//*[@data-testid="asset-state"]`, (e) =>
      (e.textContent ?? '').trim(),
    )
  await tab.page.waitForSelector('xpath///a[normalize-space()="Refused reel"]')
  await eventually(async () => expect(await state()).toBe('import failed'))
})

test("a failed import's page says so at the top with the import's error, and beside its storage", async () => {
  await using tab = await signedIn(`/assets/video/${failed.id}`)
  await heading(tab, 'Refused reel')
  await tab.page.waitForSelector('[data-testid=asset-import-failed]')
  await eventually(async () =>
    expect(await text(tab, '[data-testid=asset-import-failed]')).toMatch(/^Import failed: .*nothing was moved/),
  )
  expect(await text(tab, '[data-testid=asset-storage]')).toBe('Online, import failed')
  expect(await text(tab, '[data-testid=asset-import]')).toBe('Failed')
  await axe(tab.page)
})

test("an asset whose device's folder is gone says offline and why in place of the player: no <video>", async () => {
  await using tab = await signedIn(`/assets/video/${stranded}`)
  await heading(tab, 'Stranded reel')
  await tab.page.waitForSelector('[data-testid=asset-offline]')
  const said = await text(tab, '[data-testid=asset-offline]')
  expect(said).toContain('Offline: the folder of device')
  expect(said).toContain(strandedDevice.name)
  expect(said).toContain(strandedDevice.path)
  expect(said).toContain('the folder is missing')
  expect(await tab.page.$$eval('video, audio, img', (e) => e.length)).toBe(0)
  // The record agrees, although no scan has marked the file offline yet.
  expect(await text(tab, '[data-testid=asset-storage]')).toBe("Offline (its device's folder cannot be reached)")
  await axe(tab.page)
})

test('an asset whose file is missing says so, where it was', async () => {
  await using tab = await signedIn(`/assets/video/${lost}`)
  await heading(tab, 'Lost reel')
  await tab.page.waitForSelector('[data-testid=asset-offline]')
  expect(await text(tab, '[data-testid=asset-offline]')).toMatch(/^Offline: the file is missing from \/.*lost\.mov/)
  await axe(tab.page)
})

test("the asset page writes every date one way, in the browser's zone, its history's too", async () => {
  await using tab = await signedIn(`/assets/video/${lost}`)
  await heading(tab, 'Lost reel')
  await tab.page.waitForSelector('.asset-history time')
  // Created (13:05 UTC), Added, Changed, and each change of the history.
  await eventually(async () => expect((await times(tab, '.asset-page dl.fields')).length).toBe(3))
  expectOneFormat(await times(tab))
  expect(await text(tab, 'xpath///dt[.="Created"]/following-sibling::dd[1]')).toBe('2026-11-29 18:35')
  // A changed date in the history is written the same way (no time element there: it is text in a line).
  expect(await text(tab, '.asset-history')).toContain('date_crt: — → 2026-11-29 18:35')
  expect(await text(tab, '.asset-history')).not.toMatch(/\d{4}-\d{2}-\d{2}T/)
})

test("a video's duration is timecode at its rate, drop frame as its timecode; technical details have readable labels", async () => {
  await using tab = await signedIn(`/assets/video/${timed}`)
  await heading(tab, 'Timed reel')
  await tab.page.waitForSelector('.asset-technical')
  const rows = Object.fromEntries(
    await tab.page.$$eval('.asset-technical > dt', (dts) =>
      dts.map((dt) => [dt.textContent ?? '', (dt.nextElementSibling?.textContent ?? '').trim()]),
    ),
  )
  expect(rows).toMatchObject({
    Duration: '00:10:00;00',
    'Frame rate': '29.97 fps',
    Resolution: '1920 × 1080',
    'Start timecode': '00:59:59;28',
  })
  for (const label of Object.keys(rows)) expect(label).not.toMatch(/_|^[a-z]/)
  await axe(tab.page)
})

test("the tasks view and a project's page write their dates the same way", async () => {
  await using tab = await signedIn('/tasks')
  await heading(tab, 'Tasks')
  // The failed import's task, in the failed section: when it ended.
  const item = `#tasks-failed ~ ul li[data-task-id="${failed.task}"]`
  await tab.page.waitForSelector(`${item} .task-when time`)
  expect(await text(tab, `${item} .task-when`)).toMatch(/^ended \d{4}-\d{2}-\d{2} \d{2}:\d{2}$/)
  expectOneFormat(await times(tab))
  await axe(tab.page)
  await tab.page.goto(`${server.base}/projects/${project}`, { waitUntil: 'load' })
  await heading(tab, 'Cut')
  await tab.page.waitForSelector('.project-fields time')
  expectOneFormat(await times(tab))
})
