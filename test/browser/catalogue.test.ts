// The catalogue and the asset page in a real Chromium: search as you type and open an asset,
// filters that narrow the list and live in the URL, the windowed list over thousands of assets,
// the proxy playing, an edit seen in the history, a validation error at its field, a delete after
// confirming, and a reader who may not change anything. axe on every state; no console error and
// no request to another host (the helper fails the test on either).
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdirSync, writeFileSync } from 'node:fs'
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
import { ff, hasFfmpeg } from '../helpers/media.ts'

setDefaultTimeout(BROWSER_TEST_MS)

// The functions given to waitForFunction, $eval and evaluate run in the page; this project's
// tsconfig has no DOM library, so the few names they use are declared here, loosely.
declare const document: {
  querySelector(selector: string): El | null
  querySelectorAll(selector: string): Iterable<El>
  activeElement: El | null
}
type El = {
  id: string
  textContent: string | null
  innerText: string
  value: string
  tabIndex: number
  scrollTop: number
  scrollHeight: number
  src: string
  readyState: number
  error: unknown
  muted: boolean
  play(): Promise<void>
}

const BULK = 5000
let server: Awaited<ReturnType<typeof pageServer>>
let browser: BrowserHandle
let night: { id: number; proxy_root: string }
let day: { id: number }
let bulk: { id: number }
let nightDevice: { id: number }
let dayDevice: { id: number }
let readerKey: string
/** Ids of the assets made below, by name. */
const ids: Record<string, number> = {}

async function asset(
  kind: 'video' | 'audio' | 'image',
  name: string,
  root: string,
  production: { id: number },
  extra: Record<string, unknown> = {},
) {
  const path = join(
    root,
    'media',
    `${name.toLowerCase().replace(/\W+/g, '_')}.${kind === 'image' ? 'png' : kind === 'audio' ? 'wav' : 'mov'}`,
  )
  mkdirSync(join(root, 'media'), { recursive: true })
  writeFileSync(path, 'essence')
  const r = await server.post(`/api/${kind}assets/`, { name, path_file: path, production: production.id, ...extra })
  if (r.status !== 201) throw new Error(r.text)
  ids[name] = r.json.id
  return r.json.id as number
}

beforeAll(async () => {
  ;[server, browser] = await Promise.all([pageServer(), sharedBrowser()])
  const a = await seedProduction(server, 'Night Shift')
  const b = await seedProduction(server, 'Day Shift')
  const c = await seedProduction(server, 'Bulk Reels')
  ;[night, nightDevice, day, dayDevice, bulk] = [a.production, a.device, b.production, b.device, c.production]
  await asset('video', 'Harbour drone sunrise', a.root, night, { description: 'Wide aerial over the harbour at dawn' })
  await asset('video', 'Interview harbour master', a.root, night)
  await asset('audio', 'Harbour ambience', a.root, night)
  await asset('image', 'Harbour still', a.root, night)
  await asset('video', 'Market crowd', b.root, day)
  await asset('audio', 'Market ambience', b.root, day)
  await asset('video', 'Lost reel', b.root, day, { is_production: false })
  await asset('video', 'To be deleted', a.root, night)
  expect(
    (await server.request('PATCH', `/api/videoassets/${ids['Market crowd']}/`, { body: { status_approval: 1 } }))
      .status,
  ).toBe(200)
  // A custom metadata field of video assets, with a rule (a roll is a letter and three digits).
  const set = await server.post('/api/custommetadatasets/', { name: 'Camera', description: '', content_type: 4 })
  expect(
    (
      await server.post('/api/custommetadata/', {
        key: 'camera.roll',
        value: 'Camera roll',
        custom_metadata_set: set.json.id,
        validation_rule: '^[A-Z][0-9]{3}$',
      })
    ).status,
  ).toBe(200)
  expect(
    (
      await server.request('PATCH', `/api/videoassets/${ids['Harbour drone sunrise']}/`, {
        body: { meta_field_store: { 'camera.roll': 'A012' }, keywords: { Location: ['Lighthouse', 'Pier'] } },
      })
    ).status,
  ).toBe(200)
  // Its import, logged where the file lay before the import moved it.
  server.db.$client.run(
    `INSERT INTO import_logs (asset_type, asset_path, status, error, warning, payload, asset_import_id, production, date_add, date_mod)
    VALUES ('videoasset', '/drop/DJI_0042.MOV', 'import_completed', '', '{"proxy":"made from the second audio track"}', '{}', ?, ?, 'now', 'now')`,
    [ids['Harbour drone sunrise']!, night.id],
  )
  // A playable proxy (VP8 in WebM: the Chromium of the tests has no H.264) inside the proxy root.
  if (hasFfmpeg) {
    mkdirSync(night.proxy_root, { recursive: true })
    const proxy = join(night.proxy_root, 'harbour.webm')
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
        'testsrc=size=320x240:rate=25',
        '-t',
        '2',
        '-c:v',
        'libvpx',
        '-b:v',
        '300k',
        proxy,
      ],
      { timeoutMs: 30_000 },
    )
    server.db.$client.run('UPDATE media_assets SET path_proxy = ? WHERE id = ?', [proxy, ids['Harbour drone sunrise']!])
  }
  // Thousands of assets, written straight into the catalogue (the API would take a while).
  const insert =
    server.db.$client.prepare(`INSERT INTO media_assets (kind, name, production, device, path_file, date_add, date_mod)
    VALUES ('video', ?, ?, ?, ?, '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z')`)
  server.db.$client.transaction(() => {
    for (let i = 1; i <= BULK; i++)
      insert.run(`Bulk ${String(i).padStart(4, '0')}`, bulk.id, c.device.id, join(c.root, 'bulk', `${i}.mov`))
  })()
  readerKey = server.makeUser('reader', { read: [night.id] })
})
afterAll(async () => {
  await browser?.close()
  await server?.stop()
})

