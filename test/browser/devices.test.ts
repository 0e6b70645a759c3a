// The devices view in a real Chromium (issue 22, point 6): per device its space, watch mode,
// online and offline counts and last scan; a file removed on disk goes offline after a rescan
// asked from the page, whose task the page shows queued and then done while the counts follow
// live, and the device's offline assets are one click away. The rescan button is there only for
// those who may (superuser, browser.change_device); one who may but gets no scan events follows
// the scan by reading its task. axe on every state; no console error, no other host.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { seedProduction, tempDir } from '../helpers/app.ts'
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
import { emptyFfmpegDir, removeScratch } from '../helpers/imports.ts'

setDefaultTimeout(BROWSER_TEST_MS)

// Functions handed to the page (waitForFunction, evaluate) run there, with its globals: declared
// loosely here, since this project is type-checked without the DOM's types.
declare const document: any, innerWidth: number, innerHeight: number, getComputedStyle: (element: unknown) => any

let server: Awaited<ReturnType<typeof pageServer>>
let browser: BrowserHandle
let seeded: Awaited<ReturnType<typeof seedProduction>>
let gone: { id: number; name: string }
let started = false
const files: Record<string, string> = {}

beforeAll(async () => {
  // The task runner is started by the first test once it has seen a scan wait in the queue.
  ;[server, browser] = await Promise.all([
    pageServer({ core: { ffmpegDir: emptyFfmpegDir(), settleMs: 30 } }),
    sharedBrowser(),
  ])
  seeded = await seedProduction(server)
  for (const name of ['kept.mov', 'removed.mov']) {
    files[name] = join(seeded.root, 'Show', name)
    writeFileSync(files[name], `essence of ${name}`)
    const r = await server.post('/api/videoassets/', { name, path_file: files[name], production: seeded.production.id })
    if (r.status !== 201) throw new Error(r.text)
  }
  // A device whose folder is not there: offline, with the reason, and no rescan.
  const missing = tempDir('reelhouse-gone-')
  rmSync(missing, { recursive: true })
  const d = await server.post('/api/devices/', { name: 'gone-disk', display_name: 'Gone disk', path: missing })
  if (d.status !== 201) throw new Error(d.text)
  gone = d.json
})
afterAll(async () => {
  await browser?.close()
  if (started) await server?.core.stop()
  await server?.stop()
  removeScratch()
})

const signedIn = (username: string, password: string, path = '/devices') =>
  openSignedIn(browser, server.base, path, username, password)

const card = (id: number) => `li.device[data-device="${id}"]`
const text = (tab: Tab, selector: string) =>
  tab.page.$eval(selector, (e) => (e.textContent ?? '').replace(/\s+/g, ' ').trim())
/** Waits until the text at `selector` matches. */
const textMatches = (tab: Tab, selector: string, pattern: RegExp) =>
  tab.page.waitForFunction(
    (s: string, p: string) => new RegExp(p).test((document.querySelector(s)?.textContent ?? '').replace(/\s+/g, ' ')),
    {},
    selector,
    pattern.source,
  )

