// The page as users get it: `reelhouse serve` from the compiled executable (the page embedded in
// it) and from source (`npm start`: built at the first request), on an empty data folder, run from
// another folder. A newcomer opens the URL of the serving line and signs in with the key the
// first start printed.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../helpers/app.ts'
import { BROWSER_TEST_MS, type BrowserHandle, axe, sharedBrowser } from '../helpers/browser.ts'
import { compiledExecutable, killAll, startServe } from '../helpers/process.ts'

setDefaultTimeout(BROWSER_TEST_MS)

const dirs: string[] = []
let browser: BrowserHandle
beforeAll(async () => {
  browser = await sharedBrowser()
})
afterAll(async () => {
  await browser?.close()
  await killAll()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

describe.each([['the executable'], ['source']])('served by %s', (how) => {
  test('the serving line names the page; its key signs in; the files come compressed and immutable', async () => {
    const data = join(tempDir('reelhouse-page-data-'), 'data')
    const cwd = tempDir('reelhouse-page-cwd-')
    dirs.push(data, cwd)
    const cli = how === 'source' ? undefined : [await compiledExecutable()]
    const server = await startServe(data, { cli, cwd: how === 'source' ? undefined : cwd })
    const url = /serving .* page=(\S+) /.exec(server.proc.stderr)?.[1]
    expect(url).toBe(`${server.base}/`)
    const key = readFileSync(join(data, 'admin.token'), 'utf8').trim()
    expect(server.proc.stdout).toContain(key)

    await using tab = await browser.open(server.base)
    expect(tab.response!.headers()['content-security-policy']).toStartWith("default-src 'self'")
    await tab.page.waitForSelector('input[name=username]')
    await tab.page.type('input[name=username]', 'admin')
    await tab.page.type('input[name=password]', key)
    await tab.page.click('button[type=submit]')
    await tab.page.waitForSelector('[data-testid=username]')
    await axe(tab.page)

    const script = /src="(\/ui\/[^"]+\.js)"/.exec(await (await fetch(server.base)).text())![1]!
    const answer = await fetch(`${server.base}${script}`, { headers: { 'accept-encoding': 'br' }, decompress: false })
    expect([answer.status, answer.headers.get('content-encoding'), answer.headers.get('cache-control')]).toEqual([
      200,
      'br',
      'public, max-age=31536000, immutable',
    ])
    expect(await server.proc.stop()).toBe(0)
  }, 120_000)
})
