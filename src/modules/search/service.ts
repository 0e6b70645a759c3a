// Full-text search over media and project assets. The index (`search_index`, FTS5, migration
// 0016) is written by triggers on the tables it describes, never from here: every writer (API,
// command line, import, watcher) keeps it in step in its own transaction without knowing of it.
// This service only reads it.
import { Database } from 'bun:sqlite'
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

/**
 * Up to this many hits, they are ordered by bm25. FTS5's bm25 reads, for each word, every row
 * that holds it before it scores the first hit, then scores each hit: about 3 µs a hit at a
 * million assets (docs/benchmarks.md), 30 ms for 10,000 hits, 300 ms for 100,000 and more for a
 * word most records hold. Above it, hits are ordered by where the words are (all in the name
 * first), then newest first: two walks of the index in id order that stop at the page's end.
 */
export const RANKED_UP_TO = 10_000
/** bm25's column weights, in the index's column order: name, path, keywords, description, meta. */
const BM25 = 'bm25(search_index, 10.0, 4.0, 5.0, 2.0, 1.0)'
/** The score of the hits of a search too wide to rank by bm25: in the name, elsewhere. */
export const TIER_SCORE = { name: 2, elsewhere: 1 } as const

export type Hit = { type: HitType; id: number; name: string; production: number; path: string; is_production: boolean; score: number }

export type SearchFilters = {
  /** The FTS5 query (query.ts toMatch) and its words and phrases to find, exclusions left out. */
  match: string
  wanted: string
  types?: readonly HitType[]
  production?: number
  is_production?: boolean
}

type Raw = { r: number; b: number; name: string; production: number; path: string; is_production: number }
type Params = (string | number)[]

const JOINS = `LEFT JOIN media_assets m ON s.rowid % 4 < 3 AND m.id = s.rowid / 4
    LEFT JOIN project_assets p ON s.rowid % 4 = 3 AND p.id = s.rowid / 4`
const FIELDS = `coalesce(m.name, p.name) AS name, coalesce(m.production, p.production) AS production,
    coalesce(m.path_file, p.bundle_root) AS path, coalesce(m.is_production, p.is_production) AS is_production`

/**
 * The connection searches read through: the catalogue's own file, read-only, with its pages
 * memory-mapped. A search of a user who reads some productions looks up the record of every hit
 * (its production); through SQLite's 2 MB page cache, each lookup read a page with a system call,
 * about 4 µs a hit in a catalogue of a million assets, through the map about 1 µs. Mapped pages
 * are the kernel's file cache, given back under pressure, and never grow the process's heap; the
 * writing connection keeps its small cache (the import's memory bound). Opened at the first
 * search, closed with close().
 */
function openReader(file: string): Database {
  const reader = new Database(file, { readonly: true, strict: true })
  reader.run('PRAGMA busy_timeout = 5000')
  reader.run('PRAGMA mmap_size = 2147418112')
  return reader
}

