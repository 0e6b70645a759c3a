// The PostgreSQL catalogue's migrations (src/db/pg/migrate.ts, drizzle/pg) on a real server, a
// cluster of this test process's own, skipped where PostgreSQL is not installed: they build what src/db/schema.pg.ts describes, as the server's own
// catalog shows it (types, nullability, collations, identities, indexes, foreign keys); they are
// applied once however many starters run at once; and a range over one folder's paths lists that
// folder's files only, also in a database whose own collation orders text otherwise. Then the
// command line: `migrate --database` says what migrate says on SQLite, and every mistake (a URL of
// another kind, a server not there, another command given a PostgreSQL URL) is one line, exit 2.
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { SQL } from 'bun'
import { drizzle } from 'drizzle-orm/bun-sql'
import { PgTable, getTableConfig } from 'drizzle-orm/pg-core'
import { MIGRATION_LOCK_KEY, migratePostgres } from '../../src/db/pg/migrate.ts'
import * as schema from '../../src/db/schema.pg.ts'
import { freshDatabase, hasPostgres, postgresCluster } from '../helpers/pg.ts'
import { lines, runCli, runInProcess, SOURCE_CLI, TEST_TIMEOUT_MS } from '../helpers/process.ts'
import { tempDir } from '../helpers/temp.ts'

setDefaultTimeout(TEST_TIMEOUT_MS)

const JOURNAL = join(import.meta.dir, '../../drizzle/pg/meta/_journal.json')
/** How many migrations drizzle/pg holds: a fresh database gets them all. */
const migrationCount = (JSON.parse(readFileSync(JOURNAL, 'utf8')) as { entries: unknown[] }).entries.length

const tables = (Object.values(schema) as unknown[])
  .filter((v): v is PgTable => v instanceof PgTable)
  .map((t) => getTableConfig(t))

const clients: SQL[] = []
/** A client of the database at `url`, closed after the file's tests. */
function connect(url: string): SQL {
  const sql = new SQL(url)
  clients.push(sql)
  return sql
}
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()))
})

/** drizzle's record of applied migrations. */
const applied = async (sql: SQL) =>
  (await sql`SELECT hash, created_at FROM drizzle.__drizzle_migrations ORDER BY id`) as {
    hash: string
    created_at: string
  }[]

