// SQLite's search: full-text search over media and project assets through FTS5. The indexes
// (`search_index`, FTS5, migration 0016; `search_index_trigram`, 0024) are written by triggers on
// the tables they describe, never from here: every writer (API, command line, import, watcher)
// keeps them in step in its own transaction without knowing of them. This engine only reads
// them, through a read-only connection of its own to the catalogue's file.
//
// It lives in src/db/ because it is the engine's own machinery: the FTS5 tables are the
// migrations' own, and their statements, like every statement on the catalogue, run only in
// src/db/. What a search is, the same on both engines (its hits, filters and order, the query
// language, the routes), is src/modules/search/'s; PostgreSQL's search is pg.ts beside this one.
import { Database, SQLiteError } from 'bun:sqlite'
import { type FacetFilter, facetConditions } from '../../modules/mediaassets/facets.ts'
import { pictureUrls } from '../../modules/mediaassets/pictures.ts'
import type { Inside } from '../../modules/search/query.ts'
import {
  HIT_TYPES,
  type Hit,
  type HitType,
  RANKED_UP_TO,
  type SearchFilters,
  TIER_SCORE,
  UnsearchableText,
} from '../../modules/search/types.ts'
import type { Principal } from '../../modules/users/principal.ts'
import type { Db } from '../client.ts'
import type { MediaKind, PictureVersions } from '../tables.ts'
import { MEDIA_KINDS } from '../tables.ts'

/** An index row's id: the record's id * 4 + its type's code (the migration's rowids). */
const CODE: Record<HitType, number> = { videoasset: 0, audioasset: 1, imageasset: 2, projectasset: 3 }
const TYPE_OF: readonly HitType[] = ['videoasset', 'audioasset', 'imageasset', 'projectasset']
// The migration spells the kind codes out; this keeps the two in step should a kind be added.
if (MEDIA_KINDS.some((kind) => CODE[`${kind}asset` as HitType] === undefined))
  throw new Error('a media kind without a search code')

/** bm25's column weights, in the index's column order: name, path, keywords, description, meta, scope (not searched). */
const BM25 = 'bm25(search_index, 10.0, 4.0, 5.0, 2.0, 1.0, 0.0)'
/** The columns a user's words are looked for in. */
const SEARCHED = 'name path keywords description meta'

/**
 * An error raised while a MATCH statement ran, as UnsearchableText when it is the query's. The
 * statements are prepared before they run, so a fault of their own SQL is raised then and stays a
 * fault; what the engine reads while running (SQLITE_ERROR) is the query, which is the user's
 * words. Other codes (busy, I/O, corruption, memory) are the server's, and stay so.
 */
const ofText = (error: unknown) =>
  error instanceof SQLiteError && error.code === 'SQLITE_ERROR' ? new UnsearchableText(error.message) : error
/** The rows of a MATCH statement prepared already, as they are stepped. */
function* stepped<T>(rows: IterableIterator<T>): Generator<T> {
  try {
    yield* rows
  } catch (error) {
    throw ofText(error)
  }
}

/** A media asset hit's picture URLs on `base` (mediaassets/pictures.ts pictureUrls). */
function picturesOf(type: HitType, base: string, id: number, row: Raw) {
  const kind = type.slice(0, -'asset'.length) as MediaKind
  return pictureUrls(kind, base)(id, row.path_proxy ?? '', JSON.parse(row.pictures ?? '{}') as PictureVersions)
}

type Raw = {
  r: number
  b: number
  name: string
  production: number
  path: string
  is_production: number
  status_asset: number
  path_proxy: string | null
  pictures: string | null
}
type Params = (string | number)[]
/**
 * An FTS5 query, the type codes a hit's rowid must have (undefined: any), and a condition on the
 * hit's record (`m`, `p`; empty: the index alone decides).
 */
type Query = { match: string; codes: readonly number[] | undefined; where: string }
/**
 * Who a search is for, worked out once per search: undefined, no filter (a superuser, or a user
 * who reads every production, a small team's usual grant); else the productions read, and those
 * of them some asset is shared with.
 */
