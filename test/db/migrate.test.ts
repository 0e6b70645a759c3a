// Migration 0007 (ids never reused): a catalogue made by the migrations before it, with rows in
// every table, is rebuilt with AUTOINCREMENT on every integer id and keeps every row and every
// relation; afterwards a deleted record's id is never handed out again, and the schema the
// migrations build is the one src/db/schema.ts describes.
import type { Database } from 'bun:sqlite'
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { generateSQLiteDrizzleJson, generateSQLiteMigration } from 'drizzle-kit/api'
import { type MigrationMeta, readMigrationFiles } from 'drizzle-orm/migrator'
import { type Db, openDb } from '../../src/db/client.ts'
import { facetIndexes } from '../../src/db/facets.ts'
import { migrate } from '../../src/db/migrate.ts'
import * as schema from '../../src/db/schema.ts'
import { tempDir } from '../helpers/temp.ts'

const FOLDER = join(import.meta.dir, '../../drizzle')
const PREVIOUS = '0006_media_file_stamp'

/** The migrations up to and including `tag`, applied as migrate.ts applies them (one transaction). */
const journalTags = () =>
  (JSON.parse(readFileSync(join(FOLDER, 'meta/_journal.json'), 'utf8')) as { entries: { tag: string }[] }).entries.map(
    (e) => e.tag,
  )

function migrateTo(db: Db, tag: string) {
  const tags = journalTags()
  const upTo = readMigrationFiles({ migrationsFolder: FOLDER }).slice(0, tags.indexOf(tag) + 1)
  expect(upTo).toHaveLength(tags.indexOf(tag) + 1)
  const internals = db as unknown as {
    dialect: { migrate(m: MigrationMeta[], s: unknown, c: object): void }
    session: unknown
  }
  internals.dialect.migrate(upTo, internals.session, {})
}

const catalogue = () => openDb(join(tempDir(), 'reelhouse.db'))

/** The id a new project gets in a catalogue of the seed. */
const newProjectId = (db: Db) =>
  db
    .insert(schema.projectAssets)
    .values({ name: 'New', date_add: 't', date_mod: 't', bundle_root: '/mnt/disk/Show/new/', production: 1, device: 1 })
    .returning({ id: schema.projectAssets.id })
    .get().id

/**
 * Rows in every table of the previous schema, children pointing at parents, with gaps in the ids
 * (rows deleted before the migration) and every cascade a DROP TABLE could set off.
 */
