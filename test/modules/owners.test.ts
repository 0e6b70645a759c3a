// One writer per table (docs/api.md keeps the rules; the code keeps them here): each catalogue
// table is inserted into, updated and deleted from only under its owner's folder, so that its
// history, its rules and its statements stay in one place. Another feature that changes a row asks
// the owner: an import writes its new asset through the media assets' service, a device handing
// its records over calls each owner's function, the scan sets projects online through theirs.
// src/db/ (the schema and its migrations) makes the tables. Reads are not checked here; the tasks
// table has its own guard (test/tasks/owner.test.ts), which also checks reads.
import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from '../helpers/process.ts'

/** Each table, drizzle's name of it, and the folder that owns it. */
const TABLES = [
  { sql: 'media_assets', drizzle: 'mediaAssets', owner: 'src/modules/mediaassets/' },
  { sql: 'keywords', drizzle: 'keywords', owner: 'src/modules/mediaassets/' },
  { sql: 'keyword_categories', drizzle: 'keywordCategories', owner: 'src/modules/mediaassets/' },
  { sql: 'media_asset_keywords', drizzle: 'mediaAssetKeywords', owner: 'src/modules/mediaassets/' },
  { sql: 'project_assets', drizzle: 'projectAssets', owner: 'src/modules/projectassets/' },
  { sql: 'project_asset_links', drizzle: 'projectAssetLinks', owner: 'src/modules/projectassets/' },
  { sql: 'productions', drizzle: 'productions', owner: 'src/modules/productions/' },
  { sql: 'devices', drizzle: 'devices', owner: 'src/modules/devices/' },
  { sql: 'groups', drizzle: 'groups', owner: 'src/modules/users/' },
  { sql: 'users', drizzle: 'users', owner: 'src/modules/users/' },
  { sql: 'markers', drizzle: 'markers', owner: 'src/modules/markers/' },
  { sql: 'shots', drizzle: 'shots', owner: 'src/modules/shots/' },
  { sql: 'sequences', drizzle: 'sequences', owner: 'src/modules/shots/' },
  { sql: 'sequence_shots', drizzle: 'sequenceShots', owner: 'src/modules/shots/' },
] as const

const lineAt = (text: string, index: number) => text.slice(0, index).split('\n').length

/** The writes of `table` in `text`: drizzle's insert/update/delete of it, and SQL (a statement may span lines). */
function writes(text: string, table: (typeof TABLES)[number]): { line: number; use: string }[] {
  const drizzle = new RegExp(`\\b(insert|update|delete)\\(\\s*${table.drizzle}\\b`, 'g')
  const sql = new RegExp(
    `\\b(INSERT(?:\\s+OR\\s+\\w+)?\\s+INTO|REPLACE\\s+INTO|UPDATE(?:\\s+OR\\s+\\w+)?|DELETE\\s+FROM)\\s+"?${table.sql}\\b`,
    'gi',
  )
  return [
    ...[...text.matchAll(drizzle)].map((m) => ({ line: lineAt(text, m.index!), use: `${m[1]}(${table.drizzle})` })),
    ...[...text.matchAll(sql)].map((m) => ({
      line: lineAt(text, m.index!),
      use: `${m[1]!.toUpperCase().replace(/\s+/g, ' ')} ${table.sql}`,
    })),
  ]
}

function offences(path: string, text: string): string[] {
  return TABLES.filter((t) => !path.startsWith(t.owner))
    .flatMap((t) => writes(text, t))
    .sort((a, b) => a.line - b.line)
    .map((o) => `${path}:${o.line}: ${o.use}`)
}

test('no file under src/ writes a table outside its owner folder (src/db/ aside)', () => {
  const files = [...new Bun.Glob('src/**/*.{ts,tsx}').scanSync({ cwd: ROOT })]
    .map((f) => f.split('\\').join('/'))
    .filter((f) => !f.startsWith('src/db/'))
  expect(files.length).toBeGreaterThan(50)
  expect(files.sort().flatMap((f) => offences(f, readFileSync(join(ROOT, f), 'utf8')))).toEqual([])
})

test('the guard sees each way in, and only writes', () => {
  const sample = [
    'db.update(mediaAssets).set({ status_asset: 6 })',
    'tx.insert( keywords).values(row)',
    "db.$client.query('UPDATE project_assets SET date_mod = ? WHERE id = ?')",
    'const s = `INSERT OR IGNORE INTO media_asset_keywords (a, k) VALUES (?, ?)`',
    "db.$client.run('delete from productions where id = 1')",
    "db.$client.query('UPDATE",
    "  devices SET path = ?')",
    'db.select().from(mediaAssets).where(eq(mediaAssets.device, 1))',
    "db.$client.query('SELECT count(*) AS n FROM project_assets WHERE device = ?')",
    'UPDATE "media_assets" SET name = ?',
  ].join('\n')
  expect(offences('src/x.ts', sample)).toEqual([
    'src/x.ts:1: update(mediaAssets)',
    'src/x.ts:2: insert(keywords)',
    'src/x.ts:3: UPDATE project_assets',
    'src/x.ts:4: INSERT OR IGNORE INTO media_asset_keywords',
    'src/x.ts:5: DELETE FROM productions',
    'src/x.ts:6: UPDATE devices',
    'src/x.ts:10: UPDATE media_assets',
  ])
  // In its owner's folder, a write is the owner's.
  expect(offences('src/modules/mediaassets/service.ts', sample)).toEqual([
    'src/modules/mediaassets/service.ts:3: UPDATE project_assets',
    'src/modules/mediaassets/service.ts:5: DELETE FROM productions',
    'src/modules/mediaassets/service.ts:6: UPDATE devices',
  ])
})