const signedIn = (path: string, username = 'admin', password = server.adminKey): Promise<Tab> =>
  openSignedIn(browser, server.base, path, username, password)

/** The names of the rows the list shows now. */
const rowNames = (tab: Tab) => tab.page.$$eval('.catalogue-rows a', (links) => links.map((a) => a.textContent ?? ''))
/** Waits until the list shows exactly `names` (in order). */
async function waitForRows(tab: Tab, names: string[]) {
  await tab.page
    .waitForFunction(
      (want: string) =>
        JSON.stringify([...document.querySelectorAll('.catalogue-rows a')].map((a) => a.textContent)) === want &&
        !document.querySelector('.asset-row-loading'),
      {},
      JSON.stringify(names),
    )
    .catch(async (error) => {
      throw new Error(`the list shows ${JSON.stringify(await rowNames(tab))}, not ${JSON.stringify(names)}: ${error}`)
    })
}
const heading = (tab: Tab, text: string) =>
  tab.page.waitForFunction((t: string) => document.querySelector('h1')?.textContent === t, {}, text)
const query = (tab: Tab) => Object.fromEntries(new URL(tab.page.url()).searchParams)

test('signed in, / is the catalogue at /assets; results appear as you type, and a result opens its asset', async () => {
  await using tab = await signedIn('/')
  await heading(tab, 'Catalogue')
  await eventually(() => expect(new URL(tab.page.url()).pathname).toBe('/assets'))
  await tab.page.waitForSelector('.catalogue-rows a')
  await axe(tab.page)
  await tab.page.type('#catalogue-q', 'harb')
  const hits = await expectedSearch('harb')
  expect([...hits].sort()).toEqual([
    'Harbour ambience',
    'Harbour drone sunrise',
    'Harbour still',
    'Interview harbour master',
  ])
  await waitForRows(tab, hits)
  await eventually(() => expect(query(tab)).toEqual({ q: 'harb' }))
  await eventually(async () => expect(await tab.page.$eval('#catalogue-count', (e) => e.textContent)).toBe('4 matches'))
  // More words narrow it, as they are typed.
  await tab.page.type('#catalogue-q', ' dro')
  await waitForRows(tab, ['Harbour drone sunrise'])
  await axe(tab.page)
  await tab.page.click('.catalogue-rows a')
  await heading(tab, 'Harbour drone sunrise')
  await eventually(() => expect(new URL(tab.page.url()).pathname).toBe(`/assets/video/${ids['Harbour drone sunrise']}`))
  // Every section of the record is there.
  const parts = [
    'Wide aerial over the harbour at dawn',
    'Night Shift',
    'Camera roll',
    'A012',
    'Lighthouse',
    'Pier',
    'Not linked to any project',
    'import_completed',
    '/drop/DJI_0042.MOV',
    'made from the second audio track',
    'create by admin',
  ]
  await tab.page
    .waitForFunction(
      (want: string[]) => {
        const text = document.querySelector('.asset-page')?.innerText ?? ''
        return want.every((part) => text.includes(part))
      },
      {},
      parts,
    )
    .catch(async () => {
      throw new Error(
        `the asset page says: ${await tab.page.$eval('.asset-page', (e) => (e as unknown as El).innerText)}`,
      )
    })
  await axe(tab.page)
  // Back: the catalogue with the words as they were.
  await tab.page.goBack()
  await heading(tab, 'Catalogue')
  await eventually(async () =>
    expect(await tab.page.$eval('#catalogue-q', (e) => (e as unknown as El).value)).toBe('harb dro'),
  )
  await waitForRows(tab, ['Harbour drone sunrise'])
})

