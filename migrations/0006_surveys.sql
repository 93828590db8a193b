CREATE TABLE `survey_questions` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`survey_id` text NOT NULL,
	`section_id` text,
	`type` text NOT NULL,
	`title` text NOT NULL,
	`description` text,
	`options` text NOT NULL,
	`settings` text NOT NULL,
	`position` integer NOT NULL,
	`branching` text NOT NULL,
	`version` integer DEFAULT 1 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`survey_id`) REFERENCES `surveys`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`section_id`) REFERENCES `survey_sections`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `survey_questions_survey_idx` ON `survey_questions` (`survey_id`,`position`);--> statement-breakpoint
CREATE TABLE `survey_responses` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`survey_id` text NOT NULL,
	`status` text DEFAULT 'in_progress' NOT NULL,
	`respondent` text NOT NULL,
	`answers` text NOT NULL,
	`path` text NOT NULL,
	`next_question_id` text,
	`generated_questions` text NOT NULL,
	`completion_id` text,
	`started_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`completed_at` text,
	FOREIGN KEY (`survey_id`) REFERENCES `surveys`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `survey_responses_survey_idx` ON `survey_responses` (`survey_id`,`started_at`);--> statement-breakpoint
CREATE INDEX `survey_responses_status_idx` ON `survey_responses` (`survey_id`,`status`);--> statement-breakpoint
CREATE TABLE `survey_sections` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`survey_id` text NOT NULL,
	`title` text,
	`description` text,
	`position` integer NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`survey_id`) REFERENCES `surveys`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `survey_sections_survey_idx` ON `survey_sections` (`survey_id`,`position`);--> statement-breakpoint
CREATE TABLE `survey_webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`survey_id` text NOT NULL,
	`webhook_id` text NOT NULL,
	`event` text NOT NULL,
	`payload` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`last_status` integer,
	`last_error` text,
	`created_at` text NOT NULL,
	`delivered_at` text,
	FOREIGN KEY (`survey_id`) REFERENCES `surveys`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`webhook_id`) REFERENCES `survey_webhooks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `survey_webhook_deliveries_webhook_idx` ON `survey_webhook_deliveries` (`webhook_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `survey_webhooks` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`survey_id` text NOT NULL,
	`url` text NOT NULL,
	`events` text NOT NULL,
	`secret_encrypted` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`survey_id`) REFERENCES `surveys`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `survey_webhooks_survey_idx` ON `survey_webhooks` (`survey_id`);--> statement-breakpoint
CREATE TABLE `surveys` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`name` text NOT NULL,
	`slug` text NOT NULL,
	`mode` text DEFAULT 'manual' NOT NULL,
	`status` text DEFAULT 'draft' NOT NULL,
	`settings` text NOT NULL,
	`ai_config` text NOT NULL,
	`response_count` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `surveys_slug_idx` ON `surveys` (`slug`);--> statement-breakpoint
CREATE INDEX `surveys_team_idx` ON `surveys` (`team_id`,`created_at`);