describe.skipIf(!hasPostgres)('on PostgreSQL', () => {
  test('a fresh database gets every migration, a second run none; each is recorded once', async () => {
    const { url } = await freshDatabase()
    expect(await migratePostgres(url)).toBe(migrationCount)
    expect(await migratePostgres(url)).toBe(0)
    const rows = await applied(connect(url))
    expect(rows).toHaveLength(migrationCount)
    expect(new Set(rows.map((r) => r.hash)).size).toBe(migrationCount)
  })

  test("the server's catalog holds every table and column of schema.pg.ts, with its type, nullability and collation", async () => {
    const { url } = await freshDatabase()
    await migratePostgres(url)
    const sql = connect(url)
    const found = (await sql`
      SELECT table_name, column_name, data_type, is_nullable, collation_name, is_identity, identity_generation
      FROM information_schema.columns WHERE table_schema = 'public'
      ORDER BY table_name, ordinal_position`) as Record<string, string | null>[]
    const columns = (rows: Record<string, string | null>[]) =>
      Object.fromEntries(
        rows.map((r) => [
          `${r.table_name}.${r.column_name}`,
          {
            type: r.data_type,
            nullable: r.is_nullable === 'YES',
            collation: r.collation_name,
            identity: r.is_identity === 'YES' ? r.identity_generation : null,
          },
        ]),
      )
    const expected = tables.flatMap((t) =>
      t.columns.map((c) => {
        const type = c.getSQLType()
        const collated = type === 'text COLLATE "C"'
        return {
          table_name: t.name,
          column_name: c.name,
          data_type: collated ? 'text' : type,
          is_nullable: c.notNull ? 'NO' : 'YES',
          collation_name: collated ? 'C' : null,
          is_identity: c.generatedIdentity ? 'YES' : 'NO',
          identity_generation: c.generatedIdentity ? 'BY DEFAULT' : null,
        }
      }),
    )
    expect(columns(found)).toEqual(columns(expected))
    // The columns this schema keeps in 64 bits, and the paths, as the server has them.
    const of = (name: string) => columns(found)[name]!
    for (const name of [
      'media_assets.id',
      'media_assets.file_dev',
      'media_assets.file_ino',
      'media_assets.file_size',
      'project_assets.files_bytes',
      'tasks.bytes_done',
      'tasks.bytes_total',
      'project_asset_links.asset_id',
    ])
      expect({ name, type: of(name).type }).toEqual({ name, type: 'bigint' })
    for (const name of [
      'media_assets.path_file',
      'media_assets.path_proxy',
      'dismissed_files.path_file',
      'devices.path',
      'productions.storage_root',
      'productions.proxy_root',
      'productions.upload_root',
      'project_assets.bundle_root',
      'project_assets.path_file',
      'import_logs.asset_path',
      'shots.path_thumbnail',
    ])
      expect({ name, collation: of(name).collation }).toEqual({ name, collation: 'C' })
    expect(of('media_assets.technical').type).toBe('json')
    expect(of('media_assets.is_production').type).toBe('boolean')
  })

  test('every index of schema.pg.ts is there, unique and partial as it says, and every foreign key with its ON DELETE', async () => {
    const { url } = await freshDatabase()
    await migratePostgres(url)
    const sql = connect(url)
    const indexes = (await sql`
      SELECT c.relname AS name, t.relname AS table, i.indisunique AS unique, i.indnatts AS columns,
             pg_get_expr(i.indpred, i.indrelid) AS predicate
      FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
      JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE n.nspname = 'public' AND NOT i.indisprimary
        AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)`) as {
      name: string
      table: string
      unique: boolean
      columns: number
      predicate: string | null
    }[]
    const byName = (list: { name: string }[]) => list.toSorted((a, b) => a.name.localeCompare(b.name))
    expect(byName(indexes.map((i) => ({ ...i, partial: i.predicate !== null, predicate: undefined })))).toEqual(
      byName(
        tables.flatMap((t) =>
          t.indexes.map((i) => ({
            name: i.config.name!,
            table: t.name,
            unique: i.config.unique,
            columns: i.config.columns.length,
            partial: i.config.where !== undefined,
            predicate: undefined,
          })),
        ),
      ),
    )
    // The partial conditions as the server reads them: booleans as booleans, kinds as text.
    const predicate = (name: string) => indexes.find((i) => i.name === name)?.predicate
    expect(predicate('media_assets_online_path')).toBe('(is_production = true)')
    expect(predicate('media_assets_video_list')).toBe(`(kind = 'video'::text)`)
    expect(predicate('tasks_key_queued')).toBe(`(state = 'queued'::text)`)

    const keys = (await sql`
      SELECT t.relname AS table, f.relname AS foreign_table, k.confdeltype AS on_delete,
             (SELECT array_agg(a.attname::text ORDER BY x.n) FROM unnest(k.conkey) WITH ORDINALITY x(attnum, n)
              JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = x.attnum) AS columns
      FROM pg_constraint k JOIN pg_class t ON t.oid = k.conrelid JOIN pg_class f ON f.oid = k.confrelid
      WHERE k.contype = 'f'`) as { table: string; foreign_table: string; on_delete: string; columns: string[] }[]
    const action: Record<string, string> = {
      a: 'no action',
      c: 'cascade',
      n: 'set null',
      r: 'restrict',
      d: 'set default',
    }
    const described = (list: { table: string; foreign_table: string; on_delete: string; columns: string[] }[]) =>
      list.map((k) => `${k.table}(${k.columns.join()}) -> ${k.foreign_table} on delete ${k.on_delete}`).toSorted()
    expect(described(keys.map((k) => ({ ...k, columns: [...k.columns], on_delete: action[k.on_delete]! })))).toEqual(
      described(
        tables.flatMap((t) =>
          t.foreignKeys.map((fk) => {
            const r = fk.reference()
            return {
              table: t.name,
              foreign_table: getTableConfig(r.foreignTable).name,
              on_delete: fk.onDelete ?? 'no action',
              columns: r.columns.map((c) => c.name),
            }
          }),
        ),
      ),
    )
  })

  test('rows through drizzle: 64-bit sizes, JSON as it was given, the seeded content types, ids never handed out twice', async () => {
    const { url } = await freshDatabase()
    await migratePostgres(url)
    const sql = connect(url)
    const db = drizzle({ client: sql, schema })
    expect(await db.select().from(schema.contentTypes).orderBy(schema.contentTypes.id)).toEqual([
      { id: 1, name: 'projectasset' },
      { id: 2, name: 'audioasset' },
      { id: 3, name: 'imageasset' },
      { id: 4, name: 'videoasset' },
    ])
    // The seed wrote its ids; the identity goes on past them.
    const [added] = await db.insert(schema.contentTypes).values({ name: 'other' }).returning()
    expect(added!.id).toBe(5)

    const t = '2026-11-21T09:30:00.123456Z'
    const [device] = await db
      .insert(schema.devices)
      .values({ name: 'disk', display_name: 'Disk', path: '/srv/', date_add: t })
      .returning()
    const [production] = await db
      .insert(schema.productions)
      .values({
        name: 'Show',
        codename: 'show',
        storage_root: '/srv/show/',
        proxy_root: '/srv/show/proxies/',
        upload_device: device!.id,
        audioasset_device: device!.id,
        imageasset_device: device!.id,
        videoasset_device: device!.id,
        date_add: t,
      })
      .returning()
    const big = 2 ** 40 + 3
    const asset = {
      kind: 'video' as const,
      name: 'clip',
      production: production!.id,
      device: device!.id,
      path_file: '/srv/show/clip.mov',
      date_add: t,
      date_mod: t,
      file_size: big,
      file_ino: 2 ** 52 + 1,
      file_stamp: 1700000000000.5,
      technical: { width: 1920, codec: 'prores', audio_streams: [] },
    }
    const [first] = await db.insert(schema.mediaAssets).values(asset).returning()
    expect(first).toMatchObject({ ...asset, is_production: true, pictures: {}, meta_field_store: {} })
    // json keeps the text as given (jsonb would put `codec` before `width`).
    const [stored] = (await sql`
      SELECT technical::text AS text, json_typeof(technical) AS type FROM media_assets WHERE id = ${first!.id}`) as {
      text: string
      type: string
    }[]
    expect(stored).toEqual({ text: '{"width":1920,"codec":"prores","audio_streams":[]}', type: 'object' })
    // The highest id deleted is not handed out again.
    await sql`DELETE FROM media_assets WHERE id = ${first!.id}`
    const [second] = await db.insert(schema.mediaAssets).values(asset).returning()
    expect(second!.id).toBe(first!.id + 1)
  })

  test('three migrate processes started at once: all exit 0, each migration applied once', async () => {
    const { url } = await freshDatabase()
    const runs = await Promise.all([1, 2, 3].map(() => runCli(['migrate', '--database', url], { cli: SOURCE_CLI })))
    for (const r of runs)
      expect({ code: r.code, stderr: lines(r.stderr) }).toEqual({ code: 0, stderr: [`database=${url}`] })
    expect(runs.map((r) => r.stdout).toSorted()).toEqual(
      [`applied ${migrationCount} migration(s)\n`, 'database is up to date\n', 'database is up to date\n'].toSorted(),
    )
    const rows = await applied(connect(url))
    expect(rows).toHaveLength(migrationCount)
    expect(new Set(rows.map((r) => r.hash)).size).toBe(migrationCount)
  })

  test('starters wait on the advisory lock: three held at the lock and let go together apply each migration once', async () => {
    const { url, name } = await freshDatabase()
    // This session holds the lock, so the three gather at it; then it lets go and they race.
    const holder = await connect(url).reserve()
    try {
      await holder.unsafe(`SELECT pg_advisory_lock(${MIGRATION_LOCK_KEY})`)
      const runs = Promise.all([1, 2, 3].map(() => runCli(['migrate', '--database', url], { cli: SOURCE_CLI })))
      const admin = connect(url)
      const deadline = Date.now() + TEST_TIMEOUT_MS / 2
      let waiting = 0
      while (waiting < 3 && Date.now() < deadline) {
        await Bun.sleep(50)
        const [row] = (await admin`
          SELECT count(*)::int AS n FROM pg_locks l JOIN pg_database d ON d.oid = l.database
          WHERE l.locktype = 'advisory' AND NOT l.granted AND d.datname = ${name}`) as { n: number }[]
        waiting = row!.n
      }
      expect(waiting).toBe(3)
      await holder.unsafe(`SELECT pg_advisory_unlock(${MIGRATION_LOCK_KEY})`)
      const done = await runs
      expect(done.map((r) => r.code)).toEqual([0, 0, 0])
      expect(done.map((r) => r.stdout).toSorted()).toEqual(
        [`applied ${migrationCount} migration(s)\n`, 'database is up to date\n', 'database is up to date\n'].toSorted(),
      )
      expect(await applied(admin)).toHaveLength(migrationCount)
    } finally {
      holder.release()
    }
  })

  test('a range over one folder lists its files only, in a database whose own collation orders text otherwise', async () => {
    const cluster = await postgresCluster()
    const admin = connect(cluster.url('postgres'))
    // A libc en_US.UTF-8 database where the machine has the locale, else an ICU en-US one.
    const [libc] =
      (await admin`SELECT 1 FROM pg_collation WHERE collname IN ('en_US.utf8', 'en_US.UTF-8')`) as unknown[]
    const [icu] = (await admin`SELECT 1 FROM pg_collation WHERE collname = 'en-US-x-icu'`) as unknown[]
    if (!libc && !icu) {
      console.log('skipped: this PostgreSQL has neither an en_US.UTF-8 (libc) nor an en-US ICU collation')
      return
    }
    const name = `en_us_${process.pid}_${Date.now()}`
    await admin.unsafe(
      libc
        ? `CREATE DATABASE ${name} TEMPLATE template0 LC_COLLATE 'en_US.UTF-8' LC_CTYPE 'en_US.UTF-8'`
        : `CREATE DATABASE ${name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'`,
    )
    const url = cluster.url(name)
    expect(await migratePostgres(url)).toBe(migrationCount)
    const sql = connect(url)
    const t = '2026-11-21T09:30:00.123456Z'
    await sql`INSERT INTO devices (id, name, display_name, path, date_add) VALUES (1, 'disk', 'Disk', '/srv/', ${t})`
    await sql`INSERT INTO productions (id, name, codename, storage_root, proxy_root, upload_device, audioasset_device,
      imageasset_device, videoasset_device, date_add) VALUES (1, 'Show', 'show', '/srv/show/', '/srv/show/p/', 1, 1, 1, 1, ${t})`
    for (const path of ['/srv/SHOW/x.mov', '/srv/show/y.mov'])
      await sql`INSERT INTO media_assets (kind, name, production, device, path_file, date_add, date_mod)
        VALUES ('video', 'x', 1, 1, ${path}, ${t}, ${t})`
    const inFolder = async (collation: string) =>
      (
        (await sql.unsafe(
          `SELECT path_file FROM media_assets WHERE path_file ${collation} >= '/srv/show/' AND path_file ${collation} < '/srv/show0' ORDER BY path_file`,
        )) as { path_file: string }[]
      ).map((r) => r.path_file)
    // path_file is COLLATE "C": byte order, as on SQLite.
    expect(await inFolder('')).toEqual(['/srv/show/y.mov'])
    // Under the database's own collation the same range is wrong, which is why the column has
    // COLLATE "C". With ICU en-US it lists both files: case weighs less than letters, and '/'
    // sorts before '0', so '/srv/SHOW/x.mov' falls between '/srv/show/' and '/srv/show0'. glibc's
    // en_US ignores the slashes at first, and compares 'srvshowymov' with 'srvshow0'.
    expect(await inFolder('COLLATE "default"')).not.toEqual(['/srv/show/y.mov'])
  })

  test('migrate --database and REELHOUSE_DATABASE apply the migrations and say what migrate says; the data folder is not used', async () => {
    const { url } = await freshDatabase()
    const data = join(tempDir(), 'never-made')
    expect(await runInProcess(['migrate', '--data', data, '--database', url])).toEqual({
      code: 0,
      stdout: `applied ${migrationCount} migration(s)\n`,
      stderr: `database=${url}\n`,
    })
    expect(await runInProcess(['migrate', '--data', data], { env: { REELHOUSE_DATABASE: url } })).toEqual({
      code: 0,
      stdout: 'database is up to date\n',
      stderr: `database=${url}\n`,
    })
    expect(existsSync(data)).toBe(false)
  })

  test('a database that is not there, or a password in the URL: one line, exit 2, never the password', async () => {
    const cluster = await postgresCluster()
    const url = cluster.url('nosuchdatabase').replace('reelhouse@', 'reelhouse:s3cret@')
    const r = await runInProcess(['migrate', '--database', url])
    expect({ code: r.code, stdout: r.stdout, lines: lines(r.stderr).length }).toEqual({ code: 2, stdout: '', lines: 1 })
    expect(r.stderr).toContain('database "nosuchdatabase" does not exist')
    expect(r.stderr).toContain(`${cluster.socketDir}/.s.PGSQL.${cluster.port}`)
    expect(r.stderr).not.toContain('s3cret')
  })
})

