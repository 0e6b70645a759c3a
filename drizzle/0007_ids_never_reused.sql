-- Ids are never reused (AUTOINCREMENT on every table with an integer id), so no cache, task or
-- log can take a new record for a deleted one. SQLite adds AUTOINCREMENT only by rebuilding a
-- table. drizzle-kit writes one rebuild per table under PRAGMA foreign_keys=OFF, but migrate.ts
-- applies every migration in one transaction, where that pragma does nothing: each DROP TABLE
-- would then empty the old table row by row, cascading deletes into its children (keys,
-- permissions, links...) or failing on the others. So the whole catalogue is rebuilt at once,
-- edited by hand from drizzle-kit's output: the new tables reference each other (`__new_x`),
-- rows are copied parents first, the old tables dropped children first (none is referenced by a
-- new one, so nothing cascades), and the renames point the references back at the final names.
-- The copies keep every id, and set sqlite_sequence to the highest id each table holds, or that
-- history (tasks, import logs) names, whichever is higher.
CREATE TABLE `__new_users` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`username` text NOT NULL,
	`is_superuser` integer DEFAULT false NOT NULL,
	`date_add` text NOT NULL
);--> statement-breakpoint
CREATE TABLE `__new_content_types` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL
);--> statement-breakpoint
CREATE TABLE `__new_transcoding_profiles` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`codec_name` text DEFAULT '' NOT NULL,
	`codec_profile` text DEFAULT '' NOT NULL,
	`video_container` text DEFAULT '' NOT NULL,
	`frame_rate` text DEFAULT '' NOT NULL,
	`video_data_rate` text DEFAULT '' NOT NULL,
	`width` integer DEFAULT 0 NOT NULL,
	`height` integer DEFAULT 0 NOT NULL,
	`display_aspect_ratio` text DEFAULT '' NOT NULL,
	`pix_fmt` text DEFAULT '' NOT NULL,
	`progressive` integer DEFAULT false NOT NULL,
	`passthrough` integer DEFAULT false NOT NULL,
	`default_profile` integer DEFAULT false NOT NULL,
	`interlaced` text DEFAULT 'tff' NOT NULL,
	`ar_conversion` text DEFAULT 'box' NOT NULL,
	`should_have_audio` integer DEFAULT true NOT NULL,
	`audio_codec_name` text DEFAULT '' NOT NULL,
	`audio_container` text DEFAULT '' NOT NULL,
	`audio_codec_profile` text DEFAULT '' NOT NULL,
	`audio_data_rate` text DEFAULT '' NOT NULL,
	`tracks` integer DEFAULT 0 NOT NULL,
	`channels_per_track` integer DEFAULT 0 NOT NULL,
	`bits_per_sample` integer DEFAULT 0 NOT NULL,
	`sample_rate` integer DEFAULT 0 NOT NULL
);--> statement-breakpoint
CREATE TABLE `__new_devices` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`display_name` text NOT NULL,
	`path` text NOT NULL,
	`is_internal` integer DEFAULT false NOT NULL,
	`is_archive` integer DEFAULT false NOT NULL,
	`autoshot_detection` integer DEFAULT false NOT NULL,
	`allow_direct_writing` integer DEFAULT true NOT NULL,
	`recieve_xml_meta` integer DEFAULT false NOT NULL,
	`protocol` text DEFAULT 'file' NOT NULL,
	`anonymous` integer DEFAULT false NOT NULL,
	`server` text,
	`username` text,
	`password` text,
	`transcoding_profile` integer,
	`archive_connector` text,
	`passthrough_profiles` text DEFAULT '[]' NOT NULL,
	`write_permission_groups` text DEFAULT '[]' NOT NULL,
	`date_add` text NOT NULL,
	FOREIGN KEY (`transcoding_profile`) REFERENCES `__new_transcoding_profiles`(`id`) ON UPDATE no action ON DELETE no action
);--> statement-breakpoint
CREATE TABLE `__new_productions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`codename` text NOT NULL,
	`company` text DEFAULT '' NOT NULL,
	`storage_root` text NOT NULL,
	`proxy_root` text NOT NULL,
	`proxy_url` text DEFAULT '' NOT NULL,
	`upload_device` integer NOT NULL,
	`audioasset_device` integer NOT NULL,
	`imageasset_device` integer NOT NULL,
	`videoasset_device` integer NOT NULL,
	`date_add` text NOT NULL,
	FOREIGN KEY (`upload_device`) REFERENCES `__new_devices`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`audioasset_device`) REFERENCES `__new_devices`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`imageasset_device`) REFERENCES `__new_devices`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`videoasset_device`) REFERENCES `__new_devices`(`id`) ON UPDATE no action ON DELETE no action
);--> statement-breakpoint
CREATE TABLE `__new_custom_metadata_sets` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`description` text NOT NULL,
	`content_type` integer NOT NULL,
	FOREIGN KEY (`content_type`) REFERENCES `__new_content_types`(`id`) ON UPDATE no action ON DELETE no action
);--> statement-breakpoint
CREATE TABLE `__new_custom_metadata` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`key` text NOT NULL,
	`value` text NOT NULL,
	`order` integer NOT NULL,
	`custom_metadata_set` integer NOT NULL,
	`validation_rule` text,
	FOREIGN KEY (`custom_metadata_set`) REFERENCES `__new_custom_metadata_sets`(`id`) ON UPDATE no action ON DELETE no action
);--> statement-breakpoint
CREATE TABLE `__new_media_assets` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`kind` text NOT NULL,
	`name` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`production` integer NOT NULL,
	`device` integer NOT NULL,
	`status_asset` integer DEFAULT 6 NOT NULL,
	`status_asset_description` text DEFAULT 'ASSET_DONE' NOT NULL,
	`path_file` text NOT NULL,
	`path_proxy` text DEFAULT '' NOT NULL,
	`is_archive` integer DEFAULT false NOT NULL,
	`is_production` integer DEFAULT true NOT NULL,
	`approval` integer DEFAULT 0 NOT NULL,
	`meta_field_store` text DEFAULT '{}' NOT NULL,
	`technical` text DEFAULT '{}' NOT NULL,
	`archive_details` text DEFAULT '{}' NOT NULL,
	`date_crt` text,
	`date_add` text NOT NULL,
	`date_mod` text NOT NULL,
	`date_del` text,
	`file_dev` integer,
	`file_ino` integer,
	`file_stamp` real,
	FOREIGN KEY (`production`) REFERENCES `__new_productions`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`device`) REFERENCES `__new_devices`(`id`) ON UPDATE no action ON DELETE no action
);--> statement-breakpoint
CREATE TABLE `__new_project_assets` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`date_crt` text,
	`date_add` text NOT NULL,
	`date_mod` text NOT NULL,
	`date_del` text,
	`meta_field_store` text DEFAULT '{}' NOT NULL,
	`status_asset` integer DEFAULT 6 NOT NULL,
	`status_asset_description` text DEFAULT 'ASSET_DONE' NOT NULL,
	`status_editing` integer DEFAULT 0 NOT NULL,
	`status_approval` integer DEFAULT 0 NOT NULL,
	`path_file` text DEFAULT '' NOT NULL,
	`bundle_root` text NOT NULL,
	`type` text DEFAULT 'generic' NOT NULL,
	`is_archive` integer DEFAULT false NOT NULL,
	`is_production` integer DEFAULT true NOT NULL,
	`files_count` integer DEFAULT 0 NOT NULL,
	`files_bytes` integer DEFAULT 0 NOT NULL,
	`name_editor` text DEFAULT '' NOT NULL,
	`name_studio` text DEFAULT '' NOT NULL,
	`locked_by` text,
	`production` integer NOT NULL,
	`device` integer NOT NULL,
	`copy_of` integer,
	`deleting` integer DEFAULT false NOT NULL,
	FOREIGN KEY (`production`) REFERENCES `__new_productions`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`device`) REFERENCES `__new_devices`(`id`) ON UPDATE no action ON DELETE no action
);--> statement-breakpoint
CREATE TABLE `__new_keyword_categories` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`kind` text NOT NULL,
	`name` text NOT NULL
);--> statement-breakpoint
CREATE TABLE `__new_keywords` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`category_id` integer NOT NULL,
	`name` text NOT NULL,
	FOREIGN KEY (`category_id`) REFERENCES `__new_keyword_categories`(`id`) ON UPDATE no action ON DELETE cascade
);--> statement-breakpoint
CREATE TABLE `__new_import_logs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`asset_type` text NOT NULL,
	`asset_path` text NOT NULL,
	`status` text NOT NULL,
	`error` text DEFAULT '' NOT NULL,
	`warning` text DEFAULT '{}' NOT NULL,
	`payload` text NOT NULL,
	`asset_config` text DEFAULT '{}' NOT NULL,
	`asset_import_id` integer,
	`production` integer,
	`date_add` text NOT NULL,
	`date_mod` text NOT NULL,
	FOREIGN KEY (`production`) REFERENCES `__new_productions`(`id`) ON UPDATE no action ON DELETE no action
);--> statement-breakpoint
CREATE TABLE `__new_asset_hold_durations` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`asset_type` text NOT NULL,
	`context_type` text NOT NULL,
	`context` text NOT NULL,
	`duration` integer NOT NULL
);--> statement-breakpoint
CREATE TABLE `__new_tasks` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`kind` text NOT NULL,
	`state` text DEFAULT 'queued' NOT NULL,
	`target` text NOT NULL,
	`production` integer,
	`params` text DEFAULT '{}' NOT NULL,
	`bytes_done` integer DEFAULT 0 NOT NULL,
	`bytes_total` integer DEFAULT 0 NOT NULL,
	`files_done` integer DEFAULT 0 NOT NULL,
	`files_total` integer DEFAULT 0 NOT NULL,
	`error` text DEFAULT '' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`date_add` text NOT NULL,
	`date_start` text,
	`date_end` text,
	`key` text,
	`result` text DEFAULT '{}' NOT NULL
);--> statement-breakpoint
CREATE TABLE `__new_user_permissions` (
	`user_id` integer NOT NULL,
	`codename` text NOT NULL,
	PRIMARY KEY(`user_id`, `codename`),
	FOREIGN KEY (`user_id`) REFERENCES `__new_users`(`id`) ON UPDATE no action ON DELETE cascade
);--> statement-breakpoint
CREATE TABLE `__new_api_keys` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`key_hash` text NOT NULL,
	`date_add` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `__new_users`(`id`) ON UPDATE no action ON DELETE cascade
);--> statement-breakpoint
CREATE TABLE `__new_production_access` (
	`user_id` integer NOT NULL,
	`production_id` integer NOT NULL,
	`level` text NOT NULL,
	PRIMARY KEY(`user_id`, `production_id`),
	FOREIGN KEY (`user_id`) REFERENCES `__new_users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`production_id`) REFERENCES `__new_productions`(`id`) ON UPDATE no action ON DELETE cascade
);--> statement-breakpoint
CREATE TABLE `__new_media_asset_shares` (
	`asset_id` integer NOT NULL,
	`production_id` integer NOT NULL,
	PRIMARY KEY(`asset_id`, `production_id`),
	FOREIGN KEY (`asset_id`) REFERENCES `__new_media_assets`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`production_id`) REFERENCES `__new_productions`(`id`) ON UPDATE no action ON DELETE cascade
);--> statement-breakpoint
CREATE TABLE `__new_project_asset_links` (
	`project_id` integer NOT NULL,
	`asset_id` integer NOT NULL,
	PRIMARY KEY(`project_id`, `asset_id`),
	FOREIGN KEY (`project_id`) REFERENCES `__new_project_assets`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`asset_id`) REFERENCES `__new_media_assets`(`id`) ON UPDATE no action ON DELETE cascade
);--> statement-breakpoint
CREATE TABLE `__new_media_asset_keywords` (
	`asset_id` integer NOT NULL,
	`keyword_id` integer NOT NULL,
	PRIMARY KEY(`asset_id`, `keyword_id`),
	FOREIGN KEY (`asset_id`) REFERENCES `__new_media_assets`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`keyword_id`) REFERENCES `__new_keywords`(`id`) ON UPDATE no action ON DELETE cascade
);--> statement-breakpoint
INSERT INTO `__new_users`("id", "username", "is_superuser", "date_add") SELECT "id", "username", "is_superuser", "date_add" FROM `users`;--> statement-breakpoint
INSERT INTO `__new_content_types`("id", "name") SELECT "id", "name" FROM `content_types`;--> statement-breakpoint
INSERT INTO `__new_transcoding_profiles`("id", "name", "codec_name", "codec_profile", "video_container", "frame_rate", "video_data_rate", "width", "height", "display_aspect_ratio", "pix_fmt", "progressive", "passthrough", "default_profile", "interlaced", "ar_conversion", "should_have_audio", "audio_codec_name", "audio_container", "audio_codec_profile", "audio_data_rate", "tracks", "channels_per_track", "bits_per_sample", "sample_rate") SELECT "id", "name", "codec_name", "codec_profile", "video_container", "frame_rate", "video_data_rate", "width", "height", "display_aspect_ratio", "pix_fmt", "progressive", "passthrough", "default_profile", "interlaced", "ar_conversion", "should_have_audio", "audio_codec_name", "audio_container", "audio_codec_profile", "audio_data_rate", "tracks", "channels_per_track", "bits_per_sample", "sample_rate" FROM `transcoding_profiles`;--> statement-breakpoint
INSERT INTO `__new_devices`("id", "name", "display_name", "path", "is_internal", "is_archive", "autoshot_detection", "allow_direct_writing", "recieve_xml_meta", "protocol", "anonymous", "server", "username", "password", "transcoding_profile", "archive_connector", "passthrough_profiles", "write_permission_groups", "date_add") SELECT "id", "name", "display_name", "path", "is_internal", "is_archive", "autoshot_detection", "allow_direct_writing", "recieve_xml_meta", "protocol", "anonymous", "server", "username", "password", "transcoding_profile", "archive_connector", "passthrough_profiles", "write_permission_groups", "date_add" FROM `devices`;--> statement-breakpoint
INSERT INTO `__new_productions`("id", "name", "codename", "company", "storage_root", "proxy_root", "proxy_url", "upload_device", "audioasset_device", "imageasset_device", "videoasset_device", "date_add") SELECT "id", "name", "codename", "company", "storage_root", "proxy_root", "proxy_url", "upload_device", "audioasset_device", "imageasset_device", "videoasset_device", "date_add" FROM `productions`;--> statement-breakpoint
INSERT INTO `__new_custom_metadata_sets`("id", "name", "description", "content_type") SELECT "id", "name", "description", "content_type" FROM `custom_metadata_sets`;--> statement-breakpoint
INSERT INTO `__new_custom_metadata`("id", "key", "value", "order", "custom_metadata_set", "validation_rule") SELECT "id", "key", "value", "order", "custom_metadata_set", "validation_rule" FROM `custom_metadata`;--> statement-breakpoint
INSERT INTO `__new_media_assets`("id", "kind", "name", "description", "production", "device", "status_asset", "status_asset_description", "path_file", "path_proxy", "is_archive", "is_production", "approval", "meta_field_store", "technical", "archive_details", "date_crt", "date_add", "date_mod", "date_del", "file_dev", "file_ino", "file_stamp") SELECT "id", "kind", "name", "description", "production", "device", "status_asset", "status_asset_description", "path_file", "path_proxy", "is_archive", "is_production", "approval", "meta_field_store", "technical", "archive_details", "date_crt", "date_add", "date_mod", "date_del", "file_dev", "file_ino", "file_stamp" FROM `media_assets`;--> statement-breakpoint
INSERT INTO `__new_project_assets`("id", "name", "description", "date_crt", "date_add", "date_mod", "date_del", "meta_field_store", "status_asset", "status_asset_description", "status_editing", "status_approval", "path_file", "bundle_root", "type", "is_archive", "is_production", "files_count", "files_bytes", "name_editor", "name_studio", "locked_by", "production", "device", "copy_of", "deleting") SELECT "id", "name", "description", "date_crt", "date_add", "date_mod", "date_del", "meta_field_store", "status_asset", "status_asset_description", "status_editing", "status_approval", "path_file", "bundle_root", "type", "is_archive", "is_production", "files_count", "files_bytes", "name_editor", "name_studio", "locked_by", "production", "device", "copy_of", "deleting" FROM `project_assets`;--> statement-breakpoint
INSERT INTO `__new_keyword_categories`("id", "kind", "name") SELECT "id", "kind", "name" FROM `keyword_categories`;--> statement-breakpoint
INSERT INTO `__new_keywords`("id", "category_id", "name") SELECT "id", "category_id", "name" FROM `keywords`;--> statement-breakpoint
INSERT INTO `__new_import_logs`("id", "asset_type", "asset_path", "status", "error", "warning", "payload", "asset_config", "asset_import_id", "production", "date_add", "date_mod") SELECT "id", "asset_type", "asset_path", "status", "error", "warning", "payload", "asset_config", "asset_import_id", "production", "date_add", "date_mod" FROM `import_logs`;--> statement-breakpoint
INSERT INTO `__new_asset_hold_durations`("id", "asset_type", "context_type", "context", "duration") SELECT "id", "asset_type", "context_type", "context", "duration" FROM `asset_hold_durations`;--> statement-breakpoint
INSERT INTO `__new_tasks`("id", "kind", "state", "target", "production", "params", "bytes_done", "bytes_total", "files_done", "files_total", "error", "attempts", "date_add", "date_start", "date_end", "key", "result") SELECT "id", "kind", "state", "target", "production", "params", "bytes_done", "bytes_total", "files_done", "files_total", "error", "attempts", "date_add", "date_start", "date_end", "key", "result" FROM `tasks`;--> statement-breakpoint
INSERT INTO `__new_user_permissions`("user_id", "codename") SELECT "user_id", "codename" FROM `user_permissions`;--> statement-breakpoint
INSERT INTO `__new_api_keys`("id", "user_id", "key_hash", "date_add") SELECT "id", "user_id", "key_hash", "date_add" FROM `api_keys`;--> statement-breakpoint
INSERT INTO `__new_production_access`("user_id", "production_id", "level") SELECT "user_id", "production_id", "level" FROM `production_access`;--> statement-breakpoint
INSERT INTO `__new_media_asset_shares`("asset_id", "production_id") SELECT "asset_id", "production_id" FROM `media_asset_shares`;--> statement-breakpoint
INSERT INTO `__new_project_asset_links`("project_id", "asset_id") SELECT "project_id", "asset_id" FROM `project_asset_links`;--> statement-breakpoint
INSERT INTO `__new_media_asset_keywords`("asset_id", "keyword_id") SELECT "asset_id", "keyword_id" FROM `media_asset_keywords`;--> statement-breakpoint
-- A record deleted before this migration may have had an id above every id left; only history
-- names it (a task's target, an import log's asset). The sequences of projects, media assets and
-- devices start above those ids too, so no new record takes the id of one that history names.
INSERT INTO sqlite_sequence(name, seq) SELECT t.name, 0 FROM (SELECT '__new_project_assets' AS name UNION ALL SELECT '__new_media_assets' UNION ALL SELECT '__new_devices') AS t WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence s WHERE s.name = t.name);--> statement-breakpoint
UPDATE sqlite_sequence SET seq = max(seq, (SELECT coalesce(max(json_extract(target, '$.projectasset')), 0) FROM `__new_tasks`)) WHERE name = '__new_project_assets';--> statement-breakpoint
UPDATE sqlite_sequence SET seq = max(seq, (SELECT coalesce(max(coalesce(json_extract(target, '$.videoasset'), json_extract(target, '$.audioasset'), json_extract(target, '$.imageasset'))), 0) FROM `__new_tasks`), (SELECT coalesce(max(asset_import_id), 0) FROM `__new_import_logs`)) WHERE name = '__new_media_assets';--> statement-breakpoint
UPDATE sqlite_sequence SET seq = max(seq, (SELECT coalesce(max(json_extract(target, '$.device')), 0) FROM `__new_tasks`)) WHERE name = '__new_devices';--> statement-breakpoint
DROP TABLE `media_asset_keywords`;--> statement-breakpoint
DROP TABLE `project_asset_links`;--> statement-breakpoint
DROP TABLE `media_asset_shares`;--> statement-breakpoint
DROP TABLE `production_access`;--> statement-breakpoint
DROP TABLE `api_keys`;--> statement-breakpoint
DROP TABLE `user_permissions`;--> statement-breakpoint
DROP TABLE `tasks`;--> statement-breakpoint
DROP TABLE `asset_hold_durations`;--> statement-breakpoint
DROP TABLE `import_logs`;--> statement-breakpoint
DROP TABLE `keywords`;--> statement-breakpoint
DROP TABLE `keyword_categories`;--> statement-breakpoint
DROP TABLE `project_assets`;--> statement-breakpoint
DROP TABLE `media_assets`;--> statement-breakpoint
DROP TABLE `custom_metadata`;--> statement-breakpoint
DROP TABLE `custom_metadata_sets`;--> statement-breakpoint
DROP TABLE `productions`;--> statement-breakpoint
DROP TABLE `devices`;--> statement-breakpoint
DROP TABLE `transcoding_profiles`;--> statement-breakpoint
DROP TABLE `content_types`;--> statement-breakpoint
DROP TABLE `users`;--> statement-breakpoint
ALTER TABLE `__new_users` RENAME TO `users`;--> statement-breakpoint
ALTER TABLE `__new_content_types` RENAME TO `content_types`;--> statement-breakpoint
ALTER TABLE `__new_transcoding_profiles` RENAME TO `transcoding_profiles`;--> statement-breakpoint
ALTER TABLE `__new_devices` RENAME TO `devices`;--> statement-breakpoint
ALTER TABLE `__new_productions` RENAME TO `productions`;--> statement-breakpoint
ALTER TABLE `__new_custom_metadata_sets` RENAME TO `custom_metadata_sets`;--> statement-breakpoint
ALTER TABLE `__new_custom_metadata` RENAME TO `custom_metadata`;--> statement-breakpoint
ALTER TABLE `__new_media_assets` RENAME TO `media_assets`;--> statement-breakpoint
ALTER TABLE `__new_project_assets` RENAME TO `project_assets`;--> statement-breakpoint
ALTER TABLE `__new_keyword_categories` RENAME TO `keyword_categories`;--> statement-breakpoint
ALTER TABLE `__new_keywords` RENAME TO `keywords`;--> statement-breakpoint
ALTER TABLE `__new_import_logs` RENAME TO `import_logs`;--> statement-breakpoint
ALTER TABLE `__new_asset_hold_durations` RENAME TO `asset_hold_durations`;--> statement-breakpoint
ALTER TABLE `__new_tasks` RENAME TO `tasks`;--> statement-breakpoint
ALTER TABLE `__new_user_permissions` RENAME TO `user_permissions`;--> statement-breakpoint
ALTER TABLE `__new_api_keys` RENAME TO `api_keys`;--> statement-breakpoint
ALTER TABLE `__new_production_access` RENAME TO `production_access`;--> statement-breakpoint
ALTER TABLE `__new_media_asset_shares` RENAME TO `media_asset_shares`;--> statement-breakpoint
ALTER TABLE `__new_project_asset_links` RENAME TO `project_asset_links`;--> statement-breakpoint
ALTER TABLE `__new_media_asset_keywords` RENAME TO `media_asset_keywords`;--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_key_hash` ON `api_keys` (`key_hash`);--> statement-breakpoint
CREATE INDEX `api_keys_user` ON `api_keys` (`user_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `asset_hold_durations_rule` ON `asset_hold_durations` (`asset_type`,`context_type`,`context`);--> statement-breakpoint
CREATE UNIQUE INDEX `content_types_name_unique` ON `content_types` (`name`);--> statement-breakpoint
CREATE UNIQUE INDEX `custom_metadata_key_unique` ON `custom_metadata` (`key`);--> statement-breakpoint
CREATE INDEX `custom_metadata_set` ON `custom_metadata` (`custom_metadata_set`);--> statement-breakpoint
CREATE UNIQUE INDEX `devices_name_unique` ON `devices` (`name`);--> statement-breakpoint
CREATE UNIQUE INDEX `devices_path_unique` ON `devices` (`path`);--> statement-breakpoint
CREATE INDEX `import_logs_asset_path` ON `import_logs` (`asset_path`);--> statement-breakpoint
CREATE INDEX `import_logs_production` ON `import_logs` (`production`);--> statement-breakpoint
CREATE UNIQUE INDEX `keyword_categories_kind_name` ON `keyword_categories` (`kind`,`name`);--> statement-breakpoint
CREATE UNIQUE INDEX `keywords_category_name` ON `keywords` (`category_id`,`name`);--> statement-breakpoint
CREATE INDEX `media_assets_kind_id` ON `media_assets` (`kind`,`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `media_assets_kind_path` ON `media_assets` (`kind`,`path_file`);--> statement-breakpoint
CREATE INDEX `media_assets_production` ON `media_assets` (`production`);--> statement-breakpoint
CREATE INDEX `media_assets_device` ON `media_assets` (`device`);--> statement-breakpoint
CREATE INDEX `media_assets_identity` ON `media_assets` (`file_dev`,`file_ino`);--> statement-breakpoint
CREATE UNIQUE INDEX `productions_name_unique` ON `productions` (`name`);--> statement-breakpoint
CREATE UNIQUE INDEX `productions_codename_unique` ON `productions` (`codename`);--> statement-breakpoint
CREATE UNIQUE INDEX `project_assets_bundle_root` ON `project_assets` (`bundle_root`);--> statement-breakpoint
CREATE INDEX `project_assets_production` ON `project_assets` (`production`);--> statement-breakpoint
CREATE INDEX `tasks_state` ON `tasks` (`state`,`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `tasks_key_queued` ON `tasks` (`key`) WHERE state = 'queued';--> statement-breakpoint
CREATE UNIQUE INDEX `transcoding_profiles_name_unique` ON `transcoding_profiles` (`name`);--> statement-breakpoint
CREATE UNIQUE INDEX `users_username_unique` ON `users` (`username`);--> statement-breakpoint
CREATE INDEX `media_asset_shares_production` ON `media_asset_shares` (`production_id`);--> statement-breakpoint
CREATE INDEX `project_asset_links_asset` ON `project_asset_links` (`asset_id`);
