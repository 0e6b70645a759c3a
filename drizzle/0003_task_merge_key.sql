ALTER TABLE `tasks` ADD `key` text;--> statement-breakpoint
CREATE UNIQUE INDEX `tasks_key_queued` ON `tasks` (`key`) WHERE state = 'queued';