// The screenshots of the web page in docs/screenshots/ (a helper, run by hand after a change to the
// page: bun bench/screenshots.ts). The compiled executable (npm run build first) serves a new
// catalogue in a temporary folder; clips made by ffmpeg are dropped into a production's watch
// folder and imported by the watcher with their proxies, as on a real NAS; a project is
// registered and copied; then each view is shot at 1280×720, light, and the catalogue dark too;
// the catalogue as a grid of pictures (grid.png), and the asset page's player alone (player.png).
import { cpSync, existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'puppeteer-core'
import { launchBrowser } from '../test/helpers/browser.ts'
import { ROOT, benchScratch, runBench } from './procs.ts'
import { api, busyTasks, count, serve, waitUntil } from './serve.ts'

const OUT = join(ROOT, 'docs', 'screenshots')
const scratch = benchScratch('reelhouse-screenshots-')

/** A short clip of ffmpeg's test pattern (or a still), named as a camera card would name it. */
function clip(path: string, kind: 'video' | 'audio' | 'image', seconds: number, hue: number) {
  const video = ['-f', 'lavfi', '-i', `testsrc2=size=1280x720:rate=25:duration=${seconds},hue=h=${hue}`]
  const audio = ['-f', 'lavfi', '-i', `sine=frequency=${220 + hue}:duration=${seconds}`]
  const args =
    kind === 'video'
      ? [
          ...video,
          ...audio,
          '-c:v',
          'libx264',
          '-pix_fmt',
          'yuv420p',
          '-c:a',
          'aac',
          '-shortest',
          // A camera's source timecode, as the player shows it.
          '-timecode',
          '10:00:00:00',
        ]
      : kind === 'audio'
        ? [...audio, '-c:a', 'pcm_s16le']
        : [...video, '-frames:v', '1']
  const run = Bun.spawnSync(['ffmpeg', '-v', 'error', '-y', ...args, path])
  if (run.exitCode !== 0) throw new Error(`ffmpeg: ${run.stderr.toString()}`)
}

async function shoot(page: Page, name: string, ready: string) {
  await page.waitForSelector(ready)
  await page.waitForNetworkIdle({ idleTime: 300 })
  await page.screenshot({ path: join(OUT, `${name}.png`) as `${string}.png` })
  console.error(`docs/screenshots/${name}.png`)
}

async function main(): Promise<boolean> {
  const exe = join(ROOT, 'dist', 'reelhouse')
  if (!existsSync(exe)) throw new Error('dist/reelhouse is missing: npm run build first')
  if (!Bun.which('ffmpeg')) throw new Error('ffmpeg is needed to make the clips')
  scratch.make()
  const share = join(scratch.path, 'nas') + '/'
  mkdirSync(share)
  const s = await serve([exe], join(scratch.path, 'data'), ['--settle', '1'])
  const must = async (method: string, path: string, body?: unknown) => {
    const r = await api(s, method, path, body)
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.json)}`)
    return r.json
  }
  await must('POST', '/api/devices/', { name: 'nas', display_name: 'Edit NAS', path: share })
  await must('POST', '/api/productions/', {
    name: 'Harbour Lights',
    codename: 'harbour',
    storage_root: `${share}harbour/`,
  })
  await must('POST', '/api/productions/', {
    name: 'Mountain Rescue',
    codename: 'rescue',
    storage_root: `${share}rescue/`,
  })
  await waitUntil('the start scans', 60_000, async () => (await busyTasks(s)) === 0)

  // Clips made aside, then dropped into the watch folder at once, as a card offload would.
  const card = join(scratch.path, 'A042')
  mkdirSync(card)
  const names = [
    'A042_C001_pier_drone',
    'A042_C002_lighthouse_wide',
    'A042_C003_ferry_interview',
    'A042_C004_gulls_closeup',
    'A042_C005_market_handheld',
    'A042_C006_night_harbour',
  ]
  names.forEach((n, i) => clip(join(card, `${n}.mp4`), 'video', 4, i * 50))
  clip(join(card, 'A042_ambience_harbour.wav'), 'audio', 6, 30)
  clip(join(card, 'A042_still_lighthouse.jpg'), 'image', 1, 200)
  cpSync(card, join(share, 'harbour', 'A042'), { recursive: true })
  await waitUntil(
    'the card imported with its proxies',
    180_000,
    async () => (await count(s, '/api/videoassets/?limit=1')) === names.length && (await busyTasks(s)) === 0,
  )

  // A project with its bundle, and a copy of it.
  const bundle = join(share, 'harbour', 'edits', 'Harbour rough cut')
  mkdirSync(join(bundle, 'renders'), { recursive: true })
  writeFileSync(join(bundle, 'Harbour rough cut.prproj'), 'project')
  for (let i = 0; i < 40; i++) writeFileSync(join(bundle, 'renders', `r${i}.xml`), `render ${i}`)
  const project = await must('POST', '/api/projectassets/', {
    name: 'Harbour rough cut',
    bundle_root: bundle,
    production_id: 1,
  })
  await must('POST', '/api/projectassets/', {
    name: 'Harbour fine cut',
    bundle_root: join(share, 'harbour', 'edits', 'Harbour fine cut'),
    production_id: 1,
    copy_of: project.id,
  })
  await waitUntil('the copy', 60_000, async () => (await busyTasks(s)) === 0)

  mkdirSync(OUT, { recursive: true })
  const browser = await launchBrowser()
  try {
    const context = await browser.browser.createBrowserContext()
    const page = await context.newPage()
    page.setDefaultTimeout(15_000)
    await page.goto(`${s.base}/`)
    await shoot(page, 'signin', 'input[name=username]')
    await page.type('input[name=username]', 'admin')
    await page.type('input[name=password]', s.key)
    await Promise.all([page.waitForSelector('#catalogue-q'), page.click('button[type=submit]')])
    await shoot(page, 'catalogue', 'a[data-index="0"]')
    await page.goto(`${s.base}/assets?q=harbour`)
    await shoot(page, 'search', 'a[data-index="0"]')
    // The grid with three clips selected (a click, then Shift-click: the range), the bulk actions showing.
    await page.goto(`${s.base}/assets?view=grid`)
    await page.waitForSelector('.asset-tile a[data-index="2"]')
    await page.click('.asset-tile:has(a[data-index="0"]) [data-testid=asset-poster]')
    await page.keyboard.down('Shift')
    await page.click('.asset-tile:has(a[data-index="2"]) [data-testid=asset-poster]')
    await page.keyboard.up('Shift')
    await shoot(page, 'grid', '[data-testid=selected-count]')
    await page.goto(`${s.base}/assets/video/1`)
    await shoot(page, 'asset', 'video')
    // The player alone: a timecode typed, in and out marked, the shortcuts open.
    await page.waitForFunction('document.querySelector("[data-testid=player] video")?.readyState >= 2')
    await page.type('#player-goto', '10:00:01:05')
    await page.keyboard.press('Enter')
    await page.focus('[role=slider]')
    await page.keyboard.press('i')
    await page.keyboard.press('ArrowRight')
    await page.keyboard.press('ArrowRight')
    await page.keyboard.down('Shift')
    await page.keyboard.press('ArrowRight')
    await page.keyboard.press('ArrowRight')
    await page.keyboard.up('Shift')
    await page.keyboard.press('o')
    await page.click('.player-keys summary')
    await page.waitForNetworkIdle({ idleTime: 300 })
    await (await page.$('.asset-preview'))!.screenshot({ path: join(OUT, 'player.png') as `${string}.png` })
    console.error('docs/screenshots/player.png')
    await page.goto(`${s.base}/projects`)
    await shoot(page, 'projects', 'main h1')
    await page.goto(`${s.base}/projects/${project.id}`)
    await shoot(page, 'project', 'main h1')
    await page.goto(`${s.base}/tasks`)
    await shoot(page, 'tasks', 'main h1')
    await page.goto(`${s.base}/devices`)
    await shoot(page, 'devices', 'main h1')
    await page.goto(`${s.base}/imports`)
    await shoot(page, 'imports', 'main h1')
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }])
    await page.goto(`${s.base}/assets`)
    await shoot(page, 'catalogue-dark', 'a[data-index="0"]')
    await context.close()
  } finally {
    await browser.close()
    await s.stop()
  }
  return true
}

void runBench(main, scratch.stopAll)
