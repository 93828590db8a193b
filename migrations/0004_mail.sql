CREATE TABLE `email_events` (
	`id` text PRIMARY KEY NOT NULL,
	`email_id` text NOT NULL,
	`team_id` text,
	`status` text NOT NULL,
	`detail` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `email_events_email_idx` ON `email_events` (`email_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `emails` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`key_id` text,
	`sandbox` integer DEFAULT false NOT NULL,
	`stream` text NOT NULL,
	`from` text NOT NULL,
	`to` text NOT NULL,
	`cc` text NOT NULL,
	`bcc` text NOT NULL,
	`reply_to` text NOT NULL,
	`recipients` text NOT NULL,
	`subject` text NOT NULL,
	`html` text,
	`text` text,
	`headers` text NOT NULL,
	`tags` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`lease_until` text,
	`provider_id` text,
	`last_error` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`key_id`) REFERENCES `api_keys`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `emails_team_created_idx` ON `emails` (`team_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `emails_key_created_idx` ON `emails` (`key_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `emails_status_updated_idx` ON `emails` (`status`,`updated_at`);--> statement-breakpoint
CREATE TABLE `mail_webhooks` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`url` text NOT NULL,
	`events` text NOT NULL,
	`secret_encrypted` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `mail_webhooks_team_idx` ON `mail_webhooks` (`team_id`);