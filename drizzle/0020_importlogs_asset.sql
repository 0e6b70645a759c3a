-- The import logs of one asset (GET /api/importlogs/?asset_import_id=, the web page's asset page:
-- its imports wherever its file lay then), in id order and failed first, read from an index; the
-- path's indexes hold asset_import_id too, for both filters at once.
DROP INDEX `import_logs_asset_path`;--> statement-breakpoint
DROP INDEX `import_logs_asset_path_failed`;--> statement-breakpoint
CREATE INDEX `import_logs_asset` ON `import_logs` (`asset_import_id`,`id`,`production`);--> statement-breakpoint
CREATE INDEX `import_logs_asset_failed` ON `import_logs` (`asset_import_id`,"error" <> '',`id`,`production`);--> statement-breakpoint
CREATE INDEX `import_logs_asset_path` ON `import_logs` (`asset_path`,`id`,`production`,`asset_import_id`);--> statement-breakpoint
CREATE INDEX `import_logs_asset_path_failed` ON `import_logs` (`asset_path`,"error" <> '',`id`,`production`,`asset_import_id`);