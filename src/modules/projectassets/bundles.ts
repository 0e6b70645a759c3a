// What a project folder may be. Deleting a project removes its folder, so a folder that holds a
// device root, a production's storage or proxy root, the service's own data folder, or another
// project's folder, or that is reached through a symbolic link, is never taken as a project
// folder; and a device or a production is never put inside one. Checked at create and copy
// (synchronously, together with the insert), at a delete request, and again when a copy or
// delete task starts or resumes.
//
// Territory (docs/api.md, Permissions) adds who may put a project folder where: a production owns the
// folders under its storage and proxy roots, so a folder there needs write access to that
// production, and a non-superuser's project folder lies inside its own production's storage root,
// or, for a copy, on a device that lets one of the user's groups write onto it (an edit bay).
import { eq, sql } from 'drizzle-orm'
import { type Db, dataFolderOf } from '../../db/client.ts'
import { type Work, all, run, runOf, statement } from '../../db/port.ts'
import { devices, productions, projectAssets } from '../../db/tables.ts'
import { aliasProblem, asFolder, isInside, realOf, reservedProblem, restOf } from '../../storage/paths.ts'
import { canRead, canWrite } from '../users/access.ts'
import type { Principal, Users } from '../users/service.ts'

/** Folders that must never be inside (or be) a project folder, by real path (links resolved). */
function* protectedRoots(db: Db): Work<{ what: string; path: string; real: string }[]> {
  const rows = yield* all(
    sql<{ what: string; path: string }>`SELECT 'device ' || name AS what, path FROM devices
       UNION ALL SELECT 'storage root of production ' || name, storage_root FROM productions
       UNION ALL SELECT 'proxy root of production ' || name, proxy_root FROM productions`,
  )
  // The catalogue's folder: a project folder holding it could delete the catalogue while it runs.
  const data = { what: 'data folder of this service', path: dataFolderOf(db) }
  return [...rows, data].map((r) => ({ ...r, real: realOf(r.path) }))
}

/** Every project folder by real path: its device's real path and the rest as written (no links in between). */
function* realBundles(db: Db): Work<{ id: number; bundle_root: string; deleting: boolean; real: string }[]> {
  const rows = yield* all(
    db
      .select({
        id: projectAssets.id,
        bundle_root: projectAssets.bundle_root,
        deleting: projectAssets.deleting,
        device_path: devices.path,
      })
      .from(projectAssets)
      .innerJoin(devices, eq(devices.id, projectAssets.device)),
  )
  const reals = new Map<string, string>()
  return rows.map((r) => {
    let real = reals.get(r.device_path)
    if (real === undefined) reals.set(r.device_path, (real = realOf(r.device_path)))
    return {
      id: r.id,
      bundle_root: r.bundle_root,
      deleting: r.deleting,
      real: real + restOf(r.device_path, r.bundle_root),
    }
  })
}

export type BundleProblem = { conflict: boolean; detail: string }

const nested = (a: string, b: string) => a === b || isInside(a, b) || isInside(b, a)

/** Why `path` cannot be a project folder on the device at `devicePath`, or undefined. */
export function* bundleProblem(
  db: Db,
  path: string,
  devicePath: string,
  ignoreProject?: number,
): Work<BundleProblem | undefined> {
  const reserved = reservedProblem(path)
  if (reserved) return { conflict: false, detail: reserved }
  if (path === devicePath) return { conflict: false, detail: 'A project folder cannot be the root of a device.' }
  const alias = aliasProblem(devicePath, path)
  if (alias) return { conflict: false, detail: alias }
  const real = realOf(path)
  const root = (yield* protectedRoots(db)).find((r) => r.real === real || isInside(real, r.real))
  if (root) return { conflict: false, detail: `The folder would hold the ${root.what}.` }
  const clash = (yield* realBundles(db)).find(
    (p) => p.id !== ignoreProject && (nested(p.bundle_root, path) || nested(p.real, real)),
  )
  if (clash?.deleting)
    return { conflict: true, detail: `The folder belongs to project asset ${clash.id}, which is being deleted.` }
  if (clash)
    return {
      conflict: false,
      detail:
        clash.bundle_root === path
          ? `Project asset ${clash.id} already has this bundle_root.`
          : `The folder is nested with the bundle of project asset ${clash.id}.`,
    }
  return undefined
}

/** The project whose folder is or holds `path` (a device path or production root being created), by real path. */
export function* projectHolding(db: Db, path: string): Work<number | undefined> {
  const dir = asFolder(path)
  const real = realOf(dir)
  return (yield* realBundles(db)).find(
    (p) => p.bundle_root === dir || isInside(p.bundle_root, dir) || p.real === real || isInside(p.real, real),
  )?.id
}

/** `production`: the production whose folders refuse it (forbidden only), for a caller that words its own refusal. */
export type TerritoryProblem = { forbidden: boolean; detail: string; production?: number }

