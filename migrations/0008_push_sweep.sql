ALTER TABLE `push_deliveries` ADD `next_attempt_at` text;--> statement-breakpoint
CREATE INDEX `push_deliveries_due_idx` ON `push_deliveries` (`status`,`next_attempt_at`);--> statement-breakpoint
ALTER TABLE `push_notifications` ADD `fanout_token` text;--> statement-breakpoint
ALTER TABLE `push_notifications` ADD `fanout_at` text;--> statement-breakpoint
CREATE INDEX `push_notifications_fanout_idx` ON `push_notifications` (`fanout_done`,`fanout_at`);--> statement-breakpoint
-- Backfill for rows written before this migration (hand-added): the sweep reads only these columns.
UPDATE `push_notifications` SET `fanout_at` = `created_at` WHERE `fanout_done` = 0;--> statement-breakpoint
UPDATE `push_deliveries` SET `next_attempt_at` = CASE WHEN `status` = 'sending'
  THEN strftime('%Y-%m-%dT%H:%M:%fZ', coalesce(`claimed_at`, `updated_at`), '+5 minutes') ELSE `updated_at` END
  WHERE `status` IN ('queued', 'retrying', 'sending');
