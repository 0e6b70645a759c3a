// The player of an asset's page speaks source timecode, in a real Chromium: clips made by ffmpeg
// with a timecode tag (10:00:00:00 at 25 fps; 01:00:59;28 at 29.97 drop frame), imported (the
// probe reads their rate, length and timecode) and played from the proxy the import made (or,
// where it made none, the clip itself). Each frame of the clips spells its number in two flat
// greys, so the test reads which frame the browser shows (the video drawn into a canvas) and not
// only what the page says. Timecode shown at the start and after a seek; a typed timecode goes to
// its frame; an invalid one is said; arrows step one frame, Shift a second; J/K/L; I/O marks with
// their duration; drop-frame labels across a minute; keys typed in a field move nothing; markers
// and the filmstrip where the server has them (said, and ended early, while it has not). axe on
// every state.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { copyFileSync, mkdirSync } from 'node:fs'
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
import { IMPORT, importBody, removeScratch, scratchDir } from '../helpers/imports.ts'
import { ff, hasFfmpeg } from '../helpers/media.ts'

setDefaultTimeout(BROWSER_TEST_MS)

// Functions handed to the page run there, with its globals: declared loosely (no DOM types here).
declare const document: any

let server: Awaited<ReturnType<typeof pageServer>>
let browser: BrowserHandle
/** The 25 fps clip (100 frames from 10:00:00:00) and the 29.97 DF one (90 frames from 01:00:59;28). */
let pal: number
let ntsc: number
/** Whether the server answers markers and strips (other parts of the work; skipped until then). */
let markersServed = false
let stripServed = false

/**
 * A WebM (VP8) of `seconds` at `rate` (100 frames at most) whose frame N is two flat greys: its
 * units on the left, its tens on the right, each digit 20 levels of luma apart; tagged with `timecode`.
 */
async function greyClip(path: string, rate: string, seconds: number, timecode: string) {
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
      `color=c=black:s=160x90:r=${rate}:d=${seconds},format=yuv420p,geq=lum='16+20*if(lt(X,W/2),mod(N,10),floor(N/10))':cb=128:cr=128`,
      '-c:v',
      'libvpx',
      '-crf',
      '4',
      '-b:v',
      '1M',
      '-g',
      '10',
      '-pix_fmt',
      'yuv420p',
      '-metadata',
      `timecode=${timecode}`,
      path,
    ],
    { timeoutMs: 30_000 },
  )
}

beforeAll(async () => {
  if (!hasFfmpeg) return
  ;[server, browser] = await Promise.all([pageServer({ tasks: true }), sharedBrowser()])
  const show = await seedProduction(server, 'Show')
  const incoming = join(show.root, 'incoming')
  mkdirSync(incoming, { recursive: true })
  const made = scratchDir('reelhouse-player-')
  await greyClip(join(made, 'A001C003.webm'), '25', 4, '10:00:00:00')
  await greyClip(join(made, 'B002C007.webm'), '30000/1001', 3, '01:00:59;28')
  const ids: number[] = []
  for (const name of ['A001C003.webm', 'B002C007.webm']) {
    copyFileSync(join(made, name), join(incoming, name))
    const r = await server.post(IMPORT, importBody(join(incoming, name), { name: name.replace('.webm', '') }))
    expect(r.status).toBe(201)
    ids.push(r.json.asset_import_id)
  }
  ;[pal, ntsc] = ids as [number, number]
  await server.runner.idle()
  expect((await server.get(`/api/videoassets/${pal}/`)).json.technical).toMatchObject({
    fps: '25/1',
    duration: 100,
    offset_string: '10:00:00:00',
  })
  expect((await server.get(`/api/videoassets/${ntsc}/`)).json.technical).toMatchObject({
    fps: '30000/1001',
    offset_string: '01:00:59;28',
  })
  // The import's own proxies where it made them (with the pictures the server makes beside them);
  // else the clips themselves, which the browser plays as they are.
  mkdirSync(show.production.proxy_root, { recursive: true })
  for (const [id, name] of [
    [pal, 'A001C003.webm'],
    [ntsc, 'B002C007.webm'],
  ] as const) {
    if ((await server.get(`/api/videoassets/${id}/`)).json.path_proxy) continue
    const proxy = join(show.production.proxy_root, `player-${name}`)
    copyFileSync(join(made, name), proxy)
    server.db.$client.run('UPDATE media_assets SET path_proxy = ? WHERE id = ?', [proxy, id])
  }
  markersServed = (await server.get(`/api/videoassets/${pal}/markers/`)).status === 200
  stripServed = Boolean((await server.get(`/api/videoassets/${pal}/`)).json.strip_url)
})
afterAll(async () => {
  await browser?.close()
  await server?.stop()
  removeScratch()
})