const SEED = `
INSERT INTO users (id, username, is_superuser, date_add) VALUES (1, 'admin', 1, 't'), (3, 'ed', 0, 't');
INSERT INTO user_permissions (user_id, codename) VALUES (3, 'browser.add_device'), (3, 'browser.copy_projectasset');
INSERT INTO api_keys (id, user_id, key_hash, date_add) VALUES (2, 1, 'h1', 't'), (5, 3, 'h2', 't');
INSERT INTO transcoding_profiles (id, name) VALUES (4, 'prores');
INSERT INTO devices (id, name, display_name, path, transcoding_profile, passthrough_profiles, date_add) VALUES
  (1, 'disk', 'Disk', '/mnt/disk/', 4, '[4]', 't'), (2, 'nas', 'NAS', '/mnt/nas/', NULL, '[]', 't');
INSERT INTO productions (id, name, codename, storage_root, proxy_root, upload_device, audioasset_device, imageasset_device, videoasset_device, date_add) VALUES
  (1, 'Show', 'show', '/mnt/disk/Show/', '/mnt/disk/Show/proxies/', 1, 1, 1, 2, 't'),
  (6, 'Film', 'film', '/mnt/nas/Film/', '/mnt/nas/Film/proxies/', 2, 2, 2, 2, 't');
INSERT INTO production_access (user_id, production_id, level) VALUES (3, 1, 'write'), (3, 6, 'read');
INSERT INTO custom_metadata_sets (id, name, description, content_type) VALUES (2, 'Rights', '', 4);
INSERT INTO custom_metadata (id, key, value, "order", custom_metadata_set, validation_rule) VALUES (3, 'rights.owner', 'Owner', 1, 2, '^.+$');
INSERT INTO media_assets (id, kind, name, production, device, path_file, date_add, date_mod, file_dev, file_ino, file_stamp) VALUES
  (1, 'video', 'clip', 1, 1, '/mnt/disk/Show/clip.mov', 't', 't', 64769, 1234, 1700000000000.5),
  (7, 'audio', 'mix', 6, 2, '/mnt/nas/Film/mix.wav', 't', 't', NULL, NULL, NULL);
INSERT INTO media_asset_shares (asset_id, production_id) VALUES (7, 1);
INSERT INTO project_assets (id, name, date_add, date_mod, bundle_root, production, device, copy_of, deleting) VALUES
  (1, 'Cut', 't', 't', '/mnt/disk/Show/cut/', 1, 1, NULL, 0),
  (2, 'Cut copy', 't', 't', '/mnt/disk/Show/cut2/', 1, 1, 1, 0),
  (4, 'Old', 't', 't', '/mnt/disk/Show/old/', 1, 1, NULL, 1);
INSERT INTO project_asset_links (project_id, asset_id) VALUES (1, 1), (1, 7), (2, 1), (4, 7);
INSERT INTO keyword_categories (id, kind, name) VALUES (2, 'video', 'place');
INSERT INTO keywords (id, category_id, name) VALUES (3, 2, 'beach');
INSERT INTO media_asset_keywords (asset_id, keyword_id) VALUES (1, 3);
INSERT INTO import_logs (id, asset_type, asset_path, status, payload, production, asset_import_id, date_add, date_mod) VALUES
  (8, 'videoasset', '/mnt/disk/Show/clip.mov', 'import_completed', '{}', 1, 1, 't', 't');
INSERT INTO asset_hold_durations (id, asset_type, context_type, context, duration) VALUES (2, 'videoasset', 'device', 'disk', 30);
INSERT INTO tasks (id, kind, state, target, production, params, date_add, key, result) VALUES
  (3, 'copy', 'done', '{"projectasset":2}', 1, '{"source":"/mnt/disk/Show/cut/"}', 't', NULL, '{}'),
  (9, 'scan', 'queued', '{"device":1}', NULL, '{"device":1,"paths":null}', 't', 'scan:1', '{}'),
  (10, 'delete', 'running', '{"projectasset":4}', 1, '{}', 't', NULL, '{}');
`

type Row = Record<string, unknown>
const tablesOf = (client: Database) =>
  client
    .query<{ name: string }, []>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '__drizzle_migrations' ORDER BY name",
    )
    .all()
    .map((r) => r.name)

/** Every row of every table, in a stable order (by all columns: join tables have no id). */
function contents(client: Database): Record<string, Row[]> {
  return Object.fromEntries(
    tablesOf(client).map((table) => {
      const columns = client
        .query<{ name: string }, []>(`SELECT name FROM pragma_table_info('${table}')`)
        .all()
        .map((c) => `"${c.name}"`)
      return [table, client.query<Row, []>(`SELECT * FROM "${table}" ORDER BY ${columns.join(', ')}`).all()]
    }),
  )
}

/**
 * The schema as sqlite_master holds it (tables, their automatic indexes, indexes with their WHERE),
 * with quoting and spacing evened out: a rebuilt table is stored as CREATE TABLE "x" where a
 * fresh one reads CREATE TABLE `x`.
 */
