// Browser tests inside `bun test`: a real Chromium (the one @sparticuz/chromium ships inside its npm
// package, so no download and no system browser) driven by puppeteer-core, against the app with
// the web page, listening on 127.0.0.1.
//
//   const server = await pageServer()            // beforeAll: the app + the page, on a free port
//   const browser = await sharedBrowser()        // beforeAll: the run's one Chromium, started once
//   await using tab = await browser.open(server.base)   // in a test: a fresh incognito context
//   await tab.page.type('input[name=username]', 'admin') ...
//   await eventually(async () => expect(await tab.page.title()).toBe('Devices · Reelhouse'))
//   await axe(tab.page)                          // no serious or critical accessibility violation
//   // leaving the block closes the context and fails the test if the page logged a console error,
//   // threw, or asked for anything from another host (tab.allowFailedResponse for an expected 4xx)
//   afterAll: await browser.close(); await server.stop()   // closes this file's contexts, not Chromium
//
// bun runs every test file in one process: the first file that asks starts Chromium, every later
// one uses it, and it ends with the process. Each tab has a context of its own (cookies, storage,
// cache), so no file or test sees another's.
//
// The page draws what it is asked for after an effect, a fetch or an event: a test waits for the
// state it checks (waitForSelector, waitForFunction, eventually), bounded, and never reads it once
// right after the action that leads to it.
//
// Puppeteer waits 5 s at most (PAGE_WAIT_MS), well under the tests' own timeouts (20-30 s): a test
// that bun times out can take Chromium down under every later test (a new one is started then).
import {
  chmodSync,
  createReadStream,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { createBrotliDecompress } from 'node:zlib'
import chromium from '@sparticuz/chromium'
import axeCore from 'axe-core'
import puppeteer, { type Browser, type BrowserContext, type HTTPResponse, type Page } from 'puppeteer-core'
import { buildPage, pageOf } from '../../src/http/pagebuild.ts'
import type { Page as PageFiles } from '../../src/http/pagebuild.ts'
import type { CoreOptions } from '../../src/core.ts'
import { testApp } from './app.ts'

export const PAGE_WAIT_MS = 5_000
/**
 * The longest a test waits for one state (a task's end on a busy machine). A wait is one call of
 * the DevTools protocol, which fails at protocolTimeout whatever the wait's own timeout: that is
 * set above this, so that a longer wait is not cut short at the protocol's bound.
 */
export const TASK_WAIT_MS = 60_000
const PROTOCOL_TIMEOUT_MS = TASK_WAIT_MS + 15_000
/** For the tests of a file of browser tests: setDefaultTimeout or each test's third argument. */
export const BROWSER_TEST_MS = 30_000

/**
 * Flags of the package's own list that are made for serverless functions and would make the tests
 * wrong or flaky: one process (crashes the first new browser context), web security, site isolation
 * and insecure content off (CORS, Origin and cookie checks would mean nothing), and its headless
 * flag (puppeteer's `headless: 'shell'` says it). Its GL through SwiftShader (ANGLE, a GPU emulated
 * in software) is replaced by --disable-gpu, Chromium's own software compositing: the tests read
 * the DOM and its styles, never pixels, and two browser files took 35 s of CPU (Chromium's
 * processes counted) with SwiftShader against 27 s without, in three alternating pairs.
 */
const DROPPED_FLAGS = new Set([
  '--use-gl=angle',
  '--use-angle=swiftshader',
  '--enable-unsafe-swiftshader',
  '--in-process-gpu',
  '--ignore-gpu-blocklist',
  '--single-process',
  '--disable-web-security',
  '--disable-site-isolation-trials',
  '--allow-running-insecure-content',
  "--headless='shell'",
])

function chromiumArgs(): string[] {
  return ['--disable-gpu', ...chromium.args].flatMap((arg) => {
    if (DROPPED_FLAGS.has(arg)) return []
    if (arg.startsWith('--disable-features=')) {
      const kept = arg
        .slice('--disable-features='.length)
        .split(',')
        .filter((f) => f !== 'IsolateOrigins' && f !== 'site-per-process')
      return kept.length ? [`--disable-features=${kept.join(',')}`] : []
    }
    return [arg]
  })
}

/**
 * The unpacked browser, in a folder of its own named by the package's version. The package's
 * executablePath() unpacks into $TMPDIR and reuses any $TMPDIR/chromium whatever its version (and a
 * half-unpacked one); pointing it elsewhere means changing TMPDIR for the whole process while it
 * runs, under any other work that makes a temporary folder then. So its three archives are unpacked
 * here, the way it does (brotli; two of them tar), into a folder of this process that is then
 * renamed into place: another process that got there first wins, and ours is removed.
 */
let unpacked: Promise<{ executable: string; fontconfig: string }> | undefined
export function chromiumExecutable() {
  return (unpacked ??= (async () => {
    const pkg = join(import.meta.dir, '..', '..', 'node_modules', '@sparticuz', 'chromium')
    const { version } = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { version: string }
    const dir = join(tmpdir(), `reelhouse-chromium-${version}`)
    const executable = join(dir, 'chromium')
    const fontconfig = join(dir, 'fonts.conf')
    if (existsSync(executable) && existsSync(fontconfig)) return { executable, fontconfig }
    const partial = `${dir}.partial-${process.pid}`
    rmSync(partial, { recursive: true, force: true })
    mkdirSync(join(partial, 'fonts'), { recursive: true })
    const brotli = (name: string) =>
      Readable.toWeb(
        createReadStream(join(pkg, 'bin', name)).pipe(createBrotliDecompress()),
      ) as ReadableStream<Uint8Array>
    const untar = async (name: string, into: string) => {
      const tar = Bun.spawn(['tar', '-x', '-C', into], { stdin: brotli(name), stdout: 'ignore', stderr: 'pipe' })
      if ((await tar.exited) !== 0)
        throw new Error(`tar could not unpack ${name}: ${await new Response(tar.stderr).text()}`)
    }
    await Promise.all([
      Bun.write(join(partial, 'chromium'), new Response(brotli('chromium.br'))).then(() =>
        chmodSync(join(partial, 'chromium'), 0o700),
      ),
      untar('fonts.tar.br', join(partial, 'fonts')),
      untar('swiftshader.tar.br', partial),
    ])
    // The package's fonts.conf names /tmp/fonts; ours names the fonts unpacked here, then the system's.
    writeFileSync(
      join(partial, 'fonts.conf'),
      `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n  <dir>${dir}/fonts</dir>\n  <dir>/usr/share/fonts</dir>\n  <cachedir>${dir}/fonts-cache</cachedir>\n</fontconfig>\n`,
    )
    try {
      renameSync(partial, dir)
    } catch {
      rmSync(partial, { recursive: true, force: true })
      if (!existsSync(executable)) throw new Error(`Chromium could not be unpacked into ${dir}`)
    }
    return { executable, fontconfig }
  })())
}

export type Tab = {
  page: Page
  context: BrowserContext
  /** The server's origin, `http://127.0.0.1:PORT`. */
  base: string
  /** URLs of requests to any other host: each was blocked. */
  blocked: string[]
  /** The answer to the first navigation (open's path). */
  response: HTTPResponse | null
  /** Console errors and uncaught page errors, in order. */
  errors: { text: string; url?: string }[]
  /** Lets the console error of one expected failed response (`/api/session/`, 401) pass. */
  allowFailedResponse(path: string, status: number): void
  /** Fails unless nothing was blocked and no error was logged but the allowed ones. */
  assertClean(): void
  [Symbol.asyncDispose](): Promise<void>
}

export type BrowserHandle = {
  /** A new incognito context (no cookie of another test) with a page showing `base` + `path`. */
  open(base: string, path?: string): Promise<Tab>
  close(): Promise<void>
}

async function launch(): Promise<Browser> {
  const { executable, fontconfig } = await chromiumExecutable()
  return puppeteer.launch({
    executablePath: executable,
    headless: 'shell',
    args: chromiumArgs(),
    env: { ...process.env, FONTCONFIG_FILE: fontconfig },
    defaultViewport: { width: 1280, height: 720 },
    protocolTimeout: PROTOCOL_TIMEOUT_MS,
    // Spoken to over a pipe, Chromium ends when this process does, however it ends: `bun test`
    // runs no exit handler (puppeteer's would kill it), and over a WebSocket it would outlive us.
    pipe: true,
  })
}

/** A Chromium of its own, closed by close(): for scripts (bench/). Tests take sharedBrowser(). */
export async function launchBrowser(): Promise<BrowserHandle & { browser: Browser }> {
  const browser = await launch()
  return {
    browser,
    open: (base, path = '/') => openTab(browser, base, path),
    close: () => browser.close(),
  }
}

/**
 * The process's one Chromium, started at the first call. One that went away (it crashed or
 * was killed) is forgotten, and the next call starts another. It ends with the process (launch:
 * its pipe closes).
 */
let running: Promise<Browser> | undefined
function processBrowser(): Promise<Browser> {
  const current = (running ??= launch())
  const forget = () => {
    if (running === current) running = undefined
  }
  return current.then(
    (browser) => {
      if (browser.connected) return browser
      forget()
      return processBrowser()
    },
    (error) => {
      forget()
      throw error
    },
  )
}

/**
 * A test file's use of the process's one Chromium: open() makes each tab a context of its own,
 * close() closes those still open (a test that failed before leaving its `await using` block) and
 * leaves Chromium running for the next file. Started here, so that a file's beforeAll waits for it.
 */
export async function sharedBrowser(): Promise<BrowserHandle> {
  await processBrowser()
  const contexts = new Set<BrowserContext>()
  return {
    open: async (base, path = '/') => openTab(await processBrowser(), base, path, contexts),
    async close() {
      await Promise.all([...contexts].map((context) => context.close().catch(() => {})))
      contexts.clear()
    },
  }
}

async function openTab(browser: Browser, base: string, path: string, contexts?: Set<BrowserContext>): Promise<Tab> {
  const context = await browser.createBrowserContext()
  contexts?.add(context)
  try {
    return await showIn(context, base, path)
  } catch (error) {
    await context.close().catch(() => {})
    throw error
  }
}

async function showIn(context: BrowserContext, base: string, path: string): Promise<Tab> {
  const page = await context.newPage()
  page.setDefaultTimeout(PAGE_WAIT_MS)
  page.setDefaultNavigationTimeout(PAGE_WAIT_MS)
  const origin = new URL(base).origin
  const blocked: string[] = []
  const errors: Tab['errors'] = []
  const allowed: { path: string; status: number }[] = []
  await page.setRequestInterception(true)
  page.on('request', (request) => {
    const url = request.url()
    if (url.startsWith('data:') || url.startsWith('blob:') || new URL(url).origin === origin)
      return void request.continue()
    blocked.push(url)
    void request.abort('blockedbyclient')
  })
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push({ text: message.text(), url: message.location().url })
  })
  page.on('pageerror', (error) => errors.push({ text: `page error: ${(error as Error).message ?? String(error)}` }))
  const tab: Tab = {
    page,
    context,
    base: origin,
    blocked,
    errors,
    response: null,
    allowFailedResponse: (path, status) => void allowed.push({ path, status }),
    assertClean() {
      // A blocked request logs a console error of its own: the list of blocked URLs says it better.
      const unexpected = errors.filter((error) => {
        if (error.url && blocked.includes(error.url)) return false
        const at = allowed.findIndex(
          (a) => error.url === `${origin}${a.path}` && error.text.includes(`status of ${a.status}`),
        )
        if (at < 0) return true
        allowed.splice(at, 1)
        return false
      })
      if (!blocked.length && !unexpected.length) return
      const message = `the page asked another host for ${JSON.stringify(blocked)} and logged ${JSON.stringify(unexpected)}`
      // Said here too: bun prints a SuppressedError (this and the test's own failure) without either.
      console.error(message)
      throw new Error(message)
    },
    async [Symbol.asyncDispose]() {
      await context.close().catch(() => {})
      tab.assertClean()
    },
  }
  tab.response = await page.goto(`${origin}${path}`, { waitUntil: 'load' })
  return tab
}

