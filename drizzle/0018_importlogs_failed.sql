-- Import logs failed first (GET /api/importlogs/?ordering=-failed, the web page's toggle): a log
-- failed when its error is not empty. The expression is spelled as the list's ORDER BY spells it,
-- so that SQLite reads pages of that order from an index (unfiltered, by asset_path, or a
-- reader's productions), never sorting every log's row.
DROP INDEX `import_logs_production`;--> statement-breakpoint
CREATE INDEX `import_logs_failed` ON `import_logs` ("error" <> '',`id`,`production`);--> statement-breakpoint
CREATE INDEX `import_logs_asset_path_failed` ON `import_logs` (`asset_path`,"error" <> '',`id`,`production`);--> statement-breakpoint
CREATE INDEX `import_logs_production` ON `import_logs` (`production`,"error" <> '',`id`);
