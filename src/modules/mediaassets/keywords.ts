// The one writer of a media asset's keywords (PATCH and PUT of the asset, an import): a few
// set-based statements whatever the number of keywords, and the asset's search document rebuilt
// once per write.
//
// Each link's trigger rebuilds the whole search document, its keywords included (drizzle/0016;
// on PostgreSQL drizzle/pg/0002), so links written one by one cost n² (1,000 keywords held the
// server for seconds, every other request waiting). Here the asset is listed in search_deferred
// while its links are written (the triggers skip it, drizzle/0021), then taken off the list, and
// its document rebuilt once. The triggers stay as they were for every other writer (a delete that
// cascades, a statement by hand), so the index cannot miss a write that does not come through
// here; dropping them and rebuilding in each writer would have made every writer responsible for
// the index.
import { and, eq, exists, inArray, sql } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { inJsonList } from '../../db/dialect.ts'
import { type Work, all, run, tx } from '../../db/port.ts'
import {
  type MediaKind,
  engine,
  keywordCategories,
  keywords,
  mediaAssetKeywords,
  searchDeferred,
} from '../../db/tables.ts'

/**
 * How the keywords given meet the asset's own: `add` keeps them all (an import), `categories`
 * replaces those of the categories given (PATCH; a category given with no keyword is removed),
 * `all` replaces them all (PUT).
 */
export type KeywordWrite = 'add' | 'categories' | 'all'

export function keywordWriter(db: Db) {
  /**
   * The asset's search document made again from what the tables hold now. SQLite's is a row of
   * the FTS5 table search_index, keyed by its rowid (migration 0016's view names it `doc`);
   * PostgreSQL's is written by the function its triggers call.
   */
  function* rebuildDocument(id: number): Work<void> {
    if (engine() === 'postgres') {
      yield* run(sql`SELECT search.write_media(${id})`)
      return
    }
    yield* run(sql`DELETE FROM search_index WHERE rowid = (SELECT doc FROM media_search_documents WHERE id = ${id})`)
    yield* run(
      sql`INSERT INTO search_index (rowid, name, path, keywords, description, meta, scope) SELECT doc, name, path, keywords, description, meta, scope FROM media_search_documents WHERE id = ${id}`,
    )
  }

  /**
   * Writes the keywords `given` ({category: [keyword]}, checked and each listed once) of the
   * asset `id` of `kind`, as `how` says. Inside a transaction of its own (a savepoint in the
   * caller's): either all of it, the search_deferred row gone and the document rebuilt, or none.
   */
  return function* writeKeywords(
    id: number,
    kind: MediaKind,
    given: Record<string, string[]>,
    how: KeywordWrite,
  ): Work<void> {
    // Nothing to add and nothing to take away (an import without keywords, as the watcher's are).
    if (
      how !== 'all' &&
      (how === 'add' ? Object.values(given).every((names) => names.length === 0) : Object.keys(given).length === 0)
    )
      return
    // A category given with no keyword makes no row (it attaches nothing to the asset).
    const filled = Object.entries(given)
      .filter(([, names]) => names.length > 0)
      .map(([category, names]): [string, string[]] => [category, [...new Set(names)]])
    const categoryNames = filled.map(([category]) => category)
    // Every name travels as one JSON text parameter, however many there are (dialect.ts).
    const keywordNames = JSON.stringify([...new Set(filled.flatMap(([, names]) => names))])
    yield* tx(function* () {
      yield* run(db.insert(searchDeferred).values({ asset_id: id }))
      let changed = 0
      if (how !== 'add') {
        // The asset's links of the categories given (of every category of its kind for `all`):
        // read from the asset's own links, each keyword and category found by its key.
        const ofCategory = db
          .select({ one: sql`1` })
          .from(keywords)
          .innerJoin(keywordCategories, eq(keywordCategories.id, keywords.category_id))
          .where(
            and(
              eq(keywords.id, mediaAssetKeywords.keyword_id),
              eq(keywordCategories.kind, kind),
              how === 'all'
                ? undefined
                : inJsonList(keywordCategories.name, JSON.stringify(Object.keys(given)), 'text'),
            ),
          )
        changed += (yield* run(
          db.delete(mediaAssetKeywords).where(and(eq(mediaAssetKeywords.asset_id, id), exists(ofCategory))),
        )).changes
      }
      if (filled.length) {
        yield* run(
          db
            .insert(keywordCategories)
            .values(categoryNames.map((name) => ({ kind, name })))
            .onConflictDoNothing(),
        )
        const categories = yield* all(
          db
            .select({ id: keywordCategories.id, name: keywordCategories.name })
            .from(keywordCategories)
            .where(
              and(
                eq(keywordCategories.kind, kind),
                inJsonList(keywordCategories.name, JSON.stringify(categoryNames), 'text'),
              ),
            ),
        )
        const categoryId = new Map(categories.map((c) => [c.name, Number(c.id)]))
        const pairs = filled.flatMap(([category, names]) =>
          names.map((name) => ({ category_id: categoryId.get(category)!, name })),
        )
        yield* run(db.insert(keywords).values(pairs).onConflictDoNothing())
        // The keywords of those categories with one of the names given, and of them the pairs given.
        const wanted = new Set(pairs.map((p) => `${p.category_id}\0${p.name}`))
        const found = yield* all(
          db
            .select({ id: keywords.id, category_id: keywords.category_id, name: keywords.name })
            .from(keywords)
            .where(
              and(
                inArray(keywords.category_id, [...categoryId.values()]),
                inJsonList(keywords.name, keywordNames, 'text'),
              ),
            ),
        )
        const links = found
          .filter((k) => wanted.has(`${Number(k.category_id)}\0${k.name}`))
          .map((k) => ({ asset_id: id, keyword_id: Number(k.id) }))
        if (links.length)
          changed += (yield* run(db.insert(mediaAssetKeywords).values(links).onConflictDoNothing())).changes
      }
      yield* run(db.delete(searchDeferred).where(eq(searchDeferred.asset_id, id)))
      if (changed > 0) yield* rebuildDocument(id)
    })
  }
}
