-- Search that finds what editors type (docs/api.md, Search).
--
-- 1. Part of a word: `C003` finds `A001C003`. A trigram index of the names and paths beside the
-- word index (0016), rowids as there (id * 4 + 0 video, 1 audio, 2 image, 3 project), contentless
-- as it is. The word index finds a word where a word starts; this one holds only what it cannot
-- find: each name and path lowercased, with the first letter or digit of each of its words taken
-- out (`A001C003_R2KD.mov` is held as `001c003_2kd.ov`), so that a typed word is found here only
-- where it stands inside a word. A word most records hold as a word of its own (`interview`,
-- `mov`) is then seldom here at all, and looking for it costs a few short lists, not a walk of
-- its hits again (src/modules/search/service.ts insideOf). Words are split at every ASCII
-- character that is no letter or digit, as the word index splits them; after another character
-- (a typographic dash) a word keeps its first letter, which only makes a look find one more
-- candidate that the word index already has. Case and accents are folded by the tokenizer.
CREATE VIRTUAL TABLE `search_index_trigram` USING fts5(name, path, content='', contentless_delete=1, tokenize='trigram remove_diacritics 1');
--> statement-breakpoint
-- Each record's trigram text, said once: the triggers below and the build at the end read it here.
-- The nested replace() puts a mark (char(1)) at the start and after each ASCII character that is
-- no letter or digit, takes out each mark with the letter or digit after it, then the marks left.
CREATE VIEW `media_search_trigrams` AS SELECT m.id AS id, m.id * 4 + (CASE m.kind WHEN 'video' THEN 0 WHEN 'audio' THEN 1 ELSE 2 END) AS doc,
    replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(char(1) || lower(m.name), ' ', ' ' || char(1)), '!', '!' || char(1)), '"', '"' || char(1)), '#', '#' || char(1)), '$', '$' || char(1)), '%', '%' || char(1)), '&', '&' || char(1)), '''', '''' || char(1)), '(', '(' || char(1)), ')', ')' || char(1)), '*', '*' || char(1)), '+', '+' || char(1)), ',', ',' || char(1)), '-', '-' || char(1)), '.', '.' || char(1)), '/', '/' || char(1)), ':', ':' || char(1)), ';', ';' || char(1)), '<', '<' || char(1)), '=', '=' || char(1)), '>', '>' || char(1)), '?', '?' || char(1)), '@', '@' || char(1)), '[', '[' || char(1)), '\', '\' || char(1)), ']', ']' || char(1)), '^', '^' || char(1)), '_', '_' || char(1)), '`', '`' || char(1)), '{', '{' || char(1)), '|', '|' || char(1)), '}', '}' || char(1)), '~', '~' || char(1)), char(1) || '0', ''), char(1) || '1', ''), char(1) || '2', ''), char(1) || '3', ''), char(1) || '4', ''), char(1) || '5', ''), char(1) || '6', ''), char(1) || '7', ''), char(1) || '8', ''), char(1) || '9', ''), char(1) || 'a', ''), char(1) || 'b', ''), char(1) || 'c', ''), char(1) || 'd', ''), char(1) || 'e', ''), char(1) || 'f', ''), char(1) || 'g', ''), char(1) || 'h', ''), char(1) || 'i', ''), char(1) || 'j', ''), char(1) || 'k', ''), char(1) || 'l', ''), char(1) || 'm', ''), char(1) || 'n', ''), char(1) || 'o', ''), char(1) || 'p', ''), char(1) || 'q', ''), char(1) || 'r', ''), char(1) || 's', ''), char(1) || 't', ''), char(1) || 'u', ''), char(1) || 'v', ''), char(1) || 'w', ''), char(1) || 'x', ''), char(1) || 'y', ''), char(1) || 'z', ''), char(1), '') AS name,
    replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(char(1) || lower(m.path_file), ' ', ' ' || char(1)), '!', '!' || char(1)), '"', '"' || char(1)), '#', '#' || char(1)), '$', '$' || char(1)), '%', '%' || char(1)), '&', '&' || char(1)), '''', '''' || char(1)), '(', '(' || char(1)), ')', ')' || char(1)), '*', '*' || char(1)), '+', '+' || char(1)), ',', ',' || char(1)), '-', '-' || char(1)), '.', '.' || char(1)), '/', '/' || char(1)), ':', ':' || char(1)), ';', ';' || char(1)), '<', '<' || char(1)), '=', '=' || char(1)), '>', '>' || char(1)), '?', '?' || char(1)), '@', '@' || char(1)), '[', '[' || char(1)), '\', '\' || char(1)), ']', ']' || char(1)), '^', '^' || char(1)), '_', '_' || char(1)), '`', '`' || char(1)), '{', '{' || char(1)), '|', '|' || char(1)), '}', '}' || char(1)), '~', '~' || char(1)), char(1) || '0', ''), char(1) || '1', ''), char(1) || '2', ''), char(1) || '3', ''), char(1) || '4', ''), char(1) || '5', ''), char(1) || '6', ''), char(1) || '7', ''), char(1) || '8', ''), char(1) || '9', ''), char(1) || 'a', ''), char(1) || 'b', ''), char(1) || 'c', ''), char(1) || 'd', ''), char(1) || 'e', ''), char(1) || 'f', ''), char(1) || 'g', ''), char(1) || 'h', ''), char(1) || 'i', ''), char(1) || 'j', ''), char(1) || 'k', ''), char(1) || 'l', ''), char(1) || 'm', ''), char(1) || 'n', ''), char(1) || 'o', ''), char(1) || 'p', ''), char(1) || 'q', ''), char(1) || 'r', ''), char(1) || 's', ''), char(1) || 't', ''), char(1) || 'u', ''), char(1) || 'v', ''), char(1) || 'w', ''), char(1) || 'x', ''), char(1) || 'y', ''), char(1) || 'z', ''), char(1), '') AS path
  FROM media_assets m;
