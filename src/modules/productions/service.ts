// Productions: create with their roots and devices (docs/api.md, Resources).
import slugify from '@sindresorhus/slugify'
import { and, count as countRows, eq, ne } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { type Work, all, one, run, tx } from '../../db/port.ts'
import { mediaAssets, productions, projectAssets } from '../../db/tables.ts'
import { refuseReadOnly } from '../../http/edit.ts'
import { AppError, field, forbidden, invalid, noSuchRecord, notFound, unique } from '../../http/errors.ts'
import type { HoldDurations } from '../assetholddurations/service.ts'
import { actorOf, historyOf } from '../history/service.ts'
import type { ImportLogs } from '../importlogs/service.ts'
import { canRead, canWrite, requirePerm, requireWrite } from '../users/access.ts'
import {
  PathError,
  type PathRules,
  SEP,
  cleanDir,
  deviceFor,
  folderBelow,
  isInside,
  makeDirInside,
  realOf,
  reservedProblem,
  samePath,
} from '../../storage/paths.ts'
import { requireFileWork } from '../../storage/platform.ts'
import { patternsProblem } from '../../watch/patterns.ts'
import { isoTimestamp } from '../../util/time.ts'
import type { DeviceRow } from '../devices/model.ts'
import type { Devices } from '../devices/service.ts'
import { projectHolding } from '../projectassets/bundles.ts'
import type { Principal, Users } from '../users/service.ts'
import type { ProductionCreate, ProductionUpdate } from './model.ts'

const DEVICE_FIELDS = ['upload_device', 'audioasset_device', 'imageasset_device', 'videoasset_device'] as const
/** The fields history records. */
const FIELDS = [
  'name',
  'codename',
  'company',
  'storage_root',
  'proxy_root',
  'proxy_url',
  'upload_root',
  'move_uploads',
  'ignore_patterns',
  ...DEVICE_FIELDS,
] as const
type Row = typeof productions.$inferSelect

/**
 * Fields the service sets, with what a request that changes one is told (400 invalid at it). Their
 * values as the record answers them are accepted (a record read, changed and sent back).
 */
const READ_ONLY: Record<string, string> = {
  id: 'id is set by the service.',
  can_write:
    "can_write says what the requesting user may do in the production; it follows the user's access (reelhouse user grant).",
  can_delete_assets:
    "can_delete_assets says what the requesting user may do in the production; it follows the user's access and permissions.",
  members: 'members lists the users with access to the production; access is given with reelhouse user grant.',
  san_mount: 'san_mount is always "" (devices are folders here).',
  export_type: 'export_type is always "".',
  default_approval_status: 'default_approval_status is always 0 (an import says approval 1 for an approved asset).',
  direct_attached_site: 'direct_attached_site is always 1 (one site).',
  network_attached_site: 'network_attached_site is always [] (one site).',
  member_groups: 'member_groups is always [] (no user groups).',
  projectasset_device: 'projectasset_device is always null: a project asset lies on the device of its bundle_root.',
}

/**
 * The default codename of a production named `name`: lowercase ASCII letters and digits joined
 * by dashes, at most 90 characters, `production` when nothing is left.
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
  const s = slugify(kept, {
    decamelize: false,
    customReplacements: [
      ['&', ' '],
      ["'", ' '],
    ],
  })
  return (s || 'production').slice(0, 90)
}

/**
 * A production's proxy_root when none is given: the folder `proxies` in its storage_root (a
 * cleaned folder path), spelled as the platform whose separator is `sep` writes folders.
 */
export const defaultProxyRoot = (storageRoot: string, sep: PathRules['sep'] = SEP): string =>
  folderBelow(storageRoot, ['proxies'], sep)

function onDevice(all: DeviceRow[], value: string, pointer: string) {
  const path = field(pointer, () => cleanDir(value))
  const device = deviceFor(all, path)
  if (!device) throw invalid(pointer, 'The path does not lie on any device.')
  const reserved = reservedProblem(path)
  if (reserved) throw invalid(pointer, reserved)
  return { path, device }
}

