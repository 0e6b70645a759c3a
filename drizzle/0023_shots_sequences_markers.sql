CREATE TABLE `markers` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`asset_id` integer NOT NULL,
	`start_ms` integer NOT NULL,
	`end_ms` integer,
	`note` text NOT NULL,
	`color` text DEFAULT 'red' NOT NULL,
	`user_id` integer,
	`username` text NOT NULL,
	`date_add` text NOT NULL,
	`date_mod` text NOT NULL,
	FOREIGN KEY (`asset_id`) REFERENCES `media_assets`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `markers_asset` ON `markers` (`asset_id`,`start_ms`);--> statement-breakpoint
CREATE TABLE `sequence_shots` (
	`sequence_id` integer NOT NULL,
	`shot_id` integer NOT NULL,
	`position` integer NOT NULL,
	PRIMARY KEY(`sequence_id`, `shot_id`),
	FOREIGN KEY (`sequence_id`) REFERENCES `sequences`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`shot_id`) REFERENCES `shots`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `sequence_shots_shot` ON `sequence_shots` (`shot_id`);--> statement-breakpoint
CREATE TABLE `sequences` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`asset_id` integer NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`start_ms` integer NOT NULL,
	`end_ms` integer NOT NULL,
	`origin` text DEFAULT 'detected' NOT NULL,
	`keywords` text DEFAULT '[]' NOT NULL,
	`date_add` text NOT NULL,
	`date_mod` text NOT NULL,
	FOREIGN KEY (`asset_id`) REFERENCES `media_assets`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `sequences_asset` ON `sequences` (`asset_id`,`start_ms`);--> statement-breakpoint
CREATE TABLE `shots` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`asset_id` integer NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`start_ms` integer NOT NULL,
	`end_ms` integer NOT NULL,
	`start_frame` integer,
	`end_frame` integer,
	`score` real,
	`origin` text DEFAULT 'detected' NOT NULL,
	`keywords` text DEFAULT '[]' NOT NULL,
	`path_thumbnail` text DEFAULT '' NOT NULL,
	`is_compositing` integer DEFAULT false NOT NULL,
	`licensor` text,
	`license` text,
	`location_city` text,
	`copyright` text,
	`ancestor` text,
	`date_add` text NOT NULL,
	`date_mod` text NOT NULL,
	FOREIGN KEY (`asset_id`) REFERENCES `media_assets`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `shots_asset` ON `shots` (`asset_id`,`start_ms`);