// What a user may see and do (docs/api.md, Permissions).
import { type SQL, eq, inArray, or, sql } from 'drizzle-orm'
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core'
import type { Db } from '../../db/client.ts'
import { type Statement, type Work, allOf, statement } from '../../db/port.ts'
import { forbidden } from '../../http/errors.ts'
import { mediaAssetShares, mediaAssets } from '../../db/tables.ts'
import type { Principal } from './service.ts'

export const canRead = (user: Principal, production: number) => user.is_superuser || user.readable.has(production)
export const canWrite = (user: Principal, production: number) => user.is_superuser || user.writable.has(production)

// A refusal names what is missing, so that the user knows what to ask a superuser for. The texts
// are made here only: the OpenAPI examples (http/examples.ts) call these too.
export const permissionNeeded = (username: string, codename: string) =>
  `You need the permission ${codename} (an admin gives it with: reelhouse user perm add ${username} ${codename}).`
export const writeAccessNeeded = (username: string, production: number) =>
  `You need write access to production ${production} (an admin gives it with: reelhouse user grant ${username} --production ${production} --write).`

export function requirePerm(user: Principal, codename: string) {
  if (!user.is_superuser && !user.perms.has(codename)) throw forbidden(permissionNeeded(user.username, codename))
}

export function requireWrite(user: Principal, production: number) {
  if (!canWrite(user, production)) throw forbidden(writeAccessNeeded(user.username, production))
}

// `false`, not `0`, for a condition no row meets: PostgreSQL takes only a boolean in WHERE.

/** A WHERE condition limiting rows to productions the user can read; undefined for superusers. */
export function readableBy(user: Principal, column: SQLiteColumn): SQL | undefined {
  if (user.is_superuser) return undefined
  return user.readable.size ? inArray(column, [...user.readable]) : sql`false`
}

/** Media assets the user can read: of a readable production, or shared with one. */
export function mediaReadableBy(user: Principal): SQL | undefined {
  if (user.is_superuser) return undefined
  if (!user.readable.size) return sql`false`
  const ids = [...user.readable]
  return or(
    inArray(mediaAssets.production, ids),
    // drizzle's exists() adds no parentheses around raw SQL ("exists SELECT ..." was a syntax
    // error, a 500 for every non-superuser list), so the condition is written out whole.
    sql`exists (SELECT 1 FROM ${mediaAssetShares} WHERE ${mediaAssetShares.asset_id} = ${mediaAssets.id} AND ${inArray(mediaAssetShares.production_id, ids)})`,
  )
}

/** The statement of sharedWith, per catalogue handle: built once (prepared on SQLite). */
const sharesOf = new WeakMap<Db, Statement<{ production_id: number }>>()

/** The productions a media asset is shared with (besides its own), by the share's primary key. */
export function* sharedWith(db: Db, assetId: number): Work<number[]> {
  let shares = sharesOf.get(db)
  if (!shares)
    sharesOf.set(
      db,
      (shares = statement(() =>
        db
          .select({ production_id: mediaAssetShares.production_id })
          .from(mediaAssetShares)
          .where(eq(mediaAssetShares.asset_id, sql.placeholder('asset')))
          .orderBy(mediaAssetShares.production_id),
      )),
    )
  return (yield* allOf(shares, { asset: assetId })).map((r) => r.production_id)
}

/** One media asset's visibility: of a readable production, or shared with one (the rule of mediaReadableBy). */
export function* canReadAsset(db: Db, user: Principal, asset: { id: number; production: number }): Work<boolean> {
  if (canRead(user, asset.production)) return true
  return (yield* sharedWith(db, asset.id)).some((production) => canRead(user, production))
}
