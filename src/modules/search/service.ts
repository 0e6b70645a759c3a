// Full-text search over media and project assets. The index (`search_index`, FTS5, migration
// 0016) is written by triggers on the tables it describes, never from here: every writer (API,
// command line, import, watcher) keeps it in step in its own transaction without knowing of it.
// This service only reads it.
import type { Db } from '../../db/client.ts'
import { MEDIA_KINDS } from '../../db/schema.ts'
import type { Principal } from '../users/service.ts'

export const HIT_TYPES = ['videoasset', 'audioasset', 'imageasset', 'projectasset'] as const
export type HitType = (typeof HIT_TYPES)[number]

/** An index row's id: the record's id * 4 + its type's code (the migration's rowids). */
const CODE: Record<HitType, number> = { videoasset: 0, audioasset: 1, imageasset: 2, projectasset: 3 }
const TYPE_OF: readonly HitType[] = ['videoasset', 'audioasset', 'imageasset', 'projectasset']
// The migration spells the kind codes out; this keeps the two in step should a kind be added.
if (MEDIA_KINDS.some((kind) => CODE[`${kind}asset` as HitType] === undefined)) throw new Error('a media kind without a search code')

export type Hit = { type: HitType; id: number; name: string; production: number; path: string; is_production: boolean; score: number }

export type SearchFilters = {
  /** The FTS5 query (query.ts toMatch). */
  match: string
  types?: readonly HitType[]
  production?: number
  is_production?: boolean
}

type Raw = { r: number; name: string; production: number; path: string; is_production: number; rank: number }

export function createSearch(db: Db) {
  /**
   * The WHERE of a search: the match, the type (from the rowid, no record read), and what reads
   * the record (the production filter, online, who may read it). A hit's record is found by a
   * LEFT JOIN on each table, of which one holds it.
   */
  function where(user: Principal, f: SearchFilters): { sql: string; params: (string | number)[]; joins: boolean } {
    const parts = ['search_index MATCH ?']
    const params: (string | number)[] = [f.match]
    if (f.types && f.types.length < HIT_TYPES.length) parts.push(`s.rowid % 4 IN (${f.types.map((t) => CODE[t]).join(', ')})`)
    let joins = false
    if (f.production !== undefined) {
      parts.push('coalesce(m.production, p.production) = ?')
      params.push(f.production)
      joins = true
    }
    if (f.is_production !== undefined) {
      parts.push(`coalesce(m.is_production, p.is_production) = ${f.is_production ? 1 : 0}`)
      joins = true
    }
    if (!user.is_superuser) {
      joins = true
      const ids = [...user.readable].filter(Number.isSafeInteger)
      if (!ids.length) parts.push('0')
      else {
        const list = ids.join(', ')
        // A media asset shared with a readable production is readable there (users/access.ts mediaReadableBy).
        parts.push(`(coalesce(m.production, p.production) IN (${list}) OR (m.id IS NOT NULL AND EXISTS (SELECT 1 FROM media_asset_shares sh WHERE sh.asset_id = m.id AND sh.production_id IN (${list}))))`)
      }
    }
    return { sql: parts.join(' AND '), params, joins }
  }

  const JOINS = `LEFT JOIN media_assets m ON s.rowid % 4 < 3 AND m.id = s.rowid / 4
    LEFT JOIN project_assets p ON s.rowid % 4 = 3 AND p.id = s.rowid / 4`

  /** A hit of an index row joined to its record. */
  const toHit = (row: Raw): Hit => ({
    type: TYPE_OF[row.r % 4]!, id: Math.floor(row.r / 4), name: row.name, production: row.production, path: row.path,
    is_production: row.is_production === 1,
    // bm25 is better the more negative; the score is its opposite, rounded: higher is better.
    score: Math.round(-row.rank * 1000) / 1000,
  })

  return {
    /** The number of hits the user may see: the page's WHERE, counted (the index alone for a superuser's plain search). */
    count(user: Principal, f: SearchFilters): number {
      const w = where(user, f)
      return db.$client.query<{ n: number }, (string | number)[]>(`SELECT count(*) AS n FROM search_index s ${w.joins ? JOINS : ''} WHERE ${w.sql}`)
        .get(...w.params)!.n
    },

    /**
     * The hits from `offset` on (all of them without `limit`, read as they are stepped), best
     * first: bm25 with the column weights the migration set (name, then keywords, file and folder
     * names, description, custom metadata), ties newest first.
     */
    hits(user: Principal, f: SearchFilters, limit: number | undefined, offset: number): IterableIterator<Hit> {
      const w = where(user, f)
      const rows = db.$client.query<Raw, (string | number)[]>(
        `SELECT s.rowid AS r, s.rank AS rank, coalesce(m.name, p.name) AS name, coalesce(m.production, p.production) AS production,
           coalesce(m.path_file, p.bundle_root) AS path, coalesce(m.is_production, p.is_production) AS is_production
         FROM search_index s ${JOINS} WHERE ${w.sql} AND coalesce(m.id, p.id) IS NOT NULL
         ORDER BY s.rank, s.rowid DESC LIMIT ? OFFSET ?`,
      ).iterate(...w.params, limit ?? -1, offset)
      return (function* () {
        for (const row of rows) yield toHit(row)
      })()
    },
  }
}

export type Search = ReturnType<typeof createSearch>
