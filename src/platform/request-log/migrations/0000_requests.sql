CREATE TABLE `requests` (
	`seq` integer PRIMARY KEY NOT NULL,
	`at` integer NOT NULL,
	`method` text NOT NULL,
	`path` text NOT NULL,
	`status` integer NOT NULL,
	`latency_ms` integer NOT NULL,
	`key_id` text NOT NULL,
	`key_prefix` text NOT NULL,
	`request_id` text NOT NULL,
	`error_body` text
);
--> statement-breakpoint
CREATE INDEX `requests_at_idx` ON `requests` (`at`);