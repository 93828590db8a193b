CREATE TABLE `audit_scan_schedules` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`project_id` text NOT NULL,
	`target_url` text NOT NULL,
	`every` text NOT NULL,
	`next_run_at` text NOT NULL,
	`last_grade` text,
	`last_scan_id` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `audit_scan_schedules_project_idx` ON `audit_scan_schedules` (`team_id`,`project_id`,`created_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `audit_scan_schedules_target_idx` ON `audit_scan_schedules` (`team_id`,`project_id`,`target_url`);--> statement-breakpoint
CREATE INDEX `audit_scan_schedules_due_idx` ON `audit_scan_schedules` (`next_run_at`);--> statement-breakpoint
CREATE TABLE `audit_scans` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`project_id` text NOT NULL,
	`target_url` text NOT NULL,
	`status` text NOT NULL,
	`score` integer,
	`grade` text,
	`tests` text,
	`error` text,
	`final_url` text,
	`status_code` integer,
	`schedule_id` text,
	`schedule_slot` text,
	`attempts` integer DEFAULT 0 NOT NULL,
	`lease_until` integer,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`started_at` text,
	`finished_at` text,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `audit_scans_project_idx` ON `audit_scans` (`team_id`,`project_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `audit_scans_target_idx` ON `audit_scans` (`team_id`,`project_id`,`target_url`,`created_at`);--> statement-breakpoint
CREATE INDEX `audit_scans_sweep_idx` ON `audit_scans` (`status`,`updated_at`);--> statement-breakpoint
CREATE INDEX `audit_scans_created_idx` ON `audit_scans` (`created_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `audit_scans_schedule_slot_idx` ON `audit_scans` (`schedule_id`,`schedule_slot`);--> statement-breakpoint
ALTER TABLE `audit_findings` ADD `source` text DEFAULT 'manual' NOT NULL;--> statement-breakpoint
ALTER TABLE `audit_findings` ADD `target_url` text;--> statement-breakpoint
ALTER TABLE `audit_findings` ADD `test` text;--> statement-breakpoint
CREATE UNIQUE INDEX `audit_findings_target_test_idx` ON `audit_findings` (`team_id`,`project_id`,`target_url`,`test`) WHERE target_url IS NOT NULL AND test IS NOT NULL;