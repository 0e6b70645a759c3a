// Preloaded into a serve (bun --preload) by test/cli/claim.test.ts: holds it just before it makes
// its claim on the data folder until every serve of the round is there too, so that they make it
// at the same moment. Started together, two serves reach that point milliseconds apart (their
// starts vary by more than the claim takes), and a claim that is not exclusive loses only when
// they meet there: without this barrier the race would be run, but seldom met.
//
// src/cli/serve.ts is loaded with its node:fs imports taken from here: the same functions, and
// the first one that writes a serve.pid file (serve.pid itself or any name beside it) waits at
// the barrier first. CLAIM_BARRIER names a folder, CLAIM_PARTIES how many serves meet there;
// each marks its arrival with a file named by its pid, which the test counts afterwards.
import { plugin } from 'bun'
import * as fs from 'node:fs'
import { basename, join } from 'node:path'

const folder = process.env.CLAIM_BARRIER
const parties = Number(process.env.CLAIM_PARTIES ?? 2)
const BOUND_MS = 10_000
let waited = false

function barrier(path: fs.PathLike) {
  if (waited || !folder || !basename(String(path)).startsWith('serve.pid')) return
  waited = true
  fs.writeFileSync(join(folder, String(process.pid)), '')
  // Synchronous, as the claim is: polled every millisecond, with a bound.
  const end = Date.now() + BOUND_MS
  while (fs.readdirSync(folder).length < parties && Date.now() < end) Bun.sleepSync(1)
}

export * from 'node:fs'
export function writeFileSync(...args: Parameters<typeof fs.writeFileSync>) {
  barrier(args[0] as fs.PathLike)
  return fs.writeFileSync(...args)
}
export function openSync(...args: Parameters<typeof fs.openSync>) {
  if (args[1] !== undefined && args[1] !== 'r') barrier(args[0])
  return fs.openSync(...args)
}
export function linkSync(...args: Parameters<typeof fs.linkSync>) {
  barrier(args[1])
  return fs.linkSync(...args)
}
export function renameSync(...args: Parameters<typeof fs.renameSync>) {
  barrier(args[1])
  return fs.renameSync(...args)
}

if (folder) {
  plugin({
    name: 'claim-barrier',
    setup(build) {
      build.onLoad({ filter: /[/\\]src[/\\]cli[/\\]serve\.ts$/ }, async ({ path }) => {
        const source = await Bun.file(path).text()
        const contents = source.replace(/from 'node:fs'/, `from ${JSON.stringify(import.meta.path)}`)
        if (contents === source) throw new Error(`claim-barrier: ${path} no longer imports from 'node:fs'`)
        return { contents, loader: 'ts' }
      })
    },
  })
}
