CREATE TABLE `entries` (
	`seq` integer PRIMARY KEY NOT NULL,
	`id` text NOT NULL,
	`stream` text,
	`level` text NOT NULL,
	`message` text NOT NULL,
	`service` text,
	`trace_id` text,
	`span_id` text,
	`metadata` text,
	`ts` integer NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `entries_ts_idx` ON `entries` (`ts`);--> statement-breakpoint
CREATE INDEX `entries_level_ts_idx` ON `entries` (`level`,`ts`);--> statement-breakpoint
CREATE TABLE `meta` (
	`key` text PRIMARY KEY NOT NULL,
	`value` integer NOT NULL
);
