CREATE TABLE `forms` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`name` text NOT NULL,
	`fields` text,
	`allowed_origins` text NOT NULL,
	`redirect_url` text,
	`notify_emails` text NOT NULL,
	`webhook_url` text,
	`webhook_secret` text,
	`files_enabled` integer DEFAULT false NOT NULL,
	`files_max_bytes` integer NOT NULL,
	`retention_days` integer NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `forms_team_idx` ON `forms` (`team_id`,`created_at`);