function schemaOf(client: Database) {
  // ALTER TABLE ADD puts its column after the last one's text, before a line break: " , x" (0009).
  const even = (sql: string | null) =>
    sql
      ?.replace(/[`"]/g, '')
      .replace(/\s+/g, ' ')
      .replace(/\( /g, '(')
      .replace(/ \)/g, ')')
      .replace(/ ,/g, ',')
      .trim() ?? null
  return client
    .query<{ type: string; name: string; tbl_name: string; sql: string | null }, []>(
      "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE tbl_name <> '__drizzle_migrations' ORDER BY type, name",
    )
    .all()
    .map((r) => ({ ...r, sql: even(r.sql) }))
}

const foreignKeyProblems = (client: Database) => client.query('PRAGMA foreign_key_check').all()

describe('migration 0007: ids never reused', () => {
  test('a catalogue of the previous migration keeps every row and relation', () => {
    const db = catalogue()
    migrateTo(db, PREVIOUS)
    db.$client.run(SEED)
    const before = contents(db.$client)
    // Every table has rows, so that a cascade or a lost copy anywhere shows.
    expect(
      Object.entries(before)
        .filter(([, rows]) => rows.length === 0)
        .map(([t]) => t),
    ).toEqual([])

    // 0007 alone: a later migration may add columns, which this comparison of rows would see.
    migrateTo(db, '0007_ids_never_reused')
    expect(contents(db.$client)).toEqual(before)
    expect(foreignKeyProblems(db.$client)).toEqual([])
    expect(db.$client.query('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' })
    // The relations still act: deleting a user takes its keys, permissions and access with it.
    db.$client.run('DELETE FROM users WHERE id = 3')
    const after = contents(db.$client)
    expect([after.api_keys!.length, after.user_permissions!.length, after.production_access!.length]).toEqual([1, 0, 0])
    db.$client.close()
  })

  test('after the highest-id project is deleted, a new project gets a larger id; likewise every table', () => {
    const db = catalogue()
    migrateTo(db, PREVIOUS)
    db.$client.run(SEED)
    migrate(db)
    db.$client.run('DELETE FROM project_assets WHERE id = 4')
    // The delete cascaded to the project's links, and nothing else went.
    expect(db.$client.query('SELECT project_id, asset_id FROM project_asset_links ORDER BY 1, 2').all()).toEqual([
      { project_id: 1, asset_id: 1 },
      { project_id: 1, asset_id: 7 },
      { project_id: 2, asset_id: 1 },
    ])
    expect(newProjectId(db)).toBe(5)
    expect(foreignKeyProblems(db.$client)).toEqual([])

    // Every table with an integer id counts from its own highest id ever, not from what is left.
    // (The search index's shadow tables are FTS5's own: their ids are its segment numbers.)
    for (const table of tablesOf(db.$client).filter((name) => !name.startsWith('search_index'))) {
      const sql = db.$client
        .query<{ sql: string }, [string]>("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?")
        .get(table)!.sql
      if (/\bid\b[`"]? integer PRIMARY KEY/i.test(sql))
        expect([table, /AUTOINCREMENT/.test(sql)]).toEqual([table, true])
    }
    db.$client.close()
  })

  test('ids that history names (a task of a project deleted before, an import log of a deleted asset) are not given again', () => {
    const db = catalogue()
    migrateTo(db, PREVIOUS)
    db.$client.run(SEED)
    // Deleted before the upgrade, above every id left: a project copied by task 11, an asset of
    // import log 12, a device scanned by task 13.
    db.$client.run(`INSERT INTO tasks (id, kind, state, target, production, params, date_add, key, result) VALUES
      (11, 'copy', 'done', '{"projectasset":40}', 1, '{}', 't', NULL, '{}'),
      (13, 'scan', 'done', '{"device":30}', NULL, '{}', 't', NULL, '{}')`)
    db.$client.run(`INSERT INTO import_logs (id, asset_type, asset_path, status, payload, production, asset_import_id, date_add, date_mod) VALUES
      (12, 'videoasset', '/mnt/disk/Show/gone.mov', 'import_completed', '{}', 1, 60, 't', 't')`)
    migrate(db)
    const next = (table: string) =>
      db.$client.query<{ seq: number }, [string]>('SELECT seq FROM sqlite_sequence WHERE name = ?').get(table)?.seq
    expect([next('project_assets'), next('media_assets'), next('devices')]).toEqual([40, 60, 30])
    expect(newProjectId(db)).toBe(41)
    db.$client.close()
  })

  test('the schema after migrating equals a fresh catalogue, and the one schema.ts describes', async () => {
    const migrated = catalogue()
    migrateTo(migrated, PREVIOUS)
    migrated.$client.run(SEED)
    migrate(migrated)
    const fresh = catalogue()
    migrate(fresh)
    expect(schemaOf(migrated.$client)).toEqual(schemaOf(fresh.$client))

    // What drizzle-kit would create from schema.ts on an empty database: no drift between the
    // declared schema and what the migrations build (columns, order, keys, indexes, AUTOINCREMENT).
    const declared = catalogue()
    const statements = await generateSQLiteMigration(
      await generateSQLiteDrizzleJson({}),
      await generateSQLiteDrizzleJson(schema as never),
    )
    declared.$client.transaction(() => {
      for (const statement of statements) declared.$client.run(statement)
    })()
    // sqlite_sequence appears with the first AUTOINCREMENT table in both. The search index (0016),
    // a virtual table with its shadow tables, the views of its documents and the triggers that
    // keep it, is no drizzle table; nor are the facet indexes on expressions over technical (0024),
    // which drizzle-kit cannot describe (test/search/facets.test.ts holds them to db/facets.ts).
    const facetIndexNames = new Set(facetIndexes().map((i) => i.name))
    const searchObject = (r: { name: string; tbl_name: string }) =>
      r.tbl_name.startsWith('search_index') || r.name.includes('_search_') || facetIndexNames.has(r.name)
    expect(schemaOf(fresh.$client).filter((r) => !searchObject(r))).toEqual(schemaOf(declared.$client))
    for (const db of [migrated, fresh, declared]) db.$client.close()
  })
})

