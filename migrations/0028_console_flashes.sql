CREATE TABLE `console_flashes` (
	`session_id` text NOT NULL,
	`path` text NOT NULL,
	`sealed` text NOT NULL,
	`expires_at` text NOT NULL,
	PRIMARY KEY(`session_id`, `path`),
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `console_flashes_expires_idx` ON `console_flashes` (`expires_at`);