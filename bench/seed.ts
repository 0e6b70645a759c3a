// Builds the benchmark catalogue through the real code path (openDb, migrate, createUsers), then
// adds one device, one production and N video assets in one transaction with a prepared statement.
import { randomBytes } from 'node:crypto'
import { dbFile } from '../src/config.ts'
import { openDb } from '../src/db/client.ts'
import { migrate } from '../src/db/migrate.ts'
import { runSync, sqlitePort } from '../src/db/port.ts'
import { createUsers } from '../src/modules/users/service.ts'
import { isoTimestamp } from '../src/util/time.ts'

const SHOWS = ['harbour-lights', 'northern-line', 'the-long-cut', 'glass-city', 'field-notes', 'night-shift']
const KINDS = ['interview', 'b-roll', 'drone', 'studio', 'archive', 'timelapse', 'vox-pop', 'establishing']
const CAMERAS = ['A', 'B', 'C', 'D']

/** A new catalogue in dataDir with `assets` video assets and a superuser key; returns the key. */
export function seedCatalogue(dataDir: string, assets: number): string {
  const db = openDb(dbFile(dataDir))
  try {
    migrate(db)
    const users = createUsers(sqlitePort(db))
    runSync(db, users.add('admin', { superuser: true }))
    const key = runSync(db, users.createKey('admin'))
    const client = db.$client
    const now = isoTimestamp()
    const device = client
      .query<{ id: number }, [string, string, string, string]>(
        'INSERT INTO devices (name, display_name, path, date_add) VALUES (?, ?, ?, ?) RETURNING id',
      )
      .get('online', 'Online storage', '/srv/media/', now)!.id
    const production = client
      .query<{ id: number }, [string, string, string, string, number, number, number, number, string]>(
        `INSERT INTO productions (name, codename, storage_root, proxy_root, upload_device, audioasset_device,
           imageasset_device, videoasset_device, date_add) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
      )
      .get(
        'Harbour Lights',
        'harbour-lights',
        '/srv/media/harbour-lights/',
        '/srv/media/harbour-lights/proxies/',
        device,
        device,
        device,
        device,
        now,
      )!.id
    const insert = client.prepare(
      `INSERT INTO media_assets (kind, name, description, production, device, status_asset, path_file, path_proxy,
         is_archive, is_production, meta_field_store, technical, date_crt, date_add, date_mod)
       VALUES ('video', ?, ?, ?, ?, ?, ?, ?, ?, ?, '{}', ?, ?, ?, ?)`,
    )
    client.transaction(() => {
      for (let i = 1; i <= assets; i++) {
        const show = SHOWS[i % SHOWS.length]!
        const kind = KINDS[i % KINDS.length]!
        const day = String((i % 28) + 1).padStart(2, '0')
        const name = `${show}_${kind}_cam${CAMERAS[i % 4]}_${String(i).padStart(6, '0')}.mxf`
        const path = `/srv/media/harbour-lights/footage/2025-03-${day}/${name}`
        insert.run(
          name,
          i % 5 === 0 ? `Day ${day}, ${kind} on camera ${CAMERAS[i % 4]}` : '',
          production,
          device,
          i % 97 === 0 ? -1 : 6,
          path,
          `/srv/media/harbour-lights/proxies/${name.replace(/\.mxf$/, '.mp4')}`,
          i % 11 === 0 ? 1 : 0,
          i % 11 === 0 ? 0 : 1,
          JSON.stringify({ codec: 'dnxhd', width: 1920, height: 1080, duration: 30 + (i % 600) }),
          `2025-03-${day}T10:00:00.000000Z`,
          now,
          now,
        )
      }
    })()
    return key
  } finally {
    // Everything into the main file, so that it can be copied alone.
    db.$client.run('PRAGMA wal_checkpoint(TRUNCATE)')
    db.$client.close()
  }
}

/** Adds `n` keys of the admin user (random hashes: nobody holds them). */
export function addKeys(dataDir: string, n: number): void {
  const db = openDb(dbFile(dataDir))
  try {
    const client = db.$client
    const admin = client.query<{ id: number }, []>("SELECT id FROM users WHERE username = 'admin'").get()!.id
    const insert = client.prepare('INSERT INTO api_keys (user_id, key_hash, date_add) VALUES (?, ?, ?)')
    const now = isoTimestamp()
    client.transaction(() => {
      for (let i = 0; i < n; i++) insert.run(admin, randomBytes(32).toString('hex'), now)
    })()
  } finally {
    db.$client.close()
  }
}
