CREATE TABLE `flag_client_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`environment` text NOT NULL,
	`name` text NOT NULL,
	`prefix` text NOT NULL,
	`key_hash` text NOT NULL,
	`allowed_origins` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `flag_client_keys_key_hash_unique` ON `flag_client_keys` (`key_hash`);--> statement-breakpoint
CREATE INDEX `flag_client_keys_team_idx` ON `flag_client_keys` (`team_id`,`environment`,`created_at`);