CREATE TABLE `audit_finding_history` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`team_id` text NOT NULL,
	`project_id` text NOT NULL,
	`finding_id` text NOT NULL,
	`from_status` text,
	`status` text NOT NULL,
	`priority_score` real NOT NULL,
	`at` text NOT NULL,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`finding_id`) REFERENCES `audit_findings`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `audit_finding_history_project_idx` ON `audit_finding_history` (`team_id`,`project_id`,`at`);--> statement-breakpoint
CREATE INDEX `audit_finding_history_finding_idx` ON `audit_finding_history` (`finding_id`,`id`);--> statement-breakpoint
CREATE TABLE `audit_findings` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`project_id` text NOT NULL,
	`title` text NOT NULL,
	`priority_score` real NOT NULL,
	`status` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `audit_findings_project_idx` ON `audit_findings` (`team_id`,`project_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `audit_reports` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`project_id` text NOT NULL,
	`period_start` text NOT NULL,
	`period_end` text NOT NULL,
	`format` text NOT NULL,
	`status` text NOT NULL,
	`snapshot` text NOT NULL,
	`placeholder` integer DEFAULT false NOT NULL,
	`object_key` text,
	`claimed_at` text,
	`share_version` integer DEFAULT 0 NOT NULL,
	`exported_at` text,
	`shared_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `audit_reports_project_idx` ON `audit_reports` (`team_id`,`project_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `audit_reports_status_idx` ON `audit_reports` (`team_id`,`project_id`,`status`);--> statement-breakpoint
CREATE TABLE `audit_verifications` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`project_id` text NOT NULL,
	`finding_id` text NOT NULL,
	`result` text NOT NULL,
	`note` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`finding_id`) REFERENCES `audit_findings`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `audit_verifications_project_idx` ON `audit_verifications` (`team_id`,`project_id`);--> statement-breakpoint
CREATE INDEX `audit_verifications_finding_idx` ON `audit_verifications` (`finding_id`,`created_at`);