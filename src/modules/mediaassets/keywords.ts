// The one writer of a media asset's keywords (PATCH and PUT of the asset, an import): a few
// set-based statements whatever the number of keywords, and the asset's search document rebuilt
// once per write.
//
// Each link's trigger rebuilds the whole search document, its keywords included (drizzle/0016),
// so links written one by one cost n² (1,000 keywords held the server for seconds, every other
// request waiting). Here the asset is listed in search_deferred while its links are written (the
// triggers skip it, drizzle/0021), then taken off the list, and its document rebuilt once. The
// triggers stay as they were for every other writer (a delete that cascades, a statement by
// hand), so the index cannot miss a write that does not come through here; dropping them and
// rebuilding in each writer would have made every writer responsible for the index.
import type { Db } from '../../db/client.ts'
import type { MediaKind } from '../../db/tables.ts'

/**
 * How the keywords given meet the asset's own: `add` keeps them all (an import), `categories`
 * replaces those of the categories given (PATCH; a category given with no keyword is removed),
 * `all` replaces them all (PUT).
 */
export type KeywordWrite = 'add' | 'categories' | 'all'

export function keywordWriter(db: Db) {
  const client = db.$client
  // The keywords given travel as one JSON text, {category: [keyword]}, read by json_each: one
  // statement per step for any number of them, each compiled once.
  const unlink = client.query<unknown, [number, MediaKind, string | null]>(`
    DELETE FROM media_asset_keywords WHERE asset_id = ?1 AND keyword_id IN (
      SELECT k.id FROM media_asset_keywords mk JOIN keywords k ON k.id = mk.keyword_id JOIN keyword_categories c ON c.id = k.category_id
      WHERE mk.asset_id = ?1 AND c.kind = ?2 AND (?3 IS NULL OR c.name IN (SELECT key FROM json_each(?3))))`)
  // A category given with no keyword makes no row (it attaches nothing to the asset).
  const addCategories = client.query<unknown, [MediaKind, string]>(`
    INSERT INTO keyword_categories (kind, name) SELECT ?1, e.key FROM json_each(?2) e
    WHERE json_array_length(e.value) > 0 ON CONFLICT DO NOTHING`)
  // CROSS JOIN: SQLite walks the given names first and finds each row by its unique index.
  const addKeywords = client.query<unknown, [MediaKind, string]>(`
    INSERT INTO keywords (category_id, name) SELECT c.id, w.value
    FROM json_each(?2) e CROSS JOIN keyword_categories c CROSS JOIN json_each(e.value) w
    WHERE c.kind = ?1 AND c.name = e.key ON CONFLICT DO NOTHING`)
  const link = client.query<unknown, [number, MediaKind, string]>(`
    INSERT INTO media_asset_keywords (asset_id, keyword_id) SELECT ?1, k.id
    FROM json_each(?3) e CROSS JOIN keyword_categories c CROSS JOIN json_each(e.value) w CROSS JOIN keywords k
    WHERE c.kind = ?2 AND c.name = e.key AND k.category_id = c.id AND k.name = w.value ON CONFLICT DO NOTHING`)
  const defer = client.query<unknown, [number]>('INSERT INTO search_deferred (asset_id) VALUES (?)')
  const undefer = client.query<unknown, [number]>('DELETE FROM search_deferred WHERE asset_id = ?')
  const dropDocument = client.query<unknown, [number]>(
    'DELETE FROM search_index WHERE rowid = (SELECT doc FROM media_search_documents WHERE id = ?)',
  )
  const addDocument = client.query<unknown, [number]>(
    'INSERT INTO search_index (rowid, name, path, keywords, description, meta, scope) SELECT doc, name, path, keywords, description, meta, scope FROM media_search_documents WHERE id = ?',
  )

  /**
   * Writes the keywords `given` ({category: [keyword]}, checked and each listed once) of the
   * asset `id` of `kind`, as `how` says. Inside a transaction of its own (a savepoint in the
   * caller's): either all of it, the search_deferred row gone and the document rebuilt, or none.
   */
  return function writeKeywords(id: number, kind: MediaKind, given: Record<string, string[]>, how: KeywordWrite) {
    // Nothing to add and nothing to take away (an import without keywords, as the watcher's are).
    if (
      how !== 'all' &&
      (how === 'add' ? Object.values(given).every((names) => names.length === 0) : Object.keys(given).length === 0)
    )
      return
    const json = JSON.stringify(given)
    client.transaction(() => {
      defer.run(id)
      let changed = how === 'add' ? 0 : unlink.run(id, kind, how === 'all' ? null : json).changes
      addCategories.run(kind, json)
      addKeywords.run(kind, json)
      changed += link.run(id, kind, json).changes
      undefer.run(id)
      if (changed === 0) return
      dropDocument.run(id)
      addDocument.run(id)
    })()
  }
}