async function playerOf(id: number): Promise<Tab> {
  const tab = await openSignedIn(browser, server.base, `/assets/video/${id}`, 'admin', server.adminKey)
  // A server without markers answers their list 404: the page shows none (as it should).
  if (!markersServed) tab.allowFailedResponse(`/api/videoassets/${id}/markers/`, 404)
  await tab.page.waitForSelector('[data-testid=player] video')
  await tab.page.waitForFunction(() => document.querySelector('[data-testid=player] video').readyState >= 2)
  return tab
}

const shown = (tab: Tab) => tab.page.$eval('[data-testid=player-timecode]', (e) => e.textContent)
const textOf = (tab: Tab, id: string) => tab.page.$eval(`[data-testid=${id}]`, (e) => e.textContent)

/**
 * The frame the browser shows, read from its pixels: the video drawn into a canvas, the digit of
 * each half its luma over 20 (the browser turns video luma 16-235 into 0-255). Waits for the seek
 * to end first.
 */
async function frameShown(tab: Tab): Promise<number> {
  await tab.page.waitForFunction(() => {
    const v = document.querySelector('[data-testid=player] video')
    return !v.seeking && v.readyState >= 2
  })
  return tab.page.evaluate(() => {
    const v = document.querySelector('[data-testid=player] video')
    const canvas = document.createElement('canvas')
    canvas.width = 16
    canvas.height = 9
    const context = canvas.getContext('2d', { willReadFrequently: true })
    context.drawImage(v, 0, 0, 16, 9)
    const digit = (x: number) => Math.round((context.getImageData(x, 4, 1, 1).data[0] * 219) / 255 / 20)
    return digit(13) * 10 + digit(2)
  })
}

/** Waits until the page shows `timecode` and the browser shows `frame`. */
async function expectAt(tab: Tab, timecode: string, frame: number) {
  await eventually(async () => expect(await shown(tab)).toBe(timecode))
  await eventually(async () => expect(await frameShown(tab)).toBe(frame))
}

test.skipIf(!hasFfmpeg)(
  "the source timecode at the clip's start; a typed timecode goes to its frame, an invalid one is said",
  async () => {
    await using tab = await playerOf(pal)
    await expectAt(tab, '10:00:00:00', 0)
    expect(await tab.page.$eval('.player-note', (e) => e.textContent)).toBe('25 fps; source timecode from 10:00:00:00.')
    await axe(tab.page)
    await tab.page.type('#player-goto', '10:00:02:05')
    await tab.page.keyboard.press('Enter')
    await expectAt(tab, '10:00:02:05', 55)
    // The timeline says it too, to a screen reader.
    expect(
      await tab.page.$eval('[role=slider]', (e) => [e.getAttribute('aria-valuenow'), e.getAttribute('aria-valuetext')]),
    ).toEqual(['55', '10:00:02:05'])
    // Digits alone, as editors type them.
    await tab.page.click('#player-goto', { count: 3 })
    await tab.page.type('#player-goto', '10000310')
    await tab.page.keyboard.press('Enter')
    await expectAt(tab, '10:00:03:10', 85)
    // Not a timecode; frames past the rate; outside the clip: each said, and the player stays.
    for (const [typed, said] of [
      ['ten o clock', /is not a timecode/],
      ['10:00:01:25', /Frames run 00-24 at 25 fps/],
      ['10:00:09:00', /10:00:09:00 is outside this clip, which runs 10:00:00:00 to 10:00:03:24/],
    ] as const) {
      await tab.page.click('#player-goto', { count: 3 })
      await tab.page.type('#player-goto', typed)
      await tab.page.keyboard.press('Enter')
      await tab.page.waitForSelector('[data-testid=player-goto-error]')
      expect(await textOf(tab, 'player-goto-error')).toMatch(said)
      expect(await tab.page.$eval('#player-goto', (e) => e.getAttribute('aria-invalid'))).toBe('true')
      expect(await shown(tab)).toBe('10:00:03:10')
    }
    await axe(tab.page)
  },
)

