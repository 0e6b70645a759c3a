ALTER TABLE `project_assets` ADD `deleting` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `tasks` ADD `production` integer;