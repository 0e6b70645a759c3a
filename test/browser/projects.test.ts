// The projects view in a real Chromium, over the real app with its task runner and real folders
// on a temporary device: a project created from the page (its errors shown at their fields
// first), media linked from search results and unlinked, the project copied into another
// production sharing its linked media, and the copy deleted once its name is typed, each with a
// live progress bar that is seen between empty and full and ends full; a reader of the production
// sees it all with nothing to change it. axe passes on every state;
// no console error, no CSP violation, no request to another host.
//
// The project holds 15,000 small files: its copy must last longer than the quarter second between
// two task events for the bar to be seen part way. A file costs the copy about 0.1-0.3 ms on this
// machine's disk (some seconds in all), and some 20 µs on tmpfs, the fastest measured
// (docs/projects.md): 0.3 s and more there too.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { seedProduction } from '../helpers/app.ts'
import { barsSeen, cspViolations, isFull, isIntermediate, recordBars } from '../helpers/bars.ts'
import {
  TASK_WAIT_MS,
  type BrowserHandle,
  type Tab,
  axe,
  eventually,
  pageServer,
  sharedBrowser,
  signIn,
} from '../helpers/browser.ts'

const TEST_MS = 120_000
const FILES = 15_000
const PER_FOLDER = 500

let server: Awaited<ReturnType<typeof pageServer>>
let browser: BrowserHandle
let root: string
let show: { id: number; name: string }
let target: { id: number; name: string }
const media: Record<'drone' | 'ambience', { id: number; name: string }> = {} as never
/** The project the tests create, link to, copy; then its copy, which they delete. */
let project: { id: number; name: string; folder: string }
let copy: { id: number; name: string; folder: string }

beforeAll(async () => {
  ;[server, browser] = await Promise.all([pageServer({ tasks: true }), sharedBrowser()])
  const seeded = await seedProduction(server, 'Show')
  root = seeded.root
  show = seeded.production
  const other = await server.post('/api/productions/', { name: 'Target', storage_root: `${root}/Target` })
  expect(other.status).toBe(201)
  target = other.json
  for (const [key, kind, name] of [
    ['drone', 'video', 'Harbour drone sunrise'],
    ['ambience', 'audio', 'Harbour ambience'],
  ] as const) {
    const r = await server.post(`/api/${kind}assets/`, {
      name,
      path_file: `${root}/Show/footage/${key}.bin`,
      production: show.id,
    })
    expect(r.status).toBe(201)
    media[key] = r.json
  }
  // The project's folder, made before it is registered from the page.
  const folder = `${root}/Show/edits/harbour`
  const bytes = Buffer.alloc(512, 7)
  for (let n = 0; n < FILES; n++) {
    const dir = join(folder, `reel-${Math.floor(n / PER_FOLDER)}`)
    if (n % PER_FOLDER === 0) mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, `take-${n}.xml`), bytes)
  }
  writeFileSync(join(folder, 'harbour.prproj'), 'project')
}, TEST_MS)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
})

const text = (tab: Tab, selector: string) => tab.page.$eval(selector, (e) => e.textContent ?? '')
const value = (tab: Tab, selector: string) => tab.page.$eval(selector, (e) => (e as unknown as { value: string }).value)
const heading = (tab: Tab, title: string) =>
  tab.page.waitForFunction(`document.querySelector("h1")?.textContent === ${JSON.stringify(title)}`)

/** A tab signed in as admin, showing `path`. */
async function openSignedIn(path: string) {
  const tab = await browser.open(server.base, '/signin')
  await signIn(tab, 'admin', server.adminKey)
  await tab.page.goto(`${server.base}${path}`, { waitUntil: 'load' })
  await recordBars(tab.page)
  return tab
}

async function clearAndType(tab: Tab, selector: string, text: string) {
  await tab.page.click(selector, { count: 3 })
  await tab.page.keyboard.press('Backspace')
  await tab.page.type(selector, text)
}