test.skipIf(!hasFfmpeg)('arrow keys step one frame, Shift one second; keys typed in a field move nothing', async () => {
  await using tab = await playerOf(pal)
  await expectAt(tab, '10:00:00:00', 0)
  await tab.page.focus('[role=slider]')
  await tab.page.keyboard.press('ArrowRight')
  await expectAt(tab, '10:00:00:01', 1)
  await tab.page.keyboard.press('ArrowRight')
  await tab.page.keyboard.press('ArrowRight')
  await expectAt(tab, '10:00:00:03', 3)
  await tab.page.keyboard.press('ArrowLeft')
  await expectAt(tab, '10:00:00:02', 2)
  await tab.page.keyboard.down('Shift')
  await tab.page.keyboard.press('ArrowRight')
  await tab.page.keyboard.up('Shift')
  await expectAt(tab, '10:00:01:02', 27)
  // End and Home from within the player: the last and first frames.
  await tab.page.keyboard.press('End')
  await expectAt(tab, '10:00:03:24', 99)
  await tab.page.keyboard.press('ArrowRight')
  await expectAt(tab, '10:00:03:24', 99)
  await tab.page.keyboard.press('Home')
  await expectAt(tab, '10:00:00:00', 0)
  // In the timecode field, letters and arrows are the field's: the player stays where it is.
  await tab.page.click('#player-goto')
  await tab.page.type('#player-goto', 'lljio')
  await tab.page.keyboard.press('ArrowLeft')
  await tab.page.keyboard.press('ArrowRight')
  expect(await tab.page.$eval('#player-goto', (e) => e.value)).toBe('lljio')
  expect(await textOf(tab, 'player-shuttle')).toBe('Stopped')
  expect(await tab.page.$eval('[data-testid=player] video', (v) => v.paused)).toBe(true)
  expect(await textOf(tab, 'player-in')).toBe('—')
  expect(await shown(tab)).toBe('10:00:00:00')
})

test.skipIf(!hasFfmpeg)('J/K/L: L plays at 1×, again 2×, again 4×; K stops; J goes backward', async () => {
  await using tab = await playerOf(pal)
  await expectAt(tab, '10:00:00:00', 0)
  const video = () =>
    tab.page.$eval('[data-testid=player] video', (v) => ({
      paused: v.paused,
      rate: v.playbackRate,
      time: v.currentTime,
    }))
  await tab.page.focus('[role=slider]')
  await tab.page.keyboard.press('l')
  await eventually(async () => expect(await textOf(tab, 'player-shuttle')).toBe('Forward 1×'))
  await eventually(async () => expect(await video()).toMatchObject({ paused: false, rate: 1 }))
  await tab.page.keyboard.press('l')
  await eventually(async () => expect(await video()).toMatchObject({ paused: false, rate: 2 }))
  expect(await textOf(tab, 'player-shuttle')).toBe('Forward 2×')
  await tab.page.keyboard.press('l')
  await eventually(async () => expect(await video()).toMatchObject({ paused: false, rate: 4 }))
  // A fourth L stays at the top speed.
  await tab.page.keyboard.press('l')
  expect(await textOf(tab, 'player-shuttle')).toBe('Forward 4×')
  await tab.page.keyboard.press('k')
  await eventually(async () => expect((await video()).paused).toBe(true))
  expect(await textOf(tab, 'player-shuttle')).toBe('Stopped')
  // Backward from the end: the playhead goes back, the video itself paused (stepped by the page).
  await tab.page.keyboard.press('End')
  await expectAt(tab, '10:00:03:24', 99)
  await tab.page.keyboard.press('j')
  await eventually(async () => expect(await textOf(tab, 'player-shuttle')).toBe('Backward 1×'))
  await tab.page.keyboard.press('j')
  expect(await textOf(tab, 'player-shuttle')).toBe('Backward 2×')
  await eventually(async () => expect((await video()).time).toBeLessThan(99 / 25))
  expect((await video()).paused).toBe(true)
  await tab.page.keyboard.press('k')
  expect(await textOf(tab, 'player-shuttle')).toBe('Stopped')
  // Stopped, the playhead is on a frame, and the page and the browser agree which.
  const at = await tab.page.$eval('[role=slider]', (e) => Number(e.getAttribute('aria-valuenow')))
  expect(at).toBeLessThan(99)
  const stopped = await video()
  await eventually(async () => expect(await frameShown(tab)).toBe(at))
  expect(Math.floor(stopped.time * 25)).toBe(at)
  await axe(tab.page)
})

