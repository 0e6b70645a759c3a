// Where one import's time goes (a helper of bench/import.ts, run by hand): a catalogue and a
// device of BENCH_PROFILE_FILES empty files in a temporary folder, the app in this process, and
// imports sent through app.handle (no network) BENCH_PROFILE_CONCURRENCY at a time until every
// follow-up task is done; prints µs per import. With --cpu-prof (bun's flag) it shows where.
// Usage: bun bench/import-profile.ts   (BENCH_PROFILE_FILES, BENCH_PROFILE_CONCURRENCY)
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApp } from '../src/app.ts'
import { createCore } from '../src/core.ts'
import { openDb } from '../src/db/client.ts'
import { migrate } from '../src/db/migrate.ts'
import { runSync, sqlitePort } from '../src/db/port.ts'
import { createUsers } from '../src/modules/users/service.ts'
import { silentLog } from '../src/util/log.ts'
import { envNumber } from './procs.ts'

const num = envNumber
const FILES = num('BENCH_PROFILE_FILES', 20_000)
const CONCURRENCY = num('BENCH_PROFILE_CONCURRENCY', 16)

const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'reelhouse-import-profile-')))
try {
  const data = join(tmp, 'data')
  mkdirSync(data, { mode: 0o700 })
  const device = join(tmp, 'device')
  for (let i = 0; i < FILES; i++) {
    if (i % 1000 === 0) mkdirSync(join(device, `d${String(i / 1000).padStart(3, '0')}`), { recursive: true })
    writeFileSync(
      join(device, `d${String(Math.floor(i / 1000)).padStart(3, '0')}`, `clip_${String(i).padStart(6, '0')}.mov`),
      '',
    )
  }
  const db = openDb(join(data, 'reelhouse.db'))
  migrate(db)
  const users = createUsers(sqlitePort(db))
  runSync(db, users.add('admin', { superuser: true }))
  const key = runSync(db, users.createKey('admin'))
  const emptyBin = join(tmp, 'bin')
  mkdirSync(emptyBin)
  const core = createCore(db, { log: silentLog, ffmpegDir: emptyBin })
  const app = createApp(core)
  core.runner.start()
  const headers = { authorization: `Token ${key}`, 'content-type': 'application/json' }
  const post = async (path: string, body: unknown) => {
    const r = await app.handle(
      new Request(`http://localhost${path}`, { method: 'POST', headers, body: JSON.stringify(body) }),
    )
    if (r.status >= 300) throw new Error(`${path}: ${r.status} ${await r.text()}`)
    return r.json() as Promise<any>
  }
  const dev = await post('/api/devices/', { name: 'Bench', path: device + '/' })
  await post('/api/productions/', {
    name: 'Bench',
    codename: 'bench',
    storage_root: device + '/',
    proxy_root: device + '/proxies/',
    upload_device: dev.id,
  })
  const importOne = (i: number) =>
    post('/api/asset/import/', {
      type: 'video',
      production: 'Bench',
      asset: {
        asset_meta: {
          name: `clip_${i}`,
          path_file: `${device}/d${String(Math.floor(i / 1000)).padStart(3, '0')}/clip_${String(i).padStart(6, '0')}.mov`,
          description: `Bench import ${i}`,
          width: 1920,
          height: 1080,
          duration: 250 + (i % 5000),
        },
      },
    })
  const round = async (from: number, to: number) => {
    let next = from
    const t = performance.now()
    const cpu = process.cpuUsage()
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < to) await importOne(next++)
      }),
    )
    const answered = performance.now() - t
    await core.runner.idle()
    const total = performance.now() - t
    const used = process.cpuUsage(cpu)
    const n = to - from
    console.log(
      `${n} imports: answered ${((answered * 1000) / n).toFixed(0)} µs each, tasks done ${((total * 1000) / n).toFixed(0)} µs each (${((n / total) * 1000).toFixed(0)}/s); CPU ${((used.user + used.system) / n).toFixed(0)} µs each`,
    )
  }
  await round(0, Math.min(2000, FILES)) // warm-up
  await round(Math.min(2000, FILES), FILES)
  await core.stop()
} finally {
  rmSync(tmp, { recursive: true, force: true })
}
