CREATE TABLE `log_alert_deliveries` (
	`firing_id` text NOT NULL,
	`channel` text NOT NULL,
	`alert_id` text NOT NULL,
	`team_id` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`last_error` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`firing_id`, `channel`)
);
--> statement-breakpoint
CREATE INDEX `log_alert_deliveries_alert_idx` ON `log_alert_deliveries` (`alert_id`);--> statement-breakpoint
CREATE TABLE `log_alerts` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`project_id` text NOT NULL,
	`name` text NOT NULL,
	`level` text NOT NULL,
	`threshold` integer NOT NULL,
	`window_minutes` integer NOT NULL,
	`channels` text NOT NULL,
	`notify_email` text,
	`notify_webhook` text,
	`enabled` integer DEFAULT true NOT NULL,
	`last_triggered_at` integer,
	`inserted_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `log_projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `log_alerts_project_idx` ON `log_alerts` (`project_id`,`inserted_at`);--> statement-breakpoint
CREATE INDEX `log_alerts_enabled_idx` ON `log_alerts` (`enabled`);--> statement-breakpoint
CREATE TABLE `log_daily_usage` (
	`project_id` text NOT NULL,
	`day` text NOT NULL,
	`team_id` text NOT NULL,
	`bytes` integer NOT NULL,
	`limit_bytes` integer NOT NULL,
	PRIMARY KEY(`project_id`, `day`),
	FOREIGN KEY (`project_id`) REFERENCES `log_projects`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "log_daily_limit" CHECK("log_daily_usage"."bytes" <= "log_daily_usage"."limit_bytes")
);
--> statement-breakpoint
CREATE TABLE `log_entries` (
	`seq` integer PRIMARY KEY NOT NULL,
	`id` text NOT NULL,
	`team_id` text NOT NULL,
	`project_id` text NOT NULL,
	`stream` text,
	`level` text NOT NULL,
	`message` text NOT NULL,
	`service` text,
	`trace_id` text,
	`span_id` text,
	`metadata` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `log_entries_project_time_idx` ON `log_entries` (`project_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `log_entries_project_level_time_idx` ON `log_entries` (`project_id`,`level`,`created_at`);--> statement-breakpoint
CREATE TABLE `log_projects` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`name` text NOT NULL,
	`token_hash` text NOT NULL,
	`token_prefix` text NOT NULL,
	`daily_limit_mb` integer NOT NULL,
	`retention_days` integer NOT NULL,
	`stream_count` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "log_stream_cap" CHECK("log_projects"."stream_count" <= 10000)
);
--> statement-breakpoint
CREATE UNIQUE INDEX `log_projects_token_idx` ON `log_projects` (`token_hash`);--> statement-breakpoint
CREATE INDEX `log_projects_team_idx` ON `log_projects` (`team_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `log_streams` (
	`project_id` text NOT NULL,
	`name` text NOT NULL,
	`team_id` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`project_id`, `name`),
	FOREIGN KEY (`project_id`) REFERENCES `log_projects`(`id`) ON UPDATE no action ON DELETE cascade
);