test(
  'the list per production; a project created from the page, its errors shown at their fields first',
  async () => {
    await using tab = await openSignedIn('/projects')
    await heading(tab, 'Projects')
    await tab.page.waitForSelector('#projects-production')
    await eventually(async () => expect(await value(tab, '#projects-production')).toBe(String(show.id)))
    await tab.page.waitForFunction('document.querySelector(".projects-list p.muted")?.textContent === "0 projects"')
    await axe(tab.page)

    // Nothing filled in: 400, each field's error at its field.
    tab.allowFailedResponse('/api/projectassets/', 400)
    await tab.page.click('xpath///button[normalize-space()="Create project"]')
    await tab.page.waitForSelector('#create-name-error')
    expect(await text(tab, '#create-name-error')).toMatch(/required/i)
    expect(await text(tab, '#create-folder-error')).toMatch(/required/i)
    expect(
      await tab.page.$eval('#create-name', (e) => [e.getAttribute('aria-invalid'), e.getAttribute('aria-describedby')]),
    ).toEqual(['true', 'create-name-error'])
    await axe(tab.page)

    // A folder outside every device: refused at the folder field.
    tab.allowFailedResponse('/api/projectassets/', 400)
    await tab.page.type('#create-name', 'Harbour cut')
    await tab.page.type('#create-folder', '/nowhere/at/all/')
    await tab.page.click('xpath///button[normalize-space()="Create project"]')
    await tab.page.waitForFunction(
      '!document.querySelector("#create-name-error") && document.querySelector("#create-folder-error")?.textContent.includes("device")',
    )

    const folder = `${root}/Show/edits/harbour/`
    await clearAndType(tab, '#create-folder', folder)
    await tab.page.click('xpath///button[normalize-space()="Create project"]')
    await heading(tab, 'Harbour cut')
    const id = Number(new URL(tab.page.url()).pathname.split('/').pop())
    project = { id, name: 'Harbour cut', folder }
    await eventually(async () =>
      expect(await text(tab, '.project-fields')).toContain(`${(FILES + 1).toLocaleString('en')} files · `),
    )
    expect((await server.get(`/api/projectassets/${id}/`)).json).toMatchObject({
      name: 'Harbour cut',
      bundle_root: folder,
      production: show.id,
      status_asset: 6,
      files: { count: FILES + 1 },
    })
    await axe(tab.page)

    // Back in the list of its production.
    await tab.page.click(`a[href="/projects?production=${show.id}"]`)
    await tab.page.waitForSelector(`.projects-table a[href="/projects/${id}"]`)
    await eventually(async () => expect(await text(tab, '.projects-table tbody')).toContain('ready'))
    await axe(tab.page)
    expect(await cspViolations(tab.page)).toEqual([])
  },
  TEST_MS,
)

test(
  'media found by the search within the production are linked with a button per hit, and unlinked',
  async () => {
    await using tab = await openSignedIn(`/projects/${project.id}`)
    await heading(tab, project.name)
    await eventually(async () => expect(await text(tab, '.project-media')).toContain('No media linked yet.'))
    await tab.page.type('#link-q', 'harbour')
    await tab.page.waitForSelector('[data-testid=hits] button[aria-label="Link Harbour ambience"]')
    // Media only: the project itself (also "harbour") is no hit here.
    await eventually(async () =>
      expect(await tab.page.$$eval('[data-testid=hits] li', (items) => items.length)).toBe(2),
    )
    await axe(tab.page)

    await tab.page.click('button[aria-label="Link Harbour drone sunrise"]')
    await tab.page.waitForSelector('[data-testid=linked] button[aria-label="Unlink Harbour drone sunrise"]')
    await tab.page.waitForSelector('[data-testid=hits] button[aria-label="Harbour drone sunrise is linked"][disabled]')
    await tab.page.click('button[aria-label="Link Harbour ambience"]')
    await tab.page.waitForSelector('[data-testid=linked] button[aria-label="Unlink Harbour ambience"]')
    await axe(tab.page)

    await tab.page.click('button[aria-label="Unlink Harbour ambience"]')
    await tab.page.waitForFunction(
      '!document.querySelector(\'[data-testid=linked] button[aria-label="Unlink Harbour ambience"]\')',
    )
    await tab.page.waitForSelector('[data-testid=hits] button[aria-label="Link Harbour ambience"]:not([disabled])')
    await eventually(async () =>
      expect(
        await tab.page.$$eval('[data-testid=linked] li a', (links) => links.map((a) => a.getAttribute('href'))),
      ).toEqual([`/assets/video/${media.drone.id}`]),
    )
    const record = (await server.get(`/api/projectassets/${project.id}/`)).json
    expect([record.video_assets.map((m: { id: number }) => m.id), record.audio_assets]).toEqual([[media.drone.id], []])
    await axe(tab.page)
    expect(await cspViolations(tab.page)).toEqual([])
  },
  TEST_MS,
)

