-- The four fixed content types (src/db/schema.ts CONTENT_TYPE_IDS), as the SQLite catalogue's
-- migration 0001 seeds them. A row written with its id leaves the identity's sequence where it
-- was, so the sequence is set past them: a content type added later gets 5, never an id in use.
INSERT INTO "content_types" ("id", "name") VALUES (1, 'projectasset'), (2, 'audioasset'), (3, 'imageasset'), (4, 'videoasset');
--> statement-breakpoint
SELECT setval(pg_get_serial_sequence('"content_types"', 'id'), 4);
