CREATE TABLE `push_apps` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`name` text NOT NULL,
	`vapid_public_key` text NOT NULL,
	`vapid_private_key_enc` text NOT NULL,
	`fcm_credentials_enc` text,
	`apns_credentials_enc` text,
	`settings` text NOT NULL,
	`subscriber_count` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `push_apps_team_idx` ON `push_apps` (`team_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `push_deliveries` (
	`notification_id` text NOT NULL,
	`subscriber_id` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`status_code` integer,
	`error` text,
	`claimed_at` text,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`notification_id`, `subscriber_id`),
	FOREIGN KEY (`notification_id`) REFERENCES `push_notifications`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `push_deliveries_status_idx` ON `push_deliveries` (`notification_id`,`status`);--> statement-breakpoint
CREATE TABLE `push_notifications` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`app_id` text NOT NULL,
	`payload` text NOT NULL,
	`ttl` integer NOT NULL,
	`urgency` text NOT NULL,
	`topic` text,
	`target` text NOT NULL,
	`vapid_subject` text NOT NULL,
	`recipients` integer NOT NULL,
	`fanout_done` integer DEFAULT false NOT NULL,
	`created_at` text NOT NULL,
	`completed_at` text,
	FOREIGN KEY (`app_id`) REFERENCES `push_apps`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `push_notifications_app_idx` ON `push_notifications` (`app_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `push_subscribers` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` text NOT NULL,
	`app_id` text NOT NULL,
	`endpoint` text NOT NULL,
	`p256dh` text NOT NULL,
	`auth` text NOT NULL,
	`expiration_time` integer,
	`tags` text NOT NULL,
	`external_id` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`app_id`) REFERENCES `push_apps`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `push_subscribers_endpoint_idx` ON `push_subscribers` (`app_id`,`endpoint`);--> statement-breakpoint
CREATE INDEX `push_subscribers_app_idx` ON `push_subscribers` (`app_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `push_subscribers_fanout_idx` ON `push_subscribers` (`app_id`,`id`);