test(
  "copied into another production's folder, sharing its linked media: the copy's bar moves and ends full",
  async () => {
    await using tab = await openSignedIn(`/projects/${project.id}`)
    await heading(tab, project.name)
    // A reader of the target production alone cannot see the linked clip before the copy shares it.
    const viewer = server.makeUser('viewer', { read: [target.id] })
    expect((await server.get(`/api/videoassets/${media.drone.id}/`, { key: viewer })).status).toBe(404)

    const folder = `${root}/Target/edits/harbour-v2/`
    await eventually(async () => expect(await value(tab, '#copy-name')).toBe('Harbour cut copy'))
    await clearAndType(tab, '#copy-name', 'Harbour cut v2')
    await tab.page.select('#copy-production', String(target.id))
    await tab.page.type('#copy-folder', folder)
    await tab.page.click('#copy-share')
    await axe(tab.page)
    await tab.page.click('xpath///button[normalize-space()="Copy project"]')

    // The page goes to the copy, whose bar follows the task that fills its folder.
    await heading(tab, 'Harbour cut v2')
    const id = Number(new URL(tab.page.url()).pathname.split('/').pop())
    copy = { id, name: 'Harbour cut v2', folder }
    await tab.page.waitForSelector('progress[aria-label="Copy progress"]')
    await axe(tab.page)
    await tab.page.waitForFunction(
      'document.querySelector(\'progress[aria-label="Copy progress"]\')?.closest(".task-progress-done") && document.querySelector(".project-fields")?.textContent.includes("ready")',
      { timeout: TASK_WAIT_MS },
    )
    const bars = await barsSeen(tab.page, 'Copy progress')
    expect(bars.some(isIntermediate)).toBe(true)
    expect(isFull(bars.at(-1)!)).toBe(true)
    expect(bars.at(-1)).toMatchObject({
      value: bars.at(-1)!.max,
      text: expect.stringContaining(`${(FILES + 1).toLocaleString('en')} of ${(FILES + 1).toLocaleString('en')} files`),
    })
    // Values never went back.
    const values = bars.flatMap((b) => (b.value === null ? [] : [b.value]))
    expect(values).toEqual([...values].sort((a, b) => a - b))
    await axe(tab.page)

    expect((await server.get(`/api/projectassets/${id}/`)).json).toMatchObject({
      production: target.id,
      bundle_root: folder,
      status_asset: 6,
      is_production: true,
      // The bundle's files, and the copy's ASC MHL history (a manifest and the chain, in ascmhl/).
      files: { count: FILES + 1 + 2 },
    })
    expect(readdirSync(folder).length).toBe(FILES / PER_FOLDER + 1 + 1)
    expect(readdirSync(join(folder, 'ascmhl')).length).toBe(2)
    // Shared: the target production's reader now reads the linked clip.
    expect((await server.get(`/api/videoassets/${media.drone.id}/`, { key: viewer })).status).toBe(200)
    expect(await cspViolations(tab.page)).toEqual([])
  },
  TEST_MS,
)

