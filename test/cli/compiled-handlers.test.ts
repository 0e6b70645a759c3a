// The compiled executable composes every route as the source run does. Elysia writes each route's
// handler from the source text of our handlers and hooks (src/http/composed.ts); a build that
// changes that text (minification did) makes the executable await what the source calls, on every
// request, and nothing but its speed shows it. Both are started with REELHOUSE_DUMP_HANDLERS,
// which has serve write what Elysia composed for each route, and the two are compared.
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../helpers/app.ts'
import { compiledExecutable, killAll, SOURCE_CLI, startServe, TEST_TIMEOUT_MS } from '../helpers/process.ts'

setDefaultTimeout(TEST_TIMEOUT_MS)

afterAll(killAll)

/** What `cli serve` composed, by name ("GET /api/videoassets/ handler", "... server", "fetch", ...). */
async function composed(cli: string[]): Promise<Record<string, string>> {
  const dir = tempDir('reelhouse-composed-')
  const file = join(dir, 'composed.json')
  const server = await startServe(join(dir, 'data'), {
    cli,
    args: ['--port', '0', '--quiet'],
    env: { REELHOUSE_DUMP_HANDLERS: file },
  })
  // Written before the serving line startServe waited for.
  const text = readFileSync(file, 'utf8')
  expect(await server.proc.stop()).toBe(0)
  return JSON.parse(text) as Record<string, string>
}

/** Each name whose text differs, with its first differing line from each side (or "absent"). */
function differences(source: Record<string, string>, compiled: Record<string, string>) {
  const out: Record<string, { source: string; compiled: string }> = {}
  for (const name of new Set([...Object.keys(source), ...Object.keys(compiled)])) {
    const [a, b] = [source[name], compiled[name]]
    if (a === b) continue
    const [la, lb] = [a?.split('\n') ?? [], b?.split('\n') ?? []]
    const i = la.findIndex((line, n) => line !== lb[n])
    const at = i === -1 ? la.length : i
    out[name] = {
      source: a === undefined ? 'absent' : `line ${at}: ${la[at]}`,
      compiled: b === undefined ? 'absent' : `line ${at}: ${lb[at]}`,
    }
  }
  return out
}

test("the compiled executable's routes are composed as the source run's, handler for handler", async () => {
  const [source, compiled] = await Promise.all([composed(SOURCE_CLI), composed([await compiledExecutable()])])
  // Not compared over nothing: the routes users feel first are there, each in both of its parts.
  for (const route of ['GET /api/videoassets/', 'GET /api/videoassets/:id'])
    for (const part of ['handler', 'server']) expect(source[`${route} ${part}`]).toContain('function')
  expect(differences(source, compiled)).toEqual({})
})
