-- One set of claim columns for every table a queue consumer claims (issue 13): `status`,
-- `attempts`, `lease_until` (INTEGER, ms since the epoch: the end of the claiming consumer's lease)
-- and `next_attempt_at` where the product schedules retries (src/platform/jobs/claim.ts).
-- webhook_deliveries already has them. Each old column is renamed aside, the new one added and
-- filled from it, then the old one dropped (none of them is indexed). Leases are converted from
-- ISO text with julianday; a claim time (claimed_at) becomes the end of its lease (claim + the
-- product's lease: 5 min for push, 2 min for audit). Only rows still in flight keep a lease: a
-- finished row's old claim time means nothing any more. No API returns any of these columns.

-- mail: lease_until ISO text -> ms.
ALTER TABLE `emails` RENAME COLUMN `lease_until` TO `lease_until_iso`;--> statement-breakpoint
ALTER TABLE `emails` ADD `lease_until` integer;--> statement-breakpoint
UPDATE `emails` SET `lease_until` = CAST(ROUND((julianday(`lease_until_iso`) - 2440587.5) * 86400000) AS INTEGER)
  WHERE `lease_until_iso` IS NOT NULL AND `status` = 'queued';--> statement-breakpoint
ALTER TABLE `emails` DROP COLUMN `lease_until_iso`;--> statement-breakpoint

-- push: claimed_at (claim time, ISO) -> lease_until = claim + 5 min, ms.
ALTER TABLE `push_deliveries` ADD `lease_until` integer;--> statement-breakpoint
UPDATE `push_deliveries` SET `lease_until` = CAST(ROUND((julianday(`claimed_at`) - 2440587.5) * 86400000) AS INTEGER) + 300000
  WHERE `claimed_at` IS NOT NULL AND `status` = 'sending';--> statement-breakpoint
ALTER TABLE `push_deliveries` DROP COLUMN `claimed_at`;--> statement-breakpoint

-- surveys: locked_until ISO text -> lease_until ms.
ALTER TABLE `survey_webhook_deliveries` ADD `lease_until` integer;--> statement-breakpoint
UPDATE `survey_webhook_deliveries` SET `lease_until` = CAST(ROUND((julianday(`locked_until`) - 2440587.5) * 86400000) AS INTEGER)
  WHERE `locked_until` IS NOT NULL AND `status` = 'pending';--> statement-breakpoint
ALTER TABLE `survey_webhook_deliveries` DROP COLUMN `locked_until`;--> statement-breakpoint

-- audit: claimed_at (claim time, ISO seconds) -> lease_until = claim + 2 min, ms; attempts counted
-- from now on (a record that was ever claimed has had one).
ALTER TABLE `audit_reports` ADD `attempts` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `audit_reports` ADD `lease_until` integer;--> statement-breakpoint
UPDATE `audit_reports` SET `attempts` = 1,
  `lease_until` = CASE WHEN `status` = 'exporting' THEN CAST(ROUND((julianday(`claimed_at`) - 2440587.5) * 86400000) AS INTEGER) + 120000 END
  WHERE `claimed_at` IS NOT NULL;--> statement-breakpoint
ALTER TABLE `audit_reports` DROP COLUMN `claimed_at`;