/** The names the search API itself answers, in its order: what the list must show. */
async function expectedSearch(q: string, extra = ''): Promise<string[]> {
  const r = await server.get(`/api/search/?q=${encodeURIComponent(q)}&type=videoasset,audioasset,imageasset${extra}`)
  return (r.json as { name: string }[]).map((h) => h.name)
}

test("filters narrow the list, live in the URL, and a device's offline assets are one address", async () => {
  await using tab = await signedIn(`/assets?production=${day.id}`)
  await heading(tab, 'Catalogue')
  await waitForRows(tab, ['Market crowd', 'Lost reel', 'Market ambience'])
  await tab.page.select('#catalogue-kind', 'video')
  await waitForRows(tab, ['Market crowd', 'Lost reel'])
  await tab.page.select('#catalogue-approval', 'approved')
  await waitForRows(tab, ['Market crowd'])
  await eventually(() =>
    expect(query(tab)).toEqual({ production: String(day.id), kind: 'video', approval: 'approved' }),
  )
  await axe(tab.page)
  await tab.page.select('#catalogue-approval', 'pending')
  await tab.page.select('#catalogue-online', 'false')
  await waitForRows(tab, ['Lost reel'])
  // With words too: the search is filtered the same way.
  await tab.page.type('#catalogue-q', 'market')
  await tab.page.waitForFunction(() => document.querySelector('#catalogue-count')?.textContent === '0 matches')
  await eventually(async () =>
    expect(await tab.page.$eval('.catalogue-empty', (e) => e.textContent)).toMatch(/Nothing matches/),
  )
  await axe(tab.page)
  await tab.page.click('xpath///button[normalize-space()="Clear filters"]')
  await waitForRows(tab, await expectedSearch('market'))
  await eventually(() => expect(query(tab)).toEqual({ q: 'market' }))
  // What the devices view links to: a device's offline assets.
  await tab.page.goto(`${server.base}/assets?device=${dayDevice.id}&online=false`, { waitUntil: 'load' })
  await waitForRows(tab, ['Lost reel'])
  await eventually(async () =>
    expect(await tab.page.$eval('#catalogue-device', (e) => (e as unknown as El).value)).toBe(String(dayDevice.id)),
  )
  await tab.page.select('#catalogue-device', String(nightDevice.id))
  await tab.page.waitForFunction(() => document.querySelector('#catalogue-count')?.textContent === '0 assets')
  await axe(tab.page)
})

