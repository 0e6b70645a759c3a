// Productions: create with their roots and devices (service.md 6).
import slugify from '@sindresorhus/slugify'
import { eq, sql } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { devices, productions } from '../../db/schema.ts'
import { field, invalid, unique } from '../../http/errors.ts'
import { cleanDir, deviceFor, makeDirInside, reservedProblem } from '../../storage/paths.ts'
import { isoTimestamp } from '../../util/time.ts'
import type { DeviceRow } from '../devices/model.ts'
import type { Devices } from '../devices/service.ts'
import { projectHolding } from '../projectassets/bundles.ts'
import type { Principal, Users } from '../users/service.ts'
import type { ProductionCreate } from './index.ts'

const DEVICE_FIELDS = ['upload_device', 'audioasset_device', 'imageasset_device', 'videoasset_device'] as const

/**
 * The default codename of a production named `name`: lowercase ASCII letters and digits joined
 * by dashes, at most 90 characters, `production` when nothing is left (issue 27).
 *
 * A character whose accents fold away to ASCII is spelled as before ("Über" → `uber`, "½" →
 * `1-2`), so a name that made a codename before makes the same one now. Only the letters that
 * used to be dropped ("Ø", "ß", "Ł", Cyrillic, Greek) go to the library's transliteration:
 * "Ørsted" → `orsted`, "Ночная смена" → `nochnaya-smena`. Other symbols stay separators, and
 * the library's English touches are turned off (it would make "Tom & Jerry" `tom-and-jerry`,
 * "fooBar" `foo-bar` and "Conway's" `conways`, where the codename was `tom-jerry`, `foobar`
 * and `conway-s`).
 */
export function slug(name: string): string {
  const kept = Array.from(name, (c) => {
    const folded = c.normalize('NFKD').replace(/[\u0300-\u036f]/g, '')
    if (/[^\x00-\x7f]/.test(folded) && /\p{L}/u.test(folded)) return c
    return folded.replace(/[^\x00-\x7f]/g, ' ')
  }).join('')
  const s = slugify(kept, { decamelize: false, customReplacements: [['&', ' '], ["'", ' ']] })
  return (s || 'production').slice(0, 90)
}

function onDevice(all: DeviceRow[], value: string, pointer: string) {
  const path = field(pointer, () => cleanDir(value))
  const device = deviceFor(all, path)
  if (!device) throw invalid(pointer, 'The path does not lie on any device.')
  const reserved = reservedProblem(path)
  if (reserved) throw invalid(pointer, reserved)
  return { path, device }
}

export function createProductions(db: Db, deviceService: Devices, users: Users) {
  return {
    create(body: typeof ProductionCreate.static, user: Principal) {
      const all = deviceService.all()
      const storage = onDevice(all, body.storage_root, '/storage_root')
      const proxyRoot = body.proxy_root === undefined ? `${storage.path}proxies/` : onDevice(all, body.proxy_root, '/proxy_root').path
      for (const [pointer, path] of [['/storage_root', storage.path], ['/proxy_root', proxyRoot]] as const) {
        const holder = projectHolding(db, path)
        if (holder !== undefined) throw invalid(pointer, `The path lies inside the folder of project asset ${holder}.`)
      }
      if (body.proxy_url && !/^https?:\/\/\S+$/.test(body.proxy_url)) throw invalid('/proxy_url', 'Must be an http or https URL.')
      const ids: Record<string, number> = {}
      for (const field of DEVICE_FIELDS) {
        const id = body[field] ?? storage.device.id
        if (!all.some((d) => d.id === id)) throw invalid(`/${field}`, 'No device with this id.')
        ids[field] = id
      }
      let codename = body.codename
      if (codename === undefined) {
        const base = slug(body.name)
        codename = base
        for (let n = 2; db.select({ id: productions.id }).from(productions).where(eq(productions.codename, codename)).get(); n++)
          codename = `${base}-${n}`
      }
      if (db.select({ id: productions.id }).from(productions).where(eq(productions.name, body.name)).get())
        throw unique('/name', 'A production with this name already exists.')
      try {
        makeDirInside(storage.device.path, storage.path)
      } catch (error) {
        throw invalid('/storage_root', (error as Error).message)
      }
      const row = db
        .insert(productions)
        .values({
          name: body.name,
          codename,
          company: body.company ?? '',
          storage_root: storage.path,
          proxy_root: proxyRoot,
          proxy_url: body.proxy_url ?? '',
          ...(ids as Record<(typeof DEVICE_FIELDS)[number], number>),
          date_add: isoTimestamp(),
        })
        .returning()
        .get()
      // Whoever may create a production may work in it.
      if (!user.is_superuser) users.grantById(user.id, row.id, 'write')
      return row
    },
  }
}

export type Productions = ReturnType<typeof createProductions>
