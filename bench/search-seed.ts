// A catalogue for the search benchmark: N media assets with names, paths, descriptions, keywords
// and custom metadata as a facility's would read, spread over 20 productions, written through the
// migrated schema so that the search index is built by its own triggers.
import { dbFile } from '../src/config.ts'
import { openDb } from '../src/db/client.ts'
import { migrate } from '../src/db/migrate.ts'
import { runSync, sqlitePort } from '../src/db/port.ts'
import { createUsers } from '../src/modules/users/service.ts'
import { isoTimestamp } from '../src/util/time.ts'

const SUBJECTS = (
  'harbour pier lighthouse ferry trawler gull heron market bakery workshop forge quarry vineyard orchard meadow glacier ' +
  'volcano canyon desert oasis reef lagoon delta estuary marsh tundra steppe savanna jungle monastery cathedral mosque temple ' +
  'bazaar station airport runway hangar stadium arena theatre museum gallery library school hospital clinic laboratory factory ' +
  'refinery mine dam bridge tunnel viaduct highway roundabout alley courtyard rooftop balcony terrace garden greenhouse barn ' +
  'stable kennel aviary aquarium zoo circus carnival parade protest rally concert festival wedding funeral graduation election ' +
  'courtroom parliament embassy prison barracks checkpoint border customs warehouse dockyard shipyard crane container lorry ' +
  'tram subway cable-car gondola funicular monorail bicycle scooter motorbike tractor combine harvester sawmill'
).split(/\s+/)
const PLACES = (
  'Lisbon Porto Bergen Tromsø Reykjavík Gdańsk Kraków Brno Ljubljana Zagreb Split Kotor Tirana Thessaloniki Izmir ' +
  'Antalya Tbilisi Yerevan Baku Almaty Tashkent Samarkand Lahore Kochi Chennai Colombo Dhaka Yangon Hanoi Hội-An Manila Cebu ' +
  'Osaka Sapporo Busan Jeju Taipei Hualien Xiamen Kunming Ulaanbaatar Darwin Hobart Dunedin Suva Apia Lima Cusco Quito Cartagena ' +
  'Medellín Valparaíso Montevideo Córdoba Recife Salvador Belém Havana Oaxaca Mérida Tucson Juneau Halifax Québec Nuuk Tórshavn ' +
  'Cork Galway Inverness Cardiff Bristol Leeds Lille Nantes Bordeaux Marseille Genoa Bari Palermo Valletta Tunis Essaouira Dakar ' +
  'Accra Lagos Kampala Zanzibar Mombasa Windhoek Durban Maputo Antananarivo'
).split(/\s+/)
const SHOTS =
  'interview wide close-up drone aerial timelapse tracking handheld b-roll establishing cutaway reaction vox-pop portrait night golden-hour underwater slow-motion insert montage'.split(
    ' ',
  )
const MOODS = 'calm busy stormy foggy rainy sunny snowy windy quiet festive tense joyful somber bright'.split(' ')
const FIRST =
  'Anna Björn Chloé Dmitri Emma Farid Greta Hiro Ines Jonas Kemal Lena Malik Nora Oskar Priya Quentin Rosa Sven Tariq Una Viktor Wen Ximena Yusuf Zofia'.split(
    ' ',
  )
const LAST =
  'Andersen Berg Costa Dubois Eriksen Fischer García Haddad Ivanova Jensen Kowalski Lindqvist Moreau Nakamura Okafor Petrov Quispe Rossi Silva Tanaka Ulloa Varga Weber Xu Yilmaz Zhang'.split(
    ' ',
  )
const CAMERAS = [
  'Sony FX6',
  'Sony FX9',
  'Canon C300',
  'Canon C70',
  'ARRI Alexa Mini',
  'ARRI Amira',
  'RED Komodo',
  'RED V-Raptor',
  'Blackmagic URSA',
  'Panasonic EVA1',
]
const KINDS = ['video', 'video', 'video', 'audio', 'image'] as const
const EXT = { video: 'mov', audio: 'wav', image: 'jpg' }