test(`the list of ${BULK.toLocaleString('en')} assets holds only a window of rows; scrolling to the end shows the last; keys move along it`, async () => {
  await using tab = await signedIn(`/assets?production=${bulk.id}`)
  await heading(tab, 'Catalogue')
  await tab.page.waitForFunction(
    (n: string) => document.querySelector('#catalogue-count')?.textContent === n,
    {},
    `${BULK.toLocaleString('en')} assets`,
  )
  await tab.page.waitForSelector('.catalogue-rows a')
  const rows = () => tab.page.$$eval('.catalogue-rows li', (items) => items.length)
  expect(await rows()).toBeLessThan(60)
  await eventually(async () => expect((await rowNames(tab))[0]).toBe('Bulk 0001'))
  await axe(tab.page)
  // The list scrolls with the keyboard: it takes focus.
  expect(await tab.page.$eval('.catalogue-window', (e) => (e as unknown as El).tabIndex)).toBe(0)
  await tab.page.$eval('.catalogue-window', (e) => {
    e.scrollTop = e.scrollHeight
  })
  await tab.page.waitForFunction(
    (name: string) => [...document.querySelectorAll('.catalogue-rows a')].some((a) => a.textContent === name),
    {},
    `Bulk ${BULK}`,
  )
  expect(await rows()).toBeLessThan(60)
  const last = await tab.page.$eval(`.catalogue-rows li:has(a[data-index="${BULK - 1}"])`, (li) => [
    li.getAttribute('aria-posinset'),
    li.getAttribute('aria-setsize'),
  ])
  expect(last).toEqual([String(BULK), String(BULK)])
  // Home from a row goes to the first, the list scrolling back; arrow keys step.
  await tab.page.focus(`a[data-index="${BULK - 1}"]`)
  await tab.page.keyboard.press('Home')
  await tab.page.waitForFunction(() => document.activeElement?.textContent === 'Bulk 0001')
  await tab.page.keyboard.press('ArrowDown')
  await tab.page.keyboard.press('ArrowDown')
  await eventually(async () =>
    expect(await tab.page.evaluate(() => document.activeElement?.textContent)).toBe('Bulk 0003'),
  )
  expect(await rows()).toBeLessThan(60)
  await axe(tab.page)
})

test.skipIf(!hasFfmpeg)('the proxy plays in a <video> (readyState of at least 2)', async () => {
  await using tab = await signedIn(`/assets/video/${ids['Harbour drone sunrise']}`)
  await heading(tab, 'Harbour drone sunrise')
  await tab.page.waitForSelector('video')
  expect(await tab.page.$eval('video', (v) => new URL((v as unknown as El).src).pathname)).toBe(
    `/api/videoassets/${ids['Harbour drone sunrise']}/proxy/`,
  )
  await tab.page.$eval('video', (v) => {
    const video = v as unknown as El
    video.muted = true
    void video.play()
  })
  await tab.page.waitForFunction(() => document.querySelector('video')!.readyState >= 2)
  expect(await tab.page.$eval('video', (v) => (v as unknown as El).error)).toBe(null)
  await axe(tab.page)
})

test('an asset without a proxy shows no media element', async () => {
  await using tab = await signedIn(`/assets/audio/${ids['Harbour ambience']}`)
  await heading(tab, 'Harbour ambience')
  await tab.page.waitForSelector('#asset-history')
  expect(await tab.page.$$eval('video, audio, img', (e) => e.length)).toBe(0)
  await axe(tab.page)
})

test('editing the description in place saves it and shows the change in the history', async () => {
  await using tab = await signedIn(`/assets/video/${ids['Interview harbour master']}`)
  await heading(tab, 'Interview harbour master')
  await tab.page.click('xpath///button[normalize-space()="Edit"]')
  await tab.page.waitForSelector('form.asset-form')
  // The form's first field has focus, given by its effect after the paint that shows it; every
  // control has its label.
  await eventually(async () =>
    expect(await tab.page.evaluate(() => document.activeElement?.id)).toBe('asset-edit-name'),
  )
  await axe(tab.page)
  await tab.page.type('#asset-edit-description', 'Harbour master on the quay, two cameras')
  await tab.page.select('#asset-edit-status_approval', '1')
  await tab.page.waitForSelector('#asset-edit-meta-camera-roll')
  await tab.page.type('#asset-edit-meta-camera-roll', 'B101')
  await tab.page.click('xpath///button[normalize-space()="Save"]')
  await tab.page.waitForSelector('.asset-saved')
  await eventually(async () =>
    expect(await tab.page.$eval('.asset-description', (e) => e.textContent)).toBe(
      'Harbour master on the quay, two cameras',
    ),
  )
  await tab.page.waitForFunction(() =>
    document.querySelector('.asset-history')?.innerText.includes('Harbour master on the quay, two cameras'),
  )
  const latest = await tab.page.$eval('.asset-history > li', (e) => (e as unknown as El).innerText)
  expect(latest).toContain('update by admin')
  expect(latest).toContain('description: — → Harbour master on the quay, two cameras')
  expect(latest).toContain('status_approval: 0 → 1')
  expect(latest).toContain('meta_field_store')
  const record = (await server.get(`/api/videoassets/${ids['Interview harbour master']}/`)).json
  expect([record.description, record.status_approval, record.meta_field_store]).toEqual([
    'Harbour master on the quay, two cameras',
    1,
    { 'camera.roll': 'B101' },
  ])
  await axe(tab.page)
})