--> statement-breakpoint
CREATE VIEW `project_search_trigrams` AS SELECT p.id AS id, p.id * 4 + 3 AS doc,
    replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(char(1) || lower(p.name), ' ', ' ' || char(1)), '!', '!' || char(1)), '"', '"' || char(1)), '#', '#' || char(1)), '$', '$' || char(1)), '%', '%' || char(1)), '&', '&' || char(1)), '''', '''' || char(1)), '(', '(' || char(1)), ')', ')' || char(1)), '*', '*' || char(1)), '+', '+' || char(1)), ',', ',' || char(1)), '-', '-' || char(1)), '.', '.' || char(1)), '/', '/' || char(1)), ':', ':' || char(1)), ';', ';' || char(1)), '<', '<' || char(1)), '=', '=' || char(1)), '>', '>' || char(1)), '?', '?' || char(1)), '@', '@' || char(1)), '[', '[' || char(1)), '\', '\' || char(1)), ']', ']' || char(1)), '^', '^' || char(1)), '_', '_' || char(1)), '`', '`' || char(1)), '{', '{' || char(1)), '|', '|' || char(1)), '}', '}' || char(1)), '~', '~' || char(1)), char(1) || '0', ''), char(1) || '1', ''), char(1) || '2', ''), char(1) || '3', ''), char(1) || '4', ''), char(1) || '5', ''), char(1) || '6', ''), char(1) || '7', ''), char(1) || '8', ''), char(1) || '9', ''), char(1) || 'a', ''), char(1) || 'b', ''), char(1) || 'c', ''), char(1) || 'd', ''), char(1) || 'e', ''), char(1) || 'f', ''), char(1) || 'g', ''), char(1) || 'h', ''), char(1) || 'i', ''), char(1) || 'j', ''), char(1) || 'k', ''), char(1) || 'l', ''), char(1) || 'm', ''), char(1) || 'n', ''), char(1) || 'o', ''), char(1) || 'p', ''), char(1) || 'q', ''), char(1) || 'r', ''), char(1) || 's', ''), char(1) || 't', ''), char(1) || 'u', ''), char(1) || 'v', ''), char(1) || 'w', ''), char(1) || 'x', ''), char(1) || 'y', ''), char(1) || 'z', ''), char(1), '') AS name,
    replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(char(1) || lower(p.bundle_root || ' ' || p.path_file), ' ', ' ' || char(1)), '!', '!' || char(1)), '"', '"' || char(1)), '#', '#' || char(1)), '$', '$' || char(1)), '%', '%' || char(1)), '&', '&' || char(1)), '''', '''' || char(1)), '(', '(' || char(1)), ')', ')' || char(1)), '*', '*' || char(1)), '+', '+' || char(1)), ',', ',' || char(1)), '-', '-' || char(1)), '.', '.' || char(1)), '/', '/' || char(1)), ':', ':' || char(1)), ';', ';' || char(1)), '<', '<' || char(1)), '=', '=' || char(1)), '>', '>' || char(1)), '?', '?' || char(1)), '@', '@' || char(1)), '[', '[' || char(1)), '\', '\' || char(1)), ']', ']' || char(1)), '^', '^' || char(1)), '_', '_' || char(1)), '`', '`' || char(1)), '{', '{' || char(1)), '|', '|' || char(1)), '}', '}' || char(1)), '~', '~' || char(1)), char(1) || '0', ''), char(1) || '1', ''), char(1) || '2', ''), char(1) || '3', ''), char(1) || '4', ''), char(1) || '5', ''), char(1) || '6', ''), char(1) || '7', ''), char(1) || '8', ''), char(1) || '9', ''), char(1) || 'a', ''), char(1) || 'b', ''), char(1) || 'c', ''), char(1) || 'd', ''), char(1) || 'e', ''), char(1) || 'f', ''), char(1) || 'g', ''), char(1) || 'h', ''), char(1) || 'i', ''), char(1) || 'j', ''), char(1) || 'k', ''), char(1) || 'l', ''), char(1) || 'm', ''), char(1) || 'n', ''), char(1) || 'o', ''), char(1) || 'p', ''), char(1) || 'q', ''), char(1) || 'r', ''), char(1) || 's', ''), char(1) || 't', ''), char(1) || 'u', ''), char(1) || 'v', ''), char(1) || 'w', ''), char(1) || 'x', ''), char(1) || 'y', ''), char(1) || 'z', ''), char(1), '') AS path
  FROM project_assets p;
