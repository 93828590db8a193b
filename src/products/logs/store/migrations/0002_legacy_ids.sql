CREATE TABLE `legacy_ids` (
	`id` text PRIMARY KEY NOT NULL
);