test(
  "deleted only once the project's name is typed; the delete's bar ends full, then the project is gone with its folder",
  async () => {
    await using tab = await openSignedIn(`/projects/${copy.id}`)
    await heading(tab, copy.name)
    // The delete section shows once the production (and so the write right) is known, which can
    // come after the heading.
    const open = 'xpath///button[normalize-space()="Delete project…"]'
    await tab.page.waitForSelector(open)
    await tab.page.click(open)
    await tab.page.waitForSelector('#delete-confirm')
    const submit = 'xpath///button[normalize-space()="Delete project and folder"]'
    const disabled = async () => await tab.page.$eval(submit, (e) => e.hasAttribute('disabled'))
    expect(await disabled()).toBe(true)
    await tab.page.type('#delete-confirm', 'Harbour cut')
    expect(await disabled()).toBe(true)
    await axe(tab.page)
    // Pressing Enter with a wrong name does nothing either.
    await tab.page.keyboard.press('Enter')
    expect(existsSync(copy.folder)).toBe(true)
    await tab.page.type('#delete-confirm', ' v2')
    await tab.page.waitForFunction(
      `!document.evaluate(${JSON.stringify(submit.slice('xpath/'.length))}, document, null, 9).singleNodeValue.disabled`,
    )
    await tab.page.click(submit)

    await heading(tab, 'Harbour cut v2 (deleted)')
    await tab.page.waitForFunction(
      'document.querySelector(\'progress[aria-label="Delete progress"]\')?.closest(".task-progress-done")',
      { timeout: TASK_WAIT_MS },
    )
    const bars = await barsSeen(tab.page, 'Delete progress')
    // Seen before its end (when the delete took longer than a quarter second, part way too), then full.
    expect(bars.length).toBeGreaterThan(1)
    expect(isFull(bars.at(-1)!)).toBe(true)
    expect(bars.slice(0, -1).some((b) => isFull(b))).toBe(false)
    console.log(
      `the delete's bar went through ${JSON.stringify(bars.map((b) => (b.value === null ? null : `${b.value}/${b.max}`)))}`,
    )
    await axe(tab.page)
    expect(existsSync(copy.folder)).toBe(false)
    expect((await server.get(`/api/projectassets/${copy.id}/`)).status).toBe(404)

    // The target production's list no longer has it; the source is still there.
    await tab.page.click('a[href="/projects"]')
    await tab.page.waitForSelector('#projects-production')
    await tab.page.select('#projects-production', String(target.id))
    await tab.page.waitForFunction(
      `location.search === "?production=${target.id}" && document.querySelector(".projects-list p.muted")?.textContent === "0 projects"`,
    )
    await tab.page.select('#projects-production', String(show.id))
    await tab.page.waitForSelector(`.projects-table a[href="/projects/${project.id}"]`)
    await axe(tab.page)
    expect(await cspViolations(tab.page)).toEqual([])
  },
  TEST_MS,
)

test(
  'a reader of the production sees its projects and their linked media, and no form or button to change them',
  async () => {
    const reader = server.makeUser('reader', { read: [show.id] })
    await using tab = await browser.open(server.base, '/signin')
    await signIn(tab, 'reader', reader)
    await tab.page.goto(`${server.base}/projects`, { waitUntil: 'load' })
    await tab.page.waitForSelector(`.projects-table a[href="/projects/${project.id}"]`)
    // Only the production they read is offered.
    await eventually(async () =>
      expect(
        await tab.page.$$eval('#projects-production option', (options) => options.map((o) => o.textContent)),
      ).toEqual(['Show']),
    )
    expect(await tab.page.$('#create-name')).toBeNull()
    await axe(tab.page)
    await tab.page.click(`.projects-table a[href="/projects/${project.id}"]`)
    await heading(tab, project.name)
    await tab.page.waitForSelector(`[data-testid=linked] a[href="/assets/video/${media.drone.id}"]`)
    expect(await tab.page.$$('button')).toHaveLength(1) // Sign out
    expect(await tab.page.$('#link-q, #copy-name, #delete-confirm')).toBeNull()
    await axe(tab.page)
  },
  TEST_MS,
)