export function createSearch(db: Db) {
  let opened: Database | undefined
  const reader = () => (opened ??= openReader(db.$client.filename))

  /**
   * The conditions on a hit besides its match: its type (from the rowid, no record read), and
   * what needs its record (the production filter, online, who may read it). Empty: the index
   * alone answers.
   */
  function conditions(user: Principal, f: SearchFilters): { sql: string; params: Params; joins: boolean } {
    const parts: string[] = []
    const params: Params = []
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
    const readable = readableList(user)
    if (readable !== undefined) {
      joins = true
      // A media asset shared with a readable production is readable there (users/access.ts mediaReadableBy).
      parts.push(readable === '' ? '0'
        : `(coalesce(m.production, p.production) IN (${readable}) OR (m.id IS NOT NULL AND EXISTS (SELECT 1 FROM media_asset_shares sh WHERE sh.asset_id = m.id AND sh.production_id IN (${readable}))))`)
    }
    return { sql: parts.map((c) => ` AND ${c}`).join(''), params, joins }
  }

  /**
   * The productions the user can read as SQL text ('' none); undefined when no filter is needed:
   * a superuser, or a user who can read every production (a small team's usual grant), whose
   * searches then read the index alone.
   */
  function readableList(user: Principal): string | undefined {
    if (user.is_superuser) return undefined
    const ids = [...user.readable].filter(Number.isSafeInteger)
    if (ids.length && reader().query<{ id: number }, []>('SELECT id FROM productions').all().every((p) => user.readable.has(p.id))) return undefined
    return ids.join(', ')
  }

  /**
   * A statement to step: a page is read whole within its request, so bun:sqlite's cached statement
   * of that text serves; a whole list is read while it is sent, and another request could step the
   * cached one meanwhile, so it gets its own (as lists do).
   */
  const statement = (sql: string, limit: number) => (limit < 0 ? reader().prepare<Raw, Params>(sql) : reader().query<Raw, Params>(sql))

  const countOf = (match: string, c: ReturnType<typeof conditions>) =>
    reader().query<{ n: number }, Params>(`SELECT count(*) AS n FROM search_index s ${c.joins ? JOINS : ''} WHERE search_index MATCH ?${c.sql}`)
      .get(match, ...c.params)!.n

  /** Hits by bm25, best first, ties newest first; the records of the page alone are read when no condition needs them. */
  function ranked(match: string, c: ReturnType<typeof conditions>, limit: number, offset: number): IterableIterator<Raw> {
    const sql = c.joins
      ? `SELECT s.rowid AS r, ${BM25} AS b, ${FIELDS} FROM search_index s ${JOINS}
         WHERE search_index MATCH ?${c.sql} AND coalesce(m.id, p.id) IS NOT NULL ORDER BY b, s.rowid DESC LIMIT ? OFFSET ?`
      : `SELECT s.r AS r, s.b AS b, ${FIELDS} FROM (
           SELECT rowid AS r, ${BM25} AS b FROM search_index WHERE search_index MATCH ?${c.sql.replaceAll('s.rowid', 'rowid')} ORDER BY b, rowid DESC LIMIT ? OFFSET ?
         ) s LEFT JOIN media_assets m ON s.r % 4 < 3 AND m.id = s.r / 4 LEFT JOIN project_assets p ON s.r % 4 = 3 AND p.id = s.r / 4
         WHERE coalesce(m.id, p.id) IS NOT NULL ORDER BY s.b, s.r DESC`
    return statement(sql, limit).iterate(match, ...c.params, limit, offset)
  }

  /** Hits of one FTS5 query newest first, their score given. */
  const newest = (match: string, c: ReturnType<typeof conditions>, score: number, limit: number, offset: number): IterableIterator<Raw> =>
    statement(
      `SELECT s.rowid AS r, ${-score} AS b, ${FIELDS} FROM search_index s ${JOINS}
       WHERE search_index MATCH ?${c.sql} AND coalesce(m.id, p.id) IS NOT NULL ORDER BY s.rowid DESC LIMIT ? OFFSET ?`,
      limit,
    ).iterate(match, ...c.params, limit, offset)

  const toHit = (row: Raw): Hit => ({
    type: TYPE_OF[row.r % 4]!, id: Math.floor(row.r / 4), name: row.name, production: row.production, path: row.path,
    is_production: row.is_production === 1,
    // bm25 is better the more negative; the score is its opposite, rounded: higher is better.
    score: Math.round(-row.b * 1000) / 1000 || 0,
  })

  /** The count and the hits (stepped as read), outside any transaction of their own. */
  function readHits(user: Principal, f: SearchFilters, limit: number | undefined, offset: number): { count: number; hits: IterableIterator<Hit> } {
    const c = conditions(user, f)
    const count = countOf(f.match, c)
    const n = limit ?? -1
    if (count <= RANKED_UP_TO) {
      const rows = ranked(f.match, c, n, offset)
      return { count, hits: (function* () { for (const row of rows) yield toHit(row) })() }
    }
    const inName = `(${f.match}) AND {name} : ${f.wanted}`
    const elsewhere = `(${f.match}) NOT {name} : ${f.wanted}`
    const first = countOf(inName, c)
    function* tiers() {
      let left = n
      if (offset < first) {
        for (const row of newest(inName, c, TIER_SCORE.name, n, offset)) {
          yield toHit(row)
          left -= 1
        }
        if (left === 0) return
      }
      for (const row of newest(elsewhere, c, TIER_SCORE.elsewhere, left, Math.max(0, offset - first))) yield toHit(row)
    }
    return { count, hits: tiers() }
  }

  return {
    /** Closes the search connection (it opens again at the next search). */
    close() {
      opened?.close()
      opened = undefined
    },

    /**
     * The number of hits the user may see, and the hits from `offset` on, best first: by bm25 up
     * to RANKED_UP_TO hits, else all words in the name first, then the rest, each newest first.
     * A page is read with its count in one read transaction (the same snapshot); without
     * `limit`, every hit, read as it is stepped.
     */
    search(user: Principal, f: SearchFilters, limit: number | undefined, offset: number): { count: number; hits: Iterable<Hit> } {
      if (limit === undefined) return readHits(user, f, undefined, offset)
      const r = reader()
      r.run('BEGIN')
      try {
        const { count, hits } = readHits(user, f, limit, offset)
        return { count, hits: [...hits] }
      } finally {
        r.run('COMMIT')
      }
    },
  }
}

export type Search = ReturnType<typeof createSearch>
