CREATE TABLE `custom_events` (
	`name` text NOT NULL,
	`environment` text NOT NULL,
	`hour` text NOT NULL,
	`count` integer NOT NULL,
	`value_sum` real NOT NULL,
	PRIMARY KEY(`name`, `environment`, `hour`)
);
--> statement-breakpoint
CREATE TABLE `environments` (
	`key` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `flag_history` (
	`flag_key` text NOT NULL,
	`version` integer NOT NULL,
	`at` text NOT NULL,
	`actor` text NOT NULL,
	`changes` text NOT NULL,
	`doc` text,
	PRIMARY KEY(`flag_key`, `version`)
);
--> statement-breakpoint
CREATE TABLE `flag_segments` (
	`flag_key` text NOT NULL,
	`segment_key` text NOT NULL,
	PRIMARY KEY(`flag_key`, `segment_key`)
);
--> statement-breakpoint
CREATE INDEX `flag_segments_segment_idx` ON `flag_segments` (`segment_key`);--> statement-breakpoint
CREATE TABLE `flags` (
	`key` text PRIMARY KEY NOT NULL,
	`doc` text NOT NULL,
	`version` integer NOT NULL,
	`size` integer NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `flags_updated_idx` ON `flags` (`updated_at`);--> statement-breakpoint
CREATE TABLE `insights` (
	`flag_key` text NOT NULL,
	`environment` text NOT NULL,
	`hour` text NOT NULL,
	`variant` text NOT NULL,
	`source` text NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`flag_key`, `environment`, `hour`, `variant`, `source`)
);
--> statement-breakpoint
CREATE INDEX `insights_hour_idx` ON `insights` (`hour`);--> statement-breakpoint
CREATE TABLE `last_evaluated` (
	`flag_key` text NOT NULL,
	`environment` text NOT NULL,
	`at` text NOT NULL,
	PRIMARY KEY(`flag_key`, `environment`)
);
--> statement-breakpoint
CREATE TABLE `scheduled_changes` (
	`id` text PRIMARY KEY NOT NULL,
	`flag_key` text NOT NULL,
	`environment` text NOT NULL,
	`at` integer NOT NULL,
	`change` text NOT NULL,
	`actor` text NOT NULL,
	`status` text NOT NULL,
	`created_at` text NOT NULL,
	`applied_at` text,
	`applied_version` integer,
	`error` text
);
--> statement-breakpoint
CREATE INDEX `scheduled_pending_idx` ON `scheduled_changes` (`status`,`at`);--> statement-breakpoint
CREATE INDEX `scheduled_flag_idx` ON `scheduled_changes` (`flag_key`);--> statement-breakpoint
CREATE TABLE `segments` (
	`key` text PRIMARY KEY NOT NULL,
	`doc` text NOT NULL,
	`version` integer NOT NULL,
	`size` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `state` (
	`id` integer PRIMARY KEY NOT NULL,
	`revision` integer NOT NULL
);