--> statement-breakpoint
CREATE TRIGGER `media_assets_search_trigram_insert` AFTER INSERT ON `media_assets` BEGIN
  INSERT INTO search_index_trigram(rowid, name, path) SELECT doc, name, path FROM media_search_trigrams WHERE id = NEW.id;
END;
--> statement-breakpoint
CREATE TRIGGER `media_assets_search_trigram_update` AFTER UPDATE OF name, path_file, kind ON `media_assets`
  WHEN OLD.name IS NOT NEW.name OR OLD.path_file IS NOT NEW.path_file OR OLD.kind IS NOT NEW.kind BEGIN
  DELETE FROM search_index_trigram WHERE rowid = OLD.id * 4 + (CASE OLD.kind WHEN 'video' THEN 0 WHEN 'audio' THEN 1 ELSE 2 END);
  INSERT INTO search_index_trigram(rowid, name, path) SELECT doc, name, path FROM media_search_trigrams WHERE id = NEW.id;
END;
--> statement-breakpoint
CREATE TRIGGER `media_assets_search_trigram_delete` AFTER DELETE ON `media_assets` BEGIN
  DELETE FROM search_index_trigram WHERE rowid = OLD.id * 4 + (CASE OLD.kind WHEN 'video' THEN 0 WHEN 'audio' THEN 1 ELSE 2 END);
