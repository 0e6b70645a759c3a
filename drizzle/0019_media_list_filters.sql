-- The media lists' device and status_approval filters (the web page's catalogue: a device's
-- offline assets, the assets pending approval): the lists' indexes hold both columns, so that a
-- deep page with them still skips index entries, never table rows (http/lists.ts, list-plans).
DROP INDEX `media_assets_audio_list`;--> statement-breakpoint
DROP INDEX `media_assets_image_list`;--> statement-breakpoint
DROP INDEX `media_assets_video_list`;--> statement-breakpoint
DROP INDEX `media_assets_path_kind`;--> statement-breakpoint
DROP INDEX `media_assets_production`;--> statement-breakpoint
DROP INDEX `media_assets_device`;--> statement-breakpoint
CREATE INDEX `media_assets_audio_list` ON `media_assets` (`id`,`production`,`is_archive`,`is_production`,`device`,`approval`) WHERE kind = 'audio';--> statement-breakpoint
CREATE INDEX `media_assets_image_list` ON `media_assets` (`id`,`production`,`is_archive`,`is_production`,`device`,`approval`) WHERE kind = 'image';--> statement-breakpoint
CREATE INDEX `media_assets_video_list` ON `media_assets` (`id`,`production`,`is_archive`,`is_production`,`device`,`approval`) WHERE kind = 'video';--> statement-breakpoint
CREATE INDEX `media_assets_path_kind` ON `media_assets` (`path_file`,`kind`,`production`,`is_archive`,`is_production`,`device`,`approval`);--> statement-breakpoint
CREATE INDEX `media_assets_production` ON `media_assets` (`production`,`kind`,`id`,`is_archive`,`is_production`,`device`,`approval`);--> statement-breakpoint
CREATE INDEX `media_assets_device` ON `media_assets` (`device`,`kind`,`id`,`production`,`is_archive`,`is_production`,`approval`);