-- Identity first (watcher): a content fingerprint per media asset (size, mtime and hash of the
-- file it was read from), an index by size to find relink candidates, and path_file unique only
-- among assets in production: an asset whose file vanished keeps the path it was last seen at
-- while the file now there may be another asset's (a rotation of names).
DROP INDEX `media_assets_path_kind`;--> statement-breakpoint
ALTER TABLE `media_assets` ADD `file_size` integer;--> statement-breakpoint
ALTER TABLE `media_assets` ADD `file_mtime` real;--> statement-breakpoint
ALTER TABLE `media_assets` ADD `file_hash` text;--> statement-breakpoint
CREATE UNIQUE INDEX `media_assets_online_path` ON `media_assets` (`path_file`,`kind`) WHERE is_production = 1;--> statement-breakpoint
CREATE INDEX `media_assets_size` ON `media_assets` (`file_size`,`is_production`,`is_archive`,`file_hash`);--> statement-breakpoint
CREATE INDEX `media_assets_proxy` ON `media_assets` (`path_proxy`) WHERE path_proxy != '';--> statement-breakpoint
CREATE INDEX `media_assets_path_kind` ON `media_assets` (`path_file`,`kind`,`production`,`is_archive`,`is_production`);