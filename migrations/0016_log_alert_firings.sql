-- The firing history of log alerts (issue 18): one row per firing, closed (resolved_at) when the
-- alert's window falls back under its threshold, or when a later firing of the same alert takes
-- over, or when the alert is disabled. (alert_id, fired_at) is unique: a repeated check of the same
-- instant records nothing twice. Rows older than 90 days go with the hourly clean-up.
CREATE TABLE `log_alert_firings` (
	`id` text PRIMARY KEY NOT NULL,
	`alert_id` text NOT NULL,
	`team_id` text NOT NULL,
	`project_id` text NOT NULL,
	`fired_at` integer NOT NULL,
	`count` integer NOT NULL,
	`resolved_at` integer,
	FOREIGN KEY (`alert_id`) REFERENCES `log_alerts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `log_alert_firings_alert_time_idx` ON `log_alert_firings` (`alert_id`,`fired_at`);--> statement-breakpoint
CREATE INDEX `log_alert_firings_open_idx` ON `log_alert_firings` (`alert_id`) WHERE "log_alert_firings"."resolved_at" is null;--> statement-breakpoint
CREATE INDEX `log_alert_firings_fired_idx` ON `log_alert_firings` (`fired_at`);
