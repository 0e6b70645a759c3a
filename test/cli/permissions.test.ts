// Secrets at rest (service.md section 5, issue 10 point 8): the catalogue holds device passwords
// and key hashes, so the data folder is made 0700 and the catalogue files (with SQLite's -wal and
// -shm, and backups) 0600, whatever the umask; an existing install with looser modes is tightened
// by serve and migrate, each change logged. Real files, real commands, modes read with stat.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { folders } from '../helpers/envelope.ts'
import { killAll, lines, runCli, startServe } from '../helpers/process.ts'
import { waitFor } from '../helpers/wait.ts'

const dirs = folders()
const mode = (path: string) => (statSync(path).mode & 0o7777).toString(8).padStart(4, '0')
const modes = (paths: string[]) => Object.fromEntries(paths.map((p) => [p, mode(p)]))

// Children inherit the umask: 022 is the common default, under which a plain mkdir gives 0755.
let umask: number
beforeAll(() => {
  umask = process.umask(0o022)
})
afterAll(() => {
  process.umask(umask)
  dirs.cleanup()
})
afterEach(() => killAll())

describe('a new install under umask 022', () => {
  test('migrate makes the data folder (and the folders above it that it makes) 0700 and reelhouse.db 0600', async () => {
    const top = join(dirs.make(), 'made')
    const data = join(top, 'by', 'reelhouse')
    expect(await runCli(['migrate', '--data', data])).toMatchObject({ code: 0, stderr: `data=${data}\n` })
    expect(modes([top, data, join(data, 'reelhouse.db')])).toEqual({
      [top]: '0700',
      [data]: '0700',
      [join(data, 'reelhouse.db')]: '0600',
    })
  })

  test('while serve runs, -wal and -shm are 0600 like the catalogue, and a backup is 0600', async () => {
    const data = join(dirs.make(), 'data')
    const server = await startServe(data)
    const db = join(data, 'reelhouse.db')
    await waitFor(() => existsSync(`${db}-wal`) && existsSync(`${db}-shm`), 'the -wal and -shm files', { everyMs: 10 })
    expect(modes([data, db, `${db}-wal`, `${db}-shm`, join(data, 'admin.token')])).toEqual({
      [data]: '0700',
      [db]: '0600',
      [`${db}-wal`]: '0600',
      [`${db}-shm`]: '0600',
      [join(data, 'admin.token')]: '0600',
    })

    const backup = join(dirs.make(), 'copy.db')
    expect(await runCli(['backup', backup, '--data', data])).toEqual({
      code: 0,
      stdout: `backup written to ${backup}\n`,
      stderr: `data=${data}\n`,
    })
    expect(mode(backup)).toBe('0600')
    const again = await runCli(['backup', backup, '--data', data])
    expect({ code: again.code, stderr: lines(again.stderr) }).toEqual({
      code: 1,
      stderr: [`data=${data}`, expect.stringContaining('already exists')],
    })
    expect(await server.proc.stop('SIGTERM')).toBe(0)
  })
})

describe('an install made with looser modes', () => {
  /** A migrated data folder left as a plain mkdir and SQLite under umask 022 made it, and a file of the user's. */
  async function looseInstall() {
    const data = join(dirs.make(), 'data')
    expect((await runCli(['migrate', '--data', data])).code).toBe(0)
    chmodSync(data, 0o755)
    chmodSync(join(data, 'reelhouse.db'), 0o644)
    writeFileSync(join(data, 'notes.txt'), 'mine\n', { mode: 0o644 })
    return data
  }
  const tightened = (path: string, from: string, to: string) =>
    expect.stringMatching(new RegExp(` warn permissions tightened path=${path} from=${from} to=${to}$`))

  test('migrate takes group and other access off the folder and the catalogue files, says so, and leaves other files alone', async () => {
    const data = await looseInstall()
    const db = join(data, 'reelhouse.db')
    const r = await runCli(['migrate', '--data', data])
    expect({ code: r.code, stdout: r.stdout, stderr: lines(r.stderr) }).toEqual({
      code: 0,
      stdout: 'database is up to date\n',
      // SQLite made -wal and -shm from the catalogue's mode (0644) as migrate opened it.
      stderr: [
        `data=${data}`,
        tightened(data, '0755', '0700'),
        tightened(db, '0644', '0600'),
        tightened(`${db}-wal`, '0644', '0600'),
        tightened(`${db}-shm`, '0644', '0600'),
      ],
    })
    expect(modes([data, db, join(data, 'notes.txt')])).toEqual({
      [data]: '0700',
      [db]: '0600',
      [join(data, 'notes.txt')]: '0644',
    })
    expect((await runCli(['migrate', '--data', data])).stderr).toBe(`data=${data}\n`)
  })

  test('serve does the same before it listens', async () => {
    const data = await looseInstall()
    const db = join(data, 'reelhouse.db')
    const server = await startServe(data)
    const logged = lines(server.proc.stderr).filter((l) => l.includes('permissions'))
    expect(logged).toEqual([
      tightened(data, '0755', '0700'),
      tightened(db, '0644', '0600'),
      tightened(`${db}-wal`, '0644', '0600'),
      tightened(`${db}-shm`, '0644', '0600'),
    ])
    expect(modes([data, db, `${db}-wal`, `${db}-shm`])).toEqual({
      [data]: '0700',
      [db]: '0600',
      [`${db}-wal`]: '0600',
      [`${db}-shm`]: '0600',
    })
    expect(await server.proc.stop('SIGTERM')).toBe(0)
  })

  test('other commands leave the modes as they are', async () => {
    const data = await looseInstall()
    expect((await runCli(['user', 'add', 'editor', '--data', data])).code).toBe(0)
    expect(modes([data, join(data, 'reelhouse.db')])).toEqual({ [data]: '0755', [join(data, 'reelhouse.db')]: '0644' })
    expect(readFileSync(join(data, 'notes.txt'), 'utf8')).toBe('mine\n')
  })
})

test('in a folder that exists already, migrate makes a 0600 catalogue and tightens the folder, saying so', async () => {
  const data = join(dirs.make(), 'shared')
  mkdirSync(data, { mode: 0o755 })
  const r = await runCli(['migrate', '--data', data])
  expect({ code: r.code, stderr: lines(r.stderr) }).toEqual({
    code: 0,
    stderr: [`data=${data}`, expect.stringMatching(/ warn permissions tightened path=.* from=0755 to=0700$/)],
  })
  expect(modes([data, join(data, 'reelhouse.db')])).toEqual({ [data]: '0700', [join(data, 'reelhouse.db')]: '0600' })
})
