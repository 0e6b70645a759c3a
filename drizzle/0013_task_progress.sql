-- What a task is doing (issue 20): the step it is in (an import: move, probe, proxy) and how far, in
-- percent; the task list's indexes hold the dates, for its orders by date (no data is dropped).
DROP INDEX `tasks_state`;--> statement-breakpoint
DROP INDEX `tasks_list`;--> statement-breakpoint
ALTER TABLE `tasks` ADD `step` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `tasks` ADD `percent` real;--> statement-breakpoint
CREATE INDEX `tasks_state` ON `tasks` (`state`,`id`,`kind`,`production`,`target`,`date_end`,`date_start`,`date_add`);--> statement-breakpoint
CREATE INDEX `tasks_list` ON `tasks` (`id`,`state`,`kind`,`production`,`target`,`date_end`,`date_start`,`date_add`);