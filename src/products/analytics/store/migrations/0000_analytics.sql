CREATE TABLE `events` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`ts` integer NOT NULL,
	`name` text NOT NULL,
	`page` text NOT NULL,
	`visitor` text NOT NULL,
	`source` text NOT NULL,
	`country` text NOT NULL,
	`props` text
);
--> statement-breakpoint
CREATE INDEX `events_ts_idx` ON `events` (`ts`);--> statement-breakpoint
CREATE TABLE `hourly` (
	`hour` integer NOT NULL,
	`visitor` text NOT NULL,
	`name` text NOT NULL,
	`page` text NOT NULL,
	`source` text NOT NULL,
	`country` text NOT NULL,
	`events` integer NOT NULL,
	PRIMARY KEY(`hour`, `name`, `page`, `source`, `country`, `visitor`)
);
--> statement-breakpoint
CREATE TABLE `sessions` (
	`visitor` text PRIMARY KEY NOT NULL,
	`source` text NOT NULL,
	`last_seen` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `sessions_last_seen_idx` ON `sessions` (`last_seen`);