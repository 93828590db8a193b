CREATE TABLE `tallies` (
	`dim` text NOT NULL,
	`bucket` integer NOT NULL,
	`value` text NOT NULL,
	`visitors` integer NOT NULL,
	`pageviews` integer NOT NULL,
	`events` integer NOT NULL,
	PRIMARY KEY(`dim`, `bucket`, `value`)
);
--> statement-breakpoint
CREATE TABLE `tally_visitors` (
	`dim` text NOT NULL,
	`bucket` integer NOT NULL,
	`value` text NOT NULL,
	`visitor` text NOT NULL,
	PRIMARY KEY(`dim`, `bucket`, `value`, `visitor`)
);--> statement-breakpoint
-- Hand-written: the tallies of what the store already holds, from its visitor rollup, and the visitors
-- counted in the latest two days (the only tallies still growing).
INSERT INTO `tallies` (`dim`, `bucket`, `value`, `visitors`, `pageviews`, `events`)
  SELECT 'all', (`hour` / 24) * 24, '', COUNT(DISTINCT `visitor`), SUM(CASE WHEN `name` = 'pageview' THEN `events` ELSE 0 END), SUM(`events`)
  FROM `hourly` GROUP BY `hour` / 24;
--> statement-breakpoint
INSERT INTO `tallies` (`dim`, `bucket`, `value`, `visitors`, `pageviews`, `events`)
  SELECT 'page', (`hour` / 24) * 24, page, COUNT(DISTINCT `visitor`), SUM(CASE WHEN `name` = 'pageview' THEN `events` ELSE 0 END), SUM(`events`)
  FROM `hourly` GROUP BY `hour` / 24, page;
--> statement-breakpoint
INSERT INTO `tallies` (`dim`, `bucket`, `value`, `visitors`, `pageviews`, `events`)
  SELECT 'name', (`hour` / 24) * 24, name, COUNT(DISTINCT `visitor`), SUM(CASE WHEN `name` = 'pageview' THEN `events` ELSE 0 END), SUM(`events`)
  FROM `hourly` GROUP BY `hour` / 24, name;
--> statement-breakpoint
INSERT INTO `tallies` (`dim`, `bucket`, `value`, `visitors`, `pageviews`, `events`)
  SELECT 'source', (`hour` / 24) * 24, source, COUNT(DISTINCT `visitor`), SUM(CASE WHEN `name` = 'pageview' THEN `events` ELSE 0 END), SUM(`events`)
  FROM `hourly` GROUP BY `hour` / 24, source;
--> statement-breakpoint
INSERT INTO `tallies` (`dim`, `bucket`, `value`, `visitors`, `pageviews`, `events`)
  SELECT 'country', (`hour` / 24) * 24, country, COUNT(DISTINCT `visitor`), SUM(CASE WHEN `name` = 'pageview' THEN `events` ELSE 0 END), SUM(`events`)
  FROM `hourly` GROUP BY `hour` / 24, country;
--> statement-breakpoint
INSERT INTO `tallies` (`dim`, `bucket`, `value`, `visitors`, `pageviews`, `events`)
  SELECT 'hour', `hour`, '', COUNT(DISTINCT `visitor`), SUM(CASE WHEN `name` = 'pageview' THEN `events` ELSE 0 END), SUM(`events`)
  FROM `hourly` GROUP BY `hour`;
--> statement-breakpoint
INSERT INTO `tally_visitors` (`dim`, `bucket`, `value`, `visitor`)
  SELECT DISTINCT 'all', (`hour` / 24) * 24, '', `visitor` FROM `hourly`
  WHERE `hour` >= (SELECT (MAX(`hour`) / 24 - 1) * 24 FROM `hourly`);
--> statement-breakpoint
INSERT INTO `tally_visitors` (`dim`, `bucket`, `value`, `visitor`)
  SELECT DISTINCT 'page', (`hour` / 24) * 24, page, `visitor` FROM `hourly`
  WHERE `hour` >= (SELECT (MAX(`hour`) / 24 - 1) * 24 FROM `hourly`);
--> statement-breakpoint
INSERT INTO `tally_visitors` (`dim`, `bucket`, `value`, `visitor`)
  SELECT DISTINCT 'name', (`hour` / 24) * 24, name, `visitor` FROM `hourly`
  WHERE `hour` >= (SELECT (MAX(`hour`) / 24 - 1) * 24 FROM `hourly`);
--> statement-breakpoint
INSERT INTO `tally_visitors` (`dim`, `bucket`, `value`, `visitor`)
  SELECT DISTINCT 'source', (`hour` / 24) * 24, source, `visitor` FROM `hourly`
  WHERE `hour` >= (SELECT (MAX(`hour`) / 24 - 1) * 24 FROM `hourly`);
--> statement-breakpoint
INSERT INTO `tally_visitors` (`dim`, `bucket`, `value`, `visitor`)
  SELECT DISTINCT 'country', (`hour` / 24) * 24, country, `visitor` FROM `hourly`
  WHERE `hour` >= (SELECT (MAX(`hour`) / 24 - 1) * 24 FROM `hourly`);
--> statement-breakpoint
INSERT INTO `tally_visitors` (`dim`, `bucket`, `value`, `visitor`)
  SELECT DISTINCT 'hour', `hour`, '', `visitor` FROM `hourly`
  WHERE `hour` >= (SELECT (MAX(`hour`) / 24 - 1) * 24 FROM `hourly`);