/** A deterministic generator (the same catalogue every run). */
function random(seed: number) {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let x = Math.imul(s ^ (s >>> 15), 1 | s)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

export const SEARCH_PRODUCTIONS = 20

/** Productions the benchmark's reader may read: half of them. */
export const READER_PRODUCTIONS = SEARCH_PRODUCTIONS / 2

/**
 * A new catalogue in dataDir with `assets` media assets; returns the keys of the admin (a
 * superuser) and of `reader`, who reads the first READER_PRODUCTIONS productions.
 */
export function seedSearchCatalogue(dataDir: string, assets: number): { admin: string; reader: string } {
  const db = openDb(dbFile(dataDir))
  const rnd = random(21)
  const pick = <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)]!
  try {
    migrate(db)
    const users = createUsers(sqlitePort(db))
    runSync(db, users.add('admin', { superuser: true }))
    const key = runSync(db, users.createKey('admin'))
    runSync(db, users.add('reader', {}))
    const client = db.$client
    const now = isoTimestamp()
    const device = client
      .query<{ id: number }, [string]>(
        "INSERT INTO devices (name, display_name, path, date_add) VALUES ('nas', 'NAS', '/srv/nas/', ?) RETURNING id",
      )
      .get(now)!.id
    const productions: { id: number; codename: string }[] = []
    for (let p = 1; p <= SEARCH_PRODUCTIONS; p++) {
      const codename = `show-${String(p).padStart(2, '0')}`
      const id = client
        .query<{ id: number }, [string, string, string, string, number, number, number, number, string]>(
          `INSERT INTO productions (name, codename, storage_root, proxy_root, upload_device, audioasset_device, imageasset_device, videoasset_device, date_add)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
        )
        .get(
          `Show ${p}`,
          codename,
          `/srv/nas/${codename}/`,
          `/srv/nas/${codename}/proxies/`,
          device,
          device,
          device,
          device,
          now,
        )!.id
      productions.push({ id, codename })
    }
    const readerId = client.query<{ id: number }, []>("SELECT id FROM users WHERE username = 'reader'").get()!.id
    for (const p of productions.slice(0, READER_PRODUCTIONS)) runSync(db, users.grantById(readerId, p.id, 'read'))
    const readerKey = runSync(db, users.createKey('reader'))
    const set = client
      .query<{ id: number }, []>(
        "INSERT INTO custom_metadata_sets (name, description, content_type) VALUES ('Camera report', '', 4) RETURNING id",
      )
      .get()!.id
    for (const [key, value] of [
      ['video.camera', 'Camera'],
      ['video.operator', 'Operator'],
      ['video.scene', 'Scene'],
    ] as const)
      client.run('INSERT INTO custom_metadata (key, value, "order", custom_metadata_set) VALUES (?, ?, 1, ?)', [
        key,
        value,
        set,
      ])
    const categories = new Map<string, number>()
    const keywordIds = new Map<string, number>()
    const keyword = (kind: string, category: string, name: string) => {
      const c = `${kind}/${category}`
      let cat = categories.get(c)
      if (cat === undefined)
        categories.set(
          c,
          (cat = client
            .query<{ id: number }, [string, string]>(
              'INSERT INTO keyword_categories (kind, name) VALUES (?, ?) RETURNING id',
            )
            .get(kind, category)!.id),
        )
      const k = `${cat}/${name}`
      let id = keywordIds.get(k)
      if (id === undefined)
        keywordIds.set(
          k,
          (id = client
            .query<{ id: number }, [number, string]>(
              'INSERT INTO keywords (category_id, name) VALUES (?, ?) RETURNING id',
            )
            .get(cat, name)!.id),
        )
      return id
    }
    const insert = client.prepare<
      { id: number },
      [string, string, string, number, number, string, string, string, string, string]
    >(
      `INSERT INTO media_assets (kind, name, description, production, device, path_file, meta_field_store, date_crt, date_add, date_mod)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
    )
    const tag = client.prepare('INSERT OR IGNORE INTO media_asset_keywords (asset_id, keyword_id) VALUES (?, ?)')
    client.transaction(() => {
      for (let i = 1; i <= assets; i++) {
        const kind = pick(KINDS)
        const production = productions[i % SEARCH_PRODUCTIONS]!
        const subject = pick(SUBJECTS)
        const place = pick(PLACES)
        const shot = pick(SHOTS)
        const day = `2026-${String(1 + Math.floor(rnd() * 12)).padStart(2, '0')}-${String(1 + Math.floor(rnd() * 28)).padStart(2, '0')}`
        const card = `A${String(1 + Math.floor(rnd() * 300)).padStart(3, '0')}`
        const clip = `${card}_C${String(i % 10000).padStart(4, '0')}`
        const name = `${subject[0]!.toUpperCase()}${subject.slice(1)} ${place} ${shot.replace('-', ' ')} ${i}`
        const path = `/srv/nas/${production.codename}/${kind}/${day}/${card}/${clip}_${subject}_${shot}.${EXT[kind]}`
        const person = `${pick(FIRST)} ${pick(LAST)}`
        const description =
          rnd() < 0.4
            ? ''
            : `${pick(MOODS)} ${shot.replace('-', ' ')} of the ${subject} in ${place}${rnd() < 0.3 ? `, with ${person}` : ''}`
        const meta =
          kind === 'video'
            ? JSON.stringify({
                'video.camera': pick(CAMERAS),
                'video.operator': person,
                'video.scene': `${1 + Math.floor(rnd() * 80)}`,
              })
            : '{}'
        const id = insert.get(
          kind,
          name,
          description,
          production.id,
          device,
          path,
          meta,
          `${day}T10:00:00.000000Z`,
          now,
          now,
        )!.id
        if (rnd() < 0.6) tag.run(id, keyword(kind, 'Location', place))
        if (rnd() < 0.4) tag.run(id, keyword(kind, 'Mood', pick(MOODS)))
        if (rnd() < 0.2) tag.run(id, keyword(kind, 'People', person))
      }
    })()
    return { admin: key, reader: readerKey }
  } finally {
    db.$client.run('PRAGMA wal_checkpoint(TRUNCATE)')
    db.$client.close()
  }
}
