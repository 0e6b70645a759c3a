-- What a task is doing (issue 20): the step it is in (an import: move, probe, proxy) and how far, in percent.
ALTER TABLE `tasks` ADD `step` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `tasks` ADD `percent` real;