test('a file removed on disk: the rescan asked from the page shows its scan, then the offline count; the offline assets are one click away', async () => {
  const id = seeded.device.id
  await using tab = await signedIn('admin', server.adminKey)
  await tab.page.waitForSelector(`${card(id)} [data-testid=device-online-count]`)
  // The title is set by the view's effect, after the paint that shows it.
  await eventually(async () => expect(await tab.page.title()).toBe('Devices · Reelhouse'))
  await eventually(async () =>
    expect({
      online: await text(tab, `${card(id)} [data-testid=device-online]`),
      counts: await text(tab, `${card(id)} [data-testid=device-assets]`),
      watch: await text(tab, `${card(id)} [data-testid=device-watch]`),
      last: await text(tab, `${card(id)} [data-testid=device-last-scan]`),
      link: await tab.page.$eval(`${card(id)} [data-testid=device-offline-link]`, (a) => a.getAttribute('href')),
      path: await text(tab, `${card(id)} .device-path`),
    }).toEqual({
      online: 'Online',
      counts: `2 online · 0 offline on ${seeded.device.name}`,
      watch: expect.stringMatching(/^not watched/),
      last: 'none yet',
      link: `/assets?device=${id}&online=false`,
      path: seeded.device.path,
    }),
  )
  expect(await text(tab, `${card(id)} .device-space`)).toMatch(/^[\d.]+ [KMGT]?B free of [\d.]+ [KMGT]?B$/)
  expect(
    await tab.page.$eval(`${card(id)} meter`, (m) => [
      m.getAttribute('aria-label'),
      Number(m.getAttribute('value')) <= Number(m.getAttribute('max')),
    ]),
  ).toEqual([`Space used on ${seeded.device.name}`, true])
  // The device whose folder is missing: offline, why, and its rescan button off, saying why.
  await tab.page.waitForSelector(`${card(gone.id)} [data-testid=device-online]`)
  await eventually(async () =>
    expect({
      online: await text(tab, `${card(gone.id)} [data-testid=device-online]`),
      reason: await text(tab, `${card(gone.id)} .device-reason`),
      disabled: await tab.page.$eval(
        `${card(gone.id)} [data-testid=rescan]`,
        (b) => (b as unknown as { disabled: boolean }).disabled,
      ),
    }).toEqual({
      online: 'Offline',
      reason: 'The folder cannot be read: the folder is missing (a disk or share not mounted?).',
      disabled: true,
    }),
  )
  await axe(tab.page)

  rmSync(files['removed.mov']!)
  await tab.page.click(`${card(id)} [data-testid=rescan]`)
  // The runner is not started yet: the scan waits in the queue, and the page shows it so.
  const bar = `${card(id)} progress[data-task]`
  await tab.page.waitForSelector(bar)
  const task = Number(await tab.page.$eval(bar, (p) => p.getAttribute('data-task')))
  expect((await server.get(`/api/tasks/${task}/`)).json).toMatchObject({
    kind: 'scan',
    state: 'queued',
    target: { device: id },
  })
  await textMatches(tab, `${card(id)} .task-progress`, /queued/)
  await eventually(async () =>
    expect(await tab.page.$eval(bar, (p) => p.getAttribute('aria-label'))).toBe(`Scan of ${seeded.device.name}`),
  )
  await axe(tab.page)

  server.core.start()
  started = true
  // The scan's events end it; the asset's offline event and the scan's end reload the counts.
  await textMatches(tab, `${card(id)} [data-testid=device-assets]`, /^\s*1 online · 1 offline/)
  await textMatches(tab, `${card(id)} [data-testid=device-last-scan]`, /^done .*1 went offline/)
  await tab.page.waitForFunction((s: string) => !document.querySelector(s), {}, bar)
  expect((await server.get(`/api/devices/${id}/status/`)).json.last_scan.task).toBe(task)
  await axe(tab.page)

  // One click to the device's offline assets, in the catalogue.
  await tab.page.click(`${card(id)} [data-testid=device-offline-link]`)
  await tab.page.waitForFunction(
    `location.pathname + location.search === ${JSON.stringify(`/assets?device=${id}&online=false`)}`,
  )
  await tab.page.waitForFunction('document.querySelector("h1")?.textContent === "Catalogue"')
})

test('the rescan button is there only for those who may; one with browser.change_device follows the scan it asked for without scan events', async () => {
  const id = seeded.device.id
  const viewerKey = server.makeUser('viewer', { read: [seeded.production.id] })
  {
    await using tab = await signedIn('viewer', viewerKey)
    await tab.page.waitForSelector(`${card(id)} [data-testid=device-online-count]`)
    await eventually(async () =>
      expect(await text(tab, `${card(id)} [data-testid=device-assets]`)).toMatch(/^1 online · 1 offline/),
    )
    expect(await tab.page.$$(`[data-testid=rescan]`)).toHaveLength(0)
    await axe(tab.page)
  }
  const scannerKey = server.makeUser('scanner', { perms: ['browser.change_device'] })
  await using tab = await signedIn('scanner', scannerKey)
  await tab.page.waitForSelector(`${card(id)} [data-testid=rescan]:not([disabled])`)
  // Not this user's productions: the assets are not theirs to count.
  await eventually(async () =>
    expect(await text(tab, `${card(id)} [data-testid=device-assets]`)).toMatch(/^0 online · 0 offline/),
  )
  const before = (await server.get(`/api/devices/${id}/status/`)).json.last_scan.task as number
  await tab.page.click(`${card(id)} [data-testid=rescan]`)
  // No scan events reach this user: the page reads the task until it ends, then the status.
  const bar = `${card(id)} progress[data-task]`
  await tab.page.waitForSelector(bar)
  const task = Number(await tab.page.$eval(bar, (p) => p.getAttribute('data-task')))
  expect(task).toBeGreaterThan(before)
  await tab.page.waitForSelector(`${card(id)} [data-testid=device-last-scan] [data-task="${task}"]`)
  await tab.page.waitForFunction((s: string) => !document.querySelector(s), {}, bar)
  await eventually(async () => expect(await text(tab, `${card(id)} [data-testid=device-last-scan]`)).toMatch(/^done /))
  await axe(tab.page)
})
