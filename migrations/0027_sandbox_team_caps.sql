CREATE TABLE `sandbox_team_cap_usage` (
	`team_id` text NOT NULL,
	`window` text NOT NULL,
	`start` text NOT NULL,
	`used` integer NOT NULL,
	`cap` integer NOT NULL,
	PRIMARY KEY(`team_id`, `window`, `start`),
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "sandbox_team_cap_usage_within_cap" CHECK("sandbox_team_cap_usage"."used" <= "sandbox_team_cap_usage"."cap")
);
--> statement-breakpoint
ALTER TABLE `teams` ADD `sandbox_suspended_at` text;