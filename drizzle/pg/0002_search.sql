-- Search on PostgreSQL (src/modules/search/pg.ts; docs/api.md, Search): what migrations 0016,
-- 0021 and 0024 of the SQLite catalogue build with FTS5, built with PostgreSQL's full-text search
-- and pg_trgm, so that a search finds the same records on either engine.
--
-- Everything lives in the schema `search`, apart from the catalogue's tables (schema.pg.ts
-- describes the public schema, table for table): one row per media asset and per project in
-- search.docs, written by triggers on the tables a document is made of, in the transaction of
-- every write, whoever makes it; and the functions that make a document. The rows hold:
--   doc: the record's id * 4 + 0 video, 1 audio, 2 image, 3 project (the FTS5 rowid);
--   production, online, shared: what FTS5's `scope` column holds as words (p12, online or
--     offline, s12), the filters and who may read a hit, answered without reading the record;
--   tsv: the words, each column of the FTS5 document under a weight (name A; path and keywords B;
--     description with the markers' notes C; custom metadata with bext and iXML D);
--   tri_name, tri_path: the text of the FTS5 trigram index (0024), folded, for words found
--     inside other words.
--
-- Two extensions, both trusted since PostgreSQL 13 (a database's owner may create them):
-- unaccent folds accents as FTS5's `remove_diacritics` does, and pg_trgm indexes the trigram text
-- so that LIKE '%c003%' reads a few lists instead of every row. PostgreSQL 14 or later: some
-- functions below have a body in SQL's own form (RETURN expression).
CREATE EXTENSION IF NOT EXISTS unaccent;
--> statement-breakpoint
CREATE EXTENSION IF NOT EXISTS pg_trgm;
--> statement-breakpoint
CREATE SCHEMA search;
--> statement-breakpoint
-- One row per media asset and per project (see the top of this file).
CREATE TABLE search.docs (
  doc bigint PRIMARY KEY,
  production bigint NOT NULL,
  online boolean NOT NULL,
  shared bigint[] NOT NULL,
  tsv tsvector NOT NULL,
  tri_name text NOT NULL,
  tri_path text NOT NULL
);
--> statement-breakpoint
-- The text search configuration, the functions that split and fold text, and the trigram
-- index, written with the names found here:
-- - the collation letters are told and case is folded under: FTS5's tokenizer knows every
--   Unicode letter and digit, and so does ICU's root collation ("und-x-icu"); the catalogue's
--   text is COLLATE "C", under which [:alnum:] and lower() know ASCII only (Café would be split
--   at the é). A server built without ICU uses the database's own locale instead, which is right
--   for any UTF-8 locale and knows ASCII only under C.
-- - the schema unaccent and pg_trgm are in: where this migration created them, or where a
--   database administrator had put them before, so that no session's search_path decides.
-- No function here depends on the search_path of the session that writes: the body of a
-- function given as RETURN is resolved as it is created, a view's names as it is made, and the
-- PL/pgSQL functions name the schema `search` (search.link_changed, which reads search_deferred,
-- keeps the search_path this migration ran with). The functions that write documents are
-- PL/pgSQL so that a session plans their statements once: as SQL functions, each trigger's
-- firing planned the document's statement again, about 5 ms a row on a 2-core machine against
-- about 0.3 ms now.
DO $do$
DECLARE
  coll text := CASE WHEN EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu') THEN 'und-x-icu' ELSE 'default' END;
  ux text := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'unaccent');
  tg text := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm');
BEGIN
  -- Every word token through unaccent, then simple (which lowercases). The text given to it is
  -- split, folded and lowercased already (search.words), so that each token is a word FTS5 keeps.
  EXECUTE 'CREATE TEXT SEARCH CONFIGURATION search.rh (COPY = pg_catalog.simple)';
  EXECUTE format('ALTER TEXT SEARCH CONFIGURATION search.rh ALTER MAPPING FOR asciiword, word, numword, asciihword, hword, numhword, hword_asciipart, hword_part, hword_numpart WITH %I.unaccent, pg_catalog.simple', ux);
  -- A text split as FTS5's unicode61 tokenizer splits it, its words separated by spaces:
  -- composed first (NFC: a name from a Mac's file system comes decomposed), then cut at every
  -- character that is no letter or digit. PostgreSQL's own parser would keep '/srv/nas/x.mov'
  -- as one file token and 'a_b' as one word.
  EXECUTE format($f$CREATE FUNCTION search.split(t text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN regexp_replace(normalize(t, NFC) COLLATE %1$I, '[^[:alnum:]]+', ' ', 'g')$f$, coll);
  -- The words of a text as FTS5 keeps them: split, accents folded, then lowercased (the
  -- lowercase of İ is i followed by a combining dot, which a parser under a libc locale would
  -- split at; folded first, it is I, then i). Stable, as unaccent is (its rules are read from a
  -- file): the documents keep what it gave, and a server whose rules change rebuilds them as
  -- the end of this migration builds them. Declared immutable it would be no faster: PostgreSQL
  -- writes an SQL function's body into the statement that calls it only when the function is
  -- declared no less volatile than its body, and a call left as a call is planned again at
  -- every trigger's firing.
  EXECUTE format($f$CREATE FUNCTION search.words(t text) RETURNS text LANGUAGE sql STABLE STRICT PARALLEL SAFE
    RETURN lower(%1$I.unaccent(%3$L::regdictionary, search.split(t)) COLLATE %2$I)$f$,
    ux, coll, ux || '.unaccent');
  -- A text folded as FTS5's trigram tokenizer folds it (case and accents), for a LIKE on the
  -- trigram text: the same on the records' side (search.trigrams) and the words' (pg.ts).
  EXECUTE format($f$CREATE FUNCTION search.fold(t text) RETURNS text LANGUAGE sql STABLE STRICT PARALLEL SAFE
    RETURN lower(%1$I.unaccent(%3$L::regdictionary, normalize(t, NFC)) COLLATE %2$I)$f$,
    ux, coll, ux || '.unaccent');
  -- The trigram text, indexed for LIKE '%word%'.
  EXECUTE format('CREATE INDEX docs_trigrams ON search.docs USING gin (tri_name %1$I.gin_trgm_ops, tri_path %1$I.gin_trgm_ops)', tg);
END
$do$;
--> statement-breakpoint
CREATE INDEX docs_tsv ON search.docs USING gin (tsv);
--> statement-breakpoint
-- The trigram text of a name or path, as 0024's views make it and its tokenizer folds it: ASCII
-- letters lowercased, the first letter or digit of each word taken out (an ASCII letter or digit
-- preceded by nothing or by an ASCII character that is no letter or digit: `A001C003_R2KD.mov`
-- becomes `001c003_2kd.ov`), so that a word is found here only where it stands inside a word;
-- then case and accents folded.
CREATE FUNCTION search.trigrams(t text) RETURNS text LANGUAGE sql STABLE STRICT PARALLEL SAFE
  RETURN search.fold(regexp_replace(translate(t, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'),
    '(?<![^\x20-\x2f\x3a-\x40\x5b-\x60\x7b-\x7e])[0-9a-z]', '', 'g'));
--> statement-breakpoint
-- A JSON number as SQLite writes the value json_tree gives of it, so that a document holds the
-- same words: an integer of up to 64 bits as written; any other number as a double, with 15
-- significant digits, trailing zeros dropped but one (2.50 is 2.5, 100.0 is 100.0), in exponent
-- form below 1e-4 and from 1e17 on (1.0e+20, 1.2e-05); beyond a double's range, Inf. Where 15
-- digits do not give the double back SQLite writes 17 (3.1415926535897931); PostgreSQL's
-- shortest exact form stands in for those (3.141592653589793), a known difference.
CREATE FUNCTION search.sqlite_number(t text) RETURNS text LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  d double precision;
  n numeric;
  e integer;
  s text;
BEGIN
  IF t ~ '^-?[0-9]+$' THEN
    BEGIN
      RETURN t::bigint::text;
    EXCEPTION WHEN numeric_value_out_of_range THEN
      -- Beyond 64 bits SQLite reads an integer as a double too.
    END;
  END IF;
  BEGIN
    d := t::double precision;
  EXCEPTION WHEN numeric_value_out_of_range THEN
    RETURN CASE WHEN t LIKE '-%' THEN '-Inf' ELSE 'Inf' END;
  END;
  IF d = 0 THEN
    RETURN '0.0';
  END IF;
  -- A double as numeric has 15 significant digits (%.15g), SQLite's first try.
  n := d::numeric;
  BEGIN
    IF n::double precision <> d THEN
      RETURN d::text;
    END IF;
  EXCEPTION WHEN numeric_value_out_of_range THEN
    -- Rounded to 15 digits, the largest doubles pass the largest.
    RETURN d::text;
  END;
  e := floor(log(abs(n)));
  IF e < -4 OR e > 16 THEN
    -- Multiplied or divided by a whole power of ten: exact, where a negative power is rounded.
    s := trim_scale(CASE WHEN e < 0 THEN n * power(10::numeric, -e) ELSE n / power(10::numeric, e) END)::text;
    IF position('.' IN s) = 0 THEN
      s := s || '.0';
    END IF;
    RETURN s || 'e' || CASE WHEN e < 0 THEN '-' ELSE '+' END || CASE WHEN abs(e) < 10 THEN '0' ELSE '' END || abs(e)::text;
  END IF;
  s := trim_scale(n)::text;
  IF position('.' IN s) = 0 THEN
    s := s || '.0';
  END IF;
  RETURN s;
END
$$;
--> statement-breakpoint
-- The values of a JSON document as 0016's json_tree gives them: every string and number at any
-- depth (not keys, booleans or nulls), in the document's order, separated by spaces; '' when none.
CREATE FUNCTION search.json_text(j json) RETURNS text LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  kind text := json_typeof(j);
  member json;
  words text[] := '{}';
BEGIN
  IF kind = 'string' THEN
    RETURN j #>> '{}';
  ELSIF kind = 'number' THEN
    RETURN search.sqlite_number(j::text);
  ELSIF kind = 'object' THEN
    FOR member IN SELECT value FROM json_each(j) LOOP
      words := words || search.json_text(member);
    END LOOP;
  ELSIF kind = 'array' THEN
    FOR member IN SELECT value FROM json_array_elements(j) LOOP
      words := words || search.json_text(member);
    END LOOP;
  END IF;
  -- Members without a string or number give '' and leave no word: the spaces around them do not count.
  RETURN array_to_string(words, ' ');
END
$$;
--> statement-breakpoint
-- The string members of a JSON value as 0024's json_each(technical, '$.bext') gives them (an
-- object's values, an array's elements, or the string itself), separated by spaces; NULL when none.
CREATE FUNCTION search.json_strings(j json) RETURNS text LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  words text[];
BEGIN
  CASE json_typeof(j)
    WHEN 'string' THEN
      RETURN j #>> '{}';
    WHEN 'object' THEN
      words := ARRAY(SELECT value #>> '{}' FROM json_each(j) WHERE json_typeof(value) = 'string');
    WHEN 'array' THEN
      words := ARRAY(SELECT value #>> '{}' FROM json_array_elements(j) WHERE json_typeof(value) = 'string');
    ELSE
      RETURN NULL;
  END CASE;
  RETURN nullif(array_to_string(words, ' '), '');
END
$$;
--> statement-breakpoint
-- A document's words: each column of the FTS5 document under its weight, and a gap of one
-- position between two columns (a lexeme put there and deleted after: a space, which no word
-- holds), so that a phrase is found within a column only, as FTS5 finds it, never across the end
-- of the name and the start of the path.
CREATE FUNCTION search.document(name text, path text, keywords text, description text, meta text) RETURNS tsvector
  LANGUAGE sql STABLE PARALLEL SAFE
  RETURN ts_delete(
    setweight(to_tsvector('search.rh'::regconfig, coalesce(search.words(name), '')), 'A') || $gap$' ':1$gap$::tsvector
    || setweight(to_tsvector('search.rh'::regconfig, coalesce(search.words(path), '')), 'B') || $gap$' ':1$gap$::tsvector
    || setweight(to_tsvector('search.rh'::regconfig, coalesce(search.words(keywords), '')), 'B') || $gap$' ':1$gap$::tsvector
    || setweight(to_tsvector('search.rh'::regconfig, coalesce(search.words(description), '')), 'C') || $gap$' ':1$gap$::tsvector
    || setweight(to_tsvector('search.rh'::regconfig, coalesce(search.words(meta), '')), 'D'),
    ' ');
--> statement-breakpoint
-- Each media asset's document, said once, as 0024's media_search_documents says it: the name,
-- path_file, its keywords (category and keyword), the description and the notes of its markers,
-- custom metadata values and the text members of technical.bext and technical.ixml. Lists are
-- joined in the order SQLite's indexes give them (keywords by id, markers by time), so that the
-- words side by side are the same.
CREATE VIEW search.media_documents AS SELECT m.id AS id,
    m.id * 4 + (CASE m.kind WHEN 'video' THEN 0 WHEN 'audio' THEN 1 ELSE 2 END) AS doc,
    m.production AS production, m.is_production AS online,
    coalesce((SELECT array_agg(sh.production_id ORDER BY sh.production_id) FROM media_asset_shares sh WHERE sh.asset_id = m.id), '{}') AS shared,
    search.document(
      m.name,
      m.path_file,
      coalesce((SELECT string_agg(c.name || ' ' || k.name, ' ' ORDER BY k.id) FROM media_asset_keywords mk JOIN keywords k ON k.id = mk.keyword_id JOIN keyword_categories c ON c.id = k.category_id WHERE mk.asset_id = m.id), ''),
      m.description || coalesce((SELECT ' ' || string_agg(n.note, ' ' ORDER BY n.start_ms, n.id) FROM markers n WHERE n.asset_id = m.id), ''),
      search.json_text(m.meta_field_store) || coalesce(' ' || search.json_strings(m.technical -> 'bext'), '') || coalesce(' ' || search.json_strings(m.technical -> 'ixml'), '')
    ) AS tsv,
    search.trigrams(m.name) AS tri_name, search.trigrams(m.path_file) AS tri_path
  FROM media_assets m;
--> statement-breakpoint
-- Each project's, as 0016's project_search_documents: no keywords, no markers.
CREATE VIEW search.project_documents AS SELECT p.id AS id, p.id * 4 + 3 AS doc,
    p.production AS production, p.is_production AS online, '{}'::bigint[] AS shared,
    search.document(p.name, p.bundle_root || ' ' || p.path_file, '', p.description, search.json_text(p.meta_field_store)) AS tsv,
    search.trigrams(p.name) AS tri_name, search.trigrams(p.bundle_root || ' ' || p.path_file) AS tri_path
  FROM project_assets p;
--> statement-breakpoint
-- Writes a media asset's document again from what the tables hold now (none when the asset is
-- gone). The triggers call it; so may a writer of many keyword links or markers at once, which
-- lists the asset in search_deferred while it writes them, then calls this once (0021's way).
CREATE FUNCTION search.write_media(asset bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM search.docs WHERE doc BETWEEN asset * 4 AND asset * 4 + 2;
  INSERT INTO search.docs (doc, production, online, shared, tsv, tri_name, tri_path)
    SELECT doc, production, online, shared, tsv, tri_name, tri_path FROM search.media_documents WHERE id = asset;
END
$$;
--> statement-breakpoint
CREATE FUNCTION search.write_project(project bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM search.docs WHERE doc = project * 4 + 3;
  INSERT INTO search.docs (doc, production, online, shared, tsv, tri_name, tri_path)
    SELECT doc, production, online, shared, tsv, tri_name, tri_path FROM search.project_documents WHERE id = project;
END
$$;
--> statement-breakpoint
-- A media asset or project written, changed or deleted: its document (and one under its old id).
CREATE FUNCTION search.record_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' AND (TG_OP = 'DELETE' OR OLD.id IS DISTINCT FROM NEW.id) THEN
    IF TG_TABLE_NAME = 'media_assets' THEN
      PERFORM search.write_media(OLD.id);
    ELSE
      PERFORM search.write_project(OLD.id);
    END IF;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    IF TG_TABLE_NAME = 'media_assets' THEN
      PERFORM search.write_media(NEW.id);
    ELSE
      PERFORM search.write_project(NEW.id);
    END IF;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
-- A keyword link, a share or a marker written, changed or removed: the document of its asset (of
-- both, when it moved from one to another). With the argument 'deferrable', not while the asset
-- is listed in search_deferred (0021; markers as in 0024, a move skipped when either is listed).
-- A link removed with its asset (a cascade) finds no asset, and leaves no document.
CREATE FUNCTION search.link_changed() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
  old_asset bigint := CASE WHEN TG_OP <> 'INSERT' THEN OLD.asset_id END;
  new_asset bigint := CASE WHEN TG_OP <> 'DELETE' THEN NEW.asset_id END;
BEGIN
  IF TG_NARGS > 0 AND TG_ARGV[0] = 'deferrable'
    AND EXISTS (SELECT 1 FROM search_deferred WHERE asset_id IN (old_asset, new_asset)) THEN
    RETURN NULL;
  END IF;
  IF old_asset IS NOT NULL THEN
    PERFORM search.write_media(old_asset);
  END IF;
  IF new_asset IS NOT NULL AND new_asset IS DISTINCT FROM old_asset THEN
    PERFORM search.write_media(new_asset);
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
-- The triggers, one for each of SQLite's (0016, 0021, 0024): a media asset's document is written
-- again when a field it is made of changes (json compared as its text, as SQLite compares it;
-- technical only for its bext and iXML, an import's probe writes the rest), a project's likewise.
CREATE TRIGGER media_assets_search_insert AFTER INSERT ON media_assets
  FOR EACH ROW EXECUTE FUNCTION search.record_changed();
--> statement-breakpoint
CREATE TRIGGER media_assets_search_update AFTER UPDATE OF id, name, description, path_file, meta_field_store, technical, kind, production, is_production ON media_assets
  FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id OR OLD.name IS DISTINCT FROM NEW.name OR OLD.description IS DISTINCT FROM NEW.description
    OR OLD.path_file IS DISTINCT FROM NEW.path_file OR OLD.meta_field_store::text IS DISTINCT FROM NEW.meta_field_store::text
    OR OLD.kind IS DISTINCT FROM NEW.kind OR OLD.production IS DISTINCT FROM NEW.production OR OLD.is_production IS DISTINCT FROM NEW.is_production
    OR (OLD.technical -> 'bext')::text IS DISTINCT FROM (NEW.technical -> 'bext')::text
    OR (OLD.technical -> 'ixml')::text IS DISTINCT FROM (NEW.technical -> 'ixml')::text)
  EXECUTE FUNCTION search.record_changed();
--> statement-breakpoint
CREATE TRIGGER media_assets_search_delete AFTER DELETE ON media_assets
  FOR EACH ROW EXECUTE FUNCTION search.record_changed();
--> statement-breakpoint
CREATE TRIGGER project_assets_search_insert AFTER INSERT ON project_assets
  FOR EACH ROW EXECUTE FUNCTION search.record_changed();
--> statement-breakpoint
CREATE TRIGGER project_assets_search_update AFTER UPDATE OF id, name, description, bundle_root, path_file, meta_field_store, production, is_production ON project_assets
  FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id OR OLD.name IS DISTINCT FROM NEW.name OR OLD.description IS DISTINCT FROM NEW.description
    OR OLD.bundle_root IS DISTINCT FROM NEW.bundle_root OR OLD.path_file IS DISTINCT FROM NEW.path_file
    OR OLD.meta_field_store::text IS DISTINCT FROM NEW.meta_field_store::text
    OR OLD.production IS DISTINCT FROM NEW.production OR OLD.is_production IS DISTINCT FROM NEW.is_production)
  EXECUTE FUNCTION search.record_changed();
--> statement-breakpoint
CREATE TRIGGER project_assets_search_delete AFTER DELETE ON project_assets
  FOR EACH ROW EXECUTE FUNCTION search.record_changed();
--> statement-breakpoint
CREATE TRIGGER media_asset_keywords_search_insert AFTER INSERT ON media_asset_keywords
  FOR EACH ROW EXECUTE FUNCTION search.link_changed('deferrable');
--> statement-breakpoint
CREATE TRIGGER media_asset_keywords_search_delete AFTER DELETE ON media_asset_keywords
  FOR EACH ROW EXECUTE FUNCTION search.link_changed('deferrable');
--> statement-breakpoint
CREATE TRIGGER media_asset_shares_search_insert AFTER INSERT ON media_asset_shares
  FOR EACH ROW EXECUTE FUNCTION search.link_changed();
--> statement-breakpoint
CREATE TRIGGER media_asset_shares_search_delete AFTER DELETE ON media_asset_shares
  FOR EACH ROW EXECUTE FUNCTION search.link_changed();
--> statement-breakpoint
CREATE TRIGGER markers_search_insert AFTER INSERT ON markers
  FOR EACH ROW EXECUTE FUNCTION search.link_changed('deferrable');
--> statement-breakpoint
CREATE TRIGGER markers_search_update AFTER UPDATE OF note, asset_id ON markers
  FOR EACH ROW WHEN (OLD.note IS DISTINCT FROM NEW.note OR OLD.asset_id IS DISTINCT FROM NEW.asset_id)
  EXECUTE FUNCTION search.link_changed('deferrable');
--> statement-breakpoint
CREATE TRIGGER markers_search_delete AFTER DELETE ON markers
  FOR EACH ROW EXECUTE FUNCTION search.link_changed('deferrable');
--> statement-breakpoint
-- The records that exist already (a catalogue migrated with rows in it).
INSERT INTO search.docs (doc, production, online, shared, tsv, tri_name, tri_path)
  SELECT doc, production, online, shared, tsv, tri_name, tri_path FROM search.media_documents;
--> statement-breakpoint
INSERT INTO search.docs (doc, production, online, shared, tsv, tri_name, tri_path)
  SELECT doc, production, online, shared, tsv, tri_name, tri_path FROM search.project_documents;
