CREATE TABLE `attempts` (
	`delivery_id` text NOT NULL,
	`number` integer NOT NULL,
	`attempted_at` text NOT NULL,
	`status_code` integer,
	`duration_ms` integer,
	`error` text,
	`response_body` text,
	PRIMARY KEY(`delivery_id`, `number`)
);
--> statement-breakpoint
CREATE TABLE `deliveries` (
	`seq` integer PRIMARY KEY NOT NULL,
	`id` text NOT NULL,
	`submission_id` text NOT NULL,
	`status` text NOT NULL,
	`trigger` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `deliveries_id_unique` ON `deliveries` (`id`);--> statement-breakpoint
CREATE INDEX `deliveries_due_idx` ON `deliveries` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `deliveries_submission_idx` ON `deliveries` (`submission_id`);--> statement-breakpoint
CREATE TABLE `state` (
	`id` integer PRIMARY KEY NOT NULL,
	`form_id` text NOT NULL,
	`team_id` text NOT NULL,
	`retention_days` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `submissions` (
	`seq` integer PRIMARY KEY NOT NULL,
	`id` text NOT NULL,
	`status` text NOT NULL,
	`fields` text NOT NULL,
	`files` text NOT NULL,
	`subject` text,
	`reply_to` text,
	`origin` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `submissions_id_unique` ON `submissions` (`id`);--> statement-breakpoint
CREATE INDEX `submissions_status_idx` ON `submissions` (`status`,`seq`);--> statement-breakpoint
CREATE INDEX `submissions_created_idx` ON `submissions` (`created_at`);