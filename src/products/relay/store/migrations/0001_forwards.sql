CREATE TABLE `forwards` (
	`id` integer PRIMARY KEY NOT NULL,
	`minute` integer NOT NULL,
	`n` integer NOT NULL
);
