-- Indexes for list pages (issue 9): a page's ids are found by stepping over index entries, never
-- over table rows, for every filter a list takes (http/lists.ts selects them in a sub-select).
-- Media assets keep five indexes, so an import writes no more entries than before: (kind, id)
-- becomes one partial index per kind led by id (walked without a key comparison per entry), the
-- unique (kind, path_file) turns to (path_file, kind) so that the planner does not sort a kind's
-- rows by id through it, and the production index carries kind, id and the flags. Project
-- assets, import logs and tasks get one index each that starts with id; tasks carry their target.
DROP INDEX `media_assets_kind_id`;--> statement-breakpoint
DROP INDEX `media_assets_kind_path`;--> statement-breakpoint
DROP INDEX `media_assets_production`;--> statement-breakpoint
CREATE INDEX `media_assets_audio_list` ON `media_assets` (`id`,`production`,`is_archive`,`is_production`) WHERE kind = 'audio';--> statement-breakpoint
CREATE INDEX `media_assets_image_list` ON `media_assets` (`id`,`production`,`is_archive`,`is_production`) WHERE kind = 'image';--> statement-breakpoint
CREATE INDEX `media_assets_video_list` ON `media_assets` (`id`,`production`,`is_archive`,`is_production`) WHERE kind = 'video';--> statement-breakpoint
CREATE UNIQUE INDEX `media_assets_path_kind` ON `media_assets` (`path_file`,`kind`);--> statement-breakpoint
CREATE INDEX `media_assets_production` ON `media_assets` (`production`,`kind`,`id`,`is_archive`,`is_production`);--> statement-breakpoint
DROP INDEX `import_logs_asset_path`;--> statement-breakpoint
CREATE INDEX `import_logs_list` ON `import_logs` (`id`,`production`);--> statement-breakpoint
CREATE INDEX `import_logs_asset_path` ON `import_logs` (`asset_path`,`id`,`production`);--> statement-breakpoint
DROP INDEX `project_assets_production`;--> statement-breakpoint
CREATE INDEX `project_assets_list` ON `project_assets` (`id`,`production`,`is_archive`,`is_production`);--> statement-breakpoint
CREATE INDEX `project_assets_production` ON `project_assets` (`production`,`id`,`is_archive`,`is_production`);--> statement-breakpoint
DROP INDEX `tasks_state`;--> statement-breakpoint
CREATE INDEX `tasks_list` ON `tasks` (`id`,`state`,`kind`,`production`,`target`);--> statement-breakpoint
CREATE INDEX `tasks_state` ON `tasks` (`state`,`id`,`kind`,`production`,`target`);