type Readers = { ids: readonly number[]; shared: ReadonlySet<number> } | undefined
/** A reader's words matching at most this many records are filtered by their records (byRecord). */
export const BY_RECORD_UP_TO = 20_000
/** A query of the trigram index (0024): its FTS5 text, and the conditions beside it (on `t`, `m`, `p`). */
type InsideQuery = { match: string; where: string }
/** The hit's record, joined on the index row's id (`col`: that id's column in the query). */
const joins = (col: string) => `LEFT JOIN media_assets m ON ${col} % 4 < 3 AND m.id = ${col} / 4
    LEFT JOIN project_assets p ON ${col} % 4 = 3 AND p.id = ${col} / 4`
const FIELDS = `coalesce(m.name, p.name) AS name, coalesce(m.production, p.production) AS production,
    coalesce(m.path_file, p.bundle_root) AS path, coalesce(m.is_production, p.is_production) AS is_production,
    coalesce(m.status_asset, p.status_asset) AS status_asset, m.path_proxy AS path_proxy, m.pictures AS pictures`
/** The condition on the type of a hit, from its id (`col`). */
const ofTypes = (q: Query, col: string) => (q.codes ? ` AND ${col} % 4 IN (${q.codes.join(', ')})` : '')

/**
 * The connection searches read through: the catalogue's own file, read-only, with its pages
 * memory-mapped. A search of a user who reads some productions looks up the record of every hit
 * (its production); through SQLite's 2 MB page cache, each lookup read a page with a system call,
 * about 4 µs a hit in a catalogue of a million assets, through the map about 1 µs. Mapped pages
 * are the kernel's file cache, given back under pressure, and never grow the process's heap; the
 * writing connection keeps its small cache (the import's memory bound). Opened at the first
 * search, closed with close() (core.ts, as the server stops).
 */
function openReader(file: string): Database {
  const reader = new Database(file, { readonly: true, strict: true })
  reader.run('PRAGMA busy_timeout = 5000')
  reader.run('PRAGMA mmap_size = 2147418112')
  return reader
}

