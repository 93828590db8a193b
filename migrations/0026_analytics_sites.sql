CREATE TABLE `analytics_sites` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`domain` text NOT NULL,
	`keep_query_string` integer DEFAULT false NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `analytics_sites_team_idx` ON `analytics_sites` (`team_id`,`created_at`);