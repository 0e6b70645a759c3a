-- A keyword write rebuilds an asset's search document once, not once per link: each link's
-- trigger rebuilt the whole document, keywords included, so writing n links cost n² (1,000
-- keywords held the server for seconds). The keyword writer (src/modules/mediaassets/keywords.ts)
-- lists the asset in search_deferred, writes its links, removes it and rebuilds the document
-- once, in one transaction; the triggers skip an asset listed there. Every other writer of links
-- (a delete that cascades, a statement by hand) lists nothing, and its triggers keep the index as
-- before. A table of the main schema: its triggers cannot read a TEMP one.
CREATE TABLE `search_deferred` (
	`asset_id` integer PRIMARY KEY NOT NULL
);
--> statement-breakpoint
DROP TRIGGER `media_asset_keywords_search_insert`;
--> statement-breakpoint
DROP TRIGGER `media_asset_keywords_search_delete`;
--> statement-breakpoint
CREATE TRIGGER `media_asset_keywords_search_insert` AFTER INSERT ON `media_asset_keywords`
  WHEN NOT EXISTS (SELECT 1 FROM search_deferred WHERE asset_id = NEW.asset_id) BEGIN
  DELETE FROM search_index WHERE rowid = (SELECT doc FROM media_search_documents WHERE id = NEW.asset_id);
  INSERT INTO search_index(rowid, name, path, keywords, description, meta, scope) SELECT doc, name, path, keywords, description, meta, scope FROM media_search_documents WHERE id = NEW.asset_id;
END;
--> statement-breakpoint
CREATE TRIGGER `media_asset_keywords_search_delete` AFTER DELETE ON `media_asset_keywords`
  WHEN NOT EXISTS (SELECT 1 FROM search_deferred WHERE asset_id = OLD.asset_id) BEGIN
  DELETE FROM search_index WHERE rowid = (SELECT doc FROM media_search_documents WHERE id = OLD.asset_id);
  INSERT INTO search_index(rowid, name, path, keywords, description, meta, scope) SELECT doc, name, path, keywords, description, meta, scope FROM media_search_documents WHERE id = OLD.asset_id;
END;
