CREATE TABLE `api_keys` (
	`id` integer PRIMARY KEY NOT NULL,
	`user_id` integer NOT NULL,
	`key_hash` text NOT NULL,
	`date_add` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_key_hash` ON `api_keys` (`key_hash`);--> statement-breakpoint
CREATE INDEX `api_keys_user` ON `api_keys` (`user_id`);--> statement-breakpoint
CREATE TABLE `asset_hold_durations` (
	`id` integer PRIMARY KEY NOT NULL,
	`asset_type` text NOT NULL,
	`context_type` text NOT NULL,
	`context` text NOT NULL,
	`duration` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `asset_hold_durations_rule` ON `asset_hold_durations` (`asset_type`,`context_type`,`context`);--> statement-breakpoint
CREATE TABLE `content_types` (
	`id` integer PRIMARY KEY NOT NULL,
	`name` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `content_types_name_unique` ON `content_types` (`name`);--> statement-breakpoint
CREATE TABLE `custom_metadata` (
	`id` integer PRIMARY KEY NOT NULL,
	`key` text NOT NULL,
	`value` text NOT NULL,
	`order` integer NOT NULL,
	`custom_metadata_set` integer NOT NULL,
	`validation_rule` text,
	FOREIGN KEY (`custom_metadata_set`) REFERENCES `custom_metadata_sets`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `custom_metadata_key_unique` ON `custom_metadata` (`key`);--> statement-breakpoint
CREATE INDEX `custom_metadata_set` ON `custom_metadata` (`custom_metadata_set`);--> statement-breakpoint
CREATE TABLE `custom_metadata_sets` (
	`id` integer PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`description` text NOT NULL,
	`content_type` integer NOT NULL,
	FOREIGN KEY (`content_type`) REFERENCES `content_types`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `devices` (
	`id` integer PRIMARY KEY NOT NULL,
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
	FOREIGN KEY (`transcoding_profile`) REFERENCES `transcoding_profiles`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `devices_name_unique` ON `devices` (`name`);--> statement-breakpoint
CREATE UNIQUE INDEX `devices_path_unique` ON `devices` (`path`);--> statement-breakpoint
CREATE TABLE `import_logs` (
	`id` integer PRIMARY KEY NOT NULL,
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
	FOREIGN KEY (`production`) REFERENCES `productions`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `import_logs_asset_path` ON `import_logs` (`asset_path`);--> statement-breakpoint
CREATE INDEX `import_logs_production` ON `import_logs` (`production`);--> statement-breakpoint
CREATE TABLE `keyword_categories` (
	`id` integer PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`name` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `keyword_categories_kind_name` ON `keyword_categories` (`kind`,`name`);--> statement-breakpoint
CREATE TABLE `keywords` (
	`id` integer PRIMARY KEY NOT NULL,
	`category_id` integer NOT NULL,
	`name` text NOT NULL,
	FOREIGN KEY (`category_id`) REFERENCES `keyword_categories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `keywords_category_name` ON `keywords` (`category_id`,`name`);--> statement-breakpoint
CREATE TABLE `media_asset_keywords` (
	`asset_id` integer NOT NULL,
	`keyword_id` integer NOT NULL,
	PRIMARY KEY(`asset_id`, `keyword_id`),
	FOREIGN KEY (`asset_id`) REFERENCES `media_assets`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`keyword_id`) REFERENCES `keywords`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `media_asset_shares` (
	`asset_id` integer NOT NULL,
	`production_id` integer NOT NULL,
	PRIMARY KEY(`asset_id`, `production_id`),
	FOREIGN KEY (`asset_id`) REFERENCES `media_assets`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`production_id`) REFERENCES `productions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `media_asset_shares_production` ON `media_asset_shares` (`production_id`);--> statement-breakpoint
CREATE TABLE `media_assets` (
	`id` integer PRIMARY KEY NOT NULL,
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
	FOREIGN KEY (`production`) REFERENCES `productions`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`device`) REFERENCES `devices`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `media_assets_kind_id` ON `media_assets` (`kind`,`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `media_assets_kind_path` ON `media_assets` (`kind`,`path_file`);--> statement-breakpoint
CREATE INDEX `media_assets_production` ON `media_assets` (`production`);--> statement-breakpoint
CREATE INDEX `media_assets_device` ON `media_assets` (`device`);--> statement-breakpoint
CREATE TABLE `production_access` (
	`user_id` integer NOT NULL,
	`production_id` integer NOT NULL,
	`level` text NOT NULL,
	PRIMARY KEY(`user_id`, `production_id`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`production_id`) REFERENCES `productions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `productions` (
	`id` integer PRIMARY KEY NOT NULL,
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
	FOREIGN KEY (`upload_device`) REFERENCES `devices`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`audioasset_device`) REFERENCES `devices`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`imageasset_device`) REFERENCES `devices`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`videoasset_device`) REFERENCES `devices`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `productions_name_unique` ON `productions` (`name`);--> statement-breakpoint
CREATE UNIQUE INDEX `productions_codename_unique` ON `productions` (`codename`);--> statement-breakpoint
CREATE TABLE `project_asset_links` (
	`project_id` integer NOT NULL,
	`asset_id` integer NOT NULL,
	PRIMARY KEY(`project_id`, `asset_id`),
	FOREIGN KEY (`project_id`) REFERENCES `project_assets`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`asset_id`) REFERENCES `media_assets`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `project_asset_links_asset` ON `project_asset_links` (`asset_id`);--> statement-breakpoint
CREATE TABLE `project_assets` (
	`id` integer PRIMARY KEY NOT NULL,
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
	FOREIGN KEY (`production`) REFERENCES `productions`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`device`) REFERENCES `devices`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `project_assets_bundle_root` ON `project_assets` (`bundle_root`);--> statement-breakpoint
CREATE INDEX `project_assets_production` ON `project_assets` (`production`);--> statement-breakpoint
CREATE TABLE `tasks` (
	`id` integer PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`state` text DEFAULT 'queued' NOT NULL,
	`target` text NOT NULL,
	`params` text DEFAULT '{}' NOT NULL,
	`bytes_done` integer DEFAULT 0 NOT NULL,
	`bytes_total` integer DEFAULT 0 NOT NULL,
	`files_done` integer DEFAULT 0 NOT NULL,
	`files_total` integer DEFAULT 0 NOT NULL,
	`error` text DEFAULT '' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`date_add` text NOT NULL,
	`date_start` text,
	`date_end` text
);
--> statement-breakpoint
CREATE INDEX `tasks_state` ON `tasks` (`state`,`id`);--> statement-breakpoint
CREATE TABLE `transcoding_profiles` (
	`id` integer PRIMARY KEY NOT NULL,
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
);
--> statement-breakpoint
CREATE UNIQUE INDEX `transcoding_profiles_name_unique` ON `transcoding_profiles` (`name`);--> statement-breakpoint
CREATE TABLE `user_permissions` (
	`user_id` integer NOT NULL,
	`codename` text NOT NULL,
	PRIMARY KEY(`user_id`, `codename`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `users` (
	`id` integer PRIMARY KEY NOT NULL,
	`username` text NOT NULL,
	`is_superuser` integer DEFAULT false NOT NULL,
	`date_add` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_username_unique` ON `users` (`username`);