/** A text as an SQL string literal. */
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`
/** A value of a facet condition, written into the statement (numbers as they are, text quoted). */
const valueOf = (v: string | number) => (typeof v === 'number' ? String(v) : literal(v))

/**
 * The facet filters as one condition on the hit's media asset (`m`), each kind's expressions of
 * db/facets.ts (the lists' own): a project, or a kind without the facet, is no hit.
 */
function facetsWhere(f: FacetFilter): string {
  const byKind = MEDIA_KINDS.map((kind) => {
    const conditions = facetConditions(kind, f, 'm.technical')
    if (conditions === null) return undefined
    const sql = conditions.map((c) => {
      let i = 0
      return c.sql.replace(/\?/g, () => valueOf(c.params[i++]!))
    })
    return `(m.kind = '${kind}' AND ${sql.join(' AND ')})`
  }).filter((x) => x !== undefined)
  return byKind.length ? `m.id IS NOT NULL AND (${byKind.join(' OR ')})` : '0'
}

export function createSearch(db: Db) {
  let opened: Database | undefined
  const reader = () => (opened ??= openReader(db.$client.filename))

  function readersOf(user: Principal): Readers {
    if (user.is_superuser) return undefined
    const ids = [...user.readable].filter(Number.isSafeInteger)
    const r = reader()
    if (
      ids.length &&
      r
        .query<{ id: number }, []>('SELECT id FROM productions')
        .all()
        .every((p) => user.readable.has(p.id))
    )
      return undefined
    return {
      ids,
      shared: new Set(
        r
          .query<{ p: number }, []>('SELECT DISTINCT production_id AS p FROM media_asset_shares')
          .all()
          .map((x) => x.p),
      ),
    }
  }

  /**
   * The FTS5 query of a search: the user's words in the searched columns (never `scope`), and
   * what the hit must be as words of `scope` (the migration's): its production (p12), online or
   * not, and the productions the user reads (their own, p12, or shared with them, s12). The type
   * is the rowid's (no word). The index alone answers all of it: no hit's record is read to
   * decide whether it is one. Undefined: the user reads no production, nothing is found.
   */
  function queryOf(readers: Readers, f: SearchFilters, words: string): Query | undefined {
    let match = `{${SEARCHED}} : (${words})`
    if (f.production !== undefined) match += ` AND {scope} : p${f.production}`
    if (f.is_production !== undefined) match += ` AND {scope} : ${f.is_production ? 'online' : 'offline'}`
    if (readers) {
      if (!readers.ids.length) return undefined
      // Each word of the OR is a list the index walks: s12 only where some asset is shared with 12.
      match += ` AND {scope} : (${readers.ids.flatMap((id) => (readers.shared.has(id) ? [`p${id}`, `s${id}`] : [`p${id}`])).join(' OR ')})`
    }
    const codes = f.types && f.types.length < HIT_TYPES.length ? f.types.map((t) => CODE[t]) : undefined
    return { match, codes, where: recordWhere(f) }
  }

  /**
   * The filters the index holds no word for (the device, the approval), as conditions on the hit's
   * record: read by id for every hit of the words (about 1 µs each through the map), so a search
   * with one costs that much more than one without.
   */
  function recordWhere(f: SearchFilters): string {
    let where = ''
    if (f.device !== undefined) where += ` AND coalesce(m.device, p.device) = ${f.device}`
    if (f.approval !== undefined) where += ` AND coalesce(m.approval, p.status_approval) = ${f.approval}`
    if (f.facets) where += ` AND ${facetsWhere(f.facets)}`
    return where
  }

  /**
   * A reader's query whose words match few records: who may read each is asked of its record
   * (a lookup by id, about 1 µs through the map) rather than of the index. The index's answer
   * walks the list of every readable production's records (p12 OR p13 ...), and bm25 reads each
   * of those lists whole before it scores: 30 ms for a reader of 10 productions of 50,000 records
   * each, whatever the words.
   */
  function byRecord(readers: NonNullable<Readers>, words: Query): Query {
    const ids = readers.ids.join(', ')
    // A media asset shared with a readable production is readable there (users/access.ts mediaReadableBy).
    const where =
      ` AND (coalesce(m.production, p.production) IN (${ids})` +
      ` OR (m.id IS NOT NULL AND EXISTS (SELECT 1 FROM media_asset_shares sh WHERE sh.asset_id = m.id AND sh.production_id IN (${ids}))))`
    return { ...words, where: words.where + where }
  }

  /**
   * A statement to step: a page is read whole within its request, so bun:sqlite's cached statement
   * of that text serves; a whole list is read while it is sent, and another request could step the
   * cached one meanwhile, so it gets its own (as lists do).
   */
  const statement = (sql: string, limit: number) =>
    limit < 0 ? reader().prepare<Raw, Params>(sql) : reader().query<Raw, Params>(sql)

  /** The number of hits of `q`. */
  function countOf(q: Query): number {
    const counting = reader().query<{ n: number }, [string]>(
      q.where
        ? `SELECT count(*) AS n FROM search_index s ${joins('s.rowid')} WHERE search_index MATCH ?${ofTypes(q, 's.rowid')}${q.where}`
        : `SELECT count(*) AS n FROM search_index WHERE search_index MATCH ?${ofTypes(q, 'rowid')}`,
    )
    try {
      return counting.get(q.match)!.n
    } catch (error) {
      throw ofText(error)
    }
  }

  /** The page's rows, read from the index alone (`inner`: its ids and scores), with the fields of their records. */
  const withRecords = (inner: string) =>
    `SELECT s.r AS r, s.b AS b, ${FIELDS} FROM (${inner}) s ${joins('s.r')} WHERE coalesce(m.id, p.id) IS NOT NULL`

  /** Hits by bm25, best first, ties newest first. */
  const ranked = (q: Query, limit: number, offset: number): IterableIterator<Raw> =>
    stepped(
      statement(
        q.where
          ? `SELECT s.rowid AS r, ${BM25} AS b, ${FIELDS} FROM search_index s ${joins('s.rowid')}
         WHERE search_index MATCH ?${ofTypes(q, 's.rowid')}${q.where} AND coalesce(m.id, p.id) IS NOT NULL ORDER BY b, s.rowid DESC LIMIT ? OFFSET ?`
          : `${withRecords(`SELECT rowid AS r, ${BM25} AS b FROM search_index WHERE search_index MATCH ?${ofTypes(q, 'rowid')} ORDER BY b, rowid DESC LIMIT ? OFFSET ?`)}
         ORDER BY s.b, s.r DESC`,
        limit,
      ).iterate(q.match, limit, offset),
    )

  /** Hits newest first, their score given. */
  const newest = (q: Query, score: number, limit: number, offset: number): IterableIterator<Raw> =>
    stepped(
      statement(
        q.where
          ? `SELECT s.rowid AS r, ${-score} AS b, ${FIELDS} FROM search_index s ${joins('s.rowid')}
         WHERE search_index MATCH ?${ofTypes(q, 's.rowid')}${q.where} AND coalesce(m.id, p.id) IS NOT NULL ORDER BY s.rowid DESC LIMIT ? OFFSET ?`
          : `${withRecords(`SELECT rowid AS r, ${-score} AS b FROM search_index WHERE search_index MATCH ?${ofTypes(q, 'rowid')} ORDER BY rowid DESC LIMIT ? OFFSET ?`)}
      ORDER BY s.r DESC`,
        limit,
      ).iterate(q.match, limit, offset),
    )

  const toHit = (row: Raw, f: SearchFilters): Hit => {
    const type = TYPE_OF[row.r % 4]!
    const id = Math.floor(row.r / 4)
    return {
      type,
      id,
      name: row.name,
      production: row.production,
      path: row.path,
      is_production: row.is_production === 1,
      ...(f.status ? { status_asset: row.status_asset } : {}),
      ...(f.pictures !== undefined && row.path_proxy !== null ? picturesOf(type, f.pictures, id, row) : {}),
      // bm25 is better the more negative; the score is its opposite, rounded: higher is better.
      score: Math.round(-row.b * 1000) / 1000 || 0,
    }
  }

  /**
   * The hits found only inside words of a name or path (query.ts Inside): records of the trigram
   * index (0024) that hold a wanted word inside a word, hold every other wanted word either way,
   * are no hit of the word index already, hold no excluded word, and pass the filters, asked of
   * their record (the trigram index holds no scope). The sets of the word index it is checked
   * against are each read once per statement (NOT IN, IN: SQLite keeps them in a temporary index):
   * an FTS5 query per candidate costs about 75 µs, a set of 50,000 about 5 ms, and a word found
   * whole by many records (`interview`) is seldom inside another, so that none are read at all.
   * With the name first: `name` those holding a wanted word inside a word of their name.
   */
  function insideOf(
    readers: Readers,
    f: SearchFilters,
    inside: Inside,
  ): { all: InsideQuery; name: InsideQuery; rest: InsideQuery } | undefined {
    if (readers && !readers.ids.length) return undefined
    const words = (match: string) =>
      `SELECT rowid FROM search_index WHERE search_index MATCH ${literal(`{${SEARCHED}} : (${match})`)}`
    const trigrams = (match: string) =>
      `SELECT rowid FROM search_index_trigram WHERE search_index_trigram MATCH ${literal(match)}`
    // `+t.rowid`: SQLite would otherwise hand a set's rowids to the trigram index one by one as
    // the rows to look at, each a MATCH of its own (50,000 of them for a common word: seconds).
    let checks = ` AND +t.rowid NOT IN (${words(inside.all)})`
    if (inside.excluded) checks += ` AND +t.rowid NOT IN (${words(inside.excluded)})`
    // One wanted word: the candidates hold it inside a word already. More: each must be held.
    if (inside.terms.length > 1)
      for (const term of inside.terms)
        checks += term.inside
          ? ` AND (+t.rowid IN (${words(term.word)}) OR +t.rowid IN (${trigrams(term.inside)}))`
          : ` AND +t.rowid IN (${words(term.word)})`
    let where = recordWhere(f)
    if (f.production !== undefined) where += ` AND coalesce(m.production, p.production) = ${f.production}`
    if (f.is_production !== undefined)
      where += ` AND coalesce(m.is_production, p.is_production) = ${f.is_production ? 1 : 0}`
    if (readers) {
      const ids = readers.ids.join(', ')
      where +=
        ` AND (coalesce(m.production, p.production) IN (${ids})` +
        ` OR (m.id IS NOT NULL AND EXISTS (SELECT 1 FROM media_asset_shares sh WHERE sh.asset_id = m.id AND sh.production_id IN (${ids}))))`
    }
    const codes = f.types && f.types.length < HIT_TYPES.length ? f.types.map((t) => CODE[t]) : undefined
    const types = codes ? ` AND t.rowid % 4 IN (${codes.join(', ')})` : ''
    return {
      all: { match: inside.any, where: types + checks + where },
      name: { match: `{name} : ${inside.any}`, where: types + checks + where },
      rest: { match: `${inside.any} NOT {name} : ${inside.any}`, where: types + checks + where },
    }
  }

  /** The number of hits of an InsideQuery (its record read only when a condition asks for it). */
  function countInside(q: InsideQuery): number {
    const byRecord = /\b[mp]\./.test(q.where)
    const counting = reader().query<{ n: number }, [string]>(
      `SELECT count(*) AS n FROM search_index_trigram t ${byRecord ? joins('t.rowid') : ''}
       WHERE search_index_trigram MATCH ?${q.where}${byRecord ? ' AND coalesce(m.id, p.id) IS NOT NULL' : ''}`,
    )
    try {
      return counting.get(q.match)!.n
    } catch (error) {
      throw ofText(error)
    }
  }

  /** An InsideQuery's hits, newest first, score 0 (found by no word of the word index). */
  const insideRows = (q: InsideQuery, limit: number, offset: number): IterableIterator<Raw> =>
    stepped(
      statement(
        `SELECT t.rowid AS r, 0 AS b, ${FIELDS} FROM search_index_trigram t ${joins('t.rowid')}
         WHERE search_index_trigram MATCH ?${q.where} AND coalesce(m.id, p.id) IS NOT NULL ORDER BY t.rowid DESC LIMIT ? OFFSET ?`,
        limit,
      ).iterate(q.match, limit, offset),
    )

  /**
   * The hits of the word index, then those found only inside words (insideOf), the name first:
   * `count` all of them, the hits from `offset` on (stepped as read), outside any transaction of
   * their own.
   */
  function readHits(
    user: Principal,
    f: SearchFilters,
    limit: number | undefined,
    offset: number,
  ): { count: number; hits: IterableIterator<Hit> } {
    const readers = readersOf(user)
    const byWords = wordHits(readers, f, limit, offset)
    const inside = f.inside && insideOf(readers, f, f.inside)
    if (!inside) return byWords
    // Most searches find nothing inside words: one look, and the name's share only when there are some.
    const extra = countInside(inside.all)
    if (!extra) return byWords
    const inName = countInside(inside.name)
    const n = limit ?? -1
    return {
      count: byWords.count + extra,
      hits: (function* () {
        let left = n
        if (offset < byWords.count) {
          for (const hit of byWords.hits) {
            yield hit
            left -= 1
            if (left === 0) return
          }
        }
        let skip = Math.max(0, offset - byWords.count)
        if (skip < inName) {
          for (const row of insideRows(inside.name, left, skip)) {
            yield toHit(row, f)
            left -= 1
          }
          if (left === 0) return
        }
        skip = Math.max(0, skip - inName)
        for (const row of insideRows(inside.rest, left, skip)) yield toHit(row, f)
      })(),
    }
  }

  /** The hits of the word index: `count` all of them, the hits from `offset` on (at most `limit`). */
  function wordHits(
    readers: Readers,
    f: SearchFilters,
    limit: number | undefined,
    offset: number,
  ): { count: number; hits: IterableIterator<Hit> } {
    let all = queryOf(readers, f, f.match)
    if (!all) return { count: 0, hits: [][Symbol.iterator]() }
    if (readers) {
      const words = queryOf(undefined, f, f.match)!
      if (countOf(words) <= BY_RECORD_UP_TO) all = byRecord(readers, words)
    }
    const count = countOf(all)
    const n = limit ?? -1
    if (count <= RANKED_UP_TO) {
      const rows = ranked(all, n, offset)
      return {
        count,
        hits: (function* () {
          for (const row of rows) yield toHit(row, f)
        })(),
      }
    }
    const inName = queryOf(readers, f, `(${f.match}) AND {name} : ${f.wanted}`)!
    const elsewhere = queryOf(readers, f, `(${f.match}) NOT {name} : ${f.wanted}`)!
    const first = countOf(inName)
    function* tiers() {
      let left = n
      if (offset < first) {
        for (const row of newest(inName, TIER_SCORE.name, n, offset)) {
          yield toHit(row, f)
          left -= 1
        }
        if (left === 0) return
      }
      for (const row of newest(elsewhere, TIER_SCORE.elsewhere, left, Math.max(0, offset - first))) yield toHit(row, f)
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
     * to RANKED_UP_TO hits, else all words in the name first, then the rest, each newest first;
     * after them the hits found only inside words (readHits).
     * A page is read with its count in one read transaction (the same snapshot); without
     * `limit`, every hit, read as it is stepped.
     */
    search(
      user: Principal,
      f: SearchFilters,
      limit: number | undefined,
      offset: number,
    ): { count: number; hits: Iterable<Hit> } {
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