test.skipIf(!hasFfmpeg)(
  'I and O mark in and out: their timecodes, the duration between, the range on the timeline',
  async () => {
    await using tab = await playerOf(pal)
    await expectAt(tab, '10:00:00:00', 0)
    await tab.page.type('#player-goto', '10:00:00:10')
    await tab.page.keyboard.press('Enter')
    await expectAt(tab, '10:00:00:10', 10)
    await tab.page.focus('[role=slider]')
    await tab.page.keyboard.press('i')
    await eventually(async () => expect(await textOf(tab, 'player-in')).toBe('10:00:00:10'))
    expect(await textOf(tab, 'player-marked')).toBe('—')
    await tab.page.keyboard.down('Shift')
    await tab.page.keyboard.press('ArrowRight')
    await tab.page.keyboard.up('Shift')
    await tab.page.keyboard.press('ArrowRight')
    await tab.page.keyboard.press('ArrowRight')
    await tab.page.keyboard.press('o')
    await eventually(async () => expect(await textOf(tab, 'player-out')).toBe('10:00:01:12'))
    // In and out frames both included: 10:00:00:10 to 10:00:01:12 is 28 frames.
    expect(await textOf(tab, 'player-marked')).toBe('00:00:01:03')
    // The range on the timeline: from frame 10 to the end of frame 37 of 100.
    const range = await tab.page.$eval('[data-testid=player-range]', (e) => [e.style.left, e.style.width])
    expect(range).toEqual(['10%', '28%'])
    // Shift+I goes back to the in mark.
    await tab.page.keyboard.down('Shift')
    await tab.page.keyboard.press('I')
    await tab.page.keyboard.up('Shift')
    await expectAt(tab, '10:00:00:10', 10)
    await axe(tab.page)
    await tab.page.click('xpath///button[normalize-space()="Clear marks"]')
    await eventually(async () => expect(await textOf(tab, 'player-in')).toBe('—'))
    expect(await tab.page.$$eval('[data-testid=player-range]', (e) => e.length)).toBe(0)
  },
)

test.skipIf(!hasFfmpeg)(
  'a 29.97 drop-frame clip counts in drop frame: ;00 and ;01 skipped past the minute',
  async () => {
    await using tab = await playerOf(ntsc)
    await expectAt(tab, '01:00:59;28', 0)
    expect(await tab.page.$eval('.player-note', (e) => e.textContent)).toBe(
      '29.97 fps, drop frame; source timecode from 01:00:59;28.',
    )
    await tab.page.focus('[role=slider]')
    await tab.page.keyboard.press('ArrowRight')
    await expectAt(tab, '01:00:59;29', 1)
    await tab.page.keyboard.press('ArrowRight')
    await expectAt(tab, '01:01:00;02', 2)
    await tab.page.keyboard.press('ArrowRight')
    await expectAt(tab, '01:01:00;03', 3)
    // One second on: 30 labels, so 30 frames (no minute crossed).
    await tab.page.keyboard.down('Shift')
    await tab.page.keyboard.press('ArrowRight')
    await tab.page.keyboard.up('Shift')
    await expectAt(tab, '01:01:01;03', 33)
    // A label drop frame skips does not exist; the one after it is frame 2.
    await tab.page.type('#player-goto', '01:01:00;01')
    await tab.page.keyboard.press('Enter')
    await tab.page.waitForSelector('[data-testid=player-goto-error]')
    expect(await textOf(tab, 'player-goto-error')).toMatch(/does not exist in drop-frame timecode/)
    await tab.page.click('#player-goto', { count: 3 })
    await tab.page.type('#player-goto', '01:01:02;15')
    await tab.page.keyboard.press('Enter')
    // 01:00:59;28 + 2 (to ;00 of the next minute, ;02 its first label) + 2 s × 30 + 13.
    await expectAt(tab, '01:01:02;15', 75)
    // The clip's length and end in drop frame too: 90 frames.
    expect(await tab.page.$eval('.player-marks', (e) => e.textContent)).toContain(
      '01:00:59;28 to 01:01:02;29 (00:00:03;00)',
    )
    await axe(tab.page)
  },
)

