CREATE TABLE `webhook_attempts` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`delivery_id` text NOT NULL,
	`number` integer NOT NULL,
	`attempted_at` text NOT NULL,
	`status_code` integer,
	`duration_ms` integer NOT NULL,
	`error` text,
	`response_body` text,
	`retry_in_seconds` integer,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`delivery_id`) REFERENCES `webhook_deliveries`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_attempts_delivery_idx` ON `webhook_attempts` (`delivery_id`,`number`);--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`event_id` text NOT NULL,
	`destination_id` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`lease_until` integer,
	`last_status_code` integer,
	`last_error` text,
	`next_attempt_at` text,
	`delivered_at` text,
	`trigger` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`event_id`) REFERENCES `webhook_events`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`destination_id`) REFERENCES `webhook_destinations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_event_idx` ON `webhook_deliveries` (`event_id`,`status`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_destination_idx` ON `webhook_deliveries` (`destination_id`);--> statement-breakpoint
CREATE TABLE `webhook_destinations` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`source_id` text NOT NULL,
	`url` text NOT NULL,
	`event_filter` text NOT NULL,
	`secret` text NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`source_id`) REFERENCES `webhook_sources`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_destinations_source_idx` ON `webhook_destinations` (`source_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `webhook_events` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`source_id` text NOT NULL,
	`event_type` text,
	`provider_event_id` text,
	`content_type` text,
	`headers` text NOT NULL,
	`body` text NOT NULL,
	`size_bytes` integer NOT NULL,
	`received_at` text NOT NULL,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`source_id`) REFERENCES `webhook_sources`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_events_dedupe_idx` ON `webhook_events` (`source_id`,`provider_event_id`);--> statement-breakpoint
CREATE INDEX `webhook_events_source_idx` ON `webhook_events` (`source_id`,`received_at`,`id`);--> statement-breakpoint
CREATE INDEX `webhook_events_received_idx` ON `webhook_events` (`received_at`);--> statement-breakpoint
CREATE TABLE `webhook_sources` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`name` text NOT NULL,
	`provider` text NOT NULL,
	`slug` text NOT NULL,
	`signing_secret` text,
	`retention_days` integer NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_sources_slug_idx` ON `webhook_sources` (`slug`);--> statement-breakpoint
CREATE INDEX `webhook_sources_team_idx` ON `webhook_sources` (`team_id`,`created_at`);