/**
 * Runs `assertion` until it passes, `timeout` ms at most (PAGE_WAIT_MS), then fails with its last
 * failure: how a test checks a state the page reaches after an effect, a fetch or an event (a
 * title, the focus, a URL, a text) without racing it, the assertion itself unchanged.
 */
export async function eventually(assertion: () => unknown, timeout = PAGE_WAIT_MS): Promise<void> {
  const end = Date.now() + timeout
  for (;;) {
    try {
      await assertion()
      return
    } catch (error) {
      if (Date.now() >= end) throw error
    }
    await Bun.sleep(25)
  }
}

/** Fills the sign-in form of `tab` and waits until the shell names the user. */
export async function signIn(tab: Tab, username: string, password: string) {
  await tab.page.waitForSelector('input[name=username]')
  await tab.page.type('input[name=username]', username)
  await tab.page.type('input[name=password]', password)
  await tab.page.click('button[type=submit]')
  await tab.page.waitForSelector('[data-testid=username]')
}

/** A new tab signed in through the sign-in view bound for `path`, which it shows then. */
export async function signedIn(
  browser: BrowserHandle,
  base: string,
  path: string,
  username: string,
  password: string,
): Promise<Tab> {
  const tab = await browser.open(base, `/signin?next=${encodeURIComponent(path)}`)
  await signIn(tab, username, password)
  return tab
}

