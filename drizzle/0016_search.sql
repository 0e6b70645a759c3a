-- The search index (GET /api/search/): one document per media asset (rowid id*4 + 0 video, 1 audio,
-- 2 image) and per project (id*4 + 3). Contentless: the text lives in the tables it comes from, the
-- index holds only the terms; rows are deleted by rowid (contentless_delete). unicode61 folds case
-- and, with remove_diacritics 2, accents (cafe finds Café), and splits at every character that is
-- no letter or digit (so a path at /, _, -, . and spaces). Prefix indexes of 2 and 3 characters keep
-- short prefixes (ha*, int*) from merging thousands of terms.
-- `scope` is not searched (queries name the other columns): it holds the record's production
-- (p12), the productions a media asset is shared with (s12) and online or offline, so that who may
-- read a hit and the filters are answered by the index alone, without reading each hit's record.
CREATE VIRTUAL TABLE `search_index` USING fts5(name, path, keywords, description, meta, scope, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2', prefix='2 3');
--> statement-breakpoint
-- bm25 with a name hit weighing most, then keywords, the file and folder names, the description, custom metadata.
INSERT INTO `search_index`(`search_index`, rank) VALUES ('rank', 'bm25(10.0, 4.0, 5.0, 2.0, 1.0, 0.0)');
--> statement-breakpoint
-- Each record's document, said once: the triggers below and the build at the end read it here.
CREATE VIEW `media_search_documents` AS SELECT m.id AS id, m.id * 4 + (CASE m.kind WHEN 'video' THEN 0 WHEN 'audio' THEN 1 ELSE 2 END) AS doc, m.name AS name, m.path_file AS path,
    coalesce((SELECT group_concat(c.name || ' ' || k.name, ' ') FROM media_asset_keywords mk JOIN keywords k ON k.id = mk.keyword_id JOIN keyword_categories c ON c.id = k.category_id WHERE mk.asset_id = m.id), '') AS keywords,
    m.description AS description,
    coalesce((SELECT group_concat(j.value, ' ') FROM json_tree(CASE WHEN json_valid(m.meta_field_store) THEN m.meta_field_store ELSE '{}' END) j WHERE j.type IN ('text', 'integer', 'real')), '') AS meta,
    'p' || m.production || ' ' || (CASE m.is_production WHEN 1 THEN 'online' ELSE 'offline' END) || coalesce((SELECT ' ' || group_concat('s' || sh.production_id, ' ') FROM media_asset_shares sh WHERE sh.asset_id = m.id), '') AS scope
  FROM media_assets m;
--> statement-breakpoint
CREATE VIEW `project_search_documents` AS SELECT p.id AS id, p.id * 4 + 3 AS doc, p.name AS name, p.bundle_root || ' ' || p.path_file AS path, '' AS keywords,
    p.description AS description,
    coalesce((SELECT group_concat(j.value, ' ') FROM json_tree(CASE WHEN json_valid(p.meta_field_store) THEN p.meta_field_store ELSE '{}' END) j WHERE j.type IN ('text', 'integer', 'real')), '') AS meta,
    'p' || p.production || ' ' || (CASE p.is_production WHEN 1 THEN 'online' ELSE 'offline' END) AS scope
  FROM project_assets p;
--> statement-breakpoint
-- Kept in step by triggers, in the transaction of every write, whoever makes it (API, CLI, import, watcher).
CREATE TRIGGER `media_assets_search_insert` AFTER INSERT ON `media_assets` BEGIN
  INSERT INTO search_index(rowid, name, path, keywords, description, meta, scope) SELECT doc, name, path, keywords, description, meta, scope FROM media_search_documents WHERE id = NEW.id;
END;
--> statement-breakpoint
CREATE TRIGGER `media_assets_search_update` AFTER UPDATE OF name, description, path_file, meta_field_store, kind, production, is_production ON `media_assets`
  WHEN OLD.name IS NOT NEW.name OR OLD.description IS NOT NEW.description OR OLD.path_file IS NOT NEW.path_file OR OLD.meta_field_store IS NOT NEW.meta_field_store OR OLD.kind IS NOT NEW.kind OR OLD.production IS NOT NEW.production OR OLD.is_production IS NOT NEW.is_production BEGIN
  DELETE FROM search_index WHERE rowid = OLD.id * 4 + (CASE OLD.kind WHEN 'video' THEN 0 WHEN 'audio' THEN 1 ELSE 2 END);
  INSERT INTO search_index(rowid, name, path, keywords, description, meta, scope) SELECT doc, name, path, keywords, description, meta, scope FROM media_search_documents WHERE id = NEW.id;
END;
--> statement-breakpoint
CREATE TRIGGER `media_assets_search_delete` AFTER DELETE ON `media_assets` BEGIN
  DELETE FROM search_index WHERE rowid = OLD.id * 4 + (CASE OLD.kind WHEN 'video' THEN 0 WHEN 'audio' THEN 1 ELSE 2 END);
END;
--> statement-breakpoint
CREATE TRIGGER `media_asset_keywords_search_insert` AFTER INSERT ON `media_asset_keywords` BEGIN
  DELETE FROM search_index WHERE rowid = (SELECT doc FROM media_search_documents WHERE id = NEW.asset_id);
  INSERT INTO search_index(rowid, name, path, keywords, description, meta, scope) SELECT doc, name, path, keywords, description, meta, scope FROM media_search_documents WHERE id = NEW.asset_id;
END;
--> statement-breakpoint
CREATE TRIGGER `media_asset_keywords_search_delete` AFTER DELETE ON `media_asset_keywords` BEGIN
  DELETE FROM search_index WHERE rowid = (SELECT doc FROM media_search_documents WHERE id = OLD.asset_id);
  INSERT INTO search_index(rowid, name, path, keywords, description, meta, scope) SELECT doc, name, path, keywords, description, meta, scope FROM media_search_documents WHERE id = OLD.asset_id;
END;
--> statement-breakpoint
CREATE TRIGGER `media_asset_shares_search_insert` AFTER INSERT ON `media_asset_shares` BEGIN
  DELETE FROM search_index WHERE rowid = (SELECT doc FROM media_search_documents WHERE id = NEW.asset_id);
  INSERT INTO search_index(rowid, name, path, keywords, description, meta, scope) SELECT doc, name, path, keywords, description, meta, scope FROM media_search_documents WHERE id = NEW.asset_id;
END;
--> statement-breakpoint
CREATE TRIGGER `media_asset_shares_search_delete` AFTER DELETE ON `media_asset_shares` BEGIN
  DELETE FROM search_index WHERE rowid = (SELECT doc FROM media_search_documents WHERE id = OLD.asset_id);
  INSERT INTO search_index(rowid, name, path, keywords, description, meta, scope) SELECT doc, name, path, keywords, description, meta, scope FROM media_search_documents WHERE id = OLD.asset_id;
END;
--> statement-breakpoint
CREATE TRIGGER `project_assets_search_insert` AFTER INSERT ON `project_assets` BEGIN
  INSERT INTO search_index(rowid, name, path, keywords, description, meta, scope) SELECT doc, name, path, keywords, description, meta, scope FROM project_search_documents WHERE id = NEW.id;
END;
--> statement-breakpoint
CREATE TRIGGER `project_assets_search_update` AFTER UPDATE OF name, description, bundle_root, path_file, meta_field_store, production, is_production ON `project_assets`
  WHEN OLD.name IS NOT NEW.name OR OLD.description IS NOT NEW.description OR OLD.bundle_root IS NOT NEW.bundle_root OR OLD.path_file IS NOT NEW.path_file OR OLD.meta_field_store IS NOT NEW.meta_field_store OR OLD.production IS NOT NEW.production OR OLD.is_production IS NOT NEW.is_production BEGIN
  DELETE FROM search_index WHERE rowid = OLD.id * 4 + 3;
  INSERT INTO search_index(rowid, name, path, keywords, description, meta, scope) SELECT doc, name, path, keywords, description, meta, scope FROM project_search_documents WHERE id = NEW.id;
END;
--> statement-breakpoint
CREATE TRIGGER `project_assets_search_delete` AFTER DELETE ON `project_assets` BEGIN
  DELETE FROM search_index WHERE rowid = OLD.id * 4 + 3;
END;
--> statement-breakpoint
-- The records that exist already.
INSERT INTO search_index(rowid, name, path, keywords, description, meta, scope) SELECT doc, name, path, keywords, description, meta, scope FROM media_search_documents;
--> statement-breakpoint
INSERT INTO search_index(rowid, name, path, keywords, description, meta, scope) SELECT doc, name, path, keywords, description, meta, scope FROM project_search_documents;
