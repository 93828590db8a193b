CREATE TABLE `entry_counts` (
	`minute` integer NOT NULL,
	`level` text NOT NULL,
	`n` integer NOT NULL,
	PRIMARY KEY(`minute`, `level`)
);
--> statement-breakpoint
-- Custom: the roll-up of the entries an object already holds (once, when the object starts on this version).
INSERT INTO `entry_counts` (`minute`, `level`, `n`) SELECT `ts` / 60000, `level`, count(*) FROM `entries` WHERE true GROUP BY 1, 2;
