// A benchmark's run on PostgreSQL (BENCH_ENGINE=postgres): a private cluster started by the test
// suite's helper (test/helpers/pg.ts: initdb in a temporary folder, a Unix socket only, stopped
// and removed when this process ends), and the benchmark's own SQLite catalogue copied into a
// fresh database of it by `reelhouse migrate-to-postgres`, so that both engines serve the same
// rows with the same ids.
import { SQL } from 'bun'
import { freshDatabase, postgresCluster, stopPostgres } from '../test/helpers/pg.ts'
import { ROOT } from './procs.ts'

/** Whether this run measures the service on PostgreSQL. */
export const onPostgres = process.env.BENCH_ENGINE === 'postgres'

/** The cluster's version and the settings that change what is measured, as one line for the doc. */
export async function clusterSettings(url: string): Promise<string> {
  const client = new SQL(url)
  try {
    const show = async (name: string) => ((await client.unsafe(`SHOW ${name}`)) as Record<string, string>[])[0]![name]
    const [version] = (await client.unsafe('SHOW server_version')) as { server_version: string }[]
    const settings = ['fsync', 'synchronous_commit', 'full_page_writes', 'shared_buffers', 'max_connections']
    const values = await Promise.all(settings.map(show))
    return `PostgreSQL ${version!.server_version}, ${settings.map((s, i) => `${s}=${values[i]}`).join(', ')}`
  } finally {
    await client.close()
  }
}

/**
 * The SQLite catalogue of `dataDir` copied into a new database of this process's cluster (started
 * on first use) by `bun src/main.ts migrate-to-postgres`; its URL and the seconds the copy took.
 */
export async function copyToPostgres(dataDir: string): Promise<{ url: string; seconds: number }> {
  await postgresCluster()
  const { url } = await freshDatabase()
  const t0 = performance.now()
  const copy = Bun.spawnSync(
    [process.execPath, 'src/main.ts', 'migrate-to-postgres', '--data', dataDir, '--database', url],
    { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' },
  )
  if (copy.exitCode !== 0)
    throw new Error(`migrate-to-postgres failed (${copy.exitCode}):\n${copy.stderr.toString().slice(-2000)}`)
  // The planner's statistics and the visibility map (which lets an index-only scan skip the
  // table), as autovacuum makes them some time after a bulk copy: the copy itself makes neither,
  // and a catalogue in use has both.
  const client = new SQL(url)
  try {
    await client.unsafe('VACUUM (ANALYZE)')
  } finally {
    await client.close()
  }
  return { url, seconds: (performance.now() - t0) / 1000 }
}

/** Stops the cluster (also stopped by its watchdog when this process ends). */
export const stopCluster = stopPostgres

/**
 * A sentence for the doc when other work shared the machine (a one-minute load average above its
 * cores at the start or the end), else ''. `start` and `end` are machine().load's texts.
 */
export function sharedMachine(start: string, end: string, cores: number): string {
  const first = (load: string) => Number(load.split(' ')[0])
  if (Math.max(first(start), first(end)) <= cores) return ''
  return `The machine was shared while this ran: its one-minute load average went from ${first(start)} to ${first(end)} on ${cores} cores, so other work took CPU from every process measured. The absolute rates are lower than on an idle machine; the ratios, of runs back to back, are the figures to compare.`
}
