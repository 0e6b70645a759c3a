// GET /api/search/: ranked full-text search over media and project assets (an extension of the
// medialoopster API). Paged like every list: limit/offset, X-Total-Count, Link.
import { Type } from '@sinclair/typebox'
import { Elysia, t } from 'elysia'
import type { ModuleContext } from '../../http/context.ts'
import { AppError, invalidParameter } from '../../http/errors.ts'
import { type ListAnswer, Paging, idFilter, pageLinks, streamRows } from '../../http/lists.ts'
import { errors, oneOf, listOf, sharedModels } from '../../http/models.ts'
import { flagFilter } from '../../http/resource.ts'
import { FacetParameters, facetFilterOf } from '../mediaassets/facets.ts'
import type { Principal } from '../users/service.ts'
import { createPgSearch } from '../../db/search/pg.ts'
import type { Search } from '../../db/search/sqlite.ts'
import { MAX_QUERY_CHARS, MAX_QUERY_TERMS, toMatch } from './query.ts'
import { HIT_TYPES, type Hit, type HitType, type SearchFilters, UnsearchableText } from './types.ts'

export const SearchHit = t.Object({
  type: oneOf(HIT_TYPES, { description: 'The kind of record: its list is /api/{type}s/' }),
  id: Type.Integer(),
  name: t.String(),
  production: Type.Integer({ description: 'The production the record belongs to' }),
  path: t.String({ description: "A media asset's path_file, a project's bundle_root" }),
  is_production: t.Boolean({ description: 'True while the essence is on online storage' }),
  status_asset: t.Optional(
    Type.Integer({
      description:
        "Only with ?status=true: the record's status_asset, 0 NEW (an import or copy at work), 6 done, -1 ERROR (its import or copy failed)",
    }),
  ),
  poster_url: t.Optional(
    t.String({
      description:
        "Only with ?pictures=true, on a media asset's hit: its poster_url, as its record and its list's row give it ('' for none)",
    }),
  ),
  strip_url: t.Optional(
    t.String({ description: "Only with ?pictures=true, on a video asset's hit: its strip_url ('' for none)" }),
  ),
  score: t.Number({
    description:
      'How well it matches (bm25; higher is better): a word in the name weighs most, then keywords, file and folder names, the description, custom metadata',
  }),
})

const SearchQuery = t.Object({
  ...Paging,
  q: t.Optional(
    t.String({
      description:
        `The words to look for (at most ${MAX_QUERY_CHARS} characters, ${MAX_QUERY_TERMS} words, no control characters). Every word must be found, ` +
        'as the start of a word (interv finds Interview), in any case and with or without accents (cafe finds Café), or, a word of three or more letters ' +
        'and digits, inside a word of a name or path (C003 finds A001C003; such hits come after the others); ' +
        '"two words" finds the phrase; -word leaves out what holds the word.',
    }),
  ),
  type: t.Optional(t.String({ description: `Only these kinds, comma-separated: ${HIT_TYPES.join(', ')}` })),
  production: idFilter('Only records of this production'),
  is_production: flagFilter('Only records online (true, 1) or not online (false, 0)'),
  device: idFilter("Only records on this device (a media asset's file, a project's folder)"),
  status_approval: t.Optional(oneOf(['0', '1'], { description: 'Only approved (1) or pending (0) records' })),
  status: flagFilter(
    "Each hit also carries its record's status_asset (true, 1), so that a result list can mark a failed import",
  ),
  pictures: flagFilter(
    "Each media asset's hit also carries its poster_url (a video's also strip_url), as its list's row does (true, 1): a result grid shows pictures",
  ),
  ...FacetParameters,
})
type Query = typeof SearchQuery.static

/** The filters of a request, each refused at its own parameter. */
function filtersOf(query: Query, base: string): SearchFilters | null {
  if (query.q === undefined) throw invalidParameter('q', 'q is required: give the words to look for.')
  const parsed = toMatch(query.q)
  if ('refused' in parsed) throw invalidParameter('q', parsed.refused)
  let types: HitType[] | undefined
  if (query.type !== undefined) {
    types = []
    for (const name of query.type.split(',').map((s) => s.trim())) {
      if (!(HIT_TYPES as readonly string[]).includes(name))
        throw invalidParameter('type', `type must be one or more of ${HIT_TYPES.join(', ')}, comma-separated.`)
      types.push(name as HitType)
    }
  }
  // Checked before anything is looked for: a bad value is a 400 at its parameter whatever q holds.
  const facets = facetFilterOf(query)
  if (parsed.match === null) return null
  // Digits beyond any id (a 64-bit id is never handed out): no record is of that production.
  if (query.production !== undefined && !Number.isSafeInteger(Number(query.production))) return null
  if (query.device !== undefined && !Number.isSafeInteger(Number(query.device))) return null
  return {
    match: parsed.match,
    wanted: parsed.wanted,
    types,
    production: query.production === undefined ? undefined : Number(query.production),
    is_production:
      query.is_production === undefined ? undefined : query.is_production === 'true' || query.is_production === '1',
    device: query.device === undefined ? undefined : Number(query.device),
    approval: query.status_approval === undefined ? undefined : Number(query.status_approval),
    status: query.status === 'true' || query.status === '1',
    ...(query.pictures === 'true' || query.pictures === '1' ? { pictures: base } : {}),
    inside: parsed.inside,
    facets,
  }
}

/** The facet parameters, in the order a refusal names the first one given (searchModule on PostgreSQL). */
const FACET_NAMES = Object.keys(FacetParameters) as (keyof typeof FacetParameters)[]