describe('the command line, with no server needed', () => {
  const noServer = () => `postgres://ana:s3cret@localhost:5432/reelhouse?host=${encodeURIComponent(tempDir())}`
  const cases: [string, () => { args: string[]; env?: Record<string, string> }, RegExp][] = [
    [
      'migrate --database mysql://...',
      () => ({ args: ['migrate', '--database', 'mysql://ana:s3cret@db/reelhouse'] }),
      /^reelhouse: --database must be a postgres:\/\/ or postgresql:\/\/ URL, not "mysql:\/\/ana@db\/reelhouse"$/,
    ],
    [
      'serve --database mysql://...',
      () => ({ args: ['serve', '--database', 'mysql://ana:s3cret@db/reelhouse'] }),
      /^reelhouse: --database must be a postgres:\/\/ or postgresql:\/\/ URL, not "mysql:\/\/ana@db\/reelhouse"$/,
    ],
    [
      'user list with REELHOUSE_DATABASE to a socket folder with no server',
      () => ({ args: ['user', 'list'], env: { REELHOUSE_DATABASE: noServer() } }),
      /^reelhouse: cannot connect to postgres:\/\/ana@localhost:5432\/reelhouse\?host=\S+ \(at \S+\/\.s\.PGSQL\.5432\): .+$/,
    ],
    [
      'backup --database postgres://...',
      () => ({ args: ['backup', 'x.db', '--database', noServer()] }),
      /^reelhouse: backup copies the SQLite catalogue of --data; back a PostgreSQL catalogue up with pg_dump \(pg_dump -Fc -f FILE URL\) or your PostgreSQL backups$/,
    ],
    [
      'migrate --database to a socket folder with no server',
      () => ({ args: ['migrate', '--database', noServer()] }),
      /^reelhouse: cannot connect to postgres:\/\/ana@localhost:5432\/reelhouse\?host=\S+ \(at \S+\/\.s\.PGSQL\.5432\): .+$/,
    ],
  ]
  test.each(cases)(
    '%s: one line on stderr, exit 2, no password (in this process and as bun src/main.ts)',
    async (_, make, said) => {
      const { args, env } = make()
      for (const r of [await runInProcess(args, { env }), await runCli(args, { env, cli: SOURCE_CLI })]) {
        expect({ code: r.code, stdout: r.stdout, lines: lines(r.stderr).length }).toEqual({
          code: 2,
          stdout: '',
          lines: 1,
        })
        expect(r.stderr.trimEnd()).toMatch(said)
        expect(r.stderr).not.toContain('s3cret')
      }
    },
  )
})

test('serve --database with no server there: its starting line, then one line naming where, exit 2; the data folder is not left claimed', async () => {
  const data = tempDir()
  const url = `postgres://ana:s3cret@localhost:5432/reelhouse?host=${encodeURIComponent(tempDir())}`
  const r = await runCli(['serve', '--data', data, '--port', '0', '--database', url], { cli: SOURCE_CLI })
  expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: '' })
  const said = lines(r.stderr)
  expect(said).toHaveLength(2)
  expect(said[0]).toContain(`starting data=${data}`)
  expect(said[1]).toMatch(
    /^reelhouse: cannot connect to postgres:\/\/ana@localhost:5432\/reelhouse\?host=\S+ \(at \S+\/\.s\.PGSQL\.5432\): .+$/,
  )
  expect(r.stderr).not.toContain('s3cret')
  expect(existsSync(join(data, 'serve.pid'))).toBe(false)
})
