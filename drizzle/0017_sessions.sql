-- Sign-ins of the web page (POST /api/session/): only the SHA-256 of each session id is kept,
-- with its user and when it was last used (idle expiry, modules/users/sessions.ts). Deleted with
-- its user; the users service deletes a user's sessions when their password changes or a key of
-- theirs is revoked.
CREATE TABLE `sessions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`id_hash` text NOT NULL,
	`date_add` text NOT NULL,
	`last_seen` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sessions_id_hash` ON `sessions` (`id_hash`);--> statement-breakpoint
CREATE INDEX `sessions_user` ON `sessions` (`user_id`);