/** The query's limit (undefined: every hit, streamed) and offset; as lists do (http/lists.ts), digits beyond 64-bit integers are capped. */
function pagingOf(query: Query): { limit: number | undefined; offset: number } {
  return {
    limit: query.limit === undefined ? undefined : Math.min(Number(query.limit), Number.MAX_SAFE_INTEGER),
    offset: query.offset === undefined ? 0 : Math.min(Number(query.offset), Number.MAX_SAFE_INTEGER),
  }
}

/** A search refused by the engine as the text it could not read: a 400 at q, never a 500. */
function refusedText(error: unknown): unknown {
  return error instanceof UnsearchableText ? invalidParameter('q', `q cannot be searched: ${error.message}.`) : error
}

/** The PostgreSQL pool's own client, which db/search/pg.ts's statements run on (db/port.ts Port.sql). */
function poolOf(ctx: ModuleContext) {
  if (!ctx.port.sql) throw new Error('the PostgreSQL port has no client to search with')
  return ctx.port.sql
}

export function searchModule(ctx: ModuleContext, search: Search) {
  // On a PostgreSQL catalogue its own search (db/search/pg.ts), over the pool's client; on SQLite,
  // FTS5 (db/search/sqlite.ts).
  const pg = ctx.port.engine === 'postgres' ? createPgSearch(poolOf(ctx)) : undefined

  /** The answer of a search's count and hits: the list's envelope (X-Total-Count, Link), the hits as JSON or streamed. */
  function envelope(
    found: { count: number; hits: Iterable<Hit> } | undefined,
    limit: number | undefined,
    offset: number,
    request: Request,
  ): ListAnswer {
    const count = found?.count ?? 0
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-total-count': String(count) }
    const link = limit === undefined ? undefined : pageLinks(request, ctx.baseOf(request), { limit, offset, count })
    if (link) headers.link = link
    if (!found || limit === 0 || offset >= count) return { body: '[]', headers }
    const hits = found.hits
    if (limit === undefined) return { body: streamRows(hits[Symbol.iterator]() as never, JSON.stringify), headers }
    return { body: JSON.stringify([...hits]), headers }
  }

  /** The answer on SQLite, read in the same call. */
  function answer(query: Query, user: Principal, request: Request): ListAnswer {
    const filters = filtersOf(query, ctx.baseOf(request))
    const { limit, offset } = pagingOf(query)
    let found: ReturnType<typeof search.search> | undefined
    try {
      if (filters) found = search.search(user, filters, limit, offset)
    } catch (error) {
      // query.ts writes every word as an FTS5 string, so the engine should never refuse one; if it
      // does, whatever its message, the text is what it could not read.
      throw refusedText(error)
    }
    return envelope(found, limit, offset, request)
  }

  /**
   * The answer on PostgreSQL: the same checks of the query first (each bad value a 400 at its
   * parameter, as on SQLite), then db/search/pg.ts's search of the user's text. The technical
   * facets are not searched there yet (their expressions, db/facets.ts, are SQLite's JSON
   * functions): a search with one is a 501 at the first one given, in the errors' envelope,
   * rather than a result that ignores it.
   */
  async function pgAnswer(query: Query, user: Principal, request: Request): Promise<ListAnswer> {
    const filters = filtersOf(query, ctx.baseOf(request))
    const facet = FACET_NAMES.find((name) => query[name] !== undefined)
    if (facet !== undefined)
      throw new AppError(
        501,
        'not_implemented',
        `The technical facets are not searched on a PostgreSQL catalogue yet: search without ${facet}.`,
        { parameter: facet },
      )
    const { limit, offset } = pagingOf(query)
    if (!filters) return envelope(undefined, limit, offset, request)
    const { match: _match, wanted: _wanted, inside: _inside, ...rest } = filters
    let found: { count: number; hits: Hit[] }
    try {
      found = await pg!.search(user, { ...rest, q: query.q! }, limit, offset)
    } catch (error) {
      throw refusedText(error)
    }
    return envelope(found, limit, offset, request)
  }

  return (
    new Elysia({ prefix: '/search', tags: ['Search'] })
      .use(sharedModels)
      .use(ctx.auth)
      .model({ SearchHit, SearchHits: listOf(SearchHit) })
      // The Response made here, of the answer made outside: see src/http/lists.ts ListAnswer. On
      // SQLite the answer is there at once and the handler is never awaited; on PostgreSQL it is.
      .get(
        '/',
        ctx.port.engine === 'sqlite'
          ? ({ query, user, request }) => {
              const a = answer(query, user, request)
              return new Response(a.body, a)
            }
          : async ({ query, user, request }) => {
              const a = await pgAnswer(query, user, request)
              return new Response(a.body, a)
            },
        {
          auth: true,
          query: SearchQuery,
          response: { 200: 'SearchHits', ...errors(400) },
          detail: {
            summary: 'Full-text search over media and project assets, best first (extension)',
            description:
              'Searches names, descriptions, the notes of markers, the folder and file names of path_file and bundle_root, keywords ' +
              "(category and keyword), custom metadata values and a broadcast WAV's bext and iXML (description, originator, scene, take, tape, " +
              'project, note). Every word must match as the start of a word, in any case and accent, or (three or more letters and digits) ' +
              'inside a word of a name or path: C003 finds A001C003, after the hits of whole words; "a phrase" must match as written; ' +
              '-word excludes. Technical facets filter media assets (codec, width, height, resolution, fps, duration_min, duration_max, ' +
              'timecode_from, timecode_to, audio_channels; no project matches one). Only records of productions the user can read are ' +
              'found, and X-Total-Count counts only those. limit/offset, X-Total-Count and Link as every list; without limit, every ' +
              'hit, streamed. Examples: /api/search/?q=harbour%20drone&type=videoasset&limit=20, /api/search/?q=C003&codec=prores&fps=23.976.',
          },
        },
      )
  )
}
