// The one owner of media_assets: lookups by path, under a folder and by identity use indexes
// (EXPLAIN QUERY PLAN of the very statements), every create records the file's identity, and
// single-file paths pass one gate (on a device, no link on the way, not a link themselves).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { and, eq, sql } from 'drizzle-orm'
import { mediaAssets } from '../../src/db/schema.ts'
import { type TestApp, seedProduction, testApp } from '../helpers/app.ts'

let t: TestApp
let root: string
let production: { id: number }

beforeAll(async () => {
  t = testApp()
  ;({ root, production } = await seedProduction(t))
  mkdirSync(join(root, 'Show', 'media', 'sub'), { recursive: true })
  writeFileSync(join(root, 'Show', 'media', 'a.mov'), 'a')
  writeFileSync(join(root, 'Show', 'media', 'sub', 'b.wav'), 'b')
})
afterAll(() => t.cleanup())

const create = (kind: string, path_file: string) =>
  t.post(`/api/${kind}assets/`, { name: 'n', path_file, production: production.id })

describe('lookups', () => {
  test('by path (any kind), under a folder, by identity and the count under a folder: each found through an index', async () => {
    const video = (await create('video', join(root, 'Show', 'media', 'a.mov'))).json
    const audio = (await create('audio', join(root, 'Show', 'media', 'sub', 'b.wav'))).json
    const media = t.core.media
    const port = t.core.port
    expect(port.run(media.byPath(join(root, 'Show', 'media', 'a.mov')))?.id).toBe(video.id)
    expect(port.run(media.byPath(join(root, 'Show', 'media', 'a.mov'), 'audio'))).toBeUndefined()
    expect(
      port
        .run(media.under(join(root, 'Show', 'media') + '/'))
        .map((m) => m.id)
        .sort(),
    ).toEqual([video.id, audio.id].sort())
    expect(port.run(media.under(join(root, 'Show', 'media', 'sub') + '/')).map((m) => m.id)).toEqual([audio.id])
    // A sibling whose name starts like the folder is not under it.
    expect(port.run(media.under(join(root, 'Show', 'med') + '/'))).toEqual([])
    const s = statSync(join(root, 'Show', 'media', 'a.mov'))
    expect((await media.byIdentities([{ dev: s.dev, ino: s.ino }])).map((m) => m.id)).toEqual([video.id])
    expect(port.run(media.countUnder(join(root, 'Show') + '/', production.id))).toBe(0)
    expect(port.run(media.countUnder(join(root, 'Show') + '/', production.id + 1))).toBe(2)

    // The plans of statements of the shapes these functions run (kinds listed, a range, the identity pair).
    const plan = (query: { toSQL(): { sql: string; params: unknown[] } }) => {
      const { sql: text, params } = query.toSQL()
      return t.db.$client
        .query<{ detail: string }, any[]>(`EXPLAIN QUERY PLAN ${text}`)
        .all(...(params as any[]))
        .map((r) => r.detail)
        .join('; ')
    }
    const kinds = sql`${mediaAssets.kind} IN ('audio', 'image', 'video')`
    expect(
      plan(
        t.db
          .select()
          .from(mediaAssets)
          .where(and(kinds, eq(mediaAssets.path_file, '/x'))),
      ),
    ).toContain('USING INDEX media_assets_path_kind')
    expect(
      plan(
        t.db
          .select()
          .from(mediaAssets)
          .where(and(kinds, sql`${mediaAssets.path_file} >= '/a/'`, sql`${mediaAssets.path_file} < '/a0'`)),
      ),
    ).toContain('USING INDEX media_assets_path_kind')
    expect(
      plan(
        t.db
          .select()
          .from(mediaAssets)
          .where(and(eq(mediaAssets.file_dev, 1), eq(mediaAssets.file_ino, 2))),
      ),
    ).toContain('USING INDEX media_assets_identity')
  })
})

describe('the single-file gate', () => {
  test('a create records the file identity; a file not there yet records none', async () => {
    writeFileSync(join(root, 'Show', 'media', 'c.mov'), 'c')
    const here = (await create('video', join(root, 'Show', 'media', 'c.mov'))).json
    const s = statSync(join(root, 'Show', 'media', 'c.mov'))
    const row = t.db.select().from(mediaAssets).where(eq(mediaAssets.id, here.id)).get()!
    expect([row.file_dev, row.file_ino]).toEqual([s.dev, s.ino])
    const offline = (await create('video', join(root, 'Show', 'media', 'not-yet.mov'))).json
    expect(t.db.select().from(mediaAssets).where(eq(mediaAssets.id, offline.id)).get()!.file_ino).toBeNull()
  })

  test('refused at /path_file: a link, a path through a linked folder, a folder, a device root, a work-folder name', async () => {
    symlinkSync(join(root, 'Show', 'media', 'a.mov'), join(root, 'Show', 'media', 'link.mov'))
    symlinkSync(join(root, 'Show', 'media'), join(root, 'Show', 'alias'))
    for (const path of [
      join(root, 'Show', 'media', 'link.mov'),
      join(root, 'Show', 'alias', 'a.mov'),
      join(root, 'Show', 'media') + '/',
      root + '/',
      join(root, 'Show', '.reelhouse-copy-1', 'a.mov'),
    ]) {
      const r = await create('video', path)
      expect([r.status, r.json.errors[0].code, r.json.errors[0].source]).toEqual([
        400,
        'invalid',
        { pointer: '/path_file' },
      ])
      expect(r.json.errors[0].detail).not.toContain(join(root, 'Show', 'media', 'a.mov'))
    }
    rmSync(join(root, 'Show', 'alias'))
  })
})
