// What a search finds and what it is asked, the same on both engines: the hits' shape, the
// filters, the order of a wide search and the refusal of a text. SQLite's FTS5 search
// (db/search/sqlite.ts) and PostgreSQL's (db/search/pg.ts) both answer in these terms, and the
// routes (index.ts) read them; kept apart from either engine so that each, and the routes, import
// them without importing the other engine.
import type { FacetFilter } from '../mediaassets/facets.ts'
import type { Inside } from './query.ts'

export const HIT_TYPES = ['videoasset', 'audioasset', 'imageasset', 'projectasset'] as const
export type HitType = (typeof HIT_TYPES)[number]

/**
 * Up to this many hits, they are ordered by rank (bm25 on SQLite). FTS5's bm25 reads, for each
 * word, every row that holds it before it scores the first hit, then scores each hit: about 3 µs a
 * hit at a million assets (docs/benchmarks.md), 30 ms for 10,000 hits, 300 ms for 100,000 and
 * more for a word most records hold. Above it, hits are ordered by where the words are (all in
 * the name first), then newest first: on SQLite two walks of the index in id order that stop at
 * the page's end. PostgreSQL orders its hits by the same rule, so that the engines' pages agree.
 */
export const RANKED_UP_TO = 10_000
/** The score of the hits of a search too wide to rank: in the name, elsewhere. */
export const TIER_SCORE = { name: 2, elsewhere: 1 } as const

/**
 * The engine refused a search's query as it ran it: the user's text, which the route answers
 * with a 400 at parameter q. On SQLite, an FTS5 query the engine could not read (db/search/sqlite.ts
 * says which errors are the query's); on PostgreSQL, a text query.ts refuses.
 */
export class UnsearchableText extends Error {}

export type Hit = {
  type: HitType
  id: number
  name: string
  production: number
  path: string
  is_production: boolean
  /** Only when asked for (SearchFilters.status): the hit's shape stays as it was for clients that compare it. */
  status_asset?: number
  /** Only when asked for (SearchFilters.pictures), on a media asset's hit: its pictures' URLs. */
  poster_url?: string
  strip_url?: string
  score: number
}

export type SearchFilters = {
  /** The FTS5 query (query.ts toMatch) and its words and phrases to find, exclusions left out. */
  match: string
  wanted: string
  types?: readonly HitType[]
  production?: number
  is_production?: boolean
  /** The device the file (a project: its folder) lies on: a condition on the hit's record. */
  device?: number
  /** 1 approved, 0 pending: a condition on the hit's record. */
  approval?: number
  /** Each hit carries its record's status_asset (a result list marks failed imports). */
  status?: boolean
  /** With the API's base URL: each media asset's hit carries poster_url (a video's also strip_url), as its list's row does. */
  pictures?: string
  /** The words that may be found inside others, and how (query.ts Inside). */
  inside?: Inside
  /** Technical facets (mediaassets/facets.ts): conditions on a hit's media asset; a project is no hit. */
  facets?: FacetFilter
}
