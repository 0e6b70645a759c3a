// PostgreSQL's search: full-text search on a PostgreSQL catalogue, the records sqlite.ts finds on
// SQLite, found in search.docs (drizzle/pg/0002_search.sql), which triggers keep in step with the
// records as FTS5's are kept. The user's text is read by modules/search/query.ts (toMatch's
// checks, searchedTerms' words); each word and phrase becomes a tsquery of the lexemes the server
// itself makes of it (search.words, the configuration search.rh), so that the words of a query
// and of a document are split and folded by one function.
//
// What FTS5 writes and how it is written here:
// - `"x"*` (the start of a word): `'x':*`; a phrase or a word that splits into several
//   (`a:b`, `2026-03-04`), its lexemes side by side: `'a' <-> 'b':*`, the last one a prefix when
//   the word is;
// - the words AND-ed, `NOT "x"`: `& !'x'`;
// - `{name} : ...` (all the words in the name, for the order of a wide search): the lexemes
//   restricted to weight A, the name's (`'x':*A`);
// - the scope words (p12, s12, online): columns of search.docs (production, shared, online);
// - the trigram index's `"c003"` (a word inside another word): a LIKE '%c003%' on the trigram
//   text, both sides folded by search.fold.
// The hits, their count and the order of the groups (ranked hits, or in a wide search the name's
// then the rest, then the hits inside words, the name's first) are sqlite.ts's. The rank is
// ts_rank with length normalisation (flag 1: divided by 1 + the log of the document's length)
// over the weights A 1.0, B 0.4, C 0.2, D 0.1, close to bm25's 10, 4 and 5, 2, 1 but not it:
// the order of ranked hits is approximate, ties newest first as on SQLite. What differs from
// SQLite's hits, and why, is said in docs/api.md, Search on PostgreSQL.
//
// It lives in src/db/ because it is the engine's own machinery: the search schema (search.docs,
// its triggers and functions) is the PostgreSQL migrations' own, and its statements, like every
// statement on the catalogue, run only in src/db/. What a search is, the same on both engines
// (its hits, filters and order, the query language, the routes), is src/modules/search/'s.
import type { SQL } from 'bun'
import type { FacetFilter } from '../../modules/mediaassets/facets.ts'
import { pictureUrls } from '../../modules/mediaassets/pictures.ts'
import { type Searched, searchedTerms, toMatch } from '../../modules/search/query.ts'
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
import type { MediaKind, PictureVersions } from '../tables.ts'

/**
 * A search's filters as sqlite.ts takes them, with the user's text in place of its FTS5 query
 * (`match`, `wanted`, `inside`: this engine takes no FTS5 query, and reads the text itself).
 */
export type PgSearchFilters = Omit<SearchFilters, 'match' | 'wanted' | 'inside'> & { q: string }

/** A search's result, as sqlite.ts's search returns it: the count, and the page's hits in order. */
export type PgSearchResult = { count: number; hits: Hit[] }

/**
 * Options of createPgSearch: `rankedUpTo`, the most hits ordered by rank (modules/search/types.ts
 * RANKED_UP_TO).
 */
export type PgSearchOptions = { rankedUpTo?: number }

/** The index's type codes: a document's id is the record's id * 4 + its type's code (the migration's). */
const CODE: Record<HitType, number> = { videoasset: 0, audioasset: 1, imageasset: 2, projectasset: 3 }

/** The hit's record, joined on the document's id. */
const JOINS = `LEFT JOIN media_assets m ON d.doc % 4 < 3 AND m.id = d.doc / 4
    LEFT JOIN project_assets p ON d.doc % 4 = 3 AND p.id = d.doc / 4`
const FIELDS = `d.doc AS doc, coalesce(m.name, p.name) AS name, coalesce(m.production, p.production) AS production,
    coalesce(m.path_file, p.bundle_root) AS path, coalesce(m.is_production, p.is_production) AS is_production,
    coalesce(m.status_asset, p.status_asset) AS status_asset, m.path_proxy AS path_proxy, m.pictures AS pictures`

/** A row of a page: bigint columns come as text from Bun's client, json parsed. */
type Row = {
  doc: string
  rank?: number
  name: string
  production: string | number
  path: string
  is_production: boolean
  status_asset: number
  path_proxy: string | null
  pictures: PictureVersions | string | null
}

/** An integer written into a statement: the filters are checked ids and flags, never text. */
function int(n: number): string {
  if (!Number.isSafeInteger(n)) throw new Error(`not an integer: ${n}`)
  return String(n)
}

/** A lexeme as a tsquery operand: quoted, a quote doubled and a backslash escaped. */
const operand = (lexeme: string) => `'${lexeme.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`

