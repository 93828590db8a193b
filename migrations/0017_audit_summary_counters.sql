-- Audit summary from counters (issue 15): per-finding flags, per-project counters and the daily
-- open-risk series, then a backfill of all three from the existing findings, history and
-- verifications. Hand-written; the backfill statements insert only what is missing, so they can
-- run again over a database where some projects already have their rows.
ALTER TABLE `audit_findings` ADD `ever_terminal` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `audit_findings` ADD `version` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE TABLE `audit_summary_counters` (
	`team_id` text NOT NULL,
	`project_id` text NOT NULL,
	`open_findings` integer DEFAULT 0 NOT NULL,
	`terminal_findings` integer DEFAULT 0 NOT NULL,
	`open_regressions` integer DEFAULT 0 NOT NULL,
	`verifications_total` integer DEFAULT 0 NOT NULL,
	`verifications_passed` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`team_id`, `project_id`),
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `audit_risk_days` (
	`team_id` text NOT NULL,
	`project_id` text NOT NULL,
	`day` text NOT NULL,
	`open_risk_micros` integer NOT NULL,
	PRIMARY KEY(`team_id`, `project_id`, `day`),
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
UPDATE `audit_findings` SET `ever_terminal` = 1
WHERE EXISTS (
	SELECT 1 FROM `audit_finding_history` h
	WHERE h.`finding_id` = `audit_findings`.`id` AND h.`status` IN ('resolved', 'dismissed')
);--> statement-breakpoint
INSERT INTO `audit_summary_counters`
	(`team_id`, `project_id`, `open_findings`, `terminal_findings`, `open_regressions`, `verifications_total`, `verifications_passed`)
SELECT f.`team_id`, f.`project_id`,
	sum(f.`status` NOT IN ('resolved', 'dismissed')),
	sum(f.`status` IN ('resolved', 'dismissed')),
	sum(f.`status` NOT IN ('resolved', 'dismissed') AND f.`ever_terminal` = 1),
	(SELECT count(*) FROM `audit_verifications` v WHERE v.`team_id` = f.`team_id` AND v.`project_id` = f.`project_id`),
	(SELECT count(*) FROM `audit_verifications` v WHERE v.`team_id` = f.`team_id` AND v.`project_id` = f.`project_id` AND v.`result` = 'passed')
FROM `audit_findings` f
WHERE true
GROUP BY f.`team_id`, f.`project_id`
ON CONFLICT (`team_id`, `project_id`) DO NOTHING;--> statement-breakpoint
INSERT INTO `audit_risk_days` (`team_id`, `project_id`, `day`, `open_risk_micros`)
SELECT `team_id`, `project_id`, `day`,
	sum(sum(`delta`)) OVER (PARTITION BY `team_id`, `project_id` ORDER BY `day`)
FROM (
	SELECT `team_id`, `project_id`, substr(`at`, 1, 10) AS `day`,
		`risk` - coalesce(lag(`risk`) OVER (PARTITION BY `finding_id` ORDER BY `at`, `id`), 0) AS `delta`
	FROM (
		SELECT `team_id`, `project_id`, `finding_id`, `id`, `at`,
			CASE WHEN `status` IN ('resolved', 'dismissed') THEN 0 ELSE CAST(round(`priority_score` * 1000000) AS INTEGER) END AS `risk`
		FROM `audit_finding_history`
	)
)
WHERE true
GROUP BY `team_id`, `project_id`, `day`
ON CONFLICT (`team_id`, `project_id`, `day`) DO NOTHING;
