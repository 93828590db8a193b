ALTER TABLE `survey_webhook_deliveries` ADD `queue_token` text;--> statement-breakpoint
ALTER TABLE `survey_webhook_deliveries` ADD `locked_until` text;--> statement-breakpoint
ALTER TABLE `survey_webhook_deliveries` ADD `next_attempt_at` text;--> statement-breakpoint
CREATE INDEX `survey_webhook_deliveries_pending_idx` ON `survey_webhook_deliveries` (`status`,`next_attempt_at`);