export type Violation = { id: string; impact: string; help: string; nodes: string[] }

/**
 * Runs axe-core in the page and fails on any serious or critical violation, listing them. Its
 * source is evaluated through the DevTools protocol, which the page's CSP does not apply to: an
 * added <script> is refused by the CSP (as it should be), and setBypassCSP only takes effect at the
 * next load, where it would also hide any CSP violation of the page's own code from these tests.
 */
export async function axe(page: Page): Promise<Violation[]> {
  if (!(await page.evaluate('typeof window.axe !== "undefined"'))) await page.evaluate(axeCore.source)
  const violations =
    (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')),
  })))`)) as Violation[]
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
  if (serious.length) throw new Error(`accessibility violations: ${JSON.stringify(serious, null, 2)}`)
  return violations
}

/** The page built once per test file, from src/ui, as serve builds it from source. */
let built: Promise<PageFiles> | undefined
export const testPage = () => (built ??= buildPage().then(pageOf))

/**
 * The app (testApp: a temporary catalogue with the superuser admin and its key) serving the page,
 * listening on 127.0.0.1 on a free port. `tasks`: the task runner runs; `core`: createCore's
 * options (an ffmpeg folder, a settle time).
 */
export async function pageServer(options: { tasks?: boolean; core?: CoreOptions } = {}) {
  const page = await testPage()
  const t = testApp(undefined, { tasks: options.tasks, core: options.core, app: { pageFiles: async () => page } })
  t.app.listen({ hostname: '127.0.0.1', port: 0 })
  const server = t.app.server!
  return {
    ...t,
    base: `http://127.0.0.1:${server.port}`,
    async stop() {
      await server.stop(true)
      if (options.tasks) await t.runner.stop()
      t.cleanup()
    },
  }
}
