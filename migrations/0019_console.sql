CREATE TABLE `console_actions` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` text,
	`actor` text NOT NULL,
	`action` text NOT NULL,
	`target` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `console_actions_team_idx` ON `console_actions` (`team_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `console_actions_created_idx` ON `console_actions` (`created_at`);--> statement-breakpoint
CREATE TABLE `console_links` (
	`id` text PRIMARY KEY NOT NULL,
	`token_hash` text NOT NULL,
	`kind` text NOT NULL,
	`email` text NOT NULL,
	`team_id` text,
	`role` text,
	`team_name` text,
	`invited_by` text,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`used_at` text,
	`session_id` text,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `console_links_token_idx` ON `console_links` (`token_hash`);--> statement-breakpoint
CREATE INDEX `console_links_team_idx` ON `console_links` (`team_id`,`kind`);--> statement-breakpoint
CREATE INDEX `console_links_expires_idx` ON `console_links` (`expires_at`);--> statement-breakpoint
CREATE TABLE `memberships` (
	`team_id` text NOT NULL,
	`user_id` text NOT NULL,
	`role` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`team_id`, `user_id`),
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `memberships_user_idx` ON `memberships` (`user_id`);--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`token_hash` text NOT NULL,
	`user_id` text NOT NULL,
	`created_at` text NOT NULL,
	`last_used_at` text NOT NULL,
	`expires_at` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sessions_token_idx` ON `sessions` (`token_hash`);--> statement-breakpoint
CREATE INDEX `sessions_user_idx` ON `sessions` (`user_id`);--> statement-breakpoint
CREATE INDEX `sessions_last_used_idx` ON `sessions` (`last_used_at`);--> statement-breakpoint
CREATE TABLE `users` (
	`id` text PRIMARY KEY NOT NULL,
	`email` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_email_idx` ON `users` (`email`);--> statement-breakpoint
ALTER TABLE `api_keys` ADD `last_used_at` text;--> statement-breakpoint
-- Backfill (hand-written): every existing team's owner_email becomes a user and that team's owner.
INSERT INTO `users` (`id`, `email`, `created_at`)
SELECT lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6))),
       lower(trim(`owner_email`)), strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
FROM `teams` WHERE `owner_email` IS NOT NULL AND trim(`owner_email`) != '' GROUP BY lower(trim(`owner_email`))
ON CONFLICT (`email`) DO NOTHING;
--> statement-breakpoint
INSERT INTO `memberships` (`team_id`, `user_id`, `role`, `created_at`)
SELECT t.`id`, u.`id`, 'owner', strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
FROM `teams` t JOIN `users` u ON u.`email` = lower(trim(t.`owner_email`))
WHERE true
ON CONFLICT (`team_id`, `user_id`) DO NOTHING;
