CREATE TABLE `survey_completions` (
	`response_id` text PRIMARY KEY NOT NULL,
	`survey_id` text NOT NULL,
	`team_id` text NOT NULL,
	`token` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`survey_id`) REFERENCES `surveys`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `survey_completions_created_idx` ON `survey_completions` (`created_at`);--> statement-breakpoint
CREATE TABLE `__new_survey_webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`survey_id` text NOT NULL,
	`webhook_id` text NOT NULL,
	`event` text NOT NULL,
	`response_id` text,
	`payload` text,
	`status` text DEFAULT 'pending' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`last_status` integer,
	`last_error` text,
	`created_at` text NOT NULL,
	`delivered_at` text,
	`queue_token` text,
	`lease_until` integer,
	`next_attempt_at` text,
	FOREIGN KEY (`survey_id`) REFERENCES `surveys`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`webhook_id`) REFERENCES `survey_webhooks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_survey_webhook_deliveries`("id", "team_id", "survey_id", "webhook_id", "event", "response_id", "payload", "status", "attempts", "last_status", "last_error", "created_at", "delivered_at", "queue_token", "lease_until", "next_attempt_at") SELECT "id", "team_id", "survey_id", "webhook_id", "event", "response_id", "payload", "status", "attempts", "last_status", "last_error", "created_at", "delivered_at", "queue_token", "lease_until", "next_attempt_at" FROM `survey_webhook_deliveries`;--> statement-breakpoint
DROP TABLE `survey_webhook_deliveries`;--> statement-breakpoint
ALTER TABLE `__new_survey_webhook_deliveries` RENAME TO `survey_webhook_deliveries`;--> statement-breakpoint
CREATE INDEX `survey_webhook_deliveries_webhook_idx` ON `survey_webhook_deliveries` (`webhook_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `survey_webhook_deliveries_pending_idx` ON `survey_webhook_deliveries` (`status`,`next_attempt_at`);