test('a value the server refuses is shown at its field, with aria-invalid and aria-describedby, and nothing is saved', async () => {
  const id = ids['Market crowd']!
  await using tab = await signedIn(`/assets/video/${id}`)
  tab.allowFailedResponse(`/api/videoassets/${id}/`, 400)
  await heading(tab, 'Market crowd')
  await tab.page.click('xpath///button[normalize-space()="Edit"]')
  await tab.page.waitForSelector('#asset-edit-date_crt')
  await tab.page.type('#asset-edit-date_crt', '2023-02-29')
  await tab.page.waitForSelector('#asset-edit-meta-camera-roll')
  await tab.page.type('#asset-edit-meta-camera-roll', 'roll nine')
  await tab.page.click('xpath///button[normalize-space()="Save"]')
  await tab.page.waitForSelector('#asset-edit-date_crt-error')
  const field = (id: string) =>
    tab.page.$eval(`#${id}`, (e) => [e.getAttribute('aria-invalid'), e.getAttribute('aria-describedby')])
  expect(await field('asset-edit-date_crt')).toEqual(['true', 'asset-edit-date_crt-hint asset-edit-date_crt-error'])
  expect(await tab.page.$eval('#asset-edit-date_crt-error', (e) => e.textContent)).toMatch(/date/i)
  expect(await field('asset-edit-name')).toEqual([null, null])
  // The field in error has focus (given once the error is drawn, in the next frame).
  await tab.page.waitForFunction((id) => document.activeElement?.id === id, {}, 'asset-edit-date_crt')
  await axe(tab.page)
  // The date mended, the custom metadata's rule refuses the roll: its error is at its field now.
  tab.allowFailedResponse(`/api/videoassets/${id}/`, 400)
  await tab.page.click('#asset-edit-date_crt', { count: 3 })
  await tab.page.type('#asset-edit-date_crt', '2023-02-28')
  await tab.page.click('xpath///button[normalize-space()="Save"]')
  await tab.page.waitForSelector('#asset-edit-meta-camera-roll-error')
  expect(await field('asset-edit-meta-camera-roll')).toEqual([
    'true',
    'asset-edit-meta-camera-roll-hint asset-edit-meta-camera-roll-error',
  ])
  expect(await field('asset-edit-date_crt')).toEqual([null, 'asset-edit-date_crt-hint'])
  await tab.page.waitForFunction((id) => document.activeElement?.id === id, {}, 'asset-edit-meta-camera-roll')
  await axe(tab.page)
  expect((await server.get(`/api/videoassets/${id}/`)).json.date_crt).toBe(null)
})

test('deleting asks first; cancelled, nothing happens; confirmed, the record goes and the catalogue shows', async () => {
  const id = ids['To be deleted']!
  await using tab = await signedIn(`/assets/video/${id}`)
  await heading(tab, 'To be deleted')
  await tab.page.click('xpath///button[normalize-space()="Delete…"]')
  await tab.page.waitForSelector('dialog[open]')
  // The safe choice has focus.
  await eventually(async () =>
    expect(await tab.page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel'),
  )
  await axe(tab.page)
  await tab.page.keyboard.press('Escape')
  await tab.page.waitForSelector('dialog:not([open])')
  expect((await server.get(`/api/videoassets/${id}/`)).status).toBe(200)
  await tab.page.click('xpath///button[normalize-space()="Delete…"]')
  await tab.page.click('xpath///dialog//button[normalize-space()="Delete the record"]')
  await heading(tab, 'Catalogue')
  await eventually(() => expect(new URL(tab.page.url()).pathname).toBe('/assets'))
  expect((await server.get(`/api/videoassets/${id}/`)).status).toBe(404)
  await axe(tab.page)
})

test('a reader of the production sees the asset but no Edit or Delete', async () => {
  await using tab = await signedIn(`/assets/video/${ids['Interview harbour master']}`, 'reader', readerKey)
  await heading(tab, 'Interview harbour master')
  await tab.page.waitForSelector('#asset-history')
  expect(await tab.page.$$eval('.asset-actions button', (b) => b.length)).toBe(0)
  await axe(tab.page)
})
