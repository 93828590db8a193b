CREATE TABLE `attempts` (
	`id` text PRIMARY KEY NOT NULL,
	`delivery_id` text NOT NULL,
	`number` integer NOT NULL,
	`attempted_at` text NOT NULL,
	`status_code` integer,
	`duration_ms` integer NOT NULL,
	`error` text,
	`response_body` text,
	`retry_in_seconds` integer
);
--> statement-breakpoint
CREATE INDEX `attempts_delivery_idx` ON `attempts` (`delivery_id`,`number`);--> statement-breakpoint
CREATE TABLE `deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`event_id` text NOT NULL,
	`destination_id` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`lease_until` integer,
	`last_status_code` integer,
	`last_error` text,
	`next_attempt_at` text,
	`due_ms` integer,
	`delivered_at` text,
	`trigger` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `deliveries_event_idx` ON `deliveries` (`event_id`,`destination_id`);--> statement-breakpoint
CREATE INDEX `deliveries_destination_idx` ON `deliveries` (`destination_id`);--> statement-breakpoint
CREATE INDEX `deliveries_due_idx` ON `deliveries` (`status`,`due_ms`);--> statement-breakpoint
CREATE TABLE `events` (
	`id` text PRIMARY KEY NOT NULL,
	`event_type` text,
	`provider_event_id` text,
	`content_type` text,
	`headers` text NOT NULL,
	`body` text NOT NULL,
	`size_bytes` integer NOT NULL,
	`received_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `events_dedupe_idx` ON `events` (`provider_event_id`);--> statement-breakpoint
CREATE INDEX `events_received_idx` ON `events` (`received_at`,`id`);--> statement-breakpoint
CREATE TABLE `meta` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL
);