test.skipIf(!hasFfmpeg)(
  'the list of shortcuts is on the page, and the player has no control without a name',
  async () => {
    await using tab = await playerOf(pal)
    await tab.page.click('.player-keys summary')
    const keys = await tab.page.$$eval('.player-keys dt', (dts) => dts.map((dt) => dt.textContent))
    expect(keys).toEqual(expect.arrayContaining(['J', 'K', 'L', 'I / O', '← / →', 'Shift + ← / →', 'M']))
    await axe(tab.page)
  },
)

test.skipIf(!hasFfmpeg)('markers on the timeline; M adds one at the playhead with a note', async () => {
  if (!markersServed) {
    console.warn('skipped: the server answers no /api/videoassets/{id}/markers/ yet')
    return
  }
  await using tab = await playerOf(pal)
  await expectAt(tab, '10:00:00:00', 0)
  await tab.page.type('#player-goto', '10:00:01:00')
  await tab.page.keyboard.press('Enter')
  await expectAt(tab, '10:00:01:00', 25)
  await tab.page.focus('[role=slider]')
  await tab.page.keyboard.press('m')
  await tab.page.waitForSelector('#player-marker-note')
  await eventually(async () =>
    expect(await tab.page.evaluate(() => document.activeElement?.id)).toBe('player-marker-note'),
  )
  // Typed into the note: no shortcut fires.
  await tab.page.type('#player-marker-note', 'Boom in shot, look at J and L')
  expect(await textOf(tab, 'player-shuttle')).toBe('Stopped')
  await axe(tab.page)
  await tab.page.keyboard.press('Enter')
  await tab.page.waitForSelector('.player-marker')
  expect(await tab.page.$eval('.player-marker', (e) => [e.getAttribute('aria-label'), e.style.left])).toEqual([
    'Marker at 10:00:01:00: Boom in shot, look at J and L',
    '25.5%',
  ])
  const listed = (await server.get(`/api/videoassets/${pal}/markers/`)).json as { start_ms: number; note: string }[]
  expect(listed.map((m) => [m.start_ms, m.note])).toEqual([[1000, 'Boom in shot, look at J and L']])
  // A click on the marker goes to it.
  await tab.page.focus('[role=slider]')
  await tab.page.keyboard.press('Home')
  await expectAt(tab, '10:00:00:00', 0)
  await tab.page.click('.player-marker')
  await expectAt(tab, '10:00:01:00', 25)
  await axe(tab.page)
})

test.skipIf(!hasFfmpeg)(
  'the filmstrip under the player draws its tiles from the sprite; a click goes there',
  async () => {
    if (!stripServed) {
      console.warn('skipped: the server gives no strip_url yet')
      return
    }
    await using tab = await playerOf(pal)
    await tab.page.waitForSelector('.player-strip-tile')
    const tiles = await tab.page.$$eval('.player-strip-tile', (els) =>
      els.map((e) => ({ image: e.style.backgroundImage, position: e.style.backgroundPosition })),
    )
    expect(tiles.length).toBeGreaterThan(1)
    for (const t of tiles) expect(t.image).toMatch(/^url\(".*\/api\/videoassets\/\d+\/strip\//)
    expect(tiles[0]!.position).toBe('0px 0px')
    // The last tile: on a short clip the middle one may be the first, whose time is the start.
    await tab.page.click(`.player-strip-tile:nth-child(${tiles.length})`)
    await eventually(async () => expect(await shown(tab)).not.toBe('10:00:00:00'))
    await axe(tab.page)
  },
)