/**
 * upload_root as given: null clears it. Form data carries text only, so there null is spelled
 * `null` (a record read and sent back as a form) or left empty; neither is a path (not absolute).
 */
const givenDrop = (value: string | null | undefined) => (value === '' || value === 'null' ? null : value)

/**
 * A production's drop folder (docs/watcher.md, Laying out drop folders): a folder on a device, watched as its watch
 * folder instead of the whole upload_device (whose id becomes the folder's device). It may lie in
 * the production's own storage_root or anywhere outside every other production's folders: never
 * inside another production's storage_root, nor in a proxy_root (the service's own output), nor
 * inside or around another production's drop folder (a file there would have two owners). The
 * check by path as stored, as the watcher's ingestOwner compares.
 */
function* dropFolder(
  db: Db,
  every: DeviceRow[],
  value: string,
  self: { id?: number; storage_root: string; proxy_root: string },
): Work<{ path: string; device: DeviceRow }> {
  const drop = onDevice(every, value, '/upload_root')
  const others = (yield* all(
    db
      .select({
        id: productions.id,
        storage_root: productions.storage_root,
        proxy_root: productions.proxy_root,
        upload_root: productions.upload_root,
      })
      .from(productions),
  )).filter((p) => p.id !== self.id)
  const within = (parent: string) => drop.path === parent || isInside(parent, drop.path)
  if (within(self.proxy_root) || others.some((p) => within(p.proxy_root)))
    throw invalid('/upload_root', "The drop folder lies in a proxy_root: the service's own output is never input.")
  const foreign = others.find(
    (p) => within(p.storage_root) && !(within(self.storage_root) && isInside(p.storage_root, self.storage_root)),
  )
  if (foreign)
    throw invalid(
      '/upload_root',
      `The drop folder lies inside the storage_root of production ${foreign.id}: files there are that production's.`,
    )
  const shared = others.find(
    (p) => p.upload_root !== null && (within(p.upload_root) || isInside(drop.path, p.upload_root)),
  )
  if (shared)
    throw invalid(
      '/upload_root',
      `The drop folder overlaps the drop folder of production ${shared.id}: each file has one production.`,
    )
  const holder = yield* projectHolding(db, drop.path)
  if (holder !== undefined) throw invalid('/upload_root', `The path lies inside the folder of project asset ${holder}.`)
  return drop
}

/** Where one folder lies against another: the same, inside it, holding it, or apart. */
function placeOf(folder: string, other: string): 'same' | 'inside' | 'around' | undefined {
  if (samePath(folder, other)) return 'same'
  if (isInside(other, folder)) return 'inside'
  if (isInside(folder, other)) return 'around'
  return undefined
}

/**
 * Whether a production's new roots respect the other productions' folders (docs/api.md,
 * "Where a production's folders may lie"). A production owns the files under its storage_root
 * (the watcher imports them into it) and its proxy_root holds the service's own output (never
 * imported), so, compared by real path (links resolved):
 * - a user who is not a superuser needs write access to every production whose storage root,
 *   proxy root or drop folder a new root is, lies in or holds (403, in the territory rule's words;
 *   a production the user cannot read is not named);
 * - a proxy_root never is, holds, or lies in another production's storage_root (the watcher would
 *   stop importing that production's files there), unless it lies in the production's own storage
 *   root nested there; nor does it hold the production's own storage_root (400, for anyone);
 * - a storage_root never is or lies in another production's proxy_root (its files would never be
 *   imported), and never is, holds or lies in another production's drop folder outside that
 *   production's storage_root (a dropped file would change hands) (400, for anyone);
 * - one storage_root in or around another's is an explicit choice, for anyone: 409 unless the
 *   request says `?nest=true` (the deeper root then owns the files under it); the same storage_root
 *   for two productions never.
 * `changed` names the roots that are new (a create: both).
 */