END;
--> statement-breakpoint
CREATE TRIGGER `project_assets_search_trigram_insert` AFTER INSERT ON `project_assets` BEGIN
  INSERT INTO search_index_trigram(rowid, name, path) SELECT doc, name, path FROM project_search_trigrams WHERE id = NEW.id;
END;
--> statement-breakpoint
CREATE TRIGGER `project_assets_search_trigram_update` AFTER UPDATE OF name, bundle_root, path_file ON `project_assets`
  WHEN OLD.name IS NOT NEW.name OR OLD.bundle_root IS NOT NEW.bundle_root OR OLD.path_file IS NOT NEW.path_file BEGIN
  DELETE FROM search_index_trigram WHERE rowid = OLD.id * 4 + 3;
  INSERT INTO search_index_trigram(rowid, name, path) SELECT doc, name, path FROM project_search_trigrams WHERE id = NEW.id;
END;
--> statement-breakpoint
CREATE TRIGGER `project_assets_search_trigram_delete` AFTER DELETE ON `project_assets` BEGIN
  DELETE FROM search_index_trigram WHERE rowid = OLD.id * 4 + 3;
END;
--> statement-breakpoint
-- The records that exist already.
INSERT INTO search_index_trigram(rowid, name, path) SELECT doc, name, path FROM media_search_trigrams;
--> statement-breakpoint
INSERT INTO search_index_trigram(rowid, name, path) SELECT doc, name, path FROM project_search_trigrams;
--> statement-breakpoint
-- 2. A media asset's document (0016) also holds the notes of its markers, beside its description,
-- and the words of a broadcast WAV's bext and iXML (technical.bext, technical.ixml: their text
-- members, docs/media.md), beside its custom metadata.
DROP VIEW `media_search_documents`;
--> statement-breakpoint
CREATE VIEW `media_search_documents` AS SELECT m.id AS id, m.id * 4 + (CASE m.kind WHEN 'video' THEN 0 WHEN 'audio' THEN 1 ELSE 2 END) AS doc, m.name AS name, m.path_file AS path,
    coalesce((SELECT group_concat(c.name || ' ' || k.name, ' ') FROM media_asset_keywords mk JOIN keywords k ON k.id = mk.keyword_id JOIN keyword_categories c ON c.id = k.category_id WHERE mk.asset_id = m.id), '') AS keywords,
    m.description || coalesce((SELECT ' ' || group_concat(n.note, ' ') FROM markers n WHERE n.asset_id = m.id), '') AS description,
    coalesce((SELECT group_concat(j.value, ' ') FROM json_tree(CASE WHEN json_valid(m.meta_field_store) THEN m.meta_field_store ELSE '{}' END) j WHERE j.type IN ('text', 'integer', 'real')), '')
      || coalesce((SELECT ' ' || group_concat(t.value, ' ') FROM json_each(CASE WHEN json_valid(m.technical) THEN m.technical ELSE '{}' END, '$.bext') t WHERE t.type = 'text'), '')
      || coalesce((SELECT ' ' || group_concat(t.value, ' ') FROM json_each(CASE WHEN json_valid(m.technical) THEN m.technical ELSE '{}' END, '$.ixml') t WHERE t.type = 'text'), '') AS meta,
    'p' || m.production || ' ' || (CASE m.is_production WHEN 1 THEN 'online' ELSE 'offline' END) || coalesce((SELECT ' ' || group_concat('s' || sh.production_id, ' ') FROM media_asset_shares sh WHERE sh.asset_id = m.id), '') AS scope
  FROM media_assets m;
