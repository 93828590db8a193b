CREATE TABLE `pending_publish` (
	`response_id` text PRIMARY KEY NOT NULL,
	`completed_at` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE `responses` (
	`seq` integer PRIMARY KEY NOT NULL,
	`id` text NOT NULL,
	`status` text NOT NULL,
	`respondent` text NOT NULL,
	`answers` text NOT NULL,
	`path` text NOT NULL,
	`next_question_id` text,
	`generated_questions` text NOT NULL,
	`completion_id` text,
	`started_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`completed_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `responses_id_unique` ON `responses` (`id`);--> statement-breakpoint
CREATE INDEX `responses_started_idx` ON `responses` (`started_at`);--> statement-breakpoint
CREATE INDEX `responses_status_started_idx` ON `responses` (`status`,`started_at`);--> statement-breakpoint
CREATE INDEX `responses_status_idx` ON `responses` (`status`);--> statement-breakpoint
CREATE TABLE `state` (
	`id` integer PRIMARY KEY NOT NULL,
	`survey_id` text NOT NULL,
	`team_id` text NOT NULL,
	`in_progress` integer DEFAULT 0 NOT NULL,
	`completed` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE `summary_elements` (
	`question_id` text NOT NULL,
	`kind` text NOT NULL,
	`row_key` text NOT NULL,
	`item` text NOT NULL,
	`n` integer NOT NULL,
	`position_sum` integer NOT NULL,
	`first_count` integer NOT NULL,
	PRIMARY KEY(`question_id`, `kind`, `row_key`, `item`)
);
--> statement-breakpoint
CREATE TABLE `summary_questions` (
	`id` text PRIMARY KEY NOT NULL,
	`type` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `summary_values` (
	`question_id` text NOT NULL,
	`kind` text NOT NULL,
	`value` text NOT NULL,
	`n` integer NOT NULL,
	PRIMARY KEY(`question_id`, `kind`, `value`)
);
