CREATE TABLE `deliveries` (
	`notification_id` text NOT NULL,
	`subscriber_id` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`status_code` integer,
	`error` text,
	`lease_until` integer,
	`next_attempt_at` text,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`notification_id`, `subscriber_id`)
);
--> statement-breakpoint
CREATE INDEX `deliveries_status_idx` ON `deliveries` (`notification_id`,`status`);--> statement-breakpoint
CREATE INDEX `deliveries_due_idx` ON `deliveries` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE TABLE `meta` (
	`key` text PRIMARY KEY NOT NULL,
	`value` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `notifications` (
	`id` text PRIMARY KEY NOT NULL,
	`created_at` text NOT NULL,
	`fanout_done` integer DEFAULT 0 NOT NULL,
	`completed_at` text
);
--> statement-breakpoint
CREATE TABLE `subscribers` (
	`id` text PRIMARY KEY NOT NULL,
	`endpoint` text NOT NULL,
	`p256dh` text NOT NULL,
	`auth` text NOT NULL,
	`expiration_time` integer,
	`tags` text NOT NULL,
	`external_id` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `subscribers_endpoint_idx` ON `subscribers` (`endpoint`);--> statement-breakpoint
CREATE INDEX `subscribers_created_idx` ON `subscribers` (`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `subscribers_external_idx` ON `subscribers` (`external_id`);