describe('migration 0016: the search index', () => {
  test('is built for the records that exist, and kept by the writes after it', () => {
    const db = catalogue()
    migrateTo(db, PREVIOUS)
    db.$client.run(SEED)
    migrate(db)
    const found = (q: string) =>
      db.$client
        .query<{ r: number }, [string]>('SELECT rowid AS r FROM search_index WHERE search_index MATCH ? ORDER BY rowid')
        .all(q)
        .map((r) => r.r)
    // Rowids: id * 4 + 0 video, 1 audio, 2 image, 3 project.
    expect(found('clip')).toEqual([4])
    expect(found('mix')).toEqual([29])
    expect(found('cut')).toEqual([7, 11])
    // The path's folder names, the keyword and its category.
    expect(found('film')).toEqual([29])
    expect(found('beach')).toEqual([4])
    expect(found('place')).toEqual([4])
    db.$client.run("UPDATE media_assets SET name = 'take' WHERE id = 1")
    expect(found('take')).toEqual([4])
    expect(found('beach')).toEqual([4])
    db.$client.run('DELETE FROM media_assets WHERE id = 7')
    expect(found('mix')).toEqual([])
    expect(db.$client.query('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' })
    db.$client.close()
  })
})

describe('migration 0021: keyword links leave the search document of an asset in search_deferred alone', () => {
  test('a link written for a listed asset does not rebuild its document; for any other it does, as before', () => {
    const db = catalogue()
    migrateTo(db, PREVIOUS)
    db.$client.run(SEED)
    migrate(db)
    const found = (q: string) =>
      db.$client
        .query<{ r: number }, [string]>('SELECT rowid AS r FROM search_index WHERE search_index MATCH ? ORDER BY rowid')
        .all(q)
        .map((r) => r.r)
    db.$client.run("INSERT INTO keywords (id, category_id, name) VALUES (4, 2, 'harbour'), (5, 2, 'lighthouse')")
    // Listed: the link is written, the document is not (its writer rebuilds it once at the end).
    db.$client.run('INSERT INTO search_deferred (asset_id) VALUES (1)')
    db.$client.run('INSERT INTO media_asset_keywords (asset_id, keyword_id) VALUES (1, 4)')
    db.$client.run('DELETE FROM media_asset_keywords WHERE asset_id = 1 AND keyword_id = 3')
    expect({ harbour: found('harbour'), beach: found('beach') }).toEqual({ harbour: [], beach: [4] })
    // Not listed: every link rebuilds it, the deferred one's included.
    db.$client.run('DELETE FROM search_deferred')
    db.$client.run('INSERT INTO media_asset_keywords (asset_id, keyword_id) VALUES (1, 5)')
    expect({ harbour: found('harbour'), lighthouse: found('lighthouse'), beach: found('beach') }).toEqual({
      harbour: [4],
      lighthouse: [4],
      beach: [],
    })
    db.$client.run('DELETE FROM media_asset_keywords WHERE asset_id = 1 AND keyword_id = 5')
    expect({ harbour: found('harbour'), lighthouse: found('lighthouse') }).toEqual({ harbour: [4], lighthouse: [] })
    expect(db.$client.query('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' })
    db.$client.close()
  })
})
