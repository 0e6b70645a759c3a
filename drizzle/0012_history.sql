-- The change history (who changed which field of which record, written with the change) and the
-- files whose asset a user deleted (the watcher does not import them again).
CREATE TABLE `dismissed_files` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`kind` text NOT NULL,
	`path_file` text NOT NULL,
	`file_dev` integer,
	`file_ino` integer,
	`file_stamp` real,
	`asset_id` integer NOT NULL,
	`date` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `dismissed_files_path` ON `dismissed_files` (`path_file`);--> statement-breakpoint
CREATE INDEX `dismissed_files_identity` ON `dismissed_files` (`file_dev`,`file_ino`);--> statement-breakpoint
CREATE TABLE `history` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`date` text NOT NULL,
	`user_id` integer,
	`username` text,
	`via` text NOT NULL,
	`resource` text NOT NULL,
	`resource_id` integer NOT NULL,
	`action` text NOT NULL,
	`changes` text DEFAULT '{}' NOT NULL,
	`production` integer
);
--> statement-breakpoint
CREATE INDEX `history_list` ON `history` (`id`,`production`,`resource`,`resource_id`,`username`);--> statement-breakpoint
CREATE INDEX `history_resource` ON `history` (`resource`,`resource_id`,`id`,`production`,`username`);--> statement-breakpoint
CREATE INDEX `history_user` ON `history` (`username`,`id`,`production`,`resource`,`resource_id`);