/**
 * The tsquery of one word or phrase: its lexemes side by side, the last one a prefix when the
 * word is one, each restricted to `weight` when given. Null: the server makes no lexeme of it
 * (a word of characters its parser drops), which no document holds.
 */
function phraseOf(lexemes: readonly string[], prefix: boolean, weight = ''): string | null {
  if (!lexemes.length) return null
  const parts = lexemes.map((lexeme, i) => {
    const last = i === lexemes.length - 1
    return operand(lexeme) + (last && prefix ? `:*${weight}` : weight ? `:${weight}` : '')
  })
  return parts.length === 1 ? parts[0]! : `(${parts.join(' <-> ')})`
}

/** LIKE's own characters in a word, escaped (with LIKE's default escape, the backslash). */
const likeText = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`)

/** A term of the search with its tsquery (null: nothing holds it as words) and its trigram pattern. */
type Planned = Searched & { lexemes: string[]; tsquery: string | null; pattern: string | undefined }

/**
 * The parts of a search's statements, the user's text in them as parameters only: `words` the
 * tsquery of the word index's hits (null: none can be one), `all` the wanted words AND-ed without
 * the exclusions, `name` those in the name, `excluded` the exclusions OR-ed.
 */
type Plan = {
  wanted: Planned[]
  words: string | null
  all: string | null
  name: string | null
  excluded: string | null
  /** The distinct trigram patterns of the words that may be found inside others. */
  patterns: string[]
}

/** Statement parameters, each added once and named $n. */
class Params {
  readonly values: unknown[] = []
  add(value: unknown): string {
    this.values.push(value)
    return `$${this.values.length}`
  }
}

/** Whether a facet filter asks for anything. */
const hasFacets = (f: FacetFilter | undefined) => f !== undefined && Object.values(f).some((v) => v !== undefined)

/**
 * The search over the catalogue at `client`, as sqlite.ts's createSearch over SQLite: `search`
 * takes the same user, filters (the text as `q`), limit and offset, and resolves to the count and
 * the page's hits. The technical facets are not searched here yet (their expressions,
 * db/facets.ts, are SQLite's JSON functions): a search with one is refused with an Error.
 */
export function createPgSearch(client: SQL, options: PgSearchOptions = {}) {
  const rankedUpTo = options.rankedUpTo ?? RANKED_UP_TO

  /** The productions the user reads; undefined: no filter (a superuser, or one who reads them all). */
  async function readersOf(tx: SQL, user: Principal): Promise<number[] | undefined> {
    if (user.is_superuser) return undefined
    const ids = [...user.readable].filter(Number.isSafeInteger)
    if (ids.length) {
      const all = (await tx.unsafe('SELECT id FROM productions')) as { id: string }[]
      if (all.every((p) => user.readable.has(Number(p.id)))) return undefined
    }
    return ids
  }

  /** The lexemes the server makes of each term, and each one's text folded, in one statement. */
  async function planOf(tx: SQL, terms: Searched[]): Promise<Plan> {
    const rows = (await tx.unsafe(
      `SELECT t.i::int AS i,
         coalesce((SELECT array_agg(u.lexeme ORDER BY p.pos) FROM unnest(to_tsvector('search.rh', search.words(t.text))) u
           CROSS JOIN LATERAL unnest(u.positions) AS p(pos)), '{}') AS lexemes,
         search.fold(t.text) AS folded
       FROM json_array_elements_text($1::json) WITH ORDINALITY AS t(text, i)`,
      // Bun's client writes a value given to a json parameter as JSON itself.
      [terms.map((t) => t.text)],
    )) as { i: number; lexemes: string[]; folded: string }[]
    const planned: Planned[] = terms.map((term, index) => {
      const row = rows.find((r) => r.i === index + 1)!
      return {
        ...term,
        lexemes: row.lexemes,
        tsquery: phraseOf(row.lexemes, term.prefix),
        pattern: term.inside === undefined ? undefined : `%${likeText(row.folded)}%`,
      }
    })
    const wanted = planned.filter((t) => !t.exclude)
    const excluded = planned.filter((t) => t.exclude && t.tsquery !== null)
    const whole = wanted.every((t) => t.tsquery !== null)
    const all = whole ? wanted.map((t) => t.tsquery).join(' & ') : null
    return {
      wanted,
      all,
      words: all === null ? null : [all, ...excluded.map((t) => `!${t.tsquery}`)].join(' & '),
      name: whole ? wanted.map((t) => phraseOf(t.lexemes, t.prefix, 'A')).join(' & ') : null,
      excluded: excluded.length ? excluded.map((t) => t.tsquery).join(' | ') : null,
      patterns: [...new Set(wanted.flatMap((t) => (t.pattern === undefined ? [] : [t.pattern])))],
    }
  }

  /** The conditions on a document the index itself answers: type, production, online, readers. */
  function scopeOf(f: PgSearchFilters, readers: number[] | undefined): string {
    let where = ''
    if (f.types && f.types.length < HIT_TYPES.length)
      where += ` AND d.doc % 4 IN (${f.types.map((t) => CODE[t]).join(', ')})`
    if (f.production !== undefined) where += ` AND d.production = ${int(f.production)}`
    if (f.is_production !== undefined) where += ` AND d.online = ${f.is_production ? 'true' : 'false'}`
    if (readers) {
      const ids = readers.map(int).join(', ')
      // A media asset shared with a readable production is readable there (users/access.ts mediaReadableBy).
      where += ` AND (d.production IN (${ids}) OR d.shared && ARRAY[${ids}]::bigint[])`
    }
    return where
  }

  /** The conditions the index holds nothing for (device, approval), asked of the hit's record. */
  function recordOf(f: PgSearchFilters): string {
    let where = ''
    if (f.device !== undefined) where += ` AND coalesce(m.device, p.device) = ${int(f.device)}`
    if (f.approval !== undefined) where += ` AND coalesce(m.approval, p.status_approval) = ${int(f.approval)}`
    return where
  }

  /** The number of documents found by `condition` (on `d`, and on `m`, `p` when `record` is given). */
  async function countOf(tx: SQL, condition: string, record: string, params: Params): Promise<number> {
    const [row] = (await tx.unsafe(
      record
        ? `SELECT count(*) AS n FROM search.docs d ${JOINS} WHERE ${condition}${record} AND coalesce(m.id, p.id) IS NOT NULL`
        : `SELECT count(*) AS n FROM search.docs d WHERE ${condition}`,
      params.values,
    )) as { n: string }[]
    return Number(row!.n)
  }

  /** A page of the documents found by `condition`, in `order`, with their records' fields. */
  async function rowsOf(
    tx: SQL,
    condition: string,
    rank: string,
    order: string,
    limit: number | undefined,
    offset: number,
    params: Params,
  ): Promise<Row[]> {
    return (await tx.unsafe(
      `SELECT ${FIELDS}, ${rank} AS rank FROM search.docs d ${JOINS}
       WHERE ${condition} AND coalesce(m.id, p.id) IS NOT NULL
       ORDER BY ${order} LIMIT ${limit === undefined ? 'ALL' : int(limit)} OFFSET ${int(offset)}`,
      params.values,
    )) as Row[]
  }

  function toHit(row: Row, f: PgSearchFilters, score: number): Hit {
    const doc = Number(row.doc)
    const type = HIT_TYPES[doc % 4]!
    const id = Math.floor(doc / 4)
    const pictures =
      f.pictures !== undefined && row.path_proxy !== null
        ? pictureUrls(type.slice(0, -'asset'.length) as MediaKind, f.pictures)(
            id,
            row.path_proxy,
            (typeof row.pictures === 'string' ? JSON.parse(row.pictures) : (row.pictures ?? {})) as PictureVersions,
          )
        : {}
    return {
      type,
      id,
      name: row.name,
      production: Number(row.production),
      path: row.path,
      is_production: row.is_production,
      ...(f.status ? { status_asset: row.status_asset } : {}),
      ...pictures,
      score,
    }
  }

  /** The hits of the word index: `count` all of them, the hits from `offset` on (at most `limit`). */
  async function wordHits(
    tx: SQL,
    plan: Plan,
    f: PgSearchFilters,
    readers: number[] | undefined,
    limit: number | undefined,
    offset: number,
  ): Promise<{ count: number; hits: Hit[] }> {
    if (plan.words === null) return { count: 0, hits: [] }
    const params = new Params()
    const words = params.add(plan.words)
    const scope = scopeOf(f, readers)
    const record = recordOf(f)
    const count = await countOf(tx, `d.tsv @@ ${words}::tsquery${scope}`, record, params)
    if (count === 0 || limit === 0 || offset >= count) return { count, hits: [] }
    if (count <= rankedUpTo) {
      const rows = await rowsOf(
        tx,
        `d.tsv @@ ${words}::tsquery${scope}${record}`,
        `ts_rank(d.tsv, ${words}::tsquery, 1)`,
        'rank DESC, d.doc DESC',
        limit,
        offset,
        params,
      )
      // Rounded, to a millionth (ts_rank's values are small where bm25's are not); higher is better.
      return { count, hits: rows.map((row) => toHit(row, f, Math.round(row.rank! * 1e6) / 1e6)) }
    }
    // Too many to rank (modules/search/types.ts RANKED_UP_TO says why): every word in the name
    // first, then the rest, newest first.
    const name = params.add(plan.name)
    const inName = `d.tsv @@ (${words}::tsquery && ${name}::tsquery)${scope}`
    const elsewhere = `d.tsv @@ (${words}::tsquery && (!! ${name}::tsquery))${scope}`
    const first = await countOf(tx, inName, record, params)
    const hits: Hit[] = []
    if (offset < first) {
      const rows = await rowsOf(tx, inName + record, '0', 'd.doc DESC', limit, offset, params)
      hits.push(...rows.map((row) => toHit(row, f, TIER_SCORE.name)))
    }
    const left = limit === undefined ? undefined : limit - hits.length
    if (left === undefined || left > 0) {
      const rows = await rowsOf(tx, elsewhere + record, '0', 'd.doc DESC', left, Math.max(0, offset - first), params)
      hits.push(...rows.map((row) => toHit(row, f, TIER_SCORE.elsewhere)))
    }
    return { count, hits }
  }

  /**
   * The hits found only inside words of a name or path (sqlite.ts insideOf): documents whose
   * trigram text holds a wanted word, that hold every other wanted word either way, are no hit of
   * the word index already, hold no excluded word, and pass the filters. Their name's first, then
   * the rest, each newest first, score 0. Undefined: no word of the search may be found inside others.
   */
  async function insideHits(
    tx: SQL,
    plan: Plan,
    f: PgSearchFilters,
    readers: number[] | undefined,
    limit: number | undefined,
    offset: number,
  ): Promise<{ count: number; hits: Hit[] } | undefined> {
    if (!plan.patterns.length) return undefined
    const params = new Params()
    const patterns = plan.patterns.map((p) => params.add(p))
    const holds = (pattern: string) => `d.tri_name LIKE ${pattern} OR d.tri_path LIKE ${pattern}`
    let condition = `(${patterns.map(holds).join(' OR ')})`
    if (plan.all !== null) condition += ` AND NOT d.tsv @@ ${params.add(plan.all)}::tsquery`
    if (plan.excluded !== null) condition += ` AND NOT d.tsv @@ ${params.add(plan.excluded)}::tsquery`
    // One wanted word: the candidates hold it inside a word already. More: each must be held.
    if (plan.wanted.length > 1)
      for (const term of plan.wanted) {
        const asWords = term.tsquery === null ? 'false' : `d.tsv @@ ${params.add(term.tsquery)}::tsquery`
        condition +=
          term.pattern === undefined ? ` AND ${asWords}` : ` AND (${asWords} OR ${holds(params.add(term.pattern))})`
      }
    condition += scopeOf(f, readers)
    const record = recordOf(f)
    const count = await countOf(tx, condition, record, params)
    if (count === 0 || limit === 0 || offset >= count) return { count, hits: [] }
    const inName = `(${patterns.map((p) => `d.tri_name LIKE ${p}`).join(' OR ')})`
    const rows = await rowsOf(tx, condition + record, '0', `${inName} DESC, d.doc DESC`, limit, offset, params)
    return { count, hits: rows.map((row) => toHit(row, f, 0)) }
  }

  return {
    /**
     * The number of hits the user may see, and the hits from `offset` on (at most `limit`), as
     * sqlite.ts's search: the word index's hits by rank up to `rankedUpTo` of them, else those
     * with every word in the name first, then the rest, each newest first; after them the hits
     * found only inside words. Read in one snapshot (a read-only repeatable read transaction), so
     * that the count and the page agree. A text query.ts refuses is an UnsearchableText.
     */
    async search(
      user: Principal,
      f: PgSearchFilters,
      limit: number | undefined,
      offset: number,
    ): Promise<PgSearchResult> {
      if (hasFacets(f.facets)) throw new Error('the technical facets are not searched on PostgreSQL yet')
      const parsed = toMatch(f.q)
      if ('refused' in parsed) throw new UnsearchableText(parsed.refused)
      if (parsed.match === null) return { count: 0, hits: [] }
      const terms = searchedTerms(f.q)
      return (await client.begin('ISOLATION LEVEL REPEATABLE READ READ ONLY', async (tx) => {
        const readers = await readersOf(tx, user)
        if (readers && !readers.length) return { count: 0, hits: [] }
        const plan = await planOf(tx, terms)
        const byWords = await wordHits(tx, plan, f, readers, limit, offset)
        const taken = byWords.hits.length
        const left = limit === undefined ? undefined : limit - taken
        const inside = await insideHits(tx, plan, f, readers, left, Math.max(0, offset - byWords.count))
        if (!inside) return byWords
        return { count: byWords.count + inside.count, hits: [...byWords.hits, ...inside.hits] }
      })) as PgSearchResult
    },
  }
}

export type PgSearch = ReturnType<typeof createPgSearch>