/**
 * Territory (docs/api.md, Permissions): why `user` may not place (create, copy into) or remove a project
 * folder of `production` at `path`, or undefined. Paths are compared after resolving links, as the checks above do. A refusal
 * names no folder of a production the user cannot write to.
 */
export function* territoryProblem(
  db: Db,
  path: string,
  user: Principal,
  production: number,
  placing: false | 'create' | 'copy',
): Work<TerritoryProblem | undefined> {
  if (user.is_superuser) return undefined
  const real = realOf(path)
  const roots = yield* all(
    db
      .select({ id: productions.id, storage_root: productions.storage_root, proxy_root: productions.proxy_root })
      .from(productions),
  )
  const own = roots.find((r) => r.id === production)
  // Placing a folder (create, copy target) needs it in the own storage root, or for a copy a
  // device open to one of the user's groups; a delete of an older folder elsewhere needs only
  // write access to whatever production owns it.
  if (
    placing &&
    (!own || !isInside(realOf(own.storage_root), real)) &&
    !(placing === 'copy' && (yield* groupMayWrite(db, real, user)))
  )
    return {
      forbidden: false,
      detail:
        `A project folder must lie inside the storage root of its production (${own?.storage_root ?? 'unknown'})` +
        (placing === 'copy'
          ? ', or, for a copy, on a device whose write_permission_groups names a group you are in (with allow_direct_writing).'
          : '.'),
    }
  const foreign = roots.find(
    (r) => !canWrite(user, r.id) && (isInside(realOf(r.storage_root), real) || isInside(realOf(r.proxy_root), real)),
  )
  // Named only to a user who can read it: to the others, it does not exist (docs/api.md, Permissions).
  if (foreign)
    return {
      forbidden: true,
      production: foreign.id,
      detail: canRead(user, foreign.id)
        ? `The folder lies inside the folders of production ${foreign.id}; you need write access to production ${foreign.id}.`
        : 'The folder lies inside the folders of a production you do not have write access to.',
    }
  return undefined
}

/**
 * Whether the device the folder lies on (the innermost one around its real path) lets one of the
 * user's groups write onto it: allow_direct_writing, and a group of theirs in write_permission_groups.
 * Only where no production owns the folder does this alone decide: territoryProblem still asks
 * write access to a production whose folders it lies in.
 */
function* groupMayWrite(db: Db, real: string, user: Principal): Work<boolean> {
  if (!user.groups.size) return false
  const rows = (yield* all(
    db
      .select({
        path: devices.path,
        allow_direct_writing: devices.allow_direct_writing,
        write_permission_groups: devices.write_permission_groups,
      })
      .from(devices),
  ))
    .map((d) => ({ ...d, real: realOf(d.path) }))
    .filter((d) => isInside(d.real, real))
  const device = rows.sort((a, b) => b.real.length - a.real.length)[0]
  if (!device?.allow_direct_writing) return false
  return device.write_permission_groups.some((g) => user.groups.has(g))
}

/**
 * What a copy or delete task checks again whenever it starts or resumes (docs/api.md, Permissions): the
 * folder may still be a project folder, and the user who asked may still place (copy) or remove
 * (delete) it there with the permissions they have now. Tasks queued by an older version carry
 * no user; for them only the folder is checked.
 */
export function* taskProblem(
  db: Db,
  users: Users,
  t: { path: string; device: string; production: number; project: number; user?: number; placing: boolean },
): Work<string | undefined> {
  const shape = yield* bundleProblem(db, t.path, t.device, t.project)
  if (shape) return shape.detail
  if (t.user === undefined) return undefined
  const user = yield* users.principalById(t.user)
  if (!user) return 'the user who asked for it no longer exists'
  if (!canWrite(user, t.production))
    return `the user who asked for it no longer has write access to production ${t.production}`
  // The task that places a folder is a copy's: the groups a device lets write count (territoryProblem).
  return (yield* territoryProblem(db, t.path, user, t.production, t.placing && 'copy'))?.detail
}

/**
 * Project assets put on another device, in the caller's transaction (a device made around their
 * folders, or taken away: the devices service decides and writes the history).
 */
export function* moveProjectsToDevice(db: Db, ids: readonly number[], to: number, now: string): Work<void> {
  for (const id of ids)
    yield* run(db.update(projectAssets).set({ device: to, date_mod: now }).where(eq(projectAssets.id, id)))
}

/**
 * A project's date_mod set, in the caller's transaction: a media asset linked to it was deleted
 * (its links went). The statement is built once: a delete of many assets touches a project each.
 */
export function projectToucher(db: Db) {
  const touch = statement(() =>
    db
      .update(projectAssets)
      .set({ date_mod: sql`${sql.placeholder('date')}` })
      .where(eq(projectAssets.id, sql.placeholder('id'))),
  )
  return (date: string, id: number) => runOf(touch, { date, id })
}
