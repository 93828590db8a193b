CREATE TABLE `idempotency_keys` (
	`team_id` text NOT NULL,
	`key` text NOT NULL,
	`request_hash` text NOT NULL,
	`lock_id` text,
	`locked_until` text,
	`response_status` integer,
	`response_type` text,
	`response_body` blob,
	`response_bytes` integer,
	`created_at` text NOT NULL,
	PRIMARY KEY(`team_id`, `key`),
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `idempotency_keys_created_idx` ON `idempotency_keys` (`created_at`);
