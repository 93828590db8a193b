-- Survey summaries kept incrementally (issue 15): grouped counters per question and value, and per
-- question and array / object element, written in the same D1 batch as each completion, plus one
-- state row per survey with its response counts. No state row means "not built yet": the first
-- summary read rebuilds the counters from the stored responses in one batch, so existing surveys
-- (and any survey whose question changed type) are summarised correctly without a backfill here.
CREATE TABLE `survey_summary_state` (
	`survey_id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`in_progress` integer DEFAULT 0 NOT NULL,
	`completed` integer DEFAULT 0 NOT NULL,
	`rebuilt_at` text NOT NULL,
	FOREIGN KEY (`survey_id`) REFERENCES `surveys`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `survey_summary_values` (
	`survey_id` text NOT NULL,
	`team_id` text NOT NULL,
	`question_id` text NOT NULL,
	`kind` text NOT NULL,
	`value` text NOT NULL,
	`n` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`survey_id`, `question_id`, `kind`, `value`),
	FOREIGN KEY (`survey_id`) REFERENCES `surveys`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`question_id`) REFERENCES `survey_questions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `survey_summary_elements` (
	`survey_id` text NOT NULL,
	`team_id` text NOT NULL,
	`question_id` text NOT NULL,
	`kind` text NOT NULL,
	`row_key` text NOT NULL,
	`item` text NOT NULL,
	`n` integer DEFAULT 0 NOT NULL,
	`position_sum` integer DEFAULT 0 NOT NULL,
	`first_count` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`survey_id`, `question_id`, `kind`, `row_key`, `item`),
	FOREIGN KEY (`survey_id`) REFERENCES `surveys`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`question_id`) REFERENCES `survey_questions`(`id`) ON UPDATE no action ON DELETE cascade
);