--> statement-breakpoint
-- The document is written again when the bext or iXML of `technical` changes (an import's probe), not for its other members.
DROP TRIGGER `media_assets_search_update`;
--> statement-breakpoint
CREATE TRIGGER `media_assets_search_update` AFTER UPDATE OF name, description, path_file, meta_field_store, technical, kind, production, is_production ON `media_assets`
  WHEN OLD.name IS NOT NEW.name OR OLD.description IS NOT NEW.description OR OLD.path_file IS NOT NEW.path_file OR OLD.meta_field_store IS NOT NEW.meta_field_store OR OLD.kind IS NOT NEW.kind OR OLD.production IS NOT NEW.production OR OLD.is_production IS NOT NEW.is_production
    OR json_extract(OLD.technical, '$.bext') IS NOT json_extract(NEW.technical, '$.bext') OR json_extract(OLD.technical, '$.ixml') IS NOT json_extract(NEW.technical, '$.ixml') BEGIN
  DELETE FROM search_index WHERE rowid = OLD.id * 4 + (CASE OLD.kind WHEN 'video' THEN 0 WHEN 'audio' THEN 1 ELSE 2 END);
  INSERT INTO search_index(rowid, name, path, keywords, description, meta, scope) SELECT doc, name, path, keywords, description, meta, scope FROM media_search_documents WHERE id = NEW.id;
END;
--> statement-breakpoint
-- A marker's note written, changed or removed writes its asset's document again; as with keywords
-- (0021), a writer of many markers at once may list the asset in search_deferred and write the
-- document once at the end. A marker removed with its asset (a cascade) finds no document to write.
CREATE TRIGGER `markers_search_insert` AFTER INSERT ON `markers`
  WHEN NOT EXISTS (SELECT 1 FROM search_deferred WHERE asset_id = NEW.asset_id) BEGIN
  DELETE FROM search_index WHERE rowid = (SELECT doc FROM media_search_documents WHERE id = NEW.asset_id);
  INSERT INTO search_index(rowid, name, path, keywords, description, meta, scope) SELECT doc, name, path, keywords, description, meta, scope FROM media_search_documents WHERE id = NEW.asset_id;
END;
--> statement-breakpoint
CREATE TRIGGER `markers_search_update` AFTER UPDATE OF note, asset_id ON `markers`
  WHEN (OLD.note IS NOT NEW.note OR OLD.asset_id IS NOT NEW.asset_id) AND NOT EXISTS (SELECT 1 FROM search_deferred WHERE asset_id IN (OLD.asset_id, NEW.asset_id)) BEGIN
  DELETE FROM search_index WHERE rowid = (SELECT doc FROM media_search_documents WHERE id = OLD.asset_id);
  INSERT INTO search_index(rowid, name, path, keywords, description, meta, scope) SELECT doc, name, path, keywords, description, meta, scope FROM media_search_documents WHERE id = OLD.asset_id;
  DELETE FROM search_index WHERE rowid = (SELECT doc FROM media_search_documents WHERE id = NEW.asset_id);
  INSERT INTO search_index(rowid, name, path, keywords, description, meta, scope) SELECT doc, name, path, keywords, description, meta, scope FROM media_search_documents WHERE id = NEW.asset_id;
END;
--> statement-breakpoint
CREATE TRIGGER `markers_search_delete` AFTER DELETE ON `markers`
  WHEN NOT EXISTS (SELECT 1 FROM search_deferred WHERE asset_id = OLD.asset_id) BEGIN
  DELETE FROM search_index WHERE rowid = (SELECT doc FROM media_search_documents WHERE id = OLD.asset_id);
  INSERT INTO search_index(rowid, name, path, keywords, description, meta, scope) SELECT doc, name, path, keywords, description, meta, scope FROM media_search_documents WHERE id = OLD.asset_id;
END;
--> statement-breakpoint
-- The documents that hold more now: assets with markers, or with a bext or iXML.
DELETE FROM search_index WHERE rowid IN (SELECT doc FROM media_search_documents WHERE id IN (SELECT asset_id FROM markers UNION SELECT id FROM media_assets WHERE json_extract(technical, '$.bext') IS NOT NULL OR json_extract(technical, '$.ixml') IS NOT NULL));
--> statement-breakpoint
INSERT INTO search_index(rowid, name, path, keywords, description, meta, scope) SELECT doc, name, path, keywords, description, meta, scope FROM media_search_documents WHERE id IN (SELECT asset_id FROM markers UNION SELECT id FROM media_assets WHERE json_extract(technical, '$.bext') IS NOT NULL OR json_extract(technical, '$.ixml') IS NOT NULL);
--> statement-breakpoint
-- 3. The media lists' orders (name, case folded; date_add) and technical facets (codec, width,
-- height, fps, duration, timecode, audio channels: src/db/facets.ts, which says each expression
-- once), per kind: led by the order or the facet, then id and the columns the lists filter on, so
-- that an ordered or filtered first page, and its count, read an index in order.
CREATE INDEX `media_assets_audio_name` ON `media_assets` ("name" COLLATE NOCASE,`id`,`production`,`is_archive`,`is_production`,`device`,`approval`) WHERE kind = 'audio';
--> statement-breakpoint
CREATE INDEX `media_assets_audio_date_add` ON `media_assets` (`date_add`,`id`,`production`,`is_archive`,`is_production`,`device`,`approval`) WHERE kind = 'audio';
--> statement-breakpoint
CREATE INDEX `media_assets_image_name` ON `media_assets` ("name" COLLATE NOCASE,`id`,`production`,`is_archive`,`is_production`,`device`,`approval`) WHERE kind = 'image';
--> statement-breakpoint
CREATE INDEX `media_assets_image_date_add` ON `media_assets` (`date_add`,`id`,`production`,`is_archive`,`is_production`,`device`,`approval`) WHERE kind = 'image';
--> statement-breakpoint
CREATE INDEX `media_assets_video_name` ON `media_assets` ("name" COLLATE NOCASE,`id`,`production`,`is_archive`,`is_production`,`device`,`approval`) WHERE kind = 'video';
--> statement-breakpoint
CREATE INDEX `media_assets_video_date_add` ON `media_assets` (`date_add`,`id`,`production`,`is_archive`,`is_production`,`device`,`approval`) WHERE kind = 'video';
--> statement-breakpoint
CREATE INDEX `media_assets_audio_codec` ON `media_assets` (json_extract("technical", '$.audio_streams[0].codec'), `id`, `production`, `is_archive`, `is_production`, `device`, `approval`, `kind`) WHERE kind = 'audio';
--> statement-breakpoint
CREATE INDEX `media_assets_audio_duration` ON `media_assets` (CAST(json_extract("technical", '$.duration') AS REAL), `id`, `production`, `is_archive`, `is_production`, `device`, `approval`, `kind`) WHERE kind = 'audio';
--> statement-breakpoint
CREATE INDEX `media_assets_audio_timecode` ON `media_assets` (replace(replace(replace(json_extract("technical", '$.time_code'), ';', ':'), '.', ':'), ',', ':'), `id`, `production`, `is_archive`, `is_production`, `device`, `approval`, `kind`) WHERE kind = 'audio';
--> statement-breakpoint
CREATE INDEX `media_assets_audio_channels` ON `media_assets` (nullif(coalesce(json_extract("technical", '$.audio_streams[0].channels'), 0) + coalesce(json_extract("technical", '$.audio_streams[1].channels'), 0) + coalesce(json_extract("technical", '$.audio_streams[2].channels'), 0) + coalesce(json_extract("technical", '$.audio_streams[3].channels'), 0) + coalesce(json_extract("technical", '$.audio_streams[4].channels'), 0) + coalesce(json_extract("technical", '$.audio_streams[5].channels'), 0) + coalesce(json_extract("technical", '$.audio_streams[6].channels'), 0) + coalesce(json_extract("technical", '$.audio_streams[7].channels'), 0), 0), `id`, `production`, `is_archive`, `is_production`, `device`, `approval`, `kind`) WHERE kind = 'audio';
--> statement-breakpoint
CREATE INDEX `media_assets_image_codec` ON `media_assets` (json_extract("technical", '$.format'), `id`, `production`, `is_archive`, `is_production`, `device`, `approval`, `kind`) WHERE kind = 'image';
--> statement-breakpoint
CREATE INDEX `media_assets_image_width_height` ON `media_assets` (json_extract("technical", '$.width'), json_extract("technical", '$.height'), `id`, `production`, `is_archive`, `is_production`, `device`, `approval`, `kind`) WHERE kind = 'image';
--> statement-breakpoint
CREATE INDEX `media_assets_image_height` ON `media_assets` (json_extract("technical", '$.height'), `id`, `production`, `is_archive`, `is_production`, `device`, `approval`, `kind`) WHERE kind = 'image';
--> statement-breakpoint
CREATE INDEX `media_assets_video_codec` ON `media_assets` (json_extract("technical", '$.video_codec'), `id`, `production`, `is_archive`, `is_production`, `device`, `approval`, `kind`) WHERE kind = 'video';
--> statement-breakpoint
CREATE INDEX `media_assets_video_width_height` ON `media_assets` (json_extract("technical", '$.width'), json_extract("technical", '$.height'), `id`, `production`, `is_archive`, `is_production`, `device`, `approval`, `kind`) WHERE kind = 'video';
--> statement-breakpoint
CREATE INDEX `media_assets_video_height` ON `media_assets` (json_extract("technical", '$.height'), `id`, `production`, `is_archive`, `is_production`, `device`, `approval`, `kind`) WHERE kind = 'video';
--> statement-breakpoint
CREATE INDEX `media_assets_video_fps` ON `media_assets` ((CASE WHEN instr(json_extract("technical", '$.fps'), '/') > 0 THEN CAST(substr(json_extract("technical", '$.fps'), 1, instr(json_extract("technical", '$.fps'), '/') - 1) AS REAL) / CAST(substr(json_extract("technical", '$.fps'), instr(json_extract("technical", '$.fps'), '/') + 1) AS REAL) ELSE CAST(json_extract("technical", '$.fps') AS REAL) END), `id`, `production`, `is_archive`, `is_production`, `device`, `approval`, `kind`) WHERE kind = 'video';
--> statement-breakpoint
CREATE INDEX `media_assets_video_duration` ON `media_assets` ((json_extract("technical", '$.duration') / (CASE WHEN instr(json_extract("technical", '$.fps'), '/') > 0 THEN CAST(substr(json_extract("technical", '$.fps'), 1, instr(json_extract("technical", '$.fps'), '/') - 1) AS REAL) / CAST(substr(json_extract("technical", '$.fps'), instr(json_extract("technical", '$.fps'), '/') + 1) AS REAL) ELSE CAST(json_extract("technical", '$.fps') AS REAL) END)), `id`, `production`, `is_archive`, `is_production`, `device`, `approval`, `kind`) WHERE kind = 'video';
--> statement-breakpoint
CREATE INDEX `media_assets_video_timecode` ON `media_assets` (replace(replace(replace(json_extract("technical", '$.offset_string'), ';', ':'), '.', ':'), ',', ':'), `id`, `production`, `is_archive`, `is_production`, `device`, `approval`, `kind`) WHERE kind = 'video';
--> statement-breakpoint
CREATE INDEX `media_assets_video_channels` ON `media_assets` (nullif(coalesce(json_extract("technical", '$.audio_streams[0].channels'), 0) + coalesce(json_extract("technical", '$.audio_streams[1].channels'), 0) + coalesce(json_extract("technical", '$.audio_streams[2].channels'), 0) + coalesce(json_extract("technical", '$.audio_streams[3].channels'), 0) + coalesce(json_extract("technical", '$.audio_streams[4].channels'), 0) + coalesce(json_extract("technical", '$.audio_streams[5].channels'), 0) + coalesce(json_extract("technical", '$.audio_streams[6].channels'), 0) + coalesce(json_extract("technical", '$.audio_streams[7].channels'), 0), 0), `id`, `production`, `is_archive`, `is_production`, `device`, `approval`, `kind`) WHERE kind = 'video';