function* refuseForeignRoots(
  db: Db,
  user: Principal,
  self: { id?: number; storage_root: string; proxy_root: string },
  changed: { storage_root: boolean; proxy_root: boolean },
  nest: boolean,
): Work<void> {
  const others = (yield* all(
    db
      .select({
        id: productions.id,
        name: productions.name,
        storage_root: productions.storage_root,
        proxy_root: productions.proxy_root,
        upload_root: productions.upload_root,
      })
      .from(productions),
  )).filter((p) => p.id !== self.id)
  const storage = realOf(self.storage_root)
  const proxy = realOf(self.proxy_root)
  if (isInside(proxy, storage) || samePath(proxy, storage))
    throw invalid(
      '/proxy_root',
      "The proxy_root holds the production's own storage_root: its files would never be imported.",
    )
  if (!others.length) return
  const mine = (
    [
      ['storage_root', storage],
      ['proxy_root', proxy],
    ] as const
  ).filter(([f]) => changed[f])
  const theirs = others.map((p) => ({
    ...p,
    storage: realOf(p.storage_root),
    proxy: realOf(p.proxy_root),
    drop: p.upload_root === null ? undefined : realOf(p.upload_root),
  }))
  if (!user.is_superuser)
    for (const [f, root] of mine)
      for (const p of theirs) {
        if (canWrite(user, p.id)) continue
        const place = [p.storage, p.proxy, p.drop].map((folder) => folder && placeOf(root, folder)).find(Boolean)
        if (!place) continue
        throw forbidden(
          canRead(user, p.id)
            ? `${f} ${place === 'around' ? 'holds' : 'lies inside'} the folders of production ${p.id}; you need write access to production ${p.id}.`
            : `${f} lies in or around the folders of a production you do not have write access to.`,
        )
      }
  if (changed.storage_root) {
    for (const p of theirs) {
      const place = placeOf(storage, p.proxy)
      if (place === 'same' || place === 'inside')
        throw invalid(
          '/storage_root',
          `The storage_root ${place === 'same' ? 'is' : 'lies in'} the proxy_root of production ${p.id}: files there are never imported.`,
        )
      const drop = p.drop && !isInside(p.storage, p.drop) ? placeOf(storage, p.drop) : undefined
      if (drop)
        throw invalid(
          '/storage_root',
          `The storage_root ${drop === 'around' ? 'holds' : drop === 'same' ? 'is' : 'lies in'} the drop folder of production ${p.id}: each dropped file has one production.`,
        )
    }
    for (const p of theirs) {
      const place = placeOf(storage, p.storage)
      if (place === 'same')
        throw invalid('/storage_root', `Production ${p.id} has this storage_root: each file has one production.`)
      if (place && !nest)
        throw new AppError(
          409,
          'conflict',
          `The storage_root ${place === 'around' ? 'holds' : 'lies inside'} the storage_root of production ${p.id} (${p.name}). ` +
            `Nesting one production's folders in another's is an explicit choice: send the request again with ?nest=true, and the deeper storage_root owns the files under it.`,
        )
    }
  }
  if (changed.proxy_root) {
    for (const p of theirs) {
      const place = placeOf(proxy, p.storage)
      if (!place || (place === 'inside' && isInside(storage, proxy) && placeOf(storage, p.storage) === 'inside'))
        continue
      throw invalid(
        '/proxy_root',
        `The proxy_root ${place === 'around' ? 'holds' : place === 'same' ? 'is' : 'lies in'} the storage_root of production ${p.id}: ` +
          "a proxy_root holds the service's own output, and the files there would no longer be imported.",
      )
    }
  }
}

/**
 * ignore_patterns as given (docs/cards.md, Ignored files): each a glob the watcher and imports can
 * match (patterns.ts), at most MAX_PATTERNS; a bad one is 400 invalid at its index. Kept as written.
 */
