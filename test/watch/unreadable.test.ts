// A folder the service cannot read never stops a scan (issue 25): the compiled executable runs as
// an ordinary user (as root, the suite starts it through setpriv as nobody; root reads every
// folder whatever its mode), on a data folder and a device that user owns. Between two runs, a
// file is added to the watch folder, a catalogued file is removed, and the folder of another
// catalogued file is locked (mode 000): the start scan imports the one, takes the other offline,
// leaves the locked folder's asset as it was, and lists the folder it could not read.
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test'
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../helpers/app.ts'
import { type Server, call, compiledExecutable, killAll, startServe } from '../helpers/process.ts'
import { waitFor } from '../helpers/wait.ts'

setDefaultTimeout(180_000)
afterAll(killAll)

const asRoot = process.getuid?.() === 0
/** nobody:nogroup on Debian; the command that runs the executable as that user. */
const NOBODY = 65534
const asUser = asRoot ? ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups'] : []

test(`a scan${asRoot ? ' (as nobody, through setpriv)' : ''} skips a folder it cannot read: a file added while stopped is imported, a removed one goes offline, the locked folder's asset keeps its state, and the scan task lists the folder`, async () => {
  // Everything the user needs lies in one folder it may enter: the executable, the data, the device.
  const top = tempDir('reelhouse-unreadable-')
  chmodSync(top, 0o755)
  const bin = join(top, 'reelhouse')
  copyFileSync(await compiledExecutable(), bin)
  chmodSync(bin, 0o755)
  const data = join(top, 'data')
  const device = join(top, 'share') + '/'
  const locked = join(device, 'Show', 'private')
  mkdirSync(locked, { recursive: true })
  mkdirSync(data)
  const clip = (path: string) => (writeFileSync(path, `clip ${path}\n`), path)
  const gone = clip(join(device, 'Show', 'gone.mov'))
  const kept = clip(join(locked, 'kept.mov'))
  if (asRoot) Bun.spawnSync(['chown', '-R', `${NOBODY}:${NOBODY}`, data, device])

  const serve = () =>
    startServe(data, { cli: [...asUser, bin], args: ['--port', '0', '--settle', '1', '--ffmpeg', top] })
  let server: Server = await serve()
  const key = readFileSync(join(data, 'admin.token'), 'utf8').trim()
  const api = (method: string, path: string, body?: unknown) => call(server, method, path, key, body)
  expect((await api('POST', '/devices/', { name: 'share', path: device })).status).toBe(201)
  const production = await api('POST', '/productions/', { name: 'Show', storage_root: join(device, 'Show/') })
  expect(production.status).toBe(201)
  // Both files become assets (the device is the production's watch folder).
  const assetAt = async (path: string) =>
    (await api('GET', `/videoassets/?path_file=${encodeURIComponent(path)}`)).json[0]
  await waitFor(async () => (await assetAt(gone)) && (await assetAt(kept)), 'both files imported', { ms: 60_000 })
  const [goneId, keptId] = [(await assetAt(gone)).id, (await assetAt(kept)).id]
  expect(await server.proc.stop()).toBe(0)

  // While stopped: a new file, a removed one, a folder locked.
  const added = clip(join(device, 'Show', 'added.mov'))
  if (asRoot) Bun.spawnSync(['chown', `${NOBODY}:${NOBODY}`, added])
  rmSync(gone)
  chmodSync(locked, 0o000)
  try {
    server = await serve()
    await waitFor(async () => (await assetAt(added)) !== undefined, 'the added file imported', { ms: 60_000 })
    expect((await api('GET', `/videoassets/${goneId}/`)).json).toMatchObject({ path_file: gone, is_production: false })
    expect((await api('GET', `/videoassets/${keptId}/`)).json).toMatchObject({ path_file: kept, is_production: true })
    const scans = (await api('GET', '/tasks/?kind=scan&limit=1000')).json as {
      state: string
      result: Record<string, unknown> | null
    }[]
    const start = scans.filter((t) => t.result?.skipped_folders !== undefined)
    expect(start.length).toBeGreaterThan(0)
    expect(start[0]).toMatchObject({
      state: 'done',
      result: {
        skipped_folders: [{ path: locked + '/', reason: expect.stringContaining('EACCES') }],
        skipped_folders_count: 1,
      },
    })
    // One warning line naming the folder, per scan that met it.
    expect(server.proc.stderr).toContain(locked)
    expect(await server.proc.stop()).toBe(0)
  } finally {
    chmodSync(locked, 0o755)
  }
})
