// A real PostgreSQL for the tests: Debian's server binaries (the `postgresql` package), one
// cluster per test process made with initdb in a temporary folder, reached only through a Unix
// socket in that folder (no TCP port to collide with another run), and one fresh database per
// caller, copied from a template in one statement.
//
// PostgreSQL refuses to run as root, and the test machines run as root: there the cluster's
// folder is given to the `postgres` user the package makes (else `nobody`), and initdb and pg_ctl
// run as that user through runuser. The tests connect over the socket with trust authentication
// as the cluster's superuser `reelhouse`, whoever runs them.
//
// Nothing survives the run: the cluster is stopped (`pg_ctl stop -m immediate`) and its folder
// removed after the process's last test (stopPostgres, from test/setup.ts; bun test runs no
// 'exit' listeners), and a watchdog shell started beside it stops it if the test process dies
// first (SIGKILL, a crash).
import { spawn, spawnSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SQL } from 'bun'

/** Where the server binaries are: PG_BIN, else the newest of Debian's /usr/lib/postgresql/N/bin, else PATH. */
function binFolder(): string | undefined {
  if (process.env.PG_BIN) return process.env.PG_BIN
  const base = '/usr/lib/postgresql'
  if (existsSync(base)) {
    const versions = readdirSync(base)
      .filter((v) => /^\d+$/.test(v) && existsSync(join(base, v, 'bin', 'pg_ctl')))
      .sort((a, b) => Number(b) - Number(a))
    if (versions[0]) return join(base, versions[0], 'bin')
  }
  const found = spawnSync('sh', ['-c', 'command -v pg_ctl'], { encoding: 'utf8' }).stdout.trim()
  return found ? found.slice(0, found.lastIndexOf('/')) : undefined
}

const BIN = binFolder()

/** True when a PostgreSQL server can be started here (the binaries are installed). */
export const hasPostgres = BIN !== undefined
if (!hasPostgres) console.warn('PostgreSQL is not installed here: the tests on PostgreSQL are skipped')

export type Cluster = {
  /** The folder of the Unix socket (`host` in a connection URL). */
  socketDir: string
  port: number
  /** A connection URL for `database` (libpq's form: the socket folder as `host`). */
  url(database: string): string
}

/** The OS user the server runs as: this one, or, as root, `postgres` (or `nobody`). */
function serverUser(): { name: string; uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  for (const name of ['postgres', 'nobody']) {
    const r = spawnSync('id', ['-u', name], { encoding: 'utf8' })
    if (r.status === 0) {
      const gid = Number(spawnSync('id', ['-g', name], { encoding: 'utf8' }).stdout.trim())
      return { name, uid: Number(r.stdout.trim()), gid }
    }
  }
  throw new Error('running as root, and neither a postgres nor a nobody user exists to run PostgreSQL as')
}

/** Runs one of the server's programs, as the server's user; throws with its output when it fails. */
function run(user: ReturnType<typeof serverUser>, program: string, args: string[]) {
  const command = user ? 'runuser' : join(BIN!, program)
  const all = user ? ['-u', user.name, '--', join(BIN!, program), ...args] : args
  const r = spawnSync(command, all, { encoding: 'utf8', cwd: '/' })
  if (r.status !== 0) throw new Error(`${program} ${args.join(' ')} failed (${r.status}): ${r.stderr || r.stdout}`)
  return r.stdout
}

let cluster: Promise<Cluster> | undefined
let stopCluster: (() => void) | undefined

/** Stops the process's cluster, if one was started, and removes its folder. */
export function stopPostgres() {
  stopCluster?.()
  stopCluster = undefined
  cluster = undefined
}

/**
 * The test process's cluster, started on first use: initdb (trust, UTF-8, the C locale unless
 * `PG_TEST_LOCALE` names another, so that tests can also run under en_US), then pg_ctl start with
 * settings for tests (fsync off: a crashed test cluster is thrown away anyway).
 */
export function postgresCluster(): Promise<Cluster> {
  cluster ??= start()
  return cluster
}

async function start(): Promise<Cluster> {
  if (!BIN) throw new Error('PostgreSQL is not installed (Debian: apt-get install postgresql)')
  const user = serverUser()
  const root = mkdtempSync(join(process.env.PG_TEST_TMPDIR ?? tmpdir(), 'reelhouse-pg-'))
  const data = join(root, 'data')
  if (user) chownSync(root, user.uid, user.gid)
  chmodSync(root, 0o755)
  run(user, 'initdb', [
    '-D',
    data,
    '-U',
    'reelhouse',
    '--auth=trust',
    '--encoding=UTF8',
    `--locale=${process.env.PG_TEST_LOCALE ?? 'C'}`,
    '--no-sync',
  ])
  // A port number still matters with a socket: it names the socket file. One per process.
  const port = 20000 + (process.pid % 20000)
  const options = [
    `-c listen_addresses=''`,
    `-c unix_socket_directories='${root}'`,
    `-c port=${port}`,
    '-c fsync=off',
    '-c synchronous_commit=off',
    '-c full_page_writes=off',
    '-c max_connections=200',
    '-c shared_buffers=32MB',
  ].join(' ')
  run(user, 'pg_ctl', ['start', '-D', data, '-w', '-t', '60', '-l', join(root, 'server.log'), '-o', options])
  const stop = () => {
    spawnSync(user ? 'runuser' : join(BIN, 'pg_ctl'), [
      ...(user ? ['-u', user.name, '--', join(BIN, 'pg_ctl')] : []),
      'stop',
      '-D',
      data,
      '-m',
      'immediate',
    ])
    rmSync(root, { recursive: true, force: true })
  }
  stopCluster = stop
  // The watchdog: stops the cluster once this process is gone, however it ended.
  const pgCtl = user ? `runuser -u ${user.name} -- ${join(BIN, 'pg_ctl')}` : join(BIN, 'pg_ctl')
  writeFileSync(
    join(root, 'watchdog.sh'),
    `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done\n${pgCtl} stop -D '${data}' -m immediate >/dev/null 2>&1\nrm -rf '${root}'\n`,
  )
  spawn('sh', [join(root, 'watchdog.sh')], { detached: true, stdio: 'ignore' }).unref()
  const made = {
    socketDir: root,
    port,
    url: (database: string) => `postgres://reelhouse@localhost:${port}/${database}?host=${encodeURIComponent(root)}`,
  }
  const admin = new SQL(made.url('postgres'))
  try {
    await admin`CREATE DATABASE reelhouse_template`
  } finally {
    await admin.close()
  }
  return made
}

let databases = 0

/**
 * A new, empty database on the process's cluster, copied from its template; its URL. Dropped with
 * the cluster at exit (a test may drop it earlier with `dropDatabase`).
 */
export async function freshDatabase(): Promise<{ url: string; name: string }> {
  const c = await postgresCluster()
  const name = `t${process.pid}_${++databases}`
  const admin = new SQL(c.url('postgres'))
  try {
    await admin.unsafe(`CREATE DATABASE ${name} TEMPLATE reelhouse_template`)
  } finally {
    await admin.close()
  }
  return { url: c.url(name), name }
}
