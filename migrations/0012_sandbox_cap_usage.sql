CREATE TABLE `sandbox_cap_usage` (
	`key_id` text NOT NULL,
	`window` text NOT NULL,
	`start` text NOT NULL,
	`used` integer NOT NULL,
	`cap` integer NOT NULL,
	PRIMARY KEY(`key_id`, `window`, `start`),
	FOREIGN KEY (`key_id`) REFERENCES `api_keys`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "sandbox_cap_usage_within_cap" CHECK("sandbox_cap_usage"."used" <= "sandbox_cap_usage"."cap")
);
