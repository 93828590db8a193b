CREATE TABLE `usage_daily` (
	`team_id` text NOT NULL,
	`service` text NOT NULL,
	`day` text NOT NULL,
	`used` real DEFAULT 0 NOT NULL,
	PRIMARY KEY(`team_id`, `service`, `day`),
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `usage_daily_day_idx` ON `usage_daily` (`day`);