function ignorePatterns(value: readonly string[]): string[] {
  const problem = patternsProblem(value)
  if (problem)
    throw invalid(
      problem.index === undefined ? '/ignore_patterns' : `/ignore_patterns/${problem.index}`,
      problem.detail,
    )
  return [...value]
}

/** Creates a drop folder that is missing (400 at /upload_root when it cannot be made). */
function makeDropFolder(drop: { path: string; device: DeviceRow }) {
  try {
    makeDirInside(drop.device.path, drop.path)
  } catch (error) {
    if (!(error instanceof PathError)) throw error // file work refused on this platform: 501
    throw invalid('/upload_root', error.message)
  }
}

export function createProductions(
  db: Db,
  deviceService: Devices,
  users: Users,
  deps: { holds: HoldDurations; logs: ImportLogs },
) {
  const history = historyOf(db)

  /** What belongs to the production, in words ("12 video assets belong to this production"); empty: nothing. */
  function* contents(row: Row): Work<string[]> {
    const reasons: string[] = []
    const kinds = yield* all(
      db
        .select({ kind: mediaAssets.kind, n: countRows() })
        .from(mediaAssets)
        .where(eq(mediaAssets.production, row.id))
        .groupBy(mediaAssets.kind)
        .orderBy(mediaAssets.kind),
    )
    for (const { kind, n } of kinds)
      reasons.push(`${n} ${kind} asset${n === 1 ? ' belongs' : 's belong'} to this production`)
    const projects =
      (yield* one(db.select({ n: countRows() }).from(projectAssets).where(eq(projectAssets.production, row.id))))?.n ??
      0
    if (projects)
      reasons.push(`${projects} project asset${projects === 1 ? ' belongs' : 's belong'} to this production`)
    return reasons
  }

  /** The production for a change by `user`: 404 when unreadable, 403 without the codename or write access. */
  function* forChange(id: number, user: Principal, codename: string): Work<Row> {
    const row = yield* one(db.select().from(productions).where(eq(productions.id, id)))
    if (!row || !canRead(user, row.id)) throw notFound(noSuchRecord('Production'))
    requirePerm(user, codename)
    requireWrite(user, row.id)
    return row
  }

  return {
    /**
     * PATCH/PUT. The roots change only while nothing belongs to the production (409): its assets'
     * and projects' files lie under them, and moving files is the watcher's or an import's work.
     * A new name carries the hold durations naming the production along.
     */
    *update(
      id: number,
      body: typeof ProductionUpdate.static,
      user: Principal,
      shown: (row: Row) => Work<Record<string, unknown>>,
      nest = false,
    ): Work<Row> {
      const row = yield* forChange(id, user, 'browser.change_production')
      refuseReadOnly(body as Record<string, unknown>, yield* shown(row), READ_ONLY)
      const next: Row = { ...row }
      for (const f of ['name', 'codename', 'company', 'proxy_url'] as const)
        if (body[f] !== undefined) next[f] = body[f]
      if (body.move_uploads !== undefined) next.move_uploads = body.move_uploads
      if (body.ignore_patterns !== undefined) next.ignore_patterns = ignorePatterns(body.ignore_patterns)
      const every = yield* deviceService.list()
      for (const f of DEVICE_FIELDS) {
        const given = body[f]
        if (given === undefined) continue
        // A Device record (a version 1 answer sent back) names its device by its id.
        const device = typeof given === 'number' ? given : given.id
        if (!every.some((d) => d.id === device)) throw invalid(`/${f}`, 'No device with this id.')
        next[f] = device
      }
      if (next.proxy_url && !/^https?:\/\/\S+$/.test(next.proxy_url))
        throw invalid('/proxy_url', 'Must be an http or https URL.')
      let storage: ReturnType<typeof onDevice> | undefined
      if (body.storage_root !== undefined)
        next.storage_root = (storage = onDevice(every, body.storage_root, '/storage_root')).path
      if (body.proxy_root !== undefined) next.proxy_root = onDevice(every, body.proxy_root, '/proxy_root').path
      // The drop folder is checked against the roots as they will be; its device is the upload_device.
      let drop: { path: string; device: DeviceRow } | undefined
      const upload = givenDrop(body.upload_root)
      if (upload === null) next.upload_root = null
      else if (
        upload !== undefined ||
        (next.upload_root !== null && (next.storage_root !== row.storage_root || next.proxy_root !== row.proxy_root))
      )
        next.upload_root = (drop = yield* dropFolder(db, every, upload ?? next.upload_root!, {
          id,
          storage_root: next.storage_root,
          proxy_root: next.proxy_root,
        })).path
      if (drop) {
        if (body.upload_device !== undefined && next.upload_device !== drop.device.id)
          throw invalid('/upload_device', `upload_device is the device of upload_root (device ${drop.device.id}).`)
        next.upload_device = drop.device.id
      } else if (next.upload_root !== null && next.upload_device !== row.upload_device)
        throw invalid(
          '/upload_device',
          `upload_device is the device of upload_root (device ${row.upload_device}); change upload_root, or set it to null first.`,
        )
      const moved = (['storage_root', 'proxy_root'] as const).filter((f) => next[f] !== row[f])
      if (moved.length) {
        yield* refuseForeignRoots(
          db,
          user,
          { id, storage_root: next.storage_root, proxy_root: next.proxy_root },
          { storage_root: moved.includes('storage_root'), proxy_root: moved.includes('proxy_root') },
          nest,
        )
        const held = yield* contents(row)
        if (held.length)
          throw new AppError(
            409,
            'conflict',
            `The ${moved.join(' and ')} of a production change${moved.length === 1 ? 's' : ''} only while nothing belongs to it: ${held.join('; ')}.`,
          )
        for (const f of moved) {
          const holder = yield* projectHolding(db, next[f])
          if (holder !== undefined)
            throw invalid(`/${f}`, `The path lies inside the folder of project asset ${holder}.`)
        }
      }
      const taken = (column: typeof productions.name | typeof productions.codename, value: string) =>
        one(
          db
            .select({ id: productions.id })
            .from(productions)
            .where(and(eq(column, value), ne(productions.id, id)))
            .limit(1),
        )
      if (next.name !== row.name && (yield* taken(productions.name, next.name)))
        throw unique('/name', 'A production with this name already exists.')
      if (next.codename !== row.codename && (yield* taken(productions.codename, next.codename)))
        throw unique('/codename', 'A production with this codename already exists.')
      if (storage && next.storage_root !== row.storage_root) {
        try {
          makeDirInside(storage.device.path, storage.path)
        } catch (error) {
          if (!(error instanceof PathError)) throw error // file work refused on this platform: 501
          throw invalid('/storage_root', error.message)
        }
      }
      if (drop) makeDropFolder(drop)
      return yield* tx(function* () {
        const after = (yield* one(db.update(productions).set(next).where(eq(productions.id, id)).returning()))!
        const by = actorOf(user)
        yield* history.updated(by, { resource: 'production', id, production: id }, row, after, FIELDS)
        if (after.name !== row.name) yield* deps.holds.renameContext('production', row.name, after.name, by)
        return after
      })
    },

    /**
     * 409 while assets or projects belong to the production or hold durations name it. Its import
     * logs stay, readable by superusers (their production is gone); access to it and shares into
     * it go with it. Nothing on disk is touched.
     */
    *remove(id: number, user: Principal): Work<void> {
      const row = yield* forChange(id, user, 'browser.delete_production')
      const reasons = yield* contents(row)
      const rules = yield* deps.holds.naming('production', row.name)
      if (rules) reasons.push(`${rules} asset hold duration${rules === 1 ? ' names' : 's name'} this production`)
      if (reasons.length) throw new AppError(409, 'conflict', `The production is in use: ${reasons.join('; ')}.`)
      yield* tx(function* () {
        yield* deps.logs.detachProduction(id)
        yield* run(db.delete(productions).where(eq(productions.id, id)))
        yield* history.record(actorOf(user), {
          resource: 'production',
          id,
          action: 'delete',
          production: id,
          changes: history.snapshot(row, FIELDS, 'delete'),
        })
      })
    },

    *create(body: typeof ProductionCreate.static, user: Principal, nest = false): Work<Row> {
      requireFileWork() // its storage_root is made
      const every = yield* deviceService.list()
      const storage = onDevice(every, body.storage_root, '/storage_root')
      const proxyRoot =
        body.proxy_root === undefined
          ? defaultProxyRoot(storage.path)
          : onDevice(every, body.proxy_root, '/proxy_root').path
      for (const [pointer, path] of [
        ['/storage_root', storage.path],
        ['/proxy_root', proxyRoot],
      ] as const) {
        const holder = yield* projectHolding(db, path)
        if (holder !== undefined) throw invalid(pointer, `The path lies inside the folder of project asset ${holder}.`)
      }
      yield* refuseForeignRoots(
        db,
        user,
        { storage_root: storage.path, proxy_root: proxyRoot },
        { storage_root: true, proxy_root: true },
        nest,
      )
      if (body.proxy_url && !/^https?:\/\/\S+$/.test(body.proxy_url))
        throw invalid('/proxy_url', 'Must be an http or https URL.')
      const ignore = ignorePatterns(body.ignore_patterns ?? [])
      const upload = givenDrop(body.upload_root)
      const drop =
        typeof upload === 'string'
          ? yield* dropFolder(db, every, upload, { storage_root: storage.path, proxy_root: proxyRoot })
          : undefined
      if (drop && body.upload_device !== undefined && body.upload_device !== drop.device.id)
        throw invalid('/upload_device', `upload_device is the device of upload_root (device ${drop.device.id}).`)
      const ids: Record<string, number> = {}
      for (const field of DEVICE_FIELDS) {
        const id = body[field] ?? (field === 'upload_device' && drop ? drop.device.id : storage.device.id)
        if (!every.some((d) => d.id === id)) throw invalid(`/${field}`, 'No device with this id.')
        ids[field] = id
      }
      const named = (column: typeof productions.name | typeof productions.codename, value: string) =>
        one(db.select({ id: productions.id }).from(productions).where(eq(column, value)).limit(1))
      let codename = body.codename
      if (codename === undefined) {
        const base = slug(body.name)
        codename = base
        for (let n = 2; yield* named(productions.codename, codename); n++) codename = `${base}-${n}`
      }
      if (yield* named(productions.name, body.name))
        throw unique('/name', 'A production with this name already exists.')
      try {
        makeDirInside(storage.device.path, storage.path)
      } catch (error) {
        throw invalid('/storage_root', (error as Error).message)
      }
      if (drop) makeDropFolder(drop)
      const madeCodename = codename
      return yield* tx(function* () {
        const row = (yield* one(
          db
            .insert(productions)
            .values({
              name: body.name,
              codename: madeCodename,
              company: body.company ?? '',
              storage_root: storage.path,
              proxy_root: proxyRoot,
              proxy_url: body.proxy_url ?? '',
              upload_root: drop?.path ?? null,
              move_uploads: body.move_uploads ?? false,
              ignore_patterns: ignore,
              ...(ids as Record<(typeof DEVICE_FIELDS)[number], number>),
              date_add: isoTimestamp(),
            })
            .returning(),
        ))!
        // Whoever may create a production may work in it: the grant is part of the create (and its row).
        const grant = user.is_superuser ? {} : { [`access.${user.username}`]: { old: null, new: 'write' } }
        yield* history.record(actorOf(user), {
          resource: 'production',
          id: row.id,
          action: 'create',
          production: row.id,
          changes: { ...history.snapshot(row, FIELDS, 'create'), ...grant },
        })
        if (!user.is_superuser) yield* users.grantById(user.id, row.id, 'write')
        return row
      })
    },
  }
}

export type Productions = ReturnType<typeof createProductions>
